#include "junit.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "common/units.h"
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
    /* a site is set aside when every pin at it is */
    for (size_t i = 0; i < s->n_pins; i++) {
        const struct recording_pin *p = &s->pins[i];
        if (p->reason != site->reason)
            continue;
        int here = p->stack && site->culprit && p->has_culprit &&
                   sites_same_place(&p->stack->frames[p->culprit], site->culprit);
        if ((here || (!site->culprit && !p->stack)) && !gates_pin_set_aside(c, p))
            return 0;
    }
    return 1;
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

int junit_write(FILE *out, const struct gate_config *c, const struct gate_result *g, struct recording *const *recs,
                size_t n)
{
    size_t cases = 1, failures = g->failed ? 1 : 0;
    for (size_t r = 0; r < n; r++)
        for (size_t s = 0; s < recs[r]->n_sessions; s++) {
            struct sites sites;
            if (sites_build(recs[r]->sessions[s], &sites))
                return -ENOMEM;
            cases += sites.count;
            for (size_t i = 0; i < sites.count; i++)
                failures += g->failed && !site_allowed(c, recs[r]->sessions[s], &sites.items[i]);
            sites_fini(&sites);
            const struct recording_session *sess = recs[r]->sessions[s];
            cases += sess->n_hogs;
            for (size_t i = 0; i < sess->n_hogs; i++)
                failures += hog_fails(c, g, &sess->hogs[i]);
            size_t deadlocks = recording_deadlocks(sess);
            cases += deadlocks;
            failures += c->fail_on_deadlock ? deadlocks : 0;
        }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n", out);
    fprintf(out, "  <testsuite name=\"vtpin\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n", cases, failures);
    fputs("    <testcase classname=\"vtpin\" name=\"gates\">\n", out);
    if (g->failed) {
        fputs("      <failure message=\"", out);
        put_escaped(out, g->why);
        fputs("\" type=\"gate\"/>\n", out);
    }
    fputs("    </testcase>\n", out);
    for (size_t r = 0; r < n; r++)
        for (size_t s = 0; s < recs[r]->n_sessions; s++) {
            struct sites sites;
            if (sites_build(recs[r]->sessions[s], &sites))
                return -ENOMEM;
            for (size_t i = 0; i < sites.count; i++)
                put_case(out, c, g, recs[r]->sessions[s], &sites.items[i]);
            sites_fini(&sites);
            for (size_t i = 0; i < recs[r]->sessions[s]->n_hogs; i++)
                put_hog(out, c, g, recs[r]->sessions[s], &recs[r]->sessions[s]->hogs[i]);
            for (size_t i = 0; i < recs[r]->sessions[s]->n_notices; i++)
                if (recording_deadlock_kind(&recs[r]->sessions[s]->notices[i]))
                    put_deadlock(out, c, recs[r]->sessions[s], &recs[r]->sessions[s]->notices[i]);
        }
    fputs("  </testsuite>\n</testsuites>\n", out);
    return ferror(out) ? -EIO : 0;
}
