/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * FsJob: blocking file-system calls off the main thread, each with a
 * deadline.
 *
 * A stat or an open of a path that a user or a learned record chose can
 * block for as long as its file system does not answer (a dead NFS
 * server, a hung FUSE daemon), and no signal gets a thread out of it.
 * The main thread hands such calls to an FsJobPool as jobs: a bounded
 * queue served by a few worker threads. Each job's result comes back to
 * the main context (a GSource of the pool) as a call of its done
 * function. A job not over by its deadline (counted from its
 * submission) is given up: its done is called at once with
 * FSJOB_ABANDONED; if it was running, its thread is left to finish on its
 * own (never joined, not even at exit: it frees the job's data if it
 * ever returns) and another worker takes its place.
 *
 * Devices: each job names the device it is about to touch (at
 * submission, and from the worker with fsjob_ctx_set_dev() as it moves
 * from file to file). A device on which a job was abandoned is refused
 * while that job's thread is still blocked and for FSJOB_REFUSE_US after
 * (one hung mount cannot eat the workers one job at a time). At most
 * max_stuck abandoned threads may be blocked at once: at that cap every
 * new job is refused, counted, never queued. A refused job is not run
 * and its done is not called.
 *
 * Ownership: the pool is the caller's (fsjob_pool_free() drops the
 * queued jobs without calling their done, and leaves blocked threads
 * behind); a job's data is the pool's from submission and is freed with
 * data_free on the thread that last holds it; user_data is freed with
 * user_free after done (or when the job is dropped or refused).
 * fsjob_submit(), fsjob_pool_free() and the done calls belong to the
 * thread that runs the main context given to fsjob_pool_new().
 */
#pragma once

#include <glib.h>

/* Workers, queue, deadline and the cap on blocked threads of the daemon's pool. */
#define FSJOB_WORKERS 2
#define FSJOB_QUEUE_MAX 256
#define FSJOB_DEADLINE_US (2 * G_USEC_PER_SEC)
#define FSJOB_MAX_STUCK 8
/* How long a device on which a job was abandoned is refused after its thread returned. */
#define FSJOB_REFUSE_US (60 * G_USEC_PER_SEC)

typedef struct FsJobPool FsJobPool;
/* What a running job may tell its pool (fsjob_ctx_set_dev()). */
typedef struct FsJobCtx FsJobCtx;

typedef enum {
	FSJOB_DONE,       /* the job ran: its data holds the results */
	FSJOB_ABANDONED,  /* the deadline passed first: data is NULL */
} FsJobStatus;

typedef enum {
	FSJOB_QUEUED,          /* done will be called */
	FSJOB_REFUSED_DEVICE,  /* its device missed a deadline (see above) */
	FSJOB_REFUSED_STUCK,   /* max_stuck threads are blocked */
	FSJOB_REFUSED_FULL,    /* the queue holds queue_max jobs */
} FsJobSubmit;

/* On a worker thread: the blocking calls, results into data. */
typedef void (*FsJobRunFunc)(FsJobCtx *ctx, gpointer data);
/* In the main context, once per queued job. */
typedef void (*FsJobDoneFunc)(FsJobStatus status, gpointer data, gpointer user_data);

typedef struct FsJobStats {
	guint64 submitted;       /* jobs queued */
	guint64 done;            /* ... that ran within their deadline */
	guint64 expired;         /* ... still queued at their deadline: never ran */
	guint64 abandoned;       /* ... running at their deadline: their thread left behind */
	guint64 refused_device;  /* jobs refused: FSJOB_REFUSED_DEVICE */
	guint64 refused_stuck;   /* ... FSJOB_REFUSED_STUCK */
	guint64 refused_full;    /* ... FSJOB_REFUSED_FULL */
	/*
	 * CPU time (us) the workers spent in the jobs that returned (the
	 * thread's own clock around each run): the residency probes of
	 * start-up windows and hit measurements, the file checks.
	 */
	guint64 cpu_us;
	guint stuck;             /* abandoned threads still blocked now */
	guint running;           /* jobs running now (within their deadline) */
	guint devices_refused;   /* devices refused now */
} FsJobStats;

/*
 * A pool of worker threads (started as jobs come) whose done calls run
 * in context (NULL: the default one). deadline_us is every job's.
 */
FsJobPool *fsjob_pool_new(GMainContext *context, guint workers, guint queue_max,
			  guint max_stuck, gint64 deadline_us);
/* Drops the queued jobs, and ends the idle workers; never waits for a blocked one. */
void fsjob_pool_free(FsJobPool *pool);

/*
 * Queues run(data) for a worker, about device dev (0: none known, only
 * the cap refuses it). Unless refused, done(status, data, user_data)
 * follows in the main context. Refused, data and user_data are freed at
 * once.
 */
FsJobSubmit fsjob_submit(FsJobPool *pool, guint64 dev, FsJobRunFunc run, gpointer data,
			 GDestroyNotify data_free, FsJobDoneFunc done, gpointer user_data,
			 GDestroyNotify user_free);

/* Whether a job about dev would be refused now (a known hung device). */
gboolean fsjob_device_refused(FsJobPool *pool, guint64 dev);

/*
 * From the worker running a job: the device its next blocking calls
 * touch, so that a job abandoned there refuses that device.
 */
void fsjob_ctx_set_dev(FsJobCtx *ctx, guint64 dev);

void fsjob_get_stats(FsJobPool *pool, FsJobStats *stats);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsJobPool, fsjob_pool_free)
