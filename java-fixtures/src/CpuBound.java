import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Many short-lived virtual threads doing a pure CPU loop: no blocking, no pins.
 *
 * usage: CpuBound [threads=10000] [iterations=20000]
 */
public class CpuBound {

    static long spin(long seed, int iterations) {
        long x = seed;
        for (int i = 0; i < iterations; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        System.out.println("java.version = " + System.getProperty("java.version"));

        AtomicLong sink = new AtomicLong();
        long start = System.nanoTime();
        try (ExecutorService es = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int t = 0; t < threads; t++) {
                final long seed = t + 1;
                es.submit(() -> { sink.addAndGet(spin(seed, iterations)); });
            }
        }
        long ms = (System.nanoTime() - start) / 1_000_000L;
        System.out.println("CpuBound: threads=" + threads + " iterations=" + iterations
            + " checksum=" + Long.toHexString(sink.get()));
        System.out.println("fixture CpuBound done in " + ms + " ms");
    }
}
