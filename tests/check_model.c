/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/model.c: the Markov bookkeeping is driven through hand-made
 * histories on an injected clock and every counter is checked against a
 * value worked out by hand in the comments.
 */
#include "config.h"

#include "testutil.h"
#include "model.h"

#include <math.h>

#define TOL 1e-12

/* ---- helpers ---- */

/*
 * What a scan at time `now` does to the model: the exes in the
 * NULL-terminated list are the ones seen running.
 */
static void
scan(Model *model, gint64 now, Exe *const *running)
{
	model->last_running_timestamp = now;
	g_ptr_array_set_size(model->running, 0);
	for (; *running; running++) {
		(*running)->running_timestamp = now;
		g_ptr_array_add(model->running, *running);
	}
}

/* The chain between a and b (either order), or NULL. */
static Markov *
chain_of(Exe *a, Exe *b)
{
	for (guint i = 0; i < a->chains->len; i++) {
		Markov *m = g_ptr_array_index(a->chains, i);

		if ((m->a == a && m->b == b) || (m->a == b && m->b == a))
			return m;
	}
	return NULL;
}

static double
weight_sum(const Markov *m)
{
	double sum = 0;

	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			sum += m->weight[i][j];
	return sum;
}

static guint criticals;

static void
count_critical(const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
	(void)domain; (void)level; (void)message; (void)data;
	criticals++;
}

/* Counts (and silences) the criticals of g_return_if_fail. */
static void
catch_criticals(void)
{
	criticals = 0;
	g_log_set_handler(G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, count_critical, NULL);
}

/* ---- maps ---- */

START_TEST(test_map_identity)
{
	g_autoptr(Map) m1 = map_new("/usr/lib/libc.so.6", 0, 4096, 5);
	g_autoptr(Map) m2 = map_new("/usr/lib/libc.so.6", 0, 4096, 99);
	g_autoptr(Map) off = map_new("/usr/lib/libc.so.6", 4096, 4096, 5);
	g_autoptr(Map) len = map_new("/usr/lib/libc.so.6", 0, 8192, 5);
	g_autoptr(Map) path = map_new("/usr/lib/libm.so.6", 0, 4096, 5);
	/* Differ only above bit 32 of the offset. */
	g_autoptr(Map) hi1 = map_new("/usr/lib/big", G_GUINT64_CONSTANT(1) << 40, 1, 0);
	g_autoptr(Map) hi2 = map_new("/usr/lib/big", 0, 1, 0);

	ck_assert_str_eq(m1->path, "/usr/lib/libc.so.6");
	ck_assert_uint_eq(m1->offset, 0);
	ck_assert_uint_eq(m1->length, 4096);
	ck_assert_int_eq(m1->update_time, 5);
	ck_assert_int_eq(m1->refcount, 0);

	/* update_time is not part of the identity. */
	ck_assert(map_equal(m1, m2));
	ck_assert_uint_eq(map_hash(m1), map_hash(m2));
	ck_assert(!map_equal(m1, off));
	ck_assert(!map_equal(m1, len));
	ck_assert(!map_equal(m1, path));
	ck_assert(!map_equal(hi1, hi2));
	ck_assert_uint_ne(map_hash(hi1), map_hash(hi2));
	ck_assert_uint_ne(map_hash(m1), map_hash(off));

	map_free(NULL);
}
END_TEST

START_TEST(test_map_refcounts)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Map *shared = map_new("/usr/lib/libshared.so", 0, 10000, 0);
	Map *only_a = map_new("/usr/lib/liba.so", 4096, 2048, 0);

	exe_add_map(model, a, shared, 1.0);
	exe_add_map(model, a, only_a, 0.5);
	ck_assert_uint_eq(g_hash_table_size(model->maps), 2);
	ck_assert_int_eq(shared->refcount, 1);
	ck_assert_uint_eq(a->size, 12048);

	/* A second use by the same exe, via the same object: a no-op. */
	exe_add_map(model, a, shared, 1.0);
	ck_assert_int_eq(shared->refcount, 1);
	ck_assert_uint_eq(a->exemaps->len, 2);
	ck_assert_uint_eq(a->size, 12048);

	/* ... and via an equal copy, which is freed (ASan checks that). */
	exe_add_map(model, a, map_new("/usr/lib/libshared.so", 0, 10000, 0), 1.0);
	ck_assert_int_eq(shared->refcount, 1);
	ck_assert_uint_eq(a->exemaps->len, 2);

	/* b uses the registered map through an equal copy. */
	exe_add_map(model, b, map_new("/usr/lib/libshared.so", 0, 10000, 7), 0.25);
	ck_assert_int_eq(shared->refcount, 2);
	ck_assert_uint_eq(g_hash_table_size(model->maps), 2);
	ck_assert_ptr_eq(g_array_index(b->exemaps, ExeMap, 0).map, shared);
	ck_assert_double_eq_tol(g_array_index(b->exemaps, ExeMap, 0).prob, 0.25, TOL);
	ck_assert_double_eq_tol(g_array_index(a->exemaps, ExeMap, 1).prob, 0.5, TOL);
	ck_assert_uint_eq(b->size, 10000);

	ck_assert_ptr_eq(model_lookup_map(model, "/usr/lib/libshared.so", 0, 10000), shared);
	ck_assert_ptr_eq(model_lookup_map(model, "/usr/lib/liba.so", 4096, 2048), only_a);
	ck_assert_ptr_null(model_lookup_map(model, "/usr/lib/liba.so", 0, 2048));
	ck_assert_ptr_null(model_lookup_map(model, "/usr/lib/liba.so", 4096, 2047));

	model_add_exe(model, a, 0, TRUE);
	model_add_exe(model, b, 0, TRUE);

	/* Removing a frees its private map and keeps the shared one. */
	model_remove_exe(model, a);
	ck_assert_ptr_null(model_lookup_exe(model, "/usr/bin/a"));
	ck_assert_ptr_null(model_lookup_map(model, "/usr/lib/liba.so", 4096, 2048));
	ck_assert_ptr_eq(model_lookup_map(model, "/usr/lib/libshared.so", 0, 10000), shared);
	ck_assert_int_eq(shared->refcount, 1);
	ck_assert_uint_eq(g_hash_table_size(model->maps), 1);

	model_remove_exe(model, b);
	ck_assert_uint_eq(g_hash_table_size(model->maps), 0);
	ck_assert_uint_eq(g_hash_table_size(model->exes), 0);
}
END_TEST

/* ---- executables ---- */

START_TEST(test_exe_new)
{
	g_autoptr(Model) model = model_new();
	g_autoptr(Exe) run = exe_new("/usr/bin/run", TRUE, 40);
	g_autoptr(Exe) stop = exe_new("/usr/bin/stop", FALSE, 40);

	ck_assert_str_eq(run->path, "/usr/bin/run");
	ck_assert_int_eq(run->running_timestamp, 40);
	ck_assert_int_eq(run->change_timestamp, 40);
	ck_assert_int_eq(run->update_time, 40);
	ck_assert_double_eq_tol(run->time, 0, TOL);
	ck_assert_uint_eq(run->size, 0);
	ck_assert_uint_eq(run->exemaps->len, 0);
	ck_assert_uint_eq(run->chains->len, 0);

	ck_assert_int_eq(stop->running_timestamp, -1);
	ck_assert_int_eq(stop->change_timestamp, -1);
	ck_assert_int_eq(stop->update_time, -1);

	/* Running means "seen by the last scan". */
	model->last_running_timestamp = 40;
	ck_assert(exe_is_running(model, run));
	ck_assert(!exe_is_running(model, stop));
	model->last_running_timestamp = 60;
	ck_assert(!exe_is_running(model, run));
	/* Never seen is never running, even against a model at -1. */
	model->last_running_timestamp = -1;
	ck_assert(!exe_is_running(model, stop));

	exe_free(NULL);
}
END_TEST

START_TEST(test_model_add_lookup)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", TRUE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *c = exe_new("/usr/bin/c", FALSE, 0);
	g_autoptr(Exe) dup = exe_new("/usr/bin/a", FALSE, 0);

	ck_assert_int_eq(model->time, 0);
	ck_assert_int_eq(model->last_running_timestamp, 0);
	ck_assert_int_eq(model->last_accounting_timestamp, 0);
	ck_assert_uint_eq(model->n_chains, 0);

	model_add_exe(model, a, 0, TRUE);
	model_add_exe(model, b, 0, TRUE);
	model_add_exe(model, c, 0, TRUE);
	ck_assert_ptr_eq(model_lookup_exe(model, "/usr/bin/a"), a);
	ck_assert_ptr_eq(model_lookup_exe(model, "/usr/bin/c"), c);
	ck_assert_ptr_null(model_lookup_exe(model, "/usr/bin/d"));

	/* Three exes, three pairs; the newcomer is the b side. */
	ck_assert_uint_eq(model->n_chains, 3);
	ck_assert_uint_eq(a->chains->len, 2);
	ck_assert_ptr_eq(chain_of(a, b)->a, a);
	ck_assert_ptr_eq(chain_of(a, b)->b, b);
	ck_assert_ptr_eq(chain_of(a, c)->b, c);
	ck_assert_ptr_eq(chain_of(b, c)->b, c);

	/* Only a runs (timestamp 0 = last scan at 0). */
	ck_assert_uint_eq(model->running->len, 1);
	ck_assert_ptr_eq(g_ptr_array_index(model->running, 0), a);

	/* Without chains (the state loader's way). */
	{
		Exe *d = exe_new("/usr/bin/d", FALSE, 0);

		model_add_exe(model, d, 0, FALSE);
		ck_assert_uint_eq(model->n_chains, 3);
		ck_assert_uint_eq(d->chains->len, 0);
	}

	/* A second exe with a known path is refused and the model unchanged. */
	catch_criticals();
	model_add_exe(model, dup, 0, TRUE);
	ck_assert_uint_eq(criticals, 1);
	ck_assert_ptr_eq(model_lookup_exe(model, "/usr/bin/a"), a);
	ck_assert_uint_eq(model->n_chains, 3);
	ck_assert_uint_eq(g_hash_table_size(model->exes), 4);
}
END_TEST

START_TEST(test_model_remove_exe)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", TRUE, 0);
	Exe *b = exe_new("/usr/bin/b", TRUE, 0);
	Exe *c = exe_new("/usr/bin/c", FALSE, 0);

	model_add_exe(model, a, 0, TRUE);
	model_add_exe(model, b, 0, TRUE);
	model_add_exe(model, c, 0, TRUE);
	ck_assert_uint_eq(model->n_chains, 3);
	ck_assert_uint_eq(model->running->len, 2);

	model_remove_exe(model, a);
	ck_assert_uint_eq(model->n_chains, 1);
	ck_assert_uint_eq(b->chains->len, 1);
	ck_assert_uint_eq(c->chains->len, 1);
	ck_assert_ptr_eq(chain_of(b, c), g_ptr_array_index(c->chains, 0));
	ck_assert_uint_eq(model->running->len, 1);
	ck_assert_ptr_eq(g_ptr_array_index(model->running, 0), b);
	ck_assert_uint_eq(g_hash_table_size(model->exes), 2);

	/* A path can come back once it is gone. */
	a = exe_new("/usr/bin/a", FALSE, 5);
	model_add_exe(model, a, 5, TRUE);
	ck_assert_uint_eq(model->n_chains, 3);

	/* Removing an exe the model does not hold is refused. */
	{
		g_autoptr(Exe) stranger = exe_new("/usr/bin/b", FALSE, 0);

		catch_criticals();
		model_remove_exe(model, stranger);
		ck_assert_uint_eq(criticals, 1);
		ck_assert_ptr_eq(model_lookup_exe(model, "/usr/bin/b"), b);
	}
}
END_TEST

START_TEST(test_bad_exes_expire)
{
	g_autoptr(Model) model = model_new();
	static const gint64 times[] = { 0, 50, 89, 90, 100, 150 };

	for (guint i = 0; i < G_N_ELEMENTS(times); i++) {
		BadExe *bad = g_new0(BadExe, 1);

		bad->time = times[i];
		bad->size = 1000;
		g_hash_table_insert(model->bad_exes,
				    g_strdup_printf("/usr/bin/t%" G_GINT64_FORMAT, times[i]), bad);
	}

	/* now 150, max age 60: drop those checked more than 60 s ago (< 90). */
	model_expire_bad_exes(model, 150, 60);
	ck_assert_uint_eq(g_hash_table_size(model->bad_exes), 3);
	ck_assert(!g_hash_table_contains(model->bad_exes, "/usr/bin/t0"));
	ck_assert(!g_hash_table_contains(model->bad_exes, "/usr/bin/t50"));
	ck_assert(!g_hash_table_contains(model->bad_exes, "/usr/bin/t89"));
	ck_assert(g_hash_table_contains(model->bad_exes, "/usr/bin/t90"));
	ck_assert(g_hash_table_contains(model->bad_exes, "/usr/bin/t150"));

	model_expire_bad_exes(model, 1000, 0);
	ck_assert_uint_eq(g_hash_table_size(model->bad_exes), 0);
}
END_TEST

/* ---- chains ---- */

START_TEST(test_markov_sequence)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *none[] = { NULL };
	Exe *only_a[] = { a, NULL };
	Exe *both[] = { a, b, NULL };
	Exe *only_b[] = { b, NULL };
	Markov *m;

	scan(model, 0, none);
	model_add_exe(model, a, 0, TRUE);
	model_add_exe(model, b, 0, TRUE);
	m = chain_of(a, b);
	ck_assert_ptr_nonnull(m);
	/* No change time known: starts in the current state at now. */
	ck_assert_int_eq(m->state, MARKOV_NEITHER);
	ck_assert_int_eq(m->change_timestamp, 0);
	ck_assert_double_eq_tol(weight_sum(m), 0, TOL);

	/*
	 * t=10 a starts:  0 -> 1 after 10 s:  W00=1 tau0=10 W01=1
	 * t=30 b starts:  1 -> 3 after 20 s:  W11=1 tau1=20 W13=1
	 * t=70 a stops:   3 -> 2 after 40 s:  W33=1 tau3=40 W32=1
	 * t=100 a starts: 2 -> 3 after 30 s:  W22=1 tau2=30 W23=1
	 * t=120 a stops:  3 -> 2 after 20 s:  W33=2 tau3=40+(20-40)/2=30 W32=2
	 */
	scan(model, 10, only_a);
	model_exe_changed(model, a, 10);
	ck_assert_int_eq(a->change_timestamp, 10);
	ck_assert_int_eq(m->state, MARKOV_A);
	ck_assert_int_eq(m->change_timestamp, 10);

	scan(model, 30, both);
	model_exe_changed(model, b, 30);
	ck_assert_int_eq(m->state, MARKOV_BOTH);

	scan(model, 70, only_b);
	model_exe_changed(model, a, 70);
	ck_assert_int_eq(m->state, MARKOV_B);

	scan(model, 100, both);
	model_exe_changed(model, a, 100);
	scan(model, 120, only_b);
	model_exe_changed(model, a, 120);

	ck_assert_int_eq(m->state, MARKOV_B);
	ck_assert_int_eq(m->change_timestamp, 120);
	ck_assert_double_eq_tol(m->weight[0][0], 1, TOL);
	ck_assert_double_eq_tol(m->weight[0][1], 1, TOL);
	ck_assert_double_eq_tol(m->weight[1][1], 1, TOL);
	ck_assert_double_eq_tol(m->weight[1][3], 1, TOL);
	ck_assert_double_eq_tol(m->weight[2][2], 1, TOL);
	ck_assert_double_eq_tol(m->weight[2][3], 1, TOL);
	ck_assert_double_eq_tol(m->weight[3][3], 2, TOL);
	ck_assert_double_eq_tol(m->weight[3][2], 2, TOL);
	ck_assert_double_eq_tol(weight_sum(m), 10, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[0], 10, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[1], 20, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[2], 30, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[3], 30, TOL);
}
END_TEST

START_TEST(test_markov_simultaneous)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *none[] = { NULL };
	Exe *both[] = { a, b, NULL };
	Markov *m;

	scan(model, 0, none);
	model_add_exe(model, a, 0, TRUE);
	model_add_exe(model, b, 0, TRUE);
	m = chain_of(a, b);

	/* Both start at 10: one jump 0 -> 3 (sojourn 10), not 0 -> 1 -> 3. */
	scan(model, 10, both);
	model_exe_changed(model, a, 10);
	model_exe_changed(model, b, 10);
	ck_assert_int_eq(m->state, MARKOV_BOTH);
	ck_assert_double_eq_tol(m->weight[0][0], 1, TOL);
	ck_assert_double_eq_tol(m->weight[0][3], 1, TOL);
	ck_assert_double_eq_tol(m->weight[0][1], 0, TOL);
	ck_assert_double_eq_tol(m->weight[1][1], 0, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[0], 10, TOL);
	ck_assert_double_eq_tol(weight_sum(m), 2, TOL);

	/* Both stop at 25: one jump 3 -> 0 (sojourn 15). */
	scan(model, 25, none);
	model_exe_changed(model, b, 25);
	model_exe_changed(model, a, 25);
	ck_assert_int_eq(m->state, MARKOV_NEITHER);
	ck_assert_double_eq_tol(m->weight[3][3], 1, TOL);
	ck_assert_double_eq_tol(m->weight[3][0], 1, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[3], 15, TOL);
	ck_assert_double_eq_tol(weight_sum(m), 4, TOL);

	/*
	 * Once per (chain, instant) even if the flags move in between: at 40
	 * a is seen first (0 -> 1 after 15 s), then b at the same instant is
	 * ignored rather than recorded as a zero-length stay in 1.
	 */
	a->running_timestamp = 40;
	model->last_running_timestamp = 40;
	markov_state_changed(model, m, 40);
	ck_assert_int_eq(m->state, MARKOV_A);
	b->running_timestamp = 40;
	markov_state_changed(model, m, 40);
	ck_assert_int_eq(m->state, MARKOV_A);
	ck_assert_int_eq(m->change_timestamp, 40);
	ck_assert_double_eq_tol(m->weight[0][0], 2, TOL);
	ck_assert_double_eq_tol(m->weight[0][1], 1, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[0], 12.5, TOL);  /* (10+15)/2 */
	ck_assert_double_eq_tol(m->weight[1][1], 0, TOL);
	ck_assert_double_eq_tol(weight_sum(m), 6, TOL);
}
END_TEST

START_TEST(test_markov_no_self_transition)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *none[] = { NULL };
	Exe *only_a[] = { a, NULL };
	Markov *m;

	catch_criticals();
	scan(model, 0, none);
	model_add_exe(model, a, 0, TRUE);
	model_add_exe(model, b, 0, TRUE);
	m = chain_of(a, b);

	scan(model, 10, only_a);
	model_exe_changed(model, a, 10);         /* 0 -> 1 after 10 */

	/*
	 * At 20 a is reported changed (it stopped and restarted between two
	 * scans) but the pair is still in state 1: nothing is recorded and
	 * the sojourn keeps running from 10.
	 */
	scan(model, 20, only_a);
	model_exe_changed(model, a, 20);
	ck_assert_int_eq(a->change_timestamp, 20);
	ck_assert_int_eq(m->state, MARKOV_A);
	ck_assert_int_eq(m->change_timestamp, 10);
	ck_assert_double_eq_tol(m->weight[1][1], 0, TOL);
	ck_assert_double_eq_tol(weight_sum(m), 2, TOL);

	/* A direct call with no change does nothing either. */
	markov_state_changed(model, m, 30);
	ck_assert_int_eq(m->change_timestamp, 10);
	ck_assert_double_eq_tol(weight_sum(m), 2, TOL);

	/* a stops at 40: 1 -> 0 after 30 s (from 10, not from 20). */
	scan(model, 40, none);
	model_exe_changed(model, a, 40);
	ck_assert_double_eq_tol(m->weight[1][1], 1, TOL);
	ck_assert_double_eq_tol(m->weight[1][0], 1, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[1], 30, TOL);
	ck_assert_uint_eq(criticals, 0);
}
END_TEST

START_TEST(test_markov_new_backdates)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", TRUE, 10);
	Exe *b;
	Markov *m;

	/* a started at 10. */
	model->last_running_timestamp = 10;
	model_add_exe(model, a, 10, TRUE);

	/*
	 * b starts at 30 and is admitted then. The pair was in state 1 (only
	 * a) from 10 to 30, so the chain starts there and records 1 -> 3
	 * with a sojourn of 20.
	 */
	model->last_running_timestamp = 30;
	a->running_timestamp = 30;
	b = exe_new("/usr/bin/b", TRUE, 30);
	model_add_exe(model, b, 30, TRUE);
	m = chain_of(a, b);
	ck_assert_int_eq(m->state, MARKOV_BOTH);
	ck_assert_int_eq(m->change_timestamp, 30);
	ck_assert_double_eq_tol(m->weight[1][1], 1, TOL);
	ck_assert_double_eq_tol(m->weight[1][3], 1, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[1], 20, TOL);
	ck_assert_double_eq_tol(weight_sum(m), 2, TOL);
}
END_TEST

START_TEST(test_markov_new_later_is_a)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", TRUE, 20);
	Markov *m;

	/*
	 * b started at 20, a stopped at 50 (0.6.4 read a's time for both and
	 * so never saw this). Now (60) only b runs; the pair was in 3 from
	 * 20 to 50: records 3 -> 2 with a sojourn of 30, entered at 50.
	 */
	model->last_running_timestamp = 60;
	b->running_timestamp = 60;
	a->change_timestamp = 50;
	m = markov_new(model, a, b, 60, TRUE);
	ck_assert_uint_eq(model->n_chains, 1);
	ck_assert_ptr_eq(g_ptr_array_index(a->chains, 0), m);
	ck_assert_ptr_eq(g_ptr_array_index(b->chains, 0), m);
	ck_assert_int_eq(m->state, MARKOV_B);
	ck_assert_int_eq(m->change_timestamp, 50);
	ck_assert_double_eq_tol(m->weight[3][3], 1, TOL);
	ck_assert_double_eq_tol(m->weight[3][2], 1, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[3], 30, TOL);
	ck_assert_double_eq_tol(weight_sum(m), 2, TOL);

	markov_free(model, m);
	ck_assert_uint_eq(model->n_chains, 0);
	ck_assert_uint_eq(a->chains->len, 0);
	ck_assert_uint_eq(b->chains->len, 0);
	exe_free(a);
	exe_free(b);
}
END_TEST

START_TEST(test_markov_new_no_history)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", TRUE, 30);
	Exe *b = exe_new("/usr/bin/b", TRUE, 30);
	Exe *c = exe_new("/usr/bin/c", FALSE, 0);
	Markov *m;

	model->last_running_timestamp = 30;

	/* Equal change times: current state, entered then, nothing recorded. */
	m = markov_new(model, a, b, 40, TRUE);
	ck_assert_int_eq(m->state, MARKOV_BOTH);
	ck_assert_int_eq(m->change_timestamp, 30);
	ck_assert_double_eq_tol(weight_sum(m), 0, TOL);

	/* One time unknown: the known one. */
	m = markov_new(model, a, c, 40, TRUE);
	ck_assert_int_eq(m->state, MARKOV_A);
	ck_assert_int_eq(m->change_timestamp, 30);
	ck_assert_double_eq_tol(weight_sum(m), 0, TOL);

	/* Without initialize (loading): current state at now. */
	m = markov_new(model, c, a, 40, FALSE);
	ck_assert_int_eq(m->state, MARKOV_B);
	ck_assert_int_eq(m->change_timestamp, 40);
	ck_assert_double_eq_tol(weight_sum(m), 0, TOL);
	ck_assert_uint_eq(model->n_chains, 3);

	/* A chain of an exe with itself is a programming error. */
	catch_criticals();
	ck_assert_ptr_null(markov_new(model, a, a, 40, TRUE));
	ck_assert_uint_eq(criticals, 1);
	ck_assert_uint_eq(model->n_chains, 3);

	/* The model frees the chains with the exes. */
	model_add_exe(model, a, 40, FALSE);
	model_add_exe(model, b, 40, FALSE);
	model_add_exe(model, c, 40, FALSE);
}
END_TEST

START_TEST(test_markov_current_state)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Markov *m;

	model_add_exe(model, a, 0, FALSE);
	model_add_exe(model, b, 0, FALSE);
	m = markov_new(model, a, b, 0, FALSE);
	model->last_running_timestamp = 5;
	ck_assert_int_eq(markov_current_state(model, m), MARKOV_NEITHER);
	a->running_timestamp = 5;
	ck_assert_int_eq(markov_current_state(model, m), MARKOV_A);
	b->running_timestamp = 5;
	ck_assert_int_eq(markov_current_state(model, m), MARKOV_BOTH);
	a->running_timestamp = 4;
	ck_assert_int_eq(markov_current_state(model, m), MARKOV_B);
}
END_TEST

/* ---- correlation ---- */

static Markov *
correlation_chain(Model *model, gint64 t, double A, double B, double X)
{
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Markov *m;

	model_add_exe(model, a, 0, FALSE);
	model_add_exe(model, b, 0, FALSE);
	m = markov_new(model, a, b, 0, FALSE);
	model->time = t;
	a->time = A;
	b->time = B;
	m->time = X;
	return m;
}

START_TEST(test_correlation_value)
{
	g_autoptr(Model) model = model_new();
	Markov *m = correlation_chain(model, 100, 40, 50, 30);

	/*
	 * (100*30 - 40*50) / sqrt(40*50*60*50) = 1000 / sqrt(6e6) = 1/sqrt(6)
	 */
	ck_assert_double_eq_tol(markov_correlation(model, m), 1 / sqrt(6.0), 1e-12);

	/* Never together: (0 - 2000) / sqrt(6e6) = -sqrt(2/3). */
	m->time = 0;
	ck_assert_double_eq_tol(markov_correlation(model, m), -sqrt(2.0 / 3.0), 1e-12);

	/* Exactly together: A = B = X = 50, t = 100: (5000-2500)/2500 = 1. */
	m->a->time = 50;
	m->time = 50;
	ck_assert_double_eq_tol(markov_correlation(model, m), 1.0, 1e-12);
	/* Exactly apart: X = 0: -2500 / 2500 = -1. */
	m->time = 0;
	ck_assert_double_eq_tol(markov_correlation(model, m), -1.0, 1e-12);
}
END_TEST

START_TEST(test_correlation_edges)
{
	g_autoptr(Model) model = model_new();
	Markov *m = correlation_chain(model, 100, 40, 50, 30);

	m->a->time = 0;       /* a never ran */
	ck_assert_double_eq(markov_correlation(model, m), 0);
	m->a->time = 100;     /* a ran the whole time */
	ck_assert_double_eq(markov_correlation(model, m), 0);
	m->a->time = 150;     /* more than the model time (inconsistent) */
	ck_assert_double_eq(markov_correlation(model, m), 0);
	m->a->time = 40;
	m->b->time = 100;
	ck_assert_double_eq(markov_correlation(model, m), 0);
	m->b->time = -5;
	ck_assert_double_eq(markov_correlation(model, m), 0);
	m->b->time = 50;
	model->time = 0;
	ck_assert_double_eq(markov_correlation(model, m), 0);
	model->time = -100;
	ck_assert_double_eq(markov_correlation(model, m), 0);
}
END_TEST

START_TEST(test_correlation_clamped)
{
	g_autoptr(Model) model = model_new();
	/* X > min(A, B) is impossible: (5000-2000)/sqrt(6e6) = 1.22 -> 1. */
	Markov *m = correlation_chain(model, 100, 40, 50, 50);

	ck_assert_double_eq(markov_correlation(model, m), 1.0);
	/* A negative joint time: (-1000-2000)/sqrt(6e6) = -1.22 -> -1. */
	m->time = -10;
	ck_assert_double_eq(markov_correlation(model, m), -1.0);
}
END_TEST

/* ---- accounting ---- */

START_TEST(test_account)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *c = exe_new("/usr/bin/c", FALSE, 0);
	Exe *ab[] = { a, b, NULL };
	Exe *bc[] = { b, c, NULL };

	model_add_exe(model, a, 0, TRUE);
	model_add_exe(model, b, 0, TRUE);
	model_add_exe(model, c, 0, TRUE);

	/* a and b run over (0, 20]: each +20, chain ab +20 (once, not twice). */
	scan(model, 20, ab);
	model_account(model, 20);
	ck_assert_int_eq(model->last_accounting_timestamp, 20);
	ck_assert_double_eq_tol(a->time, 20, TOL);
	ck_assert_double_eq_tol(b->time, 20, TOL);
	ck_assert_double_eq_tol(c->time, 0, TOL);
	ck_assert_int_eq(a->update_time, 20);
	ck_assert_int_eq(c->update_time, -1);
	ck_assert_double_eq_tol(chain_of(a, b)->time, 20, TOL);
	ck_assert_double_eq_tol(chain_of(a, c)->time, 0, TOL);
	ck_assert_double_eq_tol(chain_of(b, c)->time, 0, TOL);

	/* No time passed: nothing. */
	model_account(model, 20);
	ck_assert_double_eq_tol(a->time, 20, TOL);
	ck_assert_double_eq_tol(chain_of(a, b)->time, 20, TOL);

	/* A clock that went back only moves the mark. */
	model_account(model, 15);
	ck_assert_int_eq(model->last_accounting_timestamp, 15);
	ck_assert_double_eq_tol(a->time, 20, TOL);

	/* b and c run over (15, 25]: b 30, c 10, bc 10, ab stays 20. */
	scan(model, 25, bc);
	model_account(model, 25);
	ck_assert_double_eq_tol(a->time, 20, TOL);
	ck_assert_double_eq_tol(b->time, 30, TOL);
	ck_assert_double_eq_tol(c->time, 10, TOL);
	ck_assert_int_eq(a->update_time, 20);
	ck_assert_int_eq(c->update_time, 25);
	ck_assert_double_eq_tol(chain_of(a, b)->time, 20, TOL);
	ck_assert_double_eq_tol(chain_of(b, c)->time, 10, TOL);
	ck_assert_double_eq_tol(chain_of(a, c)->time, 0, TOL);
}
END_TEST

static Suite *
model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *tc;

	tc = tcase_create("maps");
	tcase_add_test(tc, test_map_identity);
	tcase_add_test(tc, test_map_refcounts);
	suite_add_tcase(s, tc);

	tc = tcase_create("exes");
	tcase_add_test(tc, test_exe_new);
	tcase_add_test(tc, test_model_add_lookup);
	tcase_add_test(tc, test_model_remove_exe);
	tcase_add_test(tc, test_bad_exes_expire);
	suite_add_tcase(s, tc);

	tc = tcase_create("chains");
	tcase_add_test(tc, test_markov_sequence);
	tcase_add_test(tc, test_markov_simultaneous);
	tcase_add_test(tc, test_markov_no_self_transition);
	tcase_add_test(tc, test_markov_new_backdates);
	tcase_add_test(tc, test_markov_new_later_is_a);
	tcase_add_test(tc, test_markov_new_no_history);
	tcase_add_test(tc, test_markov_current_state);
	suite_add_tcase(s, tc);

	tc = tcase_create("correlation");
	tcase_add_test(tc, test_correlation_value);
	tcase_add_test(tc, test_correlation_edges);
	tcase_add_test(tc, test_correlation_clamped);
	suite_add_tcase(s, tc);

	tc = tcase_create("accounting");
	tcase_add_test(tc, test_account);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	return tu_run_suite(model_suite());
}
