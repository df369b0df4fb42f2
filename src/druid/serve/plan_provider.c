/*
 * `icedruid serve`'s row provider (see plan_provider.h): turns the push-style
 * merge-on-read reader into the pull-style chunks the HTTP server streams, with one
 * producer thread and a bounded chunk queue per open split.
 */
#include "druid/serve/plan_provider.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem.h"
#include "base/jsonw.h"
#include "druid/rows/druid_sink.h"
#include "druid/rows/row.h"
#include "iceberg/reader.h"

#define MAX_QUEUE 64

struct dr_plan_provider {
    const dr_plan *plan;
    icd_fileio *io;
    ice_scan_reader *reader;
    const char **parquet_drop; /* dr_spec_parquet_undiscovered */
    size_t n_parquet_drop;
    const char **orc_drop, **avro_drop; /* dr_spec_undiscovered */
    size_t n_orc_drop, n_avro_drop;
    dr_plan_provider_opts opts;
    atomic_uint open_streams;
    pthread_mutex_t stats_lock;
    ice_read_stats stats; /* every stream's reads, finished or cut */
    uint64_t splits_done, splits_failed;
    /* The decode budget over all streams (opts.decode_memory; see plan_provider.h). */
    pthread_mutex_t budget_mu;
    size_t charged;   /* sum of the admitted streams' charges */
    size_t largest;   /* the most decode memory one stream has held so far */
    unsigned reading; /* streams admitted and not finished */
};

typedef struct stream {
    dr_plan_provider *pp;
    size_t n;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    icd_buf q[MAX_QUEUE];
    size_t head, count;
    bool done;
    int rc;
    icd_error err;
    atomic_bool cancel;
    icd_buf cur;
    dr_parse_exceptions pe;
    size_t base;                /* its admission charge (start_charge when opened) */
    size_t extra;               /* charged beyond base: what its reader held more */
    const ice_read_stats *live; /* its reader's counters (decode_bytes), producer thread */
    uint64_t live_seen;
} stream;

static void logf_line(dr_plan_provider *pp, const char *fmt, ...) ICD_PRINTF(2, 3);
static void logf_line(dr_plan_provider *pp, const char *fmt, ...)
{
    if (!pp->opts.log) return;
    char line[2400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pp->opts.log(pp->opts.log_ctx, line);
}

/* Producer: hands the current chunk to the queue, waiting while it is full. */
static int push_chunk(stream *st, icd_error *err)
{
    pthread_mutex_lock(&st->mu);
    while (st->count == st->pp->opts.queue_chunks && !atomic_load(&st->cancel))
        pthread_cond_wait(&st->cv, &st->mu);
    if (atomic_load(&st->cancel)) {
        pthread_mutex_unlock(&st->mu);
        return icd_fail(err, ICD_ECANCELED, NULL, -1, "the client went away");
    }
    icd_buf *slot = &st->q[(st->head + st->count) % st->pp->opts.queue_chunks];
    icd_buf tmp = *slot; /* an emptied buffer: swap to reuse its memory */
    *slot = st->cur;
    st->cur = tmp;
    icd_buf_clear(&st->cur);
    st->count++;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    return 0;
}

/* --- the decode budget --- */

/* What a stream starting now is charged: its --stream-memory, or the most any stream has
 * held so far when that is more. */
static size_t start_charge(const dr_plan_provider *pp)
{
    return pp->largest > pp->opts.stream_memory ? pp->largest : pp->opts.stream_memory;
}

/* The server asks before a split stream takes a slot (dr_server_provider.split_admit):
 * admitted when the charges of the streams reading plus a new one's fit, or when none is
 * reading (a stream larger than the whole budget still runs, alone). */
static bool p_admit(void *ctx, size_t *token)
{
    dr_plan_provider *pp = ctx;
    *token = 0;
    if (!pp->opts.decode_memory) return true;
    pthread_mutex_lock(&pp->budget_mu);
    size_t c = start_charge(pp);
    bool ok = pp->reading == 0 || pp->charged + c <= pp->opts.decode_memory;
    if (ok) {
        pp->charged += c;
        pp->reading++;
        *token = c;
    }
    pthread_mutex_unlock(&pp->budget_mu);
    return ok;
}

static void p_unadmit(void *ctx, size_t token)
{
    dr_plan_provider *pp = ctx;
    if (!pp->opts.decode_memory) return;
    pthread_mutex_lock(&pp->budget_mu);
    pp->charged -= token;
    pp->reading--;
    pthread_mutex_unlock(&pp->budget_mu);
}

/* The stream's reader holds `live` bytes now: what it holds beyond its admission charge
 * is charged too, until the stream ends. */
static void budget_update(stream *st, uint64_t live)
{
    dr_plan_provider *pp = st->pp;
    st->live_seen = live;
    pthread_mutex_lock(&pp->budget_mu);
    if (live > pp->largest) pp->largest = (size_t)live;
    if (live > st->base + st->extra) {
        size_t more = (size_t)live - st->base - st->extra;
        pp->charged += more;
        st->extra += more;
    }
    pthread_mutex_unlock(&pp->budget_mu);
}

static void budget_end(stream *st)
{
    dr_plan_provider *pp = st->pp;
    if (!st->extra) return;
    pthread_mutex_lock(&pp->budget_mu);
    pp->charged -= st->extra;
    st->extra = 0;
    pthread_mutex_unlock(&pp->budget_mu);
}

static int on_row(void *ctx, icd_buf *out, icd_error *err)
{
    stream *st = ctx;
    (void)out;
    if (st->pp->opts.decode_memory && st->live->decode_bytes != st->live_seen)
        budget_update(st, st->live->decode_bytes);
    return st->cur.len >= st->pp->opts.chunk_bytes ? push_chunk(st, err) : 0;
}

static int on_parse_exception(void *ctx, const icd_error *row_err, icd_error *err)
{
    stream *st = ctx;
    char line[2200];
    icd_error_format(row_err, line, sizeof line);
    logf_line(st->pp, "split %zu: parse exception: %s", st->n, line);
    return dr_parse_exceptions_add(&st->pe, row_err, err);
}

static void *produce(void *arg)
{
    stream *st = arg;
    dr_plan_provider *pp = st->pp;
    icd_error err;
    icd_error_clear(&err);
    dr_sink sink;
    ice_read_stats stats = {0};
    int rc = dr_sink_init(&sink, dr_spec_timestamp_spec(dr_plan_spec(pp->plan)), pp->reader,
                          &st->cur, &err);
    if (!rc) {
        const dr_spec *spec = dr_plan_spec(pp->plan);
        dr_row_set_binary_as_string(sink.w, dr_spec_binary_as_string(spec));
        dr_row_set_omit_timestamp_column(
            sink.w, !dr_spec_timestamp_column_shipped(spec, dr_plan_schema(pp->plan)));
        sink.parquet_drop = pp->parquet_drop;
        sink.n_parquet_drop = pp->n_parquet_drop;
        sink.orc_drop = pp->orc_drop;
        sink.n_orc_drop = pp->n_orc_drop;
        sink.avro_drop = pp->avro_drop;
        sink.n_avro_drop = pp->n_avro_drop;
        sink.on_row = on_row;
        sink.on_parse_exception = on_parse_exception;
        sink.ctx = st;
        sink.cancel = &st->cancel;
        ice_row_sink rs;
        dr_sink_row_sink(&sink, &rs);
        st->live = &stats;
        rc = ice_scan_reader_read_task(
            pp->reader, ice_scan_plan_task(dr_plan_scan(pp->plan), st->n), &rs, &stats, &err);
        budget_end(st);
    }
    dr_sink_clear(&sink);
    if (!rc && st->cur.len) rc = push_chunk(st, &err);
    /* a failure is reported (and logged once) by the server, which gets it from p_next */
    pthread_mutex_lock(&pp->stats_lock);
    ice_read_stats_add(&pp->stats, &stats);
    if (!rc)
        pp->splits_done++;
    else if (rc != ICD_ECANCELED)
        pp->splits_failed++;
    pthread_mutex_unlock(&pp->stats_lock);
    pthread_mutex_lock(&st->mu);
    st->done = true;
    st->rc = rc;
    st->err = err;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

static size_t p_count(void *ctx)
{
    dr_plan_provider *pp = ctx;
    return dr_plan_split_count(pp->plan);
}

static int p_spec(void *ctx, const char *base_url, icd_buf *out, icd_error *err)
{
    dr_plan_provider *pp = ctx;
    dr_rewrite_opts o = {base_url, pp->opts.auth_user, pp->opts.auth_password, false, NULL, NULL};
    return dr_rewrite_spec_text(pp->plan, &o, out, err);
}

static void stream_free(stream *st)
{
    for (size_t i = 0; i < MAX_QUEUE; i++)
        icd_buf_free(&st->q[i]);
    icd_buf_free(&st->cur);
    pthread_cond_destroy(&st->cv);
    pthread_mutex_destroy(&st->mu);
    free(st);
}

static int p_open(void *ctx, size_t n, void **out, icd_error *err)
{
    dr_plan_provider *pp = ctx;
    *out = NULL;
    if (n >= dr_plan_split_count(pp->plan))
        return icd_fail(err, ICD_ENOTFOUND, NULL, -1, "split %zu does not exist", n);
    stream *st = calloc(1, sizeof *st);
    if (!st) return icd_fail_nomem(err);
    st->pp = pp;
    st->n = n;
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->cv, NULL);
    atomic_init(&st->cancel, false);
    pthread_mutex_lock(&pp->budget_mu);
    st->base = start_charge(pp); /* about the token the server got for it */
    pthread_mutex_unlock(&pp->budget_mu);
    dr_parse_exceptions_init(&st->pe, dr_spec_max_parse_exceptions(dr_plan_spec(pp->plan)));
    if (pthread_create(&st->thread, NULL, produce, st)) {
        stream_free(st);
        return icd_fail(err, ICD_EIO, NULL, -1, "cannot start a reader thread");
    }
    atomic_fetch_add(&pp->open_streams, 1);
    *out = st;
    return 0;
}

static int p_next(void *s, icd_buf *out, bool *eof, icd_error *err)
{
    stream *st = s;
    size_t cap = st->pp->opts.queue_chunks;
    *eof = false;
    pthread_mutex_lock(&st->mu);
    while (st->count == 0 && !st->done)
        pthread_cond_wait(&st->cv, &st->mu);
    if (st->count > 0) {
        icd_buf *slot = &st->q[st->head];
        icd_buf_append(out, slot->data, slot->len);
        icd_buf_clear(slot);
        st->head = (st->head + 1) % cap;
        st->count--;
        pthread_cond_broadcast(&st->cv);
    } else if (st->rc) { /* every row before the failure was delivered */
        int rc = st->rc;
        *err = st->err;
        pthread_mutex_unlock(&st->mu);
        return rc;
    }
    *eof = st->done && st->count == 0 && st->rc == 0;
    pthread_mutex_unlock(&st->mu);
    return icd_buf_ok(out) ? 0 : icd_fail_nomem(err);
}

static void p_close(void *s)
{
    stream *st = s;
    atomic_store(&st->cancel, true);
    pthread_mutex_lock(&st->mu);
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
    pthread_join(st->thread, NULL);
    /* the last stream gone: the readers' buffers (all free now, unless a stream opened
     * meanwhile) go back to the system instead of staying at the burst's high-water mark */
    if (atomic_fetch_sub(&st->pp->open_streams, 1) == 1) icd_bigbuf_trim();
    stream_free(st);
}

int dr_plan_provider_new(const dr_plan *plan, icd_fileio *io, const dr_plan_provider_opts *opts,
                         dr_plan_provider **out, icd_error *err)
{
    *out = NULL;
    dr_plan_provider *pp = calloc(1, sizeof *pp);
    if (!pp) return icd_fail_nomem(err);
    pp->plan = plan;
    pp->io = io;
    if (opts) pp->opts = *opts;
    if (!pp->opts.chunk_bytes) pp->opts.chunk_bytes = 64 * 1024;
    if (!pp->opts.queue_chunks) pp->opts.queue_chunks = 4;
    if (pp->opts.queue_chunks > MAX_QUEUE) pp->opts.queue_chunks = MAX_QUEUE;
    atomic_init(&pp->open_streams, 0);
    pthread_mutex_init(&pp->stats_lock, NULL);
    pthread_mutex_init(&pp->budget_mu, NULL);
    /* only the columns Druid's reader would keep (InputRowSchemas.createColumnsFilter) */
    const char **cols = NULL;
    size_t ncols = 0;
    int rc = dr_spec_columns_filter(dr_plan_spec(plan), dr_plan_schema(plan), &cols, &ncols, err);
    if (!rc)
        rc = ice_scan_reader_new(io, dr_plan_metadata(plan), dr_plan_schema(plan), cols, ncols,
                                 &pp->reader, err);
    free(cols);
    if (!rc) ice_scan_reader_set_read_budget(pp->reader, pp->opts.read_budget);
    if (!rc)
        rc = dr_spec_parquet_undiscovered(dr_plan_spec(plan), dr_plan_schema(plan),
                                          &pp->parquet_drop, &pp->n_parquet_drop, err);
    if (!rc)
        rc = dr_spec_undiscovered(dr_plan_spec(plan), dr_plan_schema(plan), DR_READER_ORC,
                                  &pp->orc_drop, &pp->n_orc_drop, err);
    if (!rc)
        rc = dr_spec_undiscovered(dr_plan_spec(plan), dr_plan_schema(plan), DR_READER_AVRO,
                                  &pp->avro_drop, &pp->n_avro_drop, err);
    if (rc) {
        pthread_mutex_destroy(&pp->stats_lock);
        pthread_mutex_destroy(&pp->budget_mu);
        ice_scan_reader_free(pp->reader);
        free(pp->parquet_drop);
        free(pp->orc_drop);
        free(pp->avro_drop);
        free(pp);
        return rc;
    }
    *out = pp;
    return 0;
}

void dr_plan_provider_free(dr_plan_provider *pp)
{
    if (!pp) return;
    ice_scan_reader_free(pp->reader);
    pthread_mutex_destroy(&pp->stats_lock);
    pthread_mutex_destroy(&pp->budget_mu);
    free(pp->parquet_drop);
    free(pp->orc_drop);
    free(pp->avro_drop);
    free(pp);
}

/* /health: the table and the snapshot served (the id as a string: JSON numbers lose
 * 64-bit ids in many tools). */
static void p_health(void *ctx, icd_buf *out)
{
    dr_plan_provider *pp = ctx;
    const dr_spec *spec = dr_plan_spec(pp->plan);
    const char *ns = dr_spec_namespace(spec), *name = dr_spec_table_name(spec);
    icd_buf t = ICD_BUF_INIT;
    if (ns && ns[0]) icd_buf_printf(&t, "%s.", ns);
    icd_buf_puts(&t, name ? name : "");
    icd_buf_puts(out, ",\"table\":");
    icd_json_str(out, t.data ? t.data : "", t.len);
    icd_buf_free(&t);
    const ice_snapshot *snap = ice_scan_plan_snapshot(dr_plan_scan(pp->plan));
    if (snap)
        icd_buf_printf(out, ",\"snapshotId\":\"%" PRId64 "\"", snap->snapshot_id);
    else
        icd_buf_puts(out, ",\"snapshotId\":null");
}

void dr_plan_provider_stats(dr_plan_provider *pp, ice_read_stats *out)
{
    pthread_mutex_lock(&pp->stats_lock);
    *out = pp->stats;
    pthread_mutex_unlock(&pp->stats_lock);
}

/* /metrics: the row accounting of every split read so far (the counters of `scan
 * --stats`, summed over the streams). */
static void p_metrics(void *ctx, icd_buf *out)
{
    dr_plan_provider *pp = ctx;
    pthread_mutex_lock(&pp->stats_lock);
    ice_read_stats st = pp->stats;
    uint64_t done = pp->splits_done, failed = pp->splits_failed;
    pthread_mutex_unlock(&pp->stats_lock);
    pthread_mutex_lock(&pp->budget_mu);
    size_t charged = pp->charged, largest = pp->largest;
    pthread_mutex_unlock(&pp->budget_mu);
    icd_buf_puts(out, "# HELP icedruid_rows_total Rows of data files by what happened to them: "
                      "read, removed by position deletes (and deletion vectors), removed by "
                      "equality deletes, emitted, skipped as unparseable.\n"
                      "# TYPE icedruid_rows_total counter\n");
    icd_buf_printf(out,
                   "icedruid_rows_total{kind=\"read\"} %" PRIu64 "\n"
                   "icedruid_rows_total{kind=\"deleted_position\"} %" PRIu64 "\n"
                   "icedruid_rows_total{kind=\"deleted_equality\"} %" PRIu64 "\n"
                   "icedruid_rows_total{kind=\"emitted\"} %" PRIu64 "\n"
                   "icedruid_rows_total{kind=\"unparseable\"} %" PRIu64 "\n",
                   st.rows_read, st.rows_deleted_position, st.rows_deleted_equality,
                   st.rows_emitted, st.rows_skipped);
    icd_buf_printf(out,
                   "# HELP icedruid_data_files_read_total Data files read (a split read twice "
                   "counts twice).\n# TYPE icedruid_data_files_read_total counter\n"
                   "icedruid_data_files_read_total %" PRIu64 "\n"
                   "# HELP icedruid_delete_files_loaded_total Delete files loaded (once per "
                   "server life each).\n# TYPE icedruid_delete_files_loaded_total counter\n"
                   "icedruid_delete_files_loaded_total %" PRIu64 "\n"
                   "# HELP icedruid_splits_read_total Splits read to their end.\n"
                   "# TYPE icedruid_splits_read_total counter\n"
                   "icedruid_splits_read_total %" PRIu64 "\n"
                   "# HELP icedruid_split_errors_total Split reads that failed.\n"
                   "# TYPE icedruid_split_errors_total counter\n"
                   "icedruid_split_errors_total %" PRIu64 "\n",
                   st.data_files, st.delete_files_loaded, done, failed);
    icd_buf_printf(out,
                   "# HELP icedruid_decode_memory_bytes Decode memory charged to the streams "
                   "reading now (--decode-memory; 0 when unbounded).\n"
                   "# TYPE icedruid_decode_memory_bytes gauge\n"
                   "icedruid_decode_memory_bytes %zu\n"
                   "# HELP icedruid_stream_decode_memory_max_bytes The most decode memory one "
                   "stream has held.\n# TYPE icedruid_stream_decode_memory_max_bytes gauge\n"
                   "icedruid_stream_decode_memory_max_bytes %zu\n",
                   charged, largest);
}

void dr_plan_provider_get(dr_plan_provider *pp, dr_server_provider *out)
{
    *out = (dr_server_provider){pp,       p_count,   p_spec, p_open,  p_next,   p_close,
                                p_health, p_metrics, NULL,   p_admit, p_unadmit};
}

unsigned dr_plan_provider_open_streams(const dr_plan_provider *pp)
{
    return atomic_load(&((dr_plan_provider *)pp)->open_streams);
}
