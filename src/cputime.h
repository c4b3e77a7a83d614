/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Cputime: the CPU time of the calling thread or of the process, which
 * the daemon reports per stage and per thread (the SIGUSR1 dump).
 *
 * Pure: no state; one clock_gettime(2) per call.
 */
#pragma once

#include <glib.h>
#include <time.h>

/* The CPU time of clock (CLOCK_THREAD_CPUTIME_ID, CLOCK_PROCESS_CPUTIME_ID) in us; 0 if unreadable. */
static inline gint64
cputime_us(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts) != 0)
		return 0;
	return (gint64)ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

/* The calling thread's CPU time in us; 0 if unreadable. */
static inline gint64
cputime_thread_us(void)
{
	return cputime_us(CLOCK_THREAD_CPUTIME_ID);
}
