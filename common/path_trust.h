/* Whether a path a vtpin program connects to, listens in or writes into is its own.
 * Another user who makes /tmp/vtpin-0 first, or plants a link in a run's directory, must
 * neither receive root's events nor steer where root writes (issue 37). One rule for the
 * agent, the CLI and the collector:
 *   a client (agent, vtpin status/top) trusts a socket and its directory that belong to its
 *   own uid or to root, in a directory others cannot write unless it is sticky (/tmp), and
 *   a collector that listens as its own uid or root (SO_PEERCRED);
 *   a program's own directory (the collector's socket and recording directories, a run's
 *   directory) is a real directory, not a link, owned by its uid, that no one else can write.
 * The verdicts are pure (unit.path_trust); the checks stat the path and word the refusal. */
#ifndef VTPIN_COMMON_PATH_TRUST_H
#define VTPIN_COMMON_PATH_TRUST_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

enum path_trust {
    PATH_TRUST_OK = 0,
    PATH_TRUST_FOREIGN,    /* owned by another user */
    PATH_TRUST_OPEN,       /* other users can write it */
    PATH_TRUST_LINK,       /* a symbolic link */
    PATH_TRUST_NOT_DIR,    /* not a directory */
    PATH_TRUST_NOT_SOCKET, /* not a socket */
};

#define PATH_TRUST_ROOT 1u   /* root's is trusted too: a client of root's collector */
#define PATH_TRUST_STICKY 2u /* a directory others can write is fine when sticky: only owners remove entries */

/* Whether uid is me (or root, with PATH_TRUST_ROOT). */
int path_trust_uid(uid_t uid, uid_t me, unsigned flags);
/* The verdict on a directory from its lstat. */
enum path_trust path_trust_dir(const struct stat *st, uid_t me, unsigned flags);
/* The verdict on a socket from its stat. */
enum path_trust path_trust_socket(const struct stat *st, uid_t me, unsigned flags);

/* The collector socket at path, for a client running as me: its directory (stat) and the
 * socket (stat, as connect() follows) are me's or root's. 0; -ENOENT when either is missing
 * (no collector: connect says so); -EPERM, -ENOTDIR or -ENOTSOCK with err naming the path
 * and why; or -errno. */
int path_trust_check_socket(const char *path, uid_t me, char *err, size_t errlen);

/* A directory of this program's own (lstat: never through a link): owned by me, a real
 * directory, no one else can write it. 0; -EPERM, -ENOTDIR with err; or -errno (-ENOENT). */
int path_trust_check_own_dir(const char *dir, uid_t me, char *err, size_t errlen);

/* A file this program writes (a recording, a trace, a log), opened for writing: never through a
 * link (another user's link in /tmp would steer where we write), created with mode, and never
 * another user's regular file (-EPERM). O_TRUNC in flags empties a regular file only once it is
 * known to be ours, and gives it mode (an older file keeps its mode otherwise); O_APPEND appends.
 * A device or pipe is written as is. The fd, or -errno. */
int path_trust_open_own_file(const char *path, int flags, mode_t mode);

#endif
