import java.util.ArrayList;
import java.util.List;

/**
 * N virtual threads repeatedly enter ONE shared monitor. The holder spins on the CPU
 * (no sleep, no park) for holdMs while holding it, so the other virtual threads block in
 * contended monitor entry. On JDK 21 that blocks the carrier (pinned, JVMTI
 * MonitorContendedEnter/Entered posted with the virtual thread); on JDK 24+ (JEP 491) the
 * waiting virtual thread unmounts.
 *
 * usage: Contended [threads=8] [iterationsPerThread=25] [holdMs=5]
 * total lock-held time = threads * iterations * holdMs (default 8*25*5 = 1000 ms)
 */
public class Contended {

    static final Object LOCK = new Object();
    static long counter;          // guarded by LOCK
    static long spinSink;         // guarded by LOCK
    static long waitedEntries;    // guarded by LOCK: acquisitions that waited > 1 ms
    static long handoffs;         // guarded by LOCK: acquisitions by a different thread
    static Thread lastOwner;      // guarded by LOCK

    static void holdAndSpin(long holdNanos) {
        long attempt = System.nanoTime();
        synchronized (LOCK) {     // <== contended monitor entry
            long now = System.nanoTime();
            if (now - attempt > 1_000_000L) waitedEntries++;
            Thread me = Thread.currentThread();
            if (lastOwner != null && lastOwner != me) handoffs++;
            lastOwner = me;
            long end = now + holdNanos;
            long x = counter;
            while (System.nanoTime() < end) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            spinSink ^= x;
            counter++;
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 25;
        long holdMs = args.length > 2 ? Long.parseLong(args[2]) : 5;
        System.out.println("java.version = " + System.getProperty("java.version"));
        System.out.println("Contended: threads=" + threads + " iterations=" + iterations
            + " holdMs=" + holdMs);

        long holdNanos = holdMs * 1_000_000L;
        long start = System.nanoTime();
        List<Thread> vts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            vts.add(Thread.ofVirtual().name("contended-" + t).start(() -> {
                for (int i = 0; i < iterations; i++) {
                    holdAndSpin(holdNanos);
                    Thread.yield();   // outside the lock: lets a waiter win, so entries stay contended
                }
            }));
        }
        for (Thread vt : vts) vt.join();
        long ms = (System.nanoTime() - start) / 1_000_000L;

        long expected = (long) threads * iterations;
        synchronized (LOCK) {
            System.out.println("Contended: acquisitions=" + counter + "/" + expected
                + " waitedEntries=" + waitedEntries + " handoffs=" + handoffs
                + " (sink " + (spinSink & 1) + ")");
            if (counter != expected) throw new AssertionError("lost updates");
        }
        System.out.println("fixture Contended done in " + ms + " ms");
    }
}
