// N threads in two phases: first each enters synchronized (SESSIONS) in
// sessions() and holds it 500 us, then each enters synchronized (CACHE) in
// cache() and holds it 200 us, `iters` and `iters`/4 times; each thread
// times its own monitor entries.
// The hold spins inside each method: its loop gets the method compiled
// (on-stack replacement), so the JVM's perf map names it.
// Writes "<SESSIONS entry ns> <CACHE entry ns> <entries>" to argv[0].
import java.io.*;
public class JavaSync {
    static final Object SESSIONS = new Object(), CACHE = new Object();
    static long sessionsCount, cacheCount;

    static void pause() {
        try { Thread.sleep(0, 300_000); } catch (InterruptedException e) { }
    }

    static long sessions(int iters) {
        long waited = 0;
        for (int k = 0; k < iters; k++) {
            long t0 = System.nanoTime();
            synchronized (SESSIONS) {
                waited += System.nanoTime() - t0;
                sessionsCount++;
                long end = System.nanoTime() + 500_000;
                while (System.nanoTime() < end) { }
            }
            pause();
        }
        return waited;
    }

    static long cache(int iters) {
        long waited = 0;
        for (int k = 0; k < iters; k++) {
            long t0 = System.nanoTime();
            synchronized (CACHE) {
                waited += System.nanoTime() - t0;
                cacheCount++;
                long end = System.nanoTime() + 200_000;
                while (System.nanoTime() < end) { }
            }
            pause();
        }
        return waited;
    }

    // Two phases, so that one thread at a time spins holding a monitor:
    // every thread on SESSIONS, then every thread on CACHE.
    public static void main(String[] a) throws Exception {
        int threads = Integer.parseInt(a[1]), iters = Integer.parseInt(a[2]);
        long[] total = new long[2];
        for (int phase = 0; phase < 2; phase++) {
            final int ph = phase;
            long[] waits = new long[threads];
            Thread[] ts = new Thread[threads];
            for (int i = 0; i < threads; i++) {
                final int me = i;
                ts[i] = new Thread(() -> {
                    waits[me] = ph == 0 ? sessions(iters) : cache(iters / 4);
                }, "worker-" + i);
                ts[i].start();
            }
            for (int i = 0; i < threads; i++) { ts[i].join(); total[phase] += waits[i]; }
        }
        try (PrintWriter w = new PrintWriter(a[0])) {
            w.println(total[0] + " " + total[1] + " " + (sessionsCount + cacheCount));
        }
    }
}
