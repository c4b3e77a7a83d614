/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Spy: turns what runs into model changes.
 *
 * The scan only observes: it marks the known executables it sees as
 * running (at the scan time), lists those whose running state flipped,
 * and remembers one pid for each executable it has never seen. Nothing
 * is read from the maps yet, because a process that just started has not
 * mapped its libraries. The update, half a cycle later, applies the
 * flips to the chains, reads the maps of the new executables and admits
 * those big enough, and accounts running time, in that order: changed
 * exes first so that the chains of new exes start from current change
 * times (0.6.4 did it the other way round and recorded stale
 * transitions).
 *
 * The Spy object only holds what the scan found until the update
 * consumes it; the model stays the one source of truth. Scan times are
 * expected to increase: "running" means "seen by the scan at
 * model->last_running_timestamp".
 *
 * Starts seen as they happen (exec events from the watcher) join the next
 * scan as if the scan had seen those programs running: "running at a
 * scan" then means "alive at the scan, or started since the previous
 * one". That is the decision that puts short-lived programs into the
 * chains: a compiler that a build runs a hundred times a cycle runs, for
 * the model, during every cycle the build runs, and is predicted with it.
 * Its running time is over-counted (a cycle per cycle in which it ran),
 * which is the quantum the model counts every program in anyway.
 *
 * Learning does not stop at admission (0.6.4 froze an exe's maps at first
 * sight): a known exe that starts again has its maps read once more, new
 * libraries are added and ranges it stopped mapping are dropped after a
 * few runs. Each map remembers its file's identity (device, inode, size,
 * mtime); a few maps are checked every cycle, and a map whose file is gone
 * or was replaced is never read ahead again and is removed at the next
 * maintenance (unless a run of its exe finds it again). The maintenance,
 * once an hour of model time, ages the model and forgets exes not seen for
 * maxage days or whose file is gone. Every per-cycle step visits what
 * changed, the running exes, or a bounded number of maps, never the whole
 * model.
 */
#include "config.h"

#include "spy.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

#include "proc.h"
#include "watch.h"

#define MEMFD_PREFIX "/memfd:"

/* An executable seen for the first time, and the process to read it from. */
typedef struct NewExe {
	char *path;           /* sanitized exe path, owned */
	pid_t pid;            /* the first process seen running it */
} NewExe;

struct Spy {
	SpyMapsFunc maps_func;    /* where maps of new exes come from */
	gpointer maps_data;
	guint64 touched_min;      /* usedmapkb in bytes: larger maps are cut to their touched parts */
	SpyFileCheckFunc file_check; /* whether a mapped file may be learned */
	gpointer file_check_data;

	/* pending between the scan and the update */
	gint64 scan_time;         /* model time of the last scan, -1 none */
	GHashTable *seen;         /* Exe * seen by the scan in progress */
	GPtrArray *seen_order;    /* the same, in the order seen */
	GPtrArray *changed;       /* char * paths of exes that started or stopped */
	GHashTable *new_paths;    /* path -> NewExe * (in new_exes), for dedup */
	GPtrArray *new_exes;      /* NewExe *, in the order first seen, owned */
	GPtrArray *restarted;     /* NewExe *: known exes that started, to re-read */

	guint sweep;              /* next index of model->map_list to check */
	gint64 maintained;        /* model time of the last maintenance, -1 none */

	/* filled between scans by exec events, consumed by the next scan */
	GHashTable *execs;        /* path (owned) -> scans left to wait for admission */
	gboolean count_starts;    /* the update counts starts in the hit figures */
	SpyStats stats;
};

/* The file check's answer for one path, cached for one update. */
typedef struct FileState {
	gboolean usable;
	MapFileId id;
} FileState;

static void
new_exe_free(gpointer data)
{
	NewExe *ne = data;

	g_free(ne->path);
	g_free(ne);
}

/*
 * Replaces each map of maps[first ..] longer than min bytes by the parts
 * of it the process has touched, in SPY_TOUCHED_WINDOW windows; a map
 * whose pages cannot be asked for (pagemap refused, the process gone)
 * stays whole. A large mapping is mostly never touched: java maps its
 * 123 MiB class library and touches under 1 MiB of it while starting,
 * node a third of the 84 MiB it maps of its binary. Reading only what is
 * used keeps a prefetch short enough to end before the program starts on
 * a slow disk.
 */
static void
cut_to_touched(pid_t pid, GArray *maps, guint first, guint64 min)
{
	g_autoptr(GArray) ranges = g_array_new(FALSE, FALSE, sizeof(ProcRange));
	g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(ProcMap));
	gboolean cut = FALSE;

	g_array_set_clear_func(out, proc_map_clear);
	for (guint i = first; i < maps->len; i++) {
		const ProcMap *m = &g_array_index(maps, ProcMap, i);
		g_autoptr(GError) error = NULL;
		ProcMap probe = *m;

		/* pagemap has 8 bytes per page, mapped or not: bound the read. */
		if (probe.end - probe.start > SPY_TOUCHED_MAX)
			probe.end = probe.start + SPY_TOUCHED_MAX;
		g_array_set_size(ranges, 0);
		if (m->end - m->start <= min ||
		    !proc_read_touched(pid, &probe, SPY_TOUCHED_WINDOW, ranges, &error)) {
			ProcMap whole = *m;

			if (error)
				g_debug("pid %d: %s; %s learned whole", (int)pid, error->message, m->path);
			whole.path = g_strdup(m->path);
			g_array_append_val(out, whole);
			continue;
		}
		cut = TRUE;
		for (guint r = 0; r < ranges->len; r++) {
			const ProcRange *range = &g_array_index(ranges, ProcRange, r);
			ProcMap part = *m;

			part.start = m->start + (range->offset - m->offset);
			part.end = part.start + range->length;
			part.offset = range->offset;
			part.path = g_strdup(m->path);
			g_array_append_val(out, part);
		}
	}
	if (!cut)
		return;
	g_array_set_size(maps, first);
	g_array_append_vals(maps, out->data, out->len);
	g_array_set_clear_func(out, NULL);  /* the paths moved to maps */
}

/*
 * Half a cycle passes between seeing a pid and reading its maps. In that
 * time the process may have exited (a zombie's maps are empty) or its pid
 * may have been reused by another program; either way the maps would not
 * be the exe's. Every process maps its own executable, so maps without it
 * count as "gone" and the exe is tried again when next seen.
 */
gboolean
spy_proc_maps(pid_t pid, const char *exe_path, GArray *maps,
	      gpointer user_data, GError **error)
{
	guint first = maps->len;

	(void)user_data;
	if (!proc_read_maps(pid, maps, error))
		return FALSE;
	for (guint i = first; i < maps->len; i++) {
		const ProcMap *m = &g_array_index(maps, ProcMap, i);

		if (m->path && strcmp(m->path, exe_path) == 0) {
			const Spy *spy = user_data;

			if (spy && spy->touched_min > 0)
				cut_to_touched(pid, maps, first, spy->touched_min);
			return TRUE;
		}
	}
	g_array_set_size(maps, first);
	g_set_error(error, PROC_ERROR, PROC_ERROR_GONE,
		    "pid %d no longer runs %s", (int)pid, exe_path);
	return FALSE;
}

/*
 * The default file check: whether path is a regular file now. lstat()
 * because the kernel reports maps by their resolved path: a symlink there
 * now means the file was replaced since, and following it could read
 * something else entirely. Devices, FIFOs and sockets can block or have
 * side effects when read.
 */
static gboolean
lstat_is_regular(const char *path, MapFileId *id, gpointer user_data)
{
	struct stat st;

	(void)user_data;
	memset(id, 0, sizeof(*id));
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return FALSE;
	id->dev = (guint64)st.st_dev;
	id->ino = (guint64)st.st_ino;
	id->size = (guint64)MAX(st.st_size, 0);
	id->mtime = (gint64)st.st_mtim.tv_sec * G_GINT64_CONSTANT(1000000000) +
		    st.st_mtim.tv_nsec;
	return TRUE;
}

Spy *
spy_new(void)
{
	Spy *spy = g_new0(Spy, 1);

	spy->maps_func = spy_proc_maps;
	spy->maps_data = spy;
	spy->file_check = lstat_is_regular;
	spy->scan_time = -1;
	spy->seen = g_hash_table_new(NULL, NULL);
	spy->seen_order = g_ptr_array_new();
	spy->changed = g_ptr_array_new_with_free_func(g_free);
	spy->new_paths = g_hash_table_new(g_str_hash, g_str_equal);
	spy->new_exes = g_ptr_array_new_with_free_func(new_exe_free);
	spy->restarted = g_ptr_array_new_with_free_func(new_exe_free);
	spy->maintained = -1;
	spy->stats.maintained_at = -1;
	spy->execs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	spy->count_starts = TRUE;
	return spy;
}

void
spy_free(Spy *spy)
{
	if (!spy)
		return;
	g_hash_table_unref(spy->seen);
	g_ptr_array_unref(spy->seen_order);
	g_ptr_array_unref(spy->changed);
	g_hash_table_unref(spy->new_paths);
	g_ptr_array_unref(spy->new_exes);
	g_ptr_array_unref(spy->restarted);
	g_hash_table_unref(spy->execs);
	g_free(spy);
}

void
spy_set_count_starts(Spy *spy, gboolean count)
{
	g_return_if_fail(spy != NULL);

	spy->count_starts = count;
}

void
spy_set_maps_source(Spy *spy, SpyMapsFunc func, gpointer user_data)
{
	g_return_if_fail(spy != NULL);

	spy->maps_func = func ? func : spy_proc_maps;
	spy->maps_data = func ? user_data : spy;
}

void
spy_set_file_check(Spy *spy, SpyFileCheckFunc func, gpointer user_data)
{
	g_return_if_fail(spy != NULL);
	spy->file_check = func ? func : lstat_is_regular;
	spy->file_check_data = func ? user_data : NULL;
}

const SpyStats *
spy_get_stats(const Spy *spy)
{
	g_return_val_if_fail(spy != NULL, NULL);

	return &spy->stats;
}

static void
clear_pending(Spy *spy)
{
	g_hash_table_remove_all(spy->seen);
	g_ptr_array_set_size(spy->seen_order, 0);
	g_ptr_array_set_size(spy->changed, 0);
	g_hash_table_remove_all(spy->new_paths);
	g_ptr_array_set_size(spy->new_exes, 0);
	g_ptr_array_set_size(spy->restarted, 0);
}

/* ---- the scan ----------------------------------------------------------- */

void
spy_begin_scan(Spy *spy, Model *model, gint64 now)
{
	g_return_if_fail(spy != NULL);
	g_return_if_fail(model != NULL);

	/* A scan not followed by an update is superseded, not merged: the
	 * chains learn from the current state at the next update anyway. */
	clear_pending(spy);
	spy->scan_time = now;
	spy->stats.processes = 0;
}

/* A known exe runs at this scan. */
/* Marks a known exe as seen by this scan; TRUE if that is a start. */
static gboolean
mark_seen(Spy *spy, Model *model, Exe *exe)
{
	gboolean started;

	/* Many processes may run one exe; the first one decides. */
	if (!g_hash_table_add(spy->seen, exe))
		return FALSE;
	g_ptr_array_add(spy->seen_order, exe);
	/* Decided before running_timestamp is moved to this scan. */
	started = !exe_is_running(model, exe);
	if (started)
		g_ptr_array_add(spy->changed, g_strdup(exe->path));
	exe->running_timestamp = spy->scan_time;
	exe->update_time = spy->scan_time;
	return started;
}

void
spy_saw_process(Spy *spy, Model *model, const Conf *conf, pid_t pid, const char *raw_exe)
{
	g_autofree char *path = NULL;
	Exe *exe;

	g_return_if_fail(spy != NULL);
	g_return_if_fail(model != NULL);
	g_return_if_fail(conf != NULL);

	spy->stats.processes++;

	path = proc_sanitize_exe(raw_exe);
	if (!path || !conf_prefix_accepts(conf->exeprefix, path))
		return;

	exe = model_lookup_exe(model, path);
	if (exe) {
		/* A start: its maps are read again, from this process. */
		if (mark_seen(spy, model, exe)) {
			NewExe *ne = g_new0(NewExe, 1);

			ne->path = g_strdup(exe->path);
			ne->pid = pid;
			g_ptr_array_add(spy->restarted, ne);
		}
		return;
	}

	if (g_hash_table_contains(model->bad_exes, path) ||
	    g_hash_table_contains(spy->new_paths, path))
		return;

	{
		NewExe *ne = g_new0(NewExe, 1);

		ne->path = g_steal_pointer(&path);
		ne->pid = pid;
		g_ptr_array_add(spy->new_exes, ne);
		g_hash_table_insert(spy->new_paths, ne->path, ne);
	}
}

void
spy_end_scan(Spy *spy, Model *model, gint64 now)
{
	g_return_if_fail(spy != NULL);
	g_return_if_fail(model != NULL);

	/* The scan time set by spy_begin_scan() is the one that counts; now
	 * is the same in the daemon and in a replay. */
	(void)now;

	/*
	 * Programs started since the last scan ran in this interval, alive
	 * or not. One not admitted yet waits for its read set a little.
	 */
	{
		GHashTableIter iter;
		gpointer key, value;

		g_hash_table_iter_init(&iter, spy->execs);
		while (g_hash_table_iter_next(&iter, &key, &value)) {
			Exe *exe = model_lookup_exe(model, key);
			int left = GPOINTER_TO_INT(value) - 1;

			/* A start seen only as an event: its process may be gone,
			 * so its maps are not read again (its reads are learned). */
			if (exe)
				(void)mark_seen(spy, model, exe);
			if (exe || left <= 0)
				g_hash_table_iter_remove(&iter);
			else
				g_hash_table_iter_replace(&iter, GINT_TO_POINTER(left));
		}
	}

	/* Running at the last scan and not seen by this one: stopped. */
	for (guint i = 0; i < model->running->len; i++) {
		Exe *exe = g_ptr_array_index(model->running, i);

		if (!g_hash_table_contains(spy->seen, exe))
			g_ptr_array_add(spy->changed, g_strdup(exe->path));
	}

	g_ptr_array_set_size(model->running, 0);
	for (guint i = 0; i < spy->seen_order->len; i++)
		g_ptr_array_add(model->running, g_ptr_array_index(spy->seen_order, i));
	model->last_running_timestamp = spy->scan_time;

	/* The exes may be freed before the next scan; keep no pointers. */
	g_hash_table_remove_all(spy->seen);
	g_ptr_array_set_size(spy->seen_order, 0);

	spy->stats.changed = spy->changed->len;
}

typedef struct {
	pid_t pid;
	char *exe;
} SeenProcess;

static void
seen_process_clear(gpointer data)
{
	g_free(((SeenProcess *)data)->exe);
}

static void
collect_process(pid_t pid, const char *exe, gpointer user_data)
{
	GArray *processes = user_data;
	SeenProcess p = { pid, g_strdup(exe) };

	g_array_append_val(processes, p);
}

gboolean
spy_scan(Spy *spy, Model *model, const Conf *conf, gint64 now, GError **error)
{
	g_autoptr(GArray) processes = NULL;

	g_return_val_if_fail(spy != NULL, FALSE);
	g_return_val_if_fail(model != NULL, FALSE);
	g_return_val_if_fail(conf != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	/*
	 * The list is read whole before the model is touched: a listing that
	 * fails half way must not make every exe it did not reach look
	 * stopped.
	 */
	processes = g_array_new(FALSE, FALSE, sizeof(SeenProcess));
	g_array_set_clear_func(processes, seen_process_clear);
	if (!proc_foreach_exe(collect_process, processes, error))
		return FALSE;

	spy_begin_scan(spy, model, now);
	for (guint i = 0; i < processes->len; i++) {
		SeenProcess *p = &g_array_index(processes, SeenProcess, i);

		spy_saw_process(spy, model, conf, p->pid, p->exe);
	}
	spy_end_scan(spy, model, now);
	return TRUE;
}

/* ---- the update --------------------------------------------------------- */

void
spy_model_params(const Conf *conf, ModelParams *params)
{
	g_return_if_fail(conf != NULL);
	g_return_if_fail(params != NULL);

	params->halflife = conf->halflife * 3600;
	params->follow = conf->follow;
	/*
	 * Without the correlation every co-occurring pair bids at full
	 * strength, so the pairs of a constant exe are kept then.
	 */
	params->skip_constant = conf->usecorrelation;
}

/* The file check, asked once per path and update. */
static const FileState *
file_state(Spy *spy, GHashTable *cache, const char *path)
{
	FileState *state = g_hash_table_lookup(cache, path);

	if (!state) {
		state = g_new0(FileState, 1);
		state->usable = spy->file_check(path, &state->id, spy->file_check_data);
		g_hash_table_insert(cache, g_strdup(path), state);
	}
	return state;
}

static gboolean
map_is_wanted(Spy *spy, const Conf *conf, GHashTable *stat_cache, const ProcMap *m)
{
	return m->path != NULL &&
	       !m->deleted &&
	       !g_str_has_prefix(m->path, MEMFD_PREFIX) &&
	       m->end > m->start &&
	       conf_prefix_accepts(conf->mapprefix, m->path) &&
	       file_state(spy, stat_cache, m->path)->usable;
}

/*
 * The registered map for a range seen in use now (a new one if there is
 * none), with the file's current identity: a stale map seen mapped again
 * is valid again, for the file that is there now.
 */
static Map *
learn_map(Model *model, GHashTable *stat_cache, Spy *spy, const ProcMap *m, gint64 now)
{
	const FileState *state = file_state(spy, stat_cache, m->path);
	guint64 length = m->end - m->start;
	Map *map = model_lookup_map(model, m->path, m->offset, length);

	if (!map) {
		map = map_new(m->path, m->offset, length, now);
	} else {
		map->update_time = MAX(map->update_time, now);
		/* Mapped now, so the range is valid for the file there now. */
		map->stale = FALSE;
	}
	if (map_file_id_is_known(&state->id))
		map->file = state->id;
	map->checked = now;
	return map;
}

/*
 * Reads the maps of a process; FALSE (and logs) if that failed, with
 * *gone set if the process had exited.
 */
static gboolean
read_maps(Spy *spy, const NewExe *ne, GArray *maps, gboolean *gone)
{
	g_autoptr(GError) error = NULL;

	*gone = FALSE;
	if (spy->maps_func(ne->pid, ne->path, maps, spy->maps_data, &error))
		return TRUE;
	if (g_error_matches(error, PROC_ERROR, PROC_ERROR_GONE)) {
		*gone = TRUE;
		g_debug("exe %s: pid %d exited before its maps were read",
			ne->path, (int)ne->pid);
	} else {
		g_debug("exe %s: cannot read the maps of pid %d: %s, ignoring",
			ne->path, (int)ne->pid, error ? error->message : "unknown error");
	}
	return FALSE;
}

static void
admit_new_exe(Spy *spy, Model *model, const Conf *conf, GHashTable *stat_cache,
	      const NewExe *ne, gint64 now)
{
	g_autoptr(GArray) maps = NULL;
	g_autoptr(GArray) kept = NULL;
	guint64 size = 0;
	gboolean gone;
	Exe *exe;

	maps = g_array_new(FALSE, FALSE, sizeof(ProcMap));
	g_array_set_clear_func(maps, proc_map_clear);
	if (!read_maps(spy, ne, maps, &gone)) {
		/* Retried when a process running it is seen again. */
		if (gone)
			spy->stats.gone++;
		return;
	}

	kept = g_array_new(FALSE, FALSE, sizeof(guint));
	for (guint i = 0; i < maps->len; i++) {
		const ProcMap *m = &g_array_index(maps, ProcMap, i);

		if (!map_is_wanted(spy, conf, stat_cache, m))
			continue;
		g_array_append_val(kept, i);
		size += m->end - m->start;
	}

	if (size < (guint64)MAX(conf->minsize, 0)) {
		model_add_bad_exe(model, ne->path, size, now);
		spy->stats.too_small++;
		g_debug("new exe %s: %" G_GUINT64_FORMAT " bytes in %u maps, below minsize, "
			"not modelled for now", ne->path, size, kept->len);
		return;
	}

	exe = exe_new(ne->path, TRUE, spy->scan_time);
	for (guint k = 0; k < kept->len; k++) {
		const ProcMap *m = &g_array_index(maps, ProcMap, g_array_index(kept, guint, k));

		exe_add_map(model, exe, learn_map(model, stat_cache, spy, m, now), 1.0);
	}
	g_debug("new exe %s: admitted with %u maps, %" G_GUINT64_FORMAT " bytes",
		ne->path, exe->exemaps->len, size);
	model_add_exe(model, exe, spy->scan_time, conf->allpairs);
	model_link_exe(model, exe, spy->scan_time);
	spy->stats.admitted++;
}

/*
 * A known exe started: what does it map now? Ranges new to it are added,
 * those it maps again are confirmed, and one it has not mapped for
 * SPY_MISSED_RUNS runs in a row is removed (an old library version, a
 * plugin no longer loaded). Once per start, not per cycle.
 */
static void
refresh_exe(Spy *spy, Model *model, const Conf *conf, GHashTable *stat_cache,
	    Exe *exe, const NewExe *ne, gint64 now)
{
	g_autoptr(GArray) maps = NULL;
	g_autoptr(GHashTable) seen = NULL;
	g_autoptr(GPtrArray) learned = NULL;
	gboolean gone;

	maps = g_array_new(FALSE, FALSE, sizeof(ProcMap));
	g_array_set_clear_func(maps, proc_map_clear);
	if (!read_maps(spy, ne, maps, &gone))
		return;  /* it keeps what it had; the next start tries again */

	/* In the order of the maps file, so that map ids do not depend on addresses. */
	learned = g_ptr_array_new();
	seen = g_hash_table_new(NULL, NULL);
	for (guint i = 0; i < maps->len; i++) {
		const ProcMap *m = &g_array_index(maps, ProcMap, i);
		Map *map;

		if (!map_is_wanted(spy, conf, stat_cache, m))
			continue;
		map = learn_map(model, stat_cache, spy, m, now);
		if (g_hash_table_add(seen, map))
			g_ptr_array_add(learned, map);
	}
	/*
	 * The ones it had: confirmed, or one more run without them. Ranges
	 * learned from start-up reads are not in the maps file: only the
	 * mapped ones can be missed.
	 */
	for (guint i = exe->exemaps->len; i-- > 0;) {
		ExeMap *em = &g_array_index(exe->exemaps, ExeMap, i);

		if (g_hash_table_remove(seen, em->map)) {
			em->missed = 0;
		} else if (em->origin == EXEMAP_MAPPED && ++em->missed >= SPY_MISSED_RUNS) {
			exe_remove_map(model, exe, i);
			spy->stats.maps_removed++;
		}
	}
	/* What is left in `seen` is new to it. */
	for (guint i = 0; i < learned->len; i++) {
		Map *map = g_ptr_array_index(learned, i);

		if (!g_hash_table_contains(seen, map))
			continue;
		/* exe_add_map() may free an unregistered duplicate: look no further. */
		g_hash_table_remove(seen, map);
		exe_add_map(model, exe, map, 1.0);
		spy->stats.maps_added++;
	}
	spy->stats.refreshed++;
}

/*
 * Whether map's file is still the one it was learned from: gone, or
 * another file (an upgrade replaced it), the map turns stale and TRUE is
 * returned. A map learned before identities were kept takes the file's.
 */
static gboolean
check_map_file(Spy *spy, GHashTable *stat_cache, Map *map, gint64 now)
{
	const FileState *state = file_state(spy, stat_cache, map->path);

	map->checked = now;
	if (!state->usable || !map_file_id_matches(&map->file, &state->id)) {
		map->stale = TRUE;
		return TRUE;
	}
	if (!map_file_id_is_known(&map->file))
		map->file = state->id;
	return FALSE;
}

/*
 * Checks the files of a few maps, continuing where the last update
 * stopped, so that every map is checked about once per
 * SPY_FILE_CHECK_PERIOD whatever the number of maps. A map whose file is
 * gone, or has another identity than when it was learned, turns stale: it
 * is never read ahead again.
 */
static void
check_map_files(Spy *spy, Model *model, const Conf *conf, GHashTable *stat_cache, gint64 now)
{
	GPtrArray *list = model->map_list;
	guint64 n;

	if (list->len == 0)
		return;
	n = ((guint64)list->len * (guint64)MAX(conf->cycle, 1) + SPY_FILE_CHECK_PERIOD - 1) /
	    SPY_FILE_CHECK_PERIOD;
	n = MIN(n, (guint64)list->len);
	for (guint64 i = 0; i < n; i++) {
		Map *map;

		if (spy->sweep >= list->len)
			spy->sweep = 0;
		map = g_ptr_array_index(list, spy->sweep++);
		if (!map->stale && check_map_file(spy, stat_cache, map, now))
			spy->stats.stale++;
	}
}

guint
spy_check_files(Spy *spy, GPtrArray *maps, gint64 now)
{
	g_autoptr(GHashTable) stat_cache = NULL;
	guint stale = 0;

	g_return_val_if_fail(spy != NULL, 0);
	g_return_val_if_fail(maps != NULL, 0);

	for (guint i = 0; i < maps->len; i++) {
		Map *map = g_ptr_array_index(maps, i);

		/* A clock that went back checks again. */
		if (map->stale || (map->checked >= 0 && map->checked <= now &&
				   now - map->checked < SPY_FILE_CHECK_PERIOD))
			continue;
		if (!stat_cache)
			stat_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
		if (check_map_file(spy, stat_cache, map, now))
			stale++;
	}
	return stale;
}

/* Whether the map of exe's own file (every process maps it) turned stale. */
static gboolean
own_file_stale(const Exe *exe)
{
	for (guint i = 0; i < exe->exemaps->len; i++) {
		const Map *map = g_array_index(exe->exemaps, ExeMap, i).map;

		if (map->stale && strcmp(map->path, exe->path) == 0)
			return TRUE;
	}
	return FALSE;
}

/*
 * Once an hour of model time: age the model, forget the exes not seen for
 * maxage days and those whose file is gone, and drop the uses of stale
 * maps. Costs a walk of the model (but no more file checks than the
 * sweep found stale), so it is rare.
 */
static void
maintain(Spy *spy, Model *model, const Conf *conf, gint64 now)
{
	g_autoptr(GPtrArray) gone = g_ptr_array_new();
	GHashTableIter iter;
	gpointer value;

	spy->maintained = now;
	spy->stats.maintained_at = now;
	spy->stats.chains_faded = model_age(model, now);
	spy->stats.exes_forgotten = conf->maxage > 0 ?
		model_forget_exes(model, now, conf->maxage * 86400) : 0;

	/*
	 * An exe maps its own file, so the sweep of map files finds it gone
	 * or replaced too; only those are asked again: replaced, the exe
	 * stays (its next run maps the new file), gone, it is forgotten. A
	 * running exe may run a deleted file; it is judged when it stops.
	 */
	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		Exe *exe = value;
		MapFileId id;

		if (exe_is_running(model, exe) || !own_file_stale(exe))
			continue;
		if (!spy->file_check(exe->path, &id, spy->file_check_data))
			g_ptr_array_add(gone, exe);
	}
	for (guint i = 0; i < gone->len; i++)
		model_remove_exe(model, g_ptr_array_index(gone, i));
	spy->stats.exes_gone = gone->len;
	spy->stats.maps_dropped = model_drop_stale_maps(model);
	if (spy->stats.chains_faded || spy->stats.exes_forgotten || spy->stats.exes_gone ||
	    spy->stats.maps_dropped)
		g_debug("maintenance at %" G_GINT64_FORMAT ": %u chains faded, %u exes unseen "
			"for %" G_GINT64_FORMAT " days, %u exes gone, %u stale map uses dropped",
			now, spy->stats.chains_faded, spy->stats.exes_forgotten, conf->maxage,
			spy->stats.exes_gone, spy->stats.maps_dropped);
}

/* Model seconds between maintenances: an hour, or halflife / 8 if shorter. */
static gint64
maintenance_period(const Conf *conf)
{
	gint64 period = SPY_MAINTENANCE_PERIOD;

	if (conf->halflife > 0)
		period = MIN(period, MAX(conf->halflife * 3600 / 8, conf->cycle));
	return period;
}

/*
 * A start found by the scan: only "was it in the last prefetch" can be
 * told now. That prefetch was chosen before the scan saw the start, which
 * is the one that counts.
 */
static void
count_start(Model *model, Exe *exe)
{
	guint64 bytes = 0, prefetched = 0;

	for (guint i = 0; i < exe->exemaps->len; i++) {
		const Map *map = g_array_index(exe->exemaps, ExeMap, i).map;

		bytes += map->length;
		if (model->prefetch_seq != 0 && map->prefetch_seq == model->prefetch_seq)
			prefetched += map->length;
	}
	exe->hits.starts++;
	exe_hits_add(&exe->hits, bytes, prefetched, 0, 0);
}

void
spy_update_model(Spy *spy, Model *model, const Conf *conf, gint64 now)
{
	g_autoptr(GHashTable) stat_cache = NULL;
	g_autoptr(GPtrArray) changed = NULL;
	ModelParams params;

	g_return_if_fail(spy != NULL);
	g_return_if_fail(model != NULL);
	g_return_if_fail(conf != NULL);

	spy->touched_min = (guint64)MAX(conf->usedmapkb, 0) * 1024;
	spy->stats.admitted = 0;
	spy->stats.too_small = 0;
	spy->stats.gone = 0;
	spy->stats.refreshed = 0;
	spy->stats.maps_added = 0;
	spy->stats.maps_removed = 0;
	spy->stats.stale = 0;

	/* The configuration may have been reloaded since the last update. */
	spy_model_params(conf, &params);
	model_set_params(model, &params);

	/*
	 * 0. The maintenance when it is due, also at the first update (so a
	 *    daemon whose sessions are shorter than the period still forgets
	 *    what is gone). First, so that what this update adds is not aged
	 *    at once.
	 */
	if (spy->maintained >= 0 && now < spy->maintained)
		spy->maintained = now;  /* a clock that went back */
	else if (spy->maintained < 0 || now - spy->maintained >= maintenance_period(conf))
		maintain(spy, model, conf, now);

	/* 1. Starts and stops, at the time they were observed, as one batch. */
	changed = g_ptr_array_new();
	for (guint i = 0; i < spy->changed->len; i++) {
		Exe *exe = model_lookup_exe(model, g_ptr_array_index(spy->changed, i));

		if (exe)
			g_ptr_array_add(changed, exe);
	}
	model_exes_changed(model, (Exe *const *)changed->pdata, changed->len, spy->scan_time);
	for (guint i = 0; spy->count_starts && i < changed->len; i++) {
		Exe *exe = g_ptr_array_index(changed, i);

		if (exe_is_running(model, exe))
			count_start(model, exe);
	}

	/* 2. New executables, in the order the scan met them, so that a
	 *    replay builds the same chains. */
	stat_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	for (guint i = 0; i < spy->new_exes->len; i++) {
		const NewExe *ne = g_ptr_array_index(spy->new_exes, i);

		/* Admitted or found too small since the scan (a replay may
		 * feed the same path twice). */
		if (model_lookup_exe(model, ne->path) ||
		    g_hash_table_contains(model->bad_exes, ne->path))
			continue;
		admit_new_exe(spy, model, conf, stat_cache, ne, now);
	}

	/* 3. What the exes that started again map now. */
	for (guint i = 0; i < spy->restarted->len; i++) {
		const NewExe *ne = g_ptr_array_index(spy->restarted, i);
		Exe *exe = model_lookup_exe(model, ne->path);

		if (exe && exe_is_running(model, exe))
			refresh_exe(spy, model, conf, stat_cache, exe, ne, now);
	}

	/* The scan is consumed: a second update must not apply it again. */
	clear_pending(spy);

	/* 4. A few maps' files, 5. running time, then forget old verdicts on
	 *    small exes. */
	check_map_files(spy, model, conf, stat_cache, now);
	model_account(model, now);
	model_expire_bad_exes(model, now, conf->autosave);
	model->dirty = TRUE;
}

/* ---- starts and read sets from the watcher ------------------------------------ */

void
spy_saw_exec(Spy *spy, Model *model, const Conf *conf, const char *exe_path)
{
	g_return_if_fail(spy != NULL);
	g_return_if_fail(model != NULL);
	g_return_if_fail(conf != NULL);
	g_return_if_fail(exe_path != NULL);

	if (!conf_prefix_accepts(conf->exeprefix, exe_path) ||
	    g_hash_table_contains(model->bad_exes, exe_path))
		return;
	/* Two scans: the next one, and one more if it is admitted in between. */
	g_hash_table_replace(spy->execs, g_strdup(exe_path), GINT_TO_POINTER(2));
}

/* A byte interval [start, end) of one file. */
typedef struct {
	guint64 start, end;
} Interval;

static gint
compare_intervals(gconstpointer a, gconstpointer b)
{
	const Interval *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void
free_intervals(gpointer data)
{
	g_array_unref(data);
}

/*
 * Appends to pieces the parts of [start, end) that no interval in `have`
 * (sorted by start) covers.
 */
static void
subtract_intervals(guint64 start, guint64 end, const GArray *have, GArray *pieces)
{
	guint64 cur = start;

	for (guint i = 0; have && i < have->len && cur < end; i++) {
		const Interval *iv = &g_array_index(have, Interval, i);

		if (iv->end <= cur)
			continue;
		if (iv->start >= end)
			break;
		if (iv->start > cur) {
			Interval piece = { cur, iv->start };

			g_array_append_val(pieces, piece);
		}
		cur = MAX(cur, iv->end);
	}
	if (cur < end) {
		Interval piece = { cur, end };

		g_array_append_val(pieces, piece);
	}
}

void
spy_learned_files(Spy *spy, Model *model, const Conf *conf, const char *exe_path,
		  const GArray *ranges, gint64 now)
{
	g_autoptr(GHashTable) have = NULL;        /* path -> GArray of Interval */
	g_autoptr(GHashTable) read_paths = NULL;  /* paths the exe learned from reads */
	g_autoptr(GHashTable) mapped_paths = NULL; /* paths the exe maps */
	g_autoptr(GHashTable) stat_cache = NULL;
	g_autoptr(GArray) add = NULL;             /* WatchRange to add, borrowed paths */
	guint64 max_bytes, read_bytes = 0, added = 0;
	guint max_files;
	Exe *exe;

	g_return_if_fail(spy != NULL);
	g_return_if_fail(model != NULL);
	g_return_if_fail(conf != NULL);
	g_return_if_fail(exe_path != NULL);
	g_return_if_fail(ranges != NULL);

	if (!conf_prefix_accepts(conf->exeprefix, exe_path))
		return;
	exe = model_lookup_exe(model, exe_path);
	if (!exe && (!conf->learnexec || g_hash_table_contains(model->bad_exes, exe_path)))
		return;

	max_files = (guint)CLAMP(conf->maxreadfiles, 0, G_MAXUINT);
	max_bytes = (guint64)MAX(conf->maxreadkb, 0) * 1024;
	have = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, free_intervals);
	read_paths = g_hash_table_new(g_str_hash, g_str_equal);
	mapped_paths = g_hash_table_new(g_str_hash, g_str_equal);
	stat_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	add = g_array_new(FALSE, FALSE, sizeof(WatchRange));

	/* What the exe has: every range (to add only what is new), and its read set's size. */
	for (guint i = 0; exe && i < exe->exemaps->len; i++) {
		const ExeMap *em = &g_array_index(exe->exemaps, ExeMap, i);
		GArray *list = g_hash_table_lookup(have, em->map->path);
		Interval iv = { em->map->offset, em->map->offset + em->map->length };

		if (!list) {
			list = g_array_new(FALSE, FALSE, sizeof(Interval));
			g_hash_table_insert(have, em->map->path, list);
		}
		g_array_append_val(list, iv);
		if (em->origin == EXEMAP_READ) {
			g_hash_table_add(read_paths, em->map->path);
			read_bytes += em->map->length;
		} else {
			g_hash_table_add(mapped_paths, em->map->path);
		}
	}
	{
		GHashTableIter iter;
		gpointer value;

		g_hash_table_iter_init(&iter, have);
		while (g_hash_table_iter_next(&iter, NULL, &value))
			g_array_sort(value, compare_intervals);
	}

	for (guint i = 0; i < ranges->len; i++) {
		const WatchRange *r = &g_array_index(ranges, WatchRange, i);
		g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(Interval));
		GArray *list;
		guint64 end;

		if (!r->path || r->path[0] != '/' || r->length == 0 ||
		    r->length > G_MAXUINT64 - r->offset ||
		    g_str_has_prefix(r->path, MEMFD_PREFIX) ||
		    !conf_prefix_accepts(conf->mapprefix, r->path))
			continue;
		/*
		 * A file the exe maps is learned through its maps only: what is
		 * resident beyond them (the debug sections of an unstripped
		 * binary or library, cached whole since it was installed) is not
		 * what the start used, and would fill the read budget.
		 */
		if (g_hash_table_contains(mapped_paths, r->path))
			continue;
		end = r->offset + r->length;
		list = g_hash_table_lookup(have, r->path);
		subtract_intervals(r->offset, end, list, pieces);
		if (pieces->len == 0)
			continue;
		/* A file new to the read set needs room under the file cap. */
		if (!g_hash_table_contains(read_paths, r->path)) {
			if (g_hash_table_size(read_paths) >= max_files ||
			    !file_state(spy, stat_cache, r->path)->usable)
				continue;
			g_hash_table_add(read_paths, r->path);
		}
		if (!list) {
			list = g_array_new(FALSE, FALSE, sizeof(Interval));
			g_hash_table_insert(have, r->path, list);
		}
		for (guint k = 0; k < pieces->len && read_bytes < max_bytes; k++) {
			Interval *p = &g_array_index(pieces, Interval, k);
			WatchRange w;

			p->end = MIN(p->end, p->start + (max_bytes - read_bytes));
			w.path = r->path;
			w.offset = p->start;
			w.length = p->end - p->start;
			g_array_append_val(add, w);
			g_array_append_val(list, *p);
			read_bytes += w.length;
			added += w.length;
		}
		g_array_sort(list, compare_intervals);
	}

	if (!exe) {
		/* An unknown program: its read set is all that is known of it. */
		if (added < (guint64)MAX(conf->minsize, 0)) {
			model_add_bad_exe(model, exe_path, added, now);
			g_hash_table_remove(spy->execs, exe_path);
			spy->stats.too_small++;
			g_debug("started exe %s: %" G_GUINT64_FORMAT " bytes read at start-up, "
				"below minsize, not modelled for now", exe_path, added);
			return;
		}
		exe = exe_new(exe_path, FALSE, now);
	}

	for (guint i = 0; i < add->len; i++) {
		const WatchRange *w = &g_array_index(add, WatchRange, i);
		const FileState *state = file_state(spy, stat_cache, w->path);
		Map *map = model_lookup_map(model, w->path, w->offset, w->length);

		if (map)
			map->update_time = MAX(map->update_time, now);
		else
			map = map_new(w->path, w->offset, w->length, now);
		/* Read now: valid for the file there now. */
		map->stale = FALSE;
		if (map_file_id_is_known(&state->id))
			map->file = state->id;
		map->checked = now;
		exe_add_map_origin(model, exe, map, 1.0, EXEMAP_READ);
	}

	if (!model_lookup_exe(model, exe_path)) {
		g_debug("started exe %s: admitted from its start-up reads, %u ranges, %"
			G_GUINT64_FORMAT " bytes", exe_path, add->len, added);
		/* Not running: its chains come with its first scan (model_link_exe). */
		model_add_exe(model, exe, now, conf->allpairs);
		spy->stats.learned_admitted++;
	} else if (add->len > 0) {
		g_debug("exe %s: %u ranges, %" G_GUINT64_FORMAT " bytes learned from its start-up reads",
			exe_path, add->len, added);
	}
	spy->stats.learned++;
	model->dirty = TRUE;
}
