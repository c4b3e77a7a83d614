/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/cycle.c: the cycle run on fake sources (a scripted
 * process list, a maps source, a plan and a recording reader), checked
 * against the clock of the halves, the order of the stages, what the
 * reader gets and what counts as prefetched.
 *
 * The scenario is the hand-made trace of tests/replay.sh, worked out
 * there: cycle 20 s; a runs throughout, b at cycles 0, 2 and 4; a maps
 * liba (8 KB) and libc (4 KB), b maps libb (16 KB) and libc; minsize 0,
 * usecorrelation off, budget 16 KB. Nothing is selected before the
 * prediction of cycle 3, which bids b at p = 0.769 and selects libb
 * (16 KB) alone: libc (4 KB) no longer fits.
 */
#include "config.h"

#include "testutil.h"
#include "cycle.h"
#include "proc.h"

#include <string.h>

typedef struct Fake {
	guint cycle_no;           /* the cycle the scan source lists */
	GArray *scan_times;       /* gint64: now of each scan */
	GArray *stages;           /* CycleStage, as they ended */
	guint plans;
	gboolean pause;           /* the plan holds the read back */
	CycleRead answer;         /* what the reader answers */
	guint reads;
	GPtrArray *last_read;     /* char *: paths of the maps of the last read */
	guint64 last_read_kb;
} Fake;

static Fake fake;
static Conf *conf;
static Model *model;
static Cycle *cycle;

static gboolean
fake_scan(gpointer data, Scan *scan, Model *m, const Conf *c, gint64 now, GError **error)
{
	Fake *f = data;

	(void)error;
	g_array_append_val(f->scan_times, now);
	scan_begin(scan, m, now);
	scan_saw_process(scan, m, c, 100, "/usr/bin/a");
	if (f->cycle_no % 2 == 0)
		scan_saw_process(scan, m, c, 200, "/usr/bin/b");
	scan_end(scan, m, now);
	return TRUE;
}

static void
fake_plan(gpointer data, const Conf *c, CyclePlan *plan)
{
	Fake *f = data;

	(void)c;
	f->plans++;
	plan->predict = TRUE;
	plan->read = !f->pause;
	plan->budget_kb = 16;
}

static CycleRead
fake_read(gpointer data, GPtrArray *maps, const Conf *c)
{
	Fake *f = data;

	(void)c;
	f->reads++;
	f->last_read_kb = 0;
	g_ptr_array_set_size(f->last_read, 0);
	for (guint i = 0; i < maps->len; i++) {
		const Map *map = maps->pdata[i];

		g_ptr_array_add(f->last_read, g_strdup(map->path));
		f->last_read_kb += map->length / 1024;
	}
	return f->answer;
}

static void
fake_stage(gpointer data, CycleStage stage)
{
	g_array_append_val(((Fake *)data)->stages, stage);
}

static const CycleReader fake_reader = { fake_read };

static void
add_map(GArray *maps, const char *path, guint64 length)
{
	static guint64 address = 0x400000;
	ProcMap pm = { 0 };

	pm.start = address;
	pm.end = address + length;
	pm.path = g_strdup(path);
	address += length + 4096;
	g_array_append_val(maps, pm);
}

static gboolean
fake_maps(pid_t pid, const char *exe_path, GArray *maps, gpointer user_data, GError **error)
{
	(void)exe_path;
	(void)user_data;
	(void)error;
	add_map(maps, pid == 100 ? "/usr/lib/liba.so" : "/usr/lib/libb.so", pid == 100 ? 8192 : 16384);
	add_map(maps, "/usr/lib/libc.so", 4096);
	return TRUE;
}

static gboolean
any_file(const char *path, MapFileId *id, gpointer user_data)
{
	(void)path;
	(void)user_data;
	memset(id, 0, sizeof(*id));
	return TRUE;
}

static void
setup(void)
{
	const CycleSources sources = {
		.scan = fake_scan,
		.plan = fake_plan,
		.reader = &fake_reader,
		.stage_done = fake_stage,
		.data = &fake,
	};

	memset(&fake, 0, sizeof(fake));
	fake.scan_times = g_array_new(FALSE, FALSE, sizeof(gint64));
	fake.stages = g_array_new(FALSE, FALSE, sizeof(CycleStage));
	fake.last_read = g_ptr_array_new_with_free_func(g_free);
	fake.answer = CYCLE_READ_STARTED;
	conf = conf_new();
	conf->cycle = 20;
	conf->minsize = 0;
	conf->usecorrelation = FALSE;
	model = model_new();
	cycle = cycle_new(model, conf, &sources);
	learn_set_maps_source(cycle_get_learn(cycle), fake_maps, NULL);
	learn_set_file_check(cycle_get_learn(cycle), any_file, NULL);
}

static void
teardown(void)
{
	g_clear_pointer(&cycle, cycle_free);
	g_clear_pointer(&model, model_free);
	g_clear_pointer(&conf, conf_free);
	g_array_unref(fake.scan_times);
	g_array_unref(fake.stages);
	g_ptr_array_unref(fake.last_read);
}

/* Cycles 0 .. n-1, each both halves. */
static void
run_cycles(guint n)
{
	for (guint k = 0; k < n; k++) {
		fake.cycle_no = k;
		cycle_run(cycle);
	}
}

static Map *
map_of(const char *path)
{
	return model_lookup_map(model, path, 0, g_str_equal(path, "/usr/lib/libb.so") ? 16384
						: g_str_equal(path, "/usr/lib/liba.so") ? 8192 : 4096);
}

/*
 * The halves on the model clock: the scan at T, learn and prediction at
 * T + 10, the next scan at T + 20. Cycles 0 to 2 select nothing, so the
 * reader is not called; stages end scan, learn, predict.
 */
START_TEST(test_halves_and_stages)
{
	const CycleStage three[] = { CYCLE_SCAN, CYCLE_LEARN, CYCLE_PREDICT };

	fake.cycle_no = 0;
	cycle_scan_half(cycle);
	ck_assert_int_eq(model->time, 10);
	ck_assert_uint_eq(fake.plans, 0);
	cycle_update_half(cycle);
	ck_assert_int_eq(model->time, 20);
	ck_assert_uint_eq(cycle_get_count(cycle), 1);
	/* Both admitted by learn at 10, from the scan at 0. */
	ck_assert_uint_eq(g_hash_table_size(model->exes), 2);
	ck_assert_int_eq(model_lookup_exe(model, "/usr/bin/a")->running_timestamp, 0);

	fake.cycle_no = 1;
	cycle_run(cycle);
	fake.cycle_no = 2;
	cycle_run(cycle);
	ck_assert_uint_eq(fake.scan_times->len, 3);
	ck_assert_int_eq(g_array_index(fake.scan_times, gint64, 1), 20);
	ck_assert_int_eq(g_array_index(fake.scan_times, gint64, 2), 40);
	ck_assert_uint_eq(fake.plans, 3);
	ck_assert_uint_eq(fake.reads, 0);
	ck_assert_uint_eq(cycle_get_prediction(cycle)->selected_maps, 0);
	ck_assert_uint_eq(fake.stages->len, 9);
	for (guint i = 0; i < 9; i++)
		ck_assert_int_eq(g_array_index(fake.stages, CycleStage, i), three[i % 3]);
}
END_TEST

/*
 * Cycle 3 selects libb alone; the reader gets it, the read stage ends,
 * and a started read marks libb as the last prefetch.
 */
START_TEST(test_read_started)
{
	const CyclePrediction *last;

	run_cycles(4);
	last = cycle_get_prediction(cycle);
	ck_assert_uint_eq(last->budget_kb, 16);
	ck_assert_uint_eq(last->selected_maps, 1);
	ck_assert_uint_eq(last->selected_kb, 16);
	ck_assert(last->read_called);
	ck_assert_int_eq(last->read, CYCLE_READ_STARTED);
	ck_assert_uint_eq(fake.reads, 1);
	ck_assert_uint_eq(fake.last_read->len, 1);
	ck_assert_str_eq(g_ptr_array_index(fake.last_read, 0), "/usr/lib/libb.so");
	ck_assert_uint_eq(fake.last_read_kb, 16);
	ck_assert_int_eq(g_array_index(fake.stages, CycleStage, fake.stages->len - 1), CYCLE_READ);
	ck_assert_uint_eq(model->prefetch_seq, 1);
	ck_assert_uint_eq(map_of("/usr/lib/libb.so")->cycle.prefetch_seq, 1);
	ck_assert_uint_eq(map_of("/usr/lib/libc.so")->cycle.prefetch_seq, 0);
}
END_TEST

/* A recorder (the replay) or a busy reader: nothing counts as prefetched. */
START_TEST(test_read_recorded_or_busy)
{
	fake.answer = CYCLE_READ_RECORDED;
	run_cycles(4);
	ck_assert_uint_eq(fake.reads, 1);
	ck_assert_int_eq(cycle_get_prediction(cycle)->read, CYCLE_READ_RECORDED);
	ck_assert_uint_eq(model->prefetch_seq, 0);
	ck_assert_uint_eq(map_of("/usr/lib/libb.so")->cycle.prefetch_seq, 0);

	/* Predicting again on the same model (a superseded read ended). */
	fake.answer = CYCLE_READ_BUSY;
	cycle_predict(cycle);
	ck_assert_uint_eq(fake.reads, 2);
	ck_assert_int_eq(cycle_get_prediction(cycle)->read, CYCLE_READ_BUSY);
	ck_assert_uint_eq(model->prefetch_seq, 0);
}
END_TEST

/*
 * Paused: the prediction is made (the dump shows it) but not read. A
 * stale map is left out of the read: libb's file gone.
 */
START_TEST(test_paused_and_stale)
{
	fake.pause = TRUE;
	run_cycles(4);
	ck_assert_uint_eq(cycle_get_prediction(cycle)->selected_maps, 1);
	ck_assert(!cycle_get_prediction(cycle)->read_called);
	ck_assert_uint_eq(fake.reads, 0);

	fake.pause = FALSE;
	/* Last checked by cycle 3 at the latest (70 s): an hour later its file, not on this machine, is gone. */
	learn_set_file_check(cycle_get_learn(cycle), NULL, NULL);
	model->time += LEARN_FILE_CHECK_PERIOD;
	cycle_predict(cycle);
	ck_assert_uint_eq(fake.reads, 1);
	ck_assert_uint_eq(fake.last_read->len, 0);
	ck_assert(map_of("/usr/lib/libb.so")->learn.stale);
	ck_assert_uint_eq(model->prefetch_seq, 1);
}
END_TEST

/* doscan off: no scan, no learning, and the model clock stands still. */
START_TEST(test_doscan_off)
{
	conf->doscan = FALSE;
	run_cycles(2);
	ck_assert_uint_eq(fake.scan_times->len, 0);
	ck_assert_int_eq(model->time, 0);
	ck_assert_uint_eq(fake.plans, 2);
	ck_assert_uint_eq(cycle_get_count(cycle), 2);

	conf->dopredict = FALSE;
	run_cycles(1);
	ck_assert_uint_eq(fake.plans, 2);
}
END_TEST

static Suite *
cycle_suite(void)
{
	Suite *s = suite_create("cycle");
	TCase *tc = tcase_create("cycle");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_halves_and_stages);
	tcase_add_test(tc, test_read_started);
	tcase_add_test(tc, test_read_recorded_or_busy);
	tcase_add_test(tc, test_paused_and_stale);
	tcase_add_test(tc, test_doscan_off);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(cycle_suite());
}
