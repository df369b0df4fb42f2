#!/usr/bin/env bash
# The man page and the shell completion are generated from the command table at build
# time and installed by `cmake --install`; `man` shows the installed page; bash
# completion completes commands, options and option values from the same table.
set -uo pipefail
I="$ICEDRUID"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
command -v man >/dev/null || { echo "skip: man is not installed (scripts/install-deps.sh: man-db)"; exit 77; }

cmake --install "$ICD_BUILD_DIR" --prefix "$tmp/p" >"$tmp/install.log" 2>&1 || { bad "cmake --install: $(tail -3 "$tmp/install.log")"; exit 1; }
p="$tmp/p"
mandir=$(ls -d "$p"/share/man 2>/dev/null)
for f in share/man/man1/icedruid.1 share/bash-completion/completions/icedruid \
         share/zsh/site-functions/_icedruid share/doc/icedruid/LICENSE share/doc/icedruid/CHANGELOG.md \
         include/icedruid/version.h bin/icedruid; do
    [ -s "$p/$f" ] && ok "installed $f" || bad "not installed: $f"
done
"$I" --help-man | cmp -s - "$p/share/man/man1/icedruid.1" && ok "the installed man page is what the command table generates" || bad "man page differs from --help-man"

MANPATH="$mandir" MANWIDTH=100 man icedruid 2>"$tmp/man.err" | col -b >"$tmp/man.txt"
grep -q 'icedruid - read Apache Iceberg tables correctly, for Apache Druid' "$tmp/man.txt" \
    && ok "MANPATH=... man icedruid shows the page" || bad "man icedruid: $(head -5 "$tmp/man.txt") $(cat "$tmp/man.err")"
MANWIDTH=100 man -l "$p/share/man/man1/icedruid.1" 2>/dev/null | col -b >"$tmp/manl.txt"
cmp -s "$tmp/man.txt" "$tmp/manl.txt" && ok "man -l shows the same page" || bad "man -l differs"
cmds=$("$I" --help | sed -n '/^commands:/,/^$/p' | awk '/^  [a-z]/ {print $1}')
missing=""
for c in $cmds; do grep -qE "^ +$c( |$)" "$tmp/man.txt" || missing="$missing $c"; done
[ -z "$missing" ] && ok "every command of --help has a section in the man page" || bad "man page lacks:$missing"
for s in 'EXIT STATUS' 'LOCATIONS' 'ENVIRONMENT' 'ICEDRUID_RETRIES' '--druid-locations WHICH' '--format FORMAT'; do
    grep -qF -- "$s" "$tmp/man.txt" && ok "man page has '$s'" || bad "man page lacks '$s'"
done
if groff -man -Tutf8 -ww -z "$p/share/man/man1/icedruid.1" 2>"$tmp/groff.err" && [ ! -s "$tmp/groff.err" ]; then
    ok "groff -ww: no warnings"
else
    bad "groff warnings: $(head -5 "$tmp/groff.err")"
fi

# bash completion, run as bash runs it
comp() { # comp WORD... : prints COMPREPLY for the last word
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _icedruid; printf "%s\n" "${COMPREPLY[@]}"' \
        _ "$p/share/bash-completion/completions/icedruid" "$@"
}
[ "$(comp icedruid sc | sort | tr '\n' ' ')" = "scan schema " ] && ok "bash: 'icedruid sc' -> scan schema" || bad "bash commands: $(comp icedruid sc)"
comp icedruid scan --snap | grep -qx -- '--snapshot-id' && ok "bash: 'scan --snap' -> --snapshot-id" || bad "bash options: $(comp icedruid scan --snap)"
[ "$(comp icedruid snapshots --format '' | sort | tr '\n' ' ')" = "json table " ] && ok "bash: '--format ' -> json table" || bad "bash values: $(comp icedruid snapshots --format '')"
comp icedruid serve --li | grep -qx -- '--listen' && ok "bash: serve options come from the same table" || bad "bash serve"
comp icedruid read --no-pro | grep -qx -- '--no-progress' && ok "bash: global options on every command" || bad "bash global"
if command -v zsh >/dev/null; then
    zsh -n "$p/share/zsh/site-functions/_icedruid" && ok "zsh completion parses (zsh -n)" || bad "zsh -n"
    grep -qF "'--format[table (aligned columns) or json (one JSON array" "$p/share/zsh/site-functions/_icedruid" \
        && grep -qF ':FORMAT:(table json)' "$p/share/zsh/site-functions/_icedruid" \
        && ok "zsh: --format with its values" || bad "zsh --format spec"
    # run it: compsys in a pseudo-terminal is heavy; check that _icedruid defines and that
    # the command list has every command
    n=$(sed -n '/cmds=(/,/^    )/p' "$p/share/zsh/site-functions/_icedruid" | grep -c "^        '")
    [ "$n" = "$(echo "$cmds" | wc -w)" ] && ok "zsh: all $n commands" || bad "zsh commands: $n"
else
    echo "note: zsh not installed; the zsh completion is only checked textually"
    grep -q '^#compdef icedruid' "$p/share/zsh/site-functions/_icedruid" && ok "zsh: #compdef" || bad "zsh header"
fi
exit $fail
