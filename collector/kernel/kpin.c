#include "kpin.h"

#include <string.h>

#include "kstate.h"
#include "wire.h"

int kpin_reason(const struct kview_interval *iv)
{
    if (iv->vthread_id <= 0 || (iv->state != KSTATE_SLEEPING && iv->state != KSTATE_DISK))
        return -1;
    switch (iv->java_wait) {
    case JAVA_WAIT_BLOCKED: /* a park on the carrier: why, where the JVM let it be read */
        switch (iv->park_why) {
        case PARK_WHY_CRITICAL_SECTION:
            return VTPIN__V1__PIN_REASON__CRITICAL_SECTION;
        case PARK_WHY_MONITOR:
            return VTPIN__V1__PIN_REASON__MONITOR;
        case PARK_WHY_NATIVE:
            return VTPIN__V1__PIN_REASON__NATIVE;
        default:
            return VTPIN__V1__PIN_REASON__PIN_REASON_UNKNOWN;
        }
    case JAVA_WAIT_MONITOR_ENTER:
        return VTPIN__V1__PIN_REASON__MONITOR_ENTER;
    case JAVA_WAIT_MONITOR_WAIT:
        return VTPIN__V1__PIN_REASON__OBJECT_WAIT;
    case JAVA_WAIT_IN_NATIVE:
        return VTPIN__V1__PIN_REASON__NATIVE_BLOCK;
    default:
        return -1;
    }
}

void kpin_next(struct kpin_thread *t, const struct kview_interval *iv, struct kpin_step *out)
{
    memset(out, 0, sizeof(*out));
    if (t->open && iv->start_ns < t->start_ns)
        return; /* older than the pin in progress: told late (kglue reads the ring buffer first), dropped */
    if (t->done_ns && iv->start_ns <= t->done_ns)
        return; /* an interval already told ended (a crossing read before its end, told after it) */
    if (iv->end_ns > 0)
        t->done_ns = iv->start_ns;
    if (t->open && t->start_ns != iv->start_ns) {
        /* a later interval: the thread ran in between, so its pin ended by this one's start */
        out->end_stale = 1;
        out->stale_end_ns = iv->start_ns;
        t->open = 0;
    }
    int reason = kpin_reason(iv);
    if (!t->open && reason >= 0) {
        out->start = 1;
        out->reason = reason;
        t->open = 1;
        t->start_ns = iv->start_ns;
    }
    if (t->open && iv->end_ns > 0) {
        out->end = 1;
        t->open = 0;
    }
}
