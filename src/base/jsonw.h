/*
 * JSON value writers: the one place that turns typed values into JSON text, following
 * design.md §3 (used by `cat`, `scan`, `read`, `inspect`). All append to an icd_buf.
 */
#ifndef ICD_BASE_JSONW_H
#define ICD_BASE_JSONW_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"

/* A JSON string; invalid UTF-8 bytes become \ufffd, control characters are escaped. */
void icd_json_str(icd_buf *b, const char *s, size_t n);
static inline void icd_json_cstr(icd_buf *b, const char *s)
{
    icd_json_str(b, s, strlen(s));
}
/* Standard base64 (padded), quoted. */
void icd_json_base64(icd_buf *b, const uint8_t *p, size_t n);
void icd_base64_raw(icd_buf *b, const uint8_t *p, size_t n);

void icd_json_i64(icd_buf *b, int64_t v);
void icd_json_u64(icd_buf *b, uint64_t v);
/* Shortest text that reads back as the same double / float; NaN and infinities as the
 * strings "NaN", "Infinity", "-Infinity". */
void icd_json_double(icd_buf *b, double v);
void icd_json_float(icd_buf *b, float v);

/* Decimals as strings with exactly `scale` fraction digits (no point when scale is 0). */
void icd_json_decimal_i64(icd_buf *b, int64_t unscaled, int scale);
/* Unscaled value as big-endian two's complement bytes of any length. */
void icd_json_decimal_be(icd_buf *b, const uint8_t *be, size_t n, int scale);
/* Unquoted forms, for callers that build a larger string. */
void icd_fmt_decimal_i64(icd_buf *b, int64_t unscaled, int scale);
void icd_fmt_decimal_be(icd_buf *b, const uint8_t *be, size_t n, int scale);

/* Dates and times, unquoted. Years outside 0000..9999 use ISO 8601's expanded form
 * (sign and at least four digits). `digits` is the fraction width: 0, 3, 6 or 9. */
void icd_fmt_date(icd_buf *b, int64_t days);
void icd_fmt_time(icd_buf *b, int64_t nanos_of_day, int digits);
void icd_fmt_timestamp(icd_buf *b, int64_t days, int64_t nanos_of_day, int digits, bool utc);

/* Quoted forms. `unit_digits` gives the unit of v: 3 = millis, 6 = micros, 9 = nanos. */
void icd_json_date(icd_buf *b, int64_t days);
void icd_json_time(icd_buf *b, int64_t v, int unit_digits);
void icd_json_timestamp(icd_buf *b, int64_t v, int unit_digits, bool utc);
void icd_json_uuid(icd_buf *b, const uint8_t uuid[16]);

#endif
