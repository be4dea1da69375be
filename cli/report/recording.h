/* A recording file loaded into memory.
 *
 * The file is the magic then wire frames (proto/wire.h). Each Hello starts a
 * session with its own id tables; events before any Hello form a session
 * without one. After loading, every reference is resolved: an id that was
 * never defined becomes a placeholder (RECORDING_UNKNOWN) and is counted, so
 * formatters never see a dangling id. Timestamps stay on the agent's
 * monotonic clock; recording_unix_ns converts them.
 *
 * Hostile input: frames over RECORDING_MAX_FRAME are refused, stacks are
 * capped at RECORDING_MAX_FRAMES frames, every count saturates. A file cut
 * in the middle of a frame (or ending in zeros, as a file system leaves a
 * file whose writer died) loads what came before and sets `truncated`.
 * Recordings concatenated (cat a.vtp b.vtp, from a file or a pipe): each
 * magic starts a new segment, and its events a new session. A frame that
 * cannot be read in mid-file (damage) keeps what came before, sets `damaged`
 * and reading goes on at the next magic, if there is one.
 *
 * Memory: a file is mapped and the pages read are given back as the load
 * goes on; a pipe or device is first copied to an unlinked file of its own
 * (TMPDIR, else /tmp), so memory follows the model of what is kept, not the
 * size of what is read (recording_plan). */
#ifndef VTPIN_CLI_RECORDING_H
#define VTPIN_CLI_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "common/table.h"

#include "kernel_stacks.h"
#include "session_defs.h"
#include "session_hello.h"
#include "session_pins.h"
#include "session_stats.h"

#define RECORDING_MAX_FRAME (16u << 20)
#define RECORDING_MAX_FRAMES 8192
#define RECORDING_UNKNOWN "<unknown>"

struct recording_method {
    uint32_t id;
    int defined;            /* 0: a placeholder for an id that was never defined */
    const char *class_name; /* dotted binary name, e.g. java.lang.Thread; never NULL */
    const char *name;       /* never NULL */
    const char *signature;  /* NULL when not recorded (and so on for the next three) */
    const char *source_file;
    const char *library; /* shared object implementing a native method */
    const char *module;
    int is_native;
    int kind; /* enum frame_kind (common/frames_kind.h): from the recording, else from the names */
    /* raw string ids as read */
    uint32_t class_sid, name_sid, signature_sid, source_sid, library_sid, module_sid;
};

struct recording_frame {
    const struct recording_method *method; /* never NULL once loaded */
    uint32_t method_id;
    int32_t line;      /* -1 when unknown */
    int64_t bci;       /* -1 for native frames or when unknown */
    uint32_t monitors; /* monitors this frame held at pin time */
};

struct recording_stack {
    uint32_t id;
    uint32_t count;
    struct recording_frame *frames; /* top frame first */
    int truncated;                  /* the agent (or the loader's cap) cut it */
};

/* enum pin_origin of a pin with this stack (NULL: none), by common/frames_kind.h's one rule. */
int recording_stack_origin(const struct recording_stack *st);
/* Whether a frame is VirtualThread.parkOnCarrierThread: a stack through it is a virtual thread parked on its
 * carrier (after attach, a sampled park). */
int recording_park_frame(const char *class_name, const char *method_name);

#define RECORDING_CHAIN_MAX 8 /* hops of a blocker chain kept per pin (the agent sends up to 3) */

/* What a pin, or a thread on its blocker's chain, waits for and who holds it (PinStart.blocker,
 * Blocker.chain). */
struct recording_hop {
    int what;                 /* a Vtpin__V1__BlockerKind value; 0: none recorded */
    const char *object_class; /* the monitor's, the lock's or the class initialized; NULL when not recorded */
    int has_thread;           /* the owner is known */
    const char *thread_name;  /* NULL when not recorded */
    int64_t thread_id;
    int is_virtual;
    const char *carrier_name; /* a virtual owner's carrier when mounted, else NULL */
    char state[24];           /* "" when not recorded (a copy: pins are copied whole) */
    uint32_t class_sid, name_sid, carrier_sid;
};

/* Who a pin waits for (PinStart.blocker). */
struct recording_blocker {
    struct recording_hop head;           /* what it waits for and who holds it (head.what 0: none) */
    const struct recording_stack *stack; /* the owner's stack at the look, NULL when none */
    uint64_t pin;                        /* the owner's own pin in progress, 0: none */
    uint32_t stack_id;
    /* what the owner itself waits for, hop by hop: the session's blocker_hops [chain_at,
     * chain_at + n_chain) (an index: pins are copied whole) */
    uint32_t chain_at, n_chain;
};

/* The C function that the culprit frame called through an FFM downcall or JNA (PinStart.downcall). */
struct recording_downcall {
    int api;          /* enum native_api (common/frames_kind.h): NATIVE_API_FFM or NATIVE_API_JNA */
    char *symbol;     /* its target, e.g. "qsort"; NULL when unknown */
    char *library;    /* path of the target's shared object; NULL when unknown */
    uint64_t address; /* 0 when unknown */
};

/* What only some pins have, kept apart so that the others do not carry its room (a session's
 * memory follows what its pins hold). Owned by the session (recording_session.extras): a pin
 * copied whole (split, bounded) shares its extra. */
struct recording_pin_extra {
    struct recording_blocker blocker; /* blocker.head.what 0: none */
    int has_downcall;
    struct recording_downcall downcall;
    int unused; /* its pin was summed up (pin_groups.h): the session frees it */
};

struct recording_pin {
    uint64_t id;
    uint64_t seq;             /* its place among the session's pins by start, those summed up counted */
    int64_t start_ns;         /* agent monotonic clock */
    int64_t end_ns;           /* when ended */
    int64_t duration_ns;      /* when ended; never negative */
    int64_t vthread_id;       /* when has_vthread_id */
    uint64_t split_from;      /* 0, or the sampled pin (id) this one was split from by the kernel view */
    int64_t last_asleep_ns;   /* watchdog pins: the last sample that saw it asleep (PinEnd); 0 when not said */
    const char *vthread_name; /* NULL when not recorded */
    const char *carrier_name; /* NULL when not recorded */
    const char *jdk_reason;   /* the JDK's own words (PinStart.jdk_reason); NULL when not recorded */
    const struct recording_stack *stack; /* NULL when not taken or unknown */
    char *blocked_in;                    /* NATIVE_BLOCK: where the kernel said the carrier slept; NULL if not said */
    struct recording_pin_extra *extra;   /* what few pins have (above); NULL: neither; the session's */
    int32_t reason;                      /* a Vtpin__V1__PinReason value (as read: a file may say any) */
    int32_t carrier_tid;                 /* when has_carrier_tid */
    uint32_t culprit;                    /* when has_culprit */
    uint32_t blocking;                   /* the blocking operation, when not the culprit frame (has_blocking) */
    /* raw ids as read */
    uint32_t stack_id, vthread_sid, carrier_sid, jdk_reason_sid, culprit_raw, blocking_raw;
    uint8_t origin; /* enum pin_origin (common/frames_kind.h): the JDK's own or the application's */
    uint8_t ended;
    uint8_t has_vthread_id, has_carrier_tid;
    uint8_t has_culprit;     /* culprit is a valid index into stack */
    uint8_t has_blocking;    /* blocking is a valid index into stack */
    uint8_t timed_by_kernel; /* start and end are the kernel's (split_from, or kernel_time_blocks) */
    uint8_t has_culprit_raw, has_blocking_raw;
    uint8_t late; /* in progress when others were summed up: its end goes to the session's late_ends */
    /* after attach, read in windows (attach_bound_window): its bounds are settled; the model keeps it
     * for a park not settled yet; in progress when a window cut past its start */
    uint8_t bounds_final, bounds_kept, spanned;
    uint8_t park_stack; /* read in windows: enum recording_park_stack, as the definitions read so far tell */
};

/* Whether a pin's stack runs through VirtualThread.parkOnCarrierThread, before the stacks are resolved. */
enum recording_park_stack { RECORDING_PARK_UNASKED, RECORDING_PARK_NO, RECORDING_PARK_YES, RECORDING_PARK_UNKNOWN };

/* A pin's bounds as a window settled them (recording_session.bounds_moved). */
struct recording_pin_bounds {
    uint64_t id;
    int64_t start_ns, end_ns;
};

/* How a pin ended, by its id (recording_session.late_ends). */
struct recording_pin_end {
    uint64_t id;
    int64_t end_ns, duration_ns, last_asleep_ns;
};

/* Ended pins summed up as they were read (pin_groups.h): the earliest of them whole, and what
 * the others add. */
struct recording_pin_group {
    struct recording_pin pin;
    uint64_t count;
    int64_t total_ns, max_ns;
};

/* A carrier hog (HogStart, HogEnd): a virtual thread that stayed mounted and
 * on CPU for at least the agent's hog= without unmounting, nothing pinned, so
 * its carrier was gone as if pinned. The agent finds hogs by sampling the
 * carriers: start_ns is the first sample that saw it running, so a hog's
 * times are accurate to the sample interval. */
struct recording_hog {
    uint64_t id;
    int64_t start_ns; /* agent monotonic clock */
    int ended;
    int64_t end_ns;          /* when ended: the first sample that saw it end */
    int64_t duration_ns;     /* when ended; never negative */
    int64_t last_running_ns; /* when ended: the last sample that saw it running; 0 when not said */
    int has_vthread_id;
    int64_t vthread_id;
    const char *vthread_name; /* NULL when not recorded */
    int has_carrier_tid;
    int32_t carrier_tid;
    const char *carrier_name;            /* NULL when not recorded */
    const struct recording_stack *stack; /* taken while it ran; NULL when not taken or unknown */
    int has_culprit;                     /* culprit is a valid index into stack */
    uint32_t culprit;                    /* its top application frame */
    /* raw ids as read */
    uint32_t stack_id, vthread_sid, carrier_sid, culprit_raw;
    int has_culprit_raw;
};

/* An off-CPU interval of a carrier, written by a collector with the kernel
 * view (KernelInterval); cli/report/kernel_pins.h matches them to pins. */
struct recording_kinterval {
    int32_t carrier_tid;
    int32_t syscall;          /* has_syscall */
    int64_t start_ns, end_ns; /* agent monotonic clock (the host's) */
    int64_t runqueue_ns;
    int64_t vthread_id;       /* has_java: mounted at switch out, 0 none */
    const char *syscall_name; /* NULL when unknown */
    const char *const *stack; /* innermost first; kept once per session (kernel_stacks.h) */
    int state;                /* a Vtpin__V1__KernelState value */
    int java_wait;            /* has_java: a Vtpin__V1__JavaWait value */
    uint8_t n_stack;          /* at most RECORDING_MAX_KSTACK */
    uint8_t has_syscall;
    uint8_t has_java; /* the kernel view read the carrier's JavaThread at switch out */
};                    /* 72 bytes: a long kernel view session keeps millions of them */
#define RECORDING_MAX_KSTACK 128

/* A pin's time on its carrier, [lo, hi). */
struct recording_span {
    int32_t tid;
    int64_t lo, hi;
};

/* One carrier's kernel times (KernelTimes, written by a collector when the connection ended). */
struct recording_ktimes {
    int32_t carrier_tid;
    uint64_t on_cpu_ns, off_cpu_ns, runqueue_ns;
};

/* What the kernel view saw during one pin, joined once (kernel_join.h) before any format
 * reads it. */
struct recording_pin_kernel {
    uint32_t intervals;         /* the carrier's intervals overlapping the pin; 0: none (the rest unset) */
    size_t main;                /* kintervals[main] overlaps it the most */
    int64_t off_cpu_ns;         /* the overlaps, summed */
    int64_t runqueue_ns;        /* those intervals' run-queue time (whole intervals) */
    size_t first_park, n_parks; /* its sleeps: kparks[first_park .. first_park + n_parks) index kintervals */
};

/* One carrier's held time (kernel_held.h), joined once: per ktimes entry, in its order. */
struct recording_held {
    int known;                   /* the kernel view read the carrier's JavaThreads */
    int64_t held_ns, in_pins_ns; /* asleep with a virtual thread mounted; of it, inside pins */
    int has_worst;               /* kintervals[worst]: the sleep most outside every pin */
    size_t worst;
    int64_t worst_outside_ns;
};

struct recording_notice {
    int64_t time_ns; /* agent monotonic clock */
    int severity;    /* a Vtpin__V1__Severity value */
    char *code;
    char *text;
};

/* A carrier thread the agent announced (Carrier event). */
struct recording_carrier {
    int32_t tid;
    const char *name; /* NULL when not recorded */
    uint32_t name_sid;
    int has_start;
    int64_t start_ns;
};

/* Occupancy, as recorded: at time_ns the carrier tid carried vthread_id
 * (0: idle). A Transitions mount/unmount (exact) or one carrier of a
 * CarrierSample (sampled), in file order. */
struct recording_occupancy {
    int64_t time_ns;
    int64_t vthread_id;
    int32_t tid;
};

#define RECORDING_MAX_CARRIERS 4096
#define RECORDING_MAX_OCCUPANCY (8u << 20) /* points kept per session (192 MiB); the rest counted */

struct recording_session {
    int has_hello;
    struct session_hello hello; /* the Hello (proto/session_hello.h); zero before one */
    unsigned parts;  /* files of a rotated recording read as this one session (1 normally; recording_rotated) */
    int rotated_out; /* its latest file ended rotating out (a notice said so): it goes on in a newer file */

    struct recording_pin *pins; /* in the order they started in the file (but those summed up) */
    size_t n_pins;
    /* a long session's ended pins summed up as they were read (recording_plan.fold_pins,
     * pin_groups.h); the summaries read pins and groups together (recording_pin_sums) */
    struct recording_pin_group *pin_groups;
    size_t n_pin_groups;
    uint64_t pins_folded; /* pins summed up into the groups */
    /* the ends of the pins that were in progress when others were summed up (in end order): a second
     * pass over the file (pin_stream.h) lists them in start order without waiting for their end */
    struct recording_pin_end *late_ends;
    size_t n_late_ends, late_ends_cap;
    /* after attach: the pins whose bounds the windows (or the last pass) moved, by id once loaded, for a
     * second pass over the file, which reads them as written (attach_bounds.h) */
    struct recording_pin_bounds *bounds_moved;
    size_t n_bounds_moved, bounds_moved_cap;
    /* the kernel view's intervals began after pins were summed, in a load without fold_kernel (none of
     * the report's): not joined to those */
    int kernel_after_fold;
    /* a kernel view session summed up (recording_plan.fold_kernel): the spans of the pins summed, for
     * the carriers' held time (kernel_held.h) */
    struct recording_span *folded_spans;
    size_t n_folded_spans, folded_spans_cap;
    struct recording_hog *hogs; /* in the order they started in the file */
    size_t n_hogs;
    struct recording_notice *notices;
    size_t n_notices;
    struct session_stats stats; /* the last Stats, or the Goodbye's (proto/session_stats.h) */
    int has_goodbye;
    int skipped;         /* not kept (recording_plan.keep): its Hello, Stats, notices and end only */
    int damaged;         /* a damaged frame cut this session short (what follows up to the next magic is skipped) */
    uint64_t damaged_at; /* its byte offset in the file */
    struct recording_carrier *carriers; /* in the order announced; one per tid */
    size_t n_carriers;
    struct recording_occupancy *occupancy;
    size_t n_occupancy;
    uint64_t occupancy_dropped;             /* over RECORDING_MAX_OCCUPANCY, or mismatched arrays */
    struct recording_kinterval *kintervals; /* kernel view, in file order */
    size_t n_kintervals, kintervals_cap;
    struct kernel_stacks *kstacks; /* the intervals' stacks and syscall names, each kept once; NULL: none */
    /* the hops of the pins' blocker chains (recording_pin.blocker.chain_at), kind monitor or lock */
    struct recording_hop *blocker_hops;
    size_t n_blocker_hops, blocker_hops_cap;
    struct recording_pin_extra **extras; /* the pins' extras (recording_pin.extra), each its own allocation */
    size_t n_extras, extras_cap;
    struct recording_ktimes *ktimes; /* the last KernelTimes; NULL when none */
    size_t n_ktimes;
    int64_t ktimes_ns;
    /* the kernel view joined to the pins and carriers above (kernel_join.h); NULL until joined */
    struct recording_pin_kernel *pin_kernels;   /* one per pin, by index in pins */
    struct recording_pin_kernel *group_kernels; /* one per group's example, by index in pin_groups */
    size_t *kparks;                             /* the pins' parks, as indexes into kintervals */
    size_t n_kparks;
    struct recording_held *held; /* one per ktimes */

    int has_time;
    int64_t first_ns, last_ns; /* earliest and latest timestamps seen (monotonic) */
    uint64_t events;
    /* what did not add up */
    uint64_t unknown_refs;       /* references to ids never defined */
    uint64_t unmatched_ends;     /* PinEnd without its PinStart */
    uint64_t duplicates;         /* a pin started or ended twice */
    uint64_t unmatched_hog_ends; /* HogEnd without its HogStart */
    uint64_t duplicate_hogs;     /* a hog started or ended twice */
    uint64_t pins_split;         /* sampled pins replaced by the kernel's parks (kernel_split_parks) */
    uint64_t pins_sampled;       /* after attach: park pins timed by the sampler, not the kernel (attach_bounds.h) */
    uint64_t pins_bounded;       /* of those, the ones whose bounds the monitor events or other carriers moved */

    /* id tables (private): the definitions as read (proto/session_defs.h), then the methods and
     * stacks resolved from them; the pins and hogs by id while the file is read, each start's
     * index into pins or hogs (proto/session_pins.h, every id kept: a second start or end is a duplicate) */
    struct session_defs *defs;
    struct idmap *methods, *stacks;
    struct session_pins *ids;
    struct table pin_group_index; /* pin_groups by their key (pin_groups.c) */
    size_t pin_groups_cap;
};

/* Takes the ended pins of s out of the model as it is read (pin_groups.h's pin_groups_fold sums them
 * up, pin_stream.h's hands them to a writer; the loader cannot name either: they are above it):
 * moved[i] is where pins[i] went (RECORDING_PIN_GONE: out), arg the plan's. A pin taken out is
 * released (recording_pin_release; the loader frees its extra). 0 or -errno. */
typedef int (*recording_fold_fn)(struct recording_session *s, uint32_t *moved, void *arg);
/* What a pin taken out gives back: its blocked_in, and its extra (marked unused). */
void recording_pin_release(struct recording_pin *p);
#define RECORDING_PIN_GONE UINT32_MAX

/* Settles the bounds of the pins of s read so far up to cut, before a sum, and marks the pins a later
 * one may still read (attach_bounds.h's attach_bound_window, for a session after attach): 0, -errno, or
 * RECORDING_WINDOW_AGAIN when a pin read reaches back past the cut of the window before (the load then
 * reads the file again, its sessions after attach kept whole). */
typedef int (*recording_window_fn)(struct recording_session *s, int64_t before, int64_t cut);
#define RECORDING_WINDOW_AGAIN (-ESTALE)
/* How far back past the latest time read a pin may still be written, beyond the agent's threshold
 * (twice it: a pin is written once it crosses it): a window's cut lies this far behind. */
#define RECORDING_WINDOW_NS (2 * 1000000000LL)

struct recording;
/* A session's kernel view from elsewhere (vtpin run: its collector's recordings), moved into s as its
 * Hello is read: 1 when s got intervals, 0 when none, -errno (the load fails with it). */
typedef int (*recording_kernel_fn)(struct recording_session *s, void *arg);
/* Given each session of a load in turn (recording_plan.each), complete and resolved; 0 or -errno (the load
 * stops and fails with it). */
typedef int (*recording_session_fn)(struct recording *r, struct recording_session *s, void *arg);

/* What a load keeps (recording_load_plan). */
struct recording_plan {
    /* the sessions kept whole: RECORDING_KEEP_ALL, _LAST, _NONE, or a session number N from 1, whose
     * session alone is read (the others' pins are never decoded into the model); every session is
     * still counted in n_sessions */
    size_t keep;
    /* keep no occupancy points (sessions' n_occupancy 0): only the timelines (html, perfetto) draw
     * them, and a long session sampled every 40 ms has millions; their times still make the
     * session's span */
    int skip_occupancy;
    /* sum up ended pins as they are read with fold, once a session holds fold_pins (pin_groups.h;
     * 0 or no fold: never): for the formats that show sites and stacks, not single pins (text,
     * collapsed, pprof), which give RECORDING_FOLD_PINS */
    size_t fold_pins;
    recording_fold_fn fold;
    void *fold_arg;
    /* non-NULL: the sessions after attach without the kernel view are summed up too, their pins
     * bounded first in windows as they are read (attach_bounds.h); NULL: kept whole, as their passes
     * read every pin */
    recording_window_fn window;
    /* the sessions after attach summed up as read, no window (pin_stream's second read: the first
     * settled their bounds, recording_session.bounds_moved) */
    int attach_as_read;
    /* a read again after RECORDING_WINDOW_AGAIN (a session reached back past a window): the sessions
     * numbered (from 1) in whole[0..n_whole), ascending, keep their pins after attach whole (no window),
     * and with whole_after those after the last of them too; the others are read as before. With each,
     * those numbered below handed_below were handed over by a read before, and are not again */
    const size_t *whole;
    size_t n_whole;
    int whole_after;
    size_t handed_below;
    /* sum up the sessions with the kernel view too (not those after attach, whose passes read every
     * pin): once a session with intervals is to be summed up (or one comes after pins were), the file
     * (or a stream's copy) is read again, twice, first for the intervals alone, which the last read
     * then holds before any pin, so that fold can time and join each pin as it sums it up
     * (kernel_fold.h). With each, the intervals are read first always. */
    int fold_kernel;
    /* only the sessions' kernel view (intervals, kernel times) and what tells them apart (Hello,
     * counters, notices, end): fold_kernel's first read, and vtpin run's read of its collector's
     * recordings; the other frames are decoded (a frame that does not decode is damage to every read
     * alike), not kept */
    int kernel_only;
    /* no interval is read (pin_stream's second read: the first holds them, and so it sums up) */
    int no_intervals;
    struct recording *kernel_from; /* private: the second read takes its intervals from the first */
    /* non-NULL: each session kept takes its kernel view from kernel_at_hello as its Hello is read, and
     * is summed up as one whose intervals a first read found (fold_kernel) */
    recording_kernel_fn kernel_at_hello;
    void *kernel_arg;
    /* keep what was read open (recording.input_fd), for a second pass over the same bytes
     * (recording_load_again) */
    int keep_input;
    /* a file: read no more than its first max_bytes (0: all of it), so that a file still being
     * written reads the same in every pass over it (vtpin run); a stream is read whole */
    uint64_t max_bytes;
    /* non-NULL: every session in turn, once complete (the next began, or the file ended) and its ids
     * resolved, is handed to each, then given back as a session not kept is: memory follows the
     * largest session, not the file, for a reader of them all (pprof's every session) */
    recording_session_fn each;
    void *arg;
};

struct recording {
    char *path;
    struct recording_session **sessions;
    size_t n_sessions;
    uint64_t bytes;         /* bytes read that made whole frames (magic included) */
    uint64_t length;        /* bytes read (the file's, up to max_bytes): a second read reads these again */
    uint64_t events;        /* frames read */
    int truncated;          /* the file ends in the middle of a frame, or in zeros */
    uint64_t truncated_at;  /* byte offset of the incomplete frame */
    int zero_tail;          /* truncated: the rest of the file is zero bytes */
    unsigned segments;      /* recordings concatenated in the file (1 normally) */
    uint64_t damaged;       /* frames that could not be read (0: none); what follows up to the next magic is skipped */
    uint64_t damaged_at;    /* byte offset of the first */
    uint64_t damaged_bytes; /* bytes skipped for damage */
    char damage[160];       /* what was wrong with the first, e.g. "the frame at byte offset 96 is not a vtpin event" */
    int input_fd;           /* recording_plan.keep_input: the file, or a stream's copy; -1: none (closed when freed) */
    struct recording_session *goes_on; /* private: the session the last segment ended rotating out of */
    struct recording_plan plan;        /* private: how it was loaded (plan.keep: the sessions kept whole); its
                                          callbacks only while it loads */
};

/* Which sessions a load keeps whole. The others keep their Hello, Stats,
 * notices and end (what the warnings and the session count need) and are
 * `skipped`, so memory follows what is shown, not the file's size. */
#define RECORDING_KEEP_ALL ((size_t)0)
#define RECORDING_KEEP_LAST SIZE_MAX       /* read whole, given back when the next session starts */
#define RECORDING_KEEP_NONE (SIZE_MAX - 1) /* every session as one not shown: a look at the Hellos */
/* A session of fewer pins is never summed up (11 MB of them). */
#define RECORDING_FOLD_PINS 65536

/* Loads the file at path ("-": standard input), as it was written: no pass
 * of the report runs (report_open in report.h loads and runs them). Returns
 * 0 and *out (a damaged file too: see `damaged`), or -errno with a one-line
 * message naming the file in err: -EPROTO not a recording (bad magic),
 * -ENOMEM, or the error of open/read. */
int recording_load(const char *path, struct recording **out, char *err, size_t errlen);
/* Loads the file at path ("-": standard input) as plan says; recording_load is its common case. */
int recording_load_plan(const char *path, const struct recording_plan *plan, struct recording **out, char *err,
                        size_t errlen);
/* Same from an open descriptor (all sessions); name is used in messages. */
int recording_load_fd(int fd, const char *name, struct recording **out, char *err, size_t errlen);
int recording_load_fd_session(int fd, const char *name, size_t keep, struct recording **out, char *err, size_t errlen);
/* Same from data[len] in memory. */
int recording_load_buffer(const uint8_t *data, size_t len, const char *name, struct recording **out, char *err,
                          size_t errlen);
/* The bytes r read (r->bytes of r->input_fd: r was loaded with keep_input) loaded again as plan says.
 * 0 and *out, or -errno with err (-ESPIPE: r kept no input, a stream that could not be copied). */
int recording_load_again(const struct recording *r, const struct recording_plan *plan, struct recording **out,
                         char *err, size_t errlen);
/* Resolves the ids of p, a pin read again (recording_load_again), with from's tables, as from's own
 * pins were (the same file: the same definitions), counting nothing. */
void recording_resolve_from(const struct recording_session *from, struct recording_pin *p);
void recording_free(struct recording *r);

/* Unix epoch ns for a monotonic timestamp of the session: 0 and *unix_ns,
 * or -ENOENT when the session has no clock pair (or it would overflow). */
int recording_unix_ns(const struct recording_session *s, int64_t mono_ns, int64_t *unix_ns);
/* p's blocker, or NULL when it has none. */
static inline const struct recording_blocker *recording_pin_blocker(const struct recording_pin *p)
{
    return p->extra && p->extra->blocker.head.what ? &p->extra->blocker : NULL;
}
/* p's downcall (the culprit frame invoked an FFM downcall or called a JNA function), or NULL. */
static inline const struct recording_downcall *recording_pin_downcall(const struct recording_pin *p)
{
    return p->extra && p->extra->has_downcall ? &p->extra->downcall : NULL;
}
/* A pin's duration, or for one still in progress at the end of the
 * recording, its duration so far (up to the session's last timestamp, or
 * up to the agent's failed write when it could not write the rest). */
int64_t recording_pin_duration(const struct recording_session *s, const struct recording_pin *p);
/* The same for a hog. */
int64_t recording_hog_duration(const struct recording_session *s, const struct recording_hog *h);
/* 1 when the hog's stack, taken as it was reported, shows it unmounting (a frame of
 * java.lang.VirtualThread.yieldContinuation: a Thread.yield or a park). Sampled occupancy counts
 * mounts only near hog=, and such a thread may have been given its carrier straight back at times
 * before rather than have held it throughout (docs/agent.md, "Carrier hogs"). */
int recording_hog_seen_unmounting(const struct recording_hog *h);

/* Carrier tid's name: as announced (Carrier), else from a pin that ran on it; NULL when none says. */
const char *recording_carrier_name(const struct recording_session *s, int32_t tid);

/* A deadlock the agent found live (docs/deadlocks.md) is a notice whose code is
 * "deadlock.KIND": its kind ("carrier_starvation"), else NULL. */
const char *recording_deadlock_kind(const struct recording_notice *n);
/* How many of the session's notices are deadlocks. */
size_t recording_deadlocks(const struct recording_session *s);

/* Moves src's kernel view into dst: its intervals (taken whole when dst has none, else appended, a
 * connection after another; their stacks go with them) and its kernel times (the later ones); src
 * is left without them. 0 or -ENOMEM (both unchanged). */
int recording_take_kernel(struct recording_session *dst, struct recording_session *src);

/* Appends a notice the report itself found (a report pass): 0 or -ENOMEM. */
int recording_add_notice(struct recording_session *s, int64_t time_ns, int severity, const char *code,
                         const char *text);

/* Saturating helpers for timestamps from the file. */
int64_t recording_sat_add(int64_t a, int64_t b);
int64_t recording_sat_sub(int64_t a, int64_t b);

/* The agent could not write this recording (a notice output.record.write_failed
 * or unwritten events): it ends early. Returns the notice's text, "" without one, or NULL. */
const char *recording_write_failed(const struct recording_session *s);
/* The agent warned at the start that the disk was nearly full (a notice
 * output.record.disk_nearly_full: no room for the space it keeps to say
 * why a recording stops). Returns the notice's text, or NULL. */
const char *recording_disk_nearly_full(const struct recording_session *s);
/* The agent (record_max=) or the collector (--record-max) rotated the recording here: it goes on in a newer file (a
 * file that still ends with the Goodbye was not rotated after all: the rotation failed). */
int recording_rotated(const struct recording_session *s);
/* Its writes most probably failed: the disk was nearly full and the session
 * has no end marker, though no failure could be written (no room left). */
int recording_write_failed_probably(const struct recording_session *s);

#endif
