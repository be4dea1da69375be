/* Unit tests for cli/live/answer.c: what `vtpin status` and `vtpin top` accept
 * from a collector before they print anything. */
#include "answer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

/* answer_check on text: 0 or -EINVAL, with err. */
static int check_text(const char *text, enum answer_kind kind, char *err, size_t errlen)
{
    struct jsonread *tree = NULL;
    int rc = jsonread_parse(text, strlen(text), &tree, err, errlen);
    if (!CHECK_INT(rc, 0))
        return rc;
    rc = answer_check(tree, kind, err, errlen);
    jsonread_free(tree);
    return rc;
}

static void refused(const char *text, enum answer_kind kind, const char *why)
{
    char err[512];
    if (!CHECK_INT(check_text(text, kind, err, sizeof(err)), -EINVAL))
        fprintf(stderr, "    accepted: %s\n", text);
    else if (!CHECK(strstr(err, why) != NULL))
        fprintf(stderr, "    %s: got \"%s\", want \"%s\"\n", text, err, why);
}

static void accepted(const char *text, enum answer_kind kind)
{
    char err[512];
    if (!CHECK_INT(check_text(text, kind, err, sizeof(err)), 0))
        fprintf(stderr, "    %s: %s\n", text, err);
}

static void test_status(void)
{
    accepted("{\"collector\": {\"pid\": 1}, \"jvms\": []}", ANSWER_STATUS);
    accepted("{\"collector\": {\"pid\": 1, \"memory\": {\"budget_bytes\": 268435456, \"used_bytes\": 0, "
             "\"peak_bytes\": 10, \"dropped\": 0}, \"allow\": {\"uids\": [65534], \"gids\": []}}, "
             "\"jvms\": [{\"pid\": 42, \"java_version\": null, \"connected\": true, \"disconnected_for_ns\": null, "
             "\"carriers\": 4, \"alert\": {\"active\": false, \"held\": 0, \"total\": 4}, "
             "\"drops\": {\"memory_dropped\": 3}, \"kernel_occupancy\": null, \"new_field\": [1, \"x\"]}]}",
             ANSWER_STATUS);
    refused("{\"jvms\": [1, 2], \"collector\": {}}", ANSWER_STATUS, "jvms[0]: a number where an object belongs");
    refused("{\"jvms\": [{\"pid\": \"x\"}], \"collector\": {}}", ANSWER_STATUS,
            "jvms[0].pid: a string where a process id");
    refused("{\"jvms\": [{\"pid\": 0}], \"collector\": {}}", ANSWER_STATUS, "jvms[0].pid: 0 is not a process id");
    refused("{\"jvms\": [{\"pid\": -5}], \"collector\": {}}", ANSWER_STATUS, "jvms[0].pid: -5 is not a process id");
    refused("{\"jvms\": [{\"pid\": 1.5}], \"collector\": {}}", ANSWER_STATUS, "jvms[0].pid: a fraction");
    refused("{\"jvms\": [{}], \"collector\": {}}", ANSWER_STATUS, "jvms[0]: no \"pid\"");
    refused("{\"jvms\": [{\"pid\": 7, \"connected\": \"yes\"}], \"collector\": {}}", ANSWER_STATUS,
            "jvms[0].connected: a string where a bool belongs");
    refused("{\"jvms\": [{\"pid\": 7}, {\"pid\": 8, \"drops\": {\"memory_dropped\": \"many\"}}], \"collector\": {}}",
            ANSWER_STATUS, "jvms[1].drops.memory_dropped: a string where an integer belongs");
    refused("{\"jvms\": [{\"pid\": 7, \"java_version\": 21}], \"collector\": {}}", ANSWER_STATUS,
            "jvms[0].java_version: a number where a string or null belongs");
    refused("{\"jvms\": []}", ANSWER_STATUS, "no \"collector\" object");
    refused("{\"jvms\": [], \"collector\": []}", ANSWER_STATUS, "no \"collector\" object");
    refused("{\"jvms\": [], \"collector\": {\"pid\": \"1\"}}", ANSWER_STATUS, "collector.pid: a string");
    refused("{\"jvms\": [], \"collector\": {\"memory\": {\"budget_bytes\": true}}}", ANSWER_STATUS,
            "collector.memory.budget_bytes: a bool");
    refused("{\"jvms\": [], \"collector\": {\"allow\": {\"uids\": [\"root\"]}}}", ANSWER_STATUS,
            "collector.allow.uids[0]: a string where an integer belongs");
    refused("[1, 2]", ANSWER_STATUS, "no \"jvms\" list");
    refused("{\"jvms\": {}}", ANSWER_STATUS, "no \"jvms\" list");
}

static void test_top(void)
{
    accepted("{\"window_ns\": 60000000000, \"jvms\": []}", ANSWER_TOP);
    accepted("{\"window_ns\": 60000000000, \"jvms\": [{\"pid\": 9, \"carriers\": [{\"name\": \"w-1\", \"tid\": 3, "
             "\"state\": \"pinned\", \"vthread\": null, \"busy_pct\": 0, \"pinned_pct\": 12.5, \"blocked\": null, "
             "\"kernel\": {\"on_cpu_ns\": 1, \"occupancy\": {\"busy_pct\": 1.5}}}]}]}",
             ANSWER_TOP);
    refused("{\"jvms\": [{\"pid\": 9, \"carriers\": 4}]}", ANSWER_TOP, "jvms[0].carriers: a number where a list");
    refused("{\"jvms\": [{\"pid\": 9, \"carriers\": [3]}]}", ANSWER_TOP, "jvms[0].carriers[0]: a number");
    refused("{\"jvms\": [{\"pid\": 9, \"carriers\": [{\"tid\": \"3\"}]}]}", ANSWER_TOP,
            "jvms[0].carriers[0].tid: a string where an integer belongs");
    refused("{\"jvms\": [{\"pid\": 9, \"carriers\": [{\"busy_pct\": \"9%\"}]}]}", ANSWER_TOP,
            "jvms[0].carriers[0].busy_pct: a string where a number belongs");
    refused("{\"jvms\": [{\"pid\": \"x\"}]}", ANSWER_TOP, "jvms[0].pid");
    refused("{\"window_ns\": \"1m\", \"jvms\": []}", ANSWER_TOP, "window_ns: a string");
}

/* The JVM's name fields and its recording's stop (issue 22): accepted as the collector writes
 * them, refused when a field the views read is of another type. */
static void test_ident_and_recording(void)
{
    const char *good =
        "{\"pid\": 31435, \"ns_pid\": 1, \"pid_namespace\": 4026532001, \"pid_source\": \"peer\", "
        "\"pid_note\": null, \"recording\": \"/d/31435-1-0.vtp\", \"recording_error\": {\"active\": true, "
        "\"error\": \"No space left on device\", \"errno\": 28, \"since_unix_ns\": 1796177076129274291, "
        "\"stopped_for_ns\": 67957816, \"resumed_unix_ns\": null, \"stops\": 1, \"frames_lost\": 74, "
        "\"bytes_lost\": 3418}";
    char text[1024];
    snprintf(text, sizeof(text), "{\"collector\": {\"pid\": 1}, \"jvms\": [%s}]}", good);
    accepted(text, ANSWER_STATUS);
    snprintf(text, sizeof(text), "{\"window_ns\": 1, \"jvms\": [%s, \"carriers\": []}]}", good);
    accepted(text, ANSWER_TOP);
    accepted("{\"collector\": {\"pid\": 1}, \"jvms\": [{\"pid\": 4242, \"ns_pid\": 4242, \"pid_source\": \"hello\", "
             "\"pid_note\": \"no peer pid\", \"recording_error\": null}]}",
             ANSWER_STATUS);
    refused("{\"collector\": {}, \"jvms\": [{\"pid\": 7, \"ns_pid\": \"1\"}]}", ANSWER_STATUS,
            "jvms[0].ns_pid: a string where an integer or null belongs");
    refused("{\"collector\": {}, \"jvms\": [{\"pid\": 7, \"recording_error\": \"disk full\"}]}", ANSWER_STATUS,
            "jvms[0].recording_error: a string where an object or null belongs");
    refused("{\"collector\": {}, \"jvms\": [{\"pid\": 7, \"recording_error\": {\"active\": 1}}]}", ANSWER_STATUS,
            "jvms[0].recording_error.active: a number where a bool belongs");
    refused("{\"window_ns\": 1, \"jvms\": [{\"pid\": 7, \"recording_error\": {\"frames_lost\": \"x\"}}]}", ANSWER_TOP,
            "jvms[0].recording_error.frames_lost: a string where an integer belongs");
}

int main(void)
{
    CHECK_RUN(test_status);
    CHECK_RUN(test_top);
    CHECK_RUN(test_ident_and_recording);
    CHECK_MAIN_RETURN();
}
