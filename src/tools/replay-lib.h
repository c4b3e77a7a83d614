/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Replay: runs the daemon's model and predictor over a trace and scores
 * the predictions, for preload-replay.
 *
 * Every cycle of the trace is run by the daemon's own cycle (cycle.h:
 * scan, learn, predict), with the process list and the maps source
 * replaced by the trace, the clock by the trace's times and the
 * readahead by a recorder of the selection. At every start of a known executable
 * (running at cycle k, not at k-1) it counts how many of the executable's
 * maps, and how many of their bytes, were in the selection made at cycle
 * k-1: the hit ratio of Esfahbod's preload thesis. Two reference
 * predictors fill the same budget at the same cycle: "naive" (every
 * executable not running, ranked by how often it has started so far, as
 * in the thesis) and "oracle" (the executables that do start at k, an
 * upper bound).
 */
#pragma once

#include <glib.h>
#include <stdio.h>

#include "conf.h"
#include "trace.h"

typedef enum {
	REPLAY_PRELOAD,       /* the daemon's prophet */
	REPLAY_NAIVE,         /* by start count */
	REPLAY_ORACLE,        /* knows what starts */
	REPLAY_BOUND,         /* the true model's forecast (only with a bound file) */
	REPLAY_N_PREDICTORS,
} ReplayPredictor;

/* How one predictor did over all scored starts. */
typedef struct ReplayScore {
	guint64 maps_hit;     /* maps of starting exes in the selection */
	guint64 bytes_hit;
	guint64 maps_ready;   /* in the selection or in use by a running exe */
	guint64 bytes_ready;
	guint64 maps_cold_hit; /* hits among the maps no running exe used */
	guint64 bytes_cold_hit;
	double ratio_maps_sum;  /* per-start maps_hit / maps, summed */
	double ratio_bytes_sum; /* per-start bytes_hit / bytes, summed */
	guint64 selected_kb_sum;/* selection size at the scored cycles */
} ReplayScore;

typedef struct ReplayResult {
	gint64 cycle;            /* seconds, from the trace */
	guint64 scans;           /* cycles replayed */
	gboolean complete;       /* the trace ended with its END line */
	guint64 starts;          /* scored starts */
	guint64 unscored_starts; /* starts of exes the model did not know */
	guint64 maps_total;      /* maps of all scored starts */
	guint64 bytes_total;
	guint64 maps_cold;       /* of those, maps no exe running at k-1 used */
	guint64 bytes_cold;
	guint64 scored_cycles;   /* cycles whose selection was scored */
	guint64 budget_kb_sum;   /* over all cycles */
	guint64 budget_kb_min, budget_kb_max;
	ReplayScore score[REPLAY_N_PREDICTORS];
	gboolean have_bound;     /* score[REPLAY_BOUND] is meaningful */

	/* the model at the end */
	guint exes, bad_exes, maps, chains;
	guint64 predictions;     /* cycles on which prophet_select() ran */
} ReplayResult;

typedef struct ReplayOptions {
	const Conf *conf;     /* the daemon's configuration; cycle comes from the trace */
	gint64 budget_kb;     /* fixed budget, or -1: from the trace's meminfo */
	/*
	 * Predict at every cycle, as the daemon does. Otherwise only before
	 * cycles where a known executable starts, which gives the same
	 * scores (the prediction changes nothing in the model) much faster.
	 */
	gboolean every_cycle;
	/* Save the model at the end to this state file (NULL: do not). */
	const char *save_state;
	/*
	 * preload-tracegen --bound's file for this trace (NULL: none): the
	 * true model's chance that each program starts at the next cycle,
	 * one line per cycle. The "bound" predictor fills the budget by
	 * these, as naive does by its start counts.
	 */
	const char *bound;
	/*
	 * Score only the starts from this cycle on (0: all): the model
	 * still learns from the whole trace. A learner cannot match the
	 * bound while it is still learning; this measures it once it has.
	 */
	guint64 from_cycle;
	/*
	 * Restart the daemon before this cycle (0: never): save the model to
	 * a state file, free it and the cycle, load it back into a new
	 * cycle. What the state file does not keep is lost, as it is when a
	 * daemon is stopped and started again.
	 */
	guint64 restart_at;
	/*
	 * Where to write one line per scored start (NULL: nowhere): what each
	 * predictor gave the program and hit of it, for finding where the
	 * share of the bound is lost. Tab-separated, after a header line
	 * naming the columns: the scan number, the program, preload's
	 * probability for it and its rank among the stopped programs (0:
	 * none higher), the bound's (or "-"), its cold bytes, of which
	 * preload's and the bound's selections held, the last start and the
	 * seconds since it.
	 */
	FILE *starts;
} ReplayOptions;

/* The error domain of a bound file that cannot be used. */
#define REPLAY_ERROR (replay_error_quark())
GQuark replay_error_quark(void);
typedef enum {
	REPLAY_ERROR_BOUND,   /* unreadable, malformed, or not the trace's */
} ReplayError;

/*
 * Replays the whole trace. On a trace error, *result holds what was
 * replayed (and no state is saved). A state that cannot be saved is an
 * error too (STATE_ERROR).
 */
gboolean replay_run(TraceReader *tr, const ReplayOptions *options, ReplayResult *result,
		    GError **error);

/* Ratio helpers for reports: 0 when the denominator is 0. */
double replay_ratio(guint64 part, guint64 whole);

const char *replay_predictor_name(ReplayPredictor predictor);
