#include "pin_machine.h"

#include <string.h>

void pm_init(struct pin_machine *m, uint64_t threshold_ns)
{
    memset(m, 0, sizeof(*m));
    m->threshold_ns = threshold_ns;
    for (unsigned i = 0; i < PM_MAX_PINS; i++)
        m->free_slots[i] = (uint16_t)(PM_MAX_PINS - 1 - i); /* slot 0 is taken first */
    m->free_count = PM_MAX_PINS;
}

static struct pm_action action(unsigned act, int slot, int64_t due)
{
    struct pm_action a = {.act = act, .slot = slot, .due = due};
    return a;
}

static void release(struct pin_machine *m, int slot)
{
    struct pm_life *l = &m->lives[slot];
    uint16_t last = m->live[--m->count];
    m->live[l->pos] = last;
    m->lives[last].pos = l->pos;
    l->state = PM_FREE;
    m->free_slots[m->free_count++] = (uint16_t)slot;
}

/* Rows 9-11: the pin has lasted past the threshold, still in progress. */
static struct pm_action cross(struct pin_machine *m, int slot)
{
    struct pm_life *l = &m->lives[slot];
    switch ((enum pm_state)l->state) {
    case PM_STACKED:
        l->state = PM_REPORTED;
        return action(PM_ACT_REPORT_START, slot, PM_NOT_DUE);
    case PM_FRAMES:
        l->state = PM_READING_M;
        return action(PM_ACT_TAKE_MONITORS, slot, PM_NOT_DUE);
    case PM_DEFERRED:
        l->state = PM_READING_S;
        return action(PM_ACT_TAKE_STACK, slot, PM_NOT_DUE);
    default:
        return action(0, slot, PM_NOT_DUE);
    }
}

/* Rows 3-5 and 7: below the threshold with what came; threshold=0 crosses at once. */
static struct pm_action pending(struct pin_machine *m, int slot, unsigned act)
{
    struct pm_life *l = &m->lives[slot];
    switch ((enum pm_stack)l->stack) {
    case PM_STACK_FULL:
        l->state = PM_STACKED;
        act |= PM_ACT_NAME_START;
        break;
    case PM_STACK_FRAMES:
        l->state = PM_FRAMES;
        act |= PM_ACT_NAME_START;
        break;
    case PM_STACK_NONE:
    default:
        l->state = PM_DEFERRED;
        break;
    }
    if (m->threshold_ns == 0) {
        struct pm_action c = cross(m, slot);
        c.act |= act;
        return c;
    }
    return action(act, slot, (int64_t)m->threshold_ns);
}

struct pm_action pm_start(struct pin_machine *m, const struct pm_start *s)
{
    if (m->free_count == 0)
        return action(PM_ACT_DROPPED, -1, PM_NOT_DUE); /* row 1 */
    int slot = m->free_slots[--m->free_count];
    struct pm_life *l = &m->lives[slot];
    l->pin_id = s->pin_id;
    l->start_ns = s->time_ns;
    l->stack = (uint8_t)s->stack;
    l->failed = 0;
    l->pos = (uint16_t)m->count;
    m->live[m->count++] = (uint16_t)slot;
    if (s->maybe) {
        l->state = PM_UNDECIDED; /* row 2 */
        return action(PM_ACT_CHECK_PIN, slot, PM_NOT_DUE);
    }
    return pending(m, slot, 0);
}

struct pm_action pm_verdict(struct pin_machine *m, int slot, int is_pin)
{
    struct pm_life *l = &m->lives[slot];
    if (l->state != PM_UNDECIDED)
        return action(0, slot, PM_NOT_DUE);
    if (is_pin)
        return pending(m, slot, 0);              /* row 7 */
    unsigned act = PM_ACT_NOT_PIN | PM_ACT_FREE; /* row 6 */
    if (l->stack == PM_STACK_FRAMES)
        act |= PM_ACT_SETTLED;
    release(m, slot);
    return action(act, slot, PM_NOT_DUE);
}

struct pm_action pm_tick(struct pin_machine *m, int slot, int64_t now)
{
    struct pm_life *l = &m->lives[slot];
    if (l->state != PM_STACKED && l->state != PM_FRAMES && l->state != PM_DEFERRED)
        return action(0, slot, PM_NOT_DUE); /* row 25 */
    int64_t due = l->start_ns + (int64_t)m->threshold_ns - now;
    if (due > 0)
        return action(0, slot, due); /* row 8 */
    return cross(m, slot);
}

struct pm_action pm_result(struct pin_machine *m, int slot, enum pm_read result, int64_t now)
{
    struct pm_life *l = &m->lives[slot];
    int monitors = l->state == PM_READING_M;
    if (!monitors && l->state != PM_READING_S)
        return action(0, slot, PM_NOT_DUE);
    unsigned settled = monitors ? PM_ACT_SETTLED : 0;
    if (result == PM_READ_OK) {
        l->state = PM_REPORTED; /* rows 12, 15 */
        return action(PM_ACT_NAME_TAKEN | settled | PM_ACT_REPORT_START, slot, PM_NOT_DUE);
    }
    if (!l->failed) {
        l->failed = 1;
        l->first_failed_ns = now;
    }
    if (now - l->start_ns < (int64_t)m->threshold_ns + PM_WINDOW_NS || now - l->first_failed_ns < PM_WINDOW_NS) {
        l->state = monitors ? PM_FRAMES : PM_DEFERRED; /* rows 13, 16 */
        return action(0, slot, PM_RETRY_NS);
    }
    l->state = PM_REPORTED; /* rows 14, 17: reported with what it has */
    return action(settled | PM_ACT_REPORT_START, slot, PM_NOT_DUE);
}

struct pm_action pm_end(struct pin_machine *m, int slot, const struct pm_end *e)
{
    if (slot < 0 || m->lives[slot].state == PM_FREE || m->lives[slot].pin_id != e->pin_id)
        return action(0, -1, PM_NOT_DUE); /* row 23 */
    struct pm_life *l = &m->lives[slot];
    unsigned act = PM_ACT_FREE;
    int64_t duration = e->time_ns - l->start_ns;
    int crossed = (uint64_t)duration >= m->threshold_ns;
    switch ((enum pm_state)l->state) {
    case PM_REPORTED:
        act |= PM_ACT_REPORT_END; /* row 22 */
        break;
    case PM_UNDECIDED:
        act |= PM_ACT_NOT_PIN; /* row 24 */
        break;
    case PM_STACKED:
    case PM_FRAMES:
    case PM_DEFERRED:
    case PM_READING_M:
    case PM_READING_S:
        if (!crossed) {
            act |= PM_ACT_BELOW; /* row 18 */
            break;
        }
        act |= PM_ACT_REPORT_START | PM_ACT_REPORT_END; /* rows 19-21 */
        if (e->has_frames && (l->state == PM_DEFERRED || l->state == PM_READING_S))
            act |= PM_ACT_NAME_END;
        if (e->has_frames && e->same_frames && (l->state == PM_FRAMES || l->state == PM_READING_M))
            act |= PM_ACT_NAME_END;
        break;
    case PM_FREE:
    default:
        break;
    }
    release(m, slot);
    return action(act, slot, PM_NOT_DUE);
}

int pm_find(const struct pin_machine *m, uint64_t pin_id)
{
    for (unsigned i = 0; i < m->count; i++)
        if (m->lives[m->live[i]].pin_id == pin_id)
            return m->live[i];
    return -1;
}

unsigned pm_count(const struct pin_machine *m)
{
    return m->count;
}

int pm_slot_at(const struct pin_machine *m, unsigned i)
{
    return m->live[i];
}

enum pm_state pm_state_of(const struct pin_machine *m, int slot)
{
    return slot >= 0 && slot < PM_MAX_PINS ? (enum pm_state)m->lives[slot].state : PM_FREE;
}

const char *pm_state_name(enum pm_state s)
{
    static const char *const names[] = {"FREE",     "UNDECIDED", "STACKED",   "FRAMES",
                                        "DEFERRED", "READING_M", "READING_S", "REPORTED"};
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}
