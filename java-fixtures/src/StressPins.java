import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * For the pin stress test: `pins` virtual threads, each pinning its carrier exactly once, for
 * at least holdMs, in StressPins code:
 *   monitor  LockSupport.park inside synchronized on its OWN lock (pins on JDK 21-23, MONITOR)
 *   native   LockSupport.park called back from native parkInNative (pins on every JDK, NATIVE)
 * The main thread releases each one once it has seen the same park in progress (Thread.State
 * WAITING) holdMs apart, so a pin lasts at least holdMs however late a loaded machine runs the
 * thread (a Thread.sleep pin would not: its deadline is fixed before the park, so a late park
 * is a short pin), and a spurious wake-up that parks again is held anew.
 * Run with -Djdk.virtualThreadScheduler.parallelism=N: N carriers pinned at once.
 * Prints "StressPins: pinned=<n>" (each virtual thread counts its pin after it).
 *
 * usage: StressPins [monitor|native] [pins=100] [holdMs=5]
 * native needs -Djava.library.path=<dir containing libvtpinfixture.so>
 */
public class StressPins {

    static final class Pin {
        final Thread thread;
        volatile boolean released;
        volatile int parks;   // written by the pinned thread only, before each park
        int seenParks = -1;   // controller: the park seen in progress since parkedAt
        long parkedAt;

        Pin(Thread thread) {
            this.thread = thread;
        }
    }

    static final ConcurrentLinkedQueue<Pin> ARRIVED = new ConcurrentLinkedQueue<>();
    static final ThreadLocal<Pin> CURRENT = new ThreadLocal<>();
    static final AtomicInteger PINNED = new AtomicInteger();

    static native void parkInNative();

    /** Called from C (parkInNative). */
    static void parkCallback() {
        parkPinned(CURRENT.get());
    }

    static void parkPinned(Pin p) {
        ARRIVED.add(p);
        while (!p.released) {
            p.parks++;
            LockSupport.park();           // <== pinned: monitor held, or native frame below
        }
    }

    static void pinMonitor(Object lock, Pin p) {
        synchronized (lock) {
            parkPinned(p);
        }
    }

    public static void main(String[] args) throws Exception { WarmUp.virtualThreads(); // the JDK's one-time work first
        boolean nativePin = args.length > 0 && args[0].equals("native");
        int pins = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        long holdNanos = (args.length > 2 ? Long.parseLong(args[2]) : 5) * 1_000_000L;
        if (nativePin)
            System.loadLibrary("vtpinfixture");
        System.out.println("java.version = " + System.getProperty("java.version"));
        long start = System.nanoTime();
        List<Thread> vts = new ArrayList<>(pins);
        for (int i = 0; i < pins; i++) {
            Object lock = new Object();
            vts.add(Thread.ofVirtual().name("stresspin-" + i).unstarted(() -> {
                Pin p = new Pin(Thread.currentThread());
                if (nativePin) {
                    CURRENT.set(p);
                    parkInNative();               // <== pinned on every JDK
                } else {
                    pinMonitor(lock, p);
                }
                PINNED.incrementAndGet();
            }));
        }
        for (Thread vt : vts) vt.start();
        // Release each parked thread once the same park was seen in progress holdMs apart.
        List<Pin> waiting = new ArrayList<>();
        for (int released = 0; released < pins; ) {
            for (Pin p; (p = ARRIVED.poll()) != null; )
                waiting.add(p);
            for (Iterator<Pin> it = waiting.iterator(); it.hasNext(); ) {
                Pin p = it.next();
                // The same park (count read before and after the state) seen WAITING just
                // before parkedAt and just after now: it lasted at least now - parkedAt.
                // A spurious wake-up that parks again starts the hold anew.
                long now = System.nanoTime();
                int before = p.parks;
                boolean parked = p.thread.getState() == Thread.State.WAITING;
                int after = p.parks;
                if (!parked || before != after || after != p.seenParks) {
                    p.seenParks = parked && before == after ? after : -1;
                    p.parkedAt = System.nanoTime();
                } else if (now - p.parkedAt >= holdNanos) {
                    p.released = true;
                    LockSupport.unpark(p.thread);
                    it.remove();
                    released++;
                }
            }
            LockSupport.parkNanos(200_000);
        }
        for (Thread vt : vts) vt.join();
        long ms = (System.nanoTime() - start) / 1_000_000L;
        System.out.println("StressPins: pinned=" + PINNED.get());
        System.out.println("fixture StressPins done in " + ms + " ms");
    }
}
