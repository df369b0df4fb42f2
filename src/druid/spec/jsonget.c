/*
 * Lenient, path-reporting field readers over jansson values for the Druid spec parser
 * (spec.c, filter.c). They reproduce the coercions Jackson applies when Druid reads an
 * ingestion spec, so a spec Druid accepts is accepted here too.
 */
#include "druid/spec/jsonget.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/javanum.h"

void dr_path_key(char *out, const char *path, const char *key)
{
    if (!path || !*path)
        snprintf(out, DR_PATH_MAX, "%s", key);
    else
        snprintf(out, DR_PATH_MAX, "%s.%s", path, key);
}

void dr_path_index(char *out, const char *path, size_t index)
{
    snprintf(out, DR_PATH_MAX, "%s[%zu]", path ? path : "", index);
}

static int fail_pathv(icd_error *err, int code, const char *path, const char *fmt, va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (path && *path) return icd_fail(err, code, NULL, -1, "%s: %s", path, msg);
    return icd_fail(err, code, NULL, -1, "%s", msg);
}

int dr_fail_path(icd_error *err, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fail_pathv(err, ICD_EINVALID, path, fmt, ap);
    va_end(ap);
    return rc;
}

int dr_fail_path_code(icd_error *err, int code, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fail_pathv(err, code, path, fmt, ap);
    va_end(ap);
    return rc;
}

const json_t *dr_field(const json_t *obj, const char *key)
{
    if (!json_is_object(obj)) return NULL;
    const json_t *v = json_object_get(obj, key);
    return json_is_null(v) ? NULL : v;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
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

int dr_scalar_text(const json_t *v, const char *path, char **out, icd_error *err)
{
    char tmp[64];
    const char *s = NULL;
    size_t n = 0;
    *out = NULL;
    if (json_is_string(v)) {
        s = json_string_value(v);
        n = json_string_length(v);
        if (memchr(s, '\0', n))
            return dr_fail_path(err, path, "strings with NUL characters are not supported");
    } else if (json_is_integer(v)) {
        n = (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)json_integer_value(v));
        s = tmp;
    } else if (json_is_real(v)) {
        icd_buf b = ICD_BUF_INIT;
        icd_java_fmt_double(&b, json_real_value(v));
        char *d = icd_buf_detach(&b);
        if (!d) return icd_fail_nomem(err);
        *out = d;
        return 0;
    } else if (json_is_boolean(v)) {
        s = json_is_true(v) ? "true" : "false";
        n = strlen(s);
    } else {
        return dr_fail_path(err, path, "expected a string, found %s", type_name(v));
    }
    char *d = malloc(n + 1);
    if (!d) return icd_fail_nomem(err);
    memcpy(d, s, n);
    d[n] = '\0';
    *out = d;
    return 0;
}

int dr_get_str(const json_t *obj, const char *key, const char *path, char **out, icd_error *err)
{
    *out = NULL;
    const json_t *v = dr_field(obj, key);
    if (!v) return 0;
    char p[DR_PATH_MAX];
    dr_path_key(p, path, key);
    return dr_scalar_text(v, p, out, err);
}

int dr_get_bool(const json_t *obj, const char *key, const char *path, bool def, bool *out,
                icd_error *err)
{
    const json_t *v = dr_field(obj, key);
    char p[DR_PATH_MAX];
    *out = def;
    if (!v) return 0;
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return 0;
    }
    if (json_is_integer(v)) {
        *out = json_integer_value(v) != 0;
        return 0;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strcasecmp(s, "true") == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(s, "false") == 0) {
            *out = false;
            return 0;
        }
        if (*s == '\0') return 0; /* Jackson: empty string = null */
    }
    dr_path_key(p, path, key);
    return dr_fail_path(err, p, "expected a boolean, found %s", type_name(v));
}

int dr_get_i64(const json_t *obj, const char *key, const char *path, int64_t def, int64_t *out,
               bool *present, icd_error *err)
{
    const json_t *v = dr_field(obj, key);
    char p[DR_PATH_MAX];
    *out = def;
    if (present) *present = false;
    if (!v) return 0;
    dr_path_key(p, path, key);
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
    } else if (json_is_real(v)) {
        *out = icd_java_d2l(json_real_value(v));
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (*s == '\0') return 0;
        if (!icd_java_parse_long(s, json_string_length(v), out))
            return dr_fail_path(err, p, "expected an integer, found \"%.100s\"", s);
    } else {
        return dr_fail_path(err, p, "expected an integer, found %s", type_name(v));
    }
    if (present) *present = true;
    return 0;
}

int dr_get_object(const json_t *obj, const char *key, const char *path, const json_t **out,
                  icd_error *err)
{
    const json_t *v = dr_field(obj, key);
    *out = NULL;
    if (!v) return 0;
    if (!json_is_object(v)) {
        char p[DR_PATH_MAX];
        dr_path_key(p, path, key);
        return dr_fail_path(err, p, "expected an object, found %s", type_name(v));
    }
    *out = v;
    return 0;
}

int dr_get_array(const json_t *obj, const char *key, const char *path, const json_t **out,
                 icd_error *err)
{
    const json_t *v = dr_field(obj, key);
    *out = NULL;
    if (!v) return 0;
    if (!json_is_array(v)) {
        char p[DR_PATH_MAX];
        dr_path_key(p, path, key);
        return dr_fail_path(err, p, "expected an array, found %s", type_name(v));
    }
    *out = v;
    return 0;
}

json_t *dr_json_object_at(json_t *root, const char *path)
{
    json_t *cur = root;
    char key[128];
    while (cur && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof key) return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        cur = json_object_get(cur, key);
        path = dot ? dot + 1 : path + n;
    }
    return json_is_object(cur) ? cur : NULL;
}
