/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Order: the requests of a readahead batch and the order they are read
 * in: sorting by a SortStrategy, merging ranges of a file, cutting a
 * batch into slices.
 *
 * Pure: nothing here opens a file. Where a strategy needs to know where
 * a file lies (SORT_INODE, SORT_BLOCK), the caller passes an
 * OrderExamineFunc that fills the sort keys of one file's requests; the
 * reader's examines the real file (readahead_examine()), a test's fills
 * them from a table.
 *
 * Ownership: a request array (order_requests_new()) owns the paths of
 * its requests; the functions reorder and merge in place.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

/* The values of the sortstrategy key: how each slice is put in order. */
typedef enum {
	SORT_NONE = 0,   /* as given: most likely first */
	SORT_PATH = 1,   /* by path (then offset) */
	SORT_INODE = 2,  /* by device and inode number */
	SORT_BLOCK = 3,  /* by device and the physical place of each range */
} SortStrategy;

/* How much a request's sort keys tell of its place on the disk. */
typedef enum {
	ORDER_LOCATED = 0,   /* block is the physical byte of offset */
	ORDER_EXAMINED = 1,  /* block is the inode number */
	ORDER_UNKNOWN = 2,   /* could not be examined: sorts last, by path */
} OrderRank;

typedef struct OrderRequest {
	char *path;           /* owned by the array */
	guint64 offset;
	guint64 length;
	/*
	 * The file to read: st_dev and st_ino that the opened file must have
	 * (the identity the model learned), or 0 and 0 to read whatever file
	 * the path names. Ranges of one path and two identities are two files.
	 */
	guint64 want_dev;
	guint64 want_ino;
	/* sort keys, filled while sorting by SORT_INODE or SORT_BLOCK */
	OrderRank rank;
	dev_t dev;
	guint64 inode;
	guint64 block;        /* physical byte offset of `offset`, or the inode */
} OrderRequest;

/* A GArray of OrderRequest whose elements free their path. */
GArray *order_requests_new(void);
/* Appends a copy of path with the range [offset, offset + length). */
void order_requests_add(GArray *requests, const char *path, guint64 offset, guint64 length);
/* The same, for a file of a known identity (dev, ino): see OrderRequest.want_dev. */
void order_requests_add_file(GArray *requests, const char *path, guint64 offset, guint64 length,
			     guint64 dev, guint64 ino);
/* Whether two requests are of one file: one path and one identity to check. */
gboolean order_same_file(const OrderRequest *a, const OrderRequest *b);

/*
 * Fills the sort keys of the n requests reqs[0 .. n), which all name the
 * same file (reqs[0].path), for strategy SORT_INODE or SORT_BLOCK: with
 * order_set_examined() and, where a range's physical place is known,
 * rank ORDER_LOCATED and its block; or with order_set_unknown().
 */
typedef void (*OrderExamineFunc)(OrderRequest *reqs, guint n, SortStrategy strategy,
				 gpointer user_data);

/* The keys of a file that was examined: its device and inode (as the block too). */
void order_set_examined(OrderRequest *reqs, guint n, dev_t dev, guint64 inode);
/* The keys of a file that could not be examined: all zero, sorting last. */
void order_set_unknown(OrderRequest *reqs, guint n);

/* strategy itself if it is one of SortStrategy, else SORT_BLOCK, with a warning. */
SortStrategy order_known_strategy(SortStrategy strategy);

/* Sorts by path, then offset, then the longer range first (every strategy's tie-break). */
void order_sort_by_path(OrderRequest *reqs, guint n);

/* Sorts requests whose keys are filled: by rank, device, block, then path. */
void order_sort_by_keys(OrderRequest *reqs, guint n);

/*
 * Sorts requests by strategy (an unknown one is SORT_BLOCK). For
 * SORT_INODE and SORT_BLOCK, examine is called once per file, its
 * requests together, and files that could not be examined sort last.
 */
void order_sort(GArray *requests, SortStrategy strategy, OrderExamineFunc examine,
		gpointer user_data);

/*
 * Merges neighbouring ranges of the same file that overlap, touch, or
 * lie at most gap bytes apart (the gap is then read too) into one range
 * over both. Only neighbours merge: sort by path first to merge all of a
 * file's ranges. order_merge() is the same with gap 0.
 */
void order_merge_near(GArray *requests, guint64 gap);
void order_merge(GArray *requests);

/*
 * The end (exclusive) of the slice that starts at requests[start]: the
 * requests after it, in order, while their lengths sum to at most
 * slice_bytes; the first request always belongs to it, however long.
 * slice_bytes == 0 makes one slice of everything.
 */
guint order_slice_end(const GArray *requests, guint start, guint64 slice_bytes);
