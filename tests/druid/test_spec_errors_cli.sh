#!/usr/bin/env bash
# Every invalid spec of tests/druid/specs/invalid (expected.tsv: file, code, Druid's
# message for each required field and filter rule) makes each spec-driven command —
# plan, read, rewrite-spec and serve — exit 1 with that message on stderr, before any
# table is touched or any port opened.
set -euo pipefail
dir="$ICD_SOURCE_DIR/tests/druid/specs/invalid"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
while IFS=$'\t' read -r file code message; do
    [[ -z "$file" || "$file" == \#* ]] && continue
    message=${message%...} # "..." ends a message given by its beginning
    for cmd in plan read rewrite-spec serve; do
        n=$((n + 1))
        set +e
        extra=()
        [[ "$cmd" == serve ]] && extra=(--listen 127.0.0.1:0)
        timeout 20 "$ICEDRUID" "$cmd" --spec "$dir/$file" "${extra[@]}" \
            >"$tmp/out" 2>"$tmp/err" </dev/null
        rc=$?
        set -e
        if [[ $rc -ne 1 ]] || ! grep -qF -- "$message" "$tmp/err" || [[ -s "$tmp/out" ]]; then
            echo "FAIL $cmd $file: rc=$rc, stderr: $(head -c 400 "$tmp/err")"
            fail=1
        fi
    done
done <"$dir/expected.tsv"
echo "$n command runs checked"
[[ $n -ge 150 ]] || { echo "FAIL: too few cases"; fail=1; }
exit $fail
