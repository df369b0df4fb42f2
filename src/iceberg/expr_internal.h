/*
 * Helpers shared by the expression files (expr_bind.c, expr_project.c, expr_eval.c);
 * not part of the library's interface.
 */
#ifndef ICD_ICE_EXPR_INTERNAL_H
#define ICD_ICE_EXPR_INTERNAL_H

#include "iceberg/expr.h"

/* A zeroed node (pos -1) in `a`, or NULL when out of memory. */
ice_bound_expr *ice_bound_node(icd_arena *a, ice_expr_op op);
/* and/or with constant folding (TRUE/FALSE absorb or vanish); NULL when out of memory. */
const ice_bound_expr *ice_bound_combine(icd_arena *a, ice_expr_op op, const ice_bound_expr *l,
                                        const ice_bound_expr *r);

#endif
