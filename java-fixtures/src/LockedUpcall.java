import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * An upcall that sleeps under a native frame while a synchronized frame lower down
 * holds a monitor: synchronized (lock) { JniSleep.sleepInNative(ms) }. The JDK says
 * NATIVE (the native frame is the first pinning frame from the top), not MONITOR.
 * Waits for goFile (when given) so an agent can be attached first.
 *
 * usage: LockedUpcall [threads=2] [rounds=3] [sleepMs=200] [goFile|-]
 * needs -Djava.library.path=<dir containing libvtpinfixture.so>
 */
public class LockedUpcall {

    static void locked(Object lock, long ms) {
        synchronized (lock) {
            JniSleep.sleepInNative(ms);
        }
    }

    public static void main(String[] args) throws Exception { WarmUp.virtualThreads(); // the JDK's one-time work first
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        long sleepMs = args.length > 2 ? Long.parseLong(args[2]) : 200;
        Path go = args.length > 3 && !args[3].equals("-") ? Path.of(args[3]) : null;
        System.out.println("java.version = " + System.getProperty("java.version"));
        Class.forName("JniSleep"); // loaded (and its library) before the virtual threads race for it
        System.out.println("LockedUpcall: ready");
        System.out.flush();
        while (go != null && !Files.exists(go)) Thread.sleep(20);
        List<Thread> vts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            vts.add(Thread.ofVirtual().name("lockedupcall-" + t).start(() -> {
                Object lock = new Object();
                for (int r = 0; r < rounds; r++) locked(lock, sleepMs);
            }));
        }
        for (Thread vt : vts) vt.join();
        System.out.println("LockedUpcall: done");
    }
}
