/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/conf.c: the configuration table and file.
 *
 * Each test runs in its own process (Check's CK_FORK), so the log
 * handler a test installs does not leak into the next.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "conf.h"

/* ---- fixture: a temporary directory and captured log messages ---- */

static char *tmpdir;
static GPtrArray *captured;      /* "LEVEL|message" of each preload-domain message */

static void
capture_handler(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
	const char *name = (level & G_LOG_LEVEL_WARNING) ? "warning"
			 : (level & G_LOG_LEVEL_MESSAGE) ? "message"
			 : (level & G_LOG_LEVEL_CRITICAL) ? "critical"
			 : (level & G_LOG_LEVEL_INFO) ? "info"
			 : (level & G_LOG_LEVEL_DEBUG) ? "debug" : "other";

	/* debug chatter is allowed; it is not part of the contract */
	if (!(level & G_LOG_LEVEL_DEBUG))
		g_ptr_array_add(captured, g_strdup_printf("%s|%s", name, message));
}

static void
setup(void)
{
	tmpdir = tu_make_tempdir();
	captured = g_ptr_array_new_with_free_func(g_free);
	g_log_set_handler(G_LOG_DOMAIN, G_LOG_LEVEL_MASK, capture_handler, NULL);
}

static void
teardown(void)
{
	tu_rm_rf(tmpdir);
	g_clear_pointer(&tmpdir, g_free);
	g_clear_pointer(&captured, g_ptr_array_unref);
}

/* Writes contents to a file in tmpdir and returns its path. */
static char *
write_conf(const char *name, const char *contents)
{
	char *path = g_build_filename(tmpdir, name, NULL);

	tu_write_file(path, contents);
	return path;
}

static void
assert_strv_eq(char *const *got, const char *const *want)
{
	size_t i;

	ck_assert_ptr_nonnull(got);
	for (i = 0; want[i]; i++) {
		ck_assert_msg(got[i] != NULL, "item %zu missing, want '%s'", i, want[i]);
		ck_assert_str_eq(got[i], want[i]);
	}
	ck_assert_msg(got[i] == NULL, "extra item %zu: '%s'", i, got[i]);
}

static const char *const default_mapprefix[] = {
	"!/proc/", "!/sys/", "!/dev/", "!/run/", "!/tmp/", "!/var/tmp/", "/usr/", "/lib", "/opt/", "/snap/", "/var/lib/snapd/snap/", "/var/lib/flatpak/", "/nix/store/", "/var/cache/", "!/", NULL
};
static const char *const default_exeprefix[] = {
	"!/usr/sbin/", "!/usr/local/sbin/", "!/proc/", "!/sys/", "!/dev/", "!/run/", "!/tmp/", "!/var/tmp/", "/usr/", "/opt/", "/snap/", "/var/lib/snapd/snap/", "/var/lib/flatpak/", "/nix/store/", "!/", NULL
};

/* ---- conf: defaults and loading ---- */

START_TEST(test_defaults)
{
	g_autoptr(Conf) conf = conf_new();

	ck_assert_int_eq(conf->cycle, 20);
	ck_assert_int_eq(conf->usecorrelation, TRUE);
	ck_assert_int_eq(conf->basemax, TRUE);
	ck_assert_int_eq(conf->lift, TRUE);
	ck_assert_int_eq(conf->successor, TRUE);
	ck_assert_int_eq(conf->frequency, TRUE);
	ck_assert_int_eq(conf->minsize, 2000000);
	ck_assert_int_eq(conf->memtotal, -10);
	ck_assert_int_eq(conf->memfree, 50);
	ck_assert_int_eq(conf->memcached, 0);
	ck_assert_int_eq(conf->memavailable, 0);
	ck_assert_int_eq(conf->halflife, 168);
	ck_assert_int_eq(conf->maxage, 90);
	ck_assert_int_eq(conf->follow, 1800);
	ck_assert_int_eq(conf->allpairs, FALSE);
	ck_assert_int_eq(conf->doscan, TRUE);
	ck_assert_int_eq(conf->dopredict, TRUE);
	ck_assert_int_eq(conf->autosave, 3600);
	ck_assert_int_eq(conf->maxprocs, 30);
	ck_assert_int_eq(conf->sortstrategy, 3);
	ck_assert_int_eq(conf->checkresidency, TRUE);
	ck_assert_int_eq(conf->trustvmstat, TRUE);
	ck_assert_int_eq(conf->warmdirs, TRUE);
	ck_assert_int_eq(conf->minavailable, 5);
	ck_assert_int_eq(conf->maxpressure, 10);
	assert_strv_eq(conf->mapprefix, default_mapprefix);
	assert_strv_eq(conf->exeprefix, default_exeprefix);
}
END_TEST

START_TEST(test_load_every_key)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *path = write_conf("all.conf",
		"# every key, none at its default\n"
		"[model]\n"
		"cycle = 7\n"
		"usecorrelation = false\n"
		"lift = false\n"
		"minsize = 1099511627776\n"
		"memtotal = -100\n"
		"memfree = 100\n"
		"memcached = 25\n"
		"memavailable = -40\n"
		"halflife = 0\n"
		"maxage = 36500\n"
		"follow = 0\n"
		"allpairs = true\n"
		"\n"
		"[system]\n"
		"doscan = 0\n"
		"dopredict = false\n"
		"autosave = 60\n"
		"mapprefix = /opt/ ; !/opt/secret/;\n"
		"exeprefix =\n"
		"maxprocs = 0\n"
		"sortstrategy = 1\n"
		"checkresidency = false\n"
		"trustvmstat = false\n"
		"warmdirs = false\n"
		"minavailable = 100\n"
		"maxpressure = 0\n");
	static const char *const want_map[] = { "/opt/", "!/opt/secret/", NULL };
	static const char *const want_empty[] = { NULL };

	ck_assert(conf_load(conf, path, &error));
	ck_assert_ptr_null(error);
	ck_assert_int_eq(conf->cycle, 7);
	ck_assert_int_eq(conf->usecorrelation, FALSE);
	ck_assert_int_eq(conf->lift, FALSE);
	ck_assert(conf->minsize == G_GINT64_CONSTANT(1099511627776));   /* 2^40, the maximum */
	ck_assert_int_eq(conf->memtotal, -100);
	ck_assert_int_eq(conf->memfree, 100);
	ck_assert_int_eq(conf->memcached, 25);
	ck_assert_int_eq(conf->memavailable, -40);
	ck_assert_int_eq(conf->halflife, 0);
	ck_assert_int_eq(conf->maxage, 36500);
	ck_assert_int_eq(conf->follow, 0);
	ck_assert_int_eq(conf->allpairs, TRUE);
	ck_assert_int_eq(conf->doscan, FALSE);
	ck_assert_int_eq(conf->dopredict, FALSE);
	ck_assert_int_eq(conf->autosave, 60);
	assert_strv_eq(conf->mapprefix, want_map);
	assert_strv_eq(conf->exeprefix, want_empty);
	ck_assert_int_eq(conf->maxprocs, 0);
	ck_assert_int_eq(conf->sortstrategy, 1);
	ck_assert_int_eq(conf->checkresidency, FALSE);
	ck_assert_int_eq(conf->trustvmstat, FALSE);
	ck_assert_int_eq(conf->warmdirs, FALSE);
	ck_assert_int_eq(conf->minavailable, 100);
	ck_assert_int_eq(conf->maxpressure, 0);
	ck_assert_uint_eq(captured->len, 0);
}
END_TEST

/*
 * One bad value per case. Before loading, the key holds a non-default
 * value, so "keeps its previous value" is told apart from "reset to the
 * default"; the file's other line (memcached = 7) must still apply.
 */
static const struct {
	const char *group, *line;
	const char *warning;   /* after "PATH: " */
} bad_values[] = {
	{ "model", "cycle = abc",
	  "[model] cycle = 'abc' is invalid: not a decimal integer (allowed 1..3600 seconds); keeping 40" },
	{ "model", "cycle = 0",
	  "[model] cycle = '0' is invalid: out of range (allowed 1..3600 seconds); keeping 40" },
	{ "model", "cycle = 3601",
	  "[model] cycle = '3601' is invalid: out of range (allowed 1..3600 seconds); keeping 40" },
	{ "model", "cycle = 20x",
	  "[model] cycle = '20x' is invalid: not a decimal integer (allowed 1..3600 seconds); keeping 40" },
	{ "model", "cycle = 99999999999999999999",
	  "[model] cycle = '99999999999999999999' is invalid: out of range (allowed 1..3600 seconds); keeping 40" },
	{ "model", "cycle =",
	  "[model] cycle = '' is invalid: not a decimal integer (allowed 1..3600 seconds); keeping 40" },
	{ "model", "cycle = 0x10",
	  "[model] cycle = '0x10' is invalid: not a decimal integer (allowed 1..3600 seconds); keeping 40" },
	{ "model", "cycle = 2 0",
	  "[model] cycle = '2 0' is invalid: not a decimal integer (allowed 1..3600 seconds); keeping 40" },
	{ "model", "memfree = 101",
	  "[model] memfree = '101' is invalid: out of range (allowed -100..100 percent); keeping 11" },
	{ "model", "usecorrelation = maybe",
	  "[model] usecorrelation = 'maybe' is invalid: not a boolean (allowed true, false, 1 or 0); keeping false" },
	{ "model", "usecorrelation = TRUE",
	  "[model] usecorrelation = 'TRUE' is invalid: not a boolean (allowed true, false, 1 or 0); keeping false" },
	{ "model", "halflife = -1",
	  "[model] halflife = '-1' is invalid: out of range (allowed 0..87600 hours); keeping 168" },
	{ "model", "maxage = 36501",
	  "[model] maxage = '36501' is invalid: out of range (allowed 0..36500 days); keeping 90" },
	{ "model", "follow = 86401",
	  "[model] follow = '86401' is invalid: out of range (allowed 0..86400 seconds); keeping 1800" },
	{ "model", "allpairs = yes",
	  "[model] allpairs = 'yes' is invalid: not a boolean (allowed true, false, 1 or 0); keeping false" },
	{ "system", "maxprocs = -1",
	  "[system] maxprocs = '-1' is invalid: out of range (allowed 0..1024 threads); keeping 2" },
	{ "system", "sortstrategy = 4",
	  "[system] sortstrategy = '4' is invalid: out of range (allowed 0..3); keeping 0" },
	{ "model", "memavailable = -101",
	  "[model] memavailable = '-101' is invalid: out of range (allowed -100..100 percent); keeping -7" },
	{ "system", "minavailable = -1",
	  "[system] minavailable = '-1' is invalid: out of range (allowed 0..100 percent); keeping 3" },
	{ "system", "maxpressure = 101",
	  "[system] maxpressure = '101' is invalid: out of range (allowed 0..100 percent); keeping 20" },
	{ "system", "checkresidency = yes",
	  "[system] checkresidency = 'yes' is invalid: not a boolean (allowed true, false, 1 or 0); keeping false" },
	{ "system", "mapprefix = /usr/\\x",
	  "[system] mapprefix = '/usr/\\x' is invalid: a bad '\\' escape, or not UTF-8 "
	  "(allowed a ';'-separated list of path prefixes); keeping '/srv/;!/'" },
};

START_TEST(test_bad_value_keeps_previous)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *contents = NULL;
	g_autofree char *path = NULL;
	g_autofree char *want = NULL;
	g_autoptr(Conf) before = NULL;
	g_autofree char *dump_before = NULL;
	g_autofree char *dump_after = NULL;

	conf->cycle = 40;
	conf->memfree = 11;
	conf->usecorrelation = FALSE;
	conf->maxprocs = 2;
	conf->sortstrategy = 0;
	conf->memavailable = -7;
	conf->minavailable = 3;
	conf->maxpressure = 20;
	conf->checkresidency = FALSE;
	g_strfreev(conf->mapprefix);
	conf->mapprefix = g_strsplit("/srv/;!/", ";", -1);

	/* The bad line sits between two good ones of another group. */
	contents = g_strdup_printf("[model]\nmemcached = 7\n[%s]\n%s\n[model]\nmemtotal = 3\n",
				   bad_values[_i].group, bad_values[_i].line);
	path = write_conf("bad.conf", contents);
	before = conf_copy(conf);
	before->memcached = 7;
	before->memtotal = 3;

	ck_assert(conf_load(conf, path, &error));
	ck_assert_int_eq(conf->memcached, 7);
	ck_assert_int_eq(conf->memtotal, 3);
	/* Everything else, including the bad key, is as it was. */
	dump_before = conf_dump(before);
	dump_after = conf_dump(conf);
	ck_assert_str_eq(dump_after, dump_before);

	want = g_strdup_printf("warning|%s: %s", path, bad_values[_i].warning);
	ck_assert_uint_eq(captured->len, 1);
	ck_assert_str_eq(captured->pdata[0], want);
}
END_TEST

/*
 * A reload (SIGHUP) reads the file over the defaults: a key taken out of
 * the file goes back to its default, as at a start, while a bad value
 * keeps the running one (not the default).
 */
START_TEST(test_reload_over_defaults)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) running = conf_new();
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *path = write_conf("reload.conf",
		"[model]\ncycle = often\n[system]\nmaxprocs = 3\n");
	static const char *const srv[] = { "/srv/", "!/", NULL };

	/* What an earlier file had set: */
	running->cycle = 7;
	running->learnreads = FALSE;
	running->maxprocs = 9;
	g_strfreev(running->mapprefix);
	running->mapprefix = g_strsplit("/srv/;!/", ";", -1);

	ck_assert(conf_reload(conf, running, path, &error));
	ck_assert_int_eq(conf->cycle, 7);          /* bad: the running value */
	ck_assert(conf->learnreads);               /* gone from the file: its default */
	assert_strv_eq(conf->mapprefix, default_mapprefix);
	ck_assert_int_eq(conf->maxprocs, 3);       /* set */
	assert_strv_eq(running->mapprefix, srv);   /* running is not touched */
	ck_assert_uint_eq(captured->len, 1);
	ck_assert(g_str_has_suffix(captured->pdata[0], "; keeping 7"));
}
END_TEST

/*
 * conf_load_data() reads exactly `len` bytes: the buffer need not end in
 * NUL, and what lies past len is not part of the file. Here the "9" after
 * len would make cycle 79 and the "x" would make the next line garbage.
 */
START_TEST(test_load_data_respects_length)
{
	static const char text[] = "[model]\ncycle = 7\n[system]\nautosave = 120\n9x";
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();

	ck_assert(conf_load_data(conf, text, sizeof(text) - 3, "buffer", &error));
	ck_assert_int_eq(conf->cycle, 7);
	ck_assert_int_eq(conf->autosave, 120);

	/* An empty file is no error and changes nothing (cycle stays 7). */
	ck_assert(conf_load_data(conf, NULL, 0, "empty", &error));
	ck_assert_int_eq(conf->cycle, 7);

	/* A 1-second cycle is allowed: the soak and churn tests run at it. */
	ck_assert(conf_load_data(conf, "[model]\ncycle=1", 16, "one", &error));
	ck_assert_int_eq(conf->cycle, 1);
}
END_TEST

START_TEST(test_values_are_trimmed)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *path = write_conf("ws.conf",
		"[model]\ncycle =   30   \nusecorrelation=false\t\n"
		"[system]\nmaxprocs=+4\nmapprefix =  ;; /a ;\t;/b c ;;\n");
	static const char *const want[] = { "/a", "/b c", NULL };

	ck_assert(conf_load(conf, path, &error));
	ck_assert_int_eq(conf->cycle, 30);
	ck_assert_int_eq(conf->usecorrelation, FALSE);
	ck_assert_int_eq(conf->maxprocs, 4);
	assert_strv_eq(conf->mapprefix, want);
	ck_assert_uint_eq(captured->len, 0);
}
END_TEST

START_TEST(test_processes_alias)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *path = write_conf("old.conf", "[system]\nprocesses = 5\n");

	ck_assert(conf_load(conf, path, &error));
	ck_assert_int_eq(conf->maxprocs, 5);
	ck_assert_uint_eq(captured->len, 0);
}
END_TEST

START_TEST(test_processes_alias_bad_value)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *path = write_conf("old.conf", "[system]\nprocesses = many\n");
	g_autofree char *want = NULL;

	ck_assert(conf_load(conf, path, &error));
	ck_assert_int_eq(conf->maxprocs, 30);
	/* The message names the key as the file spells it. */
	want = g_strdup_printf("warning|%s: [system] processes = 'many' is invalid: not a decimal "
			       "integer (allowed 0..1024 threads); keeping 30", path);
	ck_assert_uint_eq(captured->len, 1);
	ck_assert_str_eq(captured->pdata[0], want);
}
END_TEST

/* Only [system] has the old spelling. */
START_TEST(test_processes_alias_other_group)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *path = write_conf("old.conf", "[model]\nprocesses = 5\n");
	g_autofree char *want = NULL;

	ck_assert(conf_load(conf, path, &error));
	ck_assert_int_eq(conf->maxprocs, 30);
	want = g_strdup_printf("warning|%s: [model] unknown key processes, ignoring", path);
	ck_assert_uint_eq(captured->len, 1);
	ck_assert_str_eq(captured->pdata[0], want);
}
END_TEST

/* maxprocs wins over processes whichever comes first. */
static const char *const both_spellings[] = {
	"[system]\nprocesses = 5\nmaxprocs = 9\n",
	"[system]\nmaxprocs = 9\nprocesses = 5\n",
	"[system]\nprocesses = oops\nmaxprocs = 9\n",
};

START_TEST(test_processes_and_maxprocs)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *path = write_conf("both.conf", both_spellings[_i]);
	g_autofree char *want = NULL;

	ck_assert(conf_load(conf, path, &error));
	ck_assert_int_eq(conf->maxprocs, 9);
	want = g_strdup_printf("message|%s: [system] both maxprocs and its old spelling processes "
			       "are set; using maxprocs, ignoring processes", path);
	ck_assert_uint_eq(captured->len, 1);
	ck_assert_str_eq(captured->pdata[0], want);
}
END_TEST

START_TEST(test_unknown_ignored)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *path = write_conf("unknown.conf",
		"[model]\nbogus = 1\ncycle = 9\n[extra]\ncycle = 99\n[system]\nautosave = 120\n");
	g_autofree char *w1 = NULL;
	g_autofree char *w2 = NULL;

	ck_assert(conf_load(conf, path, &error));
	ck_assert_int_eq(conf->cycle, 9);
	ck_assert_int_eq(conf->autosave, 120);
	w1 = g_strdup_printf("warning|%s: [model] unknown key bogus, ignoring", path);
	w2 = g_strdup_printf("warning|%s: unknown group [extra], ignoring", path);
	ck_assert_uint_eq(captured->len, 2);
	ck_assert_str_eq(captured->pdata[0], w1);
	ck_assert_str_eq(captured->pdata[1], w2);
}
END_TEST

START_TEST(test_missing_file)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *path = g_build_filename(tmpdir, "nope.conf", NULL);

	ck_assert(!conf_load(conf, path, &error));
	ck_assert(g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT));
	ck_assert_ptr_nonnull(strstr(error->message, path));
}
END_TEST

START_TEST(test_syntax_error)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *path = write_conf("broken.conf", "[model]\ncycle = 5\nthis is not a key file\n");

	ck_assert(!conf_load(conf, path, &error));
	ck_assert(g_error_matches(error, CONF_ERROR, CONF_ERROR_UNUSABLE));
	ck_assert_ptr_nonnull(strstr(error->message, path));
}
END_TEST

/* A directory, a file that is too large, an unterminated group header. */
START_TEST(test_unusable_files)
{
	g_autoptr(GError) e1 = NULL;
	g_autoptr(GError) e2 = NULL;
	g_autoptr(GError) e3 = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *big = g_strnfill(1024 * 1024 + 1, '#');
	g_autofree char *big_path = write_conf("big.conf", big);
	g_autofree char *bad_group = write_conf("group.conf", "[model\ncycle = 5\n");

	ck_assert(!conf_load(conf, tmpdir, &e1));
	ck_assert(g_error_matches(e1, CONF_ERROR, CONF_ERROR_UNUSABLE));
	ck_assert_ptr_nonnull(strstr(e1->message, tmpdir));
	ck_assert(!conf_load(conf, big_path, &e2));
	ck_assert(g_error_matches(e2, CONF_ERROR, CONF_ERROR_UNUSABLE));
	ck_assert(!conf_load(conf, bad_group, &e3));
	ck_assert(g_error_matches(e3, CONF_ERROR, CONF_ERROR_UNUSABLE));
}
END_TEST

START_TEST(test_empty_file)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *path = write_conf("empty.conf", "");
	g_autofree char *want = NULL;
	g_autofree char *got = NULL;
	g_autoptr(Conf) defaults = conf_new();

	ck_assert(conf_load(conf, path, &error));
	want = conf_dump(defaults);
	got = conf_dump(conf);
	ck_assert_str_eq(got, want);
}
END_TEST

START_TEST(test_load_into_copy)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) orig = conf_new();
	g_autoptr(Conf) copy = conf_copy(orig);
	g_autofree char *path = write_conf("c.conf",
		"[model]\ncycle = 5\n[system]\nmapprefix = /x\nexeprefix = /y\n");
	static const char *const want_x[] = { "/x", NULL };

	ck_assert_ptr_ne(copy->mapprefix, orig->mapprefix);
	ck_assert_ptr_ne(copy->mapprefix[0], orig->mapprefix[0]);
	ck_assert(conf_load(copy, path, &error));
	ck_assert_int_eq(copy->cycle, 5);
	assert_strv_eq(copy->mapprefix, want_x);
	ck_assert_int_eq(orig->cycle, 20);
	assert_strv_eq(orig->mapprefix, default_mapprefix);
	assert_strv_eq(orig->exeprefix, default_exeprefix);
	/* a failed load into another copy does not touch the original either */
	conf_free(g_steal_pointer(&copy));
	copy = conf_copy(orig);
	ck_assert(!conf_load(copy, tmpdir, &error));
	assert_strv_eq(orig->mapprefix, default_mapprefix);
}
END_TEST

/* ---- conf: prefix lists ---- */

static const struct {
	const char *list;      /* ';'-separated, or NULL for a NULL list */
	const char *path;
	gboolean accepted;
} prefix_cases[] = {
	/* the shipped mapprefix (doc/namespaces.md: where applications live) */
	{ "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/", "/opt/google/chrome/libEGL.so", TRUE },
	{ "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/", "/var/lib/flatpak/app/org.x/x86_64/stable/a/files/bin/x", TRUE },
	{ "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/", "/snap/core22/1380/usr/lib/x", TRUE },
	{ "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/", "/var/lib/snapd/snap/core22/1380/usr/lib/x", TRUE },
	{ "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/", "/nix/store/abc-glibc/lib/libc.so.6", TRUE },
	{ "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/", "/home/u/.local/share/flatpak/app/x", FALSE },
	{ "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/", "/tmp/.mount_AppXYZ/usr/lib/x", FALSE },
	{ "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/", "/dev/shm/x", FALSE },
	{ "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/", "/run/user/1000/x", FALSE },
	{ "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/", "/var/tmp/x", FALSE },
	{ "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/", "/proc/self/exe", FALSE },
	{ "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/", "/var/cache/fontconfig/a", TRUE },
	/* the earlier mapprefix: /usr/;/lib;/var/cache/;!/ */
	{ "/usr/;/lib;/var/cache/;!/", "/usr/bin/foo", TRUE },
	{ "/usr/;/lib;/var/cache/;!/", "/usr/sbin/foo", TRUE },
	{ "/usr/;/lib;/var/cache/;!/", "/lib64/x", TRUE },        /* raw prefix: /lib matches */
	{ "/usr/;/lib;/var/cache/;!/", "/home/u/x", FALSE },      /* only !/ matches */
	{ "/usr/;/lib;/var/cache/;!/", "/opt/x", FALSE },
	{ "/usr/;/lib;/var/cache/;!/", "/usr/local/sbin/x", TRUE },
	{ "/usr/;/lib;/var/cache/;!/", "/var/cache/fontconfig/a", TRUE },
	{ "/usr/;/lib;/var/cache/;!/", "/var/lib/x", FALSE },
	{ "/usr/;/lib;/var/cache/;!/", "/usr", FALSE },           /* "/usr/" is longer than the path */
	{ "/usr/;/lib;/var/cache/;!/", "memfd:x", TRUE },         /* not absolute: nothing matches */
	/* the shipped exeprefix */
	{ "!/usr/sbin/;!/usr/local/sbin/;!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;!/", "/usr/bin/foo", TRUE },
	{ "!/usr/sbin/;!/usr/local/sbin/;!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;!/", "/usr/sbin/foo", FALSE },
	{ "!/usr/sbin/;!/usr/local/sbin/;!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;!/", "/opt/app/bin/app", TRUE },
	{ "!/usr/sbin/;!/usr/local/sbin/;!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;!/", "/var/lib/flatpak/app/org.x/x86_64/stable/a/files/bin/x", TRUE },
	{ "!/usr/sbin/;!/usr/local/sbin/;!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;!/", "/snap/hello/42/bin/hello", TRUE },
	{ "!/usr/sbin/;!/usr/local/sbin/;!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;!/", "/nix/store/abc-hello/bin/hello", TRUE },
	{ "!/usr/sbin/;!/usr/local/sbin/;!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;!/", "/home/u/bin/x", FALSE },
	{ "!/usr/sbin/;!/usr/local/sbin/;!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;!/", "/tmp/x", FALSE },
	/* the earlier exeprefix: !/usr/sbin/;!/usr/local/sbin/;/usr/;!/ */
	{ "!/usr/sbin/;!/usr/local/sbin/;/usr/;!/", "/usr/bin/foo", TRUE },
	{ "!/usr/sbin/;!/usr/local/sbin/;/usr/;!/", "/usr/sbin/foo", FALSE },
	{ "!/usr/sbin/;!/usr/local/sbin/;/usr/;!/", "/lib64/x", FALSE },
	{ "!/usr/sbin/;!/usr/local/sbin/;/usr/;!/", "/home/u/x", FALSE },
	{ "!/usr/sbin/;!/usr/local/sbin/;/usr/;!/", "/opt/x", FALSE },
	{ "!/usr/sbin/;!/usr/local/sbin/;/usr/;!/", "/usr/local/sbin/x", FALSE },
	{ "!/usr/sbin/;!/usr/local/sbin/;/usr/;!/", "/usr/local/bin/x", TRUE },
	/* first match decides */
	{ "/usr/;!/usr/bin/", "/usr/bin/foo", TRUE },
	{ "!/usr/bin/;/usr/", "/usr/bin/foo", FALSE },
	/* no list, an empty list, nothing matching: accept */
	{ NULL, "/home/u/x", TRUE },
	{ "", "/home/u/x", TRUE },
	{ "/usr/", "/home/u/x", TRUE },
	/* empty items and a lone "!" are skipped, not "match everything" */
	{ ";;", "/home/u/x", TRUE },
	{ ";;!/opt/;;", "/opt/x", FALSE },
	{ ";;!/opt/;;", "/home/u/x", TRUE },
	{ "!", "/home/u/x", TRUE },
	{ "!;/home/", "/home/u/x", TRUE },
	{ "!;!/home/", "/home/u/x", FALSE },
	{ "!/", "/anything", FALSE },
	{ "/", "/anything", TRUE },
};

START_TEST(test_prefix_accepts)
{
	g_auto(GStrv) list = prefix_cases[_i].list ? g_strsplit(prefix_cases[_i].list, ";", -1) : NULL;

	ck_assert_msg(conf_prefix_accepts(list, prefix_cases[_i].path) == prefix_cases[_i].accepted,
		      "list '%s', path '%s': want %s", prefix_cases[_i].list, prefix_cases[_i].path,
		      prefix_cases[_i].accepted ? "accepted" : "rejected");
}
END_TEST

START_TEST(test_prefix_defaults)
{
	g_autoptr(Conf) conf = conf_new();

	ck_assert(conf_prefix_accepts(conf->exeprefix, "/usr/bin/foo"));
	ck_assert(!conf_prefix_accepts(conf->exeprefix, "/usr/sbin/foo"));
	ck_assert(conf_prefix_accepts(conf->mapprefix, "/lib64/x"));
	ck_assert(!conf_prefix_accepts(conf->mapprefix, "/home/u/x"));
}
END_TEST

/* ---- conf: dump, template, describe ---- */

static const char default_dump[] =
	"[model]\n"
	"cycle = 20\n"
	"usecorrelation = true\n"
	"basemax = true\n"
	"lift = true\n"
	"successor = true\n"
	"frequency = true\n"
	"minsize = 2000000\n"
	"memtotal = -10\n"
	"memfree = 50\n"
	"memcached = 0\n"
	"memavailable = 0\n"
	"halflife = 168\n"
	"maxage = 90\n"
	"follow = 1800\n"
	"allpairs = false\n"
	"maxexes = 2048\n"
	"maxexemaps = 2048\n"
	"maxmaps = 65536\n"
	"maxchains = 65536\n"
	"\n"
	"[system]\n"
	"doscan = true\n"
	"dopredict = true\n"
	"autosave = 3600\n"
	"mapprefix = !/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/\n"
	"usedmapkb = 1024\n"
	"exeprefix = !/usr/sbin/;!/usr/local/sbin/;!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;!/\n"
	"maxprocs = 30\n"
	"sortstrategy = 3\n"
	"slicekb = 32768\n"
	"execpause = 1000\n"
	"checkresidency = true\n"
	"trustvmstat = true\n"
	"warmdirs = true\n"
	"minavailable = 5\n"
	"maxpressure = 10\n"
	"batterybudget = 0\n"
	"tracefile = \n"
	"learnreads = true\n"
	"learnexec = true\n"
	"netfs = false\n"
	"startupwindow = 5\n"
	"maxreadfiles = 256\n"
	"maxreadkb = 65536\n"
	"launchfetchkb = 131072\n";

START_TEST(test_dump_defaults)
{
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *text = conf_dump(conf);

	ck_assert_str_eq(text, default_dump);
}
END_TEST

/* The dump is a valid file: loading it gives the same configuration. */
START_TEST(test_dump_round_trip)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autoptr(Conf) back = conf_new();
	g_autofree char *text = NULL;
	g_autofree char *again = NULL;
	g_autofree char *path = NULL;
	static const char *const odd[] = { "/a;b", "/c\\d", "!/e f", NULL };

	conf->cycle = 2;
	conf->usecorrelation = FALSE;
	conf->minsize = G_GINT64_CONSTANT(1) << 40;
	conf->memtotal = -100;
	g_strfreev(conf->mapprefix);
	conf->mapprefix = g_strdupv((char **)odd);
	g_strfreev(conf->exeprefix);
	conf->exeprefix = g_new0(char *, 1);
	text = conf_dump(conf);
	path = write_conf("dump.conf", text);

	ck_assert(conf_load(back, path, &error));
	again = conf_dump(back);
	ck_assert_str_eq(again, text);
	assert_strv_eq(back->mapprefix, odd);
	ck_assert_ptr_null(back->exeprefix[0]);
	ck_assert_uint_eq(captured->len, 0);
}
END_TEST

START_TEST(test_template)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *text = conf_template();
	g_autofree char *path = NULL;
	g_autofree char *got = NULL;
	g_auto(GStrv) lines = NULL;
	g_autoptr(Conf) conf = conf_new();

	ck_assert_ptr_nonnull(strstr(text, "\n[model]\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n[system]\n"));
	ck_assert_ptr_nonnull(strstr(text, "# Default: 20 seconds; range: 1..3600.\ncycle = 20\n"));
	ck_assert_ptr_nonnull(strstr(text, "# Default: true; either true or false.\nusecorrelation = true\n"));
	ck_assert_ptr_nonnull(strstr(text, "# Default: 3; range: 0..3.\nsortstrategy = 3\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nmapprefix = !/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/\n"));
	ck_assert_ptr_nonnull(strstr(text, "SIGHUP"));
	ck_assert_ptr_nonnull(strstr(text, "GKeyFile"));
	ck_assert(g_str_has_prefix(text, "# "));

	/*
	 * every comment line fits in 72 columns (no word is that long); a key's
	 * line holds its whole default, which a long list cannot fit
	 */
	lines = g_strsplit(text, "\n", -1);
	for (size_t i = 0; lines[i]; i++)
		ck_assert_msg(lines[i][0] != '#' || strlen(lines[i]) <= 72, "line %zu too long: %s",
			      i, lines[i]);
	ck_assert_ptr_nonnull(strstr(text, "# Default: the list set below.\nmapprefix = !/proc/;"));

	/* loaded over other values, the template restores every default */
	conf->cycle = 99;
	conf->doscan = FALSE;
	g_strfreev(conf->exeprefix);
	conf->exeprefix = g_new0(char *, 1);
	path = write_conf("template.conf", text);
	ck_assert(conf_load(conf, path, &error));
	got = conf_dump(conf);
	ck_assert_str_eq(got, default_dump);
	ck_assert_uint_eq(captured->len, 0);
}
END_TEST

/* A string key: kept as written (trimmed), escapes decoded, dumped back. */
START_TEST(test_string_key)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Conf) conf = conf_new();
	g_autoptr(Conf) again = conf_new();
	g_autofree char *path = write_conf("string.conf",
		"[system]\ntracefile =  /var/tmp/a b;c\\tx.trace  \n");
	g_autofree char *dump = NULL;
	g_autofree char *dump_path = NULL;

	ck_assert_str_eq(conf->tracefile, "");
	ck_assert(conf_load(conf, path, &error));
	/* "\t" in the file is a tab; ';' is no separator in a string. */
	ck_assert_str_eq(conf->tracefile, "/var/tmp/a b;c\tx.trace");
	dump = conf_dump(conf);
	ck_assert_ptr_nonnull(strstr(dump, "\ntracefile = /var/tmp/a b;c\\tx.trace\n"));
	dump_path = write_conf("dump.conf", dump);
	ck_assert(conf_load(again, dump_path, &error));
	ck_assert_str_eq(again->tracefile, conf->tracefile);
	ck_assert_uint_eq(captured->len, 0);
}
END_TEST

START_TEST(test_describe)
{
	g_autoptr(GPtrArray) rows = conf_describe();
	const ConfKeyInfo *cycle, *usecorr, *mapprefix, *sort, *avail, *pressure, *window;

	/* 19 keys in [model], 24 in [system] */
	ck_assert_uint_eq(rows->len, 43);
	cycle = rows->pdata[0];
	ck_assert_str_eq(cycle->group, "model");
	ck_assert_str_eq(cycle->key, "cycle");
	ck_assert_str_eq(cycle->type, "integer");
	ck_assert_str_eq(cycle->unit, "seconds");
	ck_assert_str_eq(cycle->default_text, "20");
	ck_assert_int_eq(cycle->min, 1);
	ck_assert_int_eq(cycle->max, 3600);
	ck_assert(strlen(cycle->doc) > 20);
	usecorr = rows->pdata[1];
	ck_assert_str_eq(usecorr->type, "boolean");
	ck_assert_str_eq(usecorr->default_text, "true");
	{
		const ConfKeyInfo *halflife = rows->pdata[11], *allpairs = rows->pdata[14];

		ck_assert_str_eq(halflife->key, "halflife");
		ck_assert_str_eq(halflife->unit, "hours");
		ck_assert_str_eq(halflife->default_text, "168");
		ck_assert_int_eq(halflife->min, 0);
		ck_assert_str_eq(allpairs->key, "allpairs");
		ck_assert_str_eq(allpairs->default_text, "false");
	}
	{
		const ConfKeyInfo *maxexes = rows->pdata[15], *maxchains = rows->pdata[18];

		ck_assert_str_eq(maxexes->key, "maxexes");
		ck_assert_str_eq(maxexes->default_text, "2048");
		ck_assert_int_eq(maxexes->min, 16);
		ck_assert_str_eq(maxchains->key, "maxchains");
		ck_assert_str_eq(maxchains->default_text, "65536");
	}
	mapprefix = rows->pdata[22];
	ck_assert_str_eq(mapprefix->group, "system");
	ck_assert_str_eq(mapprefix->key, "mapprefix");
	ck_assert_str_eq(mapprefix->type, "list");
	ck_assert_str_eq(mapprefix->default_text,
			 "!/proc/;!/sys/;!/dev/;!/run/;!/tmp/;!/var/tmp/;/usr/;/lib;/opt/;/snap/;/var/lib/snapd/snap/;/var/lib/flatpak/;/nix/store/;/var/cache/;!/");
	sort = rows->pdata[26];
	ck_assert_str_eq(sort->key, "sortstrategy");
	ck_assert_str_eq(sort->unit, "");
	avail = rows->pdata[10];
	ck_assert_str_eq(avail->key, "memavailable");
	ck_assert_str_eq(avail->default_text, "0");
	ck_assert_int_eq(avail->min, -100);
	ck_assert_int_eq(avail->max, 100);
	{
		const ConfKeyInfo *slice = rows->pdata[27];

		ck_assert_str_eq(slice->key, "slicekb");
		ck_assert_str_eq(slice->unit, "KB");
		ck_assert_str_eq(slice->default_text, "32768");
		ck_assert_int_eq(slice->min, 0);
	}
	{
		const ConfKeyInfo *trust = rows->pdata[30];

		ck_assert_str_eq(trust->key, "trustvmstat");
		ck_assert_str_eq(trust->default_text, "true");
	}
	pressure = rows->pdata[33];
	ck_assert_str_eq(pressure->key, "maxpressure");
	ck_assert_str_eq(pressure->unit, "percent");
	ck_assert_str_eq(pressure->default_text, "10");
	ck_assert_int_eq(pressure->min, 0);
	ck_assert_int_eq(pressure->max, 100);
	window = rows->pdata[39];
	ck_assert_str_eq(window->key, "startupwindow");
	ck_assert_str_eq(window->unit, "seconds");
	ck_assert_int_eq(window->min, 1);
	ck_assert_int_eq(window->max, 600);
}
END_TEST

static Suite *
conf_suite(void)
{
	Suite *s = suite_create("conf");
	TCase *tc = tcase_create("conf");
	TCase *tp = tcase_create("prefix");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_load_every_key);
	tcase_add_loop_test(tc, test_bad_value_keeps_previous, 0, G_N_ELEMENTS(bad_values));
	tcase_add_test(tc, test_reload_over_defaults);
	tcase_add_test(tc, test_values_are_trimmed);
	tcase_add_test(tc, test_load_data_respects_length);
	tcase_add_test(tc, test_processes_alias);
	tcase_add_test(tc, test_processes_alias_bad_value);
	tcase_add_test(tc, test_processes_alias_other_group);
	tcase_add_loop_test(tc, test_processes_and_maxprocs, 0, G_N_ELEMENTS(both_spellings));
	tcase_add_test(tc, test_unknown_ignored);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_syntax_error);
	tcase_add_test(tc, test_unusable_files);
	tcase_add_test(tc, test_empty_file);
	tcase_add_test(tc, test_load_into_copy);
	tcase_add_test(tc, test_dump_defaults);
	tcase_add_test(tc, test_dump_round_trip);
	tcase_add_test(tc, test_template);
	tcase_add_test(tc, test_string_key);
	tcase_add_test(tc, test_describe);
	suite_add_tcase(s, tc);

	tcase_add_loop_test(tp, test_prefix_accepts, 0, G_N_ELEMENTS(prefix_cases));
	tcase_add_test(tp, test_prefix_defaults);
	suite_add_tcase(s, tp);

	return s;
}

int
main(void)
{
	return tu_run_suite(conf_suite());
}
