/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Readahead: asks the kernel to bring chosen file ranges into the page
 * cache, in an order that is kind to the disk, without ever blocking the
 * main loop or touching anything that is not a plain file.
 *
 * A slice of a batch goes through four steps. Its ranges are put in path
 * order and readahead_merge_near() fuses ranges of one file that overlap
 * or lie less than MERGE_GAP_BYTES apart. Each file is then examined once (lstat, open without following
 * symlinks or blocking, fstat and compare with the lstat): one that
 * cannot be read, or whose ranges are all cached, is settled there. What
 * is left is ordered as readahead_sort() would (by path, by inode, or by
 * the physical position FIEMAP reports), and the reader opens each file
 * again and issues readahead(2) in chunks, because the kernel silently
 * truncates one call to the device's readahead window: on a disk with
 * read_ahead_kb = 8192 one call on a 256 MiB file caches only its first
 * 8 MiB.
 *
 * Most of what a batch asks for is usually cached already: the programs
 * predicted this cycle were predicted last cycle too, and 0.6.4 asked
 * the kernel for the same hundreds of megabytes again every cycle. With
 * check_residency the reader first asks which pages of a range are in
 * the page cache. cachestat(2) (Linux 6.5) answers with one count per
 * range: all cached skips the range, none cached reads it whole. Only a
 * range that is partly cached (or a kernel without cachestat) needs
 * mincore(2) over a read-only mapping, page by page, and then only the
 * missing runs are requested, neighbouring runs merged across small
 * cached gaps so that a fragmented range does not become a storm of tiny
 * calls.
 *
 * The reads themselves run in the idle I/O class, set once on the
 * process (readahead_set_idle_class()) and inherited by every thread;
 * each batch checks its threads and reports any that is not idle.
 *
 * The idle class only helps where the I/O scheduler honours it (bfq); with
 * none or mq-deadline, and in a throttled cgroup, a launch's reads queue
 * behind whatever the daemon has queued. So the daemon queues little:
 * a worker reads one chunk and waits for it (wait_read()) before the
 * next, at most READAHEAD_INFLIGHT_MAX bytes of a batch are in flight,
 * and readahead_hold() stops new reads while a program starts cold. And
 * it reads what matters first: the selection comes most likely first and
 * is read in slices (slicekb), each sorted for the disk, so a batch cut
 * short by a newer prediction (readahead_supersede()) or by the start it
 * was meant for has read the likeliest files. After a cache drop, on a
 * disk of 100 MB/s and 300 requests per second, a batch sorted whole
 * took longer than a cycle and read the predicted program's files last.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/capability.h>

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
 *  - never more than 2 MiB: a call queues its whole chunk at once, and a
 *    program that starts meanwhile waits behind it wherever the I/O
 *    scheduler ignores the idle class (2 MiB is 20 ms at 100 MB/s); 2 MiB
 *    chunks still need only 512 calls per GiB.
 */
#define CHUNK_UNKNOWN (128u * 1024u)
#define CHUNK_MIN ((guint64)4096)
#define CHUNK_MAX ((guint64)2 * 1024 * 1024)

/*
 * What a request counts against READAHEAD_INFLIGHT_MAX at least: a small
 * read costs the disk a request whatever its size, so at most four are
 * in flight (4 x 300 requests/s is 13 ms ahead of a starting program).
 */
#define INFLIGHT_MIN_CHARGE ((guint64)512 * 1024)

/* At most this many warnings (and as many notices) per batch, then a count. */
#define MAX_MESSAGES 10

/*
 * Ranges of a file at most this far apart are read as one. A disk
 * request costs about as much as reading a few hundred KiB more: 330 KiB
 * on a disk of 300 requests and 100 MB/s, over 1 MiB on a rotating one.
 * Programs touch large mappings (and read files) in scattered 64 KiB
 * windows; read one by one, 75 MB of them kept such a disk busy for
 * over 2 s where 0.6.4 read 60 MB of whole files in half a second.
 */
#define MERGE_GAP_BYTES (256 * 1024)

/* Pages examined per mmap() and mincore() call: 16 MiB of 4 KiB pages. */
#define MINCORE_WINDOW_PAGES 4096

/*
 * cachestat(2), Linux 6.5. The C library headers of older systems name
 * neither the call nor its structures, so both are spelled out here. Its
 * number is 451 on every architecture that shares the common syscall
 * table (all but alpha, mips and x32, which offset it); elsewhere the
 * reader uses mincore() only.
 */
#if defined(SYS_cachestat)
#define NR_CACHESTAT SYS_cachestat
#elif (defined(__x86_64__) && !defined(__ILP32__)) || defined(__i386__) || \
	defined(__aarch64__) || defined(__arm__) || defined(__riscv) || \
	defined(__powerpc__) || defined(__s390__) || defined(__loongarch__)
#define NR_CACHESTAT 451
#endif

struct ra_cachestat_range {
	guint64 off;
	guint64 len;            /* 0 would mean "to the end of the file" */
};

struct ra_cachestat {
	guint64 nr_cache;       /* pages of the range in the page cache */
	guint64 nr_dirty;
	guint64 nr_writeback;
	guint64 nr_evicted;
	guint64 nr_recently_evicted;
};

/* Set once cachestat() answered ENOSYS (or a test asked): mincore only. */
static gint no_cachestat;
/* Set once mincore() was refused outright (a seccomp filter): no residency checks. */
static gint no_mincore;

/* The I/O class bits of ioprio_get()/ioprio_set() (linux/ioprio.h). */
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_IDLE 3

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
 * Fills dev, inode, block and the rank of the n requests of one file from
 * its stat, and with fd >= 0 (SORT_BLOCK) one FIEMAP per range.
 */
static void
locate_requests(SortItem *items, guint n, const struct stat *st, int fd)
{
	for (guint i = 0; i < n; i++) {
		ReadaheadRequest *req = &items[i].req;

		req->dev = st->st_dev;
		req->inode = (guint64)st->st_ino;
		req->block = req->inode;
		items[i].rank = RANK_EXAMINED;
		if (fd >= 0 && physical_offset(fd, req->offset, req->length, &req->block))
			items[i].rank = RANK_LOCATED;
	}
}

/* The requests of a file that could not be examined sort last, by path. */
static void
unknown_requests(SortItem *items, guint n)
{
	for (guint i = 0; i < n; i++) {
		items[i].req.dev = 0;
		items[i].req.inode = 0;
		items[i].req.block = 0;
		items[i].rank = RANK_UNKNOWN;
	}
}

/*
 * Fills the sort keys of the requests [first, first + n), which all name
 * the same file: one lstat (SORT_INODE) or one safe open (SORT_BLOCK)
 * per file, then one FIEMAP per range.
 */
static void
examine_file(SortItem *items, guint n, int strategy)
{
	const char *path = items[0].req.path;
	struct stat st;
	int fd = -1, err;

	if (strategy == SORT_INODE) {
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			unknown_requests(items, n);
			return;
		}
	} else if (open_regular(path, &fd, &st, &err) != OPEN_OK) {
		unknown_requests(items, n);
		return;
	}
	locate_requests(items, n, &st, fd);
	if (fd >= 0)
		(void)close(fd);
}

/* A strategy this module knows; anything else is SORT_BLOCK, with a warning. */
static int
known_strategy(int strategy)
{
	if (strategy == SORT_NONE || strategy == SORT_PATH || strategy == SORT_INODE ||
	    strategy == SORT_BLOCK)
		return strategy;
	g_warning("unknown sort strategy %d, sorting by block", strategy);
	return SORT_BLOCK;
}

void
readahead_sort(GArray *requests, int strategy)
{
	g_autofree SortItem *items = NULL;
	guint i, start;

	g_return_if_fail(requests != NULL);
	strategy = known_strategy(strategy);
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

/* b + gap, or G_MAXUINT64 where that overflows. */
static guint64
add_saturating(guint64 b, guint64 gap)
{
	return b > G_MAXUINT64 - gap ? G_MAXUINT64 : b + gap;
}

void
readahead_merge_near(GArray *requests, guint64 gap)
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
		 * Ranges of one file that overlap, touch or lie at most gap
		 * bytes apart become one range over both. Sorted input always
		 * has next->offset >= cur->offset; the general form also
		 * serves unsorted (SORT_NONE) input. The union keeps the
		 * larger end: 0.6.4 took next's end and so shrank [0,100)
		 * followed by [10,20) to [0,20).
		 */
		if (strcmp(cur->path, next->path) == 0 &&
		    next->offset <= add_saturating(request_end(cur), gap) &&
		    cur->offset <= add_saturating(request_end(next), gap)) {
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

void
readahead_merge(GArray *requests)
{
	readahead_merge_near(requests, 0);
}

/* ---- reading ---- */

typedef struct {
	const ReadaheadRequest *reqs;  /* the slice being read */
	const gint *stop;              /* set by readahead_supersede(); NULL: never */
	gboolean check_residency;
	gboolean cap_fowner;    /* mincore() tells the truth about every file */
	guint id;               /* tells the threads of this batch from an earlier one's */
	GMutex lock;            /* guards everything below */
	ReadaheadStats stats;
	GHashTable *opened;     /* paths (borrowed from reqs) of files opened */
	GHashTable *chunks;     /* gint64 dev -> chunk size in bytes */
	guint warnings;         /* warnings shown */
	guint warnings_dropped; /* warnings not shown because of the cap */
	guint notices;          /* infos shown about odd files */
	guint notices_dropped;
	LogLimit *warning_limit;  /* across batches, or NULL (ReadaheadOptions) */
	LogLimit *notice_limit;
	guint64 inflight;       /* bytes requested and not yet read */
	GCond inflight_cond;    /* signalled when inflight falls */
} Batch;

static gboolean
batch_stopped(const Batch *batch)
{
	return batch->stop && g_atomic_int_get(batch->stop);
}

/* Monotonic time (us) before which no new read starts: readahead_hold(). */
static gint64 hold_until;
static GMutex hold_lock;

void
readahead_hold(gint64 until)
{
	g_mutex_lock(&hold_lock);
	if (until == 0 || until > hold_until)
		hold_until = until;
	g_mutex_unlock(&hold_lock);
}

/* Sleeps through a hold, in short naps so that a stop is seen soon. */
static void
hold_wait(const Batch *batch)
{
	for (;;) {
		gint64 until, now;

		g_mutex_lock(&hold_lock);
		until = hold_until;
		g_mutex_unlock(&hold_lock);
		now = g_get_monotonic_time();
		if (now >= until || batch_stopped(batch))
			return;
		g_usleep((gulong)MIN(until - now, (gint64)50000));
	}
}

/*
 * Waits until n more bytes may be in flight. A request larger than the
 * cap goes alone, so a chunk never waits forever.
 */
static void
inflight_take(Batch *batch, guint64 n)
{
	g_mutex_lock(&batch->lock);
	while (batch->inflight > 0 && batch->inflight + n > READAHEAD_INFLIGHT_MAX)
		g_cond_wait(&batch->inflight_cond, &batch->lock);
	batch->inflight += n;
	g_mutex_unlock(&batch->lock);
}

static void
inflight_give(Batch *batch, guint64 n)
{
	g_mutex_lock(&batch->lock);
	batch->inflight -= n;
	g_cond_broadcast(&batch->inflight_cond);
	g_mutex_unlock(&batch->lock);
}

/*
 * Returns once the page at offset `last` has been read. readahead(2)
 * only queues the reads; reading one byte of the chunk's last page waits
 * on that page, which the disk fills with (or after) the rest of the
 * chunk. The descriptor is in random-access mode (see read_group), so a
 * page readahead(2) did not queue costs one page, not a new window.
 */
static void
wait_read(int fd, guint64 last)
{
	char byte;

	while (pread(fd, &byte, 1, (off_t)last) < 0 && errno == EINTR)
		;
}

/* One work item: consecutive requests of one file, opened once. */
typedef struct {
	guint first;
	guint count;
} Group;

static void batch_message(Batch *batch, GLogLevelFlags level, const char *format, ...)
	G_GNUC_PRINTF(3, 4);

/* Whether a limit (NULL: none) lets one more message through now. */
static gboolean
limit_allows(LogLimit *limit)
{
	return !limit || log_limit_allow(limit, g_get_monotonic_time());
}

/*
 * Logs a warning or info unless this batch already logged MAX_MESSAGES of
 * them or the limit across batches holds it back.
 */
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
	if (!show ||
	    !limit_allows(level == G_LOG_LEVEL_WARNING ? batch->warning_limit : batch->notice_limit))
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
 * Issues [offset, offset + length) of fd in chunks, each read before the
 * next is issued and all of the batch's together within the in-flight
 * cap (see readahead.h). readahead(2) answers
 * EINVAL on files it cannot handle (some kernels do so on tmpfs and other
 * file systems without a readahead method); posix_fadvise(WILLNEED) then
 * does the same job for the rest of the file. Returns 0 or an errno
 * (ECANCELED once the batch is told to stop).
 */
static int
read_range(Batch *batch, int fd, guint64 offset, guint64 length, guint64 chunk,
	   gboolean *use_fadvise, ReadaheadStats *stats)
{
	guint64 pos = offset, end = offset + length;

	while (pos < end) {
		guint64 n = MIN(chunk, end - pos);
		int err = 0;

		hold_wait(batch);
		if (batch_stopped(batch))
			return ECANCELED;
		inflight_take(batch, MAX(n, INFLIGHT_MIN_CHARGE));
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
		if (err == 0)
			wait_read(fd, pos + n - 1);
		inflight_give(batch, MAX(n, INFLIGHT_MIN_CHARGE));
		if (err != 0)
			return err;
		stats->bytes += n;
		pos += n;
	}
	return 0;
}

/* ---- residency ---- */

typedef enum {
	RESIDENT_UNKNOWN,   /* could not tell: read the range whole */
	RESIDENT_NONE,      /* no page cached: read the range whole */
	RESIDENT_ALL,       /* every page cached: read nothing */
	RESIDENT_PART,      /* the missing runs are listed */
} Residency;

/* A byte range of a file to request. */
typedef struct {
	guint64 offset;
	guint64 length;
} Run;

static guint64
page_size(void)
{
	static gsize size;

	if (g_once_init_enter(&size)) {
		long n = sysconf(_SC_PAGESIZE);

		g_once_init_leave(&size, n > 0 ? (gsize)n : 4096);
	}
	return size;
}

void
readahead_use_cachestat(gboolean use)
{
	g_atomic_int_set(&no_cachestat, use ? 0 : 1);
}

/*
 * Counts the cached pages of [offset, offset + length) with cachestat().
 * The kernel counts every page the range touches, the partial first and
 * last ones included, and clips large folios to the range. Returns
 * RESIDENT_UNKNOWN if the call failed: ENOSYS (an older kernel, or a
 * seccomp filter written before the call existed, as systemd's are),
 * EPERM (some kernels refuse files the caller can neither write nor
 * owns; on a file the caller owns it can only be a seccomp filter),
 * EOPNOTSUPP (hugetlbfs). ENOSYS and a filter's EPERM are remembered:
 * the call is not tried again.
 */
static gboolean
cachestat_count(int fd, const struct stat *st, guint64 offset, guint64 length,
		guint64 *ret_pages)
{
#ifdef NR_CACHESTAT
	struct ra_cachestat_range range = { offset, length };
	struct ra_cachestat cs = { 0 };

	if (g_atomic_int_get(&no_cachestat))
		return FALSE;
	if (syscall(NR_CACHESTAT, fd, &range, &cs, 0) != 0) {
		int err = errno;

		if (err == ENOSYS || (err == EPERM && st->st_uid == geteuid())) {
			g_atomic_int_set(&no_cachestat, 1);
			g_debug("readahead: cachestat(): %s, using mincore()", g_strerror(err));
		}
		return FALSE;
	}
	*ret_pages = cs.nr_cache;
	return TRUE;
#else
	(void)fd; (void)st; (void)offset; (void)length; (void)ret_pages;
	return FALSE;
#endif
}

static Residency
cachestat_probe(int fd, const struct stat *st, guint64 offset, guint64 length,
		ReadaheadStats *stats)
{
	guint64 pages, cached;

	if (!cachestat_count(fd, st, offset, length, &cached))
		return RESIDENT_UNKNOWN;
	stats->probes++;
	pages = (offset + length - 1) / page_size() - offset / page_size() + 1;
	if (cached == 0)
		return RESIDENT_NONE;
	return cached >= pages ? RESIDENT_ALL : RESIDENT_PART;
}

/*
 * Whether the calling thread has CAP_FOWNER in its effective set. Asked
 * of the kernel rather than assumed from uid 0: the shipped systemd unit
 * runs preload as root with only two capabilities, and CAP_FOWNER is not
 * one of them.
 */
static gboolean
have_cap_fowner(void)
{
	struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &header, data) != 0)
		return FALSE;
	return (data[CAP_TO_INDEX(CAP_FOWNER)].effective & CAP_TO_MASK(CAP_FOWNER)) != 0;
}

/*
 * Whether mincore() tells this process the truth about the file. Since
 * Linux 5.2 it reports every page as resident unless the caller owns the
 * file, may write it, or has CAP_FOWNER (mm/mincore.c, can_do_mincore):
 * trusting it otherwise would skip files that are not cached at all.
 * AT_EACCESS makes faccessat() judge with the effective ids and
 * capabilities, as the kernel does for mincore().
 */
static gboolean
mincore_is_truthful(const Batch *batch, const char *path, const struct stat *st)
{
	return batch->cap_fowner || st->st_uid == geteuid() ||
	       faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0;
}

/*
 * Appends the missing bytes [start, end) to runs, extending the last run
 * instead when less than MERGE_GAP_BYTES of cached pages separate them.
 * The cached pages cost the disk nothing (readahead(2) skips them), and
 * one call for the holes instead of one each saves a syscall, a wait
 * (read_range()) and, because the kernel plugs the reads of one call, a
 * dispatch to the device per hole: the page cache reclaimer of some
 * systems evicts single cold pages, leaving files with many small holes.
 */
static void
runs_add(GArray *runs, guint64 start, guint64 end)
{
	if (runs->len > 0) {
		Run *last = &g_array_index(runs, Run, runs->len - 1);

		if (start - (last->offset + last->length) < MERGE_GAP_BYTES) {
			last->length = end - last->offset;
			return;
		}
	}
	g_array_append_vals(runs, &(Run){ start, end - start }, 1);
}

/*
 * Lists in runs the parts of [offset, offset + length) that are not in
 * the page cache, from mincore() over read-only shared mappings of
 * MINCORE_WINDOW_PAGES pages at a time. Mapping a file neither reads nor
 * faults in any page. The runs are clipped to the range, which need not
 * be page-aligned.
 */
static Residency
mincore_probe(int fd, guint64 offset, guint64 length, GArray *runs, ReadaheadStats *stats)
{
	const guint64 page = page_size();
	const guint64 end = offset + length;
	guint64 pos, pages = 0, missing = 0;
	unsigned char vec[MINCORE_WINDOW_PAGES];

	g_array_set_size(runs, 0);
	for (pos = offset / page * page; pos < end;) {
		guint64 n = MIN((guint64)MINCORE_WINDOW_PAGES, (end - pos + page - 1) / page);
		size_t len = (size_t)(n * page);
		void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)pos);
		int rc, err;

		if (map == MAP_FAILED)
			return RESIDENT_UNKNOWN;
		rc = mincore(map, len, vec);
		err = errno;
		(void)munmap(map, len);
		if (rc != 0) {
			/*
			 * The kernel's own errors are EAGAIN, EFAULT, EINVAL and
			 * ENOMEM; EPERM and ENOSYS come from a seccomp filter
			 * (systemd's @system-service lacks mincore) and will
			 * not change.
			 */
			if ((err == EPERM || err == ENOSYS) &&
			    !g_atomic_int_get(&no_mincore)) {
				g_atomic_int_set(&no_mincore, 1);
				g_info("readahead: mincore(): %s; ranges whose residency cachestat() "
				       "cannot settle are read whole", g_strerror(err));
			}
			return RESIDENT_UNKNOWN;
		}
		stats->probes++;
		for (guint64 i = 0; i < n; i++) {
			if (vec[i] & 1)
				continue;
			runs_add(runs, MAX(pos + i * page, offset), MIN(pos + (i + 1) * page, end));
			missing++;
		}
		pages += n;
		pos += len;
	}
	if (missing == 0)
		return RESIDENT_ALL;
	return missing == pages ? RESIDENT_NONE : RESIDENT_PART;
}

/*
 * Which parts of [offset, offset + length) of the open file path need
 * reading. cachestat() settles the common cases (all or nothing cached)
 * in one call; mincore() finds the runs of a partly cached range, and
 * stands in for cachestat() where it is missing or refused.
 */
static Residency
find_missing(const Batch *batch, int fd, const char *path, const struct stat *st,
	     guint64 offset, guint64 length, GArray *runs, ReadaheadStats *stats)
{
	Residency r = cachestat_probe(fd, st, offset, length, stats);

	if (r == RESIDENT_ALL || r == RESIDENT_NONE)
		return r;
	if (g_atomic_int_get(&no_mincore) || !mincore_is_truthful(batch, path, st))
		return RESIDENT_UNKNOWN;
	return mincore_probe(fd, offset, length, runs, stats);
}

/* ---- residency, for the other modules ---- */

int
readahead_open_file(const char *path, struct stat *ret_st)
{
	int fd, err;

	g_return_val_if_fail(path != NULL && ret_st != NULL, -1);

	return open_regular(path, &fd, ret_st, &err) == OPEN_OK ? fd : -1;
}

/* have_cap_fowner(), asked once per process. */
static gboolean
process_cap_fowner(void)
{
	static gsize answer;  /* 0 not asked yet, 1 no, 2 yes */

	if (g_once_init_enter(&answer))
		g_once_init_leave(&answer, have_cap_fowner() ? 2 : 1);
	return answer == 2;
}

/* Whether mincore() can be asked about path, and tells the truth about it. */
static gboolean
mincore_usable(const char *path, const struct stat *st)
{
	return !g_atomic_int_get(&no_mincore) &&
	       (process_cap_fowner() || st->st_uid == geteuid() ||
		faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0);
}

gboolean
readahead_resident_pages(int fd, const char *path, const struct stat *st,
			 guint64 offset, gsize pages, guint8 *vec)
{
	const guint64 page = page_size();

	g_return_val_if_fail(path != NULL && st != NULL && vec != NULL, FALSE);
	g_return_val_if_fail(offset % page == 0, FALSE);

	if (!mincore_usable(path, st))
		return FALSE;
	for (gsize done = 0; done < pages;) {
		gsize n = MIN((gsize)MINCORE_WINDOW_PAGES, pages - done);
		size_t len = (size_t)(n * page);
		void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd,
				 (off_t)(offset + (guint64)done * page));
		int rc;

		if (map == MAP_FAILED)
			return FALSE;
		rc = mincore(map, len, vec + done);
		(void)munmap(map, len);
		if (rc != 0)
			return FALSE;
		done += n;
	}
	return TRUE;
}

gboolean
readahead_resident_bytes(int fd, const char *path, const struct stat *st,
			 guint64 offset, guint64 length, guint64 *ret_bytes)
{
	const guint64 page = page_size();
	g_autofree guint8 *vec = NULL;
	guint64 cached, start, pages;

	g_return_val_if_fail(path != NULL && st != NULL && ret_bytes != NULL, FALSE);

	*ret_bytes = 0;
	if (length == 0)
		return TRUE;
	if (length > G_MAXUINT64 - offset)
		return FALSE;
	/* cachestat() counts every page the range touches, partial ones too. */
	if (cachestat_count(fd, st, offset, length, &cached)) {
		*ret_bytes = MIN(cached * page, length);
		return TRUE;
	}
	start = offset / page * page;
	pages = (offset + length - start + page - 1) / page;
	if (pages > G_MAXSIZE / 2)
		return FALSE;
	vec = g_malloc((gsize)pages);
	if (!readahead_resident_pages(fd, path, st, start, (gsize)pages, vec))
		return FALSE;
	cached = 0;
	for (guint64 i = 0; i < pages; i++)
		cached += vec[i] & 1;
	*ret_bytes = MIN(cached * page, length);
	return TRUE;
}

/* ---- I/O priority ---- */

/* Whether the calling thread is in the idle I/O class (IOPRIO_WHO_PROCESS, 0: this thread). */
static gboolean
thread_is_idle_class(void)
{
#ifdef SYS_ioprio_get
	long prio = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);

	return prio >= 0 && (prio >> IOPRIO_CLASS_SHIFT) == IOPRIO_CLASS_IDLE;
#else
	return FALSE;
#endif
}

gboolean
readahead_set_idle_class(GError **error)
{
	/*
	 * An init system may have set it already (systemd's
	 * IOSchedulingClass=idle), and may forbid setting it again
	 * (@resources denied): nothing to do then.
	 */
	if (thread_is_idle_class())
		return TRUE;
#ifdef SYS_ioprio_set
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		    IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT) == 0)
		return TRUE;
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
		    "cannot set the idle I/O class: %s", g_strerror(errno));
#else
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOSYS,
		    "cannot set the idle I/O class: not supported on this system");
#endif
	return FALSE;
}

/*
 * open_regular() for the count requests of path, saying why it failed: a
 * file that vanished (normal after upgrades) only at debug level, an odd
 * file or a swap as an info, any other error as a warning, all capped per
 * batch. The requests of a file that cannot be opened are counted in
 * local as skipped (or failed, for an error).
 */
static gboolean
open_checked(Batch *batch, const char *path, guint count, int *ret_fd, struct stat *ret_st,
	     ReadaheadStats *local)
{
	int err;

	switch (open_regular(path, ret_fd, ret_st, &err)) {
	case OPEN_OK:
		return TRUE;
	case OPEN_MISSING:
		g_debug("readahead: %s: %s, skipping", path, g_strerror(err));
		local->skipped += count;
		break;
	case OPEN_NOT_REGULAR:
		batch_message(batch, G_LOG_LEVEL_INFO, "readahead: %s is %s, not a regular file, skipping",
			      path, mode_name(ret_st->st_mode));
		local->skipped += count;
		break;
	case OPEN_CHANGED:
		batch_message(batch, G_LOG_LEVEL_INFO,
			      "readahead: %s was replaced while being opened, skipping", path);
		local->skipped += count;
		break;
	case OPEN_ERROR:
	default:
		batch_message(batch, G_LOG_LEVEL_WARNING, "readahead: cannot open %s: %s, ignoring",
			      path, g_strerror(err));
		local->failed += count;
		break;
	}
	return FALSE;
}

/* Adds one file's figures to the batch's. */
static void
batch_add_stats(Batch *batch, const ReadaheadStats *local)
{
	g_mutex_lock(&batch->lock);
	batch->stats.failed += local->failed;
	batch->stats.skipped += local->skipped;
	batch->stats.bytes += local->bytes;
	batch->stats.syscalls += local->syscalls;
	batch->stats.resident_bytes += local->resident_bytes;
	batch->stats.resident_ranges += local->resident_ranges;
	batch->stats.probes += local->probes;
	batch->stats.threads += local->threads;
	batch->stats.threads_not_idle += local->threads_not_idle;
	batch->stats.dropped += local->dropped;
	g_mutex_unlock(&batch->lock);
}

/* The batch a thread last read for: its I/O class is checked once per batch. */
static __thread guint thread_batch_id;
static gint batch_ids;

static void
read_group(Batch *batch, const Group *group)
{
	const ReadaheadRequest *reqs = batch->reqs + group->first;
	const char *path = reqs[0].path;
	ReadaheadStats local = { 0 };
	g_autoptr(GArray) runs = NULL;
	gboolean use_fadvise = FALSE, opened = FALSE;
	struct stat st;
	guint64 chunk = CHUNK_UNKNOWN;
	int fd, err;
	guint i;

	if (batch_stopped(batch)) {
		g_mutex_lock(&batch->lock);
		batch->stats.dropped += group->count;
		g_mutex_unlock(&batch->lock);
		return;
	}
	if (thread_batch_id != batch->id) {
		thread_batch_id = batch->id;
		local.threads = 1;
		local.threads_not_idle = thread_is_idle_class() ? 0 : 1;
	}

	opened = open_checked(batch, path, group->count, &fd, &st, &local);
	if (opened) {
		chunk = batch_chunk(batch, st.st_dev);
		/* For wait_read(): no kernel readahead window on its one-byte reads. */
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
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
		err = 0;
		if (!batch->check_residency || length == 0) {
			err = read_range(batch, fd, req->offset, length, chunk, &use_fadvise, &local);
		} else {
			if (!runs)
				runs = g_array_new(FALSE, FALSE, sizeof(Run));
			switch (find_missing(batch, fd, path, &st, req->offset, length, runs, &local)) {
			case RESIDENT_ALL:
				local.resident_bytes += length;
				local.resident_ranges++;
				break;
			case RESIDENT_PART:
				/* What the runs leave out is cached, whether or not a read fails. */
				local.resident_bytes += length;
				for (guint r = 0; r < runs->len; r++)
					local.resident_bytes -= g_array_index(runs, Run, r).length;
				for (guint r = 0; r < runs->len && err == 0; r++) {
					const Run *run = &g_array_index(runs, Run, r);

					err = read_range(batch, fd, run->offset, run->length, chunk,
							 &use_fadvise, &local);
				}
				break;
			case RESIDENT_NONE:
			case RESIDENT_UNKNOWN:
			default:
				err = read_range(batch, fd, req->offset, length, chunk,
						 &use_fadvise, &local);
				break;
			}
		}
		if (err == ECANCELED) {
			local.dropped += group->count - i;
			break;
		}
		if (err != 0) {
			batch_message(batch, G_LOG_LEVEL_WARNING, "readahead: %s: %s, ignoring",
				      path, g_strerror(err));
			local.failed++;
		}
	}
	if (opened) {
		(void)close(fd);
		g_mutex_lock(&batch->lock);
		g_hash_table_add(batch->opened, (gpointer)path);
		g_mutex_unlock(&batch->lock);
	}
	batch_add_stats(batch, &local);
}

static void
pool_worker(gpointer data, gpointer user_data)
{
	read_group(user_data, data);
}

/*
 * Examines the file of the n requests items (one file) once, before
 * anything is sorted or read, and settles what needs no reading: a file
 * that cannot be opened (reported as read_group() would), and with
 * check_residency a file whose ranges are all cached already (one
 * cachestat() per range). Returns FALSE for a file still to read; its
 * requests then get their sort keys from the same descriptor. In steady
 * state nearly every file is settled here, by one open, so nothing is
 * located on the disk and no worker thread starts.
 */
static gboolean
probe_file(Batch *batch, SortItem *items, guint n, int strategy)
{
	const char *path = items[0].req.path;
	ReadaheadStats local = { 0 };
	struct stat st;
	int fd;

	if (!open_checked(batch, path, n, &fd, &st, &local)) {
		batch_add_stats(batch, &local);
		return TRUE;
	}
	for (guint i = 0; i < n; i++) {
		const ReadaheadRequest *req = &items[i].req;
		guint64 size = (guint64)st.st_size, length;

		if (req->offset >= size) {
			local.skipped++;
			continue;
		}
		length = MIN(req->length, size - req->offset);
		if (length > 0 && (!batch->check_residency ||
				   cachestat_probe(fd, &st, req->offset, length, &local) != RESIDENT_ALL)) {
			/* read_group() counts it all again, from its own checks. */
			locate_requests(items, n, &st, strategy == SORT_BLOCK ? fd : -1);
			(void)close(fd);
			return FALSE;
		}
		/* Without the check an empty range is only nothing to read. */
		if (batch->check_residency) {
			local.resident_bytes += length;
			local.resident_ranges++;
		}
	}
	(void)close(fd);
	g_mutex_lock(&batch->lock);
	g_hash_table_add(batch->opened, (gpointer)path);
	g_mutex_unlock(&batch->lock);
	batch_add_stats(batch, &local);
	return TRUE;
}

/* The runs of consecutive requests of one file in reqs[0 .. n). */
static GArray *
group_requests(const ReadaheadRequest *reqs, guint n)
{
	GArray *groups = g_array_new(FALSE, FALSE, sizeof(Group));
	guint i, start;

	for (start = 0; start < n; start = i) {
		Group group = { start, 0 };

		for (i = start + 1; i < n; i++)
			if (strcmp(reqs[i].path, reqs[start].path) != 0)
				break;
		group.count = i - start;
		g_array_append_val(groups, group);
	}
	return groups;
}

/*
 * Reads one slice of the batch. It is put in path order and merged, so
 * that each file is examined once (probe_file()): what needs no reading,
 * the steady state, costs one open and no thread. What is left is sorted
 * by the strategy and read. Sorting only that keeps the FIEMAP calls of
 * SORT_BLOCK off the cached files. Merging in path order also fuses the
 * overlapping ranges of a file that a physical order would keep apart.
 */
static void
run_slice(Batch *batch, GArray *slice, const ReadaheadOptions *options)
{
	g_autoptr(GArray) probed = NULL;
	g_autoptr(GArray) groups = NULL;
	g_autofree SortItem *items = NULL;
	g_autofree ReadaheadRequest *order = NULL;
	GThreadPool *pool = NULL;
	int strategy = known_strategy(options->strategy);
	gboolean probe;
	guint i, n = 0;

	if (strategy != SORT_NONE)
		g_array_sort(slice, cmp_request_path_cb);
	readahead_merge_near(slice, MERGE_GAP_BYTES);
	batch->stats.requests += slice->len;
	batch->stats.slices++;

	/* The requests still to read, with their sort keys (paths borrowed from slice). */
	probe = options->check_residency || strategy == SORT_INODE || strategy == SORT_BLOCK;
	items = g_new0(SortItem, MAX(slice->len, 1));
	probed = group_requests((const ReadaheadRequest *)(const void *)slice->data, slice->len);
	for (i = 0; i < probed->len; i++) {
		const Group *group = &g_array_index(probed, Group, i);

		/* Opening a file may read its inode from the disk: held too. */
		hold_wait(batch);
		if (batch_stopped(batch)) {
			g_mutex_lock(&batch->lock);
			batch->stats.dropped += group->count;
			g_mutex_unlock(&batch->lock);
			continue;
		}
		for (guint j = 0; j < group->count; j++) {
			items[n + j].req = g_array_index(slice, ReadaheadRequest, group->first + j);
			items[n + j].rank = RANK_UNKNOWN;
		}
		if (!probe || !probe_file(batch, &items[n], group->count, strategy))
			n += group->count;
	}
	if (strategy == SORT_INODE || strategy == SORT_BLOCK)
		qsort(items, n, sizeof(*items), cmp_sort_item);
	order = g_new(ReadaheadRequest, MAX(n, 1));
	for (i = 0; i < n; i++)
		order[i] = items[i].req;
	batch->reqs = order;
	groups = group_requests(order, n);

	if (options->maxprocs > 1 && groups->len > 1) {
		g_autoptr(GError) error = NULL;
		int threads = (int)MIN((guint)options->maxprocs, groups->len);

		pool = g_thread_pool_new(pool_worker, batch, threads, TRUE, &error);
		if (!pool && limit_allows(batch->warning_limit))
			g_warning("cannot start %d readahead threads: %s, reading in one",
				  threads, error->message);
	}
	for (i = 0; i < groups->len; i++) {
		Group *group = &g_array_index(groups, Group, i);

		/* The pool's queue is FIFO, so the disk still sees the sorted order. */
		if (pool)
			g_thread_pool_push(pool, group, NULL);
		else
			read_group(batch, group);
	}
	if (pool)
		g_thread_pool_free(pool, FALSE, TRUE);
}

guint
readahead_slice_end(const GArray *requests, guint start, guint64 slice_bytes)
{
	const ReadaheadRequest *reqs = (const ReadaheadRequest *)(const void *)requests->data;
	guint64 bytes;
	guint i;

	if (start >= requests->len)
		return requests->len;
	if (slice_bytes == 0)
		return requests->len;
	bytes = reqs[start].length;
	for (i = start + 1; i < requests->len; i++) {
		if (bytes >= slice_bytes || reqs[i].length > slice_bytes - bytes)
			break;
		bytes += reqs[i].length;
	}
	return i;
}

static ReadaheadStats
run_batch(GArray *requests, const ReadaheadOptions *options, const gint *stop)
{
	g_autoptr(GPtrArray) slices = NULL;
	ReadaheadStats stats = { 0 };
	Batch batch = { 0 };
	guint i = 0;

	g_mutex_init(&batch.lock);
	g_cond_init(&batch.inflight_cond);
	batch.stop = stop;
	batch.check_residency = options->check_residency;
	batch.warning_limit = options->warning_limit;
	batch.notice_limit = options->notice_limit;
	batch.cap_fowner = options->check_residency && have_cap_fowner();
	/* Never 0, the value of a thread that has not read yet. */
	do
		batch.id = (guint)g_atomic_int_add(&batch_ids, 1) + 1;
	while (batch.id == 0);
	batch.opened = g_hash_table_new(g_str_hash, g_str_equal);
	batch.chunks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	/* Kept to the end: batch.opened borrows their paths. */
	slices = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);

	while (i < requests->len) {
		ReadaheadRequest *reqs = (ReadaheadRequest *)(void *)requests->data;
		GArray *slice;
		guint end;

		if (batch_stopped(&batch)) {
			batch.stats.dropped += requests->len - i;
			break;
		}
		end = readahead_slice_end(requests, i, options->slice_bytes);
		slice = readahead_requests_new();
		for (; i < end; i++) {
			/* The path moves to the slice. */
			g_array_append_val(slice, reqs[i]);
			reqs[i].path = NULL;
		}
		g_ptr_array_add(slices, slice);
		run_slice(&batch, slice, options);
	}

	/*
	 * The workers are done; taking the lock once more makes that
	 * ordering visible to thread checkers, which cannot see inside the
	 * pool's own synchronisation.
	 */
	g_mutex_lock(&batch.lock);
	if (batch.warnings_dropped > 0 && limit_allows(batch.warning_limit))
		g_warning("readahead: %u more read errors not shown", batch.warnings_dropped);
	if (batch.notices_dropped > 0 && limit_allows(batch.notice_limit))
		g_info("readahead: %u more odd files skipped, not shown", batch.notices_dropped);

	stats = batch.stats;
	stats.files = g_hash_table_size(batch.opened);
	stats.superseded = batch_stopped(&batch);
	g_mutex_unlock(&batch.lock);
	g_hash_table_destroy(batch.chunks);
	g_hash_table_destroy(batch.opened);
	g_cond_clear(&batch.inflight_cond);
	g_mutex_clear(&batch.lock);
	return stats;
}

ReadaheadStats
readahead_run(GArray *requests, const ReadaheadOptions *options)
{
	ReadaheadStats stats = { 0 };

	g_return_val_if_fail(requests != NULL, stats);
	g_return_val_if_fail(options != NULL, stats);
	return run_batch(requests, options, NULL);
}

/* ---- background batches ---- */

typedef struct {
	GArray *requests;
	ReadaheadOptions options;
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
/* Set by readahead_supersede(), cleared when the next batch starts. */
static gint stop_requested;
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

	job->stats = run_batch(job->requests, &job->options, &stop_requested);
	g_clear_pointer(&job->requests, g_array_unref);
	g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, job_finish_idle,
			GUINT_TO_POINTER(job->generation), NULL);
	return NULL;
}

gboolean
readahead_start(GArray *requests, const ReadaheadOptions *options,
		ReadaheadDone done, gpointer user_data)
{
	g_autoptr(GError) error = NULL;
	Job *job;

	g_return_val_if_fail(requests != NULL, FALSE);
	g_return_val_if_fail(options != NULL, FALSE);
	if (!g_atomic_int_compare_and_exchange(&busy, 0, 1)) {
		g_array_unref(requests);
		return FALSE;
	}

	g_atomic_int_set(&stop_requested, 0);
	if (options->maxprocs > 0) {
		job = g_new0(Job, 1);
		job->requests = requests;
		job->options = *options;
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
		if (limit_allows(options->warning_limit))
			g_warning("cannot start the readahead thread: %s, reading in the main thread",
				  error->message);
		job->requests = NULL;
		job_free(job);
	}

	{
		ReadaheadStats stats = readahead_run(requests, options);

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
readahead_supersede(void)
{
	if (g_atomic_int_get(&busy))
		g_atomic_int_set(&stop_requested, 1);
}

void
readahead_wait(void)
{
	job_finish(0);
}
