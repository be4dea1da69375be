#include "wire_names.h"

#include <stddef.h>

#include "vtpin.pb-c.h"

const char *wire_reason_name(int reason)
{
    switch (reason) {
    case VTPIN__V1__PIN_REASON__MONITOR:
        return "MONITOR";
    case VTPIN__V1__PIN_REASON__NATIVE:
        return "NATIVE";
    case VTPIN__V1__PIN_REASON__CRITICAL_SECTION:
        return "CRITICAL_SECTION";
    case VTPIN__V1__PIN_REASON__MONITOR_ENTER:
        return "MONITOR_ENTER";
    case VTPIN__V1__PIN_REASON__OBJECT_WAIT:
        return "OBJECT_WAIT";
    case VTPIN__V1__PIN_REASON__NATIVE_BLOCK:
        return "NATIVE_BLOCK";
    case VTPIN__V1__PIN_REASON__VM_BLOCK:
        return "VM_BLOCK";
    default:
        return "UNKNOWN";
    }
}

const char *wire_mode_name(int mode)
{
    switch (mode) {
    case VTPIN__V1__LOAD_MODE__STARTUP:
        return "startup";
    case VTPIN__V1__LOAD_MODE__ATTACH:
        return "attach";
    case VTPIN__V1__LOAD_MODE__KERNEL:
        return "kernel";
    default:
        return NULL;
    }
}

const char *wire_severity_name(int severity)
{
    switch (severity) {
    case VTPIN__V1__SEVERITY__INFO:
        return "info";
    case VTPIN__V1__SEVERITY__ERROR:
        return "error";
    default:
        return "warning";
    }
}

const char *wire_java_wait_name(int wait)
{
    switch (wait) {
    case VTPIN__V1__JAVA_WAIT__JAVA_BLOCKED:
        return "blocked";
    case VTPIN__V1__JAVA_WAIT__JAVA_MONITOR_ENTER:
        return "monitor_enter";
    case VTPIN__V1__JAVA_WAIT__JAVA_MONITOR_WAIT:
        return "monitor_wait";
    case VTPIN__V1__JAVA_WAIT__JAVA_IN_NATIVE:
        return "in_native";
    case VTPIN__V1__JAVA_WAIT__JAVA_OTHER:
        return "other";
    case VTPIN__V1__JAVA_WAIT__JAVA_VM_WAIT:
        return "vm";
    default:
        return "unknown";
    }
}

const char *wire_kernel_state_name(int state)
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

const char *wire_occupancy_name(int source)
{
    switch (source) {
    case VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_EXACT:
        return "exact";
    case VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_SAMPLED:
        return "sampled";
    default:
        return "off";
    }
}

const char *wire_event_name(int body)
{
    static const char *const names[] = {"nothing",       "Hello", "StringDef", "MethodDef", "StackDef", "PinStart",
                                        "PinEnd",        "Stats", "Notice",    "Goodbye",   "Carrier",  "Transitions",
                                        "CarrierSample", "Alert", "Query",     "QueryReply"};
    return body >= 0 && (size_t)body < sizeof(names) / sizeof(names[0]) ? names[body] : "an unknown event";
}

int wire_held_sleep(int state, int64_t vthread_id, int java_wait)
{
    return (state == VTPIN__V1__KERNEL_STATE__KERNEL_SLEEPING || state == VTPIN__V1__KERNEL_STATE__KERNEL_DISK) &&
           vthread_id > 0 && java_wait != VTPIN__V1__JAVA_WAIT__JAVA_VM_WAIT;
}
