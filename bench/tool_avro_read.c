/*
 * Decode-speed benchmark of formats/avro: reads one container file three ways and prints
 * records/s for each, by CPU time (stable on a shared machine) and wall time:
 *   skip    step over every record (what `inspect` and a pruned planner do)
 *   decode  build the value tree of every record, one arena reset per block (the
 *           manifest reader's way)
 *   json    decode + JSON text of every record, output discarded (`cat` without the pipe)
 * Usage: tool_avro_read [-n REPEAT] FILE.avro [skip|decode|json]...
 * REPEAT reads the file that many times (small manifests: the per-file cost of opening,
 * parsing the header and schema counts then).
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "formats/avro/container.h"
#include "formats/avro/json.h"
#include "io/fileio.h"

static double now(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(icd_fileio *io, const char *path, const char *mode, long repeat)
{
    icd_error err;
    icd_error_clear(&err);
    icd_avro_reader *r;
    double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
    uint64_t n = 0, bytes = 0;
    int rc = 0;
    /* one arena and buffer for all files, as a planner reading many manifests keeps them */
    icd_arena arena = ICD_ARENA_INIT;
    icd_buf out = ICD_BUF_INIT;
    for (long rep = 0; rep < repeat && !rc; rep++) {
        if ((rc = icd_avro_reader_open(io, path, &r, &err)) != 0) break;
        bool eof = false;
        /* block by block, one arena reset per block: the manifest reader's pattern */
        while (!rc && !(rc = icd_avro_reader_next_block(r, &eof, &err)) && !eof) {
            icd_arena_reset(&arena);
            for (int64_t i = icd_avro_reader_block_count(r); i > 0 && !rc; i--) {
                icd_avro_value v;
                if (!strcmp(mode, "skip")) {
                    rc = icd_avro_reader_skip(r, &eof, &err);
                } else {
                    rc = icd_avro_reader_next(r, &arena, &v, &eof, &err);
                    if (!rc && !strcmp(mode, "json")) {
                        rc = icd_avro_value_json(&out, &v, &err);
                        bytes += out.len + 1;
                        icd_buf_clear(&out);
                    }
                }
            }
        }
        n += icd_avro_reader_records_read(r);
        icd_avro_reader_free(r);
    }
    icd_arena_free(&arena);
    icd_buf_free(&out);
    if (rc) goto fail;
    double cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0, wall = now(CLOCK_MONOTONIC) - w0;
    printf("%-6s %10llu records  cpu %7.3f s  %12.0f records/s (cpu)  %12.0f records/s "
           "(wall)",
           mode, (unsigned long long)n, cpu, (double)n / (cpu > 0 ? cpu : 1e-9),
           (double)n / (wall > 0 ? wall : 1e-9));
    if (repeat > 1) printf("  %.1f us/file (cpu)", cpu * 1e6 / (double)repeat);
    if (bytes) printf("  %.0f MB JSON", (double)bytes / 1e6);
    printf("\n");
    return 0;
fail:;
    char line[2400];
    icd_error_format(&err, line, sizeof line);
    fprintf(stderr, "tool_avro_read: %s\n", line);
    return 1;
}

int main(int argc, char **argv)
{
    long repeat = 1;
    if (argc > 2 && !strcmp(argv[1], "-n")) {
        repeat = atol(argv[2]);
        argc -= 2;
        argv += 2;
    }
    if (argc < 2 || repeat < 1) {
        fprintf(stderr, "usage: tool_avro_read [-n REPEAT] FILE.avro [skip|decode|json]...\n");
        return 2;
    }
    icd_fileio *io;
    icd_error err;
    if (icd_fileio_new(&io, &err)) return 1;
    int rc = 0;
    if (argc == 2) {
        rc |= run(io, argv[1], "skip", repeat);
        rc |= run(io, argv[1], "decode", repeat);
        rc |= run(io, argv[1], "json", repeat);
    }
    for (int i = 2; i < argc; i++)
        rc |= run(io, argv[1], argv[i], repeat);
    icd_fileio_free(io);
    return rc;
}
