/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Log: where GLib's log messages go and which are shown.
 *
 * Verbosity 0-10 as in preload 0.6.4: a message is shown when its level
 * is at most G_LOG_LEVEL_ERROR << verbosity, so 1 adds criticals, 2
 * warnings, 3 messages, 4 (the default) info, 5 and up debug. Levels 9
 * and 10 also turn on per-executable and per-map detail (log_detail()).
 *
 * Messages go to a log file (reopened on SIGHUP for logrotate) or to
 * stderr. Lines carry a timestamp, except when stderr is the systemd
 * journal, which stamps them itself.
 */
#pragma once

#include <glib.h>

/* Installs the handler and sets the verbosity (clamped to 0..10). */
void log_init(int verbosity);
void log_set_verbosity(int verbosity);
int log_get_verbosity(void);

/* Whether messages at verbosity `level` (e.g. 9, 10) are wanted. */
gboolean log_detail(int level);

/*
 * Sends messages to `path` (created 0600, appended), or to stderr when
 * path is NULL or empty. Keeps the current destination on failure.
 */
gboolean log_set_file(const char *path, GError **error);
/* Reopens the current log file (after logrotate moved it). */
gboolean log_reopen(GError **error);
/* Closes the log file and returns to stderr. */
void log_close(void);
