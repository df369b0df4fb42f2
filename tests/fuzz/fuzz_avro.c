/*
 * libFuzzer target: one whole Avro container file from the input bytes, read through a
 * memory-backed icd_file: header, metadata, schema, then every block decoded to value
 * trees and JSON (the `cat` path), and a second pass that skips every record (the
 * `inspect` path). Any error is fine; a crash, leak or sanitizer report is not.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* Projected decoding of a record schema (every other field kept) by two readers of the
 * same bytes, with and without the compiled plan: the same records, the same error. */
static void plan_pass(const uint8_t *data, size_t size)
{
    icd_error err;
    icd_error_clear(&err);
    icd_file *f1, *f2;
    icd_avro_reader *r1 = NULL, *r2 = NULL;
    if (icd_memfile_open(data, size, "fuzz.avro", &f1, &err)) return;
    if (icd_avro_reader_open_file(f1, true, &r1, &err)) return;
    if (icd_memfile_open(data, size, "fuzz.avro", &f2, &err) ||
        icd_avro_reader_open_file(f2, true, &r2, &err)) {
        icd_avro_reader_free(r1);
        return;
    }
    const icd_avro_schema *s1 = icd_avro_reader_schema(r1), *s2 = icd_avro_reader_schema(r2);
    bool keep[256];
    icd_avro_plan *plan = NULL;
    if (s1->type == AVRO_RECORD && s1->nfields <= 256) {
        for (size_t i = 0; i < s1->nfields; i++)
            keep[i] = i % 2 == 0;
        icd_avro_projection walk = {s1, keep, NULL, NULL};
        icd_avro_projection fast = {s2, keep, NULL, NULL};
        if (!icd_avro_plan_compile(&fast, &plan, &err)) {
            fast.plan = plan;
            icd_arena arena = ICD_ARENA_INIT;
            for (;;) {
                icd_avro_value v1, v2;
                icd_error e1, e2;
                bool eof1 = false, eof2 = false;
                icd_error_clear(&e1);
                icd_error_clear(&e2);
                int rc1 = icd_avro_reader_next_projected(r1, &walk, &arena, &v1, &eof1, &e1);
                int rc2 = icd_avro_reader_next_projected(r2, &fast, &arena, &v2, &eof2, &e2);
                if (rc1 != rc2 || eof1 != eof2 || e1.offset != e2.offset ||
                    strcmp(e1.message, e2.message) ||
                    icd_avro_reader_records_read(r1) != icd_avro_reader_records_read(r2))
                    __builtin_trap();
                icd_arena_reset(&arena);
                if (rc1 || eof1) break;
            }
            icd_arena_free(&arena);
        }
    }
    icd_avro_plan_free(plan);
    icd_avro_reader_free(r1);
    icd_avro_reader_free(r2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cat_pass(data, size);
    skip_pass(data, size);
    plan_pass(data, size);
    return 0;
}
