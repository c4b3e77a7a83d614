#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End-to-end test of learning from fanotify, as root, against real
# programs and the real page cache:
#  1. a program that read()s two data files while a launcher runs is
#     learned with those files as its maps, predicted after it exits, and
#     the daemon reads the files back after they are evicted;
#  2. a program that lives a fraction of a second, run every 0.5 s, is
#     admitted from its start-up reads, counted, and saved with its files;
#  3. without CAP_SYS_ADMIN the daemon says once that it works as a maps
#     scanner, and does;
#  4. the daemon in a copy of its mount namespace (as a systemd unit with
#     ProtectSystem= runs it) learns a program's start-up reads: the
#     program's files lie on the original mounts;
#  5. where file handles resolve, plain opens come by handle and are
#     recorded with the file's identity; an overlay, whose handles do
#     not, keeps its opens by descriptor, and a program there is learned
#     with reads from both;
#  6. where fanotify_init refuses FAN_REPORT_FID (made to by strace, as
#     a kernel before 5.1 does), every open comes by descriptor.
#
# Exit status: 0 pass, 1 fail, 77 skipped (not root, or no fanotify).

set -u

top_builddir=${top_builddir:-$(pwd)}
preload="$top_builddir/src/preload"
mapper="$top_builddir/tests/helpers/mapper"
pagecache="$top_builddir/tests/helpers/pagecache"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (fanotify)"
	exit 77
fi

# On disk, under the build tree: eviction needs a real file system.
work=$(mktemp -d "$top_builddir/watch.XXXXXX")
daemon_pid=
cleanup() {
	[ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null
	umount "$work/ov/m" 2>/dev/null
	pkill -f "$work/bin/" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

fail() {
	echo "FAIL: $*"
	if [ -f "$work/log" ]; then
		echo "---- daemon log ----"
		grep -v '^\[.*\] debug: cycle' "$work/log" | tail -n 40
	fi
	exit 1
}

# wait_for FILE PATTERN SECONDS: until grep finds PATTERN in FILE
wait_for() {
	i=0
	while [ "$i" -lt "$(($3 * 10))" ]; do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# resident_percent FILE: how much of FILE is in the page cache
resident_percent() {
	"$pagecache" resident "$1" | awk '{ printf "%d", $2 ? 100 * $1 / $2 : 0 }'
}

mkdir -p "$work/bin" "$work/data"
cp "$mapper" "$work/bin/launcher"
cp "$pagecache" "$work/bin/reader"
cp "$pagecache" "$work/bin/quick"
for f in r1 r2 q1 q2; do
	head -c 1000000 /dev/urandom > "$work/data/$f.bin"
done
head -c 200000 /dev/urandom > "$work/data/launcher.bin"
head -c 32000000 /dev/urandom > "$work/data/mapped.bin"

# No correlation weighting: a pair seen once already predicts. maxreadkb
# holds r1 and r2 (1,954 KB), and the short-lived program's libraries
# (libc, and libasan in a sanitizer build) beside its q1 and q2, but not
# the reader's 32 MB mapped file: a program's mapped files, opened in its
# start-up window too, must not use up its read budget.
cat > "$work/preload.conf" <<EOF
[model]
cycle = 2
usecorrelation = false
minsize = 100000
memtotal = 100
memfree = 0
memcached = 0
[system]
exeprefix = $work/bin/;!/
mapprefix = $work/;/usr/;/lib;!/
autosave = 600
maxprocs = 4
startupwindow = 8
maxreadkb = 20000
# The files are evicted with POSIX_FADV_DONTNEED, which no vmstat count sees.
trustvmstat = false
EOF

: > "$work/log"
"$preload" -f -c "$work/preload.conf" -s "$work/state" -l "$work/log" -V 5 &
daemon_pid=$!
wait_for "$work/log" "preload .* started" 10 || fail "daemon did not start"
wait_for "$work/log" "fanotify on\|maps scanner" 5 || fail "daemon said nothing about fanotify"
if grep -q "maps scanner" "$work/log"; then
	echo "SKIP: fanotify is not available here: $(grep 'maps scanner' "$work/log")"
	exit 77
fi

save_state() {
	: > "$work/saved"
	n=$(grep -c "state saved" "$work/log")
	kill -USR2 "$daemon_pid"
	i=0
	while [ "$(grep -c "state saved" "$work/log")" -le "$n" ]; do
		i=$((i + 1))
		[ "$i" -lt 50 ] || fail "no state saved after SIGUSR2"
		sleep 0.1
	done
}

# state_has SECONDS PATTERN...: saves the state until it has every
# pattern or SECONDS pass. Learning ends with a start-up window and lands
# at the next update, which a loaded machine (or a sanitizer build) can
# delay by a cycle or two: poll instead of trusting a fixed sleep.
state_has() {
	deadline=$(($(date +%s) + $1))
	shift
	while :; do
		save_state
		missing=
		for pattern in "$@"; do
			grep -q -- "$pattern" "$work/state" || missing=$pattern
		done
		[ -z "$missing" ] && return 0
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 1
	done
}

# ---- 1. a program that read()s its data while a launcher runs ----
"$work/bin/launcher" 60 "$work/data/launcher.bin" &
launcher_pid=$!
sleep 3      # the launcher is admitted, alone, for more than a cycle
# It maps its 32 MB file at once, is admitted by a scan with it (a few
# cycles to spare, for a sanitizer build), then reads its data: all
# within its 8-second start-up window.
"$work/bin/reader" read 2 "map:$work/data/mapped.bin" +5 "$work/data/r1.bin" "$work/data/r2.bin" ||
	fail "reader failed"
sleep 3      # a scan sees it stop; the chain goes back to "launcher only"
state_has 20 "file://$work/data/r1.bin" "file://$work/data/r2.bin" ||
	fail "state lacks the reader's read files r1.bin and r2.bin after 20 s"
# The ranges of r1.bin are uses of origin 1 ("read at start-up"). The
# file is a FILE record, its ranges MAP records pointing at it, and an
# EXEMAP record covers the maps map .. map + count - 1 (its 6th field).
r1_files=$(awk -F '\t' -v uri="file://$work/data/r1.bin" '$1 == "FILE" && $7 == uri { print $2 }' "$work/state")
[ -n "$r1_files" ] || fail "no FILE record for r1.bin"
r1_maps=$(for f in $r1_files; do
	awk -F '\t' -v f="$f" '$1 == "MAP" && $6 == f { print $2 }' "$work/state"
done)
[ -n "$r1_maps" ] || fail "no MAP record for r1.bin"
for m in $r1_maps; do
	awk -F '\t' -v m="$m" '$1 == "EXEMAP" && $3 + 0 <= m + 0 && m + 0 < $3 + $6 && $5 == 1 { found = 1 }
		END { exit !found }' "$work/state" || fail "r1.bin map $m is not used with origin 1"
done
echo "ok 1 - the files a program read() at start-up are learned as its maps"

# The reads came as plain opens: on a file system that hands out file
# handles (ext4, xfs, btrfs's top volume...), from the file-handle group,
# each resolved to the file the program opened, with its identity.
r1_id=$(stat -c '%d %i' "$work/data/r1.bin")
awk -F '\t' -v uri="file://$work/data/r1.bin" -v id="$r1_id" \
	'$1 == "FILE" && $7 == uri && $3 " " $4 == id { found = 1 } END { exit !found }' "$work/state" ||
	fail "r1.bin is not recorded with its device and inode ($r1_id)"
kill -USR1 "$daemon_pid"
wait_for "$work/log" "^\[.*\] watch: fanotify on" 5 || fail "no watch line in the dump"
watch_line=$(grep "\] watch: fanotify on" "$work/log" | tail -n 1)
case $watch_line in
*"opens by descriptor (no file-handle group)"*)
	echo "ok 1a # SKIP no file-handle group on this kernel: opens come by descriptor" ;;
*"opens by file handle on 0,"*)
	echo "ok 1a # SKIP $work lies on a file system without file handles" ;;
*"opens by file handle on "[1-9]*)
	handles=$(echo "$watch_line" | sed -n 's/.* by file handle (\([0-9]*\) handles resolved.*/\1/p')
	[ "${handles:-0}" -ge 2 ] ||
		fail "r1.bin and r2.bin were opened in a window, but ${handles:-no} handles were resolved: $watch_line"
	echo "ok 1a - the opens came by file handle ($handles handles resolved), r1.bin with its identity" ;;
*)
	fail "the dump does not say how opens are watched: $watch_line" ;;
esac

"$pagecache" evict "$work/data/r1.bin" "$work/data/r2.bin" || fail "cannot evict"
before=$(resident_percent "$work/data/r1.bin")
[ "$before" -le 10 ] || fail "r1.bin still ${before}% resident after eviction"
# The launcher runs alone: the reader is predicted, its files read ahead every cycle.
i=0
while :; do
	r1=$(resident_percent "$work/data/r1.bin")
	r2=$(resident_percent "$work/data/r2.bin")
	[ "$r1" -ge 90 ] && [ "$r2" -ge 90 ] && break
	i=$((i + 1))
	[ "$i" -lt 60 ] || fail "read files not prefetched after 6 s: r1.bin ${r1}%, r2.bin ${r2}% resident"
	sleep 0.1
done
echo "ok 2 - evicted, the read files are prefetched while the launcher runs (r1 ${r1}%, r2 ${r2}%)"

# ---- 2. a program that lives a fraction of a second, run over and over ----
i=0
while [ "$i" -lt 20 ]; do
	"$work/bin/quick" read 0.1 "$work/data/q1.bin" "$work/data/q2.bin" || fail "quick failed"
	sleep 0.4
	i=$((i + 1))
done
sleep 2
state_has 20 "EXE	.*file://$work/bin/quick\$" "file://$work/data/q1.bin" "file://$work/data/q2.bin" ||
	fail "state lacks the short-lived program or its q1.bin and q2.bin after 20 s"
quick_idx=$(awk -F '\t' -v uri="file://$work/bin/quick" '$1 == "EXE" && $NF == uri { print $2 }' "$work/state")
# It ran in several cycles: the chain with the launcher saw it start and stop.
awk -F '\t' -v q="$quick_idx" '$1 == "MARKOV" && ($2 == q || $3 == q) && $4 > 0 { found = 1 }
	END { exit !found }' "$work/state" || fail "the short-lived program never ran with the launcher"
# Starts after admission are counted and measured.
starts=$(awk -F '\t' -v q="$quick_idx" '$1 == "HITS" && $2 == q { print $3 }' "$work/state")
[ -n "$starts" ] && [ "$starts" -ge 10 ] || fail "the short-lived program has ${starts:-no} starts counted, want >= 10"
kill -USR1 "$daemon_pid"
wait_for "$work/log" "most started executables" 5 || fail "the dump has no hit figures"
wait_for "$work/log" "configuration:" 5 || fail "no dump"
grep -q "hits: [0-9]* starts of known executables" "$work/log" || fail "the dump has no hit totals"
grep -q "[0-9]%  $work/bin/quick\$" "$work/log" || fail "the dump does not list the short-lived program"
echo "ok 3 - a program living 0.1 s is learned with its files, counted ($starts starts) and dumped"

kill "$launcher_pid" 2>/dev/null
kill -TERM "$daemon_pid"
wait "$daemon_pid" || fail "daemon exited with status $? on SIGTERM"
daemon_pid=

# ---- 3. without fanotify permission: a maps scanner, said once ----
: > "$work/log"
setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin \
	"$preload" -f -c "$work/preload.conf" -s "$work/state" -l "$work/log" -V 5 &
daemon_pid=$!
wait_for "$work/log" "debug: cycle 1 " 10 || fail "the daemon without CAP_SYS_ADMIN does not cycle"
kill -TERM "$daemon_pid"
wait "$daemon_pid" || fail "daemon without CAP_SYS_ADMIN exited with status $?"
daemon_pid=
[ "$(grep -c "working as a maps scanner" "$work/log")" = 1 ] ||
	fail "the daemon without CAP_SYS_ADMIN did not say once that it works as a maps scanner"
echo "ok 4 - without CAP_SYS_ADMIN the daemon works as a maps scanner and says so once"

# ---- 4. the daemon in a copy of the mount namespace, as its unit runs it ----
# ProtectSystem= and the like give a service a namespace of its own, a copy
# whose mounts have ids of their own: the programs it watches open their
# files through the original mounts, which must be found and used.
if ! unshare -m true 2>/dev/null; then
	echo "SKIP: 5 - cannot make a mount namespace here"
	echo "watch: 4 passed, 0 failed, 1 skipped"
	exit 0
fi
cp "$pagecache" "$work/bin/quick2"
head -c 1000000 /dev/urandom > "$work/data/q3.bin"
head -c 1000000 /dev/urandom > "$work/data/q4.bin"
rm -f "$work/state"
: > "$work/log"
unshare -m "$preload" -f -c "$work/preload.conf" -s "$work/state" -l "$work/log" -V 5 &
daemon_pid=$!
wait_for "$work/log" "fanotify on" 10 || fail "the daemon in its own namespace does not watch"
i=0
while [ "$i" -lt 20 ]; do
	"$work/bin/quick2" read 0.1 "$work/data/q3.bin" "$work/data/q4.bin" || fail "quick2 failed"
	sleep 0.4
	i=$((i + 1))
done
state_has 20 "EXE	.*file://$work/bin/quick2\$" "file://$work/data/q3.bin" "file://$work/data/q4.bin" ||
	fail "the daemon in a copy of the namespace did not learn quick2 and its reads"
kill -USR1 "$daemon_pid"
wait_for "$work/log" "fanotify events of files on other namespaces' mounts: [1-9]" 5 ||
	fail "the dump does not count the events used through the copy's mounts"
kill -TERM "$daemon_pid"
wait "$daemon_pid" || fail "daemon in its own namespace exited with status $? on SIGTERM"
daemon_pid=
echo "ok 5 - in a copy of the mount namespace the daemon learns a program's start-up reads"

# ---- 5. a file system whose file handles do not resolve ----
# An overlay without nfs_export makes handles it cannot resolve: its
# opens stay with the descriptor group, and a program there that also
# reads a file of the file-handle-watched file system is learned with
# both, its window fed by both groups.
mkdir -p "$work/ov/lower/bin" "$work/ov/upper" "$work/ov/work" "$work/ov/m"
cp "$pagecache" "$work/ov/lower/bin/ovq"
head -c 1000000 /dev/urandom > "$work/ov/lower/o1.bin"
head -c 1000000 /dev/urandom > "$work/data/o2.bin"
skipped=0
if ! mount -t overlay overlay -o "lowerdir=$work/ov/lower,upperdir=$work/ov/upper,workdir=$work/ov/work" \
	"$work/ov/m" 2>/dev/null; then
	echo "ok 6 # SKIP cannot mount an overlay here"
	skipped=$((skipped + 1))
else
	sed "s|^exeprefix = .*|exeprefix = $work/ov/m/;!/|" "$work/preload.conf" > "$work/ov.conf"
	rm -f "$work/state"
	: > "$work/log"
	"$preload" -f -c "$work/ov.conf" -s "$work/state" -l "$work/log" -V 5 &
	daemon_pid=$!
	wait_for "$work/log" "fanotify on" 10 || { umount "$work/ov/m"; fail "the daemon does not watch"; }
	i=0
	while [ "$i" -lt 20 ]; do
		"$work/ov/m/bin/ovq" read 0.1 "$work/ov/m/o1.bin" "$work/data/o2.bin" || break
		sleep 0.4
		i=$((i + 1))
	done
	ok=0
	state_has 20 "EXE	.*file://$work/ov/m/bin/ovq\$" "file://$work/ov/m/o1.bin" "file://$work/data/o2.bin" &&
		ok=1
	kill -USR1 "$daemon_pid"
	wait_for "$work/log" "\] watch: fanotify on" 5
	watch_line=$(grep "\] watch: fanotify on" "$work/log" | tail -n 1)
	kill -TERM "$daemon_pid"
	wait "$daemon_pid"
	daemon_pid=
	umount "$work/ov/m"
	[ "$ok" = 1 ] || fail "the program on the overlay was not learned with o1.bin (overlay) and o2.bin"
	case $watch_line in
	*"opens by descriptor (no file-handle group)"*)
		echo "ok 6 - a program on an overlay is learned with its reads (no file-handle group here)" ;;
	*"opens by file handle on 1, by descriptor on 1)"*)
		echo "ok 6 - the overlay's opens come by descriptor, the others' by handle; both learned" ;;
	*)
		fail "expected the overlay's opens by descriptor and the other file system's by handle: $watch_line" ;;
	esac
fi

# ---- 6. a kernel without FAN_REPORT_FID: one group, as before ----
# strace makes the second fanotify_init (the file-handle group's) fail
# with EINVAL, as a kernel before 5.1 does: every open comes by descriptor.
if ! command -v strace > /dev/null 2>&1; then
	echo "ok 7 # SKIP no strace to make fanotify_init fail"
	skipped=$((skipped + 1))
else
	rm -f "$work/state"
	: > "$work/log"
	strace -f -o /dev/null -e trace=fanotify_init -e inject=fanotify_init:error=EINVAL:when=2 \
		"$preload" -f -c "$work/preload.conf" -s "$work/state" -l "$work/log" -V 5 &
	tracer=$!
	wait_for "$work/log" "fanotify on" 20 || fail "the daemon without a file-handle group does not watch"
	daemon_pid=$(pgrep -P "$tracer" | head -n 1)
	[ -n "$daemon_pid" ] || fail "no daemon under strace"
	i=0
	while [ "$i" -lt 20 ]; do
		"$work/bin/quick" read 0.1 "$work/data/q1.bin" "$work/data/q2.bin" || fail "quick failed"
		sleep 0.4
		i=$((i + 1))
	done
	state_has 30 "EXE	.*file://$work/bin/quick\$" "file://$work/data/q1.bin" "file://$work/data/q2.bin" ||
		fail "without a file-handle group the daemon did not learn quick and its reads"
	kill -USR1 "$daemon_pid"
	wait_for "$work/log" "\] watch: fanotify on" 5 || fail "no dump without a file-handle group"
	watch_line=$(grep "\] watch: fanotify on" "$work/log" | tail -n 1)
	kill -TERM "$daemon_pid"
	wait "$tracer"
	daemon_pid=
	case $watch_line in
	*"opens by descriptor (no file-handle group)"*" 0 by file handle "*) ;;
	*) fail "without a file-handle group the dump should say opens come by descriptor: $watch_line" ;;
	esac
	echo "ok 7 - without FAN_REPORT_FID (fanotify_init EINVAL) every open comes by descriptor, learned"
fi

echo "watch: $((7 - skipped)) passed, 0 failed, $skipped skipped"
exit 0
