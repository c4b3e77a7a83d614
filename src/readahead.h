/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Readahead: reads chosen file ranges into the page cache.
 *
 * A batch is a copy of the chosen ranges (the model may change while it
 * runs), most likely first. It is read in slices of at most slice_bytes,
 * in that order, so that what is most likely needed is cached first;
 * in each slice adjacent or overlapping ranges of one file are merged,
 * each file is examined once, what is left to read is sorted by
 * `sortstrategy`, and each range is read with readahead(2) in
 * chunks no larger than the device's per-call cap. At most
 * READAHEAD_INFLIGHT_MAX bytes of a batch are in flight at once: a
 * launch that starts while the daemon reads waits behind that much of
 * its I/O, not behind the whole batch, on disks whose scheduler does not
 * serve the idle I/O class last. Files are opened
 * without following a final symlink, without blocking, without updating
 * atime, and only if they are regular files: a FIFO, device, socket or
 * directory in place of a learned file is skipped and reported.
 *
 * With check_residency, each range is first compared with the page
 * cache (cachestat(2), else mincore(2)) and only its missing pages are
 * requested: a range already cached costs no readahead call.
 *
 * With maxprocs > 0 a batch runs in a background thread that hands the
 * requests to up to maxprocs worker threads, so the main loop never
 * waits on the disk; with 0 it runs synchronously.
 */
#pragma once

#include <glib.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "log.h"

enum {
	SORT_NONE = 0,
	SORT_PATH = 1,
	SORT_INODE = 2,
	SORT_BLOCK = 3,
};

typedef struct ReadaheadRequest {
	char *path;           /* owned */
	guint64 offset;
	guint64 length;
	/* filled while sorting */
	dev_t dev;
	guint64 inode;
	guint64 block;        /* physical byte offset of `offset`, or inode order */
} ReadaheadRequest;

/* Bytes of a batch requested from the disk and not yet read, at most. */
#define READAHEAD_INFLIGHT_MAX ((guint64)2 * 1024 * 1024)

/* How a batch is read. */
typedef struct ReadaheadOptions {
	int strategy;             /* SORT_* */
	int maxprocs;             /* worker threads; 0 reads in the calling thread */
	gboolean check_residency; /* request only pages not in the page cache */
	guint64 slice_bytes;      /* sort and read in slices of this size; 0: one slice */
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
	guint64 bytes;        /* bytes requested */
	guint64 syscalls;     /* readahead(2) or fadvise calls issued */
	/* with check_residency: */
	guint64 resident_bytes;  /* bytes not requested because they were cached */
	guint resident_ranges;   /* ranges skipped whole: every page was cached */
	guint64 probes;          /* cachestat(2) and mincore(2) calls that answered */
	/* the I/O class of the threads that read */
	guint threads;           /* threads that read at least one file */
	guint threads_not_idle;  /* of those, how many were not in the idle class */
	guint slices;            /* slices started */
	/* with readahead_supersede(): */
	gboolean superseded;     /* the batch was told to stop */
	guint dropped;           /* requests (before merging) not read because of it */
} ReadaheadStats;

/* A GArray of ReadaheadRequest whose elements free their path. */
GArray *readahead_requests_new(void);
void readahead_requests_add(GArray *requests, const char *path, guint64 offset, guint64 length);

/*
 * Sorts requests by strategy (path, then offset, then length descending,
 * as the tie-break of every strategy) and merges overlapping or adjacent
 * ranges of the same file. For SORT_INODE and SORT_BLOCK it stats (and
 * for SORT_BLOCK queries FIEMAP on) each file first; files that cannot be
 * examined sort last.
 */
void readahead_sort(GArray *requests, int strategy);
void readahead_merge(GArray *requests);
/* The same, also merging ranges of a file at most gap bytes apart (the gap is read too). */
void readahead_merge_near(GArray *requests, guint64 gap);

/*
 * The end (exclusive) of the slice that starts at requests[start]: the
 * requests after it, in order, while their lengths sum to at most
 * slice_bytes; the first request always belongs to it, however long.
 * slice_bytes == 0 makes one slice of everything.
 */
guint readahead_slice_end(const GArray *requests, guint start, guint64 slice_bytes);

/*
 * Reads the requests now, in this thread (and its workers): cut into
 * slices in the given order, each sorted and merged, then read. A
 * request longer than slice_bytes is a slice of its own. stats.requests
 * counts the ranges after merging, summed over the slices.
 */
ReadaheadStats readahead_run(GArray *requests, const ReadaheadOptions *options);

typedef void (*ReadaheadDone)(const ReadaheadStats *stats, gpointer user_data);

/*
 * Runs the batch in the background (takes ownership of requests) and
 * calls done in the main context when it is over. With maxprocs == 0 it
 * runs synchronously and calls done before returning. Returns FALSE (and
 * frees requests) if a batch is still running.
 */
gboolean readahead_start(GArray *requests, const ReadaheadOptions *options,
			 ReadaheadDone done, gpointer user_data);
gboolean readahead_busy(void);
/*
 * Tells the running background batch, if any, to stop: reads already
 * issued complete, no new one starts, and done still gets its stats
 * (superseded set, the requests never started counted as dropped). For a
 * newer prediction, which the caller starts from done, and at exit.
 */
void readahead_supersede(void);
/*
 * Until the monotonic time `until` (us, g_get_monotonic_time()), no new
 * read or file open of any batch starts; reads in flight complete. A
 * later time extends a hold, an earlier one does not shorten it, 0 ends
 * it. The daemon holds while a program starts, whose own reads should
 * not queue behind prefetching on a disk that serves all I/O alike.
 */
void readahead_hold(gint64 until);
/* Waits for a running batch (at exit) and delivers its done. */
void readahead_wait(void);

/*
 * Puts the calling thread in the idle I/O class, so that the kernel
 * serves its reads only when no other process wants the disk. Threads
 * created afterwards inherit the class: call it before any exists.
 */
gboolean readahead_set_idle_class(GError **error);

/*
 * Residency of part of an open regular file (fd, with its path and fstat),
 * for the modules that measure what is cached rather than read it.
 * Both answer FALSE when the kernel will not tell the truth: cachestat(2)
 * and mincore(2) report on a file only to a caller that owns it, may
 * write it or has CAP_FOWNER (mincore claims every page resident to
 * anyone else), and a seccomp filter may forbid either call.
 *
 * readahead_resident_bytes: bytes of [offset, offset + length) in the
 * page cache (whole pages, capped at length), with cachestat where the
 * kernel has it (Linux 6.5: one call, no mapping) and mincore otherwise.
 *
 * readahead_resident_pages: fills vec[0 .. pages) with mincore's answer
 * for the pages from the page-aligned offset on (bit 0: resident).
 */
/*
 * Opens path as the reader does: only a regular file, never following a
 * final symlink or blocking on a FIFO, without updating its atime where
 * allowed. Returns the descriptor (with *ret_st its fstat), or -1.
 */
int readahead_open_file(const char *path, struct stat *ret_st);
gboolean readahead_resident_bytes(int fd, const char *path, const struct stat *st,
				  guint64 offset, guint64 length, guint64 *ret_bytes);
gboolean readahead_resident_pages(int fd, const char *path, const struct stat *st,
				  guint64 offset, gsize pages, guint8 *vec);

/*
 * For tests: FALSE makes residency checks behave as on a kernel without
 * cachestat(2) (mincore only); TRUE tries cachestat again.
 */
void readahead_use_cachestat(gboolean use);
