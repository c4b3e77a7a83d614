/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/log.c: verbosity, the log file and its reopening, the
 * journal's stderr, concurrent messages.
 *
 * Each test runs in its own process (Check's CK_FORK), so the log
 * handler and verbosity a test installs do not leak into the next.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "log.h"

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

START_TEST(test_log_verbosity)
{
	log_init(4);
	ck_assert_int_eq(log_get_verbosity(), 4);
	ck_assert(!log_detail(9));
	ck_assert(log_detail(4));
	log_set_verbosity(9);
	ck_assert(log_detail(9));
	ck_assert(!log_detail(10));
	log_set_verbosity(42);
	ck_assert_int_eq(log_get_verbosity(), 10);
	log_set_verbosity(-3);
	ck_assert_int_eq(log_get_verbosity(), 0);
}
END_TEST

static char *
read_text(const char *path)
{
	char *text = NULL;

	ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "cannot read %s", path);
	return text;
}

START_TEST(test_log_file)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = g_build_filename(tmpdir, "preload.log", NULL);
	g_autofree char *text = NULL;
	g_autoptr(GRegex) re = NULL;
	struct stat st;

	g_unsetenv("JOURNAL_STREAM");
	umask(022);
	log_init(4);
	ck_assert(log_set_file(path, &error));
	g_warning("disk %d is on fire", 3);
	g_message("a message");
	g_info("some info");
	g_debug("hidden at verbosity 4");
	g_log("GLib-GIO", G_LOG_LEVEL_WARNING, "from a library");
	log_close();

	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	text = read_text(path);
	re = g_regex_new("^\\[\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\] warning: disk 3 is on fire\n"
			 "\\[[-0-9 :]{19}\\] a message\n"
			 "\\[[-0-9 :]{19}\\] some info\n"
			 "\\[[-0-9 :]{19}\\] warning: GLib-GIO: from a library\n$",
			 0, 0, NULL);
	ck_assert_msg(g_regex_match(re, text, 0, NULL), "log file holds:\n%s", text);
}
END_TEST

/* Verbosity 2 shows warnings but not messages; 5 shows debug with its label. */
START_TEST(test_log_filter)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = g_build_filename(tmpdir, "preload.log", NULL);
	g_autofree char *text = NULL;
	g_autoptr(GRegex) re = NULL;

	g_unsetenv("JOURNAL_STREAM");
	log_init(2);
	ck_assert(log_set_file(path, &error));
	g_message("not shown");
	g_critical("shown critical");
	g_warning("shown warning");
	log_set_verbosity(1);
	g_warning("not shown either");
	log_set_verbosity(5);
	g_debug("shown debug\n");
	log_close();

	text = read_text(path);
	re = g_regex_new("^\\[[-0-9 :]{19}\\] critical: shown critical\n"
			 "\\[[-0-9 :]{19}\\] warning: shown warning\n"
			 "\\[[-0-9 :]{19}\\] debug: shown debug\n$", 0, 0, NULL);
	ck_assert_msg(g_regex_match(re, text, 0, NULL), "log file holds:\n%s", text);
}
END_TEST

START_TEST(test_log_reopen)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = g_build_filename(tmpdir, "preload.log", NULL);
	g_autofree char *rotated = g_build_filename(tmpdir, "preload.log.1", NULL);
	g_autofree char *old_text = NULL;
	g_autofree char *new_text = NULL;

	log_init(4);
	ck_assert(log_reopen(&error));      /* on stderr: nothing to do */
	ck_assert(log_set_file(path, &error));
	g_message("before rotation");
	ck_assert_int_eq(rename(path, rotated), 0);
	g_message("still the old file");
	ck_assert(log_reopen(&error));
	g_message("after rotation");
	log_close();

	old_text = read_text(rotated);
	new_text = read_text(path);
	ck_assert_ptr_nonnull(strstr(old_text, "] before rotation\n"));
	ck_assert_ptr_nonnull(strstr(old_text, "] still the old file\n"));
	ck_assert_ptr_null(strstr(old_text, "after"));
	ck_assert_ptr_nonnull(strstr(new_text, "] after rotation\n"));
	ck_assert_ptr_null(strstr(new_text, "before"));
}
END_TEST

/* A log file that cannot be opened leaves the old destination in place. */
START_TEST(test_log_open_failure)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = g_build_filename(tmpdir, "preload.log", NULL);
	g_autofree char *bad = g_build_filename(tmpdir, "no", "such", "dir.log", NULL);
	g_autofree char *text = NULL;

	log_init(4);
	ck_assert(log_set_file(path, &error));
	ck_assert(!log_set_file(bad, &error));
	ck_assert(g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT));
	ck_assert_ptr_nonnull(strstr(error->message, bad));
	g_message("kept");
	log_close();
	text = read_text(path);
	ck_assert_ptr_nonnull(strstr(text, "] kept\n"));
	ck_assert(!g_file_test(bad, G_FILE_TEST_EXISTS));
}
END_TEST

/* Points stderr at a file; returns "dev:ino" of that file. */
static char *
stderr_to_file(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	ck_assert(fd >= 0);
	ck_assert(dup2(fd, STDERR_FILENO) >= 0);
	close(fd);
	ck_assert_int_eq(fstat(STDERR_FILENO, &st), 0);
	return g_strdup_printf("%llu:%llu", (unsigned long long)st.st_dev,
			       (unsigned long long)st.st_ino);
}

START_TEST(test_log_journal)
{
	g_autofree char *path = g_build_filename(tmpdir, "journal", NULL);
	g_autofree char *id = stderr_to_file(path);
	g_autofree char *text = NULL;

	g_setenv("JOURNAL_STREAM", id, TRUE);
	log_init(7);
	g_critical("c");
	g_warning("w");
	g_message("two\nlines");
	g_info("i");
	g_debug("d");
	text = read_text(path);
	ck_assert_str_eq(text, "<3>c\n<4>w\n<5>two\n<5>lines\n<6>i\n<7>d\n");
}
END_TEST

/* JOURNAL_STREAM inherited from elsewhere: stderr is not the journal. */
START_TEST(test_log_not_journal)
{
	g_autofree char *path = g_build_filename(tmpdir, "stderr", NULL);
	g_autofree char *id = stderr_to_file(path);
	g_autofree char *text = NULL;
	g_autofree char *other = g_strconcat(id, "1", NULL);

	g_setenv("JOURNAL_STREAM", other, TRUE);
	log_init(4);
	g_warning("w");
	g_setenv("JOURNAL_STREAM", "garbage", TRUE);
	log_close();          /* re-checks where stderr goes */
	g_warning("x");
	text = read_text(path);
	ck_assert(text[0] == '[');
	ck_assert_ptr_nonnull(strstr(text, "] warning: w\n["));
	ck_assert(g_str_has_suffix(text, "] warning: x\n"));
}
END_TEST

#define LOG_THREADS 8
#define LOG_LINES 500

static gpointer
log_worker(gpointer data)
{
	int id = GPOINTER_TO_INT(data);

	for (int i = 0; i < LOG_LINES; i++)
		g_message("thread %d line %d %s", id, i, "padding-padding-padding-padding");
	return NULL;
}

/* Concurrent messages arrive whole: every line parses, none is lost. */
START_TEST(test_log_threads)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = g_build_filename(tmpdir, "preload.log", NULL);
	g_autofree char *text = NULL;
	g_autoptr(GRegex) re = NULL;
	g_auto(GStrv) lines = NULL;
	GThread *threads[LOG_THREADS];
	int next[LOG_THREADS] = { 0 };
	guint n = 0;

	log_init(4);
	ck_assert(log_set_file(path, &error));
	for (int t = 0; t < LOG_THREADS; t++)
		threads[t] = g_thread_new("log", log_worker, GINT_TO_POINTER(t));
	for (int t = 0; t < LOG_THREADS; t++)
		g_thread_join(threads[t]);
	log_close();

	text = read_text(path);
	re = g_regex_new("^\\[[-0-9 :]{19}\\] thread (\\d) line (\\d+) padding-padding-padding-padding$",
			 0, 0, NULL);
	lines = g_strsplit(text, "\n", -1);
	for (size_t i = 0; lines[i] && *lines[i]; i++, n++) {
		g_autoptr(GMatchInfo) match = NULL;
		g_autofree char *t = NULL;
		g_autofree char *l = NULL;

		ck_assert_msg(g_regex_match(re, lines[i], 0, &match), "mangled line: %s", lines[i]);
		t = g_match_info_fetch(match, 1);
		l = g_match_info_fetch(match, 2);
		/* each thread's lines stay in its own order */
		ck_assert_int_eq(atoi(l), next[atoi(t)]);
		next[atoi(t)]++;
	}
	ck_assert_uint_eq(n, LOG_THREADS * LOG_LINES);
}
END_TEST

/* ---- rate limits, on an injected clock ---- */

#define SEC G_USEC_PER_SEC

/* Logs message i of a cause through the limit at time now (seconds). */
static void
limited(LogLimit *limit, double now, int i)
{
	if (log_limit_allow(limit, (gint64)(now * SEC)))
		g_warning("file %d is unreadable", i);
}

/* The log file's lines without their timestamps. */
static char *
untimed(const char *path)
{
	g_autofree char *text = read_text(path);
	g_autoptr(GRegex) stamp = g_regex_new("^\\[[-0-9 :]{19}\\] ", G_REGEX_MULTILINE, 0, NULL);

	return g_regex_replace_literal(stamp, text, -1, 0, "", 0, NULL);
}

START_TEST(test_log_limit)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = g_build_filename(tmpdir, "preload.log", NULL);
	g_autofree char *text = NULL;
	LogLimit limit = LOG_LIMIT_INIT("read errors", G_LOG_LEVEL_WARNING, 3, 60);

	g_unsetenv("JOURNAL_STREAM");
	log_init(4);
	ck_assert(log_set_file(path, &error));
	/* Window 1 opens at 1000 s: 3 shown, 7 dropped. */
	for (int i = 0; i < 10; i++)
		limited(&limit, 1000 + i, i);
	ck_assert_uint_eq(limit.shown, 3);
	ck_assert_uint_eq(limit.suppressed, 7);
	/* 1059.9 s is still in it: dropped. */
	limited(&limit, 1059.9, 10);
	/* 1060 s ends it: the count, then a new window with message 11 shown. */
	limited(&limit, 1060, 11);
	limited(&limit, 1061, 12);
	limited(&limit, 1062, 13);
	limited(&limit, 1063, 14);
	/* A flush inside the window reports nothing... */
	log_limit_flush(&limit, 1119);
	/* ...one after it reports message 14 and closes it. */
	log_limit_flush(&limit, 1120);
	log_limit_flush(&limit, 5000);
	/* Long quiet: a fresh window, no count line. */
	limited(&limit, 9000, 15);
	log_close();

	text = untimed(path);
	ck_assert_str_eq(text,
			 "warning: file 0 is unreadable\n"
			 "warning: file 1 is unreadable\n"
			 "warning: file 2 is unreadable\n"
			 "warning: read errors: suppressed 8 similar messages in the last 60 s\n"
			 "warning: file 11 is unreadable\n"
			 "warning: file 12 is unreadable\n"
			 "warning: file 13 is unreadable\n"
			 "warning: read errors: suppressed 1 similar message in the last 60 s\n"
			 "warning: file 15 is unreadable\n");
}
END_TEST

/* Within any window of the interval at most burst messages and one count line. */
START_TEST(test_log_limit_bound)
{
	LogLimit limit = LOG_LIMIT_INIT("x", G_LOG_LEVEL_DEBUG, 5, 3600);
	guint shown = 0;

	log_init(0);
	/* One message a second for a day: 5 per hour, 24 hours. */
	for (gint64 t = 0; t < 86400; t++)
		shown += log_limit_allow(&limit, t * SEC);
	ck_assert_uint_eq(shown, 5 * 24);
	ck_assert_uint_eq(limit.suppressed, 3600 - 5);
}
END_TEST

/* Threads share a limit: the burst is never exceeded. */
static gpointer
limit_worker(gpointer data)
{
	LogLimit *limit = data;
	guint shown = 0;

	for (int i = 0; i < 1000; i++)
		shown += log_limit_allow(limit, 42 * SEC);
	return GUINT_TO_POINTER(shown);
}

/*
 * The same limit hammered the way an abandoned readahead batch and the
 * main thread share one: two threads (the machine may have two cores)
 * that spin until both run, so that their calls overlap, then call it
 * HAMMER_CALLS times each; HAMMER_ROUNDS times, on a fresh limit, so that
 * a loaded machine still runs some rounds on two cores at once. Every
 * call is either shown or counted suppressed, none lost to a race
 * (without the lock one round in a few lost counts here).
 */
#define HAMMER_THREADS 2
#define HAMMER_CALLS 500000
#define HAMMER_ROUNDS 20

typedef struct Hammer {
	LogLimit *limit;
	gint arrived;         /* atomic: threads spinning at the start */
} Hammer;

static gpointer
hammer_worker(gpointer data)
{
	Hammer *h = data;
	guint shown = 0;

	g_atomic_int_inc(&h->arrived);
	while (g_atomic_int_get(&h->arrived) < HAMMER_THREADS)
		;
	for (int i = 0; i < HAMMER_CALLS; i++)
		shown += log_limit_allow(h->limit, 42 * SEC);
	return GUINT_TO_POINTER(shown);
}

START_TEST(test_log_limit_hammer)
{
	log_init(0);
	for (int round = 0; round < HAMMER_ROUNDS; round++) {
		LogLimit limit = LOG_LIMIT_INIT("x", G_LOG_LEVEL_DEBUG, 10, 60);
		Hammer h = { .limit = &limit };
		GThread *threads[HAMMER_THREADS];
		guint shown = 0;

		for (int t = 0; t < HAMMER_THREADS; t++)
			threads[t] = g_thread_new("hammer", hammer_worker, &h);
		for (int t = 0; t < HAMMER_THREADS; t++)
			shown += GPOINTER_TO_UINT(g_thread_join(threads[t]));
		ck_assert_uint_eq(shown, 10);
		ck_assert_uint_eq(limit.shown, 10);
		ck_assert_uint_eq(limit.suppressed, HAMMER_THREADS * HAMMER_CALLS - 10);
	}
}
END_TEST

START_TEST(test_log_limit_threads)
{
	LogLimit limit = LOG_LIMIT_INIT("x", G_LOG_LEVEL_DEBUG, 10, 60);
	GThread *threads[LOG_THREADS];
	guint shown = 0;

	log_init(0);
	for (int t = 0; t < LOG_THREADS; t++)
		threads[t] = g_thread_new("limit", limit_worker, &limit);
	for (int t = 0; t < LOG_THREADS; t++)
		shown += GPOINTER_TO_UINT(g_thread_join(threads[t]));
	ck_assert_uint_eq(shown, 10);
	ck_assert_uint_eq(limit.suppressed, LOG_THREADS * 1000 - 10);
}
END_TEST

static Suite *
log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_log_verbosity);
	tcase_add_test(tc, test_log_file);
	tcase_add_test(tc, test_log_filter);
	tcase_add_test(tc, test_log_reopen);
	tcase_add_test(tc, test_log_open_failure);
	tcase_add_test(tc, test_log_journal);
	tcase_add_test(tc, test_log_not_journal);
	tcase_add_test(tc, test_log_threads);
	tcase_add_test(tc, test_log_limit);
	tcase_add_test(tc, test_log_limit_bound);
	tcase_add_test(tc, test_log_limit_threads);
	suite_add_tcase(s, tc);

	/*
	 * Tagged "kernel": it needs two threads on two cores at once, which
	 * valgrind (one thread at a time) never gives, and spins for it.
	 */
	tc = tcase_create("hammer");
	tcase_set_tags(tc, "kernel");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_log_limit_hammer);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(log_suite());
}
