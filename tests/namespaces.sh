#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Programs in other mount namespaces, on real kernel objects, as root:
#
#   1. a bind mount in a private namespace (unshare -m) over a path that
#      exists here with other content;
#   2. a squashfs image, loop-mounted here, made the root of a program's
#      namespace (pivot_root, as snap-confine does with a base snap);
#   3. an overlayfs lower/upper/merged tree, mounted here, entered with
#      chroot (as a container engine without pivot_root does) and made the
#      root of a namespace (pivot_root);
#   4. a user namespace of nobody with a tmpfs over a prefix, holding
#      programs no path here reaches;
#   5. a systemd-nspawn container (--register=no --keep-unit) running a
#      program of a directory tree.
#
# For 1-3 and 5: the program runs beside a launcher; it must be learned by its
# real files (the state names the paths that reach them here, never the
# paths it saw), and once evicted, its data file must be read back while
# the launcher runs alone (mincore on the real file), while the file of
# the same name here stays cold. For 4: nothing is admitted, and the
# SIGUSR1 dump counts the programs and the drops.
#
# Exit status: 0 pass, 1 fail, 77 skipped (not root, or no unshare,
# mount namespaces, squashfs, loop devices, overlayfs or systemd-nspawn).

set -u

top_builddir=${top_builddir:-$(pwd)}
# PRELOAD: another build of the daemon to hold to the same cases.
preload=${PRELOAD:-$top_builddir/src/preload}
mapper="$top_builddir/tests/helpers/mapper"
pagecache="$top_builddir/tests/helpers/pagecache"

skip() {
	echo "SKIP: $*"
	exit 77
}

[ "$(id -u)" = 0 ] || skip "needs root (mounts, namespaces, every process's /proc)"
command -v unshare > /dev/null || skip "no unshare"
unshare -m true 2> /dev/null || skip "cannot make a mount namespace here"

# On disk, under the build tree: eviction needs a real file system. nobody
# must reach the user-namespace case's directory.
work=$(mktemp -d "$top_builddir/namespaces.XXXXXX")
chmod 755 "$work"
daemon_pid=
mounts=
cleanup() {
	[ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2> /dev/null
	for pid in $(cat "$work/pids" 2> /dev/null); do
		kill -9 "$pid" 2> /dev/null
	done
	for m in $mounts; do
		umount -l "$m" 2> /dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

fail() {
	echo "FAIL: $*"
	if [ -f "$work/log" ]; then
		echo "---- daemon log ----"
		tail -n 60 "$work/log"
	fi
	exit 1
}

# wait_for FILE PATTERN SECONDS: until grep finds PATTERN in FILE
wait_for() {
	i=0
	while [ "$i" -lt "$(($3 * 10))" ]; do
		grep -q -- "$2" "$1" 2> /dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# resident_percent FILE: how much of FILE is in the page cache
resident_percent() {
	"$pagecache" resident "$1" | awk '{ printf "%d", $2 ? 100 * $1 / $2 : 0 }'
}

# A tree a program can run in as its root: the mapper at $work/app/bin/app
# (a path that exists here too, with other content), its data at
# $work/app/data.bin, and the libraries it needs. tree DIR
tree() {
	mkdir -p "$1$work/app/bin" "$1/oldroot"
	cp "$mapper" "$1$work/app/bin/app"
	head -c 2000000 /dev/urandom > "$1$work/app/data.bin"
	for lib in $(ldd "$mapper" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'); do
		mkdir -p "$1$(dirname "$lib")"
		cp -L "$lib" "$1$lib"
	done
}

# The same names here, other files: the program's path as it sees it.
mkdir -p "$work/app/bin" "$work/bin"
head -c 1500000 /dev/urandom > "$work/app/bin/app"
head -c 2000000 /dev/urandom > "$work/app/data.bin"
cp "$mapper" "$work/bin/launcher"
head -c 200000 /dev/urandom > "$work/launcher.bin"

# No correlation weighting: a pair seen once already predicts.
cat > "$work/preload.conf" << EOF
[model]
cycle = 2
usecorrelation = false
minsize = 100000
memtotal = 100
memfree = 0
memcached = 0
[system]
exeprefix = $work/;!/
mapprefix = $work/;/usr/;/lib;!/
autosave = 600
maxprocs = 4
# The files are evicted with POSIX_FADV_DONTNEED, which no vmstat count sees.
trustvmstat = false
EOF

start_daemon() {
	: > "$work/log"
	rm -f "$work/state"
	"$preload" -f -c "$work/preload.conf" -s "$work/state" -l "$work/log" -V 5 &
	daemon_pid=$!
	wait_for "$work/log" "preload .* started" 10 || fail "daemon did not start"
}

stop_daemon() {
	kill -TERM "$daemon_pid"
	wait "$daemon_pid"
	daemon_pid=
}

save_state() {
	n=$(grep -c "state saved" "$work/log")
	kill -USR2 "$daemon_pid"
	i=0
	while [ "$(grep -c "state saved" "$work/log")" -le "$n" ]; do
		i=$((i + 1))
		[ "$i" -lt 50 ] || fail "no state saved after SIGUSR2"
		sleep 0.1
	done
}

# state_has SECONDS PATTERN...: saves until the state has every pattern.
state_has() {
	deadline=$(($(date +%s) + $1))
	shift
	while :; do
		save_state
		missing=
		for pattern in "$@"; do
			grep -q -- "$pattern" "$work/state" || missing=$pattern
		done
		[ -z "$missing" ] && return 0
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 1
	done
}

dump() {
	n=$(grep -c "configuration:" "$work/log")
	kill -USR1 "$daemon_pid"
	i=0
	while [ "$(grep -c "configuration:" "$work/log")" -le "$n" ]; do
		i=$((i + 1))
		[ "$i" -lt 50 ] || fail "no SIGUSR1 dump"
		sleep 0.1
	done
}

# check NAME REAL_PREFIX RUN...: the learning and prefetch test of one
# case. RUN starts the program (in the background, pid in $work/pids) as
# it sees itself at $work/app/bin/app with $work/app/data.bin; REAL_PREFIX
# is where its tree is here.
check() {
	name=$1
	real=$2
	shift 2
	start_daemon
	"$work/bin/launcher" 120 "$work/launcher.bin" &
	launcher=$!
	echo "$launcher" >> "$work/pids"
	sleep 3   # the launcher is admitted, alone
	"$@" &
	echo $! >> "$work/pids"
	app=$!
	state_has 20 "EXE.*file://$real$work/app/bin/app\$" "file://$real$work/app/data.bin\$" ||
		fail "$name: the state lacks the program by its real files ($real$work/app/...)"
	dump
	sed -n 's/.*\(mount namespaces: .*\)/  \1/p' "$work/log" | tail -n 1 > "$work/nsline"
	kill "$app" 2> /dev/null
	wait "$app" 2> /dev/null
	sleep 3   # a scan sees it stop
	save_state
	grep -q "file://$work/app/" "$work/state" &&
		fail "$name: the state names the paths the program saw: $(grep "file://$work/app/" "$work/state" | head -3)"
	"$pagecache" evict "$real$work/app/data.bin" "$work/app/data.bin" || fail "cannot evict"
	i=0
	while :; do
		r=$(resident_percent "$real$work/app/data.bin")
		[ "$r" -ge 90 ] && break
		i=$((i + 1))
		[ "$i" -lt 100 ] || fail "$name: the real data file is not prefetched after 10 s (${r}% resident)"
		sleep 0.1
	done
	sleep 2   # another prefetch or two
	h=$(resident_percent "$work/app/data.bin")
	[ "$h" -le 5 ] || fail "$name: the file of the same name here was read (${h}% resident)"
	kill "$launcher"
	wait "$launcher" 2> /dev/null
	: > "$work/pids"
	stop_daemon
	echo "ok - $name: learned by its real files, $real$work/app/data.bin prefetched (${r}%), $work/app/data.bin cold (${h}%)"
	cat "$work/nsline"
}

# CASES: the cases to run (default all: "1 2 3 4 5").
want() {
	case " ${CASES:-1 2 3 4 5} " in *" $1 "*) return 0 ;; esac
	return 1
}

passed=0
skipped=

# ---- 1. a bind mount over a path that exists here ----
if want 1; then
	tree "$work/real1"
	check "bind mount" "$work/real1" \
		unshare -m sh -c "mount --bind '$work/real1$work/app' '$work/app' && exec '$work/app/bin/app' 60 '$work/app/data.bin'"
	passed=$((passed + 1))
fi

# pivot ROOT: runs the program in a new namespace whose root is ROOT (a
# mount point here). unshare, sh and the program replace one another: the
# caller's $! is the program.
pivot() {
	exec unshare -m sh -c "cd '$1' && pivot_root . oldroot && exec '$work/app/bin/app' 60 '$work/app/data.bin'"
}

# ---- 2. a squashfs image as a program's root ----
if ! want 2; then
	:
elif ! command -v mksquashfs > /dev/null; then
	skipped="$skipped squashfs (no mksquashfs)"
else
	tree "$work/sqtree"
	mksquashfs "$work/sqtree" "$work/image.sqfs" -quiet -noappend > /dev/null || fail "mksquashfs failed"
	mkdir -p "$work/snap"
	if mount -t squashfs -o loop,ro "$work/image.sqfs" "$work/snap" 2> /dev/null; then
		mounts="$work/snap $mounts"
		check "squashfs root" "$work/snap" pivot "$work/snap"
		passed=$((passed + 1))
	else
		skipped="$skipped squashfs (cannot loop-mount an image)"
	fi
fi

# ---- 3. an overlay, entered with chroot and as a namespace's root ----
want 3 && tree "$work/ov/lower" && mkdir -p "$work/ov/upper" "$work/ov/work" "$work/ov/merged"
if ! want 3; then
	:
elif mount -t overlay overlay -o "lowerdir=$work/ov/lower,upperdir=$work/ov/upper,workdir=$work/ov/work" \
	"$work/ov/merged" 2> /dev/null; then
	mounts="$work/ov/merged $mounts"
	check "overlay chroot" "$work/ov/merged" \
		chroot "$work/ov/merged" "$work/app/bin/app" 60 "$work/app/data.bin"
	passed=$((passed + 1))
	check "overlay root" "$work/ov/merged" pivot "$work/ov/merged"
	passed=$((passed + 1))
else
	skipped="$skipped overlayfs (cannot mount an overlay)"
fi

# ---- 5. a systemd-nspawn container running a program ----
if ! want 5; then
	:
elif ! command -v systemd-nspawn > /dev/null; then
	skipped="$skipped systemd-nspawn (not installed)"
elif case "$work" in /tmp/*) true ;; *) false ;; esac; then
	# nspawn mounts a tmpfs of its own on the container's /tmp.
	skipped="$skipped systemd-nspawn (the build tree is under /tmp)"
else
	tree "$work/nspawn"
	mkdir -p "$work/nspawn/etc" "$work/nspawn/usr"
	: > "$work/nspawn/etc/os-release"
	check "systemd-nspawn" "$work/nspawn" \
		systemd-nspawn --register=no --keep-unit -q -D "$work/nspawn" \
		"$work/app/bin/app" 60 "$work/app/data.bin"
	passed=$((passed + 1))
fi

# ---- 4. nobody's user namespace, a tmpfs over a prefix ----
if ! want 4; then
	:
elif command -v setpriv > /dev/null &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups unshare -Urm true 2> /dev/null; then
	mkdir -p "$work/user/bin"
	cp "$mapper" "$work/user/app"
	chmod 755 "$work/user" "$work/user/bin" "$work/user/app"
	start_daemon
	setpriv --reuid=nobody --regid=nogroup --clear-groups unshare -Urm sh -c "
		mount -t tmpfs t '$work/user/bin' || exit 1
		for i in 1 2 3 4 5 6 7 8 9 10; do
			cp '$work/user/app' '$work/user/bin/evil'\$i
			'$work/user/bin/evil'\$i 8 /usr/bin/sh &
		done
		wait" &
	userns=$!
	echo "$userns" >> "$work/pids"
	sleep 6   # three cycles: scans see them, learn would have admitted them
	dump
	wait "$userns"
	save_state
	grep -q "file://$work/user/" "$work/state" &&
		fail "user namespace: programs no path here reaches were admitted: $(grep -c "^EXE.*$work/user/" "$work/state")"
	line=$(sed -n 's/.*\(mount namespaces: .*\)/\1/p' "$work/log" | tail -n 1)
	echo "$line" | grep -Eq "mount namespaces: (10|[1-9][0-9]+) processes in other namespaces" ||
		fail "user namespace: the dump does not count the 10 programs: $line"
	echo "$line" | grep -Eq "not-on-host [1-9]" ||
		fail "user namespace: the dump counts no path dropped as not on this host: $line"
	stop_daemon
	: > "$work/pids"
	echo "ok - user namespace: 10 programs on a private tmpfs, none admitted"
	echo "  $line"
	passed=$((passed + 1))
else
	skipped="$skipped user-namespace (nobody may not make one here)"
fi

echo "namespaces: $passed passed, 0 failed${skipped:+; skipped:$skipped}"
[ -z "$skipped" ] || [ "$passed" -gt 0 ] || exit 77
exit 0
