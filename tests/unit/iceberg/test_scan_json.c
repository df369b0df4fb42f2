/*
 * The scan row writer (iceberg/scan_json.c) through its ice_row_sink: rows of any width
 * (the name table grows past its first 64 slots), names longer than an inline slot, names
 * that need escaping, fields out of their usual order, nested values, and reuse after
 * ice_scan_json_free. The expected text is built independently here from the names.
 */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "iceberg/scan_json.h"
#include "test.h"

#define MAXCOLS 400

static char names[MAXCOLS][200];
static size_t name_len[MAXCOLS];

/* Column k's name: "c<k>", every 7th one long (150 bytes), every 11th one with characters
 * JSON must escape. */
static void make_names(void)
{
    for (int k = 0; k < MAXCOLS; k++) {
        if (k % 7 == 3) {
            int n = snprintf(names[k], sizeof names[k], "long_%d_", k);
            for (; n < 150; n++)
                names[k][n] = (char)('a' + n % 26);
            names[k][n] = '\0';
        } else if (k % 11 == 5) {
            snprintf(names[k], sizeof names[k], "q\"%d\\\t", k);
        } else {
            snprintf(names[k], sizeof names[k], "c%d", k);
        }
        name_len[k] = strlen(names[k]);
    }
}

/* The JSON text of column k's name, written by hand (not by the code under test). */
static void expect_name(icd_buf *b, int k)
{
    icd_buf_putc(b, '"');
    for (size_t i = 0; i < name_len[k]; i++) {
        char ch = names[k][i];
        if (ch == '"')
            icd_buf_append(b, "\\\"", 2);
        else if (ch == '\\')
            icd_buf_append(b, "\\\\", 2);
        else if (ch == '\t')
            icd_buf_append(b, "\\t", 2);
        else
            icd_buf_putc(b, ch);
    }
    icd_buf_append(b, "\":", 2);
}

static void one_width(int width, int rows)
{
    icd_buf out = ICD_BUF_INIT, want = ICD_BUF_INIT;
    ice_scan_json j = {0};
    j.out = &out;
    ice_row_sink s;
    ice_scan_json_sink(&j, &s);
    icd_error err;
    for (int r = 0; r < rows; r++) {
        s.begin_row(s.ctx, "f.parquet", r);
        icd_buf_putc(&want, '{');
        /* row 2 swaps its first two columns: the out-of-order path */
        for (int i = 0; i < width; i++) {
            int k = (r == 2 && width > 1 && i < 2) ? 1 - i : i;
            s.field(s.ctx, names[k], name_len[k]);
            if (i) icd_buf_putc(&want, ',');
            expect_name(&want, k);
            if (k % 5 == 0) {
                s.null_value(s.ctx);
                icd_buf_append(&want, "null", 4);
            } else if (k % 13 == 1) { /* a struct with one nested field */
                s.struct_begin(s.ctx);
                s.field(s.ctx, "x", 1);
                s.i64(s.ctx, k);
                s.struct_end(s.ctx);
                char t[64];
                icd_buf_append(&want, t, (size_t)snprintf(t, sizeof t, "{\"x\":%d}", k));
            } else {
                s.i64(s.ctx, (int64_t)r * 1000 + k);
                char t[32];
                icd_buf_append(&want, t, (size_t)snprintf(t, sizeof t, "%d", r * 1000 + k));
            }
        }
        CHECK_EQ_INT(s.end_row(s.ctx, &err), 0);
        icd_buf_append(&want, "}\n", 2);
    }
    CHECK(icd_buf_ok(&out));
    CHECK_EQ_INT(out.len, want.len);
    CHECK(out.len == want.len && memcmp(out.data, want.data, out.len) == 0);
    if (width > 0) CHECK_EQ_INT(j.nnames, width);
    ice_scan_json_free(&j);
    CHECK(j.names == NULL && j.nnames == 0);
    icd_buf_free(&out);
    icd_buf_free(&want);
}

static void test_widths(void)
{
    make_names();
    int widths[] = {1, 2, 63, 64, 65, 66, 128, 300, MAXCOLS};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
        one_width(widths[i], 5);
}

TEST_MAIN(TEST(test_widths))
