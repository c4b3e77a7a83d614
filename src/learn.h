/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Learn: the second stage of a cycle, the model learns from the scan.
 *
 * Half a cycle after the scan (scan.h), so new processes have mapped
 * their libraries, learn_update() applies the start/stop changes to the
 * chains, then admits the new executables (so their chains see current
 * timestamps), then accounts running time. The maps of new executables
 * come from a replaceable source (/proc by default, a trace in a replay).
 *
 * It also keeps the model fresh: an executable that starts again has its
 * maps re-read once (upgrades, plugins), every map's file is checked for
 * replacement over an hour, and once an hour the model ages and forgets
 * what is no longer there. And it learns the read sets the watcher
 * reports (learn_read_set()).
 *
 * Ownership: the Learn object holds only its sources, its sweep position
 * and its statistics; the model passed in is the one source of truth.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "conf.h"
#include "fsjob.h"
#include "model.h"
#include "mountns.h"
#include "scan.h"

typedef struct Learn Learn;

/* What the last learn_update() did, for the log. */
typedef struct LearnStats {
	guint admitted;       /* new exes added to the model */
	guint too_small;      /* new exes below minsize */
	guint gone;           /* new exes that exited before their maps were read */
	guint learned;        /* read sets applied, since the Learn was made */
	guint learned_admitted; /* of those, exes admitted from their read set */
	guint refreshed;      /* known exes that started and had their maps re-read */
	guint maps_added;     /* maps those refreshes added */
	guint maps_removed;   /* maps those refreshes removed (unused for a while) */
	guint stale;          /* maps found gone or replaced by the identity sweep */
	guint refused;        /* new exes refused: the model is full of running ones
				 (learn_read_set() adds to it too) */
	guint evicted;        /* exes evicted by model_trim() at the last update */
	guint deferred;       /* processes whose maps wait: the pagemap budget was spent */
	guint64 pagemap_pages; /* pagemap pages looked up by the last update */
	guint pagemap_skipped; /* large maps left out: one process needed more than the budget */
	guint mounts_read;    /* times the last update read the mount table: 0 when no mount
				 changed since the one before (procfs flags changes) */
	/* the last maintenance (once an hour of model time) */
	gint64 maintained_at; /* model time, -1 never */
	guint chains_faded;   /* chains forgotten by aging */
	guint exes_forgotten; /* exes not seen for maxage */
	guint exes_gone;      /* exes whose file is gone */
	guint maps_dropped;   /* stale map uses removed */
} LearnStats;

/*
 * Every map's file is checked about once per this many seconds of model
 * time, a few maps per cycle.
 */
#define LEARN_FILE_CHECK_PERIOD 3600
/* Model seconds between maintenances (aging, expiry); shorter with a short half-life. */
#define LEARN_MAINTENANCE_PERIOD 3600
/* A map a restarted exe has not mapped in this many runs in a row is dropped from it. */
#define LEARN_MISSED_RUNS 3

/*
 * Where the maps of a new executable come from: appends ProcMap entries
 * to `maps` (as proc_read_maps() does) or fails; PROC_ERROR_GONE means
 * the process exited (it will be retried when seen again).
 */
typedef gboolean (*LearnMapsFunc)(pid_t pid, const char *exe_path, GArray *maps,
				gpointer user_data, GError **error);

Learn *learn_new(void);
void learn_free(Learn *learn);

/* Maps over usedmapkb are learned as the LEARN_TOUCHED_WINDOW-byte windows the process touched. */
#define LEARN_TOUCHED_WINDOW 65536
/*
 * Only the first LEARN_TOUCHED_MAX bytes of a map, and none past the end
 * of its file, are looked up: a program that maps a terabyte file, or a
 * small file with a huge length, must not stall the update. What it
 * touches beyond them is not learned.
 */
#define LEARN_TOUCHED_MAX (G_GUINT64_CONSTANT(16) << 30)
/*
 * Pages of pagemap one update looks up at most (the default of
 * learn_set_pagemap_budget()): 2^20 pages, 8 MiB of pagemap and 4 GiB of
 * file mapped with 4 KiB pages, some 10 ms of CPU. A desktop's starts
 * need a few thousand; 500 maps of 16 GiB once needed 2 billion (7 s).
 * What is over waits for the next update.
 */
#define LEARN_PAGEMAP_BUDGET (G_GUINT64_CONSTANT(1) << 20)

/*
 * The default maps source: /proc/PID/maps, counted as gone unless it
 * includes exe_path itself (the process exited or its pid was reused).
 * With this source the update then keeps the maps that mapprefix and the
 * file check accept and replaces each longer than the configured
 * usedmapkb by the parts the process has touched (proc_read_touched()),
 * within the file's size and the pagemap budget; where pagemap cannot be
 * read, maps are whole.
 */
gboolean learn_proc_maps(pid_t pid, const char *exe_path, GArray *maps,
		       gpointer user_data, GError **error);

/*
 * Paths of processes in other mount namespaces are translated through ns
 * (borrowed; NULL: none are, as on a fake /proc) by learn_proc_maps().
 */
void learn_set_mountns(Learn *learn, MountNs *ns);

/* Replaces the maps source (NULL restores learn_proc_maps, with the Learn as its data). */
void learn_set_maps_source(Learn *learn, LearnMapsFunc func, gpointer user_data);

/*
 * Whether a file is still there, and what it is now (the sweep of map
 * files, read sets). The default (NULL) requires a regular file at the
 * path now (lstat) and fills *id from it; the replay tool, whose traces
 * name files of another machine, accepts every path with an unknown (all
 * zero) identity, which never makes a map stale.
 *
 * A map seen in a maps line is learned by the identity the line gives
 * (device and inode), without asking this check: its path was chosen by
 * a process and is not looked up. Only a line without an inode (traces,
 * hand-made maps) asks a check set here; the default refuses it.
 */
/*
 * Sets the pagemap pages one update may look up (LEARN_PAGEMAP_BUDGET
 * unless set): a process whose large maps need more than is left waits
 * for the next update, but the first of an update always gets the whole
 * budget (and its maps past it are left out).
 */
void learn_set_pagemap_budget(Learn *learn, guint64 pages);

typedef gboolean (*LearnFileCheckFunc)(const char *path, MapFileId *id, gpointer user_data);
void learn_set_file_check(Learn *learn, LearnFileCheckFunc func, gpointer user_data);

/*
 * Applies the last scan (and consumes it, scan_consume()) to the model at
 * model time now: the starts and
 * stops (and the chains they create), the new exes, a re-read of the maps
 * of each known exe that started (new maps added, maps unused for
 * LEARN_MISSED_RUNS runs removed), a check of a few maps' files (see
 * LEARN_FILE_CHECK_PERIOD), the running times, and once per
 * LEARN_MAINTENANCE_PERIOD the maintenance: aging by the half-life,
 * forgetting exes unseen for maxage days or whose file is gone, and
 * dropping maps whose file is gone or was replaced.
 */
void learn_update(Learn *learn, Scan *scan, Model *model, const Conf *conf, gint64 now);

/*
 * Whether path leads into a network or FUSE mount (the covering mount or
 * one it lies under), by the mount table of the last learn_update() or
 * learn_refresh_mounts() with netfs off; FALSE with netfs on. Nothing is
 * looked up on a file system: for the callers that must not touch such a
 * mount.
 */
gboolean learn_path_is_remote(const Learn *learn, const char *path);
/*
 * The device of the mount path leads to now (the covering mount, by the
 * same table, netfs on or off), 0 if not known: what a job about path
 * names (fsjob.h), so that a mount made over a learned file's directory
 * is refused if it hangs, not the device the file was learned on.
 */
guint64 learn_path_dev(const Learn *learn, const char *path);
/* Reads the mount table now (each learn_update() does), for a caller before the first update. */
void learn_refresh_mounts(Learn *learn, const Conf *conf);

/*
 * With a pool (borrowed; freed before the learner and model), the
 * default file checks of the sweep, of learn_check_files() and of the
 * maintenance (lstat of a learned path, which a hung mount can stall)
 * run on it: a map is found stale, and an exe whose file is gone
 * forgotten, when the result comes back to the main context, not in the
 * call that checks. NULL (the default): at once. Checks set by
 * learn_set_file_check() always run at once.
 */
void learn_set_fsjob(Learn *learn, FsJobPool *pool, Model *model);

/*
 * The sweep's file check, brought forward for the maps about to be read
 * ahead: each of maps (Map *) whose file was not checked, nor learned, in
 * the last LEARN_FILE_CHECK_PERIOD seconds of model time is checked now,
 * and turns stale if the file is gone or was replaced. Returns how many
 * did; the caller leaves them out. Without it readahead would look for a
 * file gone for good every cycle until the sweep reached it (up to an
 * hour), and would read a replaced file at the old one's ranges.
 */
guint learn_check_files(Learn *learn, GPtrArray *maps, gint64 now);

/* The model parameters the configuration asks for. */
void learn_model_params(const Conf *conf, ModelParams *params);

const LearnStats *learn_get_stats(const Learn *learn);

/*
 * The read set learned from one start of exe_path: ranges is a GArray of
 * WatchRange (the resident parts of the files it opened while starting).
 * Ranges that mapprefix rejects, that are no longer regular files, or
 * that the exe already has as maps are left out; the rest join the exe's
 * maps with probability 1 (a start-up file is read at every start) and
 * origin EXEMAP_READ, up to maxreadfiles files and maxreadkb KB per exe
 * over all its starts. An unknown exe is admitted from its read set when
 * learnexec is on and the set reaches minsize (else it is marked too
 * small: the caller forgets its exec event, scan_forget_exec()), so a
 * program that never lived long enough for a scan is learned.
 */
typedef enum {
	LEARN_READ_IGNORED,   /* not learned: exeprefix, learnexec off, or a bad exe */
	LEARN_READ_TOO_SMALL, /* an unknown exe whose read set is below minsize: now a bad exe */
	LEARN_READ_ADMITTED,  /* an unknown exe admitted from its read set */
	LEARN_READ_ADDED,     /* a known exe; its new ranges were added */
	LEARN_READ_UNCHANGED, /* a known exe that had all of them already (or its caps are full) */
} LearnRead;

LearnRead learn_read_set(Learn *learn, Model *model, const Conf *conf, const char *exe_path,
			 const GArray *ranges, gint64 now);

/*
 * Before a finished window's files are probed (an open and mincore each,
 * on a worker): FALSE if learn_read_set() would ignore exe_path whatever
 * its ranges (exeprefix rejects it; unknown, with learnexec off or
 * marked too small); else removes from files (WatchFile *) those the exe
 * maps, which learn_read_set() leaves out, and returns TRUE.
 */
gboolean learn_read_filter(const Model *model, const Conf *conf, const char *exe_path,
			   GPtrArray *files);

/*
 * Whether the update counts starts found by the scan in the exes' hit
 * figures (only "was it in the last prefetch": the page cache cannot be
 * asked after the fact). On by default; the daemon turns it off when exec
 * events count starts as they happen.
 */
void learn_set_count_starts(Learn *learn, gboolean count);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Learn, learn_free)
