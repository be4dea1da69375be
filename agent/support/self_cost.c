#include "self_cost.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static _Atomic uint64_t calls[CALL_KINDS];
static int64_t cpu_at_reset;
static clockid_t writer_clock;
static _Atomic int has_writer_clock;

void self_cost_writer_started(void)
{
    if (pthread_getcpuclockid(pthread_self(), &writer_clock) == 0)
        atomic_store(&has_writer_clock, 1);
}

/* The writer's CPU time so far, from any thread; -1 before it started or when unknown. */
static int64_t writer_cpu_ns(void)
{
    struct timespec ts;
    if (!atomic_load(&has_writer_clock) || clock_gettime(writer_clock, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const char *const names[CALL_KINDS] = {
    [CALL_GET_STACK_TRACE] = "GetStackTrace",
    [CALL_GET_THREAD_STATE] = "GetThreadState",
    [CALL_GET_OWNED_MONITOR_STACK_DEPTH_INFO] = "GetOwnedMonitorStackDepthInfo",
    [CALL_GET_OWNED_MONITOR_INFO] = "GetOwnedMonitorInfo",
    [CALL_GET_CURRENT_CONTENDED_MONITOR] = "GetCurrentContendedMonitor",
    [CALL_GET_OBJECT_MONITOR_USAGE] = "GetObjectMonitorUsage",
    [CALL_GET_ALL_THREADS] = "GetAllThreads",
    [CALL_GET_FRAME_LOCATION] = "GetFrameLocation",
    [CALL_GET_LOCAL_OBJECT] = "GetLocalObject",
    [CALL_GET_VIRTUAL_THREAD] = "GetVirtualThread",
    [CALL_THREAD_SNAPSHOT] = "ThreadSnapshot.of",
};

void self_cost_count(enum jvmti_call call)
{
    if (call < CALL_KINDS)
        atomic_fetch_add_explicit(&calls[call], 1, memory_order_relaxed);
}

const char *self_cost_call_name(enum jvmti_call call)
{
    return call < CALL_KINDS ? names[call] : "?";
}

uint64_t self_cost_calls(enum jvmti_call call)
{
    return call < CALL_KINDS ? atomic_load_explicit(&calls[call], memory_order_relaxed) : 0;
}

void self_cost_reset(void)
{
    for (unsigned i = 0; i < CALL_KINDS; i++)
        atomic_store_explicit(&calls[i], 0, memory_order_relaxed);
    int64_t now = writer_cpu_ns();
    cpu_at_reset = now > 0 ? now : 0;
}

int64_t self_cost_writer_cpu_ns(void)
{
    int64_t now = writer_cpu_ns();
    return now < 0 ? -1 : now - cpu_at_reset;
}
