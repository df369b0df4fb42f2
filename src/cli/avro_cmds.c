/*
 * `cat` and `inspect` for avro files. (Placeholder until the avro reader lands.)
 */
#include "cli/cli.h"

int cli_cat_avro(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    (void)io;
    (void)out;
    return icd_fail(err, ICD_EUNSUPPORTED, path, -1, "avro reading is not implemented yet");
}

int cli_inspect_avro(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    (void)io;
    (void)out;
    return icd_fail(err, ICD_EUNSUPPORTED, path, -1, "avro inspection is not implemented yet");
}
