/* Pin sites: the pins of a session grouped by whose they are (the pin's origin:
 * the application's or the JDK's own, common/frames_kind.h), where they are
 * blamed (the culprit frame's class, method, signature and line) and why (the
 * reason); the application's sites first, then the JDK's, each ranked by total
 * pinned time. Pins without a culprit frame (no stack) form
 * one site per reason. A pin still in progress at the end of the recording
 * counts with its duration so far. */
#ifndef VTPIN_CLI_SITES_H
#define VTPIN_CLI_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "recording.h"

struct site {
    int origin; /* enum pin_origin: every pin of the site has it */
    int reason;
    const struct recording_frame *culprit; /* NULL: the pins had no stack */
    /* the stack shown for the site: of all its stacks, the one with the most pinned time */
    const struct recording_pin *example;
    uint64_t count;   /* pins */
    uint64_t ongoing; /* of which still in progress at the end */
    int64_t total_ns; /* saturating sum */
    int64_t max_ns;
    size_t distinct_stacks;
};

struct sites {
    struct site *items; /* the application's first, then the JDK's own; each ranked: total_ns desc,
                           then count desc, then first seen */
    size_t count;
    size_t app_count; /* items[0 .. app_count) are the application's, the rest the JDK's own */
    uint64_t pins, ongoing;
    int64_t total_ns;
};

/* 0 or -ENOMEM. The sites borrow from s, which must outlive them. */
int sites_build(const struct recording_session *s, struct sites *out);
void sites_fini(struct sites *sites);

/* 1 when two frames are the same place: class, method, signature and line. */
int sites_same_place(const struct recording_frame *a, const struct recording_frame *b);

/* Carrier hogs grouped the same way: by culprit frame (their top application
 * frame; hogs without one form one group), ranked by total time held, then
 * count, then first seen. An ongoing hog counts with its duration so far. */
struct hog_site {
    const struct recording_frame *culprit; /* NULL: the hogs had no culprit frame */
    const struct recording_hog *example;   /* the longest (the earliest of equals) */
    uint64_t count, ongoing;
    int64_t total_ns, max_ns;
};

struct hog_sites {
    struct hog_site *items;
    size_t count;
    uint64_t hogs, ongoing;
    int64_t total_ns, max_ns;
};

/* 0 or -ENOMEM. Borrows from s, as sites_build. */
int hog_sites_build(const struct recording_session *s, struct hog_sites *out);
void hog_sites_fini(struct hog_sites *h);

#endif
