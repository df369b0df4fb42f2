/*
 * FileMetaData decoder (see metadata.h): reads the footer bytes of a Parquet file with the
 * Thrift compact reader and fills plain structs allocated in the file's arena. The schema
 * tree (schema.c) and the column reader (column.c) work from these structs only.
 *
 * Each decode_* function reads one Thrift struct; unknown fields are skipped, fields of an
 * unexpected wire type are corrupt. Required Thrift fields that are missing are reported as
 * corrupt where the reader depends on them.
 */
#include <string.h>

#include "base/bits.h"
#include "formats/parquet/metadata.h"
#include "formats/parquet/thrift.h"

typedef struct ctx {
    pq_thrift *r;
    icd_arena *a;
} ctx;

static int nomem(ctx *c)
{
    return icd_fail_nomem(c->r->err);
}

static int read_str(ctx *c, const pq_tfield *f, pq_str *s)
{
    ICD_TRY(pq_thrift_expect(c->r, f, PQ_T_BINARY));
    const uint8_t *p;
    uint32_t n;
    ICD_TRY(pq_thrift_binary(c->r, &p, &n));
    char *d = icd_arena_strndup(c->a, (const char *)p, n);
    if (!d) return nomem(c);
    s->ptr = d;
    s->len = n;
    return 0;
}

static int read_i32(ctx *c, const pq_tfield *f, int32_t *v)
{
    ICD_TRY(pq_thrift_expect(c->r, f, PQ_T_I32));
    return pq_thrift_i32(c->r, v);
}

static int read_i64(ctx *c, const pq_tfield *f, int64_t *v)
{
    ICD_TRY(pq_thrift_expect(c->r, f, PQ_T_I64));
    return pq_thrift_i64(c->r, v);
}

/* Opens a list field, allocating `count` zeroed elements of `size` bytes. */
static int list_alloc(ctx *c, const pq_tfield *f, int want_elem, size_t size, void **arr,
                      uint32_t *count)
{
    ICD_TRY(pq_thrift_expect(c->r, f, PQ_T_LIST));
    int et;
    ICD_TRY(pq_thrift_list_begin(c->r, &et, count));
    /* i16/i32/i64 share the zigzag varint encoding; accept any for integer lists */
    bool ints = (want_elem == PQ_T_I32 || want_elem == PQ_T_I64) &&
                (et == PQ_T_I16 || et == PQ_T_I32 || et == PQ_T_I64);
    if (*count && et != want_elem && !ints && !(want_elem == PQ_T_TRUE && et == PQ_T_FALSE))
        return pq_thrift_corrupt(c->r, "field %d: list of type %d, expected %d", f->id, et,
                                 want_elem);
    *arr = NULL;
    if (*count) {
        *arr = icd_arena_calloc(c->a, (size_t)*count * size);
        if (!*arr) return nomem(c);
    }
    return 0;
}

/* Wire types of the known fields of each struct, by field id (0 = not checked). A known
 * field whose wire type differs (an old or foreign definition) is skipped like an unknown
 * one, as Thrift's generated readers do; required fields are then reported missing. */
#define I32 PQ_T_I32
#define I64 PQ_T_I64
#define BIN PQ_T_BINARY
#define LST PQ_T_LIST
#define STR PQ_T_STRUCT
#define BOO PQ_T_TRUE
static const uint8_t T_NONE[1] = {0};
static const uint8_t T_TIME[] = {0, BOO, STR};
static const uint8_t T_DECIMAL[] = {0, I32, I32};
static const uint8_t T_INT[] = {0, PQ_T_BYTE, BOO};
static const uint8_t T_SCHEMA[] = {0, I32, I32, I32, BIN, I32, I32, I32, I32, I32, STR};
static const uint8_t T_KV[] = {0, BIN, BIN};
static const uint8_t T_STATS[] = {0, BIN, BIN, I64, I64, BIN, BIN, BOO, BOO, I64};
static const uint8_t T_COLMETA[] = {0,   I32, LST, LST, I32, I64, I64, I64,
                                    LST, I64, I64, I64, STR, LST, I64, I32};
static const uint8_t T_ENCSTATS[] = {0, I32, I32, I32};
static const uint8_t T_CHUNK[] = {0, BIN, I64, STR, I64, I32, I64, I32, STR, BIN};
static const uint8_t T_ROWGROUP[] = {0, LST, I64, I64, LST, I64, I64, PQ_T_I16};
static const uint8_t T_FILE[] = {0, I32, LST, I64, LST, LST, BIN, LST, STR, BIN};

static bool type_matches(int wire, int want)
{
    if (want == PQ_T_TRUE) return wire == PQ_T_TRUE || wire == PQ_T_FALSE;
    if (want == PQ_T_LIST) return wire == PQ_T_LIST || wire == PQ_T_SET;
    return wire == want;
}

/* Reads the next field header of the struct being decoded: 1 = a field in *f, 0 = the end
 * of the struct (which is then closed), < 0 = an error. Callers open the struct with
 * pq_thrift_struct_begin and loop while this returns 1. */
static int next_field_t(ctx *c, int16_t *last, pq_tfield *f, const uint8_t *types, size_t nt)
{
    for (;;) {
        ICD_TRY(pq_thrift_field(c->r, last, f));
        if (f->type == PQ_T_STOP) {
            pq_thrift_struct_end(c->r);
            return 0;
        }
        if (f->id > 0 && (size_t)f->id < nt && types[f->id] &&
            !type_matches(f->type, types[f->id])) {
            ICD_TRY(pq_thrift_skip(c->r, f->type));
            continue;
        }
        return 1;
    }
}
#define next_field(c, last, f, T) next_field_t(c, last, f, T, sizeof T)

static int decode_time_unit(ctx *c, int *unit)
{
    pq_tfield f;
    *unit = PQ_UNIT_NONE;
    ICD_TRY(pq_thrift_struct_begin(c->r));
    int16_t last_f = 0;
    int rc_f;
    while ((rc_f = next_field(c, &last_f, &f, T_NONE)) > 0) {
        if (f.id >= 1 && f.id <= 3 && f.type == PQ_T_STRUCT)
            *unit = f.id; /* MILLIS=1, MICROS=2, NANOS=3 */
        ICD_TRY(pq_thrift_skip(c->r, f.type));
    }
    if (rc_f < 0) return rc_f;
    return 0;
}

/* TimeType / TimestampType: isAdjustedToUTC (1), unit (2). */
static int decode_time_type(ctx *c, pq_logical_type *lt)
{
    pq_tfield f;
    ICD_TRY(pq_thrift_struct_begin(c->r));
    int16_t last_f = 0;
    int rc_f;
    while ((rc_f = next_field(c, &last_f, &f, T_TIME)) > 0) {
        if (f.id == 1) {
            ICD_TRY(pq_thrift_bool_field(c->r, &f, &lt->utc));
        } else if (f.id == 2) {
            ICD_TRY(pq_thrift_expect(c->r, &f, PQ_T_STRUCT));
            ICD_TRY(decode_time_unit(c, &lt->unit));
        } else {
            ICD_TRY(pq_thrift_skip(c->r, f.type));
        }
    }
    if (rc_f < 0) return rc_f;
    return 0;
}

static int decode_logical(ctx *c, pq_logical_type *lt)
{
    pq_tfield f;
    memset(lt, 0, sizeof *lt);
    ICD_TRY(pq_thrift_struct_begin(c->r));
    int16_t last_f = 0;
    int rc_f;
    while ((rc_f = next_field(c, &last_f, &f, T_NONE)) > 0) {
        if (f.type != PQ_T_STRUCT) {
            ICD_TRY(pq_thrift_skip(c->r, f.type));
            continue;
        }
        switch (f.id) {
        case PQ_LT_DECIMAL:
            lt->kind = PQ_LT_DECIMAL;
            {
                pq_tfield g;
                ICD_TRY(pq_thrift_struct_begin(c->r));
                int16_t last_g = 0;
                int rc_g;
                while ((rc_g = next_field(c, &last_g, &g, T_DECIMAL)) > 0) {
                    if (g.id == 1)
                        ICD_TRY(read_i32(c, &g, &lt->scale));
                    else if (g.id == 2)
                        ICD_TRY(read_i32(c, &g, &lt->precision));
                    else
                        ICD_TRY(pq_thrift_skip(c->r, g.type));
                }
                if (rc_g < 0) return rc_g;
            }
            break;
        case PQ_LT_TIME:
        case PQ_LT_TIMESTAMP:
            lt->kind = f.id;
            ICD_TRY(decode_time_type(c, lt));
            break;
        case PQ_LT_INTEGER:
            lt->kind = PQ_LT_INTEGER;
            lt->is_signed = true;
            {
                pq_tfield g;
                ICD_TRY(pq_thrift_struct_begin(c->r));
                int16_t last_g = 0;
                int rc_g;
                while ((rc_g = next_field(c, &last_g, &g, T_INT)) > 0) {
                    if (g.id == 1) {
                        ICD_TRY(pq_thrift_expect(c->r, &g, PQ_T_BYTE));
                        int8_t w;
                        ICD_TRY(pq_thrift_byte(c->r, &w));
                        lt->bit_width = w;
                    } else if (g.id == 2) {
                        ICD_TRY(pq_thrift_bool_field(c->r, &g, &lt->is_signed));
                    } else {
                        ICD_TRY(pq_thrift_skip(c->r, g.type));
                    }
                }
                if (rc_g < 0) return rc_g;
            }
            break;
        case PQ_LT_STRING:
        case PQ_LT_MAP:
        case PQ_LT_LIST:
        case PQ_LT_ENUM:
        case PQ_LT_DATE:
        case PQ_LT_UNKNOWN:
        case PQ_LT_JSON:
        case PQ_LT_BSON:
        case PQ_LT_UUID:
        case PQ_LT_FLOAT16:
        case PQ_LT_VARIANT:
        case PQ_LT_GEOMETRY:
        case PQ_LT_GEOGRAPHY:
        case PQ_LT_VECTOR:
            lt->kind = f.id;
            ICD_TRY(pq_thrift_skip(c->r, PQ_T_STRUCT));
            break;
        default:
            lt->kind = PQ_LT_UNRECOGNISED;
            lt->unrecognised_id = f.id;
            ICD_TRY(pq_thrift_skip(c->r, PQ_T_STRUCT));
        }
    }
    if (rc_f < 0) return rc_f;
    return 0;
}

static int decode_schema_element(ctx *c, pq_schema_element *e)
{
    pq_tfield f;
    bool has_name = false;
    e->converted = PQ_CONV_NONE;
    ICD_TRY(pq_thrift_struct_begin(c->r));
    int16_t last_f = 0;
    int rc_f;
    while ((rc_f = next_field(c, &last_f, &f, T_SCHEMA)) > 0) {
        switch (f.id) {
        case 1:
            ICD_TRY(read_i32(c, &f, &e->type));
            e->has_type = true;
            break;
        case 2:
            ICD_TRY(read_i32(c, &f, &e->type_length));
            e->has_type_length = true;
            break;
        case 3:
            ICD_TRY(read_i32(c, &f, &e->repetition));
            e->has_repetition = true;
            break;
        case 4:
            ICD_TRY(read_str(c, &f, &e->name));
            has_name = true;
            break;
        case 5:
            ICD_TRY(read_i32(c, &f, &e->num_children));
            e->has_num_children = true;
            break;
        case 6:
            ICD_TRY(read_i32(c, &f, &e->converted));
            break;
        case 7:
            ICD_TRY(read_i32(c, &f, &e->scale));
            e->has_scale = true;
            break;
        case 8:
            ICD_TRY(read_i32(c, &f, &e->precision));
            e->has_precision = true;
            break;
        case 9:
            ICD_TRY(read_i32(c, &f, &e->field_id));
            e->has_field_id = true;
            break;
        case 10:
            ICD_TRY(pq_thrift_expect(c->r, &f, PQ_T_STRUCT));
            ICD_TRY(decode_logical(c, &e->logical));
            break;
        default:
            ICD_TRY(pq_thrift_skip(c->r, f.type));
        }
    }
    if (rc_f < 0) return rc_f;
    if (!has_name) return pq_thrift_corrupt(c->r, "schema element without a name");
    return 0;
}

static int decode_kv_list(ctx *c, const pq_tfield *lf, pq_kv **out, uint32_t *count)
{
    void *arr;
    ICD_TRY(list_alloc(c, lf, PQ_T_STRUCT, sizeof(pq_kv), &arr, count));
    pq_kv *kv = arr;
    for (uint32_t i = 0; i < *count; i++) {
        pq_tfield f;
        bool has_key = false;
        ICD_TRY(pq_thrift_struct_begin(c->r));
        int16_t last_f = 0;
        int rc_f;
        while ((rc_f = next_field(c, &last_f, &f, T_KV)) > 0) {
            if (f.id == 1) {
                ICD_TRY(read_str(c, &f, &kv[i].key));
                has_key = true;
            } else if (f.id == 2) {
                ICD_TRY(read_str(c, &f, &kv[i].value));
            } else {
                ICD_TRY(pq_thrift_skip(c->r, f.type));
            }
        }
        if (rc_f < 0) return rc_f;
        if (!has_key) return pq_thrift_corrupt(c->r, "key/value metadata entry without a key");
    }
    pq_thrift_container_end(c->r);
    *out = kv;
    return 0;
}

static int decode_statistics(ctx *c, pq_statistics *s)
{
    pq_tfield f;
    s->present = true;
    ICD_TRY(pq_thrift_struct_begin(c->r));
    int16_t last_f = 0;
    int rc_f;
    while ((rc_f = next_field(c, &last_f, &f, T_STATS)) > 0) {
        switch (f.id) {
        case 1:
            ICD_TRY(read_str(c, &f, &s->max));
            break;
        case 2:
            ICD_TRY(read_str(c, &f, &s->min));
            break;
        case 3:
            ICD_TRY(read_i64(c, &f, &s->null_count));
            s->has_null_count = true;
            break;
        case 4:
            ICD_TRY(read_i64(c, &f, &s->distinct_count));
            s->has_distinct_count = true;
            break;
        case 5:
            ICD_TRY(read_str(c, &f, &s->max_value));
            break;
        case 6:
            ICD_TRY(read_str(c, &f, &s->min_value));
            break;
        case 7:
            ICD_TRY(pq_thrift_bool_field(c->r, &f, &s->is_max_value_exact));
            s->has_is_max_value_exact = true;
            break;
        case 8:
            ICD_TRY(pq_thrift_bool_field(c->r, &f, &s->is_min_value_exact));
            s->has_is_min_value_exact = true;
            break;
        case 9:
            ICD_TRY(read_i64(c, &f, &s->nan_count));
            s->has_nan_count = true;
            break;
        default:
            ICD_TRY(pq_thrift_skip(c->r, f.type));
        }
    }
    if (rc_f < 0) return rc_f;
    return 0;
}

static int decode_column_meta(ctx *c, pq_column_meta *m)
{
    pq_tfield f;
    unsigned seen = 0;
    ICD_TRY(pq_thrift_struct_begin(c->r));
    int16_t last_f = 0;
    int rc_f;
    while ((rc_f = next_field(c, &last_f, &f, T_COLMETA)) > 0) {
        void *arr;
        switch (f.id) {
        case 1:
            ICD_TRY(read_i32(c, &f, &m->type));
            seen |= 1;
            break;
        case 2:
            ICD_TRY(list_alloc(c, &f, PQ_T_I32, sizeof(int), &arr, &m->num_encodings));
            m->encodings = arr;
            for (uint32_t i = 0; i < m->num_encodings; i++)
                ICD_TRY(pq_thrift_i32(c->r, &m->encodings[i]));
            pq_thrift_container_end(c->r);
            break;
        case 3:
            ICD_TRY(list_alloc(c, &f, PQ_T_BINARY, sizeof(pq_str), &arr, &m->path_len));
            m->path = arr;
            for (uint32_t i = 0; i < m->path_len; i++) {
                pq_tfield sf = {PQ_T_BINARY, 3};
                ICD_TRY(read_str(c, &sf, &m->path[i]));
            }
            pq_thrift_container_end(c->r);
            break;
        case 4:
            ICD_TRY(read_i32(c, &f, &m->codec));
            seen |= 2;
            break;
        case 5:
            ICD_TRY(read_i64(c, &f, &m->num_values));
            seen |= 4;
            break;
        case 6:
            ICD_TRY(read_i64(c, &f, &m->total_uncompressed_size));
            break;
        case 7:
            ICD_TRY(read_i64(c, &f, &m->total_compressed_size));
            seen |= 8;
            break;
        case 8:
            ICD_TRY(decode_kv_list(c, &f, &m->kv, &m->num_kv));
            break;
        case 9:
            ICD_TRY(read_i64(c, &f, &m->data_page_offset));
            seen |= 16;
            break;
        case 10:
            ICD_TRY(read_i64(c, &f, &m->index_page_offset));
            m->has_index_page_offset = true;
            break;
        case 11:
            ICD_TRY(read_i64(c, &f, &m->dictionary_page_offset));
            m->has_dictionary_page_offset = true;
            break;
        case 12:
            ICD_TRY(pq_thrift_expect(c->r, &f, PQ_T_STRUCT));
            ICD_TRY(decode_statistics(c, &m->stats));
            break;
        case 13:
            ICD_TRY(list_alloc(c, &f, PQ_T_STRUCT, sizeof(pq_encoding_stats), &arr,
                               &m->num_encoding_stats));
            m->encoding_stats = arr;
            for (uint32_t i = 0; i < m->num_encoding_stats; i++) {
                pq_encoding_stats *es = &m->encoding_stats[i];
                pq_tfield g;
                ICD_TRY(pq_thrift_struct_begin(c->r));
                int16_t last_g = 0;
                int rc_g;
                while ((rc_g = next_field(c, &last_g, &g, T_ENCSTATS)) > 0) {
                    if (g.id == 1)
                        ICD_TRY(read_i32(c, &g, &es->page_type));
                    else if (g.id == 2)
                        ICD_TRY(read_i32(c, &g, &es->encoding));
                    else if (g.id == 3)
                        ICD_TRY(read_i32(c, &g, &es->count));
                    else
                        ICD_TRY(pq_thrift_skip(c->r, g.type));
                }
                if (rc_g < 0) return rc_g;
            }
            pq_thrift_container_end(c->r);
            break;
        case 14:
            ICD_TRY(read_i64(c, &f, &m->bloom_filter_offset));
            m->has_bloom_filter_offset = true;
            break;
        case 15:
            ICD_TRY(read_i32(c, &f, &m->bloom_filter_length));
            m->has_bloom_filter_length = true;
            break;
        default:
            ICD_TRY(pq_thrift_skip(c->r, f.type));
        }
    }
    if (rc_f < 0) return rc_f;
    if ((seen & 31) != 31) return pq_thrift_corrupt(c->r, "ColumnMetaData lacks a required field");
    return 0;
}

static int decode_column_chunk(ctx *c, pq_column_chunk *cc)
{
    pq_tfield f;
    ICD_TRY(pq_thrift_struct_begin(c->r));
    int16_t last_f = 0;
    int rc_f;
    while ((rc_f = next_field(c, &last_f, &f, T_CHUNK)) > 0) {
        switch (f.id) {
        case 1:
            ICD_TRY(read_str(c, &f, &cc->file_path));
            break;
        case 2:
            ICD_TRY(read_i64(c, &f, &cc->file_offset));
            break;
        case 3:
            ICD_TRY(pq_thrift_expect(c->r, &f, PQ_T_STRUCT));
            ICD_TRY(decode_column_meta(c, &cc->meta));
            cc->has_meta_data = true;
            break;
        case 4:
            ICD_TRY(read_i64(c, &f, &cc->offset_index_offset));
            cc->has_offset_index = true;
            break;
        case 5:
            ICD_TRY(read_i32(c, &f, &cc->offset_index_length));
            break;
        case 6:
            ICD_TRY(read_i64(c, &f, &cc->column_index_offset));
            cc->has_column_index = true;
            break;
        case 7:
            ICD_TRY(read_i32(c, &f, &cc->column_index_length));
            break;
        case 8:
        case 9:
            cc->encrypted = true;
            ICD_TRY(pq_thrift_skip(c->r, f.type));
            break;
        default:
            ICD_TRY(pq_thrift_skip(c->r, f.type));
        }
    }
    if (rc_f < 0) return rc_f;
    return 0;
}

static int decode_row_group(ctx *c, pq_row_group *rg)
{
    pq_tfield f;
    bool has_columns = false, has_rows = false;
    ICD_TRY(pq_thrift_struct_begin(c->r));
    int16_t last_f = 0;
    int rc_f;
    while ((rc_f = next_field(c, &last_f, &f, T_ROWGROUP)) > 0) {
        void *arr;
        switch (f.id) {
        case 1:
            ICD_TRY(
                list_alloc(c, &f, PQ_T_STRUCT, sizeof(pq_column_chunk), &arr, &rg->num_columns));
            rg->columns = arr;
            for (uint32_t i = 0; i < rg->num_columns; i++)
                ICD_TRY(decode_column_chunk(c, &rg->columns[i]));
            pq_thrift_container_end(c->r);
            has_columns = true;
            break;
        case 2:
            ICD_TRY(read_i64(c, &f, &rg->total_byte_size));
            break;
        case 3:
            ICD_TRY(read_i64(c, &f, &rg->num_rows));
            has_rows = true;
            break;
        case 5:
            ICD_TRY(read_i64(c, &f, &rg->file_offset));
            rg->has_file_offset = true;
            break;
        case 6:
            ICD_TRY(read_i64(c, &f, &rg->total_compressed_size));
            rg->has_total_compressed_size = true;
            break;
        case 7:
            ICD_TRY(pq_thrift_expect(c->r, &f, PQ_T_I16));
            ICD_TRY(pq_thrift_i16(c->r, &rg->ordinal));
            rg->has_ordinal = true;
            break;
        default:
            ICD_TRY(pq_thrift_skip(c->r, f.type));
        }
    }
    if (rc_f < 0) return rc_f;
    if (!has_columns || !has_rows)
        return pq_thrift_corrupt(c->r, "RowGroup lacks its columns or num_rows");
    if (rg->num_rows < 0) return pq_thrift_corrupt(c->r, "RowGroup has a negative num_rows");
    return 0;
}

static int decode_column_orders(ctx *c, const pq_tfield *lf, pq_file_meta *m)
{
    void *arr;
    ICD_TRY(list_alloc(c, lf, PQ_T_STRUCT, sizeof(int), &arr, &m->num_column_orders));
    m->column_orders = arr;
    for (uint32_t i = 0; i < m->num_column_orders; i++) {
        pq_tfield f;
        ICD_TRY(pq_thrift_struct_begin(c->r));
        int16_t last_f = 0;
        int rc_f;
        while ((rc_f = next_field(c, &last_f, &f, T_NONE)) > 0) {
            if (f.id >= 1 && f.id <= 3 && f.type == PQ_T_STRUCT) m->column_orders[i] = f.id;
            ICD_TRY(pq_thrift_skip(c->r, f.type));
        }
        if (rc_f < 0) return rc_f;
    }
    pq_thrift_container_end(c->r);
    return 0;
}

static int decode_file_meta(ctx *c, pq_file_meta *m)
{
    pq_tfield f;
    unsigned seen = 0;
    ICD_TRY(pq_thrift_struct_begin(c->r));
    int16_t last_f = 0;
    int rc_f;
    while ((rc_f = next_field(c, &last_f, &f, T_FILE)) > 0) {
        void *arr;
        switch (f.id) {
        case 1:
            ICD_TRY(read_i32(c, &f, &m->version));
            seen |= 1;
            break;
        case 2:
            ICD_TRY(
                list_alloc(c, &f, PQ_T_STRUCT, sizeof(pq_schema_element), &arr, &m->num_schema));
            m->schema = arr;
            for (uint32_t i = 0; i < m->num_schema; i++)
                ICD_TRY(decode_schema_element(c, &m->schema[i]));
            pq_thrift_container_end(c->r);
            seen |= 2;
            break;
        case 3:
            ICD_TRY(read_i64(c, &f, &m->num_rows));
            seen |= 4;
            break;
        case 4:
            ICD_TRY(list_alloc(c, &f, PQ_T_STRUCT, sizeof(pq_row_group), &arr, &m->num_row_groups));
            m->row_groups = arr;
            for (uint32_t i = 0; i < m->num_row_groups; i++)
                ICD_TRY(decode_row_group(c, &m->row_groups[i]));
            pq_thrift_container_end(c->r);
            seen |= 8;
            break;
        case 5:
            ICD_TRY(decode_kv_list(c, &f, &m->kv, &m->num_kv));
            break;
        case 6:
            ICD_TRY(read_str(c, &f, &m->created_by));
            break;
        case 7:
            ICD_TRY(decode_column_orders(c, &f, m));
            break;
        case 8:
            m->encrypted = true;
            ICD_TRY(pq_thrift_skip(c->r, f.type));
            break;
        default:
            ICD_TRY(pq_thrift_skip(c->r, f.type));
        }
    }
    if (rc_f < 0) return rc_f;
    if ((seen & 15) != 15)
        return pq_thrift_corrupt(c->r, "FileMetaData lacks a required field (%s)",
                                 !(seen & 2)   ? "schema"
                                 : !(seen & 4) ? "num_rows"
                                 : !(seen & 8) ? "row_groups"
                                               : "version");
    return 0;
}

int pq_meta_decode(const uint8_t *buf, size_t n, icd_arena *arena, pq_file_meta *out,
                   const char *location, int64_t base_offset, icd_error *err)
{
    memset(out, 0, sizeof *out);
    pq_thrift r;
    pq_thrift_init(&r, buf, n, location, base_offset, "Parquet footer", err);
    ctx c = {&r, arena};
    ICD_TRY(decode_file_meta(&c, out));
    if (out->encrypted)
        return icd_fail(err, ICD_EUNSUPPORTED, location, -1,
                        "encrypted Parquet files are not supported");
    for (uint32_t g = 0; g < out->num_row_groups; g++) {
        for (uint32_t i = 0; i < out->row_groups[g].num_columns; i++) {
            const pq_column_chunk *cc = &out->row_groups[g].columns[i];
            if (cc->encrypted || !cc->has_meta_data) {
                if (cc->encrypted)
                    return icd_fail(err, ICD_EUNSUPPORTED, location, -1,
                                    "encrypted Parquet files are not supported");
                return icd_fail(err, ICD_ECORRUPT, location, -1,
                                "corrupt Parquet footer: row group %u column %u has no "
                                "ColumnMetaData",
                                g, i);
            }
        }
    }
    if (out->num_rows < 0)
        return icd_fail(err, ICD_ECORRUPT, location, -1,
                        "corrupt Parquet footer: negative num_rows");
    return 0;
}

int pq_meta_read(icd_file *f, icd_arena *arena, pq_file_meta *out, icd_error *err)
{
    uint64_t size = icd_file_size(f);
    if (size < 12)
        return icd_fail(err, ICD_ECORRUPT, f->location, -1,
                        "not a Parquet file: %llu bytes is too small", (unsigned long long)size);
    uint8_t head[4], tail[8];
    ICD_TRY(icd_file_read_at(f, 0, head, 4, err));
    ICD_TRY(icd_file_read_at(f, size - 8, tail, 8, err));
    if (!memcmp(tail + 4, "PARE", 4) || !memcmp(head, "PARE", 4))
        return icd_fail(err, ICD_EUNSUPPORTED, f->location, -1,
                        "encrypted Parquet files are not supported (encrypted footer)");
    if (memcmp(head, "PAR1", 4))
        return icd_fail(err, ICD_ECORRUPT, f->location, 0,
                        "not a Parquet file: missing PAR1 magic at the start");
    if (memcmp(tail + 4, "PAR1", 4))
        return icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)size - 4,
                        "not a Parquet file or truncated: missing PAR1 magic at the end");
    uint32_t len = icd_load_le32(tail);
    if ((uint64_t)len > size - 12)
        return icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)size - 8,
                        "corrupt Parquet footer: length %u exceeds the file size %llu", len,
                        (unsigned long long)size);
    uint64_t off = size - 8 - len;
    uint8_t *buf = icd_arena_alloc(arena, len ? len : 1);
    if (!buf) return icd_fail_nomem(err);
    ICD_TRY(icd_file_read_at(f, off, buf, len, err));
    return pq_meta_decode(buf, len, arena, out, f->location, (int64_t)off, err);
}

const char *pq_type_name(int type)
{
    static const char *const N[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                    "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return type >= 0 && type < 8 ? N[type] : "UNKNOWN";
}

const char *pq_converted_name(int c)
{
    static const char *const N[] = {"UTF8",
                                    "MAP",
                                    "MAP_KEY_VALUE",
                                    "LIST",
                                    "ENUM",
                                    "DECIMAL",
                                    "DATE",
                                    "TIME_MILLIS",
                                    "TIME_MICROS",
                                    "TIMESTAMP_MILLIS",
                                    "TIMESTAMP_MICROS",
                                    "UINT_8",
                                    "UINT_16",
                                    "UINT_32",
                                    "UINT_64",
                                    "INT_8",
                                    "INT_16",
                                    "INT_32",
                                    "INT_64",
                                    "JSON",
                                    "BSON",
                                    "INTERVAL"};
    return c >= 0 && c < 22 ? N[c] : "UNKNOWN";
}

const char *pq_logical_name(int k)
{
    switch (k) {
    case PQ_LT_NONE:
        return "NONE";
    case PQ_LT_STRING:
        return "STRING";
    case PQ_LT_MAP:
        return "MAP";
    case PQ_LT_LIST:
        return "LIST";
    case PQ_LT_ENUM:
        return "ENUM";
    case PQ_LT_DECIMAL:
        return "DECIMAL";
    case PQ_LT_DATE:
        return "DATE";
    case PQ_LT_TIME:
        return "TIME";
    case PQ_LT_TIMESTAMP:
        return "TIMESTAMP";
    case PQ_LT_INTEGER:
        return "INTEGER";
    case PQ_LT_UNKNOWN:
        return "UNKNOWN";
    case PQ_LT_JSON:
        return "JSON";
    case PQ_LT_BSON:
        return "BSON";
    case PQ_LT_UUID:
        return "UUID";
    case PQ_LT_FLOAT16:
        return "FLOAT16";
    case PQ_LT_VARIANT:
        return "VARIANT";
    case PQ_LT_GEOMETRY:
        return "GEOMETRY";
    case PQ_LT_GEOGRAPHY:
        return "GEOGRAPHY";
    case PQ_LT_VECTOR:
        return "VECTOR";
    default:
        return "UNRECOGNISED";
    }
}

const char *pq_page_type_name(int t)
{
    switch (t) {
    case 0:
        return "DATA_PAGE";
    case 1:
        return "INDEX_PAGE";
    case 2:
        return "DICTIONARY_PAGE";
    case 3:
        return "DATA_PAGE_V2";
    default:
        return "UNKNOWN";
    }
}
