/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The replay engine behind preload-replay: the daemon's cycle, driven by
 * a trace instead of /proc and the clock, and a scorekeeper that checks
 * each prediction against the starts that follow it.
 *
 * A cycle of the trace is its scan line plus the maps lines after it
 * (the daemon writes those during the update that follows the scan).
 * The executables seen by the scan are the ones the scan line lists and
 * the ones a maps line names: the daemon lists only executables its
 * model knows, and the new ones show up through their maps. Each cycle
 * runs the daemon's own cycle (cycle.h), both halves:
 *
 *   T             the scan: the trace's executables instead of /proc
 *   T + cycle/2   learn, then the prediction, with the trace's memory
 *
 * with T, the cycle's clock, the trace's time minus the first scan's time
 * (the model starts empty, like a daemon started with the trace). The
 * maps source answers from the maps lines read so far, the latest for
 * each executable; a recorder stands in for the readahead and keeps the
 * selection for scoring.
 *
 * Scoring follows the thesis: when an executable the model knows starts
 * at cycle k, each of its maps counts as a hit if the selection of cycle
 * k-1 held it. The naive and oracle selections of cycle k-1 are computed
 * only when needed, at cycle k, from what was known at k-1: the start
 * counts before k, the executables running at k-1 and the budget of k-1.
 * Since the prediction changes nothing in the model, the engine reads one
 * cycle ahead and predicts only before cycles with a start to score,
 * unless asked to predict every cycle; both give the same scores.
 */
#include "config.h"

#include "replay-lib.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "cycle.h"
#include "model.h"
#include "proc.h"
#include "prophet.h"
#include "state.h"

/*
 * The daemon's learn stage reads only map files that are regular files on
 * this machine (lstat). A replay has none of the traced machine's files,
 * so it accepts them all (learn_set_file_check).
 */
#define FIRST_PID 1000
#define FIRST_ADDRESS G_GUINT64_CONSTANT(0x400000)
#define PAGE G_GUINT64_CONSTANT(4096)
/* The largest naive start probability (see naive_select). */
#define NAIVE_MAX_P (1.0 - 1e-9)

/* The latest answer of the maps source for one executable. */
typedef struct MapsEntry {
	gboolean failed;
	int failure;          /* ProcError, when failed */
	GArray *maps;         /* TraceMap (paths interned by the reader) */
} MapsEntry;

/* One cycle of the trace, copied out of the reader. */
typedef struct TraceCycle {
	gboolean valid;
	guint64 line;
	gint64 time;
	gboolean mem_known;
	ProcMemstat mem;
	GPtrArray *running;   /* const char *, interned: scan line, then maps lines */
	GHashTable *running_set;
	GPtrArray *maps;      /* MapsEntry *, for maps_exes, applied before the update */
	GPtrArray *maps_exes; /* const char *, interned */
} TraceCycle;

typedef struct Replay {
	const ReplayOptions *options;
	TraceReader *tr;
	Conf *conf;
	Model *model;
	Cycle *cycle;         /* the daemon's cycle, on the sources below */
	const CycleSources *sources;
	GError *restart_error;  /* a restart (options->restart_at) failed */
	const TraceCycle *cur;  /* the trace's cycle being run */
	const TraceCycle *next; /* the one after it, for the plan */

	GHashTable *maps_table;   /* exe path -> MapsEntry * */
	GHashTable *pids;         /* exe path -> fake pid */
	GHashTable *start_counts; /* exe path -> starts so far */

	/* the trace's scan line read while collecting the previous cycle */
	gboolean have_scan;
	TraceCycle scan;

	/* what cycle k-1 left for scoring cycle k */
	gboolean have_prev;
	GHashTable *prev_running; /* exe path set */
	GHashTable *prev_selection; /* Map * set */
	gboolean prev_predicted;
	guint64 prev_budget;
	guint64 prev_selected_kb;

	gboolean have_mem;
	ProcMemstat mem;
	gint64 t0;
	gint64 prev_time;         /* the trace time of cycle k-1 */

	/* the true model's forecasts: trace time -> GArray of BoundEntry */
	GHashTable *bound;
	GStringChunk *bound_paths;
	guint64 bound_missing;    /* scored cycles without a forecast */

	ReplayResult *result;
} Replay;

static void
maps_entry_free(gpointer data)
{
	MapsEntry *e = data;

	if (!e)
		return;
	if (e->maps)
		g_array_unref(e->maps);
	g_free(e);
}

static void
trace_cycle_init(TraceCycle *c)
{
	memset(c, 0, sizeof(*c));
	c->running = g_ptr_array_new();
	c->running_set = g_hash_table_new(g_str_hash, g_str_equal);
	c->maps = g_ptr_array_new_with_free_func(maps_entry_free);
	c->maps_exes = g_ptr_array_new();
}

static void
trace_cycle_clear(TraceCycle *c)
{
	g_clear_pointer(&c->running, g_ptr_array_unref);
	g_clear_pointer(&c->running_set, g_hash_table_unref);
	g_clear_pointer(&c->maps, g_ptr_array_unref);
	g_clear_pointer(&c->maps_exes, g_ptr_array_unref);
}

static void
trace_cycle_reset(TraceCycle *c)
{
	c->valid = FALSE;
	g_ptr_array_set_size(c->running, 0);
	g_hash_table_remove_all(c->running_set);
	g_ptr_array_set_size(c->maps, 0);
	g_ptr_array_set_size(c->maps_exes, 0);
}

static void
trace_cycle_add_running(TraceCycle *c, const char *path)
{
	if (g_hash_table_add(c->running_set, (gpointer)path))
		g_ptr_array_add(c->running, (gpointer)path);
}

static void
trace_cycle_take_scan(TraceCycle *c, const TraceRecord *rec)
{
	trace_cycle_reset(c);
	c->valid = TRUE;
	c->line = rec->line;
	c->time = rec->time;
	c->mem_known = rec->mem_known;
	c->mem = rec->mem;
	for (guint i = 0; i < rec->exes->len; i++)
		trace_cycle_add_running(c, g_ptr_array_index(rec->exes, i));
}

static void
trace_cycle_swap(TraceCycle *a, TraceCycle *b)
{
	TraceCycle tmp = *a;

	*a = *b;
	*b = tmp;
}

static MapsEntry *
maps_entry_from_record(const TraceRecord *rec)
{
	MapsEntry *e = g_new0(MapsEntry, 1);

	if (rec->type == TRACE_RECORD_MAPS_FAILED) {
		e->failed = TRUE;
		e->failure = rec->failure;
	} else {
		e->maps = g_array_sized_new(FALSE, FALSE, sizeof(TraceMap), rec->maps->len);
		g_array_append_vals(e->maps, rec->maps->data, rec->maps->len);
	}
	return e;
}

/*
 * Reads records up to the next scan line, which it keeps in r->scan
 * (r->have_scan); the maps lines before it go to c, or with c NULL to
 * the table. Stops early, with r->have_scan FALSE, at the end of the trace.
 */
static gboolean
read_to_scan(Replay *r, TraceCycle *c, GError **error)
{
	const TraceRecord *rec;

	for (;;) {
		if (!trace_reader_next(r->tr, &rec, error))
			return FALSE;
		if (!rec)
			return TRUE;
		if (rec->type == TRACE_RECORD_SCAN) {
			trace_cycle_take_scan(&r->scan, rec);
			r->have_scan = TRUE;
			return TRUE;
		}
		if (!c) {
			g_hash_table_replace(r->maps_table, (gpointer)rec->exe,
					     maps_entry_from_record(rec));
			continue;
		}
		g_ptr_array_add(c->maps, maps_entry_from_record(rec));
		g_ptr_array_add(c->maps_exes, (gpointer)rec->exe);
		trace_cycle_add_running(c, rec->exe);
	}
}

/*
 * Reads the next whole cycle into c: its scan line (read ahead by the
 * previous call) and the maps lines up to the next scan line. c->valid is
 * FALSE at the end of the trace. Maps lines before the first scan line
 * (not written by the daemon, but harmless) go straight to the table.
 */
static gboolean
read_cycle(Replay *r, TraceCycle *c, GError **error)
{
	trace_cycle_reset(c);
	if (!r->have_scan) {
		if (!read_to_scan(r, NULL, error))
			return FALSE;
		if (!r->have_scan)
			return TRUE;
	}
	trace_cycle_swap(c, &r->scan);
	r->have_scan = FALSE;
	return read_to_scan(r, c, error);
}

/* ---- the cycle's view of the trace ---- */

static gboolean
replay_maps_source(pid_t pid, const char *exe_path, GArray *maps, gpointer user_data,
		   GError **error)
{
	Replay *r = user_data;
	const MapsEntry *e = g_hash_table_lookup(r->maps_table, exe_path);
	guint64 address = FIRST_ADDRESS;

	(void)pid;
	if (!e) {
		/* Seen by the scan, never read: as if it exited in between. */
		g_set_error(error, PROC_ERROR, PROC_ERROR_GONE, "no maps of %s in the trace", exe_path);
		return FALSE;
	}
	if (e->failed) {
		g_set_error(error, PROC_ERROR, e->failure, "the trace records a failure for %s",
			    exe_path);
		return FALSE;
	}
	for (guint i = 0; i < e->maps->len; i++) {
		const TraceMap *tm = &g_array_index(e->maps, TraceMap, i);
		ProcMap pm = { 0 };

		/* Any addresses will do; only the length (end - start) matters. */
		if (tm->length > G_MAXUINT64 - address)
			address = 0;
		pm.start = address;
		pm.end = address + tm->length;
		pm.offset = tm->offset;
		pm.path = g_strdup(tm->path);
		pm.deleted = tm->deleted;
		g_array_append_val(maps, pm);
		address = pm.end <= G_MAXUINT64 - PAGE ? pm.end + PAGE : 0;
	}
	return TRUE;
}

/* Every file is there, with an unknown identity (so no map turns stale). */
static gboolean
accept_any_file(const char *path, MapFileId *id, gpointer user_data)
{
	(void)path;
	(void)user_data;
	memset(id, 0, sizeof(*id));
	return TRUE;
}

static pid_t
pid_of(Replay *r, const char *path)
{
	gpointer pid = g_hash_table_lookup(r->pids, path);

	if (!pid) {
		pid = GINT_TO_POINTER(FIRST_PID + (int)g_hash_table_size(r->pids));
		g_hash_table_insert(r->pids, (gpointer)path, pid);
	}
	return GPOINTER_TO_INT(pid);
}

/* ---- selections ---- */

static guint64
kb_of(const Map *map)
{
	return map->length / 1024 + (map->length % 1024 != 0);
}

/*
 * Adds exe's maps that are (or, with used FALSE, are not) in `in_use` to
 * `chosen` while they fit, skipping those that do not, as
 * prophet_select() does.
 */
static void
fill_with_exe(GHashTable *chosen, const Exe *exe, GHashTable *in_use, gboolean used,
	      guint64 *left)
{
	for (guint i = 0; i < exe->exemaps->len; i++) {
		Map *map = g_array_index(exe->exemaps, ExeMap, i).map;
		guint64 kb = kb_of(map);

		if (g_hash_table_contains(in_use, map) != used)
			continue;
		if (kb > *left || g_hash_table_contains(chosen, map))
			continue;
		*left -= kb;
		g_hash_table_add(chosen, map);
	}
}

typedef struct Candidate {
	double lnprob;
	guint rank;
	Map *map;
} Candidate;

static gint
compare_candidates(gconstpointer pa, gconstpointer pb)
{
	const Candidate *a = pa, *b = pb;

	if (a->lnprob != b->lnprob)
		return a->lnprob < b->lnprob ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/*
 * prophet_select() over every map: those needed with a probability of at
 * least PROPHET_MIN_PROB, most likely
 * first, ties by Map.rank (path, offset, length), each taken if it still
 * fits. Then every map's
 * lnprob is set back to 0, which prophet_score() relies on (it resets
 * only what it scored itself).
 */
static GHashTable *
select_like_prophet(Replay *r, guint64 budget, guint64 *used_kb)
{
	g_autoptr(GArray) candidates = g_array_new(FALSE, FALSE, sizeof(Candidate));
	GHashTable *chosen = g_hash_table_new(NULL, NULL);
	GHashTableIter iter;
	gpointer key;
	guint64 left = budget;

	model_rank_maps(r->model);
	g_hash_table_iter_init(&iter, r->model->maps);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		Map *map = key;
		Candidate c = { map->prophet.lnprob, map->rank, map };

		map->prophet.lnprob = 0;
		if (!(c.lnprob <= log1p(-PROPHET_MIN_PROB)) || map->learn.stale)
			continue;
		g_array_append_val(candidates, c);
	}
	g_array_sort(candidates, compare_candidates);
	for (guint i = 0; i < candidates->len; i++) {
		Map *map = g_array_index(candidates, Candidate, i).map;
		guint64 kb = kb_of(map);

		if (kb > left)
			continue;
		left -= kb;
		g_hash_table_add(chosen, map);
	}
	*used_kb = budget - left;
	return chosen;
}

/*
 * The thesis' naive predictor at cycle k-1: each exe not running then
 * starts with probability (its starts so far) / (all starts so far), and
 * preload's own map scoring and selection do the rest: a map scores
 * ln P(not needed) summed over its exes, +1 for each running exe using
 * it (its pages are resident), ln(1 - p) for each other. Only the exe
 * probabilities differ from preload's, so the comparison is about the
 * prediction, not the bookkeeping. It overwrites the maps' lnprob, which
 * the next prophet_score() recomputes anyway.
 */
static GHashTable *
naive_select(Replay *r, guint64 *used_kb)
{
	GHashTableIter iter;
	gpointer value;
	guint64 total = 0;

	g_hash_table_iter_init(&iter, r->start_counts);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		total += GPOINTER_TO_UINT(value);

	/* prophet_score() left its last scores on its candidates. */
	for (guint i = 0; i < r->model->candidates->len; i++)
		((Map *)g_ptr_array_index(r->model->candidates, i))->prophet.lnprob = 0;
	g_hash_table_iter_init(&iter, r->model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		const Exe *exe = value;
		gboolean running = g_hash_table_contains(r->prev_running, exe->path);
		guint count = GPOINTER_TO_UINT(g_hash_table_lookup(r->start_counts, exe->path));
		/* Capped like prophet's bids: one certain start must not be -inf. */
		double p = MIN(replay_ratio(count, total), NAIVE_MAX_P);

		for (guint i = 0; i < exe->exemaps->len; i++) {
			const ExeMap *em = &g_array_index(exe->exemaps, ExeMap, i);

			if (running)
				em->map->prophet.lnprob += 1;
			else if (p > 0 && em->prob > 0)
				em->map->prophet.lnprob += log1p(-MIN(em->prob, 1.0) * p);
		}
	}
	return select_like_prophet(r, r->prev_budget, used_kb);
}

static gint
compare_exe_path(gconstpointer pa, gconstpointer pb)
{
	const Exe *a = *(const Exe *const *)pa, *b = *(const Exe *const *)pb;

	return strcmp(a->path, b->path);
}

/*
 * The maps of what does start, in path order, while they fit: first the
 * ones no running exe uses (those are the ones that matter), then the
 * others.
 */
static GHashTable *
oracle_select(Replay *r, GPtrArray *starting, GHashTable *in_use, guint64 *used_kb)
{
	g_autoptr(GPtrArray) sorted = g_ptr_array_sized_new(starting->len);
	GHashTable *chosen = g_hash_table_new(NULL, NULL);
	guint64 left = r->prev_budget;

	for (guint i = 0; i < starting->len; i++)
		g_ptr_array_add(sorted, g_ptr_array_index(starting, i));
	g_ptr_array_sort(sorted, compare_exe_path);
	for (int used = 0; used <= 1; used++) {
		for (guint i = 0; i < sorted->len; i++)
			fill_with_exe(chosen, g_ptr_array_index(sorted, i), in_use, used, &left);
	}
	*used_kb = r->prev_budget - left;
	return chosen;
}

/* Maps used by exes running at k-1: resident whatever was predicted. */
static GHashTable *
in_use_at_prev(Replay *r)
{
	GHashTable *in_use = g_hash_table_new(NULL, NULL);
	GHashTableIter iter;
	gpointer key;

	g_hash_table_iter_init(&iter, r->prev_running);
	while (g_hash_table_iter_next(&iter, &key, NULL)) {
		const Exe *exe = model_lookup_exe(r->model, key);

		for (guint i = 0; exe && i < exe->exemaps->len; i++)
			g_hash_table_add(in_use, g_array_index(exe->exemaps, ExeMap, i).map);
	}
	return in_use;
}

/* ---- the bound ---- */

G_DEFINE_QUARK(replay-error-quark, replay_error)

/* One program's chance to start at the next cycle, under the true model. */
typedef struct BoundEntry {
	const char *path;     /* in Replay.bound_paths */
	double p;
} BoundEntry;

static gboolean
bound_number(const char *text, gint64 *value)
{
	char *end;

	if (!g_ascii_isdigit(text[0]))
		return FALSE;
	*value = g_ascii_strtoll(text, &end, 10);
	return *end == '\0';
}

/*
 * Reads preload-tracegen --bound's file: "PRELOAD-BOUND 1 CYCLE", then
 * "P id uri" declaring a program, "B time n (id p) x n" per cycle and
 * "END lines", tab-separated. Its cycle must be the trace's.
 */
static gboolean
bound_load(Replay *r, const char *path, gint64 cycle, GError **error)
{
	g_autofree char *text = NULL;
	g_autoptr(GPtrArray) ids = g_ptr_array_new();
	g_auto(GStrv) lines = NULL;
	gboolean ended = FALSE;

	if (!g_file_get_contents(path, &text, NULL, error))
		return FALSE;
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i]; i++) {
		g_auto(GStrv) f = g_strsplit(lines[i], "\t", -1);
		guint nf = g_strv_length(f);
		gint64 a = 0, b = 0;

		if (nf == 0 || !*lines[i])
			continue;
		if (i == 0) {
			if (nf != 3 || strcmp(f[0], "PRELOAD-BOUND") != 0 || strcmp(f[1], "1") != 0 ||
			    !bound_number(f[2], &a) || a != cycle)
				goto bad;
		} else if (ended) {
			goto bad;
		} else if (strcmp(f[0], "P") == 0) {
			g_autofree char *file = NULL;

			if (nf != 3 || !bound_number(f[1], &a) || a != ids->len)
				goto bad;
			file = g_filename_from_uri(f[2], NULL, NULL);
			if (!file)
				goto bad;
			g_ptr_array_add(ids, g_string_chunk_insert_const(r->bound_paths, file));
		} else if (strcmp(f[0], "B") == 0) {
			GArray *entries;
			gint64 *key;

			if (nf < 3 || !bound_number(f[1], &a) || !bound_number(f[2], &b) ||
			    (guint64)nf != 3 + 2 * (guint64)b)
				goto bad;
			entries = g_array_sized_new(FALSE, FALSE, sizeof(BoundEntry), (guint)b);
			key = g_new(gint64, 1);
			*key = a;
			g_hash_table_replace(r->bound, key, entries);
			for (gint64 k = 0; k < b; k++) {
				BoundEntry e;
				gint64 id;
				char *end;

				if (!bound_number(f[3 + 2 * k], &id) || id >= ids->len)
					goto bad;
				e.path = g_ptr_array_index(ids, id);
				e.p = g_ascii_strtod(f[4 + 2 * k], &end);
				if (*end || !(e.p >= 0 && e.p <= 1))
					goto bad;
				g_array_append_val(entries, e);
			}
		} else if (strcmp(f[0], "END") == 0 && nf == 2) {
			ended = TRUE;
		} else {
			goto bad;
		}
		continue;
bad:
		g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_BOUND, "%s: line %u: not a bound of this trace",
			    path, i + 1);
		return FALSE;
	}
	if (!ended) {
		g_set_error(error, REPLAY_ERROR, REPLAY_ERROR_BOUND, "%s: no END line", path);
		return FALSE;
	}
	return TRUE;
}

/*
 * The true model's forecast at cycle k-1, scored like naive: +1 per
 * running exe on its maps, ln(1 - p) per other exe, then
 * prophet_select()'s order. Only the exe probabilities differ.
 */
static GHashTable *
bound_select(Replay *r, guint64 *used_kb)
{
	GArray *entries = g_hash_table_lookup(r->bound, &r->prev_time);
	GHashTableIter iter;
	gpointer value;

	if (!entries) {
		r->bound_missing++;
		*used_kb = 0;
		return g_hash_table_new(NULL, NULL);
	}
	for (guint i = 0; i < r->model->candidates->len; i++)
		((Map *)g_ptr_array_index(r->model->candidates, i))->prophet.lnprob = 0;
	g_hash_table_iter_init(&iter, r->model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		const Exe *exe = value;

		if (!g_hash_table_contains(r->prev_running, exe->path))
			continue;
		for (guint i = 0; i < exe->exemaps->len; i++)
			g_array_index(exe->exemaps, ExeMap, i).map->prophet.lnprob += 1;
	}
	for (guint k = 0; k < entries->len; k++) {
		const BoundEntry *e = &g_array_index(entries, BoundEntry, k);
		const Exe *exe = model_lookup_exe(r->model, e->path);
		double p = MIN(e->p, NAIVE_MAX_P);

		if (!exe || g_hash_table_contains(r->prev_running, exe->path) || !(p > 0))
			continue;
		for (guint i = 0; i < exe->exemaps->len; i++) {
			const ExeMap *em = &g_array_index(exe->exemaps, ExeMap, i);

			if (em->prob > 0)
				em->map->prophet.lnprob += log1p(-MIN(em->prob, 1.0) * p);
		}
	}
	return select_like_prophet(r, r->prev_budget, used_kb);
}

/* ---- scoring ---- */

/* How many of the stopped programs preload gave a higher probability than exe. */
static guint
preload_rank(Replay *r, const Exe *exe)
{
	double p = prophet_exe_probability(exe);
	GHashTableIter iter;
	gpointer value;
	guint rank = 0;

	g_hash_table_iter_init(&iter, r->model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		const Exe *other = value;

		if (!g_hash_table_contains(r->prev_running, other->path) &&
		    prophet_exe_probability(other) > p)
			rank++;
	}
	return rank;
}

/* One line of ReplayOptions.starts for a scored start. */
static void
write_start(Replay *r, const Exe *exe, guint64 cold, guint64 preload_hit, guint64 bound_hit)
{
	GArray *entries = r->bound ? g_hash_table_lookup(r->bound, &r->prev_time) : NULL;
	const Model *model = r->model;
	double p = 0;
	guint rank = 0;

	fprintf(r->options->starts, "%" G_GUINT64_FORMAT "\t%s\t%.6f\t%u\t", r->result->scans,
		exe->path, prophet_exe_probability(exe) + 0.0 /* not -0 */, preload_rank(r, exe));
	if (entries) {
		for (guint k = 0; k < entries->len; k++) {
			const BoundEntry *e = &g_array_index(entries, BoundEntry, k);

			if (strcmp(e->path, exe->path) == 0)
				p = e->p;
		}
		for (guint k = 0; k < entries->len; k++) {
			const BoundEntry *e = &g_array_index(entries, BoundEntry, k);

			if (e->p > p && !g_hash_table_contains(r->prev_running, e->path))
				rank++;
		}
		fprintf(r->options->starts, "%.6f\t%u\t", p, rank);
	} else {
		fprintf(r->options->starts, "-\t-\t");
	}
	fprintf(r->options->starts, "%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT "\t", cold,
		preload_hit);
	if (entries)
		fprintf(r->options->starts, "%" G_GUINT64_FORMAT "\t", bound_hit);
	else
		fprintf(r->options->starts, "-\t");
	if (model->last_start)
		fprintf(r->options->starts, "%s\t%" G_GINT64_FORMAT "\n", model->last_start->path,
			model->time - model->last_start_time);
	else
		fprintf(r->options->starts, "-\t-\n");
}

static void
score_starts(Replay *r, GPtrArray *starting)
{
	g_autoptr(GHashTable) naive = NULL;
	g_autoptr(GHashTable) oracle = NULL;
	g_autoptr(GHashTable) in_use = NULL;
	g_autoptr(GHashTable) bound = NULL;
	GHashTable *chosen[REPLAY_N_PREDICTORS];
	guint64 used[REPLAY_N_PREDICTORS];
	ReplayResult *res = r->result;

	if (res->scans < r->options->from_cycle)
		return;
	in_use = in_use_at_prev(r);
	naive = naive_select(r, &used[REPLAY_NAIVE]);
	oracle = oracle_select(r, starting, in_use, &used[REPLAY_ORACLE]);
	if (r->bound) {
		bound = bound_select(r, &used[REPLAY_BOUND]);
	} else {
		bound = g_hash_table_new(NULL, NULL);
		used[REPLAY_BOUND] = 0;
	}
	chosen[REPLAY_BOUND] = bound;
	chosen[REPLAY_PRELOAD] = r->prev_selection;
	used[REPLAY_PRELOAD] = r->prev_selected_kb;
	chosen[REPLAY_NAIVE] = naive;
	chosen[REPLAY_ORACLE] = oracle;

	res->scored_cycles++;
	for (int p = 0; p < REPLAY_N_PREDICTORS; p++)
		res->score[p].selected_kb_sum += used[p];

	for (guint i = 0; i < starting->len; i++) {
		const Exe *exe = g_ptr_array_index(starting, i);
		guint64 maps = 0, bytes = 0;
		guint64 hit_maps[REPLAY_N_PREDICTORS] = { 0 }, hit_bytes[REPLAY_N_PREDICTORS] = { 0 };
		guint64 cold = 0, cold_hit[REPLAY_N_PREDICTORS] = { 0 };

		for (guint k = 0; k < exe->exemaps->len; k++) {
			Map *map = g_array_index(exe->exemaps, ExeMap, k).map;
			gboolean resident = g_hash_table_contains(in_use, map);

			maps++;
			bytes += map->length;
			if (!resident) {
				res->maps_cold++;
				res->bytes_cold += map->length;
				cold += map->length;
			}
			for (int p = 0; p < REPLAY_N_PREDICTORS; p++) {
				gboolean hit = g_hash_table_contains(chosen[p], map);

				if (hit) {
					hit_maps[p]++;
					hit_bytes[p] += map->length;
				}
				if (hit && !resident) {
					res->score[p].maps_cold_hit++;
					res->score[p].bytes_cold_hit += map->length;
					cold_hit[p] += map->length;
				}
				if (hit || resident) {
					res->score[p].maps_ready++;
					res->score[p].bytes_ready += map->length;
				}
			}
		}
		if (r->options->starts)
			write_start(r, exe, cold, cold_hit[REPLAY_PRELOAD], cold_hit[REPLAY_BOUND]);
		res->starts++;
		res->maps_total += maps;
		res->bytes_total += bytes;
		for (int p = 0; p < REPLAY_N_PREDICTORS; p++) {
			ReplayScore *s = &res->score[p];

			s->maps_hit += hit_maps[p];
			s->bytes_hit += hit_bytes[p];
			s->ratio_maps_sum += replay_ratio(hit_maps[p], maps);
			s->ratio_bytes_sum += replay_ratio(hit_bytes[p], bytes);
		}
	}
}

/* Starts at this cycle: scored if the model knew the exe at k-1. */
static void
find_starts(Replay *r, const TraceCycle *c, GPtrArray *starts, GPtrArray *scored)
{
	for (guint i = 0; i < c->running->len; i++) {
		const char *path = g_ptr_array_index(c->running, i);
		const Exe *exe;

		if (g_hash_table_contains(r->prev_running, path))
			continue;
		g_ptr_array_add(starts, (gpointer)path);
		exe = model_lookup_exe(r->model, path);
		if (exe && exe->exemaps->len > 0)
			g_ptr_array_add(scored, (gpointer)exe);
		else
			r->result->unscored_starts++;
	}
}

/* Whether the next cycle has a start to score against this cycle's prediction. */
static gboolean
next_has_scored_start(Replay *r, const TraceCycle *cur, const TraceCycle *next)
{
	if (!next || !next->valid)
		return FALSE;
	for (guint i = 0; i < next->running->len; i++) {
		const char *path = g_ptr_array_index(next->running, i);
		const Exe *exe;

		if (g_hash_table_contains(cur->running_set, path))
			continue;
		exe = model_lookup_exe(r->model, path);
		if (exe && exe->exemaps->len > 0)
			return TRUE;
	}
	return FALSE;
}

/* ---- the sources of the daemon's cycle ---- */

/* The scan: the executables of the trace's cycle, each as one process. */
static gboolean
replay_scan(gpointer data, Scan *scan, Model *model, const Conf *conf, gint64 now,
	    GError **error)
{
	Replay *r = data;

	(void)error;
	scan_begin(scan, model, now);
	for (guint i = 0; i < r->cur->running->len; i++) {
		const char *path = g_ptr_array_index(r->cur->running, i);

		scan_saw_process(scan, model, conf, pid_of(r, path), path);
	}
	scan_end(scan, model, now);
	return TRUE;
}

/*
 * The budget: fixed, or from the trace's latest memory figures. Predicts
 * every cycle if asked, else only before a cycle with a start to score.
 */
static void
replay_plan(gpointer data, const Conf *conf, CyclePlan *plan)
{
	Replay *r = data;
	guint64 budget;

	if (r->options->budget_kb >= 0)
		budget = (guint64)r->options->budget_kb;
	else
		budget = r->have_mem ? prophet_budget_kb(conf, &r->mem) : 0;
	r->result->budget_kb_sum += budget;
	r->result->budget_kb_min = r->result->scans == 0 ? budget
				   : MIN(r->result->budget_kb_min, budget);
	r->result->budget_kb_max = MAX(r->result->budget_kb_max, budget);
	r->prev_budget = budget;

	g_hash_table_remove_all(r->prev_selection);
	r->prev_predicted = r->options->every_cycle || next_has_scored_start(r, r->cur, r->next);
	if (r->prev_predicted)
		r->result->predictions++;
	plan->predict = r->prev_predicted;
	plan->read = TRUE;
	plan->budget_kb = budget;
}

/* The recorder in place of the readahead: the selection, for scoring at k+1. */
static CycleRead
replay_record(gpointer data, GPtrArray *maps, const Conf *conf)
{
	Replay *r = data;

	(void)conf;
	for (guint i = 0; i < maps->len; i++)
		g_hash_table_add(r->prev_selection, g_ptr_array_index(maps, i));
	return CYCLE_READ_RECORDED;
}

static const CycleReader replay_recorder = { replay_record };

/* ---- the cycle ---- */

/* The daemon's cycle on the model, with the trace as the maps source. */
static void
replay_cycle_new(Replay *r)
{
	Learn *learn;

	r->cycle = cycle_new(r->model, r->conf, r->sources);
	learn = cycle_get_learn(r->cycle);
	learn_set_maps_source(learn, replay_maps_source, r);
	learn_set_file_check(learn, accept_any_file, NULL);
}

static void
replay_cycle_free(Replay *r)
{
	if (!r->cycle)
		return;
	/* The cycle must not call back into r once r is gone. */
	learn_set_maps_source(cycle_get_learn(r->cycle), NULL, NULL);
	g_clear_pointer(&r->cycle, cycle_free);
}

/*
 * A daemon restart: the model saved to a state file, the daemon's cycle
 * and model freed, the model loaded from the file into a new cycle, as a
 * daemon stopped and started again (at boot) would.
 */
static gboolean
restart(Replay *r, GError **error)
{
	g_autofree char *dir = g_dir_make_tmp("preload-replay-XXXXXX", error);
	g_autofree char *path = NULL;
	Model *model;
	gboolean ok;

	if (!dir)
		return FALSE;
	path = g_build_filename(dir, "preload.state", NULL);
	ok = state_save(r->model, path, error);
	model = ok ? state_load(path, error) : NULL;
	g_unlink(path);
	g_rmdir(dir);
	if (!model)
		return FALSE;
	replay_cycle_free(r);
	model_free(r->model);
	r->model = model;
	replay_cycle_new(r);
	return TRUE;
}

static void
run_cycle(Replay *r, TraceCycle *c, const TraceCycle *next)
{
	g_autoptr(GPtrArray) starts = g_ptr_array_new();
	g_autoptr(GPtrArray) scored = g_ptr_array_new();
	gint64 t;

	if (r->result->scans == 0)
		r->t0 = c->time;
	t = c->time - r->t0;

	/* 1. Score the starts against what cycle k-1 predicted. */
	if (r->have_prev) {
		find_starts(r, c, starts, scored);
		if (scored->len > 0) {
			/* next_has_scored_start() saw these coming. */
			g_warn_if_fail(r->prev_predicted);
			if (r->prev_predicted)
				score_starts(r, scored);
		}
		for (guint i = 0; i < starts->len; i++) {
			gpointer path = g_ptr_array_index(starts, i);
			guint n = GPOINTER_TO_UINT(g_hash_table_lookup(r->start_counts, path));

			g_hash_table_insert(r->start_counts, path, GUINT_TO_POINTER(n + 1));
		}
	}

	/* 2. The maps the daemon read during this cycle's update. */
	for (guint i = 0; i < c->maps->len; i++) {
		g_hash_table_replace(r->maps_table, g_ptr_array_index(c->maps_exes, i),
				     g_ptr_array_index(c->maps, i));
		c->maps->pdata[i] = NULL;   /* now owned by the table */
	}

	/* 2b. A daemon restart before this cycle's scan, if asked. */
	if (r->options->restart_at > 0 && r->result->scans == r->options->restart_at &&
	    !restart(r, &r->restart_error))
		return;

	/* 3. The scan at T, 4. learn and the prediction at T + cycle/2:
	 *    the daemon's cycle, on the sources of the trace. */
	if (c->mem_known) {
		r->mem = c->mem;
		r->have_mem = TRUE;
	}
	r->cur = c;
	r->next = next;
	r->prev_selected_kb = 0;
	r->model->time = t;
	cycle_run(r->cycle);
	if (r->prev_predicted)
		r->prev_selected_kb = cycle_get_prediction(r->cycle)->selected_kb;

	/* 6. What cycle k+1 is scored against. */
	g_hash_table_remove_all(r->prev_running);
	for (guint i = 0; i < c->running->len; i++)
		g_hash_table_add(r->prev_running, g_ptr_array_index(c->running, i));
	r->prev_time = c->time;
	r->have_prev = TRUE;
	r->result->scans++;
}

gboolean
replay_run(TraceReader *tr, const ReplayOptions *options, ReplayResult *result, GError **error)
{
	g_autoptr(GError) local = NULL;
	g_autoptr(Conf) conf = NULL;
	Replay r = { 0 };
	const CycleSources sources = {
		.scan = replay_scan,
		.plan = replay_plan,
		.reader = &replay_recorder,
		.data = &r,
	};
	TraceCycle cur, next;
	gboolean ok = TRUE;

	g_return_val_if_fail(tr != NULL, FALSE);
	g_return_val_if_fail(options != NULL && options->conf != NULL, FALSE);
	g_return_val_if_fail(result != NULL, FALSE);

	memset(result, 0, sizeof(*result));
	conf = conf_copy(options->conf);
	/* The trace's cycle is the one its times follow. */
	conf->cycle = trace_reader_get_cycle(tr);
	/* A replay watches and predicts whatever the configuration says. */
	conf->doscan = TRUE;
	conf->dopredict = TRUE;
	r.options = options;
	r.tr = tr;
	r.conf = conf;
	r.model = model_new();
	r.sources = &sources;
	r.result = result;
	r.maps_table = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, maps_entry_free);
	r.pids = g_hash_table_new(g_str_hash, g_str_equal);
	r.start_counts = g_hash_table_new(g_str_hash, g_str_equal);
	r.prev_running = g_hash_table_new(g_str_hash, g_str_equal);
	r.prev_selection = g_hash_table_new(NULL, NULL);
	trace_cycle_init(&r.scan);
	trace_cycle_init(&cur);
	trace_cycle_init(&next);

	if (options->bound) {
		r.bound = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
						(GDestroyNotify)g_array_unref);
		r.bound_paths = g_string_chunk_new(4096);
		ok = bound_load(&r, options->bound, conf->cycle, &local);
		result->have_bound = TRUE;
	}
	replay_cycle_new(&r);
	result->cycle = conf->cycle;

	/* Two cycles in hand: the one to run and the one that scores it. */
	if (ok && !read_cycle(&r, &cur, &local))
		ok = FALSE;
	while (ok && cur.valid) {
		if (!read_cycle(&r, &next, &local)) {
			ok = FALSE;
			next.valid = FALSE;
		}
		run_cycle(&r, &cur, &next);
		if (r.restart_error) {
			g_propagate_error(&local, g_steal_pointer(&r.restart_error));
			ok = FALSE;
		}
		trace_cycle_swap(&cur, &next);
	}

	if (ok && r.bound_missing > 0) {
		g_set_error(&local, REPLAY_ERROR, REPLAY_ERROR_BOUND,
			    "%s: no forecast for %" G_GUINT64_FORMAT " scored cycles: not this trace's bound",
			    options->bound, r.bound_missing);
		ok = FALSE;
	}
	result->complete = ok && trace_reader_is_complete(tr);
	if (options->save_state && ok)
		ok = state_save(r.model, options->save_state, &local);
	result->exes = g_hash_table_size(r.model->exes);
	result->bad_exes = g_hash_table_size(r.model->bad_exes);
	result->maps = g_hash_table_size(r.model->maps);
	result->chains = r.model->n_chains;

	replay_cycle_free(&r);
	g_clear_pointer(&r.model, model_free);
	trace_cycle_clear(&cur);
	trace_cycle_clear(&next);
	trace_cycle_clear(&r.scan);
	g_hash_table_unref(r.maps_table);
	g_hash_table_unref(r.pids);
	g_hash_table_unref(r.start_counts);
	g_hash_table_unref(r.prev_running);
	g_hash_table_unref(r.prev_selection);
	if (r.bound)
		g_hash_table_unref(r.bound);
	if (r.bound_paths)
		g_string_chunk_free(r.bound_paths);

	if (!ok) {
		g_propagate_error(error, g_steal_pointer(&local));
		return FALSE;
	}
	return TRUE;
}

double
replay_ratio(guint64 part, guint64 whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

const char *
replay_predictor_name(ReplayPredictor predictor)
{
	static const char *const names[] = { "preload", "naive", "oracle", "bound" };

	g_return_val_if_fail(predictor < REPLAY_N_PREDICTORS, "?");
	return names[predictor];
}
