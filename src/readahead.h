/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Readahead: reads chosen file ranges into the page cache.
 *
 * A batch is a copy of the chosen ranges (the model may change while it
 * runs), most likely first: a GArray of OrderRequest (order.h). It is
 * read in slices of at most slice_bytes, in that order, so that what is
 * most likely needed is cached first; in each slice adjacent or
 * overlapping ranges of one file are merged, each file is examined once,
 * what is left to read is sorted by `strategy`, and each range is read
 * with readahead(2) in chunks no larger than the device's per-call cap.
 * At most READAHEAD_INFLIGHT_MAX bytes of a batch are in flight at once:
 * a launch that starts while the daemon reads waits behind that much of
 * its I/O, not behind the whole batch, on disks whose scheduler does not
 * serve the idle I/O class last. Files are opened as pagecache_open()
 * does: only regular files, never following a final symlink or blocking;
 * a FIFO, device, socket or directory in place of a learned file is
 * skipped and reported.
 *
 * With check_residency, each range is first compared with the page
 * cache (pagecache.h) and only its missing pages are requested: a range
 * already cached costs no readahead call.
 *
 * A Readahead is the daemon's reader: it runs at most one background
 * batch at a time, and one urgent thread for the programs starting now
 * (readahead_start_urgent()), holds new background reads while a
 * program starts, and remembers which residency calls the kernel
 * refused. A batch runs in a background thread that hands the requests
 * to up to maxprocs worker threads (with 0 or 1 it reads them itself),
 * so the main loop never waits on the disk; readahead_run() is the
 * synchronous form, for tools and tests. Its methods are called from the thread that runs
 * the default main context, except readahead_hold(), which any thread
 * may call.
 */
#pragma once

#include <glib.h>

#include "log.h"
#include "order.h"
#include "pagecache.h"

/*
 * With warm_dirs, the entries of a directory are looked up only if it
 * has at most this many: a directory of thousands of libraries is listed
 * (its blocks serve every lookup in it) but its entries are not examined.
 */
#define READAHEAD_WARM_ENTRIES 512
/* Directories one batch warms at most. */
#define READAHEAD_WARM_DIRS 256

/* Bytes of a batch requested from the disk and not yet read, at most. */
#define READAHEAD_INFLIGHT_MAX ((guint64)2 * 1024 * 1024)

/*
 * The daemon's ReadaheadOptions.trust_us: a file found cached is probed
 * in full again after a minute (every third cycle at the default 20 s,
 * every 30th at 2 s), and spot-checked in between. A program that
 * starts meanwhile gets the launch-time read, which always probes in
 * full.
 */
#define READAHEAD_TRUST_US (60 * G_USEC_PER_SEC)

/* How a batch is read. */
typedef struct ReadaheadOptions {
	SortStrategy strategy;    /* the order of each slice */
	int maxprocs;             /* worker threads; 0 reads in the calling thread */
	gboolean check_residency; /* request only pages not in the page cache */
	/*
	 * Warm the metadata around what had to be read: each directory
	 * holding a file read is listed to its end and, up to
	 * READAHEAD_WARM_ENTRIES entries, each of its entries is looked up
	 * (lstat), once per batch, after the slice's reads. A cold start
	 * looks up many more paths than it opens (a library search's misses,
	 * a configuration directory listed and each entry examined), each
	 * a small read of a directory block or an inode table block that a
	 * request-limited disk charges in full; opening the learned files
	 * only warms their own path and inode.
	 */
	gboolean warm_dirs;
	guint64 slice_bytes;      /* sort and read in slices of this size; 0: one slice */
	/*
	 * With check_residency, for batches of readahead_run() and
	 * readahead_start() (never the urgent ones): a file whose requested
	 * ranges a full probe of this reader found all cached less than
	 * trust_us ago, and that has not changed since (identity, size,
	 * modification time), is only spot-checked: the first, middle and
	 * last page of each range, one cachestat() each, instead of one
	 * cachestat() over the range, which walks every cached page of it in
	 * the kernel (mincore alike). Probing the same cached files in full
	 * every cycle was the largest part of a cycle at 1,000 programs. A
	 * drop of the cache, a DONTNEED or the eviction of a whole file
	 * fails the spot check and the file is probed and read again at
	 * once; pages evicted around the spots are read again up to
	 * trust_us later. 0: every batch probes in full.
	 */
	gint64 trust_us;
	/*
	 * With trust_us, where to read the page cache's eviction count
	 * (pagecache_read_evictions(): /proc/vmstat), once per batch; NULL:
	 * not read. While the count is the one read before a file's last
	 * full probe (nothing reclaimed, the cache not dropped since), the
	 * file is not even opened: one lstat checks that it is the same file
	 * (identity, size, modification time), and no spot check runs. What
	 * it gives up: pages another program drops with POSIX_FADV_DONTNEED
	 * are read again up to trust_us later, not at once. Borrowed: a
	 * string that outlives the batch (the daemon's is static).
	 */
	const char *vmstat_path;
	/*
	 * Rate limits across batches (the caller owns them), for the read
	 * errors and the odd files that repeat every cycle; NULL: each batch
	 * still shows at most 10 of each.
	 */
	LogLimit *warning_limit;
	LogLimit *notice_limit;
} ReadaheadOptions;

typedef struct ReadaheadStats {
	guint requests;       /* ranges after merging */
	guint files;          /* distinct files opened */
	guint failed;         /* ranges that could not be read */
	guint skipped;        /* not regular files, vanished files */
	guint other_file;     /* not read: the path names another file than the one learned */
	guint64 bytes;        /* bytes requested */
	guint64 syscalls;     /* readahead(2) or fadvise calls issued */
	/* with check_residency: */
	guint64 resident_bytes;  /* bytes not requested because they were cached */
	guint resident_ranges;   /* ranges skipped whole: every page was cached */
	guint64 probes;          /* cachestat(2) and mincore(2) calls that answered */
	/*
	 * urgent batches only: missing bytes not requested, left to the
	 * starting program (runs under READAHEAD_URGENT_MIN_RUN_BYTES)
	 */
	guint64 left_bytes;
	guint trusted_ranges;    /* of resident_ranges, only spot-checked after a recent probe */
	guint unopened_ranges;   /* of those, not even opened (vmstat_path) */
	/* the I/O class of the threads that read */
	guint threads;           /* threads that read at least one file */
	guint threads_not_idle;  /* of those, how many were not in the idle class */
	guint slices;            /* slices started */
	/* with readahead_supersede(): */
	/* with warm_dirs: */
	guint dirs_warmed;       /* directories listed */
	guint64 entries_warmed;  /* entries looked up in them */
	gboolean superseded;     /* the batch was told to stop */
	guint dropped;           /* requests (before merging) not read because of it */
} ReadaheadStats;

typedef struct Readahead Readahead;

/*
 * A background batch that has made no step (an open, a chunk read) for
 * this long waits on a file system that stopped answering: the next
 * readahead_start() abandons it (its thread is detached, never joined,
 * and counted: readahead_get_abandoned()) and starts the new batch. A
 * healthy disk reads a chunk in well under a second even when busy.
 * The same holds for the urgent thread (readahead_start_urgent()).
 */
#define READAHEAD_DEADLINE_US (10 * G_USEC_PER_SEC)
/*
 * At most this many abandoned threads may be blocked at once: with as
 * many, readahead_start() and readahead_start_urgent() refuse every new
 * batch (counted: readahead_get_abandoned()) rather than start another
 * thread that a hung mount could keep. Each abandoned batch took a new
 * thread and its workers' stack; a mount that hangs for good would
 * otherwise gain one every READAHEAD_DEADLINE_US.
 */
#define READAHEAD_MAX_STUCK 4
/* How long readahead_free() waits for a running batch before abandoning it. */
#define READAHEAD_EXIT_WAIT_US (2 * G_USEC_PER_SEC)

/*
 * A reader whose residency checks may use the calls in probes
 * (PAGECACHE_PROBE_ALL but in tests). Creates no thread.
 */
Readahead *readahead_new(PagecacheProbes probes);
/*
 * Stops a running batch and waits for it, at most READAHEAD_EXIT_WAIT_US,
 * without calling its done (call readahead_wait_until() first to get its
 * figures); a batch still running then is abandoned, and the reader is
 * freed by the last of its threads to end. NULL is accepted.
 */
void readahead_free(Readahead *ra);

/*
 * Reads the requests now, in this thread (and its workers): cut into
 * slices in the given order, each sorted and merged, then read. A
 * request longer than slice_bytes is a slice of its own. stats.requests
 * counts the ranges after merging, summed over the slices. The requests
 * stay the caller's; their paths are moved out (left NULL) as they are
 * read. A batch run here is never superseded, but it is held.
 */
ReadaheadStats readahead_run(Readahead *ra, GArray *requests, const ReadaheadOptions *options);

typedef void (*ReadaheadDone)(const ReadaheadStats *stats, gpointer user_data);

/*
 * Runs the batch in the background (takes ownership of requests) and
 * calls done in the default main context when it is over. With
 * maxprocs 0 or 1 the batch's thread reads it alone, with no workers:
 * never in the calling thread, which a file system that stops answering
 * would hold. Returns FALSE (and frees requests, done never called) if a
 * batch is still running, READAHEAD_MAX_STUCK abandoned threads are
 * blocked, or no thread can be started.
 */
gboolean readahead_start(Readahead *ra, GArray *requests, const ReadaheadOptions *options,
			 ReadaheadDone done, gpointer user_data);
/* Whether a batch started by readahead_start() has not delivered its done yet. */
gboolean readahead_busy(Readahead *ra);
/*
 * Tells the running background batch, if any, to stop: reads already
 * issued complete, no new one starts, and done still gets its stats
 * (superseded set, the requests never started counted as dropped). For a
 * newer prediction, which the caller starts from done, and at exit.
 */
void readahead_supersede(Readahead *ra);
/*
 * Until the monotonic time `until` (us, g_get_monotonic_time()), no new
 * read or file open of any batch of ra starts; reads in flight complete.
 * Each call replaces the hold before: an earlier time shortens it, 0 ends
 * it (its one caller, the launch policy, keeps the union of its holds).
 * A worker waiting for its turn looks again before it issues its chunk,
 * so a batch in flight stops at its next chunk. The daemon holds while a
 * program starts, whose own reads should not queue behind prefetching on
 * a disk that serves all I/O alike.
 */
void readahead_hold(Readahead *ra, gint64 until);
/*
 * An urgent batch with check_residency reads only runs of missing pages
 * at least this long, as the page cache has them when it reaches them:
 * the starting program reads the same files meanwhile, and readahead(2)
 * skips the pages it has read, so a range it has begun becomes one
 * request per hole. A request-limited disk charges a 4 KiB hole the
 * request a 256 KiB read costs (300 requests and 100 MB/s), and the
 * program reads what is left of a file it is in itself, in the kernel's
 * own readahead windows. A run is read chunk by chunk, each looked at
 * first: where the program has begun to read, the batch leaves the run
 * and goes on with the next long run after it.
 */
#define READAHEAD_URGENT_MIN_RUN_BYTES ((guint64)256 * 1024)
/*
 * Reads the requests (taken) at once in an urgent thread, for a program
 * starting now: never held (readahead_hold()), never superseded, in the
 * best-effort I/O class, with as much in flight as a background batch
 * (READAHEAD_INFLIGHT_MAX: a demand read of the program queues behind
 * at most that), only missing runs of at least
 * READAHEAD_URGENT_MIN_RUN_BYTES with check_residency,
 * and while it runs the background batch starts no new read or open.
 * A batch given while the urgent thread runs is read next by it and
 * counted in the same done, which is called in the default main context
 * when the thread has read them all. It has the background batch's
 * deadline (READAHEAD_DEADLINE_US, holds aside): a thread past it is
 * abandoned by the next start, and its done is never called. Returns
 * FALSE (and frees requests) if no thread could take them.
 */
gboolean readahead_start_urgent(Readahead *ra, GArray *requests, const ReadaheadOptions *options,
				ReadaheadDone done, gpointer user_data);
/*
 * Waits for the running batches, however long it takes, and delivers
 * their done; the urgent thread starts no new read once the background
 * batch has ended.
 */
void readahead_wait(Readahead *ra);
/*
 * Waits for the running batches (the background one, then the urgent
 * thread, which starts no new read from then on) until the monotonic
 * time `until` (us), then joins them and, with deliver, calls their
 * done; TRUE. A batch still running then is abandoned (see
 * READAHEAD_DEADLINE_US): FALSE, its done never called. For the exit,
 * which must not wait for a file system that stopped answering.
 */
gboolean readahead_wait_until(Readahead *ra, gint64 until, gboolean deliver);
/*
 * Batches abandoned since ra was made, how many of their threads are
 * still blocked (in an open or a read that does not return), and how
 * many batches were refused at READAHEAD_MAX_STUCK, for the dump; any
 * may be NULL.
 */
void readahead_get_abandoned(Readahead *ra, guint64 *abandoned, guint *stuck,
			     guint64 *refused);

/*
 * CPU time (us) the batch threads (background and urgent) and their
 * workers spent since ra was made, counted as each ends; a batch still
 * running is not in it yet. For the dump: it is part of what the main
 * thread's stages do not count.
 */
gint64 readahead_get_cpu_us(Readahead *ra);

/*
 * The reader's OrderExamineFunc (user_data unused): one lstat
 * (SORT_INODE) or one pagecache_open() (SORT_BLOCK) of the file, then
 * one FIEMAP query per range for SORT_BLOCK. Pass it to order_sort() to
 * sort requests for real files as a batch does.
 */
void readahead_examine(OrderRequest *reqs, guint n, SortStrategy strategy, gpointer user_data);

/*
 * Puts the calling thread in the idle I/O class, so that the kernel
 * serves its reads only when no other process wants the disk. Threads
 * created afterwards inherit the class: call it before any exists.
 */
gboolean readahead_set_idle_class(GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Readahead, readahead_free)
