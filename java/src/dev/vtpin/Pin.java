package dev.vtpin;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A pin the agent reported: a virtual thread that held its carrier for at least the agent's
 * {@code threshold=}.
 *
 * @param id the agent's pin number (the trace's and the recording's {@code pin #N})
 * @param reason why it held the carrier
 * @param startNanos when it started, on the agent's clock (compare with {@link Mark#nanos()})
 * @param duration how long it lasted; for a pin in progress, how long it has lasted so far
 * @param inProgress it had not ended when asked
 * @param virtualThreadId the pinned virtual thread's {@code threadId()}
 * @param virtualThreadName its name ("" when it has none)
 * @param carrierName its carrier's name
 * @param jdkInternal every frame of its stack is the JDK's own (class loading, the JDK's
 *     pollers): no change to the application removes it, and no rule counts it
 * @param culpritIndex the index in {@code stack} of the frame to blame, -1 when unknown
 * @param truncated the stack was cut at the agent's {@code depth=}
 * @param jdkReason the JDK's own words for it, as JFR's pinnedReason ("" when none)
 * @param blocker what it waits for, in one line ("" when not looked up or nothing known)
 * @param library the native library of a native culprit ("" otherwise)
 * @param stack its frames, top first (empty when it could not be taken)
 */
public record Pin(long id, PinReason reason, long startNanos, Duration duration, boolean inProgress,
                  long virtualThreadId, String virtualThreadName, String carrierName, boolean jdkInternal,
                  int culpritIndex, boolean truncated, String jdkReason, String blocker, String library,
                  List<Frame> stack) {

    /** The frame vtpin blames: the application's frame that holds the carrier. */
    public Optional<Frame> culprit() {
        return culpritIndex >= 0 && culpritIndex < stack.size() ? Optional.of(stack.get(culpritIndex))
                                                                 : Optional.empty();
    }

    /**
     * Several lines: reason, duration, thread, culprit, blocker, then the top {@code frames} frames of
     * its stack and at least those down to two below the culprit (none when {@code frames} is 0).
     */
    public String describe(int frames) {
        StringBuilder b = new StringBuilder();
        b.append(reason).append(' ').append(String.format("%.1f ms", duration.toNanos() / 1e6));
        if (inProgress) {
            b.append(" (in progress)");
        }
        b.append(" on ").append(virtualThreadName.isEmpty() ? "#" + virtualThreadId : virtualThreadName);
        culprit().ifPresent(f -> b.append(" at ").append(f.text()));
        if (!library.isEmpty()) {
            b.append(" <== native (").append(library).append(')');
        }
        if (!jdkReason.isEmpty()) {
            b.append(" [").append(jdkReason).append(']');
        }
        if (!blocker.isEmpty()) {
            b.append("\n      ").append(blocker);
        }
        // at least down to two frames below the culprit: the application's own calls
        int shown = frames <= 0 ? 0 : Math.min(stack.size(), Math.max(frames, culpritIndex + 3));
        for (int i = 0; i < shown; i++) {
            b.append("\n        ").append(stack.get(i).text());
            if (i == culpritIndex) {
                b.append(" <== culprit");
            }
        }
        if (shown > 0 && stack.size() > shown) {
            b.append("\n        ... ").append(stack.size() - shown).append(" more");
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return describe(0);
    }
}
