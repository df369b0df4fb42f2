/*
 * The Druid spec's field readers: base/jsonget in lenient mode (Jackson's coercions, as
 * Druid's ObjectMapper reads a spec), errors ICD_EINVALID "PATH: message" with the JSON
 * path of the field ("spec.ioConfig.inputSource.tableName: ..."). These wrappers only fix
 * the reader's settings; the getters themselves are base/jsonget's. Internal to src/druid/.
 */
#ifndef ICD_DRUID_JSONGET_H
#define ICD_DRUID_JSONGET_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/jsonget.h"

/* The reader of a spec: lenient, user input. */
static inline icd_json_reader dr_spec_reader(icd_error *err)
{
    return (icd_json_reader){ICD_JSON_LENIENT, 0, ICD_EINVALID, NULL, NULL, err};
}

/* ICD_EINVALID (or `code`) "PATH: message". */
int dr_fail_path(icd_error *err, const char *path, const char *fmt, ...) ICD_PRINTF(3, 4);
int dr_fail_path_code(icd_error *err, int code, const char *path, const char *fmt, ...)
    ICD_PRINTF(4, 5);

/* The object at a dotted path inside `root` ("" = root: root itself); NULL when a step is
 * absent or the value there is not an object. */
json_t *dr_json_object_at(json_t *root, const char *path);

/* Members of the object at `path`, all optional; absent or null keeps the default (NULL
 * for strings, objects and arrays). Strings are malloc'd. */
static inline int dr_get_str(const json_t *obj, const char *key, const char *path, char **out,
                             icd_error *err)
{
    icd_json_reader r = dr_spec_reader(err);
    return icd_json_get_str(&r, obj, path, key, ICD_JSON_OPTIONAL, NULL, (const char **)out);
}
/* The text of a scalar value (string, number, boolean) as a new string. */
static inline int dr_scalar_text(const json_t *v, const char *path, char **out, icd_error *err)
{
    icd_json_reader r = dr_spec_reader(err);
    return icd_json_as_str(&r, v, path, NULL, (const char **)out);
}
static inline int dr_get_bool(const json_t *obj, const char *key, const char *path, bool def,
                              bool *out, icd_error *err)
{
    icd_json_reader r = dr_spec_reader(err);
    return icd_json_get_bool(&r, obj, path, key, ICD_JSON_OPTIONAL, def, out);
}
/* *present tells whether a value was given (NULL allowed). */
static inline int dr_get_i64(const json_t *obj, const char *key, const char *path, int64_t def,
                             int64_t *out, bool *present, icd_error *err)
{
    icd_json_reader r = dr_spec_reader(err);
    return icd_json_get_i64(&r, obj, path, key, ICD_JSON_OPTIONAL, def, out, present);
}
static inline int dr_get_object(const json_t *obj, const char *key, const char *path,
                                const json_t **out, icd_error *err)
{
    icd_json_reader r = dr_spec_reader(err);
    return icd_json_get_object(&r, obj, path, key, ICD_JSON_OPTIONAL, out);
}
static inline int dr_get_array(const json_t *obj, const char *key, const char *path,
                               const json_t **out, icd_error *err)
{
    icd_json_reader r = dr_spec_reader(err);
    return icd_json_get_array(&r, obj, path, key, ICD_JSON_OPTIONAL, out);
}

#endif
