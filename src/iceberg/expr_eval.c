/*
 * Evaluating bound filters against what scan planning knows before reading data (see
 * expr.h): partition predicates against a manifest's partition field summaries
 * (ManifestEvaluator) and against a file's exact partition tuple, and column predicates
 * against a file's column metrics (InclusiveMetricsEvaluator). Every answer is
 * conservative: when a statistic is missing, unreadable in a way the spec allows, or
 * the values cannot be ordered, the file or manifest "may match".
 *
 * Bounds use the single-value binary serialization (spec Appendix D). Columns whose type
 * was promoted keep their old files' narrower bounds (4-byte ints for a long, floats for a
 * double, day counts for a timestamp), so decoding goes by the bound's length too.
 */
#include <math.h>
#include <string.h>

#include "iceberg/content_file.h"
#include "iceberg/expr.h"
#include "iceberg/manifest.h"

/* ---- bound decoding ------------------------------------------------------------------ */

static int32_t le32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24);
}

static int64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return (int64_t)v;
}

bool ice_bound_decode(const ice_type *t, const uint8_t *p, uint32_t n, ice_literal *out)
{
    const int64_t DAY_US = 86400000000LL;
    switch (t->kind) {
    case ICE_T_BOOLEAN:
        if (n != 1) return false;
        *out = ice_lit_bool(p[0] != 0);
        return true;
    case ICE_T_INT:
    case ICE_T_DATE:
        if (n != 4) return false;
        *out = ice_lit_i32(t->kind, le32(p));
        return true;
    case ICE_T_LONG:
    case ICE_T_TIME:
        if (n == 4 && t->kind == ICE_T_LONG) { /* promoted from int */
            *out = ice_lit_long(le32(p));
            return true;
        }
        if (n != 8) return false;
        *out = ice_lit_i64(t->kind, le64(p));
        return true;
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS: {
        if (n == 4) { /* promoted from date: the day's first instant */
            int64_t per = (t->kind == ICE_T_TIMESTAMP_NS || t->kind == ICE_T_TIMESTAMPTZ_NS)
                              ? DAY_US * 1000
                              : DAY_US;
            *out = ice_lit_i64(t->kind, (int64_t)le32(p) * per);
            return true;
        }
        if (n != 8) return false;
        *out = ice_lit_i64(t->kind, le64(p));
        return true;
    }
    case ICE_T_FLOAT:
    case ICE_T_DOUBLE: {
        if (n == 4) {
            uint32_t bits = (uint32_t)le32(p);
            float f;
            memcpy(&f, &bits, 4);
            *out = t->kind == ICE_T_FLOAT ? ice_lit_float(f) : ice_lit_double((double)f);
            return true;
        }
        if (n != 8 || t->kind != ICE_T_DOUBLE) return false;
        uint64_t bits = (uint64_t)le64(p);
        double d;
        memcpy(&d, &bits, 8);
        *out = ice_lit_double(d);
        return true;
    }
    case ICE_T_DECIMAL:
        if (n < 1 || n > 16) return false;
        *out = ice_lit_decimal(p, n, t->scale);
        return true;
    case ICE_T_UUID:
        if (n != 16) return false;
        *out = ice_lit_bytes(ICE_T_UUID, p, n);
        return true;
    case ICE_T_FIXED:
    case ICE_T_STRING:
    case ICE_T_BINARY:
        *out = ice_lit_bytes(t->kind, p, n);
        return true;
    default:
        return false;
    }
}

static bool lit_is_nan(const ice_literal *l)
{
    return (l->kind == ICE_T_FLOAT && isnan(l->v.f32)) ||
           (l->kind == ICE_T_DOUBLE && isnan(l->v.f64));
}

/* cmp(a, b) when the two can be ordered. */
static bool try_cmp(const ice_literal *a, const ice_literal *b, int *out)
{
    if (!ice_literal_comparable(a, b)) return false;
    *out = ice_literal_cmp(a, b);
    return true;
}

/* Can a set of values within [lo, hi] (either NULL = unknown) hold a value v with
 * `value op lit`? Shared by manifests and metrics. */
static bool range_may_match(ice_expr_op op, const ice_literal *lo, const ice_literal *hi,
                            const ice_literal *lit)
{
    int c;
    /* a NaN lower bound is unreliable (old ORC writers); a NaN upper bound orders above
     * everything, so it never excludes */
    if (lo && lit_is_nan(lo)) lo = NULL;
    switch (op) {
    case ICE_EXPR_LT:
        return !(lo && try_cmp(lo, lit, &c) && c >= 0);
    case ICE_EXPR_LE:
        return !(lo && try_cmp(lo, lit, &c) && c > 0);
    case ICE_EXPR_GT:
        return !(hi && try_cmp(hi, lit, &c) && c <= 0);
    case ICE_EXPR_GE:
        return !(hi && try_cmp(hi, lit, &c) && c < 0);
    case ICE_EXPR_EQ:
        if (lo && try_cmp(lo, lit, &c) && c > 0) return false;
        return !(hi && try_cmp(hi, lit, &c) && c < 0);
    default:
        return true; /* != cannot be decided by bounds */
    }
}

/* ---- partition tuples ---------------------------------------------------------------- */

static bool tuple_pred(const ice_bound_expr *p, const ice_content_file *f, bool strict)
{
    if (p->pos < 0 || p->pos >= f->npartition || !f->partition) return !strict;
    const ice_literal *v = &f->partition[p->pos];
    if (p->op == ICE_EXPR_IS_NULL) return v->is_null;
    if (p->op == ICE_EXPR_NOT_NULL) return !v->is_null;
    /* Java orders null first, so a null partition "satisfies" < and <=; keep that for the
     * inclusive answer, but never let a null prove a comparison strictly */
    if (v->is_null && strict) return false;
    int c;
    if (!try_cmp(v, &p->lit, &c)) return !strict;
    switch (p->op) {
    case ICE_EXPR_EQ:
        return c == 0;
    case ICE_EXPR_NOT_EQ:
        return c != 0;
    case ICE_EXPR_LT:
        return c < 0;
    case ICE_EXPR_LE:
        return c <= 0;
    case ICE_EXPR_GT:
        return c > 0;
    case ICE_EXPR_GE:
        return c >= 0;
    default:
        return !strict;
    }
}

bool ice_partition_eval(const ice_bound_expr *proj, const ice_content_file *f, bool strict)
{
    switch (proj->op) {
    case ICE_EXPR_TRUE:
        return true;
    case ICE_EXPR_FALSE:
        return false;
    case ICE_EXPR_AND:
        return ice_partition_eval(proj->left, f, strict) &&
               ice_partition_eval(proj->right, f, strict);
    case ICE_EXPR_OR:
        return ice_partition_eval(proj->left, f, strict) ||
               ice_partition_eval(proj->right, f, strict);
    default:
        return tuple_pred(proj, f, strict);
    }
}

/* ---- manifest summaries -------------------------------------------------------------- */

static int bad_bound(icd_error *err, const char *file, const char *what, const char *name,
                     const ice_type *t)
{
    return icd_fail(err, ICD_ECORRUPT, file, -1,
                    "%s bound of '%s' has a length that does not fit "
                    "type %s",
                    what, name ? name : "?", ice_type_kind_name(t->kind));
}

static int manifest_pred(const ice_bound_expr *p, const ice_manifest_file *mf, bool *out,
                         icd_error *err)
{
    *out = true;
    if (!mf->has_partitions || p->pos < 0 || p->pos >= mf->npartitions || !p->type) return 0;
    const ice_field_summary *s = &mf->partitions[p->pos];
    if (p->op == ICE_EXPR_IS_NULL) {
        *out = s->contains_null != 0; /* -1 unknown: may match */
        return 0;
    }
    if (p->op == ICE_EXPR_NOT_NULL || p->op == ICE_EXPR_NOT_EQ) return 0;
    if (p->type->kind == ICE_T_UNKNOWN) return 0;
    ice_literal lo, hi;
    bool has_lo = false, has_hi = false;
    if (s->has_lower) {
        if (!ice_bound_decode(p->type, s->lower, s->lower_len, &lo))
            return bad_bound(err, mf->path, "lower partition", p->name, p->type);
        has_lo = true;
    }
    if (s->has_upper) {
        if (!ice_bound_decode(p->type, s->upper, s->upper_len, &hi))
            return bad_bound(err, mf->path, "upper partition", p->name, p->type);
        has_hi = true;
    }
    *out = range_may_match(p->op, has_lo ? &lo : NULL, has_hi ? &hi : NULL, &p->lit);
    return 0;
}

int ice_manifest_may_match(const ice_bound_expr *proj, const ice_manifest_file *mf, bool *out,
                           icd_error *err)
{
    switch (proj->op) {
    case ICE_EXPR_TRUE:
        *out = true;
        return 0;
    case ICE_EXPR_FALSE:
        *out = false;
        return 0;
    case ICE_EXPR_AND:
    case ICE_EXPR_OR: {
        bool l;
        ICD_TRY(ice_manifest_may_match(proj->left, mf, &l, err));
        if (l == (proj->op == ICE_EXPR_OR)) { /* decided */
            *out = l;
            return 0;
        }
        return ice_manifest_may_match(proj->right, mf, out, err);
    }
    default:
        return manifest_pred(proj, mf, out, err);
    }
}

/* ---- column metrics ------------------------------------------------------------------ */

static int metrics_pred(const ice_bound_expr *p, const ice_content_file *f, bool *out,
                        icd_error *err)
{
    *out = true;
    const ice_col_stats *s = ice_content_file_stats(f, p->field_id);
    if (!s) return 0;
    bool nulls_only = s->value_count >= 0 && s->null_count >= 0 && s->value_count == s->null_count;
    bool nans_only = s->value_count >= 0 && s->nan_count >= 0 && s->value_count == s->nan_count;
    switch (p->op) {
    case ICE_EXPR_IS_NULL:
        *out = s->null_count != 0;
        return 0; /* -1 = unknown */
    case ICE_EXPR_NOT_NULL:
        *out = !nulls_only;
        return 0;
    case ICE_EXPR_NOT_EQ:
        return 0;
    default:
        break;
    }
    if (nulls_only || nans_only) {
        *out = false;
        return 0;
    }
    ice_literal lo, hi;
    bool has_lo = false, has_hi = false;
    if (s->has_lower) {
        if (!ice_bound_decode(p->type, s->lower, s->lower_len, &lo))
            return bad_bound(err, f->manifest_path, "lower", p->name, p->type);
        has_lo = true;
    }
    if (s->has_upper) {
        if (!ice_bound_decode(p->type, s->upper, s->upper_len, &hi))
            return bad_bound(err, f->manifest_path, "upper", p->name, p->type);
        has_hi = true;
    }
    *out = range_may_match(p->op, has_lo ? &lo : NULL, has_hi ? &hi : NULL, &p->lit);
    return 0;
}

static int metrics_rec(const ice_bound_expr *e, const ice_content_file *f, bool *out,
                       icd_error *err)
{
    switch (e->op) {
    case ICE_EXPR_TRUE:
        *out = true;
        return 0;
    case ICE_EXPR_FALSE:
        *out = false;
        return 0;
    case ICE_EXPR_AND:
    case ICE_EXPR_OR: {
        bool l;
        ICD_TRY(metrics_rec(e->left, f, &l, err));
        if (l == (e->op == ICE_EXPR_OR)) {
            *out = l;
            return 0;
        }
        return metrics_rec(e->right, f, out, err);
    }
    default:
        return metrics_pred(e, f, out, err);
    }
}

int ice_metrics_may_match(const ice_bound_expr *e, const ice_content_file *f, bool *out,
                          icd_error *err)
{
    if (f->record_count == 0) { /* an empty file matches nothing */
        *out = false;
        return 0;
    }
    if (f->record_count < 0) { /* unknown (imported files) */
        *out = true;
        return 0;
    }
    return metrics_rec(e, f, out, err);
}

/* ---- row groups and stripes ---------------------------------------------------------- */

static bool range_pred(const ice_bound_expr *p, ice_range_fn fn, void *ctx)
{
    if (p->op == ICE_EXPR_NOT_EQ || !p->type) return true;
    ice_range_stats st;
    memset(&st, 0, sizeof st);
    if (!fn(ctx, p, &st)) return true;
    if (p->op == ICE_EXPR_IS_NULL) return !st.no_null;
    if (p->op == ICE_EXPR_NOT_NULL) return !st.all_null;
    if (p->lit.is_null || lit_is_nan(&p->lit)) return true;
    if (st.all_null) return false; /* only nulls: no comparison holds */
    return range_may_match(p->op, st.has_lo ? &st.lo : NULL, st.has_hi ? &st.hi : NULL, &p->lit);
}

bool ice_range_may_match(const ice_bound_expr *e, ice_range_fn fn, void *ctx)
{
    switch (e->op) {
    case ICE_EXPR_TRUE:
        return true;
    case ICE_EXPR_FALSE:
        return false;
    case ICE_EXPR_AND:
        return ice_range_may_match(e->left, fn, ctx) && ice_range_may_match(e->right, fn, ctx);
    case ICE_EXPR_OR:
        return ice_range_may_match(e->left, fn, ctx) || ice_range_may_match(e->right, fn, ctx);
    case ICE_EXPR_NOT:
        return true;
    default:
        return range_pred(e, fn, ctx);
    }
}
