/*
 * An icd_file over a memory buffer: lets readers written against positional file reads
 * (the Avro container reader, ...) run on bytes already in memory — fuzz targets, unit
 * tests, and later objects fetched whole over HTTP.
 */
#ifndef ICD_IO_MEMFILE_H
#define ICD_IO_MEMFILE_H

#include <stddef.h>

#include "io/fileio.h"

/* Opens `n` bytes at `data` as a file named `name` (for error messages). The bytes are
 * not copied: they must outlive the file. Close with icd_file_close. */
int icd_memfile_open(const void *data, size_t n, const char *name, icd_file **out, icd_error *err);

#endif
