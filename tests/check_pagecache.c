/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/pagecache.c: the safe open on every kind of file that
 * can stand where a learned file was (FIFO, symlink, device, directory,
 * socket, missing, too long a name), and residency measured on real files
 * whose pages are evicted and read back one by one: through cachestat,
 * through mincore alone, and without a memo.
 *
 * Residency needs a file system that can evict (tmpfs keeps every page
 * resident), so the files live under the build directory, else $TMPDIR,
 * else /var/tmp. Cases that cannot run here (no such file system, not
 * root) are not added to the suite (TU_ADD_TEST_UNLESS() prints "SKIP:
 * case: reason" instead), so that a case that did not run is never
 * counted as passed.
 */
#include "config.h"

#include "testutil.h"
#include "pagecache.h"
#include "interval.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#define P ((guint64)4096)

static char *base;   /* this test case's directory, removed by the parent process */
static char *dir;    /* this test's directory, inside base */

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

/* Once per test case, in Check's parent process, which also cleans up after failed tests. */
static void
setup_base(void)
{
	g_autofree char *parent = disk_dir();

	if (!parent)
		parent = g_get_current_dir();
	base = g_build_filename(parent, "check_pagecache-XXXXXX", NULL);
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
 * A 16-page file with only pages 0, 1 and 8 resident. FADV_RANDOM keeps
 * the kernel's own readahead from adding pages around each read.
 */
static char *
make_sparse_resident_file(void)
{
	char *path = in_dir("data");
	g_autofree char *contents = g_malloc0(16 * P + 1);
	char page[P];
	int fd;

	memset(contents, 'd', 16 * P);
	tu_write_file(path, contents);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fdatasync(fd), 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
	ck_assert_int_eq(pread(fd, page, P, 0), P);
	ck_assert_int_eq(pread(fd, page, P, P), P);
	ck_assert_int_eq(pread(fd, page, P, 8 * P), P);
	ck_assert_int_eq(close(fd), 0);
	return path;
}

/* Opens path with pagecache_open() and checks the result and errno. */
static void
assert_open(const char *path, PagecacheOpen want, int want_errno)
{
	struct stat st;
	int fd = 12345, err = -1;

	ck_assert_int_eq(pagecache_open(path, &fd, &st, &err), want);
	ck_assert_int_eq(err, want_errno);
	if (want == PAGECACHE_OPEN_OK) {
		struct stat lst;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(lstat(path, &lst), 0);
		ck_assert_uint_eq(st.st_ino, lst.st_ino);
		ck_assert_uint_eq(st.st_dev, lst.st_dev);
		ck_assert_int_eq(close(fd), 0);
	} else {
		ck_assert_int_eq(fd, -1);
	}
}

/* ---- opening ---- */

START_TEST(test_open_regular)
{
	g_autofree char *f = in_dir("lib.so");

	tu_write_file(f, "x");
	assert_open(f, PAGECACHE_OPEN_OK, 0);
}
END_TEST

START_TEST(test_open_fifo_is_not_opened)
{
	g_autofree char *f = in_dir("lib.so");
	union {
		struct inotify_event ev;
		char bytes[sizeof(struct inotify_event) + NAME_MAX + 1];
	} buf;
	struct stat st;
	int ino, fd;

	/* Opening this FIFO for reading without O_NONBLOCK would block forever (no writer). */
	ck_assert_int_eq(mkfifo(f, 0600), 0);
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ck_assert_int_ge(ino, 0);
	ck_assert_int_ge(inotify_add_watch(ino, f, IN_OPEN), 0);
	ck_assert_int_eq(pagecache_open(f, &fd, &st, NULL), PAGECACHE_OPEN_NOT_REGULAR);
	ck_assert_int_eq(fd, -1);
	ck_assert(S_ISFIFO(st.st_mode));
	ck_assert_str_eq(pagecache_mode_name(st.st_mode), "a FIFO");
	/* Refused without even being opened. */
	ck_assert_int_eq(read(ino, &buf, sizeof(buf)), -1);
	ck_assert_int_eq(errno, EAGAIN);
	(void)close(ino);
}
END_TEST

START_TEST(test_open_odd_files)
{
	g_autofree char *target = in_dir("target");
	g_autofree char *link = in_dir("link.so");
	g_autofree char *sock = in_dir("sock");
	g_autofree char *cwd = g_get_current_dir();
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, s;

	/* A symlink is never followed, even to a regular file. */
	tu_write_file(target, "x");
	ck_assert_int_eq(symlink(target, link), 0);
	ck_assert_int_eq(pagecache_open(link, &fd, &st, NULL), PAGECACHE_OPEN_NOT_REGULAR);
	ck_assert_str_eq(pagecache_mode_name(st.st_mode), "a symbolic link");

	ck_assert_int_eq(pagecache_open("/dev/null", &fd, &st, NULL), PAGECACHE_OPEN_NOT_REGULAR);
	ck_assert_str_eq(pagecache_mode_name(st.st_mode), "a character device");
	ck_assert_int_eq(pagecache_open(dir, &fd, &st, NULL), PAGECACHE_OPEN_NOT_REGULAR);
	ck_assert_str_eq(pagecache_mode_name(st.st_mode), "a directory");

	/* Bound by a name relative to dir: sun_path is too short for deep build trees. */
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(s, 0);
	g_strlcpy(addr.sun_path, "sock", sizeof(addr.sun_path));
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&addr, sizeof(addr)), 0);
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_int_eq(pagecache_open(sock, &fd, &st, NULL), PAGECACHE_OPEN_NOT_REGULAR);
	ck_assert_str_eq(pagecache_mode_name(st.st_mode), "a socket");
	ck_assert_int_eq(fd, -1);
	(void)close(s);
}
END_TEST

START_TEST(test_open_missing_and_errors)
{
	g_autofree char *gone = in_dir("gone.so");
	g_autofree char *file = in_dir("file");
	g_autofree char *under_file = in_dir("file/lib.so");
	g_autofree char *longname = g_strnfill(300, 'x');
	g_autofree char *toolong = in_dir(longname);

	assert_open(gone, PAGECACHE_OPEN_MISSING, ENOENT);
	/* A directory replaced by a file: ENOTDIR, as stale as ENOENT. */
	tu_write_file(file, "x");
	assert_open(under_file, PAGECACHE_OPEN_MISSING, ENOTDIR);
	/* A name longer than NAME_MAX (255) is an error, not a stale file. */
	assert_open(toolong, PAGECACHE_OPEN_ERROR, ENAMETOOLONG);
}
END_TEST

START_TEST(test_mode_names)
{
	ck_assert_str_eq(pagecache_mode_name(S_IFBLK | 0600), "a block device");
	ck_assert_str_eq(pagecache_mode_name(S_IFCHR | 0600), "a character device");
	ck_assert_str_eq(pagecache_mode_name(0), "of an unknown type");
	ck_assert_uint_eq(pagecache_page_size(), (guint64)sysconf(_SC_PAGESIZE));
}
END_TEST

/* ---- evictions ---- */

/* The pgsteal_* counters and drop_pagecache are summed; nothing else is. */
START_TEST(test_parse_evictions)
{
	guint64 n = 1;

	ck_assert(pagecache_parse_evictions("nr_free_pages 5\npgsteal_kswapd 10\npgsteal_direct 3\n"
					    "pgscan_kswapd 99\ndrop_pagecache 2\ndrop_slab 7\n"
					    "pgsteal_khugepaged 1\npgsteal_file 4\npgsteal 1000",
					    &n));
	ck_assert_uint_eq(n, 10 + 3 + 2 + 1 + 4);
	/* The last line needs no newline; a counter alone counts. */
	ck_assert(pagecache_parse_evictions("drop_pagecache 12", &n));
	ck_assert_uint_eq(n, 12);
	ck_assert(pagecache_parse_evictions("pgsteal_direct 0\n", &n));
	ck_assert_uint_eq(n, 0);
	/* None of them: not known. */
	ck_assert(!pagecache_parse_evictions("pgscan_kswapd 99\ndrop_pagecachex 3\n\n", &n));
	ck_assert_uint_eq(n, 0);
	ck_assert(!pagecache_parse_evictions("", &n));
	ck_assert(!pagecache_read_evictions("/nonexistent/vmstat", &n));
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* ---- residency ---- */

/* The memos the residency cases run with: cachestat and mincore, mincore alone, none. */
static Pagecache *
pagecache_for(int variant)
{
	return variant == 0 ? pagecache_new(PAGECACHE_PROBE_ALL)
	     : variant == 1 ? pagecache_new(PAGECACHE_PROBE_MINCORE) : NULL;
}

START_TEST(test_resident_bytes)
{
	g_autofree char *path = make_sparse_resident_file();
	g_autoptr(Pagecache) pc = pagecache_for(_i);
	guint8 vec[16];
	guint64 bytes = 1;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert(pagecache_resident_bytes(pc, fd, path, &st, 0, 16 * P, &bytes));
	ck_assert_uint_eq(bytes, 3 * P);
	/* Pages 1 and 2: one of them. */
	ck_assert(pagecache_resident_bytes(pc, fd, path, &st, P, 2 * P, &bytes));
	ck_assert_uint_eq(bytes, P);
	ck_assert(pagecache_resident_bytes(pc, fd, path, &st, 9 * P, 7 * P, &bytes));
	ck_assert_uint_eq(bytes, 0);
	/* Within page 0: capped at the range's 100 bytes. */
	ck_assert(pagecache_resident_bytes(pc, fd, path, &st, 5, 100, &bytes));
	ck_assert_uint_eq(bytes, 100);
	ck_assert(pagecache_resident_bytes(pc, fd, path, &st, 5, 0, &bytes));
	ck_assert_uint_eq(bytes, 0);
	ck_assert(!pagecache_resident_bytes(pc, fd, path, &st, G_MAXUINT64 - 1, 10, &bytes));
	/* The page vector: pages 0, 1 and 8 of 16. */
	ck_assert(pagecache_resident_pages(pc, fd, path, &st, 0, 16, vec));
	for (int i = 0; i < 16; i++)
		ck_assert_msg((vec[i] & 1) == (i == 0 || i == 1 || i == 8), "page %d", i);
	ck_assert(pagecache_resident_pages(pc, fd, path, &st, 8 * P, 2, vec));
	ck_assert_int_eq(vec[0] & 1, 1);
	ck_assert_int_eq(vec[1] & 1, 0);
	close(fd);
}
END_TEST

/*
 * The page vector of the window probes: one cachestat settles a file
 * cached whole or not at all; pages 0, 1 and 8 of 16 need mincore too.
 */
START_TEST(test_resident_vector)
{
	g_autofree char *path = make_sparse_resident_file();
	g_autofree char *whole = in_dir("whole");
	g_autofree char *contents = g_malloc0(3 * P + 101);
	g_autoptr(Pagecache) pc = pagecache_for(_i);
	const gboolean cachestat = _i != 1 && have_cachestat();
	guint8 vec[16];
	guint64 probes = 0;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	/* Part cached: cachestat says so (where it can), one mincore window lists the pages. */
	memset(vec, 0xff, sizeof(vec));
	ck_assert(pagecache_resident_vector(pc, fd, path, &st, 0, 16, vec, &probes));
	for (int i = 0; i < 16; i++)
		ck_assert_msg((vec[i] & 1) == (i == 0 || i == 1 || i == 8), "page %d", i);
	ck_assert_uint_eq(probes, cachestat ? 2 : 1);
	/* Pages 9 to 15: none cached, settled by cachestat alone. */
	probes = 0;
	memset(vec, 0xff, sizeof(vec));
	ck_assert(pagecache_resident_vector(pc, fd, path, &st, 9 * P, 7, vec, &probes));
	for (int i = 0; i < 7; i++)
		ck_assert_int_eq(vec[i] & 1, 0);
	ck_assert_uint_eq(probes, 1);
	close(fd);

	/* 3 pages and 100 bytes just written: all 4 pages cached, the last one partial. */
	memset(contents, 'w', 3 * P + 100);
	tu_write_file(whole, contents);
	fd = open(whole, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	probes = 0;
	memset(vec, 0, sizeof(vec));
	ck_assert(pagecache_resident_vector(pc, fd, whole, &st, 0, 4, vec, &probes));
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(vec[i] & 1, 1);
	ck_assert_uint_eq(probes, 1);
	close(fd);
}
END_TEST

/*
 * With cachestat alone allowed (as under a seccomp filter without
 * mincore), a file cached whole or not at all is still answered; one
 * cached in part is not.
 */
START_TEST(test_resident_vector_without_mincore)
{
	g_autofree char *path = make_sparse_resident_file();
	g_autoptr(Pagecache) pc = pagecache_new(PAGECACHE_PROBE_CACHESTAT);
	guint8 vec[16];
	guint64 probes = 0;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	/* Pages 0 and 1: both cached. */
	memset(vec, 0, sizeof(vec));
	ck_assert(pagecache_resident_vector(pc, fd, path, &st, 0, 2, vec, &probes));
	ck_assert_int_eq(vec[0] & 1, 1);
	ck_assert_int_eq(vec[1] & 1, 1);
	/* Pages 2 to 7: none. */
	memset(vec, 0xff, sizeof(vec));
	ck_assert(pagecache_resident_vector(pc, fd, path, &st, 2 * P, 6, vec, &probes));
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(vec[i] & 1, 0);
	ck_assert_uint_eq(probes, 2);
	/* All 16: in part, which only mincore could say page by page. */
	ck_assert(!pagecache_resident_vector(pc, fd, path, &st, 0, 16, vec, &probes));
	ck_assert_uint_eq(probes, 3);
	close(fd);
}
END_TEST

/*
 * The same file through the two steps of the reader: cachestat settles
 * all and nothing in one call, mincore lists the missing runs of the
 * rest: pages [2,8) and [9,16), one cached page apart.
 */
START_TEST(test_find_missing)
{
	g_autofree char *path = make_sparse_resident_file();
	g_autoptr(Pagecache) pc = pagecache_for(_i);
	g_autoptr(GArray) missing = interval_array_new();
	/* Without cachestat in the kernel, variants 0 and 2 find out and use mincore. */
	const gboolean cachestat = _i != 1 && have_cachestat();
	guint64 probes = 0;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);

	if (cachestat) {
		ck_assert_int_eq(pagecache_cachestat(pc, fd, &st, 0, 2 * P, &probes), PAGECACHE_ALL);
		ck_assert_int_eq(pagecache_cachestat(pc, fd, &st, 9 * P, 7 * P, &probes),
				 PAGECACHE_NONE);
		ck_assert_int_eq(pagecache_cachestat(pc, fd, &st, 0, 16 * P, &probes),
				 PAGECACHE_PART);
		/* Bytes 100..4196 touch pages 0 and 1: both cached. */
		ck_assert_int_eq(pagecache_cachestat(pc, fd, &st, 100, P, &probes), PAGECACHE_ALL);
		ck_assert_uint_eq(probes, 4);
	} else {
		ck_assert_int_eq(pagecache_cachestat(pc, fd, &st, 0, 2 * P, &probes),
				 PAGECACHE_UNKNOWN);
		ck_assert_uint_eq(probes, 0);
	}

	/* Part cached: cachestat (where allowed) says so, one mincore window lists the runs. */
	probes = 0;
	ck_assert_int_eq(pagecache_find_missing(pc, fd, path, &st, 0, 16 * P, 0, missing, &probes),
			 PAGECACHE_PART);
	ck_assert_uint_eq(probes, cachestat ? 2 : 1);
	ck_assert_uint_eq(missing->len, 2);
	ck_assert_uint_eq(g_array_index(missing, Interval, 0).start, 2 * P);
	ck_assert_uint_eq(g_array_index(missing, Interval, 0).end, 8 * P);
	ck_assert_uint_eq(g_array_index(missing, Interval, 1).start, 9 * P);
	ck_assert_uint_eq(g_array_index(missing, Interval, 1).end, 16 * P);

	/* A gap of one page bridges cached page 8: one run [2P, 16P), and the runs are clipped. */
	ck_assert_int_eq(pagecache_find_missing(pc, fd, path, &st, 100, 16 * P - 200, P, missing,
						NULL), PAGECACHE_PART);
	ck_assert_uint_eq(missing->len, 1);
	ck_assert_uint_eq(g_array_index(missing, Interval, 0).start, 2 * P);
	ck_assert_uint_eq(g_array_index(missing, Interval, 0).end, 16 * P - 100);

	/* Nothing cached: no run is listed, the answer says read it whole. */
	probes = 0;
	ck_assert_int_eq(pagecache_find_missing(pc, fd, path, &st, 9 * P, 7 * P, 0, missing,
						&probes), PAGECACHE_NONE);
	ck_assert_uint_eq(missing->len, 0);
	ck_assert_uint_eq(probes, 1);
	close(fd);
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

/*
 * A file of another user, which this process may not write, without
 * CAP_FOWNER: mincore() then claims every page is cached, so it is not
 * asked, and the answer is "unknown". A Pagecache made before the drop
 * still believes it has CAP_FOWNER: it is asked once, when made.
 */
START_TEST(test_untrusted_mincore)
{
	g_autofree char *path = make_sparse_resident_file();
	const int caps[] = { CAP_FOWNER, CAP_DAC_OVERRIDE };
	g_autoptr(Pagecache) before = pagecache_new(PAGECACHE_PROBE_MINCORE);
	g_autoptr(Pagecache) after = NULL;
	g_autoptr(GArray) missing = interval_array_new();
	guint8 vec[16];
	guint64 bytes;
	struct stat st;
	int fd;

	ck_assert_int_eq(chown(path, 65534, 65534), 0);
	ck_assert_int_eq(chmod(path, 0644), 0);
	drop_effective_caps(caps, G_N_ELEMENTS(caps));
	after = pagecache_new(PAGECACHE_PROBE_MINCORE);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);

	ck_assert(!pagecache_resident_pages(after, fd, path, &st, 0, 16, vec));
	ck_assert(!pagecache_resident_bytes(after, fd, path, &st, 0, 16 * P, &bytes));
	ck_assert_int_eq(pagecache_find_missing(after, fd, path, &st, 0, 16 * P, 0, missing, NULL),
			 PAGECACHE_UNKNOWN);
	/* The lie itself, through the stale memo: all 16 pages "cached", 3 really are. */
	ck_assert(pagecache_resident_bytes(before, fd, path, &st, 0, 16 * P, &bytes));
	ck_assert_uint_eq(bytes, 16 * P);
	close(fd);
}
END_TEST

static Suite *
pagecache_suite(void)
{
	Suite *s = suite_create("pagecache");
	g_autofree char *disk = disk_dir();
	const char *no_disk = disk ? NULL : "no file system here can evict pages (all tmpfs)";
	const char *no_disk_4k = no_disk ? no_disk :
				 pagecache_page_size() == P ? NULL : "the pages are not 4 KiB";
	TCase *tc;

	tc = tcase_create("open");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_open_regular);
	tcase_add_test(tc, test_open_fifo_is_not_opened);
	tcase_add_test(tc, test_open_odd_files);
	tcase_add_test(tc, test_open_missing_and_errors);
	tcase_add_test(tc, test_mode_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("evictions");
	tcase_add_test(tc, test_parse_evictions);
	suite_add_tcase(s, tc);

	/* Tagged "kernel" as in check_readahead: valgrind knows no cachestat. */
	tc = tcase_create("residency");
	tcase_set_tags(tc, "kernel");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup, teardown);
	if (!have_cachestat())
		printf("NOTE: no cachestat(2) in this kernel: the residency cases "
		       "check the mincore fallback only\n");
	TU_ADD_LOOP_TEST_UNLESS(tc, test_resident_bytes, 0, 3, no_disk_4k);
	TU_ADD_LOOP_TEST_UNLESS(tc, test_find_missing, 0, 3, no_disk_4k);
	TU_ADD_LOOP_TEST_UNLESS(tc, test_resident_vector, 0, 3, no_disk_4k);
	TU_ADD_TEST_UNLESS(tc, test_resident_vector_without_mincore,
			   no_disk_4k ? no_disk_4k : have_cachestat() ? NULL : "no cachestat(2) in this kernel");
	TU_ADD_TEST_UNLESS(tc, test_untrusted_mincore,
			   no_disk_4k ? no_disk_4k : tu_is_root() ? NULL : "needs root (chown, capabilities)");
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(pagecache_suite());
}
