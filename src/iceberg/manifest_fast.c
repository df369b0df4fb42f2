/*
 * The manifest-entry decoder (see manifest_fast.h). A program is one step per field of the
 * manifest_entry record and one per field of its data_file record, in writer order; the
 * partition record has one step per field too. A step reads its value into the raw entry
 * (an int or long, a string, a file format, the data_file record, the partition tuple,
 * equality ids, a stats map), or skips it by its encoded size (what the generic projection
 * leaves out), or -- a field the generic path decodes but nobody reads -- steps over it
 * where skipping checks exactly what decoding checks (longs, strings, floats, ...).
 *
 * Anything else makes ice_mfast_compile give up (no program; the generic path reads the
 * file): a used field of a type the entry reader would not take, a union of more than
 * null and one type, stats maps that are Avro maps or whose items are not {key, value}
 * records of ints/longs and longs/bytes, partition values that are not primitives, an
 * unread field whose decoding checks more than skipping does (ints, booleans, enums,
 * arrays, records).
 */
#include <stdlib.h>
#include <string.h>

#include "base/bits.h"
#include "base/varint.h"
#include "iceberg/manifest_fast.h"

enum {
    OP_SKIP,      /* left out by the generic projection: skipped by size */
    OP_SKIP_FLAT, /* the same, a (maybe null) array of flat items or a flat value: inline */
    OP_STEP_OVER, /* decoded by the generic path but unused: skipping checks the same */
    OP_LONG,      /* an int or a long into e->v[slot] */
    OP_BYTES,     /* a string or bytes: slot 0 file_path, 1 referenced_data_file */
    OP_FORMAT,    /* a string or an enum */
    OP_DATA_FILE, /* the data_file record */
    OP_PARTITION, /* the partition record */
    OP_EQ,        /* an array of ints or longs */
    OP_STATS,     /* an array of {key, value} records: map `slot` */
};

/* A value that may be a union of null and one type. */
typedef struct opt_type {
    const icd_avro_schema *type; /* the field's type (the union, when is_union) */
    const icd_avro_schema *vs;   /* the value's type (NULL: a union of null only) */
    bool is_union;
    bool plain;      /* not a union: whether the value is there (its type is not null) */
    int32_t val_idx; /* union: the branch of vs, -1 when none */
    /* union: the one byte that picks the value's branch and the null's (-1: none); every
     * branch is one of the two, so any other byte is left to the careful reader */
    int16_t val_byte, null_byte;
} opt_type;

typedef struct mstep {
    uint8_t op;
    uint8_t slot;
    opt_type t;
    int depth; /* OP_SKIP: the nesting the generic skip runs at */
    /* OP_SKIP_FLAT: the value's (or the array items') skip steps (schema.h skip_ops) */
    bool array;
    bool all_varints; /* every step a varint (counts maps, split offsets) */
    uint8_t nops;
    uint8_t ops[AVRO_SKIP_OPS_MAX];
    size_t item_min;
    /* OP_STATS: the items' record: which field is the key, how each is read */
    int key_idx;
    bool key_int;
    opt_type val;
    /* OP_FORMAT of an enum: the format of each symbol */
    ice_file_format *sym_format;
} mstep;

typedef struct mprog {
    mstep *steps;
    size_t n;
} mprog;

/* One field of the partition record. */
typedef struct pstep {
    opt_type t;
    ice_type_kind kind;      /* of the value's type */
    ice_type_kind null_kind; /* of a null value: the declared type's non-null branch */
    bool millis;             /* timestamp-millis: scaled to micros */
    int scale;
} pstep;

struct ice_mfast {
    mprog top, df;
    pstep *pf;
    size_t npf;
    int32_t *spec_idx; /* per spec field: its partition record field, -1 when missing */
    size_t nspec;
    int missing; /* the first spec field with no partition record field, or -1 */
};

/* ---- shared with manifest.c -------------------------------------------------------- */

ice_type_kind ice_avro_partition_kind(const icd_avro_schema *s)
{
    switch (s->type) {
    case AVRO_BOOLEAN:
        return ICE_T_BOOLEAN;
    case AVRO_INT:
        return s->logical == AVRO_LT_DATE ? ICE_T_DATE : ICE_T_INT;
    case AVRO_LONG:
        switch (s->logical) {
        case AVRO_LT_TIME_MICROS:
            return ICE_T_TIME;
        case AVRO_LT_TIMESTAMP_MICROS:
        case AVRO_LT_TIMESTAMP_MILLIS:
            return s->utc ? ICE_T_TIMESTAMPTZ : ICE_T_TIMESTAMP;
        case AVRO_LT_TIMESTAMP_NANOS:
            return s->utc ? ICE_T_TIMESTAMPTZ_NS : ICE_T_TIMESTAMP_NS;
        default:
            return ICE_T_LONG;
        }
    case AVRO_FLOAT:
        return ICE_T_FLOAT;
    case AVRO_DOUBLE:
        return ICE_T_DOUBLE;
    case AVRO_STRING:
        return s->logical == AVRO_LT_UUID ? ICE_T_UUID : ICE_T_STRING;
    case AVRO_BYTES:
        return s->logical == AVRO_LT_DECIMAL ? ICE_T_DECIMAL : ICE_T_BINARY;
    case AVRO_FIXED:
        if (s->logical == AVRO_LT_DECIMAL) return ICE_T_DECIMAL;
        return s->logical == AVRO_LT_UUID ? ICE_T_UUID : ICE_T_FIXED;
    default:
        return ICE_T_UNKNOWN;
    }
}

/* s[0..n) equals the lower-case `lit` of length n, ignoring ASCII case (strncasecmp's
 * answer in the C locale, without a call per entry). */
static bool eq_nocase(const char *s, const char *lit, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 'A' && ch <= 'Z') ch = (unsigned char)(ch - 'A' + 'a');
        if (ch != (unsigned char)lit[i]) return false;
    }
    return true;
}

ice_file_format ice_file_format_from_name(const char *s, size_t n)
{
    /* (writers spell it as Iceberg's enum does: one 7-byte compare per entry) */
    if (n == 7 && !memcmp(s, "PARQUET", 7)) return ICE_FORMAT_PARQUET;
    if (n == 7 && eq_nocase(s, "parquet", 7)) return ICE_FORMAT_PARQUET;
    if (n == 4 && eq_nocase(s, "avro", 4)) return ICE_FORMAT_AVRO;
    if (n == 3 && eq_nocase(s, "orc", 3)) return ICE_FORMAT_ORC;
    if (n == 6 && eq_nocase(s, "puffin", 6)) return ICE_FORMAT_PUFFIN;
    return ICE_FORMAT_UNKNOWN;
}

/* ---- compiling ----------------------------------------------------------------------- */

/* `type` as a value that may be null: false for a union the program does not handle. */
static bool resolve_opt(const icd_avro_schema *type, opt_type *o)
{
    memset(o, 0, sizeof *o);
    o->type = type;
    o->vs = type;
    o->val_idx = -1;
    o->val_byte = o->null_byte = -1;
    o->plain = type->type != AVRO_NULL;
    if (type->type != AVRO_UNION) return true;
    o->is_union = true;
    o->plain = false;
    o->vs = NULL;
    if (type->nbranches < 1 || type->nbranches > 2) return false;
    size_t nulls = 0;
    for (size_t i = 0; i < type->nbranches; i++) {
        if (type->branches[i]->type == AVRO_NULL) {
            nulls++;
            o->null_byte = (int16_t)(2 * i); /* (zigzag: branch i is the byte 2i) */
        } else {
            if (o->vs) return false;
            o->vs = type->branches[i];
            o->val_idx = (int32_t)i;
            o->val_byte = (int16_t)(2 * i);
        }
    }
    if (nulls > 1 || (o->vs && o->vs->type == AVRO_UNION)) return false;
    return true;
}

/* Whether stepping over a value of `s` checks what decoding it does (same errors). */
static bool skip_checks_as_decode(const icd_avro_schema *s, int level)
{
    switch (s->type) {
    case AVRO_NULL:
    case AVRO_LONG:
    case AVRO_FLOAT:
    case AVRO_DOUBLE:
    case AVRO_STRING:
    case AVRO_BYTES:
    case AVRO_FIXED:
        return true;
    case AVRO_UNION:
        if (level > 0) return false;
        for (size_t i = 0; i < s->nbranches; i++)
            if (!skip_checks_as_decode(s->branches[i], level + 1)) return false;
        return true;
    default:
        return false;
    }
}

static bool is_intlike(const icd_avro_schema *s)
{
    return s && (s->type == AVRO_INT || s->type == AVRO_LONG);
}

static bool is_stringlike(const icd_avro_schema *s)
{
    return s && (s->type == AVRO_STRING || s->type == AVRO_BYTES);
}

/* A stats map's items: {key: int|long, value: long|int (counts) or bytes|string|fixed
 * (bounds), either maybe null}, nothing else. */
static bool compile_stats(mstep *st, bool bounds)
{
    const icd_avro_schema *arr = st->t.vs;
    if (!arr || arr->type != AVRO_ARRAY) return false;
    const icd_avro_schema *it = arr->items;
    if (it->type != AVRO_RECORD || it->nfields != 2) return false;
    int ki = icd_avro_schema_field_index(it, "key"), vi = icd_avro_schema_field_index(it, "value");
    if (ki < 0 || vi < 0 || ki == vi) return false;
    const icd_avro_schema *kt = it->fields[ki].type;
    if (!is_intlike(kt)) return false;
    st->key_idx = ki;
    st->key_int = kt->type == AVRO_INT;
    if (!resolve_opt(it->fields[vi].type, &st->val) || !st->val.vs) return false;
    const icd_avro_schema *v = st->val.vs;
    if (bounds) return is_stringlike(v) || v->type == AVRO_FIXED;
    return is_intlike(v);
}

/* A skipped field that is a flat value or an array of flat items (of at least one byte,
 * none of them nested), maybe in a union with null: OP_SKIP_FLAT, skipped inline (column
 * sizes, split offsets, key metadata, the unread stats maps). */
static void compile_flat_skip(mstep *st, const icd_avro_schema *ft)
{
    opt_type o;
    if (!resolve_opt(ft, &o) || !o.vs) return;
    const icd_avro_schema *v = o.vs, *flat = v;
    bool array = v->type == AVRO_ARRAY;
    if (array) flat = v->items;
    if (flat->nskip_ops <= 0 || flat->skip_ops_depth > 2 || (array && flat->min_size == 0)) return;
    for (int k = 0; k < flat->nskip_ops; k++)
        if (flat->skip_ops[k] != AVRO_SKIP_VARINT && flat->skip_ops[k] != AVRO_SKIP_STRING &&
            flat->skip_ops[k] != AVRO_SKIP_BYTES)
            return;
    st->op = OP_SKIP_FLAT;
    st->t = o;
    st->array = array;
    st->nops = (uint8_t)flat->nskip_ops;
    memcpy(st->ops, flat->skip_ops, (size_t)flat->nskip_ops);
    st->item_min = flat->min_size;
    st->all_varints = flat->skip_all_varints;
}

/* The data_file fields the entry reader uses (manifest.c data_file_field_used). */
static const struct {
    const char *name;
    uint8_t op, slot;
} DF_FIELDS[] = {{"content", OP_LONG, MR_CONTENT},
                 {"file_path", OP_BYTES, 0},
                 {"file_format", OP_FORMAT, 0},
                 {"partition", OP_PARTITION, 0},
                 {"record_count", OP_LONG, MR_RECORD_COUNT},
                 {"file_size_in_bytes", OP_LONG, MR_FILE_SIZE},
                 {"equality_ids", OP_EQ, 0},
                 {"referenced_data_file", OP_BYTES, 1},
                 {"content_offset", OP_LONG, MR_CONTENT_OFFSET},
                 {"content_size_in_bytes", OP_LONG, MR_CONTENT_SIZE},
                 {"sort_order_id", OP_LONG, MR_SORT_ORDER_ID},
                 {"first_row_id", OP_LONG, MR_FIRST_ROW_ID}};
static const char *const STATS_NAMES[5] = {"value_counts", "null_value_counts", "nan_value_counts",
                                           "lower_bounds", "upper_bounds"};
static const struct {
    const char *name;
    uint8_t op, slot;
} TOP_FIELDS[] = {{"status", OP_LONG, MR_STATUS},
                  {"snapshot_id", OP_LONG, MR_SNAPSHOT_ID},
                  {"sequence_number", OP_LONG, MR_SEQUENCE_NUMBER},
                  {"file_sequence_number", OP_LONG, MR_FILE_SEQUENCE_NUMBER},
                  {"data_file", OP_DATA_FILE, 0}};

/* Whether the step can read its value: the type the entry reader takes for it. */
static bool step_typed(mstep *st)
{
    const icd_avro_schema *v = st->t.vs;
    if (!v) return true; /* always null */
    switch (st->op) {
    case OP_LONG:
        return is_intlike(v);
    case OP_BYTES:
        return is_stringlike(v);
    case OP_FORMAT:
        if (v->type == AVRO_STRING) return true;
        if (v->type != AVRO_ENUM) return false;
        st->sym_format = calloc(v->nsymbols ? v->nsymbols : 1, sizeof *st->sym_format);
        if (!st->sym_format) return false;
        for (size_t i = 0; i < v->nsymbols; i++)
            st->sym_format[i] = ice_file_format_from_name(v->symbols[i], strlen(v->symbols[i]));
        return true;
    case OP_DATA_FILE:
    case OP_PARTITION:
        return v->type == AVRO_RECORD;
    case OP_EQ:
        return v->type == AVRO_ARRAY && is_intlike(v->items);
    default:
        return false;
    }
}

static void prog_free(mprog *p)
{
    for (size_t i = 0; p->steps && i < p->n; i++)
        free(p->steps[i].sym_format);
    free(p->steps);
    p->steps = NULL;
}

/* 1: compiled; 0: not handled (fall back); <0 never (allocation failures fall back too:
 * the generic path then reports them). */
static bool compile_record(const icd_avro_schema *rec, bool top, const bool stat_read[5],
                           int skip_depth, mprog *p, const icd_avro_schema **df,
                           const icd_avro_schema **part)
{
    p->n = rec->nfields;
    p->steps = calloc(rec->nfields ? rec->nfields : 1, sizeof *p->steps);
    if (!p->steps) return false;
    for (size_t i = 0; i < rec->nfields; i++) {
        mstep *st = &p->steps[i];
        const char *name = rec->fields[i].name;
        const icd_avro_schema *ft = rec->fields[i].type;
        bool first = icd_avro_schema_field_index(rec, name) == (int)i;
        st->op = top ? OP_STEP_OVER : OP_SKIP;
        st->depth = skip_depth;
        bool used = false;
        if (top) {
            for (size_t k = 0; k < sizeof TOP_FIELDS / sizeof *TOP_FIELDS; k++)
                if (!strcmp(name, TOP_FIELDS[k].name)) {
                    st->op = TOP_FIELDS[k].op;
                    st->slot = TOP_FIELDS[k].slot;
                    used = true;
                }
        } else {
            for (size_t k = 0; k < sizeof DF_FIELDS / sizeof *DF_FIELDS; k++)
                if (!strcmp(name, DF_FIELDS[k].name)) {
                    st->op = DF_FIELDS[k].op;
                    st->slot = DF_FIELDS[k].slot;
                    used = true;
                }
            for (uint8_t w = 0; w < 5; w++)
                if (!strcmp(name, STATS_NAMES[w]) && stat_read[w]) {
                    st->op = OP_STATS;
                    st->slot = w;
                    used = true;
                }
        }
        if (used && !first) st->op = OP_STEP_OVER; /* (decoded, never looked at) */
        if (st->op == OP_STEP_OVER && !skip_checks_as_decode(ft, 0)) return false;
        if (st->op == OP_SKIP || st->op == OP_STEP_OVER) {
            st->t.type = ft;
            if (st->op == OP_SKIP) compile_flat_skip(st, ft);
            continue;
        }
        if (!resolve_opt(ft, &st->t)) return false;
        if (st->op == OP_STATS) {
            if (!compile_stats(st, st->slot >= 3)) return false;
            continue;
        }
        if (!step_typed(st)) return false;
        if (st->op == OP_DATA_FILE && st->t.vs) *df = st->t.vs;
        if (st->op == OP_PARTITION && st->t.vs) *part = st->t.vs;
    }
    return true;
}

/* The non-null branch of a union, or the schema itself (manifest.c unnull). */
static const icd_avro_schema *unnull(const icd_avro_schema *s)
{
    if (s->type != AVRO_UNION) return s;
    for (size_t i = 0; i < s->nbranches; i++)
        if (s->branches[i]->type != AVRO_NULL) return s->branches[i];
    return s;
}

static bool compile_partition(ice_mfast *m, const icd_avro_schema *rs,
                              const ice_partition_spec *spec)
{
    m->npf = rs ? rs->nfields : 0;
    m->pf = calloc(m->npf ? m->npf : 1, sizeof *m->pf);
    m->nspec = spec ? spec->nfields : 0;
    m->spec_idx = calloc(m->nspec ? m->nspec : 1, sizeof *m->spec_idx);
    m->missing = -1;
    if (!m->pf || !m->spec_idx) return false;
    for (size_t j = 0; j < m->npf; j++) {
        pstep *ps = &m->pf[j];
        if (!resolve_opt(rs->fields[j].type, &ps->t)) return false;
        ps->null_kind = ice_avro_partition_kind(unnull(rs->fields[j].type));
        const icd_avro_schema *v = ps->t.vs;
        if (!v) continue;
        switch (v->type) {
        case AVRO_NULL:
        case AVRO_BOOLEAN:
        case AVRO_INT:
        case AVRO_LONG:
        case AVRO_FLOAT:
        case AVRO_DOUBLE:
        case AVRO_STRING:
        case AVRO_BYTES:
        case AVRO_FIXED:
            break;
        default: /* (the generic path refuses most of these; it says how) */
            return false;
        }
        ps->kind = ice_avro_partition_kind(v);
        ps->millis = v->type == AVRO_LONG && v->logical == AVRO_LT_TIMESTAMP_MILLIS;
        ps->scale = v->scale;
    }
    for (size_t i = 0; i < m->nspec; i++) {
        int idx = rs ? icd_avro_schema_field_index_by_id(rs, spec->fields[i].field_id) : -1;
        if (idx < 0 && rs && i < rs->nfields && !rs->fields[i].has_field_id)
            idx = (int)i; /* old writers: positional */
        m->spec_idx[i] = idx;
        if (idx < 0 && m->missing < 0) m->missing = (int)i;
    }
    return true;
}

void ice_mfast_free(ice_mfast *m)
{
    if (!m) return;
    prog_free(&m->top);
    prog_free(&m->df);
    free(m->pf);
    free(m->spec_idx);
    free(m);
}

int ice_mfast_compile(const icd_avro_schema *root, const ice_partition_spec *spec,
                      const bool stat_read[5], ice_mfast **out, icd_error *err)
{
    *out = NULL;
    if (!root || root->type != AVRO_RECORD) return 0;
    ice_mfast *m = calloc(1, sizeof *m);
    if (!m) return icd_fail_nomem(err);
    const icd_avro_schema *df = NULL, *part = NULL, *unused = NULL;
    bool ok = compile_record(root, true, stat_read, 0, &m->top, &df, &unused);
    int df_skip_depth = 2;
    if (ok && df) {
        /* the generic plan's depth for data_file's skipped fields: one more level when
         * data_file is a union */
        int di = icd_avro_schema_field_index(root, "data_file");
        if (di >= 0 && root->fields[di].type->type == AVRO_UNION) df_skip_depth = 3;
        ok = compile_record(df, false, stat_read, df_skip_depth, &m->df, &unused, &part);
    }
    if (ok) ok = compile_partition(m, part, spec);
    if (!ok) {
        ice_mfast_free(m);
        return 0;
    }
    *out = m;
    return 0;
}

int ice_mfast_missing_partition_field(const ice_mfast *m)
{
    return m->missing;
}

/* ---- decoding ------------------------------------------------------------------------ */

/* Whether the optional value is there: reads a union's branch. */
static inline int read_present(const opt_type *t, icd_avro_cursor *c, bool *present, icd_error *err)
{
    if (!t->is_union) {
        *present = t->plain;
        return 0;
    }
    if (c->p < c->end && (*c->p == t->val_byte || *c->p == t->null_byte)) {
        *present = *c->p++ == t->val_byte;
        return 0;
    }
    int32_t idx;
    ICD_TRY(icd_avro_read_branch(t->type, c, &idx, err));
    *present = idx == t->val_idx;
    return 0;
}

static inline int read_intlike(const icd_avro_schema *s, icd_avro_cursor *c, int64_t *out,
                               icd_error *err)
{
    if (s->type == AVRO_LONG) return icd_avro_read_long_q(c, out, err);
    int32_t v = 0;
    ICD_TRY(icd_avro_read_int_q(c, &v, err));
    *out = v;
    return 0;
}

static inline int read_stringlike(const icd_avro_schema *s, icd_avro_cursor *c, const uint8_t **p,
                                  size_t *n, icd_error *err)
{
    if (s->type == AVRO_FIXED) {
        ICD_TRY(icd_avro_need(c, s->size, "fixed", err));
        *p = c->p;
        *n = s->size;
        c->p += s->size;
        return 0;
    }
    return icd_avro_read_bytes_q(c, p, n, s->type == AVRO_BYTES ? "a bytes value" : "a string",
                                 err);
}

/* Room for `want` items of `size` bytes in a scratch vector (the old copy is left in the
 * arena, as the generic decoder's arrays are). Holds to the generic decoder's memory limit
 * for one record (AVRO_MAX_TREE_BYTES of scratch; its tree takes more per item, so it
 * gives up sooner: a record that large is refused by both, with the same message). */
static int grow(icd_avro_cursor *c, icd_arena *a, void **items, size_t *cap, size_t have,
                size_t want, size_t size, icd_error *err)
{
    if (want <= *cap) return 0;
    size_t ncap = *cap * 2 > want ? *cap * 2 : want;
    if (a->total > AVRO_MAX_TREE_BYTES || ncap > AVRO_MAX_TREE_BYTES / size)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, (int64_t)icd_avro_cursor_pos(c),
                        "one value needs more than %zu MiB of memory to decode",
                        AVRO_MAX_TREE_BYTES >> 20);
    void *n = icd_arena_alloc(a, ncap * size);
    if (!n) return icd_fail_nomem(err);
    if (have) memcpy(n, *items, have * size);
    *items = n;
    *cap = ncap;
    return 0;
}

static int read_eq(const icd_avro_schema *arr, icd_avro_cursor *c, icd_arena *a, ice_raw_entry *e,
                   icd_error *err)
{
    const icd_avro_schema *it = arr->items;
    void *v = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        int64_t count, bytes;
        ICD_TRY(icd_avro_read_block_count(c, it->min_size, &count, &bytes, err));
        if (count == 0) break;
        const uint8_t *start = c->p;
        ICD_TRY(grow(c, a, &v, &cap, n, n + (size_t)count, sizeof(int32_t), err));
        for (int64_t i = 0; i < count; i++) {
            int64_t x;
            ICD_TRY(read_intlike(it, c, &x, err));
            ((int32_t *)v)[n++] = (int32_t)x;
        }
        ICD_TRY(icd_avro_check_block_size(c, start, bytes, err));
    }
    e->has_eq = true;
    e->eq = v;
    e->neq = n;
    return 0;
}

static int read_stats(const mstep *st, icd_avro_cursor *c, icd_arena *a, ice_raw_stats *out,
                      icd_error *err)
{
    const icd_avro_schema *it = st->t.vs->items;
    void *v = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        int64_t count, bytes;
        ICD_TRY(icd_avro_read_block_count(c, it->min_size, &count, &bytes, err));
        if (count == 0) break;
        const uint8_t *start = c->p;
        ICD_TRY(grow(c, a, &v, &cap, n, n + (size_t)count, sizeof(ice_raw_kv), err));
        for (int64_t i = 0; i < count; i++) {
            ice_raw_kv *kv = (ice_raw_kv *)v + n++;
            memset(kv, 0, sizeof *kv);
            for (int f = 0; f < 2; f++) {
                if (f == st->key_idx) {
                    if (st->key_int) {
                        int32_t k = 0;
                        ICD_TRY(icd_avro_read_int_q(c, &k, err));
                        kv->id = k;
                    } else {
                        int64_t k;
                        ICD_TRY(icd_avro_read_long_q(c, &k, err));
                        kv->id = (int32_t)k;
                    }
                    continue;
                }
                bool present;
                ICD_TRY(read_present(&st->val, c, &present, err));
                kv->null = !present;
                if (!present) continue;
                if (is_intlike(st->val.vs))
                    ICD_TRY(read_intlike(st->val.vs, c, &kv->i64, err));
                else
                    ICD_TRY(read_stringlike(st->val.vs, c, &kv->ptr, &kv->len, err));
            }
        }
        ICD_TRY(icd_avro_check_block_size(c, start, bytes, err));
    }
    out->present = true;
    out->kv = v;
    out->n = n;
    return 0;
}

static int read_partition(const ice_mfast *m, icd_avro_cursor *c, icd_arena *a, ice_raw_entry *e,
                          icd_error *err)
{
    /* the record's values, then the spec's (one allocation) */
    ice_literal *lit = NULL;
    if (m->npf + m->nspec) {
        lit = icd_arena_alloc(a, (m->npf + m->nspec) * sizeof *lit);
        if (!lit) return icd_fail_nomem(err);
    }
    for (size_t j = 0; j < m->npf; j++) {
        const pstep *ps = &m->pf[j];
        bool present;
        ICD_TRY(read_present(&ps->t, c, &present, err));
        if (!present) {
            lit[j] = ice_lit_null(ps->null_kind);
            continue;
        }
        const icd_avro_schema *v = ps->t.vs;
        switch (v->type) {
        case AVRO_BOOLEAN: {
            bool b;
            ICD_TRY(icd_avro_read_boolean(c, &b, err));
            lit[j] = ice_lit_bool(b);
            break;
        }
        case AVRO_INT: {
            int32_t x = 0;
            ICD_TRY(icd_avro_read_int_q(c, &x, err));
            lit[j] = ice_lit_i32(ps->kind, x);
            break;
        }
        case AVRO_LONG: {
            int64_t x;
            ICD_TRY(icd_avro_read_long_q(c, &x, err));
            lit[j] = ice_lit_i64(ps->kind, ps->millis ? (int64_t)((uint64_t)x * 1000u) : x);
            break;
        }
        case AVRO_FLOAT: {
            ICD_TRY(icd_avro_need(c, 4, "float", err));
            uint32_t bits = icd_load_le32(c->p);
            float f;
            memcpy(&f, &bits, 4);
            c->p += 4;
            lit[j] = ice_lit_float(f);
            break;
        }
        case AVRO_DOUBLE: {
            ICD_TRY(icd_avro_need(c, 8, "double", err));
            uint64_t bits = icd_load_le64(c->p);
            double d;
            memcpy(&d, &bits, 8);
            c->p += 8;
            lit[j] = ice_lit_double(d);
            break;
        }
        case AVRO_STRING:
        case AVRO_BYTES:
        case AVRO_FIXED: {
            const uint8_t *p;
            size_t n;
            ICD_TRY(read_stringlike(v, c, &p, &n, err));
            lit[j] = ice_lit_bytes(ps->kind, p, n);
            if (ps->kind == ICE_T_DECIMAL) lit[j].scale = ps->scale;
            break;
        }
        default: /* AVRO_NULL */
            lit[j] = ice_lit_null(ice_avro_partition_kind(v));
            break;
        }
    }
    ice_literal *vals = m->nspec ? lit + m->npf : NULL;
    for (size_t i = 0; i < m->nspec; i++) {
        if (m->spec_idx[i] >= 0)
            vals[i] = lit[m->spec_idx[i]];
        else
            memset(&vals[i], 0, sizeof vals[i]);
    }
    e->has_partition = true;
    e->pvals = vals;
    return 0;
}

/* The end of the varint at p, or NULL when it is not a well-formed one before `end`. */
static inline const uint8_t *varint_skip(const uint8_t *p, const uint8_t *end)
{
    if (end - p >= ICD_VARINT_MAX) {
        for (int i = 0; i < ICD_VARINT_MAX - 1; i++)
            if (!(p[i] & 0x80)) return p + i + 1;
        return p[ICD_VARINT_MAX - 1] <= 1 ? p + ICD_VARINT_MAX : NULL;
    }
    for (int i = 0; i < ICD_VARINT_MAX && p + i < end; i++)
        if (!(p[i] & 0x80)) return i == ICD_VARINT_MAX - 1 && p[i] > 1 ? NULL : p + i + 1;
    return NULL;
}

/* The end of `n` varints at p, eight bytes at a time: the ends are the bytes without the
 * high bit, and the varints that end in a word (p starts one) are whole and at most 8
 * bytes long, so well-formed. Either the n-th end is in the word (the run ends after it)
 * or the word's ends are all taken (on from after the last one); a word without an end
 * (a varint of 9 or 10 bytes, or a bad one) is read the careful way. NULL when a varint
 * is not well-formed before `end`. */
static inline const uint8_t *varints_skip(const uint8_t *p, const uint8_t *end, uint64_t n)
{
    while (n) {
        if (end - p >= 8) {
            uint64_t ends = ~icd_load_le64(p) & 0x8080808080808080ull;
            if (ends) {
                uint64_t k = ((ends >> 7) * 0x0101010101010101ull) >> 56; /* (the bytes' sum) */
                if (k >= n) {
                    for (uint64_t j = 1; j < n; j++) /* (the n-th lowest end) */
                        ends &= ends - 1;
                    return p + __builtin_ctzll(ends) / 8 + 1;
                }
                n -= k;
                p += (63 - __builtin_clzll(ends)) / 8 + 1;
                continue;
            }
        }
        if (!(p = varint_skip(p, end))) return NULL;
        n--;
    }
    return p;
}

/* One flat value (its skip steps) at p: its end, or NULL when a check does not pass. A
 * varint of one byte (field ids, short lengths) is taken without varint_skip's loop. */
static inline const uint8_t *flat_skip(const mstep *st, const uint8_t *p, const uint8_t *end)
{
    for (int k = 0; k < st->nops; k++) {
        if (p >= end) return NULL;
        if (st->ops[k] == AVRO_SKIP_VARINT) {
            if (*p < 0x80)
                p++;
            else if (!(p = varint_skip(p, end)))
                return NULL;
            continue;
        }
        /* a length (a zigzag varint, even: >= 0), then the bytes */
        const uint8_t *q = p + 1;
        uint64_t z = *p;
        if (z >= 0x80) {
            if (!(q = varint_skip(p, end))) return NULL;
            z = 0;
            for (const uint8_t *b = q; b-- > p;)
                z = z << 7 | (*b & 0x7f);
        }
        if ((z & 1) || (z >> 1) > (uint64_t)(end - q)) return NULL;
        p = q + (z >> 1);
    }
    return p;
}

/* OP_SKIP_FLAT at p: where the field ends, or NULL when the quick checks do not pass (the
 * caller then skips it the careful way, which says what is wrong). */
static const uint8_t *skip_flat_field(const mstep *st, const uint8_t *p, const uint8_t *end)
{
    if (st->t.is_union) {
        if (p >= end) return NULL;
        if (*p == st->t.null_byte) return p + 1;
        if (*p++ != st->t.val_byte) return NULL;
    }
    if (!st->array) return flat_skip(st, p, end);
    for (;;) {
        if (p >= end || (*p & 0x81)) return NULL; /* (sized blocks, long counts: careful way) */
        uint64_t count = *p++ >> 1;
        if (count == 0) return p;
        if (count > (uint64_t)(end - p) / st->item_min) return NULL;
        if (st->all_varints) {
            p = varints_skip(p, end, count * st->nops); /* (<= the bytes left) */
            if (!p) return NULL;
            continue;
        }
        for (uint64_t i = 0; i < count && p; i++)
            p = flat_skip(st, p, end);
        if (!p) return NULL;
    }
}

static int run(const ice_mfast *m, const mprog *p, icd_avro_cursor *c, icd_arena *a,
               ice_raw_entry *e, icd_error *err)
{
    /* (the op read once into a local: stores through the cursor and the entry could
     * otherwise be taken to change it, and it would be read again) */
    for (const mstep *st = p->steps, *stop = p->steps + p->n; st < stop; st++) {
        unsigned op = st->op;
        if (op == OP_SKIP_FLAT) {
            const uint8_t *q = skip_flat_field(st, c->p, c->end);
            if (q) {
                c->p = q;
                continue;
            }
            /* (fall through to the careful way) */
        }
        if (op <= OP_STEP_OVER) {
            ICD_TRY(icd_avro_skip_at(st->t.type, c, st->depth, err));
            continue;
        }
        bool present;
        ICD_TRY(read_present(&st->t, c, &present, err));
        if (!present) continue;
        const icd_avro_schema *v = st->t.vs;
        switch (op) {
        case OP_LONG:
            ICD_TRY(read_intlike(v, c, &e->v[st->slot], err));
            e->has[st->slot] = true;
            break;
        case OP_BYTES: {
            const uint8_t *q;
            size_t n;
            ICD_TRY(read_stringlike(v, c, &q, &n, err));
            if (st->slot == 0) {
                e->has_path = true;
                e->path = q;
                e->path_len = n;
            } else {
                e->has_ref = true;
                e->ref = q;
                e->ref_len = n;
            }
            break;
        }
        case OP_FORMAT:
            if (v->type == AVRO_ENUM) {
                int64_t sym;
                ICD_TRY(icd_avro_read_enum(v, c, &sym, err));
                e->format = st->sym_format[sym];
            } else {
                const uint8_t *q;
                size_t n;
                ICD_TRY(read_stringlike(v, c, &q, &n, err));
                e->format = ice_file_format_from_name((const char *)q, n);
            }
            break;
        case OP_DATA_FILE:
            ICD_TRY(run(m, &m->df, c, a, e, err));
            e->has_data_file = true;
            break;
        case OP_PARTITION:
            ICD_TRY(read_partition(m, c, a, e, err));
            break;
        case OP_EQ:
            ICD_TRY(read_eq(v, c, a, e, err));
            break;
        default: /* OP_STATS */
            ICD_TRY(read_stats(st, c, a, &e->stats[st->slot], err));
            break;
        }
    }
    return 0;
}

int ice_mfast_decode(const ice_mfast *m, icd_avro_cursor *c, icd_arena *scratch, ice_raw_entry *e,
                     icd_error *err)
{
    /* (only what says whether a value is there: a value is read only when it is) */
    memset(e->has, 0, sizeof e->has);
    e->has_data_file = e->has_path = e->has_ref = e->has_partition = e->has_eq = false;
    e->format = ICE_FORMAT_UNKNOWN;
    for (int w = 0; w < 5; w++)
        e->stats[w].present = false;
    return run(m, &m->top, c, scratch, e, err);
}
