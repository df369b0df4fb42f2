/*
 * The inspection commands' helpers (cli/inspect.h): their FileIO, the internal handles
 * behind a table opened by cli_table_open (through api/api.h: the one place where cli/
 * reaches below the public API, for inspection only), buffered output and format sniffing.
 */
#include <errno.h>
#include <string.h>

#include "api/api.h"
#include "cli/inspect.h"

int cli_fileio_new(icd_fileio **io, icd_error *err)
{
    *io = NULL;
    icd_storage *s;
    ICD_TRY(cli_storage_new(&s, err));
    /* the FileIO outlives its handle (the retry report has no context to dangle) */
    *io = s->io;
    s->io = NULL;
    icd_storage_free(s);
    return 0;
}

icd_fileio *cli_storage_fileio(icd_storage *s)
{
    return s->io;
}

const ice_metadata *cli_table_metadata(const icd_table *t)
{
    return t->md;
}

ice_snapshot_selector cli_table_selector(const cli_table_args *a)
{
    ice_snapshot_selector sel = {ICE_SELECT_CURRENT, a->snapshot_id, a->ref, a->as_of_ms};
    switch (a->snapshot) {
    case ICD_SNAPSHOT_ID:
        sel.kind = ICE_SELECT_ID;
        break;
    case ICD_SNAPSHOT_AS_OF:
        sel.kind = ICE_SELECT_AS_OF;
        break;
    case ICD_SNAPSHOT_REF:
        sel.kind = ICE_SELECT_REF;
        break;
    default:
        break;
    }
    return sel;
}

void cli_out_init(cli_out *o, FILE *fp)
{
    o->fp = fp;
    o->buf = (icd_buf)ICD_BUF_INIT;
    o->failed = false;
    o->write = NULL;
    o->ctx = NULL;
}

static void out_write(cli_out *o)
{
    if (o->write) {
        if (o->buf.len && !o->failed) o->write(o);
        icd_buf_clear(&o->buf);
        return;
    }
    if (o->buf.len && !o->failed && fwrite(o->buf.data, 1, o->buf.len, o->fp) != o->buf.len)
        o->failed = true;
    icd_buf_clear(&o->buf);
}

void cli_out_maybe_flush(cli_out *o)
{
    if (o->buf.len >= (1u << 18)) out_write(o);
}

int cli_out_finish(cli_out *o, icd_error *err)
{
    bool oom = o->buf.oom;
    out_write(o);
    icd_buf_free(&o->buf);
    if (o->fp && fflush(o->fp) != 0) o->failed = true;
    if (oom) return icd_fail_nomem(err);
    if (o->failed)
        return icd_fail(err, ICD_EIO, NULL, -1, "cannot write output: %s", strerror(errno));
    return 0;
}

int cli_detect_format(icd_fileio *io, const char *path, cli_format *fmt, icd_error *err)
{
    *fmt = CLI_FMT_UNKNOWN;
    icd_file *f;
    ICD_TRY(icd_file_open(io, path, &f, err));
    unsigned char head[4] = {0};
    size_t n = icd_file_size(f) < 4 ? (size_t)icd_file_size(f) : 4;
    int rc = icd_file_read_at(f, 0, head, n, err);
    icd_file_close(f);
    if (rc) return rc;
    if (n >= 4 && !memcmp(head, "PAR1", 4))
        *fmt = CLI_FMT_PARQUET;
    else if (n >= 4 && !memcmp(head, "PARE", 4))
        *fmt = CLI_FMT_PARQUET; /* encrypted footer; the reader reports it */
    else if (n >= 4 && !memcmp(head, "Obj\x01", 4))
        *fmt = CLI_FMT_AVRO;
    else if (n >= 4 && !memcmp(head, "PFA1", 4))
        *fmt = CLI_FMT_PUFFIN;
    else if (n >= 3 && !memcmp(head, "ORC", 3))
        *fmt = CLI_FMT_ORC;
    else if (n >= 1 && (head[0] == '{' || head[0] == ' ' || head[0] == '\n'))
        *fmt = CLI_FMT_JSON;
    else {
        const char *dot = strrchr(path, '.');
        if (dot && (!strcmp(dot, ".parquet") || !strcmp(dot, ".parq")))
            *fmt = CLI_FMT_PARQUET; /* let the Parquet reader explain what is wrong */
        else if (dot && !strcmp(dot, ".avro"))
            *fmt = CLI_FMT_AVRO;
    }
    return 0;
}
