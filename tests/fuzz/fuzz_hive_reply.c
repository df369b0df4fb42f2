/*
 * libFuzzer target: a Hive Metastore get_table reply in the Thrift binary protocol
 * (catalog/hive.c over catalog/thrift_binary.c: message header, the result struct, the
 * Table struct with every unknown field skipped, exceptions). The reply is decoded for
 * sequence id 1; a decoded table is walked. Any crash, leak or sanitizer report is a bug;
 * errors are expected.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "catalog/hive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icd_error err;
    cat_hive_table *t = NULL;
    size_t used = 0;
    bool truncated = false;
    if (cat_hive_parse_reply(data, size, 1, "fuzz", &t, &used, &truncated, &err) == 0) {
        size_t n = 0;
        const char *fields[] = {t->db_name,  t->table_name,   t->table_type,
                                t->location, t->iceberg_type, t->metadata_location};
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            n += fields[i] ? strlen(fields[i]) : 0;
        (void)n;
        if (used > size) __builtin_trap();
        cat_hive_table_free(t);
    }
    return 0;
}
