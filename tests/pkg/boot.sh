#!/bin/bash
# tests/pkg/boot.sh [DEB]: boots the Debian package's systemd unit for real
# (root; needs debootstrap, systemd-container and network for the first run).
#
# Debootstraps a minimal bookworm tree once (cached in $PRELOAD_BOOT_CACHE,
# default /var/cache/preload-boot/tree; delete it to rebuild), copies it,
# installs DEB in the copy, boots it with
#   systemd-nspawn --register=no --keep-unit -b -D COPY
# in the background and runs the checks inside with nsenter on the
# container's PID 1 (systemd-run --machine needs a registered machine):
# preload.service becomes active, answers systemctl reload (and preloadctl
# status where the package has it), learns a program started in the
# container (its maps, and its start-up reads where fanotify works), logs to
# the journal with priorities, saves its state on systemctl stop, and
# systemd-analyze security scores it at most 2.0. Then powers the container
# off.
#
# DEB defaults to $top_builddir/deb/preload_*_ARCH.deb ("make deb").
# Prints PASS or FAIL for each check and exits 1 if any failed; 77 when it
# cannot run here (not root, no systemd-nspawn or debootstrap).
set -uo pipefail
export LC_ALL=C

started=$SECONDS
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
cache=${PRELOAD_BOOT_CACHE:-/var/cache/preload-boot}
tree=$cache/tree
# The mirror debootstrap fetches from: the one this machine's apt uses
# (deb822 sources first, then the one-line format), so the test goes
# wherever the machine's package manager is allowed to go.
apt_mirror() {
	local uri
	uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -v -- '-security' | head -n 1)
	[ -n "$uri" ] || uri=$(awk '$1 == "deb" && $2 !~ /^\[/ && $2 !~ /-security/ { print $2; exit }' \
		/etc/apt/sources.list 2>/dev/null)
	echo "$uri"
}
mirror=${PRELOAD_BOOT_MIRROR:-$(apt_mirror)}

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root"
command -v systemd-nspawn > /dev/null || skip "needs systemd-nspawn (apt-get install -y systemd-container)"
command -v nsenter > /dev/null || skip "needs nsenter (util-linux)"
[ -n "$mirror" ] || skip "no Debian mirror in this machine's apt sources (set PRELOAD_BOOT_MIRROR)"
command -v python3 > /dev/null || skip "needs python3 to read the journal's JSON"

deb=${1:-}
if [ -z "$deb" ]; then
	for f in "$top_builddir"/deb/preload_*_"$(dpkg --print-architecture)".deb; do deb=$f; done
fi
[ -f "$deb" ] || { echo "FAIL: no package to test: run make deb first, or pass its path"; exit 1; }
deb=$(readlink -f "$deb")

failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() {  # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
step() { echo "---- $* ($((SECONDS - started)) s)"; }

# ---- the tree ---------------------------------------------------------------
if [ ! -x "$tree/lib/systemd/systemd" ]; then
	command -v debootstrap > /dev/null || skip "needs debootstrap (apt-get install -y debootstrap)"
	step "debootstrap bookworm into $tree (once)"
	mkdir -p "$cache"
	rm -rf "$tree.tmp"
	if ! debootstrap --variant=minbase \
		--include=systemd,systemd-sysv,dbus,libglib2.0-0,libproc2-0,procps \
		bookworm "$tree.tmp" "$mirror" > "$cache/debootstrap.log" 2>&1; then
		tail -n 20 "$cache/debootstrap.log"
		echo "FAIL: debootstrap (log: $cache/debootstrap.log)"
		exit 1
	fi
	mv "$tree.tmp" "$tree"
fi

# Debian's 0.6.4, for the upgrade under systemd (kept with the tree).
find_old_deb() {
	old_deb=
	for f in "$cache"/preload_0.6.4-*.deb; do [ -f "$f" ] && old_deb=$f; done
}
find_old_deb
if [ -z "$old_deb" ]; then
	(cd "$cache" && apt-get download preload > /dev/null 2>&1)
	find_old_deb
fi

work=$(mktemp -d /var/tmp/preload-boot.XXXXXX)
root=$work/root
nspawn_pid=
leader=
cleanup() {
	if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2> /dev/null; then
		[ -n "$leader" ] && nsenter -t "$leader" -a systemctl poweroff > /dev/null 2>&1
		for _ in $(seq 100); do kill -0 "$nspawn_pid" 2> /dev/null || break; sleep 0.2; done
		kill "$nspawn_pid" 2> /dev/null
		wait "$nspawn_pid" 2> /dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# A fresh copy of the tree with the package file PKG installed.
new_root() {  # new_root PKG
	rm -rf "$root"
	cp -a "$tree" "$root"
	# The container's hostname and machine id; no getty on the console.
	echo preload-boot > "$root/etc/hostname"
	: > "$root/etc/machine-id"
	chroot "$root" systemctl mask console-getty.service > /dev/null 2>&1
	cp "$1" "$root/tmp/install.deb"
	if ! chroot "$root" dpkg -i /tmp/install.deb > "$work/dpkg.log" 2>&1; then
		cat "$work/dpkg.log"
		echo "FAIL: dpkg -i $(basename "$1") in the tree"
		exit 1
	fi
	pass "installed preload $(chroot "$root" dpkg-query -W -f "\${Version}" preload) in the tree"
}

# The container's PID 1: the child of systemd-nspawn whose pid in its own
# namespace is 1. (Its /proc/PID/root reads "/": nspawn pivots into the tree.)
find_leader() {
	local p
	# shellcheck disable=SC2013 # the file is one line of pids
	for p in $(cat /proc/"$nspawn_pid"/task/*/children 2> /dev/null); do
		awk '$1 == "NSpid:" { exit ($NF == 1 ? 0 : 1) }' "/proc/$p/status" 2> /dev/null || continue
		echo "$p"
		return 0
	done
	return 1
}
in_ct() { nsenter -t "$leader" -a -- "$@"; }
# Polls for up to 30 s: the daemon runs at nice 15 in the idle I/O class,
# and on a busy machine may take seconds to get to a signal.
journal_has() {  # journal_has SINCE TEXT
	for _ in $(seq 60); do
		in_ct journalctl -u preload.service --since "$1" -o cat | grep -q -- "$2" && return 0
		sleep 0.5
	done
	return 1
}

boot() {
	step "boot: systemd-nspawn --register=no --keep-unit -b -D $root"
	# nspawn's own system call filter denies fanotify_init,
	# fanotify_mark and open_by_handle_at, which a machine booted on its
	# own allows: let them through, so that the unit's filter and
	# capabilities decide.
	systemd-nspawn --register=no --keep-unit --console=pipe -b -D "$root" \
		--system-call-filter='fanotify_init fanotify_mark open_by_handle_at' \
		< /dev/null > "$work/console.log" 2>&1 &
	nspawn_pid=$!
	leader=
	for _ in $(seq 150); do
		leader=$(find_leader) && break
		kill -0 "$nspawn_pid" 2> /dev/null || break
		sleep 0.2
	done
	if [ -z "$leader" ]; then
		cat "$work/console.log"
		echo "FAIL: the container did not start"
		exit 1
	fi
	local booted='' state=''
	for _ in $(seq 120); do
		state=$(in_ct systemctl is-system-running 2> /dev/null)
		case "$state" in
		running | degraded) booted=$state; break ;;
		esac
		sleep 0.5
	done
	echo "  system state: ${state:-unknown} after $((SECONDS - started)) s"
	check "the container booted (systemctl is-system-running: ${state:-none})" test -n "$booted"
	[ "$booted" = degraded ] && in_ct systemctl --failed --no-legend
}

power_off() {
	step "poweroff"
	in_ct systemctl poweroff > /dev/null 2>&1
	for _ in $(seq 300); do kill -0 "$nspawn_pid" 2> /dev/null || break; sleep 0.2; done
	if kill -0 "$nspawn_pid" 2> /dev/null; then
		in_ct systemctl list-jobs --no-pager 2>&1 | sed 's/^/  | /'
		fail "the container did not power off within 60 s"
		kill "$nspawn_pid"
	fi
	wait "$nspawn_pid"
	check "the container powered off cleanly" test $? -eq 0
	nspawn_pid=
}

# The daemons in the container that run a binary dpkg has replaced.
deleted_daemons() {
	# shellcheck disable=SC2016 # expanded by the shell in the container
	in_ct sh -c 'for p in /proc/[0-9]*; do [ "$(readlink $p/exe)" = "/usr/sbin/preload (deleted)" ] && echo ${p#/proc/}; done' 2> /dev/null
}
unit_is_native() {
	test "$(in_ct systemctl show -p FragmentPath --value preload.service)" = /lib/systemd/system/preload.service
}

# ---- 1. a fresh install --------------------------------------------------
step "fresh: copy the tree, install $(basename "$deb")"
new_root "$deb"
check "the unit is enabled (multi-user.target.wants)" test -L "$root/etc/systemd/system/multi-user.target.wants/preload.service"
boot

step "preload.service"
check "the native unit is loaded (/lib/systemd/system/preload.service)" unit_is_native
check "preload.service is active" test "$(in_ct systemctl is-active preload.service)" = active
in_ct systemctl show -p Type -p MainPID -p NRestarts -p ExecMainStartTimestamp preload.service | sed 's/^/  /'
main_pid=$(in_ct systemctl show -p MainPID --value preload.service)
check "it has not restarted" test "$(in_ct systemctl show -p NRestarts --value preload.service)" = 0
in_ct systemctl status --no-pager --lines=0 preload.service | sed 's/^/  | /'

# Programs to learn: perl reads its modules with read() while it starts
# (fanotify's read set) and maps libc and libperl (the maps scan).
step "workload: perl -MPOSIX in the container"
in_ct /usr/bin/perl -MPOSIX -MFcntl -e 'sleep 120' > /dev/null 2>&1 &
sleep 1

step "systemctl reload"
since=$(in_ct date '+%Y-%m-%d %H:%M:%S')
check "systemctl reload preload: exit 0" in_ct systemctl reload preload.service
sleep 1
check "reload: the daemon logs the SIGHUP" journal_has "$since" "SIGHUP: reopened the log"
check "reload: the same main process" test "$(in_ct systemctl show -p MainPID --value preload.service)" = "$main_pid"

ctl=$(in_ct sh -c 'command -v preloadctl' 2> /dev/null)
if [ -n "$ctl" ]; then
	step "preloadctl status"
	in_ct preloadctl status > "$work/ctl.out" 2>&1
	rc=$?
	sed 's/^/  | /' "$work/ctl.out"
	check "preloadctl status: exit 0" test "$rc" -eq 0
else
	echo "NOTE: this package has no preloadctl: its check is not run"
fi

step "learning: two cycles (45 s)"
sleep 45

step "after two cycles"
in_ct systemctl status --no-pager --lines=0 preload.service > "$work/status" 2>&1
sed 's/^/  | /' "$work/status"
check "systemctl status shows the daemon's STATUS= line" grep -q "^ *Status: " "$work/status"
if [ -n "$ctl" ]; then
	for verb in status "explain /usr/bin/perl"; do
		# shellcheck disable=SC2086 # the verb and its argument
		in_ct preloadctl $verb > "$work/ctl.out" 2>&1
		rc=$?
		echo "  preloadctl $verb:"
		sed 's/^/  | /' "$work/ctl.out"
		check "preloadctl $verb: exit 0" test "$rc" -eq 0
	done
fi

# The dump's count of fanotify events on the container's mounts (the
# daemon's sandbox is a copy of its namespace: most events are there).
since=$(in_ct date '+%Y-%m-%d %H:%M:%S')
in_ct kill -USR1 "$main_pid"
if journal_has "$since" "fanotify events of files on other namespaces"; then
	echo "  $(in_ct journalctl -u preload.service --since "$since" -o cat | grep -m 1 "identity: ")"
fi

step "systemctl stop"
state_file=$root/var/lib/preload/preload.state
before=$(stat -c %Y "$state_file" 2> /dev/null || echo 0)
since=$(in_ct date '+%Y-%m-%d %H:%M:%S')
check "systemctl stop preload: exit 0" in_ct systemctl stop preload.service
check "stop: inactive" test "$(in_ct systemctl show -p ActiveState --value preload.service)" = inactive
check "stop: result success" test "$(in_ct systemctl show -p Result --value preload.service)" = success
check "stop: the journal says the state was saved" journal_has "$since" "state saved to /var/lib/preload/preload.state"
check "stop: the state file was written" test "$(stat -c %Y "$state_file" 2> /dev/null || echo 0)" -gt "$before" -o "$before" = 0 -a -s "$state_file"
check "stop: the state directory is root's only (0700)" test "$(stat -c %a "$root/var/lib/preload")" = 700

# What the state says about perl: its maps (origin 0) and read set (1).
perl_idx=$(awk -F'\t' '$1 == "EXE" && $NF == "file:///usr/bin/perl" { print $2 }' "$state_file" 2> /dev/null)
origin_count() {
	awk -F'\t' -v e="$perl_idx" -v o="$1" '$1 == "EXEMAP" && $2 == e && $5 == o { n += $6 } END { print n + 0 }' "$state_file"
}
exes=$(awk -F'\t' '$1 == "EXE"' "$state_file" 2> /dev/null | wc -l)
echo "  state: $exes exes: $(awk -F'\t' '$1 == "EXE" { sub("file://", "", $NF); printf "%s ", $NF }' "$state_file" 2> /dev/null)"
check "learned /usr/bin/perl started in the container" test -n "$perl_idx"
mapped=$(origin_count 0)
read_set=$(origin_count 1)
echo "  perl: $mapped mapped ranges, $read_set ranges read at start-up"
check "perl's maps were learned" test "$mapped" -gt 0
watch_line=$(in_ct journalctl -u preload.service -o cat | grep -m 1 -e "fanotify" -e "cannot watch")
echo "  watch: $watch_line"
case "$watch_line" in
*"cannot watch"*)
	fail "fanotify does not work in the container, so no read set: $watch_line" ;;
*)
	# The unit's sandbox runs the daemon in a copy of the container's
	# mount namespace, whose mounts have ids of their own: perl's opens
	# lie on the container's mounts and must be found there.
	check "perl's start-up reads were learned (fanotify)" test "$read_set" -gt 0 ;;
esac
# nsenter forked it into the container: end it there.
in_ct pkill -x perl

step "journal priorities"
in_ct journalctl -u preload.service -o json --output-fields=MESSAGE,PRIORITY > "$work/journal.json"
python3 - "$work/journal.json" > "$work/priorities" << 'EOF'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    m = e.get("MESSAGE")
    if isinstance(m, str) and "PRIORITY" in e:
        print(e["PRIORITY"] + "\t" + m)
EOF
sed 's/^/  /' "$work/priorities" | head -n 12
prio_of() { awk -F'\t' -v p="$1" 'index($2, p) == 1 { print $1; exit }' "$work/priorities"; }
check "\"loaded state ...\" at info (6)" test "$(prio_of "loaded state from")" = 6
check "\"preload 0.7.0 started\" at notice (5)" test "$(prio_of "preload 0.7.0 started")" = 5
check "\"SIGHUP: ...\" at notice (5)" test "$(prio_of "SIGHUP: reopened the log")" = 5
check "\"state saved\" at info (6)" test "$(prio_of "state saved to")" = 6
no_raw_prefix() { ! grep -q "$(printf '\t')<[0-7]>" "$work/priorities"; }
check "no raw <N> prefix reached the journal" no_raw_prefix

step "systemd-analyze security"
in_ct systemd-analyze security --no-pager preload.service > "$work/security" 2>&1
score=$(sed -n 's/.*Overall exposure level for preload.service: \([0-9.]*\).*/\1/p' "$work/security")
# What still counts against it (the passing "+" or check-mark lines left out).
grep -v -e '^[+] ' -e '^✓ ' "$work/security" | sed 's/^/  | /'
echo "  exposure: ${score:-none}"
check "systemd-analyze security: ${score:-no score} <= 2.0" \
	awk -v s="${score:-99}" 'BEGIN { exit !(s <= 2.0) }'

power_off

# ---- 2. an upgrade from 0.6.4 under systemd ---------------------------------
if [ -z "$old_deb" ]; then
	fail "no preload 0.6.4 package (apt-get download preload failed): the upgrade under systemd was not tested"
else
	step "upgrade: copy the tree, install $(basename "$old_deb")"
	new_root "$old_deb"
	# Learn quickly, and a local change that the upgrade must keep.
	sed -i 's/^cycle = 20$/cycle = 5/' "$root/etc/preload.conf"
	boot
	check "0.6.4 runs under the unit generated from its init script" \
		test "$(in_ct systemctl show -p ActiveState -p SourcePath --value preload.service | tr '\n' ' ')" = "active /etc/init.d/preload "
	in_ct /usr/bin/perl -MPOSIX -e 'sleep 120' > /dev/null 2>&1 &
	sleep 20
	# nspawn mounts a tmpfs on the container's /tmp: put it elsewhere.
	cp "$deb" "$root/var/tmp/upgrade.deb"
	since=$(in_ct date '+%Y-%m-%d %H:%M:%S')
	step "upgrade: dpkg -i $(basename "$deb") in the running container"
	in_ct dpkg -i --force-confold /var/tmp/upgrade.deb > "$work/upgrade.log" 2>&1
	rc=$?
	sed 's/^/  | /' "$work/upgrade.log"
	check "dpkg -i: exit 0" test "$rc" -eq 0
	check "the native unit replaces the generated one" unit_is_native
	check "preload.service is active" test "$(in_ct systemctl is-active preload.service)" = active
	check "no 0.6.4 daemon is left running a replaced binary" test -z "$(deleted_daemons)"
	check "the new daemon loaded 0.6.4's state" journal_has "$since" "loaded state from /var/lib/preload/preload.state"
	line=$(in_ct journalctl -u preload.service --since "$since" -o cat | grep -m 1 "loaded state from")
	echo "  $line"
	exes=$(echo "$line" | sed -n 's/.*: \([0-9]*\) exes.*/\1/p')
	check "import: ${exes:-no} exes (> 0)" test "${exes:-0}" -gt 0
	check "conffile kept: cycle = 5" grep -q '^cycle = 5$' "$root/etc/preload.conf"
	check "the state directory is root's only (0700)" test "$(stat -c %a "$root/var/lib/preload")" = 700
	in_ct pkill -x perl
	power_off
fi

step "done"
echo "boot.sh: $failures failed checks in $((SECONDS - started)) s"
[ "$failures" -eq 0 ]
