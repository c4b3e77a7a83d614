/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the Check suites. */
#pragma once

#include <check.h>
#include <glib.h>

/* A fresh directory under $TMPDIR; remove it with tu_rm_rf(). */
char *tu_make_tempdir(void);
/* Writes contents to path (creating parent directories); aborts on failure. */
void tu_write_file(const char *path, const char *contents);
/*
 * Sets the pagemap entry of virtual page vpage of process pid in the fake
 * /proc at proc_root (creating the file, sparse); aborts on failure.
 */
void tu_set_pagemap(const char *proc_root, int pid, guint64 vpage, guint64 entry);
#define TU_PM_PRESENT (G_GUINT64_CONSTANT(1) << 63)   /* pagemap: page present */
#define TU_PM_SWAPPED (G_GUINT64_CONSTANT(1) << 62)   /* pagemap: swapped out */
/* Removes a tree. */
void tu_rm_rf(const char *path);
/* Runs the suite, prints Check's summary line, returns the exit status. */
int tu_run_suite(Suite *suite);
/* Whether we are root (tests that need it skip otherwise). */
gboolean tu_is_root(void);

/*
 * Skips are decided while the suite is built, never inside a running case:
 * a case that cannot run here is not added, so Check's summary counts only
 * the cases that ran and asserted. tu_can_run() returns TRUE when why_not is
 * NULL; otherwise it prints "SKIP: WHAT: WHY_NOT" to stdout (the suite's log)
 * and returns FALSE.
 */
gboolean tu_can_run(const char *what, const char *why_not);
#define TU_ADD_TEST_UNLESS(tc, tf, why_not) \
	do { if (tu_can_run(#tf, (why_not))) tcase_add_test((tc), tf); } while (0)
#define TU_ADD_LOOP_TEST_UNLESS(tc, tf, start, end, why_not) \
	do { if (tu_can_run(#tf, (why_not))) tcase_add_loop_test((tc), tf, (start), (end)); } while (0)
/*
 * Why a file under $TMPDIR (where tu_make_tempdir() puts it) keeps its pages
 * in the page cache after fdatasync() and POSIX_FADV_DONTNEED, as on tmpfs;
 * NULL when they are dropped, which the residency cases rely on.
 */
const char *tu_why_no_eviction(void);

/*
 * tests/helpers/hangfs, the FUSE file system that stops answering on
 * SIGUSR1: why it cannot run here (NULL if it can), and a mount of the
 * regular files of src at mnt (both existing directories) that lets hung
 * requests go after release_after seconds and unmounts itself within a
 * minute; aborts if it does not mount. tu_hangfs_stop() lets requests go,
 * unmounts and reaps it.
 */
const char *tu_why_no_hangfs(void);
GPid tu_hangfs_start(const char *src, const char *mnt, int release_after);
void tu_hangfs_stop(const char *mnt, GPid pid);
