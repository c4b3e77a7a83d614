#!/bin/sh
# The shipped preload.conf must be exactly what src/tools/preload-genconf prints
# from the key table in src/confkeys.h: a key, default, range or doc
# string changed there without regenerating the file would ship a
# configuration that documents something else than the daemon does.
#
# Automake test protocol: exit 0 pass, 1 fail, 77 skip.

: "${top_srcdir:=$(dirname "$0")/..}"
: "${top_builddir:=.}"

genconf="$top_builddir/src/tools/preload-genconf"
shipped="$top_srcdir/preload.conf"

if [ ! -x "$genconf" ]; then
	echo "FAIL: $genconf is not built"
	exit 1
fi
if [ ! -f "$shipped" ]; then
	echo "FAIL: $shipped is missing"
	exit 1
fi

tmp=$(mktemp "${TMPDIR:-/tmp}/preload-conf.XXXXXX") || exit 1
trap 'rm -f "$tmp"' EXIT

if ! "$genconf" > "$tmp"; then
	echo "FAIL: $genconf failed"
	exit 1
fi
if [ ! -s "$tmp" ]; then
	echo "FAIL: $genconf printed nothing"
	exit 1
fi

if ! diff -u "$shipped" "$tmp"; then
	echo "FAIL: $shipped differs from the output of preload-genconf (diff above)."
	echo "It is generated from src/confkeys.h: run 'make update-conf' and commit it."
	exit 1
fi
echo "PASS: $shipped matches src/confkeys.h"
exit 0
