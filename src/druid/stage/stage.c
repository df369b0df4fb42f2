/*
 * `icedruid stage` (see stage.h): plan -> per-file decision -> for each materialized
 * task, its content-addressed name; if nothing is there yet, the merge-on-read reader
 * streams the task's surviving rows into the Parquet or Avro writer, which streams the
 * bytes to a temporary file that is then published (rename, or an S3 upload). Finally
 * the spec to submit lists raw and staged files in the user's warehouseSource.
 */
#include "druid/stage/stage.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/hash.h"
#include "base/parallel.h"
#include "druid/plan/catalog_load.h"
#include "druid/plan/rewrite.h"
#include "formats/avro/writer_ice.h"
#include "formats/parquet/parquet.h"
#include "iceberg/pq_write.h"
#include "iceberg/reader.h"
#include "iceberg/schema.h"
#include "icedruid/icedruid.h"
#include "io/s3.h"

#define STAGE_IO_BUF ((size_t)1 << 20)

struct dr_stage {
    const dr_plan *plan;
    icd_fileio *io;
    dr_stage_opts opts;
    char *to; /* LOCATION without trailing '/', absolute when local */
    bool s3;
    ice_scan_reader *reader;
    char **locations;       /* per task: what the spec lists */
    int64_t *bytes;         /* per task: staged file size */
    ice_read_stats *rstats; /* per task: the read of a written file */
    bool *written;
    size_t *todo; /* materialized task indexes */
    size_t ntodo;
    dr_stage_stats stats;
};

/* ---- names ----------------------------------------------------------------------------- */

static const char *table_identity(const ice_metadata *md)
{
    const char *u = ice_metadata_table_uuid(md);
    return u ? u : ice_metadata_location(md);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The codec of materialized files: the table's write property, Iceberg's default when
 * unset (zstd for Parquet, gzip = deflate for Avro). */
static const char *codec_property(const ice_metadata *md, ice_file_format f)
{
    const char *v =
        ice_metadata_property(md, f == ICE_FORMAT_AVRO ? "write.avro.compression-codec"
                                                       : "write.parquet.compression-codec");
    if (!v) v = f == ICE_FORMAT_AVRO ? "gzip" : "zstd";
    return v;
}

/* The compression level of materialized files: the table's write property
 * (write.parquet.compression-level, write.avro.compression-level) where the codec has
 * levels, else what Iceberg's writers use: Avro (org.apache.iceberg.avro.Avro) gzip =
 * deflate at 9 and zstd at 1; Parquet (parquet-java's codecs) zstd at 3 and gzip at
 * zlib's 6, the writers' defaults (0 here). `*set` (may be NULL): the property applies. */
static int level_property(const ice_metadata *md, ice_file_format f, int *level, bool *set,
                          icd_error *err)
{
    bool avro = f == ICE_FORMAT_AVRO;
    const char *codec = codec_property(md, f);
    bool zstd = !strcasecmp(codec, "zstd");
    bool deflate = !strcasecmp(codec, "gzip") || (avro && !strcasecmp(codec, "deflate"));
    *level = !avro ? 0 : deflate ? 9 : zstd ? 1 : 0;
    if (set) *set = false;
    const char *key = avro ? "write.avro.compression-level" : "write.parquet.compression-level";
    const char *v = ice_metadata_property(md, key);
    if (!v || (!zstd && !deflate)) return 0; /* snappy, uncompressed: no levels (ignored) */
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    int lo = zstd ? 1 : 0, hi = zstd ? 22 : 9;
    if (end == v || *end || errno || n < lo || n > hi)
        return icd_fail(err, ICD_EUNSUPPORTED, ice_metadata_file(md), -1,
                        "table property %s '%s': not a %s level (an integer from %d to %d)", key, v,
                        zstd ? "zstd" : "gzip", lo, hi);
    *level = (int)n;
    if (set) *set = true;
    return 0;
}

int dr_stage_name(const ice_metadata *md, const ice_schema *schema, const ice_scan_task *t,
                  icd_buf *out, icd_error *err)
{
    const ice_content_file *d = t->data;
    int level;
    bool level_set;
    ICD_TRY(level_property(md, d->format, &level, &level_set, err));
    icd_buf in = ICD_BUF_INIT;
    /* "icedruid-stage N": the writer's output version (2: Avro gzip and zstd at Iceberg's
     * default levels, and times stored as TIME(MILLIS) / TIME(NANOS) written as
     * TIME(MICROS)) */
    icd_buf_printf(&in, "icedruid-stage 2\n%s\n%s\n%s\n%s\n", ICEDRUID_VERSION, table_identity(md),
                   d->path, ice_file_format_name(d->format));
    icd_buf_printf(&in, "%s\n", codec_property(md, d->format));
    if (level_set) icd_buf_printf(&in, "level %d\n", level);
    char **dl = calloc(t->ndeletes ? t->ndeletes : 1, sizeof *dl);
    if (!dl) {
        icd_buf_free(&in);
        return icd_fail_nomem(err);
    }
    int rc = 0;
    for (size_t i = 0; i < t->ndeletes && !rc; i++) {
        const ice_content_file *x = t->deletes[i];
        size_t n = strlen(x->path) + 64;
        dl[i] = malloc(n);
        if (!dl[i])
            rc = icd_fail_nomem(err);
        else
            snprintf(dl[i], n, "%s#%" PRId64 "#%" PRId64 "#%d", x->path, x->content_offset,
                     x->content_size, (int)x->content);
    }
    if (!rc) {
        qsort(dl, t->ndeletes, sizeof *dl, cmp_str);
        for (size_t i = 0; i < t->ndeletes; i++)
            icd_buf_printf(&in, "%s\n", dl[i]);
        icd_buf_puts(&in, "schema ");
        ice_schema_to_json(&in, schema);
        const char *nm = ice_metadata_property(md, "schema.name-mapping.default");
        icd_buf_printf(&in, "\nmapping %s\n", nm ? nm : "");
        if (!icd_buf_ok(&in)) rc = icd_fail_nomem(err);
    }
    for (size_t i = 0; i < t->ndeletes; i++)
        free(dl[i]);
    free(dl);
    if (!rc) {
        uint64_t h1 = icd_hash_bytes(in.data, in.len);
        icd_buf_putc(&in, '\1');
        uint64_t h2 = icd_hash_bytes(in.data, in.len);
        const char *id = table_identity(md);
        uint32_t th = (uint32_t)(icd_hash_bytes(id, strlen(id)) >> 32);
        icd_buf_printf(out, "icd-%08" PRIx32 "-%016" PRIx64 "%016" PRIx64 ".%s", th, h1, h2,
                       d->format == ICE_FORMAT_AVRO ? "avro" : "parquet");
        if (!icd_buf_ok(out)) rc = icd_fail_nomem(err);
    }
    icd_buf_free(&in);
    return rc;
}

/* The "icd-<table>-" prefix of a table's staged names. */
static void table_prefix(const ice_metadata *md, char out[16])
{
    const char *id = table_identity(md);
    snprintf(out, 16, "icd-%08" PRIx32 "-", (uint32_t)(icd_hash_bytes(id, strlen(id)) >> 32));
}

/* ---- output files ------------------------------------------------------------------------ */

typedef struct out_file {
    int fd;
    const char *path;
    icd_buf buf;
    int64_t bytes;
} out_file;

static int out_flush(out_file *f, icd_error *err)
{
    size_t off = 0;
    while (off < f->buf.len) {
        ssize_t w = write(f->fd, f->buf.data + off, f->buf.len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return icd_fail(err, ICD_EIO, f->path, -1, "cannot write: %s", strerror(errno));
        off += (size_t)w;
    }
    icd_buf_clear(&f->buf);
    return 0;
}

static int out_write(void *ctx, const void *p, size_t n, icd_error *err)
{
    out_file *f = ctx;
    if (f->buf.len + n > STAGE_IO_BUF) ICD_TRY(out_flush(f, err));
    if (n >= STAGE_IO_BUF) {
        icd_buf_append(&f->buf, p, n);
        if (!icd_buf_ok(&f->buf)) return icd_fail_nomem(err);
        ICD_TRY(out_flush(f, err));
    } else {
        icd_buf_append(&f->buf, p, n);
        if (!icd_buf_ok(&f->buf)) return icd_fail_nomem(err);
    }
    f->bytes += (int64_t)n;
    return 0;
}

static int pq_codec_of(const ice_metadata *md, const char *name, int *out, icd_error *err)
{
    if (!strcasecmp(name, "zstd"))
        *out = PQ_CODEC_ZSTD;
    else if (!strcasecmp(name, "snappy"))
        *out = PQ_CODEC_SNAPPY;
    else if (!strcasecmp(name, "gzip"))
        *out = PQ_CODEC_GZIP;
    else if (!strcasecmp(name, "uncompressed") || !strcasecmp(name, "none"))
        *out = PQ_CODEC_UNCOMPRESSED;
    else
        return icd_fail(err, ICD_EUNSUPPORTED, ice_metadata_file(md), -1,
                        "table property write.parquet.compression-codec '%s': icedruid writes "
                        "zstd, snappy, "
                        "gzip or uncompressed",
                        name);
    return 0;
}

static int icd_avro_codec_of(const ice_metadata *md, const char *name, icd_avro_codec *out,
                             icd_error *err)
{
    if (!strcasecmp(name, "gzip") || !strcasecmp(name, "deflate"))
        *out = AVRO_CODEC_DEFLATE;
    else if (!strcasecmp(name, "snappy"))
        *out = AVRO_CODEC_SNAPPY;
    else if (!strcasecmp(name, "zstd"))
        *out = AVRO_CODEC_ZSTD;
    else if (!strcasecmp(name, "uncompressed") || !strcasecmp(name, "none"))
        *out = AVRO_CODEC_NULL;
    else
        return icd_fail(err, ICD_EUNSUPPORTED, ice_metadata_file(md), -1,
                        "table property write.avro.compression-codec '%s': icedruid writes gzip, "
                        "snappy, zstd "
                        "or uncompressed",
                        name);
    return 0;
}

/* What a materialized file is read from. */
typedef struct stage_src {
    icd_fileio *io;
    const ice_metadata *md;
    const ice_schema *schema;
    ice_scan_reader *reader;
} stage_src;

static int write_parquet(const stage_src *st, const ice_scan_task *t, out_file *of,
                         ice_read_stats *rs, icd_error *err)
{
    const ice_metadata *md = st->md;
    const ice_schema *schema = st->schema;
    const ice_field *fields = schema->root.fields;
    size_t nfields = schema->root.nfields;
    pq_write_options po = {0};
    ICD_TRY(pq_codec_of(md, codec_property(md, ICE_FORMAT_PARQUET), &po.codec, err));
    ICD_TRY(level_property(md, ICE_FORMAT_PARQUET, &po.level, NULL, err));
    pq_file *orig = NULL;
    ICD_TRY(pq_file_open(st->io, t->data->path, &orig, err));
    icd_arena arena = ICD_ARENA_INIT;
    pq_schema_element *els = NULL;
    size_t nels = 0;
    icd_buf sj = ICD_BUF_INIT;
    ice_schema_to_json(&sj, schema);
    pq_kv kv = {{"iceberg.schema", 14}, {sj.data, (uint32_t)sj.len}};
    po.kv = &kv;
    po.num_kv = icd_buf_ok(&sj) ? 1 : 0;
    pq_writer *w = NULL;
    ice_pqw_sink *ps = NULL;
    int rc = icd_buf_ok(&sj) ? 0 : icd_fail_nomem(err);
    if (!rc) rc = ice_pqw_schema(fields, nfields, pq_file_schema(orig), &arena, &els, &nels, err);
    if (!rc) rc = pq_writer_new(els, nels, &po, out_write, of, &w, err);
    if (!rc) rc = ice_pqw_sink_new(w, fields, nfields, &ps, err);
    if (!rc) rc = ice_scan_reader_read_task(st->reader, t, ice_pqw_sink_get(ps), rs, err);
    if (!rc) rc = ice_pqw_sink_finish(ps, err);
    if (!rc) rc = pq_writer_close(w, err);
    ice_pqw_sink_free(ps);
    pq_writer_free(w);
    icd_buf_free(&sj);
    icd_arena_free(&arena);
    pq_file_close(orig);
    return rc;
}

static int write_avro(const stage_src *st, const ice_scan_task *t, const char *name, out_file *of,
                      ice_read_stats *rs, icd_error *err)
{
    const ice_metadata *md = st->md;
    const ice_schema *schema = st->schema;
    icd_avro_write_options ao = {0};
    ICD_TRY(icd_avro_codec_of(md, codec_property(md, ICE_FORMAT_AVRO), &ao.codec, err));
    ICD_TRY(level_property(md, ICE_FORMAT_AVRO, &ao.level, NULL, err));
    icd_buf sj = ICD_BUF_INIT;
    int rc = icd_avro_ice_schema_json(schema->root.fields, schema->root.nfields, &sj, err);
    /* the sync marker: 16 bytes of the name's content hash (hex digits after the prefix) */
    uint8_t sync[16] = {0};
    const char *hex = strrchr(name, '-');
    for (size_t i = 0; hex && i < 16 && hex[1 + 2 * i] && hex[2 + 2 * i]; i++) {
        char two[3] = {hex[1 + 2 * i], hex[2 + 2 * i], 0};
        sync[i] = (uint8_t)strtoul(two, NULL, 16);
    }
    icd_avro_writer *w = NULL;
    icd_avro_ice_sink *as = NULL;
    if (!rc) rc = icd_avro_writer_new(sj.data, sync, &ao, out_write, of, &w, err);
    if (!rc) rc = icd_avro_ice_sink_new(w, schema->root.fields, schema->root.nfields, &as, err);
    if (!rc) rc = ice_scan_reader_read_task(st->reader, t, icd_avro_ice_sink_get(as), rs, err);
    if (!rc) rc = icd_avro_writer_close(w, err);
    icd_avro_ice_sink_free(as);
    icd_avro_writer_free(w);
    icd_buf_free(&sj);
    return rc;
}

static int fsync_dir(const char *dir, icd_error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return icd_fail(err, ICD_EIO, dir, -1, "cannot open: %s", strerror(errno));
    int rc = fsync(fd) ? icd_fail(err, ICD_EIO, dir, -1, "fsync failed: %s", strerror(errno)) : 0;
    close(fd);
    return rc;
}

/* Writes the file of `t` into the temporary file `tmp` (created), synced and closed. */
static int write_tmp(const stage_src *src, const ice_scan_task *t, const char *name,
                     const char *tmp, int64_t *bytes, ice_read_stats *rs, icd_error *err)
{
    out_file of = {.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), .path = tmp};
    if (of.fd < 0) return icd_fail(err, ICD_EIO, tmp, -1, "cannot create: %s", strerror(errno));
    int rc = t->data->format == ICE_FORMAT_AVRO ? write_avro(src, t, name, &of, rs, err)
                                                : write_parquet(src, t, &of, rs, err);
    if (!rc) rc = out_flush(&of, err);
    if (!rc && fsync(of.fd))
        rc = icd_fail(err, ICD_EIO, tmp, -1, "fsync failed: %s", strerror(errno));
    if (close(of.fd) && !rc)
        rc = icd_fail(err, ICD_EIO, tmp, -1, "close failed: %s", strerror(errno));
    icd_buf_free(&of.buf);
    *bytes = of.bytes;
    if (rc) unlink(tmp);
    return rc;
}

/* Temporary names unique within the process too (several threads write at once). */
static atomic_uint tmp_seq;

int dr_stage_write_local(icd_fileio *io, const ice_metadata *md, const ice_schema *schema,
                         ice_scan_reader *reader, const ice_scan_task *t, const char *dir,
                         const char *name, int64_t *bytes, ice_read_stats *rs, icd_error *err)
{
    stage_src src = {io, md, schema, reader};
    char tmp[4096], final[4096];
    snprintf(final, sizeof final, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.%ld.%u.tmp", dir, name, (long)getpid(),
             atomic_fetch_add(&tmp_seq, 1));
    ICD_TRY(write_tmp(&src, t, name, tmp, bytes, rs, err));
    if (rename(tmp, final)) {
        int e = errno;
        unlink(tmp);
        return icd_fail(err, ICD_EIO, final, -1, "cannot rename the temporary file to it: %s",
                        strerror(e));
    }
    return fsync_dir(dir, err);
}

/* Writes task `ti` to its staged name unless something is there already. */
static int stage_one(void *ctx, size_t item, icd_error *err)
{
    dr_stage *st = ctx;
    size_t ti = st->todo[item];
    const ice_scan_task *t = ice_scan_plan_task(dr_plan_scan(st->plan), ti);
    const char *final = st->locations[ti];
    const char *name = strrchr(final, '/') + 1;
    if (!st->s3) {
        struct stat sb;
        if (!stat(final, &sb)) {
            st->bytes[ti] = (int64_t)sb.st_size;
            if (st->opts.on_file) st->opts.on_file(st->opts.on_file_ctx, t->data->file_size, 0);
            return 0;
        }
    } else {
        int ex = icd_fileio_exists(st->io, final, err);
        if (ex < 0) return ex;
        if (ex > 0) {
            icd_file *f = NULL;
            ICD_TRY(icd_file_open(st->io, final, &f, err));
            st->bytes[ti] = (int64_t)icd_file_size(f);
            icd_file_close(f);
            if (st->opts.on_file) st->opts.on_file(st->opts.on_file_ctx, t->data->file_size, 0);
            return 0;
        }
    }
    ice_read_stats *rs = &st->rstats[ti];
    int64_t bytes = 0;
    int rc;
    if (!st->s3) { /* written in the directory, renamed into place */
        rc = dr_stage_write_local(st->io, dr_plan_metadata(st->plan),
                                  dr_plan_stage_cols(st->plan)->schema, st->reader, t, st->to, name,
                                  &bytes, rs, err);
    } else { /* spooled to a local temporary file, then uploaded */
        char tmp[4096];
        const char *td = st->opts.tmp_dir;
        snprintf(tmp, sizeof tmp, "%s/.icd-stage-%ld-%zu.tmp", td && *td ? td : "/tmp",
                 (long)getpid(), ti);
        stage_src src = {st->io, dr_plan_metadata(st->plan), dr_plan_stage_cols(st->plan)->schema,
                         st->reader};
        rc = write_tmp(&src, t, name, tmp, &bytes, rs, err);
        if (!rc) {
            rc = icd_s3_upload_file(st->io, final, tmp, st->opts.part_bytes, err);
            unlink(tmp);
        }
    }
    if (!rc) {
        st->bytes[ti] = bytes;
        st->written[ti] = true;
        if (st->opts.on_file)
            st->opts.on_file(st->opts.on_file_ctx, t->data->file_size, rs->rows_emitted);
    } else {
        icd_error_wrap(err, "staging %s", t->data->path);
    }
    return rc;
}

/* ---- the run ----------------------------------------------------------------------------- */

/* mkdir -p */
int dr_make_dirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n >= sizeof buf) return -1;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) && errno != EEXIST) return -1;
        buf[i] = c;
    }
    return 0;
}

static int check_destination(dr_stage *st, icd_error *err)
{
    const json_t *ws = dr_spec_warehouse_source(dr_plan_spec(st->plan));
    const char *type = ws ? json_string_value(json_object_get(ws, "type")) : NULL;
    if (!type)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "the spec has no warehouseSource: stage lists raw and staged files in it");
    if (st->s3 && strcmp(type, "s3") != 0)
        return icd_fail(err, ICD_EINVALID, st->to, -1,
                        "--to is on S3 but the spec's warehouseSource is '%s': Druid reads the "
                        "staged files through it (use an s3 warehouseSource or a %s location)",
                        type, !strcmp(type, "local") ? "local/shared directory" : "readable");
    if (!st->s3 && strcmp(type, "local") != 0)
        return icd_fail(err, ICD_EINVALID, st->to, -1,
                        "--to is a local directory but the spec's warehouseSource is '%s': Druid "
                        "reads the staged files through it (stage to s3://... for an s3 source)",
                        type);
    if (!st->s3) {
        struct stat sb;
        if (stat(st->to, &sb) && dr_make_dirs(st->to))
            return icd_fail(err, ICD_EIO, st->to, -1, "cannot create the directory: %s",
                            strerror(errno));
        if (stat(st->to, &sb) || !S_ISDIR(sb.st_mode))
            return icd_fail(err, ICD_EINVALID, st->to, -1, "not a directory");
    }
    return 0;
}

int dr_stage_run(dr_plan *p, icd_fileio *io, const dr_stage_opts *o, dr_stage **out, icd_error *err)
{
    *out = NULL;
    ICD_TRY(dr_plan_decide(p, err));
    dr_stage *st = calloc(1, sizeof *st);
    if (!st) return icd_fail_nomem(err);
    st->plan = p;
    st->io = io;
    st->opts = *o;
    if (!st->opts.part_bytes) st->opts.part_bytes = (size_t)8 << 20;
    st->s3 = icd_s3_is_location(o->to);
    const ice_scan_plan *sp = dr_plan_scan(p);
    size_t n = ice_scan_plan_task_count(sp);
    size_t len = strlen(o->to);
    while (len > 1 && o->to[len - 1] == '/')
        len--;
    char *to = strndup(o->to, len);
    st->to = to && !st->s3 ? dr_absolute_path(to) : to;
    if (st->to != to) free(to);
    st->locations = calloc(n ? n : 1, sizeof *st->locations);
    st->bytes = calloc(n ? n : 1, sizeof *st->bytes);
    st->rstats = calloc(n ? n : 1, sizeof *st->rstats);
    st->written = calloc(n ? n : 1, sizeof *st->written);
    st->todo = calloc(n ? n : 1, sizeof *st->todo);
    int rc = (!st->to || !st->locations || !st->bytes || !st->rstats || !st->written || !st->todo)
                 ? icd_fail_nomem(err)
                 : check_destination(st, err);
    size_t orc = 0;
    const char *orc_path = NULL;
    icd_buf name = ICD_BUF_INIT;
    for (size_t i = 0; !rc && i < n; i++) {
        const ice_scan_task *t = ice_scan_plan_task(sp, i);
        st->stats.table_bytes += t->data->file_size;
        if (dr_plan_decision(p, i)->raw) {
            st->locations[i] = dr_plan_task_location(p, i);
            if (!st->locations[i]) rc = icd_fail_nomem(err);
            st->stats.raw_files++;
            st->stats.raw_bytes += t->data->file_size;
            continue;
        }
        if (t->data->format != ICE_FORMAT_PARQUET && t->data->format != ICE_FORMAT_AVRO) {
            orc++;
            orc_path = t->data->path;
            continue;
        }
        if (o->only && !o->only[i]) continue; /* not listed: no location, not staged */
        icd_buf_clear(&name);
        rc = dr_stage_name(dr_plan_metadata(p), dr_plan_stage_cols(p)->schema, t, &name, err);
        if (!rc) {
            size_t m = strlen(st->to) + name.len + 2;
            st->locations[i] = malloc(m);
            if (!st->locations[i])
                rc = icd_fail_nomem(err);
            else
                snprintf(st->locations[i], m, "%s/%s", st->to, name.data);
        }
        st->todo[st->ntodo++] = i;
        st->stats.source_bytes += t->data->file_size;
    }
    icd_buf_free(&name);
    if (!rc && orc)
        rc = icd_fail(err, ICD_EUNSUPPORTED, orc_path, -1,
                      "%zu ORC data file%s must be materialized (deletes or schema changes) and "
                      "icedruid has no ORC writer yet: ingest this table through `icedruid serve` "
                      "and `rewrite-spec --serve-url` instead",
                      orc, orc == 1 ? "" : "s");
    if (!rc && st->ntodo) {
        const dr_stage_cols *sc = dr_plan_stage_cols(p);
        rc = ice_scan_reader_new(io, dr_plan_metadata(p), dr_plan_schema(p),
                                 (const char *const *)sc->names, sc->n, &st->reader, err);
    }
    if (!rc) rc = icd_parallel_for(st->ntodo, o->threads, stage_one, st, err);
    for (size_t k = 0; !rc && k < st->ntodo; k++) {
        size_t i = st->todo[k];
        st->stats.staged_files++;
        st->stats.staged_bytes += st->bytes[i];
        if (st->written[i]) {
            st->stats.written_files++;
            st->stats.bytes_written += st->bytes[i];
            const ice_read_stats *r = &st->rstats[i];
            st->stats.rows_written += (int64_t)r->rows_emitted;
            st->stats.read.data_files += r->data_files;
            st->stats.read.rows_read += r->rows_read;
            st->stats.read.rows_deleted_position += r->rows_deleted_position;
            st->stats.read.rows_deleted_dv += r->rows_deleted_dv;
            st->stats.read.rows_deleted_equality += r->rows_deleted_equality;
            st->stats.read.rows_emitted += r->rows_emitted;
            st->stats.read.rows_skipped += r->rows_skipped;
            st->stats.read.delete_files_loaded += r->delete_files_loaded;
        } else {
            st->stats.skipped_files++;
        }
    }
    if (rc) {
        dr_stage_free(st);
        return rc;
    }
    *out = st;
    return 0;
}

void dr_stage_free(dr_stage *st)
{
    if (!st) return;
    size_t n = ice_scan_plan_task_count(dr_plan_scan(st->plan));
    for (size_t i = 0; st->locations && i < n; i++)
        free(st->locations[i]);
    free(st->locations);
    free(st->bytes);
    free(st->rstats);
    free(st->written);
    free(st->todo);
    free(st->to);
    ice_scan_reader_free(st->reader);
    free(st);
}

const dr_stage_stats *dr_stage_get_stats(const dr_stage *st)
{
    return &st->stats;
}

const char *dr_stage_location(const dr_stage *st)
{
    return st->to;
}

const char *dr_stage_file_location(const dr_stage *st, size_t i)
{
    return i < ice_scan_plan_task_count(dr_plan_scan(st->plan)) ? st->locations[i] : NULL;
}

int dr_stage_spec(const dr_stage *st, json_t **out, icd_error *err)
{
    *out = NULL;
    const dr_plan *p = st->plan;
    size_t n = ice_scan_plan_task_count(dr_plan_scan(p));
    if (st->opts.only)
        return icd_fail(err, ICD_EINTERNAL, NULL, -1, "a partial stage run has no whole spec");
    if (n == 0) { /* Druid's own iceberg source reads nothing, as rewrite-spec keeps it */
        *out = json_deep_copy(dr_spec_document(dr_plan_spec(p)));
        return *out ? 0 : icd_fail_nomem(err);
    }
    json_t *src = NULL;
    ICD_TRY(dr_warehouse_source_create(dr_spec_warehouse_source(dr_plan_spec(p)),
                                       (const char *const *)st->locations, n, &src, err));
    return dr_rewrite_with_source(p, src, out, err);
}

/* ---- gc ---------------------------------------------------------------------------------- */

/* Adds the staged names snapshot `snap` needs to `keep`. */
static int needed_names(const dr_plan *p, icd_fileio *io, int64_t snap, icd_map *keep,
                        icd_error *err)
{
    const ice_metadata *md = dr_plan_metadata(p);
    ice_scan_opts so = {0};
    so.select.kind = ICE_SELECT_ID;
    so.select.snapshot_id = snap;
    so.case_sensitive = true;
    ice_scan_plan *sp = NULL;
    ICD_TRY(ice_scan_plan_build(io, md, &so, &sp, err));
    dr_decide_ctx *dc = NULL;
    dr_stage_cols sc;
    int rc = dr_stage_cols_init(&sc, dr_plan_spec(p), dr_plan_projects_staged(p),
                                ice_scan_plan_schema(sp), err);
    if (rc) {
        ice_scan_plan_free(sp);
        return rc;
    }
    rc = dr_decide_new(io, md, ice_scan_plan_schema(sp), &dc, err);
    icd_buf name = ICD_BUF_INIT;
    for (size_t i = 0; !rc && i < ice_scan_plan_task_count(sp); i++) {
        dr_file_decision d;
        const ice_scan_task *t = ice_scan_plan_task(sp, i);
        rc = dr_decide_task(dc, t, &d, err);
        if (rc || d.raw) continue;
        icd_buf_clear(&name);
        rc = dr_stage_name(md, sc.schema, t, &name, err);
        if (!rc)
            rc =
                icd_map_put(keep, name.data, name.len, icd_hash_bytes(name.data, name.len), 1, err);
    }
    icd_buf_free(&name);
    dr_decide_free(dc);
    dr_stage_cols_free(&sc);
    ice_scan_plan_free(sp);
    return rc;
}

int dr_stage_gc(const dr_plan *p, icd_fileio *io, const char *to, int64_t after_snapshot,
                size_t *removed, size_t *kept, icd_error *err)
{
    *removed = *kept = 0;
    const ice_metadata *md = dr_plan_metadata(p);
    const ice_snapshot *after = ice_metadata_snapshot(md, after_snapshot);
    if (!after)
        return icd_fail(err, ICD_ENOTFOUND, ice_metadata_file(md), -1,
                        "--gc: snapshot %" PRId64 " is not in the table's metadata",
                        after_snapshot);
    icd_map *keep = NULL;
    ICD_TRY(icd_map_new(&keep, 64, err));
    int rc = 0;
    const ice_snapshot *cur = ice_metadata_current_snapshot(md);
    for (size_t i = 0; !rc && i < ice_metadata_snapshot_count(md); i++) {
        const ice_snapshot *s = ice_metadata_snapshot_at(md, i);
        bool newer =
            s->sequence_number > after->sequence_number ||
            (s->sequence_number == after->sequence_number && s->timestamp_ms > after->timestamp_ms);
        if (newer || s == cur) rc = needed_names(p, io, s->snapshot_id, keep, err);
    }
    char prefix[16];
    table_prefix(md, prefix);
    char **names = NULL;
    size_t count = 0;
    bool s3 = icd_s3_is_location(to);
    if (!rc) rc = icd_fileio_list_dir(io, to, &names, &count, err);
    icd_buf loc = ICD_BUF_INIT;
    for (size_t i = 0; !rc && i < count; i++) {
        const char *nm = names[i];
        size_t nl = strlen(nm);
        if (strncmp(nm, prefix, strlen(prefix)) != 0) continue;
        if (!(nl > 8 && !strcmp(nm + nl - 8, ".parquet")) &&
            !(nl > 5 && !strcmp(nm + nl - 5, ".avro")))
            continue;
        if (icd_map_contains(keep, nm, nl, icd_hash_bytes(nm, nl))) {
            (*kept)++;
            continue;
        }
        icd_buf_clear(&loc);
        icd_buf_printf(&loc, "%s/%s", to, nm);
        if (!icd_buf_ok(&loc)) {
            rc = icd_fail_nomem(err);
            break;
        }
        if (s3)
            rc = icd_s3_delete(io, loc.data, err);
        else if (unlink(loc.data))
            rc = icd_fail(err, ICD_EIO, loc.data, -1, "cannot remove: %s", strerror(errno));
        if (!rc) (*removed)++;
    }
    icd_buf_free(&loc);
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
    icd_map_free(keep);
    return rc;
}
