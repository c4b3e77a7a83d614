/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/cmdline.c: every option, the errors, --version and
 * --help (captured from stdout).
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "cmdline.h"

static char *tmpdir;

static void
setup(void)
{
	tmpdir = tu_make_tempdir();
}

static void
teardown(void)
{
	tu_rm_rf(tmpdir);
	g_clear_pointer(&tmpdir, g_free);
}

/* Parses a NULL-terminated argument list (argv[0] is added). */
static gboolean
parse_args(const char *const *args, Options *opts, gboolean *exit_now, GError **error)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();

	g_ptr_array_add(argv, (char *)"preload");
	for (size_t i = 0; args[i]; i++)
		g_ptr_array_add(argv, (char *)args[i]);
	g_ptr_array_add(argv, NULL);
	return cmdline_parse((int)argv->len - 1, (char **)argv->pdata, opts, exit_now, error);
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* What a successful parse must give; NULL strings mean "the default". */
typedef struct {
	const char *const *args;
	const char *conffile, *statefile, *logfile;   /* logfile: NULL = not set */
	gboolean conffile_given, foreground, once, debug;
	int nice, verbose;
} CmdlineCase;

static const CmdlineCase cmdline_cases[] = {
	{ ARGS("--once"), NULL, NULL, NULL, FALSE, FALSE, TRUE, FALSE, 15, 4 },
	{ ARGS("-c", "/x.conf"), "/x.conf", NULL, NULL, TRUE, FALSE, FALSE, FALSE, 15, 4 },
	{ ARGS("--conffile", "/x.conf"), "/x.conf", NULL, NULL, TRUE, FALSE, FALSE, FALSE, 15, 4 },
	{ ARGS("--conffile=/x.conf"), "/x.conf", NULL, NULL, TRUE, FALSE, FALSE, FALSE, 15, 4 },
	{ ARGS("-c", ""), "", NULL, NULL, TRUE, FALSE, FALSE, FALSE, 15, 4 },
	{ ARGS("-s", "/s"), NULL, "/s", NULL, FALSE, FALSE, FALSE, FALSE, 15, 4 },
	{ ARGS("--statefile", "/s"), NULL, "/s", NULL, FALSE, FALSE, FALSE, FALSE, 15, 4 },
	{ ARGS("-s", ""), NULL, "", NULL, FALSE, FALSE, FALSE, FALSE, 15, 4 },
	{ ARGS("-l", "/l"), NULL, NULL, "/l", FALSE, FALSE, FALSE, FALSE, 15, 4 },
	{ ARGS("--logfile", "/l"), NULL, NULL, "/l", FALSE, FALSE, FALSE, FALSE, 15, 4 },
	{ ARGS("-l", ""), NULL, NULL, "", FALSE, FALSE, FALSE, FALSE, 15, 4 },
	{ ARGS("-f"), NULL, NULL, NULL, FALSE, TRUE, FALSE, FALSE, 15, 4 },
	{ ARGS("--foreground"), NULL, NULL, NULL, FALSE, TRUE, FALSE, FALSE, 15, 4 },
	{ ARGS("-n", "5"), NULL, NULL, NULL, FALSE, FALSE, FALSE, FALSE, 5, 4 },
	{ ARGS("--nice", "-3"), NULL, NULL, NULL, FALSE, FALSE, FALSE, FALSE, -3, 4 },
	{ ARGS("-V", "0"), NULL, NULL, NULL, FALSE, FALSE, FALSE, FALSE, 15, 0 },
	{ ARGS("--verbose", "10"), NULL, NULL, NULL, FALSE, FALSE, FALSE, FALSE, 15, 10 },
	{ ARGS("--verbose=7"), NULL, NULL, NULL, FALSE, FALSE, FALSE, FALSE, 15, 7 },
	/* -d: foreground, stderr, 9; an explicit -V or -l still applies */
	{ ARGS("-d"), NULL, NULL, "", FALSE, TRUE, FALSE, TRUE, 15, 9 },
	{ ARGS("--debug"), NULL, NULL, "", FALSE, TRUE, FALSE, TRUE, 15, 9 },
	{ ARGS("-V", "2", "-d"), NULL, NULL, "", FALSE, TRUE, FALSE, TRUE, 15, 2 },
	{ ARGS("-d", "-l", "/l"), NULL, NULL, "/l", FALSE, TRUE, FALSE, TRUE, 15, 9 },
	/* everything at once, short options bundled */
	{ ARGS("-fc", "/c", "-s", "/s", "-l", "/l", "-n", "0", "-V", "3", "--once", "--"),
	  "/c", "/s", "/l", TRUE, TRUE, TRUE, FALSE, 0, 3 },
};

START_TEST(test_cmdline_defaults)
{
	g_autoptr(GError) error = NULL;
	Options opts;
	gboolean exit_now = TRUE;

	ck_assert(parse_args(ARGS(NULL), &opts, &exit_now, &error));
	ck_assert(!exit_now);
	ck_assert_str_eq(opts.conffile, SYSCONFDIR "/preload.conf");
	ck_assert_str_eq(opts.statefile, LOCALSTATEDIR "/lib/preload/preload.state");
	ck_assert_ptr_null(opts.logfile);
	ck_assert(!opts.conffile_given);
	ck_assert(!opts.foreground);
	ck_assert(!opts.once);
	ck_assert(!opts.debug);
	ck_assert_int_eq(opts.nice, 15);
	ck_assert_int_eq(opts.verbose, 4);
	cmdline_clear(&opts);
	ck_assert_ptr_null(opts.conffile);
}
END_TEST

START_TEST(test_cmdline_options)
{
	const CmdlineCase *c = &cmdline_cases[_i];
	g_autoptr(GError) error = NULL;
	Options opts;
	gboolean exit_now = TRUE;

	ck_assert_msg(parse_args(c->args, &opts, &exit_now, &error), "case %d: %s", _i,
		      error ? error->message : "");
	ck_assert(!exit_now);
	ck_assert_str_eq(opts.conffile, c->conffile ? c->conffile : CMDLINE_DEFAULT_CONFFILE);
	ck_assert_str_eq(opts.statefile, c->statefile ? c->statefile : CMDLINE_DEFAULT_STATEFILE);
	if (c->logfile)
		ck_assert_str_eq(opts.logfile, c->logfile);
	else
		ck_assert_ptr_null(opts.logfile);
	ck_assert_int_eq(opts.conffile_given, c->conffile_given);
	ck_assert_int_eq(opts.foreground, c->foreground);
	ck_assert_int_eq(opts.once, c->once);
	ck_assert_int_eq(opts.debug, c->debug);
	ck_assert_int_eq(opts.nice, c->nice);
	ck_assert_int_eq(opts.verbose, c->verbose);
	cmdline_clear(&opts);
}
END_TEST

/* --control: the socket path, the default, and '' for none. */
START_TEST(test_cmdline_control)
{
	const struct {
		const char *const *args;
		const char *expected;
	} cases[] = {
		{ ARGS("-f"), CMDLINE_DEFAULT_CONTROL },
		{ ARGS("--control", "/tmp/x/control"), "/tmp/x/control" },
		{ ARGS("--control="), "" },
	};

	ck_assert_str_eq(CMDLINE_DEFAULT_CONTROL, "/run/preload/control");
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		Options opts;
		gboolean exit_now = TRUE;

		ck_assert(parse_args(cases[i].args, &opts, &exit_now, &error));
		ck_assert_str_eq(opts.controlfile, cases[i].expected);
		cmdline_clear(&opts);
		ck_assert_ptr_null(opts.controlfile);
	}
}
END_TEST

static const char *const *const cmdline_errors[] = {
	ARGS("-V", "11"),
	ARGS("-V", "-1"),
	ARGS("--verbose", "abc"),
	ARGS("-V", "4x"),
	ARGS("-V"),
	ARGS("extra"),
	ARGS("-f", "extra"),
	ARGS("--", "extra"),
	ARGS("--bogus"),
	ARGS("-c"),
	ARGS("-n", "abc"),
	ARGS("-n", "99999999999"),
};

START_TEST(test_cmdline_errors)
{
	g_autoptr(GError) error = NULL;
	Options opts;
	gboolean exit_now = TRUE;

	ck_assert(!parse_args(cmdline_errors[_i], &opts, &exit_now, &error));
	ck_assert(error != NULL && error->domain == G_OPTION_ERROR);
	ck_assert(!exit_now);
	/* opts holds the defaults, and can be cleared */
	ck_assert_str_eq(opts.conffile, CMDLINE_DEFAULT_CONFFILE);
	ck_assert_int_eq(opts.verbose, 4);
	cmdline_clear(&opts);
}
END_TEST

/* Runs parse_args with stdout sent to a file; returns what was printed. */
static char *
parse_capturing_stdout(const char *const *args, gboolean *ok, gboolean *exit_now)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = g_build_filename(tmpdir, "stdout", NULL);
	char *text = NULL;
	Options opts;
	int saved = dup(STDOUT_FILENO);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	ck_assert(saved >= 0 && fd >= 0);
	fflush(stdout);
	ck_assert(dup2(fd, STDOUT_FILENO) >= 0);
	*ok = parse_args(args, &opts, exit_now, &error);
	fflush(stdout);
	ck_assert(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	close(fd);
	cmdline_clear(&opts);
	ck_assert(g_file_get_contents(path, &text, NULL, NULL));
	return text;
}

START_TEST(test_cmdline_version)
{
	gboolean ok = FALSE, exit_now = FALSE;
	g_autofree char *out = parse_capturing_stdout(ARGS("--version"), &ok, &exit_now);
	g_autofree char *out2 = NULL;

	ck_assert(ok);
	ck_assert(exit_now);
	ck_assert_str_eq(out, "preload " PACKAGE_VERSION "\n");
	exit_now = FALSE;
	out2 = parse_capturing_stdout(ARGS("-v"), &ok, &exit_now);
	ck_assert(ok && exit_now);
	ck_assert_str_eq(out2, "preload " PACKAGE_VERSION "\n");
}
END_TEST

START_TEST(test_cmdline_help)
{
	static const char *const expected[] = {
		"--conffile", "--statefile", "--logfile", "--foreground", "--nice",
		"--verbose", "--debug", "--once", "--version", "--help",
		"SIGHUP", "SIGUSR1", "SIGUSR2", "SIGTERM", "readahead",
	};
	gboolean ok = FALSE, exit_now = FALSE;
	g_autofree char *out = parse_capturing_stdout(ARGS("-h"), &ok, &exit_now);
	g_autofree char *out2 = NULL;

	ck_assert(ok);
	ck_assert(exit_now);
	for (size_t i = 0; i < G_N_ELEMENTS(expected); i++)
		ck_assert_msg(strstr(out, expected[i]), "--help lacks %s", expected[i]);
	exit_now = FALSE;
	out2 = parse_capturing_stdout(ARGS("--help"), &ok, &exit_now);
	ck_assert(ok && exit_now);
	ck_assert_str_eq(out2, out);
}
END_TEST

static Suite *
cmdline_suite(void)
{
	Suite *s = suite_create("cmdline");
	TCase *tc = tcase_create("cmdline");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_cmdline_defaults);
	tcase_add_test(tc, test_cmdline_control);
	tcase_add_loop_test(tc, test_cmdline_options, 0, G_N_ELEMENTS(cmdline_cases));
	tcase_add_loop_test(tc, test_cmdline_errors, 0, G_N_ELEMENTS(cmdline_errors));
	tcase_add_test(tc, test_cmdline_version);
	tcase_add_test(tc, test_cmdline_help);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(cmdline_suite());
}
