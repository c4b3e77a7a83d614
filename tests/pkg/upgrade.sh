#!/bin/bash
# tests/pkg/upgrade.sh [DEB]: the Debian package's upgrade and fresh-install
# test (root; it installs and purges packages on this machine).
#
# 1. upgrade: installs Debian's preload 0.6.4 (apt-get install preload),
#    changes /etc/preload.conf, lets 0.6.4 learn a few programs, and, with
#    0.6.4 still running, upgrades to DEB with dpkg -i. Checks that 0.6.4
#    was stopped and the new daemon imported its state, that the changed
#    conffile was kept, the init script's start/stop/status/reload/restart,
#    then remove and purge: purge leaves nothing of the package.
# 2. fresh: the same on a machine without preload.
#
# DEB defaults to $top_builddir/deb/preload_*_ARCH.deb ("make deb").
#
# The maintainer scripts start and stop the daemon through invoke-rc.d,
# which on a Docker-style machine is denied by /usr/sbin/policy-rc.d (exit
# 101) and, without a runlevel (PID 1 is neither sysvinit nor systemd), does
# not start anything. So that the test sees what a sysvinit machine does,
# it runs itself in a private mount namespace in which policy-rc.d allows
# and runlevel answers "N 2"; nothing changes for other processes.
# PRELOAD_PKG_POLICY=machine keeps the machine's policy instead: then the
# checks are that the scripts start nothing, and the test uses the init
# script itself.
# Prints PASS or FAIL for each check and exits 1 if any failed; 77 when it
# cannot run here (not root, no dpkg/apt, a preload already installed that
# it would destroy).
set -uo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C

started=$SECONDS
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
DAEMON=/usr/sbin/preload
STATE=/var/lib/preload/preload.state
LOG=/var/log/preload.log
INIT=/etc/init.d/preload

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (installs packages)"
if ! command -v dpkg > /dev/null || ! command -v apt-get > /dev/null; then
	skip "needs dpkg and apt-get"
fi
[ ! -d /run/systemd/system ] || skip "systemd runs this machine: the init-script checks assume it does not (tests/pkg/boot.sh tests the unit)"

if [ "${PRELOAD_PKG_POLICY:-sysv}" = sysv ] && [ -z "${PRELOAD_PKG_NS:-}" ]; then
	command -v unshare > /dev/null || skip "needs unshare (util-linux), or PRELOAD_PKG_POLICY=machine"
	PRELOAD_PKG_NS=1 exec unshare --mount --propagation private "$0" "$@"
fi
if [ -n "${PRELOAD_PKG_NS:-}" ]; then
	ns=$(mktemp -d /tmp/preload-pkg-ns.XXXXXX)
	printf '#!/bin/sh\nexit 0\n' > "$ns/policy-rc.d"
	chmod +x "$ns/policy-rc.d"
	if [ -e /usr/sbin/policy-rc.d ]; then
		mount --bind "$ns/policy-rc.d" /usr/sbin/policy-rc.d || skip "cannot mount in a private namespace"
	fi
	# /sbin/runlevel is often systemctl under another name: answer as
	# runlevel, and as systemctl for every other name.
	runlevel=$(readlink -f /sbin/runlevel)
	if [ -n "$runlevel" ] && [ -e "$runlevel" ] && ! /sbin/runlevel > /dev/null 2>&1; then
		cp "$runlevel" "$ns/real"
		# shellcheck disable=SC2016
		printf '#!/bin/sh\ncase "${0##*/}" in runlevel) echo "N 2" ;; *) exec %s "$@" ;; esac\n' "$ns/real" > "$ns/runlevel"
		chmod +x "$ns/runlevel"
		mount --bind "$ns/runlevel" "$runlevel" || skip "cannot mount in a private namespace"
	fi
	echo "NOTE: in a private mount namespace: policy-rc.d allows, runlevel says $(/sbin/runlevel)"
fi

deb=${1:-}
if [ -z "$deb" ]; then
	for f in "$top_builddir"/deb/preload_*_"$(dpkg --print-architecture)".deb; do deb=$f; done
fi
[ -f "$deb" ] || { echo "FAIL: no package to test: run make deb first, or pass its path"; exit 1; }
deb=$(readlink -f "$deb")
new_version=$(dpkg-deb -f "$deb" Version)

status=$(dpkg-query -W -f '${db:Status-Status}' preload 2> /dev/null)
case "$status" in
'' | not-installed) ;;
*) skip "preload is already installed here ($status): this test would purge it" ;;
esac

failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() {  # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
step() { echo "---- $* ($((SECONDS - started)) s)"; }

# The pids of daemons running the packaged binary, or the binary dpkg has
# replaced. Other preload processes on this machine (built trees) do not count.
pkg_pids() {
	local p exe
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2> /dev/null) || continue
		case "$exe" in
		"$DAEMON" | "$DAEMON (deleted)") echo "${p#/proc/}" ;;
		esac
	done
}
deleted_pids() {
	local p
	for p in $(pkg_pids); do
		[ "$(readlink "/proc/$p/exe" 2> /dev/null)" = "$DAEMON (deleted)" ] && echo "$p"
	done
}

[ -z "$(pkg_pids)" ] || skip "a $DAEMON runs here without its package"

workers=()
stop_workers() {
	local p
	for p in "${workers[@]}"; do kill "$p" 2> /dev/null; done
	workers=()
}
# Programs for the daemons to learn: real executables under /usr/bin
# (both versions' default exeprefix), larger than 0.6.4's minsize of 2 MB
# with their libraries, running for the whole test.
start_workers() {
	perl -e 'sleep 600' & workers+=($!)
	if [ -x /usr/bin/python3 ]; then
		/usr/bin/python3 -c 'import time; time.sleep(600)' & workers+=($!)
	fi
}

cleanup() {
	stop_workers
	if [ "$(dpkg-query -W -f '${db:Status-Status}' preload 2> /dev/null)" != not-installed ]; then
		echo "cleanup: purging preload"
		dpkg -P preload > /dev/null 2>&1
	fi
}
trap cleanup EXIT

install_deb() {
	if ! dpkg -i --force-confold "$deb"; then
		apt-get install -y -f
	fi
}

not_installed() {
	case "$(dpkg-query -W -f '${db:Status-Status}' preload 2> /dev/null)" in
	'' | not-installed) return 0 ;;
	*) return 1 ;;
	esac
}
# Whether invoke-rc.d lets the maintainer scripts start the daemon here.
may_start() {
	invoke-rc.d --quiet --query preload start > /dev/null 2>&1
	[ $? -eq 104 ]
}
version_is() { [ "$(dpkg-query -W -f '${Version}' preload 2> /dev/null)" = "$1" ]; }
init_status_is() {
	local rc
	"$INIT" status > /dev/null
	rc=$?
	[ "$rc" -eq "$1" ] || { echo "  $INIT status: $rc"; return 1; }
}
one_daemon() {
	local pids
	pids=$(pkg_pids | wc -l)
	[ "$pids" -eq 1 ] || { echo "  $pids daemons running: $(pkg_pids | tr '\n' ' ')"; return 1; }
	[ -z "$(deleted_pids)" ] || { echo "  a daemon runs a replaced binary"; return 1; }
	[ "$(cat /run/preload.pid 2> /dev/null)" = "$(pkg_pids)" ] || { echo "  /run/preload.pid does not name it"; return 1; }
}
no_daemon() { [ -z "$(pkg_pids)" ] || { echo "  still running: $(pkg_pids | tr '\n' ' ')"; return 1; }; }
# The exe count of the last "loaded state" line after line $1 of the log.
loaded_exes() {
	tail -n +"$1" "$LOG" 2> /dev/null | sed -n "s|.*loaded state from $STATE in .*: \([0-9]*\) exes.*|\1|p" | tail -n 1
}
log_lines() { wc -l < "$LOG" 2> /dev/null || echo 0; }
# The daemon runs at nice 15 in the idle I/O class: on a busy machine it
# may take seconds to get to a signal or to its first log lines.
wait_log() {  # wait_log FROM_LINE PATTERN [SECONDS]
	for _ in $(seq $((${3:-30} * 10))); do
		tail -n +"$1" "$LOG" 2> /dev/null | grep -q -- "$2" && return 0
		sleep 0.1
	done
	echo "  no \"$2\" in $LOG after line $1"
	return 1
}
new_format() { [ "$(head -c 13 "$STATE" 2> /dev/null)" = PRELOAD-STATE ]; }

# start, status, reload, stop (saves), start (loads), restart: the init
# script's control of the installed package's daemon.
init_control() {
	local from pid exes
	check "$INIT status: running (0)" init_status_is 0
	from=$(log_lines)
	check "$INIT reload: exit 0" "$INIT" reload
	check "reload: the daemon logs the SIGHUP" wait_log "$from" "SIGHUP: reopened the log"
	check "reload: the same daemon keeps running" one_daemon
	rm -f "$STATE"
	check "$INIT stop: exit 0" "$INIT" stop
	check "stop: no daemon left" no_daemon
	check "$INIT status: stopped (3)" init_status_is 3
	check "stop: the state was saved in the new format" new_format
	from=$(log_lines)
	check "$INIT start: exit 0" "$INIT" start
	check "start: one daemon, named by /run/preload.pid" one_daemon
	check "start: the saved state is loaded" wait_log "$from" "loaded state from $STATE"
	exes=$(loaded_exes "$from")
	echo "  loaded ${exes:-no} exes"
	pid=$(pkg_pids)
	check "$INIT restart: exit 0" "$INIT" restart
	check "restart: a new daemon" test "$(pkg_pids)" != "$pid"
	check "restart: one daemon" one_daemon
}

# remove keeps the conffiles and the learned state; purge leaves nothing.
remove_purge() {
	if may_start; then
		check "dpkg -r preload: exit 0" dpkg -r preload
		check "remove: prerm stopped the daemon" no_daemon
	else
		echo "NOTE: invoke-rc.d may not stop it here: stopping with the init script"
		"$INIT" stop
		check "dpkg -r preload: exit 0" dpkg -r preload
		check "remove: no daemon" no_daemon
	fi
	check "remove: $DAEMON is gone" test ! -e "$DAEMON"
	check "remove: the conffiles stay" test -f /etc/preload.conf -a -f /etc/default/preload
	check "remove: the learned state stays" test -s "$STATE"
	check "remove: dpkg says config-files" test "$(dpkg-query -W -f '${db:Status-Status}' preload)" = config-files
	check "dpkg -P preload: exit 0" dpkg -P preload
	check "purge: dpkg says not-installed" not_installed
	local left
	left=$(ls -d /etc/preload.conf* /etc/default/preload* /etc/init.d/preload* \
		/etc/logrotate.d/preload* /lib/systemd/system/preload.service \
		/etc/systemd/system/*/preload.service /etc/rc?.d/[SK][0-9][0-9]preload \
		/var/lib/systemd/deb-systemd-helper-enabled/*preload* \
		/var/lib/preload /var/log/preload.log* /run/preload.pid "$DAEMON" \
		/usr/share/doc/preload /usr/share/man/man8/preload.8.gz 2> /dev/null)
	check "purge: nothing of the package is left" test -z "$left"
	[ -z "$left" ] || echo "  left: $left"
}

# ---- 1. upgrade from Debian's 0.6.4 ----------------------------------------
step "upgrade: apt-get install preload (Debian's 0.6.4)"
apt-get install -y --no-install-recommends preload > /tmp/upgrade-apt.$$ 2>&1 || { cat /tmp/upgrade-apt.$$; rm -f /tmp/upgrade-apt.$$; echo "FAIL: apt-get install preload"; exit 1; }
rm -f /tmp/upgrade-apt.$$
old_version=$(dpkg-query -W -f '${Version}' preload)
echo "  installed preload $old_version"
case "$old_version" in
0.6.4-*) pass "Debian's preload 0.6.4 installed" ;;
*) fail "expected Debian's preload 0.6.4, got $old_version" ;;
esac

# A local change to a conffile that the package also changes: dpkg must
# keep it (--force-confold, what an unattended upgrade does) and put the
# new version beside it. cycle = 5 also makes 0.6.4 learn quickly.
"$INIT" stop > /dev/null
sed -i 's/^cycle = 20$/cycle = 5/' /etc/preload.conf
echo "# local change kept across the upgrade" >> /etc/preload.conf
check "0.6.4's preload.conf now has cycle = 5" grep -q '^cycle = 5$' /etc/preload.conf

step "upgrade: 0.6.4 learns for 20 s"
start_workers
"$INIT" start
sleep 20
old_pid=$(pkg_pids)
echo "  0.6.4 runs as pid ${old_pid:-none}"
check "0.6.4 runs" test -n "$old_pid"
# SIGUSR2 makes 0.6.4 save its state now.
kill -USR2 "$old_pid" 2> /dev/null
sleep 2
old_exes=$(grep -c "^EXE$(printf '\t')" "$STATE" 2> /dev/null)
echo "  0.6.4's state: ${old_exes:-0} EXE lines; header: $(head -n 1 "$STATE" 2> /dev/null)"
check "0.6.4 learned programs (EXE lines in its state)" test "${old_exes:-0}" -gt 0

step "upgrade: dpkg -i $(basename "$deb") while 0.6.4 runs"
from=$(log_lines)
install_deb
check "upgraded to $new_version" version_is "$new_version"
check "0.6.4 was stopped: no daemon runs a replaced binary" test -z "$(deleted_pids)"
if may_start; then
	check "postinst started the new daemon: one daemon" one_daemon
else
	check "invoke-rc.d denies: postinst started no daemon" no_daemon
	echo "NOTE: invoke-rc.d may not start it here: starting with the init script"
	"$INIT" start
	check "the init script started the new daemon: one daemon" one_daemon
fi
check "the new daemon loaded the 0.6.4 state" wait_log "$from" "loaded state from $STATE"
new_exes=$(loaded_exes "$from")
echo "  $(tail -n +"$from" "$LOG" | grep -m 1 "loaded state")"
# 0.6.4 saved again when the preinst stopped it, having learned more since
# SIGUSR2: the file the new daemon imported is still on disk, in 0.6.4's
# format, until the new daemon first saves.
if [ "$(head -c 8 "$STATE")" = "$(printf 'PRELOAD\t')" ]; then
	old_exes=$(grep -c "^EXE$(printf '\t')" "$STATE")
fi
check "import: all of 0.6.4's $old_exes exes came in (${new_exes:-none})" test "${new_exes:-0}" -gt 0 -a "${new_exes:-0}" = "$old_exes"
check "conffile kept: /etc/preload.conf still has cycle = 5" grep -q '^cycle = 5$' /etc/preload.conf
check "conffile kept: the local comment is still there" grep -q '^# local change kept across the upgrade$' /etc/preload.conf
check "the new preload.conf was put beside it (.dpkg-dist)" test -f /etc/preload.conf.dpkg-dist
check "unchanged conffile replaced: /etc/default/preload is the new one" grep -q '^MIN_MEMTOTAL_KB=' /etc/default/preload
check "unchanged conffile replaced: $INIT is the new one" grep -q '^running_pid()' "$INIT"
is_conffile() { dpkg-query -W -f '${Conffiles}\n' preload | grep -q "^ $1 [0-9a-f]*\$"; }
for f in /etc/preload.conf /etc/default/preload /etc/init.d/preload /etc/logrotate.d/preload; do
	check "$f is a conffile of the new package" is_conffile "$f"
done
check "the native unit is installed" test -f /lib/systemd/system/preload.service
check "preload(8) and preload.conf(5) are installed" test -f /usr/share/man/man8/preload.8.gz -a -f /usr/share/man/man5/preload.conf.5.gz
check "the state directory is root's only (0700)" test "$(stat -c %a /var/lib/preload)" = 700
check "the state directory's mode is recorded by dpkg" test "$(dpkg-deb -c "$deb" | awk '$6 == "./var/lib/preload/" { print $1 }')" = drwx------

step "upgrade: init script control"
init_control
step "upgrade: remove and purge"
stop_workers
remove_purge

# ---- 2. fresh install -------------------------------------------------------
step "fresh: dpkg -i $(basename "$deb")"
install_deb
check "installed $new_version" version_is "$new_version"
if may_start; then
	check "postinst started the daemon: one daemon" one_daemon
else
	check "invoke-rc.d denies: postinst started no daemon" no_daemon
	echo "NOTE: invoke-rc.d may not start it here: starting with the init script"
	"$INIT" start
	check "the init script started the daemon: one daemon" one_daemon
fi
check "no state yet: the daemon starts empty" test ! -s "$STATE"
step "fresh: init script control"
init_control
step "fresh: remove and purge"
remove_purge

step "done"
echo "upgrade.sh: $failures failed checks in $((SECONDS - started)) s"
[ "$failures" -eq 0 ]
