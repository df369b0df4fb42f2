/*
 * Deletion vectors (Iceberg v3, puffin-spec.md "deletion-vector-v1"): the deleted row
 * positions of one data file, stored as a Puffin blob. The manifest entry gives the Puffin
 * file, content_offset, content_size_in_bytes, referenced_data_file and record_count (the
 * cardinality); ice_dv_read reads exactly that byte range — several DVs share one Puffin
 * file, and the footer is not needed — and decodes it into an ice_posset.
 *
 * Blob layout: 4-byte big-endian length of (magic + vector), magic D1 D3 39 64, the vector
 * (64-bit "portable" Roaring: 8-byte LE count of 32-bit bitmaps, then per bitmap a 4-byte
 * LE key = high 32 bits, strictly increasing, and a portable 32-bit Roaring bitmap), and a
 * 4-byte big-endian CRC-32 of magic + vector.
 *
 * Every 32-bit bitmap is validated byte by byte (cookie, container count, keys, card-
 * inalities, offsets, array order, bitmap popcounts, run bounds, sizes) by ice_r32_parse;
 * the resulting set reads the validated bytes in place (frozen ice_posset form). CRoaring's
 * "safe" deserializer is not used on file bytes: in 0.2.66 it only bounds the reads and
 * trusts counts and order.
 */
#ifndef ICE_DV_H
#define ICE_DV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "iceberg/deletes/posset.h"
#include "iceberg/deletes/puffin.h"
#include "io/fileio.h"

#define ICE_DV_MIN_BYTES 20u         /* length, magic, bitmap count, CRC */
#define ICE_DV_MAX_BYTES 0x7FFFFFFFu /* Java's limit for a DV blob (2 GiB) */

/* Flags of ice_dv_decode. */
enum {
    ICE_DV_SKIP_CRC = 1 /* report a CRC mismatch in `info` instead of failing (inspect, fuzz) */
};

typedef struct ice_dv_info {
    uint64_t cardinality; /* positions in the vector */
    uint64_t nbitmaps;    /* 32-bit bitmaps (distinct high halves) */
    uint32_t crc_stored;
    uint32_t crc_computed;
    bool crc_ok;
    bool has_run_containers;
} ice_dv_info;

/*
 * Decodes a blob held in memory. `location` and `blob_offset` (the blob's offset in that
 * file) make error offsets absolute. `expected_cardinality` < 0 means unknown; otherwise a
 * different count is a corrupt error. On success `*out` is a new set (NULL allowed: decode
 * only to validate), `info` (may be NULL) describes the vector.
 */
int ice_dv_decode(const uint8_t *blob, size_t n, const char *location, uint64_t blob_offset,
                  int64_t expected_cardinality, unsigned flags, ice_posset **out, ice_dv_info *info,
                  icd_error *err);

/*
 * Reads the DV at [offset, offset + size) of an open Puffin file (the manifest's
 * content_offset / content_size_in_bytes) and decodes it. `data_file` (may be NULL) only
 * names the data file in messages; `expected_cardinality` is the manifest's record_count
 * (< 0 when unknown).
 */
int ice_dv_read_at(icd_file *f, int64_t offset, int64_t size, const char *data_file,
                   int64_t expected_cardinality, ice_posset **out, icd_error *err);
/* The same, opening `location` through `io`. */
int ice_dv_read(icd_fileio *io, const char *location, int64_t offset, int64_t size,
                const char *data_file, int64_t expected_cardinality, ice_posset **out,
                icd_error *err);

/*
 * The validating variant (inspect, tests): also reads the Puffin footer and checks that a
 * blob starts at `offset` with type deletion-vector-v1, the same length, no compression,
 * property referenced-data-file equal to `data_file` (when non-NULL) and property
 * cardinality equal to the decoded cardinality (and to `expected_cardinality` when >= 0).
 */
int ice_dv_read_validated(icd_fileio *io, const char *location, int64_t offset, int64_t size,
                          const char *data_file, int64_t expected_cardinality, ice_posset **out,
                          icd_error *err);

/* Checks a footer blob entry as above and decodes it (flags as ice_dv_decode). */
int ice_dv_read_blob(ice_puffin *p, const ice_puffin_blob *b, const char *data_file,
                     int64_t expected_cardinality, unsigned flags, ice_posset **out,
                     ice_dv_info *info, icd_error *err);

#endif
