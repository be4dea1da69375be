/* JVMTI wiring: the three exported entry points, capabilities and callbacks.
 * Agent_OnLoad and Agent_OnAttach share one init path; each callback belongs
 * to the module that needs it (pins.c, carriers.c, natives.c, writer.c). */
#include <errno.h>
#include <jvmti.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "carriers.h"
#include "common/agent_codes.h"
#include "downcall.h"
#include "jthread.h"
#include "log.h"
#include "mount_events.h"
#include "natives.h"
#include "options.h"
#include "outputs.h"
#include "pins.h"
#include "queue.h"
#include "wire.h"
#include "writer.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_MISSING 16
#define VTPIN_SECOND_LOAD "loaded a second time in this JVM"

static struct {
    jvmtiEnv *jvmti;
    struct options options;
    char option_text[1024];
    struct queue *queue;
    int attach_mode;
    int caps_live;     /* the first load was an attach: every capability came in the live phase, which gives it again */
    int caps_given_up; /* stop gave them back: the next attach asks again */
    int breakpoints, monitor_events, monitor_depths, native_binds, downcall_names, constant_pool, blockers;
    int mounts_on_demand; /* hogs may count mounts (mount_events.h) */
    unsigned jdk_feature;
    unsigned parallelism;
    char *java_version, *vm_name, *vm_version, *vm_vendor;
    char *app; /* main class or jar: the first word of sun.java.command */
    const char *missing[MAX_MISSING];
    unsigned missing_count;
} agent;

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
    if (agent.missing_count < MAX_MISSING)
        agent.missing[agent.missing_count++] = what;
    char text[320];
    snprintf(text, sizeof(text), "%s not available%s: %s", what, agent.attach_mode ? " after attach" : "", cost);
    log_warn("%s", text);
    char code[96];
    snprintf(code, sizeof(code), "capability.%s", what);
    writer_notice(VTPIN__V1__SEVERITY__WARNING, code, text);
}

/* The newest JDK the tests run on (tests/CMakeLists.txt): a newer one runs with the same checks. */
#define NEWEST_TESTED_JDK 27

static void internal_missing(const char *code, const char *what, const char *instead)
{
    char text[400];
    snprintf(text, sizeof(text), "JDK %u: %s not found: %s", agent.jdk_feature, what, instead);
    log_warn("%s", text);
    writer_notice(VTPIN__V1__SEVERITY__WARNING, code, text);
}

/* The JDK internals detection reads, checked once at start (pins_init looked them up; the thread
 * layout and Thread's continuation fields are checked by the writer): say which are missing,
 * what vtpin does instead and what that costs, and run on. */
static void check_internals(void)
{
    struct pins_found f;
    pins_found(&f);
    if (!f.park_method)
        internal_missing("internals.park_method", "java.lang.VirtualThread.parkOnCarrierThread(ZJ)V",
                         "parks that pin are found by sampling carriers instead, one sample period late, "
                         "their reason inferred from the stack");
    else if (f.park_breakpoints < 0)
        internal_missing("internals.park_bytecode",
                         "the bytecode parkOnCarrierThread's breakpoints need (an entry, "
                         "exits a length walk finds)",
                         "parks that pin are found by sampling carriers instead, one sample period late, "
                         "their reason inferred from the stack");
    if (!f.is_pinned0)
        internal_missing("internals.is_pinned0",
                         "jdk.internal.vm.Continuation.isPinned0 or VirtualThread.VTHREAD_SCOPE",
                         "pin reasons are inferred from the stack; on 24+ a contended entry or Object.wait "
                         "under a critical section is not seen");
    else if (!f.pinned_reason)
        internal_missing("internals.pinned_reason", "jdk.internal.vm.Continuation.pinnedReason(int)",
                         "JDK 21-25's freeze results are assumed (2 critical section, 3 native, 4 monitor): "
                         "a reason or the JDK's words may be wrong");
    /* VTPIN_NEWEST_TESTED_JDK lowers the bound, for the test of this notice (tests/jvm/test_jdks.py) */
    const char *bound = getenv("VTPIN_NEWEST_TESTED_JDK");
    unsigned newest = bound && atoi(bound) > 0 ? (unsigned)atoi(bound) : NEWEST_TESTED_JDK;
    if (agent.jdk_feature > newest) {
        char text[300];
        snprintf(text, sizeof(text),
                 "JDK %u is newer than any vtpin was tested on (21-%u): it runs with the same checks of the JDK "
                 "internals it reads%s",
                 agent.jdk_feature, newest,
                 f.park_method && f.park_breakpoints >= 0 && f.is_pinned0 && f.pinned_reason
                     ? ", all present"
                     : " (missing ones said above)");
        log_warn("%s", text);
        writer_notice(VTPIN__V1__SEVERITY__WARNING, "jdk.untested", text);
    }
}

/* Returns 0 or -errno (-ENOTSUP: no virtual threads in JVMTI). */
static int request_capabilities(jvmtiEnv *jvmti)
{
    jvmtiCapabilities potential, want;
    memset(&potential, 0, sizeof(potential));
    if ((*jvmti)->GetPotentialCapabilities(jvmti, &potential) != JVMTI_ERROR_NONE)
        return -EINVAL;
    if (!potential.can_support_virtual_threads)
        return -ENOTSUP;
    memset(&want, 0, sizeof(want));
    want.can_support_virtual_threads = 1;
    want.can_generate_breakpoint_events = potential.can_generate_breakpoint_events;
    want.can_get_bytecodes = potential.can_get_bytecodes;
    want.can_get_constant_pool = potential.can_get_constant_pool; /* VM_BLOCK: name the class */
    want.can_generate_monitor_events = potential.can_generate_monitor_events;
    want.can_get_owned_monitor_stack_depth_info = potential.can_get_owned_monitor_stack_depth_info;
    want.can_get_owned_monitor_info = potential.can_get_owned_monitor_info;
    /* a contended entry's blocker: the monitor (GetCurrentContendedMonitor) and its owner (GetObjectMonitorUsage) */
    want.can_get_current_contended_monitor = potential.can_get_current_contended_monitor;
    want.can_get_monitor_info = potential.can_get_monitor_info;
    want.can_generate_native_method_bind_events = potential.can_generate_native_method_bind_events;
    want.can_get_line_numbers = potential.can_get_line_numbers;
    want.can_get_source_file_name = potential.can_get_source_file_name;
    /* FFM downcall targets: a virtual thread's locals are read while it is suspended */
    want.can_access_local_variables =
        !agent.options.downcalls_marked && potential.can_access_local_variables && potential.can_suspend;
    want.can_suspend = want.can_access_local_variables;
    if ((*jvmti)->AddCapabilities(jvmti, &want) != JVMTI_ERROR_NONE)
        return -EINVAL;
    agent.breakpoints = want.can_generate_breakpoint_events && want.can_get_bytecodes;
    agent.monitor_events = want.can_generate_monitor_events;
    agent.monitor_depths = want.can_get_owned_monitor_stack_depth_info;
    agent.native_binds = want.can_generate_native_method_bind_events;
    agent.downcall_names = want.can_access_local_variables;
    agent.constant_pool = want.can_get_constant_pool;
    agent.blockers = want.can_get_current_contended_monitor && want.can_get_monitor_info;
    downcall_configure(agent.downcall_names);
    return 0;
}

/* Said at every (re)start: the Hello and the notices list them. */
static void tell_missing_capabilities(void)
{
    agent.missing_count = 0;
    if (!agent.breakpoints)
        missing("breakpoints", "park-based pins are found by sampling carriers instead: seen one sample period "
                               "late, reason inferred from the stack");
    if (!agent.monitor_depths)
        missing("owned_monitor_stack_depth_info", "the monitors each frame holds are inferred from its bytecode");
    if (!agent.downcall_names && !agent.options.downcalls_marked)
        missing("access_local_variables", "FFM downcalls are found, but the C function they call is not named");
    if (!agent.constant_pool)
        missing("constant_pool", "VM_BLOCK pins do not name the class the JVM waits to initialize");
    if (!agent.blockers)
        missing("monitor_info", "a contended entry's pin does not name the monitor's owner");
    if (!agent.native_binds)
        missing("native_method_bind_events", "native frames are not named with their library");
}

/* ThreadStart runs on the new thread itself: a carrier is registered for the
 * writer's sampling (carriers.c), then its start is queued (pins.c). */
static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    if (!pins_running() || !jthread_is_carrier(jni, thread))
        return;
    const char *name = jthread_self_name_set(jni, thread);
    carriers_register(jni, thread, jthread_self_tid(), name);
    pins_carrier_started(name);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    (void)jni;
    (void)thread;
    carriers_unregister();
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

/* JVMTI exposes only the VM's own properties: java.version is the
 * VM version without its build suffix ("21.0.13+9-..." -> "21.0.13"). */
static char *java_version_of(const char *vm_version)
{
    char *v = vm_version ? strdup(vm_version) : NULL;
    if (v)
        v[strcspn(v, "+-")] = '\0';
    return v;
}

/* System properties are complete only from VMInit on (OnLoad sees a partial list). */
static void read_jvm_identity(jvmtiEnv *jvmti)
{
    free(agent.vm_name); /* read again on a new attach after stop */
    free(agent.vm_version);
    free(agent.vm_vendor);
    free(agent.java_version);
    agent.vm_name = system_property(jvmti, "java.vm.name");
    agent.vm_version = system_property(jvmti, "java.vm.version");
    agent.vm_vendor = system_property(jvmti, "java.vm.vendor");
    /* the launcher passes the command as a VM property: "Main args..." or "app.jar args..." */
    agent.app = system_property(jvmti, "sun.java.command");
    if (agent.app)
        agent.app[strcspn(agent.app, " ")] = '\0';
    agent.java_version = java_version_of(agent.vm_version);
    char *spec = system_property(jvmti, "java.vm.specification.version");
    agent.jdk_feature = spec ? (unsigned)strtoul(spec, NULL, 10) : 0;
    free(spec);
    agent.parallelism = scheduler_parallelism(jvmti);
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
    int monitor_pins = agent.monitor_events && agent.jdk_feature < 24;
    if (!agent.monitor_events)
        missing("monitor_events", agent.jdk_feature < 24
                                      ? "contended monitor entry and Object.wait pins are not seen"
                                      : "contended monitor entry and Object.wait under a native frame are not seen");
    /* exact occupancy counts every mount; otherwise hogs count them on demand (mount_events.h) */
    if (agent.options.occupancy == OCCUPANCY_EXACT && mount_events_exact(jvmti))
        missing("virtual_thread_mount_events", "exact occupancy is not available; use occupancy=sampled");
    agent.mounts_on_demand = 0;
    if (agent.options.occupancy != OCCUPANCY_EXACT && options_hog_ns(&agent.options) > 0) {
        agent.mounts_on_demand = mount_events_count_ready(jvmti) == 0;
        if (!agent.mounts_on_demand)
            missing("virtual_thread_mount_events",
                    "a virtual thread that yields and is handed its carrier straight back may be taken for a hog");
    }
    struct pins_setup setup = {
        .queue = agent.queue,
        .depth = agent.options.depth,
        .monitor_pins = monitor_pins,
        .monitor_events = agent.monitor_events,
        .have_monitor_depths = agent.monitor_depths,
        .defer_stacks = agent.options.threshold_ns > 0,
        .threshold_ns = agent.options.threshold_ns,
        .wake_writer = writer_wake,
    };
    if (jthread_init(jvmti, jni) == 0) {
        pins_init(jvmti, jni, &setup, agent.breakpoints); /* failures logged; detection runs on with what it has */
        check_internals();
    }
    if (agent.attach_mode) /* carriers started before us fire no ThreadStart */
        carriers_register_existing(jvmti, jni, jthread_carrier_class());
    struct writer_config wc = {
        .options = &agent.options,
        .option_text = agent.option_text,
        .queue = agent.queue,
        .attach_mode = agent.attach_mode,
        .jdk_feature = agent.jdk_feature,
        .monitor_depths = agent.monitor_depths,
        .blockers = agent.blockers,
        .park_breakpoints = agent.breakpoints,
        .monitor_events = agent.monitor_events,
        .parallelism = agent.parallelism,
        .pid = getpid(),
        .java_version = agent.java_version,
        .vm_name = agent.vm_name,
        .vm_version = agent.vm_version,
        .vm_vendor = agent.vm_vendor,
        .app = agent.app,
        .capabilities_missing = agent.missing,
        .capabilities_missing_count = agent.missing_count,
        .mounts_on_demand = agent.mounts_on_demand,
    };
    writer_configure(&wc); /* after every missing() above: the Hello lists them */
    static const jvmtiEvent always[] = {JVMTI_EVENT_BREAKPOINT, JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END};
    static const jvmtiEvent monitors[] = {JVMTI_EVENT_MONITOR_CONTENDED_ENTER, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
                                          JVMTI_EVENT_MONITOR_WAIT, JVMTI_EVENT_MONITOR_WAITED};
    /* the events before the writer, whose Hello says pins are seen from now on: a collector that
     * watched this JVM from the kernel hands it over at that Hello, and a park that began between the
     * two was seen by neither (attach on pin, under load: a sleep with no pin) */
    enable_events(jvmti, always, sizeof(always) / sizeof(always[0]));
    if (agent.monitor_events)
        enable_events(jvmti, monitors, sizeof(monitors) / sizeof(monitors[0]));
    int rc = writer_start(jvmti, jni);
    if (rc)
        log_error("cannot start the writer thread (%d): nothing will be reported", rc);
    atomic_store(&live, 1);
    log_info("detecting pins on JDK %u (%s, %s mode, threshold %.3f ms%s%s%s%s)", agent.jdk_feature,
             agent.java_version ? agent.java_version : "?", agent.attach_mode ? "attach" : "startup",
             (double)agent.options.threshold_ns / 1e6, writer_recording() ? ", record " : "",
             writer_recording() ? agent.options.record_file : "", agent.options.collector ? ", collector " : "",
             agent.options.collector ? "on" : "");
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

/* log=: a bad path stops the load like a bad option; no room on its disk
 * (ENOSPC, EDQUOT) only sends the messages to stderr: the JVM runs on. */
static int open_log(const char *path)
{
    int rc = log_open(path);
    if (rc == -ENOSPC || rc == -EDQUOT) {
        log_alert("cannot write the log %s: %s (the disk is full): vtpin's messages go to stderr", path, strerror(-rc));
        return 0;
    }
    if (rc)
        log_error("cannot open log file '%s': %s", path, outputs_file_refused(rc));
    return rc;
}

/* The number of capabilities set in c. */
static unsigned count_capabilities(const jvmtiCapabilities *c)
{
    const unsigned char *b = (const unsigned char *)c;
    unsigned n = 0;
    for (size_t i = 0; i < sizeof(*c); i++)
        n += (unsigned)__builtin_popcount(b[i]);
    return n;
}

/* At stop, the capabilities go back with the events: one held costs the JVM even with its events off
 * (can_access_local_variables keeps C2 from eliminating allocations and locks; breakpoints and monitor
 * events keep their slower paths armed), all but NativeMethodBind's. Only an attached agent gives them back: it got
 * each in the live phase, which gives it again at the next attach (rearm); a startup agent's were the OnLoad phase's
 * and could not be taken again. What HotSpot keeps regardless is in docs/attach.md. */
static void give_back_capabilities(void)
{
    jvmtiCapabilities held;
    memset(&held, 0, sizeof(held));
    if (!agent.caps_live || (*agent.jvmti)->GetCapabilities(agent.jvmti, &held) != JVMTI_ERROR_NONE)
        return;
    unsigned had = count_capabilities(&held);
    /* NativeMethodBind stays on while stopped (a bind is rare and cheap): the next session names the
     * libraries of the methods bound meanwhile */
    held.can_generate_native_method_bind_events = 0;
    if ((*agent.jvmti)->RelinquishCapabilities(agent.jvmti, &held) != JVMTI_ERROR_NONE) {
        log_warn("could not give back its %u JVMTI capabilities at stop; the JVM keeps them", had);
        return;
    }
    agent.caps_given_up = 1;
    memset(&held, 0, sizeof(held));
    (*agent.jvmti)->GetCapabilities(agent.jvmti, &held);
    log_info("gave back %u of its %u JVMTI capabilities", had - count_capabilities(&held), had);
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
        (*agent.jvmti)->SetEventNotificationMode(agent.jvmti, JVMTI_DISABLE, events[i], NULL);
    mount_events_exact_off(agent.jvmti);
    pins_stop();
    pins_release(agent.jvmti);
    writer_stop(2000, 0); /* a later attach may start it again */
    mount_events_count_off(agent.jvmti);
    give_back_capabilities();
    log_info("stopped: events off (mount events and breakpoints too), outputs flushed");
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
    if (!agent.jvmti || !agent.queue) {
        log_error("vtpin was disabled at its first load (see above); it cannot start again in this JVM");
        return JNI_ERR;
    }
    unsigned fixed = options_fixed_conflicts(&agent.options, again, option_text);
    if (fixed) {
        /* nothing started: `vtpin attach` exits non-zero and names them from the return code */
        log_error("%s%s%s%s%s cannot change after the first load in this JVM (it set up carriers=%u, ring=%u, "
                  "occupancy %s): load again without %s or with these values; vtpin stays stopped",
                  fixed & VTPIN_FIXED_CARRIERS ? "carriers=" : "",
                  (fixed & VTPIN_FIXED_CARRIERS) && (fixed & ~VTPIN_FIXED_CARRIERS) ? ", " : "",
                  fixed & VTPIN_FIXED_RING ? "ring=" : "",
                  (fixed & VTPIN_FIXED_RING) && (fixed & VTPIN_FIXED_OCCUPANCY) ? ", " : "",
                  fixed & VTPIN_FIXED_OCCUPANCY ? "occupancy=" : "", agent.options.max_carriers,
                  agent.options.ring_entries, agent.options.occupancy == OCCUPANCY_EXACT ? "exact" : "not exact",
                  fixed & (fixed - 1) ? "them" : "it");
        return (jint)(VTPIN_LOAD_FIXED + fixed);
    }
    if (writer_reset()) {
        log_error("vtpin cannot start again yet: the writer of the stopped session has not finished; retry");
        return JNI_ERR;
    }
    log_close();
    if (open_log(again->log_file))
        return JNI_ERR;
    log_set_quiet(again->quiet);
    if (again->depth != agent.options.depth || again->queue_slots != agent.options.queue_slots) {
        /* The old queue is kept, not freed: a callback of the old session may still hold it. */
        struct queue *q = queue_new(again->queue_slots, pins_record_size(again->depth));
        if (!q) {
            log_error("out of memory for the event queue (queue=%u, depth=%u)", again->queue_slots, again->depth);
            return JNI_ERR;
        }
        agent.queue = q;
    }
    char err[512];
    if (writer_open(again, err, sizeof(err))) {
        log_error("%s", err);
        return JNI_ERR;
    }
    agent.options = *again;
    snprintf(agent.option_text, sizeof(agent.option_text), "%s", option_text ? option_text : "");
    if (agent.caps_given_up) { /* stop gave them back: the live phase gives them again */
        if (request_capabilities(agent.jvmti)) {
            log_error("the JVM did not give back the JVMTI capabilities vtpin needs (virtual threads); vtpin stays "
                      "stopped");
            return JNI_ERR;
        }
        agent.caps_given_up = 0;
    }
    JNIEnv *jni = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_8) != JNI_OK || !jni) {
        log_error("no JNI environment in Agent_OnAttach");
        return JNI_ERR;
    }
    agent.attach_mode = 1;
    tell_missing_capabilities();
    start_detection(agent.jvmti, jni);
    return JNI_OK;
}

/* A second -agentpath of this library (twice on the command line, or in
 * JAVA_TOOL_OPTIONS and on the command line): HotSpot loads the .so once and
 * calls Agent_OnLoad on it again, before VMInit. It stands down: one line on
 * stderr and in the first load's log, nothing opened, JNI_OK so the JVM
 * starts, and the first load runs on alone. */
static jint stand_down(const char *option_text)
{
    log_tell("%s (options '%s'): this load stands down and the JVM starts with the first one alone (options "
             "'%s'%s)",
             VTPIN_SECOND_LOAD, option_text ? option_text : "", agent.option_text,
             agent.jvmti ? "" : ", which left vtpin disabled: see above");
    return JNI_OK;
}

/* A load after the first (jcmd JVMTI.agent_load twice: one agent per JVM): "stop" turns it off,
 * a load after "stop" starts it again with the new options. */
static jint load_again(JavaVM *vm, char *option_text)
{
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
    else if (atomic_load(&live)) {
        log_tell("%s (options '%s'): it stands down, vtpin is already running (options '%s'); this load "
                 "changed nothing (load with 'stop' first to change options)",
                 VTPIN_SECOND_LOAD, option_text ? option_text : "", agent.option_text);
        return VTPIN_LOAD_ALREADY_RUNNING; /* `vtpin attach` says so and exits non-zero */
    } else
        return rearm(vm, &again, option_text);
    return JNI_OK;
}

/* The first load's options into agent.options. 0 to go on; 1 when the load ends here with *rc
 * (a bad option; "stop" or "help", which load nothing). */
static int first_options(char *option_text, int attach, jint *rc)
{
    agent.attach_mode = attach;
    agent.caps_live = attach;
    options_defaults(&agent.options);
    char err[512];
    if (options_parse(&agent.options, option_text, err, sizeof(err))) {
        log_error("%s", err);
        if (attach)
            log_error("vtpin not loaded; the JVM runs on without it ('help' lists the options)");
        else
            log_error("the JVM cannot start with a half-configured agent; 'help' lists the options");
        *rc = JNI_ERR;
        return 1;
    }
    snprintf(agent.option_text, sizeof(agent.option_text), "%s", option_text ? option_text : "");
    if (agent.options.stop) {
        log_info("not loaded yet: nothing to stop");
        atomic_store(&initialized, 0);
        *rc = attach ? JNI_OK : JNI_ERR;
        return 1;
    }
    char *paths[] = {agent.options.record_file, agent.options.trace_file, agent.options.log_file};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        if (options_expand_pid(paths[i], OPTIONS_PATH_MAX, (long)getpid())) {
            log_error("path too long after %%p expansion: '%s'", paths[i]);
            *rc = JNI_ERR;
            return 1;
        }
    }
    if (agent.options.help) {
        fputs(options_usage, stderr);
        atomic_store(&initialized, 0); /* help loads nothing: a later real load must work */
        *rc = attach ? JNI_OK : JNI_ERR;
        return 1;
    }
    return 0;
}

/* The agent's callbacks, and the events it needs from the start. 0 or -1. */
static int set_callbacks(jvmtiEnv *jvmti)
{
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof(cb));
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.Breakpoint = pins_on_breakpoint;
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.NativeMethodBind = on_native_bind;
    cb.MonitorContendedEnter = pins_on_contended_enter;
    cb.MonitorContendedEntered = pins_on_contended_entered;
    cb.MonitorWait = pins_on_wait;
    cb.MonitorWaited = pins_on_waited;
    if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE) {
        log_error("SetEventCallbacks failed");
        return -1;
    }
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_NATIVE_METHOD_BIND, NULL);
    return 0;
}

static jint init_once(JavaVM *vm, char *option_text, int attach)
{
    if (atomic_exchange(&initialized, 1))
        return attach ? load_again(vm, option_text) : stand_down(option_text);
    jint rc;
    if (first_options(option_text, attach, &rc))
        return rc;
    char err[512];
    if (open_log(agent.options.log_file))
        return JNI_ERR;
    log_set_quiet(agent.options.quiet);

    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_21) != JNI_OK || !jvmti) {
        log_warn("this JVM has no virtual threads (JVMTI 21 not available); vtpin is disabled and the JVM runs on");
        return JNI_OK;
    }
    agent.jvmti = jvmti;

    if (request_capabilities(jvmti)) {
        /* before VMInit: the VM's own java.vm.version is already set, the rest of the identity is not */
        char *vm_version = system_property(jvmti, "java.vm.version");
        char *java_version = java_version_of(vm_version);
        log_warn("this JVM does not support virtual threads in JVMTI (java.version %s); vtpin is disabled and the "
                 "JVM runs on",
                 java_version ? java_version : "unknown");
        free(java_version);
        free(vm_version);
        return JNI_OK;
    }
    tell_missing_capabilities();
    agent.queue = queue_new(agent.options.queue_slots, pins_record_size(agent.options.depth));
    if (!agent.queue || natives_init(16384) ||
        carriers_init(agent.options.max_carriers, agent.options.ring_entries,
                      agent.options.occupancy == OCCUPANCY_EXACT, pins_record_size(agent.options.depth))) {
        log_error("out of memory for the event queue (queue=%u, depth=%u)", agent.options.queue_slots,
                  agent.options.depth);
        return JNI_ERR;
    }
    if (writer_open(&agent.options, err, sizeof(err))) {
        log_error("%s", err);
        return JNI_ERR;
    }
    if (set_callbacks(jvmti))
        return JNI_ERR;
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
