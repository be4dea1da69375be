/* vtpin status: what the running collector knows, for a person or as JSON. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ask.h"
#include "commands.h"
#include "common/socket_path.h"
#include "common/units.h"
#include "common/utf8.h"
#include "paths.h"
#include "wire.h"

static const char status_usage[] = "usage: vtpin status [--socket PATH] [--json] [--pid PID] [--timeout DUR]\n"
                                   "\n"
                                   "Asks the running collector (vtpin collector) what it knows: itself, and per\n"
                                   "JVM its versions, connection, occupancy source, carriers, pins in progress,\n"
                                   "carrier hogs (virtual threads running long without unmounting), the\n"
                                   "starvation alert, dropped events and the recording being written (or\n"
                                   "stopped by a write error, e.g. a full disk: when and why).\n"
                                   "\n"
                                   "options:\n"
                                   "  -s, --socket=PATH  the collector's socket (default: the collector's default)\n"
                                   "  -j, --json         print the JSON answer as is (docs/collector.md)\n"
                                   "  -p, --pid=PID      only this JVM, by its pid on this host (in a container\n"
                                   "                     it says another pid: shown beside it)\n"
                                   "  -t, --timeout=DUR  give up when the whole answer has not come within DUR\n"
                                   "                     (default 5s)\n"
                                   "  -h, --help         print this text\n"
                                   "\n"
                                   "exit status: 0 answered, 1 no collector, no valid answer in time (or it failed),\n"
                                   "2 usage error\n";

static void put(const char *s)
{
    utf8_write_printable(stdout, s ? s : "?");
}

/* The recording's stop (status JSON recording_error), one line after "recording": "STOPPED
 * since T (D ago): why; F frames (B) not written so far, retrying every second", or
 * "resumed at T after D stopped (why): F frames (B) lost, a notice in it says where". */
static void print_recording_error(const struct jsonread *e)
{
    if (!e || jsonread_is_null(e))
        return;
    char since[32], lasted[32], lost[32], resumed[32];
    int64_t frames = jsonread_int(jsonread_get(e, "frames_lost"), 0);
    ask_utc_text(jsonread_int(jsonread_get(e, "since_unix_ns"), 0), since, sizeof(since));
    units_format_duration(jsonread_int(jsonread_get(e, "stopped_for_ns"), 0), lasted, sizeof(lasted));
    units_format_size((uint64_t)jsonread_int(jsonread_get(e, "bytes_lost"), 0), lost, sizeof(lost));
    if (jsonread_bool(jsonread_get(e, "active"), 0)) {
        printf("              STOPPED since %s (%s ago): ", since, lasted);
        put(jsonread_str(jsonread_get(e, "error"), "?"));
        printf("; %" PRId64 " frames (%s) not written so far, the collector tries again every second\n", frames, lost);
    } else {
        ask_utc_text(jsonread_int(jsonread_get(e, "resumed_unix_ns"), 0), resumed, sizeof(resumed));
        printf("              resumed at %s after %s stopped (", resumed, lasted);
        put(jsonread_str(jsonread_get(e, "error"), "?"));
        printf("): %" PRId64 " frames (%s) lost in all; a notice in the recording says where\n", frames, lost);
    }
}

static void print_jvm(const struct jsonread *j)
{
    const char *s;
    fputs("\nJVM ", stdout);
    ask_print_jvm_name(stdout, j);
    printf("  %s", jsonread_bool(jsonread_get(j, "connected"), 0) ? "connected" : "disconnected");
    if (!jsonread_bool(jsonread_get(j, "connected"), 0)) {
        char ago[32];
        printf(" %s ago",
               units_format_duration(jsonread_int(jsonread_get(j, "disconnected_for_ns"), 0), ago, sizeof(ago)));
    }
    if ((s = jsonread_str(jsonread_get(j, "java_version"), NULL))) {
        fputs("  java ", stdout);
        put(s);
    }
    if ((s = jsonread_str(jsonread_get(j, "vm"), NULL))) {
        fputs("  ", stdout);
        put(s);
    }
    if ((s = jsonread_str(jsonread_get(j, "vendor"), NULL))) {
        fputs(" (", stdout);
        put(s);
        fputs(")", stdout);
    }
    if ((s = jsonread_str(jsonread_get(j, "host"), NULL))) {
        fputs(" on ", stdout);
        put(s);
    }
    fputs("\n  agent       ", stdout);
    put(jsonread_str(jsonread_get(j, "agent_version"), "?"));
    printf(" (%s), %" PRId64 " connection%s, occupancy %s\n", jsonread_str(jsonread_get(j, "mode"), "mode unknown"),
           jsonread_int(jsonread_get(j, "connections"), 0),
           jsonread_int(jsonread_get(j, "connections"), 0) == 1 ? "" : "s",
           jsonread_str(jsonread_get(j, "occupancy"), "off"));
    printf("  carriers    %" PRId64 ", pins in progress %" PRId64 ", pins reported %" PRId64 "\n",
           jsonread_int(jsonread_get(j, "carriers"), 0), jsonread_int(jsonread_get(j, "pins_in_progress"), 0),
           jsonread_int(jsonread_get(j, "pins_total"), 0));
    if (jsonread_get(j, "hogs_total")) { /* a collector older than carrier hogs says nothing */
        char hogged[32];
        units_format_duration(jsonread_int(jsonread_get(jsonread_get(j, "agent_occupancy"), "hogged_ns"), 0), hogged,
                              sizeof(hogged));
        printf("  hogs        %" PRId64 " reported, %" PRId64 " in progress, %s hogged in all\n",
               jsonread_int(jsonread_get(j, "hogs_total"), 0), jsonread_int(jsonread_get(j, "carriers_hogged"), 0),
               hogged);
    }
    const struct jsonread *cost = jsonread_get(j, "agent_cost");
    if (cost && !jsonread_is_null(cost)) {
        char cpu[32];
        printf("  agent cost  writer CPU %s, %" PRId64 " JVMTI calls that stop a thread\n",
               units_format_duration(jsonread_int(jsonread_get(cost, "cpu_ns"), 0), cpu, sizeof(cpu)),
               jsonread_int(jsonread_get(cost, "jvmti_calls"), 0));
    }
    const struct jsonread *a = jsonread_get(j, "alert");
    int64_t held = jsonread_int(jsonread_get(a, "held"), 0), total = jsonread_int(jsonread_get(a, "total"), 0);
    if (jsonread_bool(jsonread_get(a, "active"), 0))
        printf("  alert       STARVATION: %" PRId64 " of %" PRId64 " carriers pinned%s (vtpin top shows them)\n",
               jsonread_int(jsonread_get(j, "pins_in_progress"), 0) +
                   jsonread_int(jsonread_get(j, "carriers_hogged"), 0),
               total, jsonread_int(jsonread_get(j, "carriers_hogged"), 0) ? " or hogged" : "");
    else
        printf("  alert       none (%" PRId64 " of %" PRId64 " carriers held past the alert time)\n", held, total);
    const struct jsonread *d = jsonread_get(j, "drops");
    printf("  dropped     events %" PRId64 ", while away %" PRId64 ", transitions %" PRId64 ", stacks %" PRId64
           ", memory %" PRId64 "\n",
           jsonread_int(jsonread_get(d, "events_dropped"), 0), jsonread_int(jsonread_get(d, "collector_dropped"), 0),
           jsonread_int(jsonread_get(d, "transitions_dropped"), 0), jsonread_int(jsonread_get(d, "stacks_dropped"), 0),
           jsonread_int(jsonread_get(d, "memory_dropped"), 0));
    fputs("  recording   ", stdout);
    put(jsonread_str(jsonread_get(j, "recording"), "none"));
    int64_t rotations = jsonread_int(jsonread_get(j, "recording_rotations"), 0); /* an older collector: none */
    if (rotations > 0)
        printf(" (rotated %" PRId64 " time%s, --record-max: the older files are .1, .2, ...)", rotations,
               rotations == 1 ? "" : "s");
    fputs("\n", stdout);
    print_recording_error(jsonread_get(j, "recording_error"));
    ask_print_deadlock(stdout, j);
}

/* "  also serves uid 65534, gid 4242 (2 peers refused)": only with --allow-uid/--allow-gid. */
static void print_allow(const struct jsonread *allow, int64_t refused)
{
    const struct jsonread *uids = jsonread_get(allow, "uids"), *gids = jsonread_get(allow, "gids");
    size_t nu = jsonread_len(uids), ng = jsonread_len(gids);
    if (nu + ng == 0)
        return;
    fputs("  also serves", stdout);
    for (size_t i = 0; i < nu; i++)
        printf("%s uid %" PRId64, i ? "," : "", jsonread_int(jsonread_at(uids, i), -1));
    for (size_t i = 0; i < ng; i++)
        printf("%s gid %" PRId64, i || nu ? "," : "", jsonread_int(jsonread_at(gids, i), -1));
    printf(" (%" PRId64 " peer%s refused)\n", refused, refused == 1 ? "" : "s");
}

static void print_status(const struct jsonread *root)
{
    const struct jsonread *c = jsonread_get(root, "collector");
    char up[32], hold[32];
    printf("collector pid %" PRId64 " (vtpin %s), up %s, %" PRId64 " client%s connected\n",
           jsonread_int(jsonread_get(c, "pid"), 0), jsonread_str(jsonread_get(c, "version"), "?"),
           units_format_duration(jsonread_int(jsonread_get(c, "uptime_ns"), 0), up, sizeof(up)),
           jsonread_int(jsonread_get(c, "clients"), 0), jsonread_int(jsonread_get(c, "clients"), 0) == 1 ? "" : "s");
    fputs("  socket      ", stdout);
    put(jsonread_str(jsonread_get(c, "socket"), "?"));
    fputs("\n  recordings  ", stdout);
    put(jsonread_str(jsonread_get(c, "dir"), "?"));
    const struct jsonread *rule = jsonread_get(c, "alert_rule");
    int64_t k = jsonread_int(jsonread_get(rule, "k"), 0);
    units_format_duration(jsonread_int(jsonread_get(rule, "hold_ns"), 0), hold, sizeof(hold));
    if (k)
        printf("\n  alert rule  %" PRId64 " carriers of a JVM pinned or hogged for over %s\n", k, hold);
    else
        printf("\n  alert rule  all carriers of a JVM pinned or hogged for over %s\n", hold);
    print_allow(jsonread_get(c, "allow"), jsonread_int(jsonread_get(c, "peers_refused"), 0));
    int64_t own = jsonread_int(jsonread_get(c, "jvms_of_uid"), -1);
    if (own >= 0) /* an --allow-uid/--allow-gid peer without --allow-see-all */
        printf("  shown       the JVMs of uid %" PRId64 " only (yours; root and the collector's user see all)\n", own);
    const struct jsonread *mem = jsonread_get(c, "memory");
    if (mem) { /* --memory-budget: what all peers together may make it keep (docs/collector.md Memory) */
        char used[32], budget[32], peak[32];
        int64_t dropped = jsonread_int(jsonread_get(mem, "dropped"), 0);
        printf("  memory      %s of the %s budget used (peak %s), %" PRId64 " dropped%s\n",
               units_format_size((uint64_t)jsonread_int(jsonread_get(mem, "used_bytes"), 0), used, sizeof(used)),
               units_format_size((uint64_t)jsonread_int(jsonread_get(mem, "budget_bytes"), 0), budget, sizeof(budget)),
               units_format_size((uint64_t)jsonread_int(jsonread_get(mem, "peak_bytes"), 0), peak, sizeof(peak)),
               dropped, dropped ? " (definitions and large frames: --memory-budget)" : "");
    }
    const struct jsonread *jvms = jsonread_get(root, "jvms");
    if (jsonread_len(jvms) == 0)
        fputs("\nno JVMs (start one with -agentpath:/path/libvtpin.so=collector)\n", stdout);
    for (size_t i = 0; i < jsonread_len(jvms); i++)
        print_jvm(jsonread_at(jvms, i));
}

int status_main(int argc, char **argv)
{
    static const struct option long_options[] = {
        {"socket", required_argument, NULL, 's'}, {"json", no_argument, NULL, 'j'},
        {"pid", required_argument, NULL, 'p'},    {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *socket_arg = NULL;
    int json_out = 0, opt;
    int64_t pid = 0;
    int timeout_ms = ASK_TIMEOUT_MS_DEFAULT;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":s:jp:t:h", long_options, NULL)) != -1) {
        switch (opt) {
        case 's':
            if (socket_path_fits(optarg))
                return cli_usage_error(
                    "status", "--socket: '%s' is longer than a Unix socket path can be (at most 107 bytes)", optarg);
            socket_arg = optarg;
            break;
        case 't':
            if (ask_parse_timeout(optarg, &timeout_ms))
                return cli_usage_error("status",
                                       "--timeout: '%s' is not a duration between 1ms and 1h (e.g. 500ms, 5s)", optarg);
            break;
        case 'j':
            json_out = 1;
            break;
        case 'p':
            if (ask_parse_pid(optarg, &pid) != 0)
                return cli_usage_error("status", "--pid: '%s' is not a process id", optarg);
            break;
        case 'h':
            fputs(status_usage, stdout);
            return CLI_EXIT_OK;
        case ':':
            return cli_usage_error("status", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("status", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("status", "unexpected argument '%s'", argv[optind]);
    char *json = NULL;
    struct jsonread *tree = NULL;
    if (ask_collector("status", socket_arg, VTPIN__V1__QUERY__KIND__STATUS, pid, timeout_ms, &json,
                      json_out ? NULL : &tree))
        return CLI_EXIT_FAIL;
    if (json_out)
        fputs(json, stdout);
    else
        print_status(tree);
    jsonread_free(tree);
    free(json);
    return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
