#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Replays one synthetic scenario over several seeds with several model
# configurations and prints preload's byte ratios per seed and their mean
# (no root, nothing outside a temporary directory). One seed is a few
# hundred starts: differences of a few tenths of a point between models
# need the mean of several. See doc/benchmarks.md, "Sparse chains and
# aging against the full pairwise model".
#
#   replay-seeds.sh [-s SEEDS] [-n CYCLES] [-k DIR] SCENARIO [CONF ...]
#
#   -s  seeds ("1 2 3 4 5 6")
#   -n  cycles per trace (10000)
#   -k  keep the traces in DIR and reuse those already there
#   -b  report shares of the bound
#   -f  score only the starts from cycle N on (preload-replay --from-cycle)
#
# Each CONF is a configuration file for preload-replay -c; without any,
# the full pairwise model of preload 0.6.4 (allpairs = true, halflife =
# 0) and the default model are compared. For each CONF prints one line:
# the mean prefetched / cold / ready ratios by bytes (percent, as in the
# tables of doc/benchmarks.md), then the same for each seed.
#
# With -b, each trace comes with preload-tracegen's --bound file and the
# line gives instead preload's and naive's cold bytes hit as shares of
# the bound's (the true model's forecast filling the same budget): the
# mean and lowest share over the seeds, then each seed's
# preload / naive / bound cold ratios.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top_builddir=${top_builddir:-$(cd "$here/../.." && pwd)}
gen="$top_builddir/src/tools/preload-tracegen"
replay="$top_builddir/src/tools/preload-replay"

seeds="1 2 3 4 5 6" cycles=10000 keep= bound= from=0
while getopts s:n:k:bf: opt; do
	case $opt in
	s) seeds=$OPTARG ;;
	n) cycles=$OPTARG ;;
	k) keep=$OPTARG ;;
	b) bound=1 ;;
	f) from=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
	echo "usage: $0 [-b] [-f N] [-s SEEDS] [-n CYCLES] [-k DIR] SCENARIO [CONF ...]" >&2
	exit 2
fi
scenario=$1
shift
for tool in "$gen" "$replay"; do
	[ -x "$tool" ] || { echo "$tool is not built (set top_builddir)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/preload-seeds.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
traces=${keep:-$tmp}
mkdir -p "$traces" || exit 1
if [ $# -eq 0 ]; then
	printf '[model]\nallpairs = true\nhalflife = 0\n' > "$tmp/pairwise.conf"
	printf '[model]\n' > "$tmp/default.conf"
	set -- "$tmp/pairwise.conf" "$tmp/default.conf"
fi

# The value of "key" in preload's (or $3's) line of a JSON report (one predictor a line).
ratio() {
	sed -n "s/^ *\"${3:-preload}\": {.*\"$2\": \([-0-9.e]*\).*/\1/p" "$1"
}

for conf in "$@"; do
	rows=
	for seed in $seeds; do
		trace="$traces/$scenario-$seed-$cycles.trace"
		if [ ! -s "$trace" ] || { [ -n "$bound" ] && [ ! -s "$trace.bound" ]; }; then
			"$gen" --seed "$seed" --cycles "$cycles" --output "$trace" \
				--bound "$trace.bound" "$scenario" >/dev/null || exit 1
		fi
		"$replay" --quiet --conffile "$conf" --json "$tmp/out.json" --from-cycle "$from" \
			${bound:+--bound "$trace.bound"} "$trace" \
			>/dev/null 2>&1 || { echo "$conf: replay of seed $seed failed" >&2; exit 1; }
		if [ -n "$bound" ]; then
			rows="$rows$seed $(ratio "$tmp/out.json" bound_share_cold_bytes)"
			rows="$rows $(ratio "$tmp/out.json" bound_share_cold_bytes naive)"
			rows="$rows $(ratio "$tmp/out.json" cold_hit_ratio_bytes)"
			rows="$rows $(ratio "$tmp/out.json" cold_hit_ratio_bytes naive)"
			rows="$rows $(ratio "$tmp/out.json" cold_hit_ratio_bytes bound)
"
			continue
		fi
		rows="$rows$seed $(ratio "$tmp/out.json" hit_ratio_bytes)"
		rows="$rows $(ratio "$tmp/out.json" cold_hit_ratio_bytes)"
		rows="$rows $(ratio "$tmp/out.json" ready_ratio_bytes)
"
	done
	if [ -n "$bound" ]; then
		printf '%s' "$rows" | awk -v name="$(basename "$conf")" -v sc="$scenario" '
			NF == 6 {
				n++; s += $2; v += $3
				if (n == 1 || $2 < lo) lo = $2
				if (n == 1 || $3 < nlo) nlo = $3
				seeds = seeds sprintf("  %s: %.2f/%.2f/%.2f", $1, 100 * $4, 100 * $5, 100 * $6)
			}
			END {
				printf "%s %s: share of the bound, cold bytes: preload mean %.1f %% (lowest %.1f), naive %.1f %% (lowest %.1f);%s\n",
				       sc, name, 100 * s / n, 100 * lo, 100 * v / n, 100 * nlo, seeds
			}'
		continue
	fi
	printf '%s' "$rows" | awk -v name="$(basename "$conf")" -v sc="$scenario" '
		NF == 4 {
			n++; h += $2; c += $3; r += $4
			seeds = seeds sprintf("  %s: %.2f/%.2f/%.2f", $1, 100 * $2, 100 * $3, 100 * $4)
		}
		END {
			printf "%s %s: mean %.2f / %.2f / %.2f %%,%s\n", sc, name,
			       100 * h / n, 100 * c / n, 100 * r / n, seeds
		}'
done
