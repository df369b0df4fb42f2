/*
 * Druid's icebergFilter predicates (dr_pred, see filter.h) as Iceberg expressions
 * (ice_expr), the form the scan planner binds and prunes with.
 */
#ifndef ICD_DRUID_TO_ICEBERG_H
#define ICD_DRUID_TO_ICEBERG_H

#include "base/arena.h"
#include "base/error.h"
#include "druid/spec/filter.h"
#include "iceberg/expr.h"

/* Converts `p` into an unbound expression allocated in `a`. Interval / timeWindow bounds
 * become ICE_VALUE_TIMESTAMP_MICROS, equals values strings, range bounds by their JSON
 * kind (integer -> long, real -> double, string, boolean). */
int dr_pred_to_ice_expr(const dr_pred *p, icd_arena *a, const ice_expr **out, icd_error *err);

/* Parses an icebergFilter JSON object and converts it: the whole path from a filter file
 * to an expression (`now_ms` is timeWindow's default baseTime). */
int dr_filter_json_to_ice_expr(const json_t *v, const char *path, int64_t now_ms, icd_arena *a,
                               const ice_expr **out, icd_error *err);

#endif
