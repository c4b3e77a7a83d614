/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A page cache tool for tests/watch.sh, which needs to know exactly what
 * is cached without relying on tools a machine may not have:
 *
 *   pagecache read SECONDS FILE...   read() each file whole (never mmap),
 *                                    then stay alive SECONDS (may be 0 or
 *                                    fractional); the stand-in application.
 *                                    A FILE written map:PATH is mapped and
 *                                    every page touched instead (it stays
 *                                    mapped); one written +N sleeps N s
 *   pagecache evict FILE...          drop each file's pages from the cache
 *   pagecache resident FILE          print "RESIDENT TOTAL" in bytes
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int
read_file(const char *path)
{
	char buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		perror(path);
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return n < 0;
}

static void *
map_file(const char *path)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile unsigned char sink = 0;
	struct stat st;
	unsigned char *addr;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
		perror(path);
		return NULL;
	}
	addr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (addr == MAP_FAILED) {
		perror(path);
		return NULL;
	}
	for (off_t i = 0; i < st.st_size; i += page)
		sink ^= addr[i];
	(void)sink;
	return addr;
}

static void
sleep_for(double seconds)
{
	struct timespec ts;

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static int
evict(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	/* A read-only file system (squashfs) has no fsync: nothing to write back there. */
	if (fd < 0 || (fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS) ||
	    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
		perror(path);
		return 1;
	}
	close(fd);
	return 0;
}

static int
resident(const char *path)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long long count = 0;
	unsigned char *vec;
	struct stat st;
	size_t pages;
	void *addr;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
		perror(path);
		return 1;
	}
	addr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (addr == MAP_FAILED) {
		perror(path);
		return 1;
	}
	pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
	vec = malloc(pages);
	if (!vec || mincore(addr, (size_t)st.st_size, vec) != 0) {
		perror(path);
		return 1;
	}
	for (size_t i = 0; i < pages; i++)
		count += vec[i] & 1;
	printf("%llu %llu\n", count * (unsigned long long)page, (unsigned long long)st.st_size);
	free(vec);
	munmap(addr, (size_t)st.st_size);
	return 0;
}

int
main(int argc, char **argv)
{
	int status = 0;

	if (argc >= 3 && strcmp(argv[1], "read") == 0) {
		for (int i = 3; i < argc; i++) {
			if (strncmp(argv[i], "map:", 4) == 0)
				status |= map_file(argv[i] + 4) == NULL;
			else if (argv[i][0] == '+')
				sleep_for(atof(argv[i] + 1));
			else
				status |= read_file(argv[i]);
		}
		sleep_for(atof(argv[2]));
		return status;
	}
	if (argc >= 3 && strcmp(argv[1], "evict") == 0) {
		for (int i = 2; i < argc; i++)
			status |= evict(argv[i]);
		return status;
	}
	if (argc == 3 && strcmp(argv[1], "resident") == 0)
		return resident(argv[2]);
	fprintf(stderr, "usage: pagecache read SECONDS FILE... | evict FILE... | resident FILE\n");
	return 2;
}
