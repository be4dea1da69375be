/* vtpin top: each JVM's carriers, what they run, which are pinned or hogged
 * and where, refreshed like top(1). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "ask.h"
#include "commands.h"
#include "common/socket_path.h"
#include "common/units.h"
#include "common/utf8.h"
#include "paths.h"
#include "wire.h"

#define NAME_WIDTH_MAX 40
#define BLOCKER_WIDTH_MAX 72 /* without a terminal's width */

static const char top_usage[] = "usage: vtpin top [--socket PATH] [--once] [--json] [--interval DUR] [--pid PID]\n"
                                "                 [--timeout DUR]\n"
                                "\n"
                                "Shows every JVM's carrier threads as the collector sees them: the state of\n"
                                "each (idle, running, pinned, native_block, or hog: a virtual thread running\n"
                                "long without unmounting, nothing pinned), the virtual thread it carries, how\n"
                                "long it has been pinned or hogged, who it waits for (BLOCKER: a monitor's\n"
                                "owner, a class's initializer, a notify) and the culprit frame (\"HOG frame\"\n"
                                "for a hog), and how its time split into busy / pinned / idle over the\n"
                                "collector's window (the agent's occupancy source). With the collector's\n"
                                "kernel view, each JVM and carrier also shows the kernel's occupancy over the\n"
                                "same window: busy (on CPU), held (off CPU in a pin), idle, and the part spent\n"
                                "waiting for a CPU. Refreshes until Ctrl-C.\n"
                                "\n"
                                "options:\n"
                                "  -s, --socket=PATH    the collector's socket (default: the collector's default)\n"
                                "  -1, --once           print once and exit (no screen clearing)\n"
                                "  -j, --json           print the JSON answer once (docs/collector.md)\n"
                                "  -i, --interval=DUR   time between refreshes (default 1s; e.g. 500ms, 2s)\n"
                                "  -p, --pid=PID        only this JVM, by its pid on this host (in a container\n"
                                "                       it says another pid: shown beside it)\n"
                                "  -t, --timeout=DUR    give up on an answer not complete within DUR (default 5s)\n"
                                "  -h, --help           print this text\n"
                                "\n"
                                "exit status: 0 ok, 1 no collector (or it went away, or gave no valid answer in\n"
                                "time), 2 usage error\n";

static void put(FILE *out, const char *s)
{
    utf8_write_printable(out, s ? s : "-");
}

/* Display width of s as put() writes it, roughly: one column per code point. */
static size_t width_of(const char *s)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80)
            w++;
    return w;
}

/* s cut to at most cols columns (on a character boundary) into out[cap]. */
static const char *cut(const char *s, size_t cols, char *out, size_t cap)
{
    size_t w = 0, i = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (p[i] && i + 1 < cap) {
        if ((p[i] & 0xC0) != 0x80) {
            if (w == cols)
                break;
            w++;
        }
        i++;
    }
    while (i > 0 && (p[i] & 0xC0) == 0x80) /* do not end inside a character */
        i--;
    memcpy(out, s, i);
    out[i] = '\0';
    return out;
}

/* "busy 20.1%, held 30.2%, idle 49.7% (run queue 8.3%)" of a kernel occupancy object. */
static void put_kernel_occupancy(FILE *out, const struct jsonread *o)
{
    fprintf(out, "busy %.1f%%, held %.1f%%, idle %.1f%% (run queue %.1f%%)",
            jsonread_num(jsonread_get(o, "busy_pct"), 0), jsonread_num(jsonread_get(o, "held_pct"), 0),
            jsonread_num(jsonread_get(o, "idle_pct"), 0), jsonread_num(jsonread_get(o, "runqueue_pct"), 0));
}

/* "    kernel: on CPU 1.2s, off CPU 3.0s, run queue 4ms; sleeping in futex for 1.5s" (collector kernel view),
 * then its occupancy over the window. */
static void put_kernel(FILE *out, const struct jsonread *k)
{
    if (jsonread_is_null(k))
        return;
    char on[32], off[32], rq[32], since[32];
    fprintf(out, "    kernel: on CPU %s, off CPU %s, run queue %s",
            units_format_duration(jsonread_int(jsonread_get(k, "on_cpu_ns"), 0), on, sizeof(on)),
            units_format_duration(jsonread_int(jsonread_get(k, "off_cpu_ns"), 0), off, sizeof(off)),
            units_format_duration(jsonread_int(jsonread_get(k, "runqueue_ns"), 0), rq, sizeof(rq)));
    if (!jsonread_is_null(jsonread_get(k, "off_cpu_for_ns"))) {
        const char *sc = jsonread_str(jsonread_get(k, "syscall"), NULL);
        fprintf(out, "; %s%s%s for %s", jsonread_str(jsonread_get(k, "state"), "?"), sc ? " in " : "", sc ? sc : "",
                units_format_duration(jsonread_int(jsonread_get(k, "off_cpu_for_ns"), 0), since, sizeof(since)));
    }
    const struct jsonread *occ = jsonread_get(k, "occupancy");
    if (occ && !jsonread_is_null(occ)) {
        fputs("; ", out);
        put_kernel_occupancy(out, occ);
    }
    /* asleep with a virtual thread mounted, and how much of that no pin explains */
    int64_t held = jsonread_int(jsonread_get(k, "held_ns"), 0);
    if (held > 0) {
        char h[32], u[32];
        int64_t unexplained = jsonread_int(jsonread_get(k, "unexplained_ns"), 0);
        fprintf(out, "; held %s, unexplained %s (%.1f%%)", units_format_duration(held, h, sizeof(h)),
                units_format_duration(unexplained, u, sizeof(u)), 100.0 * (double)unexplained / (double)held);
    }
    fputc('\n', out);
}

static void render_jvm(FILE *out, const struct jsonread *j, size_t cols)
{
    const struct jsonread *carriers = jsonread_get(j, "carriers");
    const struct jsonread *alert = jsonread_get(j, "alert");
    fputs("JVM ", out);
    ask_print_jvm_name(out, j);
    const char *java = jsonread_str(jsonread_get(j, "java_version"), NULL);
    if (java) {
        fputs("  java ", out);
        put(out, java);
    }
    fprintf(out, "  %s  occupancy %s  carriers %zu",
            jsonread_bool(jsonread_get(j, "connected"), 0) ? "connected" : "DISCONNECTED",
            jsonread_str(jsonread_get(j, "occupancy"), "off"), jsonread_len(carriers));
    size_t pinned = 0, hogged = 0;
    for (size_t i = 0; i < jsonread_len(carriers); i++) {
        const char *state = jsonread_str(jsonread_get(jsonread_at(carriers, i), "state"), "");
        if (strcmp(state, "pinned") == 0 || strcmp(state, "native_block") == 0)
            pinned++;
        else if (strcmp(state, "hog") == 0)
            hogged++;
    }
    if (hogged)
        fprintf(out, "  %zu hogged", hogged);
    if (jsonread_bool(jsonread_get(alert, "active"), 0)) /* hogs hold their carriers too (the alert counts them) */
        fprintf(out, "  STARVATION ALERT: %zu of %zu carriers %s", pinned + hogged, jsonread_len(carriers),
                hogged ? "pinned or hogged" : "pinned");
    int64_t blocked = jsonread_int(jsonread_get(j, "carriers_blocked"), 0);
    if (blocked > 0)
        fprintf(out, "  CARRIER BLOCKED: %" PRId64 " asleep with a virtual thread mounted, no pin yet", blocked);
    fputc('\n', out);
    ask_print_deadlock(out, j);
    const struct jsonread *rerr = jsonread_get(j, "recording_error");
    if (rerr && !jsonread_is_null(rerr) && jsonread_bool(jsonread_get(rerr, "active"), 0)) {
        char since[32], lasted[32];
        fprintf(out, "  RECORDING STOPPED since %s (%s): ",
                ask_utc_text(jsonread_int(jsonread_get(rerr, "since_unix_ns"), 0), since, sizeof(since)),
                units_format_duration(jsonread_int(jsonread_get(rerr, "stopped_for_ns"), 0), lasted, sizeof(lasted)));
        put(out, jsonread_str(jsonread_get(rerr, "error"), "?"));
        fprintf(out, "; %" PRId64 " frames not written so far\n", jsonread_int(jsonread_get(rerr, "frames_lost"), 0));
    }
    const struct jsonread *kocc = jsonread_get(j, "kernel_occupancy");
    if (kocc && !jsonread_is_null(kocc)) { /* the kernel view tracks its carriers: exact, at no cost in the JVM */
        fputs("  kernel occupancy: ", out);
        put_kernel_occupancy(out, kocc);
        fputc('\n', out);
    }
    size_t name_w = 7;
    for (size_t i = 0; i < jsonread_len(carriers); i++) {
        size_t w = width_of(jsonread_str(jsonread_get(jsonread_at(carriers, i), "name"), ""));
        if (w > name_w)
            name_w = w;
    }
    if (name_w > NAME_WIDTH_MAX)
        name_w = NAME_WIDTH_MAX;
    /* the blocker gets up to half of what is left of the line, as wide as its longest; the culprit the rest */
    size_t used = name_w + 1 + 8 + 1 + 12 + 1 + 8 + 1 + 10 + 1 + 6 + 1 + 7 + 1 + 6 + 2;
    size_t blocker_w = 7;
    for (size_t i = 0; i < jsonread_len(carriers); i++) {
        size_t w = width_of(jsonread_str(jsonread_get(jsonread_at(carriers, i), "blocker"), ""));
        if (w > blocker_w)
            blocker_w = w;
    }
    size_t blocker_max = cols > used + 20 ? (cols - used) / 2 : (cols ? 10 : BLOCKER_WIDTH_MAX);
    if (blocker_w > blocker_max)
        blocker_w = blocker_max < 7 ? 7 : blocker_max;
    used += blocker_w + 2;
    size_t culprit_w = cols > used + 10 ? cols - used : (cols ? 10 : SIZE_MAX);
    fprintf(out, "%-*s %8s %-12s %8s %10s %6s %7s %6s  %-*s  %s\n", (int)name_w, "CARRIER", "TID", "STATE", "VTHREAD",
            "PINNED-FOR", "BUSY%", "PINNED%", "IDLE%", (int)blocker_w, "BLOCKER", "CULPRIT");
    if (jsonread_len(carriers) == 0)
        fputs("  (no carriers seen yet)\n", out);
    for (size_t i = 0; i < jsonread_len(carriers); i++) {
        const struct jsonread *c = jsonread_at(carriers, i);
        char name[4 * NAME_WIDTH_MAX + 1], vthread[24] = "-", pinned[32] = "-", culprit[4096];
        cut(jsonread_str(jsonread_get(c, "name"), ""), name_w, name, sizeof(name));
        if (!jsonread_is_null(jsonread_get(c, "vthread")))
            snprintf(vthread, sizeof(vthread), "%" PRId64, jsonread_int(jsonread_get(c, "vthread"), 0));
        /* a hog's time goes in the same column: its STATE says which */
        const struct jsonread *held_for = jsonread_get(c, "pinned_for_ns");
        if (!held_for || jsonread_is_null(held_for))
            held_for = jsonread_get(c, "hogged_for_ns");
        if (held_for && !jsonread_is_null(held_for))
            units_format_duration(jsonread_int(held_for, 0), pinned, sizeof(pinned));
        put(out, name);
        for (size_t w = width_of(name); w < name_w; w++)
            fputc(' ', out);
        fprintf(out, " %8" PRId64 " %-12s %8s %10s %6.1f %7.1f %6.1f  ", jsonread_int(jsonread_get(c, "tid"), 0),
                jsonread_str(jsonread_get(c, "state"), "?"), vthread, pinned,
                jsonread_num(jsonread_get(c, "busy_pct"), 0), jsonread_num(jsonread_get(c, "pinned_pct"), 0),
                jsonread_num(jsonread_get(c, "idle_pct"), 0));
        char blocker[4 * BLOCKER_WIDTH_MAX + 1];
        cut(jsonread_str(jsonread_get(c, "blocker"), "-"), blocker_w, blocker, sizeof(blocker));
        put(out, blocker);
        for (size_t w = width_of(blocker); w < blocker_w + 2; w++)
            fputc(' ', out);
        const char *text = jsonread_str(jsonread_get(c, "culprit"), NULL);
        const char *reason = jsonread_str(jsonread_get(c, "reason"), NULL);
        if (!reason && strcmp(jsonread_str(jsonread_get(c, "state"), ""), "hog") == 0)
            reason = "HOG"; /* where it runs, as a pin's reason and frame are shown */
        const struct jsonread *blocked = jsonread_get(c, "blocked");
        if (!jsonread_is_null(blocked)) { /* the kernel saw it before any pin */
            char full[256], dur[32];
            const char *sc = jsonread_str(jsonread_get(blocked, "syscall"), NULL);
            snprintf(full, sizeof(full), "BLOCKED (kernel: %s%s%s for %s, no pin yet)",
                     jsonread_str(jsonread_get(blocked, "state"), "?"), sc ? " in " : "", sc ? sc : "",
                     units_format_duration(jsonread_int(jsonread_get(blocked, "for_ns"), 0), dur, sizeof(dur)));
            put(out, cut(full, culprit_w, culprit, sizeof(culprit)));
        } else if (text) {
            char full[4096];
            snprintf(full, sizeof(full), "%s%s%s", reason ? reason : "", reason ? " " : "", text);
            put(out, cut(full, culprit_w, culprit, sizeof(culprit)));
        } else if (reason) {
            put(out, reason);
        } else {
            fputc('-', out);
        }
        fputc('\n', out);
        put_kernel(out, jsonread_get(c, "kernel"));
    }
}

/* The whole screen into a string. */
static char *render(const struct jsonread *root, size_t cols)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buf, &size);
    if (!out)
        return NULL;
    const struct jsonread *jvms = jsonread_get(root, "jvms");
    char window[32], when[16] = "";
    time_t t = time(NULL);
    struct tm tm;
    if (localtime_r(&t, &tm))
        strftime(when, sizeof(when), "%H:%M:%S", &tm);
    fprintf(out, "vtpin top - %s - %zu JVM%s - percentages over the last %s\n", when, jsonread_len(jvms),
            jsonread_len(jvms) == 1 ? "" : "s",
            units_format_duration(jsonread_int(jsonread_get(root, "window_ns"), 0), window, sizeof(window)));
    if (jsonread_len(jvms) == 0)
        fputs("\nno JVMs connected (start one with -agentpath:/path/libvtpin.so=collector)\n", out);
    for (size_t i = 0; i < jsonread_len(jvms); i++) {
        fputc('\n', out);
        render_jvm(out, jsonread_at(jvms, i), cols);
    }
    if (fclose(out) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static size_t terminal_columns(void)
{
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 0; /* not a terminal: no cutting */
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int top_main(int argc, char **argv)
{
    static const struct option long_options[] = {
        {"socket", required_argument, NULL, 's'}, {"once", no_argument, NULL, '1'},
        {"json", no_argument, NULL, 'j'},         {"interval", required_argument, NULL, 'i'},
        {"pid", required_argument, NULL, 'p'},    {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *socket_arg = NULL;
    int once = 0, json_out = 0, opt;
    int64_t pid = 0, interval = 1000000000LL;
    int timeout_ms = ASK_TIMEOUT_MS_DEFAULT;
    opterr = 0;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":s:1ji:p:t:h", long_options, NULL)) != -1) {
        switch (opt) {
        case 's':
            if (socket_path_fits(optarg))
                return cli_usage_error(
                    "top", "--socket: '%s' is longer than a Unix socket path can be (at most 107 bytes)", optarg);
            socket_arg = optarg;
            break;
        case 't':
            if (ask_parse_timeout(optarg, &timeout_ms))
                return cli_usage_error("top", "--timeout: '%s' is not a duration between 1ms and 1h (e.g. 500ms, 5s)",
                                       optarg);
            break;
        case '1':
            once = 1;
            break;
        case 'j':
            json_out = 1;
            break;
        case 'i':
            if (units_parse_duration(optarg, &interval) != 0 || interval < 100000000LL)
                return cli_usage_error("top", "--interval: '%s' is not a duration of at least 100ms (e.g. 2s)", optarg);
            break;
        case 'p':
            if (ask_parse_pid(optarg, &pid) != 0)
                return cli_usage_error("top", "--pid: '%s' is not a process id", optarg);
            break;
        case 'h':
            fputs(top_usage, stdout);
            return CLI_EXIT_OK;
        case ':':
            return cli_usage_error("top", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("top", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("top", "unexpected argument '%s'", argv[optind]);
    for (;;) {
        char *json = NULL;
        struct jsonread *tree = NULL;
        if (ask_collector("top", socket_arg, VTPIN__V1__QUERY__KIND__TOP, pid, timeout_ms, &json,
                          json_out ? NULL : &tree))
            return CLI_EXIT_FAIL;
        if (json_out) {
            fputs(json, stdout);
            free(json);
            return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
        }
        char *screen = render(tree, once ? 0 : terminal_columns());
        jsonread_free(tree);
        free(json);
        if (!screen) {
            fputs("vtpin top: out of memory\n", stderr);
            return CLI_EXIT_FAIL;
        }
        if (!once)
            fputs("\033[H\033[2J", stdout); /* home, clear screen */
        fputs(screen, stdout);
        free(screen);
        if (fflush(stdout) != 0)
            return CLI_EXIT_FAIL;
        if (once)
            return CLI_EXIT_OK;
        sleep_ns(interval);
    }
}
