/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/learn.c, driven through src/scan.c as the cycle drives
 * them: scans of a fake /proc whose maps point at real
 * files in a temporary directory, and scripted scans (begin / saw / end)
 * at hand-picked model times, checked against hand-computed admissions,
 * bad exes, chain weights and running times.
 */
#include "config.h"

#include "testutil.h"
#include "proc.h"
#include "prophet.h"
#include "learn.h"
#include "scan.h"
#include "watch.h"

#include <errno.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char *root;        /* the temporary directory */
static char *proc_dir;    /* ROOT/proc, the fake /proc */
static Conf *conf;
static Model *model;
static Scan *scan;
static Learn *learn;

/* ROOT/rel, owned by the caller. */
static char *
at(const char *rel)
{
	return g_build_filename(root, rel, NULL);
}

/* A regular file of `size` bytes at ROOT/rel. */
static void
make_file(const char *rel, gsize size)
{
	g_autofree char *path = at(rel);
	g_autofree char *contents = g_malloc0(size + 1);

	memset(contents, 'x', size);
	tu_write_file(path, contents);
}

static void
set_list(char ***field, const char *value)
{
	g_strfreev(*field);
	*field = g_strsplit(value, ";", -1);
}

static void
setup(void)
{
	g_autofree char *exeprefix = NULL;
	g_autofree char *mapprefix = NULL;

	root = tu_make_tempdir();
	proc_dir = at("proc");
	g_assert(g_mkdir_with_parents(proc_dir, 0755) == 0);
	proc_set_root(proc_dir);

	conf = conf_new();
	exeprefix = g_strdup_printf("!%s/bin/skip/;%s/bin/;!/", root, root);
	mapprefix = g_strdup_printf("!%s/files/private/;%s/files/;%s/bin/;!/", root, root, root);
	set_list(&conf->exeprefix, exeprefix);
	set_list(&conf->mapprefix, mapprefix);
	conf->minsize = 10000;
	conf->autosave = 100;

	model = model_new();
	scan = scan_new();
	learn = learn_new();
}

static void
teardown(void)
{
	g_clear_pointer(&learn, learn_free);
	g_clear_pointer(&scan, scan_free);
	g_clear_pointer(&model, model_free);
	g_clear_pointer(&conf, conf_free);
	proc_set_root(NULL);
	tu_rm_rf(root);
	g_clear_pointer(&proc_dir, g_free);
	g_clear_pointer(&root, g_free);
}

/* A read set, as the daemon hands it on: a too-small verdict forgets the exec event. */
static void
learn_files(const char *exe_path, const GArray *ranges, gint64 now)
{
	if (learn_read_set(learn, model, conf, exe_path, ranges, now) == LEARN_READ_TOO_SMALL)
		scan_forget_exec(scan, exe_path);
}

/* One maps line for ROOT/rel (or an absolute path when rel starts with '/'). */
static char *
maps_line(guint64 start, guint64 end, guint64 offset, const char *rel)
{
	g_autofree char *path = rel[0] == '/' ? g_strdup(rel) : at(rel);

	return g_strdup_printf("%08" G_GINT64_MODIFIER "x-%08" G_GINT64_MODIFIER "x r-xp %08"
			       G_GINT64_MODIFIER "x 00:00 0      %s\n",
			       start, end, offset, path);
}

/*
 * maps with each file line given the identity the kernel would report:
 * the device and inode of the regular file at its path when the process
 * is made. A line for a file that is not there (or is not a regular
 * file) keeps none, which the default file check refuses, as it refused
 * the file; deleted and anonymous lines and lines that do not parse stay
 * as they are.
 */
static char *
with_identities(const char *maps)
{
	g_auto(GStrv) lines = g_strsplit(maps, "\n", -1);
	GString *out = g_string_new(NULL);

	for (guint i = 0; lines[i]; i++) {
		ProcMap m = { 0 };
		struct stat st;

		if (lines[i][0] == '\0' && !lines[i + 1])
			break;
		if (!proc_parse_maps_line(lines[i], &m, NULL) || !m.path || m.deleted) {
			g_string_append_printf(out, "%s\n", lines[i]);
		} else {
			guint major_ = 0, minor_ = 0;
			guint64 inode = 0;

			if (lstat(m.path, &st) == 0 && S_ISREG(st.st_mode)) {
				major_ = major(st.st_dev);
				minor_ = minor(st.st_dev);
				inode = (guint64)st.st_ino;
			}
			g_string_append_printf(out, "%08" G_GINT64_MODIFIER "x-%08" G_GINT64_MODIFIER
					       "x r-xp %08" G_GINT64_MODIFIER "x %02x:%02x %"
					       G_GUINT64_FORMAT "      %s\n", m.start, m.end, m.offset,
					       major_, minor_, inode, m.path);
		}
		proc_map_clear(&m);
	}
	return g_string_free(out, FALSE);
}

/* A hand-made map given the identity of the file at its path now, as with_identities(). */
static void
give_identity(ProcMap *m)
{
	struct stat st;

	if (m->path && lstat(m->path, &st) == 0 && S_ISREG(st.st_mode)) {
		m->dev_major = major(st.st_dev);
		m->dev_minor = minor(st.st_dev);
		m->inode = (guint64)st.st_ino;
	}
}

/*
 * PID/map_files of the fake /proc for maps (as written in dir/maps): an
 * entry START-END for the file of each file line, a hard link to it (the
 * kernel's entries lead to the mapped file, whatever its path names
 * later), or a symlink for a file on another file system.
 */
static void
link_map_files(const char *dir, const char *maps)
{
	g_autofree char *files = g_build_filename(dir, "map_files", NULL);
	g_auto(GStrv) lines = g_strsplit(maps, "\n", -1);

	ck_assert_int_eq(g_mkdir_with_parents(files, 0755), 0);
	for (guint i = 0; lines[i]; i++) {
		ProcMap m = { 0 };

		if (proc_parse_maps_line(lines[i], &m, NULL) && m.path && !m.deleted) {
			g_autofree char *entry = g_strdup_printf("%s/%" G_GINT64_MODIFIER "x-%"
								G_GINT64_MODIFIER "x", files, m.start,
								m.end);

			(void)g_unlink(entry);
			if (link(m.path, entry) != 0)
				ck_assert_int_eq(symlink(m.path, entry), 0);
		}
		proc_map_clear(&m);
	}
}

/* Rewrites the maps of a process of the fake /proc, with identities. */
static void
write_maps(const char *maps_path, const char *maps)
{
	g_autofree char *identified = with_identities(maps);
	g_autofree char *dir = g_path_get_dirname(maps_path);

	tu_write_file(maps_path, identified);
	link_map_files(dir, identified);
}

static void
add_line(GString *maps, guint64 start, guint64 end, guint64 offset, const char *rel)
{
	g_autofree char *line = maps_line(start, end, offset, rel);

	g_string_append(maps, line);
}

/*
 * A process in the fake /proc: PID/exe -> exe, PID/maps = maps. Like a
 * real process it maps its own executable: a line for it is added when
 * maps has none (tests/check_learn.c's exes mostly have no file, so that
 * line is then dropped as not a regular file and counts no bytes).
 */
static void
add_process_raw(int pid, const char *exe, const char *maps)
{
	g_autofree char *dir = g_strdup_printf("%s/%d", proc_dir, pid);
	g_autofree char *link = g_build_filename(dir, "exe", NULL);
	g_autofree char *maps_path = g_build_filename(dir, "maps", NULL);

	g_autofree char *identified = with_identities(maps);

	ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
	ck_assert_msg(symlink(exe, link) == 0, "symlink: %s", g_strerror(errno));
	tu_write_file(maps_path, identified);
	link_map_files(dir, identified);
}

static void
add_process(int pid, const char *exe, const char *maps)
{
	g_autofree char *full = NULL;

	if (exe[0] == '/' && !strstr(maps, exe)) {
		g_autofree char *own = maps_line(0x7f0000000000, 0x7f0000001000, 0, exe);

		full = g_strconcat(maps, own, NULL);
	}
	add_process_raw(pid, exe, full ? full : maps);
}

static void
remove_process(int pid)
{
	g_autofree char *dir = g_strdup_printf("%s/%d", proc_dir, pid);

	tu_rm_rf(dir);
}

static void
proc_scan(gint64 now)
{
	g_autoptr(GError) error = NULL;

	ck_assert_msg(scan_proc(scan, model, conf, now, &error), "%s", error ? error->message : "");
}

static Exe *
lookup(const char *rel)
{
	g_autofree char *path = at(rel);

	return model_lookup_exe(model, path);
}

static gboolean
is_bad(const char *rel, BadExe **out)
{
	g_autofree char *path = at(rel);
	BadExe *bad = g_hash_table_lookup(model->bad_exes, path);

	if (out)
		*out = bad;
	return bad != NULL;
}

static gboolean
in_running(const Exe *exe)
{
	for (guint i = 0; i < model->running->len; i++)
		if (g_ptr_array_index(model->running, i) == exe)
			return TRUE;
	return FALSE;
}

/* ---- admission from a fake /proc ----------------------------------------- */

START_TEST(test_admission)
{
	g_autoptr(GString) maps_a = NULL;
	g_autofree char *maps_b = NULL;
	g_autofree char *exe_a = at("bin/a");
	g_autofree char *exe_b = at("bin/b");
	g_autofree char *fifo = at("files/fifo");
	g_autofree char *link = at("files/link.so");
	g_autofree char *lib1 = at("files/lib1.so");
	const LearnStats *stats = learn_get_stats(learn);
	BadExe *bad;
	Exe *a;
	Map *map;

	make_file("bin/a", 70000);
	make_file("files/lib1.so", 40000);
	make_file("files/small.so", 5000);
	make_file("files/private/secret.so", 9000);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(symlink(lib1, link), 0);

	maps_a = g_string_new("00400000-00401000 rw-p 00000000 00:00 0 \n"); /* anonymous */
	add_line(maps_a, 0x1000, 0x5000, 0, "bin/a");                    /* 16384: kept */
	add_line(maps_a, 0x5000, 0x6000, 0x4000, "bin/a");               /* 4096: kept */
	add_line(maps_a, 0x10000, 0x18000, 0, "files/lib1.so");          /* 32768: kept */
	g_string_append(maps_a, "01a2b000-01a4c000 rw-p 00000000 00:00 0   [heap]\n");
	add_line(maps_a, 0x20000, 0x30000, 0, "files/gone.so (deleted)"); /* deleted */
	add_line(maps_a, 0x30000, 0x40000, 0, "/memfd:jit (deleted)");   /* memfd */
	add_line(maps_a, 0x40000, 0x50000, 0, "files/fifo");             /* not regular */
	add_line(maps_a, 0x50000, 0x60000, 0, "files/link.so");          /* a symlink */
	add_line(maps_a, 0x60000, 0x70000, 0, "files/missing.so");       /* no such file */
	add_line(maps_a, 0x70000, 0x80000, 0, "files/private/secret.so"); /* !mapprefix */
	add_line(maps_a, 0x80000, 0x90000, 0, "/etc/passwd");            /* !/ */
	g_string_append(maps_a, "garbage line\n");
	add_process(100, exe_a, maps_a->str);

	maps_b = maps_line(0x1000, 0x2000, 0, "files/small.so");     /* 4096 < 10000 */
	add_process(200, exe_b, maps_b);
	add_process(300, "/usr/bin/outside", maps_b);                 /* !exeprefix */
	add_process(400, "-", "");                                    /* unreadable */
	{
		g_autofree char *skip = at("bin/skip/tool");

		add_process(500, skip, maps_b);                        /* !exeprefix */
	}

	proc_scan(0);
	ck_assert_uint_eq(scan_get_stats(scan)->processes, 5);
	ck_assert_uint_eq(scan_get_stats(scan)->changed, 0);
	ck_assert_ptr_null(lookup("bin/a"));   /* nothing admitted by the scan */

	learn_update(learn, scan, model, conf, 10);
	ck_assert_uint_eq(stats->admitted, 1);
	ck_assert_uint_eq(stats->too_small, 1);
	ck_assert_uint_eq(stats->gone, 0);
	ck_assert_uint_eq(g_hash_table_size(model->exes), 1);

	a = lookup("bin/a");
	ck_assert_ptr_nonnull(a);
	/* 16384 + 4096 + 32768 = 53248 bytes in 3 maps. */
	ck_assert_uint_eq(a->exemaps->len, 3);
	ck_assert_uint_eq(a->size, 53248);
	ck_assert_int_eq(a->running_timestamp, 0);
	ck_assert_int_eq(a->change_timestamp, 0);
	/* Accounted from 0 to 10 while running. */
	ck_assert_double_eq(a->time, 10.0);
	ck_assert_int_eq(a->update_time, 10);
	ck_assert(exe_is_running(model, a));
	ck_assert_uint_eq(model->running->len, 1);
	ck_assert(in_running(a));
	ck_assert_int_eq(model->last_running_timestamp, 0);
	ck_assert(model->dirty);

	ck_assert_uint_eq(g_hash_table_size(model->maps), 3);
	map = model_lookup_map(model, exe_a, 0x4000, 0x1000);
	ck_assert_ptr_nonnull(map);
	ck_assert_int_eq(map->refcount, 1);
	ck_assert_int_eq(map->update_time, 10);
	ck_assert_ptr_nonnull(model_lookup_map(model, exe_a, 0, 0x4000));
	ck_assert_ptr_nonnull(model_lookup_map(model, lib1, 0, 0x8000));

	ck_assert(is_bad("bin/b", &bad));
	ck_assert_uint_eq(bad->size, 4096);
	ck_assert_int_eq(bad->time, 10);
	ck_assert_uint_eq(g_hash_table_size(model->bad_exes), 1);
}
END_TEST

/*
 * A range over usedmapkb is learned as the 64 KiB windows of the file its
 * process touched; a smaller one whole; a process whose pagemap cannot be
 * read keeps its ranges whole; usedmapkb = 0 keeps them all whole.
 */
START_TEST(test_admission_touched)
{
	g_autoptr(GString) maps = g_string_new(NULL);
	g_autofree char *exe_a = at("bin/a");
	g_autofree char *big = at("files/big.so");
	g_autofree char *small = at("files/small.so");
	guint64 page = (guint64)sysconf(_SC_PAGESIZE);
	guint64 base = 0x10000000;          /* aligned for any page size */
	guint64 win = LEARN_TOUCHED_WINDOW;   /* 64 KiB */
	Exe *a, *b;

	make_file("bin/a", 4096);
	make_file("files/big.so", 8 << 20);
	make_file("files/small.so", 1 << 20);
	/* 4 MiB of big.so from file offset 1 MiB; all 1 MiB of small.so (not over 1024 KB). */
	add_line(maps, base, base + (4 << 20), 1 << 20, "files/big.so");
	add_line(maps, 0x20000000, 0x20000000 + (1 << 20), 0, "files/small.so");
	add_process(100, exe_a, maps->str);
	/* Touched: the first page, two pages 1 MiB + 8 KiB in, and the last page (swapped out). */
	tu_set_pagemap(proc_dir, 100, base / page, TU_PM_PRESENT | 12345);
	tu_set_pagemap(proc_dir, 100, (base + (1 << 20) + 8192) / page, TU_PM_PRESENT);
	tu_set_pagemap(proc_dir, 100, (base + (1 << 20) + 8192) / page + 1, TU_PM_PRESENT);
	tu_set_pagemap(proc_dir, 100, (base + (4 << 20)) / page - 1, TU_PM_SWAPPED);
	/* A PFN without the present bit is not a touched page. */
	tu_set_pagemap(proc_dir, 100, (base + (2 << 20)) / page, 777);
	/* The same maps in a process whose pagemap is missing. */
	{
		g_autofree char *exe_b = at("bin/b");

		make_file("bin/b", 4096);
		add_process(200, exe_b, maps->str);
	}

	proc_scan(0);
	learn_update(learn, scan, model, conf, 10);
	a = lookup("bin/a");
	b = lookup("bin/b");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);

	/*
	 * File offsets: 1 MiB, 1 MiB + 1 MiB + 8 KiB (window 2 MiB), 5 MiB - 4
	 * KiB (window 5 MiB - 64 KiB); and the exe's own page (4096 bytes).
	 */
	ck_assert_uint_eq(a->exemaps->len, 5);
	ck_assert_ptr_nonnull(model_lookup_map(model, big, 1 << 20, win));
	ck_assert_ptr_nonnull(model_lookup_map(model, big, 2 << 20, win));
	ck_assert_ptr_nonnull(model_lookup_map(model, big, (5 << 20) - win, win));
	ck_assert_ptr_nonnull(model_lookup_map(model, small, 0, 1 << 20));
	ck_assert_uint_eq(a->size, 3 * win + (1 << 20) + 4096);

	/* b's pagemap is missing: whole ranges, and the small one shared with a. */
	ck_assert_uint_eq(b->exemaps->len, 3);
	ck_assert_ptr_nonnull(model_lookup_map(model, big, 1 << 20, 4 << 20));
	ck_assert_uint_eq(b->size, (4 << 20) + (1 << 20) + 4096);
	ck_assert_int_eq(model_lookup_map(model, small, 0, 1 << 20)->refcount, 2);

	/* 0 turns it off: a third process like a is learned whole. */
	conf->usedmapkb = 0;
	{
		g_autofree char *exe_c = at("bin/c");

		make_file("bin/c", 4096);
		add_process(300, exe_c, maps->str);
		tu_set_pagemap(proc_dir, 300, base / page, TU_PM_PRESENT);
		proc_scan(20);
		learn_update(learn, scan, model, conf, 30);
		ck_assert_uint_eq(lookup("bin/c")->exemaps->len, 3);
		ck_assert_uint_eq(lookup("bin/c")->size, (4 << 20) + (1 << 20) + 4096);
	}
}
END_TEST

/*
 * A map 32 GiB long of a 64 KiB file: pagemap is looked up for the file's
 * 64 KiB only (before, for 16 GiB: 4 million pages), so a page touched
 * past its end is not learned.
 */
START_TEST(test_admission_touched_bounded)
{
	g_autoptr(GString) maps = g_string_new(NULL);
	g_autofree char *exe_a = at("bin/a");
	g_autofree char *huge = at("files/huge.db");
	guint64 page = (guint64)sysconf(_SC_PAGESIZE);
	guint64 base = 0x10000000;
	guint64 win = LEARN_TOUCHED_WINDOW;
	Exe *a;

	make_file("bin/a", 4096);
	make_file("files/huge.db", 65536);  /* a map may reach past the end of its file */
	add_line(maps, base, base + 2 * LEARN_TOUCHED_MAX, 0, "files/huge.db");
	add_process(100, exe_a, maps->str);
	/* The first page, the first one past the file, and one 16 GiB in. */
	tu_set_pagemap(proc_dir, 100, base / page, TU_PM_PRESENT);
	tu_set_pagemap(proc_dir, 100, (base + 65536) / page, TU_PM_PRESENT);
	tu_set_pagemap(proc_dir, 100, (base + LEARN_TOUCHED_MAX) / page - 1, TU_PM_PRESENT);

	proc_scan(0);
	learn_update(learn, scan, model, conf, 10);
	ck_assert_uint_eq(learn_get_stats(learn)->pagemap_pages, 65536 / page);
	a = lookup("bin/a");
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->exemaps->len, 2);  /* the window, and the exe's own page */
	ck_assert_ptr_nonnull(model_lookup_map(model, huge, 0, win));
	ck_assert_uint_eq(a->size, win + 4096);
}
END_TEST

/*
 * The clamp asks the mapped file, not its path: the process maps a 64
 * KiB file, whose path then names a 1 MiB file (replaced, or covered by
 * a mount). pagemap is looked up for the mapped file's 64 KiB (16 pages
 * of 4 KiB), not the 1 MiB the path names now (256 pages): the path is
 * not looked up.
 */
START_TEST(test_admission_touched_mapped_file)
{
	g_autoptr(GString) maps = g_string_new(NULL);
	g_autofree char *exe_a = at("bin/a");
	guint64 page = (guint64)sysconf(_SC_PAGESIZE);
	guint64 base = 0x10000000;

	make_file("bin/a", 4096);
	make_file("files/huge.db", 65536);
	add_line(maps, base, base + 2 * LEARN_TOUCHED_MAX, 0, "files/huge.db");
	add_process(100, exe_a, maps->str);
	tu_set_pagemap(proc_dir, 100, base / page, TU_PM_PRESENT);
	make_file("files/huge.db", 1 << 20);

	proc_scan(0);
	learn_update(learn, scan, model, conf, 10);
	ck_assert_uint_eq(learn_get_stats(learn)->pagemap_pages, 65536 / page);
}
END_TEST

/*
 * pagemap is not read for a map that mapprefix rejects, and an update
 * looks up at most its budget: a second process whose maps need more
 * than is left waits for the next update.
 */
START_TEST(test_admission_touched_budget)
{
	g_autoptr(GString) maps = g_string_new(NULL);
	g_autoptr(GString) rejected = g_string_new(NULL);
	g_autofree char *exe_a = at("bin/a");
	g_autofree char *exe_b = at("bin/b");
	g_autofree char *big = at("files/big.so");
	guint64 page = (guint64)sysconf(_SC_PAGESIZE);
	guint64 base = 0x10000000;
	guint64 file_pages = (4 << 20) / page;

	make_file("bin/a", 4096);
	make_file("bin/b", 4096);
	make_file("files/big.so", 4 << 20);
	make_file("files/private/no.so", 4 << 20);
	add_line(maps, base, base + (4 << 20), 0, "files/big.so");
	g_string_append(rejected, maps->str);
	add_line(rejected, 0x40000000, 0x40000000 + (4 << 20), 0, "files/private/no.so");
	add_process(100, exe_a, rejected->str);
	add_process(200, exe_b, maps->str);
	tu_set_pagemap(proc_dir, 100, base / page, TU_PM_PRESENT);
	tu_set_pagemap(proc_dir, 200, base / page, TU_PM_PRESENT);
	/* pagemap covers big.so whole (untouched entries). */
	tu_set_pagemap(proc_dir, 100, base / page + file_pages - 1, 0);
	tu_set_pagemap(proc_dir, 200, base / page + file_pages - 1, 0);
	learn_set_pagemap_budget(learn, file_pages + file_pages / 2);

	proc_scan(0);
	learn_update(learn, scan, model, conf, 10);
	/* a: big.so's pages only, not those of no.so (mapprefix rejects it); b
	 * needs more than is left. */
	ck_assert_uint_eq(learn_get_stats(learn)->pagemap_pages, file_pages);
	ck_assert_uint_eq(learn_get_stats(learn)->deferred, 1);
	ck_assert_ptr_nonnull(lookup("bin/a"));
	ck_assert_uint_eq(lookup("bin/a")->size, LEARN_TOUCHED_WINDOW + 4096);
	ck_assert_ptr_null(lookup("bin/b"));
	ck_assert(!is_bad("bin/b", NULL));

	/* The next update has a new budget. */
	proc_scan(20);
	learn_update(learn, scan, model, conf, 30);
	ck_assert_uint_eq(learn_get_stats(learn)->pagemap_pages, file_pages);
	ck_assert_uint_eq(learn_get_stats(learn)->deferred, 0);
	ck_assert_ptr_nonnull(lookup("bin/b"));
	ck_assert_uint_eq(lookup("bin/b")->size, LEARN_TOUCHED_WINDOW + 4096);
	ck_assert_ptr_nonnull(model_lookup_map(model, big, 0, LEARN_TOUCHED_WINDOW));
}
END_TEST

/* Maps shared by two exes are one Map with two references. */
START_TEST(test_shared_maps)
{
	g_autofree char *exe_a = at("bin/a");
	g_autofree char *exe_c = at("bin/c");
	g_autofree char *lib = at("files/lib1.so");
	g_autofree char *maps = maps_line(0x10000, 0x18000, 0, "files/lib1.so");
	Map *map;

	make_file("files/lib1.so", 40000);
	add_process(100, exe_a, maps);
	add_process(101, exe_c, maps);

	proc_scan(0);
	learn_update(learn, scan, model, conf, 10);
	ck_assert_uint_eq(learn_get_stats(learn)->admitted, 2);
	ck_assert_uint_eq(g_hash_table_size(model->maps), 1);
	map = model_lookup_map(model, lib, 0, 0x8000);
	ck_assert_ptr_nonnull(map);
	ck_assert_int_eq(map->refcount, 2);
	/*
	 * Both appeared in one scan with no history: a chain would have
	 * nothing to record, so the pair has none (yet).
	 */
	ck_assert_uint_eq(model->n_chains, 0);
}
END_TEST

/* ---- bad exes expire ------------------------------------------------------ */

typedef struct {
	guint calls;
	GHashTable *per_exe;   /* path -> calls */
	GError *fail_with;     /* when set, every call fails with a copy */
} CountingSource;

static gboolean
counting_source(pid_t pid, const char *exe_path, GArray *maps,
		gpointer user_data, GError **error)
{
	CountingSource *src = user_data;
	guint n = GPOINTER_TO_UINT(g_hash_table_lookup(src->per_exe, exe_path));

	src->calls++;
	g_hash_table_insert(src->per_exe, g_strdup(exe_path), GUINT_TO_POINTER(n + 1));
	if (src->fail_with) {
		g_propagate_error(error, g_error_copy(src->fail_with));
		return FALSE;
	}
	return proc_read_maps(pid, maps, error);
}

static guint
calls_for(CountingSource *src, const char *rel)
{
	g_autofree char *path = at(rel);

	return GPOINTER_TO_UINT(g_hash_table_lookup(src->per_exe, path));
}

START_TEST(test_bad_exe_expiry)
{
	g_autofree char *exe_b = at("bin/b");
	g_autofree char *small = maps_line(0x1000, 0x2000, 0, "files/b.so");   /* 4096 */
	g_autofree char *big = maps_line(0x1000, 0x4000, 0, "files/b.so");     /* 12288 */
	CountingSource src = { 0 };
	BadExe *bad;
	gint64 t;

	src.per_exe = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	learn_set_maps_source(learn, counting_source, &src);
	make_file("files/b.so", 20000);
	add_process(200, exe_b, small);

	proc_scan(0);
	learn_update(learn, scan, model, conf, 10);
	ck_assert_uint_eq(learn_get_stats(learn)->too_small, 1);
	ck_assert(is_bad("bin/b", &bad));
	ck_assert_int_eq(bad->time, 10);
	ck_assert_uint_eq(calls_for(&src, "bin/b"), 1);

	/* It grows meanwhile, but the verdict stands until it expires. */
	remove_process(200);
	add_process(200, exe_b, big);

	/*
	 * autosave = 100: the verdict from 10 is dropped by the first update
	 * with now - 10 > 100, i.e. at 130 (110 - 10 = 100 keeps it). Scans
	 * at 20, 40, ..., 120 skip it without reading its maps.
	 */
	for (t = 20; t <= 120; t += 20) {
		proc_scan(t);
		ck_assert_uint_eq(scan_get_stats(scan)->processes, 1);
		learn_update(learn, scan, model, conf, t + 10);
		ck_assert_uint_eq(learn_get_stats(learn)->too_small, 0);
		ck_assert_uint_eq(learn_get_stats(learn)->admitted, 0);
		ck_assert_uint_eq(calls_for(&src, "bin/b"), 1);
		if (t + 10 <= 110)
			ck_assert(is_bad("bin/b", NULL));
	}
	/* Expired by the update at 130. */
	ck_assert(!is_bad("bin/b", NULL));
	ck_assert_ptr_null(lookup("bin/b"));

	/* Seen again at 140, read again at 150, now big enough. */
	proc_scan(140);
	learn_update(learn, scan, model, conf, 150);
	ck_assert_uint_eq(calls_for(&src, "bin/b"), 2);
	ck_assert_uint_eq(learn_get_stats(learn)->admitted, 1);
	ck_assert_ptr_nonnull(lookup("bin/b"));
	ck_assert_uint_eq(lookup("bin/b")->size, 12288);
	ck_assert_int_eq(lookup("bin/b")->running_timestamp, 140);

	g_hash_table_unref(src.per_exe);
}
END_TEST

/* ---- processes that exit before the update -------------------------------- */

START_TEST(test_gone_then_admitted)
{
	g_autofree char *exe_c = at("bin/c");
	g_autofree char *maps = maps_line(0x1000, 0x9000, 0, "files/c.so");   /* 32768 */
	const LearnStats *stats = learn_get_stats(learn);
	Exe *c;

	make_file("files/c.so", 40000);
	add_process(300, exe_c, maps);
	proc_scan(0);
	remove_process(300);
	learn_update(learn, scan, model, conf, 10);
	ck_assert_uint_eq(stats->gone, 1);
	ck_assert_uint_eq(stats->admitted, 0);
	ck_assert_ptr_null(lookup("bin/c"));
	ck_assert(!is_bad("bin/c", NULL));

	/* Not running at 20: nothing to do. */
	proc_scan(20);
	ck_assert_uint_eq(scan_get_stats(scan)->processes, 0);
	learn_update(learn, scan, model, conf, 30);
	ck_assert_uint_eq(stats->gone, 0);
	ck_assert_uint_eq(stats->admitted, 0);

	/* Runs again (another pid) at 40: admitted at 50 as of the scan. */
	add_process(301, exe_c, maps);
	proc_scan(40);
	learn_update(learn, scan, model, conf, 50);
	ck_assert_uint_eq(stats->admitted, 1);
	c = lookup("bin/c");
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->running_timestamp, 40);
	ck_assert_int_eq(c->change_timestamp, 40);
	ck_assert_uint_eq(c->size, 32768);
	/* Accounting ran at 10 and 30 with nothing running, then 30..50. */
	ck_assert_double_eq(c->time, 20.0);
}
END_TEST

/*
 * Between the scan and the update the pid may be reused by another
 * program, or the process may become a zombie with empty maps: maps that
 * do not include the exe's own file are not the exe's. It counts as gone
 * (retried later), not as too small.
 */
START_TEST(test_pid_reused_or_zombie)
{
	g_autofree char *exe_c = at("bin/c");
	g_autofree char *other = at("bin/other");
	g_autofree char *maps = maps_line(0x1000, 0x9000, 0, "files/c.so");   /* 32768 */
	g_autofree char *other_maps = NULL;
	g_autofree char *maps_path = g_strdup_printf("%s/300/maps", proc_dir);
	const LearnStats *stats = learn_get_stats(learn);

	make_file("files/c.so", 40000);
	add_process(300, exe_c, maps);
	proc_scan(0);
	/* pid 300 now runs another program that maps the same library. */
	other_maps = g_strdup_printf("%s7f0000000000-7f0000001000 r--p 00000000 08:02 1 %s\n",
				     maps, other);
	write_maps(maps_path, other_maps);
	learn_update(learn, scan, model, conf, 10);
	ck_assert_uint_eq(stats->gone, 1);
	ck_assert_uint_eq(stats->admitted, 0);
	ck_assert_uint_eq(stats->too_small, 0);
	ck_assert_ptr_null(lookup("bin/c"));
	ck_assert(!is_bad("bin/c", NULL));

	/* A zombie: empty maps. */
	proc_scan(20);
	write_maps(maps_path, "");
	learn_update(learn, scan, model, conf, 30);
	ck_assert_uint_eq(stats->gone, 1);
	ck_assert_uint_eq(stats->too_small, 0);
	ck_assert(!is_bad("bin/c", NULL));

	/* The real thing again: admitted with 32768 bytes. */
	proc_scan(40);
	{
		g_autofree char *full = g_strdup_printf("%s7f0000000000-7f0000001000 r--p 00000000 08:02 1 %s\n",
							maps, exe_c);

		write_maps(maps_path, full);
	}
	learn_update(learn, scan, model, conf, 50);
	ck_assert_uint_eq(stats->admitted, 1);
	ck_assert_uint_eq(lookup("bin/c")->size, 32768);
}
END_TEST

static gboolean
accept_all(const char *path, MapFileId *id, gpointer user_data)
{
	(void)path;
	memset(id, 0, sizeof(*id));
	(*(guint *)user_data)++;
	return TRUE;
}

/*
 * A replaced file check decides alone: maps of files that do not exist
 * here are learned, and each distinct path is asked once per update.
 */
static gboolean counting_check(const char *path, MapFileId *id, gpointer user_data);

/*
 * A map is learned by the identity of its maps line, never by looking
 * its path up: a process in a private mount namespace maps, at a path
 * that names another file here, a file of device fe:00 and inode 999999.
 * The map carries that identity, so the file here is not it (the check
 * before a read finds it stale), and no file check was asked at
 * admission.
 */
START_TEST(test_identity_from_maps_line)
{
	g_autofree char *exe_c = at("bin/c");
	g_autofree char *lib = at("files/lib1.so");
	g_autofree char *maps_path = g_strdup_printf("%s/300/maps", proc_dir);
	g_autofree char *text = NULL;
	g_autoptr(GPtrArray) selected = g_ptr_array_new();
	guint asked = 0;
	Map *map;
	Exe *c;

	make_file("files/lib1.so", 40000);
	make_file("bin/c", 8192);
	add_process(300, exe_c, "");
	text = g_strdup_printf("00001000-00009000 r-xp 00000000 fe:00 999999   %s\n"
			       "7f0000000000-7f0000002000 r--p 00000000 fe:00 1000   %s\n", lib, exe_c);
	tu_write_file(maps_path, text);
	learn_set_file_check(learn, counting_check, &asked);
	proc_scan(0);
	learn_update(learn, scan, model, conf, 10);
	c = lookup("bin/c");
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->size, 0x8000 + 0x2000);
	map = model_lookup_map(model, lib, 0, 0x8000);
	ck_assert_ptr_nonnull(map);
	ck_assert_uint_eq(map->file.dev, (guint64)makedev(0xfe, 0));
	ck_assert_uint_eq(map->file.ino, 999999);
	ck_assert_uint_eq(map->file.size, 0);
	/*
	 * Admission asked nothing; the sweep of this update asked one map's
	 * file, ceil(2 * 20 / 3600) = 1, the first registered (lib1.so), and
	 * found another file there.
	 */
	ck_assert_uint_eq(asked, 1);
	ck_assert(map->learn.stale);

	/* Before a read: the exe's own map, not checked yet, is another file too. */
	map = model_lookup_map(model, exe_c, 0, 0x2000);
	ck_assert_ptr_nonnull(map);
	ck_assert(!map->learn.stale);
	map->learn.checked = -1;
	g_ptr_array_add(selected, map);
	ck_assert_uint_eq(learn_check_files(learn, selected, 20), 1);
	ck_assert(map->learn.stale);
	ck_assert_uint_eq(asked, 2);
}
END_TEST

START_TEST(test_file_check_hook)
{
	g_autofree char *exe_c = at("bin/c");
	g_autoptr(GString) maps = g_string_new(NULL);
	guint asked = 0;
	Exe *c;

	add_line(maps, 0x1000, 0x5000, 0, "files/absent.so");     /* 16384 */
	add_line(maps, 0x5000, 0x7000, 0x4000, "files/absent.so"); /* 8192, same path */
	add_process(300, exe_c, maps->str);
	learn_set_file_check(learn, accept_all, &asked);
	proc_scan(0);
	learn_update(learn, scan, model, conf, 10);
	c = lookup("bin/c");
	ck_assert_ptr_nonnull(c);
	/* absent.so twice (24576 bytes) plus the exe's own line, 4096. */
	ck_assert_uint_eq(c->exemaps->len, 3);
	ck_assert_uint_eq(c->size, 24576 + 4096);
	/* Two distinct paths: files/absent.so and bin/c. */
	ck_assert_uint_eq(asked, 2);

	/* NULL restores the lstat check: nothing d maps exists here. */
	learn_set_file_check(learn, NULL, NULL);
	{
		g_autofree char *exe_d = at("bin/d");

		add_process(301, exe_d, maps->str);
		proc_scan(20);
		learn_update(learn, scan, model, conf, 30);
		ck_assert_ptr_null(lookup("bin/d"));
		ck_assert(is_bad("bin/d", NULL));
	}
}
END_TEST

/* ---- chains, from scripted scans ------------------------------------------ */

/*
 * A maps source that needs no process: every exe ROOT/bin/NAME maps
 * ROOT/files/NAME.so, 0x10000 bytes from offset 0.
 */
static gboolean
scripted_source(pid_t pid, const char *exe_path, GArray *maps,
		gpointer user_data, GError **error)
{
	g_autofree char *base = g_path_get_basename(exe_path);
	g_autofree char *rel = g_strconcat("files/", base, ".so", NULL);
	ProcMap m = { 0 };

	(void)pid;
	(void)error;
	*(guint *)user_data += 1;
	m.start = 0x100000;
	m.end = 0x110000;
	m.path = at(rel);
	give_identity(&m);
	g_array_append_val(maps, m);
	return TRUE;
}

/* One scripted scan at `now` seeing the given exes (ROOT/bin/NAME). */
static void
scripted_scan(gint64 now, const char *const *names)
{
	scan_begin(scan, model, now);
	for (int i = 0; names[i]; i++) {
		g_autofree char *rel = g_strconcat("bin/", names[i], NULL);
		g_autofree char *path = at(rel);

		scan_saw_process(scan, model, conf, 1000 + i, path);
	}
	scan_end(scan, model, now);
}

START_TEST(test_chain_weights)
{
	static const char *const only_a[] = { "a", NULL };
	static const char *const a_b[] = { "a", "b", NULL };
	static const char *const only_b[] = { "b", NULL };
	static const char *const none[] = { NULL };
	static const char *const a_twice_b[] = { "a", "a", "b", NULL };
	guint reads = 0;
	Exe *a, *b;
	Markov *m;
	double w[4][4] = { { 0 } };

	make_file("files/a.so", 0x10000);
	make_file("files/b.so", 0x10000);
	learn_set_maps_source(learn, scripted_source, &reads);

	/* 0: A runs. Admitted at 10, accounted 0..10. */
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	a = lookup("bin/a");
	ck_assert_ptr_nonnull(a);
	ck_assert_double_eq(a->time, 10.0);

	/*
	 * 20: B starts. Its chain (a = A, b = B) starts in state 1 at A's
	 * change time 0 and records B's start at 20: W[1][1] = W[1][3] = 1,
	 * tau[1] = 20. Accounting 10..30: A 30, B 20, both 20.
	 */
	scripted_scan(20, a_b);
	ck_assert_uint_eq(scan_get_stats(scan)->changed, 0);
	learn_update(learn, scan, model, conf, 30);
	b = lookup("bin/b");
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(a->chains->len, 1);
	m = g_ptr_array_index(a->chains, 0);
	ck_assert_ptr_eq(m->a, a);
	ck_assert_ptr_eq(m->b, b);
	ck_assert_int_eq(m->state, MARKOV_BOTH);
	ck_assert_double_eq(a->time, 30.0);
	ck_assert_double_eq(b->time, 20.0);
	ck_assert_double_eq(m->time, 20.0);

	/* 60: A stops. 3 -> 2 after 40 s: W[3][3] = W[3][2] = 1, tau[3] = 40.
	 * Accounting 30..70: B 60, A stays 30, both stays 20. */
	scripted_scan(60, only_b);
	ck_assert_uint_eq(scan_get_stats(scan)->changed, 1);
	ck_assert(!exe_is_running(model, a));
	ck_assert(exe_is_running(model, b));
	learn_update(learn, scan, model, conf, 70);
	ck_assert_int_eq(a->change_timestamp, 60);
	ck_assert_int_eq(m->state, MARKOV_B);
	ck_assert_double_eq(a->time, 30.0);
	ck_assert_double_eq(b->time, 60.0);
	ck_assert_double_eq(m->time, 20.0);

	/* 80: B stops. 2 -> 0 after 20 s: W[2][2] = W[2][0] = 1, tau[2] = 20.
	 * Accounting 70..90: nobody runs. */
	scripted_scan(80, none);
	ck_assert_uint_eq(scan_get_stats(scan)->changed, 1);
	ck_assert_uint_eq(model->running->len, 0);
	learn_update(learn, scan, model, conf, 90);
	ck_assert_int_eq(m->state, MARKOV_NEITHER);
	ck_assert_double_eq(b->time, 60.0);

	/*
	 * 140: both start (A in two processes: one change). One jump 0 -> 3
	 * after 60 s: W[0][0] = W[0][3] = 1, tau[0] = 60. Accounting
	 * 90..150: A 90, B 120, both 80.
	 */
	scripted_scan(140, a_twice_b);
	ck_assert_uint_eq(scan_get_stats(scan)->processes, 3);
	ck_assert_uint_eq(scan_get_stats(scan)->changed, 2);
	ck_assert_uint_eq(model->running->len, 2);
	learn_update(learn, scan, model, conf, 150);
	ck_assert_int_eq(m->state, MARKOV_BOTH);
	ck_assert_int_eq(m->change_timestamp, 140);
	ck_assert_double_eq(a->time, 90.0);
	ck_assert_double_eq(b->time, 120.0);
	ck_assert_double_eq(m->time, 80.0);

	/* 160: no change. Accounting 150..170: A 110, B 140, both 100. */
	scripted_scan(160, a_b);
	ck_assert_uint_eq(scan_get_stats(scan)->changed, 0);
	learn_update(learn, scan, model, conf, 170);
	ck_assert_double_eq(a->time, 110.0);
	ck_assert_double_eq(b->time, 140.0);
	ck_assert_double_eq(m->time, 100.0);
	ck_assert_int_eq(a->update_time, 170);
	ck_assert_int_eq(b->update_time, 170);

	w[1][1] = 1; w[1][3] = 1;
	w[3][3] = 1; w[3][2] = 1;
	w[2][2] = 1; w[2][0] = 1;
	w[0][0] = 1; w[0][3] = 1;
	for (int s = 0; s < 4; s++)
		for (int t = 0; t < 4; t++)
			ck_assert_msg(m->weight[s][t] == w[s][t], "W[%d][%d] = %g, want %g",
				      s, t, m->weight[s][t], w[s][t]);
	ck_assert_double_eq(m->time_to_leave[0], 60.0);
	ck_assert_double_eq(m->time_to_leave[1], 20.0);
	ck_assert_double_eq(m->time_to_leave[2], 20.0);
	ck_assert_double_eq(m->time_to_leave[3], 40.0);

	/* Each exe's maps were read at admission and when it started again at 140. */
	ck_assert_uint_eq(reads, 4);
	ck_assert_uint_eq(model->n_chains, 1);
}
END_TEST

/*
 * A stops and B appears in the same scan. The stop is applied before B
 * is admitted, so both change times are 20 and the new chain has nothing
 * to learn: it starts in state 2 at 20 with no counts. (Admitting first
 * would see A's stale change time 0 and invent a 0 -> 2 transition.)
 */
START_TEST(test_stop_and_new_same_scan)
{
	static const char *const only_a[] = { "a", NULL };
	static const char *const only_b[] = { "b", NULL };
	guint reads = 0;
	Markov *m;
	Exe *a;

	make_file("files/a.so", 0x10000);
	make_file("files/b.so", 0x10000);
	learn_set_maps_source(learn, scripted_source, &reads);
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	scripted_scan(20, only_b);
	learn_update(learn, scan, model, conf, 30);

	a = lookup("bin/a");
	ck_assert_int_eq(a->change_timestamp, 20);
	ck_assert_uint_eq(a->chains->len, 1);
	m = g_ptr_array_index(a->chains, 0);
	ck_assert_int_eq(m->state, MARKOV_B);
	ck_assert_int_eq(m->change_timestamp, 20);
	for (int s = 0; s < 4; s++)
		for (int t = 0; t < 4; t++)
			ck_assert_msg(m->weight[s][t] == 0, "W[%d][%d] = %g", s, t, m->weight[s][t]);
	/* Accounting 10..30: B ran (from its scan at 20), A did not. */
	ck_assert_double_eq(a->time, 10.0);
	ck_assert_double_eq(lookup("bin/b")->time, 20.0);
	ck_assert_double_eq(m->time, 0.0);
}
END_TEST

/* Raw exe names that sanitize to one exe count as one, once. */
START_TEST(test_raw_names_one_exe)
{
	g_autofree char *path = at("bin/a");
	g_autofree char *deleted = g_strconcat(path, " (deleted)", NULL);
	g_autofree char *prelink = g_strconcat(path, ".#prelink#.k3Jx9Q", NULL);
	g_autofree char *skipped = at("bin/skip/a");
	guint reads = 0;
	Exe *a;

	make_file("files/a.so", 0x10000);
	learn_set_maps_source(learn, scripted_source, &reads);

	scan_begin(scan, model, 0);
	scan_saw_process(scan, model, conf, 10, path);
	scan_saw_process(scan, model, conf, 11, deleted);
	scan_saw_process(scan, model, conf, 12, prelink);
	scan_saw_process(scan, model, conf, 13, "-");
	scan_saw_process(scan, model, conf, 14, "");
	scan_saw_process(scan, model, conf, 15, "/memfd:x (deleted)");
	scan_saw_process(scan, model, conf, 16, skipped);
	scan_end(scan, model, 0);
	ck_assert_uint_eq(scan_get_stats(scan)->processes, 7);
	learn_update(learn, scan, model, conf, 10);
	ck_assert_uint_eq(reads, 1);
	ck_assert_uint_eq(g_hash_table_size(model->exes), 1);

	/* Known now: the deleted name alone keeps it running, no change. */
	a = lookup("bin/a");
	scan_begin(scan, model, 20);
	scan_saw_process(scan, model, conf, 11, deleted);
	scan_end(scan, model, 20);
	ck_assert_uint_eq(scan_get_stats(scan)->changed, 0);
	ck_assert(exe_is_running(model, a));
	ck_assert_int_eq(a->running_timestamp, 20);
	ck_assert_int_eq(a->update_time, 20);
}
END_TEST

/* ---- maps sources, odd timings -------------------------------------------- */

START_TEST(test_source_errors)
{
	g_autofree char *exe_c = at("bin/c");
	g_autofree char *maps = maps_line(0x1000, 0x9000, 0, "files/c.so");
	CountingSource src = { 0 };
	const LearnStats *stats = learn_get_stats(learn);

	src.per_exe = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	src.fail_with = g_error_new_literal(PROC_ERROR, PROC_ERROR_IO, "permission denied");
	make_file("files/c.so", 40000);
	add_process(300, exe_c, maps);

	/* An I/O error: skipped, neither gone nor bad, retried next cycle. */
	learn_set_maps_source(learn, counting_source, &src);
	proc_scan(0);
	learn_update(learn, scan, model, conf, 10);
	ck_assert_uint_eq(stats->gone, 0);
	ck_assert_uint_eq(stats->too_small, 0);
	ck_assert_uint_eq(stats->admitted, 0);
	ck_assert(!is_bad("bin/c", NULL));
	ck_assert_uint_eq(src.calls, 1);

	/* A second update without a scan applies nothing again. */
	learn_update(learn, scan, model, conf, 12);
	ck_assert_uint_eq(src.calls, 1);

	/* NULL restores /proc, which reads the fake tree. */
	learn_set_maps_source(learn, NULL, NULL);
	proc_scan(20);
	learn_update(learn, scan, model, conf, 30);
	ck_assert_uint_eq(src.calls, 1);
	ck_assert_uint_eq(stats->admitted, 1);
	ck_assert_uint_eq(lookup("bin/c")->size, 32768);

	g_error_free(src.fail_with);
	g_hash_table_unref(src.per_exe);
}
END_TEST

START_TEST(test_admitted_meanwhile)
{
	g_autofree char *path = at("bin/a");
	guint reads = 0;
	Exe *exe;

	learn_set_maps_source(learn, scripted_source, &reads);
	scan_begin(scan, model, 0);
	scan_saw_process(scan, model, conf, 10, path);
	scan_end(scan, model, 0);

	/* Someone (a state reload) adds it before the update. */
	exe = exe_new(path, TRUE, 0);
	model_add_exe(model, exe, 0, TRUE);
	learn_update(learn, scan, model, conf, 10);
	ck_assert_uint_eq(reads, 0);
	ck_assert_uint_eq(learn_get_stats(learn)->admitted, 0);
	ck_assert_ptr_eq(lookup("bin/a"), exe);
}
END_TEST

START_TEST(test_changed_exe_removed_meanwhile)
{
	static const char *const only_a[] = { "a", NULL };
	static const char *const none[] = { NULL };
	guint reads = 0;
	Exe *a;

	make_file("files/a.so", 0x10000);
	learn_set_maps_source(learn, scripted_source, &reads);
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	a = lookup("bin/a");
	ck_assert_ptr_nonnull(a);

	/* It stops, and is removed from the model before the update. */
	scripted_scan(20, none);
	ck_assert_uint_eq(scan_get_stats(scan)->changed, 1);
	model_remove_exe(model, a);
	learn_update(learn, scan, model, conf, 30);
	ck_assert_uint_eq(g_hash_table_size(model->exes), 0);
}
END_TEST

START_TEST(test_scan_failure_keeps_model)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *gone = at("no-such-proc");
	static const char *const only_a[] = { "a", NULL };
	guint reads = 0;
	Exe *a;

	make_file("files/a.so", 0x10000);
	learn_set_maps_source(learn, scripted_source, &reads);
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	a = lookup("bin/a");

	/* The listing fails: nothing may look stopped. */
	proc_set_root(gone);
	ck_assert(!scan_proc(scan, model, conf, 20, &error));
	ck_assert(g_error_matches(error, PROC_ERROR, PROC_ERROR_IO));
	ck_assert(exe_is_running(model, a));
	ck_assert_int_eq(model->last_running_timestamp, 0);
	ck_assert_uint_eq(model->running->len, 1);
}
END_TEST

/* A known exe that the filter now rejects counts as stopped. */
START_TEST(test_exeprefix_change)
{
	static const char *const only_a[] = { "a", NULL };
	g_autofree char *reject = NULL;
	guint reads = 0;
	Exe *a;

	make_file("files/a.so", 0x10000);
	learn_set_maps_source(learn, scripted_source, &reads);
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	a = lookup("bin/a");

	reject = g_strdup_printf("!%s/bin/a", root);
	set_list(&conf->exeprefix, reject);
	scripted_scan(20, only_a);
	ck_assert_uint_eq(scan_get_stats(scan)->changed, 1);
	ck_assert(!exe_is_running(model, a));
	learn_update(learn, scan, model, conf, 30);
	ck_assert_int_eq(a->change_timestamp, 20);
	/* Accounted 0..10 only. */
	ck_assert_double_eq(a->time, 10.0);
}
END_TEST

/* ---- keeping the model fresh ---------------------------------------------- */

/*
 * A maps source answering from a list of ROOT-relative files, 0x10000
 * bytes each from offset 0, for any exe; the list can change between
 * reads (an upgrade, a plugin).
 */
static gboolean
list_source(pid_t pid, const char *exe_path, GArray *maps, gpointer user_data, GError **error)
{
	GPtrArray *files = user_data;
	guint64 address = 0x100000;

	(void)pid;
	(void)exe_path;
	(void)error;
	for (guint i = 0; i < files->len; i++) {
		ProcMap m = { 0 };

		m.start = address;
		m.end = address + 0x10000;
		m.path = at(g_ptr_array_index(files, i));
		give_identity(&m);
		g_array_append_val(maps, m);
		address += 0x20000;
	}
	return TRUE;
}

static gboolean
exe_maps_file(const Exe *exe, const char *rel)
{
	g_autofree char *path = at(rel);

	for (guint i = 0; i < exe->exemaps->len; i++) {
		if (strcmp(g_array_index(exe->exemaps, ExeMap, i).map->path, path) == 0)
			return TRUE;
	}
	return FALSE;
}

/*
 * A known exe that starts again has its maps read again: new libraries
 * are added at once, one it no longer maps is removed after
 * LEARN_MISSED_RUNS (3) runs without it.
 */
START_TEST(test_refresh_maps)
{
	static const char *const only_a[] = { "a", NULL };
	static const char *const none[] = { NULL };
	g_autoptr(GPtrArray) files = g_ptr_array_new();
	const LearnStats *stats = learn_get_stats(learn);
	Exe *a;
	gint64 t = 0;

	make_file("files/one.so", 0x10000);
	make_file("files/two.so", 0x10000);
	make_file("files/three.so", 0x10000);
	learn_set_maps_source(learn, list_source, files);
	g_ptr_array_add(files, (gpointer)"files/one.so");
	g_ptr_array_add(files, (gpointer)"files/two.so");

	scripted_scan(t, only_a);
	learn_update(learn, scan, model, conf, t + 10);
	a = lookup("bin/a");
	ck_assert_uint_eq(a->exemaps->len, 2);
	ck_assert_uint_eq(a->size, 0x20000);

	/* Upgraded: three instead of two. Running on, nothing is re-read. */
	g_ptr_array_index(files, 1) = (gpointer)"files/three.so";
	t += 20;
	scripted_scan(t, only_a);
	learn_update(learn, scan, model, conf, t + 10);
	ck_assert_uint_eq(stats->refreshed, 0);
	ck_assert(!exe_maps_file(a, "files/three.so"));

	/* Three stops and starts: three is added at the first start, two goes at the third. */
	for (int run = 1; run <= 3; run++) {
		t += 20;
		scripted_scan(t, none);
		learn_update(learn, scan, model, conf, t + 10);
		t += 20;
		scripted_scan(t, only_a);
		learn_update(learn, scan, model, conf, t + 10);
		ck_assert_uint_eq(stats->refreshed, 1);
		ck_assert_uint_eq(stats->maps_added, run == 1 ? 1 : 0);
		ck_assert_uint_eq(stats->maps_removed, run == 3 ? 1 : 0);
		ck_assert(exe_maps_file(a, "files/one.so"));
		ck_assert(exe_maps_file(a, "files/three.so"));
		ck_assert(exe_maps_file(a, "files/two.so") == (run < 3));
	}
	ck_assert_uint_eq(a->exemaps->len, 2);
	ck_assert_uint_eq(a->size, 0x20000);
	/* Nobody maps two.so any more: the map is gone from the model. */
	{
		g_autofree char *two = at("files/two.so");

		ck_assert_ptr_null(model_lookup_map(model, two, 0, 0x10000));
	}
	ck_assert_uint_eq(g_hash_table_size(model->maps), 2);
}
END_TEST

/* ---- starts and read sets from the watcher --------------------------------- */

/* Appends ROOT/rel [offset, offset + length) to a WatchRange array. */
static void
add_range(GArray *ranges, const char *rel, guint64 offset, guint64 length)
{
	WatchRange r = { 0 };

	r.path = rel[0] == '/' ? g_strdup(rel) : at(rel);
	r.offset = offset;
	r.length = length;
	g_array_append_val(ranges, r);
}

static guint
count_origin(const Exe *exe, ExeMapOrigin origin)
{
	guint n = 0;

	for (guint i = 0; i < exe->exemaps->len; i++)
		n += g_array_index(exe->exemaps, ExeMap, i).origin == origin;
	return n;
}

/*
 * A compiler that lives a fraction of a second, started by a build tool
 * that the scans see: it is admitted from its start-up reads, counts as
 * running at the scan after each start, and is then predicted while the
 * build tool runs alone.
 */
START_TEST(test_exec_short_lived)
{
	static const char *const only_make[] = { "make", NULL };
	g_autoptr(GArray) ranges = watch_ranges_new();
	g_autofree char *cc_path = at("bin/cc");
	g_autofree char *ghost_path = at("bin/ghost");
	g_autofree char *skip_path = at("bin/skip/x");
	const LearnStats *stats = learn_get_stats(learn);
	guint reads = 0;
	Exe *make, *cc;
	Markov *m;

	make_file("files/make.so", 0x10000);
	make_file("files/cc.so", 0x4000);
	make_file("files/hdr.h", 0x3000);
	learn_set_maps_source(learn, scripted_source, &reads);

	scripted_scan(0, only_make);
	learn_update(learn, scan, model, conf, 10);
	make = lookup("bin/make");
	ck_assert_ptr_nonnull(make);

	/* cc runs between the scans and is gone before the next one. */
	scan_saw_exec(scan, model, conf, cc_path);
	scan_saw_exec(scan, model, conf, ghost_path);   /* never admitted */
	scan_saw_exec(scan, model, conf, skip_path);    /* exeprefix rejects it */
	add_range(ranges, "files/cc.so", 0, 0x4000);
	add_range(ranges, "files/hdr.h", 0, 0x3000);
	add_range(ranges, "/etc/passwd", 0, 0x1000);            /* mapprefix rejects */
	add_range(ranges, "files/private/key", 0, 0x1000);      /* mapprefix rejects */
	add_range(ranges, "files/missing", 0, 0x1000);          /* not a file */
	learn_files( cc_path, ranges, 12);
	learn_files( skip_path, ranges, 12);
	ck_assert_ptr_null(model_lookup_exe(model, skip_path));

	/* 0x4000 + 0x3000 = 28672 >= minsize 10000: admitted, not running yet. */
	cc = lookup("bin/cc");
	ck_assert_ptr_nonnull(cc);
	ck_assert_uint_eq(cc->exemaps->len, 2);
	ck_assert_uint_eq(count_origin(cc, EXEMAP_READ), 2);
	ck_assert_uint_eq(cc->size, 28672);
	ck_assert(!exe_is_running(model, cc));
	ck_assert_uint_eq(stats->learned_admitted, 1);
	/* It has not run for the model yet: the pair has nothing to record. */
	ck_assert_uint_eq(model->n_chains, 0);

	/* 20: only make is alive, but cc started since the last scan: it ran. */
	scripted_scan(20, only_make);
	ck_assert(exe_is_running(model, cc));
	ck_assert(in_running(cc));
	ck_assert_uint_eq(scan_get_stats(scan)->changed, 1);
	ck_assert_ptr_null(lookup("bin/ghost"));
	/*
	 * cc's first run makes the chain, make's side since make started at
	 * 0: 1 -> 3 at 20 after 20 s. Accounting 10..30: cc 20 s, both 20 s.
	 */
	learn_update(learn, scan, model, conf, 30);
	ck_assert_uint_eq(model->n_chains, 1);
	m = model_lookup_chain(model, make, cc);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_eq(m->a, make);
	ck_assert_int_eq(m->state, MARKOV_BOTH);
	ck_assert_double_eq(m->weight[MARKOV_A][MARKOV_A], 1);
	ck_assert_double_eq(m->weight[MARKOV_A][MARKOV_BOTH], 1);
	ck_assert_double_eq(m->time_to_leave[MARKOV_A], 20);
	ck_assert_double_eq(cc->time, 20.0);
	ck_assert_double_eq(m->time, 20.0);

	/* 40: no start since: cc stopped. 3 -> 1 after 20 s. */
	scripted_scan(40, only_make);
	ck_assert(!exe_is_running(model, cc));
	learn_update(learn, scan, model, conf, 50);
	ck_assert_int_eq(m->state, MARKOV_A);
	ck_assert_double_eq(m->weight[MARKOV_BOTH][MARKOV_A], 1);

	/*
	 * make runs alone: cc is predicted. Without correlation, cycle 20,
	 * tau[1] = 20: p = (1 - e^-1.5) * (W[1][2] + W[1][3]) / (W[1][1] + 0.01)
	 * = 0.776870 * 1 / 1.01 = 0.769178, lnprob = ln(1 - p) = -1.466109.
	 */
	cc->lnprob = 0;
	prophet_bid(model, m, 20, 0);
	ck_assert_double_eq_tol(cc->lnprob, -1.4661086849972402, 1e-9);

	/* The ghost waited two scans for admission; admitted now, it has not run since. */
	add_range(ranges, "files/cc.so", 0, 0x4000);
	learn_files( ghost_path, ranges, 52);
	ck_assert_ptr_nonnull(lookup("bin/ghost"));
	scripted_scan(60, only_make);
	ck_assert(!exe_is_running(model, lookup("bin/ghost")));
	learn_update(learn, scan, model, conf, 70);
	ck_assert_uint_eq(reads, 1);
}
END_TEST

START_TEST(test_exec_learned_too_small_or_off)
{
	g_autoptr(GArray) ranges = watch_ranges_new();
	g_autofree char *tiny = at("bin/tiny");
	g_autofree char *off = at("bin/off");
	BadExe *bad;

	make_file("files/tiny.so", 0x1000);
	add_range(ranges, "files/tiny.so", 0, 0x1000);

	/* 4096 < minsize 10000: remembered as too small, with its size. */
	scan_saw_exec(scan, model, conf, tiny);
	learn_files( tiny, ranges, 5);
	ck_assert_ptr_null(lookup("bin/tiny"));
	ck_assert(is_bad("bin/tiny", &bad));
	ck_assert_uint_eq(bad->size, 4096);
	ck_assert_int_eq(bad->time, 5);
	/* A bad exe's later starts are not recorded. */
	scripted_scan(10, (const char *const[]){ NULL });
	ck_assert_uint_eq(model->running->len, 0);

	/* learnexec off: an unknown program is not admitted from its reads. */
	conf->learnexec = FALSE;
	conf->minsize = 0;
	learn_files( off, ranges, 6);
	ck_assert_ptr_null(lookup("bin/off"));
	ck_assert(!is_bad("bin/off", NULL));
}
END_TEST

/*
 * Each map remembers its file; a file replaced or deleted makes its maps
 * stale (never read ahead) within an hour of checks, the maintenance then
 * drops them, and an exe that maps the new file learns it again.
 */
START_TEST(test_replaced_files)
{
	static const char *const only_a[] = { "a", NULL };
	static const char *const none[] = { NULL };
	g_autoptr(GPtrArray) files = g_ptr_array_new();
	g_autofree char *one = at("files/one.so");
	g_autofree char *two = at("files/two.so");
	const LearnStats *stats = learn_get_stats(learn);
	Map *m1, *m2;
	Exe *a;
	struct stat st;

	make_file("files/one.so", 0x10000);
	make_file("files/two.so", 0x10000);
	learn_set_maps_source(learn, list_source, files);
	g_ptr_array_add(files, (gpointer)"files/one.so");
	g_ptr_array_add(files, (gpointer)"files/two.so");
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	a = lookup("bin/a");
	m1 = model_lookup_map(model, one, 0, 0x10000);
	m2 = model_lookup_map(model, two, 0, 0x10000);
	ck_assert_int_eq(stat(one, &st), 0);
	ck_assert_uint_eq(m1->file.ino, (guint64)st.st_ino);
	ck_assert_uint_eq(m1->file.size, 0x10000);
	ck_assert(!m1->learn.stale);

	/*
	 * one.so is upgraded (another size), two.so deleted. Two maps, a
	 * 20 s cycle: ceil(2 * 20 / 3600) = 1 map checked per update, so two
	 * updates check both.
	 */
	make_file("files/one.so", 0x18000);
	ck_assert_int_eq(g_unlink(two), 0);
	scripted_scan(20, none);
	learn_update(learn, scan, model, conf, 30);
	scripted_scan(40, none);
	learn_update(learn, scan, model, conf, 50);
	ck_assert(m1->learn.stale);
	ck_assert(m2->learn.stale);
	ck_assert_uint_eq(a->exemaps->len, 2);
	{
		Conf c = *conf;

		prophet_score(model, &c);
		ck_assert_uint_eq(model->candidates->len, 0);
	}

	/* a starts again mapping the new one.so: valid again, new identity. */
	g_ptr_array_set_size(files, 1);
	scripted_scan(60, only_a);
	learn_update(learn, scan, model, conf, 70);
	ck_assert(!m1->learn.stale);
	/* The identity of the maps line: the new inode, its size for the sweep to fill in. */
	ck_assert_int_eq(stat(one, &st), 0);
	ck_assert_uint_eq(m1->file.ino, (guint64)st.st_ino);
	ck_assert_uint_eq(m1->file.dev, (guint64)st.st_dev);
	ck_assert_uint_eq(m1->file.size, 0);
	ck_assert(m2->learn.stale);

	/*
	 * The maintenance, an hour after the last (at the first update, 10),
	 * drops the use of the stale two.so (a kept running, so it is not
	 * forgotten either).
	 */
	scripted_scan(3610, only_a);
	learn_update(learn, scan, model, conf, 3620);
	ck_assert_int_eq(stats->maintained_at, 3620);
	ck_assert_uint_eq(stats->maps_dropped, 1);
	ck_assert_uint_eq(a->exemaps->len, 1);
	ck_assert_ptr_null(model_lookup_map(model, two, 0, 0x10000));
}
END_TEST

/* Counts the file checks, then does the default one (lstat) itself. */
static gboolean
counting_check(const char *path, MapFileId *id, gpointer user_data)
{
	struct stat st;

	(*(guint *)user_data)++;
	memset(id, 0, sizeof(*id));
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return FALSE;
	id->dev = (guint64)st.st_dev;
	id->ino = (guint64)st.st_ino;
	id->size = (guint64)st.st_size;
	id->mtime = (gint64)st.st_mtim.tv_sec * G_GINT64_CONSTANT(1000000000) + st.st_mtim.tv_nsec;
	return TRUE;
}

/*
 * Maps about to be read ahead have their file checked once per check
 * period: one gone, or replaced since it was learned, turns stale at once
 * instead of when the sweep reaches it; one checked or learned recently
 * is not asked again.
 */
START_TEST(test_check_selected_files)
{
	g_autoptr(GPtrArray) files = g_ptr_array_new();
	g_autoptr(GPtrArray) selected = g_ptr_array_new();
	static const char *const only_a[] = { "a", NULL };
	g_autofree char *one = at("files/one.so");
	g_autofree char *two = at("files/two.so");
	g_autofree char *three = at("files/three.so");
	Map *m1, *m2, *m3;
	guint asked = 0;

	make_file("files/one.so", 0x10000);
	make_file("files/two.so", 0x10000);
	make_file("files/three.so", 0x10000);
	learn_set_maps_source(learn, list_source, files);
	g_ptr_array_add(files, (gpointer)"files/one.so");
	g_ptr_array_add(files, (gpointer)"files/two.so");
	g_ptr_array_add(files, (gpointer)"files/three.so");
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	m1 = model_lookup_map(model, one, 0, 0x10000);
	m2 = model_lookup_map(model, two, 0, 0x10000);
	m3 = model_lookup_map(model, three, 0, 0x10000);
	ck_assert_int_eq(m1->learn.checked, 10);
	g_ptr_array_add(selected, m1);
	g_ptr_array_add(selected, m2);
	g_ptr_array_add(selected, m3);

	/* Learned at 10: nothing is asked within the period, whatever changed. */
	make_file("files/one.so", 0x18000);
	ck_assert_int_eq(g_unlink(two), 0);
	learn_set_file_check(learn, counting_check, &asked);
	ck_assert_uint_eq(learn_check_files(learn, selected, 10 + LEARN_FILE_CHECK_PERIOD - 1), 0);
	ck_assert_uint_eq(asked, 0);

	/* A period later: one.so was replaced, two.so is gone, three.so is the same. */
	ck_assert_uint_eq(learn_check_files(learn, selected, 10 + LEARN_FILE_CHECK_PERIOD), 2);
	ck_assert_uint_eq(asked, 3);
	ck_assert(m1->learn.stale);
	ck_assert(m2->learn.stale);
	ck_assert(!m3->learn.stale);
	ck_assert_int_eq(m3->learn.checked, 10 + LEARN_FILE_CHECK_PERIOD);

	/* Stale maps and the one just checked cost nothing more. */
	ck_assert_uint_eq(learn_check_files(learn, selected, 20 + LEARN_FILE_CHECK_PERIOD), 0);
	ck_assert_uint_eq(asked, 3);
	/* A clock that went back checks again. */
	ck_assert_uint_eq(learn_check_files(learn, selected, 5), 0);
	ck_assert_uint_eq(asked, 4);
	learn_set_file_check(learn, NULL, NULL);
}
END_TEST

/*
 * A read set whose ranges carry the identity of the files the program
 * opened (the watcher's event descriptors) is learned without asking the
 * file check: the identity is the maps', as given. A range without one
 * (a replay) is asked about, once per path.
 */
START_TEST(test_read_set_identity)
{
	g_autoptr(GArray) ranges = watch_ranges_new();
	g_autofree char *cc_path = at("bin/cc");
	g_autofree char *lib = at("files/cc.so");
	g_autofree char *hdr = at("files/hdr.h");
	g_autofree char *plain = at("files/plain.h");
	const MapFileId lib_id = { .dev = 0xfe00, .ino = 4242, .size = 0x4000, .mtime = 7 };
	const MapFileId hdr_id = { .dev = 0xfe00, .ino = 4243, .size = 0x3000, .mtime = 8 };
	guint asked = 0;
	Map *map;
	Exe *cc;

	/* Not there on disk: with an identity nothing is looked up. */
	make_file("files/plain.h", 0x2000);
	learn_set_file_check(learn, counting_check, &asked);
	scan_saw_exec(scan, model, conf, cc_path);
	add_range(ranges, "files/cc.so", 0, 0x4000);
	g_array_index(ranges, WatchRange, 0).id = lib_id;
	add_range(ranges, "files/hdr.h", 0, 0x1000);
	g_array_index(ranges, WatchRange, 1).id = hdr_id;
	add_range(ranges, "files/hdr.h", 0x2000, 0x1000);
	g_array_index(ranges, WatchRange, 2).id = hdr_id;
	add_range(ranges, "files/plain.h", 0, 0x2000);
	learn_files(cc_path, ranges, 12);

	/* 0x4000 + 0x1000 + 0x1000 + 0x2000 = 32768 >= minsize 10000: admitted. */
	cc = lookup("bin/cc");
	ck_assert_ptr_nonnull(cc);
	ck_assert_uint_eq(cc->size, 32768);
	ck_assert_uint_eq(count_origin(cc, EXEMAP_READ), 4);
	ck_assert_uint_eq(asked, 1);   /* plain.h only */
	map = model_lookup_map(model, lib, 0, 0x4000);
	ck_assert_ptr_nonnull(map);
	ck_assert_uint_eq(map->file.dev, 0xfe00);
	ck_assert_uint_eq(map->file.ino, 4242);
	ck_assert_uint_eq(map->file.size, 0x4000);
	ck_assert_int_eq(map->file.mtime, 7);
	map = model_lookup_map(model, hdr, 0x2000, 0x1000);
	ck_assert_ptr_nonnull(map);
	ck_assert_uint_eq(map->file.ino, 4243);
	map = model_lookup_map(model, plain, 0, 0x2000);
	ck_assert_ptr_nonnull(map);
	ck_assert_uint_ne(map->file.ino, 0);   /* the file check's lstat */
	/* The same start again teaches nothing (the watcher backs off); one more range does. */
	ck_assert_int_eq(learn_read_set(learn, model, conf, cc_path, ranges, 13),
			 LEARN_READ_UNCHANGED);
	ck_assert_uint_eq(count_origin(cc, EXEMAP_READ), 4);
	add_range(ranges, "files/plain.h", 0x2000, 0x1000);
	make_file("files/plain.h", 0x3000);
	ck_assert_int_eq(learn_read_set(learn, model, conf, cc_path, ranges, 14), LEARN_READ_ADDED);
	ck_assert_uint_eq(count_origin(cc, EXEMAP_READ), 5);
	learn_set_file_check(learn, NULL, NULL);
}
END_TEST

static void
window_file_free(gpointer data)
{
	WatchFile *file = data;

	g_free(file->path);
	g_free(file);
}

/* A finished window's files, as the watcher holds them: ROOT/rel each. */
static GPtrArray *
window_files(const char *const *rels)
{
	GPtrArray *files = g_ptr_array_new_with_free_func(window_file_free);

	for (guint i = 0; rels[i]; i++) {
		WatchFile *file = g_new0(WatchFile, 1);

		file->path = at(rels[i]);
		g_ptr_array_add(files, file);
	}
	return files;
}

static char *
files_text(const GPtrArray *files)
{
	GString *out = g_string_new(NULL);
	gsize skip = strlen(root) + 1;

	for (guint i = 0; i < files->len; i++)
		g_string_append_printf(out, "%s%s", i ? "," : "",
				       ((const WatchFile *)g_ptr_array_index(files, i))->path + skip);
	return g_string_free(out, FALSE);
}

/*
 * What a finished window needs probed: of a known exe, the files it does
 * not map (make maps files/make.so); of an unknown one, all of them,
 * unless it is marked too small or learnexec is off; of an exe that
 * exeprefix rejects, nothing.
 */
START_TEST(test_read_filter)
{
	static const char *const only_make[] = { "make", NULL };
	static const char *const rels[] = { "files/make.so", "files/hdr.h", "bin/make", NULL };
	g_autofree char *make_path = at("bin/make");
	g_autofree char *cc_path = at("bin/cc");
	g_autofree char *skip_path = at("bin/skip/x");
	g_autoptr(GPtrArray) files = NULL;
	g_autofree char *text = NULL;
	guint reads = 0;

	make_file("files/make.so", 0x10000);
	learn_set_maps_source(learn, scripted_source, &reads);
	scripted_scan(0, only_make);
	learn_update(learn, scan, model, conf, 10);
	ck_assert_ptr_nonnull(lookup("bin/make"));

	files = window_files(rels);
	ck_assert(learn_read_filter(model, conf, make_path, files));
	text = files_text(files);
	ck_assert_str_eq(text, "files/hdr.h,bin/make");
	g_clear_pointer(&files, g_ptr_array_unref);

	/* Unknown: all kept; then marked too small, or learnexec off: nothing. */
	files = window_files(rels);
	ck_assert(learn_read_filter(model, conf, cc_path, files));
	ck_assert_uint_eq(files->len, 3);
	conf->learnexec = FALSE;
	ck_assert(!learn_read_filter(model, conf, cc_path, files));
	conf->learnexec = TRUE;
	model_add_bad_exe(model, cc_path, 100, 10);
	ck_assert(!learn_read_filter(model, conf, cc_path, files));
	ck_assert(!learn_read_filter(model, conf, skip_path, files));
	ck_assert_uint_eq(files->len, 3);
}
END_TEST

/* Like scripted_source, and the exe's own file too (if it exists). */
static gboolean
self_source(pid_t pid, const char *exe_path, GArray *maps, gpointer user_data, GError **error)
{
	ProcMap m = { 0 };

	if (!scripted_source(pid, exe_path, maps, user_data, error))
		return FALSE;
	m.start = 0x200000;
	m.end = 0x201000;
	m.path = g_strdup(exe_path);
	give_identity(&m);
	g_array_append_val(maps, m);
	return TRUE;
}

/*
 * The maintenance forgets exes not seen for maxage days and exes whose
 * file is gone, and ages the model by the half-life.
 */
START_TEST(test_maintenance)
{
	static const char *const a_b[] = { "a", "b", NULL };
	static const char *const none[] = { NULL };
	guint reads = 0;
	const LearnStats *stats = learn_get_stats(learn);
	Exe *a;

	make_file("files/a.so", 0x10000);
	make_file("files/b.so", 0x10000);
	make_file("bin/a", 0x1000);
	make_file("bin/b", 0x1000);
	/* Each maps its library and its own file. */
	learn_set_maps_source(learn, self_source, &reads);
	conf->halflife = 1;          /* hours: a maintenance every 3600 / 8 = 450 s */
	conf->maxage = 1;            /* day */

	/* 0: a and b run; the first update maintains the (empty) model. */
	scripted_scan(0, a_b);
	learn_update(learn, scan, model, conf, 10);
	ck_assert_int_eq(stats->maintained_at, 10);
	a = lookup("bin/a");
	ck_assert_double_eq(a->time, 10);
	ck_assert_double_eq(model->total_time, 10);

	/*
	 * 20: both stop, and b's file is deleted. Not yet due at 30 or 450
	 * (440 s after 10), but the sweep (four maps, one per update) finds
	 * b's own map stale meanwhile.
	 */
	{
		g_autofree char *b_path = at("bin/b");

		ck_assert_int_eq(g_unlink(b_path), 0);
	}
	scripted_scan(20, none);
	learn_update(learn, scan, model, conf, 30);
	for (gint64 t = 40; t <= 440; t += 100) {
		scripted_scan(t, none);
		learn_update(learn, scan, model, conf, t + 10);
	}
	ck_assert_int_eq(stats->maintained_at, 10);
	ck_assert_ptr_nonnull(lookup("bin/b"));

	/*
	 * 470: due. Aged by 460 s: 2^(-460/3600) = 0.9152401341861904;
	 * a: 10 -> 9.152401 (7 digits); the total, accounted up to 450,
	 * 450 -> 411.8581, then the update accounts 20 s more: 431.8581.
	 * b's file is gone: forgotten (a's own map is fine: a stays).
	 */
	scripted_scan(460, none);
	learn_update(learn, scan, model, conf, 470);
	ck_assert_int_eq(stats->maintained_at, 470);
	ck_assert_double_eq(a->time, 9.152401);
	ck_assert_double_eq_tol(model->total_time, 431.8581, 1e-9);
	ck_assert_uint_eq(stats->exes_gone, 1);
	ck_assert_ptr_null(lookup("bin/b"));
	ck_assert_ptr_nonnull(lookup("bin/a"));

	/* A day later a, last seen at 10, is forgotten too. */
	scripted_scan(86420, none);
	learn_update(learn, scan, model, conf, 86430);
	ck_assert_uint_eq(stats->exes_forgotten, 1);
	ck_assert_ptr_null(lookup("bin/a"));
	ck_assert_uint_eq(g_hash_table_size(model->maps), 0);
}
END_TEST

/*
 * Read sets of a known exe: only files it does not map, and of those only
 * what it has not learned yet, at most maxreadfiles files and maxreadkb
 * KB over all its starts.
 */
START_TEST(test_learned_files_known)
{
	static const char *const only_a[] = { "a", NULL };
	g_autoptr(GArray) ranges = watch_ranges_new();
	g_autofree char *a_path = at("bin/a");
	g_autofree char *a_so = at("files/a.so");
	g_autofree char *data = at("files/data");
	guint reads = 0;
	Exe *a;
	Map *map;

	make_file("files/a.so", 0x18000);
	make_file("files/data", 0x8000);
	make_file("files/b", 0x1000);
	learn_set_maps_source(learn, scripted_source, &reads);
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	a = lookup("bin/a");
	ck_assert_uint_eq(a->exemaps->len, 1);   /* a.so [0, 0x10000), mapped */

	conf->maxreadfiles = 1;
	conf->maxreadkb = 64;   /* 65536 bytes */
	add_range(ranges, "files/a.so", 0x8000, 0x10000);   /* a.so is mapped: left out */
	add_range(ranges, "files/data", 0, 0x2000);
	add_range(ranges, "files/data", 0x4000, 0x1000);
	add_range(ranges, "files/b", 0, 0x1000);            /* a second file: over the cap */
	learn_files( a_path, ranges, 15);

	/* data 8192 + 4096 = 12288 bytes read; nothing of a.so beyond its map. */
	ck_assert_uint_eq(a->exemaps->len, 3);
	ck_assert_uint_eq(count_origin(a, EXEMAP_READ), 2);
	ck_assert_uint_eq(a->size, 0x10000 + 12288);
	ck_assert_ptr_null(model_lookup_map(model, a_so, 0x10000, 0x8000));
	map = model_lookup_map(model, data, 0x4000, 0x1000);
	ck_assert_ptr_nonnull(map);
	ck_assert_int_eq(map->update_time, 15);
	ck_assert(model->dirty);

	/* The same set again adds nothing; a wider range adds only its new part. */
	learn_files( a_path, ranges, 20);
	ck_assert_uint_eq(a->exemaps->len, 3);
	g_array_set_size(ranges, 0);
	add_range(ranges, "files/data", 0x1000, 0x2000);    /* new: [0x2000, 0x3000) */
	learn_files( a_path, ranges, 20);
	ck_assert_uint_eq(a->exemaps->len, 4);
	ck_assert_ptr_nonnull(model_lookup_map(model, data, 0x2000, 0x1000));

	/* Read bytes are now 16384 = 16 KB: with maxreadkb 16 nothing more fits. */
	conf->maxreadkb = 16;
	g_array_set_size(ranges, 0);
	add_range(ranges, "files/data", 0x6000, 0x1000);
	learn_files( a_path, ranges, 25);
	ck_assert_uint_eq(a->exemaps->len, 4);
	/* With 20 KB, 4096 bytes more fit, and a longer range is cut there. */
	conf->maxreadkb = 20;
	g_array_set_size(ranges, 0);
	add_range(ranges, "files/data", 0x6000, 0x2000);
	learn_files( a_path, ranges, 25);
	ck_assert_uint_eq(a->exemaps->len, 5);
	ck_assert_ptr_nonnull(model_lookup_map(model, data, 0x6000, 0x1000));
}
END_TEST

/* Without exec events, the update counts starts the scan found, against the last prefetch. */
START_TEST(test_scan_counts_starts)
{
	static const char *const only_a[] = { "a", NULL };
	static const char *const none[] = { NULL };
	guint reads = 0;
	Exe *a;

	make_file("files/a.so", 0x10000);
	learn_set_maps_source(learn, scripted_source, &reads);
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	a = lookup("bin/a");
	/* Admission is not a start of a known program. */
	ck_assert_uint_eq(a->hits.starts, 0);

	model->prefetch_seq = 3;
	g_array_index(a->exemaps, ExeMap, 0).map->cycle.prefetch_seq = 3;
	scripted_scan(20, none);
	learn_update(learn, scan, model, conf, 30);
	scripted_scan(40, only_a);
	learn_update(learn, scan, model, conf, 50);
	ck_assert_uint_eq(a->hits.starts, 1);
	ck_assert_uint_eq(a->hits.checks, 1);
	ck_assert_uint_eq(a->hits.bytes, 0x10000);
	ck_assert_uint_eq(a->hits.prefetched, 0x10000);
	ck_assert_uint_eq(a->hits.probed, 0);

	/* Counted elsewhere (exec events): the scan leaves the figures alone. */
	learn_set_count_starts(learn, FALSE);
	scripted_scan(60, none);
	learn_update(learn, scan, model, conf, 70);
	scripted_scan(80, only_a);
	learn_update(learn, scan, model, conf, 90);
	ck_assert_uint_eq(a->hits.starts, 1);
}
END_TEST

/* Iterates the default context until the pool delivered n jobs, 5 s at most. */
static void
iterate_until_done(FsJobPool *pool, guint64 n)
{
	gint64 until = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
	FsJobStats st;

	for (;;) {
		fsjob_get_stats(pool, &st);
		if (st.done >= n || g_get_monotonic_time() >= until)
			return;
		(void)g_main_context_iteration(NULL, TRUE);
	}
}

/*
 * With a pool, the checks of learn_check_files() run on its workers: the
 * call finds nothing stale, the results turn one.so (replaced) and
 * two.so (gone) stale when they come back to the main context, and
 * three.so (the same file) keeps its map and gains its size.
 */
START_TEST(test_check_files_on_pool)
{
	g_autoptr(FsJobPool) pool = fsjob_pool_new(NULL, 2, 16, 2, 5 * G_USEC_PER_SEC);
	g_autoptr(GPtrArray) files = g_ptr_array_new();
	g_autoptr(GPtrArray) selected = g_ptr_array_new();
	static const char *const only_a[] = { "a", NULL };
	g_autofree char *one = at("files/one.so");
	g_autofree char *two = at("files/two.so");
	g_autofree char *three = at("files/three.so");
	Map *m1, *m2, *m3;
	FsJobStats st;

	make_file("files/one.so", 0x10000);
	make_file("files/two.so", 0x10000);
	make_file("files/three.so", 0x10000);
	learn_set_maps_source(learn, list_source, files);
	g_ptr_array_add(files, (gpointer)"files/one.so");
	g_ptr_array_add(files, (gpointer)"files/two.so");
	g_ptr_array_add(files, (gpointer)"files/three.so");
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	m1 = model_lookup_map(model, one, 0, 0x10000);
	m2 = model_lookup_map(model, two, 0, 0x10000);
	m3 = model_lookup_map(model, three, 0, 0x10000);
	ck_assert_uint_eq(m3->file.size, 0);
	g_ptr_array_add(selected, m1);
	g_ptr_array_add(selected, m2);
	g_ptr_array_add(selected, m3);

	make_file("files/one.so", 0x18000);
	ck_assert_int_eq(g_unlink(two), 0);
	learn_set_fsjob(learn, pool, model);
	ck_assert_uint_eq(learn_check_files(learn, selected, 10 + LEARN_FILE_CHECK_PERIOD), 0);
	ck_assert(!m1->learn.stale);
	ck_assert(!m2->learn.stale);
	iterate_until_done(pool, 3);
	ck_assert_uint_eq(learn_get_stats(learn)->stale, 2);
	ck_assert(m1->learn.stale);
	ck_assert(m2->learn.stale);
	ck_assert(!m3->learn.stale);
	ck_assert_uint_eq(m3->file.size, 0x10000);
	fsjob_get_stats(pool, &st);
	ck_assert_uint_eq(st.submitted, 3);
	ck_assert_uint_eq(st.done, 3);
	learn_set_fsjob(learn, NULL, NULL);
}
END_TEST

/* A job that holds the pool's only worker until the test lets it go. */
static gint blocker_release;

static void
blocker_run(FsJobCtx *ctx, gpointer data)
{
	(void)ctx;
	(void)data;
	while (!g_atomic_int_get(&blocker_release))
		g_usleep(1000);
}

static void
blocker_done(FsJobStatus status, gpointer data, gpointer user_data)
{
	(void)status;
	(void)data;
	(void)user_data;
}

/*
 * A check refused because the pool's queue is full is asked again at the
 * next call, not LEARN_FILE_CHECK_PERIOD later. One worker, held by a
 * blocker, and a queue of one: two.so's check is refused and its map
 * keeps checked = 10 (the old code set 3610 and skipped it for an hour);
 * once the queue drains, the next call at the same time submits it.
 */
START_TEST(test_check_files_queue_full)
{
	g_autoptr(FsJobPool) pool = fsjob_pool_new(NULL, 1, 1, 2, 5 * G_USEC_PER_SEC);
	g_autoptr(GPtrArray) files = g_ptr_array_new();
	g_autoptr(GPtrArray) selected = g_ptr_array_new();
	static const char *const only_a[] = { "a", NULL };
	g_autofree char *one = at("files/one.so");
	g_autofree char *two = at("files/two.so");
	const gint64 later = 10 + LEARN_FILE_CHECK_PERIOD;
	Map *m1, *m2;
	FsJobStats st;

	make_file("files/one.so", 0x10000);
	make_file("files/two.so", 0x10000);
	learn_set_maps_source(learn, list_source, files);
	g_ptr_array_add(files, (gpointer)"files/one.so");
	g_ptr_array_add(files, (gpointer)"files/two.so");
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	m1 = model_lookup_map(model, one, 0, 0x10000);
	m2 = model_lookup_map(model, two, 0, 0x10000);
	ck_assert_int_eq(m1->learn.checked, 10);
	ck_assert_int_eq(m2->learn.checked, 10);
	g_ptr_array_add(selected, m1);
	g_ptr_array_add(selected, m2);

	g_atomic_int_set(&blocker_release, 0);
	ck_assert_int_eq(fsjob_submit(pool, 0, blocker_run, NULL, NULL, blocker_done, NULL, NULL),
			 FSJOB_QUEUED);
	/* The worker has taken the blocker: the queue is empty again. */
	for (fsjob_get_stats(pool, &st); st.running == 0; fsjob_get_stats(pool, &st))
		g_usleep(1000);
	learn_set_fsjob(learn, pool, model);
	ck_assert_uint_eq(learn_check_files(learn, selected, later), 0);
	fsjob_get_stats(pool, &st);
	ck_assert_uint_eq(st.submitted, 2);
	ck_assert_uint_eq(st.refused_full, 1);
	ck_assert_int_eq(m1->learn.checked, later);
	ck_assert_int_eq(m2->learn.checked, 10);

	g_atomic_int_set(&blocker_release, 1);
	iterate_until_done(pool, 2);
	ck_assert_uint_eq(learn_check_files(learn, selected, later), 0);
	fsjob_get_stats(pool, &st);
	ck_assert_uint_eq(st.submitted, 3);
	ck_assert_uint_eq(st.refused_full, 1);
	ck_assert_int_eq(m2->learn.checked, later);
	iterate_until_done(pool, 3);
	ck_assert(!m1->learn.stale);
	ck_assert(!m2->learn.stale);
	learn_set_fsjob(learn, NULL, NULL);
}
END_TEST

/*
 * A learned file in a mount that stopped answering (netfs on, so it was
 * learned): the check of learn_check_files() does not hold the calling
 * thread (at once, the call would wait out hangfs's 4 s); the job is
 * abandoned at the pool's 300 ms deadline, the map stays as it was, and
 * the mount's device is refused.
 */
START_TEST(test_check_files_hung_mount)
{
	g_autoptr(FsJobPool) pool = fsjob_pool_new(NULL, 2, 16, 4, 300 * 1000);
	g_autoptr(GPtrArray) files = g_ptr_array_new();
	g_autoptr(GPtrArray) selected = g_ptr_array_new();
	static const char *const only_a[] = { "a", NULL };
	g_autofree char *src = at("src");
	g_autofree char *mnt = at("files/hang");
	g_autofree char *lib = at("files/hang/lib.so");
	gint64 t0, took;
	FsJobStats st;
	struct stat sb;
	Map *map;
	GPid pid;

	make_file("src/lib.so", 0x10000);
	ck_assert_int_eq(g_mkdir_with_parents(mnt, 0755), 0);
	pid = tu_hangfs_start(src, mnt, 4);
	conf->netfs = TRUE;
	learn_set_maps_source(learn, list_source, files);
	g_ptr_array_add(files, (gpointer)"files/hang/lib.so");
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	map = model_lookup_map(model, lib, 0, 0x10000);
	ck_assert_ptr_nonnull(map);
	ck_assert_int_eq(lstat(lib, &sb), 0);
	ck_assert_uint_eq(map->file.ino, (guint64)sb.st_ino);
	g_ptr_array_add(selected, map);

	ck_assert_int_eq(kill(pid, SIGUSR1), 0);
	g_usleep(100 * 1000);
	learn_set_fsjob(learn, pool, model);
	t0 = g_get_monotonic_time();
	ck_assert_uint_eq(learn_check_files(learn, selected, 10 + LEARN_FILE_CHECK_PERIOD), 0);
	took = g_get_monotonic_time() - t0;
	ck_assert_msg(took < 200 * 1000, "the check held the caller %" G_GINT64_FORMAT " us", took);
	do {
		(void)g_main_context_iteration(NULL, TRUE);
		fsjob_get_stats(pool, &st);
	} while (st.abandoned == 0 && g_get_monotonic_time() - t0 < 3 * G_USEC_PER_SEC);
	ck_assert_uint_eq(st.abandoned, 1);
	ck_assert(!map->learn.stale);
	ck_assert(fsjob_device_refused(pool, map->file.dev));
	learn_set_fsjob(learn, NULL, NULL);
	tu_hangfs_stop(mnt, pid);
}
END_TEST

/*
 * netfs off, a learned file whose directory a user then covered with a
 * FUSE mount that stops answering: the path is not looked up (an lstat
 * would wait out hangfs's 4 s), the map turns stale (its path no longer
 * leads to the file learned), in the update's sweep or in
 * learn_check_files(), with no pool.
 */
START_TEST(test_check_files_covered_by_fuse)
{
	g_autoptr(GPtrArray) files = g_ptr_array_new();
	g_autoptr(GPtrArray) selected = g_ptr_array_new();
	static const char *const only_a[] = { "a", NULL };
	g_autofree char *src = at("src");
	g_autofree char *mnt = at("files/u");
	g_autofree char *lib = at("files/u/lib.so");
	struct stat mounted;
	gint64 t0, took;
	Map *map;
	GPid pid;

	make_file("src/lib.so", 0x10000);
	make_file("files/u/lib.so", 0x10000);
	learn_set_maps_source(learn, list_source, files);
	g_ptr_array_add(files, (gpointer)"files/u/lib.so");
	scripted_scan(0, only_a);
	learn_update(learn, scan, model, conf, 10);
	map = model_lookup_map(model, lib, 0, 0x10000);
	ck_assert_ptr_nonnull(map);
	ck_assert(!map->learn.stale);
	g_ptr_array_add(selected, map);

	pid = tu_hangfs_start(src, mnt, 4);
	ck_assert_int_eq(stat(mnt, &mounted), 0);
	ck_assert_int_eq(kill(pid, SIGUSR1), 0);
	g_usleep(100 * 1000);
	t0 = g_get_monotonic_time();
	scripted_scan(20, only_a);
	learn_update(learn, scan, model, conf, 30);
	(void)learn_check_files(learn, selected, 30 + LEARN_FILE_CHECK_PERIOD);
	took = g_get_monotonic_time() - t0;
	ck_assert_msg(took < 500 * 1000, "held %" G_GINT64_FORMAT " us", took);
	ck_assert(map->learn.stale);
	ck_assert(learn_path_is_remote(learn, lib));
	ck_assert(!learn_path_is_remote(learn, src));
	/* Jobs about it would name the FUSE mount's device, not the one learned. */
	ck_assert_uint_eq(learn_path_dev(learn, lib), (guint64)mounted.st_dev);
	ck_assert_uint_ne(learn_path_dev(learn, lib), map->file.dev);
	tu_hangfs_stop(mnt, pid);
}
END_TEST

/*
 * The mount table is read again only when procfs flags a change: an
 * update after one that read it reads nothing, and a mount made in
 * between (in a mount namespace of this test's own, as root) is read
 * and seen.
 */
START_TEST(test_mounts_read_on_change)
{
	static const char *const none[] = { NULL };
	g_autofree char *mnt = at("files/m");
	g_autofree char *inside = at("files/m/lib.so");
	struct stat before, mounted;
	struct statfs sfs;
	gboolean own_ns;
	int ns_errno;

	if (statfs("/proc/self/mountinfo", &sfs) != 0 || sfs.f_type != PROC_SUPER_MAGIC) {
		printf("SKIP: /proc is not procfs: the table is read every time\n");
		return;
	}
	ck_assert_int_eq(g_mkdir_with_parents(mnt, 0755), 0);
	/*
	 * Before the first update: the table is opened then, and an open
	 * table stays the namespace's it was opened in. Check runs each test
	 * in a child of its own, so the namespace ends with it.
	 */
	/* The kernel ignores source and type here; valgrind reads both as strings. */
	own_ns = unshare(CLONE_NEWNS) == 0 &&
		 mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0;
	ns_errno = errno;
	scripted_scan(0, none);
	learn_update(learn, scan, model, conf, 10);
	ck_assert_uint_eq(learn_get_stats(learn)->mounts_read, 1);
	scripted_scan(20, none);
	learn_update(learn, scan, model, conf, 30);
	ck_assert_uint_eq(learn_get_stats(learn)->mounts_read, 0);
	scripted_scan(40, none);
	learn_update(learn, scan, model, conf, 50);
	ck_assert_uint_eq(learn_get_stats(learn)->mounts_read, 0);
	/* A change of netfs reads it again, as a reloaded configuration needs. */
	conf->netfs = !conf->netfs;
	learn_update(learn, scan, model, conf, 60);
	ck_assert_uint_eq(learn_get_stats(learn)->mounts_read, 1);
	conf->netfs = !conf->netfs;
	learn_update(learn, scan, model, conf, 70);
	ck_assert_uint_eq(learn_get_stats(learn)->mounts_read, 1);

	ck_assert_int_eq(stat(mnt, &before), 0);
	ck_assert_uint_eq(learn_path_dev(learn, inside), learn_path_dev(learn, mnt));
	if (!own_ns || mount("preload-test", mnt, "tmpfs", 0, "size=64k") != 0) {
		printf("SKIP: cannot mount in a namespace of its own (%s): change not tested\n",
		       g_strerror(own_ns ? errno : ns_errno));
		return;
	}
	ck_assert_int_eq(stat(mnt, &mounted), 0);
	ck_assert_uint_ne(mounted.st_dev, before.st_dev);
	learn_update(learn, scan, model, conf, 80);
	ck_assert_uint_eq(learn_get_stats(learn)->mounts_read, 1);
	ck_assert_uint_eq(learn_path_dev(learn, inside), (guint64)mounted.st_dev);
	learn_update(learn, scan, model, conf, 90);
	ck_assert_uint_eq(learn_get_stats(learn)->mounts_read, 0);
	ck_assert_int_eq(umount(mnt), 0);
	learn_update(learn, scan, model, conf, 100);
	ck_assert_uint_eq(learn_get_stats(learn)->mounts_read, 1);
	ck_assert_uint_eq(learn_path_dev(learn, inside), learn_path_dev(learn, mnt));
	ck_assert_uint_ne(learn_path_dev(learn, inside), (guint64)mounted.st_dev);
}
END_TEST

static Suite *
learn_suite(void)
{
	Suite *s = suite_create("learn");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_admission);
	tcase_add_test(tc, test_mounts_read_on_change);
	tcase_add_test(tc, test_admission_touched);
	tcase_add_test(tc, test_admission_touched_bounded);
	tcase_add_test(tc, test_admission_touched_mapped_file);
	tcase_add_test(tc, test_admission_touched_budget);
	tcase_add_test(tc, test_shared_maps);
	tcase_add_test(tc, test_pid_reused_or_zombie);
	tcase_add_test(tc, test_identity_from_maps_line);
	tcase_add_test(tc, test_file_check_hook);
	tcase_add_test(tc, test_bad_exe_expiry);
	tcase_add_test(tc, test_gone_then_admitted);
	tcase_add_test(tc, test_chain_weights);
	tcase_add_test(tc, test_stop_and_new_same_scan);
	tcase_add_test(tc, test_raw_names_one_exe);
	tcase_add_test(tc, test_source_errors);
	tcase_add_test(tc, test_admitted_meanwhile);
	tcase_add_test(tc, test_changed_exe_removed_meanwhile);
	tcase_add_test(tc, test_scan_failure_keeps_model);
	tcase_add_test(tc, test_exeprefix_change);
	tcase_add_test(tc, test_refresh_maps);
	tcase_add_test(tc, test_replaced_files);
	tcase_add_test(tc, test_check_selected_files);
	tcase_add_test(tc, test_check_files_on_pool);
	tcase_add_test(tc, test_check_files_queue_full);
	tcase_add_test(tc, test_maintenance);
	tcase_add_test(tc, test_exec_short_lived);
	tcase_add_test(tc, test_exec_learned_too_small_or_off);
	tcase_add_test(tc, test_read_set_identity);
	tcase_add_test(tc, test_read_filter);
	tcase_add_test(tc, test_learned_files_known);
	tcase_add_test(tc, test_scan_counts_starts);
	suite_add_tcase(s, tc);

	/*
	 * Tagged "kernel": it mounts a FUSE file system and times the
	 * caller against a 300 ms deadline, which valgrind slows past.
	 */
	tc = tcase_create("hung-mount");
	tcase_set_tags(tc, "kernel");
	tcase_add_checked_fixture(tc, setup, teardown);
	TU_ADD_TEST_UNLESS(tc, test_check_files_hung_mount, tu_why_no_hangfs());
	TU_ADD_TEST_UNLESS(tc, test_check_files_covered_by_fuse, tu_why_no_hangfs());
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(learn_suite());
}
