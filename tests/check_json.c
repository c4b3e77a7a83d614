/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests for src/json.c: commas and nesting, and strings made of hostile bytes. */
#include "config.h"

#include "testutil.h"
#include "json.h"

#include <math.h>

static char *
quoted(const char *value)
{
	GString *out = g_string_new(NULL);

	json_append_string(out, value);
	return g_string_free(out, FALSE);
}

START_TEST(test_strings)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "", "\"\"" },
		{ "/usr/bin/ls", "\"/usr/bin/ls\"" },
		{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
		{ "tab\there\nnl\rcr", "\"tab\\there\\nnl\\rcr\"" },
		{ "\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"" },
		/* valid UTF-8 is kept as it is */
		{ "caf\xc3\xa9 \xe2\x82\xac", "\"caf\xc3\xa9 \xe2\x82\xac\"" },
		/* each byte of invalid UTF-8 becomes a lone surrogate U+DC00 + byte */
		{ "/tmp/\xff\xfe", "\"/tmp/\\udcff\\udcfe\"" },
		/* a truncated sequence, then ASCII */
		{ "x\xc3y", "\"x\\udcc3y\"" },
		/* an overlong encoding of '/' is invalid */
		{ "\xc0\xaf", "\"\\udcc0\\udcaf\"" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *got = quoted(cases[i].in);

		ck_assert_msg(strcmp(got, cases[i].out) == 0, "case %zu: got %s", i, got);
	}
}
END_TEST

START_TEST(test_nesting)
{
	g_autoptr(GString) out = g_string_new(NULL);
	g_autoptr(JsonWriter) w = json_writer_new(out);

	json_begin_object(w);
	json_key(w, "a");
	json_int(w, -3);
	json_key(w, "list");
	json_begin_array(w);
	json_uint(w, 18446744073709551615ULL);
	json_double(w, 0.25);
	json_double(w, NAN);
	json_begin_object(w);
	json_end_object(w);
	json_begin_array(w);
	json_end_array(w);
	json_bool(w, TRUE);
	json_string(w, NULL);
	json_end_array(w);
	json_key(w, "b");
	json_bool(w, FALSE);
	json_end_object(w);
	ck_assert_str_eq(out->str, "{\"a\":-3,\"list\":[18446744073709551615,0.250000,null,{},[],"
			 "true,null],\"b\":false}");
}
END_TEST

static Suite *
json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("json");

	tcase_add_test(tc, test_strings);
	tcase_add_test(tc, test_nesting);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(json_suite());
}
