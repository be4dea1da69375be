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

int pinned_pprof_render(const struct jvms *r, int64_t now, int64_t now_unix_ns, int64_t started_ns, int64_t span_ns,
                        uint8_t **out, size_t *len)
{
    struct pprof_builder *b = NULL;
    int rc = pprof_builder_new(&b, pprof_pinned_types, PPROF_PINNED_N);
    if (rc)
        return rc;
    char comment[128];
    snprintf(comment, sizeof(comment), "vtpin collector: pinned time of its JVMs over the last %lld s",
             (long long)(span_ns / 1000000000LL));
    rc = pprof_builder_comment(b, comment);
    for (const struct jvm *j = jvms_first(r); j && !rc; j = j->next) {
        char pid[32];
        snprintf(pid, sizeof(pid), "%" PRId64, j->pid);
        struct pprof_label labels[2] = {{.key = "pid", .str = pid}, {.key = "app", .str = j->hello.app}};
        if (!j->pinprofile)
            continue;
        rc = pinprofile_collect(j->pinprofile, now, span_ns, b, labels, j->hello.app && *j->hello.app ? 2 : 1);
        struct pinprofile_drops d;
        pinprofile_drops(j->pinprofile, &d);
        if (!rc && (d.stacks || d.entries || d.open)) { /* said, not hidden: what the bounds cost this JVM */
            char text[256];
            snprintf(text, sizeof(text),
                     "pid %s: %" PRIu64 " pins counted under [other stacks] (stack table full), %" PRIu64
                     " dropped (a second's table full), %" PRIu64 " pins in progress forgotten",
                     pid, d.stacks, d.entries, d.open);
            rc = pprof_builder_comment(b, text);
        }
    }
    int64_t duration = span_ns;
    if (started_ns > 0 && now - started_ns < duration)
        duration = now - started_ns > 0 ? now - started_ns : 0;
    pprof_builder_set_time(b, now_unix_ns - duration, duration);
    if (!rc)
        rc = pprof_builder_encode(b, out, len);
    pprof_builder_free(b);
    return rc;
}
