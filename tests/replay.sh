#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regression test of the predictor, through preload-replay:
#   1. a hand-made trace whose scores are worked out below, exactly;
#   2. every synthetic scenario of preload-tracegen, replayed with the
#      default configuration: the hit ratios must stay above floors set a
#      little under what they were when the floors were set (see
#      doc/benchmarks.md), and preload must beat the naive predictor where
#      the scenario has structure (single-user, two-user);
#   3. the generator is deterministic, the one-cycle lookahead of the
#      replay changes no score, and bad input fails the way it should.
#
# Exit 0 pass, 1 fail.

set -u

: "${top_builddir:=.}"
gen="$top_builddir/src/tools/preload-tracegen"
replay="$top_builddir/src/tools/preload-replay"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/preload-replay.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# The value of "key" in the line of predictor $2 (or at the top level if
# $2 is empty) of the JSON report $1; the report puts one predictor a line.
json() {
	if [ -n "$2" ]; then
		sed -n "s/^ *\"$2\": {.*\"$3\": \([-0-9.a-z]*\).*/\1/p" "$1"
	else
		sed -n "s/^  \"$3\": \([-0-9.a-z]*\),*$/\1/p" "$1"
	fi
}

# at_least VALUE FLOOR: VALUE >= FLOOR, as decimals.
at_least() {
	awk -v v="$1" -v f="$2" 'BEGIN { exit !(v != "" && v + 0 >= f + 0) }'
}

# above VALUE OTHER: VALUE > OTHER.
above() {
	awk -v v="$1" -v o="$2" 'BEGIN { exit !(v != "" && o != "" && v + 0 > o + 0) }'
}

expect() {  # report predictor key expected
	got=$(json "$1" "$2" "$3")
	[ "$got" = "$4" ] || fail "$(basename "$1"): $2 $3 is '$got', expected $4"
}

for tool in "$gen" "$replay"; do
	if [ ! -x "$tool" ]; then
		echo "FAIL: $tool is not built"
		exit 1
	fi
done

# ---- 1. a trace small enough to score by hand -----------------------------
#
# Cycle 20 s. Exe a runs throughout; b runs at cycles 0, 2 and 4. a maps
# liba (8 KB) and libc (4 KB), b maps libb (16 KB) and libc. minsize 0
# admits both at cycle 0; usecorrelation off makes the bid exact.
# The budget is 16 KB.
#
# b starts twice (cycles 2 and 4); both times libc is in use by a, libb
# is not: 4 maps, 40960 bytes in all, 2 cold maps.
#
# preload, chain (a, b) states by scan time: both (0), a only (20), both
# (40), a only (60). The prediction of cycle 1 comes from a chain that has
# never left "a only": no bid, nothing selected, start 1 misses. After
# cycle 3: W[1][1] = 1, W[1][3] = 1, tau[1] = 20 s, so b bids
#   p = (1 - exp(-1.5 * 20 / 20)) * (0 + 1) / (1 + 0.01) = 0.769
# libb scores ln(1 - p) = -1.47, libc +1 - 1.47 = -0.47: libb (16 KB)
# fills the budget, libc does not fit. Start 2 hits libb.
#   hit ratio (maps) 1 / 4 = 0.25, (bytes) 16384 / 40960 = 0.4,
#   cold maps 1 / 2 = 0.5, ready (hit or in use) 3 / 4 = 0.75.
# naive: before cycle 2 nothing has started (p = 0 for all, no map
# scores below 0): start 1 misses. Before cycle 4, b has 1 of 1 starts,
# p = 1 (capped): libb first again, libc does not fit. Same as preload.
# oracle: libb both times (16 KB, then libc does not fit):
#   2 / 4 = 0.5, 32768 / 40960 = 0.8, cold 1, ready 1.
# Mean per start, preload: maps (0 + 1/2) / 2 = 0.25, bytes (0 + 0.8) / 2 = 0.4.
{
	printf 'PRELOAD-TRACE\t1\t20\n'
	printf '# made by hand for tests/replay.sh\n'
	printf 'P\t0\tfile:///usr/bin/a\nP\t1\tfile:///usr/bin/b\n'
	printf 'P\t2\tfile:///usr/lib/liba.so\nP\t3\tfile:///usr/lib/libb.so\n'
	printf 'P\t4\tfile:///usr/lib/libc.so\n'
	printf 'C\t0\t-\t-\t-\t-\t-\t2\t0\t1\n'
	printf 'M\t0\t2\t2\t0\t8192\t-\t4\t0\t4096\t-\n'
	printf 'M\t1\t2\t3\t0\t16384\t-\t4\t0\t4096\t-\n'
	printf 'C\t20\t-\t-\t-\t-\t-\t1\t0\n'
	printf 'C\t40\t-\t-\t-\t-\t-\t2\t0\t1\n'
	printf 'C\t60\t-\t-\t-\t-\t-\t1\t0\n'
	printf 'C\t80\t-\t-\t-\t-\t-\t2\t0\t1\n'
	printf 'END\t5\n'
} > "$tmp/hand.trace"
printf '[model]\nminsize = 0\nusecorrelation = false\n' > "$tmp/hand.conf"

"$replay" --quiet --conffile "$tmp/hand.conf" --budget-kb 16 --json "$tmp/hand.json" \
	"$tmp/hand.trace" || fail "replay of the hand-made trace"
expect "$tmp/hand.json" "" cycles 5
expect "$tmp/hand.json" "" starts 2
expect "$tmp/hand.json" "" unscored_starts 0
expect "$tmp/hand.json" "" maps 4
expect "$tmp/hand.json" "" bytes 40960
expect "$tmp/hand.json" "" cold_maps 2
for p in preload naive; do
	expect "$tmp/hand.json" $p hit_ratio_maps 0.250000
	expect "$tmp/hand.json" $p hit_ratio_bytes 0.400000
	expect "$tmp/hand.json" $p cold_hit_ratio_maps 0.500000
	expect "$tmp/hand.json" $p ready_ratio_maps 0.750000
	expect "$tmp/hand.json" $p mean_hit_ratio_maps 0.250000
	expect "$tmp/hand.json" $p mean_hit_ratio_bytes 0.400000
done
expect "$tmp/hand.json" oracle hit_ratio_maps 0.500000
expect "$tmp/hand.json" oracle hit_ratio_bytes 0.800000
expect "$tmp/hand.json" oracle cold_hit_ratio_maps 1.000000
expect "$tmp/hand.json" oracle ready_ratio_maps 1.000000

# The same history recorded by a daemon that already knew a and b from its
# state file: their maps come before the first scan line, and the scan
# lines list both from the start. The replay must admit them from those
# lines at cycle 0 and score exactly the same.
{
	printf 'PRELOAD-TRACE\t1\t20\n'
	printf 'P\t0\tfile:///usr/bin/a\nP\t1\tfile:///usr/bin/b\n'
	printf 'P\t2\tfile:///usr/lib/liba.so\nP\t3\tfile:///usr/lib/libb.so\n'
	printf 'P\t4\tfile:///usr/lib/libc.so\n'
	printf 'M\t0\t2\t2\t0\t8192\t-\t4\t0\t4096\t-\n'
	printf 'M\t1\t2\t3\t0\t16384\t-\t4\t0\t4096\t-\n'
	printf 'C\t1000\t-\t-\t-\t-\t-\t2\t0\t1\n'
	printf 'C\t1020\t-\t-\t-\t-\t-\t1\t0\n'
	printf 'C\t1040\t-\t-\t-\t-\t-\t2\t0\t1\n'
	printf 'C\t1060\t-\t-\t-\t-\t-\t1\t0\n'
	printf 'C\t1080\t-\t-\t-\t-\t-\t2\t0\t1\n'
	printf 'END\t5\n'
} > "$tmp/known.trace"
"$replay" --quiet --conffile "$tmp/hand.conf" --budget-kb 16 --json "$tmp/known.json" \
	"$tmp/known.trace" || fail "replay of the trace with known maps"
grep -v '"trace"\|"seconds"' "$tmp/hand.json" > "$tmp/a"
grep -v '"trace"\|"seconds"' "$tmp/known.json" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "maps known before the first scan change the scores"

# The bound predictor fills the budget by a forecast given with the trace
# (preload-tracegen --bound): here b starts at the next cycle with
# probability 0.5 after cycles 1 and 3, nothing else. libb (16 KB) fills
# the budget both times, before libc (+1 from a, which runs): both starts
# hit libb, as the oracle does: 2 / 4 maps, 32768 / 40960 bytes, every
# cold map. Its share of itself is 1; preload's cold bytes 16384 of its
# 32768, 0.5.
{
	printf 'PRELOAD-BOUND\t1\t20\n'
	printf 'P\t0\tfile:///usr/bin/b\n'
	printf 'B\t0\t0\nB\t20\t1\t0\t0.5\nB\t40\t0\nB\t60\t1\t0\t0.5\nB\t80\t0\n'
	printf 'END\t5\n'
} > "$tmp/hand.bound"
"$replay" --quiet --conffile "$tmp/hand.conf" --budget-kb 16 --bound "$tmp/hand.bound" \
	--json "$tmp/bound.json" "$tmp/hand.trace" || fail "replay with a bound"
expect "$tmp/bound.json" bound hit_ratio_maps 0.500000
expect "$tmp/bound.json" bound hit_ratio_bytes 0.800000
expect "$tmp/bound.json" bound cold_hit_ratio_maps 1.000000
expect "$tmp/bound.json" bound bound_share_cold_bytes 1.000000
expect "$tmp/bound.json" preload bound_share_cold_bytes 0.500000
expect "$tmp/bound.json" preload hit_ratio_bytes 0.400000
# --starts: one line per scored start, after a header. Start 1 (scan 2)
# had no bid and no start before it; start 2 (scan 4), 40 s after b's
# first start, got b's chain bid worked out above, p = 0.769178, first
# of the stopped programs, and hit libb (16384 cold bytes) as the bound
# did with its p = 0.5.
"$replay" --quiet --conffile "$tmp/hand.conf" --budget-kb 16 --bound "$tmp/hand.bound" \
	--starts "$tmp/starts.tsv" "$tmp/hand.trace" || fail "replay --starts"
printf '%s\n' \
	"scan	program	preload_p	preload_rank	bound_p	bound_rank	cold_bytes	preload_cold_hit	bound_cold_hit	last_start	seconds_since" \
	"2	/usr/bin/b	0.000000	0	0.500000	0	16384	0	16384	-	-" \
	"4	/usr/bin/b	0.769178	0	0.500000	0	16384	16384	16384	/usr/bin/b	40" > "$tmp/starts.expected"
cmp -s "$tmp/starts.tsv" "$tmp/starts.expected" || fail "--starts: $(cat "$tmp/starts.tsv")"
# Without a bound there is no bound line; a bound that lacks a scored
# cycle, or is for another cycle length, is an error.
grep -q '"bound"' "$tmp/hand.json" && fail "a bound line without --bound"
grep -v '^B	20	' "$tmp/hand.bound" > "$tmp/short.bound"
"$replay" --quiet --conffile "$tmp/hand.conf" --budget-kb 16 --bound "$tmp/short.bound" \
	"$tmp/hand.trace" 2>/dev/null
[ $? -eq 1 ] || fail "a bound without a scored cycle is not an error"
sed '1s/20$/10/' "$tmp/hand.bound" > "$tmp/other.bound"
"$replay" --quiet --conffile "$tmp/hand.conf" --budget-kb 16 --bound "$tmp/other.bound" \
	"$tmp/hand.trace" 2>/dev/null
[ $? -eq 1 ] || fail "a bound of another cycle length is not an error"
# --from-cycle 3 scores only the start at cycle 4: preload's hit, libb.
"$replay" --quiet --conffile "$tmp/hand.conf" --budget-kb 16 --from-cycle 3 \
	--json "$tmp/from.json" "$tmp/hand.trace" || fail "replay --from-cycle"
expect "$tmp/from.json" "" starts 1
expect "$tmp/from.json" preload hit_ratio_bytes 0.800000

# ---- 2. the scenarios -----------------------------------------------------
#
# scenario cycles: floors for preload's hit ratio (maps), its hit ratio
# on the maps no running exe used (cold) and its share of the bound (cold
# bytes hit over those of the true model's forecast, preload-tracegen
# --bound), and whether it must beat naive on both ratios. Measured with
# seed 1 (preload / naive), with sparse chains, aging, late chains given
# their pair's history, one base rate per exe (basemax), the lift of a
# program that follows another (lift) and the successors of the last
# start and of the other running programs, with the chains damped while
# the order of starts speaks (successor; the defaults):
#   single-user 3000: hit 0.203 / 0.172, cold 0.653 / 0.556, share 0.788
#   two-user    2000: hit 0.353 / 0.284, cold 0.896 / 0.722, share 0.899
#   churn        600: hit 0.202 / 0.193, cold 0.467 / 0.458, share 0.931
#   scale       3000: hit 0.173 / 0.087, cold 0.656 / 0.330, share 0.809
# (churn has no structure to learn: naive may do as well on cold maps).
# With the frequency expert (frequency = true; the defaults now):
#   single-user 3000: hit 0.202 / 0.172, cold 0.650 / 0.556, share 0.781
#   two-user    2000: hit 0.349 / 0.284, cold 0.863 / 0.722, share 0.862
#   churn        600: hit 0.198 / 0.193, cold 0.461 / 0.458, share 0.957
#   scale       3000: hit 0.174 / 0.087, cold 0.658 / 0.330, share 0.808
#   weak        2000: hit 0.267 / 0.275, cold 0.658 / 0.680, share 0.896
# With the last free choice's successors and the session openers in
# case the user went away (prophet_bid_successors(); the defaults now):
#   single-user 3000: hit 0.201, cold 0.650, share 0.789
#   two-user    2000: hit 0.349, cold 0.862, share 0.858
#   churn        600: hit 0.197, cold 0.460, share 0.957
#   scale       3000: hit 0.180, cold 0.655, share 0.808
#   weak        2000: hit 0.265, cold 0.654, share 0.894
# (over 10,000 cycles, seeds 1 to 6, scale gained 0.8 points of the
# bound and weak 0.3, the others moved less than 0.2: NEWS).
# With the handoffs (a start in the scan another program stopped; a
# build's tools, kept out of the order of starts once known):
#   single-user 3000: hit 0.199, cold 0.643, share 0.784
#   two-user    2000: hit 0.349, cold 0.862, share 0.858
#   churn        600: hit 0.198, cold 0.459, share 0.953
#   scale       3000: hit 0.187, cold 0.677, share 0.805
#   weak        2000: hit 0.265, cold 0.654, share 0.894
# Scale's hit and cold floors rose with it (0.175 to 0.18, 0.65 to
# 0.67). Single-user's came down (cold 0.645 to 0.64, share 0.785 to
# 0.78): applications too start in the scan another stops, and at this
# short trace's start a handoff seen once is a habit; over 10,000 cycles
# single-user lost 0.1 points of the bound and scale gained 4.6 (seeds 1
# to 6, NEWS).
# Two-user's floors came down (cold 0.885 to 0.855, share 0.89 to 0.855):
# the weight of the frequency expert starts at 0.5 and this trace is
# short; two-user needs about 300 starts to bring it down to its floor,
# and over 10,000 cycles it loses 0.5 points of the bound (95.9 to 95.4
# %, seeds 1 to 6; doc/benchmarks.md). weak is where ranking by frequency
# does well: without the expert it scored hit 0.245, cold 0.606, share
# 0.824 here, under the floors below.
# Before the running programs' successors and the damping: single-user
# hit 0.198, cold 0.640, share 0.765; two-user 0.361, 0.915, 0.903; churn
# 0.208, 0.454, 0.925; scale 0.181, 0.646, 0.768. The share of the bound
# rose on the 10,000-cycle traces of all four (doc/benchmarks.md); on
# this short two-user trace it fell 0.004, and the hit ratios of two-user
# and scale, which count maps running programs had mapped, fell with
# the chains' bids, so their floors were lowered with them.
# Without successor: single-user hit 0.179, cold 0.578, share 0.691;
# two-user 0.360, 0.912, 0.901; churn 0.195, 0.443, 0.905; scale 0.159,
# 0.599, 0.719 (these traces are short: the share rises with the length
# of the trace as the model learns, see doc/benchmarks.md).
# Before lift: single-user cold 0.584, two-user 0.891, churn 0.443 and
# scale 0.468 (hit 0.123), whose build tools follow one another.
# churn's hit ratio was 0.411 before late chains got their history and
# 0.265 before basemax (cold 0.427): the difference is maps that running
# programs had mapped (resident, which "cold" leaves out), selected
# because the young chains of the 60 programs overbid, each adding its
# program's start rate again.
scenario() {  # name cycles hit_floor cold_floor share_floor beat_naive
	name=$1
	out="$tmp/$name.json"
	if ! "$gen" --seed 1 --cycles "$2" --output "$tmp/$name.trace" \
		--bound "$tmp/$name.bound" "$name" >/dev/null; then
		fail "$name: preload-tracegen"
		return
	fi
	if ! "$replay" --quiet --bound "$tmp/$name.bound" --json "$out" "$tmp/$name.trace"; then
		fail "$name: preload-replay"
		return
	fi
	hit=$(json "$out" preload hit_ratio_maps)
	cold=$(json "$out" preload cold_hit_ratio_maps)
	naive_hit=$(json "$out" naive hit_ratio_maps)
	naive_cold=$(json "$out" naive cold_hit_ratio_maps)
	share=$(json "$out" preload bound_share_cold_bytes)
	echo "$name: preload hit $hit cold $cold share of the bound $share; naive hit $naive_hit cold $naive_cold"
	at_least "$hit" "$3" || fail "$name: preload's hit ratio $hit is below $3"
	at_least "$cold" "$4" || fail "$name: preload's cold hit ratio $cold is below $4"
	at_least "$share" "$5" || fail "$name: preload's share of the bound $share is below $5"
	if [ "$6" = beat ]; then
		above "$hit" "$naive_hit" || fail "$name: preload ($hit) does not beat naive ($naive_hit)"
		above "$cold" "$naive_cold" ||
			fail "$name: preload ($cold) does not beat naive ($naive_cold) on cold maps"
	fi
	# The oracle is an upper bound of everything.
	oracle=$(json "$out" oracle hit_ratio_maps)
	at_least "$oracle" "$hit" || fail "$name: the oracle ($oracle) is below preload ($hit)"
}

scenario single-user 3000 0.195 0.64 0.78 beat
scenario two-user 2000 0.345 0.855 0.855 beat
scenario churn 600 0.195 0.455 0.95 no
scenario scale 3000 0.18 0.67 0.80 no
scenario weak 2000 0.26 0.65 0.89 no
# The bound's first forecasts, by hand: single-user logs in at cycle 0, and
# the first launch comes 1 + G cycles later, G geometric with mean 2: none
# at cycle 1, then with probability 1/2 per cycle. After cycle 1 the
# forecast of cycle 2 is 0.5 * 4/22 for Firefox and Evolution (first
# launches favour them 4 to 1 over the 14 others), 0.5 / 22 for the others.
sed -n 2,3p "$tmp/single-user.bound" | grep -qx 'B	0	0' ||
	fail "the bound of cycle 0 is not empty: $(sed -n 2p "$tmp/single-user.bound")"
grep -q '^B	20	16	0	0.0909091	1	0.0909091	2	0.0227273	' "$tmp/single-user.bound" ||
	fail "the bound of cycle 1: $(grep '^B	20	' "$tmp/single-user.bound" | cut -c1-80)"

# ---- 3. determinism, lookahead, bad input ---------------------------------

"$gen" --seed 1 --cycles 600 --output "$tmp/again.trace" churn >/dev/null
cmp -s "$tmp/churn.trace" "$tmp/again.trace" ||
	fail "the same seed gave two different traces"
"$gen" --seed 2 --cycles 600 --output "$tmp/other.trace" churn >/dev/null
cmp -s "$tmp/churn.trace" "$tmp/other.trace" &&
	fail "seeds 1 and 2 gave the same trace"

# Predicting every cycle, as the daemon does, must not change any score.
"$gen" --seed 3 --cycles 600 --output "$tmp/short.trace" two-user >/dev/null
"$replay" --quiet --json "$tmp/short.json" "$tmp/short.trace" || fail "replay"
"$replay" --quiet --every-cycle --json "$tmp/every.json" "$tmp/short.trace" ||
	fail "replay --every-cycle"
grep -v '"seconds"\|"predictions"' "$tmp/short.json" > "$tmp/a"
grep -v '"seconds"\|"predictions"' "$tmp/every.json" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "--every-cycle changed the scores"

# The full pairwise model, kept for comparison, has a chain per pair of
# the n exes it knows, n (n - 1) / 2; the sparse one far fewer.
printf '[model]\nallpairs = true\n' > "$tmp/pairwise.conf"
"$replay" --quiet --conffile "$tmp/pairwise.conf" --json "$tmp/pairwise.json" \
	"$tmp/short.trace" || fail "replay with allpairs"
n=$(sed -n 's/.*"exes": \([0-9]*\).*/\1/p' "$tmp/pairwise.json")
all=$(sed -n 's/.*"chains": \([0-9]*\).*/\1/p' "$tmp/pairwise.json")
[ -n "$n" ] && [ "$all" = $((n * (n - 1) / 2)) ] || fail "allpairs: $all chains for $n exes"
chains=$(sed -n 's/.*"chains": \([0-9]*\).*/\1/p' "$tmp/short.json")
[ -n "$chains" ] && [ "$chains" -lt "$all" ] || fail "sparse chains: '$chains', expected fewer than $all"

# --save-state writes the model in the daemon's format: a version 5 file
# with as many EXE and MARKOV records as the report counts.
"$replay" --quiet --save-state "$tmp/short.state" --json "$tmp/saved.json" "$tmp/short.trace" ||
	fail "replay --save-state"
head -n 1 "$tmp/short.state" | grep -q "^PRELOAD-STATE	5	" || fail "--save-state: not a version 5 state"
tail -n 1 "$tmp/short.state" | grep -q "^END	" || fail "--save-state: no END line"
exes=$(grep -c "^EXE	" "$tmp/short.state")
markovs=$(grep -c "^MARKOV	" "$tmp/short.state")
[ "$exes" = "$(sed -n 's/.*"exes": \([0-9]*\).*/\1/p' "$tmp/saved.json")" ] ||
	fail "--save-state: $exes EXE records"
[ "$markovs" = "$chains" ] || fail "--save-state: $markovs MARKOV records, $chains chains"
# The order of starts is in it: successors and the last start.
grep -q "^SUCC	" "$tmp/short.state" || fail "--save-state: no SUCC record"
[ "$(grep -c "^ORDER	" "$tmp/short.state")" = 1 ] || fail "--save-state: not one ORDER record"
# So is the frequency expert's weight, which the starts moved from 0.5.
[ "$(grep -c "^EXPERTS	0\.[0-9]" "$tmp/short.state")" = 1 ] &&
	! grep -q "^EXPERTS	0\.5$" "$tmp/short.state" ||
	fail "--save-state: not one EXPERTS record with a learned weight"
# --restart-at: the daemon saves, frees and reloads its model before a
# cycle; what it learned after the restart is saved at the end as well.
"$replay" --quiet --restart-at 300 --save-state "$tmp/restarted.state" "$tmp/short.trace" ||
	fail "replay --restart-at"
grep -q "^SUCC	" "$tmp/restarted.state" || fail "--restart-at: no SUCC record at the end"
"$replay" --quiet --restart-at -1 "$tmp/short.trace" 2>/dev/null &&
	fail "--restart-at -1 accepted"
"$replay" --quiet --save-state "$tmp/no-such-dir/x/../../" "$tmp/short.trace" 2>/dev/null &&
	fail "--save-state to a directory succeeded"

# A trace cut inside a line (a daemon killed mid-write) is scored up to
# the cut, with a warning; a corrupt one is an error.
head -c 2000 "$tmp/hand.trace" | head -c -3 > "$tmp/cut.trace"
if "$replay" --quiet --conffile "$tmp/hand.conf" --budget-kb 16 --json "$tmp/cut.json" \
	"$tmp/cut.trace" 2> "$tmp/cut.err"; then
	grep -q "ends inside a line" "$tmp/cut.err" || fail "no warning for a cut trace"
	expect "$tmp/cut.json" "" complete false
	expect "$tmp/cut.json" "" cycles 4
else
	fail "a cut trace is not scored"
fi
sed 's/^C\t40\t/C\t4x\t/' "$tmp/hand.trace" > "$tmp/bad.trace"
"$replay" --quiet "$tmp/bad.trace" 2> "$tmp/bad.err"
[ $? -eq 1 ] || fail "a corrupt trace does not exit 1"
grep -q "line 12: bad scan time" "$tmp/bad.err" || fail "the error does not name the line: $(cat "$tmp/bad.err")"
"$replay" --quiet "$tmp/no-such.trace" 2>/dev/null
[ $? -eq 1 ] || fail "a missing trace does not exit 1"
"$replay" --budget-kb -5 "$tmp/hand.trace" 2>/dev/null
[ $? -eq 2 ] || fail "a negative budget is not a usage error"
"$gen" no-such-scenario 2>/dev/null
[ $? -eq 2 ] || fail "an unknown scenario is not a usage error"

if [ "$failures" -gt 0 ]; then
	echo "$failures failures"
	exit 1
fi
echo "all replay checks passed"
exit 0
