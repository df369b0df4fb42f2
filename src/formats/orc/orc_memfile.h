/*
 * An icd_file over a caller's memory buffer (tests and the libFuzzer target read ORC
 * files from memory through the same FileIO interface as local files).
 */
#ifndef ICD_ORC_MEMFILE_H
#define ICD_ORC_MEMFILE_H

#include <stddef.h>
#include <stdint.h>

#include "io/fileio.h"

/* `data` must outlive the file; it is not copied. Close with icd_file_close(). */
int orc_memfile_open(icd_file **out, const char *name, const uint8_t *data, size_t len,
                     icd_error *err);

#endif
