/* The one way vtpin's CLI and collector tables grow an array: doubling, from 16, to hold `need`
 * elements of `elem` bytes. Pure and inline. */
#ifndef VTPIN_COMMON_GROW_H
#define VTPIN_COMMON_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* *arr (of *cap elements) grown to hold need: 0, or -ENOMEM (*arr and *cap unchanged). */
static inline int grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem)
            return -ENOMEM;
        ncap *= 2;
    }
    void *n = realloc(*arr, ncap * elem);
    if (!n)
        return -ENOMEM;
    *arr = n;
    *cap = ncap;
    return 0;
}

#endif
