/*
 * JSON value writers: the one place that turns typed values into JSON text, following
 * design.md §3 (used by `cat`, `scan`, `read`, `inspect`). All append to an icd_buf.
 */
#ifndef ICD_BASE_JSONW_H
#define ICD_BASE_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/error.h"

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
/* The digits of v (with a '-' when negative) at p, which has room for ICD_JSON_I64_MAX
 * bytes; returns the end. No NUL: for writers that make room for several values at once. */
#define ICD_JSON_I64_MAX 21
char *icd_json_i64_at(char *p, int64_t v);
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

/* A bounded buffered JSON stream: the writers above append to `buf`, and the producer
 * calls icd_jsonw_maybe_flush between values (e.g. after each task of a plan), which
 * hands the text to the sink once ICD_JSONW_CHUNK bytes are buffered. Memory is the
 * chunk plus one value, whatever the length of the whole document. Without a sink the
 * text stays in `buf` (callers that want the whole document as a string, tests). */
#define ICD_JSONW_CHUNK (256u << 10)
typedef struct icd_jsonw {
    icd_buf buf;
    /* Writes n bytes; false on failure (the stream then drops further text). */
    bool (*sink)(void *ctx, const char *p, size_t n);
    void *ctx;
    bool failed;
} icd_jsonw;
void icd_jsonw_init(icd_jsonw *w, bool (*sink)(void *ctx, const char *p, size_t n), void *ctx);
/* A stream into a stdio FILE (not closed; flushed by icd_jsonw_finish). */
void icd_jsonw_init_file(icd_jsonw *w, FILE *fp);
/* Hands the buffered text to the sink (no-op without one). */
void icd_jsonw_flush(icd_jsonw *w);
static inline void icd_jsonw_maybe_flush(icd_jsonw *w)
{
    if (w->buf.len >= ICD_JSONW_CHUNK) icd_jsonw_flush(w);
}
/* Flushes the rest (and the FILE of icd_jsonw_init_file) and frees the buffer of a stream
 * with a sink; 0, ICD_ENOMEM when an append failed, ICD_EIO when the sink failed. */
int icd_jsonw_finish(icd_jsonw *w, icd_error *err);

#endif
