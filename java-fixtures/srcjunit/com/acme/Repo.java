package com.acme;

import java.util.concurrent.locks.LockSupport;

/** The application's own code, for @NoPinning(only = "com.acme.*"). */
public final class Repo {
    private static final Object LOCK = new Object();

    private Repo() {}

    /** Parks 20 ms holding a monitor: a MONITOR pin on 21, nothing on 24+. */
    public static void saveLocked() {
        synchronized (LOCK) {
            LockSupport.parkNanos(20_000_000L);
        }
    }
}
