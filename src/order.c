/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Order: which requests of a batch are read together and in what order.
 *
 * Every strategy starts from path order, which puts each file's ranges
 * together so that a file is examined once and its overlapping ranges
 * can merge. SORT_INODE and SORT_BLOCK then reorder the files by where
 * they lie on the disk, from keys an examine function fills in; what
 * could not be examined goes last, in path order. The ties of every
 * strategy fall back to path, offset and the longer range first, so the
 * order is total and the tests can state it exactly.
 */
#include "config.h"

#include "order.h"

#include "interval.h"

#include <stdlib.h>
#include <string.h>

/* ---- requests ---- */

static void
request_clear(gpointer data)
{
	OrderRequest *req = data;

	g_clear_pointer(&req->path, g_free);
}

GArray *
order_requests_new(void)
{
	GArray *requests = g_array_new(FALSE, TRUE, sizeof(OrderRequest));

	g_array_set_clear_func(requests, request_clear);
	return requests;
}

void
order_requests_add(GArray *requests, const char *path, guint64 offset, guint64 length)
{
	order_requests_add_file(requests, path, offset, length, 0, 0);
}

void
order_requests_add_file(GArray *requests, const char *path, guint64 offset, guint64 length,
			guint64 dev, guint64 ino)
{
	OrderRequest req = { 0 };

	g_return_if_fail(requests != NULL);
	g_return_if_fail(path != NULL);
	req.path = g_strdup(path);
	req.offset = offset;
	req.length = length;
	req.want_dev = dev;
	req.want_ino = ino;
	req.rank = ORDER_UNKNOWN;
	g_array_append_val(requests, req);
}

gboolean
order_same_file(const OrderRequest *a, const OrderRequest *b)
{
	return strcmp(a->path, b->path) == 0 && a->want_dev == b->want_dev &&
	       a->want_ino == b->want_ino;
}

static Interval
request_interval(const OrderRequest *req)
{
	return interval_from_range(req->offset, req->length);
}

/* ---- sort keys ---- */

void
order_set_examined(OrderRequest *reqs, guint n, dev_t dev, guint64 inode)
{
	for (guint i = 0; i < n; i++) {
		reqs[i].dev = dev;
		reqs[i].inode = inode;
		reqs[i].block = inode;
		reqs[i].rank = ORDER_EXAMINED;
	}
}

void
order_set_unknown(OrderRequest *reqs, guint n)
{
	for (guint i = 0; i < n; i++) {
		reqs[i].dev = 0;
		reqs[i].inode = 0;
		reqs[i].block = 0;
		reqs[i].rank = ORDER_UNKNOWN;
	}
}

SortStrategy
order_known_strategy(SortStrategy strategy)
{
	switch (strategy) {
	case SORT_NONE:
	case SORT_PATH:
	case SORT_INODE:
	case SORT_BLOCK:
		return strategy;
	default:
		g_warning("unknown sort strategy %d, sorting by block", (int)strategy);
		return SORT_BLOCK;
	}
}

/* ---- sorting ---- */

static int
cmp_u64(guint64 a, guint64 b)
{
	return (a > b) - (a < b);
}

/*
 * The tie-break of every strategy: path, identity (two files learned at
 * one path, before and after an upgrade, stay apart), offset, then the
 * longer range first.
 */
static int
cmp_path(const void *pa, const void *pb)
{
	const OrderRequest *a = pa, *b = pb;
	int c = strcmp(a->path, b->path);

	if (c != 0)
		return c;
	c = cmp_u64(a->want_dev, b->want_dev);
	if (c != 0)
		return c;
	c = cmp_u64(a->want_ino, b->want_ino);
	if (c != 0)
		return c;
	c = cmp_u64(a->offset, b->offset);
	if (c != 0)
		return c;
	return cmp_u64(b->length, a->length);
}

static int
cmp_keys(const void *pa, const void *pb)
{
	const OrderRequest *a = pa, *b = pb;
	int c = cmp_u64(a->rank, b->rank);

	if (c == 0)
		c = cmp_u64((guint64)a->dev, (guint64)b->dev);
	if (c == 0)
		c = cmp_u64(a->block, b->block);
	if (c == 0)
		c = cmp_path(a, b);
	return c;
}

void
order_sort_by_path(OrderRequest *reqs, guint n)
{
	if (n > 1)
		qsort(reqs, n, sizeof(*reqs), cmp_path);
}

void
order_sort_by_keys(OrderRequest *reqs, guint n)
{
	if (n > 1)
		qsort(reqs, n, sizeof(*reqs), cmp_keys);
}

void
order_sort(GArray *requests, SortStrategy strategy, OrderExamineFunc examine,
	   gpointer user_data)
{
	OrderRequest *reqs;
	guint i, start;

	g_return_if_fail(requests != NULL);
	strategy = order_known_strategy(strategy);
	if (strategy == SORT_NONE || requests->len < 1)
		return;

	/* Path order first: it is SORT_PATH, and it puts each file's ranges together. */
	reqs = (OrderRequest *)(void *)requests->data;
	order_sort_by_path(reqs, requests->len);
	if (strategy == SORT_PATH)
		return;

	g_return_if_fail(examine != NULL);
	for (start = 0; start < requests->len; start = i) {
		for (i = start + 1; i < requests->len; i++)
			if (!order_same_file(&reqs[i], &reqs[start]))
				break;
		examine(&reqs[start], i - start, strategy, user_data);
	}
	order_sort_by_keys(reqs, requests->len);
}

/* ---- merging ---- */

void
order_merge_near(GArray *requests, guint64 gap)
{
	OrderRequest *reqs;
	guint i, out;

	g_return_if_fail(requests != NULL);
	if (requests->len < 2)
		return;
	reqs = (OrderRequest *)(void *)requests->data;
	out = 0;
	for (i = 1; i < requests->len; i++) {
		OrderRequest *cur = &reqs[out], *next = &reqs[i];

		/*
		 * Ranges of one file that overlap, touch or lie at most gap
		 * bytes apart become one range over both. Sorted input always
		 * has next->offset >= cur->offset; the general form also
		 * serves unsorted (SORT_NONE) input. The union keeps the
		 * larger end: 0.6.4 took next's end and so shrank [0,100)
		 * followed by [10,20) to [0,20).
		 */
		if (order_same_file(cur, next) &&
		    interval_near(request_interval(cur), request_interval(next), gap)) {
			Interval both = interval_hull(request_interval(cur), request_interval(next));

			cur->offset = both.start;
			cur->length = interval_length(both);
			g_clear_pointer(&next->path, g_free);
			continue;
		}
		out++;
		if (out != i) {
			reqs[out] = *next;
			next->path = NULL;
		}
	}
	/* The slots past `out` hold NULL paths now, so shrinking frees nothing twice. */
	g_array_set_size(requests, out + 1);
}

void
order_merge(GArray *requests)
{
	order_merge_near(requests, 0);
}

/* ---- slices ---- */

guint
order_slice_end(const GArray *requests, guint start, guint64 slice_bytes)
{
	const OrderRequest *reqs;
	guint64 bytes;
	guint i;

	g_return_val_if_fail(requests != NULL, 0);
	if (start >= requests->len || slice_bytes == 0)
		return requests->len;
	reqs = (const OrderRequest *)(const void *)requests->data;
	bytes = reqs[start].length;
	for (i = start + 1; i < requests->len; i++) {
		if (bytes >= slice_bytes || reqs[i].length > slice_bytes - bytes)
			break;
		bytes += reqs[i].length;
	}
	return i;
}
