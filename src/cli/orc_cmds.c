/*
 * `cat` and `inspect` for ORC files: `cat` streams every row of the file as NDJSON through
 * the ORC batch reader (src/formats/orc/) and orc_json_row; `inspect` prints the tail as one
 * JSON object (postscript facts, schema tree with Iceberg attributes, stripes, file and
 * stripe column statistics, user metadata).
 */
#include "base/datetime.h"
#include "base/jsonw.h"
#include "cli/inspect.h"
#include "formats/orc/orc.h"
#include "formats/orc/orc_codec.h"
#include "formats/orc/orc_json.h"

int cli_cat_orc(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    orc_file *f;
    ICD_TRY(orc_file_open(&f, io, path, NULL, err));
    orc_reader *r;
    int rc = orc_reader_open(&r, f, NULL, err);
    if (rc) {
        orc_file_free(f);
        return rc;
    }
    orc_batch *batch;
    while ((rc = orc_reader_next(r, &batch, err)) > 0) {
        for (size_t i = 0; i < batch->n; i++) {
            orc_json_row(&out->buf, batch, i, 9);
            icd_buf_putc(&out->buf, '\n');
            cli_out_maybe_flush(out);
        }
    }
    orc_reader_free(r);
    orc_file_free(f);
    return rc < 0 ? rc : 0;
}

static void key(icd_buf *b, bool *first, const char *k)
{
    if (!*first) icd_buf_putc(b, ',');
    *first = false;
    icd_json_cstr(b, k);
    icd_buf_putc(b, ':');
}

static void json_ts_millis(icd_buf *b, int64_t ms, int32_t ns)
{
    int64_t secs = icd_floordiv(ms, 1000);
    int64_t nanos = icd_floormod(ms, 1000) * 1000000 + ns;
    icd_buf_putc(b, '"');
    icd_fmt_timestamp(b, icd_floordiv(secs, 86400), icd_floormod(secs, 86400) * 1000000000 + nanos,
                      9, true);
    icd_buf_putc(b, '"');
}

static void stats_bound(icd_buf *b, const orc_stats *s, bool max)
{
    switch (s->kind) {
    case ORC_STATS_INT:
    case ORC_STATS_COLLECTION:
        icd_json_i64(b, max ? s->max_i : s->min_i);
        break;
    case ORC_STATS_DOUBLE:
        icd_json_double(b, max ? s->max_d : s->min_d);
        break;
    case ORC_STATS_STRING:
    case ORC_STATS_DECIMAL:
        icd_json_str(b, (const char *)(max ? s->max_s : s->min_s), max ? s->max_len : s->min_len);
        break;
    case ORC_STATS_DATE:
        icd_json_date(b, max ? s->max_i : s->min_i);
        break;
    case ORC_STATS_TIMESTAMP:
        json_ts_millis(b, max ? s->max_i : s->min_i, max ? s->max_ns : s->min_ns);
        break;
    default:
        icd_buf_puts(b, "null");
    }
}

static void write_stats(icd_buf *b, uint32_t column, const orc_stats *s)
{
    bool first = true;
    icd_buf_putc(b, '{');
    key(b, &first, "column");
    icd_json_u64(b, column);
    if (s->has_count) {
        key(b, &first, "count");
        icd_json_u64(b, s->count);
    }
    if (s->has_null_known) {
        key(b, &first, "has_null");
        icd_buf_puts(b, s->has_null ? "true" : "false");
    }
    if (s->has_min) {
        key(b, &first, "min");
        stats_bound(b, s, false);
    }
    if (s->has_max) {
        key(b, &first, "max");
        stats_bound(b, s, true);
    }
    if (s->has_sum) {
        key(b, &first, "sum");
        if (s->kind == ORC_STATS_DOUBLE)
            icd_json_double(b, s->sum_d);
        else
            icd_json_i64(b, s->sum_i);
    }
    if (s->kind == ORC_STATS_BOOLEAN) {
        key(b, &first, "true_count");
        icd_json_u64(b, s->true_count);
    }
    icd_buf_putc(b, '}');
}

static void write_type(icd_buf *b, const orc_type *t)
{
    bool first = true;
    icd_buf_putc(b, '{');
    key(b, &first, "id");
    icd_json_u64(b, t->id);
    key(b, &first, "name");
    icd_json_cstr(b, t->name);
    key(b, &first, "kind");
    icd_json_cstr(b, orc_kind_name(t->kind));
    if (t->kind == ORC_DECIMAL) {
        key(b, &first, "precision");
        icd_json_u64(b, t->precision);
        key(b, &first, "scale");
        icd_json_u64(b, t->scale);
    }
    if (t->kind == ORC_VARCHAR || t->kind == ORC_CHAR) {
        key(b, &first, "max_length");
        icd_json_u64(b, t->max_length);
    }
    if (t->field_id >= 0) {
        key(b, &first, "field_id");
        icd_json_i64(b, t->field_id);
        key(b, &first, "required");
        icd_buf_puts(b, t->required ? "true" : "false");
    }
    if (t->nattrs) {
        key(b, &first, "attributes");
        icd_buf_putc(b, '{');
        for (uint32_t i = 0; i < t->nattrs; i++) {
            if (i) icd_buf_putc(b, ',');
            icd_json_cstr(b, t->attrs[i].key);
            icd_buf_putc(b, ':');
            icd_json_cstr(b, t->attrs[i].value);
        }
        icd_buf_putc(b, '}');
    }
    if (t->nchildren) {
        key(b, &first, "children");
        icd_buf_putc(b, '[');
        for (uint32_t i = 0; i < t->nchildren; i++) {
            if (i) icd_buf_putc(b, ',');
            write_type(b, t->children[i]);
        }
        icd_buf_putc(b, ']');
    }
    icd_buf_putc(b, '}');
}

static void write_column_stats(icd_buf *b, const orc_file *f, long stripe)
{
    icd_buf_putc(b, '[');
    bool any = false;
    for (uint32_t c = 0; c < orc_file_ncolumns(f); c++) {
        orc_stats s;
        if (stripe < 0)
            orc_file_column_stats(f, c, &s);
        else
            orc_file_stripe_stats(f, (size_t)stripe, c, &s);
        if (!s.present) continue;
        if (any) icd_buf_putc(b, ',');
        any = true;
        write_stats(b, c, &s);
    }
    icd_buf_putc(b, ']');
}

int cli_inspect_orc(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    orc_file *f;
    ICD_TRY(orc_file_open(&f, io, path, NULL, err));
    icd_buf *b = &out->buf;
    bool first = true;
    icd_buf_putc(b, '{');
    key(b, &first, "format");
    icd_json_cstr(b, "orc");
    key(b, &first, "location");
    icd_json_cstr(b, orc_file_location(f));
    key(b, &first, "rows");
    icd_json_u64(b, orc_file_rows(f));
    uint32_t major, minor;
    orc_file_version(f, &major, &minor);
    key(b, &first, "version");
    icd_buf_printf(b, "\"%u.%u\"", major, minor);
    key(b, &first, "writer_version");
    icd_json_u64(b, orc_file_writer_version(f));
    if (orc_file_writer(f) >= 0) {
        key(b, &first, "writer");
        icd_json_i64(b, orc_file_writer(f));
    }
    if (*orc_file_software_version(f)) {
        key(b, &first, "software_version");
        icd_json_cstr(b, orc_file_software_version(f));
    }
    key(b, &first, "compression");
    icd_json_cstr(b, orc_compression_name(orc_file_compression(f)));
    key(b, &first, "compression_block_size");
    icd_json_u64(b, orc_file_block_size(f));
    key(b, &first, "row_index_stride");
    icd_json_u64(b, orc_file_row_index_stride(f));
    key(b, &first, "schema");
    write_type(b, orc_file_root(f));
    key(b, &first, "stripes");
    icd_buf_putc(b, '[');
    for (size_t i = 0; i < orc_file_nstripes(f); i++) {
        const orc_stripe_info *s = orc_file_stripe(f, i);
        icd_buf_printf(b,
                       "%s{\"offset\":%llu,\"index_length\":%llu,\"data_length\":%llu,"
                       "\"footer_length\":%llu,\"rows\":%llu,\"first_row\":%llu,\"statistics\":",
                       i ? "," : "", (unsigned long long)s->offset,
                       (unsigned long long)s->index_length, (unsigned long long)s->data_length,
                       (unsigned long long)s->footer_length, (unsigned long long)s->rows,
                       (unsigned long long)s->first_row);
        write_column_stats(b, f, (long)i);
        icd_buf_putc(b, '}');
    }
    icd_buf_putc(b, ']');
    key(b, &first, "statistics");
    write_column_stats(b, f, -1);
    key(b, &first, "metadata");
    icd_buf_putc(b, '{');
    for (size_t i = 0; i < orc_file_nmetadata(f); i++) {
        const uint8_t *k, *v;
        size_t kl, vl;
        orc_file_metadata(f, i, &k, &kl, &v, &vl);
        if (i) icd_buf_putc(b, ',');
        icd_json_str(b, (const char *)k, kl);
        icd_buf_putc(b, ':');
        icd_json_base64(b, v, vl);
    }
    icd_buf_puts(b, "}}\n");
    orc_file_free(f);
    return 0;
}
