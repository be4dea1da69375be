import java.util.ArrayList;
import java.util.List;

/**
 * Virtual threads that hold their carriers by computing, with nothing pinned:
 * - spin: each computes for runMs without unmounting (a carrier hog; in spin()).
 * - yield: each computes in short slices with Thread.yield between them for runMs, more
 *   threads than carriers: each unmounts at every slice, and none is a hog (the JDK may hand a
 *   yielder its carrier straight back while the others wait: only counted mounts show the yields).
 * - sleep: each computes in short slices with a 1 ms sleep between them: it unmounts each
 *   time, and none is a hog.
 * - yieldwork: as yield, but each slice computes for 2 ms: a sample rarely finds the carrier
 *   between the unmount and the mount, so without counted mounts a yielder handed its carrier
 *   straight back looks like a hog sample after sample.
 *
 * usage: CarrierHog [--ready] spin|yield|yieldwork|sleep [threads=1] [runMs=600]
 * --ready: says "CarrierHog: ready pid=N" and waits for a line on stdin first (for attach);
 *   after "done" it waits for its stdin to end (a test attaches again, or closes it at once).
 */
public class CarrierHog {

    static volatile long sink;

    /** Computes for about ms without a call that could unmount. */
    static long spin(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L, x = 1;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++)
                x = x * 6364136223846793005L + 1442695040888963407L; // <== the hog computes here
        }
        return x;
    }

    static void slices(long ms, boolean yield, long sliceMs) throws InterruptedException {
        long end = System.nanoTime() + ms * 1_000_000L;
        while (System.nanoTime() < end) {
            sink += spin(sliceMs);
            if (yield)
                Thread.yield();
            else
                Thread.sleep(1);
        }
    }

    public static void main(String[] args) throws Exception {
        boolean ready = args.length > 0 && args[0].equals("--ready");
        if (ready)
            args = java.util.Arrays.copyOfRange(args, 1, args.length);
        String mode = args.length > 0 ? args[0] : "spin";
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        long runMs = args.length > 2 ? Long.parseLong(args[2]) : 600;
        System.out.println("java.version = " + System.getProperty("java.version"));
        WarmUp.virtualThreads();
        // main (a platform thread: no pin) links slices' calls first, so that the virtual threads do
        // not race to resolve them: under load one waited 64 ms in the JVM for another's resolution
        // of Thread.yield, a VM_BLOCK of the JDK's own linkage, not of the code under test
        boolean yield = mode.startsWith("yield");
        long sliceMs = mode.equals("yieldwork") ? 2 : 0;
        if (!mode.equals("spin"))
            slices(5, yield, sliceMs);
        java.io.BufferedReader stdin = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
        if (ready) {
            System.out.println("CarrierHog: ready pid=" + ProcessHandle.current().pid());
            System.out.flush();
            stdin.readLine();
        }
        List<Thread> vts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            vts.add(Thread.ofVirtual().name(mode + "-" + t).start(() -> {
                try {
                    if (mode.equals("spin"))
                        sink += spin(runMs);
                    else
                        slices(runMs, yield, sliceMs);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }));
        }
        for (Thread vt : vts) vt.join();
        System.out.println("CarrierHog: mode=" + mode + " threads=" + threads + " run_ms=" + runMs + " done");
        System.out.flush();
        if (ready)
            while (stdin.readLine() != null) { }
    }
}
