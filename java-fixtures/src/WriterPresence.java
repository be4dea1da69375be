import java.util.ArrayList;
import java.util.List;

/**
 * Whether the agent's writer is a Java thread while it has nothing to do.
 * Prints whether a JavaThread named "vtpin writer" exists, three times: before any
 * virtual thread, after K JNI-callback pins of sleepMs each (long enough to be
 * reported, so the writer has to take their stacks through JVMTI), and after
 * idleMs without pins.
 *
 * usage: WriterPresence [pins=2] [sleepMs=50] [idleMs=500]
 * prints: WriterPresence phase=<start|pinned|idle> writer=<yes|no>
 * needs -Djava.library.path=<dir containing libvtpinfixture.so>
 */
public class WriterPresence {

    /** The JVM's own thread dump (jcmd Thread.print) lists every JavaThread, agent threads too. */
    static void show(String phase) throws Exception {
        String jcmd = System.getProperty("java.home") + "/bin/jcmd";
        Process p = new ProcessBuilder(jcmd, Long.toString(ProcessHandle.current().pid()), "Thread.print")
            .redirectErrorStream(true).start();
        String dump = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0 || !dump.contains("\"main\""))
            throw new IllegalStateException("jcmd Thread.print failed: " + dump);
        boolean writer = dump.contains("\"vtpin writer\"");
        System.out.println("WriterPresence phase=" + phase + " writer=" + (writer ? "yes" : "no"));
    }

    public static void main(String[] args) throws Exception {
        int pins = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        long sleepMs = args.length > 1 ? Long.parseLong(args[1]) : 50;
        long idleMs = args.length > 2 ? Long.parseLong(args[2]) : 500;
        Thread.sleep(200);
        show("start");
        // the JDK's first timed park of a virtual thread: once, before the pins (under load the second
        // sleeper waited 63 ms for the first's initialization of the timer's task class, and its sleep
        // was over before it parked)
        WarmUp.virtualThreads();
        List<Thread> vts = new ArrayList<>();
        for (int i = 0; i < pins; i++)
            vts.add(Thread.ofVirtual().name("presence-" + i).start(() -> JniSleep.sleepInNative(sleepMs)));
        for (Thread vt : vts) vt.join();
        show("pinned");
        Thread.sleep(idleMs);
        show("idle");
    }
}
