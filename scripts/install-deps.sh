#!/usr/bin/env bash
# Installs what icedruid needs to build and test on Debian 12 (idempotent).
# Usage: bash scripts/install-deps.sh
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config git ca-certificates curl python3
  clang libclang-rt-14-dev          # sanitizers and libFuzzer
  clang-format                      # the formatting check of scripts/test.sh
  cppcheck                          # the static analysis of scripts/test.sh (scripts/cppcheck.sh)
  libjansson-dev                    # JSON: metadata, specs, REST
  libavro-dev                       # Avro writer used by the planning benchmark
  # libcurl, GSS-API, OpenSSL and libmicrohttpd are loaded on first use (dlopen,
  # src/base/dynlib.h), not linked; their run-time packages are still needed.
  libcurl4-openssl-dev              # HTTP(S), S3
  libkrb5-dev libssl-dev            # Hive Metastore: Kerberos (GSS-API) and TLS
  krb5-kdc krb5-admin-server krb5-user  # tests: a throw-away MIT KDC (kdb5_util, kadmin.local)
  python3-gssapi python3-thrift thrift-compiler python3-botocore  # tests: real GSS-API,
                                    # Apache Thrift and the AWS SDK signer as test peers
  libmicrohttpd-dev                 # icedruid serve
  zlib1g-dev libsnappy-dev libzstd-dev liblz4-dev libbrotli-dev
  libdeflate-dev                    # whole-buffer inflate (zlib stays for the rest)
  libroaring-dev                    # deletion vectors
  libxxhash-dev                     # hashing
  protobuf-c-compiler libprotobuf-c-dev  # ORC file tails (protoc-c at build time)
  wrk                               # serve benchmark
  tmux                              # terminal tests: progress line, table output
  man-db groff-base bsdextrautils   # the installed man page is read back by tests (man, col)
  zsh                               # the generated zsh completion is checked with zsh -n
  zstd                              # tests: the read-back of staged Avro files with zstandard blocks
  openjdk-17-jdk-headless libjoda-time-java libjackson2-databind-java  # the Druid-side oracle (tests/druid/oracle)
)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# Node.js (tests and benchmarks only: DuckDB and icebird from npm). Any node >= 18 will do;
# Debian's own packages are installed when none is present.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi
