/* vtpin run [options] -- COMMAND...: runs a load test or a test suite with
 * vtpin in every JVM it starts (through JAVA_TOOL_OPTIONS, so mvn, gradle and
 * shell wrappers work), prints what was found and applies the gates.
 *
 * Each JVM records to RUNDIR/jvm-<runid>-<pid>.vtp, the source of the report
 * and of the verdict (never JFR, never the collector); only this run's id is
 * read back, so a reused --dir does not count an earlier run's JVMs. The
 * agents also stream to a collector (started for the run, or an existing one
 * with --socket) so the run can be watched live with `vtpin top --socket ...`.
 *
 * The kernel view: the run's own collector runs with --kernel=auto, so as
 * root it records what the kernel saw of the carriers into its recordings
 * (RUNDIR/collector). At the end those kernel intervals and times are joined
 * to the agent's recording of the same JVM (cli/run/run_kernel.h) as each
 * recording is read (run_recordings.h, one at a time): the pins and the
 * verdict still come from the agents, the pins gain their `kernel` objects.
 * The start line says whether the kernel view is on, or why not.
 *
 * The run judges every JVM its command started: when the command exits, it
 * waits (--background-timeout) for all the command left running (run_left.h);
 * a JVM still running then, or a recording it cannot read, fails the run.
 * A run that judged no JVM says "nothing judged", never "gates passed", and
 * exits CLI_EXIT_NOTHING_JUDGED unless the command failed.
 *
 * The command runs in its own process group (run_job.h). SIGINT, SIGTERM and
 * SIGHUP to vtpin go to that whole group; vtpin then waits for it (10 s, then
 * SIGKILL of the group), stops the run's collector, reports what was recorded
 * and exits 128+signal. A SIGKILL of vtpin takes the group with it.
 *
 * A command whose JVMs load vtpin already (JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS,
 * _JAVA_OPTIONS, or an -agentpath among its own words) gets no second agent,
 * which would only stand down: the run reads that agent's record= files
 * written during the run and names its collector for the live view. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ask.h"
#include "attach_protocol.h"
#include "baseline.h"
#include "commands.h"
#include "common/path_trust.h"
#include "common/socket_path.h"
#include "common/units.h"
#include "gates.h"
#include "junit.h"
#include "paths.h"
#include "recording.h"
#include "report.h"
#include "run_agent_opts.h"
#include "run_deadlock.h"
#include "run_job.h"
#include "run_recordings.h"
#include "wire.h"

#define MAX_ALLOW 64

static const char usage[] =
    "usage: vtpin run [OPTIONS] -- COMMAND [ARGS...]\n"
    "Runs COMMAND with the vtpin agent in every JVM it starts (JAVA_TOOL_OPTIONS),\n"
    "prints the pins found and exits non-zero when a gate fails.\n"
    "  --fail-on-pins N          fail when at least N pins were found (1: any pin)\n"
    "  --fail-on-pinned-time DUR fail when the pins add up to at least DUR (e.g. 500ms)\n"
    "  --fail-on-native-block    fail when a carrier blocked inside native code\n"
    "  --fail-on-hogs N          fail when at least N carrier hogs were found (virtual threads that\n"
    "                            ran hog= long without unmounting; --allow applies to their frames)\n"
    "  --no-fail-on-deadlock     do not fail on a deadlock the agent found live (every carrier\n"
    "                            pinned behind a lock whose owner has no carrier: docs/deadlocks.md;\n"
    "                            on by default, --fail-on-deadlock says so)\n"
    "  --no-end-on-deadlock      let COMMAND run on after such a deadlock; by default the run ends\n"
    "                            it (it never ends by itself: SIGTERM, SIGKILL 10 s later) and the\n"
    "                            gates judge what it recorded (--end-on-deadlock says so)\n"
    "  --allow PATTERN           pins with a frame matching PATTERN (fnmatch on\n"
    "                            class.method, e.g. 'com.vendor.driver.*') do not count\n"
    "  --only PATTERN            count only pins (and hogs) whose culprit frame matches PATTERN\n"
    "                            (fnmatch on class.method, e.g. 'com.acme.*'; repeatable)\n"
    "  --write-baseline FILE     write the pin sites found (class, method, reason, native library;\n"
    "                            JSON, sorted) to FILE, to accept them with --baseline\n"
    "  --baseline FILE           pins at FILE's sites do not count, and a site not in FILE, or with\n"
    "                            more pins than FILE says past --baseline-tolerance, fails the run\n"
    "  --baseline-tolerance PCT  growth of a known site's pins accepted, in percent (default 100;\n"
    "                            none: pin counts are not compared)\n"
    "  --count-jdk-pins          also count pins whose every frame is the JDK's own\n"
    "                            (java., javax., jdk., sun., com.sun.; not counted by default)\n"
    "  --junit FILE              JUnit XML: one test case per pin site\n"
    "  --dir DIR                 where recordings go (default: a new /tmp/vtpin-run.XXXXXX)\n"
    "  --socket PATH             stream to this running collector instead of starting one\n"
    "  --no-collector            record only\n"
    "  --agent PATH              libvtpin.so (default: next to this vtpin)\n"
    "  --agent-options OPTS      more agent options (e.g. threshold=5ms)\n"
    "  --format text|json        the report (json: one vtpin.report/1 document per JVM)\n"
    "  --attach-on-pin[=DUR]     as root: the run's collector also watches COMMAND's JVMs that\n"
    "                            did not take JAVA_TOOL_OPTIONS, from the kernel (zero-touch), and\n"
    "                            loads the agent into one at its first pin of DUR (default: any);\n"
    "                            their pins, the kernel's before and the agent's after, are judged\n"
    "  --background-timeout DUR  after COMMAND exits, wait up to DUR (default 60s) for what it\n"
    "                            left running; JVMs still running then are not judged: the run fails\n"
    "Each run's recordings are RUNDIR/jvm-<run id>-<pid>.vtp; only this run's are judged.\n"
    "As root, the run's collector's kernel view (off-CPU state, syscall, kernel stack)\n"
    "is joined to the pins; the first lines say whether it is on.\n"
    "SIGINT, SIGTERM and SIGHUP go to COMMAND's process group; what still runs of it 10 s\n"
    "later is killed (SIGKILL; VTPIN_RUN_GRACE_MS changes the 10 s), then what ran is reported.\n"
    "Should vtpin be killed, so is the group.\n"
    "A COMMAND that loads vtpin itself (JAVA_TOOL_OPTIONS or -agentpath:...libvtpin.so) gets no\n"
    "second agent: the run reads that agent's record= files and names its collector.\n"
    "Exit status: 128+N when signal N stopped the run; else 3 when a gate failed or a JVM\n"
    "could not be judged; else COMMAND's own status when not 0; else 4 when no JVM ran with\n"
    "vtpin (nothing judged); else 0; 2 usage error.\n"
    "Example: vtpin run --fail-on-pins 1 --junit pins.xml -- mvn -q test\n";

struct run_config {
    struct gate_config gates;
    const char *allow[MAX_ALLOW];
    const char *only[MAX_ALLOW];
    struct baseline baseline; /* --baseline FILE, read before the command runs */
    const char *baseline_file, *write_baseline;
    const char *junit, *dir, *socket_arg, *agent, *extra, *format;
    const char *attach_on_pin; /* --attach-on-pin: "" (its first pin) or "=DUR"; NULL: off */
    int no_collector;
    int no_end_on_deadlock; /* --no-end-on-deadlock */
    int64_t background_ns;  /* --background-timeout */
    char **command;
};

/* What the run set up: paths, the collector it started. */
struct run_state {
    char exe[PATH_MAX], agent_path[PATH_MAX], run_dir[PATH_MAX], socket_path[PATH_MAX];
    char run_id[64];
    pid_t collector;
    int kernel_view; /* the run's collector has the kernel view on */
    int attached;    /* --attach-on-pin: its collector's recordings are read too (add_attached_jvms) */
    /* COMMAND's JVMs load vtpin already (found_in: where): no agent of ours; its
     * record= (%p as *) is read back instead, files written since the run started */
    const char *found_in;
    char found_word[2 * PATH_MAX];
    char record_glob[PATH_MAX + 96];
    struct timespec started;
};

static int file_exists(const char *path)
{
    return access(path, R_OK) == 0;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The baseline file at path into b. 0, or -1 with why said. */
static int read_baseline(const char *path, struct baseline *b, char *why, size_t cap)
{
    enum { LIMIT = 64 << 20 }; /* a baseline lists sites: more would be a wrong file */
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, cap, "%s", strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t len = 0, size = 0;
    const char *bad = NULL;
    while (!bad && !feof(f)) {
        if (len == size) {
            char *grown = size < LIMIT ? realloc(text, size = size ? 2 * size : 65536) : NULL;
            if (!grown) {
                bad = size >= LIMIT ? "over 64 MiB: not a baseline" : "out of memory";
                break;
            }
            text = grown;
        }
        len += fread(text + len, 1, size - len, f);
        if (ferror(f))
            bad = "read error";
    }
    fclose(f);
    int rc = -1;
    if (bad)
        snprintf(why, cap, "%s", bad);
    else
        rc = baseline_parse(text ? text : "", len, b, why, cap) ? -1 : 0;
    free(text);
    return rc;
}

/* Options into cfg: -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct run_config *cfg)
{
    static const struct option longopts[] = {{"fail-on-pins", required_argument, NULL, 'p'},
                                             {"fail-on-pinned-time", required_argument, NULL, 't'},
                                             {"fail-on-native-block", no_argument, NULL, 'n'},
                                             {"fail-on-hogs", required_argument, NULL, 'H'},
                                             {"fail-on-deadlock", no_argument, NULL, 'D'},
                                             {"no-fail-on-deadlock", no_argument, NULL, 'E'},
                                             {"end-on-deadlock", no_argument, NULL, 'K'},
                                             {"no-end-on-deadlock", no_argument, NULL, 'L'},
                                             {"allow", required_argument, NULL, 'a'},
                                             {"count-jdk-pins", no_argument, NULL, 'J'},
                                             {"only", required_argument, NULL, 'O'},
                                             {"baseline", required_argument, NULL, 'B'},
                                             {"write-baseline", required_argument, NULL, 'W'},
                                             {"baseline-tolerance", required_argument, NULL, 'T'},
                                             {"junit", required_argument, NULL, 'j'},
                                             {"dir", required_argument, NULL, 'd'},
                                             {"socket", required_argument, NULL, 's'},
                                             {"no-collector", no_argument, NULL, 'N'},
                                             {"agent", required_argument, NULL, 'A'},
                                             {"agent-options", required_argument, NULL, 'o'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"background-timeout", required_argument, NULL, 'b'},
                                             {"attach-on-pin", optional_argument, NULL, 'X'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'p':
            cfg->gates.fail_pins = strtoll(optarg, &end, 10);
            if (!*optarg || *end || cfg->gates.fail_pins < 0)
                return cli_usage_error("run", "--fail-on-pins wants a count, got '%s'", optarg);
            break;
        case 't':
            if (units_parse_duration(optarg, &cfg->gates.fail_pinned_ns))
                return cli_usage_error("run", "--fail-on-pinned-time wants a duration such as 500ms, got '%s'", optarg);
            break;
        case 'n':
            cfg->gates.fail_on_native_block = 1;
            break;
        case 'H': {
            long long v = strtoll(optarg, &end, 10);
            if (!*optarg || *end || v < 1)
                return cli_usage_error("run", "--fail-on-hogs wants a count of at least 1, got '%s'", optarg);
            cfg->gates.fail_hogs = (uint64_t)v;
            break;
        }
        case 'D':
        case 'E':
            cfg->gates.fail_on_deadlock = c == 'D';
            break;
        case 'K':
        case 'L':
            cfg->no_end_on_deadlock = c == 'L';
            break;
        case 'a':
            if (cfg->gates.n_allow == MAX_ALLOW)
                return cli_usage_error("run", "at most %d --allow patterns", MAX_ALLOW);
            cfg->allow[cfg->gates.n_allow++] = optarg;
            break;
        case 'J':
            cfg->gates.count_jdk_pins = 1;
            break;
        case 'O':
            if (cfg->gates.n_only == MAX_ALLOW)
                return cli_usage_error("run", "at most %d --only patterns", MAX_ALLOW);
            cfg->only[cfg->gates.n_only++] = optarg;
            break;
        case 'B':
            cfg->baseline_file = optarg;
            break;
        case 'W':
            cfg->write_baseline = optarg;
            break;
        case 'T': {
            long long v = strtoll(optarg, &end, 10);
            if (strcmp(optarg, "none") == 0)
                cfg->gates.baseline_tolerance_pct = -1;
            else if (!*optarg || *end || v < 0 || v > 100000)
                return cli_usage_error("run",
                                       "--baseline-tolerance wants a percentage from 0 to 100000 or none, got "
                                       "'%s'",
                                       optarg);
            else
                cfg->gates.baseline_tolerance_pct = (int)v;
            break;
        }
        case 'j':
            cfg->junit = optarg;
            break;
        case 'd':
            cfg->dir = optarg;
            break;
        case 's':
            if (socket_path_fits(optarg))
                return cli_usage_error("run",
                                       "--socket: '%s' is longer than a Unix socket path can be (at most %zu bytes)",
                                       optarg, socket_path_max());
            cfg->socket_arg = optarg;
            break;
        case 'N':
            cfg->no_collector = 1;
            break;
        case 'A':
            cfg->agent = optarg;
            break;
        case 'o': {
            char why[1024];
            if (run_agent_opts_check(optarg, why, sizeof(why)))
                return cli_usage_error("run", "%s", why);
            cfg->extra = optarg;
            break;
        }
        case 'f':
            cfg->format = optarg;
            if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0)
                return cli_usage_error("run", "--format is text or json");
            break;
        case 'b':
            if (units_parse_duration(optarg, &cfg->background_ns) || cfg->background_ns < 0)
                return cli_usage_error("run", "--background-timeout wants a duration such as 60s or 0, got '%s'",
                                       optarg);
            break;
        case 'X': {
            /* its value only as --attach-on-pin=DUR, read from the word itself (optional_argument) */
            const char *eq = strchr(argv[optind - 1], '=');
            int64_t ns;
            if (eq && (units_parse_duration(eq + 1, &ns) != 0 || ns > 3600000000000LL))
                return cli_usage_error("run", "--attach-on-pin: '%s' is not a duration of at most 1h", eq + 1);
            cfg->attach_on_pin = eq ? eq : "";
            break;
        }
        case 'h':
            fputs(usage, stdout);
            return CLI_EXIT_OK;
        default: /* getopt said what is wrong; the usage says the rest */
            fputs(usage, stderr);
            return CLI_EXIT_USAGE;
        }
    }
    if (cfg->attach_on_pin && (cfg->socket_arg || cfg->no_collector))
        return cli_usage_error("run", "--attach-on-pin needs the run's own collector: not with --socket or "
                                      "--no-collector");
    cfg->gates.allow = cfg->allow;
    cfg->gates.only = cfg->only;
    if (cfg->baseline_file) { /* a bad baseline is said before the command runs */
        char why[512];
        if (read_baseline(cfg->baseline_file, &cfg->baseline, why, sizeof(why)))
            return cli_usage_error("run", "--baseline %s: %s", cfg->baseline_file, why);
        cfg->gates.baseline = &cfg->baseline;
    }
    if (optind >= argc) {
        fputs("vtpin run: no command to run\n", stderr);
        fputs(usage, stderr);
        return CLI_EXIT_USAGE;
    }
    cfg->command = argv + optind;
    return -1;
}

/* --dir: made now (0700), or one of ours that no one else can write, never through a link,
 * and so are what an earlier run left in it (the collector's directory and socket): another
 * user who prepared it could listen there for the run's events or steer its writes through a
 * link. 0, or CLI_EXIT_FAIL with the reason on stderr. */
static int own_run_dir(const char *dir)
{
    char why[PATH_MAX + 640], path[PATH_MAX + 32];
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "vtpin run: cannot create %s: %s\n", dir, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    int rc = path_trust_check_own_dir(dir, geteuid(), why, sizeof(why));
    struct stat st;
    snprintf(path, sizeof(path), "%s/collector", dir);
    if (!rc && lstat(path, &st) == 0)
        rc = path_trust_check_own_dir(path, geteuid(), why, sizeof(why));
    snprintf(path, sizeof(path), "%s/collector.sock", dir);
    if (!rc && lstat(path, &st) == 0 && (S_ISLNK(st.st_mode) || path_trust_socket(&st, geteuid(), 0))) {
        snprintf(why, sizeof(why), "%s is %s, not a socket this user (uid %u) made (its owner: uid %u)", path,
                 S_ISLNK(st.st_mode) ? "a symbolic link" : "another's or not a socket", (unsigned)geteuid(),
                 (unsigned)st.st_uid);
        rc = -EPERM;
    }
    if (rc) {
        fprintf(stderr,
                "vtpin run: --dir %s: %s: refusing to run there (give a new path, or a directory of yours "
                "that only you can write)\n",
                dir, why);
        return CLI_EXIT_FAIL;
    }
    return 0;
}

/* This vtpin, the agent, the run directory and this run's id: 0, or
 * CLI_EXIT_FAIL with the reason on stderr. */
static int prepare_paths(const struct run_config *cfg, struct run_state *st)
{
    ssize_t n = readlink("/proc/self/exe", st->exe, sizeof(st->exe) - 1);
    if (n <= 0) {
        fprintf(stderr, "vtpin run: cannot find my own executable: %s\n", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    st->exe[n] = '\0';
    if (cfg->agent)
        snprintf(st->agent_path, sizeof(st->agent_path), "%s", cfg->agent);
    else if (attach_agent_default(st->exe, file_exists, st->agent_path, sizeof(st->agent_path))) {
        fprintf(stderr, "vtpin run: no agent library (looked for %s); use --agent PATH\n", st->agent_path);
        return CLI_EXIT_FAIL;
    }
    if (cfg->dir) {
        if (own_run_dir(cfg->dir))
            return CLI_EXIT_FAIL;
        snprintf(st->run_dir, sizeof(st->run_dir), "%s", cfg->dir);
    } else {
        snprintf(st->run_dir, sizeof(st->run_dir), "/tmp/vtpin-run.XXXXXX");
        if (!mkdtemp(st->run_dir)) {
            fprintf(stderr, "vtpin run: cannot create a run directory: %s\n", strerror(errno));
            return CLI_EXIT_FAIL;
        }
    }
    if (strpbrk(st->run_dir, " \t,%") || strpbrk(st->agent_path, " \t,")) {
        fprintf(stderr, "vtpin run: paths with spaces, commas or %% cannot go through JAVA_TOOL_OPTIONS: %s\n",
                st->run_dir);
        return CLI_EXIT_FAIL;
    }
    /* unique among runs sharing a directory: start time and our pid */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(st->run_id, sizeof(st->run_id), "%lld%03ld-%ld", (long long)now.tv_sec, now.tv_nsec / 1000000L,
             (long)getpid());
    return 0;
}

/* The collector for the run, its log lines out of the command's output; it
 * dies with vtpin should vtpin be killed outright. */
static pid_t start_collector(const char *exe, const char *socket_path, const char *dir, const char *attach_on_pin)
{
    char jvms[48], attach[64];
    /* the command's JVMs only: they carry the agent (JAVA_TOOL_OPTIONS); the host's others are not its.
     * With --attach-on-pin, zero-touch watches those of them that did not take it (vtpin run is their
     * subreaper: each stays a descendant of this process), and the agent comes at a pin */
    snprintf(jvms, sizeof(jvms), attach_on_pin ? "--jvms=under:%ld" : "--jvms=agents", (long)getpid());
    snprintf(attach, sizeof(attach), "--attach-on-pin%s", attach_on_pin ? attach_on_pin : "");
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(0);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 1);
        /* --record-max=0: the gates judge every pin, so the run's recordings never rotate */
        if (attach_on_pin)
            execl(exe, "vtpin", "collector", "--socket", socket_path, "--dir", dir, "--record-max=0", jvms,
                  "--kernel=on", attach, (char *)NULL);
        else
            execl(exe, "vtpin", "collector", "--socket", socket_path, "--dir", dir, "--record-max=0", jvms,
                  (char *)NULL);
        _exit(CLI_EXIT_EXEC);
    }
    if (pid < 0)
        return -1;
    for (int i = 0; i < 100 && !file_exists(socket_path); i++) /* up to 2 s for the socket */
        sleep_ms(20);
    return pid;
}

/* The socket the agents stream to: the one given, or a collector started
 * for the run in RUNDIR (none with --no-collector). */
static void setup_collector(const struct run_config *cfg, struct run_state *st)
{
    st->collector = 0;
    st->socket_path[0] = '\0';
    if (cfg->socket_arg) {
        snprintf(st->socket_path, sizeof(st->socket_path), "%s", cfg->socket_arg);
        return;
    }
    if (cfg->no_collector)
        return;
    char collector_dir[PATH_MAX + 16];
    int n = snprintf(st->socket_path, sizeof(st->socket_path), "%s/collector.sock", st->run_dir);
    if (n < 0 || (size_t)n >= sizeof(st->socket_path) || socket_path_fits(st->socket_path)) {
        fprintf(stderr,
                "vtpin run: %s/collector.sock is too long for a Unix socket (at most %zu bytes): "
                "no collector for this run, recording only\n",
                st->run_dir, socket_path_max());
        st->socket_path[0] = '\0';
        return;
    }
    snprintf(collector_dir, sizeof(collector_dir), "%s/collector", st->run_dir);
    st->collector = start_collector(st->exe, st->socket_path, collector_dir, cfg->attach_on_pin);
    if (st->collector <= 0 || !file_exists(st->socket_path)) {
        fprintf(stderr, "vtpin run: the collector did not start; recording only\n");
        st->socket_path[0] = '\0';
    }
}

/* One line: is the run's collector's kernel view on, and if not, why
 * (its status, kernel_view). Sets st->kernel_view. */
static void say_kernel_view(const struct run_config *cfg, struct run_state *st)
{
    st->kernel_view = 0;
    if (cfg->socket_arg) {
        fprintf(stderr, "vtpin run: kernel view off: not joined with a collector given by --socket (its "
                        "recordings are its own)\n");
        return;
    }
    if (st->collector <= 0) {
        fprintf(stderr, "vtpin run: kernel view off: no collector for this run\n");
        return;
    }
    char *json = NULL;
    struct jsonread *tree = NULL;
    if (ask_collector("run", st->socket_path, VTPIN__V1__QUERY__KIND__STATUS, 0, 10000, &json, &tree) != 0) {
        fprintf(stderr, "vtpin run: kernel view off: the run's collector did not answer\n");
        return;
    }
    const struct jsonread *kv = jsonread_get(jsonread_get(tree, "collector"), "kernel_view");
    if (jsonread_is_null(kv))
        fprintf(stderr, "vtpin run: kernel view off: this vtpin was built without it\n");
    else if (jsonread_bool(jsonread_get(kv, "enabled"), 0)) {
        st->kernel_view = 1;
        fprintf(stderr, "vtpin run: kernel view on: pins get what the kernel saw of their carrier\n");
    } else
        fprintf(stderr, "vtpin run: kernel view off: %s\n", jsonread_str(jsonread_get(kv, "reason"), "not said"));
    jsonread_free(tree);
    free(json);
}

static void stop_collector(struct run_state *st)
{
    if (st->collector <= 0)
        return;
    kill(st->collector, SIGTERM);
    while (waitpid(st->collector, NULL, 0) < 0 && errno == EINTR)
        ;
    st->collector = 0;
}

static void export_agent_options(const struct run_config *cfg, const struct run_state *st)
{
    char tool_options[4 * PATH_MAX + 1024];
    const char *prev = getenv("JAVA_TOOL_OPTIONS");
    /* record_max=0: the gate judges every pin, so the recording is never rotated away */
    snprintf(tool_options, sizeof(tool_options),
             "%s%s-agentpath:%s=record=%s/jvm-%s-%%p.vtp,record_max=0,quiet%s%s%s%s", prev ? prev : "",
             prev && *prev ? " " : "", st->agent_path, st->run_dir, st->run_id, st->socket_path[0] ? ",collector=" : "",
             st->socket_path, cfg->extra ? "," : "", cfg->extra ? cfg->extra : "");
    setenv("JAVA_TOOL_OPTIONS", tool_options, 1);
}

/* "-agentpath:PATH[=OPTIONS]" of libvtpin.so (libvtpin-*.so, libvtpin.so.*, or the
 * agent this vtpin would add), or "-agentlib:vtpin[=OPTIONS]": 1 and *options. */
static int vtpin_agent_word(const char *word, const char *ours, const char **options)
{
    int lib = strncmp(word, "-agentlib:", 10) == 0;
    if (!lib && strncmp(word, "-agentpath:", 11) != 0)
        return 0;
    const char *spec = word + (lib ? 10 : 11);
    size_t n = strcspn(spec, "=");
    *options = spec[n] ? spec + n + 1 : "";
    if (lib)
        return n == 5 && strncmp(spec, "vtpin", 5) == 0;
    char path[PATH_MAX], real[PATH_MAX], ours_real[PATH_MAX];
    snprintf(path, sizeof(path), "%.*s", (int)n, spec);
    if (realpath(path, real) && realpath(ours, ours_real) && strcmp(real, ours_real) == 0)
        return 1;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strcmp(base, "libvtpin.so") == 0 || strncmp(base, "libvtpin-", 9) == 0 ||
           strncmp(base, "libvtpin.so.", 12) == 0;
}

/* The first vtpin agent among text's words (split at white space, as the JVM
 * splits JAVA_TOOL_OPTIONS) into st->found_word: 1 when found. */
static int find_agent_in(const char *text, const char *where, struct run_state *st)
{
    for (const char *w = text; w && *w;) {
        w += strspn(w, " \t\n");
        size_t n = strcspn(w, " \t\n");
        char word[sizeof(st->found_word)];
        const char *options;
        snprintf(word, sizeof(word), "%.*s", (int)n, w);
        if (n && vtpin_agent_word(word, st->agent_path, &options)) {
            snprintf(st->found_word, sizeof(st->found_word), "%s", word);
            st->found_in = where;
            return 1;
        }
        w += n;
    }
    return 0;
}

/* Does COMMAND load vtpin itself: in the environment the JVMs read, or on its own command line? */
static int find_existing_agent(const struct run_config *cfg, struct run_state *st)
{
    static const char *const vars[] = {"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        if (find_agent_in(getenv(vars[i]), vars[i], st))
            return 1;
    for (char **a = cfg->command; a && *a; a++)
        if (find_agent_in(*a, "the command line", st))
            return 1;
    return 0;
}

/* COMMAND's JVMs have vtpin already: a second agent would stand down, so none
 * is added. The run reads that agent's record= and watches its collector; what
 * it cannot do is said. */
static void reuse_existing_agent(const struct run_config *cfg, struct run_state *st)
{
    const char *options = "";
    vtpin_agent_word(st->found_word, st->agent_path, &options);
    fprintf(stderr,
            "vtpin run: COMMAND already loads vtpin (%s: %s): vtpin run adds no second agent and uses that one\n",
            st->found_in, st->found_word);
    char record[PATH_MAX], collector[PATH_MAX];
    if (run_agent_option(options, "record", record, sizeof(record)) && record[0]) {
        size_t o = 0;
        for (const char *r = record; *r && o + 2 < sizeof(st->record_glob); r++) {
            if (r[0] == '%' && r[1] == 'p') { /* the agent's %p: any JVM's pid */
                st->record_glob[o++] = '*';
                r++;
            } else
                st->record_glob[o++] = *r;
        }
        st->record_glob[o] = '\0';
        fprintf(stderr, "vtpin run: the report and the gates: its recordings (record=%s) written during this run\n",
                record);
    } else
        fprintf(stderr, "vtpin run: it records nowhere vtpin run can read (no record= in its options): no report "
                        "and no gates for its JVMs; give it record=FILE (%%p: the pid), or take it out and let vtpin "
                        "run add its own\n");
    if (!run_agent_option(options, "collector", collector, sizeof(collector)))
        fprintf(stderr, "vtpin run: no live view: it streams to no collector (collector=PATH in its options)\n");
    else if (collector[0]) {
        snprintf(st->socket_path, sizeof(st->socket_path), "%s", collector);
        fprintf(stderr, "vtpin run: watch live: vtpin top --socket %s (the collector it streams to)\n", collector);
    } else
        fprintf(stderr, "vtpin run: watch live: vtpin top (it streams to the default collector)\n");
    if (cfg->extra || cfg->socket_arg || cfg->no_collector)
        fprintf(stderr, "vtpin run: --agent-options, --socket and --no-collector do not apply to an agent vtpin run "
                        "did not add: ignored\n");
    fprintf(stderr, "vtpin run: kernel view off: no collector of this run's own\n");
}

/* What the command left running past --background-timeout, one line each:
 * its JVMs are not judged (stdout, by the verdict); the rest may still start
 * one (stderr). */
static void say_left(const struct run_config *cfg, const struct run_left *left)
{
    char waited[64];
    units_format_duration(cfg->background_ns, waited, sizeof(waited));
    for (size_t i = 0; i < left->n && i < RUN_LEFT_MAX; i++) {
        const struct run_left_proc *p = &left->procs[i];
        if (p->jvm)
            printf("vtpin run: not judged: JVM %d still running %s after the command exited: %s\n", (int)p->pid, waited,
                   p->cmdline);
        else
            fprintf(stderr,
                    "vtpin run: still running %s after the command exited, not a JVM: pid %d: %s (left be; a JVM "
                    "it starts from now on is not judged)\n",
                    waited, (int)p->pid, p->cmdline);
    }
    if (left->n > RUN_LEFT_MAX)
        printf("vtpin run: and %zu more process(es) of the command still running, JVMs or not\n",
               left->n - RUN_LEFT_MAX);
}

/* --baseline, --write-baseline: the sites of the run's pins, a recording at a time, into out.
 * 0 or -ENOMEM. */
static int collect_sites(const struct gate_config *gates, struct run_recordings *rs, struct baseline *out)
{
    for (size_t i = 0; i < rs->n; i++) {
        struct recording *r;
        if (run_recordings_load(rs, i, &r))
            continue; /* said, and counted as not judged */
        int rc = gates_run_sites(gates, &r, 1, out);
        recording_free(r);
        if (rc)
            return rc;
    }
    return 0;
}

/* Each recording counted against the gates and its sessions' reports printed. */
static void judge_each(const struct run_config *cfg, const struct gate_config *gates, struct run_recordings *rs,
                       struct gate_result *result)
{
    struct report_options ro = {.top = REPORT_TEXT_TOP_DEFAULT};
    gates_begin(result);
    rs->sessions = rs->joined = 0;
    for (size_t i = 0; i < rs->n; i++) {
        struct recording *r;
        if (run_recordings_load(rs, i, &r))
            continue;
        if (gates_count(gates, r, result)) { /* not judged: it fails the run (gates_unjudged) */
            char why[PATH_MAX + 64];
            snprintf(why, sizeof(why), "%s: out of memory to count its pins", r->path);
            run_recordings_not_judged(rs, i, why);
        }
        for (ro.session = 0; ro.session < r->n_sessions; ro.session++) {
            if (strcmp(cfg->format, "json") == 0)
                report_json(stdout, r, &ro);
            else
                report_text(stdout, r, &ro);
        }
        recording_free(r);
    }
    run_recordings_say_kernel(rs);
}

/* --junit FILE: a case for the gates, then each recording's. 0 or -errno. */
static int write_junit(const char *path, const struct gate_config *gates, const struct gate_result *result,
                       struct run_recordings *rs)
{
    struct junit *j = NULL;
    int rc = junit_new(&j);
    for (size_t i = 0; !rc && i < rs->n; i++) {
        struct recording *r;
        if (rs->items[i].failed)
            continue; /* not judged, as the gates' case says */
        if ((rc = run_recordings_load(rs, i, &r)))
            break;
        rc = junit_add(j, gates, result, r);
        recording_free(r);
    }
    FILE *f = NULL;
    if (!rc && !(f = fopen(path, "w")))
        rc = -errno;
    if (f) {
        int written = junit_write(f, j, result), closed = fclose(f) ? -errno : 0;
        rc = written ? written : closed;
    }
    junit_free(j);
    return rc;
}

/* Every session of every recording, then the verdict (what could not be
 * judged fails it: left, unreadable recordings); the exit status. */
static int report_run(const struct run_config *cfg, struct run_recordings *rs, int status, const struct run_left *left)
{
    struct gate_result result;
    struct gate_config gates = cfg->gates;
    struct baseline sites = {0};
    int no_sites = (cfg->baseline_file || cfg->write_baseline) && collect_sites(&gates, rs, &sites);
    if (no_sites)
        fprintf(stderr, "vtpin run: out of memory for the pin sites: %s\n",
                cfg->baseline_file ? "the run is not judged against --baseline, and fails" : "no baseline written");
    else if (cfg->baseline_file)
        gates.run_sites = &sites;
    judge_each(cfg, &gates, rs, &result);
    gates_judge(&gates, &result);
    size_t nrecs = run_recordings_judged(rs);
    /* past RUN_LEFT_MAX the rest may be JVMs: counted as such, not to pass over them */
    size_t unjudged = left->jvms + (left->n > RUN_LEFT_MAX ? left->n - RUN_LEFT_MAX : 0);
    gates_unjudged(&result, unjudged, cfg->background_ns, rs->unreadable, no_sites && cfg->baseline_file);
    char a[64], b[64];
    printf("\nvtpin run: %zu JVM(s), %" PRIu64 " pin(s) counted (%s pinned), %" PRIu64 " allowed, %" PRIu64
           " JDK-internal, %" PRIu64 " native block(s), %" PRIu64 " carrier hog(s) (%s), %" PRIu64
           " deadlock(s); command exited %d\n",
           nrecs, result.pins, units_format_duration(result.pinned_ns, a, sizeof(a)), result.allowed,
           result.jdk_internal, result.native_blocks, result.hogs,
           units_format_duration(result.hogged_ns, b, sizeof(b)), result.deadlocks, status);
    if (cfg->gates.n_only)
        printf("vtpin run: %" PRIu64 " pin(s) and hog(s) blamed outside --only, not counted\n", result.not_only);
    if (cfg->baseline_file)
        printf("vtpin run: --baseline %s: %" PRIu64 " pin(s) at its %zu site(s) accepted, %zu site(s) new or "
               "grown\n",
               cfg->baseline_file, result.baselined, cfg->baseline.n, result.sites_failed);
    say_left(cfg, left);
    int stop_signal = run_job_stop_signal();
    if (stop_signal)
        printf("vtpin run: stopped by signal %d (%s) before the command finished; the gates saw what ran until "
               "then\n",
               stop_signal, strsignal(stop_signal));
    else if (run_job_ended())
        printf("vtpin run: ended the command: a deadlock found live never ends by itself (--no-end-on-deadlock "
               "lets it run); the gates saw what ran until then\n");
    if (result.failed)
        printf("vtpin run: FAILED\n%s\n", result.why);
    else if (!nrecs)
        printf("vtpin run: nothing judged: no JVM ran with vtpin, no gate applied (exit status %d unless the "
               "command failed)\n",
               CLI_EXIT_NOTHING_JUDGED);
    else
        printf("vtpin run: gates passed\n");
    int rc = cfg->junit ? write_junit(cfg->junit, &gates, &result, rs) : 0;
    if (rc) {
        fprintf(stderr, "vtpin run: cannot write %s: %s\n", cfg->junit, strerror(-rc));
        status = status ? status : CLI_EXIT_FAIL;
    }
    if (cfg->write_baseline && no_sites) {
        status = status ? status : CLI_EXIT_FAIL; /* a baseline missing sites would accept less than it says */
    } else if (cfg->write_baseline) {
        FILE *f = fopen(cfg->write_baseline, "w");
        int failed = !f || baseline_write(f, &sites);
        if ((f && fclose(f)) || failed) {
            fprintf(stderr, "vtpin run: cannot write the baseline %s: %s\n", cfg->write_baseline, strerror(errno));
            status = status ? status : CLI_EXIT_FAIL;
        } else {
            printf("vtpin run: wrote the baseline %s: %zu pin site(s)\n", cfg->write_baseline, sites.n);
        }
    }
    baseline_free(&sites);
    fflush(stdout);
    return gates_exit_status(&result, nrecs, status, stop_signal);
}

/* Everything before the command: the run's collector (or --socket's), the
 * agent in JAVA_TOOL_OPTIONS, and the lines saying where it records and
 * whether the kernel view is on. 0, or -1 when --attach-on-pin cannot be had (said). */
static int start_run(const struct run_config *cfg, struct run_state *st)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1); /* the command's orphans come to us: run_job_exec can reap them */
    clock_gettime(CLOCK_REALTIME, &st->started);
    if (find_existing_agent(cfg, st)) {
        if (cfg->attach_on_pin) {
            fprintf(stderr,
                    "vtpin run: --attach-on-pin: COMMAND loads vtpin itself (%s); its JVMs have the agent "
                    "already\n",
                    st->found_in);
            return -1;
        }
        reuse_existing_agent(cfg, st);
        return 0;
    }
    setup_collector(cfg, st);
    if (cfg->attach_on_pin && !st->socket_path[0]) {
        fprintf(stderr, "vtpin run: --attach-on-pin: the run's collector did not start with the kernel view (it "
                        "needs root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE: its line above says why)\n");
        return -1;
    }
    export_agent_options(cfg, st);
    fprintf(stderr, "vtpin run: recording into %s (run %s)%s%s\n", st->run_dir, st->run_id,
            st->socket_path[0] ? "; watch live: vtpin top --socket " : "", st->socket_path);
    say_kernel_view(cfg, st);
    st->attached = cfg->attach_on_pin != NULL;
    if (cfg->attach_on_pin)
        fprintf(stderr, "vtpin run: attach on pin: the command's JVMs without the agent are watched from the "
                        "kernel, and get the agent at a pin\n");
    return 0;
}

/* parse, set up, run the command, then judge what its JVMs recorded */
int run_main(int argc, char **argv)
{
    struct run_config cfg = {
        .gates = {.fail_pins = -1, .fail_pinned_ns = -1, .fail_on_deadlock = 1, .baseline_tolerance_pct = 100},
        .format = "text",
        .background_ns = RUN_JOB_BACKGROUND_MS * 1000000LL};
    struct run_state st;
    int rc = parse_options(argc, argv, &cfg);
    if (rc >= 0) {
        baseline_free(&cfg.baseline);
        return rc;
    }
    memset(&st, 0, sizeof(st));
    if (prepare_paths(&cfg, &st)) {
        baseline_free(&cfg.baseline);
        return CLI_EXIT_FAIL;
    }
    run_job_catch_signals();
    if (start_run(&cfg, &st) != 0) {
        stop_collector(&st);
        baseline_free(&cfg.baseline);
        run_job_release_signals();
        return CLI_EXIT_FAIL;
    }

    int sig = run_job_stop_signal(); /* one that came before the command started: do not start it */
    static struct run_left left;     /* static: RUN_LEFT_MAX processes' command lines */
    struct run_job_wait wait = {.background_ms = cfg.background_ns / 1000000, .collector = st.collector};
    /* a deadlock found live ends COMMAND, where the run sees its JVMs' collector */
    struct run_deadlock_watch watch = {.socket = st.socket_path, .own_collector = st.collector > 0};
    if (!cfg.no_end_on_deadlock && st.socket_path[0]) {
        wait.should_end = run_deadlock_should_end;
        wait.should_end_arg = &watch;
    }
    memset(&left, 0, sizeof(left));
    int status = sig ? CLI_EXIT_SIGNAL_BASE + sig : run_job_exec(cfg.command, &wait, &left);
    if (st.collector > 0) /* a recording of the run's collector that a write error stopped (a full disk) */
        ask_say_recording_stops("run", st.socket_path, stdout);
    stop_collector(&st);
    struct run_where where = {.run_dir = st.run_dir,
                              .run_id = st.run_id,
                              .own_glob = st.found_in ? st.record_glob : NULL,
                              .started = st.started,
                              .kernel_view = st.kernel_view,
                              .attached = st.attached};
    struct run_recordings rs;
    if (run_recordings_find(&where, &rs)) {
        fprintf(stderr, "vtpin run: out of memory for the run's recordings: not judged\n");
        status = status ? status : CLI_EXIT_FAIL;
    } else {
        rs.every_pin = strcmp(cfg.format, "json") == 0; /* its report lists every pin */
        status = report_run(&cfg, &rs, status, &left);
    }
    run_recordings_free(&rs);
    baseline_free(&cfg.baseline);
    run_job_release_signals();
    return status;
}
