import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;

/**
 * Worst case for anything hooked on virtual-thread mounts.
 *
 * shape=spawn (default): many short virtual threads that do nothing but
 *   Thread.yield(), i.e. unmount and mount again; each mounts (yields + 1) times.
 *   Thread creation and start are part of it (on JDK 21 they are most of it), and
 *   the platform thread submitting them competes with the carriers: on 2 cores its
 *   timings are bimodal from run to run.
 * shape=steady: the same number of mounts from `concurrent` long-lived virtual
 *   threads that only yield: nothing but mount/unmount, much steadier.
 *
 * usage: BenchMountChurn [threads=200000] [yields=10] [warmup=50000] [warmupPasses=2]
 *                        [shape=spawn|steady] [concurrent=16] [idle=0]
 * passes=N: N measured passes, the fastest is reported (less sensitive to other load
 *   on a shared machine; default 1).
 * idle=N: N idle platform threads are started before the first virtual thread. On
 *   JDK 25 each JavaThread takes four consecutive handle slots, so the number of
 *   threads created before the carriers decides whether the two carriers' handles
 *   share a cache line; benchmarks run idle=0 and idle=1 and pool both
 *   (/work/shared/docs/JVMTI-FACTS.md, "thread parity").
 * prints: BENCH workload=mountchurn elapsed_ns=<measured pass> cpu_ns=<process CPU in it> threads=..
 *         yields=.. mounts=.. shape=..
 */
public class BenchMountChurn {

    static long spawn(int threads, int yields) throws Exception {
        LongAdder done = new LongAdder();
        long t0 = System.nanoTime();
        try (ExecutorService es = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int t = 0; t < threads; t++) {
                es.submit(() -> {
                    for (int y = 0; y < yields; y++) Thread.yield();
                    done.increment();
                });
            }
        }
        long ns = System.nanoTime() - t0;
        if (done.sum() != threads) throw new IllegalStateException("lost tasks: " + done.sum());
        return ns;
    }

    static long steady(long mounts, int concurrent) throws Exception {
        CountDownLatch done = new CountDownLatch(concurrent);
        long per = mounts / concurrent;
        long t0 = System.nanoTime();
        for (int c = 0; c < concurrent; c++) {
            Thread.ofVirtual().name("churn-" + c).start(() -> {
                for (long i = 0; i < per; i++) Thread.yield();
                done.countDown();
            });
        }
        done.await();
        return System.nanoTime() - t0;
    }

    static long pass(String shape, int threads, int yields, int concurrent) throws Exception {
        return shape.equals("steady") ? steady((long) threads * (yields + 1), concurrent) : spawn(threads, yields);
    }

    public static void main(String[] args) throws Exception {
        BenchArgs a = new BenchArgs("BenchMountChurn", args, "threads", "yields", "warmup", "warmupPasses",
            "shape", "concurrent", "idle", "passes");
        int threads = a.integer("threads", 200_000);
        int yields = a.integer("yields", 10);
        int warmup = a.integer("warmup", 50_000);
        int passes = a.integer("warmupPasses", 2);
        String shape = a.text("shape", "spawn");
        int concurrent = a.integer("concurrent", 16);
        if (!shape.equals("spawn") && !shape.equals("steady"))
            throw new IllegalArgumentException("BenchMountChurn: shape is spawn or steady, not " + shape);
        for (int i = a.integer("idle", 0); i > 0; i--) {
            Thread t = new Thread(() -> {
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    // exit
                }
            }, "bench-idle-" + i);
            t.setDaemon(true);
            t.start();
        }
        System.out.println("java.version = " + System.getProperty("java.version"));
        for (int p = 0; p < passes; p++) pass(shape, warmup, yields, concurrent);
        long ns = Long.MAX_VALUE, cpu = 0;
        for (int p = a.integer("passes", 1); p > 0; p--) {
            long cpu0 = BenchArgs.cpuNs();
            long t = pass(shape, threads, yields, concurrent);
            long c = BenchArgs.cpuNs() - cpu0;
            if (t < ns) {
                ns = t;
                cpu = c;
            }
        }
        BenchArgs.report("mountchurn", ns, cpu, "threads=" + threads + " yields=" + yields
            + " mounts=" + (long) threads * (yields + 1) + " shape=" + shape);
    }
}
