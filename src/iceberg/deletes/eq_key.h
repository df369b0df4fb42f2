/*
 * The one canonical encoding of Iceberg values as key bytes: equal Iceberg values give equal
 * bytes whatever physical type, width or file format they were stored with. Used for
 * equality-delete keys (the reader: delete files and data rows), partition tuples (the
 * planner: manifest entries) and row identities (`diff`).
 *
 * Equality is Java's `equals` on the Iceberg value (Iceberg's readers put equality-delete
 * keys in a StructLikeSet, which compares with Float.compare / Double.compare):
 *   null      equals null only (a null key column matches a null value, "col IS NULL");
 *   integers  int, long (and int promoted to long) by their 64-bit value;
 *   float     promoted to double (exact), so a float key matches the double it was
 *             promoted to;
 *   NaN       every NaN equals every other NaN (one canonical NaN, sign and payload
 *             dropped);
 *   -0.0      differs from +0.0 (Java's equals, and the spec's note on partition values);
 *   decimal   by unscaled value (the scale is fixed by the type), whatever the byte width;
 *   date, time, timestamp   by their 64-bit value in the type's unit;
 *   string, binary, fixed, uuid   by their bytes.
 * (The spec forbids float and double equality-delete columns; writers that use them get
 * the Java reader's behaviour.)
 *
 * Each value is one presence byte (0 null, 1 value) and its body: 8 bytes (integers, dates,
 * times, floats as double bits), 16 bytes (decimals), or a 4-byte length and the bytes.
 * Values are concatenated for tuples; the bytes are only ever compared for equality and
 * hashed, never decoded, and they do not leave the process.
 */
#ifndef ICD_ICE_DELETES_EQ_KEY_H
#define ICD_ICE_DELETES_EQ_KEY_H

#include <stdint.h>
#include <string.h>

#include "base/buf.h"
#include "iceberg/literal.h"
#include "iceberg/tvalue.h"

/* The canonical bits of a double (floats are converted to double first): one NaN, the
 * sign of zero kept. */
uint64_t ice_key_double_bits(double d);

/* Appends the canonical bytes of a typed value (the reader). */
void ice_key_put(icd_buf *k, const ice_tvalue *v);

/* The canonical bytes of a non-null integer-like value (boolean, int, long, date, time,
 * timestamp): the presence byte and the 64-bit value. ice_key_put writes these for such
 * values; a reader holding a stored int or long that needs no conversion calls it
 * directly. */
static inline void ice_key_put_int(icd_buf *k, int64_t v)
{
    if (k->len + 10 > k->cap && !icd_buf_grow(k, 10)) return;
    uint8_t *o = (uint8_t *)k->data + k->len;
    o[0] = 1;
    memcpy(o + 1, &v, 8);
    o[9] = 0;
    k->len += 9;
}

/* Appends the canonical bytes of a literal of its own kind (the planner's partition
 * tuples): the same bytes as ice_key_put of the value read from a data file. */
void ice_key_put_literal(icd_buf *k, const ice_literal *l);

#endif
