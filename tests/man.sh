#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The documentation covers the program:
#  - every long option "preload --help" prints is described in preload(8);
#  - every configuration key the key table lists ("preload-genconf --keys")
#    has an entry in preload.conf(5) giving its default, and a line
#    "key = default" under its [group] in the shipped preload.conf.
# preload.conf(5) is generated from the same table, so this mostly guards
# the generation; preload(8) and preload.conf are where drift can happen.
#
# Exit status: 0 pass, 1 fail, 77 skipped (programs not built).

set -u

top_builddir=${top_builddir:-$(pwd)}
top_srcdir=${top_srcdir:-$(pwd)}
preload="$top_builddir/src/preload"
genconf="$top_builddir/src/tools/preload-genconf"
man8="$top_builddir/doc/preload.8"
man5="$top_builddir/doc/preload.conf.5"
shipped="$top_srcdir/preload.conf"

for program in "$preload" "$genconf"; do
	if [ ! -x "$program" ]; then
		echo "SKIP: $program is not built"
		exit 77
	fi
done

failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

work=$(mktemp -d "${TMPDIR:-/tmp}/preload-man.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

# Man pages as plain text: "\-" is a hyphen, "\fB" and the like are font
# changes, "\&" is a zero-width guard, "\(aq" a quote.
deroff() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' -e "s/\\\\(aq/'/g" "$1"
}

for page in "$man8" "$man5"; do
	if [ ! -s "$page" ]; then
		fail "$page is missing or empty"
	fi
done
[ "$failures" -eq 0 ] || exit 1
deroff "$man8" > "$work/preload.8.txt"
deroff "$man5" > "$work/preload.conf.5.txt"

# ---- preload(8) against --help ----

if ! "$preload" --help > "$work/help" 2>&1; then
	fail "preload --help exited with status $?"
fi
grep -o -e '--[a-z][a-z0-9-]*' "$work/help" | sort -u > "$work/options"
count=$(wc -l < "$work/options")
# 0.6.4's options plus --once: fewer than ten means --help changed shape.
if [ "$count" -lt 10 ]; then
	fail "only $count long options found in preload --help:"
	cat "$work/help"
fi
while read -r option; do
	# As an option, not inside a longer one: --help must not be satisfied
	# by --help-all.
	if ! grep -q -e "$option\([^a-z0-9-]\|\$\)" "$work/preload.8.txt"; then
		fail "preload(8) does not document $option"
	fi
done < "$work/options"

# ---- preloadctl(8) against its --help ----

ctl="$top_builddir/src/tools/preloadctl"
man8ctl="$top_builddir/doc/preloadctl.8"
if [ ! -s "$man8ctl" ]; then
	fail "$man8ctl is missing or empty"
elif ! "$ctl" --help > "$work/ctlhelp" 2>&1; then
	fail "preloadctl --help exited with status $?"
else
	deroff "$man8ctl" > "$work/preloadctl.8.txt"
	grep -o -e '--[a-z][a-z0-9-]*' "$work/ctlhelp" | sort -u > "$work/ctloptions"
	[ "$(wc -l < "$work/ctloptions")" -ge 5 ] || fail "too few options in preloadctl --help"
	while read -r option; do
		grep -q -e "$option\([^a-z0-9-]\|\$\)" "$work/preloadctl.8.txt" ||
			fail "preloadctl(8) does not document $option"
	done < "$work/ctloptions"
	for verb in status top hits explain save reload dump; do
		grep -q "^  $verb\\b" "$work/ctlhelp" || fail "preloadctl --help does not list $verb"
		grep -q "^\.B[IR]* $verb\b" "$man8ctl" || fail "preloadctl(8) does not describe $verb"
	done
	for section in NAME SYNOPSIS DESCRIPTION VERBS OPTIONS "EXIT STATUS" "SEE ALSO"; do
		grep -q "^\.SH \"*$section\"*\$" "$man8ctl" || fail "preloadctl(8) has no $section section"
	done
fi

for section in NAME SYNOPSIS DESCRIPTION OPTIONS FILES SIGNALS "EXIT STATUS" "SEE ALSO"; do
	if ! grep -q "^\.SH \"*$section\"*\$" "$man8"; then
		fail "preload(8) has no $section section"
	fi
done
for signal in SIGHUP SIGUSR1 SIGUSR2 SIGTERM SIGINT SIGQUIT; do
	grep -q -w "$signal" "$work/preload.8.txt" || fail "preload(8) does not mention $signal"
done
# The exit codes preload.c returns.
for code in 0 1 64 75 78; do
	grep -q "^\.B $code\$" "$man8" || fail "preload(8) does not list exit status $code"
done

# ---- preload.conf(5) and preload.conf against the key table ----

if ! "$genconf" --keys > "$work/keys"; then
	fail "preload-genconf --keys exited with status $?"
fi
count=$(wc -l < "$work/keys")
if [ "$count" -lt 1 ]; then
	fail "preload-genconf --keys listed no keys"
fi

# For each key: "key default" as "preload.conf(5)" shows it, i.e. the line
# after ".B key" reads "... default DEFAULT ...".
tab=$(printf '\t')
while IFS="$tab" read -r group key type default min max unit; do
	: "$type" "$min" "$max" "$unit"
	if ! grep -q "^\.B $key\$" "$man5"; then
		fail "preload.conf(5) has no entry for [$group] $key"
		continue
	fi
	entry=$(awk -v key="$key" '
		found { print; exit }
		$0 == ".B " key { found = 1 }' "$man5" |
		sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' -e 's/\\://g')
	# genconf writes an empty default as "(empty)"; the pages say "empty".
	if [ "$default" = "(empty)" ]; then
		default=
		shown="default empty"
	else
		shown="default $default"
	fi
	case "$entry" in
	*"$shown"*) ;;
	*) fail "preload.conf(5) does not give [$group] $key the default '$default': $entry" ;;
	esac
	# ...and the group heading before it.
	heading=$(awk -v key="$key" '
		/^\.SS / { group = $0 }
		$0 == ".B " key { print group; exit }' "$man5")
	case "$heading" in
	*"[$group]"*) ;;
	*) fail "preload.conf(5) lists $key under '$heading', not [$group]" ;;
	esac

	# The shipped file: the value line under its [group] header.
	if ! value=$(awk -v group="[$group]" -v key="$key" '
		/^\[/ { current = $0; next }
		current == group && $1 == key && $2 == "=" {
			sub(/^[^=]*= */, ""); print; found = 1; exit
		}
		END { if (!found) exit 1 }' "$shipped"); then
		fail "preload.conf has no '$key = ...' line under [$group]"
	elif [ "$value" != "$default" ]; then
		fail "preload.conf sets [$group] $key = '$value', the table's default is '$default'"
	fi
done < "$work/keys"

if [ "$failures" -ne 0 ]; then
	echo "$failures documentation check(s) failed"
	exit 1
fi
echo "PASS: $(wc -l < "$work/options") options in preload(8), $count keys in preload.conf(5) and preload.conf"
exit 0
