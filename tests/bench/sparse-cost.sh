#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What the daemon costs with a model learned from thousands of
# executables, with sparse chains (root). See doc/benchmarks.md, "Cost of
# the sparse model".
#
#   sparse-cost.sh [-k CYCLES] [-o DIR] [-r] [-p] [NAME:TRACEGEN-ARGUMENTS ...]
#
#   -k  cycles measured (10)
#   -o  results directory (a new /var/tmp/preload-sparse.XXXXXX)
#   -r  reuse DIR/NAME.state and NAME.json of an earlier run instead of
#       making them again (the 5,000-executable replay takes minutes), so
#       that two builds are measured on the very same states
#   -p  keep the page cache: lock in memory (vmtouch -l, Debian's
#       vmtouch) every existing file the state names while the daemon
#       runs, as on a machine whose page cache no reclaimer empties. Some
#       machines (DAMON reclaim, proactive cgroup reclaim) evict unused
#       page cache within a minute, and the daemon then reads the same
#       megabytes again every cycle, which is its job but is the
#       machine's cost, not the model's; -p measures the cost without it.
#
# Each NAME:ARGUMENTS makes a trace with preload-tracegen ARGUMENTS (the
# scenario last), replays it through the daemon's model with the default
# configuration and saves the model it learned (preload-replay
# --save-state): a realistic sparse state, whatever the machine running
# this has run. The defaults make about 1,000 and 5,000 executables:
#
#   1k:"--seed 1 --cycles 15000 scale"
#   5k:"--seed 1 --cycles 100000 --projects 215 --build-gap 5 scale"
#
# The daemon then starts from each state with cycle 2, maxprocs 0 and
# the fanotify watch off, at nice 0, and this measures, as
# tests/bench/scale.sh does for generated full-pairwise states: the load
# time (from exec to "loaded state from", and the part of it the daemon
# logs for reading the file), VmRSS after the load and
# VmHWM at the end, the CPU time (user + system) per cycle over at least
# CYCLES cycles counted by the model time of two SIGUSR1 dumps, starting
# two cycles after the load, and the time and size of the save at exit;
# from the same dumps, the main thread's CPU per cycle in each stage (scan,
# learn, predict, readahead) and the KB read ahead per cycle: pages the
# kernel evicted (some reclaimers evict unused page cache within a
# minute) and the daemon read again; and of the rest ("other"), the CPU
# of the readahead threads, where the dump has its "readahead threads" line.
# The traced executables do not exist here, so nothing starts or stops:
# every cycle scans /proc, scores every chain of the model and selects
# the maps of every executable with a bid. Most of the traced files do
# not exist either: the daemon checks the files of what it selects once
# per check period and leaves out those that are gone, so after the first
# cycle it reads ahead only the few that exist here.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top_builddir=${top_builddir:-$(cd "$here/../.." && pwd)}
ours="$top_builddir/src/preload"
gen="$top_builddir/src/tools/preload-tracegen"
replay="$top_builddir/src/tools/preload-replay"

cycle=2 cycles=10 out= reuse= pin=
while getopts "k:o:rph" opt; do
	case $opt in
	k) cycles=$OPTARG ;; o) out=$OPTARG ;; r) reuse=1 ;; p) pin=1 ;;
	*) sed -n '/^#   sparse-cost.sh/,/^#   -o/p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- "1k:--seed 1 --cycles 15000 scale" \
	"5k:--seed 1 --cycles 100000 --projects 215 --build-gap 5 scale"

[ "$(id -u)" = 0 ] || { echo "sparse-cost.sh: needs root"; exit 77; }
for tool in "$ours" "$gen" "$replay"; do
	[ -x "$tool" ] || { echo "sparse-cost.sh: build first ($tool)"; exit 1; }
done
if [ -n "$pin" ] && ! command -v vmtouch > /dev/null; then
	echo "sparse-cost.sh: -p needs vmtouch: apt-get install -y vmtouch"
	exit 77
fi
if [ -n "$out" ]; then
	mkdir -p "$out" || exit 1
	work=$(cd "$out" && pwd)
else
	work=$(mktemp -d /var/tmp/preload-sparse.XXXXXX) || exit 1
fi

dpid= vpid=
cleanup() {
	[ -n "$dpid" ] && kill -TERM "$dpid" 2> /dev/null && wait "$dpid"
	[ -n "$vpid" ] && kill -TERM "$vpid" 2> /dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }

cat > "$work/preload.conf" <<EOF
# The sparse-cost benchmark's configuration.
[model]
cycle = $cycle
[system]
autosave = 86400
maxprocs = 0
learnreads = false
learnexec = false
EOF

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# Microseconds, without a fork: $EPOCHREALTIME is "seconds.micros".
# Microseconds into $us; no $(...), which forks a subshell (3-4 ms here).
now_us() { local t=${EPOCHREALTIME/[.,]/}; us=$((10#$t)); }
# Whether FILE has a line containing TEXT, read without a fork.
has_line() { # FILE TEXT
	local line
	while IFS= read -r line; do
		[[ $line == *"$2"* ]] && return 0
	done < "$1"
	return 1
}
# A 2 ms nap without a fork: a read that times out on a pipe nobody writes.
exec {nap_fd}<> <(:)
nap() { read -r -t 0.002 -u "$nap_fd" _; }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13 + $14 + $15) / hz }' "/proc/$1/stat"; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
count() { grep -c -- "$2" "$1" 2> /dev/null; }

wait_lines() { # LOG PATTERN COUNT LIMIT
	local end=$((SECONDS + $4))
	while [ "$(count "$1" "$2")" -lt "$3" ]; do
		kill -0 "$dpid" 2> /dev/null || return 1
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.02
	done
}

# The SIGUSR1 dump's model time: the daemon advances it one cycle a cycle.
dump() { # LOG
	local before
	before=$(count "$1" "SIGUSR1: state dump")
	kill -USR1 "$dpid"
	# The dump ends with the configuration; waiting for that line lets
	# builds older than the "cpu:" line be measured too.
	wait_lines "$1" "^\[[^]]*\] configuration:" $((before + 1)) 600 || return 1
	mtime=$(grep -o -- "model: time [0-9]*" "$1" | tail -1 | grep -o '[0-9]*$')
	# The dump's cumulative CPU per stage (ms) and KB read ahead:
	# "scan learn predict readahead other kb", empty without the line.
	stages=$(grep -- "cpu: " "$1" | tail -1 | sed -n 's/.*(scan \([0-9.]*\), learn \([0-9.]*\), predict \([0-9.]*\), readahead \([0-9.]*\), other \([0-9.]*\) ms); [0-9]* readahead batches, \([0-9]*\) KB requested.*/\1 \2 \3 \4 \5 \6/p')
	# The readahead threads' share of "other" (ms), where the dump has it.
	ra_threads=$(grep -- "readahead threads: " "$1" | tail -1 | sed -n 's/.*readahead threads: \([0-9.]*\) ms.*/\1/p')
	[ -n "$stages" ] && [ -n "$ra_threads" ] && stages="$stages $ra_threads"
}

printf 'name\texes\tmaps\tchains\tstate_bytes\tload_ms\trss_kb\tpeak_rss_kb\tcpu_ms_per_cycle\tcycles\tsave_ms\tsaved_bytes\tread_ms\tscan_ms\tlearn_ms\tpredict_ms\treadahead_ms\tother_ms\treread_kb\tra_threads_ms\n' \
	> "$work/sparse.tsv"
log "results in $work"
for spec in "$@"; do
	name=${spec%%:*}
	# shellcheck disable=SC2086
	set -- ${spec#*:}
	if [ -n "$reuse" ] && [ -s "$work/$name.state" ] && [ -s "$work/$name.json" ]; then
		log "$name: reusing $work/$name.state"
	else
		log "$name: preload-tracegen $*"
		"$gen" --output "$work/$name.trace" "$@" > /dev/null || exit 1
		"$replay" --quiet --save-state "$work/$name.state" --json "$work/$name.json" \
			"$work/$name.trace" || exit 1
	fi
	read -r exes maps chains < <(sed -n 's/.*"exes": \([0-9]*\), "bad_exes": [0-9]*, "maps": \([0-9]*\), "chains": \([0-9]*\).*/\1 \2 \3/p' "$work/$name.json")
	log "$name: $exes exes, $maps maps, $chains chains, $(stat -c %s "$work/$name.state") bytes"

	if [ -n "$pin" ]; then
		# The state's FILE lines name each file as a file:// URI, the
		# path percent-encoded (doc/state-format.md).
		awk -F'\t' '$1 == "FILE" { sub(/^file:\/\//, "", $7); print $7 }' "$work/$name.state" |
			while IFS= read -r f; do
				printf -v f '%b' "${f//%/\\x}"
				[ -f "$f" ] && printf '%s\0' "$f"
			done > "$work/$name.pinned"
		npinned=$(tr -cd '\0' < "$work/$name.pinned" | wc -c)
		if [ "$npinned" -eq 0 ]; then
			log "$name: -p: none of the files the state names exists here; nothing to lock"
		else
			vmtouch -q -d -l -w -P "$work/vmtouch.pid" -0 -b "$work/$name.pinned" ||
				{ log "$name: vmtouch could not lock the files of $work/$name.pinned"; exit 1; }
			vpid=$(cat "$work/vmtouch.pid")
			log "$name: locked $npinned files in memory (vmtouch pid $vpid)"
		fi
	fi

	cp "$work/$name.state" "$work/run.state"
	logf="$work/$name.log"
	: > "$logf"
	sync
	# The load is timed with builtins only: forking grep, sleep and date
	# for each poll, as the waits below do, costs tens of milliseconds
	# on a busy machine, more than reading a 1,000-executable state.
	now_us; t0=$us
	"$ours" -f -n 0 -c "$work/preload.conf" -s "$work/run.state" -l "$logf" -V 4 &
	dpid=$!
	until has_line "$logf" "loaded state from"; do
		now_us
		kill -0 "$dpid" 2> /dev/null && [ $((us - t0)) -lt 600000000 ] ||
			{ log "$name: not loaded (see $logf)"; exit 1; }
		nap
	done
	now_us
	load_ms=$(((us - t0 + 500) / 1000))
	read_ms=$(sed -n 's/.*loaded state from .* in \([0-9.]*\) ms.*/\1/p' "$logf" | head -1)
	rss=$(status_kb "$dpid" VmRSS)
	sleep $((2 * cycle + 1))
	dump "$logf" || exit 1
	c1=$(cpu_s "$dpid") m1=$mtime s1=$stages
	sleep $((cycles * cycle))
	dump "$logf" || exit 1
	while [ $(((mtime - m1) / cycle)) -lt "$cycles" ]; do
		sleep "$cycle"
		dump "$logf" || exit 1
	done
	c2=$(cpu_s "$dpid") s2=$stages
	done_cycles=$(((mtime - m1) / cycle))
	# Per cycle: the main thread's CPU in each stage, the rest, and what was re-read.
	per_stage=$([ -n "$s1" ] && [ -n "$s2" ] && awk -v a="$s1" -v b="$s2" -v k="$done_cycles" 'BEGIN {
		n = split(a, x, " "); split(b, y, " ")
		for (i = 1; i <= n; i++) printf "%s%.2f", (i > 1 ? "\t" : ""), (y[i] - x[i]) / k }')
	hwm=$(status_kb "$dpid" VmHWM)
	s0=$(now_ms)
	kill -TERM "$dpid"
	wait "$dpid" 2> /dev/null
	dpid=
	save_ms=$(($(now_ms) - s0))
	per_cycle=$(awk -v a="$c1" -v b="$c2" -v k="$done_cycles" 'BEGIN { printf "%.1f", (b - a) * 1000 / k }')
	log "$name: loaded in $load_ms ms ($read_ms reading the file), RSS $rss KB (peak $hwm), $per_cycle ms CPU per cycle over $done_cycles cycles"
	log "$name: per cycle, ms of scan, learn, predict, readahead, other, KB re-read, and ms of other in the readahead threads: $per_stage"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$exes" "$maps" "$chains" \
		"$(stat -c %s "$work/$name.state")" "$load_ms" "$rss" "$hwm" "$per_cycle" \
		"$done_cycles" "$save_ms" "$(stat -c %s "$work/run.state")" "$read_ms" "$per_stage" >> "$work/sparse.tsv"
	rm -f "$work/run.state" "$work/$name.trace"
	if [ -n "$vpid" ]; then
		kill -TERM "$vpid"
		vpid=
	fi
done

awk -F'\t' '
	NR == 1 { printf "%-5s %6s %6s %7s %9s %8s %8s %7s %8s %9s %7s | %6s %6s %6s %6s %6s %9s %8s\n", "", "exes", "maps",
		"chains", "state MB", "load ms", "(read)", "RSS MB", "peak MB", "ms/cycle", "save ms",
		"scan", "learn", "pred.", "ra", "other", "reread KB", "ra thr."; next }
	{ printf "%-5s %6s %6s %7s %9.2f %8s %8s %7.1f %8.1f %9s %7s | %6s %6s %6s %6s %6s %9s %8s\n", $1, $2, $3, $4, $5 / 1048576,
		$6, $13, $7 / 1024, $8 / 1024, $9, $11, $14, $15, $16, $17, $18, $19, $20 }' "$work/sparse.tsv" | tee "$work/table.txt"
echo "results: $work"
