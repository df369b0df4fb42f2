/*
 * The growable array: one function behind every "n == cap: double and realloc" of the
 * tree. An array is a pointer, a count the caller keeps and a size_t capacity:
 *
 *     if (ICD_ARRAY_RESERVE(l->v, l->cap, l->n + 1, 16)) return icd_fail_nomem(err);
 *     l->v[l->n++] = x;
 *
 * The capacity doubles from `min_cap` until it holds `need`; the product with the element
 * size is checked for overflow. On failure the array and its capacity are unchanged (still
 * valid, still owned by the caller).
 */
#ifndef ICD_BASE_ARRAY_H
#define ICD_BASE_ARRAY_H

#include <stddef.h>

/* Makes room for `need` elements of `elem_size` bytes in the array at *(void **)arrp of
 * capacity *cap. 0, or -1 (out of memory or size overflow; nothing changed). */
int icd_array_reserve(void *arrp, size_t *cap, size_t need, size_t elem_size, size_t min_cap);

/* Sorts n ints ascending (the leaf indexes a Parquet reader is opened with). */
void icd_sort_ints(int *v, size_t n);

/* ICD_ARRAY_RESERVE(arr, cap, need, min_cap): `arr` a pointer lvalue (any element type),
 * `cap` a size_t lvalue. Evaluates to 0 or -1 as icd_array_reserve. */
#define ICD_ARRAY_RESERVE(arr, cap, need, min_cap)                                                 \
    ((need) <= (cap) ? 0 : icd_array_reserve(&(arr), &(cap), (need), sizeof *(arr), (min_cap)))

#endif
