/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-app: a stand-in application for the launch benchmarks.
 *
 * A real program's start-up is mostly page faults on the files it maps
 * (what preload learns and prefetches) and read() calls on the files it
 * opens (what it cannot see). This program does exactly that for the
 * files a manifest lists, and nothing else, so the time it prints is
 * the I/O part of a launch: cold, warm or prefetched.
 *
 * The manifest has one file per line:
 *
 *   mmap SIZE PATH     map the file and touch every page of its first SIZE bytes
 *   read SIZE PATH     read() its first SIZE bytes
 *
 * SIZE is in bytes with an optional K, M or G suffix (powers of 1024);
 * 0 means the whole file, and a file shorter than SIZE is used whole.
 * PATH is the rest of the line, so it may contain spaces. Empty lines
 * and lines starting with '#' are ignored.
 *
 *   bench-app [--sleep N] MANIFEST    load, print the load time in
 *                                     microseconds, keep the files mapped
 *                                     for N seconds (so a scanner sees
 *                                     them in /proc/PID/maps), exit
 *   bench-app --create MANIFEST       create every file with SIZE bytes of
 *                                     incompressible data (lines with SIZE
 *                                     0 are skipped), to set up a benchmark
 *   bench-app --residency MANIFEST    print how many of the bytes each kind
 *                                     of line would use are in the page
 *                                     cache now (mincore), without touching
 *                                     them: "mmap RESIDENT TOTAL" and
 *                                     "read RESIDENT TOTAL", in bytes
 *
 * It uses only libc, so its own maps are the executable, ld.so and libc.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,
	EXIT_USAGE = 2,
};

#define CHUNK (1u << 20)

/* Where the touched bytes go, so the compiler cannot drop the touches. */
static volatile unsigned char sink;

typedef enum {
	ENTRY_MMAP = 0,  /* also the index of its residency counters */
	ENTRY_READ = 1,
} EntryKind;

typedef struct Entry {
	EntryKind kind;
	unsigned long long size;  /* bytes to use, 0: the whole file */
	char *path;
} Entry;

typedef struct Manifest {
	Entry *entries;
	size_t n, cap;
} Manifest;

/* The mappings stay until exit, so /proc/PID/maps shows them. */
typedef struct Mapping {
	void *addr;
	size_t length;
} Mapping;

static void
manifest_free(Manifest *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->entries[i].path);
	free(m->entries);
	m->entries = NULL;
	m->n = m->cap = 0;
}

/* "123", "64K", "3M", "1G"; returns -1 if it is not a size. */
static int
parse_size(const char *text, unsigned long long *out)
{
	unsigned long long value, scale = 1;
	char *end;

	if (*text < '0' || *text > '9')
		return -1;
	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno)
		return -1;
	if (*end == 'K')
		scale = 1ULL << 10;
	else if (*end == 'M')
		scale = 1ULL << 20;
	else if (*end == 'G')
		scale = 1ULL << 30;
	else if (*end != '\0')
		return -1;
	if (scale > 1 && end[1] != '\0')
		return -1;
	if (value > UINT64_MAX / scale)
		return -1;
	*out = value * scale;
	return 0;
}

static int
manifest_add(Manifest *m, EntryKind kind, unsigned long long size, const char *path)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		Entry *grown = realloc(m->entries, cap * sizeof(*grown));

		if (!grown)
			return -1;
		m->entries = grown;
		m->cap = cap;
	}
	m->entries[m->n].kind = kind;
	m->entries[m->n].size = size;
	m->entries[m->n].path = strdup(path);
	if (!m->entries[m->n].path)
		return -1;
	m->n++;
	return 0;
}

static int
manifest_load(const char *file, Manifest *m)
{
	FILE *fp = fopen(file, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
	int ret = 0;

	if (!fp) {
		fprintf(stderr, "bench-app: %s: %s\n", file, strerror(errno));
		return -1;
	}
	while ((len = getline(&line, &cap, fp)) >= 0) {
		char *kind, *size, *path, *rest;
		unsigned long long bytes;
		EntryKind k;

		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		/* kind, size, then the path is everything after one blank */
		kind = line;
		size = strchr(kind, ' ');
		path = size ? strchr(size + 1, ' ') : NULL;
		if (!path || path[1] == '\0') {
			fprintf(stderr, "bench-app: %s:%u: expected \"mmap|read SIZE PATH\"\n",
				file, lineno);
			ret = -1;
			break;
		}
		*size++ = '\0';
		*path++ = '\0';
		rest = path;
		if (strcmp(kind, "mmap") == 0) {
			k = ENTRY_MMAP;
		} else if (strcmp(kind, "read") == 0) {
			k = ENTRY_READ;
		} else {
			fprintf(stderr, "bench-app: %s:%u: unknown kind \"%s\"\n", file, lineno, kind);
			ret = -1;
			break;
		}
		if (parse_size(size, &bytes) < 0) {
			fprintf(stderr, "bench-app: %s:%u: bad size \"%s\"\n", file, lineno, size);
			ret = -1;
			break;
		}
		if (manifest_add(m, k, bytes, rest) < 0) {
			fprintf(stderr, "bench-app: out of memory\n");
			ret = -1;
			break;
		}
	}
	if (ret == 0 && ferror(fp)) {
		fprintf(stderr, "bench-app: %s: %s\n", file, strerror(errno));
		ret = -1;
	}
	free(line);
	fclose(fp);
	return ret;
}

/* How much of a file of `file_size` bytes an entry uses. */
static unsigned long long
used_bytes(const Entry *e, unsigned long long file_size)
{
	return e->size == 0 || e->size > file_size ? file_size : e->size;
}

/* Faults in every page of the first `size` bytes of the file. */
static int
load_mmap(const Entry *e, Mapping *mapping)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	unsigned long long size;
	const volatile unsigned char *p;
	void *addr;
	int fd = open(e->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "bench-app: %s: %s\n", e->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size = used_bytes(e, (unsigned long long)st.st_size);
	mapping->addr = NULL;
	mapping->length = 0;
	if (size == 0) {
		close(fd);
		return 0;
	}
	addr = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (addr == MAP_FAILED) {
		fprintf(stderr, "bench-app: mmap %s: %s\n", e->path, strerror(errno));
		return -1;
	}
	/* One read per page: each is a page fault on a cold cache. */
	p = addr;
	for (unsigned long long off = 0; off < size; off += (unsigned long long)page)
		sink ^= p[off];
	mapping->addr = addr;
	mapping->length = (size_t)size;
	return 0;
}

static int
load_read(const Entry *e, unsigned char *buf)
{
	unsigned long long left = e->size ? e->size : UINT64_MAX;
	int fd = open(e->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "bench-app: %s: %s\n", e->path, strerror(errno));
		return -1;
	}
	while (left > 0) {
		ssize_t n = read(fd, buf, left < CHUNK ? (size_t)left : CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "bench-app: read %s: %s\n", e->path, strerror(errno));
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		left -= (unsigned long long)n;
	}
	close(fd);
	return 0;
}

/* xorshift64: incompressible, reproducible contents without a library. */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

static int
create_file(const Entry *e, unsigned char *buf, uint64_t *state)
{
	unsigned long long left = e->size;
	int fd;

	/* Another line (or the benchmark) makes it. */
	if (e->size == 0)
		return 0;
	fd = open(e->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "bench-app: %s: %s\n", e->path, strerror(errno));
		return -1;
	}
	while (left > 0) {
		size_t n = left < CHUNK ? (size_t)left : CHUNK;
		size_t done = 0;

		for (size_t i = 0; i + 8 <= CHUNK; i += 8) {
			uint64_t r = next_random(state);

			memcpy(buf + i, &r, 8);
		}
		while (done < n) {
			ssize_t w = write(fd, buf + done, n - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				fprintf(stderr, "bench-app: write %s: %s\n", e->path, strerror(errno));
				close(fd);
				return -1;
			}
			done += (size_t)w;
		}
		left -= n;
	}
	if (close(fd) < 0) {
		fprintf(stderr, "bench-app: close %s: %s\n", e->path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Adds to *resident and *total the bytes of the entry's range that are in
 * the page cache, by pages (the last one counted only as far as the range
 * goes). The file is mapped but never touched, so looking changes
 * nothing; mincore() reports page cache residency for a shared file
 * mapping whether or not this process faulted the pages in.
 */
static int
residency(const Entry *e, unsigned long long *resident, unsigned long long *total)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct stat st;
	unsigned long long size;
	unsigned char *vec;
	size_t pages;
	void *addr;
	int fd = open(e->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "bench-app: %s: %s\n", e->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size = used_bytes(e, (unsigned long long)st.st_size);
	if (size == 0) {
		close(fd);
		return 0;
	}
	addr = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (addr == MAP_FAILED) {
		fprintf(stderr, "bench-app: mmap %s: %s\n", e->path, strerror(errno));
		return -1;
	}
	pages = (size_t)((size + page - 1) / page);
	vec = malloc(pages);
	if (!vec || mincore(addr, (size_t)size, vec) < 0) {
		fprintf(stderr, "bench-app: mincore %s: %s\n", e->path,
			vec ? strerror(errno) : "out of memory");
		free(vec);
		munmap(addr, (size_t)size);
		return -1;
	}
	for (size_t i = 0; i < pages; i++) {
		unsigned long long start = (unsigned long long)i * page;
		unsigned long long end = start + page < size ? start + page : size;

		if (vec[i] & 1)
			*resident += end - start;
	}
	*total += size;
	free(vec);
	munmap(addr, (size_t)size);
	return 0;
}

static void
usage(FILE *out)
{
	fprintf(out,
		"Usage: bench-app [--sleep SECONDS] MANIFEST\n"
		"       bench-app --create MANIFEST\n"
		"       bench-app --residency MANIFEST\n"
		"Maps (touching every page) and reads the files MANIFEST lists, prints the\n"
		"time that took in microseconds, then sleeps with the files still mapped.\n"
		"Manifest lines: \"mmap SIZE PATH\" or \"read SIZE PATH\" (SIZE: bytes, K, M, G;\n"
		"0 = whole file). --create makes each file SIZE bytes of random data\n"
		"(skipping lines with SIZE 0). --residency prints the bytes of the mmap\n"
		"and of the read lines that are in the page cache, and their totals.\n");
}

int
main(int argc, char **argv)
{
	Manifest manifest = { 0 };
	Mapping *mappings = NULL;
	unsigned char *buf = NULL;
	unsigned long sleep_seconds = 0;
	int create = 0, resident = 0, status = EXIT_OK, argi = 1;
	struct timespec t0, t1;

	for (; argi < argc && argv[argi][0] == '-'; argi++) {
		if (strcmp(argv[argi], "--create") == 0) {
			create = 1;
		} else if (strcmp(argv[argi], "--residency") == 0) {
			resident = 1;
		} else if (strcmp(argv[argi], "--sleep") == 0 && argi + 1 < argc) {
			char *end;

			errno = 0;
			sleep_seconds = strtoul(argv[++argi], &end, 10);
			if (errno || *end || argv[argi][0] == '-') {
				usage(stderr);
				return EXIT_USAGE;
			}
		} else if (strcmp(argv[argi], "--help") == 0) {
			usage(stdout);
			return EXIT_OK;
		} else {
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argi != argc - 1 || (create && resident)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (manifest_load(argv[argi], &manifest) < 0)
		return EXIT_FAILED;
	buf = malloc(CHUNK);
	mappings = calloc(manifest.n ? manifest.n : 1, sizeof(*mappings));
	if (!buf || !mappings) {
		fprintf(stderr, "bench-app: out of memory\n");
		status = EXIT_FAILED;
		goto out;
	}

	if (create) {
		uint64_t state = 0x9e3779b97f4a7c15ULL;

		for (size_t i = 0; i < manifest.n; i++) {
			if (create_file(&manifest.entries[i], buf, &state) < 0) {
				status = EXIT_FAILED;
				break;
			}
		}
		goto out;
	}

	if (resident) {
		unsigned long long res[2] = { 0, 0 }, total[2] = { 0, 0 };

		for (size_t i = 0; i < manifest.n; i++) {
			const Entry *e = &manifest.entries[i];

			if (residency(e, &res[e->kind], &total[e->kind]) < 0) {
				status = EXIT_FAILED;
				goto out;
			}
		}
		printf("mmap %llu %llu\nread %llu %llu\n",
		       res[ENTRY_MMAP], total[ENTRY_MMAP], res[ENTRY_READ], total[ENTRY_READ]);
		goto out;
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < manifest.n; i++) {
		const Entry *e = &manifest.entries[i];
		int r = e->kind == ENTRY_MMAP ? load_mmap(e, &mappings[i]) : load_read(e, buf);

		if (r < 0) {
			status = EXIT_FAILED;
			goto out;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	printf("%lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000LL +
			 (t1.tv_nsec - t0.tv_nsec) / 1000);
	fflush(stdout);
	while (sleep_seconds > 0) {
		unsigned chunk = sleep_seconds > 86400 ? 86400 : (unsigned)sleep_seconds;

		sleep_seconds -= chunk - sleep(chunk);
	}
out:
	for (size_t i = 0; mappings && i < manifest.n; i++) {
		if (mappings[i].addr)
			munmap(mappings[i].addr, mappings[i].length);
	}
	free(mappings);
	free(buf);
	manifest_free(&manifest);
	return status;
}
