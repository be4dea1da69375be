package dev.vtpin;

import java.util.regex.Pattern;

/**
 * Where a pin is, as a baseline names it (docs/run.md, "Baselines"): the culprit's class and method,
 * the reason and, in native code, the library's file name. No line numbers, and a hidden class's
 * generated suffix cut ({@code Foo$$Lambda/0x…} and {@code Foo$$Lambda$12} are {@code Foo$$Lambda},
 * {@code jdk.proxy3.$Proxy12} is {@code jdk.proxy.$Proxy}), so that a site keeps its name across
 * runs, builds and JDKs. A pin without a stack is the site {@code (no stack)} of its reason.
 *
 * @param className the culprit's class, its generated suffixes cut
 * @param method the culprit's method ("" without a stack)
 * @param reason the pin's reason
 * @param library the native library's file name ("" when none)
 */
public record PinSite(String className, String method, String reason, String library) {
    static final String NO_STACK = "(no stack)";
    private static final Pattern NUMBERED = Pattern.compile("(\\$\\$Lambda)\\$\\d+|(\\$Proxy)\\d+|(jdk\\.proxy)\\d+");

    /** The site of a pin. */
    public static PinSite of(Pin p) {
        String library = p.library().substring(p.library().lastIndexOf('/') + 1);
        return p.culprit()
            .map(f -> new PinSite(normalize(f.className()), f.methodName(), p.reason().name(), library))
            .orElse(new PinSite(NO_STACK, "", p.reason().name(), library));
    }

    /** A class name with its generated suffixes cut, as {@code vtpin run} cuts them. */
    public static String normalize(String className) {
        int hidden = className.indexOf("/0x");
        String name = hidden >= 0 ? className.substring(0, hidden) : className;
        return NUMBERED.matcher(name).replaceAll(m -> m.group(1) != null ? "\\$\\$Lambda"
                                                    : m.group(2) != null ? "\\$Proxy" : "jdk.proxy");
    }

    @Override
    public String toString() {
        return (method.isEmpty() ? className : className + "." + method) + " " + reason
               + (library.isEmpty() ? "" : " (" + library + ")");
    }
}
