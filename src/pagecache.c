/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pagecache: the safe open of a learned file, and the page cache
 * residency of its ranges.
 *
 * The learned files are a snapshot of the past: after a package upgrade
 * many are gone, and a writable directory may hold a FIFO or a device
 * node under a learned name. pagecache_open() opens only what is still a
 * regular file, without side effects on anything else.
 *
 * Most of what the reader is asked for is usually cached already, and
 * the watcher measures what a start found cached. cachestat(2) (Linux
 * 6.5) answers with one count per range; mincore(2) over a read-only
 * mapping answers page by page, and is the fallback where cachestat is
 * missing or refused, and the way to find the missing runs of a range
 * that is partly cached. Mapping a file neither reads nor faults in any
 * of its pages.
 */
#include "config.h"

#include "pagecache.h"

#include "interval.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

/* Pages examined per mmap() and mincore() call: 16 MiB of 4 KiB pages. */
#define MINCORE_WINDOW_PAGES 4096

/*
 * cachestat(2), Linux 6.5. The C library headers of older systems name
 * neither the call nor its structures, so both are spelled out here. Its
 * number is 451 on every architecture that shares the common syscall
 * table (all but alpha, mips and x32, which offset it); elsewhere only
 * mincore() is used.
 */
#if defined(SYS_cachestat)
#define NR_CACHESTAT SYS_cachestat
#elif (defined(__x86_64__) && !defined(__ILP32__)) || defined(__i386__) || \
	defined(__aarch64__) || defined(__arm__) || defined(__riscv) || \
	defined(__powerpc__) || defined(__s390__) || defined(__loongarch__)
#define NR_CACHESTAT 451
#endif

struct pc_cachestat_range {
	guint64 off;
	guint64 len;            /* 0 would mean "to the end of the file" */
};

struct pc_cachestat {
	guint64 nr_cache;       /* pages of the range in the page cache */
	guint64 nr_dirty;
	guint64 nr_writeback;
	guint64 nr_evicted;
	guint64 nr_recently_evicted;
};

struct Pagecache {
	gint no_cachestat;    /* atomic: not allowed, or refused for good (ENOSYS, a filter) */
	gint no_mincore;      /* atomic: not allowed, or refused by a seccomp filter */
	gboolean cap_fowner;  /* the process had CAP_FOWNER when this was made */
};

/* ---- opening a file safely ---- */

const char *
pagecache_mode_name(mode_t mode)
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
 * The lstat comes first so that a FIFO (whose open could block or steal
 * a writer's data) or a device (whose open can have side effects) is
 * never opened. O_NOFOLLOW refuses a symlink that appeared since,
 * O_NONBLOCK keeps a FIFO that appeared since from blocking, and the
 * fstat check rejects any other swap in between. O_NOATIME keeps the
 * daemon from dirtying every inode it touches; it needs ownership or
 * CAP_FOWNER, so EPERM retries without it.
 */
static PagecacheOpen
open_regular(const char *path, int *ret_fd, struct stat *ret_st, int *ret_errno)
{
	const int flags = O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC;
	struct stat lst, fst;
	int fd;

	if (lstat(path, &lst) != 0) {
		*ret_errno = errno;
		return errno == ENOENT || errno == ENOTDIR ? PAGECACHE_OPEN_MISSING
							   : PAGECACHE_OPEN_ERROR;
	}
	if (!S_ISREG(lst.st_mode)) {
		*ret_st = lst;
		return PAGECACHE_OPEN_NOT_REGULAR;
	}
	fd = open(path, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = open(path, flags);
	if (fd < 0) {
		*ret_errno = errno;
		if (errno == ENOENT || errno == ENOTDIR)
			return PAGECACHE_OPEN_MISSING;
		/* O_NOFOLLOW met a symlink that replaced the file. */
		return errno == ELOOP ? PAGECACHE_OPEN_CHANGED : PAGECACHE_OPEN_ERROR;
	}
	if (fstat(fd, &fst) != 0) {
		*ret_errno = errno;
		(void)close(fd);
		return PAGECACHE_OPEN_ERROR;
	}
	if (!S_ISREG(fst.st_mode) || fst.st_dev != lst.st_dev || fst.st_ino != lst.st_ino) {
		(void)close(fd);
		return PAGECACHE_OPEN_CHANGED;
	}
	*ret_fd = fd;
	*ret_st = fst;
	return PAGECACHE_OPEN_OK;
}

PagecacheOpen
pagecache_open(const char *path, int *ret_fd, struct stat *ret_st, int *ret_errno)
{
	int err = 0;
	PagecacheOpen result;

	g_return_val_if_fail(ret_fd != NULL, PAGECACHE_OPEN_ERROR);
	*ret_fd = -1;
	g_return_val_if_fail(path != NULL && ret_st != NULL, PAGECACHE_OPEN_ERROR);

	result = open_regular(path, ret_fd, ret_st, &err);
	if (ret_errno)
		*ret_errno = err;
	return result;
}

/*
 * No memo: sysconf() returns the value the kernel handed the process at
 * exec (the auxiliary vector) without a system call.
 */
guint64
pagecache_page_size(void)
{
	long n = sysconf(_SC_PAGESIZE);

	return n > 0 ? (guint64)n : 4096;
}

/* ---- the memo ---- */

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

Pagecache *
pagecache_new(PagecacheProbes probes)
{
	Pagecache *pc = g_new0(Pagecache, 1);

	pc->no_cachestat = (probes & PAGECACHE_PROBE_CACHESTAT) ? 0 : 1;
	pc->no_mincore = (probes & PAGECACHE_PROBE_MINCORE) ? 0 : 1;
	pc->cap_fowner = have_cap_fowner();
	return pc;
}

void
pagecache_free(Pagecache *pc)
{
	g_free(pc);
}

static gboolean
cachestat_refused(const Pagecache *pc)
{
	return pc && g_atomic_int_get(&pc->no_cachestat);
}

static gboolean
mincore_refused(const Pagecache *pc)
{
	return pc && g_atomic_int_get(&pc->no_mincore);
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
mincore_is_truthful(const Pagecache *pc, const char *path, const struct stat *st)
{
	return st->st_uid == geteuid() || (pc ? pc->cap_fowner : have_cap_fowner()) ||
	       faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0;
}

/* ---- the two calls ---- */

/*
 * Counts the cached pages of [offset, offset + length) with cachestat().
 * The kernel counts every page the range touches, the partial first and
 * last ones included, and clips large folios to the range. Returns
 * FALSE if the call failed: ENOSYS (an older kernel, or a seccomp filter
 * written before the call existed, as systemd's are), EPERM (some
 * kernels refuse files the caller can neither write nor owns; on a file
 * the caller owns it can only be a seccomp filter), EOPNOTSUPP
 * (hugetlbfs). ENOSYS and a filter's EPERM are remembered in pc: the
 * call is not tried again.
 */
static gboolean
cachestat_count(Pagecache *pc, int fd, const struct stat *st, guint64 offset, guint64 length,
		guint64 *ret_pages)
{
#ifdef NR_CACHESTAT
	struct pc_cachestat_range range = { offset, length };
	struct pc_cachestat cs = { 0 };

	if (cachestat_refused(pc))
		return FALSE;
	if (syscall(NR_CACHESTAT, fd, &range, &cs, 0) != 0) {
		int err = errno;

		if (pc && (err == ENOSYS || (err == EPERM && st->st_uid == geteuid()))) {
			g_atomic_int_set(&pc->no_cachestat, 1);
			g_debug("readahead: cachestat(): %s, using mincore()", g_strerror(err));
		}
		return FALSE;
	}
	*ret_pages = cs.nr_cache;
	return TRUE;
#else
	(void)pc; (void)fd; (void)st; (void)offset; (void)length; (void)ret_pages;
	return FALSE;
#endif
}

/*
 * mincore() of n pages of fd from the page-aligned byte pos into vec.
 * Returns 0 or the errno of the mapping or the call. The kernel's own
 * errors are EAGAIN, EFAULT, EINVAL and ENOMEM; EPERM and ENOSYS come
 * from a seccomp filter (systemd's @system-service lacks mincore) and
 * will not change, so they are remembered in pc.
 */
static int
mincore_window(Pagecache *pc, int fd, guint64 pos, gsize n, guint8 *vec)
{
	size_t len = (size_t)(n * pagecache_page_size());
	void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)pos);
	int rc, err;

	if (map == MAP_FAILED)
		return errno;
	rc = mincore(map, len, vec);
	err = errno;
	(void)munmap(map, len);
	if (rc == 0)
		return 0;
	if (pc && (err == EPERM || err == ENOSYS) && !g_atomic_int_get(&pc->no_mincore)) {
		g_atomic_int_set(&pc->no_mincore, 1);
		g_info("readahead: mincore(): %s; ranges whose residency cachestat() "
		       "cannot settle are read whole", g_strerror(err));
	}
	return err;
}

static void
count_probe(guint64 *probes)
{
	if (probes)
		(*probes)++;
}

/* ---- residency ---- */

PagecacheResidency
pagecache_cachestat(Pagecache *pc, int fd, const struct stat *st, guint64 offset,
		    guint64 length, guint64 *probes)
{
	const guint64 page = pagecache_page_size();
	guint64 pages, cached;

	g_return_val_if_fail(st != NULL && length > 0, PAGECACHE_UNKNOWN);

	if (!cachestat_count(pc, fd, st, offset, length, &cached))
		return PAGECACHE_UNKNOWN;
	count_probe(probes);
	pages = (offset + length - 1) / page - offset / page + 1;
	if (cached == 0)
		return PAGECACHE_NONE;
	return cached >= pages ? PAGECACHE_ALL : PAGECACHE_PART;
}

/*
 * The missing runs of [offset, offset + length) from mincore() over
 * MINCORE_WINDOW_PAGES pages at a time, each page clipped to the range
 * (which need not be page-aligned).
 */
static PagecacheResidency
mincore_missing(Pagecache *pc, int fd, guint64 offset, guint64 length, guint64 gap,
		GArray *missing, guint64 *probes)
{
	const guint64 page = pagecache_page_size();
	const Interval range = { offset, offset + length };
	guint64 pos, pages = 0, absent = 0;
	guint8 vec[MINCORE_WINDOW_PAGES];

	for (pos = offset / page * page; pos < range.end;) {
		guint64 n = MIN((guint64)MINCORE_WINDOW_PAGES, (range.end - pos + page - 1) / page);

		if (mincore_window(pc, fd, pos, (gsize)n, vec) != 0)
			return PAGECACHE_UNKNOWN;
		count_probe(probes);
		for (guint64 i = 0; i < n; i++) {
			Interval at = { pos + i * page, pos + (i + 1) * page };

			if (vec[i] & 1)
				continue;
			interval_append(missing, interval_clamp(at, range), gap);
			absent++;
		}
		pages += n;
		pos += n * page;
	}
	if (absent < pages)
		return absent == 0 ? PAGECACHE_ALL : PAGECACHE_PART;
	/* Nothing cached: the whole range is read, the runs are not needed. */
	g_array_set_size(missing, 0);
	return PAGECACHE_NONE;
}

PagecacheResidency
pagecache_find_missing(Pagecache *pc, int fd, const char *path, const struct stat *st,
		       guint64 offset, guint64 length, guint64 gap, GArray *missing,
		       guint64 *probes)
{
	PagecacheResidency r;

	g_return_val_if_fail(path != NULL && st != NULL && missing != NULL, PAGECACHE_UNKNOWN);
	g_return_val_if_fail(length > 0 && length <= G_MAXUINT64 - offset, PAGECACHE_UNKNOWN);

	g_array_set_size(missing, 0);
	r = pagecache_cachestat(pc, fd, st, offset, length, probes);
	if (r == PAGECACHE_ALL || r == PAGECACHE_NONE)
		return r;
	if (mincore_refused(pc) || !mincore_is_truthful(pc, path, st))
		return PAGECACHE_UNKNOWN;
	return mincore_missing(pc, fd, offset, length, gap, missing, probes);
}

gboolean
pagecache_resident_pages(Pagecache *pc, int fd, const char *path, const struct stat *st,
			 guint64 offset, gsize pages, guint8 *vec)
{
	const guint64 page = pagecache_page_size();

	g_return_val_if_fail(path != NULL && st != NULL && vec != NULL, FALSE);
	g_return_val_if_fail(offset % page == 0, FALSE);

	if (mincore_refused(pc) || !mincore_is_truthful(pc, path, st))
		return FALSE;
	for (gsize done = 0; done < pages;) {
		gsize n = MIN((gsize)MINCORE_WINDOW_PAGES, pages - done);

		if (mincore_window(pc, fd, offset + (guint64)done * page, n, vec + done) != 0)
			return FALSE;
		done += n;
	}
	return TRUE;
}

gboolean
pagecache_resident_vector(Pagecache *pc, int fd, const char *path, const struct stat *st,
			  guint64 offset, gsize pages, guint8 *vec, guint64 *probes)
{
	const guint64 page = pagecache_page_size();
	const guint64 size = (guint64)MAX(st ? st->st_size : 0, 0);

	g_return_val_if_fail(path != NULL && st != NULL && vec != NULL, FALSE);
	g_return_val_if_fail(offset % page == 0, FALSE);

	if (pages == 0)
		return TRUE;
	/* The pages' bytes within the file: cachestat counts the partial last page. */
	if (offset < size) {
		guint64 length = MIN((guint64)pages * page, size - offset);

		switch (pagecache_cachestat(pc, fd, st, offset, length, probes)) {
		case PAGECACHE_ALL:
			if ((offset + length + page - 1) / page - offset / page < pages)
				break;  /* pages past the end: mincore says what they are */
			memset(vec, 1, pages);
			return TRUE;
		case PAGECACHE_NONE:
			memset(vec, 0, pages);
			return TRUE;
		case PAGECACHE_PART:
		case PAGECACHE_UNKNOWN:
		default:
			break;
		}
	}
	if (!pagecache_resident_pages(pc, fd, path, st, offset, pages, vec))
		return FALSE;
	for (gsize done = 0; done < pages; done += MINCORE_WINDOW_PAGES)
		count_probe(probes);
	return TRUE;
}

gboolean
pagecache_resident_bytes(Pagecache *pc, int fd, const char *path, const struct stat *st,
			 guint64 offset, guint64 length, guint64 *ret_bytes)
{
	const guint64 page = pagecache_page_size();
	g_autofree guint8 *vec = NULL;
	guint64 cached, start, pages;

	g_return_val_if_fail(path != NULL && st != NULL && ret_bytes != NULL, FALSE);

	*ret_bytes = 0;
	if (length == 0)
		return TRUE;
	if (length > G_MAXUINT64 - offset)
		return FALSE;
	/* cachestat() counts every page the range touches, partial ones too. */
	if (cachestat_count(pc, fd, st, offset, length, &cached)) {
		*ret_bytes = MIN(cached * page, length);
		return TRUE;
	}
	start = offset / page * page;
	pages = (offset + length - start + page - 1) / page;
	if (pages > G_MAXSIZE / 2)
		return FALSE;
	vec = g_malloc((gsize)pages);
	if (!pagecache_resident_pages(pc, fd, path, st, start, (gsize)pages, vec))
		return FALSE;
	cached = 0;
	for (guint64 i = 0; i < pages; i++)
		cached += vec[i] & 1;
	*ret_bytes = MIN(cached * page, length);
	return TRUE;
}

/* ---- evictions ---- */

gboolean
pagecache_parse_evictions(const char *vmstat, guint64 *ret)
{
	gboolean found = FALSE;
	guint64 sum = 0;

	g_return_val_if_fail(vmstat != NULL && ret != NULL, FALSE);

	/* Lines of "name value". */
	for (const char *line = vmstat; *line;) {
		const char *end = strchr(line, '\n');
		gsize len = end ? (gsize)(end - line) : strlen(line);
		const char *space = memchr(line, ' ', len);

		if (space && ((space - line > 8 && strncmp(line, "pgsteal_", 8) == 0) ||
			      (space - line == 14 && strncmp(line, "drop_pagecache", 14) == 0))) {
			guint64 value = g_ascii_strtoull(space + 1, NULL, 10);

			sum += value;
			found = TRUE;
		}
		line += len;
		if (*line == '\n')
			line++;
	}
	*ret = found ? sum : 0;
	return found;
}

gboolean
pagecache_read_evictions(const char *path, guint64 *ret)
{
	g_autofree char *text = NULL;

	g_return_val_if_fail(path != NULL && ret != NULL, FALSE);

	*ret = 0;
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return FALSE;
	return pagecache_parse_evictions(text, ret);
}
