/*
 * ice_eq_set over the compact equality-delete index (deletes/eq_index.h, see eq_set.h):
 * the loader's keys go into an index builder; ice_eq_set_finish builds the index (hash
 * partitions, fixed-width inline table, interned keys, Bloom filter) once the file is
 * read, and the probes use it from any number of threads.
 */
#include "iceberg/deletes/eq_set.h"

#include <stdlib.h>

#include "iceberg/deletes/eq_index.h"

struct ice_eq_set {
    ice_eq_builder *b; /* until ice_eq_set_finish */
    ice_eq_index *ix;  /* after it */
    bool built;        /* ice_eq_set_build ran; its result is build_rc / build_err */
    int build_rc;
    icd_error build_err;
};

int ice_eq_set_new(ice_eq_set **out, size_t expected, icd_error *err)
{
    *out = NULL;
    ice_eq_set *s = calloc(1, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    int rc = ice_eq_builder_new(&s->b, expected, err);
    if (rc) {
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void ice_eq_set_free(ice_eq_set *s)
{
    if (!s) return;
    ice_eq_builder_free(s->b);
    ice_eq_index_free(s->ix);
    free(s);
}

int ice_eq_set_add(ice_eq_set *s, const void *key, size_t len, icd_error *err)
{
    if (!s->b) return icd_fail(err, ICD_EINTERNAL, NULL, -1, "equality key added after finish");
    return ice_eq_builder_add(s->b, key, len, err);
}

int ice_eq_set_merge(ice_eq_set *into, ice_eq_set *from, icd_error *err)
{
    int rc = 0;
    if (!into->b || !from->b) {
        rc = icd_fail(err, ICD_EINTERNAL, NULL, -1, "equality key sets merged after finish");
    } else {
        rc = ice_eq_builder_merge(into->b, from->b, err);
        if (!rc) from->b = NULL; /* (freed by the merge) */
    }
    ice_eq_set_free(from);
    return rc;
}

void ice_eq_set_seal(ice_eq_set *s)
{
    if (s->b) ice_eq_builder_seal(s->b);
}

void ice_eq_set_help(ice_eq_set *s)
{
    if (s->b) ice_eq_builder_help(s->b);
}

int ice_eq_set_build(ice_eq_set *s, icd_error *err)
{
    if (s->b && !s->built) {
        icd_error_clear(&s->build_err);
        s->build_rc = ice_eq_builder_finish(s->b, &s->ix, &s->build_err);
        s->built = true;
    }
    if (s->build_rc) *err = s->build_err;
    return s->build_rc;
}

int ice_eq_set_finish(ice_eq_set *s, icd_error *err)
{
    if (!s->b) return 0;
    int rc = ice_eq_set_build(s, err);
    ice_eq_builder_free(s->b);
    s->b = NULL;
    return rc;
}

size_t ice_eq_set_count(const ice_eq_set *s)
{
    return s->ix ? ice_eq_index_count(s->ix) : 0;
}

bool ice_eq_set_contains(const ice_eq_set *s, const void *key, size_t len)
{
    return s->ix && ice_eq_index_contains(s->ix, key, len, ice_eq_hash(key, len));
}

size_t ice_eq_set_remove_batch(const ice_eq_set *s, const uint8_t *keys, const uint32_t *offs,
                               size_t n, uint8_t *sel)
{
    return s->ix ? ice_eq_index_remove_batch(s->ix, keys, offs, n, sel) : 0;
}
