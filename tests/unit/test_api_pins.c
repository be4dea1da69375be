/* Unit tests for agent/outputs/api_pins.c: the pins the Java API reads, bounded, since a mark. */
#include "api_pins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char *record(int64_t start_ns)
{
    char text[64];
    snprintf(text, sizeof(text), "pin\t%lld\n", (long long)start_ns);
    return strdup(text);
}

static char *since(int64_t since_ns, uint64_t evictions_before)
{
    size_t len = 0;
    char *out = api_pins_since(since_ns, evictions_before, &len);
    CHECK_UINT(out ? strlen(out) : 0, len);
    return out;
}

/* Off until enabled; then the ended pins from a start time on, and the ones in progress after them. */
static void test_since(void)
{
    CHECK_INT(api_pins_enabled(), 0);
    api_pins_put_ended(5, record(5)); /* off: freed, not kept */
    CHECK_INT(api_pins_enable(), 0);
    CHECK_INT(api_pins_enabled(), 1);
    for (int64_t t = 10; t <= 30; t += 10)
        api_pins_put_ended(t, record(t));
    api_pins_set_in_progress(strdup("pin\t40\n"));
    char *out = since(20, 0);
    CHECK_STR(out, "pin\t20\npin\t30\npin\t40\n");
    free(out);
    out = since(0, 0);
    CHECK_STR(out, "pin\t10\npin\t20\npin\t30\npin\t40\n");
    free(out);
    api_pins_set_in_progress(NULL); /* a sync with nothing in progress */
    out = since(31, 0);
    CHECK_STR(out, "");
    free(out);
    api_pins_reset();
    CHECK_INT(api_pins_enabled(), 0);
}

/* Past API_PINS_KEPT the oldest go; a caller is told when one of its pins (started at or after its
 * mark) went, and how many went since its mark. */
static void test_bounded(void)
{
    CHECK_INT(api_pins_enable(), 0);
    for (int64_t t = 1; t <= API_PINS_KEPT + 3; t++)
        api_pins_put_ended(t, record(t));
    CHECK_UINT(api_pins_evictions(), 3);
    char *out = since(0, 0);
    CHECK_CONTAINS(out, "dropped\t3\n");
    CHECK_INT(strncmp(out, "pin\t4\n", 6), 0); /* 1, 2 and 3 are gone */
    free(out);
    out = since(3, 0); /* pin 3, dropped, started at the mark: lost */
    CHECK_CONTAINS(out, "dropped\t3\n");
    free(out);
    out = since(4, 0); /* every pin dropped started before the mark: nothing lost, whatever the count */
    CHECK_INT(strstr(out, "dropped") == NULL, 1);
    free(out);
    out = since(API_PINS_KEPT + 3, 3); /* a mark taken after those evictions: nothing dropped for it */
    char want[64];
    snprintf(want, sizeof(want), "pin\t%d\n", API_PINS_KEPT + 3);
    CHECK_STR(out, want);
    free(out);
    api_pins_reset();
    CHECK_UINT(api_pins_evictions(), 0);
}

/* Deep stacks make big records: the bytes kept stay under API_PINS_BYTES, the oldest going first. */
static void test_bytes(void)
{
    CHECK_INT(api_pins_enable(), 0);
    size_t size = API_PINS_BYTES / 3 + 1; /* two fit, not three */
    for (int64_t t = 1; t <= 3; t++) {
        char *r = malloc(size + 1);
        memset(r, 'x', size);
        r[size] = '\0';
        r[0] = (char)('0' + t);
        api_pins_put_ended(t, r);
    }
    CHECK_UINT(api_pins_evictions(), 1);
    size_t len = 0;
    char *out = api_pins_since(0, 0, &len);
    CHECK_INT(out[0], '2');
    CHECK_INT(out[size], '3');
    CHECK_CONTAINS(out + 2 * size, "dropped\t1\n");
    free(out);
    api_pins_reset();
}

int main(void)
{
    test_since();
    test_bounded();
    test_bytes();
    CHECK_MAIN_RETURN();
}
