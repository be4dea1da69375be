#include "path_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int path_trust_uid(uid_t uid, uid_t me, unsigned flags)
{
    return uid == me || (uid == 0 && (flags & PATH_TRUST_ROOT));
}

enum path_trust path_trust_dir(const struct stat *st, uid_t me, unsigned flags)
{
    if (S_ISLNK(st->st_mode))
        return PATH_TRUST_LINK;
    if (!S_ISDIR(st->st_mode))
        return PATH_TRUST_NOT_DIR;
    if (!path_trust_uid(st->st_uid, me, flags))
        return PATH_TRUST_FOREIGN;
    /* group or other write: they could swap what is inside, unless the sticky bit keeps
     * each entry its owner's */
    if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !((flags & PATH_TRUST_STICKY) && (st->st_mode & S_ISVTX)))
        return PATH_TRUST_OPEN;
    return PATH_TRUST_OK;
}

enum path_trust path_trust_socket(const struct stat *st, uid_t me, unsigned flags)
{
    if (!S_ISSOCK(st->st_mode))
        return PATH_TRUST_NOT_SOCKET;
    return path_trust_uid(st->st_uid, me, flags) ? PATH_TRUST_OK : PATH_TRUST_FOREIGN;
}

/* The refusal of path for verdict v into err: -EPERM, -ENOTDIR or -ENOTSOCK. */
static int refuse(enum path_trust v, const char *what, const char *path, const struct stat *st, uid_t me,
                  unsigned flags, char *err, size_t errlen)
{
    const char *whose = flags & PATH_TRUST_ROOT ? " or root" : "";
    switch (v) {
    case PATH_TRUST_FOREIGN:
        snprintf(err, errlen, "%s %s belongs to uid %u, not to this user (uid %u)%s", what, path, (unsigned)st->st_uid,
                 (unsigned)me, whose);
        return -EPERM;
    case PATH_TRUST_OPEN:
        snprintf(err, errlen, "%s %s can be written by other users (mode %04o)", what, path,
                 (unsigned)(st->st_mode & 07777));
        return -EPERM;
    case PATH_TRUST_LINK:
        snprintf(err, errlen, "%s %s is a symbolic link", what, path);
        return -ENOTDIR;
    case PATH_TRUST_NOT_DIR:
        snprintf(err, errlen, "%s %s is not a directory", what, path);
        return -ENOTDIR;
    case PATH_TRUST_NOT_SOCKET:
        snprintf(err, errlen, "%s %s is not a socket", what, path);
        return -ENOTSOCK;
    case PATH_TRUST_OK:
        break;
    }
    return 0;
}

int path_trust_check_socket(const char *path, uid_t me, char *err, size_t errlen)
{
    const unsigned flags = PATH_TRUST_ROOT | PATH_TRUST_STICKY;
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if ((size_t)snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path) >= sizeof(dir))
        return -ENAMETOOLONG;
    struct stat st;
    if (stat(dir, &st) != 0)
        return -errno;
    int rc = refuse(path_trust_dir(&st, me, flags), "its directory", dir, &st, me, flags, err, errlen);
    if (rc)
        return rc;
    if (stat(path, &st) != 0)
        return -errno;
    return refuse(path_trust_socket(&st, me, flags), "the socket", path, &st, me, flags, err, errlen);
}

int path_trust_check_own_dir(const char *dir, uid_t me, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        int rc = -errno;
        snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
        return rc;
    }
    return refuse(path_trust_dir(&st, me, 0), "the directory", dir, &st, me, 0, err, errlen);
}

int path_trust_open_own_file(const char *path, int flags, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (flags & O_APPEND), mode);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = fstat(fd, &st) == 0 ? 0 : -errno;
    if (!rc && S_ISREG(st.st_mode)) {
        if (st.st_uid != geteuid())
            rc = -EPERM;
        else if ((flags & O_TRUNC) && (fchmod(fd, mode) != 0 || ftruncate(fd, 0) != 0))
            rc = -errno;
    }
    if (rc) {
        close(fd);
        return rc;
    }
    return fd;
}
