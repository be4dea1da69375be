import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The incident of Netflix's "Dude, where's my lock?" in miniature. A virtual thread "lock-holder"
 * takes a java.util.concurrent lock and sleeps holding it: it unmounts. Virtual threads
 * "lock-waiter-N" then lock it where they cannot unmount: inside a monitor of their own on 21-23
 * (MONITOR), under a native frame on 24+ (NATIVE, through JNI: lockInNative calls lockCallback
 * back). Each pins its carrier, blocked by the holder.
 * - kind lock: a ReentrantLock; write: a ReentrantReadWriteLock's write lock (both owned by the
 *   holder); read: the holder takes the read lock and the waiters the write lock (held shared:
 *   no single owner).
 * - With fewer waiters than carriers the holder mounts again when its sleep ends and unlocks; the
 *   program ends. With as many (the incident), every carrier is pinned by a waiter, the holder
 *   never gets one back to unlock, and the program hangs until it is killed.
 * Prints "LockChain: waiters parked" once every waiter is parked on the lock.
 * - holder virtual (the incident: unmounted while it sleeps); platform: a platform thread; pinned: a
 *   virtual thread that sleeps under a native frame (holdInNative), so it stays mounted and pinned.
 *   chained: a virtual holder that, holding the lock, parks on a second ReentrantLock (unmounted),
 *   which a platform thread "deep-holder" holds, sleeping holdMs; chained-monitor: a platform holder
 *   that, holding the lock, blocks entering a monitor "deep-holder" holds, sleeping;
 *   chained-to-virtual: a platform holder parked on a second ReentrantLock that a virtual
 *   "deep-holder" holds, sleeping (unmounted: with as many waiters as carriers it never mounts again,
 *   and the program hangs). A chain two deep: the waiters wait for lock-holder, which waits for
 *   deep-holder. The waiters start once the holder is parked (blocked) on the second lock.
 * --ready: says "LockChain: ready pid=N" and waits for a line on stdin first (for attach).
 * - hogs: once the waiters are parked, so many virtual threads "carrier-hog-N" that compute without
 *   unmounting, for ever (hogMs 0) or for hogMs: with waiters + hogs carriers the holder gets none
 *   back either (the incident with a hog in place of a pin), and the program hangs until it is
 *   killed, or until the hogs end.
 *
 * usage: LockChain [--ready] lock|write|read [waiters=1] [holdMs=300]
 *        [holder=virtual|platform|pinned|chained|chained-monitor|chained-to-virtual] [hogs=0]
 *        [hogMs=0]
 */
public class LockChain {

    static {
        System.loadLibrary("vtpinfixture");
    }

    static Lock waited;
    static long entries; // guarded by waited

    /** Implemented in native/vtpin_fixture_jni.c: calls lockCallback() back through JNI. */
    static native void lockInNative();

    /** Implemented in native/vtpin_fixture_jni.c: calls holdCallback() back through JNI. */
    static native void holdInNative();

    static Lock heldLock;
    static CountDownLatch heldLatch;
    static long heldMs;

    /** Called from C. */
    static void holdCallback() {
        hold(heldLock, heldLatch, heldMs);
    }

    /** Called from C. */
    static void lockCallback() {
        takeAndRelease();
    }

    static void takeAndRelease() {
        waited.lock(); // <== parks, and cannot unmount: blocked by the holder
        try {
            entries++;
        } finally {
            waited.unlock();
        }
    }

    static void enterThenLock(boolean viaNative) {
        Object mine = new Object();
        synchronized (mine) {
            if (viaNative)
                lockInNative();
            else
                takeAndRelease();
        }
    }

    static void hold(Lock held, CountDownLatch taken, long ms) {
        held.lock();
        try {
            taken.countDown();
            Thread.sleep(ms); // the holder sleeps holding the lock: unmounted
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        } finally {
            held.unlock();
        }
    }

    /** Holds held, then waits for deeper (a ReentrantLock) or enters deeperMonitor, which deep-holder holds. */
    static void holdThenWait(Lock held, CountDownLatch taken, Lock deeper, Object deeperMonitor) {
        held.lock();
        try {
            taken.countDown();
            if (deeperMonitor != null) {
                synchronized (deeperMonitor) { // <== blocked: deep-holder holds it
                    sink = 1;
                }
            } else {
                deeper.lock(); // <== parks: deep-holder holds it
                deeper.unlock();
            }
        } finally {
            held.unlock();
        }
    }

    static void sleepHolding(Object monitor, CountDownLatch taken, long ms) {
        synchronized (monitor) {
            taken.countDown();
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }
    }

    static volatile long sink;

    /** Computes for ms (0: for ever): never parks, never yields, so it never leaves its carrier. */
    static void compute(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        long x = 1;
        while (ms == 0 || System.nanoTime() < end) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            sink = x;
        }
    }

    public static void main(String[] args) throws Exception {
        boolean ready = args.length > 0 && args[0].equals("--ready");
        if (ready)
            args = java.util.Arrays.copyOfRange(args, 1, args.length);
        String kind = args.length > 0 ? args[0] : "lock";
        int waiters = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        long holdMs = args.length > 2 ? Long.parseLong(args[2]) : 300;
        String holderKind = args.length > 3 ? args[3] : "virtual";
        int hogs = args.length > 4 ? Integer.parseInt(args[4]) : 0;
        long hogMs = args.length > 5 ? Long.parseLong(args[5]) : 0;
        boolean viaNative = Runtime.version().feature() >= 24;
        System.out.println("java.version = " + System.getProperty("java.version"));
        Lock held;
        if (kind.equals("lock")) {
            held = waited = new ReentrantLock();
        } else {
            ReentrantReadWriteLock rw = new ReentrantReadWriteLock();
            waited = rw.writeLock();
            held = kind.equals("read") ? rw.readLock() : rw.writeLock();
        }
        // one-time linkage on main: the waiters' pins are the lock, not the JDK's setup
        enterThenLock(viaNative);
        WarmUp.virtualThreads();
        if (ready) {
            System.out.println("LockChain: ready pid=" + ProcessHandle.current().pid());
            System.out.flush();
            new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
        }
        CountDownLatch taken = new CountDownLatch(1);
        heldLock = held;
        heldLatch = taken;
        heldMs = holdMs;
        Runnable hold = holderKind.equals("pinned") ? LockChain::holdInNative : () -> hold(held, taken, holdMs);
        Thread deep = null;
        if (holderKind.startsWith("chained")) {
            Lock deeper = new ReentrantLock();
            Object deeperMonitor = holderKind.equals("chained-monitor") ? new Object() : null;
            CountDownLatch deepTaken = new CountDownLatch(1);
            Runnable deepHold = deeperMonitor != null ? () -> sleepHolding(deeperMonitor, deepTaken, holdMs)
                                                      : () -> hold(deeper, deepTaken, holdMs);
            deep = holderKind.equals("chained-to-virtual") ? Thread.ofVirtual().name("deep-holder").start(deepHold)
                                                           : Thread.ofPlatform().name("deep-holder").start(deepHold);
            deepTaken.await();
            hold = () -> holdThenWait(held, taken, deeper, deeperMonitor);
        }
        Thread holder = holderKind.equals("platform") || holderKind.equals("chained-monitor") ||
                                holderKind.equals("chained-to-virtual")
                            ? Thread.ofPlatform().name("lock-holder").start(hold)
                            : Thread.ofVirtual().name("lock-holder").start(hold);
        taken.await();
        long holderDeadline = System.nanoTime() + 30_000_000_000L;
        while (deep != null && holder.getState() != Thread.State.WAITING && holder.getState() != Thread.State.BLOCKED) {
            if (System.nanoTime() > holderDeadline) throw new AssertionError(holder + " never waited for deep-holder");
            Thread.sleep(1);
        }
        List<Thread> vts = new ArrayList<>();
        for (int i = 0; i < waiters; i++)
            vts.add(Thread.ofVirtual().name("lock-waiter-" + i).start(() -> enterThenLock(viaNative)));
        long deadline = System.nanoTime() + 30_000_000_000L;
        for (Thread vt : vts) {
            while (vt.getState() != Thread.State.WAITING) {
                if (System.nanoTime() > deadline) throw new AssertionError(vt + " never parked");
                Thread.sleep(1);
            }
        }
        System.out.println("LockChain: waiters parked");
        List<Thread> hogThreads = new ArrayList<>();
        for (int i = 0; i < hogs; i++)
            hogThreads.add(Thread.ofVirtual().name("carrier-hog-" + i).start(() -> compute(hogMs)));
        for (Thread vt : vts) vt.join();
        holder.join();
        if (deep != null) deep.join();
        for (Thread h : hogThreads) h.join();
        System.out.println("LockChain: " + kind + " waiters=" + waiters + " holder=" + holderKind + " entries=" +
                           entries + " done");
    }
}
