/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Launch: what a program start seen as it happens (an exec event) means.
 *
 * Two decisions, both about known programs (the model has their exe):
 *
 *   execpause  the start of a known program not seen running for two
 *              cycles holds the readahead back for execpause ms, so the
 *              program's own reads go first. Programs run over and over
 *              (a compiler in a build, a script's tools) and programs
 *              the model does not know do not: a machine that runs them
 *              all day still prefetches.
 *   hits       every start is counted; its learned set is measured
 *              (how much was prefetched, how much resident) right away,
 *              before the program has had time to load much of it, but
 *              once per program per cycle: a build that runs a compiler
 *              a thousand times must not probe the same files a
 *              thousand times.
 *
 * The decisions are pure (launch_decide(), on a model time and a
 * monotonic time passed in); launch_exec() applies them through hooks,
 * so the clock, the readahead hold and the page-cache measurement are
 * injected and the policy is tested on struct literals.
 *
 * Ownership: a Launch holds only its hooks; the model is borrowed.
 */
#pragma once

#include <glib.h>

#include "conf.h"
#include "model.h"

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
	/* Hold the readahead back until this monotonic time; NULL: no hold. */
	void (*hold)(gpointer data, gint64 until_us);
	/* Measure exe's learned set against the prefetch prefetch_seq; required. */
	void (*measure)(gpointer data, const Exe *exe, guint64 prefetch_seq, LaunchHits *hits);
	gpointer data;        /* passed to all of the above */
} LaunchHooks;

/* What a start of a known exe calls for. */
typedef struct LaunchDecision {
	gint64 hold_until;    /* monotonic us to hold the readahead back until, 0: no hold */
	gboolean measure;     /* measure this start's learned set */
} LaunchDecision;

/*
 * The decisions for a start of exe at monotonic time now_us, with the
 * model's clock at model_time. Pure.
 */
LaunchDecision launch_decide(const Conf *conf, gint64 model_time, const Exe *exe, gint64 now_us);

Launch *launch_new(const LaunchHooks *hooks);
void launch_free(Launch *launch);

/*
 * A start of exe_path: for a known exe, decides, holds, counts the start,
 * measures if due, and marks the model dirty. Returns the exe, or NULL
 * if the model does not know it (nothing is done then).
 */
Exe *launch_exec(Launch *launch, Model *model, const Conf *conf, const char *exe_path);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Launch, launch_free)
