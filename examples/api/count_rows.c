/*
 * count_rows: opens an Iceberg table with libicedruid and counts its surviving rows —
 * every position delete, equality delete and deletion vector applied.
 *
 *   count_rows TABLE [FROM=TO]...
 *
 * TABLE is a table directory (Hadoop layout) or a metadata file; FROM=TO remaps locations
 * of a table written elsewhere (as `icedruid --remap`). Prints
 * "ROWS rows in SNAPSHOT (DATA data files, READ read, DELETED deleted)".
 *
 * Build against an installed libicedruid:
 *   cc count_rows.c $(pkg-config --cflags --libs libicedruid) -o count_rows
 * or in CMake: find_package(icedruid REQUIRED) + target_link_libraries(x icedruid::icedruid)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <icedruid/icedruid.h>

static int fail(const icd_error *err)
{
    char line[2200];
    icd_error_format(err, line, sizeof line);
    fprintf(stderr, "count_rows: %s\n", line);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: count_rows TABLE [FROM=TO]...\n");
        return 2;
    }
    icd_error err;
    icd_error_clear(&err);
    icd_storage *storage = NULL;
    icd_table *table = NULL;
    icd_scan *scan = NULL;
    int rc = 1;
    if (icd_storage_new(&storage, &err)) goto out;
    for (int i = 2; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "count_rows: expected FROM=TO, got '%s'\n", argv[i]);
            rc = 2;
            goto done;
        }
        *eq = '\0';
        if (icd_storage_add_remap(storage, argv[i], eq + 1, &err)) goto out;
    }
    icd_scan_options opts;
    icd_scan_options_init(&opts);
    if (icd_table_open(&table, storage, argv[1], &err) || icd_scan_open(&scan, table, &opts, &err))
        goto out;
    /* The tasks: a data file each, with the delete files that apply to it. */
    icd_task_info task;
    size_t with_deletes = 0;
    while ((rc = icd_scan_next_task(scan, &task, &err)) == 0)
        with_deletes += task.position_deletes + task.equality_deletes + task.deletion_vectors > 0;
    if (rc != ICD_ITEROVER) goto out;
    /* No callback: rows are only counted. */
    if (icd_scan_run(scan, 2, NULL, NULL, &err)) goto out;
    icd_scan_stats st;
    icd_scan_get_stats(scan, &st);
    int64_t snapshot = 0;
    if (icd_scan_task_count(scan) && icd_scan_snapshot(scan, &snapshot, &err)) goto out;
    printf("%" PRIu64 " rows in %" PRId64 " (%" PRIu64 " data files, %zu with deletes, %" PRIu64
           " read, %" PRIu64 " deleted)\n",
           st.rows_emitted, snapshot, st.data_files, with_deletes, st.rows_read,
           st.rows_deleted_position + st.rows_deleted_equality);
    rc = 0;
    goto done;
out:
    rc = fail(&err);
done:
    icd_scan_free(scan);
    icd_table_free(table);
    icd_storage_free(storage);
    return rc;
}
