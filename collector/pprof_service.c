#include "pprof_service.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "clog.h"
#include "pinned_pprof.h"

#define NS_PER_SEC 1000000000LL
#define STEP_NS (5 * 1000000LL) /* one step's time: the longest an agent or a query waits behind it */
#define FRESH_NS NS_PER_SEC     /* a profile is served again this long */
#define QUEUE 8                 /* spans waiting for their build */
#define CACHE 4                 /* profiles kept for FRESH_NS, by span */

struct cached {
    uint64_t key; /* its span in seconds; 0: empty */
    int64_t built_ns;
    uint8_t *body;
    size_t len;
};

struct pprof_service {
    struct loop *loop;
    struct metrics_http *http;
    const struct jvms *jvms;
    int64_t window_ns, started_ns;
    struct pinned_pprof_build *build; /* the one in progress; NULL: none */
    uint64_t building;                /* its key */
    uint64_t queue[QUEUE];            /* keys waiting, oldest first */
    size_t queued;
    struct cached cache[CACHE];
    struct pprof_service_counts counts;
    int efd; /* readable while there is work: the loop comes back to it at its next turn */
    struct loop_watch watch;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

static int64_t unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

static void work_pending(struct pprof_service *ps, int pending)
{
    uint64_t v = 1;
    if (pending) {
        if (write(ps->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
            clog_error("metrics: pprof: eventfd: %s", strerror(errno));
    } else if (read(ps->efd, &v, sizeof(v)) < 0 && errno != EAGAIN) {
        clog_error("metrics: pprof: eventfd: %s", strerror(errno));
    }
}

static struct cached *fresh(struct pprof_service *ps, uint64_t key, int64_t now)
{
    for (size_t i = 0; i < CACHE; i++)
        if (ps->cache[i].key == key && now - ps->cache[i].built_ns < FRESH_NS)
            return &ps->cache[i];
    return NULL;
}

/* Keeps body (taking it) as key's profile, in place of the oldest. */
static void keep(struct pprof_service *ps, uint64_t key, int64_t now, uint8_t *body, size_t len)
{
    struct cached *slot = &ps->cache[0];
    for (size_t i = 0; i < CACHE; i++) {
        if (ps->cache[i].key == key) {
            slot = &ps->cache[i];
            break;
        }
        if (ps->cache[i].built_ns < slot->built_ns)
            slot = &ps->cache[i];
    }
    free(slot->body);
    *slot = (struct cached){.key = key, .built_ns = now, .body = body, .len = len};
}

/* The metrics_http_profile callback. */
static int on_request(void *arg, const char *seconds, uint64_t *key, uint8_t **body, size_t *len, char *why,
                      size_t whylen)
{
    struct pprof_service *ps = arg;
    int64_t span = 0;
    int rc = pinned_pprof_span(seconds, ps->window_ns, &span, why, whylen);
    if (rc)
        return rc;
    *key = (uint64_t)(span / NS_PER_SEC);
    struct cached *c = fresh(ps, *key, mono_ns());
    if (c) {
        if (!(*body = malloc(c->len ? c->len : 1)))
            return -ENOMEM;
        memcpy(*body, c->body, c->len);
        *len = c->len;
        ps->counts.cached_answers++;
        return 0;
    }
    if (ps->build && ps->building == *key)
        return 1;
    for (size_t i = 0; i < ps->queued; i++)
        if (ps->queue[i] == *key)
            return 1;
    if (ps->queued == QUEUE) {
        ps->counts.busy_answers++;
        return -EAGAIN;
    }
    ps->queue[ps->queued++] = *key;
    work_pending(ps, 1);
    return 1;
}

/* One step of the build in progress, starting the next one queued when none is. */
static void on_work(struct loop *l, struct loop_watch *w, uint32_t events)
{
    (void)l;
    (void)events;
    struct pprof_service *ps = w->data;
    int64_t now = mono_ns();
    if (!ps->build) {
        if (ps->queued == 0) {
            work_pending(ps, 0);
            return;
        }
        ps->building = ps->queue[0];
        memmove(ps->queue, ps->queue + 1, (--ps->queued) * sizeof(ps->queue[0]));
        int rc = pinned_pprof_begin(&ps->build, ps->jvms, now, (int64_t)ps->building * NS_PER_SEC);
        if (rc) {
            clog_error("metrics: /debug/pprof/pinned: %s", strerror(-rc));
            metrics_http_profile_done(ps->http, ps->building, rc, NULL, 0);
            return;
        }
    }
    int rc = pinned_pprof_step(ps->build, ps->jvms, mono_ns, now + STEP_NS);
    if (rc == 0)
        return; /* more at the loop's next turn */
    uint8_t *body = NULL;
    size_t len = 0;
    if (rc == 1)
        rc = pinned_pprof_finish(ps->build, unix_ns(), ps->started_ns, &body, &len);
    pinned_pprof_free(ps->build);
    ps->build = NULL;
    if (rc)
        clog_error("metrics: /debug/pprof/pinned: %s", strerror(-rc));
    size_t answered = metrics_http_profile_done(ps->http, ps->building, rc, body, len);
    if (!rc) {
        ps->counts.built_answers += answered; /* a failed build's are 500s, not counted as answers */
        ps->counts.built++;
        keep(ps, ps->building, mono_ns(), body, len);
    }
    if (ps->queued == 0)
        work_pending(ps, 0);
}

int pprof_service_start(struct pprof_service **out, struct loop *l, struct metrics_http *h, const struct jvms *r,
                        int64_t window_ns, int64_t started_ns)
{
    struct pprof_service *ps = calloc(1, sizeof(*ps));
    if (!ps)
        return -ENOMEM;
    ps->loop = l;
    ps->http = h;
    ps->jvms = r;
    ps->window_ns = window_ns;
    ps->started_ns = started_ns;
    ps->watch.fd = -1;
    ps->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    int rc = ps->efd < 0 ? -errno : loop_watch(l, &ps->watch, ps->efd, EPOLLIN, on_work, ps);
    if (rc) {
        pprof_service_stop(ps);
        return rc;
    }
    metrics_http_set_profile(h, on_request, ps);
    *out = ps;
    return 0;
}

void pprof_service_stop(struct pprof_service *ps)
{
    if (!ps)
        return;
    loop_unwatch(ps->loop, &ps->watch);
    if (ps->efd >= 0)
        close(ps->efd);
    pinned_pprof_free(ps->build);
    for (size_t i = 0; i < CACHE; i++)
        free(ps->cache[i].body);
    free(ps);
}

void pprof_service_counts(const struct pprof_service *ps, struct pprof_service_counts *out)
{
    *out = ps->counts;
    out->busy_answers += metrics_http_profile_late(ps->http);
}
