#!/usr/bin/env bash
# Damaged tables: `icedruid scan` must fail cleanly. Small corpus tables with position
# deletes, equality deletes and deletion vectors are copied to a temp folder; each case
# damages ONE file of a fresh copy (a delete file missing, truncated, with a corrupt
# footer or page, a DV with a bad CRC, a delete file that is ORC or unknown bytes or that
# its manifest declares as ORC/Avro, a truncated data file, a corrupt manifest or manifest
# list) and runs `$ICEDRUID scan`. Each run must:
#   - exit with a failure status (1..125: not 0, not a signal, not a timeout),
#   - print exactly ONE line on stderr, naming the damaged file (its base name),
#   - print no sanitizer report (the test also runs under the ASan build via $ICEDRUID).
# Env: ICEDRUID (command), ICD_SHARED (holds corpus/), ICD_SOURCE_DIR (the checkout).
# Exit 77 when the corpus is absent.
set -uo pipefail
shared=${ICD_SHARED:-}
src=${ICD_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
icedruid=${ICEDRUID:-$src/build/icedruid}
corpus=$shared/corpus/impala
if [ -z "$shared" ] || [ ! -d "$corpus" ]; then
  echo "test_scan_errors: SKIP: no corpus at \$ICD_SHARED/corpus/impala (set ICD_SHARED)"
  exit 77
fi
command -v python3 >/dev/null || { echo "test_scan_errors: SKIP: python3 missing"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/icd-scan-errors.XXXXXX")
trap 'rm -rf "$work"' EXIT
pass=0 fail=0

# Tables: name -> corpus folder
declare -A TABLE=(
  [pos]=hadoop_catalog/ice/iceberg_v2_positional_not_all_data_files_have_delete_files
  [eq]=hadoop_catalog/ice/iceberg_v2_delete_equality
  [dv]=iceberg_v3/iceberg_v3_deletion_vectors
)

location() { # location of the table's newest metadata file
  python3 - "$1" <<'PY'
import json, os, re, sys
md = os.path.join(sys.argv[1], "metadata")
v = max((int(m.group(1)), f) for f in os.listdir(md) if (m := re.fullmatch(r"v(\d+)\.metadata\.json", f)))
print(json.load(open(os.path.join(md, v[1])))["location"])
PY
}

# files NAME KIND: local paths of the table copy's files of one kind, one per line:
# data, position_deletes, equality_deletes, deletion_vector (with "|offset|size"),
# manifest-list, delete-manifest, data-manifest
files() {
  local dir=$work/orig/$1 loc
  loc=$(location "$dir")
  python3 - "$icedruid" "$dir" "$loc" "$2" <<'PY'
import json, os, re, subprocess, sys
icd, d, loc, kind = sys.argv[1:]
local = lambda p: d + p[len(loc):] if p.startswith(loc) else p
out = set()
if kind in ("data", "position_deletes", "equality_deletes", "deletion_vector"):
    plan = json.loads(subprocess.check_output([icd, "tasks", d, "--remap", f"{loc}={d}"]))
    for t in plan["tasks"]:
        if kind == "data":
            out.add(local(t["data_file"]["path"]))
        for f in t["delete_files"]:
            if f["kind"] == kind:
                extra = f"|{f['content_offset']}|{f['content_size_in_bytes']}" if kind == "deletion_vector" else ""
                out.add(local(f["path"]) + extra)
else:
    md = os.path.join(d, "metadata")
    v = max((int(m.group(1)), f) for f in os.listdir(md) if (m := re.fullmatch(r"v(\d+)\.metadata\.json", f)))
    meta = json.load(open(os.path.join(md, v[1])))
    snap = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    ml = local(snap["manifest-list"])
    if kind == "manifest-list":
        out.add(ml)
    else:
        for line in subprocess.check_output([icd, "cat", ml]).splitlines():
            m = json.loads(line)
            if (m.get("content", 0) == 1) == (kind == "delete-manifest"):
                out.add(local(m["manifest_path"]))
print("\n".join(sorted(out)))
PY
}

# check NAME CASE FILE: scans a fresh damaged copy ($work/case) and checks the failure.
check() {
  local name=$1 case=$2 damaged=$3 loc rc lines
  loc=$(location "$work/case")
  timeout 120 "$icedruid" scan "$work/case" --remap "$loc=$work/case" >"$work/out" 2>"$work/err"
  rc=$?
  lines=$(grep -c '' "$work/err")
  local base why=""
  base=$(basename "$damaged")
  if [ $rc -eq 0 ]; then why="exit 0 (the damage went unnoticed)"
  elif [ $rc -ge 124 ]; then why="exit $rc (crash, signal or timeout)"
  elif [ "$lines" != 1 ]; then why="$lines stderr lines, want exactly 1"
  elif ! grep -qF -- "$base" "$work/err"; then why="the message does not name $base"
  elif grep -qiE 'sanitizer|runtime error' "$work/err"; then why="sanitizer report"
  fi
  if [ -z "$why" ]; then
    pass=$((pass + 1))
    [ "${VERBOSE:-0}" = 1 ] && echo "ok   $name/$case: $(head -c 300 "$work/err")"
  else
    fail=$((fail + 1))
    echo "FAIL $name/$case: $why; stderr: $(head -c 600 "$work/err" | tr '\n' '|')"
  fi
}

fresh() { rm -rf "$work/case"; cp -r "$work/orig/$1" "$work/case"; }
# in_case PATH: the same file in the fresh copy
in_case() { echo "$work/case/${1#"$work/orig/"*/}"; }
size() { stat -c %s "$1"; }
# poke FILE OFFSET HEXBYTES: overwrite bytes in place
poke() { printf "$(sed 's/\(..\)/\\x\1/g' <<<"$3")" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }

# the damages every Parquet delete (or data) file gets: CASE-NAME and how
parquet_damages() { # NAME ORIGFILE LABEL
  local name=$1 orig=$2 label=$3 f n flen
  fresh "$name"; f=$(in_case "$orig"); rm -f "$f"; check "$name" "$label-missing" "$f"
  fresh "$name"; f=$(in_case "$orig"); n=$(size "$f"); truncate -s $((n / 2)) "$f"
  check "$name" "$label-truncated-half" "$f"
  fresh "$name"; f=$(in_case "$orig"); truncate -s $(( $(size "$f") - 3 )) "$f"
  check "$name" "$label-truncated-tail" "$f"
  fresh "$name"; f=$(in_case "$orig"); : >"$f"; check "$name" "$label-empty" "$f"
  # footer length (the 4 bytes before the closing PAR1) far beyond the file
  fresh "$name"; f=$(in_case "$orig"); poke "$f" $(( $(size "$f") - 8 )) ffffff7f
  check "$name" "$label-footer-length" "$f"
  # footer thrift: the first bytes of the FileMetaData struct
  fresh "$name"; f=$(in_case "$orig"); n=$(size "$f")
  flen=$(od -An -tu4 -j $((n - 8)) -N4 "$f" | tr -d ' ')
  poke "$f" $((n - 8 - flen)) ffffffffffffffff
  check "$name" "$label-footer-thrift" "$f"
  # the first page header (right after the leading PAR1)
  fresh "$name"; f=$(in_case "$orig"); poke "$f" 4 ffffffffffffffff
  check "$name" "$label-page-header" "$f"
  # an ORC file in its place
  fresh "$name"; f=$(in_case "$orig"); cp "$orc_file" "$f"; check "$name" "$label-is-orc" "$f"
  # unknown bytes
  fresh "$name"; f=$(in_case "$orig"); head -c 2000 /dev/urandom >"$f"
  check "$name" "$label-random-bytes" "$f"
}

# declare_format NAME FORMAT FILE: the delete manifests say delete file FILE is FORMAT
declare_format() {
  local name=$1 fmt=$2 target dm ml
  target=$(basename "$3")
  fresh "$name"
  for dm in $(files "$name" delete-manifest); do
  dm=$(in_case "$dm")
  python3 - "$icedruid" "$dm" "$fmt" "$src" "$target" <<'PY' || return 1
import base64, json, os, subprocess, sys
icd, path, fmt, src, target = sys.argv[1:]
sys.path.insert(0, src + "/tests/tools")
from icewriter import avro
info = json.loads(subprocess.check_output([icd, "inspect", path]))
schema = info["schema"]
recs = [json.loads(l) for l in subprocess.check_output([icd, "cat", path]).splitlines()]
def unjson(s, v):
    """icedruid cat JSON -> icewriter values, guided by the Avro schema (bytes are base64)."""
    if isinstance(s, list):  # union: null or the other branch
        if v is None:
            return None
        other = [b for b in s if b != "null"]
        return unjson(other[0], v)
    if isinstance(s, str):
        return base64.b64decode(v) if s in ("bytes",) or s == "fixed" else v
    t = s["type"]
    if t == "record":
        return {f["name"]: unjson(f["type"], v.get(f["name"])) for f in s["fields"]}
    if t == "array":
        items = s["items"]
        if isinstance(items, dict) and items.get("type") == "record" and {f["name"] for f in items["fields"]} == {"key", "value"} and isinstance(v, dict):
            v = [{"key": k, "value": x} for k, x in v.items()]
        return [unjson(items, x) for x in v]
    if t == "map":
        return {k: unjson(s["values"], x) for k, x in v.items()}
    if t in ("bytes", "fixed"):
        return base64.b64decode(v)
    return unjson(t, v) if isinstance(t, (dict, list)) else v
records = [unjson(schema, r) for r in recs]
for r in records:
    if os.path.basename(r["data_file"]["file_path"]) == target:
        r["data_file"]["file_format"] = fmt
meta = {k: (json.dumps(v) if not isinstance(v, str) else v) for k, v in info["metadata"].items() if not k.startswith("avro.")}
avro.write_container(path, schema, records, metadata=meta)
PY
  done
  # manifest lengths changed: the manifest list records them, rewrite its entries too
  ml=$(in_case "$(files "$name" manifest-list)")
  python3 - "$icedruid" "$ml" "$src" "$(location "$work/case")" "$work/case" <<'PY' || return 1
import json, os, subprocess, sys
icd, path, src, loc, local = sys.argv[1:]
sys.path.insert(0, src + "/tests/tools")
from icewriter import avro
info = json.loads(subprocess.check_output([icd, "inspect", path]))
recs = [json.loads(l) for l in subprocess.check_output([icd, "cat", path]).splitlines()]
for r in recs:
    p = r["manifest_path"]
    r["manifest_length"] = os.path.getsize(local + p[len(loc):] if p.startswith(loc) else p)
    for ps in r.get("partitions") or []:
        for k in ("lower_bound", "upper_bound"):
            if ps.get(k) is not None:
                import base64
                ps[k] = base64.b64decode(ps[k])
meta = {k: (json.dumps(v) if not isinstance(v, str) else v) for k, v in info["metadata"].items() if not k.startswith("avro.")}
avro.write_container(path, info["schema"], recs, metadata=meta)
PY
}

# ---- set up ----
mkdir -p "$work/orig"
for t in "${!TABLE[@]}"; do
  [ -d "$corpus/${TABLE[$t]}" ] || { echo "test_scan_errors: SKIP: $corpus/${TABLE[$t]} missing"; exit 77; }
  cp -r "$corpus/${TABLE[$t]}" "$work/orig/$t"
  # the intact copy must scan
  loc=$(location "$work/orig/$t")
  if ! "$icedruid" scan "$work/orig/$t" --remap "$loc=$work/orig/$t" >/dev/null 2>"$work/err"; then
    echo "FAIL $t: the intact table does not scan: $(head -c 300 "$work/err")"; exit 1
  fi
done
orc_file=$(find "$corpus/hadoop_catalog/ice/iceberg_v2_partitioned_position_deletes_orc" -name '*delete*.orc' | sed -n 1p)
[ -f "$orc_file" ] || { echo "test_scan_errors: SKIP: no ORC delete file in the corpus"; exit 77; }

# ---- position deletes ----
pos_file=$(files pos position_deletes | sed -n 1p)
[ -n "$pos_file" ] || { echo "FAIL: no position delete file found in pos"; exit 1; }
parquet_damages pos "$pos_file" posdel
for fmt in ORC AVRO; do
  if declare_format pos "$fmt" "$pos_file"; then check pos "posdel-declared-$fmt" "$(in_case "$pos_file")"
  else fail=$((fail + 1)); echo "FAIL pos/declared-$fmt: could not rewrite the manifest"; fi
done

# ---- equality deletes ----
eq_file=$(files eq equality_deletes | sed -n 1p)
[ -n "$eq_file" ] || { echo "FAIL: no equality delete file found in eq"; exit 1; }
parquet_damages eq "$eq_file" eqdel
if declare_format eq ORC "$eq_file"; then check eq "eqdel-declared-ORC" "$(in_case "$eq_file")"
else fail=$((fail + 1)); echo "FAIL eq/declared-ORC: could not rewrite the manifest"; fi

# ---- deletion vectors (Puffin) ----
dv=$(files dv deletion_vector | sed -n 1p)
dv_file=${dv%%|*}; rest=${dv#*|}; dv_off=${rest%%|*}; dv_len=${rest#*|}
[ -n "$dv_file" ] || { echo "FAIL: no deletion vector found in dv"; exit 1; }
fresh dv; f=$(in_case "$dv_file"); rm -f "$f"; check dv dv-missing "$f"
fresh dv; f=$(in_case "$dv_file"); truncate -s $(( $(size "$f") / 2 )) "$f"; check dv dv-truncated-half "$f"
fresh dv; f=$(in_case "$dv_file"); truncate -s $((dv_off + dv_len - 2)) "$f"; check dv dv-truncated-in-blob "$f"
# the blob: length (4, big-endian), magic D1 D3 39 64, roaring bitmap, CRC-32 (4)
fresh dv; f=$(in_case "$dv_file"); b=$(od -An -tx1 -j $((dv_off + dv_len - 1)) -N1 "$f" | tr -d ' ')
poke "$f" $((dv_off + dv_len - 1)) "$(printf '%02x' $(( 0x$b ^ 0xff )))"; check dv dv-crc "$f"
fresh dv; f=$(in_case "$dv_file"); poke "$f" $((dv_off + 4)) 00000000; check dv dv-magic "$f"
fresh dv; f=$(in_case "$dv_file"); poke "$f" "$dv_off" 7fffffff; check dv dv-length "$f"
fresh dv; f=$(in_case "$dv_file"); b=$(od -An -tx1 -j $((dv_off + 10)) -N1 "$f" | tr -d ' ')
poke "$f" $((dv_off + 10)) "$(printf '%02x' $(( 0x$b ^ 0x5a )))"; check dv dv-bitmap-byte "$f"
fresh dv; f=$(in_case "$dv_file"); cp "$orc_file" "$f"; check dv dv-is-orc "$f"

# ---- data files ----
data_file=$(files pos data | sed -n 1p)
fresh pos; f=$(in_case "$data_file"); truncate -s $(( $(size "$f") / 2 )) "$f"; check pos data-truncated "$f"
fresh pos; f=$(in_case "$data_file"); rm -f "$f"; check pos data-missing "$f"
fresh pos; f=$(in_case "$data_file"); poke "$f" 4 ffffffffffffffff; check pos data-page-header "$f"

# ---- manifests and manifest lists ----
for t in pos eq dv; do
  dm=$(files "$t" delete-manifest | sed -n 1p)
  fresh "$t"; f=$(in_case "$dm"); truncate -s $(( $(size "$f") / 2 )) "$f"; check "$t" delete-manifest-truncated "$f"
  fresh "$t"; f=$(in_case "$dm"); poke "$f" $(( $(size "$f") - 8 )) 0000000000000000
  check "$t" delete-manifest-sync "$f"
  fresh "$t"; f=$(in_case "$dm"); rm -f "$f"; check "$t" delete-manifest-missing "$f"
  ml=$(files "$t" manifest-list)
  fresh "$t"; f=$(in_case "$ml"); truncate -s $(( $(size "$f") / 2 )) "$f"; check "$t" manifest-list-truncated "$f"
done

echo "test_scan_errors: $pass passed, $fail failed"
[ $fail -eq 0 ]
