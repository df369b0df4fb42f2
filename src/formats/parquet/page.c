/*
 * PageHeader decoder (see page.h): the column reader (column.c) calls it for every page of
 * a chunk before deciding how to decompress and decode the page body.
 */
#include <string.h>

#include "formats/parquet/page.h"
#include "formats/parquet/thrift.h"

/* Wire types of known fields by id (0 = any); a known field of another wire type is skipped
 * like an unknown one. */
static const uint8_t T_DATA[] = {0, PQ_T_I32, PQ_T_I32, PQ_T_I32, PQ_T_I32, PQ_T_STRUCT};
static const uint8_t T_DICT[] = {0, PQ_T_I32, PQ_T_I32, PQ_T_TRUE};
static const uint8_t T_V2[] = {0,        PQ_T_I32, PQ_T_I32,  PQ_T_I32,   PQ_T_I32,
                               PQ_T_I32, PQ_T_I32, PQ_T_TRUE, PQ_T_STRUCT};
static const uint8_t T_PAGE[] = {0,           PQ_T_I32,    PQ_T_I32,    PQ_T_I32,   PQ_T_I32,
                                 PQ_T_STRUCT, PQ_T_STRUCT, PQ_T_STRUCT, PQ_T_STRUCT};

static bool type_ok(int wire, int want)
{
    if (want == PQ_T_TRUE) return wire == PQ_T_TRUE || wire == PQ_T_FALSE;
    return wire == want;
}

/* Reads the next field header: 1 = a field, 0 = end of struct (closed), < 0 = error. */
static int next_field_t(pq_thrift *r, int16_t *last, pq_tfield *f, const uint8_t *t, size_t nt)
{
    for (;;) {
        ICD_TRY(pq_thrift_field(r, last, f));
        if (f->type == PQ_T_STOP) {
            pq_thrift_struct_end(r);
            return 0;
        }
        if (f->id > 0 && (size_t)f->id < nt && t[f->id] && !type_ok(f->type, t[f->id])) {
            ICD_TRY(pq_thrift_skip(r, f->type));
            continue;
        }
        return 1;
    }
}
#define next_field(r, last, f, T) next_field_t(r, last, f, T, sizeof T)

static int rd_i32(pq_thrift *r, const pq_tfield *f, int32_t *v)
{
    ICD_TRY(pq_thrift_expect(r, f, PQ_T_I32));
    return pq_thrift_i32(r, v);
}

/* Decodes a header struct whose known fields are i32s, all required: field id k goes to
 * *i32[k] (entries 1..n-1 of i32 are all set), field `bool_id` (0 = none) to *flag; other
 * fields (statistics) are skipped. `what` names the struct in the error. */
static int decode_i32_struct(pq_thrift *r, const uint8_t *t, size_t nt, int32_t *const *i32,
                             size_t n, int bool_id, bool *flag, const char *what)
{
    pq_tfield f;
    int16_t last = 0;
    int rc;
    unsigned seen = 0, required = (1u << (n - 1)) - 1;
    ICD_TRY(pq_thrift_struct_begin(r));
    while ((rc = next_field_t(r, &last, &f, t, nt)) > 0) {
        if (f.id > 0 && (size_t)f.id < n) {
            ICD_TRY(rd_i32(r, &f, i32[f.id]));
            seen |= 1u << (f.id - 1);
        } else if (bool_id && f.id == bool_id) {
            ICD_TRY(pq_thrift_bool_field(r, &f, flag));
        } else {
            ICD_TRY(pq_thrift_skip(r, f.type));
        }
    }
    if (rc < 0) return rc;
    if (seen != required) return pq_thrift_corrupt(r, "%s lacks a required field", what);
    return 0;
}

static int decode_data_v1(pq_thrift *r, pq_page_header *h)
{
    int32_t *const f[] = {NULL, &h->num_values, &h->encoding, &h->def_encoding, &h->rep_encoding};
    ICD_TRY(decode_i32_struct(r, T_DATA, sizeof T_DATA, f, 5, 0, NULL, "DataPageHeader"));
    h->has_data = true;
    return 0;
}

static int decode_dict(pq_thrift *r, pq_page_header *h)
{
    int32_t *const f[] = {NULL, &h->dict_num_values, &h->dict_encoding};
    ICD_TRY(decode_i32_struct(r, T_DICT, sizeof T_DICT, f, 3, 0, NULL, "DictionaryPageHeader"));
    h->has_dict = true;
    return 0;
}

static int decode_data_v2(pq_thrift *r, pq_page_header *h)
{
    int32_t *const f[] = {NULL,         &h->num_values, &h->num_nulls, &h->num_rows,
                          &h->encoding, &h->def_length, &h->rep_length};
    h->is_compressed = true;
    ICD_TRY(
        decode_i32_struct(r, T_V2, sizeof T_V2, f, 7, 7, &h->is_compressed, "DataPageHeaderV2"));
    h->has_data_v2 = true;
    return 0;
}

int pq_page_header_decode(const uint8_t *p, size_t n, pq_page_header *h, size_t *header_len,
                          const char *location, int64_t offset, icd_error *err)
{
    memset(h, 0, sizeof *h);
    pq_thrift r;
    pq_thrift_init(&r, p, n, location, offset, "Parquet page header", err);
    pq_tfield f;
    int16_t last = 0;
    int rc;
    unsigned seen = 0;
    ICD_TRY(pq_thrift_struct_begin(&r));
    while ((rc = next_field(&r, &last, &f, T_PAGE)) > 0) {
        switch (f.id) {
        case 1:
            ICD_TRY(rd_i32(&r, &f, &h->type));
            seen |= 1;
            break;
        case 2:
            ICD_TRY(rd_i32(&r, &f, &h->uncompressed_size));
            seen |= 2;
            break;
        case 3:
            ICD_TRY(rd_i32(&r, &f, &h->compressed_size));
            seen |= 4;
            break;
        case 4: {
            int32_t crc;
            ICD_TRY(rd_i32(&r, &f, &crc));
            h->crc = (uint32_t)crc;
            h->has_crc = true;
            break;
        }
        case 5:
            ICD_TRY(pq_thrift_expect(&r, &f, PQ_T_STRUCT));
            ICD_TRY(decode_data_v1(&r, h));
            break;
        case 7:
            ICD_TRY(pq_thrift_expect(&r, &f, PQ_T_STRUCT));
            ICD_TRY(decode_dict(&r, h));
            break;
        case 8:
            ICD_TRY(pq_thrift_expect(&r, &f, PQ_T_STRUCT));
            ICD_TRY(decode_data_v2(&r, h));
            break;
        default:
            ICD_TRY(pq_thrift_skip(&r, f.type));
        }
    }
    if (rc < 0) return rc;
    if (seen != 7) return pq_thrift_corrupt(&r, "PageHeader lacks a required field");
    if (h->uncompressed_size < 0 || h->compressed_size < 0)
        return pq_thrift_corrupt(&r, "negative page size");
    *header_len = pq_thrift_pos(&r);
    return 0;
}
