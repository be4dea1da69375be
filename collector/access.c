#include "access.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A decimal id: 0 to 2^32 - 2 ((uid_t)-1 means "no id" to chown and setreuid). */
static int parse_number(const char *s, unsigned long *out)
{
    if (*s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v >= 0xffffffffULL)
        return -EINVAL;
    *out = (unsigned long)v;
    return 0;
}

/* A name's id: 0, or -ENOENT. */
typedef int (*id_by_name)(const char *name, unsigned long *id);

static int uid_by_name(const char *name, unsigned long *id)
{
    char buf[16384];
    struct passwd pw, *res = NULL;
    if (getpwnam_r(name, &pw, buf, sizeof(buf), &res) != 0 || !res)
        return -ENOENT;
    *id = res->pw_uid;
    return 0;
}

static int gid_by_name(const char *name, unsigned long *id)
{
    char buf[16384];
    struct group gr, *res = NULL;
    if (getgrnam_r(name, &gr, buf, sizeof(buf), &res) != 0 || !res)
        return -ENOENT;
    *id = res->gr_gid;
    return 0;
}

/* A decimal id, or a name that by_name knows. */
static int parse_id(const char *s, unsigned long *id, id_by_name by_name)
{
    if (!*s)
        return -EINVAL;
    if (*s >= '0' && *s <= '9')
        return parse_number(s, id) ? -EINVAL : 0;
    return by_name(s, id);
}

int access_parse_uid(const char *s, uid_t *uid)
{
    unsigned long v;
    int rc = parse_id(s, &v, uid_by_name);
    if (rc == 0)
        *uid = (uid_t)v;
    return rc;
}

int access_parse_gid(const char *s, gid_t *gid)
{
    unsigned long v;
    int rc = parse_id(s, &v, gid_by_name);
    if (rc == 0)
        *gid = (gid_t)v;
    return rc;
}

/* uid_t and gid_t are both unsigned int on Linux: one list helper for both. */
_Static_assert(sizeof(uid_t) == sizeof(unsigned) && sizeof(gid_t) == sizeof(unsigned), "ids are unsigned int");

static int add_id(unsigned *ids, size_t *n, unsigned id)
{
    for (size_t i = 0; i < *n; i++)
        if (ids[i] == id)
            return 0;
    if (*n >= ACCESS_MAX_IDS)
        return -E2BIG;
    ids[(*n)++] = id;
    return 0;
}

int access_add_uid(struct access *a, uid_t uid)
{
    return add_id((unsigned *)a->uids, &a->nuids, uid);
}

int access_add_gid(struct access *a, gid_t gid)
{
    return add_id((unsigned *)a->gids, &a->ngids, gid);
}

static int gid_allowed(const struct access *a, gid_t gid)
{
    for (size_t i = 0; i < a->ngids; i++)
        if (a->gids[i] == gid)
            return 1;
    return 0;
}

int access_groups_allowed(const struct access *a, const char *text)
{
    const char *p = text;
    while (p && strncmp(p, "Groups:", 7) != 0) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (!p)
        return 0;
    p += 7;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p < '0' || *p > '9')
            return 0; /* end of the line (or of the text) */
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (v < 0xffffffffUL && gid_allowed(a, (gid_t)v))
            return 1;
        p = end;
    }
}

/* The peer's supplementary groups against a: read once at accept, never trusted
 * beyond the ids (a pid that exited or was reused gives no extra group). */
static int proc_groups_allowed(const struct access *a, pid_t pid, uid_t uid, const char *proc_root)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%ld/status", proc_root, (long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    char *line = NULL;
    size_t cap = 0;
    int ok = 0, uid_match = 0;
    while (getline(&line, &cap, f) > 0) {
        unsigned long real, eff;
        if (sscanf(line, "Uid: %lu %lu", &real, &eff) == 2)
            uid_match = eff == (unsigned long)uid; /* still the process that connected, as far as we can tell */
        else if (strncmp(line, "Groups:", 7) == 0) {
            ok = access_groups_allowed(a, line);
            break;
        }
    }
    free(line);
    fclose(f);
    return ok && uid_match;
}

int access_uid_trusted(uid_t self, uid_t uid)
{
    return uid == self || uid == 0;
}

int access_hello_allowed(uid_t self, uid_t uid, int verified)
{
    return verified || access_uid_trusted(self, uid);
}

int access_sees_all(const struct access *a, uid_t self, uid_t uid)
{
    return access_uid_trusted(self, uid) || a->see_all;
}

int access_peer_allowed(const struct access *a, uid_t self, pid_t pid, uid_t uid, gid_t gid, const char *proc_root)
{
    if (access_uid_trusted(self, uid))
        return 1;
    for (size_t i = 0; i < a->nuids; i++)
        if (a->uids[i] == uid)
            return 1;
    if (!a->ngids)
        return 0;
    if (gid_allowed(a, gid))
        return 1;
    return pid > 0 && proc_groups_allowed(a, pid, uid, proc_root);
}
