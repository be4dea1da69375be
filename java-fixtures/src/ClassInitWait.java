import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * A class whose static initializer sleeps while other virtual threads touch it:
 * they wait inside the JVM for the initialization, holding their carriers, with
 * no park and no native frame (VM_BLOCK). JFR on 25 calls it "Waited for
 * initialization of ClassInitWait$Slow by another thread".
 *
 * usage: ClassInitWait [touchers=2] [init_ms=400]
 */
public class ClassInitWait {

    static long initMs = 400;
    /** Counted down by Slow's initializer as it begins: the touchers start once it runs. */
    static final CountDownLatch IN_INIT = new CountDownLatch(1);
    /** Counted down by each toucher just before it touches Slow: the initializer sleeps only then, so
     *  a toucher slow to start (the JVM's first virtual threads, on a loaded machine: ci48 had none
     *  waiting) still finds the initialization in progress. */
    static CountDownLatch touching = new CountDownLatch(0);

    static class Slow {
        static final long VALUE;

        static {
            IN_INIT.countDown();
            try {
                touching.await();
                Thread.sleep(initMs);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
            VALUE = System.nanoTime();
        }
    }

    /** The frame that touches Slow: getstatic Slow.VALUE at the top of the toucher's stack. */
    static long touch() {
        return Slow.VALUE;
    }

    public static void main(String[] args) throws Exception {
        int touchers = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        initMs = args.length > 1 ? Long.parseLong(args[1]) : 400;
        System.out.println("java.version = " + System.getProperty("java.version"));
        WarmUp.carriersThenGate("ClassInitWait");
        // the initializer: a platform thread, so only the touchers hold carriers; they start once it is
        // inside <clinit> (a fixed 50 ms wait for that was a guess a loaded machine could beat, and a
        // toucher would then have run the initializer itself)
        touching = new CountDownLatch(touchers);
        Thread init = Thread.ofPlatform().name("initializer").start(ClassInitWait::touch);
        IN_INIT.await();
        List<Thread> vts = new ArrayList<>();
        long[] sum = new long[1];
        for (int t = 0; t < touchers; t++) {
            vts.add(Thread.ofVirtual().name("toucher-" + t).start(() -> {
                touching.countDown();
                long v = touch();
                synchronized (sum) {
                    sum[0] += v;
                }
            }));
        }
        for (Thread vt : vts) vt.join();
        init.join();
        System.out.println("ClassInitWait: touchers=" + touchers + " init_ms=" + initMs + " done");
    }
}
