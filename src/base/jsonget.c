/*
 * The JSON field readers of every parser over jansson (see jsonget.h): Iceberg table
 * metadata and schemas, v2 splits (strict), Druid specs and filters (lenient, the
 * coercions Jackson applies when Druid reads a spec, so a spec Druid accepts is accepted
 * here too). One place decides which values a field takes and how a refusal reads.
 */
#include "base/jsonget.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/javanum.h"

void icd_json_path_key(char *out, const char *path, const char *key)
{
    if (!path || !*path)
        snprintf(out, ICD_JSON_PATH_MAX, "%s", key);
    else
        snprintf(out, ICD_JSON_PATH_MAX, "%s.%s", path, key);
}

void icd_json_path_index(char *out, const char *path, size_t index)
{
    snprintf(out, ICD_JSON_PATH_MAX, "%s[%zu]", path ? path : "", index);
}

int icd_json_failv(const icd_json_reader *r, const char *path, const char *fmt, va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    const char *pre = r->prefix && *r->prefix ? r->prefix : NULL;
    bool has_path = path && *path;
    if (pre && has_path)
        return icd_fail(r->err, r->code, r->file, -1, "%s: %s: %s", pre, path, msg);
    if (pre || has_path)
        return icd_fail(r->err, r->code, r->file, -1, "%s: %s", pre ? pre : path, msg);
    return icd_fail(r->err, r->code, r->file, -1, "%s", msg);
}

int icd_json_fail(const icd_json_reader *r, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = icd_json_failv(r, path, fmt, ap);
    va_end(ap);
    return rc;
}

const char *icd_json_type_name(const json_t *v)
{
    switch (v ? json_typeof(v) : JSON_NULL) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

int icd_json_fail_type(const icd_json_reader *r, const char *path, const char *want,
                       const json_t *v)
{
    return icd_json_fail(r, path, "expected %s, found %s", want, icd_json_type_name(v));
}

const json_t *icd_json_field(const json_t *obj, const char *key)
{
    if (!json_is_object(obj)) return NULL;
    const json_t *v = json_object_get(obj, key);
    return json_is_null(v) ? NULL : v;
}

/* ---- values -------------------------------------------------------------------------- */

static const char *copy_text(icd_arena *arena, const char *s, size_t n)
{
    if (arena) return icd_arena_strndup(arena, s, n);
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

int icd_json_as_str(const icd_json_reader *r, const json_t *v, const char *path, icd_arena *arena,
                    const char **out)
{
    char tmp[64];
    const char *s = NULL;
    size_t n = 0;
    *out = NULL;
    if (json_is_string(v)) {
        s = json_string_value(v);
        n = json_string_length(v);
        /* Jackson keeps a NUL inside a string; C strings cannot */
        if (r->mode == ICD_JSON_LENIENT && memchr(s, '\0', n))
            return icd_json_fail(r, path, "strings with NUL characters are not supported");
    } else if (r->mode == ICD_JSON_STRICT) {
        return icd_json_fail_type(r, path, "a string", v);
    } else if (json_is_integer(v)) {
        n = (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)json_integer_value(v));
        s = tmp;
    } else if (json_is_real(v)) {
        icd_buf b = ICD_BUF_INIT;
        icd_java_fmt_double(&b, json_real_value(v)); /* Double.toString, as Jackson */
        *out = icd_buf_ok(&b) ? copy_text(arena, b.data, b.len) : NULL;
        icd_buf_free(&b);
        return *out ? 0 : icd_fail_nomem(r->err);
    } else if (json_is_boolean(v)) {
        s = json_is_true(v) ? "true" : "false";
        n = strlen(s);
    } else {
        return icd_json_fail_type(r, path, "a string", v);
    }
    *out = copy_text(arena, s, n);
    return *out ? 0 : icd_fail_nomem(r->err);
}

static int fail_number(const icd_json_reader *r, const char *path, const char *want,
                       const json_t *v)
{
    if (json_is_integer(v))
        return icd_json_fail(r, path, "expected %s, found %lld", want,
                             (long long)json_integer_value(v));
    if (json_is_real(v))
        return icd_json_fail(r, path, "expected %s, found %.17g", want, json_real_value(v));
    return icd_json_fail_type(r, path, want, v);
}

/* *empty: a lenient "" (Jackson: null, so the default stays). */
static int to_i64(const icd_json_reader *r, const json_t *v, const char *path, const char *want,
                  int64_t *out, bool *empty)
{
    *empty = false;
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return 0;
    }
    if (r->mode == ICD_JSON_LENIENT) {
        if (json_is_real(v)) {
            *out = icd_java_d2l(json_real_value(v)); /* Jackson truncates, like a cast */
            return 0;
        }
        if (json_is_string(v)) {
            const char *s = json_string_value(v);
            if (*s == '\0') {
                *empty = true;
                return 0;
            }
            if (!icd_java_parse_long(s, json_string_length(v), out))
                return icd_json_fail(r, path, "expected %s, found \"%.100s\"", want, s);
            return 0;
        }
    } else if (json_is_real(v) && (r->flags & ICD_JSON_INTEGRAL_REALS)) {
        double d = json_real_value(v);
        if (isfinite(d) && d == floor(d) && d >= -9223372036854775808.0 &&
            d < 9223372036854775808.0) {
            *out = (int64_t)d;
            return 0;
        }
    }
    return fail_number(r, path, want, v);
}

static int to_i32(const icd_json_reader *r, const json_t *v, const char *path, int32_t *out,
                  bool *empty)
{
    int64_t x;
    ICD_TRY(to_i64(r, v, path, "a 32-bit integer", &x, empty));
    if (*empty) return 0;
    if (x < INT32_MIN || x > INT32_MAX)
        return icd_json_fail(r, path, "expected a 32-bit integer, found %lld", (long long)x);
    *out = (int32_t)x;
    return 0;
}

int icd_json_as_i64(const icd_json_reader *r, const json_t *v, const char *path, int64_t *out)
{
    bool empty;
    int64_t x = 0;
    ICD_TRY(to_i64(r, v, path, "an integer", &x, &empty));
    if (empty) return icd_json_fail(r, path, "expected an integer, found \"\"");
    *out = x;
    return 0;
}

int icd_json_as_i32(const icd_json_reader *r, const json_t *v, const char *path, int32_t *out)
{
    bool empty;
    int32_t x = 0;
    ICD_TRY(to_i32(r, v, path, &x, &empty));
    if (empty) return icd_json_fail(r, path, "expected a 32-bit integer, found \"\"");
    *out = x;
    return 0;
}

/* ---- members ------------------------------------------------------------------------- */

/* The member at path.key into *v (NULL when absent or null); REQUIRED ones must be there.
 * `p` receives the member's path only when an error needs it. */
static int member(const icd_json_reader *r, const json_t *obj, const char *path, const char *key,
                  icd_json_need need, const json_t **v)
{
    const json_t *raw = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    *v = json_is_null(raw) ? NULL : raw;
    if (*v || need == ICD_JSON_OPTIONAL) return 0;
    char p[ICD_JSON_PATH_MAX];
    icd_json_path_key(p, path, key);
    return icd_json_fail(r, p, raw ? "required field is null" : "required field is missing");
}

int icd_json_get_value(const icd_json_reader *r, const json_t *obj, const char *path,
                       const char *key, icd_json_need need, const json_t **out)
{
    return member(r, obj, path, key, need, out);
}

int icd_json_get_str(const icd_json_reader *r, const json_t *obj, const char *path, const char *key,
                     icd_json_need need, icd_arena *arena, const char **out)
{
    const json_t *v;
    *out = NULL;
    ICD_TRY(member(r, obj, path, key, need, &v));
    if (!v) return 0;
    if (json_is_string(v) && (r->mode == ICD_JSON_STRICT ||
                              !memchr(json_string_value(v), '\0', json_string_length(v)))) {
        /* the common case, without a path */
        *out = copy_text(arena, json_string_value(v), json_string_length(v));
        return *out ? 0 : icd_fail_nomem(r->err);
    }
    char p[ICD_JSON_PATH_MAX];
    icd_json_path_key(p, path, key);
    return icd_json_as_str(r, v, p, arena, out);
}

int icd_json_get_bool(const icd_json_reader *r, const json_t *obj, const char *path,
                      const char *key, icd_json_need need, bool def, bool *out)
{
    const json_t *v;
    *out = def;
    ICD_TRY(member(r, obj, path, key, need, &v));
    if (!v) return 0;
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return 0;
    }
    if (r->mode == ICD_JSON_LENIENT) {
        if (json_is_integer(v)) {
            *out = json_integer_value(v) != 0;
            return 0;
        }
        if (json_is_string(v)) {
            const char *s = json_string_value(v);
            if (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0) {
                *out = strcasecmp(s, "true") == 0;
                return 0;
            }
            if (*s == '\0') { /* Jackson: "" is null */
                if (need == ICD_JSON_OPTIONAL) return 0;
                char p[ICD_JSON_PATH_MAX];
                icd_json_path_key(p, path, key);
                return icd_json_fail(r, p, "required field is empty");
            }
        }
    }
    char p[ICD_JSON_PATH_MAX];
    icd_json_path_key(p, path, key);
    return icd_json_fail_type(r, p, "a boolean", v);
}

int icd_json_get_i64(const icd_json_reader *r, const json_t *obj, const char *path, const char *key,
                     icd_json_need need, int64_t def, int64_t *out, bool *present)
{
    const json_t *v;
    *out = def;
    if (present) *present = false;
    ICD_TRY(member(r, obj, path, key, need, &v));
    if (!v) return 0;
    if (json_is_integer(v)) { /* the common case, without a path */
        *out = (int64_t)json_integer_value(v);
        if (present) *present = true;
        return 0;
    }
    char p[ICD_JSON_PATH_MAX];
    icd_json_path_key(p, path, key);
    bool empty;
    int64_t x = def;
    ICD_TRY(to_i64(r, v, p, "an integer", &x, &empty));
    if (empty) {
        if (need == ICD_JSON_REQUIRED) return icd_json_fail(r, p, "required field is empty");
        return 0;
    }
    *out = x;
    if (present) *present = true;
    return 0;
}

int icd_json_get_i32(const icd_json_reader *r, const json_t *obj, const char *path, const char *key,
                     icd_json_need need, int32_t def, int32_t *out, bool *present)
{
    const json_t *v;
    *out = def;
    if (present) *present = false;
    ICD_TRY(member(r, obj, path, key, need, &v));
    if (!v) return 0;
    char p[ICD_JSON_PATH_MAX];
    p[0] = '\0';
    if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
        json_integer_value(v) > INT32_MAX)
        icd_json_path_key(p, path, key); /* only errors need it */
    bool empty;
    int32_t x = def;
    ICD_TRY(to_i32(r, v, p, &x, &empty));
    if (empty) {
        if (need == ICD_JSON_REQUIRED) return icd_json_fail(r, p, "required field is empty");
        return 0;
    }
    *out = x;
    if (present) *present = true;
    return 0;
}

static int get_typed(const icd_json_reader *r, const json_t *obj, const char *path, const char *key,
                     icd_json_need need, json_type type, const char *want, const json_t **out)
{
    const json_t *v;
    *out = NULL;
    ICD_TRY(member(r, obj, path, key, need, &v));
    if (!v) return 0;
    if (json_typeof(v) != type) {
        char p[ICD_JSON_PATH_MAX];
        icd_json_path_key(p, path, key);
        return icd_json_fail_type(r, p, want, v);
    }
    *out = v;
    return 0;
}

int icd_json_get_object(const icd_json_reader *r, const json_t *obj, const char *path,
                        const char *key, icd_json_need need, const json_t **out)
{
    return get_typed(r, obj, path, key, need, JSON_OBJECT, "an object", out);
}

int icd_json_get_array(const icd_json_reader *r, const json_t *obj, const char *path,
                       const char *key, icd_json_need need, const json_t **out)
{
    return get_typed(r, obj, path, key, need, JSON_ARRAY, "an array", out);
}
