/* The growable array (array.h). */
#include "base/array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int icd_array_reserve(void *arrp, size_t *cap, size_t need, size_t elem_size, size_t min_cap)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : (min_cap ? min_cap : 1);
    while (n < need) {
        if (n > SIZE_MAX / 2) return -1;
        n *= 2;
    }
    if (elem_size && n > SIZE_MAX / elem_size) return -1;
    void *old;
    memcpy(&old, arrp, sizeof old); /* arrp points at a T *, whatever T is */
    void *p = realloc(old, n * elem_size);
    if (!p) return -1;
    memcpy(arrp, &p, sizeof p);
    *cap = n;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void icd_sort_ints(int *v, size_t n)
{
    if (n > 1) qsort(v, n, sizeof *v, cmp_int);
}
