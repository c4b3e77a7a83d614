/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * preload: main() and the daemon's cycle.
 *
 * main() is a straight script: options, configuration, log, lock,
 * daemonize, signals, state, main loop, save, clean up. The cycle is two
 * alternating timers on the GLib main loop:
 *
 *   tick   (t)           scan /proc: which known exes run, which are new
 *   update (t + cycle/2) apply the scan to the model, admit new exes,
 *                        then predict and start the readahead
 *
 * Half a cycle separates the two so that a process seen starting has
 * mapped its libraries by the time its maps are read. preload 0.6.4
 * predicted right after the scan, from chains the scan had not updated
 * yet; predicting after the update reacts to a start half a cycle sooner.
 *
 * Signals arrive through a signalfd watched by the main loop, so no work
 * is done in a signal handler. g_unix_signal_add() would be the usual
 * GLib way, but it does not support SIGQUIT, which preload has always
 * treated like SIGTERM.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "cmdline.h"
#include "conf.h"
#include "control.h"
#include "cputime.h"
#include "cycle.h"
#include "heap.h"
#include "fsjob.h"
#include "launch.h"
#include "log.h"
#include "model.h"
#include "notify.h"
#include "power.h"
#include "proc.h"
#include "prophet.h"
#include "readahead.h"
#include "report.h"
#include "state.h"
#include "trace.h"
#include "watch.h"

/* Exit codes an init system can act on (see preload(8)). */
enum {
	EXIT_CLEAN = 0,
	EXIT_RUNTIME = 1,          /* could not daemonize, no signalfd */
	EXIT_BADUSAGE = EX_USAGE,  /* 64: bad command line */
	EXIT_RUNNING = EX_TEMPFAIL,/* 75: another instance holds the state */
	EXIT_BADCONFIG = EX_CONFIG,/* 78: configuration file or state directory unusable */
};

/* The stages of a cycle whose CPU time the dump reports. */
typedef enum {
	STAGE_SCAN,       /* /proc scan (and the trace) */
	STAGE_LEARN,      /* the model learns from the scan */
	STAGE_PREDICT,    /* memory figures, scoring and selection */
	STAGE_READAHEAD,  /* file checks, residency probes and inline reads */
	N_STAGES
} Stage;

static const char *const stage_names[N_STAGES] = { "scan", "learn", "predict", "readahead" };

typedef struct Daemon {
	Options opts;
	Conf *conf;
	Model *model;
	Cycle *cycle;            /* scan, learn, predict, read (cycle.h) */
	Launch *launch;          /* what an exec event means (launch.h) */
	TraceWriter *trace;      /* NULL unless recording a trace */
	Watch *watch;            /* exec and open events, NULL without them */
	WatchReader *watch_idle; /* the netfs reader of a watcher turned off, for the next one */
	char *watch_off;         /* why there is no watcher, for the dump */
	GMainLoop *loop;
	Control *control;        /* the control socket, NULL without one */
	Notify *notify;          /* systemd's notification socket */
	ReportHitLog *hit_log;   /* hit totals of the last hour */

	guint cycle_source;      /* the pending tick or update timer */
	guint autosave_source;
	gint64 autosave_interval;/* seconds the autosave timer was set for */
	int signal_fd;
	int lock_fd;

	/* last prediction, for the dump */
	ProcMemstat mem;
	gboolean have_pressure;  /* pressure holds this cycle's PSI figure */
	ProcPressure pressure;
	Power *power;            /* reads /sys/class/power_supply */
	PowerSource power_source;/* this cycle's, POWER_AC unless batterybudget < 100 */
	ProphetPause pause;      /* why prefetching is held back, or PROPHET_PREFETCH */
	gboolean idle_class;     /* the process runs in the idle I/O class */
	guint64 budget_kb;
	guint selected_maps;
	guint64 selected_kb;
	Readahead *readahead;       /* the reader, owned */
	FsJobPool *fsjobs;          /* the probes of learned files (serve() only), owned */
	FsJobStats fsjob_stats;     /* theirs, for the last report */
	ReadaheadStats last_readahead;
	gboolean readahead_pending; /* a newer prediction waits for the running batch */
	gboolean exiting;           /* no new readahead */
	gboolean left_behind;       /* at exit, a thread is still inside a file-system call */
	guint cycles;

	/* CPU time, microseconds: of the main thread per stage, of the process since start */
	gint64 stage_us[N_STAGES];
	gint64 stage_mark;       /* main thread CPU time when the running stage began */
	gint64 predict_us;       /* of the last prediction, for the log */
	gint64 start_cpu_us;
	/* readahead since start: batches, bytes requested and calls */
	guint64 batches;
	guint64 read_bytes;
	guint64 read_calls;

	/* Rate limits of the warnings a broken /proc or disk repeats every cycle */
	LogLimit mem_log;        /* cannot read memory figures */
	LogLimit read_log;       /* readahead: read errors */
	LogLimit odd_log;        /* readahead: odd files skipped */
} Daemon;

/* At most this many warnings of each cause per LOG_LIMIT_SECONDS. */
#define LOG_LIMIT_BURST 5
#define LOG_LIMIT_SECONDS 3600

/*
 * Adds the main thread's CPU time since *mark to stage, moves the mark and
 * returns the time added.
 */
static gint64
stage_add(Daemon *d, Stage stage, gint64 *mark)
{
	gint64 now = cputime_thread_us(), spent = now - *mark;

	d->stage_us[stage] += spent;
	*mark = now;
	return spent;
}

static void schedule_tick(Daemon *d, guint delay);
static void stop_trace(Daemon *d, const GError *error);
static void report_cycle(Daemon *d);

/* ---- state ---- */

static gboolean
save_state(Daemon *d)
{
	g_autoptr(GError) error = NULL;

	if (!d->opts.statefile || !*d->opts.statefile)
		return FALSE;
	/* Checked again: the directory may have been changed since the start. */
	if (!state_prepare_dir(d->opts.statefile, &error) ||
	    !state_save(d->model, d->opts.statefile, &error)) {
		heap_trim();
		g_warning("cannot save state: %s", error->message);
		return FALSE;
	}
	/* The save's plan and buffers are freed below the model: give them back. */
	heap_trim();
	g_info("state saved to %s", d->opts.statefile);
	return TRUE;
}

/*
 * A state file that cannot be loaded is kept aside, never fatal. One that
 * is unsafe to use (a symlink at its path) or cannot be read is left
 * where it is: the next save replaces it.
 */
static Model *
load_state(const char *path)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(StateFile) file = NULL;
	g_autofree char *moved_to = NULL;
	Model *model = NULL;
	gint64 started;

	if (!path || !*path)
		return model_new();
	started = g_get_monotonic_time();
	/* The heap is prepared only for a file whose checksum already matched. */
	file = state_file_open(path, &error);
	if (file) {
		guint64 size = state_file_size(file);

		/*
		 * A 0.6.4 file is mostly chains the import drops: its size
		 * would grow the heap to the cap for a model of a few MB.
		 */
		if (!state_file_is_legacy(file))
			heap_prepare_for_state(size);
		model = state_file_load(file, &error);
		heap_prepared();
	}
	if (model) {
		g_info("loaded state from %s in %.1f ms: %u exes, %u maps, %u chains",
		       path, (double)(g_get_monotonic_time() - started) / 1000.0,
		       g_hash_table_size(model->exes), g_hash_table_size(model->maps),
		       model->n_chains);
		return model;
	}
	g_warning("cannot load state: %s; starting with an empty model", error->message);
	if (g_error_matches(error, STATE_ERROR, STATE_ERROR_IO) ||
	    g_error_matches(error, STATE_ERROR, STATE_ERROR_UNSAFE))
		return model_new();
	g_clear_error(&error);
	if (state_move_aside(path, &moved_to, &error))
		g_warning("the unreadable state file was kept as %s", moved_to);
	else
		g_warning("cannot move the unreadable state file aside: %s", error->message);
	return model_new();
}

/* ---- the cycle ---- */

static void daemon_predict(Daemon *d);

static void
readahead_done(const ReadaheadStats *stats, gpointer user_data)
{
	Daemon *d = user_data;

	d->last_readahead = *stats;
	d->batches++;
	d->read_bytes += stats->bytes;
	d->read_calls += stats->syscalls;
	g_debug("readahead: %u requests in %u files (%u slices), %" G_GUINT64_FORMAT
		" KB requested in %" G_GUINT64_FORMAT " calls, %" G_GUINT64_FORMAT
		" KB already cached (%u ranges whole, %u of them spot-checked, %u not opened, %"
		G_GUINT64_FORMAT " probes), "
		"%u failed, %u skipped%s, %u not reached; %u directories warmed (%"
		G_GUINT64_FORMAT " entries)",
		stats->requests, stats->files, stats->slices, stats->bytes / 1024, stats->syscalls,
		stats->resident_bytes / 1024, stats->resident_ranges, stats->trusted_ranges,
		stats->unopened_ranges, stats->probes,
		stats->failed, stats->skipped, stats->superseded ? ", superseded" : "",
		stats->dropped, stats->dirs_warmed, stats->entries_warmed);
	if (d->readahead_pending && !d->exiting) {
		d->readahead_pending = FALSE;
		d->stage_mark = cputime_thread_us();
		daemon_predict(d);
	}
	/* Once: the class is the process's, it does not come back by itself. */
	if (stats->threads_not_idle > 0 && d->idle_class) {
		g_info("readahead: %u of %u threads were not in the idle I/O class",
		       stats->threads_not_idle, stats->threads);
		d->idle_class = FALSE;
	}
}

/*
 * Decides whether this cycle may prefetch, and logs only the changes:
 * one line when prefetching pauses, one when it resumes.
 */
static void
update_pause(Daemon *d)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *why = NULL;
	ProphetPause pause;

	d->have_pressure = FALSE;
	if (d->conf->maxpressure > 0) {
		if (proc_get_memory_pressure(&d->pressure, &error))
			d->have_pressure = TRUE;
		else if (!g_error_matches(error, PROC_ERROR, PROC_ERROR_UNAVAILABLE))
			g_debug("cannot read the memory pressure: %s, ignoring", error->message);
	}
	/* At most one reading per cycle, and none when the key ignores it. */
	d->power_source = d->conf->batterybudget < 100
		? power_get(d->power, cycle_get_count(d->cycle)) : POWER_AC;
	pause = prophet_pause(d->conf, &d->mem, d->have_pressure ? &d->pressure : NULL,
			      d->power_source);
	if (pause == d->pause)
		return;
	if (pause != PROPHET_PREFETCH) {
		why = prophet_pause_describe(pause, d->conf);
		if (d->pause == PROPHET_PREFETCH)
			g_info("prefetching paused: %s", why);
	} else {
		g_info("prefetching resumed: %s",
		       d->pause == PROPHET_PAUSE_BATTERY ? "on AC again" : "memory is available again");
	}
	d->pause = pause;
}

/* ---- the daemon's sources for the cycle (cycle.h) ---- */

/* The scan on /proc, recorded to the trace when one is kept. */
static gboolean
daemon_scan(gpointer data, Scan *scan, Model *model, const Conf *conf, gint64 now,
	    GError **error)
{
	Daemon *d = data;
	g_autoptr(GError) local = NULL;

	if (!scan_proc(scan, model, conf, now, error))
		return FALSE;
	if (d->trace) {
		ProcMemstat mem;
		gboolean have_mem = proc_get_memstat(&mem, NULL);

		if (!trace_writer_scan_model(d->trace, model, now, have_mem ? &mem : NULL, &local))
			stop_trace(d, local);
	}
	return TRUE;
}

/* The budget from this machine's memory; no prediction without its figures. */
static void
daemon_plan(gpointer data, const Conf *conf, CyclePlan *plan)
{
	Daemon *d = data;
	g_autoptr(GError) error = NULL;

	if (!proc_get_memstat(&d->mem, &error)) {
		log_limited(&d->mem_log, G_LOG_LEVEL_WARNING,
			    "cannot read memory figures: %s; not predicting this cycle", error->message);
		return;
	}
	update_pause(d);
	d->budget_kb = prophet_power_budget_kb(conf, prophet_budget_kb(conf, &d->mem),
					       d->power_source);
	plan->predict = TRUE;
	plan->read = d->pause == PROPHET_PREFETCH;
	plan->budget_kb = d->budget_kb;
}

static CycleRead
daemon_read(gpointer data, GPtrArray *maps, const Conf *conf)
{
	Daemon *d = data;
	ReadaheadOptions options = { 0 };
	GArray *requests = order_requests_new();

	for (guint i = 0; i < maps->len; i++) {
		const Map *map = maps->pdata[i];

		order_requests_add_file(requests, map->path, map->offset, map->length,
					map->file.dev, map->file.ino);
	}
	options.strategy = (SortStrategy)conf->sortstrategy;
	options.maxprocs = (int)conf->maxprocs;
	options.check_residency = conf->checkresidency;
	options.trust_us = READAHEAD_TRUST_US;
	options.vmstat_path = conf->trustvmstat ? "/proc/vmstat" : NULL;
	options.slice_bytes = (guint64)conf->slicekb * 1024;
	options.warm_dirs = conf->warmdirs;
	options.warning_limit = &d->read_log;
	options.notice_limit = &d->odd_log;
	if (readahead_start(d->readahead, requests, &options, readahead_done, d))
		return CYCLE_READ_STARTED;
	/* Refused (READAHEAD_MAX_STUCK threads blocked; counted): the next cycle tries again. */
	if (!readahead_busy(d->readahead))
		return CYCLE_READ_BUSY;
	/*
	 * The disk is slower than the cycle. This prediction is newer: the
	 * running batch stops after its reads in flight and readahead_done()
	 * predicts again and starts the new one.
	 */
	g_debug("the previous readahead is still running: superseding it");
	readahead_supersede(d->readahead);
	d->readahead_pending = TRUE;
	return CYCLE_READ_BUSY;
}

/* The main thread's CPU time per stage, for the dump. */
static void
daemon_stage_done(gpointer data, CycleStage stage)
{
	static const Stage stages[CYCLE_N_STAGES] = {
		[CYCLE_SCAN] = STAGE_SCAN, [CYCLE_LEARN] = STAGE_LEARN,
		[CYCLE_PREDICT] = STAGE_PREDICT, [CYCLE_READ] = STAGE_READAHEAD,
	};
	Daemon *d = data;
	gint64 spent = stage_add(d, stages[stage], &d->stage_mark);

	if (stage == CYCLE_PREDICT)
		d->predict_us = spent;
	else if (stage == CYCLE_READ)
		g_debug("main thread CPU: prediction %.2f ms, readahead %.2f ms",
			d->predict_us / 1000.0, spent / 1000.0);
}

static const CycleReader daemon_reader = { daemon_read };

/* Predicts (and reads) now, keeping the figures the dump shows. */
static void
daemon_predict(Daemon *d)
{
	const CyclePrediction *last;

	cycle_predict(d->cycle);
	last = cycle_get_prediction(d->cycle);
	d->selected_maps = last->selected_maps;
	d->selected_kb = last->selected_kb;
}

/* A trace that cannot be written is given up, once, with a warning. */
static void
stop_trace(Daemon *d, const GError *error)
{
	if (!d->trace)
		return;
	if (error)
		g_warning("stopped recording the trace: %s", error->message);
	trace_writer_detach(d->trace, cycle_get_learn(d->cycle));
	g_clear_pointer(&d->trace, trace_writer_free);
}

static void
start_trace(Daemon *d)
{
	g_autoptr(GError) error = NULL;
	const char *path = d->opts.tracefile ? d->opts.tracefile : d->conf->tracefile;
	Learn *learn = cycle_get_learn(d->cycle);

	if (!path || !*path)
		return;
	d->trace = trace_writer_open(path, d->conf->cycle, &error);
	/* The exes already known must be in the trace, or a replay never admits them. */
	if (d->trace && trace_writer_known_maps(d->trace, d->model, &error)) {
		trace_writer_attach(d->trace, learn, learn_proc_maps, learn);
		g_message("recording a trace to %s", path);
		return;
	}
	g_warning("cannot record a trace: %s", error->message);
	g_clear_pointer(&d->trace, trace_writer_free);
}

static void
close_trace(Daemon *d)
{
	g_autoptr(GError) error = NULL;

	if (!d->trace)
		return;
	trace_writer_detach(d->trace, cycle_get_learn(d->cycle));
	if (!trace_writer_close(g_steal_pointer(&d->trace), &error))
		g_warning("cannot finish the trace: %s", error->message);
}

/* What the rate limits held back is counted once their window is over. */
static void
flush_log_limits(Daemon *d)
{
	gint64 now = g_get_monotonic_time();

	log_limit_flush(&d->mem_log, now);
	log_limit_flush(&d->read_log, now);
	log_limit_flush(&d->odd_log, now);
}

/* ---- the two timers ---- */

static gboolean
on_update(gpointer user_data)
{
	Daemon *d = user_data;

	d->cycle_source = 0;
	d->stage_mark = cputime_thread_us();
	cycle_update_half(d->cycle);
	flush_log_limits(d);
	d->selected_maps = cycle_get_prediction(d->cycle)->selected_maps;
	d->selected_kb = cycle_get_prediction(d->cycle)->selected_kb;
	d->cycles = cycle_get_count(d->cycle);
	report_cycle(d);
	schedule_tick(d, (guint)d->conf->cycle - (guint)(d->conf->cycle / 2));
	return G_SOURCE_REMOVE;
}

static gboolean
on_tick(gpointer user_data)
{
	Daemon *d = user_data;
	guint half = (guint)(d->conf->cycle / 2);

	d->cycle_source = 0;
	d->stage_mark = cputime_thread_us();
	cycle_scan_half(d->cycle);
	/*
	 * A 1-second cycle has a half of 0 whole seconds (the model clock
	 * counts whole seconds, so the update still adds the full second).
	 * The processes just seen starting still get half a second to map
	 * their libraries, instead of an update in the same breath.
	 */
	d->cycle_source = half ? g_timeout_add_seconds(half, on_update, d)
			       : g_timeout_add(500, on_update, d);
	return G_SOURCE_REMOVE;
}

static void
schedule_tick(Daemon *d, guint delay)
{
	if (d->cycle_source)
		g_source_remove(d->cycle_source);
	d->cycle_source = delay ? g_timeout_add_seconds(delay, on_tick, d)
				: g_idle_add(on_tick, d);
}

static gboolean
on_autosave(gpointer user_data)
{
	Daemon *d = user_data;

	if (d->model->dirty)
		save_state(d);
	return G_SOURCE_CONTINUE;
}

static void
schedule_autosave(Daemon *d)
{
	if (d->autosave_source && d->autosave_interval == d->conf->autosave)
		return;
	if (d->autosave_source)
		g_source_remove(d->autosave_source);
	d->autosave_interval = d->conf->autosave;
	d->autosave_source = g_timeout_add_seconds((guint)d->conf->autosave, on_autosave, d);
}

/* ---- the watcher: starts and start-up reads as they happen ---- */

/* The hooks of the exec-event policy (launch.h). */
static void
launch_hold(gpointer data, gint64 until_us)
{
	Daemon *d = data;

	readahead_hold(d->readahead, until_us);
}

static LaunchHits
hits_of(const WatchMeasure *m)
{
	return (LaunchHits){
		.bytes = m->bytes,
		.prefetched = m->prefetched,
		.probed = m->probed,
		.resident = m->resident,
	};
}

/* A start's measurement on an fsjob worker. */
typedef struct MeasureJob {
	WatchMeasureSet *set;
	FsJobPool *pool;         /* borrowed: kept alive by the worker running the job */
	FsJobCtx *ctx;
} MeasureJob;

static void
measure_job_free(gpointer data)
{
	MeasureJob *job = data;

	watch_measure_set_free(job->set);
	g_free(job);
}

/* Files of a device that missed a deadline are not opened (counted as not probed). */
static gboolean
measure_enter(guint64 dev, gpointer data)
{
	MeasureJob *job = data;

	if (dev != 0 && fsjob_device_refused(job->pool, dev))
		return FALSE;
	fsjob_ctx_set_dev(job->ctx, dev);
	return TRUE;
}

/*
 * A file whose path leads into a network or FUSE mount is not opened
 * (netfs off); the others are named by the mount their path leads to.
 */
static gboolean
measure_skip(const char *path, guint64 *dev, gpointer data)
{
	guint64 here;

	if (learn_path_is_remote(data, path))
		return TRUE;
	here = learn_path_dev(data, path);
	if (here != 0)
		*dev = here;
	return FALSE;
}

static void
measure_run(FsJobCtx *ctx, gpointer data)
{
	MeasureJob *job = data;

	job->ctx = ctx;
	watch_measure_set_run(job->set, measure_enter, job);
}

/* The measured program's path and the daemon, for the result. */
typedef struct MeasureFor {
	Daemon *d;
	char *path;
} MeasureFor;

static void
measure_for_free(gpointer data)
{
	MeasureFor *f = data;

	g_free(f->path);
	g_free(f);
}

static void
measure_done(FsJobStatus status, gpointer data, gpointer user_data)
{
	MeasureFor *f = user_data;
	WatchMeasure m;
	LaunchHits hits;

	if (status != FSJOB_DONE)
		return;
	m = watch_measure_set_result(((MeasureJob *)data)->set);
	hits = hits_of(&m);
	launch_measured(f->d->launch, f->d->model, f->d->conf, f->path, &hits);
}

/*
 * The page cache probe opens the program's learned files, which a hung
 * mount can stall: on an fsjob worker when the daemon serves (the hits
 * come back through launch_measured()), at once with --once.
 */
static gboolean
launch_measure(gpointer data, const Exe *exe, guint64 prefetch_seq, LaunchHits *hits)
{
	Daemon *d = data;
	MeasureJob *job;
	MeasureFor *f;
	WatchMeasure m;

	if (!d->fsjobs) {
		m = watch_measure_exe(exe, prefetch_seq, WATCH_PROBE_CACHE);
		*hits = hits_of(&m);
		return TRUE;
	}
	job = g_new0(MeasureJob, 1);
	job->set = watch_measure_set_new(exe, prefetch_seq, measure_skip,
					 cycle_get_learn(d->cycle));
	job->pool = d->fsjobs;
	f = g_new0(MeasureFor, 1);
	f->d = d;
	f->path = g_strdup(exe->path);
	(void)fsjob_submit(d->fsjobs, watch_measure_set_dev(job->set), measure_run, job,
			   measure_job_free, measure_done, f, measure_for_free);
	return FALSE;
}

static void
launch_fetch_over(const ReadaheadStats *stats, gpointer user_data)
{
	Daemon *d = user_data;

	if (d->launch)
		launch_fetch_done(d->launch, stats->bytes);
	d->read_calls += stats->syscalls;
	d->read_bytes += stats->bytes;
	g_debug("launch readahead: %u requests in %u files, %" G_GUINT64_FORMAT
		" KB requested in %" G_GUINT64_FORMAT " calls, %" G_GUINT64_FORMAT
		" KB already cached or being read by the program, %" G_GUINT64_FORMAT
		" KB left to it (short runs), %u failed, %u skipped", stats->requests, stats->files,
		stats->bytes / 1024, stats->syscalls, stats->resident_bytes / 1024,
		stats->left_bytes / 1024, stats->failed, stats->skipped);
}

/*
 * The launch-time prefetch: the learned set of a program starting cold,
 * on the urgent thread (in on-disk order, as one slice, only its missing
 * pages), so the main loop never waits on the disk.
 */
static gboolean
launch_fetch_hook(gpointer data, const Exe *exe, GArray *requests)
{
	Daemon *d = data;
	ReadaheadOptions options = { 0 };

	/* Nor the files whose path leads into a network or FUSE mount (netfs off). */
	for (guint i = requests->len; i-- > 0;) {
		if (learn_path_is_remote(cycle_get_learn(d->cycle),
					 g_array_index(requests, OrderRequest, i).path))
			g_array_remove_index(requests, i);
	}
	if (d->exiting || requests->len == 0) {
		g_array_unref(requests);
		return FALSE;
	}
	options.strategy = (SortStrategy)d->conf->sortstrategy;
	options.maxprocs = (int)d->conf->maxprocs;
	options.check_residency = d->conf->checkresidency;
	options.slice_bytes = 0;
	options.warning_limit = &d->read_log;
	options.notice_limit = &d->odd_log;
	g_debug("%s started with its learned set not cached: reading %u ranges now", exe->path,
		requests->len);
	return readahead_start_urgent(d->readahead, requests, &options, launch_fetch_over, d);
}

/*
 * A program started: the launch policy (execpause, hit measurement) for a
 * known one, and for the scan, a run in this cycle however short.
 */
static void
on_watch_exec(const char *path, pid_t pid, gpointer user_data)
{
	Daemon *d = user_data;

	(void)pid;
	(void)launch_exec(d->launch, d->model, d->conf, path);
	if (d->conf->doscan && d->conf->learnexec)
		scan_saw_exec(cycle_get_scan(d->cycle), d->model, d->conf, path);
}

static gboolean
on_watch_learned(const char *exe, GArray *ranges, gpointer user_data)
{
	Daemon *d = user_data;
	LearnRead result;

	if (!d->conf->doscan)
		return FALSE;
	result = learn_read_set(cycle_get_learn(d->cycle), d->model, d->conf, exe, ranges,
				d->model->time);
	if (result == LEARN_READ_TOO_SMALL)
		scan_forget_exec(cycle_get_scan(d->cycle), exe);
	return result == LEARN_READ_ADDED || result == LEARN_READ_ADMITTED;
}

static gboolean
on_watch_filter(const char *exe, GPtrArray *files, gpointer user_data)
{
	Daemon *d = user_data;

	return d->conf->doscan && learn_read_filter(d->model, d->conf, exe, files);
}

/*
 * (Re)starts the watcher for the current configuration. Without it (not
 * root, no fanotify, both features off) the daemon learns from /proc
 * only, and says so once per attempt.
 */
static void
start_watch(Daemon *d)
{
	static const WatchCallbacks callbacks = { on_watch_exec, on_watch_learned,
						  on_watch_filter };
	g_autoptr(GError) error = NULL;

	g_clear_pointer(&d->watch_off, g_free);
	if (!d->conf->learnreads && !d->conf->learnexec) {
		/*
		 * Its netfs reader is kept (told to end) while its thread may
		 * be stuck on a dead server, so that turning the features on
		 * again hands it on rather than start a second one beside it.
		 */
		if (d->watch) {
			watch_reader_free(d->watch_idle);
			d->watch_idle = watch_retire(g_steal_pointer(&d->watch));
		}
		d->watch_off = g_strdup("learnreads and learnexec are off");
	} else if (!(d->watch = d->watch ? watch_renew(g_steal_pointer(&d->watch), d->conf,
						       &callbacks, d, &error)
					 : watch_resume(g_steal_pointer(&d->watch_idle), d->conf,
							&callbacks, d, &error))) {
		d->watch_off = g_strdup(error->message);
		g_warning("cannot watch program starts and file opens (%s): "
			  "working as a maps scanner", error->message);
	} else {
		g_info("%s", watch_describe(d->watch));
		if (d->fsjobs)
			watch_set_fsjob(d->watch, d->fsjobs);
	}
	/* Starts are counted where they are seen first. */
	learn_set_count_starts(cycle_get_learn(d->cycle), d->watch == NULL);
}

/* Two prefix lists alike; NULL is the empty list. */
static gboolean
prefixes_equal(char *const *a, char *const *b)
{
	guint i;

	for (i = 0; a && b && a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]) != 0)
			return FALSE;
	return (!a || !a[i]) && (!b || !b[i]);
}

/* Whether the keys the watcher was made from differ. */
static gboolean
watch_conf_changed(const Conf *a, const Conf *b)
{
	return a->learnreads != b->learnreads || a->learnexec != b->learnexec ||
	       a->startupwindow != b->startupwindow || a->maxreadfiles != b->maxreadfiles ||
	       a->maxreadkb != b->maxreadkb || a->cycle != b->cycle || a->netfs != b->netfs ||
	       !prefixes_equal(a->exeprefix, b->exeprefix) ||
	       !prefixes_equal(a->mapprefix, b->mapprefix);
}

/* ---- configuration ---- */

/*
 * Loads the configuration file over the compiled-in defaults. Returns
 * NULL if the file is unusable. A missing file at the default path is
 * not an error: preload runs on its defaults. On a reload, running is
 * the configuration in use: a key the file no longer sets goes back to
 * its default, as it would at a start, and a bad value keeps running's.
 */
static Conf *
load_conf(const Options *opts, const Conf *running)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) base = conf_new();
	g_autoptr(Conf) conf = conf_copy(base);
	gboolean loaded;

	if (!opts->conffile || !*opts->conffile)
		return g_steal_pointer(&conf);
	loaded = running ? conf_reload(conf, running, opts->conffile, &error)
			 : conf_load(conf, opts->conffile, &error);
	if (loaded)
		return g_steal_pointer(&conf);
	if (!opts->conffile_given && g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
		g_info("no configuration file %s, using the defaults", opts->conffile);
		return conf_copy(base);
	}
	g_critical("unusable configuration: %s", error->message);
	return NULL;
}

static gboolean
reload(Daemon *d)
{
	g_autoptr(GError) error = NULL;
	Conf *conf;

	notify_reloading(d->notify);
	/* Reopen first, so that after a logrotate this goes to the new file. */
	if (!log_reopen(&error)) {
		g_warning("cannot reopen the log: %s", error->message);
		g_clear_error(&error);
	}
	g_message("SIGHUP: reopened the log, reloading the configuration");
	/* A bad key keeps what it had; a key taken out of the file its default. */
	conf = load_conf(&d->opts, d->conf);
	if (!conf) {
		g_warning("keeping the previous configuration");
		notify_ready(d->notify);
		return FALSE;
	}
	{
		gboolean restart_watch = !d->opts.once && watch_conf_changed(d->conf, conf);

		conf_free(d->conf);
		d->conf = conf;
		cycle_set_conf(d->cycle, conf);
		if (restart_watch)
			start_watch(d);
		else if (d->watch)
			watch_remark(d->watch);  /* a file system mounted since is watched */
	}
	schedule_autosave(d);
	notify_ready(d->notify);
	return TRUE;
}

/* ---- reports: the SIGUSR1 dump, the control socket, systemd's STATUS= ---- */

static void
report_sources(Daemon *d, ReportSources *src)
{
	*src = (ReportSources){
		.model = d->model, .conf = d->conf, .cycles = d->cycles, .mem = &d->mem,
		.pressure = d->have_pressure ? &d->pressure : NULL, .pause = d->pause,
		.on_battery = d->power_source == POWER_BATTERY,
		.idle_class = d->idle_class, .budget_kb = d->budget_kb,
		.selected_maps = d->selected_maps, .selected_kb = d->selected_kb,
		.readahead = &d->last_readahead,
		.watch = d->watch ? watch_get_stats(d->watch) : NULL,
		.watch_text = d->watch ? watch_describe(d->watch) : d->watch_off,
		.n_stages = N_STAGES, .stage_names = stage_names, .stage_us = d->stage_us,
		.cpu_us = cputime_us(CLOCK_PROCESS_CPUTIME_ID) - d->start_cpu_us,
		.readahead_cpu_us = readahead_get_cpu_us(d->readahead),
		.batches = d->batches, .read_bytes = d->read_bytes, .read_calls = d->read_calls,
		.hit_log = d->hit_log,
		.mountns = mountns_get_stats(cycle_get_mountns(d->cycle)),
		.launch = d->launch ? launch_get_stats(d->launch) : NULL,
	};
	readahead_get_abandoned(d->readahead, &src->read_abandoned, &src->read_stuck,
				&src->read_refused);
	if (d->fsjobs) {
		fsjob_get_stats(d->fsjobs, &d->fsjob_stats);
		src->fsjobs = &d->fsjob_stats;
	}
}

static void
dump(Daemon *d)
{
	g_autoptr(ReportSnapshot) snap = NULL;
	ReportSources src;

	report_sources(d, &src);
	snap = report_snapshot_new(&src, 0);
	report_log_dump(snap);
}

/* After each cycle: a sample of the hit totals, and systemd's STATUS= if it changed. */
static void
report_cycle(Daemon *d)
{
	g_autofree char *line = NULL;
	ReportSources src;
	ExeHits total;

	report_sources(d, &src);
	report_total_hits(d->model, &total);
	report_hit_log_add(d->hit_log, g_get_monotonic_time(), &total);
	line = report_status_line(&src, &total);
	notify_status(d->notify, line);
}

/* An explanation waiting for its residency probe on an fsjob worker. */
typedef struct ExplainFor {
	ReportExplain *ex;
	gboolean json;
	ControlLater *later;
	const char *unprobed;    /* why no answer came, unless done had one */
} ExplainFor;

static void
explain_done(FsJobStatus status, gpointer data, gpointer user_data)
{
	ExplainFor *f = user_data;
	WatchMeasure m;

	if (status != FSJOB_DONE) {
		f->unprobed = "its files' file system did not answer within the deadline";
		return;
	}
	m = watch_measure_set_result(((MeasureJob *)data)->set);
	report_explain_probed(f->ex, m.probed, m.resident);
	f->unprobed = NULL;
}

/* Every way a job ends comes here once (done or not): the reply goes now. */
static void
explain_reply(gpointer user_data)
{
	ExplainFor *f = user_data;
	g_autofree char *text = NULL;

	if (f->unprobed)
		report_explain_unprobed(f->ex, f->unprobed);
	text = report_explain_text(f->ex, f->json);
	control_later_reply(f->later, TRUE, text);
	report_explain_free(f->ex);
	g_free(f);
}

/*
 * explain with its residency probe on an fsjob worker, as a start's
 * probe (launch_measure()): the program's learned files may lie on a
 * mount that no longer answers, and the main loop must not wait on it.
 */
static char *
explain_later(Daemon *d, const ControlRequest *req, gboolean *ok, ControlLater *later)
{
	char *error_text = NULL;
	ReportSources src;
	ReportExplain *ex;
	MeasureJob *job;
	ExplainFor *f;
	Exe *exe;

	report_sources(d, &src);
	ex = report_explain(&src, req->program, FALSE, &error_text);
	if (!ex) {
		*ok = FALSE;
		return error_text;
	}
	*ok = TRUE;
	exe = ex->learned ? model_lookup_exe(d->model, ex->path) : NULL;
	if (!exe) {
		char *text = report_explain_text(ex, req->json);

		report_explain_free(ex);
		return text;
	}
	job = g_new0(MeasureJob, 1);
	job->set = watch_measure_set_new(exe, d->model->prefetch_seq, measure_skip,
					 cycle_get_learn(d->cycle));
	job->pool = d->fsjobs;
	f = g_new0(ExplainFor, 1);
	f->ex = ex;
	f->json = req->json;
	f->later = later;
	/* Stays unless explain_done() runs: a refused job is neither run nor done. */
	f->unprobed = "a file system of its files missed a deadline lately, or the workers are busy";
	control_later_keep(later);
	(void)fsjob_submit(d->fsjobs, watch_measure_set_dev(job->set), measure_run, job,
			   measure_job_free, explain_done, f, explain_reply);
	return NULL;
}

static char *
on_control(const ControlRequest *req, gboolean *ok, ControlLater *later, gpointer user_data)
{
	Daemon *d = user_data;
	ReportSources src;

	switch (req->verb) {
	case CONTROL_VERB_EXPLAIN:
		if (d->fsjobs)
			return explain_later(d, req, ok, later);
		report_sources(d, &src);
		return control_answer(req, &src, ok);
	case CONTROL_VERB_SAVE:
		if (!*d->opts.statefile) {
			*ok = FALSE;
			return g_strdup("no state file is kept (-s '')");
		}
		*ok = save_state(d);
		return *ok ? control_done_text(req, "saved the state")
			   : g_strdup("cannot save the state: see the log");
	case CONTROL_VERB_RELOAD:
		*ok = reload(d);
		return *ok ? control_done_text(req, "reloaded the configuration and reopened the log")
			   : g_strdup("the configuration is unusable: kept the previous one (see the log)");
	default:
		report_sources(d, &src);
		return control_answer(req, &src, ok);
	}
}

static void
start_control(Daemon *d)
{
	g_autoptr(GError) error = NULL;

	if (!d->opts.controlfile || !*d->opts.controlfile)
		return;
	d->control = control_new(d->opts.controlfile, NULL, on_control, d, &error);
	if (!d->control)
		g_warning("no control socket: %s", error->message);
}

/* ---- signals ---- */

static const int handled_signals[] = { SIGHUP, SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGQUIT };

static gboolean
on_signal(gint fd, GIOCondition condition, gpointer user_data)
{
	Daemon *d = user_data;
	struct signalfd_siginfo info;
	ssize_t n;

	n = read(fd, &info, sizeof(info));
	if (n != (ssize_t)sizeof(info))
		return G_SOURCE_CONTINUE;

	switch (info.ssi_signo) {
	case SIGHUP:
		reload(d);
		break;
	case SIGUSR1:
		dump(d);
		break;
	case SIGUSR2:
		g_message("SIGUSR2: saving state");
		save_state(d);
		break;
	default:
		g_message("%s: exiting", g_strsignal((int)info.ssi_signo));
		g_main_loop_quit(d->loop);
		break;
	}
	return G_SOURCE_CONTINUE;
}

/*
 * Blocks the handled signals (before any thread exists, so every thread
 * inherits the mask) and returns a signalfd for them.
 */
static int
block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < G_N_ELEMENTS(handled_signals); i++)
		sigaddset(&set, handled_signals[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	(void)signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* ---- process set-up ---- */

/*
 * One daemon per state file: two would overwrite each other's learning.
 * The lock is held on "<statefile>.lock" for the life of the process
 * (flock locks survive fork, so it is taken before daemonizing and the
 * error reaches the terminal).
 */
static int
lock_state(const char *statefile, GError **error)
{
	g_autofree char *path = NULL;
	int fd;

	if (!statefile || !*statefile)
		return -2;
	/*
	 * The directory first: created 0700, or refused if someone else
	 * could write in it (the lock below is made there too).
	 */
	if (!state_prepare_dir(statefile, error))
		return -1;
	path = g_strconcat(statefile, ".lock", NULL);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "cannot open %s: %s", path, g_strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int saved = errno;

		close(fd);
		if (saved == EWOULDBLOCK)
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
				    "another preload is running with the state file %s", statefile);
		else
			g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
				    "cannot lock %s: %s", path, g_strerror(saved));
		return -1;
	}
	return fd;
}

/* Detaches from the terminal. stderr is kept only if the log goes there. */
static gboolean
daemonize(gboolean keep_stderr, GError **error)
{
	pid_t pid = fork();
	int null_fd;

	if (pid < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "fork: %s", g_strerror(errno));
		return FALSE;
	}
	if (pid > 0)
		_exit(EXIT_CLEAN);
	if (setsid() < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "setsid: %s", g_strerror(errno));
		return FALSE;
	}
	if (chdir("/") < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "chdir /: %s", g_strerror(errno));
		return FALSE;
	}
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd >= 0) {
		(void)dup2(null_fd, STDIN_FILENO);
		(void)dup2(null_fd, STDOUT_FILENO);
		if (!keep_stderr)
			(void)dup2(null_fd, STDERR_FILENO);
		if (null_fd > STDERR_FILENO)
			close(null_fd);
	}
	return TRUE;
}

static void
apply_nice(int increment)
{
	errno = 0;
	if (increment && nice(increment) == -1 && errno)
		g_info("cannot change the nice value: %s, ignoring", g_strerror(errno));
}

/*
 * The cycle on this machine's sources (/proc, its memory, the readahead)
 * and the launch policy on its page cache.
 */
static void
start_cycle(Daemon *d)
{
	const CycleSources sources = {
		.scan = daemon_scan,
		.plan = daemon_plan,
		.reader = &daemon_reader,
		.stage_done = daemon_stage_done,
		.data = d,
	};
	const LaunchHooks hooks = {
		.hold = launch_hold,
		.measure = launch_measure,
		.fetch = launch_fetch_hook,
		.data = d,
	};

	d->cycle = cycle_new(d->model, d->conf, &sources);
	d->launch = launch_new(&hooks);
}

/*
 * PRELOAD_PROC_ROOT: the /proc tree to read instead of the real one, for
 * --once only (tests/once-proc.sh runs the daemon on a fake tree). An
 * environment variable rather than an option: it is a developer's hook,
 * not something a user configures, and honoured with --once only, so a
 * daemon can never be started blind to the machine it serves by a stray
 * flag or a variable left in its environment.
 */
static void
use_proc_root(const Options *opts)
{
	const char *root = g_getenv("PRELOAD_PROC_ROOT");

	if (!root || !*root)
		return;
	if (!opts->once) {
		g_warning("PRELOAD_PROC_ROOT is only used with --once, ignoring");
		return;
	}
	proc_set_root(root);
	g_message("reading %s instead of /proc", proc_get_root());
}

/* --once: one full cycle against /proc, then save and exit. */
static void
run_once(Daemon *d)
{
	d->stage_mark = cputime_thread_us();
	cycle_run(d->cycle);
	(void)readahead_wait_until(d->readahead, g_get_monotonic_time() + READAHEAD_EXIT_WAIT_US,
				   TRUE);
}

/*
 * The daemon proper: the main loop with its signal, watcher, timer and
 * control sources, until a signal stops it; then the running batch gets
 * READAHEAD_EXIT_WAIT_US to end before the state is saved, so a read
 * stuck on a dead mount cannot delay the save.
 */
static void
serve(Daemon *d)
{
	d->loop = g_main_loop_new(NULL, FALSE);
	d->start_cpu_us = cputime_us(CLOCK_PROCESS_CPUTIME_ID);
	d->fsjobs = fsjob_pool_new(NULL, FSJOB_WORKERS, FSJOB_QUEUE_MAX, FSJOB_MAX_STUCK,
				   FSJOB_DEADLINE_US);
	learn_set_fsjob(cycle_get_learn(d->cycle), d->fsjobs, d->model);
	/* Known before the first update: the probe of a start leaves remote files alone. */
	learn_refresh_mounts(cycle_get_learn(d->cycle), d->conf);
	g_unix_fd_add(d->signal_fd, G_IO_IN, on_signal, d);
	start_watch(d);
	schedule_autosave(d);
	schedule_tick(d, 0);
	d->hit_log = report_hit_log_new();
	d->notify = notify_new();
	start_control(d);
	notify_ready(d->notify);
	g_main_loop_run(d->loop);
	/* No result is taken any more; a probe stuck on a hung mount is left behind. */
	learn_set_fsjob(cycle_get_learn(d->cycle), NULL, NULL);
	if (d->watch)
		watch_set_fsjob(d->watch, NULL);
	fsjob_get_stats(d->fsjobs, &d->fsjob_stats);
	d->left_behind = d->fsjob_stats.stuck > 0 || d->fsjob_stats.running > 0 ||
			 (d->watch && watch_reader_busy(d->watch)) ||
			 watch_retired_reader_busy(d->watch_idle);
	g_clear_pointer(&d->fsjobs, fsjob_pool_free);
	notify_stopping(d->notify);
	g_clear_pointer(&d->control, control_free);
	/* Exit promptly: reads in flight finish, no new one starts. */
	d->exiting = TRUE;
	readahead_supersede(d->readahead);
	if (!readahead_wait_until(d->readahead, g_get_monotonic_time() + READAHEAD_EXIT_WAIT_US,
				  TRUE))
		d->left_behind = TRUE;
	{
		guint stuck = 0;

		readahead_get_abandoned(d->readahead, NULL, &stuck, NULL);
		d->left_behind = d->left_behind || stuck > 0;
	}
}

/* Frees what main() and serve() set up; each part may be missing. */
static void
daemon_clear(Daemon *d)
{
	if (d->cycle_source)
		g_source_remove(d->cycle_source);
	if (d->autosave_source)
		g_source_remove(d->autosave_source);
	fsjob_pool_free(d->fsjobs);
	watch_free(d->watch);
	watch_reader_free(d->watch_idle);
	readahead_free(d->readahead);
	g_free(d->watch_off);
	control_free(d->control);
	notify_free(d->notify);
	report_hit_log_free(d->hit_log);
	if (d->loop)
		g_main_loop_unref(d->loop);
	launch_free(d->launch);
	cycle_free(d->cycle);
	power_free(d->power);
	model_free(d->model);
	conf_free(d->conf);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	cmdline_clear(&d->opts);
	proc_set_root(NULL);
	log_close();
}

int
main(int argc, char **argv)
{
	g_autoptr(GError) error = NULL;
	Daemon daemon_ = {
		.signal_fd = -1, .lock_fd = -1,
		.mem_log = LOG_LIMIT_INIT("memory figures", G_LOG_LEVEL_WARNING,
					  LOG_LIMIT_BURST, LOG_LIMIT_SECONDS),
		/* A batch shows up to 10 of each: two batches' worth an hour. */
		.read_log = LOG_LIMIT_INIT("readahead errors", G_LOG_LEVEL_WARNING,
					   20, LOG_LIMIT_SECONDS),
		.odd_log = LOG_LIMIT_INIT("readahead skips", G_LOG_LEVEL_INFO,
					  20, LOG_LIMIT_SECONDS),
	};
	Daemon *d = &daemon_;
	gboolean exit_now = FALSE;
	const char *logfile;
	int status = EXIT_CLEAN;

	if (!cmdline_parse(argc, argv, &d->opts, &exit_now, &error)) {
		fprintf(stderr, "preload: %s\nTry 'preload --help'.\n", error->message);
		cmdline_clear(&d->opts);
		return EXIT_BADUSAGE;
	}
	if (exit_now) {
		cmdline_clear(&d->opts);
		return EXIT_CLEAN;
	}
	if (d->opts.once)
		d->opts.foreground = TRUE;

	log_init(d->opts.verbose);
	/* Before any thread (GLib's own included) allocates. */
	heap_single_arena();

	d->conf = load_conf(&d->opts, NULL);
	if (!d->conf) {
		cmdline_clear(&d->opts);
		return EXIT_BADCONFIG;
	}

	/* In the foreground the log goes to the terminal unless -l says otherwise. */
	logfile = d->opts.logfile ? d->opts.logfile
				  : (d->opts.foreground ? "" : CMDLINE_DEFAULT_LOGFILE);
	if (!log_set_file(logfile, &error)) {
		g_warning("cannot open the log file: %s; logging to stderr", error->message);
		g_clear_error(&error);
	}
	use_proc_root(&d->opts);

	d->signal_fd = block_signals();
	if (d->signal_fd < 0) {
		g_critical("cannot set up signal handling: %s", g_strerror(errno));
		status = EXIT_RUNTIME;
		goto out;
	}

	d->lock_fd = lock_state(d->opts.statefile, &error);
	if (d->lock_fd == -1) {
		g_critical("%s", error->message);
		/* A restart cannot make an unsafe state directory safe. */
		status = g_error_matches(error, STATE_ERROR, STATE_ERROR_UNSAFE) ? EXIT_BADCONFIG
										 : EXIT_RUNNING;
		goto out;
	}

	if (!d->opts.foreground && !daemonize(!*logfile, &error)) {
		g_critical("cannot daemonize: %s", error->message);
		status = EXIT_RUNTIME;
		goto out;
	}
	apply_nice(d->opts.nice);
	/*
	 * Prefetching must yield to every other reader: the idle I/O class,
	 * set before any thread exists so that all threads inherit it.
	 */
	d->idle_class = readahead_set_idle_class(&error);
	if (!d->idle_class) {
		g_info("%s, ignoring", error->message);
		g_clear_error(&error);
	}
	d->readahead = readahead_new(PAGECACHE_PROBE_ALL);

	d->model = load_state(d->opts.statefile);
	d->power = power_new(NULL);
	start_cycle(d);
	start_trace(d);
	g_message("preload %s started (cycle %" G_GINT64_FORMAT " s, state %s)", PACKAGE_VERSION,
		  d->conf->cycle, *d->opts.statefile ? d->opts.statefile : "not kept");

	if (d->opts.once)
		run_once(d);
	else
		serve(d);
	close_trace(d);
	if (d->model->dirty || d->opts.once)
		save_state(d);
	g_message("preload stopped");

out:
	daemon_clear(d);
	/*
	 * A thread still blocked on a dead mount (never joined) would hold
	 * exit(): its atexit handlers include, under the sanitizers,
	 * LeakSanitizer's pass, which first stops every thread with ptrace
	 * and waits for the blocked one to stop, as long as its mount
	 * hangs. The state is saved and the log closed: end now.
	 */
	if (d->left_behind)
		_exit(status);
	return status;
}
