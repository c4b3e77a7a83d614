/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Process churn for tests/churn.sh: starts the given programs in turn,
 * RATE a second for SECONDS, reaping them as they exit, then prints how
 * many it started. A shell loop manages a hundred a second at best;
 * posix_spawn() reaches thousands.
 *
 *   spawner SECONDS RATE PROGRAM...
 */
#include "config.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	double seconds, rate, start, t;
	unsigned long started = 0, failed = 0;
	int n_progs;

	if (argc < 4) {
		fprintf(stderr, "usage: spawner SECONDS RATE PROGRAM...\n");
		return 2;
	}
	seconds = atof(argv[1]);
	rate = atof(argv[2]);
	n_progs = argc - 3;
	start = now();
	while ((t = now() - start) < seconds) {
		/* Catch up to where the rate says we should be. */
		while ((double)started < t * rate && now() - start < seconds) {
			char *args[] = { argv[3 + started % (unsigned long)n_progs], NULL };
			pid_t pid;

			if (posix_spawn(&pid, args[0], NULL, NULL, args, environ) != 0)
				failed++;
			started++;
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	printf("%lu\n", started - failed);
	return failed > started / 2;
}
