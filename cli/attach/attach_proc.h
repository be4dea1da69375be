/* The attach target as /proc shows it (I/O; the parsing is in attach_protocol.h). */
#ifndef VTPIN_CLI_ATTACH_PROC_H
#define VTPIN_CLI_ATTACH_PROC_H

#include <sys/types.h>

#include "attach_protocol.h"

/* Reads /proc/PID/status into t: 0, -ESRCH when there is no such process,
 * -EBADMSG when the file lacks Pid, Uid or Gid, else -errno. */
int attach_proc_read(pid_t pid, struct attach_target *t);

/* When process pid started, in seconds since the epoch (/proc/PID/stat's starttime after
 * /proc/stat's btime; to a clock tick, btime to the second): 0, or -errno. */
int attach_proc_started(pid_t pid, double *at);

/* 1 when process pid has libjvm.so mapped, 0 when not, -errno when its maps
 * cannot be read. (Before a SIGQUIT: many programs die or shut down on one.) */
int attach_proc_has_jvm(pid_t pid);

/* For when the maps cannot be read (another user's process, and we are
 * not root): what anyone may see of it. 1 when it looks like a JVM (a java
 * command line, or HotSpot's /tmp/hsperfdata_<user>/<pid>), 0 when it does
 * not (why[cap] says what was looked at), -errno when its command line
 * cannot be read. */
int attach_proc_jvm_hints(const struct attach_target *t, char *why, size_t cap);

#endif
