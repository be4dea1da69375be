import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Virtual threads stalled inside the JVM by the GC, not by anything they wait for: a platform
 * thread holds a JNI critical region (the GC locker) while virtual threads allocate, so on
 * JDK 21 (G1 before region pinning) the allocation that needs a GC waits in the JVM until the
 * region ends. They stall at `new Chunk`, a class initialized long before: a stall every thread
 * meets, as at a safepoint, never a pin of their own.
 *
 * usage: GcStall [rounds=3] [holdMs=400] [threads=2] [goFile|-]
 * With goFile, its carriers start first (a collector can follow them), then it prints
 * "GcStall: ready" and waits for goFile to exist.
 * needs -Djava.library.path=<dir containing libvtpinfixture.so>; run with a small heap
 * (-Xmx64m) so that a GC is needed within each region.
 */
public class GcStall {

    static {
        System.loadLibrary("vtpinfixture");
    }

    /** Holds array's critical region for ms (sleeping in C). */
    static native void holdCritical(byte[] array, long ms);

    /** True while holdCritical holds its region. */
    static native boolean criticalHeld();

    /** Eight longs: an object of 80 bytes or so, so that allocating many fills the young generation. */
    static final class Chunk {
        long a, b, c, d, e, f, g, h;
    }

    static volatile Object sink;

    /** Allocates until the region ends: the allocation that needs a GC stalls until then. */
    static long churn() {
        long made = 0;
        Chunk keep = null;
        while (criticalHeld()) {
            for (int i = 0; i < 10_000; i++) {
                Chunk c = new Chunk();
                c.a = made++;
                keep = c;
            }
            sink = keep;
        }
        return made;
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        long holdMs = args.length > 1 ? Long.parseLong(args[1]) : 400;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        String go = args.length > 3 ? args[3] : "-";
        System.out.println("java.version = " + System.getProperty("java.version"));
        sink = new Chunk(); // Chunk is initialized here, before any virtual thread runs
        // The virtual threads' way through the executor, once and alone (no region held: churn returns at
        // once), so that the rounds link and initialize nothing: two virtual threads meeting a class not
        // yet linked wait for its initialization lock, a held sleep in no pin (ci47: 3.8 ms in
        // monitor_enter under ASan, and a notice of unexplained held time)
        try (ExecutorService es = Executors.newVirtualThreadPerTaskExecutor()) {
            es.submit(GcStall::churn).get();
        }
        if (!go.equals("-")) {
            List<Thread> warm = new ArrayList<>();
            for (int t = 0; t < threads; t++) warm.add(Thread.ofVirtual().start(() -> PinnedBackend.spin(20)));
            for (Thread vt : warm) vt.join();
            System.out.println("GcStall: ready");
            System.out.flush();
            PinnedBackend.awaitGo(go);
        }
        byte[] pinned = new byte[16];
        long made = 0;
        for (int r = 0; r < rounds; r++) {
            Thread holder = Thread.ofPlatform().name("critical-holder").start(() -> holdCritical(pinned, holdMs));
            while (!criticalHeld()) Thread.onSpinWait();
            List<java.util.concurrent.Future<Long>> results = new ArrayList<>();
            try (ExecutorService es = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int t = 0; t < threads; t++) results.add(es.submit(GcStall::churn));
            }
            holder.join();
            for (var f : results) made += f.get();
        }
        System.out.println("GcStall: rounds=" + rounds + " holdMs=" + holdMs + " made=" + made);
        System.out.println("fixture GcStall done");
    }
}
