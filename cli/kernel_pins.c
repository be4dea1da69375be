#include "kernel_pins.h"

#include <string.h>

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

int kernel_pin(const struct recording_session *s, const struct recording_pin *p, struct pin_kernel *out)
{
    memset(out, 0, sizeof(*out));
    if (!p->has_carrier_tid || s->n_kintervals == 0)
        return 0;
    int64_t start = p->start_ns;
    int64_t end = p->ended ? p->end_ns : s->last_ns;
    int64_t best = -1;
    for (size_t i = 0; i < s->n_kintervals; i++) {
        const struct recording_kinterval *k = &s->kintervals[i];
        if (k->carrier_tid != p->carrier_tid)
            continue;
        int64_t lo = k->start_ns > start ? k->start_ns : start;
        int64_t hi = k->end_ns < end ? k->end_ns : end;
        if (hi <= lo)
            continue;
        out->off_cpu_ns += hi - lo;
        out->runqueue_ns += k->runqueue_ns;
        out->intervals++;
        if (hi - lo > best) {
            best = hi - lo;
            out->main = k;
        }
    }
    return out->intervals > 0;
}
