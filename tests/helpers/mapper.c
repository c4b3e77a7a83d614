/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A stand-in application for the integration test: maps each file named
 * on the command line, touches every page, then stays alive so that the
 * daemon's scan sees it. Copied under several names it becomes several
 * distinct executables.
 *
 *   mapper SECONDS FILE...
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	volatile unsigned char sink = 0;
	long page = sysconf(_SC_PAGESIZE);

	if (argc < 2) {
		fprintf(stderr, "usage: mapper SECONDS FILE...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		struct stat st;
		unsigned char *p;
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
			perror(argv[i]);
			return 1;
		}
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			perror(argv[i]);
			return 1;
		}
		for (off_t off = 0; off < st.st_size; off += page)
			sink ^= p[off];
		close(fd);
	}
	sleep((unsigned)atoi(argv[1]));
	return sink == 255 ? 0 : 0;
}
