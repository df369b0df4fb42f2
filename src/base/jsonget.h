/*
 * Field readers over jansson values: the one set of JSON getters of icedruid, in two modes.
 *
 *   ICD_JSON_STRICT   Iceberg table metadata, schemas, splits: a value must have the
 *                     field's JSON type, integers must fit the field's width.
 *   ICD_JSON_LENIENT  Druid specs: Jackson's coercions (Druid's ObjectMapper): scalars
 *                     coerce to strings, "true"/"false" and integers to booleans, numeric
 *                     strings and reals to integers, "" to the default.
 *
 * In both modes JSON null equals absent. Every error names the JSON path of the value
 * ("snapshots[3].timestamp-ms", "spec.ioConfig.appendToExisting") in one wording:
 *
 *   [PREFIX: ]PATH: required field is missing     (or "is null")
 *   [PREFIX: ]PATH: expected a boolean, found a string
 *   [PREFIX: ]PATH: expected a 32-bit integer, found 4294967296
 *
 * with the reader's error code and file.
 */
#ifndef ICD_BASE_JSONGET_H
#define ICD_BASE_JSONGET_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"

typedef enum icd_json_mode {
    ICD_JSON_STRICT,
    ICD_JSON_LENIENT,
} icd_json_mode;

/* Strict mode also takes a real holding an integral value a double represents exactly
 * as an integer (writers that emit ids as doubles: table metadata accepts them). */
#define ICD_JSON_INTEGRAL_REALS 1u

typedef enum icd_json_need {
    ICD_JSON_OPTIONAL,
    ICD_JSON_REQUIRED,
} icd_json_need;

typedef struct icd_json_reader {
    icd_json_mode mode;
    unsigned flags;     /* ICD_JSON_INTEGRAL_REALS */
    int code;           /* of every error: ICD_ECORRUPT (a file), ICD_EINVALID (user input) */
    const char *file;   /* the error's file; NULL when none */
    const char *prefix; /* put before the path ("split", "schema 3: field 'a.b'"); or NULL */
    icd_error *err;
} icd_json_reader;

#define ICD_JSON_PATH_MAX 512

/* "a.b" + "c" -> "a.b.c" (or "c" when `path` is NULL or empty). */
void icd_json_path_key(char *out, const char *path, const char *key);
/* "a.b" + 3 -> "a.b[3]". */
void icd_json_path_index(char *out, const char *path, size_t index);

/* Records "[PREFIX: ]PATH: message" (no path part when `path` is NULL or empty) with the
 * reader's code and file; returns the code. */
int icd_json_fail(const icd_json_reader *r, const char *path, const char *fmt, ...)
    ICD_PRINTF(3, 4);
int icd_json_failv(const icd_json_reader *r, const char *path, const char *fmt, va_list ap);
/* "PATH: expected WANT, found ..." for the value `v` (NULL: null). */
int icd_json_fail_type(const icd_json_reader *r, const char *path, const char *want,
                       const json_t *v);
/* "an object", "a string", "a number", ... */
const char *icd_json_type_name(const json_t *v);

/* The member, or NULL when absent or JSON null (or when `obj` is not an object). */
const json_t *icd_json_field(const json_t *obj, const char *key);

/* ---- one value, at `path` ---- */

/* Text: a string (strict and lenient), or a number or boolean as Java prints it
 * (lenient). A copy in `arena`, or malloc'd when `arena` is NULL. */
int icd_json_as_str(const icd_json_reader *r, const json_t *v, const char *path, icd_arena *arena,
                    const char **out);
int icd_json_as_i64(const icd_json_reader *r, const json_t *v, const char *path, int64_t *out);
int icd_json_as_i32(const icd_json_reader *r, const json_t *v, const char *path, int32_t *out);

/* ---- members of an object at `path` ----
 * An absent or null member leaves the default in *out (NULL for strings, objects and
 * arrays) and sets *present (when given) to false; a REQUIRED one is an error. */

int icd_json_get_value(const icd_json_reader *r, const json_t *obj, const char *path,
                       const char *key, icd_json_need need, const json_t **out);
int icd_json_get_str(const icd_json_reader *r, const json_t *obj, const char *path, const char *key,
                     icd_json_need need, icd_arena *arena, const char **out);
int icd_json_get_bool(const icd_json_reader *r, const json_t *obj, const char *path,
                      const char *key, icd_json_need need, bool def, bool *out);
int icd_json_get_i64(const icd_json_reader *r, const json_t *obj, const char *path, const char *key,
                     icd_json_need need, int64_t def, int64_t *out, bool *present);
int icd_json_get_i32(const icd_json_reader *r, const json_t *obj, const char *path, const char *key,
                     icd_json_need need, int32_t def, int32_t *out, bool *present);
int icd_json_get_object(const icd_json_reader *r, const json_t *obj, const char *path,
                        const char *key, icd_json_need need, const json_t **out);
int icd_json_get_array(const icd_json_reader *r, const json_t *obj, const char *path,
                       const char *key, icd_json_need need, const json_t **out);

#endif
