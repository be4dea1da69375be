#include "kernel_pins.h"

#include <inttypes.h>
#include <string.h>

#include "json.h"
#include "report.h"

#include "wire.h"

const char *kernel_state_name(int state)
{
    switch (state) {
    case VTPIN__V1__KERNEL_STATE__KERNEL_SLEEPING:
        return "sleeping";
    case VTPIN__V1__KERNEL_STATE__KERNEL_DISK:
        return "disk";
    case VTPIN__V1__KERNEL_STATE__KERNEL_RUNNABLE:
        return "runnable";
    default:
        return "unknown";
    }
}

/* Overlap of k with p (the session's end for a pin in progress), 0 when none. */
static int64_t overlap(const struct recording_session *s, const struct recording_pin *p,
                       const struct recording_kinterval *k)
{
    if (!p->has_carrier_tid || k->carrier_tid != p->carrier_tid)
        return 0;
    int64_t end = p->ended ? p->end_ns : s->last_ns;
    int64_t lo = k->start_ns > p->start_ns ? k->start_ns : p->start_ns;
    int64_t hi = k->end_ns < end ? k->end_ns : end;
    return hi > lo ? hi - lo : 0;
}

/* The pin of the same virtual thread on the same carrier that ended last before p
 * started (NULL: none). After attach the sampler can break one pinned loop into
 * several pins; the parks between them belong to the loop. */
static const struct recording_pin *previous_pin(const struct recording_session *s, const struct recording_pin *p)
{
    const struct recording_pin *best = NULL;
    if (!p->has_carrier_tid || !p->has_vthread_id)
        return NULL;
    for (size_t i = 0; i < s->n_pins; i++) {
        const struct recording_pin *q = &s->pins[i];
        if (q == p || !q->ended || !q->has_carrier_tid || q->carrier_tid != p->carrier_tid || !q->has_vthread_id ||
            q->vthread_id != p->vthread_id || q->end_ns > p->start_ns)
            continue;
        if (!best || q->end_ns > best->end_ns)
            best = q;
    }
    return best;
}

void kernel_parks_json(struct json *j, const struct recording_session *s, const struct recording_pin *p)
{
    const struct recording_pin *prev = previous_pin(s, p);
    json_key(j, "parks");
    json_array_begin(j);
    for (size_t i = 0; i < s->n_kintervals; i++) {
        const struct recording_kinterval *k = &s->kintervals[i];
        if (k->state != VTPIN__V1__KERNEL_STATE__KERNEL_SLEEPING && k->state != VTPIN__V1__KERNEL_STATE__KERNEL_DISK)
            continue;
        int between = prev && k->carrier_tid == p->carrier_tid && k->start_ns >= prev->end_ns &&
                      k->end_ns <= p->start_ns;
        if (!between && overlap(s, p, k) == 0)
            continue;
        int64_t unix_ns;
        json_object_begin_inline(j);
        json_key(j, "start_ns");
        if (recording_unix_ns(s, k->start_ns, &unix_ns) == 0)
            json_int(j, unix_ns);
        else
            json_null(j);
        json_kv_int(j, "duration_ns", k->end_ns - k->start_ns);
        json_kv_string(j, "state", kernel_state_name(k->state));
        json_object_end(j);
    }
    json_array_end(j);
}

int kernel_pin(const struct recording_session *s, const struct recording_pin *p, struct pin_kernel *out)
{
    memset(out, 0, sizeof(*out));
    if (!p->has_carrier_tid || s->n_kintervals == 0)
        return 0;
    int64_t best = -1;
    for (size_t i = 0; i < s->n_kintervals; i++) {
        const struct recording_kinterval *k = &s->kintervals[i];
        int64_t o = overlap(s, p, k);
        if (o == 0)
            continue;
        out->off_cpu_ns += o;
        out->runqueue_ns += k->runqueue_ns;
        out->intervals++;
        if (o > best) {
            best = o;
            out->main = k;
        }
    }
    return out->intervals > 0;
}

/* A carrier's name from the pins that ran on it (NULL when none says). */
static const char *carrier_name(const struct recording_session *s, int32_t tid)
{
    for (size_t i = 0; i < s->n_pins; i++)
        if (s->pins[i].has_carrier_tid && s->pins[i].carrier_tid == tid && s->pins[i].carrier_name)
            return s->pins[i].carrier_name;
    return NULL;
}

void kernel_times_json(struct json *j, const struct recording_session *s)
{
    json_key(j, "kernel_times");
    if (!s->ktimes) {
        json_null(j);
        return;
    }
    json_object_begin(j);
    int64_t unix_ns;
    json_key(j, "time_ns");
    if (recording_unix_ns(s, s->ktimes_ns, &unix_ns) == 0)
        json_int(j, unix_ns);
    else
        json_null(j);
    json_key(j, "carriers");
    json_array_begin(j);
    for (size_t i = 0; i < s->n_ktimes; i++) {
        const struct recording_ktimes *k = &s->ktimes[i];
        json_object_begin_inline(j);
        json_kv_int(j, "tid", k->carrier_tid);
        json_kv_string(j, "name", carrier_name(s, k->carrier_tid));
        json_kv_uint(j, "on_cpu_ns", k->on_cpu_ns);
        json_kv_uint(j, "off_cpu_ns", k->off_cpu_ns);
        json_kv_uint(j, "runqueue_ns", k->runqueue_ns);
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

void kernel_times_text(FILE *out, const struct recording_session *s)
{
    if (!s->ktimes)
        return;
    fputs("kernel view (collector): carrier times since tracked\n", out);
    for (size_t i = 0; i < s->n_ktimes; i++) {
        const struct recording_ktimes *k = &s->ktimes[i];
        char a[64], b[64], c[64];
        const char *name = carrier_name(s, k->carrier_tid);
        fprintf(out, "  %s (tid %" PRId32 "): on CPU %s, off CPU %s, run queue %s\n", name ? name : "carrier",
                k->carrier_tid, report_format_duration((int64_t)k->on_cpu_ns, a, sizeof(a)),
                report_format_duration((int64_t)k->off_cpu_ns, b, sizeof(b)),
                report_format_duration((int64_t)k->runqueue_ns, c, sizeof(c)));
    }
}
