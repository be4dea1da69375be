/* The pure parts of the attach protocol (cli/attach/attach_protocol.c): request
 * bytes, reply parsing (well-formed and malformed), /proc/PID/status parsing
 * and where the agent library is looked for. */
#include <errno.h>
#include <string.h>

#include "attach_protocol.h"
#include "check.h"

static void test_request_load(void)
{
    char buf[ATTACH_REQUEST_MAX];
    const char *args[] = {"/abs/libvtpin.so", "true", "record=/tmp/x.vtp,trace"};
    ssize_t n = attach_request_encode(buf, sizeof(buf), "load", args, 3);
    static const char want[] = "1\0load\0/abs/libvtpin.so\0true\0record=/tmp/x.vtp,trace\0";
    if (!CHECK_INT(n, sizeof(want) - 1))
        return;
    CHECK_MEM(buf, want, sizeof(want) - 1);
}

static void test_request_pads_missing_args(void)
{
    char buf[64];
    const char *args[] = {"Thread.print"};
    ssize_t n = attach_request_encode(buf, sizeof(buf), "jcmd", args, 1);
    static const char want[] = "1\0jcmd\0Thread.print\0\0\0";
    if (CHECK_INT(n, sizeof(want) - 1))
        CHECK_MEM(buf, want, sizeof(want) - 1);

    n = attach_request_encode(buf, sizeof(buf), "properties", NULL, 0);
    static const char want0[] = "1\0properties\0\0\0\0";
    if (CHECK_INT(n, sizeof(want0) - 1))
        CHECK_MEM(buf, want0, sizeof(want0) - 1);

    const char *with_null[] = {"a", NULL, "c"};
    n = attach_request_encode(buf, sizeof(buf), "load", with_null, 3);
    static const char want_null[] = "1\0load\0a\0\0c\0";
    if (CHECK_INT(n, sizeof(want_null) - 1))
        CHECK_MEM(buf, want_null, sizeof(want_null) - 1);
}

static void test_request_limits(void)
{
    char buf[ATTACH_REQUEST_MAX];
    const char *four[] = {"a", "b", "c", "d"};
    CHECK_INT(attach_request_encode(buf, sizeof(buf), "load", four, 4), -EINVAL);
    CHECK_INT(attach_request_encode(buf, sizeof(buf), "", NULL, 0), -EINVAL);
    CHECK_INT(attach_request_encode(buf, sizeof(buf), NULL, NULL, 0), -EINVAL);
    CHECK_INT(attach_request_encode(buf, sizeof(buf), "load", NULL, 2), -EINVAL);
    CHECK_INT(attach_request_encode(buf, sizeof(buf), "a_command_name_longer", NULL, 0), -E2BIG);

    static char longest[ATTACH_ARG_MAX + 2];
    memset(longest, 'x', ATTACH_ARG_MAX);
    longest[ATTACH_ARG_MAX] = '\0';
    const char *ok[] = {longest, longest, longest};
    ssize_t n = attach_request_encode(buf, sizeof(buf), "0123456789abcdef", ok, 3);
    CHECK_INT(n, ATTACH_REQUEST_MAX); /* the largest request HotSpot reads fits exactly */
    longest[ATTACH_ARG_MAX] = 'x';
    longest[ATTACH_ARG_MAX + 1] = '\0';
    const char *too_long[] = {"a", "b", longest};
    CHECK_INT(attach_request_encode(buf, sizeof(buf), "load", too_long, 3), -E2BIG);

    const char *args[] = {"/abs/libvtpin.so", "true", "x"};
    CHECK_INT(attach_request_encode(buf, 10, "load", args, 3), -ENOSPC);
    /* exactly the size needed: 2 + 5 + 17 + 5 + 2 = 31 */
    CHECK_INT(attach_request_encode(buf, 31, "load", args, 3), 31);
    CHECK_INT(attach_request_encode(buf, 30, "load", args, 3), -ENOSPC);
}

static int parse(const char *s, struct attach_reply *r, char *buf, size_t cap)
{
    size_t len = strlen(s);
    if (len >= cap)
        return -ENOSPC;
    memcpy(buf, s, len + 1);
    return attach_reply_parse(buf, len, r);
}

static void test_reply_success(void)
{
    char buf[256];
    struct attach_reply r;
    int rc;
    if (!CHECK_INT(parse("0\nreturn code: 0\n", &r, buf, sizeof(buf)), 0))
        return;
    CHECK_INT(r.code, 0);
    CHECK_STR(r.text, "return code: 0\n");
    CHECK_INT(attach_reply_return_code(r.text, &rc), 0);
    CHECK_INT(rc, 0);

    /* the agent refused: Agent_OnAttach returned JNI_ERR */
    if (CHECK_INT(parse("0\nreturn code: -1\n", &r, buf, sizeof(buf)), 0)) {
        CHECK_INT(attach_reply_return_code(r.text, &rc), 0);
        CHECK_INT(rc, -1);
    }
    /* output before the return code line, CRs, no final newline */
    if (CHECK_INT(parse("0\r\nsome warning\r\nreturn code: 7\r", &r, buf, sizeof(buf)), 0)) {
        CHECK_INT(r.code, 0);
        CHECK_INT(attach_reply_return_code(r.text, &rc), 0);
        CHECK_INT(rc, 7);
    }
    /* a bare result code: the command ran and said nothing */
    if (CHECK_INT(parse("0", &r, buf, sizeof(buf)), 0)) {
        CHECK_INT(r.code, 0);
        CHECK_STR(r.text, "");
        CHECK_INT(attach_reply_return_code(r.text, &rc), -ENOENT);
    }
}

static void test_reply_failures(void)
{
    char buf[512];
    struct attach_reply r;
    int rc;
    /* the library could not be loaded: result 0, no return code, the reason */
    if (CHECK_INT(parse("0\n/x/libvtpin.so was not loaded.\n/x/libvtpin.so: cannot open shared object file\n", &r, buf,
                        sizeof(buf)),
                  0)) {
        CHECK_INT(r.code, 0);
        CHECK_INT(attach_reply_return_code(r.text, &rc), -ENOENT);
        CHECK_CONTAINS(r.text, "was not loaded");
    }
    /* the listener refused the command */
    if (CHECK_INT(parse("-1\nDynamic agent loading is not enabled. Use -XX:+EnableDynamicAgentLoading to launch "
                        "target VM.\n",
                        &r, buf, sizeof(buf)),
                  0)) {
        CHECK_INT(r.code, -1);
        CHECK_CONTAINS(r.text, "EnableDynamicAgentLoading");
    }
    if (CHECK_INT(parse("101\n", &r, buf, sizeof(buf)), 0))
        CHECK_INT(r.code, 101);
    /* "return code:" must be a line of its own, with a number */
    if (CHECK_INT(parse("0\nreturn code: zero\n", &r, buf, sizeof(buf)), 0))
        CHECK_INT(attach_reply_return_code(r.text, &rc), -EBADMSG);
    if (CHECK_INT(parse("0\nthe return code: 0\n", &r, buf, sizeof(buf)), 0))
        CHECK_INT(attach_reply_return_code(r.text, &rc), -ENOENT);
    if (CHECK_INT(parse("0\nreturn code: 0 and more\n", &r, buf, sizeof(buf)), 0))
        CHECK_INT(attach_reply_return_code(r.text, &rc), -EBADMSG);
}

static void test_reply_garbage(void)
{
    char buf[256];
    struct attach_reply r;
    CHECK_INT(parse("", &r, buf, sizeof(buf)), -EBADMSG);
    CHECK_INT(parse("\n", &r, buf, sizeof(buf)), -EBADMSG);
    CHECK_INT(parse("HTTP/1.1 400 Bad Request\r\n", &r, buf, sizeof(buf)), -EBADMSG);
    CHECK_INT(parse("0x\nreturn code: 0\n", &r, buf, sizeof(buf)), -EBADMSG);
    CHECK_INT(parse(" 0\n", &r, buf, sizeof(buf)), -EBADMSG);
    CHECK_INT(parse("99999999999999999999\n", &r, buf, sizeof(buf)), -EBADMSG);
    CHECK_INT(parse("\x01\x02\x03", &r, buf, sizeof(buf)), -EBADMSG);
    char nul[] = "\0\0\n";
    CHECK_INT(attach_reply_parse(nul, 3, &r), -EBADMSG);
    CHECK_INT(attach_reply_parse(buf, 0, &r), -EBADMSG);
}

static void test_request_edges(void)
{
    char buf[ATTACH_REQUEST_MAX];
    /* the longest command name HotSpot takes, and one byte more */
    ssize_t n = attach_request_encode(buf, sizeof(buf), "0123456789abcdef", NULL, 0);
    static const char want[] = "1\0"
                               "0123456789abcdef\0"
                               "\0\0\0";
    if (CHECK_INT(n, sizeof(want) - 1))
        CHECK_MEM(buf, want, sizeof(want) - 1);
    CHECK_INT(attach_request_encode(buf, sizeof(buf), "0123456789abcdefg", NULL, 0), -E2BIG);
    CHECK_INT(attach_request_encode(NULL, sizeof(buf), "load", NULL, 0), -EINVAL);
    CHECK_INT(attach_request_encode(buf, 0, "load", NULL, 0), -ENOSPC);
    CHECK_INT(attach_request_encode(buf, 1, "load", NULL, 0), -ENOSPC); /* not even the version fits */
    /* an argument of exactly ATTACH_ARG_MAX bytes is taken, as HotSpot does */
    static char max[ATTACH_ARG_MAX + 1];
    memset(max, 'a', ATTACH_ARG_MAX);
    const char *one[] = {max};
    CHECK_INT(attach_request_encode(buf, sizeof(buf), "load", one, 1), 2 + 5 + ATTACH_ARG_MAX + 1 + 2);
}

static void test_reply_malformed(void)
{
    char buf[256];
    struct attach_reply r = {.code = 12345, .text = "untouched"};
    /* result codes that are not one int on a line of their own */
    CHECK_INT(parse("-\n", &r, buf, sizeof(buf)), -EBADMSG);
    CHECK_INT(parse("0 1\nreturn code: 0\n", &r, buf, sizeof(buf)), -EBADMSG);
    CHECK_INT(parse("0;\n", &r, buf, sizeof(buf)), -EBADMSG);
    CHECK_INT(parse("\t0\n", &r, buf, sizeof(buf)), -EBADMSG);
    CHECK_INT(parse("\r\n", &r, buf, sizeof(buf)), -EBADMSG);
    CHECK_INT(parse("2147483648\n", &r, buf, sizeof(buf)), -EBADMSG);  /* INT_MAX + 1 */
    CHECK_INT(parse("-2147483649\n", &r, buf, sizeof(buf)), -EBADMSG); /* INT_MIN - 1 */
    CHECK_INT(parse("ERROR\n0\n", &r, buf, sizeof(buf)), -EBADMSG);    /* the code must come first */
    /* a failed parse leaves the reply alone */
    CHECK_INT(r.code, 12345);
    CHECK_STR(r.text, "untouched");

    /* the extremes of int are still result codes; blanks and a CR after it are allowed */
    if (CHECK_INT(parse("-2147483648 \t\r\nx", &r, buf, sizeof(buf)), 0)) {
        CHECK_INT(r.code, -2147483647 - 1);
        CHECK_STR(r.text, "x");
    }
    if (CHECK_INT(parse("2147483647", &r, buf, sizeof(buf)), 0))
        CHECK_INT(r.code, 2147483647);

    /* only len bytes count: what follows in the buffer is cut off */
    static const char full[] = "0\nreturn code: 0\n";
    memcpy(buf, full, sizeof(full));
    if (CHECK_INT(attach_reply_parse(buf, 1, &r), 0)) {
        CHECK_INT(r.code, 0);
        CHECK_STR(r.text, "");
    }
    static const char longer[] = "17\nabcdef";
    memcpy(buf, longer, sizeof(longer));
    if (CHECK_INT(attach_reply_parse(buf, 6, &r), 0)) {
        CHECK_INT(r.code, 17);
        CHECK_STR(r.text, "abc");
    }
    /* a NUL inside the output ends the text the caller sees */
    char nul_in_text[] = "0\nab\0cd\n";
    if (CHECK_INT(attach_reply_parse(nul_in_text, sizeof(nul_in_text) - 1, &r), 0))
        CHECK_STR(r.text, "ab");
    CHECK_INT(attach_reply_parse(NULL, 3, &r), -EBADMSG);
}

static void test_return_code_malformed(void)
{
    int rc = 99;
    CHECK_INT(attach_reply_return_code("return code:\n", &rc), -EBADMSG);
    CHECK_INT(attach_reply_return_code("return code: \n", &rc), -EBADMSG);
    CHECK_INT(attach_reply_return_code("return code: 1x\n", &rc), -EBADMSG);
    CHECK_INT(attach_reply_return_code("return code: 99999999999\n", &rc), -EBADMSG);
    CHECK_INT(attach_reply_return_code("Return Code: 0\n", &rc), -ENOENT);  /* HotSpot's spelling only */
    CHECK_INT(attach_reply_return_code(" return code: 0\n", &rc), -ENOENT); /* at the start of a line */
    CHECK_INT(attach_reply_return_code("", &rc), -ENOENT);
    CHECK_INT(attach_reply_return_code(NULL, &rc), -ENOENT);
    CHECK_INT(rc, 99); /* untouched by all of the above */
    /* the first "return code:" line decides */
    CHECK_INT(attach_reply_return_code("warning\nreturn code: 3\nreturn code: 0\n", &rc), 0);
    CHECK_INT(rc, 3);
    CHECK_INT(attach_reply_return_code("return code:-4", &rc), 0);
    CHECK_INT(rc, -4);
}

static const char status_container[] = "Name:\tjava\n"
                                       "Umask:\t0022\n"
                                       "State:\tS (sleeping)\n"
                                       "Tgid:\t48213\n"
                                       "Ngid:\t0\n"
                                       "Pid:\t48213\n"
                                       "PPid:\t48190\n"
                                       "TracerPid:\t0\n"
                                       "Uid:\t1000\t1001\t1001\t1001\n"
                                       "Gid:\t2000\t2002\t2002\t2002\n"
                                       "FDSize:\t256\n"
                                       "Groups:\t2000 \n"
                                       "NStgid:\t48213\t7\t1\n"
                                       "NSpid:\t48213\t7\t1\n"
                                       "NSpgid:\t48213\t7\t1\n"
                                       "NSsid:\t48190\t1\t0\n"
                                       "Threads:\t21\n"
                                       "SigQ:\t0/63446\n"
                                       "SigPnd:\t0000000000000000\n"
                                       "ShdPnd:\t0000000000000000\n"
                                       "SigBlk:\t0000000000000000\n"
                                       "SigIgn:\t0000000000000000\n"
                                       "SigCgt:\t0000000281005ccf\n"
                                       "CapInh:\t0000000000000000\n";

static void test_status_container(void)
{
    struct attach_target t;
    if (!CHECK_INT(attach_status_parse(status_container, &t), 0))
        return;
    CHECK_INT(t.pid, 48213);
    CHECK_INT(t.tgid, 48213);
    CHECK_INT(t.nspid, 1); /* the last NSpid field: the innermost namespace */
    CHECK_UINT(t.euid, 1001);
    CHECK_UINT(t.egid, 2002);
    CHECK_INT(t.state, 'S');
    CHECK_STR(t.name, "java");
    CHECK_INT(t.catches_quit, 1); /* 0x...cf: bit 3 (SIGQUIT) set */
}

static void test_status_plain(void)
{
    /* a process like sleep: one namespace, SIGQUIT not caught; PPid/TracerPid are not Pid */
    static const char text[] = "Name:\tsleep\nState:\tS (sleeping)\nTgid:\t77\nPPid:\t5\nTracerPid:\t9\nPid:\t77\n"
                               "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nNSpid:\t77\nSigIgn:\t0000000000000000\n"
                               "SigCgt:\t0000000000000000\n";
    struct attach_target t;
    if (!CHECK_INT(attach_status_parse(text, &t), 0))
        return;
    CHECK_INT(t.pid, 77);
    CHECK_INT(t.nspid, 77);
    CHECK_UINT(t.euid, 0);
    CHECK_INT(t.catches_quit, 0);
    CHECK_STR(t.name, "sleep");
}

static void test_status_edge_cases(void)
{
    struct attach_target t;
    /* no NSpid (kernels before 4.1): the pid names the files */
    static const char old_kernel[] = "Name:\tjava\nPid:\t300\nUid:\t5\t5\t5\t5\nGid:\t6\t6\t6\t6\n"
                                     "SigCgt:\t0000000000000004\n";
    if (CHECK_INT(attach_status_parse(old_kernel, &t), 0)) {
        CHECK_INT(t.nspid, 300);
        CHECK_INT(t.tgid, 300);
        CHECK_INT(t.catches_quit, 1);
    }
    /* SIGQUIT caught but ignored: do not signal */
    static const char ignored[] = "Pid:\t300\nUid:\t5\t5\t5\t5\nGid:\t6\t6\t6\t6\nSigIgn:\t0000000000000004\n"
                                  "SigCgt:\t0000000000000004\n";
    if (CHECK_INT(attach_status_parse(ignored, &t), 0))
        CHECK_INT(t.catches_quit, 0);
    /* a thread id: Tgid names the process */
    static const char thread[] = "Name:\tC2 CompilerThre\nTgid:\t300\nPid:\t305\nUid:\t5\t5\t5\t5\nGid:\t6\t6\t6\t6\n";
    if (CHECK_INT(attach_status_parse(thread, &t), 0)) {
        CHECK_INT(t.tgid, 300);
        CHECK_INT(t.pid, 305);
        CHECK_STR(t.name, "C2 CompilerThre");
    }
    /* a zombie */
    static const char zombie[] = "Name:\tjava\nState:\tZ (zombie)\nPid:\t9\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n";
    if (CHECK_INT(attach_status_parse(zombie, &t), 0))
        CHECK_INT(t.state, 'Z');
    /* a long name is cut, not overflowed */
    static const char long_name[] = "Name:\taaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
                                    "Pid:\t9\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n";
    if (CHECK_INT(attach_status_parse(long_name, &t), 0))
        CHECK_UINT(strlen(t.name), sizeof(t.name) - 1);
    /* missing or broken essentials */
    CHECK_INT(attach_status_parse("", &t), -EBADMSG);
    CHECK_INT(attach_status_parse("Name:\tjava\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n", &t), -EBADMSG);
    CHECK_INT(attach_status_parse("Pid:\t9\nGid:\t1\t1\t1\t1\n", &t), -EBADMSG);
    CHECK_INT(attach_status_parse("Pid:\t9\nUid:\t1\nGid:\t1\t1\t1\t1\n", &t), -EBADMSG); /* no effective uid */
    CHECK_INT(attach_status_parse("Pid:\t-9\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n", &t), -EBADMSG);
    CHECK_INT(attach_status_parse("Pid:\tabc\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n", &t), -EBADMSG);
    /* garbage NSpid falls back to Pid */
    if (CHECK_INT(attach_status_parse("Pid:\t9\nNSpid:\tx\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n", &t), 0))
        CHECK_INT(t.nspid, 9);
}

static void test_maps_lines(void)
{
    CHECK(attach_maps_line_is_jvm("7f1c2a000000-7f1c2a2b1000 r--p 00000000 08:01 1312 "
                                  "/usr/lib/jvm/java-21-openjdk-amd64/lib/server/libjvm.so\n"));
    CHECK(attach_maps_line_is_jvm("7f1c2a000000-7f1c2a2b1000 r-xp 00000000 08:01 1312 /opt/jdk/server/libjvm.so"));
    CHECK(attach_maps_line_is_jvm("7f1c2a000000-7f1c2a2b1000 r-xp 00000000 08:01 1312 "
                                  "/opt/jdk/lib/server/libjvm.so (deleted)\n"));
    CHECK(!attach_maps_line_is_jvm("7f1c2a000000-7f1c2a2b1000 r-xp 00000000 08:01 1312 /opt/jdk/lib/libjli.so\n"));
    CHECK(!attach_maps_line_is_jvm("7f1c2a000000-7f1c2a2b1000 r-xp 00000000 08:01 1312 /opt/x/libjvm.so.bak\n"));
    CHECK(!attach_maps_line_is_jvm("7f1c2a000000-7f1c2a2b1000 r-xp 00000000 08:01 1312 /opt/x/notlibjvm.so\n"));
    CHECK(!attach_maps_line_is_jvm("7ffd1a5e5000-7ffd1a606000 rw-p 00000000 00:00 0 [stack]\n"));
    CHECK(!attach_maps_line_is_jvm("7f1c2a000000-7f1c2a2b1000 rw-p 00000000 00:00 0\n"));
    CHECK(!attach_maps_line_is_jvm(""));
}

/* A fake filesystem for attach_agent_default. */
static const char *present[4];

static int fake_exists(const char *path)
{
    for (size_t i = 0; i < sizeof(present) / sizeof(present[0]); i++)
        if (present[i] && strcmp(present[i], path) == 0)
            return 1;
    return 0;
}

static void test_agent_default(void)
{
    char out[4096];
    memset(present, 0, sizeof(present));
    present[0] = "/work/build/agent/libvtpin.so";
    present[1] = "/work/build/../lib/vtpin/libvtpin.so";
    CHECK_INT(attach_agent_default("/work/build/vtpin", fake_exists, out, sizeof(out)), 0);
    CHECK_STR(out, "/work/build/agent/libvtpin.so"); /* the build tree first */

    present[0] = NULL;
    CHECK_INT(attach_agent_default("/work/build/vtpin", fake_exists, out, sizeof(out)), 0);
    CHECK_STR(out, "/work/build/../lib/vtpin/libvtpin.so");

    present[1] = "/usr/local/bin/../lib/vtpin/libvtpin.so";
    CHECK_INT(attach_agent_default("/usr/local/bin/vtpin", fake_exists, out, sizeof(out)), 0);
    CHECK_STR(out, "/usr/local/bin/../lib/vtpin/libvtpin.so");

    memset(present, 0, sizeof(present));
    CHECK_INT(attach_agent_default("/opt/v/vtpin", fake_exists, out, sizeof(out)), -ENOENT);
    CHECK_STR(out, "/opt/v/agent/libvtpin.so or /opt/v/../lib/vtpin/libvtpin.so");

    present[0] = "/agent/libvtpin.so";
    CHECK_INT(attach_agent_default("/vtpin", fake_exists, out, sizeof(out)), 0);
    CHECK_STR(out, "/agent/libvtpin.so");

    CHECK_INT(attach_agent_default("vtpin", fake_exists, out, sizeof(out)), -EINVAL);
    CHECK_INT(attach_agent_default(NULL, fake_exists, out, sizeof(out)), -EINVAL);
    CHECK_INT(attach_agent_default("/work/build/vtpin", fake_exists, out, 10), -ENAMETOOLONG);
    CHECK_INT(attach_agent_default("/work/build/vtpin", NULL, out, sizeof(out)), -EINVAL); /* the caller decides */
}

/* A command line (NUL-separated, as /proc/PID/cmdline) that looks like java's. */
static int is_java(const char *args, size_t len)
{
    return attach_cmdline_is_java(args, len);
}

static void test_cmdline_is_java(void)
{
    static const char java[] = "/usr/lib/jvm/java-21/bin/java\0-cp\0/app\0Main";
    CHECK_INT(is_java(java, sizeof(java)), 1);
    static const char javaw[] = "javaw\0Main";
    CHECK_INT(is_java(javaw, sizeof(javaw)), 1);
    static const char launcher[] = "/opt/app/bin/myapp\0-XX:+UseG1GC\0-jar\0app.jar";
    CHECK_INT(is_java(launcher, sizeof(launcher)), 1); /* embedded, with a JVM's options */
    static const char jar[] = "/opt/tool\0-jar\0x.jar";
    CHECK_INT(is_java(jar, sizeof(jar)), 1);
    static const char init[] = "/sbin/init\0splash";
    CHECK_INT(is_java(init, sizeof(init)), 0);
    static const char sleeper[] = "sleep\0"
                                  "30";
    CHECK_INT(is_java(sleeper, sizeof(sleeper)), 0);
    static const char javascript_ish[] = "/usr/bin/node\0--java-like";
    CHECK_INT(is_java(javascript_ish, sizeof(javascript_ish)), 0);
    CHECK_INT(is_java("", 0), 0);     /* a kernel thread */
    CHECK_INT(is_java("jav", 3), 0);  /* cut short */
    CHECK_INT(is_java("java", 4), 1); /* no NUL at the end */
}

int main(void)
{
    CHECK_RUN(test_request_load);
    CHECK_RUN(test_request_pads_missing_args);
    CHECK_RUN(test_request_limits);
    CHECK_RUN(test_reply_success);
    CHECK_RUN(test_reply_failures);
    CHECK_RUN(test_reply_garbage);
    CHECK_RUN(test_request_edges);
    CHECK_RUN(test_reply_malformed);
    CHECK_RUN(test_return_code_malformed);
    CHECK_RUN(test_status_container);
    CHECK_RUN(test_status_plain);
    CHECK_RUN(test_status_edge_cases);
    CHECK_RUN(test_maps_lines);
    CHECK_RUN(test_agent_default);
    CHECK_RUN(test_cmdline_is_java);
    CHECK_MAIN_RETURN();
}
