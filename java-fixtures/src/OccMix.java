import java.util.ArrayList;
import java.util.List;

/**
 * A known mix of carrier time for occupancy tests: rounds of `threads` virtual
 * threads, each pinned asleep for pinMs (Thread.sleep in a JNI upcall: a native
 * frame pins on every JDK), then burning CPU unpinned for cpuMs; between rounds
 * the carriers are idle for gapMs. Runs rounds until durationSec elapsed, says
 * "OccMix: rounds done", then leaves the carriers idle for tailMs before it exits
 * (a quiet moment to compare sources once every event has arrived).
 *
 * usage: OccMix [durationSec=6] [threads=2] [pinMs=30] [cpuMs=20] [gapMs=50] [tailMs=0]
 * needs -Djava.library.path=<dir containing libvtpinfixture.so>
 */
public class OccMix {

    static volatile long sink;

    static void burn(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        long x = 0;
        while (System.nanoTime() < end)
            x += x * 31 + 7;   // CPU work, unpinned
        sink = x;
    }

    public static void main(String[] args) throws Exception { WarmUp.virtualThreads(); // the JDK's one-time work first
        long durationSec = args.length > 0 ? Long.parseLong(args[0]) : 6;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        long pinMs = args.length > 2 ? Long.parseLong(args[2]) : 30;
        long cpuMs = args.length > 3 ? Long.parseLong(args[3]) : 20;
        long gapMs = args.length > 4 ? Long.parseLong(args[4]) : 50;
        long tailMs = args.length > 5 ? Long.parseLong(args[5]) : 0;
        System.out.println("java.version = " + System.getProperty("java.version"));
        System.out.println("OccMix: ready pid=" + ProcessHandle.current().pid());
        System.out.flush();
        long deadline = System.nanoTime() + durationSec * 1_000_000_000L;
        long rounds = 0;
        while (System.nanoTime() < deadline) {
            List<Thread> ts = new ArrayList<>();
            for (int i = 0; i < threads; i++)
                ts.add(Thread.ofVirtual().start(() -> {
                    JniSleep.sleepInNative(pinMs);   // pinned asleep: held
                    burn(cpuMs);                     // on CPU, mounted: busy
                }));
            for (Thread t : ts)
                t.join();
            rounds++;
            Thread.sleep(gapMs);                     // nothing mounted: idle
        }
        System.out.println("OccMix: rounds done, rounds=" + rounds);
        System.out.flush();
        Thread.sleep(tailMs);
    }
}
