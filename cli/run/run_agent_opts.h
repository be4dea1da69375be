/* The agent options `vtpin run` reads and passes on: an agent's own (the
 * record= and collector= of one COMMAND loads itself) and the user's
 * --agent-options, which may add to the run's agent but never take its
 * outputs away. Pure logic. */
#ifndef VTPIN_CLI_RUN_AGENT_OPTS_H
#define VTPIN_CLI_RUN_AGENT_OPTS_H

#include <stddef.h>

/* The value of key in an agent's options ("k=v,k2" or jcmd's "k:v"): 1 with
 * value[cap] ("" for a bare key) of the last one, which the agent keeps; 0
 * when absent. */
int run_agent_option(const char *options, const char *key, char *value, size_t cap);

/* 0 when the user's --agent-options can follow the run's own; else -EINVAL
 * with why[cap] saying what is wrong: record= or collector= (the agent keeps
 * one of each, the last given, so the run would lose the recordings it judges
 * or the collector it watches), or white space (JAVA_TOOL_OPTIONS is split
 * there: the rest would reach the JVM as options of its own). */
int run_agent_opts_check(const char *extra, char *why, size_t cap);

#endif
