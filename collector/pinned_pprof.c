#include "pinned_pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "pinprofile.h"
#include "pprof_build.h"

int pinned_pprof_span(const char *seconds, int64_t window_ns, int64_t *span_ns, char *why, size_t whylen)
{
    long long window_s = window_ns / 1000000000LL;
    if (!seconds) {
        *span_ns = window_ns;
        return 0;
    }
    unsigned long long v = 0;
    const char *c = seconds;
    for (; *c >= '0' && *c <= '9'; c++) {
        v = v * 10 + (unsigned long long)(*c - '0');
        if (v > (unsigned long long)window_s)
            break;
    }
    if (c == seconds || (*c && (*c < '0' || *c > '9'))) {
        snprintf(why, whylen, "seconds=%.40s is not a whole number of seconds (e.g. seconds=30)", seconds);
        return -EINVAL;
    }
    if (v == 0) {
        snprintf(why, whylen, "seconds=%.40s: the span must be at least 1 second", seconds);
        return -EINVAL;
    }
    if (v > (unsigned long long)window_s) {
        snprintf(why, whylen,
                 "seconds=%.40s: this collector keeps the last %lld s (its --window); ask for %lld or less", seconds,
                 window_s, window_s);
        return -EINVAL;
    }
    *span_ns = (int64_t)v * 1000000000LL;
    return 0;
}

struct pinned_pprof_build {
    struct pprof_builder *b;
    int64_t now, span_ns; /* the window's end and length, fixed at the start */
    struct jvm_ident *idents;
    int64_t *starts; /* with idents: the JVMs present at the start, found again by identity */
    size_t n, next;
};

void pinned_pprof_free(struct pinned_pprof_build *pb)
{
    if (!pb)
        return;
    pprof_builder_free(pb->b);
    free(pb->idents);
    free(pb->starts);
    free(pb);
}

int pinned_pprof_begin(struct pinned_pprof_build **out, const struct jvms *r, int64_t now, int64_t span_ns)
{
    struct pinned_pprof_build *pb = calloc(1, sizeof(*pb));
    size_t n = jvms_count(r);
    int rc = -ENOMEM;
    if (!pb || !(pb->idents = calloc(n ? n : 1, sizeof(*pb->idents))) ||
        !(pb->starts = calloc(n ? n : 1, sizeof(*pb->starts))) ||
        (rc = pprof_builder_new(&pb->b, pprof_pinned_types, PPROF_PINNED_N)) != 0)
        goto fail;
    pb->now = now;
    pb->span_ns = span_ns;
    for (const struct jvm *j = jvms_first(r); j && pb->n < n; j = j->next) {
        pb->idents[pb->n] = j->ident;
        pb->starts[pb->n++] = j->start_unix_ns;
    }
    char comment[128];
    snprintf(comment, sizeof(comment), "vtpin collector: pinned time of its JVMs over the last %lld s",
             (long long)(span_ns / 1000000000LL));
    if ((rc = pprof_builder_comment(pb->b, comment)) != 0)
        goto fail;
    *out = pb;
    return 0;
fail:
    pinned_pprof_free(pb);
    return rc;
}

/* j's samples and, when its bounds cost it some, a comment saying so. */
static int add_jvm(struct pinned_pprof_build *pb, const struct jvm *j)
{
    char pid[32];
    snprintf(pid, sizeof(pid), "%" PRId64, j->pid);
    struct pprof_label labels[2] = {{.key = "pid", .str = pid}, {.key = "app", .str = j->hello.app}};
    if (!j->pinprofile)
        return 0;
    int rc =
        pinprofile_collect(j->pinprofile, pb->now, pb->span_ns, pb->b, labels, j->hello.app && *j->hello.app ? 2 : 1);
    struct pinprofile_drops d;
    pinprofile_drops(j->pinprofile, &d);
    uint64_t forgotten = session_pins_lost(j->pins);
    if (!rc && (d.stacks || d.entries || forgotten)) { /* said, not hidden: what the bounds cost this JVM */
        char text[256];
        snprintf(text, sizeof(text),
                 "pid %s: %" PRIu64 " pins counted under [other stacks] (stack table full), %" PRIu64
                 " dropped (a second's table full), %" PRIu64 " pins in progress forgotten",
                 pid, d.stacks, d.entries, forgotten);
        rc = pprof_builder_comment(pb->b, text);
    }
    return rc;
}

int pinned_pprof_step(struct pinned_pprof_build *pb, const struct jvms *r, int64_t (*clock)(void), int64_t until)
{
    while (pb->next < pb->n) {
        size_t i = pb->next++;
        const struct jvm *j = jvms_first(r);
        while (j && !(jvm_ident_same(&j->ident, &pb->idents[i]) && j->start_unix_ns == pb->starts[i]))
            j = j->next;
        int rc = j ? add_jvm(pb, j) : 0; /* gone since the start: nothing to add */
        if (rc)
            return rc;
        if (clock && clock() >= until)
            break;
    }
    return pb->next == pb->n;
}

int pinned_pprof_finish(struct pinned_pprof_build *pb, int64_t now_unix_ns, int64_t started_ns, uint8_t **out,
                        size_t *len)
{
    int64_t duration = pb->span_ns;
    if (started_ns > 0 && pb->now - started_ns < duration)
        duration = pb->now - started_ns > 0 ? pb->now - started_ns : 0;
    pprof_builder_set_time(pb->b, now_unix_ns - duration, duration);
    return pprof_builder_encode(pb->b, out, len);
}

int pinned_pprof_render(const struct jvms *r, int64_t now, int64_t now_unix_ns, int64_t started_ns, int64_t span_ns,
                        uint8_t **out, size_t *len)
{
    struct pinned_pprof_build *pb = NULL;
    int rc = pinned_pprof_begin(&pb, r, now, span_ns);
    if (!rc)
        rc = pinned_pprof_step(pb, r, NULL, 0) == 1 ? 0 : -ENOMEM;
    if (!rc)
        rc = pinned_pprof_finish(pb, now_unix_ns, started_ns, out, len);
    pinned_pprof_free(pb);
    return rc;
}
