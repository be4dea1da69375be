package dev.vtpin;

/** Why a virtual thread held its carrier: vtpin's reasons (docs/reasons.md), as the agent names them. */
public enum PinReason {
    UNKNOWN,
    /** Blocked while holding a monitor (JDK 21-23). */
    MONITOR,
    /** A native or VM frame on the stack (every JDK). */
    NATIVE,
    CRITICAL_SECTION,
    /** Blocked entering a monitor (JDK 21-23). */
    MONITOR_ENTER,
    /** Object.wait (JDK 21-23). */
    OBJECT_WAIT,
    /** Asleep in native code that the kernel sees blocking (every JDK). */
    NATIVE_BLOCK,
    /** Waiting in the VM, e.g. for a class another thread initializes (every JDK). */
    VM_BLOCK;

    static PinReason of(String name) {
        try {
            return valueOf(name);
        } catch (IllegalArgumentException e) {
            return UNKNOWN;
        }
    }
}
