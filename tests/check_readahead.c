/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests for src/readahead.c. */
#include "config.h"

#include "testutil.h"
#include "readahead.h"

START_TEST(test_placeholder)
{
	ck_assert_int_eq(1, 1);
}
END_TEST

static Suite *
readahead_suite(void)
{
	Suite *s = suite_create("readahead");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_placeholder);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(readahead_suite());
}
