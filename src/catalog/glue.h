/*
 * The AWS Glue Data Catalog, as Druid's `glue` iceberg catalog uses it (catalogProperties
 * handed to Iceberg's GlueCatalog, plus caseSensitive).
 *
 * A table is resolved with one GetTable call of Glue's JSON API: POST {endpoint}/ with
 * X-Amz-Target: AWSGlue.GetTable, Content-Type: application/x-amz-json-1.1 and the body
 * {"CatalogId":..,"DatabaseName":..,"Name":..}, signed with AWS Signature V4 (libcurl's
 * CURLOPT_AWS_SIGV4, service "glue"). Like Iceberg's GlueTableOperations, the table's
 * Parameters must hold table_type=ICEBERG (any case) and metadata_location.
 *
 * Properties read (Iceberg's names):
 *   glue.id         the catalog id (the owning AWS account); absent: the caller's account
 *   glue.endpoint   endpoint override, e.g. http://127.0.0.1:9000; otherwise the
 *                   AWS_ENDPOINT_URL_GLUE / AWS_ENDPOINT_URL environment variables, then
 *                   https://glue.REGION.amazonaws.com
 *   client.region   the region (also the S3 region), else AWS_REGION / AWS_DEFAULT_REGION
 *   s3.access-key-id, s3.secret-access-key, s3.session-token (and the other storage keys
 *                   of props.h): the credentials, shared with S3 FileIO; else the AWS
 *                   default credential chain of the FileIO (io/aws_creds.h: environment,
 *                   web identity, profile, container, instance metadata), refreshed per
 *                   request
 * client.assume-role.* and client.credentials-provider are refused as unsupported.
 *
 * Errors: EntityNotFoundException is ICD_ENOTFOUND; AccessDenied, a bad signature or
 * unknown key, and other Glue errors are ICD_EIO quoting Glue's type and message; a table
 * that is not an Iceberg table is ICD_EINVALID. Secrets never appear in errors.
 */
#ifndef ICD_CATALOG_GLUE_H
#define ICD_CATALOG_GLUE_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"

typedef struct cat_glue cat_glue;

/* Opens a client (no request is sent). `io` (kept, not owned) receives the storage
 * settings of `props` and provides the credentials and region. */
int cat_glue_open(icd_fileio *io, const json_t *props, cat_glue **out, icd_error *err);
void cat_glue_free(cat_glue *c);

/* The endpoint requests go to (tests). */
const char *cat_glue_endpoint(const cat_glue *c);

/* GetTable + the Iceberg checks: the current metadata location (malloc'd). */
int cat_glue_resolve(cat_glue *c, const char *db, const char *table, char **metadata_location,
                     icd_error *err);
/* cat_glue_resolve + ice_metadata_load. */
int cat_glue_load(cat_glue *c, const char *db, const char *table, ice_metadata **out,
                  icd_error *err);

/* Interprets a GetTable answer (HTTP status + body), exposed for tests and the fuzz target:
 * 200 with an Iceberg table gives its metadata location (malloc'd); anything else is an
 * error naming db.table, quoting Glue's __type and Message. */
int cat_glue_parse_response(long status, const char *body, size_t len, const char *db,
                            const char *table, const char *location, char **metadata_location,
                            icd_error *err);

#endif
