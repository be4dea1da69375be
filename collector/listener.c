#include "listener.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static int make_addr(const char *path, struct sockaddr_un *addr)
{
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(addr->sun_path))
        return -ENAMETOOLONG;
    strcpy(addr->sun_path, path);
    return 0;
}

int listener_connect(const char *path, int timeout_ms)
{
    struct sockaddr_un addr;
    int rc = make_addr(path, &addr);
    if (rc)
        return rc;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (timeout_ms > 0) {
        struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    }
    while (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        if (errno == EINTR)
            continue;
        rc = -errno;
        close(fd);
        return rc;
    }
    return fd;
}

int listener_peer(int fd, pid_t *pid, uid_t *uid, gid_t *gid)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return -errno;
    *pid = cred.pid;
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}

/* With the lock held: makes sure nothing live is at path, removing a dead socket. */
static int clear_path(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        int rc = -errno;
        snprintf(err, errlen, "%s: %s", path, strerror(-rc));
        return rc;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "%s exists and is not a socket: refusing to replace it", path);
        return -ENOTSOCK;
    }
    int fd = listener_connect(path, 1000);
    if (fd >= 0) {
        pid_t pid = 0;
        uid_t uid = 0;
        gid_t gid = 0;
        listener_peer(fd, &pid, &uid, &gid);
        close(fd);
        snprintf(err, errlen, "a collector (pid %ld) is already listening on %s", (long)pid, path);
        return -EADDRINUSE;
    }
    if (fd != -ECONNREFUSED) {
        snprintf(err, errlen, "%s: cannot tell whether a collector is listening: %s", path, strerror(-fd));
        return fd;
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        int rc = -errno;
        snprintf(err, errlen, "%s: cannot remove the stale socket: %s", path, strerror(-rc));
        return rc;
    }
    return 0;
}

int listener_open(struct listener *ln, const char *path, int backlog, char *err, size_t errlen)
{
    return listener_open_mode(ln, path, backlog, 0600, (gid_t)-1, err, errlen);
}

int listener_open_mode(struct listener *ln, const char *path, int backlog, mode_t mode, gid_t group, char *err,
                       size_t errlen)
{
    struct sockaddr_un addr;
    char lock_path[sizeof(addr.sun_path) + 8];
    int rc;
    memset(ln, 0, sizeof(*ln));
    ln->fd = ln->lock_fd = -1;
    if (make_addr(path, &addr) != 0) {
        snprintf(err, errlen, "%s: socket path too long (at most %zu bytes)", path, sizeof(addr.sun_path) - 1);
        return -ENAMETOOLONG;
    }
    snprintf(ln->path, sizeof(ln->path), "%s", path);
    snprintf(lock_path, sizeof(lock_path), "%s.lock", path);
    ln->lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (ln->lock_fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: %s", lock_path, strerror(-rc));
        goto cleanup;
    }
    if (flock(ln->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        rc = -errno;
        if (rc == -EWOULDBLOCK) {
            /* another collector holds it: name it if it answers */
            int fd = listener_connect(path, 1000);
            pid_t pid = 0;
            uid_t uid;
            gid_t gid;
            if (fd >= 0) {
                listener_peer(fd, &pid, &uid, &gid);
                close(fd);
            }
            if (pid > 0)
                snprintf(err, errlen, "a collector (pid %ld) is already listening on %s", (long)pid, path);
            else
                snprintf(err, errlen, "another collector is starting on %s (%s is locked)", path, lock_path);
            rc = -EADDRINUSE;
        } else {
            snprintf(err, errlen, "%s: flock: %s", lock_path, strerror(-rc));
        }
        goto cleanup;
    }
    rc = clear_path(path, err, errlen);
    if (rc)
        goto cleanup;
    ln->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (ln->fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "socket: %s", strerror(-rc));
        goto cleanup;
    }
    /* Bound as PATH.new and renamed to PATH once it listens, so that whoever sees the socket file can
     * connect: a client that came between bind and listen was refused (a status query of vtpin run's,
     * under load). A PATH too long for that is bound as it is. */
    char at[sizeof(addr.sun_path)];
    struct sockaddr_un bound = addr;
    int staged = (size_t)snprintf(at, sizeof(at), "%s.new", path) < sizeof(at);
    if (staged) {
        make_addr(at, &bound);
        unlink(at); /* one a collector that died left: the lock is ours */
    } else {
        snprintf(at, sizeof(at), "%s", path);
    }
    mode_t old = umask(0177); /* the socket file is created 0600, opened up below if asked */
    rc = bind(ln->fd, (struct sockaddr *)&bound, sizeof(bound)) == 0 ? 0 : -errno;
    umask(old);
    if (rc) {
        snprintf(err, errlen, "%s: bind: %s", at, strerror(-rc));
        goto cleanup;
    }
    struct stat st;
    if ((group != (gid_t)-1 && chown(at, (uid_t)-1, group) != 0) || chmod(at, mode) != 0 || lstat(at, &st) != 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: %s", at, strerror(-rc));
        unlink(at);
        goto cleanup;
    }
    ln->dev = st.st_dev;
    ln->ino = st.st_ino;
    if (listen(ln->fd, backlog) != 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: listen: %s", at, strerror(-rc));
        unlink(at);
        goto cleanup;
    }
    if (staged && rename(at, path) != 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: rename to %s: %s", at, path, strerror(-rc));
        unlink(at);
        goto cleanup;
    }
    return 0;
cleanup:
    if (ln->fd >= 0)
        close(ln->fd);
    if (ln->lock_fd >= 0)
        close(ln->lock_fd);
    ln->fd = ln->lock_fd = -1;
    return rc;
}

void listener_close(struct listener *ln)
{
    if (ln->fd >= 0) {
        struct stat st;
        if (lstat(ln->path, &st) == 0 && st.st_dev == ln->dev && st.st_ino == ln->ino)
            unlink(ln->path);
        close(ln->fd);
        ln->fd = -1;
    }
    if (ln->lock_fd >= 0) {
        close(ln->lock_fd);
        ln->lock_fd = -1;
    }
}
