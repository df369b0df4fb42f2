/*
 * The manifest-entry decoder (src/iceberg/manifest_fast.c) against the generic value-tree
 * path, field by field (manifest_compare.h): every manifest of the real-table corpus
 * (the .avro files under $ICD_SHARED/corpus/.../metadata/ that are manifests, not manifest
 * lists), read
 * as data and as delete manifest, with and without stats, inherited sequence numbers and
 * row ids; manifests written by tool_gen_manifests (libavro) in both layouts; and damaged
 * copies of all of them (bytes flipped, truncated), where both must fail the same way.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/avro/container.h"
#include "iceberg/manifest.h"
#include "iceberg/manifest_fast.h"
#include "io/fileio.h"
#include "io/memfile.h"
#include "manifest_compare.h"
#include "test.h"

static size_t nmanifests, ncompared, nfast;

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc(len > 0 ? (size_t)len : 1);
    if (d && len > 0 && fread(d, 1, (size_t)len, f) != (size_t)len) {
        free(d);
        d = NULL;
    }
    fclose(f);
    *n = len > 0 ? (size_t)len : 0;
    return d;
}

/* The metadata files of the table whose metadata directory is `dir`. */
static ice_metadata **load_metadata(const char *dir, size_t *n)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "ls '%s' 2>/dev/null | grep 'metadata.json$'", dir);
    FILE *p = popen(cmd, "r");
    ice_metadata **v = NULL;
    *n = 0;
    char line[1024];
    while (p && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, line);
        size_t len;
        uint8_t *d = slurp(path, &len);
        icd_error err;
        ice_metadata *md;
        if (d && !ice_metadata_parse((const char *)d, len, path, &md, &err)) {
            v = realloc(v, (*n + 1) * sizeof *v);
            v[(*n)++] = md;
        }
        free(d);
    }
    if (p) pclose(p);
    return v;
}

/* Header facts of a container: whether it is a manifest (its records have a data_file),
 * its partition-spec-id and whether its content is deletes. */
static bool manifest_header(const uint8_t *d, size_t n, int32_t *spec_id, bool *deletes)
{
    icd_error err;
    icd_file *f;
    if (icd_memfile_open(d, n, "h.avro", &f, &err)) return false;
    icd_avro_reader *r;
    if (icd_avro_reader_open_file(f, true, &r, &err)) return false;
    const icd_avro_schema *root = icd_avro_reader_schema(r);
    bool is_manifest =
        root->type == AVRO_RECORD && icd_avro_schema_field_index(root, "data_file") >= 0;
    const icd_avro_meta *m = icd_avro_reader_meta(r, "partition-spec-id");
    *spec_id = m ? (int32_t)strtol(m->value, NULL, 10) : 0;
    m = icd_avro_reader_meta(r, "content");
    *deletes = m && !strcmp(m->value, "deletes");
    icd_avro_reader_free(r);
    return is_manifest;
}

static void compare_one(const uint8_t *d, size_t n, const ice_metadata *md,
                        const ice_manifest_file *mf, ice_manifest_read_opts opts, const char *name)
{
    char why[2600];
    const char *diff = manifest_compare(d, n, md, mf, opts, why, sizeof why);
    ncompared++;
    CHECK(diff == NULL);
    if (diff)
        fprintf(stderr, "%s (delete %d, stats %d, deleted %d, seq %lld): %s\n", name,
                mf->is_delete_manifest, opts.keep_stats, opts.keep_deleted,
                (long long)mf->sequence_number, why);
}

/* Whether the fast decoder takes this file (else both runs are the generic path). */
static bool takes_fast(const uint8_t *d, size_t n, const ice_metadata *md, int32_t spec_id)
{
    icd_error err;
    icd_file *f;
    if (icd_memfile_open(d, n, "h.avro", &f, &err)) return false;
    icd_avro_reader *r;
    if (icd_avro_reader_open_file(f, true, &r, &err)) return false;
    bool stat_read[5] = {true, true, true, true, true};
    ice_mfast *m = NULL;
    ice_mfast_compile(icd_avro_reader_schema(r), ice_metadata_spec(md, spec_id), stat_read, &m,
                      &err);
    bool ok = m != NULL;
    ice_mfast_free(m);
    icd_avro_reader_free(r);
    return ok;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void check_manifest(const char *path, const uint8_t *d, size_t n, ice_metadata **mds,
                           size_t nmd)
{
    int32_t spec_id;
    bool deletes;
    if (!manifest_header(d, n, &spec_id, &deletes)) return;
    nmanifests++;
    const ice_metadata *md = nmd ? mds[0] : NULL;
    for (size_t i = 0; i < nmd; i++)
        if (ice_metadata_spec(mds[i], spec_id)) md = mds[i];
    if (!md) return;
    if (takes_fast(d, n, md, spec_id))
        nfast++;
    else
        fprintf(stderr, "generic path: %s\n", path);
    for (int variant = 0; variant < 16; variant++) {
        ice_manifest_file mf = {0};
        mf.path = path;
        mf.spec_id = spec_id;
        mf.is_delete_manifest = (variant & 1) ? !deletes : deletes;
        mf.content = mf.is_delete_manifest ? ICE_CONTENT_POSITION_DELETES : ICE_CONTENT_DATA;
        mf.sequence_number = (variant & 2) ? 0 : 7;
        mf.added_snapshot_id = 42;
        mf.first_row_id = (variant & 4) ? 1000 : -1;
        mf.added_files = mf.existing_files = mf.deleted_files = -1;
        ice_manifest_read_opts opts = {(variant & 8) != 0, (variant & 2) != 0, false};
        compare_one(d, n, md, &mf, opts, path);
    }
    /* damaged copies: both must fail (or not) the same way */
    uint8_t *c = malloc(n ? n : 1);
    for (int k = 0; c && k < 24; k++) {
        memcpy(c, d, n);
        size_t len = n;
        if (k % 4 == 3 && n > 1) {
            len = (size_t)(next_rand() % n);
        } else {
            for (int j = 0; j < 1 + k % 3 && n; j++)
                c[next_rand() % n] ^= (uint8_t)(1u << (next_rand() % 8));
        }
        ice_manifest_file mf = {0};
        mf.path = path;
        mf.spec_id = spec_id;
        mf.is_delete_manifest = deletes;
        mf.sequence_number = 7;
        mf.added_snapshot_id = 42;
        mf.first_row_id = -1;
        mf.added_files = mf.existing_files = mf.deleted_files = -1;
        ice_manifest_read_opts opts = {k % 2 == 0, false, false};
        compare_one(c, len, md, &mf, opts, path);
    }
    free(c);
}

/* ---- walking a tree of tables ------------------------------------------------------- */

static char **found;
static size_t nfound;

static int collect(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    size_t l = strlen(p);
    if (type == FTW_F && l > 5 && !strcmp(p + l - 5, ".avro") && strstr(p, "/metadata/")) {
        found = realloc(found, (nfound + 1) * sizeof *found);
        found[nfound++] = strdup(p);
    }
    return 0;
}

static void check_tree(const char *root, size_t max_files)
{
    nfound = 0;
    found = NULL;
    nftw(root, collect, 32, FTW_PHYS);
    for (size_t i = 0; i < nfound; i++) {
        if (i < max_files) {
            char dir[2048];
            snprintf(dir, sizeof dir, "%s", found[i]);
            *strrchr(dir, '/') = '\0';
            size_t nmd, n;
            ice_metadata **mds = load_metadata(dir, &nmd);
            uint8_t *d = slurp(found[i], &n);
            if (d) check_manifest(found[i], d, n, mds, nmd);
            free(d);
            for (size_t k = 0; k < nmd; k++)
                ice_metadata_free(mds[k]);
            free(mds);
        }
        free(found[i]);
    }
    free(found);
}

static void test_corpus(void)
{
    const char *shared = getenv("ICD_SHARED");
    char root[4200];
    snprintf(root, sizeof root, "%s/corpus", shared ? shared : "../shared");
    struct stat st;
    if (stat(root, &st)) {
        fprintf(stderr, "no corpus at %s: skipped\n", root);
        return;
    }
    size_t before = nmanifests;
    check_tree(root, SIZE_MAX);
    fprintf(stderr, "corpus: %zu manifests, %zu of them read by the fast decoder, %zu reads\n",
            nmanifests - before, nfast, ncompared);
    CHECK(nmanifests - before > 10);
}

static void test_generated(void)
{
    const char *build = getenv("ICD_BUILD_DIR");
    char gen[4200], tmp[] = "/tmp/icd_mfast_XXXXXX";
    snprintf(gen, sizeof gen, "%s/bench/tool_gen_manifests", build ? build : ".");
    struct stat st;
    if (stat(gen, &st) || !mkdtemp(tmp)) {
        fprintf(stderr, "no tool_gen_manifests: generated manifests skipped\n");
        return;
    }
    const char *layouts[] = {"", "linear"};
    for (int l = 0; l < 2; l++) {
        char cmd[9000];
        snprintf(cmd, sizeof cmd, "'%s' '%s/t%d' 3000 300 6 3 %s >/dev/null", gen, tmp, l,
                 layouts[l]);
        CHECK(system(cmd) == 0);
    }
    size_t before = nmanifests;
    check_tree(tmp, SIZE_MAX);
    fprintf(stderr, "generated: %zu manifests\n", nmanifests - before);
    CHECK(nmanifests - before >= 18);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0);
}

TEST_MAIN(TEST(test_corpus), TEST(test_generated))
