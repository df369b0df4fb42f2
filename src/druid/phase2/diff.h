/*
 * Phase 2: what changed in Druid terms between two snapshots of the spec's table.
 *
 * A Druid segment interval (aligned to a granularity, UTC, timestamps taken with the
 * spec's timestampSpec) must be REPLACEd when it held a row that is present in snapshot
 * A and absent in snapshot B: rows removed by position deletes / deletion vectors added
 * after A, rows of older data files matching equality deletes added after A, rows of data
 * files removed by overwrite/delete snapshots. `replace` snapshots (compaction) change no
 * row. Intervals that only received new rows can be APPENDed instead.
 *
 * diff.c computes it (dr_diff_compute); emit.c turns it into Druid statements
 * (MSQ REPLACE / native index_parallel); sync.c keeps the last ingested snapshot per
 * data source in a state file and submits the re-ingestion.
 */
#ifndef ICD_DRUID_DIFF_H
#define ICD_DRUID_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "druid/spec/period.h"
#include "druid/spec/spec.h"
#include "io/fileio.h"

/* One segment interval [start_ms, end_ms), aligned to the diff's granularity. */
typedef struct dr_diff_interval {
    int64_t start_ms;
    int64_t end_ms;
    int64_t rows_removed; /* rows present in A and absent in B (replace list); -1 = unknown
                             (a conservative choice, e.g. decided from statistics) */
    int64_t rows_added;   /* rows present in B and absent in A */
} dr_diff_interval;

typedef struct dr_diff_opts {
    int64_t from_snapshot;             /* A (required) */
    bool has_to;                       /* false: B = the table's current snapshot */
    int64_t to_snapshot;               /* B */
    const dr_granularity *granularity; /* NULL: the spec's segmentGranularity */
    int threads;
    /* Progress (may be NULL): called from the worker threads after each file that phase 1
     * (timestamps) or phase 2 (row contents of intervals with both removed and added
     * files) looked at, with the phase, the number of files of the phase and the file's
     * bytes. The callee serializes. */
    void (*on_file)(void *ctx, int phase, size_t nfiles, int64_t file_bytes);
    void *on_file_ctx;
} dr_diff_opts;

typedef struct dr_diff {
    int64_t from_snapshot;
    int64_t to_snapshot;
    dr_granularity granularity;
    /* Sorted by start, disjoint. replace: some row removed (maybe some added too).
     * append: rows only added, no row removed. An interval is in at most one list. */
    dr_diff_interval *replace;
    size_t n_replace;
    dr_diff_interval *append;
    size_t n_append;
    int64_t files_read; /* data/delete files whose rows were read to decide */
    int64_t bytes_read; /* bytes fetched from storage for it, when known */
    char *data_source;  /* the spec's dataSource (owned) */
    /* added by diff.c (after the fields above): */
    int64_t files_from_stats; /* changed data files decided from column bounds, not read */
    int64_t rows_unparseable; /* rows read whose timestamp does not parse (not in Druid,
                                 as `read` skips them) */
} dr_diff;

/* Computes the diff for the spec's table. `io` carries --remap and storage settings. */
int dr_diff_compute(const dr_spec *spec, icd_fileio *io, const dr_diff_opts *opts, dr_diff *out,
                    icd_error *err);
/* What `icedruid diff` prints (one JSON object + newline):
 * {"dataSource":..,"fromSnapshot":A,"toSnapshot":B,"granularity":..,
 *  "replaceIntervals":["2024-01-01T00:00:00.000Z/2024-01-02T00:00:00.000Z",...],
 *  "appendIntervals":[...],
 *  "rowsRemoved":{"<interval>":N,...},"rowsAdded":{"<interval>":N,...},
 *  "filesRead":N,"bytesRead":N,"filesDecidedByStatistics":N,"rowsUnparseable":N}
 * rowsRemoved lists every replace interval (-1 = unknown, decided from statistics);
 * rowsAdded every interval that received rows. filesRead counts data files read plus
 * delete files loaded; bytesRead the sizes of the data files read (an upper bound: only
 * the columns needed are fetched). */
int dr_diff_write_json(const dr_diff *d, icd_buf *out, icd_error *err);
void dr_diff_free(dr_diff *d);
/* The interval as Druid writes it: "2024-01-01T00:00:00.000Z/2024-01-02T00:00:00.000Z"
 * (granularity ALL: Druid's ETERNITY text). */
void dr_diff_interval_text(icd_buf *b, const dr_diff_interval *iv);

#endif
