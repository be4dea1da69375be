package dev.vtpin;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * vtpin from inside the JVM: the pins its agent found, as Java objects.
 *
 * <p>The agent must be loaded ({@code -agentpath:/usr/lib/vtpin/libvtpin.so}); these methods
 * reach it through native methods the JVM binds from the agent's library. Without it, {@link
 * #isLoaded()} is false and the others throw {@link IllegalStateException} naming the option to
 * add, unless {@link #load()} can attach it (with {@code -Djdk.attach.allowAttachSelf=true}).
 *
 * <pre>{@code
 * Mark mark = Vtpin.mark();
 * runTheCode();
 * for (Pin p : Vtpin.pinsSince(mark).list()) System.out.println(p.describe(8));
 * }</pre>
 *
 * <p>The pins are those the agent reports: at least its {@code threshold=} long (1 ms unless
 * set). {@link #pinsSince(Mark)} and {@link #flush()} wait for the agent's writer to take in
 * everything the JVM's threads did before the call (a round of it: tens of microseconds, more
 * under load); call them from a platform thread.
 */
public final class Vtpin {
    /** Where the Debian package and {@code cmake --install} put the agent. */
    public static final String INSTALLED_AGENT = "/usr/lib/vtpin/libvtpin.so";

    private Vtpin() {}

    private static native String version0();

    private static native long threshold0();

    private static native long mark0();

    private static native long evictions0();

    private static native void flush0();

    private static native byte[] pinsSince0(long sinceNanos, long evictionsBefore);

    /** The agent's version, or null when it is not loaded in this JVM. */
    public static String version() {
        try {
            return version0();
        } catch (UnsatisfiedLinkError e) {
            return null;
        }
    }

    /** Whether vtpin's agent is loaded in this JVM. */
    public static boolean isLoaded() {
        return version() != null;
    }

    /** What to do to have the agent, in one message. */
    public static String notLoadedMessage() {
        return "vtpin's agent is not loaded in this JVM: start it with -agentpath:" + agentPath()
               + " (in Maven, Surefire's <argLine>; in Gradle, test { jvmArgs }), or with"
               + " -Djdk.attach.allowAttachSelf=true for it to attach itself";
    }

    /** The agent to load: -Dvtpin.agent, else $VTPIN_AGENT, else the installed one. */
    public static String agentPath() {
        String p = System.getProperty("vtpin.agent");
        if (p == null || p.isEmpty()) {
            p = System.getenv("VTPIN_AGENT");
        }
        return p == null || p.isEmpty() ? INSTALLED_AGENT : p;
    }

    /**
     * Makes sure the agent is loaded: when it is not and this JVM allows attaching to itself
     * ({@code -Djdk.attach.allowAttachSelf=true}), attaches {@link #agentPath()} with {@code
     * -Dvtpin.options} as its options.
     *
     * @throws IllegalStateException when it is not loaded and could not be
     */
    public static synchronized void load() {
        if (isLoaded()) {
            return;
        }
        if (!Boolean.getBoolean("jdk.attach.allowAttachSelf")) {
            throw new IllegalStateException(notLoadedMessage());
        }
        String path = agentPath();
        if (!Files.isReadable(Path.of(path))) {
            throw new IllegalStateException(notLoadedMessage() + " (and " + path + " is not there to attach)");
        }
        try {
            // by reflection: a runtime without jdk.attach still runs the rest
            Class<?> vm = Class.forName("com.sun.tools.attach.VirtualMachine");
            Object self = vm.getMethod("attach", String.class)
                              .invoke(null, Long.toString(ProcessHandle.current().pid()));
            try {
                vm.getMethod("loadAgentPath", String.class, String.class)
                    .invoke(self, path, System.getProperty("vtpin.options", ""));
            } finally {
                vm.getMethod("detach").invoke(self);
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new IllegalStateException(notLoadedMessage() + " (attaching " + path + " failed: " + cause + ")",
                                            cause);
        }
        if (!isLoaded()) {
            throw new IllegalStateException(notLoadedMessage() + " (" + path + " attached, but not found after)");
        }
    }

    private static void requireLoaded() {
        if (!isLoaded()) {
            throw new IllegalStateException(notLoadedMessage());
        }
    }

    /** The agent's threshold: shorter pins are counted, not reported, so never seen here. */
    public static Duration threshold() {
        requireLoaded();
        long ns = threshold0();
        if (ns < 0) {
            throw new IllegalStateException("vtpin's agent is loaded but not detecting (stopped, or it failed to"
                                            + " start: see its log)");
        }
        return Duration.ofNanos(ns);
    }

    /** Marks now: {@link #pinsSince(Mark)} then gives the pins that start from here on. */
    public static Mark mark() {
        requireLoaded();
        long nanos = mark0();
        return new Mark(nanos, evictions0());
    }

    /** Waits until the agent has taken in everything the JVM's threads did before this call. */
    public static void flush() {
        requireLoaded();
        flush0();
    }

    /**
     * The pins that started at or after {@code mark}: those that ended, then those still in
     * progress (as far as they lasted). Flushes first, so a pin that ended before this call is
     * in it.
     */
    public static Pins pinsSince(Mark mark) {
        requireLoaded();
        byte[] records = pinsSince0(mark.nanos(), mark.evictions());
        return parse(new String(records, StandardCharsets.UTF_8), mark.nanos());
    }

    static Pins parse(String text, long sinceNanos) {
        List<Pin> pins = new ArrayList<>();
        long dropped = 0;
        String[] head = null;
        List<Frame> frames = new ArrayList<>();
        for (String line : text.split("\n")) {
            String[] f = line.split("\t", -1);
            if (f[0].equals("pin") && f.length >= 14) {
                add(pins, head, frames, sinceNanos);
                head = f;
                frames = new ArrayList<>();
            } else if (f[0].equals("frame") && f.length >= 4 && head != null) {
                frames.add(new Frame(f[1], f[2], f[3]));
            } else if (f[0].equals("dropped") && f.length >= 2) {
                dropped = Long.parseLong(f[1]);
            }
        }
        add(pins, head, frames, sinceNanos);
        return new Pins(List.copyOf(pins), dropped);
    }

    private static void add(List<Pin> pins, String[] f, List<Frame> frames, long sinceNanos) {
        if (f == null) {
            return;
        }
        long start = Long.parseLong(f[3]);
        if (start < sinceNanos) {
            return;
        }
        long duration = Long.parseLong(f[4]);
        boolean inProgress = duration < 0;
        if (inProgress) {
            duration = Math.max(0, System.nanoTime() - start); // both CLOCK_MONOTONIC on Linux
        }
        pins.add(new Pin(Long.parseLong(f[1]), PinReason.of(f[2]), start, Duration.ofNanos(duration), inProgress,
                         Long.parseLong(f[5]), f[6], f[7], f[8].equals("jdk"), Integer.parseInt(f[9]),
                         f[10].equals("1"), f[11], f[12], f[13], List.copyOf(frames)));
    }
}
