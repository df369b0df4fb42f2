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

#endif
