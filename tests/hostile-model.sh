#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What a local user can make the daemon's learning cost, against the real
# /proc, as root. Each scenario runs one program as the unprivileged user
# nobody under /usr/local/bin (exeprefix accepts it) mapping a file under
# /var/cache (mapprefix accepts it):
#
#   bigmap   a 64 KiB file mapped 500 times with a length of 16 GiB each:
#            the learn stage must not read pagemap past the file's end
#   mapflood one 128 MiB file mapped as 30,000 distinct 4 KiB windows: the
#            program keeps at most maxexemaps maps
#   hunglearn a program maps a file of a FUSE mount (tests/helpers/hangfs)
#            that then stops answering, before the daemon learns it: with
#            netfs off the file is not learned, so never stat'ed
#   hunglearnnet the same with netfs = true: the program is admitted and
#            its map of the file (2 MiB, over usedmapkb) cut to its touched
#            pages without a stat of the mapped file (FUSE getattr asks
#            the server); whether the map stays learned depends on when
#            the sweep's check of it (a worker, abandoned) comes
#
# Through each, SIGUSR1 is sent every 0.2 s and must be answered within
# 1 s; the daemon's CPU over the scenario must stay under its bound; then
# SIGTERM must save the state and exit within 5 s. Every figure is
# printed, so a run before a fix measures the same things.
#
# Exit status: 0 pass, 1 fail, 77 skipped (not root).
#
#   tests/hostile-model.sh [SCENARIO...]

set -u

top_builddir=${top_builddir:-$(pwd)}
# PRELOAD= names another daemon binary (an older build, for a before/after table).
preload=${PRELOAD:-$top_builddir/src/preload}
helpers=${helpers:-$top_builddir/tests/helpers}
bigmap="$helpers/bigmap"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (reads other users' pagemap, installs under /usr/local/bin)"
	exit 77
fi
hangfs=${HANGFS:-$helpers/hangfs}
if [ ! -x "$bigmap" ]; then
	echo "hostile-model: $bigmap not built (make check builds it)" >&2
	exit 99
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/preload-hostile-model.XXXXXX")
cache=$(mktemp -d /var/cache/preload-hostile.XXXXXX)
chmod 755 "$cache"
prog=/usr/local/bin/preload-hostile-$$
daemon_pid=
helper_pid=
hang_pid=
cleanup() {
	[ -n "$hang_pid" ] && kill -USR2 "$hang_pid" 2>/dev/null
	[ -n "$helper_pid" ] && kill -9 "$helper_pid" 2>/dev/null
	[ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null
	if grep -q " $cache/hang " /proc/self/mountinfo 2>/dev/null; then
		fusermount3 -u -z "$cache/hang" 2>/dev/null || umount -l "$cache/hang" 2>/dev/null
	fi
	[ -n "$hang_pid" ] && kill -TERM "$hang_pid" 2>/dev/null
	rm -f "$prog"
	rm -rf --one-file-system "$work" "$cache"
}
trap cleanup EXIT INT TERM

failed=0
fail() {
	echo "FAIL: $*"
	failed=1
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# CPU time of a process (user + system), in ms.
cpu_ms() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
	stat=${stat##*) }
	set -- $stat
	echo $(((${12} + ${13}) * 1000 / $(getconf CLK_TCK)))
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
dumps() {
	local n
	n=$(grep -c "SIGUSR1: state dump" "$work/log" 2>/dev/null)
	echo "${n:-0}"
}

# usr1_latency: sends SIGUSR1 and prints the ms until the dump starts (9999: none in 10 s).
usr1_latency() {
	local before t0 i
	before=$(dumps)
	t0=$(now_ms)
	kill -USR1 "$daemon_pid"
	for ((i = 0; i < 1000; i++)); do
		if [ "$(dumps)" -gt "$before" ]; then
			echo $(($(now_ms) - t0))
			return
		fi
		sleep 0.01
	done
	echo 9999
}

# The maps in the model at the last dump.
model_maps() {
	grep "model: time" "$work/log" | tail -n 1 |
		sed 's/.*exes ([0-9]* running), \([0-9]*\) maps.*/\1/'
}

# start_daemon [NETFS [DOPREDICT]]
start_daemon() {
	rm -f "$work/state" "$work/log"
	cat > "$work/preload.conf" <<EOF
[model]
cycle = 2
minsize = 0
[system]
dopredict = ${2:-false}
learnreads = false
learnexec = false
netfs = ${1:-false}
EOF
	"$preload" -f -c "$work/preload.conf" -s "$work/state" -l "$work/log" -V 5 &
	daemon_pid=$!
	# Two cycles: the programs running now are learned before the scenario.
	sleep 4
}

# stop_daemon: SIGTERM, prints the ms until the process is gone and the state saved.
stop_daemon() {
	local t0 i
	t0=$(now_ms)
	kill -TERM "$daemon_pid"
	for ((i = 0; i < 3000; i++)); do
		if ! kill -0 "$daemon_pid" 2>/dev/null; then
			wait "$daemon_pid" 2>/dev/null
			daemon_pid=
			if [ -s "$work/state" ]; then
				echo $(($(now_ms) - t0))
			else
				echo 99999
			fi
			return
		fi
		sleep 0.01
	done
	echo 99999
}

# run_scenario NAME FILE COUNT LENGTH WINDOW CPU_BOUND_MS
run_scenario() {
	local name=$1 file=$2 count=$3 length=$4 window=$5 cpu_bound=$6
	local cpu0 cpu1 worst=0 lat peak=0 rss fd0 fd1 term state_size i maps maps0

	start_daemon
	usr1_latency > /dev/null
	maps0=$(model_maps)
	fd0=$(fds "$daemon_pid")
	cpu0=$(cpu_ms "$daemon_pid")
	cp "$bigmap" "$prog"
	chmod 755 "$prog"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$prog" "$file" "$count" "$length" "$window" \
		> "$work/helper.out" 2>&1 &
	helper_pid=$!
	# 30,000 mappings take a few seconds on a loaded machine.
	for ((i = 0; i < 300; i++)); do
		grep -q ready "$work/helper.out" 2>/dev/null && break
		sleep 0.1
	done
	grep -q ready "$work/helper.out" || { fail "$name: the helper did not start: $(cat "$work/helper.out")"; }
	# Three cycles: a scan sees it, the learn half a cycle later reads its maps.
	for ((i = 0; i < 20; i++)); do
		lat=$(usr1_latency)
		[ "$lat" -gt "$worst" ] && worst=$lat
		rss=$(rss_kb "$daemon_pid")
		[ "$rss" -gt "$peak" ] && peak=$rss
		sleep 0.2
	done
	cpu1=$(cpu_ms "$daemon_pid")
	maps=$(model_maps)
	kill -9 "$helper_pid" 2>/dev/null
	wait "$helper_pid" 2>/dev/null
	helper_pid=
	sleep 2.5
	fd1=$(fds "$daemon_pid")
	peak=$(hwm_kb "$daemon_pid")
	term=$(stop_daemon)
	state_size=$(stat -c %s "$work/state" 2>/dev/null || echo 0)
	grep -q "$prog" "$work/state" 2>/dev/null || fail "$name: the program was not learned"
	awk -F '\t' -v uri="file://$file" '$1 == "FILE" && $7 == uri { f[$2] = 1 }
		$1 == "MAP" && ($6 in f) { n++ } END { print n + 0 }' "$work/state" > "$work/big-maps"
	echo "$name: worst SIGUSR1 latency ${worst} ms, daemon CPU $((cpu1 - cpu0)) ms over the" \
	     "scenario (bound $cpu_bound), maps in the model $maps0 -> $maps" \
	     "($(cat "$work/big-maps") of its file), peak RSS (VmHWM) $peak KB," \
	     "TERM to saved ${term} ms, state $state_size bytes, fds $fd0 -> $fd1"
	[ "$worst" -le 1000 ] || fail "$name: SIGUSR1 answered after $worst ms"
	[ $((cpu1 - cpu0)) -le "$cpu_bound" ] || fail "$name: $((cpu1 - cpu0)) ms of CPU"
	[ "$term" -le 5000 ] || fail "$name: SIGTERM took $term ms to save and exit"
	[ "$fd1" -le "$fd0" ] || fail "$name: $fd0 descriptors before, $fd1 after"
	echo $((maps - maps0))
}

# In the background, call nobody_bg: a function run with & is a subshell
# whose setpriv child a kill of $! would leave running.
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}
nobody_bg() {
	exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# mount_hang: $cache/hang serves $cache/src (lib.so, 2 MiB) through hangfs.
mount_hang() {
	mkdir -p "$cache/src" "$cache/hang"
	head -c $((2 << 20)) /dev/urandom > "$cache/src/lib.so"
	chmod 644 "$cache/src/lib.so"
	"$hangfs" --release-after 30 --lifetime 200 "$cache/src" "$cache/hang" \
		-o allow_other,auto_unmount 2> "$work/hangfs.log" &
	hang_pid=$!
	for ((i = 0; i < 50; i++)); do
		grep -q " $cache/hang " /proc/self/mountinfo && return 0
		sleep 0.1
	done
	return 1
}

unmount_hang() {
	kill -USR2 "$hang_pid" 2>/dev/null
	fusermount3 -u -z "$cache/hang" 2>/dev/null || umount -l "$cache/hang" 2>/dev/null
	kill -TERM "$hang_pid" 2>/dev/null
	wait "$hang_pid" 2>/dev/null
	hang_pid=
}

# run_hung NAME NETFS: see hunglearn above.
run_hung() {
	local name=$1 netfs=$2 worst=0 lat fd0 fd1 term state_size i abandoned peak

	if [ ! -x "$hangfs" ] || [ ! -c /dev/fuse ] || ! command -v fusermount3 > /dev/null; then
		echo "$name: SKIP (needs hangfs, /dev/fuse and fusermount3)"
		return
	fi
	mount_hang || { fail "$name: hangfs did not mount"; return; }
	cp "$bigmap" "$prog"
	chmod 755 "$prog"
	start_daemon "$netfs" true
	fd0=$(fds "$daemon_pid")
	nobody_bg "$prog" "$cache/hang/lib.so" 1 $((2 << 20)) 0 > "$work/helper.out" 2>&1 &
	helper_pid=$!
	for ((i = 0; i < 50; i++)); do
		grep -q ready "$work/helper.out" 2>/dev/null && break
		sleep 0.1
	done
	# Hung before the next learn reads the program's maps.
	kill -USR1 "$hang_pid"
	for ((i = 0; i < 20; i++)); do
		lat=$(usr1_latency)
		[ "$lat" -gt "$worst" ] && worst=$lat
		sleep 0.3
	done
	abandoned=$(grep "readahead deadline:" "$work/log" | tail -n 1 | sed 's/.*deadline: \([0-9]*\) batches.*/\1/')
	fd1=$(fds "$daemon_pid")
	peak=$(hwm_kb "$daemon_pid")
	term=$(stop_daemon)
	if [ -n "$helper_pid" ]; then
		kill -9 "$helper_pid" 2> /dev/null
		wait "$helper_pid" 2> /dev/null
	fi
	helper_pid=
	state_size=$(stat -c %s "$work/state" 2>/dev/null || echo 0)
	unmount_hang
	echo "$name: worst SIGUSR1 latency ${worst} ms, readahead batches abandoned ${abandoned:-?}," \
	     "peak RSS (VmHWM) $peak KB, TERM to saved ${term} ms, state $state_size bytes," \
	     "fds $fd0 -> $fd1"
	[ "$worst" -le 1000 ] || fail "$name: SIGUSR1 answered after $worst ms"
	[ "$term" -le 5000 ] || fail "$name: SIGTERM took $term ms to save and exit"
	if [ "$name" = hunglearn ] && grep -q "$cache/hang/lib.so" "$work/state"; then
		fail "$name: a file of a FUSE mount was learned with netfs off"
	fi
}

scenarios=${*:-"bigmap mapflood hunglearn hunglearnnet"}
for s in $scenarios; do
	case $s in
	bigmap)
		truncate -s 65536 "$cache/small"
		chmod 644 "$cache/small"
		run_scenario bigmap "$cache/small" 500 $((16 << 30)) 0 1000 > "$work/out"
		cat "$work/out" | head -n -1
		;;
	hunglearn)
		run_hung hunglearn false
		;;
	hunglearnnet)
		run_hung hunglearnnet true
		;;
	mapflood)
		truncate -s $((128 << 20)) "$cache/big"
		chmod 644 "$cache/big"
		run_scenario mapflood "$cache/big" 30000 4096 4096 2000 > "$work/out"
		cat "$work/out" | head -n -1
		maps=$(cat "$work/big-maps")
		# The maps of its file in the saved state (FILE: id in field 2, URI in 7;
		# MAP: its FILE in field 6); only this program maps the file.
		[ -n "$maps" ] && [ "$maps" -le 2048 ] 2>/dev/null ||
			fail "mapflood: $maps maps of the flooded file in the state (the program's cap is 2048)"
		;;
	*)
		echo "hostile-model: unknown scenario $s" >&2
		exit 2
		;;
	esac
done
exit $failed
