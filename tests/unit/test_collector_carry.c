/* Unit tests for collector/carry.c: what a rotated recording writes again besides its definitions.
 * Each kind kept in the order a recording needs, the last counters and carrier word winning, a
 * start let go at its end, and the bounds: the memory budget, the pins in progress, the notices. Frames are tags
 * ("S1"): the carry keeps bytes, it never reads them. */
#include "carry.h"

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "common/budget.h"
#include "wire.h"

/* The frames carry_each gives, as tags joined by spaces. */
struct seen {
    char text[4096];
};

static int collect(void *arg, const uint8_t *frame, size_t len)
{
    struct seen *s = arg;
    size_t at = strlen(s->text);
    snprintf(s->text + at, sizeof(s->text) - at, "%s%.*s", at ? " " : "", (int)len, (const char *)frame);
    return 0;
}

static const char *each(const struct carry *c, struct seen *s)
{
    s->text[0] = '\0';
    CHECK_INT(carry_each(c, 1, collect, s), 0);
    return s->text;
}

static void note(struct carry *c, WireEvent *ev, const char *tag)
{
    carry_note(c, ev, (const uint8_t *)tag, strlen(tag));
}

static void note_carrier(struct carry *c, int32_t tid, const char *tag)
{
    Vtpin__V1__Carrier d = VTPIN__V1__CARRIER__INIT;
    d.tid = tid;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_CARRIER;
    ev.carrier = &d;
    note(c, &ev, tag);
}

static void note_pin(struct carry *c, uint64_t id, int end, const char *tag)
{
    Vtpin__V1__PinStart s = VTPIN__V1__PIN_START__INIT;
    Vtpin__V1__PinEnd e = VTPIN__V1__PIN_END__INIT;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    if (end) {
        e.pin_id = id;
        ev.body_case = VTPIN__V1__EVENT__BODY_PIN_END;
        ev.pin_end = &e;
    } else {
        s.pin_id = id;
        ev.body_case = VTPIN__V1__EVENT__BODY_PIN_START;
        ev.pin_start = &s;
    }
    note(c, &ev, tag);
}

static void note_hog(struct carry *c, uint64_t id, int end, const char *tag)
{
    Vtpin__V1__HogStart s = VTPIN__V1__HOG_START__INIT;
    Vtpin__V1__HogEnd e = VTPIN__V1__HOG_END__INIT;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    if (end) {
        e.hog_id = id;
        ev.body_case = VTPIN__V1__EVENT__BODY_HOG_END;
        ev.hog_end = &e;
    } else {
        s.hog_id = id;
        ev.body_case = VTPIN__V1__EVENT__BODY_HOG_START;
        ev.hog_start = &s;
    }
    note(c, &ev, tag);
}

static void note_notice(struct carry *c, const char *tag)
{
    Vtpin__V1__Notice n = VTPIN__V1__NOTICE__INIT;
    WireEvent ev = VTPIN__V1__EVENT__INIT;
    ev.body_case = VTPIN__V1__EVENT__BODY_NOTICE;
    ev.notice = &n;
    note(c, &ev, tag);
}

static void test_order_and_replacement(void)
{
    struct carry *c = carry_new(NULL);
    if (!CHECK(c))
        return;
    Vtpin__V1__Stats st = VTPIN__V1__STATS__INIT;
    Vtpin__V1__StringDef str = VTPIN__V1__STRING_DEF__INIT;
    Vtpin__V1__MethodDef m = VTPIN__V1__METHOD_DEF__INIT;
    Vtpin__V1__StackDef k = VTPIN__V1__STACK_DEF__INIT;
    Vtpin__V1__Transitions tr = VTPIN__V1__TRANSITIONS__INIT;
    WireEvent ev = VTPIN__V1__EVENT__INIT;

    ev.body_case = VTPIN__V1__EVENT__BODY_STATS;
    ev.stats = &st;
    note(c, &ev, "T1");
    note_pin(c, 9, 0, "P9");
    note_hog(c, 2, 0, "H2");
    ev.body_case = VTPIN__V1__EVENT__BODY_STACK;
    k.id = 4;
    ev.stack = &k;
    note(c, &ev, "K4"); /* definitions: the session keeps them (session_defs_write), not the carry */
    note_pin(c, 5, 0, "P5");
    note_carrier(c, 78, "C78");
    note_carrier(c, 77, "C77");
    ev.body_case = VTPIN__V1__EVENT__BODY_METHOD;
    m.id = 3;
    ev.method = &m;
    note(c, &ev, "M3");
    ev.body_case = VTPIN__V1__EVENT__BODY_STRING;
    str.id = 1;
    ev.string = &str;
    note(c, &ev, "S1");
    note_notice(c, "N0");
    note_pin(c, 6, 0, "P6");
    note_notice(c, "N1");
    note_carrier(c, 78, "C78b"); /* said again: the last word wins, in its place */
    ev.body_case = VTPIN__V1__EVENT__BODY_STATS;
    ev.stats = &st;
    note(c, &ev, "T2");
    ev.body_case = VTPIN__V1__EVENT__BODY_TRANSITIONS; /* what only says what happened then: not kept */
    ev.transitions = &tr;
    note(c, &ev, "X");
    carry_note(c, NULL, (const uint8_t *)"Y", 1); /* a newer schema's event */
    note_pin(c, 9, 1, "E9");                      /* ended: its start goes */
    note_hog(c, 2, 1, "G2");
    note_pin(c, 12, 1, "E12"); /* never started: nothing to let go */

    struct seen s;
    CHECK_STR(each(c, &s), "N0 N1 C77 C78b P5 P6 T2");
    CHECK_INT(carry_count(c), 7);
    CHECK_INT(carry_bytes(c), strlen("N0N1C77C78bP5P6T2"));
    CHECK_INT(carry_missed(c), 0);
    /* a pin again after its end (the last item moved into its place, still found) */
    note_pin(c, 5, 1, "E5");
    note_pin(c, 6, 1, "E6");
    note_pin(c, 9, 0, "P9b");
    CHECK_STR(each(c, &s), "N0 N1 C77 C78b P9b T2");
    s.text[0] = '\0';
    CHECK_INT(carry_each(c, 0, collect, &s), 0); /* a file that holds the notices already */
    CHECK_STR(s.text, "C77 C78b P9b T2");
    carry_free(c);
}

static void test_budget(void)
{
    struct budget b;
    budget_init(&b, 4096);
    struct carry *c = carry_new(&b);
    if (!CHECK(c))
        return;
    char tag[32];
    unsigned kept = 0;
    for (unsigned i = 1; i <= 200; i++) {
        snprintf(tag, sizeof(tag), "C%u", i);
        note_carrier(c, (int32_t)i, tag);
        kept = (unsigned)carry_count(c);
    }
    CHECK(kept > 10 && kept < 200);
    CHECK_INT(carry_missed(c), 200 - kept);
    CHECK(b.used <= b.limit && b.used > 0);
    CHECK_INT(b.refused, 200 - kept);
    CHECK_INT(carry_refused(c), 200 - kept);
    /* a replacement the budget cannot take keeps the one before */
    note_carrier(c, 1, "C1-longer-than-the-room-left-in-the-budget-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    struct seen s;
    CHECK(strncmp(each(c, &s), "C1 C2 ", 6) == 0);
    carry_free(c);
    CHECK_INT(b.used, 0); /* everything given back */
}

static void test_bounds(void)
{
    struct carry *c = carry_new(NULL);
    if (!CHECK(c))
        return;
    for (uint64_t i = 1; i <= CARRY_MAX_PINS; i++)
        note_pin(c, i, 0, "P");
    CHECK_INT(carry_missed(c), 0);
    note_hog(c, 1, 0, "H"); /* pins and hogs in progress together */
    note_pin(c, CARRY_MAX_PINS + 1, 0, "P");
    CHECK_INT(carry_missed(c), 2);
    note_pin(c, 1, 1, "E");
    note_hog(c, 1, 0, "H"); /* room again after an end */
    CHECK_INT(carry_missed(c), 2);
    CHECK_INT(carry_count(c), CARRY_MAX_PINS);
    for (unsigned i = 0; i < CARRY_MAX_NOTICES + 3; i++)
        note_notice(c, "N");
    CHECK_INT(carry_missed(c), 5); /* the first CARRY_MAX_NOTICES notices */
    carry_free(c);
    carry_free(NULL);
}

int main(void)
{
    test_order_and_replacement();
    test_budget();
    test_bounds();
    CHECK_MAIN_RETURN();
}
