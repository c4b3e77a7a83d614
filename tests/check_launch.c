/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/launch.c: the exec-event policy on struct literals
 * (launch_decide()) and through injected hooks (launch_exec()): a fake
 * clock, a recorded readahead hold and a fixed measurement.
 */
#include "config.h"

#include "testutil.h"
#include "launch.h"

/* cycle 20 s, execpause 1000 ms */
static Conf *
test_conf(void)
{
	Conf *conf = conf_new();

	conf->cycle = 20;
	conf->execpause = 1000;
	return conf;
}

/*
 * Hold: the exe was last seen by a scan at model time 0; a start at model
 * time 41 is more than two cycles (40 s) later, one at 40 is not.
 * Measure: never measured, or a cycle (20 000 000 us) or more since.
 */
START_TEST(test_decide)
{
	g_autoptr(Conf) conf = test_conf();
	Exe exe = { .update_time = 0, .hits_checked_at = 0 };
	LaunchDecision d;

	d = launch_decide(conf, 41, &exe, 5000000);
	ck_assert_int_eq(d.hold_until, 6000000);
	ck_assert(d.measure);

	d = launch_decide(conf, 40, &exe, 5000000);
	ck_assert_int_eq(d.hold_until, 0);

	conf->execpause = 0;
	d = launch_decide(conf, 1000, &exe, 5000000);
	ck_assert_int_eq(d.hold_until, 0);
	conf->execpause = 1000;

	exe.update_time = 100;
	d = launch_decide(conf, 141, &exe, 5000000);
	ck_assert_int_eq(d.hold_until, 6000000);

	exe.hits_checked_at = 1000000;
	d = launch_decide(conf, 141, &exe, 20999999);
	ck_assert(!d.measure);
	d = launch_decide(conf, 141, &exe, 21000000);
	ck_assert(d.measure);
}
END_TEST

typedef struct Hooked {
	gint64 now;
	GArray *holds;        /* gint64 until_us */
	guint measured;
	guint64 measured_seq;
} Hooked;

static gint64
fake_now(gpointer data)
{
	return ((Hooked *)data)->now;
}

static void
fake_hold(gpointer data, gint64 until_us)
{
	g_array_append_val(((Hooked *)data)->holds, until_us);
}

static void
fake_measure(gpointer data, const Exe *exe, guint64 prefetch_seq, LaunchHits *hits)
{
	Hooked *h = data;

	(void)exe;
	h->measured++;
	h->measured_seq = prefetch_seq;
	hits->bytes = 100;
	hits->prefetched = 40;
	hits->probed = 90;
	hits->resident = 60;
}

/*
 * Three starts of a (last seen at model time 0, model time 100, last
 * prefetch 7) and one of an unknown exe:
 *   1 us 1 000 000: held until 2 000 000, measured against prefetch 7;
 *   2 us 2 000 000: held until 3 000 000, not measured (same cycle);
 *   3 us 21 000 000, a seen at 90 meanwhile: not held, measured again;
 *   unknown: nothing at all, the model stays clean.
 * Every start counts: 3 starts, 2 checks, twice the figures.
 */
START_TEST(test_exec)
{
	g_autoptr(Conf) conf = test_conf();
	g_autoptr(Model) model = model_new();
	Hooked h = { 0 };
	const LaunchHooks hooks = { fake_now, fake_hold, fake_measure, &h };
	g_autoptr(Launch) launch = launch_new(&hooks);
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);

	h.holds = g_array_new(FALSE, FALSE, sizeof(gint64));
	model_add_exe(model, a, 0, FALSE);
	a->update_time = 0;
	model->time = 100;
	model->prefetch_seq = 7;
	model->dirty = FALSE;

	h.now = 1000000;
	ck_assert_ptr_eq(launch_exec(launch, model, conf, "/usr/bin/a"), a);
	ck_assert_uint_eq(h.holds->len, 1);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 0), 2000000);
	ck_assert_uint_eq(h.measured, 1);
	ck_assert_uint_eq(h.measured_seq, 7);
	ck_assert_int_eq(a->hits_checked_at, 1000000);
	ck_assert(model->dirty);

	h.now = 2000000;
	launch_exec(launch, model, conf, "/usr/bin/a");
	ck_assert_uint_eq(h.holds->len, 2);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 1), 3000000);
	ck_assert_uint_eq(h.measured, 1);

	h.now = 21000000;
	a->update_time = 90;
	launch_exec(launch, model, conf, "/usr/bin/a");
	ck_assert_uint_eq(h.holds->len, 2);
	ck_assert_uint_eq(h.measured, 2);
	ck_assert_int_eq(a->hits_checked_at, 21000000);

	ck_assert_uint_eq(a->hits.starts, 3);
	ck_assert_uint_eq(a->hits.checks, 2);
	ck_assert_uint_eq(a->hits.bytes, 200);
	ck_assert_uint_eq(a->hits.prefetched, 80);
	ck_assert_uint_eq(a->hits.probed, 180);
	ck_assert_uint_eq(a->hits.resident, 120);

	model->dirty = FALSE;
	ck_assert_ptr_null(launch_exec(launch, model, conf, "/usr/bin/unknown"));
	ck_assert_uint_eq(h.holds->len, 2);
	ck_assert_uint_eq(h.measured, 2);
	ck_assert(!model->dirty);
	g_array_unref(h.holds);
}
END_TEST

static Suite *
launch_suite(void)
{
	Suite *s = suite_create("launch");
	TCase *tc = tcase_create("launch");

	tcase_add_test(tc, test_decide);
	tcase_add_test(tc, test_exec);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(launch_suite());
}
