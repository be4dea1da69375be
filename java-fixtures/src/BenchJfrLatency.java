import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingStream;

/**
 * JFR's side of bench/run.sh's detection-latency comparison: PinTimer's pins
 * (same stamps, same pinning code), with an in-process RecordingStream on
 * jdk.VirtualThreadPinned (threshold 0, stack traces, as java-fixtures/pin.jfc)
 * that notes System.nanoTime() when each event is delivered. JFR commits the
 * event when the pin ends and delivers it at the stream's next flush.
 *
 * Events are matched to pins by thread name when JFR gives one, else by start
 * time: on JDK 21 the stream's events carry a null eventThread for virtual
 * threads after the first flush, so an event is the pin whose wall-clock stamp
 * is nearest its startTime (within 10 ms; pins are sleepMs apart), among events
 * lasting at least sleepMs / 2 (JDK-internal pins are short).
 *
 * usage: BenchJfrLatency [--native] [count=40] [sleepMs=50] [timeoutMs=15000]
 * prints per pin:
 *   JFRLAT seq=<i> start_nanotime=<before the pin> end_nanotime=<after it>
 *          delivered_nanotime=<event delivered, or -1> jfr_duration_ns=<event's duration>
 *          jfr_start_skew_ns=<event startTime - our wall-clock stamp> matched_by=name|time|-
 * --native needs -Djava.library.path=<dir containing libvtpinfixture.so>
 */
public class BenchJfrLatency {

    static final Object LOCK = new Object();

    record Delivery(long deliveredNanos, long durationNs, long startEpochNs, String name) {}

    static long epochNs(Instant i) {
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }

    public static void main(String[] args) throws Exception {
        boolean nativeMode = false;
        int count = 40;
        long sleepMs = 50, timeoutMs = 15000;
        int pos = 0;
        for (String a : args) {
            if (a.equals("--native")) { nativeMode = true; continue; }
            if (pos == 0) count = Integer.parseInt(a);
            else if (pos == 1) sleepMs = Long.parseLong(a);
            else if (pos == 2) timeoutMs = Long.parseLong(a);
            pos++;
        }
        System.out.println("java.version = " + System.getProperty("java.version"));
        if (nativeMode) Class.forName("JniSleep");

        ConcurrentLinkedQueue<Delivery> got = new ConcurrentLinkedQueue<>();
        try (RecordingStream rs = new RecordingStream()) {
            rs.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            rs.onEvent("jdk.VirtualThreadPinned", (RecordedEvent e) -> {
                long now = System.nanoTime();
                RecordedThread t = e.getThread();
                String name = t == null ? null : t.getJavaName();
                got.add(new Delivery(now, e.getDuration().toNanos(), epochNs(e.getStartTime()), name));
            });
            rs.startAsync();

            long[] start = new long[count], end = new long[count], epoch = new long[count];
            final boolean nat = nativeMode;
            final long ms = sleepMs;
            for (int i = 0; i < count; i++) {
                final int seq = i;
                Thread vt = Thread.ofVirtual().name("pintimer-" + i).start(() -> {
                    try {
                        Instant now = Instant.now();
                        epoch[seq] = now.getEpochSecond() * 1_000_000_000L + now.getNano();
                        start[seq] = System.nanoTime();
                        if (nat) {
                            JniSleep.sleepInNative(ms);
                        } else {
                            synchronized (LOCK) {
                                Thread.sleep(ms);       // <== pinned on JDK 21
                            }
                        }
                        end[seq] = System.nanoTime();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                vt.join();
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            Delivery[] match = new Delivery[count];
            String[] how = new String[count];
            while (System.nanoTime() < deadline) {
                List<Delivery> all = new ArrayList<>(got);
                int matched = 0;
                for (int i = 0; i < count; i++) {
                    match[i] = null;
                    long best = Long.MAX_VALUE;
                    for (Delivery d : all) {
                        if (d.durationNs() < TimeUnit.MILLISECONDS.toNanos(ms) / 2) continue;
                        if (d.name() != null) {
                            if (d.name().equals("pintimer-" + i)) { match[i] = d; how[i] = "name"; break; }
                            continue;
                        }
                        long skew = Math.abs(d.startEpochNs() - epoch[i]);
                        if (skew < TimeUnit.MILLISECONDS.toNanos(10) && skew < best) {
                            best = skew;
                            match[i] = d;
                            how[i] = "time";
                        }
                    }
                    if (match[i] != null) matched++;
                }
                if (matched == count) break;
                Thread.sleep(10);
            }
            for (int i = 0; i < count; i++) {
                Delivery d = match[i];
                System.out.println("JFRLAT seq=" + i + " start_nanotime=" + start[i] + " end_nanotime=" + end[i]
                    + " delivered_nanotime=" + (d == null ? -1 : d.deliveredNanos())
                    + " jfr_duration_ns=" + (d == null ? -1 : d.durationNs())
                    + " jfr_start_skew_ns=" + (d == null ? 0 : d.startEpochNs() - epoch[i])
                    + " matched_by=" + (d == null ? "-" : how[i]));
            }
        }
    }
}
