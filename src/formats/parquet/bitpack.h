/*
 * Internal helpers shared by the Parquet value decoders (rle.c, delta.c, plain.c): ULEB128
 * and zigzag varints, and LSB-first bit unpacking of groups of 8
 * values (the packing order of the RLE/bit-packing hybrid and of DELTA_BINARY_PACKED
 * miniblocks). Not part of the encodings.h contract.
 *
 * Unpacking works on whole groups: 8 values of width w occupy exactly w bytes. The
 * functions take the number of readable bytes and never read beyond them; a group that is
 * cut short by the end of the buffer is unpacked from a zero-padded copy (the callers
 * decide whether the missing bytes were needed).
 */
#ifndef ICD_PQ_BITPACK_H
#define ICD_PQ_BITPACK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/varint.h"
#include "base/bits.h"

/* Reads an unsigned LEB128 of at most 64 bits at p[*pos], advancing *pos. Returns 0, or -1
 * when the varint is truncated or longer than 64 bits. */
static inline int pq_read_uleb(const uint8_t *p, size_t n, size_t *pos, uint64_t *out)
{
    int k = icd_uleb128_decode(p + *pos, p + n, out);
    if (k < 0) return -1;
    *pos += (size_t)k;
    return 0;
}

/* Zigzag decoding, kept unsigned so that callers can do modular arithmetic. */
static inline uint64_t pq_unzigzag(uint64_t u)
{
    return (u >> 1) ^ (0 - (u & 1));
}

/* Unpacks `groups` groups of 8 values of `width` bits (0..32) from p, of which `avail`
 * bytes are readable, into out[0 .. 8*groups). */
void pq_unpack32(const uint8_t *p, size_t avail, int width, uint32_t *out, size_t groups);

/* The same for widths 0..64 into 64-bit values (DELTA_BINARY_PACKED miniblocks). */
void pq_unpack64(const uint8_t *p, size_t avail, int width, uint64_t *out, size_t groups);

/* The writer's inverse of pq_unpack32: packs `groups` groups of 8 values of `width` bits
 * (0..32; values must fit) LSB first into exactly groups * width bytes at out. */
void pq_pack32(const uint32_t *in, size_t groups, int width, uint8_t *out);

#endif
