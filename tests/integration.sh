#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End-to-end test of the built daemon against the real /proc, as root:
# it learns real programs, names them in its state file and its SIGUSR1
# dump, saves on SIGTERM, moves a corrupt state file aside, and neither
# hangs nor crashes when a learned file has become a FIFO.
#
# Exit status: 0 pass, 1 fail, 77 skipped (not root).

set -u

top_builddir=${top_builddir:-$(pwd)}
preload="$top_builddir/src/preload"
mapper="$top_builddir/tests/helpers/mapper"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (reads every process's /proc entries)"
	exit 77
fi

# On disk, under the build tree: page-cache behaviour needs a real file system.
work=$(mktemp -d "$top_builddir/integration.XXXXXX")
daemon_pid=
cleanup() {
	[ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null
	pkill -f "$work/bin/" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

fail() {
	echo "FAIL: $*"
	if [ -f "$work/log" ]; then
		echo "---- daemon log ----"
		tail -n 40 "$work/log"
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

mkdir -p "$work/bin" "$work/data"
# Two applications, one with a space in its name, each mapping its own data.
cp "$mapper" "$work/bin/app-a"
cp "$mapper" "$work/bin/app b"
head -c 3000000 /dev/urandom > "$work/data/a.bin"
head -c 2000000 /dev/urandom > "$work/data/b with space.bin"

cat > "$work/preload.conf" <<EOF
[model]
cycle = 2
minsize = 100000
memtotal = 100
memfree = 0
memcached = 0
[system]
exeprefix = $work/bin/;!/
mapprefix = $work/;/usr/;/lib;!/
autosave = 60
maxprocs = 4
EOF

start_daemon() {
	"$preload" -f -c "$work/preload.conf" -s "$work/state" -l "$work/log" -V 5 &
	daemon_pid=$!
	wait_for "$work/log" "preload .* started" 10 || fail "daemon did not start"
}

stop_daemon() {
	kill -TERM "$daemon_pid"
	wait "$daemon_pid"
	status=$?
	daemon_pid=
	[ "$status" = 0 ] || fail "daemon exited with status $status on SIGTERM"
}

run_app() { # NAME DATA SECONDS
	"$work/bin/$1" "$3" "$work/data/$2" &
}

# ---- 1. learn two programs that run together, either one first ----
start_daemon
for first in a b a; do
	if [ "$first" = a ]; then
		run_app app-a a.bin 5; x=$!
		sleep 2.5
		run_app "app b" "b with space.bin" 3; y=$!
	else
		run_app "app b" "b with space.bin" 5; x=$!
		sleep 2.5
		run_app app-a a.bin 3; y=$!
	fi
	wait "$x" "$y"
	sleep 4.5
done
kill -USR1 "$daemon_pid"
wait_for "$work/log" "configuration:" 5 || fail "no SIGUSR1 dump"
sleep 0.5
sed -n '/SIGUSR1/,/configuration:/p' "$work/log" > "$work/dump"
grep -q "model: time" "$work/dump" || fail "dump lacks the model summary"
grep -q "2 exes (0 running)" "$work/dump" || fail "dump does not count 2 exes, 0 running"
sed -n '/top predicted/,/configuration:/p' "$work/dump" > "$work/top"
grep -q "$work/bin/app-a\$" "$work/top" || fail "dump does not predict app-a"
grep -q "$work/bin/app b\$" "$work/top" || fail "dump does not predict 'app b'"
grep -q "cycle = 2" "$work/log" || fail "dump lacks the configuration"
cycles=$(sed -n 's/.*model: time .* \([0-9][0-9]*\) cycles since start$/\1/p' "$work/dump")
cpu='cpu: [0-9.]+ ms in '"$cycles"' cycles since start \(scan [0-9.]+, learn [0-9.]+, predict [0-9.]+, readahead [0-9.]+, other [0-9.]+ ms\); [0-9]+ readahead batches, [0-9]+ KB requested in [0-9]+ calls$'
grep -Eq "$cpu" "$work/dump" || fail "dump lacks the CPU time by stage over its $cycles cycles"
grep -Eq "cpu: .*\(scan 0\.0," "$work/dump" && fail "the scans of $cycles cycles took no CPU time"
stop_daemon
[ -f "$work/state" ] || fail "no state file after SIGTERM"
perm=$(stat -c %a "$work/state")
[ "$perm" = 600 ] || fail "state file mode is $perm, not 600"
grep -q "app-a" "$work/state" || fail "state file does not name app-a"
grep -q "app%20b" "$work/state" || fail "state file does not name 'app b'"
grep -q "b%20with%20space.bin" "$work/state" || fail "state file lacks the mapped data file"
grep -q "^MARKOV" "$work/state" || fail "state file has no chain"
echo "ok 1 - learned, dumped and saved two programs"

# ---- 2. a learned file replaced by a FIFO: no hang, no crash ----
rm -f "$work/data/a.bin"
mkfifo "$work/data/a.bin"
: > "$work/log"
start_daemon
sleep 5   # a few cycles of prediction and readahead over the FIFO
kill -USR1 "$daemon_pid"
wait_for "$work/log" "top predicted" 5 || fail "daemon stopped answering with a FIFO in place of a learned file"
kill -0 "$daemon_pid" || fail "daemon died with a FIFO in place of a learned file"
stop_daemon
grep -q "last readahead" "$work/log" || fail "no readahead report in the dump"
echo "ok 2 - a FIFO in place of a learned file neither hangs nor crashes the daemon"

# ---- 3. a corrupt state file is moved aside, not fatal ----
printf 'PRELOAD-STATE\t1\t100\nMAP\tgarbage\n' > "$work/state"
: > "$work/log"
"$preload" --once -c "$work/preload.conf" -s "$work/state" -l "$work/log" -V 4
status=$?
[ "$status" = 0 ] || fail "--once with a corrupt state exited $status"
ls "$work"/state.broken-* > /dev/null 2>&1 || fail "corrupt state was not moved aside"
grep -q "MAP	garbage" "$work"/state.broken-* || fail "the moved-aside file lost its contents"
head -n 1 "$work/state" | grep -q "^PRELOAD-STATE" || fail "no fresh state written after a corrupt one"
grep -q "cannot load state" "$work/log" || fail "no warning about the corrupt state"
echo "ok 3 - a corrupt state file is moved aside and replaced"

# ---- 4. a second daemon on the same state refuses to start ----
# A fresh log: start_daemon must not take step 3's "started" line for this one's.
: > "$work/log"
start_daemon
"$preload" -f -c "$work/preload.conf" -s "$work/state" -l "$work/log2" --once
status=$?
[ "$status" = 75 ] || fail "a second daemon on the same state exited $status, not 75"
stop_daemon
echo "ok 4 - a second daemon on the same state file is refused"

# ---- 5. memory floor: one line on pause, one on resume; idle I/O class ----
# MemAvailable is always below 100% of MemTotal: every cycle is paused.
cp "$work/preload.conf" "$work/preload.conf.orig"
echo "minavailable = 100" >> "$work/preload.conf"
: > "$work/log"
start_daemon
sleep 5   # two or three cycles
kill -USR1 "$daemon_pid"
wait_for "$work/log" "configuration:" 5 || fail "no SIGUSR1 dump while paused"
grep -q "prefetching: paused, MemAvailable is below 100% of MemTotal" "$work/log" ||
	fail "the dump does not show the pause"
n=$(grep -c "prefetching paused:" "$work/log")
[ "$n" = 1 ] || fail "$n pause lines over several paused cycles, not 1"
# The daemon and every thread it has run in the idle I/O class.
if command -v ionice > /dev/null; then
	for task in /proc/"$daemon_pid"/task/*; do
		class=$(ionice -p "${task##*/}" 2>/dev/null) || continue
		case "$class" in
		idle*) ;;
		*) fail "thread ${task##*/} runs in I/O class '$class', not idle" ;;
		esac
	done
fi
cp "$work/preload.conf.orig" "$work/preload.conf"
echo "minavailable = 0" >> "$work/preload.conf"
kill -HUP "$daemon_pid"
wait_for "$work/log" "prefetching resumed" 8 || fail "prefetching did not resume after SIGHUP"
sleep 3
n=$(grep -c "prefetching resumed" "$work/log")
[ "$n" = 1 ] || fail "$n resume lines, not 1"
kill -USR1 "$daemon_pid"
sleep 1
grep -q "prefetching: active, idle I/O class" "$work/log" || fail "the dump does not show active prefetching"
stop_daemon
cp "$work/preload.conf.orig" "$work/preload.conf"
echo "ok 5 - prefetching pauses below the memory floor and resumes, logged once each"

echo "integration: 5 passed, 0 failed"
exit 0
