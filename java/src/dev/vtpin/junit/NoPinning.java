package dev.vtpin.junit;

import dev.vtpin.PinReason;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Fails a test when the pins it caused break the rule: more than {@link #atMost()} pins that
 * count (see {@link dev.vtpin.PinRule}). On a class, every test of it; on a method, that test
 * (the method's annotation wins over its class's).
 *
 * <p>A test caused the pins that started between its start and its end, on any thread. Two
 * tests that run at the same time could not be told apart, so a test with this annotation runs
 * alone: it takes JUnit's global lock read-write, as {@code @Isolated} does, and the other tests
 * wait for it even with parallel execution on.
 *
 * <p>Needs vtpin's agent in the test JVM ({@code -agentpath:/usr/lib/vtpin/libvtpin.so}); without
 * it the test fails with a message naming the option (or, with {@code
 * -Dvtpin.junit.requireAgent=false}, is skipped).
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@ExtendWith(VtpinExtension.class)
@ResourceLock(value = "org.junit.platform.engine.support.hierarchical.ExclusiveResource.GLOBAL_KEY",
              mode = ResourceAccessMode.READ_WRITE)
public @interface NoPinning {
    /** Pins with a frame matching one of these (fnmatch on {@code Class.method}) do not count. */
    String[] allow() default {};

    /** When given, only pins whose culprit frame matches one of these count ({@code com.acme.*}). */
    String[] only() default {};

    /** How many pins that count the test may cause. */
    int atMost() default 0;

    /** When given, only pins of these reasons count. */
    PinReason[] reasons() default {};

    /**
     * A baseline file ({@code vtpin run --write-baseline FILE}, relative to the working directory):
     * pins at its sites do not count, only new ones do. Empty: the system property {@code
     * vtpin.baseline}, if set.
     */
    String baseline() default "";
}
