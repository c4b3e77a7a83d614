/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Cycle: the stages of one cycle in order, for every driver.
 *
 * The daemon used to run this sequence from its timers and again from
 * --once, and the replay ran a copy of it; now all three run this code
 * and differ only in their sources (cycle.h). The halves keep the
 * daemon's clock: the scan at model time T, learn and the prediction at
 * T + cycle/2 (whole seconds, so a 1-second cycle has a first half of 0),
 * the next scan at T + cycle.
 */
#include "config.h"

#include "cycle.h"

#include "log.h"
#include "prophet.h"

struct Cycle {
	Model *model;             /* borrowed */
	const Conf *conf;         /* borrowed */
	CycleSources sources;     /* copied; the reader is borrowed */
	Scan *scan;
	Learn *learn;
	MountNs *mountns;         /* shared by the scan and learn */
	CyclePrediction last;
	guint count;              /* updates run */
	LogLimit scan_log;        /* "scan failed" repeats every cycle while /proc is broken */
};

Cycle *
cycle_new(Model *model, const Conf *conf, const CycleSources *sources)
{
	Cycle *cycle;

	g_return_val_if_fail(model != NULL, NULL);
	g_return_val_if_fail(conf != NULL, NULL);
	g_return_val_if_fail(sources != NULL && sources->plan != NULL, NULL);
	g_return_val_if_fail(sources->reader != NULL && sources->reader->start != NULL, NULL);

	cycle = g_new0(Cycle, 1);
	cycle->model = model;
	cycle->conf = conf;
	cycle->sources = *sources;
	cycle->scan = scan_new();
	cycle->learn = learn_new();
	/*
	 * Used by scan_proc() and learn_proc_maps() only: a replay, which
	 * scans a trace and takes maps from it, never asks it.
	 */
	cycle->mountns = mountns_new();
	scan_set_mountns(cycle->scan, cycle->mountns);
	learn_set_mountns(cycle->learn, cycle->mountns);
	cycle->scan_log = (LogLimit)LOG_LIMIT_INIT("scan", G_LOG_LEVEL_WARNING, 5, 3600);
	return cycle;
}

void
cycle_free(Cycle *cycle)
{
	if (!cycle)
		return;
	scan_free(cycle->scan);
	learn_free(cycle->learn);
	mountns_free(cycle->mountns);
	g_free(cycle);
}

void
cycle_set_conf(Cycle *cycle, const Conf *conf)
{
	g_return_if_fail(cycle != NULL);
	g_return_if_fail(conf != NULL);

	cycle->conf = conf;
}

Scan *
cycle_get_scan(Cycle *cycle)
{
	g_return_val_if_fail(cycle != NULL, NULL);
	return cycle->scan;
}

Learn *
cycle_get_learn(Cycle *cycle)
{
	g_return_val_if_fail(cycle != NULL, NULL);
	return cycle->learn;
}

MountNs *
cycle_get_mountns(Cycle *cycle)
{
	g_return_val_if_fail(cycle != NULL, NULL);
	return cycle->mountns;
}

const CyclePrediction *
cycle_get_prediction(const Cycle *cycle)
{
	g_return_val_if_fail(cycle != NULL, NULL);
	return &cycle->last;
}

guint
cycle_get_count(const Cycle *cycle)
{
	g_return_val_if_fail(cycle != NULL, 0);
	return cycle->count;
}

static void
stage_done(Cycle *cycle, CycleStage stage)
{
	if (cycle->sources.stage_done)
		cycle->sources.stage_done(cycle->sources.data, stage);
}

/* Whole seconds: the model clock counts whole seconds. */
static gint64
first_half(const Conf *conf)
{
	return conf->cycle / 2;
}

void
cycle_scan_half(Cycle *cycle)
{
	g_autoptr(GError) error = NULL;
	const Conf *conf;
	gboolean ok;

	g_return_if_fail(cycle != NULL);

	conf = cycle->conf;
	if (!conf->doscan)
		return;  /* model time only runs while the model is watching */
	if (cycle->sources.scan)
		ok = cycle->sources.scan(cycle->sources.data, cycle->scan, cycle->model, conf,
					 cycle->model->time, &error);
	else
		ok = scan_proc(cycle->scan, cycle->model, conf, cycle->model->time, &error);
	if (!ok)
		log_limited(&cycle->scan_log, G_LOG_LEVEL_WARNING, "scan failed: %s",
			    error ? error->message : "unknown error");
	else
		log_limit_flush(&cycle->scan_log, g_get_monotonic_time());
	stage_done(cycle, CYCLE_SCAN);
	cycle->model->time += first_half(conf);
}

static void
log_predictions(const Model *model, GPtrArray *selected)
{
	if (log_detail(9)) {
		GHashTableIter iter;
		gpointer value;

		g_hash_table_iter_init(&iter, model->exes);
		while (g_hash_table_iter_next(&iter, NULL, &value)) {
			const Exe *exe = value;

			if (exe->lnprob < 0)
				g_debug("lnprob %8.4f  %s", exe->lnprob, exe->path);
		}
	}
	if (log_detail(10)) {
		for (guint i = 0; i < selected->len; i++) {
			const Map *map = selected->pdata[i];

			g_debug("selected %8.4f  %s [%" G_GUINT64_FORMAT ", +%" G_GUINT64_FORMAT ")",
				map->prophet.lnprob, map->path, map->offset, map->length);
		}
	}
}

/*
 * The read step: the files of the selection are checked first (a map
 * whose file is gone or was replaced is left out), and what the reader
 * starts to read counts as the last prefetch for the hit figures of the
 * starts that follow.
 */
static void
read_selection(Cycle *cycle, GPtrArray *selected)
{
	Model *model = cycle->model;
	g_autoptr(GPtrArray) maps = g_ptr_array_sized_new(selected->len);
	guint stale;

	stale = learn_check_files(cycle->learn, selected, model->time);
	if (stale > 0)
		g_debug("%u selected maps turned stale: their files are gone or were replaced", stale);
	for (guint i = 0; i < selected->len; i++) {
		Map *map = selected->pdata[i];

		if (!map->learn.stale)
			g_ptr_array_add(maps, map);
	}
	cycle->last.read = cycle->sources.reader->start(cycle->sources.data, maps, cycle->conf);
	cycle->last.read_called = TRUE;
	if (cycle->last.read != CYCLE_READ_STARTED)
		return;
	model->prefetch_seq++;
	for (guint i = 0; i < maps->len; i++)
		((Map *)maps->pdata[i])->cycle.prefetch_seq = model->prefetch_seq;
}

void
cycle_predict(Cycle *cycle)
{
	g_autoptr(GPtrArray) selected = NULL;
	CyclePlan plan = { 0 };

	g_return_if_fail(cycle != NULL);

	cycle->sources.plan(cycle->sources.data, cycle->conf, &plan);
	if (!plan.predict)
		return;
	/* Predicted even while paused, so that the dump shows what would be read. */
	prophet_score(cycle->model, cycle->conf);
	cycle->last.budget_kb = plan.budget_kb;
	cycle->last.read_called = FALSE;
	selected = prophet_select(cycle->model, plan.budget_kb, &cycle->last.selected_kb);
	cycle->last.selected_maps = selected->len;
	log_predictions(cycle->model, selected);
	stage_done(cycle, CYCLE_PREDICT);
	if (selected->len == 0 || !plan.read)
		return;
	read_selection(cycle, selected);
	stage_done(cycle, CYCLE_READ);
}

void
cycle_update_half(Cycle *cycle)
{
	const Conf *conf;

	g_return_if_fail(cycle != NULL);

	conf = cycle->conf;
	if (conf->doscan) {
		const ScanStats *seen = scan_get_stats(cycle->scan);
		const LearnStats *stats;

		learn_update(cycle->learn, cycle->scan, cycle->model, conf, cycle->model->time);
		stage_done(cycle, CYCLE_LEARN);
		stats = learn_get_stats(cycle->learn);
		g_debug("cycle %u at %" G_GINT64_FORMAT " s: %u processes, %u changed, "
			"%u admitted, %u too small, %u gone, %u refreshed (+%u -%u maps), "
			"%u maps stale",
			cycle->count, cycle->model->time, seen->processes, seen->changed,
			stats->admitted, stats->too_small, stats->gone, stats->refreshed,
			stats->maps_added, stats->maps_removed, stats->stale);
	}
	if (conf->dopredict)
		cycle_predict(cycle);
	cycle->count++;
	if (conf->doscan)
		cycle->model->time += conf->cycle - first_half(conf);
}

void
cycle_run(Cycle *cycle)
{
	cycle_scan_half(cycle);
	cycle_update_half(cycle);
}
