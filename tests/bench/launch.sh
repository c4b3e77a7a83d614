#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The launch benchmark (root): how much of a program's start-up each
# prefetcher saves, measured on real launches from the page cache state a
# daemon leaves behind. See doc/benchmarks.md, "The launch benchmark".
#
#   launch.sh [-n LAUNCHES] [-c CYCLE] [-d DAEMONS] [-s SET] [-t STEPS]
#             [-b PERCENT] [-S SEED] [-a APPS] [-l LIST] [-o DIR]
#
#   -n  measured launches per daemon (16)
#   -c  the daemons' cycle in seconds (2)
#   -d  daemons, comma-separated, in the order they run:
#       none (no daemon: the cold and warm launches), 0.6.4 (Debian's
#       /usr/sbin/preload), this ($top_builddir/src/preload)
#       (none,0.6.4,this)
#   -s  synthetic: copies of bench-app under /usr/local/lib/preload-bench
#       that map and read generated files (the default); real: the
#       programs of LIST, timed by their wall time
#   -t  training steps, one program started per step (48)
#   -b  the memory budget, percent of MemTotal, the same for both daemons
#       (1; preload.conf memtotal = PERCENT, memfree = memcached = 0)
#   -S  seed of the world, the training walk and the launches (1)
#   -a  synthetic programs (8)
#   -l  the real programs (tests/bench/real.list)
#   -o  results directory (a new /var/tmp/preload-launch.XXXXXX)
#
# Every daemon starts from an empty state with the same configuration,
# runs alone, plays the same training sequence (a seeded walk in which
# each program has a favourite successor), then the same measured
# launches: the program A runs, the page cache is dropped, one cycle
# later the residency of B's files is taken with mincore and B is
# launched. "none" plays only the launches, and also launches each B a
# second time: those are the cold and the warm launches. Writes
# launches.tsv (one line per launch), daemons.tsv (costs), summary.tsv
# and summary.json to the results directory and prints a table.
#
# This drops the page cache of the whole machine at every launch.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top_builddir=${top_builddir:-$(cd "$here/../.." && pwd)}
ours="$top_builddir/src/preload"
benchapp="$top_builddir/tests/bench/bench-app"
theirs=/usr/sbin/preload
root=/usr/local/lib/preload-bench

launches=16 cycle=2 daemons=none,0.6.4,this set=synthetic steps=48
budget=1 seed=1 napps=8 list="$here/real.list" out=

usage() { sed -n '/^#   launch.sh/,/^#   -o/p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while getopts "n:c:d:s:t:b:S:a:l:o:h" opt; do
	case $opt in
	n) launches=$OPTARG ;; c) cycle=$OPTARG ;; d) daemons=$OPTARG ;;
	s) set=$OPTARG ;; t) steps=$OPTARG ;; b) budget=$OPTARG ;;
	S) seed=$OPTARG ;; a) napps=$OPTARG ;; l) list=$OPTARG ;; o) out=$OPTARG ;;
	h) usage 0 ;; *) usage ;;
	esac
done
for v in "$launches" "$cycle" "$steps" "$budget" "$seed" "$napps"; do
	case $v in '' | *[!0-9]*) echo "launch.sh: not a number: '$v'" >&2; usage ;; esac
done
[ "$cycle" -ge 2 ] || { echo "launch.sh: the cycle is at least 2 s" >&2; exit 2; }
[ "$budget" -ge 1 ] && [ "$budget" -le 100 ] || { echo "launch.sh: -b is 1..100" >&2; exit 2; }
case $set in synthetic | real) ;; *) echo "launch.sh: -s synthetic|real" >&2; exit 2 ;; esac
IFS=, read -r -a daemon_list <<< "$daemons"
for d in "${daemon_list[@]}"; do
	case $d in none | 0.6.4 | this) ;; *) echo "launch.sh: unknown daemon '$d'" >&2; exit 2 ;; esac
done

[ "$(id -u)" = 0 ] || { echo "launch.sh: needs root (drop_caches, mincore on any file)"; exit 77; }
[ -x "$benchapp" ] || { echo "launch.sh: build first: $benchapp missing"; exit 1; }
case ,$daemons, in *,this,*) [ -x "$ours" ] || { echo "launch.sh: build first: $ours missing"; exit 1; } ;; esac
case ,$daemons, in *,0.6.4,*) [ -x "$theirs" ] ||
	{ echo "launch.sh: needs Debian's preload 0.6.4: apt-get install -y preload"; exit 77; } ;; esac
if [ "$set" = real ]; then
	command -v strace > /dev/null || { echo "launch.sh: -s real needs strace"; exit 77; }
	[ -r "$list" ] || { echo "launch.sh: no program list $list"; exit 1; }
fi
if [ -e "$root" ]; then
	echo "launch.sh: $root exists (another run, or left over): remove it first" >&2
	exit 1
fi
if [ -n "$out" ]; then
	mkdir -p "$out" || exit 1
	work=$(cd "$out" && pwd)
else
	work=$(mktemp -d /var/tmp/preload-launch.XXXXXX) || exit 1
fi

# Everything started here, so that it all stops here, and only that.
started=()
cleanup() {
	local p
	for p in "${started[@]}"; do
		kill -TERM -- "-$p" 2> /dev/null || kill -TERM "$p" 2> /dev/null
	done
	wait 2> /dev/null
	rm -rf "$root"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }

# r = a uniform integer in [LO, HI]. No command substitution: bash
# reseeds RANDOM in a subshell, and the world must follow from the seed.
rnd() { r=$(($1 + RANDOM % ($2 - $1 + 1))); }

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

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
	mkdir -p "$root/bin"
	for g in 0 1 2 3; do
		rnd 6 12; n=$r
		for ((i = 0; i < n; i++)); do
			rnd 128 3072
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
			rnd 8 20; n=$r
			for ((i = 0; i < n; i++)); do
				rnd 128 3072
				echo "mmap $((r / 4 * 4))K $root/app$k/libapp$k-$i.so"
			done
			rnd 4 16
			echo "read ${r}M $root/share/app$k/data.pak"
			rnd 40 100; n=$r
			for ((i = 0; i < n; i++)); do
				rnd 16 256
				echo "read $((r / 4 * 4))K $root/share/app$k/res-$i.dat"
			done
		} > "$m"
		cp "$benchapp" "$root/bin/app$k"
		name[k]=app$k manifest[k]=$m
		keep[k]="exec $root/bin/app$k --sleep \$S $m"
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
}

make_real() {
	local k=0 n s c

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
	while IFS=$'\t' read -r n c s; do
		case $n in '' | '#'*) continue ;; esac
		name[k]=$n run[k]=$c keep[k]=$s
		trace_files "$k"
		k=$((k + 1))
	done < "$list"
	napps=$k
	for ((k = 0; k < napps; k++)); do
		awk -v n="${name[k]}" '{ c[$1]++ } END { printf "%s: %d files mapped, %d read\n", n, c["mmap"], c["read"] }' \
			"${manifest[k]}"
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
	measure_a=()
	for ((i = 0; i < launches; i++)); do
		measure_a+=("${order[i % napps]}")
	done
	{
		for ((i = 0; i < napps; i++)); do
			echo "# ${name[i]} -> ${name[fav[i]]}"
		done
		echo "train ${train[*]}"
		echo "measure ${measure_a[*]}"
	} > "$work/sequence"
}

# ---- running programs -------------------------------------------------------

# Starts program K for S seconds in its own process group; pid in bg.
# With PRIO, at that nice value.
start_keep() { # K S OUTPUT [PRIO]
	(cd "$work" && S=$2 exec nice -n "${4:-0}" setsid bash -c "${keep[$1]}") > "$3" 2>&1 &
	bg=$!
	started+=("$bg")
}

# Waits until a synthetic program has printed its load time (it has
# faulted in its files); sets us.
wait_loaded() { # OUTPUT PID
	local i
	us=
	for ((i = 0; i < 1000; i++)); do
		read -r us < "$1" 2> /dev/null
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
	(cd "$work" && exec nice -n "$prio" bash -c "${run[$1]}") > /dev/null 2>&1
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

# One measured launch of B after A, as described at the top.
measure() { # DAEMON
	local d=$1 i a b apid bpid res warm f
	for ((i = 0; i < launches; i++)); do
		a=${measure_a[i]} b=${fav[a]}
		start_keep "$a" 3600 "$work/out.a"
		apid=$bg
		if [ "$set" = synthetic ]; then
			wait_loaded "$work/out.a" "$apid"
		else
			sleep 1
		fi
		# The daemon sees A: a scan, and half a cycle later the update.
		sleep "$cycle"; sleep 0.5
		drop_caches
		# One full cycle: every daemon predicts and reads ahead once.
		sleep "$cycle"; sleep "$settle"
		res=$("$benchapp" --residency "${manifest[b]}" | awk '{ printf "%s\t%s\t", $2, $3 }')
		f=$(foreign)
		warm=-
		if [ "$set" = synthetic ]; then
			start_keep "$b" "$((cycle + 1))" "$work/out.b" "$prio"
			bpid=$bg
			wait_loaded "$work/out.b" "$bpid"
			[ "$d" = none ] && warm=$(nice -n "$prio" "$root/bin/app$b" "${manifest[b]}")
		else
			time_run "$b"
			[ "$d" = none ] && { local cold=$us; time_run "$b"; warm=$us; us=$cold; }
			start_keep "$b" "$((cycle + 1))" /dev/null
			bpid=$bg
		fi
		printf '%s\t%s\t%d\t%s\t%s\t%s%s\t%s\t%s\n' "$set" "$d" "$i" "${name[a]}" \
			"${name[b]}" "$res" "$us" "$warm" "$f" >> "$work/launches.tsv"
		log "$d launch $i: ${name[a]} -> ${name[b]}: $us us (warm $warm), resident $res"
		# B runs beside A for a cycle, as in the training; then both stop
		# and the daemon sees them stopped before the next launch.
		sleep "$((cycle + 1))"
		stop_group "$apid"
		stop_group "$bpid"
		sleep "$cycle"
	done
}

# ---- the daemons ------------------------------------------------------------

cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13 + $14 + $15) / hz }' "/proc/$1/stat"; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
disk_sectors() { awk -v d="$disk" '$3 == d { print $6 }' /proc/diskstats; }

run_daemon() { # NAME
	local d=$1 t0 s0 sampler cpu=- hwm=- anon=- io=- state=- secs sectors
	local conf="$work/preload.conf" statefile="$work/$1.state"
	dpid=
	drop_caches
	t0=$SECONDS s0=$(disk_sectors)
	case $d in
	0.6.4)
		# Debian's init script runs it in the idle I/O class; this
		# preload puts itself there.
		setsid ionice -c3 "$theirs" -f -c "$conf" -s "$statefile" -l "$work/$d.log" -V 4 &
		dpid=$! ;;
	this)
		setsid "$ours" -f -c "$conf" -s "$statefile" -l "$work/$d.log" -V 4 &
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

summarise() {
	local d cold=- warm=- med
	if grep -q "^$set	none	" "$work/launches.tsv"; then
		cold=$(awk -v s="$set" '$1 == s && $2 == "none" { print $10 }' "$work/launches.tsv" | median)
		warm=$(awk -v s="$set" '$1 == s && $2 == "none" { print $11 }' "$work/launches.tsv" | median)
	fi
	printf 'set\tdaemon\tlaunches\tmedian_us\tcold_us\twarm_us\tgap_closed\tmmap_hit\tread_hit\tall_hit\tcpu_s\tpeak_rss_kb\tpeak_anon_kb\tstate_bytes\tdaemon_read_bytes\tdisk_read_bytes\tseconds\tforeign\n' \
		> "$work/summary.tsv"
	: > "$work/summary.json"
	for d in "${daemon_list[@]}"; do
		med=$(awk -v s="$set" -v d="$d" '$1 == s && $2 == d { print $10 }' "$work/launches.tsv" | median)
		awk -v s="$set" -v d="$d" -v med="$med" -v cold="$cold" -v warm="$warm" \
			-v costs="$(awk -v d="$d" '$1 == d' "$work/daemons.tsv")" '
			function ratio(a, b) { return b > 0 ? sprintf("%.4f", a / b) : "-" }
			$1 == s && $2 == d { n++; mr += $6; mt += $7; rr += $8; rt += $9; f += $12 }
			END {
				split(costs, c, "\t")
				gap = (cold != "-" && warm != "-" && cold - warm > 0) ? sprintf("%.4f", (cold - med) / (cold - warm)) : "-"
				printf "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n",
					s, d, n, med, cold, warm, gap, ratio(mr, mt), ratio(rr, rt),
					ratio(mr + rr, mt + rt), c[3], c[4], c[5], c[6], c[7], c[8], c[2], f
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
		NR == 1 { next }
		NR == 2 {
			printf "%s set: cold %s ms, warm %s ms (medians of the launches without a daemon)\n\n", $1, ms($5), ms($6)
			printf "%-7s %9s %8s %9s %9s %9s %7s %9s %9s %8s %10s %9s\n", "daemon", "median ms",
				"gap", "hit mmap", "hit read", "hit all", "CPU s", "peak RSS", "peak anon",
				"state KB", "daemon rd", "disk rd"
			printf "%-7s %9s %8s %9s %9s %9s %7s %9s %9s %8s %10s %9s\n", "", "", "closed",
				"(bytes)", "(bytes)", "(bytes)", "", "KB", "KB", "", "MB", "MB"
		}
		{
			printf "%-7s %9s %8s %9s %9s %9s %7s %9s %9s %8s %10s %9s%s\n", $2, ms($4), pct($7),
				pct($8), pct($9), pct($10), $11, $12, $13,
				$14 == "-" ? "-" : sprintf("%.1f", $14 / 1024), mb($15), mb($16),
				($18 > 0 ? "  (other preload daemons ran at " $18 " launches)" : "")
		}' "$work/summary.tsv"
}

# ---- main -------------------------------------------------------------------

disk=$(lsblk -no PKNAME "$(findmnt -no SOURCE /)" 2> /dev/null)
[ -n "$disk" ] || disk=$(basename "$(findmnt -no SOURCE /)")
step=$((2 * cycle + 1)) overlap=$((cycle + 1)) settle=1.5
# Measured launches run before other work on the machine: on a shared
# machine, CPU contention otherwise adds more noise than the cache saves.
prio=-10

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
mapprefix = /usr/;/lib;/var/cache/;!/
exeprefix = !/usr/sbin/;!/usr/local/sbin/;/usr/;!/
maxprocs = 30
sortstrategy = 3
EOF

log "results in $work"
if [ "$set" = synthetic ]; then
	log "creating $napps programs under $root"
	make_synthetic
else
	log "tracing the programs of $list"
	make_real
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
print_table | tee "$work/table.txt"
echo "results: $work"
