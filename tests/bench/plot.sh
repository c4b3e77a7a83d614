#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Plots the launch benchmark's results: for each daemon, the byte hit
# ratio of the mapped and of the read() files and the share of the
# cold-to-warm gap it closed (gnuplot, apt-get install -y gnuplot-nox).
#
#   plot.sh [-o OUTPUT.png] SUMMARY.TSV...   (default output: doc/launch.png)
#
# Each SUMMARY.TSV is a summary.tsv that tests/bench/launch.sh wrote; each
# set of programs in them (synthetic, real) gets its own panel.
set -u

here=$(cd "$(dirname "$0")" && pwd)
png=$here/../../doc/launch.png
if [ "${1:-}" = -o ]; then
	png=${2:?usage: plot.sh [-o OUTPUT.png] SUMMARY.TSV...}
	shift 2
fi
[ $# -gt 0 ] || { echo "usage: plot.sh [-o OUTPUT.png] SUMMARY.TSV..." >&2; exit 2; }
command -v gnuplot > /dev/null || { echo "plot.sh: needs gnuplot (apt-get install -y gnuplot-nox)"; exit 77; }

data=$(mktemp)
trap 'rm -f "$data"' EXIT
# set, daemon, then percentages: hit mmap, hit read, gap closed ("-" -> 0)
awk -F'\t' '$1 != "set" {
	printf "%s\t%s", $1, $2
	split("8 9 7", col, " ")
	for (i = 1; i <= 3; i++) printf "\t%.1f", ($col[i] == "-" ? 0 : 100 * $col[i])
	printf "\n"
}' "$@" > "$data"
sets=$(cut -f1 "$data" | awk '!seen[$0]++' | tr '\n' ' ')
n=$(echo $sets | wc -w)
# Room for a gap below 0 % or above 100 % (a daemon slower than none).
range=$(awk -F'\t' '{ for (i = 3; i <= 5; i++) { if ($i < lo) lo = $i; if ($i > hi) hi = $i } }
	END { printf "%d:%d", (lo < 0 ? lo : 0) - 12, (hi > 100 ? hi : 100) + 12 }' "$data")
[ "$n" -gt 0 ] || { echo "plot.sh: no results in $*"; exit 1; }

{
	echo "set terminal pngcairo size $((520 * n + 80)),440 font 'sans,10'"
	echo "set output '$png'"
	echo "set multiplot layout 1,$n"
	echo "set style data histograms"
	echo "set style histogram clustered gap 1"
	echo "set style fill solid 0.85 border -1"
	echo "set boxwidth 0.9"
	echo "set yrange [$range]"
	echo "set ytics 0,20,100"
	echo "set grid ytics"
	echo "set ylabel 'percent'"
	echo "set key top left"
	echo "set datafile separator '\t'"
	for s in $sets; do
		echo "set title '$s programs: prefetched bytes and start-up gap closed'"
		echo "plot '< grep \"^$s	\" $data' using 3:xtic(2) title 'hit ratio, mapped files' lc rgb '#3a6ea5', \\"
		echo "     '' using 4 title 'hit ratio, read() files' lc rgb '#88b04b', \\"
		echo "     '' using 5 title 'cold-to-warm gap closed' lc rgb '#d9822b', \\"
		echo "     '' using (\$0 - 0.27):(\$3 + 4):(sprintf('%.0f', \$3)) with labels notitle, \\"
		echo "     '' using 0:(\$4 + 4):(sprintf('%.0f', \$4)) with labels notitle, \\"
		echo "     '' using (\$0 + 0.27):(\$5 + (\$5 < 0 ? -4 : 4)):(sprintf('%.0f', \$5)) with labels notitle"
	done
	echo "unset multiplot"
} | gnuplot || exit 1
echo "wrote $png"
