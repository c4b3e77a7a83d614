/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/readahead.c: sort orders on hand-made batches, merging
 * (including the range 0.6.4 shrank), hostile files in place of learned
 * ones (FIFO, device symlink, directory, missing, truncated, bad names),
 * the page cache really being filled in chunks (checked with mincore),
 * and the background batch handing its result back to the main loop.
 *
 * Files live in a directory under the current directory (the build tree)
 * rather than $TMPDIR, because a tmpfs keeps every page resident and
 * has no FIEMAP, which would make the page cache and block tests prove
 * nothing. If no disk-backed directory can be found those assertions are
 * skipped with a note.
 */
#include "config.h"

#include "testutil.h"
#include "readahead.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <unistd.h>

#ifdef HAVE_LINUX_FIEMAP_H
#include <linux/fiemap.h>
#include <linux/fs.h>
#endif

#define MIB (G_GUINT64_CONSTANT(1024) * 1024)

static char *base;         /* this test case's directory */
static char *dir;          /* this test's directory, inside base */
static gboolean on_disk;   /* dir is not on tmpfs/ramfs */
static long page_size;

/* ---- fixture and helpers ---- */

static gboolean
is_memory_fs(const char *path)
{
	struct statfs sfs;

	if (statfs(path, &sfs) != 0)
		return TRUE;
	return sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC;
}

/*
 * Once per test case, in Check's parent process: a directory on disk to
 * hold every test's own directory. Removing it from the parent also
 * cleans up after failed tests, whose forked process ends with _exit()
 * and never runs the per-test teardown.
 */
static void
setup_base(void)
{
	g_autofree char *cwd = g_get_current_dir();
	const char *candidates[] = { cwd, g_get_tmp_dir(), "/var/tmp" };

	page_size = sysconf(_SC_PAGESIZE);
	on_disk = FALSE;
	for (guint i = 0; i < G_N_ELEMENTS(candidates); i++) {
		if (is_memory_fs(candidates[i]))
			continue;
		base = g_build_filename(candidates[i], "check_readahead-XXXXXX", NULL);
		if (g_mkdtemp(base)) {
			on_disk = TRUE;
			return;
		}
		g_clear_pointer(&base, g_free);
	}
	base = g_build_filename(cwd, "check_readahead-XXXXXX", NULL);
	ck_assert_ptr_nonnull(g_mkdtemp(base));
	fprintf(stderr, "no disk-backed directory: page cache and block checks are skipped\n");
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
}

static void
teardown(void)
{
	tu_rm_rf(dir);
	g_clear_pointer(&dir, g_free);
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

	ck_assert_int_ge(fd, 0);
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
	const ReadaheadRequest *r;

	ck_assert_uint_lt(i, reqs->len);
	r = &g_array_index(reqs, ReadaheadRequest, i);
	ck_assert_str_eq(r->path, path);
	ck_assert_uint_eq(r->offset, offset);
	ck_assert_uint_eq(r->length, length);
}

static ReadaheadStats
run_one(const char *path, guint64 offset, guint64 length, int maxprocs)
{
	g_autoptr(GArray) reqs = readahead_requests_new();

	readahead_requests_add(reqs, path, offset, length);
	return readahead_run(reqs, SORT_BLOCK, maxprocs);
}

/* ---- requests ---- */

START_TEST(test_requests_add_copies)
{
	g_autoptr(GArray) reqs = readahead_requests_new();
	char name[] = "/usr/lib/libx.so";

	readahead_requests_add(reqs, name, 4096, 8192);
	name[1] = 'X';
	ck_assert_uint_eq(reqs->len, 1);
	assert_req(reqs, 0, "/usr/lib/libx.so", 4096, 8192);
}
END_TEST

/* ---- sorting ---- */

START_TEST(test_sort_path)
{
	g_autoptr(GArray) reqs = readahead_requests_new();

	readahead_requests_add(reqs, "/b", 0, 10);
	readahead_requests_add(reqs, "/a", 5, 1);
	readahead_requests_add(reqs, "/a", 0, 10);
	readahead_requests_add(reqs, "/a/b", 0, 1);
	readahead_requests_add(reqs, "/a", 0, 20);
	readahead_requests_add(reqs, "/", 7, 7);
	/* Offsets 2^32 apart: a difference truncated to int would call them equal or reversed. */
	readahead_requests_add(reqs, "/c", G_GUINT64_CONSTANT(0x100000000), 1);
	readahead_requests_add(reqs, "/c", 1, 1);
	/* Lengths differing by 2^32: (int)(1 - 0x100000001) == 0 would tie them. */
	readahead_requests_add(reqs, "/d", 0, 1);
	readahead_requests_add(reqs, "/d", 0, G_GUINT64_CONSTANT(0x100000001));

	readahead_sort(reqs, SORT_PATH);
	/* strcmp: "/" < "/a" < "/a/b" < "/b" < "/c" < "/d"; offset up, length down. */
	ck_assert_uint_eq(reqs->len, 10);
	assert_req(reqs, 0, "/", 7, 7);
	assert_req(reqs, 1, "/a", 0, 20);
	assert_req(reqs, 2, "/a", 0, 10);
	assert_req(reqs, 3, "/a", 5, 1);
	assert_req(reqs, 4, "/a/b", 0, 1);
	assert_req(reqs, 5, "/b", 0, 10);
	assert_req(reqs, 6, "/c", 1, 1);
	assert_req(reqs, 7, "/c", G_GUINT64_CONSTANT(0x100000000), 1);
	assert_req(reqs, 8, "/d", 0, G_GUINT64_CONSTANT(0x100000001));
	assert_req(reqs, 9, "/d", 0, 1);
}
END_TEST

START_TEST(test_sort_none_keeps_order)
{
	g_autoptr(GArray) reqs = readahead_requests_new();

	readahead_requests_add(reqs, "/z", 9, 1);
	readahead_requests_add(reqs, "/a", 5, 1);
	readahead_requests_add(reqs, "/z", 0, 1);
	readahead_sort(reqs, SORT_NONE);
	assert_req(reqs, 0, "/z", 9, 1);
	assert_req(reqs, 1, "/a", 5, 1);
	assert_req(reqs, 2, "/z", 0, 1);
}
END_TEST

START_TEST(test_sort_unknown_strategy_is_block)
{
	g_autoptr(GArray) reqs = readahead_requests_new();
	g_autofree char *b = in_dir("b-missing");
	g_autofree char *a = in_dir("a-missing");

	/* Neither can be examined, so block order degenerates to path order. */
	readahead_requests_add(reqs, b, 0, 1);
	readahead_requests_add(reqs, a, 0, 1);
	readahead_sort(reqs, 99);
	assert_req(reqs, 0, a, 0, 1);
	assert_req(reqs, 1, b, 0, 1);
}
END_TEST

START_TEST(test_sort_inode)
{
	g_autoptr(GArray) reqs = readahead_requests_new();
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

	readahead_requests_add(reqs, a, 0, 100);
	readahead_requests_add(reqs, gone, 0, 100);
	readahead_requests_add(reqs, z, 4096, 4096);
	readahead_requests_add(reqs, fifo, 0, 100);
	readahead_requests_add(reqs, m, 0, 100);
	readahead_requests_add(reqs, z, 0, 4096);

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

	readahead_sort(reqs, SORT_INODE);
	ck_assert_uint_eq(reqs->len, 6);
	for (guint i = 0, k = 0; k < 3; k++) {
		gboolean is_z = by_inode[k] == z;

		/* z's two ranges stay together, offset 0 first. */
		assert_req(reqs, i, by_inode[k], 0, is_z ? 4096 : 100);
		ck_assert_uint_eq(g_array_index(reqs, ReadaheadRequest, i).inode, (guint64)st[k].st_ino);
		ck_assert_uint_eq(g_array_index(reqs, ReadaheadRequest, i).dev, st[k].st_dev);
		ck_assert_uint_eq(g_array_index(reqs, ReadaheadRequest, i).block, (guint64)st[k].st_ino);
		i++;
		if (is_z) {
			assert_req(reqs, i, z, 4096, 4096);
			i++;
		}
	}
	/* Not examinable (missing, not regular) last, by path: ".../fifo" < ".../gone". */
	assert_req(reqs, 4, fifo, 0, 100);
	assert_req(reqs, 5, gone, 0, 100);
	ck_assert_uint_eq(g_array_index(reqs, ReadaheadRequest, 5).inode, 0);
}
END_TEST

START_TEST(test_sort_block)
{
	g_autoptr(GArray) reqs = readahead_requests_new();
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

	readahead_requests_add(reqs, hole, 0, 4096);
	readahead_requests_add(reqs, gone, 0, 4096);
	readahead_requests_add(reqs, a, 8192, 4096);
	readahead_requests_add(reqs, z, 0, 4096);
	readahead_sort(reqs, SORT_BLOCK);
	ck_assert_uint_eq(reqs->len, 4);

	if (!on_disk || !physical(z, 0, &pz) || !physical(a, 0, &pa) || !physical(a, 8192, &pa8k)) {
		fprintf(stderr, "FIEMAP does not work here: block order not checked\n");
		assert_req(reqs, 3, gone, 0, 4096);
		return;
	}
	ck_assert_uint_ne(pz, pa);
	/* a's range starts 8 KiB into a's single extent. */
	ck_assert_uint_eq(pa8k, pa + 8192);
	low = pz < pa ? z : a;
	high = pz < pa ? a : z;
	assert_req(reqs, 0, low, low == a ? 8192 : 0, 4096);
	assert_req(reqs, 1, high, high == a ? 8192 : 0, 4096);
	ck_assert_uint_eq(g_array_index(reqs, ReadaheadRequest, low == a ? 0 : 1).block, pa8k);
	ck_assert_uint_eq(g_array_index(reqs, ReadaheadRequest, low == z ? 0 : 1).block, pz);
	assert_req(reqs, 2, hole, 0, 4096);
	ck_assert_uint_eq(g_array_index(reqs, ReadaheadRequest, 2).block,
			  (guint64)stat_of(hole).st_ino);
	assert_req(reqs, 3, gone, 0, 4096);
}
END_TEST

/* ---- merging ---- */

START_TEST(test_merge_cases)
{
	g_autoptr(GArray) reqs = readahead_requests_new();

	readahead_requests_add(reqs, "/f", 0, 100);    /* overlapping: [0,100)+[50,150) */
	readahead_requests_add(reqs, "/f", 50, 100);
	readahead_requests_add(reqs, "/f", 150, 50);   /* adjacent: ends at 200 */
	readahead_requests_add(reqs, "/f", 201, 1);    /* one byte gap: separate */
	readahead_requests_add(reqs, "/g", 0, 100);    /* another file, same range */
	readahead_requests_add(reqs, "/g", 0, 100);    /* duplicate */
	readahead_requests_add(reqs, "/h", 0, 100);    /* contained: the 0.6.4 shrink */
	readahead_requests_add(reqs, "/h", 10, 10);
	readahead_requests_add(reqs, "/i", 100, 0);    /* empty range at 100, then [100,110) */
	readahead_requests_add(reqs, "/i", 100, 10);

	readahead_merge(reqs);
	ck_assert_uint_eq(reqs->len, 5);
	assert_req(reqs, 0, "/f", 0, 200);   /* 0..100, ..150, ..200 */
	assert_req(reqs, 1, "/f", 201, 1);
	assert_req(reqs, 2, "/g", 0, 100);
	assert_req(reqs, 3, "/h", 0, 100);   /* 0.6.4 made this [0,20) */
	assert_req(reqs, 4, "/i", 100, 10);
}
END_TEST

START_TEST(test_merge_different_files)
{
	g_autoptr(GArray) reqs = readahead_requests_new();

	readahead_requests_add(reqs, "/f", 0, 100);
	readahead_requests_add(reqs, "/g", 50, 100);
	readahead_requests_add(reqs, "/f", 100, 100);  /* adjacent to /f but not next to it */
	readahead_merge(reqs);
	ck_assert_uint_eq(reqs->len, 3);
	assert_req(reqs, 0, "/f", 0, 100);
	assert_req(reqs, 1, "/g", 50, 100);
	assert_req(reqs, 2, "/f", 100, 100);
}
END_TEST

START_TEST(test_merge_unsorted)
{
	g_autoptr(GArray) reqs = readahead_requests_new();

	/* SORT_NONE: neighbours still merge, even when the second starts earlier. */
	readahead_requests_add(reqs, "/f", 50, 50);
	readahead_requests_add(reqs, "/f", 0, 60);     /* union [0,100) */
	readahead_requests_add(reqs, "/g", 0, 1);
	readahead_requests_add(reqs, "/f", 0, 10);     /* not adjacent to the first: stays */
	readahead_requests_add(reqs, "/f", 300, 10);   /* disjoint from [0,10): stays */
	readahead_sort(reqs, SORT_NONE);
	readahead_merge(reqs);
	ck_assert_uint_eq(reqs->len, 4);
	assert_req(reqs, 0, "/f", 0, 100);
	assert_req(reqs, 1, "/g", 0, 1);
	assert_req(reqs, 2, "/f", 0, 10);
	assert_req(reqs, 3, "/f", 300, 10);
}
END_TEST

START_TEST(test_merge_edges)
{
	g_autoptr(GArray) empty = readahead_requests_new();
	g_autoptr(GArray) one = readahead_requests_new();
	g_autoptr(GArray) huge = readahead_requests_new();

	readahead_merge(empty);
	ck_assert_uint_eq(empty->len, 0);
	readahead_requests_add(one, "/f", 5, 5);
	readahead_merge(one);
	assert_req(one, 0, "/f", 5, 5);

	/* Ends past 2^64 saturate: [MAX-10, MAX) and [MAX-5, MAX) give [MAX-10, MAX). */
	readahead_requests_add(huge, "/f", G_MAXUINT64 - 10, 100);
	readahead_requests_add(huge, "/f", G_MAXUINT64 - 5, G_MAXUINT64);
	readahead_merge(huge);
	ck_assert_uint_eq(huge->len, 1);
	assert_req(huge, 0, "/f", G_MAXUINT64 - 10, 10);
}
END_TEST

/* ---- reading real files ---- */

START_TEST(test_run_fills_cache_in_chunks)
{
	g_autofree char *f = in_dir("big");
	const guint64 size = 24 * MIB;
	ReadaheadStats stats;

	if (!on_disk)
		return;
	write_sized(f, size);
	drop_cache(f);
	ck_assert_uint_le(resident_pages(f, 0, size), 16);

	stats = run_one(f, 0, size, 0);
	ck_assert_uint_eq(stats.requests, 1);
	ck_assert_uint_eq(stats.files, 1);
	ck_assert_uint_eq(stats.failed, 0);
	ck_assert_uint_eq(stats.skipped, 0);
	ck_assert_uint_eq(stats.bytes, size);
	/* Chunks are at most 8 MiB: 24 MiB needs at least three calls. */
	ck_assert_uint_ge(stats.syscalls, 3);
	/*
	 * One call would stop at the device's window (8 MiB here); every
	 * one of the 6144 pages being resident proves the chunks.
	 */
	ck_assert_uint_eq(wait_resident(f, 0, size), size / (guint64)page_size);
}
END_TEST

START_TEST(test_run_reads_only_the_range)
{
	g_autofree char *f = in_dir("big");
	const guint64 size = 24 * MIB;
	ReadaheadStats stats;

	if (!on_disk)
		return;
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
	g_autoptr(GArray) reqs = readahead_requests_new();
	g_autofree char *f = in_dir("short");
	ReadaheadStats stats;

	write_sized(f, 10000);
	readahead_requests_add(reqs, f, 0, MIB);          /* clamped to 10000 bytes */
	readahead_requests_add(reqs, f, 2 * MIB, 4096);   /* wholly past the end */
	stats = readahead_run(reqs, SORT_PATH, 0);
	ck_assert_uint_eq(stats.requests, 2);
	ck_assert_uint_eq(stats.files, 1);
	ck_assert_uint_eq(stats.bytes, 10000);
	ck_assert_uint_eq(stats.skipped, 1);
	ck_assert_uint_eq(stats.failed, 0);
}
END_TEST

START_TEST(test_run_empty_batch)
{
	g_autoptr(GArray) reqs = readahead_requests_new();
	ReadaheadStats stats = readahead_run(reqs, SORT_BLOCK, 4);

	ck_assert_uint_eq(stats.requests, 0);
	ck_assert_uint_eq(stats.files, 0);
	ck_assert_uint_eq(stats.syscalls, 0);
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
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	assert_skipped("/dev/null");
	assert_skipped(dir);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	if (strlen(sock) < sizeof(addr.sun_path)) {
		g_strlcpy(addr.sun_path, sock, sizeof(addr.sun_path));
		ck_assert_int_eq(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
		assert_skipped(sock);
	}
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
	g_autoptr(GArray) reqs = readahead_requests_new();
	g_autofree char *longname = g_strnfill(300, 'x');
	ReadaheadStats stats;

	g_log_set_handler("preload", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_INFO, count_messages, NULL);
	/* 15 names longer than NAME_MAX: ENAMETOOLONG is a failure, not a stale file. */
	for (int i = 0; i < 15; i++) {
		g_autofree char *name = g_strdup_printf("%s%02d", longname, i);
		g_autofree char *path = in_dir(name);

		readahead_requests_add(reqs, path, 0, 4096);
	}
	/* 15 FIFOs: skipped, each worth an info. */
	for (int i = 0; i < 15; i++) {
		g_autofree char *name = g_strdup_printf("fifo%02d", i);
		g_autofree char *path = in_dir(name);

		ck_assert_int_eq(mkfifo(path, 0600), 0);
		readahead_requests_add(reqs, path, 0, 4096);
	}
	stats = readahead_run(reqs, SORT_PATH, 0);
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
	g_autoptr(GArray) reqs = readahead_requests_new();
	ReadaheadStats stats;

	/* 40 files of i*1000+1 bytes: sum = 1000 * (0+...+39) + 40 = 780040. */
	for (int i = 0; i < 40; i++) {
		g_autofree char *name = g_strdup_printf("f%02d", i);
		g_autofree char *path = in_dir(name);

		write_sized(path, (guint64)i * 1000 + 1);
		readahead_requests_add(reqs, path, 0, MIB);
	}
	for (int i = 0; i < 3; i++) {
		g_autofree char *name = g_strdup_printf("gone%d", i);
		g_autofree char *path = in_dir(name);

		readahead_requests_add(reqs, path, 0, MIB);
	}
	for (int i = 0; i < 2; i++) {
		g_autofree char *name = g_strdup_printf("fifo%d", i);
		g_autofree char *path = in_dir(name);

		ck_assert_int_eq(mkfifo(path, 0600), 0);
		readahead_requests_add(reqs, path, 0, MIB);
	}
	stats = readahead_run(reqs, SORT_BLOCK, 4);
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
	if (!g_file_test("/dev/shm", G_FILE_TEST_IS_DIR) || !is_memory_fs("/dev/shm"))
		return;
	shmdir = g_strdup("/dev/shm/check_readahead-XXXXXX");
	if (!g_mkdtemp(shmdir))
		return;
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
	rec->busy_in_done = readahead_busy();
	rec->thread = g_thread_self();
	if (rec->restart) {
		rec->restart = FALSE;
		rec->restart_result = readahead_start(readahead_requests_new(), SORT_NONE, 0,
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
	GArray *reqs = readahead_requests_new();

	for (guint i = 0; i < n; i++) {
		g_autofree char *name = g_strdup_printf("%s%03u", prefix, i);
		g_autofree char *path = in_dir(name);

		write_sized(path, size);
		readahead_requests_add(reqs, path, 0, size);
	}
	return reqs;
}

START_TEST(test_start_sync)
{
	DoneRecord rec = { .restart = TRUE };
	GArray *reqs = make_files("sync", 3, 5000);

	ck_assert(readahead_start(reqs, SORT_PATH, 0, on_done, &rec));
	/* done ran before the return, in this thread, with busy already cleared. */
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_ptr_eq(rec.thread, g_thread_self());
	ck_assert(!rec.busy_in_done);
	ck_assert(rec.restart_result);
	ck_assert_uint_eq(rec.stats.requests, 3);
	ck_assert_uint_eq(rec.stats.files, 3);
	ck_assert_uint_eq(rec.stats.bytes, 15000);
	ck_assert(!readahead_busy());
}
END_TEST

START_TEST(test_start_background)
{
	DoneRecord rec = { 0 };
	DoneRecord second = { 0 };
	GArray *reqs = make_files("bg", 60, 256 * 1024);
	guint timeout;

	rec.loop = g_main_loop_new(NULL, FALSE);
	ck_assert(readahead_start(reqs, SORT_BLOCK, 4, on_done, &rec));
	/* Busy until done has been delivered by the main loop, however fast the disk. */
	ck_assert(readahead_busy());
	ck_assert_uint_eq(rec.calls, 0);
	/* A second batch is refused (and its requests freed). */
	ck_assert(!readahead_start(make_files("refused", 2, 100), SORT_NONE, 4, on_done, &second));
	ck_assert(!readahead_start(readahead_requests_new(), SORT_NONE, 0, on_done, &second));
	ck_assert_uint_eq(second.calls, 0);

	timeout = g_timeout_add_seconds(20, on_timeout, rec.loop);
	g_main_loop_run(rec.loop);
	g_source_remove(timeout);
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_ptr_eq(rec.thread, g_thread_self());
	ck_assert(!rec.busy_in_done);
	ck_assert(!readahead_busy());
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

START_TEST(test_wait_delivers_done)
{
	DoneRecord rec = { 0 };
	guint timeout;

	ck_assert(readahead_start(make_files("first", 20, 4096), SORT_INODE, 2, on_done, &rec));
	readahead_wait();
	ck_assert_uint_eq(rec.calls, 1);
	ck_assert_ptr_eq(rec.thread, g_thread_self());
	ck_assert_uint_eq(rec.stats.files, 20);
	ck_assert_uint_eq(rec.stats.bytes, 20 * 4096);
	ck_assert(!readahead_busy());

	/*
	 * The first batch's idle callback is still queued; it must neither
	 * deliver the first batch again nor take over the second, which the
	 * loop delivers once.
	 */
	rec.loop = g_main_loop_new(NULL, FALSE);
	ck_assert(readahead_start(make_files("second", 1, 4096), SORT_NONE, 2, on_done, &rec));
	ck_assert(readahead_busy());
	timeout = g_timeout_add_seconds(20, on_timeout, rec.loop);
	g_main_loop_run(rec.loop);
	g_source_remove(timeout);
	ck_assert_uint_eq(rec.calls, 2);
	ck_assert_uint_eq(rec.stats.files, 1);
	ck_assert_uint_eq(rec.stats.requests, 1);
	ck_assert(!readahead_busy());
	while (g_main_context_iteration(NULL, FALSE))
		;
	ck_assert_uint_eq(rec.calls, 2);
	readahead_wait();   /* nothing running: returns at once */
	ck_assert_uint_eq(rec.calls, 2);
	g_main_loop_unref(rec.loop);
}
END_TEST

static Suite *
readahead_suite(void)
{
	Suite *s = suite_create("readahead");
	TCase *tc;

	tc = tcase_create("sort");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_requests_add_copies);
	tcase_add_test(tc, test_sort_path);
	tcase_add_test(tc, test_sort_none_keeps_order);
	tcase_add_test(tc, test_sort_unknown_strategy_is_block);
	tcase_add_test(tc, test_sort_inode);
	tcase_add_test(tc, test_sort_block);
	suite_add_tcase(s, tc);

	tc = tcase_create("merge");
	tcase_add_test(tc, test_merge_cases);
	tcase_add_test(tc, test_merge_different_files);
	tcase_add_test(tc, test_merge_unsorted);
	tcase_add_test(tc, test_merge_edges);
	suite_add_tcase(s, tc);

	tc = tcase_create("read");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_run_fills_cache_in_chunks);
	tcase_add_test(tc, test_run_reads_only_the_range);
	tcase_add_test(tc, test_run_truncated_file_is_clamped);
	tcase_add_test(tc, test_run_empty_batch);
	tcase_add_test(tc, test_run_fifo_is_skipped);
	tcase_add_test(tc, test_run_symlinks_are_skipped);
	tcase_add_test(tc, test_run_special_files_are_skipped);
	tcase_add_test(tc, test_run_missing_is_skipped);
	tcase_add_test(tc, test_run_failures_are_counted_and_capped);
	tcase_add_test(tc, test_run_parallel_mixed);
	tcase_add_test(tc, test_run_tmpfs_falls_back);
	suite_add_tcase(s, tc);

	tc = tcase_create("batch");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_start_sync);
	tcase_add_test(tc, test_start_background);
	tcase_add_test(tc, test_wait_delivers_done);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(readahead_suite());
}
