/* Minimal unit-test checks: each failing check prints file:line, the
 * expression and the values, and is counted; CHECK_MAIN_RETURN() prints
 * "N passed, M failed" and makes main return non-zero on any failure.
 *
 * Every check is an expression that yields 1 on success, so a test can stop
 * early with `if (!CHECK(p)) return;`. Not thread-safe: call checks from the
 * main thread only (collect results from workers, then check them). */
#ifndef VTPIN_TEST_CHECK_H
#define VTPIN_TEST_CHECK_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static unsigned check_passed_, check_failed_;

static inline int check_result_(int ok)
{
    if (ok)
        check_passed_++;
    else
        check_failed_++;
    return ok;
}

static inline int check_true_(const char *file, int line, const char *expr, int ok)
{
    if (!ok)
        fprintf(stderr, "%s:%d: CHECK(%s) failed\n", file, line, expr);
    return check_result_(ok);
}

static inline int check_int_(const char *file, int line, const char *ea, const char *eb, intmax_t a, intmax_t b)
{
    if (a != b)
        fprintf(stderr, "%s:%d: CHECK_INT(%s == %s) failed: %jd != %jd\n", file, line, ea, eb, a, b);
    return check_result_(a == b);
}

static inline int check_uint_(const char *file, int line, const char *ea, const char *eb, uintmax_t a, uintmax_t b)
{
    if (a != b)
        fprintf(stderr, "%s:%d: CHECK_UINT(%s == %s) failed: %ju != %ju\n", file, line, ea, eb, a, b);
    return check_result_(a == b);
}

static inline int check_str_(const char *file, int line, const char *ea, const char *eb, const char *a, const char *b)
{
    int ok = (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
    if (!ok)
        fprintf(stderr, "%s:%d: CHECK_STR(%s == %s) failed: \"%s\" != \"%s\"\n", file, line, ea, eb, a ? a : "(null)",
                b ? b : "(null)");
    return check_result_(ok);
}

static inline int check_contains_(const char *file, int line, const char *ea, const char *eb, const char *hay,
                                  const char *needle)
{
    int ok = hay && needle && strstr(hay, needle) != NULL;
    if (!ok)
        fprintf(stderr, "%s:%d: CHECK_CONTAINS(%s, %s) failed: \"%s\" does not contain \"%s\"\n", file, line, ea, eb,
                hay ? hay : "(null)", needle ? needle : "(null)");
    return check_result_(ok);
}

static inline int check_mem_(const char *file, int line, const char *ea, const char *eb, const void *a, const void *b,
                             size_t n)
{
    const unsigned char *pa = a, *pb = b;
    size_t i = 0;
    while (i < n && pa[i] == pb[i])
        i++;
    if (i < n)
        fprintf(stderr, "%s:%d: CHECK_MEM(%s == %s, %zu bytes) failed at offset %zu: 0x%02x != 0x%02x\n", file, line,
                ea, eb, n, i, pa[i], pb[i]);
    return check_result_(i == n);
}

#define CHECK(expr) check_true_(__FILE__, __LINE__, #expr, !!(expr))
#define CHECK_INT(a, b) check_int_(__FILE__, __LINE__, #a, #b, (intmax_t)(a), (intmax_t)(b))
#define CHECK_UINT(a, b) check_uint_(__FILE__, __LINE__, #a, #b, (uintmax_t)(a), (uintmax_t)(b))
#define CHECK_STR(a, b) check_str_(__FILE__, __LINE__, #a, #b, (a), (b))
#define CHECK_CONTAINS(hay, needle) check_contains_(__FILE__, __LINE__, #hay, #needle, (hay), (needle))
#define CHECK_MEM(a, b, n) check_mem_(__FILE__, __LINE__, #a, #b, (a), (b), (n))

/* Runs one test function and says which one failed. */
#define CHECK_RUN(fn)                                                                                                  \
    do {                                                                                                               \
        unsigned failed_before_ = check_failed_;                                                                       \
        fn();                                                                                                          \
        if (check_failed_ != failed_before_)                                                                           \
            fprintf(stderr, "FAIL %s (%u failed checks)\n", #fn, check_failed_ - failed_before_);                      \
        else                                                                                                           \
            printf("ok   %s\n", #fn);                                                                                  \
        fflush(stdout);                                                                                                \
    } while (0)

/* The last statement of main. */
#define CHECK_MAIN_RETURN()                                                                                            \
    do {                                                                                                               \
        fflush(stdout);                                                                                                \
        printf("%u passed, %u failed\n", check_passed_, check_failed_);                                                \
        return check_failed_ ? 1 : 0;                                                                                  \
    } while (0)

#endif
