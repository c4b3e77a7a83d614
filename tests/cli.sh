#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The command line and the exit codes an init system acts on: 0 clean,
# 64 bad usage, 78 unusable configuration; a bad value in a usable
# configuration is a warning naming file, key and value, not an exit.
#
# Exit status: 0 pass, 1 fail.

set -u
top_builddir=${top_builddir:-$(pwd)}
preload="$top_builddir/src/preload"
work=$(mktemp -d "${TMPDIR:-/tmp}/cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }

# expect STATUS DESCRIPTION -- COMMAND...: runs it, output in $work/out
expect() {
	want=$1 what=$2
	shift 3
	"$@" > "$work/out" 2>&1 < /dev/null
	got=$?
	if [ "$got" = "$want" ]; then
		ok "$what (exit $got)"
	else
		not_ok "$what: exit $got, expected $want"
		sed 's/^/    /' "$work/out"
	fi
}

contains() { # PATTERN DESCRIPTION
	if grep -q -- "$1" "$work/out"; then ok "$2"; else not_ok "$2"; sed 's/^/    /' "$work/out"; fi
}

expect 0 "--version" -- "$preload" --version
contains "^preload [0-9]" "--version prints the version"
expect 0 "-v" -- "$preload" -v
expect 0 "--help" -- "$preload" --help
for option in --conffile --statefile --logfile --foreground --nice --verbose --debug --once --trace; do
	contains -- "$option" "--help lists $option"
done
contains "SIGUSR1" "--help lists the signals"

expect 64 "an unknown option" -- "$preload" --no-such-option
contains "Try 'preload --help'" "a usage error points to --help"
expect 64 "-V out of range" -- "$preload" -V 11
expect 64 "an extra argument" -- "$preload" -f extra
expect 64 "-n without a number" -- "$preload" -n lots

printf '[model]\ncycle = 20\n[broken\n' > "$work/syntax.conf"
expect 78 "a configuration file with a syntax error" -- \
	"$preload" --once -c "$work/syntax.conf" -s '' -l ''
contains "syntax.conf" "the error names the file"
expect 78 "a configuration file given with -c that does not exist" -- \
	"$preload" --once -c "$work/missing.conf" -s '' -l ''
mkdir "$work/dir.conf"
expect 78 "a directory given as the configuration file" -- \
	"$preload" --once -c "$work/dir.conf" -s '' -l ''

# A bad value: warned about (file, key, value), default kept, run goes on.
printf '[model]\ncycle = often\nminsize = 1000\n[system]\ndopredict = false\n' > "$work/value.conf"
expect 0 "a configuration file with a bad value" -- \
	"$preload" --once -c "$work/value.conf" -s "$work/state" -l '' -V 4
contains "value.conf: \[model\] cycle = 'often' is invalid" "the warning names file, key and value"
contains "keeping 20" "the warning says the default is kept"
[ -f "$work/state" ] && ok "--once saved the state" || not_ok "--once saved no state"
perm=$(stat -c %a "$work/state" 2>/dev/null)
[ "$perm" = 600 ] && ok "the state file is mode 0600" || not_ok "the state file is mode $perm"

expect 0 "-c '' runs on the defaults" -- "$preload" --once -c '' -s '' -l '' -V 4
contains "cycle 20 s" "the defaults are in force"

echo "cli: $passed passed, $failed failed"
[ "$failed" = 0 ]
