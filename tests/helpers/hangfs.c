/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hangfs: a FUSE file system that stops answering when told to, standing
 * in for a dead NFS server or a stuck FUSE daemon in the hostile tests.
 *
 *   hangfs [--release-after SECONDS] [--lifetime SECONDS] [--reads-only]
 *          SOURCE MOUNTPOINT [FUSE OPTIONS]
 *
 * It serves the regular files of the directory SOURCE (one level, read
 * only) at MOUNTPOINT, with no attribute or name caching: every lookup
 * reaches it. SIGUSR1 makes every request from then on wait, as a server
 * that stopped answering (with --reads-only, only the reads of file
 * data: lookups, opens and attributes are still answered, as by a
 * server whose storage stalls); SIGUSR2 lets them go on. A hang ends by itself
 * after --release-after seconds (30 by default), so that a test that dies
 * cannot leave a mount behind that hangs whoever touches it; unmount with
 * `fusermount3 -u -z MOUNTPOINT`. The process ends by itself after
 * --lifetime seconds (600 by default; with -o auto_unmount the mount goes
 * with it), should the test that started it be killed before its
 * cleanup. It runs in the foreground: the tests signal the pid they
 * started.
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

/* Set from signal handlers, read by the request threads. */
static volatile sig_atomic_t hung;
static volatile time_t hang_deadline;

/* Read-only after main() parsed the arguments. */
static const char *source;
static int release_after = 30;
static int lifetime = 600;
static int reads_only;

static time_t
monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void
on_hang(int sig)
{
	(void)sig;
	hang_deadline = monotonic_seconds() + release_after;
	hung = 1;
}

static void
on_resume(int sig)
{
	(void)sig;
	hung = 0;
}

/* Every request passes here: while hung, it waits (the kernel's caller with it). */
static void
gate_for(int is_read)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	while (hung && (is_read || !reads_only)) {
		if (monotonic_seconds() >= hang_deadline) {
			hung = 0;
			break;
		}
		nanosleep(&tick, NULL);
	}
}

static void
gate(void)
{
	gate_for(0);
}

/* SOURCE/NAME for "/NAME"; NULL for anything deeper. */
static int
source_path(const char *path, char *out, size_t size)
{
	if (path[0] != '/' || strchr(path + 1, '/'))
		return -ENOENT;
	if ((size_t)snprintf(out, size, "%s%s", source, path) >= size)
		return -ENAMETOOLONG;
	return 0;
}

static void *
hang_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	/* No caching of names or attributes: each lookup is a request. */
	cfg->entry_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	return NULL;
}

static int
hang_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	char real[PATH_MAX];
	int err;

	(void)fi;
	gate();
	if (strcmp(path, "/") == 0) {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if ((err = source_path(path, real, sizeof(real))) != 0)
		return err;
	if (stat(real, st) != 0)
		return -errno;
	return S_ISREG(st->st_mode) ? 0 : -ENOENT;
}

static int
hang_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t offset,
	     struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	DIR *dir;
	struct dirent *de;

	(void)offset;
	(void)fi;
	(void)flags;
	gate();
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	dir = opendir(source);
	if (!dir)
		return -errno;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] != '.')
			fill(buf, de->d_name, NULL, 0, 0);
	}
	closedir(dir);
	return 0;
}

static int
hang_open(const char *path, struct fuse_file_info *fi)
{
	char real[PATH_MAX];
	int err, fd;

	gate();
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EROFS;
	if ((err = source_path(path, real, sizeof(real))) != 0)
		return err;
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int
hang_read(const char *path, char *buf, size_t size, off_t offset, struct fuse_file_info *fi)
{
	ssize_t n;

	(void)path;
	gate_for(1);
	n = pread((int)fi->fh, buf, size, offset);
	return n < 0 ? -errno : (int)n;
}

static int
hang_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	/* Not gated: a descriptor must always be let go. */
	close((int)fi->fh);
	return 0;
}

static int
hang_statfs(const char *path, struct statvfs *st)
{
	(void)path;
	gate();
	return statvfs(source, st) != 0 ? -errno : 0;
}

static const struct fuse_operations hang_ops = {
	.init = hang_init,
	.getattr = hang_getattr,
	.readdir = hang_readdir,
	.open = hang_open,
	.read = hang_read,
	.release = hang_release,
	.statfs = hang_statfs,
};

int
main(int argc, char **argv)
{
	static char foreground[] = "-f";
	struct sigaction sa;
	char **fargv;
	int fargc = 0, i = 1;

	while (argc - i > 2 && strcmp(argv[i], "--reads-only") == 0) {
		reads_only = 1;
		i++;
	}
	while (argc - i > 2 && (strcmp(argv[i], "--release-after") == 0 ||
				strcmp(argv[i], "--lifetime") == 0)) {
		if (strcmp(argv[i], "--release-after") == 0)
			release_after = atoi(argv[i + 1]);
		else
			lifetime = atoi(argv[i + 1]);
		i += 2;
		while (argc - i > 2 && strcmp(argv[i], "--reads-only") == 0) {
			reads_only = 1;
			i++;
		}
	}
	if (argc - i < 2 || release_after <= 0 || lifetime <= 0) {
		fprintf(stderr, "usage: hangfs [--release-after SECONDS] [--lifetime SECONDS] "
			"[--reads-only] SOURCE MOUNTPOINT [FUSE OPTIONS]\n");
		return 2;
	}
	/* SIGALRM's default action ends the process. */
	alarm((unsigned int)lifetime);
	source = realpath(argv[i], NULL);
	if (!source) {
		perror(argv[i]);
		return 2;
	}

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_hang;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_resume;
	sigaction(SIGUSR2, &sa, NULL);

	/* argv[0], the mount point, then -f and the caller's options. */
	fargv = calloc((size_t)argc + 2, sizeof(*fargv));
	if (!fargv)
		return 1;
	fargv[fargc++] = argv[0];
	fargv[fargc++] = argv[i + 1];
	fargv[fargc++] = foreground;
	for (int j = i + 2; j < argc; j++)
		fargv[fargc++] = argv[j];
	return fuse_main(fargc, fargv, &hang_ops, NULL);
}
