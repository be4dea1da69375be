package dev.vtpin;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which pins count, as {@code vtpin run} decides: the JDK's own pins never do; a pin with a
 * frame matching an {@code allow} pattern does not; with {@code only} patterns, only a pin whose
 * culprit matches one does; with {@code reasons}, only a pin of one of them does. Patterns are
 * fnmatch patterns on {@code Class.method} ({@code com.acme.*}, {@code *.Legacy.load}), where
 * {@code *} also crosses dots.
 */
public final class PinRule {
    private final List<Pattern> allow;
    private final List<Pattern> only;
    private final Set<PinReason> reasons;

    public PinRule(List<String> allow, List<String> only, Set<PinReason> reasons) {
        this.allow = compile(allow);
        this.only = compile(only);
        this.reasons = Set.copyOf(reasons);
    }

    /** The pins that count, in order. */
    public List<Pin> counted(List<Pin> pins) {
        List<Pin> out = new ArrayList<>();
        for (Pin p : pins) {
            if (counts(p)) {
                out.add(p);
            }
        }
        return out;
    }

    public boolean counts(Pin p) {
        if (p.jdkInternal()) {
            return false;
        }
        if (!reasons.isEmpty() && !reasons.contains(p.reason())) {
            return false;
        }
        for (Frame f : p.stack()) {
            if (matches(allow, f)) {
                return false;
            }
        }
        return only.isEmpty() || p.culprit().map(f -> matches(only, f)).orElse(false);
    }

    private static boolean matches(List<Pattern> patterns, Frame f) {
        String name = f.name();
        for (Pattern p : patterns) {
            if (p.matcher(name).matches()) {
                return true;
            }
        }
        return false;
    }

    private static List<Pattern> compile(List<String> globs) {
        List<Pattern> out = new ArrayList<>();
        for (String g : globs) {
            out.add(glob(g));
        }
        return out;
    }

    /** fnmatch(3) without flags: *, ? and [...] ([!...] negates); a backslash quotes. */
    static Pattern glob(String glob) {
        StringBuilder re = new StringBuilder();
        for (int i = 0; i < glob.length(); i++) {
            char c = glob.charAt(i);
            if (c == '*') {
                re.append(".*");
            } else if (c == '?') {
                re.append('.');
            } else if (c == '[' && glob.indexOf(']', i + 2) > 0) {
                int end = glob.indexOf(']', i + 2);
                String set = glob.substring(i + 1, end);
                re.append('[');
                if (set.startsWith("!")) {
                    re.append('^');
                    set = set.substring(1);
                }
                re.append(set.replace("\\", "\\\\").replace("[", "\\["));
                re.append(']');
                i = end;
            } else if (c == '\\' && i + 1 < glob.length()) {
                re.append(Pattern.quote(String.valueOf(glob.charAt(++i))));
            } else {
                re.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(re.toString(), Pattern.DOTALL);
    }
}
