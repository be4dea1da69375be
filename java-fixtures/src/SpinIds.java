import java.util.ArrayList;
import java.util.List;

/**
 * Virtual threads that each run Java code on their carrier for spinMs without
 * blocking, parking or pinning: every carrier runs one known virtual thread for
 * the whole time. Each prints "SpinIds vthread ID" before it spins, so a test can
 * check that occupancy names the virtual thread each carrier runs.
 *
 * usage: SpinIds [threads=2] [spinMs=3000]
 */
public class SpinIds {

    static volatile long sink;

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        long spinMs = args.length > 1 ? Long.parseLong(args[1]) : 3000;
        List<Thread> started = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            started.add(Thread.ofVirtual().start(() -> {
                System.out.println("SpinIds vthread " + Thread.currentThread().threadId());
                long end = System.nanoTime() + spinMs * 1_000_000L;
                long x = 0;
                while (System.nanoTime() < end)
                    x += x * 31 + 7;
                sink = x;
            }));
        }
        for (Thread t : started)
            t.join();
        System.out.println("fixture SpinIds done");
    }
}
