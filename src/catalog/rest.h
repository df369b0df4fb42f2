/*
 * The Iceberg REST catalog client (Iceberg REST OpenAPI spec), as Druid's `rest` catalog
 * uses it: `catalogUri` + `catalogProperties`.
 *
 * Opening a client fetches an OAuth2 token when a `credential` is given (client
 * credentials grant), then GET {uri}/v1/config?warehouse=W and merges its properties:
 * server defaults < client properties < server overrides. Loading a table is
 * GET {uri}/v1/{prefix}/namespaces/{ns}/tables/{table}; the answer carries the
 * metadata-location, the table metadata itself and a `config` map (vended S3 credentials,
 * endpoint, region) that cat_rest_table_apply passes to FileIO.
 *
 * Properties read: uri, warehouse, prefix, token, credential (client_id:client_secret or
 * a secret alone), scope (default "catalog"), oauth2-server-uri (default
 * {uri}/v1/oauth/tokens), header.NAME (sent as header NAME), s3.*, client.region,
 * rest.sigv4-enabled (true: every catalog request is AWS SigV4-signed, for Glue's Iceberg
 * REST endpoint and S3 Tables, with the FileIO's AWS credentials: s3.* keys or the default
 * chain of io/aws_creds.h; a bearer token then travels as Original-Authorization),
 * rest.signing-name (default execute-api), rest.signing-region (default client.region, else
 * the S3 region). Errors name the request and quote
 * the server's ErrorModel message; tokens and secrets never appear in them.
 * A client is used from one thread at a time.
 */
#ifndef ICD_CATALOG_REST_H
#define ICD_CATALOG_REST_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"

typedef struct cat_rest cat_rest;

typedef struct cat_rest_prop {
    char *key;
    char *value;
} cat_rest_prop;

/* Opens a client. `uri` is the catalog URI (Druid's catalogUri; NULL to take the `uri`
 * property); `props` are key/value pairs. `io` (kept, not owned) receives the merged
 * s3.* settings and, later, each table's vended credentials. */
int cat_rest_open(icd_fileio *io, const char *uri, const cat_rest_prop *props, size_t nprops,
                  cat_rest **out, icd_error *err);
/* The same with the properties as a JSON object (Druid's catalogProperties): strings,
 * numbers and booleans are taken as text; null values are skipped. */
int cat_rest_open_json(icd_fileio *io, const char *uri, const json_t *props, cat_rest **out,
                       icd_error *err);
void cat_rest_free(cat_rest *c);

/* cat_rest_open in two steps: a client from its properties alone (no request yet), then
 * GET /v1/config and the merge of its answer. */
int cat_rest_new(icd_fileio *io, const char *uri, const cat_rest_prop *props, size_t nprops,
                 cat_rest **out, icd_error *err);
int cat_rest_new_json(icd_fileio *io, const char *uri, const json_t *props, cat_rest **out,
                      icd_error *err);
int cat_rest_connect(cat_rest *c, icd_error *err);

/* A property of the merged configuration, or NULL. */
const char *cat_rest_property(const cat_rest *c, const char *key);
/* Number of token requests made so far (tests). */
unsigned cat_rest_token_requests(const cat_rest *c);

typedef struct cat_rest_table {
    char *metadata_location;
    char *metadata_json; /* the table metadata as JSON text (for ice_metadata_parse) */
    size_t metadata_len;
    cat_rest_prop *config; /* the table's config plus matching storage-credentials */
    size_t nconfig;
} cat_rest_table;

/* Loads a table. `ns` holds the namespace levels (Druid passes one level, dots and all). */
int cat_rest_load_table(cat_rest *c, const char *const *ns, size_t nlevels, const char *table,
                        cat_rest_table **out, icd_error *err);
void cat_rest_table_free(cat_rest_table *t);
/* The value of a key in the table's config, or NULL. */
const char *cat_rest_table_config(const cat_rest_table *t, const char *key);
/* Applies the table config's S3 settings (vended credentials, endpoint, region, path
 * style) to the FileIO. */
int cat_rest_table_apply(const cat_rest_table *t, icd_fileio *io, icd_error *err);

/* A loaded table's config applied to the client's FileIO, and its metadata parsed. */
int cat_rest_table_metadata(const cat_rest *c, const cat_rest_table *t, ice_metadata **out,
                            icd_error *err);
/* Load table + apply its config to the client's FileIO + parse the metadata. */
int cat_rest_load(cat_rest *c, const char *const *ns, size_t nlevels, const char *table,
                  ice_metadata **out, icd_error *err);

/* Internal, exposed for tests and fuzzing: what the client makes of each answer.
 * An answer of a catalog request (`what` names it, `url` is the request's): a JSON object
 * in *out on 200, else an error with the status and the ErrorModel / OAuth2 error text. */
int cat_rest_answer(const cat_rest *c, long status, const char *body, size_t len, const char *url,
                    const char *what, json_t **out, icd_error *err);
/* The OAuth2 token endpoint's answer: the client's new token and its expiry. */
int cat_rest_token_answer(cat_rest *c, long status, const char *body, size_t len, const char *url,
                          icd_error *err);
/* The /v1/config answer merged into the client's properties (defaults < client < overrides). */
int cat_rest_config_answer(cat_rest *c, const json_t *cfg, icd_error *err);
/* A loadTable answer as a table. */
int cat_rest_table_answer(const cat_rest *c, const json_t *j, cat_rest_table **out, icd_error *err);

/* Internal, exposed for tests: the request path of a table,
 * "/v1/{prefix}/namespaces/{a%1Fb}/tables/{t}" (malloc'd). */
char *cat_rest_table_path(const char *prefix, const char *const *ns, size_t nlevels,
                          const char *table);

#endif
