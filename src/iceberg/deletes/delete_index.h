/*
 * The delete-file index: which delete files apply to which data file, by the rules of the
 * Iceberg spec ("Scan Planning"):
 *
 *   deletion vector  D.path == DV.referenced_data_file and seq(D) <= seq(DV)
 *   position file    seq(D) <= seq(F), and F targets D by path (referenced_data_file, or
 *                    equal lower/upper bounds of its file_path column), or F has D's spec
 *                    id and partition tuple; ignored when a DV applies to D
 *   equality file    seq(D) < seq(F) (strict), and F has D's spec id and partition tuple,
 *                    or F's spec is unpartitioned (no fields, or only void ones): global
 *
 * seq is always the DATA sequence number. At most one DV may exist per data file.
 * Lookups are binary searches over arrays sorted by (key, sequence number), so planning
 * 10,000s of data files against 1,000s of delete files stays far below a second.
 */
#ifndef ICD_ICE_DELETE_INDEX_H
#define ICD_ICE_DELETE_INDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "iceberg/content_file.h"

/* What the index needs to know of each partition spec of the table. */
typedef struct ice_spec_info {
    int32_t spec_id;
    bool unpartitioned; /* no fields, or every field uses the void transform */
} ice_spec_info;

typedef struct ice_delete_index ice_delete_index;

/* Indexes the live delete files of a snapshot. The files must outlive the index. Fails
 * for a delete file whose spec id is unknown, and for two DVs of one data file. */
int ice_delete_index_build(const ice_content_file *const *deletes, size_t n,
                           const ice_spec_info *specs, size_t nspecs, ice_delete_index **out,
                           icd_error *err);

/* The delete files that apply to `data`, appended to *out (a malloc'd array grown as
 * needed; *n is its length, *cap its capacity). Order: the DV or the position files (by
 * sequence number), then equality files (by sequence number). */
int ice_delete_index_for(const ice_delete_index *ix, const ice_content_file *data,
                         const ice_content_file ***out, size_t *n, size_t *cap, icd_error *err);

/* A memo of the partition lookups of ice_delete_index_for_memo, by the address of a data
 * file's partition key (the files of one partition in a manifest share theirs): valid
 * while the keys it saw stay where they are, so cleared (cheaply) before the files of
 * another manifest. NULL from _new when out of memory: lookups then go without one. */
typedef struct ice_delete_memo ice_delete_memo;
ice_delete_memo *ice_delete_memo_new(void);
void ice_delete_memo_clear(ice_delete_memo *m);
void ice_delete_memo_free(ice_delete_memo *m);

/* ice_delete_index_for through a memo (NULL: none); the same result. */
int ice_delete_index_for_memo(const ice_delete_index *ix, ice_delete_memo *memo,
                              const ice_content_file *data, const ice_content_file ***out,
                              size_t *n, size_t *cap, icd_error *err);

/* Counts of indexed files by kind, for --stats. */
typedef struct ice_delete_index_counts {
    size_t dvs, position_files, equality_files, global_equality_files;
} ice_delete_index_counts;
ice_delete_index_counts ice_delete_index_count(const ice_delete_index *ix);

void ice_delete_index_free(ice_delete_index *ix);

/* The path a position delete file targets on its own (referenced_data_file, or equal
 * file_path bounds), or NULL with *len 0 when it may cover several data files. */
const char *ice_position_delete_target(const ice_content_file *f, size_t *len);

#endif
