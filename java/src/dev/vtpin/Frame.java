package dev.vtpin;

/**
 * One frame of a pinned virtual thread's stack.
 *
 * @param className the dotted class name ({@code com.acme.Repo})
 * @param methodName the method's name ({@code save})
 * @param text the frame as vtpin's trace shows it ({@code com.acme.Repo.save(Repo.java:42)})
 */
public record Frame(String className, String methodName, String text) {
    /** {@code Class.method}: what {@code allow} and {@code only} patterns match. */
    public String name() {
        return className + "." + methodName;
    }

    @Override
    public String toString() {
        return text;
    }
}
