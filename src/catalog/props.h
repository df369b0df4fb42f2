/*
 * catalogProperties helpers shared by the Hive Metastore and Glue catalogs: reading one
 * property as text, and handing the storage settings among them to FileIO.
 *
 * Storage keys: Iceberg's FileIO names (s3.access-key-id, s3.secret-access-key,
 * s3.session-token, s3.endpoint, s3.path-style-access, s3.region, client.region) and, since
 * Druid's docs tell Hive users to put Hadoop S3A settings into catalogProperties, their S3A
 * equivalents (fs.s3a.access.key, fs.s3a.secret.key, fs.s3a.session.token,
 * fs.s3a.endpoint, fs.s3a.path.style.access, fs.s3a.endpoint.region).
 */
#ifndef ICD_CATALOG_PROPS_H
#define ICD_CATALOG_PROPS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "io/fileio.h"

/* A property as text: strings as they are, numbers and booleans formatted into tmp. NULL
 * when absent, null or not a plain value. */
const char *cat_prop(const json_t *props, const char *key, char *tmp, size_t cap);
/* True when the property is the text "true" (any case) or JSON true. */
bool cat_prop_true(const json_t *props, const char *key);

/* Checks that props is an object (or NULL) of plain values: nested objects (Druid's
 * dynamic config providers) are ICD_EUNSUPPORTED. `what` names the catalog in errors. */
int cat_props_check(const json_t *props, const char *what, icd_error *err);

/* Applies the storage settings among the properties to the FileIO (see above). */
int cat_props_apply_storage(icd_fileio *io, const json_t *props, icd_error *err);

/* A duration such as "600s", "10ms", "2m", "1h" or a bare number of `default_unit_ms`
 * milliseconds each (Hive's time properties default to seconds). false when malformed. */
bool cat_parse_duration_ms(const char *s, long default_unit_ms, long *out_ms);

#endif
