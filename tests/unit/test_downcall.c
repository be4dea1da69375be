/* FFM downcall targets (agent/jvm/downcall.c): an address named by dladdr, and
 * the per-call-site memory that names a pin the writer looked at too late. */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "downcall.h"

/* Fake jmethodIDs: only compared, never used. */
static jmethodID method(uintptr_t n)
{
    return (jmethodID)n; /* NOLINT(performance-no-int-to-ptr) */
}

static void target(struct downcall_target *t, uint64_t address, const char *symbol)
{
    memset(t, 0, sizeof(*t));
    t->address = address;
    strcpy(t->symbol, symbol);
    strcpy(t->library, "/lib/libfake.so");
}

static void test_name_a_libc_function(void)
{
    struct downcall_target t;
    /* libc's own qsort: &qsort is ASan's interceptor in a sanitized build */
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *qsort_fn = libc ? dlsym(libc, "qsort") : NULL;
    if (!CHECK(qsort_fn != NULL))
        return;
    CHECK_INT(downcall_name((uint64_t)(uintptr_t)qsort_fn, &t), 0);
    CHECK_STR(t.symbol, "qsort");
    CHECK(strstr(t.library, "libc.so") != NULL);
    CHECK_INT(downcall_name((uint64_t)(uintptr_t)qsort_fn + 4, &t), 0);
    CHECK_STR(t.symbol, "qsort+0x4");
    CHECK_INT(downcall_name(0, &t), -ENOENT);
    CHECK_STR(t.symbol, "");
    dlclose(libc);
}

static void test_site_memory(void)
{
    struct downcall_target t, got;
    CHECK_INT(downcall_site_recall(method(1), 7, &got), -ENOENT);
    target(&t, 0x1000, "usleep");
    downcall_site_learn(method(1), 7, &t);
    downcall_site_learn(method(1), 7, &t); /* the same target again */
    CHECK_INT(downcall_site_recall(method(1), 7, &got), 0);
    CHECK_STR(got.symbol, "usleep");
    CHECK_UINT(got.address, 0x1000);
    /* another bci of the same method is another site */
    CHECK_INT(downcall_site_recall(method(1), 8, &got), -ENOENT);
    /* a site that called two targets is never named from memory again */
    target(&t, 0x2000, "qsort");
    downcall_site_learn(method(2), 3, &t);
    target(&t, 0x3000, "bsearch");
    downcall_site_learn(method(2), 3, &t);
    CHECK_INT(downcall_site_recall(method(2), 3, &got), -ENOENT);
    target(&t, 0x2000, "qsort");
    downcall_site_learn(method(2), 3, &t);
    CHECK_INT(downcall_site_recall(method(2), 3, &got), -ENOENT);
    /* an unknown address teaches nothing */
    target(&t, 0, "");
    downcall_site_learn(method(3), 1, &t);
    CHECK_INT(downcall_site_recall(method(3), 1, &got), -ENOENT);
    /* bounded: sites beyond the table are not remembered, the first ones stay */
    for (uintptr_t i = 100; i < 300; i++) {
        target(&t, 0x5000 + i, "f");
        downcall_site_learn(method(i), 0, &t);
    }
    CHECK_INT(downcall_site_recall(method(1), 7, &got), 0);
    CHECK_INT(downcall_site_recall(method(299), 0, &got), -ENOENT);
}

int main(void)
{
    CHECK_RUN(test_name_a_libc_function);
    CHECK_RUN(test_site_memory);
    CHECK_MAIN_RETURN();
}
