/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Spy: watches the running processes and feeds the model.
 *
 * A cycle has two halves. The scan (at the start of the cycle) records
 * which known executables run and which unknown ones appeared. The
 * update (half a cycle later, so new processes have mapped their
 * libraries) first applies the start/stop changes to the chains, then
 * admits the new executables (so their chains see current timestamps),
 * then accounts running time.
 *
 * The scan is split into begin / saw-process / end so that the replay
 * tool drives exactly the same code from a recorded trace, and the maps
 * of new executables come from a replaceable source (/proc by default).
 *
 * The update also keeps the model fresh: an executable that starts again
 * has its maps re-read once (upgrades, plugins), every map's file is
 * checked for replacement over an hour, and once an hour the model ages
 * and forgets what is no longer there.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "conf.h"
#include "model.h"

typedef struct Spy Spy;

/* What the last scan and update did, for the log and the dump. */
typedef struct SpyStats {
	guint processes;      /* processes seen by the last scan */
	guint changed;        /* exes that started or stopped */
	guint admitted;       /* new exes added to the model */
	guint too_small;      /* new exes below minsize */
	guint gone;           /* new exes that exited before their maps were read */
	guint learned;        /* read sets applied, since the spy was made */
	guint learned_admitted; /* of those, exes admitted from their read set */
	guint refreshed;      /* known exes that started and had their maps re-read */
	guint maps_added;     /* maps those refreshes added */
	guint maps_removed;   /* maps those refreshes removed (unused for a while) */
	guint stale;          /* maps found gone or replaced by the identity sweep */
	/* the last maintenance (once an hour of model time) */
	gint64 maintained_at; /* model time, -1 never */
	guint chains_faded;   /* chains forgotten by aging */
	guint exes_forgotten; /* exes not seen for maxage */
	guint exes_gone;      /* exes whose file is gone */
	guint maps_dropped;   /* stale map uses removed */
} SpyStats;

/*
 * Every map's file is checked about once per this many seconds of model
 * time, a few maps per cycle.
 */
#define SPY_FILE_CHECK_PERIOD 3600
/* Model seconds between maintenances (aging, expiry); shorter with a short half-life. */
#define SPY_MAINTENANCE_PERIOD 3600
/* A map a restarted exe has not mapped in this many runs in a row is dropped from it. */
#define SPY_MISSED_RUNS 3

/*
 * Where the maps of a new executable come from: appends ProcMap entries
 * to `maps` (as proc_read_maps() does) or fails; PROC_ERROR_GONE means
 * the process exited (it will be retried when seen again).
 */
typedef gboolean (*SpyMapsFunc)(pid_t pid, const char *exe_path, GArray *maps,
				gpointer user_data, GError **error);

Spy *spy_new(void);
void spy_free(Spy *spy);

/* Maps over usedmapkb are learned as the SPY_TOUCHED_WINDOW-byte windows the process touched. */
#define SPY_TOUCHED_WINDOW 65536
/*
 * Only the first SPY_TOUCHED_MAX bytes of a map are looked up (32 MiB of
 * pagemap, some tens of ms): a program that maps a terabyte file must not
 * stall the update. What it touches beyond them is not learned.
 */
#define SPY_TOUCHED_MAX (G_GUINT64_CONSTANT(16) << 30)

/*
 * The default maps source: /proc/PID/maps, counted as gone unless it
 * includes exe_path itself (the process exited or its pid was reused).
 * With user_data the Spy, each map longer than the configured usedmapkb
 * is replaced by the parts the process has touched (proc_read_touched());
 * with NULL, or where pagemap cannot be read, maps are whole.
 */
gboolean spy_proc_maps(pid_t pid, const char *exe_path, GArray *maps,
		       gpointer user_data, GError **error);

/* Replaces the maps source (NULL restores spy_proc_maps, with the spy as its data). */
void spy_set_maps_source(Spy *spy, SpyMapsFunc func, gpointer user_data);

/*
 * Whether a file may be learned (or is still there), and what it is now.
 * The default (NULL) requires a regular file at the path now (lstat) and
 * fills *id from it; the replay tool, whose traces name files of another
 * machine, accepts every path with an unknown (all zero) identity, which
 * never makes a map stale.
 */
typedef gboolean (*SpyFileCheckFunc)(const char *path, MapFileId *id, gpointer user_data);
void spy_set_file_check(Spy *spy, SpyFileCheckFunc func, gpointer user_data);

/* The scan, in three steps; spy_scan() does all three on /proc. */
void spy_begin_scan(Spy *spy, Model *model, gint64 now);
/* One process; raw_exe is the /proc/PID/exe link as read. */
void spy_saw_process(Spy *spy, Model *model, const Conf *conf, pid_t pid, const char *raw_exe);
void spy_end_scan(Spy *spy, Model *model, gint64 now);
gboolean spy_scan(Spy *spy, Model *model, const Conf *conf, gint64 now, GError **error);

/*
 * Applies the last scan to the model at model time now: the starts and
 * stops (and the chains they create), the new exes, a re-read of the maps
 * of each known exe that started (new maps added, maps unused for
 * SPY_MISSED_RUNS runs removed), a check of a few maps' files (see
 * SPY_FILE_CHECK_PERIOD), the running times, and once per
 * SPY_MAINTENANCE_PERIOD the maintenance: aging by the half-life,
 * forgetting exes unseen for maxage days or whose file is gone, and
 * dropping maps whose file is gone or was replaced.
 */
void spy_update_model(Spy *spy, Model *model, const Conf *conf, gint64 now);

/*
 * The sweep's file check, brought forward for the maps about to be read
 * ahead: each of maps (Map *) whose file was not checked, nor learned, in
 * the last SPY_FILE_CHECK_PERIOD seconds of model time is checked now,
 * and turns stale if the file is gone or was replaced. Returns how many
 * did; the caller leaves them out. Without it readahead would look for a
 * file gone for good every cycle until the sweep reached it (up to an
 * hour), and would read a replaced file at the old one's ranges.
 */
guint spy_check_files(Spy *spy, GPtrArray *maps, gint64 now);

/* The model parameters the configuration asks for. */
void spy_model_params(const Conf *conf, ModelParams *params);

const SpyStats *spy_get_stats(const Spy *spy);

/*
 * A start of exe_path seen as it happened (an exec event), between two
 * scans. The next scan counts the program as running even if it has
 * exited by then, so a program that lives a fraction of a second is, in
 * the chains, a program that ran during that cycle: the pair it forms
 * with the program that launched it (a build tool, a shell script) goes
 * to "both running", and it is predicted while its launcher runs. An
 * unknown program is remembered for two scans, to give its start-up
 * window time to end and admit it (see spy_learned_files()).
 */
void spy_saw_exec(Spy *spy, Model *model, const Conf *conf, const char *exe_path);

/*
 * The read set learned from one start of exe_path: ranges is a GArray of
 * WatchRange (the resident parts of the files it opened while starting).
 * Ranges that mapprefix rejects, that are no longer regular files, or
 * that the exe already has as maps are left out; the rest join the exe's
 * maps with probability 1 (a start-up file is read at every start) and
 * origin EXEMAP_READ, up to maxreadfiles files and maxreadkb KB per exe
 * over all its starts. An unknown exe is admitted from its read set when
 * learnexec is on and the set reaches minsize (else it is marked too
 * small), so a program that never lived long enough for a scan is learned.
 */
void spy_learned_files(Spy *spy, Model *model, const Conf *conf, const char *exe_path,
		       const GArray *ranges, gint64 now);

/*
 * Whether the update counts starts found by the scan in the exes' hit
 * figures (only "was it in the last prefetch": the page cache cannot be
 * asked after the fact). On by default; the daemon turns it off when exec
 * events count starts as they happen.
 */
void spy_set_count_starts(Spy *spy, gboolean count);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Spy, spy_free)
