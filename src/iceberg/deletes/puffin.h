/*
 * Puffin files (Iceberg format/puffin-spec.md): "PFA1", blobs, then a footer
 * "PFA1" + JSON payload (optionally one LZ4 frame) + 4-byte LE payload size + 4-byte flags +
 * "PFA1". The footer lists the blobs (type, fields, snapshot-id, sequence-number, offset,
 * length, compression-codec, properties).
 *
 * Users: `icedruid inspect` (lists everything) and deletion vectors (dv.h), which normally
 * read their blob straight by the manifest's offset/length and only use this footer
 * reader for validation. Every offset and length from the footer is checked against the
 * file before it is used.
 */
#ifndef ICE_PUFFIN_H
#define ICE_PUFFIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"
#include "io/fileio.h"

#define ICE_PUFFIN_MAGIC "PFA1"
#define ICE_PUFFIN_BLOB_DV "deletion-vector-v1"
/* The footer payload (compressed or not) may not exceed this. */
#define ICE_PUFFIN_MAX_FOOTER (64u * 1024u * 1024u)

typedef struct ice_puffin_prop {
    const char *key;
    const char *value;
} ice_puffin_prop;

typedef struct ice_puffin_blob {
    const char *type;
    const int32_t *fields;
    size_t nfields;
    int64_t snapshot_id;     /* -1 for deletion vectors */
    int64_t sequence_number; /* -1 for deletion vectors */
    uint64_t offset;         /* within the file; checked: 4 <= offset, offset + length <= */
    uint64_t length;         /* footer_offset */
    const char *codec;       /* "lz4", "zstd" or another name; NULL = uncompressed */
    const ice_puffin_prop *props;
    size_t nprops;
} ice_puffin_blob;

typedef struct ice_puffin {
    const char *location;
    uint64_t file_size;
    uint64_t footer_offset; /* where the footer's leading magic starts */
    uint32_t payload_size;  /* as stored (after compression) */
    uint32_t flags;
    bool compressed; /* flags bit 0: the payload is an LZ4 frame */
    const ice_puffin_blob *blobs;
    size_t nblobs;
    const ice_puffin_prop *props; /* file properties ("created-by", ...) */
    size_t nprops;
    /* private */
    icd_arena arena;
    icd_file *file;      /* when opened from a FileIO */
    const uint8_t *data; /* when opened over a buffer */
} ice_puffin;

/* Opens a Puffin file and reads its footer. */
int ice_puffin_open(icd_fileio *io, const char *location, ice_puffin **out, icd_error *err);
/* The same over a whole file held in memory (tests, fuzzing); `data` must outlive `*out`.
 * `location` names it in errors. */
int ice_puffin_open_buffer(const uint8_t *data, size_t len, const char *location, ice_puffin **out,
                           icd_error *err);
void ice_puffin_close(ice_puffin *p);

/* The value of property `key`, or NULL. */
const char *ice_puffin_prop_get(const ice_puffin_prop *props, size_t n, const char *key);
/* The blob that starts at `offset`, or NULL. */
const ice_puffin_blob *ice_puffin_find_blob(const ice_puffin *p, uint64_t offset);

/* Reads a blob and undoes its compression codec (lz4 or zstd frame; another codec is
 * ICD_EUNSUPPORTED). The result (malloc'd, caller frees) may not exceed max_bytes. */
int ice_puffin_read_blob(ice_puffin *p, const ice_puffin_blob *b, size_t max_bytes, uint8_t **out,
                         size_t *len, icd_error *err);
/* Reads n raw bytes at `offset` of the file (bounds-checked). */
int ice_puffin_read_at(ice_puffin *p, uint64_t offset, void *buf, size_t n, icd_error *err);

/* Decompresses one LZ4 frame or one Zstandard frame ("lz4"/"zstd") into a malloc'd
 * buffer of at most max_out bytes. Errors name `location` and `offset` (of the input). */
int ice_puffin_decompress(const char *codec, const uint8_t *in, size_t n, size_t max_out,
                          const char *location, uint64_t offset, uint8_t **out, size_t *out_len,
                          icd_error *err);

#endif
