#include "ask.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote.h"

#define ASK_TIMEOUT_MS 5000

int ask_collector(const char *cmd, const char *socket_arg, int kind, int64_t pid, char **json, struct jsonread **tree)
{
    char path[PATH_MAX], err[512];
    int rc = remote_socket_path(socket_arg, path, sizeof(path));
    if (rc) {
        fprintf(stderr, "vtpin %s: socket path: %s\n", cmd, strerror(-rc));
        return 1;
    }
    rc = remote_query(path, kind, pid, ASK_TIMEOUT_MS, json, err, sizeof(err));
    if (rc == -ENOENT || rc == -ECONNREFUSED) {
        fprintf(stderr, "vtpin: no collector at %s (start one with: vtpin collector)\n", path);
        return 1;
    }
    if (rc) {
        fprintf(stderr, "vtpin %s: %s\n", cmd, err);
        return 1;
    }
    if (tree) {
        rc = jsonread_parse(*json, strlen(*json), tree, err, sizeof(err));
        if (rc) {
            fprintf(stderr, "vtpin %s: the collector's answer: %s\n", cmd, err);
            free(*json);
            *json = NULL;
            return 1;
        }
    }
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
