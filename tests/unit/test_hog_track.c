/* Unit tests for agent/carriers/hog_track.c: a carrier's hog decided from samples, each
 * row of the table in hog_track.h. Times in ms for reading; hog= is 200 ms. */
#include "hog_track.h"

#include "check.h"

#define MS 1000000LL
#define HOG (200 * MS)
/* as hogs.c makes it for sample=10ms: gaps up to a quarter of hog=, half the looks of a sampler on time;
 * exact occupancy (every mount counted: nothing to verify) */
static const struct hog_rule RULE = {.hog_ns = HOG, .max_gap_ns = 50 * MS, .min_looks = 10};
/* the same where mounts are counted on demand: 50 ms of counted mounts before a hog */
static const struct hog_rule ON_DEMAND = {.hog_ns = HOG, .max_gap_ns = 50 * MS, .verify_ns = 50 * MS, .min_looks = 10};

static enum hog_step feed(struct hog_track *t, int64_t at_ms, int64_t vid, int running, int pinned, uint64_t mounts,
                          struct hog_ended *ended)
{
    struct hog_sample s = {
        .now = at_ms * MS, .vthread_id = vid, .running = running, .pinned = pinned, .counting = 1, .mounts = mounts};
    return hog_track_sample(t, &s, &RULE, ended);
}

/* A sample of a carrier whose OS thread had cpu_ms of CPU time by then. */
static enum hog_step feed_cpu(struct hog_track *t, int64_t at_ms, int64_t vid, int64_t cpu_ms, struct hog_ended *ended)
{
    struct hog_sample s = {.now = at_ms * MS, .vthread_id = vid, .running = 1, .counting = 1, .cpu_ns = cpu_ms * MS};
    return hog_track_sample(t, &s, &RULE, ended);
}

/* A running sample of thread vid where mounts are counted on demand: counting says whether they
 * were counted at it, and mounts is the count then. */
static enum hog_step feed_on_demand(struct hog_track *t, int64_t at_ms, int64_t vid, int counting, uint64_t mounts,
                                    struct hog_ended *ended)
{
    struct hog_sample s = {.now = at_ms * MS, .vthread_id = vid, .running = 1, .counting = counting, .mounts = mounts};
    return hog_track_sample(t, &s, &ON_DEMAND, ended);
}

/* The same thread running at every sample: a hog once it lasted hog=, from its first sample. */
static void test_hog_starts_and_ends(void)
{
    struct hog_track t = {0};
    struct hog_ended e = {0};
    CHECK_INT(feed(&t, 0, 0, 0, 0, 0, &e), HOG_NOTHING); /* idle */
    CHECK_INT(t.state, HOG_NONE);
    CHECK_INT(feed(&t, 10, 7, 1, 0, 0, &e), HOG_NOTHING);
    CHECK_INT(t.state, HOG_WATCHED);
    for (int ms = 20; ms < 210; ms += 10)
        CHECK_INT(feed(&t, ms, 7, 1, 0, 0, &e), HOG_NOTHING);
    CHECK_INT(feed(&t, 210, 7, 1, 0, 0, &e), HOG_STARTS); /* 200 ms since the first sample */
    CHECK_INT(t.state, HOG_RUNNING);
    CHECK_INT(t.since, 10 * MS);
    CHECK_INT(t.vthread_id, 7);
    CHECK_INT(feed(&t, 220, 7, 1, 0, 0, &e), HOG_NOTHING); /* reported once */
    CHECK_INT(feed(&t, 230, 0, 0, 0, 0, &e), HOG_ENDS);    /* unmounted */
    CHECK_INT(e.vthread_id, 7);
    CHECK_INT(e.since, 10 * MS);
    CHECK_INT(e.last_running, 220 * MS);
    CHECK_INT(e.end, 230 * MS);
    CHECK_INT(t.state, HOG_NONE);
}

/* Another thread mounted ends the hog and is watched from that sample on. */
static void test_other_thread(void)
{
    struct hog_track t = {0};
    struct hog_ended e = {0};
    for (int ms = 0; ms <= 200; ms += 10)
        feed(&t, ms, 7, 1, 0, 0, &e);
    CHECK_INT(t.state, HOG_RUNNING);
    CHECK_INT(feed(&t, 210, 8, 1, 0, 0, &e), HOG_ENDS);
    CHECK_INT(e.end, 210 * MS);
    CHECK_INT(t.state, HOG_WATCHED);
    CHECK_INT(t.vthread_id, 8);
    CHECK_INT(t.since, 210 * MS);
    /* shorter than hog=, then gone: nothing reported */
    CHECK_INT(feed(&t, 300, 8, 1, 0, 0, &e), HOG_NOTHING);
    CHECK_INT(feed(&t, 310, 9, 1, 0, 0, &e), HOG_NOTHING);
    CHECK_INT(t.vthread_id, 9);
}

/* Pinned is no hog (a pin reports it): a pin ends a hog, and a thread pinned throughout is never one. */
static void test_pinned(void)
{
    struct hog_track t = {0};
    struct hog_ended e = {0};
    for (int ms = 0; ms <= 300; ms += 10)
        CHECK_INT(feed(&t, ms, 7, 1, 1, 0, &e), HOG_NOTHING);
    CHECK_INT(t.state, HOG_NONE);
    for (int ms = 310; ms <= 510; ms += 10)
        feed(&t, ms, 7, 1, 0, 0, &e);
    CHECK_INT(t.state, HOG_RUNNING);
    CHECK_INT(feed(&t, 520, 7, 1, 1, 0, &e), HOG_ENDS);
    CHECK_INT(e.end, 520 * MS);
    CHECK_INT(t.state, HOG_NONE);
}

/* A mount in between (exact occupancy counts them): a yield and a mount again start over. */
static void test_mounts(void)
{
    struct hog_track t = {0};
    struct hog_ended e = {0};
    for (int ms = 0; ms <= 400; ms += 10)
        CHECK_INT(feed(&t, ms, 7, 1, 0, (uint64_t)ms / 10, &e), HOG_NOTHING); /* mounted again each time */
    CHECK_INT(t.state, HOG_WATCHED);
    CHECK_INT(t.since, 400 * MS);
    for (int ms = 410; ms <= 600; ms += 10)
        feed(&t, ms, 7, 1, 0, 40, &e);
    CHECK_INT(t.state, HOG_RUNNING);
    CHECK_INT(feed(&t, 610, 7, 1, 0, 41, &e), HOG_ENDS);
    CHECK_INT(t.state, HOG_WATCHED); /* the new mount is watched afresh */
}

/* Asleep once is a pause (GC, a safepoint); asleep twice ends it at the first. */
static void test_pause(void)
{
    struct hog_track t = {0};
    struct hog_ended e = {0};
    for (int ms = 0; ms <= 90; ms += 10)
        feed(&t, ms, 7, 1, 0, 0, &e);
    CHECK_INT(feed(&t, 100, 7, 0, 0, 0, &e), HOG_NOTHING); /* paused */
    CHECK_INT(t.state, HOG_WATCHED);
    CHECK_INT(feed(&t, 110, 7, 1, 0, 0, &e), HOG_NOTHING); /* runs on */
    CHECK_INT(t.since, 0);
    for (int ms = 120; ms < 200; ms += 10)
        feed(&t, ms, 7, 1, 0, 0, &e);
    CHECK_INT(feed(&t, 200, 7, 1, 0, 0, &e), HOG_STARTS);
    for (int ms = 210; ms < 250; ms += 10)
        feed(&t, ms, 7, 1, 0, 0, &e);
    CHECK_INT(feed(&t, 250, 7, 0, 0, 0, &e), HOG_NOTHING);
    CHECK_INT(feed(&t, 260, 7, 0, 0, 0, &e), HOG_ENDS); /* asleep: it blocked */
    CHECK_INT(e.end, 250 * MS);
    CHECK_INT(e.last_running, 240 * MS);
    CHECK_INT(t.state, HOG_NONE);
    /* a pause, then another thread: ended at the pause */
    for (int ms = 300; ms <= 500; ms += 10)
        feed(&t, ms, 7, 1, 0, 0, &e);
    CHECK_INT(t.state, HOG_RUNNING);
    CHECK_INT(feed(&t, 510, 7, 0, 0, 0, &e), HOG_NOTHING);
    CHECK_INT(feed(&t, 520, 8, 1, 0, 0, &e), HOG_ENDS);
    CHECK_INT(e.end, 510 * MS);
    CHECK_INT(t.vthread_id, 8);
    /* a sleeping thread never becomes one */
    struct hog_track s = {0};
    for (int ms = 0; ms <= 400; ms += 10)
        CHECK_INT(feed(&s, ms, 7, 0, 0, 0, NULL), HOG_NOTHING);
    CHECK_INT(s.state, HOG_NONE);
}

/* Samples late (the JVM throttled by a 20 % CPU quota: two looks 10 ms apart, then none for 80 ms, and
 * a carrier resumes the thread it ran when frozen): the thread may have yielded and mounted again unseen
 * in each gap, so no watch goes on across one and a yielding thread is no hog (JDK 21 had one so in 3
 * runs of 6); dense samples again find a real one, from the first sample after the gap. */
static void test_late_samples(void)
{
    struct hog_track t = {0};
    struct hog_ended e = {0};
    for (int window = 0; window < 10; window++)
        for (int ms = window * 100; ms <= window * 100 + 10; ms += 10)
            CHECK_INT(feed(&t, ms, 7, 1, 0, 0, &e), HOG_NOTHING);
    CHECK_INT(t.state, HOG_WATCHED);
    CHECK_INT(t.since, 900 * MS); /* started over at the last late sample */
    for (int ms = 920; ms < 1100; ms += 10)
        CHECK_INT(feed(&t, ms, 7, 1, 0, 0, &e), HOG_NOTHING);
    CHECK_INT(feed(&t, 1100, 7, 1, 0, 0, &e), HOG_STARTS);
    CHECK_INT(t.since, 900 * MS);
    /* a hog reported goes on across a gap, and ends as ever */
    CHECK_INT(feed(&t, 1300, 7, 1, 0, 0, &e), HOG_NOTHING);
    CHECK_INT(t.state, HOG_RUNNING);
    CHECK_INT(feed(&t, 1310, 0, 0, 0, 0, &e), HOG_ENDS);
    CHECK_INT(e.since, 900 * MS);
    CHECK_INT(e.last_running, 1300 * MS);
    /* the first sample after a long gap starts a watch of its own */
    struct hog_track u = {0};
    CHECK_INT(feed(&u, 0, 0, 0, 0, 0, NULL), HOG_NOTHING);
    CHECK_INT(feed(&u, 500, 7, 1, 0, 0, NULL), HOG_NOTHING);
    CHECK_INT(u.since, 500 * MS);
}

/* A sampler somewhat late (a look every 40 ms, within the 50 ms a watch goes on across): a hog needs
 * min_looks samples, so it is found later than hog= (at the 10th look), timed from its first; a gap of
 * exactly max_gap is no gap. */
static void test_few_looks(void)
{
    struct hog_track t = {0};
    struct hog_ended e = {0};
    for (int ms = 0; ms < 360; ms += 40)
        CHECK_INT(feed(&t, ms, 7, 1, 0, 0, &e), HOG_NOTHING); /* 200 ms passed at the 6th look: too few */
    CHECK_INT(t.looks, 9);
    CHECK_INT(feed(&t, 360, 7, 1, 0, 0, &e), HOG_STARTS);
    CHECK_INT(t.since, 0);
    struct hog_track u = {0};
    for (int ms = 0; ms < 450; ms += 50)
        CHECK_INT(feed(&u, ms, 7, 1, 0, 0, &e), HOG_NOTHING);
    CHECK_INT(feed(&u, 450, 7, 1, 0, 0, &e), HOG_STARTS);
    CHECK_INT(u.since, 0);
}

/* A carrier frozen off the CPUs (runnable, every CPU taken by 6 busy loops on 2 cores) with a yielding
 * thread mounted: a sampler on time sees that thread at every look for 300 ms, as it would a hog (JDK 21
 * reported one so, in a clean-clone CI run). The carrier's CPU time did not move, so the thread could
 * not run: those looks say nothing, and when the carrier runs again another thread is mounted. */
static void test_frozen_carrier(void)
{
    struct hog_track t = {0};
    struct hog_ended e = {0};
    CHECK_INT(feed_cpu(&t, 0, 7, 100, &e), HOG_NOTHING); /* taking turns: 7, 8, 9, ... */
    CHECK_INT(feed_cpu(&t, 10, 8, 104, &e), HOG_NOTHING);
    CHECK_INT(feed_cpu(&t, 20, 7, 109, &e), HOG_NOTHING);
    for (int ms = 30; ms <= 330; ms += 10) /* frozen with 7 mounted */
        CHECK_INT(feed_cpu(&t, ms, 7, 109, &e), HOG_NOTHING);
    CHECK_INT(t.looks, 1);
    CHECK_INT(t.state, HOG_WATCHED);
    CHECK_INT(feed_cpu(&t, 340, 9, 112, &e), HOG_NOTHING); /* running again: turns again */
    CHECK_INT(t.vthread_id, 9);
    /* a real hog on a starved carrier (it runs between every other pair of looks) is still one, once
     * min_looks looks that it ran saw it, timed from its first */
    struct hog_track u = {0};
    int64_t cpu = 100;
    enum hog_step step = HOG_NOTHING;
    int ms;
    for (ms = 0; step == HOG_NOTHING && ms <= 1000; ms += 10) {
        cpu += (ms / 10) % 2 ? 0 : 3;
        step = feed_cpu(&u, ms, 7, cpu, &e);
    }
    CHECK_INT(step, HOG_STARTS);
    CHECK_INT(ms - 10, 200); /* its 11th look with CPU time: 200 ms after the first, 10 looks after it */
    CHECK_INT(u.since, 0);
    CHECK_INT(feed_cpu(&u, ms, 7, cpu, &e), HOG_NOTHING); /* frozen again: a hog goes on */
    CHECK_INT(u.state, HOG_RUNNING);
    CHECK_INT(feed_cpu(&u, ms + 10, 8, cpu + 1, &e), HOG_ENDS);
    CHECK_INT(e.last_running, (ms - 10) * MS);
}

/* Mounts counted on demand (sampled occupancy, hogs.c): a yielder that the JDK hands its carrier
 * straight back is seen at every sample, as a hog is (CarrierHog yieldwork: false hogs in 3 runs of 3
 * on JDK 21 before). A hog is reported only after verify_ns with mounts counted and none seen:
 * counting that begins takes its first count as the base, whatever it is; a mount then starts the
 * watch over; counting that stops forgets the base, and starting again takes a new one; a window in
 * which the carrier hardly ran proves nothing. */
static void test_counted_on_demand(void)
{
    struct hog_track t = {0};
    struct hog_ended e = {0};
    for (int ms = 0; ms < 150; ms += 10) /* not counted: nothing to compare, the watch goes on */
        CHECK_INT(feed_on_demand(&t, ms, 7, 0, 0, &e), HOG_NOTHING);
    CHECK_INT(feed_on_demand(&t, 150, 7, 1, 1234, &e), HOG_NOTHING); /* counting began: the base */
    CHECK_INT(t.counted_since, 150 * MS);
    CHECK_INT(feed_on_demand(&t, 160, 7, 1, 1240, &e), HOG_NOTHING); /* it yielded and came back */
    CHECK_INT(t.state, HOG_WATCHED);
    CHECK_INT(t.since, 160 * MS); /* watched afresh from the sample that saw the mount */
    CHECK_INT(t.counted_since, 160 * MS);
    for (int ms = 170; ms <= 400; ms += 10) /* yields between every two samples: never a hog */
        CHECK_INT(feed_on_demand(&t, ms, 7, 1, 1240 + (uint64_t)ms, &e), HOG_NOTHING);
    CHECK_INT(t.state, HOG_WATCHED);

    /* a true hog: counted from 150 ms of its watch, no mount; hog= reached at 200 ms and verified
     * (50 ms counted) by then, so it is reported then, from its first sample */
    struct hog_track h = {0};
    enum hog_step step = HOG_NOTHING;
    int ms;
    for (ms = 0; step == HOG_NOTHING && ms <= 1000; ms += 10)
        step = feed_on_demand(&h, ms, 7, ms >= 150, 99, &e);
    CHECK_INT(step, HOG_STARTS);
    CHECK_INT(ms - 10, 200);
    CHECK_INT(h.since, 0);
    /* counted for less than verify_ns when hog= is reached: reported once it has been */
    struct hog_track v = {0};
    step = HOG_NOTHING;
    for (ms = 0; step == HOG_NOTHING && ms <= 1000; ms += 10)
        step = feed_on_demand(&v, ms, 7, ms >= 190, 5, &e);
    CHECK_INT(step, HOG_STARTS);
    CHECK_INT(ms - 10, 240);
    CHECK_INT(v.since, 0);
    /* counting stopped and began again: the new count is a new base, not a mount */
    struct hog_track w = {0};
    step = HOG_NOTHING;
    for (ms = 0; step == HOG_NOTHING && ms <= 1000; ms += 10)
        step = feed_on_demand(&w, ms, 7, ms != 180, ms < 180 ? 10 : 20, &e);
    CHECK_INT(step, HOG_STARTS);
    CHECK_INT(ms - 10, 240); /* 50 ms counted from 190 ms */
    CHECK_INT(w.since, 0);
    /* counted, but the carrier had 1 ms of CPU in every 10 (a starved machine): a thread that could
     * not run could not yield either, so the window proves nothing until the carrier has run half
     * of it (25 ms of CPU); the hog is still timed from its first sample */
    struct hog_track c = {0};
    step = HOG_NOTHING;
    for (ms = 0; step == HOG_NOTHING && ms <= 1000; ms += 10) {
        struct hog_sample s = {.now = ms * MS,
                               .vthread_id = 7,
                               .running = 1,
                               .counting = ms >= 150,
                               .mounts = 3,
                               .cpu_ns = (1000 + ms / 10) * MS};
        step = hog_track_sample(&c, &s, &ON_DEMAND, &e);
    }
    CHECK_INT(step, HOG_STARTS);
    CHECK_INT(ms - 10, 400); /* 25 ms of CPU counted from 150 ms */
    CHECK_INT(c.since, 0);
    /* never counted (the mount events are not available): hog= alone, as before */
    struct hog_track n = {0};
    struct hog_rule unverified = ON_DEMAND;
    unverified.verify_ns = 0;
    step = HOG_NOTHING;
    for (ms = 0; step == HOG_NOTHING && ms <= 1000; ms += 10) {
        struct hog_sample s = {.now = ms * MS, .vthread_id = 7, .running = 1};
        step = hog_track_sample(&n, &s, &unverified, &e);
    }
    CHECK_INT(step, HOG_STARTS);
    CHECK_INT(ms - 10, 200);
}

int main(void)
{
    CHECK_RUN(test_hog_starts_and_ends);
    CHECK_RUN(test_other_thread);
    CHECK_RUN(test_pinned);
    CHECK_RUN(test_mounts);
    CHECK_RUN(test_pause);
    CHECK_RUN(test_late_samples);
    CHECK_RUN(test_few_looks);
    CHECK_RUN(test_frozen_carrier);
    CHECK_RUN(test_counted_on_demand);
    CHECK_MAIN_RETURN();
}
