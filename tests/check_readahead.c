/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/readahead.c: real files sorted by inode and by block
 * (readahead_examine()), hostile files in place of learned ones (FIFO,
 * device symlink, directory, missing, truncated, bad names), the page
 * cache really being filled in chunks (checked with mincore), the
 * background batch handing its result back to the main loop, the
 * residency check (only missing pages requested, through cachestat and
 * through mincore, on page patterns built with DONTNEED and reads) and
 * the I/O class of the threads that read. Sorting and merging on
 * hand-made batches are in check_order.c, the safe open and the
 * residency calls in check_pagecache.c.
 *
 * Files live in a directory under the current directory (the build tree)
 * rather than $TMPDIR, because a tmpfs keeps every page resident and
 * has no FIEMAP, which would make the page cache and block tests prove
 * nothing. A case that cannot run here (no disk-backed directory, no
 * FIEMAP, pages not of 4 KiB, not root, not x86-64) is not added to the
 * suite: TU_ADD_TEST_UNLESS() prints "SKIP: case: reason" instead. Check
 * has no skipped state, and a case that returns early would count as
 * passed without having asserted anything.
 */
#include "config.h"

#include "testutil.h"
#include "readahead.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <signal.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_LINUX_FIEMAP_H
#include <linux/fiemap.h>
#include <linux/fs.h>
#endif

#define MIB (G_GUINT64_CONSTANT(1024) * 1024)

/* Options for a batch that requests everything (no residency check). */
#define OPTS(sort, procs) \
	(&(ReadaheadOptions){ .strategy = (sort), .maxprocs = (procs) })
/* The same with the residency check. */
#define OPTS_CHECK(sort, procs) \
	(&(ReadaheadOptions){ .strategy = (sort), .maxprocs = (procs), \
			      .check_residency = TRUE })

static char *base;         /* this test case's directory */
static char *dir;          /* this test's directory, inside base */
static long page_size;
static Readahead *ra;      /* this test's reader */

/* ---- fixture and helpers ---- */

static gboolean
is_memory_fs(const char *path)
{
	struct statfs sfs;

	if (statfs(path, &sfs) != 0)
		return TRUE;
	return sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC;
}

/* A directory on a file system that can evict pages, or NULL (the caller frees it). */
static char *
disk_dir(void)
{
	g_autofree char *cwd = g_get_current_dir();
	const char *candidates[] = { cwd, g_get_tmp_dir(), "/var/tmp" };

	for (guint i = 0; i < G_N_ELEMENTS(candidates); i++)
		if (!is_memory_fs(candidates[i]))
			return g_strdup(candidates[i]);
	return NULL;
}

/*
 * Once per test case, in Check's parent process: a directory (on disk if
 * there is one) to hold every test's own directory. Removing it from the
 * parent also cleans up after failed tests, whose forked process ends
 * with _exit() and never runs the per-test teardown.
 */
static void
setup_base(void)
{
	g_autofree char *parent = disk_dir();

	page_size = sysconf(_SC_PAGESIZE);
	if (!parent)
		parent = g_get_current_dir();
	base = g_build_filename(parent, "check_readahead-XXXXXX", NULL);
	ck_assert_ptr_nonnull(g_mkdtemp(base));
}

static void
teardown_base(void)
{
	tu_rm_rf(base);
	g_clear_pointer(&base, g_free);
}

static void
setup(void)
{
	dir = g_build_filename(base, "test-XXXXXX", NULL);
	ck_assert_ptr_nonnull(g_mkdtemp(dir));
	ra = readahead_new(PAGECACHE_PROBE_ALL);
}

static void
teardown(void)
{
	g_clear_pointer(&ra, readahead_free);
	tu_rm_rf(dir);
	g_clear_pointer(&dir, g_free);
}

/*
 * A new reader for the rest of the test: FALSE makes its residency checks
 * behave as on a kernel without cachestat(2) (mincore only).
 */
static void
renew_reader(gboolean use)
{
	readahead_free(ra);
	ra = readahead_new(use ? PAGECACHE_PROBE_ALL : PAGECACHE_PROBE_MINCORE);
}

static char *
in_dir(const char *name)
{
	return g_build_filename(dir, name, NULL);
}

/* Writes `size` bytes of a non-zero pattern and makes them reach the disk. */
static void
write_sized(const char *path, guint64 size)
{
	g_autofree guint8 *buf = g_malloc(MIB);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_int_ge(fd, 0);
	for (guint i = 0; i < MIB; i++)
		buf[i] = (guint8)(i * 7 + 1);
	while (size > 0) {
		size_t n = (size_t)MIN(size, MIB);

		ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
		size -= n;
	}
	ck_assert_int_eq(fsync(fd), 0);
	ck_assert_int_eq(close(fd), 0);
}

/* Evicts a (clean) file from the page cache. */
static void
drop_cache(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fdatasync(fd), 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	ck_assert_int_eq(close(fd), 0);
}

/* Resident pages of [offset, offset + length); offset page-aligned. */
static guint64
resident_pages(const char *path, guint64 offset, guint64 length)
{
	guint64 pages = (length + (guint64)page_size - 1) / (guint64)page_size, count = 0;
	g_autofree unsigned char *vec = g_malloc(pages);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *map;

	ck_assert_int_ge(fd, 0);
	map = mmap(NULL, (size_t)length, PROT_READ, MAP_SHARED, fd, (off_t)offset);
	ck_assert_ptr_ne(map, MAP_FAILED);
	ck_assert_int_eq(mincore(map, (size_t)length, vec), 0);
	for (guint64 i = 0; i < pages; i++)
		count += vec[i] & 1;
	ck_assert_int_eq(munmap(map, (size_t)length), 0);
	ck_assert_int_eq(close(fd), 0);
	return count;
}

/* Polls until all pages of the range are resident (readahead is async); the final count. */
static guint64
wait_resident(const char *path, guint64 offset, guint64 length)
{
	guint64 want = length / (guint64)page_size, have = 0;

	for (int i = 0; i < 300; i++) {
		have = resident_pages(path, offset, length);
		if (have == want)
			break;
		g_usleep(10 * 1000);
	}
	return have;
}

/* The test's own FIEMAP query: the physical byte of `offset`, FALSE if unknown. */
static gboolean
physical(const char *path, guint64 offset, guint64 *ret)
{
#ifdef HAVE_LINUX_FIEMAP_H
	union {
		struct fiemap fm;
		guint8 bytes[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	} q;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	gboolean ok;

	if (fd < 0)
		return FALSE;
	memset(&q, 0, sizeof(q));
	q.fm.fm_start = offset;
	q.fm.fm_length = 1;
	q.fm.fm_extent_count = 1;
	ok = ioctl(fd, FS_IOC_FIEMAP, &q.fm) == 0 && q.fm.fm_mapped_extents == 1 &&
	     !(q.fm.fm_extents[0].fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)) &&
	     q.fm.fm_extents[0].fe_logical <= offset;
	if (ok)
		*ret = q.fm.fm_extents[0].fe_physical + (offset - q.fm.fm_extents[0].fe_logical);
	(void)close(fd);
	return ok;
#else
	(void)path; (void)offset; (void)ret;
	return FALSE;
#endif
}

static struct stat
stat_of(const char *path)
{
	struct stat st;

	ck_assert_int_eq(lstat(path, &st), 0);
	return st;
}

static void
assert_req(GArray *reqs, guint i, const char *path, guint64 offset, guint64 length)
{
	const OrderRequest *r;

	ck_assert_uint_lt(i, reqs->len);
	r = &g_array_index(reqs, OrderRequest, i);
	ck_assert_str_eq(r->path, path);
	ck_assert_uint_eq(r->offset, offset);
	ck_assert_uint_eq(r->length, length);
}

static ReadaheadStats
run_one(const char *path, guint64 offset, guint64 length, int maxprocs)
{
	g_autoptr(GArray) reqs = order_requests_new();

	order_requests_add(reqs, path, offset, length);
	return readahead_run(ra, reqs, OPTS(SORT_BLOCK, maxprocs));
}

/* One range through a synchronous batch with the residency check. */
static ReadaheadStats
readahead_run_one_checked(const char *path, guint64 offset, guint64 length)
{
	g_autoptr(GArray) reqs = order_requests_new();

	order_requests_add(reqs, path, offset, length);
	return readahead_run(ra, reqs, OPTS_CHECK(SORT_PATH, 0));
}

/* What a done callback saw, for tests that do not need the main loop. */
typedef struct {
	ReadaheadStats stats;
} DoneRecordLite;

static void
on_done_lite(const ReadaheadStats *stats, gpointer user_data)
{
	((DoneRecordLite *)user_data)->stats = *stats;
}

/* ---- sorting ---- */

START_TEST(test_sort_inode)
{
	g_autoptr(GArray) reqs = order_requests_new();
	g_autofree char *z = in_dir("z");
	g_autofree char *m = in_dir("m");
	g_autofree char *a = in_dir("a");
	g_autofree char *gone = in_dir("gone");
	g_autofree char *fifo = in_dir("fifo");
	const char *by_inode[3] = { z, m, a };
	struct stat st[3];

	/* Created z, m, a: inode order is usually the reverse of path order. */
	write_sized(z, 8192);
	write_sized(m, 100);
	write_sized(a, 100);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);

	order_requests_add(reqs, a, 0, 100);
	order_requests_add(reqs, gone, 0, 100);
	order_requests_add(reqs, z, 4096, 4096);
	order_requests_add(reqs, fifo, 0, 100);
	order_requests_add(reqs, m, 0, 100);
	order_requests_add(reqs, z, 0, 4096);

	/* The expected order of the three files: sort their inodes by hand. */
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (stat_of(by_inode[j]).st_ino < stat_of(by_inode[i]).st_ino) {
				const char *t = by_inode[i];

				by_inode[i] = by_inode[j];
				by_inode[j] = t;
			}
	for (int i = 0; i < 3; i++)
		st[i] = stat_of(by_inode[i]);

	order_sort(reqs, SORT_INODE, readahead_examine, NULL);
	ck_assert_uint_eq(reqs->len, 6);
	for (guint i = 0, k = 0; k < 3; k++) {
		gboolean is_z = by_inode[k] == z;

		/* z's two ranges stay together, offset 0 first. */
		assert_req(reqs, i, by_inode[k], 0, is_z ? 4096 : 100);
		ck_assert_uint_eq(g_array_index(reqs, OrderRequest, i).inode, (guint64)st[k].st_ino);
		ck_assert_uint_eq(g_array_index(reqs, OrderRequest, i).dev, st[k].st_dev);
		ck_assert_uint_eq(g_array_index(reqs, OrderRequest, i).block, (guint64)st[k].st_ino);
		i++;
		if (is_z) {
			assert_req(reqs, i, z, 4096, 4096);
			i++;
		}
	}
	/* Not examinable (missing, not regular) last, by path: ".../fifo" < ".../gone". */
	assert_req(reqs, 4, fifo, 0, 100);
	assert_req(reqs, 5, gone, 0, 100);
	ck_assert_uint_eq(g_array_index(reqs, OrderRequest, 5).inode, 0);
}
END_TEST

START_TEST(test_sort_block)
{
	g_autoptr(GArray) reqs = order_requests_new();
	g_autofree char *z = in_dir("z");
	g_autofree char *a = in_dir("a");
	g_autofree char *hole = in_dir("hole");
	g_autofree char *gone = in_dir("gone");
	guint64 pz, pa, pa8k;
	const char *low, *high;
	int fd;

	/* Written and synced z first: it usually lands lower, against path order. */
	write_sized(z, 65536);
	write_sized(a, 65536);
	/* A file that is all hole: no extent, so it is ordered by inode after located ones. */
	fd = open(hole, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)MIB), 0);
	ck_assert_int_eq(close(fd), 0);

	order_requests_add(reqs, hole, 0, 4096);
	order_requests_add(reqs, gone, 0, 4096);
	order_requests_add(reqs, a, 8192, 4096);
	order_requests_add(reqs, z, 0, 4096);
	order_sort(reqs, SORT_BLOCK, readahead_examine, NULL);
	ck_assert_uint_eq(reqs->len, 4);

	/* The suite builder checked that FIEMAP works here. */
	ck_assert(physical(z, 0, &pz));
	ck_assert(physical(a, 0, &pa));
	ck_assert(physical(a, 8192, &pa8k));
	ck_assert_uint_ne(pz, pa);
	/* a's range starts 8 KiB into a's single extent. */
	ck_assert_uint_eq(pa8k, pa + 8192);
	low = pz < pa ? z : a;
	high = pz < pa ? a : z;
	assert_req(reqs, 0, low, low == a ? 8192 : 0, 4096);
	assert_req(reqs, 1, high, high == a ? 8192 : 0, 4096);
	ck_assert_uint_eq(g_array_index(reqs, OrderRequest, low == a ? 0 : 1).block, pa8k);
	ck_assert_uint_eq(g_array_index(reqs, OrderRequest, low == z ? 0 : 1).block, pz);
	assert_req(reqs, 2, hole, 0, 4096);
	ck_assert_uint_eq(g_array_index(reqs, OrderRequest, 2).block,
			  (guint64)stat_of(hole).st_ino);
	assert_req(reqs, 3, gone, 0, 4096);
}
END_TEST

/* ---- reading real files ---- */

START_TEST(test_run_fills_cache_in_chunks)
{
	g_autofree char *f = in_dir("big");
	const guint64 size = 24 * MIB;
	ReadaheadStats stats;

	write_sized(f, size);
	drop_cache(f);
	ck_assert_uint_le(resident_pages(f, 0, size), 16);

	stats = run_one(f, 0, size, 0);
	ck_assert_uint_eq(stats.requests, 1);
	ck_assert_uint_eq(stats.files, 1);
	ck_assert_uint_eq(stats.failed, 0);
	ck_assert_uint_eq(stats.skipped, 0);
	ck_assert_uint_eq(stats.bytes, size);
	/* Chunks are at most 2 MiB: 24 MiB needs at least twelve calls. */
	ck_assert_uint_ge(stats.syscalls, 12);
	/*
	 * One call would stop at the device's window (8 MiB here); every
	 * one of the 6144 pages being resident proves the chunks.
	 */
	ck_assert_uint_eq(wait_resident(f, 0, size), size / (guint64)page_size);
}
END_TEST

/*
 * A request for a file of a known identity reads only that file: another
 * file at the path (replaced, or what the path names here for a path
 * learned in another mount namespace) is left alone and counted, with
 * each strategy and with the residency check; ranges of one path and two
 * identities stay apart.
 */
START_TEST(test_run_checks_identity)
{
	static const SortStrategy strategies[] = { SORT_PATH, SORT_INODE, SORT_BLOCK };
	g_autofree char *f = in_dir("ident");
	struct stat st;

	write_sized(f, 65536);
	ck_assert_int_eq(stat(f, &st), 0);
	for (guint s = 0; s < G_N_ELEMENTS(strategies); s++) {
		for (int check = 0; check < 2; check++) {
			ReadaheadOptions options = { .strategy = strategies[s], .check_residency = check };
			g_autoptr(GArray) other = order_requests_new();
			g_autoptr(GArray) same = order_requests_new();
			g_autoptr(GArray) both = order_requests_new();
			ReadaheadStats stats;

			/* Cached or not does not matter: bytes and resident bytes add up to what was read. */
			order_requests_add_file(other, f, 0, 65536, (guint64)st.st_dev,
						(guint64)st.st_ino + 1);
			stats = readahead_run(ra, other, &options);
			ck_assert_uint_eq(stats.other_file, 1);
			ck_assert_uint_eq(stats.bytes, 0);
			ck_assert_uint_eq(stats.resident_bytes, 0);
			ck_assert_uint_eq(stats.failed, 0);

			order_requests_add_file(same, f, 0, 65536, (guint64)st.st_dev, (guint64)st.st_ino);
			stats = readahead_run(ra, same, &options);
			ck_assert_uint_eq(stats.other_file, 0);
			ck_assert_uint_eq(stats.bytes + stats.resident_bytes, 65536);

			/* Adjacent ranges, two identities: two requests, one read. */
			order_requests_add_file(both, f, 0, 4096, (guint64)st.st_dev, (guint64)st.st_ino);
			order_requests_add_file(both, f, 4096, 4096, (guint64)st.st_dev + 1,
						(guint64)st.st_ino);
			stats = readahead_run(ra, both, &options);
			ck_assert_uint_eq(stats.requests, 2);
			ck_assert_uint_eq(stats.other_file, 1);
			ck_assert_uint_eq(stats.bytes + stats.resident_bytes, 4096);
		}
	}
}
END_TEST

START_TEST(test_run_reads_only_the_range)
{
	g_autofree char *f = in_dir("big");
	const guint64 size = 24 * MIB;
	ReadaheadStats stats;

	write_sized(f, size);
	drop_cache(f);
	stats = run_one(f, 4 * MIB, 2 * MIB, 0);
	ck_assert_uint_eq(stats.bytes, 2 * MIB);
	ck_assert_uint_eq(stats.failed, 0);
	/* 2 MiB = 512 pages of 4 KiB. */
	ck_assert_uint_eq(wait_resident(f, 4 * MIB, 2 * MIB), 2 * MIB / (guint64)page_size);
	ck_assert_uint_eq(resident_pages(f, 20 * MIB, MIB), 0);
}
END_TEST

START_TEST(test_run_truncated_file_is_clamped)
{
	g_autoptr(GArray) reqs = order_requests_new();
	g_autofree char *f = in_dir("short");
	ReadaheadStats stats;

	write_sized(f, 10000);
	order_requests_add(reqs, f, 0, MIB);          /* clamped to 10000 bytes */
	order_requests_add(reqs, f, 2 * MIB, 4096);   /* wholly past the end */
	stats = readahead_run(ra, reqs, OPTS(SORT_PATH, 0));
	ck_assert_uint_eq(stats.requests, 2);
	ck_assert_uint_eq(stats.files, 1);
	ck_assert_uint_eq(stats.bytes, 10000);
	ck_assert_uint_eq(stats.skipped, 1);
	ck_assert_uint_eq(stats.failed, 0);
}
END_TEST

START_TEST(test_run_empty_batch)
{
	g_autoptr(GArray) reqs = order_requests_new();
	ReadaheadStats stats = readahead_run(ra, reqs, OPTS(SORT_BLOCK, 4));

	ck_assert_uint_eq(stats.requests, 0);
	ck_assert_uint_eq(stats.files, 0);
	ck_assert_uint_eq(stats.syscalls, 0);
}
END_TEST

/* ---- warming the directories of the files read ---- */

static void cache_all(const char *path, guint64 size);

/*
 * With warm_dirs, each directory holding a file that was read is listed
 * and its entries looked up once per batch: lib/ holds a, b, c, a symlink
 * and a directory (5 entries) and two of its files are read, so one
 * directory and 5 entries. big/ holds READAHEAD_WARM_ENTRIES + 1 files:
 * listed, none looked up. Off, or with every file settled as cached by
 * the residency check, nothing is warmed.
 */
START_TEST(test_run_warms_directories)
{
	g_autoptr(GArray) reqs = order_requests_new();
	g_autofree char *lib = in_dir("lib");
	g_autofree char *big = in_dir("big");
	g_autofree char *a = g_build_filename(lib, "a", NULL);
	g_autofree char *b = g_build_filename(lib, "b", NULL);
	g_autofree char *c = g_build_filename(lib, "c", NULL);
	g_autofree char *link = g_build_filename(lib, "l", NULL);
	g_autofree char *sub = g_build_filename(lib, "sub", NULL);
	g_autofree char *big0 = NULL;
	ReadaheadStats stats;

	ck_assert_int_eq(g_mkdir(lib, 0755), 0);
	ck_assert_int_eq(g_mkdir(sub, 0755), 0);
	ck_assert_int_eq(g_mkdir(big, 0755), 0);
	write_sized(a, 8192);
	write_sized(b, 8192);
	write_sized(c, 8192);
	ck_assert_int_eq(symlink("a", link), 0);
	big0 = g_build_filename(big, "f0", NULL);
	write_sized(big0, 4096);
	for (guint i = 1; i <= READAHEAD_WARM_ENTRIES; i++) {
		g_autofree char *name = g_strdup_printf("%s/f%u", big, i);
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(close(fd), 0);
	}

	order_requests_add(reqs, a, 0, 8192);
	order_requests_add(reqs, b, 0, 8192);
	order_requests_add(reqs, big0, 0, 4096);
	stats = readahead_run(ra, reqs, &(ReadaheadOptions){ .strategy = SORT_PATH, .maxprocs = 2,
							     .warm_dirs = TRUE });
	ck_assert_uint_eq(stats.files, 3);
	ck_assert_uint_eq(stats.bytes, 8192 + 8192 + 4096);
	ck_assert_uint_eq(stats.dirs_warmed, 2);
	ck_assert_uint_eq(stats.entries_warmed, 5);

	/* Off: the same batch warms nothing. */
	g_array_set_size(reqs, 0);
	order_requests_add(reqs, a, 0, 8192);
	order_requests_add(reqs, b, 0, 8192);
	stats = readahead_run(ra, reqs, OPTS(SORT_PATH, 2));
	ck_assert_uint_eq(stats.bytes, 2 * 8192);
	ck_assert_uint_eq(stats.dirs_warmed, 0);
	ck_assert_uint_eq(stats.entries_warmed, 0);

	/* Nothing read: a file found cached leaves its directory alone. */
	cache_all(c, 8192);
	g_array_set_size(reqs, 0);
	order_requests_add(reqs, c, 0, 8192);
	stats = readahead_run(ra, reqs, &(ReadaheadOptions){ .strategy = SORT_PATH, .maxprocs = 2,
							     .check_residency = TRUE,
							     .warm_dirs = TRUE });
	ck_assert_uint_eq(stats.bytes, 0);
	ck_assert_uint_eq(stats.resident_bytes, 8192);
	ck_assert_uint_eq(stats.dirs_warmed, 0);
	ck_assert_uint_eq(stats.entries_warmed, 0);
}
END_TEST

/* ---- slices ---- */

/* Slices are read in order and never merged with each other. */
START_TEST(test_run_slices)
{
	g_autoptr(GArray) reqs = order_requests_new();
	g_autofree char *a = in_dir("a");
	g_autofree char *b = in_dir("b");
	ReadaheadStats stats;

	write_sized(a, 16384);
	write_sized(b, 8192);
	/* Most likely first: b, then both halves of a. */
	order_requests_add(reqs, b, 0, 8192);
	order_requests_add(reqs, a, 0, 8192);
	order_requests_add(reqs, a, 8192, 8192);
	stats = readahead_run(ra, reqs, &(ReadaheadOptions){ .strategy = SORT_PATH, .slice_bytes = 8192 });
	ck_assert_uint_eq(stats.slices, 3);
	/* The halves of a are in two slices: two ranges. */
	ck_assert_uint_eq(stats.requests, 3);
	ck_assert_uint_eq(stats.files, 2);
	ck_assert_uint_eq(stats.bytes, 8192 + 16384);
	ck_assert(!stats.superseded);
	ck_assert_uint_eq(stats.dropped, 0);

	/* One slice: sorted and merged as a whole, as 0.6.4 did. */
	g_array_set_size(reqs, 0);
	order_requests_add(reqs, b, 0, 8192);
	order_requests_add(reqs, a, 0, 8192);
	order_requests_add(reqs, a, 8192, 8192);
	stats = readahead_run(ra, reqs, &(ReadaheadOptions){ .strategy = SORT_PATH, .slice_bytes = 0 });
	ck_assert_uint_eq(stats.slices, 1);
	ck_assert_uint_eq(stats.requests, 2);
	ck_assert_uint_eq(stats.bytes, 8192 + 16384);
}
END_TEST

/*
 * A hold delays the reads until its end; a later call replaces it, an
 * earlier end shortens it (a launch whose set proved cached): a hold of
 * 60 s cut to 300 ms lets the read through after 300 ms, well before 60 s.
 */
START_TEST(test_hold_delays_reads)
{
	g_autoptr(GArray) reqs = order_requests_new();
	g_autofree char *f = in_dir("held");
	gint64 until = g_get_monotonic_time() + 300000;
	ReadaheadStats stats;

	write_sized(f, 4096);
	order_requests_add(reqs, f, 0, 4096);
	readahead_hold(ra, until + 60 * G_USEC_PER_SEC);
	readahead_hold(ra, until);
	stats = readahead_run(ra, reqs, OPTS(SORT_PATH, 0));
	ck_assert_int_ge(g_get_monotonic_time(), until);
	ck_assert_int_lt(g_get_monotonic_time(), until + 30 * G_USEC_PER_SEC);
	ck_assert_uint_eq(stats.bytes, 4096);
	ck_assert_uint_eq(stats.files, 1);
	readahead_hold(ra, 0);
}
END_TEST

/* ---- hostile files ---- */

static void
assert_skipped(const char *path)
{
	ReadaheadStats stats;
	gint64 t0 = g_get_monotonic_time();

	stats = run_one(path, 0, MIB, 0);
	ck_assert_uint_eq(stats.requests, 1);
	ck_assert_uint_eq(stats.skipped, 1);
	ck_assert_uint_eq(stats.failed, 0);
	ck_assert_uint_eq(stats.files, 0);
	ck_assert_uint_eq(stats.bytes, 0);
	ck_assert_uint_eq(stats.syscalls, 0);
	ck_assert_int_lt(g_get_monotonic_time() - t0, 2 * G_USEC_PER_SEC);
}

/* Counts the log lines that contain the text user_data points to (a Counter). */
typedef struct {
	const char *text;
	guint lines;
	guint summaries;   /* "... not shown" */
} Counter;

static void
count_lines(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
	Counter *counter = data;

	(void)domain;
	(void)level;
	if (strstr(message, counter->text))
		counter->lines++;
	if (strstr(message, "not shown"))
		counter->summaries++;
}

/* Two batches of 12 FIFOs: the limit across batches, not only the cap per batch. */
static Counter
log_two_batches(LogLimit *limit)
{
	ReadaheadOptions options = { .strategy = SORT_PATH, .notice_limit = limit };
	Counter counter = { "not a regular file", 0, 0 };
	guint handler = g_log_set_handler(G_LOG_DOMAIN, G_LOG_LEVEL_MASK, count_lines, &counter);

	for (int batch = 0; batch < 2; batch++) {
		/* A batch consumes its requests. */
		g_autoptr(GArray) reqs = order_requests_new();

		for (int i = 0; i < 12; i++) {
			g_autofree char *name = g_strdup_printf("fifo%02d", i);
			g_autofree char *f = in_dir(name);

			if (access(f, F_OK) != 0)
				ck_assert_int_eq(mkfifo(f, 0600), 0);
			order_requests_add(reqs, f, 0, 4096);
		}
		ck_assert_uint_eq(readahead_run(ra, reqs, &options).skipped, 12);
	}
	g_log_remove_handler(G_LOG_DOMAIN, handler);
	return counter;
}

START_TEST(test_run_messages_limited)
{
	LogLimit limit = LOG_LIMIT_INIT("readahead skips", G_LOG_LEVEL_INFO, 3, 3600);
	Counter unlimited = log_two_batches(NULL);
	Counter limited = log_two_batches(&limit);

	/* 10 a batch and a summary line each, without a limit... */
	ck_assert_uint_eq(unlimited.lines, 20);
	ck_assert_uint_eq(unlimited.summaries, 2);
	/* ...3 in all with one: 24 skips and 2 summaries held back, counted. */
	ck_assert_uint_eq(limited.lines, 3);
	ck_assert_uint_eq(limited.summaries, 0);
	ck_assert_uint_eq(limit.suppressed, 7 + 1 + 10 + 1);
}
END_TEST

START_TEST(test_run_fifo_is_skipped)
{
	g_autofree char *f = in_dir("lib.so");
	union {
		struct inotify_event ev;
		char bytes[sizeof(struct inotify_event) + NAME_MAX + 1];
	} buf;
	int ino;

	/* Opening this FIFO for reading without O_NONBLOCK would block forever (no writer). */
	ck_assert_int_eq(mkfifo(f, 0600), 0);
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ck_assert_int_ge(ino, 0);
	ck_assert_int_ge(inotify_add_watch(ino, f, IN_OPEN), 0);
	assert_skipped(f);
	/* Skipped without even being opened. */
	ck_assert_int_eq(read(ino, &buf, sizeof(buf)), -1);
	ck_assert_int_eq(errno, EAGAIN);
	(void)close(ino);
}
END_TEST

START_TEST(test_run_symlinks_are_skipped)
{
	g_autofree char *dev = in_dir("lib-dev.so");
	g_autofree char *reg = in_dir("lib-reg.so");
	g_autofree char *target = in_dir("target");

	ck_assert_int_eq(symlink("/dev/zero", dev), 0);
	assert_skipped(dev);
	/* Even to a regular file: a learned path is never followed. */
	write_sized(target, 4096);
	ck_assert_int_eq(symlink(target, reg), 0);
	assert_skipped(reg);
}
END_TEST

START_TEST(test_run_special_files_are_skipped)
{
	g_autofree char *sock = in_dir("sock");
	g_autofree char *cwd = g_get_current_dir();
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	assert_skipped("/dev/null");
	assert_skipped(dir);

	/* Bound by a name relative to dir: sun_path is too short for deep build trees. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	g_strlcpy(addr.sun_path, "sock", sizeof(addr.sun_path));
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	ck_assert_int_eq(chdir(cwd), 0);
	assert_skipped(sock);
	(void)close(fd);
}
END_TEST

START_TEST(test_run_missing_is_skipped)
{
	g_autofree char *gone = in_dir("gone.so");
	g_autofree char *file = in_dir("file");
	g_autofree char *under_file = in_dir("file/lib.so");

	assert_skipped(gone);
	/* A directory replaced by a file: ENOTDIR, as stale as ENOENT. */
	write_sized(file, 1);
	assert_skipped(under_file);
}
END_TEST

static guint warnings_seen, infos_seen;

static void
count_messages(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
	(void)domain; (void)message; (void)data;
	if (level & G_LOG_LEVEL_WARNING)
		warnings_seen++;
	if (level & G_LOG_LEVEL_INFO)
		infos_seen++;
}

START_TEST(test_run_failures_are_counted_and_capped)
{
	g_autoptr(GArray) reqs = order_requests_new();
	g_autofree char *longname = g_strnfill(300, 'x');
	ReadaheadStats stats;

	g_log_set_handler("preload", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_INFO, count_messages, NULL);
	/* 15 names longer than NAME_MAX: ENAMETOOLONG is a failure, not a stale file. */
	for (int i = 0; i < 15; i++) {
		g_autofree char *name = g_strdup_printf("%s%02d", longname, i);
		g_autofree char *path = in_dir(name);

		order_requests_add(reqs, path, 0, 4096);
	}
	/* 15 FIFOs: skipped, each worth an info. */
	for (int i = 0; i < 15; i++) {
		g_autofree char *name = g_strdup_printf("fifo%02d", i);
		g_autofree char *path = in_dir(name);

		ck_assert_int_eq(mkfifo(path, 0600), 0);
		order_requests_add(reqs, path, 0, 4096);
	}
	stats = readahead_run(ra, reqs, OPTS(SORT_PATH, 0));
	ck_assert_uint_eq(stats.requests, 30);
	ck_assert_uint_eq(stats.failed, 15);
	ck_assert_uint_eq(stats.skipped, 15);
	ck_assert_uint_eq(stats.files, 0);
	/* 10 shown (the per-batch cap) + 1 summary of the other 5, for each kind. */
	ck_assert_uint_eq(warnings_seen, 11);
	ck_assert_uint_eq(infos_seen, 11);
}
END_TEST

START_TEST(test_run_parallel_mixed)
{
	g_autoptr(GArray) reqs = order_requests_new();
	ReadaheadStats stats;

	/* 40 files of i*1000+1 bytes: sum = 1000 * (0+...+39) + 40 = 780040. */
	for (int i = 0; i < 40; i++) {
		g_autofree char *name = g_strdup_printf("f%02d", i);
		g_autofree char *path = in_dir(name);

		write_sized(path, (guint64)i * 1000 + 1);
		order_requests_add(reqs, path, 0, MIB);
	}
	for (int i = 0; i < 3; i++) {
		g_autofree char *name = g_strdup_printf("gone%d", i);
		g_autofree char *path = in_dir(name);

		order_requests_add(reqs, path, 0, MIB);
	}
	for (int i = 0; i < 2; i++) {
		g_autofree char *name = g_strdup_printf("fifo%d", i);
		g_autofree char *path = in_dir(name);

		ck_assert_int_eq(mkfifo(path, 0600), 0);
		order_requests_add(reqs, path, 0, MIB);
	}
	stats = readahead_run(ra, reqs, OPTS(SORT_BLOCK, 4));
	ck_assert_uint_eq(stats.requests, 45);
	ck_assert_uint_eq(stats.files, 40);
	ck_assert_uint_eq(stats.skipped, 5);
	ck_assert_uint_eq(stats.failed, 0);
	ck_assert_uint_eq(stats.bytes, 780040);
	/* Every file is under the smallest chunk: one call each. */
	ck_assert_uint_eq(stats.syscalls, 40);
}
END_TEST

START_TEST(test_run_tmpfs_falls_back)
{
	g_autofree char *shmdir = NULL;
	g_autofree char *f = NULL;
	ReadaheadStats stats;

	/* readahead(2) may answer EINVAL on tmpfs; that must not count as a failure. */
	shmdir = g_strdup("/dev/shm/check_readahead-XXXXXX");
	ck_assert_ptr_nonnull(g_mkdtemp(shmdir));
	f = g_build_filename(shmdir, "f", NULL);
	write_sized(f, MIB);
	stats = run_one(f, 0, MIB, 0);
	tu_rm_rf(shmdir);
	ck_assert_uint_eq(stats.files, 1);
	ck_assert_uint_eq(stats.failed, 0);
	ck_assert_uint_eq(stats.bytes, MIB);
	ck_assert_uint_ge(stats.syscalls, 1);
}
END_TEST

/* ---- residency ---- */

/* Whether this kernel has cachestat(2) (451 where the table is common). */
static gboolean
have_cachestat(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
	guint64 range[2] = { 0, 0 }, cs[5];
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	long rc;

	if (fd < 0)
		return FALSE;
	rc = syscall(451, fd, range, cs, 0);
	(void)close(fd);
	/* /dev/null is no page cache file, but only ENOSYS says the call is missing. */
	return rc == 0 || errno != ENOSYS;
#else
	return FALSE;
#endif
}

/*
 * Evicts the file, then reads [first, first + count) pages of it back
 * for each pair in `pages` (terminated by count 0). FADV_RANDOM keeps
 * the kernel's own readahead from adding pages around each read, so
 * exactly the listed pages end up cached.
 */
static void
cache_pages(const char *path, const guint64 *pages)
{
	const guint64 page = (guint64)page_size;
	int fd;

	drop_cache(path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
	for (guint i = 0; pages[i + 1] != 0; i += 2) {
		g_autofree guint8 *buf = g_malloc(pages[i + 1] * page);

		ck_assert_int_eq(pread(fd, buf, pages[i + 1] * page, (off_t)(pages[i] * page)),
				 (ssize_t)(pages[i + 1] * page));
	}
	ck_assert_int_eq(close(fd), 0);
	/* The pattern itself is checked: a test on a wrong pattern proves nothing. */
	for (guint i = 0; pages[i + 1] != 0; i += 2)
		ck_assert_uint_eq(resident_pages(path, pages[i] * page, pages[i + 1] * page),
				  pages[i + 1]);
}

/* Reads the whole file so that every page is cached, and checks it. */
static void
cache_all(const char *path, guint64 size)
{
	g_autofree char *data = NULL;
	gsize len;

	ck_assert(g_file_get_contents(path, &data, &len, NULL));
	ck_assert_uint_eq(len, size);
	ck_assert_uint_eq(resident_pages(path, 0, size), size / (guint64)page_size);
}

START_TEST(test_residency_cached_range_is_skipped)
{
	g_autofree char *f = in_dir("cached");
	const guint64 size = MIB;
	ReadaheadStats stats;

	write_sized(f, size);
	cache_all(f, size);

	/* Through cachestat: one call says all 256 pages are cached (or one mincore without it). */
	stats = readahead_run_one_checked(f, 0, size);
	ck_assert_uint_eq(stats.requests, 1);
	ck_assert_uint_eq(stats.files, 1);
	ck_assert_uint_eq(stats.bytes, 0);
	ck_assert_uint_eq(stats.syscalls, 0);
	ck_assert_uint_eq(stats.resident_bytes, size);
	ck_assert_uint_eq(stats.resident_ranges, 1);
	ck_assert_uint_eq(stats.failed, 0);
	ck_assert_uint_eq(stats.probes, 1);

	/* Through mincore: 256 pages fit one 4096-page window, one call too. */
	renew_reader(FALSE);
	stats = readahead_run_one_checked(f, 0, size);
	ck_assert_uint_eq(stats.bytes, 0);
	ck_assert_uint_eq(stats.syscalls, 0);
	ck_assert_uint_eq(stats.resident_bytes, size);
	ck_assert_uint_eq(stats.resident_ranges, 1);
	ck_assert_uint_eq(stats.probes, 1);
}
END_TEST

/*
 * A batch whose files are all cached starts no worker thread: the batch
 * thread's cachestat() pre-pass settles every file. Five files of 64 KiB
 * with maxprocs 4: 0 threads, 0 readahead calls, 5 * 65536 bytes found.
 * Without cachestat (_i == 1) the pre-pass cannot settle them, and one
 * mincore() per file in the workers finds them cached.
 */
START_TEST(test_residency_cached_batch_starts_no_thread)
{
	g_autoptr(GArray) reqs = order_requests_new();
	const guint64 size = 64 * 1024;
	ReadaheadStats stats;

	renew_reader(_i == 0);
	for (guint i = 0; i < 5; i++) {
		g_autofree char *name = g_strdup_printf("warm%u", i);
		g_autofree char *path = in_dir(name);

		write_sized(path, size);
		cache_all(path, size);
		order_requests_add(reqs, path, 0, size);
	}
	stats = readahead_run(ra, reqs, OPTS_CHECK(SORT_PATH, 4));
	ck_assert_uint_eq(stats.files, 5);
	ck_assert_uint_eq(stats.syscalls, 0);
	ck_assert_uint_eq(stats.bytes, 0);
	ck_assert_uint_eq(stats.resident_bytes, 5 * size);
	ck_assert_uint_eq(stats.resident_ranges, 5);
	ck_assert_uint_eq(stats.probes, 5);
	/* With cachestat the pre-pass decides; without it mincore runs in workers. */
	if (_i == 0) {
		ck_assert_uint_eq(stats.threads, 0);
	} else {
		ck_assert_uint_ge(stats.threads, 1);
		ck_assert_uint_le(stats.threads, 4);
	}
}
END_TEST

/* How many times path was opened since the watch was added (drains the events). */
static guint
count_opens(int ino)
{
	union {
		struct inotify_event ev;
		char bytes[16 * (sizeof(struct inotify_event) + NAME_MAX + 1)];
	} buf;
	guint opens = 0;
	ssize_t n;

	while ((n = read(ino, &buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			const struct inotify_event *ev = (const void *)(buf.bytes + off);

			if (ev->mask & IN_OPEN)
				opens++;
			off += (ssize_t)(sizeof(*ev) + ev->len);
		}
	}
	return opens;
}

/*
 * Each file of a batch is examined once, before the sort: a cached file
 * is opened once whatever the strategy (no FIEMAP, no second open), and
 * a file to read twice (examined, then read: the next case).
 */
START_TEST(test_residency_file_opened_once)
{
	g_autofree char *f = in_dir("once");
	const guint64 size = MIB;
	ReadaheadStats stats;
	int ino;

	write_sized(f, size);
	cache_all(f, size);
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ck_assert_int_ge(ino, 0);
	/* Closes too: inotify merges an event with an identical one queued just before it. */
	ck_assert_int_ge(inotify_add_watch(ino, f, IN_OPEN | IN_CLOSE_NOWRITE), 0);
	for (int strategy = SORT_NONE; strategy <= SORT_BLOCK; strategy++) {
		g_autoptr(GArray) reqs = order_requests_new();

		/* Over MERGE_GAP_BYTES (256 KiB) apart: three requests. */
		order_requests_add(reqs, f, 0, 4096);
		order_requests_add(reqs, f, 320 * 1024, 4096);
		order_requests_add(reqs, f, 768 * 1024, 8192);
		stats = readahead_run(ra, reqs, OPTS_CHECK(strategy, 0));
		ck_assert_uint_eq(stats.requests, 3);
		ck_assert_uint_eq(stats.files, 1);
		ck_assert_uint_eq(stats.resident_ranges, 3);
		ck_assert_uint_eq(stats.syscalls, 0);
		ck_assert_uint_eq(count_opens(ino), 1);
	}
	(void)close(ino);
}
END_TEST

START_TEST(test_residency_file_to_read_opened_twice)
{
	g_autoptr(GArray) reqs = order_requests_new();
	g_autofree char *f = in_dir("twice");
	const guint64 size = MIB;
	ReadaheadStats stats;
	int ino;

	write_sized(f, size);
	drop_cache(f);
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ck_assert_int_ge(ino, 0);
	ck_assert_int_ge(inotify_add_watch(ino, f, IN_OPEN | IN_CLOSE_NOWRITE), 0);
	order_requests_add(reqs, f, 0, size);
	stats = readahead_run(ra, reqs, OPTS_CHECK(SORT_BLOCK, 0));
	ck_assert_uint_eq(stats.bytes, size);
	ck_assert_uint_eq(count_opens(ino), 2);
	(void)close(ino);
}
END_TEST

/*
 * Two ranges of an uncached file 96 KiB apart are read as one request,
 * the gap with them: one disk request instead of two.
 */
START_TEST(test_residency_near_ranges_read_as_one)
{
	g_autofree char *f = in_dir("near");
	g_autoptr(GArray) reqs = order_requests_new();
	ReadaheadStats stats;

	write_sized(f, MIB);
	drop_cache(f);
	order_requests_add(reqs, f, 0, 4096);
	order_requests_add(reqs, f, 100 * 1024, 4096);
	stats = readahead_run(ra, reqs, OPTS_CHECK(SORT_PATH, 0));
	ck_assert_uint_eq(stats.requests, 1);
	ck_assert_uint_eq(stats.bytes, 104 * 1024);
	ck_assert_uint_eq(resident_pages(f, 0, 104 * 1024), 104 * 1024 / page_size);
}
END_TEST

START_TEST(test_residency_evicted_is_read_whole)
{
	g_autofree char *f = in_dir("evicted");
	const guint64 size = 2 * MIB;
	ReadaheadStats stats;

	write_sized(f, size);
	for (int use_cachestat = 1; use_cachestat >= 0; use_cachestat--) {
		renew_reader(use_cachestat);
		drop_cache(f);
		ck_assert_uint_eq(resident_pages(f, 0, size), 0);
		/* Nothing cached: one probe (cachestat "none", or one mincore window), all requested. */
		stats = readahead_run_one_checked(f, 0, size);
		ck_assert_uint_eq(stats.bytes, size);
		ck_assert_uint_eq(stats.resident_bytes, 0);
		ck_assert_uint_eq(stats.resident_ranges, 0);
		ck_assert_uint_eq(stats.probes, 1);
		ck_assert_uint_eq(wait_resident(f, 0, size), 512);
	}
}
END_TEST

/* The eviction count a trusted batch reads (ReadaheadOptions.vmstat_path); NULL: none. */
static const char *trusted_vmstat;

/* The two ranges of test_residency_trusted_probe, with trust_us. */
static ReadaheadStats
run_two_trusted(const char *path, gint64 trust_us)
{
	g_autoptr(GArray) reqs = order_requests_new();
	ReadaheadOptions options = { .strategy = SORT_PATH, .check_residency = TRUE,
				     .trust_us = trust_us, .vmstat_path = trusted_vmstat };

	/* 448 KiB apart: not merged. */
	order_requests_add(reqs, path, 0, 64 * 1024);
	order_requests_add(reqs, path, 512 * 1024, 64 * 1024);
	return readahead_run(ra, reqs, &options);
}

/*
 * With trust_us, a file a full probe found cached is only spot-checked
 * within trust_us: the first, middle and last page of each range. Pages
 * evicted around the spots are not read then; a whole file evicted is
 * probed in full and read at once, and so is every file after trust_us.
 */
START_TEST(test_residency_trusted_probe)
{
	g_autofree char *f = in_dir("trusted");
	ReadaheadStats stats;

	write_sized(f, MIB);
	cache_all(f, MIB);
	/* Probed in full: one cachestat per range, both cached; remembered. */
	stats = run_two_trusted(f, 60 * G_USEC_PER_SEC);
	ck_assert_uint_eq(stats.probes, 2);
	ck_assert_uint_eq(stats.resident_ranges, 2);
	ck_assert_uint_eq(stats.trusted_ranges, 0);
	ck_assert_uint_eq(stats.files, 1);
	ck_assert_uint_eq(stats.bytes, 0);

	/*
	 * Within trust_us: spot-checked, pages 0, 7 and 15 of [0, 64 KiB) and
	 * 128, 135 and 143 of the other range, six one-page probes. (Pages
	 * evicted around the spots would go unnoticed, but the page cache
	 * may hold the file in large folios that a DONTNEED of a few pages
	 * does not split: not a case a test can make.)
	 */
	stats = run_two_trusted(f, 60 * G_USEC_PER_SEC);
	ck_assert_uint_eq(stats.probes, 6);
	ck_assert_uint_eq(stats.resident_ranges, 2);
	ck_assert_uint_eq(stats.trusted_ranges, 2);
	ck_assert_uint_eq(stats.resident_bytes, 128 * 1024);
	ck_assert_uint_eq(stats.files, 1);
	ck_assert_uint_eq(stats.bytes, 0);

	/* The whole file evicted: page 0 fails the spot check, both ranges are read. */
	drop_cache(f);
	stats = run_two_trusted(f, 60 * G_USEC_PER_SEC);
	ck_assert_uint_eq(stats.trusted_ranges, 0);
	ck_assert_uint_eq(stats.resident_ranges, 0);
	ck_assert_uint_eq(stats.bytes, 128 * 1024);
	ck_assert_uint_eq(wait_resident(f, 0, 64 * 1024), 16);
	ck_assert_uint_eq(wait_resident(f, 512 * 1024, 64 * 1024), 16);

	/* Forgotten then: probed in full, remembered again. */
	stats = run_two_trusted(f, 60 * G_USEC_PER_SEC);
	ck_assert_uint_eq(stats.probes, 2);
	ck_assert_uint_eq(stats.resident_ranges, 2);
	ck_assert_uint_eq(stats.trusted_ranges, 0);

	/* A trust of 1 us has run out by the next batch: probed in full. */
	g_usleep(1000);
	stats = run_two_trusted(f, 1);
	ck_assert_uint_eq(stats.probes, 2);
	ck_assert_uint_eq(stats.resident_ranges, 2);
	ck_assert_uint_eq(stats.trusted_ranges, 0);
}
END_TEST

/* Writes the eviction counters a batch given path as its vmstat_path reads. */
static void
write_vmstat(const char *path, guint64 steal, guint64 drops)
{
	g_autofree char *text = g_strdup_printf("nr_free_pages 100\npgsteal_kswapd %" G_GUINT64_FORMAT
						"\npgscan_kswapd 999\ndrop_pagecache %"
						G_GUINT64_FORMAT "\n", steal, drops);

	tu_write_file(path, text);
}

/*
 * With a vmstat_path, a file a full probe found cached is not
 * even opened within trust_us while the eviction counters stay as they
 * were before that probe: an lstat settles it. A DONTNEED is no eviction
 * the counters see (the price); a counted eviction or a file replaced
 * brings back the open and the spot checks.
 */
START_TEST(test_residency_trusted_unopened)
{
	g_autofree char *f = in_dir("unopened");
	g_autofree char *vmstat = in_dir("vmstat");
	const gint64 trust = 60 * G_USEC_PER_SEC;
	ReadaheadStats stats;
	int ino;

	write_sized(f, MIB);
	cache_all(f, MIB);
	write_vmstat(vmstat, 5, 2);
	trusted_vmstat = vmstat;
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ck_assert_int_ge(ino, 0);
	ck_assert_int_ge(inotify_add_watch(ino, f, IN_OPEN | IN_CLOSE_NOWRITE), 0);

	/* Probed in full: opened once, one cachestat per range; remembered with the counts. */
	stats = run_two_trusted(f, trust);
	ck_assert_uint_eq(stats.probes, 2);
	ck_assert_uint_eq(stats.files, 1);
	ck_assert_uint_eq(stats.resident_ranges, 2);
	ck_assert_uint_eq(stats.trusted_ranges, 0);
	ck_assert_uint_eq(stats.unopened_ranges, 0);
	ck_assert_uint_eq(count_opens(ino), 1);

	/* Nothing evicted since: not opened, no probe, both ranges (128 KiB) cached. */
	stats = run_two_trusted(f, trust);
	ck_assert_uint_eq(stats.probes, 0);
	ck_assert_uint_eq(stats.files, 0);
	ck_assert_uint_eq(stats.resident_ranges, 2);
	ck_assert_uint_eq(stats.trusted_ranges, 2);
	ck_assert_uint_eq(stats.unopened_ranges, 2);
	ck_assert_uint_eq(stats.resident_bytes, 128 * 1024);
	ck_assert_uint_eq(stats.bytes, 0);
	ck_assert_uint_eq(count_opens(ino), 0);

	/* A DONTNEED moves no counter: still taken as cached, nothing read. */
	drop_cache(f);
	(void)count_opens(ino);
	stats = run_two_trusted(f, trust);
	ck_assert_uint_eq(stats.unopened_ranges, 2);
	ck_assert_uint_eq(stats.bytes, 0);
	ck_assert_uint_eq(count_opens(ino), 0);

	/* One page reclaimed somewhere: opened, page 0 fails its spot check, both ranges read. */
	write_vmstat(vmstat, 6, 2);
	stats = run_two_trusted(f, trust);
	ck_assert_uint_eq(stats.unopened_ranges, 0);
	ck_assert_uint_eq(stats.trusted_ranges, 0);
	ck_assert_uint_eq(stats.bytes, 128 * 1024);
	ck_assert_uint_eq(wait_resident(f, 0, 64 * 1024), 16);
	ck_assert_uint_eq(wait_resident(f, 512 * 1024, 64 * 1024), 16);

	/* Forgotten then: probed in full at the new counts, then settled unopened again. */
	stats = run_two_trusted(f, trust);
	ck_assert_uint_eq(stats.probes, 2);
	ck_assert_uint_eq(stats.unopened_ranges, 0);
	stats = run_two_trusted(f, trust);
	ck_assert_uint_eq(stats.probes, 0);
	ck_assert_uint_eq(stats.unopened_ranges, 2);

	/* A new file under the name (another inode): opened and probed in full, then trusted. */
	ck_assert_int_eq(g_unlink(f), 0);
	write_sized(f, MIB);
	cache_all(f, MIB);
	stats = run_two_trusted(f, trust);
	ck_assert_uint_eq(stats.unopened_ranges, 0);
	ck_assert_uint_eq(stats.files, 1);
	ck_assert_uint_eq(stats.probes, 2);
	stats = run_two_trusted(f, trust);
	ck_assert_uint_eq(stats.unopened_ranges, 2);

	/*
	 * The cache dropped: spot-checked (six one-page probes), all cached
	 * still; and so until the trust runs out, a spot check vouching for
	 * no more than its pages.
	 */
	write_vmstat(vmstat, 6, 3);
	for (int i = 0; i < 2; i++) {
		stats = run_two_trusted(f, trust);
		ck_assert_uint_eq(stats.probes, 6);
		ck_assert_uint_eq(stats.trusted_ranges, 2);
		ck_assert_uint_eq(stats.unopened_ranges, 0);
	}

	/* Counters that cannot be read: the spot checks as before. */
	ck_assert_int_eq(g_unlink(vmstat), 0);
	stats = run_two_trusted(f, trust);
	ck_assert_uint_eq(stats.unopened_ranges, 0);
	ck_assert_uint_eq(stats.probes, 6);
	trusted_vmstat = NULL;
	(void)close(ino);
}
END_TEST

START_TEST(test_residency_off_requests_everything)
{
	g_autofree char *f = in_dir("cached");
	const guint64 size = MIB;
	ReadaheadStats stats;

	write_sized(f, size);
	cache_all(f, size);
	stats = run_one(f, 0, size, 0);
	ck_assert_uint_eq(stats.bytes, size);
	ck_assert_uint_ge(stats.syscalls, 1);
	ck_assert_uint_eq(stats.resident_bytes, 0);
	ck_assert_uint_eq(stats.resident_ranges, 0);
	ck_assert_uint_eq(stats.probes, 0);
}
END_TEST

START_TEST(test_residency_half_read)
{
	g_autofree char *f = in_dir("half");
	/* 4 MiB = 1024 pages of 4 KiB; the first 512 are read back after eviction. */
	const guint64 size = 4 * MIB;
	const guint64 first_half[] = { 0, 512, 0, 0 };
	const gboolean cachestat = have_cachestat();
	ReadaheadStats stats;

	write_sized(f, size);
	for (int use_cachestat = 1; use_cachestat >= 0; use_cachestat--) {
		renew_reader(use_cachestat);
		cache_pages(f, first_half);
		ck_assert_uint_eq(resident_pages(f, 2 * MIB, 2 * MIB), 0);

		stats = readahead_run_one_checked(f, 0, size);
		/* Missing: pages 512..1023 = 512 * 4096 = 2097152 bytes; the rest was cached. */
		ck_assert_uint_eq(stats.bytes, 2097152);
		ck_assert_uint_eq(stats.resident_bytes, 2097152);
		ck_assert_uint_eq(stats.resident_ranges, 0);
		ck_assert_uint_eq(stats.failed, 0);
		ck_assert_uint_ge(stats.syscalls, 1);
		/* cachestat says "part", then one mincore window; without it, mincore alone. */
		ck_assert_uint_eq(stats.probes, use_cachestat && cachestat ? 2 : 1);
		ck_assert_uint_eq(wait_resident(f, 0, size), 1024);
	}
}
END_TEST

START_TEST(test_residency_runs_and_gaps)
{
	g_autofree char *f = in_dir("gaps");
	/*
	 * 1024 pages. Cached: [0,100) [104,124) [128,200) [204,1000).
	 * Missing:            [100,104) [124,128) [200,204) [1000,1024).
	 * The 20 cached pages [104,124) are under the 256 KiB (64-page) gap:
	 * merged, [100,128) = 28 pages. The 72 cached pages [128,200) are
	 * not: [200,204) = 4 pages stays apart, and so does [1000,1024) = 24.
	 * Requested 28 + 4 + 24 = 56 pages = 229376 bytes, in 3 calls (each
	 * run is under 128 KiB, the smallest chunk of a device with
	 * readahead); cached and not requested 1024 - 56 = 968 pages =
	 * 3964928 bytes.
	 */
	const guint64 cached[] = { 0, 100, 104, 20, 128, 72, 204, 796, 0, 0 };
	const gboolean cachestat = have_cachestat();
	ReadaheadStats stats;

	write_sized(f, 4 * MIB);
	for (int use_cachestat = 1; use_cachestat >= 0; use_cachestat--) {
		renew_reader(use_cachestat);
		cache_pages(f, cached);
		ck_assert_uint_eq(resident_pages(f, 0, 4 * MIB), 100 + 20 + 72 + 796);

		stats = readahead_run_one_checked(f, 0, 4 * MIB);
		ck_assert_uint_eq(stats.bytes, 229376);
		ck_assert_uint_eq(stats.resident_bytes, 3964928);
		ck_assert_uint_eq(stats.syscalls, 3);
		ck_assert_uint_eq(stats.probes, use_cachestat && cachestat ? 2 : 1);
		/* Everything is cached now; the next batch asks for nothing. */
		ck_assert_uint_eq(wait_resident(f, 0, 4 * MIB), 1024);
		stats = readahead_run_one_checked(f, 0, 4 * MIB);
		ck_assert_uint_eq(stats.bytes, 0);
		ck_assert_uint_eq(stats.syscalls, 0);
		ck_assert_uint_eq(stats.resident_ranges, 1);
	}
}
END_TEST

START_TEST(test_residency_unaligned_range)
{
	g_autofree char *f = in_dir("unaligned");
	/*
	 * 4 pages; only page 1 ([4096, 8192)) cached. The range [1000,
	 * 15000) touches pages 0..3; the missing pages 0, 2 and 3 are one
	 * run across the 1-page gap, clipped to the range: 14000 bytes, and
	 * nothing counts as skipped (the cached page lies inside the run).
	 */
	const guint64 page1[] = { 1, 1, 0, 0 };
	ReadaheadStats stats;

	write_sized(f, 16384);
	cache_pages(f, page1);
	stats = readahead_run_one_checked(f, 1000, 14000);
	ck_assert_uint_eq(stats.bytes, 14000);
	ck_assert_uint_eq(stats.resident_bytes, 0);
	ck_assert_uint_eq(stats.syscalls, 1);

	/*
	 * Within the cached page: [5000, 6000) is resident, skipped whole,
	 * and counts its own 1000 bytes, not the page's 4096.
	 */
	stats = readahead_run_one_checked(f, 5000, 1000);
	ck_assert_uint_eq(stats.bytes, 0);
	ck_assert_uint_eq(stats.resident_bytes, 1000);
	ck_assert_uint_eq(stats.resident_ranges, 1);
}
END_TEST

START_TEST(test_residency_windows)
{
	g_autofree char *f = in_dir("windows");
	/*
	 * 24 MiB = 6144 pages, the first 4000 cached. mincore looks at
	 * 4096 pages per call: windows [0,4096) and [4096,6144), two calls.
	 * The missing pages [4000,6144) span the window edge and are one
	 * run of 2144 pages = 8781824 bytes; 4000 pages = 16384000 bytes
	 * were cached.
	 */
	const guint64 head[] = { 0, 4000, 0, 0 };
	ReadaheadStats stats;

	write_sized(f, 24 * MIB);
	renew_reader(FALSE);
	cache_pages(f, head);
	stats = readahead_run_one_checked(f, 0, 24 * MIB);
	ck_assert_uint_eq(stats.bytes, 8781824);
	ck_assert_uint_eq(stats.resident_bytes, 16384000);
	ck_assert_uint_eq(stats.probes, 2);
	ck_assert_uint_eq(wait_resident(f, 0, 24 * MIB), 6144);
}
END_TEST

/* Drops capabilities from the effective set of this (forked) test process. */
static void
drop_effective_caps(const int *caps, guint n)
{
	struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	ck_assert_int_eq(syscall(SYS_capget, &header, data), 0);
	for (guint i = 0; i < n; i++)
		data[CAP_TO_INDEX(caps[i])].effective &= ~CAP_TO_MASK(caps[i]);
	ck_assert_int_eq(syscall(SYS_capset, &header, data), 0);
}

START_TEST(test_residency_untrusted_mincore)
{
	g_autofree char *f = in_dir("theirs");
	const guint64 first_half[] = { 0, 256, 0, 0 };
	const int caps[] = { CAP_FOWNER, CAP_DAC_OVERRIDE };
	ReadaheadStats stats;

	/*
	 * A file of another user, which this process may not write, and
	 * without CAP_FOWNER: the kernel's mincore() then claims every page
	 * is cached. Trusting it would never read the file again. The
	 * shipped systemd unit runs preload just so (root, no CAP_FOWNER).
	 * The reader is made after the drop (renew_reader() below): it asks
	 * for CAP_FOWNER once, when made.
	 */
	write_sized(f, 2 * MIB);
	ck_assert_int_eq(chown(f, 65534, 65534), 0);
	ck_assert_int_eq(chmod(f, 0644), 0);
	cache_pages(f, first_half);
	drop_effective_caps(caps, G_N_ELEMENTS(caps));
	renew_reader(FALSE);

	/* The lie, seen by the test's own mincore: 512 pages "cached", 256 really are. */
	ck_assert_uint_eq(resident_pages(f, 0, 2 * MIB), 512);

	/* Not trusted: the whole 2 MiB is requested, nothing counted as cached. */
	stats = readahead_run_one_checked(f, 0, 2 * MIB);
	ck_assert_uint_eq(stats.files, 1);
	ck_assert_uint_eq(stats.bytes, 2 * MIB);
	ck_assert_uint_eq(stats.resident_bytes, 0);
	ck_assert_uint_eq(stats.probes, 0);
}
END_TEST

#if defined(__x86_64__)
/*
 * A seccomp filter like the one systemd builds from an allow-list that
 * lacks both calls: cachestat() answers ENOSYS (unknown to the filter),
 * mincore() EPERM (SystemCallErrorNumber=EPERM). Everything else runs.
 */
static void
filter_residency_calls(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 451, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mincore, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { G_N_ELEMENTS(code), code };

	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	ck_assert_int_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0), 0);
}

START_TEST(test_residency_filtered_calls)
{
	g_autoptr(GArray) reqs = order_requests_new();
	g_autofree char *f = in_dir("filtered");
	const guint64 first_half[] = { 0, 256, 0, 0 };
	ReadaheadStats stats;

	write_sized(f, 2 * MIB);
	cache_pages(f, first_half);
	infos_seen = 0;
	g_log_set_handler("preload", G_LOG_LEVEL_INFO, count_messages, NULL);
	filter_residency_calls();

	/* Three ranges of the file, over 256 KiB apart: neither call answers, each is read whole. */
	order_requests_add(reqs, f, 0, 4096);
	order_requests_add(reqs, f, 320 * 1024, 4096);
	order_requests_add(reqs, f, MIB, MIB);
	stats = readahead_run(ra, reqs, OPTS_CHECK(SORT_PATH, 0));
	ck_assert_uint_eq(stats.requests, 3);
	ck_assert_uint_eq(stats.bytes, 4096 + 4096 + MIB);
	ck_assert_uint_eq(stats.resident_bytes, 0);
	ck_assert_uint_eq(stats.probes, 0);
	ck_assert_uint_eq(stats.failed, 0);
	/* One info line about mincore, not one per range. */
	ck_assert_uint_eq(infos_seen, 1);
}
END_TEST

#endif

START_TEST(test_residency_with_hostile_files)
{
	g_autoptr(GArray) reqs = order_requests_new();
	g_autofree char *fifo = in_dir("fifo");
	g_autofree char *gone = in_dir("gone");
	g_autofree char *empty = in_dir("empty");
	ReadaheadStats stats;

	/* The check changes nothing about what is opened, nor about empty files. */
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	write_sized(empty, 0);
	order_requests_add(reqs, fifo, 0, MIB);
	order_requests_add(reqs, gone, 0, MIB);
	order_requests_add(reqs, empty, 0, MIB);
	stats = readahead_run(ra, reqs, OPTS_CHECK(SORT_PATH, 0));
	ck_assert_uint_eq(stats.requests, 3);
	ck_assert_uint_eq(stats.skipped, 3);   /* the FIFO, the missing file, offset 0 past the end */
	ck_assert_uint_eq(stats.files, 1);
	ck_assert_uint_eq(stats.probes, 0);
	ck_assert_uint_eq(stats.bytes, 0);
	ck_assert_uint_eq(stats.syscalls, 0);
}
END_TEST

/* ---- I/O class ---- */

static int
io_class_of_self(void)
{
	long prio = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);

	ck_assert_int_ge(prio, 0);
	return (int)(prio >> 13);
}

static GArray *
small_files(guint n)
{
	GArray *reqs = order_requests_new();

	for (guint i = 0; i < n; i++) {
		g_autofree char *name = g_strdup_printf("io%02u", i);
		g_autofree char *path = in_dir(name);

		write_sized(path, 4096);
		order_requests_add(reqs, path, 0, 4096);
	}
	return reqs;
}

START_TEST(test_idle_class_reaches_workers)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GArray) reqs = small_files(24);
	DoneRecordLite rec = { 0 };
	gint64 cpu;

	/* Each test runs in its own process: the class does not leak out. */
	ck_assert_msg(readahead_set_idle_class(&error), "%s", error ? error->message : "");
	ck_assert_int_eq(io_class_of_self(), 3);

	/* The worker threads, created after the call, inherit the class. */
	ck_assert_int_eq(readahead_get_cpu_us(ra), 0);
	rec.stats = readahead_run(ra, reqs, OPTS(SORT_PATH, 4));
	ck_assert_uint_eq(rec.stats.files, 24);
	ck_assert_uint_ge(rec.stats.threads, 1);
	ck_assert_uint_le(rec.stats.threads, 4);
	ck_assert_uint_eq(rec.stats.threads_not_idle, 0);
	cpu = readahead_get_cpu_us(ra);

	/* And so does the background batch thread with its own workers. */
	ck_assert(readahead_start(ra, small_files(8), OPTS(SORT_NONE, 2), on_done_lite, &rec));
	readahead_wait(ra);
	ck_assert_uint_eq(rec.stats.files, 8);
	ck_assert_uint_ge(rec.stats.threads, 1);
	ck_assert_uint_eq(rec.stats.threads_not_idle, 0);
	/* The batch thread and its workers opened 8 files: their CPU is counted. */
	ck_assert_int_gt(readahead_get_cpu_us(ra), cpu);
}
END_TEST

START_TEST(test_not_idle_is_reported)
{
	g_autoptr(GArray) reqs = small_files(24);
	ReadaheadStats stats;

	/* Best effort, level 4, in case the test itself runs under ionice -c3. */
	ck_assert_int_eq(syscall(SYS_ioprio_set, 1, 0, (2 << 13) | 4), 0);
	ck_assert_int_eq(io_class_of_self(), 2);
	stats = readahead_run(ra, reqs, OPTS(SORT_PATH, 4));
	ck_assert_uint_ge(stats.threads, 1);
	ck_assert_uint_eq(stats.threads_not_idle, stats.threads);

	/* In the calling thread (maxprocs 0) too: one thread, not idle. */
	g_array_unref(g_steal_pointer(&reqs));
	reqs = small_files(3);
	stats = readahead_run(ra, reqs, OPTS(SORT_PATH, 0));
	ck_assert_uint_eq(stats.threads, 1);
	ck_assert_uint_eq(stats.threads_not_idle, 1);
}
END_TEST

/* ---- background batches ---- */

typedef struct {
	guint calls;
	ReadaheadStats stats;
	gboolean busy_in_done;
	GThread *thread;
	GMainLoop *loop;
	gboolean restart;        /* start a synchronous batch from inside done */
	gboolean restart_result;
} DoneRecord;

static void
on_done(const ReadaheadStats *stats, gpointer user_data)
{
	DoneRecord *rec = user_data;

	rec->calls++;
	rec->stats = *stats;
	rec->busy_in_done = readahead_busy(ra);
	rec->thread = g_thread_self();
	if (rec->restart) {
		rec->restart = FALSE;
		rec->restart_result = readahead_start(ra, order_requests_new(), OPTS(SORT_NONE, 0),
						      NULL, NULL);
	}
	if (rec->loop)
		g_main_loop_quit(rec->loop);
}

static gboolean
on_timeout(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

static GArray *
make_files(const char *prefix, guint n, guint64 size)
{
	GArray *reqs = order_requests_new();

	for (guint i = 0; i < n; i++) {
		g_autofree char *name = g_strdup_printf("%s%03u", prefix, i);
		g_autofree char *path = in_dir(name);

		write_sized(path, size);
		order_requests_add(reqs, path, 0, size);
	}
	return reqs;
}

/*
 * maxprocs 0: the batch still runs off the calling thread (its own
 * thread reads it, with no workers): start returns before done, which
 * comes in the main context with the batch's figures.
 */
START_TEST(test_start_maxprocs0)
{
	DoneRecord rec = { .restart = TRUE };
	GArray *reqs = make_files("sync", 3, 5000);
	guint timeout;

	rec.loop = g_main_loop_new(NULL, FALSE);
	ck_assert(readahead_start(ra, reqs, OPTS(SORT_PATH, 0), on_done, &rec));
	ck_assert_uint_eq(rec.calls, 0);
	timeout = g_timeout_add_seconds(20, on_timeout, rec.loop);
	g_main_loop_run(rec.loop);
	g_source_remove(timeout);
	g_main_loop_unref(rec.loop);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_ptr_eq(rec.thread, g_thread_self());
	ck_assert(!rec.busy_in_done);
	ck_assert(rec.restart_result);
	ck_assert_uint_eq(rec.stats.requests, 3);
	ck_assert_uint_eq(rec.stats.files, 3);
	ck_assert_uint_eq(rec.stats.bytes, 15000);
	ck_assert_uint_eq(rec.stats.threads, 1);
	ck_assert(readahead_wait_until(ra, g_get_monotonic_time() + 10 * G_USEC_PER_SEC, FALSE));
	ck_assert(!readahead_busy(ra));
}
END_TEST

START_TEST(test_start_background)
{
	DoneRecord rec = { 0 };
	DoneRecord second = { 0 };
	GArray *reqs = make_files("bg", 60, 256 * 1024);
	guint timeout;

	rec.loop = g_main_loop_new(NULL, FALSE);
	ck_assert(readahead_start(ra, reqs, OPTS(SORT_BLOCK, 4), on_done, &rec));
	/* Busy until done has been delivered by the main loop, however fast the disk. */
	ck_assert(readahead_busy(ra));
	ck_assert_uint_eq(rec.calls, 0);
	/* A second batch is refused (and its requests freed). */
	ck_assert(!readahead_start(ra, make_files("refused", 2, 100), OPTS(SORT_NONE, 4), on_done, &second));
	ck_assert(!readahead_start(ra, order_requests_new(), OPTS(SORT_NONE, 0), on_done, &second));
	ck_assert_uint_eq(second.calls, 0);

	timeout = g_timeout_add_seconds(20, on_timeout, rec.loop);
	g_main_loop_run(rec.loop);
	g_source_remove(timeout);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_ptr_eq(rec.thread, g_thread_self());
	ck_assert(!rec.busy_in_done);
	ck_assert(!readahead_busy(ra));
	/* 60 files of 256 KiB = 15728640 bytes. */
	ck_assert_uint_eq(rec.stats.requests, 60);
	ck_assert_uint_eq(rec.stats.files, 60);
	ck_assert_uint_eq(rec.stats.bytes, 60 * 256 * 1024);
	ck_assert_uint_eq(rec.stats.failed, 0);
	ck_assert_uint_eq(rec.stats.skipped, 0);
	/* Nothing else is pending: done is not called twice. */
	while (g_main_context_iteration(NULL, FALSE))
		;
	ck_assert_uint_eq(rec.calls, 1);
	g_main_loop_unref(rec.loop);
}
END_TEST

/*
 * A batch that does not end by the wait's deadline (held here, as a read
 * on a dead mount would block it) is abandoned: its done is never
 * called, the reader is free for the next batch at once, and the
 * abandoned thread, told to stop, ends by itself.
 */
START_TEST(test_wait_until_abandons)
{
	DoneRecord rec = { 0 };
	DoneRecord next = { 0 };
	guint64 abandoned = 0;
	guint stuck = 0;
	gint64 started;

	readahead_hold(ra, g_get_monotonic_time() + 3 * G_USEC_PER_SEC);
	ck_assert(readahead_start(ra, make_files("stuck", 4, 4096), OPTS(SORT_NONE, 2), on_done, &rec));
	started = g_get_monotonic_time();
	ck_assert(!readahead_wait_until(ra, started + 200000, TRUE));
	/* Returned at the deadline, not when the hold ended. */
	ck_assert_int_lt(g_get_monotonic_time() - started, G_USEC_PER_SEC);
	ck_assert_uint_eq(rec.calls, 0);
	ck_assert(!readahead_busy(ra));
	readahead_get_abandoned(ra, &abandoned, &stuck, NULL);
	ck_assert_uint_eq(abandoned, 1);
	/* Told to stop as it was abandoned, it leaves the hold at once: 0 or 1 now. */
	ck_assert_uint_le(stuck, 1);

	/* The next batch starts; once the hold ends both threads do. */
	ck_assert(readahead_start(ra, make_files("next", 1, 4096), OPTS(SORT_NONE, 2), on_done, &next));
	readahead_hold(ra, 0);
	ck_assert(readahead_wait_until(ra, g_get_monotonic_time() + 10 * G_USEC_PER_SEC, TRUE));
	ck_assert_uint_eq(next.calls, 1);
	ck_assert_uint_eq(next.stats.files, 1);
	for (int i = 0; i < 200 && stuck > 0; i++) {
		g_usleep(10000);
		readahead_get_abandoned(ra, NULL, &stuck, NULL);
	}
	ck_assert_uint_eq(stuck, 0);
	/* The abandoned batch ended by itself; its done is still never called. */
	while (g_main_context_iteration(NULL, FALSE))
		;
	ck_assert_uint_eq(rec.calls, 0);
}
END_TEST

START_TEST(test_wait_delivers_done)
{
	DoneRecord rec = { 0 };
	guint timeout;

	ck_assert(readahead_start(ra, make_files("first", 20, 4096), OPTS(SORT_INODE, 2), on_done, &rec));
	readahead_wait(ra);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_ptr_eq(rec.thread, g_thread_self());
	ck_assert_uint_eq(rec.stats.files, 20);
	ck_assert_uint_eq(rec.stats.bytes, 20 * 4096);
	ck_assert(!readahead_busy(ra));

	/*
	 * The first batch's hand-back to the main loop must neither deliver
	 * the first batch again nor take over the second, which the loop
	 * delivers once.
	 */
	rec.loop = g_main_loop_new(NULL, FALSE);
	ck_assert(readahead_start(ra, make_files("second", 1, 4096), OPTS(SORT_NONE, 2), on_done, &rec));
	ck_assert(readahead_busy(ra));
	timeout = g_timeout_add_seconds(20, on_timeout, rec.loop);
	g_main_loop_run(rec.loop);
	g_source_remove(timeout);
	ck_assert_uint_eq(rec.calls, 2);
	ck_assert_uint_eq(rec.stats.files, 1);
	ck_assert_uint_eq(rec.stats.requests, 1);
	ck_assert(!readahead_busy(ra));
	while (g_main_context_iteration(NULL, FALSE))
		;
	ck_assert_uint_eq(rec.calls, 2);
	readahead_wait(ra);   /* nothing running: returns at once */
	ck_assert_uint_eq(rec.calls, 2);
	g_main_loop_unref(rec.loop);
}
END_TEST

/*
 * A batch told to stop while held reads nothing and reports everything
 * dropped; the next batch runs in full.
 */
START_TEST(test_supersede_held_batch)
{
	DoneRecord rec = { 0 };
	guint timeout;

	rec.loop = g_main_loop_new(NULL, FALSE);
	readahead_hold(ra, g_get_monotonic_time() + 60 * G_USEC_PER_SEC);
	ck_assert(readahead_start(ra, make_files("held", 5, 4096),
				  &(ReadaheadOptions){ .strategy = SORT_PATH, .maxprocs = 2,
						       .slice_bytes = 4096 },
				  on_done, &rec));
	readahead_supersede(ra);
	timeout = g_timeout_add_seconds(20, on_timeout, rec.loop);
	g_main_loop_run(rec.loop);
	g_source_remove(timeout);
	readahead_hold(ra, 0);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert(rec.stats.superseded);
	ck_assert_uint_eq(rec.stats.dropped, 5);
	/* Stopped before or at its first slice. */
	ck_assert_uint_le(rec.stats.slices, 1);
	ck_assert_uint_eq(rec.stats.bytes, 0);
	ck_assert_uint_eq(rec.stats.files, 0);
	ck_assert(!readahead_busy(ra));

	/* Not busy: nothing to stop, and the next batch is not stopped. */
	readahead_supersede(ra);
	ck_assert(readahead_start(ra, make_files("after", 2, 4096), OPTS(SORT_PATH, 2), on_done, &rec));
	readahead_wait(ra);
	ck_assert_uint_eq(rec.calls, 2);
	ck_assert(!rec.stats.superseded);
	ck_assert_uint_eq(rec.stats.dropped, 0);
	ck_assert_uint_eq(rec.stats.bytes, 2 * 4096);
	g_main_loop_unref(rec.loop);
}
END_TEST

/* Runs the main loop until rec's done is called (an urgent batch's), at most 20 s. */
static void
run_until_done(DoneRecord *rec)
{
	guint timeout;

	rec->loop = g_main_loop_new(NULL, FALSE);
	timeout = g_timeout_add_seconds(20, on_timeout, rec->loop);
	g_main_loop_run(rec->loop);
	g_source_remove(timeout);
	g_main_loop_unref(rec->loop);
	rec->loop = NULL;
	ck_assert_uint_eq(rec->calls, 1);
}

/*
 * An urgent batch reads only missing runs of at least
 * READAHEAD_URGENT_MIN_RUN_BYTES (64 pages of 4 KiB), never across
 * cached pages. 1024 pages; cached: [0,8) [40,41) [300,310) [1000,1024).
 * Missing: [8,40) = 32 pages, under 64: left to the program (131072
 * bytes); [41,300) = 259 and [310,1000) = 690 pages: read, (259 + 690) *
 * 4096 = 3887104 bytes; cached 8 + 1 + 10 + 24 = 43 pages = 176128
 * bytes. A background batch (and the urgent one before) merged the runs
 * across the small cached gaps into [8,1000), 992 pages = 4063232 bytes,
 * one request per hole of what the program had read.
 */
START_TEST(test_urgent_reads_long_runs_only)
{
	g_autofree char *f = in_dir("urgent-runs");
	const guint64 cached[] = { 0, 8, 40, 1, 300, 10, 1000, 24, 0, 0 };
	g_autoptr(GArray) reqs = order_requests_new();
	DoneRecord rec = { 0 };

	ck_assert_uint_eq(READAHEAD_URGENT_MIN_RUN_BYTES, 64 * 4096);
	write_sized(f, 4 * MIB);
	renew_reader(TRUE);
	cache_pages(f, cached);
	ck_assert_uint_eq(resident_pages(f, 0, 4 * MIB), 43);

	order_requests_add(reqs, f, 0, 4 * MIB);
	ck_assert(readahead_start_urgent(ra, g_steal_pointer(&reqs), OPTS_CHECK(SORT_PATH, 0),
					 on_done, &rec));
	run_until_done(&rec);
	ck_assert_uint_eq(rec.stats.bytes, 3887104);
	ck_assert_uint_eq(rec.stats.left_bytes, 131072);
	ck_assert_uint_eq(rec.stats.resident_bytes, 176128);
	ck_assert_uint_eq(rec.stats.failed, 0);
	/* Everything but the short run [8,40) is cached now. */
	ck_assert_uint_eq(wait_resident(f, 41 * 4096, 959 * 4096), 959);
	ck_assert_uint_eq(resident_pages(f, 8 * 4096, 32 * 4096), 0);

	/* A background batch reads the merged run whole. */
	cache_pages(f, cached);
	rec.stats = readahead_run_one_checked(f, 0, 4 * MIB);
	ck_assert_uint_eq(rec.stats.bytes, 4063232);
	ck_assert_uint_eq(rec.stats.left_bytes, 0);
}
END_TEST

/*
 * A range missing whole but shorter than READAHEAD_URGENT_MIN_RUN_BYTES
 * is left to the program: 100 KiB of a file not cached at all.
 */
START_TEST(test_urgent_short_range_left)
{
	g_autofree char *f = in_dir("urgent-short");
	g_autoptr(GArray) reqs = order_requests_new();
	DoneRecord rec = { 0 };

	write_sized(f, MIB);
	renew_reader(TRUE);
	drop_cache(f);
	ck_assert_uint_eq(resident_pages(f, 0, MIB), 0);
	order_requests_add(reqs, f, 0, 100 * 1024);
	ck_assert(readahead_start_urgent(ra, g_steal_pointer(&reqs), OPTS_CHECK(SORT_PATH, 0),
					 on_done, &rec));
	run_until_done(&rec);
	ck_assert_uint_eq(rec.stats.bytes, 0);
	ck_assert_uint_eq(rec.stats.syscalls, 0);
	ck_assert_uint_eq(rec.stats.left_bytes, 100 * 1024);
	ck_assert_uint_eq(rec.stats.resident_bytes, 0);
	ck_assert_uint_eq(resident_pages(f, 0, MIB), 0);
}
END_TEST

/*
 * An urgent batch is not held: with every read held for a minute, the
 * background batch waits while the urgent one reads its 3 files and
 * delivers its done; the background batch reads its 5 once the hold ends.
 */
START_TEST(test_urgent_not_held)
{
	DoneRecord bg = { 0 };
	DoneRecord urgent = { 0 };
	guint timeout;

	urgent.loop = g_main_loop_new(NULL, FALSE);
	readahead_hold(ra, g_get_monotonic_time() + 60 * G_USEC_PER_SEC);
	ck_assert(readahead_start(ra, make_files("background", 5, 4096), OPTS(SORT_PATH, 2),
				  on_done, &bg));
	ck_assert(readahead_start_urgent(ra, make_files("urgent", 3, 4096), OPTS(SORT_BLOCK, 2),
					 on_done, &urgent));
	timeout = g_timeout_add_seconds(20, on_timeout, urgent.loop);
	g_main_loop_run(urgent.loop);
	g_source_remove(timeout);
	ck_assert_uint_eq(urgent.calls, 1);
	ck_assert_uint_eq(urgent.stats.files, 3);
	ck_assert_uint_eq(urgent.stats.bytes, 3 * 4096);
	ck_assert(!urgent.stats.superseded);
	/* The background batch is still held. */
	ck_assert_uint_eq(bg.calls, 0);
	ck_assert(readahead_busy(ra));

	readahead_hold(ra, 0);
	readahead_wait(ra);
	ck_assert_uint_eq(bg.calls, 1);
	ck_assert_uint_eq(bg.stats.bytes, 5 * 4096);
	ck_assert_uint_eq(urgent.calls, 1);
	g_main_loop_unref(urgent.loop);
}
END_TEST

/* The FUSE file system of tests/helpers that stops answering on SIGUSR1. */
static char *
hangfs_path(void)
{
	const char *top = g_getenv("top_builddir");

	return g_build_filename(top ? top : ".", "tests", "helpers", "hangfs", NULL);
}

/*
 * An urgent thread blocked in a read of a file system that stopped
 * answering does not hold the exit: the wait returns at its deadline
 * with the thread abandoned (done never called), the next urgent batch
 * gets a thread of its own, and the stuck one ends by itself once the
 * file system answers again.
 */
START_TEST(test_urgent_stuck_is_abandoned)
{
	g_autofree char *hangfs = hangfs_path();
	g_autofree char *src = in_dir("src");
	g_autofree char *mnt = in_dir("hang");
	g_autofree char *file = g_build_filename(src, "lib.so", NULL);
	g_autofree char *served = g_build_filename(mnt, "lib.so", NULL);
	/* auto_unmount: a case that fails leaves no mount once hangfs ends. */
	const char *argv[] = { hangfs, "--release-after", "30", "--lifetime", "60", src, mnt,
			       "-o", "auto_unmount", NULL };
	g_autoptr(GError) error = NULL;
	DoneRecord rec = { 0 };
	DoneRecord next = { 0 };
	GArray *reqs = order_requests_new();
	guint64 abandoned = 0;
	guint stuck = 0;
	gint64 started;
	guint timeout;
	GPid pid;
	int i;

	ck_assert_int_eq(g_mkdir(src, 0755), 0);
	ck_assert_int_eq(g_mkdir(mnt, 0755), 0);
	write_sized(file, 65536);
	ck_assert_msg(g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
				    &error), "hangfs: %s", error ? error->message : "?");
	for (i = 0; i < 100 && !g_file_test(served, G_FILE_TEST_IS_REGULAR); i++)
		g_usleep(50000);
	ck_assert_msg(i < 100, "hangfs did not mount %s", mnt);
	/* From now on every request to the mount waits. */
	ck_assert_int_eq(kill(pid, SIGUSR1), 0);
	g_usleep(200000);

	order_requests_add(reqs, served, 0, 65536);
	ck_assert(readahead_start_urgent(ra, reqs, OPTS(SORT_NONE, 2), on_done, &rec));
	/* Into its open before the wait tells it to start no new one. */
	g_usleep(300000);
	started = g_get_monotonic_time();
	ck_assert(!readahead_wait_until(ra, started + 300000, TRUE));
	ck_assert_int_lt(g_get_monotonic_time() - started, G_USEC_PER_SEC);
	ck_assert_uint_eq(rec.calls, 0);
	readahead_get_abandoned(ra, &abandoned, &stuck, NULL);
	ck_assert_uint_eq(abandoned, 1);
	ck_assert_uint_eq(stuck, 1);

	/* The next urgent batch starts a new thread, which reads its 2 files. */
	next.loop = g_main_loop_new(NULL, FALSE);
	ck_assert(readahead_start_urgent(ra, make_files("after", 2, 4096), OPTS(SORT_NONE, 2),
					 on_done, &next));
	timeout = g_timeout_add_seconds(20, on_timeout, next.loop);
	g_main_loop_run(next.loop);
	g_source_remove(timeout);
	g_main_loop_unref(next.loop);
	ck_assert_uint_eq(next.calls, 1);
	ck_assert_uint_eq(next.stats.files, 2);
	ck_assert_uint_eq(next.stats.bytes, 2 * 4096);

	/* The mount answers again: the abandoned thread ends and frees its job. */
	ck_assert_int_eq(kill(pid, SIGUSR2), 0);
	for (i = 0; i < 500 && stuck > 0; i++) {
		g_usleep(10000);
		readahead_get_abandoned(ra, NULL, &stuck, NULL);
	}
	ck_assert_uint_eq(stuck, 0);
	while (g_main_context_iteration(NULL, FALSE))
		;
	ck_assert_uint_eq(rec.calls, 0);

	(void)umount2(mnt, MNT_DETACH);
	(void)kill(pid, SIGTERM);
	(void)waitpid(pid, NULL, 0);
	g_spawn_close_pid(pid);
}
END_TEST

/*
 * The cap on blocked threads: READAHEAD_MAX_STUCK urgent batches, each
 * blocked in an open of a file system that stopped answering and
 * abandoned at a 300 ms wait, leave that many threads blocked; the next
 * urgent and background batches are refused (FALSE, done never called,
 * counted) and start no thread. Once the mount answers, the threads end
 * and a batch starts again.
 */
START_TEST(test_stuck_cap)
{
	g_autofree char *src = in_dir("src");
	g_autofree char *mnt = in_dir("hang");
	g_autofree char *file = g_build_filename(src, "lib.so", NULL);
	g_autofree char *served = g_build_filename(mnt, "lib.so", NULL);
	DoneRecord rec = { 0 };
	DoneRecord after = { 0 };
	guint64 abandoned = 0, refused = 0;
	guint stuck = 0, timeout;
	GPid pid;
	int i;

	ck_assert_int_eq(g_mkdir(src, 0755), 0);
	ck_assert_int_eq(g_mkdir(mnt, 0755), 0);
	write_sized(file, 65536);
	pid = tu_hangfs_start(src, mnt, 30);
	ck_assert_int_eq(kill(pid, SIGUSR1), 0);
	g_usleep(200000);

	for (i = 0; i < READAHEAD_MAX_STUCK; i++) {
		GArray *reqs = order_requests_new();

		order_requests_add(reqs, served, 0, 65536);
		ck_assert(readahead_start_urgent(ra, reqs, OPTS(SORT_NONE, 2), on_done, &rec));
		g_usleep(100000);
		ck_assert(!readahead_wait_until(ra, g_get_monotonic_time() + 300000, TRUE));
	}
	readahead_get_abandoned(ra, &abandoned, &stuck, &refused);
	ck_assert_uint_eq(abandoned, READAHEAD_MAX_STUCK);
	ck_assert_uint_eq(stuck, READAHEAD_MAX_STUCK);
	ck_assert_uint_eq(refused, 0);

	ck_assert(!readahead_start_urgent(ra, make_files("urgent", 1, 4096), OPTS(SORT_NONE, 2),
					  on_done, &after));
	ck_assert(!readahead_start(ra, make_files("bg", 1, 4096), OPTS(SORT_NONE, 2), on_done,
				   &after));
	ck_assert(!readahead_busy(ra));
	readahead_get_abandoned(ra, &abandoned, &stuck, &refused);
	ck_assert_uint_eq(refused, 2);
	ck_assert_uint_eq(stuck, READAHEAD_MAX_STUCK);

	/* The mount answers again: the threads end, and a batch starts. */
	ck_assert_int_eq(kill(pid, SIGUSR2), 0);
	for (i = 0; i < 500 && stuck > 0; i++) {
		g_usleep(10000);
		readahead_get_abandoned(ra, NULL, &stuck, NULL);
	}
	ck_assert_uint_eq(stuck, 0);
	after.loop = g_main_loop_new(NULL, FALSE);
	ck_assert(readahead_start(ra, make_files("again", 2, 4096), OPTS(SORT_NONE, 2), on_done,
				  &after));
	timeout = g_timeout_add_seconds(20, on_timeout, after.loop);
	g_main_loop_run(after.loop);
	g_source_remove(timeout);
	g_main_loop_unref(after.loop);
	ck_assert_uint_eq(after.calls, 1);
	ck_assert_uint_eq(after.stats.files, 2);
	ck_assert_uint_eq(rec.calls, 0);
	tu_hangfs_stop(mnt, pid);
}
END_TEST

/* Whether FIEMAP locates a freshly written and synced file in dir. */
static gboolean
fiemap_works(const char *in)
{
	g_autofree char *path = g_build_filename(in, "check_readahead-fiemap-XXXXXX", NULL);
	g_autofree guint8 *buf = g_malloc0(65536);
	guint64 block;
	gboolean ok;
	int fd = g_mkstemp(path);

	if (fd < 0)
		return FALSE;
	ok = write(fd, buf, 65536) == 65536 && fsync(fd) == 0;
	(void)close(fd);
	ok = ok && physical(path, 0, &block);
	(void)unlink(path);
	return ok;
}

static Suite *
readahead_suite(void)
{
	Suite *s = suite_create("readahead");
	g_autofree char *disk = disk_dir();
	const char *no_disk = disk ? NULL : "no file system here can evict pages (all tmpfs)";
	const char *no_4k = sysconf(_SC_PAGESIZE) == 4096 ? NULL : "the pages are not 4 KiB";
	const char *no_disk_4k = no_disk ? no_disk : no_4k;
	const char *no_fiemap = no_disk ? no_disk :
				fiemap_works(disk) ? NULL : "FIEMAP does not locate files here";
	const char *no_shm = g_file_test("/dev/shm", G_FILE_TEST_IS_DIR) && is_memory_fs("/dev/shm")
			     ? NULL : "/dev/shm is not a tmpfs";
	TCase *tc;

	tc = tcase_create("sort");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sort_inode);
	TU_ADD_TEST_UNLESS(tc, test_sort_block, no_fiemap);
	suite_add_tcase(s, tc);

	tc = tcase_create("read");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup, teardown);
	TU_ADD_TEST_UNLESS(tc, test_run_fills_cache_in_chunks, no_disk);
	TU_ADD_TEST_UNLESS(tc, test_run_reads_only_the_range, no_disk);
	tcase_add_test(tc, test_run_checks_identity);
	tcase_add_test(tc, test_run_truncated_file_is_clamped);
	tcase_add_test(tc, test_run_empty_batch);
	tcase_add_test(tc, test_run_slices);
	tcase_add_test(tc, test_hold_delays_reads);
	tcase_add_test(tc, test_run_fifo_is_skipped);
	tcase_add_test(tc, test_run_messages_limited);
	tcase_add_test(tc, test_run_symlinks_are_skipped);
	tcase_add_test(tc, test_run_special_files_are_skipped);
	tcase_add_test(tc, test_run_missing_is_skipped);
	tcase_add_test(tc, test_run_failures_are_counted_and_capped);
	tcase_add_test(tc, test_run_parallel_mixed);
	TU_ADD_TEST_UNLESS(tc, test_run_tmpfs_falls_back, no_shm);
	suite_add_tcase(s, tc);

	/*
	 * Tagged "kernel": these measure the page cache, cachestat(2) and the
	 * threads' I/O class, which valgrind emulates differently (it knows
	 * no cachestat), and they expect a fresh process per test (CK_FORK)
	 * for the worker threads. The valgrind run in CI excludes the tag;
	 * every other run, ASan included, has them.
	 */
	tc = tcase_create("residency");
	tcase_set_tags(tc, "kernel");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_residency_cached_range_is_skipped);
	/* Its last part needs the residency check to see a cached file as cached. */
	tcase_add_test(tc, test_run_warms_directories);
	/* Loop 0 reads with cachestat, 1 with mincore alone. */
	if (tu_can_run("test_residency_cached_batch_starts_no_thread:0",
		       have_cachestat() ? NULL : "no cachestat(2) in this kernel"))
		tcase_add_loop_test(tc, test_residency_cached_batch_starts_no_thread, 0, 1);
	tcase_add_loop_test(tc, test_residency_cached_batch_starts_no_thread, 1, 2);
	tcase_add_test(tc, test_residency_file_opened_once);
	TU_ADD_TEST_UNLESS(tc, test_residency_file_to_read_opened_twice, no_disk);
	TU_ADD_TEST_UNLESS(tc, test_residency_evicted_is_read_whole, no_disk);
	TU_ADD_TEST_UNLESS(tc, test_residency_near_ranges_read_as_one, no_disk);
	tcase_add_test(tc, test_residency_off_requests_everything);
	if (tu_can_run("test_residency_trusted_probe",
		       no_disk ? no_disk : have_cachestat() ? NULL : "no cachestat(2) in this kernel"))
		tcase_add_test(tc, test_residency_trusted_probe);
	if (tu_can_run("test_residency_trusted_unopened",
		       no_disk ? no_disk : have_cachestat() ? NULL : "no cachestat(2) in this kernel"))
		tcase_add_test(tc, test_residency_trusted_unopened);
	TU_ADD_TEST_UNLESS(tc, test_residency_half_read, no_disk_4k);
	TU_ADD_TEST_UNLESS(tc, test_residency_runs_and_gaps, no_disk_4k);
	TU_ADD_TEST_UNLESS(tc, test_urgent_reads_long_runs_only, no_disk_4k);
	TU_ADD_TEST_UNLESS(tc, test_urgent_short_range_left, no_disk_4k);
	TU_ADD_TEST_UNLESS(tc, test_residency_unaligned_range, no_disk_4k);
	TU_ADD_TEST_UNLESS(tc, test_residency_windows, no_disk_4k);
	TU_ADD_TEST_UNLESS(tc, test_residency_untrusted_mincore,
		    no_disk_4k ? no_disk_4k : tu_is_root() ? NULL : "needs root (chown, capabilities)");
#if defined(__x86_64__)
	TU_ADD_TEST_UNLESS(tc, test_residency_filtered_calls, no_disk_4k);
#else
	(void)tu_can_run("test_residency_filtered_calls", "the seccomp filter is written for x86-64");
#endif
	tcase_add_test(tc, test_residency_with_hostile_files);
	suite_add_tcase(s, tc);

	tc = tcase_create("io-class");
	tcase_set_tags(tc, "kernel");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_idle_class_reaches_workers);
	tcase_add_test(tc, test_not_idle_is_reported);
	suite_add_tcase(s, tc);

	tc = tcase_create("batch");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_start_maxprocs0);
	tcase_add_test(tc, test_start_background);
	tcase_add_test(tc, test_wait_delivers_done);
	tcase_add_test(tc, test_wait_until_abandons);
	tcase_add_test(tc, test_supersede_held_batch);
	tcase_add_test(tc, test_urgent_not_held);
	suite_add_tcase(s, tc);

	/*
	 * Tagged "kernel": it mounts a FUSE file system and times a thread
	 * into a blocked open, which valgrind slows past the case's sleeps.
	 */
	tc = tcase_create("hung-mount");
	tcase_set_tags(tc, "kernel");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup, teardown);
	TU_ADD_TEST_UNLESS(tc, test_urgent_stuck_is_abandoned, tu_why_no_hangfs());
	TU_ADD_TEST_UNLESS(tc, test_stuck_cap, tu_why_no_hangfs());
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(readahead_suite());
}
