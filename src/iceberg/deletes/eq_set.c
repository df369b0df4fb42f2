/*
 * ice_eq_set over the hash map of base/hash.h (see eq_set.h).
 */
#include "iceberg/deletes/eq_set.h"

#include <stdlib.h>

#include "base/hash.h"

struct ice_eq_set {
    icd_map *map;
};

int ice_eq_set_new(ice_eq_set **out, size_t expected, icd_error *err)
{
    *out = NULL;
    ice_eq_set *s = calloc(1, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    int rc = icd_map_new(&s->map, expected ? expected : 16, err);
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
    icd_map_free(s->map);
    free(s);
}

int ice_eq_set_add(ice_eq_set *s, const void *key, size_t len, icd_error *err)
{
    uint64_t *slot;
    return icd_map_upsert(s->map, key, len, icd_hash_bytes(key, len), &slot, NULL, err);
}

size_t ice_eq_set_count(const ice_eq_set *s)
{
    return icd_map_count(s->map);
}

bool ice_eq_set_contains(const ice_eq_set *s, const void *key, size_t len)
{
    return icd_map_contains(s->map, key, len, icd_hash_bytes(key, len));
}

size_t ice_eq_set_remove_batch(const ice_eq_set *s, const uint8_t *keys, const uint32_t *offs,
                               size_t n, uint8_t *sel)
{
    size_t removed = 0;
    for (size_t i = 0; i < n; i++) {
        if (!sel[i]) continue;
        if (ice_eq_set_contains(s, keys + offs[i], offs[i + 1] - offs[i])) {
            sel[i] = 0;
            removed++;
        }
    }
    return removed;
}
