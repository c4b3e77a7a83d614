#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# systemd readiness without systemd: tests/notify-listen.py binds a
# datagram socket in systemd's place (an abstract name, as systemd uses
# for NOTIFY_SOCKET in some setups) and the daemon runs with
# NOTIFY_SOCKET pointing at it. The messages must arrive in order:
# READY=1 once the state is loaded; STATUS= after the first cycle;
# RELOADING=1 with MONOTONIC_USEC= on SIGHUP, then READY=1 again;
# STOPPING=1 on SIGTERM. Without NOTIFY_SOCKET the daemon sends nothing.
#
# Exit status: 0 pass, 1 fail, 77 skipped (no python3).

set -u

top_builddir=${top_builddir:-$(pwd)}
top_srcdir=${top_srcdir:-$(pwd)}
preload="$top_builddir/src/preload"
listen="$top_srcdir/tests/notify-listen.py"

if ! command -v python3 >/dev/null; then
	echo "SKIP: python3 is not installed"
	exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/preload-notify.XXXXXX")
daemon_pid=
listener_pid=
cleanup() {
	[ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null
	[ -n "$listener_pid" ] && kill "$listener_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

fail() {
	echo "FAIL: $*"
	echo "---- messages ----"
	cat "$work/messages"
	echo "---- daemon log ----"
	tail -n 20 "$work/log"
	exit 1
}

wait_for() {
	i=0
	while [ "$i" -lt "$(($3 * 10))" ]; do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

printf '[model]\ncycle = 2\n[system]\nlearnreads = false\nlearnexec = false\n' >"$work/conf"
name="@preload-notify-test-$$"
python3 "$listen" "$name" 30 >"$work/messages" &
listener_pid=$!
wait_for "$work/messages" '^listening$' 10 || fail "the listener did not start"

NOTIFY_SOCKET="$name" "$preload" -f -c "$work/conf" -s "$work/state" -l "$work/log" \
	--control '' -V 4 &
daemon_pid=$!
wait_for "$work/messages" '^READY=1$' 10 || fail "no READY=1"
# The first cycle's scan reads every process's maps: slow under the
# sanitizers on a busy machine, hence the margin.
wait_for "$work/messages" '^STATUS=' 30 || fail "no STATUS= after a cycle"
grep '^STATUS=' "$work/messages" | head -n 1 | grep -q 'programs, [0-9]* maps' ||
	fail "the STATUS= line has no model size"
kill -HUP "$daemon_pid"
wait_for "$work/messages" '^RELOADING=1|MONOTONIC_USEC=[0-9][0-9]*$' 10 || fail "no RELOADING=1"
# READY=1 again, after RELOADING=1.
sed -n '/^RELOADING=1/,$p' "$work/messages" | grep -q '^READY=1$' || {
	sleep 1
	sed -n '/^RELOADING=1/,$p' "$work/messages" | grep -q '^READY=1$'
} || fail "no READY=1 after the reload"
# STATUS= is sent only when it changes: a few cycles later there is still one.
sleep 5
statuses=$(grep -c '^STATUS=' "$work/messages")
distinct=$(grep '^STATUS=' "$work/messages" | sort -u | wc -l)
[ "$statuses" = "$distinct" ] || fail "STATUS= repeated an unchanged line ($statuses sent, $distinct distinct)"
kill -TERM "$daemon_pid"
wait "$daemon_pid"; rc=$?
daemon_pid=
[ "$rc" = 0 ] || fail "the daemon exited $rc"
wait_for "$work/messages" '^STOPPING=1$' 5 || fail "no STOPPING=1"
wait "$listener_pid"
listener_pid=
echo "---- messages ----"
cat "$work/messages"

# Without NOTIFY_SOCKET: the daemon runs and nothing is sent.
python3 "$listen" "$name" 4 >"$work/quiet" &
listener_pid=$!
wait_for "$work/quiet" '^listening$' 10 || fail "the listener did not start"
env -u NOTIFY_SOCKET "$preload" -f -c "$work/conf" -s "$work/state" -l "$work/log2" \
	--control '' -V 4 &
daemon_pid=$!
sleep 3
kill -TERM "$daemon_pid"
wait "$daemon_pid"
daemon_pid=
wait "$listener_pid"
listener_pid=
[ "$(cat "$work/quiet")" = listening ] || fail "messages without NOTIFY_SOCKET: $(cat "$work/quiet")"
echo "PASS"
