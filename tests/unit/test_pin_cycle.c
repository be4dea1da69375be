/* Unit tests for agent/writer/pin_cycle.c: a cycle of pins found from their blockers' owners. */
#include "pin_cycle.h"

#include "check.h"

/* Two pins waiting for each other's thread: one cycle, from the first. */
static void test_two(void)
{
    struct pin_edge pins[] = {{.pin_id = 1, .vthread_id = 21, .owner_id = 22},
                              {.pin_id = 2, .vthread_id = 22, .owner_id = 21}};
    unsigned ring[8];
    CHECK_UINT(pin_cycle_find(pins, 2, ring, 8), 2);
    CHECK_UINT(ring[0], 0);
    CHECK_UINT(ring[1], 1);
}

/* A chain that ends (an owner with no pin, one not known, a platform owner): no cycle. */
static void test_chain(void)
{
    struct pin_edge pins[] = {{.pin_id = 1, .vthread_id = 21, .owner_id = 22},
                              {.pin_id = 2, .vthread_id = 22, .owner_id = 23}, /* 23 is not pinned */
                              {.pin_id = 3, .vthread_id = 24, .owner_id = 0}};
    unsigned ring[8];
    CHECK_UINT(pin_cycle_find(pins, 3, ring, 8), 0);
    CHECK_UINT(pin_cycle_find(pins, 0, ring, 8), 0);
}

/* A pin waiting into a cycle it is not part of: the cycle alone, in order, found from one of its own. */
static void test_tail_into_three(void)
{
    struct pin_edge pins[] = {{.pin_id = 9, .vthread_id = 30, .owner_id = 31}, /* waits into the cycle */
                              {.pin_id = 1, .vthread_id = 31, .owner_id = 32},
                              {.pin_id = 2, .vthread_id = 32, .owner_id = 33},
                              {.pin_id = 3, .vthread_id = 33, .owner_id = 31}};
    unsigned ring[8];
    CHECK_UINT(pin_cycle_find(pins, 4, ring, 8), 3);
    CHECK_UINT(ring[0], 1);
    CHECK_UINT(ring[1], 2);
    CHECK_UINT(ring[2], 3);
    /* longer than cap: not said (a cycle is said whole or not at all) */
    CHECK_UINT(pin_cycle_find(pins, 4, ring, 2), 0);
}

/* A pin whose owner is its own thread: a look that came late (the entry won between the read of
 * the contended monitor and of its owner), no wait and no cycle, alone or on the way. */
static void test_self(void)
{
    struct pin_edge pins[] = {{.pin_id = 1, .vthread_id = 40, .owner_id = 40},
                              {.pin_id = 2, .vthread_id = 41, .owner_id = 40}};
    unsigned ring[4];
    CHECK_UINT(pin_cycle_find(pins, 2, ring, 4), 0);
}

int main(void)
{
    CHECK_RUN(test_two);
    CHECK_RUN(test_chain);
    CHECK_RUN(test_tail_into_three);
    CHECK_RUN(test_self);
    CHECK_MAIN_RETURN();
}
