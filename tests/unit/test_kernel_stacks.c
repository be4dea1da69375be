/* Unit tests for cli/report/kernel_stacks.c: each distinct kernel stack and syscall name kept
 * once, whole, and freed with the store that owns it, adopted stores included (ASan). */
#include <string.h>

#include "check.h"
#include "kernel_stacks.h"

static void test_kept_once(void)
{
    struct kernel_stacks *ks = NULL;
    if (!CHECK_INT(kernel_stacks_new(&ks), 0))
        return;
    char *futex[] = {"__schedule+0x628", "futex_wait+0x9a", "do_syscall_64+0x71"};
    char futex_copy[3][32];
    char *again[3];
    for (size_t i = 0; i < 3; i++) { /* equal text at other addresses */
        snprintf(futex_copy[i], sizeof(futex_copy[i]), "%s", futex[i]);
        again[i] = futex_copy[i];
    }
    char *shorter[] = {"__schedule+0x628", "futex_wait+0x9a"};
    char *with_null[] = {"__schedule+0x628", NULL};

    const char *const *a = kernel_stacks_keep(ks, futex, 3);
    if (!CHECK(a != NULL))
        goto out;
    CHECK(a != (const char *const *)futex); /* a copy */
    CHECK(kernel_stacks_keep(ks, again, 3) == a);
    for (size_t i = 0; i < 3; i++)
        CHECK_STR(a[i], futex[i]);
    const char *const *b = kernel_stacks_keep(ks, shorter, 2);
    CHECK(b != NULL && b != a); /* a prefix is another stack */
    const char *const *c = kernel_stacks_keep(ks, with_null, 2);
    CHECK(c != NULL && c != b && strcmp(c[1], "") == 0); /* a missing frame is kept as "" */
    const char *const *d = kernel_stacks_keep(ks, NULL, 0);
    CHECK(d != NULL && kernel_stacks_keep(ks, NULL, 0) == d); /* no frames: one empty stack */

    const char *s = kernel_stacks_keep_string(ks, "futex");
    CHECK(s != NULL && kernel_stacks_keep_string(ks, "futex") == s);
    CHECK_STR(s, "futex");
    char *one[] = {"futex"};
    CHECK(kernel_stacks_keep(ks, one, 1) != (const char *const *)NULL); /* a stack of one frame, apart */
    CHECK_UINT(kernel_stacks_count(ks), 6);
out:
    kernel_stacks_free(ks);
}

/* Intervals moved from one session to another keep their stacks: the store that adopts another
 * owns what it kept, and frees it once, a chain of them too. */
static void test_adopt(void)
{
    struct kernel_stacks *dst = NULL, *src = NULL, *third = NULL;
    if (!CHECK_INT(kernel_stacks_new(&dst), 0) || !CHECK_INT(kernel_stacks_new(&src), 0) ||
        !CHECK_INT(kernel_stacks_new(&third), 0)) {
        kernel_stacks_free(dst);
        kernel_stacks_free(src);
        kernel_stacks_free(third);
        return;
    }
    char *read[] = {"pipe_read+0x3c1", "vfs_read+0x2f6"};
    const char *const *kept = kernel_stacks_keep(src, read, 2);
    const char *name = kernel_stacks_keep_string(third, "read");
    kernel_stacks_adopt(src, third);
    kernel_stacks_adopt(dst, src);
    CHECK(kept != NULL && strcmp(kept[1], "vfs_read+0x2f6") == 0); /* where it was */
    CHECK(name != NULL && strcmp(name, "read") == 0);
    CHECK_UINT(kernel_stacks_count(dst), 0); /* its own, not those it adopted */
    kernel_stacks_free(dst);                 /* frees all three */
}

int main(void)
{
    CHECK_RUN(test_kept_once);
    CHECK_RUN(test_adopt);
    CHECK_MAIN_RETURN();
}
