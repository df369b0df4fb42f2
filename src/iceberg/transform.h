/*
 * Partition transforms (spec "Partition Transforms", "Bucket Transform Details",
 * "Truncate Transform Details", Appendix B hashing).
 *
 * A transform is parsed from its JSON text ("identity", "bucket[16]", "truncate[4]",
 * "year", "month", "day", "hour", "void"). Names this reader does not know are kept as
 * ICE_TR_UNKNOWN with their text: such fields still take part in partition-tuple equality
 * but never in filtering. Applying a transform to a literal serves partition pruning.
 */
#ifndef ICD_ICEBERG_TRANSFORM_H
#define ICD_ICEBERG_TRANSFORM_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "iceberg/literal.h"
#include "iceberg/types.h"

typedef enum ice_transform_kind {
    ICE_TR_IDENTITY,
    ICE_TR_BUCKET,   /* param = number of buckets N > 0 */
    ICE_TR_TRUNCATE, /* param = width W > 0 */
    ICE_TR_YEAR,
    ICE_TR_MONTH,
    ICE_TR_DAY,
    ICE_TR_HOUR,
    ICE_TR_VOID,
    ICE_TR_UNKNOWN /* any other text, kept verbatim */
} ice_transform_kind;

typedef struct ice_transform {
    ice_transform_kind kind;
    int32_t param;    /* N of bucket[N], W of truncate[W]; 0 otherwise */
    const char *text; /* the transform as written in the metadata (caller-owned storage) */
} ice_transform;

/* Parses a transform's text; never fails (unknown or malformed names give ICE_TR_UNKNOWN).
 * Named transforms compare case-insensitively, as in Iceberg Java. `text` is not copied. */
void ice_transform_parse(const char *text, ice_transform *out);

/* Equality of two transforms: same kind and parameter; unknown ones by their text. */
bool ice_transform_equal(const ice_transform *a, const ice_transform *b);

/* The canonical text ("bucket[16]", "day", or the unknown text). */
void ice_transform_format(icd_buf *b, const ice_transform *t);

/* True when the transform may be applied to a source column of this kind (the spec's
 * "Source types" column). Unknown transforms accept everything (they are never applied). */
bool ice_transform_accepts(const ice_transform *t, ice_type_kind source);

/* The partition value's type for a source type: identity, truncate and void keep the
 * source type; bucket, year, month, day and hour give int (the spec's result type; Java
 * labels day results "date", which is the same int32 day count). An unknown transform
 * gives kind ICE_T_UNKNOWN: take its type from the manifest's partition schema. */
int ice_transform_result_type(const ice_transform *t, const ice_type *source, ice_type *out,
                              icd_error *err);

/* Applies the transform to one value. Null gives null; void gives null. Decimal
 * truncation allocates its result bytes in `arena`; string and binary truncation point
 * into the input's bytes. Applying an unknown transform is ICD_EUNSUPPORTED; a source
 * kind the transform does not accept is ICD_EINVALID. */
int ice_transform_apply(const ice_transform *t, const ice_literal *in, icd_arena *arena,
                        ice_literal *out, icd_error *err);

/* Murmur3 x86 32-bit (the spec's bucket hash, seed 0). */
uint32_t ice_murmur3_32(const void *data, size_t n, uint32_t seed);
/* The spec's hashLong (8 little-endian bytes) and hashBytes. Its "hashInt" is hashLong of the
 * value widened to long (that is what the test vectors for int, date and boolean give). */
int32_t ice_hash_long(int64_t v);
int32_t ice_hash_bytes(const uint8_t *p, size_t n);

/* The Appendix B hash of a value (ints as long, nanosecond timestamps in micros, decimals
 * as minimal big-endian two's complement, floats as doubleToLongBits with NaN and -0.0
 * canonicalised, booleans as hashLong(0/1)). Nulls and nested values are ICD_EINVALID. */
int ice_literal_hash(const ice_literal *l, int32_t *out, icd_error *err);

#endif
