/*
 * libFuzzer target: the position-delete loader shared by the Parquet, ORC and Avro delete
 * readers (deletes/delete_cache.c ice_rd_posload_*: manifest-entry bounds of file_path and pos, the
 * spec's (file_path, pos) order, null file_paths, record and null counts, then the
 * position sets per data file) and the equality-key bound check, on decoded records
 * taken from arbitrary bytes:
 *
 *   byte 0        flags: bit 0/1 file_path lower/upper bound present, bit 2/3 pos bounds,
 *                 bit 4 record_count recorded, bit 5 null count of file_path recorded
 *   then          bounds: [len][bytes] for each present file_path bound, 8 bytes LE for
 *                 each pos bound; 2 bytes record_count, 1 byte null count when flagged
 *   then records  [len][path bytes][8 bytes pos LE], len 0xff = a null file_path
 *
 * Errors are expected; any crash, leak or sanitizer report is a bug.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/deletes/delete_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct cursor {
    const uint8_t *p;
    size_t n;
} cursor;

static bool take(cursor *c, size_t k, const uint8_t **out)
{
    if (c->n < k) return false;
    *out = c->p;
    c->p += k;
    c->n -= k;
    return true;
}

static int64_t le64(const uint8_t *p)
{
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | p[i];
    return (int64_t)u;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cursor c = {data, size};
    const uint8_t *b;
    if (!take(&c, 1, &b)) return 0;
    uint8_t flags = b[0];
    ice_col_stats st[2];
    memset(st, 0, sizeof st);
    st[0].field_id = ICE_FIELD_DELETE_POS; /* sorted by field id */
    st[1].field_id = ICE_FIELD_DELETE_FILE_PATH;
    st[0].null_count = st[1].null_count = -1;
    for (int k = 0; k < 2; k++) {
        if (!(flags & (1u << k))) continue;
        const uint8_t *lp, *v;
        if (!take(&c, 1, &lp) || !take(&c, lp[0], &v)) return 0;
        if (k == 0) {
            st[1].lower = v;
            st[1].lower_len = lp[0];
            st[1].has_lower = true;
        } else {
            st[1].upper = v;
            st[1].upper_len = lp[0];
            st[1].has_upper = true;
        }
    }
    for (int k = 0; k < 2; k++) {
        if (!(flags & (4u << k))) continue;
        if (!take(&c, 8, &b)) return 0;
        if (k == 0) {
            st[0].lower = b;
            st[0].lower_len = 8;
            st[0].has_lower = true;
        } else {
            st[0].upper = b;
            st[0].upper_len = 8;
            st[0].has_upper = true;
        }
    }
    ice_content_file df;
    memset(&df, 0, sizeof df);
    df.content = ICE_CONTENT_POSITION_DELETES;
    df.path = "fuzz-deletes";
    df.record_count = -1;
    df.stats = st;
    df.nstats = 2;
    if (flags & 16) {
        if (!take(&c, 2, &b)) return 0;
        df.record_count = b[0] | b[1] << 8;
    }
    if (flags & 32) {
        if (!take(&c, 1, &b)) return 0;
        st[1].null_count = b[0];
    }
    cache_entry *ep = calloc(1, sizeof *ep);
    if (!ep) return 0;
    cache_entry e = *ep; /* filled on the stack, handed back to be freed */
    icd_error err;
    ice_rd_posload pl;
    int rc = ice_rd_posload_init(&pl, &e, &df, &err);
    for (int64_t row = 0; !rc && c.n > 0; row++) {
        const uint8_t *lp, *path, *pos;
        if (!take(&c, 1, &lp)) break;
        if (lp[0] == 0xff) {
            ice_rd_posload_null_path(&pl);
            continue;
        }
        if (!take(&c, lp[0], &path) || !take(&c, 8, &pos)) break;
        rc = ice_rd_posload_add(&pl, path, lp[0], le64(pos), row, &err);
    }
    if (!rc) rc = ice_rd_posload_finish(&pl, &err);
    ice_rd_posload_free(&pl);
    /* the equality-key bound check on the same bounds, as a string and a long key */
    int32_t ids[1] = {ICE_FIELD_DELETE_FILE_PATH};
    df.content = ICE_CONTENT_EQUALITY_DELETES;
    df.equality_ids = ids;
    df.nequality_ids = 1;
    int64_t nulls[1] = {0};
    ice_tvalue tv = {.cls = ICE_TV_STRING, .p = data, .n = size < 64 ? size : 64};
    (void)ice_rd_check_key_bounds(&df, 0, &tv, 0, nulls, &err);
    ids[0] = ICE_FIELD_DELETE_POS;
    tv.cls = ICE_TV_INT;
    tv.i = size >= 8 ? le64(data + size - 8) : 0;
    (void)ice_rd_check_key_bounds(&df, 0, &tv, 0, nulls, &err);
    /* every data file's set is found again by its path (sorted order kept) */
    for (size_t i = 0; i < e.nposset; i++) {
        size_t o = e.path_off[i];
        if (ice_delete_entry_positions(&e, e.paths.data + o, e.path_off[i + 1] - o) != e.possets[i])
            abort();
    }
    *ep = e;
    ice_delete_entry_free(ep);
    return 0;
}
