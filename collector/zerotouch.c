#include "zerotouch.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clog.h"
#include "common/idmap.h"
#include "hotspot.h"
#include "kglue.h"
#include "kpin.h"
#include "kstate.h"
#include "loop.h"
#include "nspid.h"
#include "syscalls.h"
#include "ustack.h"
#include "wire.h"

#define NS_PER_SEC 1000000000LL
/* A process this young may still be loading its libjvm.so: looked at again. */
#define YOUNG_NS (5 * NS_PER_SEC)
/* A process that maps libjvm.so but has not filled in its tables by this age never will (one that
 * loaded the library without starting a VM): it is given up on, not parsed again every second. */
#define STARTING_MAX_NS (60 * NS_PER_SEC)
#define THREADS_MAX 4096
/* /proc is listed, and every JVM's thread list looked at, every ZT_SCAN_NS. A JVM whose process
 * made a thread (the kernel view says so as it happens) has its list looked at every ZT_FAST_NS
 * for ZT_BIRTH_NS: its JavaThread joins the list a moment after the thread is made, and a new
 * carrier's first pin is seen whole. An idle host costs one wakeup a second. */
#define ZT_SCAN_NS NS_PER_SEC
#define ZT_FAST_NS (10 * 1000000LL)
/* A process the kernel view saw begin to run java is looked at every ZT_FAST_NS until it is watched,
 * or for this long (its launcher maps libjvm.so, and the VM fills in the tables hotspot.c reads, within
 * tens of milliseconds). */
#define ZT_STARTING_NS (2 * NS_PER_SEC)
#define ZT_STARTING_MAX 64
#define ZT_BIRTH_NS NS_PER_SEC
#define ZT_BORN_PENDING 16    /* threads made and not yet found in the list, per JVM */
#define ZT_NATIVE_METHODS 256 /* native frames defined per JVM (then its pins go without) */
#define ZT_NATIVE_STACKS 64   /* distinct native stacks defined per JVM (then its new ones go without) */
#define ZT_UNWINDS_PER_SEC 10 /* native stacks read per JVM and second */

enum zt_state {
    ZT_WATCHING = 0, /* its threads tracked; no pin yet */
    ZT_SESSION,      /* it pinned: its session is open */
    ZT_GAVE_UP,      /* why says why */
    ZT_AGENT,        /* the vtpin agent is in it */
};

static const char *const state_names[] = {"watching", "session", "gave_up", "agent"};

/* Attach on pin (ztattach.h), per JVM. */
enum zt_attach {
    AT_NONE = 0, /* not tried */
    AT_RUNNING,  /* `vtpin attach` runs */
    AT_DONE,     /* it succeeded: the agent's Hello ends the watch */
    AT_FAILED,   /* it failed: not tried again */
    AT_REFUSED,  /* the JVM or the operator's patterns refuse it */
};
static const char *const attach_names[] = {"none", "running", "done", "failed", "refused"};

struct zt_thread {
    int32_t ns_tid, host_tid;
    uint64_t java_thread;
    int seen;              /* in the latest walk */
    int carrier;           /* seen with a virtual thread mounted */
    int carrier_told;      /* its Carrier frame sent */
    struct kpin_thread kp; /* its pin in progress (kpin.h) */
    uint64_t pin_id;       /* that pin's id */
};

struct zt_jvm {
    struct zt_jvm *next;
    struct zerotouch *z;
    int32_t pid;
    uint64_t start_ticks;
    uid_t uid;
    enum zt_state state;
    char why[256];
    struct hotspot *hs;
    void *owner; /* the host's peer, NULL once closed */
    int64_t start_unix_ns, start_mono_ns;
    char app[160];
    uint64_t thread_list;
    struct zt_thread *threads;
    size_t n_threads, cap_threads;
    uint64_t next_pin, pins;
    uint32_t next_string;
    uint32_t park_reason; /* string id of the text for a park whose reason is unknown */
    /* NATIVE_BLOCK pins' native frames (ustack.h): the methods defined for them, the stacks sent */
    struct zt_native_method {
        char key[400]; /* module '\n' symbol */
        uint32_t id;
    } * native_methods;
    unsigned n_native_methods;
    struct zt_native_stack {
        uint32_t id, n;
        uint32_t methods[USTACK_MAX_FRAMES];
    } * native_stacks; /* each sent once: a block that recurs reuses its stack */
    unsigned n_native_stacks;
    uint32_t next_method, next_stack;
    int64_t unwinds_since; /* the second unwinds counts in */
    unsigned unwinds;
    char cmdline[1024]; /* its arguments joined by spaces, for --attach-only/--attach-deny */
    enum zt_attach attach;
    char attach_why[200];
    pid_t attach_child;
    uint64_t handed_over; /* pins in progress while an agent was loaded (attach to Hello): it may report them again */
    int64_t births_until; /* its list is looked at every ZT_FAST_NS until then */
    /* threads made (host tids, and when) not yet tracked, for ZT_BIRTH_NS each: its list is read
     * again even at the address of the last one read; born_lost: more than these, until births_until */
    int32_t born[ZT_BORN_PENDING];
    int64_t born_at[ZT_BORN_PENDING];
    unsigned n_born;
    int born_lost;
    char agent_layout[200]; /* its agent's Hello layout against the one read from outside: "agrees", "differs: ..." */
};

struct zerotouch {
    struct zt_config cfg;
    struct kglue *k;
    struct zt_host host;
    struct zt_jvm *jvms;
    unsigned n_jvms;
    struct idmap *not_jvm; /* pid -> start ticks + 1 of a process that is not a JVM */
    long hz;
    uint64_t scans;
    int64_t next_scan; /* the next listing of /proc */
    int fast;          /* the timer ticks every ZT_FAST_NS (else every ZT_SCAN_NS) */
    int timer_fd;
    struct loop_watch watch;
    struct hotspot_thread *rows; /* a walk's, THREADS_MAX of them */
    struct ztattach_limiter limiter;
    pid_t orphans[ZTATTACH_PER_MINUTE_MAX]; /* `vtpin attach` children of JVMs that ended: reaped at ticks */
    unsigned n_orphans;
    struct {
        int32_t pid;
        int64_t until;
    } starting[ZT_STARTING_MAX]; /* processes that just began to run java (kglue_find_jvms) */
    unsigned n_starting;
    int finds_starting; /* the kernel view tells of them: else only the look at /proc every ZT_SCAN_NS */
};

/* ---- /proc ---- */

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/* The timer's period: ZT_FAST_NS while a JVM has new threads to find or an attach runs. */
static void set_pace(struct zerotouch *z, int fast)
{
    if (fast == z->fast)
        return;
    int64_t ns = fast ? ZT_FAST_NS : ZT_SCAN_NS;
    struct timespec ts = {.tv_sec = ns / NS_PER_SEC, .tv_nsec = ns % NS_PER_SEC};
    struct itimerspec its = {.it_interval = ts, .it_value = ts};
    if (timerfd_settime(z->timer_fd, 0, &its, NULL) == 0)
        z->fast = fast;
}

/* Up to cap-1 bytes of a small /proc file, NUL-terminated: its length, or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, cap - 1);
    int err = errno;
    close(fd);
    if (n < 0)
        return -err;
    buf[n] = '\0';
    return n;
}

/* Field 22 of /proc/PID/stat (its start, in clock ticks since boot): 0, or -errno. */
static int start_ticks(const struct zerotouch *z, int32_t pid, uint64_t *out)
{
    char path[96], buf[1024];
    snprintf(path, sizeof(path), "%s/%d/stat", z->cfg.proc_root, pid);
    if (read_small(path, buf, sizeof(buf)) < 0)
        return -ESRCH;
    const char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    if (!p)
        return -EINVAL;
    for (int field = 2; field < 22 && *p; p++)
        if (*p == ' ')
            field++;
    char *end;
    *out = strtoull(p, &end, 10);
    return end == p ? -EINVAL : 0;
}

/* Whether pid descends from root (--jvms=under:PID), following parents in /proc/PID/stat. vtpin run
 * is its command's child subreaper, so whatever the command starts stays below it. */
static int descends_from(const struct zerotouch *z, int32_t pid, int32_t root)
{
    for (int depth = 0; depth < 256 && pid > 1; depth++) {
        char path[96], buf[1024];
        snprintf(path, sizeof(path), "%s/%d/stat", z->cfg.proc_root, pid);
        if (read_small(path, buf, sizeof(buf)) < 0)
            return 0;
        const char *p = strrchr(buf, ')'); /* "pid (name) state ppid ..." */
        int ppid;
        char state;
        if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2)
            return 0;
        if (ppid == root)
            return 1;
        pid = ppid;
    }
    return 0;
}

static uid_t proc_uid(const struct zerotouch *z, int32_t pid)
{
    char path[96], buf[2048];
    snprintf(path, sizeof(path), "%s/%d/status", z->cfg.proc_root, pid);
    if (read_small(path, buf, sizeof(buf)) < 0)
        return (uid_t)-1;
    const char *u = strstr(buf, "\nUid:");
    return u ? (uid_t)strtoul(u + 5, NULL, 10) : (uid_t)-1;
}

enum maps_kind { MAPS_OTHER = 0, MAPS_JVM = 1, MAPS_JVM_AGENT = 2 };

/* Whether pid maps a libjvm.so, and the vtpin agent too. -errno when maps cannot be read. */
static int maps_kind(const struct zerotouch *z, int32_t pid)
{
    char path[96], line[4096];
    snprintf(path, sizeof(path), "%s/%d/maps", z->cfg.proc_root, pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    int jvm = 0, agent = 0;
    while (fgets(line, sizeof(line), f)) {
        size_t len = strcspn(line, "\n");
        line[len] = '\0';
        if (len >= 10 && strcmp(line + len - 10, "/libjvm.so") == 0)
            jvm = 1;
        else if (len >= 12 && strcmp(line + len - 12, "/libvtpin.so") == 0)
            agent = 1;
    }
    fclose(f);
    return !jvm ? MAPS_OTHER : agent ? MAPS_JVM_AGENT : MAPS_JVM;
}

/* The command line, its arguments joined by spaces, into out[cap]. */
static void read_cmdline(const struct zerotouch *z, int32_t pid, char *out, size_t cap)
{
    char path[96];
    snprintf(path, sizeof(path), "%s/%d/cmdline", z->cfg.proc_root, pid);
    ssize_t n = read_small(path, out, cap);
    if (n <= 0) {
        out[0] = '\0';
        return;
    }
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == '\0')
            out[i] = ' ';
    while (n > 0 && out[n - 1] == ' ')
        out[--n] = '\0';
}

/* The main class or jar from the command line: the first word after the launcher's options. */
static void read_app(const struct zerotouch *z, int32_t pid, char *out, size_t cap)
{
    static const char *const with_value[] = {"-cp",
                                             "-classpath",
                                             "--class-path",
                                             "-p",
                                             "--module-path",
                                             "--add-modules",
                                             "--add-opens",
                                             "--add-exports",
                                             "--add-reads",
                                             "--enable-native-access",
                                             "--limit-modules",
                                             "--upgrade-module-path"};
    char path[96], buf[4096];
    snprintf(path, sizeof(path), "%s/%d/cmdline", z->cfg.proc_root, pid);
    out[0] = '\0';
    ssize_t n = read_small(path, buf, sizeof(buf));
    if (n <= 0)
        return;
    const char *end = buf + n;
    const char *arg = buf + strlen(buf) + 1; /* past the launcher */
    while (arg < end) {
        size_t len = strlen(arg);
        int skip_next = 0;
        if (strcmp(arg, "-jar") == 0 || strcmp(arg, "-m") == 0 || strcmp(arg, "--module") == 0) {
            arg += len + 1;
            if (arg < end)
                snprintf(out, cap, "%s", arg);
            return;
        }
        if (arg[0] != '-') {
            snprintf(out, cap, "%s", arg);
            return;
        }
        for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
            skip_next |= strcmp(arg, with_value[i]) == 0;
        arg += len + 1;
        if (skip_next && arg < end)
            arg += strlen(arg) + 1;
    }
}

static void thread_name(const struct zerotouch *z, int32_t pid, int32_t host_tid, char *out, size_t cap)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%d/task/%d/comm", z->cfg.proc_root, pid, host_tid);
    if (read_small(path, out, cap) <= 0)
        snprintf(out, cap, "tid %d", host_tid);
    out[strcspn(out, "\n")] = '\0';
}

/* ---- frames ---- */

/* Hands ev to the host as j's. 0, or -1 when the host closed j's peer. */
static int send_event(struct zt_jvm *j, WireEvent *ev)
{
    if (!j->owner)
        return -1;
    uint8_t buf[4096];
    ssize_t len = wire_pack(ev, buf, sizeof(buf), sizeof(buf));
    if (len <= 0)
        return 0; /* cannot happen with these small events; nothing to hand */
    if (j->z->host.frame(j->z->host.arg, j->owner, buf, (size_t)len) != 0) {
        j->owner = NULL; /* the host closed it, and the kernel view forgot its threads */
        j->state = ZT_GAVE_UP;
        snprintf(j->why, sizeof(j->why), "the collector refused its session (its log says why)");
        return -1;
    }
    return 0;
}

/* A StringDef; returns its id, 0 when it could not be sent. */
static uint32_t send_string(struct zt_jvm *j, const char *text)
{
    Vtpin__V1__StringDef m = VTPIN__V1__STRING_DEF__INIT;
    m.id = ++j->next_string;
    m.value = (char *)text;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STRING;
    ev.string = &m;
    return send_event(j, &ev) == 0 ? m.id : 0;
}

static int send_hello(struct zt_jvm *j)
{
    const struct hotspot_info *hi = hotspot_info(j->hs);
    struct zerotouch *z = j->z;
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    Vtpin__V1__ThreadLayout tl = VTPIN__V1__THREAD_LAYOUT__INIT;
    tl.thread_obj_offset = hi->thread_obj;
    tl.vthread_offset = hi->vthread;
    tl.pending_monitor_offset = hi->pending_monitor;
    tl.waiting_monitor_offset = hi->waiting_monitor;
    tl.thread_state_offset = hi->thread_state;
    tl.tid_offset = hi->tid;
    tl.has_vthread_state_offset = hi->vt_state != 0;
    tl.vthread_state_offset = hi->vt_state;
    tl.state_blocked = hi->state_blocked;
    tl.state_in_native = hi->state_in_native;
    Vtpin__V1__Hello h = VTPIN__V1__HELLO__INIT;
    h.schema_version = WIRE_SCHEMA_VERSION;
    int64_t ns_pid = -1;
    uint64_t pidns = 0;
    nspid_process(z->cfg.proc_root, j->pid, &ns_pid, &pidns);
    h.pid = ns_pid > 0 ? ns_pid : j->pid; /* its own, as an agent in it would say */
    h.java_version = (char *)hi->release;
    h.vm_name = (char *)hi->vm_name;
    h.host = host;
    char agent[96];
    snprintf(agent, sizeof(agent), "none (collector %s, kernel view)", z->cfg.version);
    h.agent_version = agent;
    h.has_mode = 1;
    h.mode = VTPIN__V1__LOAD_MODE__KERNEL;
    h.has_start_unix_ns = h.has_start_mono_ns = 1;
    h.start_unix_ns = j->start_unix_ns;
    h.start_mono_ns = j->start_mono_ns;
    h.has_threshold_ns = 1;
    h.threshold_ns = z->cfg.min_ns;
    h.has_jdk_feature = 1;
    h.jdk_feature = hi->feature;
    h.has_occupancy = 1;
    h.occupancy = VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_OFF;
    h.app = j->app;
    h.thread_layout = &tl;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HELLO;
    ev.hello = &h;
    if (send_event(j, &ev) != 0)
        return -1;
    j->park_reason = send_string(j, "Parked on its carrier while pinned (this JVM does not let its reason be read "
                                    "from outside: a monitor held, a native or VM frame, a critical section)");
    return j->owner ? 0 : -1;
}

static void send_carrier(struct zt_jvm *j, struct zt_thread *t)
{
    char name[64];
    thread_name(j->z, j->pid, t->host_tid, name, sizeof(name));
    uint32_t id = send_string(j, name);
    Vtpin__V1__Carrier m = VTPIN__V1__CARRIER__INIT;
    m.tid = t->ns_tid;
    if (id) {
        m.has_name = 1;
        m.name = id;
    }
    m.has_java_thread = 1;
    m.java_thread = t->java_thread;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_CARRIER;
    ev.carrier = &m;
    if (send_event(j, &ev) == 0)
        t->carrier_told = 1;
}

/* Opens j's session at its first pin: its Hello and the carriers seen so far. */
static int publish(struct zt_jvm *j)
{
    if (j->state == ZT_SESSION)
        return 0;
    if (j->state != ZT_WATCHING || send_hello(j) != 0)
        return -1;
    j->state = ZT_SESSION;
    clog_info("zero-touch: JVM pid %d (%s, %s) pinned: its session begins", j->pid, hotspot_info(j->hs)->release,
              j->app[0] ? j->app : "app unknown");
    for (size_t i = 0; i < j->n_threads && j->owner; i++)
        if (j->threads[i].carrier && !j->threads[i].carrier_told)
            send_carrier(j, &j->threads[i]);
    return j->owner ? 0 : -1;
}

/* ---- attach on pin ---- */

/* j pinned for pinned_ns: the agent comes, if --attach-on-pin says so and the limits allow. */
static void maybe_attach(struct zt_jvm *j, int64_t pinned_ns, int64_t now)
{
    const struct ztattach_config *c = &j->z->cfg.attach;
    if (c->min_ns < 0 || j->attach != AT_NONE || j->state != ZT_SESSION || pinned_ns < c->min_ns)
        return;
    int rc = ztattach_allowed(c, &j->z->limiter, j->cmdline, now, j->attach_why, sizeof(j->attach_why));
    if (rc == -EBUSY)
        return; /* the minute's attaches are used: at its next pin */
    if (rc) {
        j->attach = AT_REFUSED;
        clog_info("zero-touch: JVM pid %d: %s", j->pid, j->attach_why);
        return;
    }
    pid_t child = ztattach_spawn(c, j->pid);
    if (child < 0) {
        j->attach = AT_FAILED;
        snprintf(j->attach_why, sizeof(j->attach_why), "cannot run vtpin attach: %s", strerror((int)-child));
        clog_warn("zero-touch: JVM pid %d: %s", j->pid, j->attach_why);
        return;
    }
    j->attach = AT_RUNNING;
    j->attach_child = child;
    snprintf(j->attach_why, sizeof(j->attach_why), "it pinned for %" PRId64 " ms", pinned_ns / 1000000);
    clog_info("zero-touch: JVM pid %d %s: loading the agent (vtpin attach, pid %d)", j->pid, j->attach_why, child);
}

/* Every tick: the longest pin in progress may bring the agent; an attach that ended says how. */
static void follow_attach(struct zt_jvm *j, int64_t now)
{
    if (j->attach == AT_RUNNING) {
        int status = 0;
        if (ztattach_reap(j->attach_child, &status) != 1)
            return;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            j->attach = AT_DONE; /* its Hello ends the watch */
        } else {
            j->attach = AT_FAILED;
            snprintf(j->attach_why, sizeof(j->attach_why), "vtpin attach failed (%s %d; the collector's log says why)",
                     WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            clog_warn("zero-touch: JVM pid %d: %s", j->pid, j->attach_why);
        }
        return;
    }
    if (j->attach != AT_NONE || j->z->cfg.attach.min_ns < 0)
        return;
    int64_t longest = 0;
    for (size_t i = 0; i < j->n_threads; i++)
        if (j->threads[i].pin_id && now - j->threads[i].kp.start_ns > longest)
            longest = now - j->threads[i].kp.start_ns;
    maybe_attach(j, longest, now);
}

/* ---- pins ---- */

static struct zt_thread *thread_of(struct zt_jvm *j, int32_t ns_tid)
{
    for (size_t i = 0; i < j->n_threads; i++)
        if (j->threads[i].ns_tid == ns_tid)
            return &j->threads[i];
    return NULL;
}

/* How the reason of a park on the carrier is found in this JVM (kstate.h park_why_of), and from where. */
static void park_reasons_words(const struct hotspot_info *in, char *out, size_t len)
{
    unsigned rule = in->park_rule;
    const char *how;
    if (!(rule & (PARK_RULE_PIN_COUNT | PARK_RULE_NO_CS)) || !(rule & (PARK_RULE_HELD | PARK_RULE_NO_HELD)))
        how = "unknown: this JVM gives no ContinuationEntry::_pin_count or JavaThread::_held_monitor_count "
              "(JVMCI's VM structs, the machine code of Continuation::pin)";
    else if (rule & PARK_RULE_NO_CS)
        how = "read: monitors held (JavaThread::_held_monitor_count), else a native or VM frame; no critical "
              "section read (JDK 21's own code enters none)";
    else if (rule & PARK_RULE_NO_HELD)
        how = "read: a critical section (ContinuationEntry::_pin_count), else a native or VM frame (the JVM counts "
              "no monitors held: its freeze does not look)";
    else
        how = "read: a critical section (ContinuationEntry::_pin_count), monitors held "
              "(JavaThread::_held_monitor_count), else a native or VM frame";
    snprintf(out, len, "%s%s%s", how, in->park_from[0] ? "; " : "", in->park_from);
}

/* The MethodDef of a native frame: class the module's file name, method its symbol (else +0xOFFSET in it),
 * library its path. Its id, 0 when none could be given (the table is full). */
static uint32_t native_method(struct zt_jvm *j, const struct ustack_frame *f)
{
    char key[sizeof(j->native_methods->key)], name[64];
    snprintf(key, sizeof(key), "%s\n%s", f->module, f->symbol);
    if (!f->symbol[0]) { /* by its place in the module: a symbol-less frame */
        snprintf(name, sizeof(name), "+0x%" PRIx64, f->offset);
        snprintf(key, sizeof(key), "%s\n%s", f->module, name);
    }
    for (unsigned i = 0; i < j->n_native_methods; i++)
        if (strcmp(j->native_methods[i].key, key) == 0)
            return j->native_methods[i].id;
    if (!j->native_methods && !(j->native_methods = calloc(ZT_NATIVE_METHODS, sizeof(*j->native_methods))))
        return 0;
    if (j->n_native_methods == ZT_NATIVE_METHODS)
        return 0;
    const char *slash = strrchr(f->module, '/');
    Vtpin__V1__MethodDef m = VTPIN__V1__METHOD_DEF__INIT;
    m.class_name = send_string(j, slash ? slash + 1 : f->module[0] ? f->module : "[unknown]");
    m.method_name = send_string(j, f->symbol[0] ? f->symbol : name);
    m.has_library = f->module[0] != '\0';
    m.library = m.has_library ? send_string(j, f->module) : 0;
    m.has_is_native = m.is_native = 1;
    m.has_kind = 1;
    m.kind = VTPIN__V1__FRAME_KIND__FRAME_KIND_NATIVE;
    m.id = ++j->next_method;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_METHOD;
    ev.method = &m;
    if (!m.class_name || !m.method_name || send_event(j, &ev) != 0)
        return 0;
    struct zt_native_method *e = &j->native_methods[j->n_native_methods++];
    snprintf(e->key, sizeof(e->key), "%s", key);
    e->id = m.id;
    return m.id;
}

/* A NATIVE_BLOCK pin's native frames, read while t sleeps in its system call (ustack.h): its StackDef's id
 * (sent once per distinct stack, ZT_NATIVE_STACKS of them; 0: none) and the culprit, its outermost frame:
 * the JNI function the JVM called. At most ZT_UNWINDS_PER_SEC a second per JVM (an unwind opens the
 * modules it meets: a few milliseconds). */
static uint32_t native_stack(struct zt_jvm *j, const struct zt_thread *t, uint64_t bp, uint32_t *culprit)
{
    int64_t now = clock_ns(CLOCK_MONOTONIC);
    if (now - j->unwinds_since >= NS_PER_SEC) {
        j->unwinds_since = now;
        j->unwinds = 0;
    }
    if (j->unwinds >= ZT_UNWINDS_PER_SEC || t->host_tid <= 0)
        return 0;
    j->unwinds++;
    struct ustack_frame frames[USTACK_MAX_FRAMES];
    int n = ustack_read(j->z->cfg.proc_root, j->pid, t->host_tid, bp, frames, USTACK_MAX_FRAMES);
    if (n <= 0)
        return 0;
    struct zt_native_stack key = {.n = (uint32_t)n};
    for (int i = 0; i < n; i++)
        if (!(key.methods[i] = native_method(j, &frames[i])))
            return 0;
    *culprit = (uint32_t)n - 1;
    for (unsigned i = 0; i < j->n_native_stacks; i++)
        if (j->native_stacks[i].n == key.n && !memcmp(j->native_stacks[i].methods, key.methods, n * sizeof(uint32_t)))
            return j->native_stacks[i].id;
    if (!j->native_stacks && !(j->native_stacks = calloc(ZT_NATIVE_STACKS, sizeof(*j->native_stacks))))
        return 0;
    if (j->n_native_stacks == ZT_NATIVE_STACKS)
        return 0;
    Vtpin__V1__Frame fr[USTACK_MAX_FRAMES], *ptrs[USTACK_MAX_FRAMES];
    for (int i = 0; i < n; i++) {
        Vtpin__V1__Frame init = VTPIN__V1__FRAME__INIT;
        fr[i] = init;
        fr[i].method = key.methods[i];
        fr[i].has_line = fr[i].has_bci = 1;
        fr[i].line = fr[i].bci = -1;
        ptrs[i] = &fr[i];
    }
    Vtpin__V1__StackDef s = VTPIN__V1__STACK_DEF__INIT;
    s.id = ++j->next_stack;
    s.n_frames = (size_t)n;
    s.frames = ptrs;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STACK;
    ev.stack = &s;
    if (send_event(j, &ev) != 0)
        return 0;
    key.id = s.id;
    j->native_stacks[j->n_native_stacks++] = key;
    return s.id;
}

/* Starts a pin of t as iv began; t->pin_id stays 0 when it could not be said. */
static void pin_start(struct zt_jvm *j, struct zt_thread *t, const struct kview_interval *iv, int reason)
{
    t->pin_id = 0;
    t->carrier = 1;
    if (publish(j) != 0 || (!t->carrier_told && (send_carrier(j, t), !j->owner)))
        return;
    Vtpin__V1__PinStart m = VTPIN__V1__PIN_START__INIT;
    m.pin_id = ++j->next_pin;
    m.start_ns = iv->start_ns;
    m.reason = (Vtpin__V1__PinReason)reason;
    m.has_vthread_id = 1;
    m.vthread_id = iv->vthread_id;
    m.has_carrier_tid = 1;
    m.carrier_tid = t->ns_tid;
    if (reason == VTPIN__V1__PIN_REASON__PIN_REASON_UNKNOWN && j->park_reason) {
        m.has_jdk_reason = 1;
        m.jdk_reason = j->park_reason;
    }
    if (reason == VTPIN__V1__PIN_REASON__NATIVE_BLOCK && iv->syscall >= 0)
        m.blocked_in = (char *)syscalls_name(iv->syscall);
    /* a block told while it lasts (crossing the minimum): its native frames can still be read */
    if (reason == VTPIN__V1__PIN_REASON__NATIVE_BLOCK && iv->end_ns == 0 &&
        (m.stack = native_stack(j, t, iv->user_bp, &m.culprit_frame)) != 0)
        m.has_stack = m.has_culprit_frame = 1;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_START;
    ev.pin_start = &m;
    if (send_event(j, &ev) != 0)
        return;
    t->pin_id = m.pin_id;
    j->pins++;
    maybe_attach(j, 0, iv->start_ns); /* --attach-on-pin with no DUR: this pin */
}

/* Ends t's pin, which began at start_ns, at end_ns. */
static void pin_end(struct zt_jvm *j, struct zt_thread *t, int64_t start_ns, int64_t end_ns)
{
    if (!t->pin_id || !j->owner)
        return; /* its start was never said */
    Vtpin__V1__PinEnd m = VTPIN__V1__PIN_END__INIT;
    m.pin_id = t->pin_id;
    m.end_ns = end_ns;
    m.duration_ns = end_ns - start_ns;
    t->pin_id = 0;
    /* the agent being loaded may have found this pin too: its watchdog finds a park in progress at attach */
    j->handed_over += j->attach == AT_RUNNING || j->attach == AT_DONE;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_END;
    ev.pin_end = &m;
    if (send_event(j, &ev) == 0)
        maybe_attach(j, m.duration_ns, end_ns);
}

/* What the kernel view saw of one of j's threads (kglue_java_cb): kpin.h makes it pins. */
static void on_interval(void *arg, void *owner, int32_t ns_tid, const struct kview_interval *iv)
{
    struct zt_jvm *j = arg;
    if (iv->born) { /* its JavaThread joins the list in a moment: look often for a while */
        j->births_until = iv->start_ns + ZT_BIRTH_NS;
        if (j->n_born < ZT_BORN_PENDING) {
            j->born[j->n_born] = iv->tid;
            j->born_at[j->n_born++] = iv->start_ns;
        } else {
            j->born_lost = 1;
        }
        clog_debug("zero-touch: JVM pid %d: thread %d (host tid) made", j->pid, iv->tid);
        set_pace(j->z, 1);
        return;
    }
    struct zt_thread *t = owner == j->owner ? thread_of(j, ns_tid) : NULL;
    if (!t)
        return;
    if (iv->vthread_id > 0)
        t->carrier = 1;
    int64_t started = t->kp.start_ns;
    struct kpin_step step;
    kpin_next(&t->kp, iv, &step);
    if (clog_verbose() && (step.end_stale || step.start || step.end))
        clog_debug(
            "zero-touch: JVM pid %d thread %d: interval %lld+%lld ns (state %d, syscall %d, virtual thread %lld, "
            "wait %d): %s%s%s",
            j->pid, ns_tid, (long long)iv->start_ns, (long long)(iv->end_ns ? iv->end_ns - iv->start_ns : -1),
            iv->state, iv->syscall, (long long)iv->vthread_id, iv->java_wait,
            step.end_stale ? "ends the pin before it, " : "", step.start ? "starts a pin" : "",
            step.end ? " ends it" : "");
    if (step.end_stale)
        pin_end(j, t, started, step.stale_end_ns);
    if (step.start)
        pin_start(j, t, iv, step.reason);
    if (step.end)
        pin_end(j, t, iv->start_ns, iv->end_ns);
}

/* ---- JVMs ---- */

static void give_up(struct zt_jvm *j, enum zt_state state, const char *why)
{
    struct zerotouch *z = j->z;
    if (j->state != state || strcmp(j->why, why) != 0)
        clog_info("zero-touch: JVM pid %d: %s", j->pid, why);
    j->state = state;
    snprintf(j->why, sizeof(j->why), "%s", why);
    if (j->owner) {
        void *owner = j->owner;
        j->owner = NULL;
        z->host.close(z->host.arg, owner, why);
    }
    free(j->threads);
    j->threads = NULL;
    j->n_threads = j->cap_threads = 0;
    hotspot_close(j->hs);
    j->hs = NULL;
}

/* Reaps the attach children whose JVM went before they ended. */
static void reap_orphans(struct zerotouch *z)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < z->n_orphans; i++) {
        int status;
        if (ztattach_reap(z->orphans[i], &status) == 0)
            z->orphans[kept++] = z->orphans[i];
    }
    z->n_orphans = kept;
}

static void jvm_free(struct zt_jvm *j)
{
    free(j->native_methods);
    free(j->native_stacks);
    int status;
    if (j->attach == AT_RUNNING && ztattach_reap(j->attach_child, &status) == 0 &&
        j->z->n_orphans < ZTATTACH_PER_MINUTE_MAX)
        j->z->orphans[j->z->n_orphans++] = j->attach_child; /* beyond that many: a zombie until the collector ends */
    kglue_drain(j->z->k); /* its last intervals (the ring buffer is read at each scan) make its last pins */
    for (size_t i = 0; i < j->n_threads; i++)
        if (j->owner && j->threads[i].pin_id) /* the sleep's end was never told: its pin stays in progress */
            clog_warn("zero-touch: JVM pid %d exited with thread %d pinned since %lld ns: the end of that sleep was "
                      "not seen (kernel intervals lost so far: %llu)",
                      j->pid, j->threads[i].ns_tid, (long long)j->threads[i].kp.start_ns,
                      (unsigned long long)kglue_intervals_lost(j->z->k));
    if (j->owner) {
        void *owner = j->owner;
        j->owner = NULL;
        j->z->host.close(j->z->host.arg, owner, "the JVM exited");
    }
    hotspot_close(j->hs);
    free(j->threads);
    free(j);
}

/* A thread just tracked may already sleep in an interval whose switch out had nothing to read its
 * JavaThread with (a carrier born a moment ago, already pinned): read it now, during that sleep,
 * so that the interval says what it waits for. A read that is not inside the sleep is dropped. */
static void seed_sleep(struct zt_jvm *j, struct zt_thread *t)
{
    int64_t since, again;
    struct hotspot_thread now;
    if (!kglue_unread_sleep(j->z->k, t->host_tid, &since) || hotspot_thread_now(j->hs, t->java_thread, &now) != 0 ||
        !kglue_unread_sleep(j->z->k, t->host_tid, &again) || again != since)
        return;
    const struct kglue_java_now java = {.vthread_id = now.vthread_id,
                                        .vthread_state = now.vthread_state,
                                        .thread_state = now.thread_state,
                                        .pending_monitor = now.pending_monitor,
                                        .waiting_monitor = now.waiting_monitor,
                                        .park_why = hotspot_park_why(j->hs, t->java_thread)};
    kglue_seed_java(j->z->k, j->owner, t->host_tid, since, &java);
}

/* Forgets each thread made that is tracked now, or was made ZT_BIRTH_NS ago and still is not: no
 * JavaThread (a GC worker's), or gone. */
static void forget_births(struct zt_jvm *j, int64_t now)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < j->n_born; i++) {
        int tracked = 0;
        for (size_t k = 0; k < j->n_threads && !tracked; k++)
            tracked = j->threads[k].host_tid == j->born[i];
        if (!tracked && now - j->born_at[i] < ZT_BIRTH_NS) {
            j->born_at[kept] = j->born_at[i];
            j->born[kept++] = j->born[i];
        }
    }
    j->n_born = kept;
    if (j->births_until <= now)
        j->born_lost = 0;
}

/* Follows j's thread list: new threads tracked, ended ones untracked. */
static void follow_threads(struct zt_jvm *j)
{
    uint64_t list;
    if (!j->hs || !j->owner || hotspot_thread_list(j->hs, &list) != 0)
        return;
    /* A list at the address of the last one read is that list, unless a thread made since is not in
     * it yet: HotSpot frees each list it replaces, and a later one can take its address (two changes
     * between looks, a new carrier then missed until the next change: zt_critical on 26, a CI run) */
    if (list == j->thread_list && !j->n_born && !j->born_lost)
        return;
    struct hotspot_thread *now = j->z->rows;
    int n = hotspot_threads(j->hs, now, THREADS_MAX);
    if (n < 0)
        return; /* torn by a safepoint, or gone: the next tick sees */
    if (n > THREADS_MAX)
        n = THREADS_MAX;
    j->thread_list = list;
    for (size_t i = 0; i < j->n_threads; i++)
        j->threads[i].seen = 0;
    for (int i = 0; i < n; i++) {
        if (now[i].ns_tid <= 0)
            continue; /* no OS thread yet */
        struct zt_thread *t = thread_of(j, now[i].ns_tid);
        if (t && t->java_thread != now[i].java_thread) { /* a tid reused: another thread */
            kglue_untrack_java(j->z->k, j->owner, t->host_tid);
            *t = (struct zt_thread){0};
            t->ns_tid = now[i].ns_tid;
            t->java_thread = now[i].java_thread;
            t->host_tid = -1;
        }
        if (!t) {
            if (j->n_threads == j->cap_threads) {
                size_t cap = j->cap_threads ? 2 * j->cap_threads : 32;
                struct zt_thread *grown = realloc(j->threads, cap * sizeof(*grown));
                if (!grown)
                    break;
                j->threads = grown;
                j->cap_threads = cap;
            }
            t = &j->threads[j->n_threads++];
            *t = (struct zt_thread){.ns_tid = now[i].ns_tid, .java_thread = now[i].java_thread, .host_tid = -1};
        }
        t->seen = 1;
        if (now[i].vthread_id > 0)
            t->carrier = 1;
        if (t->host_tid < 0) {
            if (kglue_track_java(j->z->k, j->owner, j->pid, t->ns_tid, t->java_thread, &t->host_tid) == 0) {
                clog_debug("zero-touch: JVM pid %d: thread %d tracked", j->pid, t->ns_tid);
                seed_sleep(j, t);
            } else {
                t->host_tid = -1; /* tried again at the next change of the list */
            }
        }
        if (t->carrier && !t->carrier_told && j->state == ZT_SESSION)
            send_carrier(j, t);
        if (!j->owner)
            break;
    }
    if (!j->owner)
        return;
    size_t kept = 0;
    for (size_t i = 0; i < j->n_threads; i++) {
        struct zt_thread *t = &j->threads[i];
        if (!t->seen) {
            if (t->kp.open)
                pin_end(j, t, t->kp.start_ns, clock_ns(CLOCK_MONOTONIC)); /* it ended while asleep */
            if (t->host_tid >= 0)
                kglue_untrack_java(j->z->k, j->owner, t->host_tid);
            continue;
        }
        j->threads[kept++] = *t;
    }
    j->n_threads = kept;
    forget_births(j, clock_ns(CLOCK_MONOTONIC));
}

/* Starts watching JVM pid. */
static void watch(struct zerotouch *z, int32_t pid, uint64_t ticks, int agent)
{
    if (z->n_jvms >= z->cfg.max_jvms)
        return;
    struct zt_jvm *j = calloc(1, sizeof(*j));
    if (!j)
        return;
    j->z = z;
    j->pid = pid;
    j->start_ticks = ticks;
    j->uid = proc_uid(z, pid);
    j->next = z->jvms;
    z->jvms = j;
    z->n_jvms++;
    if (agent) {
        give_up(j, ZT_AGENT, "the vtpin agent is loaded in it: its pins are the agent's");
        return;
    }
    /* its start as the clocks say now: the Hello's (wall, monotonic) pair */
    int64_t age = clock_ns(CLOCK_BOOTTIME) - (int64_t)(ticks * (uint64_t)NS_PER_SEC / (uint64_t)z->hz);
    j->start_unix_ns = clock_ns(CLOCK_REALTIME) - age;
    j->start_mono_ns = clock_ns(CLOCK_MONOTONIC) - age;
    read_app(z, pid, j->app, sizeof(j->app));
    read_cmdline(z, pid, j->cmdline, sizeof(j->cmdline));
    char why[256] = "";
    int rc = hotspot_open(&j->hs, z->cfg.proc_root, pid, why, sizeof(why));
    if (rc == -EAGAIN && age < STARTING_MAX_NS) { /* still starting: the next scan looks again */
        z->jvms = j->next;
        z->n_jvms--;
        free(j);
        return;
    }
    if (rc) {
        char text[300];
        snprintf(text, sizeof(text), "not watched: %s", why[0] ? why : strerror(-rc));
        give_up(j, ZT_GAVE_UP, text);
        return;
    }
    const struct hotspot_info *hi = hotspot_info(j->hs);
    const struct kview_java_layout layout = {
        .thread_obj = hi->thread_obj,
        .vthread = hi->vthread,
        .pending_monitor = hi->pending_monitor,
        .waiting_monitor = hi->waiting_monitor,
        .thread_state = hi->thread_state,
        .tid = hi->tid,
        .state_blocked = hi->state_blocked,
        .state_in_native = hi->state_in_native,
        .vt_state = hi->vt_state,           /* a park is a pin only when the virtual thread says PINNED */
        .held_monitors = hi->held_monitors, /* and why it could not unmount */
        .cont_entry = hi->cont_entry,
        .pin_count = hi->pin_count,
        .park_rule = hi->park_rule,
    };
    j->owner = z->host.open(z->host.arg, pid, j->uid);
    if (!j->owner || (rc = kglue_kernel_owner(z->k, j->owner, pid, &layout, on_interval, j)) != 0) {
        give_up(j, ZT_GAVE_UP, "not watched: the collector could not take it on (its log says why)");
        return;
    }
    clog_info("zero-touch: watching JVM pid %d (%s, %s)", pid, hi->release, j->app[0] ? j->app : "app unknown");
    follow_threads(j);
}

static struct zt_jvm *jvm_of(struct zerotouch *z, int32_t pid)
{
    for (struct zt_jvm *j = z->jvms; j; j = j->next)
        if (j->pid == pid)
            return j;
    return NULL;
}

/* Whether j is the process that started at ticks (the bit that marks it unseen in a scan aside). */
static int same_process(const struct zt_jvm *j, uint64_t ticks)
{
    return (j->start_ticks & ~(1ull << 63)) == ticks;
}

/* What pid maps (maps_kind); a JVM not known yet (j NULL) is watched from now on. */
static int watch_if_jvm(struct zerotouch *z, const struct zt_jvm *j, int32_t pid, uint64_t ticks)
{
    if (z->cfg.under_pid && !descends_from(z, pid, z->cfg.under_pid))
        return MAPS_OTHER; /* not one of the JVMs it was asked to watch */
    int kind = maps_kind(z, pid);
    if (!j && (kind == MAPS_JVM || kind == MAPS_JVM_AGENT))
        watch(z, pid, ticks, kind == MAPS_JVM_AGENT);
    return kind;
}

/* A process that just began to run java: watched once its VM has filled in its tables. */
static void on_jvm_starting(void *arg, int32_t pid)
{
    struct zerotouch *z = arg;
    if (pid == getpid() || z->n_starting == ZT_STARTING_MAX)
        return; /* more at once: the next look at /proc finds them */
    z->starting[z->n_starting].pid = pid;
    z->starting[z->n_starting].until = clock_ns(CLOCK_MONOTONIC) + ZT_STARTING_NS;
    z->n_starting++;
    clog_debug("zero-touch: pid %d began to run java: looked at every %lld ms until it is a JVM", pid,
               ZT_FAST_NS / 1000000);
    set_pace(z, 1);
}

static void follow_starting(struct zerotouch *z, int64_t now)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < z->n_starting; i++) {
        int32_t pid = z->starting[i].pid;
        uint64_t ticks;
        if (start_ticks(z, pid, &ticks) != 0)
            continue;                     /* gone */
        if (now > z->starting[i].until) { /* no JVM by now (a java that is not HotSpot) */
            if (!jvm_of(z, pid))
                clog_info("zero-touch: pid %d began to run java %lld ms ago and has no VM yet: left to the look "
                          "at /proc every %lld ms",
                          pid, ZT_STARTING_NS / 1000000, ZT_SCAN_NS / 1000000);
            continue;
        }
        struct zt_jvm *j = jvm_of(z, pid);
        if (j && same_process(j, ticks))
            continue; /* watched */
        /* a process that was no JVM (a script that then ran exec java) is one now */
        if ((uintptr_t)idmap_get(z->not_jvm, (uint32_t)pid) == ticks + 1)
            idmap_put(z->not_jvm, (uint32_t)pid, (void *)(uintptr_t)1, NULL);
        watch_if_jvm(z, j, pid, ticks);
        if (!jvm_of(z, pid)) /* still starting (its tables are not filled in yet) */
            z->starting[kept++] = z->starting[i];
    }
    z->n_starting = kept;
}

int zerotouch_new(struct zerotouch **out, struct kglue *k, const struct zt_host *host, const struct zt_config *cfg)
{
    struct zerotouch *z = calloc(1, sizeof(*z));
    if (!z || !(z->not_jvm = idmap_new()) || !(z->rows = calloc(THREADS_MAX, sizeof(*z->rows)))) {
        if (z)
            idmap_free(z->not_jvm, NULL);
        free(z);
        return -ENOMEM;
    }
    z->cfg = *cfg;
    if (!z->cfg.proc_root)
        z->cfg.proc_root = "/proc";
    if (!z->cfg.max_jvms)
        z->cfg.max_jvms = 1024;
    z->k = k;
    z->host = *host;
    z->hz = sysconf(_SC_CLK_TCK);
    if (z->hz <= 0)
        z->hz = 100;
    z->watch.fd = -1;
    z->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    struct itimerspec its = {.it_interval = {.tv_sec = ZT_SCAN_NS / NS_PER_SEC},
                             .it_value = {.tv_sec = ZT_SCAN_NS / NS_PER_SEC}};
    if (z->timer_fd < 0 || timerfd_settime(z->timer_fd, 0, &its, NULL) != 0) {
        int rc = -errno;
        if (z->timer_fd >= 0)
            close(z->timer_fd);
        idmap_free(z->not_jvm, NULL);
        free(z->rows);
        free(z);
        return rc;
    }
    *out = z;
    z->finds_starting = kglue_find_jvms(k, on_jvm_starting, z) == 0;
    return 0;
}

/* Each tick: /proc every ZT_SCAN_NS (which follows every JVM); between, the JVMs with new threads and
 * the processes that just began to run java. */
static void on_tick(struct loop *l, struct loop_watch *w, uint32_t events)
{
    (void)l;
    (void)events;
    struct zerotouch *z = w->data;
    uint64_t expirations;
    if (read(z->timer_fd, &expirations, sizeof(expirations)) < 0)
        return;
    int64_t now = clock_ns(CLOCK_MONOTONIC);
    int scan = now >= z->next_scan, fast = z->n_orphans > 0;
    reap_orphans(z);
    if (scan)
        zerotouch_scan(z);
    follow_starting(z, now);
    fast |= z->n_starting > 0;
    for (struct zt_jvm *j = z->jvms; j; j = j->next) {
        forget_births(j, now);
        if (!scan && j->births_until > now && (j->state == ZT_WATCHING || j->state == ZT_SESSION))
            follow_threads(j);
        if (j->state == ZT_SESSION)
            follow_attach(j, now);
        fast |= j->births_until > now || j->attach == AT_RUNNING;
    }
    set_pace(z, fast);
}

int zerotouch_watch(struct zerotouch *z, struct loop *loop)
{
    return loop_watch(loop, &z->watch, z->timer_fd, EPOLLIN, on_tick, z);
}

void zerotouch_unwatch(struct zerotouch *z, struct loop *loop)
{
    if (z)
        loop_unwatch(loop, &z->watch);
}

void zerotouch_free(struct zerotouch *z)
{
    if (!z)
        return;
    if (z->finds_starting)
        kglue_find_jvms(z->k, NULL, NULL);
    while (z->jvms) {
        struct zt_jvm *j = z->jvms;
        z->jvms = j->next;
        jvm_free(j);
    }
    idmap_free(z->not_jvm, NULL);
    close(z->timer_fd);
    free(z->rows);
    free(z);
}

void zerotouch_scan(struct zerotouch *z)
{
    DIR *d = opendir(z->cfg.proc_root);
    if (!d)
        return;
    struct idmap *not_jvm = idmap_new(); /* this scan's: ended processes leave it */
    if (!not_jvm) {
        closedir(d);
        return;
    }
    z->scans++;
    z->next_scan = clock_ns(CLOCK_MONOTONIC) + ZT_SCAN_NS - ZT_FAST_NS / 2;
    for (struct zt_jvm *j = z->jvms; j; j = j->next)
        j->start_ticks |= 1ull << 63; /* unseen yet */
    int64_t boot_now = clock_ns(CLOCK_BOOTTIME);
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        int32_t pid = (int32_t)strtol(e->d_name, NULL, 10);
        uint64_t ticks;
        if (pid == self || start_ticks(z, pid, &ticks) != 0)
            continue;
        struct zt_jvm *j = jvm_of(z, pid);
        if (j && same_process(j, ticks)) {
            j->start_ticks = ticks; /* the same process */
            continue;
        }
        uintptr_t known = (uintptr_t)idmap_get(z->not_jvm, (uint32_t)pid);
        if (known == ticks + 1) {
            idmap_put(not_jvm, (uint32_t)pid, (void *)known, NULL);
            continue;
        }
        int kind = watch_if_jvm(z, j, pid, ticks);
        if (kind == MAPS_OTHER && boot_now - (int64_t)(ticks * (uint64_t)NS_PER_SEC / (uint64_t)z->hz) > YOUNG_NS) {
            idmap_put(not_jvm, (uint32_t)pid, (void *)(uintptr_t)(ticks + 1), NULL);
        }
    }
    closedir(d);
    idmap_free(z->not_jvm, NULL);
    z->not_jvm = not_jvm;
    /* the JVMs that ended (a pid reused by another process counts as ended) */
    for (struct zt_jvm **p = &z->jvms; *p;) {
        struct zt_jvm *j = *p;
        if (j->start_ticks & (1ull << 63)) {
            *p = j->next;
            z->n_jvms--;
            if (j->state == ZT_SESSION || j->state == ZT_WATCHING)
                clog_info("zero-touch: JVM pid %d exited (%" PRIu64 " pins)", j->pid, j->pins);
            jvm_free(j);
            continue;
        }
        p = &j->next;
    }
    /* an agent loaded later says Hello (zerotouch_agent_hello): the maps of a JVM (1000 lines) are not
     * read again every second */
    for (struct zt_jvm *j = z->jvms; j; j = j->next)
        if (j->state == ZT_WATCHING || j->state == ZT_SESSION)
            follow_threads(j);
}

/* The agent reads its layout from JVMTI and the JVM's own tables; this collector from those tables
 * through /proc alone. Two ways to one answer: a difference means one of them is wrong. */
static void check_agent_layout(struct zt_jvm *j, const Vtpin__V1__ThreadLayout *t)
{
    const struct hotspot_info *hi = hotspot_info(j->hs);
    struct {
        const char *name;
        int64_t mine, agent;
    } fields[] = {
        {"thread_obj", hi->thread_obj, t->thread_obj_offset},
        {"vthread", hi->vthread, t->vthread_offset},
        {"pending_monitor", hi->pending_monitor, t->pending_monitor_offset},
        {"waiting_monitor", hi->waiting_monitor, t->waiting_monitor_offset},
        {"thread_state", hi->thread_state, t->thread_state_offset},
        {"tid", hi->tid, t->tid_offset},
        {"vt_state", hi->vt_state, t->has_vthread_state_offset ? t->vthread_state_offset : 0},
        {"state_blocked", hi->state_blocked, t->state_blocked},
        {"state_in_native", hi->state_in_native, t->state_in_native},
    };
    size_t len = (size_t)snprintf(j->agent_layout, sizeof(j->agent_layout), "agrees");
    int differs = 0;
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        if (fields[i].mine == fields[i].agent)
            continue;
        if (!differs++)
            len = (size_t)snprintf(j->agent_layout, sizeof(j->agent_layout), "differs:");
        if (len < sizeof(j->agent_layout))
            len += (size_t)snprintf(j->agent_layout + len, sizeof(j->agent_layout) - len,
                                    " %s %" PRId64 " (agent %" PRId64 ")", fields[i].name, fields[i].mine,
                                    fields[i].agent);
    }
    if (differs)
        clog_warn("zero-touch: JVM pid %d: the layout read from outside and its agent's %s", j->pid, j->agent_layout);
}

void zerotouch_agent_hello(struct zerotouch *z, int64_t pid, const Vtpin__V1__ThreadLayout *layout)
{
    struct zt_jvm *j = z ? jvm_of(z, (int32_t)pid) : NULL;
    if (j && j->hs && layout)
        check_agent_layout(j, layout);
    for (size_t i = 0; j && i < j->n_threads; i++)
        j->handed_over += j->threads[i].pin_id != 0;
    if (j && (j->state == ZT_WATCHING || j->state == ZT_SESSION))
        give_up(j, ZT_AGENT,
                j->attach == AT_RUNNING || j->attach == AT_DONE
                    ? "the agent was loaded on its pin (--attach-on-pin): its pins are the agent's from now on"
                    : "an agent speaks for it now: its pins are the agent's");
}

void zerotouch_status_json(struct zerotouch *z, struct json *js, int mine_only, uid_t uid)
{
    if (!z) {
        json_kv_null(js, "zero_touch");
        return;
    }
    json_key(js, "zero_touch");
    json_object_begin(js);
    json_kv_uint(js, "scans", z->scans);
    json_kv_bool(js, "finds_starting", z->finds_starting);
    json_key(js, "jvms");
    json_array_begin(js);
    for (const struct zt_jvm *j = z->jvms; j; j = j->next) {
        if (mine_only && j->uid != uid)
            continue;
        json_object_begin_inline(js);
        json_kv_int(js, "pid", j->pid);
        json_kv_uint(js, "uid", j->uid);
        json_kv_string(js, "state", state_names[j->state]);
        if (j->why[0])
            json_kv_string(js, "why", j->why);
        else
            json_kv_null(js, "why");
        json_kv_string(js, "app", j->app);
        json_kv_string(js, "java", j->hs ? hotspot_info(j->hs)->release : "");
        if (j->hs) {
            char words[512];
            park_reasons_words(hotspot_info(j->hs), words, sizeof(words));
            json_kv_string(js, "park_reasons", words);
        } else
            json_kv_null(js, "park_reasons");
        size_t tracked = 0, carriers = 0;
        for (size_t i = 0; i < j->n_threads; i++) {
            tracked += j->threads[i].host_tid >= 0;
            carriers += j->threads[i].carrier != 0;
        }
        json_kv_uint(js, "threads", j->n_threads);
        json_kv_uint(js, "threads_tracked", tracked);
        json_kv_uint(js, "carriers", carriers);
        json_kv_uint(js, "pins", j->pins);
        json_kv_uint(js, "pins_handed_over", j->handed_over);
        if (j->agent_layout[0])
            json_kv_string(js, "agent_layout", j->agent_layout);
        else
            json_kv_null(js, "agent_layout");
        if (j->attach == AT_NONE) {
            json_kv_null(js, "attach");
        } else {
            json_key(js, "attach");
            json_object_begin_inline(js);
            json_kv_string(js, "state", attach_names[j->attach]);
            json_kv_string(js, "why", j->attach_why);
            json_object_end(js);
        }
        json_object_end(js);
    }
    json_array_end(js);
    json_object_end(js);
}
