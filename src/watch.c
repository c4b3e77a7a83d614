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
 *  - the group is a notification group (FAN_CLASS_NOTIF): nobody ever
 *    waits for the daemon;
 *  - an open by a process that is not in its start-up window costs one
 *    hash lookup and a close() (the kernel has already opened the
 *    descriptor; FAN_REPORT_FID would avoid that but needs
 *    open_by_handle_at() to learn a path, for every recorded open);
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
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib-unix.h>

#ifdef HAVE_SYS_FANOTIFY_H
#include <sys/fanotify.h>
#endif

#include "proc.h"
#include "readahead.h"

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

/* Resolved interpreter paths kept. */
#define MAX_INTERPS 64

/* Milliseconds between two reads of the event queue under load. */
#define PAUSE_MS 20

/* Events read per wake-up: batches of EVENT_BUFFER bytes, at most MAX_READS of them. */
#define EVENT_BUFFER (64 * 1024)
#define MAX_READS 8

/* ---- the window bookkeeping --------------------------------------------- */

/* What the tracker knows about one pid that executed something recently. */
typedef struct PidState {
	char *interp;         /* interpreter the last image asked for, or NULL */
	gint64 exec_time;     /* us, of the last exec */
	WatchWindow *window;  /* its open start-up window, or NULL */
	GHashTable *recorded; /* paths in window->files, borrowed from them */
} PidState;

struct WatchTracker {
	WatchLimits limits;   /* the prefix lists are owned copies */
	pid_t self;
	GHashTable *pids;     /* GINT_TO_POINTER(pid) -> PidState * */
	GHashTable *last_window; /* exe path (owned) -> gint64 * start of its last window */
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

	g_free(st->interp);
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
}

/* Records path in st's window, within the caps; TRUE if it was added. */
static gboolean
record_file(const WatchTracker *tracker, PidState *st, const char *path, guint64 size)
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
	g_ptr_array_add(st->window->files, file);
	g_hash_table_add(st->recorded, file->path);
	return TRUE;
}

WatchExecResult
watch_tracker_exec(WatchTracker *tracker, pid_t pid, const char *path, guint64 size,
		   WatchImageKind kind, const char *interp, gint64 now)
{
	PidState *st;
	const gint64 *last;

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
	if (st && st->interp && strcmp(st->interp, path) == 0 &&
	    now - st->exec_time <= INTERP_TIMEOUT_US) {
		/* The loader of the image just executed: part of that start. */
		g_clear_pointer(&st->interp, g_free);
		if (st->window)
			(void)record_file(tracker, st, path, size);
		return WATCH_EXEC_INTERP;
	}

	/* A new image: whatever the pid was running before has ended. */
	if (!st) {
		st = g_new0(PidState, 1);
		g_hash_table_insert(tracker->pids, GINT_TO_POINTER(pid), st);
	}
	end_window(tracker, st);
	g_free(st->interp);
	st->interp = kind == WATCH_IMAGE_ELF && interp && *interp ? g_strdup(interp) : NULL;
	st->exec_time = now;

	if (!conf_prefix_accepts(tracker->limits.exeprefix, path))
		return WATCH_EXEC_REJECTED;

	last = g_hash_table_lookup(tracker->last_window, path);
	if (tracker->limits.max_files == 0 ||
	    (last && now - *last < tracker->limits.interval_us && now >= *last))
		return WATCH_EXEC_COUNTED;

	st->window = g_new0(WatchWindow, 1);
	st->window->exe = g_strdup(path);
	st->window->pid = pid;
	st->window->start = now;
	st->window->files = g_ptr_array_new_with_free_func(watch_file_free);
	st->recorded = g_hash_table_new(g_str_hash, g_str_equal);
	/* The program's own file is the first thing its start needs. */
	(void)record_file(tracker, st, path, size);
	{
		gint64 *start = g_new(gint64, 1);

		*start = now;
		g_hash_table_replace(tracker->last_window, g_strdup(path), start);
	}
	return WATCH_EXEC_WINDOW;
}

gboolean
watch_tracker_wants(const WatchTracker *tracker, pid_t pid)
{
	const PidState *st = g_hash_table_lookup(tracker->pids, GINT_TO_POINTER(pid));

	return st && st->window;
}

gboolean
watch_tracker_open(WatchTracker *tracker, pid_t pid, const char *path, guint64 size, gint64 now)
{
	PidState *st;

	g_return_val_if_fail(tracker != NULL, FALSE);
	g_return_val_if_fail(path != NULL, FALSE);

	st = g_hash_table_lookup(tracker->pids, GINT_TO_POINTER(pid));
	if (!st || !st->window)
		return FALSE;
	/* Over, but not expired yet: the start-up is past. */
	if (now - st->window->start >= tracker->limits.window_us || now < st->window->start)
		return FALSE;
	return record_file(tracker, st, path, size);
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
			g_clear_pointer(&st->interp, g_free);
		if (!st->window && !st->interp)
			g_hash_table_iter_remove(&iter);
	}

	/* The rate limit only needs starts within one interval. */
	g_hash_table_iter_init(&iter, tracker->last_window);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		gint64 start = *(gint64 *)value;

		if (now - start >= tracker->limits.interval_us || now < start)
			g_hash_table_iter_remove(&iter);
	}

	done = g_steal_pointer(&tracker->finished);
	tracker->finished = g_ptr_array_new_with_free_func(window_destroy);
	g_ptr_array_sort(done, compare_window_start);
	return done;
}

gboolean
watch_tracker_busy(const WatchTracker *tracker)
{
	g_return_val_if_fail(tracker != NULL, FALSE);

	return g_hash_table_size(tracker->pids) > 0 || tracker->finished->len > 0 ||
	       g_hash_table_size(tracker->last_window) > 0;
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

/* ---- resident ranges ---------------------------------------------------- */

/* Runs of resident pages, gaps up to `gap` bridged, as page numbers [2i, 2i+1). */
static guint
collect_runs(const guint8 *vec, gsize n, gsize gap, GArray *runs)
{
	g_array_set_size(runs, 0);
	for (gsize i = 0; i < n;) {
		gsize start, end;

		if (!(vec[i] & 1)) {
			i++;
			continue;
		}
		start = i;
		while (i < n && (vec[i] & 1))
			i++;
		end = i;
		if (runs->len > 0 && start - g_array_index(runs, gsize, runs->len - 1) <= gap) {
			g_array_index(runs, gsize, runs->len - 1) = end;
		} else {
			g_array_append_val(runs, start);
			g_array_append_val(runs, end);
		}
	}
	return runs->len / 2;
}

guint64
watch_spans_from_mincore(const guint8 *vec, gsize n, guint64 page_bytes, guint64 file_size,
			 gsize gap, guint max_spans, GArray *spans)
{
	g_autoptr(GArray) runs = g_array_new(FALSE, FALSE, sizeof(gsize));
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

	for (guint i = 0; i < runs->len; i += 2) {
		guint64 start = (guint64)g_array_index(runs, gsize, i) * page_bytes;
		guint64 end = (guint64)g_array_index(runs, gsize, i + 1) * page_bytes;
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
 * Residency comes from readahead's helpers (cachestat, else mincore where
 * it tells the truth), shared with the reader that skips cached pages.
 */

static guint64
page_size(void)
{
	static guint64 size;

	if (!size) {
		long v = sysconf(_SC_PAGESIZE);

		size = v > 0 ? (guint64)v : 4096;
	}
	return size;
}

void
watch_measure_exe(const Exe *exe, guint64 prefetch_seq, gboolean probe,
		  guint64 *bytes, guint64 *prefetched, guint64 *probed, guint64 *resident)
{
	const char *open_path = NULL;
	struct stat st;
	int fd = -1;

	*bytes = *prefetched = *probed = *resident = 0;
	g_return_if_fail(exe != NULL);

	for (guint i = 0; i < exe->exemaps->len; i++) {
		const Map *map = g_array_index(exe->exemaps, ExeMap, i).map;
		guint64 in_cache = 0, length;

		*bytes += map->length;
		if (prefetch_seq != 0 && map->prefetch_seq == prefetch_seq)
			*prefetched += map->length;
		if (!probe)
			continue;
		/* An exe's maps of one file are usually adjacent: open it once. */
		if (!open_path || strcmp(open_path, map->path) != 0) {
			if (fd >= 0)
				(void)close(fd);
			open_path = map->path;
			fd = readahead_open_file(map->path, &st);
		}
		/*
		 * A vanished or shrunk file cannot be resident beyond its end:
		 * probed, and not resident. A file whose residency cannot be
		 * told is not probed at all.
		 */
		if (fd < 0 || map->offset >= (guint64)st.st_size) {
			*probed += map->length;
			continue;
		}
		length = MIN(map->length, (guint64)st.st_size - map->offset);
		if (readahead_resident_bytes(fd, map->path, &st, map->offset, length, &in_cache)) {
			*probed += map->length;
			*resident += in_cache;
		}
	}
	if (fd >= 0)
		(void)close(fd);
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

/*
 * Appends the resident ranges of path; a small file with nothing
 * resident, whole (see
 * EVICTED_WHOLE_MAX). A file whose residency the kernel will not tell (see
 * readahead_resident_pages) is left out: all that is known is that it
 * was opened, not what of it was read.
 */
static void
learn_file(const char *path, GArray *ranges)
{
	g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(WatchSpan));
	g_autofree guint8 *vec = NULL;
	guint64 page = page_size(), size;
	struct stat st;
	gsize pages;
	gboolean known;
	int fd;

	fd = readahead_open_file(path, &st);
	if (fd < 0)
		return;
	size = MIN((guint64)st.st_size, MAX_EXAMINED);
	if (size == 0) {
		(void)close(fd);
		return;
	}
	pages = (gsize)((size + page - 1) / page);
	vec = g_malloc(pages);
	known = readahead_resident_pages(fd, path, &st, 0, pages, vec);
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
		g_array_append_val(ranges, range);
	}
}

/* ---- the watcher ------------------------------------------------------------ */

struct Watch {
	int fd;                   /* the fanotify group, -1 if none */
	guint fd_source;          /* main loop watch of fd, when not paused */
	guint pause_source;       /* the pause after a wake-up (see on_resume) */
	gboolean broken;          /* events of an unknown format: stopped */
	guint timer;              /* window expiry, while the tracker is busy */
	WatchTracker *tracker;
	WatchCallbacks callbacks;
	gpointer user_data;
	pid_t self;
	gboolean reads;           /* open events are watched */
	GHashTable *interps;      /* PT_INTERP text -> resolved path ("" if none) */
	char *description;
	guint8 *buffer;           /* EVENT_BUFFER bytes, aligned for the metadata */
	WatchStats stats;
	gboolean overflow_logged;
};

const WatchStats *
watch_get_stats(const Watch *watch)
{
	g_return_val_if_fail(watch != NULL, NULL);

	return &watch->stats;
}

const char *
watch_describe(const Watch *watch)
{
	g_return_val_if_fail(watch != NULL, NULL);

	return watch->description;
}

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

static void
finish_windows(Watch *watch)
{
	g_autoptr(GPtrArray) done = NULL;

	done = watch_tracker_expire(watch->tracker, g_get_monotonic_time(), pid_alive, NULL);
	for (guint i = 0; i < done->len; i++) {
		const WatchWindow *window = g_ptr_array_index(done, i);
		g_autoptr(GArray) ranges = watch_ranges_new();

		/*
		 * No byte cap here: the window also holds the libraries the
		 * program opened to map them, which the spy subtracts before it
		 * applies maxreadkb to what is new. Capping here first let a
		 * program's mapped files use up its read budget. The work is
		 * bounded by maxreadfiles files of at most MAX_EXAMINED bytes.
		 */
		for (guint j = 0; j < window->files->len; j++)
			learn_file(((WatchFile *)g_ptr_array_index(window->files, j))->path,
				   ranges);
		if (ranges->len == 0)
			continue;
		watch->stats.learned++;
		if (watch->callbacks.learned)
			watch->callbacks.learned(window->exe, ranges, watch->user_data);
	}
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

#ifdef HAVE_SYS_FANOTIFY_H

/* The interpreter an image names, resolved as the kernel will open it. */
static const char *
resolve_interp(Watch *watch, const char *text)
{
	const char *cached = g_hash_table_lookup(watch->interps, text);
	char *resolved;

	if (cached)
		return *cached ? cached : NULL;
	/*
	 * The kernel reports the opened file by its real path: PT_INTERP says
	 * /lib64/ld-linux-x86-64.so.2, the event says
	 * /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 on a merged /usr.
	 * A machine has a handful of interpreters; anyone can write a binary
	 * naming any path, though, so the cache is bounded.
	 */
	if (g_hash_table_size(watch->interps) >= MAX_INTERPS)
		g_hash_table_remove_all(watch->interps);
	resolved = realpath(text, NULL);
	g_hash_table_insert(watch->interps, g_strdup(text), resolved ? resolved : g_strdup(""));
	return resolved;
}

/* Classifies an executed file from its head; *interp gets the resolved loader. */
static WatchImageKind
examine_image(Watch *watch, int fd, const char **interp)
{
	guint8 head[IMAGE_HEAD];
	char text[PATH_MAX + 1];
	guint64 off, len;
	ssize_t n;
	WatchImageKind kind;

	*interp = NULL;
	n = pread(fd, head, sizeof(head), 0);
	if (n <= 0)
		return WATCH_IMAGE_OTHER;
	kind = watch_parse_image(head, (gsize)n, &off, &len);
	if (kind != WATCH_IMAGE_ELF || len == 0)
		return kind;
	if (off + len <= (guint64)n) {
		memcpy(text, head + off, (size_t)len);
	} else if (pread(fd, text, (size_t)len, (off_t)off) != (ssize_t)len) {
		return kind;
	}
	text[len] = '\0';
	if (text[0] == '/' && strlen(text) == len)
		*interp = resolve_interp(watch, text);
	return kind;
}

static void
handle_exec(Watch *watch, pid_t pid, int fd, gint64 now)
{
	g_autofree char *raw = NULL;
	g_autofree char *path = NULL;
	const char *interp;
	WatchImageKind kind;
	WatchExecResult result;
	struct stat st;

	watch->stats.execs++;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	raw = proc_fd_path(fd);
	/* The same rules as for /proc/PID/exe, so both name a program alike. */
	if (!raw || !(path = proc_sanitize_exe(raw)))
		return;
	kind = examine_image(watch, fd, &interp);
	result = watch_tracker_exec(watch->tracker, pid, path, (guint64)st.st_size, kind, interp, now);
	if (result == WATCH_EXEC_WINDOW)
		watch->stats.windows++;
	if (result == WATCH_EXEC_WINDOW || result == WATCH_EXEC_COUNTED) {
		watch->stats.starts++;
		if (watch->callbacks.exec)
			watch->callbacks.exec(path, pid, watch->user_data);
	}
}

static void
handle_open(Watch *watch, pid_t pid, int fd, gint64 now)
{
	g_autofree char *path = NULL;
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	path = proc_fd_path(fd);
	/* A file deleted since it was opened cannot be read ahead later. */
	if (!path || path[0] != '/' || g_str_has_suffix(path, " (deleted)"))
		return;
	if (watch_tracker_open(watch->tracker, pid, path, (guint64)st.st_size, now))
		watch->stats.recorded++;
}

/*
 * One read() of events. Returns how many were read (0: none pending);
 * *more is TRUE when the buffer came back full, so more may be waiting.
 */
static guint
read_batch(Watch *watch, gboolean *more)
{
	const struct fanotify_event_metadata *ev;
	guint count = 0;
	gint64 now;
	ssize_t len;

	*more = FALSE;
	len = read(watch->fd, watch->buffer, EVENT_BUFFER);
	if (len <= 0)
		return 0;
	now = g_get_monotonic_time();
	for (ev = (const void *)watch->buffer; FAN_EVENT_OK(ev, len); ev = FAN_EVENT_NEXT(ev, len)) {
		pid_t pid = (pid_t)ev->pid;

		count++;
		if (ev->vers != FANOTIFY_METADATA_VERSION) {
			/*
			 * A layout this code does not know: nothing more can be
			 * read safely. No caller to hand this to (this is the
			 * event loop), so it is logged here, once.
			 */
			g_warning("fanotify event format %u, expected %u: not learning from file opens",
				  (unsigned)ev->vers, (unsigned)FANOTIFY_METADATA_VERSION);
			watch->broken = TRUE;
			return count;
		}
		watch->stats.events++;
		if (ev->mask & FAN_Q_OVERFLOW) {
			watch->stats.overflows++;
			if (!watch->overflow_logged)
				g_info("fanotify queue overflowed: some opens were not seen");
			watch->overflow_logged = TRUE;
		}
		if (ev->fd < 0)
			continue;
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
	*more = (size_t)len + FAN_EVENT_METADATA_LEN > EVENT_BUFFER;
	return count;
}

/* Reads what is pending, a bounded number of batches; returns the events read. */
static guint
dispatch(Watch *watch)
{
	guint count = 0;
	gboolean more = TRUE;

	for (int i = 0; i < MAX_READS && more && !watch->broken; i++)
		count += read_batch(watch, &more);
	ensure_timer(watch);
	return count;
}

void
watch_dispatch(Watch *watch)
{
	g_return_if_fail(watch != NULL);

	(void)dispatch(watch);
}

static gboolean on_events(gint fd, GIOCondition condition, gpointer user_data);

/*
 * After a wake-up the descriptor is left alone for PAUSE_MS, then read
 * again; only when a pause finds nothing is it watched again. An event
 * after a quiet spell (a user starting a program) is read at once, so its
 * start is measured before the program has loaded much; a burst (a build
 * starting compilers and opening headers) is read in batches of PAUSE_MS
 * worth of events. Each wake-up of a daemon costs far more than one event
 * (measured on a virtual machine: about a hundred microseconds against a
 * few), so this bounds the daemon's cost under load at 1000 / PAUSE_MS
 * wake-ups a second; the kernel queues up to 16384 events meanwhile.
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
		watch->fd_source = g_unix_fd_add(watch->fd, G_IO_IN, on_events, watch);
	return G_SOURCE_REMOVE;
}

static gboolean
on_events(gint fd, GIOCondition condition, gpointer user_data)
{
	Watch *watch = user_data;

	(void)fd;
	(void)condition;
	watch->fd_source = 0;
	(void)dispatch(watch);
	if (!watch->broken)
		watch->pause_source = g_timeout_add(PAUSE_MS, on_resume, watch);
	return G_SOURCE_REMOVE;
}

/* Adds one directory to dirs unless a directory on the same file system is there. */
static void
add_mark_dir(GPtrArray *dirs, GArray *devs, const char *prefix)
{
	g_autofree char *dir = g_strdup(prefix);
	struct stat st;

	/* A prefix is raw ("/lib" also matches "/lib64"): climb to a directory. */
	for (;;) {
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			break;
		if (strcmp(dir, "/") == 0)
			return;
		{
			char *parent = g_path_get_dirname(dir);

			g_free(dir);
			dir = parent;
		}
	}
	for (guint i = 0; i < devs->len; i++)
		if (g_array_index(devs, dev_t, i) == st.st_dev)
			return;
	g_array_append_val(devs, st.st_dev);
	g_ptr_array_add(dirs, g_steal_pointer(&dir));
}

/* The directories whose file systems hold what the two prefix lists accept. */
static void
collect_mark_dirs(char *const *lists[2], GPtrArray *dirs)
{
	g_autoptr(GArray) devs = g_array_new(FALSE, FALSE, sizeof(dev_t));

	for (int l = 0; l < 2; l++) {
		char *const *list = lists[l];

		for (guint i = 0; list && list[i]; i++) {
			if (list[i][0] == '/')
				add_mark_dir(dirs, devs, list[i]);
		}
		/* A path no prefix matches is accepted: the root file system at least. */
		if (conf_prefix_accepts(list, "/"))
			add_mark_dir(dirs, devs, "/");
	}
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
watch_open(Watch *watch, const Conf *conf, GError **error)
{
	const unsigned int event_flags = O_RDONLY | O_LARGEFILE | O_CLOEXEC;
	g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
	char *const *lists[2] = { conf->exeprefix, conf->mapprefix };
	guint64 mask = FAN_OPEN_EXEC | (watch->reads ? FAN_OPEN : 0);
	guint fs_marks = 0, mount_marks = 0;
	int last_errno = 0;

	/*
	 * O_NOATIME: the descriptors the kernel opens for the daemon must not
	 * touch every file's atime; kernels that refuse the flag here get
	 * the group without it.
	 */
	watch->fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK,
				  event_flags | O_NOATIME);
	if (watch->fd < 0 && errno == EINVAL)
		watch->fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, event_flags);
	if (watch->fd < 0)
		return set_error_errno(error, errno, "fanotify_init");

	collect_mark_dirs(lists, dirs);
	for (guint i = 0; i < dirs->len; i++) {
		const char *dir = g_ptr_array_index(dirs, i);

		/*
		 * A file system mark sees every mount of it, including bind
		 * mounts; kernels before 4.20 and some file systems (btrfs
		 * subvolumes: EXDEV) only allow a mount mark.
		 */
		if (fanotify_mark(watch->fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask,
				  AT_FDCWD, dir) == 0) {
			fs_marks++;
			continue;
		}
		last_errno = errno;
		if (fanotify_mark(watch->fd, FAN_MARK_ADD | FAN_MARK_MOUNT, mask, AT_FDCWD, dir) == 0) {
			mount_marks++;
			continue;
		}
		last_errno = errno;
	}
	if (fs_marks + mount_marks == 0) {
		if (last_errno == EINVAL)
			return set_error_errno(error, last_errno,
					       "fanotify_mark (FAN_OPEN_EXEC needs Linux 5.0)");
		return set_error_errno(error, last_errno ? last_errno : ENOENT, "fanotify_mark");
	}
	watch->description = g_strdup_printf("fanotify on %u file system%s (%u whole, %u mount only), "
					     "watching %s", fs_marks + mount_marks,
					     fs_marks + mount_marks == 1 ? "" : "s",
					     fs_marks, mount_marks,
					     watch->reads ? "starts and start-up opens" : "starts");
	return TRUE;
}

#else /* !HAVE_SYS_FANOTIFY_H */

void
watch_dispatch(Watch *watch)
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
watch_open(Watch *watch, const Conf *conf, GError **error)
{
	(void)watch; (void)conf;
	g_set_error(error, WATCH_ERROR, WATCH_ERROR_UNSUPPORTED,
		    "built without <sys/fanotify.h>");
	return FALSE;
}

#endif

Watch *
watch_new(const Conf *conf, const WatchCallbacks *callbacks, gpointer user_data, GError **error)
{
	g_autoptr(Watch) watch = NULL;
	WatchLimits limits = { 0 };

	g_return_val_if_fail(conf != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	watch = g_new0(Watch, 1);
	watch->fd = -1;
	watch->self = getpid();
	watch->reads = conf->learnreads && conf->maxreadfiles > 0 && conf->maxreadkb > 0;
	if (callbacks)
		watch->callbacks = *callbacks;
	watch->user_data = user_data;
	watch->interps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free);
	watch->buffer = g_malloc(EVENT_BUFFER);

	limits.window_us = conf->startupwindow * G_USEC_PER_SEC;
	limits.interval_us = conf->cycle * G_USEC_PER_SEC;
	/* Without open events a window could only ever hold the exe itself. */
	limits.max_files = watch->reads ? (guint)conf->maxreadfiles : 0;
	limits.exeprefix = conf->exeprefix;
	limits.mapprefix = conf->mapprefix;
	watch->tracker = watch_tracker_new(&limits, watch->self);

	if (!watch_open(watch, conf, error))
		return NULL;
	watch->fd_source = g_unix_fd_add(watch->fd, G_IO_IN, on_events, watch);
	return g_steal_pointer(&watch);
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
	if (watch->fd >= 0)
		(void)close(watch->fd);
	watch_tracker_free(watch->tracker);
	g_hash_table_unref(watch->interps);
	g_free(watch->description);
	g_free(watch->buffer);
	g_free(watch);
}
