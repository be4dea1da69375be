#include "gates.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/frames_kind.h"
#include "common/units.h"
#include "exit_codes.h"
#include "pin_groups.h"
#include "report.h"
#include "vtpin.pb-c.h"

/* 1 when "class.method" of m matches one of patterns[n] (fnmatch). */
static int method_matches(const struct recording_method *m, const char *const *patterns, size_t n)
{
    char name[1024];
    snprintf(name, sizeof(name), "%s.%s", m->class_name, m->name);
    for (size_t i = 0; i < n; i++)
        if (fnmatch(patterns[i], name, 0) == 0)
            return 1;
    return 0;
}

/* 1 when a frame of stack matches one of the allow patterns. */
static int stack_allowed(const struct gate_config *c, const struct recording_stack *stack)
{
    if (!c->n_allow || !stack)
        return 0;
    for (uint32_t f = 0; f < stack->count; f++)
        if (method_matches(stack->frames[f].method, c->allow, c->n_allow))
            return 1;
    return 0;
}

int gates_hog_allowed(const struct gate_config *c, const struct recording_hog *h)
{
    return stack_allowed(c, h->stack);
}

int gates_pin_allowed(const struct gate_config *c, const struct recording_pin *p)
{
    return stack_allowed(c, p->stack);
}

int gates_pin_jdk_internal(const struct recording_pin *p)
{
    return p->origin == PIN_ORIGIN_JDK;
}

/* 1 when --only patterns were given and the culprit frame (index culprit of stack when
 * has_culprit) matches none of them. */
static int culprit_not_only(const struct gate_config *c, const struct recording_stack *stack, int has_culprit,
                            uint32_t culprit)
{
    if (!c->n_only)
        return 0;
    if (!stack || !has_culprit || culprit >= stack->count)
        return 1;
    return !method_matches(stack->frames[culprit].method, c->only, c->n_only);
}

int gates_pin_not_only(const struct gate_config *c, const struct recording_pin *p)
{
    return culprit_not_only(c, p->stack, p->has_culprit, p->culprit);
}

int gates_pin_baselined(const struct gate_config *c, const struct recording_pin *p)
{
    if (!c->baseline || !c->run_sites)
        return 0;
    const struct baseline_site *site = baseline_site_of(c->run_sites, p);
    return site && !baseline_site_fails(c->baseline, site, c->baseline_tolerance_pct);
}

/* Set aside before a baseline is applied: the pins a baseline is made of are the others. */
static int set_aside_before_baseline(const struct gate_config *c, const struct recording_pin *p)
{
    return gates_pin_allowed(c, p) || (!c->count_jdk_pins && gates_pin_jdk_internal(p)) || gates_pin_not_only(c, p);
}

int gates_pin_set_aside(const struct gate_config *c, const struct recording_pin *p)
{
    return set_aside_before_baseline(c, p) || gates_pin_baselined(c, p);
}

int gates_run_sites(const struct gate_config *c, struct recording *const *recs, size_t n, struct baseline *out)
{
    for (size_t r = 0; r < n; r++)
        for (size_t s = 0; s < recs[r]->n_sessions; s++) {
            struct pin_sums cursor; /* in start order: a site's example is its earliest pin's */
            struct recording_pin_sum sum;
            int rc = pin_sums_begin(&cursor, recs[r]->sessions[s]);
            while (!rc && pin_sums_next(&cursor, &sum))
                if (!set_aside_before_baseline(c, sum.pin))
                    rc = baseline_add_pins(out, sum.pin, sum.count);
            pin_sums_end(&cursor);
            if (rc)
                return rc;
        }
    baseline_sort(out);
    return 0;
}

static void add_reason(struct gate_result *out, const char *line)
{
    size_t len = strlen(out->why);
    snprintf(out->why + len, sizeof(out->why) - len, "%s%s", len ? "\n" : "", line);
    out->failed = 1;
}

/* --baseline: one line for each site of the run that is not in the baseline or outgrew it, the
 * first few named (the JUnit cases and the report name every one). */
static void judge_sites(const struct gate_config *c, struct gate_result *out)
{
    if (!c->baseline || !c->run_sites)
        return;
    enum { NAMED = 8 };
    char line[768];
    for (size_t i = 0; i < c->run_sites->n; i++) {
        const struct baseline_site *s = &c->run_sites->sites[i];
        if (!baseline_site_fails(c->baseline, s, c->baseline_tolerance_pct))
            continue;
        if (++out->sites_failed > NAMED)
            continue;
        const struct baseline_site *known = baseline_find(c->baseline, s);
        char was[96] = "not in the baseline";
        if (known)
            snprintf(was, sizeof(was), "the baseline has %" PRIu64 ", over its %d %% tolerance", known->pins,
                     c->baseline_tolerance_pct);
        const char *at = s->example_at ? s->example_at : "";
        snprintf(line, sizeof(line), "--baseline: %s pin site %.200s%s%.100s %s%s%.60s%s: %" PRIu64 " pin(s), %s%s%s",
                 known ? "grown" : "new", s->class_name, s->method[0] ? "." : "", s->method, s->reason,
                 s->library[0] ? " (" : "", s->library, s->library[0] ? ")" : "", s->pins, was, at[0] ? "; at " : "",
                 at);
        add_reason(out, line);
    }
    if (out->sites_failed > NAMED) {
        snprintf(line, sizeof(line), "--baseline: %zu more new or grown pin site(s) (the JUnit cases name each)",
                 out->sites_failed - NAMED);
        add_reason(out, line);
    }
}

void gates_begin(struct gate_result *out)
{
    memset(out, 0, sizeof(*out));
}

/* The kind of the session's first deadlock, kept in out when it is the run's first. */
static void note_deadlock(const struct recording_session *s, struct gate_result *out)
{
    for (size_t i = 0; i < s->n_notices && !out->first_deadlock[0]; i++) {
        const char *kind = recording_deadlock_kind(&s->notices[i]);
        if (kind)
            snprintf(out->first_deadlock, sizeof(out->first_deadlock), "%s", kind);
    }
}

/* The session's pins into out: each set aside (and why) or counted; a group of pins summed up
 * (cli/report/pin_groups.h) as its pins, which are alike in all a gate reads. 0 or -ENOMEM. */
static int count_pins(const struct gate_config *c, const struct recording_session *s, struct gate_result *out)
{
    struct pin_sums cursor;
    struct recording_pin_sum sum;
    int rc = pin_sums_begin(&cursor, s);
    while (!rc && pin_sums_next(&cursor, &sum)) {
        const struct recording_pin *p = sum.pin;
        if (gates_pin_allowed(c, p))
            out->allowed += sum.count;
        else if (!c->count_jdk_pins && gates_pin_jdk_internal(p))
            out->jdk_internal += sum.count;
        else if (gates_pin_not_only(c, p))
            out->not_only += sum.count;
        else if (gates_pin_baselined(c, p))
            out->baselined += sum.count;
        else {
            out->pins += sum.count;
            out->pinned_ns = recording_sat_add(out->pinned_ns, sum.total_ns);
            if (p->reason == VTPIN__V1__PIN_REASON__NATIVE_BLOCK)
                out->native_blocks += sum.count;
        }
    }
    pin_sums_end(&cursor);
    return rc;
}

/* The session's carrier hogs into out, the same way. */
static void count_hogs(const struct gate_config *c, const struct recording_session *s, struct gate_result *out)
{
    for (size_t i = 0; i < s->n_hogs; i++) {
        const struct recording_hog *h = &s->hogs[i];
        if (gates_hog_allowed(c, h)) {
            out->hogs_allowed++;
            continue;
        }
        if (culprit_not_only(c, h->stack, h->has_culprit, h->culprit)) {
            out->not_only++;
            continue;
        }
        out->hogs++;
        out->hogged_ns = recording_sat_add(out->hogged_ns, recording_hog_duration(s, h));
    }
}

int gates_count(const struct gate_config *c, const struct recording *r, struct gate_result *out)
{
    struct gate_result counted = *out;
    for (size_t s = 0; s < r->n_sessions; s++) {
        if (count_pins(c, r->sessions[s], &counted))
            return -ENOMEM;
        count_hogs(c, r->sessions[s], &counted);
    }
    *out = counted;
    for (size_t s = 0; s < r->n_sessions; s++) {
        out->deadlocks += recording_deadlocks(r->sessions[s]);
        note_deadlock(r->sessions[s], out);
    }
    return 0;
}

void gates_judge(const struct gate_config *c, struct gate_result *out)
{
    char line[256], a[64], b[64];
    if (c->fail_pins >= 0 && out->pins >= (uint64_t)c->fail_pins) {
        snprintf(line, sizeof(line), "--fail-on-pins %" PRId64 ": %" PRIu64 " pins", c->fail_pins, out->pins);
        add_reason(out, line);
    }
    if (c->fail_pinned_ns >= 0 && out->pinned_ns >= c->fail_pinned_ns) {
        snprintf(line, sizeof(line), "--fail-on-pinned-time %s: %s pinned",
                 units_format_duration(c->fail_pinned_ns, a, sizeof(a)),
                 units_format_duration(out->pinned_ns, b, sizeof(b)));
        add_reason(out, line);
    }
    if (c->fail_on_native_block && out->native_blocks > 0) {
        snprintf(line, sizeof(line), "--fail-on-native-block: %" PRIu64 " carrier(s) blocked in native code",
                 out->native_blocks);
        add_reason(out, line);
    }
    if (c->fail_on_deadlock && out->deadlocks) {
        snprintf(line, sizeof(line),
                 "--fail-on-deadlock: %" PRIu64 " deadlock(s) found live (%s): the report's DEADLOCK line names the "
                 "lock, its owner and every pinned carrier",
                 out->deadlocks, out->first_deadlock);
        add_reason(out, line);
    }
    judge_sites(c, out);
    if (c->fail_hogs && out->hogs >= c->fail_hogs) {
        snprintf(line, sizeof(line), "--fail-on-hogs %" PRIu64 ": %" PRIu64 " carrier hog(s), %s in all", c->fail_hogs,
                 out->hogs, units_format_duration(out->hogged_ns, a, sizeof(a)));
        add_reason(out, line);
    }
}

void gates_evaluate(const struct gate_config *c, struct recording *const *recs, size_t n, struct gate_result *out)
{
    gates_begin(out);
    for (size_t r = 0; r < n; r++)
        if (gates_count(c, recs[r], out))
            add_reason(out, "out of memory to count a recording's pins");
    gates_judge(c, out);
}

void gates_unjudged(struct gate_result *out, size_t running_jvms, int64_t waited_ns, size_t unreadable, int no_baseline)
{
    char line[256], a[64];
    if (running_jvms) {
        snprintf(line, sizeof(line),
                 "not judged: %zu JVM(s) still running %s after the command exited (--background-timeout)",
                 running_jvms, units_format_duration(waited_ns, a, sizeof(a)));
        add_reason(out, line);
    }
    if (unreadable) {
        snprintf(line, sizeof(line), "not judged: %zu recording(s) of this run could not be read", unreadable);
        add_reason(out, line);
    }
    if (no_baseline)
        add_reason(out, "not judged against --baseline: out of memory for the run's pin sites");
}

int gates_exit_status(const struct gate_result *g, size_t judged, int command_status, int stop_signal)
{
    if (stop_signal)
        return CLI_EXIT_SIGNAL_BASE + stop_signal;
    if (g->failed)
        return CLI_EXIT_GATE;
    if (command_status)
        return command_status;
    return judged ? CLI_EXIT_OK : CLI_EXIT_NOTHING_JUDGED;
}
