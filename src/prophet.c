/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The prophet turns what the model has learned into a shopping list for
 * readahead, once per cycle: every chain bids, for each of its exes that
 * is not running, the probability that the exe starts within the next
 * 1.5 cycles; the bids combine into a score ln P(not needed) per exe and
 * per map; the maps most likely needed are taken while they fit a memory
 * budget derived from /proc/meminfo figures the caller passes in.
 *
 * Like the model it is pure arithmetic: no I/O, no clock, no logging, so
 * every number can be checked by hand in the tests. The formulas are the
 * ones at the top of prophet.h (from preload 0.6.4), with guards so that
 * inconsistent counters (from an old or edited state file) give a finite,
 * clamped score instead of NaN or -inf.
 */
#include "config.h"

#include "prophet.h"

#include <math.h>

/*
 * Largest bid. A bid of exactly 1 would make ln(1 - p) = -inf, and one
 * -inf would swamp every other score and survive every later sum; 1e-9
 * short of certainty gives ln(1e-9) ~ -20.7, which still outranks any
 * realistic bid.
 */
#define PROPHET_MAX_BID (1.0 - 1e-9)

/*
 * meminfo figures are KB; each term of the budget is at most 100 times
 * one of them over 100. Capping each figure/100 here keeps the sum of the
 * four terms inside gint64 (4 * 100 * G_MAXINT64/400) even for absurd
 * (hostile) inputs, and is still thousands of petabytes.
 */
#define PROPHET_KB_CAP (G_MAXINT64 / 400)

static gint64
budget_term(gint64 percent, guint64 kb)
{
	guint64 hundredths = kb / 100;  /* rounds down, as in 0.6.4 */

	if (hundredths > (guint64)PROPHET_KB_CAP)
		hundredths = PROPHET_KB_CAP;
	return CLAMP(percent, -100, 100) * (gint64)hundredths;
}

guint64
prophet_budget_kb(const Conf *conf, const ProcMemstat *mem)
{
	gint64 avail;

	g_return_val_if_fail(conf != NULL, 0);
	g_return_val_if_fail(mem != NULL, 0);

	/*
	 * The MemTotal, MemFree and MemAvailable terms together cannot go
	 * below zero; the Cached term is added after that (and may take it
	 * below zero again, which means no budget at all). MemAvailable sits
	 * inside the max() because it is a measure of room, like MemFree,
	 * while Cached is 0.6.4's separate allowance for evictable cache.
	 */
	avail = budget_term(conf->memtotal, mem->total) +
		budget_term(conf->memfree, mem->free) +
		budget_term(conf->memavailable, mem->available);
	avail = MAX(avail, 0);
	avail += budget_term(conf->memcached, mem->cached);
	return avail > 0 ? (guint64)avail : 0;
}

/*
 * ceil(kb * percent / 100) without overflow, for percent in [0, 100]:
 * kb = 100q + r gives q * percent + ceil(r * percent / 100), and r *
 * percent < 10000. An integer a is below kb * percent / 100 exactly when
 * it is below this ceiling.
 */
static guint64
percent_of_ceil(guint64 kb, gint64 percent)
{
	guint64 p = (guint64)CLAMP(percent, 0, 100);

	return kb / 100 * p + (kb % 100 * p + 99) / 100;
}

ProphetPause
prophet_pause(const Conf *conf, const ProcMemstat *mem, const ProcPressure *pressure,
	      PowerSource power)
{
	g_return_val_if_fail(conf != NULL, PROPHET_PREFETCH);
	g_return_val_if_fail(mem != NULL, PROPHET_PREFETCH);

	if (power == POWER_BATTERY && conf->batterybudget == 0)
		return PROPHET_PAUSE_BATTERY;
	if (conf->minavailable > 0 &&
	    mem->available < percent_of_ceil(mem->total, conf->minavailable))
		return PROPHET_PAUSE_AVAILABLE;
	/* some_avg10 is in hundredths of a percent; maxpressure <= 100 cannot overflow. */
	if (conf->maxpressure > 0 && pressure &&
	    pressure->some_avg10 > (guint64)conf->maxpressure * 100)
		return PROPHET_PAUSE_PRESSURE;
	return PROPHET_PREFETCH;
}

char *
prophet_pause_describe(ProphetPause pause, const Conf *conf)
{
	g_return_val_if_fail(conf != NULL, NULL);

	switch (pause) {
	case PROPHET_PAUSE_AVAILABLE:
		return g_strdup_printf("MemAvailable is below %" G_GINT64_FORMAT "%% of MemTotal",
				       conf->minavailable);
	case PROPHET_PAUSE_PRESSURE:
		return g_strdup_printf("memory pressure (PSI some avg10) is above %" G_GINT64_FORMAT "%%",
				       conf->maxpressure);
	case PROPHET_PAUSE_BATTERY:
		return g_strdup("on battery");
	case PROPHET_PREFETCH:
	default:
		return g_strdup("memory is available");
	}
}

guint64
prophet_power_budget_kb(const Conf *conf, guint64 budget_kb, PowerSource power)
{
	guint64 p;

	g_return_val_if_fail(conf != NULL, budget_kb);

	if (power != POWER_BATTERY)
		return budget_kb;
	/* floor(budget_kb * p / 100) without overflow, as percent_of_ceil(). */
	p = (guint64)CLAMP(conf->batterybudget, 0, 100);
	return budget_kb / 100 * p + budget_kb % 100 * p / 100;
}

/* Notes that exe got a bid this scoring, so the next one resets it. */
static void
touch_exe(Model *model, Exe *exe)
{
	if (exe->score_stamp == model->score_stamp)
		return;
	exe->score_stamp = model->score_stamp;
	exe->lnprob = 0;
	exe->base_bid = 0;
	g_ptr_array_add(model->scored_exes, exe);
}

/*
 * Adds ln(1 - p) for one bid, p clamped to [0, PROPHET_MAX_BID]. A base
 * bid replaces the exe's base bid so far if it is larger: lnprob holds
 * ln(1 - the largest) once, whatever the order of the chains.
 */
static void
bid_for(Model *model, Exe *exe, double p, gboolean base)
{
	if (!(p > 0))  /* also NaN */
		return;
	touch_exe(model, exe);
	p = MIN(p, PROPHET_MAX_BID);
	if (!base) {
		exe->lnprob += log1p(-p);
	} else if (p > exe->base_bid) {
		exe->lnprob += log1p(-p) - log1p(-exe->base_bid);
		exe->base_bid = p;
	}
}

/* P(leaving a state of mean sojourn tau within 1.5 cycles), exponential. */
static double
p_leave(gint64 cycle, double tau)
{
	return -expm1(-1.5 * (double)cycle / tau);
}

/*
 * Starts of y from "only its partner runs" (aged) a chain must have seen
 * before it lifts y. A chain is made when its programs first run together
 * or one follows the other, so the start that made it is no evidence of
 * a habit: with one start enough, every build tool that once started
 * while an editor ran was lifted by the editor's chain, and the tools'
 * many small lifts crowded the applications out of the budget.
 */
#define LIFT_MIN_STARTS 2.0

/*
 * The lift of a chain in state s, where only y's partner runs: how much
 * more likely y is to start now than when neither runs, as a bid of its
 * own, (q - base) / (1 - base), or 0. q is the state's bid without the
 * correlation factor and with one departure of doubt added to W[s][s]:
 * a departure or two that started y are not yet a habit. base is the bid
 * of state "neither" for y, undamped. Without a usable "neither" row the
 * lift is unknown and 0: a partner that never stops (a daemon) would
 * otherwise lift every program to its base rate once per such chain.
 */
static double
lift_bid(const Markov *markov, int s, int y, gint64 cycle)
{
	const float *w = markov->weight[s];
	const float *wn = markov->weight[MARKOV_NEITHER];
	double taun = markov->time_to_leave[MARKOV_NEITHER];
	double q, base;

	if (!(wn[MARKOV_NEITHER] > 0) || !(taun >= 1) ||
	    !(w[y] + w[MARKOV_BOTH] >= LIFT_MIN_STARTS))
		return 0;
	q = p_leave(cycle, markov->time_to_leave[s]) *
	    (w[y] + w[MARKOV_BOTH]) / (w[s] + 1.0);
	base = p_leave(cycle, taun) *
	       (wn[y] + wn[MARKOV_BOTH]) / (wn[MARKOV_NEITHER] + 0.01);
	if (!(q > base) || !(base < 1))
		return 0;
	return (q - base) / (1 - base);
}

void
prophet_bid(Model *model, const Markov *markov, gint64 cycle, ProphetBidFlags flags)
{
	const float *w;
	double tau, corr, p_change;
	gboolean base;
	int s;

	g_return_if_fail(model != NULL);
	g_return_if_fail(markov != NULL);

	s = markov->state;
	if (s < MARKOV_NEITHER || s > MARKOV_BOTH)
		return;
	w = markov->weight[s];
	tau = markov->time_to_leave[s];
	/*
	 * Nothing is known about leaving a state never left, and a mean
	 * sojourn under a second is an artefact (the model clock counts whole
	 * seconds and a real sojourn lasts at least one step of it), not a
	 * basis for prediction. 0.6.4 required more than a second, which at
	 * its 10-second steps meant the same; at a 1-second cycle it threw
	 * away every state left after one cycle.
	 */
	if (!(w[s] > 0) || !(tau >= 1))
		return;

	/* A negative correlation is evidence too: either way they are linked. */
	corr = (flags & PROPHET_CORRELATION) ? fabs(markov_correlation(model, markov)) : 1.0;
	p_change = p_leave(cycle, tau);

	base = (flags & PROPHET_BASEMAX) && s == MARKOV_NEITHER;

	/* P_next: the share of departures from s that led to y running. */
	for (int y = MARKOV_A; y <= MARKOV_B; y++) {
		Exe *exe = y == MARKOV_A ? markov->a : markov->b;
		double p;

		if (exe_is_running(model, exe))
			continue;
		p = corr * p_change * (w[y] + w[MARKOV_BOTH]) / (w[s] + 0.01);
		/*
		 * The correlation factor damps every chain of two programs that
		 * run one after the other (a script's interpreter after its
		 * launcher), since they seldom run together; the lift is not
		 * damped, and it is 0 for a pair that runs independently.
		 */
		if ((flags & PROPHET_LIFT) && s != MARKOV_NEITHER)
			p = MAX(p, lift_bid(markov, s, y, cycle));
		if (flags & PROPHET_ORDER)
			p *= PROPHET_CHAIN_DAMP;
		bid_for(model, exe, p, base);
	}
}

/* Whether the last start was model_quiet() seconds ago or more (and that is known). */
static gboolean
quiet_since_last_start(const Model *model)
{
	double quiet = model_quiet(model);

	return quiet > 0 && (double)(model->time - model->last_start_time) >= quiet;
}

gboolean
prophet_order_speaks(const Model *model)
{
	g_return_val_if_fail(model != NULL, FALSE);

	return model->last_start && !quiet_since_last_start(model) && model->n_soon_gaps > 0 &&
	       model->last_start->succ->len > 0;
}

/* The bids of exe's stopped successors: p_next * count / (chances + 1) each. */
static void
bid_successors_of(Model *model, const Exe *exe, double p_next)
{
	for (guint i = 0; i < exe->succ->len; i++) {
		const ExeSucc *s = &g_array_index(exe->succ, ExeSucc, i);

		if (!exe_is_running(model, s->next))
			bid_for(model, s->next, p_next * s->count / (s->chances + 1), FALSE);
	}
}

double
prophet_away_chance(const Model *model)
{
	double q, gap, t;

	g_return_val_if_fail(model != NULL, 0.0);

	if (!model->last_start || !(model->n_quiet_gaps > 0) || !(model->n_soon_gaps > 0))
		return 0.0;
	q = model->n_quiet_gaps / (model->n_quiet_gaps + model->n_soon_gaps);
	gap = MAX(model->soon_gaps / model->n_soon_gaps, 1.0);
	t = MAX((double)(model->time - model->last_start_time), 0.0);
	return q / (q + (1 - q) * exp(-t / gap));
}

void
prophet_bid_successors(Model *model, gint64 cycle)
{
	const Exe *x;
	double p_next, away;

	g_return_if_fail(model != NULL);

	x = model->last_start;
	if (!x)
		return;
	if (quiet_since_last_start(model)) {
		/* Quiet for long: what starts next opens a session. */
		if (!(model->n_quiet_gaps > 0))
			return;
		p_next = p_leave(cycle, MAX(model->quiet_gaps / model->n_quiet_gaps, 1.0));
		for (guint i = 0; i < model->quiet_exes->len; i++) {
			Exe *y = g_ptr_array_index(model->quiet_exes, i);

			if (!exe_is_running(model, y))
				bid_for(model, y, p_next * y->quiet_starts / (model->quiet_total + 1), FALSE);
		}
		return;
	}
	if (!(model->n_soon_gaps > 0))
		return;
	p_next = p_leave(cycle, MAX(model->soon_gaps / model->n_soon_gaps, 1.0));
	bid_successors_of(model, x, p_next);
	/* The last free choice, when habits (a build's tools) started since. */
	if (model->free_start && model->free_start != x)
		bid_successors_of(model, model->free_start, p_next);
	/* The user may have gone away after the last start: a session may open next. */
	away = prophet_away_chance(model);
	for (guint i = 0; away > 0 && i < model->quiet_exes->len; i++) {
		Exe *y = g_ptr_array_index(model->quiet_exes, i);

		if (!exe_is_running(model, y))
			bid_for(model, y, away * p_next * y->quiet_starts / (model->quiet_total + 1), FALSE);
	}
	/* The other running programs, at a lower weight (PROPHET_RUNNING_SUCC). */
	for (guint r = 0; r < model->running->len; r++) {
		const Exe *z = g_ptr_array_index(model->running, r);

		if (z != x)
			bid_successors_of(model, z, PROPHET_RUNNING_SUCC * p_next);
	}
}

void
prophet_bid_handoffs(Model *model, gint64 cycle)
{
	g_return_if_fail(model != NULL);

	for (guint r = 0; r < model->running->len; r++) {
		const Exe *x = g_ptr_array_index(model->running, r);
		double p_stop, run;

		if (x->handoff->len == 0 || !(x->stops > 0))
			continue;
		/* Its runs' mean, the one still going counted so far (exponential, censored). */
		run = x->run_time + (double)MAX(model->time - x->change_timestamp, 0);
		p_stop = p_leave(cycle, MAX(run / x->stops, 1.0));
		for (guint i = 0; i < x->handoff->len; i++) {
			const ExeHandoff *h = &g_array_index(x->handoff, ExeHandoff, i);

			if (model_is_handoff_habit(x, h) && !exe_is_running(model, h->next))
				bid_for(model, h->next, p_stop * h->count / (x->stops + 1), FALSE);
		}
	}
}

void
prophet_bid_frequency(Model *model, gint64 cycle)
{
	GHashTableIter iter;
	gpointer value;
	double sum_model = 0, stopped_starts = 0, mass, w;

	g_return_if_fail(model != NULL);

	/* The model's total over the stopped exes: only the scored ones have bids. */
	for (guint i = 0; i < model->scored_exes->len; i++) {
		const Exe *exe = g_ptr_array_index(model->scored_exes, i);

		if (!exe_is_running(model, exe))
			sum_model += -expm1(exe->lnprob);
	}
	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		const Exe *exe = value;

		if (exe->starts > 0 && !exe_is_running(model, exe))
			stopped_starts += exe->starts;
	}
	if (sum_model > 0)
		mass = sum_model;
	else if (model->n_start_gaps > 0)
		mass = p_leave(cycle, MAX(model->start_gaps / model->n_start_gaps, 1.0));
	else
		mass = 0;
	w = CLAMP(model->freq_weight, 0.0, 1.0);

	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		Exe *exe = value;
		gboolean scored = exe->score_stamp == model->score_stamp;
		double p_model, f, p;

		if (exe_is_running(model, exe))
			continue;
		p_model = scored ? -expm1(exe->lnprob) : 0;
		f = stopped_starts > 0 && exe->starts > 0 ? exe->starts / stopped_starts : 0;
		if (!(p_model > 0) && !(f > 0))
			continue;
		exe->expert_model = sum_model > 0 ? (float)(p_model / sum_model) : 0;
		exe->expert_freq = (float)f;
		exe->expert_stamp = model->score_stamp;
		p = (1 - w) * p_model + w * f * mass;
		if (!scored && !(p >= PROPHET_MIN_PROB))
			continue;
		touch_exe(model, exe);
		exe->lnprob = log1p(-MIN(p, PROPHET_MAX_BID));
	}
}

/*
 * prophet_score() asks for a chain this many chains before its bid, and
 * for its exes half as many before.
 */
#define PREFETCH_RING 16

/*
 * How many uses ahead of its scoring prophet_score() asks for a map. The
 * uses of one exe are an array, but the maps they name are scattered
 * over the heap: waiting for each map's line was most of the time of the
 * map loop at 1,000 exes.
 */
#define USE_PREFETCH_AHEAD 12

/* A position in the uses (ExeMap) of a list of exes, walked ahead of the scoring. */
typedef struct UseCursor {
	const GPtrArray *exes;
	guint exe, use;
} UseCursor;

/*
 * Asks for the map of the cursor's use and moves to the next one. On
 * reaching an exe it asks, a step per exe ahead, for what the walk needs
 * next: the struct three exes on, the use array header two on, the uses
 * of the next one.
 */
static inline void
use_cursor_prefetch_next(UseCursor *c)
{
	while (c->exe < c->exes->len) {
		const Exe *exe = g_ptr_array_index(c->exes, c->exe);

		if (c->use < exe->exemaps->len) {
			const Map *map = g_array_index(exe->exemaps, ExeMap, c->use).map;

			c->use++;
			__builtin_prefetch(&map->prophet.lnprob, 1);
			return;
		}
		c->exe++;
		c->use = 0;
		if (c->exe + 3 < c->exes->len)
			__builtin_prefetch(g_ptr_array_index(c->exes, c->exe + 3));
		if (c->exe + 2 < c->exes->len)
			__builtin_prefetch(((const Exe *)g_ptr_array_index(c->exes, c->exe + 2))->exemaps);
		if (c->exe + 1 < c->exes->len)
			__builtin_prefetch(((const Exe *)g_ptr_array_index(c->exes, c->exe + 1))->exemaps->data);
	}
}

static void
use_cursor_init(UseCursor *c, const GPtrArray *exes)
{
	*c = (UseCursor){ exes, 0, 0 };
	for (guint i = 1; i <= 3 && i < exes->len; i++)
		__builtin_prefetch(g_ptr_array_index(exes, i));
	for (guint i = 0; i < USE_PREFETCH_AHEAD; i++)
		use_cursor_prefetch_next(c);
}

/* Adds to a map's score, resetting it first if this scoring has not yet. */
static void
score_map(Model *model, Map *map, double lnprob)
{
	if (map->prophet.score_stamp != model->score_stamp) {
		map->prophet.score_stamp = model->score_stamp;
		map->prophet.lnprob = 0;
		g_ptr_array_add(model->candidates, map);
	}
	map->prophet.lnprob += lnprob;
}

void
prophet_score(Model *model, const Conf *conf)
{
	Markov *ring[PREFETCH_RING];
	UseCursor ahead;
	ProphetBidFlags flags = 0;

	g_return_if_fail(model != NULL);
	g_return_if_fail(conf != NULL);

	if (conf->usecorrelation)
		flags |= PROPHET_CORRELATION;
	if (conf->basemax)
		flags |= PROPHET_BASEMAX;
	if (conf->lift)
		flags |= PROPHET_LIFT;
	if (conf->successor)
		flags |= PROPHET_SUCCESSOR;
	if ((flags & PROPHET_SUCCESSOR) && prophet_order_speaks(model))
		flags |= PROPHET_ORDER;

	/*
	 * Only what the last scoring touched can hold a score: reset that and
	 * leave the rest of the model alone. A stamp makes each exe and map
	 * join this scoring's lists once.
	 */
	for (guint i = 0; i < model->scored_exes->len; i++)
		((Exe *)g_ptr_array_index(model->scored_exes, i))->lnprob = 0;
	for (guint i = 0; i < model->candidates->len; i++)
		((Map *)g_ptr_array_index(model->candidates, i))->prophet.lnprob = 0;
	g_ptr_array_set_size(model->scored_exes, 0);
	g_ptr_array_set_size(model->candidates, 0);
	model->score_stamp++;

	/*
	 * Every chain once; a pair without a chain bids nothing. The chains
	 * lie in blocks in memory order, but their exes are scattered over
	 * the heap and, a cycle after the last scoring, out of the CPU
	 * caches: waiting for them was most of the time here. The chains are
	 * taken PREFETCH_RING ahead of their bids, and their exes asked for
	 * half as many ahead, so that those loads overlap the work on this
	 * one.
	 */
	for (guint i = 0, have = 0, pos = 0;; i++) {
		Markov *next;

		while (have < i + PREFETCH_RING && (next = model_next_chain(model, &pos))) {
			ring[have++ % PREFETCH_RING] = next;
			__builtin_prefetch(next);
			__builtin_prefetch((const char *)next + 64);
		}
		if (i == have)
			break;
		if (i + PREFETCH_RING / 2 < have) {
			const Markov *ahead_chain = ring[(i + PREFETCH_RING / 2) % PREFETCH_RING];

			__builtin_prefetch(ahead_chain->a);
			__builtin_prefetch((const char *)ahead_chain->a + 64);
			__builtin_prefetch(ahead_chain->b);
			__builtin_prefetch((const char *)ahead_chain->b + 64);
		}
		prophet_bid(model, ring[i % PREFETCH_RING], conf->cycle, flags);
	}
	if (flags & PROPHET_SUCCESSOR) {
		prophet_bid_successors(model, conf->cycle);
		prophet_bid_handoffs(model, conf->cycle);
	}
	if (conf->frequency)
		prophet_bid_frequency(model, conf->cycle);

	/*
	 * Maps get a score only from the exes that run (+1 each: their pages
	 * are probably resident) and from those that got a bid; any other
	 * exe would add ln 1 = 0. Stale maps (a file gone or replaced) are
	 * never scored, so never read ahead.
	 */
	for (guint i = 0; i < model->running->len; i++) {
		const Exe *exe = g_ptr_array_index(model->running, i);

		for (guint j = 0; j < exe->exemaps->len; j++) {
			const ExeMap *em = &g_array_index(exe->exemaps, ExeMap, j);

			if (!em->map->learn.stale)
				score_map(model, em->map, 1);
		}
	}
	use_cursor_init(&ahead, model->scored_exes);
	for (guint i = 0; i < model->scored_exes->len; i++) {
		const Exe *exe = g_ptr_array_index(model->scored_exes, i);
		/* P(exe needed soon), computed without cancellation. */
		double needed = -expm1(exe->lnprob);
		/* A running exe's uses are skipped, but the cursor walks them too. */
		gboolean running = exe_is_running(model, exe);

		for (guint j = 0; j < exe->exemaps->len; j++) {
			const ExeMap *em = &g_array_index(exe->exemaps, ExeMap, j);
			double prob = em->prob;

			use_cursor_prefetch_next(&ahead);
			if (running)
				continue;  /* bids go to stopped exes only; scored above */
			if (em->map->learn.stale)
				continue;
			if (prob >= 1) {
				/* Always used: ln P(map not needed via exe) = exe's score. */
				score_map(model, em->map, exe->lnprob);
			} else if (prob > 0) {
				/*
				 * Used with probability prob: needed via this exe with
				 * probability prob * P(exe needed). prob < 1 keeps the
				 * argument of log1p above -1.
				 */
				score_map(model, em->map, log1p(-prob * needed));
			}
		}
	}
}

/*
 * Most likely needed first; ties by path, offset and length, through the
 * maps' ranks: a total order on numbers (comparing the paths themselves
 * was most of the cost of this sort).
 */
static gint
compare_maps(gconstpointer pa, gconstpointer pb)
{
	const Map *a = *(Map *const *)pa;
	const Map *b = *(Map *const *)pb;

	if (a->prophet.lnprob < b->prophet.lnprob)
		return -1;
	if (a->prophet.lnprob > b->prophet.lnprob)
		return 1;
	/* Equal (select leaves NaN out). */
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

GPtrArray *
prophet_select(Model *model, guint64 budget_kb, guint64 *used_kb)
{
	g_autoptr(GPtrArray) sorted = NULL;
	GPtrArray *chosen;
	guint64 left = budget_kb;
	/* ln P(not needed) of a map needed with probability PROPHET_MIN_PROB. */
	const double max_lnprob = log1p(-PROPHET_MIN_PROB);

	if (used_kb)
		*used_kb = 0;
	g_return_val_if_fail(model != NULL, NULL);

	model_rank_maps(model);
	/*
	 * Only maps worth reading: needed with a probability of at least
	 * PROPHET_MIN_PROB (this also drops NaN).
	 */
	sorted = g_ptr_array_sized_new(model->candidates->len);
	for (guint i = 0; i < model->candidates->len; i++) {
		Map *map = g_ptr_array_index(model->candidates, i);

		if (map->prophet.lnprob <= max_lnprob && !map->learn.stale)
			g_ptr_array_add(sorted, map);
	}
	g_ptr_array_sort(sorted, compare_maps);

	/*
	 * Greedy: a map that does not fit is skipped rather than ending the
	 * selection (0.6.4 stopped there), so one large map does not keep
	 * every smaller, less likely one out.
	 */
	chosen = g_ptr_array_new();
	for (guint i = 0; i < sorted->len; i++) {
		Map *map = g_ptr_array_index(sorted, i);
		guint64 kb = map->length / 1024 + (map->length % 1024 != 0);

		if (kb > left)
			continue;
		left -= kb;
		g_ptr_array_add(chosen, map);
	}

	if (used_kb)
		*used_kb = budget_kb - left;
	return chosen;
}

double
prophet_exe_probability(const Exe *exe)
{
	g_return_val_if_fail(exe != NULL, 0.0);

	return -expm1(exe->lnprob);
}
