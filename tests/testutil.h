/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the Check suites. */
#pragma once

#include <check.h>
#include <glib.h>

/* A fresh directory under $TMPDIR; remove it with tu_rm_rf(). */
char *tu_make_tempdir(void);
/* Writes contents to path (creating parent directories); aborts on failure. */
void tu_write_file(const char *path, const char *contents);
/* Removes a tree. */
void tu_rm_rf(const char *path);
/* Runs the suite, prints Check's summary line, returns the exit status. */
int tu_run_suite(Suite *suite);
/* Whether we are root (tests that need it skip otherwise). */
gboolean tu_is_root(void);
