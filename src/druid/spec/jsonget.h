/*
 * Field readers for Druid spec JSON with Jackson's leniency (Druid's ObjectMapper):
 * unknown fields are ignored, null equals absent, scalars coerce to strings, "true" /
 * 0 / 1 coerce to booleans, numeric strings to numbers. Every error names the JSON path
 * of the field ("spec.ioConfig.inputSource.tableName: ..."). Internal to src/druid/.
 */
#ifndef ICD_DRUID_JSONGET_H
#define ICD_DRUID_JSONGET_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

#define DR_PATH_MAX 512

/* "a.b" + "c" → "a.b.c" (or "c" when `path` is empty). */
void dr_path_key(char *out, const char *path, const char *key);
/* "a.b" + 3 → "a.b[3]". */
void dr_path_index(char *out, const char *path, size_t index);

/* ICD_EINVALID "PATH: message". */
int dr_fail_path(icd_error *err, const char *path, const char *fmt, ...) ICD_PRINTF(3, 4);
int dr_fail_path_code(icd_error *err, int code, const char *path, const char *fmt, ...)
    ICD_PRINTF(4, 5);

/* The object at a dotted path inside `root` ("" = root: root itself); NULL when a step is
 * absent or the value there is not an object. */
json_t *dr_json_object_at(json_t *root, const char *path);

/* The field, or NULL when absent or JSON null. */
const json_t *dr_field(const json_t *obj, const char *key);

/* A string field (scalars coerced to text) as a new malloc'd string; *out = NULL when the
 * field is absent or null. */
int dr_get_str(const json_t *obj, const char *key, const char *path, char **out, icd_error *err);
/* The text of a scalar value (string, number, boolean) as a new string. */
int dr_scalar_text(const json_t *v, const char *path, char **out, icd_error *err);
int dr_get_bool(const json_t *obj, const char *key, const char *path, bool def, bool *out,
                icd_error *err);
/* *present tells whether a value was given (NULL allowed). */
int dr_get_i64(const json_t *obj, const char *key, const char *path, int64_t def, int64_t *out,
               bool *present, icd_error *err);
/* An optional object field; *out = NULL when absent or null. */
int dr_get_object(const json_t *obj, const char *key, const char *path, const json_t **out,
                  icd_error *err);
int dr_get_array(const json_t *obj, const char *key, const char *path, const json_t **out,
                 icd_error *err);

#endif
