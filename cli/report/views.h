/* The models behind the graphical report formats (html, collapsed,
 * perfetto): pinned time aggregated into a stack tree, and the pins and
 * occupancy of a session laid out per carrier.
 *
 * Weights are the same pinned time the text and JSON reports rank sites by
 * (recording_pin_duration: a pin still in progress counts with its duration
 * so far), so a flame graph adds up to the report's pinned total. */
#ifndef VTPIN_CLI_VIEWS_H
#define VTPIN_CLI_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#include "common/table.h"

#include "recording.h"

/* ---- stack tree ---- */

#define VIEWS_NO_NODE ((uint32_t)-1)

struct flame_node {
    uint32_t label;        /* index into flame.labels */
    uint32_t parent;       /* VIEWS_NO_NODE for the root */
    uint32_t first_child;  /* VIEWS_NO_NODE: a leaf */
    uint32_t next_sibling; /* VIEWS_NO_NODE: the last child */
    uint32_t depth;        /* the root is 0, a stack's bottom frame 1 */
    int64_t total_ns;      /* pinned time of every stack through this node */
    int64_t self_ns;       /* pinned time of stacks ending here */
};

/* Node 0 is the root ("all"); its children are the stacks' bottom frames,
 * their children the frames they called, up to the stack's top frame.
 * Frames are labelled "class.method" (dotted class name). A stack cut by the
 * agent hangs under a "[truncated]" frame, a pin without a stack is one
 * "[no stack: REASON]" frame. Children are in the order first seen. */
struct flame {
    struct flame_node *nodes;
    size_t n_nodes;
    char **labels;
    size_t n_labels;
    /* private */
    size_t nodes_cap, labels_cap;
    struct table label_index, child_index; /* labels by text, nodes by (parent, label) */
};

/* 0 or -ENOMEM (out is then empty; flame_fini is still safe). */
int flame_build(const struct recording_session *s, struct flame *out);
void flame_fini(struct flame *f);

/* ---- per-carrier timeline ---- */

struct lane {
    int has_tid;
    int32_t tid;
    const char *name; /* "ForkJoinPool-1-worker-1", or NULL when never named */
    size_t *pins;     /* indices into session->pins, by start time */
    size_t n_pins;
    size_t *hogs; /* indices into session->hogs, by start time */
    size_t n_hogs;
    size_t *occ; /* indices into session->occupancy of this carrier, by time */
    size_t n_occ;
};

/* One lane per carrier: the carriers the agent announced, in that order,
 * then carriers only pins or hogs named, then (when some pin or hog named
 * no carrier) a lane without a tid. */
struct timeline {
    struct lane *lanes;
    size_t n_lanes;
    int64_t first_ns, last_ns; /* the session's span (0, 0 when it has no time) */
};

int timeline_build(const struct recording_session *s, struct timeline *out);
/* The index of the lane of carrier (has_tid, tid), t->n_lanes when none; *last (the last one found,
 * tried first) is updated. */
size_t timeline_lane_of(const struct timeline *t, int has_tid, int32_t tid, size_t *last);
void timeline_fini(struct timeline *t);

/* The state recorded at occupancy point i of lane l lasts until the next
 * point of the lane; the last one until the session's end (exact) or one
 * sample interval (sampled). Returns the end time. */
int64_t timeline_occupancy_end(const struct recording_session *s, const struct timeline *t, const struct lane *l,
                               size_t i);

/* "class.method" into out; returns out. */
char *views_frame_label(const struct recording_frame *f, char *out, size_t cap);

#endif
