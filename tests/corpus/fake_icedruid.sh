#!/bin/sh
# A stand-in for the icedruid command that dispatches `scan` to fake_scan.py; used to
# test the oracle harness itself (see README.md). Not a CTest test.
here=$(dirname "$0")
case "$1" in
  scan) exec python3 "$here/fake_scan.py" "$@" ;;
  *) echo "fake icedruid: only 'scan' is faked" >&2; exit 2 ;;
esac
