/*
 * Projection of bound row filters through a partition spec (see expr.h), and residuals.
 *
 * A predicate on a source column becomes predicates on the partition fields derived from
 * it. Inclusive projection keeps every partition that may hold a matching row (used to
 * prune manifests and files); strict projection keeps only partitions whose rows all
 * match (used for residuals). The rules are Iceberg Java's (Projections, ProjectionUtil):
 *
 *   identity            same predicate, both ways
 *   truncate int/long/decimal, year/month/day/hour (monotone, many-to-one):
 *     inclusive  x < v -> p <= T(v-1)   x <= v -> p <= T(v)   x == v -> p == T(v)
 *                x > v -> p >= T(v+1)   x >= v -> p >= T(v)   x != v -> (none)
 *     strict     x < v -> p < T(v)      x <= v -> p < T(v+1)  x != v -> p != T(v)
 *                x > v -> p > T(v)      x >= v -> p > T(v-1)  x == v -> (none)
 *   truncate string/binary: no +-1 (inclusive <,<= -> p <= T(v); strict <,<= -> p < T(v))
 *   bucket              inclusive x == v -> p == B(v); strict x != v -> p != B(v)
 *   void, unknown       (none)
 *   null tests          carry over for every transform but void
 *
 * Temporal transforms on timestamps (and month/year on dates) also allow for old writers
 * that rounded pre-1970 values toward zero, filing a value of period k-1 under k: when the
 * projected period is negative, inclusive bounds widen by one and strict ones tighten by
 * one (Java's fixInclusiveTimeProjection / fixStrictTimeProjection).
 */
#include <string.h>

#include "iceberg/content_file.h"
#include "iceberg/expr.h"
#include "iceberg/expr_internal.h"
#include "iceberg/partition.h"
#include "iceberg/schema.h"

typedef struct pctx {
    icd_arena *a;
    icd_error *err;
    bool strict;
} pctx;

/* A partition predicate `op` on field `pf` (position pos, result type rt) with value `v`. */
static int part_pred(const pctx *c, ice_expr_op op, const ice_partition_field *pf, int32_t pos,
                     const ice_type *rt, const ice_literal *v, const ice_bound_expr **out)
{
    ice_bound_expr *n = ice_bound_node(c->a, op);
    if (!n) return icd_fail_nomem(c->err);
    n->field_id = pf->field_id;
    n->pos = pos;
    n->name = pf->name;
    n->type = rt;
    if (v) n->lit = *v;
    *out = n;
    return 0;
}

/* v + delta (delta = +-1) in the literal's own unit; false on overflow. Decimals step
 * their unscaled value. */
static bool step(const ice_literal *in, int delta, icd_arena *a, ice_literal *out)
{
    *out = *in;
    switch (in->kind) {
    case ICE_T_INT:
    case ICE_T_DATE:
        return !__builtin_add_overflow(in->v.i32, delta, &out->v.i32);
    case ICE_T_LONG:
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        return !__builtin_add_overflow(in->v.i64, (int64_t)delta, &out->v.i64);
    case ICE_T_DECIMAL: {
        ice_i128 v;
        if (!ice_decimal_to_i128(in->v.bytes.ptr, in->v.bytes.len, &v)) return false;
        uint8_t *p = icd_arena_alloc(a, 16);
        if (!p) return false;
        out->v.bytes.len = ice_decimal_from_i128(v + delta, p);
        out->v.bytes.ptr = p;
        return true;
    }
    default:
        return false;
    }
}

static bool is_temporal(ice_transform_kind k)
{
    return k == ICE_TR_YEAR || k == ICE_TR_MONTH || k == ICE_TR_DAY || k == ICE_TR_HOUR;
}

/* T(v + delta); *ok false when no such value exists (overflow): then no projection. */
static int apply_step(const pctx *c, const ice_transform *t, const ice_literal *v, int delta,
                      ice_literal *out, bool *ok)
{
    ice_literal s;
    *ok = true;
    if (delta && !step(v, delta, c->a, &s)) {
        *ok = false;
        return 0;
    }
    return ice_transform_apply(t, delta ? &s : v, c->a, out, c->err);
}

/* The projected period as a number (temporal results are ints). */
static int64_t period(const ice_literal *l)
{
    return l->v.i32;
}

/* Ordered transforms (truncate, temporal). */
static int project_ordered(const pctx *c, const ice_bound_expr *p, const ice_partition_field *pf,
                           int32_t pos, const ice_type *rt, const ice_bound_expr **out)
{
    const ice_transform *t = &pf->transform;
    bool bytes = p->lit.kind == ICE_T_STRING || p->lit.kind == ICE_T_BINARY;
    ice_expr_op op;
    int delta = 0;
    if (!c->strict) {
        switch (p->op) {
        case ICE_EXPR_LT:
            op = ICE_EXPR_LE;
            delta = bytes ? 0 : -1;
            break;
        case ICE_EXPR_LE:
            op = ICE_EXPR_LE;
            break;
        case ICE_EXPR_GT:
            op = ICE_EXPR_GE;
            delta = bytes ? 0 : 1;
            break;
        case ICE_EXPR_GE:
            op = ICE_EXPR_GE;
            break;
        case ICE_EXPR_EQ:
            op = ICE_EXPR_EQ;
            break;
        default:
            return 0; /* != has no inclusive projection */
        }
    } else {
        switch (p->op) {
        case ICE_EXPR_LT:
            op = ICE_EXPR_LT;
            break;
        case ICE_EXPR_LE:
            op = ICE_EXPR_LT;
            delta = bytes ? 0 : 1;
            break;
        case ICE_EXPR_GT:
            op = ICE_EXPR_GT;
            break;
        case ICE_EXPR_GE:
            op = ICE_EXPR_GT;
            delta = bytes ? 0 : -1;
            break;
        case ICE_EXPR_NOT_EQ:
            op = ICE_EXPR_NOT_EQ;
            break;
        default:
            return 0; /* == cannot be guaranteed: neighbours share a partition */
        }
    }
    ice_literal v;
    bool ok;
    ICD_TRY(apply_step(c, t, &p->lit, delta, &v, &ok));
    if (!ok) return 0;
    bool fix = is_temporal(t->kind) && !(t->kind == ICE_TR_DAY && p->lit.kind == ICE_T_DATE);
    if (!fix || period(&v) >= 0) return part_pred(c, op, pf, pos, rt, &v, out);
    /* a negative period may also have been written as period + 1 */
    ice_literal v1 = v;
    if (v.v.i32 == INT32_MAX) return 0;
    v1.v.i32 = v.v.i32 + 1;
    if (!c->strict) {
        if (op == ICE_EXPR_GE) /* stored periods are never below the true one */
            return part_pred(c, op, pf, pos, rt, &v, out);
        if (op == ICE_EXPR_LE) return part_pred(c, op, pf, pos, rt, &v1, out);
        const ice_bound_expr *a = NULL, *b = NULL;
        ICD_TRY(part_pred(c, ICE_EXPR_EQ, pf, pos, rt, &v, &a));
        ICD_TRY(part_pred(c, ICE_EXPR_EQ, pf, pos, rt, &v1, &b));
        *out = ice_bound_combine(c->a, ICE_EXPR_OR, a, b);
        return *out ? 0 : icd_fail_nomem(c->err);
    }
    if (op == ICE_EXPR_LT)
        return part_pred(c, op, pf, pos, rt, &v, out); /* stored >= true period: safe */
    if (op == ICE_EXPR_GT) return part_pred(c, op, pf, pos, rt, &v1, out);
    const ice_bound_expr *a = NULL, *b = NULL;
    ICD_TRY(part_pred(c, ICE_EXPR_NOT_EQ, pf, pos, rt, &v, &a));
    ICD_TRY(part_pred(c, ICE_EXPR_NOT_EQ, pf, pos, rt, &v1, &b));
    *out = ice_bound_combine(c->a, ICE_EXPR_AND, a, b);
    return *out ? 0 : icd_fail_nomem(c->err);
}

/* Projects predicate `p` through one partition field; *out stays NULL when the field
 * gives no projection. */
static int project_one(const pctx *c, const ice_bound_expr *p, const ice_partition_field *pf,
                       int32_t pos, const ice_type *rt, const ice_bound_expr **out)
{
    *out = NULL;
    const ice_transform *t = &pf->transform;
    if (t->kind == ICE_TR_VOID || t->kind == ICE_TR_UNKNOWN) return 0;
    if (!ice_transform_accepts(t, p->type->kind)) return 0;
    if (p->op == ICE_EXPR_IS_NULL || p->op == ICE_EXPR_NOT_NULL)
        return part_pred(c, p->op, pf, pos, rt, NULL, out);
    switch (t->kind) {
    case ICE_TR_IDENTITY:
        return part_pred(c, p->op, pf, pos, rt, &p->lit, out);
    case ICE_TR_BUCKET: {
        if (p->op != (c->strict ? ICE_EXPR_NOT_EQ : ICE_EXPR_EQ)) return 0;
        ice_literal v;
        ICD_TRY(ice_transform_apply(t, &p->lit, c->a, &v, c->err));
        return part_pred(c, p->op, pf, pos, rt, &v, out);
    }
    default:
        return project_ordered(c, p, pf, pos, rt, out);
    }
}

/* The result type of a partition field in the arena (NULL when unknown). */
static int result_type(const pctx *c, const ice_partition_field *pf, const ice_type *src,
                       const ice_type **out)
{
    ice_type *rt = icd_arena_calloc(c->a, sizeof *rt);
    if (!rt) return icd_fail_nomem(c->err);
    ICD_TRY(ice_transform_result_type(&pf->transform, src, rt, c->err));
    *out = rt;
    return 0;
}

/* All projections of one predicate: AND of inclusive ones (default TRUE), OR of strict
 * ones (default FALSE). */
static int project_pred(const pctx *c, const ice_bound_expr *p, const ice_partition_spec *spec,
                        const ice_bound_expr **out)
{
    const ice_bound_expr *acc = c->strict ? ice_bound_false() : ice_bound_true();
    for (size_t i = 0; spec && i < spec->nfields; i++) {
        const ice_partition_field *pf = &spec->fields[i];
        if (pf->n_source_ids > 1 || pf->source_id != p->field_id) continue;
        const ice_type *rt = NULL;
        ICD_TRY(result_type(c, pf, p->type, &rt));
        const ice_bound_expr *one = NULL;
        ICD_TRY(project_one(c, p, pf, (int32_t)i, rt, &one));
        if (!one) continue;
        acc = ice_bound_combine(c->a, c->strict ? ICE_EXPR_OR : ICE_EXPR_AND, acc, one);
        if (!acc) return icd_fail_nomem(c->err);
    }
    *out = acc;
    return 0;
}

static int project_rec(const pctx *c, const ice_bound_expr *e, const ice_partition_spec *spec,
                       const ice_bound_expr **out)
{
    switch (e->op) {
    case ICE_EXPR_TRUE:
        *out = ice_bound_true();
        return 0;
    case ICE_EXPR_FALSE:
        *out = ice_bound_false();
        return 0;
    case ICE_EXPR_AND:
    case ICE_EXPR_OR: {
        const ice_bound_expr *l = NULL, *r = NULL;
        ICD_TRY(project_rec(c, e->left, spec, &l));
        ICD_TRY(project_rec(c, e->right, spec, &r));
        *out = ice_bound_combine(c->a, e->op, l, r);
        return *out ? 0 : icd_fail_nomem(c->err);
    }
    case ICE_EXPR_NOT:
        return icd_fail(c->err, ICD_EINTERNAL, NULL, -1, "projection met a NOT (bind first)");
    default:
        return project_pred(c, e, spec, out);
    }
}

int ice_expr_project(const ice_bound_expr *e, const ice_partition_spec *spec, const ice_schema *s,
                     bool strict, icd_arena *a, const ice_bound_expr **out, icd_error *err)
{
    (void)s; /* bound predicates carry their column types */
    pctx c = {a, err, strict};
    return project_rec(&c, e, spec, out);
}

/* ---- residuals ----------------------------------------------------------------------- */

typedef struct rctx {
    pctx in, st;
    const ice_partition_spec *spec;
    const ice_content_file *f;
} rctx;

static int residual_rec(const rctx *c, const ice_bound_expr *e, const ice_bound_expr **out)
{
    switch (e->op) {
    case ICE_EXPR_TRUE:
    case ICE_EXPR_FALSE:
        *out = e;
        return 0;
    case ICE_EXPR_AND:
    case ICE_EXPR_OR: {
        const ice_bound_expr *l = NULL, *r = NULL;
        ICD_TRY(residual_rec(c, e->left, &l));
        ICD_TRY(residual_rec(c, e->right, &r));
        *out = ice_bound_combine(c->in.a, e->op, l, r);
        return *out ? 0 : icd_fail_nomem(c->in.err);
    }
    default:
        break;
    }
    const ice_bound_expr *p = NULL;
    ICD_TRY(project_pred(&c->st, e, c->spec, &p));
    if (ice_partition_eval(p, c->f, true)) {
        *out = ice_bound_true();
        return 0;
    }
    ICD_TRY(project_pred(&c->in, e, c->spec, &p));
    if (!ice_partition_eval(p, c->f, false)) {
        *out = ice_bound_false();
        return 0;
    }
    *out = e;
    return 0;
}

int ice_expr_residual(const ice_bound_expr *e, const ice_partition_spec *spec, const ice_schema *s,
                      const ice_content_file *f, icd_arena *a, const ice_bound_expr **out,
                      icd_error *err)
{
    (void)s;
    if (!spec || spec->nfields == 0) {
        *out = e;
        return 0;
    }
    rctx c = {{a, err, false}, {a, err, true}, spec, f};
    return residual_rec(&c, e, out);
}
