/*
 * Iceberg types: names, primitive-type parsing ("decimal(9,2)", "fixed[16]", geo types),
 * formatting back to Iceberg JSON, and the "can icedruid read this?" check. Schema parsing
 * (schema.c) builds the nested types; everything above asks these functions about them.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/jsonw.h"
#include "iceberg/literal.h"
#include "iceberg/types.h"

static const struct {
    ice_type_kind kind;
    const char *name;
} KIND_NAMES[] = {
    {ICE_T_BOOLEAN, "boolean"},
    {ICE_T_INT, "int"},
    {ICE_T_LONG, "long"},
    {ICE_T_FLOAT, "float"},
    {ICE_T_DOUBLE, "double"},
    {ICE_T_DECIMAL, "decimal"},
    {ICE_T_DATE, "date"},
    {ICE_T_TIME, "time"},
    {ICE_T_TIMESTAMP, "timestamp"},
    {ICE_T_TIMESTAMPTZ, "timestamptz"},
    {ICE_T_TIMESTAMP_NS, "timestamp_ns"},
    {ICE_T_TIMESTAMPTZ_NS, "timestamptz_ns"},
    {ICE_T_STRING, "string"},
    {ICE_T_UUID, "uuid"},
    {ICE_T_FIXED, "fixed"},
    {ICE_T_BINARY, "binary"},
    {ICE_T_STRUCT, "struct"},
    {ICE_T_LIST, "list"},
    {ICE_T_MAP, "map"},
    {ICE_T_UNKNOWN, "unknown"},
    {ICE_T_VARIANT, "variant"},
    {ICE_T_GEOMETRY, "geometry"},
    {ICE_T_GEOGRAPHY, "geography"},
};

const char *ice_type_kind_name(ice_type_kind kind)
{
    for (size_t i = 0; i < sizeof KIND_NAMES / sizeof KIND_NAMES[0]; i++)
        if (KIND_NAMES[i].kind == kind) return KIND_NAMES[i].name;
    return "?";
}

bool ice_type_kind_is_unreadable(ice_type_kind kind)
{
    return kind == ICE_T_UNKNOWN || kind == ICE_T_GEOMETRY || kind == ICE_T_GEOGRAPHY;
}

int ice_type_check_readable(const ice_type *t, const char *column, icd_error *err)
{
    if (ice_type_kind_is_unreadable(t->kind))
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                        "column '%s' has type %s, which icedruid cannot read", column,
                        ice_type_kind_name(t->kind));
    if (t->kind == ICE_T_STRUCT) {
        for (size_t i = 0; i < t->nfields; i++)
            ICD_TRY(ice_type_check_readable(t->fields[i].type, column, err));
    } else if (t->kind == ICE_T_LIST) {
        ICD_TRY(ice_type_check_readable(t->element->type, column, err));
    } else if (t->kind == ICE_T_MAP) {
        ICD_TRY(ice_type_check_readable(t->key->type, column, err));
        ICD_TRY(ice_type_check_readable(t->value->type, column, err));
    }
    return 0;
}

/* Skips ASCII blanks. */
static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Reads a non-negative decimal int of at most 9 digits; NULL when there is none. */
static const char *read_small_int(const char *p, int32_t *out)
{
    p = skip_ws(p);
    if (!isdigit((unsigned char)*p)) return NULL;
    int64_t v = 0;
    int digits = 0;
    while (isdigit((unsigned char)*p)) {
        if (++digits > 9) return NULL;
        v = v * 10 + (*p++ - '0');
    }
    *out = (int32_t)v;
    return skip_ws(p);
}

static int bad_type(icd_error *err, const char *name)
{
    return icd_fail(err, ICD_ECORRUPT, NULL, -1, "unknown or malformed type '%.200s'", name);
}

/* "decimal(P, S)": 1 <= P <= 38, 0 <= S <= P is what writers produce; Iceberg Java only
 * checks P <= 38, so S is accepted as long as it is not negative. */
static int parse_decimal(const char *name, ice_type *out, icd_error *err)
{
    const char *p = name + strlen("decimal");
    p = skip_ws(p);
    if (*p++ != '(') return bad_type(err, name);
    int32_t prec, scale;
    if (!(p = read_small_int(p, &prec)) || *p++ != ',' || !(p = read_small_int(p, &scale)) ||
        *p++ != ')' || *skip_ws(p) != '\0')
        return bad_type(err, name);
    if (prec < 1 || prec > 38)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "type '%.200s': decimal precision must be 1..38", name);
    out->kind = ICE_T_DECIMAL;
    out->precision = prec;
    out->scale = scale;
    return 0;
}

static int parse_fixed(const char *name, ice_type *out, icd_error *err)
{
    const char *p = skip_ws(name + strlen("fixed"));
    int32_t len;
    if (*p++ != '[' || !(p = read_small_int(p, &len)) || *p++ != ']' || *skip_ws(p) != '\0')
        return bad_type(err, name);
    if (len < 1)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "type '%.200s': length must be positive",
                        name);
    out->kind = ICE_T_FIXED;
    out->length = len;
    return 0;
}

/* geometry / geography with optional "(params)"; the params are kept as text. */
static int parse_geo(const char *name, size_t kw, ice_type_kind kind, icd_arena *arena,
                     ice_type *out, icd_error *err)
{
    const char *p = skip_ws(name + kw);
    out->kind = kind;
    out->params = NULL;
    if (*p == '\0') return 0;
    if (*p != '(') return bad_type(err, name);
    const char *close = strrchr(p, ')');
    if (!close || *skip_ws(close + 1) != '\0') return bad_type(err, name);
    out->params = icd_arena_strndup(arena, p + 1, (size_t)(close - p - 1));
    if (!out->params) return icd_fail_nomem(err);
    return 0;
}

int ice_type_parse_primitive(const char *name, icd_arena *arena, ice_type *out, icd_error *err)
{
    memset(out, 0, sizeof *out);
    /* Fixed names compare case-insensitively, like Iceberg Java's Types.fromPrimitiveString. */
    static const ice_type_kind simple[] = {
        ICE_T_BOOLEAN,     ICE_T_INT,          ICE_T_LONG,           ICE_T_FLOAT,
        ICE_T_DOUBLE,      ICE_T_DATE,         ICE_T_TIME,           ICE_T_TIMESTAMP,
        ICE_T_TIMESTAMPTZ, ICE_T_TIMESTAMP_NS, ICE_T_TIMESTAMPTZ_NS, ICE_T_STRING,
        ICE_T_UUID,        ICE_T_BINARY,       ICE_T_UNKNOWN,        ICE_T_VARIANT,
    };
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
        if (!strcasecmp(name, ice_type_kind_name(simple[i]))) {
            out->kind = simple[i];
            return 0;
        }
    }
    if (!strncasecmp(name, "decimal", 7)) return parse_decimal(name, out, err);
    if (!strncasecmp(name, "fixed", 5)) return parse_fixed(name, out, err);
    if (!strncasecmp(name, "geometry", 8))
        return parse_geo(name, 8, ICE_T_GEOMETRY, arena, out, err);
    if (!strncasecmp(name, "geography", 9))
        return parse_geo(name, 9, ICE_T_GEOGRAPHY, arena, out, err);
    return bad_type(err, name);
}

void ice_type_format(icd_buf *b, const ice_type *t)
{
    switch (t->kind) {
    case ICE_T_DECIMAL:
        icd_buf_printf(b, "decimal(%d,%d)", t->precision, t->scale);
        break;
    case ICE_T_FIXED:
        icd_buf_printf(b, "fixed[%d]", t->length);
        break;
    case ICE_T_GEOMETRY:
    case ICE_T_GEOGRAPHY:
        icd_buf_puts(b, ice_type_kind_name(t->kind));
        if (t->params) icd_buf_printf(b, "(%s)", t->params);
        break;
    default:
        icd_buf_puts(b, ice_type_kind_name(t->kind));
    }
}

static void json_key(icd_buf *b, const char *k)
{
    icd_json_cstr(b, k);
    icd_buf_putc(b, ':');
}

void ice_field_to_json(icd_buf *b, const ice_field *f)
{
    icd_buf_putc(b, '{');
    json_key(b, "id");
    icd_json_i64(b, f->id);
    icd_buf_putc(b, ',');
    json_key(b, "name");
    icd_json_cstr(b, f->name);
    icd_buf_putc(b, ',');
    json_key(b, "required");
    icd_buf_puts(b, f->required ? "true" : "false");
    icd_buf_putc(b, ',');
    json_key(b, "type");
    ice_type_to_json(b, f->type);
    if (f->doc) {
        icd_buf_putc(b, ',');
        json_key(b, "doc");
        icd_json_cstr(b, f->doc);
    }
    if (f->initial_default) {
        icd_buf_putc(b, ',');
        json_key(b, "initial-default");
        ice_literal_to_single_value_json(b, f->initial_default);
    }
    if (f->write_default) {
        icd_buf_putc(b, ',');
        json_key(b, "write-default");
        ice_literal_to_single_value_json(b, f->write_default);
    }
    icd_buf_putc(b, '}');
}

void ice_type_to_json(icd_buf *b, const ice_type *t)
{
    switch (t->kind) {
    case ICE_T_STRUCT:
        icd_buf_puts(b, "{\"type\":\"struct\",\"fields\":[");
        for (size_t i = 0; i < t->nfields; i++) {
            if (i) icd_buf_putc(b, ',');
            ice_field_to_json(b, &t->fields[i]);
        }
        icd_buf_puts(b, "]}");
        break;
    case ICE_T_LIST:
        icd_buf_printf(b,
                       "{\"type\":\"list\",\"element-id\":%d,\"element-required\":%s,"
                       "\"element\":",
                       t->element->id, t->element->required ? "true" : "false");
        ice_type_to_json(b, t->element->type);
        icd_buf_putc(b, '}');
        break;
    case ICE_T_MAP:
        icd_buf_printf(b, "{\"type\":\"map\",\"key-id\":%d,\"key\":", t->key->id);
        ice_type_to_json(b, t->key->type);
        icd_buf_printf(b, ",\"value-id\":%d,\"value-required\":%s,\"value\":", t->value->id,
                       t->value->required ? "true" : "false");
        ice_type_to_json(b, t->value->type);
        icd_buf_putc(b, '}');
        break;
    default: {
        icd_buf tmp = ICD_BUF_INIT;
        ice_type_format(&tmp, t);
        icd_json_str(b, tmp.data ? tmp.data : "", tmp.len);
        icd_buf_free(&tmp);
    }
    }
}
