/* Unit tests for cli/run/run_kernel.c: which collector session is an agent's
 * JVM session; and moving kernel intervals and times between sessions, as the run does
 * (recording_take_kernel, cli/report/recording.c). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "run_kernel.h"

static void session_init(struct recording_session *s, int64_t pid, int64_t start_unix, int64_t start_mono)
{
    memset(s, 0, sizeof(*s));
    s->has_hello = 1;
    s->hello.pid = pid;
    s->hello.has_clock = 1;
    s->hello.start_unix_ns = start_unix;
    s->hello.start_mono_ns = start_mono;
}

static void add_interval(struct recording_session *s, int32_t tid, int64_t start, const char *syscall)
{
    if (!s->kstacks && !CHECK_INT(kernel_stacks_new(&s->kstacks), 0))
        return;
    s->kintervals = realloc(s->kintervals, (s->n_kintervals + 1) * sizeof(*s->kintervals));
    struct recording_kinterval *k = &s->kintervals[s->n_kintervals++];
    memset(k, 0, sizeof(*k));
    k->carrier_tid = tid;
    k->start_ns = start;
    k->end_ns = start + 10;
    k->syscall_name = kernel_stacks_keep_string(s->kstacks, syscall);
    char *frames[] = {"hrtimer_nanosleep+0x74"};
    k->n_stack = 1;
    k->stack = kernel_stacks_keep(s->kstacks, frames, 1);
    s->kintervals_cap = s->n_kintervals;
}

static void set_ktimes(struct recording_session *s, int64_t at, int32_t tid)
{
    free(s->ktimes);
    s->ktimes = calloc(1, sizeof(*s->ktimes));
    s->ktimes[0].carrier_tid = tid;
    s->n_ktimes = 1;
    s->ktimes_ns = at;
}

static void session_clear(struct recording_session *s)
{
    free(s->kintervals);
    kernel_stacks_free(s->kstacks);
    free(s->ktimes);
    memset(s, 0, sizeof(*s));
}

static void test_same(void)
{
    struct recording_session a, b;
    session_init(&a, 42, 1000, 5);
    session_init(&b, 42, 1000, 5);
    CHECK(run_kernel_same(&a, &b));
    b.hello.pid = 43;
    CHECK(!run_kernel_same(&a, &b)); /* another JVM */
    session_init(&b, 42, 2000, 5);
    CHECK(!run_kernel_same(&a, &b)); /* the pid reused by a later JVM */
    b.hello.has_clock = 0;
    CHECK(run_kernel_same(&a, &b)); /* no clock to tell: the pid decides */
    b.has_hello = 0;
    CHECK(!run_kernel_same(&a, &b)); /* events without a Hello belong to no JVM */
}

static void test_move(void)
{
    struct recording_session agent, c0, c1;
    session_init(&agent, 42, 1000, 5);
    session_init(&c0, 42, 1000, 5);
    session_init(&c1, 42, 1000, 5);
    add_interval(&c0, 7, 100, "nanosleep");
    add_interval(&c0, 8, 200, "clock_nanosleep");
    set_ktimes(&c0, 300, 7);
    add_interval(&c1, 7, 400, "read"); /* a second connection of the same JVM */
    set_ktimes(&c1, 500, 9);

    CHECK_INT(recording_take_kernel(&agent, &c0), 0);
    CHECK_INT(agent.n_kintervals, 2);
    CHECK(c0.n_kintervals == 0 && c0.kintervals == NULL && c0.ktimes == NULL);
    CHECK_INT(agent.ktimes_ns, 300);
    CHECK(agent.kstacks != NULL && c0.kstacks == NULL); /* the stacks went with the intervals */
    CHECK_INT(recording_take_kernel(&agent, &c1), 0);
    CHECK_INT(agent.n_kintervals, 3);
    CHECK(c1.kstacks == NULL); /* adopted: agent's store frees them (ASan says so) */
    CHECK(strcmp(agent.kintervals[0].syscall_name, "nanosleep") == 0);
    CHECK(strcmp(agent.kintervals[2].syscall_name, "read") == 0);
    CHECK(strcmp(agent.kintervals[2].stack[0], "hrtimer_nanosleep+0x74") == 0);
    CHECK(agent.kintervals[0].stack == agent.kintervals[1].stack); /* one connection's: kept once */
    CHECK_INT(agent.kintervals[2].start_ns, 400);
    CHECK(agent.n_ktimes == 1 && agent.ktimes[0].carrier_tid == 9); /* the later times */
    CHECK_INT(agent.ktimes_ns, 500);

    /* earlier times do not replace later ones */
    set_ktimes(&c0, 100, 1);
    CHECK_INT(recording_take_kernel(&agent, &c0), 0);
    CHECK(agent.ktimes[0].carrier_tid == 9);
    CHECK(c0.ktimes != NULL); /* stays with its owner */

    session_clear(&agent);
    session_clear(&c0);
    session_clear(&c1);
}

int main(void)
{
    CHECK_RUN(test_same);
    CHECK_RUN(test_move);
    CHECK_MAIN_RETURN();
}
