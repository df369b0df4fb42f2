/*
 * Typed values (see tvalue.h): Parquet physical values and Iceberg literals converted to
 * the Iceberg type of their column, and their emission to a row sink.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

#include "iceberg/tvalue.h"

static int64_t floordiv64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

bool ice_int96_to_time(const pq_int96 *v, int digits, int64_t *out)
{
    uint64_t nanos_u;
    uint32_t julian;
    memcpy(&nanos_u, v->b, 8);
    memcpy(&julian, v->b + 8, 4);
    /* nanos of day as written (Spark: 0 .. 86399999999999; anything else is taken as an
     * offset from the day's start, as Spark and Arrow read it) */
    int64_t nanos = (int64_t)nanos_u;
    int64_t days = (int64_t)julian - 2440588; /* Julian day of 1970-01-01 */
    int64_t per_day = digits == 9 ? 86400000000000LL : 86400000000LL;
    int64_t frac = digits == 9 ? nanos : floordiv64(nanos, 1000); /* exact: a day is whole */
    int64_t whole;
    if (__builtin_mul_overflow(days, per_day, &whole) || __builtin_add_overflow(whole, frac, out))
        return false;
    return true;
}

/* A Parquet timestamp value (INT96; INT64 in its unit, micros when unannotated; INT32 a
 * date promoted to timestamp) in `digits` fraction digits; false when the result lies
 * outside int64 (scaling up or INT96 can overflow; scaling down cannot). */
static bool parquet_ts(const pq_node *leaf, const void *vals, size_t vi, int digits, int64_t *out)
{
    int pt = leaf->physical_type;
    if (pt == PQ_INT96) return ice_int96_to_time(&((const pq_int96 *)vals)[vi], digits, out);
    if (pt == PQ_INT32) /* date promoted to timestamp */
        return !__builtin_mul_overflow((int64_t)((const int32_t *)vals)[vi],
                                       86400 * (digits == 9 ? 1000000000LL : 1000000LL), out);
    int64_t v = ((const int64_t *)vals)[vi];
    int unit = leaf->eff.kind == PQ_LT_TIMESTAMP ? leaf->eff.unit : PQ_UNIT_MICROS;
    int from = unit == PQ_UNIT_MILLIS ? 3 : unit == PQ_UNIT_NANOS ? 9 : 6;
    if (from < digits) {
        int64_t m = from == 3 && digits == 9 ? 1000000 : 1000;
        return !__builtin_mul_overflow(v, m, out);
    }
    *out = ice_rescale_time(v, unit, digits);
    return true;
}

int ice_time_value_range_error(icd_error *err, const char *file, const char *column, int64_t row,
                               const ice_type *t, const char *what)
{
    bool ns = ice_ts_digits(t->kind) == 9;
    char where[64] = "";
    if (row >= 0) snprintf(where, sizeof where, ", row %" PRId64, row);
    return icd_fail(err, ICD_EUNSUPPORTED, file, -1,
                    "column %s%s: %s is outside the range of Iceberg type %s (int64 %s: %s)",
                    column, where, what, ice_type_kind_name(t->kind),
                    ns ? "nanoseconds" : "microseconds",
                    ns ? "years 1677 to 2262" : "about 290,000 years either side of 1970");
}

int ice_time_range_error(icd_error *err, const char *file, const char *column, int64_t row,
                         const ice_type *t, const pq_node *leaf, const pq_column_batch *cb,
                         size_t vi)
{
    char what[96];
    if (leaf->physical_type == PQ_INT96) {
        uint32_t julian;
        memcpy(&julian, ((const pq_int96 *)cb->values)[vi].b + 8, 4);
        snprintf(what, sizeof what, "INT96 timestamp (Julian day %" PRIu32 ")", julian);
    } else if (leaf->physical_type == PQ_INT32) {
        snprintf(what, sizeof what, "date %" PRId32 " (days)", ((const int32_t *)cb->values)[vi]);
    } else {
        int unit = leaf->eff.kind == PQ_LT_TIMESTAMP ? leaf->eff.unit : PQ_UNIT_MICROS;
        snprintf(what, sizeof what, "timestamp %" PRId64 " (%s)", ((const int64_t *)cb->values)[vi],
                 unit == PQ_UNIT_MILLIS ? "milliseconds" : "microseconds");
    }
    return ice_time_value_range_error(err, file, column, row, t, what);
}

bool ice_typed_value_in_range(const ice_type *t, const pq_node *leaf, const pq_column_batch *cb,
                              size_t vi)
{
    if (!ice_type_kind_is_timestamp(t->kind)) return true;
    int pt = leaf->physical_type;
    /* only these can overflow: INT96, a date, or a unit scaled up */
    if (pt == PQ_INT64 && ice_ts_digits(t->kind) == 6 &&
        !(leaf->eff.kind == PQ_LT_TIMESTAMP && leaf->eff.unit == PQ_UNIT_MILLIS))
        return true;
    int64_t x;
    return parquet_ts(leaf, cb->values, vi, ice_ts_digits(t->kind), &x);
}

int ice_typed_value_checked(const ice_type *t, const pq_node *leaf, const pq_column_batch *cb,
                            size_t vi, const char *file, const char *column, int64_t row,
                            ice_tvalue *out, icd_error *err)
{
    if (!ice_typed_value_in_range(t, leaf, cb, vi))
        return ice_time_range_error(err, file, column, row, t, leaf, cb, vi);
    *out = ice_typed_value(t, leaf, cb, vi);
    return 0;
}

/* Scale of a time value with the Parquet unit, to micros (6) or nanos (9). */
int64_t ice_rescale_time(int64_t v, int unit, int target_digits)
{
    int from = unit == PQ_UNIT_MILLIS ? 3 : unit == PQ_UNIT_NANOS ? 9 : 6;
    if (from == target_digits) return v;
    if (from < target_digits) {
        int64_t m = from == 3 && target_digits == 9 ? 1000000 : 1000;
        return v * m;
    }
    int64_t d = from == 9 && target_digits == 3 ? 1000000 : 1000;
    return floordiv64(v, d);
}

bool ice_is_utc_type(ice_type_kind k)
{
    return k == ICE_T_TIMESTAMPTZ || k == ICE_T_TIMESTAMPTZ_NS;
}

int ice_ts_digits(ice_type_kind k)
{
    return (k == ICE_T_TIMESTAMP_NS || k == ICE_T_TIMESTAMPTZ_NS) ? 9 : 6;
}

/* Can a Parquet leaf be read as Iceberg type t? */
bool ice_leaf_readable_as(const pq_node *leaf, const ice_type *t)
{
    int pt = leaf->physical_type;
    int lk = leaf->eff.kind;
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        return pt == PQ_BOOLEAN;
    case ICE_T_INT:
        return pt == PQ_INT32;
    case ICE_T_LONG:
        return pt == PQ_INT32 || pt == PQ_INT64;
    case ICE_T_FLOAT:
        return pt == PQ_FLOAT;
    case ICE_T_DOUBLE:
        return pt == PQ_FLOAT || pt == PQ_DOUBLE;
    case ICE_T_DECIMAL:
        return pt == PQ_INT32 || pt == PQ_INT64 || pt == PQ_BYTE_ARRAY ||
               pt == PQ_FIXED_LEN_BYTE_ARRAY;
    case ICE_T_DATE:
        return pt == PQ_INT32;
    case ICE_T_TIME:
        return pt == PQ_INT32 || pt == PQ_INT64;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        return pt == PQ_INT64 || pt == PQ_INT96 || (pt == PQ_INT32 && lk == PQ_LT_DATE);
    case ICE_T_STRING:
        return pt == PQ_BYTE_ARRAY || pt == PQ_FIXED_LEN_BYTE_ARRAY;
    case ICE_T_UUID:
        return pt == PQ_FIXED_LEN_BYTE_ARRAY && leaf->type_length == 16;
    case ICE_T_FIXED:
    case ICE_T_BINARY:
        return pt == PQ_BYTE_ARRAY || pt == PQ_FIXED_LEN_BYTE_ARRAY;
    default:
        return false;
    }
}

/* Value vi (an index into the dense non-null values) of a column batch, as type t. */
ice_tvalue ice_typed_value(const ice_type *t, const pq_node *leaf, const pq_column_batch *cb,
                           size_t vi)
{
    ice_tvalue v = {0};
    const void *vals = cb->values;
    int pt = leaf->physical_type;
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        v.cls = ICE_TV_BOOL;
        v.i = ((const uint8_t *)vals)[vi];
        return v;
    case ICE_T_INT:
    case ICE_T_LONG: /* built in one go: the hottest case (keys, ids) avoids a store-forwarding
                        stall */
        return (ice_tvalue){.cls = ICE_TV_INT,
                            .i = pt == PQ_INT32 ? ((const int32_t *)vals)[vi]
                                                : ((const int64_t *)vals)[vi]};
    case ICE_T_FLOAT:
        v.cls = ICE_TV_FLOAT;
        v.f = ((const float *)vals)[vi];
        return v;
    case ICE_T_DOUBLE:
        v.cls = ICE_TV_DOUBLE;
        v.d = pt == PQ_FLOAT ? (double)((const float *)vals)[vi] : ((const double *)vals)[vi];
        return v;
    case ICE_T_DECIMAL:
        if (pt == PQ_INT32 || pt == PQ_INT64) {
            v.cls = ICE_TV_DEC64;
            v.i = pt == PQ_INT32 ? ((const int32_t *)vals)[vi] : ((const int64_t *)vals)[vi];
        } else {
            v.cls = ICE_TV_DECBE;
            v.p = ((const pq_bytes *)vals)[vi].ptr;
            v.n = ((const pq_bytes *)vals)[vi].len;
        }
        return v;
    case ICE_T_DATE:
        v.cls = ICE_TV_DATE;
        v.i = ((const int32_t *)vals)[vi];
        return v;
    case ICE_T_TIME:
        v.cls = ICE_TV_TIME;
        v.i = pt == PQ_INT32 ? (int64_t)((const int32_t *)vals)[vi] * 1000
                             : ice_rescale_time(((const int64_t *)vals)[vi], leaf->eff.unit, 6);
        return v;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        int digits = ice_ts_digits(t->kind);
        v.cls = ICE_TV_TS;
        /* callers check ice_typed_value_in_range first (0 would be wrong, not wrapped) */
        if (!parquet_ts(leaf, vals, vi, digits, &v.i)) v.i = 0;
        if (pt == PQ_INT96) { /* the stored 12 bytes, for sinks that read INT96 their way */
            v.p = ((const pq_int96 *)vals)[vi].b;
            v.n = sizeof(pq_int96);
        }
        return v;
    }
    case ICE_T_STRING:
    case ICE_T_UUID:
    case ICE_T_FIXED:
    case ICE_T_BINARY:
        return (ice_tvalue){.cls = t->kind == ICE_T_STRING ? ICE_TV_STRING
                                   : t->kind == ICE_T_UUID ? ICE_TV_UUID
                                                           : ICE_TV_BINARY,
                            .p = ((const pq_bytes *)vals)[vi].ptr,
                            .n = ((const pq_bytes *)vals)[vi].len};
    default:
        return v;
    }
}

/* out[i] = VALUE, an expression of vi (row i's index among the dense values), for each
 * row with a value; a null for the others. */
#define FILL_ROWS(VALUE)                                                                           \
    for (size_t i = 0; i < n; i++) {                                                               \
        if (vidx[i] < 0) {                                                                         \
            out[i] = (ice_tvalue){0};                                                              \
            continue;                                                                              \
        }                                                                                          \
        size_t vi = (size_t)vidx[i];                                                               \
        out[i] = VALUE;                                                                            \
    }

int ice_typed_values(const ice_type *t, const pq_node *leaf, const pq_column_batch *cb,
                     const int32_t *vidx, size_t n, ice_tvalue *out)
{
    const void *vals = cb->values;
    int pt = leaf->physical_type;
    switch (t->kind) { /* the common stored forms: one loop each, no conversion call */
    case ICE_T_INT:
    case ICE_T_LONG:
        if (pt == PQ_INT64)
            FILL_ROWS(((ice_tvalue){.cls = ICE_TV_INT, .i = ((const int64_t *)vals)[vi]}))
        else
            FILL_ROWS(((ice_tvalue){.cls = ICE_TV_INT, .i = ((const int32_t *)vals)[vi]}))
        return 0;
    case ICE_T_STRING:
        FILL_ROWS(((ice_tvalue){.cls = ICE_TV_STRING,
                                .p = ((const pq_bytes *)vals)[vi].ptr,
                                .n = ((const pq_bytes *)vals)[vi].len}))
        return 0;
    case ICE_T_DOUBLE:
        if (pt != PQ_DOUBLE) break;
        FILL_ROWS(((ice_tvalue){.cls = ICE_TV_DOUBLE, .d = ((const double *)vals)[vi]}))
        return 0;
    case ICE_T_DATE:
        FILL_ROWS(((ice_tvalue){.cls = ICE_TV_DATE, .i = ((const int32_t *)vals)[vi]}))
        return 0;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        int unit = leaf->eff.kind == PQ_LT_TIMESTAMP ? leaf->eff.unit : PQ_UNIT_MICROS;
        int digits = unit == PQ_UNIT_NANOS ? 9 : unit == PQ_UNIT_MICROS ? 6 : 3;
        if (pt == PQ_INT64 && digits == ice_ts_digits(t->kind)) { /* the value as stored */
            FILL_ROWS(((ice_tvalue){.cls = ICE_TV_TS, .i = ((const int64_t *)vals)[vi]}))
            return 0;
        }
        int bad = 0; /* INT96, a date, or a unit scaled up: may not fit */
        for (size_t i = 0; i < n; i++) {
            if (vidx[i] < 0) {
                out[i] = (ice_tvalue){0};
            } else if (ice_typed_value_in_range(t, leaf, cb, (size_t)vidx[i])) {
                out[i] = ice_typed_value(t, leaf, cb, (size_t)vidx[i]);
            } else {
                ice_tv_mark_out_of_range(&out[i]);
                bad = 1;
            }
        }
        return bad;
    }
    default:
        break;
    }
    FILL_ROWS(ice_typed_value(t, leaf, cb, vi))
    return 0;
}

#undef FILL_ROWS

/* A literal (constant column, partition value, default) as a typed value. */
ice_tvalue ice_literal_tvalue(const ice_literal *l, const ice_type *t)
{
    ice_tvalue v = {0};
    if (!l || l->is_null) return v;
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        v.cls = ICE_TV_BOOL;
        v.i = l->v.b;
        break;
    case ICE_T_INT:
    case ICE_T_LONG:
        v.cls = ICE_TV_INT;
        v.i = (l->kind == ICE_T_INT || l->kind == ICE_T_DATE) ? l->v.i32 : l->v.i64;
        break;
    case ICE_T_FLOAT:
        v.cls = ICE_TV_FLOAT;
        v.f = l->v.f32;
        break;
    case ICE_T_DOUBLE:
        v.cls = ICE_TV_DOUBLE;
        v.d = l->kind == ICE_T_FLOAT ? (double)l->v.f32 : l->v.f64;
        break;
    case ICE_T_DECIMAL:
        v.cls = ICE_TV_DECBE;
        v.p = l->v.bytes.ptr;
        v.n = l->v.bytes.len;
        break;
    case ICE_T_DATE:
        v.cls = ICE_TV_DATE;
        v.i = l->v.i32;
        break;
    case ICE_T_TIME:
        v.cls = ICE_TV_TIME;
        v.i = l->v.i64;
        break;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        v.cls = ICE_TV_TS;
        if (l->kind == ICE_T_DATE)
            v.i = (int64_t)l->v.i32 * 86400 *
                  (ice_ts_digits(t->kind) == 9 ? 1000000000LL : 1000000LL);
        else if (ice_ts_digits(t->kind) == 9 &&
                 (l->kind == ICE_T_TIMESTAMP || l->kind == ICE_T_TIMESTAMPTZ))
            v.i = l->v.i64 * 1000;
        else
            v.i = l->v.i64;
        break;
    case ICE_T_STRING:
        v.cls = ICE_TV_STRING;
        v.p = l->v.bytes.ptr;
        v.n = l->v.bytes.len;
        break;
    case ICE_T_UUID:
        v.cls = ICE_TV_UUID;
        v.p = l->v.bytes.ptr;
        v.n = l->v.bytes.len;
        break;
    default:
        v.cls = ICE_TV_BINARY;
        v.p = l->v.bytes.ptr;
        v.n = l->v.bytes.len;
        break;
    }
    return v;
}

void ice_emit_tvalue(const ice_row_sink *s, const ice_tvalue *v, const ice_type *t)
{
    void *c = s->ctx;
    switch (v->cls) {
    case ICE_TV_NULL:
        s->null_value(c);
        return;
    case ICE_TV_BOOL:
        s->boolean(c, v->i != 0);
        return;
    case ICE_TV_INT:
        s->i64(c, v->i);
        return;
    case ICE_TV_FLOAT:
        s->f32(c, v->f);
        return;
    case ICE_TV_DOUBLE:
        s->f64(c, v->d);
        return;
    case ICE_TV_DEC64:
        s->decimal_i64(c, v->i, t->scale);
        return;
    case ICE_TV_DECBE:
        s->decimal_be(c, v->p, v->n, t->scale);
        return;
    case ICE_TV_DATE:
        s->date(c, (int32_t)v->i);
        return;
    case ICE_TV_TIME:
        s->time(c, v->i);
        return;
    case ICE_TV_TS:
        if (v->p && v->n == sizeof(pq_int96) && s->timestamp_int96) {
            int64_t nanos;
            int32_t julian;
            memcpy(&nanos, v->p, 8); /* little endian, as Parquet stores it */
            memcpy(&julian, v->p + 8, 4);
            s->timestamp_int96(c, v->i, ice_ts_digits(t->kind), ice_is_utc_type(t->kind), julian,
                               nanos);
            return;
        }
        s->timestamp(c, v->i, ice_ts_digits(t->kind), ice_is_utc_type(t->kind));
        return;
    case ICE_TV_STRING:
        s->string(c, (const char *)v->p, v->n);
        return;
    case ICE_TV_UUID:
        if (v->n == 16)
            s->uuid(c, v->p);
        else
            s->binary(c, v->p, v->n);
        return;
    case ICE_TV_BINARY:
        s->binary(c, v->p, v->n);
        return;
    }
}

static void emit_nested_literal(const ice_row_sink *s, const ice_literal *l, const ice_type *t)
{
    void *c = s->ctx;
    if (t->kind == ICE_T_STRUCT) {
        s->struct_begin(c);
        for (size_t i = 0; i < t->nfields; i++) {
            const ice_field *f = &t->fields[i];
            const ice_literal *v = NULL;
            for (size_t k = 0; k < l->v.nested.n; k++)
                if (l->v.nested.ids && l->v.nested.ids[k] == f->id) v = &l->v.nested.items[k];
            if (!v) v = f->initial_default;
            s->field(c, f->name, strlen(f->name));
            ice_emit_literal(s, v, f->type);
        }
        s->struct_end(c);
    } else if (t->kind == ICE_T_LIST) {
        s->list_begin(c);
        for (size_t k = 0; k < l->v.nested.n; k++)
            ice_emit_literal(s, &l->v.nested.items[k], t->element->type);
        s->list_end(c);
    } else {
        s->map_begin(c);
        size_t n = l->v.nested.n;
        for (size_t k = 0; k < n; k++) {
            ice_emit_literal(s, &l->v.nested.items[k], t->key->type);
            ice_emit_literal(s, &l->v.nested.items[n + k], t->value->type);
        }
        s->map_end(c);
    }
}

void ice_emit_literal(const ice_row_sink *s, const ice_literal *l, const ice_type *t)
{
    if (!l || l->is_null) {
        s->null_value(s->ctx);
        return;
    }
    if (!ice_type_is_primitive(t)) {
        emit_nested_literal(s, l, t);
        return;
    }
    ice_tvalue v = ice_literal_tvalue(l, t);
    ice_emit_tvalue(s, &v, t);
}
