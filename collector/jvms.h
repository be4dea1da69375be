/* The JVMs the collector knows: one per (pid, start_unix_ns) of the Hello,
 * whatever the number of connections it made (reconnects carry the same pair
 * with connection 1, 2, ...). The newest connection's Hello describes the
 * JVM; its occupancy model, counters and alert state carry over. A JVM whose
 * last connection ended stays listed as disconnected for linger_ns, then is
 * freed by jvms_expire.
 *
 * Pure: no I/O, no clock reads (times are passed in, CLOCK_MONOTONIC ns,
 * the clock the agents stamp their events with). */
#ifndef VTPIN_COLLECTOR_JVMS_H
#define VTPIN_COLLECTOR_JVMS_H

#include <stddef.h>
#include <stdint.h>

#include "occupancy.h"
#include "pinprofile.h"
#include "pinstats.h"
#include "recstate.h"
#include "session.h"
#include "session_pins.h"
#include "session_stats.h"
#include "wire.h"

struct budget;

struct jvms_config {
    unsigned max_carriers; /* per JVM */
    int64_t window_ns, bucket_ns;
    int64_t linger_ns; /* how long a disconnected JVM stays listed */
    size_t max_jvms;   /* JVMs tracked at once, connected or lingering */
    struct alert_rule alert;
    struct budget *budget; /* each JVM's tables are charged to it (budget.h); NULL: unbounded */
};

#define JVMS_CULPRIT_CAP 512
#define JVMS_IN_PROGRESS 1024 /* pins and hogs in progress kept per JVM: past it the oldest is forgotten, counted */

/* Where a JVM's name comes from. */
enum jvm_pid_source {
    JVM_PID_PEER = 0,  /* the connection's peer (SO_PEERCRED): the JVM's pid on this host */
    JVM_PID_HELLO = 1, /* the Hello's: no usable peer pid (see jvm_ident.why) */
};

/* Who a JVM is on this host. A JVM in a pid namespace of its own (a
 * container) says it is pid 1 in its Hello; its peer pid is what is unique. */
struct jvm_ident {
    int64_t pid;     /* its name: its pid in the collector's pid namespace, else the Hello's */
    int64_t ns_pid;  /* the Hello's pid: the JVM's own, in its innermost pid namespace */
    uint64_t pidns;  /* inode of that namespace (/proc/PID/ns/pid); 0 when unknown */
    int source;      /* enum jvm_pid_source */
    const char *why; /* static text: why the Hello's pid names it; NULL for the peer's */
    uint32_t uid;    /* the uid of the peer that speaks for it (SO_PEERCRED); 0 without credentials */
};

/* The name of the JVM whose Hello gives hello_pid, on a connection whose peer
 * is peer_pid (SO_PEERCRED; 0 when the peer's pid namespace is not visible
 * from the collector's, e.g. a peer in a sibling container) with peer_ns_pid
 * (its pid in its innermost namespace, nspid_process; -1 when unreadable) and
 * pidns (its pid namespace's inode, 0 unknown). The peer's pid when the peer
 * is the process the Hello names (its own pid is the Hello's), else the
 * Hello's with why (a relay or a replayed recording, or no peer pid). Pure. */
void jvm_ident_choose(struct jvm_ident *id, int64_t hello_pid, int64_t peer_pid, int64_t peer_ns_pid, uint64_t pidns);

/* 1 when a connection named b is the JVM a connection named a is (a reconnect):
 * the same pid, said the same way (source) by a peer of the same uid. */
int jvm_ident_same(const struct jvm_ident *a, const struct jvm_ident *b);

/* "12345 (pid 1 in its namespace)", "12345", or "1 (pid from its Hello: ...)"
 * into out[cap]; returns out. */
const char *jvm_ident_text(const struct jvm_ident *id, char *out, size_t cap);

#define JVM_DEADLOCK_KIND_MAX 48
#define JVM_DEADLOCK_TEXT_MAX 1024

struct jvm {
    struct jvm *next;
    int64_t pid, start_unix_ns;            /* its identity: pid is ident.pid */
    struct jvm_ident ident;                /* of its newest connection */
    struct session_hello hello;            /* the newest connection's, strings owned */
    char *recording;                       /* the newest connection's recording, NULL if none */
    struct rec_state rec;                  /* how writing it goes (jvm_note_recording) */
    uint64_t rec_stops, rec_frames_lost;   /* recording stops and frames they lost, all connections */
    unsigned live;                         /* connections open now */
    unsigned connections;                  /* connections seen in all */
    int64_t connected_at, disconnected_at; /* of the newest connection; 0 while connected */
    struct occupancy *occ;
    struct pinstats *pinstats; /* pinned time by reason and site, for the metrics */
    /* its pins and hogs in progress, over all connections (JVMS_IN_PROGRESS at most): a start re-sent
     * after a reconnect is counted once, and an end finds what its start said */
    struct session_pins *pins;
    uint64_t pins_total;        /* distinct pins reported (PinStart) over all connections */
    uint64_t hogs_total;        /* distinct carrier hogs reported (HogStart) over all connections */
    unsigned max_carriers;      /* the occupancy's cap */
    uint64_t malformed;         /* Transitions / CarrierSample with mismatched arrays */
    uint64_t defs_dropped;      /* definitions dropped by full session tables (all connections) */
    uint64_t budget_dropped;    /* definitions and frames the collector's memory budget dropped */
    struct session_stats stats; /* the agent's counters, its latest Stats (or Goodbye's) */
    struct alert_state alert;   /* the occupancy's evaluation at the last tick */
    int alert_active;           /* raised (logged, recorded) and not cleared yet */
    int64_t alert_since;        /* when it was raised */
    void *owner;                /* the newest connection (opaque to this module), NULL when none */
    /* pinned time by stack over the window, for /debug/pprof/pinned */
    struct pinprofile *pinprofile;
    struct budget *budget;    /* what its tables hold is charged to it */
    size_t charged;           /* bytes charged now */
    size_t string_bytes;      /* the Hello's and the recording's strings (count_strings) */
    uint64_t profile_dropped; /* pins and hogs left out of pinprofile: the budget was used up */
    struct jvm_deadlock {     /* the last deadlock its agent found live (jvm_note_deadlock) */
        uint64_t count;       /* found in all, over every connection */
        int64_t at;           /* when the last was said (collector clock) */
        char kind[JVM_DEADLOCK_KIND_MAX];
        char text[JVM_DEADLOCK_TEXT_MAX];
    } deadlock;
};

struct jvms;

int jvms_new(struct jvms **out, const struct jvms_config *cfg);
void jvms_free(struct jvms *r);
const struct jvms_config *jvms_config(const struct jvms *r);

/* A connection said Hello (session): the JVM it belongs to, named id (its
 * identity is (id->pid, Hello.start_unix_ns) said by a peer of id->uid with
 * id->source: jvm_ident_same), created if new
 * (and -ENOSPC when max_jvms are tracked), with one more live connection.
 * A peer that is not the process its Hello names (JVM_PID_HELLO) never joins
 * an entry its process made (JVM_PID_PEER), nor one of another uid: it gets
 * an entry of its own, listed under the same pid. A new JVM's tables are
 * charged to the budget; disconnected JVMs are forgotten (the longest gone
 * first) to make room, and -ENOBUFS when it is still used up (not tracked).
 * The session's Hello becomes the JVM's when it is the newest connection.
 * A newer connection of a known JVM (a reconnect) ends the pins in progress
 * at the time the JVM disconnected (or now): the agent re-sends the pins
 * still in progress right after its Hello, so those that ended while it was
 * away do not stay pinned forever. Hogs in progress end the same way. */
int jvms_attach_as(struct jvms *r, const struct session *s, const struct jvm_ident *id, const char *recording,
                   void *owner, int64_t now, struct jvm **out);
/* jvms_attach_as with the Hello's pid as the name (no peer credentials: tests, replays). */
int jvms_attach(struct jvms *r, const struct session *s, const char *recording, void *owner, int64_t now,
                struct jvm **out);
/* The recording of j's newest connection (copied; NULL: none), its state reset. 0 or -ENOMEM. */
int jvm_set_recording(struct jvm *j, const char *path);
/* The state st of one of j's connections' recordings, whose last state seen
 * is *seen (zero at first; updated): its new stops and lost frames add to j's
 * totals; when newest (the owner's recording), st is j's recording state. */
void jvm_note_recording(struct jvm *j, const struct rec_state *st, struct rec_state *seen, int newest);

/* An agent's notice: a deadlock found live (code "deadlock.KIND", docs/deadlocks.md) is counted
 * and kept as j's last (kind and text cut to fit), at now; other codes are not. 1 when it was one. */
int jvm_note_deadlock(struct jvm *j, const char *code, const char *text, int64_t now);
/* A connection of j ended; owner is the one given to jvms_attach. */
void jvms_detach(struct jvms *r, struct jvm *j, void *owner, int64_t now);

/* Applies an agent event of session s (not a definition, Hello or Query) to j.
 * 0, or -EPROTO for an event an agent must not send (Hello, Query, QueryReply, Alert). */
int jvm_apply(struct jvm *j, const struct session *s, const WireEvent *ev, int64_t now);

/* Evaluates the alert rule at now for a connected JVM (occupancy_alert_check):
 * raised when k of the P carriers (k = 0: all) have each been pinned (or
 * hogged) for longer than rule->hold_ns; cleared once fewer than k (or P)
 * carriers are pinned or hogged at all (hysteresis: back-to-back pins keep it
 * raised). The text names a hogged carrier's culprit as "hog at ...". When the
 * alert was raised or cleared, returns 1 with *line (the log line, malloc'ed)
 * and *frame, *frame_len (an Alert event packed as a frame, malloc'ed); else
 * 0; -ENOMEM. */
int jvm_alert_check(struct jvm *j, const struct alert_rule *rule, int64_t now, char **line, uint8_t **frame,
                    size_t *frame_len);
/* A raised alert, said again because its agent found the starvation a deadlock meanwhile
 * (jvm_note_deadlock): same outputs, the alert still active; 0 when no alert is raised. A raised
 * alert names the deadlock from the start when it was found first. */
int jvm_alert_deadlock(struct jvm *j, int64_t now, char **line, uint8_t **frame, size_t *frame_len);
/* Clears an active alert because its JVM disconnected: same outputs. */
int jvm_alert_reset(struct jvm *j, int64_t now, const char *why, char **line, uint8_t **frame, size_t *frame_len);

/* Frees the JVMs disconnected for longer than linger_ns. Returns how many. */
size_t jvms_expire(struct jvms *r, int64_t now);

/* In order of first connection. */
struct jvm *jvms_first(const struct jvms *r);
size_t jvms_count(const struct jvms *r);

/* The time views and alerts of j refer to: now while connected, else when it disconnected. */
int64_t jvm_clock(const struct jvm *j, int64_t now);

#endif
