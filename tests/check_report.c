/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/report.c: the SIGUSR1 dump, the control verbs' answers
 * and the explanations, from a small model built by hand. Every expected
 * line below was written out by hand from the figures of make_model()
 * and make_sources().
 */
#include "config.h"

#include "testutil.h"
#include "report.h"

#include <math.h>
#include <string.h>

#define KB G_GUINT64_CONSTANT(1024)

typedef struct Fixture {
	Model *model;
	Conf *conf;
	ProcMemstat mem;
	ReadaheadStats ra;
	LaunchStats launch;
	ReportHitLog *log;
	ReportSources src;
} Fixture;

static const char *const stage_names[] = { "scan", "learn" };
static const gint64 stage_us[] = { 1500, 2500 };

static Exe *
add_exe(Model *model, const char *path, double probability)
{
	Exe *exe = exe_new(path, FALSE, 0);

	model_add_exe(model, exe, 0, FALSE);
	exe->lnprob = log1p(-probability);
	return exe;
}

static Map *
add_map(Model *model, Exe *exe, const char *path, guint64 length, double probability)
{
	Map *map = map_new(path, 0, length, 0);

	exe_add_map(model, exe, map, 1.0);
	map = model_lookup_map(model, path, 0, length);
	map->prophet.lnprob = log1p(-probability);
	map->prophet.score_stamp = model->score_stamp;
	g_ptr_array_add(model->candidates, map);
	return map;
}

/*
 * alpha: probability 0.5, one 8 KB map at 0.5; started 3 times, 2
 *        measured: 4096 KB of which 1024 prefetched, 2048 probed of which
 *        1536 resident (75.0%, 25.0%)
 * beta:  probability 0.25, one 1024 KB map at 0.25; started 5 times
 * gamma: runs (probability 0.9 left from before it started)
 * delta: no bid
 * /usr/bin/tiny: too small (10 KB)
 */
static void
make_model(Fixture *f)
{
	Model *model = f->model = model_new();
	Exe *alpha, *beta, *gamma;

	model->time = 100;
	model->last_running_timestamp = 90;
	model->score_stamp = 1;
	alpha = add_exe(model, "/usr/bin/alpha", 0.5);
	add_map(model, alpha, "/usr/lib/liba.so", 8192, 0.5);
	alpha->hits = (ExeHits){ 3, 2, 4096 * KB, 1024 * KB, 2048 * KB, 1536 * KB };
	beta = add_exe(model, "/usr/bin/beta", 0.25);
	add_map(model, beta, "/usr/lib/libb.so", 1024 * KB, 0.25);
	beta->hits.starts = 5;
	gamma = add_exe(model, "/usr/bin/gamma", 0.9);
	gamma->running_timestamp = 90;
	g_ptr_array_add(model->running, gamma);
	add_exe(model, "/usr/bin/delta", 0.0);
	model_add_bad_exe(model, "/usr/bin/tiny", 10 * KB, 50);
}

static void
make_sources(Fixture *f)
{
	f->launch = (LaunchStats){ .fetches = 3, .cached = 5, .small = 6, .limited = 1, .refused = 4,
				   .fetch_bytes = 6144 * KB, .done = 2, .read_bytes = 2048 * KB };
	f->conf = conf_new();
	f->conf->maxpressure = 0;
	f->mem = (ProcMemstat){ .total = 1000000, .free = 200000, .cached = 300000,
				.available = 500000 };
	f->ra = (ReadaheadStats){ .requests = 2, .files = 1, .skipped = 1, .bytes = 8192,
				  .syscalls = 1, .resident_bytes = 4096, .resident_ranges = 1,
				  .trusted_ranges = 1, .unopened_ranges = 1 };
	f->log = report_hit_log_new();
	f->src = (ReportSources){
		.model = f->model, .conf = f->conf, .cycles = 7, .mem = &f->mem,
		.pause = PROPHET_PREFETCH, .idle_class = TRUE, .budget_kb = 512,
		.selected_maps = 1, .selected_kb = 8, .readahead = &f->ra,
		.watch_text = "learnreads and learnexec are off",
		.n_stages = 2, .stage_names = stage_names, .stage_us = stage_us,
		.cpu_us = 10000, .readahead_cpu_us = 3250, .batches = 4, .read_bytes = 40960, .read_calls = 9,
		.hit_log = f->log,
		.launch = &f->launch,
	};
}

static Fixture fx;

static void
setup(void)
{
	make_model(&fx);
	make_sources(&fx);
}

static void
teardown(void)
{
	model_free(fx.model);
	conf_free(fx.conf);
	report_hit_log_free(fx.log);
	memset(&fx, 0, sizeof(fx));
}

START_TEST(test_dump_lines)
{
	static const char *const expected[] = {
		"SIGUSR1: state dump",
		"model: time 100 s, 4 exes (1 running), 2 maps, 0 chains, 1 too small; 7 cycles since start",
		"memory: total 1000000 KB, free 200000 KB, cached 300000 KB, available 500000 KB",
		"memory pressure: not read",
		"prefetching: active, idle I/O class",
		"last prediction: budget 512 KB, selected 1 maps, 8 KB",
		"last readahead: 2 requests in 1 files, 8 KB requested in 1 calls, 4 KB already cached "
		"(1 ranges whole, 1 of them spot-checked, 1 not even opened), 0 failed, 1 skipped",
		"top predicted executables (2 with a non-zero probability):",
		"  0.5000  /usr/bin/alpha",
		"  0.2500  /usr/bin/beta",
		"mount namespaces: 3 processes in other namespaces (2 mount tables) at the last scan; "
		"40 paths translated, 17 dropped since start (not-on-host 10, outside-mounts 1, "
		"device-mismatch 2, unreadable-namespace 4)",
		"identity: last readahead skipped 5 ranges whose path names another file than the one "
		"learned; fanotify events of files on other namespaces' mounts: 0 used by their path "
		"here, 0 not used (no path here)",
		"cpu: 10.0 ms in 7 cycles since start (scan 1.5, learn 2.5, other 6.0 ms); "
		"4 readahead batches, 40 KB requested in 9 calls",
		"watch: off (learnreads and learnexec are off); starts are counted by the scan",
		"launch readahead: 3 batches for starts not cached (6144 KB of learned sets, 2 over: "
		"2048 KB requested), 5 starts cached enough, 6 of small files only (left to the "
		"program), 1 held by the rate bound, 4 refused by the reader",
		"hits: 8 starts of known executables, 2 measured: 75.0% of 2048 KB resident at the start, "
		"25.0% of 4096 KB in the last prefetch",
		"most started executables (starts, measured, resident%, prefetched%):",
		"       5      0    0.0%    0.0%  /usr/bin/beta",
		"       3      2   75.0%   25.0%  /usr/bin/alpha",
		"model caps: 2048 exes, 2048 maps per exe, 65536 maps, 65536 chains; evicted 0 exes "
		"and 0 chains, refused 0 exes and 0 map uses",
		"readahead deadline: 3 batches abandoned after 10 s without progress, 1 of their "
		"threads still blocked (at most 4: 2 batches refused)",
		"readahead threads: 3.2 ms of CPU since start, the batches' and their workers' (part "
		"of the cpu line's \"other\")",
		"file-system jobs: 7 done, 2 abandoned after 2000 ms, 1 of their threads still "
		"blocked (at most 8), 1 expired in the queue; refused: 4 on a device that missed a "
		"deadline, 5 at the thread cap, 6 queue full; 1 devices refused now; 12.3 ms of CPU "
		"in the jobs (part of the cpu line's \"other\")",
	};
	const FsJobStats jobs = { .submitted = 10, .done = 7, .expired = 1, .abandoned = 2,
				  .refused_device = 4, .refused_stuck = 5, .refused_full = 6,
				  .stuck = 1, .devices_refused = 1, .cpu_us = 12345 };
	MountNsStats ns = { .processes = 3, .namespaces = 2, .translated = 40,
			    .dropped = { 10, 1, 2, 4 } };
	g_autoptr(ReportSnapshot) snap = NULL;
	g_autoptr(GPtrArray) lines = NULL;
	g_autofree char *conf_line = NULL, *conf_text = conf_dump(fx.conf);

	fx.src.mountns = &ns;
	fx.src.read_abandoned = 3;
	fx.src.read_stuck = 1;
	fx.src.read_refused = 2;
	fx.src.fsjobs = &jobs;
	fx.ra.other_file = 5;
	snap = report_snapshot_new(&fx.src, 0);
	lines = report_dump_lines(snap);

	ck_assert_uint_eq(lines->len, G_N_ELEMENTS(expected) + 1);
	for (guint i = 0; i < G_N_ELEMENTS(expected); i++)
		ck_assert_str_eq(lines->pdata[i], expected[i]);
	conf_line = g_strconcat("configuration:\n", conf_text, NULL);
	ck_assert_str_eq(lines->pdata[lines->len - 1], conf_line);
	ck_assert(g_str_has_prefix(conf_line, "configuration:\n[model]\ncycle = 20\n"));
}
END_TEST

/* Paused, pressure read, a watcher, a superseded batch: the other branches of the dump. */
START_TEST(test_dump_paused)
{
	ProcPressure pressure = { 1234 };
	WatchStats ws = { .events = 10, .starts = 4, .windows = 3, .recorded = 20, .learned = 2,
			  .untaught = 5, .cpu_desc_us = 1500, .cpu_fid_us = 250, .cpu_window_us = 12345,
			  .wakeups = 77, .exec_names_reused = 66, .handle_names_reused = 1,
			  .overflows = 1, .foreign = 6, .translated = 9, .fid_events = 3,
			  .handles = 2, .unknown_records = 1 };
	g_autoptr(ReportSnapshot) snap = NULL;
	g_autoptr(GPtrArray) lines = NULL;

	fx.conf->maxpressure = 10;
	fx.src.pressure = &pressure;
	fx.src.pause = PROPHET_PAUSE_PRESSURE;
	fx.src.watch = &ws;
	fx.src.watch_text = "fanotify on 1 file system";
	fx.ra.superseded = TRUE;
	snap = report_snapshot_new(&fx.src, 0);
	lines = report_dump_lines(snap);
	ck_assert_str_eq(lines->pdata[3], "memory pressure: some avg10 12.34%");
	ck_assert_str_eq(lines->pdata[4],
			 "prefetching: paused, memory pressure (PSI some avg10) is above 10%");
	ck_assert_str_eq(lines->pdata[6],
			 "last readahead: 2 requests in 1 files, 8 KB requested in 1 calls, 4 KB "
			 "already cached (1 ranges whole, 1 of them spot-checked, 1 not even opened), 0 failed, 1 skipped; "
			 "superseded by a newer prediction");
	ck_assert_str_eq(lines->pdata[11],
			 "identity: last readahead skipped 0 ranges whose path names another file than "
			 "the one learned; fanotify events of files on other namespaces' mounts: 9 used "
			 "by their path here, 6 not used (no path here)");
	ck_assert_str_eq(lines->pdata[13],
			 "watch: fanotify on 1 file system; 10 events, 4 starts, 3 start-up windows, "
			 "20 opens recorded, 2 read sets learned, 5 windows that taught nothing, 1 queue "
			 "overflows; of the events, 7 "
			 "by descriptor and 3 by file handle (2 handles resolved, 1 unknown info "
			 "records skipped)");
	ck_assert_str_eq(lines->pdata[14],
			 "watch cpu: 1.5 ms on exec events and opens by descriptor, 0.2 ms on opens "
			 "by file handle, 12.3 ms ending windows; 77 wake-ups; 66 exec events of files "
			 "named lately, 1 opens by handle named lately");
}
END_TEST

/* On battery the active line says the budget is scaled (batterybudget). */
START_TEST(test_dump_battery)
{
	g_autoptr(ReportSnapshot) snap = NULL;
	g_autoptr(GPtrArray) lines = NULL;

	fx.src.on_battery = TRUE;
	snap = report_snapshot_new(&fx.src, 0);
	lines = report_dump_lines(snap);
	ck_assert_str_eq(lines->pdata[4], "prefetching: active, idle I/O class, on battery: budget "
			 "scaled by batterybudget");
}
END_TEST

/* A literal snapshot, as a test of a renderer alone would build it. */
START_TEST(test_top_literal)
{
	static const ReportExe top[] = {
		{ "/usr/bin/alpha", 0.5, 8192, 1 },
		{ "/usr/bin/b\tx\xff", 0.25, 1048576, 3 },
	};
	ReportSnapshot snap = { .predicted = 2, .top = top, .n_top = 2 };
	g_autofree char *text = report_top_text(&snap, 5, FALSE);
	g_autofree char *json = report_top_text(&snap, 1, TRUE);

	ck_assert_str_eq(text,
			 "2 programs with a non-zero probability; the 2 most likely:\n"
			 "probability     maps         KB  program\n"
			 "     0.5000        1          8  /usr/bin/alpha\n"
			 "     0.2500        3       1024  /usr/bin/b\\x09x\\xff\n");
	ck_assert_str_eq(json, "{\"predicted\":2,\"top\":[{\"path\":\"/usr/bin/alpha\","
			 "\"probability\":0.500000,\"maps\":1,\"bytes\":8192}]}\n");
}
END_TEST

START_TEST(test_status_text)
{
	ExeHits then = { 2, 1, 1024 * KB, 0, 1024 * KB, 512 * KB }, now;
	g_autoptr(ReportSnapshot) snap = NULL;
	g_autofree char *text = NULL;

	report_total_hits(fx.model, &now);
	ck_assert_uint_eq(now.starts, 8);
	report_hit_log_add(fx.log, 0, &then);
	report_hit_log_add(fx.log, (gint64)30 * 60 * G_USEC_PER_SEC, &now);
	snap = report_snapshot_new(&fx.src, 0);
	snap->peak_rss_kb = 777;
	text = report_status_text(snap, FALSE);
	ck_assert_str_eq(text,
			 "prefetching: active, idle I/O class\n"
			 "model: 4 programs (1 running), 2 maps, 0 chains, 1 too small; "
			 "model time 100 s, 7 cycles since start\n"
			 "memory: budget 512 KB, last prediction selected 1 maps, 8 KB; "
			 "available 500000 of 1000000 KB\n"
			 "last prefetch: 1 files, 8 KB read, 4 KB already cached, 0 failed\n"
			 "hits since the state began: 8 starts, 2 measured: 75.0% resident at the "
			 "start, 25.0% in the last prefetch\n"
			 "hits in the last 30 min: 6 starts, 1 measured: 100.0% resident at the "
			 "start, 33.3% in the last prefetch\n"
			 "watch: off (learnreads and learnexec are off)\n"
			 "launch readahead: 3 batches, 2048 KB requested, 5 starts cached, "
			 "1 rate-limited\n"
			 "daemon: 10.0 ms CPU since start, peak RSS 777 KB\n");
}
END_TEST

/* The JSON status carries the deadline counters the text dump has. */
START_TEST(test_status_json_deadlines)
{
	g_autoptr(ReportSnapshot) snap = NULL;
	g_autofree char *json = NULL;

	snap = report_snapshot_new(&fx.src, 0);
	snap->read_abandoned = 3;
	snap->read_stuck = 1;
	snap->read_refused = 2;
	json = report_status_text(snap, TRUE);
	ck_assert_ptr_nonnull(strstr(json, "\"deadlines\":{\"readahead_abandoned\":3,"
				    "\"readahead_threads_blocked\":1,\"readahead_refused\":2,"
				    "\"fs_jobs\":null}"));
	g_clear_pointer(&json, g_free);
	snap->have_fsjobs = TRUE;
	snap->fsjobs.done = 9;
	snap->fsjobs.abandoned = 1;
	snap->fsjobs.stuck = 1;
	snap->fsjobs.refused_device = 4;
	snap->fsjobs.devices_refused = 1;
	json = report_status_text(snap, TRUE);
	ck_assert_ptr_nonnull(strstr(json, "\"fs_jobs\":{\"done\":9,\"abandoned\":1,\"expired\":0,"
				    "\"threads_blocked\":1,\"refused_device\":4,"
				    "\"refused_at_thread_cap\":0,\"refused_queue_full\":0,"
				    "\"devices_refused\":1}}"));
	g_clear_pointer(&json, g_free);
	/* The opens by file handle and the starts left to the program, as the dump has them. */
	snap->watch.fid_events = 70;
	snap->watch.handles = 12;
	json = report_status_text(snap, TRUE);
	ck_assert_ptr_nonnull(strstr(json, "\"overflows\":0,\"events_by_handle\":70,"
				    "\"handles_resolved\":12}"));
	ck_assert_ptr_nonnull(strstr(json, "\"cached\":5,\"small_sets\":6,\"rate_limited\":1,"));
}
END_TEST

/* A span under a minute is given in seconds, not as "the last 0 min". */
START_TEST(test_status_text_first_minute)
{
	ExeHits then = { 0 }, now;
	g_autoptr(ReportSnapshot) snap = NULL;
	g_autofree char *text = NULL;

	report_total_hits(fx.model, &now);
	report_hit_log_add(fx.log, 0, &then);
	report_hit_log_add(fx.log, (gint64)45 * G_USEC_PER_SEC, &now);
	snap = report_snapshot_new(&fx.src, 0);
	text = report_status_text(snap, FALSE);
	ck_assert_ptr_nonnull(strstr(text, "\nhits in the last 45 s: 8 starts, 2 measured: "));
	ck_assert_ptr_null(strstr(text, "0 min"));
}
END_TEST

/* The hour keeps the newest sample at least an hour old as its baseline. */
START_TEST(test_hit_log_hour)
{
	ExeHits h = { 0 }, delta;
	gint64 span;

	ck_assert(!report_hit_log_delta(fx.log, &delta, &span));
	for (int minute = 0; minute <= 90; minute += 10) {
		h.starts = (guint64)minute;
		report_hit_log_add(fx.log, (gint64)minute * 60 * G_USEC_PER_SEC, &h);
	}
	/* At 90 min the baseline is the sample at 30 min (60 min old), not 20. */
	ck_assert(report_hit_log_delta(fx.log, &delta, &span));
	ck_assert_uint_eq(delta.starts, 60);
	ck_assert_int_eq(span, (gint64)60 * 60 * G_USEC_PER_SEC);
}
END_TEST

START_TEST(test_hits_text)
{
	g_autoptr(ReportSnapshot) snap = report_snapshot_new(&fx.src, 0);
	g_autofree char *one = NULL, *all = NULL, *json = NULL, *err = NULL, *none = NULL;

	one = report_hits_text(snap, "alpha", FALSE, &err);
	ck_assert_str_eq(one, "  starts measured resident prefetched  program\n"
			 "       3        2     75.0%     25.0%  /usr/bin/alpha\n");
	all = report_hits_text(snap, NULL, FALSE, &err);
	ck_assert_str_eq(all, "total: 8 starts, 2 measured: 75.0% resident at the start, "
			 "25.0% in the last prefetch\n"
			 "  starts measured resident prefetched  program\n"
			 "       5        0      0.0%      0.0%  /usr/bin/beta\n"
			 "       3        2     75.0%     25.0%  /usr/bin/alpha\n");
	json = report_hits_text(snap, "/usr/bin/beta", TRUE, &err);
	ck_assert_str_eq(json, "{\"path\":\"/usr/bin/beta\",\"hits\":{\"starts\":5,\"measured\":0,"
			 "\"bytes\":0,\"prefetched_bytes\":0,\"probed_bytes\":0,\"resident_bytes\":0,"
			 "\"resident_ratio\":0.000000,\"prefetched_ratio\":0.000000}}\n");
	none = report_hits_text(snap, "gamma", FALSE, &err);
	ck_assert_ptr_null(none);
	ck_assert_str_eq(err, "no start of gamma was seen");
}
END_TEST

START_TEST(test_status_line)
{
	ExeHits total;
	g_autofree char *line = NULL, *paused = NULL;

	report_total_hits(fx.model, &total);
	line = report_status_line(&fx.src, &total);
	ck_assert_str_eq(line, "Prefetching; 4 programs, 2 maps; hits 75% resident, 25% prefetched");
	fx.src.pause = PROPHET_PAUSE_AVAILABLE;
	memset(&total, 0, sizeof(total));
	paused = report_status_line(&fx.src, &total);
	ck_assert_str_eq(paused, "Paused: MemAvailable is below 5% of MemTotal; 4 programs, "
			 "2 maps; no start measured yet");
}
END_TEST

static ReportReason
reason(const ReportExplain *ex, guint i)
{
	ck_assert_uint_gt(ex->findings->len, i);
	return g_array_index(ex->findings, ReportFinding, i).reason;
}

static const char *
finding_text(const ReportExplain *ex, guint i)
{
	ck_assert_uint_gt(ex->findings->len, i);
	return g_array_index(ex->findings, ReportFinding, i).text;
}

/* Budget 512 KB: alpha's 8 KB map (0.5) fits, beta's 1024 KB one (0.25) does not. */
START_TEST(test_explain_prefetched)
{
	g_autoptr(ReportExplain) ex = report_explain(&fx.src, "/usr/bin/alpha", FALSE, NULL);
	g_autofree char *text = NULL, *json = NULL;

	ck_assert_uint_eq(ex->findings->len, 1);
	ck_assert_int_eq(reason(ex, 0), REPORT_REASON_PREFETCHED);
	ck_assert_uint_eq(ex->maps_selected, 1);
	ck_assert(fabs(ex->line - 0.5) < 1e-12);
	text = report_explain_text(ex, FALSE);
	ck_assert_str_eq(text, "/usr/bin/alpha: prefetched\n"
			 "  prefetched  1 of its 1 maps (8 of 8 KB) are in the selection: "
			 "probability 0.5000, the line is 0.5000 (budget 512 KB, 8 KB used)\n");
	json = report_explain_text(ex, TRUE);
	ck_assert(g_str_has_prefix(json, "{\"program\":\"/usr/bin/alpha\",\"path\":\"/usr/bin/alpha\","
				   "\"learned\":true,\"reason\":\"prefetched\",\"running\":false,"
				   "\"probability\":0.500000,\"line\":0.500000,"));
}
END_TEST

START_TEST(test_explain_below_line)
{
	g_autoptr(ReportExplain) ex = report_explain(&fx.src, "beta", FALSE, NULL);

	ck_assert_str_eq(ex->path, "/usr/bin/beta");
	ck_assert_uint_eq(ex->findings->len, 1);
	ck_assert_int_eq(reason(ex, 0), REPORT_REASON_BELOW_LINE);
	ck_assert_str_eq(finding_text(ex, 0),
			 "below the budget line: probability 0.2500, its most likely map 0.250000, "
			 "the line is 0.500000 (budget 512 KB, 8 KB used; maps below 0.0001 are "
			 "never read)");
}
END_TEST

START_TEST(test_explain_paused_stale)
{
	g_autoptr(ReportExplain) ex = NULL;
	Map *map = model_lookup_map(fx.model, "/usr/lib/libb.so", 0, 1024 * KB);

	map->learn.stale = TRUE;
	fx.src.pause = PROPHET_PAUSE_AVAILABLE;
	fx.src.budget_kb = 4096;
	ex = report_explain(&fx.src, "/usr/bin/beta", FALSE, NULL);
	ck_assert_uint_eq(ex->findings->len, 3);
	ck_assert_int_eq(reason(ex, 0), REPORT_REASON_PAUSED);
	ck_assert_str_eq(finding_text(ex, 0),
			 "prefetching is paused: MemAvailable is below 5% of MemTotal");
	/* A stale map is never selected, whatever the budget. */
	ck_assert_int_eq(reason(ex, 1), REPORT_REASON_BELOW_LINE);
	ck_assert_int_eq(reason(ex, 2), REPORT_REASON_STALE);
	ck_assert_str_eq(finding_text(ex, 2),
			 "1 of its 1 maps are stale: their files are gone or were replaced");
}
END_TEST

START_TEST(test_explain_running_no_bid)
{
	g_autoptr(ReportExplain) running = report_explain(&fx.src, "/usr/bin/gamma", FALSE, NULL);
	g_autoptr(ReportExplain) nobid = report_explain(&fx.src, "/usr/bin/delta", FALSE, NULL);

	ck_assert_int_eq(reason(running, 0), REPORT_REASON_RUNNING);
	ck_assert(running->running);
	ck_assert_int_eq(reason(nobid, 0), REPORT_REASON_NO_BID);
}
END_TEST

START_TEST(test_explain_not_learned)
{
	g_autoptr(ReportExplain) opt = report_explain(&fx.src, "/home/u/bin/x", FALSE, NULL);
	g_autoptr(ReportExplain) tiny = report_explain(&fx.src, "/usr/bin/tiny", FALSE, NULL);
	g_autoptr(ReportExplain) unknown = report_explain(&fx.src, "/usr/bin/never", FALSE, NULL);
	g_autofree char *json = NULL;

	ck_assert(!opt->learned);
	ck_assert_uint_eq(opt->findings->len, 2);
	ck_assert_int_eq(reason(opt, 0), REPORT_REASON_NOT_LEARNED);
	ck_assert_int_eq(reason(opt, 1), REPORT_REASON_PREFIX);
	ck_assert_uint_eq(tiny->findings->len, 2);
	ck_assert_int_eq(reason(tiny, 1), REPORT_REASON_TOO_SMALL);
	ck_assert_str_eq(finding_text(tiny, 1),
			 "it was found too small to learn: 10 KB of maps, minsize is 1953 KB");
	ck_assert_uint_eq(unknown->findings->len, 1);
	json = report_explain_text(unknown, TRUE);
	ck_assert_str_eq(json, "{\"program\":\"/usr/bin/never\",\"path\":null,\"learned\":false,"
			 "\"reason\":\"not-learned\",\"findings\":[{\"reason\":\"not-learned\","
			 "\"text\":\"the model does not know it: no scan or exec event has seen it "
			 "run long enough since the state began, or it was forgotten after maxage\"}]}\n");
}
END_TEST

/* A file name two learned programs share is no answer: the path is needed. */
START_TEST(test_explain_ambiguous)
{
	g_autofree char *error_text = NULL;
	g_autoptr(ReportExplain) ex = NULL;

	add_exe(fx.model, "/usr/sbin/alpha", 0.1);
	ex = report_explain(&fx.src, "alpha", FALSE, &error_text);
	ck_assert_ptr_null(ex);
	ck_assert_str_eq(error_text, "2 learned programs are called alpha: give the path");
	g_clear_pointer(&error_text, g_free);
	ex = report_explain(&fx.src, "/usr/sbin/alpha", FALSE, &error_text);
	ck_assert_ptr_nonnull(ex);
	ck_assert_ptr_null(error_text);
}
END_TEST

/*
 * evince started last, at 95; beta followed it in 5 of its 9 chances. The
 * same beta after a quiet spell (12 gaps of 10 s: quiet after 20 s) is
 * a session opener instead, in 2 of the 7 sessions seen.
 */
START_TEST(test_explain_successor)
{
	Model *model = fx.model;
	Exe *evince = add_exe(model, "/usr/bin/evince", 0.0);
	Exe *beta = model_lookup_exe(model, "/usr/bin/beta");
	g_autoptr(ReportExplain) ex = NULL;
	g_autoptr(ReportExplain) quiet = NULL;
	g_autoptr(ReportExplain) off = NULL;
	g_autofree char *text = NULL;

	exe_append_succ(evince, &(ExeSucc){ beta, 5, 9 });
	evince->succ_total = 9;
	model->last_start = evince;
	model->last_start_time = 95;
	model->start_gaps = 120;
	model->n_start_gaps = 12;
	beta->quiet_starts = 2;
	g_ptr_array_add(model->quiet_exes, beta);
	model->quiet_total = 7;

	ex = report_explain(&fx.src, "beta", FALSE, NULL);
	ck_assert_uint_eq(ex->findings->len, 2);
	ck_assert_int_eq(reason(ex, 0), REPORT_REASON_BELOW_LINE);
	ck_assert_int_eq(reason(ex, 1), REPORT_REASON_SUCCESSOR);
	ck_assert_str_eq(finding_text(ex, 1), "next after evince in 5 of its 9 chances");
	text = report_explain_text(ex, FALSE);
	ck_assert(g_str_has_suffix(text, "\n  successor   next after evince in 5 of its 9 chances\n"));

	/* 20 s after the last start: quiet. */
	model->time = 115;
	quiet = report_explain(&fx.src, "beta", FALSE, NULL);
	ck_assert_uint_eq(quiet->findings->len, 2);
	ck_assert_int_eq(reason(quiet, 1), REPORT_REASON_SESSION_OPENER);
	ck_assert_str_eq(finding_text(quiet, 1),
			 "opens a session: the first start after a quiet spell in 2 of 7");

	fx.conf->successor = FALSE;
	off = report_explain(&fx.src, "beta", FALSE, NULL);
	ck_assert_uint_eq(off->findings->len, 1);
}
END_TEST

START_TEST(test_explain_running_successor)
{
	Model *model = fx.model;
	Exe *evince = add_exe(model, "/usr/bin/evince", 0.0);
	Exe *beta = model_lookup_exe(model, "/usr/bin/beta");
	Exe *gamma = model_lookup_exe(model, "/usr/bin/gamma");
	g_autoptr(ReportExplain) ex = NULL;
	g_autoptr(ReportExplain) none = NULL;

	/*
	 * evince started last and beta never followed it; gamma runs, and
	 * beta followed it 2 times in 4 chances: the weaker of its two
	 * entries is not the one shown.
	 */
	exe_append_succ(evince, &(ExeSucc){ gamma, 1, 1 });
	exe_append_succ(gamma, &(ExeSucc){ beta, 2, 4 });
	model->last_start = evince;
	model->last_start_time = 95;
	model->start_gaps = 120;
	model->n_start_gaps = 12;
	ex = report_explain(&fx.src, "beta", FALSE, NULL);
	ck_assert_uint_eq(ex->findings->len, 2);
	ck_assert_int_eq(reason(ex, 1), REPORT_REASON_SUCCESSOR);
	ck_assert_str_eq(finding_text(ex, 1),
			 "may follow gamma, which runs: next after it in 2 of its 4 chances");

	/* The last start's own successors are not shown twice. */
	model->last_start = gamma;
	none = report_explain(&fx.src, "beta", FALSE, NULL);
	ck_assert_uint_eq(none->findings->len, 2);
	ck_assert_str_eq(finding_text(none, 1), "next after gamma in 2 of its 4 chances");
}
END_TEST

/*
 * evince started last and beta never followed it; gimp, stopped, was the
 * last free choice, and beta followed it 3 times in 5 chances. Without
 * it, beta bids as a session opener (2 of 7), in case the user went away
 * just now: 2 quiet spells and 8 soon gaps, a = 2 / 10 = 20 %.
 */
START_TEST(test_explain_free_and_away)
{
	Model *model = fx.model;
	Exe *evince = add_exe(model, "/usr/bin/evince", 0.0);
	Exe *gimp = add_exe(model, "/usr/bin/gimp", 0.0);
	Exe *beta = model_lookup_exe(model, "/usr/bin/beta");
	g_autoptr(ReportExplain) ex = NULL;
	g_autoptr(ReportExplain) away = NULL;

	exe_append_succ(gimp, &(ExeSucc){ beta, 3, 5 });
	model->last_start = evince;
	model->free_start = gimp;
	model->last_start_time = 95;
	model->time = 95;
	model->start_gaps = 120;
	model->n_start_gaps = 12;
	model->soon_gaps = 80;
	model->n_soon_gaps = 8;
	model->n_quiet_gaps = 2;
	beta->quiet_starts = 2;
	g_ptr_array_add(model->quiet_exes, beta);
	model->quiet_total = 7;
	ex = report_explain(&fx.src, "beta", FALSE, NULL);
	ck_assert_uint_eq(ex->findings->len, 2);
	ck_assert_int_eq(reason(ex, 1), REPORT_REASON_SUCCESSOR);
	ck_assert_str_eq(finding_text(ex, 1),
			 "next after gimp, the last start that was no habit, in 3 of its 5 chances");

	model->free_start = NULL;
	away = report_explain(&fx.src, "beta", FALSE, NULL);
	ck_assert_uint_eq(away->findings->len, 2);
	ck_assert_int_eq(reason(away, 1), REPORT_REASON_SESSION_OPENER);
	ck_assert_str_eq(finding_text(away, 1),
			 "may open a session, if the user went away (20.0%): the first start "
			 "after a quiet spell in 2 of 7");
}
END_TEST

/*
 * gamma runs and stopped 3 times; beta started as it stopped at 2 of
 * them (2 >= 0.5 * (3 + 1): a habit), alpha at 1 (no habit, no line).
 */
START_TEST(test_explain_handoff)
{
	Model *model = fx.model;
	Exe *alpha = model_lookup_exe(model, "/usr/bin/alpha");
	Exe *beta = model_lookup_exe(model, "/usr/bin/beta");
	Exe *gamma = model_lookup_exe(model, "/usr/bin/gamma");
	g_autoptr(ReportExplain) ex = NULL;
	g_autoptr(ReportExplain) weak = NULL;
	g_autoptr(ReportExplain) off = NULL;

	gamma->stops = 3;
	exe_append_handoff(gamma, &(ExeHandoff){ beta, 2 });
	exe_append_handoff(gamma, &(ExeHandoff){ alpha, 1 });
	ex = report_explain(&fx.src, "beta", FALSE, NULL);
	ck_assert_uint_eq(ex->findings->len, 2);
	ck_assert_int_eq(reason(ex, 1), REPORT_REASON_HANDOFF);
	ck_assert_str_eq(finding_text(ex, 1),
			 "may start as gamma stops, which runs: started as it stopped at 2 of its "
			 "3 stops");

	weak = report_explain(&fx.src, "alpha", FALSE, NULL);
	for (guint i = 0; i < weak->findings->len; i++)
		ck_assert_int_ne(reason(weak, i), REPORT_REASON_HANDOFF);

	fx.conf->successor = FALSE;
	off = report_explain(&fx.src, "beta", FALSE, NULL);
	ck_assert_uint_eq(off->findings->len, 1);
}
END_TEST

/*
 * beta had a quarter of the stopped programs' starts at the last scoring,
 * and the starts so far gave ranking by frequency a weight of 0.4.
 */
START_TEST(test_explain_frequency)
{
	Model *model = fx.model;
	Exe *beta = model_lookup_exe(model, "/usr/bin/beta");
	g_autoptr(ReportExplain) ex = NULL;
	g_autoptr(ReportExplain) stale = NULL;
	g_autoptr(ReportExplain) off = NULL;

	beta->expert_freq = 0.25f;
	beta->expert_stamp = model->score_stamp;
	model->freq_weight = 0.4;
	ex = report_explain(&fx.src, "beta", FALSE, NULL);
	ck_assert_uint_eq(ex->findings->len, 2);
	ck_assert_int_eq(reason(ex, 1), REPORT_REASON_FREQUENCY);
	ck_assert_str_eq(finding_text(ex, 1),
			 "25.0% of the stopped programs' starts were its; ranking by frequency "
			 "weighs 0.40 against the model's 0.60, from how well each foretold the "
			 "starts seen");

	/* Shares of an earlier scoring are not this cycle's. */
	beta->expert_stamp = model->score_stamp + 1;
	stale = report_explain(&fx.src, "beta", FALSE, NULL);
	ck_assert_uint_eq(stale->findings->len, 1);

	beta->expert_stamp = model->score_stamp;
	fx.conf->frequency = FALSE;
	off = report_explain(&fx.src, "beta", FALSE, NULL);
	ck_assert_uint_eq(off->findings->len, 1);
}
END_TEST

START_TEST(test_reason_names)
{
	for (int r = 0; r < REPORT_N_REASONS; r++)
		ck_assert_ptr_nonnull(report_reason_name((ReportReason)r));
	ck_assert_str_eq(report_reason_name(REPORT_REASON_BELOW_LINE), "below-line");
	ck_assert_str_eq(report_reason_name(REPORT_REASON_SUCCESSOR), "successor");
	ck_assert_str_eq(report_reason_name(REPORT_REASON_SESSION_OPENER), "session-opener");
	ck_assert_str_eq(report_reason_name(REPORT_REASON_FREQUENCY), "frequency");
	ck_assert_str_eq(report_reason_name(REPORT_REASON_HANDOFF), "handoff");
}
END_TEST

START_TEST(test_path_text)
{
	g_autofree char *plain = report_path_text("/usr/bin/caf\xc3\xa9");
	g_autofree char *hostile = report_path_text("/tmp/a\nb\x1b[31m\\\xc3");

	ck_assert_str_eq(plain, "/usr/bin/caf\xc3\xa9");
	ck_assert_str_eq(hostile, "/tmp/a\\x0ab\\x1b[31m\\\\\\xc3");
}
END_TEST

static Suite *
report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_dump_lines);
	tcase_add_test(tc, test_dump_paused);
	tcase_add_test(tc, test_dump_battery);
	tcase_add_test(tc, test_top_literal);
	tcase_add_test(tc, test_status_text);
	tcase_add_test(tc, test_status_text_first_minute);
	tcase_add_test(tc, test_status_json_deadlines);
	tcase_add_test(tc, test_hit_log_hour);
	tcase_add_test(tc, test_hits_text);
	tcase_add_test(tc, test_status_line);
	tcase_add_test(tc, test_explain_prefetched);
	tcase_add_test(tc, test_explain_below_line);
	tcase_add_test(tc, test_explain_successor);
	tcase_add_test(tc, test_explain_running_successor);
	tcase_add_test(tc, test_explain_free_and_away);
	tcase_add_test(tc, test_explain_frequency);
	tcase_add_test(tc, test_explain_handoff);
	tcase_add_test(tc, test_explain_paused_stale);
	tcase_add_test(tc, test_explain_running_no_bid);
	tcase_add_test(tc, test_explain_not_learned);
	tcase_add_test(tc, test_explain_ambiguous);
	tcase_add_test(tc, test_reason_names);
	tcase_add_test(tc, test_path_text);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(report_suite());
}
