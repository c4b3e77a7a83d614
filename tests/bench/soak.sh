#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Soak: the daemon at a 1-second cycle for SECONDS (default an hour)
# against the real /proc while the workload keeps changing: sets of real
# programs (interpreters, compressors, coreutils) and synthetic ones
# (copies of tests/helpers/mapper, each mapping its own data files) take turns,
# and every few minutes new synthetic programs appear. Every INTERVAL
# seconds (default 60) it samples the daemon's VmRSS and, after a
# SIGUSR2 save, the state file's size, and prints a table. At the end
# it judges "flat after warm-up": the largest VmRSS and state size of
# the last third of the samples are within 10% of those of the middle
# third. Not part of make check.
#
#   tests/bench/soak.sh [SECONDS [INTERVAL]]     (run as root from the build tree,
#                                                 or with top_builddir=BUILD)
#
# Exit status: 0 flat, 1 grew or the daemon failed, 77 not root.
set -u

seconds=${1:-3600}
interval=${2:-60}
top_builddir=${top_builddir:-$(pwd)}
preload=$top_builddir/src/preload
mapper=$top_builddir/tests/helpers/mapper

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (reads every process's /proc entries)"
	exit 77
fi
if [ ! -x "$preload" ] || [ ! -x "$mapper" ]; then
	echo "soak: build the daemon and tests/helpers/mapper first (make check), or set top_builddir" >&2
	exit 1
fi

work=$(mktemp -d "$top_builddir/soak.XXXXXX")
daemon_pid=
workload_pid=
cleanup() {
	[ -n "$workload_pid" ] && kill "$workload_pid" 2>/dev/null
	[ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir -p "$work/bin" "$work/data"
cat > "$work/preload.conf" <<EOF
[model]
cycle = 1
minsize = 100000
[system]
exeprefix = $work/bin/;!/usr/sbin/;!/usr/local/sbin/;/usr/;!/
mapprefix = $work/;/usr/;/lib;/var/cache/;!/
autosave = 300
maxprocs = 4
EOF

# A synthetic program N with its two data files (created on first use).
synthetic() {
	local n=$1 secs=$2
	if [ ! -x "$work/bin/syn-$n" ]; then
		cp "$mapper" "$work/bin/syn-$n"
		head -c $((200000 + n * 10000)) /dev/urandom > "$work/data/syn-$n.a"
		head -c 150000 /dev/urandom > "$work/data/syn-$n.b"
	fi
	"$work/bin/syn-$n" "$secs" "$work/data/syn-$n.a" "$work/data/syn-$n.b"
}

# Real programs that run for a few seconds each.
real_set() {
	case $1 in
	0) python3 -c 'import time, json; time.sleep(3)' 2>/dev/null &
	   perl -e 'sleep 3' &
	   sleep 3 & ;;
	1) head -c 20000000 /dev/urandom | gzip -1 > /dev/null &
	   sort /dev/null &
	   awk 'BEGIN { system("sleep 2") }' & ;;
	2) head -c 20000000 /dev/urandom | xz -0 -T1 > /dev/null 2>&1 &
	   python3 -c 'import time, email, http.client; time.sleep(2)' 2>/dev/null &
	   find /usr/share/doc -maxdepth 1 > /dev/null & ;;
	esac
}

# The workload: a 30-second phase per step; the set of synthetic
# programs shifts by one every phase and grows every 5 phases (up to 40).
workload() {
	local phase=0 end=$((SECONDS + seconds)) base
	while [ "$SECONDS" -lt "$end" ]; do
		base=$(( (phase / 5) % 10 * 3 ))
		for step in 1 2 3 4 5 6; do
			real_set $(( (phase + step) % 3 ))
			synthetic $(( base + (phase + step) % 10 )) 3 &
			synthetic $(( base + (phase + 2 * step) % 10 )) 2 &
			sleep 5
		done
		wait
		phase=$((phase + 1))
	done
}

"$preload" -f -c "$work/preload.conf" -s "$work/state" -l "$work/log" -V 4 &
daemon_pid=$!
for _ in $(seq 50); do grep -q "preload .* started" "$work/log" 2>/dev/null && break; sleep 0.1; done
grep -q "preload .* started" "$work/log" || { echo "soak: the daemon did not start"; exit 1; }

workload &
workload_pid=$!

# sample N: SIGUSR2 and wait for its save, then SIGUSR1 for the counts.
saves=0
dumps=0
sample() {
	local rss size line i
	kill -0 "$daemon_pid" 2>/dev/null || { echo "soak: the daemon died"; exit 1; }
	saves=$((saves + 1))
	kill -USR2 "$daemon_pid"
	for i in $(seq 50); do
		[ "$(grep -c 'SIGUSR2: saving' "$work/log")" -ge "$saves" ] && break
		sleep 0.1
	done
	sleep 0.3
	dumps=$((dumps + 1))
	kill -USR1 "$daemon_pid"
	for i in $(seq 50); do
		[ "$(grep -c 'SIGUSR1: state dump' "$work/log")" -ge "$dumps" ] && break
		sleep 0.1
	done
	sleep 0.2
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$daemon_pid/status")
	size=$(stat -c %s "$work/state" 2>/dev/null || echo 0)
	line=$(grep 'model: time' "$work/log" | tail -n 1 |
		sed -E 's/.* ([0-9]+) exes \(([0-9]+) running\), ([0-9]+) maps, ([0-9]+) chains.*/\1 \3 \4/')
	printf '%8d %10d %12d %6s %6s %8s\n' "$1" "$rss" "$size" $line
	echo "$1 $rss $size $line" >> "$work/samples"
}

printf '%8s %10s %12s %6s %6s %8s\n' seconds "VmRSS KB" "state bytes" exes maps chains
start=$SECONDS
next=$interval
while [ $((SECONDS - start)) -lt "$seconds" ]; do
	sleep 1
	if [ $((SECONDS - start)) -ge "$next" ]; then
		sample $((SECONDS - start))
		next=$((next + interval))
	fi
done
cpu=$(awk '{ print ($14 + $15) / 100 }' "/proc/$daemon_pid/stat")

kill "$workload_pid" 2>/dev/null
workload_pid=
kill -TERM "$daemon_pid"
wait "$daemon_pid"
status=$?
daemon_pid=
echo "daemon CPU time: ${cpu} s; exit status on SIGTERM: $status"
grep -c "WARNING\|CRITICAL\|warning:" "$work/log" | sed 's/^/warnings in the log: /'

awk -v status="$status" '
	{ rss[NR] = $2; size[NR] = $3 }
	END {
		if (NR < 3) { print "too few samples to judge (need 3)"; exit 1 }
		a = int(NR / 3); b = int(2 * NR / 3)
		for (i = a + 1; i <= b; i++) { if (rss[i] > mr) mr = rss[i]; if (size[i] > ms) ms = size[i] }
		for (i = b + 1; i <= NR; i++) { if (rss[i] > lr) lr = rss[i]; if (size[i] > ls) ls = size[i] }
		printf "middle third max: VmRSS %d KB, state %d bytes; last third max: VmRSS %d KB, state %d bytes\n", mr, ms, lr, ls
		bad = 0
		if (lr > mr * 1.10) { print "VmRSS grew more than 10% after warm-up"; bad = 1 }
		if (ls > ms * 1.10) { print "the state grew more than 10% after warm-up"; bad = 1 }
		if (status != 0) { print "the daemon did not exit cleanly"; bad = 1 }
		print bad ? "soak: NOT FLAT" : "soak: flat after warm-up"
		exit bad
	}' "$work/samples"
