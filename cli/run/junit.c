#include "junit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"
#include "pin_groups.h"
#include "report.h"
#include "sites.h"
#include "wire.h"

static void put_escaped(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        switch (*p) {
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '&':
            fputs("&amp;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&apos;", out);
            break;
        default:
            if (*p < 0x20 && *p != '\n' && *p != '\t')
                fputc('?', out); /* not allowed in XML 1.0 */
            else
                fputc(*p, out);
        }
    }
}

/* <system-out>prefix summary</system-out> */
static void put_system_out(FILE *out, const char *prefix, const char *summary)
{
    fputs("      <system-out>", out);
    fputs(prefix, out);
    put_escaped(out, summary);
    fputs("</system-out>\n", out);
}

static int site_allowed(const struct gate_config *c, const struct recording_session *s, const struct site *site)
{
    /* a site is set aside when every pin at it is (a group's pins are alike in that) */
    struct pin_sums cursor;
    struct recording_pin_sum sum;
    int allowed = 1;
    if (pin_sums_begin(&cursor, s))
        return 0; /* out of memory: not said to be set aside */
    while (allowed && pin_sums_next(&cursor, &sum)) {
        const struct recording_pin *p = sum.pin;
        if (p->reason != site->reason)
            continue;
        int here = p->stack && site->culprit && p->has_culprit &&
                   sites_same_place(&p->stack->frames[p->culprit], site->culprit);
        if ((here || (!site->culprit && !p->stack)) && !gates_pin_set_aside(c, p))
            allowed = 0;
    }
    pin_sums_end(&cursor);
    return allowed;
}

static void put_case(FILE *out, const struct gate_config *c, const struct gate_result *g,
                     const struct recording_session *s, const struct site *site)
{
    char frame[1024] = "<no stack>", a[64], b[64];
    if (site->culprit)
        report_format_frame(site->culprit, frame, sizeof(frame));
    int allowed = site_allowed(c, s, site);
    fprintf(out, "    <testcase classname=\"vtpin.pid%" PRId64 ".%s\" name=\"", s->hello.pid,
            wire_reason_name(site->reason));
    put_escaped(out, frame);
    fprintf(out, "\" time=\"%.3f\">\n", (double)site->total_ns / 1e9);
    char summary[256];
    snprintf(summary, sizeof(summary), "%" PRIu64 " %s pin(s), total %s, longest %s%s", site->count,
             wire_reason_name(site->reason), units_format_duration(site->total_ns, a, sizeof(a)),
             units_format_duration(site->max_ns, b, sizeof(b)), site->ongoing ? ", some still pinned at the end" : "");
    if (allowed) {
        put_system_out(
            out, "not counted (--allow, only the JDK's own frames, outside --only, or in the --baseline): ", summary);
    } else if (g->failed) {
        fputs("      <failure message=\"", out);
        put_escaped(out, summary);
        fputs("\" type=\"pinning\">", out);
        if (site->example && site->example->stack) {
            const struct recording_stack *st = site->example->stack;
            for (uint32_t i = 0; i < st->count; i++) {
                char f[1024], m[256];
                report_format_frame(&st->frames[i], f, sizeof(f));
                report_pin_frame_markers(site->example, i, m, sizeof(m));
                fputs("\n    at ", out);
                put_escaped(out, f);
                put_escaped(out, m);
            }
        }
        fputs("\n      </failure>\n", out);
    } else {
        put_system_out(out, "", summary);
    }
    fputs("    </testcase>\n", out);
}

/* One case per carrier hog: a failure when the hogs gate failed and this one counts. */
static int hog_fails(const struct gate_config *c, const struct gate_result *g, const struct recording_hog *h)
{
    return c->fail_hogs && g->hogs >= c->fail_hogs && !gates_hog_allowed(c, h);
}

static void put_hog(FILE *out, const struct gate_config *c, const struct gate_result *g,
                    const struct recording_session *s, const struct recording_hog *h)
{
    char frame[1024] = "<no stack>", a[64], summary[1400];
    if (h->stack && h->has_culprit)
        report_format_frame(&h->stack->frames[h->culprit], frame, sizeof(frame));
    int64_t ns = recording_hog_duration(s, h);
    fprintf(out, "    <testcase classname=\"vtpin.pid%" PRId64 ".HOG\" name=\"", s->hello.pid);
    put_escaped(out, frame);
    fprintf(out, "\" time=\"%.3f\">\n", (double)ns / 1e9);
    snprintf(summary, sizeof(summary), "carrier hog: virtual thread %s held carrier %s for %s%s",
             h->vthread_name ? h->vthread_name : "?", h->carrier_name ? h->carrier_name : "?",
             units_format_duration(ns, a, sizeof(a)), h->ended ? "" : ", still running at the end");
    if (gates_hog_allowed(c, h)) {
        put_system_out(out, "not counted (--allow): ", summary);
    } else if (hog_fails(c, g, h)) {
        fputs("      <failure message=\"", out);
        put_escaped(out, summary);
        fputs("\" type=\"hog\">", out);
        for (uint32_t i = 0; h->stack && i < h->stack->count; i++) {
            char f[1024];
            report_format_frame(&h->stack->frames[i], f, sizeof(f));
            fputs("\n    at ", out);
            put_escaped(out, f);
        }
        fputs("\n      </failure>\n", out);
    } else {
        put_system_out(out, "", summary);
    }
    fputs("    </testcase>\n", out);
}

/* One case per deadlock the agent found live: a failure when the deadlock gate is on. */
static void put_deadlock(FILE *out, const struct gate_config *c, const struct recording_session *s,
                         const struct recording_notice *n)
{
    fprintf(out, "    <testcase classname=\"vtpin.pid%" PRId64 ".DEADLOCK\" name=\"", s->hello.pid);
    put_escaped(out, recording_deadlock_kind(n));
    fputs("\">\n", out);
    if (c->fail_on_deadlock) {
        fputs("      <failure message=\"", out);
        put_escaped(out, n->text ? n->text : "");
        fputs("\" type=\"deadlock\"/>\n", out);
    } else {
        put_system_out(out, "not a failure (--no-fail-on-deadlock): ", n->text ? n->text : "");
    }
    fputs("    </testcase>\n", out);
}

struct junit {
    /* the test cases so far, as XML, in a temporary file: the suite's header counts them, so it
     * is written after them, and a run's cases can be many megabytes */
    FILE *out;
    size_t n_cases, failures;
};

int junit_new(struct junit **out)
{
    struct junit *j = calloc(1, sizeof(*j));
    if (!j)
        return -ENOMEM;
    if (!(j->out = tmpfile())) {
        int rc = -errno;
        free(j);
        return rc;
    }
    *out = j;
    return 0;
}

/* One session's cases: its pin sites, its carrier hogs, its deadlocks. */
static int add_session(struct junit *j, const struct gate_config *c, const struct gate_result *g,
                       const struct recording_session *s)
{
    struct sites sites;
    if (sites_build(s, &sites))
        return -ENOMEM;
    for (size_t i = 0; i < sites.count; i++) {
        put_case(j->out, c, g, s, &sites.items[i]);
        j->failures += g->failed && !site_allowed(c, s, &sites.items[i]);
    }
    j->n_cases += sites.count;
    sites_fini(&sites);
    for (size_t i = 0; i < s->n_hogs; i++) {
        put_hog(j->out, c, g, s, &s->hogs[i]);
        j->failures += hog_fails(c, g, &s->hogs[i]);
    }
    j->n_cases += s->n_hogs;
    for (size_t i = 0; i < s->n_notices; i++)
        if (recording_deadlock_kind(&s->notices[i]))
            put_deadlock(j->out, c, s, &s->notices[i]);
    size_t deadlocks = recording_deadlocks(s);
    j->n_cases += deadlocks;
    j->failures += c->fail_on_deadlock ? deadlocks : 0;
    return 0;
}

int junit_add(struct junit *j, const struct gate_config *c, const struct gate_result *g, const struct recording *r)
{
    for (size_t s = 0; s < r->n_sessions; s++) {
        int rc = add_session(j, c, g, r->sessions[s]);
        if (rc)
            return rc;
    }
    return ferror(j->out) ? -EIO : 0;
}

int junit_write(FILE *out, struct junit *j, const struct gate_result *g)
{
    if (fflush(j->out) || fseek(j->out, 0, SEEK_SET))
        return -errno;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n", out);
    fprintf(out, "  <testsuite name=\"vtpin\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n", j->n_cases + 1,
            j->failures + (g->failed ? 1 : 0));
    fputs("    <testcase classname=\"vtpin\" name=\"gates\">\n", out);
    if (g->failed) {
        fputs("      <failure message=\"", out);
        put_escaped(out, g->why);
        fputs("\" type=\"gate\"/>\n", out);
    }
    fputs("    </testcase>\n", out);
    char chunk[1 << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), j->out)) > 0)
        fwrite(chunk, 1, n, out);
    if (ferror(j->out))
        return -EIO;
    fputs("  </testsuite>\n</testsuites>\n", out);
    return ferror(out) ? -EIO : 0;
}

void junit_free(struct junit *j)
{
    if (!j)
        return;
    fclose(j->out);
    free(j);
}
