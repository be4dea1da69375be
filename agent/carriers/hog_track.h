/* One carrier's hog, decided from the writer's samples alone (pure, no JVMTI):
 * a virtual thread that every sample for at least hog= sees mounted on the
 * carrier, running (not asleep) and not pinned, with no mount in between, is
 * a hog. It is reported once it has lasted hog=, from the first sample that
 * saw it, and ends at the first sample that sees it gone: unmounted, another
 * thread mounted, asleep, or pinned.
 *
 *   state     sample                                   -> state     step
 *   NONE      holds (mounted, running, not pinned)    -> WATCHED   -
 *   WATCHED   the same thread holds, < hog            -> WATCHED   -
 *   WATCHED   the same thread holds, >= hog           -> HOG       HOG_STARTS
 *   WATCHED   anything else                           -> NONE or WATCHED (a new thread holds)
 *   HOG       the same thread holds                   -> HOG       -
 *   HOG       anything else                           -> NONE or WATCHED   HOG_ENDS
 *
 * "The same thread" also needs the carrier's mount count unchanged wherever
 * mounts are counted: with exact occupancy every mount is, so a thread that
 * yields and mounts again starts over. Without it (sampled occupancy) mounts
 * are counted on demand (hogs.c, mount_events.h): from shortly before a watch
 * reaches hog=, and a hog is reported only once mounts were counted for
 * verify_ns of its watch with none seen, and the carrier had half of that
 * on a CPU (a thread that could not run could not yield either: no evidence).
 * Counting that starts mid-watch takes the count at its first sample as the
 * base; counting that stops forgets it.
 *
 * A watch needs looks close enough together and enough of them: across a
 * gap longer than max_gap between two samples (the sampler ran late: the JVM
 * throttled by a CPU quota, an overloaded machine) the thread may have
 * unmounted and mounted again unseen, since sampled occupancy counts no
 * mounts, so the watch starts over at the late sample; and a hog is only
 * reported once min_looks samples in a row saw it, so that a thread that
 * yields among others is not taken for one by a few samples that happened to
 * find it. A yielding thread on JDK 21 under a 20 % CPU quota (frozen 80 ms in
 * every 100: a carrier resumes the thread it ran when frozen) was taken for a
 * hog in 3 runs of 6 before. A hog already reported goes on across a gap: it
 * proved itself, and the gap is in the session's sample_gaps. The cost: where
 * every gap is late no hog is found, and the report says the sampler ran late.
 * What no sample can tell: a yielder that the JDK hands its carrier straight
 * back (nothing else queued for that carrier) is found by sample after sample,
 * as a hog is, unless one of them falls between its unmount and its mount.
 * Only counted mounts tell them apart (docs/agent.md): hence verify_ns.
 *
 * A sample that finds the carrier's OS thread has had no CPU since the previous
 * one (runnable, but every CPU taken: an overloaded machine, a quota) says
 * nothing: the thread it carries could not run, so could neither yield nor
 * hog, and the sample neither counts as a look nor ends anything. A carrier
 * frozen with a yielding thread mounted looks, to a sampler that keeps its
 * period, like a hog: JDK 21 had a 300 ms one under 6 busy loops on 2 cores,
 * with no gap over 53 ms in its samples.
 *
 * One sample that finds the same thread asleep, and nothing else changed, is
 * a pause, not an end: a GC or safepoint stops a running carrier too, and a
 * pause is no carrier-held time. Asleep in two samples in a row ends it (at
 * the first of them, as a change does at its sample). */
#ifndef VTPIN_HOG_TRACK_H
#define VTPIN_HOG_TRACK_H

#include <stdint.h>

enum hog_state { HOG_NONE = 0, HOG_WATCHED, HOG_RUNNING };
enum hog_step { HOG_NOTHING = 0, HOG_STARTS, HOG_ENDS };

struct hog_track {
    enum hog_state state;
    int64_t vthread_id;
    uint64_t mounts;
    int64_t since;          /* the first sample that saw it hold the carrier */
    int64_t last_running;   /* the last sample that did */
    int64_t asleep_at;      /* a sample found it asleep after that one (a pause so far); 0: none */
    int64_t last_look;      /* the previous sample of this carrier, whatever it saw; 0: none yet */
    int64_t cpu_ns;         /* the carrier's CPU time at that sample; 0: unknown */
    int64_t counted_since;  /* the first sample of this watch, in a row, with mounts counted; 0: none */
    int64_t counted_cpu_ns; /* the carrier's CPU time at that sample; 0: unknown */
    unsigned looks;         /* samples in a row that saw it hold the carrier, this watch */
};

/* What makes a hog: hog_ns > 0 long, watched with no gap over max_gap_ns > 0 between two
 * samples, seen by at least min_looks samples (hogs.c: hog=, two sample periods or a quarter of
 * hog= if longer, and one look every two sample periods of hog=), and, where mounts are counted
 * on demand, verify_ns of it with mounts counted and none seen (0: every mount is counted). */
struct hog_rule {
    int64_t hog_ns, max_gap_ns, verify_ns;
    unsigned min_looks;
};

struct hog_sample {
    int64_t now;
    int64_t vthread_id; /* mounted; 0: none */
    int running;        /* the carrier's OS thread is on CPU or runnable, not asleep */
    int pinned;         /* a pin is in progress on the carrier */
    int counting;       /* mounts counts every mount on the carrier since counting began */
    uint64_t mounts;    /* mounts counted on the carrier so far (meaningful only while counting) */
    int64_t cpu_ns;     /* the carrier's OS thread's CPU time; 0: unknown (taken as having run) */
};

struct hog_ended {
    int64_t vthread_id, since, last_running;
    int64_t end; /* the first sample that found it gone (or asleep, then gone) */
};

/* Feeds one sample. HOG_STARTS: the hog is t->vthread_id since t->since; HOG_ENDS:
 * the hog that was ended, as *ended says (ended may be NULL). */
enum hog_step hog_track_sample(struct hog_track *t, const struct hog_sample *s, const struct hog_rule *rule,
                               struct hog_ended *ended);

#endif
