/*
 * ice_literal: one typed Iceberg value. Used for column defaults (initial-default /
 * write-default), and by the layers above for manifest bounds, partition tuples and filter
 * constants. Comparison follows each type's Iceberg ordering; conversions implement the
 * legal type promotions (int->long, float->double, decimal widening, date->timestamp).
 *
 * A literal does not own memory: byte values (string, binary, fixed, uuid, decimal) and
 * nested values point into an arena or a buffer that outlives it.
 */
#ifndef ICD_ICEBERG_LITERAL_H
#define ICD_ICEBERG_LITERAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "iceberg/types.h"

struct json_t;

/* Signed 128-bit integer for decimal arithmetic (precision <= 38 fits). */
__extension__ typedef __int128 ice_i128;

struct ice_literal {
    ice_type_kind kind;
    bool is_null;
    int32_t scale; /* decimal only */
    union {
        bool b;      /* boolean */
        int32_t i32; /* int, date (days since 1970-01-01) */
        int64_t
            i64; /* long, time (micros of day), timestamp[tz] (micros), timestamp[tz]_ns (nanos) */
        float f32;  /* float */
        double f64; /* double */
        /* string (UTF-8), binary, fixed, uuid (16 bytes, big-endian), decimal (unscaled value as
         * big-endian two's complement, any length 1..16) */
        struct {
            const uint8_t *ptr;
            size_t len;
        } bytes;
        /* struct: n values with their field ids; list: n items; map: n keys then n values */
        struct {
            const ice_literal *items;
            const int32_t *ids;
            size_t n;
        } nested;
    } v;
};

/* Constructors. */
static inline ice_literal ice_lit_null(ice_type_kind k)
{
    ice_literal l = {0};
    l.kind = k;
    l.is_null = true;
    return l;
}
static inline ice_literal ice_lit_bool(bool b)
{
    ice_literal l = {0};
    l.kind = ICE_T_BOOLEAN;
    l.v.b = b;
    return l;
}
static inline ice_literal ice_lit_i32(ice_type_kind k, int32_t v)
{
    ice_literal l = {0};
    l.kind = k;
    l.v.i32 = v;
    return l;
}
static inline ice_literal ice_lit_i64(ice_type_kind k, int64_t v)
{
    ice_literal l = {0};
    l.kind = k;
    l.v.i64 = v;
    return l;
}
static inline ice_literal ice_lit_int(int32_t v)
{
    return ice_lit_i32(ICE_T_INT, v);
}
static inline ice_literal ice_lit_long(int64_t v)
{
    return ice_lit_i64(ICE_T_LONG, v);
}
static inline ice_literal ice_lit_date(int32_t days)
{
    return ice_lit_i32(ICE_T_DATE, days);
}
static inline ice_literal ice_lit_float(float v)
{
    ice_literal l = {0};
    l.kind = ICE_T_FLOAT;
    l.v.f32 = v;
    return l;
}
static inline ice_literal ice_lit_double(double v)
{
    ice_literal l = {0};
    l.kind = ICE_T_DOUBLE;
    l.v.f64 = v;
    return l;
}
static inline ice_literal ice_lit_bytes(ice_type_kind k, const void *p, size_t n)
{
    ice_literal l = {0};
    l.kind = k;
    l.v.bytes.ptr = (const uint8_t *)p;
    l.v.bytes.len = n;
    return l;
}
static inline ice_literal ice_lit_string(const char *s, size_t n)
{
    return ice_lit_bytes(ICE_T_STRING, s, n);
}
static inline ice_literal ice_lit_decimal(const uint8_t *be, size_t n, int32_t scale)
{
    ice_literal l = ice_lit_bytes(ICE_T_DECIMAL, be, n);
    l.scale = scale;
    return l;
}

/* Parses a value in the JSON single-value serialization (spec Appendix D) as type `t`:
 * booleans, numbers, decimals as strings ("14.20", "2E+20"), dates "YYYY-MM-DD", times
 * and timestamps as ISO strings, uuids as strings, fixed/binary as hex, structs as
 * objects keyed by field id, lists as arrays, maps as {"keys":[..],"values":[..]}. JSON
 * null gives a null literal. Bytes and nested values are allocated in `arena`. Errors are
 * ICD_ECORRUPT with a message naming the type and value (no file: callers add it). */
int ice_literal_from_json(const struct json_t *j, const ice_type *t, icd_arena *arena,
                          ice_literal *out, icd_error *err);

/* True when ice_literal_cmp can order a and b: same kind, or int/long, int/date,
 * float/double, decimal/decimal mixes. Nested literals are not comparable. */
bool ice_literal_comparable(const ice_literal *a, const ice_literal *b);

/* Orders two comparable literals: <0, 0, >0. Null sorts before every value. Integers
 * compare signed; floats by IEEE totalOrder (-NaN < -Inf < -x < -0 < 0 < x < Inf < NaN,
 * all NaNs of one sign equal); strings, binary, fixed and uuid by unsigned bytes;
 * decimals by numeric value (scales may differ). */
int ice_literal_cmp(const ice_literal *a, const ice_literal *b);

/* Converts a value to a wider type along a legal promotion: int->long, float->double,
 * decimal(P,S)->decimal(P',S), date->timestamp / timestamp_ns, or same kind. Anything
 * else is ICD_EINVALID. */
int ice_literal_promote(const ice_literal *in, const ice_type *target, ice_literal *out,
                        icd_error *err);

/* Appends the value as JSON in the conventions of design.md §3 (decimals as strings with
 * `scale` digits, dates/times as ISO strings, binary as base64, uuid canonical, structs as
 * objects keyed by field id, maps as arrays of {"key","value"}). */
void ice_literal_to_json(icd_buf *b, const ice_literal *l);
/* Appends the value in the spec's JSON single-value serialization (Appendix D), the form
 * ice_literal_from_json reads: as above but fixed/binary as hex strings and maps as
 * {"keys":[..],"values":[..]}. */
void ice_literal_to_single_value_json(icd_buf *b, const ice_literal *l);

/* Decimal helpers: the unscaled big-endian two's complement bytes <-> a 128-bit value.
 * ice_decimal_to_i128 fails when the value does not fit 128 bits. ice_decimal_from_i128
 * writes the minimal big-endian form (1..16 bytes) to `out` and returns its length. */
bool ice_decimal_to_i128(const uint8_t *be, size_t n, ice_i128 *out);
size_t ice_decimal_from_i128(ice_i128 v, uint8_t out[16]);
/* Parses decimal text ("-12.340", "2E+20") to an unscaled value at `scale`; fails when the
 * text is malformed, has more fraction digits than `scale` (non-zero ones), or has more
 * than `precision` digits (precision <= 0: no limit beyond 38). */
bool ice_decimal_parse(const char *s, size_t n, int32_t precision, int32_t scale, ice_i128 *out);

/* ISO-8601 text parsers (also used for --as-of). Return false when malformed.
 * Date: [+-]YYYY-MM-DD. Time: HH:MM[:SS[.fraction]] -> nanoseconds of day.
 * Timestamp: date ('T' or ' ') time [Z | +HH:MM | -HH:MM | +HHMM]; the value is returned in
 * units of 10^-unit_digits seconds (3 = ms, 6 = micros, 9 = nanos), adjusted to UTC when a
 * zone is given (*has_zone tells). Extra fraction digits are truncated toward -infinity. */
bool ice_parse_date(const char *s, size_t n, int32_t *days);
bool ice_parse_time(const char *s, size_t n, int64_t *nanos_of_day);
bool ice_parse_timestamp(const char *s, size_t n, int unit_digits, bool *has_zone, int64_t *out);

#endif
