/* vtpin run: the collector's kernel view joined to the agents' recordings. */
#include "run_kernel.h"

#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_held.h"
#include "kernel_join.h"
#include "kernel_pins.h"

int run_kernel_same(const struct recording_session *a, const struct recording_session *b)
{
    if (!a->has_hello || !b->has_hello || a->hello.pid != b->hello.pid)
        return 0;
    if (a->hello.has_clock && b->hello.has_clock)
        return a->hello.start_unix_ns == b->hello.start_unix_ns && a->hello.start_mono_ns == b->hello.start_mono_ns;
    return 1;
}

/* The collector's recordings of s's JVM into s: 1 when s got a kernel view. The collector
 * names them <host pid>-<start_unix_ns>-<connection>.vtp, and a JVM in a pid namespace of its
 * own says another pid in its Hello (1, say): so by the start, when the Hello gives it, and
 * run_kernel_same decides. */
static int take_view(const char *dir, struct recording_session *s)
{
    char pattern[PATH_MAX + 48];
    if (s->hello.has_clock)
        snprintf(pattern, sizeof(pattern), "%s/*-%" PRId64 "-*.vtp", dir, s->hello.start_unix_ns);
    else
        snprintf(pattern, sizeof(pattern), "%s/%" PRId64 "-*.vtp", dir, s->hello.pid);
    glob_t g;
    memset(&g, 0, sizeof(g));
    if (glob(pattern, 0, NULL, &g) != 0) {
        globfree(&g);
        return 0;
    }
    int got = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct recording *r = NULL;
        char err[512];
        /* its kernel view alone: the collector recorded the agent's pins too, which the run reads
         * from the agent's own recording */
        struct recording_plan kernel = {.keep = RECORDING_KEEP_ALL, .skip_occupancy = 1, .kernel_only = 1};
        if (recording_load_plan(g.gl_pathv[i], &kernel, &r, err, sizeof(err)) != 0) {
            fprintf(stderr, "vtpin run: kernel view: %s\n", err);
            continue;
        }
        for (size_t k = 0; k < r->n_sessions; k++) {
            struct recording_session *c = r->sessions[k];
            if (!run_kernel_same(s, c) || (!c->n_kintervals && !c->ktimes))
                continue;
            if (recording_take_kernel(s, c) == 0)
                got = 1;
        }
        recording_free(r);
    }
    globfree(&g);
    return got;
}

int run_kernel_at_hello(struct recording_session *s, void *dir)
{
    return take_view(dir, s);
}

/* take_view after the load, and the passes again. */
static int join_session(const char *dir, struct recording_session *s)
{
    if (s->n_kintervals || s->ktimes)
        return 1; /* taken as its Hello was read (run_kernel_at_hello), the passes run since */
    int got = take_view(dir, s);
    /* The load split and timed the pins by the intervals it had: none. Now that the collector's
     * are here (written since its Hello was read), the same two passes as `vtpin report`. */
    if (got && s->n_kintervals > 0) {
        if (kernel_split_parks(s) == 0)
            kernel_time_blocks(s);
        else
            fprintf(stderr, "vtpin run: kernel view: out of memory: pins of pid %" PRId64 " not split by it\n",
                    s->hello.pid);
    }
    /* joined again, to the pins as they are now, before the run's report reads them; and the held
     * time's notices, as `vtpin report` gives them */
    if (got && (kernel_join(s) || kernel_held_notices(s)))
        fprintf(stderr, "vtpin run: kernel view: out of memory: pins of pid %" PRId64 " not joined to it\n",
                s->hello.pid);
    return got;
}

size_t run_kernel_join(const char *dir, struct recording **recs, size_t nrecs)
{
    size_t joined = 0;
    for (size_t i = 0; i < nrecs; i++)
        for (size_t s = 0; s < recs[i]->n_sessions; s++)
            if (recs[i]->sessions[s]->has_hello && join_session(dir, recs[i]->sessions[s]))
                joined++;
    return joined;
}
