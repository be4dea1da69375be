/* JUnit XML for CI servers: one test case per pin site (per JVM), failing
 * when its pins count against a gate that failed; one case for the gates. */
#ifndef VTPIN_CLI_JUNIT_H
#define VTPIN_CLI_JUNIT_H

#include <stdio.h>

#include "gates.h"
#include "recording.h"

/* The report is written once every recording was judged (its cases say whether they fail, its
 * header counts them), and the recordings are read one at a time: junit_new, junit_add for each
 * recording (its cases written to a temporary file), then junit_write. Each returns 0 or -errno. */
struct junit;
int junit_new(struct junit **out);
int junit_add(struct junit *j, const struct gate_config *c, const struct gate_result *g, const struct recording *r);
int junit_write(FILE *out, struct junit *j, const struct gate_result *g);
void junit_free(struct junit *j);

#endif
