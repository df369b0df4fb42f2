#!/usr/bin/env python3
"""Hand-worked scan plans for tricky corpus tables, compared with `icedruid tasks`.

For every table below, the expected set of live data files and, per data file, the set of
delete files that must be applied were WORKED OUT BY HAND: the metadata JSON, manifest
lists and manifests were read with tests/corpus/avro_min.py + ice_min.py (an independent
stdlib Avro reader; `python3 tests/corpus/ice_min.py TABLE_DIR [SNAPSHOT_ID]` prints the
listing that the reasoning below quotes), and the spec's "Scan Planning" rules were
applied on paper (shared/reference/iceberg.md §1.2-1.6):

  seq      = the DATA sequence number; a null one on an ADDED entry is inherited from the
             manifest-list entry's sequence_number (v1: 0); DELETED entries are not live
  DV       applies to D iff D.path == referenced_data_file and seq(D) <= seq(DV); when a
           DV applies, position delete FILES for D are ignored
  position applies to D iff seq(D) <= seq(P) and either P targets D by path
           (referenced_data_file, or lower == upper bound of its file_path column, the
           Java ContentFileUtil.referencedDataFile rule that icedruid documents in
           delete_index.h) or P is partition-scoped with D's spec id and partition tuple
  equality applies to D iff seq(D) < seq(E) (strict) and E has D's spec id and partition
           tuple, or E's spec is unpartitioned (global)

The results are written below as literal file names (basenames; DVs as
"name@content_offset"). Nothing here was copied from icedruid's output. The test then runs
`icedruid tasks` and compares exactly. It also plans the planner edge-case tables of
tests/tools/make_fixture.py, whose JSON descriptions say by construction which deletes
apply to which data file.

Exit 77 when ICD_SHARED is absent.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ice_min  # noqa: E402

SHARED = os.environ.get("ICD_SHARED", "")
ICEDRUID = os.environ.get("ICEDRUID", "")
SRC = os.environ.get("ICD_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
if not SHARED or not os.path.isdir(os.path.join(SHARED, "corpus", "impala")):
    print("skipped: ICD_SHARED/corpus not found (set ICD_SHARED to the shared folder)")
    sys.exit(77)
if not ICEDRUID:
    print("ICEDRUID is not set")
    sys.exit(1)

IMPALA = os.path.join(SHARED, "corpus", "impala")
ICE = os.path.join(IMPALA, "hadoop_catalog", "ice")
V3 = os.path.join(IMPALA, "iceberg_v3")
BIRD = os.path.join(SHARED, "corpus", "icebird")

failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def tasks(table_dir, *extra, metadata_file=None, sibling=False, expect_ok=True):
    w = ice_min.Walker(table_dir, sibling)
    cmd = [ICEDRUID, "tasks", metadata_file or table_dir] + w.remap_args() + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if not expect_ok:
        return p
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr))
    return json.loads(p.stdout)


def delete_name(d):
    n = os.path.basename(d["path"])
    if d.get("kind") == "deletion_vector":
        n += "@%d" % d["content_offset"]
    return n


def plan_map(plan):
    """{data basename: sorted [delete names]}; checks each data file appears once."""
    out = {}
    for t in plan["tasks"]:
        n = os.path.basename(t["data_file"]["path"])
        check(n not in out, "data file %s planned twice" % n)
        out[n] = sorted(delete_name(d) for d in t["delete_files"])
    return out


def compare(label, plan, expected):
    got = plan_map(plan)
    check(set(got) == set(expected),
          "%s: data files differ: missing %s, unexpected %s" % (
              label, sorted(set(expected) - set(got)), sorted(set(got) - set(expected))))
    for name, dels in expected.items():
        if name in got:
            check(got[name] == sorted(dels),
                  "%s: deletes of %s: expected %s, got %s" % (label, name, sorted(dels), got[name]))
    print("ok  %-60s %d data files" % (label, len(expected)))


def by_name(plan):
    return {os.path.basename(t["data_file"]["path"]): t for t in plan["tasks"]}


# --------------------------------------------------------------------------------------
# 1. impala iceberg_spark_compaction_with_dangling_delete (v2, unpartitioned, 4 snapshots)
#
# Current snapshot seq 4 ("replace" = Spark compaction). Manifests:
#   m3  seq 4: ADDED  data 00000-8-7d506ac2-...-00001.parquet, explicit seq 3 (the
#              compaction kept the starting sequence number), file seq 4 (inherited)
#   m1  seq 4: DELETED data 3549308f..._502574269_data.0.parq   (not live)
#   m0  seq 4: DELETED data 2b445353..._1900113267_data.0.parq  (not live)
#   52100098-m0 seq 3: ADDED pos delete delete-ca41ed5e..._1119661503_data.0.parq, seq 3,
#              file_path lower == upper == .../3549308f..._502574269_data.0.parq
#   m2  seq 4: DELETED pos delete delete-3549308f... (not live)
# The only live delete P is file-scoped (equal file_path bounds) to 3549308f..., which was
# compacted away: P is dangling. The live data file has seq 3 <= seq(P) = 3 and the same
# (unpartitioned) partition, so a planner that ignores the bounds would attach P; by the
# path rule it must not. The data file's explicit seq 3 must also be honoured (not 4).
# --------------------------------------------------------------------------------------
t = os.path.join(ICE, "iceberg_spark_compaction_with_dangling_delete")
plan = tasks(t)
compare("impala compaction_with_dangling_delete", plan, {
    "00000-8-7d506ac2-9987-4514-8310-505eb02c528a-00001.parquet": [],
})
d = by_name(plan)["00000-8-7d506ac2-9987-4514-8310-505eb02c528a-00001.parquet"]["data_file"]
check(d["sequence_number"] == 3 and d["file_sequence_number"] == 4,
      "compaction: data seq 3 / file seq 4 expected, got %s/%s" % (d["sequence_number"], d["file_sequence_number"]))
check(d["record_count"] == 4, "compaction: record_count 4")
check(plan["sequence_number"] == 4 and plan["snapshot_id"] == 5278394901353853232,
      "compaction: current snapshot")

# --------------------------------------------------------------------------------------
# 2. impala iceberg_v2_delete_equality_partitioned (spec 0 = identity(d)), seq 4
#   data  0c3800d3-00001 seq1 d=19715   759289e0-00001 seq2 d=19716
#         c6e2da66-00001 seq3 d=19715   e1567ae8-00001 seq4 d=19716
#   eq[2,3] 0c3800d3-00002 seq1 d=19715  759289e0-00002 seq2 d=19716
#           c6e2da66-00002 seq3 d=19715  e1567ae8-00002 seq4 d=19716
# Equality: strictly newer AND same partition.
#   0c38 (1, 19715): c6e2-00002 (3 > 1, 19715); 0c38-00002 has seq 1, not > 1
#   7592 (2, 19716): e156-00002 (4 > 2, 19716); 7592-00002 has seq 2, not > 2
#   c6e2 (3, 19715): the 19715 deletes have seq 1 and 3: none
#   e156 (4, 19716): none
# --------------------------------------------------------------------------------------
t = os.path.join(ICE, "iceberg_v2_delete_equality_partitioned")
compare("impala delete_equality_partitioned", tasks(t), {
    "00000-0-0c3800d3-c638-4591-b40c-158dcd5ebe25-00001.parquet":
        ["00000-0-c6e2da66-fe58-44b5-81bd-575da62c7a91-00002.parquet"],
    "00000-0-759289e0-d713-41a1-bdaf-f9feab643720-00001.parquet":
        ["00000-0-e1567ae8-d9c3-4071-b671-8bbbe79d36d1-00002.parquet"],
    "00000-0-c6e2da66-fe58-44b5-81bd-575da62c7a91-00001.parquet": [],
    "00000-0-e1567ae8-d9c3-4071-b671-8bbbe79d36d1-00001.parquet": [],
})

# --------------------------------------------------------------------------------------
# 3. impala iceberg_v2_delete_equality_multi_eq_ids (unpartitioned: global eq deletes)
#   data 09b63f85 seq1, 1365d982 seq2, 94d478ff seq3, 8814a344 seq4
#   eq   1365d982-00002 seq2 ids [1]; 94d478ff-00002 seq3 ids [2]; 8814a344-00002 seq4 ids [1,2]
#   seq1 file: all three; seq2: seq3+seq4 deletes; seq3: the seq4 delete; seq4: none
# --------------------------------------------------------------------------------------
t = os.path.join(ICE, "iceberg_v2_delete_equality_multi_eq_ids")
E2 = "00000-23-1365d982-ca94-4e1d-9b86-2f973c000cf0-00002.parquet"
E3 = "00000-24-94d478ff-204b-4eb4-9a71-9876a31daf64-00002.parquet"
E4 = "00000-25-8814a344-4216-4d37-9e9b-091de336e3fa-00002.parquet"
plan = tasks(t)
compare("impala delete_equality_multi_eq_ids", plan, {
    "00000-22-09b63f85-c950-4d32-a9fd-0abd5229d768-00001.parquet": [E2, E3, E4],
    "00000-23-1365d982-ca94-4e1d-9b86-2f973c000cf0-00001.parquet": [E3, E4],
    "00000-24-94d478ff-204b-4eb4-9a71-9876a31daf64-00001.parquet": [E4],
    "00000-25-8814a344-4216-4d37-9e9b-091de336e3fa-00001.parquet": [],
})
ids = {os.path.basename(x["path"]): x.get("equality_ids")
       for tk in plan["tasks"] for x in tk["delete_files"]}
check(ids == {E2: [1], E3: [2], E4: [1, 2]}, "multi_eq_ids: equality_ids %s" % ids)

# --------------------------------------------------------------------------------------
# 4. impala iceberg_v2_delete_pos_and_multi_eq_ids (unpartitioned), seq 4
#   data e93b89d3-00001 seq1; ddf90527-00001 seq2; 7788dcf5-00001 seq4
#   eq   e93b89d3-00002 seq1 [1,2]; ddf90527-00002 seq2 [1,2]; 7788dcf5-00002 seq4 [2,3]
#   pos  delete-3e480099..._738940911_data.0.parq seq3, file_path bounds lower == upper ==
#        e93b89d3-00001.parquet (file-scoped)
#   e93b (1): pos (3 >= 1, path) + ddf9-00002 (2 > 1) + 7788-00002 (4 > 1)
#   ddf9 (2): 7788-00002 only (the pos delete targets e93b; ddf9-00002 has equal seq)
#   7788 (4): none
# --------------------------------------------------------------------------------------
t = os.path.join(ICE, "iceberg_v2_delete_pos_and_multi_eq_ids")
POS = "delete-3e480099fc20aca4-23ae231a00000001_738940911_data.0.parq"
EB = "00000-0-ddf90527-66f7-41de-bd3a-a6ef952918fc-00002.parquet"
EC = "00000-0-7788dcf5-a880-466d-ae9d-2dd332f98412-00002.parquet"
plan = tasks(t)
compare("impala delete_pos_and_multi_eq_ids", plan, {
    "00000-0-e93b89d3-fcf6-4847-8fd1-68e5b33d0ad6-00001.parquet": [POS, EB, EC],
    "00000-0-ddf90527-66f7-41de-bd3a-a6ef952918fc-00001.parquet": [EC],
    "00000-0-7788dcf5-a880-466d-ae9d-2dd332f98412-00001.parquet": [],
})
kinds = {os.path.basename(x["path"]): x["kind"] for tk in plan["tasks"] for x in tk["delete_files"]}
check(kinds == {POS: "position_deletes", EB: "equality_deletes", EC: "equality_deletes"},
      "pos_and_multi_eq_ids kinds %s" % kinds)

# --------------------------------------------------------------------------------------
# 5. impala iceberg_v2_delete_both_eq_and_pos (unpartitioned), seq 3
#   data 38a471ff-00001 seq1; 72709aba-00001 seq2
#   eq   38a471ff-00002 seq1 [1,3]; 72709aba-00002 seq2 [1,3]
#   pos  delete-074a9e19..._800513971_data.0.parq seq3, bounds == 38a471ff-00001 (file-scoped)
#   38a4 (1): pos + 7270-00002;  7270 (2): none (equal-seq eq delete; pos targets 38a4)
# --------------------------------------------------------------------------------------
t = os.path.join(ICE, "iceberg_v2_delete_both_eq_and_pos")
compare("impala delete_both_eq_and_pos", tasks(t), {
    "00000-0-38a471ff-46f4-4350-85cc-2e7ba946b34c-00001.parquet": [
        "delete-074a9e19e61b766e-652a169e00000001_800513971_data.0.parq",
        "00000-0-72709aba-fb15-4bd6-9758-5f39eb9bdcb7-00002.parquet"],
    "00000-0-72709aba-fb15-4bd6-9758-5f39eb9bdcb7-00001.parquet": [],
})

# --------------------------------------------------------------------------------------
# 6. impala iceberg_v3/iceberg_v3_deletion_vectors (v3; EMPTY version-hint.text: the
#    current metadata is v3.metadata.json, the highest), seq 2
#   5 data files 0000k-k-ec047627-...-0-00001.parquet, seq 1
#   ONE Puffin file 00000-9-08e88179-...-00001-deletes.puffin holding two DVs, seq 2:
#     offset 4, 42 bytes  -> referenced_data_file 00003-3-...
#     offset 46, 42 bytes -> referenced_data_file 00001-1-...
#   Each DV applies only to its referenced file (1 <= 2); the other three have none.
# --------------------------------------------------------------------------------------
t = os.path.join(V3, "iceberg_v3_deletion_vectors")
PUF = "00000-9-08e88179-85b6-4635-8b34-94b49abc87d9-00001-deletes.puffin"
plan = tasks(t)
compare("impala v3 deletion_vectors (empty hint)", plan, {
    "00000-0-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet": [],
    "00001-1-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet": [PUF + "@46"],
    "00002-2-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet": [],
    "00003-3-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet": [PUF + "@4"],
    "00004-4-ec047627-1122-495a-9b07-87e0c47aebbb-0-00001.parquet": [],
})
for tk in plan["tasks"]:
    for x in tk["delete_files"]:
        check(x["kind"] == "deletion_vector" and x["content_size_in_bytes"] == 42
              and x["sequence_number"] == 2
              and os.path.basename(x["referenced_data_file"]) == os.path.basename(tk["data_file"]["path"]),
              "deletion_vectors: DV fields %s" % x)
check(plan["snapshot_id"] == 3685752423136077685, "deletion_vectors: current snapshot from v3.metadata.json")

# --------------------------------------------------------------------------------------
# 7. impala iceberg_v2_delete_equality_partition_evolution: specs 0 identity(d) and
#    1 identity(d), identity(i) (default); every manifest is spec 0.
#   data bdb0c103-00001 seq1 d=19715; fe90d7bb-00001 seq2 d=19715
#   eq[2,3] bdb0c103-00002 seq1 d=19715; fe90d7bb-00002 seq2 d=19715 (spec 0: partitioned,
#   so partition-scoped; same spec id and tuple as both data files)
#   bdb0 (1): fe90-00002;  fe90 (2): none
# --------------------------------------------------------------------------------------
t = os.path.join(ICE, "iceberg_v2_delete_equality_partition_evolution")
plan = tasks(t)
compare("impala delete_equality_partition_evolution", plan, {
    "00000-0-bdb0c103-bfaf-49b4-935a-16a951e55b1c-00001.parquet":
        ["00000-0-fe90d7bb-47e7-4221-8e06-f63922d3fa23-00002.parquet"],
    "00000-0-fe90d7bb-47e7-4221-8e06-f63922d3fa23-00001.parquet": [],
})
check(all(tk["data_file"]["spec_id"] == 0 for tk in plan["tasks"]), "partition_evolution: spec 0 files")

# --------------------------------------------------------------------------------------
# 8. impala iceberg_v3/test_default_part: spec 0 unpartitioned -> spec 1 identity(j).
#    No deletes. Files and partitions from the manifests:
#   spec 0: 00000-9-32a1199a-...-00001, 00001-10-32a1199a-...-00001 (partition {})
#   spec 1: 00000-13-...-00001 j=5, 00000-13-...-00002 j=10, 00000-15-...-00001 j=null
# --------------------------------------------------------------------------------------
t = os.path.join(V3, "test_default_part")
plan = tasks(t)
exp_parts = {
    "00000-9-32a1199a-eac8-4050-bd63-6c487f7eb18e-0-00001.parquet": (0, {}),
    "00001-10-32a1199a-eac8-4050-bd63-6c487f7eb18e-0-00001.parquet": (0, {}),
    "00000-13-154f9db4-fe9f-433c-ad9b-e6556ca6c828-0-00001.parquet": (1, {"j": 5}),
    "00000-13-154f9db4-fe9f-433c-ad9b-e6556ca6c828-0-00002.parquet": (1, {"j": 10}),
    "00000-15-160d8949-4a73-4e64-980c-9139ea31874e-0-00001.parquet": (1, {"j": None}),
}
compare("impala v3 test_default_part", plan, {k: [] for k in exp_parts})
for n, tk in by_name(plan).items():
    if n in exp_parts:
        check((tk["data_file"]["spec_id"], tk["data_file"]["partition"]) == exp_parts[n],
              "test_default_part: %s spec/partition %s" % (n, (tk["data_file"]["spec_id"], tk["data_file"]["partition"])))

# --------------------------------------------------------------------------------------
# 9. impala iceberg_v2_equality_delete_schema_evolution (identity(d); 3 schemas)
#   data ..._1309071497 seq1 d=19802; ..._1656341410 seq1 d=19803;
#        ..._1634747934 seq1 d=19804; a72caf13-00001 seq3 d=19803
#   eq[1,2] e4b47c78-00002 seq2 d=19802; e4b47c78-00004 seq2 d=19803; a72caf13-00002 seq3 d=19803
#   1309 (1, 19802): e4b4-00002;  1656 (1, 19803): e4b4-00004, a72c-00002
#   1634 (1, 19804): none;        a72c (3, 19803): none (a72c-00002 has equal seq)
# --------------------------------------------------------------------------------------
t = os.path.join(ICE, "iceberg_v2_equality_delete_schema_evolution")
compare("impala equality_delete_schema_evolution", tasks(t), {
    "3645a3085845c344-9698e59400000000_1309071497_data.0.parq":
        ["00000-10-e4b47c78-9a7a-4d68-81d9-ab22e44a3630-00002.parquet"],
    "3645a3085845c344-9698e59400000000_1656341410_data.0.parq":
        ["00000-10-e4b47c78-9a7a-4d68-81d9-ab22e44a3630-00004.parquet",
         "00000-11-a72caf13-6a91-4fd5-b509-54ec8b16864f-00002.parquet"],
    "3645a3085845c344-9698e59400000000_1634747934_data.0.parq": [],
    "00000-11-a72caf13-6a91-4fd5-b509-54ec8b16864f-00001.parquet": [],
})

# --------------------------------------------------------------------------------------
# 10. impala iceberg_alltypes_part: v1, NO version hint (current = v2.metadata.json), one
#     data file 000000_0 (v1: seq 0) with 8 identity partition values
# --------------------------------------------------------------------------------------
t = os.path.join(ICE, "iceberg_alltypes_part")
plan = tasks(t)
compare("impala alltypes_part (no hint, v1)", plan, {"000000_0": []})
d = plan["tasks"][0]["data_file"] if plan["tasks"] else {}
check(d.get("sequence_number") == 0 and plan["snapshot_id"] == 6167994413873848621,
      "alltypes_part: v1 seq 0 and snapshot")
part = d.get("partition", {})
check(part.get("p_bool") is True and part.get("p_int") == 1 and part.get("p_bigint") == 11
      and part.get("p_string") == "impala", "alltypes_part: partition %s" % part)
check(abs(float(part.get("p_double", 0)) - 2.222) < 1e-12, "alltypes_part: p_double %s" % part)

# --------------------------------------------------------------------------------------
# 11. Tables with no snapshot: impala iceberg_uppercase_col (v1, empty snapshot-log), and
#     iceberg_v2_delete_equality/metadata/v1.metadata.json (current-snapshot-id -1)
# --------------------------------------------------------------------------------------
for label, tdir, mfile in (
        ("impala uppercase_col (no snapshot)", os.path.join(ICE, "iceberg_uppercase_col"), None),
        ("impala delete_equality v1.metadata.json (no snapshot)",
         os.path.join(ICE, "iceberg_v2_delete_equality"),
         os.path.join(ICE, "iceberg_v2_delete_equality", "metadata", "v1.metadata.json"))):
    plan = tasks(tdir, metadata_file=mfile)
    check(plan["snapshot_id"] is None and plan["tasks"] == [] and plan["counts"]["data_files"] == 0,
          "%s: expected empty plan, got %s" % (label, {k: plan[k] for k in ("snapshot_id", "counts")}))
    print("ok  %-60s empty" % label)

# --------------------------------------------------------------------------------------
# 12. Time travel on impala iceberg_v2_delete_equality (unpartitioned, global eq deletes)
#   S1 361598097944440235 seq1 ts 1692789360319: data 231ec696-00001 (1), eq 231ec696-00002 (1)
#   S2 3207673167795000154 seq2 ts 1692789360703: + data 931d6d35-00001 (2), eq 931d6d35-00002 (2)
#   S3 5763349507283783091 seq3 ts 1692789361042: + data e3ac4bad-00001 (3), eq e3ac4bad-00002 (3)
#   S1: 231e -> none (equal seq)
#   S2: 231e -> 931d-00002;          931d -> none
#   S3: 231e -> 931d-00002, e3ac-00002; 931d -> e3ac-00002; e3ac -> none
# --------------------------------------------------------------------------------------
t = os.path.join(ICE, "iceberg_v2_delete_equality")
D1 = "00000-0-231ec696-613a-4270-a1f1-1f69947622d4-00001.parquet"
D2 = "00000-0-931d6d35-d95e-468f-a7d9-d64f7a7b5282-00001.parquet"
D3 = "00000-0-e3ac4bad-51b8-4c65-a20e-4bff5b1726b7-00001.parquet"
Q2 = "00000-0-931d6d35-d95e-468f-a7d9-d64f7a7b5282-00002.parquet"
Q3 = "00000-0-e3ac4bad-51b8-4c65-a20e-4bff5b1726b7-00002.parquet"
S1, S2, S3 = 361598097944440235, 3207673167795000154, 5763349507283783091
EXP = {S1: {D1: []}, S2: {D1: [Q2], D2: []}, S3: {D1: [Q2, Q3], D2: [Q3], D3: []}}
for sid, exp in EXP.items():
    plan = tasks(t, "--snapshot-id", str(sid))
    check(plan["snapshot_id"] == sid, "time travel by id %d selected %s" % (sid, plan["snapshot_id"]))
    compare("impala delete_equality --snapshot-id %d" % sid, plan, exp)
plan = tasks(t, "--ref", "main")
check(plan["snapshot_id"] == S3, "--ref main -> S3")
compare("impala delete_equality --ref main", plan, EXP[S3])
for as_of, sid in (("1692789360703", S2),                 # exactly S2's snapshot-log time
                   ("1692789360702", S1),                 # 1 ms before it: still S1
                   ("1692789361042", S3),
                   ("2023-08-23T11:16:00.703Z", S2),      # the same instant, ISO-8601
                   ("2023-08-23T11:16:00.702Z", S1)):
    plan = tasks(t, "--as-of", as_of)
    check(plan["snapshot_id"] == sid, "--as-of %s: expected %d got %s" % (as_of, sid, plan["snapshot_id"]))
    compare("impala delete_equality --as-of %s" % as_of, plan, EXP[sid])
p = tasks(t, "--as-of", "1692789360318", expect_ok=False)   # 1 ms before the first snapshot
err_lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
check(p.returncode != 0 and p.stdout == "" and len(err_lines) == 1 and "no snapshot" in err_lines[0],
      "--as-of before the first snapshot must fail with one line, got rc %d stderr %r" % (p.returncode, p.stderr))
p = tasks(t, "--snapshot-id", "12345", expect_ok=False)
check(p.returncode != 0 and "12345" in p.stderr, "unknown --snapshot-id must fail naming it")
print("ok  %-60s errors" % "impala delete_equality time-travel")

# --------------------------------------------------------------------------------------
# 13. icebird a_partitioned_mor: spec identity(region), day(ts) = ts_day. 65 live data files
#     (seq 1, 2, 3: one per partition each; seq 6: 300 rows US/19790; seq 7: 16 files).
#   pos deletes, seq 4, partition-scoped (no referenced_data_file; file_path bounds are
#   truncated prefixes "/tmp/icedruid-co" .. "/tmp/icedruid-cp", unequal, so not file
#   scoped, and they contain every data path):
#     51759bba DE/19791, 7be1e15f NZ/19790, fae764a4 NZ/19791, f71c4343 DE/19790
#   eq delete bd2cf7f0 (ids [4]), seq 5, partition US/19790.
#   Each pos delete applies to the seq 1, 2, 3 files of its partition (the seq 7 files are
#   newer); the eq delete to the seq 1, 2, 3 US/19790 files (not bdd33a6f seq 6, nor
#   74429531 seq 7). The remaining 50 files have no deletes.
# --------------------------------------------------------------------------------------
t = os.path.join(BIRD, "a_partitioned_mor", "table")
plan = tasks(t)
P_DE91 = "51759bba-172b-47bc-8b12-bdb7707ac4d1-deletes.parquet"
P_NZ90 = "7be1e15f-30a8-41c4-bda0-a5ebdff32f9b-deletes.parquet"
P_NZ91 = "fae764a4-cb52-4845-a33c-babca1ff79bf-deletes.parquet"
P_DE90 = "f71c4343-d81a-4e4b-89b4-db21fb74ae99-deletes.parquet"
EQ_US90 = "bd2cf7f0-44ac-4bb6-a41f-31388c69ec82-eq-deletes.parquet"
with_deletes = {
    # NZ/19790: seq 1, 2, 3
    "6ca4c917-cd64-45e0-aab6-650b220d1e21.parquet": [P_NZ90],
    "3154874a-4113-48f4-9f61-a33e202b657f.parquet": [P_NZ90],
    "426b6f9f-104c-4b56-a61f-d0f976b8d485.parquet": [P_NZ90],
    # NZ/19791
    "d2887c89-bd7a-423a-ac0a-111bfa1643f9.parquet": [P_NZ91],
    "a396e0f8-1198-42a2-9e3d-5f4c6075deac.parquet": [P_NZ91],
    "3b58be3f-19af-48cf-8892-d7047c020a0f.parquet": [P_NZ91],
    # DE/19790
    "e9b79107-c571-4c00-8a89-ebcf09e3c86e.parquet": [P_DE90],
    "e38af25f-8f1b-49a2-a0db-e301d5bf6497.parquet": [P_DE90],
    "6812443f-4858-468a-bf30-deaf5854b3bd.parquet": [P_DE90],
    # DE/19791
    "2f939c8d-43f8-492d-8492-20fac8507148.parquet": [P_DE91],
    "d1fc48ca-86c9-4276-b69d-3ef9ff7a0fd1.parquet": [P_DE91],
    "c36da302-f2d1-4f0e-a164-a76df8c639aa.parquet": [P_DE91],
    # US/19790, seq 1, 2, 3 (eq delete seq 5 is strictly newer)
    "07d6e396-c6a5-485a-ae8e-19802e77ddd7.parquet": [EQ_US90],
    "3727dfce-585d-4dfe-8cb2-757b04533772.parquet": [EQ_US90],
    "be2a8666-66a0-4bf4-b981-58e68ac252d9.parquet": [EQ_US90],
    # same partitions, but newer than the deletes
    "bdd33a6f-c7f3-4012-92e8-88fe1123df3f.parquet": [],   # US/19790 seq 6
    "74429531-05a0-4645-83c1-f3ad40d5a176.parquet": [],   # US/19790 seq 7
    "6ff1a159-f0f7-4bc2-a9ab-f3bfa098d8b5.parquet": [],   # NZ/19790 seq 7
    "6ea5483e-ea4e-459f-84c6-51bf9ba9ab93.parquet": [],   # NZ/19791 seq 7
    "cf623e21-2ea1-4a9e-a482-e90a867e7788.parquet": [],   # DE/19790 seq 7
    "b4c61fbd-85d6-4238-a196-c56d6a4d210c.parquet": [],   # DE/19791 seq 7
    # same keys as the eq delete, other partitions (US/19791 seq 1, JP/19790 seq 1)
    "3e2053b2-007d-473d-9146-e6d911f5c224.parquet": [],
    "adc29c01-31d1-4bec-a4f4-cdef9afb281c.parquet": [],
}
got = plan_map(plan)
check(len(got) == 65, "a_partitioned_mor: 65 data files, got %d" % len(got))
for n, dels in with_deletes.items():
    check(got.get(n) == sorted(dels), "a_partitioned_mor: %s expected %s got %s" % (n, dels, got.get(n)))
others = [n for n in got if n not in with_deletes]
check(len(others) == 65 - len(with_deletes) and all(got[n] == [] for n in others),
      "a_partitioned_mor: the other %d files have no deletes" % len(others))
check(sum(len(v) for v in got.values()) == 15, "a_partitioned_mor: 15 (data, delete) pairs")
print("ok  %-60s 65 data files" % "icebird a_partitioned_mor")

# --------------------------------------------------------------------------------------
# 14. icebird c_update_tx (unpartitioned), seq 7. Updates = delete + append snapshots.
#   data 52f6372c seq1 (2500), 4e5a7a5a seq2 (2500), bdebbba4 seq4 (400), b6c5d3e4 seq6 (150)
#   pos  3afe950e seq3, no referenced_data_file, truncated unequal bounds: partition-scoped
#        ee33e4e8 seq5, referenced_data_file bdebbba4
#        a2923508 seq7, referenced_data_file 4e5a7a5a
#   52f6 (1): 3afe;  4e5a (2): 3afe, a292;  bdeb (4): ee33 (3afe is older);  b6c5 (6): none
# --------------------------------------------------------------------------------------
t = os.path.join(BIRD, "c_update_tx", "table")
compare("icebird c_update_tx", tasks(t), {
    "52f6372c-1caa-429f-bd7c-5133eee8b49b.parquet": ["3afe950e-69d1-4774-9b74-e6add5283478-deletes.parquet"],
    "4e5a7a5a-1dee-4028-a3d7-79ca7a581246.parquet": ["3afe950e-69d1-4774-9b74-e6add5283478-deletes.parquet",
                                                     "a2923508-26e9-4efb-9162-d9b5e90270ce-deletes.parquet"],
    "bdebbba4-0818-42fb-9cfe-79782262ecf9.parquet": ["ee33e4e8-6197-45a7-87bf-ff4e69e7865a-deletes.parquet"],
    "b6c5d3e4-c02d-41e4-8b5e-69034714c3ca.parquet": [],
})

# --------------------------------------------------------------------------------------
# 15. icebird e_schema_evolution (unpartitioned; schemas 0 -> 1 add extra -> 2 rename)
#   data 6f0b27f4 seq1, 822cffec seq2, 8316a79f seq3, 6ecf7c4e seq4, d3f60b1a seq7
#   pos 179fca11 seq5 (no ref, truncated bounds: partition-scoped, all older files)
#   eq  5d87f1b6 seq6 ids [2] (global)
#   seq 1..4: both; d3f6 (7): none
# --------------------------------------------------------------------------------------
t = os.path.join(BIRD, "e_schema_evolution", "table")
PE = "179fca11-032c-4b72-8dba-d5626bb8b5d6-deletes.parquet"
QE = "5d87f1b6-e55d-4399-930c-6d9f4b3fb1aa-eq-deletes.parquet"
plan = tasks(t)
compare("icebird e_schema_evolution", plan, {
    "6f0b27f4-8d32-41b5-bd28-a74efebeb026.parquet": [PE, QE],
    "822cffec-527e-461b-b3a3-101a04f4a0ff.parquet": [PE, QE],
    "8316a79f-e3e6-4085-96fd-f53c76cea107.parquet": [PE, QE],
    "6ecf7c4e-2084-4164-a5ee-8ad25dcd2bfd.parquet": [PE, QE],
    "d3f60b1a-3023-42b3-a44b-c51c7668c531.parquet": [],
})
check(plan["schema_id"] == 2, "e_schema_evolution: current schema 2, got %s" % plan["schema_id"])

# --------------------------------------------------------------------------------------
# 16. icebird g_many_small_files: identity(bucket), 15 buckets, 30 snapshots.
#   Appends at seq 3k+1 and 3k+2 (k = 0..9): one file per bucket each -> 300 data files.
#   Delete commits at seq 3k (k = 1..10): 6 partition-scoped pos delete files (no ref,
#   truncated bounds) -> 60. A delete at seq 3k applies to the 2k data files of its bucket
#   with seq <= 3k, so the (data, delete) pairs number 2 * 6 * (1 + ... + 10) = 660.
#   Bucket b02 by hand: deletes 30b463e1 (3), 1ea95b81 (6), 46112fcc (12), c693deb7 (24),
#   36af2bbc (27); its 20 data files get:
#     seq 1, 2: all five; 4, 5: the last four; 7..11: last three; 13..23: c693 + 36af;
#     25, 26: 36af; 28, 29: none.
# --------------------------------------------------------------------------------------
t = os.path.join(BIRD, "g_many_small_files", "table")
plan = tasks(t)
B3, B6, B12, B24, B27 = ("30b463e1-41c1-4c6d-be6d-d9848051314a-deletes.parquet",
                         "1ea95b81-ac60-48fe-8556-c56ad6854cf1-deletes.parquet",
                         "46112fcc-9cb3-4f39-bc56-c491f54a70dc-deletes.parquet",
                         "c693deb7-2271-4e71-9876-289636ab7177-deletes.parquet",
                         "36af2bbc-7783-4fe1-aa78-5ca67d268a59-deletes.parquet")
b02 = {
    "46d906cf-e457-473a-95c9-a4dbc7e6e494.parquet": [B3, B6, B12, B24, B27],   # seq 1
    "42e770c9-e109-42b6-b1f3-a673af41d8f9.parquet": [B3, B6, B12, B24, B27],   # seq 2
    "5a246a2a-e356-437f-84dc-d8f3a57785a8.parquet": [B6, B12, B24, B27],       # seq 4
    "ac070c4b-4244-49e2-ba4d-98a8c3112197.parquet": [B6, B12, B24, B27],       # seq 5
    "2421d84c-c5ee-47a9-8a1b-a339a6a1ae42.parquet": [B12, B24, B27],           # seq 7
    "ce5ec25a-a603-4211-97b1-9a192aba722a.parquet": [B12, B24, B27],           # seq 8
    "1268fd56-6881-4f18-81b3-afcc63990c96.parquet": [B12, B24, B27],           # seq 10
    "3bb139e0-50c9-4bac-9e91-f59136355066.parquet": [B12, B24, B27],           # seq 11
    "25dc2d3d-ddc9-4379-8c6f-4538197b6599.parquet": [B24, B27],                # seq 13
    "f6c7ca6a-5192-40bc-9cc4-dcf15ecfe00a.parquet": [B24, B27],                # seq 14
    "af394cb4-6582-4738-8329-6802f4bad1cd.parquet": [B24, B27],                # seq 16
    "02e1732d-1395-4b84-b3f8-5d666d46c365.parquet": [B24, B27],                # seq 17
    "c8d79d73-6036-46ed-bf8f-4e15d33d2307.parquet": [B24, B27],                # seq 19
    "efb6e0e6-f8ee-4ba5-a0d8-c3ad8ff244c2.parquet": [B24, B27],                # seq 20
    "2d89b996-9813-428e-bc84-002816345432.parquet": [B24, B27],                # seq 22
    "37b8e4f8-a336-4908-bf91-f665986a5c7a.parquet": [B24, B27],                # seq 23
    "af50b5a2-5747-4fd3-b0a2-3053f2524fd4.parquet": [B27],                     # seq 25
    "fef83109-b23f-483e-afaf-c33c058bc4cc.parquet": [B27],                     # seq 26
    "cfc5622d-284c-408f-bcf8-0f0c0f46e5a1.parquet": [],                        # seq 28
    "b36b7ce3-09f7-4157-890a-87b5d101869e.parquet": [],                        # seq 29
}
got = plan_map(plan)
check(len(got) == 300, "g_many_small_files: 300 data files, got %d" % len(got))
check(plan["counts"]["manifests"] == 30, "g_many_small_files: 30 manifests")
for n, dels in b02.items():
    check(got.get(n) == sorted(dels), "g_many_small_files b02: %s expected %s got %s" % (n, dels, got.get(n)))
check(sum(len(v) for v in got.values()) == 660, "g_many_small_files: 660 pairs, got %d" % sum(len(v) for v in got.values()))
used = {x for v in got.values() for x in v}
check(len(used) == 60 and plan["counts"]["position_delete_files"] == 60,
      "g_many_small_files: all 60 delete files used")
b02_tasks = [tk for tk in plan["tasks"] if tk["data_file"]["partition"].get("bucket") == "b02"]
check(sorted(os.path.basename(tk["data_file"]["path"]) for tk in b02_tasks) == sorted(b02),
      "g_many_small_files: bucket b02 has exactly the 20 hand-listed files")
print("ok  %-60s 300 data files" % "icebird g_many_small_files")

# --------------------------------------------------------------------------------------
# 17. impala iceberg_multiple_storage_locations (v1; data in sibling directories)
#     3 snapshots, 6 live data files, no deletes: only the count and v1 seq 0.
# --------------------------------------------------------------------------------------
t = os.path.join(ICE, "iceberg_multiple_storage_locations")
plan = tasks(t, sibling=True)
check(len(plan["tasks"]) == 6 and all(tk["delete_files"] == [] and tk["data_file"]["sequence_number"] == 0
                                      for tk in plan["tasks"]),
      "multiple_storage_locations: 6 delete-free v1 data files")
print("ok  %-60s 6 data files" % "impala multiple_storage_locations")

# --------------------------------------------------------------------------------------
# 18. Planner edge cases of the fixture writer (tests/tools/make_fixture.py edge-cases):
#     the descriptions list, by construction, the deletes that apply to each data file.
# --------------------------------------------------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "edge")
    subprocess.run([sys.executable, os.path.join(SRC, "tests", "tools", "make_fixture.py"),
                    "edge-cases", out], check=True, capture_output=True)
    names = sorted(n[:-5] for n in os.listdir(out) if n.endswith(".json") and n != "index.json")
    check({"equal_seq", "void_global_eq", "pos_bounds_no_ref", "dangling_pos",
           "explicit_older_seq"} <= set(names), "edge cases generated: %s" % names)
    for name in names:
        with open(os.path.join(out, name + ".json")) as fh:
            desc = json.load(fh)
        cmd = [ICEDRUID, "tasks", os.path.join(out, name), "--remap", desc["remap"]]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, "edge %s: tasks failed: %s" % (name, p.stderr))
        if p.returncode:
            continue
        plan = json.loads(p.stdout)
        check(plan["snapshot_id"] == desc["snapshot_id"], "edge %s: snapshot" % name)
        got = {t["data_file"]["path"]: t for t in plan["tasks"]}
        exp = {d["path"]: d for d in desc["data_files"]}
        check(set(got) == set(exp), "edge %s: data files %s vs %s" % (name, sorted(got), sorted(exp)))
        for path, d in exp.items():
            tk = got.get(path)
            if not tk:
                continue
            check(sorted(x["path"] for x in tk["delete_files"]) == sorted(d["deletes"]),
                  "edge %s: deletes of %s: expected %s got %s" % (
                      name, path, sorted(d["deletes"]), sorted(x["path"] for x in tk["delete_files"])))
            check(tk["data_file"]["sequence_number"] == d["data_sequence_number"]
                  and tk["data_file"]["file_sequence_number"] == d["file_sequence_number"]
                  and tk["data_file"]["spec_id"] == d["spec_id"],
                  "edge %s: sequence numbers / spec of %s" % (name, path))
        # each live delete file's applies_to must be exactly where it shows up
        for dl in desc["delete_files"]:
            where = sorted(p2 for p2, tk in got.items() if dl["path"] in [x["path"] for x in tk["delete_files"]])
            check(where == sorted(dl["applies_to"]), "edge %s: %s applies to %s, expected %s" % (
                name, os.path.basename(dl["path"]), where, dl["applies_to"]))
        print("ok  %-60s %d data files" % ("edge case " + name, len(exp)))

print("%d checks, %d failed" % (checks, len(failures)))
sys.exit(1 if failures else 0)
