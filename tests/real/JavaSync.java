// 8 threads each enter one synchronized block (static Object SESSIONS) 30
// times and hold it 500 us; each times its own monitor entries. Writes
// "<total entry ns> <entries>" to argv[0].
import java.io.*;
public class JavaSync {
    static final Object SESSIONS = new Object();
    static long counter;
    public static void main(String[] a) throws Exception {
        int threads = Integer.parseInt(a[1]), iters = Integer.parseInt(a[2]);
        long[] waits = new long[threads];
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            final int me = i;
            ts[i] = new Thread(() -> {
                for (int k = 0; k < iters; k++) {
                    long t0 = System.nanoTime();
                    synchronized (SESSIONS) {
                        waits[me] += System.nanoTime() - t0;
                        counter++;
                        long end = System.nanoTime() + 500_000;
                        while (System.nanoTime() < end) { }
                    }
                    try { Thread.sleep(0, 300_000); } catch (InterruptedException e) { }
                }
            }, "worker-" + i);
            ts[i].start();
        }
        long total = 0;
        for (int i = 0; i < threads; i++) { ts[i].join(); total += waits[i]; }
        try (PrintWriter w = new PrintWriter(a[0])) { w.println(total + " " + counter); }
    }
}
