/* Who may connect to the collector besides its own user and root:
 * `--allow-uid` and `--allow-gid` lists, and the check of a peer against them;
 * what a peer may say and see once served.
 *
 * A peer is served when its uid (SO_PEERCRED) is the collector's or root, or in
 * the allowed uids, or its gid (SO_PEERCRED) or one of its supplementary groups
 * (the `Groups:` line of /proc/PID/status of the peer) is in the allowed gids.
 * Root and the collector's user are trusted: their Hello may name a process
 * other than the peer (a relay, a replayed recording) and their queries see
 * every JVM. A peer served only by the allow lists speaks for itself alone and
 * sees the JVMs of its own uid, unless --allow-see-all (see_all). */
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
    int see_all; /* --allow-see-all: every served peer's queries see every JVM */
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

/* 1 when a peer of uid is trusted (root or self, the collector's euid), else 0. */
int access_uid_trusted(uid_t self, uid_t uid);

/* 1 when a peer of uid may say Hello for the process it names: verified (it is
 * that process, jvm_ident_choose) or trusted; else 0 (refuse the connection). */
int access_hello_allowed(uid_t self, uid_t uid, int verified);

/* 1 when a query of a peer of uid lists every JVM: trusted, or a->see_all; else
 * 0 (it lists only the JVMs whose peer had its uid). */
int access_sees_all(const struct access *a, uid_t self, uid_t uid);

#endif
