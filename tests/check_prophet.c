/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/prophet.c: bids, exe and map scores on hand-built chains,
 * the memory budget and the greedy selection, each against numbers worked
 * out by hand (or with a pocket calculator) in the comments.
 */
#include "config.h"

#include "testutil.h"
#include "prophet.h"

#include <math.h>

#define TOL 1e-12

/* ---- helpers ---- */

/* A stopped exe already in the model, without chains. */
static Exe *
add_exe(Model *model, const char *path)
{
	Exe *exe = exe_new(path, FALSE, 0);

	model_add_exe(model, exe, 0, FALSE);
	return exe;
}

/* Makes exe run as of the last scan (at time 10 in these tests). */
static void
set_running(Model *model, Exe *exe)
{
	model->last_running_timestamp = 10;
	exe->running_timestamp = 10;
	g_ptr_array_add(model->running, exe);
}

/* Undoes set_running(). */
static void
set_stopped(Model *model, Exe *exe)
{
	exe->running_timestamp = 0;
	g_ptr_array_remove(model->running, exe);
}

/*
 * Gives map a score as prophet_score() would, listing it among the
 * candidates prophet_select() chooses from.
 */
static void
set_score(Model *model, Map *map, double lnprob)
{
	map->prophet.lnprob = lnprob;
	g_ptr_array_add(model->candidates, map);
}

static Map *
add_map(Model *model, Exe *exe, const char *path, guint64 offset,
	guint64 length, double prob)
{
	exe_add_map(model, exe, map_new(path, offset, length, 0), prob);
	return model_lookup_map(model, path, offset, length);
}

/*
 * The chain used by the bid tests: both stopped (state 0), left 4 times
 * with a mean sojourn of 30 s, to "a only" twice, "b only" once and
 * "both" once.
 */
static Markov *
bid_chain(Model *model, Exe **a, Exe **b)
{
	Markov *m;

	*a = add_exe(model, "/usr/bin/a");
	*b = add_exe(model, "/usr/bin/b");
	m = markov_new(model, *a, *b, 0, MARKOV_START_BLANK);
	m->state = MARKOV_NEITHER;
	m->weight[0][0] = 4;
	m->weight[0][1] = 2;
	m->weight[0][2] = 1;
	m->weight[0][3] = 1;
	m->time_to_leave[0] = 30;
	return m;
}

/* ---- bids ---- */

START_TEST(test_bid_plain)
{
	g_autoptr(Model) model = model_new();
	Exe *a, *b;
	Markov *m = bid_chain(model, &a, &b);

	/*
	 * cycle 20: P_change = 1 - exp(-1.5*20/30) = 1 - 1/e = 0.6321205588285577
	 * a: P_next = (W01 + W03) / (W00 + 0.01) = 3/4.01
	 *    ln(1 - 0.63212056 * 3/4.01) = ln(1 - 0.47290815) = -0.6403804548298226
	 * b: P_next = (W02 + W03) / 4.01 = 2/4.01
	 *    ln(1 - 0.63212056 * 2/4.01) = ln(1 - 0.31527210) = -0.3787337446950685
	 */
	prophet_bid(model, m, 20, 0);
	ck_assert_double_eq_tol(a->lnprob, -0.6403804548298226, TOL);
	ck_assert_double_eq_tol(b->lnprob, -0.3787337446950685, TOL);

	/* Bids add up: a second identical bid doubles the score. */
	prophet_bid(model, m, 20, 0);
	ck_assert_double_eq_tol(a->lnprob, 2 * -0.6403804548298226, TOL);
	ck_assert_double_eq_tol(prophet_exe_probability(a),
				1 - exp(2 * -0.6403804548298226), TOL);
}
END_TEST

START_TEST(test_bid_order_damped)
{
	g_autoptr(Model) model = model_new();
	Exe *a, *b;
	Markov *m = bid_chain(model, &a, &b);

	/*
	 * While the order of starts speaks, test_bid_plain's bids times
	 * PROPHET_CHAIN_DAMP = 0.3:
	 * a: 0.3 * 0.6321205588285577 * 3/4.01 = 0.14187244462486334
	 *    ln(1 - 0.14187244462486334) = -0.15300252460547253
	 * b: 0.3 * 0.6321205588285577 * 2/4.01 = 0.09458162974990889
	 *    ln(1 - 0.09458162974990889) = -0.0993581545350274
	 */
	prophet_bid(model, m, 20, PROPHET_ORDER);
	ck_assert_double_eq_tol(a->lnprob, -0.15300252460547253, TOL);
	ck_assert_double_eq_tol(b->lnprob, -0.0993581545350274, TOL);
}
END_TEST

START_TEST(test_order_speaks)
{
	g_autoptr(Model) model = model_new();
	Exe *a = add_exe(model, "/usr/bin/a");
	Exe *b = add_exe(model, "/usr/bin/b");

	/* No start yet. */
	ck_assert(!prophet_order_speaks(model));
	/* a started at 100, 10 s ago; mean gap 60 s, quiet after 120 s. */
	model->last_start = a;
	model->last_start_time = 100;
	model->time = 110;
	model->start_gaps = model->soon_gaps = 600;
	model->n_start_gaps = model->n_soon_gaps = 10;
	/* a has no successors: nothing to speak of. */
	ck_assert(!prophet_order_speaks(model));
	exe_append_succ(a, &(ExeSucc){ b, 1, 2 });
	ck_assert(prophet_order_speaks(model));
	/* 120 s after a: quiet, the next start opens a session. */
	model->time = 220;
	ck_assert(!prophet_order_speaks(model));
	model->time = 219;
	ck_assert(prophet_order_speaks(model));
	/* No gap shorter than the quiet spell seen. */
	model->n_soon_gaps = 0;
	ck_assert(!prophet_order_speaks(model));
}
END_TEST

START_TEST(test_bid_correlation)
{
	g_autoptr(Model) model = model_new();
	Exe *a, *b;
	Markov *m = bid_chain(model, &a, &b);

	/*
	 * t=100, A=40, B=50, X=30: rho = 1/sqrt(6) = 0.4082482904638630
	 * a: ln(1 - rho * 0.47290815) = -0.21451084963023428
	 * b: ln(1 - rho * 0.31527210) = -0.13777959836099415
	 */
	model->total_time = 100;
	a->time = 40;
	b->time = 50;
	m->time = 30;
	prophet_bid(model, m, 20, PROPHET_CORRELATION);
	ck_assert_double_eq_tol(a->lnprob, -0.21451084963023428, TOL);
	ck_assert_double_eq_tol(b->lnprob, -0.13777959836099415, TOL);

	/* A negative correlation of the same size bids the same: |rho|. */
	a->lnprob = b->lnprob = 0;
	m->time = 10;  /* (1000 - 2000) / sqrt(6e6) = -1/sqrt(6) */
	ck_assert_double_eq_tol(markov_correlation(model, m), -1 / sqrt(6.0), TOL);
	prophet_bid(model, m, 20, PROPHET_CORRELATION);
	ck_assert_double_eq_tol(a->lnprob, -0.21451084963023428, TOL);

	/* No correlation (a never ran): no bid at all. */
	a->lnprob = b->lnprob = 0;
	a->time = 0;
	prophet_bid(model, m, 20, PROPHET_CORRELATION);
	ck_assert_double_eq(a->lnprob, 0);
	ck_assert_double_eq(b->lnprob, 0);
}
END_TEST

START_TEST(test_bid_skips)
{
	g_autoptr(Model) model = model_new();
	Exe *a, *b;
	Markov *m = bid_chain(model, &a, &b);

	/* A state never left tells nothing. */
	m->weight[0][0] = 0;
	prophet_bid(model, m, 20, 0);
	ck_assert_double_eq(a->lnprob, 0);
	ck_assert_double_eq(b->lnprob, 0);

	/* Nor does a sojourn under a second. */
	m->weight[0][0] = 4;
	m->time_to_leave[0] = 0.999;
	prophet_bid(model, m, 20, 0);
	ck_assert_double_eq(a->lnprob, 0);

	/*
	 * One of exactly a second does, at a 1-second cycle:
	 * P_change = 1 - exp(-1.5) = 0.7768698398515702
	 * a: ln(1 - 0.77686984 * 3/4.01) = -0.870360322993269
	 * b: ln(1 - 0.77686984 * 2/4.01) = -0.490151243044294
	 */
	m->time_to_leave[0] = 1;
	prophet_bid(model, m, 1, 0);
	ck_assert_double_eq_tol(a->lnprob, -0.870360322993269, TOL);
	ck_assert_double_eq_tol(b->lnprob, -0.490151243044294, TOL);
	a->lnprob = b->lnprob = 0;

	/* A corrupt state number is ignored, not an out-of-bounds read. */
	m->time_to_leave[0] = 30;
	m->state = 7;
	prophet_bid(model, m, 20, 0);
	m->state = -1;
	prophet_bid(model, m, 20, 0);
	ck_assert_double_eq(a->lnprob, 0);
	ck_assert_double_eq(b->lnprob, 0);
}
END_TEST

START_TEST(test_bid_running_exe)
{
	g_autoptr(Model) model = model_new();
	Exe *a, *b;
	Markov *m = bid_chain(model, &a, &b);

	/*
	 * Only a runs (state 1), left twice with a mean of 40 s: once to
	 * "b only", once to "both". Only b bids:
	 *   P_change = 1 - exp(-1.5*20/40) = 0.5276334472589853
	 *   P_next = (W12 + W13) / (W11 + 0.01) = 2/2.01
	 *   ln(1 - 0.52763345 * 2/2.01) = ln(1 - 0.52500841) = -0.7444581703310502
	 */
	set_running(model, a);
	m->state = MARKOV_A;
	m->weight[1][1] = 2;
	m->weight[1][2] = 1;
	m->weight[1][3] = 1;
	m->time_to_leave[1] = 40;
	prophet_bid(model, m, 20, 0);
	ck_assert_double_eq(a->lnprob, 0);
	ck_assert_double_eq_tol(b->lnprob, log(1 - (1 - exp(-0.75)) * 2 / 2.01), TOL);
	ck_assert_double_eq_tol(b->lnprob, -0.7444581703310502, TOL);
}
END_TEST

START_TEST(test_bid_clamped)
{
	g_autoptr(Model) model = model_new();
	Exe *a, *b;
	Markov *m = bid_chain(model, &a, &b);

	/*
	 * Inconsistent counters (W01 > W00) and a certain change (tau 2 s,
	 * cycle 3600): p = 100/4.01 > 1 is clamped to 1 - 1e-9, so the
	 * score is ln(1e-9) = -20.72326583694641, not NaN or -inf.
	 */
	m->weight[0][1] = 100;
	m->time_to_leave[0] = 2;
	prophet_bid(model, m, 3600, 0);
	ck_assert(isfinite(a->lnprob));
	ck_assert_double_eq_tol(a->lnprob, -20.72326583694641, 1e-6);

	/* Negative weights give a negative p: no bid, never a positive score. */
	a->lnprob = 0;
	m->weight[0][1] = -50;
	m->weight[0][3] = 0;
	prophet_bid(model, m, 3600, 0);
	ck_assert_double_eq(a->lnprob, 0);
}
END_TEST

/*
 * With lift, a chain where one program runs bids for the other at least
 * how much more likely it is to start now than while neither runs,
 * undamped: b follows a (2 of a's 3 departures alone start b) but they
 * seldom run together.
 */
START_TEST(test_bid_lift)
{
	g_autoptr(Model) model = model_new();
	Exe *a, *b;
	Markov *m = bid_chain(model, &a, &b);

	/*
	 * t=1000, A=B=100, X=12: rho = (12000 - 10000) / 90000 = 0.0222222.
	 * State 1 (a runs): W11 = 3, W12 = 0, W13 = 2, tau1 = 30,
	 *   P_change = 1 - exp(-1) = 0.6321205588285577.
	 * State 0: W00 = 10, W01 = 5, W02 = 4, W03 = 1, tau0 = 60.
	 * 0.6.4: p = rho * 0.63212056 * 2/3.01 = 0.00933363689669336,
	 *   ln(1 - p) = -0.009377468235954835.
	 * lift: q = 0.63212056 * 2/(3 + 1) = 0.31606027941427883,
	 *   base = (1 - exp(-0.5)) * (4 + 1)/10.01 = 0.1965381320116716,
	 *   (q - base) / (1 - base) = 0.14875895442538098,
	 *   ln(1 - 0.14875895) = -0.16105994072250043.
	 */
	model->total_time = 1000;
	a->time = 100;
	b->time = 100;
	m->time = 12;
	set_running(model, a);
	m->state = MARKOV_A;
	m->weight[1][1] = 3;
	m->weight[1][3] = 2;
	m->time_to_leave[1] = 30;
	m->weight[0][0] = 10;
	m->weight[0][1] = 5;
	m->weight[0][2] = 4;
	m->weight[0][3] = 1;
	m->time_to_leave[0] = 60;

	prophet_bid(model, m, 20, PROPHET_CORRELATION);
	ck_assert_double_eq_tol(b->lnprob, -0.009377468235954835, TOL);
	b->lnprob = 0;
	prophet_bid(model, m, 20, PROPHET_CORRELATION | PROPHET_LIFT);
	ck_assert_double_eq_tol(b->lnprob, -0.16105994072250043, TOL);
	ck_assert_double_eq(a->lnprob, 0);  /* a runs: no bid */

	/*
	 * Without the correlation the plain bid, 0.63212056 * 2/3.01 =
	 * 0.42001366, is the larger: ln(1 - p) = -0.5447507280486896.
	 */
	b->lnprob = 0;
	prophet_bid(model, m, 20, PROPHET_LIFT);
	ck_assert_double_eq_tol(b->lnprob, -0.5447507280486896, TOL);

	/*
	 * Fewer than two starts of b from "a alone" (the first made the
	 * chain): no lift. With W13 = 1.5 and W11 = 2.5, b gets only
	 * rho * 0.63212056 * 1.5/2.51 = 0.00839469533636863.
	 */
	b->lnprob = 0;
	m->weight[1][1] = 2.5;
	m->weight[1][3] = 1.5;
	prophet_bid(model, m, 20, PROPHET_CORRELATION | PROPHET_LIFT);
	ck_assert_double_eq_tol(b->lnprob, log1p(-0.00839469533636863), TOL);
	m->weight[1][1] = 3;
	m->weight[1][3] = 2;

	/* No "neither" row (never left, or left under a second): no lift. */
	b->lnprob = 0;
	m->weight[0][0] = 0;
	prophet_bid(model, m, 20, PROPHET_CORRELATION | PROPHET_LIFT);
	ck_assert_double_eq_tol(b->lnprob, -0.009377468235954835, TOL);
	b->lnprob = 0;
	m->weight[0][0] = 10;
	m->time_to_leave[0] = 0.5;
	prophet_bid(model, m, 20, PROPHET_CORRELATION | PROPHET_LIFT);
	ck_assert_double_eq_tol(b->lnprob, -0.009377468235954835, TOL);
	m->time_to_leave[0] = 60;

	/*
	 * The other way round, b runs (state 2: W22 = 4, W21 = 1, tau2 = 30):
	 * q = 0.63212056 * 1/5 = 0.12642411 is below a's base,
	 * 0.39346934 * (5 + 1)/10.01 = 0.23584576: a has no lift and bids
	 * rho * 0.63212056 * 1/4.01 = 0.0035030233240706996.
	 */
	set_stopped(model, a);
	set_running(model, b);
	b->lnprob = 0;
	m->state = MARKOV_B;
	m->weight[2][2] = 4;
	m->weight[2][1] = 1;
	m->time_to_leave[2] = 30;
	prophet_bid(model, m, 20, PROPHET_CORRELATION | PROPHET_LIFT);
	ck_assert_double_eq_tol(a->lnprob, log1p(-0.0035030233240706996), TOL);
	ck_assert_double_eq(b->lnprob, 0);

	/* State "neither" bids as without lift. */
	set_stopped(model, b);
	a->lnprob = 0;
	m->state = MARKOV_NEITHER;
	prophet_bid(model, m, 20, PROPHET_CORRELATION);
	{
		double la = a->lnprob, lb = b->lnprob;

		a->lnprob = b->lnprob = 0;
		prophet_bid(model, m, 20, PROPHET_CORRELATION | PROPHET_LIFT);
		ck_assert_double_eq(a->lnprob, la);
		ck_assert_double_eq(b->lnprob, lb);
		ck_assert(la < 0);
	}
}
END_TEST

/* ---- scores ---- */

/*
 * With basemax the chains in state "neither" bid once per exe, the
 * largest of their bids, whatever their order; a chain whose other exe
 * runs adds its bid as before.
 */
/* Stops or starts exe at time t as a scan would, and tells the model. */
static void
change(Model *model, Exe *exe, gboolean run, gint64 t)
{
	if (run)
		set_running(model, exe);
	else
		set_stopped(model, exe);
	model_exe_changed(model, exe, t);
}

static const ExeSucc *
find_succ(const Exe *x, const Exe *y)
{
	for (guint i = 0; i < x->succ->len; i++) {
		if (g_array_index(x->succ, ExeSucc, i).next == y)
			return &g_array_index(x->succ, ExeSucc, i);
	}
	return NULL;
}

START_TEST(test_note_starts)
{
	g_autoptr(Model) model = model_new();
	Exe *a = add_exe(model, "/usr/bin/a");
	Exe *b = add_exe(model, "/usr/bin/b");
	Exe *c = add_exe(model, "/usr/bin/c");
	const ExeSucc *s;

	/* Seen stopped before, so that their starts count. */
	a->change_timestamp = b->change_timestamp = c->change_timestamp = 0;

	/* a at 100, b at 140: b follows a, with one chance (its own start). */
	change(model, a, TRUE, 100);
	ck_assert_ptr_eq(model->last_start, a);
	ck_assert_uint_eq(a->succ->len, 0);
	change(model, b, TRUE, 140);
	s = find_succ(a, b);
	ck_assert_ptr_nonnull(s);
	ck_assert_double_eq(s->count, 1);
	ck_assert_double_eq(s->chances, 1);
	ck_assert_double_eq(a->succ_total, 1);
	ck_assert_ptr_eq(model->last_start, b);

	/* b and a stop, a starts again at 240 (after b), c at 300 after a. */
	change(model, b, FALSE, 160);
	change(model, a, FALSE, 200);
	change(model, a, TRUE, 240);
	ck_assert_double_eq(find_succ(b, a)->count, 1);
	change(model, c, TRUE, 300);
	/* b was stopped when c started: a chance for b, not taken. */
	s = find_succ(a, b);
	ck_assert_double_eq(s->count, 1);
	ck_assert_double_eq(s->chances, 2);
	/* c is new among a's successors: as many chances as a's successions. */
	s = find_succ(a, c);
	ck_assert_double_eq(s->count, 1);
	ck_assert_double_eq(s->chances, 2);
	ck_assert_double_eq(a->succ_total, 2);

	/* Gaps 40, 100 and 60 s, all before any quiet spell can be told. */
	ck_assert_double_eq(model->start_gaps, 200);
	ck_assert_double_eq(model->n_start_gaps, 3);
	ck_assert_double_eq(model->soon_gaps, 200);
	ck_assert_double_eq(model->n_soon_gaps, 3);
	ck_assert_double_eq(model->n_starts, 4);
	ck_assert_double_eq(model_quiet(model), 0);

	/* A removed exe leaves no successor behind. */
	model_remove_exe(model, c);
	ck_assert_ptr_null(model->last_start);
	ck_assert_ptr_null(find_succ(a, c) );
	ck_assert_double_eq(a->succ_total, 1);
}
END_TEST

START_TEST(test_free_start)
{
	g_autoptr(Model) model = model_new();
	Exe *a = add_exe(model, "/usr/bin/a");
	Exe *b = add_exe(model, "/usr/bin/b");
	Exe *c = add_exe(model, "/usr/bin/c");
	Exe *t = add_exe(model, "/usr/bin/t");
	Exe *d = add_exe(model, "/usr/bin/d");

	a->change_timestamp = b->change_timestamp = c->change_timestamp = 0;
	t->change_timestamp = d->change_timestamp = 0;

	/* A habit: at least 2 starts and half of (chances + 1). */
	exe_append_succ(b, &(ExeSucc){ c, 2, 3 });    /* 2 >= 0.5 * 4 */
	exe_append_succ(b, &(ExeSucc){ t, 2, 4 });    /* 2 < 0.5 * 5 */
	exe_append_succ(b, &(ExeSucc){ d, 1.5, 1 });  /* 1.5 < 2 */
	ck_assert(model_is_habit(b, c));
	ck_assert(!model_is_habit(b, t));
	ck_assert(!model_is_habit(b, d));
	ck_assert(!model_is_habit(b, a));  /* never followed b */
	b->succ->len = 1;  /* c only */

	/* The first start follows nothing: no free choice known yet. */
	change(model, a, TRUE, 100);
	ck_assert_ptr_null(model->free_start);
	/* b never followed a: a free choice. */
	change(model, b, TRUE, 140);
	ck_assert_ptr_eq(model->free_start, b);
	/* c is b's habit: the last start, but b stays the free choice. */
	change(model, c, TRUE, 180);
	ck_assert_ptr_eq(model->last_start, c);
	ck_assert_ptr_eq(model->free_start, b);
	/* Judged by the habit as it was: the count it adds comes after. */
	ck_assert_double_eq(find_succ(b, c)->count, 3);
	/* t after c, which it never followed: free. */
	change(model, t, TRUE, 200);
	ck_assert_ptr_eq(model->free_start, t);
	/*
	 * Ten gaps of 100 s: quiet after 200 s. d starts 300 s after t: it
	 * opens a session and is the free choice, though a habit of t.
	 */
	model->start_gaps = 1000;
	model->n_start_gaps = 10;
	exe_append_succ(t, &(ExeSucc){ d, 5, 5 });
	change(model, d, TRUE, 500);
	ck_assert_double_eq(d->quiet_starts, 1);
	ck_assert_ptr_eq(model->free_start, d);
	/* A removed exe is no longer the free choice. */
	model_remove_exe(model, d);
	ck_assert_ptr_null(model->free_start);
}
END_TEST

/*
 * A build's tools, each starting in the scan the one before stops, are
 * kept out of the order of starts once known: from its second build a
 * tool that starts as its predecessor stops is no successor and no last
 * start, and from the third the first tool too (it hands off by habit,
 * twice). The user's next application follows the user's last one.
 */
START_TEST(test_handoff_order)
{
	g_autoptr(Model) model = model_new();
	Exe *u = add_exe(model, "/usr/bin/u");
	Exe *t1 = add_exe(model, "/usr/bin/t1");
	Exe *t2 = add_exe(model, "/usr/bin/t2");
	Exe *t3 = add_exe(model, "/usr/bin/t3");
	Exe *w = add_exe(model, "/usr/bin/w");
	Exe *x = add_exe(model, "/usr/bin/x");
	gint64 build[] = { 120, 300, 500 };

	u->change_timestamp = t1->change_timestamp = t2->change_timestamp = 0;
	t3->change_timestamp = w->change_timestamp = x->change_timestamp = 0;
	change(model, u, TRUE, 100);
	for (guint b = 0; b < G_N_ELEMENTS(build); b++) {
		gint64 t = build[b];

		change(model, t1, TRUE, t);
		change(model, t1, FALSE, t + 20);
		change(model, t2, TRUE, t + 20);
		change(model, t2, FALSE, t + 40);
		change(model, t3, TRUE, t + 40);
		change(model, t3, FALSE, t + 60);
		if (b == 1) {
			/*
			 * t2 and t3 started as handoffs seen at 1 of their
			 * predecessors' 1 stops before: t1 stays the last start.
			 */
			ck_assert_ptr_eq(model->last_start, t1);
			ck_assert_double_eq(find_succ(t1, t2)->count, 1);
			ck_assert_double_eq(find_succ(t2, t3)->count, 1);
			change(model, w, TRUE, 400);
		}
	}
	/* The third build left no trace in the order: w started last. */
	ck_assert_ptr_eq(model->last_start, w);
	change(model, x, TRUE, 600);
	ck_assert_ptr_nonnull(find_succ(w, x));
	ck_assert_ptr_null(find_succ(t3, x));
	/* w followed t1, the second build's first tool, still in the order then. */
	ck_assert_ptr_nonnull(find_succ(t1, w));
	ck_assert_double_eq(find_succ(t1, w)->count, 1);
	/*
	 * Gaps of the starts in the order: t1, t2, t3 (20 s each), t1 (140),
	 * w (100), x (200); every start still counts as the program's start.
	 */
	ck_assert_double_eq(model->n_start_gaps, 6);
	ck_assert_double_eq(model->start_gaps, 500);
	ck_assert_double_eq(t2->starts, 3);
	ck_assert_double_eq(t1->starts, 3);
}
END_TEST

/*
 * What the handoffs learn: a stop counts in Exe.stops and its run from
 * start to stop in Exe.run_time; a start (or a new program's first sight)
 * in the scan another stopped is its handoff. A habit is a share of at
 * least half of (stops + 1).
 */
START_TEST(test_handoff_learn)
{
	g_autoptr(Model) model = model_new();
	Exe *a = add_exe(model, "/usr/bin/a");
	Exe *b = add_exe(model, "/usr/bin/b");
	Exe *c = add_exe(model, "/usr/bin/c");
	Exe *n = NULL;
	ExeHandoff *h;

	a->change_timestamp = b->change_timestamp = c->change_timestamp = 0;
	ck_assert(!model_is_handoff_habit(a, &(ExeHandoff){ b, 0.5 }));  /* under one */
	ck_assert(model_is_handoff_habit(a, &(ExeHandoff){ b, 1 }));     /* 1 >= 0.5 * 1 */
	/* a runs 100 to 130; b starts as it stops; c starts 10 s later. */
	change(model, a, TRUE, 100);
	change(model, a, FALSE, 130);
	change(model, b, TRUE, 130);
	change(model, c, TRUE, 140);
	ck_assert_double_eq(a->stops, 1);
	ck_assert_double_eq(a->run_time, 30);
	ck_assert_uint_eq(a->handoff->len, 1);
	h = &g_array_index(a->handoff, ExeHandoff, 0);
	ck_assert_ptr_eq(h->next, b);
	ck_assert_double_eq(h->count, 1);
	ck_assert(model_is_handoff_habit(a, h));  /* 1 >= 0.5 * (1 + 1) */
	/* b stops at 200 and a program never seen before appears then. */
	change(model, b, FALSE, 200);
	n = exe_new("/usr/bin/new", TRUE, 200);
	model_add_exe(model, n, 200, FALSE);
	model_exe_first_seen(model, n, 200);
	ck_assert_uint_eq(b->handoff->len, 1);
	ck_assert_ptr_eq(g_array_index(b->handoff, ExeHandoff, 0).next, n);
	ck_assert_double_eq(b->run_time, 70);
	/* a's second run, 300 to 310, ends with no start: b is no habit any more. */
	change(model, a, TRUE, 300);
	change(model, a, FALSE, 310);
	ck_assert_double_eq(a->stops, 2);
	ck_assert_double_eq(a->run_time, 40);
	ck_assert(!model_is_handoff_habit(a, &g_array_index(a->handoff, ExeHandoff, 0)));
	/* A removed exe is no handoff. */
	model_remove_exe(model, n);
	ck_assert_uint_eq(b->handoff->len, 0);
}
END_TEST

/*
 * x runs since 100 and stopped 3 times after runs of 50 s in all; y
 * started at 2 of those stops, z at 1. At 110, cycle 20:
 *   mean run (50 + 10) / 3 = 20 s, p_stop = 1 - exp(-1.5 * 20 / 20) = 0.7768698398515702
 *   y: p_stop * 2 / 4 = 0.3884349199257851, ln(1 - y) = -0.49173390257719296
 *   z: 1 < 0.5 * 4: no habit, no bid
 */
START_TEST(test_bid_handoffs)
{
	g_autoptr(Model) model = model_new();
	Exe *x = add_exe(model, "/usr/bin/x");
	Exe *y = add_exe(model, "/usr/bin/y");
	Exe *z = add_exe(model, "/usr/bin/z");

	x->stops = 3;
	x->run_time = 50;
	exe_append_handoff(x, &(ExeHandoff){ y, 2 });
	exe_append_handoff(x, &(ExeHandoff){ z, 1 });
	set_running(model, x);
	x->change_timestamp = 100;
	model->time = 110;
	model->score_stamp++;
	prophet_bid_handoffs(model, 20);
	ck_assert_double_eq_tol(y->lnprob, -0.49173390257719296, TOL);
	ck_assert_double_eq(z->lnprob, 0);
	ck_assert_double_eq(x->lnprob, 0);

	/* A running y is not bid for; a stopped x bids nothing. */
	set_running(model, y);
	y->lnprob = 0;
	model->score_stamp++;
	prophet_bid_handoffs(model, 20);
	ck_assert_double_eq(y->lnprob, 0);
	set_stopped(model, y);
	set_stopped(model, x);
	model->score_stamp++;
	prophet_bid_handoffs(model, 20);
	ck_assert_double_eq(y->lnprob, 0);
}
END_TEST

START_TEST(test_away_chance)
{
	g_autoptr(Model) model = model_new();
	Exe *x = add_exe(model, "/usr/bin/x");

	/* No start yet. */
	ck_assert_double_eq(prophet_away_chance(model), 0);
	/*
	 * 2 quiet spells and 8 soon gaps of 60 s on average: q = 0.2. At
	 * the last start, a = q; 60 s later
	 *   a = 0.2 / (0.2 + 0.8 exp(-60 / 60)) = 0.40460967519168967
	 */
	model->last_start = x;
	model->last_start_time = 100;
	model->time = 100;
	model->n_quiet_gaps = 2;
	model->n_soon_gaps = 8;
	model->soon_gaps = 480;
	ck_assert_double_eq_tol(prophet_away_chance(model), 0.2, TOL);
	model->time = 160;
	ck_assert_double_eq_tol(prophet_away_chance(model), 0.40460967519168967, TOL);
	/* Never away so far: 0. */
	model->n_quiet_gaps = 0;
	ck_assert_double_eq(prophet_away_chance(model), 0);
}
END_TEST

START_TEST(test_bid_free_and_away)
{
	g_autoptr(Model) model = model_new();
	Exe *x = add_exe(model, "/usr/bin/x");
	Exe *f = add_exe(model, "/usr/bin/f");
	Exe *w = add_exe(model, "/usr/bin/w");
	Exe *y = add_exe(model, "/usr/bin/y");
	Exe *z = add_exe(model, "/usr/bin/z");

	/*
	 * x started last, at 100, running; f, stopped, was the last free
	 * choice. x was followed by w 3 times in 5 chances, f by y once in
	 * 3; z opened 3 of the 4 sessions. Ten gaps, 1000 s: quiet after
	 * 200 s; 8 soon ones of 60 s on average, 2 quiet. At 160, cycle 20:
	 *   p_next = 1 - exp(-1.5 * 20 / 60) = 0.3934693402873666
	 *   w: p_next * 3 / 6 = 0.1967346701436833, ln(1 - w) = -0.21907019637983863
	 *   y: p_next * 1 / 4 = 0.09836733507184164, ln(1 - y) = -0.10354808695704944
	 *   z: a * p_next * 3 / 5 with a = 0.40460967519168967 (test_away_chance)
	 *      = 0.09552090118293588, ln(1 - z) = -0.10039608241039345
	 */
	exe_append_succ(x, &(ExeSucc){ w, 3, 5 });
	exe_append_succ(f, &(ExeSucc){ y, 1, 3 });
	z->quiet_starts = 3;
	model->quiet_total = 4;
	g_ptr_array_add(model->quiet_exes, z);
	model->last_start = x;
	model->free_start = f;
	model->last_start_time = 100;
	model->time = 160;
	model->start_gaps = 1000;
	model->n_start_gaps = 10;
	model->soon_gaps = 480;
	model->n_soon_gaps = 8;
	model->quiet_gaps = 300;
	model->n_quiet_gaps = 2;
	set_running(model, x);
	model->score_stamp++;
	prophet_bid_successors(model, 20);
	ck_assert_double_eq_tol(w->lnprob, -0.21907019637983863, TOL);
	ck_assert_double_eq_tol(y->lnprob, -0.10354808695704944, TOL);
	ck_assert_double_eq_tol(z->lnprob, -0.10039608241039345, TOL);
	ck_assert_double_eq(f->lnprob, 0);

	/* The last start is the free choice: its successors bid once. */
	model->free_start = x;
	model->n_quiet_gaps = 0;  /* and never away: no opener bids */
	model->score_stamp++;
	w->lnprob = y->lnprob = z->lnprob = 0;
	prophet_bid_successors(model, 20);
	ck_assert_double_eq_tol(w->lnprob, -0.21907019637983863, TOL);
	ck_assert_double_eq(y->lnprob, 0);
	ck_assert_double_eq(z->lnprob, 0);
}
END_TEST

START_TEST(test_bid_successors)
{
	g_autoptr(Model) model = model_new();
	Exe *a = add_exe(model, "/usr/bin/a");
	Exe *b = add_exe(model, "/usr/bin/b");
	Exe *c = add_exe(model, "/usr/bin/c");
	Exe *d = add_exe(model, "/usr/bin/d");

	/*
	 * a started last, at 100; b followed it 3 times in 5 chances, c once
	 * in 4. Two gaps between starts, 120 s in all (mean 60), so no quiet
	 * spell yet. At 110, with a 20 s cycle, c running:
	 *   b: (1 - exp(-1.5 * 20 / 60)) * 3 / (5 + 1)
	 *    = 0.3934693402873666 * 0.5 = 0.1967346701436833
	 */
	exe_append_succ(a, &(ExeSucc){ b, 3, 5 });
	exe_append_succ(a, &(ExeSucc){ c, 1, 4 });
	model->last_start = a;
	model->last_start_time = 100;
	model->start_gaps = model->soon_gaps = 120;
	model->n_start_gaps = model->n_soon_gaps = 2;
	model->time = 110;
	set_running(model, c);
	set_running(model, a);
	model->score_stamp++;
	prophet_bid_successors(model, 20);
	ck_assert_double_eq_tol(b->lnprob, log1p(-0.1967346701436833), TOL);
	ck_assert_double_eq(c->lnprob, 0);
	ck_assert_double_eq(a->lnprob, 0);

	/*
	 * d runs too; b followed it once in 1 chance, a (running) once: d
	 * bids for b at PROPHET_RUNNING_SUCC = 0.3 of the same form,
	 *   0.3 * 0.3934693402873666 * 1 / (1 + 1) = 0.059020401043104985
	 * a bid of its own: ln(1 - 0.1967346701436833) + ln(1 - 0.059020401043104985)
	 *   = -0.2799040161849459
	 */
	exe_append_succ(d, &(ExeSucc){ b, 1, 1 });
	exe_append_succ(d, &(ExeSucc){ a, 1, 1 });
	set_running(model, d);
	model->score_stamp++;
	prophet_bid_successors(model, 20);
	ck_assert_double_eq_tol(b->lnprob, -0.2799040161849459, TOL);
	ck_assert_double_eq(a->lnprob, 0);
	ck_assert_double_eq(d->lnprob, 0);

	/*
	 * Ten gaps of 100 s on average: quiet after 200 s. At 350 a session
	 * opens: the programs that opened sessions bid, b (2 of 3) and c
	 * (1 of 3, running). Quiet spells lasted 150 s beyond the 200:
	 *   b: (1 - exp(-1.5 * 20 / 150)) * 2 / (3 + 1)
	 *    = 0.18126924692201818 * 0.5 = 0.09063462346100909
	 * and the successors of a bid nothing.
	 */
	model->start_gaps = 1000;
	model->n_start_gaps = 10;
	model->quiet_gaps = 300;
	model->n_quiet_gaps = 2;
	b->quiet_starts = 2;
	c->quiet_starts = 1;
	model->quiet_total = 3;
	g_ptr_array_add(model->quiet_exes, b);
	g_ptr_array_add(model->quiet_exes, c);
	ck_assert_double_eq(model_quiet(model), 200);
	model->time = 350;
	model->score_stamp++;
	b->lnprob = 0;
	prophet_bid_successors(model, 20);
	ck_assert_double_eq_tol(b->lnprob, log1p(-0.09063462346100909), TOL);
	ck_assert_double_eq(c->lnprob, 0);

	/* Nothing started yet: no bids. */
	model->last_start = NULL;
	model->score_stamp++;
	b->lnprob = 0;
	prophet_bid_successors(model, 20);
	ck_assert_double_eq(b->lnprob, 0);
}
END_TEST

START_TEST(test_bid_base_max)
{
	g_autoptr(Model) model = model_new();
	Exe *a, *b;
	Markov *ab = bid_chain(model, &a, &b);
	Exe *c = add_exe(model, "/usr/bin/c");
	Exe *d = add_exe(model, "/usr/bin/d");
	Markov *ac = markov_new(model, a, c, 0, MARKOV_START_BLANK);
	Markov *ad = markov_new(model, a, d, 0, MARKOV_START_BLANK);

	/*
	 * ab (state 0): a bids p1 = 0.63212056 * 3/4.01 = 0.47290815,
	 *    ln(1 - p1) = -0.6403804548298228; b bids ln(1 - 0.31527210) =
	 *    -0.3787337446950686 (test_bid_plain).
	 * ac (state 0, W00 = W01 = 4, tau0 = 30): a bids
	 *    p2 = 0.63212056 * 4/4.01 = 0.6305441983327259,
	 *    ln(1 - p2) = -0.9957241623458801; c nothing (W02 = W03 = 0).
	 * ad (state 2, d runs; W22 = 2, W21 = 0, W23 = 1, tau2 = 40): a bids
	 *    pa = (1 - exp(-0.75)) * 1/2.01 = 0.2625042026164106,
	 *    ln(1 - pa) = -0.3044948892473281.
	 */
	ac->state = MARKOV_NEITHER;
	ac->weight[0][0] = 4;
	ac->weight[0][1] = 4;
	ac->time_to_leave[0] = 30;
	set_running(model, d);
	ad->state = MARKOV_B;
	ad->weight[2][2] = 2;
	ad->weight[2][3] = 1;
	ad->time_to_leave[2] = 40;

	prophet_bid(model, ab, 20, PROPHET_BASEMAX);
	ck_assert_double_eq_tol(a->lnprob, -0.6403804548298228, TOL);
	ck_assert_double_eq_tol(b->lnprob, -0.3787337446950686, TOL);
	/* The same base bid again counts once. */
	prophet_bid(model, ab, 20, PROPHET_BASEMAX);
	ck_assert_double_eq_tol(a->lnprob, -0.6403804548298228, TOL);
	ck_assert_double_eq_tol(b->lnprob, -0.3787337446950686, TOL);
	/* A larger one replaces it; a smaller one then changes nothing. */
	prophet_bid(model, ac, 20, PROPHET_BASEMAX);
	ck_assert_double_eq_tol(a->lnprob, -0.9957241623458801, TOL);
	ck_assert_double_eq_tol(a->base_bid, 0.6305441983327259, TOL);
	prophet_bid(model, ab, 20, PROPHET_BASEMAX);
	ck_assert_double_eq_tol(a->lnprob, -0.9957241623458801, TOL);
	/* A bid while d runs is evidence of its own: -0.99572416 - 0.30449489. */
	prophet_bid(model, ad, 20, PROPHET_BASEMAX);
	ck_assert_double_eq_tol(a->lnprob, -1.3002190515932082, TOL);

	/* A new scoring, the other order: the same sum. */
	model->score_stamp++;
	prophet_bid(model, ad, 20, PROPHET_BASEMAX);
	ck_assert_double_eq_tol(a->lnprob, -0.3044948892473281, TOL);
	prophet_bid(model, ac, 20, PROPHET_BASEMAX);
	prophet_bid(model, ab, 20, PROPHET_BASEMAX);
	ck_assert_double_eq_tol(a->lnprob, -1.3002190515932082, TOL);

	/* Without basemax (0.6.4) the two base bids add: -0.64038045 - 0.99572416. */
	model->score_stamp++;
	prophet_bid(model, ab, 20, 0);
	prophet_bid(model, ac, 20, 0);
	ck_assert_double_eq_tol(a->lnprob, -1.636104617175703, TOL);
	ck_assert_double_eq(a->base_bid, 0);
}
END_TEST

/* Gives exe a bid p this scoring, as the chains or the successors would. */
static void
set_bid(Model *model, Exe *exe, double p)
{
	exe->score_stamp = model->score_stamp;
	exe->lnprob = log1p(-p);
	g_ptr_array_add(model->scored_exes, exe);
}

START_TEST(test_bid_frequency)
{
	g_autoptr(Model) model = model_new();
	Exe *a = add_exe(model, "/usr/bin/a");
	Exe *b = add_exe(model, "/usr/bin/b");
	Exe *c = add_exe(model, "/usr/bin/c");
	Exe *d = add_exe(model, "/usr/bin/d");

	add_map(model, b, "/usr/lib/libb.so", 0, 4096, 1.0);
	ck_assert_double_eq(model->freq_weight, 0.5);

	/*
	 * a runs (4 starts: not counted, it cannot start); of the stopped
	 * ones b started 3 times, c once, d never: F(b) = 3/4, F(c) = 1/4.
	 * The model bid 0.25 for b and 0.25 for d: M = 0.5. With w = 0.25:
	 *   b: 0.75 * 0.25 + 0.25 * 0.75 * 0.5 = 0.28125
	 *   c: 0.25 * 0.25 * 0.5              = 0.03125 (no bid of its own)
	 *   d: 0.75 * 0.25                    = 0.1875
	 * and the shares left for the update: b 0.5 / 0.75, c 0 / 0.25,
	 * d 0.5 / 0.
	 */
	a->starts = 4;
	b->starts = 3;
	c->starts = 1;
	set_running(model, a);
	model->freq_weight = 0.25;
	model->score_stamp++;
	set_bid(model, b, 0.25);
	set_bid(model, d, 0.25);
	prophet_bid_frequency(model, 20);
	ck_assert_double_eq_tol(b->lnprob, log1p(-0.28125), TOL);
	ck_assert_double_eq_tol(c->lnprob, log1p(-0.03125), TOL);
	ck_assert_double_eq_tol(d->lnprob, log1p(-0.1875), TOL);
	ck_assert_double_eq(a->lnprob, 0);
	ck_assert_uint_eq(model->scored_exes->len, 3);
	ck_assert_double_eq(b->expert_model, 0.5);
	ck_assert_double_eq(b->expert_freq, 0.75);
	ck_assert_double_eq(c->expert_model, 0);
	ck_assert_double_eq(c->expert_freq, 0.25);
	ck_assert_double_eq(d->expert_model, 0.5);
	ck_assert_double_eq(d->expert_freq, 0);
	ck_assert_uint_eq(b->expert_stamp, model->score_stamp);

	/*
	 * b starts: the frequency expert's part of the mixture's probability
	 * of it was r = 0.25 * 0.75 / (0.25 * 0.75 + 0.75 * 0.5) = 1/3, so
	 *   w = 0.25 + (1/3 - 0.25) / 32 = 0.25 + 1/384 = 0.2526041666666667
	 */
	b->change_timestamp = 0;
	change(model, b, TRUE, 100);
	ck_assert_double_eq_tol(model->freq_weight, 0.2526041666666667, TOL);
	/* A start the last scoring gave no shares to leaves the weight alone. */
	c->change_timestamp = 0;
	c->expert_stamp = model->score_stamp - 1;
	change(model, c, TRUE, 120);
	ck_assert_double_eq_tol(model->freq_weight, 0.2526041666666667, TOL);

	/*
	 * No bid at all: the mass is the chance of a start within 1.5 cycles
	 * at the mean gap, 120 s over 2 gaps: 1 - exp(-1.5 * 20 / 60) =
	 * 0.3934693402873666. b and c run now, a stopped: F(a) = 4/4, and
	 * a gets w * 1 * 0.3934693402873666 = 0.25 * ... = 0.09836733507184165.
	 */
	set_stopped(model, a);
	model->start_gaps = 120;
	model->n_start_gaps = 2;
	model->freq_weight = 0.25;
	g_ptr_array_set_size(model->scored_exes, 0);
	model->score_stamp++;
	prophet_bid_frequency(model, 20);
	ck_assert_double_eq_tol(a->lnprob, log1p(-0.09836733507184165), TOL);
	ck_assert_double_eq(a->expert_model, 0);
	ck_assert_double_eq(a->expert_freq, 1);
	ck_assert_uint_eq(model->scored_exes->len, 1);
}
END_TEST

START_TEST(test_score)
{
	g_autoptr(Model) model = model_new();
	Conf conf = { .cycle = 20, .usecorrelation = FALSE };
	Exe *a = add_exe(model, "/usr/bin/a");
	Exe *b = add_exe(model, "/usr/bin/b");
	Exe *c = add_exe(model, "/usr/bin/c");
	Markov *ab = markov_new(model, a, b, 0, MARKOV_START_BLANK);
	Markov *ac = markov_new(model, a, c, 0, MARKOV_START_BLANK);
	Markov *bc = markov_new(model, b, c, 0, MARKOV_START_BLANK);
	Map *shared, *half, *only_a, *only_b;

	shared = add_map(model, a, "/usr/lib/libshared.so", 0, 8192, 1.0);
	exe_add_map(model, c, map_new("/usr/lib/libshared.so", 0, 8192, 0), 1.0);
	half = add_map(model, c, "/usr/lib/libhalf.so", 0, 4096, 0.5);
	only_a = add_map(model, a, "/usr/lib/liba.so", 0, 4096, 1.0);
	only_b = add_map(model, b, "/usr/lib/libb.so", 4096, 4096, 1.0);

	/*
	 * a runs. Chains:
	 *   ab: state 1, never left (W11 = 0): no bid.
	 *   ac: state 1, W11=2 W12=1 W13=1 tau1=40: c bids
	 *       p1 = (1 - exp(-0.75)) * 2/2.01 = 0.5250084052328212
	 *   bc: state 0, W00=3 W01=1 W02=1 tau0=60: b and c each bid
	 *       p2 = (1 - exp(-0.5)) * 1/3.01 = 0.13072071105892577
	 * b: ln(1 - p2) = -0.14009081416532276
	 * c: ln(1 - p1) + ln(1 - p2) = -0.884548984496373 (two chains combined)
	 */
	set_running(model, a);
	ab->state = MARKOV_A;
	ac->state = MARKOV_A;
	ac->weight[1][1] = 2;
	ac->weight[1][2] = 1;
	ac->weight[1][3] = 1;
	ac->time_to_leave[1] = 40;
	bc->state = MARKOV_NEITHER;
	bc->weight[0][0] = 3;
	bc->weight[0][1] = 1;
	bc->weight[0][2] = 1;
	bc->time_to_leave[0] = 60;

	/*
	 * Stale values from an earlier cycle (which listed what it scored)
	 * are reset first.
	 */
	a->lnprob = -5;
	g_ptr_array_add(model->scored_exes, a);
	set_score(model, shared, -7);

	/*
	 * Twice, the second time with basemax: no exe has more than one bid
	 * from state "neither", so the scores are the same.
	 */
	for (int round = 0; round < 2; round++) {
		conf.basemax = round == 1;
		prophet_score(model, &conf);
		ck_assert_double_eq(a->lnprob, 0);
		ck_assert_double_eq_tol(b->lnprob, -0.14009081416532276, TOL);
		ck_assert_double_eq_tol(c->lnprob, -0.884548984496373, TOL);
		ck_assert_double_eq_tol(prophet_exe_probability(c), 0.5870996442478, 1e-12);

		/*
		 * shared: +1 for running a, plus c's score: 0.11545101550362702
		 * half:   c uses it half the time: ln(1 - 0.5 * 0.5870996442478)
		 *         = -0.34750259898169034
		 * only_a: +1; only_b: b's score.
		 */
		ck_assert_double_eq_tol(shared->prophet.lnprob, 0.11545101550362702, TOL);
		ck_assert_double_eq_tol(half->prophet.lnprob, -0.34750259898169034, TOL);
		ck_assert_double_eq_tol(only_a->prophet.lnprob, 1.0, TOL);
		ck_assert_double_eq_tol(only_b->prophet.lnprob, -0.14009081416532276, TOL);
	}

	/* Only maps with a negative score, most likely first. */
	{
		guint64 used;
		g_autoptr(GPtrArray) sel = prophet_select(model, 1000, &used);

		ck_assert_uint_eq(sel->len, 2);
		ck_assert_ptr_eq(g_ptr_array_index(sel, 0), half);
		ck_assert_ptr_eq(g_ptr_array_index(sel, 1), only_b);
		ck_assert_uint_eq(used, 8);
	}
}
END_TEST

/*
 * The scoring visits only the chains, the running exes and the exes that
 * got a bid; every other map keeps lnprob 0 and is not a candidate, and
 * what the previous scoring touched is reset.
 */
START_TEST(test_score_lists)
{
	g_autoptr(Model) model = model_new();
	Conf conf = { .cycle = 20, .usecorrelation = FALSE };
	Exe *a, *b;
	Exe *idle = add_exe(model, "/usr/bin/idle");
	Markov *m = bid_chain(model, &a, &b);
	Map *ma = add_map(model, a, "/usr/lib/liba.so", 0, 4096, 1.0);
	Map *mb = add_map(model, b, "/usr/lib/libb.so", 0, 4096, 1.0);
	Map *mi = add_map(model, idle, "/usr/lib/libidle.so", 0, 4096, 1.0);
	Map *stale = add_map(model, b, "/usr/lib/libstale.so", 0, 4096, 1.0);

	stale->learn.stale = TRUE;
	/* Both stopped: a and b bid (see test_bid_plain); idle has no chain. */
	prophet_score(model, &conf);
	ck_assert_uint_eq(model->scored_exes->len, 2);
	ck_assert_uint_eq(model->candidates->len, 2);
	ck_assert_double_eq_tol(ma->prophet.lnprob, -0.6403804548298226, TOL);
	ck_assert_double_eq_tol(mb->prophet.lnprob, -0.3787337446950685, TOL);
	ck_assert_double_eq(mi->prophet.lnprob, 0);
	ck_assert_double_eq(stale->prophet.lnprob, 0);
	ck_assert_double_eq(idle->lnprob, 0);

	/*
	 * Now a runs and the chain, in state 1, has never left it: no bid.
	 * a's map gets +1, b's score and map go back to 0.
	 */
	set_running(model, a);
	m->state = MARKOV_A;
	prophet_score(model, &conf);
	ck_assert_uint_eq(model->scored_exes->len, 0);
	ck_assert_uint_eq(model->candidates->len, 1);
	ck_assert_double_eq(ma->prophet.lnprob, 1);
	ck_assert_double_eq(b->lnprob, 0);
	ck_assert_double_eq(mb->prophet.lnprob, 0);
	{
		g_autoptr(GPtrArray) sel = prophet_select(model, 1000, NULL);

		ck_assert_uint_eq(sel->len, 0);
	}
}
END_TEST

START_TEST(test_score_correlation)
{
	g_autoptr(Model) model = model_new();
	Conf conf = { .cycle = 20, .usecorrelation = TRUE };
	Exe *a, *b;
	Markov *m = bid_chain(model, &a, &b);
	Map *ma = add_map(model, a, "/usr/lib/liba.so", 0, 4096, 1.0);

	/* As in test_bid_correlation: a's score is -0.21451084963023428. */
	model->total_time = 100;
	a->time = 40;
	b->time = 50;
	m->time = 30;
	prophet_score(model, &conf);
	ck_assert_double_eq_tol(a->lnprob, -0.21451084963023428, TOL);
	ck_assert_double_eq_tol(ma->prophet.lnprob, -0.21451084963023428, TOL);

	/* The cycle comes from the configuration: 40 s gives 1 - exp(-2). */
	conf.cycle = 40;
	conf.usecorrelation = FALSE;
	prophet_score(model, &conf);
	ck_assert_double_eq_tol(a->lnprob, log(1 - (1 - exp(-2.0)) * 3 / 4.01), TOL);
}
END_TEST

/*
 * A map freed after a scoring (its exe stopped using it) leaves the
 * candidates: the next scoring resets the last one's scores and must not
 * write into freed memory.
 */
START_TEST(test_score_forgets_freed_maps)
{
	g_autoptr(Model) model = model_new();
	Conf conf = { .cycle = 20, .usecorrelation = FALSE };
	Exe *a, *b;
	Map *ma;

	(void)bid_chain(model, &a, &b);
	ma = add_map(model, a, "/usr/lib/liba.so", 0, 4096, 1.0);
	(void)add_map(model, a, "/usr/lib/liba2.so", 0, 4096, 1.0);
	prophet_score(model, &conf);
	ck_assert_uint_eq(model->candidates->len, 2);
	ck_assert_ptr_eq(a->exemaps->len > 0 ? g_array_index(a->exemaps, ExeMap, 0).map : NULL, ma);
	exe_remove_map(model, a, 0);  /* its only use: freed */
	ck_assert_uint_eq(model->candidates->len, 1);
	ck_assert_ptr_ne(g_ptr_array_index(model->candidates, 0), ma);
	prophet_score(model, &conf);
	ck_assert_uint_eq(model->candidates->len, 1);
}
END_TEST

START_TEST(test_score_prob_edges)
{
	g_autoptr(Model) model = model_new();
	Conf conf = { .cycle = 20, .usecorrelation = FALSE };
	Exe *a, *b;
	Map *never, *always;

	bid_chain(model, &a, &b);
	never = add_map(model, a, "/usr/lib/never.so", 0, 4096, 0.0);
	always = add_map(model, a, "/usr/lib/always.so", 0, 4096, 1.0);
	/* A probability above 1 (corrupt state) counts as 1, not as NaN. */
	exe_add_map(model, b, map_new("/usr/lib/always.so", 0, 4096, 0), 7.5);

	prophet_score(model, &conf);
	ck_assert_double_eq(never->prophet.lnprob, 0);
	ck_assert_double_eq_tol(always->prophet.lnprob,
				-0.6403804548298226 + -0.3787337446950685, TOL);
}
END_TEST

/* ---- budget ---- */

START_TEST(test_budget)
{
	Conf conf = { .memtotal = -10, .memfree = 50, .memcached = 0 };
	ProcMemstat mem = { .total = 8000000, .free = 2000000, .cached = 3000000 };

	/* Defaults: -10 * 80000 + 50 * 20000 = -800000 + 1000000 = 200000. */
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 200000);

	/* Little free memory: -800000 + 500000 < 0 -> 0. */
	mem.free = 1000000;
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 0);

	/* The cached term is added after the max: 0 + 10 * 30000. */
	conf.memcached = 10;
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 300000);

	/* A negative total is no budget: 10 * 10000 - 50 * 30000 -> 0. */
	conf.memtotal = 0;
	conf.memfree = 10;
	conf.memcached = -50;
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 0);

	/* Divisions round down: 2099/100 = 20. */
	conf.memtotal = 0;
	conf.memfree = 100;
	conf.memcached = 0;
	mem.free = 2099;
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 2000);
	mem.free = 99;
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 0);
}
END_TEST

START_TEST(test_budget_clamped)
{
	Conf conf = { .memtotal = -500, .memfree = 150, .memcached = 1000 };
	ProcMemstat mem = { .total = 1000, .free = 2050, .cached = 300 };

	/* Clamped to -100, 100, 100: -100*10 + 100*20 = 1000; + 100*3 = 1300. */
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 1300);

	conf.memcached = G_MININT64;  /* -> -100: 1000 - 300 = 700 */
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 700);

	/*
	 * Absurd figures must not overflow (UBSan would abort): each
	 * figure/100 is capped at G_MAXINT64/400.
	 */
	conf.memtotal = 0;
	conf.memfree = 100;
	conf.memcached = 100;
	mem.free = G_MAXUINT64;
	mem.cached = G_MAXUINT64;
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem),
			  (guint64)(200 * (G_MAXINT64 / 400)));

	mem.free = 0;
	mem.cached = 0;
	mem.total = G_MAXUINT64;
	conf.memtotal = -100;
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 0);
}
END_TEST

START_TEST(test_budget_memavailable)
{
	Conf conf = { .memtotal = -10, .memfree = 50, .memcached = 0, .memavailable = 0 };
	ProcMemstat mem = { .total = 8000000, .free = 500000, .cached = 6000000,
			    .available = 6400000 };

	/*
	 * memavailable = 0 is 0.6.4's budget: -10 * 80000 + 50 * 5000 =
	 * -800000 + 250000 < 0 -> 0, although 6.4 GB could be made free.
	 */
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 0);

	/* The documented use: memfree = 0, memavailable = 50:
	 * -10 * 80000 + 50 * 64000 = -800000 + 3200000 = 2400000. */
	conf.memfree = 0;
	conf.memavailable = 50;
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 2400000);

	/* All three inside the max(): -800000 + 250000 + 3200000 = 2650000. */
	conf.memfree = 50;
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 2650000);

	/* memcached after the max(): 2650000 + 10 * 60000 = 3250000. */
	conf.memcached = 10;
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 3250000);

	/* A negative memavailable drags the max() to 0, then cached is added:
	 * -800000 + 250000 - 20 * 64000 = -1830000 -> 0; + 600000. */
	conf.memavailable = -20;
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 600000);

	/* Clamped to 100 and floored: available = 12399 -> 123 * 100 = 12300. */
	conf = (Conf){ .memavailable = 1000 };
	mem = (ProcMemstat){ .total = 20000, .available = 12399 };
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), 12300);

	/* Four absurd terms stay inside gint64: 400 * (G_MAXINT64 / 400). */
	conf = (Conf){ .memtotal = 100, .memfree = 100, .memavailable = 100, .memcached = 100 };
	mem = (ProcMemstat){ .total = G_MAXUINT64, .free = G_MAXUINT64,
			     .available = G_MAXUINT64, .cached = G_MAXUINT64 };
	ck_assert_uint_eq(prophet_budget_kb(&conf, &mem), (guint64)(400 * (G_MAXINT64 / 400)));
}
END_TEST

/* ---- pausing ---- */

static const struct {
	gint64 minavailable, maxpressure;
	guint64 total, available;
	gboolean have_psi;
	guint some_avg10;
	ProphetPause want;
} pause_cases[] = {
	/* 5% of 8000000 KB is 400000 KB: below pauses, at or above does not. */
	{ 5, 10, 8000000, 399999, TRUE, 0, PROPHET_PAUSE_AVAILABLE },
	{ 5, 10, 8000000, 400000, TRUE, 0, PROPHET_PREFETCH },
	{ 5, 10, 8000000, 400001, TRUE, 0, PROPHET_PREFETCH },
	/* Exact, not floored: 5% of 1010 KB is 50.5 KB, so 50 pauses and 51 does not. */
	{ 5, 0, 1010, 50, FALSE, 0, PROPHET_PAUSE_AVAILABLE },
	{ 5, 0, 1010, 51, FALSE, 0, PROPHET_PREFETCH },
	/* 100% of MemTotal: only everything available passes. */
	{ 100, 0, 1000, 999, FALSE, 0, PROPHET_PAUSE_AVAILABLE },
	{ 100, 0, 1000, 1000, FALSE, 0, PROPHET_PREFETCH },
	/* minavailable = 0 is off, even with nothing available. */
	{ 0, 0, 8000000, 0, FALSE, 0, PROPHET_PREFETCH },
	/* No overflow on absurd totals: 5% of G_MAXUINT64. */
	{ 5, 0, G_MAXUINT64, G_MAXUINT64 / 20, FALSE, 0, PROPHET_PAUSE_AVAILABLE },
	{ 5, 0, G_MAXUINT64, G_MAXUINT64 / 20 + 1, FALSE, 0, PROPHET_PREFETCH },
	/* Pressure 10%: 10.01 is above, 10.00 is not. */
	{ 5, 10, 8000000, 8000000, TRUE, 1001, PROPHET_PAUSE_PRESSURE },
	{ 5, 10, 8000000, 8000000, TRUE, 1000, PROPHET_PREFETCH },
	{ 5, 10, 8000000, 8000000, TRUE, 999, PROPHET_PREFETCH },
	/* maxpressure = 0 is off, even at 100%. */
	{ 5, 0, 8000000, 8000000, TRUE, 10000, PROPHET_PREFETCH },
	/* maxpressure = 100: nothing is above 100.00. */
	{ 5, 100, 8000000, 8000000, TRUE, 10000, PROPHET_PREFETCH },
	/* No PSI in the kernel: MemAvailable alone decides. */
	{ 5, 10, 8000000, 8000000, FALSE, 9999, PROPHET_PREFETCH },
	{ 5, 10, 8000000, 100, FALSE, 9999, PROPHET_PAUSE_AVAILABLE },
	/* Both at once: the MemAvailable reason is given. */
	{ 5, 10, 8000000, 100, TRUE, 5000, PROPHET_PAUSE_AVAILABLE },
	/* Both off. */
	{ 0, 0, 8000000, 0, TRUE, 10000, PROPHET_PREFETCH },
};

START_TEST(test_pause)
{
	Conf conf = { .minavailable = pause_cases[_i].minavailable,
		      .maxpressure = pause_cases[_i].maxpressure };
	ProcMemstat mem = { .total = pause_cases[_i].total, .available = pause_cases[_i].available,
			    .free = 1, .cached = 1 };
	ProcPressure psi = { .some_avg10 = pause_cases[_i].some_avg10 };

	ck_assert_int_eq(prophet_pause(&conf, &mem, pause_cases[_i].have_psi ? &psi : NULL,
				       POWER_AC),
			 pause_cases[_i].want);
}
END_TEST

/* On battery: batterybudget 0 pauses, before any memory reason; else the budget shrinks. */
START_TEST(test_pause_battery)
{
	Conf conf = { .minavailable = 5, .maxpressure = 10, .batterybudget = 0 };
	ProcMemstat plenty = { .total = 8000000, .available = 8000000 };
	ProcMemstat scarce = { .total = 8000000, .available = 100 };
	ProcPressure psi = { .some_avg10 = 5000 };

	ck_assert_int_eq(prophet_pause(&conf, &plenty, NULL, POWER_BATTERY), PROPHET_PAUSE_BATTERY);
	ck_assert_int_eq(prophet_pause(&conf, &scarce, &psi, POWER_BATTERY), PROPHET_PAUSE_BATTERY);
	ck_assert_int_eq(prophet_pause(&conf, &plenty, NULL, POWER_AC), PROPHET_PREFETCH);
	ck_assert_int_eq(prophet_pause(&conf, &scarce, NULL, POWER_AC), PROPHET_PAUSE_AVAILABLE);
	/* 1..100 never pause for the battery; the memory rules still do. */
	conf.batterybudget = 1;
	ck_assert_int_eq(prophet_pause(&conf, &plenty, NULL, POWER_BATTERY), PROPHET_PREFETCH);
	ck_assert_int_eq(prophet_pause(&conf, &scarce, NULL, POWER_BATTERY), PROPHET_PAUSE_AVAILABLE);
	conf.batterybudget = 100;
	ck_assert_int_eq(prophet_pause(&conf, &plenty, &psi, POWER_BATTERY), PROPHET_PAUSE_PRESSURE);

	/* The budget: whole on AC, floor(budget * batterybudget / 100) on battery. */
	conf.batterybudget = 0;
	ck_assert_uint_eq(prophet_power_budget_kb(&conf, 123456, POWER_AC), 123456);
	ck_assert_uint_eq(prophet_power_budget_kb(&conf, 123456, POWER_BATTERY), 0);
	conf.batterybudget = 30;
	/* 123456 * 30 / 100 = 37036.8 */
	ck_assert_uint_eq(prophet_power_budget_kb(&conf, 123456, POWER_BATTERY), 37036);
	ck_assert_uint_eq(prophet_power_budget_kb(&conf, 123456, POWER_AC), 123456);
	/* 3 * 30 / 100 = 0.9 */
	ck_assert_uint_eq(prophet_power_budget_kb(&conf, 3, POWER_BATTERY), 0);
	conf.batterybudget = 100;
	ck_assert_uint_eq(prophet_power_budget_kb(&conf, 123456, POWER_BATTERY), 123456);
	/* No overflow: 99% of G_MAXUINT64 is 18262276632972456098.85 */
	conf.batterybudget = 99;
	ck_assert_uint_eq(prophet_power_budget_kb(&conf, G_MAXUINT64, POWER_BATTERY),
			  G_GUINT64_CONSTANT(18262276632972456098));
}
END_TEST

START_TEST(test_pause_describe)
{
	Conf conf = { .minavailable = 7, .maxpressure = 15 };
	g_autofree char *a = prophet_pause_describe(PROPHET_PAUSE_AVAILABLE, &conf);
	g_autofree char *p = prophet_pause_describe(PROPHET_PAUSE_PRESSURE, &conf);
	g_autofree char *b = prophet_pause_describe(PROPHET_PAUSE_BATTERY, &conf);

	ck_assert_str_eq(b, "on battery");
	ck_assert_str_eq(a, "MemAvailable is below 7% of MemTotal");
	ck_assert_str_eq(p, "memory pressure (PSI some avg10) is above 15%");
}
END_TEST

/* ---- selection ---- */

/*
 * Maps, in the order the prophet must rank them:
 *   A  -3.0  /usr/lib/a      4096 B ->  4 KB
 *   B  -2.0  /usr/lib/b     10241 B -> 11 KB
 *   D  -2.0  /usr/lib/c @0   2048 B ->  2 KB   (same score: path, then offset)
 *   C  -2.0  /usr/lib/c @4096 1000 B -> 1 KB
 *   E  -1.0  /usr/lib/e      1025 B ->  2 KB
 * and two that are never taken: F 0.0, G +0.5.
 */
typedef struct {
	Model *model;
	Map *A, *B, *C, *D, *E, *F, *G;
} Shop;

static void
shop_init(Shop *s)
{
	Exe *x;

	s->model = model_new();
	x = add_exe(s->model, "/usr/bin/x");
	/* Registered in scrambled order: the hash order must not matter. */
	s->G = add_map(s->model, x, "/usr/lib/g", 0, 4096, 1);
	s->E = add_map(s->model, x, "/usr/lib/e", 0, 1025, 1);
	s->C = add_map(s->model, x, "/usr/lib/c", 4096, 1000, 1);
	s->A = add_map(s->model, x, "/usr/lib/a", 0, 4096, 1);
	s->F = add_map(s->model, x, "/usr/lib/f", 0, 4096, 1);
	s->D = add_map(s->model, x, "/usr/lib/c", 0, 2048, 1);
	s->B = add_map(s->model, x, "/usr/lib/b", 0, 10241, 1);
	set_score(s->model, s->A, -3);
	set_score(s->model, s->B, -2);
	set_score(s->model, s->C, -2);
	set_score(s->model, s->D, -2);
	set_score(s->model, s->E, -1);
	set_score(s->model, s->F, 0);
	set_score(s->model, s->G, 0.5);
}

static void
assert_selection(Shop *s, guint64 budget, guint64 want_used, Map *const *want)
{
	guint64 used = 12345;
	g_autoptr(GPtrArray) sel = prophet_select(s->model, budget, &used);
	guint n = 0;

	for (; want[n]; n++) {
		ck_assert_uint_lt(n, sel->len);
		ck_assert_str_eq(((Map *)g_ptr_array_index(sel, n))->path, want[n]->path);
		ck_assert_ptr_eq(g_ptr_array_index(sel, n), want[n]);
	}
	ck_assert_uint_eq(sel->len, n);
	ck_assert_uint_eq(used, want_used);
}

START_TEST(test_select_greedy)
{
	Shop s;

	shop_init(&s);
	{
		/* All five, never F or G: 4+11+2+1+2 = 20 KB. */
		Map *const all[] = { s.A, s.B, s.D, s.C, s.E, NULL };
		/* 16: A (12 left), B (1 left), D skipped, C (0 left), E skipped. */
		Map *const b16[] = { s.A, s.B, s.C, NULL };
		/* 5: A (1 left), B and D skipped, C (0 left). */
		Map *const b5[] = { s.A, s.C, NULL };
		/* 3: A skipped, B skipped, D (1 left), C (0 left). */
		Map *const b3[] = { s.D, s.C, NULL };
		/* 19: A, B (4 left), D (2 left), C (1 left), E (2 KB) skipped: 18 used. */
		Map *const b19[] = { s.A, s.B, s.D, s.C, NULL };
		Map *const none[] = { NULL };

		assert_selection(&s, 1000000, 20, all);
		assert_selection(&s, G_MAXUINT64, 20, all);
		assert_selection(&s, 20, 20, all);
		assert_selection(&s, 19, 18, b19);
		assert_selection(&s, 16, 16, b16);
		assert_selection(&s, 5, 5, b5);
		assert_selection(&s, 3, 3, b3);
		assert_selection(&s, 0, 0, none);
		/* The ranks behind the ties: a < b < c@0 < c@4096 < e < f < g. */
		ck_assert_uint_eq(s.A->rank, 0);
		ck_assert_uint_eq(s.D->rank, 2);
		ck_assert_uint_eq(s.C->rank, 3);

		/* A stale map (its file replaced) is never taken. */
		s.A->learn.stale = TRUE;
		{
			Map *const stale[] = { s.B, s.D, s.C, s.E, NULL };

			assert_selection(&s, 1000000, 16, stale);
		}
		s.A->learn.stale = FALSE;

		/* Only the listed candidates count, whatever the other maps hold. */
		g_ptr_array_set_size(s.model->candidates, 1);
		{
			Map *const first[] = { s.A, NULL };

			assert_selection(&s, 1000000, 4, first);
		}
	}
	model_free(s.model);
}
END_TEST

START_TEST(test_select_rounding)
{
	g_autoptr(Model) model = model_new();
	Exe *x = add_exe(model, "/usr/bin/x");
	Map *exact = add_map(model, x, "/usr/lib/exact", 0, 1024, 1);
	Map *over = add_map(model, x, "/usr/lib/over", 0, 1025, 1);
	Map *nan_map = add_map(model, x, "/usr/lib/nan", 0, 1, 1);
	guint64 used;

	/* 1024 B is 1 KB and fits a budget of 1; 1025 B is 2 KB and does not. */
	set_score(model, exact, -1);
	set_score(model, over, -2);
	set_score(model, nan_map, NAN);
	{
		g_autoptr(GPtrArray) sel = prophet_select(model, 1, &used);

		ck_assert_uint_eq(sel->len, 1);
		ck_assert_ptr_eq(g_ptr_array_index(sel, 0), exact);
		ck_assert_uint_eq(used, 1);
	}
	{
		/* NaN is never selected; NULL used_kb is allowed. */
		g_autoptr(GPtrArray) sel = prophet_select(model, 100, NULL);

		ck_assert_uint_eq(sel->len, 2);
		ck_assert_ptr_eq(g_ptr_array_index(sel, 0), over);
		ck_assert_ptr_eq(g_ptr_array_index(sel, 1), exact);
	}
}
END_TEST

/*
 * A map needed with a probability below PROPHET_MIN_PROB (1e-4) is not
 * read ahead, whatever the budget: ln(1 - 1e-4) = -1.00005000333e-4.
 */
START_TEST(test_select_floor)
{
	g_autoptr(Model) model = model_new();
	Exe *x = add_exe(model, "/usr/lib/x");
	Map *tiny = add_map(model, x, "/usr/lib/tiny", 0, 4096, 1);
	Map *edge = add_map(model, x, "/usr/lib/edge", 0, 4096, 1);
	Map *likely = add_map(model, x, "/usr/lib/likely", 0, 4096, 1);
	g_autoptr(GPtrArray) sel = NULL;

	set_score(model, tiny, -5e-5);                /* P = 5e-5: left out */
	set_score(model, edge, log1p(-PROPHET_MIN_PROB)); /* exactly 1e-4: taken */
	set_score(model, likely, -2e-4);              /* P = 2e-4: taken */
	sel = prophet_select(model, G_MAXUINT64, NULL);
	ck_assert_uint_eq(sel->len, 2);
	ck_assert_ptr_eq(g_ptr_array_index(sel, 0), likely);
	ck_assert_ptr_eq(g_ptr_array_index(sel, 1), edge);
}
END_TEST

START_TEST(test_select_empty)
{
	g_autoptr(Model) model = model_new();
	guint64 used = 99;
	g_autoptr(GPtrArray) sel = prophet_select(model, 100, &used);

	ck_assert_uint_eq(sel->len, 0);
	ck_assert_uint_eq(used, 0);
}
END_TEST

START_TEST(test_exe_probability)
{
	g_autoptr(Exe) exe = exe_new("/usr/bin/x", FALSE, 0);

	exe->lnprob = 0;
	ck_assert_double_eq(prophet_exe_probability(exe), 0);
	exe->lnprob = log(0.25);
	ck_assert_double_eq_tol(prophet_exe_probability(exe), 0.75, TOL);
	/* Tiny scores keep their precision (no 1 - exp cancellation). */
	exe->lnprob = -1e-12;
	ck_assert_double_eq_tol(prophet_exe_probability(exe), 1e-12, 1e-24);
}
END_TEST

static Suite *
prophet_suite(void)
{
	Suite *s = suite_create("prophet");
	TCase *tc;

	tc = tcase_create("bid");
	tcase_add_test(tc, test_bid_plain);
	tcase_add_test(tc, test_bid_correlation);
	tcase_add_test(tc, test_bid_skips);
	tcase_add_test(tc, test_bid_running_exe);
	tcase_add_test(tc, test_bid_clamped);
	tcase_add_test(tc, test_bid_base_max);
	tcase_add_test(tc, test_bid_lift);
	tcase_add_test(tc, test_note_starts);
	tcase_add_test(tc, test_bid_successors);
	tcase_add_test(tc, test_free_start);
	tcase_add_test(tc, test_handoff_order);
	tcase_add_test(tc, test_handoff_learn);
	tcase_add_test(tc, test_bid_handoffs);
	tcase_add_test(tc, test_away_chance);
	tcase_add_test(tc, test_bid_free_and_away);
	tcase_add_test(tc, test_bid_frequency);
	tcase_add_test(tc, test_bid_order_damped);
	tcase_add_test(tc, test_order_speaks);
	suite_add_tcase(s, tc);

	tc = tcase_create("score");
	tcase_add_test(tc, test_score);
	tcase_add_test(tc, test_score_correlation);
	tcase_add_test(tc, test_score_lists);
	tcase_add_test(tc, test_score_prob_edges);
	tcase_add_test(tc, test_score_forgets_freed_maps);
	tcase_add_test(tc, test_exe_probability);
	suite_add_tcase(s, tc);

	tc = tcase_create("budget");
	tcase_add_test(tc, test_budget);
	tcase_add_test(tc, test_budget_clamped);
	tcase_add_test(tc, test_budget_memavailable);
	tcase_add_loop_test(tc, test_pause, 0, G_N_ELEMENTS(pause_cases));
	tcase_add_test(tc, test_pause_battery);
	tcase_add_test(tc, test_pause_describe);
	suite_add_tcase(s, tc);

	tc = tcase_create("select");
	tcase_add_test(tc, test_select_greedy);
	tcase_add_test(tc, test_select_rounding);
	tcase_add_test(tc, test_select_empty);
	tcase_add_test(tc, test_select_floor);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	return tu_run_suite(prophet_suite());
}
