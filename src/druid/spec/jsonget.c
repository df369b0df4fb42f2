/*
 * What the Druid spec parser (spec.c, filter.c) and the spec rewriters (plan/rewrite.c,
 * phase2/emit.c) need around base/jsonget's lenient readers: errors at a spec path, and
 * the object at a dotted path of a spec document.
 */
#include "druid/spec/jsonget.h"

#include <stdarg.h>
#include <string.h>

int dr_fail_path(icd_error *err, const char *path, const char *fmt, ...)
{
    icd_json_reader r = dr_spec_reader(err);
    va_list ap;
    va_start(ap, fmt);
    int rc = icd_json_failv(&r, path, fmt, ap);
    va_end(ap);
    return rc;
}

int dr_fail_path_code(icd_error *err, int code, const char *path, const char *fmt, ...)
{
    icd_json_reader r = dr_spec_reader(err);
    r.code = code;
    va_list ap;
    va_start(ap, fmt);
    int rc = icd_json_failv(&r, path, fmt, ap);
    va_end(ap);
    return rc;
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
