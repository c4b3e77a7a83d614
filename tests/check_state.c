/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests for src/state.c. */
#include "config.h"

#include "testutil.h"
#include "state.h"

START_TEST(test_placeholder)
{
	ck_assert_int_eq(1, 1);
}
END_TEST

static Suite *
state_suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_placeholder);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(state_suite());
}
