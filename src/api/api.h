/*
 * The structures behind the public handles (include/icedruid/ headers): thin wrappers over the
 * internal layers, shared by the files of src/api/.
 */
#ifndef ICD_API_API_H
#define ICD_API_API_H

#include <jansson.h>
#include <pthread.h>

#include "base/error.h"
#include "icedruid/icedruid.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"

struct icd_storage {
    icd_fileio *io;
};

struct icd_table {
    icd_storage *storage; /* borrowed */
    ice_metadata *md;
};

/* A table handle over metadata loaded by the API (owned by the handle from then on, freed
 * on failure too). */
int icd_api_table_new(icd_table **out, icd_storage *storage, ice_metadata *md, icd_error *err);

/* The same for a spec: the public handle is the internal spec itself. */
typedef struct dr_spec dr_spec;
static inline icd_druid_spec *icd_api_druid_spec(dr_spec *s)
{
    return (icd_druid_spec *)s;
}
static inline dr_spec *icd_api_dr_spec(icd_druid_spec *s)
{
    return (dr_spec *)s;
}

/* The PasswordProvider that reads environment variable `var` on the Druid side (*out stays
 * NULL for var NULL), for the specs the API writes (druid.c, druid_serve.c). */
int icd_api_password_provider(const char *var, json_t **out, icd_error *err);

/* The public counters of a read. */
struct ice_read_stats;
void icd_api_read_stats(const struct ice_read_stats *in, icd_scan_stats *out);

/* What a caller's callback returned (rc, with the error it filled in cb_err) as the
 * read's result: 0, or its error (or "the WHAT callback stopped the read") with a
 * negative code (ICD_ECANCELED for a positive rc). */
int icd_api_callback_result(int rc, const icd_error *cb_err, const char *what, icd_error *err);

/* The typed batch sink (batch.c) of one task's read: `sink` is filled with its callbacks;
 * full batches go to fn (under `serialise` when not NULL); finish hands over the last one. */
struct ice_field;
struct ice_row_sink;
int icd_api_batch_new(icd_batch **out, const struct ice_field *const *fields, size_t ncols,
                      size_t task, icd_batch_fn fn, void *ctx, pthread_mutex_t *serialise,
                      struct ice_row_sink *sink, icd_error *err);
int icd_api_batch_finish(icd_batch *b, icd_error *err);
void icd_api_batch_free(icd_batch *b);

typedef struct dr_plan dr_plan;

struct icd_druid_plan {
    dr_plan *plan;
    const dr_spec *spec; /* borrowed */
};

#endif
