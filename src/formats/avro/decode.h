/*
 * Avro binary datum decoding over an in-memory buffer (one decompressed container block).
 * Two ways to read a value:
 *   - icd_avro_decode: a generic value tree (icd_avro_value) allocated in an icd_arena, for readers
 *     that want fields by name or Iceberg field id (manifest lists, manifests, `cat`);
 *   - icd_avro_skip: steps over a value without building anything (unneeded fields; arrays
 *     and maps written with byte sizes are jumped over whole).
 * Strings, bytes and fixed values point into the cursor's buffer, so a value tree lives
 * as long as both its arena and the block buffer (the container reader keeps a block until
 * the next one is loaded). A typical reader resets one arena per record or per block.
 *
 * Errors are ICD_ECORRUPT (or ICD_EUNSUPPORTED for limits), and err->offset is the
 * position in the cursor's buffer where the bad value starts; the container reader turns
 * it into a file position.
 */
#ifndef ICD_AVRO_DECODE_H
#define ICD_AVRO_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"
#include "base/varint.h"
#include "formats/avro/schema.h"

/* Deepest value nesting decoded (recursive schemas can nest without bound). */
#define AVRO_MAX_DEPTH 128
/* Values that occupy no bytes (null items of an array, ...) one cursor (and one container
 * file) may produce before the data is called corrupt: a few bytes could otherwise claim
 * billions of them. */
#define AVRO_ZERO_SIZE_BUDGET (1u << 22)
/* Arena bytes one icd_avro_decode call may hold before it gives up (value trees take ~40
 * bytes per value, so a huge record of tiny values would otherwise balloon). */
#define AVRO_MAX_TREE_BYTES ((size_t)1 << 30)

typedef struct icd_avro_cursor {
    const uint8_t *start; /* the buffer, for error offsets */
    const uint8_t *p;
    const uint8_t *end;
    uint64_t zero_budget; /* see AVRO_ZERO_SIZE_BUDGET */
} icd_avro_cursor;

static inline void icd_avro_cursor_init(icd_avro_cursor *c, const void *data, size_t n)
{
    c->start = c->p = (const uint8_t *)data;
    c->end = c->start + n;
    c->zero_budget = AVRO_ZERO_SIZE_BUDGET;
}
static inline size_t icd_avro_cursor_pos(const icd_avro_cursor *c)
{
    return (size_t)(c->p - c->start);
}
static inline size_t icd_avro_cursor_left(const icd_avro_cursor *c)
{
    return (size_t)(c->end - c->p);
}

/* Primitive readers (also used for the container header and block headers). */
int icd_avro_read_long(icd_avro_cursor *c, int64_t *out, icd_error *err);
int icd_avro_read_int(icd_avro_cursor *c, int32_t *out, icd_error *err);
/* A length-prefixed byte string; `what` names it in errors ("string", "bytes"). */
int icd_avro_read_bytes(icd_avro_cursor *c, const uint8_t **p, size_t *n, const char *what,
                        icd_error *err);

typedef struct icd_avro_bytes {
    const uint8_t *ptr;
    size_t len;
} icd_avro_bytes;

typedef struct icd_avro_value icd_avro_value;
struct icd_avro_value {
    const icd_avro_schema *schema; /* the type read: for a union, the branch taken */
    icd_avro_type type;            /* schema->type, for quick tests; AVRO_NULL for null */
    int32_t branch;                /* the union branch index, or -1 when not in a union */
    bool skipped;                  /* a field left out by icd_avro_decode_projected */
    union {
        bool boolean;
        int64_t i64; /* int, long, enum (the symbol index) */
        float f32;
        double f64;
        icd_avro_bytes bytes; /* bytes, string, fixed */
        struct {
            icd_avro_value *items; /* record: one per schema field, in schema order */
            size_t count;
        } list; /* record fields, array items */
        struct {
            icd_avro_bytes *keys;
            icd_avro_value *values;
            size_t count;
        } map;
    } u;
};

/* Decodes one value of schema `s` at the cursor into `out`, allocating in `arena`. */
int icd_avro_decode(const icd_avro_schema *s, icd_avro_cursor *c, icd_arena *arena,
                    icd_avro_value *out, icd_error *err);
/* Which fields of the record schema `record` to decode: keep[i] for field i (NULL: every
 * field); nested[i] (when `nested` is not NULL) the projection of field i when it is a
 * record or a union with a record branch (NULL: all of it). A projection applies only to
 * its own record schema (another record -- a union's other branch -- is decoded whole).
 * Fields left out are skipped (their encoding is still walked, so a damaged one is still
 * an error) and come back with `skipped` set and type AVRO_NULL. */
typedef struct icd_avro_projection icd_avro_projection;
typedef struct icd_avro_plan icd_avro_plan;
struct icd_avro_projection {
    const icd_avro_schema *record;
    const bool *keep;
    const icd_avro_projection *const *nested;
    /* optional: the projection compiled (icd_avro_plan_compile), which decodes the same
     * tree with less work per value; NULL: walk the schema */
    const icd_avro_plan *plan;
};

/* A projection compiled once per writer schema (a container file) into a flat program:
 * per field one step -- skip (flat values in one loop), read a long / int / string, a
 * ["null", T] union of those, a nested projected record -- and the generic decoder for
 * the rest. Decoding with it gives the same tree and the same errors (message and
 * offset) as without it. Freed with icd_avro_plan_free (NULL is fine). */
int icd_avro_plan_compile(const icd_avro_projection *proj, icd_avro_plan **out, icd_error *err);
void icd_avro_plan_free(icd_avro_plan *p);

/* Like icd_avro_decode, decoding only what `proj` keeps of a record (NULL: everything). */
int icd_avro_decode_projected(const icd_avro_schema *s, const icd_avro_projection *proj,
                              icd_avro_cursor *c, icd_arena *arena, icd_avro_value *out,
                              icd_error *err);
/* Steps over one value of schema `s`. */
int icd_avro_skip(const icd_avro_schema *s, icd_avro_cursor *c, icd_error *err);

/* ---- primitives for decoders specialised to one schema ---------------------------------
 * (the manifest-entry decoder, src/iceberg/manifest_fast.c): each reads or checks what
 * icd_avro_decode does for that value, with the same error message and position, so a
 * specialised decoder fails exactly where and how the generic one would. */
/* The union branch at the cursor (its index checked against s->nbranches). */
int icd_avro_read_branch(const icd_avro_schema *s, icd_avro_cursor *c, int32_t *idx,
                         icd_error *err);
/* Fails unless n bytes are left ("truncated: <what> needs ..."). */
int icd_avro_need(icd_avro_cursor *c, size_t n, const char *what, icd_error *err);
/* A boolean byte (0 or 1). */
int icd_avro_read_boolean(icd_avro_cursor *c, bool *out, icd_error *err);
/* An enum symbol index, checked against s->nsymbols. */
int icd_avro_read_enum(const icd_avro_schema *s, icd_avro_cursor *c, int64_t *out, icd_error *err);
/* One block header of an array or map whose items take at least min_size bytes each (a
 * map's: 1 + the value's min_size): *count items (0 ends the value) and, when the writer
 * gave it, *bytes (else -1); the count is checked against the bytes left. */
int icd_avro_read_block_count(icd_avro_cursor *c, size_t min_size, int64_t *count, int64_t *bytes,
                              icd_error *err);
/* The check icd_avro_decode makes after a sized array/map block: its items took exactly
 * `bytes` bytes from block_start. */
int icd_avro_check_block_size(icd_avro_cursor *c, const uint8_t *block_start, int64_t bytes,
                              icd_error *err);
/* Steps over a value of `s` as a field at nesting `depth` of a record (what a projection
 * that leaves the field out does: the quick way when it applies, else the careful one). */
int icd_avro_skip_at(const icd_avro_schema *s, icd_avro_cursor *c, int depth, icd_error *err);

/* The common cases of icd_avro_read_long / _int / _bytes inline (a long of one byte, a
 * string whose length fits); anything else goes to the full reader, which fails the same
 * way. */
static inline int icd_avro_read_long_q(icd_avro_cursor *c, int64_t *out, icd_error *err)
{
    const uint8_t *p = c->p;
    if (p < c->end && *p < 0x80) {
        uint8_t b = *c->p++;
        *out = (int64_t)(b >> 1) ^ -(int64_t)(b & 1);
        return 0;
    }
    uint64_t v;
    int k;
    if (c->end - p >= ICD_VARINT_MAX && (k = icd_uleb128_decode10(p, &v)) > 0) {
        c->p = p + k; /* (sequence numbers, snapshot ids: no bounds check a byte) */
        *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
        return 0;
    }
    return icd_avro_read_long(c, out, err);
}

static inline int icd_avro_read_int_q(icd_avro_cursor *c, int32_t *out, icd_error *err)
{
    if (c->p < c->end && *c->p < 0x80) { /* (-64..63: in range) */
        uint8_t b = *c->p++;
        *out = (int32_t)((int64_t)(b >> 1) ^ -(int64_t)(b & 1));
        return 0;
    }
    return icd_avro_read_int(c, out, err);
}

static inline int icd_avro_read_bytes_q(icd_avro_cursor *c, const uint8_t **p, size_t *n,
                                        const char *what, icd_error *err)
{
    if (c->p < c->end && *c->p < 0x80 && !(*c->p & 1) &&
        (size_t)(*c->p >> 1) <= (size_t)(c->end - c->p - 1)) {
        *n = (size_t)(*c->p >> 1);
        *p = c->p + 1;
        c->p += 1 + *n;
        return 0;
    }
    if (c->end - c->p >= 2 && (c->p[0] & 0x80) && c->p[1] < 0x80 && !(c->p[0] & 1)) {
        size_t len = (size_t)(((c->p[0] & 0x7f) | (size_t)c->p[1] << 7) >> 1); /* (paths) */
        if (len <= (size_t)(c->end - c->p - 2)) {
            *n = len;
            *p = c->p + 2;
            c->p += 2 + len;
            return 0;
        }
    }
    return icd_avro_read_bytes(c, p, n, what, err);
}

/* Field lookups on a record value. NULL means the field is not in the writer schema (an
 * older manifest version, say); a field that is present but null comes back as a value
 * with type AVRO_NULL. */
const icd_avro_value *icd_avro_value_field(const icd_avro_value *rec, const char *name);
const icd_avro_value *icd_avro_value_field_by_id(const icd_avro_value *rec, int32_t field_id);
/* The field at a schema index found once per file with icd_avro_schema_field_index; NULL for
 * idx < 0. (Inline: manifest readers call it for every field of every entry.) */
static inline const icd_avro_value *icd_avro_value_field_at(const icd_avro_value *rec, int idx)
{
    if (!rec || rec->type != AVRO_RECORD || idx < 0 || (size_t)idx >= rec->u.list.count)
        return NULL;
    return &rec->u.list.items[idx];
}

static inline bool icd_avro_value_is_null(const icd_avro_value *v)
{
    return !v || v->type == AVRO_NULL;
}

#endif
