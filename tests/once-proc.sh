#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The daemon's --once on a fake /proc (PRELOAD_PROC_ROOT): one cycle, then
# the saved state must hold exactly the executables and maps worked out
# below from the tree, no more, no fewer. Needs no root: nothing of the
# real /proc is read.
#
# The tree (T = a temporary directory, files under T/bin and T/lib):
#   100  exe -> bin/alpha   maps alpha [0,8K), liba [0,64K) and [64K,96K),
#                           libshared [0,16K); one anonymous and one
#                           deleted mapping, which are never learned
#   101  exe -> bin/alpha   a second process of alpha: one exe, one read
#   200  exe -> bin/beta    maps beta [0,8K), libshared [0,16K), libb [4K,36K),
#                           and a file outside mapprefix (T/other/x)
#   300  exe -> bin/small   maps small [0,4K): 4 KB < minsize, a bad exe
#   400  exe -> sbin/tool   refused by exeprefix
#   500  no exe link        a kernel thread
#   600  exe -> bin/reused  maps without bin/reused: its pid was reused, gone
#   meminfo                 the budget's figures
# minsize 20000 bytes. alpha: 8+64+32+16 KB, beta: 8+16+32 KB, both admitted.
#
# Exit status: 0 pass, 1 fail.

set -u

: "${top_builddir:=.}"
preload="$top_builddir/src/preload"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/preload-once.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	[ -f "$tmp/log" ] && sed 's/^/  log: /' "$tmp/log" | tail -n 30
	exit 1
}

[ -x "$preload" ] || fail "$preload is not built"

proc="$tmp/proc"
mkdir -p "$tmp/bin" "$tmp/sbin" "$tmp/lib" "$tmp/other" "$proc"
for f in bin/alpha bin/beta bin/small bin/reused sbin/tool lib/liba.so lib/libb.so \
	lib/libshared.so other/x; do
	printf 'x' > "$tmp/$f"
done

# pid exe: PID's exe link (none if exe is empty).
process() {
	mkdir -p "$proc/$1"
	[ -n "$2" ] && ln -s "$2" "$proc/$1/exe"
	: > "$proc/$1/maps"
}

# map pid start end offset path: one line of PID's maps (hex, as the kernel writes).
map() {
	printf '%x-%x r-xp %08x 08:01 1234                       %s\n' \
		$(($2)) $(($3)) $(($4)) "$5" >> "$proc/$1/maps"
}

process 100 "$tmp/bin/alpha"
map 100 0x400000 0x402000 0 "$tmp/bin/alpha"
map 100 0x7f0000000000 0x7f0000010000 0 "$tmp/lib/liba.so"
map 100 0x7f0000010000 0x7f0000018000 0x10000 "$tmp/lib/liba.so"
printf '7f0000020000-7f0000030000 rw-p 00000000 00:00 0\n' >> "$proc/100/maps"
map 100 0x7f0000030000 0x7f0000034000 0 "$tmp/lib/libshared.so"
map 100 0x7f0000040000 0x7f0000050000 0 "$tmp/lib/gone.so (deleted)"
process 101 "$tmp/bin/alpha"
cp "$proc/100/maps" "$proc/101/maps"
process 200 "$tmp/bin/beta"
map 200 0x400000 0x402000 0 "$tmp/bin/beta"
map 200 0x7f0000000000 0x7f0000004000 0 "$tmp/lib/libshared.so"
map 200 0x7f0000010000 0x7f0000018000 0x1000 "$tmp/lib/libb.so"
map 200 0x7f0000020000 0x7f0000021000 0 "$tmp/other/x"
process 300 "$tmp/bin/small"
map 300 0x400000 0x401000 0 "$tmp/bin/small"
process 400 "$tmp/sbin/tool"
map 400 0x400000 0x480000 0 "$tmp/sbin/tool"
process 500 ""
process 600 "$tmp/bin/reused"
map 600 0x400000 0x480000 0 "$tmp/lib/liba.so"
cat > "$proc/meminfo" <<EOF
MemTotal:        8000000 kB
MemFree:         2000000 kB
MemAvailable:    5000000 kB
Buffers:          100000 kB
Cached:          2500000 kB
EOF

cat > "$tmp/preload.conf" <<EOF
[model]
cycle = 20
minsize = 20000
[system]
exeprefix = $tmp/bin/;!/
mapprefix = $tmp/bin/;$tmp/lib/;!/
EOF

PRELOAD_PROC_ROOT=$proc "$preload" --once -c "$tmp/preload.conf" -s "$tmp/state" \
	-l "$tmp/log" -V 7 || fail "preload --once exited with $?"
grep -q "reading $proc instead of /proc" "$tmp/log" || fail "the log does not name the fake root"
[ -f "$tmp/state" ] || fail "no state saved"

# The saved model, as "kind path [offset length]" lines, sorted.
awk -F '\t' -v root="file://$tmp/" '
	function name(uri) { sub(root, "", uri); return uri }
	$1 == "FILE" { file[$2] = $7 }
	$1 == "MAP" { print "MAP " name(file[$6]) " " $4 " " $5 }
	$1 == "EXE" { print "EXE " name($NF) }
	$1 == "BADEXE" { print "BADEXE " name($4) " " $3 }
' "$tmp/state" | sort > "$tmp/got"

sort > "$tmp/want" <<EOF
BADEXE bin/small 4096
EXE bin/alpha
EXE bin/beta
MAP bin/alpha 0 8192
MAP bin/beta 0 8192
MAP lib/liba.so 0 65536
MAP lib/liba.so 65536 32768
MAP lib/libb.so 4096 32768
MAP lib/libshared.so 0 16384
EOF

if ! cmp -s "$tmp/want" "$tmp/got"; then
	echo "FAIL: the saved state differs from the fake /proc (- expected, + saved):"
	diff -u "$tmp/want" "$tmp/got" | tail -n +3
	exit 1
fi

echo "PASS: --once on a fake /proc saved exactly 2 exes, 6 maps and 1 bad exe"
exit 0
