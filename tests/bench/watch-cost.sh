#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What learning from fanotify costs the daemon under a busy workload: the
# daemon's CPU time (utime + stime from /proc/PID/stat) while a full
# "make -j2" of this project runs in a fresh out-of-tree build directory,
# with learnreads and learnexec on ("on"), only learnexec ("exec": no open
# events), and both off ("off"), in turn, ROUNDS times each.
# A benchmark, not a test: run it by hand, as root, on an idle machine.
#
#   tests/bench/watch-cost.sh BUILT_PRELOAD [ROUNDS]
#
# Prints one line per run and, with the watcher on, its event counts.

set -eu

preload=$1
rounds=${2:-3}
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/bench-watch.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
ticks=$(getconf CLK_TCK)

cpu_ms() { # PID: utime + stime of the process, in ms
	awk -v t="$ticks" '{ sub(/.*\) /, ""); print int(($12 + $13) * 1000 / t) }' "/proc/$1/stat"
}

run() { # on|exec|off
	mode=$1
	reads=$([ "$mode" = on ] && echo true || echo false)
	execs=$([ "$mode" = off ] && echo false || echo true)
	rm -rf "$work/build" "$work/state" "$work/log"
	mkdir -p "$work/build"
	(cd "$work/build" && "$srcdir/configure" -q > /dev/null)
	printf '[system]\nlearnreads = %s\nlearnexec = %s\n' "$reads" "$execs" > "$work/conf"
	"$preload" -f -c "$work/conf" -s "$work/state" -l "$work/log" -V 4 &
	pid=$!
	sleep 1
	start_cpu=$(cpu_ms "$pid")
	start=$(date +%s.%N)
	make -C "$work/build" -j2 > /dev/null 2>&1
	end=$(date +%s.%N)
	sleep 1   # the last windows end and are learned
	end_cpu=$(cpu_ms "$pid")
	kill -USR1 "$pid"
	sleep 0.5
	kill -TERM "$pid"
	wait "$pid" || true
	printf '%s: daemon CPU %d ms during a %.1f s make -j2\n' "$mode" \
		"$((end_cpu - start_cpu))" "$(echo "$end - $start" | bc)"
	grep -o 'watch: fanotify.*overflows' "$work/log" | sed 's/^/    /' || true
}

i=0
while [ "$i" -lt "$rounds" ]; do
	run on
	run exec
	run off
	i=$((i + 1))
done
