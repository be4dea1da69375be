/* JVMTI wiring: the three exported entry points, capabilities and callbacks.
 * Agent_OnLoad and Agent_OnAttach share one init path; each callback belongs
 * to the module that needs it (pins.c, natives.c, writer.c). */
#include <jvmti.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "carriers.h"
#include "downcall.h"
#include "log.h"
#include "natives.h"
#include "options.h"
#include "pins.h"
#include "queue.h"
#include "writer.h"
#include "wire.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_MISSING 16

static struct {
    jvmtiEnv *jvmti;
    struct options options;
    char option_text[1024];
    struct queue *queue;
    int attach_mode;
    int breakpoints, monitor_events, monitor_depths, native_binds, downcall_names, constant_pool;
    unsigned jdk_feature;
    unsigned parallelism;
    char *java_version, *vm_name, *vm_version, *vm_vendor;
    char *app; /* main class or jar: the first word of sun.java.command */
    const char *missing[MAX_MISSING];
    unsigned missing_count;
} A;

static _Atomic int initialized;
static _Atomic int live;

static char *system_property(jvmtiEnv *jvmti, const char *name)
{
    char *value = NULL;
    if ((*jvmti)->GetSystemProperty(jvmti, name, &value) != JVMTI_ERROR_NONE)
        return NULL;
    char *copy = strdup(value);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)value);
    return copy;
}

static unsigned cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* The carrier count the default scheduler aims for, as VirtualThread computes it. */
static unsigned scheduler_parallelism(jvmtiEnv *jvmti)
{
    char *p = system_property(jvmti, "jdk.virtualThreadScheduler.parallelism");
    unsigned n = p ? (unsigned)strtoul(p, NULL, 10) : 0;
    free(p);
    return n ? n : cpu_count();
}

static void missing(const char *what, const char *cost)
{
    if (A.missing_count < MAX_MISSING)
        A.missing[A.missing_count++] = what;
    char text[320];
    snprintf(text, sizeof(text), "%s not available%s: %s", what, A.attach_mode ? " after attach" : "", cost);
    log_warn("%s", text);
    char code[96];
    snprintf(code, sizeof(code), "capability.%s", what);
    writer_notice(VTPIN__V1__SEVERITY__WARNING, code, text);
}


static int request_capabilities(jvmtiEnv *jvmti)
{
    jvmtiCapabilities potential, want;
    memset(&potential, 0, sizeof(potential));
    if ((*jvmti)->GetPotentialCapabilities(jvmti, &potential) != JVMTI_ERROR_NONE)
        return -1;
    if (!potential.can_support_virtual_threads)
        return -1;
    memset(&want, 0, sizeof(want));
    want.can_support_virtual_threads = 1;
    want.can_generate_breakpoint_events = potential.can_generate_breakpoint_events;
    want.can_get_bytecodes = potential.can_get_bytecodes;
    want.can_get_constant_pool = potential.can_get_constant_pool; /* VM_BLOCK: name the class */
    want.can_generate_monitor_events = potential.can_generate_monitor_events;
    want.can_get_owned_monitor_stack_depth_info = potential.can_get_owned_monitor_stack_depth_info;
    want.can_get_owned_monitor_info = potential.can_get_owned_monitor_info;
    want.can_generate_native_method_bind_events = potential.can_generate_native_method_bind_events;
    want.can_get_line_numbers = potential.can_get_line_numbers;
    want.can_get_source_file_name = potential.can_get_source_file_name;
    /* FFM downcall targets: a virtual thread's locals are read while it is suspended */
    want.can_access_local_variables =
        !A.options.downcalls_marked && potential.can_access_local_variables && potential.can_suspend;
    want.can_suspend = want.can_access_local_variables;
    if ((*jvmti)->AddCapabilities(jvmti, &want) != JVMTI_ERROR_NONE)
        return -1;
    A.breakpoints = want.can_generate_breakpoint_events && want.can_get_bytecodes;
    A.monitor_events = want.can_generate_monitor_events;
    A.monitor_depths = want.can_get_owned_monitor_stack_depth_info;
    A.native_binds = want.can_generate_native_method_bind_events;
    A.downcall_names = want.can_access_local_variables;
    A.constant_pool = want.can_get_constant_pool;
    downcall_configure(A.downcall_names);
    return 0;
}

/* Said at every (re)start: the Hello and the notices list them. */
static void tell_missing_capabilities(void)
{
    A.missing_count = 0;
    if (!A.breakpoints)
        missing("breakpoints", "park-based pins are found by sampling carriers instead: seen one sample period "
                              "late, reason inferred from the stack");
    if (!A.monitor_depths)
        missing("owned_monitor_stack_depth_info", "the monitors each frame holds are inferred from its bytecode");
    if (!A.downcall_names && !A.options.downcalls_marked)
        missing("access_local_variables", "FFM downcalls are found, but the C function they call is not named");
    if (!A.constant_pool)
        missing("constant_pool", "VM_BLOCK pins do not name the class the JVM waits to initialize");
    if (!A.native_binds)
        missing("native_method_bind_events", "native frames are not named with their library");
}

static void JNICALL on_native_bind(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method, void *address,
                                   void **new_address)
{
    (void)jvmti;
    (void)jni;
    (void)thread;
    (void)new_address;
    natives_put(method, address);
}

/* System properties are complete only from VMInit on (OnLoad sees a partial list). */
static void read_jvm_identity(jvmtiEnv *jvmti)
{
    free(A.vm_name); /* read again on a new attach after stop */
    free(A.vm_version);
    free(A.vm_vendor);
    free(A.java_version);
    A.vm_name = system_property(jvmti, "java.vm.name");
    A.vm_version = system_property(jvmti, "java.vm.version");
    A.vm_vendor = system_property(jvmti, "java.vm.vendor");
    /* the launcher passes the command as a VM property: "Main args..." or "app.jar args..." */
    A.app = system_property(jvmti, "sun.java.command");
    if (A.app)
        A.app[strcspn(A.app, " ")] = '\0';
    /* JVMTI exposes only the VM's own properties: java.version is the
     * VM version without its build suffix ("21.0.13+9-..." -> "21.0.13"). */
    A.java_version = A.vm_version ? strdup(A.vm_version) : NULL;
    if (A.java_version)
        A.java_version[strcspn(A.java_version, "+-")] = '\0';
    char *spec = system_property(jvmti, "java.vm.specification.version");
    A.jdk_feature = spec ? (unsigned)strtoul(spec, NULL, 10) : 0;
    free(spec);
    A.parallelism = scheduler_parallelism(jvmti);
}

/* The exact occupancy source: HotSpot's VirtualThreadMount/Unmount extension
 * events, looked up by name (their numbers are not part of any contract). */
static void enable_mount_events(jvmtiEnv *jvmti)
{
    jint n = 0;
    jvmtiExtensionEventInfo *events = NULL;
    int found = 0;
    if ((*jvmti)->GetExtensionEvents(jvmti, &n, &events) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n; i++) {
            jvmtiExtensionEvent cb = NULL;
            if (strcmp(events[i].id, "com.sun.hotspot.events.VirtualThreadMount") == 0)
                cb = (jvmtiExtensionEvent)carriers_on_mount;
            else if (strcmp(events[i].id, "com.sun.hotspot.events.VirtualThreadUnmount") == 0)
                cb = (jvmtiExtensionEvent)carriers_on_unmount;
            if (!cb)
                continue;
            /* Setting the callback is not enough: the event must also be enabled. */
            if ((*jvmti)->SetExtensionEventCallback(jvmti, events[i].extension_event_index, cb) == JVMTI_ERROR_NONE &&
                (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, (jvmtiEvent)events[i].extension_event_index,
                                                   NULL) == JVMTI_ERROR_NONE)
                found++;
        }
        (*jvmti)->Deallocate(jvmti, (unsigned char *)events);
    }
    if (found != 2)
        missing("virtual_thread_mount_events", "exact occupancy is not available; use occupancy=sampled");
}

static void enable_events(jvmtiEnv *jvmti, const jvmtiEvent *events, size_t n)
{
    for (size_t i = 0; i < n; i++)
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL);
}

static void start_detection(jvmtiEnv *jvmti, JNIEnv *jni)
{
    read_jvm_identity(jvmti);
    /* 21-23: every contended entry and Object.wait of a virtual thread pins; 24+ only under a
     * native frame or in a critical section (else it unmounts), asked of the JDK in the callback */
    int monitor_pins = A.monitor_events && A.jdk_feature < 24;
    if (!A.monitor_events)
        missing("monitor_events", A.jdk_feature < 24
                                      ? "contended monitor entry and Object.wait pins are not seen"
                                      : "contended monitor entry and Object.wait under a native frame are not seen");
    if (A.options.occupancy == OCCUPANCY_EXACT)
        enable_mount_events(jvmti);
    struct pins_setup setup = {
        .queue = A.queue,
        .depth = A.options.depth,
        .monitor_pins = monitor_pins,
        .monitor_events = A.monitor_events,
        .have_monitor_depths = A.monitor_depths,
        .defer_stacks = A.options.threshold_ns > 0,
        .threshold_ns = A.options.threshold_ns,
        .wake_writer = writer_wake,
    };
    pins_init(jvmti, jni, &setup, A.breakpoints);
    if (A.attach_mode) /* carriers started before us fire no ThreadStart */
        carriers_register_existing(jvmti, jni, pins_carrier_class());
    struct writer_config wc = {
        .options = &A.options,
        .option_text = A.option_text,
        .queue = A.queue,
        .attach_mode = A.attach_mode,
        .jdk_feature = A.jdk_feature,
        .monitor_depths = A.monitor_depths,
        .park_breakpoints = A.breakpoints,
        .parallelism = A.parallelism,
        .pid = getpid(),
        .java_version = A.java_version,
        .vm_name = A.vm_name,
        .vm_version = A.vm_version,
        .vm_vendor = A.vm_vendor,
        .app = A.app,
        .capabilities_missing = A.missing,
        .capabilities_missing_count = A.missing_count,
    };
    writer_configure(&wc); /* after every missing() above: the Hello lists them */
    int rc = writer_start(jvmti, jni);
    if (rc)
        log_error("cannot start the writer thread (%d): nothing will be reported", rc);
    static const jvmtiEvent always[] = {JVMTI_EVENT_BREAKPOINT, JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END};
    static const jvmtiEvent monitors[] = {JVMTI_EVENT_MONITOR_CONTENDED_ENTER, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
                                          JVMTI_EVENT_MONITOR_WAIT, JVMTI_EVENT_MONITOR_WAITED};
    enable_events(jvmti, always, sizeof(always) / sizeof(always[0]));
    if (A.monitor_events)
        enable_events(jvmti, monitors, sizeof(monitors) / sizeof(monitors[0]));
    atomic_store(&live, 1);
    log_info("detecting pins on JDK %u (%s, %s mode, threshold %.3f ms%s%s%s%s)", A.jdk_feature,
             A.java_version ? A.java_version : "?", A.attach_mode ? "attach" : "startup",
             (double)A.options.threshold_ns / 1e6, A.options.record_file[0] ? ", record " : "", A.options.record_file,
             A.options.collector ? ", collector " : "", A.options.collector ? "on" : "");
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)thread;
    start_detection(jvmti, jni);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti;
    (void)jni;
    if (!atomic_exchange(&live, 0))
        return;
    pins_stop();
    writer_stop(2000, 1);
}

/* Loaded again with "stop": no more events, outputs flushed and closed. */
static void stop_detection(void)
{
    if (!atomic_exchange(&live, 0)) {
        log_info("already stopped");
        return;
    }
    static const jvmtiEvent events[] = {JVMTI_EVENT_BREAKPOINT,
                                        JVMTI_EVENT_THREAD_START,
                                        JVMTI_EVENT_THREAD_END,
                                        JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
                                        JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
                                        JVMTI_EVENT_MONITOR_WAIT,
                                        JVMTI_EVENT_MONITOR_WAITED};
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
        (*A.jvmti)->SetEventNotificationMode(A.jvmti, JVMTI_DISABLE, events[i], NULL);
    pins_stop();
    writer_stop(2000, 0); /* a later attach may start it again */
    log_info("stopped: events off, outputs flushed");
}

/* A new attach after "stop": the new options, new outputs, the writer and
 * the events again. What is fixed at the first load (the JVMTI environment
 * and its capabilities, the carrier table) is kept and said. */
static jint rearm(JavaVM *vm, struct options *again, const char *option_text)
{
    char *paths[] = {again->record_file, again->trace_file, again->log_file};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        if (options_expand_pid(paths[i], OPTIONS_PATH_MAX, (long)getpid())) {
            log_error("path too long after %%p expansion: '%s'", paths[i]);
            return JNI_ERR;
        }
    }
    if (!A.jvmti || !A.queue) {
        log_error("vtpin was disabled at its first load (see above); it cannot start again in this JVM");
        return JNI_ERR;
    }
    if (writer_reset()) {
        log_error("vtpin cannot start again yet: the writer of the stopped session has not finished; retry");
        return JNI_ERR;
    }
    if (again->max_carriers != A.options.max_carriers || again->ring_entries != A.options.ring_entries ||
        (again->occupancy != A.options.occupancy &&
         (again->occupancy == OCCUPANCY_EXACT || A.options.occupancy == OCCUPANCY_EXACT))) {
        log_warn("carriers=, ring= and occupancy=exact are fixed at the first load: keeping carriers=%u, ring=%u, "
                 "occupancy %s",
                 A.options.max_carriers, A.options.ring_entries,
                 A.options.occupancy == OCCUPANCY_EXACT ? "exact" : "not exact");
        again->max_carriers = A.options.max_carriers;
        again->ring_entries = A.options.ring_entries;
        if (again->occupancy == OCCUPANCY_EXACT || A.options.occupancy == OCCUPANCY_EXACT)
            again->occupancy = A.options.occupancy;
    }
    log_close();
    if (log_open(again->log_file)) {
        log_error("cannot open log file '%s'", again->log_file);
        return JNI_ERR;
    }
    log_set_quiet(again->quiet);
    if (again->depth != A.options.depth || again->queue_slots != A.options.queue_slots) {
        /* The old queue is kept, not freed: a callback of the old session may still hold it. */
        struct queue *q = queue_new(again->queue_slots, pins_record_size(again->depth));
        if (!q) {
            log_error("out of memory for the event queue (queue=%u, depth=%u)", again->queue_slots, again->depth);
            return JNI_ERR;
        }
        A.queue = q;
    }
    char err[512];
    if (writer_open(again, err, sizeof(err))) {
        log_error("%s", err);
        return JNI_ERR;
    }
    A.options = *again;
    snprintf(A.option_text, sizeof(A.option_text), "%s", option_text ? option_text : "");
    JNIEnv *jni = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_8) != JNI_OK || !jni) {
        log_error("no JNI environment in Agent_OnAttach");
        return JNI_ERR;
    }
    A.attach_mode = 1;
    tell_missing_capabilities();
    start_detection(A.jvmti, jni);
    return JNI_OK;
}

static jint init_once(JavaVM *vm, char *option_text, int attach)
{
    if (atomic_exchange(&initialized, 1)) {
        /* jcmd JVMTI.agent_load twice: one agent per JVM; "stop" turns it off,
         * a load after "stop" starts it again with the new options. */
        struct options again;
        char err[512];
        options_defaults(&again);
        if (options_parse(&again, option_text, err, sizeof(err))) {
            log_error("%s", err);
            return JNI_ERR;
        }
        if (again.stop)
            stop_detection();
        else if (again.help)
            fputs(options_usage, stderr);
        else if (atomic_load(&live))
            log_info("already loaded; the second load changes nothing (load with 'stop' first to change options)");
        else
            return rearm(vm, &again, option_text);
        return JNI_OK;
    }
    A.attach_mode = attach;
    options_defaults(&A.options);
    char err[512];
    if (options_parse(&A.options, option_text, err, sizeof(err))) {
        log_error("%s", err);
        if (attach)
            log_error("vtpin not loaded; the JVM runs on without it ('help' lists the options)");
        else
            log_error("the JVM cannot start with a half-configured agent; 'help' lists the options");
        return JNI_ERR;
    }
    snprintf(A.option_text, sizeof(A.option_text), "%s", option_text ? option_text : "");
    if (A.options.stop) {
        log_info("not loaded yet: nothing to stop");
        atomic_store(&initialized, 0);
        return attach ? JNI_OK : JNI_ERR;
    }
    char *paths[] = {A.options.record_file, A.options.trace_file, A.options.log_file};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        if (options_expand_pid(paths[i], OPTIONS_PATH_MAX, (long)getpid())) {
            log_error("path too long after %%p expansion: '%s'", paths[i]);
            return JNI_ERR;
        }
    }
    if (A.options.help) {
        fputs(options_usage, stderr);
        atomic_store(&initialized, 0); /* help loads nothing: a later real load must work */
        return attach ? JNI_OK : JNI_ERR;
    }
    if (log_open(A.options.log_file)) {
        log_error("cannot open log file '%s'", A.options.log_file);
        return JNI_ERR;
    }
    log_set_quiet(A.options.quiet);

    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_21) != JNI_OK || !jvmti) {
        log_warn("this JVM has no virtual threads (JVMTI 21 not available); vtpin is disabled and the JVM runs on");
        return JNI_OK;
    }
    A.jvmti = jvmti;

    if (request_capabilities(jvmti)) {
        log_warn("this JVM does not support virtual threads in JVMTI (java.version %s); vtpin is disabled and the "
                 "JVM runs on",
                 A.java_version ? A.java_version : "unknown");
        return JNI_OK;
    }
    tell_missing_capabilities();
    A.queue = queue_new(A.options.queue_slots, pins_record_size(A.options.depth));
    if (!A.queue || natives_init(16384) ||
        carriers_init(A.options.max_carriers, A.options.ring_entries, A.options.occupancy == OCCUPANCY_EXACT)) {
        log_error("out of memory for the event queue (queue=%u, depth=%u)", A.options.queue_slots, A.options.depth);
        return JNI_ERR;
    }
    if (writer_open(&A.options, err, sizeof(err))) {
        log_error("%s", err);
        return JNI_ERR;
    }

    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof(cb));
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.Breakpoint = pins_on_breakpoint;
    cb.ThreadStart = pins_on_thread_start;
    cb.ThreadEnd = pins_on_thread_end;
    cb.NativeMethodBind = on_native_bind;
    cb.MonitorContendedEnter = pins_on_contended_enter;
    cb.MonitorContendedEntered = pins_on_contended_entered;
    cb.MonitorWait = pins_on_wait;
    cb.MonitorWaited = pins_on_waited;
    if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE) {
        log_error("SetEventCallbacks failed");
        return JNI_ERR;
    }
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_NATIVE_METHOD_BIND, NULL);
    if (!attach) {
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
        return JNI_OK;
    }
    JNIEnv *jni = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_8) != JNI_OK || !jni) {
        log_error("no JNI environment in Agent_OnAttach");
        return JNI_ERR;
    }
    start_detection(jvmti, jni);
    return JNI_OK;
}

static jint init(JavaVM *vm, char *option_text, int attach)
{
    int loaded_before = atomic_load(&initialized);
    jint rc = init_once(vm, option_text, attach);
    if (rc != JNI_OK && !loaded_before && !atomic_load(&live))
        atomic_store(&initialized, 0); /* a failed attach can be retried with better options */
    return rc;
}

EXPORT JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    return init(vm, options, 0);
}

EXPORT JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    return init(vm, options, 1);
}

EXPORT JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    (void)vm;
    if (atomic_exchange(&live, 0)) {
        pins_stop();
        writer_stop(1000, 1);
    }
    log_close();
}
