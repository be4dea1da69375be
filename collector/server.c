#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "clog.h"
#include "common/budget.h"
#include "common/units.h"
#include "framer.h"
#include "jvms.h"
#include "kglue.h"
#include "listener.h"
#include "loop.h"
#include "metrics.h"
#include "metrics_http.h"
#include "nspid.h"
#include "paths.h"
#include "pprof_service.h"
#include "query.h"
#include "recorder.h"
#include "session.h"
#include "wire.h"
#include "zerotouch.h"

#define NS_PER_SEC 1000000000LL
#define QUERY_SEND_TIMEOUT_NS (5 * NS_PER_SEC)
#define TRIM_EVERY_NS NS_PER_SEC /* at most one malloc_trim a second (a walk of the heap) */

enum client_kind { CLIENT_NEW, CLIENT_AGENT, CLIENT_QUERY };

struct server;

struct client {
    struct loop_watch watch;
    struct server *srv;
    struct client *prev, *next; /* open clients, or the dead list (next only) */
    int fd;
    int kernel; /* a JVM with no agent: zero-touch makes its frames (fd -1, not counted in nclients) */
    pid_t pid;
    uid_t uid;
    enum client_kind kind;
    int64_t accepted_at;
    struct framer in;
    uint64_t frames;
    uint64_t skipped; /* well-formed events of a newer schema */
    /* agents */
    struct session *session;
    struct jvm *jvm;
    struct recorder *rec;
    struct rec_state rec_seen; /* rec's state as last told to jvm (jvm_note_recording) */
    /* queries: the reply being sent */
    uint8_t *out;
    size_t out_len, out_off;
    /* what the memory budget made us drop of this connection */
    uint64_t budget_defs_seen, budget_frames_seen, budget_profile_seen, budget_carry_seen, budget_drops;
};

struct server {
    struct server_config cfg;
    struct loop *loop;
    struct listener ln;
    struct loop_watch ln_watch, sig_watch, tick_watch;
    int sig_fd, tick_fd, reserve_fd;
    struct jvms *jvms;
    struct metrics_http *metrics; /* NULL without --metrics */
    struct loop_watch metrics_watch;
    struct pprof_service *pprof; /* /debug/pprof/pinned, built between the loop's turns */
    struct kglue *kernel;        /* the kernel view (kglue.h) */
    struct zerotouch *zt;        /* JVMs with no agent (zerotouch.h); NULL: --jvms=agents */
    struct client *clients, *dead;
    unsigned nclients;
    int64_t started;
    /* rate limit for "too many clients" lines */
    int64_t last_full_log;
    uint64_t refused_full;
    uint64_t refused_peers; /* by the SO_PEERCRED check */
    struct budget budget;   /* memory peers make us keep (budget.h) */
    int64_t last_budget_log;
    int64_t trimmed_at;     /* the last malloc_trim */
    uint64_t budget_logged; /* refusals when the last line was written */
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

void server_config_defaults(struct server_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->alert.k = 0;
    cfg->alert.hold_ns = NS_PER_SEC;
    cfg->window_ns = 60 * NS_PER_SEC;
    cfg->max_frame = WIRE_MAX_FRAME_DEFAULT;
    cfg->max_clients = SERVER_MAX_CLIENTS_DEFAULT;
    cfg->max_carriers = 256;
    cfg->tick_ns = 100 * 1000000LL;
    cfg->linger_ns = 60 * NS_PER_SEC;
    cfg->handshake_ns = 5 * NS_PER_SEC;
    cfg->memory_budget = BUDGET_DEFAULT;
    cfg->record_max = SERVER_RECORD_MAX_DEFAULT;
    cfg->record_keep = SERVER_RECORD_KEEP_DEFAULT;
    cfg->version = "";
    cfg->kernel_mode = KGLUE_AUTO;
    cfg->kernel_min_ns = 1000000;
    cfg->attach.min_ns = -1;
    cfg->zero_touch = -1;
}

/* Kernel view intervals go to the recording of the connection they belong to. */
static void kernel_write(void *owner, const uint8_t *frame, size_t len)
{
    struct client *c = owner;
    if (c->rec)
        recorder_write(c->rec, frame, len);
}

/* "peer pid 12 uid 1000" into out[cap]; returns out. */
static const char *peer_creds(const struct client *c, char *out, size_t cap)
{
    snprintf(out, cap, "peer pid %ld uid %lu", (long)c->pid, (unsigned long)c->uid);
    return out;
}

/* "peer pid 12 uid 1000 (JVM pid 34)" into out[cap]: with the JVM once known; returns out. */
static const char *peer_name(const struct client *c, char *out, size_t cap)
{
    int n = snprintf(out, cap, "peer pid %ld uid %lu", (long)c->pid, (unsigned long)c->uid);
    if (c->session && n > 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, " (JVM pid %" PRId64 ")",
                 c->jvm ? c->jvm->pid : session_hello(c->session)->pid);
    return out;
}

/* Tells c's JVM how its recording goes (after every flush). */
static void note_recording(struct client *c)
{
    if (c->rec && c->jvm)
        jvm_note_recording(c->jvm, recorder_state(c->rec), &c->rec_seen, c->jvm->owner == c);
}

/* ---- closing ------------------------------------------------------------- */

static void write_alert(struct client *owner, const char *line, const uint8_t *frame, size_t len, int active)
{
    if (active)
        clog_warn("%s", line);
    else
        clog_info("%s", line);
    if (owner && owner->rec)
        recorder_write(owner->rec, frame, len);
}

/* A Notice from the collector into c's recording, so `vtpin report` says it too. */
static void record_notice_as(struct client *c, Vtpin__V1__Severity severity, const char *code, const char *text)
{
    if (c->rec)
        recorder_notice(c->rec, severity, code, text);
}

static void record_notice(struct client *c, const char *code, const char *text)
{
    record_notice_as(c, VTPIN__V1__SEVERITY__WARNING, code, text);
}

#define BUDGET_LOG_EVERY_NS (10 * NS_PER_SEC)

/* The budget refused what c sent (n definitions or frames since the last
 * look): counted for c and its JVM, said in its recording (first time) and
 * in the log (at most every 10 s). */
static void budget_bit(struct client *c, uint64_t n, const char *what)
{
    struct server *s = c->srv;
    if (c->budget_drops == 0) {
        char text[256];
        snprintf(text, sizeof(text),
                 "the collector's memory budget (--memory-budget %zu MiB) was used up: it dropped %s of this JVM; "
                 "what refers to them shows as unknown",
                 s->budget.limit >> 20, what);
        record_notice(c, "collector.memory_budget", text);
    }
    c->budget_drops += n;
    if (c->jvm)
        c->jvm->budget_dropped += n;
    int64_t now = mono_ns();
    if (s->budget_logged == 0 || now - s->last_budget_log >= BUDGET_LOG_EVERY_NS) {
        char peer[128];
        clog_warn("memory budget used up (%zu of %zu bytes, --memory-budget): dropping %s from %s; %" PRIu64
                  " dropped in all so far",
                  s->budget.used, s->budget.limit, what, peer_name(c, peer, sizeof(peer)), s->budget.refused);
        s->last_budget_log = now;
        s->budget_logged = s->budget.refused;
    }
}

/* Closes c now (fd, recording) and queues it to be freed after the batch. */
static void client_close(struct client *c, const char *why)
{
    struct server *s = c->srv;
    char peer[128];
    int64_t now = mono_ns();
    loop_unwatch(s->loop, &c->watch);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    struct jvm *j = c->jvm;
    int newest = j && j->owner == c; /* its recording is the JVM's (note_recording) */
    if (j) {
        jvms_detach(s->jvms, j, c, now);
        if (j->live == 0) {
            char *line = NULL;
            uint8_t *frame = NULL;
            size_t len = 0;
            if (jvm_alert_reset(j, now, why ? why : "the JVM disconnected", &line, &frame, &len) == 1)
                write_alert(c, line, frame, len, 0);
            free(line);
            free(frame);
        }
        clog_info("JVM pid %" PRId64 " disconnected (%s): %s; %" PRIu64 " frames%s%s", j->pid,
                  peer_creds(c, peer, sizeof(peer)), why ? why : "end of stream", c->frames,
                  c->rec ? ", recording " : "", c->rec ? recorder_path(c->rec) : "");
        c->jvm = NULL;
    } else if (why) {
        clog_debug("%s: closed: %s", peer_name(c, peer, sizeof(peer)), why);
    }
    if (c->budget_drops) {
        char text[256];
        snprintf(text, sizeof(text),
                 "%" PRIu64 " definitions or frames of this connection were dropped by the "
                 "collector's memory budget",
                 c->budget_drops);
        record_notice(c, "collector.memory_budget", text);
    }
    if (c->kind == CLIENT_AGENT || c->kernel)
        kglue_owner_gone(s->kernel, c, now);
    if (j && c->rec) { /* after the last writes: a rotation they cause is counted too */
        recorder_flush(c->rec);
        jvm_note_recording(j, recorder_state(c->rec), &c->rec_seen, newest);
    }
    recorder_close(c->rec);
    c->rec = NULL;
    /* off the open list, onto the dead one */
    if (c->prev)
        c->prev->next = c->next;
    else
        s->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (!c->kernel)
        s->nclients--;
    c->prev = NULL;
    c->next = s->dead;
    s->dead = c;
}

/* Logs why a misbehaving peer is dropped, and drops it. */
static void client_reject(struct client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void client_reject(struct client *c, const char *fmt, ...)
{
    char peer[128], why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    clog_warn("%s: %s: closing the connection", peer_name(c, peer, sizeof(peer)), why);
    client_close(c, why);
}

static void client_free(struct client *c)
{
    framer_fini(&c->in);
    session_free(c->session);
    free(c->out);
    free(c);
}

static void free_dead(struct loop *l, void *arg)
{
    (void)l;
    struct server *s = arg;
    while (s->dead) {
        struct client *c = s->dead;
        s->dead = c->next;
        client_free(c);
    }
}

/* ---- queries -------------------------------------------------------------- */

/* Sends what is left of the reply; closes the client when done or broken. */
static void query_send(struct client *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (loop_rearm(c->srv->loop, &c->watch, EPOLLOUT) != 0)
                    client_close(c, "cannot wait for the socket");
                return;
            }
            client_close(c, "the query client went away");
            return;
        }
        c->out_off += (size_t)n;
    }
    client_close(c, NULL);
}

static void query_answer(struct client *c, const Vtpin__V1__Query *q)
{
    struct server *s = c->srv;
    struct query_info info = {
        .pid = getpid(),
        .version = s->cfg.version,
        .socket = s->cfg.socket_path,
        .dir = s->cfg.dir,
        .started_ns = s->started,
        .clients = s->nclients - 1, /* not counting the one asking */
        .memory_budget = s->budget.limit,
        .memory_used = s->budget.used,
        .memory_peak = s->budget.peak,
        .memory_dropped = s->budget.refused,
        .kernel = s->kernel,
        .zero_touch = s->zt,
        .allow = &s->cfg.allow,
        .peers_refused = s->refused_peers,
        .mine_only = !access_sees_all(&s->cfg.allow, geteuid(), c->uid),
        .asker_uid = c->uid,
    };
    char peer[128];
    int rc = query_reply(s->jvms, &info, q, mono_ns(), &c->out, &c->out_len);
    if (rc == -EINVAL) {
        client_reject(c, "unknown query kind %d", (int)q->kind);
        return;
    }
    if (rc) {
        clog_error("%s: cannot answer its query: %s", peer_name(c, peer, sizeof(peer)), strerror(-rc));
        client_close(c, "query failed");
        return;
    }
    clog_debug("%s: %s query (pid %" PRId64 "), %zu bytes of answer", peer_name(c, peer, sizeof(peer)),
               q->kind == VTPIN__V1__QUERY__KIND__TOP ? "TOP" : "STATUS", q->has_pid ? q->pid : 0, c->out_len);
    c->kind = CLIENT_QUERY;
    c->accepted_at = mono_ns(); /* the send timeout starts now */
    query_send(c);
}

/* ---- agents --------------------------------------------------------------- */

/* Who c speaks for: the process its Hello names (hello_pid), by its pid on this
 * host (in a container its Hello says pid 1), and c's uid. */
static void peer_ident(const struct client *c, int64_t hello_pid, struct jvm_ident *id)
{
    int64_t ns_pid = -1;
    uint64_t pidns = 0;
    if (c->pid > 0)
        nspid_process("/proc", c->pid, &ns_pid, &pidns);
    jvm_ident_choose(id, hello_pid, c->pid, ns_pid, pidns);
    id->uid = c->uid;
}

/* A peer served only by --allow-uid/--allow-gid speaks for itself alone: a
 * Hello naming another process is refused (logged, counted) before anything
 * of it is kept. 1 when refused (c closed), else 0. */
static int hello_refused(struct client *c, const struct jvm_ident *id)
{
    if (access_hello_allowed(geteuid(), c->uid, id->source == JVM_PID_PEER))
        return 0;
    c->srv->refused_peers++;
    client_reject(c,
                  "Hello refused: it names JVM pid %" PRId64
                  ", and %s; a peer served by --allow-uid/--allow-gid speaks "
                  "only for the process it is",
                  id->ns_pid, id->why ? id->why : "its pid cannot be checked");
    return 1;
}

static int agent_hello(struct client *c, const WireEvent *ev, const uint8_t *frame, size_t len)
{
    struct server *s = c->srv;
    char err[512], peer[128];
    struct jvm_ident id;
    peer_ident(c, ev->hello->pid, &id);
    if (hello_refused(c, &id))
        return -EPERM;
    if (!c->kernel && id.source == JVM_PID_PEER)
        zerotouch_agent_hello(s->zt, id.pid, ev->hello->thread_layout); /* the agent's pins now, not the kernel's */
    struct session_defs_limits limits = SESSION_LIMITS_DEFAULT;
    limits.budget = &s->budget;
    int rc = session_new(&c->session, ev->hello, &limits);
    if (rc) {
        client_reject(c, "cannot keep its session: %s", strerror(-rc));
        return rc;
    }
    const struct session_hello *h = session_hello(c->session);
    kglue_agent_hello(s->kernel, c, ev->hello);
    int64_t now = mono_ns();
    rc = jvms_attach_as(s->jvms, c->session, &id, NULL, c, now, &c->jvm);
    if (!rc)
        c->budget_profile_seen = c->jvm->profile_dropped;
    if (rc) {
        if (rc == -ENOBUFS)
            clog_warn("memory budget used up (%zu of %zu bytes, --memory-budget): %s's JVM not tracked; %" PRIu64
                      " dropped in all so far",
                      s->budget.used, s->budget.limit, peer_name(c, peer, sizeof(peer)), s->budget.refused);
        client_reject(c, "%s",
                      rc == -ENOSPC    ? "too many JVMs connected"
                      : rc == -ENOBUFS ? "the collector's memory budget is used up (--memory-budget)"
                                       : strerror(-rc));
        return rc;
    }
    struct recorder_config rcfg = {.max_bytes = s->cfg.record_max,
                                   .keep = s->cfg.record_keep,
                                   .budget = &s->budget,
                                   .defs = session_defs(c->session)};
    rc = recorder_open(&c->rec, s->cfg.dir, id.pid, h->start_unix_ns, h->connection, &rcfg, err, sizeof(err));
    if (rc) {
        clog_error("%s: %s; going on without a recording", peer_name(c, peer, sizeof(peer)), err);
        c->rec = NULL;
    } else if (c->jvm->owner == c && jvm_set_recording(c->jvm, recorder_path(c->rec)) != 0) {
        client_reject(c, "out of memory");
        return -ENOMEM;
    }
    c->kind = CLIENT_AGENT;
    if (c->rec && recorder_write_head(c->rec, frame, len) == -ENOMEM)
        clog_warn("%s: out of memory: a recording emptied by a full disk will not start again", recorder_path(c->rec));
    if (id.source == JVM_PID_PEER && id.pid != id.ns_pid) { /* the Hello's pid is its namespace's: say the host's */
        char text[256];
        snprintf(text, sizeof(text),
                 "this JVM is pid %" PRId64 " on the collector's host (pid %" PRId64
                 " in its own pid namespace, inode %" PRIu64 "), the pid the collector names it by",
                 id.pid, id.ns_pid, id.pidns);
        record_notice_as(c, VTPIN__V1__SEVERITY__INFO, "collector.jvm_host_pid", text);
    }
    char vm[160], java[64], vendor[96], agent[64], name[160];
    clog_info(
        "JVM pid %s connected (%s): java %s, %s (%s), agent %s, %s, occupancy %s, connection %" PRIu32 "; recording %s",
        jvm_ident_text(&id, name, sizeof(name)), peer_creds(c, peer, sizeof(peer)),
        clog_printable(h->java_version, java, sizeof(java)), clog_printable(h->vm_name, vm, sizeof(vm)),
        clog_printable(h->vm_vendor, vendor, sizeof(vendor)), clog_printable(h->agent_version, agent, sizeof(agent)),
        wire_mode_name(h->mode) ? wire_mode_name(h->mode) : "mode unknown", wire_occupancy_name(h->occupancy),
        h->connection, c->rec ? recorder_path(c->rec) : "none");
    return 0;
}

/* A deadlock found while j's starvation alert is raised: the alert says so at once. */
static void alert_deadlock(struct jvm *j)
{
    char *line = NULL;
    uint8_t *frame = NULL;
    size_t len = 0;
    int rc = jvm_alert_deadlock(j, mono_ns(), &line, &frame, &len);
    if (rc == 1)
        write_alert(j->owner, line, frame, len, 1);
    else if (rc < 0)
        clog_error("JVM pid %" PRId64 ": alert: %s", j->pid, strerror(-rc));
    free(line);
    free(frame);
}

static void agent_notice(struct client *c, const Vtpin__V1__Notice *n)
{
    char code[128], text[1024];
    clog_printable(n->code, code, sizeof(code));
    clog_printable(n->text, text, sizeof(text));
    int64_t pid = c->jvm ? c->jvm->pid : session_hello(c->session)->pid;
    if (c->jvm && n->severity == VTPIN__V1__SEVERITY__ERROR &&
        jvm_note_deadlock(c->jvm, n->code, n->text, mono_ns())) /* status, top and the metrics say it */
        alert_deadlock(c->jvm);
    if (n->severity == VTPIN__V1__SEVERITY__INFO)
        clog_debug("JVM pid %" PRId64 ": agent notice %s: %s", pid, code, text);
    else
        clog_warn("JVM pid %" PRId64 ": agent %s %s: %s", pid,
                  n->severity == VTPIN__V1__SEVERITY__ERROR ? "error" : "warning", code, text);
}

/* One decoded frame of an agent after its Hello. 0, or -1 when c was closed. */
static int agent_event(struct client *c, const WireEvent *ev, const uint8_t *frame, size_t len)
{
    uint64_t dropped = session_defs_dropped(session_defs(c->session));
    int rc = session_define(c->session, ev);
    if (rc < 0) {
        client_reject(c, "cannot keep its definitions: %s", strerror(-rc));
        return -1;
    }
    if (rc == 0) {
        uint64_t malformed = c->jvm->malformed;
        rc = jvm_apply(c->jvm, c->session, ev, mono_ns());
        if (malformed == 0 && c->jvm->malformed > 0)
            clog_warn("JVM pid %" PRId64 ": %s with arrays of different lengths (the pairs that match are used; "
                      "said once)",
                      c->jvm->pid, wire_event_name((int)ev->body_case));
        if (rc) {
            client_reject(c, "frame %" PRIu64 " is %s, which an agent does not send after its Hello", c->frames,
                          wire_event_name((int)ev->body_case));
            return -1;
        }
        if (c->jvm->profile_dropped > c->budget_profile_seen) {
            budget_bit(c, c->jvm->profile_dropped - c->budget_profile_seen, "pins from its pprof profile");
            c->budget_profile_seen = c->jvm->profile_dropped;
        }
        kglue_agent_event(c->srv->kernel, c, c->pid, ev);
        if (ev->body_case == VTPIN__V1__EVENT__BODY_NOTICE)
            agent_notice(c, ev->notice);
        else if (ev->body_case == VTPIN__V1__EVENT__BODY_GOODBYE)
            clog_debug("JVM pid %" PRId64 ": goodbye", c->jvm->pid);
    } else {
        c->jvm->defs_dropped += session_defs_dropped(session_defs(c->session)) - dropped;
        uint64_t refused = session_defs_budget_dropped(session_defs(c->session));
        if (refused > c->budget_defs_seen) {
            budget_bit(c, refused - c->budget_defs_seen, "definitions");
            c->budget_defs_seen = refused;
        }
    }
    if (c->rec) {
        recorder_write_event(c->rec, ev, frame, len);
        uint64_t refused = recorder_budget_refused(c->rec);
        if (refused > c->budget_carry_seen) {
            budget_bit(c, refused - c->budget_carry_seen, "frames its recording keeps to start a rotated file");
            c->budget_carry_seen = refused;
        }
    }
    return 0;
}

/* One whole frame from c. 0, or -1 when c was closed. */
static int client_frame(struct client *c, const uint8_t *frame, size_t len)
{
    c->frames++;
    WireEvent *ev = NULL;
    int decoded = wire_decode(frame, len, &ev);
    if (decoded < 0 || (decoded == 0 && c->kind != CLIENT_AGENT)) {
        client_reject(c, "frame %" PRIu64 " (%zu bytes at stream offset %" PRIu64 ") is not a vtpin event%s", c->frames,
                      len, c->in.consumed - len, decoded == 0 ? " this collector knows" : "");
        return -1;
    }
    if (decoded == 0) { /* an agent of a newer schema: record it, skip it */
        if (c->skipped++ == 0)
            clog_warn("JVM pid %" PRId64 ": skipping events of a newer schema than this collector's (frame %" PRIu64
                      "; they are recorded; said once per connection)",
                      c->jvm->pid, c->frames);
        if (c->rec)
            recorder_write(c->rec, frame, len);
        return 0;
    }
    int rc = 0;
    char why[256];
    if (c->kind == CLIENT_NEW) {
        int first = session_classify_first(ev, why, sizeof(why));
        if (first == SESSION_FIRST_QUERY) {
            query_answer(c, ev->query);
            rc = -1; /* nothing more is read from a query client */
        } else if (first == SESSION_FIRST_AGENT) {
            rc = agent_hello(c, ev, frame, len) ? -1 : 0;
        } else {
            if (first == -EPROTONOSUPPORT)
                client_reject(c, "JVM pid %" PRId64 " refused: %s", ev->hello->pid, why);
            else
                client_reject(c, "%s", why);
            rc = -1;
        }
    } else if (c->kind == CLIENT_AGENT) {
        rc = agent_event(c, ev, frame, len);
    }
    wire_event_free(ev);
    return rc;
}

static void client_eof(struct client *c)
{
    size_t pending = framer_pending(&c->in);
    if (pending && c->kind != CLIENT_QUERY)
        client_reject(c, "the connection ended in the middle of a frame (%zu bytes of it received)", pending);
    else if (c->kind == CLIENT_NEW)
        client_close(c, "closed before saying Hello");
    else
        client_close(c, NULL);
}

static void client_on_event(struct loop *l, struct loop_watch *w, uint32_t events)
{
    (void)l;
    struct client *c = w->data;
    if (c->kind == CLIENT_QUERY) {
        if (events & (EPOLLERR | EPOLLHUP)) /* the asker went away */
            client_close(c, "the query client went away");
        else
            query_send(c);
        return;
    }
    for (unsigned reads = 0; reads < SERVER_READS_PER_WAKEUP; reads++) {
        uint8_t *room;
        size_t room_len;
        int rc = framer_space(&c->in, &room, &room_len);
        if (rc == -EMSGSIZE) {
            const uint8_t *f;
            size_t announced = 0;
            framer_next(&c->in, &f, &announced);
            client_reject(c, "frame %" PRIu64 " announces %zu bytes, over the %zu-byte limit (--max-frame)",
                          c->frames + 1, announced, c->in.max_frame);
            return;
        }
        if (rc) {
            client_reject(c, "input buffer: %s", strerror(-rc));
            return;
        }
        ssize_t n = read(c->fd, room, room_len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            if (errno == ECONNRESET) {
                client_eof(c);
                return;
            }
            client_reject(c, "read: %s", strerror(errno));
            return;
        }
        if (n == 0) {
            client_eof(c);
            return;
        }
        framer_commit(&c->in, (size_t)n);
        if (c->in.skipped_frames > c->budget_frames_seen) {
            budget_bit(c, c->in.skipped_frames - c->budget_frames_seen, "large frames");
            c->budget_frames_seen = c->in.skipped_frames;
        }
        for (;;) {
            const uint8_t *frame;
            size_t len;
            rc = framer_next(&c->in, &frame, &len);
            if (rc == 0)
                break;
            if (rc < 0) {
                client_reject(c, "frame %" PRIu64 " announces %zu bytes, over the %zu-byte limit (--max-frame)",
                              c->frames + 1, len, c->in.max_frame);
                return;
            }
            if (client_frame(c, frame, len) != 0)
                return;
        }
    }
}

/* ---- JVMs with no agent (zerotouch.h): peers with no socket ---------------- */

static void *kernel_peer_open(void *arg, int32_t pid, uid_t uid)
{
    struct server *s = arg;
    struct client *c = calloc(1, sizeof(*c));
    if (!c || framer_init(&c->in, s->cfg.max_frame) != 0) {
        clog_error("zero-touch: JVM pid %ld: out of memory", (long)pid);
        free(c);
        return NULL;
    }
    c->srv = s;
    c->fd = -1;
    c->watch.fd = -1;
    c->kernel = 1;
    c->pid = pid;
    c->uid = uid;
    c->accepted_at = mono_ns();
    c->next = s->clients;
    if (s->clients)
        s->clients->prev = c;
    s->clients = c;
    return c;
}

static int kernel_peer_frame(void *arg, void *owner, const uint8_t *frame, size_t len)
{
    (void)arg;
    return client_frame(owner, frame, len);
}

static void kernel_peer_close(void *arg, void *owner, const char *why)
{
    (void)arg;
    client_close(owner, why);
}

static int start_zero_touch(struct server *s)
{
    if (!s->cfg.zero_touch)
        return 0;
    if (!kglue_enabled(s->kernel)) {
        if (s->cfg.zero_touch > 0)
            clog_warn("zero-touch (--jvms=all) needs the kernel view, which is off (%s): watching only JVMs with "
                      "the agent",
                      kglue_reason(s->kernel));
        else /* the default: said once, as the kernel view's own line says why it is off */
            clog_info("zero-touch off: it needs the kernel view; watching only JVMs with the agent");
        return 0;
    }
    struct zt_host host = {.arg = s, .open = kernel_peer_open, .frame = kernel_peer_frame, .close = kernel_peer_close};
    struct zt_config zc = {.proc_root = "/proc",
                           .min_ns = s->cfg.kernel_min_ns,
                           .version = s->cfg.version,
                           .attach = s->cfg.attach,
                           .under_pid = s->cfg.zero_touch_under};
    zc.attach.socket = s->cfg.socket_path;
    zc.attach.exe = "/proc/self/exe";
    if (!zc.attach.per_minute)
        zc.attach.per_minute = 4;
    int rc = zerotouch_new(&s->zt, s->kernel, &host, &zc);
    if (rc) {
        clog_error("zero-touch: %s", strerror(-rc));
        return rc;
    }
    if (zc.under_pid)
        clog_info("zero-touch on: watching the HotSpot JVMs descended from pid %d, with nothing loaded into them%s",
                  (int)zc.under_pid,
                  zc.attach.min_ns >= 0 ? "; the agent comes where a JVM pins (--attach-on-pin)" : "");
    else
        clog_info("zero-touch on: watching every HotSpot JVM of the host, with nothing loaded into it (--jvms=agents: "
                  "only those with the agent)%s",
                  zc.attach.min_ns >= 0 ? "; the agent comes where a JVM pins (--attach-on-pin)" : "");
    if ((rc = zerotouch_watch(s->zt, s->loop)) != 0) {
        clog_error("zero-touch: epoll: %s", strerror(-rc));
        return rc;
    }
    zerotouch_scan(s->zt);
    return 0;
}

/* ---- accepting ------------------------------------------------------------- */

static void refuse_full(struct server *s, int fd, pid_t pid)
{
    close(fd);
    s->refused_full++;
    int64_t now = mono_ns();
    if (now - s->last_full_log >= NS_PER_SEC) {
        clog_warn("%u clients connected (--max-clients): refusing new connections (%" PRIu64
                  " refused so far, the last from pid %ld)",
                  s->nclients, s->refused_full, (long)pid);
        s->last_full_log = now;
    }
}

static void accept_one(struct server *s, int fd)
{
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    int rc = listener_peer(fd, &pid, &uid, &gid);
    if (rc) {
        clog_warn("a connection without peer credentials (%s): closing it", strerror(-rc));
        close(fd);
        return;
    }
    if (!access_peer_allowed(&s->cfg.allow, geteuid(), pid, uid, gid, "/proc")) {
        const struct access *a = &s->cfg.allow;
        s->refused_peers++;
        clog_warn("peer pid %ld uid %lu: refused: only uid %lu (this collector's user) and root may connect%s",
                  (long)pid, (unsigned long)uid, (unsigned long)geteuid(),
                  a->nuids || a->ngids ? ", and the users and groups of --allow-uid/--allow-gid" : "");
        close(fd);
        return;
    }
    if (s->nclients >= s->cfg.max_clients) {
        refuse_full(s, fd, pid);
        return;
    }
    struct client *c = calloc(1, sizeof(*c));
    if (!c || framer_init(&c->in, s->cfg.max_frame) != 0) {
        clog_error("peer pid %ld: out of memory: closing it", (long)pid);
        if (c)
            framer_fini(&c->in);
        free(c);
        close(fd);
        return;
    }
    framer_set_budget(&c->in, &s->budget);
    c->srv = s;
    c->fd = fd;
    c->pid = pid;
    c->uid = uid;
    c->watch.fd = -1;
    c->accepted_at = mono_ns();
    rc = loop_watch(s->loop, &c->watch, fd, EPOLLIN | EPOLLRDHUP, client_on_event, c);
    if (rc) {
        clog_error("peer pid %ld: epoll: %s: closing it", (long)pid, strerror(-rc));
        framer_fini(&c->in);
        free(c);
        close(fd);
        return;
    }
    c->next = s->clients;
    if (s->clients)
        s->clients->prev = c;
    s->clients = c;
    s->nclients++;
    clog_debug("peer pid %ld uid %lu connected", (long)pid, (unsigned long)uid);
}

static void on_accept(struct loop *l, struct loop_watch *w, uint32_t events)
{
    (void)l;
    (void)events;
    struct server *s = w->data;
    for (unsigned i = 0; i < SERVER_ACCEPTS_PER_WAKEUP; i++) {
        int fd = accept4(s->ln.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            accept_one(s, fd);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return;
        if ((errno == EMFILE || errno == ENFILE) && s->reserve_fd >= 0) {
            /* out of descriptors: use the reserve to take the connection and drop it,
             * or the listener would stay readable forever */
            close(s->reserve_fd);
            fd = accept4(s->ln.fd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0)
                refuse_full(s, fd, 0);
            s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
            return;
        }
        clog_error("accept: %s", strerror(errno));
        return;
    }
}

/* ---- tick and signals ------------------------------------------------------ */

static void on_tick(struct loop *l, struct loop_watch *w, uint32_t events)
{
    (void)l;
    (void)events;
    struct server *s = w->data;
    uint64_t expirations;
    if (read(s->tick_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
        clog_error("timerfd: %s", strerror(errno));
    int64_t now = mono_ns();
    for (struct jvm *j = jvms_first(s->jvms); j; j = j->next) {
        if (!j->live)
            continue;
        char *line = NULL;
        uint8_t *frame = NULL;
        size_t len = 0;
        int rc = jvm_alert_check(j, &s->cfg.alert, now, &line, &frame, &len);
        if (rc == 1)
            write_alert(j->owner, line, frame, len, j->alert_active);
        else if (rc < 0)
            clog_error("JVM pid %" PRId64 ": alert: %s", j->pid, strerror(-rc));
        free(line);
        free(frame);
    }
    struct client *c = s->clients;
    while (c) {
        struct client *next = c->next; /* c may be closed below */
        if (c->rec) {
            recorder_retry(c->rec);
            recorder_flush(c->rec);
            note_recording(c);
        }
        if (c->kind == CLIENT_NEW && !c->kernel && now - c->accepted_at > s->cfg.handshake_ns)
            client_reject(c, "no Hello or Query within %" PRId64 " ms", s->cfg.handshake_ns / 1000000);
        else if (c->kind == CLIENT_QUERY && now - c->accepted_at > QUERY_SEND_TIMEOUT_NS)
            client_close(c, "the query client does not read its answer");
        c = next;
    }
    jvms_expire(s->jvms, now); /* a JVM forgotten gives its bytes back to the budget */
    if (s->budget.gave_back && now - s->trimmed_at >= TRIM_EVERY_NS) {
        /* glibc keeps what is freed below a chunk still in use (a lingering JVM's small tables,
         * a live client's): give the free pages back, or RSS stays at its peak for good */
        malloc_trim(0);
        s->budget.gave_back = 0;
        s->trimmed_at = now;
    }
    if (s->metrics)
        metrics_http_run(s->metrics); /* MHD's connection timeouts */
}

/* ---- metrics ---------------------------------------------------------------- */

static void on_metrics(struct loop *l, struct loop_watch *w, uint32_t events)
{
    (void)l;
    (void)events;
    struct server *s = w->data;
    metrics_http_run(s->metrics);
}

/* Runs on the loop's thread, between two events (metrics_http.c says why). */
static int render_metrics(void *arg, char **body, size_t *len)
{
    struct server *s = arg;
    struct metrics_info info = {.started_ns = s->started, .clients = s->nclients};
    if (s->pprof)
        pprof_service_counts(s->pprof, &info.pprof);
    return metrics_render(s->jvms, &info, mono_ns(), body, len);
}

static int start_metrics(struct server *s)
{
    char err[512];
    int rc = metrics_http_start(&s->metrics, (const struct sockaddr *)&s->cfg.metrics_addr, s->cfg.metrics_addrlen,
                                render_metrics, s, err, sizeof(err));
    if (rc) {
        clog_error("%s", err);
        return rc;
    }
    rc = loop_watch(s->loop, &s->metrics_watch, metrics_http_fd(s->metrics), EPOLLIN, on_metrics, s);
    if (rc) {
        clog_error("metrics: epoll: %s", strerror(-rc));
        return rc;
    }
    char host[64] = "?";
    if (s->cfg.metrics_addr.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&s->cfg.metrics_addr)->sin_addr, host, sizeof(host));
    else if (inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&s->cfg.metrics_addr)->sin6_addr, host + 1,
                       sizeof(host) - 2)) {
        host[0] = '[';
        strcat(host, "]");
    }
    if ((rc = pprof_service_start(&s->pprof, s->loop, s->metrics, s->jvms, s->cfg.window_ns, s->started)) != 0) {
        clog_error("metrics: /debug/pprof/pinned: %s", strerror(-rc));
        return rc;
    }
    clog_info("metrics on http://%s:%u/metrics", host, metrics_http_port(s->metrics));
    clog_info("pinned time as pprof on http://%s:%u/debug/pprof/pinned?seconds=N", host, metrics_http_port(s->metrics));
    return 0;
}

static void on_signal(struct loop *l, struct loop_watch *w, uint32_t events)
{
    (void)events;
    struct server *s = w->data;
    struct signalfd_siginfo si;
    ssize_t n = read(s->sig_fd, &si, sizeof(si));
    if (n != (ssize_t)sizeof(si))
        return;
    const char *name = si.ssi_signo == SIGINT ? "SIGINT" : si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGHUP";
    clog_info("%s received: shutting down", name);
    loop_stop(l);
}

/* ---- run -------------------------------------------------------------------- */

/* One line at start: who besides this user may connect, and that the mode is not the gate. */
static void log_allow(const struct access *a, mode_t mode)
{
    char ids[1024] = "";
    size_t n = 0;
    for (size_t i = 0; i < a->nuids && n < sizeof(ids); i++)
        n += (size_t)snprintf(ids + n, sizeof(ids) - n, "%suid %lu", n ? ", " : "", (unsigned long)a->uids[i]);
    for (size_t i = 0; i < a->ngids && n < sizeof(ids); i++)
        n += (size_t)snprintf(ids + n, sizeof(ids) - n, "%sgid %lu", n ? ", " : "", (unsigned long)a->gids[i]);
    clog_info("also serving %s (--allow-uid/--allow-gid): the socket is mode %04o%s; every peer is checked with "
              "SO_PEERCRED (uid, gid, and the supplementary groups in /proc/PID/status), which is the gate",
              ids, (unsigned)mode, mode == 0660 ? " (group of the allowed gid)" : "");
}

static int setup_fds(struct server *s, sigset_t *mask)
{
    int rc;
    s->sig_fd = signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (s->sig_fd < 0) {
        rc = -errno;
        clog_error("signalfd: %s", strerror(-rc));
        return rc;
    }
    s->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (s->tick_fd < 0) {
        rc = -errno;
        clog_error("timerfd: %s", strerror(-rc));
        return rc;
    }
    struct itimerspec its = {
        .it_interval = {.tv_sec = s->cfg.tick_ns / NS_PER_SEC, .tv_nsec = s->cfg.tick_ns % NS_PER_SEC},
        .it_value = {.tv_sec = s->cfg.tick_ns / NS_PER_SEC, .tv_nsec = s->cfg.tick_ns % NS_PER_SEC},
    };
    if (timerfd_settime(s->tick_fd, 0, &its, NULL) != 0) {
        rc = -errno;
        clog_error("timerfd_settime: %s", strerror(-rc));
        return rc;
    }
    s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if ((rc = loop_watch(s->loop, &s->ln_watch, s->ln.fd, EPOLLIN, on_accept, s)) != 0 ||
        (rc = loop_watch(s->loop, &s->sig_watch, s->sig_fd, EPOLLIN, on_signal, s)) != 0 ||
        (rc = loop_watch(s->loop, &s->tick_watch, s->tick_fd, EPOLLIN, on_tick, s)) != 0) {
        clog_error("epoll: %s", strerror(-rc));
        return rc;
    }
    return 0;
}

int server_run(const struct server_config *cfg)
{
    struct server srv = {.cfg = *cfg, .sig_fd = -1, .tick_fd = -1, .reserve_fd = -1};
    struct server *s = &srv;
    s->ln.fd = s->ln.lock_fd = -1;
    s->ln_watch.fd = s->sig_watch.fd = s->tick_watch.fd = s->metrics_watch.fd = -1;
    char err[512], sockdir[4096];
    int rc, status = 1;
    /* other users allowed: they must reach the socket; SO_PEERCRED stays the gate */
    int shared = cfg->allow.nuids || cfg->allow.ngids;
    int one_group = cfg->allow.ngids == 1 && !cfg->allow.nuids;
    mode_t sock_mode = !shared ? 0600 : one_group ? 0660 : 0666;
    sigset_t mask, old_mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, &old_mask);
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
    sigaction(SIGPIPE, &ign, &old_pipe);

    if ((rc = paths_dirname(cfg->socket_path, sockdir, sizeof(sockdir))) != 0 ||
        (rc = paths_make_dir(sockdir, cfg->socket_dir_strict, shared ? 0711 : 0700, err, sizeof(err))) != 0) {
        clog_error("socket directory: %s", rc == -ENAMETOOLONG ? "path too long" : err);
        goto cleanup;
    }
    if ((rc = paths_make_private_dir(cfg->dir, 0, err, sizeof(err))) != 0) {
        clog_error("recording directory: %s", err);
        goto cleanup;
    }
    struct jvms_config jc = {
        .max_carriers = cfg->max_carriers,
        .window_ns = cfg->window_ns,
        .bucket_ns = cfg->window_ns >= 10 * NS_PER_SEC ? NS_PER_SEC : (cfg->window_ns + 9) / 10,
        .linger_ns = cfg->linger_ns,
        .max_jvms = 1024,
        .alert = cfg->alert,
        .budget = &s->budget,
    };
    if ((rc = jvms_new(&s->jvms, &jc)) != 0 || (rc = loop_new(&s->loop, 64)) != 0) {
        clog_error("%s", strerror(-rc));
        goto cleanup;
    }
    /* The kernel view first (its BPF program, the kernel's symbols: up to a few hundred ms): an
     * agent that connects as soon as the socket exists finds its carriers tracked from the start. */
    struct kglue_config kc = {.mode = (enum kglue_mode)cfg->kernel_mode,
                              .min_ns = cfg->kernel_min_ns,
                              .max_carriers = 4096,
                              .proc_root = "/proc",
                              .window_ns = cfg->window_ns};
    if ((rc = kglue_open(&s->kernel, &kc, kernel_write, err, sizeof(err))) != 0) {
        clog_error("kernel view (--kernel=on): %s", rc == -ENOMEM ? "out of memory" : err);
        goto cleanup;
    }
    if (kglue_enabled(s->kernel)) {
        if ((rc = kglue_watch(s->kernel, s->loop)) != 0) {
            clog_error("kernel view: epoll: %s", strerror(-rc));
            goto cleanup;
        }
        clog_info("kernel view on: tracking the carriers agents announce (off-CPU intervals from %" PRIu64 " us)",
                  cfg->kernel_min_ns / 1000);
    } else {
        clog_info("kernel view off: %s; going on without it", kglue_reason(s->kernel));
    }
    if ((rc = listener_open_mode(&s->ln, cfg->socket_path, 128, sock_mode, one_group ? cfg->allow.gids[0] : (gid_t)-1,
                                 err, sizeof(err))) != 0) {
        clog_error("%s", err);
        goto cleanup;
    }
    if ((rc = setup_fds(s, &mask)) != 0)
        goto cleanup;
    s->started = mono_ns();
    budget_init(&s->budget, cfg->memory_budget);
    if (cfg->metrics_addrlen && start_metrics(s) != 0)
        goto cleanup;
    char hold[32], rule[32] = "all";
    if (cfg->alert.k)
        snprintf(rule, sizeof(rule), "%u", cfg->alert.k);
    clog_info(
        "listening on %s (pid %ld); recordings in %s; starvation alert when %s carriers stay pinned or hogged over %s",
        cfg->socket_path, (long)getpid(), cfg->dir, rule,
        units_format_duration(cfg->alert.hold_ns, hold, sizeof(hold)));
    if (shared)
        log_allow(&cfg->allow, sock_mode);
    if (start_zero_touch(s) != 0)
        goto cleanup;
    rc = loop_run(s->loop, free_dead, s);
    if (rc) {
        clog_error("epoll_wait: %s", strerror(-rc));
        goto cleanup;
    }
    status = 0;
cleanup:
    if (s->loop)
        zerotouch_unwatch(s->zt, s->loop);
    zerotouch_free(s->zt); /* its peers first: it closes them */
    s->zt = NULL;
    while (s->clients)
        client_close(s->clients, "the collector is shutting down");
    free_dead(s->loop, s);
    if (s->loop) {
        loop_unwatch(s->loop, &s->ln_watch);
        loop_unwatch(s->loop, &s->sig_watch);
        loop_unwatch(s->loop, &s->tick_watch);
        loop_unwatch(s->loop, &s->metrics_watch);
    }
    metrics_http_stop(s->metrics); /* answers the profile requests still waiting */
    pprof_service_stop(s->pprof);
    if (s->loop)
        kglue_unwatch(s->kernel, s->loop);
    kglue_close(s->kernel);
    listener_close(&s->ln);
    if (s->sig_fd >= 0)
        close(s->sig_fd);
    if (s->tick_fd >= 0)
        close(s->tick_fd);
    if (s->reserve_fd >= 0)
        close(s->reserve_fd);
    jvms_free(s->jvms);
    loop_free(s->loop);
    sigaction(SIGPIPE, &old_pipe, NULL);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    if (status == 0)
        clog_info("stopped");
    return status;
}
