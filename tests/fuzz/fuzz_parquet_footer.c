/*
 * libFuzzer target: Parquet footer decoding. The input is used three ways: as serialized
 * FileMetaData bytes (Thrift decoder, metadata, schema tree), as a whole file through a
 * memory-backed icd_file (magic and footer-length checks, then the same), and as a page
 * header. Every outcome must be a clean result or a clean error.
 */
#include <stddef.h>
#include <stdint.h>

#include "formats/parquet/page.h"
#include "formats/parquet/parquet.h"
#include "io/memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icd_error err;
    icd_error_clear(&err);

    icd_arena arena = ICD_ARENA_INIT;
    pq_file_meta meta;
    if (pq_meta_decode(data, size, &arena, &meta, "fuzz", 0, &err) == 0) {
        pq_schema schema;
        if (pq_schema_build(&meta, &arena, &schema, "fuzz", &err) == 0) {
            for (uint32_t i = 0; i < schema.num_nodes; i++)
                (void)pq_schema_find_path(&schema, schema.nodes[i].dotted);
        }
    }
    icd_arena_free(&arena);

    icd_file *f;
    if (icd_memfile_open(data, size, "fuzz.parquet", &f, &err) == 0) {
        pq_file *pf;
        if (pq_file_open_file(f, &pf, &err) == 0) {
            for (uint32_t g = 0; g < pq_file_num_row_groups(pf); g++)
                for (uint32_t c = 0; c < pq_file_schema(pf)->num_leaves; c++) {
                    pq_column_stats st;
                    (void)pq_file_column_stats(pf, g, c, &st, &err);
                }
            pq_file_close(pf);
        }
    }

    pq_page_header h;
    size_t hl;
    (void)pq_page_header_decode(data, size, &h, &hl, "fuzz", 0, &err);
    return 0;
}
