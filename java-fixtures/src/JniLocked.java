import java.util.ArrayList;
import java.util.List;

/**
 * K virtual threads each call a native method that calls back (JNI) into
 * enterCallback, which enters a monitor that main holds: every virtual thread
 * blocks once in a contended monitor entry with a native frame below it. On
 * JDK 21-23 that pins (MONITOR_ENTER); on 24+ (JEP 491) a contended entry
 * unmounts, but not under a native frame: it still pins (NATIVE; JFR:
 * "Native or VM frame on stack", blockingOperation "Contended monitor enter").
 * Each virtual thread holds a monitor of its own across the native call
 * (enterHolding), so its pin's stack shows one monitor held there.
 * main releases the monitor holdMs after every virtual thread is blocked on it.
 * Mode wait: each virtual thread calls Object.wait(holdMs) from a JNI callback
 * instead (21-23: OBJECT_WAIT; 24+: NATIVE, blockingOperation "Object.wait").
 *
 * usage: JniLocked [threads=2] [holdMs=100] [enter|wait]
 * needs -Djava.library.path=<dir containing libvtpinfixture.so>, and at least
 * `threads` carriers (each blocked virtual thread keeps its carrier)
 */
public class JniLocked {

    static {
        System.loadLibrary("vtpinfixture");
    }

    static final Object LOCK = new Object();
    static int entered; // guarded by LOCK

    /** Implemented in native/vtpin_fixture_jni.c: calls enterCallback() through JNI. */
    static native void enterInNative();

    /** A monitor of its own held across the native call. */
    static void enterHolding() {
        Object mine = new Object();
        synchronized (mine) {
            enterInNative();
        }
    }

    /** Called from C. */
    static void enterCallback() {
        synchronized (LOCK) {     // <== contended entry: blocks the carrier, native frame below
            entered++;
        }
    }

    /** Implemented in native/vtpin_fixture_jni.c: calls waitCallback(ms) through JNI. */
    static native void waitInNative(long ms);

    /** Called from C. */
    static void waitCallback(long ms) throws InterruptedException {
        Object own = new Object();
        synchronized (own) {
            own.wait(ms);         // <== cannot unmount: native frame below
        }
    }

    public static void main(String[] args) throws Exception {
        ClockMark.markIfAsked(); // a test comparing JFR's times asks (ClockMark)
        WarmUp.virtualThreads(); // the JDK's one-time work first
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        long holdMs = args.length > 1 ? Long.parseLong(args[1]) : 100;
        boolean wait = args.length > 2 && args[2].equals("wait");
        System.out.println("java.version = " + System.getProperty("java.version"));
        System.out.println("JniLocked: threads=" + threads + " holdMs=" + holdMs + (wait ? " wait" : " enter"));
        List<Thread> vts = new ArrayList<>();
        if (wait) {
            for (int t = 0; t < threads; t++)
                vts.add(Thread.ofVirtual().name("jnilocked-" + t).start(() -> waitInNative(holdMs)));
            for (Thread vt : vts) vt.join();
            System.out.println("JniLocked: done, " + threads + " waits");
            return;
        }
        synchronized (LOCK) {
            for (int t = 0; t < threads; t++)
                vts.add(Thread.ofVirtual().name("jnilocked-" + t).start(JniLocked::enterHolding));
            long deadline = System.nanoTime() + 30_000_000_000L;
            for (Thread vt : vts) {
                while (vt.getState() != Thread.State.BLOCKED) {
                    if (System.nanoTime() > deadline) throw new AssertionError(vt + " never blocked");
                    Thread.sleep(1);
                }
            }
            Thread.sleep(holdMs);
        }
        for (Thread vt : vts) vt.join();
        synchronized (LOCK) {
            if (entered != threads) throw new AssertionError("entered " + entered + " of " + threads);
        }
        System.out.println("JniLocked: done, " + entered + " entries");
    }
}
