/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/interval.c: the saturating end, the gap rule of
 * interval_near() and interval_append(), clamping, merging and
 * subtracting, each from a table of hand-computed cases, with ends at
 * 2^64 where a wrap-around would give a small range.
 */
#include "config.h"

#include "testutil.h"
#include "interval.h"

#define TOP G_MAXUINT64

static GArray *
array_of(const Interval *ivs, guint n)
{
	GArray *a = interval_array_new();

	g_array_append_vals(a, ivs, n);
	return a;
}

static void
assert_intervals(const GArray *got, const Interval *want, guint n)
{
	ck_assert_uint_eq(got->len, n);
	for (guint i = 0; i < n; i++) {
		const Interval *g = &g_array_index(got, Interval, i);

		ck_assert_msg(g->start == want[i].start && g->end == want[i].end,
			      "interval %u: [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
			      "), want [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ")",
			      i, g->start, g->end, want[i].start, want[i].end);
	}
}

START_TEST(test_from_range)
{
	Interval iv = interval_from_range(10, 5);

	ck_assert_uint_eq(iv.start, 10);
	ck_assert_uint_eq(iv.end, 15);
	ck_assert_uint_eq(interval_length(iv), 5);
	/* 2^64 - 10 + 100 wraps to 89: saturated at 2^64 - 1 instead, 10 bytes long. */
	iv = interval_from_range(TOP - 10, 100);
	ck_assert_uint_eq(iv.end, TOP);
	ck_assert_uint_eq(interval_length(iv), 10);
	iv = interval_from_range(7, 0);
	ck_assert_uint_eq(iv.end, 7);
	ck_assert_uint_eq(interval_add_saturating(TOP, 1), TOP);
	ck_assert_uint_eq(interval_add_saturating(TOP - 1, 1), TOP);
	ck_assert_uint_eq(interval_add_saturating(3, 4), 7);
}
END_TEST

static const struct {
	Interval a, b;
	guint64 gap;
	gboolean near;
} near_cases[] = {
	{ { 0, 100 }, { 50, 150 }, 0, TRUE },     /* overlapping */
	{ { 0, 100 }, { 100, 110 }, 0, TRUE },    /* touching */
	{ { 0, 100 }, { 101, 110 }, 0, FALSE },   /* one byte apart */
	{ { 0, 100 }, { 150, 160 }, 50, TRUE },   /* exactly gap apart */
	{ { 0, 100 }, { 151, 160 }, 50, FALSE },  /* gap + 1 apart */
	{ { 150, 160 }, { 0, 100 }, 50, TRUE },   /* the same, in the other order */
	{ { 151, 160 }, { 0, 100 }, 50, FALSE },
	{ { 10, 10 }, { 0, 100 }, 0, TRUE },      /* an empty interval inside */
	/* 5 apart near 2^64: gap 4 keeps them apart, a gap past 2^64 saturates. */
	{ { TOP - 20, TOP - 10 }, { TOP - 5, TOP - 4 }, 4, FALSE },
	{ { TOP - 20, TOP - 10 }, { TOP - 5, TOP - 4 }, 5, TRUE },
	{ { TOP - 20, TOP - 10 }, { TOP - 5, TOP - 4 }, TOP, TRUE },
};

START_TEST(test_near)
{
	ck_assert_int_eq(interval_near(near_cases[_i].a, near_cases[_i].b, near_cases[_i].gap),
			 near_cases[_i].near);
}
END_TEST

START_TEST(test_hull_and_clamp)
{
	Interval iv;

	iv = interval_hull((Interval){ 0, 100 }, (Interval){ 10, 20 });
	ck_assert_uint_eq(iv.start, 0);
	ck_assert_uint_eq(iv.end, 100);   /* 0.6.4 kept the second end: [0, 20) */
	iv = interval_hull((Interval){ 50, 60 }, (Interval){ 0, 10 });
	ck_assert_uint_eq(iv.start, 0);
	ck_assert_uint_eq(iv.end, 60);

	/* A request of 1 MiB on a file of 10000 bytes: [0, 10000). */
	iv = interval_clamp((Interval){ 0, 1048576 }, (Interval){ 0, 10000 });
	ck_assert_uint_eq(iv.start, 0);
	ck_assert_uint_eq(iv.end, 10000);
	/* A page [4096, 8192) cut to the range [5000, 6000). */
	iv = interval_clamp((Interval){ 4096, 8192 }, (Interval){ 5000, 6000 });
	ck_assert_uint_eq(iv.start, 5000);
	ck_assert_uint_eq(iv.end, 6000);
	/* Disjoint: empty, at the later start. */
	iv = interval_clamp((Interval){ 0, 10 }, (Interval){ 20, 30 });
	ck_assert_uint_eq(iv.start, 20);
	ck_assert_uint_eq(iv.end, 20);
	iv = interval_clamp((Interval){ 40, 50 }, (Interval){ 20, 30 });
	ck_assert_uint_eq(iv.start, 40);
	ck_assert_uint_eq(iv.end, 40);
}
END_TEST

START_TEST(test_append)
{
	g_autoptr(GArray) runs = interval_array_new();
	/*
	 * Missing pages of 4 KiB at [100,104) [124,128) [200,204) pages,
	 * gap 64 pages - 1 byte: the 20-page gap is bridged, the 72-page one
	 * is not. In bytes: [409600, 425984) + [507904, 524288) -> [409600,
	 * 524288), then [819200, 835584) apart.
	 */
	const Interval want[] = { { 409600, 524288 }, { 819200, 835584 } };
	const guint64 gap = 64 * 4096 - 1;

	interval_append(runs, (Interval){ 409600, 425984 }, gap);
	interval_append(runs, (Interval){ 507904, 524288 }, gap);
	interval_append(runs, (Interval){ 819200, 835584 }, gap);
	assert_intervals(runs, want, G_N_ELEMENTS(want));

	/* Exactly 64 pages apart is one byte too far for that gap: a new run. */
	interval_append(runs, (Interval){ 835584 + 64 * 4096, 835584 + 65 * 4096 }, gap);
	ck_assert_uint_eq(runs->len, 3);
	/* Touching extends; a contained one changes nothing. */
	interval_append(runs, (Interval){ 835584 + 65 * 4096, 835584 + 66 * 4096 }, 0);
	interval_append(runs, (Interval){ 835584 + 65 * 4096, 835584 + 65 * 4096 + 1 }, 0);
	ck_assert_uint_eq(runs->len, 3);
	ck_assert_uint_eq(g_array_index(runs, Interval, 2).start, 835584 + 64 * 4096);
	ck_assert_uint_eq(g_array_index(runs, Interval, 2).end, 835584 + 66 * 4096);
	ck_assert_uint_eq(interval_total(runs),
			  (524288 - 409600) + (835584 - 819200) + 2 * 4096);
}
END_TEST

START_TEST(test_merge)
{
	/* Unsorted, with a duplicate, a containment, a touch and a gap of one byte. */
	const Interval in[] = {
		{ 201, 202 }, { 50, 150 }, { 0, 100 }, { 150, 200 }, { 0, 100 },
		{ 10, 20 }, { 300, 300 },
	};
	const Interval want0[] = { { 0, 200 }, { 201, 202 }, { 300, 300 } };
	const Interval want1[] = { { 0, 202 }, { 300, 300 } };
	const Interval want_all[] = { { 0, 300 } };
	g_autoptr(GArray) a = array_of(in, G_N_ELEMENTS(in));
	g_autoptr(GArray) b = array_of(in, G_N_ELEMENTS(in));
	g_autoptr(GArray) c = array_of(in, G_N_ELEMENTS(in));
	g_autoptr(GArray) empty = interval_array_new();

	interval_merge(a, 0);
	assert_intervals(a, want0, G_N_ELEMENTS(want0));
	interval_merge(b, 1);
	assert_intervals(b, want1, G_N_ELEMENTS(want1));
	/* 202 to 300 is 98 bytes. */
	interval_merge(c, 98);
	assert_intervals(c, want_all, G_N_ELEMENTS(want_all));
	interval_merge(empty, 0);
	ck_assert_uint_eq(empty->len, 0);
}
END_TEST

START_TEST(test_sort)
{
	const Interval in[] = { { 5, 6 }, { 0, 1 }, { 0, 10 }, { TOP - 1, TOP }, { 5, 9 } };
	const Interval want[] = { { 0, 10 }, { 0, 1 }, { 5, 9 }, { 5, 6 }, { TOP - 1, TOP } };
	g_autoptr(GArray) a = array_of(in, G_N_ELEMENTS(in));

	interval_sort(a);
	assert_intervals(a, want, G_N_ELEMENTS(want));
}
END_TEST

START_TEST(test_subtract)
{
	/* Sorted by start, overlapping among themselves. */
	const Interval have[] = { { 10, 20 }, { 15, 30 }, { 40, 50 }, { 90, 200 } };
	const Interval want[] = { { 0, 10 }, { 30, 40 }, { 50, 90 } };
	const Interval want_inside[] = { { 32, 38 } };
	const Interval want_whole[] = { { 5, 8 } };
	g_autoptr(GArray) h = array_of(have, G_N_ELEMENTS(have));
	g_autoptr(GArray) pieces = interval_array_new();

	interval_subtract((Interval){ 0, 100 }, h, pieces);
	assert_intervals(pieces, want, G_N_ELEMENTS(want));

	g_array_set_size(pieces, 0);
	interval_subtract((Interval){ 32, 38 }, h, pieces);
	assert_intervals(pieces, want_inside, G_N_ELEMENTS(want_inside));

	/* Covered entirely: nothing. */
	g_array_set_size(pieces, 0);
	interval_subtract((Interval){ 12, 28 }, h, pieces);
	ck_assert_uint_eq(pieces->len, 0);

	/* Nothing to subtract (NULL or empty): the interval itself. */
	g_array_set_size(pieces, 0);
	interval_subtract((Interval){ 5, 8 }, NULL, pieces);
	assert_intervals(pieces, want_whole, G_N_ELEMENTS(want_whole));
	g_array_set_size(h, 0);
	g_array_set_size(pieces, 0);
	interval_subtract((Interval){ 5, 8 }, h, pieces);
	assert_intervals(pieces, want_whole, G_N_ELEMENTS(want_whole));
}
END_TEST

static Suite *
interval_suite(void)
{
	Suite *s = suite_create("interval");
	TCase *tc = tcase_create("interval");

	tcase_add_test(tc, test_from_range);
	tcase_add_loop_test(tc, test_near, 0, G_N_ELEMENTS(near_cases));
	tcase_add_test(tc, test_hull_and_clamp);
	tcase_add_test(tc, test_append);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_sort);
	tcase_add_test(tc, test_subtract);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(interval_suite());
}
