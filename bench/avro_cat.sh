#!/usr/bin/env bash
# Avro decode speed: records/s of `icedruid cat` and of the reader's skip / decode / json
# paths (bench/tool_avro_read.c, CPU time) on a generated file of N Iceberg-style manifest
# entries (default 1,000,000, deflate) and on the largest manifests of the corpus.
# Usage: bash bench/avro_cat.sh [N] [CODEC]     (after bash scripts/build.sh release)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
codec=${2:-deflate}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/bench/tool_avro_gen manifest "$tmp/m.avro" "$n" "$codec"
echo "== generated: $n manifest entries, $codec, $(stat -c %s "$tmp/m.avro") bytes"
build/bench/tool_avro_read "$tmp/m.avro"
start=$(date +%s.%N)
build/icedruid cat "$tmp/m.avro" > /dev/null
end=$(date +%s.%N)
python3 -c "import sys; s=float(sys.argv[2])-float(sys.argv[1]); print('icedruid cat > /dev/null: %.2f s wall, %.0f records/s' % (s, int(sys.argv[3])/s))" "$start" "$end" "$n"
shared=${ICD_SHARED:-../shared}
if [ -d "$shared/corpus" ]; then
  for f in $(ls -S $(find "$shared/corpus" -name '*.avro') | head -3); do
    echo "== corpus: $f ($(stat -c %s "$f") bytes), read 2000 times"
    build/bench/tool_avro_read -n 2000 "$f"
  done
fi
