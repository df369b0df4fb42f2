#!/usr/bin/env python3
"""`icedruid scan` of the corpus ORC table with nested columns (struct, list, map, lists of
maps, maps of structs of lists: hadoop_catalog/ice/complextypestbl_iceberg_orc, no delete
files) against `icedruid cat` of its ORC data files. The two go through separate code:
scan binds the Iceberg schema by field id and writes through the row sink (data_orc.c,
scan_json.c), cat walks the ORC schema (orc_json.c, checked against the Impala oracles by
test_orc_cat.py). With no deletes and the same column names, both must print the same
multiset of rows. Also: every other ORC table of the corpus without an oracle scans (exit 0, one JSON
object per line; bench/bench_orc.sh compares them with their Parquet twins), and the
migrated complex table whose name mapping contradicts its schema fails clearly, as its
Parquet twin does. Needs ICEDRUID and ICD_SHARED (77 without).
"""
import collections
import json
import os
import subprocess
import sys

shared = os.environ.get("ICD_SHARED", "")
corpus = os.path.join(shared, "corpus", "impala")
if not shared or not os.path.isdir(corpus):
    print("SKIP: corpus not found (ICD_SHARED=%r)" % shared)
    sys.exit(77)
icedruid = os.environ["ICEDRUID"]
failures = 0


def location(table):
    mdir = os.path.join(table, "metadata")
    best = max((int(n[1:].split(".")[0]), n) for n in os.listdir(mdir)
               if n.startswith("v") and n.endswith(".metadata.json"))
    with open(os.path.join(mdir, best[1])) as f:
        return json.load(f)["location"]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def canon_rows(text):
    return collections.Counter(json.dumps(json.loads(line), sort_keys=True)
                               for line in text.splitlines() if line.strip())


def fail(msg):
    global failures
    failures += 1
    print("FAIL", msg)


table = os.path.join(corpus, "hadoop_catalog/ice/complextypestbl_iceberg_orc")
rc, out, err = run([icedruid, "scan", table, "--remap", "%s=%s" % (location(table), table)])
if rc != 0:
    fail("scan complextypestbl_iceberg_orc: exit %d: %s" % (rc, err.strip()))
else:
    cat = collections.Counter()
    data = os.path.join(table, "data")
    for name in sorted(os.listdir(data)):
        crc, cout, cerr = run([icedruid, "cat", os.path.join(data, name)])
        if crc != 0:
            fail("cat %s: %s" % (name, cerr.strip()))
        cat += canon_rows(cout)
    got = canon_rows(out)
    if got != cat or sum(got.values()) < 8:
        fail("complextypestbl_iceberg_orc: scan and cat differ: scan only %s; cat only %s"
             % (list((got - cat).elements())[:2], list((cat - got).elements())[:2]))
    else:
        print("ok   complextypestbl_iceberg_orc: %d rows, scan == cat" % sum(got.values()))

# every other ORC table scans cleanly
for rel in ["hadoop_catalog/ice/airports_orc", "hadoop_catalog/ice/iceberg_alltypes_part_orc",
            "hadoop_catalog/ice/iceberg_v2_no_deletes_orc",
            "hadoop_catalog/ice/iceberg_v2_positional_not_all_data_files_have_delete_files_orc",
            "iceberg_migrated_alter_test_orc",
            "iceberg_mixed_file_format_test", "iceberg_v3/iceberg_v3_default_value_orc",
            "iceberg_v3/iceberg_v3_row_lineage_orc"]:
    t = os.path.join(corpus, rel)
    rc, out, err = run([icedruid, "scan", t, "--remap", "%s=%s" % (location(t), t)])
    try:
        rows = [json.loads(x) for x in out.splitlines() if x.strip()]
        ok = rc == 0 and all(isinstance(r, dict) for r in rows)
    except ValueError:
        ok = False
    if not ok:
        fail("scan %s: exit %d: %s" % (rel, rc, err.strip()[:200]))
    else:
        print("ok   %s: %d rows" % (rel, len(rows)))

# iceberg_migrated_complex_test(_orc): the name mapping numbers the columns in pre-order
# (struct_1_col.string_col -> 4) while the schema numbers them level by level (4 is the
# list int_array_col). The mapping decides (spec "Column Projection"), so both the Parquet
# and the ORC twin must fail with one clear line naming the file, never print rows.
for rel in ["iceberg_migrated_complex_test", "iceberg_migrated_complex_test_orc"]:
    t = os.path.join(corpus, rel)
    rc, out, err = run([icedruid, "scan", t, "--remap", "%s=%s" % (location(t), t)])
    lines = [x for x in err.splitlines() if x.strip()]
    if rc == 0 or out or len(lines) != 1 or "000000_0" not in err or "int_array_col" not in err:
        fail("scan %s: expected one error line about int_array_col; exit %d, stderr %r"
             % (rel, rc, err.strip()[:300]))
    else:
        print("ok   %s: %s" % (rel, lines[0][:120]))

print("%d failed" % failures if failures else "all passed")
sys.exit(1 if failures else 0)
