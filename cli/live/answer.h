/* The collector's answer to `vtpin status` and `vtpin top`, checked before
 * anything is printed (docs/collector.md "JSON answers"): a JSON object with
 * a "jvms" list whose every element is an object with an integer "pid"
 * above 0, and every field the text renderers read, when present, of the
 * type they read it as (STATUS: the "collector" object too). Fields may be
 * absent (the renderers show a default) and unknown ones are ignored, so
 * an older or newer collector passes; a peer that is not a vtpin collector
 * does not. Pure: works on a parsed tree (common/jsonread.h). */
#ifndef VTPIN_CLI_ANSWER_H
#define VTPIN_CLI_ANSWER_H

#include <stddef.h>

#include "common/jsonread.h"

enum answer_kind { ANSWER_STATUS, ANSWER_TOP };

/* 0, or -EINVAL with err[] naming the first bad field, e.g.
 * "jvms[1].pid: a string where a process id (an integer above 0) belongs". */
int answer_check(const struct jsonread *root, enum answer_kind kind, char *err, size_t errlen);

#endif
