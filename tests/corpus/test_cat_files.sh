#!/usr/bin/env bash
# `icedruid cat FILE... [--threads N]`: several files in one process, decoded up to N at a
# time, must print exactly the bytes of one `icedruid cat FILE` per file, in argument
# order, for every N. Checked on a mix of corpus files (Parquet pages v1/v2 and codecs,
# Avro, ORC), on large bench2m files (outputs of tens of MB, so the later files' output
# queues fill up and their workers wait), and on failures: a missing or damaged file in
# the middle must stop the output exactly after the files before it, exit 1 and print one
# line naming it. Usage errors exit 2.
# Env: ICEDRUID (command), ICD_SHARED (holds corpus/). Exit 77 when the corpus is absent.
set -uo pipefail
shared=${ICD_SHARED:-}
src=${ICD_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
icedruid=${ICEDRUID:-$src/build/icedruid}
corpus=$shared/corpus
if [ -z "$shared" ] || [ ! -d "$corpus/parquet" ]; then
  echo "test_cat_files: SKIP: no corpus at \$ICD_SHARED/corpus (set ICD_SHARED)"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/icd-cat-files.XXXXXX")
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "test_cat_files: FAIL: $*"; fail=$((fail + 1)); }

# expected OUT FILE...: the concatenation of one `cat` per file (all must succeed).
expected() {
  local out=$1 f
  shift
  : >"$out"
  for f in "$@"; do
    $icedruid cat "$f" >>"$out" 2>"$work/single.err" ||
      { bad "single cat of $f failed: $(head -c 300 "$work/single.err")"; return 1; }
  done
}

# same NAME EXPECTED FILE...: every thread count gives the expected bytes and exit 0.
same() {
  local name=$1 exp=$2 t
  shift 2
  for t in 1 2 3 8; do
    if ! $icedruid cat --threads "$t" "$@" >"$work/got" 2>"$work/err"; then
      bad "$name --threads $t: exit $?: $(head -c 300 "$work/err")"
    elif ! cmp -s "$exp" "$work/got"; then
      bad "$name --threads $t: output differs from one cat per file ($(wc -c <"$work/got") vs $(wc -c <"$exp") bytes)"
    elif [ -s "$work/err" ]; then
      bad "$name --threads $t: unexpected stderr: $(head -c 300 "$work/err")"
    else
      ok
    fi
  done
}

# a mix of small files, some twice
mapfile -t mix < <(
  ls "$corpus"/parquet/hyparquet-writer/*.parquet 2>/dev/null | head -8
  find "$corpus/impala" -path '*/data/*' -name '*.avro' 2>/dev/null | sort | head -2
  find "$corpus/impala" -path '*/data/*' -name '*.orc' 2>/dev/null | sort | head -2
  find "$corpus/impala" -path '*/data/*' -name '*.parq' -o -path '*/data/*' -name '*.parquet' 2>/dev/null | sort | head -6
)
[ ${#mix[@]} -ge 4 ] || { echo "test_cat_files: SKIP: too few corpus files"; exit 77; }
mix+=("${mix[0]}" "${mix[1]}")
if expected "$work/mix.exp" "${mix[@]}"; then
  [ -s "$work/mix.exp" ] || bad "the mixed files printed nothing"
  same "mixed corpus files (${#mix[@]})" "$work/mix.exp" "${mix[@]}"
fi

# one file alone, through the same code
if expected "$work/one.exp" "${mix[0]}"; then same "one file" "$work/one.exp" "${mix[0]}"; fi

# large outputs: the queue of a later file fills up and its worker must wait its turn
big=()
for f in "$shared"/bench/bench2m/table/data/*.parquet; do
  case "$f" in *deletes.parquet) continue ;; esac
  [ -f "$f" ] && big+=("$f")
  [ ${#big[@]} -ge 3 ] && break
done
if [ ${#big[@]} -ge 2 ]; then
  big+=("${mix[0]}")
  if expected "$work/big.exp" "${big[@]}"; then
    for t in 2 3; do
      if $icedruid cat --threads "$t" "${big[@]}" 2>"$work/err" | cmp -s "$work/big.exp" -; then
        ok
      else
        bad "bench2m files --threads $t: output differs from one cat per file"
      fi
    done
  fi
  rm -f "$work/big.exp"
else
  echo "test_cat_files: note: no bench2m data, large-output case skipped"
fi

# failures in the middle: output stops right after the files before the bad one
printf 'PAR1 this is not a parquet file at all PAR1' >"$work/damaged.parquet"
head -c 200 "${mix[0]}" >"$work/truncated.parquet"
for badfile in "$work/missing.parquet" "$work/damaged.parquet" "$work/truncated.parquet"; do
  name=$(basename "$badfile")
  expected "$work/before.exp" "${mix[0]}" "${mix[1]}" || continue
  for t in 1 2 3; do
    $icedruid cat --threads "$t" "${mix[0]}" "${mix[1]}" "$badfile" "${mix[2]}" "${mix[3]}" \
      >"$work/got" 2>"$work/err"
    rc=$?
    lines=$(wc -l <"$work/err")
    if [ $rc != 1 ]; then
      bad "$name --threads $t: exit $rc, want 1"
    elif ! cmp -s "$work/before.exp" "$work/got"; then
      bad "$name --threads $t: stdout is not exactly the files before the bad one"
    elif [ "$lines" != 1 ] || ! grep -q "$name" "$work/err"; then
      bad "$name --threads $t: stderr should be one line naming $name: $(head -c 300 "$work/err")"
    else
      ok
    fi
  done
done

# usage errors
for args in "--threads 0 ${mix[0]}" "--threads x ${mix[0]}" "--threads" "" "--bogus ${mix[0]}"; do
  # shellcheck disable=SC2086
  $icedruid cat $args >/dev/null 2>&1
  rc=$?
  if [ $rc = 2 ]; then ok; else bad "cat $args: exit $rc, want 2"; fi
done

echo "test_cat_files: $pass passed, $fail failed"
[ $fail = 0 ]
