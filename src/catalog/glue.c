/*
 * AWS Glue Data Catalog client (see glue.h): the first step of planning a `glue` catalog
 * table. table identifier -> a SigV4-signed GetTable POST through io/http.c (the FileIO's
 * curl pool: retries on 5xx/429 and connection errors, timeouts, TLS verified) -> the
 * table's Parameters.metadata_location -> FileIO reads the metadata file.
 * Credentials and region come from the FileIO's S3 settings (io/s3.h), so one identity
 * signs both the catalog call and the data reads, as with Iceberg's AWS client factory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "catalog/glue.h"
#include "catalog/props.h"
#include "io/aws_creds.h"
#include "io/http.h"
#include "io/s3.h"

/* A Glue Table with its columns and parameters is small; more is refused. */
#define MAX_RESPONSE_BYTES (16u * 1024 * 1024)

struct cat_glue {
    icd_fileio *io;
    icd_remote *remote;
    char *endpoint; /* scheme://host[:port], no trailing '/' */
    char *catalog_id;
};

static char *trimmed_endpoint(const char *e)
{
    size_t n = strlen(e);
    while (n > 0 && e[n - 1] == '/')
        n--;
    bool scheme = strstr(e, "://") != NULL;
    char *p = malloc(n + 9);
    if (!p) return NULL;
    snprintf(p, n + 9, "%s%.*s", scheme ? "" : "https://", (int)n, e);
    return p;
}

static int refuse_unsupported(const json_t *props, icd_error *err)
{
    static const char *const KEYS[] = {"client.assume-role.arn", "client.credentials-provider",
                                       "client.factory"};
    char tmp[64];
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
        if (cat_prop(props, KEYS[i], tmp, sizeof tmp))
            return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                            "Glue catalog: %s is not supported by icedruid; use the AWS "
                            "default credential chain (e.g. a profile with role_arn) or "
                            "s3.access-key-id/s3.secret-access-key",
                            KEYS[i]);
    return 0;
}

int cat_glue_open(icd_fileio *io, const json_t *props, cat_glue **out, icd_error *err)
{
    *out = NULL;
    ICD_TRY(cat_props_check(props, "Glue catalog", err));
    ICD_TRY(refuse_unsupported(props, err));
    ICD_TRY(cat_props_apply_storage(io, props, err));
    cat_glue *c = calloc(1, sizeof *c);
    if (!c) return icd_fail_nomem(err);
    c->io = io;
    c->remote = icd_fileio_remote(io);
    char tmp[64];
    const char *ep = cat_prop(props, "glue.endpoint", tmp, sizeof tmp);
    icd_aws_creds *chain = icd_fileio_aws_creds(io);
    if ((!ep || !ep[0]) && chain) ep = icd_aws_creds_env(chain, "AWS_ENDPOINT_URL_GLUE");
    if ((!ep || !ep[0]) && chain) ep = icd_aws_creds_env(chain, "AWS_ENDPOINT_URL");
    int rc = c->remote ? 0 : icd_fail_nomem(err);
    if (rc == 0 && ep && ep[0]) {
        if (strstr(ep, "://") && strncmp(ep, "http://", 7) && strncmp(ep, "https://", 8))
            rc = icd_fail(err, ICD_EINVALID, NULL, -1,
                          "Glue catalog: glue.endpoint must be an http:// or https:// URL, got "
                          "'%s'",
                          ep);
        else if (!(c->endpoint = trimmed_endpoint(ep)))
            rc = icd_fail_nomem(err);
    } else if (rc == 0) {
        icd_buf b = ICD_BUF_INIT;
        icd_buf_printf(&b, "https://glue.%s.amazonaws.com", icd_fileio_aws_region(io));
        if (!(c->endpoint = icd_buf_detach(&b))) rc = icd_fail_nomem(err);
    }
    const char *id = cat_prop(props, "glue.id", tmp, sizeof tmp);
    if (rc == 0 && id && id[0] && !(c->catalog_id = strdup(id))) rc = icd_fail_nomem(err);
    if (rc) {
        cat_glue_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void cat_glue_free(cat_glue *c)
{
    if (!c) return;
    free(c->endpoint);
    free(c->catalog_id);
    free(c);
}

const char *cat_glue_endpoint(const cat_glue *c)
{
    return c->endpoint;
}

/* ---- the answer -------------------------------------------------------------------------- */

/* Copies s into out as one printable line. */
static void one_line(char *out, size_t cap, const char *s)
{
    size_t k = 0;
    for (; s && s[k] && k + 1 < cap; k++)
        out[k] = (unsigned char)s[k] < 0x20 ? ' ' : s[k];
    out[k] = '\0';
}

/* "namespace#Type" or "Type:url" (AWS JSON protocol error types) -> "Type". */
static void error_type(const char *t, char *out, size_t cap)
{
    const char *hash = t ? strrchr(t, '#') : NULL;
    if (hash) t = hash + 1;
    one_line(out, cap, t);
    char *colon = strchr(out, ':');
    if (colon) *colon = '\0';
}

static const char *error_hint(const char *type, long status)
{
    if (!strcmp(type, "AccessDeniedException") || !strcmp(type, "AccessDenied"))
        return " (the credentials may not call glue:GetTable on this table)";
    if (!strcmp(type, "InvalidSignatureException") || !strcmp(type, "SignatureDoesNotMatch"))
        return " (check the secret access key and the region)";
    if (!strcmp(type, "UnrecognizedClientException") || !strcmp(type, "InvalidClientTokenId"))
        return " (unknown access key id or session token)";
    if (!strcmp(type, "ExpiredTokenException")) return " (the session token has expired)";
    if (!type[0] && status == 403) return " (access denied: check the credentials and the region)";
    return "";
}

int cat_glue_parse_response(long status, const char *body, size_t len, const char *db,
                            const char *table, const char *location, char **metadata_location,
                            icd_error *err)
{
    *metadata_location = NULL;
    json_error_t je;
    json_t *j = body && len ? json_loadb(body, len, 0, &je) : NULL;
    int rc = 0;
    if (status != 200) {
        char type[128] = "", msg[400] = "";
        if (json_is_object(j)) {
            error_type(json_string_value(json_object_get(j, "__type")), type, sizeof type);
            const char *m = json_string_value(json_object_get(j, "Message"));
            if (!m) m = json_string_value(json_object_get(j, "message"));
            one_line(msg, sizeof msg, m);
        }
        int code = !strcmp(type, "EntityNotFoundException") ? ICD_ENOTFOUND
                   : !strcmp(type, "InvalidInputException") ? ICD_EINVALID
                                                            : ICD_EIO;
        rc = icd_fail(err, code, location, -1, "Glue GetTable(%s.%s) failed: HTTP %ld%s%s%s%s%s",
                      db, table, status, type[0] ? " " : "", type, msg[0] ? ": " : "", msg,
                      error_hint(type, status));
        json_decref(j);
        return rc;
    }
    if (!json_is_object(j)) {
        rc = icd_fail(err, ICD_ECORRUPT, location, -1,
                      "Glue GetTable(%s.%s): the answer is not a JSON object%s%s", db, table,
                      j ? "" : ": ", j ? "" : je.text);
        json_decref(j);
        return rc;
    }
    const json_t *t = json_object_get(j, "Table");
    const json_t *params = json_object_get(t, "Parameters");
    const char *type = json_string_value(json_object_get(params, "table_type"));
    const char *mloc = json_string_value(json_object_get(params, "metadata_location"));
    if (!json_is_object(t))
        rc = icd_fail(err, ICD_ECORRUPT, location, -1,
                      "Glue GetTable(%s.%s): the answer has no Table object", db, table);
    else if (!type || strcasecmp(type, "ICEBERG"))
        rc = icd_fail(err, ICD_EINVALID, location, -1,
                      "Glue table %s.%s is not an Iceberg table (its table_type parameter is "
                      "%s%.100s%s)",
                      db, table, type ? "'" : "", type ? type : "not set", type ? "'" : "");
    else if (!mloc || !mloc[0])
        rc = icd_fail(err, ICD_EINVALID, location, -1,
                      "Glue table %s.%s has no metadata_location parameter", db, table);
    else if (!(*metadata_location = strdup(mloc)))
        rc = icd_fail_nomem(err);
    json_decref(j);
    return rc;
}

/* ---- the call ---------------------------------------------------------------------------- */

static char *request_body(const cat_glue *c, const char *db, const char *table)
{
    json_t *o = json_object();
    if (!o) return NULL;
    int bad = 0;
    if (c->catalog_id) bad |= json_object_set_new(o, "CatalogId", json_string(c->catalog_id));
    bad |= json_object_set_new(o, "DatabaseName", json_string(db));
    bad |= json_object_set_new(o, "Name", json_string(table));
    char *s = bad ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

int cat_glue_resolve(cat_glue *c, const char *db, const char *table, char **metadata_location,
                     icd_error *err)
{
    *metadata_location = NULL;
    if (!db || !db[0] || !table || !table[0])
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "Glue catalog: a table needs a database (namespace) and a name");
    icd_sigv4 sign;
    int have = icd_fileio_aws_signing(c->io, "glue", &sign, err);
    if (have < 0) return have;
    if (have == 0)
        return icd_fail(err, ICD_EINVALID, c->endpoint, -1,
                        "Glue catalog: no AWS credentials (set s3.access-key-id and "
                        "s3.secret-access-key in catalogProperties, or AWS_ACCESS_KEY_ID and "
                        "AWS_SECRET_ACCESS_KEY)");
    char *body = request_body(c, db, table);
    icd_buf url = ICD_BUF_INIT;
    icd_buf_printf(&url, "%s/", c->endpoint);
    if (!body || !icd_buf_ok(&url)) {
        free(body);
        icd_buf_free(&url);
        return icd_fail_nomem(err);
    }
    const char *hdrs[] = {"Content-Type: application/x-amz-json-1.1",
                          "X-Amz-Target: AWSGlue.GetTable", NULL};
    icd_http_req req = {.method = "POST",
                        .url = url.data,
                        .location = url.data,
                        .headers = hdrs,
                        .body = body,
                        .body_len = strlen(body),
                        .sign = &sign,
                        .max_body = MAX_RESPONSE_BYTES};
    icd_http_resp resp;
    int rc = icd_http_perform(c->remote, &req, &resp, err);
    if (rc == 0)
        rc = cat_glue_parse_response(resp.status, resp.body.data, resp.body.len, db, table,
                                     url.data, metadata_location, err);
    icd_http_resp_free(&resp);
    free(body);
    icd_buf_free(&url);
    return rc;
}

int cat_glue_load(cat_glue *c, const char *db, const char *table, ice_metadata **out,
                  icd_error *err)
{
    *out = NULL;
    char *loc;
    ICD_TRY(cat_glue_resolve(c, db, table, &loc, err));
    int rc = ice_metadata_load(c->io, loc, out, err);
    free(loc);
    return rc;
}
