/*
 * `cat` and `inspect` for Avro container files (manifest lists, manifests, Avro data
 * files), over formats/avro: `cat` prints each record as one NDJSON line (design.md §3),
 * `inspect` the header (codec, sync marker, metadata, writer schema) and the block and
 * record counts as one JSON object. Iceberg-aware inspection comes with the planner.
 */
#include <jansson.h>
#include <stdlib.h>

#include "base/jsonw.h"
#include <string.h>

#include "cli/inspect.h"
#include "formats/avro/container.h"
#include "formats/avro/json.h"

int cli_cat_avro(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    icd_avro_reader *r;
    ICD_TRY(icd_avro_reader_open(io, path, &r, err));
    icd_arena arena = ICD_ARENA_INIT;
    icd_avro_value v;
    bool eof = false;
    int rc;
    while (!(rc = icd_avro_reader_next(r, &arena, &v, &eof, err)) && !eof) {
        if ((rc = icd_avro_value_json(&out->buf, &v, err)) != 0) {
            icd_error_set_file(err, path);
            icd_error_wrap(err, "record %llu",
                           (unsigned long long)icd_avro_reader_records_read(r) - 1);
            break;
        }
        icd_buf_putc(&out->buf, '\n');
        cli_out_maybe_flush(out);
        icd_arena_reset(&arena);
        if (out->failed || out->buf.oom) break; /* cli_out_finish reports it */
    }
    icd_arena_free(&arena);
    icd_avro_reader_free(r);
    return rc;
}

/* A metadata value: embedded as JSON when it is a JSON object or array (Iceberg's
 * "schema", "partition-spec"), else a string. */
static void put_meta_value(icd_buf *b, const icd_avro_meta *m)
{
    json_t *j = json_loadb(m->value, m->len, 0, NULL);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    if (text)
        icd_buf_puts(b, text);
    else
        icd_json_str(b, m->value, m->len);
    free(text);
    json_decref(j);
}

static void put_hex(icd_buf *b, const uint8_t *p, size_t n)
{
    static const char HEX[] = "0123456789abcdef";
    icd_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        icd_buf_putc(b, HEX[p[i] >> 4]);
        icd_buf_putc(b, HEX[p[i] & 15]);
    }
    icd_buf_putc(b, '"');
}

/* Walks every block, stepping over (and so validating) each record. */
static int count_blocks(icd_avro_reader *r, uint64_t *blocks, uint64_t *records, icd_error *err)
{
    *blocks = *records = 0;
    for (;;) {
        bool eof;
        ICD_TRY(icd_avro_reader_next_block(r, &eof, err));
        if (eof) return 0;
        (*blocks)++;
        int64_t n = icd_avro_reader_block_count(r);
        for (int64_t i = 0; i < n; i++)
            ICD_TRY(icd_avro_reader_skip(r, &eof, err));
        *records += (uint64_t)n;
    }
}

int cli_inspect_avro(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    icd_avro_reader *r;
    ICD_TRY(icd_avro_reader_open(io, path, &r, err));
    uint64_t blocks, records;
    int rc = count_blocks(r, &blocks, &records, err);
    if (rc) {
        icd_avro_reader_free(r);
        return rc;
    }
    icd_buf *b = &out->buf;
    icd_buf_puts(b, "{\"file\":");
    icd_json_cstr(b, path);
    icd_buf_puts(b, ",\"format\":\"avro\",\"codec\":");
    icd_json_cstr(b, icd_avro_codec_name(icd_avro_reader_codec(r)));
    icd_buf_puts(b, ",\"sync\":");
    put_hex(b, icd_avro_reader_sync(r), 16);
    icd_buf_puts(b, ",\"header_bytes\":");
    icd_json_u64(b, icd_avro_reader_header_size(r));
    icd_buf_puts(b, ",\"blocks\":");
    icd_json_u64(b, blocks);
    icd_buf_puts(b, ",\"records\":");
    icd_json_u64(b, records);
    icd_buf_puts(b, ",\"metadata\":{");
    for (size_t i = 0; i < icd_avro_reader_meta_count(r); i++) {
        const icd_avro_meta *m = icd_avro_reader_meta_at(r, i);
        if (i) icd_buf_putc(b, ',');
        icd_json_cstr(b, m->key);
        icd_buf_putc(b, ':');
        put_meta_value(b, m);
    }
    icd_buf_puts(b, "},\"schema\":");
    put_meta_value(b, icd_avro_reader_meta(r, "avro.schema"));
    /* Iceberg manifests and manifest lists: their entries too (fields as stored). */
    const char *root = icd_avro_reader_schema(r)->name ? icd_avro_reader_schema(r)->name : "";
    const char *kind =
        icd_avro_reader_meta(r, "partition-spec") || strstr(root, "manifest_entry") ? "manifest"
        : icd_avro_reader_meta(r, "snapshot-id") || strstr(root, "manifest_file") ? "manifest_list"
                                                                                  : NULL;
    icd_avro_reader_free(r);
    if (kind) {
        icd_buf_puts(b, ",\"iceberg_file\":");
        icd_json_cstr(b, kind);
        icd_buf_puts(b, ",\"entries\":[");
        ICD_TRY(icd_avro_reader_open(io, path, &r, err));
        icd_arena a = ICD_ARENA_INIT;
        for (size_t i = 0;; i++) {
            icd_avro_value v;
            bool eof;
            icd_arena_reset(&a);
            if ((rc = icd_avro_reader_next(r, &a, &v, &eof, err)) || eof) break;
            icd_buf_puts(b, i ? ",\n" : "\n");
            if ((rc = icd_avro_value_json(b, &v, err))) break;
        }
        icd_arena_free(&a);
        icd_avro_reader_free(r);
        if (rc) return rc;
        icd_buf_puts(b, "]");
    }
    icd_buf_puts(b, "}\n");
    return 0;
}
