/*
 * libFuzzer target: one whole Avro container file from the input bytes, read through a
 * memory-backed icd_file: header, metadata, schema, then every block decoded to value
 * trees and JSON (the `cat` path), and a second pass that skips every record (the
 * `inspect` path). Any error is fine; a crash, leak or sanitizer report is not.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/avro/container.h"
#include "formats/avro/json.h"
#include "io/memfile.h"

static void cat_pass(const uint8_t *data, size_t size)
{
    icd_error err;
    icd_error_clear(&err);
    icd_file *f;
    if (icd_memfile_open(data, size, "fuzz.avro", &f, &err)) return;
    icd_avro_reader *r;
    if (icd_avro_reader_open_file(f, true, &r, &err)) return;
    icd_arena arena = ICD_ARENA_INIT;
    icd_buf out = ICD_BUF_INIT;
    icd_avro_value v;
    bool eof = false;
    while (!icd_avro_reader_next(r, &arena, &v, &eof, &err) && !eof) {
        if (icd_avro_value_json(&out, &v, &err)) break;
        /* field lookups as the manifest reader does them */
        (void)icd_avro_value_field_by_id(&v, 1);
        (void)icd_avro_value_field(&v, "status");
        icd_buf_clear(&out);
        icd_arena_reset(&arena);
    }
    icd_buf_free(&out);
    icd_arena_free(&arena);
    icd_avro_reader_free(r);
}

static void skip_pass(const uint8_t *data, size_t size)
{
    icd_error err;
    icd_error_clear(&err);
    icd_file *f;
    if (icd_memfile_open(data, size, "fuzz.avro", &f, &err)) return;
    icd_avro_reader *r;
    if (icd_avro_reader_open_file(f, true, &r, &err)) return;
    bool eof = false;
    while (!icd_avro_reader_skip(r, &eof, &err) && !eof) {
    }
    icd_avro_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cat_pass(data, size);
    skip_pass(data, size);
    return 0;
}
