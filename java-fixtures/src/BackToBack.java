import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Back-to-back pins: each of `threads` virtual threads runs `rounds` rounds of
 * synchronized (its own lock) { Thread.sleep(sleepMs) } (a pin per round on JDK 21-23).
 * Each thread spins ~50 ms on CPU before its first and after its last round, so its
 * carrier's idle parks stay clear of the pins. Starts its carriers, then waits for
 * goFile (when given) before the rounds, so an agent can be attached first.
 *
 * usage: BackToBack [threads=2] [rounds=20] [sleepMs=15] [goFile|-] [sleep|wait]
 * (wait: lock.wait(sleepMs) instead of the sleep, a monitor wait that pins on JDK 21-23 too)
 * prints, per thread, the monotonic clock (System.nanoTime(), CLOCK_MONOTONIC on Linux: a stepped
 * wall clock does not move it) just before each round's sleep:
 * "backtoback-N sleeps_from_mono_ns=T1,T2,...". A round's park ends at its T + sleepMs or
 * later, and starts later than T by whatever the JDK did first (parkNanos takes its
 * deadline before scheduleUnpark, which can block), so a pin of round r lies after its T.
 */
public class BackToBack {

    static long spin(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L, x = 1;
        while (System.nanoTime() < end) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        ClockMark.markIfAsked(); // a test comparing JFR's times asks (ClockMark)
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        long sleepMs = args.length > 2 ? Long.parseLong(args[2]) : 15;
        Path go = args.length > 3 && !args[3].equals("-") ? Path.of(args[3]) : null;
        boolean waits = args.length > 4 && args[4].equals("wait");
        System.out.println("java.version = " + System.getProperty("java.version"));
        // warm up: the carriers exist (and an attached agent can announce them) before the rounds,
        // and the JDK's first timed park is done (unpinned: no lock held),
        // so its one-time contended entries there do not fall inside the rounds
        List<Thread> warm = new ArrayList<>();
        for (int t = 0; t < threads; t++) warm.add(Thread.ofVirtual().start(() -> {
            spin(20);
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }));
        for (Thread vt : warm) vt.join();
        // and the JDK's event of a pinned park, which the first park that pins (holding a monitor, 21-23)
        // would initialize while the other thread's first pinned park waits for it inside the JVM (ci46:
        // 3-8 ms in no pin, a monitor wait on its init lock, under load)
        try {
            Class.forName("jdk.internal.event.VirtualThreadPinnedEvent");
        } catch (ClassNotFoundException e) {
            // not this JDK's: nothing to initialize
        }
        System.out.println("BackToBack: ready");
        System.out.flush();
        while (go != null && !Files.exists(go)) Thread.sleep(20);
        long[] sink = new long[threads];
        long[][] from = new long[threads][rounds];
        List<Thread> vts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int i = t;
            vts.add(Thread.ofVirtual().name("backtoback-" + t).start(() -> {
                Object lock = new Object();
                sink[i] += spin(50);
                try {
                    for (int r = 0; r < rounds; r++) {
                        synchronized (lock) {
                            from[i][r] = System.nanoTime();
                            if (waits)
                                lock.wait(sleepMs);
                            else
                                Thread.sleep(sleepMs);
                        }
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
                sink[i] += spin(50);
            }));
        }
        for (Thread vt : vts) vt.join();
        for (int t = 0; t < threads; t++) {
            StringBuilder b = new StringBuilder("backtoback-" + t + " sleeps_from_mono_ns=");
            for (int r = 0; r < rounds; r++) b.append(r == 0 ? "" : ",").append(from[t][r]);
            System.out.println(b);
        }
        System.out.println("BackToBack: threads=" + threads + " rounds=" + rounds + " sleepMs=" + sleepMs + " done");
    }
}
