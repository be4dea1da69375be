/* Answers to `Query` frames: the STATUS and TOP JSON documents of
 * docs/collector.md, and the QueryReply frame carrying them. */
#ifndef VTPIN_COLLECTOR_QUERY_H
#define VTPIN_COLLECTOR_QUERY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jvms.h"

struct kglue;
struct access;

#define QUERY_MAX_REPLY (64u << 20)

/* About the collector itself, for STATUS. */
struct query_info {
    pid_t pid;
    const char *version;
    const char *socket;
    const char *dir;
    int64_t started_ns;                             /* CLOCK_MONOTONIC */
    unsigned clients;                               /* connections open now, besides the one asking */
    size_t memory_budget, memory_used, memory_peak; /* bytes (budget.h) */
    uint64_t memory_dropped;                        /* definitions and frames the budget refused */
    struct kglue *kernel;                           /* the kernel view; NULL: none */
    struct zerotouch *zero_touch;                   /* JVMs with no agent; NULL: --jvms=agents */
    const struct access *allow;                     /* --allow-uid/--allow-gid; NULL: none */
    uint64_t peers_refused;                         /* connections the SO_PEERCRED check closed */
    int mine_only;                                  /* list only the JVMs whose peer had asker_uid */
    uid_t asker_uid;                                /* the asking peer's uid (SO_PEERCRED) */
};

/* The JSON for kind (vtpin.v1.Query.Kind), JVMs filtered by pid (0: all) and
 * by the asker's uid (info->mine_only: access_sees_all said no), at
 * now (CLOCK_MONOTONIC ns). 0 with *json (malloc'ed, NUL-terminated) and
 * *len, or -ENOMEM / -EINVAL (unknown kind). */
int query_json(struct jvms *r, const struct query_info *info, int kind, int64_t pid, int64_t now, char **json,
               size_t *len);

/* The QueryReply frame answering q: 0 with *frame (malloc'ed) and *len, or -errno. */
int query_reply(struct jvms *r, const struct query_info *info, const Vtpin__V1__Query *q, int64_t now, uint8_t **frame,
                size_t *len);

const char *query_state_name(int state); /* enum carrier_state: "idle", "running", "pinned", "native_block", "hog" */

#endif
