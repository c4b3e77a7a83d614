#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The boot files signal and limit only what they mean to:
#  - data/preload.logrotate.in's postrotate script sends SIGHUP to the pid
#    in the pidfile if that is preload, or through systemctl to the unit's
#    main process if the unit runs, or else to root's processes running
#    the installed preload, and never to processes by name (any user can
#    start one called preload);
#  - data/preload.service.in raises LimitNOFILE= above fanotify's queue of
#    16,384 events, so that a read can take many events at once.
# The script runs with stand-ins: a copy of sleep named preload as the
# daemon and as another user's process of that name (run as nobody when
# this runs as root), and stub pkill, killall and systemctl in PATH that
# only record how they were called.
#
# Exit status: 0 pass, 1 fail.

set -u

top_srcdir=${top_srcdir:-$(pwd)}
logrotate="$top_srcdir/data/preload.logrotate.in"
unit="$top_srcdir/data/preload.service.in"

tmp=$(mktemp -d) || exit 1
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

failed=0
fail() {
	echo "FAIL: $*"
	failed=1
}

mkdir "$tmp/sbin" "$tmp/stubs"
cp "$(command -v sleep)" "$tmp/sbin/preload"
# nobody must be able to run it.
chmod 755 "$tmp" "$tmp/sbin" "$tmp/sbin/preload"
for tool in pkill killall; do
	printf '#!/bin/sh\necho "%s $*" >> "%s/calls"\n' "$tool" "$tmp" > "$tmp/stubs/$tool"
done
# is-active answers as STUB_ACTIVE says; kill is recorded.
cat > "$tmp/stubs/systemctl" <<STUB
#!/bin/sh
echo "systemctl \$*" >> "$tmp/calls"
case "\$*" in *is-active*) [ "\${STUB_ACTIVE:-0}" = 1 ] ;; esac
STUB
chmod +x "$tmp/stubs/"*

# The postrotate commands, with the pidfile and sbindir moved here.
script=$(sed -n '/^[[:space:]]*postrotate/,/^[[:space:]]*endscript/p' "$logrotate" | sed '1d;$d' |
	sed -e "s|/run/preload.pid|$tmp/preload.pid|g" -e "s|@sbindir@|$tmp/sbin|g")
[ -n "$script" ] || { echo "FAIL: no postrotate script in $logrotate"; exit 1; }

# Until the process $1 runs the stand-in (up to 2 s): $! is the forked
# shell until its exec, and the postrotate script, which checks
# /proc/PID/exe, would rightly leave it alone (a race lost under load).
execed() {
	for _ in $(seq 20); do
		[ "$(readlink "/proc/$1/exe")" = "$tmp/sbin/preload" ] && return 0
		sleep 0.1
	done
	return 1
}

# A process that dies of SIGHUP (sleep's default action), named preload;
# its pid in $started.
start_preload() {
	"$tmp/sbin/preload" 300 > /dev/null 2>&1 &
	started=$!
	pids="$pids $started"
	execed "$started"
}

# The same as another user, when we are root to make one.
start_other_users_preload() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/sbin/preload" 300 > /dev/null 2>&1 &
	else
		"$tmp/sbin/preload" 300 > /dev/null 2>&1 &
	fi
	started=$!
	pids="$pids $started"
	execed "$started"
}

alive() {
	kill -0 "$1" 2>/dev/null
}

# Waits up to 2 s for a signalled process to go.
gone() {
	for _ in $(seq 20); do
		alive "$1" || return 0
		sleep 0.1
	done
	return 1
}

run_postrotate() {
	: > "$tmp/calls"
	PATH="$tmp/stubs:$PATH" sh -c "$script"
}

no_name_kill() {
	if grep -q -E '^(pkill|killall)' "$tmp/calls"; then
		fail "$1: a process was signalled by name: $(cat "$tmp/calls")"
	fi
}

# Another user's program that happens to be called preload.
start_other_users_preload
other=$started

# 1. The pidfile names the daemon: it gets the HUP, nothing else does.
start_preload
daemon=$started
echo "$daemon" > "$tmp/preload.pid"
run_postrotate
gone "$daemon" || fail "pidfile: the daemon (pid $daemon) got no SIGHUP"
alive "$other" || fail "pidfile: another process named preload was signalled"
no_name_kill "pidfile"

# 2. A stale pidfile naming some other program: nobody is signalled.
sleep 300 > /dev/null 2>&1 &
stranger=$!
pids="$pids $stranger"
echo "$stranger" > "$tmp/preload.pid"
run_postrotate
alive "$stranger" || fail "stale pidfile: a process that is not preload was signalled"
alive "$other" || fail "stale pidfile: another process named preload was signalled"
no_name_kill "stale pidfile"

# 3. No pidfile, no unit running: nobody is signalled.
rm -f "$tmp/preload.pid"
run_postrotate
alive "$other" || fail "no pidfile: a process named preload was signalled"
no_name_kill "no pidfile"
if grep -q 'systemctl.* kill' "$tmp/calls"; then
	fail "no pidfile, unit inactive: systemctl kill was called"
fi

# 4. No pidfile, the unit runs: its main process, through systemctl.
STUB_ACTIVE=1 run_postrotate
grep -q -x 'systemctl kill --kill-who=main -s HUP preload.service' "$tmp/calls" ||
	fail "unit active: no 'systemctl kill --kill-who=main -s HUP preload.service' ($(cat "$tmp/calls"))"
alive "$other" || fail "unit active: another process named preload was signalled"
no_name_kill "unit active"

# 5. No pidfile, no unit: root's process running the installed preload
#    (a daemon started by hand) gets the HUP, another user's does not.
if [ "$(id -u)" = 0 ]; then
	start_preload
	daemon=$started
	run_postrotate
	gone "$daemon" || fail "started by hand: the daemon (pid $daemon) got no SIGHUP"
	alive "$other" || fail "started by hand: another user's process named preload was signalled"
	no_name_kill "started by hand"
else
	echo "SKIP: a daemon started by hand: needs root to be told from another user's process"
fi

# The unit's descriptor limit.
limit=$(sed -n 's/^LimitNOFILE=\([0-9][0-9]*\)$/\1/p' "$unit")
if [ -z "$limit" ]; then
	fail "$unit sets no numeric LimitNOFILE="
elif [ "$limit" -lt 16384 ]; then
	fail "$unit: LimitNOFILE=$limit is below fanotify's queue of 16384 events"
fi

[ $failed = 0 ] && echo "PASS: boot files"
exit $failed
