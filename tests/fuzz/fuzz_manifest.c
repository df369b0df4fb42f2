/*
 * libFuzzer target: Iceberg manifest lists and manifests. The input is read as an Avro
 * container from memory and decoded three ways — as a manifest list, as a data manifest and
 * as a delete manifest — against a fixed table metadata with a partitioned spec (identity
 * on an int, day on a timestamp, truncate on a string), so partition tuples, inheritance,
 * statistics and content checks all run on hostile bytes. Manifests are read twice, by the
 * manifest-entry decoder and by the generic value trees, and the two must agree (the same
 * error or the same entries, manifest_compare.h): a difference aborts.
 */
#include <stdint.h>
#include <stdlib.h>

#include "formats/avro/container.h"
#include "iceberg/manifest.h"
#include "io/memfile.h"

#include "../unit/iceberg/manifest_compare.h"

static const char METADATA[] =
    "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
    "\"location\":\"/t\",\"last-sequence-number\":3,\"last-updated-ms\":1,"
    "\"last-column-id\":3,\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\","
    "\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"i\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":2,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":3,\"name\":\"s\",\"required\":false,\"type\":\"string\"}]}],"
    "\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":["
    "{\"source-id\":1,\"field-id\":1000,\"name\":\"i\",\"transform\":\"identity\"},"
    "{\"source-id\":2,\"field-id\":1001,\"name\":\"ts_day\",\"transform\":\"day\"},"
    "{\"source-id\":3,\"field-id\":1002,\"name\":\"s_trunc\",\"transform\":\"truncate[4]\"}]},"
    "{\"spec-id\":1,\"fields\":[]}],\"last-partition-id\":1002,"
    "\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],"
    "\"properties\":{},\"current-snapshot-id\":-1,\"snapshots\":[],\"refs\":{}}";

static ice_metadata *md;

static void decode(const uint8_t *data, size_t size, int mode)
{
    icd_error err;
    icd_file *f;
    if (icd_memfile_open(data, size, "fuzz.avro", &f, &err)) return;
    icd_avro_reader *r;
    if (icd_avro_reader_open_file(f, true, &r, &err)) return;
    icd_arena arena = ICD_ARENA_INIT;
    if (mode == 0) {
        ice_manifest_file *mfs;
        size_t n;
        ice_manifest_list_read_from(r, "fuzz.avro", &arena, &mfs, &n, &err);
    } else {
        icd_avro_reader_free(r);
        icd_arena_free(&arena);
        ice_manifest_file mf = {0};
        mf.path = "fuzz.avro";
        mf.spec_id = mode == 1 ? 0 : 1;
        mf.is_delete_manifest = mode == 2;
        mf.sequence_number = 3;
        mf.added_snapshot_id = 7;
        mf.first_row_id = mode == 1 ? 100 : -1;
        if (size & 2) mf.added_files = mf.existing_files = mf.deleted_files = -1;
        ice_manifest_read_opts opts = {mode == 2 || (size & 1), mode == 2, false};
        static char why[2600];
        if (manifest_compare(data, size, md, &mf, opts, why, sizeof why)) {
            fprintf(stderr, "manifest decoders differ (mode %d): %s\n", mode, why);
            abort();
        }
        return;
    }
    icd_arena_free(&arena);
    icd_avro_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!md) {
        icd_error err;
        if (ice_metadata_parse(METADATA, sizeof METADATA - 1, "fuzz.metadata.json", &md, &err))
            abort(); /* the fixed metadata must parse */
    }
    for (int mode = 0; mode < 3; mode++)
        decode(data, size, mode);
    return 0;
}
