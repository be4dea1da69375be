/* Unit tests for collector/access.c: --allow-uid/--allow-gid values and the
 * peer check (own uid, root, allowed uid, gid, supplementary groups from a
 * /proc/PID/status written under a fake proc root). */
#include "access.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static void test_parse(void)
{
    uid_t uid = 7;
    gid_t gid = 7;
    CHECK_INT(access_parse_uid("0", &uid), 0);
    CHECK_UINT(uid, 0);
    CHECK_INT(access_parse_uid("65534", &uid), 0);
    CHECK_UINT(uid, 65534);
    CHECK_INT(access_parse_uid("4294967294", &uid), 0);
    CHECK_UINT(uid, 4294967294u);
    CHECK_INT(access_parse_uid("4294967295", &uid), -EINVAL); /* (uid_t)-1: no id */
    CHECK_INT(access_parse_uid("99999999999", &uid), -EINVAL);
    CHECK_INT(access_parse_uid("-1", &uid), -ENOENT); /* not a number: looked up as a name */
    CHECK_INT(access_parse_uid("", &uid), -EINVAL);
    CHECK_INT(access_parse_uid("12abc", &uid), -EINVAL);
    CHECK_INT(access_parse_uid("no-such-user-vtpin", &uid), -ENOENT);
    CHECK_INT(access_parse_uid("root", &uid), 0); /* every system has it */
    CHECK_UINT(uid, 0);
    CHECK_INT(access_parse_gid("4242", &gid), 0);
    CHECK_UINT(gid, 4242);
    CHECK_INT(access_parse_gid("root", &gid), 0);
    CHECK_UINT(gid, 0);
    CHECK_INT(access_parse_gid("no-such-group-vtpin", &gid), -ENOENT);
    CHECK_INT(access_parse_gid(" 1", &gid), -ENOENT);
}

static void test_add(void)
{
    struct access a;
    memset(&a, 0, sizeof(a));
    CHECK_INT(access_add_uid(&a, 5), 0);
    CHECK_INT(access_add_uid(&a, 5), 0);
    CHECK_UINT(a.nuids, 1);
    for (unsigned i = 0; i < ACCESS_MAX_IDS - 1; i++)
        CHECK_INT(access_add_gid(&a, 100 + i), 0);
    CHECK_INT(access_add_gid(&a, 5000), 0);
    CHECK_INT(access_add_gid(&a, 5001), -E2BIG);
    CHECK_UINT(a.ngids, ACCESS_MAX_IDS);
}

static void test_groups_line(void)
{
    struct access a;
    memset(&a, 0, sizeof(a));
    access_add_gid(&a, 27);
    CHECK_INT(access_groups_allowed(&a, "Name:\tx\nGid:\t27\t27\t27\t27\nGroups:\t4 24 \nNSpid:\t27\n"), 0);
    CHECK_INT(access_groups_allowed(&a, "Name:\tx\nGroups:\t4 24 27 \nNSpid:\t1\n"), 1);
    CHECK_INT(access_groups_allowed(&a, "Groups:\t27\n"), 1);
    CHECK_INT(access_groups_allowed(&a, "Groups:\t\nUid:\t27\n"), 0); /* no groups: the next line is not read */
    CHECK_INT(access_groups_allowed(&a, "Name:\tGroups: 27\n"), 0);   /* only a line starting with it */
    CHECK_INT(access_groups_allowed(&a, "Groups:\t270 2 127\n"), 0);
}

/* Writes base/PID/status with these lines. */
static void write_status(const char *base, int pid, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%d", base, pid);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/%d/status", base, pid);
    FILE *f = fopen(path, "w");
    if (!CHECK(f != NULL))
        return;
    fputs(text, f);
    fclose(f);
}

static void test_peer(void)
{
    char base[] = "/tmp/vtpin-access-XXXXXX";
    if (!CHECK(mkdtemp(base) != NULL))
        return;
    struct access a;
    memset(&a, 0, sizeof(a));
    /* no lists: own uid and root only */
    CHECK_INT(access_peer_allowed(&a, 1000, 10, 1000, 1000, base), 1);
    CHECK_INT(access_peer_allowed(&a, 1000, 10, 0, 0, base), 1);
    CHECK_INT(access_peer_allowed(&a, 1000, 10, 1001, 1000, base), 0);
    access_add_uid(&a, 1001);
    access_add_gid(&a, 500);
    CHECK_INT(access_peer_allowed(&a, 1000, 10, 1001, 1001, base), 1);
    CHECK_INT(access_peer_allowed(&a, 1000, 10, 1002, 500, base), 1);  /* SO_PEERCRED gid */
    CHECK_INT(access_peer_allowed(&a, 1000, 10, 1002, 1002, base), 0); /* no status file */
    write_status(base, 11,
                 "Name:\tjava\nUid:\t1002\t1002\t1002\t1002\nGid:\t1002\t1002\t1002\t1002\nGroups:\t20 500 \n");
    CHECK_INT(access_peer_allowed(&a, 1000, 11, 1002, 1002, base), 1); /* a supplementary group */
    /* the pid now belongs to another user (exited, reused): its groups do not count */
    CHECK_INT(access_peer_allowed(&a, 1000, 11, 1003, 1003, base), 0);
    write_status(base, 12, "Name:\tjava\nUid:\t1002\t1002\t1002\t1002\nGroups:\t20 21\n");
    CHECK_INT(access_peer_allowed(&a, 1000, 12, 1002, 1002, base), 0);
    CHECK_INT(access_peer_allowed(&a, 1000, 0, 1002, 1002, base), 0); /* no pid */
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
    CHECK_INT(system(cmd), 0);
}

/* Root and the collector's user are trusted; a peer the allow lists serve speaks
 * only for the process it is (issue 37) and sees only its own JVMs unless see_all. */
static void test_trust(void)
{
    const uid_t self = 1000;
    struct access a = {0};
    CHECK_INT(access_uid_trusted(self, 0), 1);
    CHECK_INT(access_uid_trusted(self, self), 1);
    CHECK_INT(access_uid_trusted(self, 65534), 0);
    CHECK_INT(access_uid_trusted(0, 65534), 0);
    /* a Hello naming the peer's own process: anyone served */
    CHECK_INT(access_hello_allowed(self, 65534, 1), 1);
    CHECK_INT(access_hello_allowed(self, 0, 1), 1);
    /* naming another process (a relay, a replay, an impostor): trusted peers only */
    CHECK_INT(access_hello_allowed(self, 0, 0), 1);
    CHECK_INT(access_hello_allowed(self, self, 0), 1);
    CHECK_INT(access_hello_allowed(self, 65534, 0), 0);
    CHECK_INT(access_hello_allowed(0, 1001, 0), 0);
    /* queries */
    CHECK_INT(access_add_uid(&a, 65534), 0);
    CHECK_INT(access_sees_all(&a, self, 0), 1);
    CHECK_INT(access_sees_all(&a, self, self), 1);
    CHECK_INT(access_sees_all(&a, self, 65534), 0);
    a.see_all = 1;
    CHECK_INT(access_sees_all(&a, self, 65534), 1);
}

int main(void)
{
    CHECK_RUN(test_parse);
    CHECK_RUN(test_add);
    CHECK_RUN(test_groups_line);
    CHECK_RUN(test_peer);
    CHECK_RUN(test_trust);
    CHECK_MAIN_RETURN();
}
