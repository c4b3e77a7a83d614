#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What a plain open by a process outside any start-up window costs two
# builds of the daemon, measured side by side in the same run (root):
# both daemons run at once with the same configuration and see the same
# opens, so the load of the machine falls on both alike.
#
#   tests/bench/open-cost.sh OLD_PRELOAD NEW_PRELOAD [OPENS] [CONF]
#
# PAUSE=S in the environment sleeps S seconds after every 1,000 opens
# (default 0.05: 100,000 opens in about 5 s, which the kernel's queue of
# 16,384 events holds; PAUSE=0 floods it, and a daemon that falls behind
# loses events, counted as overflows).
#
# An opener process is started before the daemons (so no window of
# either covers it), waits until both have started, then opens and
# closes OPENS files (default 100,000): the regular files under /usr/lib,
# at most 20,000 distinct ones, in turn (distinct files, so that the
# kernel cannot merge the events). Prints each daemon's CPU time (utime +
# stime from /proc/PID/stat) over the opens, in ms and in us per open,
# and the daemon's own count of events read from its dump. A benchmark,
# not a test: run it under the machine lock.

set -eu

old=$1
new=$2
opens=${3:-100000}
conf=${4:-/etc/preload.conf}
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
work=$(mktemp -d /var/tmp/open-cost.XXXXXX)
old_pid= new_pid= opener=
cleanup() {
	for p in $old_pid $new_pid $opener; do
		kill "$p" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
ticks=$(getconf CLK_TCK)

cpu_ms() { # PID: utime + stime of the process, in ms
	awk -v t="$ticks" '{ sub(/.*\) /, ""); print int(($12 + $13) * 1000 / t) }' "/proc/$1/stat"
}

find /usr/lib -xdev -type f -size +0 2>/dev/null | head -n 20000 > "$work/files"
mkfifo "$work/go"
python3 - "$work/files" "$opens" "$work/go" "${PAUSE:-0.05}" <<'EOF' &
import os, sys, time
files = [l.rstrip("\n") for l in open(sys.argv[1])]
n = int(sys.argv[2])
pause = float(sys.argv[4])
open(sys.argv[3]).read()       # until the daemons run
done = 0
while done < n:
    for f in files:
        if done >= n:
            break
        try:
            os.close(os.open(f, os.O_RDONLY | os.O_NONBLOCK))
        except OSError:
            pass
        done += 1
        if pause > 0 and done % 1000 == 0:
            time.sleep(pause)
EOF
opener=$!
sleep 1

"$old" -f -c "$conf" -s "$work/old.state" -l "$work/old.log" -V 4 &
old_pid=$!
"$new" -f -c "$conf" -s "$work/new.state" -l "$work/new.log" -V 4 &
new_pid=$!
sleep 3   # both are up, their first scans and readahead done
old0=$(cpu_ms "$old_pid")
new0=$(cpu_ms "$new_pid")
t0=$(date +%s.%N)
echo go > "$work/go"
wait "$opener"
opener=
t1=$(date +%s.%N)
sleep 1   # the last events are read
old1=$(cpu_ms "$old_pid")
new1=$(cpu_ms "$new_pid")
kill -USR1 "$old_pid" "$new_pid"
sleep 1
kill -TERM "$old_pid" "$new_pid"
wait "$old_pid" "$new_pid" || true
old_pid= new_pid=

printf '%d opens of %d distinct files in %.2f s\n' "$opens" "$(wc -l < "$work/files")" \
	"$(echo "$t1 - $t0" | bc)"
for which in old new; do
	eval "c0=\$${which}0 c1=\$${which}1 bin=\$$which"
	printf '%s (%s): daemon CPU %d ms, %.2f us per open\n' "$which" "$bin" "$((c1 - c0))" \
		"$(echo "($c1 - $c0) * 1000 / $opens" | bc -l)"
	line=$(grep -o '[0-9]* events, .*queue overflows[^;]*\(; of the events.*\)\?' "$work/$which.log" |
		tail -n 1)
	events=$(echo "$line" | sed -n 's/^\([0-9]*\) events.*/\1/p')
	printf '    %s\n    %.2f us per event read (the daemon'"'"'s count since its start)\n' "$line" \
		"$(echo "($c1 - $c0) * 1000 / ${events:-1}" | bc -l)"
done
