/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Report: what the running daemon knows, for people and for scripts.
 *
 * The daemon hands over its live objects as ReportSources; a
 * ReportSnapshot copies from them what the answers need (figures, the
 * most likely programs, the hit figures, the configuration as text), so
 * that rendering is pure and tests build a snapshot from a struct
 * literal. From one snapshot come the SIGUSR1 dump (the lines logged,
 * unchanged from before the dump had its own module), the text and JSON
 * answers of the control verbs status, top, hits and dump, and the one
 * STATUS= line systemd shows.
 *
 * `explain` needs the live model (the budget line is recomputed from the
 * last scoring, the program's files are probed), so report_explain()
 * takes the sources and returns a ReportExplain with an ordered list of
 * reasons, each a code of ReportReason plus figures: later features add
 * codes, clients match on the code's name.
 *
 * Ownership: the snapshot and the explanation own what they point to
 * when made by their _new functions; a literal made by a test owns
 * nothing and is never freed. Renderers return new strings.
 */
#pragma once

#include <glib.h>

#include "conf.h"
#include "fsjob.h"
#include "launch.h"
#include "model.h"
#include "mountns.h"
#include "proc.h"
#include "prophet.h"
#include "readahead.h"
#include "watch.h"

/* How many predicted programs the SIGUSR1 dump lists. */
#define REPORT_DUMP_TOP_EXES 10
/* How many programs the SIGUSR1 dump lists with their hit figures. */
#define REPORT_DUMP_TOP_HITS 10
/* `top N`: N at most this. */
#define REPORT_TOP_MAX 1000
/* `hits` without a program: at most this many programs. */
#define REPORT_HITS_MAX 100
/* Stages of a cycle the CPU figures can name. */
#define REPORT_MAX_STAGES 8

/* ---- the hit history, for "the last hour" ---- */

/* Hit totals sampled once per cycle; an hour of them is kept (bounded). */
typedef struct ReportHitLog ReportHitLog;

ReportHitLog *report_hit_log_new(void);
void report_hit_log_free(ReportHitLog *log);
/* Adds the totals at monotonic time now_us and forgets samples older than an hour before it. */
void report_hit_log_add(ReportHitLog *log, gint64 now_us, const ExeHits *total);
/*
 * The hits between the oldest kept sample and the newest into *delta, and
 * the microseconds they span into *span_us. FALSE with fewer than two samples.
 */
gboolean report_hit_log_delta(const ReportHitLog *log, ExeHits *delta, gint64 *span_us);

/* The sum of every exe's hit figures. */
void report_total_hits(const Model *model, ExeHits *total);

/* ---- the sources and the snapshot ---- */

/* The daemon's live objects and figures, borrowed for one report. */
typedef struct ReportSources {
	Model *model;
	const Conf *conf;
	guint cycles;                  /* cycles since start */
	const ProcMemstat *mem;        /* the last prediction's memory figures */
	const ProcPressure *pressure;  /* NULL: not read */
	ProphetPause pause;
	gboolean idle_class;           /* readahead runs in the idle I/O class */
	gboolean on_battery;           /* the budget is scaled by batterybudget */
	guint64 budget_kb;             /* the last prediction's budget */
	guint selected_maps;
	guint64 selected_kb;
	const ReadaheadStats *readahead; /* the last batch */
	guint64 read_abandoned;        /* batches abandoned past their deadline */
	guint read_stuck;              /* of those, still blocked */
	guint64 read_refused;          /* batches refused: READAHEAD_MAX_STUCK threads blocked */
	const FsJobStats *fsjobs;      /* the file-system jobs; NULL: no pool */
	const WatchStats *watch;       /* NULL without a watcher */
	const char *watch_text;        /* watch_describe(), or why there is none */
	guint n_stages;
	const char *const *stage_names;
	const gint64 *stage_us;        /* main thread CPU per stage, since start */
	gint64 cpu_us;                 /* process CPU since start */
	gint64 readahead_cpu_us;       /* of it, the readahead threads' (readahead_get_cpu_us()) */
	guint64 batches, read_bytes, read_calls; /* readahead since start */
	const ReportHitLog *hit_log;   /* NULL: no hour figures */
	const MountNsStats *mountns;   /* programs of other mount namespaces; NULL: none */
	const LaunchStats *launch;     /* the launch-time prefetch; NULL: none */
} ReportSources;

/* A program the prophet expects. */
typedef struct ReportExe {
	const char *path;
	double probability;           /* of being needed soon */
	guint64 size;                 /* bytes of its learned set */
	guint maps;
} ReportExe;

/* A program's hit figures. */
typedef struct ReportHits {
	const char *path;
	ExeHits hits;
} ReportHits;

typedef struct ReportStage {
	const char *name;
	gint64 us;                    /* main thread CPU, microseconds */
} ReportStage;

typedef struct ReportSnapshot {
	gint64 model_time;            /* seconds */
	guint exes, running, maps, chains, too_small;
	gint64 max_exes, max_exe_maps, max_maps, max_chains; /* the caps (configuration) */
	ModelEvictions evictions;     /* what they did */
	guint64 read_abandoned;       /* readahead batches abandoned past their deadline */
	guint read_stuck;             /* of those, still blocked */
	guint64 read_refused;         /* batches refused at the cap on blocked threads */
	gboolean have_fsjobs;
	FsJobStats fsjobs;            /* the file-system jobs (fsjob.h) */
	guint cycles;
	ProcMemstat mem;
	gboolean pressure_wanted;     /* maxpressure is set */
	gboolean have_pressure;
	guint pressure_some_avg10;    /* hundredths of a percent */
	ProphetPause pause;
	const char *pause_why;        /* prophet_pause_describe(), NULL when prefetching */
	gboolean idle_class;
	gboolean on_battery;          /* the budget is scaled by batterybudget */
	gboolean dopredict;
	guint64 budget_kb;
	guint selected_maps;
	guint64 selected_kb;
	ReadaheadStats readahead;
	guint predicted;              /* programs not running with a probability > 0 */
	const ReportExe *top;         /* the most likely first */
	guint n_top;
	gint64 cpu_us;                /* process CPU since start */
	gint64 readahead_cpu_us;      /* of it, the readahead threads' */
	ReportStage stages[REPORT_MAX_STAGES];
	guint n_stages;
	guint64 batches, read_bytes, read_calls;
	LaunchStats launch;           /* zero without a launch policy */
	gboolean watching;
	const char *watch_text;       /* description, or why there is no watcher */
	WatchStats watch;
	ExeHits hits_total;
	const ReportHits *hits;       /* every started program, most starts first */
	guint n_hits;
	gboolean have_hour;           /* hits_hour and hour_us hold something */
	ExeHits hits_hour;            /* hits over the last hour (or since start) */
	gint64 hour_us;               /* the span hits_hour covers */
	guint64 peak_rss_kb;          /* the daemon's peak resident memory */
	MountNsStats mountns;         /* other mount namespaces (all zero without) */
	const char *conf_text;        /* conf_dump() */

	/* owned by a snapshot made by report_snapshot_new() */
	GStringChunk *strings;
	ReportExe *top_owned;
	ReportHits *hits_owned;
} ReportSnapshot;

/* A snapshot of the sources, with at most top_n predicted programs. */
ReportSnapshot *report_snapshot_new(const ReportSources *src, guint top_n);
void report_snapshot_free(ReportSnapshot *snap);

/* ---- rendering (pure) ---- */

/*
 * The SIGUSR1 dump: the messages to log, in order (GPtrArray of char *,
 * owned), the first "SIGUSR1: state dump", the last the configuration.
 */
GPtrArray *report_dump_lines(const ReportSnapshot *snap);
/* Logs the dump with g_message(), one message per line of report_dump_lines(). */
void report_log_dump(const ReportSnapshot *snap);

/* The control verbs; each text ends in a newline. */
char *report_dump_text(const ReportSnapshot *snap, gboolean json);
char *report_status_text(const ReportSnapshot *snap, gboolean json);
/* The n most likely programs (n > 0; at most the snapshot's n_top). */
char *report_top_text(const ReportSnapshot *snap, guint n, gboolean json);
/*
 * Hit figures of program (a path, or a file name that one program has),
 * or, when program is NULL, the totals and up to REPORT_HITS_MAX programs.
 * An unknown program gives NULL and an error message in *error_text.
 */
char *report_hits_text(const ReportSnapshot *snap, const char *program, gboolean json,
		       char **error_text);

/*
 * For systemd's STATUS=: one short line from the live sources and the
 * hit totals (report_total_hits()); cheap enough for every cycle.
 */
char *report_status_line(const ReportSources *src, const ExeHits *total);

/* A path for a text answer: control characters and invalid UTF-8 as \xNN, '\' as \\. */
char *report_path_text(const char *path);

/* ---- explain ---- */

/* Why a program is or is not prefetched now: one code per finding. */
typedef enum {
	REPORT_REASON_PREFETCHED,     /* files of it are in the last prediction's selection */
	REPORT_REASON_NOT_LEARNED,    /* the model does not know it */
	REPORT_REASON_PREFIX,         /* exeprefix rejects its path */
	REPORT_REASON_TOO_SMALL,      /* found smaller than minsize */
	REPORT_REASON_RUNNING,        /* it runs: its files are in use, so cached */
	REPORT_REASON_NO_BID,         /* learned, but no chain bids for it this cycle */
	REPORT_REASON_BELOW_LINE,     /* learned, its files score below the budget line */
	REPORT_REASON_PAUSED,         /* prefetching is paused */
	REPORT_REASON_NO_PREDICT,     /* dopredict is off */
	REPORT_REASON_CACHED,         /* its learned set is resident already */
	REPORT_REASON_STALE,          /* some of its files are gone or were replaced */
	REPORT_REASON_SUCCESSOR,      /* it bids as the likely next start after the last one */
	REPORT_REASON_SESSION_OPENER, /* quiet for long: it bids as a session's first start */
	REPORT_REASON_NOT_PROBED,     /* the residency probe did not answer in time or was refused */
	REPORT_REASON_FREQUENCY,      /* the frequency expert's share and weight (prophet.h) */
	REPORT_REASON_HANDOFF,        /* it starts as a running program stops, by habit */
	REPORT_N_REASONS
} ReportReason;

typedef struct ReportFinding {
	ReportReason reason;
	char *text;                   /* a sentence with the figures */
} ReportFinding;

typedef struct ReportExplain {
	char *program;                /* as asked */
	char *path;                   /* the model's path, NULL if not learned */
	gboolean learned;
	gboolean running;
	double probability;           /* of being needed soon, this cycle */
	double line;                  /* probability of the least likely selected map, or
					 of PROPHET_MIN_PROB when nothing was selected */
	guint maps, maps_selected, maps_stale;
	guint64 size, selected_bytes; /* bytes */
	gboolean probed;              /* resident and probed_bytes hold a measure */
	guint64 probed_bytes, resident;
	GArray *findings;             /* ReportFinding, the deciding one first */
} ReportExplain;

/* The stable name of a reason for scripts: "not-learned", "below-line"... */
const char *report_reason_name(ReportReason reason);

/*
 * Explains program (a path, or the file name of exactly one learned
 * program) from the live sources. Recomputes the selection from the last
 * scoring and, unless probe is FALSE, asks the page cache about the
 * program's files (watch_measure_exe()). NULL, with a message in
 * *error_text (if not NULL), when several learned programs have that
 * file name.
 */
ReportExplain *report_explain(const ReportSources *src, const char *program, gboolean probe,
			      char **error_text);
/*
 * The residency probe's answer, for an explanation made with probe FALSE
 * whose probe ran elsewhere (a file-system worker): fills the figures and
 * adds the "cached" finding when nearly all is resident.
 */
void report_explain_probed(ReportExplain *explain, guint64 probed, guint64 resident);
/* The probe gave no answer: a "not-probed" finding saying why. */
void report_explain_unprobed(ReportExplain *explain, const char *why);
void report_explain_free(ReportExplain *explain);
char *report_explain_text(const ReportExplain *explain, gboolean json);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ReportHitLog, report_hit_log_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ReportSnapshot, report_snapshot_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ReportExplain, report_explain_free)
