/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Cycle: scan -> learn -> predict -> read, the one sequence that the
 * daemon's timers, its --once run and preload-replay all run.
 *
 * A cycle has two halves, half a cycle apart so that a process seen
 * starting has mapped its libraries by the time its maps are read:
 *
 *   cycle_scan_half()    scan: which known exes run, which are new
 *   cycle_update_half()  learn from the scan, predict, read ahead
 *
 * The drivers schedule the halves (the daemon on two timers, --once and
 * the replay back to back); the Cycle runs them on the model's logical
 * clock (model->time), which each half moves on by its share of the
 * cycle while the model is watching (doscan). The replay sets
 * model->time from its trace before each cycle: that is its clock.
 *
 * What differs between the drivers is behind CycleSources: where the
 * process list comes from (/proc, a trace), what the budget is and
 * whether the selection is read (memory figures of the machine or of
 * the trace), and the reader that gets the selection (the readahead, or
 * a recorder that only keeps it). The readahead is behind a small reader
 * interface so that any readahead API plugs in.
 *
 * Ownership: the Cycle borrows the model, the configuration and the
 * sources (all must outlive it, or be replaced with cycle_set_conf()); it
 * owns its Scan and Learn, and the MountNs both share.
 */
#pragma once

#include <glib.h>

#include "conf.h"
#include "learn.h"
#include "model.h"
#include "scan.h"

typedef struct Cycle Cycle;

/* The stages, in order; the stage hook gets each as it ends. */
typedef enum {
	CYCLE_SCAN,           /* the process list */
	CYCLE_LEARN,          /* the model learns from the scan */
	CYCLE_PREDICT,        /* budget, scoring and selection */
	CYCLE_READ,           /* file checks and the start of the read */
	CYCLE_N_STAGES
} CycleStage;

/* What the plan source decides before a prediction. */
typedef struct CyclePlan {
	gboolean predict;     /* score and select this cycle */
	gboolean read;        /* pass the selection to the reader (FALSE: paused) */
	guint64 budget_kb;    /* the selection's budget */
} CyclePlan;

/* What the reader did with a selection. */
typedef enum {
	CYCLE_READ_STARTED,   /* the maps are being read: they count as prefetched */
	CYCLE_READ_BUSY,      /* a previous read still runs; nothing counts as prefetched */
	CYCLE_READ_RECORDED,  /* kept, not read (a replay); nothing counts as prefetched */
} CycleRead;

/*
 * The read step. start gets the selected maps (Map *, none stale, in
 * selection order; borrowed for the call) and the configuration.
 */
typedef struct CycleReader {
	CycleRead (*start)(gpointer data, GPtrArray *maps, const Conf *conf);
} CycleReader;

typedef struct CycleSources {
	/*
	 * The process list: scan_begin(), scan_saw_process() per process,
	 * scan_end() at now. NULL: scan_proc() on /proc. FALSE with error
	 * set: the scan failed and the model is untouched.
	 */
	gboolean (*scan)(gpointer data, Scan *scan, Model *model, const Conf *conf, gint64 now,
			 GError **error);
	/* The plan of a prediction; required. */
	void (*plan)(gpointer data, const Conf *conf, CyclePlan *plan);
	/* The reader; required. */
	const CycleReader *reader;
	/* Called as each stage ends (CPU accounting); may be NULL. */
	void (*stage_done)(gpointer data, CycleStage stage);
	gpointer data;        /* passed to all of the above */
} CycleSources;

/* The last prediction, for the log and the dump. */
typedef struct CyclePrediction {
	guint64 budget_kb;
	guint selected_maps;
	guint64 selected_kb;
	CycleRead read;       /* what the reader did, if it was called */
	gboolean read_called; /* the reader got this selection */
} CyclePrediction;

Cycle *cycle_new(Model *model, const Conf *conf, const CycleSources *sources);
void cycle_free(Cycle *cycle);

/* After a configuration reload. */
void cycle_set_conf(Cycle *cycle, const Conf *conf);

/* First half: the scan at model->time (doscan), then the clock moves on by cycle / 2. */
void cycle_scan_half(Cycle *cycle);
/*
 * Second half: learn at model->time (doscan), predict and read
 * (dopredict), then the clock moves on by the rest of the cycle.
 */
void cycle_update_half(Cycle *cycle);
/* Both halves, back to back (--once, the replay). */
void cycle_run(Cycle *cycle);
/*
 * Predict and read alone, on the model as it is (the daemon predicts
 * again when a superseded read ends).
 */
void cycle_predict(Cycle *cycle);

/* The stages' objects, for the drivers' hooks (trace, exec events, read sets). */
Scan *cycle_get_scan(Cycle *cycle);
Learn *cycle_get_learn(Cycle *cycle);
const CyclePrediction *cycle_get_prediction(const Cycle *cycle);
/* The translation of other mount namespaces' paths, for its counts. */
MountNs *cycle_get_mountns(Cycle *cycle);
/* Updates run so far. */
guint cycle_get_count(const Cycle *cycle);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Cycle, cycle_free)
