#include "paths.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/path_trust.h"

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

/* With strict, gives an own directory exactly mode's group and other bits (it may have
 * been made more open, e.g. 0711 for a collector that served other users). */
static int tighten(const char *dir, mode_t mode, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        int rc = -errno;
        snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
        return rc;
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
    /* ours, a real directory, and no one else can write it: one made by another user (who may
     * listen in it or have planted links) or open to all is refused, never tightened */
    char why[512];
    int rc = path_trust_check_own_dir(buf, geteuid(), why, sizeof(why));
    if (rc) {
        snprintf(err, errlen, "%s; refusing to use it (a directory of its own, or none: it makes it)", why);
        return rc;
    }
    if (created && (mode & 077) && chmod(buf, mode) != 0) { /* the umask may have taken the x bits */
        rc = -errno;
        snprintf(err, errlen, "%s: chmod %04o: %s", buf, (unsigned)mode, strerror(-rc));
        return rc;
    }
    return strict ? tighten(buf, mode, err, errlen) : 0;
}
