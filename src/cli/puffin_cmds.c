/*
 * `icedruid inspect FILE.puffin`: the Puffin footer as one JSON document (file properties,
 * every blob with its type, fields, snapshot, offset, length, codec and properties) and,
 * for deletion-vector-v1 blobs, what the blob holds: decoded cardinality, number of 32-bit
 * bitmaps, whether the CRC matches, and the first positions. A blob that does not decode
 * is shown with its error and makes the command fail after the whole document is printed.
 */
#include <stdlib.h>
#include <string.h>

#include "base/jsonw.h"
#include "cli/inspect.h"
#include "iceberg/deletes/dv.h"
#include "iceberg/deletes/puffin.h"

#define FIRST_POSITIONS 10

static void put_props(icd_buf *b, const ice_puffin_prop *props, size_t n)
{
    icd_buf_putc(b, '{');
    for (size_t i = 0; i < n; i++) {
        if (i) icd_buf_puts(b, ", ");
        icd_json_cstr(b, props[i].key);
        icd_buf_puts(b, ": ");
        icd_json_cstr(b, props[i].value);
    }
    icd_buf_putc(b, '}');
}

/* The deletion_vector member of a DV blob; returns the decode error (0 when fine). */
static int put_dv(icd_buf *b, ice_puffin *p, const ice_puffin_blob *blob, icd_error *first_err)
{
    icd_error err;
    icd_error_clear(&err);
    ice_posset *set = NULL;
    ice_dv_info info;
    int rc = ice_dv_read_blob(p, blob, NULL, -1, ICE_DV_SKIP_CRC, &set, &info, &err);
    icd_buf_puts(b, ",\n      \"deletion_vector\": {");
    if (rc) {
        char line[2400];
        icd_error_format(&err, line, sizeof line);
        icd_buf_puts(b, "\"error\": ");
        icd_json_cstr(b, line);
        icd_buf_putc(b, '}');
        if (!first_err->code) *first_err = err;
        return rc;
    }
    icd_buf_puts(b, "\"cardinality\": ");
    icd_json_u64(b, info.cardinality);
    icd_buf_puts(b, ", \"bitmaps\": ");
    icd_json_u64(b, info.nbitmaps);
    icd_buf_printf(b, ", \"run_containers\": %s, \"crc_ok\": %s, \"crc\": \"%08x\"",
                   info.has_run_containers ? "true" : "false", info.crc_ok ? "true" : "false",
                   info.crc_stored);
    if (!info.crc_ok) icd_buf_printf(b, ", \"crc_computed\": \"%08x\"", info.crc_computed);
    uint64_t first[FIRST_POSITIONS];
    size_t n = ice_posset_list(set, 0, first, FIRST_POSITIONS);
    icd_buf_puts(b, ", \"first_positions\": [");
    for (size_t i = 0; i < n; i++) {
        if (i) icd_buf_puts(b, ", ");
        icd_json_u64(b, first[i]);
    }
    icd_buf_puts(b, "]}");
    ice_posset_free(set);
    if (!info.crc_ok && !first_err->code)
        icd_fail(first_err, ICD_ECORRUPT, p->location, (int64_t)(blob->offset + blob->length - 4),
                 "deletion vector at offset %llu: CRC-32 mismatch: stored 0x%08x, computed "
                 "0x%08x",
                 (unsigned long long)blob->offset, info.crc_stored, info.crc_computed);
    return 0;
}

static void put_blob(icd_buf *b, ice_puffin *p, const ice_puffin_blob *blob, icd_error *first_err)
{
    icd_buf_puts(b, "    {\"type\": ");
    icd_json_cstr(b, blob->type);
    icd_buf_puts(b, ", \"fields\": [");
    for (size_t i = 0; i < blob->nfields; i++)
        icd_buf_printf(b, "%s%d", i ? ", " : "", (int)blob->fields[i]);
    icd_buf_puts(b, "], \"snapshot-id\": ");
    icd_json_i64(b, blob->snapshot_id);
    icd_buf_puts(b, ", \"sequence-number\": ");
    icd_json_i64(b, blob->sequence_number);
    icd_buf_puts(b, ",\n      \"offset\": ");
    icd_json_u64(b, blob->offset);
    icd_buf_puts(b, ", \"length\": ");
    icd_json_u64(b, blob->length);
    icd_buf_puts(b, ", \"compression-codec\": ");
    if (blob->codec)
        icd_json_cstr(b, blob->codec);
    else
        icd_buf_puts(b, "null");
    icd_buf_puts(b, ",\n      \"properties\": ");
    put_props(b, blob->props, blob->nprops);
    if (!strcmp(blob->type, ICE_PUFFIN_BLOB_DV)) put_dv(b, p, blob, first_err);
    icd_buf_putc(b, '}');
}

int cli_inspect_puffin(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    ice_puffin *p;
    ICD_TRY(ice_puffin_open(io, path, &p, err));
    icd_buf *b = &out->buf;
    icd_buf_puts(b, "{\n  \"file\": ");
    icd_json_cstr(b, path);
    icd_buf_puts(b, ",\n  \"format\": \"puffin\",\n  \"file_size\": ");
    icd_json_u64(b, p->file_size);
    icd_buf_puts(b, ",\n  \"footer\": {\"offset\": ");
    icd_json_u64(b, p->footer_offset);
    icd_buf_printf(b, ", \"payload_size\": %u, \"compressed\": %s}", p->payload_size,
                   p->compressed ? "true" : "false");
    icd_buf_puts(b, ",\n  \"properties\": ");
    put_props(b, p->props, p->nprops);
    icd_buf_puts(b, ",\n  \"blobs\": [");
    icd_error first_err;
    icd_error_clear(&first_err);
    for (size_t i = 0; i < p->nblobs; i++) {
        icd_buf_puts(b, i ? ",\n" : "\n");
        put_blob(b, p, &p->blobs[i], &first_err);
        cli_out_maybe_flush(out);
    }
    icd_buf_puts(b, p->nblobs ? "\n  ]\n}\n" : "]\n}\n");
    ice_puffin_close(p);
    if (first_err.code) {
        *err = first_err;
        return first_err.code;
    }
    return 0;
}
