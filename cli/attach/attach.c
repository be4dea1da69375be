/* vtpin attach: loads the agent into a running HotSpot JVM through the
 * dynamic attach protocol (attach_protocol.h, attach_listener.h), with no
 * JDK tool needed. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach_creds.h"
#include "attach_listener.h"
#include "attach_proc.h"
#include "attach_protocol.h"
#include "commands.h"
#include "common/agent_codes.h"
#include "common/units.h"
#include "common/utf8.h"

#define DEFAULT_TIMEOUT_NS (10LL * 1000000000LL)

static const char attach_usage[] =
    "usage: vtpin attach PID [OPTIONS] [--agent PATH] [--timeout DUR] [--verbose]\n"
    "       vtpin attach PID stop\n"
    "\n"
    "Loads the vtpin agent into the running HotSpot JVM PID (JDK 21+) through\n"
    "HotSpot's dynamic attach protocol, as 'jcmd PID JVMTI.agent_load' would, with\n"
    "no JDK tool: it also reaches a JVM in a container from the host. Run it as the\n"
    "JVM's user or as root.\n"
    "\n"
    "OPTIONS is the agent's option string, as after -agentpath:libvtpin.so=\n"
    "(e.g. record=/tmp/app.vtp,trace); its paths are the JVM's, in its filesystem.\n"
    "'stop' makes the loaded agent turn its events off and flush its recording; a\n"
    "later attach starts it again with new options (not carriers=, ring= or exact\n"
    "occupancy: fixed at the first load). An attach while it runs fails: stop it first.\n"
    "\n"
    "options:\n"
    "  -a, --agent=PATH     the agent library (default: next to vtpin, <dir>/agent/libvtpin.so\n"
    "                       then <dir>/../lib/vtpin/libvtpin.so); the JVM must see it\n"
    "                       at the same path (copy it into a container first)\n"
    "  -t, --timeout=DUR    how long to wait for the JVM's attach listener to start,\n"
    "                       and then for its reply (default 10s; e.g. 500ms, 30s)\n"
    "  -v, --verbose        say each step on stderr\n"
    "  -h, --help           print this text\n"
    "\n"
    "The JVM's reply goes to stdout. JDK 21+ warns on the JVM's stderr that an\n"
    "agent was loaded dynamically (unless it runs with -XX:+EnableDynamicAgentLoading)\n"
    "and refuses outright when it runs with -XX:-EnableDynamicAgentLoading.\n"
    "\n"
    "exit status: 0 the agent took the options, 1 failure, 2 usage error\n";

static int parse_pid(const char *text, pid_t *pid)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v <= 0 || v > INT_MAX)
        return -EINVAL;
    *pid = (pid_t)v;
    return 0;
}

static int readable(const char *path)
{
    return access(path, R_OK) == 0;
}

/* The agent's absolute path into out[PATH_MAX]: --agent's, else the one next to us. */
static int agent_path(const char *arg, char *out)
{
    char candidate[PATH_MAX];
    if (!arg) {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n < 0) {
            fprintf(stderr, "vtpin attach: cannot find our own executable (/proc/self/exe): %s; use --agent\n",
                    strerror(errno));
            return -errno;
        }
        exe[n] = '\0';
        int rc = attach_agent_default(exe, readable, candidate, sizeof(candidate));
        if (rc) {
            fprintf(stderr, "vtpin attach: no agent library next to %s (looked for %s); use --agent PATH\n", exe,
                    rc == -ENOENT ? candidate : strerror(-rc));
            return rc;
        }
        arg = candidate;
    }
    if (!realpath(arg, out)) {
        int e = errno;
        fprintf(stderr, "vtpin attach: agent library %s: %s\n", arg, strerror(e));
        return -e;
    }
    return 0;
}

/* Can the JVM (whose ids we have taken) read the agent at the same path in its own filesystem? */
static int agent_visible(const struct attach_target *t, const char *agent)
{
    char inside[PATH_MAX + 64];
    snprintf(inside, sizeof(inside), "/proc/%d/root%s", (int)t->pid, agent);
    if (faccessat(AT_FDCWD, inside, R_OK, AT_EACCESS) == 0)
        return 0;
    int e = errno;
    if (e == ENOENT || e == ENOTDIR)
        fprintf(stderr,
                "vtpin attach: process %d does not see the agent library at %s (looked at %s): it runs in "
                "another filesystem (a container?); copy libvtpin.so into it and pass --agent with its path there\n",
                (int)t->pid, agent, inside);
    else if (e == EACCES)
        fprintf(stderr, "vtpin attach: permission: the JVM's user (uid %u) cannot read the agent library %s\n",
                (unsigned)t->euid, agent);
    else
        fprintf(stderr, "vtpin attach: cannot check the agent library in process %d's filesystem (%s): %s\n",
                (int)t->pid, inside, strerror(e));
    return -e;
}

/* The JVM's lines, each made safe for a terminal. */
static void print_lines(FILE *out, const char *text)
{
    char *copy = strdup(text);
    if (!copy)
        return;
    size_t n = strlen(copy);
    while (n && (copy[n - 1] == '\n' || copy[n - 1] == '\r'))
        copy[--n] = '\0';
    for (char *line = n ? copy : NULL; line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r')
            line[len - 1] = '\0';
        if (*line || nl)
            utf8_write_printable(out, line);
        fputc('\n', out);
        line = nl ? nl + 1 : NULL;
    }
    free(copy);
}

/* What the reply means for `load`: CLI_EXIT_OK or CLI_EXIT_FAIL with the reason on stderr. */
static int judge(const struct attach_target *t, const char *agent, const struct attach_reply *r)
{
    const char *text = r->text;
    if (strstr(text, "EnableDynamicAgentLoading")) {
        fprintf(stderr,
                "vtpin attach: process %d refuses to load agents while it runs (it was started with "
                "-XX:-EnableDynamicAgentLoading): start it with -agentpath:%s=OPTIONS instead; it was not changed\n",
                (int)t->pid, agent);
        return CLI_EXIT_FAIL;
    }
    if (r->code != 0) {
        fprintf(stderr, "vtpin attach: process %d's attach listener refused the load command (result %d)%s\n",
                (int)t->pid, r->code, *text ? ": its reply is above" : "");
        return CLI_EXIT_FAIL;
    }
    int rc;
    int have = attach_reply_return_code(text, &rc);
    if (have == -ENOENT) {
        fprintf(stderr, "vtpin attach: process %d could not load %s%s\n", (int)t->pid, agent,
                *text ? ": its reply is above" : " (its reply says nothing more)");
        return CLI_EXIT_FAIL;
    }
    if (have) {
        fprintf(stderr, "vtpin attach: process %d's reply has a malformed 'return code' line (above)\n", (int)t->pid);
        return CLI_EXIT_FAIL;
    }
    if (rc == VTPIN_LOAD_ALREADY_RUNNING) {
        fprintf(stderr,
                "vtpin attach: vtpin is already running in %d; `vtpin attach %d stop` first (this load changed "
                "nothing)\n",
                (int)t->pid, (int)t->pid);
        return CLI_EXIT_FAIL;
    }
    if (rc > VTPIN_LOAD_FIXED && rc <= VTPIN_LOAD_FIXED + (int)VTPIN_FIXED_ALL) {
        unsigned fixed = (unsigned)(rc - VTPIN_LOAD_FIXED);
        char names[64] = "";
        static const struct {
            unsigned bit;
            const char *name;
        } options[] = {
            {VTPIN_FIXED_CARRIERS, "carriers="}, {VTPIN_FIXED_RING, "ring="}, {VTPIN_FIXED_OCCUPANCY, "occupancy="}};
        for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
            if (fixed & options[i].bit)
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", names[0] ? ", " : "",
                         options[i].name);
        fprintf(
            stderr,
            "vtpin attach: %s cannot change after vtpin's first load in process %d (carriers=, ring= and "
            "exact occupancy are set up then): attach again without %s, or with the first load's value%s (the JVM's "
            "stderr or log= file says them); vtpin was not started again\n",
            names, (int)t->pid, fixed & (fixed - 1) ? "them" : "it", fixed & (fixed - 1) ? "s" : "");
        return CLI_EXIT_FAIL;
    }
    if (rc != 0) {
        fprintf(stderr,
                "vtpin attach: the agent refused to start in process %d (Agent_OnAttach returned %d); it says why "
                "on the JVM's stderr (or in its log= file)\n",
                (int)t->pid, rc);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* What the command line says. */
struct attach_args {
    const char *agent_arg; /* --agent; NULL: next to this vtpin */
    int64_t timeout_ns;
    int verbose;
    pid_t pid;
    const char *options; /* the agent's option string, "" when none */
};

/* The command line into a: -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct attach_args *a)
{
    static const struct option long_options[] = {
        {"agent", required_argument, NULL, 'a'},
        {"timeout", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":a:t:vh", long_options, NULL)) != -1) {
        switch (opt) {
        case 'a':
            a->agent_arg = optarg;
            break;
        case 't':
            if (units_parse_duration(optarg, &a->timeout_ns) != 0 || a->timeout_ns <= 0)
                return cli_usage_error("attach", "--timeout: '%s' is not a duration above 0 (e.g. 500ms, 10s)", optarg);
            break;
        case 'v':
            a->verbose = 1;
            break;
        case 'h':
            fputs(attach_usage, stdout);
            return CLI_EXIT_OK;
        case ':':
            return cli_usage_error("attach", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("attach", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("attach", "which JVM? give its PID");
    if (parse_pid(argv[optind], &a->pid) != 0)
        return cli_usage_error("attach", "'%s' is not a process id", argv[optind]);
    a->options = optind + 1 < argc ? argv[optind + 1] : "";
    if (optind + 2 < argc)
        return cli_usage_error("attach", "unexpected argument '%s' (OPTIONS is one string: a,b=c,...)",
                               argv[optind + 2]);
    if (strlen(a->options) > ATTACH_ARG_MAX)
        return cli_usage_error("attach", "the option string is %zu bytes; HotSpot takes at most %d", strlen(a->options),
                               ATTACH_ARG_MAX);
    return -1;
}

/* The process pid names (a thread id: its process) into t: 0, or the exit status after saying why. */
static int read_target(pid_t pid, struct attach_target *t)
{
    int rc = attach_proc_read(pid, t);
    if (rc == 0 && t->tgid != t->pid) { /* a thread id: its process is the JVM */
        pid = t->tgid;
        rc = attach_proc_read(pid, t);
    }
    if (rc == -ESRCH || (rc == 0 && (t->state == 'Z' || t->state == 'X'))) {
        fprintf(stderr, "vtpin attach: no such process: %d\n", (int)pid);
        return CLI_EXIT_FAIL;
    }
    if (rc) {
        fprintf(stderr, "vtpin attach: cannot read /proc/%d/status: %s\n", (int)pid, strerror(-rc));
        return CLI_EXIT_FAIL;
    }
    return 0;
}

/* Before anything about the agent or permissions: a process that is not a JVM gets the one
 * message that matters (pid 1, a typo). When another user's maps cannot be read, the listener
 * step checks again. 0, or the exit status after saying why. */
static int refuse_non_jvm(const struct attach_target *t)
{
    pid_t pid = t->pid;
    int jvm = attach_proc_has_jvm(pid);
    if (jvm == 0) {
        fprintf(stderr,
                "vtpin attach: process %d (%s) is not a HotSpot JVM: no libjvm.so in /proc/%d/maps, so no attach "
                "listener to load an agent through; nothing was sent to it\n",
                (int)pid, t->name, (int)pid);
        return CLI_EXIT_FAIL;
    }
    if ((jvm == -EACCES || jvm == -EPERM) && geteuid() == 0) {
        fprintf(stderr,
                "vtpin attach: process %d (%s) is not a HotSpot JVM we can attach to: even root cannot read "
                "/proc/%d/maps (a protected process: not dumpable, or of another user namespace), which a JVM "
                "lets its user and root do; nothing was sent to it\n",
                (int)pid, t->name, (int)pid);
        return CLI_EXIT_FAIL;
    }
    if ((jvm == -EACCES || jvm == -EPERM) && geteuid() != 0) {
        /* another user's process: its maps are closed to us, not what anyone may see of it */
        char why[PATH_MAX + 256] = "";
        if (attach_proc_jvm_hints(t, why, sizeof(why)) == 0) {
            char perm[512] = "";
            struct attach_creds probe;
            if (attach_creds_become(t, &probe, perm, sizeof(perm)) == 0)
                attach_creds_restore(&probe); /* same ids: cannot happen with the maps closed, but be safe */
            fprintf(stderr,
                    "vtpin attach: process %d (%s) does not look like a JVM: %s (its /proc/%d/maps, which would "
                    "tell for sure, is readable only by its user and root); nothing was sent to it%s%s\n",
                    (int)pid, t->name, why, (int)pid, *perm ? ". If it is one: " : "", perm);
            return CLI_EXIT_FAIL;
        }
    }
    return 0;
}

/* The attach listener, as the JVM's user: a connection (fd), or -1 after saying why. */
static int connect_as_jvm(const struct attach_target *t, const char *agent, int64_t timeout_ns, FILE *log)
{
    char err[1024] = "";
    struct attach_creds creds;
    if (attach_creds_become(t, &creds, err, sizeof(err))) {
        fprintf(stderr, "vtpin attach: %s\n", err);
        return -1;
    }
    if (creds.switched && log)
        fprintf(log, "vtpin attach: acting as uid %u gid %u, the JVM's\n", (unsigned)t->euid, (unsigned)t->egid);
    if (agent_visible(t, agent)) {
        attach_creds_restore(&creds);
        return -1;
    }
    int fd = attach_listener_connect(t, timeout_ns, log, err, sizeof(err));
    attach_creds_restore(&creds); /* the connection keeps the ids it was made with */
    if (fd < 0)
        fprintf(stderr, "vtpin attach: %s\n", err);
    return fd;
}

/* A reply that is not HotSpot's, said. */
static void say_bad_reply(const struct attach_target *t, char *reply, size_t len)
{
    if (len == 0) {
        fprintf(stderr,
                "vtpin attach: process %d closed the connection without a reply (a JVM answers only its own "
                "uid and gid, or root)\n",
                (int)t->pid);
        return;
    }
    fprintf(stderr, "vtpin attach: process %d sent a reply that is not HotSpot's: ", (int)t->pid);
    if (len > 80)
        reply[80] = '\0';
    utf8_write_printable(stderr, reply);
    fputc('\n', stderr);
}

int attach_main(int argc, char **argv)
{
    struct attach_args a = {.timeout_ns = DEFAULT_TIMEOUT_NS};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    struct attach_target t;
    if ((rc = read_target(a.pid, &t)) || (rc = refuse_non_jvm(&t)))
        return rc;
    char agent[PATH_MAX];
    if (agent_path(a.agent_arg, agent))
        return CLI_EXIT_FAIL;
    if (strlen(agent) > ATTACH_ARG_MAX) {
        fprintf(stderr, "vtpin attach: the agent path is longer than the %d bytes HotSpot takes\n", ATTACH_ARG_MAX);
        return CLI_EXIT_FAIL;
    }
    FILE *log = a.verbose ? stderr : NULL;
    int fd = connect_as_jvm(&t, agent, a.timeout_ns, log);
    if (fd < 0)
        return CLI_EXIT_FAIL;
    if (log)
        fprintf(log, "vtpin attach: load %s with options '%s'\n", agent, a.options);
    const char *args[ATTACH_ARGS] = {agent, "true", a.options};
    char *reply = NULL, err[1024] = "";
    size_t len = 0;
    rc = attach_listener_execute(fd, "load", args, ATTACH_ARGS, a.timeout_ns, &reply, &len, err, sizeof(err));
    close(fd);
    if (rc) {
        fprintf(stderr, "vtpin attach: process %d: %s\n", (int)t.pid, err);
        return CLI_EXIT_FAIL;
    }
    struct attach_reply r;
    if (attach_reply_parse(reply, len, &r)) {
        say_bad_reply(&t, reply, len);
        free(reply);
        return CLI_EXIT_FAIL;
    }
    print_lines(stdout, r.text);
    fflush(stdout);
    int status = judge(&t, agent, &r);
    free(reply);
    if (fflush(stdout) != 0)
        status = CLI_EXIT_FAIL;
    return status;
}
