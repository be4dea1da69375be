#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/agent_codes.h"
#include "common/socket_path.h"
#include "common/units.h"

const char options_usage[] =
    "vtpin agent options (comma-separated; key=value or key:value):\n"
    "  threshold=DUR   report pins at least this long; shorter ones are counted (default 1ms;\n"
    "                  units ns, us, ms, s, m; 0 reports every pin)\n"
    "  trace[=short|full]  print each pin as -Djdk.tracePinnedThreads did, with reason,\n"
    "                  carrier and duration (default full)\n"
    "  tracefile=PATH  write the trace to PATH instead of stderr\n"
    "  record=PATH     write every event to PATH in vtpin's wire format (read it with\n"
    "                  'vtpin report PATH')\n"
    "  record_mode=MODE  the recording's permissions, octal (default 0600: only this user reads it;\n"
    "                  0640 lets the file's group read it)\n"
    "  record_max=SIZE past SIZE bytes (k, m, g) the recording goes on in a new PATH and the old one\n"
    "                  becomes PATH.1 (PATH.1 PATH.2, ...), each file whole (default 256m; 0: never)\n"
    "  record_keep=N   rotated files kept, the oldest removed (default 3)\n"
    "  log=PATH        agent messages to PATH instead of stderr\n"
    "  collector[=PATH]  stream events to 'vtpin collector' on this Unix socket (default\n"
    "                  $XDG_RUNTIME_DIR/vtpin/collector.sock or /tmp/vtpin-UID/collector.sock)\n"
    "  collector_owner=USER  trust a collector that USER (a name or uid) runs, as well as this\n"
    "                  user's and root's (a shared collector started with --allow-uid for this user)\n"
    "  buffer=N        bytes kept for a slow collector before events are dropped (default 4194304)\n"
    "  occupancy=sampled|exact|off  how carrier occupancy is measured (default sampled)\n"
    "  sample=DUR      sampling period of the carrier watchdog: native and VM blocks, parks\n"
    "                  after attach (default 10ms)\n"
    "  occupancy_sample=DUR  period of sampled occupancy (default 40ms; at least sample=)\n"
    "  hog=DUR         report a virtual thread that runs this long on its carrier without\n"
    "                  unmounting, a carrier hog (default 200ms, at least 2 samples; 0: off)\n"
    "  carriers=N      carriers tracked (default 256); ring=N mount records per carrier (default 65536)\n"
    "  depth=N         frames kept per stack (default 128, 1..2048)\n"
    "  queue=N         pin events buffered before dropping (default 1024)\n"
    "  stacks=N        distinct stacks kept (default 65536); methods=N likewise (default 65536)\n"
    "  stats=DUR       how often counters go to the recording (default 1s)\n"
    "  downcalls=named|marked  FFM downcalls: name each one's C function (startup only; holds\n"
    "                  can_access_local_variables), or only mark the frame (default named)\n"
    "  quiet           no informational messages\n"
    "  stop            (attach) turn an attached agent's events off and flush its outputs\n"
    "  %p in a path is replaced by the JVM's pid (record=/tmp/app-%p.vtp)\n"
    "  help            print this text\n";

void options_defaults(struct options *o)
{
    memset(o, 0, sizeof(*o));
    o->threshold_ns = 1000000;
    /* 20 watchdog samples in a row that find one thread running (sampled occupancy sees no mounts),
     * and a carrier held 200 ms is a stall every service notices (docs/agent.md, "Carrier hogs") */
    o->hog_ns = 200000000ull;
    o->trace = TRACE_OFF;
    o->depth = 128;
    o->collector_owner = -1;
    o->queue_slots = 1024;
    o->max_stacks = 65536;
    o->max_methods = 65536;
    o->stats_interval_ns = 1000000000ull;
    o->record_mode = 0600;
    o->record_max = 256ull << 20;
    o->record_keep = 3;
    o->collector_buffer = 4u << 20;
    o->occupancy = OCCUPANCY_SAMPLED;
    o->sample_interval_ns = 10000000ull;
    /* Each occupancy sample asks JVMTI which virtual thread every carrier carries, which
     * stops all mounts while it runs: every 10 ms that cost ~0.1 of no agent on JDK 25
     * mount churn, every 40 ms nothing measurable (docs/performance.md). */
    o->occupancy_interval_ns = 40000000ull;
    o->max_carriers = 256;
    o->ring_entries = 65536;
}

uint64_t options_hog_ns(const struct options *o)
{
    uint64_t least = 2 * o->sample_interval_ns; /* a hog is seen running by two samples at least */
    return o->hog_ns == 0 ? 0 : o->hog_ns > least ? o->hog_ns : least;
}

uint64_t options_occupancy_interval_ns(const struct options *o)
{
    return o->occupancy_interval_ns > o->sample_interval_ns ? o->occupancy_interval_ns : o->sample_interval_ns;
}

int options_parse_duration(const char *text, uint64_t *ns)
{
    /* common/units.c: the one duration syntax; a bare number is ms here only */
    int64_t v;
    if (units_parse_duration_flags(text, UNITS_BARE_MS, &v))
        return -EINVAL;
    *ns = (uint64_t)v;
    return 0;
}

static int parse_uint(const char *text, unsigned lo, unsigned hi, unsigned *out)
{
    if (!text || !*text || !isdigit((unsigned char)*text))
        return -EINVAL;
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -EINVAL;
    *out = (unsigned)v;
    return 0;
}

/* A user by name (the passwd database) or by uid. */
static int parse_user(const char *text, int64_t *uid)
{
    if (!text || !*text)
        return -EINVAL;
    if (isdigit((unsigned char)*text)) {
        unsigned n = 0;
        if (parse_uint(text, 0, 0xfffffffeu, &n))
            return -EINVAL;
        *uid = n;
        return 0;
    }
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwnam_r(text, &pw, buf, sizeof(buf), &found) != 0 || !found)
        return -EINVAL;
    *uid = found->pw_uid;
    return 0;
}

/* An octal file mode the owner can read and write, with no execute or special bits
 * ("0640"): the agent writes the recording and vtpin reads it. */
static int parse_file_mode(const char *text, uint64_t *out)
{
    if (!text || !*text || strspn(text, "01234567") != strlen(text) || strlen(text) > 4)
        return -EINVAL;
    unsigned long v = strtoul(text, NULL, 8);
    if ((v & 0600) != 0600 || (v & ~0666ul))
        return -EINVAL;
    *out = v;
    return 0;
}

static int copy_path(char *dst, const char *value)
{
    if (!value || !*value || strlen(value) >= OPTIONS_PATH_MAX)
        return -EINVAL;
    strcpy(dst, value);
    return 0;
}

/* ---- one option: a table of every key and how its value is read ---- */

/* How a value is read into the field at spec->field of struct options. */
enum option_kind {
    OPT_DURATION, /* uint64_t ns, at least min and at most max (0: no bound) */
    OPT_COUNT,    /* unsigned, from min to max */
    OPT_PATH,     /* char[OPTIONS_PATH_MAX] */
    OPT_WORD,     /* an int: the value of the word given among words[] */
    OPT_FLAG,     /* an int set to 1; takes no value */
    OPT_OWN,      /* the spec's own reader */
};

struct option_word {
    const char *word;
    int value;
};

struct option_spec {
    const char *key;
    enum option_kind kind;
    size_t field;
    uint64_t min, max;
    const struct option_word *words; /* OPT_WORD, ended by a NULL word */
    /* OPT_OWN: 0 or -EINVAL; a reader that fills err itself returns -EBADMSG */
    int (*own)(struct options *o, const char *value, char *err, size_t errlen);
    const char *expect; /* what a bad value should have been */
};

static int read_trace(struct options *o, const char *value, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    if (!value || strcmp(value, "full") == 0)
        o->trace = TRACE_FULL;
    else if (strcmp(value, "short") == 0)
        o->trace = TRACE_SHORT;
    else
        return -EINVAL;
    return 0;
}

static int read_tracefile(struct options *o, const char *value, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    int rc = copy_path(o->trace_file, value);
    if (!rc && o->trace == TRACE_OFF)
        o->trace = TRACE_FULL; /* a trace file asks for the trace */
    return rc;
}

static int read_record_mode(struct options *o, const char *value, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    return parse_file_mode(value, &o->record_mode);
}

static int read_record_max(struct options *o, const char *value, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    int rc = value ? units_parse_size(value, &o->record_max) : -EINVAL;
    return !rc && o->record_max != 0 && o->record_max < (64u << 10) ? -EINVAL : rc;
}

static int read_record_keep(struct options *o, const char *value, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    return value ? units_parse_count(value, 1, 1000, &o->record_keep) : -EINVAL;
}

static int read_collector(struct options *o, const char *value, char *err, size_t errlen)
{
    o->collector = 1;
    if (!value)
        return 0; /* the default socket */
    int rc = copy_path(o->collector_path, value);
    /* A longer path would be cut by connect() to a different socket. */
    if (!rc && socket_path_fits(value) != 0) {
        snprintf(err, errlen,
                 "collector socket path is %zu bytes, over the %zu a Unix socket path can hold: '%s' "
                 "(use a shorter path, e.g. under /tmp or $XDG_RUNTIME_DIR)",
                 strlen(value), socket_path_max(), value);
        return -EBADMSG;
    }
    return rc;
}

static int read_collector_owner(struct options *o, const char *value, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    return parse_user(value, &o->collector_owner);
}

static const struct option_word occupancy_words[] = {
    {"exact", OCCUPANCY_EXACT}, {"sampled", OCCUPANCY_SAMPLED}, {"off", OCCUPANCY_OFF}, {NULL, 0}};
static const struct option_word downcalls_words[] = {{"named", 0}, {"marked", 1}, {NULL, 0}};

#define FIELD(name) offsetof(struct options, name)
/* OPT_WORD and OPT_FLAG fields are written as ints */
_Static_assert(sizeof(enum occupancy_mode) == sizeof(int), "occupancy is read as an int");
#define OPT_MS 1000000ull

/* Every option, in the order the unknown-option error lists them. */
static const struct option_spec option_specs[] = {
    {"threshold", OPT_DURATION, FIELD(threshold_ns), 0, 0, NULL, NULL, "a duration such as 1ms, 500us or 0"},
    {"hog", OPT_DURATION, FIELD(hog_ns), 0, 0, NULL, NULL, "a duration such as 200ms, 1s or 0 (off)"},
    {"trace", OPT_OWN, 0, 0, 0, NULL, read_trace, "short or full"},
    {"tracefile", OPT_OWN, 0, 0, 0, NULL, read_tracefile, "a file path"},
    {"record", OPT_PATH, FIELD(record_file), 0, 0, NULL, NULL, "a file path"},
    {"record_mode", OPT_OWN, 0, 0, 0, NULL, read_record_mode,
     "an octal mode with read and write for the owner and no execute bits, such as 0600 or 0640"},
    {"record_max", OPT_OWN, 0, 0, 0, NULL, read_record_max, "a size of at least 64k (k, m, g), or 0 for never"},
    {"record_keep", OPT_OWN, 0, 0, 0, NULL, read_record_keep, "a number from 1 to 1000"},
    {"log", OPT_PATH, FIELD(log_file), 0, 0, NULL, NULL, "a file path"},
    {"collector", OPT_OWN, 0, 0, 0, NULL, read_collector, "a socket path"},
    {"collector_owner", OPT_OWN, 0, 0, 0, NULL, read_collector_owner, "a user name or a uid"},
    {"buffer", OPT_COUNT, FIELD(collector_buffer), 65536, 1u << 30, NULL, NULL,
     "a byte count from 65536 to 1073741824"},
    {"occupancy", OPT_WORD, FIELD(occupancy), 0, 0, occupancy_words, NULL, "exact, sampled or off"},
    {"sample", OPT_DURATION, FIELD(sample_interval_ns), 1 * OPT_MS, 10000 * OPT_MS, NULL, NULL,
     "a duration from 1ms to 10s"},
    {"occupancy_sample", OPT_DURATION, FIELD(occupancy_interval_ns), 1 * OPT_MS, 10000 * OPT_MS, NULL, NULL,
     "a duration from 1ms to 10s"},
    {"carriers", OPT_COUNT, FIELD(max_carriers), 1, 65536, NULL, NULL, "a number from 1 to 65536"},
    {"ring", OPT_COUNT, FIELD(ring_entries), 64, 1u << 24, NULL, NULL, "a number from 64 to 16777216"},
    {"depth", OPT_COUNT, FIELD(depth), 1, 2048, NULL, NULL, "a number from 1 to 2048"},
    {"queue", OPT_COUNT, FIELD(queue_slots), 16, 1u << 20, NULL, NULL, "a number from 16 to 1048576"},
    {"stacks", OPT_COUNT, FIELD(max_stacks), 16, 1u << 24, NULL, NULL, "a number from 16 to 16777216"},
    {"methods", OPT_COUNT, FIELD(max_methods), 16, 1u << 24, NULL, NULL, "a number from 16 to 16777216"},
    {"stats", OPT_DURATION, FIELD(stats_interval_ns), 1 * OPT_MS, 0, NULL, NULL, "a duration of at least 1ms"},
    {"downcalls", OPT_WORD, FIELD(downcalls_marked), 0, 0, downcalls_words, NULL, "named or marked"},
    {"quiet", OPT_FLAG, FIELD(quiet), 0, 0, NULL, NULL, NULL},
    {"stop", OPT_FLAG, FIELD(stop), 0, 0, NULL, NULL, NULL},
    {"help", OPT_FLAG, FIELD(help), 0, 0, NULL, NULL, NULL},
};

#define N_SPECS (sizeof(option_specs) / sizeof(option_specs[0]))

static int read_word(const struct option_word *words, const char *value, int *out)
{
    for (const struct option_word *w = words; value && w->word; w++)
        if (strcmp(value, w->word) == 0) {
            *out = w->value;
            return 0;
        }
    return -EINVAL;
}

/* Reads value into o as spec says: 0, -EINVAL (a bad value) or -EBADMSG (err already says why). */
static int read_value(struct options *o, const struct option_spec *spec, const char *value, char *err, size_t errlen)
{
    char *field = (char *)o + spec->field;
    switch (spec->kind) {
    case OPT_DURATION: {
        uint64_t ns;
        if (options_parse_duration(value, &ns) || ns < spec->min || (spec->max && ns > spec->max))
            return -EINVAL;
        memcpy(field, &ns, sizeof(ns));
        return 0;
    }
    case OPT_COUNT: {
        unsigned n;
        if (parse_uint(value, (unsigned)spec->min, (unsigned)spec->max, &n))
            return -EINVAL;
        memcpy(field, &n, sizeof(n));
        return 0;
    }
    case OPT_PATH:
        return copy_path(field, value);
    case OPT_WORD: {
        int v;
        if (read_word(spec->words, value, &v))
            return -EINVAL;
        memcpy(field, &v, sizeof(v));
        return 0;
    }
    case OPT_FLAG: {
        if (value) {
            snprintf(err, errlen, "option '%s' takes no value (got '%s')", spec->key, value);
            return -EBADMSG;
        }
        int one = 1;
        memcpy(field, &one, sizeof(one));
        return 0;
    }
    case OPT_OWN:
        return spec->own(o, value, err, errlen);
    }
    return -EINVAL;
}

/* "threshold, hog, ..., help": every key, for the unknown-option error. */
static void list_keys(char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < N_SPECS && at < cap; i++) {
        int n = snprintf(out + at, cap - at, "%s%s", i ? ", " : "", option_specs[i].key);
        if (n < 0)
            break;
        at += (size_t)n;
    }
}

/* One option. Returns 0 or -EINVAL with err filled. */
static int parse_one(struct options *o, const char *key, const char *value, char *err, size_t errlen)
{
    const struct option_spec *spec = NULL;
    for (size_t i = 0; i < N_SPECS && !spec; i++)
        if (strcmp(key, option_specs[i].key) == 0)
            spec = &option_specs[i];
    if (!spec) {
        char keys[512];
        list_keys(keys, sizeof(keys));
        snprintf(err, errlen, "unknown option '%s' (valid: %s)", key, keys);
        return -EINVAL;
    }
    int rc = read_value(o, spec, value, err, errlen);
    if (rc == -EBADMSG)
        return -EINVAL;
    if (rc) {
        snprintf(err, errlen, "bad value for option '%s': '%s' (expected %s)", key, value ? value : "",
                 spec->expect ? spec->expect : "a value");
        return -EINVAL;
    }
    return 0;
}

int options_parse(struct options *o, const char *text, char *err, size_t errlen)
{
    if (errlen)
        err[0] = '\0';
    if (!text || !*text)
        return 0;
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    if (!copy) {
        snprintf(err, errlen, "out of memory parsing options");
        return -ENOMEM;
    }
    memcpy(copy, text, len + 1);
    int rc = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (!*item)
            continue;
        char *sep = item + strcspn(item, "=:");
        char *value = NULL;
        if (*sep) {
            *sep = '\0';
            value = sep + 1;
        }
        if (!*item) {
            snprintf(err, errlen, "option with an empty name near '%s'", value ? value : "");
            rc = -EINVAL;
            break;
        }
        rc = parse_one(o, item, value, err, errlen);
        if (rc)
            break;
    }
    free(copy);
    return rc;
}

int options_expand_pid(char *path, size_t cap, long pid)
{
    char out[OPTIONS_PATH_MAX];
    char digits[24];
    snprintf(digits, sizeof(digits), "%ld", pid);
    size_t o = 0;
    for (const char *p = path; *p; p++) {
        const char *add = NULL;
        char one[2] = {*p, '\0'};
        if (p[0] == '%' && p[1] == 'p') {
            add = digits;
            p++;
        } else {
            add = one;
        }
        size_t n = strlen(add);
        if (o + n >= sizeof(out) || o + n >= cap)
            return -ENAMETOOLONG;
        memcpy(out + o, add, n);
        o += n;
    }
    out[o] = '\0';
    memcpy(path, out, o + 1);
    return 0;
}

unsigned options_fixed_conflicts(const struct options *first, struct options *again, const char *text)
{
    /* which of them the text gives: parse it again over values it cannot produce */
    struct options given;
    char err[8];
    options_defaults(&given);
    given.max_carriers = 0;
    given.ring_entries = 0;
    given.occupancy = OCCUPANCY_NOT_GIVEN;
    if (options_parse(&given, text, err, sizeof(err)))
        return 0; /* the caller parsed it already: cannot happen */
    unsigned bits = 0;
    if (given.max_carriers && given.max_carriers != first->max_carriers)
        bits |= VTPIN_FIXED_CARRIERS;
    if (given.ring_entries && given.ring_entries != first->ring_entries)
        bits |= VTPIN_FIXED_RING;
    if (given.occupancy != OCCUPANCY_NOT_GIVEN && given.occupancy != first->occupancy &&
        (given.occupancy == OCCUPANCY_EXACT || first->occupancy == OCCUPANCY_EXACT))
        bits |= VTPIN_FIXED_OCCUPANCY;
    if (bits)
        return bits;
    again->max_carriers = first->max_carriers;
    again->ring_entries = first->ring_entries;
    if (given.occupancy == OCCUPANCY_NOT_GIVEN && first->occupancy == OCCUPANCY_EXACT)
        again->occupancy = OCCUPANCY_EXACT; /* set up at the first load: it goes on */
    return 0;
}
