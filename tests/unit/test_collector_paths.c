/* Unit tests for collector/paths.c (the default socket and recording
 * directory rules, private directories) and common/units.c. */
#include "common/socket_path.h"
#include "common/units.h"
#include "paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static void test_default_socket(void)
{
    char out[256], want[256];
    setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
    CHECK_INT(socket_path_default(out, sizeof(out)), 0);
    CHECK_STR(out, "/run/user/1000/vtpin/collector.sock");

    snprintf(want, sizeof(want), "/tmp/vtpin-%u/collector.sock", (unsigned)geteuid());
    unsetenv("XDG_RUNTIME_DIR");
    CHECK_INT(socket_path_default(out, sizeof(out)), 0);
    CHECK_STR(out, want);
    setenv("XDG_RUNTIME_DIR", "", 1); /* empty: as if unset */
    CHECK_INT(socket_path_default(out, sizeof(out)), 0);
    CHECK_STR(out, want);
    setenv("XDG_RUNTIME_DIR", "relative/dir", 1); /* not absolute: ignored (XDG spec) */
    CHECK_INT(socket_path_default(out, sizeof(out)), 0);
    CHECK_STR(out, want);

    char longdir[200];
    memset(longdir, 'a', sizeof(longdir) - 1);
    longdir[0] = '/';
    longdir[sizeof(longdir) - 1] = '\0';
    setenv("XDG_RUNTIME_DIR", longdir, 1); /* does not fit a sockaddr_un */
    CHECK_INT(socket_path_default(out, sizeof(out)), -ENAMETOOLONG);
    setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
    CHECK_INT(socket_path_default(out, 10), -ENAMETOOLONG);
    unsetenv("XDG_RUNTIME_DIR");
}

static void test_default_dir(void)
{
    char out[256];
    setenv("XDG_STATE_HOME", "/home/u/.state", 1);
    CHECK_INT(collector_default_dir(out, sizeof(out)), 0);
    CHECK_STR(out, "/home/u/.state/vtpin");
    unsetenv("XDG_STATE_HOME");
    setenv("HOME", "/home/u", 1);
    CHECK_INT(collector_default_dir(out, sizeof(out)), 0);
    CHECK_STR(out, "/home/u/.local/state/vtpin");
    setenv("XDG_STATE_HOME", "not/absolute", 1);
    CHECK_INT(collector_default_dir(out, sizeof(out)), 0);
    CHECK_STR(out, "/home/u/.local/state/vtpin");
    unsetenv("XDG_STATE_HOME");
}

static void test_dirname(void)
{
    char out[64];
    CHECK_INT(paths_dirname("/a/b/c.sock", out, sizeof(out)), 0);
    CHECK_STR(out, "/a/b");
    CHECK_INT(paths_dirname("/c.sock", out, sizeof(out)), 0);
    CHECK_STR(out, "/");
    CHECK_INT(paths_dirname("c.sock", out, sizeof(out)), 0);
    CHECK_STR(out, ".");
    CHECK_INT(paths_dirname("/aaaa/b", out, 3), -ENAMETOOLONG);
}

static void test_private_dir(void)
{
    char base[] = "/tmp/vtpin-paths-XXXXXX", dir[256], err[256];
    if (!CHECK(mkdtemp(base) != NULL))
        return;
    snprintf(dir, sizeof(dir), "%s/x/y/z/", base);
    CHECK_INT(paths_make_private_dir(dir, 0, err, sizeof(err)), 0);
    struct stat st;
    snprintf(dir, sizeof(dir), "%s/x/y/z", base);
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
    /* strict tightens a directory of ours */
    chmod(dir, 0755);
    CHECK_INT(paths_make_private_dir(dir, 1, err, sizeof(err)), 0);
    CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
    /* one others can write is refused, strict or not, and left as it is: never tightened,
     * as someone else may have put a socket or a link in it already */
    chmod(dir, 0777);
    CHECK_INT(paths_make_private_dir(dir, 1, err, sizeof(err)), -EPERM);
    CHECK_CONTAINS(err, "can be written by other users");
    CHECK_INT(paths_make_private_dir(dir, 0, err, sizeof(err)), -EPERM);
    CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0777);
    chmod(dir, 0700);
    /* others allowed to connect: strict makes it 0711 (traversable), and back to 0700 */
    CHECK_INT(paths_make_dir(dir, 1, 0711, err, sizeof(err)), 0);
    CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0711);
    CHECK_INT(paths_make_private_dir(dir, 1, err, sizeof(err)), 0);
    CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
    char shared[256];
    snprintf(shared, sizeof(shared), "%s/s", base);
    mode_t old = umask(077); /* a created directory gets 0711 whatever the umask */
    CHECK_INT(paths_make_dir(shared, 0, 0711, err, sizeof(err)), 0);
    umask(old);
    CHECK(stat(shared, &st) == 0 && (st.st_mode & 0777) == 0711);
    rmdir(shared);
    /* a symlink and a file are refused, strict or not */
    char link[256], file[256];
    snprintf(link, sizeof(link), "%s/link", base);
    CHECK(symlink(dir, link) == 0);
    CHECK_INT(paths_make_private_dir(link, 1, err, sizeof(err)), -ENOTDIR);
    CHECK_INT(paths_make_private_dir(link, 0, err, sizeof(err)), -ENOTDIR);
    CHECK_CONTAINS(err, "symbolic link");
    snprintf(file, sizeof(file), "%s/file", base);
    FILE *f = fopen(file, "w");
    if (f)
        fclose(f);
    CHECK_INT(paths_make_private_dir(file, 0, err, sizeof(err)), -ENOTDIR);
    CHECK_CONTAINS(err, file);
    unlink(link);
    unlink(file);
    rmdir(dir);
    snprintf(dir, sizeof(dir), "%s/x/y", base);
    rmdir(dir);
    snprintf(dir, sizeof(dir), "%s/x", base);
    rmdir(dir);
    rmdir(base);
}

static void test_units(void)
{
    int64_t ns = -1;
    CHECK_INT(units_parse_duration("1s", &ns), 0);
    CHECK_INT(ns, 1000000000);
    CHECK_INT(units_parse_duration("250ms", &ns), 0);
    CHECK_INT(ns, 250000000);
    CHECK_INT(units_parse_duration("1.5s", &ns), 0);
    CHECK_INT(ns, 1500000000);
    CHECK_INT(units_parse_duration("2m", &ns), 0);
    CHECK_INT(ns, 120000000000LL);
    CHECK_INT(units_parse_duration("10us", &ns), 0);
    CHECK_INT(ns, 10000);
    CHECK_INT(units_parse_duration("0", &ns), 0);
    CHECK_INT(ns, 0);
    CHECK_INT(units_parse_duration("5", &ns), -EINVAL); /* a unit is required */
    CHECK_INT(units_parse_duration("-1s", &ns), -EINVAL);
    CHECK_INT(units_parse_duration("1h", &ns), -EINVAL);
    CHECK_INT(units_parse_duration("", &ns), -EINVAL);
    CHECK_INT(units_parse_duration("nan", &ns), -EINVAL);
    CHECK_INT(units_parse_duration("inf", &ns), -EINVAL);
    CHECK_INT(units_parse_duration(" 1s", &ns), -EINVAL);
    CHECK_INT(units_parse_duration("1e30s", &ns), -ERANGE);

    uint64_t b = 0;
    CHECK_INT(units_parse_size("1048576", &b), 0);
    CHECK_UINT(b, 1048576);
    CHECK_INT(units_parse_size("64k", &b), 0);
    CHECK_UINT(b, 65536);
    CHECK_INT(units_parse_size("1M", &b), 0);
    CHECK_UINT(b, 1048576);
    CHECK_INT(units_parse_size("2MiB", &b), 0);
    CHECK_UINT(b, 2097152);
    CHECK_INT(units_parse_size("1G", &b), 0);
    CHECK_UINT(b, 1073741824);
    CHECK_INT(units_parse_size("1T", &b), -EINVAL);
    CHECK_INT(units_parse_size("-1", &b), -EINVAL);
    CHECK_INT(units_parse_size("k", &b), -EINVAL);
    CHECK_INT(units_parse_size("99999999999999999999", &b), -ERANGE);
    CHECK_INT(units_parse_size("17179869184G", &b), -ERANGE);

    uint64_t n = 0;
    CHECK_INT(units_parse_count("3", 1, 10, &n), 0);
    CHECK_UINT(n, 3);
    CHECK_INT(units_parse_count("0", 1, 10, &n), -ERANGE);
    CHECK_INT(units_parse_count("11", 1, 10, &n), -ERANGE);
    CHECK_INT(units_parse_count("3x", 1, 10, &n), -EINVAL);
    CHECK_INT(units_parse_count("-3", 0, 10, &n), -EINVAL);

    char out[32];
    CHECK_STR(units_format_duration(999, out, sizeof(out)), "999 ns");
    CHECK_STR(units_format_duration(340000000, out, sizeof(out)), "340.0 ms");
    CHECK_STR(units_format_duration(1200000000, out, sizeof(out)), "1.20 s");
    CHECK_STR(units_format_duration(65000000000LL, out, sizeof(out)), "65.00 s");
    CHECK_STR(units_format_duration(599990000000LL, out, sizeof(out)), "599.99 s");
    CHECK_STR(units_format_duration(600000000000LL, out, sizeof(out)), "10m00s");
    CHECK_STR(units_format_duration(3599000000000LL, out, sizeof(out)), "59m59s");
    CHECK_STR(units_format_duration(7380000000000LL, out, sizeof(out)), "2h03m");
    CHECK_STR(units_format_duration(-5, out, sizeof(out)), "0 ns");
}

int main(void)
{
    CHECK_RUN(test_default_socket);
    CHECK_RUN(test_default_dir);
    CHECK_RUN(test_dirname);
    CHECK_RUN(test_private_dir);
    CHECK_RUN(test_units);
    CHECK_MAIN_RETURN();
}
