import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sets the virtual-thread scheduler's parallelism in main, before its first virtual thread, as a
 * program may: the JDK reads it when java.lang.VirtualThread is initialized. N = processors + 1
 * virtual threads then spin, never yielding, until all N have started: with the property taken
 * there are N carriers and they meet at once; with the default, one carrier per processor, the
 * last cannot start while the others spin, they give up after 10 s, and it starts too late.
 * Then one virtual thread sleeps inside synchronized (a MONITOR pin on 21-23).
 *
 * prints "SchedulerSetInMain: met N" or "SchedulerSetInMain: not met (N started, not at once)"
 */
public class SchedulerSetInMain {

    public static void main(String[] args) throws Exception {
        int n = Runtime.getRuntime().availableProcessors() + 1;
        System.setProperty("jdk.virtualThreadScheduler.parallelism", Integer.toString(n));
        AtomicInteger started = new AtomicInteger();
        AtomicBoolean met = new AtomicBoolean();
        long deadline = System.nanoTime() + 10_000_000_000L;
        Thread[] spinners = new Thread[n];
        for (int i = 0; i < n; i++) {
            spinners[i] = Thread.ofVirtual().name("spinner-" + i).start(() -> {
                // the last to start says whether it did by the deadline: it can start later only once a
                // spinner gave up, which none does before the deadline
                if (started.incrementAndGet() == n && System.nanoTime() < deadline) {
                    met.set(true);
                }
                while (started.get() < n && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
            });
        }
        for (Thread t : spinners) t.join();
        System.out.println("SchedulerSetInMain: "
                + (met.get() ? "met " + n : "not met (" + n + " started, not at once)"));
        Object lock = new Object();
        Thread pinner = Thread.ofVirtual().name("pinner").start(() -> {
            synchronized (lock) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }
        });
        pinner.join();
    }
}
