/* The record the callbacks queue for the writer (and the watchdog builds
 * for its own pins): a pin's start or end, or a carrier's start. */
#ifndef VTPIN_PIN_REC_H
#define VTPIN_PIN_REC_H

#include <jvmti.h>
#include <stddef.h>
#include <stdint.h>

#include "jthread.h"

enum rec_kind {
    REC_PIN_START = 1,
    REC_PIN_END = 2,
    REC_CARRIER_START = 3,
};

/* Values match vtpin.v1.PinReason. */
enum pin_reason {
    REASON_UNKNOWN = 0,
    REASON_MONITOR = 1,
    REASON_NATIVE = 2,
    REASON_CRITICAL_SECTION = 3,
    REASON_MONITOR_ENTER = 4,
    REASON_OBJECT_WAIT = 5,
    REASON_NATIVE_BLOCK = 6,
    REASON_VM_BLOCK = 7,
};

#define REC_NAME_MAX JTHREAD_NAME_MAX

/* What the pinned thread blocks in: the blocking operation of a NATIVE or
 * CRITICAL_SECTION pin on JDK 24+ can be a contended entry or Object.wait. */
enum pin_op {
    PIN_OP_PARK = 0, /* parkOnCarrierThread, or a pin the writer found itself */
    PIN_OP_ENTER = 1,
    PIN_OP_WAIT = 2,
};

struct pin_rec {
    uint8_t kind;
    uint8_t reason;
    uint8_t truncated;
    uint8_t stack_deferred; /* the writer takes the stack if the pin outlasts the threshold */
    uint8_t op;             /* enum pin_op */
    uint8_t monitors_later; /* frames only: the writer reads the monitors if it reports the pin in progress */
    int16_t jdk_code;       /* the JDK's freeze result (Continuation.isPinned0) at the start, -1: not asked */
    int32_t carrier_tid;
    uint64_t pin_id;
    int64_t time_ns;
    int64_t vthread_id;
    char vthread_name[REC_NAME_MAX];
    char carrier_name[REC_NAME_MAX];
    uint32_t frame_count;
    /* depth slots, as GetStackTrace fills them, then depth monitor counts
     * (pin_rec_monitors): one record size per queue, pins_record_size(depth). */
    jvmtiFrameInfo frames[];
};

static inline size_t pins_record_size(unsigned depth)
{
    return sizeof(struct pin_rec) + depth * (sizeof(jvmtiFrameInfo) + sizeof(uint16_t));
}

_Static_assert(_Alignof(jvmtiFrameInfo) >= _Alignof(uint16_t), "the monitor counts follow the frames unpadded");

/* The monitors each frame holds, stored after the depth frame slots. */
static inline uint16_t *pin_rec_monitors(struct pin_rec *r, unsigned depth)
{
    return (uint16_t *)(void *)(r->frames + depth);
}

static inline const uint16_t *pin_rec_monitors_const(const struct pin_rec *r, unsigned depth)
{
    return (const uint16_t *)(const void *)(r->frames + depth);
}

#endif
