/* Helpers of bench/run.sh and bench/latency.sh (not part of vtpin).
 *
 *   benchtool stats RECORDING
 *       one line of key=value: events by kind, transition entries, and the agent's
 *       last counters (Goodbye, else the last Stats), transitions_dropped included
 *       (`vtpin report` does not show that one).
 *
 *   benchtool watch-files [--trace FILE] [--record FILE] [--stop FILE] [--timeout SEC]
 *       follows a trace file and/or a recording as the agent writes them (inotify)
 *       and prints, for each pin start, the CLOCK_MONOTONIC time it became visible:
 *         TRACE  seen_ns=<n> pin=<id> vthread=<id> name=<vthread name>
 *         RECORD seen_ns=<n> pin=<id> start_ns=<agent's pin start> vthread=<id> name=<name>
 *       The files should exist (empty) before the JVM starts: the agent opens
 *       them with O_TRUNC, which keeps the inode watched here.
 *
 *   benchtool watch-collector --socket PATH [--interval-us N] [--match TEXT] [--stop FILE]
 *                             [--timeout SEC]
 *       asks a running `vtpin collector` for its `top` view back to back (one
 *       connection per query, as `vtpin top --json` does) and prints, for each virtual
 *       thread first seen pinned on a carrier with TEXT in its culprit:
 *         COLLECTOR seen_ns=<reply received> sent_ns=<query sent> vthread=<id> pinned_for_ns=<n>
 *       and at the end COLLECTOR_RTT n=.. median_us=.. p99_us=.. max_us=..
 *
 * Both watchers stop when the stop file exists, at the timeout, or on SIGTERM/SIGINT.
 * System.nanoTime() on Linux HotSpot, the agent's timestamps and these are all
 * CLOCK_MONOTONIC of the same host. */
#ifndef _GNU_SOURCE /* the CMake build passes -D_GNU_SOURCE */
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    (void)sig;
    stop_signal = 1;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "benchtool: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(2);
}

struct stopper {
    const char *file;
    int64_t deadline;
};

static int should_stop(const struct stopper *s)
{
    if (stop_signal)
        return 1;
    if (s->deadline && mono_ns() > s->deadline)
        return 1;
    return s->file && access(s->file, F_OK) == 0;
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* ---- string ids of one recording -------------------------------------------- */

struct strings {
    char **text;
    uint32_t cap;
};

static void strings_put(struct strings *s, uint32_t id, const char *v)
{
    if (id >= 1u << 24)
        return;
    if (id >= s->cap) {
        uint32_t ncap = s->cap ? s->cap : 256;
        while (ncap <= id)
            ncap *= 2;
        char **n = realloc(s->text, ncap * sizeof(*n));
        if (!n)
            return;
        memset(n + s->cap, 0, (ncap - s->cap) * sizeof(*n));
        s->text = n;
        s->cap = ncap;
    }
    free(s->text[id]);
    s->text[id] = strdup(v ? v : "");
}

static const char *strings_get(const struct strings *s, uint32_t id)
{
    return id < s->cap && s->text[id] ? s->text[id] : "?";
}

/* ---- stats ------------------------------------------------------------------ */

static int cmd_stats(int argc, char **argv)
{
    if (argc != 1)
        die("usage: benchtool stats RECORDING%s", "");
    int fd = open(argv[0], O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die("cannot open %s", argv[0]);
    WireReader *r = wire_reader_new(fd, 16u << 20);
    if (!r || wire_reader_expect_magic(r) != 0)
        die("%s is not a vtpin recording", argv[0]);
    uint64_t counts[32] = {0}, entries = 0, samples = 0, frames = 0;
    Vtpin__V1__Stats last = VTPIN__V1__STATS__INIT;
    int have_stats = 0, goodbye = 0, rc;
    uint64_t jvmti_calls = 0; /* the last stats' JVMTI calls, every function (summed before the event is freed) */
    WireEvent *ev = NULL;
    while ((rc = wire_reader_next(r, &ev)) == 1) {
        frames++;
        if ((unsigned)ev->body_case < 32)
            counts[ev->body_case]++;
        const Vtpin__V1__Stats *st = NULL;
        if (ev->body_case == VTPIN__V1__EVENT__BODY_TRANSITIONS)
            entries += ev->transitions->n_times_ns;
        else if (ev->body_case == VTPIN__V1__EVENT__BODY_CARRIER_SAMPLE)
            samples += ev->carrier_sample->n_carrier_tids;
        else if (ev->body_case == VTPIN__V1__EVENT__BODY_STATS)
            st = ev->stats;
        else if (ev->body_case == VTPIN__V1__EVENT__BODY_GOODBYE && ev->goodbye->stats) {
            st = ev->goodbye->stats;
            goodbye = 1;
        }
        if (st) {
            last = *st;
            last.n_jvmti_calls = 0;
            last.jvmti_calls = NULL; /* freed with ev */
            jvmti_calls = 0;
            for (size_t i = 0; i < st->n_jvmti_calls; i++)
                jvmti_calls += st->jvmti_calls[i]->calls;
            have_stats = 1;
        }
        wire_event_free(ev);
    }
    printf("frames=%" PRIu64 " complete=%d end=%s pin_starts=%" PRIu64 " pin_ends=%" PRIu64
           " transitions_frames=%" PRIu64 " transition_entries=%" PRIu64 " carrier_samples=%" PRIu64
           " sample_entries=%" PRIu64,
           frames, goodbye && rc == 0, rc == 0 ? "clean" : (rc == -ENODATA ? "truncated" : "error"),
           counts[VTPIN__V1__EVENT__BODY_PIN_START], counts[VTPIN__V1__EVENT__BODY_PIN_END],
           counts[VTPIN__V1__EVENT__BODY_TRANSITIONS], entries, counts[VTPIN__V1__EVENT__BODY_CARRIER_SAMPLE], samples);
    if (have_stats)
        printf(" pins=%" PRIu64 " pins_reported=%" PRIu64 " pins_below_threshold=%" PRIu64 " events_dropped=%" PRIu64
               " stacks_dropped=%" PRIu64 " transitions_dropped=%" PRIu64 " collector_dropped=%" PRIu64
               " carriers_started=%" PRIu64,
               last.pins, last.pins_reported, last.pins_below_threshold, last.events_dropped, last.stacks_dropped,
               last.transitions_dropped, last.collector_dropped, last.carriers_started);
    if (have_stats && last.has_agent_cpu_ns)
        printf(" agent_cpu_ns=%" PRIu64 " jvmti_calls=%" PRIu64, last.agent_cpu_ns, jvmti_calls);
    printf("\n");
    wire_reader_free(r);
    close(fd);
    return 0;
}

/* ---- watch-files -------------------------------------------------------------- */

struct followed {
    const char *path;
    int fd, wd;
    uint8_t *buf;
    size_t len, cap;
    int magic_done;
    struct strings strings;
};

static void follow_open(struct followed *f, int ino)
{
    f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_CREAT, 0644);
    if (f->fd < 0)
        die("cannot open %s", f->path);
    f->wd = inotify_add_watch(ino, f->path, IN_MODIFY);
    if (f->wd < 0)
        die("inotify_add_watch %s failed", f->path);
    f->cap = 1u << 20;
    f->buf = malloc(f->cap);
    if (!f->buf)
        die("out of memory%s", "");
}

/* Appends what was written since the last call; returns bytes read. */
static size_t follow_read(struct followed *f)
{
    size_t total = 0;
    for (;;) {
        if (f->cap - f->len < 65536) {
            size_t ncap = f->cap * 2;
            uint8_t *n = realloc(f->buf, ncap);
            if (!n)
                die("out of memory%s", "");
            f->buf = n;
            f->cap = ncap;
        }
        ssize_t n = read(f->fd, f->buf + f->len, f->cap - f->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return total;
        f->len += (size_t)n;
        total += (size_t)n;
    }
}

static void consume(struct followed *f, size_t used)
{
    memmove(f->buf, f->buf + used, f->len - used);
    f->len -= used;
}

/* "vtpin: pin #3 started: VirtualThread[#25,pintimer-2]/pinned@..." */
static void scan_trace(struct followed *f, int64_t seen)
{
    size_t start = 0;
    for (size_t i = 0; i < f->len; i++) {
        if (f->buf[i] != '\n')
            continue;
        f->buf[i] = '\0';
        const char *line = (const char *)f->buf + start;
        unsigned long long pin = 0;
        long long vt = 0;
        int off = 0;
        if (sscanf(line, "vtpin: pin #%llu started: VirtualThread[#%lld%n", &pin, &vt, &off) == 2) {
            const char *name = line + off;
            char nm[128] = "";
            if (*name == ',') {
                name++;
                size_t k = 0;
                while (name[k] && name[k] != ']' && k < sizeof(nm) - 1) {
                    nm[k] = name[k];
                    k++;
                }
                nm[k] = '\0';
            }
            printf("TRACE seen_ns=%" PRId64 " pin=%llu vthread=%lld name=%s\n", seen, pin, vt, *nm ? nm : "-");
        }
        start = i + 1;
    }
    consume(f, start);
}

static void scan_record(struct followed *f, int64_t seen)
{
    size_t off = 0;
    if (!f->magic_done) {
        if (f->len < WIRE_MAGIC_LEN)
            return;
        if (memcmp(f->buf, WIRE_MAGIC, WIRE_MAGIC_LEN) != 0)
            die("%s is not a vtpin recording", f->path);
        off = WIRE_MAGIC_LEN;
        f->magic_done = 1;
    }
    for (;;) {
        size_t frame_len = 0;
        int rc = wire_frame_ready(f->buf + off, f->len - off, 16u << 20, &frame_len);
        if (rc < 0)
            die("bad frame in %s", f->path);
        if (rc == 0)
            break;
        WireEvent *ev = NULL;
        int decoded = wire_decode(f->buf + off, frame_len, &ev);
        off += frame_len;
        if (decoded != 1)
            continue;
        if (ev->body_case == VTPIN__V1__EVENT__BODY_STRING)
            strings_put(&f->strings, ev->string->id, ev->string->value);
        else if (ev->body_case == VTPIN__V1__EVENT__BODY_PIN_START) {
            const Vtpin__V1__PinStart *p = ev->pin_start;
            printf("RECORD seen_ns=%" PRId64 " pin=%" PRIu64 " start_ns=%" PRId64 " vthread=%" PRId64 " name=%s\n",
                   seen, p->pin_id, p->start_ns, p->has_vthread_id ? p->vthread_id : 0,
                   p->has_vthread_name ? strings_get(&f->strings, p->vthread_name) : "-");
        }
        wire_event_free(ev);
    }
    consume(f, off);
}

static int cmd_watch_files(int argc, char **argv)
{
    struct followed trace = {0}, record = {0};
    struct stopper st = {0};
    for (int i = 0; i < argc; i++) {
        if (i + 1 >= argc)
            die("%s needs a value", argv[i]);
        if (!strcmp(argv[i], "--trace"))
            trace.path = argv[++i];
        else if (!strcmp(argv[i], "--record"))
            record.path = argv[++i];
        else if (!strcmp(argv[i], "--stop"))
            st.file = argv[++i];
        else if (!strcmp(argv[i], "--timeout"))
            st.deadline = mono_ns() + (int64_t)(atof(argv[++i]) * 1e9);
        else
            die("unknown option %s", argv[i]);
    }
    if (!trace.path && !record.path)
        die("watch-files needs --trace and/or --record%s", "");
    install_signals();
    int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (ino < 0)
        die("inotify_init1 failed%s", "");
    if (trace.path)
        follow_open(&trace, ino);
    if (record.path)
        follow_open(&record, ino);
    printf("READY\n");
    fflush(stdout);
    char evbuf[4096] __attribute__((aligned(8)));
    while (!should_stop(&st)) {
        struct pollfd pfd = {ino, POLLIN, 0};
        int n = poll(&pfd, 1, 20);
        if (n <= 0)
            continue;
        int64_t seen = mono_ns();
        while (read(ino, evbuf, sizeof(evbuf)) > 0)
            ;
        if (trace.path && follow_read(&trace))
            scan_trace(&trace, seen);
        if (record.path && follow_read(&record))
            scan_record(&record, seen);
        fflush(stdout);
    }
    /* whatever is left (the agent's last flush at exit) */
    int64_t seen = mono_ns();
    if (trace.path && follow_read(&trace))
        scan_trace(&trace, seen);
    if (record.path && follow_read(&record))
        scan_record(&record, seen);
    fflush(stdout);
    return 0;
}

/* ---- watch-collector ---------------------------------------------------------- */

static int connect_unix(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

/* One TOP query; *json malloc'ed. 0 or -errno. */
static int ask_top(const char *path, char **json)
{
    int fd = connect_unix(path);
    if (fd < 0)
        return fd;
    Vtpin__V1__Query q = VTPIN__V1__QUERY__INIT;
    q.kind = VTPIN__V1__QUERY__KIND__TOP;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_QUERY;
    ev.query = &q;
    uint8_t buf[64];
    ssize_t n = wire_pack(&ev, buf, sizeof(buf), sizeof(buf));
    int rc = -EIO;
    if (n > 0 && send(fd, buf, (size_t)n, MSG_NOSIGNAL) == n) {
        WireReader *r = wire_reader_new(fd, 16u << 20);
        WireEvent *reply = NULL;
        if (r && wire_reader_next(r, &reply) == 1 && reply->body_case == VTPIN__V1__EVENT__BODY_QUERY_REPLY) {
            *json = strdup(reply->query_reply->json);
            rc = *json ? 0 : -ENOMEM;
        }
        if (reply)
            wire_event_free(reply);
        wire_reader_free(r);
    }
    close(fd);
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The integer after "key": in [from, to), or fallback. */
static long long json_int_in(const char *from, const char *to, const char *key, long long fallback)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\"", key);
    const char *p = memmem(from, (size_t)(to - from), pat, strlen(pat));
    if (!p)
        return fallback;
    p += strlen(pat);
    while (p < to && (*p == ' ' || *p == ':'))
        p++;
    if (p >= to || (*p != '-' && (*p < '0' || *p > '9')))
        return fallback;
    return strtoll(p, NULL, 10);
}

static int cmd_watch_collector(int argc, char **argv)
{
    const char *sock = NULL, *match = NULL;
    long interval_us = 200;
    struct stopper st = {0};
    for (int i = 0; i < argc; i++) {
        if (i + 1 >= argc)
            die("%s needs a value", argv[i]);
        if (!strcmp(argv[i], "--socket"))
            sock = argv[++i];
        else if (!strcmp(argv[i], "--match"))
            match = argv[++i];
        else if (!strcmp(argv[i], "--interval-us"))
            interval_us = atol(argv[++i]);
        else if (!strcmp(argv[i], "--stop"))
            st.file = argv[++i];
        else if (!strcmp(argv[i], "--timeout"))
            st.deadline = mono_ns() + (int64_t)(atof(argv[++i]) * 1e9);
        else
            die("unknown option %s", argv[i]);
    }
    if (!sock)
        die("watch-collector needs --socket%s", "");
    install_signals();
    size_t seen_cap = 4096, seen_n = 0, rtt_n = 0, rtt_cap = 1u << 16;
    int64_t *seen = calloc(seen_cap, sizeof(*seen)), *rtt = calloc(rtt_cap, sizeof(*rtt));
    uint64_t failures = 0;
    printf("READY\n");
    fflush(stdout);
    while (!should_stop(&st)) {
        char *json = NULL;
        int64_t sent = mono_ns();
        int rc = ask_top(sock, &json);
        int64_t got = mono_ns();
        if (rc) {
            failures++;
            usleep(10000);
            continue;
        }
        if (rtt_n < rtt_cap)
            rtt[rtt_n++] = got - sent;
        /* carrier objects are flat: {"name":..,"tid":..,"state":"pinned","vthread":N,...} */
        const char *p = json;
        while ((p = strstr(p, "\"state\"")) != NULL) {
            const char *open = p, *close = strchr(p, '}');
            while (open > json && *open != '{')
                open--;
            if (!close)
                break;
            const char *state = p + 7;
            while (*state == ' ' || *state == ':')
                state++;
            int pinned = !strncmp(state, "\"pinned\"", 8) || !strncmp(state, "\"native_block\"", 14);
            int matched = !match || memmem(open, (size_t)(close - open), match, strlen(match));
            if (pinned && matched) {
                long long vt = json_int_in(open, close, "vthread", 0);
                long long pf = json_int_in(open, close, "pinned_for_ns", -1);
                int known = 0;
                for (size_t k = 0; k < seen_n && !known; k++)
                    known = seen[k] == vt;
                if (!known && vt && seen_n < seen_cap) {
                    seen[seen_n++] = vt;
                    printf("COLLECTOR seen_ns=%" PRId64 " sent_ns=%" PRId64 " vthread=%lld pinned_for_ns=%lld\n", got,
                           sent, vt, pf);
                    fflush(stdout);
                }
            }
            p = close;
        }
        free(json);
        if (interval_us > 0) {
            struct timespec ts = {interval_us / 1000000, (interval_us % 1000000) * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (rtt_n) {
        qsort(rtt, rtt_n, sizeof(*rtt), cmp_i64);
        printf("COLLECTOR_RTT n=%zu median_us=%.1f p99_us=%.1f max_us=%.1f failures=%" PRIu64 "\n", rtt_n,
               rtt[rtt_n / 2] / 1e3, rtt[(size_t)(rtt_n * 0.99)] / 1e3, rtt[rtt_n - 1] / 1e3, failures);
    } else {
        printf("COLLECTOR_RTT n=0 failures=%" PRIu64 "\n", failures);
    }
    fflush(stdout);
    free(seen);
    free(rtt);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: benchtool stats|watch-files|watch-collector ...\n");
        return 2;
    }
    if (!strcmp(argv[1], "stats"))
        return cmd_stats(argc - 2, argv + 2);
    if (!strcmp(argv[1], "watch-files"))
        return cmd_watch_files(argc - 2, argv + 2);
    if (!strcmp(argv[1], "watch-collector"))
        return cmd_watch_collector(argc - 2, argv + 2);
    fprintf(stderr, "benchtool: unknown command %s\n", argv[1]);
    return 2;
}
