/*
 * The row provider of `icedruid serve` (druid/serve/server.h) over a planned table: split N is
 * task N of the plan, streamed as Druid input rows (NDJSON) in bounded memory.
 *
 * The merge-on-read reader pushes rows into a sink; the server pulls chunks. The two are
 * joined by one producer thread per open stream that runs the task into a Druid row sink
 * and hands finished chunks (about `chunk_bytes` of whole rows) through a bounded queue
 * (mutex + condition variables, `queue_chunks` deep); split_next takes one chunk at a
 * time. When the client goes away the server closes the stream: the stream's cancel flag
 * is set, the producer's sink fails its next row with ICD_ECANCELED (and a producer
 * blocked on a full queue wakes up), and the thread is joined, so no work outlives the
 * request. Memory per stream: (queue_chunks + 1) chunks plus the reader's row group: its
 * compressed column bytes bounded by read_budget (plus one page larger than its share),
 * and one decoded page per projected column.
 * All streams share one ice_scan_reader, so a delete file is read once for the server's
 * life, whichever splits need it.
 *
 * Failures are not logged here: the server reports each one once (500 or an aborted
 * response). /metrics gets the row accounting (rows read, removed by each kind of
 * delete, emitted, unparseable), /health the table and snapshot id.
 *
 * Parse exceptions are counted per split (one Druid subtask reads one split) against
 * maxParseExceptions: unparseable rows are skipped and logged; one too many fails the
 * stream, which the server turns into an aborted response (Druid sees a failure).
 */
#ifndef ICD_DRUID_PLAN_PROVIDER_H
#define ICD_DRUID_PLAN_PROVIDER_H

#include <stddef.h>

#include "base/error.h"
#include "druid/plan/plan.h"
#include "druid/plan/rewrite.h"
#include "druid/serve/server.h"
#include "iceberg/reader.h"

typedef struct dr_plan_provider dr_plan_provider;

typedef struct dr_plan_provider_opts {
    const char *auth_user;       /* copied into /spec as httpAuthenticationUsername */
    const json_t *auth_password; /* PasswordProvider for /spec (borrowed), or NULL */
    size_t chunk_bytes;          /* 0 -> 64 KiB */
    size_t queue_chunks;         /* 0 -> 4 */
    size_t read_budget;          /* compressed column bytes a stream holds (0: whole chunks;
                                  * ice_scan_reader_set_read_budget) */
    /* The decode budget over all streams (0: none). A stream starts reading when the
     * charges of the streams reading plus its own fit (or when none is reading); until
     * then it waits (its split_next returns empty every 100 ms, so it holds no pool
     * thread). A stream is charged the larger of stream_memory and the most any stream
     * has held so far, then whatever more its reader holds (ice_read_stats.decode_bytes,
     * measured at each batch) until it ends. */
    size_t decode_memory;
    size_t stream_memory;
    /* Log lines (parse exceptions, failed splits), from several threads. May be NULL. */
    void (*log)(void *log_ctx, const char *line);
    void *log_ctx;
} dr_plan_provider_opts;

/* `plan` and `io` are borrowed and must outlive the provider. */
int dr_plan_provider_new(const dr_plan *plan, icd_fileio *io, const dr_plan_provider_opts *opts,
                         dr_plan_provider **out, icd_error *err);
void dr_plan_provider_free(dr_plan_provider *pp);
/* The callbacks for dr_server_start (valid while the provider lives). */
void dr_plan_provider_get(dr_plan_provider *pp, dr_server_provider *out);
/* The read counters summed over every stream so far (what /metrics shows). */
void dr_plan_provider_stats(dr_plan_provider *pp, ice_read_stats *out);
/* Streams currently open (tests: 0 after every client went away). */
unsigned dr_plan_provider_open_streams(const dr_plan_provider *pp);

#endif
