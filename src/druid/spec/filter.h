/*
 * The `icebergFilter` of Druid's iceberg input source: parsing with Druid's validation
 * and messages into a typed tree (dr_filter), and conversion into a neutral predicate tree
 * (dr_pred) that the scan planner binds to the table schema and uses to prune files.
 *
 * Filter types (polymorphic key "type"):
 *   equals     {filterColumn, filterValue}            col == "value" (a string literal)
 *   interval   {filterColumn, intervals: [ISO, ...]}  OR of (col >= start AND col < end)
 *   range      {filterColumn, lower?, upper?, lowerOpen=false, upperOpen=false}
 *   and / or   {filters: [...]}                       nested and/or children are flattened
 *                                                      and structural duplicates removed
 *   not        {filter}
 *   timeWindow {filterColumn, lookbackDuration=P1D, lookaheadDuration=0, baseTime=now}
 *              col >= base - lookback AND col <= base + lookahead (both inclusive)
 * Interval and timeWindow bounds become timestamptz microseconds, like Druid's
 * Literal.of(...).to(TimestampType.withZone()).
 */
#ifndef ICD_DRUID_FILTER_H
#define ICD_DRUID_FILTER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "druid/spec/period.h"

typedef enum dr_filter_type {
    DR_F_EQUALS,
    DR_F_INTERVAL,
    DR_F_RANGE,
    DR_F_AND,
    DR_F_OR,
    DR_F_NOT,
    DR_F_TIME_WINDOW
} dr_filter_type;

typedef struct dr_filter dr_filter;
struct dr_filter {
    dr_filter_type type;
    char *column;           /* every type but and/or/not */
    char *value;            /* equals */
    dr_interval *intervals; /* interval: millis, [start, end) */
    size_t n_intervals;
    json_t *lower, *upper; /* range: JSON scalars (string/number/bool) or NULL */
    bool lower_open, upper_open;
    dr_filter **children; /* and/or: flattened, de-duplicated; not: one child */
    size_t n_children;
    int64_t lookback_ms; /* timeWindow */
    int64_t lookahead_ms;
    int64_t base_ms; /* baseTime, or the injected "now" */
    bool base_given;
};

/* Parses `v` (an icebergFilter object). `path` names it in messages (e.g.
 * "spec.ioConfig.inputSource.icebergFilter"); `now_ms` is the default timeWindow baseTime.
 * Errors are ICD_EINVALID "PATH: message" with Druid's wording. */
int dr_filter_parse(dr_filter **out, const json_t *v, const char *path, int64_t now_ms,
                    icd_error *err);
void dr_filter_free(dr_filter *f);
/* Structural equality (used to drop duplicate and/or children). */
bool dr_filter_equal(const dr_filter *a, const dr_filter *b);
const char *dr_filter_type_name(dr_filter_type t);

/* ---- neutral predicate tree --------------------------------------------------------- */

typedef enum dr_pred_op {
    DR_P_TRUE,
    DR_P_FALSE,
    DR_P_EQ,
    DR_P_LT,
    DR_P_LE,
    DR_P_GT,
    DR_P_GE,
    DR_P_AND,
    DR_P_OR,
    DR_P_NOT
} dr_pred_op;

typedef struct dr_pred dr_pred;
struct dr_pred {
    dr_pred_op op;
    /* comparisons */
    char *column;
    json_t *literal;   /* a JSON scalar, converted to the column type when bound ... */
    bool is_ts;        /* ... or a timestamptz literal: */
    int64_t ts_micros; /* microseconds since the epoch (UTC) */
    /* and / or (2+ args), not (1 arg) */
    dr_pred **args;
    size_t n_args;
};

/* Converts a filter into predicates, folding constants as Iceberg's Expressions do
 * (and(true, x) = x, or(false, x) = x, not(not x) = x, ...). A NULL filter gives TRUE. */
int dr_filter_to_pred(const dr_filter *f, dr_pred **out, icd_error *err);
void dr_pred_free(dr_pred *p);
const char *dr_pred_op_name(dr_pred_op op);
/* A compact JSON rendering, e.g. {"op":"ge","column":"ts","timestamp_micros":1}. */
void dr_pred_to_json(const dr_pred *p, icd_buf *b);

#endif
