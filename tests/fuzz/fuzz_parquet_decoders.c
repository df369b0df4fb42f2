/*
 * libFuzzer target for the Parquet value/level decoders (encodings.h) and the page codecs
 * (codec.h). The first bytes choose what to run and with which parameters:
 *   byte 0     decoder or codec (see the switch)
 *   byte 1     bit width / value width / extra parameter
 *   bytes 2-3  value count (little endian, <= 65535)
 *   bytes 4-6  decompressed size for codecs (little endian, capped at 1 MiB)
 * and the rest is the encoded page. Output buffers are exactly as large as the call
 * allows, so ASan reports any write past them; successful results are checked for the
 * invariants the decoders promise (bytes used within the input, values within the bit
 * width, byte-array values readable).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/parquet/codec.h"
#include "formats/parquet/encodings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(c)                                                                                 \
    do {                                                                                           \
        if (!(c)) __builtin_trap();                                                                \
    } while (0)

static volatile uint32_t sink;

/* Touches every byte of every value so that ASan sees a bad pointer or length. */
static void touch_bytes(const pq_bytes *v, size_t count)
{
    uint32_t h = 0;
    for (size_t i = 0; i < count; i++)
        for (uint32_t k = 0; k < v[i].len; k++)
            h = h * 31 + v[i].ptr[k];
    sink = h;
}

static void within(const pq_bytes *v, size_t count, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < count; i++)
        REQUIRE(v[i].ptr >= p && v[i].len <= n && (size_t)(v[i].ptr - p) <= n - v[i].len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int verbose = -1;
    if (verbose < 0) verbose = getenv("PQ_FUZZ_VERBOSE") != NULL;
    if (size < 7) return 0;
    unsigned sel = data[0] % 17, param = data[1];
    size_t count = (size_t)data[2] | (size_t)data[3] << 8;
    size_t out_len = ((size_t)data[4] | (size_t)data[5] << 8 | (size_t)data[6] << 16) & 0xFFFFF;
    const uint8_t *p = data + 7;
    size_t n = size - 7;
    /* A private copy, so that reads past the page are caught even when it is in the middle
     * of the fuzzer's buffer. */
    uint8_t *page = malloc(n ? n : 1);
    memcpy(page, p, n);
    icd_error err;
    size_t used = 0;
    int rc;
    switch (sel) {
    case 0: {
        uint8_t *out = malloc(count ? count : 1);
        rc = pq_plain_bool(page, n, count, out, &used, &err);
        if (rc == 0) {
            REQUIRE(used <= n);
            for (size_t i = 0; i < count; i++)
                REQUIRE(out[i] <= 1);
        }
        free(out);
        break;
    }
    case 1: {
        pq_bytes *out = malloc((count ? count : 1) * sizeof *out);
        rc = pq_plain_byte_array(page, n, count, out, &used, &err);
        if (rc == 0) {
            REQUIRE(used <= n);
            within(out, count, page, n);
            touch_bytes(out, count);
        }
        free(out);
        break;
    }
    case 2: {
        size_t width = param % 16 + 1;
        uint8_t *out = malloc(count * width + 1);
        rc = pq_plain_fixed(page, n, count, width, out, &used, &err);
        if (rc == 0) REQUIRE(used == count * width && used <= n && memcmp(out, page, used) == 0);
        free(out);
        break;
    }
    case 3:
    case 4: {
        int bw = (int)(param % 36) - 1; /* -1 .. 34: out-of-range widths too */
        uint32_t *out = malloc((count ? count : 1) * sizeof *out);
        rc = sel == 3 ? pq_rle_decode(page, n, bw, out, count, &used, &err)
                      : pq_bit_packed_decode(page, n, bw, out, count, &used, &err);
        if (rc == 0) {
            REQUIRE(bw >= 0 && bw <= 32 && used <= n);
            uint64_t maxv = ((uint64_t)1 << bw) - 1;
            for (size_t i = 0; i < count; i++)
                REQUIRE(out[i] <= maxv);
        }
        free(out);
        break;
    }
    case 5: {
        int64_t *out = malloc((count ? count : 1) * sizeof *out);
        rc = pq_delta_binary_packed(page, n, count, out, &used, &err);
        if (rc == 0) {
            REQUIRE(used <= n);
            /* A prefix decodes to the same values and the same end. */
            size_t half = count / 2, used2 = 0;
            int64_t *out2 = malloc((half ? half : 1) * sizeof *out2);
            REQUIRE(pq_delta_binary_packed(page, n, half, out2, &used2, &err) == 0);
            REQUIRE(used2 == used || (half == 0 && n == 0));
            REQUIRE(memcmp(out, out2, half * sizeof *out2) == 0);
            free(out2);
        }
        free(out);
        break;
    }
    case 6:
    case 7: {
        pq_bytes *out = malloc((count ? count : 1) * sizeof *out);
        icd_arena arena = ICD_ARENA_INIT;
        rc = sel == 6 ? pq_delta_length_byte_array(page, n, count, out, &used, &err)
                      : pq_delta_byte_array(page, n, count, out, &arena, &used, &err);
        if (rc == 0) {
            REQUIRE(used <= n);
            if (sel == 6) within(out, count, page, n);
            touch_bytes(out, count);
        }
        icd_arena_free(&arena);
        free(out);
        break;
    }
    case 8: {
        size_t width = param % 16 + 1, total = width ? n / width : 0;
        size_t want = count < total ? count : total;
        uint8_t *out = malloc(want * width + 1);
        /* Half the time the exact total, otherwise the fuzzer's count as the total. */
        rc = pq_byte_stream_split(page, n, (param & 0x80) ? count : total, want, width, out, &err);
        free(out);
        break;
    }
    default: {
        int codec = (int)sel - 9; /* 0 .. 7 */
        uint8_t *out = malloc(out_len ? out_len : 1);
        rc = pq_decompress(codec, page, n, out_len ? out : NULL, out_len, &err);
        free(out);
        break;
    }
    }
    if (rc != 0) REQUIRE(rc < 0 && err.message[0] != '\0');
    if (verbose) /* PQ_FUZZ_VERBOSE=1: what each input did, to check seeds */
        fprintf(stderr, "selector %u: rc %d%s%s\n", sel, rc, rc ? ": " : "", rc ? err.message : "");
    free(page);
    return 0;
}
