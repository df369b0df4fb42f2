/*
 * Internals shared by orc_file.c (tail, schema, statistics) and orc_reader.c (stripes,
 * streams, batches). Not for use outside src/formats/orc/.
 */
#ifndef ICD_ORC_INTERNAL_H
#define ICD_ORC_INTERNAL_H

#include "base/arena.h"
#include "formats/orc/orc.h"
#include "orc_proto.pb-c.h"

#define ORC_DEFAULT_MAX_TAIL ((size_t)256 << 20)
#define ORC_DEFAULT_MAX_STREAM ((size_t)1 << 30)
#define ORC_DEFAULT_BLOCK_SIZE ((uint64_t)256 << 10)
/* Seconds from 1970-01-01 to 2015-01-01 00:00:00 UTC, the base of timestamp DATA. */
#define ORC_TS_BASE_SECONDS INT64_C(1420070400)

struct orc_file {
    icd_file *file;
    bool own;
    char *location;
    uint64_t size;
    size_t max_stream;
    int compression;
    uint64_t block_size;
    uint32_t version[2];
    uint64_t rows;
    Orcpb__PostScript *ps;
    Orcpb__Footer *footer;
    Orcpb__Metadata *meta; /* NULL when the file has no metadata section */
    orc_type *types;
    size_t ntypes;
    orc_stripe_info *stripes;
    size_t nstripes;
    bool decimal64; /* DECIMAL with precision <= 18 uses integer RLE v2 (ORC 2.0 draft) */
    char *software_version;
    icd_arena arena; /* names, attributes, children arrays */
};

/* Decompresses (when the file is compressed) and returns the bytes of one part that was
 * read from `file_off`. `*owned` is set when the result was allocated (free it). */
int orc_file_decode_part(const orc_file *f, const uint8_t *raw, size_t len, uint64_t file_off,
                         const char *what, const uint8_t **out, size_t *out_len, uint8_t **owned,
                         icd_error *err);

#endif
