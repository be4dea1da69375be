/* Who may connect to the collector besides its own user and root:
 * `--allow-uid` and `--allow-gid` lists, and the check of a peer against them.
 *
 * A peer is served when its uid (SO_PEERCRED) is the collector's or root, or in
 * the allowed uids, or its gid (SO_PEERCRED) or one of its supplementary groups
 * (the `Groups:` line of /proc/PID/status of the peer) is in the allowed gids. */
#ifndef VTPIN_COLLECTOR_ACCESS_H
#define VTPIN_COLLECTOR_ACCESS_H

#include <stddef.h>
#include <sys/types.h>

#define ACCESS_MAX_IDS 64

struct access {
    uid_t uids[ACCESS_MAX_IDS];
    size_t nuids;
    gid_t gids[ACCESS_MAX_IDS];
    size_t ngids;
};

/* A uid (decimal, 0 to 4294967294) or a user name (getpwnam_r) into *uid. 0 or -EINVAL/-ENOENT. */
int access_parse_uid(const char *s, uid_t *uid);
/* A gid (decimal) or a group name (getgrnam_r) into *gid. 0 or -EINVAL/-ENOENT. */
int access_parse_gid(const char *s, gid_t *gid);

/* Appends (duplicates ignored). 0, or -E2BIG past ACCESS_MAX_IDS. */
int access_add_uid(struct access *a, uid_t uid);
int access_add_gid(struct access *a, gid_t gid);

/* 1 when one of the groups of a /proc/PID/status text (its `Groups:` line) is allowed, else 0. */
int access_groups_allowed(const struct access *a, const char *status_text);

/* 1 when the peer may connect: uid is self or 0, or allowed by a; gid and the
 * supplementary groups read from proc_root/PID/status checked against a's gids. */
int access_peer_allowed(const struct access *a, uid_t self, pid_t pid, uid_t uid, gid_t gid, const char *proc_root);

#endif
