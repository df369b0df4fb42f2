/*
 * A minimal work-sharing loop over pthreads (see parallel.h): an atomic counter hands out
 * items, the first error wins. Used for scan tasks (--threads) and parallel manifest reads.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/parallel.h"

typedef struct shared {
    size_t n;
    atomic_size_t next;
    atomic_bool failed;
    icd_item_fn fn;
    void *ctx;
    pthread_mutex_t lock;
    int rc;
    icd_error err;
} shared;

static void *worker(void *arg)
{
    shared *s = arg;
    icd_error err;
    icd_error_clear(&err);
    while (!atomic_load(&s->failed)) {
        size_t i = atomic_fetch_add(&s->next, 1);
        if (i >= s->n) break;
        int rc = s->fn(s->ctx, i, &err);
        if (rc) {
            pthread_mutex_lock(&s->lock);
            if (!s->rc) {
                s->rc = rc;
                s->err = err;
            }
            pthread_mutex_unlock(&s->lock);
            atomic_store(&s->failed, true);
            break;
        }
    }
    return NULL;
}

int icd_parallel_for(size_t n, int threads, icd_item_fn fn, void *ctx, icd_error *err)
{
    if (threads <= 1 || n <= 1) {
        for (size_t i = 0; i < n; i++)
            ICD_TRY(fn(ctx, i, err));
        return 0;
    }
    if ((size_t)threads > n) threads = (int)n;
    shared s = {.n = n, .fn = fn, .ctx = ctx, .rc = 0};
    atomic_init(&s.next, 0);
    atomic_init(&s.failed, false);
    pthread_mutex_init(&s.lock, NULL);
    icd_error_clear(&s.err);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    if (!tids) {
        pthread_mutex_destroy(&s.lock);
        return icd_fail_nomem(err);
    }
    int started = 0;
    for (; started < threads - 1; started++)
        if (pthread_create(&tids[started], NULL, worker, &s) != 0) break;
    worker(&s); /* the caller's thread works too */
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(tids);
    pthread_mutex_destroy(&s.lock);
    if (s.rc && err) *err = s.err;
    return s.rc;
}
