/* The agent's counters, as its latest Stats (or its Goodbye's Stats) said them: one model of
 * them for every reader (the collector's list of JVMs, the report's session), taken and rendered
 * by the schema itself.
 *
 * The model keeps the message's own scalar fields (msg.has_X, msg.X by the schema's names) and
 * its JVMTI calls, bounded. session_stats_json writes every optional integer field of the
 * message under its field name (null when the agent did not say it), so a counter added to
 * message Stats is kept, rendered and read by name with no change here: the agent sets it,
 * the schema declares it, and a human format that shows it gains one line. Pure. */
#ifndef VTPIN_PROTO_SESSION_STATS_H
#define VTPIN_PROTO_SESSION_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "vtpin.pb-c.h"

#define SESSION_STATS_JVMTI_MAX 16

struct json;

struct session_stats {
    int has;              /* a Stats was taken */
    Vtpin__V1__Stats msg; /* its scalar fields; repeated, string, bytes and message fields are left out (zero) */
    size_t n_jvmti_calls;
    struct {
        char function[48];
        uint64_t calls;
    } jvmti_calls[SESSION_STATS_JVMTI_MAX]; /* by function, as sent (the first SESSION_STATS_JVMTI_MAX) */
};

/* Takes d as the latest counters (d stays the caller's). */
void session_stats_take(struct session_stats *st, const Vtpin__V1__Stats *d);

/* Counter `name` (a field of message Stats): 1 and *out when the agent said it, else 0 (*out 0),
 * also for a name the schema does not have. */
int session_stats_get(const struct session_stats *st, const char *name, uint64_t *out);

/* The JVMTI calls of every function, summed. */
uint64_t session_stats_jvmti_total(const struct session_stats *st);

/* Into the JSON object being written: "NAME": N or null for every optional integer field of
 * message Stats, in the schema's order, then "jvmti_calls": {"Function": N, ...} or null. The
 * required time_ns is the caller's to write (each reader puts time its own way). */
void session_stats_json(struct json *j, const struct session_stats *st);

#endif
