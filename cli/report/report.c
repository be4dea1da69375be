/* vtpin report FILE: options, loading, warnings, exit status. */
#include "report.h"
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach_bounds.h"
#include "kernel_fold.h"
#include "kernel_held.h"
#include "kernel_join.h"
#include "kernel_pins.h"
#include "pin_groups.h"
#include "wire.h"

enum format { FORMAT_TEXT, FORMAT_JSON, FORMAT_HTML, FORMAT_COLLAPSED, FORMAT_PERFETTO, FORMAT_PPROF };

static const struct {
    const char *name;
    enum format format;
    int (*write)(FILE *, const struct recording *, const struct report_options *);
} formats[] = {
    {"text", FORMAT_TEXT, report_text},
    {"json", FORMAT_JSON, report_json},
    {"html", FORMAT_HTML, report_html},
    {"collapsed", FORMAT_COLLAPSED, report_collapsed},
    {"perfetto", FORMAT_PERFETTO, report_perfetto},
    {"pprof", FORMAT_PPROF, report_pprof},
};

static const char report_usage[] =
    "usage: vtpin report [OPTIONS] FILE\n"
    "\n"
    "Summarizes a recording written by the agent's record=FILE option (\"-\" reads\n"
    "standard input): the JVM, pin sites ranked by total pinned time with their\n"
    "stacks, the agent's notices and counters.\n"
    "\n"
    "options:\n"
    "  -f, --format=FORMAT     text (default); json (the contract in docs/report-json.md);\n"
    "                          html (one offline page: sites, flame graph of pinned time,\n"
    "                          per-carrier timeline); collapsed (folded stacks for\n"
    "                          flamegraph.pl/speedscope, weights in microseconds pinned);\n"
    "                          perfetto (Chrome trace-event JSON for ui.perfetto.dev);\n"
    "                          pprof (gzipped, for go tool pprof and Pyroscope: pinned time\n"
    "                          and pins by stack, labelled reason, origin, carrier, pid, app;\n"
    "                          every session unless --session N)\n"
    "  -o, --output=FILE       write the report to FILE instead of standard output\n"
    "  -n, --top=N             show the N sites with the most pinned time\n"
    "                          (text default 10, json default all; 0: all)\n"
    "      --session=N         the file holds several sessions (several JVMs, or\n"
    "                          concatenated recordings): report the Nth (default: the last);\n"
    "                          only that one is read (of the others, only their Hello,\n"
    "                          counters, notices and end)\n"
    "      --full-stacks       text: print whole stacks, not just the frames down to the culprit\n"
    "  -h, --help              print this text\n"
    "\n"
    "Recordings concatenated (cat a.vtp b.vtp | vtpin report -) are read as one file of\n"
    "several sessions; the files of a rotated recording, oldest first\n"
    "(cat app.vtp.2 app.vtp.1 app.vtp | vtpin report -), as one session.\n"
    "\n"
    "exit status: 0 reported (a recording cut short is reported too, with a warning),\n"
    "1 unreadable or invalid recording, a damaged one (what could be read is reported,\n"
    "with a warning naming the first bad byte offset), or the output cannot be written;\n"
    "2 usage error\n"
    "\n"
    "examples:\n"
    "  java -agentpath:/path/libvtpin.so=record=app.vtp -jar app.jar\n"
    "  vtpin report app.vtp\n"
    "  vtpin report --format json app.vtp | jq '.sites[0]'\n"
    "  vtpin report --format html -o pins.html app.vtp\n"
    "  vtpin report --format collapsed app.vtp | flamegraph.pl --countname us > pins.svg\n"
    "  vtpin report --format perfetto -o pins.trace.json app.vtp   # open in ui.perfetto.dev\n"
    "  vtpin report --format pprof -o pins.pb.gz app.vtp && go tool pprof -top pins.pb.gz\n";

int report_session_passes(struct recording_session *s)
{
    int rc = kernel_split_parks(s);
    if (!rc)
        rc = attach_bound_samples(s);
    if (rc)
        return rc;
    kernel_time_blocks(s);
    /* last: against the pins as the report has them, timed and split; the formats read the join */
    if ((rc = kernel_join(s)) || (rc = kernel_held_notices(s)))
        return rc;
    return 0;
}

int report_passes(struct recording *r)
{
    for (size_t i = 0; i < r->n_sessions; i++) {
        int rc = report_session_passes(r->sessions[i]);
        if (rc)
            return rc;
    }
    return 0;
}

struct each_session {
    report_session_fn fn;
    void *arg;
};

static int passes_then(struct recording *r, struct recording_session *s, void *arg)
{
    const struct each_session *e = arg;
    int rc = report_session_passes(s);
    return rc ? rc : e->fn(r, s, e->arg);
}

int report_open_plan(const char *path, const struct report_plan *plan, struct recording **out, char *err, size_t errlen)
{
    struct each_session e = {plan->each, plan->arg};
    struct kernel_fold kf = {0};
    /* a kernel view session is summed up too, each pin timed as it is (kernel_fold.h; pin_stream.h
     * times each again as it hands it over) */
    struct recording_plan load = {.keep = plan->keep,
                                  .skip_occupancy = plan->skip_occupancy,
                                  .fold_pins = plan->fold_pins,
                                  .fold = kernel_fold_pins,
                                  .fold_arg = &kf,
                                  .window = attach_bound_window,
                                  .fold_kernel = 1,
                                  .keep_input = plan->keep_input,
                                  .max_bytes = plan->max_bytes,
                                  .kernel_at_hello = plan->kernel_at_hello,
                                  .kernel_arg = plan->kernel_arg};
    if (plan->each) {
        load.each = passes_then;
        load.arg = &e;
    }
    struct recording *r = NULL;
    int rc = recording_load_plan(path, &load, &r, err, errlen);
    kernel_fold_free(&kf);
    if (rc)
        return rc;
    if (!plan->each && (rc = report_passes(r))) { /* each: run on every session as it was handed over */
        snprintf(err, errlen, "%s: out of memory", r->path);
        recording_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int report_open(const char *path, struct recording **out, char *err, size_t errlen)
{
    struct report_plan all = {.keep = RECORDING_KEEP_ALL};
    return report_open_plan(path, &all, out, err, errlen);
}

static int add_to_pprof(const struct recording *r, const struct recording_session *s, void *every)
{
    (void)r;
    return report_pprof_add(every, s);
}

/* A count from the command line: 0 or -EINVAL. */
static int parse_count(const char *text, size_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < 0 || (unsigned long long)v > SIZE_MAX)
        return -EINVAL;
    *out = (size_t)v;
    return 0;
}

static void warn_truncated(const struct recording *r)
{
    for (size_t i = 0; i < r->n_sessions; i++) {
        const char *why = recording_write_failed(r->sessions[i]);
        if (why) {
            fprintf(stderr, "vtpin report: warning: %s: the recording ends early, the agent could not write it%s%s%s\n",
                    r->path, *why ? " (the agent said: " : "", why, *why ? ")" : "");
            return;
        }
    }
    for (size_t i = 0; i < r->n_sessions; i++) {
        if (recording_write_failed_probably(r->sessions[i])) {
            fprintf(stderr,
                    "vtpin report: warning: %s: the recording ends early without its end marker: the agent's writes "
                    "probably failed on a full disk (it warned: %s)\n",
                    r->path, recording_disk_nearly_full(r->sessions[i]));
            return;
        }
    }
    if (!r->truncated)
        return;
    if (r->zero_tail)
        fprintf(stderr,
                "vtpin report: warning: %s: zero bytes from byte offset %llu to the end: the agent's last writes "
                "never reached the disk (machine or JVM killed, or disk full); reporting the %llu events before them\n",
                r->path, (unsigned long long)r->truncated_at, (unsigned long long)r->events);
    else
        fprintf(
            stderr,
            "vtpin report: warning: %s: the recording ends in the middle of a frame at byte offset %llu: "
            "the agent did not finish writing it (JVM killed, disk full, or still running); reporting the %llu events "
            "before it\n",
            r->path, (unsigned long long)r->truncated_at, (unsigned long long)r->events);
}

/* 1 when the file is damaged (said on stderr): the valid part is reported all the same. */
static int warn_damaged(const struct recording *r)
{
    if (!r->damaged)
        return 0;
    fprintf(stderr,
            "vtpin report: warning: %s: damaged: %s; reporting the %llu events that could be read, %llu bytes "
            "skipped (%llu bad spot%s)\n",
            r->path, r->damage, (unsigned long long)r->events, (unsigned long long)r->damaged_bytes,
            (unsigned long long)r->damaged, r->damaged == 1 ? "" : "s");
    return 1;
}

int report_main(int argc, char **argv)
{
    enum { OPT_SESSION = 256, OPT_FULL_STACKS };
    static const struct option long_options[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"top", required_argument, NULL, 'n'},
        {"session", required_argument, NULL, OPT_SESSION},
        {"full-stacks", no_argument, NULL, OPT_FULL_STACKS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    enum format format = FORMAT_TEXT;
    size_t fmt = 0;
    const char *output = NULL;
    FILE *out = stdout;
    struct report_options o = {0};
    int top_given = 0;
    size_t session = 0; /* 1-based; 0: the last */
    struct recording *r = NULL;
    struct report_pprof *every = NULL; /* pprof of every session, built as they are read */
    char err[512];
    int status = CLI_EXIT_OK;
    int opt;

    optind = 0; /* GNU getopt: start over (argv is not the program's) */
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":f:n:o:h", long_options, NULL)) != -1) {
        switch (opt) {
        case 'f':
            for (fmt = 0; fmt < sizeof(formats) / sizeof(formats[0]); fmt++)
                if (strcmp(optarg, formats[fmt].name) == 0)
                    break;
            if (fmt == sizeof(formats) / sizeof(formats[0]))
                return cli_usage_error("report", "unknown format '%s' (text, json, html, collapsed, perfetto or pprof)",
                                       optarg);
            format = formats[fmt].format;
            break;
        case 'o':
            output = optarg;
            break;
        case 'n':
            if (parse_count(optarg, &o.top))
                return cli_usage_error("report", "--top wants a count, not '%s'", optarg);
            top_given = 1;
            break;
        case OPT_SESSION:
            if (parse_count(optarg, &session) || session == 0)
                return cli_usage_error("report", "--session wants a session number from 1, not '%s'", optarg);
            break;
        case OPT_FULL_STACKS:
            o.full_stacks = 1;
            break;
        case 'h':
            fputs(report_usage, stdout);
            return CLI_EXIT_OK;
        case ':':
            return cli_usage_error("report", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("report", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("report", "which recording? (vtpin report FILE)");
    if (argc - optind > 1)
        return cli_usage_error("report", "one recording at a time ('%s' is one too many)", argv[optind + 1]);
    if (!top_given)
        o.top = format == FORMAT_TEXT ? REPORT_TEXT_TOP_DEFAULT : 0;
    if (format == FORMAT_PPROF && (!output || strcmp(output, "-") == 0) && isatty(STDOUT_FILENO))
        return cli_usage_error("report", "--format pprof is gzipped binary, not for a terminal: give -o FILE or "
                                         "redirect standard output");

    /* pprof without --session shows every session, built one session at a time; every other format one.
     * Only the timelines draw occupancy. A long session's ended pins are summed up as read
     * (pin_groups.h); JSON, the HTML lanes and Perfetto read them again (pin_stream.h). */
    o.all_sessions = format == FORMAT_PPROF && !session;
    struct report_plan plan = {.keep = session ? session : RECORDING_KEEP_LAST,
                               .skip_occupancy = format != FORMAT_HTML && format != FORMAT_PERFETTO,
                               .fold_pins = RECORDING_FOLD_PINS,
                               .keep_input =
                                   format == FORMAT_JSON || format == FORMAT_HTML || format == FORMAT_PERFETTO};
    int rc = o.all_sessions ? report_pprof_new(&every, argv[optind]) : 0;
    if (o.all_sessions) {
        plan.keep = RECORDING_KEEP_ALL;
        plan.each = add_to_pprof;
        plan.arg = every;
    }
    if (!rc)
        rc = report_open_plan(argv[optind], &plan, &r, err, sizeof(err));
    else
        snprintf(err, sizeof(err), "%s: out of memory", argv[optind]);
    if (rc) {
        fprintf(stderr, "vtpin report: %s\n", err);
        report_pprof_free(every);
        return CLI_EXIT_FAIL;
    }
    warn_truncated(r);
    int damaged = warn_damaged(r);
    if (session > r->n_sessions) {
        fprintf(stderr, "vtpin report: %s: there is no session %zu, the file holds %zu\n", r->path, session,
                r->n_sessions);
        status = CLI_EXIT_USAGE;
        goto cleanup;
    }
    o.session = session ? session - 1 : r->n_sessions - 1;
    const struct recording_session *s = r->sessions[o.session];
    if (s->has_hello && s->hello.schema_version > WIRE_SCHEMA_VERSION)
        fprintf(stderr,
                "vtpin report: warning: %s: written with wire schema %u, this vtpin reads schema %u: "
                "some information may be missing\n",
                r->path, (unsigned)s->hello.schema_version, (unsigned)WIRE_SCHEMA_VERSION);
    if (!session && r->n_sessions > 1 && !o.all_sessions)
        fprintf(stderr, "vtpin report: note: %s holds %zu sessions; reporting the last (--session N for another)\n",
                r->path, r->n_sessions);
    if (output && strcmp(output, "-") != 0 && !(out = fopen(output, "w"))) {
        fprintf(stderr, "vtpin report: cannot write %s: %s\n", output, strerror(errno));
        status = CLI_EXIT_FAIL;
        goto cleanup;
    }
    setvbuf(out, NULL, _IOFBF, 1 << 20); /* a large report goes out in big writes */
    rc = every ? report_pprof_write(out, every, r, 0, r->n_sessions) : formats[fmt].write(out, r, &o);
    if (out != stdout && fclose(out) && !rc)
        rc = -errno;
    if (rc) {
        fprintf(stderr, "vtpin report: cannot write the report: %s\n", strerror(-rc));
        status = CLI_EXIT_FAIL;
    } else if (damaged) {
        status = CLI_EXIT_FAIL; /* reported, but not all of it: a script should know */
    }
cleanup:
    report_pprof_free(every);
    recording_free(r);
    return status;
}
