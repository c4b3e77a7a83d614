/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Trace: a record of what the daemon observed, cycle by cycle, so that
 * the model and the predictor can be replayed offline (preload-replay).
 *
 * A trace is a versioned, line-based text file (doc/trace-format.md):
 * a header with the format version and the cycle, then one line per
 * record. A scan record holds the model time of the scan, the memory
 * figures and the executables seen running; a maps record holds what the
 * learn stage's maps source returned for a new executable (or that it failed).
 * Paths are written once each, as file:// URIs, and referred to by
 * number afterwards, so any byte in a path survives and a long trace
 * stays small.
 *
 * The daemon records by wrapping learn's maps source with the writer
 * (trace_writer_attach) and by one trace_writer_scan_model() call after
 * each scan. The writer never stops the daemon: the first write error is
 * kept and returned by every later call, and nothing more is written.
 */
#pragma once

#include <glib.h>

#include "model.h"
#include "proc.h"
#include "learn.h"

#define TRACE_FORMAT_VERSION 1

#define TRACE_ERROR (trace_error_quark())
GQuark trace_error_quark(void);

typedef enum {
	TRACE_ERROR_CORRUPT,  /* not a trace, or a line not shaped like its record */
	TRACE_ERROR_TRUNCATED,/* the file is empty or ends inside a line */
	TRACE_ERROR_VERSION,  /* written in a newer format */
	TRACE_ERROR_IO,       /* cannot read or write the file */
} TraceError;

/* ---- writing ---- */

typedef struct TraceWriter TraceWriter;

/*
 * Creates (or truncates) `path`, mode 0600 since it lists the programs a
 * user runs, and writes the header with `cycle` (seconds).
 */
TraceWriter *trace_writer_open(const char *path, gint64 cycle, GError **error);

/*
 * Writes the END line, flushes and closes; frees tw even on failure.
 * Returns FALSE with the first error the writer met, if any.
 */
gboolean trace_writer_close(TraceWriter *tw, GError **error);

/* Closes without the END line (the trace then reads as cut short). */
void trace_writer_free(TraceWriter *tw);

/*
 * One scan: model time `time`, the memory figures (NULL if they could
 * not be read) and the paths of the executables seen running. Flushes,
 * so a daemon that is killed leaves a trace of whole cycles. Returns FALSE
 * once the writer has failed (this write's error or an earlier one).
 */
gboolean trace_writer_scan(TraceWriter *tw, gint64 time, const ProcMemstat *mem,
			   const char *const *exes, guint n_exes, GError **error);

/* trace_writer_scan() with the exes of model->running. */
gboolean trace_writer_scan_model(TraceWriter *tw, const Model *model, gint64 time,
				 const ProcMemstat *mem, GError **error);

/*
 * What a maps source returned for exe_path: the ProcMap entries of
 * `maps` from index `first` on. Relative paths (which /proc never gives)
 * are left out.
 */
gboolean trace_writer_maps(TraceWriter *tw, const char *exe_path, const GArray *maps,
			   guint first, GError **error);

/*
 * An M line for every executable the model already knows, from its maps
 * (sorted by path). A daemon that starts from a saved state never reads
 * the maps of those again, so without this a replay, which starts from
 * an empty model, could not admit them. Call it once, before the first
 * scan is recorded.
 */
gboolean trace_writer_known_maps(TraceWriter *tw, const Model *model, GError **error);

/* That the maps source failed for exe_path with `failure` (a PROC_ERROR). */
gboolean trace_writer_maps_failed(TraceWriter *tw, const char *exe_path,
				  const GError *failure, GError **error);

/*
 * Puts the writer between learn and its maps source: every call is
 * passed on to `inner` (NULL: proc_read_maps) and its result recorded.
 * trace_writer_detach() puts `inner` back; do it before freeing tw.
 */
void trace_writer_attach(TraceWriter *tw, Learn *learn, LearnMapsFunc inner, gpointer inner_data);
void trace_writer_detach(TraceWriter *tw, Learn *learn);

/* Scan records written so far. */
guint64 trace_writer_get_scans(const TraceWriter *tw);

/* ---- reading ---- */

typedef enum {
	TRACE_RECORD_SCAN,        /* a scan: time, memory, running exes */
	TRACE_RECORD_MAPS,        /* the maps source returned maps for exe */
	TRACE_RECORD_MAPS_FAILED, /* the maps source failed for exe */
} TraceRecordType;

/* One mapped file range; path is owned by the reader. */
typedef struct TraceMap {
	const char *path;
	guint64 offset;
	guint64 length;
	gboolean deleted;     /* the kernel marked the file deleted */
} TraceMap;

/*
 * A record, owned by the reader and valid until the next
 * trace_reader_next(). Every path is interned by the reader: the same
 * path is always the same pointer, valid as long as the reader.
 */
typedef struct TraceRecord {
	TraceRecordType type;
	guint64 line;         /* line number in the file, from 1 */

	/* TRACE_RECORD_SCAN */
	gint64 time;          /* model time of the scan, seconds */
	gboolean mem_known;   /* FALSE if meminfo could not be read */
	ProcMemstat mem;      /* KB; zero when !mem_known */
	GPtrArray *exes;      /* const char *: exes seen running */

	/* TRACE_RECORD_MAPS and TRACE_RECORD_MAPS_FAILED */
	const char *exe;
	GArray *maps;         /* TraceMap, for TRACE_RECORD_MAPS */
	int failure;          /* ProcError code, for TRACE_RECORD_MAPS_FAILED */
} TraceRecord;

typedef struct TraceReader TraceReader;

/* Opens a trace and reads its header. */
TraceReader *trace_reader_open(const char *path, GError **error);
/* The same on a trace held in memory (copied), for tests. */
TraceReader *trace_reader_new_from_data(const char *data, gsize length, GError **error);
void trace_reader_free(TraceReader *tr);

/*
 * The next record: returns TRUE and sets *record, or TRUE and NULL at
 * the end of the trace, or FALSE with a TRACE_ERROR naming the line.
 * After an error every later call fails the same way.
 */
gboolean trace_reader_next(TraceReader *tr, const TraceRecord **record, GError **error);

gint64 trace_reader_get_cycle(const TraceReader *tr);
guint trace_reader_get_version(const TraceReader *tr);
/* Whether the END line was read (FALSE for a trace cut short). */
gboolean trace_reader_is_complete(const TraceReader *tr);
/* Distinct paths defined so far. */
guint trace_reader_get_n_paths(const TraceReader *tr);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(TraceWriter, trace_writer_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TraceReader, trace_reader_free)
