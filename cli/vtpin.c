/* vtpin: the command-line tool. Dispatches to one subcommand per file. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

#ifndef VTPIN_VERSION
#error "VTPIN_VERSION must be defined by the build"
#endif

struct command {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"report", report_main, "summarize a recording (record=FILE): pin sites, stacks, counters"},
    {"collector", collector_main, "run the collector: live events from agents, alerts, session recordings"},
    {"status", status_main, "what the running collector knows: JVMs, pins, alerts, drops"},
    {"top", top_main, "each JVM's carriers live: pinned or not, for how long, the culprit"},
    {"attach", attach_main, "load the agent into a running JVM (no JDK tools needed), or stop it"},
    {"run", run_main, "run a command (load test, test suite) with vtpin in its JVMs, gate on pins"},
    /* more subcommands: add them here, declared in commands.h */
};

static void usage(FILE *out)
{
    fputs("usage: vtpin COMMAND [ARGS]\n"
          "       vtpin --help | --version\n"
          "\n"
          "Finds where Java virtual threads pin their carrier threads.\n"
          "\n"
          "commands:\n",
          out);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\n"
          "'vtpin COMMAND --help' describes a command.\n"
          "\n"
          "The agent that records: java -agentpath:/path/libvtpin.so=record=app.vtp ...\n"
          "(-agentpath:/path/libvtpin.so=help lists its options)\n",
          out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("vtpin %s\n", VTPIN_VERSION);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].main(argc - 1, argv + 1);
    fprintf(stderr, "vtpin: unknown command '%s'\n\n", name);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
