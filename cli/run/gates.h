/* The pass/fail verdict of `vtpin run` over the recordings of every JVM a
 * command started: pins counted, pinned time summed, pins under accepted
 * frames (--allow) set aside, native blocks flagged, carrier hogs and deadlocks counted.
 * Pure logic. */
#ifndef VTPIN_CLI_GATES_H
#define VTPIN_CLI_GATES_H

#include <stddef.h>
#include <stdint.h>

#include "recording.h"

struct gate_config {
    int64_t fail_pins;        /* fail when at least this many pins; -1: no gate */
    int64_t fail_pinned_ns;   /* fail when at least this much pinned time; -1: no gate */
    int fail_on_native_block; /* fail on any NATIVE_BLOCK pin */
    uint64_t fail_hogs;       /* fail when at least this many carrier hogs (not allowed); 0: no gate */
    int fail_on_deadlock;     /* fail on any deadlock the agent found live (on in vtpin run) */
    const char **allow;       /* fnmatch patterns on "class.method" of any frame */
    size_t n_allow;
    int count_jdk_pins; /* count pins with only JDK frames too (--count-jdk-pins) */
};

struct gate_result {
    uint64_t pins;         /* counted against the gates (not allowed) */
    uint64_t allowed;      /* set aside by --allow */
    uint64_t jdk_internal; /* set aside: every frame is the JDK's own */
    uint64_t native_blocks;
    int64_t pinned_ns;     /* of the counted pins (in progress ones up to the end) */
    uint64_t hogs;         /* carrier hogs counted (not allowed) */
    uint64_t hogs_allowed; /* set aside by --allow (a frame of the hog's stack matches) */
    int64_t hogged_ns;     /* of the counted hogs (in progress ones up to the end) */
    uint64_t deadlocks;    /* found live by the agent (docs/deadlocks.md) */
    int failed;
    char why[768]; /* one line per failed gate */
};

/* 1 when a frame of the pin's stack matches one of the allow patterns. */
int gates_pin_allowed(const struct gate_config *c, const struct recording_pin *p);

/* 1 when a frame of the hog's stack matches one of the allow patterns: it does not count. */
int gates_hog_allowed(const struct gate_config *c, const struct recording_hog *h);

/* 1 when every frame of the pin's stack is the JDK's own (java., javax., jdk., sun.,
 * com.sun.): the JDK pinned in its own code (poller start-up, class loading,
 * method-handle linkage), nothing the application can change. 0 without a stack. */
int gates_pin_jdk_internal(const struct recording_pin *p);

/* 1 when the pin does not count against the gates: allowed, or JDK-internal
 * unless those are counted. */
int gates_pin_set_aside(const struct gate_config *c, const struct recording_pin *p);

void gates_evaluate(const struct gate_config *c, struct recording *const *recs, size_t n, struct gate_result *out);

/* What the run could not judge fails it: JVMs of the command still running
 * when the run stopped waiting for them (waited_ns after the command exited),
 * recordings of this run it could not read. */
void gates_unjudged(struct gate_result *out, size_t running_jvms, int64_t waited_ns, size_t unreadable);

/* The run's exit status: 128+N when signal N stopped it; else CLI_EXIT_GATE
 * when a gate failed; else COMMAND's own status when it failed; else
 * CLI_EXIT_NOTHING_JUDGED when no JVM was judged (judged: the recordings
 * read); else 0. */
int gates_exit_status(const struct gate_result *g, size_t judged, int command_status, int stop_signal);

#endif
