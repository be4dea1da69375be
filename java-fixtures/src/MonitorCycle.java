import java.util.concurrent.CountDownLatch;

/**
 * A monitor cycle between two virtual threads, on 21-23 where a contended synchronized pins:
 * "cycle-1" holds monitor A and enters B, "cycle-2" holds B and enters A. Each pins its carrier
 * waiting for a thread that waits on its own carrier: neither can go on, and the program hangs
 * until it is killed (the deadlock kind "cycle", docs/deadlocks.md). On 24+ a contended entry
 * unmounts: the threads deadlock as platform threads would, with nothing pinned.
 * Prints "MonitorCycle: entering" once both hold their first monitor.
 *
 * usage: MonitorCycle
 */
public class MonitorCycle {

    static final Object A = new Object(), B = new Object();

    static void holdThenEnter(Object first, Object second, CountDownLatch both) {
        synchronized (first) {
            both.countDown();
            try {
                both.await();
            } catch (InterruptedException e) {
                return;
            }
            synchronized (second) { // <== each waits here for the other
                System.out.println("MonitorCycle: no deadlock?");
            }
        }
    }

    public static void main(String[] args) throws Exception {
        System.out.println("java.version = " + System.getProperty("java.version"));
        WarmUp.virtualThreads();
        CountDownLatch both = new CountDownLatch(2);
        Thread one = Thread.ofVirtual().name("cycle-1").start(() -> holdThenEnter(A, B, both));
        Thread two = Thread.ofVirtual().name("cycle-2").start(() -> holdThenEnter(B, A, both));
        both.await();
        System.out.println("MonitorCycle: entering");
        System.out.flush();
        one.join();
        two.join();
    }
}
