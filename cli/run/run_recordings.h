/* The recordings `vtpin run` judges: found once, when the command is done, then read one at a
 * time (each whole, the run's kernel view joined into it) by every pass that needs them: the
 * baseline's sites, the verdict and the reports, the JUnit cases. The run's memory follows its
 * largest JVM's recording, not every JVM's at once. */
#ifndef VTPIN_CLI_RUN_RECORDINGS_H
#define VTPIN_CLI_RUN_RECORDINGS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "recording.h"

/* Where the run's recordings are. */
struct run_where {
    const char *run_dir, *run_id;
    /* COMMAND loads vtpin itself: its record= (%p as *), the files written since the run started,
     * instead of the run's own jvm-<id>-*.vtp; NULL otherwise */
    const char *own_glob;
    struct timespec started;
    int kernel_view; /* the run's collector has it: its recordings' kernel intervals join the agents' */
    int attached;    /* --attach-on-pin: the collector's recordings of JVMs without an agent of their own */
};

struct run_recording {
    char *path;
    uint64_t size; /* its size when found: every pass reads these bytes (a JVM left running writes on) */
    int own;       /* an agent's own recording; else the run's collector's, of a JVM it attached to */
    int failed;    /* could not be read (said on stderr, counted in unreadable): not judged */
};

struct run_recordings {
    struct run_recording *items;
    size_t n;
    size_t unreadable; /* found but not read, said on stderr */
    /* counted by each run_recordings_load: the agents' sessions read, and those the kernel view
     * reached (zero them before a pass whose count run_recordings_say_kernel says) */
    size_t sessions, joined;
    char kernel_dir[PATH_MAX + 16]; /* the run's collector's recordings; "" when it has no kernel view */
    int every_pin;                  /* the reports list every pin (JSON): read again when summed up */
};

/* The run's recordings: its agents' own, then (attached) the collector's of the JVMs that had no
 * agent at their start. Says on stderr what could not be read, damage, and when there are none.
 * 0, or -ENOMEM. */
int run_recordings_find(const struct run_where *w, struct run_recordings *out);

/* Recording i as the gates and the report read it: report_open, then the run's kernel view joined
 * into an agent's sessions (run_kernel.h). A long session's ended pins are summed up as read
 * (cli/report/pin_groups.h), but for a run with the kernel view (its join reads every pin). 0 and *out, or -errno: said
 * on stderr, counted in unreadable, marked failed (a later pass skips it). */
int run_recordings_load(struct run_recordings *rs, size_t i, struct recording **out);

/* Recording i cannot be judged, why said on stderr: counted in unreadable, never read again. */
void run_recordings_not_judged(struct run_recordings *rs, size_t i, const char *why);

/* How many recordings can be judged (found, and none of their reads failed). */
size_t run_recordings_judged(const struct run_recordings *rs);

/* On stderr, when the kernel view is on and some sessions read since sessions and joined were
 * zeroed did not get it: which. */
void run_recordings_say_kernel(const struct run_recordings *rs);

void run_recordings_free(struct run_recordings *rs);

#endif
