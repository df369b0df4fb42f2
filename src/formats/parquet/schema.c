/*
 * Schema tree builder (see schema.h). Runs once per file after the footer is decoded; the
 * column reader takes each leaf's max definition/repetition level from here and the record
 * assembler (json.c) walks the tree to rebuild nested values.
 */
#include <string.h>

#include "formats/parquet/schema.h"

typedef struct builder {
    const pq_file_meta *m;
    icd_arena *a;
    pq_schema *s;
    uint32_t next; /* next schema element to consume */
    int leaves;
    const char *location;
    icd_error *err;
} builder;

static int corrupt(builder *b, const char *fmt, const char *name)
{
    return icd_fail(b->err, ICD_ECORRUPT, b->location, -1, fmt, name);
}

/* The converted type expressed as a logical type (LogicalTypes.md compatibility table). */
static pq_logical_type effective_type(const pq_schema_element *e)
{
    pq_logical_type lt = e->logical;
    if (lt.kind == PQ_LT_DECIMAL) return lt;
    if (lt.kind != PQ_LT_NONE) return lt;
    memset(&lt, 0, sizeof lt);
    switch (e->converted) {
    case PQ_CONV_UTF8:
        lt.kind = PQ_LT_STRING;
        break;
    case PQ_CONV_MAP:
        lt.kind = PQ_LT_MAP;
        break;
    case PQ_CONV_LIST:
        lt.kind = PQ_LT_LIST;
        break;
    case PQ_CONV_ENUM:
        lt.kind = PQ_LT_ENUM;
        break;
    case PQ_CONV_DECIMAL:
        lt.kind = PQ_LT_DECIMAL;
        lt.scale = e->has_scale ? e->scale : 0;
        lt.precision = e->has_precision ? e->precision : 0;
        break;
    case PQ_CONV_DATE:
        lt.kind = PQ_LT_DATE;
        break;
    case PQ_CONV_TIME_MILLIS:
    case PQ_CONV_TIME_MICROS:
        lt.kind = PQ_LT_TIME;
        lt.unit = e->converted == PQ_CONV_TIME_MILLIS ? PQ_UNIT_MILLIS : PQ_UNIT_MICROS;
        lt.utc = true;
        break;
    case PQ_CONV_TIMESTAMP_MILLIS:
    case PQ_CONV_TIMESTAMP_MICROS:
        lt.kind = PQ_LT_TIMESTAMP;
        lt.unit = e->converted == PQ_CONV_TIMESTAMP_MILLIS ? PQ_UNIT_MILLIS : PQ_UNIT_MICROS;
        lt.utc = true; /* legacy timestamps count as adjusted to UTC */
        break;
    case PQ_CONV_UINT_8:
    case PQ_CONV_UINT_16:
    case PQ_CONV_UINT_32:
    case PQ_CONV_UINT_64:
        lt.kind = PQ_LT_INTEGER;
        lt.bit_width = 8 << (e->converted - PQ_CONV_UINT_8);
        lt.is_signed = false;
        break;
    case PQ_CONV_INT_8:
    case PQ_CONV_INT_16:
    case PQ_CONV_INT_32:
    case PQ_CONV_INT_64:
        lt.kind = PQ_LT_INTEGER;
        lt.bit_width = 8 << (e->converted - PQ_CONV_INT_8);
        lt.is_signed = true;
        break;
    case PQ_CONV_JSON:
        lt.kind = PQ_LT_JSON;
        break;
    case PQ_CONV_BSON:
        lt.kind = PQ_LT_BSON;
        break;
    default:
        break; /* MAP_KEY_VALUE, INTERVAL, none: no logical meaning for values */
    }
    return lt;
}

static bool is_list_annotated(const pq_node *n)
{
    return n->eff.kind == PQ_LT_LIST;
}

static bool is_map_annotated(const pq_node *n)
{
    if (n->eff.kind == PQ_LT_MAP) return true;
    /* A MAP_KEY_VALUE group not inside a MAP-annotated group is read as a MAP. */
    return n->logical.kind == PQ_LT_NONE && n->converted == PQ_CONV_MAP_KEY_VALUE &&
           !(n->parent && is_map_annotated(n->parent));
}

/* Decides how a group is read: LIST and MAP shapes per the compatibility rules; anything
 * malformed falls back to a plain struct (its levels stay consistent either way). */
static void classify_group(pq_node *n)
{
    n->kind = PQ_NODE_STRUCT;
    if (n->num_children != 1) return;
    pq_node *r = n->children[0];
    if (r->repetition != PQ_REPEATED) return;
    if (is_list_annotated(n)) {
        n->kind = PQ_NODE_LIST;
        n->repeated = r;
        size_t nl = strlen(n->name);
        bool tuple_name = strlen(r->name) == nl + 6 && !strncmp(r->name, n->name, nl) &&
                          !strcmp(r->name + nl, "_tuple");
        if (r->physical_type >= 0                         /* rule 1 */
            || r->num_children > 1                        /* rule 2 */
            || r->children[0]->repetition == PQ_REPEATED  /* rule 3 */
            || !strcmp(r->name, "array") || tuple_name) { /* rule 4 */
            n->element = r;
            n->element_is_repeated = true;
        } else { /* rule 5: the standard 3-level form */
            n->element = r->children[0];
            n->element_is_repeated = false;
        }
    } else if (is_map_annotated(n)) {
        if (r->physical_type >= 0 || r->num_children < 1 || r->num_children > 2) return;
        n->kind = PQ_NODE_MAP;
        n->repeated = r;
        n->key = r->children[0];
        n->value = r->num_children == 2 ? r->children[1] : NULL;
    }
}

static int build_node(builder *b, pq_node *parent, pq_node **out)
{
    if (b->next >= b->m->num_schema)
        return icd_fail(b->err, ICD_ECORRUPT, b->location, -1,
                        "corrupt Parquet schema: num_children exceeds the schema list");
    uint32_t idx = b->next++;
    const pq_schema_element *e = &b->m->schema[idx];
    pq_node *n = &b->s->nodes[idx];
    n->elem = e;
    n->name = e->name.ptr ? e->name.ptr : "";
    n->has_field_id = e->has_field_id;
    n->field_id = e->field_id;
    n->parent = parent;
    n->depth = parent ? parent->depth + 1 : 0;
    n->converted = e->converted;
    n->logical = e->logical;
    n->eff = effective_type(e);
    n->leaf_index = -1;
    n->physical_type = -1;
    n->first_leaf = b->leaves;
    if (n->depth > PQ_SCHEMA_MAX_DEPTH)
        return icd_fail(b->err, ICD_EUNSUPPORTED, b->location, -1,
                        "Parquet schema nests deeper than %d levels", PQ_SCHEMA_MAX_DEPTH);
    if (b->s->max_depth < n->depth) b->s->max_depth = n->depth;

    if (!parent) {
        n->repetition = PQ_REQUIRED;
    } else if (!e->has_repetition) {
        return corrupt(b, "corrupt Parquet schema: field '%s' has no repetition type", n->name);
    } else if (e->repetition == 3) {
        return icd_fail(b->err, ICD_EUNSUPPORTED, b->location, -1,
                        "Parquet VECTOR repetition (field '%s') is not supported", n->name);
    } else if (e->repetition < 0 || e->repetition > 2) {
        return corrupt(b, "corrupt Parquet schema: field '%s' has an invalid repetition type",
                       n->name);
    } else {
        n->repetition = e->repetition;
    }
    n->def_level = (parent ? parent->def_level : 0) + (n->repetition != PQ_REQUIRED);
    n->rep_level = (parent ? parent->rep_level : 0) + (n->repetition == PQ_REPEATED);

    /* path */
    n->path_len = parent ? parent->path_len + 1 : 0;
    if (n->path_len) {
        n->path = icd_arena_alloc(b->a, n->path_len * sizeof *n->path);
        if (!n->path) return icd_fail_nomem(b->err);
        if (parent->path_len) memcpy(n->path, parent->path, parent->path_len * sizeof *n->path);
        n->path[n->path_len - 1] = n->name;
        size_t plen = parent->dotted && parent->path_len ? strlen(parent->dotted) + 1 : 0;
        char *d = icd_arena_alloc(b->a, plen + strlen(n->name) + 1);
        if (!d) return icd_fail_nomem(b->err);
        if (plen) {
            memcpy(d, parent->dotted, plen - 1);
            d[plen - 1] = '.';
        }
        strcpy(d + plen, n->name);
        n->dotted = d;
    } else {
        n->dotted = "";
    }

    bool group = !parent || !e->has_type || (e->has_num_children && e->num_children > 0);
    if (!group) {
        if (e->type < PQ_BOOLEAN || e->type > PQ_FIXED_LEN_BYTE_ARRAY)
            return corrupt(b, "corrupt Parquet schema: column '%s' has an invalid type", n->name);
        n->kind = PQ_NODE_PRIMITIVE;
        n->physical_type = e->type;
        n->type_length = e->has_type_length ? e->type_length : 0;
        if (e->type == PQ_FIXED_LEN_BYTE_ARRAY &&
            (n->type_length <= 0 || n->type_length > (1 << 24)))
            return corrupt(b,
                           "corrupt Parquet schema: FIXED_LEN_BYTE_ARRAY column '%s' has "
                           "an invalid type_length",
                           n->name);
        n->leaf_index = b->leaves++;
        n->num_leaves = 1;
        *out = n;
        return 0;
    }

    int32_t nc = e->has_num_children ? e->num_children : 0;
    if (nc < 0 || (uint32_t)nc > b->m->num_schema - b->next)
        return corrupt(b,
                       "corrupt Parquet schema: group '%s' claims more children than the "
                       "schema has",
                       n->name);
    if (nc == 0 && parent)
        return corrupt(b, "corrupt Parquet schema: group '%s' has no children", n->name);
    n->num_children = (uint32_t)nc;
    if (nc) {
        n->children = icd_arena_alloc(b->a, (size_t)nc * sizeof *n->children);
        if (!n->children) return icd_fail_nomem(b->err);
    }
    for (int32_t i = 0; i < nc; i++)
        ICD_TRY(build_node(b, n, &n->children[i]));
    n->num_leaves = b->leaves - n->first_leaf;
    if (parent)
        classify_group(n);
    else
        n->kind = PQ_NODE_STRUCT;
    *out = n;
    return 0;
}

static void collect_leaves(pq_schema *s)
{
    for (uint32_t i = 0; i < s->num_nodes; i++)
        if (s->nodes[i].leaf_index >= 0) s->leaves[s->nodes[i].leaf_index] = &s->nodes[i];
}

int pq_schema_build(const pq_file_meta *m, icd_arena *a, pq_schema *out, const char *location,
                    icd_error *err)
{
    memset(out, 0, sizeof *out);
    if (m->num_schema == 0)
        return icd_fail(err, ICD_ECORRUPT, location, -1, "corrupt Parquet schema: it is empty");
    out->nodes = icd_arena_calloc(a, m->num_schema * sizeof *out->nodes);
    if (!out->nodes) return icd_fail_nomem(err);
    out->num_nodes = m->num_schema;
    builder b = {m, a, out, 0, 0, location, err};
    ICD_TRY(build_node(&b, NULL, &out->root));
    if (b.next != m->num_schema)
        return icd_fail(err, ICD_ECORRUPT, location, -1,
                        "corrupt Parquet schema: %u elements listed but the tree uses %u",
                        m->num_schema, b.next);
    out->num_leaves = (uint32_t)b.leaves;
    if (out->num_leaves) {
        out->leaves = icd_arena_alloc(a, out->num_leaves * sizeof *out->leaves);
        if (!out->leaves) return icd_fail_nomem(err);
        collect_leaves(out);
    }
    return 0;
}

pq_node *pq_schema_find_path(const pq_schema *s, const char *dotted)
{
    for (uint32_t i = 1; i < s->num_nodes; i++)
        if (!strcmp(s->nodes[i].dotted, dotted)) return &s->nodes[i];
    return NULL;
}

pq_node *pq_schema_find_field_id(const pq_schema *s, int32_t field_id)
{
    for (uint32_t i = 1; i < s->num_nodes; i++)
        if (s->nodes[i].has_field_id && s->nodes[i].field_id == field_id) return &s->nodes[i];
    return NULL;
}

const char *pq_repetition_name(int r)
{
    return r == PQ_REQUIRED ? "REQUIRED" : r == PQ_OPTIONAL ? "OPTIONAL" : "REPEATED";
}
