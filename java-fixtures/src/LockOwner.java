import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * One thread holds a monitor for holdMs in holdLong (sleeping inside it) while virtual threads
 * enter it: the waiters' blocker is that owner. On 21-23 each waiter pins its carrier
 * (MONITOR_ENTER); on 24+ a waiter pins only under a native frame, so the waiters enter through
 * JNI there (JniLocked.lockedCall's native method calls back into enter()).
 * - owner=platform: a platform thread named "lock-owner" holds it;
 * - owner=virtual: a virtual thread named "vlock-owner" holds it (on 24+ it unmounts while it sleeps
 *   holding it, and JVMTI cannot name an unmounted owner);
 * - owner=pinned: that virtual thread holds it under a native frame (holdInNative), so it stays
 *   mounted and pinned itself: the waiters' blocker is a pin too.
 *
 * - idle: so many more virtual threads parked for the run, started first (none of them owns anything):
 *   what finding an unmounted owner among many virtual threads costs (vtpin's agent/jvm/vowner.h).
 *
 * usage: LockOwner platform|virtual|pinned [waiters=3] [holdMs=300] [idle=0]
 */
public class LockOwner {

    static final Object LOCK = new Object();
    static long entries; // guarded by LOCK

    static {
        System.loadLibrary("vtpinfixture");
    }

    /** Implemented in native/vtpin_fixture_jni.c: calls LockOwner.enter() back through JNI. */
    static native void enterInNative();

    /** Implemented in native/vtpin_fixture_jni.c: calls LockOwner.holdCallback() back through JNI. */
    static native void holdInNative();

    static CountDownLatch heldLatch;
    static long heldMs;

    /** Called from C. */
    static void holdCallback() {
        holdLong(heldLatch, heldMs);
    }

    static void holdLong(CountDownLatch held, long ms) {
        synchronized (LOCK) {
            held.countDown();
            try {
                Thread.sleep(ms); // the owner sleeps holding LOCK
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }
    }

    /** Called from C too. */
    static void enter() {
        synchronized (LOCK) { // <== contended: blocked by the owner
            entries++;
        }
    }

    public static void main(String[] args) throws Exception {
        String owner = args.length > 0 ? args[0] : "platform";
        int waiters = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        long holdMs = args.length > 2 ? Long.parseLong(args[2]) : 300;
        int idle = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        boolean viaNative = Runtime.version().feature() >= 24;
        System.out.println("java.version = " + System.getProperty("java.version"));
        // one-time linkage on main: the waiters' pins are the contention, not the JDK's setup
        enter();
        if (viaNative)
            enterInNative();
        WarmUp.virtualThreads();
        // and the idlers' park: its first call resolves LockSupport through the application class loader,
        // under that class name's loading lock, which a thousand idlers starting at once contend (a
        // CRITICAL_SECTION pin and a blocker look of its own over the virtual threads started so far)
        java.util.concurrent.locks.LockSupport.getBlocker(Thread.currentThread());
        CountDownLatch idleParked = new CountDownLatch(idle);
        List<Thread> idlers = new ArrayList<>();
        for (int i = 0; i < idle; i++) {
            idlers.add(Thread.ofVirtual().name("idle-" + i).start(() -> {
                idleParked.countDown();
                java.util.concurrent.locks.LockSupport.park();
            }));
        }
        idleParked.await();
        CountDownLatch held = new CountDownLatch(1);
        heldLatch = held;
        heldMs = holdMs;
        Runnable hold = owner.equals("pinned") ? LockOwner::holdInNative : () -> holdLong(held, holdMs);
        Thread holder = owner.equals("platform") ? Thread.ofPlatform().name("lock-owner").start(hold)
                                                 : Thread.ofVirtual().name("vlock-owner").start(hold);
        held.await();
        // its sleep begun (a virtual owner parked: unmounted on 24+, pinned on 21-23), so the waiters'
        // blocker sees the owner as it stays
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (holder.getState() != Thread.State.TIMED_WAITING) {
            if (System.nanoTime() > deadline) throw new AssertionError(holder + " never slept");
            Thread.sleep(1);
        }
        List<Thread> vts = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            vts.add(Thread.ofVirtual().name("waiter-" + i).start(() -> {
                if (viaNative)
                    enterInNative();
                else
                    enter();
            }));
        }
        for (Thread vt : vts) vt.join();
        holder.join();
        for (Thread t : idlers) java.util.concurrent.locks.LockSupport.unpark(t);
        for (Thread t : idlers) t.join();
        System.out.println("LockOwner: owner=" + owner + " waiters=" + waiters + " entries=" + entries + " done");
    }
}
