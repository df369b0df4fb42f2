/*
 * libFuzzer target for the Variant binary decoder (formats/parquet/variant.c). Input:
 * a 2-byte little-endian metadata length, the metadata bytes, then the value bytes (a
 * length past the end takes what is there). A successful rendering must be one valid JSON
 * value (checked with jansson, which only refuses NUL characters in object keys); a failure
 * must leave the output buffer as it was.
 * Seeds: tests/fuzz/corpus/fuzz_variant (hand-built values and ones taken from the Trino
 * variant tables of the corpus).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "formats/parquet/variant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    size_t mlen = (size_t)data[0] | (size_t)data[1] << 8;
    data += 2;
    size -= 2;
    if (mlen > size) mlen = size;
    icd_buf out = ICD_BUF_INIT;
    icd_buf_puts(&out, "x");
    icd_error err;
    icd_error_clear(&err);
    int rc = pq_variant_to_json(&out, data, mlen, data + mlen, size - mlen, &err);
    if (rc) {
        if (out.len != 1 || !err.message[0]) __builtin_trap();
    } else {
        json_error_t jerr;
        json_t *j = json_loadb(out.data + 1, out.len - 1, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
        /* jansson cannot hold a NUL in an object key; such a key (\u0000) is valid JSON */
        if (!j && !strstr(jerr.text, "NUL byte in object key")) __builtin_trap();
        json_decref(j);
    }
    icd_buf_free(&out);
    return 0;
}
