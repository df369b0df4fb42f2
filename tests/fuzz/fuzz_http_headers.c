/*
 * libFuzzer target: the request headers `serve`'s file route parses from untrusted
 * clients (druid/serve/server.h): a Range header against a few file sizes, with the invariant
 * that a satisfiable range lies inside the file, and If-None-Match / If-Range tag lists.
 * Any answer is fine; a crash, an out-of-file range or a sanitizer report is not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "druid/serve/server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *h = malloc(size + 1);
    if (!h) return 0;
    memcpy(h, data, size);
    h[size] = '\0';
    static const uint64_t sizes[] = {0, 1, 641, UINT64_MAX};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint64_t a = 0, b = 0;
        if (dr_http_parse_range(h, sizes[i], &a, &b) == 1 && !(a <= b && b < sizes[i])) abort();
    }
    (void)dr_http_etag_listed(h, "icd-977fc7c5-0cdb0e60881bfcc922450a9ffc8410f3", true);
    (void)dr_http_etag_listed(h, "", false);
    free(h);
    return 0;
}
