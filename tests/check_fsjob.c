/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/fsjob.c: jobs that return, jobs that block past their
 * deadline (on a gate the test opens, standing in for a hung mount), the
 * device refusal, the cap on blocked threads and the bounded queue.
 * Deadlines of 200 ms; the cases that wait for one are tagged "kernel"
 * (valgrind slows the threads past them).
 */
#include "config.h"

#include "testutil.h"
#include "fsjob.h"

#include <time.h>

#define DEADLINE_US (200 * 1000)

/* A gate a job waits at until the test opens it. */
typedef struct Gate {
	GMutex lock;
	GCond cond;
	gboolean open;
} Gate;

static Gate gate;
/* Atomic: jobs whose run returned, data freed. */
static gint runs;
static gint data_freed;

/* What a job carries. */
typedef struct Work {
	gboolean block;       /* wait at the gate */
	guint64 then_dev;     /* fsjob_ctx_set_dev() before blocking, 0: not */
	int result;           /* set by run */
} Work;

/* What the main context saw: the status and result of each done, in order. */
typedef struct Seen {
	int done;
	int abandoned;
	int last_result;
} Seen;

static void
setup(void)
{
	g_mutex_init(&gate.lock);
	g_cond_init(&gate.cond);
	gate.open = FALSE;
	g_atomic_int_set(&runs, 0);
	g_atomic_int_set(&data_freed, 0);
}

static void
gate_open(void)
{
	g_mutex_lock(&gate.lock);
	gate.open = TRUE;
	g_cond_broadcast(&gate.cond);
	g_mutex_unlock(&gate.lock);
}

static void
work_run(FsJobCtx *ctx, gpointer data)
{
	Work *w = data;

	if (w->then_dev)
		fsjob_ctx_set_dev(ctx, w->then_dev);
	if (w->block) {
		g_mutex_lock(&gate.lock);
		while (!gate.open)
			g_cond_wait(&gate.cond, &gate.lock);
		g_mutex_unlock(&gate.lock);
	}
	w->result = 42;
	g_atomic_int_inc(&runs);
}

static void
work_free(gpointer data)
{
	g_free(data);
	g_atomic_int_inc(&data_freed);
}

static void
work_done(FsJobStatus status, gpointer data, gpointer user_data)
{
	Seen *seen = user_data;

	if (status == FSJOB_DONE) {
		seen->done++;
		seen->last_result = ((Work *)data)->result;
	} else {
		ck_assert_ptr_null(data);
		seen->abandoned++;
	}
}

static FsJobSubmit
submit(FsJobPool *pool, guint64 dev, gboolean block, guint64 then_dev, Seen *seen)
{
	Work *w = g_new0(Work, 1);

	w->block = block;
	w->then_dev = then_dev;
	return fsjob_submit(pool, dev, work_run, w, work_free, work_done, seen, NULL);
}

/* Iterates the default context until cond holds or 5 s passed. */
#define ITERATE_UNTIL(cond) \
	do { \
		gint64 until_ = g_get_monotonic_time() + 5 * G_USEC_PER_SEC; \
		while (!(cond) && g_get_monotonic_time() < until_) \
			(void)g_main_context_iteration(NULL, TRUE); \
	} while (0)

/* Polls an atomic counter until it reaches n or 5 s passed. */
static void
wait_count(gint *counter, int n)
{
	gint64 until = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

	while (g_atomic_int_get(counter) < n && g_get_monotonic_time() < until)
		g_usleep(1000);
}

/* Three jobs that return: three done calls with their results, in the main context. */
START_TEST(test_jobs_done)
{
	g_autoptr(FsJobPool) pool = fsjob_pool_new(NULL, 2, 8, 2, 5 * G_USEC_PER_SEC);
	Seen seen = { 0 };
	FsJobStats st;

	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(submit(pool, 1, FALSE, 0, &seen), FSJOB_QUEUED);
	ITERATE_UNTIL(seen.done == 3);
	ck_assert_int_eq(seen.done, 3);
	ck_assert_int_eq(seen.abandoned, 0);
	ck_assert_int_eq(seen.last_result, 42);
	ck_assert_int_eq(g_atomic_int_get(&data_freed), 3);
	fsjob_get_stats(pool, &st);
	ck_assert_uint_eq(st.submitted, 3);
	ck_assert_uint_eq(st.done, 3);
	ck_assert_uint_eq(st.abandoned, 0);
	ck_assert_uint_eq(st.stuck, 0);
}
END_TEST

/* The calling thread's CPU clock, in us. */
static gint64
own_cpu_us(void)
{
	struct timespec ts;

	ck_assert_int_eq(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts), 0);
	return (gint64)ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

/* data: a gint64 of us. Spins until the worker's own CPU clock has run that long. */
static void
spin_run(FsJobCtx *ctx, gpointer data)
{
	gint64 until = own_cpu_us() + *(gint64 *)data;

	(void)ctx;
	while (own_cpu_us() < until)
		;
}

/* data: a gint64 of us. Sleeps that long: wall time, no CPU. */
static void
sleep_run(FsJobCtx *ctx, gpointer data)
{
	(void)ctx;
	g_usleep((gulong)*(gint64 *)data);
}

static void
count_done(FsJobStatus status, gpointer data, gpointer user_data)
{
	(void)data;
	if (status == FSJOB_DONE)
		(*(int *)user_data)++;
}

/*
 * The CPU the jobs took, by the workers' own clocks: 30 ms spun and 300
 * ms asleep count 30 ms and a little, not the 330 ms they lasted.
 */
START_TEST(test_jobs_cpu)
{
	g_autoptr(FsJobPool) pool = fsjob_pool_new(NULL, 2, 8, 2, 5 * G_USEC_PER_SEC);
	gint64 *spin = g_new(gint64, 1), *nap = g_new(gint64, 1);
	int done = 0;
	FsJobStats st;

	*spin = 30000;
	*nap = 300000;
	ck_assert_int_eq(fsjob_submit(pool, 0, spin_run, spin, g_free, count_done, &done, NULL),
			 FSJOB_QUEUED);
	ck_assert_int_eq(fsjob_submit(pool, 0, sleep_run, nap, g_free, count_done, &done, NULL),
			 FSJOB_QUEUED);
	ITERATE_UNTIL(done == 2);
	ck_assert_int_eq(done, 2);
	fsjob_get_stats(pool, &st);
	ck_assert_uint_ge(st.cpu_us, 30000);
	ck_assert_uint_lt(st.cpu_us, 130000);
}
END_TEST

/*
 * A job blocked past its deadline: its done says ABANDONED within the
 * deadline and a bit, its device is refused (not another), a job on
 * another device runs on a new worker; once the gate opens the blocked
 * thread frees the data, stuck drops to 0, and the device is still
 * refused (FSJOB_REFUSE_US after).
 */
START_TEST(test_abandon_refuses_device)
{
	g_autoptr(FsJobPool) pool = fsjob_pool_new(NULL, 1, 8, 4, DEADLINE_US);
	Seen seen = { 0 }, other = { 0 };
	gint64 t0 = g_get_monotonic_time();
	FsJobStats st;

	ck_assert_int_eq(submit(pool, 7, TRUE, 0, &seen), FSJOB_QUEUED);
	ITERATE_UNTIL(seen.abandoned == 1);
	ck_assert_int_eq(seen.abandoned, 1);
	ck_assert_int_eq(seen.done, 0);
	ck_assert_int_ge(g_get_monotonic_time() - t0, DEADLINE_US);
	ck_assert_int_lt(g_get_monotonic_time() - t0, DEADLINE_US + G_USEC_PER_SEC);
	ck_assert_int_eq(g_atomic_int_get(&data_freed), 0);
	fsjob_get_stats(pool, &st);
	ck_assert_uint_eq(st.abandoned, 1);
	ck_assert_uint_eq(st.stuck, 1);
	ck_assert_uint_eq(st.devices_refused, 1);

	ck_assert(fsjob_device_refused(pool, 7));
	ck_assert_int_eq(submit(pool, 7, FALSE, 0, &other), FSJOB_REFUSED_DEVICE);
	ck_assert_int_eq(g_atomic_int_get(&data_freed), 1);
	ck_assert(!fsjob_device_refused(pool, 8));
	ck_assert_int_eq(submit(pool, 8, FALSE, 0, &other), FSJOB_QUEUED);
	ITERATE_UNTIL(other.done == 1);
	ck_assert_int_eq(other.done, 1);

	gate_open();
	wait_count(&data_freed, 3);
	ck_assert_int_eq(g_atomic_int_get(&data_freed), 3);
	fsjob_get_stats(pool, &st);
	ck_assert_uint_eq(st.stuck, 0);
	ck_assert_uint_eq(st.refused_device, 1);
	ck_assert(fsjob_device_refused(pool, 7));
	/* The abandoned job's done is never called again. */
	ck_assert_int_eq(seen.done, 0);
}
END_TEST

/* The device a job set while running is the one refused, not the one it was submitted with. */
START_TEST(test_ctx_dev)
{
	g_autoptr(FsJobPool) pool = fsjob_pool_new(NULL, 1, 8, 4, DEADLINE_US);
	Seen seen = { 0 };

	ck_assert_int_eq(submit(pool, 3, TRUE, 9, &seen), FSJOB_QUEUED);
	ITERATE_UNTIL(seen.abandoned == 1);
	ck_assert_int_eq(seen.abandoned, 1);
	ck_assert(fsjob_device_refused(pool, 9));
	ck_assert(!fsjob_device_refused(pool, 3));
	gate_open();
	wait_count(&data_freed, 1);
}
END_TEST

/*
 * The cap: two threads blocked (max_stuck 2) refuse every new job, even
 * on a device never seen, and start no thread; one returning lifts it.
 */
START_TEST(test_stuck_cap)
{
	g_autoptr(FsJobPool) pool = fsjob_pool_new(NULL, 2, 8, 2, DEADLINE_US);
	Seen seen = { 0 }, other = { 0 };
	FsJobStats st;

	ck_assert_int_eq(submit(pool, 1, TRUE, 0, &seen), FSJOB_QUEUED);
	ck_assert_int_eq(submit(pool, 2, TRUE, 0, &seen), FSJOB_QUEUED);
	ITERATE_UNTIL(seen.abandoned == 2);
	ck_assert_int_eq(seen.abandoned, 2);
	ck_assert_int_eq(submit(pool, 3, FALSE, 0, &other), FSJOB_REFUSED_STUCK);
	ck_assert_int_eq(submit(pool, 0, FALSE, 0, &other), FSJOB_REFUSED_STUCK);
	ck_assert(fsjob_device_refused(pool, 3));
	fsjob_get_stats(pool, &st);
	ck_assert_uint_eq(st.stuck, 2);
	ck_assert_uint_eq(st.refused_stuck, 2);
	ck_assert_uint_eq(st.submitted, 2);

	gate_open();
	wait_count(&data_freed, 4);
	ck_assert_int_eq(submit(pool, 3, FALSE, 0, &other), FSJOB_QUEUED);
	ITERATE_UNTIL(other.done == 1);
	ck_assert_int_eq(other.done, 1);
	ck_assert_int_eq(other.abandoned, 0);
}
END_TEST

/*
 * The bounded queue: one worker blocked, two jobs queued behind it
 * (queue_max 2), a third refused; the queued ones expire at their
 * deadline without running, their data freed by the main thread.
 */
START_TEST(test_queue_full_and_expiry)
{
	g_autoptr(FsJobPool) pool = fsjob_pool_new(NULL, 1, 2, 1, DEADLINE_US);
	Seen blocked = { 0 }, queued = { 0 };
	FsJobStats st;

	ck_assert_int_eq(submit(pool, 1, TRUE, 0, &blocked), FSJOB_QUEUED);
	/* The worker takes it: the queue is empty again. */
	g_usleep(50 * 1000);
	ck_assert_int_eq(submit(pool, 2, FALSE, 0, &queued), FSJOB_QUEUED);
	ck_assert_int_eq(submit(pool, 2, FALSE, 0, &queued), FSJOB_QUEUED);
	ck_assert_int_eq(submit(pool, 2, FALSE, 0, &queued), FSJOB_REFUSED_FULL);
	ITERATE_UNTIL(queued.abandoned == 2 && blocked.abandoned == 1);
	ck_assert_int_eq(blocked.abandoned, 1);
	ck_assert_int_eq(queued.abandoned, 2);
	ck_assert_int_eq(queued.done, 0);
	/* The full one's and the two expired ones' data. */
	ck_assert_int_eq(g_atomic_int_get(&data_freed), 3);
	ck_assert_int_eq(g_atomic_int_get(&runs), 0);
	fsjob_get_stats(pool, &st);
	ck_assert_uint_eq(st.expired, 2);
	ck_assert_uint_eq(st.abandoned, 1);
	ck_assert_uint_eq(st.refused_full, 1);
	gate_open();
	wait_count(&data_freed, 4);
	ck_assert_int_eq(g_atomic_int_get(&runs), 1);
}
END_TEST

/* Freeing the pool with a job blocked returns at once; the job's data goes when it returns. */
START_TEST(test_free_with_blocked_job)
{
	FsJobPool *pool = fsjob_pool_new(NULL, 1, 8, 2, 5 * G_USEC_PER_SEC);
	Seen seen = { 0 };
	gint64 t0;

	ck_assert_int_eq(submit(pool, 1, TRUE, 0, &seen), FSJOB_QUEUED);
	ck_assert_int_eq(submit(pool, 1, FALSE, 0, &seen), FSJOB_QUEUED);
	/* The worker takes the first. */
	g_usleep(50 * 1000);
	t0 = g_get_monotonic_time();
	fsjob_pool_free(pool);
	ck_assert_int_lt(g_get_monotonic_time() - t0, 100 * 1000);
	/* The queued one, dropped. */
	ck_assert_int_eq(g_atomic_int_get(&data_freed), 1);
	gate_open();
	wait_count(&data_freed, 2);
	ck_assert_int_eq(g_atomic_int_get(&data_freed), 2);
	/* No done after the pool is gone. */
	ck_assert_int_eq(seen.done + seen.abandoned, 0);
}
END_TEST

static Suite *
fsjob_suite(void)
{
	Suite *s = suite_create("fsjob");
	TCase *tc = tcase_create("fsjob");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_jobs_done);
	tcase_add_test(tc, test_jobs_cpu);
	suite_add_tcase(s, tc);

	/*
	 * Tagged "kernel": they time threads against 200 ms deadlines, or a
	 * worker's start against 50 ms, which valgrind slows past.
	 */
	tc = tcase_create("deadlines");
	tcase_set_tags(tc, "kernel");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_abandon_refuses_device);
	tcase_add_test(tc, test_ctx_dev);
	tcase_add_test(tc, test_stuck_cap);
	tcase_add_test(tc, test_queue_full_and_expiry);
	tcase_add_test(tc, test_free_with_blocked_job);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(fsjob_suite());
}
