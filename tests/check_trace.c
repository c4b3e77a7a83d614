/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/trace.c: the exact bytes the writer produces (the format
 * of doc/trace-format.md, worked out by hand), write/read round trips with
 * hostile paths, and a table of malformed traces, each of which must fail
 * with the right error at the right line after yielding the records that
 * precede it.
 */
#include "config.h"

#include "testutil.h"
#include "trace.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>

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

static char *
read_all(const char *path)
{
	char *text = NULL;

	ck_assert(g_file_get_contents(path, &text, NULL, NULL));
	return text;
}

/* A ProcMap as proc_read_maps() would append it. */
static void
add_map(GArray *maps, const char *path, guint64 start, guint64 end, guint64 offset,
	gboolean deleted)
{
	ProcMap m = { 0 };

	m.start = start;
	m.end = end;
	m.offset = offset;
	m.path = path ? g_strdup(path) : NULL;
	m.deleted = deleted;
	g_array_append_val(maps, m);
}

static GArray *
maps_new(void)
{
	GArray *maps = g_array_new(FALSE, TRUE, sizeof(ProcMap));

	g_array_set_clear_func(maps, proc_map_clear);
	return maps;
}

static const TraceRecord *
next_record(TraceReader *tr)
{
	g_autoptr(GError) error = NULL;
	const TraceRecord *rec = NULL;

	if (!trace_reader_next(tr, &rec, &error))
		ck_abort_msg("unexpected error: %s", error->message);
	ck_assert_ptr_nonnull(rec);
	return rec;
}

static void
assert_end(TraceReader *tr)
{
	g_autoptr(GError) error = NULL;
	const TraceRecord *rec = (const TraceRecord *)1;

	ck_assert(trace_reader_next(tr, &rec, &error));
	ck_assert_ptr_null(rec);
	ck_assert_ptr_null(error);
}

/* ---- the exact format ---- */

/*
 * The whole file for a small session, byte for byte:
 *   - paths get ids 0, 1, 2, 3 in order of first use, each declared by a
 *     P line just before the first record using it; a space is %20;
 *   - map lengths are end - start: 0x3000 - 0x1000 = 8192 and
 *     0x4000 - 0x3000 = 4096; the second offset is 0x2000 = 8192;
 *   - the anonymous map (no path), the empty range and the map before
 *     `first` are not recorded, so the M line counts 2 maps;
 *   - unknown memory figures are five dashes; END counts the 2 scans.
 */
START_TEST(test_writer_exact_text)
{
	g_autofree char *path = g_build_filename(tmpdir, "t.trace", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) gone = g_error_new(PROC_ERROR, PROC_ERROR_GONE, "exited");
	g_autoptr(GArray) maps = maps_new();
	g_autofree char *text = NULL;
	const char *exes[] = { "/usr/bin/a b", "/usr/bin/c" };
	const char *exes2[] = { "/usr/bin/c" };
	ProcMemstat mem = { .total = 1000, .free = 500, .cached = 200, .buffers = 10,
			    .available = 650 };
	TraceWriter *tw;

	tw = trace_writer_open(path, 20, &error);
	ck_assert_ptr_null(error);
	ck_assert(trace_writer_scan(tw, 0, &mem, exes, 2, &error));

	add_map(maps, "/usr/lib/skipped", 0x0, 0x1000, 0, FALSE);    /* before first */
	add_map(maps, "/usr/lib/libc.so.6", 0x1000, 0x3000, 0, FALSE);
	add_map(maps, NULL, 0x3000, 0x3800, 0, FALSE);               /* anonymous */
	add_map(maps, "/usr/lib/empty", 0x3800, 0x3800, 0, FALSE);   /* no bytes */
	add_map(maps, "/usr/bin/c", 0x3000, 0x4000, 0x2000, TRUE);
	ck_assert(trace_writer_maps(tw, "/usr/bin/c", maps, 1, &error));
	ck_assert(trace_writer_maps_failed(tw, "/usr/bin/d", gone, &error));
	ck_assert(trace_writer_scan(tw, 20, NULL, exes2, 1, &error));
	ck_assert_uint_eq(trace_writer_get_scans(tw), 2);
	ck_assert(trace_writer_close(tw, &error));

	text = read_all(path);
	ck_assert_str_eq(text,
		"PRELOAD-TRACE\t1\t20\n"
		"P\t0\tfile:///usr/bin/a%20b\n"
		"P\t1\tfile:///usr/bin/c\n"
		"C\t0\t1000\t500\t200\t10\t650\t2\t0\t1\n"
		"P\t2\tfile:///usr/lib/libc.so.6\n"
		"M\t1\t2\t2\t0\t8192\t-\t1\t8192\t4096\td\n"
		"P\t3\tfile:///usr/bin/d\n"
		"G\t3\tgone\n"
		"C\t20\t-\t-\t-\t-\t-\t1\t1\n"
		"END\t2\n");
}
END_TEST

/* Reading back the file of test_writer_exact_text gives the same records. */
START_TEST(test_round_trip)
{
	g_autofree char *path = g_build_filename(tmpdir, "t.trace", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) io = g_error_new(PROC_ERROR, PROC_ERROR_IO, "EACCES");
	g_autoptr(GError) parse = g_error_new(PROC_ERROR, PROC_ERROR_PARSE, "junk");
	g_autoptr(GArray) maps = maps_new();
	g_autoptr(TraceReader) tr = NULL;
	const TraceRecord *rec;
	const char *exes[] = { "/usr/bin/a", "/usr/bin/b" };
	ProcMemstat mem = { .total = 8000000, .free = 4000000, .cached = 2000000,
			    .buffers = 100, .available = 5000000 };
	TraceWriter *tw;

	tw = trace_writer_open(path, 7, &error);
	ck_assert_ptr_nonnull(tw);
	ck_assert(trace_writer_scan(tw, 100, &mem, exes, 2, &error));
	add_map(maps, "/usr/lib/x.so", 0x10000, 0x20000, 0x5000, FALSE);
	add_map(maps, "/usr/bin/b", 0x40000, 0x41000, 0, TRUE);
	ck_assert(trace_writer_maps(tw, "/usr/bin/b", maps, 0, &error));
	ck_assert(trace_writer_maps_failed(tw, "/usr/bin/e", io, &error));
	ck_assert(trace_writer_maps_failed(tw, "/usr/bin/e", parse, &error));
	ck_assert(trace_writer_maps_failed(tw, "/usr/bin/e", NULL, &error));
	ck_assert(trace_writer_scan(tw, 107, &mem, exes, 0, &error));
	ck_assert(trace_writer_close(tw, &error));

	tr = trace_reader_open(path, &error);
	ck_assert_ptr_null(error);
	ck_assert_int_eq(trace_reader_get_cycle(tr), 7);
	ck_assert_uint_eq(trace_reader_get_version(tr), 1);

	rec = next_record(tr);
	ck_assert_int_eq(rec->type, TRACE_RECORD_SCAN);
	ck_assert_uint_eq(rec->line, 4);   /* header, P, P, C */
	ck_assert_int_eq(rec->time, 100);
	ck_assert(rec->mem_known);
	ck_assert_uint_eq(rec->mem.total, 8000000);
	ck_assert_uint_eq(rec->mem.free, 4000000);
	ck_assert_uint_eq(rec->mem.cached, 2000000);
	ck_assert_uint_eq(rec->mem.buffers, 100);
	ck_assert_uint_eq(rec->mem.available, 5000000);
	ck_assert_uint_eq(rec->exes->len, 2);
	ck_assert_str_eq(g_ptr_array_index(rec->exes, 0), "/usr/bin/a");
	ck_assert_str_eq(g_ptr_array_index(rec->exes, 1), "/usr/bin/b");
	{
		/* Interned: the exe of the maps record is the same pointer. */
		const char *b = g_ptr_array_index(rec->exes, 1);

		rec = next_record(tr);
		ck_assert_int_eq(rec->type, TRACE_RECORD_MAPS);
		ck_assert_ptr_eq(rec->exe, b);
		ck_assert_uint_eq(rec->maps->len, 2);
		ck_assert_str_eq(g_array_index(rec->maps, TraceMap, 0).path, "/usr/lib/x.so");
		ck_assert_uint_eq(g_array_index(rec->maps, TraceMap, 0).offset, 0x5000);
		ck_assert_uint_eq(g_array_index(rec->maps, TraceMap, 0).length, 0x10000);
		ck_assert(!g_array_index(rec->maps, TraceMap, 0).deleted);
		ck_assert_ptr_eq(g_array_index(rec->maps, TraceMap, 1).path, b);
		ck_assert_uint_eq(g_array_index(rec->maps, TraceMap, 1).length, 0x1000);
		ck_assert(g_array_index(rec->maps, TraceMap, 1).deleted);
	}
	rec = next_record(tr);
	ck_assert_int_eq(rec->type, TRACE_RECORD_MAPS_FAILED);
	ck_assert_str_eq(rec->exe, "/usr/bin/e");
	ck_assert_int_eq(rec->failure, PROC_ERROR_IO);
	rec = next_record(tr);
	ck_assert_int_eq(rec->failure, PROC_ERROR_PARSE);
	rec = next_record(tr);
	ck_assert_int_eq(rec->failure, PROC_ERROR_IO);   /* no error given: io */
	rec = next_record(tr);
	ck_assert_int_eq(rec->type, TRACE_RECORD_SCAN);
	ck_assert_int_eq(rec->time, 107);
	ck_assert_uint_eq(rec->exes->len, 0);
	ck_assert(!trace_reader_is_complete(tr));
	assert_end(tr);
	ck_assert(trace_reader_is_complete(tr));
	/* a, b, x.so, e */
	ck_assert_uint_eq(trace_reader_get_n_paths(tr), 4);
	/* The end stays the end. */
	assert_end(tr);
}
END_TEST

/*
 * Paths are arbitrary bytes except NUL: spaces, tabs, newlines, '%',
 * "file://" inside, non-UTF-8 bytes, a trailing " (deleted)". Every one
 * must come back byte for byte, and the file must stay one record a line.
 */
START_TEST(test_hostile_paths)
{
	static const char *const hostile[] = {
		"/usr/bin/with space",
		"/usr/bin/tab\there",
		"/usr/bin/new\nline",
		"/usr/bin/100%25 done%",
		"/usr/bin/file:///x",
		"/usr/bin/\xff\xfe latin1 \xe9",
		"/usr/bin/caf\xc3\xa9",
		"/usr/lib/libfoo.so (deleted)",
		"/usr/bin/back\\slash\r",
		"/",
	};
	g_autofree char *path = g_build_filename(tmpdir, "h.trace", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(GArray) maps = maps_new();
	g_autoptr(TraceReader) tr = NULL;
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;
	const TraceRecord *rec;
	TraceWriter *tw;
	guint n = G_N_ELEMENTS(hostile);

	tw = trace_writer_open(path, 20, &error);
	ck_assert_ptr_nonnull(tw);
	ck_assert(trace_writer_scan(tw, 0, NULL, (const char *const *)hostile, n, &error));
	for (guint i = 0; i < n; i++)
		add_map(maps, hostile[i], 4096 * i, 4096 * (i + 1), i, FALSE);
	ck_assert(trace_writer_maps(tw, hostile[0], maps, 0, &error));
	ck_assert(trace_writer_close(tw, &error));

	/* header + n P lines + C + M + END, and nothing else */
	text = read_all(path);
	lines = g_strsplit(text, "\n", -1);
	ck_assert_uint_eq(g_strv_length(lines), 1 + n + 1 + 1 + 1 + 1);  /* "" after the last \n */
	ck_assert(g_utf8_validate(text, -1, NULL));

	tr = trace_reader_open(path, &error);
	ck_assert_ptr_nonnull(tr);
	rec = next_record(tr);
	ck_assert_uint_eq(rec->exes->len, n);
	for (guint i = 0; i < n; i++)
		ck_assert_str_eq(g_ptr_array_index(rec->exes, i), hostile[i]);
	rec = next_record(tr);
	ck_assert_uint_eq(rec->maps->len, n);
	for (guint i = 0; i < n; i++) {
		const TraceMap *m = &g_array_index(rec->maps, TraceMap, i);

		ck_assert_str_eq(m->path, hostile[i]);
		ck_assert_uint_eq(m->offset, i);
		ck_assert_uint_eq(m->length, 4096);
	}
	assert_end(tr);
}
END_TEST

/* Relative paths have no file URI; /proc never gives them: left out. */
START_TEST(test_relative_paths_left_out)
{
	g_autofree char *path = g_build_filename(tmpdir, "r.trace", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(GArray) maps = maps_new();
	g_autofree char *text = NULL;
	const char *exes[] = { "relative", "/usr/bin/ok", "" };
	TraceWriter *tw;

	tw = trace_writer_open(path, 20, &error);
	ck_assert(trace_writer_scan(tw, 5, NULL, exes, 3, &error));
	add_map(maps, "lib.so", 0, 4096, 0, FALSE);
	ck_assert(trace_writer_maps(tw, "/usr/bin/ok", maps, 0, &error));
	ck_assert(trace_writer_maps(tw, "relative", maps, 0, &error));
	ck_assert(trace_writer_maps_failed(tw, "relative", NULL, &error));
	ck_assert(trace_writer_close(tw, &error));
	text = read_all(path);
	ck_assert_str_eq(text,
		"PRELOAD-TRACE\t1\t20\n"
		"P\t0\tfile:///usr/bin/ok\n"
		"C\t5\t-\t-\t-\t-\t-\t1\t0\n"
		"M\t0\t0\n"
		"END\t1\n");
}
END_TEST

/* Comments and empty lines are skipped; a trace without END is readable. */
START_TEST(test_comments_and_cut_short)
{
	static const char text[] =
		"PRELOAD-TRACE\t1\t30\n"
		"# recorded by hand\n"
		"\n"
		"P\t0\tfile:///usr/bin/x\n"
		"C\t0\t1\t2\t3\t4\t5\t1\t0\n"
		"#\n"
		"C\t30\t1\t2\t3\t4\t5\t0\n";
	g_autoptr(GError) error = NULL;
	g_autoptr(TraceReader) tr = trace_reader_new_from_data(text, strlen(text), &error);
	const TraceRecord *rec;

	ck_assert_ptr_nonnull(tr);
	ck_assert_int_eq(trace_reader_get_cycle(tr), 30);
	rec = next_record(tr);
	ck_assert_uint_eq(rec->line, 5);
	ck_assert_uint_eq(rec->mem.available, 5);
	rec = next_record(tr);
	ck_assert_uint_eq(rec->line, 7);
	ck_assert_int_eq(rec->time, 30);
	assert_end(tr);
	ck_assert(!trace_reader_is_complete(tr));
}
END_TEST

/* ---- malformed traces ---- */

#define HDR "PRELOAD-TRACE\t1\t20\n"
#define PX "P\t0\tfile:///usr/bin/x\n"
#define C0 "C\t0\t1\t1\t1\t1\t1\t1\t0\n"

typedef struct BadCase {
	const char *name;
	const char *text;
	gsize length;         /* 0: strlen(text) */
	int code;             /* TraceError */
	guint64 line;         /* where it must be reported */
	guint records;        /* good records before the error */
} BadCase;

static const BadCase bad_cases[] = {
	{ "empty", "", 0, TRACE_ERROR_TRUNCATED, 1, 0 },
	{ "not a trace", "PRELOAD\t1\t20\n", 0, TRACE_ERROR_CORRUPT, 1, 0 },
	{ "state file", "PRELOAD\t0.6.4\t100\n", 0, TRACE_ERROR_CORRUPT, 1, 0 },
	{ "newer version", "PRELOAD-TRACE\t2\t20\n", 0, TRACE_ERROR_VERSION, 1, 0 },
	{ "version 0", "PRELOAD-TRACE\t0\t20\n", 0, TRACE_ERROR_CORRUPT, 1, 0 },
	{ "cycle 0", "PRELOAD-TRACE\t1\t0\n", 0, TRACE_ERROR_CORRUPT, 1, 0 },
	{ "cycle missing", "PRELOAD-TRACE\t1\n", 0, TRACE_ERROR_CORRUPT, 1, 0 },
	{ "header extra field", "PRELOAD-TRACE\t1\t20\tx\n", 0, TRACE_ERROR_CORRUPT, 1, 0 },
	{ "header cut", "PRELOAD-TRACE\t1\t20", 0, TRACE_ERROR_TRUNCATED, 1, 0 },
	{ "last line cut", HDR PX C0 "C\t20\t1\t1", 0, TRACE_ERROR_TRUNCATED, 4, 1 },
	{ "unknown tag", HDR "X\t1\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "lower-case tag", HDR PX "c\t0\t1\t1\t1\t1\t1\t0\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "path id skips", HDR "P\t1\tfile:///usr/bin/x\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "path defined twice", HDR PX "P\t1\tfile:///usr/bin/x\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "path not a URI", HDR "P\t0\t/usr/bin/x\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "path http URI", HDR "P\t0\thttp://h/x\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "path with host", HDR "P\t0\tfile://host/usr/bin/x\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "path bad escape", HDR "P\t0\tfile:///usr/%zz\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "path line short", HDR "P\t0\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "undefined exe", HDR "C\t0\t1\t1\t1\t1\t1\t1\t0\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "fewer exes", HDR PX "C\t0\t1\t1\t1\t1\t1\t2\t0\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "more exes", HDR PX "C\t0\t1\t1\t1\t1\t1\t0\t0\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "exe twice", HDR PX "C\t0\t1\t1\t1\t1\t1\t2\t0\t0\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "some memory unknown", HDR "C\t0\t-\t1\t1\t1\t1\t0\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "memory negative", HDR "C\t0\t-1\t1\t1\t1\t1\t0\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "memory short", HDR "C\t0\t1\t1\t1\t1\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "time negative", HDR "C\t-5\t1\t1\t1\t1\t1\t0\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "time with plus", HDR "C\t+5\t1\t1\t1\t1\t1\t0\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "time with blank", HDR "C\t 5\t1\t1\t1\t1\t1\t0\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "time empty", HDR "C\t\t1\t1\t1\t1\t1\t0\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "time overflows", HDR "C\t18446744073709551616\t1\t1\t1\t1\t1\t0\n", 0,
	  TRACE_ERROR_CORRUPT, 2, 0 },
	{ "time above int64", HDR "C\t9223372036854775808\t1\t1\t1\t1\t1\t0\n", 0,
	  TRACE_ERROR_CORRUPT, 2, 0 },
	{ "time goes back", HDR "C\t40\t1\t1\t1\t1\t1\t0\nC\t20\t1\t1\t1\t1\t1\t0\n", 0,
	  TRACE_ERROR_CORRUPT, 3, 1 },
	{ "CRLF line", HDR "C\t0\t1\t1\t1\t1\t1\t0\r\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "maps undefined exe", HDR "M\t3\t0\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "maps fewer", HDR PX "M\t0\t2\t0\t0\t4096\t-\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "maps more", HDR PX "M\t0\t0\t0\t0\t4096\t-\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "maps short entry", HDR PX "M\t0\t1\t0\t0\t4096\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "maps bad flag", HDR PX "M\t0\t1\t0\t0\t4096\tx\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "maps zero length", HDR PX "M\t0\t1\t0\t0\t0\t-\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "maps range overflows", HDR PX "M\t0\t1\t0\t18446744073709551615\t2\t-\n", 0,
	  TRACE_ERROR_CORRUPT, 3, 0 },
	{ "maps hex offset", HDR PX "M\t0\t1\t0\t0x10\t4096\t-\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "failure unknown", HDR PX "G\t0\tsegfault\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "failure short", HDR PX "G\t0\n", 0, TRACE_ERROR_CORRUPT, 3, 0 },
	{ "END miscounts", HDR PX C0 "END\t2\n", 0, TRACE_ERROR_CORRUPT, 4, 1 },
	{ "END bad", HDR "END\n", 0, TRACE_ERROR_CORRUPT, 2, 0 },
	{ "record after END", HDR PX C0 "END\t1\n" C0, 0, TRACE_ERROR_CORRUPT, 5, 1 },
	{ "NUL in a line", HDR PX "C\t0\t1\t1\0\t1\t1\t1\t0\n", sizeof(HDR PX) - 1 + 17,
	  TRACE_ERROR_CORRUPT, 3, 0 },
};

START_TEST(test_bad_trace)
{
	const BadCase *bad = &bad_cases[_i];
	gsize length = bad->length ? bad->length : strlen(bad->text);
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) again = NULL;
	g_autoptr(TraceReader) tr = NULL;
	g_autofree char *where = g_strdup_printf("line %" G_GUINT64_FORMAT ":", bad->line);
	const TraceRecord *rec;
	guint records = 0;

	tr = trace_reader_new_from_data(bad->text, length, &error);
	if (tr) {
		while (trace_reader_next(tr, &rec, &error) && rec)
			records++;
		ck_assert_msg(error != NULL, "%s: no error", bad->name);
		/* The error is sticky. */
		ck_assert(!trace_reader_next(tr, &rec, &again));
		ck_assert_ptr_null(rec);
		ck_assert_str_eq(again->message, error->message);
	}
	ck_assert_msg(error != NULL, "%s: no error", bad->name);
	ck_assert_msg(g_error_matches(error, TRACE_ERROR, bad->code),
		      "%s: code %d, wanted %d (%s)", bad->name, error->code, bad->code,
		      error->message);
	ck_assert_msg(g_str_has_prefix(error->message, where), "%s: \"%s\" is not at %s",
		      bad->name, error->message, where);
	ck_assert_msg(records == bad->records, "%s: %u records before the error, wanted %u",
		      bad->name, records, bad->records);
}
END_TEST

/* ---- files and errors ---- */

START_TEST(test_open_errors)
{
	g_autofree char *missing = g_build_filename(tmpdir, "no", "such", "dir", "t", NULL);
	g_autoptr(GError) error = NULL;

	ck_assert_ptr_null(trace_writer_open(missing, 20, &error));
	ck_assert(g_error_matches(error, TRACE_ERROR, TRACE_ERROR_IO));
	g_clear_error(&error);
	ck_assert_ptr_null(trace_reader_open(missing, &error));
	ck_assert(g_error_matches(error, TRACE_ERROR, TRACE_ERROR_IO));
	ck_assert(strstr(error->message, missing) != NULL);
}
END_TEST

/* A device that takes nothing: the header is flushed at once, so open fails. */
START_TEST(test_write_error_on_open)
{
	g_autoptr(GError) error = NULL;

	ck_assert_ptr_null(trace_writer_open("/dev/full", 20, &error));
	ck_assert(g_error_matches(error, TRACE_ERROR, TRACE_ERROR_IO));
	ck_assert(strstr(error->message, "/dev/full") != NULL);
}
END_TEST

/*
 * A full disk in the middle of a trace: the first error is kept and
 * returned by every later call, and nothing is written after it. A file
 * size limit (EFBIG past 64 bytes) stands in for the full disk. It would
 * also stop Check from recording results, so the writer runs in a child
 * that reports the first step that went wrong as its exit status.
 */
static int
write_past_limit(const char *path)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GError) again = NULL;
	struct rlimit limit = { 64, 64 };
	const char *exes[] = { "/usr/bin/a-program-with-a-rather-long-name-to-pass-64-bytes" };
	const char *later[] = { "/usr/bin/never-written" };
	TraceWriter *tw;

	(void)signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
		return 10;
	tw = trace_writer_open(path, 20, &error);   /* 19 bytes: fits */
	if (!tw)
		return 11;
	if (trace_writer_scan(tw, 0, NULL, exes, 1, &error))
		return 12;
	if (!g_error_matches(error, TRACE_ERROR, TRACE_ERROR_IO))
		return 13;
	if (trace_writer_scan(tw, 20, NULL, later, 1, &again) ||
	    strcmp(again->message, error->message) != 0)
		return 14;
	g_clear_error(&again);
	if (trace_writer_close(tw, &again) || strcmp(again->message, error->message) != 0)
		return 15;
	return 0;
}

START_TEST(test_write_error_is_sticky)
{
	g_autofree char *path = g_build_filename(tmpdir, "full.trace", NULL);
	g_autofree char *text = NULL;
	gsize size;
	int status;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int rc = write_past_limit(path);

		/* _exit() leaves path unreachable: valgrind would count it lost. */
		g_clear_pointer(&path, g_free);
		_exit(rc);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);

	ck_assert(g_file_get_contents(path, &text, &size, NULL));
	ck_assert_uint_le(size, 64);
	ck_assert(g_str_has_prefix(text, "PRELOAD-TRACE\t1\t20\nP\t0\tfile:///usr/bin/a-program"));
	ck_assert(strstr(text, "never-written") == NULL);
	ck_assert(strstr(text, "END") == NULL);
}
END_TEST

/* The file is private (it lists what the users run); a rerun truncates. */
START_TEST(test_mode_and_truncation)
{
	g_autofree char *path = g_build_filename(tmpdir, "m.trace", NULL);
	g_autofree char *old = g_build_filename(tmpdir, "old.trace", NULL);
	g_autoptr(GError) error = NULL;
	g_autofree char *text = NULL;
	GStatBuf st;

	ck_assert(trace_writer_close(trace_writer_open(path, 2, &error), &error));
	ck_assert_int_eq(g_stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);

	tu_write_file(old, "old contents that are longer than the new ones\n");
	ck_assert(trace_writer_close(trace_writer_open(old, 2, &error), &error));
	text = read_all(old);
	ck_assert_str_eq(text, "PRELOAD-TRACE\t1\t2\nEND\t0\n");
}
END_TEST

/* The model's running exes, as the daemon records them. */
START_TEST(test_scan_model)
{
	g_autofree char *path = g_build_filename(tmpdir, "s.trace", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(Model) model = model_new();
	g_autofree char *text = NULL;
	TraceWriter *tw;
	Exe *a = exe_new("/usr/bin/a", TRUE, 40);
	Exe *b = exe_new("/usr/bin/b", FALSE, 40);

	model->last_running_timestamp = 40;
	model_add_exe(model, a, 40, FALSE);   /* running: in model->running */
	model_add_exe(model, b, 40, FALSE);
	tw = trace_writer_open(path, 20, &error);
	ck_assert(trace_writer_scan_model(tw, model, 40, NULL, &error));
	ck_assert(trace_writer_close(tw, &error));
	text = read_all(path);
	ck_assert_str_eq(text,
		"PRELOAD-TRACE\t1\t20\n"
		"P\t0\tfile:///usr/bin/a\n"
		"C\t40\t-\t-\t-\t-\t-\t1\t0\n"
		"END\t1\n");
}
END_TEST

/*
 * A daemon that starts from a saved state records what its model already
 * knows, sorted by path: a (added second) before b, libc declared once
 * and shared. Lengths and offsets are the maps' own.
 */
START_TEST(test_known_maps)
{
	g_autofree char *path = g_build_filename(tmpdir, "k.trace", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(Model) model = model_new();
	g_autofree char *text = NULL;
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	TraceWriter *tw;

	model_add_exe(model, b, 0, FALSE);
	exe_add_map(model, b, map_new("/usr/lib/libc.so.6", 0, 8192, 0), 1.0);
	exe_add_map(model, b, map_new("/usr/bin/b", 4096, 4096, 0), 1.0);
	model_add_exe(model, a, 0, FALSE);
	exe_add_map(model, a, map_new("/usr/lib/libc.so.6", 0, 8192, 0), 1.0);

	tw = trace_writer_open(path, 20, &error);
	ck_assert(trace_writer_known_maps(tw, model, &error));
	ck_assert(trace_writer_close(tw, &error));
	text = read_all(path);
	ck_assert_str_eq(text,
		"PRELOAD-TRACE\t1\t20\n"
		"P\t0\tfile:///usr/bin/a\n"
		"P\t1\tfile:///usr/lib/libc.so.6\n"
		"M\t0\t1\t1\t0\t8192\t-\n"
		"P\t2\tfile:///usr/bin/b\n"
		"M\t2\t2\t1\t0\t8192\t-\t2\t4096\t4096\t-\n"
		"END\t0\n");
}
END_TEST

/* ---- the tee between learn and its maps source ---- */

typedef struct FakeSource {
	guint calls;
} FakeSource;

/* pid 100 maps one range of /usr/lib/x.so; every other pid has exited. */
static gboolean
fake_maps(pid_t pid, const char *exe_path, GArray *maps, gpointer user_data, GError **error)
{
	FakeSource *fake = user_data;

	(void)exe_path;
	fake->calls++;
	if (pid != 100) {
		g_set_error(error, PROC_ERROR, PROC_ERROR_GONE, "pid %d exited", (int)pid);
		return FALSE;
	}
	add_map(maps, "/usr/lib/x.so", 0x7000, 0x8000, 0, FALSE);
	return TRUE;
}

static void
scan_and_update(Scan *scan, Learn *learn, Model *model, const Conf *conf, gint64 now,
		const pid_t *pids, const char *const *exes, guint n)
{
	scan_begin(scan, model, now);
	for (guint i = 0; i < n; i++)
		scan_saw_process(scan, model, conf, pids[i], exes[i]);
	scan_end(scan, model, now);
	learn_update(learn, scan, model, conf, now + 10);
}

/*
 * The daemon's recording: the writer wraps learn's maps source. Both
 * exes are new at the first scan, so the scan line lists nothing (the
 * model runs nothing yet) and the update asks the source for both: a's
 * maps and b's failure are recorded in the order learn asked, and the
 * learn gets the same answers (a is then too small, 4 KB, b is gone).
 * Detached, the writer records nothing more and learn calls its source
 * directly.
 */
START_TEST(test_tee_maps_source)
{
	g_autofree char *path = g_build_filename(tmpdir, "tee.trace", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(Model) model = model_new();
	g_autoptr(Scan) scan = scan_new();
	g_autoptr(Learn) learn = learn_new();
	g_autoptr(Conf) conf = conf_new();
	g_autofree char *text = NULL;
	FakeSource fake = { 0 };
	const pid_t pids[] = { 100, 200 };
	const char *exes[] = { "/usr/bin/a", "/usr/bin/b" };
	const pid_t pids2[] = { 300 };
	const char *exes2[] = { "/usr/bin/c" };
	TraceWriter *tw;

	tw = trace_writer_open(path, 20, &error);
	trace_writer_attach(tw, learn, fake_maps, &fake);
	scan_begin(scan, model, 0);
	for (guint i = 0; i < 2; i++)
		scan_saw_process(scan, model, conf, pids[i], exes[i]);
	scan_end(scan, model, 0);
	ck_assert(trace_writer_scan_model(tw, model, 0, NULL, &error));
	learn_update(learn, scan, model, conf, 10);
	ck_assert_uint_eq(fake.calls, 2);
	ck_assert_uint_eq(learn_get_stats(learn)->gone, 1);
	ck_assert(g_hash_table_contains(model->bad_exes, "/usr/bin/a"));

	trace_writer_detach(tw, learn);
	scan_and_update(scan, learn, model, conf, 20, pids2, exes2, 1);
	ck_assert_uint_eq(fake.calls, 3);
	ck_assert(trace_writer_close(tw, &error));

	text = read_all(path);
	ck_assert_str_eq(text,
		"PRELOAD-TRACE\t1\t20\n"
		"C\t0\t-\t-\t-\t-\t-\t0\n"
		"P\t0\tfile:///usr/bin/a\n"
		"P\t1\tfile:///usr/lib/x.so\n"
		"M\t0\t1\t1\t0\t4096\t-\n"
		"P\t2\tfile:///usr/bin/b\n"
		"G\t2\tgone\n"
		"END\t1\n");
}
END_TEST

/* Freeing an attached writer puts learn's source back first. */
START_TEST(test_free_detaches)
{
	g_autofree char *path = g_build_filename(tmpdir, "f.trace", NULL);
	g_autoptr(GError) error = NULL;
	g_autoptr(Model) model = model_new();
	g_autoptr(Scan) scan = scan_new();
	g_autoptr(Learn) learn = learn_new();
	g_autoptr(Conf) conf = conf_new();
	FakeSource fake = { 0 };
	const pid_t pids[] = { 100 };
	const char *exes[] = { "/usr/bin/a" };
	TraceWriter *tw = trace_writer_open(path, 20, &error);

	trace_writer_attach(tw, learn, fake_maps, &fake);
	trace_writer_free(tw);
	/* Under ASan a call into the freed writer would be caught here. */
	scan_and_update(scan, learn, model, conf, 0, pids, exes, 1);
	ck_assert_uint_eq(fake.calls, 1);
}
END_TEST

static Suite *
trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("format");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_writer_exact_text);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_hostile_paths);
	tcase_add_test(tc, test_relative_paths_left_out);
	tcase_add_test(tc, test_comments_and_cut_short);
	tcase_add_loop_test(tc, test_bad_trace, 0, G_N_ELEMENTS(bad_cases));
	tcase_add_test(tc, test_open_errors);
	TU_ADD_TEST_UNLESS(tc, test_write_error_on_open,
			   g_file_test("/dev/full", G_FILE_TEST_EXISTS) ? NULL : "no /dev/full");
	tcase_add_test(tc, test_write_error_is_sticky);
	tcase_add_test(tc, test_mode_and_truncation);
	tcase_add_test(tc, test_scan_model);
	tcase_add_test(tc, test_known_maps);
	tcase_add_test(tc, test_tee_maps_source);
	tcase_add_test(tc, test_free_detaches);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(trace_suite());
}
