/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Scan: which executables run, at the start of a cycle.
 *
 * The scan only observes: it marks the known executables it sees as
 * running (at the scan time), lists those whose running state flipped,
 * and remembers one pid for each executable it has never seen and for
 * each known one that started. Nothing is read from the maps yet,
 * because a process that just started has not mapped its libraries.
 * Learn, half a cycle later, applies what the scan found. Scan times are
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
 * The Scan object only holds what it found until learn consumes it; the
 * model stays the one source of truth.
 */
#include "config.h"

#include "scan.h"

#include "proc.h"

struct Scan {
	ScanResult result;        /* pending between the scan and learn */
	GHashTable *seen;         /* Exe * seen by the scan in progress */
	GPtrArray *seen_order;    /* the same, in the order seen */
	GHashTable *new_paths;    /* path -> ScanExe * (in result.new_exes), for dedup */

	/* filled between scans by exec events, consumed by the next scan */
	GHashTable *execs;        /* path (owned) -> scans left to wait for admission */
	MountNs *mountns;         /* translates other namespaces' exes (borrowed), or NULL */
	ProcLister *lister;       /* lists the processes, its libproc2 context kept */
	ScanStats stats;
};

static void
scan_exe_free(gpointer data)
{
	ScanExe *se = data;

	g_free(se->path);
	g_free(se);
}

static ScanExe *
scan_exe_new(const char *path, pid_t pid)
{
	ScanExe *se = g_new0(ScanExe, 1);

	se->path = g_strdup(path);
	se->pid = pid;
	return se;
}

Scan *
scan_new(void)
{
	Scan *scan = g_new0(Scan, 1);

	scan->result.time = -1;
	scan->result.changed = g_ptr_array_new_with_free_func(g_free);
	scan->result.new_exes = g_ptr_array_new_with_free_func(scan_exe_free);
	scan->result.restarted = g_ptr_array_new_with_free_func(scan_exe_free);
	scan->seen = g_hash_table_new(NULL, NULL);
	scan->seen_order = g_ptr_array_new();
	scan->new_paths = g_hash_table_new(g_str_hash, g_str_equal);
	scan->execs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	scan->lister = proc_lister_new();
	return scan;
}

void
scan_free(Scan *scan)
{
	if (!scan)
		return;
	g_hash_table_unref(scan->seen);
	g_ptr_array_unref(scan->seen_order);
	g_hash_table_unref(scan->new_paths);
	g_ptr_array_unref(scan->result.changed);
	g_ptr_array_unref(scan->result.new_exes);
	g_ptr_array_unref(scan->result.restarted);
	g_hash_table_unref(scan->execs);
	proc_lister_free(scan->lister);
	g_free(scan);
}

const ScanResult *
scan_get_result(const Scan *scan)
{
	g_return_val_if_fail(scan != NULL, NULL);

	return &scan->result;
}

const ScanStats *
scan_get_stats(const Scan *scan)
{
	g_return_val_if_fail(scan != NULL, NULL);

	return &scan->stats;
}

void
scan_consume(Scan *scan)
{
	g_return_if_fail(scan != NULL);

	g_hash_table_remove_all(scan->seen);
	g_ptr_array_set_size(scan->seen_order, 0);
	g_ptr_array_set_size(scan->result.changed, 0);
	g_hash_table_remove_all(scan->new_paths);
	g_ptr_array_set_size(scan->result.new_exes, 0);
	g_ptr_array_set_size(scan->result.restarted, 0);
}

void
scan_begin(Scan *scan, Model *model, gint64 now)
{
	g_return_if_fail(scan != NULL);
	g_return_if_fail(model != NULL);

	/* A scan not followed by learn is superseded, not merged: the
	 * chains learn from the current state at the next update anyway. */
	scan_consume(scan);
	scan->result.time = now;
	scan->stats.processes = 0;
}

/* Marks a known exe as seen by this scan; TRUE if that is a start. */
static gboolean
mark_seen(Scan *scan, Model *model, Exe *exe)
{
	gboolean started;

	/* Many processes may run one exe; the first one decides. */
	if (!g_hash_table_add(scan->seen, exe))
		return FALSE;
	g_ptr_array_add(scan->seen_order, exe);
	/* Decided before running_timestamp is moved to this scan. */
	started = !exe_is_running(model, exe);
	if (started)
		g_ptr_array_add(scan->result.changed, g_strdup(exe->path));
	exe->running_timestamp = scan->result.time;
	exe->update_time = scan->result.time;
	return started;
}

void
scan_saw_process(Scan *scan, Model *model, const Conf *conf, pid_t pid, const char *raw_exe)
{
	g_autofree char *path = NULL;
	Exe *exe;
	ScanExe *se;

	g_return_if_fail(scan != NULL);
	g_return_if_fail(model != NULL);
	g_return_if_fail(conf != NULL);

	scan->stats.processes++;

	path = proc_sanitize_exe(raw_exe);
	if (!path || !conf_prefix_accepts(conf->exeprefix, path))
		return;

	exe = model_lookup_exe(model, path);
	if (exe) {
		/* A start: its maps are read again, from this process. */
		if (mark_seen(scan, model, exe))
			g_ptr_array_add(scan->result.restarted, scan_exe_new(exe->path, pid));
		return;
	}

	if (g_hash_table_contains(model->bad_exes, path) ||
	    g_hash_table_contains(scan->new_paths, path))
		return;

	se = scan_exe_new(path, pid);
	g_ptr_array_add(scan->result.new_exes, se);
	g_hash_table_insert(scan->new_paths, se->path, se);
}

void
scan_end(Scan *scan, Model *model, gint64 now)
{
	GHashTableIter iter;
	gpointer key, value;

	g_return_if_fail(scan != NULL);
	g_return_if_fail(model != NULL);

	/* The scan time set by scan_begin() is the one that counts; now
	 * is the same in the daemon and in a replay. */
	(void)now;

	/*
	 * Programs started since the last scan ran in this interval, alive
	 * or not. One not admitted yet waits for its read set a little.
	 */
	g_hash_table_iter_init(&iter, scan->execs);
	while (g_hash_table_iter_next(&iter, &key, &value)) {
		Exe *exe = model_lookup_exe(model, key);
		int left = GPOINTER_TO_INT(value) - 1;

		/* A start seen only as an event: its process may be gone,
		 * so its maps are not read again (its reads are learned). */
		if (exe)
			(void)mark_seen(scan, model, exe);
		if (exe || left <= 0)
			g_hash_table_iter_remove(&iter);
		else
			g_hash_table_iter_replace(&iter, GINT_TO_POINTER(left));
	}

	/* Running at the last scan and not seen by this one: stopped. */
	for (guint i = 0; i < model->running->len; i++) {
		Exe *exe = g_ptr_array_index(model->running, i);

		if (!g_hash_table_contains(scan->seen, exe))
			g_ptr_array_add(scan->result.changed, g_strdup(exe->path));
	}

	g_ptr_array_set_size(model->running, 0);
	for (guint i = 0; i < scan->seen_order->len; i++)
		g_ptr_array_add(model->running, g_ptr_array_index(scan->seen_order, i));
	model->last_running_timestamp = scan->result.time;

	/* The exes may be freed before the next scan; keep no pointers. */
	g_hash_table_remove_all(scan->seen);
	g_ptr_array_set_size(scan->seen_order, 0);

	scan->stats.changed = scan->result.changed->len;
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

/*
 * The executable of a process in another mount namespace, as a path here
 * (*host set), or FALSE when no path here reaches it: such a program is
 * not seen at all, so it is never admitted (a program made in a private
 * tmpfs, or in a container whose files the host does not show). The
 * program is then known by that path here, so a container's
 * /usr/bin/python3 is not the host's.
 */
static gboolean
host_exe(MountNs *ns, const SeenProcess *p, char **host)
{
	g_autofree char *path = proc_sanitize_exe(p->exe);
	MountNsDrop why;

	if (!path)
		return TRUE;  /* scan_saw_process() skips it */
	switch (mountns_translate(ns, p->pid, path, 0, TRUE, host, &why)) {
	case MOUNTNS_SAME:
	case MOUNTNS_TRANSLATED:
		return TRUE;
	case MOUNTNS_DROPPED:
	default:
		g_debug("pid %d runs %s, which is not reachable here (%s): not learned",
			(int)p->pid, path, mountns_drop_name(why));
		return FALSE;
	}
}

gboolean
scan_proc(Scan *scan, Model *model, const Conf *conf, gint64 now, GError **error)
{
	g_autoptr(GArray) processes = NULL;

	g_return_val_if_fail(scan != NULL, FALSE);
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
	if (!proc_lister_foreach_exe(scan->lister, collect_process, processes, error))
		return FALSE;

	scan_begin(scan, model, now);
	if (scan->mountns)
		mountns_begin(scan->mountns);
	for (guint i = 0; i < processes->len; i++) {
		SeenProcess *p = &g_array_index(processes, SeenProcess, i);
		g_autofree char *host = NULL;

		if (scan->mountns && !host_exe(scan->mountns, p, &host))
			continue;
		scan_saw_process(scan, model, conf, p->pid, host ? host : p->exe);
	}
	scan_end(scan, model, now);
	return TRUE;
}

void
scan_set_mountns(Scan *scan, MountNs *ns)
{
	g_return_if_fail(scan != NULL);
	scan->mountns = ns;
}

void
scan_saw_exec(Scan *scan, Model *model, const Conf *conf, const char *exe_path)
{
	g_return_if_fail(scan != NULL);
	g_return_if_fail(model != NULL);
	g_return_if_fail(conf != NULL);
	g_return_if_fail(exe_path != NULL);

	if (!conf_prefix_accepts(conf->exeprefix, exe_path) ||
	    g_hash_table_contains(model->bad_exes, exe_path))
		return;
	/* Two scans: the next one, and one more if it is admitted in between. */
	g_hash_table_replace(scan->execs, g_strdup(exe_path), GINT_TO_POINTER(2));
}

void
scan_forget_exec(Scan *scan, const char *exe_path)
{
	g_return_if_fail(scan != NULL);
	g_return_if_fail(exe_path != NULL);

	g_hash_table_remove(scan->execs, exe_path);
}
