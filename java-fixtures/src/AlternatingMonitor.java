import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A contended monitor whose waits and holds alternate on the same carriers: `threads`
 * virtual threads (run it with parallelism=2) each do `rounds` rounds of round():
 * synchronized (LOCK) { Thread.sleep(sleepMs) }. On JDK 21-23 each hold is a MONITOR pin (the
 * sleep parks with the monitor held) and the threads queued behind it block their carrier
 * entering LOCK (MONITOR_ENTER), so every carrier runs waits and holds back to back, of
 * different virtual threads. threads x rounds holds of the one monitor. Starts its carriers,
 * prints "AlternatingMonitor: ready", waits for goFile, prints the holds and "done".
 *
 * usage: AlternatingMonitor [threads=6] [rounds=6] [sleepMs=15] [goFile|-]
 */
public class AlternatingMonitor {

    static final Object LOCK = new Object();
    static final AtomicInteger HOLDS = new AtomicInteger();

    static void round(long sleepMs) throws InterruptedException {
        synchronized (LOCK) {
            HOLDS.incrementAndGet();
            Thread.sleep(sleepMs);
        }
    }

    public static void main(String[] args) throws Exception {
        ClockMark.markIfAsked(); // a test comparing JFR's times asks (ClockMark)
        WarmUp.virtualThreads(); // the JDK's one-time work first
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 6;
        long sleepMs = args.length > 2 ? Long.parseLong(args[2]) : 15;
        String go = args.length > 3 ? args[3] : "-";
        System.out.println("java.version = " + System.getProperty("java.version"));
        List<Thread> warm = new ArrayList<>();
        for (int t = 0; t < threads; t++) warm.add(Thread.ofVirtual().start(() -> PinnedBackend.spin(20)));
        for (Thread vt : warm) vt.join();
        System.out.println("AlternatingMonitor: ready pid=" + ProcessHandle.current().pid());
        System.out.flush();
        PinnedBackend.awaitGo(go);
        List<Thread> vts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            vts.add(Thread.ofVirtual().name("alternating-" + t).start(() -> {
                try {
                    for (int r = 0; r < rounds; r++) round(sleepMs);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }));
        }
        for (Thread vt : vts) vt.join();
        System.out.println("AlternatingMonitor: threads=" + threads + " rounds=" + rounds + " holds=" + HOLDS.get()
                + " done");
    }
}
