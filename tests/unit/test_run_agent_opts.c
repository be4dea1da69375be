/* The agent options vtpin run reads (cli/run/run_agent_opts.c): an agent's
 * record= and collector= as the agent takes them (key=value or key:value, the
 * last one kept), and the user's --agent-options refused when they would take
 * the run's own outputs away or spill out of JAVA_TOOL_OPTIONS. */
#include <errno.h>

#include "check.h"
#include "run_agent_opts.h"

static void test_option(void)
{
    char v[64];
    CHECK(run_agent_option("record=/tmp/a-%p.vtp,quiet", "record", v, sizeof(v)));
    CHECK_STR(v, "/tmp/a-%p.vtp");
    CHECK(run_agent_option("quiet,record:/tmp/b.vtp", "record", v, sizeof(v))); /* jcmd's form */
    CHECK_STR(v, "/tmp/b.vtp");
    CHECK(run_agent_option("record=/a,threshold=0,record=/b", "record", v, sizeof(v))); /* the agent keeps the last */
    CHECK_STR(v, "/b");
    CHECK(run_agent_option("quiet,collector", "collector", v, sizeof(v)));
    CHECK_STR(v, "");
    CHECK(!run_agent_option("recorder=/x,quiet", "record", v, sizeof(v))); /* another key */
    CHECK(!run_agent_option("", "record", v, sizeof(v)));
}

static void test_check(void)
{
    char why[512];
    CHECK_INT(run_agent_opts_check(NULL, why, sizeof(why)), 0);
    CHECK_INT(run_agent_opts_check("threshold=5ms,hog=0,log=/tmp/l", why, sizeof(why)), 0);
    CHECK_INT(run_agent_opts_check("record=/tmp/x-%p.vtp", why, sizeof(why)), -EINVAL);
    CHECK_CONTAINS(why, "--agent-options: record=/tmp/x-%p.vtp would replace the run's own");
    CHECK_INT(run_agent_opts_check("threshold=0,record:/tmp/y.vtp", why, sizeof(why)), -EINVAL);
    CHECK_CONTAINS(why, "record=/tmp/y.vtp would replace");
    CHECK_INT(run_agent_opts_check("collector=/tmp/c.sock", why, sizeof(why)), -EINVAL);
    CHECK_CONTAINS(why, "--socket PATH");
    CHECK_INT(run_agent_opts_check("quiet,collector", why, sizeof(why)), -EINVAL);
    CHECK_CONTAINS(why, "--agent-options: collector would replace");
    /* the run keeps every recording whole (record_max=0): a rotation would hide pins from the gate */
    CHECK_INT(run_agent_opts_check("record_max=1m", why, sizeof(why)), -EINVAL);
    CHECK_CONTAINS(why, "--agent-options: record_max=1m would replace the run's own");
    CHECK_INT(run_agent_opts_check("threshold=0,record_keep=9", why, sizeof(why)), -EINVAL);
    CHECK_CONTAINS(why, "record_keep=9 would replace");
    CHECK_INT(run_agent_opts_check("record_mode=0640", why, sizeof(why)), 0);
    CHECK_INT(run_agent_opts_check("quiet -agentpath:/x.so", why, sizeof(why)), -EINVAL);
    CHECK_CONTAINS(why, "white space");
}

int main(void)
{
    CHECK_RUN(test_option);
    CHECK_RUN(test_check);
    CHECK_MAIN_RETURN();
}
