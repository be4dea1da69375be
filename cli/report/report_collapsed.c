/* Folded stacks (flamegraph.pl, speedscope, async-profiler's converter):
 * "root;caller;callee WEIGHT", one line per distinct stack, root frame
 * first, weight in microseconds of pinned time. */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "views.h"

struct folder {
    FILE *out;
    const struct flame *f;
    char **labels;   /* f's labels as written */
    int64_t done_ns; /* pinned time already written, to round without drift */
    uint32_t *path;
};

/* Microseconds, rounded half up, of a cumulative ns count: each line gets
 * the difference of two of these, so the lines add up to the rounded total
 * whatever the rounding of each. */
static int64_t us_of(int64_t ns)
{
    return ns / 1000 + (ns % 1000 >= 500);
}

/* A frame as flamegraph.pl splits them, made safe for a terminal: control
 * characters escaped as the text report does (utf8_printable: \x1b, \x00 for
 * a NUL, \x0a for a line break), no ';' inside a frame. Each label once. */
static char *frame_label(const char *label)
{
    size_t cap = strlen(label) * 4 + 1; /* at most 4 bytes a byte: \x1b for ESC */
    char *out = malloc(cap);
    if (!out)
        return NULL;
    utf8_printable(label, out, cap);
    for (char *c = out; *c; c++)
        if (*c == ';')
            *c = '_';
    return out;
}

static void fold_line(struct folder *w, uint32_t node)
{
    const struct flame *f = w->f;
    const struct flame_node *n = &f->nodes[node];
    int64_t us = us_of(recording_sat_add(w->done_ns, n->self_ns)) - us_of(w->done_ns);
    w->done_ns = recording_sat_add(w->done_ns, n->self_ns);
    if (us <= 0)
        return;
    size_t depth = 0;
    for (uint32_t c = node; c != 0; c = f->nodes[c].parent)
        w->path[depth++] = c;
    while (depth-- > 0) {
        fputs(w->labels[f->nodes[w->path[depth]].label], w->out);
        if (depth)
            fputc(';', w->out);
    }
    fprintf(w->out, " %lld\n", (long long)us);
}

int report_collapsed(FILE *out, const struct recording *r, const struct report_options *o)
{
    const struct recording_session *s = r->sessions[o->session];
    struct flame f;
    int rc = flame_build(s, &f);
    if (rc)
        return rc;
    uint32_t max_depth = 0;
    for (size_t i = 0; i < f.n_nodes; i++)
        if (f.nodes[i].depth > max_depth)
            max_depth = f.nodes[i].depth;
    struct folder w = {.out = out,
                       .f = &f,
                       .labels = calloc(f.n_labels ? f.n_labels : 1, sizeof(char *)),
                       .path = calloc(max_depth + 1, sizeof(uint32_t))};
    rc = w.labels && w.path ? 0 : -ENOMEM;
    for (size_t i = 0; !rc && i < f.n_labels; i++)
        if (!(w.labels[i] = frame_label(f.labels[i])))
            rc = -ENOMEM;
    if (rc)
        goto done;
    /* preorder without recursion: the tree can be RECORDING_MAX_FRAMES deep */
    uint32_t node = f.nodes[0].first_child;
    while (node != VIEWS_NO_NODE) {
        fold_line(&w, node);
        if (f.nodes[node].first_child != VIEWS_NO_NODE) {
            node = f.nodes[node].first_child;
            continue;
        }
        while (node != VIEWS_NO_NODE && f.nodes[node].next_sibling == VIEWS_NO_NODE)
            node = f.nodes[node].parent == 0 ? VIEWS_NO_NODE : f.nodes[node].parent;
        if (node != VIEWS_NO_NODE)
            node = f.nodes[node].next_sibling;
    }
    if (fflush(out) || ferror(out))
        rc = -EIO;
done:
    for (size_t i = 0; w.labels && i < f.n_labels; i++)
        free(w.labels[i]);
    free(w.labels);
    free(w.path);
    flame_fini(&f);
    return rc;
}
