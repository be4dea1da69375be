import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs fixtures one after another in the same JVM, under the same agent:
 * {@code Chain JniSleep 2 50 -- Repro} runs JniSleep.main("2", "50") then Repro.main().
 * A test asserting that a fixture does not pin chains a known pinning one first: the
 * pins it must find prove the agent was detecting in the run that found none.
 */
public class Chain {
    public static void main(String[] args) throws Throwable {
        List<List<String>> parts = new ArrayList<>();
        parts.add(new ArrayList<>());
        for (String a : args) {
            if (a.equals("--")) parts.add(new ArrayList<>());
            else parts.get(parts.size() - 1).add(a);
        }
        for (List<String> part : parts) {
            if (part.isEmpty()) throw new IllegalArgumentException("usage: Chain FIXTURE [ARGS] [-- FIXTURE [ARGS]]...");
            String[] rest = part.subList(1, part.size()).toArray(new String[0]);
            System.out.println("Chain: " + part.get(0) + " " + Arrays.toString(rest));
            try {
                Class.forName(part.get(0)).getMethod("main", String[].class).invoke(null, (Object) rest);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }
    }
}
