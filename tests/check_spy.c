/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests for src/spy.c. */
#include "config.h"

#include "testutil.h"
#include "spy.h"

START_TEST(test_placeholder)
{
	ck_assert_int_eq(1, 1);
}
END_TEST

static Suite *
spy_suite(void)
{
	Suite *s = suite_create("spy");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_placeholder);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(spy_suite());
}
