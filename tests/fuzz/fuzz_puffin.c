/*
 * libFuzzer target for Puffin and deletion vectors. The input is tried two ways:
 *   1. as a whole Puffin file in memory: footer (plain or LZ4), then every blob — DV blobs
 *      are decoded (CRC mismatches tolerated, so the fuzzer reaches the Roaring layout),
 *      lz4/zstd blobs are decompressed;
 *   2. as one deletion-vector blob on its own (the manifest offset/length path).
 * Any decoded set is exercised (cardinality, apply, list) and checked for consistency;
 * an inconsistency traps. Seeds: tests/fuzz/corpus/fuzz_puffin (gen_puffin_seeds.py).
 */
#include <stdlib.h>
#include <string.h>

#include "iceberg/deletes/dv.h"
#include "iceberg/deletes/puffin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(ice_posset *s, const ice_dv_info *info)
{
    if (ice_posset_cardinality(s) != info->cardinality) __builtin_trap();
    uint64_t first[4];
    size_t n = ice_posset_list(s, 0, first, 4);
    if (n != (info->cardinality < 4 ? info->cardinality : 4)) __builtin_trap();
    uint8_t sel[512];
    uint64_t start = n ? first[0] : 0;
    memset(sel, 1, sizeof sel);
    size_t del = ice_posset_apply(s, start, sizeof sel, sel);
    size_t zeros = 0;
    for (size_t i = 0; i < sizeof sel; i++)
        zeros += sel[i] == 0;
    if (del != zeros || del != ice_posset_count_range(s, start, start + sizeof sel))
        __builtin_trap();
    if (n && (!del || !ice_posset_contains(s, first[0]))) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icd_error err;
    ice_puffin *p;
    if (ice_puffin_open_buffer(data, size, "fuzz.puffin", &p, &err) == 0) {
        for (size_t i = 0; i < p->nblobs; i++) {
            const ice_puffin_blob *b = &p->blobs[i];
            if (!strcmp(b->type, ICE_PUFFIN_BLOB_DV)) {
                ice_posset *s;
                ice_dv_info info;
                if (ice_dv_read_blob(p, b, NULL, -1, ICE_DV_SKIP_CRC, &s, &info, &err) == 0) {
                    exercise(s, &info);
                    ice_posset_free(s);
                }
            } else {
                uint8_t *out;
                size_t len;
                if (ice_puffin_read_blob(p, b, 1 << 20, &out, &len, &err) == 0) free(out);
            }
        }
        ice_puffin_close(p);
    }
    ice_posset *s;
    ice_dv_info info;
    if (ice_dv_decode(data, size, "fuzz.dv", 0, -1, ICE_DV_SKIP_CRC, &s, &info, &err) == 0) {
        exercise(s, &info);
        ice_posset_free(s);
    }
    return 0;
}
