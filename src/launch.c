/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Launch: the policy of an exec event (launch.h), apart from the daemon
 * that receives the events and from the page cache that measures them.
 */
#include "config.h"

#include "launch.h"

#include "order.h"

#include <stdlib.h>
#include <string.h>

/* The hold one launch asks for. */
typedef struct HeldStart {
	gint64 exec_at;       /* monotonic us of the exec */
	gint64 until;         /* the end it asks for */
} HeldStart;

struct Launch {
	LaunchHooks hooks;
	LaunchRate rate;
	LaunchStats stats;
	/* exe paths (owned) whose measurement runs elsewhere and whose start was a launch */
	GHashTable *pending_launches;
	/* exe path (owned) -> HeldStart (owned): the launches holding now */
	GHashTable *holds;
	gint64 held_until;    /* the hold last set through the hook, 0: none */
	LaunchBudget budget;
};

LaunchDecision
launch_decide(const Conf *conf, gint64 model_time, const Exe *exe, gint64 now_us)
{
	LaunchDecision d = { FALSE, 0, FALSE };

	g_return_val_if_fail(conf != NULL && exe != NULL, d);

	/* Not seen running for two cycles: a launch, not a repeat. */
	d.launch = model_time - exe->update_time > 2 * conf->cycle;
	/*
	 * At once, before the probe says whether the set is cached: the
	 * probe runs on a worker and can come late, after the program has
	 * read its set beside a background batch.
	 */
	if (d.launch && (conf->execpause > 0 || conf->launchfetchkb > 0))
		d.hold_until = now_us + MAX(conf->execpause * 1000,
					    (gint64)conf->startupwindow * G_USEC_PER_SEC);
	d.measure = exe->hits_checked_at == 0 ||
		    now_us - exe->hits_checked_at >=
			    (!d.launch && exe->hits_cached ? LAUNCH_REPEAT_MEASURE : 1) *
			    (gint64)conf->cycle * G_USEC_PER_SEC;
	return d;
}

/* Budget comes back at 1 us per LAUNCH_HOLD_SHARE us. */
static void
budget_refill(LaunchBudget *budget, gint64 now_us)
{
	if (now_us > budget->at) {
		gint64 back = (now_us - budget->at) / LAUNCH_HOLD_SHARE;

		budget->spent = MAX(budget->spent - back, 0);
		/* Only the whole microseconds given back move the clock on. */
		budget->at += back * LAUNCH_HOLD_SHARE;
		if (budget->spent == 0)
			budget->at = now_us;
	}
}

gint64
launch_budget_take(LaunchBudget *budget, gint64 want_us, gint64 now_us)
{
	gint64 granted;

	g_return_val_if_fail(budget != NULL, 0);

	budget_refill(budget, now_us);
	granted = CLAMP(want_us, 0, LAUNCH_HOLD_BURST_US - budget->spent);
	budget->spent += granted;
	return granted;
}

void
launch_budget_give(LaunchBudget *budget, gint64 us, gint64 now_us)
{
	g_return_if_fail(budget != NULL);

	budget_refill(budget, now_us);
	budget->spent = MAX(budget->spent - MAX(us, 0), 0);
}

gboolean
launch_hits_cached(const LaunchHits *hits)
{
	guint64 missing;

	g_return_val_if_fail(hits != NULL, FALSE);

	/*
	 * Files whose residency the kernel would not tell count as missing:
	 * reading them costs nothing where their pages are cached after all.
	 */
	missing = hits->bytes - MIN(hits->resident, hits->bytes);
	return missing == 0 || missing * 10 <= hits->bytes;
}

LaunchFetch
launch_fetch_decide(const Conf *conf, const LaunchHits *hits, LaunchRate *rate, gint64 now_us)
{
	gint64 next;

	g_return_val_if_fail(conf != NULL && hits != NULL && rate != NULL, LAUNCH_FETCH_OFF);

	if (conf->launchfetchkb <= 0)
		return LAUNCH_FETCH_OFF;
	if (launch_hits_cached(hits))
		return LAUNCH_FETCH_CACHED;
	/* Each batch moves the clear time on by an interval; a burst may run ahead. */
	next = MAX(rate->clear_at, now_us) + LAUNCH_FETCH_INTERVAL_US;
	if (next - now_us > LAUNCH_FETCH_BURST * LAUNCH_FETCH_INTERVAL_US)
		return LAUNCH_FETCH_LIMITED;
	rate->clear_at = next;
	return LAUNCH_FETCH_READ;
}

/* A learned range of the set, or a run of them merged. */
typedef struct FetchSpan {
	const char *path;     /* borrowed from the map */
	guint64 start;
	guint64 end;          /* exclusive */
	float prob;           /* the likeliest of its maps */
	guint first;          /* the exe's index of its first map: the tie-break */
} FetchSpan;

/* By path, then offset: the order in which one file's ranges merge. */
static gint
by_place(gconstpointer a, gconstpointer b)
{
	const FetchSpan *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c != 0)
		return c;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Most likely used first; in the exe's own order among equals. */
static gint
by_prob(gconstpointer a, gconstpointer b)
{
	const FetchSpan *x = a, *y = b;

	if (x->prob != y->prob)
		return x->prob > y->prob ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * Merges the spans of each file across gaps of at most
 * LAUNCH_MERGE_GAP_BYTES and drops the files whose merged spans total
 * less than min_file_bytes; spans[0 .. n) is in by_place() order.
 * Returns how many spans are left, at the front of spans.
 */
static guint
merge_spans(FetchSpan *spans, guint n, guint64 min_file_bytes)
{
	guint out = 0, i = 0;

	while (i < n) {
		guint file_first = out;
		guint64 file_bytes = 0;
		const char *path = spans[i].path;

		for (; i < n && strcmp(spans[i].path, path) == 0; i++) {
			FetchSpan *last = out > file_first ? &spans[out - 1] : NULL;

			if (last && spans[i].start <= last->end + LAUNCH_MERGE_GAP_BYTES) {
				last->end = MAX(last->end, spans[i].end);
				last->prob = MAX(last->prob, spans[i].prob);
				last->first = MIN(last->first, spans[i].first);
				continue;
			}
			spans[out++] = spans[i];
		}
		for (guint k = file_first; k < out; k++)
			file_bytes += spans[k].end - spans[k].start;
		if (file_bytes < min_file_bytes)
			out = file_first;
	}
	return out;
}

GArray *
launch_fetch_requests(const Exe *exe, guint64 max_bytes, guint64 min_file_bytes)
{
	GArray *requests = order_requests_new();
	g_autofree FetchSpan *spans = NULL;
	const ExeMap *maps;
	guint64 total = 0;
	guint n, k = 0;

	g_return_val_if_fail(exe != NULL, requests);

	n = exe->exemaps->len;
	if (n == 0)
		return requests;
	maps = exe->exemaps->data;
	spans = g_new(FetchSpan, n);
	for (guint i = 0; i < n; i++) {
		const Map *map = maps[i].map;

		/* Its file is gone or another one: never read (see learn_check_files()). */
		if (map->length == 0 || map->learn.stale)
			continue;
		spans[k++] = (FetchSpan){ map->path, map->offset, map->offset + map->length,
					  maps[i].prob, i };
	}
	qsort(spans, k, sizeof(*spans), by_place);
	k = merge_spans(spans, k, min_file_bytes);
	qsort(spans, k, sizeof(*spans), by_prob);
	for (guint i = 0; i < k && total < max_bytes; i++) {
		guint64 length = MIN(spans[i].end - spans[i].start, max_bytes - total);

		order_requests_add(requests, spans[i].path, spans[i].start, length);
		total += length;
	}
	return requests;
}

Launch *
launch_new(const LaunchHooks *hooks)
{
	Launch *launch;

	g_return_val_if_fail(hooks != NULL && hooks->measure != NULL, NULL);

	launch = g_new0(Launch, 1);
	launch->hooks = *hooks;
	launch->pending_launches = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	launch->holds = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	return launch;
}

void
launch_free(Launch *launch)
{
	if (!launch)
		return;
	g_hash_table_destroy(launch->pending_launches);
	g_hash_table_destroy(launch->holds);
	g_free(launch);
}

/* The launch-time prefetch of a measured start. */
static void
launch_fetch(Launch *launch, const Conf *conf, const Exe *exe, const LaunchHits *hits,
	     gint64 now)
{
	const LaunchHooks *h = &launch->hooks;
	LaunchRate before = launch->rate;
	GArray *requests;
	guint64 bytes = 0;

	switch (launch_fetch_decide(conf, hits, &launch->rate, now)) {
	case LAUNCH_FETCH_OFF:
		return;
	case LAUNCH_FETCH_CACHED:
		launch->stats.cached++;
		return;
	case LAUNCH_FETCH_LIMITED:
		launch->stats.limited++;
		return;
	case LAUNCH_FETCH_READ:
		break;
	}
	requests = launch_fetch_requests(exe, (guint64)conf->launchfetchkb * 1024,
					 LAUNCH_MIN_FILE_BYTES);
	for (guint i = 0; i < requests->len; i++)
		bytes += g_array_index(requests, OrderRequest, i).length;
	if (requests->len == 0) {
		/* Only small files: the program reads them as cheaply itself. */
		g_debug("%s started with its learned set not cached: only small files, left to it",
			exe->path);
		g_array_unref(requests);
		launch->rate = before;
		launch->stats.small++;
	} else if (!h->fetch(h->data, exe, requests)) {
		/* Nothing was read: the rate bound owes nothing either. */
		launch->rate = before;
		launch->stats.refused++;
		return;
	} else {
		launch->stats.fetches++;
		launch->stats.fetch_bytes += bytes;
	}
}

/*
 * Sets the reader's hold to the latest end the launches holding ask for,
 * as far as the budget allows; a hold that ends early gives its unused
 * time back. The hook is called only when the hold changes.
 */
static void
hold_apply(Launch *launch, gint64 now)
{
	const LaunchHooks *h = &launch->hooks;
	GHashTableIter iter;
	gpointer value;
	gint64 want = 0, held = launch->held_until, set;

	g_hash_table_iter_init(&iter, launch->holds);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		const HeldStart *held_start = value;

		if (held_start->until <= now)
			g_hash_table_iter_remove(&iter);
		else
			want = MAX(want, held_start->until);
	}
	if (held <= now)
		held = 0;
	if (want > held) {
		gint64 from = MAX(held, now);
		gint64 granted = launch_budget_take(&launch->budget, want - from, now);

		if (granted < want - from) {
			launch->stats.hold_capped++;
			g_debug("launches held the background readahead for long: held %" G_GINT64_FORMAT
				" of %" G_GINT64_FORMAT " ms more", granted / 1000, (want - from) / 1000);
		}
		set = granted > 0 ? from + granted : held;
	} else if (want < held) {
		launch_budget_give(&launch->budget, held - MAX(want, now), now);
		set = want;
	} else {
		set = held;
	}
	if (set == launch->held_until)
		return;
	launch->held_until = set;
	if (h->hold)
		h->hold(h->data, set);
}

/*
 * A launch's probe found its set cached (launch_hits_cached()): the
 * program needs the disk for at most a tenth of it, so its hold ends at
 * execpause's end (already past: now).
 */
static void
hold_release(Launch *launch, const Conf *conf, const char *exe_path, gint64 now)
{
	HeldStart *held_start = g_hash_table_lookup(launch->holds, exe_path);
	gint64 until;

	if (!held_start)
		return;
	until = held_start->exec_at + conf->execpause * 1000;
	if (until >= held_start->until)
		return;
	held_start->until = until;
	launch->stats.hold_released++;
	hold_apply(launch, now);
	g_debug("%s: its set is cached, its hold ends at its execpause", exe_path);
}

/* A measurement of exe's set: counted, the launch's hold kept or ended, and the fetch. */
static void
measured(Launch *launch, const Conf *conf, Exe *exe, const LaunchHits *hits, gint64 now,
	 gboolean is_launch)
{
	exe_hits_add(&exe->hits, hits->bytes, hits->prefetched, hits->probed, hits->resident);
	exe->hits_cached = launch_hits_cached(hits);
	/*
	 * Whatever of its set is missing the program reads from the disk,
	 * where a background batch (after a cache drop, the whole prediction)
	 * would queue beside it: the hold stays for the start-up window, not
	 * only execpause, which ends before a cold start does. A set cached
	 * enough to need no urgent batch needs no hold either: held for the
	 * whole window, every launch of a warm machine spent the hold's
	 * budget (one per step of the launch benchmark's training: 2.5 of 5
	 * s granted to the launches measured after it).
	 */
	if (is_launch && launch_hits_cached(hits))
		hold_release(launch, conf, exe->path, now);
	if (launch->hooks.fetch)
		launch_fetch(launch, conf, exe, hits, now);
}

Exe *
launch_exec(Launch *launch, Model *model, const Conf *conf, const char *exe_path)
{
	const LaunchHooks *h;
	LaunchDecision d;
	Exe *exe;
	gint64 now;

	g_return_val_if_fail(launch != NULL && model != NULL && conf != NULL, NULL);
	g_return_val_if_fail(exe_path != NULL, NULL);

	exe = model_lookup_exe(model, exe_path);
	if (!exe)
		return NULL;
	h = &launch->hooks;
	now = h->now ? h->now(h->data) : g_get_monotonic_time();
	d = launch_decide(conf, model->time, exe, now);
	if (d.hold_until) {
		HeldStart *held_start = g_new(HeldStart, 1);

		*held_start = (HeldStart){ now, d.hold_until };
		g_hash_table_replace(launch->holds, g_strdup(exe->path), held_start);
		launch->stats.holds++;
		hold_apply(launch, now);
		g_debug("%s launched: background readahead held %" G_GINT64_FORMAT
			" ms from now", exe->path,
			MAX(launch->held_until - now, (gint64)0) / 1000);
	}
	exe->hits.starts++;
	if (d.measure) {
		LaunchHits hits = { 0 };

		/* Set first: a start while the measurement runs elsewhere is not measured again. */
		exe->hits_checked_at = now;
		if (h->measure(h->data, exe, model->prefetch_seq, &hits))
			measured(launch, conf, exe, &hits, now, d.launch);
		else if (d.launch)
			g_hash_table_add(launch->pending_launches, g_strdup(exe->path));
		else
			g_hash_table_remove(launch->pending_launches, exe->path);
	}
	model->dirty = TRUE;
	return exe;
}

void
launch_measured(Launch *launch, Model *model, const Conf *conf, const char *exe_path,
		const LaunchHits *hits)
{
	const LaunchHooks *h;
	gboolean is_launch;
	Exe *exe;

	g_return_if_fail(launch != NULL && model != NULL && conf != NULL);
	g_return_if_fail(exe_path != NULL && hits != NULL);

	is_launch = g_hash_table_remove(launch->pending_launches, exe_path);
	exe = model_lookup_exe(model, exe_path);
	if (!exe)
		return;
	h = &launch->hooks;
	measured(launch, conf, exe, hits, h->now ? h->now(h->data) : g_get_monotonic_time(),
		 is_launch);
	model->dirty = TRUE;
}

void
launch_fetch_done(Launch *launch, guint64 bytes)
{
	g_return_if_fail(launch != NULL);

	launch->stats.done++;
	launch->stats.read_bytes += bytes;
}

const LaunchStats *
launch_get_stats(const Launch *launch)
{
	g_return_val_if_fail(launch != NULL, NULL);

	return &launch->stats;
}
