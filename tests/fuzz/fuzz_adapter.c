/*
 * libFuzzer target for the format adapter (src/iceberg/adapter*.c, the ORC one in
 * data_orc.c), the reader of every delete file: byte 0 chooses the format (bits 0-1:
 * Parquet, ORC, Avro) and the columns asked for (bit 2: a position delete's file_path and
 * pos with their fallback names; else equality-style columns by field id 1-5 read as
 * long, string, date, decimal(9,2) and timestamptz, bit 3 adding ids 6-7 as double and
 * binary; bit 4 reads the file's units -- row groups, stripes -- one at a time, last first,
 * as the tasks sharing a delete file do); the rest is the file. Every batch's values are
 * touched. Errors are expected;
 * crashes, leaks and sanitizer reports are bugs. With FUZZ_ADAPTER_DEBUG set, the replay
 * prints the rows read or the open error (how the seeds of gen_adapter_seeds.py are checked).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "iceberg/adapter.h"
#include "io/memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const ice_type T_LONG = {.kind = ICE_T_LONG};
static const ice_type T_STRING = {.kind = ICE_T_STRING};
static const ice_type T_DATE = {.kind = ICE_T_DATE};
static const ice_type T_DEC = {.kind = ICE_T_DECIMAL, .precision = 9, .scale = 2};
static const ice_type T_TSTZ = {.kind = ICE_T_TIMESTAMPTZ};
static const ice_type T_DOUBLE = {.kind = ICE_T_DOUBLE};
static const ice_type T_BINARY = {.kind = ICE_T_BINARY};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t mode = data[0];
    static const ice_file_format formats[4] = {ICE_FORMAT_PARQUET, ICE_FORMAT_ORC, ICE_FORMAT_AVRO,
                                               ICE_FORMAT_PARQUET};
    const ice_adapter_col pos_cols[2] = {
        {ICE_FIELD_DELETE_FILE_PATH, &T_STRING, "file_path", "file_path"},
        {ICE_FIELD_DELETE_POS, &T_LONG, "pos", "pos"}};
    const ice_adapter_col eq_cols[7] = {{1, &T_LONG, "a", NULL},  {2, &T_STRING, "b", NULL},
                                        {3, &T_DATE, "c", NULL},  {4, &T_DEC, "d", NULL},
                                        {5, &T_TSTZ, "e", NULL},  {6, &T_DOUBLE, "f", NULL},
                                        {7, &T_BINARY, "g", NULL}};
    ice_adapter_opts o = {0};
    o.path = "fuzz";
    o.format = formats[mode & 3];
    if (mode & 4) {
        o.cols = pos_cols;
        o.ncols = 2;
    } else {
        o.cols = eq_cols;
        o.ncols = mode & 8 ? 7 : 5;
    }
    icd_error err;
    if (icd_memfile_open(data + 1, size - 1, "fuzz", &o.file, &err)) return 0;
    ice_adapter *a;
    size_t missing;
    icd_error_clear(&err);
    if (ice_adapter_open(&a, &o, &missing, &err)) {
        if (getenv("FUZZ_ADAPTER_DEBUG")) fprintf(stderr, "open: %s\n", err.message);
        return 0;
    }
    uint64_t sum = 0, rows = 0;
    const ice_vbatch *b;
    size_t units = mode & 16 ? ice_adapter_num_units(a) : 1;
    for (size_t u = units; u-- > 0 && rows < 100000;) {
        if ((mode & 16) && ice_adapter_select_units(a, u, 1, &err)) break;
        while (rows < 100000 && !ice_adapter_next(a, &b, &err) && b) {
            for (size_t c = 0; c < o.ncols; c++)
                for (size_t i = 0; i < b->nrows; i++) {
                    const ice_tvalue *v = &b->cols[c].v[i];
                    sum += (uint64_t)v->i + v->n + (uint64_t)v->cls;
                    if (v->p && v->n) sum += v->p[v->n - 1];
                }
            rows += b->nrows;
        }
    }
    if (getenv("FUZZ_ADAPTER_DEBUG"))
        fprintf(stderr, "rows %llu err %s\n", (unsigned long long)rows, err.message);
    ice_adapter_close(a);
    return (int)(sum & 0);
}
