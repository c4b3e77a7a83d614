#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What reading a program's learned set beside its cold start costs a
# request-limited disk, apart from the daemon (root; run it under the
# machine's page-cache lock). See doc/benchmarks.md, "Few, large requests".
#
#   urgent-cost.sh [-r ROUNDS] [-D IOPS:MBPS] [-p PROGRAMS] -w WORKDIR STATE VARIANT...
#
#   STATE     a state file of this preload that learned the programs (the
#             launch benchmark's DIR/this.state)
#   WORKDIR   the launch benchmark's results directory of a real run (its
#             small.cpp and Wait.class; the programs run there)
#   VARIANT   none (the program alone), or GAP[:MIN]: the program's learned
#             set (every map of its exe) read beside it, a file's ranges
#             merged across GAP bytes, files whose merged ranges total less
#             than MIN bytes left out; GAP "whole" reads whole files
#   -r        rounds (2); -D the throttle (300:100); -p the programs, of
#             perl python g++ node java (all five)
#
# Each launch: the reader (16 threads, files in inode order, each range
# posix_fadvise(WILLNEED) in 2 MiB chunks, each waited for with a one-byte
# read) is started and loads its state first, outside the throttle; the
# page cache is dropped; the reader joins a blkio group throttled to IOPS
# requests and MBPS MB per second and starts 20 ms after the program,
# which runs in the same group. Prints, per launch, the program's wall
# time, the requests and MB the group read while it ran, and the reader's
# files, chunks and MB.
set -u
rounds=2 slow=300:100 progs="perl python g++ node java" work=
while getopts "r:D:p:w:" opt; do
	case $opt in
	r) rounds=$OPTARG ;; D) slow=$OPTARG ;; p) progs=$OPTARG ;; w) work=$OPTARG ;;
	*) sed -n '/^#   urgent-cost.sh/,/^#   -r/p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] && [ -n "$work" ] || { echo "urgent-cost.sh: -w WORKDIR STATE VARIANT..." >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "urgent-cost.sh: needs root"; exit 77; }
state=$(realpath "$1"); shift
throttle=/sys/fs/cgroup/blkio
[ -w "$throttle/blkio.throttle.read_iops_device" ] || { echo "urgent-cost.sh: no cgroup v1 blkio" >&2; exit 77; }
majmin=$(stat -c '%Hd:%Ld' "$(dirname "$(command -v perl)")")
# The throttle acts on whole disks: a partition's parent.
[ -e "/sys/dev/block/$majmin/partition" ] &&
	majmin=$(cat "$(dirname "$(readlink -f "/sys/dev/block/$majmin")")/dev")
cg=$throttle/urgent-cost.$$
mkdir "$cg" || exit 1
tmp=$(mktemp -d)
trap 'rmdir "$cg"; rm -rf "$tmp"' EXIT
echo "$majmin ${slow%:*}" > "$cg/blkio.throttle.read_iops_device"
echo "$majmin $((${slow#*:} * 1000000))" > "$cg/blkio.throttle.read_bps_device"
ios() { awk -v d="$majmin" '$1 == d && $2 == "Read" { print $3 }' "$cg/blkio.throttle.io_serviced"; }
byt() { awk -v d="$majmin" '$1 == d && $2 == "Read" { print $3 }' "$cg/blkio.throttle.io_service_bytes"; }

cat > "$tmp/reader.py" <<'PY'
import collections, os, sys, threading
state, want, variant = sys.argv[1:4]
gap, minb = (variant.split(':') + ['0'])[:2]
minb = int(minb)
files, maps, exes, uses = {}, {}, {}, collections.defaultdict(list)
for line in open(state):
    f = line.rstrip('\n').split('\t')
    if f[0] == 'FILE': files[int(f[1])] = f[6][len('file://'):]
    elif f[0] == 'MAP': maps[int(f[1])] = (int(f[3]), int(f[4]), int(f[5]))
    elif f[0] == 'EXE': exes[int(f[1])] = f[6]
    elif f[0] == 'EXEMAP':
        uses[int(f[1])] += range(int(f[2]), int(f[2]) + int(f[5]))
exe = [k for k, v in exes.items() if v.endswith(want)][0]
byfile = collections.defaultdict(list)
for m in uses[exe]:
    off, length, fi = maps[m]
    byfile[files[fi]].append((off, off + length))
jobs = []
for path, ranges in byfile.items():
    try: st = os.stat(path)
    except OSError: continue
    if gap == 'whole':
        out = [[0, st.st_size]]
    else:
        out = []
        for a, b in sorted(ranges):
            b = min(b, st.st_size)
            if a >= b: continue
            if out and a <= out[-1][1] + int(gap): out[-1][1] = max(out[-1][1], b)
            else: out.append([a, b])
    if out and sum(b - a for a, b in out) >= minb:
        jobs.append(((st.st_dev, st.st_ino), path, out))
jobs.sort()
lock, nxt, done = threading.Lock(), [0], [0, 0]
def work():
    while True:
        with lock:
            i = nxt[0]; nxt[0] += 1
        if i >= len(jobs): return
        fd = os.open(jobs[i][1], os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        for a, b in jobs[i][2]:
            while a < b:
                n = min(2 << 20, b - a)
                os.posix_fadvise(fd, a, n, os.POSIX_FADV_WILLNEED)
                os.pread(fd, 1, a + n - 1)
                with lock: done[0] += 1; done[1] += n
                a += n
        os.close(fd)
print('ready', flush=True)
sys.stdin.readline()
threads = [threading.Thread(target=work) for _ in range(16)]
for t in threads: t.start()
for t in threads: t.join()
print('reader: %d files, %d chunks, %.1f MB' % (len(jobs), done[0], done[1] / 1e6), file=sys.stderr)
PY

declare -A cmd exe
cmd[perl]='/usr/bin/perl -MCPAN -e 1' exe[perl]=/usr/bin/perl
cmd[python]='/usr/bin/python3 -c "import email, json, http.client, decimal, argparse, asyncio"' exe[python]=python3.11
cmd[g++]='/usr/bin/g++ -c -o /dev/null small.cpp' exe[g++]=cc1plus
cmd[node]='/usr/bin/node -e 1' exe[node]=/usr/bin/node
cmd[java]='/usr/bin/java -cp . Wait' exe[java]=/bin/java
cd "$work" || exit 1
export HOME=$work
printf 'round\tprogram\tvariant\tms\trequests\tMB\treader\n'
for ((r = 1; r <= rounds; r++)); do
	for p in $progs; do
		for v in "$@"; do
			if [ "$v" != none ]; then
				rm -f "$tmp/go"; mkfifo "$tmp/go"
				python3 "$tmp/reader.py" "$state" "${exe[$p]}" "$v" < "$tmp/go" > "$tmp/out" 2> "$tmp/err" &
				up=$!
				exec 9> "$tmp/go"
				until grep -q ready "$tmp/out"; do sleep 0.05; done
			fi
			sync; echo 3 > /proc/sys/vm/drop_caches; sleep 0.5
			i0=$(ios) b0=$(byt)
			[ "$v" != none ] && echo "$up" > "$cg/cgroup.procs"
			t0=$(date +%s%N)
			[ "$v" != none ] && (sleep 0.02; echo go >&9) &
			(echo "$BASHPID" > "$cg/cgroup.procs"; exec bash -c "${cmd[$p]}") > /dev/null 2>&1
			t1=$(date +%s%N)
			i1=$(ios) b1=$(byt)
			reader=-
			if [ "$v" != none ]; then
				exec 9>&-
				wait "$up"
				reader=$(tail -1 "$tmp/err")
			fi
			printf '%d\t%s\t%s\t%d\t%d\t%.1f\t%s\n' "$r" "$p" "$v" $(((t1 - t0) / 1000000)) \
				$((i1 - i0)) "$(echo "($b1 - $b0) / 1000000" | bc -l)" "$reader"
		done
	done
done
