/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Launch: what a program start seen as it happens (an exec event) means.
 *
 * Three decisions, all about known programs (the model has their exe):
 *
 *   hold       the start of a known program not seen running for two
 *              cycles (a launch) holds the background readahead back at
 *              once, for the start-up window (startupwindow, at least
 *              execpause), so the program's own reads go first: after
 *              a cache drop a background batch re-reads the whole
 *              prediction beside it, on a disk that serves all I/O
 *              alike. The probe of its set (below) comes later, from a
 *              worker; if it finds the set cached (at most a tenth
 *              missing: launch_hits_cached(), as for the urgent
 *              batch) the hold ends at execpause's end, else it stays. Programs run over and
 *              over (a compiler in a build, a program restarted in a
 *              loop) do not hold: such a machine must still prefetch.
 *              Nor do programs the model does not know: most are short
 *              tools that never ran long enough to be learned (a
 *              build's, a script's), with no record to tell a loop of
 *              them from a launch, and no learned set to wait for. The
 *              held time is bounded (LaunchBudget): a flood of launches
 *              holds at most LAUNCH_HOLD_BURST_US at a stretch, then
 *              at most 1 / LAUNCH_HOLD_SHARE of the time, never the
 *              background out for good. Off with execpause and launchfetchkb both 0.
 *   hits       every start is counted; its learned set is measured
 *              (how much was prefetched, how much resident) right away,
 *              before the program has had time to load much of it, but
 *              once per program per cycle: a build that runs a compiler
 *              a thousand times must not probe the same files a
 *              thousand times. A start that is not a launch (the
 *              program ran within two cycles) of a program whose last
 *              measurement found its set cached is measured once per
 *              LAUNCH_REPEAT_MEASURE cycles: a build's tools, measured
 *              every cycle, were found cached 99.7 % of the time, and
 *              the probes were a tenth of the daemon's CPU.
 *   fetch      a measured start whose learned set is more than a tenth
 *              missing from the page cache gets it read at once, as an
 *              urgent batch beside the program's own reads: the
 *              launch-time prefetch of FAST, ClusterFetch and Windows'
 *              prefetcher, for the starts no prediction covered. It
 *              follows the measurement, so at most once per program per
 *              cycle, at most launchfetchkb of the set (most used maps
 *              first), and at most LAUNCH_FETCH_BURST batches at once,
 *              then one per LAUNCH_FETCH_INTERVAL_US: a script that starts
 *              a hundred programs does not queue a hundred batches.
 *              The batch is few, large requests: a file's learned ranges
 *              are merged across small gaps, and a file whose learned
 *              part is small is left out (launch_fetch_requests()). A
 *              disk that is limited by requests charges the prefetch of
 *              a small file the same request the program's own read
 *              costs, so reading it ahead wins nothing there, and racing
 *              the program for it lost: on the launch benchmark's disk a
 *              cold perl start that loads 200 small modules took 30 %
 *              longer and 30 % more requests with them read beside it.
 *              A set of small files only gets nothing read. The
 *              reader then reads of it only the missing runs of at
 *              least READAHEAD_URGENT_MIN_RUN_BYTES, as the program
 *              leaves them when each chunk comes (readahead.h): by
 *              then the program has read much of its set itself.
 *
 * The decisions are pure (launch_decide(), on a model time and a
 * monotonic time passed in); launch_exec() applies them through hooks,
 * so the clock, the readahead hold and the page-cache measurement are
 * injected and the policy is tested on struct literals.
 *
 * Ownership: a Launch holds its hooks, its rate bound, its launches'
 * holds and their budget, and its counts;
 * the model is borrowed.
 */
#pragma once

#include <glib.h>

#include "conf.h"
#include "model.h"

/*
 * Learned ranges of one file at most this far apart are read as one
 * request: the bytes a request costs on a disk of 300 requests and 100
 * MB/s (333 KB), the launch benchmark's and a common cloud volume's
 * limits, rounded down; the reader merges its slices with the same gap.
 */
#define LAUNCH_MERGE_GAP_BYTES ((guint64)256 * 1024)
/*
 * A file whose learned ranges, merged, total less than this is not read
 * at a launch: the program reads it in about one request itself (see
 * "fetch" above). The same cost as the gap.
 */
#define LAUNCH_MIN_FILE_BYTES ((guint64)256 * 1024)

/* Cycles between two measurements of a cached program's repeated starts. */
#define LAUNCH_REPEAT_MEASURE 8

/* The rate bound of urgent batches: a burst of this many... */
#define LAUNCH_FETCH_BURST 4
/* ...then one per this many monotonic microseconds. */
#define LAUNCH_FETCH_INTERVAL_US G_USEC_PER_SEC

/*
 * The bound of the hold: at most this much held time at a stretch
 * (a burst of cold starts, each holding its start-up window)...
 */
#define LAUNCH_HOLD_BURST_US ((gint64)30 * G_USEC_PER_SEC)
/*
 * ...after which held time comes back at 1 us per this many us: over any
 * span T, at most LAUNCH_HOLD_BURST_US + T / LAUNCH_HOLD_SHARE is held, so
 * the background gets at least half of a long flood of launches.
 */
#define LAUNCH_HOLD_SHARE 2

/* The hold's budget (a leaky bucket of held microseconds); zeroed: full. */
typedef struct LaunchBudget {
	gint64 spent;         /* held us not yet given back, <= LAUNCH_HOLD_BURST_US */
	gint64 at;            /* monotonic us of the last refill */
} LaunchBudget;

/*
 * Up to want_us of held time at now_us, as far as the budget allows;
 * returns what is granted (0 .. want_us). Pure but for budget.
 */
gint64 launch_budget_take(LaunchBudget *budget, gint64 want_us, gint64 now_us);
/* Held time granted but not used (a hold ended early) comes back. */
void launch_budget_give(LaunchBudget *budget, gint64 us, gint64 now_us);

typedef struct Launch Launch;

/* The learned set of one start, measured (see watch_measure_exe()). */
typedef struct LaunchHits {
	guint64 bytes;        /* the learned set's size */
	guint64 prefetched;   /* of which the last prefetch read */
	guint64 probed;       /* of which the page cache could be asked about */
	guint64 resident;     /* of which was resident */
} LaunchHits;

typedef struct LaunchHooks {
	/* Monotonic microseconds; NULL: g_get_monotonic_time(). */
	gint64 (*now)(gpointer data);
	/*
	 * Hold the background readahead back until this monotonic time,
	 * replacing the hold set before (0: none); NULL: no hold. The Launch
	 * keeps the union of its launches' holds, and is the only one to set it.
	 */
	void (*hold)(gpointer data, gint64 until_us);
	/*
	 * Measure exe's learned set against the prefetch prefetch_seq;
	 * required. TRUE: measured now, into *hits. FALSE: the measurement
	 * runs elsewhere (the probe opens files a hung mount can stall) and
	 * its hits come later through launch_measured(), or never if it is
	 * given up.
	 */
	gboolean (*measure)(gpointer data, const Exe *exe, guint64 prefetch_seq, LaunchHits *hits);
	/*
	 * Read requests (OrderRequest, order.h; taken) now, as an urgent
	 * batch off the calling thread; FALSE if the reader cannot take
	 * them. NULL: no launch-time prefetch.
	 */
	gboolean (*fetch)(gpointer data, const Exe *exe, GArray *requests);
	gpointer data;        /* passed to all of the above */
} LaunchHooks;

/* What a start of a known exe calls for. */
typedef struct LaunchDecision {
	/* Not seen running for two cycles: a launch, not a program run over and over. */
	gboolean launch;
	gint64 hold_until;    /* monotonic us this launch asks the hold to last, 0: no hold */
	gboolean measure;     /* measure this start's learned set */
} LaunchDecision;

/* Why a measured start did or did not get an urgent batch. */
typedef enum {
	LAUNCH_FETCH_OFF,      /* launchfetchkb = 0, or no fetch hook */
	LAUNCH_FETCH_CACHED,   /* at most a tenth of the learned set was missing */
	LAUNCH_FETCH_LIMITED,  /* over the rate bound */
	LAUNCH_FETCH_READ,     /* read it */
} LaunchFetch;

/*
 * The rate bound's state (a generic cell rate: the time the bound is
 * next clear, monotonic us); zeroed: clear.
 */
typedef struct LaunchRate {
	gint64 clear_at;
} LaunchRate;

/* What the launch-time prefetch did since the Launch was made. */
typedef struct LaunchStats {
	guint64 fetches;      /* urgent batches handed to the reader */
	guint64 cached;       /* measured starts whose set was cached enough */
	guint64 limited;      /* not cached, held back by the rate bound */
	guint64 refused;      /* not cached, the reader could not take the batch */
	guint64 small;        /* not cached, but only files too small to read ahead */
	guint64 fetch_bytes;  /* learned bytes asked for (the reader skips cached pages) */
	guint64 done;         /* urgent batches over (launch_fetch_done()) */
	guint64 read_bytes;   /* of those, bytes requested from the disk */
	guint64 holds;        /* launches that held the background */
	guint64 hold_released;/* of which a probe found cached and ended early */
	guint64 hold_capped;  /* times the budget cut a hold short */
} LaunchStats;

/*
 * Whether a learned set measured so is cached enough that its program
 * needs neither an urgent batch nor the hold past execpause: at most a
 * tenth of it missing (resident bytes the kernel would not tell count
 * as missing). Pure.
 */
gboolean launch_hits_cached(const LaunchHits *hits);

/*
 * Whether a measured start with these hits gets an urgent batch, at
 * monotonic time now_us; a READ takes its place in rate. Pure but for
 * rate.
 */
LaunchFetch launch_fetch_decide(const Conf *conf, const LaunchHits *hits, LaunchRate *rate,
				gint64 now_us);

/*
 * The requests of exe's urgent batch (a new order_requests_new() array):
 * its maps but the stale ones; the ranges of one path merged across gaps
 * of at most LAUNCH_MERGE_GAP_BYTES (a merged range as likely as its
 * likeliest map); the files whose merged ranges total less than
 * min_file_bytes left out; the most likely first (in the exe's order of
 * their first map among equals), up to max_bytes in all (the last one
 * cut). Pure.
 */
GArray *launch_fetch_requests(const Exe *exe, guint64 max_bytes, guint64 min_file_bytes);

/*
 * The decisions for a start of exe at monotonic time now_us, with the
 * model's clock at model_time. Pure.
 */
LaunchDecision launch_decide(const Conf *conf, gint64 model_time, const Exe *exe, gint64 now_us);

Launch *launch_new(const LaunchHooks *hooks);
void launch_free(Launch *launch);

/*
 * A start of exe_path: for a known exe, decides, holds (within the budget),
 * counts the start,
 * measures if due, fetches if the measurement calls for it
 * (launch_fetch_decide()), and marks the model dirty. Returns the exe,
 * or NULL if the model does not know it (nothing is done then).
 */
Exe *launch_exec(Launch *launch, Model *model, const Conf *conf, const char *exe_path);

/*
 * The hits of a start of exe_path measured away from launch_exec() (its
 * measure hook returned FALSE): counted, and the fetch decided, as
 * launch_exec() does with a measurement made at once. Nothing if the
 * model no longer knows the exe.
 */
void launch_measured(Launch *launch, Model *model, const Conf *conf, const char *exe_path,
		     const LaunchHits *hits);

/* An urgent batch is over, having requested bytes from the disk. */
void launch_fetch_done(Launch *launch, guint64 bytes);
const LaunchStats *launch_get_stats(const Launch *launch);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Launch, launch_free)
