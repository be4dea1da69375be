/* The I/O half of attach (cli/attach/attach_listener.c, attach_proc.c,
 * attach_creds.c) against real sockets and this process's own /proc, no JVM:
 * the request bytes that reach the listener, the reply read to EOF, a reply
 * that never ends or is too long, a listener that is gone, a socket path that
 * is not a socket or belongs to another user, and a process that is not a
 * JVM (which must never get a SIGQUIT: it would kill this test). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach_creds.h"
#include "attach_listener.h"
#include "attach_proc.h"
#include "check.h"

#define MS 1000000LL

static struct attach_target self(void)
{
    struct attach_target t;
    memset(&t, 0, sizeof(t));
    CHECK_INT(attach_proc_read(getpid(), &t), 0);
    return t;
}

static void test_proc_self(void)
{
    struct attach_target t = self();
    CHECK_INT(t.pid, getpid());
    CHECK_INT(t.tgid, getpid());
    CHECK_INT(t.euid, geteuid());
    CHECK_INT(t.egid, getegid());
    CHECK(t.state != 'Z' && t.state != 'X');
    CHECK_INT(attach_proc_has_jvm(getpid()), 0); /* this test maps no libjvm.so */
    struct attach_target none;
    CHECK_INT(attach_proc_read(0, &none), -ESRCH);
    CHECK_INT(attach_proc_read(0x3ffffff0, &none), -ESRCH); /* above any pid_max */
    CHECK_INT(attach_proc_has_jvm(0x3ffffff0), -ESRCH);
}

static void test_creds_same_user(void)
{
    struct attach_target t = self();
    struct attach_creds saved;
    char err[256] = "";
    CHECK_INT(attach_creds_become(&t, &saved, err, sizeof(err)), 0);
    CHECK_INT(saved.switched, 0); /* our own ids: nothing to take */
    attach_creds_restore(&saved);
    CHECK_INT(geteuid(), t.euid);
}

/* One end of a socketpair plays the JVM: the reply is queued (and its write
 * side shut) before attach_listener_execute runs. */
static void test_execute_reply(void)
{
    int sv[2];
    if (!CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0))
        return;
    static const char reply_bytes[] = "0\nreturn code: 0\n";
    CHECK_INT(write(sv[1], reply_bytes, sizeof(reply_bytes) - 1), sizeof(reply_bytes) - 1);
    shutdown(sv[1], SHUT_WR);
    const char *args[] = {"/a/libvtpin.so", "true", "record=/tmp/x.vtp"};
    char *reply = NULL, err[256] = "";
    size_t len = 99;
    int rc = attach_listener_execute(sv[0], "load", args, 3, 5000 * MS, &reply, &len, err, sizeof(err));
    if (CHECK_INT(rc, 0)) {
        CHECK_INT(len, sizeof(reply_bytes) - 1);
        CHECK_STR(reply, reply_bytes);
    }
    free(reply);
    char req[256];
    static const char want[] = "1\0load\0/a/libvtpin.so\0true\0record=/tmp/x.vtp\0";
    ssize_t n = read(sv[1], req, sizeof(req));
    if (CHECK_INT(n, sizeof(want) - 1))
        CHECK_MEM(req, want, sizeof(want) - 1);
    close(sv[0]);
    close(sv[1]);
}

static void test_execute_empty_and_errors(void)
{
    int sv[2];
    char *reply = NULL, err[256] = "";
    size_t len = 99;
    /* the JVM closes without a word (it does so for a peer of the wrong uid): an empty reply */
    if (CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0)) {
        shutdown(sv[1], SHUT_WR);
        CHECK_INT(attach_listener_execute(sv[0], "load", NULL, 0, 5000 * MS, &reply, &len, err, sizeof(err)), 0);
        CHECK_INT(len, 0);
        CHECK_STR(reply, "");
        free(reply);
        close(sv[0]);
        close(sv[1]);
    }
    /* nobody reads the request any more */
    if (CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0)) {
        close(sv[1]);
        reply = NULL;
        CHECK_INT(attach_listener_execute(sv[0], "load", NULL, 0, 5000 * MS, &reply, &len, err, sizeof(err)), -EPIPE);
        CHECK_CONTAINS(err, "sending the 'load' request");
        CHECK(reply == NULL);
        close(sv[0]);
    }
    /* no complete reply in time: the listener never closes */
    if (CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0)) {
        CHECK_INT(write(sv[1], "0\n", 2), 2);
        CHECK_INT(attach_listener_execute(sv[0], "load", NULL, 0, 50 * MS, &reply, &len, err, sizeof(err)), -ETIMEDOUT);
        CHECK_CONTAINS(err, "no complete reply to 'load'");
        CHECK(reply == NULL);
        close(sv[0]);
        close(sv[1]);
    }
    /* a request HotSpot would not take is not sent */
    if (CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0)) {
        CHECK_INT(
            attach_listener_execute(sv[0], "a_command_name_longer", NULL, 0, 50 * MS, &reply, &len, err, sizeof(err)),
            -E2BIG);
        CHECK_CONTAINS(err, "request too long");
        close(sv[0]);
        close(sv[1]);
    }
}

/* A reply longer than ATTACH_REPLY_MAX: a child writes it until we hang up. */
static void test_execute_reply_too_long(void)
{
    int sv[2];
    if (!CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0))
        return;
    pid_t child = fork();
    if (child == 0) {
        close(sv[0]);
        static char chunk[65536];
        memset(chunk, 'x', sizeof(chunk));
        for (size_t sent = 0; sent < 2 * (size_t)ATTACH_REPLY_MAX;) {
            ssize_t w = send(sv[1], chunk, sizeof(chunk), MSG_NOSIGNAL);
            if (w <= 0)
                _exit(0);
            sent += (size_t)w;
        }
        _exit(0);
    }
    close(sv[1]);
    if (!CHECK(child > 0)) {
        close(sv[0]);
        return;
    }
    char *reply = NULL, err[256] = "";
    size_t len = 0;
    CHECK_INT(attach_listener_execute(sv[0], "load", NULL, 0, 30000 * MS, &reply, &len, err, sizeof(err)), -EMSGSIZE);
    CHECK_CONTAINS(err, "the reply is longer than");
    CHECK(reply == NULL);
    close(sv[0]);
    waitpid(child, NULL, 0);
}

/* /tmp/.java_pid<our pid>, which attach_listener_connect looks for through
 * /proc/<pid>/root: this test stands in for the JVM. */
static void socket_path(char *out, size_t cap)
{
    snprintf(out, cap, "/tmp/.java_pid%d", (int)getpid());
}

static int bound_socket(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0 && bind(fd, (const struct sockaddr *)&addr, sizeof(addr)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void test_connect_and_execute(void)
{
    char path[108];
    socket_path(path, sizeof(path));
    unlink(path);
    int lfd = bound_socket(path);
    if (!CHECK(lfd >= 0) || !CHECK_INT(listen(lfd, 1), 0))
        goto cleanup;
    struct attach_target t = self();
    char err[512] = "";
    int fd = attach_listener_connect(&t, 1000 * MS, NULL, err, sizeof(err));
    if (!CHECK(fd >= 0)) {
        fprintf(stderr, "  err: %s\n", err);
        goto cleanup;
    }
    int jvm = accept(lfd, NULL, NULL);
    if (CHECK(jvm >= 0)) {
        static const char answer[] = "0\nsome output\nreturn code: 0\n";
        CHECK_INT(write(jvm, answer, sizeof(answer) - 1), sizeof(answer) - 1);
        shutdown(jvm, SHUT_WR);
        const char *args[] = {"x"};
        char *reply = NULL;
        size_t len = 0;
        if (CHECK_INT(attach_listener_execute(fd, "jcmd", args, 1, 5000 * MS, &reply, &len, err, sizeof(err)), 0)) {
            struct attach_reply r;
            if (CHECK_INT(attach_reply_parse(reply, len, &r), 0)) {
                CHECK_INT(r.code, 0);
                CHECK_STR(r.text, "some output\nreturn code: 0\n");
            }
        }
        free(reply);
        char req[64];
        static const char want[] = "1\0jcmd\0x\0\0\0";
        if (CHECK_INT(read(jvm, req, sizeof(req)), sizeof(want) - 1))
            CHECK_MEM(req, want, sizeof(want) - 1);
        close(jvm);
    }
    close(fd);
cleanup:
    if (lfd >= 0)
        close(lfd);
    unlink(path);
}

static void test_connect_refusals(void)
{
    char path[108], err[512] = "";
    socket_path(path, sizeof(path));
    unlink(path);
    struct attach_target t = self();

    /* a socket nobody listens on: a JVM that is gone */
    int s = bound_socket(path);
    if (CHECK(s >= 0)) {
        close(s);
        CHECK_INT(attach_listener_connect(&t, 1000 * MS, NULL, err, sizeof(err)), -ECONNREFUSED);
        CHECK_CONTAINS(err, "nobody listens");
        /* someone else's socket at that path is never used */
        if (geteuid() == 0 && CHECK_INT(chown(path, 65534, 65534), 0)) {
            CHECK_INT(attach_listener_connect(&t, 1000 * MS, NULL, err, sizeof(err)), -EPERM);
            CHECK_CONTAINS(err, "belongs to uid 65534");
        }
        unlink(path);
    }
    /* not a socket */
    int f = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (CHECK(f >= 0)) {
        close(f);
        CHECK_INT(attach_listener_connect(&t, 1000 * MS, NULL, err, sizeof(err)), -ENOTSOCK);
        CHECK_CONTAINS(err, "is not a socket");
        unlink(path);
    }
    /* no socket and no libjvm.so: not a JVM, so no trigger file and no SIGQUIT */
    CHECK_INT(attach_listener_connect(&t, 1000 * MS, NULL, err, sizeof(err)), -ESRCH);
    CHECK_CONTAINS(err, "is not a HotSpot JVM");
    char trigger[64];
    snprintf(trigger, sizeof(trigger), "/tmp/.attach_pid%d", (int)getpid());
    CHECK(access(trigger, F_OK) != 0);
    snprintf(trigger, sizeof(trigger), ".attach_pid%d", (int)getpid());
    CHECK(access(trigger, F_OK) != 0);
}

int main(void)
{
    CHECK_RUN(test_proc_self);
    CHECK_RUN(test_creds_same_user);
    CHECK_RUN(test_execute_reply);
    CHECK_RUN(test_execute_empty_and_errors);
    CHECK_RUN(test_execute_reply_too_long);
    CHECK_RUN(test_connect_and_execute);
    CHECK_RUN(test_connect_refusals);
    CHECK_MAIN_RETURN();
}
