import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Virtual threads with hostile or odd names, each pinning once in a native
 * frame (JniSleep.sleepInNative: a NATIVE pin on every JDK): markup that would
 * end or change an HTML page, line and paragraph separators, quotes and
 * backslashes, terminal control characters (ESC, BEL, DEL, a C1 CSI, a line
 * break) and a NUL. Each name is under the agent's 63 bytes (JTHREAD_NAME_MAX).
 * The threads run one after another, so each name is one pin of its own. A
 * first one, "odd-frame", pins longest, below a method named with an ESC and
 * a NUL: sleepMs times (names + 2), the others a twelfth of sleepMs (5 ms at
 * least), so that its one pin outlasts theirs together even when each of them
 * overruns its sleep by 60 ms under load (with 60 ms each, 10 ms did, ASan in
 * a CI run, and the text report's example was theirs).
 *
 * Prints "name: HEX" (the name's UTF-8 bytes) for each name before it starts,
 * so a test reads the names from here instead of keeping a copy, and "odd
 * frame: HEX" for the odd method's name.
 *
 * usage: HostileNames [sleepMs=60]
 * needs -Djava.library.path=<dir containing libvtpinfixture.so>
 */
public class HostileNames {

    static final String[] NAMES = {
        "<!--<script>",
        "</script><script>alert(1)</script>",
        "</script><script>document.title='injected'</script>",
        "]]>",
        "line\u2028separator",
        "paragraph\u2029separator",
        "\"quote'",
        "back\\slash",
        "&amp;",
        "esc\u001b[31mred\u001b[0m",
        "bell\u0007del\u007fcsi\u009b2J",
        "two\nlines",
        "\"quote'\\back\u0000nul",
    };

    /** The method whose name gets an ESC and a NUL (see oddFrame); pins below it. */
    public static class Odd {
        public static void odd_E_frame_N_(long ms) {
            HostileNames.pin(ms);
        }
    }

    /** Public: Odd, from a loader of its own, is in another runtime package than JniSleep. */
    public static void pin(long ms) {
        JniSleep.sleepInNative(ms);
    }

    /** Java source cannot name a method with a control character (javac drops them), a class
     * file can: Odd's bytes with its method's name patched in the constant pool, "E" as ESC
     * and "N" as NUL (C0 80 in a class file's modified UTF-8), defined by a loader of its own. */
    static Class<?> oddFrame() throws Exception {
        byte[] b;
        try (var in = HostileNames.class.getResourceAsStream("HostileNames$Odd.class")) {
            b = in.readAllBytes();
        }
        byte[] from = "odd_E_frame_N_".getBytes(StandardCharsets.US_ASCII);
        byte[] to = {'o', 'd', 'd', '_', 0x1b, '_', 'f', 'r', 'a', 'm', 'e', '_', (byte) 0xc0, (byte) 0x80, '_'};
        int at = -1;
        for (int i = 3; i + from.length <= b.length && at < 0; i++) {
            if (b[i - 3] == 1 && b[i - 2] == 0 && b[i - 1] == from.length
                    && java.util.Arrays.equals(b, i, i + from.length, from, 0, from.length)) {
                at = i;
            }
        }
        if (at < 0) throw new IllegalStateException("no odd_E_frame_N_ in Odd's constant pool");
        byte[] out = new byte[b.length - from.length + to.length];
        System.arraycopy(b, 0, out, 0, at);
        out[at - 1] = (byte) to.length;
        System.arraycopy(to, 0, out, at, to.length);
        System.arraycopy(b, at + from.length, out, at + to.length, b.length - at - from.length);
        ClassLoader loader = new ClassLoader(HostileNames.class.getClassLoader()) {
            {
                defineClass("HostileNames$Odd", out, 0, out.length);
            }
        };
        return Class.forName("HostileNames$Odd", true, loader);
    }

    public static void main(String[] args) throws Exception {
        long sleepMs = args.length > 0 ? Long.parseLong(args[0]) : 60;
        System.out.println("java.version = " + System.getProperty("java.version"));
        HexFormat hex = HexFormat.of();
        List<Thread> done = new ArrayList<>();
        Class.forName("JniSleep"); // its library loaded here, not in the first virtual thread
        // longer than the others together: its stack is the example of the site in the text report
        var odd = oddFrame().getMethod("odd_\u001b_frame_\u0000_", long.class);
        System.out.println("odd frame: " + hex.formatHex(odd.getName().getBytes(StandardCharsets.UTF_8)));
        var failed = new java.util.concurrent.atomic.AtomicReference<Throwable>();
        Thread first = Thread.ofVirtual().name("odd-frame").start(() -> {
            try {
                odd.invoke(null, sleepMs * (NAMES.length + 2));
            } catch (ReflectiveOperationException e) {
                failed.set(e);
            }
        });
        first.join();
        if (failed.get() != null) throw new IllegalStateException("the odd frame did not run", failed.get());
        done.add(first);
        long othersMs = Math.max(5, sleepMs / 12);
        for (String name : NAMES) {
            System.out.println("name: " + hex.formatHex(name.getBytes(StandardCharsets.UTF_8)));
            Thread vt = Thread.ofVirtual().name(name).start(() -> JniSleep.sleepInNative(othersMs));
            vt.join();
            done.add(vt);
        }
        System.out.println("fixture HostileNames done: " + done.size() + " threads");
    }
}
