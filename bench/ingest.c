/* Collector ingest benchmark (bench/run.sh --only ingest).
 *
 * Opens N connections to a running `vtpin collector` and streams on each a
 * synthetic agent session as fast as it can: Hello, string/method/stack
 * definitions, one Carrier per carrier, then Transitions batches (exact
 * occupancy: mount, unmount, mount, ...) for every carrier in turn with a
 * PinStart/PinEnd pair every --pin-every entries, Stats every 64 batches, and
 * a Goodbye. Then it half-closes and waits for the collector to close the
 * connection, which it does once it has decoded everything before the end of
 * the stream: that instant ends the measurement.
 *
 *   ingest --socket PATH --collector-pid PID [--mode throughput|memory]
 *          [--conns N] [--carriers C] [--events E] [--batch B] [--pin-every K]
 *          [--hold-ms MS]
 *
 * throughput: E events in total (transition entries + pin starts + pin ends),
 *   split over the connections. Prints
 *     INGEST conns=.. carriers=.. batch=.. events=.. frames=.. bytes=.. wall_s=..
 *            collector_cpu_s=.. events_per_s=.. events_per_collector_cpu_s=..
 *            rss_before_kb=.. rss_peak_kb=.. rss_after_kb=..
 * memory: each connection sends its session and --events/N entries, then all
 *   stay connected (JVMs alive, carriers known) for --hold-ms while the
 *   collector's RSS is read. Prints
 *     INGEST_MEM conns=.. carriers=.. rss_before_kb=.. rss_held_kb=.. per_jvm_kb=..
 *
 * Collector CPU time is utime+stime of /proc/PID/stat (clock ticks); RSS is
 * VmRSS of /proc/PID/status. */
#ifndef _GNU_SOURCE /* the CMake build passes -D_GNU_SOURCE */
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

static struct {
    const char *socket;
    int collector_pid;
    int memory_mode;
    unsigned conns, carriers, batch, pin_every;
    uint64_t events;
    unsigned hold_ms;
} cfg = {NULL, 0, 0, 4, 8, 1024, 5000, 20000000, 2000};

static _Atomic uint64_t total_frames, total_bytes, total_events;
static _Atomic unsigned connected, failed;
static _Atomic int release_hold;

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double proc_cpu_s(int pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    unsigned long long ut = 0, st = 0;
    /* after ")": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15) */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static long proc_kb(int pid, const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            v = strtol(line + kl + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

/* ---- one connection ---------------------------------------------------------- */

struct conn {
    unsigned index;
    int fd;
    uint8_t *out;
    size_t len, cap;
    uint64_t frames, bytes, events;
    uint64_t next_pin;
    int64_t pid;
    int err;
};

static int send_all(struct conn *c)
{
    size_t off = 0;
    while (off < c->len) {
        ssize_t w = send(c->fd, c->out + off, c->len - off, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            c->err = errno;
            return -1;
        }
        off += (size_t)w;
    }
    c->bytes += c->len;
    c->len = 0;
    return 0;
}

static int put(struct conn *c, WireEvent *ev)
{
    size_t need = wire_packed_size(ev);
    if (need > c->cap - c->len && send_all(c))
        return -1;
    if (need > c->cap) {
        fprintf(stderr, "ingest: frame of %zu bytes does not fit\n", need);
        return -1;
    }
    ssize_t n = wire_pack(ev, c->out + c->len, c->cap - c->len, WIRE_MAX_FRAME_DEFAULT);
    if (n < 0) {
        fprintf(stderr, "ingest: wire_pack: %s\n", strerror((int)-n));
        return -1;
    }
    c->len += (size_t)n;
    c->frames++;
    return 0;
}

static int put_string(struct conn *c, uint32_t id, const char *text)
{
    Vtpin__V1__StringDef d = VTPIN__V1__STRING_DEF__INIT;
    d.id = id;
    d.value = (char *)text;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_STRING;
    ev.string = &d;
    return put(c, &ev);
}

/* Hello, definitions of one 3-frame stack, the carriers. */
static int session_start(struct conn *c)
{
    Vtpin__V1__Hello h = VTPIN__V1__HELLO__INIT;
    h.schema_version = WIRE_SCHEMA_VERSION;
    h.pid = c->pid;
    h.java_version = "21.0.0-ingest";
    h.vm_name = "ingest";
    h.agent_version = "bench-ingest";
    h.options = "collector,occupancy=exact";
    h.has_mode = 1;
    h.mode = VTPIN__V1__LOAD_MODE__STARTUP;
    h.has_start_unix_ns = h.has_start_mono_ns = 1;
    h.start_unix_ns = unix_ns();
    h.start_mono_ns = mono_ns();
    h.has_threshold_ns = 1;
    h.threshold_ns = 0;
    h.has_jdk_feature = 1;
    h.jdk_feature = 21;
    h.has_parallelism = 1;
    h.parallelism = cfg.carriers;
    h.has_occupancy = 1;
    h.occupancy = VTPIN__V1__OCCUPANCY_SOURCE__OCCUPANCY_EXACT;
    h.has_connection = 1;
    h.connection = 0;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_HELLO;
    ev.hello = &h;
    if (put(c, &ev))
        return -1;
    static const char *strings[] = {NULL,
                                    "java.lang.VirtualThread",
                                    "parkOnCarrierThread",
                                    "(ZJ)V",
                                    "VirtualThread.java",
                                    "java.base",
                                    "Ingest",
                                    "settle",
                                    "Ingest.java",
                                    "run",
                                    "vt"};
    for (uint32_t i = 1; i < sizeof(strings) / sizeof(strings[0]); i++)
        if (put_string(c, i, strings[i]))
            return -1;
    uint32_t next_string = sizeof(strings) / sizeof(strings[0]);
    Vtpin__V1__MethodDef m[3];
    uint32_t names[3][3] = {{1, 2, 4}, {6, 7, 8}, {6, 9, 8}};
    for (int i = 0; i < 3; i++) {
        Vtpin__V1__MethodDef init = VTPIN__V1__METHOD_DEF__INIT;
        m[i] = init;
        m[i].id = (uint32_t)i + 1;
        m[i].class_name = names[i][0];
        m[i].method_name = names[i][1];
        m[i].has_source_file = 1;
        m[i].source_file = names[i][2];
        if (i == 0) {
            m[i].has_signature = m[i].has_module = 1;
            m[i].signature = 3;
            m[i].module = 5;
        }
        WireEvent me = VTPIN__V1__EVENT__INIT;
        me.body_case = VTPIN__V1__EVENT__BODY_METHOD;
        me.method = &m[i];
        if (put(c, &me))
            return -1;
    }
    Vtpin__V1__Frame f[3], *fp[3];
    for (int i = 0; i < 3; i++) {
        Vtpin__V1__Frame init = VTPIN__V1__FRAME__INIT;
        f[i] = init;
        f[i].method = (uint32_t)i + 1;
        f[i].has_line = f[i].has_bci = 1;
        f[i].line = 20 + i;
        f[i].bci = 4;
        if (i == 1) {
            f[i].has_monitors = 1;
            f[i].monitors = 1;
        }
        fp[i] = &f[i];
    }
    Vtpin__V1__StackDef sd = VTPIN__V1__STACK_DEF__INIT;
    sd.id = 1;
    sd.n_frames = 3;
    sd.frames = fp;
    WireEvent se = VTPIN__V1__EVENT__INIT;
    se.body_case = VTPIN__V1__EVENT__BODY_STACK;
    se.stack = &sd;
    if (put(c, &se))
        return -1;
    for (unsigned k = 0; k < cfg.carriers; k++) {
        char name[64];
        snprintf(name, sizeof(name), "ForkJoinPool-1-worker-%u", k + 1);
        uint32_t sid = next_string++;
        if (put_string(c, sid, name))
            return -1;
        Vtpin__V1__Carrier cr = VTPIN__V1__CARRIER__INIT;
        cr.tid = (int32_t)(100000 + k);
        cr.has_name = cr.has_start_ns = 1;
        cr.name = sid;
        cr.start_ns = mono_ns();
        WireEvent ce = VTPIN__V1__EVENT__INIT;
        ce.body_case = VTPIN__V1__EVENT__BODY_CARRIER;
        ce.carrier = &cr;
        if (put(c, &ce))
            return -1;
    }
    return 0;
}

static int put_stats(struct conn *c, int goodbye)
{
    Vtpin__V1__Stats s = VTPIN__V1__STATS__INIT;
    s.time_ns = mono_ns();
    s.has_pins = s.has_pins_reported = 1;
    s.pins = s.pins_reported = c->next_pin;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    Vtpin__V1__Goodbye g = VTPIN__V1__GOODBYE__INIT;
    if (goodbye) {
        g.time_ns = s.time_ns;
        g.stats = &s;
        ev.body_case = VTPIN__V1__EVENT__BODY_GOODBYE;
        ev.goodbye = &g;
    } else {
        ev.body_case = VTPIN__V1__EVENT__BODY_STATS;
        ev.stats = &s;
    }
    return put(c, &ev);
}

static int put_pin(struct conn *c, int32_t tid, int64_t vt, int64_t t)
{
    Vtpin__V1__PinStart ps = VTPIN__V1__PIN_START__INIT;
    ps.pin_id = ++c->next_pin;
    ps.start_ns = t;
    ps.reason = VTPIN__V1__PIN_REASON__MONITOR;
    ps.has_vthread_id = ps.has_carrier_tid = ps.has_stack = ps.has_culprit_frame = ps.has_vthread_name = 1;
    ps.vthread_id = vt;
    ps.vthread_name = 10;
    ps.carrier_tid = tid;
    ps.stack = 1;
    ps.culprit_frame = 1;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_PIN_START;
    ev.pin_start = &ps;
    if (put(c, &ev))
        return -1;
    Vtpin__V1__PinEnd pe = VTPIN__V1__PIN_END__INIT;
    pe.pin_id = ps.pin_id;
    pe.end_ns = t + 1000;
    pe.duration_ns = 1000;
    WireEvent ee = VTPIN__V1__EVENT__INIT;
    ee.body_case = VTPIN__V1__EVENT__BODY_PIN_END;
    ee.pin_end = &pe;
    if (put(c, &ee))
        return -1;
    c->events += 2;
    return 0;
}

/* Streams `events` events; each carrier's times increase. */
static int stream(struct conn *c, uint64_t events)
{
    int64_t *times = calloc(cfg.batch, sizeof(*times)), *vts = calloc(cfg.batch, sizeof(*vts));
    int64_t *last = calloc(cfg.carriers, sizeof(*last));
    if (!times || !vts || !last)
        return -1;
    int64_t vt_next = 1000;
    uint64_t since_pin = 0, batches = 0;
    int64_t start = mono_ns();
    for (unsigned k = 0; k < cfg.carriers; k++)
        last[k] = start;
    int rc = 0;
    while (c->events < events && !rc) {
        for (unsigned k = 0; k < cfg.carriers && c->events < events && !rc; k++) {
            int64_t now = mono_ns();
            unsigned n = cfg.batch;
            if (events - c->events < n)
                n = (unsigned)(events - c->events);
            int64_t step = (now - last[k]) / (n + 1);
            if (step < 1)
                step = 1;
            for (unsigned i = 0; i < n; i++) {
                times[i] = last[k] + step * (int64_t)(i + 1);
                vts[i] = (i & 1) ? 0 : vt_next++;
            }
            last[k] = times[n - 1];
            Vtpin__V1__Transitions t = VTPIN__V1__TRANSITIONS__INIT;
            t.carrier_tid = (int32_t)(100000 + k);
            t.n_times_ns = t.n_vthread_ids = n;
            t.times_ns = times;
            t.vthread_ids = vts;
            WireEvent ev = VTPIN__V1__EVENT__INIT;
            ev.body_case = VTPIN__V1__EVENT__BODY_TRANSITIONS;
            ev.transitions = &t;
            rc = put(c, &ev);
            c->events += n;
            since_pin += n;
            if (!rc && cfg.pin_every && since_pin >= cfg.pin_every) {
                since_pin = 0;
                rc = put_pin(c, t.carrier_tid, vt_next - 1, last[k]);
            }
            if (!rc && ++batches % 64 == 0)
                rc = put_stats(c, 0);
        }
    }
    free(times);
    free(vts);
    free(last);
    return rc;
}

static void *conn_main(void *arg)
{
    struct conn *c = arg;
    c->cap = 1u << 20;
    c->out = malloc(c->cap);
    c->pid = 4000000 + (int64_t)getpid() * 1000 + c->index;
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", cfg.socket);
    if (!c->out || c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        c->err = errno;
        atomic_fetch_add(&failed, 1);
        return NULL;
    }
    uint64_t share = cfg.events / cfg.conns;
    int rc = session_start(c) || stream(c, share);
    if (!rc && cfg.memory_mode) {
        rc = send_all(c);
        atomic_fetch_add(&connected, 1);
        while (!rc && !atomic_load(&release_hold))
            usleep(10000);
    }
    if (!rc)
        rc = put_stats(c, 1) || send_all(c);
    if (rc) {
        atomic_fetch_add(&failed, 1);
    } else {
        /* the collector closes once it has read (and decoded) everything up to our EOF */
        shutdown(c->fd, SHUT_WR);
        char b[256];
        while (read(c->fd, b, sizeof(b)) > 0)
            ;
    }
    close(c->fd);
    atomic_fetch_add(&total_frames, c->frames);
    atomic_fetch_add(&total_bytes, c->bytes);
    atomic_fetch_add(&total_events, c->events);
    free(c->out);
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: ingest --socket PATH --collector-pid PID [--mode throughput|memory] [--conns N]\n"
                    "              [--carriers C] [--events E] [--batch B] [--pin-every K] [--hold-ms MS]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        const char *k = argv[i], *v = argv[++i];
        if (!strcmp(k, "--socket"))
            cfg.socket = v;
        else if (!strcmp(k, "--collector-pid"))
            cfg.collector_pid = atoi(v);
        else if (!strcmp(k, "--mode"))
            cfg.memory_mode = !strcmp(v, "memory");
        else if (!strcmp(k, "--conns"))
            cfg.conns = (unsigned)atoi(v);
        else if (!strcmp(k, "--carriers"))
            cfg.carriers = (unsigned)atoi(v);
        else if (!strcmp(k, "--events"))
            cfg.events = strtoull(v, NULL, 10);
        else if (!strcmp(k, "--batch"))
            cfg.batch = (unsigned)atoi(v);
        else if (!strcmp(k, "--pin-every"))
            cfg.pin_every = (unsigned)atoi(v);
        else if (!strcmp(k, "--hold-ms"))
            cfg.hold_ms = (unsigned)atoi(v);
        else
            usage();
    }
    if (!cfg.socket || cfg.collector_pid <= 0 || !cfg.conns || !cfg.carriers || !cfg.batch)
        usage();
    struct conn *cs = calloc(cfg.conns, sizeof(*cs));
    pthread_t *th = calloc(cfg.conns, sizeof(*th));
    if (!cs || !th)
        return 1;
    long rss_before = proc_kb(cfg.collector_pid, "VmRSS"), rss_peak = rss_before;
    double cpu0 = proc_cpu_s(cfg.collector_pid);
    int64_t t0 = mono_ns();
    for (unsigned i = 0; i < cfg.conns; i++) {
        cs[i].index = i;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 256 * 1024);
        if (pthread_create(&th[i], &a, conn_main, &cs[i]) != 0) {
            fprintf(stderr, "ingest: pthread_create failed\n");
            return 1;
        }
        pthread_attr_destroy(&a);
    }
    if (cfg.memory_mode) {
        while (atomic_load(&connected) + atomic_load(&failed) < cfg.conns)
            usleep(10000);
        /* let the collector drain what is in flight, then read its memory */
        int64_t until = mono_ns() + (int64_t)cfg.hold_ms * 1000000;
        while (mono_ns() < until) {
            long r = proc_kb(cfg.collector_pid, "VmRSS");
            if (r > rss_peak)
                rss_peak = r;
            usleep(50000);
        }
        long held = proc_kb(cfg.collector_pid, "VmRSS");
        atomic_store(&release_hold, 1);
        for (unsigned i = 0; i < cfg.conns; i++)
            pthread_join(th[i], NULL);
        printf("INGEST_MEM conns=%u carriers=%u events=%" PRIu64 " failed=%u rss_before_kb=%ld rss_held_kb=%ld "
               "rss_peak_kb=%ld per_jvm_kb=%.1f\n",
               cfg.conns, cfg.carriers, atomic_load(&total_events), atomic_load(&failed), rss_before, held, rss_peak,
               (double)(held - rss_before) / cfg.conns);
        return atomic_load(&failed) ? 1 : 0;
    }
    /* throughput: sample the collector's RSS while the threads stream */
    unsigned done = 0;
    char *joined = calloc(cfg.conns, 1);
    if (!joined)
        return 1;
    while (!done) {
        long r = proc_kb(cfg.collector_pid, "VmRSS");
        if (r > rss_peak)
            rss_peak = r;
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
        done = 1;
        for (unsigned i = 0; i < cfg.conns; i++) {
            if (!joined[i] && pthread_tryjoin_np(th[i], NULL) == 0)
                joined[i] = 1;
            if (!joined[i])
                done = 0;
        }
    }
    int64_t t1 = mono_ns();
    double cpu1 = proc_cpu_s(cfg.collector_pid);
    double wall = (double)(t1 - t0) / 1e9, cpu = cpu1 - cpu0;
    uint64_t ev = atomic_load(&total_events);
    printf("INGEST conns=%u carriers=%u batch=%u pin_every=%u events=%" PRIu64 " frames=%" PRIu64 " bytes=%" PRIu64
           " failed=%u wall_s=%.3f collector_cpu_s=%.2f events_per_s=%.0f events_per_collector_cpu_s=%.0f "
           "rss_before_kb=%ld rss_peak_kb=%ld rss_after_kb=%ld\n",
           cfg.conns, cfg.carriers, cfg.batch, cfg.pin_every, ev, atomic_load(&total_frames), atomic_load(&total_bytes),
           atomic_load(&failed), wall, cpu, ev / wall, cpu > 0 ? ev / cpu : 0.0, rss_before, rss_peak,
           proc_kb(cfg.collector_pid, "VmRSS"));
    return atomic_load(&failed) ? 1 : 0;
}
