/* Unit tests for agent/carriers/native_awake.c: a NATIVE_BLOCK's native call found running
 * between its sleeps, each row of the table in native_awake.h. Times in ms; the rule is
 * the watchdog's for sample=10ms: three periods of CPU, or three samples. */
#include "native_awake.h"

#include "check.h"

#define MS 1000000LL
static const struct native_awake_rule RULE = {.cpu_budget_ns = 30 * MS, .max_samples = 3};

static enum native_awake_verdict awake(struct native_awake *a, int64_t at_ms, int64_t cpu_ms)
{
    return native_awake_sample(a, at_ms * MS, cpu_ms * MS, &RULE);
}

/* The first awake sample notes its time and CPU; the block goes on. */
static void test_first_sample(void)
{
    struct native_awake a = {0};
    CHECK_INT(awake(&a, 100, 40), NATIVE_AWAKE_SAME);
    CHECK_INT(a.samples, 1);
    CHECK_INT(a.since, 100 * MS);
    CHECK_INT(a.cpu_ns, 40 * MS);
}

/* The clean-clone run that split one call: 15 ms of CPU between two sleeps, stretched by a
 * loaded machine over five samples that each found it running with a little more CPU. Under
 * the budget: the same block. (Counted by samples, the fourth had ended it.) */
static void test_stretched_moment(void)
{
    struct native_awake a = {0};
    int64_t cpu[] = {40, 43, 46, 50, 53};
    for (int i = 0; i < 5; i++)
        CHECK_INT(awake(&a, 100 + 10 * i, cpu[i]), NATIVE_AWAKE_SAME);
    CHECK_INT(a.since, 100 * MS);
}

/* A call that computes between its sleeps for more than the budget: the block ended when it
 * woke, at the first awake sample. */
static void test_computes(void)
{
    struct native_awake a = {0};
    CHECK_INT(awake(&a, 100, 40), NATIVE_AWAKE_SAME);
    CHECK_INT(awake(&a, 110, 50), NATIVE_AWAKE_SAME);
    CHECK_INT(awake(&a, 120, 60), NATIVE_AWAKE_SAME);
    CHECK_INT(awake(&a, 130, 70), NATIVE_AWAKE_SAME); /* exactly the budget */
    CHECK_INT(awake(&a, 140, 71), NATIVE_AWAKE_ENDED);
    CHECK_INT(a.since, 100 * MS);
}

/* Runnable with no CPU (a frozen or overloaded machine): it computed nothing, however many
 * samples find it so. */
static void test_no_cpu(void)
{
    struct native_awake a = {0};
    for (int i = 0; i < 50; i++)
        CHECK_INT(awake(&a, 100 + 10 * i, 40), NATIVE_AWAKE_SAME);
}

/* CPU time unknown: samples count, more than three end it. */
static void test_cpu_unknown(void)
{
    struct native_awake a = {0};
    CHECK_INT(awake(&a, 100, 0), NATIVE_AWAKE_SAME);
    CHECK_INT(awake(&a, 110, 0), NATIVE_AWAKE_SAME);
    CHECK_INT(awake(&a, 120, 0), NATIVE_AWAKE_SAME);
    CHECK_INT(awake(&a, 130, 0), NATIVE_AWAKE_ENDED);
    CHECK_INT(a.since, 100 * MS);
    struct native_awake b = {0}; /* known at first, then not: counted too */
    CHECK_INT(awake(&b, 100, 40), NATIVE_AWAKE_SAME);
    CHECK_INT(awake(&b, 110, 0), NATIVE_AWAKE_SAME);
    CHECK_INT(awake(&b, 120, 0), NATIVE_AWAKE_SAME);
    CHECK_INT(awake(&b, 130, 0), NATIVE_AWAKE_ENDED);
}

/* Asleep again between: the next moment starts over, with its own budget. */
static void test_reset(void)
{
    struct native_awake a = {0};
    CHECK_INT(awake(&a, 100, 40), NATIVE_AWAKE_SAME);
    CHECK_INT(awake(&a, 110, 65), NATIVE_AWAKE_SAME);
    native_awake_reset(&a);
    CHECK_INT(a.samples, 0);
    CHECK_INT(awake(&a, 230, 80), NATIVE_AWAKE_SAME);
    CHECK_INT(awake(&a, 240, 100), NATIVE_AWAKE_SAME); /* 20 ms since this moment's first sample */
    CHECK_INT(a.since, 230 * MS);
}

int main(void)
{
    CHECK_RUN(test_first_sample);
    CHECK_RUN(test_stretched_moment);
    CHECK_RUN(test_computes);
    CHECK_RUN(test_no_cpu);
    CHECK_RUN(test_cpu_unknown);
    CHECK_RUN(test_reset);
    CHECK_MAIN_RETURN();
}
