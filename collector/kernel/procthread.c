#include "procthread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int procthread_state(const char *proc_root, int32_t tid, char *state, int32_t *syscall, int64_t *arg1)
{
    char path[512], buf[1024];
    snprintf(path, sizeof(path), "%s/%ld/stat", proc_root, (long)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "tid (comm) S ...": comm may hold spaces and parentheses, the state follows the last ')' */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || !p[2])
        return -EPROTO;
    *state = p[2];
    *syscall = -1;
    if (arg1)
        *arg1 = -1;
    snprintf(path, sizeof(path), "%s/%ld/syscall", proc_root, (long)tid);
    if ((f = fopen(path, "re"))) {
        long nr;
        unsigned long long a0, a1;
        int got = fscanf(f, "%ld %llx %llx", &nr, &a0, &a1);
        if (got >= 1 && nr >= 0)
            *syscall = (int32_t)nr;
        if (got == 3 && nr >= 0 && arg1)
            *arg1 = (int64_t)(a1 & 0x7fffffffffffffffull);
        fclose(f);
    }
    return 0;
}

char *procthread_stack(const char *proc_root, int32_t tid)
{
    char path[512], line[512];
    snprintf(path, sizeof(path), "%s/%ld/stack", proc_root, (long)tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    char *out = NULL;
    size_t len = 0;
    while (fgets(line, sizeof(line), f)) {
        /* "[<0>] hrtimer_nanosleep+0xd0/0x1a0": keep "hrtimer_nanosleep+0xd0" */
        char *s = strstr(line, "] ");
        s = s ? s + 2 : line;
        size_t n = strcspn(s, "/\n");
        if (n == 0)
            continue;
        char *grown = realloc(out, len + n + 2);
        if (!grown)
            break;
        out = grown;
        if (len)
            out[len++] = '\n';
        memcpy(out + len, s, n);
        len += n;
        out[len] = '\0';
    }
    fclose(f);
    return out;
}
