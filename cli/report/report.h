/* vtpin report: a recording summarized for a person (text) or a program
 * (JSON, the contract in docs/report-json.md). */
#ifndef VTPIN_CLI_REPORT_H
#define VTPIN_CLI_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "recording.h"

#define REPORT_JSON_SCHEMA "vtpin.report/1"
#define REPORT_TEXT_TOP_DEFAULT 10

struct report_options {
    size_t session;   /* index into recording->sessions */
    size_t top;       /* sites shown; 0: all */
    int full_stacks;  /* text: never elide the bottom of a stack */
    int all_sessions; /* pprof: every session of the file (no --session given) */
};

/* Both return 0, or -errno when writing failed. */
int report_text(FILE *out, const struct recording *r, const struct report_options *o);
int report_json(FILE *out, const struct recording *r, const struct report_options *o);
/* The graphical formats (report_html.c, report_collapsed.c, report_perfetto.c). */
int report_html(FILE *out, const struct recording *r, const struct report_options *o);
int report_collapsed(FILE *out, const struct recording *r, const struct report_options *o);
int report_perfetto(FILE *out, const struct recording *r, const struct report_options *o);
/* Gzipped pprof (report_pprof.c): o->all_sessions, or o->session. */
int report_pprof(FILE *out, const struct recording *r, const struct report_options *o);
/* The same built a session at a time (every session of a file, read with report_plan.each): new,
 * add each session, then write the profile of sessions [from, to) of r. Each 0 or -errno. */
struct report_pprof;
int report_pprof_new(struct report_pprof **out, const char *path);
int report_pprof_add(struct report_pprof *p, const struct recording_session *s);
int report_pprof_write(FILE *out, struct report_pprof *p, const struct recording *r, size_t from, size_t to);
void report_pprof_free(struct report_pprof *p);

/* "java.base/java.lang.Thread.sleep(Thread.java:507)", as the agent's trace
 * prints a frame (without markers). Returns out. */
char *report_format_frame(const struct recording_frame *f, char *out, size_t cap);
/* What pin p waits for, in one line: `blocked by "lock-owner" (platform, sleeping) at
 * Owner.holdLong(Owner.java:9)` (the owner's first frame outside the JDK), `waits for notify on
 * a java.lang.Object`; "" when not recorded. Returns out. */
char *report_blocker_line(const struct recording_session *s, const struct recording_pin *p, char *out, size_t cap);
/* The agent's markers after a frame: " <== monitors:N", and for the culprit
 * frame of a native method " <== native (libfoo.so)". Returns out ("" for none). */
char *report_frame_markers(const struct recording_frame *f, int is_culprit, char *out, size_t cap);
/* All markers after frame i of pin p's stack: those above, with the culprit of
 * an FFM downcall as " <== native (FFM downcall qsort, libc.so.6)" (" <== native
 * (FFM downcall, target unknown)"), of a JNA call as " <== native (JNA usleep,
 * libc.so.6)" (frames_call_marker), " <== upcall" on an upcall stub and
 * " <== blocking operation" on the frame that blocks. Returns out. */
char *report_pin_frame_markers(const struct recording_pin *p, uint32_t i, char *out, size_t cap);

/* The recording at path ("-": standard input) as every report reads it:
 * loaded (recording_load), then report_passes. 0 and *out, or -errno with a
 * one-line message naming the file in err (as recording_load). */
int report_open(const char *path, struct recording **out, char *err, size_t errlen);
/* Given each session of a one-at-a-time load in turn (report_plan.each), loaded and its passes
 * run; 0 or -errno (stops the load, which fails with it). */
typedef int (*report_session_fn)(const struct recording *r, const struct recording_session *s, void *arg);
/* What report_open_plan keeps: as struct recording_plan (recording.h); each gets every session as
 * report_open would have it, its passes run, before it is given back (*out then keeps what a
 * session not kept keeps: Hello, Stats, notices, end: the warnings, the session count). */
struct report_plan {
    size_t keep;
    int skip_occupancy;
    size_t fold_pins;
    int keep_input; /* recording_plan.keep_input: JSON lists a long session's pins reading it again */
    uint64_t max_bytes;
    report_session_fn each;
    void *arg;
    recording_kernel_fn kernel_at_hello; /* recording_plan.kernel_at_hello: vtpin run's collector */
    void *kernel_arg;
};
/* Loads path as plan says, then runs the passes; report_open is its common case. 0 and *out, or
 * -errno with err, as report_open. */
int report_open_plan(const char *path, const struct report_plan *plan, struct recording **out, char *err,
                     size_t errlen);
/* The passes that follow a load, on every session: the kernel view's exact
 * pins after attach (kernel_split_parks), then its timing of blocks
 * (kernel_time_blocks); see kernel_pins.h. For a recording loaded otherwise
 * (recording_load_fd, recording_load_buffer). 0 or -ENOMEM. */
int report_passes(struct recording *r);
/* The same passes on one session. */
int report_session_passes(struct recording_session *s);

/* The subcommand: argv[0] is "report". Returns the exit status. */
int report_main(int argc, char **argv);

#endif
