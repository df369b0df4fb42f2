/*
 * Parquet page headers (the Thrift PageHeader in front of every page of a column chunk).
 */
#ifndef ICD_PQ_PAGE_H
#define ICD_PQ_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

enum { PQ_PAGE_DATA = 0, PQ_PAGE_INDEX = 1, PQ_PAGE_DICTIONARY = 2, PQ_PAGE_DATA_V2 = 3 };

typedef struct pq_page_header {
    int type;
    int32_t uncompressed_size;
    int32_t compressed_size;
    bool has_crc;
    uint32_t crc;

    bool has_data; /* DataPageHeader */
    int32_t num_values;
    int encoding;
    int def_encoding, rep_encoding;

    bool has_dict; /* DictionaryPageHeader */
    int32_t dict_num_values;
    int dict_encoding;

    bool has_data_v2; /* DataPageHeaderV2 (num_values/encoding shared with v1 above) */
    int32_t num_nulls, num_rows;
    int32_t def_length, rep_length;
    bool is_compressed;
} pq_page_header;

/* Decodes the page header at [p, p+n); *header_len receives its encoded size. `offset` is
 * the file offset of p (for error messages). */
int pq_page_header_decode(const uint8_t *p, size_t n, pq_page_header *h, size_t *header_len,
                          const char *location, int64_t offset, icd_error *err);

#endif
