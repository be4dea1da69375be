import java.util.HashMap;
import java.util.Map;

/**
 * key=value arguments of the Bench* programs (bench/): unknown keys are refused
 * so a typo in bench/run.sh does not silently measure the default.
 */
final class BenchArgs {
    private final Map<String, String> values = new HashMap<>();
    private final String program;

    BenchArgs(String program, String[] args, String... keys) {
        this.program = program;
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq <= 0) throw usage("expected key=value, got '" + a + "'", keys);
            String k = a.substring(0, eq);
            boolean known = false;
            for (String key : keys) known |= key.equals(k);
            if (!known) throw usage("unknown key '" + k + "'", keys);
            values.put(k, a.substring(eq + 1));
        }
    }

    private IllegalArgumentException usage(String why, String[] keys) {
        return new IllegalArgumentException(program + ": " + why + " (keys: " + String.join(", ", keys) + ")");
    }

    int integer(String key, int dflt) {
        String v = values.get(key);
        return v == null ? dflt : Integer.parseInt(v);
    }

    long number(String key, long dflt) {
        String v = values.get(key);
        return v == null ? dflt : Long.parseLong(v);
    }

    String text(String key, String dflt) {
        String v = values.get(key);
        return v == null ? dflt : v;
    }

    private static final com.sun.management.OperatingSystemMXBean OS =
        (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();

    /** CPU time of the whole process (every thread, the agent's too), in ns. */
    static long cpuNs() {
        return OS.getProcessCpuTime();
    }

    /** The one machine-readable line bench/run.sh reads: wall and process CPU time of the measured part. */
    static void report(String workload, long elapsedNs, long cpuNs, String extra) {
        System.out.println("BENCH workload=" + workload + " elapsed_ns=" + elapsedNs + " cpu_ns=" + cpuNs
            + (extra.isEmpty() ? "" : " " + extra));
        System.out.flush();
    }
}
