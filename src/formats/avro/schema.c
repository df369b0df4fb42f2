/*
 * Avro schema parsing (see schema.h): JSON (jansson) -> icd_avro_schema graph. The container
 * reader calls this once per file on the header's `avro.schema`; the datum decoder then
 * walks the graph for every record. Besides the Avro specification we keep what Iceberg
 * adds: "field-id" on record fields, "element-id" / "key-id" / "value-id" on arrays and
 * maps, and "adjust-to-utc" on timestamp longs.
 *
 * Errors unwind with context: each level prefixes where it was ("field 'x'", "record
 * 'r'"), so the final message reads from the outside in.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "formats/avro/schema.h"

typedef struct parse_ctx {
    icd_avro_schema_doc *doc;
    icd_error *err;
} parse_ctx;

static int parse_node(parse_ctx *c, const json_t *j, const char *ns, int depth,
                      icd_avro_schema **out);

const char *icd_avro_type_name(icd_avro_type t)
{
    static const char *const NAMES[] = {"null",   "boolean", "int",    "long",   "float",
                                        "double", "bytes",   "string", "record", "enum",
                                        "array",  "map",     "union",  "fixed"};
    return (unsigned)t < sizeof NAMES / sizeof NAMES[0] ? NAMES[t] : "?";
}

static int bad(parse_ctx *c, const char *fmt, ...) ICD_PRINTF(2, 3);

/* An invalid-schema error (the file's schema is what is corrupt). */
static int bad(parse_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    icd_failv(c->err, ICD_ECORRUPT, NULL, -1, fmt, ap);
    va_end(ap);
    return ICD_ECORRUPT;
}

static icd_avro_schema *new_node(parse_ctx *c, icd_avro_type t)
{
    icd_avro_schema *s = icd_arena_calloc(&c->doc->arena, sizeof *s);
    if (!s) return NULL;
    s->type = t;
    s->null_branch = -1;
    s->element_id = s->key_id = s->value_id = -1;
    s->fixed_width = -1;
    s->nskip_ops = -1;
    return s;
}

static int primitive_of(const char *name, icd_avro_type *t)
{
    static const struct {
        const char *name;
        icd_avro_type type;
    } PRIMS[] = {{"null", AVRO_NULL},   {"boolean", AVRO_BOOLEAN}, {"int", AVRO_INT},
                 {"long", AVRO_LONG},   {"float", AVRO_FLOAT},     {"double", AVRO_DOUBLE},
                 {"bytes", AVRO_BYTES}, {"string", AVRO_STRING}};
    for (size_t i = 0; i < sizeof PRIMS / sizeof PRIMS[0]; i++)
        if (!strcmp(name, PRIMS[i].name)) {
            *t = PRIMS[i].type;
            return 1;
        }
    return 0;
}

/* A name part per the spec: [A-Za-z_][A-Za-z0-9_]*; a fullname is such parts joined by
 * dots. */
static bool valid_fullname(const char *s)
{
    bool start = true;
    if (!*s) return false;
    for (; *s; s++) {
        char ch = *s;
        bool alpha = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
        if (ch == '.') {
            if (start) return false;
            start = true;
        } else if (alpha || (!start && ch >= '0' && ch <= '9')) {
            start = false;
        } else {
            return false;
        }
    }
    return !start;
}

/* ns + "." + name, or name when it already holds a dot or ns is empty. */
static char *make_fullname(parse_ctx *c, const char *name, const char *ns)
{
    if (strchr(name, '.') || !ns || !*ns) return icd_arena_strdup(&c->doc->arena, name);
    size_t a = strlen(ns), b = strlen(name);
    char *p = icd_arena_alloc(&c->doc->arena, a + b + 2);
    if (p) {
        memcpy(p, ns, a);
        p[a] = '.';
        memcpy(p + a + 1, name, b + 1);
    }
    return p;
}

static icd_avro_schema *find_named(const icd_avro_schema_doc *d, const char *fullname)
{
    for (size_t i = 0; i < d->nnamed; i++)
        if (!strcmp(d->named[i]->name, fullname)) return d->named[i];
    return NULL;
}

static int add_named(parse_ctx *c, icd_avro_schema *s)
{
    icd_avro_schema_doc *d = c->doc;
    if (find_named(d, s->name)) return bad(c, "type '%s' is defined twice", s->name);
    if (ICD_ARRAY_RESERVE(d->named, d->named_cap, d->nnamed + 1, 16)) return icd_fail_nomem(c->err);
    d->named[d->nnamed++] = s;
    return 0;
}

/* A type given as a string: a primitive or a reference to a named type defined earlier. */
static int parse_type_name(parse_ctx *c, const char *name, const char *ns, icd_avro_schema **out)
{
    icd_avro_type t;
    if (primitive_of(name, &t)) {
        *out = new_node(c, t);
        return *out ? 0 : icd_fail_nomem(c->err);
    }
    icd_avro_schema *s = NULL;
    if (!strchr(name, '.') && ns && *ns) {
        char *full = make_fullname(c, name, ns);
        if (!full) return icd_fail_nomem(c->err);
        s = find_named(c->doc, full);
    }
    if (!s) s = find_named(c->doc, name);
    if (!s)
        return bad(c, "unknown type '%s' (not a primitive, nor a named type defined before)", name);
    *out = s;
    return 0;
}

/* Reads an optional integer attribute; also accepts a string of digits, which some
 * writers emit for ids. */
static bool int_attr(const json_t *obj, const char *key, int64_t *v)
{
    const json_t *a = json_object_get(obj, key);
    if (json_is_integer(a)) {
        *v = json_integer_value(a);
        return true;
    }
    if (json_is_string(a)) {
        char *end;
        const char *s = json_string_value(a);
        long long x = strtoll(s, &end, 10);
        if (*s && !*end) {
            *v = x;
            return true;
        }
    }
    return false;
}

static int32_t id_attr(const json_t *obj, const char *key)
{
    int64_t v;
    if (int_attr(obj, key, &v) && v >= INT32_MIN && v <= INT32_MAX) return (int32_t)v;
    return -1;
}

/* Applies "logicalType" to a primitive or fixed node; invalid annotations are ignored
 * (the spec says readers fall back to the underlying type). */
static void apply_logical(icd_avro_schema *s, const json_t *obj)
{
    const char *lt = json_string_value(json_object_get(obj, "logicalType"));
    if (!lt) return;
    icd_avro_type t = s->type;
    if (!strcmp(lt, "decimal") && (t == AVRO_BYTES || t == AVRO_FIXED)) {
        int64_t p = 0, sc = 0;
        if (!int_attr(obj, "precision", &p) || p <= 0 || p > 1000) return;
        if (json_object_get(obj, "scale") && !int_attr(obj, "scale", &sc)) return;
        if (sc < 0 || sc > p) return;
        s->logical = AVRO_LT_DECIMAL;
        s->precision = (int)p;
        s->scale = (int)sc;
    } else if (!strcmp(lt, "uuid") && (t == AVRO_STRING || (t == AVRO_FIXED && s->size == 16))) {
        s->logical = AVRO_LT_UUID;
    } else if (!strcmp(lt, "date") && t == AVRO_INT) {
        s->logical = AVRO_LT_DATE;
    } else if (!strcmp(lt, "time-millis") && t == AVRO_INT) {
        s->logical = AVRO_LT_TIME_MILLIS;
    } else if (!strcmp(lt, "time-micros") && t == AVRO_LONG) {
        s->logical = AVRO_LT_TIME_MICROS;
    } else if (t == AVRO_LONG) {
        static const struct {
            const char *name;
            icd_avro_logical lt;
            bool utc;
        } TS[] = {{"timestamp-millis", AVRO_LT_TIMESTAMP_MILLIS, true},
                  {"timestamp-micros", AVRO_LT_TIMESTAMP_MICROS, true},
                  {"timestamp-nanos", AVRO_LT_TIMESTAMP_NANOS, true},
                  {"local-timestamp-millis", AVRO_LT_TIMESTAMP_MILLIS, false},
                  {"local-timestamp-micros", AVRO_LT_TIMESTAMP_MICROS, false},
                  {"local-timestamp-nanos", AVRO_LT_TIMESTAMP_NANOS, false}};
        for (size_t i = 0; i < sizeof TS / sizeof TS[0]; i++)
            if (!strcmp(lt, TS[i].name)) {
                s->logical = TS[i].lt;
                s->utc = TS[i].utc;
                /* Iceberg states the zone explicitly; it wins over the type name. */
                const json_t *adj = json_object_get(obj, "adjust-to-utc");
                if (json_is_boolean(adj))
                    s->utc = json_is_true(adj);
                else if (json_is_string(adj))
                    s->utc = !strcmp(json_string_value(adj), "true");
            }
    }
}

/* Fullname and namespace of a named type being defined; registers it (before its body is
 * parsed, so a record may refer to itself). */
static int define_named(parse_ctx *c, icd_avro_schema *s, const json_t *obj, const char *ns,
                        const char **inner_ns)
{
    const char *name = json_string_value(json_object_get(obj, "name"));
    if (!name) return bad(c, "a %s has no \"name\"", icd_avro_type_name(s->type));
    const json_t *nsj = json_object_get(obj, "namespace");
    if (nsj && !json_is_string(nsj) && !json_is_null(nsj))
        return bad(c, "\"namespace\" of '%s' is not a string", name);
    if (json_is_string(nsj)) ns = json_string_value(nsj);
    s->name = make_fullname(c, name, ns);
    if (!s->name) return icd_fail_nomem(c->err);
    if (!valid_fullname(s->name)) return bad(c, "invalid type name '%s'", s->name);
    icd_avro_type prim;
    const char *dot = strrchr(s->name, '.');
    if (primitive_of(dot ? dot + 1 : s->name, &prim))
        return bad(c, "type name '%s' redefines a primitive type", s->name);
    /* The namespace of the names inside is this type's namespace. */
    if (dot) {
        char *inner = icd_arena_strndup(&c->doc->arena, s->name, (size_t)(dot - s->name));
        if (!inner) return icd_fail_nomem(c->err);
        *inner_ns = inner;
    } else {
        *inner_ns = "";
    }
    return add_named(c, s);
}

static int parse_record(parse_ctx *c, icd_avro_schema *s, const json_t *obj, const char *ns,
                        int depth)
{
    const char *inner_ns;
    ICD_TRY(define_named(c, s, obj, ns, &inner_ns));
    const json_t *fields = json_object_get(obj, "fields");
    if (!json_is_array(fields)) return bad(c, "record '%s' has no \"fields\" array", s->name);
    size_t n = json_array_size(fields);
    s->fields = icd_arena_calloc(&c->doc->arena, (n ? n : 1) * sizeof *s->fields);
    if (!s->fields) return icd_fail_nomem(c->err);
    for (size_t i = 0; i < n; i++) {
        const json_t *fj = json_array_get(fields, i);
        icd_avro_field *f = &s->fields[i];
        if (!json_is_object(fj))
            return bad(c, "record '%s': a field is not a JSON object", s->name);
        f->name = json_string_value(json_object_get(fj, "name"));
        if (!f->name || !f->name[0]) return bad(c, "record '%s': a field has no \"name\"", s->name);
        for (size_t k = 0; k < i; k++)
            if (!strcmp(s->fields[k].name, f->name))
                return icd_fail(c->err, ICD_ECORRUPT, NULL, -1,
                                "record '%s': field '%s' appears twice", s->name, f->name);
        const json_t *tj = json_object_get(fj, "type");
        if (!tj)
            return icd_fail(c->err, ICD_ECORRUPT, NULL, -1,
                            "record '%s': field '%s' has no \"type\"", s->name, f->name);
        int rc = parse_node(c, tj, inner_ns, depth + 1, &f->type);
        if (rc) return icd_error_wrap(c->err, "record '%s' field '%s'", s->name, f->name);
        f->default_value = json_object_get(fj, "default");
        f->attrs = fj;
        int64_t id;
        if (int_attr(fj, "field-id", &id) && id >= INT32_MIN && id <= INT32_MAX) {
            f->field_id = (int32_t)id;
            f->has_field_id = true;
        }
        s->nfields = i + 1; /* fields parsed so far are visible to a recursive reference */
    }
    return 0;
}

static int parse_enum(parse_ctx *c, icd_avro_schema *s, const json_t *obj, const char *ns)
{
    const char *inner_ns;
    ICD_TRY(define_named(c, s, obj, ns, &inner_ns));
    const json_t *syms = json_object_get(obj, "symbols");
    if (!json_is_array(syms)) return bad(c, "enum '%s' has no \"symbols\" array", s->name);
    size_t n = json_array_size(syms);
    s->symbols = icd_arena_calloc(&c->doc->arena, (n ? n : 1) * sizeof *s->symbols);
    if (!s->symbols) return icd_fail_nomem(c->err);
    for (size_t i = 0; i < n; i++) {
        const char *sym = json_string_value(json_array_get(syms, i));
        if (!sym) return bad(c, "enum '%s': a symbol is not a string", s->name);
        for (size_t k = 0; k < i; k++)
            if (!strcmp(s->symbols[k], sym))
                return icd_fail(c->err, ICD_ECORRUPT, NULL, -1,
                                "enum '%s': symbol '%s' appears twice", s->name, sym);
        s->symbols[i] = sym;
    }
    s->nsymbols = n;
    return 0;
}

static int parse_fixed(parse_ctx *c, icd_avro_schema *s, const json_t *obj, const char *ns)
{
    const char *inner_ns;
    ICD_TRY(define_named(c, s, obj, ns, &inner_ns));
    int64_t size;
    if (!int_attr(obj, "size", &size) || !json_is_integer(json_object_get(obj, "size")))
        return bad(c, "fixed '%s' has no integer \"size\"", s->name);
    if (size < 0 || size > (1 << 30)) return bad(c, "fixed '%s' has an invalid size", s->name);
    s->size = (size_t)size;
    apply_logical(s, obj);
    return 0;
}

/* Two union branches clash when they are the same unnamed type, or named types with the
 * same name. */
static bool union_clash(const icd_avro_schema *a, const icd_avro_schema *b)
{
    if (a->type != b->type) return false;
    if (a->type == AVRO_RECORD || a->type == AVRO_ENUM || a->type == AVRO_FIXED)
        return !strcmp(a->name, b->name);
    return true;
}

static int parse_union(parse_ctx *c, icd_avro_schema **out, const json_t *arr, const char *ns,
                       int depth)
{
    icd_avro_schema *s = new_node(c, AVRO_UNION);
    if (!s) return icd_fail_nomem(c->err);
    size_t n = json_array_size(arr);
    if (n == 0) return bad(c, "a union has no branches");
    s->branches = icd_arena_calloc(&c->doc->arena, n * sizeof *s->branches);
    if (!s->branches) return icd_fail_nomem(c->err);
    for (size_t i = 0; i < n; i++) {
        icd_avro_schema *b;
        if (parse_node(c, json_array_get(arr, i), ns, depth + 1, &b))
            return icd_error_wrap(c->err, "union branch %zu", i);
        if (b->type == AVRO_UNION) return bad(c, "a union directly contains another union");
        for (size_t k = 0; k < i; k++)
            if (union_clash(s->branches[k], b))
                return bad(c, "a union holds the type '%s' twice",
                           b->name ? b->name : icd_avro_type_name(b->type));
        if (b->type == AVRO_NULL && s->null_branch < 0) s->null_branch = (int)i;
        s->branches[i] = b;
    }
    s->nbranches = n;
    *out = s;
    return 0;
}

static int parse_object(parse_ctx *c, const json_t *obj, const char *ns, int depth,
                        icd_avro_schema **out)
{
    const json_t *tj = json_object_get(obj, "type");
    if (!tj) return bad(c, "a schema object has no \"type\"");
    if (!json_is_string(tj)) /* {"type": {...}} or {"type": [...]}: a wrapped schema */
        return parse_node(c, tj, ns, depth + 1, out);
    const char *t = json_string_value(tj);
    icd_avro_type prim;
    icd_avro_schema *s;
    if (primitive_of(t, &prim)) {
        if (!(s = new_node(c, prim))) return icd_fail_nomem(c->err);
        s->attrs = obj;
        apply_logical(s, obj);
        *out = s;
        return 0;
    }
    int rc;
    if (!strcmp(t, "record") || !strcmp(t, "error")) {
        if (!(s = new_node(c, AVRO_RECORD))) return icd_fail_nomem(c->err);
        s->attrs = obj;
        rc = parse_record(c, s, obj, ns, depth);
    } else if (!strcmp(t, "enum")) {
        if (!(s = new_node(c, AVRO_ENUM))) return icd_fail_nomem(c->err);
        s->attrs = obj;
        rc = parse_enum(c, s, obj, ns);
    } else if (!strcmp(t, "fixed")) {
        if (!(s = new_node(c, AVRO_FIXED))) return icd_fail_nomem(c->err);
        s->attrs = obj;
        rc = parse_fixed(c, s, obj, ns);
    } else if (!strcmp(t, "array") || !strcmp(t, "map")) {
        bool arr = t[0] == 'a';
        if (!(s = new_node(c, arr ? AVRO_ARRAY : AVRO_MAP))) return icd_fail_nomem(c->err);
        s->attrs = obj;
        const json_t *it = json_object_get(obj, arr ? "items" : "values");
        if (!it) return bad(c, "%s", arr ? "an array has no \"items\"" : "a map has no \"values\"");
        if (parse_node(c, it, ns, depth + 1, &s->items))
            return icd_error_wrap(c->err, arr ? "array items" : "map values");
        s->element_id = id_attr(obj, "element-id");
        s->key_id = id_attr(obj, "key-id");
        s->value_id = id_attr(obj, "value-id");
        rc = 0;
    } else {
        return parse_type_name(c, t, ns, out); /* {"type": "SomeNamedType"} */
    }
    if (rc) return rc;
    *out = s;
    return 0;
}

static int parse_node(parse_ctx *c, const json_t *j, const char *ns, int depth,
                      icd_avro_schema **out)
{
    if (depth > AVRO_MAX_SCHEMA_DEPTH)
        return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1, "schema nests deeper than %d levels",
                        AVRO_MAX_SCHEMA_DEPTH);
    if (json_is_string(j)) return parse_type_name(c, json_string_value(j), ns, out);
    if (json_is_array(j)) return parse_union(c, out, j, ns, depth);
    if (json_is_object(j)) return parse_object(c, j, ns, depth, out);
    return bad(c, "a schema must be a string, object or array");
}

static size_t sat_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* Fills skip_ops of s from its (already sized) children; see schema.h. */
static void compute_skip_ops(icd_avro_schema *s)
{
    s->nskip_ops = -1;
    s->skip_ops_depth = 0;
    uint8_t op = 0;
    switch (s->type) {
    case AVRO_NULL:
        s->nskip_ops = 0;
        return;
    case AVRO_BOOLEAN:
        op = AVRO_SKIP_BOOLEAN;
        break;
    case AVRO_INT:
    case AVRO_LONG:
    case AVRO_ENUM:
        op = AVRO_SKIP_VARINT;
        break;
    case AVRO_FLOAT:
        op = AVRO_SKIP_FLOAT;
        break;
    case AVRO_DOUBLE:
        op = AVRO_SKIP_DOUBLE;
        break;
    case AVRO_BYTES:
        op = AVRO_SKIP_BYTES;
        break;
    case AVRO_STRING:
        op = AVRO_SKIP_STRING;
        break;
    case AVRO_RECORD: {
        /* (a fixed-width record is jumped over whole, by its width: not a run of steps) */
        if (s->fixed_width >= 0) return;
        int n = 0, depth = 0;
        for (size_t i = 0; i < s->nfields; i++) {
            const icd_avro_schema *f = s->fields[i].type;
            /* (a field on the current path is a recursive type: not flat) */
            if (f->visiting_ != 2 || f->nskip_ops < 0 || n + f->nskip_ops > AVRO_SKIP_OPS_MAX)
                return;
            memcpy(s->skip_ops + n, f->skip_ops, (size_t)f->nskip_ops);
            n += f->nskip_ops;
            if (f->skip_ops_depth + 1 > depth) depth = f->skip_ops_depth + 1;
        }
        s->nskip_ops = n;
        s->skip_ops_depth = depth;
        return;
    }
    default: /* fixed (a size of its own), unions, arrays, maps */
        return;
    }
    s->skip_ops[0] = op;
    s->nskip_ops = 1;
}

static void compute_skip_all_varints(icd_avro_schema *s)
{
    s->skip_all_varints = s->nskip_ops > 0;
    for (int k = 0; k < s->nskip_ops; k++)
        if (s->skip_ops[k] != AVRO_SKIP_VARINT) s->skip_all_varints = false;
}

/* Fills min_size and fixed_width bottom-up. A node met again on the current path (a
 * recursive type) counts as 0 bytes / variable width there, which keeps min_size a lower
 * bound. */
static void compute_sizes(icd_avro_schema *s)
{
    if (s->visiting_) return; /* on the current path (1) or done (2) */
    s->visiting_ = 1;
    size_t min = 0;
    int64_t width = -1;
    switch (s->type) {
    case AVRO_NULL:
        width = 0;
        break;
    case AVRO_BOOLEAN:
        min = 1, width = 1;
        break;
    case AVRO_INT:
    case AVRO_LONG:
    case AVRO_BYTES:
    case AVRO_STRING:
    case AVRO_ENUM:
    case AVRO_ARRAY:
    case AVRO_MAP:
        min = 1;
        break;
    case AVRO_FLOAT:
        min = 4, width = 4;
        break;
    case AVRO_DOUBLE:
        min = 8, width = 8;
        break;
    case AVRO_FIXED:
        min = s->size;
        width = (int64_t)s->size;
        break;
    case AVRO_RECORD:
        width = 0;
        for (size_t i = 0; i < s->nfields; i++) {
            icd_avro_schema *f = s->fields[i].type;
            compute_sizes(f);
            min = sat_add(min, f->min_size);
            if (f->visiting_ == 1 || f->fixed_width < 0 || width < 0)
                width = -1;
            else
                width += f->fixed_width;
        }
        if (width > (int64_t)1 << 40) width = -1;
        break;
    case AVRO_UNION:
        min = SIZE_MAX;
        for (size_t i = 0; i < s->nbranches; i++) {
            compute_sizes(s->branches[i]);
            if (s->branches[i]->min_size < min) min = s->branches[i]->min_size;
        }
        min = sat_add(min, 1);
        break;
    }
    if (s->type == AVRO_ARRAY || s->type == AVRO_MAP) compute_sizes(s->items);
    s->min_size = min;
    s->fixed_width = width;
    compute_skip_ops(s);
    compute_skip_all_varints(s);
    s->visiting_ = 2;
}

static int parse_doc(const char *json, size_t len, icd_avro_schema_doc **out, icd_error *err)
{
    *out = NULL;
    icd_avro_schema_doc *d = calloc(1, sizeof *d);
    if (!d) return icd_fail_nomem(err);
    atomic_init(&d->refs, 1);
    json_error_t jerr;
    d->json = json_loadb(json, len, JSON_DECODE_ANY, &jerr);
    if (!d->json) {
        icd_avro_schema_doc_free(d);
        return icd_fail(err, ICD_ECORRUPT, NULL, -1, "schema is not valid JSON: %s (line %d)",
                        jerr.text, jerr.line);
    }
    parse_ctx c = {d, err};
    int rc = parse_node(&c, d->json, "", 0, &d->root);
    if (rc) {
        icd_avro_schema_doc_free(d);
        return icd_error_wrap(err, "invalid Avro schema");
    }
    /* Named types first, in definition order: a reference can only name a type defined
     * before it, so the walk meets finished nodes there and stays as deep as the JSON. */
    for (size_t i = 0; i < d->nnamed; i++)
        compute_sizes(d->named[i]);
    compute_sizes(d->root);
    *out = d;
    return 0;
}

/* The text last parsed and its doc (holding one reference); texts longer than the limit
 * are not kept. */
#define LAST_TEXT_MAX ((size_t)1 << 20)
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static char *last_text;
static size_t last_len;
static icd_avro_schema_doc *last_doc;

int icd_avro_schema_parse(const char *json, size_t len, icd_avro_schema_doc **out, icd_error *err)
{
    *out = NULL;
    pthread_mutex_lock(&last_lock);
    if (last_doc && last_len == len && !memcmp(last_text, json, len)) {
        atomic_fetch_add(&last_doc->refs, 1);
        *out = last_doc;
    }
    pthread_mutex_unlock(&last_lock);
    if (*out) return 0;
    ICD_TRY(parse_doc(json, len, out, err));
    char *text = len <= LAST_TEXT_MAX ? malloc(len ? len : 1) : NULL;
    if (!text) return 0; /* (not kept: the next parse of it parses again) */
    memcpy(text, json, len);
    atomic_fetch_add(&(*out)->refs, 1);
    pthread_mutex_lock(&last_lock);
    icd_avro_schema_doc *old = last_doc;
    free(last_text);
    last_text = text;
    last_len = len;
    last_doc = *out;
    pthread_mutex_unlock(&last_lock);
    icd_avro_schema_doc_free(old);
    return 0;
}

void icd_avro_schema_doc_free(icd_avro_schema_doc *doc)
{
    if (!doc || atomic_fetch_sub(&doc->refs, 1) != 1) return;
    json_decref(doc->json);
    free(doc->named);
    icd_arena_free(&doc->arena);
    free(doc);
}

int icd_avro_schema_field_index(const icd_avro_schema *rec, const char *name)
{
    if (!rec || rec->type != AVRO_RECORD) return -1;
    for (size_t i = 0; i < rec->nfields; i++)
        if (!strcmp(rec->fields[i].name, name)) return (int)i;
    return -1;
}

int icd_avro_schema_field_index_by_id(const icd_avro_schema *rec, int32_t field_id)
{
    if (!rec || rec->type != AVRO_RECORD) return -1;
    for (size_t i = 0; i < rec->nfields; i++)
        if (rec->fields[i].has_field_id && rec->fields[i].field_id == field_id) return (int)i;
    return -1;
}
