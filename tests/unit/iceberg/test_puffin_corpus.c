/* Corpus test: the Puffin files of ../shared/corpus (ICD_SHARED). The deletion vectors of
 * iceberg_v3_deletion_vectors (two DVs in one Puffin file) are read by offset/length
 * without the footer, and through the validating variant, with the cardinality the footer
 * states; the Trino statistics files (zstd theta sketches) parse and every blob
 * decompresses. Skips with 77 when the corpus is absent. */
#include <stdlib.h>

#include "iceberg/deletes/dv.h"
#include "iceberg/deletes/puffin.h"
#include "test.h"

static const char *DV_TABLE = "corpus/impala/iceberg_v3/iceberg_v3_deletion_vectors";
static const char *DV_FILE =
    "data/00000-9-08e88179-85b6-4635-8b34-94b49abc87d9-00001-deletes.puffin";
static const char *STATS[] = {
    "corpus/impala/iceberg_with_puffin_stats/metadata/"
    "20241028_142058_00006_dn7is-8d3be062-6b30-45ea-b26e-6b706c50f8e3.stats",
    "corpus/impala/iceberg_v3/trino_variant/metadata/"
    "20260629_095655_00023_wa2kj-bcc1a100-d380-42cf-bccf-2e32badf7ac5.stats",
    "corpus/impala/iceberg_v3/trino_nested_variant/metadata/"
    "20260703_115517_00018_wa2kj-6375d4da-66f3-4adf-b0d6-fb7964f5b953.stats",
};

static char shared[2048];

static void test_deletion_vectors(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", shared, DV_TABLE, DV_FILE);
    icd_error err;
    icd_fileio *io;
    CHECK(icd_fileio_new(&io, &err) == 0);
    ice_puffin *p;
    CHECK(ice_puffin_open(io, path, &p, &err) == 0);
    if (!p) {
        fprintf(stderr, "%s\n", err.message);
        icd_fileio_free(io);
        return;
    }
    CHECK_EQ_INT(p->nblobs, 2);
    size_t dvs = 0;
    for (size_t i = 0; i < p->nblobs; i++) {
        const ice_puffin_blob *b = &p->blobs[i];
        CHECK_EQ_STR(b->type, ICE_PUFFIN_BLOB_DV);
        CHECK(b->snapshot_id == -1 && b->sequence_number == -1 && b->codec == NULL);
        const char *ref = ice_puffin_prop_get(b->props, b->nprops, "referenced-data-file");
        const char *card = ice_puffin_prop_get(b->props, b->nprops, "cardinality");
        CHECK(ref && card);
        if (!ref || !card) continue;
        int64_t expected = atoll(card);
        /* By offset/length, as the manifest gives them: no footer involved. */
        ice_posset *s;
        CHECK(ice_dv_read(io, path, (int64_t)b->offset, (int64_t)b->length, ref, expected, &s,
                          &err) == 0);
        if (s) {
            CHECK_EQ_INT(ice_posset_cardinality(s), expected);
            ice_posset_free(s);
            dvs++;
        }
        CHECK(ice_dv_read_validated(io, path, (int64_t)b->offset, (int64_t)b->length, ref, expected,
                                    &s, &err) == 0);
        ice_posset_free(s);
        /* The other blob's data file is the wrong one for this DV. */
        const ice_puffin_blob *o = &p->blobs[1 - i];
        const char *other = ice_puffin_prop_get(o->props, o->nprops, "referenced-data-file");
        CHECK(ice_dv_read_validated(io, path, (int64_t)b->offset, (int64_t)b->length, other,
                                    expected, &s, &err) == ICD_ECORRUPT);
        /* A record_count off by one is caught. */
        CHECK(ice_dv_read(io, path, (int64_t)b->offset, (int64_t)b->length, ref, expected + 1, &s,
                          &err) == ICD_ECORRUPT);
    }
    CHECK_EQ_INT(dvs, 2);
    /* Both blobs sit back to back between the magic and the footer. */
    CHECK(p->blobs[0].offset == 4 && p->blobs[1].offset == 4 + p->blobs[0].length);
    CHECK_EQ_INT(p->footer_offset, p->blobs[1].offset + p->blobs[1].length);
    ice_puffin_close(p);
    icd_fileio_free(io);
}

static void test_stats_files(void)
{
    icd_error err;
    icd_fileio *io;
    CHECK(icd_fileio_new(&io, &err) == 0);
    for (size_t f = 0; f < sizeof STATS / sizeof STATS[0]; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", shared, STATS[f]);
        ice_puffin *p;
        CHECK(ice_puffin_open(io, path, &p, &err) == 0);
        if (!p) {
            fprintf(stderr, "%s: %s\n", path, err.message);
            continue;
        }
        CHECK(p->nblobs > 0);
        const char *by = ice_puffin_prop_get(p->props, p->nprops, "created-by");
        CHECK(by && !strncmp(by, "Trino", 5));
        for (size_t i = 0; i < p->nblobs; i++) {
            const ice_puffin_blob *b = &p->blobs[i];
            CHECK_EQ_STR(b->type, "apache-datasketches-theta-v1");
            CHECK(b->nfields == 1);
            CHECK(ice_puffin_prop_get(b->props, b->nprops, "ndv") != NULL);
            uint8_t *out;
            size_t len;
            CHECK(ice_puffin_read_blob(p, b, 1 << 20, &out, &len, &err) == 0);
            /* A compact theta sketch starts with its preamble: at least 8 bytes. */
            CHECK(len >= 8);
            free(out);
        }
        ice_puffin_close(p);
    }
    icd_fileio_free(io);
}

int main(void)
{
    const char *s = getenv("ICD_SHARED");
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/%s", s ? s : "", DV_TABLE);
    FILE *f = NULL;
    if (s) {
        char file[4200];
        snprintf(file, sizeof file, "%s/%s", probe, DV_FILE);
        f = fopen(file, "rb");
    }
    if (!f) {
        printf("skipped: the corpus is not available (ICD_SHARED=%s)\n", s ? s : "");
        return 77;
    }
    fclose(f);
    snprintf(shared, sizeof shared, "%s", s);
    test_deletion_vectors();
    test_stats_files();
    printf("%d checks, %d failed\n", test_checks_, test_failures_);
    return test_failures_ ? 1 : 0;
}
