#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The cost-at-scale benchmark (root): what this preload and Debian's
# preload 0.6.4 cost when they know many executables. See
# doc/benchmarks.md, "Cost at scale".
#
#   scale.sh [-n "100 1000 5000"] [-c CYCLE] [-k CYCLES] [-d DAEMONS] [-o DIR]
#
#   -n  the numbers of executables ("100 1000 5000")
#   -c  the cycle while measuring, seconds (2)
#   -k  cycles measured (10)
#   -d  daemons, comma-separated: 0.6.4, this (0.6.4,this)
#   -o  results directory (a new /var/tmp/preload-scale.XXXXXX)
#
# For each N, tests/bench/stategen writes one random model of N
# executables (60 maps each from a pool of 5,000, a chain for every pair)
# in both state formats. Each daemon then starts from its file, alone,
# with the same configuration (cycle CYCLE, maxprocs 0, prefix lists that
# accept only the generated executables and maps, this preload's fanotify
# learning off, the rest default) and at nice 0 (on a busy machine nice 15 would time the other
# jobs), and this measures:
#   load     wall time from exec until the daemon logs that its state is
#            loaded (0.6.4: "loading state done", this: "loaded state
#            from"), and the CPU time it had used by then
#   RSS      VmRSS and RssAnon right after the load, VmHWM at the end
#   cycle    CPU time (user + system, with reaped children) over at
#            least CYCLES cycles, from two cycles after the load, divided
#            by the cycles done; the cycles are counted by the model time
#            the SIGUSR1 dump reports at both ends (each daemon advances
#            it by one cycle per cycle), so a cycle that takes longer than
#            CYCLE still counts once
#   save     wall time from SIGTERM to exit: both save the whole state
#   state    the size of the generated file and of the one saved at exit
# Writes scale.tsv and prints a table with the ratios this / 0.6.4.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top_builddir=${top_builddir:-$(cd "$here/../.." && pwd)}
ours="$top_builddir/src/preload"
stategen="$top_builddir/tests/bench/stategen"
theirs=${PRELOAD_064:-/usr/sbin/preload}

sizes="100 1000 5000" cycle=2 cycles=10 daemons=0.6.4,this out=
while getopts "n:c:k:d:o:h" opt; do
	case $opt in
	n) sizes=$OPTARG ;; c) cycle=$OPTARG ;; k) cycles=$OPTARG ;;
	d) daemons=$OPTARG ;; o) out=$OPTARG ;;
	*) sed -n '/^#   scale.sh/,/^#   -o/p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
IFS=, read -r -a daemon_list <<< "$daemons"
for d in "${daemon_list[@]}"; do
	case $d in 0.6.4 | this) ;; *) echo "scale.sh: unknown daemon '$d'" >&2; exit 2 ;; esac
done

[ "$(id -u)" = 0 ] || { echo "scale.sh: needs root"; exit 77; }
[ -x "$stategen" ] && [ -x "$ours" ] || { echo "scale.sh: build first ($stategen, $ours)"; exit 1; }
case ,$daemons, in *,0.6.4,*) [ -x "$theirs" ] ||
	{ echo "scale.sh: needs Debian's preload 0.6.4: apt-get install -y preload"; exit 77; } ;; esac
if [ -n "$out" ]; then
	mkdir -p "$out" || exit 1
	work=$(cd "$out" && pwd)
else
	work=$(mktemp -d /var/tmp/preload-scale.XXXXXX) || exit 1
fi

dpid=
cleanup() { [ -n "$dpid" ] && kill -TERM "$dpid" 2> /dev/null && wait "$dpid"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }

# Both learn only the generated executables: nothing the machine runs
# joins the model during the measurement (0.6.4's compiled-in prefix
# lists accept everything, even FIFOs in other people's test directories,
# which block its open()). This preload's fanotify watch is off: it handles
# every program start and start-up open on the machine, work that follows
# what the machine does, not how many executables are known. 0.6.4
# ignores those two keys.
cat > "$work/preload.conf" <<EOF
# The scale benchmark's configuration, read by both daemons.
[model]
cycle = $cycle
[system]
autosave = 86400
maxprocs = 0
exeprefix = /usr/bin/preload-stategen-;!/
mapprefix = /usr/lib/preload-stategen/;!/
learnreads = false
learnexec = false
EOF

now_ms() { echo $(($(date +%s%N) / 1000000)); }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13 + $14 + $15) / hz }' "/proc/$1/stat"; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# Waits until LOG has at least COUNT lines matching PATTERN, polling
# every 20 ms, for at most LIMIT seconds; fails if the daemon exits.
wait_lines() { # LOG PATTERN COUNT LIMIT
	local end=$((SECONDS + $4))
	while [ "$(grep -c -- "$2" "$1" 2> /dev/null)" -lt "$3" ]; do
		kill -0 "$dpid" 2> /dev/null || return 1
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.02
	done
}

# Asks the daemon for its SIGUSR1 dump and waits for it; sets mtime to
# the model time it reports (seconds; both daemons advance it by exactly
# one cycle per cycle, so it counts the cycles done, slow ones too).
dump() { # LOG
	local before
	before=$(grep -c -- "$dump_line" "$1")
	kill -USR1 "$dpid"
	wait_lines "$1" "$dump_line" $((before + 1)) 600 || return 1
	mtime=$(grep -o -- "$dump_line[^0-9]*[0-9]*" "$1" | tail -1 | grep -o '[0-9]*$')
}

measure() { # N DAEMON
	local n=$1 d=$2 statefile="$work/$1.$2.state" logf="$work/$1.$2.log"
	local loaded t0 t1 load_ms load_cpu rss anon c1 c2 m1 hwm s0 save_ms saved done_cycles
	: > "$logf"
	case $d in
	0.6.4)
		cp "$work/$n.old.state" "$statefile"
		loaded="loading state done" dump_line="preload time ="
		sync
		t0=$(now_ms)
		# -V 5 for its "loading state done"; it logs a few lines a cycle.
		"$theirs" -f -n 0 -c "$work/preload.conf" -s "$statefile" -l "$logf" -V 5 & ;;
	this)
		cp "$work/$n.ours.state" "$statefile"
		loaded="loaded state from" dump_line="model: time"
		sync
		t0=$(now_ms)
		# -V 4: at 5 it logs every missing file it was asked to read.
		"$ours" -f -n 0 -c "$work/preload.conf" -s "$statefile" -l "$logf" -V 4 & ;;
	esac
	dpid=$!
	if ! wait_lines "$logf" "$loaded" 1 1200; then
		log "$d did not load $n exes (see $logf)"
		return 1
	fi
	t1=$(now_ms)
	load_ms=$((t1 - t0)) load_cpu=$(cpu_s "$dpid")
	rss=$(status_kb "$dpid" VmRSS) anon=$(status_kb "$dpid" RssAnon)
	log "$d, $n exes: loaded in $load_ms ms ($load_cpu s CPU), RSS $rss KB"
	# Measure from the third cycle on.
	sleep $((2 * cycle + 1))
	dump "$logf" || { log "$d: no dump"; return 1; }
	c1=$(cpu_s "$dpid") m1=$mtime t0=$(now_ms)
	sleep $((cycles * cycle))
	dump "$logf" || { log "$d: no dump"; return 1; }
	while [ $(((mtime - m1) / cycle)) -lt "$cycles" ]; do
		sleep "$cycle"
		dump "$logf" || { log "$d: no dump"; return 1; }
	done
	c2=$(cpu_s "$dpid") t1=$(now_ms)
	done_cycles=$(((mtime - m1) / cycle))
	hwm=$(status_kb "$dpid" VmHWM)
	log "$d, $n exes: $done_cycles cycles in $((t1 - t0)) ms, $(awk -v a="$c1" -v b="$c2" -v k="$done_cycles" 'BEGIN { printf "%.1f", (b - a) * 1000 / k }') ms CPU per cycle"
	s0=$(now_ms)
	kill -TERM "$dpid"
	wait "$dpid" 2> /dev/null
	save_ms=$(($(now_ms) - s0))
	dpid=
	saved=$(stat -c %s "$statefile" 2> /dev/null || echo 0)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$d" \
		"$(stat -c %s "$work/$n.$( [ "$d" = this ] && echo ours || echo old).state")" \
		"$load_ms" "$load_cpu" "$rss" "$anon" "$hwm" \
		"$(awk -v a="$c1" -v b="$c2" -v k="$done_cycles" 'BEGIN { printf "%.1f", (b - a) * 1000 / k }')" \
		"$done_cycles" "$((t1 - t0))" "$save_ms" "$saved" >> "$work/scale.tsv"
	rm -f "$statefile" "$statefile.lock"
}

printf 'exes\tdaemon\tstate_bytes\tload_ms\tload_cpu_s\trss_kb\tanon_kb\tpeak_rss_kb\tcpu_ms_per_cycle\tcycles\twindow_ms\tsave_ms\tsaved_bytes\n' \
	> "$work/scale.tsv"
log "results in $work"
for n in $sizes; do
	log "generating $n exes"
	t0=$(now_ms)
	"$stategen" "$n" "$work/$n.ours.state" "$work/$n.old.state" || exit 1
	log "generated in $(($(now_ms) - t0)) ms"
	for d in "${daemon_list[@]}"; do
		measure "$n" "$d"
	done
	rm -f "$work/$n.ours.state" "$work/$n.old.state"
done

awk -F'\t' '
	function mb(x) { return sprintf("%.1f", x / 1048576) }
	function r(a, b) { return (b > 0) ? sprintf("%.2f", a / b) : "-" }
	NR == 1 { next }
	{ key = $1 SUBSEP $2; for (i = 3; i <= NF; i++) v[key, i] = $i; seen[$1] = 1; ns[++nn] = $1; d[$2] = 1 }
	END {
		printf "%-6s %-6s %10s %9s %9s %9s %9s %10s %9s %10s\n", "exes", "daemon", "state MB",
			"load s", "load CPU", "RSS MB", "anon MB", "peak MB", "ms/cycle", "save s"
		for (k = 1; k <= nn; k++) {
			n = ns[k]
			if (n in done) continue
			done[n] = 1
			split("0.6.4 this", names, " ")
			for (j = 1; j <= 2; j++) {
				key = n SUBSEP names[j]
				if (!((key, 3) in v)) continue
				printf "%-6s %-6s %10s %9.2f %9s %9s %9s %10s %9s %10.2f\n", n, names[j],
					mb(v[key, 3]), v[key, 4] / 1000, v[key, 5], mb(v[key, 6] * 1024),
					mb(v[key, 7] * 1024), mb(v[key, 8] * 1024), v[key, 9], v[key, 12] / 1000
			}
			a = n SUBSEP "0.6.4"; b = n SUBSEP "this"
			if ((a, 3) in v && (b, 3) in v)
				printf "%-6s %-6s %10s %9s %9s %9s %9s %10s %9s %10s\n", n, "ratio",
					r(v[b, 3], v[a, 3]), r(v[b, 4], v[a, 4]), r(v[b, 5], v[a, 5]),
					r(v[b, 6], v[a, 6]), r(v[b, 7], v[a, 7]), r(v[b, 8], v[a, 8]),
					r(v[b, 9], v[a, 9]), r(v[b, 12], v[a, 12])
		}
	}' "$work/scale.tsv" | tee "$work/table.txt"
echo "results: $work"
