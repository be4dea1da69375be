package dev.vtpin.junit;

import dev.vtpin.Baseline;
import dev.vtpin.Mark;
import dev.vtpin.Pin;
import dev.vtpin.PinReason;
import dev.vtpin.PinRule;
import dev.vtpin.PinSite;
import dev.vtpin.Pins;
import dev.vtpin.Vtpin;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.AnnotatedElement;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.BeforeTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The extension behind {@link NoPinning}: marks each test's start with {@link Vtpin#mark()} and,
 * at its end, fails it when the pins since break the rule. Usable alone with
 * {@code @ExtendWith(VtpinExtension.class)}: then it only reports the pins (a report entry per
 * test that caused any).
 */
public class VtpinExtension implements BeforeTestExecutionCallback, AfterTestExecutionCallback {
    /** Frames of each pin's stack that a failure message shows. */
    static final int FRAMES_SHOWN = 8;

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(VtpinExtension.class);

    @Override
    public void beforeTestExecution(ExtensionContext context) {
        try {
            Vtpin.load();
        } catch (IllegalStateException e) {
            if (!Boolean.parseBoolean(System.getProperty("vtpin.junit.requireAgent", "true"))) {
                Assumptions.abort("vtpin.junit.requireAgent=false: " + e.getMessage());
            }
            throw e;
        }
        context.getStore(NS).put("mark", Vtpin.mark());
    }

    @Override
    public void afterTestExecution(ExtensionContext context) {
        Mark mark = context.getStore(NS).remove("mark", Mark.class);
        if (mark == null) {
            return;
        }
        Pins pins = Vtpin.pinsSince(mark);
        Optional<NoPinning> rule = ruleOf(context);
        if (!pins.list().isEmpty()) {
            context.publishReportEntry("vtpin.pins", summary(pins.list()));
        }
        if (rule.isEmpty()) {
            return;
        }
        NoPinning r = rule.get();
        PinRule pinRule = new PinRule(Arrays.asList(r.allow()), Arrays.asList(r.only()), reasons(r));
        List<Pin> counted = new ArrayList<>(pinRule.counted(pins.list()));
        Optional<Baseline> baseline = baselineOf(context, r);
        int accepted = 0;
        if (baseline.isPresent()) {
            int before = counted.size();
            counted.removeIf(baseline.get()::accepts);
            accepted = before - counted.size();
        }
        // pins dropped for room: whether they count cannot be told, so no pass is given
        if (counted.size() > r.atMost() || pins.dropped() > 0) {
            throw new AssertionError(message(counted, pins, r, baseline.isPresent() ? accepted : -1));
        }
    }

    /** The method's annotation, else its class's (or an enclosing class's). */
    static Optional<NoPinning> ruleOf(ExtensionContext context) {
        Optional<NoPinning> onMethod = find(context.getTestMethod().orElse(null));
        if (onMethod.isPresent()) {
            return onMethod;
        }
        for (Optional<ExtensionContext> c = Optional.of(context); c.isPresent(); c = c.get().getParent()) {
            Optional<NoPinning> onClass = find(c.get().getTestClass().orElse(null));
            if (onClass.isPresent()) {
                return onClass;
            }
        }
        return Optional.empty();
    }

    private static Optional<NoPinning> find(AnnotatedElement element) {
        return element == null ? Optional.empty() : AnnotationSupport.findAnnotation(element, NoPinning.class);
    }

    private static EnumSet<PinReason> reasons(NoPinning r) {
        EnumSet<PinReason> set = EnumSet.noneOf(PinReason.class);
        set.addAll(Arrays.asList(r.reasons()));
        return set;
    }

    private static String summary(List<Pin> pins) {
        StringBuilder b = new StringBuilder();
        for (Pin p : pins) {
            b.append(b.length() == 0 ? "" : "; ").append(p);
        }
        return b.toString();
    }

    /** The rule's baseline, read once per file for the whole run. */
    private static Optional<Baseline> baselineOf(ExtensionContext context, NoPinning r) {
        String file = r.baseline().isEmpty() ? System.getProperty("vtpin.baseline", "") : r.baseline();
        if (file.isEmpty()) {
            return Optional.empty();
        }
        Path path = Path.of(file).toAbsolutePath();
        return Optional.of(context.getRoot().getStore(NS).getOrComputeIfAbsent("baseline:" + path, k -> {
            try {
                return Baseline.read(path);
            } catch (IOException e) {
                throw new UncheckedIOException("vtpin: cannot read the baseline " + path, e);
            }
        }, Baseline.class));
    }

    /** accepted: pins at the baseline's sites, -1 without a baseline. */
    static String message(List<Pin> counted, Pins pins, NoPinning r, int accepted) {
        StringBuilder b = new StringBuilder();
        b.append("vtpin: this test caused ").append(counted.size()).append(" pin(s) that count, at most ")
            .append(r.atMost()).append(" allowed (@NoPinning)");
        if (pins.dropped() > 0) {
            b.append("; ").append(pins.dropped())
                .append(" pin(s) that ended meanwhile were dropped by the agent (it keeps the last 4096 pins), so no"
                        + " verdict can be given");
        }
        for (Pin p : counted) {
            b.append("\n  pin #").append(p.id());
            if (accepted >= 0) {
                b.append(" (a new site: ").append(PinSite.of(p)).append(')');
            }
            b.append(": ").append(p.describe(FRAMES_SHOWN));
        }
        if (accepted > 0) {
            b.append("\n(").append(accepted).append(" pin(s) at the baseline's sites accepted)");
        }
        int aside = pins.list().size() - counted.size() - Math.max(accepted, 0);
        if (aside > 0) {
            long jdk = pins.list().stream().filter(Pin::jdkInternal).count();
            b.append("\n(").append(aside).append(" other pin(s) set aside: ").append(jdk).append(" the JDK's own, ")
                .append(aside - jdk).append(" by allow, only or reasons)");
        }
        return b.toString();
    }
}
