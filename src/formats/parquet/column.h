/*
 * Column chunk reader (internal to the Parquet reader): reads one column chunk's bytes,
 * walks its pages, decompresses and decodes them one at a time, and appends whole rows of
 * levels and values to a batch column. Used by reader.c.
 *
 * The chunk's bytes come through a window: either the whole chunk in one read (window 0,
 * or a chunk no larger than the window), or ranged reads of at most `window` bytes (a few
 * pages at a time). A page larger than the window is read whole into a buffer shared by
 * the reader's columns (its bytes are dead once the page is decoded).
 */
#ifndef ICD_PQ_COLUMN_H
#define ICD_PQ_COLUMN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"
#include "formats/parquet/parquet.h"

/* A buffer holding decompressed page data that a batch may point into (byte arrays). */
typedef struct pq_pbuf {
    uint8_t *data;
    size_t cap;
    icd_arena arena; /* values rebuilt by DELTA_BYTE_ARRAY / BYTE_STREAM_SPLIT(FLBA) */
} pq_pbuf;

typedef struct pq_colreader {
    icd_file *file;
    const pq_node *leaf;
    const pq_column_chunk *chunk_meta;
    uint32_t row_group;
    int codec;
    int max_def, max_rep;
    int def_bw, rep_bw;
    size_t value_size;

    /* The column chunk is bytes [chunk_off, chunk_off + chunk_len) of the file; the window
     * holds chunk bytes [win_start, win_start + win_len). */
    size_t chunk_len;
    uint64_t chunk_off;
    uint8_t *win;
    size_t win_cap, win_start, win_len;
    size_t window; /* most bytes per read; 0 = the whole chunk in one read */
    bool whole;    /* the window holds the whole chunk (raw page bytes stay valid) */
    pq_pbuf *big;  /* pages larger than the window (shared; NULL: its own) */
    pq_pbuf own_big;
    size_t pos;          /* next page header within chunk */
    int64_t values_left; /* level entries not yet loaded into a page */
    bool data_seen;      /* a data page was read (a dictionary page must come first) */

    /* Dictionary (values decoded with PLAIN). */
    bool has_dict;
    void *dict;
    size_t dict_count, dict_cap;
    pq_pbuf dict_buf;

    /* The current data page, decoded. */
    uint32_t *def, *rep;
    size_t lvl_cap;
    size_t page_count, page_pos; /* level entries in the page / next one to hand out */
    void *vals;
    size_t vals_cap; /* bytes */
    size_t vals_count, vals_pos;
    uint32_t *idx; /* dictionary indices / RLE booleans scratch */
    size_t idx_cap;
    int64_t *i64tmp; /* DELTA_BINARY_PACKED into INT32 */
    size_t i64tmp_cap;

    /* Page buffers: the current page's, retired ones (freed at the next batch), free ones. */
    pq_pbuf *cur;
    pq_pbuf **retired;
    size_t num_retired, retired_cap;
    pq_pbuf **spare;
    size_t num_spare, spare_cap;

    /* How the current page's values are handed out: decoded in `vals`, dictionary indices
     * in `idx` (gathered on demand), or PLAIN bytes decoded on demand from plain_p. */
    int vmode;
    const uint8_t *plain_p;
    size_t plain_n, plain_off;
    bool cur_in_use; /* a batch points into the current page buffer */
    bool started;    /* the first entry of the chunk was handed out */
} pq_colreader;

void pq_colreader_init(pq_colreader *c, icd_file *file, const pq_node *leaf);
void pq_colreader_free(pq_colreader *c);

/* Checks a column chunk's location and resets the page walk. `window` bounds the chunk
 * bytes held (0 = read the whole chunk at once); `big` (may be NULL) receives pages larger
 * than the window. */
int pq_colreader_start(pq_colreader *c, const pq_column_chunk *cc, uint32_t row_group,
                       size_t window, pq_pbuf *big, icd_error *err);
/* Bytes of chunk data the reader holds (its window; not the shared big-page buffer). */
size_t pq_colreader_window_bytes(const pq_colreader *c);
/* Every buffer the reader holds (window, dictionary, decoded page arrays, page buffers),
 * by capacity; levels only of the kinds the column has. */
size_t pq_colreader_memory_bytes(const pq_colreader *c);

/* Releases page buffers that only previous batches pointed into. */
void pq_colreader_release(pq_colreader *c);

/* Growable arrays of one batch column. After pq_colreader_read_rows the batch's levels and
 * values are at the *_view pointers: either these arrays, or (when the rows lie within one
 * decoded page) the page's own arrays, without a copy. */
typedef struct pq_colbuf {
    uint32_t *def, *rep;
    size_t lvl_len, lvl_cap;
    uint8_t *vals;
    size_t vals_len, vals_cap; /* in values */
    const uint32_t *def_view, *rep_view;
    const uint8_t *vals_view;
} pq_colbuf;

/* Appends the level entries and values of the next `rows` rows. Fails when the chunk ends
 * first (a column with fewer rows than its row group). */
int pq_colreader_read_rows(pq_colreader *c, size_t rows, pq_colbuf *out, icd_error *err);
/* True when the chunk has no level entries left (checked at the end of a row group). */
int pq_colreader_check_end(pq_colreader *c, icd_error *err);

#endif
