/* What a pin waits for, as one line: "blocked by \"lock-owner\" (platform,
 * sleeping) at Owner.holdLong(Owner.java:9)"; a virtual owner "(virtual on CARRIER, ...)" when
 * mounted, "(virtual, unmounted, ...)" when not. The one formatter of the
 * reports and the collector's live view (top, status). Pure. */
#ifndef VTPIN_COMMON_BLOCKER_TEXT_H
#define VTPIN_COMMON_BLOCKER_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* vtpin.v1.BlockerKind's values (proto/vtpin.proto). */
enum blocker_kind {
    BLOCKER_KIND_NONE = 0,
    BLOCKER_KIND_MONITOR = 1,    /* the monitor's owner holds it */
    BLOCKER_KIND_NOTIFY = 2,     /* Object.wait: a notify, which no thread owes */
    BLOCKER_KIND_CLASS_INIT = 3, /* the thread running the class's <clinit> */
    BLOCKER_KIND_LOCK = 4,       /* a j.u.c. lock's exclusive owner (none: held shared) */
};

struct blocker_parts {
    int what;                 /* enum blocker_kind */
    const char *object_class; /* the monitor's class, the class initialized, or the lock's; NULL: unknown */
    int has_thread;           /* the owner (initializer) is known: the fields below */
    const char *thread_name;
    int is_virtual;
    const char *carrier; /* a virtual owner's carrier when mounted, else NULL */
    const char *state;   /* "sleeping", ...; NULL or "": unknown */
    uint64_t pin;        /* the owner's own pin in progress, 0: none */
    const char *at;      /* the owner's frame to show (its first application frame), NULL: none */
    /* what the owner itself waits for, hop by hop (PinStart.blocker.chain): each a blocker_parts of
     * kind MONITOR or LOCK with no pin, frame or chain of its own */
    const struct blocker_parts *chain;
    size_t n_chain;
};

/* The line into out[cap] ("" for BLOCKER_KIND_NONE), the chain after it: '...; "lock-holder" in
 * turn is blocked by "deep-holder" (platform, sleeping) holding a ...'; returns out. */
char *blocker_text(const struct blocker_parts *b, char *out, size_t cap);
/* "monitor", "notify", "class_init", "lock"; NULL for none or an unknown kind. */
const char *blocker_kind_name(int what);

/* A deadlock the agent found live is its notice with the code "deadlock.KIND" (docs/deadlocks.md):
 * KIND ("carrier_starvation") of such a code, else NULL. The report and the collector both ask. */
const char *blocker_deadlock_kind(const char *code);

#endif
