/* Agent options: one "key[=value],key:value,..." string, parsed whole.
 *
 * jcmd JVMTI.agent_load splits "key=value" into separate arguments, so
 * "key:value" is accepted everywhere "key=value" is. */
#ifndef VTPIN_OPTIONS_H
#define VTPIN_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum trace_mode { TRACE_OFF = 0, TRACE_SHORT, TRACE_FULL };
enum occupancy_mode { OCCUPANCY_OFF = 0, OCCUPANCY_EXACT, OCCUPANCY_SAMPLED, OCCUPANCY_NOT_GIVEN /* parsing only */ };

#define OPTIONS_PATH_MAX 512

struct options {
    uint64_t threshold_ns; /* pins shorter than this are counted, not reported */
    uint64_t hog_ns;       /* a virtual thread running this long without unmounting is a hog; 0: off */
    enum trace_mode trace;
    char trace_file[OPTIONS_PATH_MAX];     /* empty: stderr */
    char record_file[OPTIONS_PATH_MAX];    /* empty: no recording */
    char log_file[OPTIONS_PATH_MAX];       /* empty: stderr */
    int collector;                         /* stream to a collector */
    char collector_path[OPTIONS_PATH_MAX]; /* empty: the default socket */
    unsigned collector_buffer;             /* bytes buffered for a slow collector */
    enum occupancy_mode occupancy;
    uint64_t sample_interval_ns;    /* the carrier watchdog: native/VM blocks, parks after attach */
    uint64_t occupancy_interval_ns; /* sampled occupancy (never more often than sample_interval_ns) */
    unsigned max_carriers;
    unsigned ring_entries;      /* per-carrier mount records (exact occupancy) */
    unsigned depth;             /* frames captured per stack */
    unsigned queue_slots;       /* pin events buffered between callbacks and the writer */
    unsigned max_stacks;        /* distinct stacks kept (and sent once each) */
    unsigned max_methods;       /* distinct methods kept */
    uint64_t stats_interval_ns; /* how often counters are written to the recording */
    uint64_t record_mode;       /* the recording's permissions (default 0600); 64 bits keep the struct unpadded */
    uint64_t record_max;        /* past this many bytes the recording rotates; 0: never */
    uint64_t record_keep;       /* rotated files kept: PATH.1 (the newest) .. PATH.N */
    int64_t collector_owner;    /* collector_owner=: a collector this uid runs is trusted too; -1: none */
    int downcalls_marked;       /* downcalls=marked: FFM downcalls are marked, their targets not read */
    int quiet;                  /* no informational log lines */
    int stop;                   /* loaded again with "stop": turn events off and flush */
    int help;
};

void options_defaults(struct options *o);

/* Parses text into o (which should hold the defaults). On error returns
 * -EINVAL and writes a one-line message naming the option into err. */
int options_parse(struct options *o, const char *text, char *err, size_t errlen);

/* Replaces each "%p" in path with pid. Returns 0 or -ENAMETOOLONG. */
int options_expand_pid(char *path, size_t cap, long pid);

/* Parses "10ms", "1.5s", "250us", "0" (bare numbers are milliseconds). */
int options_parse_duration(const char *text, uint64_t *ns);

/* A load after "stop" (again, parsed from text) against the first load's
 * options: carriers=, ring= and exact occupancy were set up with the JVMTI
 * environment and cannot change. Returns the VTPIN_FIXED_* bits
 * (common/agent_codes.h) of those text sets to another value, or 0 and
 * again takes the first load's values for those it does not give. */
unsigned options_fixed_conflicts(const struct options *first, struct options *again, const char *text);

/* The period of sampled occupancy: occupancy_sample=, never shorter than sample=. */
uint64_t options_occupancy_interval_ns(const struct options *o);
/* hog=, at least two watchdog samples; 0: off. */
uint64_t options_hog_ns(const struct options *o);

extern const char options_usage[];

#endif
