#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The upgrade benchmark (root): what Debian's preload 0.6.4 and this
# preload cost when both start from the same 0.6.4 state of N programs
# (tests/bench/stategen: every pair of programs a chain). See
# doc/benchmarks.md, "Importing a 0.6.4 state".
#
#   import-cost.sh [-n N] [-t SECONDS] [-c CYCLE] [-d DAEMONS] [-o DIR]
#
#   -n  programs in the generated state (1000)
#   -t  seconds each daemon runs (30)
#   -c  the cycle, seconds (2)
#   -d  daemons, comma-separated: 0.6.4, this (0.6.4,this)
#   -o  results directory (a new /var/tmp/preload-import.XXXXXX)
#
# Each daemon runs alone in the foreground (-f) on its own copy of the
# file, with the configuration of tests/bench/scale.sh (only the
# generated programs and maps accepted, this preload's fanotify learning
# off). VmRSS and VmHWM are sampled every second; at the end the daemon
# is asked to save (SIGUSR2), VmRSS is read again once the save is done,
# and it is stopped (SIGTERM, which saves again). Reports the peak RSS,
# the RSS before and after that first save and the size of the saved
# state, with the ratios this / 0.6.4.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top_builddir=${top_builddir:-$(cd "$here/../.." && pwd)}
ours="$top_builddir/src/preload"
stategen="$top_builddir/tests/bench/stategen"
theirs=${PRELOAD_064:-/usr/sbin/preload}

n=1000 secs=30 cycle=2 daemons=0.6.4,this out=
while getopts "n:t:c:d:o:h" opt; do
	case $opt in
	n) n=$OPTARG ;; t) secs=$OPTARG ;; c) cycle=$OPTARG ;;
	d) daemons=$OPTARG ;; o) out=$OPTARG ;;
	*) sed -n '/^#   import-cost.sh/,/^#   -o/p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
IFS=, read -r -a daemon_list <<< "$daemons"
for d in "${daemon_list[@]}"; do
	case $d in 0.6.4 | this) ;; *) echo "import-cost.sh: unknown daemon '$d'" >&2; exit 2 ;; esac
done

[ "$(id -u)" = 0 ] || { echo "import-cost.sh: needs root"; exit 77; }
[ -x "$stategen" ] && [ -x "$ours" ] || { echo "import-cost.sh: build first ($stategen, $ours)"; exit 1; }
case $daemons in *0.6.4*) [ -x "$theirs" ] ||
	{ echo "import-cost.sh: needs Debian's preload 0.6.4: apt-get install -y preload"; exit 77; } ;; esac
if [ -n "$out" ]; then
	mkdir -p "$out" || exit 1
	work=$(cd "$out" && pwd)
else
	work=$(mktemp -d /var/tmp/preload-import.XXXXXX) || exit 1
fi

dpid=
cleanup() { [ -n "$dpid" ] && kill -TERM "$dpid" 2> /dev/null && wait "$dpid"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2> /dev/null; }

cat > "$work/preload.conf" <<EOF
# The upgrade benchmark's configuration, read by both daemons.
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

run() { # DAEMON
	local d=$1 statefile="$work/$1.state" logf="$work/$1.log"
	local peak=0 rss before after hwm ino0
	cp "$work/old.state" "$statefile"
	ino0=$(stat -c %i "$statefile")
	: > "$logf"
	case $d in
	0.6.4) "$theirs" -f -n 0 -c "$work/preload.conf" -s "$statefile" -l "$logf" -V 4 & ;;
	this) "$ours" -f -n 0 -c "$work/preload.conf" -s "$statefile" -l "$logf" -V 4 & ;;
	esac
	dpid=$!
	for ((i = 0; i < secs; i++)); do
		sleep 1
		rss=$(status_kb "$dpid" VmRSS)
		[ -n "$rss" ] || { log "$d exited early (see $logf)"; dpid=; return 1; }
		[ "$rss" -gt "$peak" ] && peak=$rss
	done
	before=$(status_kb "$dpid" VmRSS)
	kill -USR2 "$dpid"
	# The save replaces the file: wait for a new one (at most 60 s).
	for ((i = 0; i < 600; i++)); do
		sleep 0.1
		[ "$(stat -c %i "$statefile" 2> /dev/null)" != "$ino0" ] && break
	done
	sleep 1
	after=$(status_kb "$dpid" VmRSS) hwm=$(status_kb "$dpid" VmHWM)
	kill -TERM "$dpid"
	wait "$dpid" 2> /dev/null
	dpid=
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$d" "$(stat -c %s "$work/old.state")" \
		"$peak" "$hwm" "$before" "$after" "$(stat -c %s "$statefile")" >> "$work/import.tsv"
	log "$d: peak VmRSS $peak KB, VmHWM $hwm KB, VmRSS $before KB before the save, $after KB after, state $(stat -c %s "$statefile") B"
}

printf 'daemon\told_state_bytes\tpeak_rss_kb\thwm_kb\trss_before_save_kb\trss_after_save_kb\tsaved_bytes\n' \
	> "$work/import.tsv"
log "results in $work"
"$stategen" "$n" "$work/ours.state" "$work/old.state" || exit 1
rm -f "$work/ours.state"
for d in "${daemon_list[@]}"; do
	run "$d"
done
awk -F'\t' '
	NR == 1 { next }
	{ for (i = 2; i <= NF; i++) v[$1, i] = $i; d[$1] = 1 }
	END {
		printf "%-8s %10s %10s %10s %10s %10s %10s\n", "daemon", "0.6.4 MB", "peak KB", "HWM KB",
			"before KB", "after KB", "saved MB"
		for (k in d)
			printf "%-8s %10.1f %10d %10d %10d %10d %10.2f\n", k, v[k, 2] / 1048576, v[k, 3],
				v[k, 4], v[k, 5], v[k, 6], v[k, 7] / 1048576
		if (("this" in d) && ("0.6.4" in d))
			printf "this / 0.6.4: peak %.3f, HWM %.3f, after the save %.3f, state %.3f\n",
				v["this", 3] / v["0.6.4", 3], v["this", 4] / v["0.6.4", 4],
				v["this", 6] / v["0.6.4", 6], v["this", 7] / v["0.6.4", 7]
	}' "$work/import.tsv"
