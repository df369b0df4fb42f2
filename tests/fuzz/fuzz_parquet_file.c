/*
 * libFuzzer target: a whole Parquet file, read end to end from memory: footer, schema,
 * every page of every column chunk (decompression, levels, values), record assembly and
 * JSON formatting of every row into a buffer. Rows are capped so that a tiny file that
 * claims billions of (run-length encoded) rows cannot turn into a timeout.
 */
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "formats/parquet/json.h"
#include "formats/parquet/parquet.h"
#include "io/memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ROWS 100000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icd_error err;
    icd_error_clear(&err);
    icd_file *f;
    if (icd_memfile_open(data, size, "fuzz.parquet", &f, &err)) return 0;
    pq_file *pf;
    if (pq_file_open_file(f, &pf, &err)) return 0;
    pq_reader *r = NULL;
    pq_json_writer *w = NULL;
    icd_buf out = ICD_BUF_INIT;
    size_t rows = 0;
    int rc = pq_reader_open(pf, NULL, 0, 1000, &r, &err);
    if (!rc) rc = pq_json_writer_new(pq_file_schema(pf), NULL, 0, &w, &err);
    while (!rc && rows < MAX_ROWS) {
        pq_batch *b;
        rc = pq_reader_next(r, &b, &err);
        if (rc || !b) break;
        pq_json_begin(w, b);
        for (size_t i = 0; i < b->num_rows && !rc; i++) {
            rc = pq_json_row(w, &out, &err);
            icd_buf_clear(&out);
        }
        if (!rc) rc = pq_json_end(w, &err);
        rows += b->num_rows;
    }
    icd_buf_free(&out);
    pq_json_writer_free(w);
    pq_reader_close(r);
    pq_file_close(pf);
    return 0;
}
