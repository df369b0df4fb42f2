/*
 * Loading one delete file (position deletes, equality deletes or a deletion vector) into
 * a cache entry of the scan-wide delete cache, for every file format by one code path:
 * the file is read through the format adapter (iceberg/adapter.h) and its records go
 * through the rules of delete_cache.h (bounds, order, null counts, record counts).
 */
#ifndef ICD_ICE_DELETES_DELETE_LOAD_H
#define ICD_ICE_DELETES_DELETE_LOAD_H

#include "base/error.h"
#include "iceberg/content_file.h"
#include "iceberg/deletes/delete_cache.h"
#include "iceberg/metadata.h"
#include "iceberg/schema.h"
#include "io/fileio.h"

typedef struct ice_delete_load_ctx {
    icd_fileio *io;
    const ice_metadata *md;          /* equality fields are looked up in all its schemas */
    const ice_schema *schema;        /* the read schema (looked up first) */
    const ice_name_mapping *mapping; /* for files without field ids, or NULL */
} ice_delete_load_ctx;

/* Reads delete file df into e (setting e->kind). Errors name the file; nothing of a
 * delete file is ever skipped. */
int ice_delete_load(const ice_delete_load_ctx *c, const ice_content_file *df, cache_entry *e,
                    icd_error *err);

#endif
