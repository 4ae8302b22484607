// 8 threads each take one ReentrantLock (static SESSIONS) `iters` times
// and hold it 500 us; each times its own lock() calls. A one-thread pool
// meanwhile sits idle in its queue (LinkedBlockingQueue.take). A warm-up
// first (short holds, many pool tasks) gets the lock and queue code
// compiled, so the JVM's perf map names their frames (an interpreted frame
// is not named). Writes "<total lock ns> <acquisitions> <start> <end>"
// (System.nanoTime: CLOCK_MONOTONIC, latprof's clock) to argv[0].
import java.io.*;
import java.util.concurrent.*;
import java.util.concurrent.locks.ReentrantLock;
public class JavaLock {
    static final ReentrantLock SESSIONS = new ReentrantLock();
    static long counter;
    public static void main(String[] a) throws Exception {
        int threads = Integer.parseInt(a[1]), iters = Integer.parseInt(a[2]);
        ExecutorService pool = Executors.newFixedThreadPool(1, r -> new Thread(r, "pool-idle"));
        for (int i = 0; i < 5000; i++) pool.submit(() -> { }).get();
        run(threads, 3000, 2_000, new long[threads]);
        long[] waits = new long[threads];
        long start = System.nanoTime();
        run(threads, iters, 500_000, waits);
        long stop = System.nanoTime(), total = 0;
        for (long w : waits) total += w;
        pool.shutdown();
        try (PrintWriter w = new PrintWriter(a[0])) {
            w.println(total + " " + counter + " " + start + " " + stop);
        }
    }

    // One request: the time it waited for the lock.
    static long serve(long holdNs) {
        long t0 = System.nanoTime();
        SESSIONS.lock();
        try {
            long waited = System.nanoTime() - t0;
            counter++;
            long end = System.nanoTime() + holdNs;
            while (System.nanoTime() < end) { }
            return waited;
        } finally {
            SESSIONS.unlock();
        }
    }

    static void run(int threads, int iters, long holdNs, long[] waits) throws Exception {
        counter = 0;
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            final int me = i;
            ts[i] = new Thread(() -> {
                for (int k = 0; k < iters; k++) {
                    waits[me] += serve(holdNs);
                    if (holdNs >= 100_000) {
                        try { Thread.sleep(0, 300_000); } catch (InterruptedException e) { }
                    }
                }
            }, "worker-" + i);
            ts[i].start();
        }
        for (Thread t : ts) t.join();
    }
}
