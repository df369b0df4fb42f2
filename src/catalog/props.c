/*
 * catalogProperties helpers (see props.h): property text, storage settings for FileIO and
 * Hive-style durations, used by hive.c and glue.c when a catalog client is opened.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog/props.h"
#include "io/s3.h"

const char *cat_prop(const json_t *props, const char *key, char *tmp, size_t cap)
{
    const json_t *v = json_is_object(props) ? json_object_get(props, key) : NULL;
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_true(v)) return "true";
    if (json_is_false(v)) return "false";
    if (json_is_integer(v)) {
        snprintf(tmp, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return tmp;
    }
    if (json_is_real(v)) {
        snprintf(tmp, cap, "%.17g", json_real_value(v));
        return tmp;
    }
    return NULL;
}

bool cat_prop_true(const json_t *props, const char *key)
{
    char tmp[64];
    const char *v = cat_prop(props, key, tmp, sizeof tmp);
    return v && !strcasecmp(v, "true");
}

int cat_props_check(const json_t *props, const char *what, icd_error *err)
{
    if (!props || json_is_null(props)) return 0;
    if (!json_is_object(props))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "%s: catalogProperties is not an object",
                        what);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)props, k, v)
    {
        if (json_is_object(v) || json_is_array(v))
            return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                            "%s: catalogProperties key '%s' is not a plain value (dynamic "
                            "config providers are not supported)",
                            what, k);
    }
    return 0;
}

/* Hadoop S3A names and the Iceberg FileIO names they stand for. */
static const char *const S3A_KEYS[][2] = {
    {"fs.s3a.access.key", "s3.access-key-id"},
    {"fs.s3a.secret.key", "s3.secret-access-key"},
    {"fs.s3a.session.token", "s3.session-token"},
    {"fs.s3a.endpoint", "s3.endpoint"},
    {"fs.s3a.path.style.access", "s3.path-style-access"},
    {"fs.s3a.endpoint.region", "s3.region"},
};

int cat_props_apply_storage(icd_fileio *io, const json_t *props, icd_error *err)
{
    if (!json_is_object(props)) return 0;
    /* S3A names first, so an Iceberg name given as well wins. */
    for (size_t i = 0; i < sizeof S3A_KEYS / sizeof S3A_KEYS[0]; i++) {
        char tmp[64];
        const char *v = cat_prop(props, S3A_KEYS[i][0], tmp, sizeof tmp);
        if (v) ICD_TRY(icd_fileio_set_s3_property(io, S3A_KEYS[i][1], v, err));
    }
    const char *k;
    json_t *jv;
    json_object_foreach((json_t *)props, k, jv)
    {
        char tmp[64];
        const char *v = cat_prop(props, k, tmp, sizeof tmp);
        if (v) ICD_TRY(icd_fileio_set_s3_property(io, k, v, err));
    }
    return 0;
}

bool cat_parse_duration_ms(const char *s, long default_unit_ms, long *out_ms)
{
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s)) return false;
    errno = 0;
    char *end;
    long long n = strtoll(s, &end, 10);
    if (errno || n < 0 || n > 100000000LL) return false;
    while (isspace((unsigned char)*end))
        end++;
    long unit;
    if (!*end)
        unit = default_unit_ms;
    else if (!strcasecmp(end, "ms") || !strcasecmp(end, "msec"))
        unit = 1;
    else if (!strcasecmp(end, "s") || !strcasecmp(end, "sec") || !strcasecmp(end, "seconds"))
        unit = 1000;
    else if (!strcasecmp(end, "m") || !strcasecmp(end, "min") || !strcasecmp(end, "minutes"))
        unit = 60000;
    else if (!strcasecmp(end, "h") || !strcasecmp(end, "hours"))
        unit = 3600000;
    else
        return false;
    if (n > (long long)(0x7fffffffL / unit)) return false;
    *out_ms = (long)n * unit;
    return true;
}
