/*
 * libFuzzer target: an AWS Glue GetTable answer (catalog/glue.c): the first byte picks the
 * HTTP status (200, 400, 403 or 500), the rest is the body (a Table with Parameters, or an
 * error {"__type","Message"}). Any crash, leak or sanitizer report is a bug; errors are
 * expected.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/glue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const long STATUS[] = {200, 400, 403, 500};
    if (size < 1) return 0;
    long status = STATUS[data[0] & 3];
    icd_error err;
    char *loc = NULL;
    if (cat_glue_parse_response(status, (const char *)data + 1, size - 1, "db", "t", "fuzz", &loc,
                                &err) == 0) {
        if (!loc || !loc[0]) __builtin_trap();
        free(loc);
    } else if (strlen(err.message) >= sizeof err.message) {
        __builtin_trap();
    }
    return 0;
}
