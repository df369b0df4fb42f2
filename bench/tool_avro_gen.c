/*
 * Generates Avro container files with the test writer (tests/unit/avro/icd_avro_writer.h):
 *   tool_avro_gen manifest OUT.avro N [CODEC]   N Iceberg-v2-style manifest entries
 *                                               (data_file with partition, column stats
 *                                               maps, bounds, split offsets), blocks of
 *                                               ~64 KiB as Java's writer makes them
 *   tool_avro_gen seeds DIR                     small seed files for the fuzz target
 * Used by bench/avro_cat.sh (decode speed) and to refresh tests/fuzz/corpus/fuzz_avro.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/unit/avro/avro_writer.h"

static const char *MANIFEST_SCHEMA =
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
    "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
    "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},"
    "{\"name\":\"sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":3},"
    "{\"name\":\"file_sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,"
    "\"field-id\":4},"
    "{\"name\":\"data_file\",\"field-id\":2,\"type\":{\"type\":\"record\",\"name\":\"r2\","
    "\"fields\":["
    "{\"name\":\"content\",\"type\":\"int\",\"field-id\":134},"
    "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
    "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
    "{\"name\":\"partition\",\"field-id\":102,\"type\":{\"type\":\"record\",\"name\":\"r102\","
    "\"fields\":[{\"name\":\"region\",\"field-id\":1000,\"default\":null,\"type\":[\"null\","
    "\"string\"]},{\"name\":\"ts_day\",\"field-id\":1001,\"default\":null,\"type\":[\"null\","
    "{\"type\":\"int\",\"logicalType\":\"date\"}]}]}},"
    "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
    "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104},"
    "{\"name\":\"column_sizes\",\"field-id\":108,\"default\":null,\"type\":[\"null\",{\"type\":"
    "\"array\",\"logicalType\":\"map\",\"items\":{\"type\":\"record\",\"name\":\"k117_v118\","
    "\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":117},{\"name\":\"value\","
    "\"type\":\"long\",\"field-id\":118}]}}]},"
    "{\"name\":\"value_counts\",\"field-id\":109,\"default\":null,\"type\":[\"null\",{\"type\":"
    "\"array\",\"logicalType\":\"map\",\"items\":{\"type\":\"record\",\"name\":\"k119_v120\","
    "\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":119},{\"name\":\"value\","
    "\"type\":\"long\",\"field-id\":120}]}}]},"
    "{\"name\":\"lower_bounds\",\"field-id\":125,\"default\":null,\"type\":[\"null\",{\"type\":"
    "\"array\",\"logicalType\":\"map\",\"items\":{\"type\":\"record\",\"name\":\"k126_v127\","
    "\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":126},{\"name\":\"value\","
    "\"type\":\"bytes\",\"field-id\":127}]}}]},"
    "{\"name\":\"upper_bounds\",\"field-id\":128,\"default\":null,\"type\":[\"null\",{\"type\":"
    "\"array\",\"logicalType\":\"map\",\"items\":{\"type\":\"record\",\"name\":\"k129_v130\","
    "\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":129},{\"name\":\"value\","
    "\"type\":\"bytes\",\"field-id\":130}]}}]},"
    "{\"name\":\"split_offsets\",\"field-id\":132,\"default\":null,\"type\":[\"null\",{\"type\":"
    "\"array\",\"items\":\"long\",\"element-id\":133}]},"
    "{\"name\":\"sort_order_id\",\"field-id\":140,\"default\":null,\"type\":[\"null\",\"int\"]}"
    "]}}]}";

static void kv_longs(icd_buf *b, int ncols, int64_t base)
{
    aw_long(b, 1); /* union branch: the array */
    aw_long(b, ncols);
    for (int c = 1; c <= ncols; c++) {
        aw_long(b, c);
        aw_long(b, base + c * 17);
    }
    aw_long(b, 0);
}

static void kv_bounds(icd_buf *b, int ncols, int64_t x)
{
    aw_long(b, 1);
    aw_long(b, ncols);
    for (int c = 1; c <= ncols; c++) {
        uint8_t v[8];
        for (int i = 0; i < 8; i++)
            v[i] = (uint8_t)((x + c) >> (8 * i));
        aw_long(b, c);
        aw_bytes(b, v, (c & 1) ? 8 : 4);
    }
    aw_long(b, 0);
}

static void manifest_entry(icd_buf *b, int64_t i)
{
    char path[160];
    aw_long(b, 1); /* status ADDED */
    aw_long(b, 1); /* snapshot_id */
    aw_long(b, 3139675037455495LL);
    aw_long(b, 0); /* sequence_number: null (inherited) */
    aw_long(b, 0); /* file_sequence_number */
    aw_long(b, 0); /* content DATA */
    snprintf(path, sizeof path,
             "s3://warehouse/db/events/data/region=NZ/ts_day=2024-03-%02d/"
             "%08llx-4113-48f4-9f61-a33e202b657f-%lld.parquet",
             (int)(i % 28) + 1, (unsigned long long)(i * 2654435761u), (long long)i);
    aw_str(b, path);
    aw_str(b, "PARQUET");
    aw_long(b, 1); /* partition.region */
    aw_str(b, (i & 1) ? "NZ" : "AU");
    aw_long(b, 1); /* partition.ts_day */
    aw_long(b, 19790 + i % 28);
    aw_long(b, 1000 + i % 5000);        /* record_count */
    aw_long(b, 1 << 20 | (i & 0xffff)); /* file_size_in_bytes */
    kv_longs(b, 17, i);                 /* column_sizes */
    kv_longs(b, 17, 134);               /* value_counts */
    kv_bounds(b, 17, i);                /* lower_bounds */
    kv_bounds(b, 17, i + 1000);         /* upper_bounds */
    aw_long(b, 1);                      /* split_offsets: [4] */
    aw_long(b, 1);
    aw_long(b, 4);
    aw_long(b, 0);
    aw_long(b, 1); /* sort_order_id: 0 */
    aw_long(b, 0);
}

static int write_file(const char *path, const icd_buf *b)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f) != 0) {
        fprintf(stderr, "tool_avro_gen: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

/* N manifest entries in blocks of about 64 KiB of encoded records. */
static void manifest_file(icd_buf *f, int64_t n, const char *codec)
{
    static const char *const KV[] = {
        "format-version",
        "2",
        "content",
        "data",
        "partition-spec-id",
        "0",
        "partition-spec",
        ("[{\"name\":\"region\",\"transform\":\"identity\",\"source-id\":2,\"field-id\":1000},"
         "{\"name\":\"ts_day\",\"transform\":\"day\",\"source-id\":3,\"field-id\":1001}]")};
    aw_header(f, MANIFEST_SCHEMA, codec, KV, 4);
    icd_buf blk = ICD_BUF_INIT;
    int64_t in_block = 0;
    for (int64_t i = 0; i < n; i++) {
        manifest_entry(&blk, i);
        in_block++;
        if (blk.len >= (64u << 10) || i == n - 1) {
            aw_block(f, codec, in_block, blk.data, blk.len);
            icd_buf_clear(&blk);
            in_block = 0;
        }
    }
    icd_buf_free(&blk);
}

static int seeds(const char *dir)
{
    static const char *CODECS[] = {"null", "deflate", "snappy", "zstandard"};
    char path[4096];
    int rc = 0;
    for (int c = 0; c < 4; c++) {
        icd_buf f = ICD_BUF_INIT;
        manifest_file(&f, 3, CODECS[c]);
        snprintf(path, sizeof path, "%s/manifest-%s.avro", dir, CODECS[c]);
        rc |= write_file(path, &f);
        icd_buf_free(&f);
    }
    /* a manifest list-like file with several blocks and a map/enum/fixed/recursive mix */
    const char *mixed =
        "{\"type\":\"record\",\"name\":\"m\",\"namespace\":\"x\",\"fields\":["
        "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]}},"
        "{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":16,"
        "\"logicalType\":\"uuid\"}},"
        "{\"name\":\"mp\",\"type\":{\"type\":\"map\",\"values\":[\"null\",\"double\"]}},"
        "{\"name\":\"d\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\","
        "\"precision\":10,\"scale\":3}},"
        "{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\"}},"
        "{\"name\":\"next\",\"type\":[\"null\",\"m\"]}]}";
    icd_buf f = ICD_BUF_INIT;
    aw_header(&f, mixed, "deflate", NULL, 0);
    for (int blkno = 0; blkno < 3; blkno++) {
        icd_buf d = ICD_BUF_INIT;
        for (int k = 0; k < 2; k++) {
            aw_long(&d, k);
            for (int i = 0; i < 16; i++)
                icd_buf_putc(&d, (char)(i * 7 + blkno));
            aw_long(&d, -1); /* map block with byte size */
            icd_buf inner = ICD_BUF_INIT;
            aw_str(&inner, "k");
            aw_long(&inner, 1);
            aw_double(&inner, 2.5);
            aw_long(&d, (int64_t)inner.len);
            icd_buf_append(&d, inner.data, inner.len);
            icd_buf_free(&inner);
            aw_long(&d, 0);
            aw_bytes(&d, "\x01\x02", 2);
            aw_long(&d, 1700000000123456789LL);
            aw_long(&d, 0); /* next: null */
        }
        aw_block(&f, "deflate", 2, d.data, d.len);
        icd_buf_free(&d);
    }
    snprintf(path, sizeof path, "%s/mixed-deflate.avro", dir);
    rc |= write_file(path, &f);
    icd_buf_free(&f);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "manifest")) {
        icd_buf f = ICD_BUF_INIT;
        manifest_file(&f, atoll(argv[3]), argc > 4 ? argv[4] : "deflate");
        int rc = write_file(argv[2], &f);
        icd_buf_free(&f);
        return rc;
    }
    if (argc == 3 && !strcmp(argv[1], "seeds")) return seeds(argv[2]);
    fprintf(stderr, "usage: tool_avro_gen manifest OUT.avro N [CODEC] | seeds DIR\n");
    return 2;
}
