#include "ask.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "common/units.h"
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
