/*
 * The structures behind the public handles (include/icedruid/ headers): thin wrappers over the
 * internal layers, shared by the files of src/api/.
 */
#ifndef ICD_API_API_H
#define ICD_API_API_H

#include "base/error.h"
#include "icedruid/icedruid.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"

struct icd_storage {
    icd_fileio *io;
};

struct icd_table {
    icd_storage *storage; /* borrowed */
    ice_metadata *md;
};

/* The icedruid command's bridge into the public API: handles over a FileIO and metadata
 * it loaded itself (--catalog files, --remap, its retry settings); both stay the
 * caller's, and st / t must not be passed to icd_storage_free / icd_table_free. */
static inline void icd_api_wrap(icd_storage *st, icd_table *t, icd_fileio *io, ice_metadata *md)
{
    st->io = io;
    t->storage = st;
    t->md = md;
}

#endif
