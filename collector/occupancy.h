/* Per-carrier occupancy of one JVM: what each carrier runs now, whether it
 * is pinned or hogged (and since when, why, where), and how its time splits
 * into busy / pinned / idle, in total and over a sliding window.
 *
 * Time model: every instant of a carrier is either idle (nothing mounted) or
 * busy (a virtual thread mounted); pinned time is the part of busy time
 * during which the mounted thread is pinned or blocked in native code. So
 * busy + idle = 100 % and pinned <= busy. A hog (a virtual thread running on
 * its carrier for long without unmounting, nothing pinned) is busy time, not
 * pinned time; its time is also summed apart (hogged_ns). Times are the agent's
 * CLOCK_MONOTONIC nanoseconds (same host, same clock as the collector).
 *
 * Pure logic: no I/O, no clock reads; bounded by max_carriers. */
#ifndef VTPIN_OCCUPANCY_H
#define VTPIN_OCCUPANCY_H

#include <stddef.h>
#include <stdint.h>

enum carrier_state {
    CARRIER_IDLE = 0,
    CARRIER_RUNNING = 1,
    CARRIER_PINNED = 2,
    CARRIER_NATIVE_BLOCK = 3,
    CARRIER_HOG = 4, /* a hog in progress: running, not pinned, its carrier held all the same */
};

struct occupancy;

/* window_ns: the sliding window (e.g. 60 s) made of buckets of bucket_ns (e.g. 1 s);
 * window_ns is rounded up to whole buckets. The window ends at the latest time
 * seen and holds the buckets up to the current, partial one, so it spans
 * between window_ns - bucket_ns and window_ns. A carrier's state and window are
 * allocated when it comes (a JVM costs what it uses, not max_carriers); a
 * carrier that finds no memory is refused and counted as one past max_carriers,
 * and tried again at its next event. NULL with errno EINVAL (max_carriers 0, a
 * size <= 0, over 2^20 buckets) or ENOMEM. */
struct occupancy *occupancy_new(unsigned max_carriers, int64_t window_ns, int64_t bucket_ns);
void occupancy_free(struct occupancy *o);
/* Bytes it holds now. */
size_t occupancy_memory(const struct occupancy *o);

/* Declares a carrier (idempotent; renames if the name changed; name NULL keeps
 * it, and a carrier first named by an event is ""; names are cut to 63 bytes).
 * Declaring does not start the accounting: a carrier's time counts from its
 * first mount, sample or pin. t only moves the latest time seen. Returns 0, or
 * -ENOSPC when max_carriers are already tracked (the carrier is ignored and
 * counted once in occupancy_carriers_dropped). */
int occupancy_carrier(struct occupancy *o, int32_t tid, const char *name, int64_t t);

/* Events on an unknown carrier declare it (or are ignored when it is refused).
 * Per carrier, an event earlier than the time already accounted takes effect
 * at that time (durations are clamped, never negative). */

/* Exact source: vthread_id mounted on carrier tid at t; 0 means unmounted.
 * Mounts of a non-zero vthread_id are counted. A pinned thread cannot
 * unmount: an unmount, or a mount of another thread, ends the pin in progress
 * (its end was lost; a later pin end for it is ignored). */
void occupancy_mount(struct occupancy *o, int32_t tid, int64_t vthread_id, int64_t t);
/* Sampled source: carrier tid was seen carrying vthread_id (0 = idle) at t; the
 * time since the carrier's previous sample is attributed to what this sample saw
 * (except its pinned parts, always busy). Until then that time is in no total
 * and no percentage. Samples on a carrier that has mount events are ignored. */
void occupancy_sample(struct occupancy *o, int32_t tid, int64_t vthread_id, int64_t t);

/* reason: vtpin.v1.PinReason values; NATIVE_BLOCK (6) makes the state native_block.
 * culprit: formatted frame, copied (cut to 255 bytes on a UTF-8 boundary).
 * A pin on an unknown carrier declares it. One pin in progress per carrier: a
 * new one closes the previous at its start. Pinned time is busy time, even with
 * no mount seen; the pinned vthread_id (if not 0) becomes the mounted one and
 * stays so after the pin ends until a mount or sample says otherwise. A start
 * earlier than the time already accounted is shown as reported (pinned_since,
 * alerts) but counted from the accounted time. Pin ends of unknown ids are ignored. */
void occupancy_pin_start(struct occupancy *o, int32_t tid, uint64_t pin_id, int reason, const char *culprit,
                         int64_t vthread_id, int64_t start);
/* What pin pin_id waits for, as text (copied, cut as culprit is); unknown ids are ignored. */
void occupancy_pin_blocker(struct occupancy *o, uint64_t pin_id, const char *blocker);
void occupancy_pin_end(struct occupancy *o, uint64_t pin_id, int64_t t);

/* A hog in progress on carrier tid since start (reported once it has lasted
 * the agent's hog=, so start is usually before the time already accounted:
 * shown as reported, and its hogged time counts from start). culprit as for a
 * pin. One hog per carrier: a new one closes the previous at its start. A hog
 * is never at the same time as a pin: a pin start ends the hog in progress
 * (the agent ends it there); a hog start with a pin in progress that began
 * before it ends that pin (its end was lost or is late), and one whose pin
 * began at or after its start was already over (its time is counted, it is
 * not shown). Hog time is busy time, even with no mount seen; a hog cannot
 * unmount, so an unmount, or a mount or sample of another thread, at or after
 * its start ends it. vthread_id (if not 0) becomes the mounted one. Hog ends
 * of unknown ids are ignored. */
void occupancy_hog_start(struct occupancy *o, int32_t tid, uint64_t hog_id, const char *culprit, int64_t vthread_id,
                         int64_t start);
void occupancy_hog_end(struct occupancy *o, uint64_t hog_id, int64_t t);

/* Accounts time up to now for every carrier, each in its current state (call
 * before reading views). Sampled time stays undecided until the next sample. */
void occupancy_advance(struct occupancy *o, int64_t now);

struct carrier_view {
    int32_t tid;
    const char *name; /* owned by the occupancy; valid until the next call */
    enum carrier_state state;
    int64_t vthread_id;                    /* 0 when idle or unknown */
    int64_t pinned_since;                  /* start of the pin in progress, 0 if none */
    int64_t hogged_since;                  /* start of the hog in progress, 0 if none */
    int reason;                            /* of the pin in progress, 0 if none (a hog has none) */
    const char *culprit;                   /* of the pin or hog in progress, NULL if none */
    const char *blocker;                   /* what the pin in progress waits for, NULL if not known */
    uint64_t mounts;                       /* mounts seen (exact source) */
    int64_t seen_at;                       /* time of the mount or sample that said what vthread_id is (0: none) */
    int64_t busy_ns, pinned_ns, idle_ns;   /* totals since the carrier was first seen */
    int64_t hogged_ns;                     /* time in hogs ended or in progress, each from its reported start */
    double busy_pct, pinned_pct, idle_pct; /* over the sliding window, 0..100 */
};

/* Fills up to cap views (sorted by carrier name, then tid); returns how many
 * carriers exist. Percentages are over the part of the window whose state is
 * known (busy + idle); all 0 when none is. */
size_t occupancy_view(struct occupancy *o, struct carrier_view *out, size_t cap);
uint64_t occupancy_carriers_dropped(const struct occupancy *o);

/* Carrier starvation: at least k of the P carriers (k = 0: all of them) have
 * been pinned, native-blocked or hogged for longer than hold_ns. */
struct alert_rule {
    unsigned k;
    int64_t hold_ns;
};

struct alert_state {
    int active;
    unsigned held, total;
    unsigned hogged;  /* of the held carriers, those held by a hog */
    int32_t tids[64]; /* the held carriers, up to 64 */
    unsigned tid_count;
};

/* Evaluates the rule at now: held = carriers whose pin or hog in progress started
 * more than hold_ns before now; active when held >= k (k = 0: held == P and P > 0).
 * Always fills held, total (P) and tids (ascending). Returns 1 when the alert
 * changed (raised or cleared) since the previous call with the same state (st,
 * zeroed by the caller before the first call), 0 otherwise. */
int occupancy_alert_check(struct occupancy *o, const struct alert_rule *rule, int64_t now, struct alert_state *st);

#endif
