/* Attach on pin's decision (collector/ztattach.c): a JVM's flags, the operator's patterns, and at
 * most per_minute attaches in any minute. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "ztattach.h"

#define SEC 1000000000LL

static void test_allowed(void)
{
    struct ztattach_config c = {.min_ns = 0, .socket = "/run/vtpin/collector.sock", .per_minute = 2};
    struct ztattach_limiter l = {0};
    char why[200];
    /* the JVM's own flags refuse dynamic agents: never, and said */
    CHECK_INT(ztattach_allowed(&c, &l, "java -XX:-EnableDynamicAgentLoading -jar app.jar", 0, why, sizeof(why)),
              -EPERM);
    CHECK(strstr(why, "-XX:-EnableDynamicAgentLoading") != NULL);
    CHECK_INT(ztattach_allowed(&c, &l, "java -XX:+DisableAttachMechanism App", 0, why, sizeof(why)), -EPERM);
    /* a flag that only starts like one is not it */
    CHECK_INT(ztattach_allowed(&c, &l, "java -XX:+DisableAttachMechanismX App", 0, why, sizeof(why)), 0);
    CHECK_INT(l.n, 1);
    /* the rate: two in a minute, the third waits until the first is a minute old */
    CHECK_INT(ztattach_allowed(&c, &l, "java App", 10 * SEC, why, sizeof(why)), 0);
    CHECK_INT(ztattach_allowed(&c, &l, "java App", 20 * SEC, why, sizeof(why)), -EBUSY);
    CHECK(strstr(why, "2 attaches in the last minute") != NULL);
    CHECK_INT(ztattach_allowed(&c, &l, "java App", 60 * SEC, why, sizeof(why)), 0);
    CHECK_INT(l.n, 2);
    /* patterns: deny first, then only */
    struct ztattach_limiter fresh = {0};
    c.deny = "*batch*";
    c.only = "*com.acme.*";
    CHECK_INT(ztattach_allowed(&c, &fresh, "java com.acme.batch.Main", 0, why, sizeof(why)), -EPERM);
    CHECK(strstr(why, "--attach-deny") != NULL);
    CHECK_INT(ztattach_allowed(&c, &fresh, "java org.other.Main", 0, why, sizeof(why)), -EPERM);
    CHECK(strstr(why, "--attach-only") != NULL);
    CHECK_INT(ztattach_allowed(&c, &fresh, "java com.acme.web.Main", 0, why, sizeof(why)), 0);
    /* a refusal is not counted against the rate */
    CHECK_INT(fresh.n, 1);
}

int main(void)
{
    test_allowed();
    CHECK_MAIN_RETURN();
}
