#!/usr/bin/env python3
"""Every corpus table resolves its current metadata with the local-catalog rules and
parses: `icedruid inspect TABLE_DIR` for each directory holding a metadata/ folder under
corpus/impala/ (nested hadoop_catalog ones included), corpus/icebird/*/table and
bench/bench2m/table.

Checked against independent oracles:
  * the current file is the highest v<N>.metadata.json (what corpus/README.md states),
    computed here by listing the directory;
  * format version, snapshots (ids, sequence numbers, schema ids, operations), current
    snapshot id, location, schema and spec ids agree with Python's own JSON parse of that
    file (Python integers are exact, so 64-bit ids are compared exactly);
  * hand-written facts: the format version and snapshot count of each Impala table
    (corpus/README.md inventory), which vN is current for the tables with an empty,
    missing or .txt version hint, and a few current snapshot ids read from the files.
Exit 77 (skipped) when ICD_SHARED is absent.
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SHARED = os.environ.get("ICD_SHARED", "")
ICEDRUID = os.environ.get("ICEDRUID", "")
if not SHARED or not os.path.isdir(os.path.join(SHARED, "corpus", "impala")):
    print("skipped: ICD_SHARED/corpus/impala not found")
    sys.exit(77)
if not ICEDRUID:
    print("ICEDRUID is not set")
    sys.exit(1)

IMPALA = os.path.join(SHARED, "corpus", "impala")

# Format version and number of snapshots of every Impala table (corpus/README.md).
IMPALA_TABLES = {
    "hadoop_catalog/hadoop_catalog_test/functional_parquet/hadoop_catalog_test": (1, 1),
    "hadoop_catalog/ice/airports_orc": (1, 1),
    "hadoop_catalog/ice/airports_parquet": (1, 1),
    "hadoop_catalog/ice/complextypestbl_iceberg_orc": (1, 1),
    "hadoop_catalog/ice/iceberg_alltypes_part": (1, 1),
    "hadoop_catalog/ice/iceberg_alltypes_part_orc": (1, 1),
    "hadoop_catalog/ice/iceberg_legacy_partition_schema_evolution": (1, 1),
    "hadoop_catalog/ice/iceberg_legacy_partition_schema_evolution_orc": (1, 1),
    "hadoop_catalog/ice/iceberg_lineitem_multiblock": (2, 2),
    "hadoop_catalog/ice/iceberg_multiple_storage_locations": (1, 3),
    "hadoop_catalog/ice/iceberg_spark_compaction_with_dangling_delete": (2, 4),
    "hadoop_catalog/ice/iceberg_timestamp_part": (1, 1),
    "hadoop_catalog/ice/iceberg_timestamptz_part": (1, 1),
    "hadoop_catalog/ice/iceberg_uppercase_col": (1, 0),
    "hadoop_catalog/ice/iceberg_v2_delete_both_eq_and_pos": (2, 3),
    "hadoop_catalog/ice/iceberg_v2_delete_equality": (2, 3),
    "hadoop_catalog/ice/iceberg_v2_delete_equality_multi_eq_ids": (2, 4),
    "hadoop_catalog/ice/iceberg_v2_delete_equality_nulls": (2, 3),
    "hadoop_catalog/ice/iceberg_v2_delete_equality_partition_evolution": (2, 2),
    "hadoop_catalog/ice/iceberg_v2_delete_equality_partitioned": (2, 4),
    "hadoop_catalog/ice/iceberg_v2_delete_pos_and_multi_eq_ids": (2, 4),
    "hadoop_catalog/ice/iceberg_v2_delete_positional": (2, 2),
    "hadoop_catalog/ice/iceberg_v2_equality_delete_schema_evolution": (2, 3),
    "hadoop_catalog/ice/iceberg_v2_no_deletes": (2, 1),
    "hadoop_catalog/ice/iceberg_v2_no_deletes_orc": (2, 1),
    "hadoop_catalog/ice/iceberg_v2_null_delete_record": (2, 1),
    "hadoop_catalog/ice/iceberg_v2_partitioned_position_deletes": (2, 2),
    "hadoop_catalog/ice/iceberg_v2_partitioned_position_deletes_orc": (2, 2),
    "hadoop_catalog/ice/iceberg_v2_positional_delete_all_rows": (2, 2),
    "hadoop_catalog/ice/iceberg_v2_positional_delete_all_rows_orc": (2, 2),
    "hadoop_catalog/ice/iceberg_v2_positional_not_all_data_files_have_delete_files": (2, 6),
    "hadoop_catalog/ice/iceberg_v2_positional_not_all_data_files_have_delete_files_orc": (2, 6),
    "hadoop_catalog/ice/iceberg_v2_positional_update_all_rows": (2, 3),
    "hadoop_catalog/ice/iceberg_with_key_metadata": (2, 1),
    "hadoop_catalog/iceberg_partitioned_orc/functional_parquet/iceberg_partitioned_orc": (1, 1),
    "hadoop_catalog/iceberg_resolution_test/functional_parquet/iceberg_resolution_test": (1, 1),
    "iceberg_column_case_sensitivity_issue": (1, 2),
    "iceberg_migrated_alter_test": (1, 1),
    "iceberg_migrated_alter_test_orc": (1, 1),
    "iceberg_migrated_complex_test": (1, 1),
    "iceberg_migrated_complex_test_orc": (1, 1),
    "iceberg_mixed_file_format_test": (1, 4),
    "iceberg_non_partitioned": (1, 1),
    "iceberg_partitioned": (1, 1),
    "iceberg_v3/iceberg_v3_all_types": (3, 2),
    "iceberg_v3/iceberg_v3_default_value": (3, 2),
    "iceberg_v3/iceberg_v3_default_value_avro": (3, 2),
    "iceberg_v3/iceberg_v3_default_value_orc": (3, 2),
    "iceberg_v3/iceberg_v3_deletion_vectors": (3, 2),
    "iceberg_v3/iceberg_v3_row_lineage": (3, 4),
    "iceberg_v3/iceberg_v3_row_lineage_orc": (3, 4),
    "iceberg_v3/test_complex_default": (3, 2),
    "iceberg_v3/test_default_part": (3, 3),
    "iceberg_v3/trino_nested_variant": (3, 2),
    "iceberg_v3/trino_variant": (3, 2),
    "iceberg_with_puffin_stats": (1, 1),
}

# The current version for tables whose hint is empty, missing or named .txt
# (read from the directory listings by hand).
CURRENT_VERSION = {
    "iceberg_v3/iceberg_v3_deletion_vectors": 3,       # empty version-hint.text
    "hadoop_catalog/ice/iceberg_alltypes_part": 2,     # no hint
    "iceberg_v3/iceberg_v3_default_value_orc": 4,      # no hint
    "iceberg_v3/test_complex_default": 4,              # version-hint.txt
    "iceberg_v3/iceberg_v3_all_types": 4,              # version-hint.txt
    "iceberg_mixed_file_format_test": 8,               # version-hint.txt
    "hadoop_catalog/ice/iceberg_uppercase_col": 1,     # version-hint.txt
    "iceberg_with_puffin_stats": 3,                    # version-hint.txt
    "iceberg_column_case_sensitivity_issue": 3,        # only v3 exists
}

# Current snapshot ids read from the metadata files by hand (None: no current snapshot).
CURRENT_SNAPSHOT = {
    "iceberg_v3/iceberg_v3_deletion_vectors": 3685752423136077685,
    "hadoop_catalog/ice/iceberg_alltypes_part": 6167994413873848621,
    "iceberg_v3/iceberg_v3_default_value_orc": 4321940050961723411,
    "iceberg_v3/iceberg_v3_all_types": 4685659321801244000,   # a rounded id, stored as an integer
    "iceberg_v3/test_default_part": 5788798547140820000,
    "hadoop_catalog/ice/iceberg_v2_delete_equality_partition_evolution": 586812101365618837,
    "hadoop_catalog/ice/iceberg_v2_delete_positional": 5725822353600261755,
    "iceberg_mixed_file_format_test": 5574591442446832859,
    "iceberg_column_case_sensitivity_issue": 1855055649619147667,
    "iceberg_partitioned": 8270633197658268308,
    "hadoop_catalog/ice/iceberg_uppercase_col": None,
}

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def inspect(path, remap=None):
    cmd = [ICEDRUID, "inspect", path] + (["--remap", remap] if remap else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout), None


def highest_version_file(table_dir):
    mdir = os.path.join(table_dir, "metadata")
    best = None
    for name in os.listdir(mdir):
        m = re.fullmatch(r"v(\d+)\.metadata\.json", name)
        if m and (best is None or int(m.group(1)) > best[0]):
            best = (int(m.group(1)), name)
    return os.path.join(mdir, best[1]), best[0]


def check_against_file(label, got, path):
    with open(path) as f:
        want = json.load(f)
    if got["format-version"] != want["format-version"]:
        fail(f"{label}: format-version {got['format-version']} != {want['format-version']}")
    if got["location"] != want["location"]:
        fail(f"{label}: location {got['location']} != {want['location']}")
    cur = want.get("current-snapshot-id")
    cur = None if cur in (None, -1) else cur
    if got["current-snapshot-id"] != cur:
        fail(f"{label}: current-snapshot-id {got['current-snapshot-id']} != {cur}")
    snaps = want.get("snapshots", [])
    if len(got["snapshots"]) != len(snaps):
        fail(f"{label}: {len(got['snapshots'])} snapshots, file has {len(snaps)}")
    for g, w in zip(got["snapshots"], snaps):
        if g["snapshot-id"] != w["snapshot-id"]:
            fail(f"{label}: snapshot id {g['snapshot-id']} != {w['snapshot-id']}")
        if g["sequence-number"] != w.get("sequence-number", 0):
            fail(f"{label}: snapshot {w['snapshot-id']} sequence number")
        if g.get("schema-id") != w.get("schema-id"):
            fail(f"{label}: snapshot {w['snapshot-id']} schema id")
        if g.get("operation") != w.get("summary", {}).get("operation"):
            fail(f"{label}: snapshot {w['snapshot-id']} operation")
        if g.get("manifest-list") != w.get("manifest-list"):
            fail(f"{label}: snapshot {w['snapshot-id']} manifest list")
    want_schema = want.get("current-schema-id", want.get("schema", {}).get("schema-id", 0))
    if got["current-schema-id"] != want_schema:
        fail(f"{label}: current schema {got['current-schema-id']} != {want_schema}")
    schemas = want.get("schemas") or [want["schema"]]
    if [s.get("schema-id", 0) for s in schemas] != [s["schema-id"] for s in got["schemas"]]:
        fail(f"{label}: schema ids differ")
    # Every field id of every schema appears, with its name.
    for gs, ws in zip(got["schemas"], schemas):
        if json_field_ids(gs) != json_field_ids(ws):
            fail(f"{label}: schema {ws.get('schema-id', 0)} fields differ")
    specs = want.get("partition-specs") or [{"spec-id": 0, "fields": want["partition-spec"]}]
    if [s["spec-id"] for s in specs] != [s["spec-id"] for s in got["partition-specs"]]:
        fail(f"{label}: spec ids differ")
    for gs, ws in zip(got["partition-specs"], specs):
        unpart = all(f["transform"] == "void" for f in ws["fields"])
        if gs["unpartitioned"] != unpart:
            fail(f"{label}: spec {ws['spec-id']} unpartitioned flag")
        if [f["transform"] for f in gs["fields"]] != [f["transform"] for f in ws["fields"]]:
            fail(f"{label}: spec {ws['spec-id']} transforms differ")
    if got["properties"] != want.get("properties", {}):
        fail(f"{label}: properties differ")
    return want


def json_field_ids(node, acc=None):
    """(id, name) pairs of every field in a schema/type JSON tree."""
    acc = set() if acc is None else acc
    if isinstance(node, dict):
        if "id" in node and "name" in node:
            acc.add((node["id"], node["name"]))
        for k in ("element-id", "key-id", "value-id"):
            if k in node:
                acc.add((node[k], k))
        for v in node.values():
            json_field_ids(v, acc)
    elif isinstance(node, list):
        for v in node:
            json_field_ids(v, acc)
    return acc


# --- every Impala table ---------------------------------------------------------------
found = set()
for dirpath, dirnames, _ in os.walk(IMPALA):
    if "metadata" in dirnames:
        found.add(os.path.relpath(dirpath, IMPALA))
if found != set(IMPALA_TABLES):
    fail(f"table set differs from the inventory: {sorted(found ^ set(IMPALA_TABLES))}")

checked = 0
for rel in sorted(found):
    table = os.path.join(IMPALA, rel)
    got, err = inspect(table)
    if got is None:
        fail(f"{rel}: inspect failed: {err}")
        continue
    path, version = highest_version_file(table)
    if os.path.realpath(got["metadata-file"]) != os.path.realpath(path):
        fail(f"{rel}: chose {got['metadata-file']}, the highest version is {path}")
    check_against_file(rel, got, path)
    if rel in IMPALA_TABLES:
        fv, nsnap = IMPALA_TABLES[rel]
        if got["format-version"] != fv:
            fail(f"{rel}: format version {got['format-version']} != {fv}")
        if len(got["snapshots"]) != nsnap:
            fail(f"{rel}: {len(got['snapshots'])} snapshots != {nsnap}")
    if rel in CURRENT_VERSION and not got["metadata-file"].endswith(
            f"/v{CURRENT_VERSION[rel]}.metadata.json"):
        fail(f"{rel}: current file {got['metadata-file']}, expected v{CURRENT_VERSION[rel]}")
    if rel in CURRENT_SNAPSHOT and got["current-snapshot-id"] != CURRENT_SNAPSHOT[rel]:
        fail(f"{rel}: current snapshot {got['current-snapshot-id']} != {CURRENT_SNAPSHOT[rel]}")
    checked += 1

# Hand-read facts about single tables.
got, _ = inspect(os.path.join(IMPALA, "hadoop_catalog/ice/iceberg_v2_delete_equality_partition_evolution"))
if got:
    specs = {s["spec-id"]: s for s in got["partition-specs"]}
    if sorted(specs) != [0, 1] or got["default-spec-id"] != 1:
        fail("partition_evolution: expected specs 0 and 1, default 1")
    elif [f["name"] for f in specs[1]["fields"]] != ["d", "i"] or specs[0]["unpartitioned"]:
        fail("partition_evolution: spec 1 should be identity(d), identity(i)")
got, _ = inspect(os.path.join(IMPALA, "iceberg_column_case_sensitivity_issue"))
if got and got["partition-specs"][0]["fields"][0]["transform"] != "bucket[16]":
    fail("case_sensitivity_issue: expected bucket[16]")
got, _ = inspect(os.path.join(IMPALA, "hadoop_catalog/ice/iceberg_uppercase_col"))
if got and (got["snapshots"] or "main" in got["refs"]):
    fail("uppercase_col: a table without snapshots must have no snapshots and no main ref")
got, _ = inspect(os.path.join(IMPALA, "iceberg_v3/iceberg_v3_all_types"))
if got:
    f = {x["name"]: x for x in got["schemas"][1]["fields"]}
    if f["col_decimal"].get("initial-default") != "123.45" or \
            f["col_timestamp"].get("initial-default") != "1969-12-31T23:59:59.123456" or \
            f["col_binary"].get("initial-default") != "0102030405060708":
        fail("iceberg_v3_all_types: initial defaults were not parsed as written")

# --- icebird tables and the benchmark table ---------------------------------------------
others = [os.path.join(SHARED, "corpus", "icebird", d, "table")
          for d in sorted(os.listdir(os.path.join(SHARED, "corpus", "icebird")))
          if os.path.isdir(os.path.join(SHARED, "corpus", "icebird", d, "table"))]
bench = os.path.join(SHARED, "bench", "bench2m", "table")
if os.path.isdir(bench):
    others.append(bench)
HINTED = {"a_partitioned_mor": (8, 8264148574311031), "g_many_small_files": (31, 3870117123220064),
          "bench2m": (14, 4127664737076186)}
for table in others:
    label = os.path.relpath(table, SHARED)
    got, err = inspect(table)
    if got is None:
        fail(f"{label}: inspect failed: {err}")
        continue
    path, version = highest_version_file(table)
    with open(os.path.join(table, "metadata", "version-hint.text")) as hint:
        if int(hint.read().strip()) != version:
            fail(f"{label}: hint and highest version differ")
    if os.path.realpath(got["metadata-file"]) != os.path.realpath(path):
        fail(f"{label}: chose {got['metadata-file']} instead of {path}")
    check_against_file(label, got, path)
    key = os.path.basename(os.path.dirname(table))
    if key in HINTED:
        v, snap = HINTED[key]
        if version != v or got["current-snapshot-id"] != snap:
            fail(f"{label}: expected v{v} and current snapshot {snap}")
    checked += 1

# --- a metadata file path, a gzip copy, --remap and errors ------------------------------
tmp = tempfile.mkdtemp(prefix="icd_meta_corpus_")
try:
    src = os.path.join(IMPALA, "hadoop_catalog/ice/iceberg_v2_delete_positional/metadata/v2.metadata.json")
    got, err = inspect(src)
    if got is None or got["current-snapshot-id"] != 5725822353600261755:
        fail(f"inspect of a metadata file path: {err}")
    gz = os.path.join(tmp, "v2.gz.metadata.json")
    with open(src, "rb") as f, gzip.open(gz, "wb") as g:
        shutil.copyfileobj(f, g)
    got, err = inspect(gz)
    if got is None or got["current-snapshot-id"] != 5725822353600261755:
        fail(f"inspect of a gzip metadata file: {err}")
    got, err = inspect("/remote/ice/iceberg_v2_delete_positional",
                       remap="/remote/ice=" + os.path.join(IMPALA, "hadoop_catalog/ice"))
    if got is None or not got["metadata-file"].endswith("/v2.metadata.json"):
        fail(f"inspect through --remap: {err}")
    got, err = inspect(tmp)  # a directory without metadata/
    if got is not None or "metadata" not in (err or ""):
        fail(f"inspect of a non-table directory should fail naming metadata/: {err}")
finally:
    shutil.rmtree(tmp)

print(f"{checked} tables checked, {len(failures)} failures")
sys.exit(1 if failures else 0)
