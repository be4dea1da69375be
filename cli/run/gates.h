/* The pass/fail verdict of `vtpin run` over the recordings of every JVM a
 * command started: pins counted, pinned time summed, pins under accepted
 * frames (--allow), at other culprits than --only names and at the sites of a baseline
 * (--baseline, baseline.h) set aside, native blocks flagged, carrier hogs and deadlocks counted;
 * with a baseline, a site not in it or grown past its tolerance fails the run, named.
 * Pure logic. */
#ifndef VTPIN_CLI_GATES_H
#define VTPIN_CLI_GATES_H

#include <stddef.h>
#include <stdint.h>

#include "baseline.h"
#include "recording.h"

struct gate_config {
    int64_t fail_pins;        /* fail when at least this many pins; -1: no gate */
    int64_t fail_pinned_ns;   /* fail when at least this much pinned time; -1: no gate */
    int fail_on_native_block; /* fail on any NATIVE_BLOCK pin */
    uint64_t fail_hogs;       /* fail when at least this many carrier hogs (not allowed); 0: no gate */
    int fail_on_deadlock;     /* fail on any deadlock the agent found live (on in vtpin run) */
    const char **allow;       /* fnmatch patterns on "class.method" of any frame */
    size_t n_allow;
    const char **only; /* --only: fnmatch patterns on the culprit's "class.method"; pins and hogs
                          blamed elsewhere do not count (none: every culprit counts) */
    size_t n_only;
    int count_jdk_pins; /* count pins with only JDK frames too (--count-jdk-pins) */
    /* --baseline: the accepted sites, and the run's own (gates_run_sites) judged against them:
     * a pin at an accepted site within baseline_tolerance_pct does not count */
    const struct baseline *baseline;
    const struct baseline *run_sites;
    int baseline_tolerance_pct; /* -1: pin counts are not compared */
};

struct gate_result {
    uint64_t pins;         /* counted against the gates (not allowed) */
    uint64_t allowed;      /* set aside by --allow */
    uint64_t jdk_internal; /* set aside: every frame is the JDK's own */
    uint64_t not_only;     /* set aside: the culprit is not one --only names (pins and hogs) */
    uint64_t baselined;    /* set aside: at a site of the baseline, within its tolerance */
    size_t sites_failed;   /* sites not in the baseline, or grown past its tolerance */
    uint64_t native_blocks;
    int64_t pinned_ns;       /* of the counted pins (in progress ones up to the end) */
    uint64_t hogs;           /* carrier hogs counted (not allowed) */
    uint64_t hogs_allowed;   /* set aside by --allow (a frame of the hog's stack matches) */
    int64_t hogged_ns;       /* of the counted hogs (in progress ones up to the end) */
    uint64_t deadlocks;      /* found live by the agent (docs/deadlocks.md) */
    char first_deadlock[64]; /* the first one's kind ("" none) */
    int failed;
    char why[4096]; /* one line per failed gate */
};

/* 1 when a frame of the pin's stack matches one of the allow patterns. */
int gates_pin_allowed(const struct gate_config *c, const struct recording_pin *p);

/* 1 when a frame of the hog's stack matches one of the allow patterns: it does not count. */
int gates_hog_allowed(const struct gate_config *c, const struct recording_hog *h);

/* 1 when every frame of the pin's stack is the JDK's own (java., javax., jdk., sun.,
 * com.sun.): the JDK pinned in its own code (poller start-up, class loading,
 * method-handle linkage), nothing the application can change. 0 without a stack. */
int gates_pin_jdk_internal(const struct recording_pin *p);

/* 1 when --only patterns were given and the pin's culprit frame matches none of them (a pin
 * without a culprit frame matches none). */
int gates_pin_not_only(const struct gate_config *c, const struct recording_pin *p);

/* 1 when the pin is at a site of the baseline, which the run's pins there do not outgrow. */
int gates_pin_baselined(const struct gate_config *c, const struct recording_pin *p);

/* 1 when the pin does not count against the gates: allowed, JDK-internal unless those are
 * counted, not blamed where --only says, or baselined. */
int gates_pin_set_aside(const struct gate_config *c, const struct recording_pin *p);

/* The sites of the run's pins that count before a baseline is applied (not allowed, JDK-internal
 * or outside --only) added to out (a recording at a time, or all at once), then sorted: what
 * --write-baseline writes and --baseline judges. 0 or -ENOMEM. */
int gates_run_sites(const struct gate_config *c, struct recording *const *recs, size_t n, struct baseline *out);

/* The verdict over recordings read one at a time (memory follows one JVM's recording, not the
 * run's): gates_begin, gates_count for each recording, then gates_judge, which says in out->why
 * which gates failed. */
void gates_begin(struct gate_result *out);
/* 0, or -ENOMEM (the recording is not counted: the caller counts it as not judged). */
int gates_count(const struct gate_config *c, const struct recording *r, struct gate_result *out);
void gates_judge(const struct gate_config *c, struct gate_result *out);
/* The same over recs[0..n) at once. */
void gates_evaluate(const struct gate_config *c, struct recording *const *recs, size_t n, struct gate_result *out);

/* What the run could not judge fails it: JVMs of the command still running
 * when the run stopped waiting for them (waited_ns after the command exited),
 * recordings of this run it could not read, a --baseline it could not apply
 * (no_baseline: out of memory for the run's pin sites; judged without it, a
 * new site would pass unseen). */
void gates_unjudged(struct gate_result *out, size_t running_jvms, int64_t waited_ns, size_t unreadable,
                    int no_baseline);

/* The run's exit status: 128+N when signal N stopped it; else CLI_EXIT_GATE
 * when a gate failed; else COMMAND's own status when it failed; else
 * CLI_EXIT_NOTHING_JUDGED when no JVM was judged (judged: the recordings
 * read); else 0. */
int gates_exit_status(const struct gate_result *g, size_t judged, int command_status, int stop_signal);

#endif
