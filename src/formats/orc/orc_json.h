/*
 * ORC batch values as JSON (design.md §3 conventions), through src/base/jsonw.h: used by
 * `icedruid cat FILE.orc` and available to the Iceberg row writers.
 */
#ifndef ICD_ORC_JSON_H
#define ICD_ORC_JSON_H

#include "base/buf.h"
#include "formats/orc/orc.h"

/* Entry i of v. `ts_digits` (3, 6 or 9) is the fraction width of timestamps; ORC carries
 * nanoseconds, so `cat` uses 9. TIMESTAMP_INSTANT values get "+00:00". */
void orc_json_value(icd_buf *b, const orc_vec *v, size_t i, int ts_digits);

/* Row `row` of a batch as one JSON object keyed by the selected columns' names. */
void orc_json_row(icd_buf *b, const orc_batch *batch, size_t row, int ts_digits);

#endif
