/* Unit tests for collector/occupancy.c: busy/pinned/idle accounting from the
 * exact (mount) and sampled sources over scripted timelines, pins without
 * mounts, the pin in progress and native_block states, the sliding window,
 * long gaps, the carrier limit, clamping of backwards times, the starvation alert and
 * the order of views, carrier hogs (busy, not pinned; what ends them; the alert). Times are small ns values chosen so
 * every expected total is exact. */
#include "occupancy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define NB_MAX 16
#define REASON_MONITOR 1
#define REASON_NATIVE 2
#define REASON_NATIVE_BLOCK 6

static int check_pct_(const char *file, int line, const char *ea, double a, double b)
{
    double d = a - b;
    int ok = d < 1e-9 && d > -1e-9;
    if (!ok)
        fprintf(stderr, "%s:%d: CHECK_PCT(%s) failed: %.12f != %.12f\n", file, line, ea, a, b);
    return check_result_(ok);
}
#define CHECK_PCT(a, b) check_pct_(__FILE__, __LINE__, #a, (a), (b))

/* The view of carrier tid (after the views are taken); zeroed with tid 0 if absent. */
static struct carrier_view view_of(struct occupancy *o, int32_t tid)
{
    struct carrier_view views[NB_MAX];
    size_t n = occupancy_view(o, views, NB_MAX);
    for (size_t i = 0; i < n && i < NB_MAX; i++)
        if (views[i].tid == tid)
            return views[i];
    return (struct carrier_view){0};
}

/* Checks the three totals of one view. */
#define CHECK_TOTALS(v, busy, pinned, idle)                                                                            \
    do {                                                                                                               \
        CHECK_INT((v).busy_ns, busy);                                                                                  \
        CHECK_INT((v).pinned_ns, pinned);                                                                              \
        CHECK_INT((v).idle_ns, idle);                                                                                  \
    } while (0)

/* Checks the three window percentages of one view. */
#define CHECK_PCTS(v, busy, pinned, idle)                                                                              \
    do {                                                                                                               \
        CHECK_PCT((v).busy_pct, busy);                                                                                 \
        CHECK_PCT((v).pinned_pct, pinned);                                                                             \
        CHECK_PCT((v).idle_pct, idle);                                                                                 \
    } while (0)

static void test_new_invalid(void)
{
    errno = 0;
    CHECK(occupancy_new(0, 10000, 1000) == NULL);
    CHECK_INT(errno, EINVAL);
    CHECK(occupancy_new(4, 10000, 0) == NULL);
    CHECK(occupancy_new(4, 0, 1000) == NULL);
    CHECK(occupancy_new(4, 10000, -1) == NULL);
    occupancy_free(NULL);

    /* a window that is no whole number of buckets is rounded up (3 buckets of 1000) */
    struct occupancy *o = occupancy_new(1, 2500, 1000);
    if (!CHECK(o != NULL))
        return;
    occupancy_mount(o, 1, 5, 0);
    occupancy_mount(o, 1, 0, 1000);
    occupancy_advance(o, 3000); /* [0,1000) busy, [1000,3000) idle: all 3 buckets */
    struct carrier_view v = view_of(o, 1);
    CHECK_PCTS(v, 100.0 / 3, 0.0, 200.0 / 3);
    occupancy_advance(o, 4000); /* bucket 0 left the window */
    v = view_of(o, 1);
    CHECK_PCTS(v, 0.0, 0.0, 100.0);
    occupancy_free(o);
}

/* Exact source: mount, pin, pin end, unmount, mount; time before the first
 * mount is not counted. */
static void test_exact_timeline(void)
{
    struct occupancy *o = occupancy_new(4, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    CHECK_INT(occupancy_carrier(o, 1, "ForkJoinPool-1-worker-1", 0), 0);
    occupancy_advance(o, 2000);
    struct carrier_view v = view_of(o, 1);
    CHECK_STR(v.name, "ForkJoinPool-1-worker-1");
    CHECK_INT(v.state, CARRIER_IDLE);
    CHECK_TOTALS(v, 0, 0, 0); /* declared, but no mount yet: unknown, not idle */
    CHECK_PCTS(v, 0.0, 0.0, 0.0);

    occupancy_mount(o, 1, 101, 2000);
    occupancy_pin_start(o, 1, 7, REASON_MONITOR, "A.b(A.java:1)", 101, 3000);
    occupancy_advance(o, 4000);
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_PINNED);
    CHECK_INT(v.vthread_id, 101);
    CHECK_TOTALS(v, 2000, 1000, 0);
    CHECK_PCTS(v, 100.0, 50.0, 0.0);

    occupancy_pin_end(o, 7, 5000);
    occupancy_mount(o, 1, 0, 6000);
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_IDLE);
    CHECK_INT(v.vthread_id, 0);
    occupancy_mount(o, 1, 102, 8000);
    occupancy_advance(o, 10000);
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_RUNNING);
    CHECK_INT(v.vthread_id, 102);
    CHECK_UINT(v.mounts, 2);
    /* busy [2000,6000) + [8000,10000), pinned [3000,5000), idle [6000,8000) */
    CHECK_TOTALS(v, 6000, 2000, 2000);
    /* window [0,10000), of which [2000,10000) is covered */
    CHECK_PCTS(v, 75.0, 25.0, 25.0);
    occupancy_free(o);
}

/* Sampled source: each sample decides the time since the previous one; a pin
 * in between is pinned (and busy) whatever the sample saw. */
static void test_sampled_timeline(void)
{
    struct occupancy *o = occupancy_new(4, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    occupancy_sample(o, 1, 0, 1000);  /* starts the accounting */
    occupancy_sample(o, 1, 11, 2000); /* [1000,2000) busy */
    occupancy_sample(o, 1, 11, 3000); /* [2000,3000) busy */
    struct carrier_view v = view_of(o, 1);
    CHECK_TOTALS(v, 2000, 0, 0);
    CHECK_INT(v.state, CARRIER_RUNNING);
    occupancy_sample(o, 1, 0, 5000); /* [3000,5000) idle */
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_IDLE);
    occupancy_pin_start(o, 1, 9, REASON_NATIVE, "N.c(Native Method)", 12, 5500);
    occupancy_pin_end(o, 9, 6500);
    occupancy_sample(o, 1, 0, 7000); /* [5000,5500) idle, [5500,6500) pinned, [6500,7000) idle */
    v = view_of(o, 1);
    CHECK_TOTALS(v, 3000, 1000, 3000);
    CHECK_INT(v.seen_at, 7000);       /* the latest sample; pins do not move it */
    occupancy_sample(o, 1, 12, 8000); /* [7000,8000) busy */
    occupancy_advance(o, 9500);       /* [8000,9500) waits for the next sample */
    v = view_of(o, 1);
    CHECK_INT(v.seen_at, 8000);
    CHECK_TOTALS(v, 4000, 1000, 3000);
    CHECK_UINT(v.mounts, 0);
    CHECK_INT(v.vthread_id, 12);
    /* covered: [1000,8000) */
    CHECK_PCTS(v, 400.0 / 7, 100.0 / 7, 300.0 / 7);
    occupancy_sample(o, 1, 0, 10000); /* [8000,10000) idle */
    v = view_of(o, 1);
    CHECK_TOTALS(v, 4000, 1000, 5000);
    CHECK_PCTS(v, 400.0 / 9, 100.0 / 9, 500.0 / 9);
    CHECK_INT(v.state, CARRIER_IDLE);
    occupancy_free(o);
}

/* A carrier with mount events ignores samples (mounts are exact). */
static void test_samples_ignored_when_exact(void)
{
    struct occupancy *o = occupancy_new(4, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    occupancy_mount(o, 1, 5, 0);
    occupancy_sample(o, 1, 0, 1000);
    occupancy_advance(o, 2000);
    struct carrier_view v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_RUNNING);
    CHECK_INT(v.seen_at, 0); /* the mount's time: an ignored sample is not a sighting */
    CHECK_TOTALS(v, 2000, 0, 0);
    occupancy_free(o);
}

/* Pins alone say a virtual thread is mounted: busy while pinned, and the
 * pinned thread stays mounted after its pin until a mount event says otherwise. */
static void test_pinned_without_mount(void)
{
    struct occupancy *o = occupancy_new(4, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    occupancy_carrier(o, 2, "c2", 0);
    occupancy_advance(o, 5000);
    struct carrier_view v = view_of(o, 2);
    CHECK_TOTALS(v, 0, 0, 0);

    occupancy_pin_start(o, 2, 5, REASON_MONITOR, "X.y(X.java:9)", 77, 6000);
    occupancy_advance(o, 8000);
    v = view_of(o, 2);
    CHECK_INT(v.state, CARRIER_PINNED);
    CHECK_INT(v.vthread_id, 77);
    CHECK_TOTALS(v, 2000, 2000, 0);
    CHECK_PCTS(v, 100.0, 100.0, 0.0);

    occupancy_pin_end(o, 5, 9000);
    occupancy_advance(o, 10000);
    v = view_of(o, 2);
    CHECK_INT(v.state, CARRIER_RUNNING);
    CHECK_INT(v.vthread_id, 77);
    CHECK_TOTALS(v, 3000, 3000, 0); /* [9000,10000) is not known yet */
    CHECK_UINT(v.mounts, 0);

    occupancy_mount(o, 2, 0, 11000); /* the unmount: 77 ran [9000,11000) */
    occupancy_advance(o, 12000);
    v = view_of(o, 2);
    CHECK_INT(v.state, CARRIER_IDLE);
    CHECK_TOTALS(v, 5000, 3000, 1000);

    /* a pin on an unknown carrier declares it, unnamed */
    occupancy_pin_start(o, 3, 6, REASON_MONITOR, "Z.z(Z.java:1)", 78, 12000);
    struct carrier_view views[4];
    CHECK_UINT(occupancy_view(o, views, 4), 2);
    v = view_of(o, 3);
    CHECK_INT(v.tid, 3);
    CHECK_STR(v.name, "");
    CHECK_INT(v.state, CARRIER_PINNED);
    occupancy_free(o);
}

/* The pin in progress: since, reason, culprit and blocker (copied, truncated),
 * cleared at its end; a new pin replaces the old; unknown pin ends are ignored. */
static void test_pin_in_progress(void)
{
    struct occupancy *o = occupancy_new(4, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    char culprit[64];
    snprintf(culprit, sizeof(culprit), "%s", "com.example.Dao.query(Dao.java:42)");
    occupancy_mount(o, 1, 40, 0);
    occupancy_pin_start(o, 1, 100, REASON_MONITOR, culprit, 40, 1000);
    memset(culprit, 'x', sizeof(culprit) - 1); /* the occupancy kept its own copy */
    struct carrier_view v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_PINNED);
    CHECK_INT(v.pinned_since, 1000);
    CHECK_INT(v.reason, REASON_MONITOR);
    CHECK_STR(v.culprit, "com.example.Dao.query(Dao.java:42)");
    CHECK_INT(v.vthread_id, 40);
    CHECK(v.blocker == NULL); /* not known until the agent says */
    snprintf(culprit, sizeof(culprit), "%s", "blocked by \"owner\" (platform, sleeping)");
    occupancy_pin_blocker(o, 100, culprit);
    occupancy_pin_blocker(o, 999, "of no pin: ignored");
    memset(culprit, 'x', sizeof(culprit) - 1);
    CHECK_STR(view_of(o, 1).blocker, "blocked by \"owner\" (platform, sleeping)");

    occupancy_pin_end(o, 999, 1500); /* unknown pin: ignored */
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_PINNED);
    CHECK_INT(v.pinned_ns, 0);

    /* a new pin replaces the old, closing it at the new start */
    occupancy_pin_start(o, 1, 101, REASON_NATIVE, "B.c(Native Method)", 40, 3000);
    v = view_of(o, 1);
    CHECK_INT(v.pinned_ns, 2000);
    CHECK_INT(v.pinned_since, 3000);
    CHECK_INT(v.reason, REASON_NATIVE);
    CHECK_STR(v.culprit, "B.c(Native Method)");
    CHECK(v.blocker == NULL); /* the old pin's blocker went with it */
    occupancy_pin_blocker(o, 100, "of the replaced pin: ignored");
    CHECK(view_of(o, 1).blocker == NULL);
    occupancy_pin_end(o, 100, 3500); /* the replaced pin is unknown now */
    CHECK_INT(view_of(o, 1).state, CARRIER_PINNED);

    occupancy_pin_end(o, 101, 4000);
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_RUNNING);
    CHECK_INT(v.vthread_id, 40);
    CHECK_INT(v.pinned_since, 0);
    CHECK_INT(v.reason, 0);
    CHECK(v.culprit == NULL);
    CHECK(v.blocker == NULL);
    CHECK_TOTALS(v, 4000, 3000, 0);

    /* a long culprit is cut (on a UTF-8 boundary), never overflows */
    char longc[600];
    memset(longc, 'a', sizeof(longc) - 1);
    longc[sizeof(longc) - 1] = '\0';
    memcpy(&longc[254], "\xc3\xa9", 2); /* an é across the 255-byte limit */
    occupancy_pin_start(o, 1, 102, REASON_MONITOR, longc, 40, 5000);
    v = view_of(o, 1);
    if (CHECK(v.culprit != NULL)) {
        CHECK_UINT(strlen(v.culprit), 254);
        CHECK(strncmp(v.culprit, longc, 254) == 0);
    }

    /* a pinned thread cannot unmount: an unmount means the pin's end was lost */
    occupancy_mount(o, 1, 0, 6000);
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_IDLE);
    CHECK(v.culprit == NULL);
    CHECK_TOTALS(v, 6000, 4000, 0);
    occupancy_pin_end(o, 102, 7000); /* too late: ignored */
    occupancy_advance(o, 8000);
    v = view_of(o, 1);
    CHECK_TOTALS(v, 6000, 4000, 2000);

    /* a mount of another thread also ends the pin; a mount of the pinned one does not */
    occupancy_mount(o, 1, 50, 8000);
    occupancy_pin_start(o, 1, 103, REASON_MONITOR, "C.d(C.java:3)", 50, 8000);
    occupancy_mount(o, 1, 50, 8500);
    CHECK_INT(view_of(o, 1).state, CARRIER_PINNED);
    occupancy_mount(o, 1, 51, 9000);
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_RUNNING);
    CHECK_INT(v.vthread_id, 51);
    CHECK_TOTALS(v, 7000, 5000, 2000);
    CHECK_UINT(v.mounts, 4);
    occupancy_free(o);
}

static void test_native_block(void)
{
    struct occupancy *o = occupancy_new(4, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    occupancy_mount(o, 1, 8, 0);
    occupancy_pin_start(o, 1, 1, REASON_NATIVE_BLOCK, "libc.so.6 read", 8, 1000);
    occupancy_advance(o, 4000);
    struct carrier_view v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_NATIVE_BLOCK);
    CHECK_INT(v.reason, REASON_NATIVE_BLOCK);
    CHECK_INT(v.pinned_since, 1000);
    CHECK_TOTALS(v, 4000, 3000, 0); /* native_block time is pinned time */
    CHECK_PCTS(v, 100.0, 75.0, 0.0);
    occupancy_pin_end(o, 1, 4000);
    CHECK_INT(view_of(o, 1).state, CARRIER_RUNNING);
    occupancy_free(o);
}

/* Old buckets leave the window; totals keep everything; percentages are over
 * the covered part of the window only. */
static void test_window_rolling(void)
{
    struct occupancy *o = occupancy_new(4, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    occupancy_mount(o, 1, 5, 0);
    occupancy_pin_start(o, 1, 1, REASON_MONITOR, "P.p(P.java:1)", 5, 1000);
    occupancy_pin_end(o, 1, 2000);
    occupancy_mount(o, 1, 0, 5000);
    occupancy_advance(o, 10000);
    struct carrier_view v = view_of(o, 1);
    CHECK_PCTS(v, 50.0, 10.0, 50.0);

    occupancy_advance(o, 12000); /* window [2000,12000): busy [2000,5000) */
    v = view_of(o, 1);
    CHECK_PCTS(v, 30.0, 0.0, 70.0);
    occupancy_advance(o, 12500); /* window [3000,12500): the current bucket is partial */
    v = view_of(o, 1);
    CHECK_PCTS(v, 2000.0 / 95, 0.0, 7500.0 / 95);
    occupancy_advance(o, 15000);
    v = view_of(o, 1);
    CHECK_PCTS(v, 0.0, 0.0, 100.0);
    CHECK_TOTALS(v, 5000, 1000, 10000);

    /* a carrier seen for 3000 ns of the window: percentages over those 3000 */
    occupancy_mount(o, 2, 9, 12000);
    occupancy_mount(o, 2, 0, 14000);
    occupancy_advance(o, 15000);
    v = view_of(o, 2);
    CHECK_PCTS(v, 200.0 / 3, 0.0, 100.0 / 3);

    /* a long gap: the whole window is the current state, totals are exact */
    occupancy_mount(o, 1, 6, 15000);
    occupancy_advance(o, 1000000);
    v = view_of(o, 1);
    CHECK_PCTS(v, 100.0, 0.0, 0.0);
    CHECK_TOTALS(v, 990000, 1000, 10000);
    v = view_of(o, 2);
    CHECK_PCTS(v, 0.0, 0.0, 100.0);

    /* a sampled carrier whose last decided time is older than the window shows
     * nothing in the window, though its ring still holds that old bucket */
    occupancy_sample(o, 3, 31, 1010000);
    occupancy_sample(o, 3, 31, 1011000); /* bucket 1010 busy */
    occupancy_mount(o, 1, 6, 1021000);   /* another carrier's time: window buckets 1011..1020 */
    v = view_of(o, 3);
    CHECK_TOTALS(v, 1000, 0, 0);
    CHECK_PCTS(v, 0.0, 0.0, 0.0);
    occupancy_free(o);
}

/* A gap of 2^50 buckets costs no more than one window of buckets. */
static void test_long_gap(void)
{
    struct occupancy *o = occupancy_new(1, 1000, 1);
    if (!CHECK(o != NULL))
        return;
    occupancy_mount(o, 1, 5, 0);
    occupancy_pin_start(o, 1, 1, REASON_MONITOR, "G.g(G.java:7)", 5, 500);
    occupancy_advance(o, INT64_C(1) << 50);
    struct carrier_view v = view_of(o, 1);
    CHECK_TOTALS(v, INT64_C(1) << 50, (INT64_C(1) << 50) - 500, 0);
    CHECK_PCTS(v, 100.0, 100.0, 0.0);
    occupancy_free(o);
}

/* Times from a damaged or hostile agent at the ends of int64 (found by
 * tests/fuzz/fuzz_query: (id + 1) * bucket_ns overflowed): clamped into the
 * model's range, so nothing overflows (UBSan aborts the sanitized build) and
 * no total or percentage goes negative. */
static void test_extreme_times(void)
{
    struct occupancy *o = occupancy_new(4, 60 * INT64_C(1000000000), INT64_C(1000000000));
    if (!CHECK(o != NULL))
        return;
    occupancy_mount(o, 1, 5, INT64_MIN);
    occupancy_pin_start(o, 1, 1, REASON_MONITOR, "H.h(H.java:1)", 5, INT64_MIN + 1);
    occupancy_advance(o, INT64_MAX - 1);
    occupancy_pin_end(o, 1, INT64_MAX);
    occupancy_sample(o, 2, 7, INT64_MIN);
    occupancy_sample(o, 2, 0, INT64_MAX);
    occupancy_advance(o, INT64_MAX);
    struct alert_state st = {0};
    struct alert_rule all = {.k = 0, .hold_ns = 1};
    occupancy_pin_start(o, 2, 2, REASON_MONITOR, "H.h(H.java:1)", 7, INT64_MIN);
    occupancy_alert_check(o, &all, INT64_MAX, &st);
    CHECK_UINT(st.held, 1);
    for (int32_t tid = 1; tid <= 2; tid++) {
        struct carrier_view v = view_of(o, tid);
        CHECK(v.busy_ns >= 0 && v.pinned_ns >= 0 && v.idle_ns >= 0 && v.pinned_ns <= v.busy_ns);
        CHECK(v.busy_pct >= 0.0 && v.busy_pct <= 100.0 && v.idle_pct >= 0.0 && v.idle_pct <= 100.0);
    }
    occupancy_free(o);
}

static void test_carrier_limit(void)
{
    struct occupancy *o = occupancy_new(2, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    CHECK_INT(occupancy_carrier(o, 1, "a", 0), 0);
    CHECK_INT(occupancy_carrier(o, 2, "b", 0), 0);
    CHECK_INT(occupancy_carrier(o, 1, "a", 0), 0); /* idempotent */
    CHECK_UINT(occupancy_carriers_dropped(o), 0);
    CHECK_INT(occupancy_carrier(o, 3, "c", 0), -ENOSPC);
    CHECK_UINT(occupancy_carriers_dropped(o), 1);
    CHECK_INT(occupancy_carrier(o, 3, "c", 0), -ENOSPC); /* the same carrier is counted once */
    CHECK_UINT(occupancy_carriers_dropped(o), 1);
    occupancy_mount(o, 4, 9, 100);
    CHECK_UINT(occupancy_carriers_dropped(o), 2);
    occupancy_sample(o, 5, 9, 100);
    occupancy_pin_start(o, 6, 66, REASON_MONITOR, "D.d(D.java:1)", 9, 100);
    occupancy_pin_end(o, 66, 200);
    occupancy_mount(o, 4, 0, 300);
    CHECK_UINT(occupancy_carriers_dropped(o), 4);

    occupancy_mount(o, 1, 7, 0);
    occupancy_advance(o, 1000);
    struct carrier_view views[4];
    CHECK_UINT(occupancy_view(o, views, 4), 2);
    CHECK_INT(views[0].tid, 1);
    CHECK_INT(views[1].tid, 2);
    CHECK_TOTALS(views[0], 1000, 0, 0);
    CHECK_TOTALS(views[1], 0, 0, 0);

    struct alert_state st = {0};
    struct alert_rule all = {.k = 0, .hold_ns = 0};
    occupancy_alert_check(o, &all, 1000, &st);
    CHECK_UINT(st.total, 2);
    CHECK_UINT(st.held, 0); /* the dropped carrier's pin is nowhere */
    occupancy_free(o);
}

/* Times going backwards on one carrier are clamped; other carriers lagging
 * behind the latest time are accounted from their own first event. */
static void test_backwards_clamp(void)
{
    struct occupancy *o = occupancy_new(4, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    occupancy_mount(o, 1, 5, 1000);
    occupancy_advance(o, 5000);
    occupancy_mount(o, 1, 0, 4000); /* before what is accounted: takes effect at 5000 */
    struct carrier_view v = view_of(o, 1);
    CHECK_TOTALS(v, 4000, 0, 0);
    CHECK_INT(v.state, CARRIER_IDLE);
    occupancy_advance(o, 3000); /* backwards: nothing */
    v = view_of(o, 1);
    CHECK_TOTALS(v, 4000, 0, 0);
    occupancy_advance(o, 6000);
    v = view_of(o, 1);
    CHECK_TOTALS(v, 4000, 0, 1000);

    /* a pin reported as started before the accounted time: since as reported,
     * pinned time from the accounted time on */
    occupancy_pin_start(o, 1, 3, REASON_MONITOR, "E.e(E.java:5)", 0, 5500);
    v = view_of(o, 1);
    CHECK_INT(v.pinned_since, 5500);
    occupancy_advance(o, 7000);
    occupancy_pin_end(o, 3, 6500); /* backwards: closes at 7000 */
    occupancy_advance(o, 8000);
    v = view_of(o, 1);
    CHECK_TOTALS(v, 5000, 1000, 2000);
    CHECK(v.pinned_ns <= v.busy_ns);

    /* samples going backwards: zero, not negative */
    occupancy_sample(o, 2, 1, 5000);
    occupancy_sample(o, 2, 1, 4000);
    occupancy_sample(o, 2, 1, 4500);
    v = view_of(o, 2);
    CHECK_TOTALS(v, 0, 0, 0);
    occupancy_sample(o, 2, 0, 6000);
    v = view_of(o, 2);
    CHECK_TOTALS(v, 0, 0, 1000);

    /* another carrier's events older than the latest time seen */
    occupancy_mount(o, 3, 8, 3000);
    occupancy_advance(o, 8000);
    v = view_of(o, 3);
    CHECK_TOTALS(v, 5000, 0, 0);
    CHECK_PCTS(v, 100.0, 0.0, 0.0);
    occupancy_free(o);
}

static void test_alert(void)
{
    struct occupancy *o = occupancy_new(8, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    struct alert_state st = {0};
    struct alert_rule two = {.k = 2, .hold_ns = 1000};
    struct alert_rule all = {.k = 0, .hold_ns = 1000};

    /* no carriers: k = 0 is never active */
    CHECK_INT(occupancy_alert_check(o, &all, 0, &st), 0);
    CHECK_INT(st.active, 0);
    CHECK_UINT(st.total, 0);

    occupancy_carrier(o, 30, "w3", 0);
    occupancy_carrier(o, 10, "w1", 0);
    occupancy_carrier(o, 20, "w2", 0);
    occupancy_pin_start(o, 30, 1, REASON_MONITOR, "A.a(A.java:1)", 301, 0);
    occupancy_pin_start(o, 10, 2, REASON_NATIVE_BLOCK, "read", 101, 500);

    CHECK_INT(occupancy_alert_check(o, &two, 1000, &st), 0); /* held exactly hold_ns: not yet */
    CHECK_INT(st.active, 0);
    CHECK_UINT(st.held, 0);
    CHECK_UINT(st.total, 3);
    CHECK_UINT(st.tid_count, 0);

    CHECK_INT(occupancy_alert_check(o, &two, 1400, &st), 0);
    CHECK_UINT(st.held, 1);
    CHECK_UINT(st.tid_count, 1);
    CHECK_INT(st.tids[0], 30);

    CHECK_INT(occupancy_alert_check(o, &two, 1600, &st), 1); /* raised */
    CHECK_INT(st.active, 1);
    CHECK_UINT(st.held, 2);
    CHECK_UINT(st.total, 3);
    CHECK_UINT(st.tid_count, 2);
    CHECK_INT(st.tids[0], 10);
    CHECK_INT(st.tids[1], 30);
    CHECK_INT(occupancy_alert_check(o, &two, 1700, &st), 0); /* still raised: no change */
    CHECK_INT(st.active, 1);

    occupancy_pin_end(o, 1, 1800);
    CHECK_INT(occupancy_alert_check(o, &two, 1900, &st), 1); /* cleared */
    CHECK_INT(st.active, 0);
    CHECK_UINT(st.held, 1);
    CHECK_INT(st.tids[0], 10);

    /* k = 0: all three carriers */
    struct alert_state st0 = {0};
    occupancy_pin_start(o, 30, 3, REASON_MONITOR, "A.a(A.java:1)", 301, 2000);
    occupancy_pin_start(o, 20, 4, REASON_MONITOR, "A.a(A.java:1)", 201, 2500);
    CHECK_INT(occupancy_alert_check(o, &all, 3200, &st0), 0); /* 20 held only 700 */
    CHECK_UINT(st0.held, 2);
    CHECK_INT(occupancy_alert_check(o, &all, 3600, &st0), 1);
    CHECK_INT(st0.active, 1);
    CHECK_UINT(st0.held, 3);
    CHECK_UINT(st0.tid_count, 3);
    CHECK_INT(st0.tids[0], 10);
    CHECK_INT(st0.tids[1], 20);
    CHECK_INT(st0.tids[2], 30);

    /* a fourth carrier, not pinned: no longer all of them */
    occupancy_mount(o, 40, 401, 3700);
    CHECK_INT(occupancy_alert_check(o, &all, 3800, &st0), 1);
    CHECK_INT(st0.active, 0);
    CHECK_UINT(st0.total, 4);
    CHECK_UINT(st0.held, 3);
    occupancy_free(o);
}

/* Exact source: a hog is busy time, not pinned; reported late, its hogged time
 * counts from its start; a late end, a pin start and an unmount end it; a
 * stale unmount (before its start) does not. */
static void test_hog_timeline(void)
{
    struct occupancy *o = occupancy_new(4, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    occupancy_mount(o, 1, 101, 1000);
    occupancy_advance(o, 3000);
    occupancy_hog_start(o, 1, 5, "Spin.loop(Spin.java:3)", 101, 1500); /* lasted hog= before it came */
    struct carrier_view v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_HOG);
    CHECK_INT(v.hogged_since, 1500);
    CHECK_STR(v.culprit, "Spin.loop(Spin.java:3)");
    CHECK_INT(v.vthread_id, 101);
    CHECK_INT(v.pinned_since, 0);
    CHECK_INT(v.reason, 0);
    CHECK(v.blocker == NULL);
    CHECK_INT(v.hogged_ns, 1500);
    occupancy_advance(o, 4000);
    v = view_of(o, 1);
    CHECK_TOTALS(v, 3000, 0, 0); /* busy, not pinned */
    CHECK_PCTS(v, 100.0, 0.0, 0.0);
    CHECK_INT(v.hogged_ns, 2500);

    occupancy_hog_end(o, 5, 3500); /* a late end: counted up to the time already accounted */
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_RUNNING);
    CHECK_INT(v.hogged_since, 0);
    CHECK(v.culprit == NULL);
    CHECK_INT(v.hogged_ns, 2500);
    occupancy_hog_end(o, 5, 4000); /* ended already: ignored */
    occupancy_hog_end(o, 77, 4000);
    CHECK_INT(view_of(o, 1).hogged_ns, 2500);

    /* a hog started after the cursor: the time up to its start keeps its state */
    occupancy_hog_start(o, 1, 6, "Spin.loop(Spin.java:3)", 101, 5000);
    CHECK_INT(view_of(o, 1).hogged_ns, 2500);
    occupancy_advance(o, 6000);
    CHECK_INT(view_of(o, 1).hogged_ns, 3500);

    /* a pin start ends the hog at once (the agent ends it there; its HogEnd comes after) */
    occupancy_pin_start(o, 1, 7, REASON_MONITOR, "A.b(A.java:1)", 101, 6500);
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_PINNED);
    CHECK_STR(v.culprit, "A.b(A.java:1)");
    CHECK_INT(v.hogged_since, 0);
    CHECK_INT(v.hogged_ns, 4000);
    occupancy_hog_end(o, 6, 7000); /* already over */
    CHECK_INT(view_of(o, 1).state, CARRIER_PINNED);
    occupancy_pin_end(o, 7, 7000);

    /* an unmount ends a hog: a hog cannot unmount */
    occupancy_hog_start(o, 1, 8, "Spin.loop(Spin.java:3)", 101, 8000);
    occupancy_mount(o, 1, 0, 9000);
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_IDLE);
    CHECK_INT(v.hogged_ns, 5000);

    /* a stale unmount, older than the hog's start, does not */
    occupancy_mount(o, 1, 102, 9200);
    occupancy_hog_start(o, 1, 9, "Other.run(Other.java:9)", 102, 9200);
    occupancy_mount(o, 1, 0, 9100);
    occupancy_advance(o, 10000);
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_HOG);
    CHECK_INT(v.vthread_id, 102);
    CHECK_STR(v.culprit, "Other.run(Other.java:9)");
    /* busy [1000,9000) + [9200,10000) (the hog runs whatever the late unmount said), pinned [6500,7000) */
    CHECK_TOTALS(v, 8800, 500, 200);
    CHECK_INT(v.hogged_ns, 5800);

    /* a new hog on the carrier closes the previous one at its start */
    occupancy_hog_start(o, 1, 10, "Next.run(Next.java:1)", 102, 10500);
    occupancy_advance(o, 11000);
    v = view_of(o, 1);
    CHECK_INT(v.hogged_since, 10500);
    CHECK_INT(v.hogged_ns, 5800 + 500 + 500);

    /* a hog re-sent after a reconnect (ended meanwhile) is counted once */
    occupancy_hog_end(o, 10, 11500);
    occupancy_advance(o, 12000);
    occupancy_hog_start(o, 1, 10, "Next.run(Next.java:1)", 102, 10500);
    v = view_of(o, 1);
    CHECK_INT(v.state, CARRIER_HOG);
    CHECK_INT(v.hogged_since, 10500);
    CHECK_INT(v.hogged_ns, 5800 + 500 + 1000 + 500);                    /* [11500,12000) passed before it came back */
    occupancy_hog_start(o, 1, 10, "Next.run(Next.java:1)", 102, 10500); /* and again while in progress */
    CHECK_INT(view_of(o, 1).hogged_ns, 5800 + 500 + 1000 + 500);
    occupancy_free(o);
}

/* Hogs from the sampled source, on a carrier known only by its hog, and
 * against a pin in progress. */
static void test_hog_sources(void)
{
    struct occupancy *o = occupancy_new(8, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    /* sampled: time under a hog is busy at once, not pending; a sample of no thread ends it */
    occupancy_sample(o, 2, 201, 1000);
    occupancy_sample(o, 2, 201, 2000);
    occupancy_hog_start(o, 2, 1, "S.s(S.java:1)", 201, 1000);
    occupancy_advance(o, 3000);
    struct carrier_view v = view_of(o, 2);
    CHECK_INT(v.state, CARRIER_HOG);
    CHECK_TOTALS(v, 2000, 0, 0);
    CHECK_INT(v.hogged_ns, 2000);
    occupancy_sample(o, 2, 201, 2900); /* the same thread, and an older sample: no end */
    CHECK_INT(view_of(o, 2).state, CARRIER_HOG);
    occupancy_sample(o, 2, 0, 3500);
    v = view_of(o, 2);
    CHECK_INT(v.state, CARRIER_IDLE);
    CHECK_INT(v.hogged_ns, 2500);
    occupancy_advance(o, 4000); /* pending again until the next sample */
    CHECK_TOTALS(view_of(o, 2), 2500, 0, 0);

    /* a carrier first heard of by its hog */
    occupancy_hog_start(o, 3, 2, NULL, 301, 1000);
    v = view_of(o, 3);
    CHECK_INT(v.state, CARRIER_HOG);
    CHECK_INT(v.vthread_id, 301);
    CHECK_STR(v.culprit, "");
    occupancy_advance(o, 5000);
    CHECK_TOTALS(view_of(o, 3), 4000, 0, 0);
    CHECK_INT(view_of(o, 3).hogged_ns, 4000);

    /* a hog starting after a pin in progress began: that pin ended (its end was lost) */
    occupancy_pin_start(o, 4, 10, REASON_MONITOR, "P.p(P.java:1)", 401, 1000);
    occupancy_advance(o, 5000);
    occupancy_hog_start(o, 4, 3, "H.h(H.java:1)", 401, 4000);
    v = view_of(o, 4);
    CHECK_INT(v.state, CARRIER_HOG);
    CHECK_INT(v.pinned_since, 0);
    CHECK_STR(v.culprit, "H.h(H.java:1)");
    CHECK_INT(v.hogged_ns, 1000);
    occupancy_pin_end(o, 10, 5500); /* that pin's late end: ignored */
    occupancy_advance(o, 6000);
    v = view_of(o, 4);
    CHECK_INT(v.state, CARRIER_HOG);
    CHECK_TOTALS(v, 5000, 4000, 0);
    CHECK_INT(v.hogged_ns, 2000);

    /* a hog whose start is before a pin in progress: that pin ended it, it is not shown */
    occupancy_pin_start(o, 5, 11, REASON_MONITOR, "P.p(P.java:1)", 501, 5500);
    occupancy_advance(o, 6000);
    occupancy_hog_start(o, 5, 4, "H.h(H.java:1)", 501, 5000);
    v = view_of(o, 5);
    CHECK_INT(v.state, CARRIER_PINNED);
    CHECK_INT(v.hogged_since, 0);
    CHECK_STR(v.culprit, "P.p(P.java:1)");
    CHECK_INT(v.hogged_ns, 500);
    occupancy_free(o);
}

/* Hogged carriers are held carriers for the starvation alert. */
static void test_hog_alert(void)
{
    struct occupancy *o = occupancy_new(8, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    struct alert_state st = {0};
    struct alert_rule two = {.k = 2, .hold_ns = 1000};
    occupancy_pin_start(o, 10, 1, REASON_MONITOR, "A.a(A.java:1)", 101, 0);
    occupancy_hog_start(o, 20, 7, "Spin.loop(Spin.java:3)", 201, 200);
    CHECK_INT(occupancy_alert_check(o, &two, 1100, &st), 0);
    CHECK_UINT(st.held, 1);
    CHECK_UINT(st.hogged, 0);
    CHECK_INT(occupancy_alert_check(o, &two, 1200, &st), 0); /* hogged exactly hold_ns: not yet */
    CHECK_INT(occupancy_alert_check(o, &two, 1300, &st), 1); /* raised */
    CHECK_INT(st.active, 1);
    CHECK_UINT(st.held, 2);
    CHECK_UINT(st.hogged, 1);
    CHECK_UINT(st.total, 2);
    CHECK_UINT(st.tid_count, 2);
    CHECK_INT(st.tids[0], 10);
    CHECK_INT(st.tids[1], 20);
    occupancy_hog_end(o, 7, 1400);
    CHECK_INT(occupancy_alert_check(o, &two, 1500, &st), 1); /* cleared */
    CHECK_UINT(st.held, 1);
    CHECK_UINT(st.hogged, 0);
    CHECK_INT(st.tids[0], 10);
    occupancy_free(o);
}

static void test_view_order(void)
{
    struct occupancy *o = occupancy_new(8, 10000, 1000);
    if (!CHECK(o != NULL))
        return;
    occupancy_carrier(o, 5, "worker-b", 0);
    occupancy_carrier(o, 9, "worker-a", 0);
    occupancy_carrier(o, 3, "worker-a", 0);
    occupancy_carrier(o, 1, "worker-c", 0);
    occupancy_mount(o, 7, 70, 0); /* unnamed: "" sorts first */

    struct carrier_view views[6];
    memset(views, 0xA5, sizeof(views));
    CHECK_UINT(occupancy_view(o, views, 6), 5);
    static const int32_t want[] = {7, 3, 9, 5, 1};
    for (size_t i = 0; i < 5; i++)
        CHECK_INT(views[i].tid, want[i]);
    CHECK_STR(views[0].name, "");
    CHECK_STR(views[1].name, "worker-a");
    CHECK_STR(views[4].name, "worker-c");

    /* cap: fills only cap views, still says how many carriers exist */
    struct carrier_view two[3];
    memset(two, 0xA5, sizeof(two));
    CHECK_UINT(occupancy_view(o, two, 2), 5);
    CHECK_INT(two[0].tid, 7);
    CHECK_INT(two[1].tid, 3);
    CHECK_INT(two[2].tid, (int32_t)0xA5A5A5A5); /* untouched */
    CHECK_UINT(occupancy_view(o, NULL, 0), 5);

    /* renames move carriers; NULL keeps the name */
    occupancy_carrier(o, 1, "worker-0", 0);
    occupancy_carrier(o, 7, "worker-d", 0);
    occupancy_carrier(o, 3, NULL, 0);
    CHECK_UINT(occupancy_view(o, views, 6), 5);
    static const int32_t want2[] = {1, 3, 9, 5, 7};
    for (size_t i = 0; i < 5; i++)
        CHECK_INT(views[i].tid, want2[i]);
    CHECK_STR(views[0].name, "worker-0");
    CHECK_STR(views[1].name, "worker-a");
    CHECK_STR(views[4].name, "worker-d");
    CHECK_INT(views[4].vthread_id, 70); /* the rename kept its state */
    occupancy_free(o);
}

int main(void)
{
    CHECK_RUN(test_new_invalid);
    CHECK_RUN(test_exact_timeline);
    CHECK_RUN(test_sampled_timeline);
    CHECK_RUN(test_samples_ignored_when_exact);
    CHECK_RUN(test_pinned_without_mount);
    CHECK_RUN(test_pin_in_progress);
    CHECK_RUN(test_native_block);
    CHECK_RUN(test_window_rolling);
    CHECK_RUN(test_long_gap);
    CHECK_RUN(test_extreme_times);
    CHECK_RUN(test_carrier_limit);
    CHECK_RUN(test_backwards_clamp);
    CHECK_RUN(test_alert);
    CHECK_RUN(test_hog_timeline);
    CHECK_RUN(test_hog_sources);
    CHECK_RUN(test_hog_alert);
    CHECK_RUN(test_view_order);
    CHECK_MAIN_RETURN();
}
