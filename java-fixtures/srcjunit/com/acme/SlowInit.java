package com.acme;

/** Its static initializer sleeps 20 ms: the virtual thread that first uses it is pinned on every JDK (the VM's
 * call to <clinit> is a VM frame). Once per JVM: one test uses it. */
public final class SlowInit {
    static {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private SlowInit() {}

    public static void touch() {}
}
