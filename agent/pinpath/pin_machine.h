/* The writer-side life of a pin, as one pure state machine.
 *
 * The machine holds one life per pin in progress (a fixed table) and is fed
 * five events: a pin START (from the callbacks' queue or the watchdog), the
 * VERDICT on a JDK 24+ maybe-pin, a TICK of the writer's clock, the RESULT
 * of a stack read the machine asked for, and the pin's END. Each event
 * returns what to do (enum pm_act bits, executed in the order they are
 * declared) and moves the pin to its next state. It makes no JVMTI call, no
 * I/O and no allocation: active_pins.c executes the actions, with the JVMTI
 * reads of stack_read.c and the names of symbols.c.
 *
 * States (what the writer holds of a pin in progress):
 *   FREE        no pin in this slot
 *   UNDECIDED   a 24+ contended entry or Object.wait that may pin: its
 *               frames say (a native frame below the monitor), verdict due
 *   STACKED     below the threshold, the stack (frames and monitors) in hand
 *   FRAMES      below the threshold, the frames in hand, not the monitors
 *               (monitors_later: reading them walks the stack again)
 *   DEFERRED    below the threshold, no stack (stack_deferred: most pins end
 *               before the threshold and never need one)
 *   READING_M   crossed: the writer reads the stack again for its monitors
 *   READING_S   crossed: the writer takes the stack
 *   REPORTED    reported in progress (start sent), its end still to come
 *
 * Settled: the pin's callback-side end asks settled.h (settled_has) to know
 * that a frames-only start needs no stack at its end: the writer marks it
 * when it is done with the start (not a pin, or reported with or without its
 * monitors). A start with its stack in hand or none needs no mark: its end
 * takes a stack only for a deferred start that crossed (pins.c).
 *
 * The window: a crossed pin whose stack read fails (its thread not blocked
 * yet: the JDK posts the entry before it blocks, and freezing first can take
 * long under load; or blocked elsewhere, another pin's frames) is tried again
 * every PM_RETRY_NS until threshold + PM_WINDOW_NS after its start, and for
 * a whole PM_WINDOW_NS after its first failed read when the writer looked late
 * (starved under load, it may look only once the pin's thread was woken and
 * waits for a CPU to run its ending callback, which takes the stack: that end
 * is on its way); then it is reported with what it has. Its end, if it comes
 * first, brings the stack.
 *
 * The table, one case per transition (state, event -> actions, next state):
 *
 *  1 (table full)  START            -> DROPPED                        (none)
 *  2 FREE          START maybe      -> CHECK_PIN                      UNDECIDED
 *  3 FREE          START full       -> NAME_START                     STACKED
 *  4 FREE          START frames     -> NAME_START                     FRAMES
 *  5 FREE          START none       -> -                              DEFERRED
 *      (threshold=0: a START that lands in STACKED, FRAMES or DEFERRED
 *       is its own crossing at once: 9, 10 or 11 follow in the same call)
 *  6 UNDECIDED     VERDICT not pin  -> NOT_PIN [SETTLED if frames]    FREE
 *  7 UNDECIDED     VERDICT pin      -> as 3, 4 or 5 by what came      STACKED / FRAMES / DEFERRED
 *  8 S/F/D         TICK before thr. -> - (due: the time left)         same
 *  9 STACKED       TICK crossed     -> REPORT_START                   REPORTED
 * 10 FRAMES        TICK crossed     -> TAKE_MONITORS                  READING_M
 * 11 DEFERRED      TICK crossed     -> TAKE_STACK                     READING_S
 * 12 READING_M     RESULT ok        -> NAME_TAKEN SETTLED REPORT_START REPORTED
 * 13 READING_M     RESULT again/other, in window  -> - (due 1 ms)     FRAMES
 *                  ("in window": before threshold + PM_WINDOW_NS after the
 *                   start, or PM_WINDOW_NS after the first failed read)
 * 14 READING_M     RESULT again/other, past window
 *                                   -> SETTLED REPORT_START (frames)  REPORTED
 * 15 READING_S     RESULT ok        -> NAME_TAKEN REPORT_START        REPORTED
 * 16 READING_S     RESULT again/other, in window  -> - (due 1 ms)     DEFERRED
 * 17 READING_S     RESULT again/other, past window
 *                                   -> REPORT_START (no stack)        REPORTED
 * 18 S/F/D         END below thr.   -> BELOW                          FREE
 * 19 STACKED       END crossed      -> REPORT_START REPORT_END        FREE
 *                  (the writer looked late: the pin crossed and ended unseen)
 * 20 FRAMES        END crossed      -> [NAME_END if the end's frames are the
 *                                      start's] REPORT_START REPORT_END FREE
 *                  (else another pin's frames: the start's, no monitors)
 * 21 DEFERRED      END crossed      -> [NAME_END if it has frames]
 *                                      REPORT_START REPORT_END        FREE
 * 22 REPORTED      END              -> REPORT_END                     FREE
 * 23 (no pin)      END              -> -  (its start was lost to a full queue or table)
 * 24 UNDECIDED     END              -> NOT_PIN                        FREE
 *                  (cannot happen: the verdict comes in the call of the start)
 * 25 REPORTED, UNDECIDED, READING_*  TICK -> -                        same
 *
 * "crossed" for an END: end - start >= threshold (unsigned, as a duration).
 * READING_* and UNDECIDED last only within one call of the executor; an END
 * there is taken as in FRAMES / DEFERRED (READING_M / READING_S). */
#ifndef VTPIN_PIN_MACHINE_H
#define VTPIN_PIN_MACHINE_H

#include <stdint.h>

#define PM_MAX_PINS 4096
#define PM_RETRY_NS 1000000LL /* a failed read is tried again after this */
#define PM_WINDOW_NS                                                                                                   \
    100000000LL /* past threshold, and past a first failed read: how long a crossed pin waits for its stack */
#define PM_NOT_DUE INT64_MAX

enum pm_state {
    PM_FREE = 0,
    PM_UNDECIDED,
    PM_STACKED,
    PM_FRAMES,
    PM_DEFERRED,
    PM_READING_M,
    PM_READING_S,
    PM_REPORTED,
};

/* What came with a start. */
enum pm_stack {
    PM_STACK_FULL = 0, /* frames and monitors (the callback, the watchdog, threshold=0) */
    PM_STACK_FRAMES,   /* frames only: monitors_later */
    PM_STACK_NONE,     /* stack_deferred */
};

/* What a stack read the machine asked for gave. */
enum pm_read {
    PM_READ_OK = 0,
    PM_READ_AGAIN, /* not taken: the thread is not blocked (yet), or no longer on its carrier */
    PM_READ_OTHER, /* taken, but not the start's frames: the thread blocks elsewhere now */
};

/* Actions, executed in this order. */
enum pm_act {
    PM_ACT_DROPPED = 1 << 0,       /* the table is full: counted, nothing kept */
    PM_ACT_CHECK_PIN = 1 << 1,     /* decide from the start's frames whether it pins: pm_verdict */
    PM_ACT_NAME_START = 1 << 2,    /* name the start record's stack */
    PM_ACT_TAKE_MONITORS = 1 << 3, /* read the stack again, compare its frames: pm_result */
    PM_ACT_TAKE_STACK = 1 << 4,    /* take the stack from the writer: pm_result */
    PM_ACT_NAME_TAKEN = 1 << 5,    /* name the stack just read */
    PM_ACT_NAME_END = 1 << 6,      /* name the end record's stack */
    PM_ACT_SETTLED = 1 << 7,       /* settled_mark: its end need not take the stack */
    PM_ACT_REPORT_START = 1 << 8,  /* report the pin in progress */
    PM_ACT_REPORT_END = 1 << 9,    /* report its end (duration) */
    PM_ACT_BELOW = 1 << 10,        /* count it below the threshold, say nothing */
    PM_ACT_NOT_PIN = 1 << 11,      /* count it: a 24+ entry or wait that could unmount */
    PM_ACT_FREE = 1 << 12,         /* the slot is free again (after the other actions) */
};

struct pm_action {
    unsigned act; /* enum pm_act bits */
    int slot;     /* the pin's slot, -1 when none */
    int64_t due;  /* ns from the event's clock until this pin wants a TICK; PM_NOT_DUE */
};

struct pm_start {
    uint64_t pin_id;
    int64_t time_ns;
    int maybe; /* 24+: a contended entry or wait that may pin (a verdict is needed) */
    enum pm_stack stack;
};

struct pm_end {
    uint64_t pin_id;
    int64_t time_ns;
    int has_frames;  /* the ending callback took the stack */
    int same_frames; /* ... and its frames are those of the stack in hand */
};

struct pm_life {
    uint64_t pin_id;
    int64_t start_ns;
    int64_t first_failed_ns; /* the first failed stack read's clock, when failed */
    uint8_t state;           /* enum pm_state */
    uint8_t stack;           /* enum pm_stack: what came with the start */
    uint16_t pos;            /* index in live[] */
    uint8_t failed;          /* a stack read failed */
};

struct pin_machine {
    uint64_t threshold_ns;
    struct pm_life lives[PM_MAX_PINS];
    uint16_t live[PM_MAX_PINS]; /* the slots in use, in order of arrival but for removals */
    uint16_t free_slots[PM_MAX_PINS];
    unsigned count, free_count;
};

void pm_init(struct pin_machine *m, uint64_t threshold_ns);

struct pm_action pm_start(struct pin_machine *m, const struct pm_start *s);
struct pm_action pm_verdict(struct pin_machine *m, int slot, int is_pin);
struct pm_action pm_tick(struct pin_machine *m, int slot, int64_t now);
/* now: the clock when the read returned (the window is measured to it). */
struct pm_action pm_result(struct pin_machine *m, int slot, enum pm_read result, int64_t now);
/* slot: pm_find(m, e->pin_id) (-1: an end without its start). */
struct pm_action pm_end(struct pin_machine *m, int slot, const struct pm_end *e);

int pm_find(const struct pin_machine *m, uint64_t pin_id); /* the slot, -1 when not in progress */
unsigned pm_count(const struct pin_machine *m);
int pm_slot_at(const struct pin_machine *m, unsigned i); /* i < pm_count */
enum pm_state pm_state_of(const struct pin_machine *m, int slot);
const char *pm_state_name(enum pm_state s);

#endif
