import java.util.ArrayList;
import java.util.List;

/**
 * NativeBlock's nanosleep block, after the carriers have run and idled: `threads`
 * virtual threads burn CPU for 50 ms (every carrier starts and is announced), the
 * carriers stay idle for warmMs, then `threads` virtual threads each block in
 * nanosleep (C, no pin: the watchdog's NATIVE_BLOCK) for ms.
 *
 * usage: WarmBlock [threads=2] [ms=3000] [warmMs=1000]
 * needs -Djava.library.path=<dir containing libvtpinfixture.so>
 */
public class WarmBlock {

    static volatile long sink;

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        long ms = args.length > 1 ? Long.parseLong(args[1]) : 3000;
        long warmMs = args.length > 2 ? Long.parseLong(args[2]) : 1000;
        System.out.println("java.version = " + System.getProperty("java.version"));
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++)
            ts.add(Thread.ofVirtual().start(() -> {
                long end = System.nanoTime() + 50_000_000L, x = 0;
                while (System.nanoTime() < end)
                    x += x * 31 + 7;
                sink = x;
            }));
        for (Thread t : ts)
            t.join();
        Thread.sleep(warmMs);
        System.out.println("WarmBlock: blocking");
        System.out.flush();
        ts.clear();
        for (int i = 0; i < threads; i++)
            ts.add(Thread.ofVirtual().name("warmblock-" + i).start(() -> NativeBlock.blockInNanosleep(ms)));
        for (Thread t : ts)
            t.join();
        System.out.println("WarmBlock: done");
    }
}
