/*
 * dr_pred -> ice_expr (see to_iceberg.h). Druid builds its filters with Iceberg's
 * Expressions factory; this mirrors that: n-ary and/or become left-deep binary chains,
 * literals keep the Java type Jackson would have given them (the binder then converts
 * them to each column's type with Iceberg's rules).
 */
#include <string.h>

#include "druid/plan/to_iceberg.h"

static ice_expr *node(icd_arena *a)
{
    return icd_arena_calloc(a, sizeof(ice_expr));
}

static int literal(const dr_pred *p, icd_arena *a, ice_expr_value *v, icd_error *err)
{
    memset(v, 0, sizeof *v);
    if (p->is_ts) {
        v->kind = ICE_VALUE_TIMESTAMP_MICROS;
        v->i64 = p->ts_micros;
        return 0;
    }
    const json_t *j = p->literal;
    if (json_is_string(j)) {
        v->kind = ICE_VALUE_STRING;
        v->str = icd_arena_strndup(a, json_string_value(j), json_string_length(j));
        return v->str ? 0 : icd_fail_nomem(err);
    }
    if (json_is_integer(j)) {
        v->kind = ICE_VALUE_LONG;
        v->i64 = (int64_t)json_integer_value(j);
        return 0;
    }
    if (json_is_real(j)) {
        v->kind = ICE_VALUE_DOUBLE;
        v->f64 = json_real_value(j);
        return 0;
    }
    if (json_is_boolean(j)) {
        v->kind = ICE_VALUE_BOOL;
        v->b = json_is_true(j);
        return 0;
    }
    return icd_fail(err, ICD_EINVALID, NULL, -1,
                    "icebergFilter: the value for column '%s' must be a string, number or "
                    "boolean",
                    p->column ? p->column : "");
}

static int convert(const dr_pred *p, icd_arena *a, int depth, const ice_expr **out, icd_error *err)
{
    if (!p) return icd_fail(err, ICD_EINVALID, NULL, -1, "icebergFilter: missing predicate");
    if (depth > 10000)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "icebergFilter: nested too deeply");
    ice_expr *e;
    switch (p->op) {
    case DR_P_TRUE:
    case DR_P_FALSE:
        if (!(e = node(a))) return icd_fail_nomem(err);
        e->op = p->op == DR_P_TRUE ? ICE_EXPR_TRUE : ICE_EXPR_FALSE;
        break;
    case DR_P_NOT:
        if (p->n_args != 1)
            return icd_fail(err, ICD_EINVALID, NULL, -1, "icebergFilter: not takes one filter");
        if (!(e = node(a))) return icd_fail_nomem(err);
        e->op = ICE_EXPR_NOT;
        ICD_TRY(convert(p->args[0], a, depth + 1, &e->left, err));
        break;
    case DR_P_AND:
    case DR_P_OR: {
        if (p->n_args == 0)
            return icd_fail(err, ICD_EINVALID, NULL, -1, "icebergFilter: empty and/or");
        const ice_expr *acc;
        ICD_TRY(convert(p->args[0], a, depth + 1, &acc, err));
        for (size_t i = 1; i < p->n_args; i++) {
            ice_expr *j = node(a);
            if (!j) return icd_fail_nomem(err);
            j->op = p->op == DR_P_AND ? ICE_EXPR_AND : ICE_EXPR_OR;
            j->left = acc;
            ICD_TRY(convert(p->args[i], a, depth + 1, &j->right, err));
            acc = j;
        }
        *out = acc;
        return 0;
    }
    default: {
        static const ice_expr_op ops[] = {[DR_P_EQ] = ICE_EXPR_EQ,
                                          [DR_P_LT] = ICE_EXPR_LT,
                                          [DR_P_LE] = ICE_EXPR_LE,
                                          [DR_P_GT] = ICE_EXPR_GT,
                                          [DR_P_GE] = ICE_EXPR_GE};
        if (p->op < DR_P_EQ || p->op > DR_P_GE || !p->column)
            return icd_fail(err, ICD_EINVALID, NULL, -1, "icebergFilter: unknown predicate");
        if (!(e = node(a))) return icd_fail_nomem(err);
        e->op = ops[p->op];
        e->column = icd_arena_strdup(a, p->column);
        if (!e->column) return icd_fail_nomem(err);
        ICD_TRY(literal(p, a, &e->value, err));
        break;
    }
    }
    *out = e;
    return 0;
}

int dr_pred_to_ice_expr(const dr_pred *p, icd_arena *a, const ice_expr **out, icd_error *err)
{
    *out = NULL;
    return convert(p, a, 0, out, err);
}

int dr_filter_json_to_ice_expr(const json_t *v, const char *path, int64_t now_ms, icd_arena *a,
                               const ice_expr **out, icd_error *err)
{
    dr_filter *f = NULL;
    dr_pred *p = NULL;
    *out = NULL;
    int rc = dr_filter_parse(&f, v, path, now_ms, err);
    if (!rc) rc = dr_filter_to_pred(f, &p, err);
    if (!rc) rc = dr_pred_to_ice_expr(p, a, out, err);
    dr_pred_free(p);
    dr_filter_free(f);
    return rc;
}
