/*
 * libFuzzer target: the answers of the Iceberg REST catalog (catalog/rest.c), through the
 * functions the client runs on a real response. The first byte picks the request (bits
 * 0-1: GET /v1/config, loadTable, the OAuth2 token endpoint, loadTable of a client that
 * holds a client credential), the HTTP status (bits 2-4: 200 three times, 400, 401, 403,
 * 404, 503) and with bit 5 the client's token "***" (which the mask "****" holds: the
 * scrubber must neither loop nor run past the message); the rest is the body (an Iceberg
 * ErrorModel or an OAuth2 error when the status is not 200). A config answer is merged
 * into the client's properties (uri, prefix, header.* and storage settings are then read
 * again); a loadTable answer becomes a table whose config goes to the client's FileIO and
 * whose metadata is parsed; a token answer becomes the client's bearer token. Any crash,
 * leak or sanitizer report is a bug, and so is an error line that shows a secret the
 * client holds or spans lines; errors are expected.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/rest.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"

#define TOKEN "tok-Secret-5eed"
#define S3_SECRET "s3-Secret-feed"
#define CRED_SECRET "cred-Secret-77"
#define URL "http://127.0.0.1:9/cat/v1/config"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An error must not show a secret the client (still) holds, and must be one line. */
static void check_error(const cat_rest *c, const icd_error *err, bool cred)
{
    const char *secrets[3] = {NULL, NULL, cred ? CRED_SECRET : NULL};
    const char *s3 = cat_rest_property(c, "s3.secret-access-key");
    const char *tok = cat_rest_property(c, "token");
    if (s3 && !strcmp(s3, S3_SECRET)) secrets[0] = S3_SECRET;
    if (!cred && tok && !strcmp(tok, TOKEN)) secrets[1] = TOKEN;
    for (size_t i = 0; i < 3; i++)
        if (secrets[i] && (strstr(err->message, secrets[i]) || strstr(err->file, secrets[i])))
            abort();
    if (strchr(err->message, '\n') || memchr(err->message, '\0', sizeof err->message) == NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const long STATUS[] = {200, 200, 200, 400, 401, 403, 404, 503};
    if (size < 1) return 0;
    int kind = data[0] & 3;
    long status = STATUS[(data[0] >> 2) & 7];
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    bool cred = kind == 3;
    icd_error err;
    icd_fileio *io;
    if (icd_fileio_new(&io, &err)) return 0;
    const cat_rest_prop props[] = {
        {"warehouse", "wh"},
        {"token", (data[0] & 32) ? "***" : TOKEN},
        {cred ? "credential" : "scope", cred ? "client:" CRED_SECRET : "catalog"},
        {"s3.access-key-id", "AKIAFUZZ"},
        {"s3.secret-access-key", S3_SECRET},
        {"header.X-Client", "fuzz"}};
    cat_rest *c;
    if (cat_rest_new(io, "http://127.0.0.1:9/cat/", props, sizeof props / sizeof *props, &c, &err))
        abort(); /* fixed, valid properties */
    json_t *j = NULL;
    int rc;
    if (kind == 2) {
        rc = cat_rest_token_answer(c, status, body, len, "http://127.0.0.1:9/cat/v1/oauth/tokens",
                                   &err);
    } else {
        rc = cat_rest_answer(c, status, body, len, URL, kind ? "load table" : "get config", &j,
                             &err);
        if (rc == 0 && !json_is_object(j)) abort();
    }
    if (rc == 0 && kind == 0) {
        rc = cat_rest_config_answer(c, j, &err);
        if (rc == 0) {
            const char *uri = cat_rest_property(c, "uri");
            if (!uri || strncmp(uri, "http", 4)) abort();
        }
    } else if (rc == 0 && kind != 2) {
        cat_rest_table *t;
        rc = cat_rest_table_answer(c, j, &t, &err);
        if (rc == 0) {
            if (!t->metadata_location[0] || !t->metadata_json || (t->nconfig > 0 && !t->config))
                abort();
            for (size_t i = 0; i < t->nconfig; i++)
                if (!t->config[i].key || !t->config[i].value) abort();
            (void)cat_rest_table_config(t, "s3.endpoint");
            ice_metadata *md = NULL;
            rc = cat_rest_table_metadata(c, t, &md, &err);
            ice_metadata_free(md);
            cat_rest_table_free(t);
        }
    }
    if (rc) check_error(c, &err, cred);
    json_decref(j);
    cat_rest_free(c);
    icd_fileio_free(io);
    return 0;
}
