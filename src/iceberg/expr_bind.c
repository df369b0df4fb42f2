/*
 * Binding row filters (see expr.h): an unbound ice_expr (column names, loosely typed
 * values, as Druid's icebergFilter gives them) becomes an ice_bound_expr over field ids
 * with literals of each column's type. NOT is pushed down to the leaves here (De Morgan,
 * negated comparisons), so projection and the evaluators never meet it, and TRUE/FALSE
 * fold away. Also renders expressions as text for messages.
 *
 * Literal conversion follows Iceberg Java's Literal.to (integers widen to long, float,
 * double, decimal, date, time and timestamps; an instant becomes a timestamp of either
 * unit or a date by flooring; values beyond an int or float column's range fold the
 * comparison like Java's aboveMax/belowMin). Beyond Java, text also parses as numbers
 * and booleans, since Druid's `equals` filter always carries text.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/datetime.h"
#include "base/jsonw.h"
#include "iceberg/expr.h"
#include "iceberg/expr_internal.h"
#include "iceberg/schema.h"

static const ice_bound_expr TRUE_EXPR = {.op = ICE_EXPR_TRUE, .pos = -1};
static const ice_bound_expr FALSE_EXPR = {.op = ICE_EXPR_FALSE, .pos = -1};

const ice_bound_expr *ice_bound_true(void)
{
    return &TRUE_EXPR;
}
const ice_bound_expr *ice_bound_false(void)
{
    return &FALSE_EXPR;
}

/* ---- value conversion ---------------------------------------------------------------- */

/* What a comparison folds to when its value lies beyond the column type's range. */
typedef enum fold {
    FOLD_NONE,
    FOLD_ABOVE_MAX, /* the value is above every value of the type */
    FOLD_BELOW_MIN
} fold;

typedef struct conv {
    const char *column;
    const ice_type *type;
    icd_arena *a;
    icd_error *err;
} conv;

static void describe_value(icd_buf *b, const ice_expr_value *v)
{
    switch (v->kind) {
    case ICE_VALUE_STRING:
        icd_json_cstr(b, v->str ? v->str : "");
        break;
    case ICE_VALUE_LONG:
        icd_json_i64(b, v->i64);
        break;
    case ICE_VALUE_DOUBLE:
        icd_json_double(b, v->f64);
        break;
    case ICE_VALUE_BOOL:
        icd_buf_puts(b, v->b ? "true" : "false");
        break;
    case ICE_VALUE_TIMESTAMP_MICROS:
        icd_json_timestamp(b, v->i64, 6, true);
        break;
    }
}

static int cannot_convert(const conv *c, const ice_expr_value *v, const char *why)
{
    icd_buf vb = ICD_BUF_INIT, tb = ICD_BUF_INIT;
    describe_value(&vb, v);
    ice_type_format(&tb, c->type);
    int rc = icd_fail(c->err, ICD_EINVALID, NULL, -1,
                      "filter value %s cannot be compared with column '%s' of type %s%s%s",
                      vb.data ? vb.data : "?", c->column, tb.data ? tb.data : "?", why ? ": " : "",
                      why ? why : "");
    icd_buf_free(&vb);
    icd_buf_free(&tb);
    return rc;
}

static int decimal_literal(const conv *c, ice_i128 v, ice_literal *out)
{
    uint8_t *p = icd_arena_alloc(c->a, 16);
    if (!p) return icd_fail_nomem(c->err);
    size_t n = ice_decimal_from_i128(v, p);
    *out = ice_lit_decimal(p, n, c->type->scale);
    return 0;
}

static ice_i128 pow10_128(int k)
{
    ice_i128 r = 1;
    while (k-- > 0)
        r *= 10;
    return r;
}

/* |v| * 10^k without overflowing 38 digits. */
static bool scale_up(ice_i128 v, int k, ice_i128 *out)
{
    const ice_i128 lim = pow10_128(38);
    for (int i = 0; i < k; i++) {
        if (v >= lim / 10 || v <= -lim / 10) return false;
        v *= 10;
    }
    *out = v;
    return true;
}

/* Java: BigDecimal.valueOf(double).setScale(scale, HALF_UP). valueOf uses the shortest
 * text that reads back as the same double. */
static bool double_to_decimal(double d, int32_t scale, ice_i128 *out)
{
    char txt[40];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(txt, sizeof txt, "%.*e", prec - 1, d);
        if (strtod(txt, NULL) == d) break;
    }
    if (prec > 17) prec = 17;
    snprintf(txt, sizeof txt, "%.*e", prec - 1, d);
    bool neg = txt[0] == '-';
    const char *p = txt + (neg ? 1 : 0);
    int64_t digits = 0;
    int nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9') {
            digits = digits * 10 + (*p - '0');
            nd++;
        }
    if (*p != 'e') return false;
    int exp10 = atoi(p + 1);
    int k = exp10 - (nd - 1) + scale; /* value = digits * 10^(k - scale) */
    ice_i128 v = digits;
    if (k >= 0) {
        if (!scale_up(v, k, &v)) return false;
    } else if (-k > 38) {
        v = 0;
    } else {
        ice_i128 div = pow10_128(-k);
        ice_i128 q = v / div, r = v % div;
        if (r * 2 >= div) q++;
        v = q;
    }
    *out = neg ? -v : v;
    return true;
}

static bool parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s || (s[0] != '-' && s[0] != '+' && (s[0] < '0' || s[0] > '9'))) return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

static bool parse_f64(const char *s, double *out)
{
    if (!s || !*s || isspace((unsigned char)s[0])) return false;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (*end || isnan(v) || (errno == ERANGE && isinf(v))) return false;
    *out = v;
    return true;
}

/* Text as a decimal of the column's scale. When the text has more (non-zero) fraction
 * digits than the scale, the comparison is rewritten exactly: x == 1.005 matches nothing
 * in a decimal(9,2), x < 1.005 is x <= 1.00, x > 1.005 is x >= 1.01. */
static int text_to_decimal(const conv *c, const char *s, ice_expr_op *op, ice_literal *out,
                           int *folded)
{
    size_t n = strlen(s);
    int32_t scale = c->type->scale;
    ice_i128 v;
    if (ice_decimal_parse(s, n, 0, scale, &v)) return decimal_literal(c, v, out);
    for (int32_t extra = 1; scale + extra <= 38; extra++) {
        if (!ice_decimal_parse(s, n, 0, scale + extra, &v)) continue;
        ice_i128 div = pow10_128(extra);
        ice_i128 fl = v / div;
        if (v % div != 0 && v < 0) fl--; /* floor */
        switch (*op) {
        case ICE_EXPR_EQ:
            *folded = ICE_EXPR_FALSE;
            return 0;
        case ICE_EXPR_NOT_EQ:
            *folded = ICE_EXPR_TRUE;
            return 0;
        case ICE_EXPR_LT:
        case ICE_EXPR_LE:
            *op = ICE_EXPR_LE;
            return decimal_literal(c, fl, out);
        default:
            *op = ICE_EXPR_GE;
            return decimal_literal(c, fl + 1, out);
        }
    }
    ice_expr_value tmp = {.kind = ICE_VALUE_STRING, .str = s};
    return cannot_convert(c, &tmp, "not a decimal number");
}

static int long_to_int_kind(const conv *c, int64_t v, ice_type_kind k, ice_literal *out, fold *f)
{
    if (v > INT32_MAX)
        *f = FOLD_ABOVE_MAX;
    else if (v < INT32_MIN)
        *f = FOLD_BELOW_MIN;
    else
        *out = ice_lit_i32(k, (int32_t)v);
    (void)c;
    return 0;
}

static int from_long(const conv *c, const ice_expr_value *val, int64_t v, ice_literal *out, fold *f)
{
    switch (c->type->kind) {
    case ICE_T_INT:
    case ICE_T_DATE:
        return long_to_int_kind(c, v, c->type->kind, out, f);
    case ICE_T_LONG:
    case ICE_T_TIME:
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
        *out = ice_lit_i64(c->type->kind, v);
        return 0;
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        int64_t ns;
        if (__builtin_mul_overflow(v, (int64_t)1000, &ns))
            return cannot_convert(c, val, "out of the nanosecond timestamp range");
        *out = ice_lit_i64(c->type->kind, ns);
        return 0;
    }
    case ICE_T_FLOAT:
        *out = ice_lit_float((float)v);
        return 0;
    case ICE_T_DOUBLE:
        *out = ice_lit_double((double)v);
        return 0;
    case ICE_T_DECIMAL: {
        ice_i128 d;
        if (!scale_up(v, c->type->scale, &d))
            return cannot_convert(c, val, "too many digits for a decimal");
        return decimal_literal(c, d, out);
    }
    default:
        return cannot_convert(c, val, NULL);
    }
}

static int from_double(const conv *c, const ice_expr_value *val, double d, ice_literal *out,
                       fold *f)
{
    if (isnan(d)) return cannot_convert(c, val, "NaN cannot be a filter value");
    switch (c->type->kind) {
    case ICE_T_FLOAT:
        if (d > (double)3.4028234663852886e38)
            *f = FOLD_ABOVE_MAX;
        else if (d < -(double)3.4028234663852886e38)
            *f = FOLD_BELOW_MIN;
        else
            *out = ice_lit_float((float)d);
        return 0;
    case ICE_T_DOUBLE:
        *out = ice_lit_double(d);
        return 0;
    case ICE_T_DECIMAL: {
        ice_i128 v;
        if (isinf(d) || !double_to_decimal(d, c->type->scale, &v))
            return cannot_convert(c, val, "too many digits for a decimal");
        return decimal_literal(c, v, out);
    }
    default:
        return cannot_convert(c, val, NULL);
    }
}

static int from_micros(const conv *c, const ice_expr_value *val, int64_t us, ice_literal *out)
{
    switch (c->type->kind) {
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
        *out = ice_lit_i64(c->type->kind, us);
        return 0;
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        fold unused = FOLD_NONE;
        return from_long(c, val, us, out, &unused);
    }
    case ICE_T_DATE: {
        int64_t days = icd_floordiv(us, 86400000000LL);
        *out = ice_lit_date((int32_t)days);
        return 0;
    }
    default:
        return cannot_convert(c, val, NULL);
    }
}

static int from_text(const conv *c, const ice_expr_value *val, ice_expr_op *op, ice_literal *out,
                     fold *f, int *folded)
{
    const char *s = val->str ? val->str : "";
    size_t n = strlen(s);
    const ice_type *t = c->type;
    switch (t->kind) {
    case ICE_T_STRING: {
        char *p = icd_arena_strndup(c->a, s, n);
        if (!p) return icd_fail_nomem(c->err);
        *out = ice_lit_string(p, n);
        return 0;
    }
    case ICE_T_BOOLEAN:
        if (!strcasecmp(s, "true") || !strcasecmp(s, "false")) {
            *out = ice_lit_bool(!strcasecmp(s, "true"));
            return 0;
        }
        return cannot_convert(c, val, "expected true or false");
    case ICE_T_INT:
    case ICE_T_LONG: {
        int64_t v;
        if (!parse_i64(s, &v)) return cannot_convert(c, val, "not an integer");
        return from_long(c, val, v, out, f);
    }
    case ICE_T_FLOAT:
    case ICE_T_DOUBLE: {
        double d;
        if (!parse_f64(s, &d)) return cannot_convert(c, val, "not a number");
        return from_double(c, val, d, out, f);
    }
    case ICE_T_DECIMAL:
        return text_to_decimal(c, s, op, out, folded);
    case ICE_T_DATE: {
        int32_t days;
        if (!ice_parse_date(s, n, &days)) return cannot_convert(c, val, "expected YYYY-MM-DD");
        *out = ice_lit_date(days);
        return 0;
    }
    case ICE_T_TIME: {
        int64_t ns;
        if (!ice_parse_time(s, n, &ns)) return cannot_convert(c, val, "expected HH:MM:SS[.ffffff]");
        *out = ice_lit_i64(ICE_T_TIME, ns / 1000);
        return 0;
    }
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        bool tz = t->kind == ICE_T_TIMESTAMPTZ || t->kind == ICE_T_TIMESTAMPTZ_NS;
        int unit = (t->kind == ICE_T_TIMESTAMP_NS || t->kind == ICE_T_TIMESTAMPTZ_NS) ? 9 : 6;
        bool has_zone;
        int64_t v;
        if (!ice_parse_timestamp(s, n, unit, &has_zone, &v))
            return cannot_convert(c, val, "expected an ISO-8601 timestamp");
        /* a local timestamp cannot take an instant; text without a zone for a
         * timestamptz column is read as UTC */
        if (has_zone && !tz)
            return cannot_convert(c, val,
                                  "a zone offset is not allowed for a timestamp "
                                  "without time zone");
        *out = ice_lit_i64(t->kind, v);
        return 0;
    }
    case ICE_T_UUID: {
        json_t *j = json_string(s);
        if (!j) return icd_fail_nomem(c->err);
        icd_error tmp;
        int rc = ice_literal_from_json(j, t, c->a, out, &tmp);
        json_decref(j);
        if (rc == ICD_ENOMEM) return icd_fail_nomem(c->err);
        return rc ? cannot_convert(c, val, "expected a 36-character uuid") : 0;
    }
    default:
        return cannot_convert(c, val, NULL);
    }
}

/* Converts the value of one comparison; `*folded` becomes ICE_EXPR_TRUE/FALSE when the
 * comparison is decided by the conversion alone. `*op` may be tightened (decimals). */
static int convert_value(const conv *c, const ice_expr_value *val, ice_expr_op *op,
                         ice_literal *out, int *folded)
{
    fold f = FOLD_NONE;
    *folded = -1;
    int rc;
    switch (val->kind) {
    case ICE_VALUE_STRING:
        rc = from_text(c, val, op, out, &f, folded);
        break;
    case ICE_VALUE_LONG:
        rc = from_long(c, val, val->i64, out, &f);
        break;
    case ICE_VALUE_DOUBLE:
        rc = from_double(c, val, val->f64, out, &f);
        break;
    case ICE_VALUE_TIMESTAMP_MICROS:
        rc = from_micros(c, val, val->i64, out);
        break;
    case ICE_VALUE_BOOL:
        if (c->type->kind != ICE_T_BOOLEAN) return cannot_convert(c, val, NULL);
        *out = ice_lit_bool(val->b);
        rc = 0;
        break;
    default:
        return cannot_convert(c, val, "unknown value kind");
    }
    if (rc) return rc;
    if (f == FOLD_ABOVE_MAX)
        *folded = (*op == ICE_EXPR_LT || *op == ICE_EXPR_LE || *op == ICE_EXPR_NOT_EQ)
                      ? ICE_EXPR_TRUE
                      : ICE_EXPR_FALSE;
    else if (f == FOLD_BELOW_MIN)
        *folded = (*op == ICE_EXPR_GT || *op == ICE_EXPR_GE || *op == ICE_EXPR_NOT_EQ)
                      ? ICE_EXPR_TRUE
                      : ICE_EXPR_FALSE;
    return 0;
}

/* ---- tree building ------------------------------------------------------------------- */

ice_bound_expr *ice_bound_node(icd_arena *a, ice_expr_op op)
{
    ice_bound_expr *n = icd_arena_calloc(a, sizeof *n);
    if (n) {
        n->op = op;
        n->pos = -1;
    }
    return n;
}

const ice_bound_expr *ice_bound_combine(icd_arena *a, ice_expr_op op, const ice_bound_expr *l,
                                        const ice_bound_expr *r)
{
    ice_expr_op absorb = op == ICE_EXPR_AND ? ICE_EXPR_FALSE : ICE_EXPR_TRUE;
    ice_expr_op neutral = op == ICE_EXPR_AND ? ICE_EXPR_TRUE : ICE_EXPR_FALSE;
    if (l->op == absorb || r->op == absorb)
        return absorb == ICE_EXPR_TRUE ? &TRUE_EXPR : &FALSE_EXPR;
    if (l->op == neutral) return r;
    if (r->op == neutral) return l;
    ice_bound_expr *n = ice_bound_node(a, op);
    if (n) {
        n->left = l;
        n->right = r;
    }
    return n;
}

static ice_expr_op negate_op(ice_expr_op op)
{
    switch (op) {
    case ICE_EXPR_EQ:
        return ICE_EXPR_NOT_EQ;
    case ICE_EXPR_NOT_EQ:
        return ICE_EXPR_EQ;
    case ICE_EXPR_LT:
        return ICE_EXPR_GE;
    case ICE_EXPR_LE:
        return ICE_EXPR_GT;
    case ICE_EXPR_GT:
        return ICE_EXPR_LE;
    case ICE_EXPR_GE:
        return ICE_EXPR_LT;
    case ICE_EXPR_IS_NULL:
        return ICE_EXPR_NOT_NULL;
    case ICE_EXPR_NOT_NULL:
        return ICE_EXPR_IS_NULL;
    default:
        return op;
    }
}

typedef struct bctx {
    const ice_schema *s;
    bool cs;
    icd_arena *a;
    icd_error *err;
} bctx;

/* Resolves a column; `*never_null` tells whether the field and all its ancestors are
 * required (then null tests fold). */
static int resolve(const bctx *c, const char *name, const ice_field **out, const char **full,
                   bool *never_null)
{
    const ice_field *f = name ? ice_schema_find(c->s, name, c->cs) : NULL;
    if (!f)
        return icd_fail(c->err, ICD_EINVALID, NULL, -1,
                        "filter column '%s' not found in the table schema", name ? name : "");
    const ice_schema_entry *en = ice_schema_entry_by_id(c->s, f->id);
    *full = en && en->full_name ? en->full_name : f->name;
    bool req = f->required;
    for (const ice_field *p = ice_schema_parent(c->s, f->id); p;
         p = ice_schema_parent(c->s, p->id)) {
        if (p->type->kind != ICE_T_STRUCT)
            return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1,
                            "filter column '%s' is inside a list or map; only struct fields "
                            "can be filtered",
                            name);
        req = req && p->required;
    }
    if (!ice_type_is_primitive(f->type) || ice_type_kind_is_unreadable(f->type->kind)) {
        icd_buf tb = ICD_BUF_INIT;
        ice_type_format(&tb, f->type);
        int rc = icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1,
                          "filter column '%s' has type %s, which cannot be filtered", name,
                          tb.data ? tb.data : "?");
        icd_buf_free(&tb);
        return rc;
    }
    *out = f;
    *never_null = req;
    return 0;
}

static int bind_rec(const bctx *c, const ice_expr *e, bool negate, int depth,
                    const ice_bound_expr **out)
{
    if (!e) return icd_fail(c->err, ICD_EINVALID, NULL, -1, "filter expression is missing");
    if (depth > 10000)
        return icd_fail(c->err, ICD_EINVALID, NULL, -1, "filter expression is nested too deeply");
    switch (e->op) {
    case ICE_EXPR_TRUE:
    case ICE_EXPR_FALSE:
        *out = (e->op == ICE_EXPR_TRUE) != negate ? &TRUE_EXPR : &FALSE_EXPR;
        return 0;
    case ICE_EXPR_NOT:
        return bind_rec(c, e->left, !negate, depth + 1, out);
    case ICE_EXPR_AND:
    case ICE_EXPR_OR: {
        const ice_bound_expr *l = NULL, *r = NULL;
        ICD_TRY(bind_rec(c, e->left, negate, depth + 1, &l));
        ICD_TRY(bind_rec(c, e->right, negate, depth + 1, &r));
        ice_expr_op op = e->op;
        if (negate) op = op == ICE_EXPR_AND ? ICE_EXPR_OR : ICE_EXPR_AND;
        *out = ice_bound_combine(c->a, op, l, r);
        return *out ? 0 : icd_fail_nomem(c->err);
    }
    case ICE_EXPR_EQ:
    case ICE_EXPR_NOT_EQ:
    case ICE_EXPR_LT:
    case ICE_EXPR_LE:
    case ICE_EXPR_GT:
    case ICE_EXPR_GE:
    case ICE_EXPR_IS_NULL:
    case ICE_EXPR_NOT_NULL:
        break;
    default:
        return icd_fail(c->err, ICD_EINVALID, NULL, -1, "unknown filter operation %d", (int)e->op);
    }
    const ice_field *f = NULL;
    const char *full = NULL;
    bool never_null = false;
    ICD_TRY(resolve(c, e->column, &f, &full, &never_null));
    ice_expr_op op = negate ? negate_op(e->op) : e->op;
    if (op == ICE_EXPR_IS_NULL || op == ICE_EXPR_NOT_NULL) {
        if (never_null) {
            *out = op == ICE_EXPR_NOT_NULL ? &TRUE_EXPR : &FALSE_EXPR;
            return 0;
        }
    }
    ice_literal lit = ice_lit_null(f->type->kind);
    if (op != ICE_EXPR_IS_NULL && op != ICE_EXPR_NOT_NULL) {
        /* convert as written, then negate: the folding rules depend on the operation */
        ice_expr_op wop = e->op;
        conv cv = {full, f->type, c->a, c->err};
        int folded;
        ICD_TRY(convert_value(&cv, &e->value, &wop, &lit, &folded));
        if (folded >= 0) {
            bool t = (folded == ICE_EXPR_TRUE) != negate;
            *out = t ? &TRUE_EXPR : &FALSE_EXPR;
            return 0;
        }
        op = negate ? negate_op(wop) : wop;
    }
    ice_bound_expr *n = ice_bound_node(c->a, op);
    if (!n) return icd_fail_nomem(c->err);
    n->field_id = f->id;
    n->name = full;
    n->type = f->type;
    n->lit = lit;
    *out = n;
    return 0;
}

int ice_expr_bind(const ice_expr *e, const ice_schema *s, bool case_sensitive, icd_arena *a,
                  ice_bound_expr **out, icd_error *err)
{
    *out = NULL;
    if (!s) return icd_fail(err, ICD_EINVALID, NULL, -1, "cannot bind a filter without a schema");
    bctx c = {s, case_sensitive, a, err};
    const ice_bound_expr *r;
    ICD_TRY(bind_rec(&c, e, false, 0, &r));
    /* constants are shared statics: hand out a private copy so *out is writable */
    if (r == &TRUE_EXPR || r == &FALSE_EXPR) {
        ice_bound_expr *n = ice_bound_node(a, r->op);
        if (!n) return icd_fail_nomem(err);
        r = n;
    }
    *out = (ice_bound_expr *)r;
    return 0;
}

/* ---- text ---------------------------------------------------------------------------- */

static const char *op_text(ice_expr_op op)
{
    switch (op) {
    case ICE_EXPR_EQ:
        return "==";
    case ICE_EXPR_NOT_EQ:
        return "!=";
    case ICE_EXPR_LT:
        return "<";
    case ICE_EXPR_LE:
        return "<=";
    case ICE_EXPR_GT:
        return ">";
    case ICE_EXPR_GE:
        return ">=";
    default:
        return "?";
    }
}

void ice_expr_to_text(icd_buf *b, const ice_expr *e)
{
    if (!e) {
        icd_buf_puts(b, "true");
        return;
    }
    switch (e->op) {
    case ICE_EXPR_TRUE:
        icd_buf_puts(b, "true");
        return;
    case ICE_EXPR_FALSE:
        icd_buf_puts(b, "false");
        return;
    case ICE_EXPR_NOT:
        icd_buf_puts(b, "not(");
        ice_expr_to_text(b, e->left);
        icd_buf_putc(b, ')');
        return;
    case ICE_EXPR_AND:
    case ICE_EXPR_OR:
        icd_buf_putc(b, '(');
        ice_expr_to_text(b, e->left);
        icd_buf_puts(b, e->op == ICE_EXPR_AND ? " and " : " or ");
        ice_expr_to_text(b, e->right);
        icd_buf_putc(b, ')');
        return;
    case ICE_EXPR_IS_NULL:
    case ICE_EXPR_NOT_NULL:
        icd_buf_puts(b, e->op == ICE_EXPR_IS_NULL ? "is_null(" : "not_null(");
        icd_buf_puts(b, e->column ? e->column : "?");
        icd_buf_putc(b, ')');
        return;
    default:
        icd_buf_printf(b, "%s %s ", e->column ? e->column : "?", op_text(e->op));
        describe_value(b, &e->value);
        return;
    }
}

void ice_bound_expr_to_text(icd_buf *b, const ice_bound_expr *e)
{
    switch (e->op) {
    case ICE_EXPR_TRUE:
        icd_buf_puts(b, "true");
        return;
    case ICE_EXPR_FALSE:
        icd_buf_puts(b, "false");
        return;
    case ICE_EXPR_AND:
    case ICE_EXPR_OR:
        icd_buf_putc(b, '(');
        ice_bound_expr_to_text(b, e->left);
        icd_buf_puts(b, e->op == ICE_EXPR_AND ? " and " : " or ");
        ice_bound_expr_to_text(b, e->right);
        icd_buf_putc(b, ')');
        return;
    case ICE_EXPR_IS_NULL:
    case ICE_EXPR_NOT_NULL:
        icd_buf_puts(b, e->op == ICE_EXPR_IS_NULL ? "is_null(" : "not_null(");
        icd_buf_puts(b, e->name ? e->name : "?");
        icd_buf_putc(b, ')');
        return;
    default:
        icd_buf_printf(b, "%s %s ", e->name ? e->name : "?", op_text(e->op));
        ice_literal_to_json(b, &e->lit);
        return;
    }
}
