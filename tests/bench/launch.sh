#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The launch benchmark (root): how much of a program's start-up each
# prefetcher saves, measured on real launches from the page cache state a
# daemon leaves behind. See doc/benchmarks.md, "The launch benchmark".
#
#   launch.sh [-n LAUNCHES] [-c CYCLE] [-d DAEMONS] [-s SET] [-t STEPS]
#             [-b PERCENT] [-D IOPS:MBPS|none] [-S SEED] [-a APPS] [-l LIST]
#             [-v LEVEL] [-M PREFIXES] [-u] [-T] [-o DIR]
#
#   -n  measured launches per daemon (16)
#   -c  the daemons' cycle in seconds (2)
#   -d  daemons, comma-separated, in the order they run:
#       none (no daemon: the cold and warm launches), 0.6.4 (Debian's
#       /usr/sbin/preload), this ($top_builddir/src/preload), ideal
#       (no daemon; in each prefetch window, every file of B's manifest
#       is read whole with cat: what a prefetcher that knew the next
#       program would cache, the ceiling for any of them), base
#       ($base_builddir/src/preload: another build of this preload, to
#       compare two versions in one run)
#       (none,0.6.4,this)
#   -s  synthetic: copies of bench-app (/usr/local/sbin/preload-bench/appK)
#       that map and read generated files under /usr/local/lib/preload-bench
#       (the default); real: the programs of LIST, timed by wall time;
#       ns: perl in an overlayfs container entered with chroot and python3
#       in a squashfs image made its namespace's root (pivot_root), each
#       tree holding copies of the host's files, timed by wall time
#   -t  training steps, one program started per step (48)
#   -b  the memory budget, percent of MemTotal, the same for both daemons
#       (1; preload.conf memtotal = PERCENT, memfree = memcached = 0)
#   -D  the slow disk: IOPS requests and MBPS MB per second (300:100),
#       or none: the disks as they are. Synthetic programs live on a file
#       system on a loop device throttled so; real programs stay on the
#       root file system, and the daemon and the programs run in a blkio
#       cgroup whose reads from the root disk are throttled so
#   -S  seed of the world, the training walk and the launches (1)
#   -a  synthetic programs (8)
#   -l  the real programs (tests/bench/real.list)
#   -v  this daemon's verbosity (4); 10 logs every prediction and
#       selected map in DIR/this.log, to see why a launch was missed
#   -M  the mapprefix of this daemon alone (the other daemons keep the
#       benchmark's, $root/;/usr/;/lib;/var/cache/;!/), to measure a
#       prefix list against base running the same build
#   -u  unpredicted launches: after A, launch the program whose favourite
#       successor is A (one the walk never starts after A), and give the
#       daemons no prefetch window: the page cache is dropped and it is
#       launched at once, so a daemon can only help from the moment it
#       sees it start (ideal still reads its files whole first)
#   -T  with -s ns: only build the trees and mounts (under DIR, so
#       beside a benchmark that runs), check that each program runs in
#       its own and exit: no daemon, no throttling, no page cache dropped
#       (a smoke test of the set)
#   -o  results directory (a new /var/tmp/preload-launch.XXXXXX)
#
# Every daemon starts from an empty state with the same configuration,
# runs alone, plays the same training sequence (a seeded walk in which
# each program has a favourite successor), then the same measured
# launches: the program A runs and its favourite B is launched three
# times within seconds: cold (the daemon stopped, the page cache
# dropped), prefetched (the page cache dropped, one cycle for the daemon
# to read ahead, the residency of B's files taken with mincore, then the
# launch) and warm (again, at once). "none" runs no daemon: its
# prefetched launches are cold ones, a control. Writes launches.tsv (one
# line per launch), daemons.tsv (costs), summary.tsv and summary.json to
# the results directory and prints a table: the gap closed is computed
# from the medians of the three times, and in brackets from their sums.
# A second table gives, per daemon, what the disk read during the
# prefetched launches (means: MB, requests, the program's own MB for the
# synthetic set, the daemon's MB): a daemon that makes a launch slower
# shows there as bytes or requests beyond the none row's.
#
# This drops the page cache of the whole machine at every launch.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top_builddir=${top_builddir:-$(cd "$here/../.." && pwd)}
ours="$top_builddir/src/preload"
benchapp="$top_builddir/tests/bench/bench-app"
theirs=${PRELOAD_064:-/usr/sbin/preload}
root=/usr/local/lib/preload-bench
# Other preload daemons on a shared machine (tests, other branches) learn
# every program they see, and read it ahead: they would prefetch for the
# "none" launches. The default exeprefix rejects /usr/local/sbin/, so the
# programs live there and the benchmark's configuration accepts this one
# directory.
bindir=/usr/local/sbin/preload-bench
# The cold launches run other copies, which the benchmark's exeprefix
# rejects like the default one: a daemon that sees program starts through
# fanotify (this one) would otherwise count a cold launch as a run of B
# and, B "running", not read it ahead at the next cycle.
coldbin=/usr/local/sbin/preload-bench-cold

launches=16 cycle=2 daemons=none,0.6.4,this set=synthetic steps=48
budget=1 seed=1 napps=8 list="$here/real.list" out= slow=300:100 verbosity=4 unpredicted=0 treesonly=0
this_mapprefix=
base="${base_builddir:-}/src/preload"

usage() { sed -n '/^#   launch.sh/,/^#   -o/p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while getopts "n:c:d:s:t:b:D:S:a:l:v:M:o:uTh" opt; do
	case $opt in
	n) launches=$OPTARG ;; c) cycle=$OPTARG ;; d) daemons=$OPTARG ;;
	s) set=$OPTARG ;; t) steps=$OPTARG ;; b) budget=$OPTARG ;; D) slow=$OPTARG ;;
	S) seed=$OPTARG ;; a) napps=$OPTARG ;; l) list=$OPTARG ;; o) out=$OPTARG ;;
	v) verbosity=$OPTARG ;; M) this_mapprefix=$OPTARG ;; u) unpredicted=1 ;; T) treesonly=1 slow=none ;;
	h) usage 0 ;; *) usage ;;
	esac
done
for v in "$launches" "$cycle" "$steps" "$budget" "$seed" "$napps" "$verbosity"; do
	case $v in '' | *[!0-9]*) echo "launch.sh: not a number: '$v'" >&2; usage ;; esac
done
[ "$cycle" -ge 2 ] || { echo "launch.sh: the cycle is at least 2 s" >&2; exit 2; }
[ "$budget" -ge 1 ] && [ "$budget" -le 100 ] || { echo "launch.sh: -b is 1..100" >&2; exit 2; }
case $set in synthetic | real | ns) ;; *) echo "launch.sh: -s synthetic|real|ns" >&2; exit 2 ;; esac
if [ "$slow" != none ]; then
	[[ $slow =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] || { echo "launch.sh: -D IOPS:MBPS or none" >&2; exit 2; }
	iops=${slow%:*} mbps=${slow#*:}
fi
throttle=/sys/fs/cgroup/blkio
if [ "$slow" != none ] && [ ! -w "$throttle/blkio.throttle.read_iops_device" ]; then
	echo "launch.sh: no cgroup v1 blkio throttling here: use -D none" >&2
	exit 77
fi
IFS=, read -r -a daemon_list <<< "$daemons"
for d in "${daemon_list[@]}"; do
	case $d in none | 0.6.4 | this | base | ideal) ;; *) echo "launch.sh: unknown daemon '$d'" >&2; exit 2 ;; esac
done

[ "$(id -u)" = 0 ] || { echo "launch.sh: needs root (drop_caches, mincore on any file)"; exit 77; }
[ -x "$benchapp" ] || { echo "launch.sh: build first: $benchapp missing"; exit 1; }
case ,$daemons, in *,this,*) [ -x "$ours" ] || { echo "launch.sh: build first: $ours missing"; exit 1; } ;; esac
case ,$daemons, in *,base,*) [ -n "${base_builddir:-}" ] && [ -x "$base" ] ||
	{ echo "launch.sh: base needs base_builddir=BUILD with src/preload built"; exit 1; } ;; esac
if [ "$treesonly" = 1 ]; then
	[ "$set" = ns ] || { echo "launch.sh: -T is for -s ns" >&2; exit 2; }
	daemons=none
fi
case ,$daemons, in *,0.6.4,*) [ -x "$theirs" ] ||
	{ echo "launch.sh: needs Debian's preload 0.6.4: apt-get install -y preload"; exit 77; } ;; esac
if [ "$set" = real ]; then
	command -v strace > /dev/null || { echo "launch.sh: -s real needs strace"; exit 77; }
	[ -r "$list" ] || { echo "launch.sh: no program list $list"; exit 1; }
fi
if [ "$set" = ns ]; then
	for c in strace mksquashfs unshare chroot pivot_root losetup; do
		command -v "$c" > /dev/null || { echo "launch.sh: -s ns needs $c"; exit 77; }
	done
	[ "$treesonly" = 1 ] || command -v fincore > /dev/null ||
		{ echo "launch.sh: -s ns needs fincore (util-linux-extra)"; exit 77; }
	for c in /usr/bin/python3 /usr/bin/perl; do
		[ -x "$c" ] || { echo "launch.sh: -s ns needs $c"; exit 77; }
	done
fi
# The namespace set's trees: where the default exeprefix rejects their
# programs, as the synthetic set's, so that other preload daemons on the
# machine do not learn and read them ahead.
[ "$set" = ns ] && root=/usr/local/sbin/preload-bench-ns
for dir in "$root" "$bindir" "$coldbin"; do
	if [ "$treesonly" = 0 ] && [ -e "$dir" ]; then
		echo "launch.sh: $dir exists (another run, or left over): remove it first" >&2
		exit 1
	fi
done
if [ -n "$out" ]; then
	mkdir -p "$out" || exit 1
	work=$(cd "$out" && pwd)
else
	work=$(mktemp -d /var/tmp/preload-launch.XXXXXX) || exit 1
fi
[ "$treesonly" = 1 ] && root=$work/root

# Everything started here, so that it all stops here, and only that.
started=() loopdev= majmin= cg= nsmounts=() nsloop=
cleanup() {
	local p m
	for p in "${started[@]}"; do
		kill -CONT -- "-$p" 2> /dev/null
		kill -TERM -- "-$p" 2> /dev/null || kill -TERM "$p" 2> /dev/null
	done
	wait 2> /dev/null
	# The namespace set's overlay and squashfs, before their trees go.
	for m in "${nsmounts[@]}"; do
		umount "$m" 2> /dev/null || umount -l "$m"
	done
	[ -n "$nsloop" ] && losetup -d "$nsloop"
	if [ -n "$loopdev" ]; then
		umount "$root" 2> /dev/null
		echo "$majmin 0" > "$throttle/blkio.throttle.read_iops_device"
		echo "$majmin 0" > "$throttle/blkio.throttle.read_bps_device"
		losetup -d "$loopdev"
		rm -f "$work/disk.img"
		rmdir "$root"
	else
		rm -rf "$root"
	fi
	# Empty now (its processes were stopped above): removing it lifts
	# its throttling.
	[ -n "$cg" ] && rmdir "$cg" 2> /dev/null
	# -T builds nothing there, and a benchmark may be running.
	[ "$treesonly" = 1 ] || rm -rf "$bindir" "$coldbin"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }

# r = a uniform integer in [LO, HI]. No command substitution: bash
# reseeds RANDOM in a subshell, and the world must follow from the seed.
rnd() { r=$(($1 + RANDOM % ($2 - $1 + 1))); }

# The namespace set's launchers (chroot, unshare, sh, pivot_root) are
# the host's, not the programs': they are read back at once, as a
# container engine's own files would be cached on a machine that runs
# containers all day.
ns_launcher=()
drop_caches() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	[ "${#ns_launcher[@]}" = 0 ] || cat "${ns_launcher[@]}" > /dev/null
}

# ---- the slow disk ----------------------------------------------------------
#
# This machine's disk is a virtual one that the host serves from its own
# cache at over 1 GB/s, so a cold start here costs little more than a warm
# one: CPU, not I/O. The synthetic programs go instead on an ext4 file
# system in a loop device (direct I/O, so its image is not cached twice)
# whose reads the blkio controller throttles for every process alike,
# the daemons included: a disk of IOPS requests and MBPS MB per second.
# Its readahead window is the root disk's, so that the kernel caps one
# readahead(2) call as it does there.
make_slow_disk() {
	local ra
	truncate -s 2G "$work/disk.img" || exit 1
	# No lazy initialisation: its writes would run during the benchmark.
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$work/disk.img" || exit 1
	loopdev=$(losetup --direct-io=on -f --show "$work/disk.img") || exit 1
	majmin=$(lsblk -dno MAJ:MIN "$loopdev" | tr -d ' ')
	mkdir -p "$root"
	mount "$loopdev" "$root" || exit 1
	echo "$majmin $iops" > "$throttle/blkio.throttle.read_iops_device"
	echo "$majmin $((mbps * 1024 * 1024))" > "$throttle/blkio.throttle.read_bps_device"
	ra=$(cat "/sys/block/$disk/queue/read_ahead_kb")
	echo "$ra" > "/sys/block/${loopdev#/dev/}/queue/read_ahead_kb"
	disk=${loopdev#/dev/}
}

# Real programs stay on the root disk, which other work shares: instead
# of throttling it for everybody, the daemon, the training runs and the
# measured launches run in a blkio cgroup whose reads from it are
# throttled (the script's own tools are not). Its byte count, not the
# whole disk's, is then what disk_sectors reads.
make_slow_group() {
	cg=$throttle/preload-bench.$$
	mkdir "$cg" || exit 1
	majmin=$(cat "/sys/block/$disk/dev")
	echo "$majmin $iops" > "$cg/blkio.throttle.read_iops_device" || exit 1
	echo "$majmin $((mbps * 1024 * 1024))" > "$cg/blkio.throttle.read_bps_device" || exit 1
}

# Moves the calling (sub)shell into the slow cgroup, if there is one.
join_group() { [ -z "$cg" ] || echo "$BASHPID" > "$cg/cgroup.procs"; }

# ---- the programs -----------------------------------------------------------
#
# For program k: name[k]; manifest[k], the files whose residency is taken
# before it is launched; run[k], the command timed at a launch (real set);
# keep[k], the command that runs it for $S seconds.
name=() manifest=() run=() keep=()

# Synthetic programs are copies of bench-app, each its own executable, with
# a manifest of "libraries" (mapped) and data (read()) in the sizes of a
# desktop application: shared library groups that several programs map
# (a core group that all map), private libraries, one large private
# library, one data file of a few MB and many small resource files, plus a
# group of shared "fonts" that half of them read. Starting a program is
# mostly faulting these in. On this machine's disk (a virtio disk that
# reads large files at over 1 GB/s) the many small files are where a cold
# start loses most of its time, as for real programs.
make_synthetic() {
	local g k i n f kb m groups=(core gui net media)

	RANDOM=$seed
	mkdir -p "$bindir" "$coldbin"
	for g in 0 1 2 3; do
		if [ "$g" = 0 ]; then rnd 10 16; else rnd 6 12; fi
		n=$r
		for ((i = 0; i < n; i++)); do
			rnd 64 2048
			echo "mmap $((r / 4 * 4))K $root/lib/${groups[g]}/lib${groups[g]}-$i.so"
		done > "$work/group$g"
	done
	for ((i = 0; i < 16; i++)); do
		rnd 64 1024
		echo "read $((r / 4 * 4))K $root/share/fonts/font-$i.ttf"
	done > "$work/fonts"
	for ((k = 0; k < napps; k++)); do
		m="$root/app$k.manifest"
		{
			cat "$work/group0"
			for g in 1 2 3; do
				rnd 0 1
				[ "$r" = 1 ] && cat "$work/group$g"
			done
			rnd 0 1
			[ "$r" = 1 ] && cat "$work/fonts"
			rnd 8 24
			echo "mmap ${r}M $root/app$k/libapp$k-main.so"
			rnd 25 45; n=$r
			for ((i = 0; i < n; i++)); do
				rnd 64 2048
				echo "mmap $((r / 4 * 4))K $root/app$k/libapp$k-$i.so"
			done
			rnd 4 16
			echo "read ${r}M $root/share/app$k/data.pak"
			rnd 30 80; n=$r
			for ((i = 0; i < n; i++)); do
				rnd 16 256
				echo "read $((r / 4 * 4))K $root/share/app$k/res-$i.dat"
			done
		} > "$m"
		cp "$benchapp" "$bindir/app$k"
		cp "$benchapp" "$coldbin/app$k"
		name[k]=app$k manifest[k]=$m
		keep[k]="exec $bindir/app$k --sleep \$S $m"
	done
	sort -u -k3 "$root"/app*.manifest > "$work/create.manifest"
	awk '{ sub(/\/[^\/]*$/, "", $3); print $3 }' "$work/create.manifest" | sort -u |
		xargs mkdir -p
	"$benchapp" --create "$work/create.manifest" || exit 1
	sync
	awk '{ n[$1]++ } END { printf "%d files mapped, %d read\n", n["mmap"], n["read"] }' \
		"$work/create.manifest"
}

# A real program's files: what it maps (its executables and every mmap of
# a file) and what it only opens, from one traced run. Whole files are
# counted, so the ratios are approximate: a program maps all of a large
# file (java's modules image) but touches a part.
trace_files() { # K
	local k=$1 t="$work/strace.$1"

	(cd "$work" && strace -f -qq -y -o "$t" -e trace=execve,openat,open,mmap \
		bash -c "${run[k]}" > /dev/null 2>&1)
	{
		sed -n 's/.*execve("\([^"]*\)".* = 0$/M \1/p' "$t"
		sed -n '/ mmap(/s/.*, [0-9]*<\([^>]*\)>, .*/M \1/p' "$t"
		sed -n '/open/s/.* = [0-9]*<\([^>]*\)>$/O \1/p' "$t"
	} | awk '
		$2 ~ /^\/(proc|sys|dev|tmp|run)\// { next }
		{ p = substr($0, 3) }
		$1 == "M" { mapped[p] = 1; next }
		{ opened[p] = 1 }
		END {
			for (p in mapped) print "mmap 0 " p
			for (p in opened) if (!(p in mapped)) print "read 0 " p
		}' | while read -r kind size path; do
		[ -f "$path" ] && echo "$kind $size $path"
	done | sort -k3 > "$work/${name[k]}.manifest"
	manifest[k]="$work/${name[k]}.manifest"
	# The executables it ran (the first is the traced bash -c), as
	# /proc/PID/exe names them, for exeprefix.
	sed -n 's/.*execve("\([^"]*\)".* = 0$/\1/p' "$t" | tail -n +2 |
		xargs -r -d '\n' readlink -f >> "$work/exes"
}

# The Debian packages of a program (the list's fourth field), installed
# when missing: the smallest that run it, without recommends.
install_packages() { # NAME PACKAGES
	local p missing=()
	for p in $2; do
		[ "$(dpkg-query -W -f='${Status}' "$p" 2> /dev/null)" = "install ok installed" ] ||
			missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	log "$1: installing ${missing[*]}"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		"${missing[@]}" > "$work/apt.log" 2>&1; then
		echo "launch.sh: $1 needs ${missing[*]}, which apt-get could not install (see $work/apt.log)" >&2
		exit 77
	fi
}

# The desktop programs' input and homes: a small Writer document, a local
# page for Firefox, and a Firefox profile whose preferences keep it off the
# network and keep each start's state the same as the last's (no session
# to restore, no telemetry, no update or safe-browsing fetches, no disk
# cache), so that no launch depends on the one before.
make_desktop_files() {
	mkdir -p "$work/home" "$work/out" "$work/firefox"
	cat > "$work/doc.fodt" <<'FODT'
<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">
 <office:body><office:text>
  <text:h text:outline-level="1">The launch benchmark</text:h>
  <text:p>A small document that LibreOffice Writer converts to PDF at each launch.</text:p>
 </office:text></office:body>
</office:document>
FODT
	cat > "$work/page.html" <<'HTML'
<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>The launch benchmark</title></head>
<body><h1>The launch benchmark</h1><p>A local page that Firefox draws at each launch.</p></body></html>
HTML
	cat > "$work/firefox/user.js" <<'PREFS'
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.sessionstore.resume_from_crash", false);
user_pref("toolkit.startup.max_resumed_crashes", -1);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("browser.aboutwelcome.enabled", false);
user_pref("browser.cache.disk.enable", false);
user_pref("browser.safebrowsing.malware.enabled", false);
user_pref("browser.safebrowsing.phishing.enabled", false);
user_pref("browser.safebrowsing.downloads.enabled", false);
user_pref("browser.safebrowsing.update.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("toolkit.telemetry.enabled", false);
user_pref("app.update.enabled", false);
user_pref("app.normandy.enabled", false);
user_pref("extensions.update.enabled", false);
user_pref("extensions.getAddons.cache.enabled", false);
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("network.dns.disablePrefetch", true);
user_pref("network.prefetch-next", false);
user_pref("services.settings.server", "http://127.0.0.1:9/");
PREFS
}

make_real() {
	local k=0 n s c p

	cat > "$work/small.cpp" <<'CPP'
#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <vector>
int main() { std::map<std::string, std::vector<int>> m; m["a"].push_back(1); std::cout << m.size() << '\n'; }
CPP
	cat > "$work/Wait.java" <<'JAVA'
public class Wait { public static void main(String[] a) throws Exception { if (a.length > 0) Thread.sleep(Long.parseLong(a[0]) * 1000); } }
JAVA
	if grep -q Wait "$list"; then
		(cd "$work" && javac Wait.java) || { echo "launch.sh: javac failed" >&2; exit 1; }
	fi
	make_desktop_files
	while IFS=$'\t' read -r n c s p; do
		case $n in '' | '#'*) continue ;; esac
		install_packages "$n" "$p"
		name[k]=$n run[k]=$c keep[k]=$s
		# A first, untimed start: a desktop program's first start
		# creates its profile (LibreOffice's user installation,
		# Firefox's profile databases), which no measured launch
		# should pay for.
		(cd "$work" && bash -c "$c") > /dev/null 2>&1
		trace_files "$k"
		k=$((k + 1))
	done < "$list"
	napps=$k
	for ((k = 0; k < napps; k++)); do
		awk -v n="${name[k]}" '{ c[$1]++ } END { printf "%s: %d files mapped, %d read\n", n, c["mmap"], c["read"] }' \
			"${manifest[k]}"
	done
}

# ---- the namespace set ------------------------------------------------------
#
# Two real programs that run in their own trees, as in containers and
# snaps: perl -MCPAN in an overlayfs container (lower: the image, upper:
# its writable layer) entered with chroot, and python3 in a squashfs image
# loop-mounted here and made the root of a private mount namespace with
# pivot_root (as snap-confine does with a base snap). Each tree holds
# copies of the host's files the program uses, so the container's
# /usr/bin/python3 and its libraries are other files than the host's of
# the same names: a daemon that read those would not help the launch.
# python3 is the one in a private namespace, where it sees
# /usr/bin/python3.N, because that name is admitted too (below): the
# host's /usr/bin/perl runs all day on a machine that builds (automake),
# and would be learned beside the benchmark's programs.
# Both trees lie on the root disk (the squashfs image through a loop
# device with direct I/O, whose reads are charged to the reader's group),
# so the slow group throttles their reads as it does the real set's. Built as tests/namespaces.sh builds its trees:
# the files a program opens, and the libraries and interpreter of what it
# runs, copied under the same names.

# ns_tree DIR CMD...: a tree at DIR that CMD, run here once under strace,
# could run in: every regular file it opens, stats or executes (and a
# symbolic link's target), the ELF interpreter and libraries of what it
# executes, the root's symbolic links (/lib -> usr/lib), /dev/null,
# /dev/urandom and the mount point pivot_root needs.
ns_tree() {
	local dir=$1 t="$work/tree.strace" p l
	shift
	mkdir -p "$dir/dev" "$dir/oldroot" "$dir/tmp" "$dir/usr"
	for l in /bin /sbin /lib /lib32 /lib64; do
		if [ -L "$l" ]; then
			mkdir -p "$dir/$(readlink -f "$l")"
			ln -s "$(readlink "$l")" "$dir$l"
		fi
	done
	mknod -m 666 "$dir/dev/null" c 1 3 && mknod -m 444 "$dir/dev/urandom" c 1 9 || exit 1
	(cd "$work" && strace -f -qq -o "$t" -e trace=%file "$@" > /dev/null 2>&1)
	{
		sed -n 's/^[0-9]* *[a-z0-9_]*(\(AT_FDCWD, \)\{0,1\}"\(\/[^"]*\)".* = [0-9]*$/\2/p' "$t"
		sed -n 's/.*execve("\([^"]*\)".* = 0$/\1/p' "$t" | xargs -r ldd 2> /dev/null |
			sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'
	} | grep -v -E '^/(proc|sys|dev|tmp|run)/' | grep -v -F "$work" | sort -u > "$work/tree.files"
	# Modification times kept: python uses a module's compiled file only
	# if it records the source's. (cp -p --parents fails on absolute
	# names in coreutils 9.1, hence touch.)
	while IFS= read -r p; do
		[ -f "$p" ] || continue
		if [ -L "$p" ]; then
			cp -P --parents "$p" "$dir" 2> /dev/null
			p=$(readlink -f "$p")
		fi
		cp --parents "$p" "$dir" && touch -r "$p" "$dir$p" || exit 1
	done < "$work/tree.files"
}

# ns_trace K ROOT: program K's manifest, from one run chrooted into ROOT
# (the squashfs image's mount here stands for the namespace's root): what
# its processes execute and map, and what they only open, as paths here
# under ROOT. Also the host's files of the same names (K's .host manifest),
# whose page cache must stay untouched, and K's executables for
# exeprefix: the paths here and, for a program in a private namespace,
# the path it sees (which a daemon that does not translate would use).
# Tracing in a chroot here gives the paths here; the files are those the
# private namespace sees.
ns_trace() { # K ROOT
	local k=$1 rootdir=$2 t="$work/strace.$1" m="$work/${name[$1]}.manifest" p kind size path

	(cd "$work" && strace -f -qq -y -o "$t" -e trace=execve,openat,open,mmap \
		bash -c "${ns_chroot[k]}" > /dev/null 2>&1)
	# The first two executions are bash and chroot, here; the others
	# are the container's, by the names it sees.
	sed -n 's/.*execve("\([^"]*\)".* = 0$/\1/p' "$t" | tail -n +3 > "$work/execs.$k"
	{
		while IFS= read -r p; do
			echo "M $(readlink -f "$rootdir$p")"
		done < "$work/execs.$k"
		sed -n '/ mmap(/s/.*, [0-9]*<\([^>]*\)>, .*/M \1/p' "$t"
		sed -n '/open/s/.* = [0-9]*<\([^>]*\)>$/O \1/p' "$t"
	} | awk -v r="$rootdir/" '
		substr($0, 3, length(r)) != r { next }
		{ p = substr($0, 3) }
		$1 == "M" { mapped[p] = 1; next }
		{ opened[p] = 1 }
		END {
			for (p in mapped) print "mmap 0 " p
			for (p in opened) if (!(p in mapped)) print "read 0 " p
		}' | while read -r kind size path; do
		[ -f "$path" ] && echo "$kind $size $path"
	done | sort -k3 > "$m"
	manifest[k]=$m
	# No file of the tree may be the host's file of the same name (a hard
	# link, a bind mount): reading that would then help the launch.
	while read -r kind size path; do
		p=${path#"$rootdir"}
		[ -f "$p" ] || continue
		if [ "$p" -ef "$path" ]; then
			echo "launch.sh: ${name[k]}: $path is the host's $p" >&2
			exit 1
		fi
		echo "$kind $size $p"
	done < "$m" > "$work/${name[k]}.host" || exit 1
	host[k]="$work/${name[k]}.host"
	while IFS= read -r p; do
		readlink -f "$rootdir$p"
	done < "$work/execs.$k" >> "$work/exes"
	# The program itself (not what it runs: perl's pwd) by the name it
	# sees, as the default exeprefix of either daemon would admit it.
	[ "${ns_private[k]}" = 1 ] && head -n 1 "$work/execs.$k" | xargs readlink -f >> "$work/exes"
}

make_ns() {
	local ov="$root/ov" sq="$root/sq" img="$work/python.sqfs" k
	local py='import email, json, http.client, decimal, argparse, asyncio'

	mkdir -p "$root" "$ov/lower" "$ov/upper" "$ov/work" "$ov/merged" "$sq" "$work/sqtree"
	ns_tree "$ov/lower" /usr/bin/perl -MCPAN -e 1
	mount -t overlay overlay -o "lowerdir=$ov/lower,upperdir=$ov/upper,workdir=$ov/work" \
		"$ov/merged" || { echo "launch.sh: cannot mount an overlay" >&2; exit 77; }
	nsmounts+=("$ov/merged")
	ns_tree "$work/sqtree" /usr/bin/python3 -c "$py"
	mksquashfs "$work/sqtree" "$img" -quiet -noappend > /dev/null || exit 1
	rm -rf "$work/sqtree"
	nsloop=$(losetup --direct-io=on -r -f --show "$img") || exit 1
	mount -t squashfs -o ro "$nsloop" "$sq" || { echo "launch.sh: cannot mount squashfs" >&2; exit 77; }
	nsmounts=("$sq" "${nsmounts[@]}")
	ns_launcher=(/usr/sbin/chroot /usr/bin/unshare /usr/sbin/pivot_root /bin/sh)

	name[0]=perl-overlay ns_private[0]=0
	run[0]="exec chroot $ov/merged /usr/bin/perl -MCPAN -e 1"
	keep[0]="exec chroot $ov/merged /usr/bin/perl -MCPAN -e 'sleep '\$S"
	ns_chroot[0]=${run[0]}
	name[1]=python-squashfs ns_private[1]=1
	run[1]="exec unshare -m sh -c \"cd $sq && pivot_root . oldroot && exec /usr/bin/python3 -c '$py'\""
	keep[1]="exec unshare -m sh -c \"cd $sq && pivot_root . oldroot && exec /usr/bin/python3 -c '$py, time; time.sleep('\$S')'\""
	ns_chroot[1]="exec chroot $sq /usr/bin/python3 -c '$py'"
	napps=2
	ns_trace 0 "$ov/merged"
	ns_trace 1 "$sq"
	for ((k = 0; k < napps; k++)); do
		awk -v n="${name[k]}" '{ c[$1]++; h += 0 } END { printf "%s: %d files mapped, %d read", n, c["mmap"], c["read"] }' \
			"${manifest[k]}"
		echo ", $(wc -l < "${host[k]}") of the same names here"
	done
	# Each launch must run the program, here as in its tree.
	for ((k = 0; k < napps; k++)); do
		(cd "$work" && bash -c "${run[k]}") > "$work/check.$k" 2>&1 ||
			{ echo "launch.sh: ${name[k]} does not run in its tree:" >&2; cat "$work/check.$k" >&2; exit 1; }
	done
}

# ---- the sequence -----------------------------------------------------------
#
# Each program has a favourite successor (one cycle through all of them, in
# a seeded order) that follows it 80 % of the time; otherwise another one,
# uniformly. The measured launches are pairs (A, its favourite).
make_sequence() {
	local order=() i j t k

	RANDOM=$((seed + 1000))
	for ((i = 0; i < napps; i++)); do order[i]=$i; done
	for ((i = napps - 1; i > 0; i--)); do
		rnd 0 "$i"; j=$r
		t=${order[i]} order[i]=${order[j]} order[j]=$t
	done
	for ((i = 0; i < napps; i++)); do
		fav[order[i]]=${order[(i + 1) % napps]}
	done
	k=${order[0]}
	train=()
	for ((i = 0; i < steps; i++)); do
		train+=("$k")
		rnd 1 10
		if [ "$r" -le 8 ]; then
			k=${fav[k]}
		else
			rnd 1 $((napps - 1)); k=$(((k + r) % napps))
		fi
	done
	measure_a=() measure_b=()
	for ((i = 0; i < launches; i++)); do
		measure_a+=("${order[i % napps]}")
		# -u: the program whose favourite is A, never A's own.
		if [ "$unpredicted" = 1 ]; then
			measure_b+=("${order[(i % napps + napps - 1) % napps]}")
		else
			measure_b+=("${fav[order[i % napps]]}")
		fi
	done
	{
		for ((i = 0; i < napps; i++)); do
			echo "# ${name[i]} -> ${name[fav[i]]}"
		done
		echo "train ${train[*]}"
		echo "measure ${measure_a[*]}"
		echo "launch ${measure_b[*]}"
	} > "$work/sequence"
}

# ---- running programs -------------------------------------------------------

# Starts program K for S seconds in its own process group; pid in bg.
# With PRIO, at that nice value.
start_keep() { # K S OUTPUT [PRIO]
	(cd "$work" && join_group && S=$2 exec nice -n "${4:-0}" setsid bash -c "${keep[$1]}") > "$3" 2>&1 &
	bg=$!
	started+=("$bg")
}

# Waits until a synthetic program has printed its load time (it has
# faulted in its files); sets us.
wait_loaded() { # OUTPUT PID
	local i
	us=
	for ((i = 0; i < 1000; i++)); do
		read -r us 2> /dev/null < "$1"
		[ -n "$us" ] && return 0
		kill -0 "$2" 2> /dev/null || break
		sleep 0.02
	done
	us=-1
	return 1
}

# Wall time of one run of a real program, in microseconds; sets us.
time_run() { # K
	local t0 t1
	t0=$(date +%s%N)
	(cd "$work" && join_group && exec nice -n "$prio" bash -c "${run[$1]}") > /dev/null 2>&1
	t1=$(date +%s%N)
	us=$(((t1 - t0) / 1000))
}

stop_group() { # PID
	kill -TERM -- "-$1" 2> /dev/null || kill -TERM "$1" 2> /dev/null
	wait "$1" 2> /dev/null
}

# Other preload daemons on the machine learn the same programs and read
# them ahead too; they are counted at every launch and reported.
foreign() {
	local n=0 p
	for p in $(pgrep -x preload); do
		[ "$p" = "${dpid:-}" ] || n=$((n + 1))
	done
	echo "$n"
}

train() {
	local i k
	for ((i = 0; i < ${#train[@]}; i++)); do
		k=${train[i]}
		start_keep "$k" "$((step + overlap))" /dev/null
		sleep "$step"
	done
	sleep "$((overlap + cycle))"
}

# One launch of program K, not kept alive, timed; sets us. Synthetic
# programs run from DIR.
launch_once() { # K DIR
	if [ "$set" = synthetic ]; then
		us=$(nice -n "$prio" "$2/app$1" "${manifest[$1]}")
		[ -n "$us" ] || us=-1
	else
		time_run "$1"
	fi
}

# Page cache residency of program K's files: "mmap_res mmap_total
# read_res read_total", tab-separated.
residency() { # K
	"$benchapp" --residency "${manifest[$1]}" | awk '{ printf "%s%s\t%s", (NR > 1 ? "\t" : ""), $2, $3 }'
}

# Resident bytes of each of the host's files of the names program K's
# files have in its tree (its .host manifest): "BYTES PATH" lines in OUT.
host_resident() { # K OUT
	cut -d' ' -f3- "${host[$1]}" | xargs -r -d '\n' fincore --bytes --noheadings --raw \
		--output RES,FILE > "$2"
}

# The ideal prefetch of program K: every file of its manifest read whole,
# through the slow disk (the throttled group for real programs) as a
# daemon's reads would be. Paths may hold spaces; the manifest's third
# field runs to the end of the line.
read_all() { # K
	(join_group
	 cut -d' ' -f3- "${manifest[$1]}" | while IFS= read -r f; do
		cat -- "$f" > /dev/null 2>&1
	 done)
}

# On the benchmark's own disk, waits (at most one more cycle) until it has
# read nothing for half a second, so that a readahead still running does
# not compete with the launch: the throttling that makes the disk slow
# queues every read alike, before the I/O scheduler could serve the
# daemon's idle-class reads last as a real disk's would. Sets quiet_ms to
# the time waited. On the shared root disk it does not wait.
wait_quiet() {
	local t0 last now still=0 limit
	quiet_ms=0
	[ -n "$loopdev" ] || [ -n "$cg" ] || return 0
	t0=$(date +%s%N) limit=$((cycle * 1000))
	last=$(disk_sectors)
	while [ "$still" -lt 2 ] && [ "$quiet_ms" -lt "$limit" ]; do
		sleep 0.25
		now=$(disk_sectors)
		if [ "$now" = "$last" ]; then still=$((still + 1)); else still=0; fi
		last=$now
		quiet_ms=$((($(date +%s%N) - t0) / 1000000))
	done
}

# The measured launches of B after A, each giving three times taken
# within seconds of each other, so that the load of a shared machine
# drifting over the run weighs on all three alike:
#   cold        the daemon stopped (SIGSTOP to its process group, so
#               0.6.4's readahead children stop too), the page cache
#               dropped, a copy of B that exeprefix rejects launched, the
#               daemon continued; it never sees this B, which exits at once
#   prefetched  the page cache dropped again, one full cycle in which the
#               daemon predicts and reads ahead, the residency of B's files
#               taken, B launched (and kept running beside A for a cycle,
#               as in the training)
#   warm        B launched again while the first one runs
measure() { # DAEMON
	local d=$1 i a b apid bpid res cres cold pre warm f out s0 window quiet_ms l0 l1 n0 n1 d0 d1 own hostread hostmsg
	for ((i = 0; i < launches; i++)); do
		a=${measure_a[i]} b=${measure_b[i]} out="$work/out.$d.$i"
		start_keep "$a" 3600 "$out.a"
		apid=$bg
		if [ "$set" = synthetic ]; then
			wait_loaded "$out.a" "$apid"
		else
			sleep 1
		fi
		# The daemon sees A: a scan, and half a cycle later the update.
		sleep "$cycle"; sleep 0.5
		f=$(foreign)

		[ -n "$dpid" ] && kill -STOP -- "-$dpid"
		sleep 0.3
		drop_caches
		cres=$(residency "$b")
		launch_once "$b" "$coldbin"
		cold=$us
		[ -n "$dpid" ] && kill -CONT -- "-$dpid"
		# A real program's cold launch is the program itself. A daemon
		# that sees starts (this one) reads the events on waking and
		# counts B as running at its next scan, up to a cycle away; the
		# scan after that sees B stopped, and only then is B predicted
		# again. Two cycles, or the prefetch window that follows is
		# spent predicting without B (one cycle was not enough: g++,
		# whose cold launch is the longest, was missed that way).
		# Unpredicted launches wait four more: a daemon that tells a
		# launch from a program restarted in a loop by whether a scan
		# saw it in the last two cycles (this one: src/launch.h) would
		# take the measured launch for a restart of the cold one. This
		# one counts an exec it saw as a run of B at the next scan, and
		# B's last sight is the model update after it, on a clock that
		# moves in half cycles: up to about two cycles after the
		# wake-up. With two cycles more only, node's measured launch
		# was taken for a restart, with no batch and no hold (its exec
		# in this.log at -v 8 had no "launched" line).
		if [ "$set" != synthetic ]; then
			if [ "$unpredicted" = 1 ]; then
				sleep "$((6 * cycle))"
			else
				sleep "$((2 * cycle))"
			fi
		fi

		drop_caches
		s0=$(disk_sectors)
		# The host's files of the container's names: what of them the
		# prefetch window brings into the page cache (some, libc's, stay
		# mapped by the machine's processes through a drop).
		[ "$set" = ns ] && host_resident "$b" "$work/host.before"
		quiet_ms=0
		if [ "$unpredicted" = 0 ] || [ "$d" = ideal ]; then
			[ "$d" = ideal ] && read_all "$b"
			# One full cycle: every daemon predicts and reads ahead once.
			sleep "$cycle"; sleep "$settle"
			wait_quiet
		fi
		res=$(residency "$b")
		window=$((($(disk_sectors) - s0) * 512))
		# What the disk read during the prefetched launch, in bytes and
		# requests, and whose reads they were: the program's own (a
		# synthetic one, alive until it is stopped) and the daemon's.
		l0=$(disk_sectors) n0=$(disk_ios) d0=$(daemon_rd)
		own=-
		hostread=-
		if [ "$set" = ns ]; then
			# The bytes added to each file; the files in hostread.D.I.
			host_resident "$b" "$work/host.after"
			hostread=$(awk -v f="$work/hostread.$d.$i" '
				NR == FNR { r[$2] = $1; next }
				$1 > r[$2] { n += $1 - r[$2]; print $1 - r[$2], $2 > f }
				END { print n + 0 }' "$work/host.before" "$work/host.after")
		fi
		if [ "$set" = synthetic ]; then
			start_keep "$b" "$((cycle + 1))" "$out.b" "$prio"
			bpid=$bg
			wait_loaded "$out.b" "$bpid"
			pre=$us
			own=$(awk '$1 == "read_bytes:" { print $2 }' "/proc/$bpid/io" 2> /dev/null)
			l1=$(disk_sectors) n1=$(disk_ios) d1=$(daemon_rd)
			launch_once "$b" "$bindir"
			warm=$us
		else
			time_run "$b"
			pre=$us
			l1=$(disk_sectors) n1=$(disk_ios) d1=$(daemon_rd)
			time_run "$b"
			warm=$us
			start_keep "$b" "$((cycle + 1))" /dev/null
			bpid=$bg
		fi
		printf '%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$set" "$d" "$i" "${name[a]}" \
			"${name[b]}" "$res" "$pre" "$cold" "$warm" "$f" \
			"$(echo "$cres" | cut -f1,3)" "$window" "$quiet_ms" "$(((l1 - l0) * 512))" \
			"$((n1 - n0))" "${own:--}" "$((d1 - d0))" "$hostread" >> "$work/launches.tsv"
		hostmsg=
		[ "$hostread" = - ] || hostmsg="; $hostread bytes of the host's files of the same names"
		log "$d launch $i: ${name[a]} -> ${name[b]}: cold $cold, prefetched $pre, warm $warm us; resident $(echo "$res" | awk '{ printf "mmap %.0f %%, read %.0f %%", $2 ? 100 * $1 / $2 : 0, $4 ? 100 * $3 / $4 : 0 }')${hostmsg}"
		# B runs beside A for a cycle, as in the training; then both stop
		# and the daemon sees them stopped before the next launch.
		sleep "$((cycle + 1))"
		stop_group "$apid"
		stop_group "$bpid"
		rm -f "$out.a" "$out.b"
		sleep "$cycle"
	done
}

# ---- the daemons ------------------------------------------------------------

cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13 + $14 + $15) / hz }' "/proc/$1/stat"; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
disk_sectors() {
	if [ -n "$cg" ]; then
		awk -v d="$majmin" '$1 == d && $2 == "Read" { n = $3 } END { print int(n / 512) }' \
			"$cg/blkio.throttle.io_service_bytes"
	else
		awk -v d="$disk" '$3 == d { print $6 }' /proc/diskstats
	fi
}

# Read requests the disk served (the throttle's count).
disk_ios() {
	local f=$throttle/blkio.throttle.io_serviced
	[ -n "$cg" ] && f=$cg/blkio.throttle.io_serviced
	awk -v d="$majmin" '$1 == d && $2 == "Read" { n = $3 } END { print n + 0 }' "$f"
}

# Bytes the running daemon (and the children it reaped) had the disk read.
daemon_rd() {
	[ -n "${dpid:-}" ] || { echo 0; return; }
	awk '$1 == "read_bytes:" { print $2 }' "/proc/$dpid/io" 2> /dev/null || echo 0
}

run_daemon() { # NAME
	local d=$1 t0 s0 sampler cpu=- hwm=- anon=- io=- state=- secs sectors bin
	local conf="$work/preload.conf" statefile="$work/$1.state"
	[ "$d" = this ] && [ -n "$this_mapprefix" ] && conf="$work/preload.this.conf"
	dpid=
	drop_caches
	t0=$SECONDS s0=$(disk_sectors)
	case $d in
	0.6.4)
		# Debian's init script runs it in the idle I/O class; this
		# preload puts itself there.
		(join_group && exec setsid ionice -c3 "$theirs" -f -c "$conf" -s "$statefile" \
			-l "$work/$d.log" -V 4) &
		dpid=$! ;;
	this | base)
		bin=$ours
		[ "$d" = base ] && bin=$base
		(join_group && exec setsid "$bin" -f -c "$conf" -s "$statefile" -l "$work/$d.log" \
			-V "$verbosity") &
		dpid=$! ;;
	esac
	if [ -n "$dpid" ]; then
		started+=("$dpid")
		sleep 1
		kill -0 "$dpid" 2> /dev/null || { echo "launch.sh: $d did not start, see $work/$d.log" >&2; exit 1; }
		# Peak private (anonymous) memory: file-backed RSS moves with
		# the page cache, not with the daemon.
		(while kill -0 "$dpid" 2> /dev/null; do
			status_kb "$dpid" RssAnon
			sleep 1
		done) > "$work/$d.rss" 2> /dev/null &
		sampler=$!
		log "$d: training, ${#train[@]} steps of $step s"
		train
	fi
	log "$d: $launches measured launches"
	measure "$d"
	if [ -n "$dpid" ]; then
		# This preload's dump (SIGUSR1) in its log: for the namespace set,
		# how many paths it translated and dropped, and why.
		if [ "$set" = ns ] && [ "$d" != 0.6.4 ]; then
			kill -USR1 "$dpid"
			sleep 1
		fi
		cpu=$(cpu_s "$dpid")
		hwm=$(status_kb "$dpid" VmHWM)
		# Includes the children it reaped: 0.6.4 reads ahead in forks.
		io=$(awk '$1 == "read_bytes:" { print $2 }' "/proc/$dpid/io")
		kill -TERM "$dpid"
		wait "$dpid" 2> /dev/null
		wait "$sampler" 2> /dev/null
		anon=$(sort -n "$work/$d.rss" | tail -1)
		state=$(stat -c %s "$statefile" 2> /dev/null || echo 0)
		dpid=
	fi
	secs=$((SECONDS - t0))
	sectors=$(($(disk_sectors) - s0))
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$d" "$secs" "$cpu" "$hwm" "$anon" "$state" \
		"$io" "$((sectors * 512))" >> "$work/daemons.tsv"
}

# ---- results ----------------------------------------------------------------

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Per daemon: medians of the three times of its own launches, the gap
# closed from those medians, byte hit ratios over all its launches (sums
# of resident bytes over sums of bytes), and what the daemon cost.
summarise() {
	local d col meds
	printf 'set\tdaemon\tlaunches\tcold_us\tprefetched_us\twarm_us\tgap_closed\tmmap_hit\tread_hit\tall_hit\tcold_mmap_hit\tcold_read_hit\tcpu_s\tpeak_rss_kb\tpeak_anon_kb\tstate_bytes\tdaemon_read_bytes\tdisk_read_bytes\tseconds\tforeign\tquiet_wait_ms\tgap_closed_sums\thost_same_name_bytes\n' \
		> "$work/summary.tsv"
	for d in "${daemon_list[@]}"; do
		meds=
		for col in 11 10 12 17; do
			meds="$meds $(awk -v s="$set" -v d="$d" -v c="$col" '$1 == s && $2 == d && $c >= 0 { print $c }' \
				"$work/launches.tsv" | median)"
		done
		awk -v s="$set" -v d="$d" -v meds="$meds" \
			-v costs="$(awk -v d="$d" '$1 == d' "$work/daemons.tsv")" '
			function ratio(a, b) { return b > 0 ? sprintf("%.4f", a / b) : "-" }
			$1 == s && $2 == d { n++; mr += $6; mt += $7; rr += $8; rt += $9; f += $13; cm += $14; cr += $15 }
			# Bytes of the host files of the same names brought in by a
			# prefetch window (namespace set), over all launches.
			$1 == s && $2 == d && NF >= 22 && $22 != "-" { hb += $22; hn++ }
			# The gap closed from the sums of the launches timed all three
			# times too: one median (a warm one taken seconds after a
			# slow launch) can move the other figure by many points.
			$1 == s && $2 == d && $10 >= 0 && $11 >= 0 && $12 >= 0 { sc += $11; sp += $10; sw += $12 }
			END {
				split(costs, c, "\t")
				split(meds, m, " ")
				cold = m[1]; pre = m[2]; warm = m[3]; quiet = m[4]
				gap = (cold != "-" && warm != "-" && cold - warm > 0) ? sprintf("%.4f", (cold - pre) / (cold - warm)) : "-"
				printf "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n",
					s, d, n, cold, pre, warm, gap, ratio(mr, mt), ratio(rr, rt),
					ratio(mr + rr, mt + rt), ratio(cm, mt), ratio(cr, rt),
					c[3], c[4], c[5], c[6], c[7], c[8], c[2], f, quiet,
					ratio(sc - sp, sc - sw), (hn ? hb : "-")
			}' "$work/launches.tsv" >> "$work/summary.tsv"
	done
	awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) k[i] = $i; next }
		{
			printf "{"
			for (i = 1; i <= NF; i++)
				printf "%s\"%s\": %s", (i > 1 ? ", " : ""), k[i],
					($i ~ /^-?[0-9]+(\.[0-9]+)?$/) ? $i : ($i == "-" ? "null" : "\"" $i "\"")
			print "}"
		}' "$work/summary.tsv" > "$work/summary.json"
}

print_table() {
	awk -F'\t' '
		function pct(x) { return x == "-" ? "-" : sprintf("%.1f %%", 100 * x) }
		function ms(x) { return x == "-" ? "-" : sprintf("%.1f", x / 1000) }
		function mb(x) { return x == "-" || x == "" ? "-" : sprintf("%.1f", x / 1048576) }
		NR == 1 {
			printf "%-6s %8s %8s %8s %7s %8s %8s %7s %8s %8s %8s %8s %8s\n", "daemon", "cold",
				"prefetch", "warm", "gap", "hit mmap", "hit read", "CPU", "peak RSS",
				"peak anon", "state", "daemon rd", "disk rd"
			printf "%-6s %8s %8s %8s %7s %8s %8s %7s %8s %8s %8s %8s %8s\n", "", "ms", "ms", "ms",
				"closed", "(cold)", "(cold)", "s", "KB", "KB", "KB", "MB", "MB"
			next
		}
		{
			printf "%-6s %8s %8s %8s %7s %8s %8s %7s %8s %8s %8s %8s %8s%s\n", $2, ms($4), ms($5),
				ms($6), pct($7), pct($8), pct($9), $13, $14, $15,
				($16 == "-" ? "-" : sprintf("%.1f", $16 / 1024)), mb($17), mb($18),
				($20 > 0 ? "  (other preload daemons ran at " $20 " launches)" : "")
			printf "%-6s %8s %8s %8s %7s %8s %8s%s\n", "", "", "", "", "(" pct($22) ")", pct($11), pct($12),
				($23 != "" && $23 != "-" ? sprintf("  host files of the same names: %.1f KB read", $23 / 1024) : "")
		}' "$work/summary.tsv"
	[ "$set" = synthetic ] && return
	# Real programs differ by a factor of ten in their start-up: per
	# program, the means of its launches and the gap closed from sums.
	echo
	awk -F'\t' -v s="$set" '
		$1 == s && $10 >= 0 && $11 >= 0 && $12 >= 0 {
			k = $2 SUBSEP $5
			if (!(k in n)) order[++m] = k
			n[k]++; p[k] += $10; c[k] += $11; w[k] += $12
			if (NF >= 22 && $22 != "-") h[k] += $22
			else h[k] = "-"
		}
		END {
			printf "%-6s %-16s %3s %9s %9s %9s %7s %10s\n", "daemon", "program", "n", "cold ms",
				"prefetch", "warm ms", "gap", "host KB"
			for (i = 1; i <= m; i++) {
				split(order[i], kk, SUBSEP)
				k = order[i]
				printf "%-6s %-16s %3d %9.1f %9.1f %9.1f %7s %10s\n", kk[1], kk[2], n[k],
					c[k] / n[k] / 1000, p[k] / n[k] / 1000, w[k] / n[k] / 1000,
					(c[k] > w[k] ? sprintf("%.1f %%", 100 * (c[k] - p[k]) / (c[k] - w[k])) : "-"),
					(h[k] == "-" ? "-" : sprintf("%.1f", h[k] / 1024))
			}
		}' "$work/launches.tsv"
	[ "$set" = ns ] || return
	# The host's files of the same names in the page cache may be another
	# daemon's reads (other preload daemons on the machine): this
	# preload's own selections say whether it chose them (-v 10 logs each
	# selected range).
	local d
	for d in "${daemon_list[@]}"; do
		grep -q ' debug: selected ' "$work/$d.log" 2> /dev/null || continue
		awk 'NR == FNR { h[$3] = 1; next }
			$4 == "selected" && ($6 in h) { n++; if (!($6 in f)) { f[$6] = 1; m++ } }
			END { printf "%d ranges in %d files\n", n, m }' "${host[@]}" "$work/$d.log" |
			sed "s/^/$d selected of the host's files of the same names: /"
	done
}

# ---- main -------------------------------------------------------------------

disk=$(lsblk -no PKNAME "$(findmnt -no SOURCE /)" 2> /dev/null)
[ -n "$disk" ] || disk=$(basename "$(findmnt -no SOURCE /)")
step=$((2 * cycle + 1)) overlap=$((cycle + 1)) settle=1.5
# Measured launches run before other work on the machine: on a shared
# machine, CPU contention otherwise adds more noise than the cache saves.
prio=-10

log "results in $work"
echo "set=$set launches=$launches cycle=$cycle daemons=$daemons steps=$steps budget=$budget% disk=$slow seed=$seed apps=$napps unpredicted=$unpredicted${this_mapprefix:+ this_mapprefix=$this_mapprefix}" > "$work/params"
if [ "$set" = synthetic ]; then
	if [ "$slow" != none ]; then
		log "a slow disk for the programs: $iops reads/s, $mbps MB/s"
		make_slow_disk
	fi
	log "creating $napps programs under $root"
	make_synthetic
else
	if [ "$slow" != none ]; then
		log "a slow root disk for the daemon and the programs: $iops reads/s, $mbps MB/s"
		make_slow_group
	fi
	if [ "$set" = real ]; then
		log "tracing the programs of $list"
		make_real
	else
		log "building the namespace set's trees under $root"
		make_ns
	fi
fi
if [ "$treesonly" = 1 ]; then
	log "built (-T): $napps programs, each runs"
	exit 0
fi
# Only the benchmark's programs are learned. The machine is shared: other
# people's builds and this script's own shell tools would take a share of
# the budget that differs from one daemon's run to the next's (this
# preload, which sees short programs through fanotify, learns them all).
if [ "$set" = synthetic ]; then
	exeprefix="$bindir/;!/"
else
	exeprefix="$(sort -u "$work/exes" | tr '\n' ';')!/"
fi
# $root/ leads mapprefix for this preload's fanotify watch, which marks the
# file systems of the directories the prefix lists name: the slow disk is
# one of its own. For the prefix rules it changes nothing (/usr/ accepts it).
cat > "$work/preload.conf" <<EOF
# The launch benchmark's configuration, read by both daemons.
[model]
cycle = $cycle
usecorrelation = true
minsize = 2000000
memtotal = $budget
memfree = 0
memcached = 0
[system]
doscan = true
dopredict = true
autosave = 3600
mapprefix = $root/;/usr/;/lib;/var/cache/;!/
exeprefix = $exeprefix
maxprocs = 30
sortstrategy = 3
EOF

if [ -n "$this_mapprefix" ]; then
	sed "s|^mapprefix = .*|mapprefix = $this_mapprefix|" "$work/preload.conf" > "$work/preload.this.conf"
fi
make_sequence
: > "$work/launches.tsv"
: > "$work/daemons.tsv"
n=$(foreign)
[ "$n" -gt 0 ] && log "warning: $n other preload daemon(s) running; they may read the programs ahead too"
for d in "${daemon_list[@]}"; do
	run_daemon "$d"
done
summarise
# The disk during the prefetched launches, means per launch: what it read
# (MB, requests) and, of that, the program's own reads (synthetic set) and
# the daemon's.
print_launch_io() {
	awk -F'\t' '
		NR == FNR { order[++n] = $0; next }
		{ k = $2; c[k]++; mb[k] += $18; io[k] += $19; dr[k] += $21
		  if ($20 != "-") { own[k] += $20; no[k]++ } }
		END {
			printf "%-6s %9s %9s %9s %9s   (prefetched launch: disk and whose reads, means)\n",
				"daemon", "disk MB", "requests", "own MB", "daemon MB"
			for (i = 1; i <= n; i++) {
				k = order[i]
				if (!c[k]) continue
				printf "%-6s %9.1f %9.0f %9s %9.1f\n", k, mb[k] / c[k] / 1048576, io[k] / c[k],
					no[k] ? sprintf("%.1f", own[k] / no[k] / 1048576) : "-", dr[k] / c[k] / 1048576
			}
		}' <(printf '%s\n' "${daemon_list[@]}") "$work/launches.tsv"
}

{ print_table; print_launch_io; } | tee "$work/table.txt"
echo "results: $work"
