/*
 * libFuzzer target for the ORC reader (src/formats/orc/): an input starting with "ORC" is
 * a whole file read from memory (orc_memfile) — tail, schema, statistics of every column
 * and stripe, then every row of every stripe through the batch reader and the JSON writer,
 * then again with a column selection and a stripe filter (the Iceberg reader's use).
 * Any other input drives one stream decoder directly, chosen by its first byte: integer
 * RLE v1/v2 (signed and unsigned), byte RLE, boolean RLE, decimal varints, or the chunk
 * framing of each codec. Errors are expected; crashes, leaks and sanitizer reports are
 * bugs. Small limits keep each run fast and its memory low.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonw.h"
#include "formats/orc/orc.h"
#include "formats/orc/orc_codec.h"
#include "formats/orc/orc_json.h"
#include "formats/orc/orc_memfile.h"
#include "formats/orc/orc_rle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Second pass: every other stripe and every other top-level column, as the Iceberg
 * reader selects columns by field id and skips stripes by statistics. */
static bool keep_even(void *ctx, const orc_file *f, size_t stripe)
{
    (void)ctx;
    (void)f;
    return stripe % 2 == 0;
}

static void drive_selection(orc_file *f, icd_buf *b)
{
    const orc_type *root = orc_file_root(f);
    const orc_type *cols[32];
    size_t n = 0;
    for (uint32_t k = 0; root && root->kind == ORC_STRUCT && k < root->nchildren && n < 32; k += 2)
        cols[n++] = root->children[k];
    if (n == 0) return;
    orc_read_opts ro = {.batch_rows = 7,
                        .columns = cols,
                        .ncolumns = n,
                        .keep_stripe = keep_even,
                        .max_batch_values = 1 << 16};
    icd_error err;
    orc_reader *r;
    if (orc_reader_open(&r, f, &ro, &err)) return;
    orc_batch *bt;
    uint64_t rows = 0;
    while (rows < 20000 && orc_reader_next(r, &bt, &err) > 0) {
        for (size_t i = 0; i < bt->n; i++) {
            icd_buf_clear(b);
            orc_json_row(b, bt, i, 6);
        }
        rows += bt->n;
    }
    orc_reader_free(r);
}

static void drive_file(const uint8_t *data, size_t size)
{
    icd_error err;
    icd_file *file;
    if (orc_memfile_open(&file, "fuzz.orc", data, size, &err)) return;
    orc_open_opts oo = {.max_tail_bytes = 1 << 20, .max_stream_bytes = 4 << 20};
    orc_file *f;
    if (orc_file_open_file(&f, file, true, &oo, &err)) return;
    icd_buf b = ICD_BUF_INIT;
    for (uint32_t c = 0; c < orc_file_ncolumns(f); c++) {
        orc_stats s;
        orc_file_column_stats(f, c, &s);
        if (s.has_min && s.min_s) icd_json_str(&b, (const char *)s.min_s, s.min_len);
        for (size_t k = 0; k < orc_file_nstripes(f) && k < 64; k++)
            orc_file_stripe_stats(f, k, c, &s);
    }
    orc_read_opts ro = {.batch_rows = 100, .max_batch_values = 1 << 16};
    orc_reader *r;
    if (orc_reader_open(&r, f, &ro, &err) == 0) {
        orc_batch *bt;
        uint64_t rows = 0;
        while (rows < 20000 && orc_reader_next(r, &bt, &err) > 0) {
            for (size_t i = 0; i < bt->n; i++) {
                icd_buf_clear(&b);
                orc_json_row(&b, bt, i, 9);
            }
            rows += bt->n;
        }
        orc_reader_free(r);
    }
    drive_selection(f, &b);
    icd_buf_free(&b);
    orc_file_free(f);
}

static void drive_stream(uint8_t mode, const uint8_t *p, size_t n)
{
    icd_error err;
    switch (mode % 8) {
    case 0:
    case 1:
    case 2:
    case 3: {
        orc_int_rle d;
        int64_t out[700];
        orc_int_rle_init(&d, p, n, mode & 1, mode & 2);
        for (int i = 0; i < 64; i++)
            if (orc_int_rle_next(&d, out, (size_t)(i * 37 % 700) + 1, &err)) break;
        break;
    }
    case 4: {
        orc_byte_rle d;
        uint8_t out[300];
        orc_byte_rle_init(&d, p, n);
        for (int i = 0; i < 64; i++)
            if (orc_byte_rle_next(&d, out, (size_t)(i * 13 % 300) + 1, &err)) break;
        break;
    }
    case 5: {
        orc_bool_rle d;
        uint8_t out[300];
        orc_bool_rle_init(&d, p, n);
        for (int i = 0; i < 64; i++)
            if (orc_bool_rle_next(&d, out, (size_t)(i * 11 % 300) + 1, &err)) break;
        break;
    }
    case 6: {
        orc_cursor c;
        orc_cursor_init(&c, p, n);
        int64_t hi;
        uint64_t lo;
        while (orc_cursor_left(&c) && orc_read_varint128(&c, &hi, &lo, &err) == 0) {
        }
        break;
    }
    default: {
        icd_buf out = ICD_BUF_INIT;
        int kind = (mode >> 3) % 6;
        if (kind != ORC_COMP_NONE)
            orc_decompress(kind, 1 + (mode >> 5) * 4096u, p, n, 1 << 20, &out, &err);
        icd_buf_free(&out);
        break;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 3 && !memcmp(data, "ORC", 3))
        drive_file(data, size);
    else if (size >= 1)
        drive_stream(data[0], data + 1, size - 1);
    return 0;
}
