/*
 * Avro binary decoding (see decode.h): zigzag varints, the fixed-width scalars, and the
 * recursive walk over records, arrays, maps and unions, either building an icd_avro_value tree
 * in an arena or skipping. Every length and count read from the data is checked against
 * the bytes left in the buffer before anything is allocated or read, so corrupt input
 * ends in an error naming the position, never in a wild read or a giant allocation.
 */
#include <stdlib.h>
#include <string.h>

#include "base/varint.h"
#include "base/bits.h"
#include "formats/avro/decode.h"

/* A corrupt-data error at position `at` of the cursor's buffer. */
static int fail_at(icd_error *err, const icd_avro_cursor *c, const uint8_t *at, const char *fmt,
                   ...) ICD_PRINTF(4, 5);

static int fail_at(icd_error *err, const icd_avro_cursor *c, const uint8_t *at, const char *fmt,
                   ...)
{
    va_list ap;
    va_start(ap, fmt);
    icd_failv(err, ICD_ECORRUPT, NULL, (int64_t)(at - c->start), fmt, ap);
    va_end(ap);
    return ICD_ECORRUPT;
}

int icd_avro_read_long(icd_avro_cursor *c, int64_t *out, icd_error *err)
{
    uint64_t v;
    int n = icd_uleb128_decode(c->p, c->end, &v);
    if (n < 0)
        return fail_at(err, c, c->p,
                       n == ICD_VARINT_TRUNCATED
                           ? "truncated: a varint runs past the end of the data"
                           : "varint overflows 64 bits");
    c->p += n;
    *out = icd_unzigzag64(v);
    return 0;
}

int icd_avro_read_int(icd_avro_cursor *c, int32_t *out, icd_error *err)
{
    const uint8_t *at = c->p;
    int64_t v;
    ICD_TRY(icd_avro_read_long(c, &v, err));
    if (v < INT32_MIN || v > INT32_MAX)
        return fail_at(err, c, at, "int value %lld is out of the 32-bit range", (long long)v);
    *out = (int32_t)v;
    return 0;
}

int icd_avro_read_bytes(icd_avro_cursor *c, const uint8_t **p, size_t *n, const char *what,
                        icd_error *err)
{
    const uint8_t *at = c->p;
    int64_t len;
    ICD_TRY(icd_avro_read_long(c, &len, err));
    if (len < 0) return fail_at(err, c, at, "%s has a negative length %lld", what, (long long)len);
    if ((uint64_t)len > icd_avro_cursor_left(c))
        return fail_at(err, c, at, "truncated: %s of %lld bytes but only %zu bytes are left", what,
                       (long long)len, icd_avro_cursor_left(c));
    *p = c->p;
    *n = (size_t)len;
    c->p += len;
    return 0;
}

/* The readers above with their common case inline (a long of one byte, a string whose
 * length fits): the manifest decoders call them for every field of every entry. Anything
 * else goes to the full reader, which fails the same way. */
static inline int read_long_q(icd_avro_cursor *c, int64_t *out, icd_error *err)
{
    if (c->p < c->end && *c->p < 0x80) {
        *out = icd_unzigzag64(*c->p++);
        return 0;
    }
    return icd_avro_read_long(c, out, err);
}

static inline int read_int_q(icd_avro_cursor *c, int32_t *out, icd_error *err)
{
    if (c->p < c->end && *c->p < 0x80) { /* (-64..63: in range) */
        *out = (int32_t)icd_unzigzag64(*c->p++);
        return 0;
    }
    return icd_avro_read_int(c, out, err);
}

static inline int read_bytes_q(icd_avro_cursor *c, const uint8_t **p, size_t *n, const char *what,
                               icd_error *err)
{
    uint64_t v;
    int k = icd_uleb128_decode(c->p, c->end, &v);
    if (k > 0 && !(v & 1) && (v >> 1) <= (uint64_t)(c->end - c->p - k)) {
        *p = c->p + k;
        *n = (size_t)(v >> 1);
        c->p += (size_t)k + (size_t)(v >> 1);
        return 0;
    }
    return icd_avro_read_bytes(c, p, n, what, err);
}

static int need(icd_avro_cursor *c, size_t n, const char *what, icd_error *err)
{
    if (icd_avro_cursor_left(c) < n)
        return fail_at(err, c, c->p, "truncated: %s needs %zu bytes but only %zu are left", what, n,
                       icd_avro_cursor_left(c));
    return 0;
}

static int read_union_branch(const icd_avro_schema *s, icd_avro_cursor *c,
                             const icd_avro_schema **b, int32_t *idx, icd_error *err)
{
    const uint8_t *at = c->p;
    int64_t i;
    ICD_TRY(read_long_q(c, &i, err));
    if (i < 0 || (uint64_t)i >= s->nbranches)
        return fail_at(err, c, at, "union branch index %lld is out of range (the union has %zu)",
                       (long long)i, s->nbranches);
    *idx = (int32_t)i;
    *b = s->branches[i];
    return 0;
}

/* One block header of an array or map: its item count (0 ends the value) and, for a
 * negative count, the byte size that follows. Checks the count against the bytes left
 * (each item needs min_size bytes; items of no size draw on the cursor's budget). */
static int read_block_count(icd_avro_cursor *c, size_t min_size, int64_t *count, int64_t *bytes,
                            icd_error *err)
{
    const uint8_t *at = c->p;
    ICD_TRY(icd_avro_read_long(c, count, err));
    *bytes = -1;
    if (*count < 0) {
        if (*count == INT64_MIN) return fail_at(err, c, at, "array/map block count overflows");
        *count = -*count;
        ICD_TRY(icd_avro_read_long(c, bytes, err));
        if (*bytes < 0 || (uint64_t)*bytes > icd_avro_cursor_left(c))
            return fail_at(err, c, at, "array/map block claims %lld bytes but only %zu are left",
                           (long long)*bytes, icd_avro_cursor_left(c));
    }
    uint64_t n = (uint64_t)*count;
    if (min_size > 0) {
        if (n > icd_avro_cursor_left(c) / min_size)
            return fail_at(err, c, at,
                           "array/map block claims %lld items but only %zu bytes are left",
                           (long long)*count, icd_avro_cursor_left(c));
    } else {
        if (n > c->zero_budget)
            return fail_at(err, c, at,
                           "array/map block claims %lld items that take no bytes (limit %u)",
                           (long long)*count, AVRO_ZERO_SIZE_BUDGET);
        c->zero_budget -= n;
    }
    return 0;
}

/* ---- skipping ---------------------------------------------------------------------- */

static int skip_varint(icd_avro_cursor *c, icd_error *err)
{
    uint64_t v;
    int n = icd_uleb128_decode(c->p, c->end, &v);
    if (n < 0)
        return fail_at(err, c, c->p,
                       n == ICD_VARINT_TRUNCATED
                           ? "truncated: a varint runs past the end of the data"
                           : "varint overflows 64 bits");
    c->p += n;
    return 0;
}

static int skip_rec(const icd_avro_schema *s, icd_avro_cursor *c, int depth, icd_error *err);

/* One step of a flat value (see icd_avro_schema.skip_ops) the careful way: what skip_rec
 * does for that primitive, with its checks and its error messages (AVRO_SKIP_KEY: a map
 * key). */
enum { AVRO_SKIP_KEY = 0 };

static int skip_op_slow(icd_avro_cursor *c, uint8_t op, icd_error *err)
{
    const uint8_t *p;
    size_t n;
    switch (op) {
    case AVRO_SKIP_VARINT:
        return skip_varint(c, err);
    case AVRO_SKIP_KEY:
        return icd_avro_read_bytes(c, &p, &n, "a map key", err);
    case AVRO_SKIP_STRING:
        return icd_avro_read_bytes(c, &p, &n, "a string", err);
    case AVRO_SKIP_BYTES:
        return icd_avro_read_bytes(c, &p, &n, "a bytes value", err);
    case AVRO_SKIP_BOOLEAN:
        ICD_TRY(need(c, 1, "boolean", err));
        c->p += 1;
        return 0;
    case AVRO_SKIP_FLOAT:
        ICD_TRY(need(c, 4, "float", err));
        c->p += 4;
        return 0;
    case AVRO_SKIP_DOUBLE:
        ICD_TRY(need(c, 8, "double", err));
        c->p += 8;
        return 0;
    }
    return icd_fail(err, ICD_EINTERNAL, NULL, -1, "unknown skip step %d", (int)op);
}

/* The end of the varint at p when it is a well-formed one that ends before `end`, else
 * NULL (the careful path then says what is wrong with it). */
static inline const uint8_t *varint_end(const uint8_t *p, const uint8_t *end)
{
    for (int i = 0; i < ICD_VARINT_MAX && p + i < end; i++)
        if (!(p[i] & 0x80)) return i == ICD_VARINT_MAX - 1 && p[i] > 1 ? NULL : p + i + 1;
    return NULL;
}

/* One step at p done quickly: where it ends, or NULL when it does not pass the quick
 * checks (the data ends, a bad length, a long varint...). */
static inline const uint8_t *quick_step(uint8_t op, const uint8_t *p, const uint8_t *end)
{
    switch (op) {
    case AVRO_SKIP_VARINT:
        return varint_end(p, end);
    case AVRO_SKIP_KEY:
    case AVRO_SKIP_STRING:
    case AVRO_SKIP_BYTES: {
        uint64_t v;
        int n = icd_uleb128_decode(p, end, &v);
        if (n > 0 && !(v & 1) && (v >> 1) <= (uint64_t)(end - p - n))
            return p + n + (v >> 1); /* (an even zigzag value: a length >= 0) */
        return NULL;
    }
    case AVRO_SKIP_BOOLEAN:
        return end - p >= 1 ? p + 1 : NULL;
    case AVRO_SKIP_FLOAT:
        return end - p >= 4 ? p + 4 : NULL;
    case AVRO_SKIP_DOUBLE:
        return end - p >= 8 ? p + 8 : NULL;
    }
    return NULL;
}

/* Steps over `count` values that are each the steps ops[0..nops): a tight loop, each step
 * checked against the end of the data; a step that does not pass the quick checks is
 * redone by skip_op_slow, which fails the way skip_rec would (same message, position). */
static int skip_flat(icd_avro_cursor *c, const uint8_t *ops, int nops, int64_t count,
                     icd_error *err)
{
    if (nops == 0) return 0; /* (nulls: no bytes) */
    const uint8_t *p = c->p, *end = c->end;
    for (int64_t i = 0; i < count; i++) {
        for (int k = 0; k < nops; k++) {
            const uint8_t *q = quick_step(ops[k], p, end);
            if (!q) { /* the careful way */
                c->p = p;
                ICD_TRY(skip_op_slow(c, ops[k], err));
                q = c->p;
            }
            p = q;
        }
    }
    c->p = p;
    return 0;
}

/* Flat values nested deeper than this are left to skip_rec by quick_skip. */
#define QUICK_FLAT_DEPTH 8

/* A one-byte zigzag varint at p (values -64..63), or false. */
static inline bool small_zigzag(const uint8_t *p, const uint8_t *end, int64_t *v)
{
    if (p >= end || *p >= 0x80) return false;
    *v = (int64_t)(*p >> 1) ^ -(int64_t)(*p & 1);
    return true;
}

/* Where a value of `s` at p ends, found quickly, or NULL when the quick way does not
 * apply or its checks do not pass: then skip_rec does it (and says what is wrong). Only
 * flat values, arrays and maps of flat values that take bytes, and unions of those, at
 * most `levels` unions deep; nothing here has side effects, so giving up is free. */
static const uint8_t *quick_skip(const icd_avro_schema *s, const uint8_t *p, const uint8_t *end,
                                 int levels)
{
    if (s->nskip_ops >= 0 && s->skip_ops_depth <= QUICK_FLAT_DEPTH) {
        for (int k = 0; k < s->nskip_ops && p; k++)
            p = quick_step(s->skip_ops[k], p, end);
        return p;
    }
    int64_t v;
    if (s->type == AVRO_UNION) {
        if (levels <= 0 || !small_zigzag(p, end, &v) || v < 0 || (uint64_t)v >= s->nbranches)
            return NULL;
        return quick_skip(s->branches[v], p + 1, end, levels - 1);
    }
    if (s->type != AVRO_ARRAY && s->type != AVRO_MAP) return NULL;
    const icd_avro_schema *it = s->items;
    bool map = s->type == AVRO_MAP;
    size_t min = map ? 1 + it->min_size : it->min_size;
    if (it->nskip_ops < 0 || it->skip_ops_depth > QUICK_FLAT_DEPTH || min == 0) return NULL;
    for (;;) {
        if (!small_zigzag(p, end, &v) || v < 0) return NULL; /* (sized blocks: skip_rec) */
        p++;
        if (v == 0) return p;
        if ((uint64_t)v > (size_t)(end - p) / min) return NULL;
        if (!map && it->skip_all_varints) { /* count the varints' last bytes */
            uint64_t left = (uint64_t)v * (uint64_t)it->nskip_ops; /* (<= the bytes left) */
            int run = 0; /* continuation bytes of the current varint */
            while (left) {
                if (p >= end) return NULL;
                uint8_t b = *p++;
                if (b < 0x80) {
                    if (run == ICD_VARINT_MAX - 1 && b > 1) return NULL; /* over 64 bits */
                    run = 0;
                    left--;
                } else if (++run >= ICD_VARINT_MAX) {
                    return NULL;
                }
            }
            continue;
        }
        for (int64_t i = 0; i < v; i++) {
            if (map && !(p = quick_step(AVRO_SKIP_KEY, p, end))) return NULL;
            for (int k = 0; k < it->nskip_ops; k++)
                if (!(p = quick_step(it->skip_ops[k], p, end))) return NULL;
        }
    }
}

/* `count` items of an array or map whose values are flat (it->nskip_ops >= 0). */
static int skip_flat_items(const icd_avro_schema *it, bool map, icd_avro_cursor *c, int64_t count,
                           icd_error *err)
{
    if (!map) return skip_flat(c, it->skip_ops, it->nskip_ops, count, err);
    uint8_t ops[AVRO_SKIP_OPS_MAX + 1];
    ops[0] = AVRO_SKIP_KEY;
    memcpy(ops + 1, it->skip_ops, (size_t)it->nskip_ops);
    return skip_flat(c, ops, it->nskip_ops + 1, count, err);
}

static int skip_items(const icd_avro_schema *s, icd_avro_cursor *c, int depth, icd_error *err)
{
    const icd_avro_schema *it = s->items;
    bool map = s->type == AVRO_MAP;
    /* flat items skipped in one loop, when skip_rec would not hit its depth limit on them */
    bool flat = it->nskip_ops >= 0 && depth + 1 + it->skip_ops_depth <= AVRO_MAX_DEPTH;
    for (;;) {
        int64_t count, bytes;
        ICD_TRY(read_block_count(c, map ? 1 + it->min_size : it->min_size, &count, &bytes, err));
        if (count == 0) return 0;
        if (bytes >= 0) { /* the writer told us the size: jump */
            c->p += bytes;
            continue;
        }
        if (!map && it->fixed_width >= 0) {
            /* count <= left / min_size was checked, so this product fits */
            uint64_t total = (uint64_t)count * (uint64_t)it->fixed_width;
            ICD_TRY(need(c, total, "array items", err));
            c->p += total;
            continue;
        }
        if (flat) {
            ICD_TRY(skip_flat_items(it, map, c, count, err));
            continue;
        }
        for (int64_t i = 0; i < count; i++) {
            if (map) {
                const uint8_t *k;
                size_t kn;
                ICD_TRY(icd_avro_read_bytes(c, &k, &kn, "a map key", err));
            }
            ICD_TRY(skip_rec(it, c, depth + 1, err));
        }
    }
}

static int skip_rec(const icd_avro_schema *s, icd_avro_cursor *c, int depth, icd_error *err)
{
    if (depth > AVRO_MAX_DEPTH)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, (int64_t)icd_avro_cursor_pos(c),
                        "values nest deeper than %d levels", AVRO_MAX_DEPTH);
    switch (s->type) {
    case AVRO_NULL:
        return 0;
    case AVRO_BOOLEAN:
        ICD_TRY(need(c, 1, "boolean", err));
        c->p += 1;
        return 0;
    case AVRO_FLOAT:
        ICD_TRY(need(c, 4, "float", err));
        c->p += 4;
        return 0;
    case AVRO_DOUBLE:
        ICD_TRY(need(c, 8, "double", err));
        c->p += 8;
        return 0;
    case AVRO_FIXED:
        ICD_TRY(need(c, s->size, "fixed", err));
        c->p += s->size;
        return 0;
    case AVRO_INT:
    case AVRO_LONG:
    case AVRO_ENUM:
        return skip_varint(c, err);
    case AVRO_BYTES:
    case AVRO_STRING: {
        const uint8_t *p;
        size_t n;
        return icd_avro_read_bytes(c, &p, &n, s->type == AVRO_BYTES ? "a bytes value" : "a string",
                                   err);
    }
    case AVRO_RECORD:
        if (s->fixed_width >= 0) {
            ICD_TRY(need(c, (size_t)s->fixed_width, "record", err));
            c->p += s->fixed_width;
            return 0;
        }
        for (size_t i = 0; i < s->nfields; i++)
            ICD_TRY(skip_rec(s->fields[i].type, c, depth + 1, err));
        return 0;
    case AVRO_ARRAY:
    case AVRO_MAP:
        return skip_items(s, c, depth, err);
    case AVRO_UNION: {
        const icd_avro_schema *b;
        int32_t idx;
        ICD_TRY(read_union_branch(s, c, &b, &idx, err));
        return skip_rec(b, c, depth + 1, err);
    }
    }
    return icd_fail(err, ICD_EINTERNAL, NULL, -1, "unknown schema node type %d", (int)s->type);
}

int icd_avro_skip(const icd_avro_schema *s, icd_avro_cursor *c, icd_error *err)
{
    return skip_rec(s, c, 0, err);
}

/* ---- primitives for specialised decoders (decode.h) ----------------------------------- */

int icd_avro_read_branch(const icd_avro_schema *s, icd_avro_cursor *c, int32_t *idx, icd_error *err)
{
    const icd_avro_schema *b;
    return read_union_branch(s, c, &b, idx, err);
}

int icd_avro_need(icd_avro_cursor *c, size_t n, const char *what, icd_error *err)
{
    return need(c, n, what, err);
}

int icd_avro_read_boolean(icd_avro_cursor *c, bool *out, icd_error *err)
{
    ICD_TRY(need(c, 1, "boolean", err));
    if (*c->p > 1) return fail_at(err, c, c->p, "boolean byte is %u, not 0 or 1", *c->p);
    *out = *c->p++ == 1;
    return 0;
}

int icd_avro_read_enum(const icd_avro_schema *s, icd_avro_cursor *c, int64_t *out, icd_error *err)
{
    const uint8_t *at = c->p;
    int64_t v;
    ICD_TRY(icd_avro_read_long(c, &v, err));
    if (v < 0 || (uint64_t)v >= s->nsymbols)
        return fail_at(err, c, at, "enum index %lld is out of range (%zu symbols)", (long long)v,
                       s->nsymbols);
    *out = v;
    return 0;
}

int icd_avro_read_block_count(icd_avro_cursor *c, size_t min_size, int64_t *count, int64_t *bytes,
                              icd_error *err)
{
    return read_block_count(c, min_size, count, bytes, err);
}

int icd_avro_check_block_size(icd_avro_cursor *c, const uint8_t *block_start, int64_t bytes,
                              icd_error *err)
{
    if (bytes < 0 || c->p == block_start + bytes) return 0;
    return fail_at(err, c, c->p, "array/map block size says %lld bytes but its items took %lld",
                   (long long)bytes, (long long)(c->p - block_start));
}

int icd_avro_skip_at(const icd_avro_schema *s, icd_avro_cursor *c, int depth, icd_error *err)
{
    const uint8_t *q = quick_skip(s, c->p, c->end, 2);
    if (q) {
        c->p = q;
        return 0;
    }
    return skip_rec(s, c, depth, err);
}

/* ---- value trees ------------------------------------------------------------------- */

typedef struct dec_ctx {
    icd_avro_cursor *c;
    icd_arena *arena;
    icd_error *err;
} dec_ctx;

static int decode_rec(dec_ctx *d, const icd_avro_schema *s, const icd_avro_projection *proj,
                      icd_avro_value *out, int depth);

static void *tree_alloc(dec_ctx *d, size_t n)
{
    if (d->arena->total > AVRO_MAX_TREE_BYTES) return NULL;
    return icd_arena_alloc(d->arena, n);
}

static int tree_nomem(dec_ctx *d)
{
    if (d->arena->total > AVRO_MAX_TREE_BYTES)
        return icd_fail(d->err, ICD_EUNSUPPORTED, NULL, (int64_t)icd_avro_cursor_pos(d->c),
                        "one value needs more than %zu MiB of memory to decode",
                        AVRO_MAX_TREE_BYTES >> 20);
    return icd_fail_nomem(d->err);
}

/* Grows an array of `size`-byte elements from `have` to at least `want` (arena memory:
 * the old copy is simply abandoned). */
static int grow(dec_ctx *d, void **items, size_t *cap, size_t have, size_t want, size_t size)
{
    if (want <= *cap) return 0;
    size_t ncap = *cap * 2 > want ? *cap * 2 : want;
    if (ncap > SIZE_MAX / size) return tree_nomem(d);
    void *n = tree_alloc(d, ncap * size);
    if (!n) return tree_nomem(d);
    if (have) memcpy(n, *items, have * size);
    *items = n;
    *cap = ncap;
    return 0;
}

static int decode_items(dec_ctx *d, const icd_avro_schema *s, icd_avro_value *out, int depth)
{
    const icd_avro_schema *it = s->items;
    bool map = s->type == AVRO_MAP;
    void *vals = NULL, *keys = NULL;
    size_t n = 0, vcap = 0, kcap = 0;
    for (;;) {
        int64_t count, bytes;
        ICD_TRY(
            read_block_count(d->c, map ? 1 + it->min_size : it->min_size, &count, &bytes, d->err));
        if (count == 0) break;
        const uint8_t *block_end = bytes >= 0 ? d->c->p + bytes : NULL;
        size_t want = n + (size_t)count;
        ICD_TRY(grow(d, &vals, &vcap, n, want, sizeof(icd_avro_value)));
        if (map) ICD_TRY(grow(d, &keys, &kcap, n, want, sizeof(icd_avro_bytes)));
        for (int64_t i = 0; i < count; i++, n++) {
            if (map) {
                icd_avro_bytes *k = (icd_avro_bytes *)keys + n;
                ICD_TRY(icd_avro_read_bytes(d->c, &k->ptr, &k->len, "a map key", d->err));
            }
            ICD_TRY(decode_rec(d, it, NULL, (icd_avro_value *)vals + n, depth + 1));
        }
        if (block_end && d->c->p != block_end)
            return fail_at(d->err, d->c, d->c->p,
                           "array/map block size says %lld bytes but its items took %lld",
                           (long long)bytes, (long long)(d->c->p - (block_end - bytes)));
    }
    if (map) {
        out->u.map.keys = keys;
        out->u.map.values = vals;
        out->u.map.count = n;
    } else {
        out->u.list.items = vals;
        out->u.list.count = n;
    }
    return 0;
}

static int run_plan(dec_ctx *d, const icd_avro_plan *p, icd_avro_value *out, int depth);
static bool plan_fits(const icd_avro_plan *p, int depth);

static int decode_record(dec_ctx *d, const icd_avro_schema *s, const icd_avro_projection *proj,
                         icd_avro_value *out, int depth)
{
    if (proj && proj->record != s) proj = NULL;
    if (proj && proj->plan && plan_fits(proj->plan, depth))
        return run_plan(d, proj->plan, out, depth);
    icd_avro_value *f = NULL;
    if (s->nfields) {
        f = tree_alloc(d, s->nfields * sizeof *f);
        if (!f) return tree_nomem(d);
    }
    for (size_t i = 0; i < s->nfields; i++) {
        const icd_avro_schema *ft = s->fields[i].type;
        if (proj && proj->keep && !proj->keep[i]) {
            ICD_TRY(skip_rec(ft, d->c, depth + 1, d->err));
            memset(&f[i], 0, sizeof f[i]);
            f[i].schema = ft;
            f[i].type = AVRO_NULL;
            f[i].branch = -1;
            f[i].skipped = true;
            continue;
        }
        ICD_TRY(decode_rec(d, ft, proj && proj->nested ? proj->nested[i] : NULL, &f[i], depth + 1));
    }
    out->u.list.items = f;
    out->u.list.count = s->nfields;
    return 0;
}

/* `proj` applies to a record (or to the record branch of a union); NULL: all of it. */
static int decode_rec(dec_ctx *d, const icd_avro_schema *s, const icd_avro_projection *proj,
                      icd_avro_value *out, int depth)
{
    icd_avro_cursor *c = d->c;
    if (depth > AVRO_MAX_DEPTH)
        return icd_fail(d->err, ICD_EUNSUPPORTED, NULL, (int64_t)icd_avro_cursor_pos(c),
                        "values nest deeper than %d levels", AVRO_MAX_DEPTH);
    out->branch = -1;
    out->skipped = false;
    if (s->type == AVRO_UNION) {
        int32_t idx;
        ICD_TRY(read_union_branch(s, c, &s, &idx, d->err));
        ICD_TRY(decode_rec(d, s, s->type == AVRO_RECORD ? proj : NULL, out, depth + 1));
        out->branch = idx;
        return 0;
    }
    out->schema = s;
    out->type = s->type;
    const uint8_t *at = c->p;
    switch (s->type) {
    case AVRO_NULL:
        return 0;
    case AVRO_BOOLEAN:
        ICD_TRY(need(c, 1, "boolean", d->err));
        if (*c->p > 1) return fail_at(d->err, c, at, "boolean byte is %u, not 0 or 1", *c->p);
        out->u.boolean = *c->p++ == 1;
        return 0;
    case AVRO_INT: {
        int32_t v = 0;
        ICD_TRY(icd_avro_read_int(c, &v, d->err));
        out->u.i64 = v;
        return 0;
    }
    case AVRO_LONG:
        return icd_avro_read_long(c, &out->u.i64, d->err);
    case AVRO_FLOAT: {
        ICD_TRY(need(c, 4, "float", d->err));
        uint32_t bits = icd_load_le32(c->p);
        memcpy(&out->u.f32, &bits, 4);
        c->p += 4;
        return 0;
    }
    case AVRO_DOUBLE: {
        ICD_TRY(need(c, 8, "double", d->err));
        uint64_t bits = 0;
        for (int i = 7; i >= 0; i--)
            bits = bits << 8 | c->p[i];
        memcpy(&out->u.f64, &bits, 8);
        c->p += 8;
        return 0;
    }
    case AVRO_BYTES:
    case AVRO_STRING:
        return icd_avro_read_bytes(c, &out->u.bytes.ptr, &out->u.bytes.len,
                                   s->type == AVRO_BYTES ? "a bytes value" : "a string", d->err);
    case AVRO_FIXED:
        ICD_TRY(need(c, s->size, "fixed", d->err));
        out->u.bytes.ptr = c->p;
        out->u.bytes.len = s->size;
        c->p += s->size;
        return 0;
    case AVRO_ENUM: {
        int64_t v;
        ICD_TRY(icd_avro_read_long(c, &v, d->err));
        if (v < 0 || (uint64_t)v >= s->nsymbols)
            return fail_at(d->err, c, at, "enum index %lld is out of range (%zu symbols)",
                           (long long)v, s->nsymbols);
        out->u.i64 = v;
        return 0;
    }
    case AVRO_RECORD:
        return decode_record(d, s, proj, out, depth);
    case AVRO_ARRAY:
    case AVRO_MAP:
        return decode_items(d, s, out, depth);
    case AVRO_UNION:
        break;
    }
    return icd_fail(d->err, ICD_EINTERNAL, NULL, -1, "unknown schema node type %d", (int)s->type);
}

int icd_avro_decode(const icd_avro_schema *s, icd_avro_cursor *c, icd_arena *arena,
                    icd_avro_value *out, icd_error *err)
{
    dec_ctx d = {c, arena, err};
    return decode_rec(&d, s, NULL, out, 0);
}

int icd_avro_decode_projected(const icd_avro_schema *s, const icd_avro_projection *proj,
                              icd_avro_cursor *c, icd_arena *arena, icd_avro_value *out,
                              icd_error *err)
{
    dec_ctx d = {c, arena, err};
    return decode_rec(&d, s, proj, out, 0);
}

/* ---- compiled projections ---------------------------------------------------------- */

/* What a plan step does with its field (of a ["null", T] union: with T's value). */
enum {
    PK_SKIP, /* left out: quick_skip, else skip_rec */
    PK_LONG,
    PK_INT,
    PK_STRING,  /* string or bytes */
    PK_RECORD,  /* a projected record with a plan of its own */
    PK_GENERIC, /* decode_rec on the field, with its nested projection */
};

/* Records nested deeper than this are decoded by decode_rec. */
#define PLAN_MAX_NEST 4

typedef struct plan_step {
    uint8_t kind;
    bool optional;                   /* a union of null and one other branch */
    int32_t null_idx;                /* optional: the index of the null branch */
    const icd_avro_schema *type;     /* the field's type (the union, when optional) */
    const icd_avro_schema *vtype;    /* the value's type: `type` or its non-null branch */
    const icd_avro_projection *proj; /* PK_GENERIC: the field's nested projection */
    icd_avro_plan *sub;              /* PK_RECORD */
} plan_step;

struct icd_avro_plan {
    const icd_avro_schema *record;
    plan_step *steps; /* one per field */
    int nest;         /* nested plan levels below this one */
};

void icd_avro_plan_free(icd_avro_plan *p)
{
    if (!p) return;
    for (size_t i = 0; p->steps && i < p->record->nfields; i++)
        icd_avro_plan_free(p->steps[i].sub);
    free(p->steps);
    free(p);
}

static int compile(const icd_avro_projection *proj, int level, icd_avro_plan **out, icd_error *err)
{
    *out = NULL;
    const icd_avro_schema *rec = proj->record;
    if (!rec || rec->type != AVRO_RECORD)
        return icd_fail(err, ICD_EINTERNAL, NULL, -1, "a projection of a non-record schema");
    icd_avro_plan *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    p->record = rec;
    p->steps = calloc(rec->nfields ? rec->nfields : 1, sizeof *p->steps);
    if (!p->steps) {
        free(p);
        return icd_fail_nomem(err);
    }
    for (size_t i = 0; i < rec->nfields; i++) {
        plan_step *st = &p->steps[i];
        const icd_avro_schema *ft = rec->fields[i].type;
        const icd_avro_projection *nested = proj->nested ? proj->nested[i] : NULL;
        st->type = st->vtype = ft;
        st->null_idx = -1;
        if (proj->keep && !proj->keep[i]) {
            st->kind = PK_SKIP;
            continue;
        }
        if (ft->type == AVRO_UNION && ft->nbranches == 2 && ft->null_branch >= 0 &&
            ft->branches[1 - ft->null_branch]->type != AVRO_NULL) {
            st->optional = true;
            st->null_idx = ft->null_branch;
            st->vtype = ft->branches[1 - ft->null_branch];
        }
        switch (st->vtype->type) {
        case AVRO_LONG:
            st->kind = PK_LONG;
            break;
        case AVRO_INT:
            st->kind = PK_INT;
            break;
        case AVRO_STRING:
        case AVRO_BYTES:
            st->kind = PK_STRING;
            break;
        case AVRO_RECORD:
            if (level < PLAN_MAX_NEST) {
                /* (a projection of another record does not apply: the record is decoded
                 * whole, as by a projection that keeps everything) */
                icd_avro_projection whole = {st->vtype, NULL, NULL, NULL};
                if (!nested || nested->record != st->vtype) nested = &whole;
                int rc = compile(nested, level + 1, &st->sub, err);
                if (rc) {
                    icd_avro_plan_free(p);
                    return rc;
                }
                st->kind = PK_RECORD;
                if (st->sub->nest + 1 > p->nest) p->nest = st->sub->nest + 1;
                break;
            }
            /* fall through */
        default:
            st->kind = PK_GENERIC;
        }
        if (st->kind == PK_GENERIC) { /* the whole field, union and all */
            st->optional = false;
            st->null_idx = -1;
            st->vtype = ft;
            st->proj = nested;
        }
    }
    *out = p;
    return 0;
}

int icd_avro_plan_compile(const icd_avro_projection *proj, icd_avro_plan **out, icd_error *err)
{
    return compile(proj, 0, out, err);
}

/* Whether a plan run at `depth` stays below the depth limit everywhere it does the work
 * itself (a record, its fields, a union's branch; quick skips: a field, two unions, an
 * array and flat items), so that it fails exactly where decode_rec would; else decode_rec
 * walks the record. */
static bool plan_fits(const icd_avro_plan *p, int depth)
{
    return depth + 2 * (p->nest + 1) + QUICK_FLAT_DEPTH + 2 <= AVRO_MAX_DEPTH;
}

static void set_skipped(icd_avro_value *v, const icd_avro_schema *type)
{
    memset(v, 0, sizeof *v);
    v->schema = type;
    v->type = AVRO_NULL;
    v->branch = -1;
    v->skipped = true;
}

/* The record of plan p at `depth`: what decode_record does with p's projection. */
static int run_plan(dec_ctx *d, const icd_avro_plan *p, icd_avro_value *out, int depth)
{
    icd_avro_cursor *c = d->c;
    const icd_avro_schema *s = p->record;
    icd_avro_value *f = NULL;
    if (s->nfields) {
        f = tree_alloc(d, s->nfields * sizeof *f);
        if (!f) return tree_nomem(d);
    }
    for (size_t i = 0; i < s->nfields; i++) {
        const plan_step *st = &p->steps[i];
        icd_avro_value *v = &f[i];
        switch (st->kind) {
        case PK_SKIP: {
            const uint8_t *q = quick_skip(st->type, c->p, c->end, 2);
            if (q)
                c->p = q;
            else
                ICD_TRY(skip_rec(st->type, c, depth + 1, d->err));
            set_skipped(v, st->type);
            continue;
        }
        case PK_GENERIC:
            ICD_TRY(decode_rec(d, st->type, st->proj, v, depth + 1));
            continue;
        default:
            break;
        }
        int vdepth = depth + 1;
        int32_t idx = -1;
        v->branch = -1;
        v->skipped = false;
        if (st->optional) {
            const icd_avro_schema *b;
            ICD_TRY(read_union_branch(st->type, c, &b, &idx, d->err));
            if (idx == st->null_idx) {
                v->schema = b;
                v->type = AVRO_NULL;
                v->branch = idx;
                continue;
            }
            vdepth++;
        }
        const icd_avro_schema *vt = st->vtype;
        v->schema = vt;
        v->type = vt->type;
        switch (st->kind) {
        case PK_LONG:
            ICD_TRY(read_long_q(c, &v->u.i64, d->err));
            break;
        case PK_INT: {
            int32_t x = 0;
            ICD_TRY(read_int_q(c, &x, d->err));
            v->u.i64 = x;
            break;
        }
        case PK_STRING:
            ICD_TRY(read_bytes_q(c, &v->u.bytes.ptr, &v->u.bytes.len,
                                 vt->type == AVRO_BYTES ? "a bytes value" : "a string", d->err));
            break;
        default: /* PK_RECORD */
            ICD_TRY(run_plan(d, st->sub, v, vdepth));
            v->branch = -1;
            v->skipped = false;
            break;
        }
        v->branch = idx;
    }
    out->schema = s;
    out->type = AVRO_RECORD;
    out->u.list.items = f;
    out->u.list.count = s->nfields;
    return 0;
}

/* ---- lookups ----------------------------------------------------------------------- */

const icd_avro_value *icd_avro_value_field(const icd_avro_value *rec, const char *name)
{
    if (!rec || rec->type != AVRO_RECORD) return NULL;
    return icd_avro_value_field_at(rec, icd_avro_schema_field_index(rec->schema, name));
}

const icd_avro_value *icd_avro_value_field_by_id(const icd_avro_value *rec, int32_t field_id)
{
    if (!rec || rec->type != AVRO_RECORD) return NULL;
    return icd_avro_value_field_at(rec, icd_avro_schema_field_index_by_id(rec->schema, field_id));
}
