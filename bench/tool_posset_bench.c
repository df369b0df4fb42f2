/*
 * Micro-benchmark of the delete hot paths of one data file:
 *   - ice_posset_apply / ice_posset_apply_bits over 4096-row batches at 0%, 1%, 10% and
 *     100% deleted rows (rows/s),
 *   - building a set from sorted positions (the position-delete-file path, positions/s),
 *   - deletion-vector decode (ice_dv_decode, MB/s of blob) for sparse, 10% and run DVs.
 * Usage: tool_posset_bench [ROWS]   (default 50,000,000 rows)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "base/buf.h"
#include "iceberg/deletes/dv.h"
#include "iceberg/deletes/posset.h"

#define BATCH 4096

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static volatile size_t sink;

static void bench_apply1(const char *label, const ice_posset *s, uint64_t rows);

/* Measures the building form (CRoaring) and the frozen form (what the reader queries). */
static void bench_apply(const char *label, ice_posset *s, uint64_t rows)
{
    char l[64];
    snprintf(l, sizeof l, "%s, building", label);
    bench_apply1(l, s, rows);
    icd_error err;
    if (ice_posset_freeze(s, &err)) {
        fprintf(stderr, "freeze failed: %s\n", err.message);
        exit(1);
    }
    snprintf(l, sizeof l, "%s, frozen", label);
    bench_apply1(l, s, rows);
}

static void bench_apply1(const char *label, const ice_posset *s, uint64_t rows)
{
    uint8_t sel[BATCH];
    uint64_t words[BATCH / 64];
    double best = 1e30, bestb = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        size_t del = 0;
        for (uint64_t first = 0; first < rows; first += BATCH) {
            memset(sel, 1, sizeof sel);
            del += ice_posset_apply(s, first, BATCH, sel);
        }
        double t1 = now();
        for (uint64_t first = 0; first < rows; first += BATCH) {
            memset(words, 0xff, sizeof words);
            del += ice_posset_apply_bits(s, first, BATCH, words);
        }
        double t2 = now();
        sink += del;
        if (t1 - t0 < best) best = t1 - t0;
        if (t2 - t1 < bestb) bestb = t2 - t1;
    }
    printf("apply %-38s %8.0f M rows/s (bytes)  %8.0f M rows/s (bits)\n", label,
           (double)rows / best / 1e6, (double)rows / bestb / 1e6);
}

/* Serializes a set as a DV blob with CRoaring (the way writers do). */
static void make_dv(icd_buf *out, roaring_bitmap_t *bm, int runs)
{
    if (runs)
        roaring_bitmap_run_optimize(bm);
    else
        roaring_bitmap_remove_run_compression(bm);
    size_t sz = roaring_bitmap_portable_size_in_bytes(bm);
    icd_buf_clear(out);
    icd_buf_append(out, "\0\0\0\0\xD1\xD3\x39\x64", 8);
    uint8_t head[12] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}; /* one bitmap, key 0 */
    icd_buf_append(out, head, 12);
    size_t at = out->len;
    icd_buf_grow(out, sz + 4);
    roaring_bitmap_portable_serialize(bm, out->data + at);
    out->len += sz;
    icd_buf_append(out, "\0\0\0\0", 4);
    uint8_t *p = (uint8_t *)out->data;
    size_t n = out->len;
    uint32_t len = (uint32_t)(n - 8), crc = (uint32_t)crc32(0, p + 4, (uInt)(n - 8));
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(len >> (24 - 8 * i));
        p[n - 4 + i] = (uint8_t)(crc >> (24 - 8 * i));
    }
}

static void bench_dv(const char *label, roaring_bitmap_t *bm, int runs)
{
    icd_buf blob = ICD_BUF_INIT;
    make_dv(&blob, bm, runs);
    icd_error err;
    int iters = 0;
    double t0 = now(), t1;
    do {
        ice_posset *s;
        if (ice_dv_decode((uint8_t *)blob.data, blob.len, "bench", 0, -1, 0, &s, NULL, &err)) {
            fprintf(stderr, "decode failed: %s\n", err.message);
            exit(1);
        }
        sink += (size_t)ice_posset_cardinality(s);
        ice_posset_free(s);
        iters++;
        t1 = now();
    } while (t1 - t0 < 1.0);
    double secs = (t1 - t0) / iters;
    printf("dv decode %-24s %10zu bytes %9llu positions %8.0f MB/s %8.1f M positions/s\n", label,
           blob.len, (unsigned long long)roaring_bitmap_get_cardinality(bm),
           (double)blob.len / secs / 1e6, (double)roaring_bitmap_get_cardinality(bm) / secs / 1e6);
    icd_buf_free(&blob);
}

int main(int argc, char **argv)
{
    uint64_t rows = argc > 1 ? strtoull(argv[1], NULL, 10) : 50000000ULL;
    rows = (rows + BATCH - 1) / BATCH * BATCH;
    icd_error err;
    printf("rows per run: %llu, batch %d\n", (unsigned long long)rows, BATCH);

    /* 0%: deletes exist, but none in the rows read. */
    ice_posset *none;
    ice_posset_new(&none, &err);
    ice_posset_add_range(none, rows + 10, rows + 1000, &err);
    bench_apply("0% deleted", none, rows);
    ice_posset_free(none);

    /* 1% and 10%: random positions, added sorted (the position-delete-file order). */
    int pct[2] = {1, 10};
    roaring_bitmap_t *ten = roaring_bitmap_create();
    for (int k = 0; k < 2; k++) {
        size_t cap = (size_t)(rows / 100 * (uint64_t)pct[k] * 2 + 16), n = 0;
        uint64_t *pos = malloc(cap * sizeof *pos);
        for (uint64_t r = 0; r < rows; r++)
            if (rnd() % 100 < (uint64_t)pct[k] && n < cap) pos[n++] = r;
        ice_posset *s;
        ice_posset_new(&s, &err);
        double t0 = now();
        ice_posset_add_many(s, pos, n, &err);
        double t1 = now();
        printf("build from %zu sorted positions: %.0f M positions/s\n", n,
               (double)n / (t1 - t0) / 1e6);
        char label[32];
        snprintf(label, sizeof label, "%d%% deleted (random)", pct[k]);
        bench_apply(label, s, rows);
        if (pct[k] == 10 && rows <= UINT32_MAX)
            for (size_t i = 0; i < n; i++)
                roaring_bitmap_add(ten, (uint32_t)pos[i]);
        ice_posset_free(s);
        free(pos);
    }

    /* 100%: as one range (run containers) and as every position added (bitmaps). */
    ice_posset *all;
    ice_posset_new(&all, &err);
    ice_posset_add_range(all, 0, rows, &err);
    bench_apply("100% deleted (range)", all, rows);
    ice_posset_free(all);

    /* Deletion-vector decode. */
    if (rows <= UINT32_MAX) {
        roaring_bitmap_t *sparse = roaring_bitmap_create();
        for (uint64_t r = 0; r < rows; r += 1000)
            roaring_bitmap_add(sparse, (uint32_t)(r + rnd() % 1000));
        bench_dv("0.1% (array)", sparse, 0);
        bench_dv("10% (bitmap)", ten, 0);
        roaring_bitmap_t *runs = roaring_bitmap_create();
        for (uint64_t r = 0; r + 5000 < rows; r += 100000)
            roaring_bitmap_add_range(runs, r, r + 5000);
        bench_dv("5% in runs (run)", runs, 1);
        roaring_bitmap_free(sparse);
        roaring_bitmap_free(runs);
    }
    roaring_bitmap_free(ten);
    return 0;
}
