/*
 * Randomized round trip of the Parquet writer (seeded, bounded: a few seconds). Each case
 * draws a random schema (INT32 / INT64 / DOUBLE / BOOLEAN / UTF8 / FIXED leaves, required
 * or optional, inside optional structs, 3-level lists and maps, up to 3 deep), random rows
 * (nulls, empty and null lists), random writer options (codec, page size in entries,
 * dictionary limit, row-group budget, PLAIN only) and random batch sizes; then checks:
 *   - our reader gives back exactly the definition levels, repetition levels and values
 *     of every leaf, and the row count;
 *   - writing the same input again gives the same bytes.
 * With an argument (a directory) it also leaves every file there with its rows as
 * NDJSON (rand_N.parquet, rand_N.json), for the independent readers
 * (tests/corpus/test_pq_writer_random.sh: DuckDB and hyparquet must read every file and
 * give those rows).
 */
#include <stdlib.h>

#include "base/arena.h"
#include "base/buf.h"
#include "formats/parquet/parquet.h"
#include "formats/parquet/writer.h"
#include "io/memfile.h"
#include "test.h"

static uint64_t rng;
static uint32_t rnd(uint32_t n) /* 0..n-1 */
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)((rng >> 33) % (n ? n : 1));
}

enum { G_PRIM, G_STRUCT, G_LIST, G_MAP };

typedef struct gnode {
    int kind, type, rep; /* type: pq_type for G_PRIM */
    int rep_level;
    int first_leaf, nleaves;
    char name[16];
    struct gnode *kids[4]; /* struct children; list: [repeated group's element]; map: key, value */
    int nkids;
} gnode;

#define MAX_NODES 64
#define MAX_LEAVES 32
static gnode nodes[MAX_NODES];
static int nnodes, nleaves;
static pq_schema_element els[MAX_NODES * 2];
static int nels;

typedef struct leafdata {
    int type;
    uint32_t *def, *rep;
    size_t n, cap;
    icd_buf vals; /* fixed width values, or bytes of byte arrays */
    uint32_t *lens;
    size_t nvals, cap_lens;
} leafdata;
static leafdata leaves[MAX_LEAVES];

static pq_schema_element *el(const char *name, int rep, int children)
{
    pq_schema_element *e = &els[nels++];
    memset(e, 0, sizeof *e);
    e->name.ptr = name;
    e->name.len = (uint32_t)strlen(name);
    e->has_repetition = rep >= 0;
    e->repetition = rep;
    e->converted = PQ_CONV_NONE;
    if (children) {
        e->has_num_children = true;
        e->num_children = children;
    }
    return e;
}

static const int prim_types[] = {PQ_INT32,   PQ_INT64,      PQ_DOUBLE,
                                 PQ_BOOLEAN, PQ_BYTE_ARRAY, PQ_FIXED_LEN_BYTE_ARRAY};

static gnode *gen_node(int depth, int parent_rep, const char *name, int rep)
{
    if (nnodes >= MAX_NODES - 4 || nleaves >= MAX_LEAVES - 4) depth = 9;
    gnode *g = &nodes[nnodes++];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    g->rep = rep >= 0 ? rep : rnd(3) ? PQ_OPTIONAL : PQ_REQUIRED;
    g->rep_level = parent_rep;
    uint32_t k = depth >= 3 ? 0 : rnd(10);
    g->kind = k < 6 ? G_PRIM : k < 8 ? G_STRUCT : k < 9 ? G_LIST : G_MAP;
    g->first_leaf = nleaves;
    if (g->kind == G_PRIM) {
        g->type = prim_types[rnd(6)];
        pq_schema_element *e = el(g->name, g->rep, 0);
        e->has_type = true;
        e->type = g->type;
        e->has_field_id = true;
        e->field_id = nnodes;
        if (g->type == PQ_BYTE_ARRAY) {
            e->converted = PQ_CONV_UTF8;
            e->logical.kind = PQ_LT_STRING;
        }
        if (g->type == PQ_FIXED_LEN_BYTE_ARRAY) {
            e->has_type_length = true;
            e->type_length = 3;
        }
        leaves[nleaves++].type = g->type;
    } else if (g->kind == G_STRUCT) {
        g->nkids = 1 + (int)rnd(3);
        el(g->name, g->rep, g->nkids);
        for (int i = 0; i < g->nkids; i++) {
            char n[16];
            snprintf(n, sizeof n, "f%d", i);
            g->kids[i] = gen_node(depth + 1, parent_rep, n, -1);
        }
    } else if (g->kind == G_LIST) {
        pq_schema_element *e = el(g->name, g->rep, 1);
        e->converted = PQ_CONV_LIST;
        e->logical.kind = PQ_LT_LIST;
        el("list", PQ_REPEATED, 1);
        g->nkids = 1;
        g->kids[0] = gen_node(depth + 1, parent_rep + 1, "element", -1);
    } else {
        pq_schema_element *e = el(g->name, g->rep, 1);
        e->converted = PQ_CONV_MAP;
        e->logical.kind = PQ_LT_MAP;
        el("key_value", PQ_REPEATED, 2);
        g->nkids = 2;
        gnode *key = &nodes[nnodes++];
        memset(key, 0, sizeof *key);
        snprintf(key->name, sizeof key->name, "key");
        key->kind = G_PRIM;
        key->type = PQ_BYTE_ARRAY;
        key->rep = PQ_REQUIRED;
        key->rep_level = parent_rep + 1;
        key->first_leaf = nleaves;
        key->nleaves = 1;
        pq_schema_element *ke = el("key", PQ_REQUIRED, 0);
        ke->has_type = true;
        ke->type = PQ_BYTE_ARRAY;
        ke->converted = PQ_CONV_UTF8;
        ke->logical.kind = PQ_LT_STRING;
        leaves[nleaves++].type = PQ_BYTE_ARRAY;
        g->kids[0] = key;
        g->kids[1] = gen_node(depth + 1, parent_rep + 1, "value", -1);
    }
    g->nleaves = nleaves - g->first_leaf;
    return g;
}

static void push(int leaf, uint32_t def, uint32_t rep)
{
    leafdata *l = &leaves[leaf];
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->def = realloc(l->def, l->cap * sizeof *l->def);
        l->rep = realloc(l->rep, l->cap * sizeof *l->rep);
    }
    l->def[l->n] = def;
    l->rep[l->n++] = rep;
}

static void push_bytes(leafdata *l, const char *p, size_t n)
{
    if (l->nvals >= l->cap_lens) {
        l->cap_lens = l->cap_lens ? l->cap_lens * 2 : 256;
        l->lens = realloc(l->lens, l->cap_lens * sizeof *l->lens);
    }
    l->lens[l->nvals] = (uint32_t)n;
    icd_buf_append(&l->vals, p, n);
}

static void gen_value(gnode *g, uint32_t def, uint32_t rep, icd_buf *json, int key_index)
{
    int leaf = g->first_leaf;
    leafdata *l = &leaves[leaf];
    push(leaf, def, rep);
    switch (g->type) {
    case PQ_INT32: {
        int32_t v = (int32_t)rnd(2000) - 1000;
        if (rnd(20) == 0) v = rnd(2) ? INT32_MAX : INT32_MIN;
        icd_buf_append(&l->vals, &v, 4);
        icd_buf_printf(json, "%d", v);
        break;
    }
    case PQ_INT64: {
        int64_t v = ((int64_t)rnd(1u << 30) << 20) - ((int64_t)1 << 49);
        if (rnd(4) == 0) v = (int64_t)rnd(5);
        icd_buf_append(&l->vals, &v, 8);
        icd_buf_printf(json, "%lld", (long long)v);
        break;
    }
    case PQ_DOUBLE: {
        double v = ((double)rnd(100000) - 50000) / 8;
        icd_buf_append(&l->vals, &v, 8);
        icd_buf_printf(json, "%.17g", v);
        break;
    }
    case PQ_BOOLEAN: {
        uint8_t v = (uint8_t)rnd(2);
        icd_buf_append(&l->vals, &v, 1);
        icd_buf_puts(json, v ? "true" : "false");
        break;
    }
    case PQ_BYTE_ARRAY: {
        char s[32];
        int n = key_index >= 0 ? snprintf(s, sizeof s, "k%d", key_index)
                               : snprintf(s, sizeof s, "%.*s", (int)rnd(12), "abcdefghijklmnop");
        if (key_index < 0 && rnd(3) == 0) n = snprintf(s, sizeof s, "v%u", rnd(30));
        push_bytes(l, s, (size_t)n);
        icd_buf_printf(json, "\"%s\"", s);
        break;
    }
    default: {
        char s[4];
        snprintf(s, sizeof s, "%c%c%c", 'a' + rnd(26), 'A' + rnd(26), '0' + rnd(10));
        push_bytes(l, s, 3);
        icd_buf_printf(json, "\"%s\"", s);
        break;
    }
    }
    l->nvals++;
}

static void gen_row(gnode *g, uint32_t def, uint32_t rep, icd_buf *json, int key_index)
{
    if (g->rep == PQ_OPTIONAL && rnd(5) == 0) {
        for (int i = g->first_leaf; i < g->first_leaf + g->nleaves; i++)
            push(i, def, rep);
        icd_buf_puts(json, "null");
        return;
    }
    uint32_t d = def + (g->rep == PQ_OPTIONAL);
    if (g->kind == G_PRIM) return gen_value(g, d, rep, json, key_index);
    if (g->kind == G_STRUCT) {
        icd_buf_putc(json, '{');
        for (int i = 0; i < g->nkids; i++) {
            icd_buf_printf(json, "%s\"%s\":", i ? "," : "", g->kids[i]->name);
            gen_row(g->kids[i], d, rep, json, -1);
        }
        icd_buf_putc(json, '}');
        return;
    }
    uint32_t k = rnd(4);
    icd_buf_putc(json, g->kind == G_LIST ? '[' : '{');
    if (k == 0)
        for (int i = g->first_leaf; i < g->first_leaf + g->nleaves; i++)
            push(i, d, rep);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t r = i == 0 ? rep : (uint32_t)g->kids[0]->rep_level;
        if (i) icd_buf_putc(json, ',');
        if (g->kind == G_LIST) {
            gen_row(g->kids[0], d + 1, r, json, -1);
        } else {
            gen_row(g->kids[0], d + 1, r, json, (int)i);
            icd_buf_putc(json, ':');
            gen_row(g->kids[1], d + 1, r, json, -1);
        }
    }
    icd_buf_putc(json, g->kind == G_LIST ? ']' : '}');
}

static int buf_write(void *ctx, const void *p, size_t n, icd_error *err)
{
    icd_buf_append(ctx, p, n);
    return icd_buf_ok(ctx) ? 0 : icd_fail_nomem(err);
}

/* Writes leaves' rows [row_lo, row_hi) given per-row level offsets. */
typedef struct rowidx {
    size_t *lev; /* per leaf: level offset of each row, plus the end */
    size_t *val;
} rowidx;

static int write_file(gnode **top, int ntop, size_t nrows, rowidx *ri, const pq_write_options *o,
                      icd_buf *out, uint64_t batch_seed)
{
    icd_error err;
    icd_error_clear(&err);
    pq_writer *w = NULL;
    if (pq_writer_new(els, (size_t)nels, o, buf_write, out, &w, &err)) {
        fprintf(stderr, "new: %s\n", err.message);
        return -1;
    }
    uint64_t save = rng;
    rng = batch_seed;
    pq_column_batch cb[MAX_LEAVES];
    static pq_bytes bytes[MAX_LEAVES][16384];
    int rc = 0;
    for (size_t r0 = 0; r0 < nrows && !rc;) {
        size_t n = 1 + rnd(300);
        if (r0 + n > nrows) n = nrows - r0;
        for (int i = 0; i < nleaves; i++) {
            leafdata *l = &leaves[i];
            size_t lo = ri->lev[(size_t)i * (nrows + 1) + r0],
                   hi = ri->lev[(size_t)i * (nrows + 1) + r0 + n];
            size_t vlo = ri->val[(size_t)i * (nrows + 1) + r0],
                   vhi = ri->val[(size_t)i * (nrows + 1) + r0 + n];
            memset(&cb[i], 0, sizeof cb[i]);
            cb[i].num_levels = hi - lo;
            cb[i].def = l->def + lo;
            cb[i].rep = l->rep + lo;
            cb[i].num_values = vhi - vlo;
            if (l->type == PQ_BYTE_ARRAY || l->type == PQ_FIXED_LEN_BYTE_ARRAY) {
                size_t off = 0;
                for (size_t k = 0; k < vlo; k++)
                    off += l->lens[k];
                for (size_t k = vlo; k < vhi && k - vlo < 16384; k++) {
                    bytes[i][k - vlo].ptr = (const uint8_t *)l->vals.data + off;
                    bytes[i][k - vlo].len = l->lens[k];
                    off += l->lens[k];
                }
                cb[i].values = bytes[i];
            } else {
                size_t wd = l->type == PQ_BOOLEAN ? 1 : l->type == PQ_INT32 ? 4 : 8;
                cb[i].values = l->vals.data ? l->vals.data + vlo * wd : "";
            }
        }
        rc = pq_writer_write_batch(w, cb, n, &err);
        r0 += n;
    }
    if (!rc) rc = pq_writer_close(w, &err);
    if (rc) fprintf(stderr, "write: %s\n", err.message);
    pq_writer_free(w);
    rng = save;
    (void)top;
    (void)ntop;
    return rc;
}

static const char *outdir;

static void one_case(int index)
{
    nnodes = nleaves = nels = 0;
    for (int i = 0; i < MAX_LEAVES; i++) {
        free(leaves[i].def);
        free(leaves[i].rep);
        free(leaves[i].lens);
        icd_buf_free(&leaves[i].vals);
        memset(&leaves[i], 0, sizeof leaves[i]);
    }
    int ntop = 1 + (int)rnd(5);
    el("schema", -1, ntop);
    gnode *top[8];
    for (int i = 0; i < ntop; i++) {
        char n[16];
        snprintf(n, sizeof n, "c%d", i);
        top[i] = gen_node(0, 0, n, -1);
    }
    size_t nrows = rnd(5) == 0 ? rnd(3) : rnd(1500);
    rowidx ri;
    ri.lev = calloc((size_t)nleaves * (nrows + 1), sizeof *ri.lev);
    ri.val = calloc((size_t)nleaves * (nrows + 1), sizeof *ri.val);
    icd_buf json = ICD_BUF_INIT;
    for (size_t r = 0; r < nrows; r++) {
        for (int i = 0; i < nleaves; i++) {
            ri.lev[(size_t)i * (nrows + 1) + r] = leaves[i].n;
            ri.val[(size_t)i * (nrows + 1) + r] = leaves[i].nvals;
        }
        icd_buf_putc(&json, '{');
        for (int i = 0; i < ntop; i++) {
            icd_buf_printf(&json, "%s\"%s\":", i ? "," : "", top[i]->name);
            gen_row(top[i], 0, 0, &json, -1);
        }
        icd_buf_puts(&json, "}\n");
    }
    for (int i = 0; i < nleaves; i++) {
        ri.lev[(size_t)i * (nrows + 1) + nrows] = leaves[i].n;
        ri.val[(size_t)i * (nrows + 1) + nrows] = leaves[i].nvals;
    }
    static const int codecs[] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_SNAPPY, PQ_CODEC_ZSTD,
                                 PQ_CODEC_GZIP};
    pq_write_options o = {.codec = codecs[rnd(4)],
                          .page_rows = rnd(2) ? 1 + rnd(50) : 0,
                          .dict_bytes = rnd(2) ? 1 + rnd(300) : 0,
                          .row_group_bytes = rnd(2) ? 1 + rnd(20000) : 0,
                          .no_dictionary = rnd(5) == 0};
    uint64_t bseed = rng;
    icd_buf a = ICD_BUF_INIT, b = ICD_BUF_INIT;
    CHECK(write_file(top, ntop, nrows, &ri, &o, &a, bseed) == 0);
    CHECK(write_file(top, ntop, nrows, &ri, &o, &b, bseed) == 0);
    /* the same input again: the same bytes */
    CHECK(a.len == b.len && !memcmp(a.data, b.data, a.len));

    /* read back */
    icd_error err;
    icd_error_clear(&err);
    icd_file *f;
    pq_file *pf = NULL;
    CHECK(icd_memfile_open(a.data, a.len, "rand.parquet", &f, &err) == 0 &&
          pq_file_open_file(f, &pf, &err) == 0);
    if (!pf) {
        fprintf(stderr, "case %d: %s\n", index, err.message);
    } else {
        CHECK_EQ_INT(pq_file_num_rows(pf), nrows);
        pq_reader *r = NULL;
        CHECK(pq_reader_open(pf, NULL, 0, 1 + rnd(500), &r, &err) == 0);
        size_t at_lev[MAX_LEAVES] = {0}, at_val[MAX_LEAVES] = {0}, off[MAX_LEAVES] = {0};
        size_t rows = 0, bad = 0;
        pq_batch *bt;
        while (r && pq_reader_next(r, &bt, &err) == 0 && bt) {
            rows += bt->num_rows;
            for (int i = 0; i < nleaves && i < (int)bt->num_columns; i++) {
                const pq_column_batch *c = &bt->columns[i];
                leafdata *l = &leaves[i];
                for (size_t e = 0; e < c->num_levels; e++, at_lev[i]++) {
                    if (at_lev[i] >= l->n) {
                        bad++;
                        break;
                    }
                    if ((c->def ? c->def[e] : 0) != l->def[at_lev[i]]) bad++;
                    if ((c->rep ? c->rep[e] : 0) != l->rep[at_lev[i]]) bad++;
                }
                for (size_t v = 0; v < c->num_values; v++, at_val[i]++) {
                    if (at_val[i] >= l->nvals) {
                        bad++;
                        break;
                    }
                    if (l->type == PQ_BYTE_ARRAY || l->type == PQ_FIXED_LEN_BYTE_ARRAY) {
                        pq_bytes x = ((const pq_bytes *)c->values)[v];
                        uint32_t len = l->lens[at_val[i]];
                        if (x.len != len || memcmp(x.ptr, l->vals.data + off[i], len)) bad++;
                        off[i] += len;
                    } else {
                        size_t wd = l->type == PQ_BOOLEAN ? 1 : l->type == PQ_INT32 ? 4 : 8;
                        if (memcmp((const char *)c->values + v * wd, l->vals.data + at_val[i] * wd,
                                   wd))
                            bad++;
                    }
                }
            }
        }
        CHECK_EQ_INT(err.code, 0);
        CHECK_EQ_INT(rows, nrows);
        for (int i = 0; i < nleaves; i++) {
            CHECK_EQ_INT(at_lev[i], leaves[i].n);
            CHECK_EQ_INT(at_val[i], leaves[i].nvals);
        }
        if (bad) fprintf(stderr, "case %d: %zu mismatches\n", index, bad);
        CHECK_EQ_INT(bad, 0);
        pq_reader_close(r);
        pq_file_close(pf);
    }
    if (outdir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rand_%d.parquet", outdir, index);
        FILE *pfh = fopen(path, "wb");
        CHECK(pfh && fwrite(a.data, 1, a.len, pfh) == a.len);
        if (pfh) fclose(pfh);
        snprintf(path, sizeof path, "%s/rand_%d.json", outdir, index);
        FILE *jf = fopen(path, "wb");
        CHECK(jf && fwrite(json.data ? json.data : "", 1, json.len, jf) == json.len);
        if (jf) fclose(jf);
    }
    icd_buf_free(&a);
    icd_buf_free(&b);
    icd_buf_free(&json);
    free(ri.lev);
    free(ri.val);
}

static void test_random(void)
{
    for (int i = 0; i < 60; i++) {
        rng = 0x1ced0000ULL + (uint64_t)i * 7919;
        one_case(i);
    }
}

int main(int argc, char **argv)
{
    outdir = argc > 1 ? argv[1] : NULL;
    test_random();
    printf("%s: %d checks, %d failed\n", argc > 0 ? argv[0] : "test", test_checks_, test_failures_);
    return test_failures_ ? 1 : 0;
}
