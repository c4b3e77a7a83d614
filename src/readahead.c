/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Readahead: asks the kernel to bring chosen file ranges into the page
 * cache, in an order that is kind to the disk, without ever blocking the
 * main loop or touching anything that is not a plain file.
 *
 * A batch goes through three steps. readahead_sort() orders the ranges
 * (by path, by inode, or by the physical position FIEMAP reports), and
 * readahead_merge() fuses ranges of one file that touch or overlap. The
 * reader then opens each file (lstat, open without following symlinks or
 * blocking, fstat and compare with the lstat) and issues readahead(2) in
 * chunks, because the kernel silently truncates one call to the device's
 * readahead window: on a disk with read_ahead_kb = 8192 one call on a
 * 256 MiB file caches only its first 8 MiB.
 *
 * The learned files are a snapshot of the past. After a package upgrade
 * many of them are gone, and a writable directory may hold a FIFO or a
 * device node under a learned name; both are skipped and counted, and
 * messages are capped per batch so a stale model cannot flood the log.
 *
 * Work runs in the calling thread, in a pool of worker threads, or (via
 * readahead_start()) in a background batch thread whose result is handed
 * back to the main context.
 */
#include "config.h"

#include "readahead.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifdef HAVE_LINUX_FIEMAP_H
#include <linux/fiemap.h>
#include <linux/fs.h>
#endif

/*
 * The chunk of one readahead(2) call. The kernel limits one call to
 * max(read_ahead_kb, max_sectors_kb) of the file's device (mm/readahead.c,
 * force_page_cache_ra: max(bdi->io_pages, ra->ra_pages)) and drops the
 * rest without an error. A chunk below that limit only costs syscalls;
 * one above it loses the tail of every chunk. So:
 *  - when sysfs tells both values, the chunk is exactly their maximum,
 *    even if it is small (a USB bridge with max_sectors_kb = 120 and
 *    read_ahead_kb = 0 would lose data with a 128 KiB floor);
 *  - when the device is unknown (tmpfs, NFS, btrfs's anonymous devices,
 *    no /sys), 128 KiB: the kernel's default window (VM_READAHEAD_PAGES),
 *    below which nobody but an administrator who turned readahead off
 *    sets a device;
 *  - never more than 8 MiB: a call allocates and submits its whole chunk
 *    before it returns, so a window of, say, 64 MiB would keep a worker
 *    inside one syscall for a long time and queue a large burst of idle
 *    class I/O at once; 8 MiB chunks already need only 128 calls per GiB.
 */
#define CHUNK_UNKNOWN (128u * 1024u)
#define CHUNK_MIN ((guint64)4096)
#define CHUNK_MAX ((guint64)8 * 1024 * 1024)

/* At most this many warnings (and as many notices) per batch, then a count. */
#define MAX_MESSAGES 10

/* ---- requests ---- */

static void
request_clear(gpointer data)
{
	ReadaheadRequest *req = data;

	g_clear_pointer(&req->path, g_free);
}

GArray *
readahead_requests_new(void)
{
	GArray *requests = g_array_new(FALSE, TRUE, sizeof(ReadaheadRequest));

	g_array_set_clear_func(requests, request_clear);
	return requests;
}

void
readahead_requests_add(GArray *requests, const char *path, guint64 offset, guint64 length)
{
	ReadaheadRequest req = { 0 };

	g_return_if_fail(requests != NULL);
	g_return_if_fail(path != NULL);
	req.path = g_strdup(path);
	req.offset = offset;
	req.length = length;
	g_array_append_val(requests, req);
}

/* The end of a range, saturating instead of wrapping on hostile lengths. */
static guint64
request_end(const ReadaheadRequest *req)
{
	return req->length > G_MAXUINT64 - req->offset ? G_MAXUINT64 : req->offset + req->length;
}

/* ---- opening a file safely ---- */

typedef enum {
	OPEN_OK,
	OPEN_MISSING,      /* ENOENT or ENOTDIR: vanished, normal after upgrades */
	OPEN_NOT_REGULAR,  /* the lstat mode says what it is instead */
	OPEN_CHANGED,      /* replaced between lstat and open */
	OPEN_ERROR,        /* *ret_errno says why */
} OpenResult;

static const char *
mode_name(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISLNK(mode))
		return "a symbolic link";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "of an unknown type";
}

/*
 * Opens path for readahead if, and only if, it is a regular file. The
 * lstat comes first so that a FIFO (whose open could block or steal a
 * writer's data) or a device (whose open can have side effects) is never
 * opened. O_NOFOLLOW refuses a symlink that appeared since, O_NONBLOCK
 * keeps a FIFO that appeared since from blocking, and the fstat check
 * rejects any other swap in between. O_NOATIME keeps the daemon from
 * dirtying every inode it touches; it needs ownership or CAP_FOWNER, so
 * EPERM retries without it.
 *
 * On OPEN_OK, *ret_fd is the descriptor and *ret_st the fstat; on
 * OPEN_NOT_REGULAR *ret_st holds the lstat.
 */
static OpenResult
open_regular(const char *path, int *ret_fd, struct stat *ret_st, int *ret_errno)
{
	const int flags = O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC;
	struct stat lst, fst;
	int fd;

	*ret_fd = -1;
	*ret_errno = 0;
	if (lstat(path, &lst) != 0) {
		*ret_errno = errno;
		return errno == ENOENT || errno == ENOTDIR ? OPEN_MISSING : OPEN_ERROR;
	}
	if (!S_ISREG(lst.st_mode)) {
		*ret_st = lst;
		return OPEN_NOT_REGULAR;
	}
	fd = open(path, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = open(path, flags);
	if (fd < 0) {
		*ret_errno = errno;
		if (errno == ENOENT || errno == ENOTDIR)
			return OPEN_MISSING;
		/* O_NOFOLLOW met a symlink that replaced the file. */
		return errno == ELOOP ? OPEN_CHANGED : OPEN_ERROR;
	}
	if (fstat(fd, &fst) != 0) {
		*ret_errno = errno;
		(void)close(fd);
		return OPEN_ERROR;
	}
	if (!S_ISREG(fst.st_mode) || fst.st_dev != lst.st_dev || fst.st_ino != lst.st_ino) {
		(void)close(fd);
		return OPEN_CHANGED;
	}
	*ret_fd = fd;
	*ret_st = fst;
	return OPEN_OK;
}

/* ---- sorting ---- */

static int
cmp_u64(guint64 a, guint64 b)
{
	return (a > b) - (a < b);
}

/* The tie-break of every strategy: path, offset, then the longer range first. */
static int
cmp_request_path(const ReadaheadRequest *a, const ReadaheadRequest *b)
{
	int c = strcmp(a->path, b->path);

	if (c != 0)
		return c;
	c = cmp_u64(a->offset, b->offset);
	if (c != 0)
		return c;
	return cmp_u64(b->length, a->length);
}

static gint
cmp_request_path_cb(gconstpointer a, gconstpointer b)
{
	return cmp_request_path(a, b);
}

/* How much is known about a request's place on the disk. */
enum {
	RANK_LOCATED = 0,   /* block is the physical byte of offset */
	RANK_EXAMINED = 1,  /* block is the inode number */
	RANK_UNKNOWN = 2,   /* could not be examined: sorts last, by path */
};

typedef struct {
	guint rank;
	ReadaheadRequest req;
} SortItem;

static int
cmp_sort_item(const void *pa, const void *pb)
{
	const SortItem *a = pa, *b = pb;
	int c = cmp_u64(a->rank, b->rank);

	if (c == 0)
		c = cmp_u64((guint64)a->req.dev, (guint64)b->req.dev);
	if (c == 0)
		c = cmp_u64(a->req.block, b->req.block);
	if (c == 0)
		c = cmp_request_path(&a->req, &b->req);
	return c;
}

/*
 * The physical byte at which reading [offset, offset + length) starts,
 * from FIEMAP (unlike FIBMAP it needs no capability). One extent is
 * enough: the first one overlapping the range. No FIEMAP_FLAG_SYNC: it
 * would write back dirty data just to sort. Returns FALSE on a hole, on
 * an extent whose place is not decided yet (delayed allocation) and on
 * file systems without FIEMAP (tmpfs, many network file systems).
 */
static gboolean
physical_offset(int fd, guint64 offset, guint64 length, guint64 *ret_block)
{
#ifdef HAVE_LINUX_FIEMAP_H
	/* A struct fiemap with room for one extent after it. */
	union {
		struct fiemap fm;
		guint8 bytes[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	} q;
	const struct fiemap_extent *fe;

	memset(&q, 0, sizeof(q));
	q.fm.fm_start = offset;
	q.fm.fm_length = length > 0 ? length : 1;
	q.fm.fm_flags = 0;
	q.fm.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &q.fm) != 0 || q.fm.fm_mapped_extents == 0)
		return FALSE;
	fe = &q.fm.fm_extents[0];
	if (fe->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC))
		return FALSE;
	/* The extent may begin before offset, or after it past a hole. */
	if (fe->fe_logical <= offset)
		*ret_block = fe->fe_physical + (offset - fe->fe_logical);
	else
		*ret_block = fe->fe_physical;
	return TRUE;
#else
	(void)fd; (void)offset; (void)length; (void)ret_block;
	return FALSE;
#endif
}

/*
 * Fills dev, inode, block and the rank of the requests [first, first + n),
 * which all name the same file: one lstat (SORT_INODE) or one safe open
 * (SORT_BLOCK) per file, then one FIEMAP per range.
 */
static void
examine_file(SortItem *items, guint n, int strategy)
{
	const char *path = items[0].req.path;
	struct stat st;
	int fd = -1, err;
	guint i;

	if (strategy == SORT_INODE) {
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
			goto unknown;
	} else if (open_regular(path, &fd, &st, &err) != OPEN_OK) {
		goto unknown;
	}
	for (i = 0; i < n; i++) {
		ReadaheadRequest *req = &items[i].req;

		req->dev = st.st_dev;
		req->inode = (guint64)st.st_ino;
		req->block = req->inode;
		items[i].rank = RANK_EXAMINED;
		if (fd >= 0 && physical_offset(fd, req->offset, req->length, &req->block))
			items[i].rank = RANK_LOCATED;
	}
	if (fd >= 0)
		(void)close(fd);
	return;

unknown:
	for (i = 0; i < n; i++) {
		items[i].req.dev = 0;
		items[i].req.inode = 0;
		items[i].req.block = 0;
		items[i].rank = RANK_UNKNOWN;
	}
}

void
readahead_sort(GArray *requests, int strategy)
{
	g_autofree SortItem *items = NULL;
	guint i, start;

	g_return_if_fail(requests != NULL);
	if (strategy != SORT_NONE && strategy != SORT_PATH && strategy != SORT_INODE &&
	    strategy != SORT_BLOCK) {
		g_warning("unknown sort strategy %d, sorting by block", strategy);
		strategy = SORT_BLOCK;
	}
	if (strategy == SORT_NONE || requests->len < 1)
		return;

	/* Path order first: it is SORT_PATH, and it puts each file's ranges together. */
	g_array_sort(requests, cmp_request_path_cb);
	if (strategy == SORT_PATH)
		return;

	items = g_new0(SortItem, requests->len);
	for (i = 0; i < requests->len; i++)
		items[i].req = g_array_index(requests, ReadaheadRequest, i);
	for (start = 0; start < requests->len; start = i) {
		for (i = start + 1; i < requests->len; i++)
			if (strcmp(items[i].req.path, items[start].req.path) != 0)
				break;
		examine_file(&items[start], i - start, strategy);
	}
	qsort(items, requests->len, sizeof(*items), cmp_sort_item);
	/* The paths move with their structs: nothing is freed or copied. */
	for (i = 0; i < requests->len; i++)
		g_array_index(requests, ReadaheadRequest, i) = items[i].req;
}

/* ---- merging ---- */

void
readahead_merge(GArray *requests)
{
	ReadaheadRequest *reqs;
	guint i, out;

	g_return_if_fail(requests != NULL);
	if (requests->len < 2)
		return;
	reqs = (ReadaheadRequest *)(void *)requests->data;
	out = 0;
	for (i = 1; i < requests->len; i++) {
		ReadaheadRequest *cur = &reqs[out], *next = &reqs[i];

		/*
		 * Touching or overlapping ranges of one file become their
		 * union. Sorted input always has next->offset >= cur->offset;
		 * the general form also serves unsorted (SORT_NONE) input.
		 * The union keeps the larger end: 0.6.4 took next's end and
		 * so shrank [0,100) followed by [10,20) to [0,20).
		 */
		if (strcmp(cur->path, next->path) == 0 && next->offset <= request_end(cur) &&
		    cur->offset <= request_end(next)) {
			guint64 start = MIN(cur->offset, next->offset);
			guint64 end = MAX(request_end(cur), request_end(next));

			cur->offset = start;
			cur->length = end - start;
			g_clear_pointer(&next->path, g_free);
			continue;
		}
		out++;
		if (out != i) {
			reqs[out] = *next;
			next->path = NULL;
		}
	}
	/* The slots past `out` hold NULL paths now, so shrinking frees nothing twice. */
	g_array_set_size(requests, out + 1);
}

/* ---- reading ---- */

typedef struct {
	const ReadaheadRequest *reqs;
	GMutex lock;            /* guards everything below */
	ReadaheadStats stats;
	GHashTable *opened;     /* paths (borrowed from reqs) of files opened */
	GHashTable *chunks;     /* gint64 dev -> chunk size in bytes */
	guint warnings;         /* warnings shown */
	guint warnings_dropped; /* warnings not shown because of the cap */
	guint notices;          /* infos shown about odd files */
	guint notices_dropped;
} Batch;

/* One work item: consecutive requests of one file, opened once. */
typedef struct {
	guint first;
	guint count;
} Group;

static void batch_message(Batch *batch, GLogLevelFlags level, const char *format, ...)
	G_GNUC_PRINTF(3, 4);

/* Logs a warning or info unless this batch already logged MAX_MESSAGES of them. */
static void
batch_message(Batch *batch, GLogLevelFlags level, const char *format, ...)
{
	gboolean show;
	va_list ap;

	g_mutex_lock(&batch->lock);
	if (level == G_LOG_LEVEL_WARNING) {
		show = batch->warnings < MAX_MESSAGES;
		if (show)
			batch->warnings++;
		else
			batch->warnings_dropped++;
	} else {
		show = batch->notices < MAX_MESSAGES;
		if (show)
			batch->notices++;
		else
			batch->notices_dropped++;
	}
	g_mutex_unlock(&batch->lock);
	if (!show)
		return;
	va_start(ap, format);
	g_logv(G_LOG_DOMAIN, level, format, ap);
	va_end(ap);
}

/* Reads a small decimal sysfs value; FALSE if absent or malformed. */
static gboolean
read_sysfs_u64(const char *path, guint64 *ret)
{
	g_autofree char *text = NULL;
	char *end;
	guint64 value;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return FALSE;
	errno = 0;
	value = g_ascii_strtoull(text, &end, 10);
	if (errno != 0 || end == text || (*end != '\0' && *end != '\n'))
		return FALSE;
	*ret = value;
	return TRUE;
}

/* The per-call limit of a block queue directory, in KiB, or 0 if unknown. */
static guint64
queue_limit_kb(const char *queue_dir)
{
	g_autofree char *ra_path = g_build_filename(queue_dir, "read_ahead_kb", NULL);
	g_autofree char *ms_path = g_build_filename(queue_dir, "max_sectors_kb", NULL);
	guint64 ra_kb = 0, ms_kb = 0;
	gboolean have_ra = read_sysfs_u64(ra_path, &ra_kb);
	gboolean have_ms = read_sysfs_u64(ms_path, &ms_kb);

	if (!have_ra && !have_ms)
		return 0;
	return MAX(ra_kb, ms_kb);
}

/* Looks the chunk of a device up in sysfs (see CHUNK_UNKNOWN for the choice). */
static guint64
device_chunk(dev_t dev)
{
	g_autofree char *queue = NULL;
	g_autofree char *node = NULL;
	g_autofree char *bdi = NULL;
	char *real;
	guint64 kb = 0, chunk;

	/* A whole disk: /sys/dev/block/M:m/queue. */
	node = g_strdup_printf("/sys/dev/block/%u:%u", major(dev), minor(dev));
	queue = g_build_filename(node, "queue", NULL);
	kb = queue_limit_kb(queue);
	if (kb == 0) {
		/* A partition: the queue belongs to its parent disk. */
		real = realpath(node, NULL);
		if (real) {
			g_autofree char *parent = g_path_get_dirname(real);

			g_free(queue);
			queue = g_build_filename(parent, "queue", NULL);
			kb = queue_limit_kb(queue);
			free(real);
		}
	}
	if (kb == 0) {
		/* NFS and FUSE register a backing device under their anonymous number. */
		bdi = g_strdup_printf("/sys/class/bdi/%u:%u/read_ahead_kb", major(dev), minor(dev));
		if (!read_sysfs_u64(bdi, &kb))
			kb = 0;
	}
	if (kb == 0)
		return CHUNK_UNKNOWN;
	chunk = kb > CHUNK_MAX / 1024 ? CHUNK_MAX : kb * 1024;
	return MAX(chunk, CHUNK_MIN);
}

/* The chunk for dev, looked up once per batch (an administrator may retune it). */
static guint64
batch_chunk(Batch *batch, dev_t dev)
{
	gint64 key = (gint64)dev, *stored;
	gpointer value;
	guint64 chunk;

	g_mutex_lock(&batch->lock);
	value = g_hash_table_lookup(batch->chunks, &key);
	g_mutex_unlock(&batch->lock);
	if (value)
		return (guint64)GPOINTER_TO_SIZE(value);

	/* Two workers may both look a new device up; both get the same answer. */
	chunk = device_chunk(dev);
	stored = g_new(gint64, 1);
	*stored = key;
	g_mutex_lock(&batch->lock);
	g_hash_table_replace(batch->chunks, stored, GSIZE_TO_POINTER((gsize)chunk));
	g_mutex_unlock(&batch->lock);
	return chunk;
}

/*
 * Issues [offset, offset + length) of fd in chunks. readahead(2) answers
 * EINVAL on files it cannot handle (some kernels do so on tmpfs and other
 * file systems without a readahead method); posix_fadvise(WILLNEED) then
 * does the same job for the rest of the file. Returns 0 or an errno.
 */
static int
read_range(int fd, guint64 offset, guint64 length, guint64 chunk, gboolean *use_fadvise,
	   ReadaheadStats *stats)
{
	guint64 pos = offset, end = offset + length;

	while (pos < end) {
		guint64 n = MIN(chunk, end - pos);
		int err = 0;

		if (!*use_fadvise) {
			stats->syscalls++;
			if (readahead(fd, (off_t)pos, (size_t)n) != 0)
				err = errno;
			if (err == EINVAL)
				*use_fadvise = TRUE;
		}
		if (*use_fadvise) {
			stats->syscalls++;
			err = posix_fadvise(fd, (off_t)pos, (off_t)n, POSIX_FADV_WILLNEED);
		}
		if (err != 0)
			return err;
		stats->bytes += n;
		pos += n;
	}
	return 0;
}

static void
read_group(Batch *batch, const Group *group)
{
	const ReadaheadRequest *reqs = batch->reqs + group->first;
	const char *path = reqs[0].path;
	ReadaheadStats local = { 0 };
	gboolean use_fadvise = FALSE, opened = FALSE;
	struct stat st;
	guint64 chunk = CHUNK_UNKNOWN;
	int fd, err;
	guint i;

	switch (open_regular(path, &fd, &st, &err)) {
	case OPEN_OK:
		opened = TRUE;
		chunk = batch_chunk(batch, st.st_dev);
		break;
	case OPEN_MISSING:
		g_debug("readahead: %s: %s, skipping", path, g_strerror(err));
		local.skipped = group->count;
		break;
	case OPEN_NOT_REGULAR:
		batch_message(batch, G_LOG_LEVEL_INFO, "readahead: %s is %s, not a regular file, skipping",
			      path, mode_name(st.st_mode));
		local.skipped = group->count;
		break;
	case OPEN_CHANGED:
		batch_message(batch, G_LOG_LEVEL_INFO,
			      "readahead: %s was replaced while being opened, skipping", path);
		local.skipped = group->count;
		break;
	case OPEN_ERROR:
	default:
		batch_message(batch, G_LOG_LEVEL_WARNING, "readahead: cannot open %s: %s, ignoring",
			      path, g_strerror(err));
		local.failed = group->count;
		break;
	}

	for (i = 0; opened && i < group->count; i++) {
		const ReadaheadRequest *req = &reqs[i];
		guint64 size = (guint64)st.st_size, length;

		/* The file may have shrunk since the model saw it mapped. */
		if (req->offset >= size) {
			g_debug("readahead: %s: offset %" G_GUINT64_FORMAT " is past its end, skipping",
				path, req->offset);
			local.skipped++;
			continue;
		}
		/* stats.bytes counts what the kernel was asked for, after this clamp. */
		length = MIN(req->length, size - req->offset);
		err = read_range(fd, req->offset, length, chunk, &use_fadvise, &local);
		if (err != 0) {
			batch_message(batch, G_LOG_LEVEL_WARNING, "readahead: %s: %s, ignoring",
				      path, g_strerror(err));
			local.failed++;
		}
	}
	if (opened)
		(void)close(fd);

	g_mutex_lock(&batch->lock);
	if (opened)
		g_hash_table_add(batch->opened, (gpointer)path);
	batch->stats.failed += local.failed;
	batch->stats.skipped += local.skipped;
	batch->stats.bytes += local.bytes;
	batch->stats.syscalls += local.syscalls;
	g_mutex_unlock(&batch->lock);
}

static void
pool_worker(gpointer data, gpointer user_data)
{
	read_group(user_data, data);
}

ReadaheadStats
readahead_run(GArray *requests, int strategy, int maxprocs)
{
	g_autoptr(GArray) groups = NULL;
	ReadaheadStats stats = { 0 };
	GThreadPool *pool = NULL;
	Batch batch = { 0 };
	guint i, start;

	g_return_val_if_fail(requests != NULL, stats);
	readahead_sort(requests, strategy);
	readahead_merge(requests);
	if (requests->len == 0)
		return stats;

	g_mutex_init(&batch.lock);
	batch.reqs = (const ReadaheadRequest *)(const void *)requests->data;
	batch.opened = g_hash_table_new(g_str_hash, g_str_equal);
	batch.chunks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);

	groups = g_array_new(FALSE, FALSE, sizeof(Group));
	for (start = 0; start < requests->len; start = i) {
		Group group = { start, 0 };

		for (i = start + 1; i < requests->len; i++)
			if (strcmp(batch.reqs[i].path, batch.reqs[start].path) != 0)
				break;
		group.count = i - start;
		g_array_append_val(groups, group);
	}

	if (maxprocs > 1 && groups->len > 1) {
		g_autoptr(GError) error = NULL;
		int threads = (int)MIN((guint)maxprocs, groups->len);

		pool = g_thread_pool_new(pool_worker, &batch, threads, TRUE, &error);
		if (!pool)
			g_warning("cannot start %d readahead threads: %s, reading in one",
				  threads, error->message);
	}
	for (i = 0; i < groups->len; i++) {
		Group *group = &g_array_index(groups, Group, i);

		/* The pool's queue is FIFO, so the disk still sees the sorted order. */
		if (pool)
			g_thread_pool_push(pool, group, NULL);
		else
			read_group(&batch, group);
	}
	if (pool)
		g_thread_pool_free(pool, FALSE, TRUE);

	/*
	 * The workers are done; taking the lock once more makes that
	 * ordering visible to thread checkers, which cannot see inside the
	 * pool's own synchronisation.
	 */
	g_mutex_lock(&batch.lock);
	if (batch.warnings_dropped > 0)
		g_warning("readahead: %u more read errors not shown", batch.warnings_dropped);
	if (batch.notices_dropped > 0)
		g_info("readahead: %u more odd files skipped, not shown", batch.notices_dropped);

	stats = batch.stats;
	stats.requests = requests->len;
	stats.files = g_hash_table_size(batch.opened);
	g_mutex_unlock(&batch.lock);
	g_hash_table_destroy(batch.chunks);
	g_hash_table_destroy(batch.opened);
	g_mutex_clear(&batch.lock);
	return stats;
}

/* ---- background batches ---- */

typedef struct {
	GArray *requests;
	int strategy;
	int maxprocs;
	ReadaheadDone done;
	gpointer user_data;
	ReadaheadStats stats;
	GThread *thread;
	guint generation;
} Job;

/*
 * At most one batch is in flight. `busy` is set from readahead_start()
 * until done has been called, so the daemon never stacks batches; the
 * job is handed back either by the idle callback the batch thread queues
 * or by readahead_wait(), whichever comes first. The generation stops an
 * idle callback of an old batch (already finished by readahead_wait())
 * from finishing a newer one.
 */
static gint busy;
static GMutex job_lock;
static Job *current_job;     /* guarded by job_lock */
static guint job_generation; /* guarded by job_lock */

static void
job_free(Job *job)
{
	if (job->requests)
		g_array_unref(job->requests);
	g_free(job);
}

/* Joins the current batch if it is `generation` (or any, with 0) and calls done. */
static void
job_finish(guint generation)
{
	Job *job;

	g_mutex_lock(&job_lock);
	job = current_job;
	if (job && (generation == 0 || job->generation == generation))
		current_job = NULL;
	else
		job = NULL;
	g_mutex_unlock(&job_lock);
	if (!job)
		return;

	g_thread_join(job->thread);
	/* Cleared first, so done may start the next batch. */
	g_atomic_int_set(&busy, 0);
	if (job->done)
		job->done(&job->stats, job->user_data);
	job_free(job);
}

static gboolean
job_finish_idle(gpointer data)
{
	job_finish(GPOINTER_TO_UINT(data));
	return G_SOURCE_REMOVE;
}

static gpointer
job_thread(gpointer data)
{
	Job *job = data;

	job->stats = readahead_run(job->requests, job->strategy, job->maxprocs);
	g_clear_pointer(&job->requests, g_array_unref);
	g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, job_finish_idle,
			GUINT_TO_POINTER(job->generation), NULL);
	return NULL;
}

gboolean
readahead_start(GArray *requests, int strategy, int maxprocs,
		ReadaheadDone done, gpointer user_data)
{
	g_autoptr(GError) error = NULL;
	Job *job;

	g_return_val_if_fail(requests != NULL, FALSE);
	if (!g_atomic_int_compare_and_exchange(&busy, 0, 1)) {
		g_array_unref(requests);
		return FALSE;
	}

	if (maxprocs > 0) {
		job = g_new0(Job, 1);
		job->requests = requests;
		job->strategy = strategy;
		job->maxprocs = maxprocs;
		job->done = done;
		job->user_data = user_data;
		g_mutex_lock(&job_lock);
		/* Never 0: 0 means "any batch" to job_finish(). */
		if (++job_generation == 0)
			job_generation = 1;
		job->generation = job_generation;
		current_job = job;
		/* Under the lock, so job_finish() never sees a job without its thread. */
		job->thread = g_thread_try_new("readahead", job_thread, job, &error);
		if (!job->thread)
			current_job = NULL;
		g_mutex_unlock(&job_lock);
		if (job->thread)
			return TRUE;
		g_warning("cannot start the readahead thread: %s, reading in the main thread",
			  error->message);
		job->requests = NULL;
		job_free(job);
	}

	{
		ReadaheadStats stats = readahead_run(requests, strategy, maxprocs);

		g_array_unref(requests);
		g_atomic_int_set(&busy, 0);
		if (done)
			done(&stats, user_data);
	}
	return TRUE;
}

gboolean
readahead_busy(void)
{
	return g_atomic_int_get(&busy) != 0;
}

void
readahead_wait(void)
{
	job_finish(0);
}
