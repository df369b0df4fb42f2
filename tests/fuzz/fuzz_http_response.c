/*
 * libFuzzer target: the HTTP client's response handling (io/http.c) without a socket: the
 * libcurl header and write callbacks (status line, Content-Range, Content-Length, ETag;
 * ranged bodies placed into the caller's buffer by their offset, buffered and error
 * bodies), the retry test for short ranged answers, what a remote file's open makes of
 * its tail answer, and the read-ahead window of remote reads.
 *
 * Input: byte 0 picks the mode (bits 0-1: a ranged read, open's suffix read, a buffered
 * answer, a sequence of reads through the read-ahead), bytes 1-8 the request (or the file
 * size, read-ahead size and kept tail), then for modes 0-2 header lines up to an empty
 * line and one byte per body chunk (its length), for mode 3 six bytes per read (offset,
 * length, a failing fetch). The simulated server sends byte F(p) at resource offset p,
 * where p starts at the Content-Range start the client understood (206) or 0.
 *
 * Any crash, leak or sanitizer report is a bug, and so is: a body byte placed at the
 * wrong offset or past the buffer, a buffered body past its limit, a window from open
 * that lies outside the file or holds other bytes than the file's at its offsets, a
 * fetch past the end of the file, a read that returns other bytes than the file's.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t F(uint64_t p)
{
    return (uint8_t)((p * 131u + (p >> 9) + 7u) % 251u);
}

/* F over the offsets of the simulated files of mode 3 (up to 1 MiB), computed once */
#define MAX_FILE (1u << 20)
static uint8_t PAT[MAX_FILE];

static void init_pattern(void)
{
    if (PAT[1]) return;
    for (uint64_t p = 0; p < MAX_FILE; p++)
        PAT[p] = F(p);
}

static uint64_t u16(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8;
}

/* ---- modes 0-2: one transfer ------------------------------------------------------ */

static void transfer(int mode, const uint8_t *p, const uint8_t *end)
{
    init_pattern();
    size_t cap = (size_t)u16(p + 4) % 70000 + 1;
    icd_http_req req = {.method = "GET", .url = "http://h/f", .location = "http://h/f"};
    unsigned char *dest = NULL;
    if (mode == 0) {
        req.range_off = u16(p) * 97;
        req.range_len = u16(p + 2) % 70000 + 1;
        req.dest_cap = (size_t)req.range_len;
    } else if (mode == 1) {
        req.range_suffix = cap;
        req.dest_cap = cap;
    } else {
        req.max_body = cap;
    }
    if (mode != 2 && !(dest = malloc(req.dest_cap))) return;
    req.dest = dest;
    p += 8;
    icd_http_resp resp;
    memset(&resp, 0, sizeof resp);
    resp.content_length = -1;
    resp.total_size = -1;
    icd_http_xfer x = {.req = &req, .resp = &resp};
    /* header lines, as curl hands them over: one at a time with their CRLF */
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        char line[512];
        if (n <= 2 && (n == 0 || p[0] == '\r' || p[0] == '\n')) {
            p += n;
            break;
        }
        if (n > sizeof line) n = sizeof line;
        memcpy(line, p, n);
        if (icd_http_on_header(line, 1, n, &x) != n) abort();
        p += nl ? (size_t)(nl - p) + 1 : n;
    }
    if (!memchr(resp.etag, '\0', sizeof resp.etag)) abort();
    if (resp.content_length < -1 || resp.total_size < -1) abort();
    /* the body, in chunks of the sizes given */
    const uint64_t start = resp.status == 206 ? resp.body_start : 0;
    uint64_t pos = start;
    size_t sent = 0;
    char chunk[4096];
    for (; p < end; p++) {
        size_t n = *p == 0xff ? sizeof chunk : (size_t)*p + 1;
        if (pos <= MAX_FILE && n <= MAX_FILE - pos)
            memcpy(chunk, PAT + pos, n);
        else
            for (size_t i = 0; i < n; i++)
                chunk[i] = (char)F(pos + i);
        size_t took = icd_http_on_body(chunk, 1, n, &x);
        if (took > n) abort();
        if (took < n) break; /* curl stops the transfer */
        pos += n;
        sent += n;
    }
    bool err_status = resp.status < 200 || resp.status > 299;
    if (resp.dest_len > req.dest_cap) abort();
    if (x.started && !err_status) {
        if (mode == 0 && x.want_off != req.range_off) abort();
        for (size_t i = 0; i < resp.dest_len; i++)
            if (dest[i] != F(x.want_off + i)) abort();
    }
    if (mode == 2 && x.started && !err_status) {
        if (resp.body.len > req.max_body || (!x.overflow && resp.body.len != sent)) abort();
        for (size_t i = 0; i < resp.body.len; i++)
            if ((uint8_t)resp.body.data[i] != F(start + i)) abort();
    }
    if (err_status && resp.body.len > 64 * 1024) abort();
    (void)icd_http_short_range(&req, &resp);
    if (mode == 1) {
        uint64_t fsize = 0, woff = 0;
        size_t wlen = 0;
        int t = icd_http_tail_answer(&resp, cap, &fsize, &woff, &wlen);
        if (t == 0) {
            if (woff > fsize || wlen > fsize - woff || wlen > resp.dest_len) abort();
            for (size_t i = 0; i < wlen; i++)
                if (dest[i] != F(woff + i)) abort();
        }
    }
    icd_http_resp_free(&resp);
    free(dest);
}

/* ---- mode 3: reads through the read-ahead ----------------------------------------- */

typedef struct fake_file {
    uint64_t size;
    bool fail_next;
    unsigned fetches;
} fake_file;

static int fake_fetch(void *ctx, uint64_t off, size_t len, void *dst, size_t *got, icd_error *err)
{
    fake_file *f = ctx;
    *got = 0;
    if (len == 0 || off > f->size || len > f->size - off) abort(); /* past the end */
    f->fetches++;
    if (f->fail_next) return icd_fail(err, ICD_EIO, "http://h/f", (int64_t)off, "injected");
    memcpy(dst, PAT + off, len);
    *got = len;
    return 0;
}

static void reads(const uint8_t *p, const uint8_t *end)
{
    init_pattern();
    fake_file f = {.size = (u16(p) | (uint64_t)p[2] << 16) % (MAX_FILE + 1)};
    icd_readahead ra = {.size = f.size, .readahead = (size_t)(u16(p + 3) % 32 + 1) * 4096};
    /* what open kept: the tail of the file (or nothing) */
    size_t keep = (size_t)u16(p + 5);
    if (keep > f.size) keep = (size_t)f.size;
    if (keep && (ra.keep = malloc(keep))) {
        ra.keep_off = f.size - keep;
        ra.keep_len = keep;
        memcpy(ra.keep, PAT + ra.keep_off, keep);
    }
    p += 8;
    static unsigned char buf[MAX_FILE];
    for (; end - p >= 6; p += 6) {
        uint64_t off = f.size ? (u16(p) | (uint64_t)p[2] << 16) % (f.size + 1) : 0;
        size_t n = (size_t)u16(p + 3) * 4;
        if (n > f.size - off) n = (size_t)(f.size - off);
        f.fail_next = (p[5] & 0xf0) == 0xf0;
        size_t got = 0;
        icd_error err;
        int rc = icd_readahead_read(&ra, off, buf, n, &got, fake_fetch, &f, &err);
        if (rc == 0 && got != n) abort(); /* the fetches are complete */
        if (got > n || (rc && !f.fail_next)) abort();
        if (got && memcmp(buf, PAT + off, got)) abort();
        if (ra.win_len > ra.win_cap || ra.win_off > f.size || ra.win_len > f.size - ra.win_off)
            abort();
    }
    free(ra.win);
    free(ra.keep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 9) return 0;
    int mode = data[0] & 3;
    if (mode == 3)
        reads(data + 1, data + size);
    else
        transfer(mode, data + 1, data + size);
    return 0;
}
