/*
 * The spec's input columns checked against the table's schema before any row is read
 * (spec_columns.c): the timestampSpec column, the dimensions, the metrics' input fields and
 * the transformSpec filter's columns must each be a top-level column of the schema (or the
 * output of a transform). Without this check a misspelt timestamp column is only found row
 * by row ("Timestamp[null] is unparseable") and a run with a large maxParseExceptions
 * succeeds with 0 rows.
 */
#ifndef ICD_DRUID_SPEC_COLUMNS_H
#define ICD_DRUID_SPEC_COLUMNS_H

#include "base/error.h"
#include "druid/spec/spec.h"
#include "iceberg/schema.h"

/* 0, or ICD_EINVALID naming the first column that is not in `schema`: "timestampSpec column
 * 'x' is not a column of the table (columns: a, b, c)". A timestamp column with a
 * missingValue may be absent (Druid fills __time with it). */
int dr_spec_check_columns(const dr_spec *spec, const ice_schema *schema, icd_error *err);

#endif
