/*
 * A memory-backed icd_file: positional reads over a caller's buffer. Used by fuzz targets
 * and unit tests to feed bytes to readers that take an icd_file (e.g. pq_file_open_file).
 */
#ifndef ICD_IO_MEMFILE_H
#define ICD_IO_MEMFILE_H

#include <stddef.h>

#include "io/fileio.h"

/* Opens `n` bytes at `data` as a file named `location`. The bytes are borrowed: they must
 * stay valid until icd_file_close. */
int icd_memfile_open(const void *data, size_t n, const char *location, icd_file **out,
                     icd_error *err);

#endif
