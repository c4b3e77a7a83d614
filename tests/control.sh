#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# preloadctl against a real daemon (root):
#  1. every verb answers, in text and in JSON that parses; the exit codes
#     for a refused request, bad usage and a daemon that is not there;
#  2. a client of another user is refused: first by the socket's 0700
#     directory, then, with the directory and socket opened up for this
#     test only, by the daemon's SO_PEERCRED check, which logs it;
#  3. hostile clients do not stall the daemon: while 1,000 connections
#     that send nothing, one that sends 1 MiB without a newline and one
#     that stalls mid-line are held, SIGUSR1 is answered within 1 s and
#     another client gets `status` within 1 s.
#
# Exit status: 0 pass, 1 fail, 77 skipped (not root, no python3 or setpriv).

set -u

top_builddir=${top_builddir:-$(pwd)}
preload="$top_builddir/src/preload"
ctl="$top_builddir/src/tools/preloadctl"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (the socket is root's, and the test switches users)"
	exit 77
fi
for tool in python3 setpriv; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: $tool is not installed"
		exit 77
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/preload-control.XXXXXX")
sock="$work/run/control"
daemon_pid=
cleanup() {
	[ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

fail() {
	echo "FAIL: $*"
	if [ -f "$work/log" ]; then
		echo "---- daemon log ----"
		tail -n 30 "$work/log"
	fi
	exit 1
}

json_ok() { python3 -c 'import json, sys; json.load(sys.stdin)' <"$1"; }

"$preload" -f -c '' -s "$work/state" -l "$work/log" --control "$sock" -V 4 &
daemon_pid=$!
i=0
while [ ! -S "$sock" ]; do
	i=$((i + 1))
	[ "$i" -lt 100 ] || fail "no control socket after 10 s"
	sleep 0.1
done
[ "$(stat -c %a "$work/run")" = 700 ] || fail "the socket's directory is not 0700"

# ---- 1. every verb ----
for verb in status "top" "top 3" hits "explain /bin/sh" "explain /home/never/x" dump save reload; do
	# shellcheck disable=SC2086
	"$ctl" --socket "$sock" $verb >"$work/out" 2>"$work/err" ||
		fail "preloadctl $verb exited $?: $(cat "$work/err")"
	[ -s "$work/out" ] || fail "preloadctl $verb printed nothing"
	# shellcheck disable=SC2086
	"$ctl" --socket "$sock" --json $verb >"$work/out.json" 2>"$work/err" ||
		fail "preloadctl --json $verb exited $?: $(cat "$work/err")"
	json_ok "$work/out.json" || fail "preloadctl --json $verb: not JSON: $(head -c 300 "$work/out.json")"
	echo "ok: $verb (text and JSON)"
done
"$ctl" --socket "$sock" status >"$work/status"
grep -q '^prefetching: ' "$work/status" || fail "status has no prefetching line"
grep -q '^model: ' "$work/status" || fail "status has no model line"
"$ctl" --socket "$sock" dump | grep -q '^SIGUSR1: state dump$' || fail "dump is not the SIGUSR1 text"
"$ctl" --socket "$sock" explain /home/never/x | grep -q 'not-learned' || fail "explain: not not-learned"
"$ctl" --socket "$sock" --json explain /home/never/x |
	python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["reason"] == "not-learned", d;
assert [f["reason"] for f in d["findings"]] == ["not-learned", "prefix"], d' ||
	fail "explain --json: wrong reasons"
"$ctl" --socket "$sock" save >/dev/null && [ -s "$work/state" ] || fail "save wrote no state file"
# A path with a newline and an invalid byte travels intact and comes back escaped.
"$ctl" --socket "$sock" --json explain "$(printf '/usr/bin/a\nb\377')" |
	python3 -c 'import json, sys; d = json.load(sys.stdin);
assert d["program"] == "/usr/bin/a\nb\udcff", repr(d["program"])' ||
	fail "a hostile path did not round-trip through JSON"

"$ctl" --socket "$sock" frobnicate 2>/dev/null; rc=$?
[ "$rc" = 1 ] || fail "an unknown verb exited $rc, not 1"
"$ctl" --socket "$sock" hits /no/such/program 2>/dev/null; rc=$?
[ "$rc" = 1 ] || fail "hits of an unknown program exited $rc, not 1"
"$ctl" --socket "$sock" 2>/dev/null; rc=$?
[ "$rc" = 2 ] || fail "no verb exited $rc, not 2"
"$ctl" --socket "$work/nothing-here" status 2>"$work/err"; rc=$?
[ "$rc" = 3 ] || fail "no daemon exited $rc, not 3"
grep -q 'not running' "$work/err" || fail "no daemon: unclear message: $(cat "$work/err")"
# A server that never answers, then one that answers nonsense: exit 5.
python3 - "$work/fake" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(4)
silent, _ = s.accept()          # the first client waits in vain
time.sleep(3)
garbled, _ = s.accept()
garbled.recv(100)
garbled.sendall(b"HELLO\n")
garbled.close()
time.sleep(1)
PY
fake_pid=$!
i=0
while [ ! -S "$work/fake" ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
"$ctl" --socket "$work/fake" --timeout 1 status 2>"$work/err"; rc=$?
[ "$rc" = 5 ] || fail "a silent server: exit $rc, not 5"
grep -q 'no answer' "$work/err" || fail "a silent server: unclear message: $(cat "$work/err")"
sleep 2.5
"$ctl" --socket "$work/fake" --timeout 5 status 2>"$work/err"; rc=$?
[ "$rc" = 5 ] || fail "a garbled answer: exit $rc, not 5"
grep -q 'garbled' "$work/err" || fail "a garbled answer: unclear message: $(cat "$work/err")"
wait "$fake_pid"
echo "ok: exit codes"

# ---- 2. another user ----
cp "$ctl" "$work/preloadctl"
chmod 0755 "$work" "$work/preloadctl"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
as_nobody "$work/preloadctl" --socket "$sock" status 2>"$work/err"; rc=$?
[ "$rc" = 4 ] || fail "nobody through the 0700 directory exited $rc, not 4"
grep -q 'permission denied' "$work/err" || fail "unclear refusal: $(cat "$work/err")"
# For this test only: let the connection through, so that the daemon's own check refuses it.
chmod 0711 "$work/run"
chmod 0666 "$sock"
for n in 1 2 3; do
	as_nobody "$work/preloadctl" --socket "$sock" status >"$work/out" 2>"$work/err"; rc=$?
	[ "$rc" = 4 ] || fail "nobody past the directory exited $rc, not 4"
	[ -s "$work/out" ] && fail "nobody got an answer: $(cat "$work/out")"
done
grep -q 'permission denied: only root' "$work/err" || fail "unclear refusal: $(cat "$work/err")"
# Three refusals, one line: the rest are counted for the next one.
[ "$(grep -c 'refused a client of uid 65534' "$work/log")" = 1 ] ||
	fail "the refusals were not logged once: $(grep -c 'refused a client' "$work/log") lines"
chmod 0700 "$work/run"
chmod 0600 "$sock"
echo "ok: another user is refused (directory, then SO_PEERCRED)"

# ---- 3. hostile clients ----
python3 - "$sock" "$daemon_pid" "$work/log" "$ctl" <<'PY' || fail "hostile clients stalled the daemon"
import os, signal, socket, subprocess, sys, threading, time

path, pid, log, ctl = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

idle = []
for _ in range(1000):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect(path)
    except BlockingIOError:
        pass
    idle.append(s)

def flood():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(5)
    sent = 0
    try:
        while sent < 1 << 20:
            sent += s.send(b"x" * 65536)
    except OSError:
        pass
    print("flood: sent %d bytes before the daemon stopped reading" % sent)
    s.close()

flooder = threading.Thread(target=flood)
flooder.start()
stall = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
stall.connect(path)
stall.send(b"sta")
time.sleep(0.2)

ok = True
for round in range(3):
    before = open(log, "rb").read().count(b"SIGUSR1: state dump")
    start = time.monotonic()
    os.kill(pid, signal.SIGUSR1)
    while open(log, "rb").read().count(b"SIGUSR1: state dump") == before:
        if time.monotonic() - start > 1.0:
            break
        time.sleep(0.01)
    dump_s = time.monotonic() - start
    start = time.monotonic()
    r = subprocess.run([ctl, "--socket", path, "--timeout", "5", "status"], capture_output=True)
    status_s = time.monotonic() - start
    print("round %d: SIGUSR1 dump after %.3f s, status after %.3f s (exit %d)"
          % (round, dump_s, status_s, r.returncode))
    if dump_s > 1.0 or status_s > 1.0 or r.returncode != 0 or not r.stdout.startswith(b"prefetching: "):
        ok = False
flooder.join()
# The stalled client is dropped at its deadline (2 s), without an answer.
stall.settimeout(5)
got = stall.recv(100)
print("stalled client: closed with %r" % got)
if got != b"":
    ok = False
for s in idle:
    s.close()
sys.exit(0 if ok else 1)
PY
kill -0 "$daemon_pid" || fail "the daemon died"
"$ctl" --socket "$sock" status >/dev/null || fail "no status after the hostile clients"
echo "ok: hostile clients"

kill -TERM "$daemon_pid"
wait "$daemon_pid"; rc=$?
daemon_pid=
[ "$rc" = 0 ] || fail "the daemon exited $rc"
[ ! -e "$sock" ] || fail "the socket is left behind"
echo "PASS"
