import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;

/**
 * CPU-bound virtual threads: each runs an xorshift loop and ends, no blocking,
 * no yields (one mount per virtual thread). Measures what an agent costs code
 * that hardly ever mounts.
 *
 * usage: BenchCpu [threads=20000] [iterations=100000] [warmup=5000]
 * prints: BENCH workload=cpu elapsed_ns=<measured pass> cpu_ns=<process CPU in it> threads=.. iterations=.. checksum=..
 */
public class BenchCpu {

    static long spin(long seed, int iterations) {
        long x = seed;
        for (int i = 0; i < iterations; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    static long pass(int threads, int iterations, LongAdder sink) throws Exception {
        long t0 = System.nanoTime();
        try (ExecutorService es = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int t = 0; t < threads; t++) {
                final long seed = t + 1;
                es.submit(() -> sink.add(spin(seed, iterations)));
            }
        }
        return System.nanoTime() - t0;
    }

    public static void main(String[] args) throws Exception {
        BenchArgs a = new BenchArgs("BenchCpu", args, "threads", "iterations", "warmup");
        int threads = a.integer("threads", 20_000);
        int iterations = a.integer("iterations", 100_000);
        int warmup = a.integer("warmup", 5_000);
        System.out.println("java.version = " + System.getProperty("java.version"));
        LongAdder sink = new LongAdder();
        pass(warmup, iterations, sink);
        long cpu0 = BenchArgs.cpuNs();
        long ns = pass(threads, iterations, sink);
        long cpu = BenchArgs.cpuNs() - cpu0;
        BenchArgs.report("cpu", ns, cpu, "threads=" + threads + " iterations=" + iterations
            + " checksum=" + Long.toHexString(sink.sum()));
    }
}
