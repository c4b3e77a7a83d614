/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pagecache: opening a learned file safely, and asking the kernel which
 * of its pages are in the page cache.
 *
 * The reader (readahead) uses both to skip what is cached; the watcher
 * (watch) uses them to measure what a program's start found cached and
 * to learn what it read. Nothing here reads file data.
 *
 * Residency comes from cachestat(2) (Linux 6.5: one call per range, no
 * mapping) and, where that is missing, refused or the answer is partial,
 * from mincore(2) over a read-only mapping. Both tell the truth about a
 * file only to a caller that owns it, may write it or has CAP_FOWNER
 * (mincore claims every page resident to anyone else), and a seccomp
 * filter may forbid either call: the functions then answer "unknown".
 *
 * A Pagecache remembers what the kernel refused for good (cachestat
 * answering ENOSYS, a filter's EPERM on either call) so that a batch does
 * not ask again for every range, and whether the process has CAP_FOWNER.
 * Its owner holds it; the functions take NULL instead to ask afresh on
 * every call, for callers that probe rarely. It is safe to share between
 * threads.
 */
#pragma once

#include <glib.h>
#include <sys/stat.h>
#include <sys/types.h>

/* ---- opening a file safely ---- */

typedef enum {
	PAGECACHE_OPEN_OK,
	PAGECACHE_OPEN_MISSING,      /* ENOENT or ENOTDIR: vanished, normal after upgrades */
	PAGECACHE_OPEN_NOT_REGULAR,  /* the lstat mode says what it is instead */
	PAGECACHE_OPEN_CHANGED,      /* replaced between lstat and open */
	PAGECACHE_OPEN_ERROR,        /* *ret_errno says why */
} PagecacheOpen;

/*
 * Opens path if, and only if, it is a regular file: never following a
 * final symlink, never blocking on a FIFO, never opening a device, and
 * without updating its atime where that is allowed.
 *
 * On PAGECACHE_OPEN_OK *ret_fd is the descriptor (the caller closes it)
 * and *ret_st its fstat; otherwise *ret_fd is -1, and on
 * PAGECACHE_OPEN_NOT_REGULAR *ret_st holds the lstat. ret_errno may be
 * NULL; otherwise it gets the errno of a failure (0 when there is none).
 */
PagecacheOpen pagecache_open(const char *path, int *ret_fd, struct stat *ret_st, int *ret_errno);

/* "a FIFO", "a directory", ...: what a non-regular mode is, for messages. */
const char *pagecache_mode_name(mode_t mode);

/* The size of a page in bytes. */
guint64 pagecache_page_size(void);

/* ---- residency ---- */

/* Which calls a Pagecache may try. */
typedef enum {
	PAGECACHE_PROBE_MINCORE = 1 << 0,
	PAGECACHE_PROBE_CACHESTAT = 1 << 1,
	PAGECACHE_PROBE_ALL = PAGECACHE_PROBE_MINCORE | PAGECACHE_PROBE_CACHESTAT,
} PagecacheProbes;

typedef struct Pagecache Pagecache;

/*
 * A new memo that may try the calls in probes (PAGECACHE_PROBE_ALL but
 * in tests, which use PAGECACHE_PROBE_MINCORE to behave as on a kernel
 * without cachestat). It asks the kernel for CAP_FOWNER once, here: a
 * daemon does not change its capabilities while it runs. Free with
 * pagecache_free() (NULL is accepted).
 */
Pagecache *pagecache_new(PagecacheProbes probes);
void pagecache_free(Pagecache *pc);

typedef enum {
	PAGECACHE_UNKNOWN,  /* the kernel would not tell: treat the range as not cached */
	PAGECACHE_NONE,     /* no page of the range is cached */
	PAGECACHE_ALL,      /* every page of the range is cached */
	PAGECACHE_PART,     /* some are (with pagecache_find_missing: the missing runs are listed) */
} PagecacheResidency;

/*
 * All the functions below take an open regular file (fd, with its path
 * and fstat, as pagecache_open() gives them) and a byte range of it that
 * lies within the file. *probes, where asked for, is increased by the
 * cachestat(2) and mincore(2) calls that answered.
 */

/*
 * One cachestat(2) call over [offset, offset + length), length > 0: how
 * many of the pages the range touches (partial first and last pages
 * included) are cached. PAGECACHE_UNKNOWN where cachestat is missing or
 * refused.
 */
PagecacheResidency pagecache_cachestat(Pagecache *pc, int fd, const struct stat *st,
				       guint64 offset, guint64 length, guint64 *probes);

/*
 * Which parts of [offset, offset + length), length > 0, are not cached.
 * cachestat settles the common answers (all or nothing cached) in one
 * call; otherwise mincore, where it tells the truth, lists in missing
 * (a GArray of Interval, emptied first) the runs of missing pages,
 * clipped to the range, a run extended over at most gap cached bytes to
 * the next one. The runs are filled only on PAGECACHE_PART.
 */
PagecacheResidency pagecache_find_missing(Pagecache *pc, int fd, const char *path,
					  const struct stat *st, guint64 offset, guint64 length,
					  guint64 gap, GArray *missing, guint64 *probes);

/*
 * *ret_bytes: the bytes of [offset, offset + length) in the page cache
 * (whole pages, capped at length; 0 for an empty range). FALSE when the
 * kernel will not tell, or the range wraps past 2^64.
 */
gboolean pagecache_resident_bytes(Pagecache *pc, int fd, const char *path, const struct stat *st,
				  guint64 offset, guint64 length, guint64 *ret_bytes);

/*
 * Fills vec[0 .. pages) with mincore's answer for the pages from the
 * page-aligned offset on (bit 0: resident). FALSE when mincore is
 * refused or would not tell the truth about this file.
 */
gboolean pagecache_resident_pages(Pagecache *pc, int fd, const char *path, const struct stat *st,
				  guint64 offset, gsize pages, guint8 *vec);

/*
 * pagecache_resident_pages() for a caller that expects most files cached
 * whole or not at all (the files a program opened at start-up): one
 * cachestat(2) over the pages first settles both answers (vec all 1 or
 * all 0) with no mapping; only a file partly cached, or one cachestat
 * will not tell about, is asked page by page with mincore, where that
 * tells the truth. mincore also costs a mapping and its removal, which
 * on a virtual machine were three times the call itself. *probes, when
 * given, is increased by the calls that answered.
 */
gboolean pagecache_resident_vector(Pagecache *pc, int fd, const char *path, const struct stat *st,
				   guint64 offset, gsize pages, guint8 *vec, guint64 *probes);

/* ---- evictions ---- */

/*
 * A count that grows whenever the kernel may have taken pages out of the
 * page cache behind a caller's back, from the text of /proc/vmstat: the
 * sum of every pgsteal_* counter (pages reclaimed, by kswapd, directly,
 * by khugepaged, proactively; anon and file) and drop_pagecache (writes
 * to /proc/sys/vm/drop_caches). Unchanged between two readings, no page
 * was reclaimed and the cache was not dropped; pages that a file's own
 * owner removes (truncation, a rewrite: its size or mtime change) or
 * drops with POSIX_FADV_DONTNEED are not counted. FALSE (and *ret 0)
 * when the text has none of these counters.
 */
gboolean pagecache_parse_evictions(const char *vmstat, guint64 *ret);
/* The same from the file at path (/proc/vmstat); FALSE if it cannot be read. */
gboolean pagecache_read_evictions(const char *path, guint64 *ret);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Pagecache, pagecache_free)
