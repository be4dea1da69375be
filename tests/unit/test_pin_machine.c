/* Unit tests for agent/pinpath/pin_machine.c: every transition of the writer-side
 * pin machine (the table in pin_machine.h, rows cited), driven with
 * synthetic starts, ends, verdicts, ticks and stack-read results. */
#include "pin_machine.h"

#include <stdlib.h>

#include "check.h"

#define MS 1000000LL
#define THRESHOLD (20 * MS)

static struct pin_machine *m;

static void fresh(uint64_t threshold_ns)
{
    if (!m)
        m = malloc(sizeof(*m));
    pm_init(m, threshold_ns);
}

static struct pm_action start(uint64_t id, int64_t t, int maybe, enum pm_stack stack)
{
    struct pm_start s = {.pin_id = id, .time_ns = t, .maybe = maybe, .stack = stack};
    return pm_start(m, &s);
}

static struct pm_action end(uint64_t id, int64_t t, int has_frames, int same_frames)
{
    struct pm_end e = {.pin_id = id, .time_ns = t, .has_frames = has_frames, .same_frames = same_frames};
    return pm_end(m, pm_find(m, id), &e);
}

static enum pm_state state(uint64_t id)
{
    return pm_state_of(m, pm_find(m, id));
}

#define CHECK_STATE(id, s) CHECK_STR(pm_state_name(state(id)), pm_state_name(s))

/* The writer looks in time: a pin with its stack crosses and is reported,
 * then ends (rows 3, 8, 9, 22). */
static void test_stacked_reported_then_ended(void)
{
    fresh(THRESHOLD);
    struct pm_action a = start(1, 1000 * MS, 0, PM_STACK_FULL);
    CHECK_UINT(a.act, PM_ACT_NAME_START);
    CHECK_INT(a.due, THRESHOLD);
    CHECK_STATE(1, PM_STACKED);
    a = pm_tick(m, pm_find(m, 1), 1005 * MS);
    CHECK_UINT(a.act, 0);
    CHECK_INT(a.due, 15 * MS);
    CHECK_STATE(1, PM_STACKED);
    a = pm_tick(m, pm_find(m, 1), 1020 * MS);
    CHECK_UINT(a.act, PM_ACT_REPORT_START);
    CHECK_STATE(1, PM_REPORTED);
    a = pm_tick(m, pm_find(m, 1), 1030 * MS); /* row 25: reported pins want no tick */
    CHECK_UINT(a.act, 0);
    CHECK_INT(a.due, PM_NOT_DUE);
    a = end(1, 1050 * MS, 0, 0);
    CHECK_UINT(a.act, PM_ACT_REPORT_END | PM_ACT_FREE);
    CHECK_INT(pm_find(m, 1), -1);
    CHECK_UINT(pm_count(m), 0);
}

/* A short pin only counts (row 18), whatever came with its start. */
static void test_below_threshold(void)
{
    fresh(THRESHOLD);
    start(1, 0, 0, PM_STACK_FULL);
    start(2, 0, 0, PM_STACK_FRAMES);
    start(3, 0, 0, PM_STACK_NONE);
    CHECK_STATE(3, PM_DEFERRED);
    CHECK_UINT(end(1, 19 * MS, 0, 0).act, PM_ACT_BELOW | PM_ACT_FREE);
    CHECK_UINT(end(2, 19 * MS, 0, 0).act, PM_ACT_BELOW | PM_ACT_FREE); /* no settled mark: not needed */
    CHECK_UINT(end(3, 19 * MS, 1, 0).act, PM_ACT_BELOW | PM_ACT_FREE); /* the end's frames are not named */
    CHECK_UINT(pm_count(m), 0);
}

/* The writer looks late: the pin crossed and ended before any tick (rows 19-21). */
static void test_writer_looks_late(void)
{
    fresh(THRESHOLD);
    start(1, 0, 0, PM_STACK_FULL);
    CHECK_UINT(end(1, 20 * MS, 0, 0).act, PM_ACT_REPORT_START | PM_ACT_REPORT_END | PM_ACT_FREE); /* row 19 */
    /* deferred: the ending callback took the stack (row 21) */
    start(2, 0, 0, PM_STACK_NONE);
    CHECK_UINT(end(2, 30 * MS, 1, 0).act, PM_ACT_NAME_END | PM_ACT_REPORT_START | PM_ACT_REPORT_END | PM_ACT_FREE);
    /* deferred, the end without frames (its stack read failed): reported without one */
    start(3, 0, 0, PM_STACK_NONE);
    CHECK_UINT(end(3, 30 * MS, 0, 0).act, PM_ACT_REPORT_START | PM_ACT_REPORT_END | PM_ACT_FREE);
    /* frames-only: the end's stack, with its monitors, when it stands where the start did (row 20) */
    start(4, 0, 1, PM_STACK_FRAMES);
    pm_verdict(m, pm_find(m, 4), 1);
    CHECK_UINT(end(4, 30 * MS, 1, 1).act, PM_ACT_NAME_END | PM_ACT_REPORT_START | PM_ACT_REPORT_END | PM_ACT_FREE);
    /* ... and the start's frames, without monitors, when the end is another pin's */
    start(5, 0, 1, PM_STACK_FRAMES);
    pm_verdict(m, pm_find(m, 5), 1);
    CHECK_UINT(end(5, 30 * MS, 1, 0).act, PM_ACT_REPORT_START | PM_ACT_REPORT_END | PM_ACT_FREE);
    CHECK_UINT(pm_count(m), 0);
}

/* A deferred stack: taken by the writer when the pin crosses (rows 5, 11, 15). */
static void test_deferred_stack_taken(void)
{
    fresh(THRESHOLD);
    struct pm_action a = start(1, 0, 0, PM_STACK_NONE);
    CHECK_UINT(a.act, 0);
    CHECK_STATE(1, PM_DEFERRED);
    a = pm_tick(m, pm_find(m, 1), 25 * MS);
    CHECK_UINT(a.act, PM_ACT_TAKE_STACK);
    CHECK_STATE(1, PM_READING_S);
    a = pm_tick(m, pm_find(m, 1), 25 * MS); /* row 25: no second read while one is out */
    CHECK_UINT(a.act, 0);
    a = pm_result(m, pm_find(m, 1), PM_READ_OK, 25 * MS);
    CHECK_UINT(a.act, PM_ACT_NAME_TAKEN | PM_ACT_REPORT_START);
    CHECK_STATE(1, PM_REPORTED);
    CHECK_UINT(end(1, 40 * MS, 1, 0).act, PM_ACT_REPORT_END | PM_ACT_FREE); /* a reported pin ignores the end's stack */
}

/* A deferred stack that cannot be taken yet: tried every ms until
 * threshold + 100 ms, then reported without one (rows 16, 17), unless the
 * end comes first with it (row 21 from a retry). */
static void test_deferred_stack_window(void)
{
    fresh(THRESHOLD);
    start(1, 0, 0, PM_STACK_NONE);
    int slot = pm_find(m, 1);
    pm_tick(m, slot, 20 * MS);
    struct pm_action a = pm_result(m, slot, PM_READ_AGAIN, 20 * MS);
    CHECK_UINT(a.act, 0);
    CHECK_INT(a.due, PM_RETRY_NS);
    CHECK_STATE(1, PM_DEFERRED);
    /* the next tick, 1 ms on: a new read */
    CHECK_UINT(pm_tick(m, slot, 21 * MS).act, PM_ACT_TAKE_STACK);
    a = pm_result(m, slot, PM_READ_AGAIN, THRESHOLD + PM_WINDOW_NS - 1);
    CHECK_UINT(a.act, 0);
    CHECK_INT(a.due, PM_RETRY_NS);
    CHECK_UINT(pm_tick(m, slot, THRESHOLD + PM_WINDOW_NS).act, PM_ACT_TAKE_STACK);
    a = pm_result(m, slot, PM_READ_AGAIN, THRESHOLD + PM_WINDOW_NS);
    CHECK_UINT(a.act, PM_ACT_REPORT_START); /* no stack: the executor counts pins_without_stack */
    CHECK_INT(a.due, PM_NOT_DUE);
    CHECK_STATE(1, PM_REPORTED);
    /* the end of a pin retrying brings the stack */
    start(2, 0, 0, PM_STACK_NONE);
    slot = pm_find(m, 2);
    pm_tick(m, slot, 20 * MS);
    pm_result(m, slot, PM_READ_AGAIN, 20 * MS);
    CHECK_UINT(end(2, 22 * MS, 1, 0).act, PM_ACT_NAME_END | PM_ACT_REPORT_START | PM_ACT_REPORT_END | PM_ACT_FREE);
    /* a writer that looked late (past the window) still tries for a window from its first failed
     * read: the thread may be woken and waiting for a CPU to run its ending callback, whose record
     * brings the stack (JNI pins under ASan and load were reported without one so, in a clean-clone
     * CI run: one lasted 128 ms of a 50 ms sleep) */
    start(4, 0, 0, PM_STACK_NONE);
    slot = pm_find(m, 4);
    CHECK_UINT(pm_tick(m, slot, 300 * MS).act, PM_ACT_TAKE_STACK);
    CHECK_INT(pm_result(m, slot, PM_READ_AGAIN, 300 * MS).due, PM_RETRY_NS);
    CHECK_STATE(4, PM_DEFERRED);
    CHECK_UINT(pm_tick(m, slot, 301 * MS).act, PM_ACT_TAKE_STACK);
    CHECK_INT(pm_result(m, slot, PM_READ_AGAIN, 300 * MS + PM_WINDOW_NS - 1).due, PM_RETRY_NS);
    CHECK_UINT(end(4, 390 * MS, 1, 0).act, PM_ACT_NAME_END | PM_ACT_REPORT_START | PM_ACT_REPORT_END | PM_ACT_FREE);
    start(5, 0, 0, PM_STACK_NONE); /* and past that window too, reported with what it has */
    slot = pm_find(m, 5);
    pm_tick(m, slot, 300 * MS);
    pm_result(m, slot, PM_READ_AGAIN, 300 * MS);
    pm_tick(m, slot, 300 * MS + PM_WINDOW_NS);
    CHECK_UINT(pm_result(m, slot, PM_READ_AGAIN, 300 * MS + PM_WINDOW_NS).act, PM_ACT_REPORT_START);
    CHECK_STATE(5, PM_REPORTED);
    /* a read that found other frames counts as not taken (the executor compares only frames-only starts) */
    start(3, 0, 0, PM_STACK_NONE);
    slot = pm_find(m, 3);
    pm_tick(m, slot, 20 * MS);
    CHECK_INT(pm_result(m, slot, PM_READ_OTHER, 20 * MS).due, PM_RETRY_NS);
    CHECK_STATE(3, PM_DEFERRED);
}

/* JDK 24+ maybe-pin that is not a pin: counted, its end costs no stack
 * (row 6: settled when only frames came); with its stack in hand
 * (threshold=0 takes the full stack) nothing to settle. */
static void test_maybe_not_a_pin(void)
{
    fresh(THRESHOLD);
    struct pm_action a = start(7, 0, 1, PM_STACK_FRAMES);
    CHECK_UINT(a.act, PM_ACT_CHECK_PIN);
    CHECK_STATE(7, PM_UNDECIDED);
    CHECK_UINT(pm_tick(m, a.slot, 50 * MS).act, 0); /* row 25 */
    a = pm_verdict(m, a.slot, 0);
    CHECK_UINT(a.act, PM_ACT_NOT_PIN | PM_ACT_SETTLED | PM_ACT_FREE);
    CHECK_UINT(pm_count(m), 0);
    /* its end, even a long one with the stack the end took, is an end without a start (row 23) */
    a = end(7, 500 * MS, 1, 0);
    CHECK_UINT(a.act, 0);
    CHECK_INT(a.slot, -1);
    a = start(8, 0, 1, PM_STACK_FULL);
    CHECK_UINT(pm_verdict(m, a.slot, 0).act, PM_ACT_NOT_PIN | PM_ACT_FREE);
    /* a verdict on a pin no longer undecided changes nothing */
    a = start(9, 0, 0, PM_STACK_FULL);
    CHECK_UINT(pm_verdict(m, a.slot, 0).act, 0);
    CHECK_STATE(9, PM_STACKED);
}

/* JDK 24+ maybe-pin that pins, frames only: its monitors are read when it
 * crosses, and the start is settled then (rows 7, 10, 12). */
static void test_maybe_pin_monitors(void)
{
    fresh(THRESHOLD);
    struct pm_action a = start(1, 0, 1, PM_STACK_FRAMES);
    a = pm_verdict(m, a.slot, 1);
    CHECK_UINT(a.act, PM_ACT_NAME_START);
    CHECK_STATE(1, PM_FRAMES);
    CHECK_INT(pm_tick(m, a.slot, 19 * MS).due, 1 * MS);
    a = pm_tick(m, a.slot, 20 * MS);
    CHECK_UINT(a.act, PM_ACT_TAKE_MONITORS);
    CHECK_STATE(1, PM_READING_M);
    a = pm_result(m, a.slot, PM_READ_OK, 20 * MS);
    CHECK_UINT(a.act, PM_ACT_NAME_TAKEN | PM_ACT_SETTLED | PM_ACT_REPORT_START);
    CHECK_STATE(1, PM_REPORTED);
    CHECK_UINT(end(1, 90 * MS, 0, 0).act, PM_ACT_REPORT_END | PM_ACT_FREE);
}

/* The monitors' retry window (threshold + 100 ms): a read that fails or
 * returns another pin's frames is tried again; past the window the pin is
 * reported with the start's frames (rows 13, 14); the end, if first, brings
 * them when it stands where the start did (row 20 from a retry). */
static void test_monitors_window(void)
{
    fresh(THRESHOLD);
    struct pm_action a = start(1, 0, 1, PM_STACK_FRAMES);
    pm_verdict(m, a.slot, 1);
    int slot = a.slot;
    pm_tick(m, slot, 20 * MS);
    a = pm_result(m, slot, PM_READ_OTHER, 20 * MS); /* another pin's frames: never lent to this one */
    CHECK_UINT(a.act, 0);
    CHECK_INT(a.due, PM_RETRY_NS);
    CHECK_STATE(1, PM_FRAMES);
    CHECK_UINT(pm_tick(m, slot, 21 * MS).act, PM_ACT_TAKE_MONITORS);
    a = pm_result(m, slot, PM_READ_AGAIN, THRESHOLD + PM_WINDOW_NS - 1);
    CHECK_UINT(a.act, 0);
    CHECK_STATE(1, PM_FRAMES);
    CHECK_UINT(pm_tick(m, slot, THRESHOLD + PM_WINDOW_NS).act, PM_ACT_TAKE_MONITORS);
    a = pm_result(m, slot, PM_READ_OTHER, THRESHOLD + PM_WINDOW_NS);
    CHECK_UINT(a.act, PM_ACT_SETTLED | PM_ACT_REPORT_START); /* the frames it has, without monitors */
    CHECK_STATE(1, PM_REPORTED);
    /* retrying, then the end with the start's frames */
    a = start(2, 0, 1, PM_STACK_FRAMES);
    pm_verdict(m, a.slot, 1);
    slot = a.slot;
    pm_tick(m, slot, 20 * MS);
    pm_result(m, slot, PM_READ_AGAIN, 20 * MS);
    CHECK_UINT(end(2, 21 * MS, 1, 1).act, PM_ACT_NAME_END | PM_ACT_REPORT_START | PM_ACT_REPORT_END | PM_ACT_FREE);
    /* the window is counted from the start, to the clock of the result */
    a = start(3, 1000 * MS, 1, PM_STACK_FRAMES);
    pm_verdict(m, a.slot, 1);
    pm_tick(m, a.slot, 1000 * MS + THRESHOLD);
    CHECK_INT(pm_result(m, a.slot, PM_READ_AGAIN, 1000 * MS + THRESHOLD + PM_WINDOW_NS - 1).due, PM_RETRY_NS);
}

/* threshold=0: every start is its own crossing (rows 3 + 9, and 10, 11 for
 * starts that cannot come then but must not be lost). */
static void test_threshold_zero(void)
{
    fresh(0);
    struct pm_action a = start(1, 5 * MS, 0, PM_STACK_FULL);
    CHECK_UINT(a.act, PM_ACT_NAME_START | PM_ACT_REPORT_START);
    CHECK_STATE(1, PM_REPORTED);
    CHECK_UINT(end(1, 5 * MS, 0, 0).act, PM_ACT_REPORT_END | PM_ACT_FREE); /* a 0 ns pin is reported */
    /* a maybe-pin with its stack: reported as soon as the verdict says it pins */
    a = start(2, 5 * MS, 1, PM_STACK_FULL);
    CHECK_UINT(a.act, PM_ACT_CHECK_PIN);
    CHECK_UINT(pm_verdict(m, a.slot, 1).act, PM_ACT_NAME_START | PM_ACT_REPORT_START);
    a = start(3, 5 * MS, 0, PM_STACK_NONE);
    CHECK_UINT(a.act, PM_ACT_TAKE_STACK);
    CHECK_UINT(pm_result(m, a.slot, PM_READ_AGAIN, 5 * MS).due, PM_RETRY_NS);
    CHECK_UINT(pm_tick(m, a.slot, 6 * MS).act, PM_ACT_TAKE_STACK);
    a = start(4, 5 * MS, 0, PM_STACK_FRAMES);
    CHECK_UINT(a.act, PM_ACT_NAME_START | PM_ACT_TAKE_MONITORS);
}

/* Queue overflow: a start whose end was lost stays in progress (and is
 * reported when it crosses); an end whose start was lost is ignored (row 23);
 * a full table drops the start (row 1) and later its end. */
static void test_overflow(void)
{
    fresh(THRESHOLD);
    struct pm_action a = end(42, 10 * MS, 1, 1);
    CHECK_UINT(a.act, 0);
    CHECK_INT(a.slot, -1);
    start(1, 0, 0, PM_STACK_FULL); /* its end never comes */
    CHECK_UINT(pm_tick(m, pm_find(m, 1), 30 * MS).act, PM_ACT_REPORT_START);
    CHECK_UINT(pm_count(m), 1);
    /* an end for the wrong pin id in a live slot is not taken for that pin */
    struct pm_end e = {.pin_id = 2, .time_ns = 50 * MS};
    CHECK_UINT(pm_end(m, pm_find(m, 1), &e).act, 0);
    CHECK_STATE(1, PM_REPORTED);

    fresh(THRESHOLD);
    for (uint64_t id = 1; id <= PM_MAX_PINS; id++)
        if (!CHECK(start(id, 0, 0, PM_STACK_NONE).slot >= 0))
            return;
    a = start(PM_MAX_PINS + 1, 0, 0, PM_STACK_FULL);
    CHECK_UINT(a.act, PM_ACT_DROPPED);
    CHECK_INT(a.slot, -1);
    CHECK_UINT(end(PM_MAX_PINS + 1, 30 * MS, 1, 0).act, 0);
    /* a freed slot is taken again; the others keep theirs */
    int slot7 = pm_find(m, 7), slot8 = pm_find(m, 8);
    CHECK_UINT(end(7, 1 * MS, 0, 0).act, PM_ACT_BELOW | PM_ACT_FREE);
    a = start(PM_MAX_PINS + 2, 0, 0, PM_STACK_FULL);
    CHECK_INT(a.slot, slot7);
    CHECK_INT(pm_find(m, 8), slot8);
    CHECK_UINT(pm_count(m), PM_MAX_PINS);
}

/* Iteration sees every pin in progress once, also after removals (the
 * writer ticks each, the watchdog asks by carrier). */
static void test_iteration(void)
{
    fresh(THRESHOLD);
    for (uint64_t id = 1; id <= 5; id++)
        start(id, 0, 0, PM_STACK_FULL);
    end(2, 1 * MS, 0, 0);
    end(5, 1 * MS, 0, 0);
    uint64_t seen = 0;
    for (unsigned i = 0; i < pm_count(m); i++)
        seen |= 1u << m->lives[pm_slot_at(m, i)].pin_id;
    CHECK_UINT(seen, (1u << 1) | (1u << 3) | (1u << 4));
    CHECK_INT(pm_state_of(m, -1), PM_FREE);
    CHECK_STR(pm_state_name(PM_READING_M), "READING_M");
}

/* Ends in the states that last only within one executor call (rows 24 and
 * the READING_* note): no pin is lost or reported twice. */
static void test_transient_states(void)
{
    fresh(THRESHOLD);
    start(1, 0, 1, PM_STACK_FRAMES);
    CHECK_UINT(end(1, 30 * MS, 1, 1).act, PM_ACT_NOT_PIN | PM_ACT_FREE);
    struct pm_action a = start(2, 0, 0, PM_STACK_NONE);
    pm_tick(m, a.slot, 20 * MS);
    CHECK_UINT(end(2, 30 * MS, 1, 0).act, PM_ACT_NAME_END | PM_ACT_REPORT_START | PM_ACT_REPORT_END | PM_ACT_FREE);
    a = start(3, 0, 1, PM_STACK_FRAMES);
    pm_verdict(m, a.slot, 1);
    pm_tick(m, a.slot, 20 * MS);
    CHECK_UINT(end(3, 30 * MS, 1, 0).act, PM_ACT_REPORT_START | PM_ACT_REPORT_END | PM_ACT_FREE);
    /* a result nobody asked for changes nothing */
    a = start(4, 0, 0, PM_STACK_FULL);
    CHECK_UINT(pm_result(m, a.slot, PM_READ_OK, 30 * MS).act, 0);
    CHECK_STATE(4, PM_STACKED);
}

int main(void)
{
    CHECK_RUN(test_stacked_reported_then_ended);
    CHECK_RUN(test_below_threshold);
    CHECK_RUN(test_writer_looks_late);
    CHECK_RUN(test_deferred_stack_taken);
    CHECK_RUN(test_deferred_stack_window);
    CHECK_RUN(test_maybe_not_a_pin);
    CHECK_RUN(test_maybe_pin_monitors);
    CHECK_RUN(test_monitors_window);
    CHECK_RUN(test_threshold_zero);
    CHECK_RUN(test_overflow);
    CHECK_RUN(test_iteration);
    CHECK_RUN(test_transient_states);
    free(m);
    CHECK_MAIN_RETURN();
}
