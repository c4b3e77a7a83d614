/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/scan.c alone: scripted scans (begin / saw / end) over a
 * model built by hand, checked against the starts, stops, new and
 * restarted exes the scan must report, and the exec events it must count
 * as runs. Learning from what a scan found is tested in check_learn.c.
 */
#include "config.h"

#include "testutil.h"
#include "scan.h"

static Conf *conf;
static Model *model;
static Scan *scan;

static void
setup(void)
{
	conf = conf_new();
	g_strfreev(conf->exeprefix);
	conf->exeprefix = g_strsplit("!/usr/bin/skip/;/usr/bin/;!/", ";", -1);
	model = model_new();
	scan = scan_new();
}

static void
teardown(void)
{
	g_clear_pointer(&scan, scan_free);
	g_clear_pointer(&model, model_free);
	g_clear_pointer(&conf, conf_free);
}

/* A known exe, not running, with no maps. */
static Exe *
known(const char *path)
{
	Exe *exe = exe_new(path, FALSE, 0);

	model_add_exe(model, exe, 0, FALSE);
	return exe;
}

/* One scan at now of the processes (pid 100 + index) running exes[], NULL-terminated. */
static void
scripted(gint64 now, const char *const *exes)
{
	scan_begin(scan, model, now);
	for (guint i = 0; exes[i]; i++)
		scan_saw_process(scan, model, conf, (pid_t)(100 + i), exes[i]);
	scan_end(scan, model, now);
}

static const char *
changed(guint i)
{
	return g_ptr_array_index(scan_get_result(scan)->changed, i);
}

static const ScanExe *
exe_at(GPtrArray *list, guint i)
{
	return g_ptr_array_index(list, i);
}

/*
 * Scan 1 at 10: a (known) and x (new) run twice each, skip/y is refused
 * by exeprefix. a started (changed, restarted with its first pid), x is
 * new once, with its first pid. Scan 2 at 30: b only; a stopped, b
 * started, in the order seen then stopped.
 */
START_TEST(test_starts_stops_new)
{
	const ScanResult *res;
	Exe *a = known("/usr/bin/a");
	Exe *b = known("/usr/bin/b");

	scripted(10, (const char *const[]){ "/usr/bin/a", "/usr/bin/x", "/usr/bin/a",
					    "/usr/bin/x", "/usr/bin/skip/y", NULL });
	res = scan_get_result(scan);
	ck_assert_int_eq(res->time, 10);
	ck_assert_uint_eq(scan_get_stats(scan)->processes, 5);
	ck_assert_uint_eq(res->changed->len, 1);
	ck_assert_str_eq(changed(0), "/usr/bin/a");
	ck_assert_uint_eq(res->restarted->len, 1);
	ck_assert_str_eq(exe_at(res->restarted, 0)->path, "/usr/bin/a");
	ck_assert_int_eq(exe_at(res->restarted, 0)->pid, 100);
	ck_assert_uint_eq(res->new_exes->len, 1);
	ck_assert_str_eq(exe_at(res->new_exes, 0)->path, "/usr/bin/x");
	ck_assert_int_eq(exe_at(res->new_exes, 0)->pid, 101);
	ck_assert_uint_eq(model->running->len, 1);
	ck_assert_ptr_eq(g_ptr_array_index(model->running, 0), a);
	ck_assert_int_eq(model->last_running_timestamp, 10);
	ck_assert_int_eq(a->running_timestamp, 10);

	/* Consumed (as learn does): nothing is reported twice. */
	scan_consume(scan);
	ck_assert_uint_eq(res->changed->len, 0);
	ck_assert_uint_eq(res->new_exes->len, 0);
	ck_assert_int_eq(res->time, 10);

	scripted(30, (const char *const[]){ "/usr/bin/b", NULL });
	ck_assert_uint_eq(scan_get_stats(scan)->changed, 2);
	ck_assert_str_eq(changed(0), "/usr/bin/b");
	ck_assert_str_eq(changed(1), "/usr/bin/a");
	ck_assert(!exe_is_running(model, a));
	ck_assert(exe_is_running(model, b));
	ck_assert_int_eq(a->running_timestamp, 10);
}
END_TEST

/*
 * An exec event of a known exe counts as a run at the next scan even if
 * its process is gone (a start, not re-read: no restarted entry), and at
 * that scan only. One of an unknown exe waits two scans for its read set;
 * forgotten, it waits no more. Bad exes and exeprefix refusals are
 * ignored.
 */
START_TEST(test_exec_events)
{
	Exe *cc = known("/usr/bin/cc");
	const ScanResult *res = scan_get_result(scan);

	scan_saw_exec(scan, model, conf, "/usr/bin/cc");
	scan_saw_exec(scan, model, conf, "/usr/bin/skip/z");
	scan_saw_exec(scan, model, conf, "/usr/bin/ghost");
	scripted(10, (const char *const[]){ NULL });
	ck_assert(exe_is_running(model, cc));
	ck_assert_uint_eq(res->changed->len, 1);
	ck_assert_uint_eq(res->restarted->len, 0);
	ck_assert_uint_eq(res->new_exes->len, 0);

	/* ghost is admitted between the scans: the second scan counts it. */
	known("/usr/bin/ghost");
	scripted(30, (const char *const[]){ NULL });
	ck_assert(!exe_is_running(model, cc));
	ck_assert_uint_eq(model->running->len, 1);
	ck_assert_str_eq(((Exe *)g_ptr_array_index(model->running, 0))->path, "/usr/bin/ghost");

	/* Forgotten before the next scan, an exec event counts for nothing. */
	scan_saw_exec(scan, model, conf, "/usr/bin/cc");
	scan_forget_exec(scan, "/usr/bin/cc");
	scripted(50, (const char *const[]){ NULL });
	ck_assert_uint_eq(model->running->len, 0);
}
END_TEST

static Suite *
scan_suite(void)
{
	Suite *s = suite_create("scan");
	TCase *tc = tcase_create("scan");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_starts_stops_new);
	tcase_add_test(tc, test_exec_events);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(scan_suite());
}
