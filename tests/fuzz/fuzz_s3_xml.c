/*
 * libFuzzer target: the S3 XML answers (io/s3.c, io/http.c): a ListObjectsV2 page as a
 * directory listing reads it (Contents/Key and CommonPrefixes/Prefix relative to the
 * listed prefix, IsTruncated and NextContinuationToken), an error body as every failed S3
 * request reports it (<Error><Code>/<Message>, entities decoded, made one line), and the
 * <UploadId> of CreateMultipartUpload. The first byte picks the answer (bits 0-1), the
 * listed prefix and whether all pages are read (bits 2-3), the status (bits 2-4) and the
 * method (bit 5) of an error. Any crash, leak or sanitizer report is a bug, and so is a
 * listed name that is empty or holds a '/', a token on a last page, or an error line
 * that is not one line; errors are expected.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/http.h"
#include "io/s3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const char *xml = (const char *)data + 1;
    size_t len = size - 1;
    icd_error err;
    int kind = data[0] & 3;
    if (kind <= 1) {
        const char *prefix = (data[0] & 4) ? "wh/db/t/metadata/" : "";
        bool all = (data[0] & 8) != 0;
        icd_s3_names names = {0};
        char *next = NULL;
        int rc = icd_s3_list_page(xml, len, prefix, all, &names, &next, "s3://b/wh", &err);
        if (rc == 0) {
            if (next && (!all || !next[0])) abort();
            for (size_t i = 0; i < names.n; i++)
                if (!names.v[i][0] || strchr(names.v[i], '/')) abort();
        } else if (next || strchr(err.message, '\n')) {
            abort();
        }
        free(next);
        icd_s3_names_free(&names);
        return 0;
    }
    if (kind == 2) {
        static const long STATUS[] = {400, 403, 404, 409, 500, 503, 301, 200};
        icd_http_req req = {.method = (data[0] & 32) ? "HEAD" : "GET",
                            .url = "https://b.s3.amazonaws.com/k",
                            .location = "s3://b/k"};
        icd_http_resp resp;
        memset(&resp, 0, sizeof resp);
        resp.status = STATUS[(data[0] >> 2) & 7];
        icd_buf_append(&resp.body, xml, len);
        int rc = icd_http_status_error(&req, &resp, &err);
        if (rc >= 0 || strchr(err.message, '\n') || strchr(err.message, '\r')) abort();
        icd_http_resp_free(&resp);
        return 0;
    }
    /* every <Key> in turn, as a multi-element reader walks them, then the UploadId */
    size_t from = 0;
    for (int i = 0; i < 1000; i++) {
        size_t before = from;
        char *k = icd_xml_text(xml, len, "Key", &from);
        if (!k) break;
        free(k);
        if (from <= before || from > len) abort();
    }
    free(icd_xml_text(xml, len, "UploadId", NULL));
    return 0;
}
