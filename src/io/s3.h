/*
 * S3 storage for FileIO: s3://, s3a:// and s3n:// locations (bucket/key), read with
 * SigV4-signed ranged GETs over the HTTP layer (http.h), and listed with ListObjectsV2 so
 * the Hadoop-layout catalog works on S3.
 *
 * Settings, in increasing precedence: built-in defaults (region us-east-1, AWS endpoints,
 * virtual-hosted addressing), the environment snapshot given with
 * icd_fileio_set_environment (the AWS default credential chain of aws_creds.h, AWS_REGION,
 * AWS_DEFAULT_REGION, the profile's region, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL,
 * ICEDRUID_S3_PATH_STYLE), then whatever the caller sets (icd_fileio_set_s3, or
 * Iceberg/REST catalog properties through icd_fileio_set_s3_property; static keys there
 * win over the chain). Without credentials requests are sent unsigned (public buckets).
 * Set these before reading from several threads; the chain itself is thread-safe.
 */
#ifndef ICD_IO_S3_H
#define ICD_IO_S3_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "io/fileio.h"
#include "io/http.h"

typedef struct icd_s3_options {
    const char *access_key_id;     /* NULL: unchanged */
    const char *secret_access_key; /* NULL: unchanged */
    const char *session_token;     /* NULL: unchanged; "" clears */
    const char *region;            /* NULL: unchanged */
    /* Endpoint override: "http://127.0.0.1:9000", "https://minio.example.com" or a bare
     * host ("s3.eu-west-1.amazonaws.com", https assumed). NULL: unchanged. */
    const char *endpoint;
    /* 1 path-style (ENDPOINT/BUCKET/KEY), 0 virtual-hosted (BUCKET.HOST/KEY),
     * -1 unchanged. With neither set, path-style is used for IP-address and localhost
     * endpoints and for bucket names that are not valid host names. */
    int path_style;
} icd_s3_options;

/* Gives the FileIO an environment snapshot (NULL-terminated "NAME=value"; the CLI passes
 * its process environment): the AWS default credential chain of aws_creds.h is built on
 * it (used for S3, Glue, STS and SigV4 REST whenever no static keys are set), and the
 * region (AWS_REGION, AWS_DEFAULT_REGION, the profile's region), endpoint
 * (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL) and ICEDRUID_S3_PATH_STYLE are taken from it.
 * Without a snapshot nothing is read from the environment. */
int icd_fileio_set_environment(icd_fileio *io, const char *const *envp, icd_error *err);

/* The credential chain of icd_fileio_set_environment (NULL before). */
struct icd_aws_creds *icd_fileio_aws_creds(icd_fileio *io);

/* Sets S3 options on a FileIO (fields left NULL / -1 keep their current value). */
int icd_fileio_set_s3(icd_fileio *io, const icd_s3_options *opt, icd_error *err);

/* Applies one Iceberg FileIO property: s3.access-key-id, s3.secret-access-key,
 * s3.session-token, s3.endpoint, s3.path-style-access, s3.region, client.region.
 * Returns 1 when the key was used, 0 when it is not an S3 key, <0 on a bad value. */
int icd_fileio_set_s3_property(icd_fileio *io, const char *key, const char *value, icd_error *err);

/* The AWS credentials and region of the FileIO's S3 settings, as signing parameters for
 * another AWS service (`service`, e.g. "glue": the catalog signs with the same identity as
 * the storage, like Iceberg's AWS clients). The strings belong to the FileIO and stay valid
 * until its S3 settings change. Returns 1 with *out filled, 0 when no credentials are set,
 * <0 when they are incomplete. */
int icd_fileio_aws_signing(icd_fileio *io, const char *service, icd_sigv4 *out, icd_error *err);
/* The region of the FileIO's S3 settings (never NULL). */
const char *icd_fileio_aws_region(icd_fileio *io);

/* Uploads the local file `local_path` to the s3:// `location`: one PUT when it is at most
 * `part_bytes` long, else a multipart upload in parts of `part_bytes` (S3 wants >= 5 MiB
 * but the last). Any failure aborts the multipart upload: the object is only visible once
 * CompleteMultipartUpload succeeded, never partially. (Test hook: the environment variable
 * ICEDRUID_TEST_S3_FAIL_AT_PART=N fails the upload after part N-1, as a lost connection
 * would.) */
int icd_s3_upload_file(icd_fileio *io, const char *location, const char *local_path,
                       size_t part_bytes, icd_error *err);
/* Deletes an object (DELETE; a missing object is not an error, as in S3). */
int icd_s3_delete(icd_fileio *io, const char *location, icd_error *err);

/* ---- internal (io/) ---------------------------------------------------------------- */

typedef struct icd_s3_config icd_s3_config;

/* A configuration from the environment (NULL on OOM). */
icd_s3_config *icd_s3_config_new(void);
void icd_s3_config_free(icd_s3_config *c);
icd_s3_config *icd_remote_s3(icd_remote *r);

/* True for s3://, s3a:// and s3n:// locations. */
bool icd_s3_is_location(const char *path);

/* Splits "s3://bucket/key" into malloc'd bucket and key (key may be ""). */
int icd_s3_split(const char *location, const char *path, char **bucket, char **key, icd_error *err);

/* The request URL of an object (key) or of the bucket itself (key NULL) with an optional
 * encoded query string (sorted by name: curl 7.88 signs the query as given). */
int icd_s3_url(const icd_s3_config *c, const char *bucket, const char *key, const char *query,
               char **out, icd_error *err);

/* One ListObjectsV2 page, as a listing reads it: the names directly under `prefix` (keys
 * and common prefixes, relative, without a trailing '/') appended to *names, and in *next
 * the continuation token (malloc'd) when the page is truncated and `all_pages`, else
 * NULL. A truncated page without a token is an error. (Exposed for fuzzing.) */
typedef struct icd_s3_names {
    char **v;
    size_t n, cap;
} icd_s3_names;
void icd_s3_names_free(icd_s3_names *l);
int icd_s3_list_page(const char *xml, size_t len, const char *prefix, bool all_pages,
                     icd_s3_names *names, char **next, const char *location, icd_error *err);

/* Backends behind icd_file_open / icd_fileio_list_dir / exists / is_dir. `path` is the
 * location after remapping. */
int icd_s3_open(icd_fileio *io, const char *location, const char *path, icd_file **out,
                icd_error *err);
int icd_s3_list_dir(icd_fileio *io, const char *location, const char *path, char ***names,
                    size_t *count, icd_error *err);
/* 1 exists, 0 not found, <0 error. */
int icd_s3_exists(icd_fileio *io, const char *location, const char *path, icd_error *err);
/* 1 when some object lives under PATH/, 0 when none, <0 error. */
int icd_s3_is_dir(icd_fileio *io, const char *location, const char *path, icd_error *err);

#endif
