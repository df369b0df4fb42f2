/*
 * libFuzzer target: a v2 split ({"type":"icebergFileTask", ...}) from arbitrary bytes
 * (druid/plan/split.c: field checks, the minimal table metadata rebuilt from the split and
 * parsed by the metadata parser, typed partition values). A parsed split is walked: its
 * task, delete files and schema. Any crash, leak or sanitizer report is a bug; errors
 * are expected.
 */
#include <stddef.h>
#include <stdint.h>

#include "druid/plan/split.h"
#include "iceberg/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icd_error err;
    dr_split *s = NULL;
    if (dr_split_parse((const char *)data, size, "fuzz", &s, &err) == 0) {
        const ice_scan_task *t = dr_split_task(s);
        size_t n = 0;
        for (size_t i = 0; i < t->ndeletes; i++)
            n += (size_t)t->deletes[i]->nequality_ids;
        icd_buf b = ICD_BUF_INIT;
        ice_schema_to_json(&b, dr_split_schema(s));
        icd_buf_free(&b);
        (void)n;
        dr_split_free(s);
    }
    return 0;
}
