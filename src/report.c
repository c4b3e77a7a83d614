/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Report: the daemon's figures as the SIGUSR1 dump, the control verbs'
 * answers (text and JSON) and systemd's STATUS= line.
 *
 * Everything but report_snapshot_new() and report_explain() is pure: it
 * renders a ReportSnapshot. The dump's lines are exactly those the daemon
 * logged before this module existed (scripts and people grep them).
 */
#include "config.h"

#include "report.h"

#include <math.h>
#include <string.h>
#include <sys/resource.h>

#include "json.h"

/* ---- the hit history ---- */

/* An hour of samples at the shortest cycle (1 s), and one more. */
#define HIT_LOG_SPAN_US (G_GINT64_CONSTANT(3600) * G_USEC_PER_SEC)
#define HIT_LOG_MAX 3601

typedef struct HitSample {
	gint64 at_us;
	ExeHits total;
} HitSample;

struct ReportHitLog {
	GArray *samples;      /* HitSample, oldest first */
};

ReportHitLog *
report_hit_log_new(void)
{
	ReportHitLog *log = g_new0(ReportHitLog, 1);

	log->samples = g_array_new(FALSE, FALSE, sizeof(HitSample));
	return log;
}

void
report_hit_log_free(ReportHitLog *log)
{
	if (!log)
		return;
	g_array_unref(log->samples);
	g_free(log);
}

void
report_hit_log_add(ReportHitLog *log, gint64 now_us, const ExeHits *total)
{
	HitSample sample = { now_us, *total };
	guint drop = 0;

	g_return_if_fail(log != NULL && total != NULL);
	g_array_append_val(log->samples, sample);
	/* Keep the newest sample at least an hour old: the hour's baseline. */
	while (drop + 1 < log->samples->len &&
	       now_us - g_array_index(log->samples, HitSample, drop + 1).at_us >= HIT_LOG_SPAN_US)
		drop++;
	if (log->samples->len - drop > HIT_LOG_MAX)
		drop = log->samples->len - HIT_LOG_MAX;
	if (drop > 0)
		g_array_remove_range(log->samples, 0, drop);
}

/* a - b, field by field; totals only grow, but a reset (reload of the state) must not wrap. */
static void
hits_sub(ExeHits *out, const ExeHits *a, const ExeHits *b)
{
#define SUB(f) out->f = a->f >= b->f ? a->f - b->f : 0
	SUB(starts);
	SUB(checks);
	SUB(bytes);
	SUB(prefetched);
	SUB(probed);
	SUB(resident);
#undef SUB
}

gboolean
report_hit_log_delta(const ReportHitLog *log, ExeHits *delta, gint64 *span_us)
{
	const HitSample *first, *last;

	g_return_val_if_fail(log != NULL, FALSE);
	if (log->samples->len < 2)
		return FALSE;
	first = &g_array_index(log->samples, HitSample, 0);
	last = &g_array_index(log->samples, HitSample, log->samples->len - 1);
	hits_sub(delta, &last->total, &first->total);
	*span_us = last->at_us - first->at_us;
	return TRUE;
}

static void
hits_add(ExeHits *total, const ExeHits *hits)
{
	total->starts += hits->starts;
	total->checks += hits->checks;
	total->bytes += hits->bytes;
	total->prefetched += hits->prefetched;
	total->probed += hits->probed;
	total->resident += hits->resident;
}

void
report_total_hits(const Model *model, ExeHits *total)
{
	GHashTableIter iter;
	gpointer value;

	memset(total, 0, sizeof(*total));
	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		hits_add(total, &((const Exe *)value)->hits);
}

/* ---- the snapshot ---- */

static gint
compare_exe_lnprob(gconstpointer a, gconstpointer b)
{
	const Exe *x = *(Exe *const *)a, *y = *(Exe *const *)b;

	if (x->lnprob != y->lnprob)
		return x->lnprob < y->lnprob ? -1 : 1;
	return strcmp(x->path, y->path);
}

static gint
compare_exe_starts(gconstpointer a, gconstpointer b)
{
	const Exe *x = *(Exe *const *)a, *y = *(Exe *const *)b;

	if (x->hits.starts != y->hits.starts)
		return x->hits.starts > y->hits.starts ? -1 : 1;
	return strcmp(x->path, y->path);
}

ReportSnapshot *
report_snapshot_new(const ReportSources *src, guint top_n)
{
	ReportSnapshot *snap = g_new0(ReportSnapshot, 1);
	g_autoptr(GPtrArray) predicted = g_ptr_array_new();
	g_autoptr(GPtrArray) started = g_ptr_array_new();
	const Model *model = src->model;
	GHashTableIter iter;
	gpointer value;
	struct rusage usage;

	snap->strings = g_string_chunk_new(4096);
	snap->model_time = model->time;
	snap->exes = g_hash_table_size(model->exes);
	snap->running = model->running->len;
	snap->maps = g_hash_table_size(model->maps);
	snap->chains = model->n_chains;
	snap->too_small = g_hash_table_size(model->bad_exes);
	snap->cycles = src->cycles;
	if (src->mem)
		snap->mem = *src->mem;
	snap->pressure_wanted = src->conf->maxpressure > 0;
	snap->have_pressure = src->pressure != NULL;
	if (src->pressure)
		snap->pressure_some_avg10 = src->pressure->some_avg10;
	snap->pause = src->pause;
	if (src->pause != PROPHET_PREFETCH) {
		g_autofree char *why = prophet_pause_describe(src->pause, src->conf);

		snap->pause_why = g_string_chunk_insert(snap->strings, why);
	}
	snap->idle_class = src->idle_class;
	snap->on_battery = src->on_battery;
	snap->dopredict = src->conf->dopredict;
	snap->budget_kb = src->budget_kb;
	snap->selected_maps = src->selected_maps;
	snap->selected_kb = src->selected_kb;
	if (src->readahead)
		snap->readahead = *src->readahead;
	snap->max_exes = src->conf->maxexes;
	snap->max_exe_maps = src->conf->maxexemaps;
	snap->max_maps = src->conf->maxmaps;
	snap->max_chains = src->conf->maxchains;
	snap->evictions = model->evictions;
	snap->read_abandoned = src->read_abandoned;
	snap->read_stuck = src->read_stuck;
	snap->read_refused = src->read_refused;
	snap->have_fsjobs = src->fsjobs != NULL;
	if (src->fsjobs)
		snap->fsjobs = *src->fsjobs;

	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		Exe *exe = value;

		if (!exe_is_running(model, exe) && exe->lnprob < 0)
			g_ptr_array_add(predicted, exe);
		if (exe->hits.starts > 0)
			g_ptr_array_add(started, exe);
		hits_add(&snap->hits_total, &exe->hits);
	}
	g_ptr_array_sort(predicted, compare_exe_lnprob);
	snap->predicted = predicted->len;
	snap->n_top = MIN(predicted->len, MAX(top_n, REPORT_DUMP_TOP_EXES));
	snap->top_owned = g_new0(ReportExe, MAX(snap->n_top, 1));
	for (guint i = 0; i < snap->n_top; i++) {
		const Exe *exe = predicted->pdata[i];
		ReportExe *out = &snap->top_owned[i];

		out->path = g_string_chunk_insert(snap->strings, exe->path);
		out->probability = prophet_exe_probability(exe);
		out->size = exe->size;
		out->maps = exe->exemaps->len;
	}
	snap->top = snap->top_owned;

	g_ptr_array_sort(started, compare_exe_starts);
	snap->n_hits = started->len;
	snap->hits_owned = g_new0(ReportHits, MAX(started->len, 1));
	for (guint i = 0; i < started->len; i++) {
		const Exe *exe = started->pdata[i];

		snap->hits_owned[i].path = g_string_chunk_insert(snap->strings, exe->path);
		snap->hits_owned[i].hits = exe->hits;
	}
	snap->hits = snap->hits_owned;
	if (src->hit_log)
		snap->have_hour = report_hit_log_delta(src->hit_log, &snap->hits_hour, &snap->hour_us);

	snap->cpu_us = src->cpu_us;
	snap->readahead_cpu_us = src->readahead_cpu_us;
	snap->n_stages = MIN(src->n_stages, REPORT_MAX_STAGES);
	for (guint i = 0; i < snap->n_stages; i++) {
		snap->stages[i].name = g_string_chunk_insert(snap->strings, src->stage_names[i]);
		snap->stages[i].us = src->stage_us[i];
	}
	snap->batches = src->batches;
	snap->read_bytes = src->read_bytes;
	snap->read_calls = src->read_calls;
	if (src->mountns)
		snap->mountns = *src->mountns;
	if (src->launch)
		snap->launch = *src->launch;
	snap->watching = src->watch != NULL;
	if (src->watch)
		snap->watch = *src->watch;
	snap->watch_text = g_string_chunk_insert(snap->strings,
						 src->watch_text ? src->watch_text : "not started");
	if (getrusage(RUSAGE_SELF, &usage) == 0)
		snap->peak_rss_kb = (guint64)usage.ru_maxrss;
	{
		g_autofree char *conf_text = conf_dump(src->conf);

		snap->conf_text = g_string_chunk_insert(snap->strings, conf_text);
	}
	return snap;
}

void
report_snapshot_free(ReportSnapshot *snap)
{
	if (!snap)
		return;
	g_free(snap->top_owned);
	g_free(snap->hits_owned);
	if (snap->strings)
		g_string_chunk_free(snap->strings);
	g_free(snap);
}

/* ---- the dump ---- */

static void
add_line(GPtrArray *lines, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void
add_line(GPtrArray *lines, const char *format, ...)
{
	va_list args;

	va_start(args, format);
	g_ptr_array_add(lines, g_strdup_vprintf(format, args));
	va_end(args);
}

/*
 * Cumulative, so that two dumps give the cost of the cycles between them;
 * "other" is the rest of the process: readahead workers (their own line,
 * "readahead threads"), events, signals, saves. What was read tells a readahead stage that re-read pages the
 * kernel evicted from one that only checked what was cached.
 */
static void
dump_cpu(GPtrArray *lines, const ReportSnapshot *snap)
{
	g_autoptr(GString) stages = g_string_new(NULL);
	gint64 staged = 0;

	for (guint i = 0; i < snap->n_stages; i++) {
		g_string_append_printf(stages, "%s %.1f, ", snap->stages[i].name,
				       snap->stages[i].us / 1000.0);
		staged += snap->stages[i].us;
	}
	add_line(lines, "cpu: %.1f ms in %u cycles since start (%sother %.1f ms); "
		 "%" G_GUINT64_FORMAT " readahead batches, %" G_GUINT64_FORMAT " KB requested in %"
		 G_GUINT64_FORMAT " calls", snap->cpu_us / 1000.0, snap->cycles, stages->str,
		 MAX(snap->cpu_us - staged, 0) / 1000.0, snap->batches, snap->read_bytes / 1024,
		 snap->read_calls);
}

/*
 * Programs in other mount namespaces (containers, Flatpak, Snap): how
 * many ran, how many of their paths were translated to paths here and
 * how many were not learned, by reason; and the ranges the reader left
 * because the path named another file than the one learned.
 */
static void
dump_namespaces(GPtrArray *lines, const ReportSnapshot *snap)
{
	const MountNsStats *ns = &snap->mountns;
	g_autoptr(GString) dropped = g_string_new(NULL);
	guint64 total = 0;

	for (guint i = 0; i < MOUNTNS_N_DROPS; i++) {
		g_string_append_printf(dropped, "%s%s %" G_GUINT64_FORMAT, i ? ", " : "",
				       mountns_drop_name((MountNsDrop)i), ns->dropped[i]);
		total += ns->dropped[i];
	}
	add_line(lines, "mount namespaces: %u processes in other namespaces (%u mount tables) at "
		 "the last scan; %" G_GUINT64_FORMAT " paths translated, %" G_GUINT64_FORMAT
		 " dropped since start (%s)",
		 ns->processes, ns->namespaces, ns->translated, total, dropped->str);
	add_line(lines, "identity: last readahead skipped %u ranges whose path names another file "
		 "than the one learned; fanotify events of files on other namespaces' mounts: %"
		 G_GUINT64_FORMAT " used by their path here, %" G_GUINT64_FORMAT
		 " not used (no path here)", snap->readahead.other_file, snap->watch.translated,
		 snap->watch.foreign);
}

/* The hit figures: totals, then the executables started most often. */
static void
dump_hits(GPtrArray *lines, const ReportSnapshot *snap)
{
	const ExeHits *total = &snap->hits_total;
	const WatchStats *ws = &snap->watch;

	if (snap->watching)
		add_line(lines, "watch: %s; %" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT
			 " starts, %" G_GUINT64_FORMAT " start-up windows, %" G_GUINT64_FORMAT
			 " opens recorded, %" G_GUINT64_FORMAT " read sets learned, %" G_GUINT64_FORMAT
			 " windows that taught nothing, %"
			 G_GUINT64_FORMAT " queue overflows; of the events, %" G_GUINT64_FORMAT
			 " by descriptor and %" G_GUINT64_FORMAT " by file handle (%" G_GUINT64_FORMAT
			 " handles resolved, %" G_GUINT64_FORMAT " unknown info records skipped)",
			 snap->watch_text, ws->events, ws->starts, ws->windows,
			 ws->recorded, ws->learned, ws->untaught, ws->overflows, ws->events - MIN(ws->events, ws->fid_events),
			 ws->fid_events, ws->handles, ws->unknown_records);
	if (snap->watching)
		add_line(lines, "watch cpu: %.1f ms on exec events and opens by descriptor, %.1f ms "
			 "on opens by file handle, %.1f ms ending windows; %" G_GUINT64_FORMAT
			 " wake-ups; %" G_GUINT64_FORMAT " exec events of files named lately, %"
			 G_GUINT64_FORMAT " opens by handle named lately",
			 ws->cpu_desc_us / 1000.0, ws->cpu_fid_us / 1000.0,
			 ws->cpu_window_us / 1000.0, ws->wakeups, ws->exec_names_reused,
			 ws->handle_names_reused);
	else
		add_line(lines, "watch: off (%s); starts are counted by the scan", snap->watch_text);
	add_line(lines, "launch readahead: %" G_GUINT64_FORMAT " batches for starts not cached (%"
		 G_GUINT64_FORMAT " KB of learned sets, %" G_GUINT64_FORMAT " over: %" G_GUINT64_FORMAT
		 " KB requested), %" G_GUINT64_FORMAT " starts cached enough, %" G_GUINT64_FORMAT
		 " of small files only (left to the program), %" G_GUINT64_FORMAT
		 " held by the rate bound, %" G_GUINT64_FORMAT " refused by the reader",
		 snap->launch.fetches, snap->launch.fetch_bytes / 1024, snap->launch.done,
		 snap->launch.read_bytes / 1024, snap->launch.cached, snap->launch.small,
		 snap->launch.limited, snap->launch.refused);
	add_line(lines, "hits: %" G_GUINT64_FORMAT " starts of known executables, %" G_GUINT64_FORMAT
		 " measured: %.1f%% of %" G_GUINT64_FORMAT " KB resident at the start, "
		 "%.1f%% of %" G_GUINT64_FORMAT " KB in the last prefetch",
		 total->starts, total->checks, 100 * exe_hits_resident_ratio(total),
		 total->probed / 1024, 100 * exe_hits_prefetched_ratio(total), total->bytes / 1024);
	if (snap->n_hits > 0)
		add_line(lines, "most started executables (starts, measured, resident%%, prefetched%%):");
	for (guint i = 0; i < snap->n_hits && i < REPORT_DUMP_TOP_HITS; i++) {
		const ReportHits *h = &snap->hits[i];

		add_line(lines, "  %6" G_GUINT64_FORMAT " %6" G_GUINT64_FORMAT " %6.1f%% %6.1f%%  %s",
			 h->hits.starts, h->hits.checks, 100 * exe_hits_resident_ratio(&h->hits),
			 100 * exe_hits_prefetched_ratio(&h->hits), h->path);
	}
}

GPtrArray *
report_dump_lines(const ReportSnapshot *snap)
{
	GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
	const ReadaheadStats *ra = &snap->readahead;

	add_line(lines, "SIGUSR1: state dump");
	add_line(lines, "model: time %" G_GINT64_FORMAT " s, %u exes (%u running), %u maps, "
		 "%u chains, %u too small; %u cycles since start",
		 snap->model_time, snap->exes, snap->running, snap->maps, snap->chains,
		 snap->too_small, snap->cycles);
	add_line(lines, "memory: total %" G_GUINT64_FORMAT " KB, free %" G_GUINT64_FORMAT
		 " KB, cached %" G_GUINT64_FORMAT " KB, available %" G_GUINT64_FORMAT " KB",
		 snap->mem.total, snap->mem.free, snap->mem.cached, snap->mem.available);
	if (snap->have_pressure)
		add_line(lines, "memory pressure: some avg10 %u.%02u%%",
			 snap->pressure_some_avg10 / 100, snap->pressure_some_avg10 % 100);
	else
		add_line(lines, "memory pressure: %s",
			 snap->pressure_wanted ? "not available" : "not read");
	if (snap->pause != PROPHET_PREFETCH)
		add_line(lines, "prefetching: paused, %s", snap->pause_why);
	else
		add_line(lines, "prefetching: active, %s I/O class%s",
			 snap->idle_class ? "idle" : "NOT the idle",
			 snap->on_battery ? ", on battery: budget scaled by batterybudget" : "");
	add_line(lines, "last prediction: budget %" G_GUINT64_FORMAT " KB, selected %u maps, %"
		 G_GUINT64_FORMAT " KB", snap->budget_kb, snap->selected_maps, snap->selected_kb);
	add_line(lines, "last readahead: %u requests in %u files, %" G_GUINT64_FORMAT
		 " KB requested in %" G_GUINT64_FORMAT " calls, %" G_GUINT64_FORMAT
		 " KB already cached (%u ranges whole, %u of them spot-checked, %u not even "
		 "opened), %u failed, %u skipped%s",
		 ra->requests, ra->files, ra->bytes / 1024, ra->syscalls,
		 ra->resident_bytes / 1024, ra->resident_ranges, ra->trusted_ranges,
		 ra->unopened_ranges, ra->failed,
		 ra->skipped,
		 ra->superseded ? "; superseded by a newer prediction" : "");
	add_line(lines, "top predicted executables (%u with a non-zero probability):",
		 snap->predicted);
	for (guint i = 0; i < snap->n_top && i < REPORT_DUMP_TOP_EXES; i++)
		add_line(lines, "  %.4f  %s", snap->top[i].probability, snap->top[i].path);
	dump_namespaces(lines, snap);
	dump_cpu(lines, snap);
	dump_hits(lines, snap);
	add_line(lines, "model caps: %" G_GINT64_FORMAT " exes, %" G_GINT64_FORMAT " maps per exe, %"
		 G_GINT64_FORMAT " maps, %" G_GINT64_FORMAT " chains; evicted %" G_GUINT64_FORMAT
		 " exes and %" G_GUINT64_FORMAT " chains, refused %" G_GUINT64_FORMAT
		 " exes and %" G_GUINT64_FORMAT " map uses",
		 snap->max_exes, snap->max_exe_maps, snap->max_maps, snap->max_chains,
		 snap->evictions.exes, snap->evictions.chains, snap->evictions.exes_refused,
		 snap->evictions.maps_refused);
	add_line(lines, "readahead deadline: %" G_GUINT64_FORMAT " batches abandoned after %d s "
		 "without progress, %u of their threads still blocked (at most %d: %"
		 G_GUINT64_FORMAT " batches refused)", snap->read_abandoned,
		 (int)(READAHEAD_DEADLINE_US / G_USEC_PER_SEC), snap->read_stuck,
		 READAHEAD_MAX_STUCK, snap->read_refused);
	/* Not in the "cpu:" line, which scripts read as it is. */
	add_line(lines, "readahead threads: %.1f ms of CPU since start, the batches' and their "
		 "workers' (part of the cpu line's \"other\")", snap->readahead_cpu_us / 1000.0);
	if (snap->have_fsjobs)
		add_line(lines, "file-system jobs: %" G_GUINT64_FORMAT " done, %" G_GUINT64_FORMAT
			 " abandoned after %d ms, %u of their threads still blocked (at most %d), %"
			 G_GUINT64_FORMAT " expired in the queue; refused: %" G_GUINT64_FORMAT
			 " on a device that missed a deadline, %" G_GUINT64_FORMAT
			 " at the thread cap, %" G_GUINT64_FORMAT " queue full; %u devices refused now; "
			 "%.1f ms of CPU in the jobs (part of the cpu line's \"other\")",
			 snap->fsjobs.done, snap->fsjobs.abandoned,
			 (int)(FSJOB_DEADLINE_US / 1000), snap->fsjobs.stuck, FSJOB_MAX_STUCK,
			 snap->fsjobs.expired, snap->fsjobs.refused_device,
			 snap->fsjobs.refused_stuck, snap->fsjobs.refused_full,
			 snap->fsjobs.devices_refused, snap->fsjobs.cpu_us / 1000.0);
	add_line(lines, "configuration:\n%s", snap->conf_text);
	return lines;
}

void
report_log_dump(const ReportSnapshot *snap)
{
	g_autoptr(GPtrArray) lines = report_dump_lines(snap);

	for (guint i = 0; i < lines->len; i++)
		g_message("%s", (const char *)lines->pdata[i]);
}

/* ---- JSON pieces ---- */

static void
json_hits(JsonWriter *w, const ExeHits *h)
{
	json_begin_object(w);
	json_key(w, "starts");
	json_uint(w, h->starts);
	json_key(w, "measured");
	json_uint(w, h->checks);
	json_key(w, "bytes");
	json_uint(w, h->bytes);
	json_key(w, "prefetched_bytes");
	json_uint(w, h->prefetched);
	json_key(w, "probed_bytes");
	json_uint(w, h->probed);
	json_key(w, "resident_bytes");
	json_uint(w, h->resident);
	json_key(w, "resident_ratio");
	json_double(w, exe_hits_resident_ratio(h));
	json_key(w, "prefetched_ratio");
	json_double(w, exe_hits_prefetched_ratio(h));
	json_end_object(w);
}

static void
json_readahead(JsonWriter *w, const ReadaheadStats *ra)
{
	json_begin_object(w);
	json_key(w, "requests");
	json_uint(w, ra->requests);
	json_key(w, "files");
	json_uint(w, ra->files);
	json_key(w, "bytes");
	json_uint(w, ra->bytes);
	json_key(w, "calls");
	json_uint(w, ra->syscalls);
	json_key(w, "cached_bytes");
	json_uint(w, ra->resident_bytes);
	json_key(w, "failed");
	json_uint(w, ra->failed);
	json_key(w, "skipped");
	json_uint(w, ra->skipped);
	json_key(w, "superseded");
	json_bool(w, ra->superseded);
	json_end_object(w);
}

static const char *
pause_name(ProphetPause pause)
{
	switch (pause) {
	case PROPHET_PAUSE_AVAILABLE:
		return "memavailable";
	case PROPHET_PAUSE_PRESSURE:
		return "pressure";
	case PROPHET_PAUSE_BATTERY:
		return "battery";
	case PROPHET_PREFETCH:
	default:
		return NULL;
	}
}

/* The body of `status --json`, also the first part of `dump --json`. */
static void
json_status_members(JsonWriter *w, const ReportSnapshot *snap)
{
	json_key(w, "prefetching");
	json_string(w, !snap->dopredict ? "off" : snap->pause != PROPHET_PREFETCH ? "paused" : "active");
	json_key(w, "paused_because");
	json_string(w, pause_name(snap->pause));
	json_key(w, "paused_why");
	json_string(w, snap->pause_why);
	json_key(w, "idle_io_class");
	json_bool(w, snap->idle_class);
	json_key(w, "on_battery");
	json_bool(w, snap->on_battery);
	json_key(w, "model");
	json_begin_object(w);
	json_key(w, "time");
	json_int(w, snap->model_time);
	json_key(w, "exes");
	json_uint(w, snap->exes);
	json_key(w, "running");
	json_uint(w, snap->running);
	json_key(w, "maps");
	json_uint(w, snap->maps);
	json_key(w, "chains");
	json_uint(w, snap->chains);
	json_key(w, "too_small");
	json_uint(w, snap->too_small);
	json_end_object(w);
	json_key(w, "cycles");
	json_uint(w, snap->cycles);
	json_key(w, "memory_kb");
	json_begin_object(w);
	json_key(w, "total");
	json_uint(w, snap->mem.total);
	json_key(w, "free");
	json_uint(w, snap->mem.free);
	json_key(w, "cached");
	json_uint(w, snap->mem.cached);
	json_key(w, "available");
	json_uint(w, snap->mem.available);
	json_end_object(w);
	json_key(w, "pressure_some_avg10");
	if (snap->have_pressure)
		json_double(w, snap->pressure_some_avg10 / 100.0);
	else
		json_null(w);
	json_key(w, "budget_kb");
	json_uint(w, snap->budget_kb);
	json_key(w, "selected_maps");
	json_uint(w, snap->selected_maps);
	json_key(w, "selected_kb");
	json_uint(w, snap->selected_kb);
	json_key(w, "last_readahead");
	json_readahead(w, &snap->readahead);
	json_key(w, "hits");
	json_hits(w, &snap->hits_total);
	json_key(w, "hits_last_hour");
	if (snap->have_hour)
		json_hits(w, &snap->hits_hour);
	else
		json_null(w);
	json_key(w, "hits_last_hour_seconds");
	json_int(w, snap->have_hour ? snap->hour_us / G_USEC_PER_SEC : 0);
	json_key(w, "watch");
	json_begin_object(w);
	json_key(w, "on");
	json_bool(w, snap->watching);
	json_key(w, "text");
	json_string(w, snap->watch_text);
	json_key(w, "events");
	json_uint(w, snap->watch.events);
	json_key(w, "starts");
	json_uint(w, snap->watch.starts);
	json_key(w, "read_sets_learned");
	json_uint(w, snap->watch.learned);
	json_key(w, "overflows");
	json_uint(w, snap->watch.overflows);
	json_key(w, "events_by_handle");
	json_uint(w, snap->watch.fid_events);
	json_key(w, "handles_resolved");
	json_uint(w, snap->watch.handles);
	json_end_object(w);
	json_key(w, "launch_readahead");
	json_begin_object(w);
	json_key(w, "batches");
	json_uint(w, snap->launch.fetches);
	json_key(w, "learned_bytes");
	json_uint(w, snap->launch.fetch_bytes);
	json_key(w, "done");
	json_uint(w, snap->launch.done);
	json_key(w, "read_bytes");
	json_uint(w, snap->launch.read_bytes);
	json_key(w, "cached");
	json_uint(w, snap->launch.cached);
	json_key(w, "small_sets");
	json_uint(w, snap->launch.small);
	json_key(w, "rate_limited");
	json_uint(w, snap->launch.limited);
	json_key(w, "refused");
	json_uint(w, snap->launch.refused);
	json_end_object(w);
	/* What hung mounts cost: the text dump's "readahead deadline" and "file-system jobs" lines. */
	json_key(w, "deadlines");
	json_begin_object(w);
	json_key(w, "readahead_abandoned");
	json_uint(w, snap->read_abandoned);
	json_key(w, "readahead_threads_blocked");
	json_uint(w, snap->read_stuck);
	json_key(w, "readahead_refused");
	json_uint(w, snap->read_refused);
	json_key(w, "fs_jobs");
	if (snap->have_fsjobs) {
		json_begin_object(w);
		json_key(w, "done");
		json_uint(w, snap->fsjobs.done);
		json_key(w, "abandoned");
		json_uint(w, snap->fsjobs.abandoned);
		json_key(w, "expired");
		json_uint(w, snap->fsjobs.expired);
		json_key(w, "threads_blocked");
		json_uint(w, snap->fsjobs.stuck);
		json_key(w, "refused_device");
		json_uint(w, snap->fsjobs.refused_device);
		json_key(w, "refused_at_thread_cap");
		json_uint(w, snap->fsjobs.refused_stuck);
		json_key(w, "refused_queue_full");
		json_uint(w, snap->fsjobs.refused_full);
		json_key(w, "devices_refused");
		json_uint(w, snap->fsjobs.devices_refused);
		json_end_object(w);
	} else {
		json_null(w);
	}
	json_end_object(w);
	json_key(w, "cpu_ms");
	json_double(w, snap->cpu_us / 1000.0);
	json_key(w, "cpu_ms_by_stage");
	json_begin_object(w);
	for (guint i = 0; i < snap->n_stages; i++) {
		json_key(w, snap->stages[i].name);
		json_double(w, snap->stages[i].us / 1000.0);
	}
	json_end_object(w);
	json_key(w, "peak_rss_kb");
	json_uint(w, snap->peak_rss_kb);
}

static char *
finish_json(GString *out)
{
	g_string_append_c(out, '\n');
	return g_string_free(out, FALSE);
}

/* ---- text pieces ---- */

char *
report_path_text(const char *path)
{
	GString *out = g_string_sized_new(strlen(path));
	const char *p = path, *end = path + strlen(path);

	while (p < end) {
		const char *valid_end;
		guchar c = (guchar)*p;

		if (c >= 0x80) {
			g_utf8_validate(p, end - p, &valid_end);
			if (valid_end > p) {
				g_string_append_len(out, p, valid_end - p);
				p = valid_end;
				continue;
			}
		}
		if (c == '\\')
			g_string_append(out, "\\\\");
		else if (c < 0x20 || c >= 0x7f)
			g_string_append_printf(out, "\\x%02x", c);
		else
			g_string_append_c(out, (char)c);
		p++;
	}
	return g_string_free(out, FALSE);
}

static void
append_ratio_line(GString *out, const char *label, const ExeHits *h)
{
	g_string_append_printf(out, "%s%" G_GUINT64_FORMAT " starts, %" G_GUINT64_FORMAT
			       " measured: %.1f%% resident at the start, %.1f%% in the last prefetch\n",
			       label, h->starts, h->checks, 100 * exe_hits_resident_ratio(h),
			       100 * exe_hits_prefetched_ratio(h));
}

/* ---- the verbs ---- */

char *
report_dump_text(const ReportSnapshot *snap, gboolean json)
{
	GString *out = g_string_new(NULL);

	if (json) {
		g_autoptr(JsonWriter) w = json_writer_new(out);

		json_begin_object(w);
		json_status_members(w, snap);
		json_key(w, "predicted");
		json_uint(w, snap->predicted);
		json_key(w, "top");
		json_begin_array(w);
		for (guint i = 0; i < snap->n_top && i < REPORT_DUMP_TOP_EXES; i++) {
			json_begin_object(w);
			json_key(w, "path");
			json_string(w, snap->top[i].path);
			json_key(w, "probability");
			json_double(w, snap->top[i].probability);
			json_end_object(w);
		}
		json_end_array(w);
		json_key(w, "configuration");
		json_string(w, snap->conf_text);
		json_end_object(w);
		return finish_json(out);
	} else {
		g_autoptr(GPtrArray) lines = report_dump_lines(snap);

		for (guint i = 0; i < lines->len; i++) {
			g_string_append(out, lines->pdata[i]);
			if (out->len == 0 || out->str[out->len - 1] != '\n')
				g_string_append_c(out, '\n');
		}
	}
	return g_string_free(out, FALSE);
}

char *
report_status_text(const ReportSnapshot *snap, gboolean json)
{
	GString *out = g_string_new(NULL);

	if (json) {
		g_autoptr(JsonWriter) w = json_writer_new(out);

		json_begin_object(w);
		json_status_members(w, snap);
		json_end_object(w);
		return finish_json(out);
	}
	if (!snap->dopredict)
		g_string_append(out, "prefetching: off (dopredict = false)\n");
	else if (snap->pause != PROPHET_PREFETCH)
		g_string_append_printf(out, "prefetching: paused, %s\n", snap->pause_why);
	else
		g_string_append_printf(out, "prefetching: active, %s I/O class%s\n",
				       snap->idle_class ? "idle" : "NOT the idle",
				       snap->on_battery ? ", on battery: budget scaled by batterybudget"
							: "");
	g_string_append_printf(out, "model: %u programs (%u running), %u maps, %u chains, "
			       "%u too small; model time %" G_GINT64_FORMAT " s, %u cycles since start\n",
			       snap->exes, snap->running, snap->maps, snap->chains, snap->too_small,
			       snap->model_time, snap->cycles);
	g_string_append_printf(out, "memory: budget %" G_GUINT64_FORMAT " KB, last prediction "
			       "selected %u maps, %" G_GUINT64_FORMAT " KB; available %"
			       G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " KB\n",
			       snap->budget_kb, snap->selected_maps, snap->selected_kb,
			       snap->mem.available, snap->mem.total);
	g_string_append_printf(out, "last prefetch: %u files, %" G_GUINT64_FORMAT " KB read, %"
			       G_GUINT64_FORMAT " KB already cached, %u failed%s\n",
			       snap->readahead.files, snap->readahead.bytes / 1024,
			       snap->readahead.resident_bytes / 1024, snap->readahead.failed,
			       snap->readahead.superseded ? ", superseded" : "");
	append_ratio_line(out, "hits since the state began: ", &snap->hits_total);
	if (snap->have_hour) {
		/* In the daemon's first minute the span is seconds: "the last 0 min" read as nothing. */
		gint64 secs = snap->hour_us / G_USEC_PER_SEC;
		g_autofree char *label = secs < 60
			? g_strdup_printf("hits in the last %" G_GINT64_FORMAT " s: ", secs)
			: g_strdup_printf("hits in the last %" G_GINT64_FORMAT " min: ", secs / 60);

		append_ratio_line(out, label, &snap->hits_hour);
	}
	if (snap->watching)
		g_string_append_printf(out, "watch: %s; %" G_GUINT64_FORMAT " starts, %"
				       G_GUINT64_FORMAT " read sets learned, %" G_GUINT64_FORMAT
				       " overflows\n", snap->watch_text, snap->watch.starts,
				       snap->watch.learned, snap->watch.overflows);
	else
		g_string_append_printf(out, "watch: off (%s)\n", snap->watch_text);
	g_string_append_printf(out, "launch readahead: %" G_GUINT64_FORMAT " batches, %"
			       G_GUINT64_FORMAT " KB requested, %" G_GUINT64_FORMAT
			       " starts cached, %" G_GUINT64_FORMAT " rate-limited\n",
			       snap->launch.fetches, snap->launch.read_bytes / 1024,
			       snap->launch.cached, snap->launch.limited);
	g_string_append_printf(out, "daemon: %.1f ms CPU since start, peak RSS %" G_GUINT64_FORMAT
			       " KB\n", snap->cpu_us / 1000.0, snap->peak_rss_kb);
	return g_string_free(out, FALSE);
}

char *
report_top_text(const ReportSnapshot *snap, guint n, gboolean json)
{
	GString *out = g_string_new(NULL);

	n = MIN(n, snap->n_top);
	if (json) {
		g_autoptr(JsonWriter) w = json_writer_new(out);

		json_begin_object(w);
		json_key(w, "predicted");
		json_uint(w, snap->predicted);
		json_key(w, "top");
		json_begin_array(w);
		for (guint i = 0; i < n; i++) {
			json_begin_object(w);
			json_key(w, "path");
			json_string(w, snap->top[i].path);
			json_key(w, "probability");
			json_double(w, snap->top[i].probability);
			json_key(w, "maps");
			json_uint(w, snap->top[i].maps);
			json_key(w, "bytes");
			json_uint(w, snap->top[i].size);
			json_end_object(w);
		}
		json_end_array(w);
		json_end_object(w);
		return finish_json(out);
	}
	g_string_append_printf(out, "%u programs with a non-zero probability; the %u most likely:\n",
			       snap->predicted, n);
	if (n > 0)
		g_string_append(out, "probability     maps         KB  program\n");
	for (guint i = 0; i < n; i++) {
		g_autofree char *path = report_path_text(snap->top[i].path);

		g_string_append_printf(out, "     %.4f %8u %10" G_GUINT64_FORMAT "  %s\n",
				       snap->top[i].probability, snap->top[i].maps,
				       snap->top[i].size / 1024, path);
	}
	return g_string_free(out, FALSE);
}

/* Whether path names program: the same path, or program is its file name. */
static gboolean
path_matches(const char *path, const char *program)
{
	const char *slash;

	if (strcmp(path, program) == 0)
		return TRUE;
	if (strchr(program, '/'))
		return FALSE;
	slash = strrchr(path, '/');
	return slash && strcmp(slash + 1, program) == 0;
}

static void
hits_row_text(GString *out, const ReportHits *h)
{
	g_autofree char *path = report_path_text(h->path);

	g_string_append_printf(out, "%8" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %8.1f%% %8.1f%%  %s\n",
			       h->hits.starts, h->hits.checks, 100 * exe_hits_resident_ratio(&h->hits),
			       100 * exe_hits_prefetched_ratio(&h->hits), path);
}

static void
hits_row_json(JsonWriter *w, const ReportHits *h)
{
	json_begin_object(w);
	json_key(w, "path");
	json_string(w, h->path);
	json_key(w, "hits");
	json_hits(w, &h->hits);
	json_end_object(w);
}

#define HITS_HEADER "  starts measured resident prefetched  program\n"

char *
report_hits_text(const ReportSnapshot *snap, const char *program, gboolean json,
		 char **error_text)
{
	GString *out;
	const ReportHits *found = NULL;

	if (program) {
		guint matches = 0;

		for (guint i = 0; i < snap->n_hits; i++) {
			if (strcmp(snap->hits[i].path, program) == 0) {
				found = &snap->hits[i];
				matches = 1;
				break;
			}
			if (path_matches(snap->hits[i].path, program)) {
				found = &snap->hits[i];
				matches++;
			}
		}
		if (matches != 1) {
			*error_text = matches == 0
				? g_strdup_printf("no start of %s was seen", program)
				: g_strdup_printf("%u started programs are called %s: give the path",
						  matches, program);
			return NULL;
		}
	}
	out = g_string_new(NULL);
	if (json) {
		g_autoptr(JsonWriter) w = json_writer_new(out);

		if (found) {
			hits_row_json(w, found);
			return finish_json(out);
		}
		json_begin_object(w);
		json_key(w, "total");
		json_hits(w, &snap->hits_total);
		json_key(w, "programs");
		json_begin_array(w);
		for (guint i = 0; i < snap->n_hits && i < REPORT_HITS_MAX; i++)
			hits_row_json(w, &snap->hits[i]);
		json_end_array(w);
		json_end_object(w);
		return finish_json(out);
	}
	if (found) {
		g_string_append(out, HITS_HEADER);
		hits_row_text(out, found);
		return g_string_free(out, FALSE);
	}
	append_ratio_line(out, "total: ", &snap->hits_total);
	if (snap->n_hits > 0)
		g_string_append(out, HITS_HEADER);
	for (guint i = 0; i < snap->n_hits && i < REPORT_HITS_MAX; i++)
		hits_row_text(out, &snap->hits[i]);
	if (snap->n_hits > REPORT_HITS_MAX)
		g_string_append_printf(out, "(%u more)\n", snap->n_hits - REPORT_HITS_MAX);
	return g_string_free(out, FALSE);
}

char *
report_status_line(const ReportSources *src, const ExeHits *total)
{
	GString *out = g_string_new(NULL);

	if (!src->conf->dopredict) {
		g_string_append(out, "Not prefetching (dopredict off)");
	} else if (src->pause != PROPHET_PREFETCH) {
		g_autofree char *why = prophet_pause_describe(src->pause, src->conf);

		g_string_append_printf(out, "Paused: %s", why);
	} else {
		g_string_append(out, "Prefetching");
	}
	g_string_append_printf(out, "; %u programs, %u maps", g_hash_table_size(src->model->exes),
			       g_hash_table_size(src->model->maps));
	if (total->checks > 0)
		g_string_append_printf(out, "; hits %.0f%% resident, %.0f%% prefetched",
				       100 * exe_hits_resident_ratio(total),
				       100 * exe_hits_prefetched_ratio(total));
	else
		g_string_append(out, "; no start measured yet");
	return g_string_free(out, FALSE);
}

/* ---- explain ---- */

static const char *const reason_names[REPORT_N_REASONS] = {
	[REPORT_REASON_PREFETCHED] = "prefetched",
	[REPORT_REASON_NOT_LEARNED] = "not-learned",
	[REPORT_REASON_PREFIX] = "prefix",
	[REPORT_REASON_TOO_SMALL] = "too-small",
	[REPORT_REASON_RUNNING] = "running",
	[REPORT_REASON_NO_BID] = "no-bid",
	[REPORT_REASON_BELOW_LINE] = "below-line",
	[REPORT_REASON_PAUSED] = "paused",
	[REPORT_REASON_NO_PREDICT] = "no-predict",
	[REPORT_REASON_CACHED] = "cached",
	[REPORT_REASON_STALE] = "stale",
	[REPORT_REASON_SUCCESSOR] = "successor",
	[REPORT_REASON_SESSION_OPENER] = "session-opener",
	[REPORT_REASON_NOT_PROBED] = "not-probed",
	[REPORT_REASON_FREQUENCY] = "frequency",
	[REPORT_REASON_HANDOFF] = "handoff",
};

const char *
report_reason_name(ReportReason reason)
{
	g_return_val_if_fail(reason < REPORT_N_REASONS, "unknown");
	return reason_names[reason];
}

static void
add_finding(ReportExplain *ex, ReportReason reason, const char *format, ...) G_GNUC_PRINTF(3, 4);

static void
add_finding(ReportExplain *ex, ReportReason reason, const char *format, ...)
{
	ReportFinding finding = { reason, NULL };
	va_list args;

	va_start(args, format);
	finding.text = g_strdup_vprintf(format, args);
	va_end(args);
	g_array_append_val(ex->findings, finding);
}

static void
finding_clear(gpointer data)
{
	g_free(((ReportFinding *)data)->text);
}

/* The one exe program names, or NULL with *ambiguous set to the number of candidates. */
static Exe *
find_exe(const Model *model, const char *program, guint *matches)
{
	Exe *exe = model_lookup_exe(model, program), *found = NULL;
	GHashTableIter iter;
	gpointer value;

	*matches = exe ? 1 : 0;
	if (exe || strchr(program, '/'))
		return exe;
	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		if (path_matches(((Exe *)value)->path, program)) {
			found = value;
			(*matches)++;
		}
	}
	return *matches == 1 ? found : NULL;
}

/* P(needed soon) of a map from its last score; 0 if the last scoring did not reach it. */
static double
map_probability(const Model *model, const Map *map)
{
	if (map->prophet.score_stamp != model->score_stamp || !(map->prophet.lnprob < 0))
		return 0.0;
	return -expm1(map->prophet.lnprob);
}

static void
explain_unknown(ReportExplain *ex, const ReportSources *src, const char *program)
{
	const BadExe *bad = g_hash_table_lookup(src->model->bad_exes, program);
	gboolean rejected = program[0] == '/' && !conf_prefix_accepts(src->conf->exeprefix, program);

	if (!rejected && !bad)
		add_finding(ex, REPORT_REASON_NOT_LEARNED,
			    "the model does not know it: no scan or exec event has seen it run "
			    "long enough since the state began, or it was forgotten after maxage");
	else
		add_finding(ex, REPORT_REASON_NOT_LEARNED, "the model does not know it");
	if (rejected)
		add_finding(ex, REPORT_REASON_PREFIX, "the exeprefix list rejects its path");
	if (bad)
		add_finding(ex, REPORT_REASON_TOO_SMALL,
			    "it was found too small to learn: %" G_GUINT64_FORMAT " KB of maps, "
			    "minsize is %" G_GINT64_FORMAT " KB", bad->size / 1024,
			    src->conf->minsize / 1024);
}

/*
 * The largest bid exe gets as a successor of another running program
 * than the last start (prophet_bid_successors(), PROPHET_RUNNING_SUCC),
 * in one line; none if it follows none of them.
 */
static gboolean
explain_running_successor(ReportExplain *ex, const Model *model, const Exe *exe)
{
	const Exe *best = NULL;
	const ExeSucc *best_succ = NULL;
	g_autofree char *name = NULL;
	g_autofree char *text = NULL;

	for (guint r = 0; r < model->running->len; r++) {
		const Exe *z = g_ptr_array_index(model->running, r);

		if (z == model->last_start)
			continue;
		for (guint i = 0; i < z->succ->len; i++) {
			const ExeSucc *s = &g_array_index(z->succ, ExeSucc, i);

			if (s->next == exe &&
			    (!best_succ || s->count / (s->chances + 1) >
					   best_succ->count / (best_succ->chances + 1))) {
				best = z;
				best_succ = s;
			}
		}
	}
	if (!best)
		return FALSE;
	name = g_path_get_basename(best->path);
	text = report_path_text(name);
	add_finding(ex, REPORT_REASON_SUCCESSOR,
		    "may follow %s, which runs: next after it in %.4g of its %.4g chances",
		    text, (double)best_succ->count, (double)best_succ->chances);
	return TRUE;
}

/*
 * One finding if exe is among from's successors: "next after FROM<what>
 * in N of its M chances". The caller's what says which start from is.
 */
static gboolean
explain_after(ReportExplain *ex, const Exe *from, const Exe *exe, const char *what)
{
	for (guint i = 0; i < from->succ->len; i++) {
		const ExeSucc *s = &g_array_index(from->succ, ExeSucc, i);
		g_autofree char *name = NULL;
		g_autofree char *text = NULL;

		if (s->next != exe)
			continue;
		name = g_path_get_basename(from->path);
		text = report_path_text(name);
		add_finding(ex, REPORT_REASON_SUCCESSOR, "next after %s%s in %.4g of its %.4g chances",
			    text, what, (double)s->count, (double)s->chances);
		return TRUE;
	}
	return FALSE;
}

/*
 * exe's bid as a successor of model->free_start, the last free choice,
 * when habits started after it (prophet_bid_successors()), in one line.
 */
static gboolean
explain_free_successor(ReportExplain *ex, const Model *model, const Exe *exe)
{
	const Exe *free_start = model->free_start;

	if (!free_start || free_start == model->last_start)
		return FALSE;
	return explain_after(ex, free_start, exe, ", the last start that was no habit,");
}

/*
 * The successor bid of exe, as prophet_bid_successors() makes it, in one
 * line: after a quiet spell the programs that open sessions bid, else
 * the programs that followed the last start, or else those that followed
 * the last free choice (model->free_start), or another running program,
 * or else a session opener, in case the user went away. Counts are aged, so shown
 * with up to 4 digits ("5", "4.871").
 */
static void
explain_successor(ReportExplain *ex, const ReportSources *src, const Exe *exe)
{
	const Model *model = src->model;
	const Exe *last = model->last_start;
	double quiet, away;

	if (!src->conf->successor || !last || ex->running)
		return;
	quiet = model_quiet(model);
	if (quiet > 0 && (double)(model->time - model->last_start_time) >= quiet) {
		if (exe->quiet_starts > 0)
			add_finding(ex, REPORT_REASON_SESSION_OPENER,
				    "opens a session: the first start after a quiet spell in %.4g of %.4g",
				    exe->quiet_starts, model->quiet_total);
		return;
	}
	if (explain_after(ex, last, exe, ""))
		return;
	if (explain_free_successor(ex, model, exe) || explain_running_successor(ex, model, exe))
		return;
	away = prophet_away_chance(model);
	if (exe->quiet_starts > 0 && away > 0)
		add_finding(ex, REPORT_REASON_SESSION_OPENER,
			    "may open a session, if the user went away (%.1f%%): the first start "
			    "after a quiet spell in %.4g of %.4g", 100 * away, exe->quiet_starts,
			    model->quiet_total);
}

/*
 * The largest handoff bid exe gets (prophet_bid_handoffs()), in one line:
 * the running program whose stops it habitually started at, with the
 * largest share of them.
 */
static void
explain_handoff(ReportExplain *ex, const ReportSources *src, const Exe *exe)
{
	const Model *model = src->model;
	const Exe *best = NULL;
	const ExeHandoff *best_h = NULL;
	g_autofree char *name = NULL;
	g_autofree char *text = NULL;

	if (!src->conf->successor || ex->running)
		return;
	for (guint r = 0; r < model->running->len; r++) {
		const Exe *x = g_ptr_array_index(model->running, r);

		for (guint i = 0; i < x->handoff->len; i++) {
			const ExeHandoff *h = &g_array_index(x->handoff, ExeHandoff, i);

			if (h->next == exe && model_is_handoff_habit(x, h) &&
			    (!best_h || h->count / (x->stops + 1) > best_h->count / (best->stops + 1))) {
				best = x;
				best_h = h;
			}
		}
	}
	if (!best)
		return;
	name = g_path_get_basename(best->path);
	text = report_path_text(name);
	add_finding(ex, REPORT_REASON_HANDOFF,
		    "may start as %s stops, which runs: started as it stopped at %.4g of its %.4g stops",
		    text, (double)best_h->count, best->stops);
}

/*
 * The frequency expert's part in exe's probability (prophet_bid_frequency()),
 * in one line: its share of the stopped programs' starts at the last
 * scoring and the weight the starts so far gave that expert.
 */
static void
explain_frequency(ReportExplain *ex, const ReportSources *src, const Exe *exe)
{
	const Model *model = src->model;

	if (!src->conf->frequency || ex->running || exe->expert_stamp != model->score_stamp ||
	    !(exe->expert_freq > 0))
		return;
	add_finding(ex, REPORT_REASON_FREQUENCY,
		    "%.1f%% of the stopped programs' starts were its; ranking by frequency weighs "
		    "%.2f against the model's %.2f, from how well each foretold the starts seen",
		    100.0 * exe->expert_freq, model->freq_weight, 1 - model->freq_weight);
}

ReportExplain *
report_explain(const ReportSources *src, const char *program, gboolean probe,
	       char **error_text)
{
	ReportExplain *ex;
	Model *model = src->model;
	g_autoptr(GPtrArray) selected = NULL;
	g_autoptr(GHashTable) chosen = NULL;
	guint64 used_kb = 0;
	double best = 0.0;
	guint matches;
	Exe *exe;

	exe = find_exe(model, program, &matches);
	if (!exe && matches > 1) {
		if (error_text)
			*error_text = g_strdup_printf("%u learned programs are called %s: give the path",
						      matches, program);
		return NULL;
	}
	ex = g_new0(ReportExplain, 1);
	ex->program = g_strdup(program);
	ex->findings = g_array_new(FALSE, FALSE, sizeof(ReportFinding));
	g_array_set_clear_func(ex->findings, finding_clear);
	if (!exe) {
		explain_unknown(ex, src, program);
		return ex;
	}
	ex->learned = TRUE;
	ex->path = g_strdup(exe->path);
	ex->running = exe_is_running(model, exe);
	ex->probability = ex->running ? 0.0 : prophet_exe_probability(exe);
	ex->size = exe->size;
	ex->maps = exe->exemaps->len;

	/* The last scoring's selection, as prophet_select() made it for the same budget. */
	selected = prophet_select(model, src->budget_kb, &used_kb);
	chosen = g_hash_table_new(NULL, NULL);
	ex->line = PROPHET_MIN_PROB;
	for (guint i = 0; i < selected->len; i++) {
		const Map *map = selected->pdata[i];

		g_hash_table_add(chosen, (gpointer)map);
		ex->line = map_probability(model, map);
	}
	for (guint i = 0; i < exe->exemaps->len; i++) {
		const Map *map = g_array_index(exe->exemaps, ExeMap, i).map;

		if (map->learn.stale)
			ex->maps_stale++;
		if (g_hash_table_contains(chosen, map)) {
			ex->maps_selected++;
			ex->selected_bytes += map->length;
		}
		best = MAX(best, map_probability(model, map));
	}

	if (!src->conf->dopredict)
		add_finding(ex, REPORT_REASON_NO_PREDICT, "prediction is off (dopredict = false)");
	if (src->pause != PROPHET_PREFETCH) {
		g_autofree char *why = prophet_pause_describe(src->pause, src->conf);

		add_finding(ex, REPORT_REASON_PAUSED, "prefetching is paused: %s", why);
	}
	if (ex->running)
		add_finding(ex, REPORT_REASON_RUNNING,
			    "it runs now: its files are in use, so in the page cache; "
			    "it is prefetched for its next start once it stops");
	else if (ex->maps_selected > 0)
		add_finding(ex, REPORT_REASON_PREFETCHED,
			    "%u of its %u maps (%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
			    " KB) are in the selection: probability %.4f, the line is %.4f "
			    "(budget %" G_GUINT64_FORMAT " KB, %" G_GUINT64_FORMAT " KB used)",
			    ex->maps_selected, ex->maps, ex->selected_bytes / 1024, ex->size / 1024,
			    ex->probability, ex->line, src->budget_kb, used_kb);
	else if (!(exe->lnprob < 0) && best <= 0.0)
		add_finding(ex, REPORT_REASON_NO_BID,
			    "no chain bids for it this cycle: no program it runs with or after is "
			    "running, and its base rate rounds to nothing");
	else
		add_finding(ex, REPORT_REASON_BELOW_LINE,
			    "below the budget line: probability %.4f, its most likely map %.6f, "
			    "the line is %.6f (budget %" G_GUINT64_FORMAT " KB, %" G_GUINT64_FORMAT
			    " KB used; maps below %.4f are never read)",
			    ex->probability, best, ex->line, src->budget_kb, used_kb, PROPHET_MIN_PROB);
	explain_successor(ex, src, exe);
	explain_handoff(ex, src, exe);
	explain_frequency(ex, src, exe);
	if (ex->maps_stale > 0)
		add_finding(ex, REPORT_REASON_STALE,
			    "%u of its %u maps are stale: their files are gone or were replaced",
			    ex->maps_stale, ex->maps);
	if (probe) {
		WatchMeasure m = watch_measure_exe(exe, model->prefetch_seq, WATCH_PROBE_CACHE);

		report_explain_probed(ex, m.probed, m.resident);
	}
	return ex;
}

void
report_explain_probed(ReportExplain *ex, guint64 probed, guint64 resident)
{
	g_return_if_fail(ex != NULL);

	ex->probed_bytes = probed;
	ex->resident = resident;
	ex->probed = ex->probed_bytes > 0;
	/* Nearly all: a few pages of a large set are evicted all the time. */
	if (ex->probed && ex->resident >= ex->probed_bytes / 100 * 95)
		add_finding(ex, REPORT_REASON_CACHED,
			    "already cached: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
			    " KB of its files are resident", ex->resident / 1024,
			    ex->probed_bytes / 1024);
}

void
report_explain_unprobed(ReportExplain *ex, const char *why)
{
	g_return_if_fail(ex != NULL && why != NULL);

	add_finding(ex, REPORT_REASON_NOT_PROBED, "its files' residency was not measured: %s", why);
}

void
report_explain_free(ReportExplain *explain)
{
	if (!explain)
		return;
	g_free(explain->program);
	g_free(explain->path);
	g_array_unref(explain->findings);
	g_free(explain);
}

char *
report_explain_text(const ReportExplain *ex, gboolean json)
{
	GString *out = g_string_new(NULL);

	if (json) {
		g_autoptr(JsonWriter) w = json_writer_new(out);

		json_begin_object(w);
		json_key(w, "program");
		json_string(w, ex->program);
		json_key(w, "path");
		json_string(w, ex->path);
		json_key(w, "learned");
		json_bool(w, ex->learned);
		json_key(w, "reason");
		json_string(w, ex->findings->len > 0
			    ? report_reason_name(g_array_index(ex->findings, ReportFinding, 0).reason)
			    : NULL);
		if (ex->learned) {
			json_key(w, "running");
			json_bool(w, ex->running);
			json_key(w, "probability");
			json_double(w, ex->probability);
			json_key(w, "line");
			json_double(w, ex->line);
			json_key(w, "maps");
			json_uint(w, ex->maps);
			json_key(w, "maps_selected");
			json_uint(w, ex->maps_selected);
			json_key(w, "maps_stale");
			json_uint(w, ex->maps_stale);
			json_key(w, "bytes");
			json_uint(w, ex->size);
			json_key(w, "selected_bytes");
			json_uint(w, ex->selected_bytes);
			json_key(w, "resident_bytes");
			if (ex->probed)
				json_uint(w, ex->resident);
			else
				json_null(w);
			json_key(w, "probed_bytes");
			json_uint(w, ex->probed_bytes);
		}
		json_key(w, "findings");
		json_begin_array(w);
		for (guint i = 0; i < ex->findings->len; i++) {
			const ReportFinding *f = &g_array_index(ex->findings, ReportFinding, i);

			json_begin_object(w);
			json_key(w, "reason");
			json_string(w, report_reason_name(f->reason));
			json_key(w, "text");
			json_string(w, f->text);
			json_end_object(w);
		}
		json_end_array(w);
		json_end_object(w);
		return finish_json(out);
	}
	{
		g_autofree char *name = report_path_text(ex->path ? ex->path : ex->program);

		g_string_append_printf(out, "%s: %s\n", name,
				       !ex->learned ? "not prefetched"
				       : ex->findings->len > 0 &&
					 g_array_index(ex->findings, ReportFinding, 0).reason ==
					 REPORT_REASON_PREFETCHED
				       ? "prefetched" : "not prefetched now");
	}
	for (guint i = 0; i < ex->findings->len; i++) {
		const ReportFinding *f = &g_array_index(ex->findings, ReportFinding, i);

		g_string_append_printf(out, "  %-11s %s\n", report_reason_name(f->reason), f->text);
	}
	return g_string_free(out, FALSE);
}
