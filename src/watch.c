/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Watch: what programs open while they start, and which programs start,
 * from fanotify.
 *
 * The daemon's /proc scan sees the files a process has mapped when the
 * scan happens to run. Interpreters and compilers also read() many small
 * files (modules, headers, configuration) that never show up in
 * /proc/PID/maps, and a program that lives less than a cycle is never
 * seen at all. fanotify reports both: FAN_OPEN_EXEC when a file is opened
 * to be executed, FAN_OPEN for every other open, each with the opening
 * process's pid and a descriptor of the opened file.
 *
 * Cost is the design constraint: on a busy machine (a parallel build)
 * the kernel reports tens of thousands of opens a second. So:
 *  - the groups are notification groups (FAN_CLASS_NOTIF): nobody ever
 *    waits for the daemon;
 *  - plain opens come, where the file system allows it, from a second
 *    group that reports file handles (FAN_REPORT_FID, Linux 5.1): the
 *    kernel opens no file for such an event, so an open by a process
 *    that is not in its start-up window costs a few bytes of a read and
 *    one hash lookup. Only the opens of a pid in its window are resolved
 *    (open_by_handle_at() with O_PATH, through a mount of the daemon's
 *    that shows the whole file system: no file system's open runs) and
 *    then handled as any other. A descriptor group opened every reported
 *    file in the reader's context, some 33,000 a minute on a desktop,
 *    and on a hung FUSE mount the main thread with it;
 *  - exec events, and the plain opens of the file systems the handle
 *    group refuses (no fsid or no handles: an overlay, a tmpfs or FUSE on
 *    older kernels; a btrfs subvolume; network and FUSE file systems,
 *    whose handles may ask a server), stay in the descriptor group: an
 *    exec's head is read through its descriptor. There, an open by a
 *    process that is not in its window costs one hash lookup and a
 *    close() of the descriptor the kernel opened;
 *  - at most one window per executable per cycle: a compiler that a build
 *    runs a thousand times is followed once a cycle, its other starts
 *    only counted;
 *  - a window records at most `maxreadfiles` files, and the read set
 *    taken from it at most `maxreadkb`;
 *  - events are read in large batches, a bounded number per wake-up, so
 *    the main loop stays responsive.
 * Events of the daemon's own pid (its readahead threads, the residency
 * probes below) are dropped first: they would feed back.
 *
 * Every local user can make events, so nothing an event names is looked
 * up by path on this (the main) thread: the file is known through the
 * descriptor the kernel opened or the handle resolved (statx with
 * AT_STATX_DONT_SYNC, which a FUSE or NFS file answers from its cache;
 * its name from /proc/self/fd),
 * and a program's ELF interpreter by the place of its exec event (see
 * watch_tracker_exec), where realpath() on the name the program chose
 * hung the daemon for as long as a dead mount it pointed into. Network
 * and FUSE file systems are told from the mount table (the type of the
 * mount holding a path, the device of an event's file), never by asking
 * them.
 *
 * Which files a start needed is taken, when its window ends, as the
 * resident page ranges of the files it opened (mincore), merged into
 * ranges with small gaps bridged: the pages a program read are resident
 * right after it read them, and reading a file's untouched tail would
 * waste the budget. Pages other programs keep resident are included too;
 * that is the price of not tracing every read.
 *
 * The window bookkeeping, the ELF parser and the range merging are pure
 * functions, tested from tables in tests/check_watch.c.
 */
#include "config.h"

#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <glib-unix.h>

#ifdef HAVE_SYS_FANOTIFY_H
#include <sys/fanotify.h>
#endif

#include "cputime.h"
#include "fsjob.h"
#include "interval.h"
#include "mountns.h"
#include "proc.h"
#include "pagecache.h"

G_DEFINE_QUARK(preload-watch-error-quark, watch_error)

/*
 * How long the ELF interpreter's exec may follow the program's own exec
 * in the same pid. Both happen inside one execve(), microseconds apart;
 * a second leaves room for a loaded machine and a slow reader.
 */
#define INTERP_TIMEOUT_US G_USEC_PER_SEC

/* Bytes read from an executed file to classify it and find PT_INTERP. */
#define IMAGE_HEAD 4096

/* At most this many ranges per file in a learned set (see watch_spans_from_mincore). */
#define MAX_SPANS_PER_FILE 32
/* Absent pages bridged between two resident ones: 64 KiB with 4 KiB pages. */
#define BRIDGE_PAGES 16
/* Of a huge file, only this much is examined for resident pages. */
#define MAX_EXAMINED ((guint64)1 << 30)

/*
 * A file opened in the window of which nothing is resident at its end was
 * read and evicted since (memory pressure, the kernel's reclaimer, someone
 * dropping caches). Up to this size it is learned whole rather than lost.
 */
#define EVICTED_WHOLE_MAX ((guint64)4 << 20)

/*
 * sizeof(struct fanotify_event_metadata): without info records (the group
 * asks for none) every event is exactly this long.
 */
#define EVENT_METADATA_LEN 24

/*
 * At most this many file systems are marked: a mount table of thousands
 * (containers, snaps) must not cost thousands of marks and stats.
 */
#define MAX_MARKS 64

/*
 * Milliseconds between two reads of the event queue under load. At 20 ms
 * a build kept the daemon at 35 wake-ups a second, and the main loop's
 * poll and dispatch were a sixth of its CPU (perf); at 50 ms an exec
 * under load is seen at most 50 ms late, while one after a quiet spell
 * is still read at once.
 */
#define PAUSE_MS 50

/* Events read per wake-up: batches of EVENT_BUFFER bytes, at most MAX_READS of them. */
#define EVENT_BUFFER (64 * 1024)
#define MAX_READS 8

/*
 * And for at most this long (wall clock): the daemon runs niced, and
 * under a flood that keeps the CPUs busy a wake-up's reads (the kernel
 * opens a file for every event) can take a second; the signals and the
 * cycle wait meanwhile. What is left is read after the pause.
 */
#define DISPATCH_BUDGET_US (10 * 1000)

/* ---- the window bookkeeping --------------------------------------------- */

/* What the tracker knows about one pid that executed something recently. */
typedef struct PidState {
	gboolean wants_interp; /* the last image asked for an interpreter, not seen yet */
	gint64 exec_time;     /* us, of the last exec */
	WatchWindow *window;  /* its open start-up window, or NULL */
	GHashTable *recorded; /* paths in window->files, borrowed from them */
} PidState;

/* The rate limit of one executable's windows. */
typedef struct RateEntry {
	gint64 start;         /* us, of its last window */
	gint64 interval;      /* us, until its next window: interval_us, doubled by
			       * every window that taught nothing new */
} RateEntry;

struct WatchTracker {
	WatchLimits limits;   /* the prefix lists are owned copies */
	pid_t self;
	GHashTable *pids;     /* GINT_TO_POINTER(pid) -> PidState * */
	GHashTable *last_window; /* exe path (owned) -> RateEntry * */
	guint open_windows;   /* pids whose window is open */
	GPtrArray *finished;  /* WatchWindow *, ended, not yet handed out */
};

static void
watch_file_free(gpointer data)
{
	WatchFile *file = data;

	g_free(file->path);
	g_free(file);
}

void
watch_window_free(WatchWindow *window)
{
	if (!window)
		return;
	g_free(window->exe);
	g_ptr_array_unref(window->files);
	g_free(window);
}

static void
window_destroy(gpointer data)
{
	watch_window_free(data);
}

static void
pid_state_free(gpointer data)
{
	PidState *st = data;

	g_clear_pointer(&st->recorded, g_hash_table_unref);
	watch_window_free(st->window);
	g_free(st);
}

WatchTracker *
watch_tracker_new(const WatchLimits *limits, pid_t self)
{
	WatchTracker *tracker;

	g_return_val_if_fail(limits != NULL, NULL);

	tracker = g_new0(WatchTracker, 1);
	tracker->limits = *limits;
	tracker->limits.exeprefix = g_strdupv(limits->exeprefix);
	tracker->limits.mapprefix = g_strdupv(limits->mapprefix);
	tracker->self = self;
	tracker->pids = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, pid_state_free);
	tracker->last_window = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	tracker->finished = g_ptr_array_new_with_free_func(window_destroy);
	return tracker;
}

void
watch_tracker_free(WatchTracker *tracker)
{
	if (!tracker)
		return;
	g_strfreev(tracker->limits.exeprefix);
	g_strfreev(tracker->limits.mapprefix);
	g_hash_table_unref(tracker->pids);
	g_hash_table_unref(tracker->last_window);
	g_ptr_array_unref(tracker->finished);
	g_free(tracker);
}

/* Moves st's window to the finished list. */
static void
end_window(WatchTracker *tracker, PidState *st)
{
	if (!st->window)
		return;
	g_clear_pointer(&st->recorded, g_hash_table_unref);
	g_ptr_array_add(tracker->finished, g_steal_pointer(&st->window));
	tracker->open_windows--;
}

/*
 * Records path in st's window, within the caps; TRUE if it was added. id
 * is the file's identity when it was opened, or NULL (then only its size
 * is known).
 */
static gboolean
record_file(const WatchTracker *tracker, PidState *st, const char *path, guint64 size,
	    const MapFileId *id)
{
	WatchFile *file;

	if (!conf_prefix_accepts(tracker->limits.mapprefix, path) ||
	    g_hash_table_contains(st->recorded, path))
		return FALSE;
	if (st->window->files->len >= tracker->limits.max_files) {
		st->window->dropped++;
		return FALSE;
	}
	file = g_new0(WatchFile, 1);
	file->path = g_strdup(path);
	file->size = size;
	if (id)
		file->id = *id;
	g_ptr_array_add(st->window->files, file);
	g_hash_table_add(st->recorded, file->path);
	return TRUE;
}

/*
 * The rate limit needs starts within one interval; a backed-off
 * program's entry stays for twice its interval, so that a program
 * started again within it keeps its pace, and one started rarely gets a
 * window at each start. A stale entry is as good as none.
 */
static gboolean
rate_stale(const WatchTracker *tracker, const RateEntry *last, gint64 now)
{
	gint64 keep = last->interval > tracker->limits.interval_us ? 2 * last->interval
								    : last->interval;

	return now - last->start >= keep || now < last->start;
}

WatchExecResult
watch_tracker_exec(WatchTracker *tracker, pid_t pid, const char *path, guint64 size,
		   WatchImageKind kind, gboolean asks_interp, gint64 now)
{
	PidState *st;
	RateEntry *last;

	g_return_val_if_fail(tracker != NULL, WATCH_EXEC_SELF);
	g_return_val_if_fail(path != NULL, WATCH_EXEC_SELF);

	if (pid == tracker->self)
		return WATCH_EXEC_SELF;
	/*
	 * /proc/PID/exe names the script's interpreter, and so does the
	 * model; the interpreter opens the script again to read it, and that
	 * open lands in the window like any other.
	 */
	if (kind == WATCH_IMAGE_SCRIPT)
		return WATCH_EXEC_SCRIPT;

	st = g_hash_table_lookup(tracker->pids, GINT_TO_POINTER(pid));
	if (st && st->wants_interp && kind == WATCH_IMAGE_ELF && !asks_interp &&
	    now - st->exec_time <= INTERP_TIMEOUT_US && now >= st->exec_time) {
		/* The loader of the image just executed: part of that start. */
		st->wants_interp = FALSE;
		if (st->window)
			(void)record_file(tracker, st, path, size, NULL);
		return WATCH_EXEC_INTERP;
	}

	/* A new image: whatever the pid was running before has ended. */
	if (!st && g_hash_table_size(tracker->pids) < WATCH_MAX_PIDS) {
		st = g_new0(PidState, 1);
		g_hash_table_insert(tracker->pids, GINT_TO_POINTER(pid), st);
	}
	if (st) {
		end_window(tracker, st);
		st->wants_interp = kind == WATCH_IMAGE_ELF && asks_interp;
		st->exec_time = now;
	}

	if (!conf_prefix_accepts(tracker->limits.exeprefix, path))
		return WATCH_EXEC_REJECTED;

	last = g_hash_table_lookup(tracker->last_window, path);
	/* Not expired yet (no timer runs for the rate entries alone): as none. */
	if (last && rate_stale(tracker, last, now)) {
		g_hash_table_remove(tracker->last_window, path);
		last = NULL;
	}
	/* Not followed (a full table) or rate limited: only counted. */
	if (!st || tracker->limits.max_files == 0 ||
	    (last && now - last->start < last->interval && now >= last->start) ||
	    (!last && g_hash_table_size(tracker->last_window) >= WATCH_MAX_RATED))
		return WATCH_EXEC_COUNTED;

	st->window = g_new0(WatchWindow, 1);
	st->window->exe = g_strdup(path);
	st->window->pid = pid;
	st->window->start = now;
	st->window->files = g_ptr_array_new_with_free_func(watch_file_free);
	st->recorded = g_hash_table_new(g_str_hash, g_str_equal);
	tracker->open_windows++;
	/* The program's own file is the first thing its start needs. */
	(void)record_file(tracker, st, path, size, NULL);
	if (!last) {
		last = g_new(RateEntry, 1);
		last->interval = tracker->limits.interval_us;
		g_hash_table_replace(tracker->last_window, g_strdup(path), last);
	}
	last->start = now;
	return WATCH_EXEC_WINDOW;
}

gboolean
watch_tracker_wants(const WatchTracker *tracker, pid_t pid)
{
	const PidState *st = g_hash_table_lookup(tracker->pids, GINT_TO_POINTER(pid));

	return st && st->window;
}

gboolean
watch_tracker_open(WatchTracker *tracker, pid_t pid, const char *path, const MapFileId *id,
		   gint64 now)
{
	PidState *st;

	g_return_val_if_fail(tracker != NULL, FALSE);
	g_return_val_if_fail(path != NULL && id != NULL, FALSE);

	st = g_hash_table_lookup(tracker->pids, GINT_TO_POINTER(pid));
	if (!st || !st->window)
		return FALSE;
	/* Over, but not expired yet: the start-up is past. */
	if (now - st->window->start >= tracker->limits.window_us || now < st->window->start)
		return FALSE;
	return record_file(tracker, st, path, id->size, id);
}

static gint
compare_window_start(gconstpointer a, gconstpointer b)
{
	const WatchWindow *x = *(WatchWindow *const *)a, *y = *(WatchWindow *const *)b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

GPtrArray *
watch_tracker_expire(WatchTracker *tracker, gint64 now, WatchAliveFunc alive, gpointer user_data)
{
	GHashTableIter iter;
	gpointer key, value;
	GPtrArray *done;

	g_return_val_if_fail(tracker != NULL, NULL);

	g_hash_table_iter_init(&iter, tracker->pids);
	while (g_hash_table_iter_next(&iter, &key, &value)) {
		PidState *st = value;
		pid_t pid = GPOINTER_TO_INT(key);
		gboolean gone = alive && !alive(pid, user_data);

		if (st->window && (gone || now - st->window->start >= tracker->limits.window_us ||
				   now < st->window->start))
			end_window(tracker, st);
		if (gone || now - st->exec_time > INTERP_TIMEOUT_US || now < st->exec_time)
			st->wants_interp = FALSE;
		if (!st->window && !st->wants_interp)
			g_hash_table_iter_remove(&iter);
	}

	g_hash_table_iter_init(&iter, tracker->last_window);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		if (rate_stale(tracker, value, now))
			g_hash_table_iter_remove(&iter);

	done = g_steal_pointer(&tracker->finished);
	tracker->finished = g_ptr_array_new_with_free_func(window_destroy);
	g_ptr_array_sort(done, compare_window_start);
	return done;
}

void
watch_tracker_learned(WatchTracker *tracker, const char *exe, gboolean taught)
{
	RateEntry *last;

	g_return_if_fail(tracker != NULL);
	g_return_if_fail(exe != NULL);

	last = g_hash_table_lookup(tracker->last_window, exe);
	if (!last)
		return;
	if (taught)
		last->interval = tracker->limits.interval_us;
	else if (last->interval < tracker->limits.interval_us * WATCH_BACKOFF_MAX)
		last->interval *= 2;
}

gint64
watch_tracker_interval(const WatchTracker *tracker, const char *exe)
{
	const RateEntry *last;

	g_return_val_if_fail(tracker != NULL, 0);
	g_return_val_if_fail(exe != NULL, 0);

	last = g_hash_table_lookup(tracker->last_window, exe);
	return last ? last->interval : 0;
}

guint
watch_tracker_windows(const WatchTracker *tracker)
{
	g_return_val_if_fail(tracker != NULL, 0);

	return tracker->open_windows;
}

gboolean
watch_tracker_busy(const WatchTracker *tracker)
{
	g_return_val_if_fail(tracker != NULL, FALSE);

	/*
	 * Not the rate entries: a backed-off one lives up to 32 cycles, and a
	 * timer ticking once a second for that long on an idle machine only
	 * to forget it is a waste; a stale entry counts as none (rate_stale())
	 * and is dropped at the next expire.
	 */
	return g_hash_table_size(tracker->pids) > 0 || tracker->finished->len > 0;
}

/* ---- the names of executed files ------------------------------------------ */

struct WatchExecNames {
	GHashTable *table;    /* WatchExecKey * (owned) -> WatchExecName * (owned) */
};

static guint
exec_key_hash(gconstpointer p)
{
	const WatchExecKey *k = p;
	guint64 h = k->id.ino * G_GUINT64_CONSTANT(0x9e3779b97f4a7c15) ^ k->id.dev ^
		    (guint64)k->ctime ^ ((guint64)k->mnt_id << 32);

	return (guint)(h ^ (h >> 32));
}

static gboolean
exec_key_equal(gconstpointer a, gconstpointer b)
{
	const WatchExecKey *x = a, *y = b;

	return x->id.dev == y->id.dev && x->id.ino == y->id.ino && x->id.size == y->id.size &&
	       x->id.mtime == y->id.mtime && x->ctime == y->ctime && x->mnt_id == y->mnt_id;
}

static void
exec_name_free(gpointer data)
{
	WatchExecName *name = data;

	g_free(name->raw);
	g_free(name);
}

WatchExecNames *
watch_exec_names_new(void)
{
	WatchExecNames *names = g_new0(WatchExecNames, 1);

	names->table = g_hash_table_new_full(exec_key_hash, exec_key_equal, g_free, exec_name_free);
	return names;
}

void
watch_exec_names_free(WatchExecNames *names)
{
	if (!names)
		return;
	g_hash_table_unref(names->table);
	g_free(names);
}

static gboolean
exec_name_fresh(const WatchExecName *name, gint64 now)
{
	return now >= name->stored && now - name->stored < WATCH_EXEC_NAME_TTL_US;
}

const WatchExecName *
watch_exec_names_lookup(WatchExecNames *names, const WatchExecKey *key, gint64 now)
{
	const WatchExecName *name;

	g_return_val_if_fail(names != NULL && key != NULL, NULL);

	if (key->id.ino == 0)
		return NULL;
	name = g_hash_table_lookup(names->table, key);
	return name && exec_name_fresh(name, now) ? name : NULL;
}

void
watch_exec_names_store(WatchExecNames *names, const WatchExecKey *key, const char *raw,
		       WatchImageKind kind, gboolean asks_interp, gint64 now)
{
	WatchExecName *name;

	g_return_if_fail(names != NULL && key != NULL && raw != NULL);

	if (key->id.ino == 0)
		return;
	if (g_hash_table_size(names->table) >= WATCH_EXEC_NAMES_MAX &&
	    !g_hash_table_contains(names->table, key)) {
		GHashTableIter iter;
		gpointer value;

		g_hash_table_iter_init(&iter, names->table);
		while (g_hash_table_iter_next(&iter, NULL, &value))
			if (!exec_name_fresh(value, now))
				g_hash_table_iter_remove(&iter);
		if (g_hash_table_size(names->table) >= WATCH_EXEC_NAMES_MAX)
			g_hash_table_remove_all(names->table);
	}
	name = g_new(WatchExecName, 1);
	name->raw = g_strdup(raw);
	name->kind = kind;
	name->asks_interp = asks_interp;
	name->stored = now;
	g_hash_table_replace(names->table, g_memdup2(key, sizeof(*key)), name);
}

guint
watch_exec_names_size(const WatchExecNames *names)
{
	g_return_val_if_fail(names != NULL, 0);

	return g_hash_table_size(names->table);
}

/* ---- the names of files opened by handle --------------------------------- */

struct WatchHandleNames {
	GHashTable *table;    /* WatchHandleKey * (owned) -> WatchHandleName * (owned) */
};

static guint
handle_key_hash(gconstpointer p)
{
	const WatchHandleKey *k = p;
	guint h = k->fsid[0] * 31u + k->fsid[1] + (guint)k->type * 131u;

	for (guint i = 0; i < k->bytes; i++)
		h = h * 33u + k->handle[i];
	return h;
}

static gboolean
handle_key_equal(gconstpointer a, gconstpointer b)
{
	const WatchHandleKey *x = a, *y = b;

	return x->fsid[0] == y->fsid[0] && x->fsid[1] == y->fsid[1] && x->type == y->type &&
	       x->bytes == y->bytes && memcmp(x->handle, y->handle, x->bytes) == 0;
}

static void
handle_name_free(gpointer data)
{
	WatchHandleName *name = data;

	g_free(name->path);
	g_free(name);
}

WatchHandleNames *
watch_handle_names_new(void)
{
	WatchHandleNames *names = g_new0(WatchHandleNames, 1);

	names->table = g_hash_table_new_full(handle_key_hash, handle_key_equal, g_free,
					     handle_name_free);
	return names;
}

void
watch_handle_names_free(WatchHandleNames *names)
{
	if (!names)
		return;
	g_hash_table_unref(names->table);
	g_free(names);
}

gboolean
watch_handle_key(WatchHandleKey *key, const guint32 fsid[2], gint32 type, const guint8 *handle,
		 guint32 bytes)
{
	g_return_val_if_fail(key != NULL && fsid != NULL, FALSE);

	memset(key, 0, sizeof(*key));
	if (bytes > WATCH_HANDLE_MAX || (bytes > 0 && !handle))
		return FALSE;
	key->fsid[0] = fsid[0];
	key->fsid[1] = fsid[1];
	key->type = type;
	key->bytes = bytes;
	if (bytes > 0)
		memcpy(key->handle, handle, bytes);
	return TRUE;
}

static gboolean
handle_name_fresh(const WatchHandleName *name, gint64 now)
{
	return now >= name->stored && now - name->stored < WATCH_HANDLE_NAME_TTL_US;
}

const WatchHandleName *
watch_handle_names_lookup(WatchHandleNames *names, const WatchHandleKey *key, gint64 now)
{
	const WatchHandleName *name;

	g_return_val_if_fail(names != NULL && key != NULL, NULL);

	name = g_hash_table_lookup(names->table, key);
	return name && handle_name_fresh(name, now) ? name : NULL;
}

void
watch_handle_names_store(WatchHandleNames *names, const WatchHandleKey *key, const char *path,
			 const MapFileId *id, gint64 now)
{
	WatchHandleName *name;

	g_return_if_fail(names != NULL && key != NULL && path != NULL && id != NULL);

	if (g_hash_table_size(names->table) >= WATCH_HANDLE_NAMES_MAX &&
	    !g_hash_table_contains(names->table, key)) {
		GHashTableIter iter;
		gpointer value;

		g_hash_table_iter_init(&iter, names->table);
		while (g_hash_table_iter_next(&iter, NULL, &value))
			if (!handle_name_fresh(value, now))
				g_hash_table_iter_remove(&iter);
		if (g_hash_table_size(names->table) >= WATCH_HANDLE_NAMES_MAX)
			g_hash_table_remove_all(names->table);
	}
	name = g_new(WatchHandleName, 1);
	name->path = g_strdup(path);
	name->id = *id;
	name->stored = now;
	/* Only the bytes the handle has (8 on ext4, not 128): hash and equal read no further. */
	g_hash_table_replace(names->table,
			     g_memdup2(key, G_STRUCT_OFFSET(WatchHandleKey, handle) + key->bytes),
			     name);
}

guint
watch_handle_names_size(const WatchHandleNames *names)
{
	g_return_val_if_fail(names != NULL, 0);

	return g_hash_table_size(names->table);
}

/* ---- executable images ---------------------------------------------------- */

static guint64
read_uint(const guint8 *p, guint size, gboolean big_endian)
{
	guint64 v = 0;

	for (guint i = 0; i < size; i++) {
		guint shift = big_endian ? 8 * (size - 1 - i) : 8 * i;

		v |= (guint64)p[i] << shift;
	}
	return v;
}

WatchImageKind
watch_parse_image(const guint8 *buf, gsize len, guint64 *interp_offset, guint64 *interp_length)
{
	gboolean is64, be;
	guint64 phoff, phentsize, phnum;
	gsize ehsize, min_phent;

	*interp_offset = 0;
	*interp_length = 0;
	if (len >= 2 && buf[0] == '#' && buf[1] == '!')
		return WATCH_IMAGE_SCRIPT;
	if (len < 16 || memcmp(buf, "\177ELF", 4) != 0)
		return WATCH_IMAGE_OTHER;
	if ((buf[4] != 1 && buf[4] != 2) || (buf[5] != 1 && buf[5] != 2))
		return WATCH_IMAGE_OTHER;
	is64 = buf[4] == 2;
	be = buf[5] == 2;
	ehsize = is64 ? 64 : 52;
	min_phent = is64 ? 56 : 32;
	if (len < ehsize)
		return WATCH_IMAGE_OTHER;

	/* e_phoff, e_phentsize and e_phnum of Elf64_Ehdr / Elf32_Ehdr. */
	phoff = read_uint(buf + (is64 ? 32 : 28), is64 ? 8 : 4, be);
	phentsize = read_uint(buf + (is64 ? 54 : 42), 2, be);
	phnum = read_uint(buf + (is64 ? 56 : 44), 2, be);
	if (phnum == 0)
		return WATCH_IMAGE_ELF;
	if (phentsize < min_phent)
		return WATCH_IMAGE_OTHER;

	for (guint64 i = 0; i < phnum; i++) {
		const guint8 *ph;
		guint64 at, offset, filesz;

		/* Headers beyond the buffer: the interpreter is unknown, not absent. */
		if (phoff > len || i > (len - phoff) / phentsize)
			break;
		at = phoff + i * phentsize;
		if (at + min_phent > len)
			break;
		ph = buf + at;
		if (read_uint(ph, 4, be) != 3)  /* PT_INTERP */
			continue;
		offset = read_uint(ph + (is64 ? 8 : 4), is64 ? 8 : 4, be);
		filesz = read_uint(ph + (is64 ? 32 : 16), is64 ? 8 : 4, be);
		/* The string includes its NUL; a path longer than PATH_MAX is bogus. */
		if (filesz < 2 || filesz > PATH_MAX)
			return WATCH_IMAGE_ELF;
		*interp_offset = offset;
		*interp_length = filesz - 1;
		return WATCH_IMAGE_ELF;
	}
	return WATCH_IMAGE_ELF;
}

/* ---- mounts and file system classes --------------------------------------- */

gboolean
watch_fs_is_remote(const char *fstype)
{
	/* Network file systems, and FUSE whose server is a process that may hang. */
	static const char *const remote[] = {
		"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "afs", "coda",
		"glusterfs", "lustre", "ncpfs", "fuse", "fuseblk", "virtiofs", "davfs",
		"gfs2", "ocfs2", "orangefs", "pvfs2", "beegfs", "gpfs", NULL,
	};

	g_return_val_if_fail(fstype != NULL, FALSE);
	if (g_str_has_prefix(fstype, "fuse."))
		return TRUE;
	return g_strv_contains(remote, fstype);
}

gboolean
watch_fs_is_pseudo(const char *fstype)
{
	static const char *const pseudo[] = {
		"proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "securityfs",
		"debugfs", "tracefs", "bpf", "pstore", "mqueue", "hugetlbfs", "configfs",
		"fusectl", "autofs", "binfmt_misc", "efivarfs", "rpc_pipefs", "nsfs",
		"selinuxfs", "nfsd", NULL,
	};

	g_return_val_if_fail(fstype != NULL, FALSE);
	return g_strv_contains(pseudo, fstype);
}

gboolean
watch_fs_magic_is_remote(guint64 f_type)
{
	/* statfs(2)'s magic numbers of the types watch_fs_is_remote() names. */
	static const guint64 magic[] = {
		0x6969,      /* NFS_SUPER_MAGIC */
		0xff534d42,  /* CIFS_SUPER_MAGIC */
		0xfe534d42,  /* SMB2_SUPER_MAGIC */
		0x517b,      /* SMB_SUPER_MAGIC */
		0x01021997,  /* V9FS_MAGIC */
		0x00c36400,  /* CEPH_SUPER_MAGIC */
		0x5346414f,  /* AFS_SUPER_MAGIC */
		0x6b414653,  /* AFS_FS_MAGIC */
		0x73757245,  /* CODA_SUPER_MAGIC */
		0x564c,      /* NCP_SUPER_MAGIC */
		0x65735546,  /* FUSE_SUPER_MAGIC (also virtiofs) */
		0x01161970,  /* GFS2_MAGIC */
		0x7461636f,  /* OCFS2_SUPER_MAGIC */
		0x20030528,  /* ORANGEFS_DEVREQ_MAGIC */
		0x0bd00bd0,  /* LL_SUPER_MAGIC (lustre) */
	};

	for (gsize i = 0; i < G_N_ELEMENTS(magic); i++)
		if (magic[i] == f_type)
			return TRUE;
	return FALSE;
}

/* Whether point is path or a directory above it. */
static gboolean
point_holds(const char *point, const char *path)
{
	gsize n = strlen(point);

	if (strcmp(point, "/") == 0)
		return path[0] == '/';
	return strncmp(point, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

const ProcMount *
watch_mounts_find(const GArray *mounts, const char *path)
{
	const ProcMount *best = NULL;

	g_return_val_if_fail(mounts != NULL && path != NULL, NULL);
	for (guint i = 0; i < mounts->len; i++) {
		const ProcMount *m = &g_array_index(mounts, ProcMount, i);

		if (point_holds(m->mountpoint, path) &&
		    (!best || strlen(m->mountpoint) >= strlen(best->mountpoint)))
			best = m;
	}
	return best;
}

gboolean
watch_mounts_under_remote(const GArray *mounts, const ProcMount *mount)
{
	/* Parent ids form a tree; a bound on the walk guards against a cycle in bad input. */
	for (guint steps = 0; mount && steps <= mounts->len; steps++) {
		const ProcMount *parent = NULL;

		if (watch_fs_is_remote(mount->fstype))
			return TRUE;
		for (guint i = 0; i < mounts->len && !parent; i++) {
			const ProcMount *m = &g_array_index(mounts, ProcMount, i);

			if (m->id == mount->parent && m != mount)
				parent = m;
		}
		mount = parent;
	}
	return FALSE;
}

guint
watch_close_event_fds(const guint8 *buf, gsize len, gsize from, int keep)
{
	guint closed = 0;

	g_return_val_if_fail(buf != NULL || len == 0, 0);
	/* fd is the fifth field, at byte 16, in every metadata version so far. */
	for (gsize at = from; at + EVENT_METADATA_LEN <= len;
	     at += EVENT_METADATA_LEN) {
		gint32 fd;
		int flags;

		memcpy(&fd, buf + at + 16, sizeof(fd));
		if (fd < 0 || fd == keep)
			continue;
		flags = fcntl(fd, F_GETFL);
		if (flags < 0 || (flags & O_ACCMODE) != O_RDONLY || !(flags & O_NONBLOCK))
			continue;
		(void)close(fd);
		closed++;
	}
	return closed;
}

/*
 * The layout of an event, from <linux/fanotify.h>, read with memcpy so
 * that a buffer of any alignment (a test's) parses alike: event_len u32
 * at 0, vers u8 at 4, metadata_len u16 at 6, mask u64 at 8, fd s32 at 16,
 * pid s32 at 20; then info records, each a header (info_type u8, pad u8,
 * len u16) and, for FAN_EVENT_INFO_TYPE_FID (1), fsid (two s32) and a
 * struct file_handle (handle_bytes u32, handle_type s32, f_handle[]).
 */
#define METADATA_VERSION 3
#define INFO_HEADER_LEN 4
#define INFO_TYPE_FID 1
#define FID_RECORD_MIN (INFO_HEADER_LEN + 8 + 8)

guint
watch_parse_fid_events(const guint8 *buf, gsize len, GArray *events, WatchFidParse *parse)
{
	guint count = 0;
	gsize at = 0;

	g_return_val_if_fail(buf != NULL || len == 0, 0);
	g_return_val_if_fail(events != NULL && parse != NULL, 0);

	memset(parse, 0, sizeof(*parse));
	while (at < len) {
		const guint8 *p = buf + at;
		guint32 event_len;
		guint16 meta_len;
		WatchFidEvent ev = { 0 };

		if (len - at < EVENT_METADATA_LEN)
			break;
		memcpy(&event_len, p, 4);
		memcpy(&meta_len, p + 6, 2);
		if (p[4] != METADATA_VERSION || event_len < EVENT_METADATA_LEN ||
		    event_len > len - at || meta_len < EVENT_METADATA_LEN || meta_len > event_len)
			break;
		memcpy(&ev.mask, p + 8, 8);
		memcpy(&ev.fd, p + 16, 4);
		memcpy(&ev.pid, p + 20, 4);

		/* The records fill the event from its metadata to its end. */
		for (gsize r = meta_len; r < event_len;) {
			guint16 rec_len;
			guint32 handle_bytes;

			if (event_len - r < INFO_HEADER_LEN) {
				parse->bad_records++;
				break;
			}
			memcpy(&rec_len, p + r + 2, 2);
			if (rec_len < INFO_HEADER_LEN || rec_len > event_len - r) {
				parse->bad_records++;
				break;
			}
			if (p[r] != INFO_TYPE_FID) {
				parse->unknown_records++;
			} else if (!ev.has_fid) {
				if (rec_len < FID_RECORD_MIN) {
					parse->bad_records++;
				} else {
					memcpy(&handle_bytes, p + r + 12, 4);
					if (handle_bytes > WATCH_HANDLE_MAX ||
					    handle_bytes > (gsize)rec_len - FID_RECORD_MIN) {
						parse->bad_records++;
					} else {
						ev.has_fid = TRUE;
						memcpy(ev.fsid, p + r + 4, 8);
						memcpy(&ev.handle_type, p + r + 16, 4);
						ev.handle_bytes = handle_bytes;
						ev.handle_at = at + r + FID_RECORD_MIN;
					}
				}
			}
			r += rec_len;
		}
		g_array_append_val(events, ev);
		count++;
		at += event_len;
	}
	parse->stopped_at = at;
	parse->malformed = at < len;
	return count;
}

/* Descriptors the daemon keeps for its other work (log, state, readahead workers, /proc). */
#define FD_RESERVE 64

gsize
watch_events_per_read(gsize limit, gsize open_fds, gsize most)
{
	gsize free_fds = limit > open_fds ? limit - open_fds : 0;
	gsize n = free_fds > 2 * FD_RESERVE ? free_fds - FD_RESERVE : free_fds / 2;

	return MIN(n, most);
}

/* ---- resident ranges ---------------------------------------------------- */

/* Runs of resident pages, gaps up to `gap` pages bridged: Intervals of page numbers. */
static guint
collect_runs(const guint8 *vec, gsize n, gsize gap, GArray *runs)
{
	g_array_set_size(runs, 0);
	for (gsize i = 0; i < n;) {
		gsize start;

		if (!(vec[i] & 1)) {
			i++;
			continue;
		}
		start = i;
		while (i < n && (vec[i] & 1))
			i++;
		interval_append(runs, (Interval){ start, i }, gap);
	}
	return runs->len;
}

guint64
watch_spans_from_mincore(const guint8 *vec, gsize n, guint64 page_bytes, guint64 file_size,
			 gsize gap, guint max_spans, GArray *spans)
{
	g_autoptr(GArray) runs = interval_array_new();
	guint64 bytes = 0;

	g_return_val_if_fail(spans != NULL, 0);
	g_return_val_if_fail(page_bytes > 0, 0);
	if (!vec || n == 0)
		return 0;

	/*
	 * Many small ranges cost a request and a map each; past max_spans,
	 * bridging wider gaps reads a little more and keeps the model small.
	 */
	while (collect_runs(vec, n, gap, runs) > max_spans && max_spans > 0)
		gap = gap ? gap * 2 : 1;

	for (guint i = 0; i < runs->len; i++) {
		const Interval *run = &g_array_index(runs, Interval, i);
		guint64 start = run->start * page_bytes;
		guint64 end = run->end * page_bytes;
		WatchSpan span;

		end = MIN(end, file_size);
		if (start >= end)
			continue;
		span.offset = start;
		span.length = end - start;
		g_array_append_val(spans, span);
		bytes += span.length;
	}
	return bytes;
}

/* ---- the page cache ------------------------------------------------------- */

/*
 * Residency comes from the pagecache module (cachestat, else mincore where
 * it tells the truth), shared with the reader that skips cached pages. The
 * watcher probes a few files per start and keeps no Pagecache memo: NULL
 * asks the kernel afresh each time.
 */

/* One map of a learned set, copied for the probe. */
typedef struct MeasureItem {
	char *path;
	guint64 offset;
	guint64 length;
	guint64 dev;          /* of the learned identity, 0: unknown */
} MeasureItem;

struct WatchMeasureSet {
	GArray *items;        /* MeasureItem */
	WatchMeasure m;
};

static void
measure_item_clear(gpointer data)
{
	g_free(((MeasureItem *)data)->path);
}

WatchMeasureSet *
watch_measure_set_new(const Exe *exe, guint64 prefetch_seq, WatchSkipFunc skip, gpointer data)
{
	WatchMeasureSet *set;

	g_return_val_if_fail(exe != NULL, NULL);

	set = g_new0(WatchMeasureSet, 1);
	set->items = g_array_sized_new(FALSE, FALSE, sizeof(MeasureItem), exe->exemaps->len);
	g_array_set_clear_func(set->items, measure_item_clear);
	for (guint i = 0; i < exe->exemaps->len; i++) {
		const Map *map = g_array_index(exe->exemaps, ExeMap, i).map;
		MeasureItem item = { g_strdup(map->path), map->offset, map->length,
				     map->file.dev };

		set->m.bytes += map->length;
		if (prefetch_seq != 0 && map->cycle.prefetch_seq == prefetch_seq)
			set->m.prefetched += map->length;
		if (skip && skip(map->path, &item.dev, data)) {
			g_free(item.path);
			continue;
		}
		g_array_append_val(set->items, item);
	}
	return set;
}

void
watch_measure_set_free(WatchMeasureSet *set)
{
	if (!set)
		return;
	g_array_unref(set->items);
	g_free(set);
}

guint64
watch_measure_set_dev(const WatchMeasureSet *set)
{
	g_return_val_if_fail(set != NULL, 0);

	return set->items->len > 0 ? g_array_index(set->items, MeasureItem, 0).dev : 0;
}

WatchMeasure
watch_measure_set_result(const WatchMeasureSet *set)
{
	WatchMeasure none = { 0 };

	g_return_val_if_fail(set != NULL, none);

	return set->m;
}

void
watch_measure_set_run(WatchMeasureSet *set, WatchEnterFunc enter, gpointer data)
{
	const char *open_path = NULL;
	gboolean have_dev = FALSE, entered = TRUE;
	guint64 dev = 0;
	struct stat st;
	int fd = -1;

	g_return_if_fail(set != NULL);

	for (guint i = 0; i < set->items->len; i++) {
		const MeasureItem *item = &g_array_index(set->items, MeasureItem, i);
		guint64 in_cache = 0, length;

		if (enter && (!have_dev || item->dev != dev)) {
			have_dev = TRUE;
			dev = item->dev;
			entered = enter(dev, data);
		}
		if (!entered)
			continue;
		/* An exe's maps of one file are usually adjacent: open it once. */
		if (!open_path || strcmp(open_path, item->path) != 0) {
			if (fd >= 0)
				(void)close(fd);
			open_path = item->path;
			(void)pagecache_open(item->path, &fd, &st, NULL);
		}
		/*
		 * A vanished or shrunk file cannot be resident beyond its end:
		 * probed, and not resident. A file whose residency cannot be
		 * told is not probed at all.
		 */
		if (fd < 0 || item->offset >= (guint64)st.st_size) {
			set->m.probed += item->length;
			continue;
		}
		length = MIN(item->length, (guint64)st.st_size - item->offset);
		if (pagecache_resident_bytes(NULL, fd, item->path, &st, item->offset, length,
					     &in_cache)) {
			set->m.probed += item->length;
			set->m.resident += in_cache;
		}
	}
	if (fd >= 0)
		(void)close(fd);
}

WatchMeasure
watch_measure_exe(const Exe *exe, guint64 prefetch_seq, WatchProbe probe)
{
	g_autoptr(WatchMeasureSet) set = NULL;
	WatchMeasure none = { 0 };

	g_return_val_if_fail(exe != NULL, none);

	set = watch_measure_set_new(exe, prefetch_seq, NULL, NULL);
	if (probe == WATCH_PROBE_CACHE)
		watch_measure_set_run(set, NULL, NULL);
	return set->m;
}

/* ---- learned read sets ------------------------------------------------------ */

static void
watch_range_clear(gpointer data)
{
	g_clear_pointer(&((WatchRange *)data)->path, g_free);
}

GArray *
watch_ranges_new(void)
{
	GArray *ranges = g_array_new(FALSE, TRUE, sizeof(WatchRange));

	g_array_set_clear_func(ranges, watch_range_clear);
	return ranges;
}

#ifdef HAVE_SYS_FANOTIFY_H  /* used only by the event reader (learn_job_run) */
/*
 * Appends the resident ranges of path; a small file with nothing
 * resident, whole (see
 * EVICTED_WHOLE_MAX). A file whose residency the kernel will not tell (see
 * pagecache_resident_pages) is left out: all that is known is that it
 * was opened, not what of it was read.
 */
static void
learn_file(const WatchFile *file, GArray *ranges)
{
	const char *path = file->path;
	MapFileId id;
	g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(WatchSpan));
	g_autofree guint8 *vec = NULL;
	guint64 page = pagecache_page_size(), size;
	struct stat st;
	gsize pages;
	gboolean known;
	int fd;

	if (pagecache_open(path, &fd, &st, NULL) != PAGECACHE_OPEN_OK)
		return;
	/*
	 * The path must still name the file the program opened (a package
	 * upgrade replaces files under their names): its ranges are learned
	 * with that identity, and the reader reads nothing else under the
	 * name.
	 */
	if (file->id.ino != 0 &&
	    ((guint64)st.st_dev != file->id.dev || (guint64)st.st_ino != file->id.ino)) {
		g_debug("%s: another file than the one opened at start-up, not learned", path);
		(void)close(fd);
		return;
	}
	id.dev = (guint64)st.st_dev;
	id.ino = (guint64)st.st_ino;
	id.size = (guint64)MAX(st.st_size, 0);
	id.mtime = (gint64)st.st_mtim.tv_sec * G_GINT64_CONSTANT(1000000000) + st.st_mtim.tv_nsec;
	size = MIN((guint64)st.st_size, MAX_EXAMINED);
	if (size == 0) {
		(void)close(fd);
		return;
	}
	pages = (gsize)((size + page - 1) / page);
	vec = g_malloc(pages);
	known = pagecache_resident_vector(NULL, fd, path, &st, 0, pages, vec, NULL);
	(void)close(fd);
	if (!known)
		return;
	(void)watch_spans_from_mincore(vec, pages, page, size, BRIDGE_PAGES,
				       MAX_SPANS_PER_FILE, spans);
	if (spans->len == 0 && size <= EVICTED_WHOLE_MAX) {
		WatchSpan whole = { 0, size };

		g_array_append_val(spans, whole);
	}

	for (guint i = 0; i < spans->len; i++) {
		const WatchSpan *span = &g_array_index(spans, WatchSpan, i);
		WatchRange range;

		range.path = g_strdup(path);
		range.offset = span->offset;
		range.length = span->length;
		range.id = id;
		g_array_append_val(ranges, range);
	}
}
#endif /* HAVE_SYS_FANOTIFY_H */

/* ---- the watcher ------------------------------------------------------------ */

/*
 * A learn job's way back: a job can end after its watcher was freed (the
 * daemon makes a new one on SIGHUP), so it holds this, not the watcher.
 * Only the main thread touches it (submission, done, the pool's drops).
 */
typedef struct WatchSink {
	Watch *watch;             /* NULL once the watcher is gone */
} WatchSink;

/*
 * A file system whose plain opens come by file handle: the handle group
 * names a file by this fsid and a handle, resolved through fd.
 */
typedef struct FidMount {
	guint32 fsid[2];          /* statfs f_fsid, as events carry it */
	int fd;                   /* a directory on a mount of the daemon's that shows the
				   * whole file system (its root is "/"), owned */
} FidMount;

static void
fid_mount_clear(gpointer data)
{
	FidMount *m = data;

	if (m->fd >= 0)
		(void)close(m->fd);
	m->fd = -1;
}

typedef struct NetReader NetReader;  /* the netfs reader (below) */

struct Watch {
	int fd;                   /* the fanotify group, -1 if none */
	guint fd_source;          /* main loop watch of fd, when not paused */
	int fid_fd;               /* the file-handle group (plain opens), -1 if none */
	guint fid_source;         /* main loop watch of fid_fd, when not paused */
	GArray *fid_mounts;       /* FidMount: the file systems marked in the handle group */
	guint fid_marks;          /* of the current set: file systems whose opens come by handle
				   * (the others' come by descriptor) */
	guint8 *fid_buffer;       /* EVENT_BUFFER bytes of the handle group, read, not handled */
	gsize fid_len;
	GArray *fid_events;       /* WatchFidEvent, scratch for one batch */
	guint pause_source;       /* the pause after a wake-up (see on_resume) */
	gboolean broken;          /* events of an unknown format: stopped */
	guint timer;              /* window expiry, while the tracker is busy */
	WatchTracker *tracker;
	WatchCallbacks callbacks;
	gpointer user_data;
	pid_t self;
	gboolean reads;           /* open events are watched */
	gboolean netfs;           /* network and FUSE file systems may be watched */
	char **lists[2];          /* exeprefix and mapprefix, owned copies */
	int mounts_fd;            /* /proc/self/mountinfo, polled for changes; -1 if none */
	guint mounts_source;      /* main loop watch of mounts_fd */
	guint remark_source;      /* a pending remark (changes come in bursts) */
	GArray *remote_devs;      /* dev_t of the network/FUSE file systems mounted */
	guint fs_marks;           /* of the current set: file systems marked whole */
	guint mount_marks;        /* ... and those marked as one mount only */
	guint remote_skipped;     /* network/FUSE file systems the prefixes cover, not marked */
	guint over_cap;           /* file systems not marked: MAX_MARKS were */
	GArray *marked_devs;      /* dev_t of the file systems marked now */
	char *description;
	guint8 *buffer;           /* EVENT_BUFFER bytes, aligned for the metadata */
	gsize per_read;           /* events a descriptor read may take, as last counted */
	gint64 per_read_at;       /* when (monotonic us), 0: count again */
	WatchStats stats;
	gboolean overflow_logged;
	MountIds *mounts;         /* the mounts of event files, by id (see event_path) */
	WatchExecNames *exec_names; /* executed files named and classified lately */
	WatchHandleNames *handle_names; /* files opened by handle, named lately */
	FsJobPool *fsjobs;        /* learns finished windows on workers (borrowed), or NULL */
	WatchSink *sink;          /* what those jobs' results find: this watcher, while it lives */
	struct NetReader *net;    /* the netfs group and its thread (netfs), or NULL */
	struct NetReader *net_retired; /* a reader let go (netfs turned off) whose thread may
					  still wait; a later watcher revives it, or NULL */
	guint net_source;         /* main loop watch of the reader's results */
	GPtrArray *net_last;      /* the mount points last handed to the reader to mark */
	guint64 net_events_seen;  /* of the reader's counts, those already in stats */
	guint64 net_nofd_seen;
	guint64 net_errors_seen;
};

static gint64 net_busy_us(const Watch *watch);
static gboolean net_marking_pending(const Watch *watch);

const WatchStats *
watch_get_stats(const Watch *watch)
{
	g_return_val_if_fail(watch != NULL, NULL);

	/* Whether the reader is stuck is read when asked: a stuck thread tells nothing. */
	((Watch *)watch)->stats.net_stuck = net_busy_us(watch) > FSJOB_DEADLINE_US;

	return &watch->stats;
}

const char *
watch_describe(const Watch *watch)
{
	Watch *w = (Watch *)watch;  /* the text is a cache the watcher owns */
	guint marked = watch ? watch->fs_marks + watch->mount_marks : 0;
	g_autofree char *remote = NULL;
	g_autofree char *opens = NULL;
	g_autofree char *net = NULL;

	g_return_val_if_fail(watch != NULL, NULL);

	if (watch->remote_skipped > 0 || watch->over_cap > 0)
		remote = g_strdup_printf("; %u network/FUSE file system%s not watched (netfs = false), "
					 "%u more over the cap of %u",
					 watch->remote_skipped, watch->remote_skipped == 1 ? "" : "s",
					 watch->over_cap, MAX_MARKS);
	/* Where the opens come from: the cost of the two kinds differs tenfold. */
	if (watch->reads && watch->fid_fd >= 0)
		opens = g_strdup_printf("; opens by file handle on %u, by descriptor on %u",
					watch->fid_marks, marked - MIN(marked, watch->fid_marks));
	else if (watch->reads)
		opens = g_strdup("; opens by descriptor (no file-handle group)");
	if (watch->net) {
		gint64 busy = net_busy_us(watch);
		g_autofree char *stuck = NULL;

		if (busy > FSJOB_DEADLINE_US)
			stuck = g_strdup_printf(", netfs reader STUCK (%.1f s in one mark or read, "
						"not waited for%s)", (double)busy / G_USEC_PER_SEC,
						net_marking_pending(watch) ?
						"; re-marking deferred until it returns" : "");
		net = g_strdup_printf("; network/FUSE file systems by their own reader: %u of %u "
				      "marked, %" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT
				      " dropped (queue full)%s",
				      watch->stats.net_marked, watch->net_last ? watch->net_last->len : 0,
				      watch->stats.net_events, watch->stats.net_dropped,
				      stuck ? stuck : "");
	}
	g_free(w->description);
	w->description = g_strdup_printf(
		"%s %u file system%s (%u whole, %u mount only%s), watching %s%s; marked %" G_GUINT64_FORMAT
		" time%s (%" G_GUINT64_FORMAT " flushed); lost: %" G_GUINT64_FORMAT
		" events without a descriptor, %" G_GUINT64_FORMAT
		" queue overflows, %" G_GUINT64_FORMAT " failed reads, %" G_GUINT64_FORMAT
		" handles not resolved; %" G_GUINT64_FORMAT
		" events of network/FUSE files dropped; %" G_GUINT64_FORMAT
		" reads cut to the free descriptors%s",
		watch->broken ? "fanotify STOPPED (events of an unknown format), was on" : "fanotify on",
		marked, marked == 1 ? "" : "s", watch->fs_marks, watch->mount_marks, opens ? opens : "",
		watch->reads ? "starts and start-up opens" : "starts", remote ? remote : "",
		watch->stats.remarks + 1, watch->stats.remarks == 0 ? "" : "s", watch->stats.flushes,
		watch->stats.nofd, watch->stats.overflows, watch->stats.read_errors,
		watch->stats.handle_errors, watch->stats.remote, watch->stats.short_reads,
		net ? net : "");
	return watch->description;
}

#ifdef HAVE_SYS_FANOTIFY_H
/* From here to the #else: what reading events needs, built only with fanotify. */

static gboolean
pid_alive(pid_t pid, gpointer user_data)
{
	(void)user_data;
	return kill(pid, 0) == 0 || errno == EPERM;
}

static gboolean on_timer(gpointer user_data);

static void
ensure_timer(Watch *watch)
{
	if (!watch->timer && watch_tracker_busy(watch->tracker))
		watch->timer = g_timeout_add_seconds(1, on_timer, watch);
}

/*
 * A finished window's files, learned on an fsjob worker: each is opened
 * and its residency asked, and a file on a mount that stopped answering
 * would hold the main thread as long as the mount hangs.
 */
typedef struct LearnJob {
	char *exe;                /* owned */
	GPtrArray *files;         /* WatchFile *, a reference to the window's */
	GArray *ranges;           /* WatchRange: the result */
	FsJobPool *pool;          /* for its device refusals (the pool outlives its jobs' runs) */
} LearnJob;

static void
learn_job_free(gpointer data)
{
	LearnJob *job = data;

	g_free(job->exe);
	g_ptr_array_unref(job->files);
	g_array_unref(job->ranges);
	g_free(job);
}

static void
learn_job_run(FsJobCtx *ctx, gpointer data)
{
	LearnJob *job = data;

	for (guint i = 0; i < job->files->len; i++) {
		const WatchFile *file = g_ptr_array_index(job->files, i);

		/* A device that already missed a deadline is not asked again. */
		if (file->id.dev != 0 && fsjob_device_refused(job->pool, file->id.dev))
			continue;
		fsjob_ctx_set_dev(ctx, file->id.dev);
		learn_file(file, job->ranges);
	}
}

/* A finished window's ranges go to the model; what it taught sets the program's pace. */
static void
window_learned(Watch *watch, const char *exe, GArray *ranges)
{
	gboolean taught = FALSE;

	if (ranges->len > 0) {
		watch->stats.learned++;
		taught = !watch->callbacks.learned ||
			 watch->callbacks.learned(exe, ranges, watch->user_data);
	}
	if (!taught)
		watch->stats.untaught++;
	watch_tracker_learned(watch->tracker, exe, taught);
}

static void
learn_job_done(FsJobStatus status, gpointer data, gpointer user_data)
{
	LearnJob *job = data;
	WatchSink *sink = user_data;
	Watch *watch = sink->watch;

	/* Abandoned: the fsjob stats count it; the window is not learned. */
	if (status != FSJOB_DONE || !watch)
		return;
	window_learned(watch, job->exe, job->ranges);
}

static void
sink_release(gpointer data)
{
	g_rc_box_release(data);
}

/* The device a window's job names first: that of its first file known. */
static guint64
window_dev(const WatchWindow *window)
{
	for (guint i = 0; i < window->files->len; i++) {
		const WatchFile *file = g_ptr_array_index(window->files, i);

		if (file->id.dev != 0)
			return file->id.dev;
	}
	return 0;
}

static void
finish_windows(Watch *watch)
{
	g_autoptr(GPtrArray) done = NULL;
	gint64 cpu = cputime_thread_us();

	done = watch_tracker_expire(watch->tracker, g_get_monotonic_time(), pid_alive, NULL);
	for (guint i = 0; i < done->len; i++) {
		const WatchWindow *window = g_ptr_array_index(done, i);
		g_autoptr(GArray) ranges = NULL;

		/* Files the model would drop unseen are not opened and probed. */
		if (watch->callbacks.filter &&
		    (!watch->callbacks.filter(window->exe, window->files, watch->user_data) ||
		     window->files->len == 0)) {
			ranges = watch_ranges_new();
			window_learned(watch, window->exe, ranges);
			continue;
		}
		if (watch->fsjobs) {
			LearnJob *job = g_new0(LearnJob, 1);

			job->exe = g_strdup(window->exe);
			job->files = g_ptr_array_ref(window->files);
			job->ranges = watch_ranges_new();
			job->pool = watch->fsjobs;
			/* Refused (a hung device, the queue full): not learned, counted by the pool. */
			(void)fsjob_submit(watch->fsjobs, window_dev(window), learn_job_run, job,
					   learn_job_free, learn_job_done,
					   g_rc_box_acquire(watch->sink), sink_release);
			continue;
		}
		ranges = watch_ranges_new();

		/*
		 * No byte cap here: the window also holds the libraries the
		 * program opened to map them, which the spy subtracts before it
		 * applies maxreadkb to what is new. Capping here first let a
		 * program's mapped files use up its read budget. The work is
		 * bounded by maxreadfiles files of at most MAX_EXAMINED bytes.
		 */
		for (guint j = 0; j < window->files->len; j++)
			learn_file(g_ptr_array_index(window->files, j), ranges);
		window_learned(watch, window->exe, ranges);
	}
	watch->stats.cpu_window_us += (guint64)MAX(cputime_thread_us() - cpu, (gint64)0);
}

static gboolean
on_timer(gpointer user_data)
{
	Watch *watch = user_data;

	finish_windows(watch);
	if (watch_tracker_busy(watch->tracker))
		return G_SOURCE_CONTINUE;
	watch->timer = 0;
	return G_SOURCE_REMOVE;
}

/* ---- the mount table ---- */

/*
 * The current mount table (ProcMount), from the descriptor kept open to
 * poll it; empty if it cannot be read (nothing is marked then).
 */
static GArray *
read_mounts(Watch *watch)
{
	GArray *mounts = g_array_new(FALSE, FALSE, sizeof(ProcMount));
	g_autoptr(GError) error = NULL;

	g_array_set_clear_func(mounts, proc_mount_clear);
	/* procfs: a read never waits on any file system. */
	if (watch->mounts_fd >= 0 && !proc_read_mountinfo_fd(watch->mounts_fd, mounts, &error))
		g_warning("fanotify: cannot read the mount table, nothing marked: %s",
			  error->message);
	return mounts;
}

static gboolean
dev_is_remote(const Watch *watch, dev_t dev)
{
	for (guint i = 0; i < watch->remote_devs->len; i++)
		if (g_array_index(watch->remote_devs, dev_t, i) == dev)
			return TRUE;
	return FALSE;
}

static void
add_dev_once(GArray *devs, dev_t dev)
{
	for (guint i = 0; i < devs->len; i++)
		if (g_array_index(devs, dev_t, i) == dev)
			return;
	g_array_append_val(devs, dev);
}

/* What an event's descriptor tells of its file. */
typedef struct EventFile {
	MapFileId id;         /* st_dev, st_ino, st_size, st_mtim (the inode and
			       * time left 0 if the kernel did not tell them) */
	gint64 ctime;         /* ns, st_ctim (0 if the kernel did not tell it) */
	guint mnt_id;         /* the id of the mount it was opened through */
	gboolean has_mnt_id;  /* the kernel told it (STATX_MNT_ID: Linux 5.8) */
} EventFile;

/*
 * What the information about an event's file takes: statx on the
 * descriptor, told not to ask the file's server (AT_STATX_DONT_SYNC): a
 * FUSE or NFS file answers from its cached attributes, so a server that
 * stopped answering cannot stall the caller. FALSE if not a regular file
 * or if it lies on a network/FUSE file system that is not to be watched
 * (counted).
 */
/*
 * statx on an event's descriptor, told not to ask the file's server
 * (AT_STATX_DONT_SYNC): fills *file; FALSE if the call failed or the file
 * is not a regular one. *dev gets its device. No watcher state: the
 * netfs reader calls it on its own thread.
 */
static gboolean
stat_event_fd(int fd, EventFile *file, dev_t *dev)
{
	unsigned int mask = STATX_TYPE | STATX_SIZE | STATX_INO | STATX_MTIME | STATX_CTIME;
	struct statx stx;

#ifdef STATX_MNT_ID
	mask |= STATX_MNT_ID;
#endif
	memset(file, 0, sizeof(*file));
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, mask, &stx) != 0)
		return FALSE;
	*dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	if (!S_ISREG(stx.stx_mode))
		return FALSE;
	/* What fstat would say, for nothing: the identity the read set is learned with. */
	file->id.size = stx.stx_size;
	if ((stx.stx_mask & (STATX_INO | STATX_MTIME)) == (STATX_INO | STATX_MTIME)) {
		file->id.dev = (guint64)*dev;
		file->id.ino = stx.stx_ino;
		file->id.mtime = stx.stx_mtime.tv_sec * G_GINT64_CONSTANT(1000000000) +
				 stx.stx_mtime.tv_nsec;
	}
	if (stx.stx_mask & STATX_CTIME)
		file->ctime = stx.stx_ctime.tv_sec * G_GINT64_CONSTANT(1000000000) +
			      stx.stx_ctime.tv_nsec;
#ifdef STATX_MNT_ID
	if (stx.stx_mask & STATX_MNT_ID) {
		file->mnt_id = (guint)stx.stx_mnt_id;
		file->has_mnt_id = TRUE;
	}
#endif
	return TRUE;
}

static gboolean
event_file(Watch *watch, int fd, EventFile *file)
{
	dev_t dev = 0;
	gboolean regular = stat_event_fd(fd, file, &dev);

	if (dev != 0 && !watch->netfs && dev_is_remote(watch, dev)) {
		watch->stats.remote++;
		return FALSE;
	}
	return regular;
}

/* Classifies an executed file from its head; *asks_interp if it names an interpreter. */
static WatchImageKind
examine_image(int fd, gboolean *asks_interp)
{
	guint8 head[IMAGE_HEAD];
	guint64 off, len = 0;
	ssize_t n;
	WatchImageKind kind;

	/*
	 * The interpreter's name is not needed, only whether there is one
	 * (see watch_tracker_exec): the file is read through the event's
	 * descriptor, and no path is looked up.
	 */
	*asks_interp = FALSE;
	n = pread(fd, head, sizeof(head), 0);
	if (n <= 0)
		return WATCH_IMAGE_OTHER;
	kind = watch_parse_image(head, (gsize)n, &off, &len);
	*asks_interp = kind == WATCH_IMAGE_ELF && len > 0;
	return kind;
}

/*
 * The path here of an event's file, or NULL if none reaches it: the path
 * /proc/self/fd gives for the descriptor, translated when the file lies
 * on a mount of another namespace (see MountIds in mountns.h). Events of
 * files no path here reaches are counted (foreign) and not used: the
 * scan learns those programs from their maps, by identity. A kernel
 * without STATX_MNT_ID (before 5.8) cannot tell: the path is used as
 * given.
 */
static char *
event_path_of(Watch *watch, pid_t pid, char *given, const EventFile *file, gint64 now)
{
	g_autofree char *raw = given;
	char *host = NULL;
	MountNsDrop why;

	if (!raw || !file->has_mnt_id)
		return g_steal_pointer(&raw);
	switch (mountids_event_path(watch->mounts, pid, file->mnt_id, raw, now, &host, &why)) {
	case MOUNTNS_SAME:
		return g_steal_pointer(&raw);
	case MOUNTNS_TRANSLATED:
		watch->stats.translated++;
		return host;
	case MOUNTNS_DROPPED:
	default:
		break;
	}
	watch->stats.foreign++;
	return NULL;
}

static char *
event_path(Watch *watch, pid_t pid, int fd, const EventFile *file, gint64 now)
{
	return event_path_of(watch, pid, proc_fd_path(fd), file, now);
}

/* An exec whose file was examined: raw is /proc/self/fd's name of it (taken). */
static void
handle_exec_of(Watch *watch, pid_t pid, char *raw, const EventFile *file, WatchImageKind kind,
	       gboolean asks_interp, gint64 now)
{
	g_autofree char *host = event_path_of(watch, pid, raw, file, now);
	g_autofree char *path = NULL;
	WatchExecResult result;

	/* The same rules as for /proc/PID/exe, so both name a program alike. */
	if (!host || !(path = proc_sanitize_exe(host)))
		return;
	result = watch_tracker_exec(watch->tracker, pid, path, file->id.size, kind, asks_interp, now);
	if (result == WATCH_EXEC_WINDOW)
		watch->stats.windows++;
	if (result == WATCH_EXEC_WINDOW || result == WATCH_EXEC_COUNTED) {
		watch->stats.starts++;
		if (watch->callbacks.exec)
			watch->callbacks.exec(path, pid, watch->user_data);
	}
}

static void
handle_exec(Watch *watch, pid_t pid, int fd, gint64 now)
{
	gboolean asks_interp;
	WatchImageKind kind;
	EventFile file;

	WatchExecKey key;
	const WatchExecName *known;
	char *raw;

	watch->stats.execs++;
	if (!event_file(watch, fd, &file))
		return;
	/* A file executed a moment ago: named and classified then (see WatchExecNames). */
	key = (WatchExecKey){ .id = file.id, .ctime = file.ctime, .mnt_id = file.mnt_id };
	if (file.ctime == 0 || !file.has_mnt_id)
		key.id.ino = 0;
	known = watch_exec_names_lookup(watch->exec_names, &key, now);
	if (known) {
		watch->stats.exec_names_reused++;
		handle_exec_of(watch, pid, g_strdup(known->raw), &file, known->kind,
			       known->asks_interp, now);
		return;
	}
	kind = examine_image(fd, &asks_interp);
	raw = proc_fd_path(fd);
	if (raw)
		watch_exec_names_store(watch->exec_names, &key, raw, kind, asks_interp, now);
	handle_exec_of(watch, pid, raw, &file, kind, asks_interp, now);
}

/* An open in pid's window of a file named path here (taken), of identity file. */
static void
record_open(Watch *watch, pid_t pid, char *path, const EventFile *file, gint64 now)
{
	g_autofree char *name = path;

	/* A file deleted since it was opened cannot be read ahead later. */
	if (!name || name[0] != '/' || g_str_has_suffix(name, " (deleted)"))
		return;
	if (watch_tracker_open(watch->tracker, pid, name, &file->id, now))
		watch->stats.recorded++;
}

/* An open by pid, in its window, of the file of fd, an event's descriptor. */
static void
handle_open(Watch *watch, pid_t pid, int fd, gint64 now)
{
	EventFile file;

	if (!event_file(watch, fd, &file))
		return;
	record_open(watch, pid, event_path(watch, pid, fd, &file, now), &file, now);
}

/* ---- the netfs reader ------------------------------------------------------ */

/*
 * With netfs, network and FUSE file systems are marked in a third group,
 * by descriptor, that only one thread of its own marks and reads: the
 * kernel opens each event's file in the reader's read() (a FUSE open, an
 * NFS open), and marking asks the file system for its fsid (statfs);
 * either waits as long as a dead server does. The thread examines each
 * event's file through its descriptor (statx without asking the server,
 * /proc/self/fd, the head of an executed file), closes it, and queues
 * plain results; the main loop takes them when woken through a pipe and
 * treats them as the other groups' events. The main thread never waits
 * on the thread: it hands it the mount points to mark (from the mount
 * table, never looked up), takes what is queued, and counts the thread
 * stuck once it has been inside one mark or read for longer than
 * FSJOB_DEADLINE_US. A stuck thread is never joined, not even at exit:
 * the watcher lets go of it (it ends when its wait does, or with the
 * process), and the last of the two to let go closes the descriptors.
 */

/* Events one read of the netfs group takes: each brings a descriptor (FD_RESERVE covers them). */
#define NET_BATCH 32
/* Results queued for the main loop at most; more are dropped (counted). */
#define NET_QUEUE_MAX 4096

/* One event of the netfs group, examined on its thread. */
typedef struct NetEvent {
	pid_t pid;
	gboolean exec;            /* FAN_OPEN_EXEC, else a plain open */
	char *raw;                /* /proc/self/fd's name of its file, owned; NULL if none */
	EventFile file;
	WatchImageKind kind;      /* of an executed file */
	gboolean asks_interp;
} NetEvent;

static void
net_event_clear(gpointer data)
{
	NetEvent *ev = data;

	g_free(ev->raw);
	ev->raw = NULL;
}

/* What the watcher and the reader thread share; refcounted (g_atomic_rc_box). */
struct NetReader {
	int fd;                   /* the group; closed by the last to let go */
	int wake[2];              /* a pipe: the thread tells the main loop results wait */
	int kick[2];              /* a pipe: the main loop tells the thread to look (marks, stop) */
	pid_t self;
	gint64 busy_since;        /* atomic: monotonic us the thread entered a mark or read, 0 idle */
	GMutex lock;              /* guards the rest */
	guint64 mask;             /* what is marked: FAN_OPEN_EXEC, and FAN_OPEN with reads */
	gboolean stop;            /* no watcher wants it: end */
	gboolean exited;          /* the thread saw stop and ended: it cannot be revived */
	GPtrArray *want;          /* mount points to mark now (all of them), or NULL */
	GArray *results;          /* NetEvent, at most NET_QUEUE_MAX */
	guint marked;             /* file systems the last marking marked */
	guint64 events;           /* events read */
	guint64 dropped;          /* results dropped: the queue was full */
	guint64 nofd;             /* events whose descriptor the kernel could not make */
	guint64 read_errors;
};

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		(void)close(*fd);
	*fd = -1;
}

static void
net_reader_clear(gpointer data)
{
	NetReader *r = data;

	close_fd(&r->fd);
	close_fd(&r->wake[0]);
	close_fd(&r->wake[1]);
	close_fd(&r->kick[0]);
	close_fd(&r->kick[1]);
	if (r->want)
		g_ptr_array_unref(r->want);
	g_array_unref(r->results);
	g_mutex_clear(&r->lock);
}

static void
net_reader_release(NetReader *r)
{
	g_atomic_rc_box_release_full(r, net_reader_clear);
}

/* A byte down a non-blocking pipe: a full pipe already says so. */
static void
poke(int fd)
{
	const char byte = 0;

	if (write(fd, &byte, 1) < 0 && errno != EAGAIN)
		g_debug("netfs reader: cannot wake the other side: %s", g_strerror(errno));
}

static void
drain(int fd)
{
	char bytes[64];

	while (read(fd, bytes, sizeof(bytes)) > 0)
		;
}

/* On the thread: marks the mount points for mask, after flushing the old marks; returns how many took. */
static guint
net_mark(NetReader *r, GPtrArray *dirs, guint64 mask)
{
	guint marked = 0;

	(void)fanotify_mark(r->fd, FAN_MARK_FLUSH | FAN_MARK_FILESYSTEM, 0, AT_FDCWD, "/");
	(void)fanotify_mark(r->fd, FAN_MARK_FLUSH | FAN_MARK_MOUNT, 0, AT_FDCWD, "/");
	for (guint i = 0; i < dirs->len; i++) {
		const char *dir = g_ptr_array_index(dirs, i);

		if (fanotify_mark(r->fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask, AT_FDCWD,
				  dir) == 0 ||
		    fanotify_mark(r->fd, FAN_MARK_ADD | FAN_MARK_MOUNT, mask, AT_FDCWD, dir) == 0)
			marked++;
		else
			g_debug("netfs reader: cannot mark %s: %s", dir, g_strerror(errno));
	}
	return marked;
}

/* On the thread: one read, each event examined and its descriptor closed; results queued. */
static void
net_read(NetReader *r, guint8 *buf)
{
	g_autoptr(GArray) got = g_array_new(FALSE, FALSE, sizeof(NetEvent));
	guint64 nofd = 0, events = 0;
	ssize_t len = read(r->fd, buf, NET_BATCH * EVENT_METADATA_LEN);
	gsize at = 0;

	g_array_set_clear_func(got, net_event_clear);
	if (len < 0) {
		if (errno != EAGAIN && errno != EINTR) {
			g_mutex_lock(&r->lock);
			r->read_errors++;
			g_mutex_unlock(&r->lock);
		}
		return;
	}
	while (at < (gsize)len) {
		const struct fanotify_event_metadata *ev = (const void *)(buf + at);
		NetEvent ne = { 0 };
		dev_t dev;

		if ((gsize)len - at < EVENT_METADATA_LEN || ev->event_len < EVENT_METADATA_LEN ||
		    ev->event_len > (gsize)len - at || ev->vers != FANOTIFY_METADATA_VERSION) {
			/* Unknown layout: the rest is not read, its descriptors closed. */
			(void)watch_close_event_fds(buf, (gsize)len, at, r->fd);
			break;
		}
		at += ev->event_len;
		events++;
		if (ev->mask & FAN_Q_OVERFLOW) {
			if (ev->fd >= 0)
				(void)close(ev->fd);
			continue;
		}
		if (ev->fd < 0) {
			nofd++;
			continue;
		}
		if ((pid_t)ev->pid != r->self && stat_event_fd(ev->fd, &ne.file, &dev)) {
			ne.pid = (pid_t)ev->pid;
			ne.exec = (ev->mask & FAN_OPEN_EXEC) != 0;
			ne.raw = proc_fd_path(ev->fd);
			if (ne.exec)
				ne.kind = examine_image(ev->fd, &ne.asks_interp);
			g_array_append_val(got, ne);
		}
		(void)close(ev->fd);
	}
	g_mutex_lock(&r->lock);
	r->events += events;
	r->nofd += nofd;
	for (guint i = 0; i < got->len; i++) {
		NetEvent *ne = &g_array_index(got, NetEvent, i);

		if (r->results->len >= NET_QUEUE_MAX) {
			r->dropped++;
			continue;
		}
		g_array_append_val(r->results, *ne);
		ne->raw = NULL;  /* moved */
	}
	g_mutex_unlock(&r->lock);
	if (got->len > 0)
		poke(r->wake[1]);
}

static gpointer
net_reader_run(gpointer data)
{
	NetReader *r = data;
	g_autofree guint8 *buf = g_malloc(NET_BATCH * EVENT_METADATA_LEN);

	for (;;) {
		struct pollfd fds[2] = { { .fd = r->fd, .events = POLLIN },
					 { .fd = r->kick[0], .events = POLLIN } };
		g_autoptr(GPtrArray) want = NULL;
		guint64 mask;
		gboolean stop;

		g_mutex_lock(&r->lock);
		stop = r->stop;
		/* Decided under the lock: a watcher reviving the reader (net_reader_adopt) sees it. */
		r->exited = stop;
		want = g_steal_pointer(&r->want);
		mask = r->mask;
		g_mutex_unlock(&r->lock);
		if (stop)
			break;
		if (want) {
			guint marked;

			__atomic_store_n(&r->busy_since, g_get_monotonic_time(), __ATOMIC_RELAXED);
			marked = net_mark(r, want, mask);
			__atomic_store_n(&r->busy_since, 0, __ATOMIC_RELAXED);
			g_mutex_lock(&r->lock);
			r->marked = marked;
			g_mutex_unlock(&r->lock);
			poke(r->wake[1]);
			continue;
		}
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[1].revents)
			drain(r->kick[0]);
		if (fds[0].revents & POLLIN) {
			__atomic_store_n(&r->busy_since, g_get_monotonic_time(), __ATOMIC_RELAXED);
			net_read(r, buf);
			__atomic_store_n(&r->busy_since, 0, __ATOMIC_RELAXED);
		}
	}
	net_reader_release(r);
	return NULL;
}

/* The main loop's side of the reader. */

/* Microseconds the reader has been inside one mark or read, 0 when idle. */
static gint64
net_busy_us(const Watch *watch)
{
	gint64 since;

	if (!watch->net)
		return 0;
	since = __atomic_load_n(&watch->net->busy_since, __ATOMIC_RELAXED);
	return since ? MAX(g_get_monotonic_time() - since, 1) : 0;
}

/* Whether a marking handed to the reader waits for it (it is busy in a mark or read). */
static gboolean
net_marking_pending(const Watch *watch)
{
	gboolean pending;

	if (!watch->net)
		return FALSE;
	g_mutex_lock(&watch->net->lock);
	pending = watch->net->want != NULL;
	g_mutex_unlock(&watch->net->lock);
	return pending;
}

/* Hands the reader the mount points to mark, when they changed (marking flushes first). */
static void
net_hand_marks(Watch *watch, const GPtrArray *dirs)
{
	gboolean same = watch->net_last && watch->net_last->len == dirs->len;
	GPtrArray *want;

	if (!watch->net)
		return;
	for (guint i = 0; same && i < dirs->len; i++)
		same = strcmp(g_ptr_array_index(dirs, i), g_ptr_array_index(watch->net_last, i)) == 0;
	if (same)
		return;
	if (watch->net_last)
		g_ptr_array_unref(watch->net_last);
	watch->net_last = g_ptr_array_new_with_free_func(g_free);
	want = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < dirs->len; i++) {
		g_ptr_array_add(watch->net_last, g_strdup(g_ptr_array_index(dirs, i)));
		g_ptr_array_add(want, g_strdup(g_ptr_array_index(dirs, i)));
	}
	/* A marking still pending (the thread is busy or stuck) is replaced. */
	g_mutex_lock(&watch->net->lock);
	if (watch->net->want)
		g_ptr_array_unref(watch->net->want);
	watch->net->want = want;
	g_mutex_unlock(&watch->net->lock);
	poke(watch->net->kick[1]);
}

static gboolean
on_net_results(gint fd, GIOCondition condition, gpointer user_data)
{
	Watch *watch = user_data;
	NetReader *r = watch->net;
	g_autoptr(GArray) results = g_array_new(FALSE, FALSE, sizeof(NetEvent));
	gint64 now = g_get_monotonic_time();

	(void)condition;
	g_array_set_clear_func(results, net_event_clear);
	drain(fd);
	g_mutex_lock(&r->lock);
	{
		GArray *queued = r->results;

		r->results = results;
		results = queued;
	}
	watch->stats.events += r->events - watch->net_events_seen;
	watch->stats.net_events += r->events - watch->net_events_seen;
	watch->stats.nofd += r->nofd - watch->net_nofd_seen;
	watch->stats.read_errors += r->read_errors - watch->net_errors_seen;
	watch->net_events_seen = r->events;
	watch->net_nofd_seen = r->nofd;
	watch->net_errors_seen = r->read_errors;
	watch->stats.net_dropped = r->dropped;
	watch->stats.net_marked = r->marked;
	g_mutex_unlock(&r->lock);
	for (guint i = 0; i < results->len; i++) {
		NetEvent *ev = &g_array_index(results, NetEvent, i);

		if (ev->exec) {
			watch->stats.execs++;
			handle_exec_of(watch, ev->pid, g_steal_pointer(&ev->raw), &ev->file, ev->kind,
				       ev->asks_interp, now);
		} else {
			watch->stats.opens++;
			if (watch_tracker_wants(watch->tracker, ev->pid))
				record_open(watch, ev->pid,
					    event_path_of(watch, ev->pid, g_steal_pointer(&ev->raw),
							  &ev->file, now),
					    &ev->file, now);
		}
	}
	ensure_timer(watch);
	return G_SOURCE_CONTINUE;
}

/* The watcher takes the reader's results, and its counts from now on. */
static void
net_reader_attach(Watch *watch, NetReader *r)
{
	g_mutex_lock(&r->lock);
	watch->net_events_seen = r->events;
	watch->net_nofd_seen = r->nofd;
	watch->net_errors_seen = r->read_errors;
	watch->stats.net_dropped = r->dropped;
	watch->stats.net_marked = r->marked;
	g_mutex_unlock(&r->lock);
	watch->net = r;
	watch->net_source = g_unix_fd_add(r->wake[0], G_IO_IN, on_net_results, watch);
}

/*
 * A reader of a previous watcher (its reference taken over) whose thread
 * has not ended: asked to go on for this watcher, with this watcher's
 * mask from its next marking; TRUE if it was. A thread stuck on a dead
 * server is thus never doubled by a SIGHUP: the new marking waits in the
 * reader's queue until its wait ends (see net_hand_marks). FALSE (and
 * the reference dropped): its thread ended, a new reader is needed.
 */
static gboolean
net_reader_adopt(Watch *watch, NetReader *r)
{
	gboolean alive;

	g_mutex_lock(&r->lock);
	alive = !r->exited;
	if (alive) {
		r->stop = FALSE;
		r->mask = FAN_OPEN_EXEC | (watch->reads ? FAN_OPEN : 0);
	}
	g_mutex_unlock(&r->lock);
	if (!alive) {
		net_reader_release(r);
		return FALSE;
	}
	net_reader_attach(watch, r);
	/* Results the previous watcher left are this one's. */
	poke(r->wake[1]);
	return TRUE;
}

/* Tells the reader to end (not waited for); the thread keeps its own reference. */
static void
net_reader_tell_stop(NetReader *r)
{
	g_mutex_lock(&r->lock);
	r->stop = TRUE;
	g_mutex_unlock(&r->lock);
	poke(r->kick[1]);
}

/* Tells the reader to end, and drops the caller's reference. */
static void
net_reader_stop(NetReader *r)
{
	net_reader_tell_stop(r);
	net_reader_release(r);
}

/*
 * The netfs group and its thread; FALSE (and no reader: network and FUSE
 * file systems are then not watched) if either cannot be made.
 */
static gboolean
net_reader_start(Watch *watch, unsigned int event_flags)
{
	g_autoptr(GError) error = NULL;
	NetReader *r = g_atomic_rc_box_new0(NetReader);
	GThread *thread;

	r->fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, event_flags | O_NOATIME);
	if (r->fd < 0 && errno == EINVAL)
		r->fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, event_flags);
	r->wake[0] = r->wake[1] = r->kick[0] = r->kick[1] = -1;
	r->self = watch->self;
	r->mask = FAN_OPEN_EXEC | (watch->reads ? FAN_OPEN : 0);
	r->results = g_array_new(FALSE, FALSE, sizeof(NetEvent));
	g_array_set_clear_func(r->results, net_event_clear);
	g_mutex_init(&r->lock);
	if (r->fd < 0 || !g_unix_open_pipe(r->wake, FD_CLOEXEC, &error) ||
	    !g_unix_open_pipe(r->kick, FD_CLOEXEC, &error) ||
	    !g_unix_set_fd_nonblocking(r->wake[0], TRUE, &error) ||
	    !g_unix_set_fd_nonblocking(r->wake[1], TRUE, &error) ||
	    !g_unix_set_fd_nonblocking(r->kick[0], TRUE, &error) ||
	    !g_unix_set_fd_nonblocking(r->kick[1], TRUE, &error)) {
		g_warning("netfs: no reader for network/FUSE file systems, not watched: %s",
			  error ? error->message : g_strerror(errno));
		net_reader_release(r);
		return FALSE;
	}
	thread = g_thread_try_new("preload-netfs", net_reader_run, g_atomic_rc_box_acquire(r),
				  &error);
	if (!thread) {
		g_warning("netfs: no reader for network/FUSE file systems, not watched: %s",
			  error->message);
		net_reader_release(r);  /* the thread's reference */
		net_reader_release(r);
		return FALSE;
	}
	/* Never joined (see NetReader). */
	g_thread_unref(thread);
	net_reader_attach(watch, r);
	return TRUE;
}

/*
 * The watcher's reader (or the one it keeps retired), its reference
 * passed to the caller; NULL if none. Its results stay queued for the
 * next watcher.
 */
static NetReader *
net_reader_detach(Watch *watch)
{
	NetReader *r = watch->net ? watch->net : watch->net_retired;

	if (watch->net_source)
		g_source_remove(watch->net_source);
	watch->net_source = 0;
	if (watch->net && watch->net_retired)
		net_reader_stop(watch->net_retired);
	watch->net = watch->net_retired = NULL;
	return r;
}

/* The watcher lets go of the reader: told to stop, not waited for. */
static void
net_reader_leave(Watch *watch)
{
	NetReader *r = net_reader_detach(watch);

	if (r)
		net_reader_stop(r);
}

/*
 * A retired reader whose thread has ended is let go (its group and pipes
 * close): it can no longer be revived. Looked at as events come.
 */
static void
net_reap_retired(Watch *watch)
{
	NetReader *r = watch->net_retired;
	gboolean ended;

	if (!r)
		return;
	g_mutex_lock(&r->lock);
	ended = r->exited;
	g_mutex_unlock(&r->lock);
	if (ended) {
		watch->net_retired = NULL;
		net_reader_release(r);
	}
}

/*
 * The netfs group for a new watcher: the previous watcher's reader,
 * `inherited` (its reference, or NULL), while its thread lives, else a
 * new one. Without netfs the inherited reader is told to end but kept,
 * retired, so that netfs turned on again before its thread ended (stuck
 * on a dead server) revives it rather than start a second.
 */
static void
net_reader_take(Watch *watch, NetReader *inherited, unsigned int event_flags)
{
	if (!watch->netfs) {
		if (inherited) {
			net_reader_tell_stop(inherited);
			watch->net_retired = inherited;
		}
		return;
	}
	if (inherited && net_reader_adopt(watch, inherited))
		return;
	(void)net_reader_start(watch, event_flags);
}

/*
 * The descriptors are counted again at most this often: listing
 * /proc/self/fd at every wake-up took a tenth of the daemon's CPU under
 * load (perf, a busy 60 s). The daemon's own descriptors change by a few
 * within a second, which the reserve (FD_RESERVE) absorbs.
 */
#define FD_COUNT_US G_USEC_PER_SEC

/*
 * How many events one read may return: each brings a descriptor, and a
 * descriptor the kernel cannot create loses its event. So a read asks
 * for no more events than there are free descriptors (RLIMIT_NOFILE
 * minus those open), less a reserve for the rest of the daemon; with few
 * free, half of them (the floor), and none when none is free.
 */
static gsize
events_per_read(Watch *watch)
{
	const gsize most = EVENT_BUFFER / EVENT_METADATA_LEN;
	gint64 now = g_get_monotonic_time();
	struct rlimit rl;
	g_autoptr(GDir) dir = NULL;
	g_autoptr(GError) error = NULL;
	gsize open_fds = 0, n;

	if (watch->per_read_at != 0 && now - watch->per_read_at < FD_COUNT_US &&
	    now >= watch->per_read_at) {
		n = watch->per_read;
		goto counted;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > G_MAXSIZE)
		return most;
	dir = g_dir_open("/proc/self/fd", 0, &error);
	if (!dir) {
		/* No descriptor free: read nothing now (the pause retries). */
		if (g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_MFILE) ||
		    g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NFILE))
			return 0;
		return 1;  /* cannot count: one at a time */
	}
	while (g_dir_read_name(dir))
		open_fds++;  /* includes the directory's own descriptor: errs on the safe side */
	n = watch_events_per_read((gsize)rl.rlim_cur, open_fds, most);
	/* None free is counted again at the next wake-up, not in a second. */
	watch->per_read = n;
	watch->per_read_at = n > 0 ? now : 0;
counted:
	if (n < most)
		watch->stats.short_reads++;
	return n;
}

static gboolean on_events(gint fd, GIOCondition condition, gpointer user_data);

/* The main loop watches both groups' descriptors (after a pause), or neither. */
static void
watch_groups(Watch *watch, gboolean on)
{
	if (!on) {
		if (watch->fd_source)
			g_source_remove(watch->fd_source);
		if (watch->fid_source)
			g_source_remove(watch->fid_source);
		watch->fd_source = watch->fid_source = 0;
		return;
	}
	if (!watch->fd_source && watch->fd >= 0)
		watch->fd_source = g_unix_fd_add(watch->fd, G_IO_IN, on_events, watch);
	if (!watch->fid_source && watch->fid_fd >= 0)
		watch->fid_source = g_unix_fd_add(watch->fid_fd, G_IO_IN, on_events, watch);
}

/* Stops reading events for good: the groups are closed and their queues dropped. */
static void
stop_group(Watch *watch)
{
	watch->broken = TRUE;
	watch_groups(watch, FALSE);
	if (watch->pause_source)
		g_source_remove(watch->pause_source);
	watch->pause_source = 0;
	if (watch->fd >= 0)
		(void)close(watch->fd);
	watch->fd = -1;
	if (watch->fid_fd >= 0)
		(void)close(watch->fid_fd);
	watch->fid_fd = -1;
	watch->fid_len = 0;
}

/*
 * One read() of at most max events. Returns how many were read (0: none
 * pending); *more is TRUE when the read came back full, so more may be
 * waiting. Every descriptor the read returned is closed on every path.
 */
static guint
read_batch(Watch *watch, gsize max, gboolean *more)
{
	guint count = 0;
	gint64 now;
	ssize_t len;
	gsize at = 0;

	*more = FALSE;
	if (max == 0)
		return 0;
	len = read(watch->fd, watch->buffer, max * EVENT_METADATA_LEN);
	if (len < 0) {
		/*
		 * EMFILE, ENFILE, ENOMEM...: the kernel could not make the first
		 * event's descriptor, and that event is gone.
		 */
		if (errno != EAGAIN && errno != EINTR)
			watch->stats.read_errors++;
		return 0;
	}
	now = g_get_monotonic_time();
	while (at < (gsize)len) {
		const struct fanotify_event_metadata *ev = (const void *)(watch->buffer + at);
		pid_t pid;

		if ((gsize)len - at < EVENT_METADATA_LEN || ev->event_len < EVENT_METADATA_LEN ||
		    ev->event_len > (gsize)len - at || ev->vers != FANOTIFY_METADATA_VERSION) {
			/*
			 * A layout this code does not know: nothing more can be
			 * read safely. No caller to hand this to (this is the
			 * event loop), so it is logged here, once.
			 */
			watch->stats.closed_unparsed +=
				watch_close_event_fds(watch->buffer, (gsize)len, at, watch->fd);
			g_warning("fanotify event format %u (length %u), expected %u: "
				  "not watching starts and opens any more",
				  (unsigned)ev->vers, (unsigned)ev->event_len,
				  (unsigned)FANOTIFY_METADATA_VERSION);
			stop_group(watch);
			return count + 1;
		}
		at += ev->event_len;
		count++;
		pid = (pid_t)ev->pid;
		watch->stats.events++;
		if (ev->mask & FAN_Q_OVERFLOW) {
			watch->stats.overflows++;
			if (!watch->overflow_logged)
				g_info("fanotify queue overflowed: some opens were not seen");
			watch->overflow_logged = TRUE;
			/* It has no file (FAN_NOFD); were it otherwise, no leak. */
			if (ev->fd >= 0)
				(void)close(ev->fd);
			continue;
		}
		if (ev->fd < 0) {
			/* FAN_NOFD on an event that has a file: its descriptor failed. */
			watch->stats.nofd++;
			continue;
		}
		/*
		 * Cheapest checks first: the daemon's own opens, then (for plain
		 * opens) whether the pid is in a window at all.
		 */
		if (pid != watch->self) {
			if (ev->mask & FAN_OPEN_EXEC) {
				handle_exec(watch, pid, ev->fd, now);
			} else if (ev->mask & FAN_OPEN) {
				watch->stats.opens++;
				if (watch_tracker_wants(watch->tracker, pid))
					handle_open(watch, pid, ev->fd, now);
			}
		}
		(void)close(ev->fd);
	}
	*more = (gsize)len + EVENT_METADATA_LEN > max * EVENT_METADATA_LEN;
	return count;
}

/*
 * The handle group's event of an open by pid, in its window: named from
 * the cache (WatchHandleNames) when the handle was resolved lately, else
 * resolved and examined as a descriptor event's file is.
 */
static void
handle_fid_open(Watch *watch, pid_t pid, const WatchFidEvent *ev, gint64 now)
{
	union {
		struct file_handle fh;
		guint8 bytes[sizeof(struct file_handle) + WATCH_HANDLE_MAX];
	} handle;
	const guint8 *bytes = watch->fid_buffer + ev->handle_at;
	const FidMount *mount = NULL;
	const WatchHandleName *known;
	WatchHandleKey key;
	gboolean keyed;
	EventFile file;
	char *path;
	int fd;

	for (guint i = 0; i < watch->fid_mounts->len && !mount; i++) {
		const FidMount *m = &g_array_index(watch->fid_mounts, FidMount, i);

		if (m->fsid[0] == ev->fsid[0] && m->fsid[1] == ev->fsid[1])
			mount = m;
	}
	/* A file system unmounted or dropped since the event was queued. */
	if (!mount) {
		watch->stats.handle_errors++;
		return;
	}
	keyed = watch_handle_key(&key, ev->fsid, ev->handle_type, bytes, ev->handle_bytes);
	known = keyed ? watch_handle_names_lookup(watch->handle_names, &key, now) : NULL;
	if (known) {
		watch->stats.handles++;
		watch->stats.handle_names_reused++;
		memset(&file, 0, sizeof(file));
		file.id = known->id;
		record_open(watch, pid, g_strdup(known->path), &file, now);
		return;
	}
	handle.fh.handle_bytes = ev->handle_bytes;
	handle.fh.handle_type = ev->handle_type;
	memcpy(handle.fh.f_handle, bytes, ev->handle_bytes);
	/*
	 * O_PATH: the inode is found (in the dentry cache: the program has
	 * just opened it) and no file system's open runs. ESTALE: the file
	 * was deleted since.
	 */
	fd = open_by_handle_at(mount->fd, &handle.fh, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		watch->stats.handle_errors++;
		return;
	}
	watch->stats.handles++;
	/* As handle_open() does; its path is one here already (a mount of the daemon's). */
	if (event_file(watch, fd, &file)) {
		path = proc_fd_path(fd);
		if (path && keyed)
			watch_handle_names_store(watch->handle_names, &key, path, &file.id, now);
		record_open(watch, pid, path, &file, now);
	}
	(void)close(fd);
}

/*
 * One read() of the handle group into its buffer, which must be empty;
 * TRUE when the read came back nearly full (more may be waiting). The
 * events are handled later by handle_fid_batch().
 */
static gboolean
read_fid_batch(Watch *watch)
{
	/* The longest event a FID group makes: metadata, one record, the largest handle. */
	const gsize longest = EVENT_METADATA_LEN + FID_RECORD_MIN + WATCH_HANDLE_MAX;
	ssize_t len;

	if (watch->fid_fd < 0 || watch->fid_len > 0)
		return FALSE;
	len = read(watch->fid_fd, watch->fid_buffer, EVENT_BUFFER);
	if (len < 0) {
		if (errno != EAGAIN && errno != EINTR)
			watch->stats.read_errors++;
		return FALSE;
	}
	watch->fid_len = (gsize)len;
	return (gsize)len + longest > EVENT_BUFFER;
}

/* Handles the events read_fid_batch() read; returns how many. No descriptor is in them. */
static guint
handle_fid_batch(Watch *watch)
{
	WatchFidParse parse;
	gint64 now = g_get_monotonic_time();
	gsize len;
	guint count;

	if (watch->fid_len == 0)
		return 0;
	len = watch->fid_len;
	g_array_set_size(watch->fid_events, 0);
	count = watch_parse_fid_events(watch->fid_buffer, watch->fid_len, watch->fid_events, &parse);
	watch->stats.unknown_records += parse.unknown_records;
	for (guint i = 0; i < watch->fid_events->len; i++) {
		const WatchFidEvent *ev = &g_array_index(watch->fid_events, WatchFidEvent, i);

		watch->stats.events++;
		watch->stats.fid_events++;
		/* A FID group hands out no descriptor; were it otherwise, no leak. */
		if (ev->fd >= 0)
			(void)close(ev->fd);
		if (ev->mask & FAN_Q_OVERFLOW) {
			watch->stats.overflows++;
			if (!watch->overflow_logged)
				g_info("fanotify queue overflowed: some opens were not seen");
			watch->overflow_logged = TRUE;
			continue;
		}
		if (ev->pid == watch->self || !(ev->mask & FAN_OPEN))
			continue;
		watch->stats.opens++;
		/* The one check every open pays; only a pid in its window resolves its handle. */
		if (!watch_tracker_wants(watch->tracker, ev->pid))
			continue;
		if (!ev->has_fid)
			watch->stats.handle_errors++;
		else
			handle_fid_open(watch, ev->pid, ev, now);
	}
	watch->fid_len = 0;
	if (parse.malformed) {
		g_warning("fanotify file-handle event of an unknown format at byte %" G_GSIZE_FORMAT
			  " of %" G_GSIZE_FORMAT ": not watching starts and opens any more",
			  parse.stopped_at, len);
		stop_group(watch);
		return count + 1;
	}
	return count;
}

/*
 * Reads what is pending, a bounded number of batches; returns the events
 * read.
 *
 * With two groups, the order of events between them is lost: a
 * program's exec (descriptor group) opens the window that its first
 * opens (handle group) need. So the handle group is read first and its
 * events held while the descriptor group is read until it comes back
 * short: every exec that preceded an open held is then in hand. Under a
 * flood of execs that outlasts the reads, an open may still be handled
 * before its exec and not be recorded. The price of the split: a pid
 * that executes another program within one batch may have the opens it
 * made just before that exec recorded in the new program's window.
 */
static guint
dispatch(Watch *watch)
{
	guint count = 0;
	gboolean more = TRUE;
	gint64 start = g_get_monotonic_time();
	gint64 cpu = cputime_thread_us(), mark;
	gsize max;

	net_reap_retired(watch);
	if (watch->broken)
		return 0;
	watch->stats.wakeups++;
	/* The batches close what they get: the free count holds for all of them. */
	max = events_per_read(watch);
	for (int i = 0; i < MAX_READS && more && !watch->broken &&
			g_get_monotonic_time() - start < DISPATCH_BUDGET_US; i++) {
		gboolean fid_more = read_fid_batch(watch);

		mark = cputime_thread_us();
		watch->stats.cpu_fid_us += (guint64)MAX(mark - cpu, (gint64)0);
		count += read_batch(watch, max, &more);
		for (int j = 1; j < MAX_READS && more && !watch->broken &&
				g_get_monotonic_time() - start < DISPATCH_BUDGET_US; j++)
			count += read_batch(watch, max, &more);
		cpu = cputime_thread_us();
		watch->stats.cpu_desc_us += (guint64)MAX(cpu - mark, (gint64)0);
		if (!watch->broken)
			count += handle_fid_batch(watch);
		mark = cputime_thread_us();
		watch->stats.cpu_fid_us += (guint64)MAX(mark - cpu, (gint64)0);
		cpu = mark;
		more = more || fid_more;
	}
	ensure_timer(watch);
	return count;
}

void
watch_dispatch(Watch *watch)
{
	g_return_if_fail(watch != NULL);

	(void)dispatch(watch);
}

/*
 * After a wake-up the descriptor is left alone for PAUSE_MS, then read
 * again; only when a pause finds nothing is it watched again. An event
 * after a quiet spell (a user starting a program) is read at once, so its
 * start is measured before the program has loaded much; a burst (a build
 * starting compilers and opening headers) is read in batches of PAUSE_MS
 * worth of events. Each wake-up of a daemon costs far more than one event
 * (measured on a virtual machine: about a hundred microseconds against a
 * few), so this bounds the daemon's cost under load at 1000 / PAUSE_MS
 * wake-ups a second; the kernel queues up to 16384 events meanwhile
 * (a third of a million a second at 50 ms).
 */
static gboolean
on_resume(gpointer user_data)
{
	Watch *watch = user_data;

	watch->pause_source = 0;
	if (watch->broken)
		return G_SOURCE_REMOVE;
	if (dispatch(watch) > 0 && !watch->broken)
		watch->pause_source = g_timeout_add(PAUSE_MS, on_resume, watch);
	else if (!watch->broken)
		watch_groups(watch, TRUE);
	return G_SOURCE_REMOVE;
}

static gboolean
on_events(gint fd, GIOCondition condition, gpointer user_data)
{
	Watch *watch = user_data;

	(void)fd;
	(void)condition;
	/* Either group woke the loop: both are read, and both paused. */
	if (fd == watch->fd)
		watch->fd_source = 0;
	else
		watch->fid_source = 0;
	watch_groups(watch, FALSE);
	(void)dispatch(watch);
	if (!watch->broken)
		watch->pause_source = g_timeout_add(PAUSE_MS, on_resume, watch);
	return G_SOURCE_REMOVE;
}


/*
 * Adds one directory to dirs unless a directory on the same file system
 * is there; FALSE if MAX_MARKS directories are there already.
 */
static gboolean
add_mark_dir(GPtrArray *dirs, GArray *devs, const char *prefix)
{
	g_autofree char *dir = g_strdup(prefix);
	struct stat st;

	if (dirs->len >= MAX_MARKS)
		return FALSE;
	/* A prefix is raw ("/lib" also matches "/lib64"): climb to a directory. */
	for (;;) {
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			break;
		if (strcmp(dir, "/") == 0)
			return TRUE;
		{
			char *parent = g_path_get_dirname(dir);

			g_free(dir);
			dir = parent;
		}
	}
	for (guint i = 0; i < devs->len; i++)
		if (g_array_index(devs, dev_t, i) == st.st_dev)
			return TRUE;
	g_array_append_val(devs, st.st_dev);
	g_ptr_array_add(dirs, g_steal_pointer(&dir));
	return TRUE;
}

/*
 * Whether the mount holding path (by the mount table, no lookup) is a
 * network/FUSE one or lies under one; such a path is not even stat()ed
 * unless netfs allows it, since a dead server would stall the stat.
 */
static gboolean
path_is_remote(Watch *watch, const GArray *mounts, const char *path, GArray *skipped,
	       GPtrArray *net)
{
	const ProcMount *m = watch_mounts_find(mounts, path);
	dev_t dev;

	if (!m || !watch_mounts_under_remote(mounts, m))
		return FALSE;
	dev = makedev(m->dev_major, m->dev_minor);
	/* With netfs, the reader's thread marks it, by its mount point (see NetReader). */
	if (watch->net) {
		for (guint i = 0; i < net->len; i++)
			if (strcmp(g_ptr_array_index(net, i), m->mountpoint) == 0)
				return TRUE;
		if (net->len < MAX_MARKS)
			g_ptr_array_add(net, g_strdup(m->mountpoint));
		return TRUE;
	}
	add_dev_once(skipped, dev);
	return TRUE;
}

static gboolean
lists_accept(char **const lists[2], const char *path)
{
	return conf_prefix_accepts(lists[0], path) || conf_prefix_accepts(lists[1], path);
}

/*
 * The directories whose file systems hold what the two prefix lists
 * accept: each prefix's own directory, "/" when a list accepts paths no
 * prefix matches, and every mount whose mount point a list accepts (a
 * file system mounted at /usr/local is not /usr's). Network/FUSE ones are
 * left out unless netfs allows them (counted in *remote), and so are
 * pseudo file systems.
 */
static void
collect_mark_dirs(Watch *watch, const GArray *mounts, GPtrArray *dirs, GArray *devs,
		  GPtrArray *net, guint *remote, guint *over_cap)
{
	g_autoptr(GArray) skipped = g_array_new(FALSE, FALSE, sizeof(dev_t));

	*over_cap = 0;
	for (int l = 0; l < 2; l++) {
		char **list = watch->lists[l];

		for (guint i = 0; list && list[i]; i++) {
			if (list[i][0] == '/' && !path_is_remote(watch, mounts, list[i], skipped, net))
				(void)add_mark_dir(dirs, devs, list[i]);
		}
		/* A path no prefix matches is accepted: the root file system at least. */
		if (conf_prefix_accepts(list, "/") && !path_is_remote(watch, mounts, "/", skipped, net))
			(void)add_mark_dir(dirs, devs, "/");
	}
	for (guint i = 0; i < mounts->len; i++) {
		const ProcMount *m = &g_array_index(mounts, ProcMount, i);
		g_autofree char *dir = g_strconcat(m->mountpoint, strcmp(m->mountpoint, "/") ? "/" : "",
						   NULL);

		if (watch_fs_is_pseudo(m->fstype) || !lists_accept(watch->lists, dir))
			continue;
		/* Hidden by a later mount over the same point, or under it. */
		if (watch_mounts_find(mounts, m->mountpoint) != m)
			continue;
		if (!path_is_remote(watch, mounts, m->mountpoint, skipped, net) &&
		    !add_mark_dir(dirs, devs, m->mountpoint))
			(*over_cap)++;
	}
	*remote = skipped->len;
}

/* Whether a file system marked before is still mounted but no longer wanted. */
static gboolean
marks_stale(const Watch *watch, const GArray *mounts, const GArray *devs)
{
	for (guint i = 0; i < watch->marked_devs->len; i++) {
		dev_t dev = g_array_index(watch->marked_devs, dev_t, i);
		gboolean wanted = FALSE, mounted = FALSE;

		for (guint j = 0; j < devs->len && !wanted; j++)
			wanted = g_array_index(devs, dev_t, j) == dev;
		for (guint j = 0; j < mounts->len && !mounted; j++) {
			const ProcMount *m = &g_array_index(mounts, ProcMount, j);

			mounted = makedev(m->dev_major, m->dev_minor) == dev;
		}
		if (mounted && !wanted)
			return TRUE;
	}
	return FALSE;
}

/*
 * A descriptor of the directory dir on the mount `id`, or -1 (another
 * mount covers it now). Not O_PATH: open_by_handle_at() refuses such a
 * mount descriptor (EBADF). dir is a local file system's, and opening a
 * directory there reads nothing.
 */
static int
open_on_mount(const char *dir, guint id)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	struct statx stx;

	if (fd < 0)
		return -1;
#ifdef STATX_MNT_ID
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id == id)
		return fd;
#else
	(void)stx;
	(void)id;
#endif
	(void)close(fd);
	return -1;
}

/*
 * Whether the opens on the file system holding dir (a local one) can
 * come by file handle, and through what: *out gets its fsid and a
 * descriptor of a mount of the daemon's that shows the whole file
 * system. A handle resolved through a mount names the file by its path
 * from that mount's root; through a bind mount of a subdirectory, a file
 * outside it would get a path that is not its own, so only a mount of
 * the file system's root will do. The path is then the daemon's own
 * whatever namespace the opening program lives in (no translation is
 * needed); a file under a directory that another mount covers here gets
 * a path that names another file, which the identity check at the end of
 * the window drops. A handle of the mount's own root must resolve: that
 * fails without CAP_DAC_READ_SEARCH, and on file systems that make
 * handles they cannot resolve (an overlay without nfs_export).
 */
static gboolean
fid_mount_open(const GArray *mounts, const char *dir, FidMount *out)
{
	union {
		struct file_handle fh;
		guint8 bytes[sizeof(struct file_handle) + WATCH_HANDLE_MAX];
	} handle;
	const ProcMount *on = NULL;
	struct statx stx;
	struct statfs sfs;
	int fd = -1, probe, mount_id;

	out->fd = -1;
#ifdef STATX_MNT_ID
	/* Kernels without STATX_MNT_ID (before 5.8) cannot tell the mount: by descriptor. */
	if (statx(AT_FDCWD, dir, AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) != 0 ||
	    !(stx.stx_mask & STATX_MNT_ID))
		return FALSE;
	for (guint i = 0; i < mounts->len && !on; i++) {
		const ProcMount *m = &g_array_index(mounts, ProcMount, i);

		if (m->id == stx.stx_mnt_id)
			on = m;
	}
#else
	(void)stx;
#endif
	if (!on)
		return FALSE;
	/*
	 * dir's own mount, else another mount of the same file system that
	 * shows its root (whose mount point is not looked up through a
	 * network/FUSE mount, which may not answer).
	 */
	if (strcmp(on->root, "/") == 0)
		fd = open_on_mount(dir, on->id);
	for (guint i = 0; i < mounts->len && fd < 0; i++) {
		const ProcMount *m = &g_array_index(mounts, ProcMount, i);

		if (m->dev_major == on->dev_major && m->dev_minor == on->dev_minor &&
		    strcmp(m->root, "/") == 0 && !watch_mounts_under_remote(mounts, m))
			fd = open_on_mount(m->mountpoint, m->id);
	}
	if (fd < 0)
		return FALSE;
	handle.fh.handle_bytes = WATCH_HANDLE_MAX;
	if (fstatfs(fd, &sfs) != 0 ||
	    name_to_handle_at(fd, "", &handle.fh, &mount_id, AT_EMPTY_PATH) != 0) {
		(void)close(fd);
		return FALSE;
	}
	probe = open_by_handle_at(fd, &handle.fh, O_PATH | O_CLOEXEC);
	if (probe < 0) {
		(void)close(fd);
		return FALSE;
	}
	(void)close(probe);
	memcpy(out->fsid, &sfs.f_fsid, sizeof(out->fsid));
	out->fd = fd;
	return TRUE;
}

/*
 * Marks dir's file system for plain opens in the handle group, if it can
 * be (see fid_mount_open; and the kernel refuses file systems without an
 * fsid or handles: ENODEV, EOPNOTSUPP, EXDEV for a btrfs subvolume).
 * Network and FUSE file systems are left to the descriptor group: a
 * handle's resolution may ask their server. TRUE if marked.
 */
static gboolean
mark_fid(Watch *watch, const GArray *mounts, const char *dir, GArray *fids)
{
	const ProcMount *m = watch_mounts_find(mounts, dir);
	FidMount fid;

	if (watch->fid_fd < 0 || !watch->reads)
		return FALSE;
	if (m && watch_mounts_under_remote(mounts, m))
		return FALSE;
	if (!fid_mount_open(mounts, dir, &fid)) {
		g_debug("fanotify: %s: opens by descriptor (no mount here shows its file system's "
			"root, or its handles do not resolve)", dir);
		return FALSE;
	}
	if (fanotify_mark(watch->fid_fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_OPEN, AT_FDCWD,
			  dir) != 0) {
		g_debug("fanotify: %s: opens by descriptor (no file handles: %s)", dir,
			g_strerror(errno));
		fid_mount_clear(&fid);
		return FALSE;
	}
	/* Two marks of one file system (seen through two directories) share one entry. */
	for (guint i = 0; i < fids->len; i++) {
		const FidMount *have = &g_array_index(fids, FidMount, i);

		if (have->fsid[0] == fid.fsid[0] && have->fsid[1] == fid.fsid[1]) {
			fid_mount_clear(&fid);
			return TRUE;
		}
	}
	g_array_append_val(fids, fid);
	return TRUE;
}

/*
 * Marks the file systems of the current mount table. Marks are added
 * (the kernel merges a mark with one already there): no event is lost
 * meanwhile, and a file system unmounted takes its mark with it. Only
 * when a file system still mounted is no longer wanted (a mount over a
 * prefix's directory now holds it) are all marks flushed first, so that
 * what is watched is what the dump says; events in the microseconds
 * between are lost. Returns the errno of the last failure, 0 if none.
 */
static int
mark_all(Watch *watch)
{
	g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GArray) mounts = read_mounts(watch);
	g_autoptr(GArray) devs = g_array_new(FALSE, FALSE, sizeof(dev_t));
	g_autoptr(GArray) fids = g_array_new(FALSE, FALSE, sizeof(FidMount));
	g_autoptr(GPtrArray) net = g_ptr_array_new_with_free_func(g_free);
	guint64 mask = FAN_OPEN_EXEC | (watch->reads ? FAN_OPEN : 0);
	int last_errno = 0;

	/* The ids of the event files' mounts are to be read again too. */
	mountids_forget_own(watch->mounts);
	g_array_set_size(watch->remote_devs, 0);
	for (guint i = 0; i < mounts->len; i++) {
		const ProcMount *m = &g_array_index(mounts, ProcMount, i);

		if (watch_fs_is_remote(m->fstype))
			add_dev_once(watch->remote_devs, makedev(m->dev_major, m->dev_minor));
	}
	collect_mark_dirs(watch, mounts, dirs, devs, net, &watch->remote_skipped, &watch->over_cap);
	net_hand_marks(watch, net);
	if (marks_stale(watch, mounts, devs)) {
		(void)fanotify_mark(watch->fd, FAN_MARK_FLUSH | FAN_MARK_FILESYSTEM, 0, AT_FDCWD, "/");
		(void)fanotify_mark(watch->fd, FAN_MARK_FLUSH | FAN_MARK_MOUNT, 0, AT_FDCWD, "/");
		if (watch->fid_fd >= 0)
			(void)fanotify_mark(watch->fid_fd, FAN_MARK_FLUSH | FAN_MARK_FILESYSTEM, 0,
					    AT_FDCWD, "/");
		watch->stats.flushes++;
	}
	g_array_set_clear_func(fids, fid_mount_clear);
	g_array_set_size(watch->marked_devs, 0);
	g_array_append_vals(watch->marked_devs, devs->data, devs->len);
	watch->fs_marks = watch->mount_marks = watch->fid_marks = 0;
	for (guint i = 0; i < dirs->len; i++) {
		const char *dir = g_ptr_array_index(dirs, i);
		gboolean by_handle = mark_fid(watch, mounts, dir, fids);
		guint64 dir_mask = by_handle ? FAN_OPEN_EXEC : mask;

		watch->fid_marks += by_handle;
		/*
		 * A file system that changed hands since the last marking (its
		 * handles became resolvable, or stopped being) leaves the other
		 * group; the new mark is made first, so no open is lost between.
		 */
		if (!by_handle && watch->fid_fd >= 0)
			(void)fanotify_mark(watch->fid_fd, FAN_MARK_REMOVE | FAN_MARK_FILESYSTEM,
					    FAN_OPEN, AT_FDCWD, dir);

		/*
		 * A file system mark sees every mount of it, including bind
		 * mounts; kernels before 4.20 and some file systems (btrfs
		 * subvolumes: EXDEV) only allow a mount mark.
		 */
		if (fanotify_mark(watch->fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, dir_mask,
				  AT_FDCWD, dir) == 0) {
			watch->fs_marks++;
			if (by_handle && watch->reads)
				(void)fanotify_mark(watch->fd, FAN_MARK_REMOVE | FAN_MARK_FILESYSTEM,
						    FAN_OPEN, AT_FDCWD, dir);
			continue;
		}
		last_errno = errno;
		if (fanotify_mark(watch->fd, FAN_MARK_ADD | FAN_MARK_MOUNT, dir_mask, AT_FDCWD,
				  dir) == 0) {
			watch->mount_marks++;
			continue;
		}
		last_errno = errno;
	}
	/* Events already queued of a file system gone from the table are not resolved. */
	g_array_unref(watch->fid_mounts);
	watch->fid_mounts = g_steal_pointer(&fids);
	return last_errno;
}

void
watch_remark(Watch *watch)
{
	g_return_if_fail(watch != NULL);

	net_reap_retired(watch);
	if (watch->fd < 0 || watch->broken)
		return;
	(void)mark_all(watch);
	watch->stats.remarks++;
	/* Debug: a host running containers changes its mount table all day. */
	g_debug("mount table changed: %s", watch_describe(watch));
}

static gboolean
on_remark(gpointer user_data)
{
	Watch *watch = user_data;

	watch->remark_source = 0;
	watch_remark(watch);
	return G_SOURCE_REMOVE;
}

/* Mounts come in bursts (a container starting): one remark after the burst settles. */
#define REMARK_DELAY_MS 100

static gboolean
on_mounts_changed(gint fd, GIOCondition condition, gpointer user_data)
{
	Watch *watch = user_data;

	(void)fd;
	(void)condition;
	/* procfs flags each change once (POLLPRI | POLLERR), so this does not spin. */
	if (!watch->remark_source)
		watch->remark_source = g_timeout_add(REMARK_DELAY_MS, on_remark, watch);
	return G_SOURCE_CONTINUE;
}

static gboolean
set_error_errno(GError **error, int err, const char *what)
{
	WatchError code = WATCH_ERROR_FAILED;

	if (err == EPERM || err == EACCES)
		code = WATCH_ERROR_PERMISSION;
	else if (err == ENOSYS || err == EINVAL || err == EOPNOTSUPP)
		code = WATCH_ERROR_UNSUPPORTED;
	g_set_error(error, WATCH_ERROR, code, "%s: %s", what, g_strerror(err));
	return FALSE;
}

static gboolean
watch_open(Watch *watch, NetReader *inherited, GError **error)
{
	/*
	 * O_NONBLOCK: nothing the daemon does with an event's descriptor may
	 * wait (a FIFO or a device opened through it would).
	 */
	const unsigned int event_flags = O_RDONLY | O_LARGEFILE | O_CLOEXEC | O_NONBLOCK;
	int last_errno;

	/*
	 * O_NOATIME: the descriptors the kernel opens for the daemon must not
	 * touch every file's atime; kernels that refuse the flag here get
	 * the group without it.
	 */
	watch->fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK,
				  event_flags | O_NOATIME);
	if (watch->fd < 0 && errno == EINVAL)
		watch->fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, event_flags);
	if (watch->fd < 0) {
		if (inherited)
			net_reader_stop(inherited);
		return set_error_errno(error, errno, "fanotify_init");
	}
#ifdef FAN_REPORT_FID
	/*
	 * The plain opens, by file handle: no descriptor to open for each
	 * event, only for those of a pid in its window (see handle_fid_open).
	 * EINVAL: a kernel before 5.1, which has no such group; the opens
	 * come by descriptor then, as everything else.
	 */
	if (watch->reads) {
		watch->fid_fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK |
					      FAN_REPORT_FID, O_RDONLY | O_LARGEFILE | O_CLOEXEC);
		if (watch->fid_fd < 0)
			g_debug("fanotify: no file-handle group (%s): opens by descriptor",
				g_strerror(errno));
	}
#endif

	net_reader_take(watch, inherited, event_flags);

	/* Watched for changes: a file system mounted later is marked then. */
	watch->mounts_fd = proc_open_self_mountinfo();
	last_errno = mark_all(watch);
	if (watch->fs_marks + watch->mount_marks == 0) {
		if (last_errno == EINVAL)
			return set_error_errno(error, last_errno,
					       "fanotify_mark (FAN_OPEN_EXEC needs Linux 5.0)");
		return set_error_errno(error, last_errno ? last_errno : ENOENT, "fanotify_mark");
	}
	if (watch->mounts_fd >= 0)
		watch->mounts_source = g_unix_fd_add(watch->mounts_fd, G_IO_PRI | G_IO_ERR,
						     on_mounts_changed, watch);
	return TRUE;
}

#else /* !HAVE_SYS_FANOTIFY_H */

static gint64
net_busy_us(const Watch *watch)
{
	(void)watch;
	return 0;
}

static NetReader *
net_reader_detach(Watch *watch)
{
	(void)watch;
	return NULL;
}

static gboolean
net_marking_pending(const Watch *watch)
{
	(void)watch;
	return FALSE;
}

void
watch_dispatch(Watch *watch)
{
	(void)watch;
}

void
watch_remark(Watch *watch)
{
	(void)watch;
}

static gboolean
on_events(gint fd, GIOCondition condition, gpointer user_data)
{
	(void)fd; (void)condition; (void)user_data;
	return G_SOURCE_REMOVE;
}

static gboolean
watch_open(Watch *watch, NetReader *inherited, GError **error)
{
	(void)watch;
	(void)inherited;  /* always NULL: there are no readers */
	g_set_error(error, WATCH_ERROR, WATCH_ERROR_UNSUPPORTED,
		    "built without <sys/fanotify.h>");
	return FALSE;
}

#endif

/* watch_new, with the netfs reader of a previous watcher (its reference, or NULL). */
static Watch *
watch_make(const Conf *conf, const WatchCallbacks *callbacks, gpointer user_data,
	   NetReader *inherited, GError **error)
{
	g_autoptr(Watch) watch = NULL;
	WatchLimits limits = { 0 };

	g_return_val_if_fail(conf != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	watch = g_new0(Watch, 1);
	watch->fd = -1;
	watch->fid_fd = -1;
	watch->fid_mounts = g_array_new(FALSE, FALSE, sizeof(FidMount));
	g_array_set_clear_func(watch->fid_mounts, fid_mount_clear);
	watch->fid_events = g_array_new(FALSE, FALSE, sizeof(WatchFidEvent));
	watch->mounts_fd = -1;
	watch->self = getpid();
	watch->reads = conf->learnreads && conf->maxreadfiles > 0 && conf->maxreadkb > 0;
	watch->netfs = conf->netfs;
	watch->lists[0] = g_strdupv(conf->exeprefix);
	watch->lists[1] = g_strdupv(conf->mapprefix);
	watch->remote_devs = g_array_new(FALSE, FALSE, sizeof(dev_t));
	watch->marked_devs = g_array_new(FALSE, FALSE, sizeof(dev_t));
	if (callbacks)
		watch->callbacks = *callbacks;
	watch->user_data = user_data;
	watch->buffer = g_malloc(EVENT_BUFFER);
	watch->fid_buffer = g_malloc(EVENT_BUFFER);
	watch->mounts = mountids_new();
	watch->exec_names = watch_exec_names_new();
	watch->handle_names = watch_handle_names_new();
	watch->sink = g_rc_box_new0(WatchSink);
	watch->sink->watch = watch;

	limits.window_us = conf->startupwindow * G_USEC_PER_SEC;
	limits.interval_us = conf->cycle * G_USEC_PER_SEC;
	/* Without open events a window could only ever hold the exe itself. */
	limits.max_files = watch->reads ? (guint)conf->maxreadfiles : 0;
	limits.exeprefix = conf->exeprefix;
	limits.mapprefix = conf->mapprefix;
	watch->tracker = watch_tracker_new(&limits, watch->self);

	if (!watch_open(watch, inherited, error))
		return NULL;
	watch->fd_source = g_unix_fd_add(watch->fd, G_IO_IN, on_events, watch);
	if (watch->fid_fd >= 0)
		watch->fid_source = g_unix_fd_add(watch->fid_fd, G_IO_IN, on_events, watch);
	return g_steal_pointer(&watch);
}

Watch *
watch_new(const Conf *conf, const WatchCallbacks *callbacks, gpointer user_data, GError **error)
{
	return watch_make(conf, callbacks, user_data, NULL, error);
}

Watch *
watch_renew(Watch *old, const Conf *conf, const WatchCallbacks *callbacks, gpointer user_data,
	    GError **error)
{
	NetReader *net = old ? net_reader_detach(old) : NULL;

	watch_free(old);
	return watch_make(conf, callbacks, user_data, net, error);
}

WatchReader *
watch_retire(Watch *watch)
{
	NetReader *r = watch ? net_reader_detach(watch) : NULL;

	watch_free(watch);
#ifdef HAVE_SYS_FANOTIFY_H
	if (r)
		net_reader_tell_stop(r);
#endif
	return r;
}

Watch *
watch_resume(WatchReader *reader, const Conf *conf, const WatchCallbacks *callbacks,
	     gpointer user_data, GError **error)
{
	return watch_make(conf, callbacks, user_data, reader, error);
}

gboolean
watch_retired_reader_busy(const WatchReader *reader)
{
#ifdef HAVE_SYS_FANOTIFY_H
	return reader && __atomic_load_n(&reader->busy_since, __ATOMIC_RELAXED) != 0;
#else
	(void)reader;
	return FALSE;
#endif
}

void
watch_reader_free(WatchReader *reader)
{
#ifdef HAVE_SYS_FANOTIFY_H
	if (reader)
		net_reader_stop(reader);
#else
	(void)reader;  /* always NULL: there are no readers */
#endif
}

gboolean
watch_reader_busy(const Watch *watch)
{
	g_return_val_if_fail(watch != NULL, FALSE);

#ifdef HAVE_SYS_FANOTIFY_H
	{
		const NetReader *r = watch->net ? watch->net : watch->net_retired;

		return r && __atomic_load_n(&r->busy_since, __ATOMIC_RELAXED) != 0;
	}
#else
	return FALSE;
#endif
}

void
watch_set_fsjob(Watch *watch, FsJobPool *pool)
{
	g_return_if_fail(watch != NULL);

	watch->fsjobs = pool;
}

void
watch_free(Watch *watch)
{
	if (!watch)
		return;
	if (watch->fd_source)
		g_source_remove(watch->fd_source);
	if (watch->pause_source)
		g_source_remove(watch->pause_source);
	if (watch->timer)
		g_source_remove(watch->timer);
	if (watch->mounts_source)
		g_source_remove(watch->mounts_source);
	if (watch->remark_source)
		g_source_remove(watch->remark_source);
	if (watch->fid_source)
		g_source_remove(watch->fid_source);
#ifdef HAVE_SYS_FANOTIFY_H
	net_reader_leave(watch);
#endif
	if (watch->net_last)
		g_ptr_array_unref(watch->net_last);
	if (watch->fd >= 0)
		(void)close(watch->fd);
	if (watch->fid_fd >= 0)
		(void)close(watch->fid_fd);
	if (watch->mounts_fd >= 0)
		(void)close(watch->mounts_fd);
	watch_tracker_free(watch->tracker);
	g_strfreev(watch->lists[0]);
	g_strfreev(watch->lists[1]);
	g_array_unref(watch->remote_devs);
	g_array_unref(watch->marked_devs);
	mountids_free(watch->mounts);
	watch_exec_names_free(watch->exec_names);
	watch_handle_names_free(watch->handle_names);
	if (watch->sink) {
		watch->sink->watch = NULL;  /* jobs still out find no watcher */
		g_rc_box_release(watch->sink);
	}
	g_free(watch->description);
	g_free(watch->buffer);
	g_free(watch->fid_buffer);
	g_array_unref(watch->fid_events);
	g_array_unref(watch->fid_mounts);
	g_free(watch);
}
