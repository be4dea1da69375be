/* LD_PRELOAD into a test's JVM: steps the wall clock that process reads (CLOCK_REALTIME through
 * clock_gettime, which HotSpot, JFR and the agent all call) as a clock sync would, with no root and
 * the host's clock untouched. VTPIN_CLOCKSTEP_DIR names a directory: once it holds "step-1" (then
 * "step-2", ...), the number of milliseconds in each (signed) is added to every later reading. A
 * test writes each file whole (a rename). The files are looked for at most once a millisecond, by
 * whichever thread reads the wall clock then, with open and read only (no allocation). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime;
static const char *step_dir;
static atomic_llong offset_ns;
static atomic_llong next_look_ns;
static atomic_flag looking = ATOMIC_FLAG_INIT;
static int next_step = 1; /* under looking */

__attribute__((constructor)) static void clockstep_init(void)
{
    real_clock_gettime = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    step_dir = getenv("VTPIN_CLOCKSTEP_DIR");
}

/* The milliseconds in step file k, or 0 (with *found 0) when it is not there yet. */
static long long read_step(int k, int *found)
{
    char path[PATH_MAX], text[32];
    *found = 0;
    snprintf(path, sizeof(path), "%s/step-%d", step_dir, k);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    *found = 1;
    return strtoll(text, NULL, 10);
}

static void look_for_steps(void)
{
    struct timespec m;
    if (!step_dir || real_clock_gettime(CLOCK_MONOTONIC, &m) != 0)
        return;
    long long now = m.tv_sec * 1000000000LL + m.tv_nsec;
    if (now < atomic_load(&next_look_ns) || atomic_flag_test_and_set(&looking))
        return;
    atomic_store(&next_look_ns, now + 1000000);
    int found;
    long long ms;
    while ((ms = read_step(next_step, &found)), found) {
        atomic_fetch_add(&offset_ns, ms * 1000000LL);
        next_step++;
    }
    atomic_flag_clear(&looking);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (!real_clock_gettime)
        real_clock_gettime = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    int rc = real_clock_gettime(id, ts);
    if (rc != 0 || (id != CLOCK_REALTIME && id != CLOCK_REALTIME_COARSE))
        return rc;
    look_for_steps();
    long long t = ts->tv_sec * 1000000000LL + ts->tv_nsec + atomic_load(&offset_ns);
    ts->tv_sec = t / 1000000000LL;
    ts->tv_nsec = t % 1000000000LL;
    return rc;
}
