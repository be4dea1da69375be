/* HotSpot's dynamic attach protocol on Linux (JDK 21 and 25), spoken the way
 * jattach speaks it, so the target's container needs no JDK tools:
 *
 *   1. /proc/PID/status names the target inside its own pid namespace (the
 *      last NSpid field), its uid/gid and whether it catches SIGQUIT.
 *   2. When /proc/PID/root/tmp/.java_pid<nspid> (a Unix socket) is missing,
 *      the trigger file .attach_pid<nspid> in the target's cwd (or /tmp) and
 *      a SIGQUIT make the JVM start its attach listener; we poll for the socket.
 *      SIGQUIT goes only to a process that maps libjvm.so and catches it:
 *      others (sleep, nginx, a Go program) would die or shut down.
 *   3. A request is "1\0" COMMAND "\0" and exactly three arguments, each
 *      NUL-terminated; the reply, read until EOF, is the listener's result code
 *      on the first line ("0": the command ran) and the command's output.
 *
 * This module is the pure part: request encoding, reply parsing, status and
 * maps parsing, the default agent path. It works on buffers only (unit
 * tested in tests/unit/test_attach_protocol.c). The I/O is elsewhere:
 * attach_proc.h (reading /proc), attach_creds.h (taking the JVM's uid/gid),
 * attach_listener.h (trigger file, SIGQUIT, socket, request and reply).
 * Functions return 0 (or a length) or -errno. */
#ifndef VTPIN_CLI_ATTACH_PROTOCOL_H
#define VTPIN_CLI_ATTACH_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ATTACH_PROTOCOL_VERSION "1"
#define ATTACH_ARGS 3       /* a version-1 request carries exactly 3 arguments */
#define ATTACH_NAME_MAX 16  /* HotSpot's AttachOperation::name_length_max */
#define ATTACH_ARG_MAX 1024 /* HotSpot's AttachOperation::arg_length_max */
#define ATTACH_REQUEST_MAX (2 + ATTACH_NAME_MAX + 1 + ATTACH_ARGS * (ATTACH_ARG_MAX + 1))
#define ATTACH_REPLY_MAX (1u << 20) /* enough for `load`; a thread dump would want more */

/* Encodes the request for cmd with nargs (<= ATTACH_ARGS) arguments into
 * buf[cap], padding the missing ones with empty strings. Returns the length
 * (> 0), -EINVAL (no command, too many arguments), -E2BIG (a name or an
 * argument longer than HotSpot accepts) or -ENOSPC (cap too small). */
ssize_t attach_request_encode(char *buf, size_t cap, const char *cmd, const char *const *args, size_t nargs);

struct attach_reply {
    int code;         /* the listener's result code: 0 = the command ran */
    const char *text; /* the rest (the command's output), NUL-terminated, maybe "" */
};

/* Splits a reply (text[len], NUL-terminated at text[len]; modified in place)
 * into the result code and the rest. -EBADMSG when it is empty or its first
 * line is not a number. */
int attach_reply_parse(char *text, size_t len, struct attach_reply *reply);

/* The "return code: N" line `load` prints after Agent_OnAttach ran: 0 and *rc,
 * or -ENOENT when text has none (the library was not loaded: text says why). */
int attach_reply_return_code(const char *text, int *rc);

struct attach_target {
    pid_t pid;   /* "Pid:" (in our pid namespace) */
    pid_t tgid;  /* "Tgid:": differs from pid when pid names a thread */
    pid_t nspid; /* the last "NSpid:" field (pid when absent): names the files */
    uid_t euid;  /* effective uid and gid: the JVM accepts only peers with these (or root) */
    gid_t egid;
    char state;       /* "State:" letter: 'Z' and 'X' mean gone */
    int catches_quit; /* SIGQUIT caught ("SigCgt") and not ignored ("SigIgn") */
    char name[64];    /* "Name:" (comm) */
};

/* Parses the text of /proc/PID/status. -EBADMSG when Pid, Uid or Gid is missing. */
int attach_status_parse(const char *text, struct attach_target *t);

/* 1 when a line of /proc/PID/maps maps HotSpot's libjvm.so, else 0. */
int attach_maps_line_is_jvm(const char *line);

/* 1 when a process's command line (/proc/PID/cmdline: cmdline[len], its
 * arguments NUL-separated, world-readable) looks like a java launcher's:
 * argv[0] named java*, or an argument only a JVM takes (-XX:, -jar, -cp,
 * -javaagent:, ...); else 0. A hint for when /proc/PID/maps (which says for
 * sure) cannot be read: a JVM embedded under another name does not show. */
int attach_cmdline_is_java(const char *cmdline, size_t len);

/* The agent library next to the vtpin executable exe (an absolute path):
 * <dir>/agent/libvtpin.so (the build tree), then <dir>/../lib/vtpin/libvtpin.so
 * (an install). exists(path) decides (the caller's check: access(R_OK) in
 * the CLI, a fake filesystem in the tests). 0 with the path in
 * out[cap]; -ENOENT with the candidates tried, separated by " or ", in out;
 * -ENAMETOOLONG; -EINVAL when exe has no directory or exists is NULL. */
int attach_agent_default(const char *exe, int (*exists)(const char *path), char *out, size_t cap);

/* An error message into err[cap] (nothing when err is NULL or cap 0), for the attach modules. */
void attach_say(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
