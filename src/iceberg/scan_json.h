/*
 * An ice_row_sink that writes rows as JSON objects in the `scan` conventions of
 * design.md §3 (one object per line) into an icd_buf.
 *
 * It also takes whole batches of primitive columns (ice_row_sink.columns, any file
 * format): longs, ints, doubles, strings and timestamps are formatted straight from the
 * typed values, every other value through ice_emit_tvalue and the row callbacks, so that
 * both ways write the same bytes.
 */
#ifndef ICD_ICE_SCAN_JSON_H
#define ICD_ICE_SCAN_JSON_H

#include <stdbool.h>

#include "base/buf.h"
#include "iceberg/row_sink.h"

#define ICE_SCAN_JSON_MAX_DEPTH 64
#define ICE_SCAN_JSON_NAME_MAX 64 /* `,"name":` texts up to this size are kept inline */

/* One top-level field name as JSON text `,"name":` (the reader passes the same name
 * pointer for a column in every row, so each name is escaped once per scan, not per row,
 * whatever the number of columns). */
typedef struct ice_scan_json_name {
    const char *name; /* the caller's pointer (identity only) */
    size_t n;
    size_t len;                        /* bytes of the text */
    char *long_text;                   /* the text when len > ICE_SCAN_JSON_NAME_MAX, else NULL */
    char text[ICE_SCAN_JSON_NAME_MAX]; /* the text, zero-padded (short names) */
} ice_scan_json_name;

typedef struct ice_scan_json {
    icd_buf *out;
    int depth;
    bool first[ICE_SCAN_JSON_MAX_DEPTH];
    char kind[ICE_SCAN_JSON_MAX_DEPTH];  /* 'o' object, 'a' array, 'm' map, 'v' a bare value */
    char state[ICE_SCAN_JSON_MAX_DEPTH]; /* maps: 0 next is a key, 1 in key, 2 in value */
    /* Called after each row with the row's buffer; may flush it. */
    int (*on_row)(void *ctx, icd_buf *out, icd_error *err);
    void *on_row_ctx;
    /* private: pre-encoded top-level names, in the order rows give them (zero-initialise
     * the struct; ice_scan_json_free releases them); a name pointer passed to field()
     * must keep its text while the writer is in use */
    ice_scan_json_name *names;
    size_t nnames, cap, next_name;
    bool names_oom; /* the table could not grow: names are encoded per value from then on */
    /* private: the columns of the batch being written (ice_row_sink.columns): how each is
     * written, its name's length and text (NULL: through field()) */
    struct ice_scan_json_col {
        int kind;
        int ts_digits; /* timestamps: fraction digits and whether the type is UTC */
        bool ts_utc;
        int copy; /* bytes of the name's slot copied (16, 32 or 63, covering its text);
                   * 0: no name, or one too long for the slot */
        size_t name_len;
        const ice_scan_json_name *name;
    } * plan;
    size_t plan_cap;
} ice_scan_json;

/* Fills `sink` with callbacks writing into j->out. A caller that wraps one of the row
 * callbacks (begin_row, to record positions) must clear sink->columns: whole batches
 * call none of them. */
void ice_scan_json_sink(ice_scan_json *j, ice_row_sink *sink);

/* Starts one bare JSON value outside any row: the next value, struct, list or map
 * callback writes it with no separator before it (how a nested value is rendered alone). */
void ice_scan_json_begin_value(ice_scan_json *j);

/* Frees the writer's name table (not j->out). The struct may be reused after it. */
void ice_scan_json_free(ice_scan_json *j);

#endif
