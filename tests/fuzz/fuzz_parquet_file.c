/*
 * libFuzzer target: a whole Parquet file, read end to end from memory: footer, schema,
 * every page of every column chunk (decompression, levels, values), record assembly and
 * JSON formatting of every row into a buffer. Rows are capped so that a tiny file that
 * claims billions of (run-length encoded) rows cannot turn into a timeout. The file is
 * read twice, whole column chunks and through the smallest read budget (16 KiB windows,
 * pages larger than that read alone): both must fail alike or give the same rows.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/buf.h"
#include "formats/parquet/json.h"
#include "formats/parquet/parquet.h"
#include "io/memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ROWS 100000

/* Reads every row with the given read budget; *hash folds the JSON of every row. */
static int read_all(pq_file *pf, size_t budget, uint64_t *hash, size_t *rows)
{
    icd_error err;
    icd_error_clear(&err);
    pq_reader *r = NULL;
    pq_json_writer *w = NULL;
    icd_buf out = ICD_BUF_INIT;
    *hash = 1469598103934665603ull;
    *rows = 0;
    int rc = pq_reader_open(pf, NULL, 0, 1000, &r, &err);
    if (!rc) pq_reader_set_read_budget(r, budget);
    if (!rc) rc = pq_json_writer_new(pq_file_schema(pf), NULL, 0, &w, &err);
    while (!rc && *rows < MAX_ROWS) {
        pq_batch *b;
        rc = pq_reader_next(r, &b, &err);
        if (rc || !b) break;
        pq_json_begin(w, b);
        for (size_t i = 0; i < b->num_rows && !rc; i++) {
            rc = pq_json_row(w, &out, &err);
            for (size_t k = 0; k < out.len; k++)
                *hash = (*hash ^ (uint8_t)out.data[k]) * 1099511628211ull;
            icd_buf_clear(&out);
        }
        if (!rc) rc = pq_json_end(w, &err);
        *rows += b->num_rows;
    }
    icd_buf_free(&out);
    pq_json_writer_free(w);
    pq_reader_close(r);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icd_error err;
    icd_error_clear(&err);
    icd_file *f;
    if (icd_memfile_open(data, size, "fuzz.parquet", &f, &err)) return 0;
    pq_file *pf;
    if (pq_file_open_file(f, &pf, &err)) return 0;
    uint64_t h0, h1;
    size_t n0, n1;
    int rc0 = read_all(pf, 0, &h0, &n0);
    int rc1 = read_all(pf, 1, &h1, &n1);
    if ((rc0 != 0) != (rc1 != 0) || (!rc0 && (h0 != h1 || n0 != n1))) abort();
    pq_file_close(pf);
    return 0;
}
