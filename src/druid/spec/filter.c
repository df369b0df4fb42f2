/*
 * icebergFilter parsing and conversion (see filter.h). Parsing reproduces the
 * constructors of Druid's Iceberg*Filter classes (their required fields, defaults and
 * Preconditions messages); conversion reproduces getFilterExpression(), including the
 * constant folding of Iceberg's Expressions.and/or/not, so the planner prunes exactly the
 * files Druid's TableScan.filter() would prune.
 */
#include "base/array.h"
#include "druid/spec/filter.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonw.h"
#include "druid/spec/jsonget.h"
#include "druid/rows/timestamp.h"

/* Deeper filter trees than this are refused (recursion bound for hostile input). */
#define MAX_DEPTH 64

static const char *type_names[] = {"equals", "interval", "range", "and", "or", "not", "timeWindow"};

const char *dr_filter_type_name(dr_filter_type t)
{
    return type_names[t];
}

void dr_filter_free(dr_filter *f)
{
    if (!f) return;
    free(f->column);
    free(f->value);
    free(f->intervals);
    json_decref(f->lower);
    json_decref(f->upper);
    for (size_t i = 0; i < f->n_children; i++)
        dr_filter_free(f->children[i]);
    free(f->children);
    free(f);
}

bool dr_filter_equal(const dr_filter *a, const dr_filter *b)
{
    if (a == b) return true;
    if (!a || !b || a->type != b->type) return false;
    if ((a->column || b->column) && (!a->column || !b->column || strcmp(a->column, b->column)))
        return false;
    if ((a->value || b->value) && (!a->value || !b->value || strcmp(a->value, b->value)))
        return false;
    if (a->n_intervals != b->n_intervals ||
        (a->n_intervals &&
         memcmp(a->intervals, b->intervals, a->n_intervals * sizeof *a->intervals)))
        return false;
    if (!json_equal(a->lower, b->lower) && (a->lower || b->lower)) return false;
    if (!json_equal(a->upper, b->upper) && (a->upper || b->upper)) return false;
    if (a->lower_open != b->lower_open || a->upper_open != b->upper_open) return false;
    if (a->lookback_ms != b->lookback_ms || a->lookahead_ms != b->lookahead_ms ||
        a->base_ms != b->base_ms)
        return false;
    if (a->n_children != b->n_children) return false;
    for (size_t i = 0; i < a->n_children; i++)
        if (!dr_filter_equal(a->children[i], b->children[i])) return false;
    return true;
}

typedef struct fctx {
    int64_t now_ms;
    icd_error *err;
} fctx;

static int parse_node(dr_filter **out, const json_t *v, const char *path, const fctx *c, int depth);

/* The required filterColumn with the type's own message. */
static int need_column(dr_filter *f, const json_t *v, const char *path, const char *type,
                       icd_error *err)
{
    ICD_TRY(dr_get_str(v, "filterColumn", path, &f->column, err));
    if (!f->column) {
        char p[ICD_JSON_PATH_MAX];
        icd_json_path_key(p, path, "filterColumn");
        return dr_fail_path(err, p, "You must specify a filter column on the %s filter", type);
    }
    return 0;
}

static int parse_equals(dr_filter *f, const json_t *v, const char *path, icd_error *err)
{
    ICD_TRY(need_column(f, v, path, "equals", err));
    ICD_TRY(dr_get_str(v, "filterValue", path, &f->value, err));
    if (!f->value) {
        char p[ICD_JSON_PATH_MAX];
        icd_json_path_key(p, path, "filterValue");
        return dr_fail_path(err, p, "You must specify a filter value on the equals filter");
    }
    return 0;
}

static int parse_interval(dr_filter *f, const json_t *v, const char *path, icd_error *err)
{
    char p[ICD_JSON_PATH_MAX], q[ICD_JSON_PATH_MAX];
    ICD_TRY(need_column(f, v, path, "interval", err));
    const json_t *arr;
    ICD_TRY(dr_get_array(v, "intervals", path, &arr, err));
    icd_json_path_key(p, path, "intervals");
    if (!arr || json_array_size(arr) == 0)
        return dr_fail_path(err, p, "You must specify intervals on the interval filter");
    size_t n = json_array_size(arr);
    f->intervals = calloc(n, sizeof *f->intervals);
    if (!f->intervals) return icd_fail_nomem(err);
    f->n_intervals = n;
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(arr, i);
        icd_json_path_index(q, p, i);
        if (!json_is_string(s))
            return dr_fail_path(err, q, "an interval must be an ISO-8601 string \"start/end\"");
        if (dr_parse_interval(json_string_value(s), json_string_length(s), &f->intervals[i], err) <
            0)
            return icd_error_wrap(err, "%s", q);
    }
    return 0;
}

static int range_bound(const json_t *v, const char *key, const char *path, json_t **out,
                       icd_error *err)
{
    const json_t *b = icd_json_field(v, key);
    *out = NULL;
    if (!b) return 0;
    if (json_is_object(b) || json_is_array(b)) {
        char p[ICD_JSON_PATH_MAX];
        icd_json_path_key(p, path, key);
        return dr_fail_path(err, p, "a range bound must be a string, number or boolean");
    }
    *out = json_incref((json_t *)b);
    return 0;
}

static int parse_range(dr_filter *f, const json_t *v, const char *path, icd_error *err)
{
    ICD_TRY(need_column(f, v, path, "range", err));
    ICD_TRY(range_bound(v, "lower", path, &f->lower, err));
    ICD_TRY(range_bound(v, "upper", path, &f->upper, err));
    if (!f->lower && !f->upper)
        return dr_fail_path(err, path, "Both lower and upper bounds cannot be empty");
    ICD_TRY(dr_get_bool(v, "lowerOpen", path, false, &f->lower_open, err));
    return dr_get_bool(v, "upperOpen", path, false, &f->upper_open, err);
}

/* Appends `child` unless an equal one is there already (LinkedHashSet semantics). */
static int add_child(dr_filter *f, dr_filter *child, size_t *cap, icd_error *err)
{
    for (size_t i = 0; i < f->n_children; i++)
        if (dr_filter_equal(f->children[i], child)) {
            dr_filter_free(child);
            return 0;
        }
    if (ICD_ARRAY_RESERVE(f->children, *cap, f->n_children + 1, 4)) {
        dr_filter_free(child);
        return icd_fail_nomem(err);
    }
    f->children[f->n_children++] = child;
    return 0;
}

/* and/or: the children, with children of the same type flattened into this node. */
static int parse_junction(dr_filter *f, const json_t *v, const char *path, const fctx *c, int depth)
{
    char p[ICD_JSON_PATH_MAX], q[ICD_JSON_PATH_MAX];
    const json_t *arr;
    ICD_TRY(dr_get_array(v, "filters", path, &arr, c->err));
    icd_json_path_key(p, path, "filters");
    if (!arr || json_array_size(arr) == 0)
        return dr_fail_path(c->err, p, "filter requires atleast one field");
    size_t cap = 0;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        icd_json_path_index(q, p, i);
        dr_filter *child = NULL;
        ICD_TRY(parse_node(&child, json_array_get(arr, i), q, c, depth + 1));
        if (child->type != f->type) {
            ICD_TRY(add_child(f, child, &cap, c->err));
            continue;
        }
        /* the child was flattened when parsed: move its children up */
        for (size_t k = 0; k < child->n_children; k++) {
            dr_filter *g = child->children[k];
            child->children[k] = NULL;
            int rc = add_child(f, g, &cap, c->err);
            if (rc < 0) {
                dr_filter_free(child);
                return rc;
            }
        }
        dr_filter_free(child);
    }
    return 0;
}

static int parse_not(dr_filter *f, const json_t *v, const char *path, const fctx *c, int depth)
{
    char p[ICD_JSON_PATH_MAX];
    icd_json_path_key(p, path, "filter");
    const json_t *inner = icd_json_field(v, "filter");
    if (!inner) return dr_fail_path(c->err, p, "filter cannot be null");
    f->children = calloc(1, sizeof *f->children);
    if (!f->children) return icd_fail_nomem(c->err);
    f->n_children = 1;
    return parse_node(&f->children[0], inner, p, c, depth + 1);
}

/* A Joda Duration as Jackson reads it: an integer of millis, or a string. Strings accept
 * Joda's own "PT<seconds>S" form and, beyond Druid, any ISO period without years or
 * months ("P1D", "PT6H"), which Druid's documentation uses. */
static int parse_duration(const json_t *v, const char *key, const char *path, int64_t def,
                          int64_t *out, icd_error *err)
{
    char p[ICD_JSON_PATH_MAX];
    const json_t *d = icd_json_field(v, key);
    *out = def;
    if (!d) return 0;
    icd_json_path_key(p, path, key);
    if (json_is_integer(d)) {
        *out = json_integer_value(d);
        return 0;
    }
    if (!json_is_string(d))
        return dr_fail_path(err, p, "a duration must be milliseconds or an ISO-8601 duration");
    dr_period per;
    const char *s = json_string_value(d);
    if (dr_parse_period(s, json_string_length(d), &per, err) < 0 ||
        dr_period_to_ms(&per, out, err) < 0)
        return icd_error_wrap(err, "%s", p);
    return 0;
}

static int parse_time_window(dr_filter *f, const json_t *v, const char *path, const fctx *c)
{
    char p[ICD_JSON_PATH_MAX];
    ICD_TRY(need_column(f, v, path, "timeWindow", c->err));
    ICD_TRY(parse_duration(v, "lookbackDuration", path, 86400000, &f->lookback_ms, c->err));
    ICD_TRY(parse_duration(v, "lookaheadDuration", path, 0, &f->lookahead_ms, c->err));
    const json_t *b = icd_json_field(v, "baseTime");
    f->base_ms = c->now_ms;
    if (!b) return 0;
    icd_json_path_key(p, path, "baseTime");
    if (json_is_integer(b)) {
        f->base_ms = json_integer_value(b);
    } else if (json_is_string(b)) {
        const char *s = json_string_value(b);
        size_t n = json_string_length(b);
        while (n && (unsigned char)s[0] <= ' ')
            s++, n--;
        while (n && (unsigned char)s[n - 1] <= ' ')
            n--;
        if (n == 0) return 0; /* Jackson reads an empty date-time as null */
        if (dr_parse_iso_datetime(s, n, 0, &f->base_ms, c->err) < 0)
            return icd_error_wrap(c->err, "%s", p);
    } else {
        return dr_fail_path(c->err, p, "baseTime must be an ISO-8601 date-time");
    }
    f->base_given = true;
    return 0;
}

static int parse_node(dr_filter **out, const json_t *v, const char *path, const fctx *c, int depth)
{
    *out = NULL;
    if (depth > MAX_DEPTH)
        return dr_fail_path(c->err, path, "icebergFilter is nested more than %d levels deep",
                            MAX_DEPTH);
    if (!json_is_object(v))
        return dr_fail_path(c->err, path, "an iceberg filter must be an object with a \"type\"");
    const json_t *type = json_object_get(v, "type");
    if (!json_is_string(type))
        return dr_fail_path(c->err, path,
                            "missing type id when trying to resolve subtype of IcebergFilter: "
                            "missing type id property 'type'");
    const char *t = json_string_value(type);
    int ft = -1;
    for (int i = 0; i < (int)(sizeof type_names / sizeof type_names[0]); i++)
        if (strcmp(t, type_names[i]) == 0) ft = i;
    if (ft < 0)
        return dr_fail_path(
            c->err, path,
            "Could not resolve type id '%.100s' as a subtype of IcebergFilter: known "
            "type ids = [and, equals, interval, not, or, range, timeWindow]",
            t);
    dr_filter *f = calloc(1, sizeof *f);
    if (!f) return icd_fail_nomem(c->err);
    f->type = (dr_filter_type)ft;
    int rc;
    switch (f->type) {
    case DR_F_EQUALS:
        rc = parse_equals(f, v, path, c->err);
        break;
    case DR_F_INTERVAL:
        rc = parse_interval(f, v, path, c->err);
        break;
    case DR_F_RANGE:
        rc = parse_range(f, v, path, c->err);
        break;
    case DR_F_AND:
    case DR_F_OR:
        rc = parse_junction(f, v, path, c, depth);
        break;
    case DR_F_NOT:
        rc = parse_not(f, v, path, c, depth);
        break;
    case DR_F_TIME_WINDOW:
        rc = parse_time_window(f, v, path, c);
        break;
    default:
        rc = icd_fail(c->err, ICD_EINTERNAL, NULL, -1, "unknown filter type");
        break;
    }
    if (rc < 0) {
        dr_filter_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int dr_filter_parse(dr_filter **out, const json_t *v, const char *path, int64_t now_ms,
                    icd_error *err)
{
    fctx c = {now_ms, err};
    return parse_node(out, v, path ? path : "", &c, 0);
}

/* ---- predicates --------------------------------------------------------------------------- */

static const char *op_names[] = {"true", "false", "eq", "lt", "le", "gt", "ge", "and", "or", "not"};

const char *dr_pred_op_name(dr_pred_op op)
{
    return op_names[op];
}

void dr_pred_free(dr_pred *p)
{
    if (!p) return;
    free(p->column);
    json_decref(p->literal);
    for (size_t i = 0; i < p->n_args; i++)
        dr_pred_free(p->args[i]);
    free(p->args);
    free(p);
}

static dr_pred *pred_const(bool v)
{
    dr_pred *p = calloc(1, sizeof *p);
    if (p) p->op = v ? DR_P_TRUE : DR_P_FALSE;
    return p;
}

static dr_pred *pred_cmp(dr_pred_op op, const char *col, const json_t *lit)
{
    dr_pred *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->op = op;
    p->column = strdup(col);
    p->literal = json_deep_copy(lit);
    if (!p->column || !p->literal) {
        dr_pred_free(p);
        return NULL;
    }
    return p;
}

static dr_pred *pred_ts(dr_pred_op op, const char *col, int64_t micros)
{
    dr_pred *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->op = op;
    p->is_ts = true;
    p->ts_micros = micros;
    p->column = strdup(col);
    if (!p->column) {
        dr_pred_free(p);
        return NULL;
    }
    return p;
}

/* and/or of two predicates with Iceberg's folding; takes ownership of both (either may be
 * NULL after an allocation failure, which yields NULL). n-ary nodes keep a left-deep
 * chain flat: and(and(a, b), c) is and(a, b, c). */
static dr_pred *combine(dr_pred_op op, dr_pred *l, dr_pred *r)
{
    if (!l || !r) {
        dr_pred_free(l);
        dr_pred_free(r);
        return NULL;
    }
    dr_pred_op absorb = op == DR_P_AND ? DR_P_FALSE : DR_P_TRUE;
    dr_pred_op neutral = op == DR_P_AND ? DR_P_TRUE : DR_P_FALSE;
    if (l->op == absorb || r->op == absorb) {
        dr_pred_free(l);
        dr_pred_free(r);
        return pred_const(absorb == DR_P_TRUE);
    }
    if (l->op == neutral) {
        dr_pred_free(l);
        return r;
    }
    if (r->op == neutral) {
        dr_pred_free(r);
        return l;
    }
    if (l->op == op) {
        dr_pred **nv = realloc(l->args, (l->n_args + 1) * sizeof *nv);
        if (!nv) {
            dr_pred_free(l);
            dr_pred_free(r);
            return NULL;
        }
        l->args = nv;
        l->args[l->n_args++] = r;
        return l;
    }
    dr_pred *p = calloc(1, sizeof *p);
    dr_pred **args = calloc(2, sizeof *args);
    if (!p || !args) {
        free(p);
        free(args);
        dr_pred_free(l);
        dr_pred_free(r);
        return NULL;
    }
    p->op = op;
    args[0] = l;
    args[1] = r;
    p->args = args;
    p->n_args = 2;
    return p;
}

static dr_pred *negate(dr_pred *c)
{
    if (!c) return NULL;
    if (c->op == DR_P_TRUE || c->op == DR_P_FALSE) {
        c->op = c->op == DR_P_TRUE ? DR_P_FALSE : DR_P_TRUE;
        return c;
    }
    if (c->op == DR_P_NOT) {
        dr_pred *inner = c->args[0];
        c->args[0] = NULL;
        c->n_args = 0;
        dr_pred_free(c);
        return inner;
    }
    dr_pred *p = calloc(1, sizeof *p);
    dr_pred **args = calloc(1, sizeof *args);
    if (!p || !args) {
        free(p);
        free(args);
        dr_pred_free(c);
        return NULL;
    }
    p->op = DR_P_NOT;
    args[0] = c;
    p->args = args;
    p->n_args = 1;
    return p;
}

/* millis → timestamptz micros; Iceberg fails on overflow (ArithmeticException). */
static int to_micros(int64_t ms, int64_t *us, icd_error *err)
{
    if (__builtin_mul_overflow(ms, (int64_t)1000, us))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "icebergFilter: instant %lld ms is out of the timestamp range",
                        (long long)ms);
    return 0;
}

static int convert(const dr_filter *f, dr_pred **out, icd_error *err)
{
    dr_pred *r = NULL;
    *out = NULL;
    switch (f->type) {
    case DR_F_EQUALS: {
        json_t *lit = json_string(f->value);
        if (!lit) return icd_fail_nomem(err);
        r = pred_cmp(DR_P_EQ, f->column, lit);
        json_decref(lit);
        break;
    }
    case DR_F_INTERVAL:
        r = pred_const(false);
        for (size_t i = 0; r && i < f->n_intervals; i++) {
            int64_t s, e;
            if (to_micros(f->intervals[i].start, &s, err) < 0 ||
                to_micros(f->intervals[i].end, &e, err) < 0) {
                dr_pred_free(r);
                return err->code;
            }
            dr_pred *one =
                combine(DR_P_AND, pred_ts(DR_P_GE, f->column, s), pred_ts(DR_P_LT, f->column, e));
            r = combine(DR_P_OR, r, one);
        }
        break;
    case DR_F_RANGE: {
        dr_pred *lo = f->lower ? pred_cmp(f->lower_open ? DR_P_GT : DR_P_GE, f->column, f->lower)
                               : pred_const(true);
        dr_pred *hi = f->upper ? pred_cmp(f->upper_open ? DR_P_LT : DR_P_LE, f->column, f->upper)
                               : pred_const(true);
        r = combine(DR_P_AND, lo, hi);
        break;
    }
    case DR_F_AND:
    case DR_F_OR: {
        dr_pred_op op = f->type == DR_F_AND ? DR_P_AND : DR_P_OR;
        r = pred_const(op == DR_P_AND);
        for (size_t i = 0; r && i < f->n_children; i++) {
            dr_pred *c;
            int rc = convert(f->children[i], &c, err);
            if (rc < 0) {
                dr_pred_free(r);
                return rc;
            }
            r = combine(op, r, c);
        }
        break;
    }
    case DR_F_NOT: {
        dr_pred *c;
        ICD_TRY(convert(f->children[0], &c, err));
        r = negate(c);
        break;
    }
    case DR_F_TIME_WINDOW: {
        int64_t lo, hi, lo_us, hi_us;
        if (__builtin_sub_overflow(f->base_ms, f->lookback_ms, &lo) ||
            __builtin_add_overflow(f->base_ms, f->lookahead_ms, &hi))
            return icd_fail(err, ICD_EINVALID, NULL, -1, "icebergFilter: timeWindow out of range");
        ICD_TRY(to_micros(lo, &lo_us, err));
        ICD_TRY(to_micros(hi, &hi_us, err));
        r = combine(DR_P_AND, pred_ts(DR_P_GE, f->column, lo_us),
                    pred_ts(DR_P_LE, f->column, hi_us));
        break;
    }
    }
    if (!r) return icd_fail_nomem(err);
    *out = r;
    return 0;
}

int dr_filter_to_pred(const dr_filter *f, dr_pred **out, icd_error *err)
{
    if (!f) {
        *out = pred_const(true);
        return *out ? 0 : icd_fail_nomem(err);
    }
    return convert(f, out, err);
}

void dr_pred_to_json(const dr_pred *p, icd_buf *b)
{
    icd_buf_puts(b, "{\"op\":");
    icd_json_cstr(b, op_names[p->op]);
    if (p->column) {
        icd_buf_puts(b, ",\"column\":");
        icd_json_cstr(b, p->column);
    }
    if (p->is_ts) {
        icd_buf_puts(b, ",\"timestamp_micros\":");
        icd_json_i64(b, p->ts_micros);
    } else if (p->literal) {
        char *t = json_dumps(p->literal, JSON_ENCODE_ANY | JSON_COMPACT);
        if (!t) {
            b->oom = true;
            return;
        }
        icd_buf_puts(b, ",\"value\":");
        icd_buf_puts(b, t);
        free(t);
    }
    if (p->op == DR_P_AND || p->op == DR_P_OR || p->op == DR_P_NOT) {
        icd_buf_puts(b, ",\"args\":[");
        for (size_t i = 0; i < p->n_args; i++) {
            if (i) icd_buf_putc(b, ',');
            dr_pred_to_json(p->args[i], b);
        }
        icd_buf_putc(b, ']');
    }
    icd_buf_putc(b, '}');
}
