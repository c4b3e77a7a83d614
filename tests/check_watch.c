/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/watch.c: the start-up window bookkeeping driven by
 * scripted exec and open events at hand-picked times, the ELF header
 * parser on hand-built and real images, the turning of mincore vectors
 * into ranges, the hit arithmetic, and what a start found cached,
 * measured on a real file whose pages are evicted and read back one by
 * one (the residency calls themselves are tested in check_pagecache.c).
 */
#include "config.h"

#include "testutil.h"
#include "pagecache.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ---- the window bookkeeping ---- */

enum { SELF_PID = 100 };

typedef enum {
	STEP_END = 0,
	STEP_EXEC,    /* expect: a WatchExecResult */
	STEP_OPEN,    /* expect: TRUE if recorded */
	STEP_WANTS,   /* expect: watch_tracker_wants() */
	STEP_EXPIRE,  /* windows: what expire() returns; dead: a pid that is gone */
	STEP_BUSY,    /* expect: watch_tracker_busy() */
} StepOp;

typedef struct {
	StepOp op;
	int pid;
	const char *path;
	WatchImageKind kind;
	const char *interp;   /* non-NULL: the image asks for an interpreter (PT_INTERP) */
	gint64 ms;            /* event time in milliseconds */
	int expect;
	const char *windows;  /* "exe:file,file|exe:file" in order, "" for none */
	int dead;
} Step;

typedef struct {
	const char *name;
	Step steps[12];
} TrackerCase;

#define EXEC(pid, path, kind, interp, ms, res) { STEP_EXEC, pid, path, kind, interp, ms, res, NULL, 0 }
#define OPEN(pid, path, ms, res) { STEP_OPEN, pid, path, 0, NULL, ms, res, NULL, 0 }
#define WANTS(pid, res) { STEP_WANTS, pid, NULL, 0, NULL, 0, res, NULL, 0 }
#define EXPIRE(ms, dead, windows) { STEP_EXPIRE, 0, NULL, 0, NULL, ms, 0, windows, dead }
#define BUSY(ms, res) { STEP_BUSY, 0, NULL, 0, NULL, ms, res, NULL, 0 }
#define ELF WATCH_IMAGE_ELF
#define LD "/lib/ld.so"

/*
 * Limits of every case: windows of 5 s, one per exe per 20 s, 3 files per
 * window (the exe itself counts), programs under /bin/, files under
 * /bin/, /lib/ and /data/. The daemon is pid 100.
 */
static const TrackerCase tracker_cases[] = {
	{ "a start opens a window that holds the exe and what it opens", {
		EXEC(200, "/bin/a", ELF, LD, 0, WATCH_EXEC_WINDOW),
		WANTS(200, TRUE),
		OPEN(200, "/data/x", 1000, TRUE),
		EXPIRE(4999, 0, ""),
		EXPIRE(5000, 0, "/bin/a:/bin/a,/data/x"),
		WANTS(200, FALSE),
	} },
	{ "the ELF interpreter's exec is a file of the start, not a start", {
		EXEC(200, "/bin/a", ELF, LD, 0, WATCH_EXEC_WINDOW),
		EXEC(200, LD, ELF, NULL, 1, WATCH_EXEC_INTERP),
		OPEN(200, "/data/x", 2, TRUE),
		EXPIRE(6000, 0, "/bin/a:/bin/a,/lib/ld.so,/data/x"),
	} },
	{ "the interpreter a second later is a new image (and /lib is no exeprefix)", {
		EXEC(200, "/bin/a", ELF, LD, 0, WATCH_EXEC_WINDOW),
		EXEC(200, LD, ELF, NULL, 1001, WATCH_EXEC_REJECTED),
		WANTS(200, FALSE),
		EXPIRE(1001, 0, "/bin/a:/bin/a"),
	} },
	{ "an image that asks for an interpreter itself is a new image, not the interpreter", {
		EXEC(200, "/bin/a", ELF, LD, 0, WATCH_EXEC_WINDOW),
		EXEC(200, "/bin/b", ELF, LD, 1, WATCH_EXEC_WINDOW),
		EXPIRE(6000, 0, "/bin/a:/bin/a|/bin/b:/bin/b"),
	} },
	{ "the interpreter is known by its place, whatever its name", {
		/* PT_INTERP may say /lib64/ld.so; the kernel opens the real file. */
		EXEC(200, "/bin/a", ELF, LD, 0, WATCH_EXEC_WINDOW),
		EXEC(200, "/lib/x86_64-linux-gnu/ld-real.so.2", ELF, NULL, 1, WATCH_EXEC_INTERP),
		/* One interpreter per image: the next exec is a new program. */
		EXEC(200, "/bin/static", ELF, NULL, 2, WATCH_EXEC_WINDOW),
		EXPIRE(6000, 0, "/bin/a:/bin/a,/lib/x86_64-linux-gnu/ld-real.so.2"
			  "|/bin/static:/bin/static"),
	} },
	{ "an image without PT_INTERP expects no interpreter", {
		EXEC(200, "/bin/static", ELF, NULL, 0, WATCH_EXEC_WINDOW),
		EXEC(200, "/bin/b", ELF, NULL, 1, WATCH_EXEC_WINDOW),
		EXPIRE(6000, 0, "/bin/static:/bin/static|/bin/b:/bin/b"),
	} },
	{ "a script cannot be an interpreter", {
		EXEC(200, "/bin/a", ELF, LD, 0, WATCH_EXEC_WINDOW),
		EXEC(200, "/bin/s.sh", WATCH_IMAGE_SCRIPT, NULL, 1, WATCH_EXEC_SCRIPT),
		EXEC(200, LD, WATCH_IMAGE_OTHER, NULL, 2, WATCH_EXEC_REJECTED),
		EXPIRE(6000, 0, "/bin/a:/bin/a"),
	} },
	{ "the daemon's own events are ignored", {
		EXEC(SELF_PID, "/bin/a", ELF, LD, 0, WATCH_EXEC_SELF),
		OPEN(SELF_PID, "/data/x", 1, FALSE),
		WANTS(SELF_PID, FALSE),
		EXPIRE(6000, 0, ""),
	} },
	{ "a script is skipped; its interpreter is the start and reads it", {
		EXEC(200, "/bin/s.sh", WATCH_IMAGE_SCRIPT, NULL, 0, WATCH_EXEC_SCRIPT),
		WANTS(200, FALSE),
		EXEC(200, "/bin/sh", ELF, LD, 1, WATCH_EXEC_WINDOW),
		EXEC(200, LD, ELF, NULL, 2, WATCH_EXEC_INTERP),
		OPEN(200, "/bin/s.sh", 3, TRUE),
		OPEN(200, "/data/x", 4, FALSE),    /* the window is full: 3 files */
		EXPIRE(6000, 0, "/bin/sh:/bin/sh,/lib/ld.so,/bin/s.sh"),
	} },
	{ "opens at and after the window's end are not recorded", {
		EXEC(200, "/bin/a", ELF, NULL, 0, WATCH_EXEC_WINDOW),
		OPEN(200, "/data/late", 5000, FALSE),
		OPEN(200, "/data/x", 4999, TRUE),
		EXPIRE(5000, 0, "/bin/a:/bin/a,/data/x"),
	} },
	{ "caps, duplicates and mapprefix", {
		EXEC(200, "/bin/a", ELF, NULL, 0, WATCH_EXEC_WINDOW),
		OPEN(200, "/etc/passwd", 1, FALSE),   /* mapprefix rejects */
		OPEN(200, "/data/x", 2, TRUE),
		OPEN(200, "/data/x", 3, FALSE),       /* already recorded */
		OPEN(200, "/bin/a", 4, FALSE),        /* the exe itself, too */
		OPEN(200, "/data/y", 5, TRUE),
		OPEN(200, "/data/z", 6, FALSE),       /* 3 files: full */
		EXPIRE(5000, 0, "/bin/a:/bin/a,/data/x,/data/y"),
	} },
	{ "one window per exe per interval; other starts are only counted", {
		EXEC(200, "/bin/a", ELF, NULL, 0, WATCH_EXEC_WINDOW),
		EXEC(201, "/bin/a", ELF, NULL, 1000, WATCH_EXEC_COUNTED),
		OPEN(201, "/data/x", 1001, FALSE),
		WANTS(201, FALSE),
		EXEC(202, "/bin/b", ELF, NULL, 1002, WATCH_EXEC_WINDOW),
		EXPIRE(10000, 0, "/bin/a:/bin/a|/bin/b:/bin/b"),
		EXEC(203, "/bin/a", ELF, NULL, 19999, WATCH_EXEC_COUNTED),
		EXEC(204, "/bin/a", ELF, NULL, 20000, WATCH_EXEC_WINDOW),
		EXPIRE(25000, 0, "/bin/a:/bin/a"),
	} },
	{ "a rejected program gets no window", {
		EXEC(200, "/usr/bin/x", ELF, NULL, 0, WATCH_EXEC_REJECTED),
		WANTS(200, FALSE),
		OPEN(200, "/data/x", 1, FALSE),
		EXPIRE(6000, 0, ""),
	} },
	{ "an exec in a pid ends its window: the pid became another program", {
		EXEC(200, "/bin/a", ELF, NULL, 0, WATCH_EXEC_WINDOW),
		OPEN(200, "/data/x", 10, TRUE),
		EXEC(200, "/bin/b", ELF, NULL, 1000, WATCH_EXEC_WINDOW),
		OPEN(200, "/data/y", 1010, TRUE),
		EXPIRE(7000, 0, "/bin/a:/bin/a,/data/x|/bin/b:/bin/b,/data/y"),
	} },
	{ "a process that exits ends its window early; state is then forgotten", {
		EXEC(200, "/bin/a", ELF, NULL, 0, WATCH_EXEC_WINDOW),
		EXEC(300, "/bin/b", ELF, LD, 0, WATCH_EXEC_WINDOW),
		OPEN(200, "/data/x", 10, TRUE),
		EXPIRE(500, 200, "/bin/a:/bin/a,/data/x"),
		BUSY(500, TRUE),
		EXPIRE(5000, 0, "/bin/b:/bin/b"),
		BUSY(19999, FALSE),   /* /bin/b's rate limit needs no timer */
		EXEC(301, "/bin/b", ELF, NULL, 19999, WATCH_EXEC_COUNTED),
		EXPIRE(20000, 0, ""),
		BUSY(20000, FALSE),
	} },
};

static int dead_pid;

static gboolean
fake_alive(pid_t pid, gpointer user_data)
{
	(void)user_data;
	return pid != dead_pid;
}

/* "exe:file,file|exe:file" */
static char *
describe_windows(GPtrArray *windows)
{
	GString *out = g_string_new(NULL);

	for (guint i = 0; i < windows->len; i++) {
		const WatchWindow *w = g_ptr_array_index(windows, i);

		if (i > 0)
			g_string_append_c(out, '|');
		g_string_append_printf(out, "%s:", w->exe);
		for (guint j = 0; j < w->files->len; j++)
			g_string_append_printf(out, "%s%s", j ? "," : "",
					       ((WatchFile *)g_ptr_array_index(w->files, j))->path);
	}
	return g_string_free(out, FALSE);
}

START_TEST(test_tracker)
{
	const TrackerCase *c = &tracker_cases[_i];
	g_auto(GStrv) exeprefix = g_strsplit("/bin/;!/", ";", -1);
	g_auto(GStrv) mapprefix = g_strsplit("/bin/;/lib/;/data/;!/", ";", -1);
	WatchLimits limits = {
		.window_us = 5 * G_USEC_PER_SEC,
		.interval_us = 20 * G_USEC_PER_SEC,
		.max_files = 3,
		.exeprefix = exeprefix,
		.mapprefix = mapprefix,
	};
	g_autoptr(WatchTracker) t = watch_tracker_new(&limits, SELF_PID);

	for (guint i = 0; c->steps[i].op != STEP_END; i++) {
		const Step *s = &c->steps[i];
		gint64 now = s->ms * 1000;
		int got = -1;

		switch (s->op) {
		case STEP_EXEC:
			got = (int)watch_tracker_exec(t, s->pid, s->path, 1000, s->kind,
						      s->interp != NULL, now);
			break;
		case STEP_OPEN:
			got = watch_tracker_open(t, s->pid, s->path,
						 &(MapFileId){ .dev = 1, .ino = 2, .size = 1000 }, now);
			break;
		case STEP_WANTS:
			got = watch_tracker_wants(t, s->pid);
			break;
		case STEP_BUSY: {
			/* Busy is asked after an expire at that time. */
			g_autoptr(GPtrArray) done = watch_tracker_expire(t, now, fake_alive, NULL);

			ck_assert_msg(done->len == 0, "%s: step %u expired a window", c->name, i);
			got = watch_tracker_busy(t);
			break;
		}
		case STEP_EXPIRE: {
			g_autoptr(GPtrArray) done = NULL;
			g_autofree char *text = NULL;

			dead_pid = s->dead;
			done = watch_tracker_expire(t, now, fake_alive, NULL);
			dead_pid = 0;
			text = describe_windows(done);
			ck_assert_msg(strcmp(text, s->windows) == 0, "%s: step %u: windows \"%s\", want \"%s\"",
				      c->name, i, text, s->windows);
			continue;
		}
		case STEP_END:
			break;
		}
		ck_assert_msg(got == s->expect, "%s: step %u (%s): got %d, want %d",
			      c->name, i, s->path ? s->path : "-", got, s->expect);
	}
}
END_TEST

START_TEST(test_tracker_no_files)
{
	char *list[] = { NULL };
	WatchLimits limits = { 5 * G_USEC_PER_SEC, 20 * G_USEC_PER_SEC, 0, list, list };
	g_autoptr(WatchTracker) t = watch_tracker_new(&limits, SELF_PID);
	g_autoptr(GPtrArray) done = NULL;

	/* max_files 0 (no open events): starts are counted, never followed. */
	ck_assert_int_eq(watch_tracker_exec(t, 5, "/x", 1, WATCH_IMAGE_OTHER, FALSE, 0),
			 WATCH_EXEC_COUNTED);
	ck_assert(!watch_tracker_wants(t, 5));
	done = watch_tracker_expire(t, 10 * G_USEC_PER_SEC, NULL, NULL);
	ck_assert_uint_eq(done->len, 0);
	ck_assert(!watch_tracker_busy(t));
}
END_TEST

/*
 * The tables are bounded: past WATCH_MAX_PIDS followed pids, a start is
 * counted but not followed, and the old entries are kept, not flushed.
 */
START_TEST(test_tracker_bounds)
{
	static char bin[] = "/bin/";
	char *exe[] = { bin, NULL };
	WatchLimits limits = { 5 * G_USEC_PER_SEC, 20 * G_USEC_PER_SEC, 3, exe, exe };
	g_autoptr(WatchTracker) t = watch_tracker_new(&limits, SELF_PID);
	g_autoptr(GPtrArray) done = NULL;

	for (int i = 0; i < WATCH_MAX_PIDS; i++) {
		g_autofree char *path = g_strdup_printf("/bin/p%d", i);

		ck_assert_int_eq(watch_tracker_exec(t, 1000 + i, path, 1, WATCH_IMAGE_ELF, TRUE, 0),
				 WATCH_EXEC_WINDOW);
	}
	/* Full: pid 99999 is counted, gets no window, and its interpreter is a start. */
	ck_assert_int_eq(watch_tracker_exec(t, 99999, "/bin/new", 1, WATCH_IMAGE_ELF, TRUE, 1),
			 WATCH_EXEC_COUNTED);
	ck_assert(!watch_tracker_wants(t, 99999));
	/* The first pid is still followed: its interpreter is recognised. */
	ck_assert(watch_tracker_wants(t, 1000));
	ck_assert_int_eq(watch_tracker_exec(t, 1000, "/bin/ld", 1, WATCH_IMAGE_ELF, FALSE, 2),
			 WATCH_EXEC_INTERP);
	/* The windows end; the tables empty; a new pid is followed again. */
	done = watch_tracker_expire(t, 5 * G_USEC_PER_SEC, NULL, NULL);
	ck_assert_uint_eq(done->len, WATCH_MAX_PIDS);
	ck_assert_int_eq(watch_tracker_exec(t, 99999, "/bin/new", 1, WATCH_IMAGE_ELF, TRUE,
					    5 * G_USEC_PER_SEC + 1),
			 WATCH_EXEC_COUNTED);  /* last_window still holds 4096 exes: rate table full */
	g_clear_pointer(&done, g_ptr_array_unref);
	done = watch_tracker_expire(t, 20 * G_USEC_PER_SEC, NULL, NULL);
	ck_assert_int_eq(watch_tracker_exec(t, 99998, "/bin/new", 1, WATCH_IMAGE_ELF, TRUE,
					    20 * G_USEC_PER_SEC + 1),
			 WATCH_EXEC_WINDOW);
}
END_TEST

/*
 * A program whose windows teach nothing gets them ever more rarely: each
 * such window doubles the time to the next (20, 40, 80... s, at most
 * WATCH_BACKOFF_MAX = 16 times 20 s), one that teaches something brings
 * it back to 20 s, and an entry not used for twice its interval is
 * forgotten (the next start has a window at once).
 */
static int
exec_at(WatchTracker *t, pid_t pid, gint64 s)
{
	g_autoptr(GPtrArray) done = watch_tracker_expire(t, s * G_USEC_PER_SEC, NULL, NULL);

	return (int)watch_tracker_exec(t, pid, "/bin/cc1", 1, WATCH_IMAGE_ELF, FALSE,
				       s * G_USEC_PER_SEC);
}

START_TEST(test_tracker_backoff)
{
	static char bin[] = "/bin/";
	char *exe[] = { bin, NULL };
	WatchLimits limits = { 5 * G_USEC_PER_SEC, 20 * G_USEC_PER_SEC, 3, exe, exe };
	g_autoptr(WatchTracker) t = watch_tracker_new(&limits, SELF_PID);
	const gint64 s = G_USEC_PER_SEC;

	ck_assert_int_eq(watch_tracker_interval(t, "/bin/cc1"), 0);
	ck_assert_int_eq(exec_at(t, 200, 0), WATCH_EXEC_WINDOW);
	ck_assert_uint_eq(watch_tracker_windows(t), 1);
	ck_assert_int_eq(watch_tracker_interval(t, "/bin/cc1"), 20 * s);
	/* Taught nothing: 40 s from the window at 0. */
	watch_tracker_learned(t, "/bin/cc1", FALSE);
	ck_assert_int_eq(watch_tracker_interval(t, "/bin/cc1"), 40 * s);
	ck_assert_int_eq(exec_at(t, 201, 25), WATCH_EXEC_COUNTED);
	ck_assert_uint_eq(watch_tracker_windows(t), 0);
	ck_assert_int_eq(exec_at(t, 202, 39), WATCH_EXEC_COUNTED);
	ck_assert_int_eq(exec_at(t, 203, 40), WATCH_EXEC_WINDOW);
	/* Twice more: 80, then 160 s. */
	watch_tracker_learned(t, "/bin/cc1", FALSE);
	ck_assert_int_eq(exec_at(t, 204, 119), WATCH_EXEC_COUNTED);
	ck_assert_int_eq(exec_at(t, 205, 120), WATCH_EXEC_WINDOW);
	watch_tracker_learned(t, "/bin/cc1", FALSE);
	ck_assert_int_eq(watch_tracker_interval(t, "/bin/cc1"), 160 * s);
	/* Capped at 16 x 20 s = 320 s. */
	watch_tracker_learned(t, "/bin/cc1", FALSE);
	watch_tracker_learned(t, "/bin/cc1", FALSE);
	ck_assert_int_eq(watch_tracker_interval(t, "/bin/cc1"), 320 * s);
	watch_tracker_learned(t, "/bin/cc1", FALSE);
	ck_assert_int_eq(watch_tracker_interval(t, "/bin/cc1"), 320 * s);
	ck_assert_int_eq(exec_at(t, 206, 439), WATCH_EXEC_COUNTED);
	ck_assert_int_eq(exec_at(t, 207, 440), WATCH_EXEC_WINDOW);
	/* Something new: back to 20 s. */
	watch_tracker_learned(t, "/bin/cc1", TRUE);
	ck_assert_int_eq(watch_tracker_interval(t, "/bin/cc1"), 20 * s);
	ck_assert_int_eq(exec_at(t, 208, 459), WATCH_EXEC_COUNTED);
	ck_assert_int_eq(exec_at(t, 209, 460), WATCH_EXEC_WINDOW);
	/* Backed off to 40 s, then not started for 80 s: forgotten, a window at once. */
	watch_tracker_learned(t, "/bin/cc1", FALSE);
	ck_assert_int_eq(exec_at(t, 210, 539), WATCH_EXEC_WINDOW);
	ck_assert_int_eq(watch_tracker_interval(t, "/bin/cc1"), 40 * s);
	{
		g_autoptr(GPtrArray) done = watch_tracker_expire(t, 620 * s, NULL, NULL);
	}
	ck_assert_int_eq(watch_tracker_interval(t, "/bin/cc1"), 0);
	ck_assert_int_eq(exec_at(t, 211, 621), WATCH_EXEC_WINDOW);
	ck_assert_int_eq(watch_tracker_interval(t, "/bin/cc1"), 20 * s);
	/* Stale but not expired (no timer runs for it): as forgotten. */
	watch_tracker_learned(t, "/bin/cc1", FALSE);
	ck_assert_int_eq(watch_tracker_interval(t, "/bin/cc1"), 40 * s);
	ck_assert_int_eq(watch_tracker_exec(t, 212, "/bin/cc1", 1, WATCH_IMAGE_ELF, FALSE, 701 * s),
			 WATCH_EXEC_WINDOW);
	ck_assert_int_eq(watch_tracker_interval(t, "/bin/cc1"), 20 * s);
	/* An exe the tracker does not rate is left alone. */
	watch_tracker_learned(t, "/bin/other", FALSE);
	ck_assert_int_eq(watch_tracker_interval(t, "/bin/other"), 0);
}
END_TEST

/*
 * The names of executed files: a hit needs the same device, inode, size,
 * mtime, ctime and mount, and a store younger than 60 s; a key without an
 * inode is never stored; a full cache drops its stale entries first, and
 * all of them when none is stale.
 */
START_TEST(test_exec_names)
{
	g_autoptr(WatchExecNames) names = watch_exec_names_new();
	const gint64 s = G_USEC_PER_SEC;
	WatchExecKey key = { .id = { .dev = 0xfe00, .ino = 77, .size = 4096, .mtime = 5 },
			     .ctime = 9, .mnt_id = 21 };
	WatchExecKey other;
	const WatchExecName *name;

	ck_assert_ptr_null(watch_exec_names_lookup(names, &key, 0));
	watch_exec_names_store(names, &key, "/usr/bin/cc1", WATCH_IMAGE_ELF, TRUE, 10 * s);
	name = watch_exec_names_lookup(names, &key, 10 * s);
	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name->raw, "/usr/bin/cc1");
	ck_assert_int_eq(name->kind, WATCH_IMAGE_ELF);
	ck_assert(name->asks_interp);
	ck_assert_ptr_nonnull(watch_exec_names_lookup(names, &key, 70 * s - 1));
	ck_assert_ptr_null(watch_exec_names_lookup(names, &key, 70 * s));
	ck_assert_ptr_null(watch_exec_names_lookup(names, &key, 9 * s));   /* clock went back */
	/* Each field of the key tells another file. */
	other = key; other.ctime = 10;   /* renamed, chmod */
	ck_assert_ptr_null(watch_exec_names_lookup(names, &other, 11 * s));
	other = key; other.mnt_id = 22;  /* through another mount */
	ck_assert_ptr_null(watch_exec_names_lookup(names, &other, 11 * s));
	other = key; other.id.mtime = 6;
	ck_assert_ptr_null(watch_exec_names_lookup(names, &other, 11 * s));
	other = key; other.id.size = 4097;
	ck_assert_ptr_null(watch_exec_names_lookup(names, &other, 11 * s));
	other = key; other.id.dev = 0xfe01;
	ck_assert_ptr_null(watch_exec_names_lookup(names, &other, 11 * s));
	/* No inode: never stored, never found. */
	other = key; other.id.ino = 0;
	watch_exec_names_store(names, &other, "/x", WATCH_IMAGE_OTHER, FALSE, 11 * s);
	ck_assert_uint_eq(watch_exec_names_size(names), 1);
	ck_assert_ptr_null(watch_exec_names_lookup(names, &other, 11 * s));

	/* Fill it: the entry of 10 s is stale at 80 s and is the one dropped. */
	for (guint i = 1; i < WATCH_EXEC_NAMES_MAX; i++) {
		other = key;
		other.id.ino = 1000 + i;
		watch_exec_names_store(names, &other, "/y", WATCH_IMAGE_ELF, FALSE, 75 * s);
	}
	ck_assert_uint_eq(watch_exec_names_size(names), WATCH_EXEC_NAMES_MAX);
	other = key; other.id.ino = 5000;
	watch_exec_names_store(names, &other, "/z", WATCH_IMAGE_ELF, FALSE, 80 * s);
	ck_assert_uint_eq(watch_exec_names_size(names), WATCH_EXEC_NAMES_MAX);
	ck_assert_ptr_nonnull(watch_exec_names_lookup(names, &other, 80 * s));
	/* Full of fresh entries: all dropped, the new one kept. */
	other.id.ino = 5001;
	watch_exec_names_store(names, &other, "/w", WATCH_IMAGE_SCRIPT, FALSE, 81 * s);
	ck_assert_uint_eq(watch_exec_names_size(names), 1);
	name = watch_exec_names_lookup(names, &other, 81 * s);
	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name->raw, "/w");
	ck_assert_int_eq(name->kind, WATCH_IMAGE_SCRIPT);
	ck_assert(!name->asks_interp);
}
END_TEST

/*
 * The names of files opened by handle: a hit needs the same file system,
 * handle type, length and bytes, and a store younger than 60 s; a handle
 * longer than 128 bytes makes no key; a full cache drops its stale
 * entries first, and all of them when none is stale.
 */
START_TEST(test_handle_names)
{
	g_autoptr(WatchHandleNames) names = watch_handle_names_new();
	const gint64 s = G_USEC_PER_SEC;
	const guint32 fsid[2] = { 0x1234, 0x5678 }, fsid2[2] = { 0x1234, 0x5679 };
	const guint8 h[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, h2[8] = { 1, 2, 3, 4, 5, 6, 7, 9 };
	guint8 longest[WATCH_HANDLE_MAX + 1] = { 0 };
	const MapFileId id = { .dev = 0xfe00, .ino = 77, .size = 4096, .mtime = 5 };
	WatchHandleKey key, other;
	const WatchHandleName *name;

	ck_assert(watch_handle_key(&key, fsid, 1, h, 8));
	ck_assert_ptr_null(watch_handle_names_lookup(names, &key, 0));
	watch_handle_names_store(names, &key, "/usr/lib/python3/os.py", &id, 10 * s);
	/* A key made again from the same fields finds it. */
	ck_assert(watch_handle_key(&other, fsid, 1, h, 8));
	name = watch_handle_names_lookup(names, &other, 10 * s);
	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name->path, "/usr/lib/python3/os.py");
	ck_assert_uint_eq(name->id.ino, 77);
	ck_assert_uint_eq(name->id.size, 4096);
	ck_assert_ptr_nonnull(watch_handle_names_lookup(names, &key, 70 * s - 1));
	ck_assert_ptr_null(watch_handle_names_lookup(names, &key, 70 * s));
	ck_assert_ptr_null(watch_handle_names_lookup(names, &key, 9 * s));   /* clock went back */
	/* Each field tells another file. */
	ck_assert(watch_handle_key(&other, fsid2, 1, h, 8));
	ck_assert_ptr_null(watch_handle_names_lookup(names, &other, 11 * s));
	ck_assert(watch_handle_key(&other, fsid, 2, h, 8));
	ck_assert_ptr_null(watch_handle_names_lookup(names, &other, 11 * s));
	ck_assert(watch_handle_key(&other, fsid, 1, h2, 8));
	ck_assert_ptr_null(watch_handle_names_lookup(names, &other, 11 * s));
	ck_assert(watch_handle_key(&other, fsid, 1, h, 7));
	ck_assert_ptr_null(watch_handle_names_lookup(names, &other, 11 * s));
	/* Too long a handle: no key. */
	ck_assert(!watch_handle_key(&other, fsid, 1, longest, WATCH_HANDLE_MAX + 1));
	ck_assert(watch_handle_key(&other, fsid, 1, longest, WATCH_HANDLE_MAX));

	/* Fill it: the entry of 10 s is stale at 80 s and is the one dropped. */
	for (guint i = 1; i < WATCH_HANDLE_NAMES_MAX; i++) {
		guint8 b[4] = { (guint8)i, (guint8)(i >> 8), 0xaa, 0xbb };

		ck_assert(watch_handle_key(&other, fsid, 1, b, 4));
		watch_handle_names_store(names, &other, "/y", &id, 75 * s);
	}
	ck_assert_uint_eq(watch_handle_names_size(names), WATCH_HANDLE_NAMES_MAX);
	ck_assert(watch_handle_key(&other, fsid, 3, h, 8));
	watch_handle_names_store(names, &other, "/z", &id, 80 * s);
	ck_assert_uint_eq(watch_handle_names_size(names), WATCH_HANDLE_NAMES_MAX);
	ck_assert_ptr_nonnull(watch_handle_names_lookup(names, &other, 80 * s));
	ck_assert_ptr_null(watch_handle_names_lookup(names, &key, 80 * s));
	/* Full of fresh entries: all dropped, the new one kept. */
	ck_assert(watch_handle_key(&other, fsid, 4, h, 8));
	watch_handle_names_store(names, &other, "/w", &id, 81 * s);
	ck_assert_uint_eq(watch_handle_names_size(names), 1);
	name = watch_handle_names_lookup(names, &other, 81 * s);
	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name->path, "/w");
}
END_TEST

/* ---- mounts and file system classes ---- */

/* Four lines as proc(5) prints them: optional fields, an escaped space, FUSE, NFS. */
static const char mountinfo_text[] =
	"22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
	"40 22 0:35 / /tmp rw,nosuid shared:20 master:3 - tmpfs tmpfs rw\n"
	"41 40 0:50 / /tmp/my\\040mnt rw - fuse.hangfs hangfs rw,user_id=0\n"
	"garbage line\n"
	"42 41 0:51 /sub /tmp/my\\040mnt/deep rw - tmpfs t rw\n"
	"43 22 0:52 / /srv/nfs rw - nfs4 host:/x rw\n"
	"44 22 0:36 / /proc rw - proc proc rw\n";

/* The lines of text that proc's parser takes, as ProcMount; the others are left out. */
static GArray *
parse_mounts(const char *text)
{
	GArray *mounts = g_array_new(FALSE, FALSE, sizeof(ProcMount));
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

	g_array_set_clear_func(mounts, proc_mount_clear);
	for (guint i = 0; lines[i]; i++) {
		ProcMount m = { 0 };

		if (proc_parse_mountinfo_line(lines[i], &m, NULL))
			g_array_append_val(mounts, m);
	}
	return mounts;
}

START_TEST(test_mounts_parse)
{
	g_autoptr(GArray) m = parse_mounts(mountinfo_text);
	const ProcMount *x;

	ck_assert_uint_eq(m->len, 6);
	x = &g_array_index(m, ProcMount, 0);
	ck_assert_int_eq(x->id, 22);
	ck_assert_int_eq(x->parent, 1);
	ck_assert_uint_eq(x->dev_major, 254);
	ck_assert_str_eq(x->mountpoint, "/");
	ck_assert_str_eq(x->fstype, "ext4");
	x = &g_array_index(m, ProcMount, 1);
	ck_assert_str_eq(x->fstype, "tmpfs");  /* after two optional fields */
	x = &g_array_index(m, ProcMount, 2);
	ck_assert_str_eq(x->mountpoint, "/tmp/my mnt");
	ck_assert_str_eq(x->fstype, "fuse.hangfs");
	ck_assert_uint_eq(x->dev_major, 0);
	ck_assert_uint_eq(x->dev_minor, 50);

	/* Longest mount point wins; a name that only starts like one does not. */
	ck_assert_int_eq(watch_mounts_find(m, "/tmp/my mnt/lib/ld.so")->id, 41);
	ck_assert_int_eq(watch_mounts_find(m, "/tmp/my mnt/deep/f")->id, 42);
	ck_assert_int_eq(watch_mounts_find(m, "/tmp/my mntx")->id, 40);
	ck_assert_int_eq(watch_mounts_find(m, "/usr/bin/ls")->id, 22);
	ck_assert_int_eq(watch_mounts_find(m, "/tmp")->id, 40);

	/* A local file system mounted under a FUSE one is reached through it. */
	ck_assert(watch_mounts_under_remote(m, watch_mounts_find(m, "/tmp/my mnt/deep/f")));
	ck_assert(watch_mounts_under_remote(m, watch_mounts_find(m, "/srv/nfs/a")));
	ck_assert(!watch_mounts_under_remote(m, watch_mounts_find(m, "/tmp/a")));
	ck_assert(!watch_mounts_under_remote(m, watch_mounts_find(m, "/proc/1")));
}
END_TEST

START_TEST(test_mounts_hostile)
{
	/* A cycle of parents ends; a truncated escape stays as it is. */
	g_autoptr(GArray) m = parse_mounts(
		"1 2 0:1 / /a rw - ext4 x rw\n"
		"2 1 0:2 / /a/b\\04 rw - ext4 y rw\n"
		"3 1 0:3 / /c rw -\n"
		"x 1 0:3 / /d rw - ext4 z rw\n");

	ck_assert_uint_eq(m->len, 2);
	ck_assert_str_eq(g_array_index(m, ProcMount, 1).mountpoint, "/a/b\\04");
	ck_assert(!watch_mounts_under_remote(m, &g_array_index(m, ProcMount, 1)));
	g_clear_pointer(&m, g_array_unref);
	m = parse_mounts("");
	ck_assert_uint_eq(m->len, 0);
	ck_assert_ptr_null(watch_mounts_find(m, "/"));
}
END_TEST

START_TEST(test_fs_classes)
{
	static const char *const remote[] = {
		"nfs", "nfs4", "cifs", "smb3", "9p", "ceph", "fuse", "fuseblk",
		"fuse.sshfs", "fuse.squashfuse", "virtiofs", "afs",
	};
	static const char *const local[] = {
		"ext4", "xfs", "btrfs", "tmpfs", "overlay", "squashfs", "vfat", "fusectl",
		"nfsd", "fuse2",
	};

	for (gsize i = 0; i < G_N_ELEMENTS(remote); i++)
		ck_assert_msg(watch_fs_is_remote(remote[i]), "%s", remote[i]);
	for (gsize i = 0; i < G_N_ELEMENTS(local); i++)
		ck_assert_msg(!watch_fs_is_remote(local[i]), "%s", local[i]);
	ck_assert(watch_fs_is_pseudo("proc"));
	ck_assert(watch_fs_is_pseudo("autofs"));
	ck_assert(!watch_fs_is_pseudo("tmpfs"));
	ck_assert(watch_fs_magic_is_remote(0x6969));      /* NFS */
	ck_assert(watch_fs_magic_is_remote(0x65735546));  /* FUSE */
	ck_assert(watch_fs_magic_is_remote(0xff534d42));  /* CIFS */
	ck_assert(!watch_fs_magic_is_remote(0xef53));     /* ext4 */
	ck_assert(!watch_fs_magic_is_remote(0x01021994)); /* tmpfs */
}
END_TEST

/* A buffer of 24-byte events whose fd fields are fds[] (at byte 16). */
static void
fill_events(guint8 *buf, const int *fds, guint n)
{
	memset(buf, 0, (gsize)n * 24);
	for (guint i = 0; i < n; i++) {
		gint32 fd = fds[i];
		guint32 len = 24;

		memcpy(buf + i * 24, &len, 4);
		buf[i * 24 + 4] = 99;  /* a version nobody knows */
		memcpy(buf + i * 24 + 16, &fd, 4);
	}
}

START_TEST(test_close_event_fds)
{
	guint8 buf[6 * 24];
	int fds[6], keep;

	/*
	 * Two event-like descriptors (read-only, non-blocking), one the
	 * group to keep, one read-write, one -1 and one never opened.
	 */
	fds[0] = open("/dev/null", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	fds[1] = open("/dev/null", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	keep = fds[2] = open("/dev/null", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	fds[3] = open("/dev/null", O_RDWR | O_CLOEXEC);
	fds[4] = -1;
	fds[5] = 100000;
	ck_assert(fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0 && fds[3] >= 0);
	fill_events(buf, fds, 6);

	/* From the second event on: fds[0] is not the buffer's rest. */
	ck_assert_uint_eq(watch_close_event_fds(buf, sizeof(buf), 24, keep), 1);
	ck_assert_int_ge(fcntl(fds[0], F_GETFD), 0);
	ck_assert_int_eq(fcntl(fds[1], F_GETFD), -1);
	ck_assert_int_ge(fcntl(fds[2], F_GETFD), 0);
	ck_assert_int_ge(fcntl(fds[3], F_GETFD), 0);
	/* A tail shorter than an event holds no descriptor. */
	ck_assert_uint_eq(watch_close_event_fds(buf, 24 + 23, 0, keep), 1);
	ck_assert_int_eq(fcntl(fds[0], F_GETFD), -1);
	(void)close(fds[2]);
	(void)close(fds[3]);
}
END_TEST

/* Writes an event's metadata (fanotify_event_metadata) at buf + at. */
static void
put_event(guint8 *buf, gsize at, guint32 event_len, guint8 vers, guint64 mask, gint32 fd,
	  gint32 pid)
{
	guint16 meta_len = 24;

	memset(buf + at, 0, 24);
	memcpy(buf + at, &event_len, 4);
	buf[at + 4] = vers;
	memcpy(buf + at + 6, &meta_len, 2);
	memcpy(buf + at + 8, &mask, 8);
	memcpy(buf + at + 16, &fd, 4);
	memcpy(buf + at + 20, &pid, 4);
}

/* Writes a FID info record of rec_len bytes: fsid, then a file_handle of handle_bytes. */
static void
put_fid(guint8 *buf, gsize at, guint16 rec_len, guint32 fsid0, guint32 fsid1,
	guint32 handle_bytes, gint32 handle_type)
{
	buf[at] = 1;  /* FAN_EVENT_INFO_TYPE_FID */
	buf[at + 1] = 0;
	memcpy(buf + at + 2, &rec_len, 2);
	memcpy(buf + at + 4, &fsid0, 4);
	memcpy(buf + at + 8, &fsid1, 4);
	memcpy(buf + at + 12, &handle_bytes, 4);
	memcpy(buf + at + 16, &handle_type, 4);
}

/*
 * A file-handle group's buffer, built by hand: an open whose FID record
 * follows a record of an unknown type, an overflow, an open whose record
 * runs past its event, one whose handle is longer than its record, and an
 * event of another version, which stops the parse.
 */
START_TEST(test_parse_fid_events)
{
	guint8 buf[256] = { 0 };
	g_autoptr(GArray) events = g_array_new(FALSE, FALSE, sizeof(WatchFidEvent));
	WatchFidParse parse;
	const WatchFidEvent *ev;
	guint16 rec_len;

	/* 0: 24 + an unknown record of 8 + a FID record of 20 + 8 handle bytes = 60. */
	put_event(buf, 0, 60, 3, 0x20 /* FAN_OPEN */, -1, 100);
	buf[24] = 9;
	rec_len = 8;
	memcpy(buf + 26, &rec_len, 2);
	put_fid(buf, 32, 28, 0x6d7e6a58, 0x423b417f, 8, 1);
	for (int i = 0; i < 8; i++)
		buf[52 + i] = (guint8)(0xa0 + i);
	/* 60: an overflow, no record. */
	put_event(buf, 60, 24, 3, 0x4000 /* FAN_Q_OVERFLOW */, -1, 0);
	/* 84: a record that claims 40 bytes of the 20 its event has left. */
	put_event(buf, 84, 44, 3, 0x20, -1, 200);
	put_fid(buf, 108, 40, 1, 2, 8, 1);
	/* 128: a handle of 12 bytes in a record with room for 8. */
	put_event(buf, 128, 52, 3, 0x20, -1, 300);
	put_fid(buf, 152, 28, 3, 4, 12, 1);
	/* 180: version 2. */
	put_event(buf, 180, 24, 2, 0x20, -1, 400);

	ck_assert_uint_eq(watch_parse_fid_events(buf, 204, events, &parse), 4);
	ck_assert_uint_eq(events->len, 4);
	ck_assert_uint_eq(parse.unknown_records, 1);
	ck_assert_uint_eq(parse.bad_records, 2);
	ck_assert(parse.malformed);
	ck_assert_uint_eq(parse.stopped_at, 180);

	ev = &g_array_index(events, WatchFidEvent, 0);
	ck_assert_uint_eq(ev->mask, 0x20);
	ck_assert_int_eq(ev->pid, 100);
	ck_assert_int_eq(ev->fd, -1);
	ck_assert(ev->has_fid);
	ck_assert_uint_eq(ev->fsid[0], 0x6d7e6a58);
	ck_assert_uint_eq(ev->fsid[1], 0x423b417f);
	ck_assert_int_eq(ev->handle_type, 1);
	ck_assert_uint_eq(ev->handle_bytes, 8);
	ck_assert_uint_eq(ev->handle_at, 52);
	ck_assert_uint_eq(buf[ev->handle_at + 7], 0xa7);

	ev = &g_array_index(events, WatchFidEvent, 1);
	ck_assert_uint_eq(ev->mask, 0x4000);
	ck_assert(!ev->has_fid);
	ev = &g_array_index(events, WatchFidEvent, 2);
	ck_assert_int_eq(ev->pid, 200);
	ck_assert(!ev->has_fid);
	ev = &g_array_index(events, WatchFidEvent, 3);
	ck_assert_int_eq(ev->pid, 300);
	ck_assert(!ev->has_fid);

	/* The first two events alone: all sound. */
	g_array_set_size(events, 0);
	ck_assert_uint_eq(watch_parse_fid_events(buf, 84, events, &parse), 2);
	ck_assert(!parse.malformed);
	ck_assert_uint_eq(parse.stopped_at, 84);
	ck_assert_uint_eq(parse.unknown_records, 1);
	ck_assert_uint_eq(parse.bad_records, 0);
	/* A buffer cut inside the second event's metadata: one event, then stopped. */
	g_array_set_size(events, 0);
	ck_assert_uint_eq(watch_parse_fid_events(buf, 70, events, &parse), 1);
	ck_assert(parse.malformed);
	ck_assert_uint_eq(parse.stopped_at, 60);
	/* An event_len beyond the buffer stops the parse before it. */
	g_array_set_size(events, 0);
	ck_assert_uint_eq(watch_parse_fid_events(buf, 59, events, &parse), 0);
	ck_assert(parse.malformed);
	ck_assert_uint_eq(parse.stopped_at, 0);
}
END_TEST

START_TEST(test_events_per_read)
{
	/* The default limit, 10 open: 1024 - 10 - 64 reserved. */
	ck_assert_uint_eq(watch_events_per_read(1024, 10, 2730), 950);
	/* A high limit: the buffer's 2730 events. */
	ck_assert_uint_eq(watch_events_per_read(65536, 10, 2730), 2730);
	/* 129 free: 129 - 64; 128 free: half, 64; 3 free: 1; 1 free: none. */
	ck_assert_uint_eq(watch_events_per_read(1024, 1024 - 129, 2730), 65);
	ck_assert_uint_eq(watch_events_per_read(1024, 1024 - 128, 2730), 64);
	ck_assert_uint_eq(watch_events_per_read(1024, 1021, 2730), 1);
	ck_assert_uint_eq(watch_events_per_read(1024, 1023, 2730), 0);
	/* More open than the limit (it was lowered): none. */
	ck_assert_uint_eq(watch_events_per_read(256, 300, 2730), 0);
}
END_TEST

/* ---- ELF images ---- */

static void
put(guint8 *buf, gsize at, guint64 v, guint size, gboolean be)
{
	for (guint i = 0; i < size; i++)
		buf[at + i] = (guint8)(v >> (be ? 8 * (size - 1 - i) : 8 * i));
}

/*
 * A minimal ELF header: 64-bit puts 2 program headers at 64 (the second
 * PT_INTERP at file offset 0x200, 28 bytes with its NUL); 32-bit puts
 * them at 52 with PT_INTERP at 0x100.
 */
static gsize
make_elf(guint8 *buf, gsize size, gboolean is64, gboolean be, const char *interp)
{
	gsize phoff = is64 ? 64 : 52, phent = is64 ? 56 : 32;
	gsize interp_at = is64 ? 0x200 : 0x100;

	memset(buf, 0, size);
	memcpy(buf, "\177ELF", 4);
	buf[4] = is64 ? 2 : 1;
	buf[5] = be ? 2 : 1;
	put(buf, is64 ? 32 : 28, phoff, is64 ? 8 : 4, be);
	put(buf, is64 ? 54 : 42, phent, 2, be);
	put(buf, is64 ? 56 : 44, 2, 2, be);
	/* Header 0: PT_LOAD (1). Header 1: PT_INTERP (3). */
	put(buf, phoff, 1, 4, be);
	put(buf, phoff + phent, 3, 4, be);
	put(buf, phoff + phent + (is64 ? 8 : 4), interp_at, is64 ? 8 : 4, be);
	put(buf, phoff + phent + (is64 ? 32 : 16), strlen(interp) + 1, is64 ? 8 : 4, be);
	memcpy(buf + interp_at, interp, strlen(interp) + 1);
	return interp_at + strlen(interp) + 1;
}

START_TEST(test_parse_image)
{
	guint8 buf[1024];
	guint64 off, len;
	gsize n;

	/* 64-bit little-endian: "/lib64/ld-linux-x86-64.so.2" is 27 bytes. */
	n = make_elf(buf, sizeof(buf), TRUE, FALSE, "/lib64/ld-linux-x86-64.so.2");
	ck_assert_int_eq(watch_parse_image(buf, n, &off, &len), WATCH_IMAGE_ELF);
	ck_assert_uint_eq(off, 0x200);
	ck_assert_uint_eq(len, 27);

	/* 32-bit big-endian: "/lib/ld.so.1" is 12 bytes at 0x100. */
	n = make_elf(buf, sizeof(buf), FALSE, TRUE, "/lib/ld.so.1");
	ck_assert_int_eq(watch_parse_image(buf, n, &off, &len), WATCH_IMAGE_ELF);
	ck_assert_uint_eq(off, 0x100);
	ck_assert_uint_eq(len, 12);

	/* Program headers cut off by the buffer: ELF, interpreter unknown. */
	make_elf(buf, sizeof(buf), TRUE, FALSE, "/x");
	ck_assert_int_eq(watch_parse_image(buf, 64 + 56 + 10, &off, &len), WATCH_IMAGE_ELF);
	ck_assert_uint_eq(len, 0);

	/* No program headers at all (a relocatable object): ELF without one. */
	make_elf(buf, sizeof(buf), TRUE, FALSE, "/x");
	put(buf, 56, 0, 2, FALSE);
	ck_assert_int_eq(watch_parse_image(buf, sizeof(buf), &off, &len), WATCH_IMAGE_ELF);
	ck_assert_uint_eq(len, 0);

	/* Hostile: program header entries smaller than the format's. */
	make_elf(buf, sizeof(buf), TRUE, FALSE, "/x");
	put(buf, 54, 8, 2, FALSE);
	ck_assert_int_eq(watch_parse_image(buf, sizeof(buf), &off, &len), WATCH_IMAGE_OTHER);

	/* Hostile: a program header offset near 2^64 must not wrap. */
	make_elf(buf, sizeof(buf), TRUE, FALSE, "/x");
	put(buf, 32, G_MAXUINT64 - 10, 8, FALSE);
	ck_assert_int_eq(watch_parse_image(buf, sizeof(buf), &off, &len), WATCH_IMAGE_ELF);
	ck_assert_uint_eq(len, 0);

	/* Hostile: a PT_INTERP of absurd size is no interpreter. */
	make_elf(buf, sizeof(buf), TRUE, FALSE, "/x");
	put(buf, 64 + 56 + 32, (guint64)1 << 40, 8, FALSE);
	ck_assert_int_eq(watch_parse_image(buf, sizeof(buf), &off, &len), WATCH_IMAGE_ELF);
	ck_assert_uint_eq(len, 0);

	/* Bad class, short header, scripts, garbage, nothing. */
	make_elf(buf, sizeof(buf), TRUE, FALSE, "/x");
	buf[4] = 3;
	ck_assert_int_eq(watch_parse_image(buf, sizeof(buf), &off, &len), WATCH_IMAGE_OTHER);
	make_elf(buf, sizeof(buf), TRUE, FALSE, "/x");
	ck_assert_int_eq(watch_parse_image(buf, 40, &off, &len), WATCH_IMAGE_OTHER);
	ck_assert_int_eq(watch_parse_image((const guint8 *)"#!/bin/sh\n", 10, &off, &len),
			 WATCH_IMAGE_SCRIPT);
	ck_assert_int_eq(watch_parse_image((const guint8 *)"#", 1, &off, &len), WATCH_IMAGE_OTHER);
	ck_assert_int_eq(watch_parse_image((const guint8 *)"MZ\x90\x00", 4, &off, &len),
			 WATCH_IMAGE_OTHER);
	ck_assert_int_eq(watch_parse_image(buf, 0, &off, &len), WATCH_IMAGE_OTHER);
}
END_TEST

/* The real /bin/sh of this machine names an absolute interpreter inside its first 4 KiB. */
START_TEST(test_parse_real_image)
{
	g_autofree char *contents = NULL;
	gsize size;
	guint64 off, len;

	ck_assert(g_file_get_contents("/bin/sh", &contents, &size, NULL));
	ck_assert_uint_ge(size, 4096);
	ck_assert_int_eq(watch_parse_image((const guint8 *)contents, 4096, &off, &len),
			 WATCH_IMAGE_ELF);
	/* Debian's /bin/sh (dash) is dynamically linked, so it names one. */
	ck_assert_msg(len > 0, "/bin/sh names no interpreter: a static shell?");
	ck_assert(off + len < size);
	ck_assert_int_eq(contents[off], '/');
	ck_assert_uint_eq(strlen(contents + off), len);
}
END_TEST

/* ---- resident ranges ---- */

typedef struct {
	const char *name;
	const char *vec;      /* '1' resident, '0' not, 'x' a byte with only other bits set */
	guint64 file_size;
	gsize gap;
	guint max_spans;
	const char *spans;    /* "offset+length ..." */
	guint64 bytes;
} SpanCase;

#define P 4096
static const SpanCase span_cases[] = {
	/* Runs [0,2) [4,7) [12,13): the 2-page gap is bridged, the 5-page one not;
	 * the last span ends at the file's end: 13 * 4096 - 100 = 53148. */
	{ "bridge small gaps", "1100111000001", 13 * P - 100, 2, 32,
	  "0+28672 49152+3996", 28672 + 3996 },
	{ "no bridging", "1100111000001", 13 * P, 0, 32,
	  "0+8192 16384+12288 49152+4096", 8192 + 12288 + 4096 },
	/* max 1: gap 0 -> 1 (3 runs) -> 2 (2 runs) -> 4 (2) -> 8 (1): [0, 13 pages). */
	{ "too many spans widen the gap", "1100111000001", 13 * P, 0, 1,
	  "0+53248", 53248 },
	{ "max 2 stops at gap 2", "1100111000001", 13 * P, 0, 2,
	  "0+28672 49152+4096", 28672 + 4096 },
	{ "nothing resident", "0000", 4 * P, 16, 32, "", 0 },
	{ "only bit 0 counts", "x1x", 3 * P, 0, 32, "4096+4096", 4096 },
	{ "all resident", "1111", 4 * P - 1, 0, 32, "0+16383", 16383 },
	{ "a file that shrank below the vector", "0011", 2 * P + 10, 0, 32, "8192+10", 10 },
	{ "a file that shrank away", "0011", 2 * P, 0, 32, "", 0 },
	{ "unlimited spans", "10101", 5 * P, 0, 0, "0+4096 8192+4096 16384+4096", 3 * P },
};

START_TEST(test_spans)
{
	const SpanCase *c = &span_cases[_i];
	gsize n = strlen(c->vec);
	g_autofree guint8 *vec = g_malloc(n + 1);
	g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(WatchSpan));
	g_autoptr(GString) text = g_string_new(NULL);
	guint64 bytes;

	for (gsize i = 0; i < n; i++)
		vec[i] = c->vec[i] == '1' ? 1 : c->vec[i] == 'x' ? 0xfe : 0;
	bytes = watch_spans_from_mincore(vec, n, P, c->file_size, c->gap, c->max_spans, spans);
	for (guint i = 0; i < spans->len; i++) {
		const WatchSpan *s = &g_array_index(spans, WatchSpan, i);

		g_string_append_printf(text, "%s%" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT,
				       i ? " " : "", s->offset, s->length);
	}
	ck_assert_msg(strcmp(text->str, c->spans) == 0, "%s: spans \"%s\", want \"%s\"",
		      c->name, text->str, c->spans);
	ck_assert_msg(bytes == c->bytes, "%s: %" G_GUINT64_FORMAT " bytes, want %" G_GUINT64_FORMAT,
		      c->name, bytes, c->bytes);
}
END_TEST

START_TEST(test_spans_empty)
{
	g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(WatchSpan));

	ck_assert_uint_eq(watch_spans_from_mincore(NULL, 0, P, 0, 0, 1, spans), 0);
	ck_assert_uint_eq(spans->len, 0);
}
END_TEST

/* ---- hit arithmetic ---- */

START_TEST(test_hits)
{
	ExeHits h = { 0 };

	ck_assert(exe_hits_resident_ratio(&h) == 0.0);
	ck_assert(exe_hits_prefetched_ratio(&h) == 0.0);

	exe_hits_add(&h, 1000, 400, 1000, 900);
	exe_hits_add(&h, 500, 500, 0, 0);        /* not probed (a scan's count) */
	exe_hits_add(&h, 300, 0, 100, 60);       /* 200 bytes could not be probed */
	/* Parts above their whole are clamped: prefetched 300 -> 200,
	 * probed 250 -> 200, then resident 260 -> 200. */
	exe_hits_add(&h, 200, 300, 250, 260);
	ck_assert_uint_eq(h.starts, 0);          /* counted by the caller */
	ck_assert_uint_eq(h.checks, 4);
	ck_assert_uint_eq(h.bytes, 2000);        /* 1000 + 500 + 300 + 200 */
	ck_assert_uint_eq(h.prefetched, 1100);   /* 400 + 500 + 0 + 200 */
	ck_assert_uint_eq(h.probed, 1300);       /* 1000 + 0 + 100 + 200 */
	ck_assert_uint_eq(h.resident, 1160);     /* 900 + 0 + 60 + 200 */
	ck_assert_double_eq_tol(exe_hits_resident_ratio(&h), 1160.0 / 1300.0, 1e-12);
	ck_assert_double_eq_tol(exe_hits_prefetched_ratio(&h), 1100.0 / 2000.0, 1e-12);

	/* Counters saturate instead of wrapping. */
	h.bytes = G_MAXUINT64 - 5;
	h.probed = G_MAXUINT64 - 5;
	exe_hits_add(&h, 100, 0, 100, 0);
	ck_assert_uint_eq(h.bytes, G_MAXUINT64);
	ck_assert_uint_eq(h.probed, G_MAXUINT64);
	ck_assert_uint_eq(h.checks, 5);
}
END_TEST

/* ---- residency of a real file ---- */

static char *tmpdir;

static void
setup_tmp(void)
{
	tmpdir = tu_make_tempdir();
}

static void
teardown_tmp(void)
{
	tu_rm_rf(tmpdir);
	g_clear_pointer(&tmpdir, g_free);
}

/*
 * A 16-page file with only pages 0, 1 and 8 resident. The cases that use it
 * run only where tu_why_no_eviction() found that $TMPDIR can evict (tmpfs
 * holds its files in the page cache).
 */
static char *
make_sparse_resident_file(void)
{
	char *path = g_build_filename(tmpdir, "data", NULL);
	g_autofree char *contents = g_malloc0(16 * P + 1);
	char page[P];
	guint64 resident = 1;
	struct stat st;
	int fd;

	memset(contents, 'd', 16 * P);
	tu_write_file(path, contents);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fdatasync(fd), 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert(pagecache_resident_bytes(NULL, fd, path, &st, 0, 16 * P, &resident));
	/* tu_why_no_eviction() let this case run: the file must be out of the cache. */
	ck_assert_uint_eq(resident, 0);
	/* No readahead: exactly the pages read become resident. */
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
	ck_assert_int_eq(pread(fd, page, P, 0), P);
	ck_assert_int_eq(pread(fd, page, P, P), P);
	ck_assert_int_eq(pread(fd, page, P, 8 * P), P);
	close(fd);
	return path;
}

START_TEST(test_measure_exe)
{
	g_autofree char *path = make_sparse_resident_file();
	g_autofree char *missing = g_build_filename(tmpdir, "missing", NULL);
	g_autoptr(Model) model = model_new();
	Exe *exe = exe_new("/bin/app", FALSE, 0);
	Map *a, *b;
	WatchMeasure m;

	a = map_new(path, 0, 4 * P, 0);      /* pages 0-3: 0 and 1 resident */
	b = map_new(path, 8 * P, 2 * P, 0);  /* pages 8-9: 8 resident */
	exe_add_map(model, exe, a, 1.0);
	exe_add_map_origin(model, exe, b, 1.0, EXEMAP_READ);
	exe_add_map(model, exe, map_new(missing, 0, P, 0), 1.0);
	model_add_exe(model, exe, 0, FALSE);
	a->cycle.prefetch_seq = 7;
	b->cycle.prefetch_seq = 6;

	/*
	 * 4 + 2 + 1 pages in all; a was in prefetch 7; all probed (the
	 * missing file as not resident); 3 pages resident.
	 */
	m = watch_measure_exe(exe, 7, WATCH_PROBE_CACHE);
	ck_assert_uint_eq(m.bytes, 7 * P);
	ck_assert_uint_eq(m.prefetched, 4 * P);
	ck_assert_uint_eq(m.probed, 7 * P);
	ck_assert_uint_eq(m.resident, 3 * P);

	/* No probe; no prefetch yet (0) matches nothing. */
	m = watch_measure_exe(exe, 0, WATCH_PROBE_NONE);
	ck_assert_uint_eq(m.bytes, 7 * P);
	ck_assert_uint_eq(m.prefetched, 0);
	ck_assert_uint_eq(m.probed, 0);
	ck_assert_uint_eq(m.resident, 0);
}
END_TEST

/* Why test_parse_real_image cannot run here: no /bin/sh of 4 KiB to read. */
static const char *
shell_image_why_not(void)
{
	struct stat st;

	if (stat("/bin/sh", &st) != 0 || access("/bin/sh", R_OK) != 0)
		return "cannot read /bin/sh";
	return st.st_size < 4096 ? "/bin/sh is smaller than 4 KiB" : NULL;
}

static Suite *
watch_suite(void)
{
	Suite *s = suite_create("watch");
	const char *no_eviction = tu_why_no_eviction();
	TCase *tc;

	tc = tcase_create("tracker");
	tcase_add_loop_test(tc, test_tracker, 0, G_N_ELEMENTS(tracker_cases));
	tcase_add_test(tc, test_tracker_no_files);
	tcase_add_test(tc, test_tracker_bounds);
	tcase_add_test(tc, test_tracker_backoff);
	tcase_add_test(tc, test_exec_names);
	tcase_add_test(tc, test_handle_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("mounts");
	tcase_add_test(tc, test_mounts_parse);
	tcase_add_test(tc, test_mounts_hostile);
	tcase_add_test(tc, test_fs_classes);
	tcase_add_test(tc, test_close_event_fds);
	tcase_add_test(tc, test_parse_fid_events);
	tcase_add_test(tc, test_events_per_read);
	suite_add_tcase(s, tc);

	tc = tcase_create("image");
	tcase_add_test(tc, test_parse_image);
	TU_ADD_TEST_UNLESS(tc, test_parse_real_image, shell_image_why_not());
	suite_add_tcase(s, tc);

	tc = tcase_create("spans");
	tcase_add_loop_test(tc, test_spans, 0, G_N_ELEMENTS(span_cases));
	tcase_add_test(tc, test_spans_empty);
	suite_add_tcase(s, tc);

	tc = tcase_create("hits");
	tcase_add_test(tc, test_hits);
	suite_add_tcase(s, tc);

	tc = tcase_create("residency");
	tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
	TU_ADD_TEST_UNLESS(tc, test_measure_exe, no_eviction);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	return tu_run_suite(watch_suite());
}
