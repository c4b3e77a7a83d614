/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bigmap: maps FILE COUNT times with LENGTH bytes each, the i-th at file
 * offset i * STEP (far past the end of a small file is allowed: only
 * touching a page past it faults), touches the first page of each,
 * prints "ready" and sleeps until killed. What a local user can do to
 * make the daemon read pagemap for terabytes of address space (STEP 0),
 * or learn thousands of maps of one file: tests/hostile-model.sh.
 *
 *   bigmap FILE COUNT LENGTH STEP
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	unsigned long count;
	unsigned long long length, step;
	volatile unsigned char sum = 0;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: bigmap FILE COUNT LENGTH STEP\n");
		return 2;
	}
	count = strtoul(argv[2], NULL, 10);
	length = strtoull(argv[3], NULL, 10);
	step = strtoull(argv[4], NULL, 10);
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "bigmap: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (unsigned long i = 0; i < count; i++) {
		unsigned char *p = mmap(NULL, (size_t)length, PROT_READ, MAP_SHARED, fd,
					  (off_t)(i * step));

		if (p == MAP_FAILED) {
			fprintf(stderr, "bigmap: mmap %lu: %s\n", i, strerror(errno));
			return 1;
		}
		sum += p[0];
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
