/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the Check suites. */
#include "config.h"

#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

char *
tu_make_tempdir(void)
{
	g_autoptr(GError) error = NULL;
	char *dir = g_dir_make_tmp("preload-test-XXXXXX", &error);

	if (!dir) {
		fprintf(stderr, "cannot make a temporary directory: %s\n", error->message);
		abort();
	}
	return dir;
}

void
tu_write_file(const char *path, const char *contents)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = g_path_get_dirname(path);

	if (g_mkdir_with_parents(dir, 0755) != 0 ||
	    !g_file_set_contents(path, contents, -1, &error)) {
		fprintf(stderr, "cannot write %s: %s\n", path,
			error ? error->message : g_strerror(errno));
		abort();
	}
}

void
tu_set_pagemap(const char *proc_root, int pid, guint64 vpage, guint64 entry)
{
	g_autofree char *dir = g_strdup_printf("%s/%d", proc_root, pid);
	g_autofree char *path = g_build_filename(dir, "pagemap", NULL);
	int fd;

	if (g_mkdir_with_parents(dir, 0755) != 0 ||
	    (fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		fprintf(stderr, "cannot open %s: %s\n", path, g_strerror(errno));
		abort();
	}
	if (pwrite(fd, &entry, sizeof(entry), (off_t)(vpage * sizeof(entry))) !=
	    (ssize_t)sizeof(entry)) {
		fprintf(stderr, "cannot write %s: %s\n", path, g_strerror(errno));
		abort();
	}
	close(fd);
}

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

void
tu_rm_rf(const char *path)
{
	if (path)
		(void)nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int
tu_run_suite(Suite *suite)
{
	SRunner *runner = srunner_create(suite);
	int failed;

	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

gboolean
tu_is_root(void)
{
	return geteuid() == 0;
}

gboolean
tu_can_run(const char *what, const char *why_not)
{
	if (!why_not)
		return TRUE;
	printf("SKIP: %s: %s\n", what, why_not);
	fflush(stdout);
	return FALSE;
}

/*
 * Probes with mincore(2) on a mapping, not with the residency code under
 * test, so that a bug there fails its cases instead of skipping them.
 */
const char *
tu_why_no_eviction(void)
{
	g_autofree char *dir = tu_make_tempdir();
	g_autofree char *path = g_build_filename(dir, "evict", NULL);
	gsize size = 4 * (gsize)sysconf(_SC_PAGESIZE);
	g_autofree char *contents = g_malloc(size + 1);
	unsigned char vec[4] = { 0 };
	const char *why_not = NULL;
	void *map;
	int fd;

	memset(contents, 'e', size);
	contents[size] = '\0';
	tu_write_file(path, contents);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fdatasync(fd) != 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
		why_not = "cannot sync and drop a file in $TMPDIR";
	} else if ((map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		why_not = "cannot map a file in $TMPDIR";
	} else {
		if (mincore(map, size, vec) != 0)
			why_not = "mincore() fails on a file in $TMPDIR";
		else if ((vec[0] | vec[1] | vec[2] | vec[3]) & 1)
			why_not = "$TMPDIR keeps a file's pages cached after POSIX_FADV_DONTNEED (tmpfs?)";
		munmap(map, size);
	}
	if (fd >= 0)
		close(fd);
	tu_rm_rf(dir);
	return why_not;
}

static char *
hangfs_path(void)
{
	const char *top = g_getenv("top_builddir");

	return g_build_filename(top ? top : ".", "tests", "helpers", "hangfs", NULL);
}

const char *
tu_why_no_hangfs(void)
{
	g_autofree char *hangfs = hangfs_path();
	g_autofree char *fusermount = g_find_program_in_path("fusermount3");

	if (!tu_is_root())
		return "needs root (mounts a FUSE file system)";
	if (!g_file_test(hangfs, G_FILE_TEST_IS_EXECUTABLE))
		return "tests/helpers/hangfs not built (no libfuse3)";
	if (access("/dev/fuse", R_OK | W_OK) != 0)
		return "no /dev/fuse";
	if (!fusermount)
		return "no fusermount3 (for auto_unmount)";
	return NULL;
}

GPid
tu_hangfs_start(const char *src, const char *mnt, int release_after)
{
	g_autofree char *hangfs = hangfs_path();
	g_autofree char *release = g_strdup_printf("%d", release_after);
	/* auto_unmount: a case that fails leaves no mount once hangfs ends. */
	const char *argv[] = { hangfs, "--release-after", release, "--lifetime", "60", src, mnt,
			       "-o", "auto_unmount", NULL };
	g_autoptr(GError) error = NULL;
	GPid pid;
	int i;

	if (!g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
			   &error))
		g_error("hangfs: %s", error->message);
	for (i = 0; i < 100; i++) {
		g_autofree char *text = NULL;
		g_autofree char *needle = g_strdup_printf(" %s ", mnt);

		if (g_file_get_contents("/proc/self/mountinfo", &text, NULL, NULL) &&
		    strstr(text, needle))
			return pid;
		g_usleep(50000);
	}
	g_error("hangfs did not mount %s", mnt);
	return pid;
}

void
tu_hangfs_stop(const char *mnt, GPid pid)
{
	(void)kill(pid, SIGUSR2);
	(void)umount2(mnt, MNT_DETACH);
	(void)kill(pid, SIGTERM);
	(void)waitpid(pid, NULL, 0);
	g_spawn_close_pid(pid);
}
