/*
 * tool_scan_json_bench: the cost of the scan row writer (iceberg/scan_json.c) per value as
 * the row gets wider: rows of W long columns (names "column_<k>") for W = 8 … 512, written
 * into one buffer that is cleared per 64 KiB. A flat ns/value across widths means names
 * are not re-encoded past any fixed table size.
 *
 *   tool_scan_json_bench [VALUES_PER_WIDTH]   (default 20,000,000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "iceberg/scan_json.h"

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long long values = argc > 1 ? atoll(argv[1]) : 20000000LL;
    static char names[512][24];
    size_t lens[512];
    for (int k = 0; k < 512; k++)
        lens[k] = (size_t)snprintf(names[k], sizeof names[k], "column_%d", k);
    int widths[] = {8, 32, 64, 65, 96, 128, 300, 512};
    printf("width  rows      ns/value\n");
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        int width = widths[w];
        long long rows = values / width;
        icd_buf out = ICD_BUF_INIT;
        ice_scan_json j = {0};
        j.out = &out;
        ice_row_sink s;
        ice_scan_json_sink(&j, &s);
        icd_error err;
        double t0 = cpu_s();
        for (long long r = 0; r < rows; r++) {
            s.begin_row(s.ctx, NULL, r);
            for (int k = 0; k < width; k++) {
                s.field(s.ctx, names[k], lens[k]);
                s.i64(s.ctx, r + k);
            }
            s.end_row(s.ctx, &err);
            if (out.len > (1u << 16)) icd_buf_clear(&out);
        }
        double t = cpu_s() - t0;
        printf("%5d  %8lld  %8.2f\n", width, rows, t * 1e9 / (double)(rows * width));
        ice_scan_json_free(&j);
        icd_buf_free(&out);
    }
    return 0;
}
