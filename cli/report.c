/* vtpin report FILE: options, loading, warnings, exit status. */
#include "commands.h"
#include "report.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

enum { EXIT_OK = 0, EXIT_BAD_RECORDING = 1, EXIT_USAGE = 2 };
enum format { FORMAT_TEXT, FORMAT_JSON };

static const char report_usage[] =
    "usage: vtpin report [OPTIONS] FILE\n"
    "\n"
    "Summarizes a recording written by the agent's record=FILE option (\"-\" reads\n"
    "standard input): the JVM, pin sites ranked by total pinned time with their\n"
    "stacks, the agent's notices and counters.\n"
    "\n"
    "options:\n"
    "  -f, --format=text|json  output format (default text; json is the contract in\n"
    "                          docs/report-json.md)\n"
    "  -n, --top=N             show the N sites with the most pinned time\n"
    "                          (text default 10, json default all; 0: all)\n"
    "      --session=N         the file holds several sessions (several JVMs, or\n"
    "                          concatenated recordings): report the Nth (default: the last)\n"
    "      --full-stacks       text: print whole stacks, not just the frames down to the culprit\n"
    "  -h, --help              print this text\n"
    "\n"
    "exit status: 0 reported (a recording cut short is reported too, with a warning),\n"
    "1 unreadable or invalid recording, 2 usage error\n"
    "\n"
    "examples:\n"
    "  java -agentpath:/path/libvtpin.so=record=app.vtp -jar app.jar\n"
    "  vtpin report app.vtp\n"
    "  vtpin report --format json app.vtp | jq '.sites[0]'\n";

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
    if (!r->truncated)
        return;
    if (r->zero_tail)
        fprintf(stderr,
                "vtpin report: warning: %s: zero bytes from byte offset %llu to the end: the agent's last writes "
                "never reached the disk (machine or JVM killed); reporting the %llu events before them\n",
                r->path, (unsigned long long)r->truncated_at, (unsigned long long)r->events);
    else
        fprintf(stderr,
                "vtpin report: warning: %s: the recording ends in the middle of a frame at byte offset %llu: "
                "the agent did not finish writing it (JVM killed, or still running); reporting the %llu events "
                "before it\n",
                r->path, (unsigned long long)r->truncated_at, (unsigned long long)r->events);
}

int report_main(int argc, char **argv)
{
    enum { OPT_SESSION = 256, OPT_FULL_STACKS };
    static const struct option long_options[] = {
        {"format", required_argument, NULL, 'f'},
        {"top", required_argument, NULL, 'n'},
        {"session", required_argument, NULL, OPT_SESSION},
        {"full-stacks", no_argument, NULL, OPT_FULL_STACKS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    enum format format = FORMAT_TEXT;
    struct report_options o = {0};
    int top_given = 0;
    size_t session = 0; /* 1-based; 0: the last */
    struct recording *r = NULL;
    char err[512];
    int status = EXIT_OK;
    int opt;

    optind = 0; /* GNU getopt: start over (argv is not the program's) */
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":f:n:h", long_options, NULL)) != -1) {
        switch (opt) {
        case 'f':
            if (strcmp(optarg, "text") == 0)
                format = FORMAT_TEXT;
            else if (strcmp(optarg, "json") == 0)
                format = FORMAT_JSON;
            else
                return cli_usage_error("report", "unknown format '%s' (text or json)", optarg);
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
            return EXIT_OK;
        case ':':
            return cli_usage_error("report", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("report", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("report", "%s", "which recording? (vtpin report FILE)");
    if (argc - optind > 1)
        return cli_usage_error("report", "one recording at a time ('%s' is one too many)", argv[optind + 1]);
    if (!top_given)
        o.top = format == FORMAT_TEXT ? REPORT_TEXT_TOP_DEFAULT : 0;

    int rc = recording_load(argv[optind], &r, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "vtpin report: %s\n", err);
        return EXIT_BAD_RECORDING;
    }
    warn_truncated(r);
    if (session > r->n_sessions) {
        fprintf(stderr, "vtpin report: %s: there is no session %zu, the file holds %zu\n", r->path, session,
                r->n_sessions);
        status = EXIT_USAGE;
        goto cleanup;
    }
    o.session = session ? session - 1 : r->n_sessions - 1;
    const struct recording_session *s = r->sessions[o.session];
    if (s->has_hello && s->schema_version > WIRE_SCHEMA_VERSION)
        fprintf(stderr,
                "vtpin report: warning: %s: written with wire schema %u, this vtpin reads schema %u: "
                "some information may be missing\n",
                r->path, (unsigned)s->schema_version, (unsigned)WIRE_SCHEMA_VERSION);
    if (!session && r->n_sessions > 1)
        fprintf(stderr, "vtpin report: note: %s holds %zu sessions; reporting the last (--session N for another)\n",
                r->path, r->n_sessions);
    setvbuf(stdout, NULL, _IOFBF, 1 << 20); /* a large report goes out in big writes */
    rc = format == FORMAT_JSON ? report_json(stdout, r, &o) : report_text(stdout, r, &o);
    if (rc) {
        fprintf(stderr, "vtpin report: cannot write the report: %s\n", strerror(-rc));
        status = EXIT_BAD_RECORDING;
    }
cleanup:
    recording_free(r);
    return status;
}
