#include "run_recordings.h"

#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report.h"
#include "run_kernel.h"

/* A small set of pids: the JVMs whose recordings were found so far. */
struct pids {
    int64_t *v;
    size_t n, cap;
};

static int pids_has(const struct pids *p, int64_t pid)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i] == pid)
            return 1;
    return 0;
}

static int pids_add(struct pids *p, int64_t pid)
{
    if (pids_has(p, pid))
        return 0;
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        int64_t *grown = realloc(p->v, cap * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        p->v = grown;
        p->cap = cap;
    }
    p->v[p->n++] = pid;
    return 0;
}

static int add_item(struct run_recordings *rs, const char *path, uint64_t size, int own)
{
    struct run_recording *grown = realloc(rs->items, (rs->n + 1) * sizeof(*grown));
    if (!grown)
        return -ENOMEM;
    rs->items = grown;
    rs->items[rs->n] = (struct run_recording){.path = strdup(path), .size = size, .own = own};
    if (!rs->items[rs->n].path)
        return -ENOMEM;
    rs->n++;
    return 0;
}

/* Reads path's sessions' Hellos only (nothing of their pins is kept): whether it can be read at
 * all, its size now, and its JVMs' pids into pids. 0, or -errno said on stderr (or -ENOMEM for
 * pids). */
static int look(const char *path, uint64_t *size, struct pids *pids)
{
    struct recording *r = NULL;
    char err[512];
    struct stat sb;
    if (stat(path, &sb) != 0) {
        int rc = -errno;
        fprintf(stderr, "vtpin run: %s: %s\n", path, strerror(errno));
        return rc;
    }
    *size = (uint64_t)sb.st_size;
    struct recording_plan plan = {.keep = RECORDING_KEEP_NONE, .skip_occupancy = 1, .max_bytes = *size};
    int rc = recording_load_plan(path, &plan, &r, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "vtpin run: %s\n", err);
        return rc;
    }
    if (r->damaged)
        fprintf(stderr, "vtpin run: warning: %s: damaged: %s; using the %llu events before it\n", path, r->damage,
                (unsigned long long)r->events);
    for (size_t s = 0; s < r->n_sessions && !rc; s++)
        if (r->sessions[s]->has_hello)
            rc = pids_add(pids, r->sessions[s]->hello.pid);
    recording_free(r);
    return rc;
}

/* The agents' own recordings (jvm-<runid>-*.vtp, or the found agent's record=). */
static int find_own(const struct run_where *w, struct run_recordings *rs, struct pids *pids)
{
    char pattern[PATH_MAX + 96];
    if (w->own_glob)
        snprintf(pattern, sizeof(pattern), "%s", w->own_glob);
    else
        snprintf(pattern, sizeof(pattern), "%s/jvm-%s-*.vtp", w->run_dir, w->run_id);
    glob_t g;
    memset(&g, 0, sizeof(g));
    if (pattern[0])
        glob(pattern, 0, NULL, &g);
    int rc = 0;
    for (size_t i = 0; i < g.gl_pathc && rc != -ENOMEM; i++) {
        struct stat sb;
        if (w->own_glob && (stat(g.gl_pathv[i], &sb) || sb.st_mtim.tv_sec < w->started.tv_sec))
            continue; /* not this run's */
        uint64_t size = 0;
        rc = look(g.gl_pathv[i], &size, pids);
        if (rc == 0)
            rc = add_item(rs, g.gl_pathv[i], size, 1);
        else if (rc != -ENOMEM)
            rs->unreadable++;
    }
    globfree(&g);
    if (rc == -ENOMEM)
        return rc;
    if (rs->n == 0 && w->own_glob)
        fprintf(stderr, "vtpin run: no recording of COMMAND's own vtpin (%s) written during this run\n",
                pattern[0] ? pattern : "it has no record=");
    else if (rs->n == 0 && !w->attached)
        fprintf(stderr, "vtpin run: no JVM ran with vtpin (no recording of this run, jvm-%s-*.vtp, in %s)\n", w->run_id,
                w->run_dir);
    return 0;
}

/* --attach-on-pin: the run's collector's recordings (RUNDIR/collector/<pid>-*.vtp) of the command's
 * JVMs that have no recording of their own (they did not take JAVA_TOOL_OPTIONS): the kernel's
 * session of each (its pins before the attach) and the attached agent's. */
static int find_attached(const struct run_where *w, struct run_recordings *rs, struct pids *own)
{
    char pattern[PATH_MAX + 32];
    snprintf(pattern, sizeof(pattern), "%s/collector/*.vtp", w->run_dir);
    glob_t g;
    memset(&g, 0, sizeof(g));
    struct pids attached = {0};
    int rc = 0;
    if (glob(pattern, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc && rc != -ENOMEM; i++) {
            const char *base = strrchr(g.gl_pathv[i], '/') + 1;
            char *end;
            long pid = strtol(base, &end, 10);
            if (end == base || *end != '-' || pids_has(own, pid))
                continue; /* a JVM with the run's agent from its start: its own recording is the judged one */
            struct pids seen = {0};
            uint64_t size = 0;
            rc = look(g.gl_pathv[i], &size, &seen);
            free(seen.v);
            if (rc == 0 && !(rc = add_item(rs, g.gl_pathv[i], size, 0)))
                rc = pids_add(&attached, pid);
            else if (rc != -ENOMEM)
                rs->unreadable++;
        }
    }
    globfree(&g);
    if (rc == -ENOMEM) {
        free(attached.v);
        return rc;
    }
    if (attached.n)
        fprintf(stderr,
                "vtpin run: attach on pin: %zu JVM(s) without the agent at their start, judged from the run's "
                "collector (%s/collector)\n",
                attached.n, w->run_dir);
    else if (!rs->n)
        fprintf(stderr,
                "vtpin run: no JVM ran with vtpin, and the run's collector found none that pinned without it "
                "(%s/collector)\n",
                w->run_dir);
    free(attached.v);
    return 0;
}

int run_recordings_find(const struct run_where *w, struct run_recordings *out)
{
    memset(out, 0, sizeof(*out));
    if (w->kernel_view)
        snprintf(out->kernel_dir, sizeof(out->kernel_dir), "%s/collector", w->run_dir);
    struct pids own = {0};
    int rc = find_own(w, out, &own);
    if (!rc && w->attached)
        rc = find_attached(w, out, &own);
    free(own.v);
    return rc;
}

int run_recordings_load(struct run_recordings *rs, size_t i, struct recording **out)
{
    struct run_recording *item = &rs->items[i];
    char err[512];
    *out = NULL;
    /* no timeline in a run; and the bytes found, whatever was written since */
    struct report_plan plan = {.keep = RECORDING_KEEP_ALL,
                               .skip_occupancy = 1,
                               .fold_pins = RECORDING_FOLD_PINS,
                               .keep_input = rs->every_pin, /* JSON reads a long session's pins again */
                               .max_bytes = item->size,
                               /* the collector's kernel view first, so that a long session is summed up */
                               .kernel_at_hello = rs->kernel_dir[0] ? run_kernel_at_hello : NULL,
                               .kernel_arg = rs->kernel_dir};
    int rc = item->failed ? -EIO : report_open_plan(item->path, &plan, out, err, sizeof(err));
    if (rc) {
        if (!item->failed)
            run_recordings_not_judged(rs, i, err);
        return rc;
    }
    if (item->own) {
        rs->sessions += (*out)->n_sessions;
        if (rs->kernel_dir[0])
            rs->joined += run_kernel_join(rs->kernel_dir, out, 1);
    }
    return 0;
}

void run_recordings_not_judged(struct run_recordings *rs, size_t i, const char *why)
{
    fprintf(stderr, "vtpin run: %s\n", why);
    rs->items[i].failed = 1;
    rs->unreadable++;
}

size_t run_recordings_judged(const struct run_recordings *rs)
{
    size_t n = 0;
    for (size_t i = 0; i < rs->n; i++)
        n += !rs->items[i].failed;
    return n;
}

void run_recordings_say_kernel(const struct run_recordings *rs)
{
    if (rs->kernel_dir[0] && rs->joined < rs->sessions)
        fprintf(stderr,
                "vtpin run: kernel view: %zu of %zu JVM session(s) have it (the others: no kernel "
                "interval of theirs in %s)\n",
                rs->joined, rs->sessions, rs->kernel_dir);
}

void run_recordings_free(struct run_recordings *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        free(rs->items[i].path);
    free(rs->items);
    memset(rs, 0, sizeof(*rs));
}
