/*
 * icd_parallel_for: run fn(ctx, i) for i in [0, n) on up to `threads` threads, items
 * handed out one at a time in order (so item i starts before item i+1). The first
 * failure stops the hand-out of further items and is returned with its error; items
 * already running finish. threads <= 1 runs everything on the caller's thread.
 */
#ifndef ICD_BASE_PARALLEL_H
#define ICD_BASE_PARALLEL_H

#include <stddef.h>

#include "base/error.h"

typedef int (*icd_item_fn)(void *ctx, size_t item, icd_error *err);

int icd_parallel_for(size_t n, int threads, icd_item_fn fn, void *ctx, icd_error *err);

#endif
