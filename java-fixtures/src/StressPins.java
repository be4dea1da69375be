import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * For the pin stress test: `pins` virtual threads, each pinning its carrier once
 * for sleepMs, and nowhere else in the fixture's own code:
 *   monitor  Thread.sleep inside synchronized on its OWN lock (pins on JDK 21-23, MONITOR)
 *   native   Thread.sleep called back from JniSleep.sleepInNative (pins on every JDK, NATIVE)
 * Run with -Djdk.virtualThreadScheduler.parallelism=N: N carriers pinned at once.
 * Prints "StressPins: pinned=<n>" (each virtual thread counts its pin after it).
 *
 * usage: StressPins [monitor|native] [pins=100] [sleepMs=100]
 * native needs -Djava.library.path=<dir containing libvtpinfixture.so>
 */
public class StressPins {

    static final AtomicInteger PINNED = new AtomicInteger();

    static void pinMonitor(Object lock, long sleepMs) throws InterruptedException {
        synchronized (lock) {
            Thread.sleep(sleepMs);        // <== pinned on JDK 21-23
        }
    }

    public static void main(String[] args) throws Exception {
        boolean nativePin = args.length > 0 && args[0].equals("native");
        int pins = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        long sleepMs = args.length > 2 ? Long.parseLong(args[2]) : 100;
        System.out.println("java.version = " + System.getProperty("java.version"));
        long start = System.nanoTime();
        List<Thread> vts = new ArrayList<>(pins);
        for (int i = 0; i < pins; i++) {
            Object lock = new Object();
            vts.add(Thread.ofVirtual().name("stresspin-" + i).start(() -> {
                try {
                    if (nativePin)
                        JniSleep.sleepInNative(sleepMs); // <== pinned on every JDK
                    else
                        pinMonitor(lock, sleepMs);
                    PINNED.incrementAndGet();
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }));
        }
        for (Thread vt : vts) vt.join();
        long ms = (System.nanoTime() - start) / 1_000_000L;
        System.out.println("StressPins: pinned=" + PINNED.get());
        System.out.println("fixture StressPins done in " + ms + " ms");
    }
}
