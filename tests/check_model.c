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

/* The maps of one file share one copy of its path, which outlives any one of them. */
START_TEST(test_map_path_shared)
{
	Map *a = map_new("/usr/lib/libshared-test.so", 0, 4096, 0);
	Map *b = map_new_same_file(a, 4096, 4096, 7);
	Map *c;
	g_autoptr(Map) copy = map_new("/usr/lib/libshared-test.so", 8192, 4096, 0);

	ck_assert_ptr_eq(a->path, b->path);
	ck_assert_uint_eq(b->offset, 4096);
	ck_assert_uint_eq(b->length, 4096);
	ck_assert_int_eq(b->update_time, 7);
	ck_assert_int_eq(b->learn.checked, -1);
	ck_assert_int_eq(b->refcount, 0);
	/* map_new() copies: equal text, its own storage. */
	ck_assert_ptr_ne(a->path, copy->path);
	ck_assert_str_eq(a->path, copy->path);
	map_free(a);
	ck_assert_str_eq(b->path, "/usr/lib/libshared-test.so");
	/* Shared from a map that shares. */
	c = map_new_same_file(b, 0, 8192, 0);
	ck_assert_ptr_eq(c->path, b->path);
	map_free(b);
	ck_assert_str_eq(c->path, "/usr/lib/libshared-test.so");
	ck_assert(!map_equal(c, copy));
	map_free(c);
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

/*
 * The use and chain arrays grow by an eighth, at least 4, keep the uses
 * in order when one goes, and model_compact() cuts both to their length.
 */
START_TEST(test_exe_arrays_compact)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *c = exe_new("/usr/bin/c", FALSE, 0);
	Markov *ab, *ac;

	model_add_exe(model, a, 0, FALSE);
	model_add_exe(model, b, 0, FALSE);
	model_add_exe(model, c, 0, FALSE);
	ck_assert_uint_eq(a->exemaps->alloc, 0);
	ck_assert_ptr_null(a->exemaps->data);
	for (guint i = 0; i < 40; i++) {
		char path[32];

		g_snprintf(path, sizeof(path), "/usr/lib/m%u", i);
		ck_assert(exe_add_map(model, a, map_new(path, 0, 4096, 0), 1.0));
		/* 4, 8, 12, 16, 20, 24, 28, 32 (+4 each), 36 (+4 = 32/8), 40 (+4 = 36/8). */
		if (i == 4)
			ck_assert_uint_eq(a->exemaps->alloc, 8);
		if (i == 32)
			ck_assert_uint_eq(a->exemaps->alloc, 36);
	}
	ck_assert_uint_eq(a->exemaps->len, 40);
	ck_assert_uint_eq(a->exemaps->alloc, 40);
	ck_assert(exe_add_map(model, a, map_new("/usr/lib/m40", 0, 4096, 0), 1.0));
	/* 40 + 40 / 8. */
	ck_assert_uint_eq(a->exemaps->alloc, 45);
	ck_assert_uint_eq(a->size, 41 * 4096);

	/* Removing the second use keeps the others in order. */
	exe_remove_map(model, a, 1);
	ck_assert_uint_eq(a->exemaps->len, 40);
	ck_assert_str_eq(g_array_index(a->exemaps, ExeMap, 0).map->path, "/usr/lib/m0");
	ck_assert_str_eq(g_array_index(a->exemaps, ExeMap, 1).map->path, "/usr/lib/m2");
	ck_assert_str_eq(g_array_index(a->exemaps, ExeMap, 39).map->path, "/usr/lib/m40");
	ck_assert_uint_eq(a->size, 40 * 4096);
	ck_assert_uint_eq(g_hash_table_size(model->maps), 40);

	ab = markov_new(model, a, b, 0, MARKOV_START_BLANK);
	ac = markov_new(model, a, c, 0, MARKOV_START_BLANK);
	ck_assert_uint_eq(a->chains->len, 2);
	ck_assert_uint_eq(a->chains->alloc, 4);
	ck_assert_ptr_eq(g_ptr_array_index(a->chains, 0), ab);
	ck_assert_ptr_eq(g_ptr_array_index(a->chains, 1), ac);

	model_compact(model);
	ck_assert_uint_eq(a->exemaps->alloc, 40);
	ck_assert_uint_eq(a->chains->alloc, 2);
	ck_assert_uint_eq(b->chains->alloc, 1);
	ck_assert_uint_eq(b->exemaps->alloc, 0);
	ck_assert_ptr_null(b->exemaps->data);
	ck_assert_str_eq(g_array_index(a->exemaps, ExeMap, 39).map->path, "/usr/lib/m40");

	/* The last chain moves into the place of a removed one. */
	markov_free(model, ab);
	ck_assert_uint_eq(a->chains->len, 1);
	ck_assert_ptr_eq(g_ptr_array_index(a->chains, 0), ac);
	ck_assert_uint_eq(b->chains->len, 0);
	/* Growing again after a compaction. */
	ab = markov_new(model, b, a, 0, MARKOV_START_BLANK);
	ck_assert_uint_eq(a->chains->len, 2);
	ck_assert_uint_eq(a->chains->alloc, 2);
	ck_assert_ptr_eq(g_ptr_array_index(a->chains, 1), ab);
	ck_assert_uint_eq(b->chains->alloc, 1);
}
END_TEST

/*
 * An exe's successors are a plain array: it grows by at least 4, is cut
 * to its length by model_compact(), keeps its order when aging forgets
 * one, and takes the last into the place of a removed exe's entry.
 */
START_TEST(test_exe_succ_array)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *c = exe_new("/usr/bin/c", FALSE, 0);
	Exe *d = exe_new("/usr/bin/d", FALSE, 0);

	model_add_exe(model, a, 0, FALSE);
	model_add_exe(model, b, 0, FALSE);
	model_add_exe(model, c, 0, FALSE);
	model_add_exe(model, d, 0, FALSE);
	model_set_params(model, &(ModelParams){ .halflife = 100 });
	model->aged_time = 0;
	ck_assert_uint_eq(a->succ->alloc, 0);
	ck_assert_ptr_null(a->succ->data);
	exe_append_succ(a, &(ExeSucc){ b, 0.08f, 2 });
	exe_append_succ(a, &(ExeSucc){ c, 2, 3 });
	exe_append_succ(a, &(ExeSucc){ d, 3, 4 });
	a->succ_total = 10;
	ck_assert_uint_eq(a->succ->len, 3);
	ck_assert_uint_eq(a->succ->alloc, 4);
	model_compact(model);
	ck_assert_uint_eq(a->succ->alloc, 3);
	ck_assert_uint_eq(b->succ->alloc, 0);
	ck_assert_ptr_null(b->succ->data);

	/* One half-life: b's 0.08 becomes 0.04, under MODEL_FADED_WEIGHT. */
	model_age(model, 100);
	ck_assert_uint_eq(a->succ->len, 2);
	ck_assert_ptr_eq(g_array_index(a->succ, ExeSucc, 0).next, c);
	ck_assert_float_eq(g_array_index(a->succ, ExeSucc, 0).count, 1);
	ck_assert_float_eq(g_array_index(a->succ, ExeSucc, 0).chances, 1.5f);
	ck_assert_ptr_eq(g_array_index(a->succ, ExeSucc, 1).next, d);
	ck_assert_float_eq(g_array_index(a->succ, ExeSucc, 1).count, 1.5f);
	ck_assert_double_eq(a->succ_total, 5);

	/* c goes: b, appended last, takes its place; c's count leaves the total. */
	exe_append_succ(a, &(ExeSucc){ b, 1, 1 });
	ck_assert_uint_eq(a->succ->alloc, 3);
	model_remove_exe(model, c);
	ck_assert_uint_eq(a->succ->len, 2);
	ck_assert_ptr_eq(g_array_index(a->succ, ExeSucc, 0).next, b);
	ck_assert_ptr_eq(g_array_index(a->succ, ExeSucc, 1).next, d);
	ck_assert_double_eq(a->succ_total, 4);
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
	m = markov_new(model, a, b, 60, MARKOV_START_OBSERVED);
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
	m = markov_new(model, a, b, 40, MARKOV_START_OBSERVED);
	ck_assert_int_eq(m->state, MARKOV_BOTH);
	ck_assert_int_eq(m->change_timestamp, 30);
	ck_assert_double_eq_tol(weight_sum(m), 0, TOL);

	/* One time unknown: the known one. */
	m = markov_new(model, a, c, 40, MARKOV_START_OBSERVED);
	ck_assert_int_eq(m->state, MARKOV_A);
	ck_assert_int_eq(m->change_timestamp, 30);
	ck_assert_double_eq_tol(weight_sum(m), 0, TOL);

	/* Without initialize (loading): current state at now. */
	m = markov_new(model, c, b, 40, MARKOV_START_BLANK);
	ck_assert_int_eq(m->state, MARKOV_B);
	ck_assert_int_eq(m->change_timestamp, 40);
	ck_assert_double_eq_tol(weight_sum(m), 0, TOL);
	ck_assert_uint_eq(model->n_chains, 3);

	/*
	 * A chain of an exe with itself, or a second chain of a pair (in
	 * either order), is a programming error.
	 */
	catch_criticals();
	ck_assert_ptr_null(markov_new(model, a, a, 40, MARKOV_START_OBSERVED));
	ck_assert_ptr_null(markov_new(model, c, a, 40, MARKOV_START_OBSERVED));
	ck_assert_uint_eq(criticals, 2);
	ck_assert_uint_eq(model->n_chains, 3);
	ck_assert_uint_eq(a->chains->len, 2);
	ck_assert_ptr_eq(model_lookup_chain(model, c, a), model_lookup_chain(model, a, c));

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
	m = markov_new(model, a, b, 0, MARKOV_START_BLANK);
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
	m = markov_new(model, a, b, 0, MARKOV_START_BLANK);
	/* The correlation's t is the accounted (aged) time, not the clock. */
	model->total_time = (double)t;
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
	model->total_time = 0;
	ck_assert_double_eq(markov_correlation(model, m), 0);
	model->total_time = -100;
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

/* ---- sparse chains ---- */

/* A new exe admitted running at now, with the given params, linked. */
static Exe *
admit(Model *model, const char *path, gint64 now)
{
	Exe *exe = exe_new(path, TRUE, now);

	model_add_exe(model, exe, now, FALSE);
	model_link_exe(model, exe, now);
	return exe;
}

static void
set_params(Model *model, gint64 halflife, gint64 follow, gboolean skip_constant)
{
	ModelParams params = { .halflife = halflife, .follow = follow, .skip_constant = skip_constant };

	model_set_params(model, &params);
}

START_TEST(test_chain_lookup)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *c = exe_new("/usr/bin/c", FALSE, 0);
	Markov *ab, *bc;

	model_add_exe(model, a, 0, FALSE);
	model_add_exe(model, b, 0, FALSE);
	model_add_exe(model, c, 0, FALSE);
	ab = markov_new(model, a, b, 0, MARKOV_START_BLANK);
	bc = markov_new(model, c, b, 0, MARKOV_START_BLANK);
	ck_assert_ptr_eq(model_lookup_chain(model, a, b), ab);
	ck_assert_ptr_eq(model_lookup_chain(model, b, a), ab);
	ck_assert_ptr_eq(model_lookup_chain(model, b, c), bc);
	ck_assert_ptr_null(model_lookup_chain(model, a, c));
	ck_assert_uint_eq(model->n_chains, 2);

	markov_free(model, ab);
	ck_assert_ptr_null(model_lookup_chain(model, a, b));
	ck_assert_uint_eq(model->n_chains, 1);
	ck_assert_uint_eq(model->n_chains, 1);

	/* Removing c frees bc and takes it out of the index. */
	model_remove_exe(model, c);
	ck_assert_uint_eq(model->n_chains, 0);
	ck_assert_uint_eq(b->chains->len, 0);
}
END_TEST

/*
 * The chains live in blocks of MODEL_CHAIN_BLOCK: 24 exes make 276
 * pairs, a full block and 20 in the next. The walk gives each chain
 * once, in the order made; a freed slot is skipped and is the first a
 * new chain takes (the last freed first), zeroed.
 */
START_TEST(test_chain_blocks)
{
	g_autoptr(Model) model = model_new();
	Exe *exes[24];
	Markov *made[276], *m, *again;
	guint n = 0, seen = 0;

	for (guint i = 0; i < G_N_ELEMENTS(exes); i++) {
		g_autofree char *path = g_strdup_printf("/usr/bin/e%02u", i);

		exes[i] = exe_new(path, FALSE, 0);
		model_add_exe(model, exes[i], 0, FALSE);
	}
	for (guint i = 0; i < G_N_ELEMENTS(exes); i++)
		for (guint j = i + 1; j < G_N_ELEMENTS(exes); j++)
			made[n++] = markov_new(model, exes[i], exes[j], 0, MARKOV_START_BLANK);
	ck_assert_uint_eq(n, 276);
	ck_assert_uint_eq(model->n_chains, 276);
	ck_assert_uint_eq(model->n_chain_blocks, 2);
	ck_assert_uint_eq(model->chain_slots, 276);
	/* Slot 256 opens the second block. */
	ck_assert_ptr_eq(made[255], &model->chain_blocks[0][255]);
	ck_assert_ptr_eq(made[256], &model->chain_blocks[1][0]);
	for (guint pos = 0; (m = model_next_chain(model, &pos));)
		ck_assert_ptr_eq(m, made[seen++]);
	ck_assert_uint_eq(seen, 276);

	/* made[3] is (e00, e04); made[270] is (e20, e21): e00 to e19 pair with 270 later ones. */
	ck_assert_ptr_eq(model_lookup_chain(model, exes[4], exes[0]), made[3]);
	ck_assert_ptr_eq(model_lookup_chain(model, exes[21], exes[20]), made[270]);
	markov_free(model, made[3]);
	markov_free(model, made[270]);
	ck_assert_ptr_null(model_lookup_chain(model, exes[0], exes[4]));
	ck_assert_ptr_null(model_lookup_chain(model, exes[20], exes[21]));
	ck_assert_uint_eq(exes[0]->chains->len, 22);
	seen = 0;
	for (guint pos = 0; (m = model_next_chain(model, &pos));) {
		ck_assert_ptr_ne(m, made[3]);
		ck_assert_ptr_ne(m, made[270]);
		seen++;
	}
	ck_assert_uint_eq(seen, 274);

	/* The last freed slot first, zeroed; no new slot is used. */
	made[270]->weight[0][1] = 5;
	again = markov_new(model, exes[4], exes[0], 0, MARKOV_START_BLANK);
	ck_assert_ptr_eq(again, made[270]);
	ck_assert_ptr_eq(again->a, exes[4]);
	ck_assert_ptr_eq(again->b, exes[0]);
	ck_assert_float_eq(again->weight[0][1], 0);
	ck_assert_ptr_eq(model_lookup_chain(model, exes[0], exes[4]), again);
	ck_assert_ptr_eq(markov_new(model, exes[20], exes[21], 0, MARKOV_START_BLANK), made[3]);
	ck_assert_uint_eq(model->chain_slots, 276);
	ck_assert_uint_eq(model->n_chains, 276);

	/* Freeing the chain just walked to is safe: every other one goes. */
	seen = 0;
	for (guint pos = 0; (m = model_next_chain(model, &pos));)
		if (seen++ % 2 == 0)
			markov_free(model, m);
	ck_assert_uint_eq(seen, 276);
	ck_assert_uint_eq(model->n_chains, 138);
	seen = 0;
	for (guint pos = 0; model_next_chain(model, &pos);)
		seen++;
	ck_assert_uint_eq(seen, 138);

	/* Removing an exe frees its chains from the blocks too. */
	model_remove_exe(model, exes[0]);
	seen = 0;
	for (guint pos = 0; (m = model_next_chain(model, &pos));) {
		ck_assert_ptr_ne(m->a, exes[0]);
		ck_assert_ptr_ne(m->b, exes[0]);
		seen++;
	}
	ck_assert_uint_eq(seen, model->n_chains);
}
END_TEST

START_TEST(test_link_together)
{
	g_autoptr(Model) model = model_new();
	Exe *a, *b, *c, *d;
	Exe *r_a[] = { NULL, NULL }, *r_ab[] = { NULL, NULL, NULL };
	Markov *m;

	set_params(model, 0, 0, TRUE);

	/* 10: a runs alone: nothing to link. */
	scan(model, 10, r_a);
	a = admit(model, "/usr/bin/a", 10);
	ck_assert_uint_eq(model->n_chains, 0);

	/*
	 * 30: b is admitted while a runs. The pair was in "a only" since a
	 * started at 10: the chain records 1 -> 3 after 20 s.
	 */
	r_ab[0] = a;
	scan(model, 30, r_ab);
	b = admit(model, "/usr/bin/b", 30);
	m = model_lookup_chain(model, a, b);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_eq(m->a, a);
	ck_assert_int_eq(m->state, MARKOV_BOTH);
	ck_assert_int_eq(m->change_timestamp, 30);
	ck_assert_double_eq_tol(m->weight[1][1], 1, TOL);
	ck_assert_double_eq_tol(m->weight[1][3], 1, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[1], 20, TOL);
	ck_assert_double_eq_tol(weight_sum(m), 2, TOL);

	/*
	 * 50: c and d are admitted together while a and b run. Each gets a
	 * chain with a (1 -> 3 after 40 s) and with b (1 -> 3 after 20 s);
	 * c and d appeared at the same instant with no history, so they
	 * would record nothing: no chain for them yet.
	 */
	{
		Exe *r[5] = { a, b, NULL, NULL, NULL };

		scan(model, 50, r);
		c = exe_new("/usr/bin/c", TRUE, 50);
		d = exe_new("/usr/bin/d", TRUE, 50);
		model_add_exe(model, c, 50, FALSE);
		model_add_exe(model, d, 50, FALSE);
		model_link_exe(model, c, 50);
		model_link_exe(model, d, 50);
	}
	ck_assert_uint_eq(model->n_chains, 5);
	ck_assert_ptr_null(model_lookup_chain(model, c, d));
	ck_assert_double_eq_tol(model_lookup_chain(model, a, c)->time_to_leave[1], 40, TOL);
	ck_assert_double_eq_tol(model_lookup_chain(model, b, d)->time_to_leave[1], 20, TOL);

	/*
	 * c stops at 70 and starts again at 90 while d runs: now c's change
	 * before 90 is known. The pair (d, c) was in "d only" from 70 to 90:
	 * 1 -> 3 after 20 s (d is the chain's a: it was there first).
	 */
	{
		Exe *r[4] = { a, b, d, NULL };
		Exe *r2[5] = { a, b, d, c, NULL };

		scan(model, 70, r);
		model_exe_changed(model, c, 70);
		ck_assert_ptr_null(model_lookup_chain(model, c, d));
		scan(model, 90, r2);
		model_exe_changed(model, c, 90);
	}
	m = model_lookup_chain(model, c, d);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_eq(m->a, d);
	ck_assert_int_eq(m->state, MARKOV_BOTH);
	ck_assert_double_eq_tol(m->weight[1][1], 1, TOL);
	ck_assert_double_eq_tol(m->weight[1][3], 1, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[1], 20, TOL);
	ck_assert_uint_eq(model->n_chains, 6);

	/* A stopped exe is never linked, whatever runs. */
	{
		g_autoptr(Exe) x = exe_new("/usr/bin/x", FALSE, 0);

		model_link_exe(model, x, 90);
		ck_assert_uint_eq(model->n_chains, 6);
	}
}
END_TEST

/*
 * Two exes with a known past start at the same scan: the pair was in
 * "neither" since the later of their previous changes.
 */
START_TEST(test_link_together_known)
{
	g_autoptr(Model) model = model_new();
	Exe *x = exe_new("/usr/bin/x", FALSE, 0);
	Exe *y = exe_new("/usr/bin/y", FALSE, 0);
	Exe *both[] = { x, y, NULL };
	Markov *m;

	set_params(model, 0, 0, TRUE);
	model_add_exe(model, x, 0, FALSE);
	model_add_exe(model, y, 0, FALSE);
	/* x ran 10..20, y ran 25..30. */
	x->prev_change_timestamp = 10;
	x->change_timestamp = 20;
	y->prev_change_timestamp = 25;
	y->change_timestamp = 30;

	scan(model, 50, both);
	{
		Exe *batch[] = { x, y };

		model_exes_changed(model, batch, 2, 50);
	}
	ck_assert_int_eq(x->prev_change_timestamp, 20);
	ck_assert_int_eq(y->prev_change_timestamp, 30);
	ck_assert_uint_eq(model->n_chains, 1);
	m = model_lookup_chain(model, x, y);
	/* 0 -> 3 after 50 - max(20, 30) = 20 s. */
	ck_assert_int_eq(m->state, MARKOV_BOTH);
	ck_assert_int_eq(m->change_timestamp, 50);
	ck_assert_double_eq_tol(m->weight[0][0], 1, TOL);
	ck_assert_double_eq_tol(m->weight[0][3], 1, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[0], 20, TOL);
	ck_assert_double_eq_tol(weight_sum(m), 2, TOL);

	/* An exe listed twice in a batch changes once. */
	{
		Exe *none[] = { NULL };
		Exe *batch[] = { x, x };

		scan(model, 60, none);
		model_exes_changed(model, batch, 2, 60);
		ck_assert_int_eq(x->prev_change_timestamp, 50);
		ck_assert_int_eq(x->change_timestamp, 60);
	}
}
END_TEST

START_TEST(test_link_follow)
{
	g_autoptr(Model) model = model_new();
	Exe *x, *y, *z, *w, *v;
	Exe *none[] = { NULL };
	Markov *m;

	set_params(model, 0, 60, TRUE);

	/* x runs from 10 to 30. */
	{
		Exe *r[] = { NULL, NULL };

		scan(model, 10, r);
		x = admit(model, "/usr/bin/x", 10);
	}
	scan(model, 30, none);
	model_exe_changed(model, x, 30);

	/*
	 * 50: y starts 20 s after x stopped, within the window of 60: the
	 * pair was in "neither" since 30 and goes to "y only": 0 -> 2.
	 */
	{
		Exe *r[] = { NULL, NULL };

		scan(model, 50, r);
		y = admit(model, "/usr/bin/y", 50);
	}
	m = model_lookup_chain(model, x, y);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_eq(m->a, x);
	ck_assert_int_eq(m->state, MARKOV_B);
	ck_assert_double_eq_tol(m->weight[0][0], 1, TOL);
	ck_assert_double_eq_tol(m->weight[0][2], 1, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[0], 20, TOL);

	/* 100: z starts 70 s after x stopped: too late for x; y runs. */
	{
		Exe *r[] = { y, NULL, NULL };

		scan(model, 100, r);
		z = admit(model, "/usr/bin/z", 100);
	}
	ck_assert_ptr_null(model_lookup_chain(model, x, z));
	ck_assert_ptr_nonnull(model_lookup_chain(model, y, z));
	ck_assert_uint_eq(model->n_chains, 2);

	/*
	 * 120: y and z stop, and v appears in the same scan. v is new, so no
	 * transition can be recorded, but following is reason enough: chains
	 * with y and z, empty, in "v only".
	 */
	scan(model, 120, none);
	{
		Exe *batch[] = { y, z };

		model_exes_changed(model, batch, 2, 120);
	}
	{
		Exe *r[] = { NULL, NULL };

		scan(model, 120, r);
		v = admit(model, "/usr/bin/v", 120);
	}
	m = model_lookup_chain(model, z, v);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->state, MARKOV_B);
	ck_assert_int_eq(m->change_timestamp, 120);
	ck_assert_double_eq_tol(weight_sum(m), 0, TOL);
	ck_assert_ptr_nonnull(model_lookup_chain(model, y, v));
	ck_assert_uint_eq(model->n_chains, 4);

	/*
	 * Six exes run from 130; t0..t2 stop at 140, t3 at 150, t4 and t5 at
	 * 160 (and v with them). w starts at 170 and follows the last
	 * MODEL_FOLLOW_STOPS = 2 stops: t3 and t4, t5, v; not t0..t2, though
	 * they are within the window too. (y and z, stopped at 120, are not.)
	 */
	{
		Exe *t[6];
		Exe *r[8] = { NULL };
		Exe *r2[] = { NULL, NULL };

		for (int i = 0; i < 6; i++) {
			g_autofree char *path = g_strdup_printf("/usr/bin/t%d", i);

			r[i] = t[i] = exe_new(path, TRUE, 130);
			model_add_exe(model, t[i], 130, FALSE);
		}
		r[6] = v;
		scan(model, 130, r);
		r[0] = t[3];
		r[1] = t[4];
		r[2] = t[5];
		r[3] = v;
		r[4] = NULL;
		scan(model, 140, r);
		model_exes_changed(model, t, 3, 140);
		r[0] = t[4];
		r[1] = t[5];
		r[2] = v;
		r[3] = NULL;
		scan(model, 150, r);
		model_exe_changed(model, t[3], 150);
		scan(model, 160, none);
		{
			Exe *batch[] = { t[4], t[5], v };

			model_exes_changed(model, batch, 3, 160);
		}
		scan(model, 170, r2);
		w = admit(model, "/usr/bin/w", 170);
		ck_assert_uint_eq(w->chains->len, 4);
		ck_assert_ptr_nonnull(model_lookup_chain(model, t[3], w));
		ck_assert_ptr_nonnull(model_lookup_chain(model, t[4], w));
		ck_assert_ptr_nonnull(model_lookup_chain(model, t[5], w));
		ck_assert_ptr_nonnull(model_lookup_chain(model, v, w));
		for (int i = 0; i < 3; i++)
			ck_assert_ptr_null(model_lookup_chain(model, t[i], w));
		ck_assert_ptr_null(model_lookup_chain(model, y, w));
	}
}
END_TEST

/*
 * Exe.starts counts the starts after a stop the model saw: not the
 * admission, not the first start of an exe whose past is unknown.
 */
START_TEST(test_starts_counted)
{
	g_autoptr(Model) model = model_new();
	Exe *none[] = { NULL };
	Exe *x, *y;

	set_params(model, 0, 60, TRUE);
	{
		Exe *r[] = { NULL, NULL };

		scan(model, 10, r);
		x = admit(model, "/usr/bin/x", 10);
	}
	ck_assert_double_eq(x->starts, 0);
	/* Stops at 30 (not a start), starts at 50 after a stop it saw. */
	scan(model, 30, none);
	model_exe_changed(model, x, 30);
	ck_assert_double_eq(x->starts, 0);
	{
		Exe *r[] = { x, NULL };

		scan(model, 50, r);
		model_exe_changed(model, x, 50);
	}
	ck_assert_double_eq(x->starts, 1);

	/*
	 * y is known (loaded) but its past is not: its first start, at 70,
	 * does not count; after the stop at 90, the start at 110 does.
	 */
	y = exe_new("/usr/bin/y", FALSE, 0);
	model_add_exe(model, y, 0, FALSE);
	{
		Exe *r[] = { x, y, NULL };
		Exe *rx[] = { x, NULL };

		scan(model, 70, r);
		model_exe_changed(model, y, 70);
		ck_assert_double_eq(y->starts, 0);
		scan(model, 90, rx);
		model_exe_changed(model, y, 90);
		scan(model, 110, r);
		model_exe_changed(model, y, 110);
	}
	ck_assert_double_eq(y->starts, 1);
	ck_assert_double_eq(x->starts, 1);
}
END_TEST

/*
 * A chain made by following starts with the pair's "neither" row: the
 * starts of both and the time neither ran.
 */
START_TEST(test_link_backfill_follow)
{
	g_autoptr(Model) model = model_new();
	Exe *none[] = { NULL };
	Exe *x, *y, *r;
	Markov *m;

	set_params(model, 0, 60, TRUE);
	/* x runs from 10 to 30. */
	{
		Exe *run[] = { NULL, NULL };

		scan(model, 10, run);
		x = admit(model, "/usr/bin/x", 10);
	}
	scan(model, 30, none);
	model_exe_changed(model, x, 30);
	/* Its history so far: 4 starts, 300 s run of 1000. */
	x->starts = 4;
	x->time = 300;
	model->total_time = 1000;

	/*
	 * 50: y, new, follows x. The chain's time: max(0, 300 + 0 - 1000) =
	 * 0. Backfilled: W01 = x's 4 starts, W02 = y's 0 (its admission is
	 * no counted start), W00 = 4, tau0 = (1000 - 300 - 0 + 0) / 4 = 175.
	 * Then 0 -> 2 after 50 - 30 = 20 s: W00 = 5, W02 = 1,
	 * tau0 = 175 + (20 - 175) / 5 = 144.
	 */
	{
		Exe *run[] = { NULL, NULL };

		scan(model, 50, run);
		y = admit(model, "/usr/bin/y", 50);
	}
	m = model_lookup_chain(model, x, y);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_eq(m->a, x);
	ck_assert_int_eq(m->state, MARKOV_B);
	ck_assert_int_eq(m->change_timestamp, 50);
	ck_assert_double_eq_tol(m->time, 0, TOL);
	ck_assert_double_eq_tol(m->weight[0][1], 4, TOL);
	ck_assert_double_eq_tol(m->weight[0][2], 1, TOL);
	ck_assert_double_eq_tol(m->weight[0][0], 5, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[0], 144, TOL);
	/* The other rows start empty. */
	ck_assert_double_eq_tol(weight_sum(m), 10, TOL);

	/*
	 * The full pairwise model (allpairs) makes its chains as 0.6.4 did:
	 * r, admitted at 60 while y runs, records 2 -> 3 after 10 s with y
	 * and 0 -> 2 after 30 s with x, and nothing of x's 4 starts.
	 */
	r = exe_new("/usr/bin/r", TRUE, 60);
	{
		Exe *run[] = { y, r, NULL };

		scan(model, 60, run);
	}
	model_add_exe(model, r, 60, TRUE);
	m = model_lookup_chain(model, x, r);
	ck_assert_double_eq_tol(m->weight[0][0], 1, TOL);
	ck_assert_double_eq_tol(m->weight[0][2], 1, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[0], 30, TOL);
	ck_assert_double_eq_tol(weight_sum(m), 2, TOL);
	ck_assert_double_eq_tol(weight_sum(model_lookup_chain(model, y, r)), 2, TOL);
}
END_TEST

/*
 * A chain made by running together: the start that made the pair run
 * together is its first transition, not a departure from "neither".
 */
START_TEST(test_link_backfill_together)
{
	g_autoptr(Model) model = model_new();
	Exe *p = exe_new("/usr/bin/p", FALSE, 0);
	Exe *q;
	Markov *m;

	set_params(model, 0, 0, TRUE);
	/* p is known: it stopped at 20, after 3 starts. */
	model_add_exe(model, p, 0, FALSE);
	p->prev_change_timestamp = 5;
	p->change_timestamp = 20;
	p->starts = 3;
	/* q is admitted at 30 and runs alone: no chain. */
	{
		Exe *run[] = { NULL, NULL };

		scan(model, 30, run);
		q = admit(model, "/usr/bin/q", 30);
	}
	ck_assert_uint_eq(model->n_chains, 0);
	model->total_time = 1000;
	p->time = 200;
	q->time = 100;

	/*
	 * 50: p starts while q runs: p's 4th start. The chain (q, p) was in
	 * "q only" since max(30, 20) = 30 and records 1 -> 3 after 20 s;
	 * its "neither" row has p's other 3 starts and q's 0: W02 = 3,
	 * W00 = 3, tau0 = (1000 - 100 - 200 + 0) / 3.
	 */
	{
		Exe *run[] = { q, p, NULL };

		scan(model, 50, run);
		model_exe_changed(model, p, 50);
	}
	ck_assert_double_eq(p->starts, 4);
	m = model_lookup_chain(model, p, q);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_eq(m->a, q);
	ck_assert_int_eq(m->state, MARKOV_BOTH);
	ck_assert_double_eq_tol(m->weight[0][1], 0, TOL);
	ck_assert_double_eq_tol(m->weight[0][2], 3, TOL);
	ck_assert_double_eq_tol(m->weight[0][0], 3, TOL);
	ck_assert(m->time_to_leave[0] == (float)(700.0 / 3.0));
	ck_assert_double_eq_tol(m->weight[1][1], 1, TOL);
	ck_assert_double_eq_tol(m->weight[1][3], 1, TOL);
	ck_assert_double_eq_tol(m->time_to_leave[1], 20, TOL);
	ck_assert_double_eq_tol(weight_sum(m), 8, TOL);
}
END_TEST

/* After a load, an exe's starts are the most one of its chains saw. */
START_TEST(test_count_starts)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *c = exe_new("/usr/bin/c", FALSE, 0);
	Exe *d = exe_new("/usr/bin/d", FALSE, 0);
	Markov *ab, *ca;

	model_add_exe(model, a, 0, FALSE);
	model_add_exe(model, b, 0, FALSE);
	model_add_exe(model, c, 0, FALSE);
	model_add_exe(model, d, 0, FALSE);
	ab = markov_new(model, a, b, 0, MARKOV_START_BLANK);
	ca = markov_new(model, c, a, 0, MARKOV_START_BLANK);
	/*
	 * (a, b): a starts on 0 -> 1, 0 -> 3, 2 -> 1, 2 -> 3: 2 + 1 + 0.5 + 3
	 * = 6.5; b on 0 -> 2, 0 -> 3, 1 -> 2, 1 -> 3: 4 + 1 + 0 + 2 = 7.
	 * Stops (1 -> 0, 3 -> 2, ...) do not count.
	 */
	ab->weight[0][1] = 2;
	ab->weight[0][2] = 4;
	ab->weight[0][3] = 1;
	ab->weight[1][3] = 2;
	ab->weight[2][1] = 0.5;
	ab->weight[2][3] = 3;
	ab->weight[1][0] = 9;
	ab->weight[3][2] = 9;
	/* (c, a): a is its b: 0 -> 2 and 1 -> 2, 5 + 1 = 6; c: 0 -> 1, 1. */
	ca->weight[0][2] = 5;
	ca->weight[1][2] = 1;
	ca->weight[0][1] = 1;
	d->starts = 8;  /* no chain: nothing seen */
	model_count_starts(model);
	ck_assert_double_eq(a->starts, 6.5);
	ck_assert_double_eq(b->starts, 7);
	ck_assert_double_eq(c->starts, 1);
	ck_assert_double_eq(d->starts, 0);
}
END_TEST

START_TEST(test_link_constant)
{
	g_autoptr(Model) model = model_new();
	Exe *d = exe_new("/usr/bin/daemon", TRUE, 0);
	Exe *r[] = { d, NULL, NULL };
	Exe *y;

	set_params(model, 0, 0, TRUE);
	model_add_exe(model, d, 0, FALSE);

	/* Below an hour of model time nothing counts as constant. */
	model->total_time = 3000;
	d->time = 3000;
	ck_assert(!exe_is_constant(model, d));
	/* 0.99 * 7200 = 7128. */
	model->total_time = 7200;
	d->time = 7127;
	ck_assert(!exe_is_constant(model, d));
	d->time = 7128;
	ck_assert(exe_is_constant(model, d));

	/* y starts while the constant daemon runs: no chain. */
	scan(model, 7200, r);
	d->running_timestamp = 7200;
	y = admit(model, "/usr/bin/y", 7200);
	ck_assert_uint_eq(model->n_chains, 0);

	/* Without skip_constant (usecorrelation off) the pair gets one. */
	model_remove_exe(model, y);
	set_params(model, 0, 0, FALSE);
	y = admit(model, "/usr/bin/y", 7200);
	ck_assert_uint_eq(model->n_chains, 1);
	ck_assert_ptr_nonnull(model_lookup_chain(model, d, y));
}
END_TEST

START_TEST(test_markov_new_joint_floor)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *c = exe_new("/usr/bin/c", FALSE, 0);
	Markov *m;

	/*
	 * Over t = 100 s, a ran 80 and b ran 50: they ran together at least
	 * 80 + 50 - 100 = 30 s, where a new chain starts. a and c (20 s):
	 * 80 + 20 - 100 < 0, so 0.
	 */
	model->total_time = 100;
	a->time = 80;
	b->time = 50;
	c->time = 20;
	m = markov_new(model, a, b, 0, MARKOV_START_OBSERVED);
	ck_assert_double_eq_tol(m->time, 30, TOL);
	m = markov_new(model, a, c, 0, MARKOV_START_OBSERVED);
	ck_assert_double_eq_tol(m->time, 0, TOL);
	/* Loading sets the time from the file: 0 until then. */
	m = markov_new(model, b, c, 0, MARKOV_START_BLANK);
	ck_assert_double_eq_tol(m->time, 0, TOL);
	model_add_exe(model, a, 0, FALSE);
	model_add_exe(model, b, 0, FALSE);
	model_add_exe(model, c, 0, FALSE);
}
END_TEST

/*
 * Accounting visits the running exes only, and each chain whose pair both
 * run once, whichever way it is reached.
 */
START_TEST(test_account_running)
{
	g_autoptr(Model) model = model_new();
	Exe *d = exe_new("/usr/bin/d", FALSE, 0);
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *run[] = { d, a, b, NULL };
	Markov *da, *ab, *ds[5];

	model_add_exe(model, d, 0, FALSE);
	model_add_exe(model, a, 0, FALSE);
	model_add_exe(model, b, 0, FALSE);
	da = markov_new(model, d, a, 0, MARKOV_START_BLANK);
	ab = markov_new(model, a, b, 0, MARKOV_START_BLANK);
	/* d has more chains (6) than there are running exes (3). */
	for (int i = 0; i < 5; i++) {
		g_autofree char *path = g_strdup_printf("/usr/bin/s%d", i);
		Exe *s = exe_new(path, FALSE, 0);

		model_add_exe(model, s, 0, FALSE);
		ds[i] = markov_new(model, d, s, 0, MARKOV_START_BLANK);
	}

	scan(model, 20, run);
	model_account(model, 20);
	ck_assert_double_eq_tol(model->total_time, 20, TOL);
	ck_assert_double_eq_tol(d->time, 20, TOL);
	ck_assert_double_eq_tol(a->time, 20, TOL);
	ck_assert_double_eq_tol(b->time, 20, TOL);
	ck_assert_double_eq_tol(da->time, 20, TOL);
	ck_assert_double_eq_tol(ab->time, 20, TOL);
	for (int i = 0; i < 5; i++)
		ck_assert_double_eq_tol(ds[i]->time, 0, TOL);

	scan(model, 30, run);
	model_account(model, 30);
	ck_assert_double_eq_tol(model->total_time, 30, TOL);
	ck_assert_double_eq_tol(da->time, 30, TOL);
	ck_assert_double_eq_tol(ab->time, 30, TOL);
}
END_TEST

/*
 * Three running exes, each chained with the other two and with three
 * stopped ones: 5 chains each, more than the 3 running, and a lookup of
 * each other running exe would walk 5 + 5 = 10 entries, so each walks
 * its own 5. Each chain of two running exes gets the period once (it is
 * met from both sides), the others nothing.
 */
START_TEST(test_account_long_lists)
{
	g_autoptr(Model) model = model_new();
	Exe *r[3], *s[3];
	Exe *run[4] = { NULL };
	Markov *together[3], *apart[9];
	guint n = 0;

	for (guint i = 0; i < 3; i++) {
		g_autofree char *rp = g_strdup_printf("/usr/bin/r%u", i);
		g_autofree char *sp = g_strdup_printf("/usr/bin/s%u", i);

		r[i] = exe_new(rp, FALSE, 0);
		s[i] = exe_new(sp, FALSE, 0);
		model_add_exe(model, r[i], 0, FALSE);
		model_add_exe(model, s[i], 0, FALSE);
		run[i] = r[i];
	}
	together[0] = markov_new(model, r[0], r[1], 0, MARKOV_START_BLANK);
	together[1] = markov_new(model, r[0], r[2], 0, MARKOV_START_BLANK);
	together[2] = markov_new(model, r[2], r[1], 0, MARKOV_START_BLANK);
	for (guint i = 0; i < 3; i++)
		for (guint j = 0; j < 3; j++)
			apart[n++] = markov_new(model, r[i], s[j], 0, MARKOV_START_BLANK);
	for (guint i = 0; i < 3; i++)
		ck_assert_uint_eq(r[i]->chains->len, 5);

	scan(model, 20, run);
	model_account(model, 20);
	ck_assert_double_eq(model->total_time, 20);
	for (guint i = 0; i < 3; i++)
		ck_assert_double_eq(together[i]->time, 20);
	for (guint i = 0; i < 9; i++)
		ck_assert_double_eq(apart[i]->time, 0);

	scan(model, 27, run);
	model_account(model, 27);
	for (guint i = 0; i < 3; i++)
		ck_assert_double_eq(together[i]->time, 27);
}
END_TEST

/* ---- aging and expiry ---- */

START_TEST(test_age)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Markov *m;
	double rho;

	model_add_exe(model, a, 0, FALSE);
	model_add_exe(model, b, 0, FALSE);
	m = markov_new(model, a, b, 0, MARKOV_START_BLANK);
	model->total_time = 400;
	a->time = 200;
	a->starts = 6;
	b->time = 100;
	m->time = 60;
	m->weight[0][0] = 4;
	m->weight[0][1] = 2;
	m->weight[0][2] = 2;
	m->weight[1][1] = 1;
	m->weight[1][0] = 1;
	m->time_to_leave[0] = 10.0 / 3.0;
	/* (400*60 - 200*100) / sqrt(200*100*200*300) = 4000 / sqrt(1.2e9) = 0.1154700538 */
	rho = markov_correlation(model, m);
	ck_assert_double_eq_tol(rho, 4000 / sqrt(1.2e9), 1e-12);

	/* No half-life: nothing moves but the mark. */
	ck_assert_uint_eq(model_age(model, 100), 0);
	ck_assert_int_eq(model->aged_time, 100);
	ck_assert_double_eq(a->time, 200);
	ck_assert_double_eq(m->weight[0][0], 4);

	/* One half-life later everything counts half; rho does not move. */
	set_params(model, 100, 0, TRUE);
	ck_assert_uint_eq(model_age(model, 200), 0);
	ck_assert_int_eq(model->aged_time, 200);
	ck_assert_double_eq(model->total_time, 200);
	ck_assert_double_eq(a->time, 100);
	ck_assert_double_eq(a->starts, 3);
	ck_assert_double_eq(b->time, 50);
	ck_assert_double_eq(m->time, 30);
	ck_assert_double_eq(m->weight[0][0], 2);
	ck_assert_double_eq(m->weight[0][1], 1);
	ck_assert_double_eq(m->weight[0][2], 1);
	ck_assert_double_eq(m->weight[1][1], 0.5);
	ck_assert_double_eq(m->weight[1][0], 0.5);
	ck_assert_double_eq(m->weight[3][3], 0);
	/* (200*30 - 100*50) / sqrt(100*50*100*150) = 1000 / sqrt(7.5e7), the same. */
	ck_assert_double_eq_tol(markov_correlation(model, m), rho, 1e-12);
	/* Sojourns do not age, they are rounded to 7 digits: 3.333333. */
	ck_assert(m->time_to_leave[0] == (float)3.333333);

	/*
	 * A third of a half-life (H = 300, 100 s): factor 2^(-1/3) =
	 * 0.7937005259840998. W00: 2 * 0.79370052598 = 1.58740105197 ->
	 * 1.587401; a: 100 * ... = 79.370052598 -> 79.37005; W11: 0.5 * ...
	 * = 0.39685026299 -> 0.3968503.
	 */
	set_params(model, 300, 0, TRUE);
	model_age(model, 300);
	ck_assert(m->weight[0][0] == (float)1.587401);
	ck_assert_double_eq(a->time, 79.37005);
	/* 3 * 0.79370052598 = 2.38110157795 -> 2.381102. */
	ck_assert_double_eq(a->starts, 2.381102);
	ck_assert(m->weight[1][1] == (float)0.3968503);
	ck_assert_double_eq(model_age_value(3.0, 100, 300), 2.381102);
	ck_assert_double_eq(model_age_value(1.0, 300, 300), 0.5);
	/* Large values keep 7 significant digits: 123456789 * 0.5 = 61728394.5. */
	ck_assert_double_eq(model_age_value(123456789.0, 300, 300), 61728390.0);

	/* A clock that went back ages nothing; aging resumes from there. */
	model_age(model, 250);
	ck_assert(m->weight[0][0] == (float)1.587401);
	ck_assert_int_eq(model->aged_time, 250);
}
END_TEST

START_TEST(test_age_forgets)
{
	g_autoptr(Model) model = model_new();
	Exe *e[4];
	Markov *neither, *one, *both;

	for (int i = 0; i < 4; i++) {
		g_autofree char *path = g_strdup_printf("/usr/bin/e%d", i);

		e[i] = exe_new(path, FALSE, 0);
		model_add_exe(model, e[i], 0, FALSE);
	}
	neither = markov_new(model, e[0], e[1], 0, MARKOV_START_BLANK);
	one = markov_new(model, e[2], e[0], 0, MARKOV_START_BLANK);
	both = markov_new(model, e[2], e[3], 0, MARKOV_START_BLANK);
	neither->weight[0][0] = 0.06;
	neither->weight[0][1] = 0.06;
	one->weight[2][2] = 0.06;
	one->weight[2][0] = 0.06;
	both->weight[1][1] = 0.06;
	both->weight[1][3] = 0.06;
	/* e2 and e3 run; e0 and e1 do not. */
	{
		Exe *r[] = { e[2], e[3], NULL };

		scan(model, 100, r);
	}

	/*
	 * One half-life: 0.06 -> 0.03 < MODEL_FADED_WEIGHT (0.05). The
	 * chains whose pair do not both run are forgotten; (e2, e3) stays.
	 */
	set_params(model, 100, 0, TRUE);
	ck_assert_uint_eq(model_age(model, 100), 2);
	ck_assert_uint_eq(model->n_chains, 1);
	ck_assert_ptr_eq(model_lookup_chain(model, e[2], e[3]), both);
	ck_assert(both->weight[1][1] == (float)0.03);
	ck_assert_uint_eq(e[0]->chains->len, 0);
	ck_assert_uint_eq(e[2]->chains->len, 1);
}
END_TEST

START_TEST(test_forget_exes)
{
	g_autoptr(Model) model = model_new();
	static const gint64 seen[] = { 0, 50, 60, 100 };
	Exe *e[4], *runner;
	Map *shared = map_new("/usr/lib/libshared.so", 0, 4096, 0);
	Exe *r[2] = { NULL, NULL };

	for (int i = 0; i < 4; i++) {
		g_autofree char *path = g_strdup_printf("/usr/bin/e%d", i);

		e[i] = exe_new(path, FALSE, 0);
		e[i]->update_time = seen[i];
		model_add_exe(model, e[i], 0, FALSE);
		exe_add_map(model, e[i], i == 0 ? shared : model_lookup_map(model,
			    "/usr/lib/libshared.so", 0, 4096), 1.0);
	}
	markov_new(model, e[0], e[3], 0, MARKOV_START_BLANK);
	/* A running exe is kept however old its update time. */
	runner = exe_new("/usr/bin/runner", TRUE, 0);
	runner->update_time = -1;
	r[0] = runner;
	scan(model, 160, r);
	model_add_exe(model, runner, 160, FALSE);

	/* now 160, max age 100: forget those last seen before 60. */
	ck_assert_uint_eq(model_forget_exes(model, 160, 100), 2);
	ck_assert_ptr_null(model_lookup_exe(model, "/usr/bin/e0"));
	ck_assert_ptr_null(model_lookup_exe(model, "/usr/bin/e1"));
	ck_assert_ptr_nonnull(model_lookup_exe(model, "/usr/bin/e2"));
	ck_assert_ptr_nonnull(model_lookup_exe(model, "/usr/bin/runner"));
	ck_assert_uint_eq(model->n_chains, 0);
	ck_assert_int_eq(shared->refcount, 2);
	ck_assert_uint_eq(model->map_list->len, 1);
}
END_TEST

/*
 * Ranks are merged: maps registered since the last ranking are sorted and
 * merged into its order, dropped ones left out, every rank renumbered.
 */
START_TEST(test_rank_merge)
{
	g_autoptr(Model) model = model_new();
	Exe *x = exe_new("/usr/bin/x", FALSE, 0);
	Exe *y = exe_new("/usr/bin/y", FALSE, 0);
	Map *c = map_new("/usr/lib/c", 0, 4096, 0);
	Map *a = map_new("/usr/lib/a", 0, 4096, 0);
	Map *a2 = map_new("/usr/lib/a", 4096, 4096, 0);
	Map *b, *d, *e;

	model_add_exe(model, x, 0, FALSE);
	model_add_exe(model, y, 0, FALSE);
	exe_add_map(model, x, c, 1.0);
	exe_add_map(model, x, a, 1.0);
	exe_add_map(model, y, a2, 1.0);
	model_rank_maps(model);
	ck_assert_uint_eq(a->rank, 0);
	ck_assert_uint_eq(a2->rank, 1);
	ck_assert_uint_eq(c->rank, 2);

	/* b and d come, a goes (x's use 1); e comes and goes before a ranking. */
	exe_add_map(model, y, d = map_new("/usr/lib/d", 0, 4096, 0), 1.0);
	exe_add_map(model, y, b = map_new("/usr/lib/b", 0, 4096, 0), 1.0);
	exe_add_map(model, x, e = map_new("/usr/lib/e", 0, 4096, 0), 1.0);
	exe_remove_map(model, x, 1);
	exe_remove_map(model, x, 1);
	ck_assert(model->ranks_stale);
	model_rank_maps(model);
	ck_assert(!model->ranks_stale);
	ck_assert_uint_eq(model->ranked->len, 4);
	ck_assert_uint_eq(a2->rank, 0);
	ck_assert_uint_eq(b->rank, 1);
	ck_assert_uint_eq(c->rank, 2);
	ck_assert_uint_eq(d->rank, 3);
	ck_assert_uint_eq(model->rank_pending->len, 0);
}
END_TEST

START_TEST(test_drop_stale_maps)
{
	g_autoptr(Model) model = model_new();
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Map *old = map_new("/usr/lib/libold.so", 0, 4096, 0);
	Map *own = map_new("/usr/lib/libown.so", 0, 8192, 0);
	Map *keep = map_new("/usr/lib/libkeep.so", 0, 1000, 0);

	exe_add_map(model, a, old, 1.0);
	exe_add_map(model, a, own, 1.0);
	exe_add_map(model, b, keep, 1.0);
	exe_add_map(model, b, old, 1.0);
	model_add_exe(model, a, 0, FALSE);
	model_add_exe(model, b, 0, FALSE);
	/* Places in the list, and ranks in path order: keep, old, own. */
	ck_assert_uint_eq(model->map_list->len, 3);
	ck_assert(model->ranks_stale);
	model_rank_maps(model);
	ck_assert(!model->ranks_stale);
	ck_assert_uint_eq(keep->rank, 0);
	ck_assert_uint_eq(old->rank, 1);
	ck_assert_uint_eq(own->rank, 2);

	old->learn.stale = TRUE;
	ck_assert_uint_eq(model_drop_stale_maps(model), 2);
	ck_assert_ptr_null(model_lookup_map(model, "/usr/lib/libold.so", 0, 4096));
	ck_assert_uint_eq(a->exemaps->len, 1);
	ck_assert_uint_eq(a->size, 8192);
	ck_assert_uint_eq(b->exemaps->len, 1);
	ck_assert_uint_eq(b->size, 1000);
	ck_assert_uint_eq(model->map_list->len, 2);
	for (guint i = 0; i < model->map_list->len; i++)
		ck_assert_uint_eq(((Map *)g_ptr_array_index(model->map_list, i))->index, i);
	/* Dropping maps makes the ranks stale: keep 0, own 1. */
	ck_assert(model->ranks_stale);
	model_rank_maps(model);
	ck_assert_uint_eq(keep->rank, 0);
	ck_assert_uint_eq(own->rank, 1);

	/* exe_remove_map() on the last use frees the map too. */
	exe_remove_map(model, b, 0);
	ck_assert_ptr_null(model_lookup_map(model, "/usr/lib/libkeep.so", 0, 1000));
	ck_assert_uint_eq(b->size, 0);
	ck_assert_uint_eq(model->map_list->len, 1);
	ck_assert_ptr_eq(g_ptr_array_index(model->map_list, 0), own);
	ck_assert_uint_eq(own->index, 0);
}
END_TEST

START_TEST(test_map_file_id)
{
	MapFileId unknown = { 0, 0, 0, 0 };
	MapFileId f = { 2049, 1234, 4096, 1700000000123456789 };
	MapFileId g = f;

	ck_assert(!map_file_id_is_known(&unknown));
	ck_assert(map_file_id_is_known(&f));
	ck_assert(map_file_id_matches(&f, &g));
	/* Unknown on either side matches anything. */
	ck_assert(map_file_id_matches(&unknown, &f));
	ck_assert(map_file_id_matches(&f, &unknown));
	g.mtime++;
	ck_assert(!map_file_id_matches(&f, &g));
	g = f;
	g.size = 8192;
	ck_assert(!map_file_id_matches(&f, &g));
	g = f;
	g.ino = 1;
	ck_assert(!map_file_id_matches(&f, &g));
	g = f;
	g.dev = 1;
	ck_assert(!map_file_id_matches(&f, &g));
}
END_TEST

START_TEST(test_bad_exes_bounded)
{
	g_autoptr(Model) model = model_new();

	for (gint64 t = 0; t < MODEL_MAX_BAD_EXES; t++) {
		g_autofree char *path = g_strdup_printf("/usr/bin/b%" G_GINT64_FORMAT, t);

		model_add_bad_exe(model, path, 100, t);
	}
	ck_assert_uint_eq(g_hash_table_size(model->bad_exes), MODEL_MAX_BAD_EXES);
	/* A replaced entry does not count as new. */
	model_add_bad_exe(model, "/usr/bin/b5", 200, 5);
	ck_assert_uint_eq(g_hash_table_size(model->bad_exes), MODEL_MAX_BAD_EXES);

	/* One more: the oldest quarter (times 0 .. 2047) goes first. */
	model_add_bad_exe(model, "/usr/bin/new", 100, 9000);
	ck_assert_uint_eq(g_hash_table_size(model->bad_exes),
			  MODEL_MAX_BAD_EXES - MODEL_MAX_BAD_EXES / 4 + 1);
	ck_assert(!g_hash_table_contains(model->bad_exes, "/usr/bin/b0"));
	ck_assert(!g_hash_table_contains(model->bad_exes, "/usr/bin/b2047"));
	ck_assert(g_hash_table_contains(model->bad_exes, "/usr/bin/b2048"));
	ck_assert(g_hash_table_contains(model->bad_exes, "/usr/bin/new"));

	/*
	 * Expiry: the walk finds the oldest (2048); until it can expire, the
	 * table is not walked again, and then everything older goes.
	 */
	model_expire_bad_exes(model, 3000, 10000);
	ck_assert_int_eq(model->bad_exes_oldest, 2048);
	model_expire_bad_exes(model, 12048, 10000);
	ck_assert_uint_eq(g_hash_table_size(model->bad_exes),
			  MODEL_MAX_BAD_EXES - MODEL_MAX_BAD_EXES / 4 + 1);
	model_expire_bad_exes(model, 12049, 10000);
	ck_assert(!g_hash_table_contains(model->bad_exes, "/usr/bin/b2048"));
	ck_assert(g_hash_table_contains(model->bad_exes, "/usr/bin/b2049"));
	ck_assert_int_eq(model->bad_exes_oldest, 2049);
}
END_TEST

/* ---- caps ---- */

static ModelParams
capped(guint exes, guint exe_maps, guint maps, guint chains)
{
	ModelParams params = { 0 };

	params.max_exes = exes;
	params.max_exe_maps = exe_maps;
	params.max_maps = maps;
	params.max_chains = chains;
	return params;
}

/* An exe not running, last seen running at update_time, added to the model. */
static Exe *
add_stopped(Model *model, const char *path, gint64 update_time)
{
	Exe *exe = exe_new(path, FALSE, 0);

	exe->update_time = update_time;
	model_add_exe(model, exe, 0, FALSE);
	return exe;
}

START_TEST(test_exe_map_cap)
{
	g_autoptr(Model) model = model_new();
	ModelParams params = capped(0, 300, 0, 0);
	Exe *exe;
	Map *first;

	model_set_params(model, &params);
	exe = add_stopped(model, "/usr/bin/a", 1);
	for (guint i = 0; i < 400; i++) {
		ck_assert_int_eq(exe_add_map(model, exe, map_new("/usr/lib/big.so", 4096 * i, 4096, 0), 1.0),
				 i < 300);
		/* Up to EXE_MAP_SET_MIN (256) uses a walk finds duplicates; from there a set. */
		if (i == 254)
			ck_assert_ptr_null(exe->map_set);
	}
	/* 300 kept, 100 refused and freed (ASan would see a leak otherwise). */
	ck_assert_uint_eq(exe->exemaps->len, 300);
	ck_assert_uint_eq(g_hash_table_size(model->maps), 300);
	ck_assert_uint_eq(model->evictions.maps_refused, 100);
	ck_assert_uint_eq(exe->size, 300 * 4096);
	ck_assert_ptr_nonnull(exe->map_set);
	ck_assert_uint_eq(g_hash_table_size(exe->map_set), 300);

	/* A map it has already is no addition: accepted at the cap. */
	first = g_array_index(exe->exemaps, ExeMap, 0).map;
	ck_assert(exe_has_map(exe, first));
	ck_assert(exe_add_map(model, exe, map_new("/usr/lib/big.so", 0, 4096, 0), 1.0));
	ck_assert_uint_eq(exe->exemaps->len, 300);
	ck_assert_uint_eq(model->evictions.maps_refused, 100);

	/* Removing one makes room and leaves the set. */
	exe_remove_map(model, exe, 0);
	ck_assert_uint_eq(g_hash_table_size(exe->map_set), 299);
	ck_assert(exe_add_map(model, exe, map_new("/usr/lib/big.so", 4096 * 399, 4096, 0), 1.0));
	ck_assert_uint_eq(exe->exemaps->len, 300);
}
END_TEST

START_TEST(test_exe_map_duplicate_large)
{
	g_autoptr(Model) model = model_new();
	Exe *exe = add_stopped(model, "/usr/bin/a", 1);
	Map *map;

	/* No cap: 1,000 distinct maps, then each again, which adds nothing. */
	for (guint i = 0; i < 1000; i++)
		exe_add_map(model, exe, map_new("/usr/lib/big.so", 4096 * i, 4096, 0), 1.0);
	for (guint i = 0; i < 1000; i++)
		ck_assert(exe_add_map(model, exe, map_new("/usr/lib/big.so", 4096 * i, 4096, 0), 1.0));
	ck_assert_uint_eq(exe->exemaps->len, 1000);
	ck_assert_uint_eq(exe->size, 1000 * 4096);
	map = model_lookup_map(model, "/usr/lib/big.so", 4096 * 500, 4096);
	ck_assert_int_eq(map->refcount, 1);
}
END_TEST

START_TEST(test_exe_cap_evicts_oldest)
{
	g_autoptr(Model) model = model_new();
	ModelParams params = capped(32, 0, 0, 0);
	char path[64];

	model_set_params(model, &params);
	/* Seen running at 100 + i: /usr/bin/e0 longest ago. */
	for (guint i = 0; i < 32; i++) {
		Exe *exe;

		g_snprintf(path, sizeof(path), "/usr/bin/e%u", i);
		ck_assert(model_make_room_for_exe(model));
		exe = add_stopped(model, path, 100 + (gint64)i);
		exe_add_map(model, exe, map_new(path, 0, 4096, 0), 1.0);
	}
	ck_assert_uint_eq(model->evictions.exes, 0);
	/* Full: room for a sixteenth of 32, two, made by evicting e0 and e1. */
	ck_assert(model_make_room_for_exe(model));
	ck_assert_uint_eq(g_hash_table_size(model->exes), 30);
	ck_assert_uint_eq(model->evictions.exes, 2);
	ck_assert_ptr_null(model_lookup_exe(model, "/usr/bin/e0"));
	ck_assert_ptr_null(model_lookup_exe(model, "/usr/bin/e1"));
	ck_assert_ptr_nonnull(model_lookup_exe(model, "/usr/bin/e2"));
	/* Their maps went with them. */
	ck_assert_ptr_null(model_lookup_map(model, "/usr/bin/e0", 0, 4096));
	ck_assert_uint_eq(g_hash_table_size(model->maps), 30);
}
END_TEST

START_TEST(test_exe_cap_spares_running)
{
	g_autoptr(Model) model = model_new();
	ModelParams params = capped(16, 0, 0, 0);
	char path[64];

	model_set_params(model, &params);
	model->last_running_timestamp = 50;
	for (guint i = 0; i < 16; i++) {
		Exe *exe;

		g_snprintf(path, sizeof(path), "/usr/bin/r%u", i);
		exe = exe_new(path, TRUE, 50);
		model_add_exe(model, exe, 50, FALSE);
	}
	ck_assert_uint_eq(model->running->len, 16);
	/* Every exe runs: nothing to evict, the new one is refused. */
	ck_assert(!model_make_room_for_exe(model));
	ck_assert_uint_eq(g_hash_table_size(model->exes), 16);
	ck_assert_uint_eq(model->evictions.exes, 0);
	ck_assert_uint_eq(model->evictions.exes_refused, 1);
}
END_TEST

START_TEST(test_maps_cap_and_trim)
{
	g_autoptr(Model) model = model_new();
	ModelParams params = capped(0, 0, 32, 0);
	char path[64];

	model_set_params(model, &params);
	/* Exes with 8 maps of their own each: the fifth finds the model full. */
	for (guint i = 0; i < 5; i++) {
		Exe *exe;

		g_snprintf(path, sizeof(path), "/usr/bin/m%u", i);
		exe = add_stopped(model, path, 10 + (gint64)i);
		for (guint k = 0; k < 8; k++)
			ck_assert_int_eq(exe_add_map(model, exe, map_new(path, 4096 * k, 4096, 0), 1.0),
					 i < 4);
	}
	ck_assert_uint_eq(g_hash_table_size(model->maps), 32);
	ck_assert_uint_eq(model->evictions.maps_refused, 8);
	/* Trim to 32 - 2 = 30 maps: evicting m0, the oldest, leaves 24. */
	ck_assert_uint_eq(model_trim(model), 1);
	ck_assert_ptr_null(model_lookup_exe(model, "/usr/bin/m0"));
	ck_assert_ptr_nonnull(model_lookup_exe(model, "/usr/bin/m1"));
	ck_assert_uint_eq(g_hash_table_size(model->maps), 24);
}
END_TEST

START_TEST(test_chain_cap_evicts_lightest)
{
	g_autoptr(Model) model = model_new();
	ModelParams params = capped(0, 0, 0, 16);
	Exe *e[18];
	char path[64];

	model_set_params(model, &params);
	for (guint i = 0; i < 18; i++) {
		g_snprintf(path, sizeof(path), "/usr/bin/c%u", i);
		e[i] = add_stopped(model, path, 1);
	}
	/* Chains (c0, ci), i = 1..16, the i-th with heaviest count i. */
	for (guint i = 1; i <= 16; i++) {
		Markov *m = markov_new(model, e[0], e[i], 5, MARKOV_START_BLANK);

		m->weight[0][0] = (float)i;
	}
	ck_assert_uint_eq(model->n_chains, 16);
	ck_assert_uint_eq(model->evictions.chains, 0);
	/* The 17th: room for one (16 / 16) by evicting the lightest. */
	ck_assert_ptr_nonnull(markov_new(model, e[0], e[17], 5, MARKOV_START_BLANK));
	ck_assert_uint_eq(model->n_chains, 16);
	ck_assert_uint_eq(model->evictions.chains, 1);
	ck_assert_ptr_null(model_lookup_chain(model, e[0], e[1]));
	ck_assert_ptr_nonnull(model_lookup_chain(model, e[0], e[2]));
	ck_assert_uint_eq(e[0]->chains->len, 16);
	ck_assert_uint_eq(e[1]->chains->len, 0);
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
	tcase_add_test(tc, test_map_path_shared);
	suite_add_tcase(s, tc);

	tc = tcase_create("exes");
	tcase_add_test(tc, test_exe_new);
	tcase_add_test(tc, test_exe_arrays_compact);
	tcase_add_test(tc, test_exe_succ_array);
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
	tcase_add_test(tc, test_account_running);
	tcase_add_test(tc, test_account_long_lists);
	suite_add_tcase(s, tc);

	tc = tcase_create("sparse");
	tcase_add_test(tc, test_chain_lookup);
	tcase_add_test(tc, test_chain_blocks);
	tcase_add_test(tc, test_link_together);
	tcase_add_test(tc, test_link_together_known);
	tcase_add_test(tc, test_link_follow);
	tcase_add_test(tc, test_starts_counted);
	tcase_add_test(tc, test_link_backfill_follow);
	tcase_add_test(tc, test_link_backfill_together);
	tcase_add_test(tc, test_count_starts);
	tcase_add_test(tc, test_link_constant);
	tcase_add_test(tc, test_markov_new_joint_floor);
	suite_add_tcase(s, tc);

	tc = tcase_create("aging");
	tcase_add_test(tc, test_age);
	tcase_add_test(tc, test_age_forgets);
	tcase_add_test(tc, test_forget_exes);
	tcase_add_test(tc, test_drop_stale_maps);
	tcase_add_test(tc, test_rank_merge);
	tcase_add_test(tc, test_map_file_id);
	tcase_add_test(tc, test_bad_exes_bounded);
	suite_add_tcase(s, tc);

	tc = tcase_create("caps");
	tcase_add_test(tc, test_exe_map_cap);
	tcase_add_test(tc, test_exe_map_duplicate_large);
	tcase_add_test(tc, test_exe_cap_evicts_oldest);
	tcase_add_test(tc, test_exe_cap_spares_running);
	tcase_add_test(tc, test_maps_cap_and_trim);
	tcase_add_test(tc, test_chain_cap_evicts_lightest);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	return tu_run_suite(model_suite());
}
