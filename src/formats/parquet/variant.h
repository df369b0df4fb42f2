/*
 * Variant binary encoding (Parquet VariantEncoding.md, used by Iceberg v3 `variant`
 * columns): a bounds-checked decoder that renders one variant value as JSON.
 *
 * A variant is two byte strings: `metadata` (header, a dictionary of key strings) and
 * `value` (a header byte with the basic type — primitive, short string, object, array —
 * then its data). The JSON follows design.md §3 for the equivalent Iceberg types:
 *
 *   null, boolean                  null, true/false
 *   int8/16/32/64                  number
 *   float, double                  number; NaN and ±Infinity as "NaN", "Infinity", "-Infinity"
 *   decimal4/8/16                  string with exactly `scale` fraction digits ("12.30")
 *   date                           "YYYY-MM-DD"
 *   time (micros)                  "HH:MM:SS.ffffff"
 *   timestamp (micros / nanos)     "YYYY-MM-DDTHH:MM:SS.ffffff" (9 digits for nanos),
 *                                  "+00:00" appended for the UTC-adjusted kinds
 *   string, short string           string (invalid UTF-8 repaired as \ufffd)
 *   binary                         base64 string
 *   uuid                           canonical 36-character string
 *   object                         object, keys from the metadata dictionary, in the
 *                                  encoded (lexicographic) order
 *   array                          array
 *
 * Only the unshredded form is decoded here; shredded Parquet columns (`typed_value`) are
 * recognised and refused by the Iceberg reader.
 */
#ifndef ICD_PQ_VARIANT_H
#define ICD_PQ_VARIANT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"

/* Deepest object/array nesting accepted (bounds the decoder's recursion). */
#define PQ_VARIANT_MAX_DEPTH 128

/* Appends the variant as JSON to `out`. Corrupt or truncated bytes fail with ICD_ECORRUPT
 * (an unknown primitive type id with ICD_EUNSUPPORTED) and a message saying what is wrong
 * and where ("variant value at byte N: ..."); the caller adds the file and row. On failure
 * `out` is restored to its length on entry. */
int pq_variant_to_json(icd_buf *out, const uint8_t *metadata, size_t metadata_len,
                       const uint8_t *value, size_t value_len, icd_error *err);

#endif
