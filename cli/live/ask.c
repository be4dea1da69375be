#include "ask.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "answer.h"
#include "common/units.h"
#include "common/utf8.h"
#include "paths.h"
#include "remote.h"
#include "wire.h"

/* The answer must be the collector's JSON for kind (answer.h). */
static int answer_valid(const char *json, int kind, struct jsonread **tree, char *err, size_t errlen)
{
    int rc = jsonread_parse(json, strlen(json), tree, err, errlen);
    if (rc)
        return rc;
    rc = answer_check(*tree, kind == VTPIN__V1__QUERY__KIND__TOP ? ANSWER_TOP : ANSWER_STATUS, err, errlen);
    if (rc) {
        jsonread_free(*tree);
        *tree = NULL;
    }
    return rc;
}

int ask_collector(const char *cmd, const char *socket_arg, int kind, int64_t pid, int timeout_ms, char **json,
                  struct jsonread **tree)
{
    char path[PATH_MAX], err[512];
    int rc = remote_socket_path(socket_arg, path, sizeof(path));
    if (rc) {
        fprintf(stderr, "vtpin %s: socket path: %s\n", cmd, strerror(-rc));
        return 1;
    }
    rc = remote_query(path, kind, pid, timeout_ms, json, err, sizeof(err));
    if (rc == -ENOENT || rc == -ECONNREFUSED) {
        fprintf(stderr, "vtpin: no collector at %s (start one with: vtpin collector)\n", path);
        return 1;
    }
    if (rc) {
        fprintf(stderr, "vtpin %s: %s\n", cmd, err);
        return 1;
    }
    struct jsonread *parsed = NULL;
    rc = answer_valid(*json, kind, &parsed, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "vtpin %s: the answer from %s is not valid: %s\n", cmd, path, err);
        free(*json);
        *json = NULL;
        return 1;
    }
    if (tree)
        *tree = parsed;
    else
        jsonread_free(parsed);
    return 0;
}

int ask_parse_timeout(const char *text, int *timeout_ms)
{
    int64_t ns;
    if (units_parse_duration(text, &ns) || ns < 1000000LL || ns > 3600000000000LL)
        return -EINVAL;
    *timeout_ms = (int)(ns / 1000000LL);
    return 0;
}

int ask_parse_pid(const char *text, int64_t *pid)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v <= 0)
        return -EINVAL;
    *pid = v;
    return 0;
}

/* "12345", "12345 (pid 1 in its namespace)" or "1 (pid from its Hello: why)". */
void ask_print_jvm_name(FILE *out, const struct jsonread *j)
{
    int64_t pid = jsonread_int(jsonread_get(j, "pid"), 0);
    const struct jsonread *ns = jsonread_get(j, "ns_pid");
    const char *source = jsonread_str(jsonread_get(j, "pid_source"), NULL);
    fprintf(out, "%" PRId64, pid);
    if (source && strcmp(source, "hello") == 0) {
        fputs(" (pid from its Hello: ", out);
        utf8_write_printable(out, jsonread_str(jsonread_get(j, "pid_note"), "no peer pid"));
        fputs(")", out);
    } else if (ns && !jsonread_is_null(ns) && jsonread_int(ns, pid) != pid) {
        fprintf(out, " (pid %" PRId64 " in its namespace)", jsonread_int(ns, pid));
    }
}

void ask_print_deadlock(FILE *out, const struct jsonread *j)
{
    const struct jsonread *d = jsonread_get(j, "deadlock");
    if (!d || jsonread_is_null(d))
        return;
    char ago[32];
    fputs("  DEADLOCK (", out);
    utf8_write_printable(out, jsonread_str(jsonread_get(d, "kind"), "?"));
    fprintf(out, ", found live %s ago): ",
            units_format_duration(jsonread_int(jsonread_get(d, "for_ns"), 0), ago, sizeof(ago)));
    utf8_write_printable(out, jsonread_str(jsonread_get(d, "text"), "?"));
    fputc('\n', out);
}

const char *ask_utc_text(int64_t unix_ns, char *out, size_t cap)
{
    time_t t = (time_t)(unix_ns / 1000000000LL);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, cap, "?");
    return out;
}

void ask_say_recording_stops(const char *cmd, const char *socket_path, FILE *out)
{
    char *json = NULL;
    struct jsonread *tree = NULL;
    if (ask_collector(cmd, socket_path, VTPIN__V1__QUERY__KIND__STATUS, 0, ASK_TIMEOUT_MS_DEFAULT, &json, &tree) != 0)
        return;
    const struct jsonread *jvms = jsonread_get(tree, "jvms");
    for (size_t i = 0; i < jsonread_len(jvms); i++) {
        const struct jsonread *j = jsonread_at(jvms, i), *e = jsonread_get(j, "recording_error");
        if (!e || jsonread_is_null(e))
            continue;
        char since[32], lasted[32], lost[32];
        ask_utc_text(jsonread_int(jsonread_get(e, "since_unix_ns"), 0), since, sizeof(since));
        units_format_duration(jsonread_int(jsonread_get(e, "stopped_for_ns"), 0), lasted, sizeof(lasted));
        units_format_size((uint64_t)jsonread_int(jsonread_get(e, "bytes_lost"), 0), lost, sizeof(lost));
        fprintf(out, "vtpin %s: warning: the collector's recording of JVM ", cmd);
        ask_print_jvm_name(out, j);
        fprintf(out, " stopped at %s: ", since);
        utf8_write_printable(out, jsonread_str(jsonread_get(e, "error"), "?"));
        fprintf(out, "; %s after %s, %" PRId64 " frames (%s) not written (",
                jsonread_bool(jsonread_get(e, "active"), 0) ? "still stopped" : "resumed", lasted,
                jsonread_int(jsonread_get(e, "frames_lost"), 0), lost);
        utf8_write_printable(out, jsonread_str(jsonread_get(j, "recording"), "?"));
        fputs(")\n", out);
    }
    jsonread_free(tree);
    free(json);
}
