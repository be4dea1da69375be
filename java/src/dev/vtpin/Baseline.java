package dev.vtpin;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The pin sites a team accepted: the file {@code vtpin run --write-baseline FILE} writes
 * ({@code {"format": "vtpin.baseline/1", "sites": [{"class", "method", "reason", "library",
 * "pins"}, ...]}}, docs/run.md). A pin at one of its sites does not count; its counts are for a whole
 * run, so a test, a part of one, is not held to them.
 */
public final class Baseline {
    public static final String FORMAT = "vtpin.baseline/1";

    private final Set<PinSite> sites;

    private Baseline(Set<PinSite> sites) {
        this.sites = Set.copyOf(sites);
    }

    public Set<PinSite> sites() {
        return sites;
    }

    public boolean accepts(Pin p) {
        return sites.contains(PinSite.of(p));
    }

    /** Reads a baseline file; a file that is not one is an IllegalArgumentException saying why. */
    public static Baseline read(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        Object doc;
        try {
            doc = new Json(text).document();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": not JSON: " + e.getMessage(), e);
        }
        if (!(doc instanceof Map<?, ?> top) || !FORMAT.equals(top.get("format"))
            || !(top.get("sites") instanceof List<?> list)) {
            throw new IllegalArgumentException(file + ": not a vtpin baseline (\"format\": \"" + FORMAT
                                               + "\" and \"sites\" expected)");
        }
        Set<PinSite> sites = new HashSet<>();
        for (Object o : list) {
            if (!(o instanceof Map<?, ?> s) || !(s.get("class") instanceof String c)
                || !(s.get("method") instanceof String m) || !(s.get("reason") instanceof String r)) {
                throw new IllegalArgumentException(file + ": a site without class, method and reason: " + o);
            }
            Object lib = s.get("library");
            sites.add(new PinSite(c, m, r, lib instanceof String l ? l : ""));
        }
        return new Baseline(sites);
    }

    /** Just enough JSON for the file: objects, arrays, strings, numbers, true, false, null. */
    private static final class Json {
        private final String s;
        private int i;

        Json(String s) {
            this.s = s;
        }

        Object document() {
            Object v = value();
            space();
            if (i != s.length()) {
                throw error("text after the document");
            }
            return v;
        }

        private Object value() {
            space();
            if (i >= s.length()) {
                throw error("unexpected end");
            }
            char c = s.charAt(i);
            if (c == '{') {
                return object();
            } else if (c == '[') {
                return array();
            } else if (c == '"') {
                return string();
            } else if (s.startsWith("true", i) || s.startsWith("null", i)) {
                i += 4;
                return s.charAt(i - 4) == 't' ? Boolean.TRUE : null;
            } else if (s.startsWith("false", i)) {
                i += 5;
                return Boolean.FALSE;
            }
            int start = i;
            while (i < s.length() && "+-.eE0123456789".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            if (start == i) {
                throw error("unexpected '" + c + "'");
            }
            return Double.valueOf(s.substring(start, i));
        }

        private Map<String, Object> object() {
            Map<String, Object> m = new LinkedHashMap<>();
            i++;
            space();
            if (peek('}')) {
                return m;
            }
            do {
                space();
                String key = string();
                space();
                expect(':');
                m.put(key, value());
                space();
            } while (peek(','));
            expect('}');
            return m;
        }

        private List<Object> array() {
            List<Object> a = new ArrayList<>();
            i++;
            space();
            if (peek(']')) {
                return a;
            }
            do {
                a.add(value());
                space();
            } while (peek(','));
            expect(']');
            return a;
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (i < s.length() && s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c == '\\' && i < s.length()) {
                    char e = s.charAt(i++);
                    switch (e) {
                        case 'n' -> b.append('\n');
                        case 't' -> b.append('\t');
                        case 'r' -> b.append('\r');
                        case 'b' -> b.append('\b');
                        case 'f' -> b.append('\f');
                        case 'u' -> {
                            if (i + 4 > s.length()) {
                                throw error("a short \\u escape");
                            }
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                            i += 4;
                        }
                        default -> b.append(e);
                    }
                } else {
                    b.append(c);
                }
            }
            expect('"');
            return b.toString();
        }

        private void space() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private boolean peek(char c) {
            if (i < s.length() && s.charAt(i) == c) {
                i++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw error("'" + c + "' expected");
            }
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException(what + " at offset " + i);
        }
    }
}
