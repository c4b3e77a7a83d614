/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Readahead: asks the kernel to bring chosen file ranges into the page
 * cache, in an order that is kind to the disk, without ever blocking the
 * main loop or touching anything that is not a plain file.
 *
 * A slice of a batch goes through four steps. Its ranges are put in path
 * order and order_merge_near() fuses ranges of one file that overlap or
 * lie less than MERGE_GAP_BYTES apart. Each file is then examined once
 * (pagecache_open(): lstat, open without following symlinks or blocking,
 * fstat and compare with the lstat): one that cannot be read, or whose
 * ranges are all cached, is settled there. What is left is ordered as
 * order_sort() would (by path, by inode, or by the physical position
 * FIEMAP reports), and the reader opens each file again and issues
 * readahead(2) in chunks, because the kernel silently truncates one call
 * to the device's readahead window: on a disk with read_ahead_kb = 8192
 * one call on a 256 MiB file caches only its first 8 MiB.
 *
 * Most of what a batch asks for is usually cached already: the programs
 * predicted this cycle were predicted last cycle too, and 0.6.4 asked
 * the kernel for the same hundreds of megabytes again every cycle. With
 * check_residency the reader first asks which pages of a range are in
 * the page cache (pagecache_find_missing()): all cached skips the range,
 * none cached reads it whole, and of a range partly cached only the
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
 * Stale files (gone after an upgrade, or a FIFO or device node under a
 * learned name) are skipped and counted, and messages are capped per
 * batch so a stale model cannot flood the log.
 *
 * Work runs in the calling thread, in worker threads started per slice,
 * or (via readahead_start()) in a background batch thread whose result
 * is handed back to the main context. All the state is in the Readahead
 * the daemon owns, in the Batch being read and in each Worker.
 */
#include "config.h"

#include "readahead.h"

#include "cputime.h"
#include "interval.h"
#include "mountns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/*
 * The missing runs of a partly cached range are joined across cached
 * gaps of less than MERGE_GAP_BYTES (pagecache_find_missing() bridges
 * gaps of at most its argument). The cached pages cost the disk nothing
 * (readahead(2) skips them), and one call for the holes instead of one
 * each saves a syscall, a wait (read_range()) and, because the kernel
 * plugs the reads of one call, a dispatch to the device per hole: the
 * page cache reclaimer of some systems evicts single cold pages, leaving
 * files with many small holes.
 */
#define RESIDENT_GAP_BYTES ((guint64)MERGE_GAP_BYTES - 1)

/* The I/O class bits of ioprio_get()/ioprio_set() (linux/ioprio.h). */
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_BE 2
#define IOPRIO_CLASS_IDLE 3
/* The kernel's default best-effort level (IOPRIO_NORM). */
#define IOPRIO_BE_NORM 4

/*
 * Bytes of an urgent batch in flight at most: no more than a background
 * batch's. The starting program's own reads queue behind whatever the
 * batch has queued; on the launch benchmark's disk (read_ahead_kb =
 * 8192) the program's faults already read in large windows, and an 8
 * MiB queue ahead of each cost it more than the batch saved.
 */
#define URGENT_INFLIGHT_MAX READAHEAD_INFLIGHT_MAX

typedef struct Job Job;

struct Readahead {
	Pagecache *pagecache;  /* what the kernel refused; shared by every batch */
	MountDevs *mountdevs;  /* the devices of this namespace's mounts (identity checks) */
	/*
	 * At most one background batch is in flight. `busy` is set from
	 * readahead_start() until done has been called, so the daemon never
	 * stacks batches; the job is handed back either by the idle source
	 * its thread attaches or by readahead_wait(), whichever comes first
	 * (the other one then finds nothing to do).
	 */
	gint busy;             /* atomic */
	gint refs;             /* atomic: the owner's, and one per job thread alive */
	GMutex job_lock;
	GCond job_cond;        /* signalled, under job_lock, when a job's thread ends */
	Job *job;              /* the background batch, guarded by job_lock */
	guint64 abandoned;     /* batches abandoned past their deadline, guarded by job_lock */
	guint stuck;           /* of those, whose thread has not ended yet, guarded by job_lock */
	guint64 refused;       /* batches refused at READAHEAD_MAX_STUCK, guarded by job_lock */
	/*
	 * At most one urgent thread (readahead_start_urgent()); batches given
	 * while it runs wait in urgent_pending and it reads them next, as
	 * long as urgent_open says it still takes them. Guarded by job_lock.
	 */
	Job *urgent;
	GPtrArray *urgent_pending;  /* GArray of OrderRequest */
	gboolean urgent_open;
	gint urgent_running;   /* atomic: background batches wait while set */
	GMutex hold_lock;
	gint64 hold_until;     /* readahead_hold(), guarded by hold_lock */
	/*
	 * ReadaheadOptions.trust_us: file key (cached_key()) -> Cached, the
	 * files a probe found cached. Background batches use it, one at a
	 * time but for an abandoned one that may still run: hence the lock.
	 */
	GMutex cached_lock;
	GHashTable *cached;    /* guarded by cached_lock */
	gint64 thread_cpu_us;  /* CPU of the batch threads and their workers, atomic */
};

/* A file whose requested ranges a full probe found all cached. */
typedef struct {
	gint64 at;             /* monotonic us of the probe */
	guint64 dev, ino;      /* the file then: st_dev, st_ino, */
	guint64 size;          /* st_size */
	gint64 mtime_ns;       /* and st_mtim */
	GArray *ranges;        /* Interval: the ranges found cached, within size */
	gboolean evictions_known;  /* the eviction count before the probe, when known */
	guint64 evictions;
} Cached;

/* ---- the batch being read ---- */

/* One work item: consecutive requests of one file, opened once. */
typedef struct {
	guint first;
	guint count;
} Group;

typedef struct {
	Readahead *ra;
	const OrderRequest *reqs;  /* the slice being read */
	const GArray *groups;      /* its groups, in reading order */
	gint next_group;           /* atomic: the next group a worker takes */
	const gint *stop;          /* the job's stop flag; NULL: never */
	gint64 *progress;          /* the job's: monotonic us of the last step; NULL: none */
	gboolean urgent;           /* never held; background batches wait for it */
	guint64 inflight_max;      /* READAHEAD_INFLIGHT_MAX, or more when urgent */
	gboolean check_residency;
	gint64 trust_us;           /* ReadaheadOptions.trust_us; 0 when urgent */
	gboolean warm_dirs;        /* ReadaheadOptions.warm_dirs */
	gboolean evictions_known;  /* with trust_us and ReadaheadOptions.vmstat_path: */
	guint64 evictions;         /* the eviction count when the batch began */
	GMutex lock;               /* guards everything below */
	ReadaheadStats stats;
	GHashTable *opened;     /* paths (borrowed from the slices) of files opened */
	GHashTable *chunks;     /* gint64 dev -> chunk size in bytes */
	guint warnings;         /* warnings shown */
	guint warnings_dropped; /* warnings not shown because of the cap */
	guint notices;          /* infos shown about odd files */
	guint notices_dropped;
	LogLimit *warning_limit;  /* across batches, or NULL (ReadaheadOptions) */
	LogLimit *notice_limit;
	guint64 inflight;       /* bytes requested and not yet read */
	GCond inflight_cond;    /* signalled when inflight falls */
	/* with warm_dirs: */
	GHashTable *dirs;       /* directories (owned) of the files read, warmed or to warm */
	GPtrArray *dirs_todo;   /* of those, the ones to warm after this slice (borrowed) */
} Batch;

/* A thread reading groups of a batch: the calling thread, or one started for a slice. */
typedef struct {
	Batch *batch;
	GThread *thread;     /* NULL for the calling thread */
	gboolean counted;    /* its I/O class is in the batch's figures already */
} Worker;

static gboolean
batch_stopped(const Batch *batch)
{
	return batch->stop && g_atomic_int_get(batch->stop);
}

/*
 * A step of the batch ended (an open, a chunk read, the end of a hold):
 * the deadline runs from here. A batch whose last step is older than
 * READAHEAD_DEADLINE_US waits on a file system that stopped answering.
 */
static void
batch_alive(Batch *batch)
{
	if (batch->progress)
		__atomic_store_n(batch->progress, g_get_monotonic_time(), __ATOMIC_RELAXED);
}

/* Counts requests of the batch that will not be read because it was told to stop. */
static void
batch_drop(Batch *batch, guint count)
{
	g_mutex_lock(&batch->lock);
	batch->stats.dropped += count;
	g_mutex_unlock(&batch->lock);
}

/* Adds one file's figures to the batch's. */
static void
batch_add_stats(Batch *batch, const ReadaheadStats *local)
{
	g_mutex_lock(&batch->lock);
	batch->stats.failed += local->failed;
	batch->stats.skipped += local->skipped;
	batch->stats.other_file += local->other_file;
	batch->stats.bytes += local->bytes;
	batch->stats.syscalls += local->syscalls;
	batch->stats.resident_bytes += local->resident_bytes;
	batch->stats.left_bytes += local->left_bytes;
	batch->stats.resident_ranges += local->resident_ranges;
	batch->stats.probes += local->probes;
	batch->stats.trusted_ranges += local->trusted_ranges;
	batch->stats.unopened_ranges += local->unopened_ranges;
	batch->stats.threads += local->threads;
	batch->stats.threads_not_idle += local->threads_not_idle;
	batch->stats.dropped += local->dropped;
	g_mutex_unlock(&batch->lock);
}

/* Records that the file at path was opened (path borrowed from the slice). */
static void
batch_opened(Batch *batch, const char *path)
{
	g_mutex_lock(&batch->lock);
	g_hash_table_add(batch->opened, (gpointer)path);
	g_mutex_unlock(&batch->lock);
}

/* Whether a limit (NULL: none) lets one more message through now. */
static gboolean
limit_allows(LogLimit *limit)
{
	return !limit || log_limit_allow(limit, g_get_monotonic_time());
}

static void batch_message(Batch *batch, GLogLevelFlags level, const char *format, ...)
	G_GNUC_PRINTF(3, 4);

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

/* ---- holding and pacing ---- */

void
readahead_hold(Readahead *ra, gint64 until)
{
	g_return_if_fail(ra != NULL);

	/* Replaced, not extended: a hold may end early (launch.h). */
	g_mutex_lock(&ra->hold_lock);
	ra->hold_until = MAX(until, 0);
	g_mutex_unlock(&ra->hold_lock);
}

/* Whether a hold, or an urgent batch running, keeps this batch's reads back now. */
static gboolean
held_now(const Batch *batch)
{
	Readahead *ra = batch->ra;
	gint64 until;

	if (batch->urgent)
		return FALSE;
	if (g_atomic_int_get(&ra->urgent_running) > 0)
		return TRUE;
	g_mutex_lock(&ra->hold_lock);
	until = ra->hold_until;
	g_mutex_unlock(&ra->hold_lock);
	return g_get_monotonic_time() < until;
}

/*
 * Sleeps through a hold, and while an urgent batch runs, in short naps
 * so that a stop is seen soon. An urgent batch is never held: it reads
 * what a starting program is about to wait for.
 */
static void
hold_wait(const Batch *batch)
{
	Readahead *ra = batch->ra;

	if (batch->urgent)
		return;
	for (;;) {
		gint64 until, now;

		g_mutex_lock(&ra->hold_lock);
		until = ra->hold_until;
		g_mutex_unlock(&ra->hold_lock);
		now = g_get_monotonic_time();
		if (g_atomic_int_get(&ra->urgent_running) > 0) {
			/* Waiting for the urgent thread, which has a deadline of its own. */
			batch_alive((Batch *)batch);
			until = MAX(until, now + 20000);
		}
		if (now >= until || batch_stopped(batch)) {
			batch_alive((Batch *)batch);
			return;
		}
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
	while (batch->inflight > 0 && batch->inflight + n > batch->inflight_max)
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

/* ---- the chunk of a device ---- */

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

/* ---- where a file lies ---- */

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
 * Fills the sort keys of the n requests of one file from its stat, and
 * with fd >= 0 (SORT_BLOCK) one FIEMAP per range.
 */
static void
locate_requests(OrderRequest *reqs, guint n, const struct stat *st, int fd)
{
	order_set_examined(reqs, n, st->st_dev, (guint64)st->st_ino);
	for (guint i = 0; fd >= 0 && i < n; i++)
		if (physical_offset(fd, reqs[i].offset, reqs[i].length, &reqs[i].block))
			reqs[i].rank = ORDER_LOCATED;
}

void
readahead_examine(OrderRequest *reqs, guint n, SortStrategy strategy, gpointer user_data)
{
	struct stat st;
	int fd = -1;

	(void)user_data;
	g_return_if_fail(reqs != NULL && n > 0);

	if (strategy == SORT_INODE) {
		if (lstat(reqs[0].path, &st) != 0 || !S_ISREG(st.st_mode)) {
			order_set_unknown(reqs, n);
			return;
		}
	} else if (pagecache_open(reqs[0].path, &fd, &st, NULL) != PAGECACHE_OPEN_OK) {
		order_set_unknown(reqs, n);
		return;
	}
	locate_requests(reqs, n, &st, fd);
	if (fd >= 0)
		(void)close(fd);
}

/* ---- reading ---- */

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
		/*
		 * Every worker but a few waits here for its turn, having passed
		 * hold_wait() before a program started: without a second look
		 * each would still issue its chunk, tens of MB in all, while
		 * the program loads.
		 */
		if (held_now(batch)) {
			inflight_give(batch, MAX(n, INFLIGHT_MIN_CHARGE));
			continue;
		}
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
		batch_alive(batch);
		if (err != 0)
			return err;
		stats->bytes += n;
		pos += n;
	}
	return 0;
}

/*
 * pagecache_open() for the count requests of path, saying why it failed:
 * a file that vanished (normal after upgrades) only at debug level, an
 * odd file or a swap as an info, any other error as a warning, all
 * capped per batch. The requests of a file that cannot be opened are
 * counted in local as skipped (or failed, for an error).
 */
static gboolean
open_checked(Batch *batch, const OrderRequest *req, guint count, int *ret_fd,
	     struct stat *ret_st, ReadaheadStats *local)
{
	const char *path = req->path;
	int err;

	switch (pagecache_open(path, ret_fd, ret_st, &err)) {
	case PAGECACHE_OPEN_OK:
		/*
		 * The file the model learned, or another one under its name: a
		 * newer version (the next run maps it and is learned again), or
		 * what the path names here for a path learned in another mount
		 * namespace. Another file is never read.
		 */
		if (req->want_ino != 0 &&
		    !mountdevs_same_file(batch->ra->mountdevs, *ret_fd, "", AT_EMPTY_PATH,
					 (guint64)ret_st->st_dev, (guint64)ret_st->st_ino,
					 req->want_dev, req->want_ino)) {
			g_debug("readahead: %s is not the file learned (device %" G_GUINT64_FORMAT
				", inode %" G_GUINT64_FORMAT "), skipping", path, req->want_dev,
				req->want_ino);
			(void)close(*ret_fd);
			*ret_fd = -1;
			local->other_file += count;
			return FALSE;
		}
		return TRUE;
	case PAGECACHE_OPEN_MISSING:
		g_debug("readahead: %s: %s, skipping", path, g_strerror(err));
		local->skipped += count;
		break;
	case PAGECACHE_OPEN_NOT_REGULAR:
		batch_message(batch, G_LOG_LEVEL_INFO, "readahead: %s is %s, not a regular file, skipping",
			      path, pagecache_mode_name(ret_st->st_mode));
		local->skipped += count;
		break;
	case PAGECACHE_OPEN_CHANGED:
		batch_message(batch, G_LOG_LEVEL_INFO,
			      "readahead: %s was replaced while being opened, skipping", path);
		local->skipped += count;
		break;
	case PAGECACHE_OPEN_ERROR:
	default:
		batch_message(batch, G_LOG_LEVEL_WARNING, "readahead: cannot open %s: %s, ignoring",
			      path, g_strerror(err));
		local->failed += count;
		break;
	}
	return FALSE;
}

/*
 * The part of req to read from a file of size bytes, or FALSE if it
 * starts past the end: the file may have shrunk since the model saw it
 * mapped. stats.bytes counts what the kernel was asked for, after this clamp.
 */
static gboolean
clamp_to_file(const OrderRequest *req, const struct stat *st, Interval *ret)
{
	guint64 size = (guint64)st->st_size;

	if (req->offset >= size)
		return FALSE;
	*ret = interval_clamp(interval_from_range(req->offset, req->length), (Interval){ 0, size });
	return TRUE;
}

/*
 * The first run of missing pages in [pos, end) at least min_run long, as
 * the page cache has them now (missing is scratch space); FALSE if there
 * is none. *left is increased by the missing bytes before it (all of
 * them, if there is none): left to the program.
 */
static gboolean
urgent_next_run(Batch *batch, int fd, const char *path, const struct stat *st, guint64 pos,
		guint64 end, guint64 min_run, GArray *missing, Interval *ret, guint64 *left,
		guint64 *probes)
{
	switch (pagecache_find_missing(batch->ra->pagecache, fd, path, st, pos, end - pos, 0,
				       missing, probes)) {
	case PAGECACHE_ALL:
		return FALSE;
	case PAGECACHE_PART:
		for (guint r = 0; r < missing->len; r++) {
			const Interval *run = &g_array_index(missing, Interval, r);

			if (interval_length(*run) >= min_run) {
				*ret = *run;
				return TRUE;
			}
			*left += interval_length(*run);
		}
		return FALSE;
	case PAGECACHE_NONE:
	case PAGECACHE_UNKNOWN:
	default:
		if (end - pos < min_run) {
			*left += end - pos;
			return FALSE;
		}
		*ret = (Interval){ pos, end };
		return TRUE;
	}
}

/*
 * An urgent batch's read of range (see READAHEAD_URGENT_MIN_RUN_BYTES):
 * the long missing runs, each chunk looked at before it is issued; a
 * chunk the program has begun (any page cached) ends the run there, and
 * the next long run after it is read. Returns 0 or an errno.
 */
static int
read_urgent(Batch *batch, int fd, const char *path, const struct stat *st, Interval range,
	    guint64 chunk, gboolean *use_fadvise, GArray *missing, ReadaheadStats *local)
{
	guint64 pos = range.start, read_before = local->bytes, left_before = local->left_bytes;
	guint64 taken;
	Interval run;
	int err = 0;

	while (pos < range.end && err == 0 &&
	       urgent_next_run(batch, fd, path, st, pos, range.end, READAHEAD_URGENT_MIN_RUN_BYTES,
			       missing, &run, &local->left_bytes, &local->probes)) {
		pos = run.start;
		while (pos < run.end && err == 0) {
			guint64 n = MIN(chunk, run.end - pos);

			/* The first chunk was just probed. */
			if (pos > run.start) {
				PagecacheResidency r = pagecache_cachestat(batch->ra->pagecache, fd,
									   st, pos, n,
									   &local->probes);

				if (r == PAGECACHE_ALL || r == PAGECACHE_PART)
					break;
			}
			err = read_range(batch, fd, pos, n, chunk, use_fadvise, local);
			pos += n;
		}
	}
	/* The rest was cached, or the program was reading it. */
	taken = (local->bytes - read_before) + (local->left_bytes - left_before);
	local->resident_bytes += interval_length(range) - MIN(interval_length(range), taken);
	return err;
}

/*
 * Reads range of the open file, with check_residency only what the page
 * cache lacks (missing is scratch space). Returns 0 or an errno.
 */
static int
read_request(Batch *batch, int fd, const char *path, const struct stat *st, Interval range,
	     guint64 chunk, gboolean *use_fadvise, GArray *missing, ReadaheadStats *local)
{
	guint64 length = interval_length(range);
	int err = 0;

	if (!batch->check_residency || length == 0)
		return read_range(batch, fd, range.start, length, chunk, use_fadvise, local);
	if (batch->urgent)
		return read_urgent(batch, fd, path, st, range, chunk, use_fadvise, missing, local);
	switch (pagecache_find_missing(batch->ra->pagecache, fd, path, st, range.start, length,
				       RESIDENT_GAP_BYTES, missing, &local->probes)) {
	case PAGECACHE_ALL:
		local->resident_bytes += length;
		local->resident_ranges++;
		return 0;
	case PAGECACHE_PART:
		/* What the runs leave out is cached, whether or not a read fails. */
		local->resident_bytes += length - interval_total(missing);
		for (guint r = 0; r < missing->len && err == 0; r++) {
			const Interval *run = &g_array_index(missing, Interval, r);

			err = read_range(batch, fd, run->start, interval_length(*run), chunk,
					 use_fadvise, local);
		}
		return err;
	case PAGECACHE_NONE:
	case PAGECACHE_UNKNOWN:
	default:
		return read_range(batch, fd, range.start, length, chunk, use_fadvise, local);
	}
}

/*
 * Notes the directory of path, a file just read, for warming after the
 * slice (once per batch, at most READAHEAD_WARM_DIRS of them).
 */
static void
batch_add_dir(Batch *batch, const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;

	if (!slash || slash == path)
		return;
	dir = g_strndup(path, (gsize)(slash - path));
	g_mutex_lock(&batch->lock);
	if (g_hash_table_size(batch->dirs) < READAHEAD_WARM_DIRS &&
	    !g_hash_table_contains(batch->dirs, dir)) {
		g_hash_table_add(batch->dirs, dir);
		g_ptr_array_add(batch->dirs_todo, dir);
		dir = NULL;
	}
	g_mutex_unlock(&batch->lock);
	g_free(dir);
}

/*
 * Lists the directory dir to its end and, if it has at most
 * READAHEAD_WARM_ENTRIES entries, looks each one up, each lookup held
 * (readahead_hold()) and stopped as a chunk is; returns how many were,
 * or -1 if it could not be opened. The listing reads every block
 * of the directory, so later lookups in it, found or not, need no
 * directory read; the lookups read the inode table blocks of its
 * entries. Nothing is followed: not a final symlink (O_NOFOLLOW,
 * AT_SYMLINK_NOFOLLOW), not an automount point (AT_NO_AUTOMOUNT), and a
 * network file system mounted on an entry is not asked for fresh
 * attributes (AT_STATX_DONT_SYNC).
 */
static gint64
warm_dir(Batch *batch, const char *dir)
{
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	gboolean over = FALSE;
	struct dirent *entry;
	gint64 looked_up = 0;
	DIR *d;
	int fd;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		(void)close(fd);
		return -1;
	}
	while ((entry = readdir(d)) != NULL) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0 || over)
			continue;
		if (names->len >= READAHEAD_WARM_ENTRIES) {
			/* Still listed to the end: its blocks are what later lookups need. */
			over = TRUE;
			g_ptr_array_set_size(names, 0);
			continue;
		}
		g_ptr_array_add(names, g_strdup(entry->d_name));
	}
	for (guint i = 0; i < names->len; i++) {
		struct statx stx;

		/*
		 * Each lookup may read an inode table block (ext4 reads 32 of
		 * them at a time): held and stopped as a chunk is, not only per
		 * directory. A launch that began while 500 entries were looked
		 * up otherwise waited behind all of their reads.
		 */
		hold_wait(batch);
		if (batch_stopped(batch))
			break;
		if (statx(dirfd(d), names->pdata[i],
			  AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
			  STATX_TYPE | STATX_INO, &stx) == 0)
			looked_up++;
	}
	(void)closedir(d);
	return looked_up;
}

/* Warms the directories noted during the slice (see warm_dirs in readahead.h). */
static void
warm_slice_dirs(Batch *batch)
{
	/* The workers are done: dirs_todo is this thread's alone now. */
	for (guint i = 0; i < batch->dirs_todo->len; i++) {
		gint64 n;

		/* A lookup may read the disk: held and stopped as a read is. */
		hold_wait(batch);
		if (batch_stopped(batch))
			break;
		n = warm_dir(batch, batch->dirs_todo->pdata[i]);
		batch_alive(batch);
		if (n < 0)
			continue;
		g_mutex_lock(&batch->lock);
		batch->stats.dirs_warmed++;
		batch->stats.entries_warmed += (guint64)n;
		g_mutex_unlock(&batch->lock);
	}
	g_ptr_array_set_size(batch->dirs_todo, 0);
}

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

/* Reads the requests of one file. */
static void
read_group(Worker *worker, const Group *group)
{
	Batch *batch = worker->batch;
	const OrderRequest *reqs = batch->reqs + group->first;
	const char *path = reqs[0].path;
	ReadaheadStats local = { 0 };
	g_autoptr(GArray) missing = NULL;
	gboolean use_fadvise = FALSE;
	struct stat st;
	guint64 chunk;
	int fd;

	if (batch_stopped(batch)) {
		batch_drop(batch, group->count);
		return;
	}
	/* A thread's I/O class is checked once per batch, when it first reads. */
	if (!worker->counted) {
		worker->counted = TRUE;
		local.threads = 1;
		local.threads_not_idle = thread_is_idle_class() ? 0 : 1;
	}

	if (!open_checked(batch, reqs, group->count, &fd, &st, &local)) {
		batch_alive(batch);
		batch_add_stats(batch, &local);
		return;
	}
	batch_alive(batch);
	chunk = batch_chunk(batch, st.st_dev);
	/* For wait_read(): no kernel readahead window on its one-byte reads. */
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	if (batch->check_residency)
		missing = interval_array_new();

	for (guint i = 0; i < group->count; i++) {
		Interval range;
		int err;

		if (!clamp_to_file(&reqs[i], &st, &range)) {
			g_debug("readahead: %s: offset %" G_GUINT64_FORMAT " is past its end, skipping",
				path, reqs[i].offset);
			local.skipped++;
			continue;
		}
		err = read_request(batch, fd, path, &st, range, chunk, &use_fadvise, missing, &local);
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
	(void)close(fd);
	batch_opened(batch, path);
	batch_add_stats(batch, &local);
	if (batch->warm_dirs)
		batch_add_dir(batch, path);
}

/* ---- files found cached (ReadaheadOptions.trust_us) ---- */

static void
cached_free(gpointer data)
{
	Cached *cached = data;

	g_array_unref(cached->ranges);
	g_free(cached);
}

/*
 * The key of a file in ra->cached: its path and the identity it must
 * have. A lookup's key points at the request's path; a stored one is one
 * block with its own copy (cached_key_new()). Formatting the three into a
 * string took 1,700 instructions a file, for every file of every
 * background batch.
 */
typedef struct {
	guint64 dev, ino;      /* OrderRequest want_dev, want_ino */
	const char *path;
} CachedKey;

static CachedKey
cached_key(const OrderRequest *req)
{
	return (CachedKey){ req->want_dev, req->want_ino, req->path };
}

static CachedKey *
cached_key_new(const OrderRequest *req)
{
	gsize len = strlen(req->path) + 1;
	CachedKey *key = g_malloc(sizeof(CachedKey) + len);
	char *copy = (char *)(key + 1);

	memcpy(copy, req->path, len);
	*key = (CachedKey){ req->want_dev, req->want_ino, copy };
	return key;
}

static guint
cached_key_hash(gconstpointer p)
{
	const CachedKey *key = p;
	guint64 id = key->dev * G_GUINT64_CONSTANT(0x9e3779b97f4a7c15) ^ key->ino;

	return g_str_hash(key->path) ^ (guint)id ^ (guint)(id >> 32);
}

static gboolean
cached_key_equal(gconstpointer pa, gconstpointer pb)
{
	const CachedKey *a = pa, *b = pb;

	return a->dev == b->dev && a->ino == b->ino && strcmp(a->path, b->path) == 0;
}

/* Notes that a full probe just found ranges (taken) of req's file, open as st, all cached. */
static void
cached_remember(Batch *batch, const OrderRequest *req, const struct stat *st, GArray *ranges)
{
	Readahead *ra = batch->ra;
	Cached *cached = g_new0(Cached, 1);

	cached->at = g_get_monotonic_time();
	cached->dev = (guint64)st->st_dev;
	cached->ino = (guint64)st->st_ino;
	cached->size = (guint64)st->st_size;
	cached->mtime_ns = (gint64)st->st_mtim.tv_sec * G_GINT64_CONSTANT(1000000000) +
			   st->st_mtim.tv_nsec;
	interval_merge(ranges, 0);
	cached->ranges = ranges;
	/* Taken before the probe: an eviction during it shows as a change. */
	cached->evictions_known = batch->evictions_known;
	cached->evictions = batch->evictions;
	g_mutex_lock(&ra->cached_lock);
	g_hash_table_replace(ra->cached, cached_key_new(req), cached);
	g_mutex_unlock(&ra->cached_lock);
}

/* Notes that a probe found a part of req's file not cached. */
static void
cached_forget(Readahead *ra, const OrderRequest *req)
{
	CachedKey key = cached_key(req);

	g_mutex_lock(&ra->cached_lock);
	(void)g_hash_table_remove(ra->cached, &key);
	g_mutex_unlock(&ra->cached_lock);
}

/* Drops what is older than trust_us: it is never used again but by a new probe. */
static void
cached_expire(Readahead *ra, gint64 trust_us, gint64 now)
{
	GHashTableIter iter;
	gpointer value;

	g_mutex_lock(&ra->cached_lock);
	g_hash_table_iter_init(&iter, ra->cached);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		const Cached *cached = value;

		if (now - cached->at >= trust_us || now < cached->at)
			g_hash_table_iter_remove(&iter);
	}
	g_mutex_unlock(&ra->cached_lock);
}

/*
 * Whether a full probe of the last trust_us found every byte of the n
 * requests reqs (one file, open as st) that lies within the file cached,
 * the file unchanged since (identity, size, modification time). With
 * FALSE the file is probed in full.
 */
static gboolean
cached_covers(Batch *batch, const OrderRequest *reqs, guint n, const struct stat *st,
	      gint64 now)
{
	CachedKey key = cached_key(reqs);
	g_autoptr(GArray) pieces = interval_array_new();
	const Cached *cached;
	gboolean covers;

	g_mutex_lock(&batch->ra->cached_lock);
	cached = g_hash_table_lookup(batch->ra->cached, &key);
	covers = cached && now >= cached->at && now - cached->at < batch->trust_us &&
		 cached->dev == (guint64)st->st_dev && cached->ino == (guint64)st->st_ino &&
		 cached->size == (guint64)st->st_size &&
		 cached->mtime_ns == (gint64)st->st_mtim.tv_sec * G_GINT64_CONSTANT(1000000000) +
					     st->st_mtim.tv_nsec;
	for (guint i = 0; covers && i < n; i++) {
		Interval range;

		if (!clamp_to_file(&reqs[i], st, &range))
			continue;
		g_array_set_size(pieces, 0);
		interval_subtract(range, cached->ranges, pieces);
		covers = pieces->len == 0;
	}
	g_mutex_unlock(&batch->ra->cached_lock);
	return covers;
}

/*
 * With ReadaheadOptions.vmstat_path: whether the file of the n requests reqs
 * can be settled without opening it. It can when cached_covers() holds
 * (a full probe less than trust_us ago found every requested byte cached,
 * the file the same now: *st, from lstat) and the kernel has evicted
 * nothing since before that probe: no reclaim, no drop of the cache. No
 * descriptor, no cachestat, and no open event for the daemon's own
 * fanotify groups (each of which the main thread reads and drops), for
 * each of the hundreds of files a batch finds cached every cycle.
 */
static gboolean
cached_vouched(Batch *batch, const OrderRequest *reqs, guint n, gint64 now, struct stat *st)
{
	CachedKey key = cached_key(reqs);
	const Cached *cached;
	gboolean quiet;

	if (!batch->evictions_known)
		return FALSE;
	g_mutex_lock(&batch->ra->cached_lock);
	cached = g_hash_table_lookup(batch->ra->cached, &key);
	quiet = cached && cached->evictions_known && cached->evictions == batch->evictions;
	g_mutex_unlock(&batch->ra->cached_lock);
	/* As pagecache_open() sees the path: a final symlink is not followed. */
	if (!quiet || lstat(reqs->path, st) != 0 || !S_ISREG(st->st_mode))
		return FALSE;
	return cached_covers(batch, reqs, n, st, now);
}

/*
 * The spot check of a range a recent probe found cached: its first, middle
 * and last pages, one cachestat() of one page each, whatever the range's
 * size. A cache drop, a DONTNEED or the eviction of the whole file (what
 * reclaim does to a file nobody uses) takes those pages too; a part
 * evicted around them is read again when trust_us has passed.
 */
static gboolean
spot_check(Batch *batch, int fd, const struct stat *st, Interval range, guint64 *probes)
{
	const guint64 page = pagecache_page_size();
	guint64 first = range.start / page, last = (range.end - 1) / page;
	guint64 spots[3] = { first, first + (last - first) / 2, last };

	for (guint i = 0; i < G_N_ELEMENTS(spots); i++) {
		guint64 start = MAX(spots[i] * page, range.start);
		guint64 end = MIN((spots[i] + 1) * page, range.end);

		if (i > 0 && spots[i] == spots[i - 1])
			continue;
		if (pagecache_cachestat(batch->ra->pagecache, fd, st, start, end - start, probes) !=
		    PAGECACHE_ALL)
			return FALSE;
	}
	return TRUE;
}

/*
 * Examines the file of the n requests reqs (one file) once, before
 * anything is sorted or read, and settles what needs no reading: a file
 * that cannot be opened (reported as read_group() would), and with
 * check_residency a file whose ranges are all cached already (one
 * cachestat() per range). Returns FALSE for a file still to read; its
 * requests then get their sort keys from the same descriptor. In steady
 * state nearly every file is settled here, by one open, so nothing is
 * located on the disk and no worker thread starts.
 */
static gboolean
probe_file(Batch *batch, OrderRequest *reqs, guint n, SortStrategy strategy, gint64 now)
{
	const char *path = reqs[0].path;
	g_autoptr(GArray) ranges = NULL;
	ReadaheadStats local = { 0 };
	gboolean trusted = FALSE;
	struct stat st;
	int fd;

	if (batch->trust_us > 0 && cached_vouched(batch, reqs, n, now, &st)) {
		for (guint i = 0; i < n; i++) {
			Interval range;

			if (!clamp_to_file(&reqs[i], &st, &range)) {
				local.skipped++;
				continue;
			}
			local.resident_bytes += interval_length(range);
			local.resident_ranges++;
			if (interval_length(range) > 0) {
				local.trusted_ranges++;
				local.unopened_ranges++;
			}
		}
		batch_alive(batch);
		batch_add_stats(batch, &local);
		return TRUE;
	}
	if (!open_checked(batch, reqs, n, &fd, &st, &local)) {
		batch_alive(batch);
		batch_add_stats(batch, &local);
		return TRUE;
	}
	batch_alive(batch);
	if (batch->trust_us > 0) {
		trusted = cached_covers(batch, reqs, n, &st, now);
		if (!trusted)
			ranges = interval_array_new();
	}
	for (guint i = 0; i < n; i++) {
		Interval range;
		guint64 length;

		if (!clamp_to_file(&reqs[i], &st, &range)) {
			local.skipped++;
			continue;
		}
		length = interval_length(range);
		if (length > 0 && trusted && !spot_check(batch, fd, &st, range, &local.probes)) {
			/* Evicted since: forgotten, and probed in full from the first range on. */
			trusted = FALSE;
			cached_forget(batch->ra, reqs);
			local.resident_bytes = 0;
			local.resident_ranges = local.trusted_ranges = local.skipped = 0;
			ranges = interval_array_new();
			i = G_MAXUINT;  /* the loop's i++ makes it 0 */
			continue;
		}
		if (length > 0 && !trusted &&
		    (!batch->check_residency ||
		     pagecache_cachestat(batch->ra->pagecache, fd, &st, range.start, length,
					 &local.probes) != PAGECACHE_ALL)) {
			/* read_group() counts it all again, from its own checks. */
			locate_requests(reqs, n, &st, strategy == SORT_BLOCK ? fd : -1);
			(void)close(fd);
			if (batch->trust_us > 0)
				cached_forget(batch->ra, reqs);
			return FALSE;
		}
		/* Without the check an empty range is only nothing to read. */
		if (batch->check_residency) {
			local.resident_bytes += length;
			local.resident_ranges++;
			if (trusted && length > 0)
				local.trusted_ranges++;
		}
		if (ranges && length > 0)
			g_array_append_val(ranges, range);
	}
	(void)close(fd);
	batch_opened(batch, path);
	batch_add_stats(batch, &local);
	if (ranges)
		cached_remember(batch, reqs, &st, g_steal_pointer(&ranges));
	return TRUE;
}

/* The runs of consecutive requests of one file in reqs[0 .. n). */
static GArray *
group_requests(const OrderRequest *reqs, guint n)
{
	GArray *groups = g_array_new(FALSE, FALSE, sizeof(Group));
	guint i, start;

	for (start = 0; start < n; start = i) {
		Group group = { start, 0 };

		for (i = start + 1; i < n; i++)
			if (!order_same_file(&reqs[i], &reqs[start]))
				break;
		group.count = i - start;
		g_array_append_val(groups, group);
	}
	return groups;
}

/* ---- workers ---- */

/*
 * Reads the groups of the slice in order until none is left. Workers
 * take them from one counter, so the disk still sees the sorted order.
 */
static void
worker_drain(Worker *worker)
{
	Batch *batch = worker->batch;

	for (;;) {
		guint i = (guint)g_atomic_int_add(&batch->next_group, 1);

		if (i >= batch->groups->len)
			return;
		read_group(worker, &g_array_index(batch->groups, Group, i));
	}
}

/* Adds what the calling thread spent since `since` (cputime_thread_us()) to ra's sum. */
static void
add_thread_cpu(Readahead *ra, gint64 since)
{
	__atomic_fetch_add(&ra->thread_cpu_us, MAX(cputime_thread_us() - since, 0), __ATOMIC_RELAXED);
}

static gpointer
worker_thread(gpointer data)
{
	Worker *worker = data;
	gint64 start = cputime_thread_us();

	worker_drain(worker);
	/* Joined before its batch ends: the batch, and ra, outlive it. */
	add_thread_cpu(worker->batch->ra, start);
	return NULL;
}

/*
 * Reads the slice's groups with up to maxprocs new threads, or in the
 * calling thread (self) with maxprocs <= 1, a single group, or when no
 * thread can be started.
 */
static void
read_groups(Batch *batch, Worker *self, int maxprocs)
{
	g_autofree Worker *workers = NULL;
	guint wanted = 0, started = 0;

	g_atomic_int_set(&batch->next_group, 0);
	if (maxprocs > 1 && batch->groups->len > 1)
		wanted = MIN((guint)maxprocs, batch->groups->len);
	workers = g_new0(Worker, MAX(wanted, 1));
	for (; started < wanted; started++) {
		g_autoptr(GError) error = NULL;

		workers[started].batch = batch;
		workers[started].thread = g_thread_try_new("readahead", worker_thread,
							   &workers[started], &error);
		if (workers[started].thread)
			continue;
		if (started == 0 && limit_allows(batch->warning_limit))
			g_warning("cannot start %u readahead threads: %s, reading in one",
				  wanted, error->message);
		else
			g_debug("cannot start readahead thread %u of %u: %s, reading in %u",
				started + 1, wanted, error->message, started);
		break;
	}
	if (started == 0)
		worker_drain(self);
	for (guint i = 0; i < started; i++)
		g_thread_join(workers[i].thread);
}

/* ---- slices and batches ---- */

/*
 * Reads one slice of the batch. It is put in path order and merged, so
 * that each file is examined once (probe_file()): what needs no reading,
 * the steady state, costs one open and no thread. What is left is sorted
 * by the strategy and read. Sorting only that keeps the FIEMAP calls of
 * SORT_BLOCK off the cached files. Merging in path order also fuses the
 * overlapping ranges of a file that a physical order would keep apart.
 */
static void
run_slice(Batch *batch, Worker *self, GArray *slice, const ReadaheadOptions *options)
{
	g_autoptr(GArray) probed = NULL;
	g_autoptr(GArray) groups = NULL;
	g_autofree OrderRequest *todo = NULL;
	SortStrategy strategy = order_known_strategy(options->strategy);
	gboolean by_keys = strategy == SORT_INODE || strategy == SORT_BLOCK;
	gboolean probe = options->check_residency || by_keys;
	gint64 now = g_get_monotonic_time();
	guint n = 0;

	if (strategy != SORT_NONE)
		order_sort_by_path((OrderRequest *)(void *)slice->data, slice->len);
	order_merge_near(slice, MERGE_GAP_BYTES);
	batch->stats.requests += slice->len;
	batch->stats.slices++;

	/* The requests still to read, with their sort keys (paths borrowed from slice). */
	todo = g_new0(OrderRequest, MAX(slice->len, 1));
	probed = group_requests((const OrderRequest *)(const void *)slice->data, slice->len);
	for (guint i = 0; i < probed->len; i++) {
		const Group *group = &g_array_index(probed, Group, i);

		/* Opening a file may read its inode from the disk: held too. */
		hold_wait(batch);
		if (batch_stopped(batch)) {
			batch_drop(batch, group->count);
			continue;
		}
		for (guint j = 0; j < group->count; j++) {
			todo[n + j] = g_array_index(slice, OrderRequest, group->first + j);
			todo[n + j].rank = ORDER_UNKNOWN;
		}
		if (!probe || !probe_file(batch, &todo[n], group->count, strategy, now))
			n += group->count;
	}
	if (by_keys)
		order_sort_by_keys(todo, n);
	batch->reqs = todo;
	groups = group_requests(todo, n);
	batch->groups = groups;
	read_groups(batch, self, options->maxprocs);
	batch->groups = NULL;
	batch->reqs = NULL;
	if (batch->warm_dirs)
		warm_slice_dirs(batch);
}

static void
batch_init(Batch *batch, Readahead *ra, const ReadaheadOptions *options, const gint *stop,
	   gint64 *progress, gboolean urgent)
{
	memset(batch, 0, sizeof(*batch));
	g_mutex_init(&batch->lock);
	g_cond_init(&batch->inflight_cond);
	batch->ra = ra;
	batch->stop = stop;
	batch->progress = progress;
	batch->urgent = urgent;
	batch->inflight_max = urgent ? URGENT_INFLIGHT_MAX : READAHEAD_INFLIGHT_MAX;
	batch->check_residency = options->check_residency;
	/* A program starting now waits on the urgent batch: it asks the kernel. */
	batch->trust_us = options->check_residency && !urgent ? MAX(options->trust_us, 0) : 0;
	batch->warm_dirs = options->warm_dirs;
	batch->warning_limit = options->warning_limit;
	batch->notice_limit = options->notice_limit;
	batch->opened = g_hash_table_new(g_str_hash, g_str_equal);
	batch->chunks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	batch->dirs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	batch->dirs_todo = g_ptr_array_new();
}

/* Logs what the message cap held back, and returns the figures of the batch, cleared. */
static ReadaheadStats
batch_finish(Batch *batch)
{
	ReadaheadStats stats;

	/*
	 * The workers are done; taking the lock once more makes that
	 * ordering visible to thread checkers.
	 */
	g_mutex_lock(&batch->lock);
	if (batch->warnings_dropped > 0 && limit_allows(batch->warning_limit))
		g_warning("readahead: %u more read errors not shown", batch->warnings_dropped);
	if (batch->notices_dropped > 0 && limit_allows(batch->notice_limit))
		g_info("readahead: %u more odd files skipped, not shown", batch->notices_dropped);

	stats = batch->stats;
	stats.files = g_hash_table_size(batch->opened);
	stats.superseded = batch_stopped(batch);
	g_mutex_unlock(&batch->lock);
	g_hash_table_destroy(batch->chunks);
	g_hash_table_destroy(batch->opened);
	g_ptr_array_unref(batch->dirs_todo);
	g_hash_table_destroy(batch->dirs);
	g_cond_clear(&batch->inflight_cond);
	g_mutex_clear(&batch->lock);
	return stats;
}

static ReadaheadStats
run_batch(Readahead *ra, GArray *requests, const ReadaheadOptions *options, const gint *stop,
	  gint64 *progress, gboolean urgent)
{
	/* Kept to the end: batch.opened borrows their paths. */
	g_autoptr(GPtrArray) slices = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
	OrderRequest *reqs = (OrderRequest *)(void *)requests->data;
	Batch batch;
	Worker self = { &batch, NULL, FALSE };
	guint i = 0;

	batch_init(&batch, ra, options, stop, progress, urgent);
	if (batch.trust_us > 0)
		cached_expire(ra, batch.trust_us, g_get_monotonic_time());
	if (batch.trust_us > 0 && options->vmstat_path)
		batch.evictions_known = pagecache_read_evictions(options->vmstat_path,
								 &batch.evictions);
	while (i < requests->len) {
		GArray *slice;
		guint end;

		if (batch_stopped(&batch)) {
			batch.stats.dropped += requests->len - i;
			break;
		}
		end = order_slice_end(requests, i, options->slice_bytes);
		slice = order_requests_new();
		for (; i < end; i++) {
			/* The path moves to the slice. */
			g_array_append_val(slice, reqs[i]);
			reqs[i].path = NULL;
		}
		g_ptr_array_add(slices, slice);
		run_slice(&batch, &self, slice, options);
	}
	return batch_finish(&batch);
}

ReadaheadStats
readahead_run(Readahead *ra, GArray *requests, const ReadaheadOptions *options)
{
	ReadaheadStats stats = { 0 };

	g_return_val_if_fail(ra != NULL, stats);
	g_return_val_if_fail(requests != NULL, stats);
	g_return_val_if_fail(options != NULL, stats);
	return run_batch(ra, requests, options, NULL, NULL, FALSE);
}

/* ---- the reader and its background batch ---- */

/*
 * A background batch, or the urgent thread. Its thread may block for good
 * in an open or a read of a file system that stopped answering (a dead
 * NFS server, a hung FUSE daemon), and no signal gets it out short of the
 * process's end. So the
 * main thread never joins a batch that may be stuck: a batch that made no
 * step for READAHEAD_DEADLINE_US is abandoned (its thread detached, its
 * done never called, counted) and the next one starts; at exit the daemon
 * waits for it a bounded time (readahead_wait_until()). An abandoned
 * job's thread frees the job, and its reference to the reader, if it ever
 * ends.
 */
struct Job {
	Readahead *ra;         /* a reference */
	GArray *requests;
	ReadaheadOptions options;
	ReadaheadDone done;
	gpointer user_data;
	ReadaheadStats stats;
	GThread *thread;
	GSource *idle;     /* attached by the thread at its end: hands the job back */
	gint stop;         /* atomic: readahead_supersede(), or the exit for the urgent one */
	gint64 progress;   /* __atomic: monotonic us of the batch's last step */
	gboolean urgent;   /* in ra->urgent, not ra->job */
	/* guarded by ra->job_lock: */
	gboolean finished; /* the thread is past its batch */
	gboolean abandoned; /* given up: the thread frees the job */
};

static void
readahead_unref(Readahead *ra)
{
	if (!g_atomic_int_dec_and_test(&ra->refs))
		return;
	g_ptr_array_unref(ra->urgent_pending);
	g_cond_clear(&ra->job_cond);
	g_mutex_clear(&ra->hold_lock);
	g_mutex_clear(&ra->job_lock);
	g_hash_table_destroy(ra->cached);
	g_mutex_clear(&ra->cached_lock);
	pagecache_free(ra->pagecache);
	mountdevs_free(ra->mountdevs);
	g_free(ra);
}

static void
job_free(Job *job)
{
	if (job->requests)
		g_array_unref(job->requests);
	if (job->idle) {
		/* Finished by readahead_wait(): the hand-back must not run any more. */
		g_source_destroy(job->idle);
		g_source_unref(job->idle);
	}
	g_free(job);
}

/*
 * Joins the background batch (or with urgent, the urgent thread) if it
 * is `expected` (or any, with NULL), which must have finished, and, with
 * deliver, calls its done.
 */
static void
job_finish(Readahead *ra, Job *expected, gboolean urgent, gboolean deliver)
{
	Job **slot = urgent ? &ra->urgent : &ra->job;
	Job *job;

	g_mutex_lock(&ra->job_lock);
	job = *slot;
	if (job && (!expected || job == expected))
		*slot = NULL;
	else
		job = NULL;
	g_mutex_unlock(&ra->job_lock);
	if (!job)
		return;

	g_thread_join(job->thread);
	/* Cleared first, so done may start the next batch. */
	if (!urgent)
		g_atomic_int_set(&ra->busy, 0);
	if (deliver && job->done)
		job->done(&job->stats, job->user_data);
	job_free(job);
	readahead_unref(ra);
}

/*
 * Gives up the running background job, or with urgent the urgent one
 * (job_lock held; it has not finished). The urgent one's queue goes with
 * it: its done is never called, and the next urgent batch starts a new
 * thread.
 */
static void
job_abandon(Readahead *ra, gboolean urgent)
{
	Job **slot = urgent ? &ra->urgent : &ra->job;
	Job *job = *slot;

	*slot = NULL;
	job->abandoned = TRUE;
	g_atomic_int_set(&job->stop, 1);
	g_thread_unref(job->thread);  /* detached: nobody joins it */
	job->thread = NULL;
	ra->abandoned++;
	ra->stuck++;
	if (urgent) {
		ra->urgent_open = FALSE;
		g_ptr_array_set_size(ra->urgent_pending, 0);
		g_atomic_int_set(&ra->urgent_running, 0);
	} else {
		g_atomic_int_set(&ra->busy, 0);
	}
}

static gboolean
job_finish_idle(gpointer data)
{
	Job *job = data;

	job_finish(job->ra, job, job->urgent, TRUE);
	return G_SOURCE_REMOVE;
}

/* Hands the job back to the main context, where job_finish_idle() joins it. */
static void
job_hand_back(Job *job)
{
	GSource *idle = g_idle_source_new();

	g_source_set_priority(idle, G_PRIORITY_DEFAULT_IDLE);
	g_source_set_callback(idle, job_finish_idle, job, NULL);
	/* Set before it can run; read by job_finish() after the join. */
	job->idle = idle;
	g_source_attach(idle, NULL);
}

/*
 * The end of a job's thread, called with job_lock held, which it
 * releases: the job is handed back, or if it was abandoned meanwhile,
 * freed with its reference to the reader.
 */
static void
job_end(Readahead *ra, Job *job)
{
	gboolean abandoned = job->abandoned;

	job->finished = TRUE;
	if (abandoned)
		ra->stuck--;
	else
		job_hand_back(job);
	g_cond_broadcast(&ra->job_cond);
	g_mutex_unlock(&ra->job_lock);
	if (abandoned) {
		g_debug("readahead: a batch abandoned past its deadline has ended");
		job_free(job);
		readahead_unref(ra);
	}
}

static gpointer
job_thread(gpointer data)
{
	Job *job = data;
	Readahead *ra = job->ra;
	gint64 start = cputime_thread_us();

	job->stats = run_batch(ra, job->requests, &job->options, &job->stop, &job->progress, FALSE);
	g_clear_pointer(&job->requests, g_array_unref);
	/* Before job_end(), which may drop the job's reference to ra. */
	add_thread_cpu(ra, start);
	g_mutex_lock(&ra->job_lock);
	job_end(ra, job);
	return NULL;
}

static void
stats_add(ReadaheadStats *sum, const ReadaheadStats *s)
{
	sum->requests += s->requests;
	sum->files += s->files;
	sum->failed += s->failed;
	sum->skipped += s->skipped;
	sum->bytes += s->bytes;
	sum->syscalls += s->syscalls;
	sum->resident_bytes += s->resident_bytes;
	sum->left_bytes += s->left_bytes;
	sum->resident_ranges += s->resident_ranges;
	sum->probes += s->probes;
	sum->trusted_ranges += s->trusted_ranges;
	sum->unopened_ranges += s->unopened_ranges;
	sum->threads = MAX(sum->threads, s->threads);
	sum->threads_not_idle = MAX(sum->threads_not_idle, s->threads_not_idle);
	sum->slices += s->slices;
	sum->superseded = sum->superseded || s->superseded;
	sum->dropped += s->dropped;
}

/*
 * The urgent thread: reads its batch and every batch given meanwhile, in
 * the best-effort I/O class (its workers inherit it): a starting program
 * waits for these pages, and idle-class reads would be served after its
 * own ones, too late to help. It can block on a hung mount like a
 * background batch, so it carries the same progress and deadline: an
 * abandoned one leaves the queue and urgent_open to its successor.
 */
static gpointer
urgent_thread(gpointer data)
{
	Job *job = data;
	Readahead *ra = job->ra;
	GArray *requests = g_steal_pointer(&job->requests);
	gint64 start = cputime_thread_us();

#ifdef SYS_ioprio_set
	(void)syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		      (IOPRIO_CLASS_BE << IOPRIO_CLASS_SHIFT) | IOPRIO_BE_NORM);
#endif
	for (;;) {
		ReadaheadStats stats = run_batch(ra, requests, &job->options, &job->stop,
						 &job->progress, TRUE);

		stats_add(&job->stats, &stats);
		g_array_unref(requests);
		g_mutex_lock(&ra->job_lock);
		if (!job->abandoned && ra->urgent_pending->len > 0) {
			requests = g_ptr_array_steal_index(ra->urgent_pending, 0);
			g_mutex_unlock(&ra->job_lock);
			continue;
		}
		if (!job->abandoned) {
			ra->urgent_open = FALSE;
			g_atomic_int_set(&ra->urgent_running, 0);
		}
		break;
	}
	add_thread_cpu(ra, start);
	job_end(ra, job);
	return NULL;
}

/*
 * Whether the running job (job_lock held) made no step for the deadline,
 * holds aside (an urgent job is never held).
 */
static gboolean
job_overdue(Readahead *ra, const Job *job, gint64 now)
{
	gint64 last = __atomic_load_n(&job->progress, __ATOMIC_RELAXED);

	if (!job->urgent) {
		g_mutex_lock(&ra->hold_lock);
		last = MAX(last, ra->hold_until);
		g_mutex_unlock(&ra->hold_lock);
	}
	return !job->finished && now - last > READAHEAD_DEADLINE_US;
}

Readahead *
readahead_new(PagecacheProbes probes)
{
	Readahead *ra = g_new0(Readahead, 1);

	ra->pagecache = pagecache_new(probes);
	ra->refs = 1;
	ra->mountdevs = mountdevs_new();
	g_mutex_init(&ra->job_lock);
	g_cond_init(&ra->job_cond);
	g_mutex_init(&ra->hold_lock);
	g_mutex_init(&ra->cached_lock);
	ra->cached = g_hash_table_new_full(cached_key_hash, cached_key_equal, g_free, cached_free);
	ra->urgent_pending = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
	return ra;
}

void
readahead_free(Readahead *ra)
{
	if (!ra)
		return;
	readahead_supersede(ra);
	/* Reads in flight end soon; a thread stuck for good is left behind. */
	readahead_wait_until(ra, g_get_monotonic_time() + READAHEAD_EXIT_WAIT_US, FALSE);
	readahead_unref(ra);
}

/* Starts the batch in a new thread; FALSE (requests left to the caller) if none starts. */
static gboolean
start_job(Readahead *ra, GArray *requests, const ReadaheadOptions *options,
	  ReadaheadDone done, gpointer user_data)
{
	g_autoptr(GError) error = NULL;
	Job *job = g_new0(Job, 1);

	job->ra = ra;
	job->requests = requests;
	job->options = *options;
	job->done = done;
	job->user_data = user_data;
	job->progress = g_get_monotonic_time();
	g_atomic_int_inc(&ra->refs);
	g_mutex_lock(&ra->job_lock);
	ra->job = job;
	/* Under the lock, so job_finish() never sees a job without its thread. */
	job->thread = g_thread_try_new("readahead", job_thread, job, &error);
	if (!job->thread)
		ra->job = NULL;
	g_mutex_unlock(&ra->job_lock);
	if (job->thread)
		return TRUE;
	g_atomic_int_dec_and_test(&ra->refs);
	if (limit_allows(options->warning_limit))
		g_warning("cannot start the readahead thread: %s, batch dropped", error->message);
	job->requests = NULL;
	job_free(job);
	return FALSE;
}

/*
 * Whether READAHEAD_MAX_STUCK abandoned threads are blocked: then the
 * batch is refused and counted.
 */
static gboolean
at_stuck_cap(Readahead *ra)
{
	gboolean full;

	g_mutex_lock(&ra->job_lock);
	full = ra->stuck >= READAHEAD_MAX_STUCK;
	if (full)
		ra->refused++;
	g_mutex_unlock(&ra->job_lock);
	return full;
}

/*
 * Abandons the running background job, or with urgent the urgent one, if
 * it is past its deadline; TRUE if it did.
 */
static gboolean
abandon_overdue(Readahead *ra, gboolean urgent)
{
	Job *job;
	gboolean abandon;

	g_mutex_lock(&ra->job_lock);
	job = urgent ? ra->urgent : ra->job;
	abandon = job && job_overdue(ra, job, g_get_monotonic_time());
	if (abandon)
		job_abandon(ra, urgent);
	g_mutex_unlock(&ra->job_lock);
	if (abandon)
		g_warning("readahead: a batch made no progress for %d s, a file system is not "
			  "answering: abandoned", (int)(READAHEAD_DEADLINE_US / G_USEC_PER_SEC));
	return abandon;
}

gboolean
readahead_start(Readahead *ra, GArray *requests, const ReadaheadOptions *options,
		ReadaheadDone done, gpointer user_data)
{
	g_return_val_if_fail(ra != NULL, FALSE);
	g_return_val_if_fail(requests != NULL, FALSE);
	g_return_val_if_fail(options != NULL, FALSE);
	/*
	 * The background batch waits while the urgent thread runs: not for
	 * one stuck on a hung mount.
	 */
	if (g_atomic_int_get(&ra->urgent_running))
		(void)abandon_overdue(ra, TRUE);
	if (g_atomic_int_get(&ra->busy))
		(void)abandon_overdue(ra, FALSE);
	if (!g_atomic_int_compare_and_exchange(&ra->busy, 0, 1)) {
		g_array_unref(requests);
		return FALSE;
	}
	/*
	 * Never read here, whatever maxprocs: an open or a read of a hung
	 * mount would hold the main loop, signals and exit included.
	 */
	if (!at_stuck_cap(ra) && start_job(ra, requests, options, done, user_data))
		return TRUE;
	g_array_unref(requests);
	g_atomic_int_set(&ra->busy, 0);
	return FALSE;
}

gboolean
readahead_busy(Readahead *ra)
{
	g_return_val_if_fail(ra != NULL, FALSE);

	return g_atomic_int_get(&ra->busy) != 0;
}

void
readahead_supersede(Readahead *ra)
{
	g_return_if_fail(ra != NULL);

	g_mutex_lock(&ra->job_lock);
	if (ra->job)
		g_atomic_int_set(&ra->job->stop, 1);
	g_mutex_unlock(&ra->job_lock);
}

/* readahead_wait_until() for the background job, or with urgent the urgent one. */
static gboolean
job_wait_until(Readahead *ra, gboolean urgent, gint64 until, gboolean deliver)
{
	Job **slot = urgent ? &ra->urgent : &ra->job;
	gboolean finished = TRUE;

	g_mutex_lock(&ra->job_lock);
	while (*slot && !(*slot)->finished && (until == G_MAXINT64 || g_get_monotonic_time() < until)) {
		if (until == G_MAXINT64)
			g_cond_wait(&ra->job_cond, &ra->job_lock);
		else
			(void)g_cond_wait_until(&ra->job_cond, &ra->job_lock, until);
	}
	if (*slot && !(*slot)->finished) {
		job_abandon(ra, urgent);
		finished = FALSE;
	}
	g_mutex_unlock(&ra->job_lock);
	if (finished)
		job_finish(ra, NULL, urgent, deliver);
	else
		g_warning("readahead: a batch still running after the wait is abandoned");
	return finished;
}

gboolean
readahead_wait_until(Readahead *ra, gint64 until, gboolean deliver)
{
	gboolean finished;

	g_return_val_if_fail(ra != NULL, FALSE);

	finished = job_wait_until(ra, FALSE, until, deliver);
	/*
	 * The urgent thread's reads in flight complete, no new one starts; one
	 * stuck on a hung mount is abandoned at the same time limit.
	 */
	g_mutex_lock(&ra->job_lock);
	if (ra->urgent)
		g_atomic_int_set(&ra->urgent->stop, 1);
	g_mutex_unlock(&ra->job_lock);
	return job_wait_until(ra, TRUE, until, deliver) && finished;
}

void
readahead_wait(Readahead *ra)
{
	g_return_if_fail(ra != NULL);

	(void)readahead_wait_until(ra, G_MAXINT64, TRUE);
}

void
readahead_get_abandoned(Readahead *ra, guint64 *abandoned, guint *stuck, guint64 *refused)
{
	g_return_if_fail(ra != NULL);

	g_mutex_lock(&ra->job_lock);
	if (abandoned)
		*abandoned = ra->abandoned;
	if (stuck)
		*stuck = ra->stuck;
	if (refused)
		*refused = ra->refused;
	g_mutex_unlock(&ra->job_lock);
}

gint64
readahead_get_cpu_us(Readahead *ra)
{
	g_return_val_if_fail(ra != NULL, 0);

	return __atomic_load_n(&ra->thread_cpu_us, __ATOMIC_RELAXED);
}

gboolean
readahead_start_urgent(Readahead *ra, GArray *requests, const ReadaheadOptions *options,
		       ReadaheadDone done, gpointer user_data)
{
	g_autoptr(GError) error = NULL;
	gboolean taken = FALSE;
	Job *job;

	g_return_val_if_fail(ra != NULL, FALSE);
	g_return_val_if_fail(requests != NULL, FALSE);
	g_return_val_if_fail(options != NULL, FALSE);

	/* A thread stuck on a hung mount must not keep every later start out. */
	if (g_atomic_int_get(&ra->urgent_running))
		(void)abandon_overdue(ra, TRUE);
	g_mutex_lock(&ra->job_lock);
	if (ra->urgent_open) {
		/* The running thread reads it next, after the one it reads. */
		g_ptr_array_add(ra->urgent_pending, requests);
		taken = TRUE;
	} else if (ra->stuck >= READAHEAD_MAX_STUCK) {
		/* No new thread for a hung mount to keep (READAHEAD_MAX_STUCK). */
		ra->refused++;
	} else if (!ra->urgent) {
		job = g_new0(Job, 1);
		job->ra = ra;
		job->requests = requests;
		job->options = *options;
		job->done = done;
		job->user_data = user_data;
		job->urgent = TRUE;
		job->progress = g_get_monotonic_time();
		g_atomic_int_inc(&ra->refs);
		ra->urgent = job;
		ra->urgent_open = TRUE;
		g_atomic_int_set(&ra->urgent_running, 1);
		/* Under the lock, so job_finish() never sees a job without its thread. */
		job->thread = g_thread_try_new("readahead-urgent", urgent_thread, job, &error);
		if (job->thread) {
			taken = TRUE;
		} else {
			ra->urgent = NULL;
			ra->urgent_open = FALSE;
			g_atomic_int_set(&ra->urgent_running, 0);
			g_atomic_int_dec_and_test(&ra->refs);
			job->requests = NULL;
			job_free(job);
		}
	}
	g_mutex_unlock(&ra->job_lock);
	if (error && limit_allows(options->warning_limit))
		g_warning("cannot start the urgent readahead thread: %s", error->message);
	if (!taken)
		g_array_unref(requests);
	return taken;
}

/* ---- I/O priority ---- */

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
