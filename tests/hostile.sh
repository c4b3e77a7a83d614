#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The hostile suite: what an unprivileged user (nobody) can do to the
# root daemon through fanotify and a file system that stops answering.
# Each scenario runs its own daemon (-f, a temporary state, fanotify on,
# `ulimit -n 1024` as under a unit without LimitNOFILE) on a tmpfs that
# holds everything the daemon watches, so that every event counted is
# one the scenario made:
#  a. a program whose ELF interpreter lies in a hung FUSE mount
#     (tests/helpers/hangfs) is run: the daemon still answers SIGUSR1
#     within 1 s, and SIGTERM saves and exits within 5 s;
#  b. an event flood: 10,000 opens of distinct files are all accounted
#     for (read, or counted as lost), then 100,000 opens in about a
#     second: SIGUSR1 answered within 1 s meanwhile, and the daemon holds
#     as many descriptors afterwards as before;
#  c. a file system mounted after the start, then unmounted and mounted
#     again: starts of a program on it are seen each time (re-marked);
#  d. a learned file whose directory then became a mount that stops
#     answering (a user's FUSE mount over a directory of theirs): a
#     daemon started on that state checks the learned file's identity
#     (the sweep) and, when nobody starts the program again, probes its
#     learned set's residency; neither may hold the main loop: SIGUSR1
#     within 1 s, SIGTERM saves and exits within 5 s;
#     `preloadctl explain` of the program meanwhile probes the same set:
#     it is answered (without the figures), and never from the main loop;
#  e. the same with netfs = true: the lookups run on workers with a
#     deadline and are abandoned (explain says "not-probed");
#  f. with netfs = true, a program reads a file of a FUSE mount at
#     start-up and the mount stops answering before its start-up window
#     ends: learning the window (an open and a residency query of each
#     file read) runs on a worker with a deadline, not in the main loop.
#  g. with netfs = true, a FUSE mount under the watched tree hangs before
#     the daemon starts (its start-up marking meets it), and nobody opens
#     a file on it while it hangs; then it answers again, nobody opens the
#     file while the daemon is stopped (SIGSTOP), and the server stops
#     answering before the daemon reads that event (the kernel opens the
#     file for the reader of a descriptor group): the daemon starts,
#     answers SIGUSR1 within 1 s throughout, says its netfs reader is
#     stuck, and SIGTERM saves and exits within 5 s (the network/FUSE
#     group is marked and read by a thread of its own, never joined);
#     SIGHUP meanwhile, with the configuration as it was, with a key
#     that remakes the watcher, then netfs off and on, then learnreads
#     and learnexec both off (no watcher) and on again, starts no second
#     reader thread or fanotify group beside the stuck one, and the dump
#     says that the re-marking waits for it.
#  h. with netfs = true, a program learned from a FUSE mount whose reads
#     then stall (hangfs --reads-only: lookups and opens still answer)
#     starts again with its file evicted: the launch readahead of its
#     learned set waits in a read past its 10 s without progress;
#     SIGUSR1 is answered within 1 s throughout, and SIGTERM saves and
#     exits within 5 s (it waits 2 s for the batch).
# A table of the numbers (worst SIGUSR1 latency, TERM to exit, peak RSS,
# descriptors) is printed at the end.
#
# Needs root, /dev/fuse, fusermount3, a C compiler, perl and setpriv;
# hangfs is built when libfuse3-dev is installed (Debian: apt-get
# install fuse3 libfuse3-dev). PRELOAD= names another daemon binary and
# HANGFS= and MAPPER= other helpers (to run this suite against an older
# build of the daemon); SCENARIOS= runs some only ("a d"); USR1_CAP= and
# TERM_CAP= (5 and 8 s) are how long a signal's effect is waited for
# before the time is reported as ">CAP" (raise them to see how late an
# older build answers: hangfs lets go after 30 s).
#
# Exit status: 0 pass, 1 fail, 77 skipped.

set -u

top_builddir=${top_builddir:-$(pwd)}
preload=${PRELOAD:-$top_builddir/src/preload}
hangfs=${HANGFS:-$top_builddir/tests/helpers/hangfs}
mapper=${MAPPER:-$top_builddir/tests/helpers/mapper}
pagecache=${PAGECACHE:-$top_builddir/tests/helpers/pagecache}
preloadctl=${PRELOADCTL:-$top_builddir/src/tools/preloadctl}
cc=${CC:-cc}
usr1_cap=${USR1_CAP:-5}
term_cap=${TERM_CAP:-8}

skip() {
	echo "SKIP: $*"
	exit 77
}

[ "$(id -u)" = 0 ] || skip "needs root (fanotify, mounts)"
[ -x "$hangfs" ] || skip "hangfs not built (apt-get install fuse3 libfuse3-dev, then configure)"
[ -x "$mapper" ] || skip "tests/helpers/mapper not built (make check builds it)"
[ -x "$pagecache" ] || skip "tests/helpers/pagecache not built (make check builds it)"
scenarios=${SCENARIOS:-"a b c d e f g h"}
wants() {
	case " $scenarios " in *" $1 "*) return 0 ;; esac
	return 1
}
[ -c /dev/fuse ] || skip "no /dev/fuse"
for tool in fusermount3 setpriv perl timeout "$cc"; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done

# In the background, call nobody_bg: a function run with & is a subshell
# whose setpriv child a kill of $! would leave running.
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}
nobody_bg() {
	exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

work=$(mktemp -d /tmp/preload-hostile.XXXXXX)
chmod 755 "$work"
fs="$work/fs"         # a tmpfs: the only file system the daemon watches
hang="$fs/hang"       # the FUSE mount that stops answering
daemon_pid=
hang_pid=
uhang_pid=
fhang_pid=
ghang_pid=
hhang_pid=
bg_pids=
failed=0
table=

cleanup() {
	# First let every request go, so that nothing below can hang.
	[ -n "$hang_pid" ] && kill -USR2 "$hang_pid" 2>/dev/null
	[ -n "$uhang_pid" ] && kill -USR2 "$uhang_pid" 2>/dev/null
	[ -n "$fhang_pid" ] && kill -USR2 "$fhang_pid" 2>/dev/null
	[ -n "$ghang_pid" ] && kill -USR2 "$ghang_pid" 2>/dev/null
	[ -n "$hhang_pid" ] && kill -USR2 "$hhang_pid" 2>/dev/null
	[ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null
	for p in $bg_pids; do
		kill -9 "$p" 2>/dev/null
	done
	if grep -q " $hang " /proc/self/mountinfo 2>/dev/null; then
		fusermount3 -u -z "$hang" 2>/dev/null || umount -l "$hang" 2>/dev/null
	fi
	[ -n "$hang_pid" ] && kill -TERM "$hang_pid" 2>/dev/null
	if grep -q " $fs/u " /proc/self/mountinfo 2>/dev/null; then
		fusermount3 -u -z "$fs/u" 2>/dev/null || umount -l "$fs/u" 2>/dev/null
	fi
	[ -n "$uhang_pid" ] && kill -TERM "$uhang_pid" 2>/dev/null
	if grep -q " $fs/f " /proc/self/mountinfo 2>/dev/null; then
		fusermount3 -u -z "$fs/f" 2>/dev/null || umount -l "$fs/f" 2>/dev/null
	fi
	[ -n "$fhang_pid" ] && kill -TERM "$fhang_pid" 2>/dev/null
	if grep -q " $fs/g " /proc/self/mountinfo 2>/dev/null; then
		fusermount3 -u -z "$fs/g" 2>/dev/null || umount -l "$fs/g" 2>/dev/null
	fi
	[ -n "$ghang_pid" ] && kill -TERM "$ghang_pid" 2>/dev/null
	if grep -q " $fs/h " /proc/self/mountinfo 2>/dev/null; then
		fusermount3 -u -z "$fs/h" 2>/dev/null || umount -l "$fs/h" 2>/dev/null
	fi
	[ -n "$hhang_pid" ] && kill -TERM "$hhang_pid" 2>/dev/null
	for m in "$fs/late" "$fs/flood" "$fs"; do
		grep -q " $m " /proc/self/mountinfo 2>/dev/null && umount -l "$m" 2>/dev/null
	done
	rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

now() {
	date +%s.%N
}

# since T0: seconds from T0 to now, two decimals
since() {
	awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'
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

mount_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o mode=755,size=64m hostile "$1"
}

# A daemon older than the control socket (36f5084) is started without
# it; scenarios d and e then report that explain did not answer.
control_opt="--control $work/control"
"$preload" --help 2>/dev/null | grep -q -- --control || control_opt=

# start_daemon NAME: a daemon watching $fs, its log in $work/NAME.log, its
# state in $work/NAME.state (kept from a previous daemon of the same NAME);
# $model_conf adds lines to [model]
model_conf=
system_conf=
start_daemon() {
	log="$work/$1.log"
	cat >"$work/preload.conf" <<EOF
[model]
cycle = 2
$model_conf
[system]
exeprefix = $fs/;$fs/late/;!/
mapprefix = $fs/;$fs/flood/;$fs/late/;!/
autosave = 600
$system_conf
EOF
	: >"$log"
	(ulimit -n 1024; exec "$preload" -f -c "$work/preload.conf" -s "$work/$1.state" \
		-l "$log" -V 5 $control_opt) &
	daemon_pid=$!
	wait_for "$log" "preload .* started" 10 || { echo "FAIL: daemon did not start"; exit 1; }
	wait_for "$log" "fanotify on\|maps scanner" 5 || { echo "FAIL: nothing about fanotify"; exit 1; }
	grep -q "maps scanner" "$log" && skip "fanotify is not available: $(grep 'maps scanner' "$log")"
	# The first cycle ran: the daemon is in its loop.
	sleep 0.5
}

# usr1 CAP: seconds until the dump's last part is logged (">CAP" if not within CAP)
usr1() {
	n=$(grep -c "configuration:" "$log")
	t0=$(now)
	kill -USR1 "$daemon_pid"
	while [ "$(grep -c "configuration:" "$log")" -le "$n" ]; do
		if awk -v t="$(since "$t0")" -v c="$1" 'BEGIN { exit !(t > c) }'; then
			echo ">$1"
			return
		fi
		sleep 0.02
	done
	since "$t0"
}

# term CAP: sets $term_s to the seconds from SIGTERM until the daemon said
# it stopped and exited (">CAP" if not within CAP, and then it is killed),
# and $saved to "saved" if it saved its state on the way ("-" if not)
term() {
	t0=$(now)
	kill -TERM "$daemon_pid"
	while :; do
		st=$(awk '/^State:/ { print $2 }' "/proc/$daemon_pid/status" 2>/dev/null)
		if { [ -z "$st" ] || [ "$st" = Z ]; } && grep -q "preload stopped" "$log"; then
			term_s=$(since "$t0")
			break
		fi
		if awk -v t="$(since "$t0")" -v c="$1" 'BEGIN { exit !(t > c) }'; then
			term_s=">$1"
			kill -9 "$daemon_pid"
			break
		fi
		sleep 0.02
	done
	wait "$daemon_pid" 2>/dev/null
	daemon_pid=
	saved=-
	grep -q "state saved" "$log" && saved=saved
}

peak_rss() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$daemon_pid/status"
}

fds() {
	ls "/proc/$daemon_pid/fd" | wc -l
}

# net_threads: the daemon's netfs reader threads
net_threads() {
	grep -lx preload-netfs /proc/"$daemon_pid"/task/*/comm 2>/dev/null | wc -l
}

# fanotify_groups: the daemon's fanotify descriptors
fanotify_groups() {
	ls -l "/proc/$daemon_pid/fd" | grep -c 'anon_inode:\[fanotify\]'
}

# watch_field N: from the last dump's watch line, "N events, M starts" -> field N (1 or 2)
watch_field() {
	grep "watch: " "$log" | tail -n 1 |
		sed -n "s/.* \([0-9][0-9]*\) events, \([0-9][0-9]*\) starts.*/\\$1/p"
}

# num TIME: a measured time as a number (">5", not answered within 5 s, is above 5)
num() {
	case $1 in
	\>*) echo "${1#>}.001" ;;
	*) echo "$1" ;;
	esac
}

# over TIME LIMIT: whether a measured time exceeds the limit
over() {
	awk -v t="$(num "$1")" -v c="$(num "$2")" 'BEGIN { exit !(t > c) }'
}

# worst A B: the longer of two measured times
worst() {
	if over "$2" "$1"; then echo "$2"; else echo "$1"; fi
}

check() {
	if [ "$1" = ok ]; then
		echo "ok - $2"
	else
		echo "not ok - $2"
		failed=1
	fi
}

# state_size NAME: bytes of $work/NAME.state, "-" if there is none
state_size() {
	stat -c %s "$work/$1.state" 2>/dev/null || echo -
}

# row SCENARIO USR1 TERM RSS STATE FDS VERDICT
row() {
	table="$table$(printf '%-28s %-10s %-12s %-10s %-10s %-12s %s' "$@")
"
}

# hung_verdict NAME LABEL WORST RSS FDS [BROKEN]: after term, the checks of
# a hung-mount scenario (SIGUSR1 within 1 s, saved and stopped within 5 s)
# and its row; BROKEN=yes fails it for a reason checked by the caller
hung_verdict() {
	if over "$3" 1; then check fail "$1: SIGUSR1 answered within 1 s ($3 s)"; else check ok "$1: SIGUSR1 answered within 1 s ($3 s)"; fi
	if over "$term_s" 5 || [ "$saved" != saved ]; then check fail "$1: SIGTERM: saved and stopped within 5 s ($term_s s, $saved)"; else check ok "$1: SIGTERM: saved and stopped within 5 s ($term_s s)"; fi
	verdict=pass
	{ over "$3" 1 || over "$term_s" 5 || [ "$saved" != saved ] || [ "${6:-no}" = yes ]; } &&
		verdict=FAIL
	row "$2" "$3" "$term_s $saved" "$4" "$(state_size "$1")" "$5" "$verdict"
}

mount_tmpfs "$fs"
mkdir -p "$fs/bin" "$work/src"

# ---- a. an interpreter in a hung mount ---------------------------------------
if wants a; then

# The loader of this shell, copied to the source of the FUSE mount.
ld=$(awk '$6 ~ /\/ld[-.][^\/]*$/ { print $6; exit }' /proc/self/maps)
[ -n "$ld" ] || skip "cannot find the dynamic loader"
cp "$ld" "$work/src/ld.so"
mkdir -p "$hang"
# The helper lets hung requests go by itself after 30 s, whatever happens
# here, ends after 300 s, and auto_unmount unmounts it when it ends. It is
# signalled directly (a wrapper such as timeout(1) would die of SIGUSR1).
"$hangfs" --release-after 30 --lifetime 300 "$work/src" "$hang" -o allow_other,auto_unmount \
	2>"$work/hangfs.log" &
hang_pid=$!
wait_for /proc/self/mountinfo " $hang " 5 || { echo "FAIL: hangfs did not mount"; exit 1; }

printf 'int main(void) { return 0; }\n' >"$work/prog.c"
"$cc" -o "$fs/bin/prog" "$work/prog.c" -Wl,--dynamic-linker="$hang/ld.so" ||
	skip "cannot link a program with --dynamic-linker"
chmod 755 "$fs/bin/prog"
as_nobody "$fs/bin/prog" || { echo "FAIL: the program does not run from the live mount"; exit 1; }

start_daemon a
fds_a0=$(fds)
kill -USR1 "$hang_pid"
sleep 0.2
# nobody's exec now waits for the interpreter; the daemon sees the program's exec.
timeout -s KILL 60 setpriv --reuid=nobody --regid=nogroup --clear-groups "$fs/bin/prog" &
bg_pids="$bg_pids $!"
sleep 1
worst_a=$(usr1 "$usr1_cap")
worst_a=$(worst "$worst_a" "$(usr1 "$usr1_cap")")
rss_a=$(peak_rss)
fds_a1=$(fds)
term "$term_cap"
term_a=$term_s
saved_a=$saved
kill -USR2 "$hang_pid"
if over "$worst_a" 1; then check fail "a: SIGUSR1 answered within 1 s ($worst_a s)"; else check ok "a: SIGUSR1 answered within 1 s ($worst_a s)"; fi
if over "$term_a" 5 || [ "$saved_a" != saved ]; then check fail "a: SIGTERM: saved and stopped within 5 s ($term_a s, $saved_a)"; else check ok "a: SIGTERM: saved and stopped within 5 s ($term_a s)"; fi
# The FUSE mount lies under the watched prefix: it must not be marked.
if grep "watch: " "$log" | tail -n 1 | grep -q " 1 network/FUSE file system not watched"; then
	unwatched=yes
	check ok "a: the FUSE mount under the prefix is not watched"
else
	unwatched=no
	check fail "a: the FUSE mount under the prefix is not watched (the dump does not say so)"
fi
verdict=pass
{ over "$worst_a" 1 || over "$term_a" 5 || [ "$saved_a" != saved ] || [ "$unwatched" = no ]; } &&
	verdict=FAIL
row "a. interpreter in hung mount" "$worst_a" "$term_a $saved_a" "$rss_a" "$(state_size a)" \
	"$fds_a0/$fds_a1" "$verdict"

fi

# ---- b. an event flood ------------------------------------------------------------
if wants b; then

mount_tmpfs "$fs/flood"
perl -e 'my $d = shift; for my $i (0 .. 9999) { open(my $f, ">", "$d/f$i") or die "$d/f$i: $!"; }' \
	"$fs/flood" || { echo "FAIL: cannot make the flood's files"; exit 1; }
start_daemon b
fds_b0=$(fds)
worst_b=$(usr1 "$usr1_cap")
events0=$(watch_field 1)

# 10,000 opens of distinct files: no event merges, and the queue (16,384) holds them all.
as_nobody perl -e 'my $d = shift; for my $i (0 .. 9999) { open(my $f, "<", "$d/f$i") or die; }' \
	"$fs/flood"
sleep 1.5
worst_b=$(worst "$worst_b" "$(usr1 "$usr1_cap")")
events1=$(watch_field 1)
seen=$((events1 - events0))
if [ "$seen" -eq 10000 ]; then
	check ok "b: 10,000 opens, 10,000 events accounted for"
else
	check fail "b: 10,000 opens, $seen events accounted for"
fi

# 100,000 opens in about a second (two openers of 50,000); SIGUSR1 while they run.
t0=$(now)
flood_pids=
for half in 0 1; do
	as_nobody perl -e 'my ($d, $h) = @ARGV; for my $r (1 .. 5) { for my $i (0 .. 9999) {
		open(my $f, "<", "$d/f$i") or die; } }' "$fs/flood" "$half" &
	flood_pids="$flood_pids $!"
done
bg_pids="$bg_pids $flood_pids"
sleep 0.2
worst_b=$(worst "$worst_b" "$(usr1 "$usr1_cap")")
for p in $flood_pids; do
	wait "$p"
done
flood_s=$(since "$t0")
sleep 1.5
worst_b=$(worst "$worst_b" "$(usr1 "$usr1_cap")")
events2=$(watch_field 1)
lost=$(grep "watch: " "$log" | tail -n 1 | sed -n 's/.*lost: \(.*failed reads\).*/\1/p')
overflows=$(grep "watch: " "$log" | tail -n 1 | sed -n 's/.* \([0-9][0-9]*\) queue overflows.*/\1/p')
echo "# b: 100,000 opens in $flood_s s: $((events2 - events1)) events read, ${overflows:-?} queue overflows; lost: ${lost:-not reported}"
if [ -n "$lost" ]; then
	check ok "b: lost events are reported ($lost)"
else
	check fail "b: lost events are reported (the dump does not say)"
fi
rss_b=$(peak_rss)
fds_b1=$(fds)
if [ "$fds_b1" -eq "$fds_b0" ]; then
	check ok "b: descriptors back to $fds_b0 after the flood"
else
	check fail "b: descriptors $fds_b0 before the flood, $fds_b1 after"
fi
if over "$worst_b" 1; then check fail "b: SIGUSR1 answered within 1 s ($worst_b s)"; else check ok "b: SIGUSR1 answered within 1 s ($worst_b s)"; fi
term "$term_cap"
term_b=$term_s
saved_b=$saved
if over "$term_b" 5 || [ "$saved_b" != saved ]; then check fail "b: SIGTERM: saved and stopped within 5 s ($term_b s, $saved_b)"; else check ok "b: SIGTERM: saved and stopped within 5 s ($term_b s)"; fi
verdict=pass
{ over "$worst_b" 1 || over "$term_b" 5 || [ "$saved_b" != saved ] || [ "$seen" -ne 10000 ] ||
  [ -z "$lost" ] ||
  [ "$fds_b1" -ne "$fds_b0" ]; } && verdict=FAIL
row "b. event flood" "$worst_b" "$term_b $saved_b" "$rss_b" "$(state_size b)" "$fds_b0/$fds_b1" \
	"$verdict ($seen/10000 seen)"
umount -l "$fs/flood"

fi

# ---- c. a file system mounted after the start -----------------------------------
if wants c; then

mkdir -p "$fs/late"
start_daemon c
fds_c0=$(fds)
worst_c=$(usr1 "$usr1_cap")
starts0=$(watch_field 2)

# run_late: the program copied onto the late mount, run three times by nobody
run_late() {
	cp /bin/true "$fs/late/prog"
	chmod 755 "$fs/late/prog"
	sleep 0.5   # the mount table's change is taken up after 100 ms
	for i in 1 2 3; do
		as_nobody "$fs/late/prog"
	done
	sleep 0.5
}

mount_tmpfs "$fs/late"
run_late
worst_c=$(worst "$worst_c" "$(usr1 "$usr1_cap")")
starts1=$(watch_field 2)
grep "watch: " "$log" | tail -n 1 | sed 's/^/# c: /'
if [ $((starts1 - starts0)) -ge 3 ]; then
	check ok "c: 3 starts on a file system mounted after the start: $((starts1 - starts0)) seen"
else
	check fail "c: 3 starts on a file system mounted after the start: $((starts1 - starts0)) seen"
fi

umount "$fs/late"
mount_tmpfs "$fs/late"
run_late
worst_c=$(worst "$worst_c" "$(usr1 "$usr1_cap")")
starts2=$(watch_field 2)
if [ $((starts2 - starts1)) -ge 3 ]; then
	check ok "c: 3 starts after it was mounted again: $((starts2 - starts1)) seen"
else
	check fail "c: 3 starts after it was mounted again: $((starts2 - starts1)) seen"
fi
# SIGHUP marks again too.
marked() {
	grep "watch: " "$log" | tail -n 1 | sed -n 's/.*; marked \([0-9][0-9]*\) time.*/\1/p'
}
marked0=$(marked)
kill -HUP "$daemon_pid"
sleep 0.5
worst_c=$(worst "$worst_c" "$(usr1 "$usr1_cap")")
marked1=$(marked)
if [ -n "$marked0" ] && [ "${marked1:-0}" -eq $((marked0 + 1)) ]; then
	hup=ok
else
	hup=fail
fi
check "$hup" "c: SIGHUP marks the file systems again (marked ${marked0:-?}, then ${marked1:-?} times)"
rss_c=$(peak_rss)
fds_c1=$(fds)
term "$term_cap"
term_c=$term_s
saved_c=$saved
if over "$worst_c" 1; then check fail "c: SIGUSR1 answered within 1 s ($worst_c s)"; else check ok "c: SIGUSR1 answered within 1 s ($worst_c s)"; fi
if over "$term_c" 5 || [ "$saved_c" != saved ]; then check fail "c: SIGTERM: saved and stopped within 5 s ($term_c s, $saved_c)"; else check ok "c: SIGTERM: saved and stopped within 5 s ($term_c s)"; fi
verdict=pass
{ over "$worst_c" 1 || over "$term_c" 5 || [ "$saved_c" != saved ] || [ $((starts1 - starts0)) -lt 3 ] ||
  [ $((starts2 - starts1)) -lt 3 ] || [ "$hup" = fail ]; } && verdict=FAIL
row "c. mount after start" "$worst_c" "$term_c $saved_c" "$rss_c" "$(state_size c)" "$fds_c0/$fds_c1" \
	"$verdict ($((starts1 - starts0))+$((starts2 - starts1))/6 starts)"
umount -l "$fs/late"
fi

# ---- d. a learned file in a mount that stops answering --------------------------
if wants d || wants e; then
# $fs/u is a directory of nobody's; the program maps $fs/u/lib.so from it.
mkdir -p "$fs/u" "$work/usrc"
head -c 1048576 /dev/urandom >"$fs/u/lib.so"
cp "$fs/u/lib.so" "$work/usrc/lib.so"
chmod 644 "$fs/u/lib.so" "$work/usrc/lib.so"
chown nobody "$fs/u"
cp "$mapper" "$fs/bin/mapper"
chmod 755 "$fs/bin/mapper"
model_conf="minsize = 0"

# First the daemon learns the program and saves it.
start_daemon d
nobody_bg "$fs/bin/mapper" 7 "$fs/u/lib.so" &
bg_pids="$bg_pids $!"
sleep 7
term "$term_cap"
if grep -q "u/lib.so" "$work/d.state" 2>/dev/null; then
	check ok "d: the program and its map of $fs/u/lib.so are learned"
	learned=yes
else
	check fail "d: the program and its map of $fs/u/lib.so are learned ($saved)"
	learned=no
fi

# Then $fs/u becomes a FUSE mount (of the same file) that stops answering.
"$hangfs" --release-after 30 --lifetime 300 "$work/usrc" "$fs/u" -o allow_other,auto_unmount \
	2>"$work/uhangfs.log" &
uhang_pid=$!
wait_for /proc/self/mountinfo " $fs/u " 5 || { echo "FAIL: hangfs did not mount $fs/u"; exit 1; }
cp "$work/d.state" "$work/e.state"

# hung_learned NAME NETFS: a daemon started on that state, with netfs = NETFS
# (false: the path is known to lead into a FUSE mount and is not looked up;
# true: the lookups run on workers, and are abandoned at their deadline)
hung_learned() {
	system_conf="netfs = $2"
	if [ "$2" = true ]; then
		# Marked while it answers: marking a hung FUSE mount holds the
		# daemon's start (watch.c), which this scenario does not test.
		start_daemon "$1"
		kill -USR1 "$uhang_pid"
	else
		kill -USR1 "$uhang_pid"
		sleep 0.2
		start_daemon "$1"
	fi
	system_conf=
	broken=no
	fds0=$(fds)
	# nobody starts the program again (it waits for its file): its learned set is probed.
	timeout -s KILL 60 setpriv --reuid=nobody --regid=nogroup --clear-groups "$fs/bin/mapper" 1 \
		"$fs/u/lib.so" >/dev/null 2>&1 &
	bg_pids="$bg_pids $!"
	sleep 0.5
	# explain probes the learned set too; its answer waits, the daemon does not.
	explain_t0=$(now)
	(timeout -s KILL 10 "$preloadctl" -s "$work/control" --json explain mapper \
		>"$work/$1.explain" 2>&1; echo "rc=$? after $(since "$explain_t0") s" \
		>>"$work/$1.explain") &
	bg_pids="$bg_pids $!"
	worst_h=$(usr1 "$usr1_cap")
	# Two cycles: the sweep reaches both of the model's maps; then the probe's deadline.
	for i in 1 2 3 4; do
		sleep 1
		worst_h=$(worst "$worst_h" "$(usr1 "$usr1_cap")")
	done
	wait_for "$work/$1.explain" "^rc=" 6
	explained=$(tail -n 1 "$work/$1.explain")
	case "$explained" in
	"rc=0 "*) check ok "$1: explain answered ($explained)" ;;
	*) check fail "$1: explain answered ($explained)"; broken=yes ;;
	esac
	if [ "$2" = true ]; then
		if grep -q '"not-probed"' "$work/$1.explain"; then
			check ok "$1: explain says its set was not probed"
		else
			check fail "$1: explain says its set was not probed: $(head -c 300 "$work/$1.explain")"
			broken=yes
		fi
	fi
	rss_h=$(peak_rss)
	fds1=$(fds)
	grep "file-system jobs:" "$log" | tail -n 1 | sed "s/^.*\(file-system jobs:\)/# $1: \1/"
	term "$term_cap"
	kill -USR2 "$uhang_pid"
	if [ "$2" = true ]; then onoff=on; else onoff=off; fi
	[ "$learned" = no ] && broken=yes
	hung_verdict "$1" "$1. hung learned, netfs $onoff" "$worst_h" "$rss_h" "$fds0/$fds1" "$broken"
}
hung_learned d false
wants e && hung_learned e true
fi

# ---- f. a start-up window whose file's mount stops answering --------------------
if wants f; then
mkdir -p "$fs/f" "$work/fsrc"
head -c 262144 /dev/urandom >"$work/fsrc/data.bin"
chmod 644 "$work/fsrc/data.bin"
cp "$pagecache" "$fs/bin/reader"
chmod 755 "$fs/bin/reader"
"$hangfs" --release-after 30 --lifetime 300 "$work/fsrc" "$fs/f" -o allow_other,auto_unmount \
	2>"$work/fhangfs.log" &
fhang_pid=$!
wait_for /proc/self/mountinfo " $fs/f " 5 || { echo "FAIL: hangfs did not mount $fs/f"; exit 1; }
model_conf="minsize = 0"
system_conf="netfs = true"
start_daemon f
system_conf=
fds0=$(fds)
# The program reads the file at once and lives 3 s; its open event is
# read while the mount answers, then the mount hangs: the window ends
# (the program exits) with a file of the hung mount to learn.
nobody_bg "$fs/bin/reader" read 3 "$fs/f/data.bin" &
bg_pids="$bg_pids $!"
sleep 1
kill -USR1 "$fhang_pid"
worst_f=$(usr1 "$usr1_cap")
for i in 1 2 3 4 5 6; do
	sleep 1
	worst_f=$(worst "$worst_f" "$(usr1 "$usr1_cap")")
done
rss_f=$(peak_rss)
fds1=$(fds)
grep "file-system jobs:" "$log" | tail -n 1 | sed "s/^.*\(file-system jobs:\)/# f: \1/"
term "$term_cap"
kill -USR2 "$fhang_pid"
hung_verdict f "f. hung window, netfs on" "$worst_f" "$rss_f" "$fds0/$fds1"
fi

# ---- g. netfs = true, a FUSE mount that hangs before the start ------------------
if wants g; then
mkdir -p "$fs/g" "$work/gsrc"
head -c 65536 /dev/urandom >"$work/gsrc/data.bin"
chmod 644 "$work/gsrc/data.bin"
"$hangfs" --release-after 30 --lifetime 300 "$work/gsrc" "$fs/g" -o allow_other,auto_unmount \
	2>"$work/ghangfs.log" &
ghang_pid=$!
wait_for /proc/self/mountinfo " $fs/g " 5 || { echo "FAIL: hangfs did not mount $fs/g"; exit 1; }
kill -USR1 "$ghang_pid"
sleep 0.2
system_conf="netfs = true"
start_daemon g
system_conf=
fds0=$(fds)
# nobody opens a file of the hung mount (the open waits for the server).
timeout -s KILL 60 setpriv --reuid=nobody --regid=nogroup --clear-groups cat "$fs/g/data.bin" \
	>/dev/null 2>&1 &
bg_pids="$bg_pids $!"
worst_g=$(usr1 "$usr1_cap")
sleep 1
worst_g=$(worst "$worst_g" "$(usr1 "$usr1_cap")")
# A server that dies with opens queued: the open that made an event
# succeeded, but the kernel opens the file again for the reader of the
# event, and that open waits. Made certain by stopping the daemon while
# nobody opens the file and the server then stops answering.
kill -USR2 "$ghang_pid"
sleep 0.5
kill -STOP "$daemon_pid"
as_nobody cat "$fs/g/data.bin" >/dev/null || echo "# g: nobody's open failed"
kill -USR1 "$ghang_pid"
sleep 0.2
kill -CONT "$daemon_pid"
sleep 0.2
worst_g=$(worst "$worst_g" "$(usr1 "$usr1_cap")")
# Past the reader's deadline (2 s) while it waits in its read.
for i in 1 2 3; do
	sleep 1
	worst_g=$(worst "$worst_g" "$(usr1 "$usr1_cap")")
done
stuck=no
if grep "watch: " "$log" | tail -n 1 | grep -q "netfs reader STUCK"; then
	stuck=yes
	check ok "g: the dump says the netfs reader is stuck"
else
	check fail "g: the dump says the netfs reader is stuck: $(grep "watch: " "$log" | tail -n 1)"
fi
# SIGHUP while the reader is stuck: once as is (the file systems are
# marked again), once with a key that remakes the watcher, then with
# netfs off and on again, then with no watcher and one again. None may start a second reader (a thread, and
# a fanotify group) beside the stuck one; the new marking waits for it,
# and the dump says so.
threads0=$(net_threads)
groups0=$(fanotify_groups)
kill -HUP "$daemon_pid"
sleep 0.5
worst_g=$(worst "$worst_g" "$(usr1 "$usr1_cap")")
printf 'startupwindow = 4\n' >>"$work/preload.conf"
kill -HUP "$daemon_pid"
sleep 0.5
worst_g=$(worst "$worst_g" "$(usr1 "$usr1_cap")")
# netfs turned off, then on again, while the reader still waits.
sed -i 's/^netfs = true$/netfs = false/' "$work/preload.conf"
kill -HUP "$daemon_pid"
sleep 0.5
sed -i 's/^netfs = false$/netfs = true/' "$work/preload.conf"
kill -HUP "$daemon_pid"
sleep 0.5
worst_g=$(worst "$worst_g" "$(usr1 "$usr1_cap")")
# Both watched features off (no watcher at all), then on again.
printf 'learnreads = false\nlearnexec = false\n' >>"$work/preload.conf"
kill -HUP "$daemon_pid"
sleep 0.5
sed -i 's/^learnreads = false$/learnreads = true/; s/^learnexec = false$/learnexec = true/' "$work/preload.conf"
kill -HUP "$daemon_pid"
sleep 0.5
worst_g=$(worst "$worst_g" "$(usr1 "$usr1_cap")")
threads1=$(net_threads)
groups1=$(fanotify_groups)
if [ "$threads0" -eq 1 ] && [ "$threads1" -eq 1 ] && [ "$groups1" -eq "$groups0" ]; then
	hup_g=ok
else
	hup_g=fail
fi
check "$hup_g" "g: SIGHUP while stuck starts no second reader (netfs threads $threads0, then $threads1; fanotify groups $groups0, then $groups1)"
if grep "watch: " "$log" | tail -n 1 | grep -q "netfs reader STUCK.*marking deferred"; then
	check ok "g: the dump says the re-marking waits for the stuck reader"
else
	check fail "g: the dump says the re-marking waits for the stuck reader: $(grep "watch: " "$log" | tail -n 1)"
	hup_g=fail
fi
rss_g=$(peak_rss)
fds1=$(fds)
term "$term_cap"
kill -USR2 "$ghang_pid"
broken=no
{ [ "$stuck" = no ] || [ "$hup_g" = fail ]; } && broken=yes
hung_verdict g "g. hung before start, netfs" "$worst_g" "$rss_g" "$fds0/$fds1" "$broken"
fi

# ---- h. a readahead batch that waits in a read of a stalled mount ----------------
if wants h; then
mkdir -p "$fs/h" "$work/hsrc"
head -c 1048576 /dev/urandom >"$work/hsrc/lib.so"
chmod 644 "$work/hsrc/lib.so"
cp "$mapper" "$fs/bin/hmapper"
chmod 755 "$fs/bin/hmapper"
"$hangfs" --release-after 30 --lifetime 300 --reads-only "$work/hsrc" "$fs/h" \
	-o allow_other,auto_unmount 2>"$work/hhangfs.log" &
hhang_pid=$!
wait_for /proc/self/mountinfo " $fs/h " 5 || { echo "FAIL: hangfs did not mount $fs/h"; exit 1; }
model_conf="minsize = 0"
system_conf="netfs = true"
start_daemon h
system_conf=
fds0=$(fds)
# The program is learned (its map of the file) while the mount answers.
as_nobody "$fs/bin/hmapper" 5 "$fs/h/lib.so" >/dev/null
sleep 2.5
"$pagecache" evict "$fs/h/lib.so"
kill -USR1 "$hhang_pid"
sleep 0.2
# It starts again, mapping another file this time (its own read of the
# stalled one would hold a page the daemon's probe of its learned set
# waits for, and no batch would start): its launch readahead reads the
# learned file, and waits.
timeout -s KILL 60 setpriv --reuid=nobody --regid=nogroup --clear-groups "$fs/bin/hmapper" 1 \
	"$fs/bin/hmapper" >/dev/null 2>&1 &
bg_pids="$bg_pids $!"
worst_h=$(usr1 "$usr1_cap")
# Past the batch's deadline, 10 s without progress (the batch is
# abandoned when another takes its place: tests/check_readahead.c).
for i in 1 2 3 4 5 6 7 8 9 10 11; do
	sleep 1
	worst_h=$(worst "$worst_h" "$(usr1 "$usr1_cap")")
done
batches=$(grep "launch readahead:" "$log" | tail -n 1 | sed -n 's/.*launch readahead: \([0-9]*\) batches.*/\1/p')
grep "readahead deadline:" "$log" | tail -n 1 | sed 's/^.*\(readahead deadline:\)/# h: \1/'
broken=no
if [ "${batches:-0}" -ge 1 ]; then
	check ok "h: a launch readahead of the stalled file started ($batches batches)"
else
	check fail "h: a launch readahead of the stalled file started (${batches:-?} batches)"
	broken=yes
fi
rss_h=$(peak_rss)
fds1=$(fds)
term "$term_cap"
kill -USR2 "$hhang_pid"
hung_verdict h "h. stalled readahead, netfs" "$worst_h" "$rss_h" "$fds0/$fds1" "$broken"
fi

echo
printf '%-28s %-10s %-12s %-10s %-10s %-12s %s\n' scenario "USR1 (s)" "TERM (s)" "RSS (KB)" \
	"state (B)" "fds" result
printf '%s' "$table"
exit $failed
