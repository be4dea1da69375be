import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ways a virtual thread meets a slow static initializer, one per mode:
 * - runs: each virtual thread initializes a class of its own whose {@code <clinit>} sleeps.
 *   The VM calls {@code <clinit>}, so a VM frame lies under the sleep: a pin on every JDK
 *   (JFR on 24+: "VM call to ClassInitPaths$RunsN.<clinit> on stack").
 * - forname: a platform thread runs a {@code <clinit>} that sleeps while virtual threads call
 *   {@code Class.forName} on that class and wait inside the native forName0: a pin on every JDK.
 * - getstatic: as forname, but the virtual threads touch the class with getstatic. A pin on
 *   21-25 (the wait happens in the VM); from 26 (JDK-8369238) the waiter unmounts instead.
 *
 * Each virtual thread's time in its initialization (or its wait for it) is printed at the end:
 * "ClassInitPaths: MODE-i waited_ns=N".
 *
 * usage: ClassInitPaths MODE [threads=2] [init_ms=300]
 */
public class ClassInitPaths {

    static long initMs = 300;
    /** Counted down by Slow's initializer as it begins: the waiters start once it runs. */
    static final CountDownLatch SLOW_IN_INIT = new CountDownLatch(1);

    static void sleepInInit() {
        try {
            Thread.sleep(initMs);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    static class Runs0 { static final long V; static { sleepInInit(); V = System.nanoTime(); } }
    static class Runs1 { static final long V; static { sleepInInit(); V = System.nanoTime(); } }
    static class Runs2 { static final long V; static { sleepInInit(); V = System.nanoTime(); } }
    static class Runs3 { static final long V; static { sleepInInit(); V = System.nanoTime(); } }

    static class Slow { static final long V; static { SLOW_IN_INIT.countDown(); sleepInInit(); V = System.nanoTime(); } }

    static long runOwn(int i) {
        switch (i) {
            case 0: return Runs0.V;
            case 1: return Runs1.V;
            case 2: return Runs2.V;
            default: return Runs3.V;
        }
    }

    static long touch() {
        return Slow.V;
    }

    static long forName() {
        try {
            Class.forName("ClassInitPaths$Slow", true, ClassInitPaths.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new RuntimeException(e);
        }
        return 1;
    }

    public static void main(String[] args) throws Exception {
        ClockMark.markIfAsked(); // a test comparing JFR's times asks (ClockMark)
        String mode = args.length > 0 ? args[0] : "runs";
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        initMs = args.length > 2 ? Long.parseLong(args[2]) : 300;
        if (threads > 4 && mode.equals("runs"))
            throw new IllegalArgumentException("runs: at most 4 threads");
        System.out.println("java.version = " + System.getProperty("java.version"));
        // the JDK's one-time setup (timed park, first sleep, Class.forName's own linkage) on main,
        // so the virtual threads' pins are the initializers' alone
        Thread.sleep(1);
        Class.forName("java.lang.String");
        // and a first virtual thread (a CI run under ASan on 21 had a MONITOR_ENTER in
        // VirtualThreadStartEvent.<clinit> among the fixture's pins)
        WarmUp.virtualThreads();
        // runs: each thread's class loaded here, not initialized: the threads then only initialize, and
        // do not contend for the class loader's lock (on 21 a MONITOR_ENTER pin of its own: a CI run,
        // URLClassPath.getLoader, with 3 threads loading at once)
        for (int i = 0; mode.equals("runs") && i < threads; i++)
            Class.forName("ClassInitPaths$Runs" + i, false, ClassInitPaths.class.getClassLoader());
        WarmUp.carriersThenGate("ClassInitPaths");
        Thread init = null;
        if (!mode.equals("runs")) {
            // a platform thread initializes, so only the waiters hold carriers; they start once it is
            // inside <clinit>, not after a guessed 50 ms
            init = Thread.ofPlatform().name("initializer").start(ClassInitPaths::touch);
            SLOW_IN_INIT.await();
        }
        List<Thread> vts = new ArrayList<>();
        AtomicLong sum = new AtomicLong(); // no monitor: on 21 a contended one would pin too
        long[] waitedNs = new long[threads]; // printed by main at the end: println takes a monitor
        for (int t = 0; t < threads; t++) {
            final int i = t;
            // waiters one after another: on 21 the JVM takes the class's init lock (a Java object) to
            // wait, and two waiters arriving at once contend for it, a MONITOR_ENTER pin of its own
            if (t > 0 && !mode.equals("runs"))
                Thread.sleep(30);
            vts.add(Thread.ofVirtual().name(mode + "-" + t).start(() -> {
                long t0 = System.nanoTime();
                long v = mode.equals("runs") ? runOwn(i) : mode.equals("forname") ? forName() : touch();
                waitedNs[i] = System.nanoTime() - t0;
                sum.addAndGet(v);
            }));
        }
        for (Thread vt : vts) vt.join();
        if (init != null) init.join();
        for (int t = 0; t < threads; t++)
            System.out.println("ClassInitPaths: " + mode + "-" + t + " waited_ns=" + waitedNs[t]);
        System.out.println("ClassInitPaths: mode=" + mode + " threads=" + threads + " init_ms=" + initMs + " done");
    }
}
