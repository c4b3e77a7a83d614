/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/proc.c: the maps, exe, meminfo and pressure parsers from
 * tables of real and hostile inputs, the tree walker on a fake /proc built in a
 * temporary directory, and the libproc2 path on the real /proc with
 * children running from awkward paths.
 */
#include "config.h"

#include "testutil.h"
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- proc_parse_maps_line ------------------------------------------------ */

typedef struct {
	const char *line;
	gboolean ok;
	guint64 start, end, offset;
	guint major, minor;
	guint64 inode;
	const char *path;   /* NULL: anonymous or pseudo */
	gboolean deleted;
} MapsCase;

static const MapsCase maps_cases[] = {
	/* A real libc line, with the kernel's padding before the path. */
	{ "7f0e1c200000-7f0e1c228000 r--p 00000000 fe:01 1049011                    /usr/lib/x86_64-linux-gnu/libc.so.6\n",
	  TRUE, 0x7f0e1c200000, 0x7f0e1c228000, 0, 0xfe, 0x01, 1049011,
	  "/usr/lib/x86_64-linux-gnu/libc.so.6", FALSE },
	/* Non-zero offset, no trailing newline. */
	{ "55ce34809000-55ce3480f000 r-xp 00002000 fe:00 247498   /usr/bin/head",
	  TRUE, 0x55ce34809000, 0x55ce3480f000, 0x2000, 0xfe, 0x00, 247498,
	  "/usr/bin/head", FALSE },
	/* Inner spaces (two in a row) are part of the name. */
	{ "1000-3000 r--p 00001000 08:02 77  /opt/My App/lib  x.so\n",
	  TRUE, 0x1000, 0x3000, 0x1000, 8, 2, 77, "/opt/My App/lib  x.so", FALSE },
	/* Trailing spaces before the newline too. */
	{ "1000-2000 r--p 00000000 08:02 78 /opt/trail  \n",
	  TRUE, 0x1000, 0x2000, 0, 8, 2, 78, "/opt/trail  ", FALSE },
	/* An unlinked library: the suffix goes, the flag is set. */
	{ "1000-2000 r-xp 00000000 08:02 79   /usr/lib/libfoo.so.1 (deleted)\n",
	  TRUE, 0x1000, 0x2000, 0, 8, 2, 79, "/usr/lib/libfoo.so.1", TRUE },
	/* A space-containing name that is also deleted. */
	{ "1000-2000 r-xp 00000000 08:02 80   /opt/my app (deleted)\n",
	  TRUE, 0x1000, 0x2000, 0, 8, 2, 80, "/opt/my app", TRUE },
	/* The kernel writes a newline in a name as \012. */
	{ "1000-2000 r--p 00000000 08:02 81   /tmp/a\\012b\\012\n",
	  TRUE, 0x1000, 0x2000, 0, 8, 2, 81, "/tmp/a\nb\n", FALSE },
	/* Other backslashes stay. */
	{ "1000-2000 r--p 00000000 08:02 82   /tmp/a\\b\\01\n",
	  TRUE, 0x1000, 0x2000, 0, 8, 2, 82, "/tmp/a\\b\\01", FALSE },
	/* Pseudo maps have no path. */
	{ "5651b3f68000-5651b3f89000 rw-p 00000000 00:00 0                          [heap]\n",
	  TRUE, 0x5651b3f68000, 0x5651b3f89000, 0, 0, 0, 0, NULL, FALSE },
	{ "7ffcc2d6b000-7ffcc2d6d000 r-xp 00000000 00:00 0                          [vdso]\n",
	  TRUE, 0x7ffcc2d6b000, 0x7ffcc2d6d000, 0, 0, 0, 0, NULL, FALSE },
	{ "1000-2000 rw-p 00000000 00:00 0   [anon:glibc malloc]\n",
	  TRUE, 0x1000, 0x2000, 0, 0, 0, 0, NULL, FALSE },
	{ "1000-2000 rw-s 00000000 00:0f 1057 anon_inode:i915.gem\n",
	  TRUE, 0x1000, 0x2000, 0, 0, 0x0f, 1057, NULL, FALSE },
	/* Anonymous: the kernel leaves one space after the inode. */
	{ "5651b3f68000-5651b3f78000 rw-p 00000000 00:00 0 \n",
	  TRUE, 0x5651b3f68000, 0x5651b3f78000, 0, 0, 0, 0, NULL, FALSE },
	{ "5651b3f68000-5651b3f78000 rw-p 00000000 00:00 0",
	  TRUE, 0x5651b3f68000, 0x5651b3f78000, 0, 0, 0, 0, NULL, FALSE },
	/* A memfd is reported as a path; spy filters it. */
	{ "7f0000000000-7f0000100000 rw-s 00000000 00:01 2049 /memfd:foo (deleted)\n",
	  TRUE, 0x7f0000000000, 0x7f0000100000, 0, 0, 1, 2049, "/memfd:foo", TRUE },
	/* The top of the address space, 16 hex digits; 3-digit major. */
	{ "ffffffffff600000-ffffffffff601000 --xp 00000000 103:05 0  /x\n",
	  TRUE, G_GUINT64_CONSTANT(0xffffffffff600000), G_GUINT64_CONSTANT(0xffffffffff601000),
	  0, 0x103, 5, 0, "/x", FALSE },
	/* An empty range is allowed (end == start). */
	{ "2000-2000 r--p 00000000 08:02 1 /e\n",
	  TRUE, 0x2000, 0x2000, 0, 8, 2, 1, "/e", FALSE },

	/* Rejected. */
	{ "7f0e1c200000-7f0e1c228000 r--p 0000", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "7f0e1c200000-7f0e1c228000 r--p 00000000 fe:01\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "7f0e1c200000-7f0e1c228000\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "7f0e1g200000-7f0e1c228000 r--p 00000000 fe:01 1 /x\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "zzzz-7f0e1c228000 r--p 00000000 fe:01 1 /x\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "1000-2000 r--p 0000q000 fe:01 1 /x\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "1000-2000 r--p 00000000 fe01 1 /x\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "1000-2000 r--p 00000000 fe:01 12a /x\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "1000-2000 r--p 00000000 fe:01 99999999999999999999 /x\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "3000-2000 r--p 00000000 08:02 1 /x\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "10000000000000000-10000000000000001 r--p 0 08:02 1 /x\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "-1000-2000 r--p 00000000 08:02 1 /x\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "0x1000-0x2000 r--p 00000000 08:02 1 /x\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "1000-2000 r-p 00000000 08:02 1 /x\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "1000-2000  r--p 00000000 08:02 1 /x\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
	{ "\n", FALSE, 0, 0, 0, 0, 0, 0, NULL, FALSE },
};

/* What a successful parse of case i must give; frees the path. */
static void
assert_parsed_map(int i, const MapsCase *c, ProcMap *map)
{
	ck_assert_msg(map->start == c->start && map->end == c->end,
		      "case %d: range %" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x",
		      i, map->start, map->end);
	ck_assert_uint_eq(map->offset, c->offset);
	ck_assert_uint_eq(map->dev_major, c->major);
	ck_assert_uint_eq(map->dev_minor, c->minor);
	ck_assert_uint_eq(map->inode, c->inode);
	if (c->path)
		ck_assert_str_eq(map->path, c->path);
	else
		ck_assert_ptr_null(map->path);
	ck_assert_int_eq(map->deleted, c->deleted);
	proc_map_clear(map);
	ck_assert_ptr_null(map->path);
}

START_TEST(test_parse_maps_line)
{
	const MapsCase *c = &maps_cases[_i];
	g_autoptr(GError) error = NULL;
	ProcMap map;
	gboolean ok;

	/* A sentinel: a failed parse must leave the output alone. */
	memset(&map, 0x5a, sizeof(map));
	ok = proc_parse_maps_line(c->line, &map, &error);
	ck_assert_msg(ok == c->ok, "case %d \"%s\": got %d", _i, c->line, ok);
	if (ok) {
		ck_assert_ptr_null(error);
		assert_parsed_map(_i, c, &map);
	} else {
		ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_PARSE));
		ck_assert_uint_eq(map.start, G_GUINT64_CONSTANT(0x5a5a5a5a5a5a5a5a));
	}
}
END_TEST

/* A 5000-character path: no fixed buffer may cut it. */
START_TEST(test_parse_maps_long_path)
{
	g_autofree char *path = NULL;
	g_autofree char *line = NULL;
	g_autoptr(GError) error = NULL;
	ProcMap map = { 0 };

	path = g_strnfill(5000, 'a');
	path[0] = '/';
	path[2500] = ' ';
	line = g_strdup_printf("1000-5000 r--p 00000000 08:02 9 %s (deleted)\n", path);

	ck_assert(proc_parse_maps_line(line, &map, &error));
	ck_assert_uint_eq(strlen(map.path), 5000);
	ck_assert_str_eq(map.path, path);
	ck_assert(map.deleted);
	proc_map_clear(&map);
}
END_TEST

/* ---- proc_sanitize_exe --------------------------------------------------- */

typedef struct {
	const char *raw;
	const char *want;   /* NULL: skipped */
} ExeCase;

static const ExeCase exe_cases[] = {
	{ "/usr/bin/foo", "/usr/bin/foo" },
	{ "/usr/bin/my app", "/usr/bin/my app" },
	{ "/usr/bin/foo (deleted)", "/usr/bin/foo" },
	{ "/usr/bin/foo.#prelink#.12345", "/usr/bin/foo" },
	{ "/usr/bin/foo.#prelink#.Ab3xQz (deleted)", "/usr/bin/foo" },
	/* The mark in a directory name is part of that name. */
	{ "/opt/a.#prelink#.1/bin/foo", "/opt/a.#prelink#.1/bin/foo" },
	/* "(deleted)" in the middle is a real name; kept as it is. */
	{ "/opt/x (deleted)/bin/foo", "/opt/x (deleted)/bin/foo" },
	/* Only the one suffix the kernel appends is removed. */
	{ "/usr/bin/foo (deleted) (deleted)", "/usr/bin/foo (deleted)" },
	{ "/usr/bin/foo(deleted)", "/usr/bin/foo(deleted)" },
	{ "/tmp/new\nline", "/tmp/new\nline" },
	{ "-", NULL },
	{ "", NULL },
	{ "usr/bin/foo", NULL },
	{ "./foo", NULL },
	{ "[kthread]", NULL },
	{ "/memfd:foo", NULL },
	{ "/memfd:foo (deleted)", NULL },
	{ "/ (deleted)", NULL },
	{ "/", NULL },
	{ " (deleted)", NULL },
};

START_TEST(test_sanitize_exe)
{
	const ExeCase *c = &exe_cases[_i];
	g_autofree char *got = proc_sanitize_exe(c->raw);

	if (c->want)
		ck_assert_msg(got && strcmp(got, c->want) == 0,
			      "case %d \"%s\": got \"%s\"", _i, c->raw, got ? got : "(null)");
	else
		ck_assert_msg(got == NULL, "case %d \"%s\": got \"%s\"", _i, c->raw, got);
}
END_TEST

START_TEST(test_sanitize_exe_null)
{
	ck_assert_ptr_null(proc_sanitize_exe(NULL));
}
END_TEST

/* ---- proc_parse_meminfo -------------------------------------------------- */

static const char meminfo_full[] =
	"MemTotal:       24576000 kB\n"
	"MemFree:        20123456 kB\n"
	"MemAvailable:   23000000 kB\n"
	"Buffers:           12345 kB\n"
	"Cached:          2345678 kB\n"
	"SwapCached:            0 kB\n"
	"Active(file):     111111 kB\n"
	"HugePages_Total:       0\n";

START_TEST(test_meminfo_full)
{
	g_autoptr(GError) error = NULL;
	ProcMemstat m;

	ck_assert(proc_parse_meminfo(meminfo_full, &m, &error));
	ck_assert_uint_eq(m.total, 24576000);
	ck_assert_uint_eq(m.free, 20123456);
	ck_assert_uint_eq(m.available, 23000000);
	ck_assert_uint_eq(m.buffers, 12345);
	ck_assert_uint_eq(m.cached, 2345678);
}
END_TEST

START_TEST(test_meminfo_no_available)
{
	g_autoptr(GError) error = NULL;
	ProcMemstat m;

	/* Old kernel: no MemAvailable, so 1000 + 300 + 20 = 1320. */
	ck_assert(proc_parse_meminfo("MemTotal: 4000 kB\nMemFree: 1000 kB\n"
				     "Buffers: 20 kB\nCached: 300 kB", &m, &error));
	ck_assert_uint_eq(m.total, 4000);
	ck_assert_uint_eq(m.available, 1320);

	/* No Buffers either: 1000 + 300. */
	ck_assert(proc_parse_meminfo("MemTotal: 4000 kB\nMemFree: 1000 kB\n"
				     "Cached: 300 kB\n", &m, &error));
	ck_assert_uint_eq(m.buffers, 0);
	ck_assert_uint_eq(m.available, 1300);
}
END_TEST

START_TEST(test_meminfo_bad)
{
	static const char *const bad[] = {
		/* no MemTotal */
		"MemFree: 1000 kB\nCached: 300 kB\nMemAvailable: 9 kB\n",
		/* no Cached ("SwapCached" does not count) */
		"MemTotal: 4000 kB\nMemFree: 1000 kB\nSwapCached: 3 kB\n",
		/* no MemFree */
		"MemTotal: 4000 kB\nCached: 300 kB\n",
		/* a needed value that is not a number */
		"MemTotal: lots kB\nMemFree: 1000 kB\nCached: 300 kB\n",
		"",
	};
	ProcMemstat m = { .total = 77 };

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autoptr(GError) error = NULL;

		ck_assert_msg(!proc_parse_meminfo(bad[i], &m, &error), "case %u", i);
		ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_PARSE));
		ck_assert_uint_eq(m.total, 77);
	}
}
END_TEST

/* ---- proc_parse_pressure -------------------------------------------------- */

static const struct {
	const char *text;
	gboolean ok;
	guint some_avg10;     /* hundredths of a percent, when ok */
} pressure_cases[] = {
	/* A real file from a quiet machine, and one under load. */
	{ "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	  "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", TRUE, 0 },
	{ "some avg10=12.34 avg60=3.01 avg300=0.77 total=8123456\n"
	  "full avg10=9.99 avg60=2.00 avg300=0.50 total=6000000\n", TRUE, 1234 },
	/* Only "some" is read, wherever it is; "full" first does not confuse it. */
	{ "full avg10=50.00 avg60=0.00 avg300=0.00 total=1\n"
	  "some avg10=7.05 avg60=0.00 avg300=0.00 total=1\n", TRUE, 705 },
	/* Older kernels have no "full" line for the CPU; memory may lack it too. */
	{ "some avg10=0.50 avg60=0.10 avg300=0.00 total=10", TRUE, 50 },
	/* Bounds: 100.00 is the most a share of time can be. */
	{ "some avg10=100.00 avg60=0.00 avg300=0.00 total=0\n", TRUE, 10000 },
	{ "some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n", FALSE, 0 },
	{ "some avg10=101 avg60=0.00 avg300=0.00 total=0\n", FALSE, 0 },
	/* Fewer decimals read as written, more are cut: 5 -> 500, 5.1 -> 510, 5.129 -> 512. */
	{ "some avg10=5 avg60=0.00\n", TRUE, 500 },
	{ "some avg10=5.1 avg60=0.00\n", TRUE, 510 },
	{ "some avg10=5.129 avg60=0.00\n", TRUE, 512 },
	/* The field order is not assumed. */
	{ "some total=3 avg60=1.00 avg10=2.50\n", TRUE, 250 },
	/* Hostile or broken. */
	{ "", FALSE, 0 },
	{ "full avg10=1.00 avg60=0.00 avg300=0.00 total=0\n", FALSE, 0 },
	{ "some avg60=1.00 avg300=0.00 total=0\n", FALSE, 0 },
	{ "some avg10= avg60=1.00\n", FALSE, 0 },
	{ "some avg10=-1.00 avg60=1.00\n", FALSE, 0 },
	{ "some avg10=1,50 avg60=1.00\n", FALSE, 0 },
	{ "some avg10=1. avg60=1.00\n", FALSE, 0 },
	{ "some avg10=.5 avg60=1.00\n", FALSE, 0 },
	{ "some avg10=1.5x avg60=1.00\n", FALSE, 0 },
	{ "some avg10=99999999999999999999999 avg60=1.00\n", FALSE, 0 },
	{ "somebody avg10=1.00\n", FALSE, 0 },
	{ " some avg10=1.00\n", FALSE, 0 },
};

START_TEST(test_parse_pressure)
{
	g_autoptr(GError) error = NULL;
	ProcPressure p = { .some_avg10 = 4242 };
	gboolean ok = proc_parse_pressure(pressure_cases[_i].text, &p, &error);

	ck_assert_msg(ok == pressure_cases[_i].ok, "case %d: %s", _i,
		      error ? error->message : "parsed");
	if (ok) {
		ck_assert_uint_eq(p.some_avg10, pressure_cases[_i].some_avg10);
	} else {
		ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_PARSE));
		/* Untouched on failure. */
		ck_assert_uint_eq(p.some_avg10, 4242);
	}
}
END_TEST

/* ---- a fake /proc --------------------------------------------------------- */

static char *root;

static void
make_link(const char *rel, const char *target)
{
	g_autofree char *path = g_build_filename(root, rel, NULL);
	g_autofree char *dir = g_path_get_dirname(path);

	ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
	ck_assert_msg(symlink(target, path) == 0, "symlink %s: %s", path, g_strerror(errno));
}

static void
write_rel(const char *rel, const char *contents)
{
	g_autofree char *path = g_build_filename(root, rel, NULL);

	tu_write_file(path, contents);
}

static void
fake_setup(void)
{
	root = tu_make_tempdir();
	proc_set_root(root);
}

static void
fake_teardown(void)
{
	proc_set_root(NULL);
	tu_rm_rf(root);
	g_clear_pointer(&root, g_free);
}

static void
collect_exe(pid_t pid, const char *exe, gpointer user_data)
{
	GHashTable *seen = user_data;
	char *key = g_strdup_printf("%d", (int)pid);

	ck_assert_msg(!g_hash_table_contains(seen, key), "pid %d reported twice", (int)pid);
	g_hash_table_insert(seen, key, g_strdup(exe));
}

static GHashTable *
collect_all(void)
{
	g_autoptr(GError) error = NULL;
	GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

	ck_assert_msg(proc_foreach_exe(collect_exe, seen, &error),
		      "%s", error ? error->message : "");
	return seen;
}

START_TEST(test_root_setting)
{
	proc_set_root(NULL);
	ck_assert_str_eq(proc_get_root(), "/proc");
	proc_set_root("/tmp/fake/");
	ck_assert_str_eq(proc_get_root(), "/tmp/fake");
	proc_set_root("/proc/");
	ck_assert_str_eq(proc_get_root(), "/proc");
	proc_set_root("");
	ck_assert_str_eq(proc_get_root(), "/proc");
}
END_TEST

START_TEST(test_fake_foreach)
{
	g_autoptr(GHashTable) seen = NULL;
	g_autofree char *self = g_strdup_printf("%d/exe", (int)getpid());
	g_autofree char *long_target = NULL;

	make_link("123/exe", "/usr/bin/foo");
	write_rel("123/maps", "1000-2000 r-xp 00000000 08:02 5 /usr/bin/foo\n");
	make_link("456/exe", "/usr/bin/my app (deleted)");
	write_rel("789/stat", "789 (kthreadd) S 0\n");       /* kernel thread: no exe */
	make_link("321/exe", "relative/odd");                  /* reported raw */
	make_link("self/exe", "/usr/bin/self-link");           /* not a pid */
	make_link("sys/exe", "/usr/bin/sys-link");
	make_link("12a/exe", "/usr/bin/not-a-pid");
	make_link("0/exe", "/usr/bin/pid-zero");
	make_link("99999999999/exe", "/usr/bin/too-big");
	make_link(self, "/usr/bin/the-daemon-itself");
	write_rel("meminfo", meminfo_full);
	write_rel("555", "a file, not a directory\n");
	/* A target longer than any first guess of the buffer size. */
	long_target = g_strnfill(3000, 'x');
	long_target[0] = '/';
	make_link("654/exe", long_target);

	seen = collect_all();
	ck_assert_uint_eq(g_hash_table_size(seen), 4);
	ck_assert_str_eq(g_hash_table_lookup(seen, "123"), "/usr/bin/foo");
	ck_assert_str_eq(g_hash_table_lookup(seen, "456"), "/usr/bin/my app (deleted)");
	ck_assert_str_eq(g_hash_table_lookup(seen, "321"), "relative/odd");
	ck_assert_str_eq(g_hash_table_lookup(seen, "654"), long_target);
}
END_TEST

START_TEST(test_fake_foreach_missing_root)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *gone = g_build_filename(root, "nonexistent", NULL);

	proc_set_root(gone);
	ck_assert(!proc_foreach_exe(collect_exe, NULL, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_IO));
}
END_TEST

static GArray *
new_maps(void)
{
	GArray *maps = g_array_new(FALSE, FALSE, sizeof(ProcMap));

	g_array_set_clear_func(maps, proc_map_clear);
	return maps;
}

START_TEST(test_fake_read_maps)
{
	g_autoptr(GArray) maps = new_maps();
	g_autoptr(GError) error = NULL;
	g_autofree char *long_path = g_strnfill(5000, 'b');
	g_autofree char *text = NULL;
	ProcMap first = { .path = g_strdup("/already/there"), .start = 1, .end = 2 };
	ProcMap *m;

	long_path[0] = '/';
	text = g_strdup_printf(
		"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/foo\n"
		"00651000-00652000 rw-p 00051000 08:02 173521      /usr/bin/foo\n"
		"01a2b000-01a4c000 rw-p 00000000 00:00 0           [heap]\n"
		"this line is garbage\n"
		"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
		"7f0000001000-7f0000003000 r--p 00001000 08:02 99  /usr/lib/lib one.so (deleted)\n"
		"7f0000003000-7f0000004000 r--p 00000000 08:02 100 %s\n"
		"ffff-0001 r--p 00000000 08:02 1 /backwards\n"
		"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0   [stack]",
		long_path);
	write_rel("123/maps", text);

	/* Entries already in the array stay first. */
	g_array_append_val(maps, first);
	ck_assert(proc_read_maps(123, maps, &error));
	ck_assert_ptr_null(error);
	ck_assert_uint_eq(maps->len, 5);

	ck_assert_str_eq(g_array_index(maps, ProcMap, 0).path, "/already/there");
	m = &g_array_index(maps, ProcMap, 1);
	ck_assert_str_eq(m->path, "/usr/bin/foo");
	ck_assert_uint_eq(m->start, 0x400000);
	ck_assert_uint_eq(m->end, 0x452000);
	ck_assert_uint_eq(m->offset, 0);
	m = &g_array_index(maps, ProcMap, 2);
	ck_assert_str_eq(m->path, "/usr/bin/foo");
	ck_assert_uint_eq(m->offset, 0x51000);
	m = &g_array_index(maps, ProcMap, 3);
	ck_assert_str_eq(m->path, "/usr/lib/lib one.so");
	ck_assert(m->deleted);
	ck_assert_uint_eq(m->end - m->start, 0x2000);
	m = &g_array_index(maps, ProcMap, 4);
	ck_assert_str_eq(m->path, long_path);
	ck_assert(!m->deleted);
}
END_TEST

START_TEST(test_fake_read_maps_gone)
{
	g_autoptr(GArray) maps = new_maps();
	g_autoptr(GError) error = NULL;

	ck_assert(!proc_read_maps(4242, maps, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_GONE));
	ck_assert_uint_eq(maps->len, 0);
}
END_TEST

START_TEST(test_fake_read_maps_zombie)
{
	g_autoptr(GArray) maps = new_maps();
	g_autoptr(GError) error = NULL;

	/* A zombie's maps file exists and is empty. */
	write_rel("77/maps", "");
	ck_assert(proc_read_maps(77, maps, &error));
	ck_assert_uint_eq(maps->len, 0);
}
END_TEST

START_TEST(test_fake_read_maps_unreadable)
{
	g_autoptr(GArray) maps = new_maps();
	g_autoptr(GError) error = NULL;

	/* A directory where the file should be: an I/O error, not "gone". */
	write_rel("78/maps/x", "");
	ck_assert(!proc_read_maps(78, maps, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_IO));
}
END_TEST

static void
assert_range(GArray *ranges, guint i, guint64 offset, guint64 length)
{
	const ProcRange *r = &g_array_index(ranges, ProcRange, i);

	ck_assert_msg(r->offset == offset && r->length == length,
		      "range %u: %" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT ", want %"
		      G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT, i, r->offset, r->length,
		      offset, length);
}

/*
 * A map of 64 pages at file page 3. Touched (present, or only swapped
 * out): pages 0, 1, 20, 50 and 63, file pages 3, 4, 23, 53 and 66; page 30
 * has a PFN but is not present. In windows of 16 pages: file pages
 * [0,16) clipped to [3,16), [16,32), [48,64) and [64,80) clipped to
 * [64,67); those that touch merge into [3,32) and [48,67). In windows of
 * one page: the touched pages, 3-4 merged.
 */
START_TEST(test_fake_touched)
{
	g_autoptr(GArray) ranges = g_array_new(FALSE, FALSE, sizeof(ProcRange));
	g_autoptr(GError) error = NULL;
	guint64 p = (guint64)sysconf(_SC_PAGESIZE);
	ProcMap map = { .start = 256 * p, .end = 320 * p, .offset = 3 * p, .path = (char *)"/x" };
	ProcRange first = { 1, 2 };

	tu_set_pagemap(root, 123, 256, TU_PM_PRESENT | 42);
	tu_set_pagemap(root, 123, 257, TU_PM_PRESENT);
	tu_set_pagemap(root, 123, 276, TU_PM_PRESENT);
	tu_set_pagemap(root, 123, 286, 4242);
	tu_set_pagemap(root, 123, 306, TU_PM_SWAPPED);
	tu_set_pagemap(root, 123, 319, TU_PM_PRESENT);
	tu_set_pagemap(root, 123, 400, TU_PM_PRESENT);  /* past the map */

	/* Entries already in the array stay. */
	g_array_append_val(ranges, first);
	ck_assert_msg(proc_read_touched(123, &map, 16 * p, ranges, &error), "%s",
		      error ? error->message : "");
	ck_assert_uint_eq(ranges->len, 3);
	assert_range(ranges, 0, 1, 2);
	assert_range(ranges, 1, 3 * p, 29 * p);
	assert_range(ranges, 2, 48 * p, 19 * p);

	g_array_set_size(ranges, 0);
	ck_assert(proc_read_touched(123, &map, p, ranges, &error));
	ck_assert_uint_eq(ranges->len, 4);
	assert_range(ranges, 0, 3 * p, 2 * p);
	assert_range(ranges, 1, 23 * p, p);
	assert_range(ranges, 2, 53 * p, p);
	assert_range(ranges, 3, 66 * p, p);

	/* Nothing touched: no range, and no error. */
	map.start = 1024 * p;
	map.end = 1040 * p;
	tu_set_pagemap(root, 123, 1100, 0);
	g_array_set_size(ranges, 0);
	ck_assert(proc_read_touched(123, &map, p, ranges, &error));
	ck_assert_uint_eq(ranges->len, 0);
}
END_TEST

START_TEST(test_fake_touched_errors)
{
	g_autoptr(GArray) ranges = g_array_new(FALSE, FALSE, sizeof(ProcRange));
	g_autoptr(GError) error = NULL;
	guint64 p = (guint64)sysconf(_SC_PAGESIZE);
	ProcMap map = { .start = 16 * p, .end = 32 * p, .offset = 0, .path = (char *)"/x" };

	/* No process. */
	ck_assert(!proc_read_touched(5, &map, p, ranges, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_GONE));
	/* A pagemap that ends inside the map (a present page before the end):
	 * an error, and the range already found is not appended. */
	g_clear_error(&error);
	tu_set_pagemap(root, 6, 16, TU_PM_PRESENT);
	tu_set_pagemap(root, 6, 20, 0);
	ck_assert(!proc_read_touched(6, &map, p, ranges, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_IO));
	ck_assert_uint_eq(ranges->len, 0);
	/* A map whose start is not on a page. */
	g_clear_error(&error);
	map.start = 16 * p + 1;
	ck_assert(!proc_read_touched(6, &map, p, ranges, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_PARSE));
	ck_assert_uint_eq(ranges->len, 0);
}
END_TEST

START_TEST(test_fake_memstat)
{
	g_autoptr(GError) error = NULL;
	ProcMemstat m;

	write_rel("meminfo", meminfo_full);
	ck_assert(proc_get_memstat(&m, &error));
	ck_assert_uint_eq(m.total, 24576000);
	ck_assert_uint_eq(m.cached, 2345678);
	ck_assert_uint_eq(m.available, 23000000);
}
END_TEST

START_TEST(test_fake_memstat_missing)
{
	g_autoptr(GError) error = NULL;
	ProcMemstat m;

	ck_assert(!proc_get_memstat(&m, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_IO));

	g_clear_error(&error);
	write_rel("meminfo", "MemFree: 1 kB\n");
	ck_assert(!proc_get_memstat(&m, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_PARSE));
}
END_TEST

START_TEST(test_fake_pressure)
{
	g_autoptr(GError) error = NULL;
	ProcPressure p = { 0 };

	/* No pressure directory: a kernel without PSI, told apart from a failure. */
	ck_assert(!proc_get_memory_pressure(&p, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_UNAVAILABLE));

	/* A file where the directory should be: ENOTDIR, the same. */
	g_clear_error(&error);
	write_rel("pressure", "not a directory");
	ck_assert(!proc_get_memory_pressure(&p, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_UNAVAILABLE));
}
END_TEST

START_TEST(test_fake_pressure_present)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = g_build_filename(root, "pressure", "memory", NULL);
	ProcPressure p = { 0 };

	write_rel("pressure/memory",
		  "some avg10=31.41 avg60=5.00 avg300=1.00 total=123\n"
		  "full avg10=20.00 avg60=4.00 avg300=1.00 total=100\n");
	ck_assert_msg(proc_get_memory_pressure(&p, &error), "%s", error ? error->message : "");
	ck_assert_uint_eq(p.some_avg10, 3141);

	/* Present but malformed is a parse error, not "unavailable". */
	write_rel("pressure/memory", "some avg10=lots\n");
	ck_assert(!proc_get_memory_pressure(&p, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_PARSE));

	/* Unreadable (a directory in its place): an I/O error. */
	g_clear_error(&error);
	ck_assert_int_eq(g_remove(dir), 0);
	ck_assert_int_eq(g_mkdir(dir, 0755), 0);
	ck_assert(!proc_get_memory_pressure(&p, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_IO));
}
END_TEST

/* ---- the real /proc ------------------------------------------------------ */

static GPid
spawn_sleep(const char *program)
{
	g_autoptr(GError) error = NULL;
	const char *argv[] = { program, "30", NULL };
	GPid pid;

	ck_assert_msg(g_spawn_async(NULL, (char **)argv, NULL,
				    G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
				    NULL, NULL, &pid, &error),
		      "spawn %s: %s", program, error ? error->message : "");
	return pid;
}

static void
stop_child(GPid pid)
{
	(void)kill(pid, SIGKILL);
	(void)waitpid(pid, NULL, 0);
}

/*
 * Looks for pid in the real process list until it shows `want` (the
 * child may not have exec'd yet), for up to 5 seconds.
 */
static char *
wait_for_exe(GPid pid, const char *want)
{
	g_autofree char *key = g_strdup_printf("%d", (int)pid);
	char *last = NULL;

	for (int tries = 0; tries < 100; tries++) {
		g_autoptr(GHashTable) seen = collect_all();
		const char *exe = g_hash_table_lookup(seen, key);

		g_free(last);
		last = g_strdup(exe);
		if (exe && strcmp(exe, want) == 0)
			break;
		g_usleep(50 * 1000);
	}
	return last;
}

static char *
real_sleep(void)
{
	g_autofree char *found = g_find_program_in_path("sleep");
	char *real;

	ck_assert_ptr_nonnull(found);
	real = realpath(found, NULL);
	ck_assert_ptr_nonnull(real);
	return real;
}

static gboolean
is_placeholder(gpointer key, gpointer value, gpointer user_data)
{
	const char *exe = value;

	return strcmp(exe, "-") == 0 || exe[0] == '\0';
}

START_TEST(test_real_foreach)
{
	g_autofree char *sleep_path = real_sleep();
	g_autofree char *self = g_strdup_printf("%d", (int)getpid());
	g_autofree char *got = NULL;
	g_autoptr(GHashTable) seen = NULL;
	GPid pid;

	proc_set_root(NULL);
	pid = spawn_sleep(sleep_path);
	got = wait_for_exe(pid, sleep_path);
	stop_child(pid);
	ck_assert_msg(got && strcmp(got, sleep_path) == 0,
		      "pid %d: got \"%s\", want \"%s\"", (int)pid, got ? got : "(none)", sleep_path);

	seen = collect_all();
	ck_assert_msg(!g_hash_table_contains(seen, self), "own pid %s reported", self);
	/* No entry is libproc2's "-" placeholder or empty. */
	ck_assert_ptr_null(g_hash_table_find(seen, is_placeholder, NULL));
}
END_TEST

/* Lists with lister into a new table of pid -> exe. */
static GHashTable *
lister_collect(ProcLister *lister)
{
	g_autoptr(GError) error = NULL;
	GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

	ck_assert_msg(proc_lister_foreach_exe(lister, collect_exe, seen, &error),
		      "%s", error ? error->message : "");
	return seen;
}

/*
 * A lister keeps libproc2's context from one listing to the next: the
 * second listing sees the process started since and not the one that
 * ended, as a fresh listing would.
 */
START_TEST(test_real_lister_reused)
{
	g_autoptr(ProcLister) lister = proc_lister_new();
	g_autofree char *sleep_path = real_sleep();
	g_autofree char *got = NULL;
	g_autofree char *first_key = NULL, *second_key = NULL;
	g_autoptr(GHashTable) first = NULL;
	g_autoptr(GHashTable) second = NULL;
	GPid a, b;

	proc_set_root(NULL);
	a = spawn_sleep(sleep_path);
	got = wait_for_exe(a, sleep_path);
	ck_assert_ptr_nonnull(got);
	first = lister_collect(lister);
	first_key = g_strdup_printf("%d", (int)a);
	ck_assert_str_eq(g_hash_table_lookup(first, first_key), sleep_path);
	stop_child(a);

	b = spawn_sleep(sleep_path);
	g_clear_pointer(&got, g_free);
	got = wait_for_exe(b, sleep_path);
	ck_assert_ptr_nonnull(got);
	second = lister_collect(lister);
	second_key = g_strdup_printf("%d", (int)b);
	stop_child(b);
	ck_assert_str_eq(g_hash_table_lookup(second, second_key), sleep_path);
	ck_assert(!g_hash_table_contains(second, first_key));
}
END_TEST

/*
 * libproc2 escapes the exe string for terminals (a newline or tab
 * becomes '.' or '?', non-ASCII may become '?'); the paths reported must
 * still be the real ones. Runs copies of sleep under awkward names.
 */
START_TEST(test_real_awkward_paths)
{
	static const char *const names[] = {
		"my app",          /* a space */
		"new\nline",       /* a newline */
		"tab\there",       /* a tab */
		"caf\xc3\xa9",     /* UTF-8 */
		"bad\xff" "byte",  /* not UTF-8 */
		"dotted.name",
		"what?",
	};
	g_autofree char *sleep_path = real_sleep();
	g_autofree char *dir = tu_make_tempdir();
	g_autofree char *contents = NULL;
	gsize length;

	proc_set_root(NULL);
	ck_assert(g_file_get_contents(sleep_path, &contents, &length, NULL));

	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autofree char *program = g_build_filename(dir, names[i], NULL);
		g_autofree char *got = NULL;
		GPid pid;

		ck_assert(g_file_set_contents(program, contents, (gssize)length, NULL));
		ck_assert_int_eq(g_chmod(program, 0755), 0);
		pid = spawn_sleep(program);
		got = wait_for_exe(pid, program);
		stop_child(pid);
		ck_assert_msg(got && strcmp(got, program) == 0,
			      "case %u: got \"%s\"", i, got ? got : "(none)");
	}

	/* Replaced while running: the kernel appends " (deleted)". */
	{
		g_autofree char *program = g_build_filename(dir, "gone soon", NULL);
		g_autofree char *want = g_strconcat(program, " (deleted)", NULL);
		g_autofree char *got = NULL;
		g_autofree char *clean = NULL;
		GPid pid;

		ck_assert(g_file_set_contents(program, contents, (gssize)length, NULL));
		ck_assert_int_eq(g_chmod(program, 0755), 0);
		pid = spawn_sleep(program);
		g_free(wait_for_exe(pid, program));
		ck_assert_int_eq(g_unlink(program), 0);
		got = wait_for_exe(pid, want);
		stop_child(pid);
		ck_assert_msg(got && strcmp(got, want) == 0, "got \"%s\"", got ? got : "(none)");
		clean = proc_sanitize_exe(got);
		ck_assert_str_eq(clean, program);
	}
	tu_rm_rf(dir);
}
END_TEST

START_TEST(test_real_read_maps)
{
	g_autofree char *sleep_path = real_sleep();
	g_autoptr(GArray) maps = new_maps();
	g_autoptr(GError) error = NULL;
	g_autofree char *got = NULL;
	gboolean found = FALSE;
	GPid pid;

	proc_set_root(NULL);
	pid = spawn_sleep(sleep_path);
	got = wait_for_exe(pid, sleep_path);
	ck_assert(proc_read_maps(pid, maps, &error));
	stop_child(pid);

	for (guint i = 0; i < maps->len; i++) {
		ProcMap *m = &g_array_index(maps, ProcMap, i);

		ck_assert_ptr_nonnull(m->path);
		ck_assert_int_eq(m->path[0], '/');
		ck_assert(m->end > m->start);
		if (strcmp(m->path, sleep_path) == 0)
			found = TRUE;
	}
	ck_assert(found);

	/* Reaped, so its directory is gone. */
	g_array_set_size(maps, 0);
	g_clear_error(&error);
	ck_assert(!proc_read_maps(pid, maps, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_GONE));
}
END_TEST

/*
 * This process's own pages: a private mapping of a 64-page file, two
 * pages written (a write fault maps only its page: no fault-around), so
 * exactly those two are touched.
 */
START_TEST(test_real_touched)
{
	g_autoptr(GArray) ranges = g_array_new(FALSE, FALSE, sizeof(ProcRange));
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = tu_make_tempdir();
	g_autofree char *path = g_build_filename(dir, "mapped", NULL);
	g_autofree char *contents = NULL;
	guint64 p = (guint64)sysconf(_SC_PAGESIZE);
	ProcMap map = { 0 };
	char *addr;
	int fd;

	proc_set_root(NULL);
	contents = g_malloc0(64 * p + 1);
	memset(contents, 'x', 64 * p);
	tu_write_file(path, contents);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	addr = mmap(NULL, 64 * p, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ck_assert(addr != MAP_FAILED);
	close(fd);
	addr[5 * p] = 'y';
	addr[40 * p + 7] = 'y';

	map.start = (guint64)(guintptr)addr;
	map.end = map.start + 64 * p;
	map.offset = 0;
	ck_assert_msg(proc_read_touched(getpid(), &map, p, ranges, &error), "%s",
		      error ? error->message : "");
	ck_assert_uint_eq(ranges->len, 2);
	assert_range(ranges, 0, 5 * p, p);
	assert_range(ranges, 1, 40 * p, p);

	g_array_set_size(ranges, 0);
	ck_assert(proc_read_touched(getpid(), &map, 16 * p, ranges, &error));
	ck_assert_uint_eq(ranges->len, 2);
	assert_range(ranges, 0, 0, 16 * p);
	assert_range(ranges, 1, 32 * p, 16 * p);

	munmap(addr, 64 * p);
	tu_rm_rf(dir);
}
END_TEST

START_TEST(test_real_memstat)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *text = NULL;
	ProcMemstat lib, parsed;

	proc_set_root(NULL);
	ck_assert(proc_get_memstat(&lib, &error));
	ck_assert(g_file_get_contents("/proc/meminfo", &text, NULL, NULL));
	ck_assert(proc_parse_meminfo(text, &parsed, &error));
	/* MemTotal does not move; the rest may between the two reads. */
	ck_assert_uint_eq(lib.total, parsed.total);
	ck_assert(lib.total > 0);
	ck_assert(lib.available <= lib.total);
	ck_assert(lib.free <= lib.total);
}
END_TEST

START_TEST(test_real_pressure)
{
	g_autoptr(GError) error = NULL;
	ProcPressure p = { 0 };

	proc_set_root(NULL);
	/* Either answer is a contract: the figure, or "unavailable" without PSI. */
	if (g_file_test("/proc/pressure/memory", G_FILE_TEST_EXISTS)) {
		ck_assert_msg(proc_get_memory_pressure(&p, &error), "%s",
			      error ? error->message : "");
		ck_assert_uint_le(p.some_avg10, 10000);
	} else {
		ck_assert(!proc_get_memory_pressure(&p, &error));
		ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_UNAVAILABLE));
	}
}
END_TEST

/* ---- mountinfo ------------------------------------------------------------ */

typedef struct {
	const char *line;
	gboolean ok;
	guint id, parent, major, minor;
	const char *root, *mountpoint, *fstype;
} MountCase;

static const MountCase mount_cases[] = {
	/* proc(5)'s example: one optional field. */
	{ "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n",
	  TRUE, 36, 35, 98, 0, "/mnt1", "/mnt/parent", "ext3" },
	/* No optional field, no newline. */
	{ "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw",
	  TRUE, 22, 1, 254, 0, "/", "/", "ext4" },
	/* Several optional fields. */
	{ "40 22 0:35 / /sys/fs/cgroup rw shared:9 master:3 propagate_from:2 unbindable - cgroup2 cgroup2 rw\n",
	  TRUE, 40, 22, 0, 35, "/", "/sys/fs/cgroup", "cgroup2" },
	/* A bind mount of a directory (root is not "/"), escaped space, tab, newline and backslash. */
	{ "501 30 254:0 /var/lib/flatpak/app/org.x/cur\\040rent /app\\011x\\012y\\134z rw - ext4 /dev/vda rw\n",
	  TRUE, 501, 30, 254, 0, "/var/lib/flatpak/app/org.x/cur rent", "/app\tx\ny\\z", "ext4" },
	/* A backslash not followed by three octal digits stays. */
	{ "7 1 0:5 /a\\9b /m\\04 rw - tmpfs none rw\n",
	  TRUE, 7, 1, 0, 5, "/a\\9b", "/m\\04", "tmpfs" },
	/* A FUSE file system type with a subtype; a source with spaces escaped. */
	{ "88 22 0:60 / /tmp/.mount_App rw,nosuid - fuse.squashfuse squashfuse\\040x rw,user_id=1000\n",
	  TRUE, 88, 22, 0, 60, "/", "/tmp/.mount_App", "fuse.squashfuse" },
	/* A loop device with a large minor, an overlay. */
	{ "1234 1233 7:1048575 / /snap/core22/1380 ro - squashfs /dev/loop3 ro\n",
	  TRUE, 1234, 1233, 7, 1048575, "/", "/snap/core22/1380", "squashfs" },
	{ "900 1 0:98 / /var/lib/docker/overlay2/abc/merged rw - overlay overlay rw,lowerdir=/l\n",
	  TRUE, 900, 1, 0, 98, "/", "/var/lib/docker/overlay2/abc/merged", "overlay" },

	/* Rejected. */
	{ "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 ext3 /dev/root rw\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "36 35 98:0 /mnt1 /mnt/parent rw -\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "36 35 98:0 /mnt1 /mnt/parent rw - \n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "36 35 98 /mnt1 /mnt/parent rw - ext3 x rw\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "36 35 fe:00 /mnt1 /mnt/parent rw - ext3 x rw\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "x 35 98:0 /mnt1 /mnt/parent rw - ext3 x rw\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "36 35 98:0 mnt1 /mnt/parent rw - ext3 x rw\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "36 35 98:0 /mnt1 parent rw - ext3 x rw\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "36 35 98:0 /mnt1\\000x /p rw - ext3 x rw\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "36 35 98:0 /mnt1  /p rw - ext3 x rw\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "99999999999 35 98:0 / /p rw - ext3 x rw\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "36 35 98:4294967296 / /p rw - ext3 x rw\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "36 35 98:0 / /p\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
	{ "\n", FALSE, 0, 0, 0, 0, NULL, NULL, NULL },
};

START_TEST(test_parse_mountinfo_line)
{
	const MountCase *c = &mount_cases[_i];
	g_autoptr(GError) error = NULL;
	ProcMount m = { 0 };
	gboolean ok = proc_parse_mountinfo_line(c->line, &m, &error);

	ck_assert_msg(ok == c->ok, "case %d (%s): %s", _i, c->line, error ? error->message : "parsed");
	if (!ok) {
		ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_PARSE));
		ck_assert_ptr_null(m.root);
		return;
	}
	ck_assert_uint_eq(m.id, c->id);
	ck_assert_uint_eq(m.parent, c->parent);
	ck_assert_uint_eq(m.dev_major, c->major);
	ck_assert_uint_eq(m.dev_minor, c->minor);
	ck_assert_str_eq(m.root, c->root);
	ck_assert_str_eq(m.mountpoint, c->mountpoint);
	ck_assert_str_eq(m.fstype, c->fstype);
	proc_mount_clear(&m);
	ck_assert_ptr_null(m.root);
}
END_TEST

/* A file of n mounts at ROOT/PID/mountinfo. */
static void
write_mounts(int pid, guint n)
{
	g_autofree char *rel = g_strdup_printf("%d/mountinfo", pid);
	g_autoptr(GString) text = g_string_new(NULL);

	for (guint i = 0; i < n; i++)
		g_string_append_printf(text, "%u 1 0:%u / /m/%u rw shared:%u - tmpfs t rw\n",
				       i + 2, i + 50, i, i + 1);
	write_rel(rel, text->str);
}

/* PROC_MOUNTS_MAX mounts are read, one more is refused whole. */
START_TEST(test_fake_mountinfo_bound)
{
	g_autoptr(GArray) mounts = g_array_new(FALSE, FALSE, sizeof(ProcMount));
	g_autoptr(GError) error = NULL;
	const ProcMount *last;

	g_array_set_clear_func(mounts, proc_mount_clear);
	write_mounts(10, PROC_MOUNTS_MAX);
	ck_assert_msg(proc_read_mountinfo(10, mounts, &error), "%s", error ? error->message : "");
	ck_assert_uint_eq(mounts->len, PROC_MOUNTS_MAX);
	last = &g_array_index(mounts, ProcMount, PROC_MOUNTS_MAX - 1);
	ck_assert_uint_eq(last->dev_minor, PROC_MOUNTS_MAX - 1 + 50);
	ck_assert_str_eq(last->mountpoint, "/m/19999");

	g_array_set_size(mounts, 0);
	write_mounts(11, PROC_MOUNTS_MAX + 1);
	ck_assert(!proc_read_mountinfo(11, mounts, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_PARSE));
	ck_assert_uint_eq(mounts->len, 0);

	/* A process that is gone. */
	g_clear_error(&error);
	ck_assert(!proc_read_mountinfo(12, mounts, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_GONE));
}
END_TEST

/* The table behind a descriptor kept open to poll it: each read from its start. */
START_TEST(test_fake_mountinfo_fd)
{
	g_autoptr(GArray) mounts = g_array_new(FALSE, FALSE, sizeof(ProcMount));
	g_autoptr(GError) error = NULL;
	char byte;
	int fd;

	g_array_set_clear_func(mounts, proc_mount_clear);
	write_rel("self/mountinfo", "22 1 254:0 / / rw shared:1 - ext4 /dev/vda rw\n"
		  "40 22 0:35 / /my\\040tmp rw - tmpfs tmpfs rw\n");
	fd = proc_open_self_mountinfo();
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, &byte, 1), 1);   /* moved on: the read starts over anyway */
	for (int pass = 0; pass < 2; pass++) {
		g_array_set_size(mounts, 0);
		ck_assert_msg(proc_read_mountinfo_fd(fd, mounts, &error), "%s",
			      error ? error->message : "");
		ck_assert_uint_eq(mounts->len, 2);
		ck_assert_uint_eq(g_array_index(mounts, ProcMount, 0).id, 22);
		ck_assert_str_eq(g_array_index(mounts, ProcMount, 1).mountpoint, "/my tmp");
		ck_assert_uint_eq(g_array_index(mounts, ProcMount, 1).dev_minor, 35);
	}
	/* A bad line refuses the whole table (the fake file is replaced: opened again). */
	close(fd);
	write_rel("self/mountinfo", "22 1 254:0 / / rw - ext4 /dev/vda rw\n41 x\n");
	fd = proc_open_self_mountinfo();
	ck_assert_int_ge(fd, 0);
	g_array_set_size(mounts, 0);
	ck_assert(!proc_read_mountinfo_fd(fd, mounts, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_PARSE));
	ck_assert_uint_eq(mounts->len, 0);
	close(fd);
}
END_TEST

START_TEST(test_fake_mnt_ns)
{
	guint64 ns = 0;

	make_link("20/ns/mnt", "mnt:[4026531841]");
	ck_assert(proc_get_mnt_ns(20, &ns));
	ck_assert_uint_eq(ns, G_GUINT64_CONSTANT(4026531841));
	make_link("21/ns/mnt", "net:[4026531840]");
	ck_assert(!proc_get_mnt_ns(21, &ns));
	make_link("23/ns/mnt", "mnt:[12]x");
	ck_assert(!proc_get_mnt_ns(23, &ns));
	ck_assert(!proc_get_mnt_ns(22, &ns));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_uint_eq(ns, G_GUINT64_CONSTANT(4026531841));
}
END_TEST

/* This process's namespace and mount table, from the real /proc. */
START_TEST(test_real_mountinfo)
{
	g_autoptr(GArray) mounts = g_array_new(FALSE, FALSE, sizeof(ProcMount));
	g_autoptr(GError) error = NULL;
	g_autofree char *self_root = NULL;
	guint64 self = 0, by_pid = 0;
	gboolean root_seen = FALSE;

	proc_set_root(NULL);
	g_array_set_clear_func(mounts, proc_mount_clear);
	ck_assert_msg(proc_read_mountinfo(0, mounts, &error), "%s", error ? error->message : "");
	for (guint i = 0; i < mounts->len; i++)
		root_seen |= strcmp(g_array_index(mounts, ProcMount, i).mountpoint, "/") == 0;
	ck_assert(root_seen);
	ck_assert(proc_get_mnt_ns(0, &self));
	ck_assert(proc_get_mnt_ns(getpid(), &by_pid));
	ck_assert_uint_eq(self, by_pid);
	self_root = proc_get_process_root(getpid());
	ck_assert_str_eq(self_root, "/");
}
END_TEST

static Suite *
proc_suite(void)
{
	Suite *s = suite_create("proc");
	TCase *tc = tcase_create("parse");
	TCase *fake = tcase_create("fake-root");
	TCase *real = tcase_create("real-proc");

	tcase_add_loop_test(tc, test_parse_maps_line, 0, G_N_ELEMENTS(maps_cases));
	tcase_add_test(tc, test_parse_maps_long_path);
	tcase_add_loop_test(tc, test_sanitize_exe, 0, G_N_ELEMENTS(exe_cases));
	tcase_add_test(tc, test_sanitize_exe_null);
	tcase_add_test(tc, test_meminfo_full);
	tcase_add_test(tc, test_meminfo_no_available);
	tcase_add_test(tc, test_meminfo_bad);
	tcase_add_loop_test(tc, test_parse_pressure, 0, G_N_ELEMENTS(pressure_cases));
	tcase_add_test(tc, test_root_setting);
	tcase_add_loop_test(tc, test_parse_mountinfo_line, 0, G_N_ELEMENTS(mount_cases));
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(fake, fake_setup, fake_teardown);
	tcase_add_test(fake, test_fake_foreach);
	tcase_add_test(fake, test_fake_foreach_missing_root);
	tcase_add_test(fake, test_fake_read_maps);
	tcase_add_test(fake, test_fake_read_maps_gone);
	tcase_add_test(fake, test_fake_read_maps_zombie);
	tcase_add_test(fake, test_fake_read_maps_unreadable);
	tcase_add_test(fake, test_fake_touched);
	tcase_add_test(fake, test_fake_touched_errors);
	tcase_add_test(fake, test_fake_memstat);
	tcase_add_test(fake, test_fake_memstat_missing);
	tcase_add_test(fake, test_fake_pressure);
	tcase_add_test(fake, test_fake_pressure_present);
	tcase_add_test(fake, test_fake_mountinfo_bound);
	tcase_add_test(fake, test_fake_mountinfo_fd);
	tcase_add_test(fake, test_fake_mnt_ns);
	suite_add_tcase(s, fake);

	tcase_set_timeout(real, 60);
	tcase_add_test(real, test_real_foreach);
	tcase_add_test(real, test_real_lister_reused);
	tcase_add_test(real, test_real_awkward_paths);
	tcase_add_test(real, test_real_read_maps);
	tcase_add_test(real, test_real_touched);
	tcase_add_test(real, test_real_memstat);
	tcase_add_test(real, test_real_pressure);
	tcase_add_test(real, test_real_mountinfo);
	suite_add_tcase(s, real);
	return s;
}

int
main(void)
{
	return tu_run_suite(proc_suite());
}
