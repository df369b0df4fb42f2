/*
 * TEMPORARY stand-in for druid/diff.c (branch p2diff) so that branch p2sync links before
 * the diff computation is merged. Removed by the merge of p2diff.
 */
#include "druid/diff.h"

#include <stdlib.h>

int dr_diff_compute(const dr_spec *spec, icd_fileio *io, const dr_diff_opts *opts, dr_diff *out,
                    icd_error *err)
{
    (void)spec;
    (void)io;
    (void)opts;
    (void)out;
    return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1, "the snapshot diff is not built in yet");
}

int dr_diff_write_json(const dr_diff *d, icd_buf *out, icd_error *err)
{
    (void)d;
    (void)out;
    return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1, "the snapshot diff is not built in yet");
}

void dr_diff_free(dr_diff *d)
{
    free(d->replace);
    free(d->append);
    free(d->data_source);
}
