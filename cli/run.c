/* vtpin run [options] -- COMMAND...: runs a load test or a test suite with
 * vtpin in every JVM it starts (through JAVA_TOOL_OPTIONS, so mvn, gradle and
 * shell wrappers work), prints what was found and applies the gates.
 *
 * Each JVM records to RUNDIR/jvm-<pid>.vtp, the source of the report and of
 * the verdict (never JFR, never the collector); the agents also stream to a
 * collector (started for the run, or an existing one with --socket) so the
 * run can be watched live with `vtpin top --socket ...`. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach_protocol.h"
#include "commands.h"
#include "gates.h"
#include "junit.h"
#include "recording.h"
#include "report.h"
#include "units.h"

#define EXIT_GATE 3
#define MAX_ALLOW 64

static const char usage[] =
    "usage: vtpin run [OPTIONS] -- COMMAND [ARGS...]\n"
    "Runs COMMAND with the vtpin agent in every JVM it starts (JAVA_TOOL_OPTIONS),\n"
    "prints the pins found and exits non-zero when a gate fails.\n"
    "  --fail-on-pins N          fail when at least N pins were found (1: any pin)\n"
    "  --fail-on-pinned-time DUR fail when the pins add up to at least DUR (e.g. 500ms)\n"
    "  --fail-on-native-block    fail when a carrier blocked inside native code\n"
    "  --allow PATTERN           pins with a frame matching PATTERN (fnmatch on\n"
    "                            class.method, e.g. 'com.vendor.driver.*') do not count\n"
    "  --junit FILE              JUnit XML: one test case per pin site\n"
    "  --dir DIR                 where recordings go (default: a new /tmp/vtpin-run.XXXXXX)\n"
    "  --socket PATH             stream to this running collector instead of starting one\n"
    "  --no-collector            record only\n"
    "  --agent PATH              libvtpin.so (default: next to this vtpin)\n"
    "  --agent-options OPTS      more agent options (e.g. threshold=5ms)\n"
    "  --format text|json        the report (json: one vtpin.report/1 document per JVM)\n"
    "Exit status: 3 when a gate failed; else COMMAND's own status.\n"
    "Example: vtpin run --fail-on-pins 1 --junit pins.xml -- mvn -q test\n";

static int file_exists(const char *path)
{
    return access(path, R_OK) == 0;
}

static pid_t start_collector(const char *exe, const char *socket_path, const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 1); /* the collector's log lines would mix with the command's output */
        execl(exe, "vtpin", "collector", "--socket", socket_path, "--dir", dir, (char *)NULL);
        _exit(127);
    }
    if (pid < 0)
        return -1;
    for (int i = 0; i < 100 && !file_exists(socket_path); i++) { /* up to 2 s for the socket */
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    return pid;
}

static int run_command(char **argv)
{
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "vtpin run: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (pid < 0)
        return -1;
    /* The command owns the terminal: Ctrl-C goes to it; we wait for it to finish. */
    signal(SIGINT, SIG_IGN);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    signal(SIGINT, SIG_DFL);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int run_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"fail-on-pins", required_argument, NULL, 'p'}, {"fail-on-pinned-time", required_argument, NULL, 't'},
        {"fail-on-native-block", no_argument, NULL, 'n'}, {"allow", required_argument, NULL, 'a'},
        {"junit", required_argument, NULL, 'j'},         {"dir", required_argument, NULL, 'd'},
        {"socket", required_argument, NULL, 's'},        {"no-collector", no_argument, NULL, 'N'},
        {"agent", required_argument, NULL, 'A'},         {"agent-options", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    struct gate_config gates = {.fail_pins = -1, .fail_pinned_ns = -1};
    const char *allow[MAX_ALLOW];
    const char *junit = NULL, *dir = NULL, *socket_arg = NULL, *agent = NULL, *extra = NULL, *format = "text";
    int no_collector = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'p':
            gates.fail_pins = strtoll(optarg, &end, 10);
            if (!*optarg || *end || gates.fail_pins < 0) {
                fprintf(stderr, "vtpin run: --fail-on-pins wants a count, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 't':
            if (units_parse_duration(optarg, &gates.fail_pinned_ns)) {
                fprintf(stderr, "vtpin run: --fail-on-pinned-time wants a duration such as 500ms, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'n':
            gates.fail_on_native_block = 1;
            break;
        case 'a':
            if (gates.n_allow == MAX_ALLOW) {
                fprintf(stderr, "vtpin run: at most %d --allow patterns\n", MAX_ALLOW);
                return 2;
            }
            allow[gates.n_allow++] = optarg;
            break;
        case 'j':
            junit = optarg;
            break;
        case 'd':
            dir = optarg;
            break;
        case 's':
            socket_arg = optarg;
            break;
        case 'N':
            no_collector = 1;
            break;
        case 'A':
            agent = optarg;
            break;
        case 'o':
            extra = optarg;
            break;
        case 'f':
            format = optarg;
            if (strcmp(format, "text") && strcmp(format, "json")) {
                fprintf(stderr, "vtpin run: --format is text or json\n");
                return 2;
            }
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    gates.allow = allow;
    if (optind >= argc) {
        fputs("vtpin run: no command to run\n", stderr);
        fputs(usage, stderr);
        return 2;
    }
    char **command = argv + optind;

    char exe[PATH_MAX], agent_path[PATH_MAX], run_dir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        fprintf(stderr, "vtpin run: cannot find my own executable: %s\n", strerror(errno));
        return 1;
    }
    exe[n] = '\0';
    if (agent)
        snprintf(agent_path, sizeof(agent_path), "%s", agent);
    else if (attach_agent_default(exe, file_exists, agent_path, sizeof(agent_path))) {
        fprintf(stderr, "vtpin run: no agent library (looked for %s); use --agent PATH\n", agent_path);
        return 1;
    }
    if (dir) {
        if (mkdir(dir, 0700) && errno != EEXIST) {
            fprintf(stderr, "vtpin run: cannot create %s: %s\n", dir, strerror(errno));
            return 1;
        }
        snprintf(run_dir, sizeof(run_dir), "%s", dir);
    } else {
        snprintf(run_dir, sizeof(run_dir), "/tmp/vtpin-run.XXXXXX");
        if (!mkdtemp(run_dir)) {
            fprintf(stderr, "vtpin run: cannot create a run directory: %s\n", strerror(errno));
            return 1;
        }
    }
    if (strpbrk(run_dir, " \t,") || strpbrk(agent_path, " \t,")) {
        fprintf(stderr, "vtpin run: paths with spaces or commas cannot go through JAVA_TOOL_OPTIONS: %s\n", run_dir);
        return 1;
    }

    char socket_path[PATH_MAX] = "";
    pid_t collector = 0;
    if (socket_arg) {
        snprintf(socket_path, sizeof(socket_path), "%s", socket_arg);
    } else if (!no_collector) {
        char collector_dir[PATH_MAX];
        if (strlen(run_dir) + 32 > sizeof(socket_path)) {
            fprintf(stderr, "vtpin run: run directory path too long: %s\n", run_dir);
            return 1;
        }
        memcpy(socket_path, run_dir, strlen(run_dir) + 1);
        strcat(socket_path, "/collector.sock");
        memcpy(collector_dir, run_dir, strlen(run_dir) + 1);
        strcat(collector_dir, "/collector");
        collector = start_collector(exe, socket_path, collector_dir);
        if (collector <= 0 || !file_exists(socket_path))
            fprintf(stderr, "vtpin run: the collector did not start; recording only\n");
    }

    char tool_options[3 * PATH_MAX + 1024];
    const char *prev = getenv("JAVA_TOOL_OPTIONS");
    snprintf(tool_options, sizeof(tool_options), "%s%s-agentpath:%s=record=%s/jvm-%%p.vtp,quiet%s%s%s%s",
             prev ? prev : "", prev && *prev ? " " : "", agent_path, run_dir, socket_path[0] ? ",collector=" : "",
             socket_path, extra ? "," : "", extra ? extra : "");
    setenv("JAVA_TOOL_OPTIONS", tool_options, 1);
    fprintf(stderr, "vtpin run: recording into %s%s%s\n", run_dir, socket_path[0] ? "; watch live: vtpin top --socket " : "",
            socket_path);

    int status = run_command(command);
    if (collector > 0) {
        kill(collector, SIGTERM);
        waitpid(collector, NULL, 0);
    }

    char pattern[PATH_MAX + 16];
    snprintf(pattern, sizeof(pattern), "%s/jvm-*.vtp", run_dir);
    glob_t g;
    memset(&g, 0, sizeof(g));
    glob(pattern, 0, NULL, &g);
    struct recording **recs = calloc(g.gl_pathc ? g.gl_pathc : 1, sizeof(*recs));
    size_t nrecs = 0;
    for (size_t i = 0; recs && i < g.gl_pathc; i++) {
        char err[512];
        if (recording_load(g.gl_pathv[i], &recs[nrecs], err, sizeof(err)) == 0)
            nrecs++;
        else
            fprintf(stderr, "vtpin run: %s\n", err);
    }
    globfree(&g);

    if (nrecs == 0)
        fprintf(stderr, "vtpin run: no JVM ran with vtpin (no recording in %s)\n", run_dir);
    struct gate_result result;
    gates_evaluate(&gates, recs, nrecs, &result);
    struct report_options ro = {.top = REPORT_TEXT_TOP_DEFAULT};
    for (size_t i = 0; i < nrecs; i++) {
        for (size_t s = 0; s < recs[i]->n_sessions; s++) {
            ro.session = s;
            if (strcmp(format, "json") == 0)
                report_json(stdout, recs[i], &ro);
            else
                report_text(stdout, recs[i], &ro);
        }
    }
    char a[64];
    printf("\nvtpin run: %zu JVM(s), %" PRIu64 " pin(s) counted (%s pinned), %" PRIu64 " allowed, %" PRIu64
           " native block(s); command exited %d\n",
           nrecs, result.pins, report_format_duration(result.pinned_ns, a, sizeof(a)), result.allowed,
           result.native_blocks, status);
    if (result.failed)
        printf("vtpin run: FAILED\n%s\n", result.why);
    else
        printf("vtpin run: gates passed\n");
    if (junit) {
        FILE *f = fopen(junit, "w");
        if (!f || junit_write(f, &gates, &result, recs, nrecs) || fclose(f)) {
            fprintf(stderr, "vtpin run: cannot write %s: %s\n", junit, strerror(errno));
            status = status ? status : 1;
        }
    }
    for (size_t i = 0; i < nrecs; i++)
        recording_free(recs[i]);
    free(recs);
    return result.failed ? EXIT_GATE : status;
}
