/*
 * `icedruid cat FILE.parquet` and `icedruid inspect FILE.parquet`.
 *
 * cat streams the file batch by batch: pq_reader yields columnar batches of whole rows,
 * pq_json writes each row straight from the batch into the output buffer, and the buffer
 * is flushed whenever it grows past the cli_out threshold. inspect prints the footer
 * (schema tree, row groups, column chunks with decoded statistics) as one JSON object.
 */
#include <string.h>

#include "base/jsonw.h"
#include "cli/inspect.h"
#include "formats/parquet/codec.h"
#include "formats/parquet/json.h"
#include "formats/parquet/parquet.h"

int cli_cat_parquet(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    pq_file *pf = NULL;
    pq_reader *r = NULL;
    pq_json_writer *w = NULL;
    int rc = pq_file_open(io, path, &pf, err);
    if (!rc) rc = pq_reader_open(pf, NULL, 0, 0, &r, err);
    if (!rc) rc = pq_json_writer_new(pq_file_schema(pf), NULL, 0, &w, err);
    while (!rc) {
        pq_batch *b;
        rc = pq_reader_next(r, &b, err);
        if (rc || !b) break;
        pq_json_begin(w, b);
        for (size_t i = 0; i < b->num_rows && !rc; i++) {
            rc = pq_json_row(w, &out->buf, err);
            icd_buf_putc(&out->buf, '\n');
            cli_out_maybe_flush(out);
        }
        if (out->failed) break; /* cli_out_finish reports it */
        if (!rc) rc = pq_json_end(w, err);
    }
    if (rc) {
        icd_error_set_file(err, path);
        icd_buf_clear(&out->buf); /* no partial rows after an error */
    }
    pq_json_writer_free(w);
    pq_reader_close(r);
    pq_file_close(pf);
    return rc;
}

/* --- inspect --- */

static void key(icd_buf *b, const char *k)
{
    icd_json_cstr(b, k);
    icd_buf_putc(b, ':');
}

static void kstr(icd_buf *b, const char *k, const char *v)
{
    key(b, k);
    if (v)
        icd_json_cstr(b, v);
    else
        icd_buf_append(b, "null", 4);
    icd_buf_putc(b, ',');
}

static void kint(icd_buf *b, const char *k, int64_t v)
{
    key(b, k);
    icd_json_i64(b, v);
    icd_buf_putc(b, ',');
}

static void kbool(icd_buf *b, const char *k, bool v)
{
    key(b, k);
    icd_buf_puts(b, v ? "true" : "false");
    icd_buf_putc(b, ',');
}

/* Replaces a trailing comma by `close`. */
static void close_obj(icd_buf *b, char close)
{
    if (b->len && b->data[b->len - 1] == ',')
        b->data[b->len - 1] = close;
    else
        icd_buf_putc(b, close);
}

static void put_str(icd_buf *b, const pq_str *s)
{
    if (s->ptr)
        icd_json_str(b, s->ptr, s->len);
    else
        icd_buf_append(b, "null", 4);
}

static void put_kv(icd_buf *b, const pq_kv *kv, uint32_t n)
{
    icd_buf_putc(b, '[');
    for (uint32_t i = 0; i < n; i++) {
        if (i) icd_buf_putc(b, ',');
        icd_buf_append(b, "{\"key\":", 7);
        put_str(b, &kv[i].key);
        icd_buf_append(b, ",\"value\":", 9);
        put_str(b, &kv[i].value);
        icd_buf_putc(b, '}');
    }
    icd_buf_putc(b, ']');
}

static const char *unit_name(int u)
{
    return u == PQ_UNIT_MILLIS   ? "MILLIS"
           : u == PQ_UNIT_MICROS ? "MICROS"
           : u == PQ_UNIT_NANOS  ? "NANOS"
                                 : "UNKNOWN";
}

static void put_logical(icd_buf *b, const pq_logical_type *lt)
{
    icd_buf_putc(b, '{');
    kstr(b, "type", pq_logical_name(lt->kind));
    switch (lt->kind) {
    case PQ_LT_DECIMAL:
        kint(b, "scale", lt->scale);
        kint(b, "precision", lt->precision);
        break;
    case PQ_LT_TIME:
    case PQ_LT_TIMESTAMP:
        kstr(b, "unit", unit_name(lt->unit));
        kbool(b, "is_adjusted_to_utc", lt->utc);
        break;
    case PQ_LT_INTEGER:
        kint(b, "bit_width", lt->bit_width);
        kbool(b, "is_signed", lt->is_signed);
        break;
    case PQ_LT_UNRECOGNISED:
        kint(b, "union_field_id", lt->unrecognised_id);
        break;
    default:
        break;
    }
    close_obj(b, '}');
}

static void put_node(icd_buf *b, const pq_node *n)
{
    static const char *const KIND[] = {"primitive", "struct", "list", "map"};
    icd_buf_putc(b, '{');
    kstr(b, "name", n->name);
    key(b, "field_id");
    if (n->has_field_id)
        icd_json_i64(b, n->field_id);
    else
        icd_buf_append(b, "null", 4);
    icd_buf_putc(b, ',');
    if (n->depth > 0) kstr(b, "repetition", pq_repetition_name(n->repetition));
    kstr(b, "kind", KIND[n->kind]);
    if (n->physical_type >= 0) {
        kstr(b, "physical_type", pq_type_name(n->physical_type));
        if (n->physical_type == PQ_FIXED_LEN_BYTE_ARRAY) kint(b, "type_length", n->type_length);
    }
    if (n->converted != PQ_CONV_NONE) kstr(b, "converted_type", pq_converted_name(n->converted));
    if (n->elem->has_scale) kint(b, "scale", n->elem->scale);
    if (n->elem->has_precision) kint(b, "precision", n->elem->precision);
    if (n->logical.kind != PQ_LT_NONE) {
        key(b, "logical_type");
        put_logical(b, &n->logical);
        icd_buf_putc(b, ',');
    }
    if (n->depth > 0) {
        kint(b, "max_definition_level", n->def_level);
        kint(b, "max_repetition_level", n->rep_level);
    }
    if (n->leaf_index >= 0) {
        kint(b, "column_index", n->leaf_index);
        kstr(b, "path", n->dotted);
    }
    if (n->num_children) {
        key(b, "children");
        icd_buf_putc(b, '[');
        for (uint32_t i = 0; i < n->num_children; i++) {
            if (i) icd_buf_putc(b, ',');
            put_node(b, n->children[i]);
        }
        icd_buf_append(b, "],", 2);
    }
    close_obj(b, '}');
}

/* A statistics bound printed like a value of the column. */
static void put_bound(icd_buf *b, const pq_node *leaf, const pq_stat_value *v)
{
    pq_column_batch cb;
    memset(&cb, 0, sizeof cb);
    union {
        uint8_t u8;
        int32_t i32;
        int64_t i64;
        float f;
        double d;
        pq_bytes bytes;
    } tmp;
    cb.values = &tmp;
    switch (v->kind) {
    case PQ_STAT_BOOL:
        tmp.u8 = v->b;
        break;
    case PQ_STAT_INT:
    case PQ_STAT_UINT: {
        int64_t x = v->kind == PQ_STAT_INT ? v->i : (int64_t)v->u;
        if (leaf->physical_type == PQ_INT32)
            tmp.i32 = (int32_t)x;
        else
            tmp.i64 = x;
        break;
    }
    case PQ_STAT_DOUBLE:
        if (leaf->physical_type == PQ_FLOAT) {
            tmp.f = (float)v->d;
        } else if (leaf->physical_type == PQ_DOUBLE) {
            tmp.d = v->d;
        } else {
            icd_json_double(b, v->d); /* FLOAT16 */
            return;
        }
        break;
    case PQ_STAT_BYTES:
        tmp.bytes = v->bytes;
        break;
    default:
        icd_buf_append(b, "null", 4);
        return;
    }
    pq_json_value(b, leaf, &cb, 0);
}

static void put_stats(icd_buf *b, const pq_file *pf, uint32_t g, uint32_t li,
                      const pq_statistics *raw)
{
    pq_column_stats st;
    icd_error e;
    icd_error_clear(&e);
    if (pq_file_column_stats(pf, g, li, &st, &e)) return;
    const pq_node *leaf = pq_file_schema(pf)->leaves[li];
    key(b, "statistics");
    icd_buf_putc(b, '{');
    if (st.has_null_count) kint(b, "null_count", st.null_count);
    if (raw->has_distinct_count) kint(b, "distinct_count", raw->distinct_count);
    if (st.has_nan_count) kint(b, "nan_count", st.nan_count);
    if (st.has_min) {
        key(b, "min");
        put_bound(b, leaf, &st.min);
        icd_buf_putc(b, ',');
    }
    if (st.has_max) {
        key(b, "max");
        put_bound(b, leaf, &st.max);
        icd_buf_putc(b, ',');
    }
    if (raw->has_is_min_value_exact) kbool(b, "is_min_value_exact", raw->is_min_value_exact);
    if (raw->has_is_max_value_exact) kbool(b, "is_max_value_exact", raw->is_max_value_exact);
    kbool(b, "has_min_value", raw->min_value.ptr != NULL);
    kbool(b, "has_max_value", raw->max_value.ptr != NULL);
    kbool(b, "has_legacy_min_max", raw->min.ptr != NULL || raw->max.ptr != NULL);
    close_obj(b, '}');
    icd_buf_putc(b, ',');
}

static void put_chunk(icd_buf *b, const pq_file *pf, uint32_t g, uint32_t li)
{
    const pq_column_chunk *cc = &pq_file_row_group(pf, g)->columns[li];
    const pq_column_meta *m = &cc->meta;
    icd_buf_putc(b, '{');
    kstr(b, "path", pq_file_schema(pf)->leaves[li]->dotted);
    kstr(b, "type", pq_type_name(m->type));
    kstr(b, "codec", pq_codec_name(m->codec));
    key(b, "encodings");
    icd_buf_putc(b, '[');
    for (uint32_t i = 0; i < m->num_encodings; i++) {
        if (i) icd_buf_putc(b, ',');
        icd_json_cstr(b, pq_encoding_name(m->encodings[i]));
    }
    icd_buf_append(b, "],", 2);
    kint(b, "num_values", m->num_values);
    kint(b, "total_compressed_size", m->total_compressed_size);
    kint(b, "total_uncompressed_size", m->total_uncompressed_size);
    kint(b, "data_page_offset", m->data_page_offset);
    if (m->has_dictionary_page_offset) kint(b, "dictionary_page_offset", m->dictionary_page_offset);
    if (m->has_index_page_offset) kint(b, "index_page_offset", m->index_page_offset);
    kint(b, "file_offset", cc->file_offset);
    if (cc->file_path.ptr) kstr(b, "file_path", cc->file_path.ptr);
    if (m->has_bloom_filter_offset) kint(b, "bloom_filter_offset", m->bloom_filter_offset);
    if (m->has_bloom_filter_length) kint(b, "bloom_filter_length", m->bloom_filter_length);
    if (cc->has_offset_index) {
        kint(b, "offset_index_offset", cc->offset_index_offset);
        kint(b, "offset_index_length", cc->offset_index_length);
    }
    if (cc->has_column_index) {
        kint(b, "column_index_offset", cc->column_index_offset);
        kint(b, "column_index_length", cc->column_index_length);
    }
    if (m->num_kv) {
        key(b, "key_value_metadata");
        put_kv(b, m->kv, m->num_kv);
        icd_buf_putc(b, ',');
    }
    if (m->num_encoding_stats) {
        key(b, "encoding_stats");
        icd_buf_putc(b, '[');
        for (uint32_t i = 0; i < m->num_encoding_stats; i++) {
            const pq_encoding_stats *es = &m->encoding_stats[i];
            if (i) icd_buf_putc(b, ',');
            icd_buf_putc(b, '{');
            kstr(b, "page_type", pq_page_type_name(es->page_type));
            kstr(b, "encoding", pq_encoding_name(es->encoding));
            kint(b, "count", es->count);
            close_obj(b, '}');
        }
        icd_buf_append(b, "],", 2);
    }
    if (m->stats.present) put_stats(b, pf, g, li, &m->stats);
    close_obj(b, '}');
}

static void put_file(icd_buf *b, const pq_file *pf)
{
    const pq_file_meta *m = pq_file_metadata(pf);
    icd_buf_putc(b, '{');
    kstr(b, "file", pq_file_location(pf));
    kstr(b, "format", "parquet");
    kint(b, "version", m->version);
    kstr(b, "created_by", m->created_by.ptr);
    kint(b, "num_rows", m->num_rows);
    kint(b, "num_row_groups", m->num_row_groups);
    kint(b, "num_columns", pq_file_schema(pf)->num_leaves);
    key(b, "key_value_metadata");
    put_kv(b, m->kv, m->num_kv);
    icd_buf_putc(b, ',');
    if (m->num_column_orders) {
        static const char *const ORD[] = {"UNKNOWN", "TYPE_DEFINED_ORDER", "IEEE_754_TOTAL_ORDER",
                                          "INT96_TIMESTAMP_ORDER"};
        key(b, "column_orders");
        icd_buf_putc(b, '[');
        for (uint32_t i = 0; i < m->num_column_orders; i++) {
            if (i) icd_buf_putc(b, ',');
            int o = m->column_orders[i];
            icd_json_cstr(b, ORD[o >= 0 && o <= 3 ? o : 0]);
        }
        icd_buf_append(b, "],", 2);
    }
    key(b, "schema");
    put_node(b, pq_file_schema(pf)->root);
    icd_buf_putc(b, ',');
    key(b, "row_groups");
    icd_buf_putc(b, '[');
    for (uint32_t g = 0; g < m->num_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        if (g) icd_buf_putc(b, ',');
        icd_buf_putc(b, '{');
        kint(b, "index", g);
        if (rg->has_ordinal) kint(b, "ordinal", rg->ordinal);
        kint(b, "num_rows", rg->num_rows);
        kint(b, "first_row", pq_file_row_group_first_row(pf, g));
        kint(b, "total_byte_size", rg->total_byte_size);
        if (rg->has_total_compressed_size)
            kint(b, "total_compressed_size", rg->total_compressed_size);
        if (rg->has_file_offset) kint(b, "file_offset", rg->file_offset);
        key(b, "columns");
        icd_buf_putc(b, '[');
        for (uint32_t i = 0; i < rg->num_columns; i++) {
            if (i) icd_buf_putc(b, ',');
            put_chunk(b, pf, g, i);
        }
        icd_buf_append(b, "]}", 2);
    }
    icd_buf_append(b, "]}\n", 3);
}

int cli_inspect_parquet(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    pq_file *pf;
    ICD_TRY(pq_file_open(io, path, &pf, err));
    put_file(&out->buf, pf);
    pq_file_close(pf);
    return 0;
}
