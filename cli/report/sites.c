#include "sites.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/frames_kind.h"

#include "pin_groups.h"

struct entry {
    const struct recording_pin *pin; /* the pin, or a group's earliest */
    const struct recording_frame *culprit;
    size_t order; /* position in the recording, for a stable ranking */
};

static int cmp_str(const char *a, const char *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int cmp_place(const struct recording_frame *a, const struct recording_frame *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    int c;
    if ((c = cmp_str(a->method->class_name, b->method->class_name)) ||
        (c = cmp_str(a->method->name, b->method->name)) || (c = cmp_str(a->method->signature, b->method->signature)))
        return c;
    return (a->line > b->line) - (a->line < b->line);
}

int sites_same_place(const struct recording_frame *a, const struct recording_frame *b)
{
    return cmp_place(a, b) == 0;
}

/* Groups a site's pins together, and within a site each stack's pins. */
static int cmp_entry(const void *pa, const void *pb)
{
    const struct entry *a = pa, *b = pb;
    if (a->pin->origin != b->pin->origin)
        return a->pin->origin < b->pin->origin ? -1 : 1;
    if (a->pin->reason != b->pin->reason)
        return a->pin->reason < b->pin->reason ? -1 : 1;
    int c = cmp_place(a->culprit, b->culprit);
    if (c)
        return c;
    uintptr_t sa = (uintptr_t)a->pin->stack, sb = (uintptr_t)b->pin->stack;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

struct ranked {
    struct site site;
    size_t first; /* earliest pin of the site */
};

static int cmp_ranked(const void *pa, const void *pb)
{
    const struct ranked *a = pa, *b = pb;
    if (a->site.origin != b->site.origin) /* the application's sites first */
        return a->site.origin < b->site.origin ? -1 : 1;
    if (a->site.total_ns != b->site.total_ns)
        return a->site.total_ns > b->site.total_ns ? -1 : 1;
    if (a->site.count != b->site.count)
        return a->site.count > b->site.count ? -1 : 1;
    return (a->first > b->first) - (a->first < b->first);
}

int sites_build(const struct recording_session *s, struct sites *out)
{
    struct entry *e = NULL;
    struct ranked *r = NULL;
    struct pin_sums cursor = {0};
    size_t n_sums = pin_sums_count(s);
    memset(out, 0, sizeof(*out));
    if (n_sums == 0)
        return 0;
    int rc = pin_sums_begin(&cursor, s);
    if (!rc && (!(e = calloc(n_sums, sizeof(*e))) || !(r = calloc(n_sums, sizeof(*r)))))
        rc = -ENOMEM;
    if (rc)
        goto cleanup;
    struct recording_pin_sum sum;
    for (size_t i = 0; pin_sums_next(&cursor, &sum); i++) { /* in start order: the order of entries */
        const struct recording_pin *p = sum.pin;
        e[i].pin = p;
        e[i].culprit = p->has_culprit ? &p->stack->frames[p->culprit] : NULL;
        e[i].order = i;
        out->pins += sum.count;
        out->ongoing += sum.ongoing;
        out->total_ns = recording_sat_add(out->total_ns, sum.total_ns);
    }
    qsort(e, n_sums, sizeof(*e), cmp_entry);
    size_t n = 0;
    for (size_t i = 0; i < n_sums;) {
        struct ranked *site = &r[n++];
        site->site.origin = e[i].pin->origin;
        site->site.reason = e[i].pin->reason;
        site->site.culprit = e[i].culprit;
        site->first = e[i].order;
        int64_t best_stack_ns = -1;
        size_t best_order = 0;
        size_t j = i;
        while (j < n_sums && e[j].pin->origin == e[i].pin->origin && e[j].pin->reason == e[i].pin->reason &&
               cmp_place(e[j].culprit, e[i].culprit) == 0) {
            /* one run per stack inside the site */
            size_t k = j;
            int64_t stack_ns = 0;
            const struct recording_pin *earliest = e[j].pin;
            while (k < n_sums && e[k].pin->reason == e[j].pin->reason && e[k].pin->stack == e[j].pin->stack &&
                   cmp_place(e[k].culprit, e[j].culprit) == 0) {
                struct site *st = &site->site;
                struct recording_pin_sum sum = pin_sum_of(s, e[k].pin);
                st->count += sum.count;
                st->ongoing += sum.ongoing;
                st->total_ns = recording_sat_add(st->total_ns, sum.total_ns);
                if (sum.max_ns > st->max_ns)
                    st->max_ns = sum.max_ns;
                if (e[k].order < site->first)
                    site->first = e[k].order;
                stack_ns = recording_sat_add(stack_ns, sum.total_ns);
                k++;
            }
            site->site.distinct_stacks++;
            /* runs are ordered by position: e[j] is the stack's first pin */
            if (stack_ns > best_stack_ns || (stack_ns == best_stack_ns && e[j].order < best_order)) {
                best_stack_ns = stack_ns;
                best_order = e[j].order;
                site->site.example = earliest;
            }
            j = k;
        }
        const struct recording_pin *ex = site->site.example;
        if (ex && ex->has_culprit) /* the culprit as it appears in the stack shown (its monitor count) */
            site->site.culprit = &ex->stack->frames[ex->culprit];
        i = j;
    }
    qsort(r, n, sizeof(*r), cmp_ranked);
    out->items = calloc(n, sizeof(*out->items));
    if (!out->items) {
        rc = -ENOMEM;
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++) {
        out->items[i] = r[i].site;
        out->app_count += r[i].site.origin != PIN_ORIGIN_JDK;
    }
    out->count = n;
cleanup:
    free(e);
    free(r);
    pin_sums_end(&cursor);
    if (rc)
        sites_fini(out);
    return rc;
}

void sites_fini(struct sites *sites)
{
    if (!sites)
        return;
    free(sites->items);
    memset(sites, 0, sizeof(*sites));
}

/* ---- carrier hogs ---- */

struct hog_entry {
    const struct recording_hog *hog;
    const struct recording_frame *culprit;
    size_t order;
    int64_t duration;
};

static int cmp_hog_entry(const void *pa, const void *pb)
{
    const struct hog_entry *a = pa, *b = pb;
    int c = cmp_place(a->culprit, b->culprit);
    if (c)
        return c;
    return (a->order > b->order) - (a->order < b->order);
}

struct hog_ranked {
    struct hog_site site;
    size_t first;
};

static int cmp_hog_ranked(const void *pa, const void *pb)
{
    const struct hog_ranked *a = pa, *b = pb;
    if (a->site.total_ns != b->site.total_ns)
        return a->site.total_ns > b->site.total_ns ? -1 : 1;
    if (a->site.count != b->site.count)
        return a->site.count > b->site.count ? -1 : 1;
    return (a->first > b->first) - (a->first < b->first);
}

int hog_sites_build(const struct recording_session *s, struct hog_sites *out)
{
    struct hog_entry *e = NULL;
    struct hog_ranked *r = NULL;
    int rc = 0;
    memset(out, 0, sizeof(*out));
    if (s->n_hogs == 0)
        return 0;
    e = calloc(s->n_hogs, sizeof(*e));
    r = calloc(s->n_hogs, sizeof(*r));
    if (!e || !r) {
        rc = -ENOMEM;
        goto cleanup;
    }
    for (size_t i = 0; i < s->n_hogs; i++) {
        const struct recording_hog *h = &s->hogs[i];
        e[i] = (struct hog_entry){.hog = h,
                                  .culprit = h->has_culprit ? &h->stack->frames[h->culprit] : NULL,
                                  .order = i,
                                  .duration = recording_hog_duration(s, h)};
        out->hogs++;
        out->ongoing += !h->ended;
        out->total_ns = recording_sat_add(out->total_ns, e[i].duration);
        if (e[i].duration > out->max_ns)
            out->max_ns = e[i].duration;
    }
    qsort(e, s->n_hogs, sizeof(*e), cmp_hog_entry);
    size_t n = 0;
    for (size_t i = 0; i < s->n_hogs;) {
        struct hog_ranked *g = &r[n++];
        g->site.culprit = e[i].culprit;
        g->site.example = e[i].hog;
        g->first = e[i].order; /* entries of a group are in file order: the first is the earliest */
        g->site.max_ns = -1;
        size_t j = i;
        for (; j < s->n_hogs && cmp_place(e[j].culprit, e[i].culprit) == 0; j++) {
            g->site.count++;
            g->site.ongoing += !e[j].hog->ended;
            g->site.total_ns = recording_sat_add(g->site.total_ns, e[j].duration);
            if (e[j].duration > g->site.max_ns) {
                g->site.max_ns = e[j].duration;
                g->site.example = e[j].hog;
                g->site.culprit = e[j].culprit; /* as it appears in the example's stack */
            }
        }
        i = j;
    }
    qsort(r, n, sizeof(*r), cmp_hog_ranked);
    out->items = calloc(n, sizeof(*out->items));
    if (!out->items) {
        rc = -ENOMEM;
        goto cleanup;
    }
    for (size_t i = 0; i < n; i++)
        out->items[i] = r[i].site;
    out->count = n;
cleanup:
    free(e);
    free(r);
    if (rc)
        hog_sites_fini(out);
    return rc;
}

void hog_sites_fini(struct hog_sites *h)
{
    if (!h)
        return;
    free(h->items);
    memset(h, 0, sizeof(*h));
}
