import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Pins for the collector's zero-touch tests, run with no agent: prints "ZeroTouch: ready" and
 * waits until goFile exists (the test first sees the collector watch this JVM), then runs one
 * kind of blocking on virtual threads, joins them and prints "ZeroTouch: done".
 *
 * usage: ZeroTouch MODE goFile [threads=40] [ms=150]
 *   monitor    each thread sleeps inside its own synchronized block: a pin on 21-23 (parked
 *              holding a monitor), nothing on 24+ (it unmounts)
 *   wait       each thread calls Object.wait(ms) on its own lock: a pin on 21-23
 *   contended  threads take turns on one monitor, each sleeping ms inside it: on 21-23 the others
 *              block entering it (and the holder's sleep pins)
 *   unmounted  each thread sleeps holding a ReentrantLock: no pin on any JDK
 *   jni        each thread calls a JNI method that calls back into Java, which sleeps: a native
 *              frame pins on every JDK
 *   critical   each thread sleeps inside a continuation critical section (jdk.internal.vm.Continuation
 *              pin/unpin, by reflection: run with --add-exports java.base/jdk.internal.vm=ALL-UNNAMED):
 *              a pin on every JDK
 */
public class ZeroTouch {

    public static void main(String[] args) throws Exception {
        ClockMark.markIfAsked(); // a test comparing JFR's times asks (ClockMark)
        String mode = args[0];
        Path go = Path.of(args[1]);
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 40;
        long ms = args.length > 3 ? Long.parseLong(args[3]) : 150;
        if (mode.equals("jni"))
            JniSleep.sleepInNative(0); // links it on main, a platform thread (no pin)
        WarmUp.virtualThreads(); // the JDK's one-time work first
        if (mode.equals("critical")) // its reflection resolved and linked by one thread now: the threads
            Thread.ofVirtual().start(() -> { // below do not contend on a class loader's lock (a real pin)
                criticalSection("pin");
                criticalSection("unpin");
            }).join();
        System.out.println("ZeroTouch: ready");
        System.out.flush();
        while (!Files.exists(go))
            Thread.sleep(10);
        Object shared = new Object();
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            Object own = new Object();
            ReentrantLock lock = new ReentrantLock();
            Runnable task = switch (mode) {
                case "monitor" -> () -> {
                    synchronized (own) {
                        sleep(ms);
                    }
                };
                case "wait" -> () -> {
                    synchronized (own) {
                        try {
                            own.wait(ms);
                        } catch (InterruptedException e) {
                            throw new RuntimeException(e);
                        }
                    }
                };
                case "contended" -> () -> {
                    synchronized (shared) {
                        sleep(ms);
                    }
                };
                case "unmounted" -> () -> {
                    lock.lock();
                    try {
                        sleep(ms);
                    } finally {
                        lock.unlock();
                    }
                };
                case "jni" -> () -> JniSleep.sleepInNative(ms);
                case "critical" -> () -> {
                    criticalSection("pin");
                    try {
                        sleep(ms);
                    } finally {
                        criticalSection("unpin");
                    }
                };
                default -> throw new IllegalArgumentException("mode " + mode);
            };
            ts[i] = Thread.ofVirtual().name("zt-" + i).start(task);
        }
        for (Thread t : ts)
            t.join();
        System.out.println("ZeroTouch: done");
    }

    private static Method pin, unpin;

    /** Continuation.pin or unpin: public static methods of a package java.base does not export. */
    static void criticalSection(String which) {
        try {
            if (pin == null) {
                Class<?> c = Class.forName("jdk.internal.vm.Continuation");
                unpin = c.getMethod("unpin");
                pin = c.getMethod("pin");
            }
            (which.equals("pin") ? pin : unpin).invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Continuation." + which + ": run with --add-exports "
                    + "java.base/jdk.internal.vm=ALL-UNNAMED", e);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }
}
