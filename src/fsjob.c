/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * FsJob (fsjob.h): a small pool of worker threads for the file-system
 * calls the main thread must not make itself, with a deadline per job,
 * abandoned threads counted and capped, and the devices that missed a
 * deadline refused for a while.
 *
 * The pool is reference counted: its owner holds one reference and each
 * thread one, so that a thread blocked past fsjob_pool_free() still finds
 * its lock when it returns. One lock guards every field below "guarded".
 */
#include "config.h"

#include "fsjob.h"

#include <time.h>

#include "cputime.h"

typedef enum {
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_FINISHED,   /* ran; in pool->finished until delivered */
	JOB_ABANDONED,  /* given up while running: its thread frees it */
	JOB_DROPPED,    /* running when the pool was freed: its thread frees it */
} JobState;

struct FsJobCtx {
	FsJobPool *pool;
	guint64 dev;              /* __atomic: the device being touched */
	FsJobRunFunc run;
	gpointer data;
	GDestroyNotify data_free;
	FsJobDoneFunc done;
	gpointer user_data;
	GDestroyNotify user_free;
	gint64 deadline;          /* monotonic us */
	guint64 abandoned_dev;    /* the device refused when it was abandoned, 0: none */
	JobState state;           /* guarded by pool->lock */
};

/* A device on which a job was abandoned. */
typedef struct Refusal {
	guint stuck;              /* its abandoned threads still blocked */
	gint64 until;             /* refused until then at least (monotonic us) */
} Refusal;

struct FsJobPool {
	gint refs;                /* atomic: the owner's and one per thread */
	GMainContext *context;    /* a reference */
	GSource *source;          /* delivers done calls and deadlines, in context */
	guint workers_max;
	guint queue_max;
	guint max_stuck;
	gint64 deadline_us;
	GMutex lock;
	GCond cond;               /* a job was queued, or the pool is stopping */
	/* guarded: */
	GQueue queue;             /* FsJobCtx, JOB_QUEUED, oldest first */
	GPtrArray *running;       /* FsJobCtx, JOB_RUNNING */
	GQueue finished;          /* FsJobCtx, JOB_FINISHED */
	guint live;               /* worker threads not abandoned */
	guint idle;               /* ... of which waiting for a job */
	guint starting;           /* ... of which not yet running */
	gboolean stopping;        /* fsjob_pool_free() was called */
	GHashTable *devices;      /* guint64 dev -> Refusal */
	FsJobStats stats;         /* but stuck and devices_refused, computed */
	guint stuck;              /* abandoned threads still blocked */
};

typedef struct PoolSource {
	GSource source;
	FsJobPool *pool;
} PoolSource;

static void
pool_unref(FsJobPool *pool)
{
	if (!g_atomic_int_dec_and_test(&pool->refs))
		return;
	g_ptr_array_unref(pool->running);
	g_hash_table_unref(pool->devices);
	g_main_context_unref(pool->context);
	g_cond_clear(&pool->cond);
	g_mutex_clear(&pool->lock);
	g_free(pool);
}

/* The job's data, on whichever thread holds the job last. */
static void
job_free_data(FsJobCtx *job)
{
	if (job->data_free && job->data)
		job->data_free(job->data);
	job->data = NULL;
}

/* The caller's side of a job, in the main context. */
static void
job_free_user(FsJobCtx *job)
{
	if (job->user_free && job->user_data)
		job->user_free(job->user_data);
	job->user_data = NULL;
}

/*
 * A worker: runs queued jobs until the pool stops or a job it runs is
 * abandoned, in which case it frees that job when (if) the call returns
 * and ends.
 */
static gpointer
worker_thread(gpointer data)
{
	FsJobPool *pool = data;

	g_mutex_lock(&pool->lock);
	pool->starting--;
	for (;;) {
		FsJobCtx *job;
		gint64 cpu;

		while (!pool->stopping && g_queue_is_empty(&pool->queue)) {
			pool->idle++;
			g_cond_wait(&pool->cond, &pool->lock);
			pool->idle--;
		}
		if (pool->stopping)
			break;
		job = g_queue_pop_head(&pool->queue);
		job->state = JOB_RUNNING;
		g_ptr_array_add(pool->running, job);
		g_mutex_unlock(&pool->lock);

		cpu = cputime_thread_us();
		job->run(job, job->data);
		cpu = cputime_thread_us() - cpu;

		g_mutex_lock(&pool->lock);
		pool->stats.cpu_us += (guint64)MAX(cpu, (gint64)0);
		if (job->state == JOB_ABANDONED || job->state == JOB_DROPPED) {
			if (job->state == JOB_ABANDONED) {
				Refusal *r = job->abandoned_dev ?
					g_hash_table_lookup(pool->devices, &job->abandoned_dev) : NULL;

				pool->stuck--;
				if (r && r->stuck > 0)
					r->stuck--;
			}
			g_mutex_unlock(&pool->lock);
			job_free_data(job);
			g_free(job);
			pool_unref(pool);
			return NULL;
		}
		g_ptr_array_remove_fast(pool->running, job);
		job->state = JOB_FINISHED;
		g_queue_push_tail(&pool->finished, job);
		g_main_context_wakeup(pool->context);
	}
	pool->live--;
	g_mutex_unlock(&pool->lock);
	pool_unref(pool);
	return NULL;
}

/* Starts workers for the queued jobs no idle worker will take (lock held). */
static void
spawn_workers(FsJobPool *pool)
{
	while (pool->queue.length > pool->idle + pool->starting && pool->live < pool->workers_max &&
	       pool->stuck < pool->max_stuck) {
		GThread *thread;

		g_atomic_int_inc(&pool->refs);
		thread = g_thread_try_new("fsjob", worker_thread, pool, NULL);
		if (!thread) {
			/* The queued jobs expire at their deadline. */
			(void)g_atomic_int_dec_and_test(&pool->refs);
			return;
		}
		/* Never joined: a worker may block for good. */
		g_thread_unref(thread);
		pool->live++;
		pool->starting++;
	}
}

/* The earliest deadline of the queued and running jobs, G_MAXINT64 if none (lock held). */
static gint64
next_deadline(FsJobPool *pool)
{
	gint64 next = G_MAXINT64;
	FsJobCtx *head = g_queue_peek_head(&pool->queue);

	if (head)
		next = head->deadline;
	for (guint i = 0; i < pool->running->len; i++)
		next = MIN(next, ((FsJobCtx *)pool->running->pdata[i])->deadline);
	return next;
}

static gboolean
device_refused(FsJobPool *pool, guint64 dev, gint64 now)
{
	Refusal *r;

	if (dev == 0)
		return FALSE;
	r = g_hash_table_lookup(pool->devices, &dev);
	if (!r)
		return FALSE;
	if (r->stuck > 0 || now < r->until)
		return TRUE;
	g_hash_table_remove(pool->devices, &dev);
	return FALSE;
}

/* Gives up the running job (lock held): its thread is left blocked, its device refused. */
static void
job_abandon(FsJobPool *pool, FsJobCtx *job, gint64 now)
{
	guint64 dev = __atomic_load_n(&job->dev, __ATOMIC_RELAXED);

	g_ptr_array_remove_fast(pool->running, job);
	job->state = JOB_ABANDONED;
	pool->stats.abandoned++;
	pool->stuck++;
	pool->live--;
	if (dev != 0) {
		Refusal *r = g_hash_table_lookup(pool->devices, &dev);

		if (!r) {
			guint64 *key = g_new(guint64, 1);

			*key = dev;
			r = g_new0(Refusal, 1);
			g_hash_table_insert(pool->devices, key, r);
		}
		r->stuck++;
		r->until = now + FSJOB_REFUSE_US;
		job->abandoned_dev = dev;
	}
}

/* The caller's side of a job given up, taken under the lock: its thread may free the job. */
typedef struct Late {
	FsJobDoneFunc done;
	gpointer user_data;
	GDestroyNotify user_free;
	FsJobCtx *expired;        /* the job, if it never ran (the main thread frees it) */
} Late;

static void
late_add(GArray *late, FsJobCtx *job, gboolean expired)
{
	Late l = { job->done, job->user_data, job->user_free, expired ? job : NULL };

	job->user_data = NULL;
	job->user_free = NULL;
	g_array_append_val(late, l);
}

/*
 * Delivers what is due: the finished jobs, and those past their
 * deadline (abandoned if running, expired if still queued).
 */
static void
pool_dispatch(FsJobPool *pool)
{
	GQueue finished = G_QUEUE_INIT;
	g_autoptr(GArray) late = g_array_new(FALSE, FALSE, sizeof(Late));
	gint64 now = g_get_monotonic_time();
	FsJobCtx *job;

	g_mutex_lock(&pool->lock);
	finished = pool->finished;
	g_queue_init(&pool->finished);
	for (guint i = pool->running->len; i-- > 0;) {
		job = pool->running->pdata[i];
		if (job->deadline <= now) {
			job_abandon(pool, job, now);
			late_add(late, job, FALSE);
		}
	}
	while ((job = g_queue_peek_head(&pool->queue)) && job->deadline <= now) {
		(void)g_queue_pop_head(&pool->queue);
		pool->stats.expired++;
		late_add(late, job, TRUE);
	}
	pool->stats.done += finished.length;
	/* Those abandoned are replaced, up to the cap. */
	spawn_workers(pool);
	g_mutex_unlock(&pool->lock);

	while ((job = g_queue_pop_head(&finished))) {
		job->done(FSJOB_DONE, job->data, job->user_data);
		job_free_user(job);
		job_free_data(job);
		g_free(job);
	}
	for (guint i = 0; i < late->len; i++) {
		Late *l = &g_array_index(late, Late, i);

		l->done(FSJOB_ABANDONED, NULL, l->user_data);
		if (l->user_free && l->user_data)
			l->user_free(l->user_data);
		if (l->expired) {
			job_free_data(l->expired);
			g_free(l->expired);
		}
	}
}

static gboolean
source_due(FsJobPool *pool, gint *timeout)
{
	gint64 next, now;
	gboolean due;

	g_mutex_lock(&pool->lock);
	due = !g_queue_is_empty(&pool->finished);
	next = next_deadline(pool);
	g_mutex_unlock(&pool->lock);
	if (due || next == G_MAXINT64) {
		if (timeout)
			*timeout = -1;
		return due;
	}
	now = g_get_monotonic_time();
	if (next <= now)
		return TRUE;
	if (timeout)
		*timeout = (gint)MIN((next - now + 999) / 1000, G_MAXINT);
	return FALSE;
}

static gboolean
source_prepare(GSource *source, gint *timeout)
{
	return source_due(((PoolSource *)source)->pool, timeout);
}

static gboolean
source_check(GSource *source)
{
	return source_due(((PoolSource *)source)->pool, NULL);
}

static gboolean
source_dispatch(GSource *source, GSourceFunc callback, gpointer user_data)
{
	(void)callback;
	(void)user_data;
	pool_dispatch(((PoolSource *)source)->pool);
	return G_SOURCE_CONTINUE;
}

static GSourceFuncs source_funcs = {
	.prepare = source_prepare,
	.check = source_check,
	.dispatch = source_dispatch,
};

FsJobPool *
fsjob_pool_new(GMainContext *context, guint workers, guint queue_max, guint max_stuck,
	       gint64 deadline_us)
{
	FsJobPool *pool;

	g_return_val_if_fail(workers > 0 && queue_max > 0 && deadline_us > 0, NULL);

	pool = g_new0(FsJobPool, 1);
	pool->refs = 1;
	pool->context = g_main_context_ref(context ? context : g_main_context_default());
	pool->workers_max = workers;
	pool->queue_max = queue_max;
	pool->max_stuck = max_stuck;
	pool->deadline_us = deadline_us;
	g_mutex_init(&pool->lock);
	g_cond_init(&pool->cond);
	g_queue_init(&pool->queue);
	g_queue_init(&pool->finished);
	pool->running = g_ptr_array_new();
	pool->devices = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	pool->source = g_source_new(&source_funcs, sizeof(PoolSource));
	((PoolSource *)pool->source)->pool = pool;
	g_source_set_name(pool->source, "fsjob");
	(void)g_source_attach(pool->source, pool->context);
	return pool;
}

void
fsjob_pool_free(FsJobPool *pool)
{
	GQueue dropped = G_QUEUE_INIT;
	g_autoptr(GArray) running = g_array_new(FALSE, FALSE, sizeof(Late));
	FsJobCtx *job;

	if (!pool)
		return;
	g_source_destroy(pool->source);
	g_source_unref(pool->source);
	pool->source = NULL;

	g_mutex_lock(&pool->lock);
	pool->stopping = TRUE;
	while ((job = g_queue_pop_head(&pool->queue)))
		g_queue_push_tail(&dropped, job);
	while ((job = g_queue_pop_head(&pool->finished)))
		g_queue_push_tail(&dropped, job);
	for (guint i = 0; i < pool->running->len; i++) {
		job = pool->running->pdata[i];
		job->state = JOB_DROPPED;
		/* The thread frees the job and its data; the caller's side goes now. */
		late_add(running, job, FALSE);
	}
	g_ptr_array_set_size(pool->running, 0);
	g_cond_broadcast(&pool->cond);
	g_mutex_unlock(&pool->lock);

	while ((job = g_queue_pop_head(&dropped))) {
		job_free_user(job);
		job_free_data(job);
		g_free(job);
	}
	for (guint i = 0; i < running->len; i++) {
		Late *l = &g_array_index(running, Late, i);

		if (l->user_free && l->user_data)
			l->user_free(l->user_data);
	}
	pool_unref(pool);
}

FsJobSubmit
fsjob_submit(FsJobPool *pool, guint64 dev, FsJobRunFunc run, gpointer data,
	     GDestroyNotify data_free, FsJobDoneFunc done, gpointer user_data,
	     GDestroyNotify user_free)
{
	FsJobSubmit verdict = FSJOB_QUEUED;
	gint64 now = g_get_monotonic_time();
	FsJobCtx *job;

	g_return_val_if_fail(pool != NULL && run != NULL && done != NULL, FSJOB_REFUSED_FULL);

	g_mutex_lock(&pool->lock);
	if (pool->stuck >= pool->max_stuck) {
		verdict = FSJOB_REFUSED_STUCK;
		pool->stats.refused_stuck++;
	} else if (device_refused(pool, dev, now)) {
		verdict = FSJOB_REFUSED_DEVICE;
		pool->stats.refused_device++;
	} else if (pool->queue.length >= pool->queue_max) {
		verdict = FSJOB_REFUSED_FULL;
		pool->stats.refused_full++;
	}
	if (verdict != FSJOB_QUEUED) {
		g_mutex_unlock(&pool->lock);
		if (data_free && data)
			data_free(data);
		if (user_free && user_data)
			user_free(user_data);
		return verdict;
	}
	job = g_new0(FsJobCtx, 1);
	job->pool = pool;
	job->dev = dev;
	job->run = run;
	job->data = data;
	job->data_free = data_free;
	job->done = done;
	job->user_data = user_data;
	job->user_free = user_free;
	job->deadline = now + pool->deadline_us;
	job->state = JOB_QUEUED;
	g_queue_push_tail(&pool->queue, job);
	pool->stats.submitted++;
	spawn_workers(pool);
	g_cond_signal(&pool->cond);
	g_mutex_unlock(&pool->lock);
	/* The source's timeout now covers this deadline. */
	g_main_context_wakeup(pool->context);
	return FSJOB_QUEUED;
}

gboolean
fsjob_device_refused(FsJobPool *pool, guint64 dev)
{
	gboolean refused;

	g_return_val_if_fail(pool != NULL, FALSE);

	g_mutex_lock(&pool->lock);
	refused = pool->stuck >= pool->max_stuck ||
		  device_refused(pool, dev, g_get_monotonic_time());
	g_mutex_unlock(&pool->lock);
	return refused;
}

void
fsjob_ctx_set_dev(FsJobCtx *ctx, guint64 dev)
{
	g_return_if_fail(ctx != NULL);

	__atomic_store_n(&ctx->dev, dev, __ATOMIC_RELAXED);
}

void
fsjob_get_stats(FsJobPool *pool, FsJobStats *stats)
{
	GHashTableIter iter;
	gpointer value;
	gint64 now = g_get_monotonic_time();

	g_return_if_fail(pool != NULL && stats != NULL);

	g_mutex_lock(&pool->lock);
	*stats = pool->stats;
	stats->stuck = pool->stuck;
	stats->running = pool->running->len;
	stats->devices_refused = 0;
	g_hash_table_iter_init(&iter, pool->devices);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		const Refusal *r = value;

		if (r->stuck > 0 || now < r->until)
			stats->devices_refused++;
	}
	g_mutex_unlock(&pool->lock);
}
