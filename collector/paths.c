#include "paths.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* snprintf into out[cap]: 0, or -ENAMETOOLONG when it was cut. */
static int format_path(char *out, size_t cap, const char *fmt, const char *a, const char *b)
{
    int n = snprintf(out, cap, fmt, a, b);
    if (n < 0 || (size_t)n >= cap)
        return -ENAMETOOLONG;
    return 0;
}

int collector_default_dir(char *out, size_t cap)
{
    const char *state = getenv("XDG_STATE_HOME");
    if (state && state[0] == '/')
        return format_path(out, cap, "%s/%s", state, "vtpin");
    const char *home = getenv("HOME");
    if (!home || home[0] != '/') {
        struct passwd *pw = getpwuid(geteuid());
        home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
    }
    if (!home)
        return -ENOENT;
    return format_path(out, cap, "%s/%s", home, ".local/state/vtpin");
}

int paths_dirname(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return format_path(out, cap, "%s%s", ".", "");
    size_t n = (size_t)(slash - path);
    if (n == 0)
        n = 1; /* "/x" -> "/" */
    if (n >= cap)
        return -ENAMETOOLONG;
    memcpy(out, path, n);
    out[n] = '\0';
    return 0;
}

/* Checks (and tightens to mode) an existing directory for the strict case. */
static int check_private(const char *dir, mode_t mode, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        int rc = -errno;
        snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
        return rc;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: exists and is not a directory (or is a symbolic link)", dir);
        return -ENOTDIR;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "%s: owned by uid %u, not by this user (uid %u): refusing to use it", dir,
                 (unsigned)st.st_uid, (unsigned)geteuid());
        return -EPERM;
    }
    mode_t want = (st.st_mode & 0700) | (mode & 077); /* group and other: exactly mode's */
    if ((st.st_mode & 077) != (mode & 077) && chmod(dir, want) != 0) {
        int rc = -errno;
        snprintf(err, errlen, "%s: cannot make it private (chmod %04o): %s", dir, (unsigned)mode, strerror(-rc));
        return rc;
    }
    return 0;
}

int paths_make_private_dir(const char *dir, int strict, char *err, size_t errlen)
{
    return paths_make_dir(dir, strict, 0700, err, errlen);
}

int paths_make_dir(const char *dir, int strict, mode_t mode, char *err, size_t errlen)
{
    char buf[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof(buf)) {
        snprintf(err, errlen, "%s: bad directory name", dir);
        return n ? -ENAMETOOLONG : -EINVAL;
    }
    int created = 0;
    memcpy(buf, dir, n + 1);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    /* every prefix ending before a '/', then the whole path */
    for (char *p = buf + 1;; p++) {
        int last = *p == '\0';
        if (*p != '/' && !last)
            continue;
        *p = '\0';
        int made = mkdir(buf, mode) == 0;
        if (!made && errno != EEXIST) {
            int rc = -errno;
            snprintf(err, errlen, "%s: cannot create directory: %s", buf, strerror(-rc));
            return rc;
        }
        if (last) {
            created = made;
            break;
        }
        *p = '/';
    }
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a directory", buf);
        return -ENOTDIR;
    }
    if (created && (mode & 077) && chmod(buf, mode) != 0) { /* the umask may have taken the x bits */
        int rc = -errno;
        snprintf(err, errlen, "%s: chmod %04o: %s", buf, (unsigned)mode, strerror(-rc));
        return rc;
    }
    return strict ? check_private(buf, mode, err, errlen) : 0;
}
