/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Scan: the first stage of a cycle, what runs now.
 *
 * A scan, at the start of a cycle, marks the known executables it sees
 * as running (at the scan time), lists those whose running state
 * flipped, and remembers one process for each executable it has never
 * seen and for each known one that started. It reads no maps: a process
 * that just started has not mapped its libraries yet. Learn (learn.h)
 * consumes what the scan found half a cycle later.
 *
 * The scan is split into begin / saw-process / end so that the replay
 * drives exactly the same code from a recorded trace; scan_proc() does
 * the three on /proc.
 *
 * Ownership: the Scan owns its pending results (ScanResult) until
 * scan_consume() or the next scan_begin(); it keeps no pointer into the
 * model between scan_end() and the next scan_begin().
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "conf.h"
#include "model.h"
#include "mountns.h"

typedef struct Scan Scan;

/* An executable the scan found starting, and a process running it. */
typedef struct ScanExe {
	char *path;           /* sanitized exe path, owned */
	pid_t pid;            /* the first process seen running it */
} ScanExe;

/* What the last scan found, until it is consumed. */
typedef struct ScanResult {
	gint64 time;          /* model time of the last scan, -1 none yet (kept after consume) */
	GPtrArray *changed;   /* char *: paths of known exes that started or stopped */
	GPtrArray *new_exes;  /* ScanExe *: exes never seen, in the order first seen */
	GPtrArray *restarted; /* ScanExe *: known exes that started, to re-read */
} ScanResult;

/* What the last scan did, for the log. */
typedef struct ScanStats {
	guint processes;      /* processes seen by the last scan */
	guint changed;        /* exes that started or stopped */
} ScanStats;

Scan *scan_new(void);
void scan_free(Scan *scan);

/* The scan, in three steps; scan_proc() does all three on /proc. */
void scan_begin(Scan *scan, Model *model, gint64 now);
/* One process; raw_exe is the /proc/PID/exe link as read. */
void scan_saw_process(Scan *scan, Model *model, const Conf *conf, pid_t pid, const char *raw_exe);
/* Moves model->running to the exes seen, at the scan time. */
void scan_end(Scan *scan, Model *model, gint64 now);
/*
 * The three steps on the processes of /proc (proc_root(), see proc.h).
 * FALSE with error set if the process list could not be read whole; the
 * model is then untouched.
 */
gboolean scan_proc(Scan *scan, Model *model, const Conf *conf, gint64 now, GError **error);

/*
 * With ns (borrowed; NULL: none, as on a fake /proc), scan_proc() names
 * the executable of a process in another mount namespace by the path
 * that reaches it here (mountns.h), and skips the process when none
 * does. It starts a new round of ns (mountns_begin()) at each scan.
 */
void scan_set_mountns(Scan *scan, MountNs *ns);

/* The pending results; valid until scan_consume() or scan_begin(). */
const ScanResult *scan_get_result(const Scan *scan);
/* Drops the pending results (learn applied them): a second learn must not apply them again. */
void scan_consume(Scan *scan);

const ScanStats *scan_get_stats(const Scan *scan);

/*
 * A start of exe_path seen as it happened (an exec event), between two
 * scans. The next scan counts the program as running even if it has
 * exited by then, so a program that lives a fraction of a second is, in
 * the chains, a program that ran during that cycle: the pair it forms
 * with the program that launched it (a build tool, a shell script) goes
 * to "both running", and it is predicted while its launcher runs. An
 * unknown program is remembered for two scans, to give its start-up
 * window time to end and admit it (see learn_read_set()).
 */
void scan_saw_exec(Scan *scan, Model *model, const Conf *conf, const char *exe_path);
/* Forgets an exec event of exe_path not yet applied (learn found it too small). */
void scan_forget_exec(Scan *scan, const char *exe_path);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Scan, scan_free)
