/* JUnit XML for CI servers: one test case per pin site (per JVM), failing
 * when its pins count against a gate that failed; one case for the gates. */
#ifndef VTPIN_CLI_JUNIT_H
#define VTPIN_CLI_JUNIT_H

#include <stdio.h>

#include "gates.h"
#include "recording.h"

/* Returns 0 or -errno. */
int junit_write(FILE *out, const struct gate_config *c, const struct gate_result *g, struct recording *const *recs,
                size_t n);

#endif
