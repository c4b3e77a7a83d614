/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Prophet: turns the model into a list of maps to read ahead.
 *
 * For every executable that is not running, each of its chains bids the
 * probability that it starts within the next 1.5 cycles:
 *   p = c * (1 - exp(-1.5 * cycle / tau[s])) * (W[s][y] + W[s][both]) / (W[s][s] + 0.01)
 * with s the chain's state, y the state "only it runs", tau[s] the mean
 * sojourn in s and c = |correlation| (or 1 without usecorrelation). An
 * exe's score is ln P(not needed) = sum of ln(1 - p) over its chains;
 * with basemax the chains in state "neither" count once, with their
 * largest p: they all estimate the same base rate of the exe's starts,
 * not independent evidence (0.6.4 summed them, so an exe's base rate
 * grew with its number of chains and outbid what the running programs
 * predict). With lift, a chain in which only x runs bids for the stopped
 * y at least
 *   lift = (q - base) / (1 - base),  when q > base
 *   q    = (1 - exp(-1.5 * cycle / tau[s])) * (W[s][y] + W[s][both]) / (W[s][s] + 1)
 *   base = (1 - exp(-1.5 * cycle / tau[0])) * (W[0][y] + W[0][both]) / (W[0][0] + 0.01)
 * the chance that y starts now beyond its chance while neither runs, not
 * damped by c: two programs that run one after the other (a script and
 * the interpreter it starts as it ends) seldom run together, so c cut
 * the bid of every such chain to almost nothing, while an unrelated pair
 * has q close to base and no lift. The 1 in q's denominator is one
 * departure of doubt; a chain that has seen y start from state s fewer
 * than 2 times (the first is the one that made the chain), or has no
 * "neither" row, gives no lift. A
 * map's score is the sum, over the exes using it, of the exe's score if
 * it is not running and +1 if it runs (its pages are probably resident).
 * Maps with a score of ln(1 - 1e-4) or less are taken in ascending order
 * while they fit the memory budget. A pair of executables without a chain
 * (see model.h) bids nothing. A chain made late comes with the "neither"
 * row of its pair's whole history (model_link_exe()), so from "neither"
 * it bids what the full pairwise model would: each exe's share of the
 * pair's starts at the rate the pair leaves "neither", a frequency prior
 * weighted by |correlation|; without it a young chain bid as if its one
 * linking start were the rule. With successor, the order in which
 * programs start bids too: prophet_bid_successors() below. With
 * frequency, the result is mixed with each program's share of the starts,
 * at a weight learned from the starts: prophet_bid_frequency() below.
 */
#pragma once

#include <glib.h>

#include "conf.h"
#include "model.h"
#include "power.h"
#include "proc.h"

/*
 * The budget in KB:
 *   max(0, cl(memtotal) * (total/100) + cl(memfree) * (free/100)
 *          + cl(memavailable) * (available/100)) + cl(memcached) * (cached/100)
 * with each percentage clamped to [-100, 100] and divisions rounding down;
 * never negative. memavailable = 0 gives preload 0.6.4's budget.
 */
guint64 prophet_budget_kb(const Conf *conf, const ProcMemstat *mem);

/* Why prefetching is held back this cycle. */
typedef enum {
	PROPHET_PREFETCH = 0,       /* it is not: go ahead */
	PROPHET_PAUSE_AVAILABLE,    /* MemAvailable < minavailable% of MemTotal */
	PROPHET_PAUSE_PRESSURE,     /* PSI memory "some avg10" > maxpressure% */
	PROPHET_PAUSE_BATTERY,      /* on battery with batterybudget = 0 */
} ProphetPause;

/*
 * Whether to prefetch now, given the power source, the memory figures
 * and the kernel's memory pressure (NULL when the kernel has none: then
 * MemAvailable alone decides). The battery rule is checked first (it
 * lasts longest, and plugging in is what ends it), then MemAvailable,
 * then pressure. A memory rule whose key is 0 is off; the battery rule is
 * on only at batterybudget = 0 (1 to 99 scale the budget instead, see
 * prophet_power_budget_kb(); 100 ignores the battery). Both memory
 * comparisons are strict and exact (no rounding): MemAvailable exactly at
 * the floor, or pressure exactly at the limit, still prefetches.
 */
ProphetPause prophet_pause(const Conf *conf, const ProcMemstat *mem, const ProcPressure *pressure,
			   PowerSource power);
/* A short English phrase for the log: "MemAvailable is below 5% of MemTotal", "on battery". */
char *prophet_pause_describe(ProphetPause pause, const Conf *conf);
/*
 * The budget for the power source: budget_kb on AC, batterybudget% of it
 * (rounded down) on battery.
 */
guint64 prophet_power_budget_kb(const Conf *conf, guint64 budget_kb, PowerSource power);

/* How prophet_bid() scores, from the [model] keys of the same names. */
typedef enum {
	PROPHET_CORRELATION = 1 << 0,  /* usecorrelation */
	PROPHET_BASEMAX = 1 << 1,      /* basemax */
	PROPHET_LIFT = 1 << 2,         /* lift */
	PROPHET_SUCCESSOR = 1 << 3,    /* successor */
	PROPHET_ORDER = 1 << 4,        /* the order of starts speaks: chains bid damped */
} ProphetBidFlags;

/*
 * While the order of starts speaks (prophet_order_speaks()), every chain
 * bid is multiplied by this. The chains hold the same evidence as the
 * order at a coarser grain: each running program lifts the programs that
 * ever started while it ran, however long ago it started, and those many
 * lifts, combined, outbid the few likely successors of the last start.
 * Without the chains (0) the base rates of the programs that have no
 * successor bid are lost too, and that cost more than it gained: with 0,
 * 0.1, 0.3 and 0.5 single-user scored 83.7, 89.6, 90.5 and 90.5 % of the
 * bound, and 0.3 raised all four replayed scenarios (NEWS, "The running
 * programs' successors").
 */
#define PROPHET_CHAIN_DAMP 0.3

/*
 * The weight of the successors of the other running programs beside
 * those of the last start. The last start is not always what the user
 * works in: a switch to an open window shows in no scan, and what starts
 * next follows that window; a build's tools start between the user's
 * programs and stand in for the last start meanwhile.
 */
#define PROPHET_RUNNING_SUCC 0.3

/*
 * Whether the order of starts speaks now: a program started within
 * model_quiet() (no quiet spell since), gaps of that kind were seen, and
 * the last start has successors. Then prophet_score() passes
 * PROPHET_ORDER (with successor = true).
 */
gboolean prophet_order_speaks(const Model *model);

/*
 * The bids of the order of starts (successor = true; model.h, Exe.succ),
 * once per scoring, for stopped exes only. Within model_quiet() of the
 * last start x, each exe y that followed x bids
 *   p = (1 - exp(-1.5 * cycle / g)) * count / (chances + 1)
 * with count the starts of y that followed x, chances the successions
 * of x during which y was stopped (a running program cannot start) and
 * g the mean gap between starts that came within model_quiet(): the
 * chance that the next start comes within 1.5 cycles and is y. Every
 * other running program z bids as well for its own successors, the same
 * bid times PROPHET_RUNNING_SUCC (each a bid of its own). After
 * that quiet spell, each exe that opened sessions bids
 *   p = (1 - exp(-1.5 * cycle / g')) * quiet_starts / (all quiet starts + 1)
 * with g' the mean time quiet spells lasted beyond model_quiet(). No
 * start yet, or no gap of the kind needed: no bid. Each bid explains
 * itself in one line ("gedit: next after evince in 5 of its 9 chances").
 *
 * Within model_quiet(), two more sources bid, each a bid of its own:
 * - model->free_start, the last start that was not a habit of the start
 *   before it (model_is_habit()), when it is not the last start: its
 *   successors bid as the last start's do. A run of habitual starts (a
 *   build's tools, each the habit of the one before) is a second stream
 *   beside the user's: the user's next application follows the user's
 *   last free choice, not the tool that started last.
 * - each session opener y, the quiet bid's share at the soon gap's rate,
 *   times a = prophet_away_chance(): p_next * a * quiet_starts / (all
 *   quiet starts + 1). The user may have gone away just after the last
 *   start; then the next start opens a session.
 */
void prophet_bid_successors(Model *model, gint64 cycle);

/*
 * The bids of the handoffs (successor = true; model.h, ExeHandoff), once
 * per scoring, for stopped exes only: each running exe x bids, for each
 * exe y that started as x stopped by habit (model_is_handoff_habit()),
 *   p = (1 - exp(-1.5 * cycle / r)) * count / (stops + 1)
 * with r x's mean run (Exe.run_time / Exe.stops, at least a second) and count
 * y's starts at x's stops: the chance that x stops within 1.5 cycles and
 * y starts as it does, each a bid of its own. The order of starts learns
 * a build's tools one build late (a first sight is no start) and from
 * whatever started last; the handoff is learned at the first build and
 * knows when the next tool comes. Explained in one line ("may start as
 * tool03 stops, which runs: started as it stopped at 1 of its 1 stops").
 */
void prophet_bid_handoffs(Model *model, gint64 cycle);

/*
 * The chance that the user went away after the last start, given that
 * nothing started for t seconds since: with q the share of the gaps
 * between starts that were quiet spells (n_quiet_gaps / (n_quiet_gaps +
 * n_soon_gaps)) and g the mean soon gap,
 *   a = q / (q + (1 - q) exp(-t / g))
 * (Bayes, soon gaps taken as exponential, a quiet spell as not yet over).
 * 0 before any start or while either kind of gap is unseen.
 */
double prophet_away_chance(const Model *model);

/*
 * The frequency expert (frequency = true), once per scoring after every
 * other bid. The bids so far are one expert, the model: P_M(y) = 1 -
 * exp(lnprob) for each stopped exe y, summing to M over them. The other
 * is how often each program starts: y's share F(y) = starts(y) / (the
 * starts of every stopped exe; Exe.starts). Each stopped exe is then
 * needed with
 *   P(y) = (1 - w) P_M(y) + w F(y) mass
 * with w = Model.freq_weight and mass = M, or the chance of a start
 * within 1.5 cycles at the mean gap between starts while M = 0: the two
 * experts' opinions as distributions over the next start, mixed, at the
 * model's total. Each exe keeps its two shares, P_M(y) / M and F(y)
 * (Exe.expert_model, expert_freq), and its start moves w towards the
 * expert that foretold it better (model.h, MODEL_FREQ_STEP): where the
 * order of starts says little, frequency ranks the programs; where it
 * says much, the model does. An exe whose P stays below PROPHET_MIN_PROB
 * and had no bid gets none (its maps would not be read anyway).
 */
void prophet_bid_frequency(Model *model, gint64 cycle);

/*
 * Adds the bids of one chain to its stopped exes' lnprob (and lists those
 * exes in model->scored_exes). With PROPHET_ORDER, each bid is multiplied
 * by PROPHET_CHAIN_DAMP (after the lift). With PROPHET_BASEMAX, a bid from state
 * "neither" only raises the exe's largest such bid of this scoring
 * (Exe.base_bid) and its lnprob by the difference. With PROPHET_LIFT, a
 * bid from a state where the other exe runs is at least its lift (see
 * the top of this file).
 */
void prophet_bid(Model *model, const Markov *markov, gint64 cycle, ProphetBidFlags flags);

/*
 * Recomputes the scores: every chain bids (damped while the order of
 * starts speaks, with successor), then the successors and the handoffs, then the frequency
 * expert is mixed in (with frequency), then the maps of the running
 * exes and of the exes that got a bid are scored and listed in
 * model->candidates. Every exe and map not listed (in model->scored_exes
 * or model->candidates) has lnprob 0: the work follows the chains and the
 * exes that matter this cycle, not the size of the model. Stale maps are
 * never scored.
 */
void prophet_score(Model *model, const Conf *conf);

/*
 * The least probability of being needed soon for which a map is read
 * ahead. Every pair with a chain bids something, and with many known
 * executables most of the maps carry bids of a few in a million: read
 * ahead whenever the budget allows, they would cost a file open and a
 * cache check each, every cycle, for nothing. A map with a bid of 1 in
 * 10,000 or more is read ahead as before (0.6.4 took any map with a
 * score below 0); the replayed scenarios select the same maps either way.
 */
#define PROPHET_MIN_PROB 1e-4

/*
 * The maps of model->candidates needed with a probability of at least
 * PROPHET_MIN_PROB (lnprob <= ln(1 - PROPHET_MIN_PROB)) that are not
 * stale, most
 * likely first (ties broken by path, offset, length: Map.rank, updated
 * here if maps came or went), chosen greedily: a map whose
 * ceil(length/1024) KB does not fit the remaining budget is skipped and
 * smaller ones after it may still be taken. Returns a GPtrArray of Map *
 * (borrowed); *used_kb gets the total.
 */
GPtrArray *prophet_select(Model *model, guint64 budget_kb, guint64 *used_kb);

/* P(exe is needed soon) = 1 - exp(lnprob), for the dump. */
double prophet_exe_probability(const Exe *exe);
