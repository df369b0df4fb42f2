/*
 * `icedruid cat FILE...` over several files: each file is decoded by the per-format worker
 * (cli_cat_parquet / _avro / _orc) into its own cli_out, and the output reaches stdout in
 * file order, byte for byte what one `cat` per file would print in sequence.
 *
 * With --threads N, up to N files are decoded at once (icd_parallel_for hands them out in
 * order). Ordering works with a token: the file `current` is the only one allowed to write.
 * Its worker writes its full buffers straight to stdout; the workers of later files queue
 * theirs (bounded: a worker waits when its queue holds CAT_QUEUE_MAX bytes) until the token
 * reaches them. Whoever finishes the current file passes the token on, writing the queues
 * of files that finished in the meantime. A file that fails stops everything once the token
 * reaches it: the rows before it are out, as in a sequential run, and its error is the
 * result.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "cli/inspect.h"

enum { CAT_QUEUE_MAX = 4 << 20 };

typedef struct cat_chunk {
    struct cat_chunk *next;
    icd_buf buf;
} cat_chunk;

typedef struct cat_slot {
    cat_chunk *head, *tail; /* queued output, in order */
    size_t queued;          /* bytes in the queue */
    bool done;
    int rc;
    icd_error err;
} cat_slot;

typedef struct cat_run {
    icd_fileio *io;
    char *const *paths;
    size_t n;
    cat_slot *slots;
    size_t current; /* the file allowed to write */
    bool cancel;    /* a file failed (its turn came) or stdout failed */
    bool write_failed;
    cat_chunk *spare; /* emptied chunks, reused so their memory stays warm */
    pthread_mutex_t lock;
    pthread_cond_t cond;
} cat_run;

typedef struct cat_job {
    cat_run *run;
    size_t i;
} cat_job;

/* Writes a buffer to stdout (token holder only; no lock needed for the FILE's order). */
static bool put_out(const icd_buf *b)
{
    return b->len == 0 || fwrite(b->data, 1, b->len, stdout) == b->len;
}

/* Writes and recycles a detached queue (token holder only, lock not held). */
static bool drain(cat_run *run, cat_chunk *c)
{
    bool ok = true;
    while (c) {
        cat_chunk *next = c->next;
        if (ok) ok = put_out(&c->buf);
        icd_buf_clear(&c->buf);
        pthread_mutex_lock(&run->lock);
        c->next = run->spare;
        run->spare = c;
        pthread_mutex_unlock(&run->lock);
        c = next;
    }
    return ok;
}

static void note_write_failure(cat_run *run)
{
    pthread_mutex_lock(&run->lock);
    run->write_failed = true;
    run->cancel = true;
    pthread_cond_broadcast(&run->cond);
    pthread_mutex_unlock(&run->lock);
}

/* cli_out's write hook: a full buffer of file i. */
static void job_write(cli_out *o)
{
    cat_job *job = o->ctx;
    cat_run *run = job->run;
    cat_slot *s = &run->slots[job->i];
    pthread_mutex_lock(&run->lock);
    while (!run->cancel && run->current != job->i && s->queued >= CAT_QUEUE_MAX)
        pthread_cond_wait(&run->cond, &run->lock);
    if (run->cancel) {
        pthread_mutex_unlock(&run->lock);
        o->failed = true; /* stops the worker; the run's result says why */
        return;
    }
    if (run->current != job->i) { /* not our turn: queue the buffer, take a spare one */
        cat_chunk *c = run->spare;
        if (c) {
            run->spare = c->next;
        } else if (!(c = calloc(1, sizeof *c))) {
            pthread_mutex_unlock(&run->lock);
            o->buf.oom = true;
            return;
        }
        icd_buf full = o->buf;
        o->buf = c->buf;
        c->buf = full;
        c->next = NULL;
        if (s->tail)
            s->tail->next = c;
        else
            s->head = c;
        s->tail = c;
        s->queued += full.len;
        pthread_mutex_unlock(&run->lock);
        return;
    }
    /* our turn: what was queued first, then this buffer */
    cat_chunk *q = s->head;
    s->head = s->tail = NULL;
    s->queued = 0;
    pthread_mutex_unlock(&run->lock);
    if (!drain(run, q) || !put_out(&o->buf)) {
        note_write_failure(run);
        o->failed = true;
    }
}

/* File i is finished (rc, err): record it, and when it holds the token pass the token on
 * through every file that finished meanwhile. Only the holder may do that: the token (and
 * with it the right to write) is passed under the lock, and the holder drains outside it. */
static void job_done(cat_run *run, size_t i, int rc, const icd_error *err)
{
    pthread_mutex_lock(&run->lock);
    cat_slot *s = &run->slots[i];
    s->done = true;
    s->rc = rc;
    if (rc) s->err = *err;
    if (run->current != i) { /* not the token holder: whoever holds it will pass by here */
        pthread_mutex_unlock(&run->lock);
        return;
    }
    while (!run->cancel && run->current < run->n && run->slots[run->current].done) {
        cat_slot *c = &run->slots[run->current];
        cat_chunk *q = c->head;
        c->head = c->tail = NULL;
        c->queued = 0;
        pthread_mutex_unlock(&run->lock);
        bool ok = drain(run, q);
        pthread_mutex_lock(&run->lock);
        if (!ok) {
            run->write_failed = true;
            run->cancel = true;
        } else if (c->rc) {
            run->cancel = true; /* the first failed file, in order: stop here */
        } else {
            run->current++;
        }
    }
    pthread_cond_broadcast(&run->cond);
    pthread_mutex_unlock(&run->lock);
}

static int cat_one(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    cli_format fmt;
    ICD_TRY(cli_detect_format(io, path, &fmt, err));
    switch (fmt) {
    case CLI_FMT_PARQUET:
        return cli_cat_parquet(io, path, out, err);
    case CLI_FMT_AVRO:
        return cli_cat_avro(io, path, out, err);
    case CLI_FMT_ORC:
        return cli_cat_orc(io, path, out, err);
    default:
        return icd_fail(err, ICD_EINVALID, path, -1,
                        "not a Parquet, Avro or ORC file (unrecognised magic bytes)");
    }
}

static int run_job(void *ctx, size_t i, icd_error *unused)
{
    (void)unused;
    cat_run *run = ctx;
    icd_error err;
    icd_error_clear(&err);
    pthread_mutex_lock(&run->lock);
    bool cancel = run->cancel;
    pthread_mutex_unlock(&run->lock);
    int rc = 0;
    if (!cancel) {
        cat_job job = {run, i};
        cli_out out;
        cli_out_init(&out, NULL);
        out.write = job_write;
        out.ctx = &job;
        rc = cat_one(run->io, run->paths[i], &out, &err);
        icd_error tmp;
        icd_error_clear(&tmp);
        int frc = cli_out_finish(&out, rc ? &tmp : &err);
        if (!rc) rc = frc;
    }
    /* a cancelled file is never written: the token stops at the failure before it */
    job_done(run, i, rc, &err);
    return 0;
}

int cli_cat_files(icd_fileio *io, char *const *paths, size_t n, int threads, icd_error *err)
{
    cat_run run = {.io = io, .paths = paths, .n = n};
    run.slots = calloc(n ? n : 1, sizeof *run.slots);
    if (!run.slots) return icd_fail_nomem(err);
    pthread_mutex_init(&run.lock, NULL);
    pthread_cond_init(&run.cond, NULL);
    int rc = icd_parallel_for(n, threads, run_job, &run, err);
    if (!rc && run.current < n) { /* stopped at a failed file (or stdout failed) */
        cat_slot *s = &run.slots[run.current];
        if (s->rc && !run.write_failed) {
            *err = s->err;
            rc = s->rc;
        } else {
            rc = icd_fail(err, ICD_EIO, NULL, -1, "cannot write the output");
        }
    }
    if (!rc && fflush(stdout) != 0)
        rc = icd_fail(err, ICD_EIO, NULL, -1, "cannot write the output");
    for (size_t i = 0; i < n; i++) {
        cat_chunk *c = run.slots[i].head;
        while (c) {
            cat_chunk *next = c->next;
            icd_buf_free(&c->buf);
            free(c);
            c = next;
        }
    }
    while (run.spare) {
        cat_chunk *next = run.spare->next;
        icd_buf_free(&run.spare->buf);
        free(run.spare);
        run.spare = next;
    }
    pthread_cond_destroy(&run.cond);
    pthread_mutex_destroy(&run.lock);
    free(run.slots);
    return rc;
}
