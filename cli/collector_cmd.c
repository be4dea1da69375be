/* vtpin collector: options, defaults, then the daemon (collector/server.c). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access.h"
#include "clog.h"
#include "commands.h"
#include "common/socket_path.h"
#include "common/units.h"
#include "kglue.h"
#include "metrics_http.h"
#include "paths.h"
#include "server.h"
#include "wire.h"

static const char collector_usage[] =
    "usage: vtpin collector [OPTIONS]\n"
    "\n"
    "Runs the collector in the foreground: agents started with collector mode\n"
    "stream their events to it; it keeps each JVM's carrier occupancy, raises a\n"
    "starvation alert when carriers stay pinned, writes one recording per agent\n"
    "connection, and answers `vtpin status` and `vtpin top`. Stop it with Ctrl-C\n"
    "or SIGTERM (recordings are flushed and closed).\n"
    "\n"
    "options:\n"
    "  -s, --socket=PATH       listen on PATH (default $XDG_RUNTIME_DIR/vtpin/collector.sock,\n"
    "                          or /tmp/vtpin-<uid>/collector.sock without XDG_RUNTIME_DIR)\n"
    "  -d, --dir=DIR           write recordings to DIR (default $XDG_STATE_HOME/vtpin,\n"
    "                          or ~/.local/state/vtpin)\n"
    "      --record-max=BYTES  a recording past BYTES (at least 64k) rotates: FILE becomes\n"
    "                          FILE.1 (FILE.1 FILE.2, ...) and a new FILE goes on, each a whole\n"
    "                          recording `vtpin report` reads alone (default 256M; 0: never)\n"
    "      --record-keep=N     rotated files kept of each recording, the oldest removed\n"
    "                          (1 to 1000, default 3)\n"
    "  -k, --alert-k=K         alert when K carriers of a JVM are pinned or hogged (default 0: all)\n"
    "  -a, --alert-after=DUR   ... for longer than DUR (default 1s)\n"
    "  -w, --window=DUR        the window of busy/pinned/idle percentages (default 60s)\n"
    "      --max-frame=BYTES   largest frame accepted from a peer (default 1M)\n"
    "      --max-clients=N     connections served at once (default 256)\n"
    "      --metrics=HOST:PORT serve Prometheus metrics at http://HOST:PORT/metrics, and pinned time\n"
    "                          as pprof at /debug/pprof/pinned?seconds=N (docs/fleet.md)\n"
    "                          (HOST: 127.0.0.1, [::1], localhost; PORT 0: any free port)\n"
    "      --metrics-listen-any  allow a --metrics address that is not loopback\n"
    "      --memory-budget=BYTES  memory all peers together can make it keep: definition\n"
    "                          tables and large-frame buffers (default 256M); beyond it\n"
    "                          definitions and large frames are dropped and counted\n"
    "      --kernel=MODE       the kernel view (off-CPU time and stacks of carriers, needs\n"
    "                          CAP_BPF and CAP_PERFMON): auto (default: on when it can,\n"
    "                          else one log line says why), on (fail without it), off\n"
    "      --kernel-min=DUR    shortest off-CPU interval the kernel view records (default 1ms)\n"
    "      --jvms=WHICH        all (default where the kernel view is on): also every HotSpot JVM\n"
    "                          of the host with no agent, from the kernel view (zero-touch,\n"
    "                          docs/zero-touch.md); agents: only those with the agent;\n"
    "                          under:PID: with zero-touch only for PID's descendants\n"
    "      --attach-on-pin[=DUR]  with zero-touch: load the agent (vtpin attach) into a JVM\n"
    "                          that pins for DUR (default: its first pin), so that its later\n"
    "                          pins have stacks; its agent streams to this collector\n"
    "      --attach-only=PATTERN  ... only into JVMs whose command line matches (fnmatch)\n"
    "      --attach-deny=PATTERN  ... never into those whose command line matches\n"
    "      --attach-per-minute=N  ... at most N a minute (1-16, default 4)\n"
    "      --allow-uid=UID     also serve this user (number or name; repeatable); the\n"
    "                          socket becomes 0666, its directory 0711, SO_PEERCRED decides\n"
    "      --allow-gid=GID     also serve peers whose group or a supplementary group is GID\n"
    "                          (repeatable); one GID alone: the socket is 0660 in that group\n"
    "                          A peer served by these speaks only for its own process (a\n"
    "                          Hello naming another pid is refused) and, in status and\n"
    "                          top, sees only the JVMs of its own uid\n"
    "      --allow-see-all     let the peers of --allow-uid/--allow-gid see every JVM in\n"
    "                          status and top (root and this user always do)\n"
    "  -v, --verbose           also log queries, agent info notices and connection details\n"
    "  -h, --help              print this text\n"
    "\n"
    "DUR: a number with a unit: ns, us, ms, s, m (e.g. 500ms, 2s). BYTES: a number,\n"
    "optionally with k, M or G.\n"
    "\n"
    "exit status: 0 after a clean shutdown, 1 when it cannot start (another\n"
    "collector on the socket, directories it cannot create, --kernel=on without\n"
    "the kernel view), 2 usage error (also a --socket path longer than a Unix socket\n"
    "address holds, 107 bytes)\n"
    "\n"
    "examples:\n"
    "  vtpin collector\n"
    "  vtpin collector --alert-k 2 --alert-after 500ms --dir /var/tmp/vtpin\n"
    "  vtpin collector --metrics 127.0.0.1:9400\n"
    "  sudo vtpin collector --allow-gid vtpin --socket /run/vtpin/collector.sock\n"
    "  vtpin status; vtpin top\n";

/* path made absolute into out[cap] (relative to the current directory). 0 or -errno. */
static int absolute(const char *path, char *out, size_t cap)
{
    if (path[0] == '/') {
        if (strlen(path) >= cap)
            return -ENAMETOOLONG;
        strcpy(out, path);
        return 0;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd)))
        return -errno;
    int n = snprintf(out, cap, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, path);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* The long options without a short form. */
enum collector_option {
    OPT_MAX_FRAME = 256,
    OPT_MAX_CLIENTS,
    OPT_METRICS,
    OPT_METRICS_ANY,
    OPT_MEMORY_BUDGET,
    OPT_RECORD_MAX,
    OPT_RECORD_KEEP,
    OPT_KERNEL,
    OPT_KERNEL_MIN,
    OPT_JVMS,
    OPT_ATTACH_ON_PIN,
    OPT_ATTACH_ONLY,
    OPT_ATTACH_DENY,
    OPT_ATTACH_PER_MINUTE,
    OPT_ALLOW_UID,
    OPT_ALLOW_GID,
    OPT_ALLOW_SEE_ALL
};

/* What the command line says: the server's configuration, and what is resolved after the
 * options are read (the paths, made absolute; the metrics address). */
struct collector_args {
    struct server_config cfg;
    const char *socket_arg, *dir_arg, *metrics_arg;
    int metrics_any;
    int64_t attach_min; /* --attach-on-pin's DUR; -1: off */
};

/* One option (getopt_long's opt and optarg) into a: -1 to go on, else the exit status. */
static int take_option(int opt, char **argv, struct collector_args *a)
{
    uint64_t v;
    switch (opt) {
    case 's':
        a->socket_arg = optarg;
        break;
    case 'd':
        a->dir_arg = optarg;
        break;
    case 'k':
        if (units_parse_count(optarg, 0, 4096, &v) != 0)
            return cli_usage_error("collector", "--alert-k: '%s' is not a carrier count (0-4096; 0: all carriers)",
                                   optarg);
        a->cfg.alert.k = (unsigned)v;
        break;
    case 'a':
        if (units_parse_duration(optarg, &a->cfg.alert.hold_ns) != 0)
            return cli_usage_error("collector", "--alert-after: '%s' is not a duration (e.g. 500ms, 1s)", optarg);
        break;
    case 'w':
        if (units_parse_duration(optarg, &a->cfg.window_ns) != 0 || a->cfg.window_ns < 1000000000LL ||
            a->cfg.window_ns > 86400000000000LL)
            return cli_usage_error("collector", "--window: '%s' is not a duration between 1s and 24h (e.g. 60s, 5m)",
                                   optarg);
        break;
    case OPT_MAX_FRAME:
        if (units_parse_size(optarg, &v) != 0 || v < 1024 || v > (256u << 20))
            return cli_usage_error("collector", "--max-frame: '%s' is not a size between 1k and 256M", optarg);
        a->cfg.max_frame = (size_t)v;
        break;
    case OPT_MAX_CLIENTS:
        if (units_parse_count(optarg, 1, 65536, &v) != 0)
            return cli_usage_error("collector", "--max-clients: '%s' is not a count between 1 and 65536", optarg);
        a->cfg.max_clients = (unsigned)v;
        break;
    case OPT_METRICS:
        a->metrics_arg = optarg;
        break;
    case OPT_METRICS_ANY:
        a->metrics_any = 1;
        break;
    case OPT_MEMORY_BUDGET:
        if (units_parse_size(optarg, &v) != 0 || v < (1u << 20) || v > ((uint64_t)1 << 40))
            return cli_usage_error("collector", "--memory-budget: '%s' is not a size between 1M and 1024G", optarg);
        a->cfg.memory_budget = (size_t)v;
        break;
    case OPT_RECORD_MAX:
        if (units_parse_size(optarg, &v) != 0 || (v != 0 && v < (64u << 10)))
            return cli_usage_error("collector", "--record-max: '%s' is not 0 or a size of at least 64k", optarg);
        a->cfg.record_max = v;
        break;
    case OPT_RECORD_KEEP:
        if (units_parse_count(optarg, 1, 1000, &v) != 0)
            return cli_usage_error("collector", "--record-keep: '%s' is not a count between 1 and 1000", optarg);
        a->cfg.record_keep = (unsigned)v;
        break;
    case OPT_KERNEL:
        if (strcmp(optarg, "auto") == 0)
            a->cfg.kernel_mode = KGLUE_AUTO;
        else if (strcmp(optarg, "on") == 0)
            a->cfg.kernel_mode = KGLUE_ON;
        else if (strcmp(optarg, "off") == 0)
            a->cfg.kernel_mode = KGLUE_OFF;
        else
            return cli_usage_error("collector", "--kernel: '%s' is not auto, on or off", optarg);
        break;
    case OPT_KERNEL_MIN: {
        int64_t ns;
        if (units_parse_duration(optarg, &ns) != 0 || ns < 10000 || ns > 60000000000LL)
            return cli_usage_error("collector", "--kernel-min: '%s' is not a duration between 10us and 60s", optarg);
        a->cfg.kernel_min_ns = (uint64_t)ns;
        break;
    }
    case OPT_JVMS:
        if (strcmp(optarg, "all") == 0) {
            a->cfg.zero_touch = 1;
        } else if (strcmp(optarg, "agents") == 0) {
            a->cfg.zero_touch = 0;
        } else if (strncmp(optarg, "under:", 6) == 0 && units_parse_count(optarg + 6, 1, INT32_MAX, &v) == 0) {
            a->cfg.zero_touch = 1;
            a->cfg.zero_touch_under = (int32_t)v;
        } else {
            return cli_usage_error("collector", "--jvms: '%s' is not all, agents or under:PID", optarg);
        }
        break;
    case OPT_ATTACH_ON_PIN: {
        /* its value only as --attach-on-pin=DUR (optional_argument), read from the word itself */
        const char *eq = strchr(argv[optind - 1], '=');
        int64_t ns = 0; /* no DUR: the first pin */
        if (eq && (units_parse_duration(eq + 1, &ns) != 0 || ns > 3600000000000LL))
            return cli_usage_error("collector", "--attach-on-pin: '%s' is not a duration of at most 1h", eq + 1);
        a->attach_min = ns;
        break;
    }
    case OPT_ATTACH_ONLY:
        a->cfg.attach.only = optarg;
        break;
    case OPT_ATTACH_DENY:
        a->cfg.attach.deny = optarg;
        break;
    case OPT_ATTACH_PER_MINUTE: {
        char *end;
        long n = strtol(optarg, &end, 10);
        if (end == optarg || *end || n < 1 || n > ZTATTACH_PER_MINUTE_MAX)
            return cli_usage_error("collector", "--attach-per-minute: '%s' is not a number from 1 to %d", optarg,
                                   ZTATTACH_PER_MINUTE_MAX);
        a->cfg.attach.per_minute = (unsigned)n;
        break;
    }
    case OPT_ALLOW_UID: {
        uid_t uid;
        int r = access_parse_uid(optarg, &uid);
        if (r)
            return cli_usage_error("collector",
                                   r == -ENOENT ? "--allow-uid: no user named '%s'"
                                                : "--allow-uid: '%s' is not a uid (0-4294967294) or user name",
                                   optarg);
        if (access_add_uid(&a->cfg.allow, uid) != 0)
            return cli_usage_error("collector", "--allow-uid: '%s': at most 64 uids", optarg);
        break;
    }
    case OPT_ALLOW_GID: {
        gid_t gid;
        int r = access_parse_gid(optarg, &gid);
        if (r)
            return cli_usage_error("collector",
                                   r == -ENOENT ? "--allow-gid: no group named '%s'"
                                                : "--allow-gid: '%s' is not a gid (0-4294967294) or group name",
                                   optarg);
        if (access_add_gid(&a->cfg.allow, gid) != 0)
            return cli_usage_error("collector", "--allow-gid: '%s': at most 64 gids", optarg);
        break;
    }
    case OPT_ALLOW_SEE_ALL:
        a->cfg.allow.see_all = 1;
        break;
    case 'v':
        clog_set_verbose(1);
        break;
    case 'h':
        fputs(collector_usage, stdout);
        return CLI_EXIT_OK;
    case ':':
        return cli_usage_error("collector", "option '%s' needs a value", argv[optind - 1]);
    default:
        return cli_usage_error("collector", "unknown option '%s'", argv[optind - 1]);
    }
    return -1;
}

/* The options that only mean something together: -1 to go on, else the exit status. */
static int check_options(struct collector_args *a)
{
    if (a->metrics_arg) {
        char err[512];
        if (metrics_http_parse_addr(a->metrics_arg, a->metrics_any, &a->cfg.metrics_addr, &a->cfg.metrics_addrlen, err,
                                    sizeof(err)) != 0)
            return cli_usage_error("collector", "--metrics: %s", err);
    } else if (a->metrics_any) {
        return cli_usage_error("collector", "--metrics-listen-any needs --metrics=HOST:PORT");
    }
    if (a->cfg.allow.see_all && !a->cfg.allow.nuids && !a->cfg.allow.ngids)
        return cli_usage_error("collector", "--allow-see-all needs --allow-uid or --allow-gid");
    if ((a->attach_min >= 0 || a->cfg.attach.only || a->cfg.attach.deny || a->cfg.attach.per_minute) &&
        !a->cfg.zero_touch)
        return cli_usage_error("collector", "--attach-on-pin, --attach-only, --attach-deny and --attach-per-minute "
                                            "need zero-touch, which --jvms=agents turns off");
    if ((a->cfg.attach.only || a->cfg.attach.deny || a->cfg.attach.per_minute) && a->attach_min < 0)
        return cli_usage_error("collector",
                               "--attach-only, --attach-deny and --attach-per-minute need --attach-on-pin");
    a->cfg.attach.min_ns = a->attach_min;
    return -1;
}

/* The socket path and the recording directory, absolute, into socket_path and dir (PATH_MAX
 * each): -1 to go on, else the exit status. */
static int resolve_paths(struct collector_args *a, char *socket_path, char *dir)
{
    char given[PATH_MAX];
    int rc;
    if (a->socket_arg) {
        rc = absolute(a->socket_arg, socket_path, PATH_MAX);
    } else {
        rc = socket_path_default(socket_path, PATH_MAX);
        a->cfg.socket_dir_strict = 1;
    }
    if (a->socket_arg && (rc == -ENAMETOOLONG || socket_path_fits(socket_path)))
        return cli_usage_error("collector",
                               "--socket: '%s' (made absolute) is longer than a Unix socket path can be "
                               "(at most 107 bytes): the kernel would cut it and listen elsewhere",
                               a->socket_arg);
    if (rc) {
        fprintf(stderr, "vtpin collector: socket path: %s\n", strerror(-rc));
        return CLI_EXIT_FAIL;
    }
    if (a->dir_arg) {
        rc = absolute(a->dir_arg, dir, PATH_MAX);
    } else {
        rc = collector_default_dir(given, sizeof(given));
        if (!rc)
            rc = absolute(given, dir, PATH_MAX);
    }
    if (rc) {
        fprintf(stderr, "vtpin collector: recording directory: %s%s\n", strerror(-rc),
                rc == -ENOENT ? " (no home directory: give one with --dir)" : "");
        return CLI_EXIT_FAIL;
    }
    return -1;
}

int collector_main(int argc, char **argv)
{
    static const struct option long_options[] = {
        {"socket", required_argument, NULL, 's'},
        {"dir", required_argument, NULL, 'd'},
        {"alert-k", required_argument, NULL, 'k'},
        {"alert-after", required_argument, NULL, 'a'},
        {"window", required_argument, NULL, 'w'},
        {"max-frame", required_argument, NULL, OPT_MAX_FRAME},
        {"max-clients", required_argument, NULL, OPT_MAX_CLIENTS},
        {"metrics", required_argument, NULL, OPT_METRICS},
        {"metrics-listen-any", no_argument, NULL, OPT_METRICS_ANY},
        {"memory-budget", required_argument, NULL, OPT_MEMORY_BUDGET},
        {"record-max", required_argument, NULL, OPT_RECORD_MAX},
        {"record-keep", required_argument, NULL, OPT_RECORD_KEEP},
        {"kernel", required_argument, NULL, OPT_KERNEL},
        {"kernel-min", required_argument, NULL, OPT_KERNEL_MIN},
        {"jvms", required_argument, NULL, OPT_JVMS},
        {"attach-on-pin", optional_argument, NULL, OPT_ATTACH_ON_PIN},
        {"attach-only", required_argument, NULL, OPT_ATTACH_ONLY},
        {"attach-deny", required_argument, NULL, OPT_ATTACH_DENY},
        {"attach-per-minute", required_argument, NULL, OPT_ATTACH_PER_MINUTE},
        {"allow-uid", required_argument, NULL, OPT_ALLOW_UID},
        {"allow-gid", required_argument, NULL, OPT_ALLOW_GID},
        {"allow-see-all", no_argument, NULL, OPT_ALLOW_SEE_ALL},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct collector_args a = {.attach_min = -1};
    server_config_defaults(&a.cfg);
    a.cfg.version = VTPIN_VERSION;
    int opt, rc;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":s:d:k:a:w:vh", long_options, NULL)) != -1)
        if ((rc = take_option(opt, argv, &a)) >= 0)
            return rc;
    if (optind < argc)
        return cli_usage_error("collector", "unexpected argument '%s'", argv[optind]);
    char socket_path[PATH_MAX], dir[PATH_MAX];
    if ((rc = check_options(&a)) >= 0 || (rc = resolve_paths(&a, socket_path, dir)) >= 0)
        return rc;
    a.cfg.socket_path = socket_path;
    a.cfg.dir = dir;
    return server_run(&a.cfg) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
