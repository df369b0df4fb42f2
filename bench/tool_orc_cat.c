/*
 * In-process ORC read benchmark: reads FILE... ROUNDS times through the batch reader
 * (orc_reader) and, with --json, formats every row as `cat` does; prints rows/s of CPU
 * time (CLOCK_PROCESS_CPUTIME_ID), so start-up and other processes' load do not count.
 * Usage: tool_orc_cat [--json] ROUNDS FILE...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "formats/orc/orc.h"
#include "formats/orc/orc_json.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int a = 1;
    bool json = false;
    if (a < argc && !strcmp(argv[a], "--json")) {
        json = true;
        a++;
    }
    if (argc - a < 2) {
        fprintf(stderr, "usage: tool_orc_cat [--json] ROUNDS FILE...\n");
        return 2;
    }
    int rounds = atoi(argv[a++]);
    icd_error err;
    icd_fileio *io;
    if (icd_fileio_new(&io, &err)) return 1;
    icd_buf b = ICD_BUF_INIT;
    uint64_t rows = 0;
    double t0 = cpu_now();
    for (int r = 0; r < rounds; r++) {
        for (int i = a; i < argc; i++) {
            orc_file *f;
            orc_reader *rd;
            if (orc_file_open(&f, io, argv[i], NULL, &err) || orc_reader_open(&rd, f, NULL, &err)) {
                fprintf(stderr, "%s: %s\n", argv[i], err.message);
                return 1;
            }
            orc_batch *bt;
            int rc;
            while ((rc = orc_reader_next(rd, &bt, &err)) > 0) {
                rows += bt->n;
                if (json)
                    for (size_t k = 0; k < bt->n; k++) {
                        icd_buf_clear(&b);
                        orc_json_row(&b, bt, k, 9);
                    }
            }
            if (rc < 0) {
                fprintf(stderr, "%s: %s\n", argv[i], err.message);
                return 1;
            }
            orc_reader_free(rd);
            orc_file_free(f);
        }
    }
    double t = cpu_now() - t0;
    printf("%s%d files x %d rounds: %llu rows in %.3f s CPU = %.0f rows/s\n",
           json ? "decode+JSON: " : "decode: ", argc - a, rounds, (unsigned long long)rows, t,
           (double)rows / t);
    icd_buf_free(&b);
    icd_fileio_free(io);
    return 0;
}
