/*
 * An ice_row_sink that writes rows as JSON objects in the `scan` conventions of
 * design.md §3 (one object per line) into an icd_buf.
 */
#ifndef ICD_ICE_SCAN_JSON_H
#define ICD_ICE_SCAN_JSON_H

#include <stdbool.h>

#include "base/buf.h"
#include "iceberg/row_sink.h"

#define ICE_SCAN_JSON_MAX_DEPTH 64

typedef struct ice_scan_json {
    icd_buf *out;
    int depth;
    bool first[ICE_SCAN_JSON_MAX_DEPTH];
    char kind[ICE_SCAN_JSON_MAX_DEPTH];  /* 'o' object, 'a' array, 'm' map */
    char state[ICE_SCAN_JSON_MAX_DEPTH]; /* maps: 0 next is a key, 1 in key, 2 in value */
    /* Called after each row with the row's buffer; may flush it. */
    int (*on_row)(void *ctx, icd_buf *out, icd_error *err);
    void *on_row_ctx;
} ice_scan_json;

/* Fills `sink` with callbacks writing into j->out. */
void ice_scan_json_sink(ice_scan_json *j, ice_row_sink *sink);

#endif
