/* Baselines for `vtpin run` (issue 33): the pin sites a run found, kept in a
 * reviewable JSON file (--write-baseline), and a later run judged against it
 * (--baseline): the known sites are accepted, and only a site not in it, or
 * one whose pins grew past a tolerance, fails the run, named alone.
 *
 * A site is the culprit frame's class and method, the pin's reason and, for a
 * pin in native code, the native library's file name: no line numbers, and a
 * hidden class's generated suffix cut ($$Lambda/0x..., $$Lambda$12,
 * LambdaForm$MH/0x..., $Proxy12, jdk.proxy3), so that one site keeps its name
 * across runs, builds and JDK versions. A pin without a stack is the site
 * "(no stack)" of its reason. The file lists the sites sorted, one a line, with
 * the pins each had. Pure logic (the file is read and written by the caller's
 * streams). */
#ifndef VTPIN_CLI_BASELINE_H
#define VTPIN_CLI_BASELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "recording.h"

#define BASELINE_FORMAT "vtpin.baseline/1"

struct baseline_site {
    char *class_name, *method, *reason, *library; /* library: "" when none */
    uint64_t pins;
    char *example_at; /* the culprit frame of a pin of the run at it, as report_format_frame prints it; NULL
                         for a site read from a file, or when no pin there had one (a copy: the
                         recordings are read one at a time) */
};

struct baseline {
    struct baseline_site *sites; /* sorted by class, method, reason, library (baseline_sort) */
    size_t n, cap;
    int sorted; /* since the last site added: looked up by binary search */
};

/* A class name with its generated suffixes cut (see above) into out[cap]. */
void baseline_class_name(const char *in, char *out, size_t cap);

/* Counts pin p at its site in b, n times (a group of pins summed up: cli/report/pin_groups.h). 0 or
 * -ENOMEM. */
int baseline_add_pins(struct baseline *b, const struct recording_pin *p, uint64_t n);
/* b's sites in order; call after the last baseline_add_pins (baseline_read sorts). */
void baseline_sort(struct baseline *b);
/* The site of b with the same class, method, reason and library as s, or NULL. */
const struct baseline_site *baseline_find(const struct baseline *b, const struct baseline_site *s);
/* The site of pin p in b, or NULL. */
const struct baseline_site *baseline_site_of(const struct baseline *b, const struct recording_pin *p);

/* The file: {"format": "vtpin.baseline/1", "sites": [{class, method, reason, library, pins}, ...]}.
 * 0 or -errno. */
int baseline_write(FILE *out, const struct baseline *b);
/* Reads a file written by baseline_write (text[len]). 0, or -EINVAL with err saying what is wrong. */
int baseline_parse(const char *text, size_t len, struct baseline *b, char *err, size_t errlen);

/* Whether a site of the run (now) fails against the baseline (base): not in it, or its pins over
 * the baseline's by more than tolerance_pct percent (-1: the counts are not compared). */
int baseline_site_fails(const struct baseline *base, const struct baseline_site *now, int tolerance_pct);

void baseline_free(struct baseline *b);

#endif
