/* The pure parts of the attach protocol: they work on buffers only. */
#include "attach_protocol.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int put_string(char *buf, size_t cap, size_t *n, const char *s)
{
    size_t len = strlen(s) + 1;
    if (len > cap - *n)
        return -ENOSPC;
    memcpy(buf + *n, s, len);
    *n += len;
    return 0;
}

ssize_t attach_request_encode(char *buf, size_t cap, const char *cmd, const char *const *args, size_t nargs)
{
    if (!buf || !cmd || !*cmd || nargs > ATTACH_ARGS || (nargs && !args))
        return -EINVAL;
    if (strlen(cmd) > ATTACH_NAME_MAX)
        return -E2BIG;
    for (size_t i = 0; i < nargs; i++)
        if (args[i] && strlen(args[i]) > ATTACH_ARG_MAX)
            return -E2BIG;
    size_t n = 0;
    int rc = put_string(buf, cap, &n, ATTACH_PROTOCOL_VERSION);
    if (!rc)
        rc = put_string(buf, cap, &n, cmd);
    for (size_t i = 0; !rc && i < ATTACH_ARGS; i++)
        rc = put_string(buf, cap, &n, i < nargs && args[i] ? args[i] : "");
    return rc ? rc : (ssize_t)n;
}

/* An int at s followed only by blanks (or a CR) up to the end of the line: 0 or -EBADMSG. */
static int parse_int_line(const char *s, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || v < INT_MIN || v > INT_MAX)
        return -EBADMSG;
    while (*end == ' ' || *end == '\t' || *end == '\r')
        end++;
    if (*end && *end != '\n')
        return -EBADMSG;
    *out = (int)v;
    return 0;
}

int attach_reply_parse(char *text, size_t len, struct attach_reply *reply)
{
    if (!text || !len)
        return -EBADMSG;
    text[len] = '\0';
    char *nl = memchr(text, '\n', len);
    char *rest = text + len;
    if (nl) {
        *nl = '\0';
        rest = nl + 1;
    }
    int code;
    if (text[0] == ' ' || text[0] == '\t' || parse_int_line(text, &code))
        return -EBADMSG;
    reply->code = code;
    reply->text = rest;
    return 0;
}

int attach_reply_return_code(const char *text, int *rc)
{
    static const char prefix[] = "return code:";
    for (const char *line = text; line && *line;) {
        if (strncmp(line, prefix, sizeof(prefix) - 1) == 0)
            return parse_int_line(line + sizeof(prefix) - 1, rc);
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return -ENOENT;
}

/* The rest of the line after "Key:" and blanks, or NULL when line is not key's. */
static const char *field(const char *line, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(line, key, n) != 0 || line[n] != ':')
        return NULL;
    line += n + 1;
    while (*line == ' ' || *line == '\t')
        line++;
    return line;
}

/* The idx-th (0-based) unsigned number of a line, or the last when idx < 0. */
static int nth_number(const char *s, int idx, unsigned long long *out, int base)
{
    int found = 0;
    for (int i = 0;; i++) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '\n')
            break;
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, base);
        if (errno || end == s || *s == '-')
            return -EBADMSG;
        if (idx < 0 || i == idx) {
            *out = v;
            found = 1;
            if (idx >= 0)
                break;
        }
        s = end;
    }
    return found ? 0 : -EBADMSG;
}

int attach_status_parse(const char *text, struct attach_target *t)
{
    memset(t, 0, sizeof(*t));
    int have_pid = 0, have_uid = 0, have_gid = 0, have_nspid = 0, have_tgid = 0;
    unsigned long long v, ign = 0, cgt = 0;
    for (const char *line = text; line && *line;) {
        const char *f;
        if ((f = field(line, "Name"))) {
            size_t n = strcspn(f, "\n");
            if (n >= sizeof(t->name))
                n = sizeof(t->name) - 1;
            memcpy(t->name, f, n);
            t->name[n] = '\0';
        } else if ((f = field(line, "State"))) {
            t->state = *f;
        } else if ((f = field(line, "Tgid"))) {
            if (!nth_number(f, 0, &v, 10) && v > 0 && v <= INT_MAX) {
                t->tgid = (pid_t)v;
                have_tgid = 1;
            }
        } else if ((f = field(line, "Pid"))) {
            if (!nth_number(f, 0, &v, 10) && v > 0 && v <= INT_MAX) {
                t->pid = (pid_t)v;
                have_pid = 1;
            }
        } else if ((f = field(line, "NSpid"))) {
            if (!nth_number(f, -1, &v, 10) && v > 0 && v <= INT_MAX) {
                t->nspid = (pid_t)v;
                have_nspid = 1;
            }
        } else if ((f = field(line, "Uid"))) {
            if (!nth_number(f, 1, &v, 10) && v <= UINT_MAX) {
                t->euid = (uid_t)v;
                have_uid = 1;
            }
        } else if ((f = field(line, "Gid"))) {
            if (!nth_number(f, 1, &v, 10) && v <= UINT_MAX) {
                t->egid = (gid_t)v;
                have_gid = 1;
            }
        } else if ((f = field(line, "SigIgn"))) {
            nth_number(f, 0, &ign, 16);
        } else if ((f = field(line, "SigCgt"))) {
            nth_number(f, 0, &cgt, 16);
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    if (!have_pid || !have_uid || !have_gid)
        return -EBADMSG;
    if (!have_nspid) /* kernels before 4.1 have no NSpid: then there is one namespace */
        t->nspid = t->pid;
    if (!have_tgid)
        t->tgid = t->pid;
    unsigned long long quit = 1ULL << (SIGQUIT - 1);
    t->catches_quit = (cgt & quit) && !(ign & quit);
    return 0;
}

int attach_maps_line_is_jvm(const char *line)
{
    /* "start-end perms offset dev inode   /path/libjvm.so" (maybe " (deleted)" after it) */
    const char *path = strchr(line, '/');
    if (!path)
        return 0;
    size_t len = strcspn(path, "\n");
    static const char deleted[] = " (deleted)";
    if (len >= sizeof(deleted) - 1 && strncmp(path + len - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1) == 0)
        len -= sizeof(deleted) - 1;
    static const char lib[] = "/libjvm.so";
    return len >= sizeof(lib) - 1 && strncmp(path + len - (sizeof(lib) - 1), lib, sizeof(lib) - 1) == 0;
}

/* An argument a java launcher takes and few other programs do. */
static int java_option(const char *arg)
{
    static const char *const prefixes[] = {
        "-XX:",       "-Xmx",        "-Xms",          "-Xss",        "-agentpath:",
        "-agentlib:", "-javaagent:", "--module-path", "--add-opens", "--enable-preview",
        "-Djava."};
    static const char *const exact[] = {"-jar", "-cp", "-classpath", "--class-path", "-server"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(arg, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
        if (strcmp(arg, exact[i]) == 0)
            return 1;
    return 0;
}

int attach_cmdline_is_java(const char *cmdline, size_t len)
{
    if (!cmdline || len == 0)
        return 0; /* a kernel thread, or a zombie */
    const char *end = cmdline + len;
    const char *arg0 = cmdline;
    size_t arg0_len = strnlen(arg0, len);
    /* argv[0]'s last path component: java, javaw, java21, ... */
    const char *base = arg0;
    for (const char *p = arg0; p < arg0 + arg0_len; p++)
        if (*p == '/')
            base = p + 1;
    if (arg0 + arg0_len - base >= 4 && strncmp(base, "java", 4) == 0)
        return 1;
    for (const char *a = cmdline; a < end; a += strnlen(a, (size_t)(end - a)) + 1) {
        char arg[64];
        size_t n = strnlen(a, (size_t)(end - a));
        snprintf(arg, sizeof(arg), "%.*s", (int)(n < sizeof(arg) - 1 ? n : sizeof(arg) - 1), a);
        if (java_option(arg))
            return 1;
    }
    return 0;
}

int attach_agent_default(const char *exe, int (*exists)(const char *path), char *out, size_t cap)
{
    static const char *const layouts[] = {"/agent/libvtpin.so", "/../lib/vtpin/libvtpin.so"};
    const char *slash = exe ? strrchr(exe, '/') : NULL;
    if (!slash || !exists || !out || !cap)
        return -EINVAL;
    int dirlen = (int)(slash - exe);
    char tried[2 * PATH_MAX + 8] = "";
    for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
        char path[PATH_MAX];
        int n = snprintf(path, sizeof(path), "%.*s%s", dirlen, exe, layouts[i]);
        if (n < 0 || (size_t)n >= sizeof(path) || (size_t)n >= cap)
            return -ENAMETOOLONG;
        if (exists(path)) {
            memcpy(out, path, (size_t)n + 1);
            return 0;
        }
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof(tried) - used, "%s%s", used ? " or " : "", path);
    }
    snprintf(out, cap, "%s", tried);
    return -ENOENT;
}

void attach_say(char *err, size_t cap, const char *fmt, ...)
{
    if (!err || !cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}
