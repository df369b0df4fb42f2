/*
 * Helpers shared by the subcommands: error reporting, buffered output, format sniffing.
 */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <string.h>

#include "cli/cli.h"
#include "io/s3.h"

extern char **environ;

int cli_fileio_new(icd_fileio **out, icd_error *err)
{
    ICD_TRY(icd_fileio_new(out, err));
    int rc = icd_fileio_set_environment(*out, (const char *const *)environ, err);
    if (rc) {
        icd_fileio_free(*out);
        *out = NULL;
    }
    return rc;
}

int cli_report(const icd_error *err)
{
    char line[2400];
    icd_error_format(err, line, sizeof line);
    fprintf(stderr, "icedruid: %s\n", line);
    return CLI_FAILED;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "icedruid %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'icedruid --help')\n");
    va_end(ap);
    return CLI_USAGE;
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

/* Every data file allocates its column-chunk, page and batch buffers (a few MiB) and frees
 * them when it is done. With glibc's defaults that memory goes back to the kernel (munmap,
 * heap trimming) and the next file faults it in again, 4 KiB at a time: a third of the CPU
 * time of a bench2m scan. Keeping freed memory in the heap lets the next file reuse it;
 * peak RSS is unchanged (it is set by the largest file). */
void cli_keep_freed_memory(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
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
