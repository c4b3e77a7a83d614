/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/launch.c: the exec-event policy on struct literals
 * (launch_decide()) and through injected hooks (launch_exec()): a fake
 * clock, a recorded readahead hold and a fixed measurement.
 */
#include "config.h"

#include "testutil.h"
#include "launch.h"
#include "order.h"

/* cycle 20 s, execpause 1000 ms, launchfetchkb as set (the default, 128 MiB) */
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
 * time 41 is more than two cycles (40 s) later, one at 40 is not. A
 * launch holds for the start-up window (5 s) or execpause if longer (8 s),
 * with execpause 0 too while launchfetchkb is on; both off: no hold.
 * Measure: never measured, or a cycle (20 000 000 us) or more since; for
 * a start that is not a launch of a program whose last measurement found
 * its set cached, eight cycles (160 000 000 us).
 */
START_TEST(test_decide)
{
	g_autoptr(Conf) conf = test_conf();
	Exe exe = { .update_time = 0, .hits_checked_at = 0 };
	LaunchDecision d;

	d = launch_decide(conf, 41, &exe, 5000000);
	ck_assert_int_eq(d.hold_until, 10000000);
	ck_assert(d.launch);
	ck_assert(d.measure);

	d = launch_decide(conf, 40, &exe, 5000000);
	ck_assert_int_eq(d.hold_until, 0);
	ck_assert(!d.launch);

	conf->execpause = 8000;
	d = launch_decide(conf, 1000, &exe, 5000000);
	ck_assert_int_eq(d.hold_until, 13000000);
	conf->execpause = 0;
	d = launch_decide(conf, 1000, &exe, 5000000);
	ck_assert_int_eq(d.hold_until, 10000000);
	conf->launchfetchkb = 0;
	d = launch_decide(conf, 1000, &exe, 5000000);
	ck_assert_int_eq(d.hold_until, 0);
	conf->launchfetchkb = 131072;
	conf->execpause = 1000;

	exe.update_time = 100;
	d = launch_decide(conf, 141, &exe, 5000000);
	ck_assert_int_eq(d.hold_until, 10000000);

	exe.hits_checked_at = 1000000;
	d = launch_decide(conf, 141, &exe, 20999999);
	ck_assert(!d.measure);
	d = launch_decide(conf, 141, &exe, 21000000);
	ck_assert(d.measure);
	/* A repeat (seen at 100, started at 140): a cycle while not cached... */
	d = launch_decide(conf, 140, &exe, 21000000);
	ck_assert(!d.launch);
	ck_assert(d.measure);
	/* ...eight once cached; a launch still one. */
	exe.hits_cached = TRUE;
	d = launch_decide(conf, 140, &exe, 21000000);
	ck_assert(!d.measure);
	d = launch_decide(conf, 140, &exe, 160999999);
	ck_assert(!d.measure);
	d = launch_decide(conf, 140, &exe, 161000000);
	ck_assert(d.measure);
	d = launch_decide(conf, 141, &exe, 21000000);
	ck_assert(d.measure);
}
END_TEST

/*
 * Fetch or not: more than a tenth of the learned set missing (bytes -
 * resident > bytes / 10) is read; the rate bound lets 4 batches through
 * at once, then one per second.
 */
/*
 * Cached enough for neither a batch nor the hold: at most a tenth of the
 * learned set missing. 100 bytes: 90 resident (10 missing, 10 * 10 <=
 * 100) is cached, 89 (11 missing) is not; an empty set is; resident
 * above the set's size (a larger page) counts as all of it.
 */
START_TEST(test_hits_cached)
{
	const LaunchHits ninety = { 100, 0, 100, 90 };
	const LaunchHits eighty_nine = { 100, 0, 100, 89 };
	const LaunchHits none = { 100, 0, 100, 0 };
	const LaunchHits empty = { 0, 0, 0, 0 };
	const LaunchHits over = { 100, 0, 100, 4096 };

	ck_assert(launch_hits_cached(&ninety));
	ck_assert(!launch_hits_cached(&eighty_nine));
	ck_assert(!launch_hits_cached(&none));
	ck_assert(launch_hits_cached(&empty));
	ck_assert(launch_hits_cached(&over));
}
END_TEST

START_TEST(test_fetch_decide)
{
	g_autoptr(Conf) conf = test_conf();
	LaunchRate rate = { 0 };
	LaunchHits hits = { .bytes = 1000, .probed = 1000, .resident = 900 };

	/* 100 of 1000 missing: exactly a tenth, cached enough; 101: read. */
	ck_assert_int_eq(launch_fetch_decide(conf, &hits, &rate, 10000000), LAUNCH_FETCH_CACHED);
	ck_assert_int_eq(rate.clear_at, 0);
	hits.resident = 899;
	ck_assert_int_eq(launch_fetch_decide(conf, &hits, &rate, 10000000), LAUNCH_FETCH_READ);
	ck_assert_int_eq(rate.clear_at, 11000000);
	/* Residency unknown (nothing probed): counts as missing. */
	hits = (LaunchHits){ .bytes = 1000, .probed = 0, .resident = 0 };
	ck_assert_int_eq(launch_fetch_decide(conf, &hits, &rate, 10000000), LAUNCH_FETCH_READ);
	ck_assert_int_eq(rate.clear_at, 12000000);
	/* Nothing learned: nothing to read. */
	hits = (LaunchHits){ 0 };
	ck_assert_int_eq(launch_fetch_decide(conf, &hits, &rate, 10000000), LAUNCH_FETCH_CACHED);

	/* Two more at 10 s make the burst of 4; the fifth is held. */
	hits = (LaunchHits){ .bytes = 1000, .probed = 1000, .resident = 0 };
	ck_assert_int_eq(launch_fetch_decide(conf, &hits, &rate, 10000000), LAUNCH_FETCH_READ);
	ck_assert_int_eq(launch_fetch_decide(conf, &hits, &rate, 10000000), LAUNCH_FETCH_READ);
	ck_assert_int_eq(rate.clear_at, 14000000);
	ck_assert_int_eq(launch_fetch_decide(conf, &hits, &rate, 10000000), LAUNCH_FETCH_LIMITED);
	ck_assert_int_eq(rate.clear_at, 14000000);
	/* One per second after that: not at 10.999999 s, at 11 s. */
	ck_assert_int_eq(launch_fetch_decide(conf, &hits, &rate, 10999999), LAUNCH_FETCH_LIMITED);
	ck_assert_int_eq(launch_fetch_decide(conf, &hits, &rate, 11000000), LAUNCH_FETCH_READ);
	ck_assert_int_eq(rate.clear_at, 15000000);
	/* After a quiet minute the bound is clear again. */
	ck_assert_int_eq(launch_fetch_decide(conf, &hits, &rate, 70000000), LAUNCH_FETCH_READ);
	ck_assert_int_eq(rate.clear_at, 71000000);

	/* The key turns it off, before anything else. */
	conf->launchfetchkb = 0;
	ck_assert_int_eq(launch_fetch_decide(conf, &hits, &rate, 70000000), LAUNCH_FETCH_OFF);
	ck_assert_int_eq(rate.clear_at, 71000000);
}
END_TEST

/*
 * The requests: most likely maps first (/b at 1.0, then /a and /c at 0.5
 * in their own order), cut at max_bytes: 350 takes /b's 300 and 50 of /a.
 */
START_TEST(test_fetch_requests)
{
	g_autoptr(Model) model = model_new();
	Exe *exe = exe_new("/usr/bin/x", FALSE, 0);
	g_autoptr(GArray) all = NULL;
	g_autoptr(GArray) cut = NULL;
	const OrderRequest *r;

	model_add_exe(model, exe, 0, FALSE);
	exe_add_map(model, exe, map_new("/a", 0, 100, 0), 0.5);
	exe_add_map(model, exe, map_new("/b", 0, 300, 0), 1.0);
	exe_add_map(model, exe, map_new("/c", 4096, 200, 0), 0.5);
	/* Stale (gone or replaced): never read, however likely. */
	exe_add_map(model, exe, map_new("/d", 0, 50, 0), 1.0);
	g_array_index(exe->exemaps, ExeMap, 3).map->learn.stale = TRUE;

	all = launch_fetch_requests(exe, 10000, 0);
	ck_assert_uint_eq(all->len, 3);
	r = &g_array_index(all, OrderRequest, 0);
	ck_assert_str_eq(r->path, "/b");
	ck_assert_uint_eq(r->length, 300);
	r = &g_array_index(all, OrderRequest, 1);
	ck_assert_str_eq(r->path, "/a");
	ck_assert_uint_eq(r->length, 100);
	r = &g_array_index(all, OrderRequest, 2);
	ck_assert_str_eq(r->path, "/c");
	ck_assert_uint_eq(r->offset, 4096);
	ck_assert_uint_eq(r->length, 200);

	cut = launch_fetch_requests(exe, 350, 0);
	ck_assert_uint_eq(cut->len, 2);
	ck_assert_str_eq(g_array_index(cut, OrderRequest, 0).path, "/b");
	ck_assert_uint_eq(g_array_index(cut, OrderRequest, 0).length, 300);
	ck_assert_str_eq(g_array_index(cut, OrderRequest, 1).path, "/a");
	ck_assert_uint_eq(g_array_index(cut, OrderRequest, 1).offset, 0);
	ck_assert_uint_eq(g_array_index(cut, OrderRequest, 1).length, 50);
}
END_TEST

/*
 * The merging, with KiB = 1024 and the gap of 256 KiB:
 *   /big (likely 0.5): [0, 64K), [128K, 192K) and [160K, 200K) overlap or
 *     lie 64K apart: one range [0, 200K); [456K, 520K) lies exactly 256K
 *     after it: joined, [0, 520K); [777K, 841K) lies 257K after: apart.
 *     The file's 584K is over the minimum of 256K.
 *   /lib (likely 1.0 and 0.2): [0, 300K) and [1M, 1M + 4K), 724K apart:
 *     two ranges, each as likely as its map; the first comes first of all.
 *   /small (likely 1.0): [0, 4K) and [8K, 12K) merge into 12K, under the
 *     minimum: left out however likely.
 *   /stale: never read.
 * Order: /lib's first (1.0), then /big's two (0.5, in the exe's order of
 * their first maps), then /lib's second (0.2).
 */
START_TEST(test_fetch_merged)
{
	const guint64 K = 1024;
	g_autoptr(Model) model = model_new();
	Exe *exe = exe_new("/usr/bin/x", FALSE, 0);
	g_autoptr(GArray) reqs = NULL;
	g_autoptr(GArray) cut = NULL;
	const struct {
		const char *path;
		guint64 offset, length;
	} want[] = {
		{ "/lib", 0, 300 * K },
		{ "/big", 0, 520 * K },
		{ "/big", 777 * K, 64 * K },
		{ "/lib", 1024 * K, 4 * K },
	};

	model_add_exe(model, exe, 0, FALSE);
	exe_add_map(model, exe, map_new("/big", 128 * K, 64 * K, 0), 0.5);
	exe_add_map(model, exe, map_new("/small", 8 * K, 4 * K, 0), 1.0);
	exe_add_map(model, exe, map_new("/big", 777 * K, 64 * K, 0), 0.5);
	exe_add_map(model, exe, map_new("/lib", 0, 300 * K, 0), 1.0);
	exe_add_map(model, exe, map_new("/big", 0, 64 * K, 0), 0.5);
	exe_add_map(model, exe, map_new("/small", 0, 4 * K, 0), 1.0);
	exe_add_map(model, exe, map_new("/big", 456 * K, 64 * K, 0), 0.3);
	exe_add_map(model, exe, map_new("/lib", 1024 * K, 4 * K, 0), 0.2);
	exe_add_map(model, exe, map_new("/big", 160 * K, 40 * K, 0), 0.5);
	exe_add_map(model, exe, map_new("/stale", 0, 1024 * K, 0), 1.0);
	g_array_index(exe->exemaps, ExeMap, 9).map->learn.stale = TRUE;

	reqs = launch_fetch_requests(exe, G_MAXUINT64, LAUNCH_MIN_FILE_BYTES);
	ck_assert_uint_eq(reqs->len, G_N_ELEMENTS(want));
	for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
		const OrderRequest *r = &g_array_index(reqs, OrderRequest, i);

		ck_assert_str_eq(r->path, want[i].path);
		ck_assert_uint_eq(r->offset, want[i].offset);
		ck_assert_uint_eq(r->length, want[i].length);
	}

	/* The cap cuts the merged ranges: 300K of /lib, then 100K of /big. */
	cut = launch_fetch_requests(exe, 400 * K, LAUNCH_MIN_FILE_BYTES);
	ck_assert_uint_eq(cut->len, 2);
	ck_assert_str_eq(g_array_index(cut, OrderRequest, 1).path, "/big");
	ck_assert_uint_eq(g_array_index(cut, OrderRequest, 1).offset, 0);
	ck_assert_uint_eq(g_array_index(cut, OrderRequest, 1).length, 100 * K);
}
END_TEST

typedef struct Hooked {
	gint64 now;
	GArray *holds;        /* gint64 until_us */
	guint measured;
	guint64 measured_seq;
	guint64 resident;     /* what fake_measure reports resident of its 100 bytes */
	GPtrArray *fetched;   /* exe paths of the batches taken */
	guint64 fetched_bytes;
	gboolean refuse;      /* the reader takes no batch */
	gboolean later;       /* fake_measure measures away: hits through launch_measured() */
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

static gboolean
fake_measure(gpointer data, const Exe *exe, guint64 prefetch_seq, LaunchHits *hits)
{
	Hooked *h = data;

	(void)exe;
	h->measured++;
	h->measured_seq = prefetch_seq;
	if (h->later)
		return FALSE;
	hits->bytes = 100;
	hits->prefetched = 40;
	hits->probed = 90;
	hits->resident = h->resident;
	return TRUE;
}

static gboolean
fake_fetch(gpointer data, const Exe *exe, GArray *requests)
{
	Hooked *h = data;

	for (guint i = 0; i < requests->len; i++)
		h->fetched_bytes += g_array_index(requests, OrderRequest, i).length;
	g_array_unref(requests);
	if (h->refuse)
		return FALSE;
	g_ptr_array_add(h->fetched, exe->path);
	return TRUE;
}

/*
 * Three starts of a (last seen at model time 0, model time 100, last
 * prefetch 7) and one of an unknown exe:
 *   1 us 1 000 000: held for the start-up window, until 6 000 000, at
 *     once, and measured against prefetch 7 (60 of 100 resident: kept);
 *   2 us 2 000 000: held until 7 000 000, not measured (same cycle);
 *   3 us 21 000 000, a seen at 90 meanwhile: not held, measured again;
 *   unknown: nothing at all, the model stays clean.
 * Every start counts: 3 starts, 2 checks, twice the figures. Then the
 * pace of the measurements of repeated starts (LAUNCH_REPEAT_MEASURE).
 */
START_TEST(test_exec)
{
	g_autoptr(Conf) conf = test_conf();
	g_autoptr(Model) model = model_new();
	Hooked h = { 0 };
	const LaunchHooks hooks = { fake_now, fake_hold, fake_measure, NULL, &h };
	g_autoptr(Launch) launch = launch_new(&hooks);
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);

	h.holds = g_array_new(FALSE, FALSE, sizeof(gint64));
	h.resident = 60;
	model_add_exe(model, a, 0, FALSE);
	a->update_time = 0;
	model->time = 100;
	model->prefetch_seq = 7;
	model->dirty = FALSE;

	h.now = 1000000;
	ck_assert_ptr_eq(launch_exec(launch, model, conf, "/usr/bin/a"), a);
	ck_assert_uint_eq(h.holds->len, 1);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 0), 6000000);
	ck_assert_uint_eq(h.measured, 1);
	ck_assert_uint_eq(h.measured_seq, 7);
	ck_assert_int_eq(a->hits_checked_at, 1000000);
	ck_assert(model->dirty);

	h.now = 2000000;
	launch_exec(launch, model, conf, "/usr/bin/a");
	ck_assert_uint_eq(h.holds->len, 2);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 1), 7000000);
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

	/*
	 * 60 of 100 resident is not cached: the repeat at 41 s is measured a
	 * cycle later; 90 of 100 is (a tenth missing): the next repeats wait
	 * eight cycles, until 201 s.
	 */
	ck_assert(!a->hits_cached);
	h.resident = 90;
	h.now = 41000000;
	launch_exec(launch, model, conf, "/usr/bin/a");
	ck_assert_uint_eq(h.measured, 3);
	ck_assert(a->hits_cached);
	h.now = 200999999;
	launch_exec(launch, model, conf, "/usr/bin/a");
	ck_assert_uint_eq(h.measured, 3);
	h.now = 201000000;
	launch_exec(launch, model, conf, "/usr/bin/a");
	ck_assert_uint_eq(h.measured, 4);
	g_array_unref(h.holds);
}
END_TEST

/*
 * The fetch through launch_exec(), cycle 20 s. Each program uses one
 * 512 KiB map; fake_measure reports 100 bytes learned, h.resident of
 * them resident.
 *   - a compiler (cc) started 1,000 times, 1 ms apart from 1 s on, not
 *     cached: one batch (the first start), the others not measured;
 *   - its set cached (resident 95, 5 % missing) a cycle later: measured,
 *     no batch, and its start-up window's hold ended at execpause's end:
 *     a set cached enough for no batch needs no hold either;
 *   - eight other programs p0..p7 started at once at 30 s, not cached:
 *     p0..p3 read (the burst; cc's batch at 1 s has long cleared), p4..p7
 *     held by the rate bound; p4 again at 31 s is not measured again (same
 *     cycle), so no batch either;
 *   - q at 31 s: the rate has a slot again, but the reader refuses it:
 *     counted refused, and the slot stays free for r at 31 s.
 */
START_TEST(test_exec_fetch)
{
	g_autoptr(Conf) conf = test_conf();
	g_autoptr(Model) model = model_new();
	Hooked h = { 0 };
	const LaunchHooks hooks = { fake_now, fake_hold, fake_measure, fake_fetch, &h };
	g_autoptr(Launch) launch = launch_new(&hooks);
	const char *const names[] = { "/usr/bin/cc", "/usr/bin/p0", "/usr/bin/p1", "/usr/bin/p2",
				      "/usr/bin/p3", "/usr/bin/p4", "/usr/bin/p5", "/usr/bin/p6",
				      "/usr/bin/p7", "/usr/bin/q", "/usr/bin/r" };
	const LaunchStats *st = launch_get_stats(launch);

	h.holds = g_array_new(FALSE, FALSE, sizeof(gint64));
	h.fetched = g_ptr_array_new();
	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		Exe *exe = exe_new(names[i], FALSE, 0);

		model_add_exe(model, exe, 0, FALSE);
		exe_add_map(model, exe, map_new(names[i], 0, 512 * 1024, 0), 1.0);
	}
	model->time = 100;

	h.resident = 0;
	for (guint i = 0; i < 1000; i++) {
		h.now = 1000000 + (gint64)i * 1000;
		ck_assert_ptr_nonnull(launch_exec(launch, model, conf, "/usr/bin/cc"));
	}
	ck_assert_uint_eq(h.measured, 1);
	ck_assert_uint_eq(h.fetched->len, 1);
	ck_assert_str_eq(g_ptr_array_index(h.fetched, 0), "/usr/bin/cc");
	ck_assert_uint_eq(h.fetched_bytes, 512 * 1024);
	/*
	 * Each start (cc is never seen by a scan here, so each is a launch)
	 * holds for the start-up window (5 s) from its exec: the first until
	 * 6 s, each later one 1 ms further, the last until 6.999 s.
	 */
	ck_assert_uint_eq(h.holds->len, 1000);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 0), 6000000);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 999), 6999000);

	h.resident = 95;
	h.now = 21000000;
	launch_exec(launch, model, conf, "/usr/bin/cc");
	ck_assert_uint_eq(h.measured, 2);
	ck_assert_uint_eq(h.fetched->len, 1);
	ck_assert_uint_eq(st->cached, 1);
	/*
	 * Cached enough for no batch: the hold until 26 s (21 + 5) ends at
	 * execpause's end, 22 s (21 + 1).
	 */
	ck_assert_uint_eq(h.holds->len, 1002);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 1000), 26000000);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 1001), 22000000);
	ck_assert_uint_eq(st->hold_released, 1);

	h.resident = 0;
	h.now = 30000000;
	for (guint i = 1; i <= 8; i++)
		launch_exec(launch, model, conf, names[i]);
	ck_assert_uint_eq(h.fetched->len, 5);
	for (guint i = 1; i <= 4; i++)
		ck_assert_str_eq(g_ptr_array_index(h.fetched, i), names[i]);
	ck_assert_uint_eq(st->limited, 4);

	h.now = 31000000;
	launch_exec(launch, model, conf, "/usr/bin/p4");
	ck_assert_uint_eq(h.fetched->len, 5);
	ck_assert_uint_eq(st->limited, 4);

	h.refuse = TRUE;
	launch_exec(launch, model, conf, "/usr/bin/q");
	ck_assert_uint_eq(st->refused, 1);
	h.refuse = FALSE;
	launch_exec(launch, model, conf, "/usr/bin/r");
	ck_assert_uint_eq(h.fetched->len, 6);
	ck_assert_str_eq(g_ptr_array_index(h.fetched, 5), "/usr/bin/r");

	ck_assert_uint_eq(st->fetches, 6);
	ck_assert_uint_eq(st->fetch_bytes, 6 * 512 * 1024);
	ck_assert_uint_eq(st->cached, 1);
	launch_fetch_done(launch, 3000);
	launch_fetch_done(launch, 1000);
	ck_assert_uint_eq(st->done, 2);
	ck_assert_uint_eq(st->read_bytes, 4000);

	/* All of it cached: the program needs no disk, the background is not held. */
	h.resident = 100;
	h.now = 41000000;
	launch_exec(launch, model, conf, "/usr/bin/cc");
	ck_assert_uint_eq(st->cached, 2);
	/*
	 * 1,002 holds at 21 s; at 30 s p0..p7 hold until 35 s, one change;
	 * at 31 s p4, q and r until 36 s, one more; now cc's start-up hold
	 * until 46 s, ended at execpause's end (42 s) by the probe.
	 */
	ck_assert_uint_eq(h.holds->len, 1006);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 1002), 35000000);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 1003), 36000000);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 1004), 46000000);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 1005), 42000000);
	ck_assert_uint_eq(st->holds, 1013);
	ck_assert_uint_eq(st->hold_released, 2);
	ck_assert_uint_eq(st->hold_capped, 0);

	/* Off: a start not cached gets nothing and counts nowhere. */
	conf->launchfetchkb = 0;
	h.now = 60000000;
	launch_exec(launch, model, conf, "/usr/bin/p7");
	ck_assert_uint_eq(h.fetched->len, 6);
	ck_assert_uint_eq(st->fetches + st->cached + st->limited + st->refused, 13);

	g_ptr_array_unref(h.fetched);
	g_array_unref(h.holds);
}
END_TEST

/*
 * A start not cached whose set is only small files (two of 100 KiB, in
 * all under LAUNCH_MIN_FILE_BYTES each): nothing is read, the start counts
 * as small, the background still waits for the start-up window, and the
 * rate bound keeps its slot: four more starts of large sets at once all
 * get their batch (their holds end with a's: nothing changes).
 * A program restarted in a loop gets its batch and no hold.
 */
START_TEST(test_exec_small)
{
	g_autoptr(Conf) conf = test_conf();
	g_autoptr(Model) model = model_new();
	Hooked h = { 0 };
	const LaunchHooks hooks = { fake_now, fake_hold, fake_measure, fake_fetch, &h };
	g_autoptr(Launch) launch = launch_new(&hooks);
	const LaunchStats *st = launch_get_stats(launch);
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);

	h.holds = g_array_new(FALSE, FALSE, sizeof(gint64));
	h.fetched = g_ptr_array_new();
	model_add_exe(model, a, 0, FALSE);
	exe_add_map(model, a, map_new("/usr/lib/a1.pm", 0, 100 * 1024, 0), 1.0);
	exe_add_map(model, a, map_new("/usr/lib/a2.pm", 0, 100 * 1024, 0), 1.0);
	for (guint i = 0; i < 4; i++) {
		g_autofree char *name = g_strdup_printf("/usr/bin/b%u", i);
		Exe *b = exe_new(name, FALSE, 0);

		model_add_exe(model, b, 0, FALSE);
		exe_add_map(model, b, map_new(name, 0, 512 * 1024, 0), 1.0);
	}
	model->time = 100;

	h.now = 1000000;
	launch_exec(launch, model, conf, "/usr/bin/a");
	ck_assert_uint_eq(h.fetched->len, 0);
	ck_assert_uint_eq(st->small, 1);
	ck_assert_uint_eq(st->fetches, 0);
	ck_assert_uint_eq(h.holds->len, 1);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 0), 6000000);

	for (guint i = 0; i < 4; i++) {
		g_autofree char *name = g_strdup_printf("/usr/bin/b%u", i);

		launch_exec(launch, model, conf, name);
	}
	ck_assert_uint_eq(h.fetched->len, 4);
	ck_assert_uint_eq(st->limited, 0);
	ck_assert_uint_eq(h.holds->len, 1);

	/*
	 * b0 restarted in a loop (seen running at model time 99): its batch
	 * a cycle later, at 30 s, but no hold at all, or the loop would keep
	 * the prediction back for good.
	 */
	model_lookup_exe(model, "/usr/bin/b0")->update_time = 99;
	h.now = 30000000;
	launch_exec(launch, model, conf, "/usr/bin/b0");
	ck_assert_uint_eq(h.fetched->len, 5);
	ck_assert_uint_eq(h.holds->len, 1);
	ck_assert_uint_eq(st->holds, 5);
	g_ptr_array_unref(h.fetched);
	g_array_unref(h.holds);
}
END_TEST

/*
 * A measurement made away from launch_exec() (on a worker): the start
 * counts at once, the hits only when launch_measured() brings them. A
 * second start while it runs (same cycle) is not measured again. The
 * hits (100 bytes, none resident) call for a batch then. Hits for an exe
 * the model forgot meanwhile change nothing.
 */
START_TEST(test_measured_later)
{
	g_autoptr(Conf) conf = test_conf();
	g_autoptr(Model) model = model_new();
	Hooked h = { .later = TRUE };
	const LaunchHooks hooks = { fake_now, fake_hold, fake_measure, fake_fetch, &h };
	g_autoptr(Launch) launch = launch_new(&hooks);
	const LaunchHits hits = { .bytes = 100, .prefetched = 0, .probed = 100, .resident = 0 };
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);

	h.holds = g_array_new(FALSE, FALSE, sizeof(gint64));
	h.fetched = g_ptr_array_new();
	model_add_exe(model, a, 0, FALSE);
	exe_add_map(model, a, map_new("/usr/lib/liba.so", 0, 512 * 1024, 0), 1.0);
	model->time = 100;

	h.now = 1000000;
	ck_assert_ptr_eq(launch_exec(launch, model, conf, "/usr/bin/a"), a);
	ck_assert_uint_eq(h.measured, 1);
	ck_assert_uint_eq(a->hits.starts, 1);
	ck_assert_uint_eq(a->hits.checks, 0);
	ck_assert_uint_eq(h.fetched->len, 0);
	h.now = 1500000;
	launch_exec(launch, model, conf, "/usr/bin/a");
	ck_assert_uint_eq(h.measured, 1);

	h.now = 2000000;
	model->dirty = FALSE;
	launch_measured(launch, model, conf, "/usr/bin/a", &hits);
	ck_assert_uint_eq(a->hits.starts, 2);
	ck_assert_uint_eq(a->hits.checks, 1);
	ck_assert_uint_eq(a->hits.bytes, 100);
	ck_assert_uint_eq(a->hits.probed, 100);
	ck_assert_uint_eq(a->hits.resident, 0);
	ck_assert_uint_eq(h.fetched->len, 1);
	ck_assert_str_eq(g_ptr_array_index(h.fetched, 0), "/usr/bin/a");
	ck_assert_uint_eq(launch_get_stats(launch)->fetches, 1);
	ck_assert(model->dirty);

	model->dirty = FALSE;
	launch_measured(launch, model, conf, "/usr/bin/gone", &hits);
	ck_assert_uint_eq(h.fetched->len, 1);
	ck_assert(!model->dirty);
	g_array_unref(h.holds);
	g_ptr_array_unref(h.fetched);
}
END_TEST

/*
 * The hold at the exec itself, its probe measured later on a worker
 * (fake_measure returns FALSE), cycle 20 s, start-up window 5 s:
 *   a at 1 s: held until 6 s at once, before any probe result;
 *   b at 1.2 s: the hold extends to 6.2 s;
 *   a's probe at 1.5 s finds its set cached: a's own hold ends at its
 *     execpause (2 s), but b's still holds until 6.2 s: no change;
 *   b's probe at 1.6 s finds it cached: the hold ends at 2.2 s;
 *   c at 3 s: until 8 s, its probe (nothing resident) keeps it;
 *   c restarted in a loop (seen running at model time 99) at 4 s, and an
 *     unknown program: no hold.
 */
START_TEST(test_hold_at_exec)
{
	g_autoptr(Conf) conf = test_conf();
	g_autoptr(Model) model = model_new();
	Hooked h = { .later = TRUE };
	const LaunchHooks hooks = { fake_now, fake_hold, fake_measure, fake_fetch, &h };
	g_autoptr(Launch) launch = launch_new(&hooks);
	const LaunchStats *st = launch_get_stats(launch);
	const LaunchHits cached = { .bytes = 100, .probed = 100, .resident = 100 };
	const LaunchHits cold = { .bytes = 100, .probed = 100, .resident = 0 };
	const char *const names[] = { "/usr/bin/a", "/usr/bin/b", "/usr/bin/c" };

	h.holds = g_array_new(FALSE, FALSE, sizeof(gint64));
	h.fetched = g_ptr_array_new();
	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		Exe *exe = exe_new(names[i], FALSE, 0);

		model_add_exe(model, exe, 0, FALSE);
		exe_add_map(model, exe, map_new(names[i], 0, 512 * 1024, 0), 1.0);
	}
	model->time = 100;

	h.now = 1000000;
	launch_exec(launch, model, conf, "/usr/bin/a");
	ck_assert_uint_eq(h.measured, 1);
	ck_assert_uint_eq(h.holds->len, 1);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 0), 6000000);

	h.now = 1200000;
	launch_exec(launch, model, conf, "/usr/bin/b");
	ck_assert_uint_eq(h.holds->len, 2);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 1), 6200000);

	h.now = 1500000;
	launch_measured(launch, model, conf, "/usr/bin/a", &cached);
	ck_assert_uint_eq(h.holds->len, 2);
	ck_assert_uint_eq(st->hold_released, 1);

	h.now = 1600000;
	launch_measured(launch, model, conf, "/usr/bin/b", &cached);
	ck_assert_uint_eq(h.holds->len, 3);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 2), 2200000);
	ck_assert_uint_eq(st->hold_released, 2);
	ck_assert_uint_eq(h.fetched->len, 0);

	h.now = 3000000;
	launch_exec(launch, model, conf, "/usr/bin/c");
	launch_measured(launch, model, conf, "/usr/bin/c", &cold);
	ck_assert_uint_eq(h.fetched->len, 1);
	ck_assert_uint_eq(h.holds->len, 4);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 3), 8000000);
	ck_assert_uint_eq(st->hold_released, 2);

	model_lookup_exe(model, "/usr/bin/c")->update_time = 99;
	h.now = 4000000;
	launch_exec(launch, model, conf, "/usr/bin/c");
	ck_assert_ptr_null(launch_exec(launch, model, conf, "/usr/bin/unknown"));
	ck_assert_uint_eq(h.holds->len, 4);
	ck_assert_uint_eq(st->holds, 3);
	ck_assert_uint_eq(st->hold_capped, 0);
	g_array_unref(h.holds);
	g_ptr_array_unref(h.fetched);
}
END_TEST

/*
 * The budget: 30 s of held time at a stretch, then 1 us back per 2 us.
 * Full at first: 5 s, then 25 s of 30 asked, then nothing; 2 s later 1 s
 * is back; 2 s given back (a hold ended early) are granted again.
 */
START_TEST(test_hold_budget)
{
	LaunchBudget b = { 0 };

	ck_assert_int_eq(launch_budget_take(&b, 5000000, 1000000), 5000000);
	ck_assert_int_eq(launch_budget_take(&b, 30000000, 1000000), 25000000);
	ck_assert_int_eq(launch_budget_take(&b, 1, 1000000), 0);
	ck_assert_int_eq(launch_budget_take(&b, 5000000, 3000000), 1000000);
	launch_budget_give(&b, 2000000, 3000000);
	ck_assert_int_eq(launch_budget_take(&b, 5000000, 3000000), 2000000);
	ck_assert_int_eq(b.spent, 30000000);
	/* A minute later it is full again. */
	ck_assert_int_eq(launch_budget_take(&b, 40000000, 63000000), 30000000);
}
END_TEST

/*
 * A flood of launches, none measured: 61 programs, one a second from 10 s
 * on, each asking for its start-up window (5 s). The first holds 5 s,
 * each later one 1 s more while 0.5 s comes back: the budget is spent by
 * the 51st (at 60 s, held until 65 s). From then each gets 0.5 s: the
 * hold ends at 65.5 s, 66 s, ... and falls behind the launches, so the
 * background reads half of each second: at 70 s the hold has ended and
 * the 61st holds from 70 s to 70.5 s. Ten holds were cut short.
 */
START_TEST(test_hold_flood)
{
	g_autoptr(Conf) conf = test_conf();
	g_autoptr(Model) model = model_new();
	Hooked h = { .later = TRUE };
	const LaunchHooks hooks = { fake_now, fake_hold, fake_measure, NULL, &h };
	g_autoptr(Launch) launch = launch_new(&hooks);
	const LaunchStats *st = launch_get_stats(launch);

	h.holds = g_array_new(FALSE, FALSE, sizeof(gint64));
	for (guint i = 0; i <= 60; i++) {
		g_autofree char *name = g_strdup_printf("/usr/bin/f%u", i);

		model_add_exe(model, exe_new(name, FALSE, 0), 0, FALSE);
	}
	model->time = 100;
	for (guint i = 0; i <= 60; i++) {
		g_autofree char *name = g_strdup_printf("/usr/bin/f%u", i);

		h.now = 10000000 + (gint64)i * 1000000;
		ck_assert_ptr_nonnull(launch_exec(launch, model, conf, name));
	}
	ck_assert_uint_eq(h.holds->len, 61);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 0), 15000000);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 1), 16000000);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 50), 65000000);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 51), 65500000);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 59), 69500000);
	ck_assert_int_eq(g_array_index(h.holds, gint64, 60), 70500000);
	ck_assert_uint_eq(st->holds, 61);
	ck_assert_uint_eq(st->hold_capped, 10);
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
	tcase_add_test(tc, test_hits_cached);
	tcase_add_test(tc, test_fetch_decide);
	tcase_add_test(tc, test_fetch_requests);
	tcase_add_test(tc, test_fetch_merged);
	tcase_add_test(tc, test_exec_fetch);
	tcase_add_test(tc, test_exec_small);
	tcase_add_test(tc, test_measured_later);
	tcase_add_test(tc, test_hold_at_exec);
	tcase_add_test(tc, test_hold_budget);
	tcase_add_test(tc, test_hold_flood);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(launch_suite());
}
