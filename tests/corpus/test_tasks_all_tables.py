#!/usr/bin/env python3
"""Every corpus table plans: `icedruid tasks` succeeds on every table directory under
$ICD_SHARED/corpus/impala, $ICD_SHARED/corpus/icebird and $ICD_SHARED/bench/bench2m, and
its plan agrees with an independent reading of the manifests (tests/corpus/avro_min.py
and ice_min.py, no icedruid code):

  * the planned data files are exactly the live (ADDED/EXISTING) data entries of the
    current snapshot, each once, with the manifest's record count, file size, spec id and
    (inherited) data / file sequence numbers;
  * every attached delete file is a live delete entry of the snapshot, reported with its
    kind, sequence number and record count, and CAN apply by the spec's rules:
      DV           referenced_data_file == data path, seq(D) <= seq(DV), at most one per file
      position     seq(D) <= seq(P); referenced_data_file (if set) == data path; else same
                   spec id and partition tuple (or equal file_path bounds naming the file)
      equality     seq(D) < seq(E); E's spec unpartitioned, or same spec id and partition
  * completeness: every delete that MUST apply by those rules is attached (position deletes
    that the file_path bounds exclude may be pruned, and position files are not required
    when a DV applies);
  * counts.data_files equals the number of tasks.
The same checks run for every older snapshot (`--snapshot-id`) whose manifest list exists.
Exit 77 when ICD_SHARED is absent.
"""
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ice_min  # noqa: E402

SHARED = os.environ.get("ICD_SHARED", "")
ICEDRUID = os.environ.get("ICEDRUID", "")
if not SHARED or not os.path.isdir(os.path.join(SHARED, "corpus", "impala")):
    print("skipped: ICD_SHARED/corpus not found (set ICD_SHARED to the shared folder)")
    sys.exit(77)
if not ICEDRUID:
    print("ICEDRUID is not set")
    sys.exit(1)

SIBLING_TABLES = {"iceberg_multiple_storage_locations"}


def table_dirs():
    out = []
    for root in (os.path.join(SHARED, "corpus", "impala"), os.path.join(SHARED, "corpus", "icebird"),
                 os.path.join(SHARED, "bench", "bench2m")):
        for dirpath, dirnames, _files in os.walk(root):
            if "metadata" in dirnames and any(
                    n.endswith(".metadata.json") for n in os.listdir(os.path.join(dirpath, "metadata"))):
                out.append(dirpath)
                dirnames[:] = []  # a table does not contain tables
    return sorted(out)


failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def canon(v):
    """Partition values compare by value; NaN equals NaN (canonical bits)."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return v


def same_partition(a, b):
    return a["spec_id"] == b["spec_id"] and \
        [canon(x) for x in a["partition"].values()] == [canon(x) for x in b["partition"].values()]


def unpartitioned_specs(md):
    return {s["spec-id"] for s in md.get("partition-specs", [])
            if all(f["transform"] == "void" for f in s["fields"])} | (
        {0} if "partition-specs" not in md and not md.get("partition-spec") else set())


def file_scoped_target(p):
    if p["referenced_data_file"]:
        return p["referenced_data_file"]
    b = p["file_path_bounds"]
    if "lower" in b and "upper" in b and b["lower"] == b["upper"]:
        return b["lower"].decode("utf-8")
    return None


def bounds_exclude(p, path):
    b = p["file_path_bounds"]
    pb = path.encode("utf-8")
    return ("lower" in b and pb < b["lower"]) or ("upper" in b and pb > b["upper"])


def is_dv(x):
    return (x["format"] or "").lower() == "puffin"


def kind_of(x):
    if is_dv(x):
        return "deletion_vector"
    return x["content"]


def can_apply(x, d, unpart):
    """May delete entry x apply to data entry d (spec rules)? Returns (bool, must)."""
    if x["content"] == "equality_deletes":
        ok = d["sequence_number"] < x["sequence_number"] and (
            x["spec_id"] in unpart or same_partition(x, d))
        return ok, ok
    if d["sequence_number"] > x["sequence_number"]:
        return False, False
    if is_dv(x):
        ok = x["referenced_data_file"] == d["path"]
        return ok, ok
    tgt = file_scoped_target(x)
    if tgt is not None:
        ok = tgt == d["path"]
        return ok, ok
    ok = same_partition(x, d)
    return ok, ok and not bounds_exclude(x, d["path"])


def check_table(tdir, snapshot_id=None):
    name = os.path.basename(tdir)
    sib = name in SIBLING_TABLES
    w = ice_min.Walker(tdir, sib)
    cmd = [ICEDRUID, "tasks", tdir] + w.remap_args()
    label = os.path.relpath(tdir, SHARED)
    if snapshot_id is not None:
        cmd += ["--snapshot-id", str(snapshot_id)]
        label += " @%d" % snapshot_id
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail("%s: icedruid tasks failed (%d): %s" % (label, p.returncode, p.stderr.strip()))
        return
    plan = json.loads(p.stdout)
    snap = w.snapshot(snapshot_id)
    data, deletes = w.live_files(snap)
    unpart = unpartitioned_specs(w.md)
    live_data = {}
    for d in data:
        if d["path"] in live_data:
            fail("%s: %s is live twice in the manifests" % (label, d["path"]))
        live_data[d["path"]] = d
    live_dels = {}
    for x in deletes:
        live_dels.setdefault(x["path"], []).append(x)

    exp_snap = snap["snapshot-id"] if snap else None
    if plan["snapshot_id"] != exp_snap:  # ids from the metadata JSON (exact Python ints)
        fail("%s: snapshot %s, metadata says %s" % (label, plan["snapshot_id"], exp_snap))
    if plan["counts"]["data_files"] != len(plan["tasks"]):
        fail("%s: counts.data_files %d != %d tasks" % (label, plan["counts"]["data_files"], len(plan["tasks"])))
    seen = set()
    pairs = 0
    for tk in plan["tasks"]:
        df = tk["data_file"]
        path = df["path"]
        if path in seen:
            fail("%s: %s planned twice" % (label, path))
        seen.add(path)
        d = live_data.get(path)
        if d is None:
            fail("%s: planned %s is not a live data file" % (label, path))
            continue
        for key in ("record_count", "file_size_in_bytes", "spec_id", "sequence_number", "file_sequence_number"):
            if df[key] != d[key]:
                fail("%s: %s %s is %s, manifest says %s" % (label, os.path.basename(path), key, df[key], d[key]))
        attached = []
        dv_count = 0
        for x in tk["delete_files"]:
            cands = live_dels.get(x["path"], [])
            if x.get("kind") == "deletion_vector":
                cands = [c for c in cands if c["content_offset"] == x.get("content_offset")]
                dv_count += 1
            if len(cands) != 1:
                fail("%s: %s: delete %s is not (uniquely) a live delete entry" % (label, os.path.basename(path), x["path"]))
                continue
            c = cands[0]
            attached.append(id(c))
            if x["kind"] != kind_of(c) or x["sequence_number"] != c["sequence_number"] \
                    or x["record_count"] != c["record_count"]:
                fail("%s: delete %s reported as %s/seq %s/rc %s, manifest: %s/%s/%s" % (
                    label, os.path.basename(x["path"]), x["kind"], x["sequence_number"], x["record_count"],
                    kind_of(c), c["sequence_number"], c["record_count"]))
            if c["content"] == "equality_deletes" and sorted(x.get("equality_ids") or []) != sorted(c["equality_ids"] or []):
                fail("%s: delete %s equality ids differ" % (label, x["path"]))
            ok, _must = can_apply(c, d, unpart)
            if not ok:
                fail("%s: %s (seq %s) cannot apply to %s (seq %s)" % (
                    label, os.path.basename(x["path"]), c["sequence_number"], os.path.basename(path),
                    d["sequence_number"]))
        if dv_count > 1:
            fail("%s: %d DVs for %s" % (label, dv_count, path))
        has_dv = dv_count == 1
        if len(set(attached)) != len(attached):
            fail("%s: a delete is attached twice to %s" % (label, path))
        for x in deletes:
            _ok, must = can_apply(x, d, unpart)
            if has_dv and x["content"] == "position_deletes" and not is_dv(x):
                must = False  # a DV replaces position delete files
            if must and id(x) not in attached:
                fail("%s: %s must apply to %s but is missing" % (label, os.path.basename(x["path"]), os.path.basename(path)))
        pairs += len(tk["delete_files"])
    missing = set(live_data) - seen
    if missing:
        fail("%s: live data files not planned: %s" % (label, sorted(missing)[:5]))
    print("ok  %-100s %4d data %3d deletes %4d pairs" % (label, len(seen), len(deletes), pairs))
    return len(seen)


tables = table_dirs()
if len(tables) < 50:
    fail("expected at least 50 table directories, found %d" % len(tables))
total = 0
older = 0
for t in tables:
    try:
        total += check_table(t) or 0
        # every older snapshot too (time travel by id), when its manifest list is present
        w = ice_min.Walker(t)
        cur = w.md.get("current-snapshot-id")
        for s in w.md.get("snapshots", []):
            if s["snapshot-id"] != cur and os.path.exists(w.local(s["manifest-list"])):
                check_table(t, s["snapshot-id"])
                older += 1
    except Exception as e:  # a reader error is a test failure, not a crash of the test
        fail("%s: %s: %s" % (t, type(e).__name__, e))
print("%d tables (+%d older snapshots), %d data files planned in current snapshots, %d failures" % (
    len(tables), older, total, len(failures)))
sys.exit(1 if failures else 0)
