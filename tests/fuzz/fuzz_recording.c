/* libFuzzer target: the recording reader (cli/report/recording.c), the passes and two report
 * formatters over whatever it loads. The input is a recording file's bytes,
 * read from a seekable file (memfd), every session and then one (the last, or
 * the second, as `vtpin report --session 2`), then every session in turn into a
 * pprof profile, without occupancy and its ended pins summed up (as `vtpin report
 * --format pprof` reads them, cli/report/pin_groups.h, here in batches of 1 to 4 pins), the
 * last session in the other formats summed up so too, and, when it fits in a
 * pipe, once more from a pipe, as `vtpin report -` reads standard input. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "recording.h"
#include "report.h"

#define PIPE_MAX (60u * 1024) /* under the default pipe buffer: no writer thread needed */

static FILE *devnull;

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Loads fd keeping the sessions keep says (recording_plan.keep), and reports each one kept. */
static void load_and_report(int fd, const char *name, size_t keep)
{
    struct recording *r = NULL;
    char err[512];
    if (recording_load_fd_session(fd, name, keep, &r, err, sizeof(err)) != 0)
        return;
    if (report_passes(r) != 0) { /* what report_open runs after the load */
        recording_free(r);
        return;
    }
    for (size_t i = 0; i < r->n_sessions; i++) {
        if (r->sessions[i]->skipped) /* as vtpin report shows only a kept one */
            continue;
        struct report_options o = {
            .session = i, .top = i % 2 ? 0 : REPORT_TEXT_TOP_DEFAULT, .full_stacks = (int)(i % 2)};
        report_text(devnull, r, &o);
        report_json(devnull, r, &o);
        for (size_t k = 0; k < r->sessions[i]->n_pins; k++)
            (void)recording_pin_duration(r->sessions[i], &r->sessions[i]->pins[k]);
    }
    recording_free(r);
}

static int add_to_pprof(const struct recording *r, const struct recording_session *s, void *profile)
{
    (void)r;
    return report_pprof_add(profile, s);
}

/* Every session of the file at path in turn, each into one pprof profile, written to /dev/null. */
static void each_into_pprof(const char *path, size_t fold)
{
    struct report_pprof *p = NULL;
    struct recording *r = NULL;
    char err[512];
    if (report_pprof_new(&p, path) != 0)
        return;
    struct report_plan plan = {
        .each = add_to_pprof, .arg = p, .skip_occupancy = 1, .fold_pins = fold}; /* as vtpin report reads */
    if (report_open_plan(path, &plan, &r, err, sizeof(err)) == 0)
        report_pprof_write(devnull, p, r, 0, r->n_sessions);
    recording_free(r);
    report_pprof_free(p);
}

/* The text and collapsed reports of the last session of the file at path, its ended pins summed up
 * past fold (0: kept whole), in memory (malloc'ed; NULL: not loaded). */
static char *summaries_of(const char *path, size_t fold, size_t *len, struct recording **kept)
{
    struct recording *r = NULL;
    char err[512], *text = NULL;
    struct report_plan plan = {.keep = RECORDING_KEEP_LAST, .fold_pins = fold, .keep_input = fold != 0};
    if (report_open_plan(path, &plan, &r, err, sizeof(err)) != 0)
        return NULL;
    FILE *out = open_memstream(&text, len);
    if (!out)
        abort();
    struct report_options o = {.session = r->n_sessions - 1, .full_stacks = 1};
    report_text(out, r, &o);
    report_collapsed(out, r, &o);
    fclose(out);
    if (kept)
        *kept = r;
    else
        recording_free(r);
    return text;
}

/* The last session of the file at path, its ended pins summed up past fold, in every format but pprof
 * (JSON, HTML and Perfetto read its pins again from the file, cli/report/pin_stream.h); the summaries
 * must be the bytes of the session kept whole (pin_groups.h, attach_bounds.h's windows). */
static void summed_up(const char *path, size_t fold)
{
    struct recording *r = NULL;
    size_t len = 0, len0 = 0;
    char *summed = summaries_of(path, fold, &len, &r), *whole = summaries_of(path, 0, &len0, NULL);
    if (!summed && !whole)
        return; /* not a recording, either way */
    if (!summed || !whole || len != len0 || memcmp(summed, whole, len) != 0)
        abort();
    free(summed);
    free(whole);
    struct report_options o = {.session = r->n_sessions - 1, .full_stacks = 1};
    /* -EIO: the file read again for the pins was not what the first read found (writing to /dev/null
     * does not fail): every read of the same bytes must find the same sessions */
    if (report_json(devnull, r, &o) == -EIO || report_html(devnull, r, &o) == -EIO ||
        report_perfetto(devnull, r, &o) == -EIO)
        abort();
    recording_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        abort();
    int fd = memfd_create("fuzz-recording", MFD_CLOEXEC);
    if (fd < 0 || write_all(fd, data, size) != 0 || lseek(fd, 0, SEEK_SET) != 0)
        abort();
    load_and_report(fd, "memfd", RECORDING_KEEP_ALL);
    /* the ways vtpin report keeps one session: the last, or --session 2 */
    if (lseek(fd, 0, SEEK_SET) != 0)
        abort();
    load_and_report(fd, "memfd", size % 2 ? RECORDING_KEEP_LAST : 2);
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    each_into_pprof(path, 1 + size % 4);
    summed_up(path, 1 + size / 4 % 4);
    close(fd);

    int p[2];
    if (size <= PIPE_MAX && pipe(p) == 0) {
        if (write_all(p[1], data, size) != 0)
            abort();
        close(p[1]);
        load_and_report(p[0], "<stdin>", RECORDING_KEEP_ALL);
        close(p[0]);
    }
    return 0;
}
