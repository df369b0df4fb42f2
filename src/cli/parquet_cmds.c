/*
 * `cat` and `inspect` for parquet files. (Placeholder until the parquet reader lands.)
 */
#include "cli/cli.h"

int cli_cat_parquet(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    (void)io;
    (void)out;
    return icd_fail(err, ICD_EUNSUPPORTED, path, -1, "parquet reading is not implemented yet");
}

int cli_inspect_parquet(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    (void)io;
    (void)out;
    return icd_fail(err, ICD_EUNSUPPORTED, path, -1, "parquet inspection is not implemented yet");
}
