/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/order.c on hand-made batches: sort orders (with the sort
 * keys of SORT_INODE and SORT_BLOCK given by a table instead of a disk),
 * merging (including the range 0.6.4 shrank, and ends near 2^64), and
 * cutting a batch into slices. Nothing here touches a file; sorting real
 * files is tested in check_readahead.c.
 */
#include "config.h"

#include "testutil.h"
#include "order.h"

#include <string.h>

#define MIB (G_GUINT64_CONSTANT(1024) * 1024)

static void
assert_req(GArray *reqs, guint i, const char *path, guint64 offset, guint64 length)
{
	const OrderRequest *r;

	ck_assert_uint_lt(i, reqs->len);
	r = &g_array_index(reqs, OrderRequest, i);
	ck_assert_str_eq(r->path, path);
	ck_assert_uint_eq(r->offset, offset);
	ck_assert_uint_eq(r->length, length);
}

/* ---- requests ---- */

START_TEST(test_requests_add_copies)
{
	g_autoptr(GArray) reqs = order_requests_new();
	char name[] = "/usr/lib/libx.so";

	order_requests_add(reqs, name, 4096, 8192);
	name[1] = 'X';
	ck_assert_uint_eq(reqs->len, 1);
	assert_req(reqs, 0, "/usr/lib/libx.so", 4096, 8192);
	ck_assert_int_eq(g_array_index(reqs, OrderRequest, 0).rank, ORDER_UNKNOWN);
}
END_TEST

/* ---- sorting ---- */

START_TEST(test_sort_path)
{
	g_autoptr(GArray) reqs = order_requests_new();

	order_requests_add(reqs, "/b", 0, 10);
	order_requests_add(reqs, "/a", 5, 1);
	order_requests_add(reqs, "/a", 0, 10);
	order_requests_add(reqs, "/a/b", 0, 1);
	order_requests_add(reqs, "/a", 0, 20);
	order_requests_add(reqs, "/", 7, 7);
	/* Offsets 2^32 apart: a difference truncated to int would call them equal or reversed. */
	order_requests_add(reqs, "/c", G_GUINT64_CONSTANT(0x100000000), 1);
	order_requests_add(reqs, "/c", 1, 1);
	/* Lengths differing by 2^32: (int)(1 - 0x100000001) == 0 would tie them. */
	order_requests_add(reqs, "/d", 0, 1);
	order_requests_add(reqs, "/d", 0, G_GUINT64_CONSTANT(0x100000001));

	/* Path order needs no examination: no function is given. */
	order_sort(reqs, SORT_PATH, NULL, NULL);
	/* strcmp: "/" < "/a" < "/a/b" < "/b" < "/c" < "/d"; offset up, length down. */
	ck_assert_uint_eq(reqs->len, 10);
	assert_req(reqs, 0, "/", 7, 7);
	assert_req(reqs, 1, "/a", 0, 20);
	assert_req(reqs, 2, "/a", 0, 10);
	assert_req(reqs, 3, "/a", 5, 1);
	assert_req(reqs, 4, "/a/b", 0, 1);
	assert_req(reqs, 5, "/b", 0, 10);
	assert_req(reqs, 6, "/c", 1, 1);
	assert_req(reqs, 7, "/c", G_GUINT64_CONSTANT(0x100000000), 1);
	assert_req(reqs, 8, "/d", 0, G_GUINT64_CONSTANT(0x100000001));
	assert_req(reqs, 9, "/d", 0, 1);
}
END_TEST

START_TEST(test_sort_none_keeps_order)
{
	g_autoptr(GArray) reqs = order_requests_new();

	order_requests_add(reqs, "/z", 9, 1);
	order_requests_add(reqs, "/a", 5, 1);
	order_requests_add(reqs, "/z", 0, 1);
	order_sort(reqs, SORT_NONE, NULL, NULL);
	assert_req(reqs, 0, "/z", 9, 1);
	assert_req(reqs, 1, "/a", 5, 1);
	assert_req(reqs, 2, "/z", 0, 1);
}
END_TEST

/*
 * Where each file lies, as an examine function would find it: a device
 * and inode, or (inode 0) a file that cannot be examined; and for
 * SORT_BLOCK the physical byte of the ranges at offsets 0 and 8192 (0:
 * a hole, not located).
 */
typedef struct {
	const char *path;
	dev_t dev;
	guint64 inode;
	guint64 block_at_0;
	guint64 block_at_8k;
} FakeFile;

static const FakeFile fake_disk[] = {
	{ "/a", 1, 30, 900000, 50000 },  /* fragmented: its second range lies first */
	{ "/b", 1, 10, 700000, 0 },
	{ "/c", 0, 0, 0, 0 },            /* gone */
	{ "/d", 2, 5, 100, 0 },          /* another device: after all of device 1 */
	{ "/e", 1, 20, 0, 0 },           /* all hole: examined, not located */
	{ "/a-missing", 0, 0, 0, 0 },
	{ "/b-missing", 0, 0, 0, 0 },
};

typedef struct {
	guint calls;
	guint requests;
	SortStrategy strategy;
} ExamineLog;

static void
fake_examine(OrderRequest *reqs, guint n, SortStrategy strategy, gpointer user_data)
{
	ExamineLog *log = user_data;
	const FakeFile *f = NULL;

	log->calls++;
	log->requests += n;
	log->strategy = strategy;
	for (guint i = 0; i < n; i++)
		ck_assert_str_eq(reqs[i].path, reqs[0].path);
	for (guint i = 0; i < G_N_ELEMENTS(fake_disk); i++)
		if (strcmp(fake_disk[i].path, reqs[0].path) == 0)
			f = &fake_disk[i];
	ck_assert_ptr_nonnull(f);
	if (f->inode == 0) {
		order_set_unknown(reqs, n);
		return;
	}
	order_set_examined(reqs, n, f->dev, f->inode);
	for (guint i = 0; strategy == SORT_BLOCK && i < n; i++) {
		guint64 block = reqs[i].offset == 0 ? f->block_at_0 : f->block_at_8k;

		if (block != 0) {
			reqs[i].block = block;
			reqs[i].rank = ORDER_LOCATED;
		}
	}
}

static GArray *
fake_batch(void)
{
	GArray *reqs = order_requests_new();

	order_requests_add(reqs, "/e", 0, 4096);
	order_requests_add(reqs, "/c", 0, 4096);
	order_requests_add(reqs, "/a", 8192, 4096);
	order_requests_add(reqs, "/d", 0, 4096);
	order_requests_add(reqs, "/b", 0, 4096);
	order_requests_add(reqs, "/a", 0, 4096);
	return reqs;
}

START_TEST(test_sort_inode_from_table)
{
	g_autoptr(GArray) reqs = fake_batch();
	ExamineLog log = { 0 };

	order_sort(reqs, SORT_INODE, fake_examine, &log);
	/* Five files, each examined once with all its requests. */
	ck_assert_uint_eq(log.calls, 5);
	ck_assert_uint_eq(log.requests, 6);
	ck_assert_int_eq(log.strategy, SORT_INODE);
	/* Device 1 by inode: /b (10), /e (20), /a (30, offset order); then device 2; /c last. */
	assert_req(reqs, 0, "/b", 0, 4096);
	assert_req(reqs, 1, "/e", 0, 4096);
	assert_req(reqs, 2, "/a", 0, 4096);
	assert_req(reqs, 3, "/a", 8192, 4096);
	assert_req(reqs, 4, "/d", 0, 4096);
	assert_req(reqs, 5, "/c", 0, 4096);
	ck_assert_int_eq(g_array_index(reqs, OrderRequest, 0).rank, ORDER_EXAMINED);
	ck_assert_uint_eq(g_array_index(reqs, OrderRequest, 0).inode, 10);
	ck_assert_uint_eq(g_array_index(reqs, OrderRequest, 0).block, 10);
	ck_assert_uint_eq(g_array_index(reqs, OrderRequest, 4).dev, 2);
	ck_assert_int_eq(g_array_index(reqs, OrderRequest, 5).rank, ORDER_UNKNOWN);
	ck_assert_uint_eq(g_array_index(reqs, OrderRequest, 5).inode, 0);
}
END_TEST

START_TEST(test_sort_block_from_table)
{
	g_autoptr(GArray) reqs = fake_batch();
	ExamineLog log = { 0 };

	order_sort(reqs, SORT_BLOCK, fake_examine, &log);
	ck_assert_uint_eq(log.calls, 5);
	ck_assert_int_eq(log.strategy, SORT_BLOCK);
	/*
	 * Located first, by device then physical byte: device 1 has /a+8192
	 * at 50000, /b at 700000, /a at 900000; device 2 has /d at 100.
	 * Then examined but not located (/e, by inode), then unknown (/c).
	 */
	assert_req(reqs, 0, "/a", 8192, 4096);
	assert_req(reqs, 1, "/b", 0, 4096);
	assert_req(reqs, 2, "/a", 0, 4096);
	assert_req(reqs, 3, "/d", 0, 4096);
	assert_req(reqs, 4, "/e", 0, 4096);
	assert_req(reqs, 5, "/c", 0, 4096);
	ck_assert_uint_eq(g_array_index(reqs, OrderRequest, 0).block, 50000);
	ck_assert_int_eq(g_array_index(reqs, OrderRequest, 3).rank, ORDER_LOCATED);
	ck_assert_int_eq(g_array_index(reqs, OrderRequest, 4).rank, ORDER_EXAMINED);
	ck_assert_uint_eq(g_array_index(reqs, OrderRequest, 4).block, 20);
}
END_TEST

START_TEST(test_sort_unknown_strategy_is_block)
{
	g_autoptr(GArray) reqs = order_requests_new();
	ExamineLog log = { 0 };

	/* Neither can be examined, so block order degenerates to path order. */
	order_requests_add(reqs, "/b-missing", 0, 1);
	order_requests_add(reqs, "/a-missing", 0, 1);
	order_sort(reqs, (SortStrategy)99, fake_examine, &log);
	ck_assert_int_eq(log.strategy, SORT_BLOCK);
	ck_assert_uint_eq(log.calls, 2);
	assert_req(reqs, 0, "/a-missing", 0, 1);
	assert_req(reqs, 1, "/b-missing", 0, 1);
	ck_assert_int_eq(order_known_strategy((SortStrategy)99), SORT_BLOCK);
	ck_assert_int_eq(order_known_strategy(SORT_INODE), SORT_INODE);
}
END_TEST

/* ---- merging ---- */

START_TEST(test_merge_cases)
{
	g_autoptr(GArray) reqs = order_requests_new();

	order_requests_add(reqs, "/f", 0, 100);    /* overlapping: [0,100)+[50,150) */
	order_requests_add(reqs, "/f", 50, 100);
	order_requests_add(reqs, "/f", 150, 50);   /* adjacent: ends at 200 */
	order_requests_add(reqs, "/f", 201, 1);    /* one byte gap: separate */
	order_requests_add(reqs, "/g", 0, 100);    /* another file, same range */
	order_requests_add(reqs, "/g", 0, 100);    /* duplicate */
	order_requests_add(reqs, "/h", 0, 100);    /* contained: the 0.6.4 shrink */
	order_requests_add(reqs, "/h", 10, 10);
	order_requests_add(reqs, "/i", 100, 0);    /* empty range at 100, then [100,110) */
	order_requests_add(reqs, "/i", 100, 10);

	order_merge(reqs);
	ck_assert_uint_eq(reqs->len, 5);
	assert_req(reqs, 0, "/f", 0, 200);   /* 0..100, ..150, ..200 */
	assert_req(reqs, 1, "/f", 201, 1);
	assert_req(reqs, 2, "/g", 0, 100);
	assert_req(reqs, 3, "/h", 0, 100);   /* 0.6.4 made this [0,20) */
	assert_req(reqs, 4, "/i", 100, 10);
}
END_TEST

START_TEST(test_merge_different_files)
{
	g_autoptr(GArray) reqs = order_requests_new();

	order_requests_add(reqs, "/f", 0, 100);
	order_requests_add(reqs, "/g", 50, 100);
	order_requests_add(reqs, "/f", 100, 100);  /* adjacent to /f but not next to it */
	order_merge(reqs);
	ck_assert_uint_eq(reqs->len, 3);
	assert_req(reqs, 0, "/f", 0, 100);
	assert_req(reqs, 1, "/g", 50, 100);
	assert_req(reqs, 2, "/f", 100, 100);
}
END_TEST

START_TEST(test_merge_unsorted)
{
	g_autoptr(GArray) reqs = order_requests_new();

	/* SORT_NONE: neighbours still merge, even when the second starts earlier. */
	order_requests_add(reqs, "/f", 50, 50);
	order_requests_add(reqs, "/f", 0, 60);     /* union [0,100) */
	order_requests_add(reqs, "/g", 0, 1);
	order_requests_add(reqs, "/f", 0, 10);     /* not adjacent to the first: stays */
	order_requests_add(reqs, "/f", 300, 10);   /* disjoint from [0,10): stays */
	order_sort(reqs, SORT_NONE, NULL, NULL);
	order_merge(reqs);
	ck_assert_uint_eq(reqs->len, 4);
	assert_req(reqs, 0, "/f", 0, 100);
	assert_req(reqs, 1, "/g", 0, 1);
	assert_req(reqs, 2, "/f", 0, 10);
	assert_req(reqs, 3, "/f", 300, 10);
}
END_TEST

/* Ranges of a file up to gap bytes apart merge, the gap included; farther ones and other files do not. */
START_TEST(test_merge_near)
{
	g_autoptr(GArray) reqs = order_requests_new();
	g_autoptr(GArray) huge = order_requests_new();

	order_requests_add(reqs, "/f", 0, 100);
	order_requests_add(reqs, "/f", 150, 50);   /* 50 apart: merged, [0,200) */
	order_requests_add(reqs, "/f", 250, 10);   /* 50 apart again: [0,260) */
	order_requests_add(reqs, "/f", 311, 9);    /* 51 apart: separate */
	order_requests_add(reqs, "/g", 330, 10);   /* another file */
	order_merge_near(reqs, 50);
	ck_assert_uint_eq(reqs->len, 3);
	assert_req(reqs, 0, "/f", 0, 260);
	assert_req(reqs, 1, "/f", 311, 9);
	assert_req(reqs, 2, "/g", 330, 10);

	/*
	 * Ranges 5 bytes apart near 2^64: a gap of 4 keeps them apart; a gap
	 * whose sum with the first end passes 2^64 saturates (wrapping round
	 * would put the limit below the second range and keep them apart).
	 */
	order_requests_add(huge, "/f", G_MAXUINT64 - 20, 10);
	order_requests_add(huge, "/f", G_MAXUINT64 - 5, 1);
	order_merge_near(huge, 4);
	ck_assert_uint_eq(huge->len, 2);
	order_merge_near(huge, G_MAXUINT64);
	ck_assert_uint_eq(huge->len, 1);
	assert_req(huge, 0, "/f", G_MAXUINT64 - 20, 16);
}
END_TEST

START_TEST(test_merge_edges)
{
	g_autoptr(GArray) empty = order_requests_new();
	g_autoptr(GArray) one = order_requests_new();
	g_autoptr(GArray) huge = order_requests_new();

	order_merge(empty);
	ck_assert_uint_eq(empty->len, 0);
	order_requests_add(one, "/f", 5, 5);
	order_merge(one);
	assert_req(one, 0, "/f", 5, 5);

	/* Ends past 2^64 saturate: [MAX-10, MAX) and [MAX-5, MAX) give [MAX-10, MAX). */
	order_requests_add(huge, "/f", G_MAXUINT64 - 10, 100);
	order_requests_add(huge, "/f", G_MAXUINT64 - 5, G_MAXUINT64);
	order_merge(huge);
	ck_assert_uint_eq(huge->len, 1);
	assert_req(huge, 0, "/f", G_MAXUINT64 - 10, 10);
}
END_TEST

/* ---- slices ---- */

static GArray *
requests_of_lengths(const guint64 *lengths, guint n)
{
	GArray *reqs = order_requests_new();

	for (guint i = 0; i < n; i++)
		order_requests_add(reqs, "/nonexistent/f", i * 10 * MIB, lengths[i]);
	return reqs;
}

START_TEST(test_slice_end)
{
	static const guint64 lengths[] = { 3 * MIB, MIB, MIB, MIB, 2 * MIB, 512 * 1024 };
	g_autoptr(GArray) reqs = requests_of_lengths(lengths, G_N_ELEMENTS(lengths));
	g_autoptr(GArray) none = order_requests_new();

	/* Longer than a slice: alone. */
	ck_assert_uint_eq(order_slice_end(reqs, 0, 2 * MIB), 1);
	/* 1 + 1 MiB fill a slice exactly. */
	ck_assert_uint_eq(order_slice_end(reqs, 1, 2 * MIB), 3);
	/* 1 + 2 MiB do not fit. */
	ck_assert_uint_eq(order_slice_end(reqs, 3, 2 * MIB), 4);
	/* A full slice takes nothing more, however small. */
	ck_assert_uint_eq(order_slice_end(reqs, 4, 2 * MIB), 5);
	ck_assert_uint_eq(order_slice_end(reqs, 5, 2 * MIB), 6);
	ck_assert_uint_eq(order_slice_end(reqs, 6, 2 * MIB), 6);
	/* 0: one slice. */
	ck_assert_uint_eq(order_slice_end(reqs, 0, 0), 6);
	ck_assert_uint_eq(order_slice_end(reqs, 4, 0), 6);
	ck_assert_uint_eq(order_slice_end(none, 0, 2 * MIB), 0);
	/* 3 + 1 + 1 + 1 + 2 MiB = 8 MiB: everything but the last. */
	ck_assert_uint_eq(order_slice_end(reqs, 0, 8 * MIB), 5);
}
END_TEST

static Suite *
order_suite(void)
{
	Suite *s = suite_create("order");
	TCase *tc;

	tc = tcase_create("sort");
	tcase_add_test(tc, test_requests_add_copies);
	tcase_add_test(tc, test_sort_path);
	tcase_add_test(tc, test_sort_none_keeps_order);
	tcase_add_test(tc, test_sort_inode_from_table);
	tcase_add_test(tc, test_sort_block_from_table);
	tcase_add_test(tc, test_sort_unknown_strategy_is_block);
	suite_add_tcase(s, tc);

	tc = tcase_create("merge");
	tcase_add_test(tc, test_slice_end);
	tcase_add_test(tc, test_merge_cases);
	tcase_add_test(tc, test_merge_different_files);
	tcase_add_test(tc, test_merge_unsorted);
	tcase_add_test(tc, test_merge_edges);
	tcase_add_test(tc, test_merge_near);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(order_suite());
}
