/*
 * The Parquet schema as a tree. The footer stores the schema as a flat depth-first list
 * of SchemaElements; pq_schema_build turns it into nodes with parent/children links, the
 * definition/repetition levels of every node, the leaf (column) numbering, and the
 * LIST/MAP interpretation of groups following the backward-compatibility rules of the
 * Parquet LogicalTypes.md (2-level lists, repeated fields without annotation,
 * MAP_KEY_VALUE, misnamed key/value fields).
 */
#ifndef ICD_PQ_SCHEMA_H
#define ICD_PQ_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"
#include "formats/parquet/metadata.h"

typedef enum pq_node_kind {
    PQ_NODE_PRIMITIVE = 0,
    PQ_NODE_STRUCT = 1, /* a group read as an object (also malformed LIST/MAP groups) */
    PQ_NODE_LIST = 2,   /* LIST-annotated group: elements from `repeated` / `element` */
    PQ_NODE_MAP = 3     /* MAP-annotated group: entries from `repeated` / `key` / `value` */
} pq_node_kind;

/* Deepest nesting accepted (also bounds recursion in record assembly). */
#define PQ_SCHEMA_MAX_DEPTH 64

typedef struct pq_node pq_node;
struct pq_node {
    const pq_schema_element *elem;
    const char *name;
    bool has_field_id;
    int32_t field_id;
    int repetition; /* pq_repetition; the root counts as REQUIRED */
    int kind;       /* pq_node_kind */

    /* Primitive type (leaves). */
    int physical_type; /* pq_type, -1 for groups */
    int32_t type_length;
    int converted;           /* pq_converted as stored */
    pq_logical_type logical; /* as stored */
    /* The effective annotation: the logical type, or the converted type mapped to its
     * logical equivalent when there is no logical type (TIMESTAMP_MILLIS -> TIMESTAMP(MILLIS,
     * adjusted to UTC), UINT_8 -> INTEGER(8, unsigned), DECIMAL with scale/precision from
     * the element, ...). kind PQ_LT_NONE when neither says anything usable. */
    pq_logical_type eff;

    pq_node *parent;
    pq_node **children;
    uint32_t num_children;
    int depth; /* root = 0 */

    /* Definition level of this node when it is present (number of OPTIONAL or REPEATED
     * nodes from the root down to and including this one), and its repetition level
     * (number of REPEATED nodes down to and including this one). */
    int def_level;
    int rep_level;

    /* LIST: `repeated` is the repeated child; `element` is the node whose values are the
     * list elements: the repeated child itself (legacy 2-level forms: its value, taken as
     * required) or its only child (standard 3-level form). `element_is_repeated` tells
     * which. MAP: `repeated` is the key/value group, `key` its first child, `value` its
     * second child or NULL (a map without values). */
    pq_node *repeated;
    pq_node *element;
    bool element_is_repeated;
    pq_node *key, *value;

    /* Leaves (columns) under this node: [first_leaf, first_leaf + num_leaves). */
    int first_leaf, num_leaves;
    int leaf_index; /* column index for leaves, -1 for groups */
    /* Path from the root (root excluded); path_len 0 for the root. */
    const char **path;
    uint32_t path_len;
    const char *dotted; /* path joined with '.' */
};

typedef struct pq_schema {
    pq_node *root;
    pq_node *nodes; /* all nodes, in schema-element order */
    uint32_t num_nodes;
    pq_node **leaves;
    uint32_t num_leaves;
    int max_depth;
} pq_schema;

/* Builds the tree from the footer's schema list (arena-allocated). Fails with ICD_ECORRUPT
 * when num_children does not match the list, a leaf has no valid type, etc. */
int pq_schema_build(const pq_file_meta *m, icd_arena *a, pq_schema *out, const char *location,
                    icd_error *err);

/* Lookups: by dotted path ("a.b.c", exact, case-sensitive) over all nodes; by field id. */
pq_node *pq_schema_find_path(const pq_schema *s, const char *dotted);
pq_node *pq_schema_find_field_id(const pq_schema *s, int32_t field_id);

const char *pq_repetition_name(int repetition);

#endif
