#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# CPU time and peak memory of this preload and of Debian's preload 0.6.4,
# side by side over the same real workload in the same run (root).
#
#   daemon-cost.sh [SECONDS] [CONF]
#
# Both daemons start with an empty state and the same configuration
# (default: Debian's /etc/preload.conf, whose keys both read), run while
# tests/bench/workload.sh plays, and are then stopped with SIGTERM so
# each saves its state. CPU includes reaped children (0.6.4 forks its
# readahead). Prints a table and the ratio this/0.6.4 for each figure.
#
# BASELINE=PATH in the environment runs another build of this preload
# (main's, say) beside them over the same workload, and adds its column
# and the ratio this/baseline: two builds measured in turn see different
# loads on a shared machine, side by side they see the same.
set -u

duration=${1:-600}
conf=${2:-${PRELOAD_064_CONF:-/etc/preload.conf}}
here=$(cd "$(dirname "$0")" && pwd)
top_builddir=${top_builddir:-$(cd "$here/../.." && pwd)}
ours="$top_builddir/src/preload"
theirs=${PRELOAD_064:-/usr/sbin/preload}

[ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
[ -x "$theirs" ] || { echo "needs Debian's preload 0.6.4: apt-get install -y preload"; exit 77; }
[ -x "$ours" ] || { echo "build first: $ours missing"; exit 1; }
[ -f "$conf" ] || { echo "no configuration $conf"; exit 1; }

work=$(mktemp -d /var/tmp/daemon-cost.XXXXXX)
pkill -x preload 2>/dev/null; sleep 1

"$theirs" -f -c "$conf" -s "$work/old.state" -l "$work/old.log" -V 4 &
old=$!
"$ours" -f -c "$conf" -s "$work/new.state" -l "$work/new.log" -V 4 &
new=$!
base=
if [ -n "${BASELINE:-}" ]; then
	"$BASELINE" -f -c "$conf" -s "$work/base.state" -l "$work/base.log" -V 4 &
	base=$!
fi
sleep 1

# Peak private (anonymous) and file-backed resident memory, sampled every
# 2 s. File-backed RSS counts shared library pages that the kernel maps
# around faults when they are cached anyway: it moves with the page cache,
# not with the daemon, so the private figure is the one to compare.
sample() {
	while kill -0 "$old" 2>/dev/null && kill -0 "$new" 2>/dev/null; do
		for p in "$old" "$new" $base; do
			awk -v p="$p" '/^RssAnon|^RssFile/ { printf "%s %s %s\n", p, $1, $2 }' \
				"/proc/$p/status" 2>/dev/null
		done
		sleep 2
	done > "$work/rss.samples"
}
sample &
sampler=$!

"$here/workload.sh" "$duration" 1 > "$work/workload.log"

# utime+stime+cutime+cstime in clock ticks -> seconds; VmHWM in KB.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13 + $14 + $15) / hz }' "/proc/$1/stat"; }
hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }
old_cpu=$(cpu $old); new_cpu=$(cpu $new)
old_hwm=$(hwm $old); new_hwm=$(hwm $new)
[ -n "$base" ] && { base_cpu=$(cpu $base); base_hwm=$(hwm $base); }
peak() { awk -v p="$1" -v k="$2:" '$1 == p && $2 == k && $3 > m { m = $3 } END { print m + 0 }' "$work/rss.samples"; }
# After the CPU is read: the dump says what the watcher saw (its events).
kill -USR1 $new $base
sleep 1
kill -TERM $old $new $base
wait $old $new $base 2>/dev/null
wait $sampler 2>/dev/null
old_anon=$(peak $old RssAnon); new_anon=$(peak $new RssAnon)
old_file=$(peak $old RssFile); new_file=$(peak $new RssFile)
old_state=$(stat -c %s "$work/old.state" 2>/dev/null || echo 0)
new_state=$(stat -c %s "$work/new.state" 2>/dev/null || echo 0)
if [ -n "$base" ]; then
	base_anon=$(peak $base RssAnon); base_file=$(peak $base RssFile)
	base_state=$(stat -c %s "$work/base.state" 2>/dev/null || echo 0)
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
printf '%-22s %14s %14s %10s\n' "over ${duration}s" "preload 0.6.4" "this preload" "ratio"
printf '%-22s %14s %14s %10s\n' "CPU time (s)" "$old_cpu" "$new_cpu" "$(ratio "$new_cpu" "$old_cpu")"
printf '%-22s %14s %14s %10s\n' "peak RSS (KB)" "$old_hwm" "$new_hwm" "$(ratio "$new_hwm" "$old_hwm")"
printf '%-22s %14s %14s %10s\n' "peak private RSS (KB)" "$old_anon" "$new_anon" "$(ratio "$new_anon" "$old_anon")"
printf '%-22s %14s %14s %10s\n' "peak file RSS (KB)" "$old_file" "$new_file" "$(ratio "$new_file" "$old_file")"
printf '%-22s %14s %14s %10s\n' "state file (bytes)" "$old_state" "$new_state" "$(ratio "$new_state" "$old_state")"
if [ -n "$base" ]; then
	echo "baseline: $BASELINE"
	printf '%-22s %14s %14s %10s\n' "over ${duration}s" "baseline" "this preload" "ratio"
	printf '%-22s %14s %14s %10s\n' "CPU time (s)" "$base_cpu" "$new_cpu" "$(ratio "$new_cpu" "$base_cpu")"
	printf '%-22s %14s %14s %10s\n' "peak RSS (KB)" "$base_hwm" "$new_hwm" "$(ratio "$new_hwm" "$base_hwm")"
	printf '%-22s %14s %14s %10s\n' "peak private RSS (KB)" "$base_anon" "$new_anon" "$(ratio "$new_anon" "$base_anon")"
	printf '%-22s %14s %14s %10s\n' "state file (bytes)" "$base_state" "$new_state" "$(ratio "$new_state" "$base_state")"
fi
for log in "$work/new.log" ${base:+"$work/base.log"}; do
	printf '%s: ' "$(basename "$log" .log)"
	grep -o '[0-9]* events, [0-9]* starts.*' "$log" | tail -n 1
done
echo "logs and states kept in $work"
