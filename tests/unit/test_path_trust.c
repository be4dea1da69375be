/* Unit tests for common/path_trust.c: whose paths a vtpin program trusts (issue 37). The
 * verdicts on synthetic stat results, every row; the checks on real paths of this user. */
#include "common/path_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"

static struct stat fake(mode_t mode, uid_t uid)
{
    struct stat st;
    memset(&st, 0, sizeof(st));
    st.st_mode = mode;
    st.st_uid = uid;
    return st;
}

static void test_uid(void)
{
    CHECK(path_trust_uid(1000, 1000, 0));
    CHECK(!path_trust_uid(0, 1000, 0));
    CHECK(path_trust_uid(0, 1000, PATH_TRUST_ROOT));
    CHECK(!path_trust_uid(65534, 0, PATH_TRUST_ROOT)); /* root trusts no one else */
    CHECK(!path_trust_uid(65534, 1000, PATH_TRUST_ROOT));
}

static void test_dir_verdicts(void)
{
    const unsigned client = PATH_TRUST_ROOT | PATH_TRUST_STICKY;
    struct stat st = fake(S_IFDIR | 0700, 0);
    CHECK_INT(path_trust_dir(&st, 0, 0), PATH_TRUST_OK);
    /* /tmp/vtpin-0 made by nobody: root's client and root's collector refuse it */
    st = fake(S_IFDIR | 0755, 65534);
    CHECK_INT(path_trust_dir(&st, 0, client), PATH_TRUST_FOREIGN);
    CHECK_INT(path_trust_dir(&st, 0, 0), PATH_TRUST_FOREIGN);
    /* root's /run/vtpin (0711) for a user's client; not for a user's own collector */
    st = fake(S_IFDIR | 0711, 0);
    CHECK_INT(path_trust_dir(&st, 1000, client), PATH_TRUST_OK);
    CHECK_INT(path_trust_dir(&st, 1000, 0), PATH_TRUST_FOREIGN);
    /* open to others: refused, also when ours */
    st = fake(S_IFDIR | 0777, 1000);
    CHECK_INT(path_trust_dir(&st, 1000, client), PATH_TRUST_OPEN);
    CHECK_INT(path_trust_dir(&st, 1000, 0), PATH_TRUST_OPEN);
    st = fake(S_IFDIR | 0770, 1000);
    CHECK_INT(path_trust_dir(&st, 1000, 0), PATH_TRUST_OPEN);
    /* sticky, like /tmp: fine for a client's socket, never for a program's own directory */
    st = fake(S_IFDIR | S_ISVTX | 0777, 0);
    CHECK_INT(path_trust_dir(&st, 1000, client), PATH_TRUST_OK);
    CHECK_INT(path_trust_dir(&st, 0, 0), PATH_TRUST_OPEN);
    st = fake(S_IFLNK | 0777, 0);
    CHECK_INT(path_trust_dir(&st, 0, client), PATH_TRUST_LINK);
    st = fake(S_IFREG | 0600, 0);
    CHECK_INT(path_trust_dir(&st, 0, client), PATH_TRUST_NOT_DIR);
}

static void test_socket_verdicts(void)
{
    struct stat st = fake(S_IFSOCK | 0600, 1000);
    CHECK_INT(path_trust_socket(&st, 1000, 0), PATH_TRUST_OK);
    CHECK_INT(path_trust_socket(&st, 0, PATH_TRUST_ROOT), PATH_TRUST_FOREIGN);
    st = fake(S_IFSOCK | 0666, 0);
    CHECK_INT(path_trust_socket(&st, 1000, PATH_TRUST_ROOT), PATH_TRUST_OK);
    CHECK_INT(path_trust_socket(&st, 1000, 0), PATH_TRUST_FOREIGN);
    st = fake(S_IFREG | 0600, 1000);
    CHECK_INT(path_trust_socket(&st, 1000, 0), PATH_TRUST_NOT_SOCKET);
}

/* The checks on real paths, all of this user: what is refused here is refused for its
 * mode or kind; another owner needs a second user (tests/jvm/test_paths.py). */
static void test_checks(void)
{
    char base[] = "/tmp/vtpin-trust-XXXXXX", path[64], link[64], err[512];
    if (!CHECK(mkdtemp(base) != NULL))
        return;
    uid_t me = geteuid();
    CHECK_INT(path_trust_check_own_dir(base, me, err, sizeof(err)), 0);
    chmod(base, 0777);
    CHECK_INT(path_trust_check_own_dir(base, me, err, sizeof(err)), -EPERM);
    CHECK_CONTAINS(err, "can be written by other users");
    CHECK_CONTAINS(err, base);
    chmod(base, 0700);
    snprintf(link, sizeof(link), "%s/link", base);
    CHECK(symlink(base, link) == 0);
    CHECK_INT(path_trust_check_own_dir(link, me, err, sizeof(err)), -ENOTDIR);
    CHECK_CONTAINS(err, "symbolic link");
    snprintf(path, sizeof(path), "%s/none", base);
    CHECK_INT(path_trust_check_own_dir(path, me, err, sizeof(err)), -ENOENT);

    /* a socket of ours in a directory of ours; missing: connect's to say */
    snprintf(path, sizeof(path), "%s/c.sock", base);
    CHECK_INT(path_trust_check_socket(path, me, err, sizeof(err)), -ENOENT);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0);
    CHECK_INT(path_trust_check_socket(path, me, err, sizeof(err)), 0);
    chmod(base, 0777); /* others could swap it */
    CHECK_INT(path_trust_check_socket(path, me, err, sizeof(err)), -EPERM);
    CHECK_CONTAINS(err, "its directory");
    chmod(base, 01777); /* sticky: they cannot */
    CHECK_INT(path_trust_check_socket(path, me, err, sizeof(err)), 0);
    chmod(base, 0700);
    CHECK_INT(path_trust_check_socket(link, me, err, sizeof(err)), -ENOTSOCK); /* the link reaches a directory */
    CHECK_CONTAINS(err, "not a socket");
    close(fd);
    unlink(path);
    unlink(link);
    rmdir(base);
}

static char *read_back(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    return buf;
}

/* A file vtpin writes: created with its mode whatever the umask, emptied (and given the mode) only
 * with O_TRUNC, appended to with O_APPEND, never through a link, never another user's. */
static void test_own_file(void)
{
    char base[] = "/tmp/vtpin-own-file-XXXXXX", path[256], link[256], buf[64];
    CHECK(mkdtemp(base) != NULL);
    snprintf(path, sizeof(path), "%s/f", base);
    mode_t old = umask(022);
    int fd = path_trust_open_own_file(path, O_TRUNC, 0600);
    CHECK(fd >= 0 && write(fd, "one\n", 4) == 4);
    close(fd);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    fd = path_trust_open_own_file(path, O_APPEND, 0600); /* a log: appended to */
    CHECK(fd >= 0 && write(fd, "two\n", 4) == 4);
    close(fd);
    CHECK_STR(read_back(path, buf, sizeof(buf)), "one\ntwo\n");
    chmod(path, 0644);
    fd = path_trust_open_own_file(path, O_APPEND, 0600); /* an older log keeps its mode */
    close(fd);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
    fd = path_trust_open_own_file(path, O_TRUNC, 0640); /* a recording: emptied, given the mode */
    close(fd);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640 && st.st_size == 0);
    snprintf(link, sizeof(link), "%s/link", base);
    CHECK(symlink(path, link) == 0);
    CHECK_INT(path_trust_open_own_file(link, O_TRUNC, 0600), -ELOOP);
    CHECK_INT(path_trust_open_own_file(link, O_APPEND, 0600), -ELOOP);
    if (geteuid() == 0) { /* another user's file: root could write it, and must not */
        int theirs = open(path, O_WRONLY | O_APPEND);
        CHECK(theirs >= 0 && write(theirs, "x", 1) == 1);
        close(theirs);
        CHECK(chown(path, 65534, 65534) == 0);
        CHECK_INT(path_trust_open_own_file(path, O_TRUNC, 0600), -EPERM);
        CHECK_INT(path_trust_open_own_file(path, O_APPEND, 0600), -EPERM);
        CHECK(stat(path, &st) == 0 && st.st_size == 1);
    }
    fd = path_trust_open_own_file("/dev/null", O_TRUNC, 0600); /* a device is written as is */
    CHECK(fd >= 0);
    close(fd);
    umask(old);
    unlink(link);
    unlink(path);
    rmdir(base);
}

int main(void)
{
    CHECK_RUN(test_uid);
    CHECK_RUN(test_dir_verdicts);
    CHECK_RUN(test_socket_verdicts);
    CHECK_RUN(test_checks);
    CHECK_RUN(test_own_file);
    CHECK_MAIN_RETURN();
}
