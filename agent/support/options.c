#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pwd.h>
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

/* One option. Returns 0 or -EINVAL with err filled. */
static int parse_one(struct options *o, const char *key, const char *value, char *err, size_t errlen)
{
    int rc = 0;
    const char *expect = NULL;
    if (strcmp(key, "threshold") == 0) {
        rc = options_parse_duration(value, &o->threshold_ns);
        expect = "a duration such as 1ms, 500us or 0";
    } else if (strcmp(key, "hog") == 0) {
        rc = options_parse_duration(value, &o->hog_ns);
        expect = "a duration such as 200ms, 1s or 0 (off)";
    } else if (strcmp(key, "trace") == 0) {
        if (!value || strcmp(value, "full") == 0)
            o->trace = TRACE_FULL;
        else if (strcmp(value, "short") == 0)
            o->trace = TRACE_SHORT;
        else
            rc = -EINVAL;
        expect = "short or full";
    } else if (strcmp(key, "tracefile") == 0) {
        rc = copy_path(o->trace_file, value);
        if (!rc && o->trace == TRACE_OFF)
            o->trace = TRACE_FULL;
        expect = "a file path";
    } else if (strcmp(key, "record") == 0) {
        rc = copy_path(o->record_file, value);
        expect = "a file path";
    } else if (strcmp(key, "record_mode") == 0) {
        rc = parse_file_mode(value, &o->record_mode);
        expect = "an octal mode with read and write for the owner and no execute bits, such as 0600 or 0640";
    } else if (strcmp(key, "record_max") == 0) {
        rc = value ? units_parse_size(value, &o->record_max) : -EINVAL;
        if (!rc && o->record_max != 0 && o->record_max < (64u << 10))
            rc = -EINVAL;
        expect = "a size of at least 64k (k, m, g), or 0 for never";
    } else if (strcmp(key, "record_keep") == 0) {
        rc = value ? units_parse_count(value, 1, 1000, &o->record_keep) : -EINVAL;
        expect = "a number from 1 to 1000";
    } else if (strcmp(key, "log") == 0) {
        rc = copy_path(o->log_file, value);
        expect = "a file path";
    } else if (strcmp(key, "depth") == 0) {
        rc = parse_uint(value, 1, 2048, &o->depth);
        expect = "a number from 1 to 2048";
    } else if (strcmp(key, "queue") == 0) {
        rc = parse_uint(value, 16, 1u << 20, &o->queue_slots);
        expect = "a number from 16 to 1048576";
    } else if (strcmp(key, "stacks") == 0) {
        rc = parse_uint(value, 16, 1u << 24, &o->max_stacks);
        expect = "a number from 16 to 16777216";
    } else if (strcmp(key, "methods") == 0) {
        rc = parse_uint(value, 16, 1u << 24, &o->max_methods);
        expect = "a number from 16 to 16777216";
    } else if (strcmp(key, "stats") == 0) {
        rc = options_parse_duration(value, &o->stats_interval_ns);
        if (!rc && o->stats_interval_ns < 1000000)
            rc = -EINVAL;
        expect = "a duration of at least 1ms";
    } else if (strcmp(key, "collector") == 0) {
        o->collector = 1;
        rc = value ? copy_path(o->collector_path, value) : 0;
        expect = "a socket path";
        /* A longer path would be cut by connect() to a different socket. */
        if (!rc && value && socket_path_fits(value) != 0) {
            snprintf(err, errlen,
                     "collector socket path is %zu bytes, over the %zu a Unix socket path can hold: '%s' "
                     "(use a shorter path, e.g. under /tmp or $XDG_RUNTIME_DIR)",
                     strlen(value), socket_path_max(), value);
            return -EINVAL;
        }
    } else if (strcmp(key, "collector_owner") == 0) {
        rc = parse_user(value, &o->collector_owner);
        expect = "a user name or a uid";
    } else if (strcmp(key, "buffer") == 0) {
        rc = parse_uint(value, 65536, 1u << 30, &o->collector_buffer);
        expect = "a byte count from 65536 to 1073741824";
    } else if (strcmp(key, "occupancy") == 0) {
        if (value && strcmp(value, "exact") == 0)
            o->occupancy = OCCUPANCY_EXACT;
        else if (value && strcmp(value, "sampled") == 0)
            o->occupancy = OCCUPANCY_SAMPLED;
        else if (value && strcmp(value, "off") == 0)
            o->occupancy = OCCUPANCY_OFF;
        else
            rc = -EINVAL;
        expect = "exact, sampled or off";
    } else if (strcmp(key, "sample") == 0) {
        rc = options_parse_duration(value, &o->sample_interval_ns);
        if (!rc && (o->sample_interval_ns < 1000000 || o->sample_interval_ns > 10000000000ull))
            rc = -EINVAL;
        expect = "a duration from 1ms to 10s";
    } else if (strcmp(key, "occupancy_sample") == 0) {
        rc = options_parse_duration(value, &o->occupancy_interval_ns);
        if (!rc && (o->occupancy_interval_ns < 1000000 || o->occupancy_interval_ns > 10000000000ull))
            rc = -EINVAL;
        expect = "a duration from 1ms to 10s";
    } else if (strcmp(key, "carriers") == 0) {
        rc = parse_uint(value, 1, 65536, &o->max_carriers);
        expect = "a number from 1 to 65536";
    } else if (strcmp(key, "ring") == 0) {
        rc = parse_uint(value, 64, 1u << 24, &o->ring_entries);
        expect = "a number from 64 to 16777216";
    } else if (strcmp(key, "downcalls") == 0) {
        if (value && strcmp(value, "named") == 0)
            o->downcalls_marked = 0;
        else if (value && strcmp(value, "marked") == 0)
            o->downcalls_marked = 1;
        else
            rc = -EINVAL;
        expect = "named or marked";
    } else if (strcmp(key, "quiet") == 0 || strcmp(key, "help") == 0 || strcmp(key, "stop") == 0) {
        if (value) {
            snprintf(err, errlen, "option '%s' takes no value (got '%s')", key, value);
            return -EINVAL;
        }
        if (key[0] == 'q')
            o->quiet = 1;
        else if (key[0] == 's')
            o->stop = 1;
        else
            o->help = 1;
    } else {
        snprintf(err, errlen,
                 "unknown option '%s' (valid: threshold, hog, trace, tracefile, record, record_mode, record_max, "
                 "record_keep, log, collector, collector_owner, "
                 "buffer, "
                 "occupancy, sample, occupancy_sample, carriers, ring, depth, queue, stacks, methods, stats, "
                 "downcalls, quiet, stop, "
                 "help)",
                 key);
        return -EINVAL;
    }
    if (rc) {
        snprintf(err, errlen, "bad value for option '%s': '%s' (expected %s)", key, value ? value : "",
                 expect ? expect : "a value");
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
