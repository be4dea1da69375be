/* What vtpin run's command left running (cli/run/run_left.c) over process
 * tables built in memory: every descendant, in the group or re-parented to
 * vtpin, but not the run's own helpers; zombies are not running, and the
 * run's own zombie children are the ones to reap. */
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "run_left.h"

static int has(const pid_t *pids, size_t n, pid_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (pids[i] == pid)
            return 1;
    return 0;
}

/* vtpin 100: watchman 101, collector 102 (its helper 103), the command 110
 * gone; JVM 111 re-parented to vtpin, sh 112 whose JVM 113 is its child, JVM
 * 114 a zombie of vtpin's; 120 a zombie under sh 112; 200-201 not ours. */
static const struct run_proc table[] = {
    {1, 0, 'S'},     {200, 1, 'S'},   {201, 200, 'S'}, {100, 200, 'S'}, {101, 100, 'S'}, {102, 100, 'S'},
    {103, 102, 'S'}, {113, 112, 'R'}, {111, 100, 'S'}, {112, 100, 'S'}, {114, 100, 'Z'}, {120, 112, 'Z'},
};
static const size_t n_table = sizeof(table) / sizeof(table[0]);
static const pid_t helpers[] = {101, 102};

static void test_descendants(void)
{
    pid_t out[16];
    size_t n = run_left_descendants(table, n_table, 100, helpers, 2, out, 16);
    CHECK_UINT(n, 3);
    CHECK(has(out, n, 111) && has(out, n, 112) && has(out, n, 113)); /* a grandchild listed before its parent too */
    CHECK(!has(out, n, 103));                                        /* below a helper: the run's own */
    CHECK(!has(out, n, 114) && !has(out, n, 120));                   /* zombies do not run */
    CHECK(!has(out, n, 200) && !has(out, n, 201) && !has(out, n, 100));
    /* more than cap: all counted, cap of them named */
    n = run_left_descendants(table, n_table, 100, helpers, 2, out, 1);
    CHECK_UINT(n, 3);
    /* without helpers to skip: the watchman and the collector's tree count */
    CHECK_UINT(run_left_descendants(table, n_table, 100, NULL, 0, out, 16), 6);
    /* nothing left */
    CHECK_UINT(run_left_descendants(table, n_table, 201, helpers, 2, out, 16), 0);
    CHECK_UINT(run_left_descendants(NULL, 0, 100, helpers, 2, out, 16), 0);
}

static void test_zombies(void)
{
    pid_t out[16];
    size_t n = run_left_zombies(table, n_table, 100, helpers, 2, out, 16);
    CHECK_UINT(n, 1); /* 114 is vtpin's to reap; 120 is sh's */
    CHECK_INT(out[0], 114);
    const pid_t dead_helper[] = {114};
    CHECK_UINT(run_left_zombies(table, n_table, 100, dead_helper, 1, out, 16),
               0); /* the run reaps its helpers itself */
}

/* The real /proc, as vtpin run sees it (a subreaper): a child and its child
 * are found while they run, described (no JVM), then both are ours to reap. */
static void test_proc(void)
{
    static struct run_left left;
    int p[2];
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    if (!CHECK(pipe(p) == 0))
        return;
    pid_t child = fork();
    if (child == 0) {
        close(p[1]);
        fork(); /* both block until the test closes the pipe */
        char c;
        while (read(p[0], &c, 1) > 0)
            ;
        _exit(0);
    }
    close(p[0]);
    struct timespec tick = {0, 10 * 1000000L};
    for (int i = 0; i < 500 && run_left_find(getpid(), NULL, 0, &left) == 0 && left.n < 2; i++)
        nanosleep(&tick, NULL); /* until the grandchild is forked */
    CHECK_UINT(left.n, 2);
    CHECK(left.procs[0].pid == child || left.procs[1].pid == child);
    run_left_describe(&left);
    CHECK_UINT(left.jvms, 0);
    CHECK_STR(left.procs[0].cmdline, left.procs[1].cmdline); /* a fork's command line is its parent's */
    close(p[1]);
    for (int i = 0; i < 500 && run_left_find(getpid(), NULL, 0, &left) == 0 && (left.n || left.n_zombies < 2); i++)
        nanosleep(&tick, NULL); /* until both ended: the grandchild came to us, the subreaper */
    CHECK_UINT(left.n, 0);
    CHECK_UINT(left.n_zombies, 2);
    for (size_t i = 0; i < left.n_zombies; i++)
        CHECK_INT(waitpid(left.zombies[i], NULL, 0), left.zombies[i]);
    CHECK_INT(run_left_find(getpid(), NULL, 0, &left), 0);
    CHECK_UINT(left.n + left.n_zombies, 0);
}

int main(void)
{
    CHECK_RUN(test_descendants);
    CHECK_RUN(test_zombies);
    CHECK_RUN(test_proc);
    CHECK_MAIN_RETURN();
}
