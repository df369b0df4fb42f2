#!/usr/bin/env bash
# The command table (src/cli/commands.c) is the one description of the command line: every
# subcommand the sources define (cmd_* in src/cli/cli.h) must be in it, and every "--option"
# a command's parser looks for must be declared in it (else the checking in front of the
# parsers would refuse it, and help, man page and completion would not show it). Run after
# each merge: another branch adding a command or an option without a table entry fails here.
set -uo pipefail
I="$ICEDRUID"
src="$ICD_SOURCE_DIR"
fail=0
bash_comp=$("$I" --help-completion bash)
cmds=$("$I" --help | sed -n '/^commands:/,/^$/p' | awk '/^  [a-z]/ {print $1}')
for fn in $(grep -ohE '^int cmd_[a-z_]+\(int argc' "$src"/src/cli/*.h | sed 's/^int cmd_//; s/(int argc//' | sort -u); do
    name=${fn//_/-}
    if grep -qx -- "$name" <<<"$cmds"; then echo "ok   command $name is in the table"
    else echo "FAIL cmd_$fn has no entry '$name' in the command table (the table: $(echo $cmds))"; fail=1; fi
done
# options the parsers look for (commands.c itself excluded: it is the table)
for opt in $(grep -ohE '"--[a-z][a-z0-9-]*' $(ls "$src"/src/cli/*.c | grep -v '/commands.c$') | tr -d '"' | sort -u); do
    case "$opt" in --help|--version|--help-man|--help-completion|--auth-password) continue ;; esac
    if grep -qE -- "(^| )$opt( |\"|$)" <<<"$bash_comp"; then echo "ok   $opt is in the table"
    else echo "FAIL $opt is parsed by src/cli but not declared in the command table"; fail=1; fi
done
exit $fail
