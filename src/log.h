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
 *
 * A message that outside input can trigger again and again (a file that
 * fails to read every cycle, an unreadable /proc file) goes through a
 * LogLimit, so that the log cannot fill with it.
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

/*
 * A rate limit for one cause of messages: at most `burst` messages per
 * window of `interval` seconds; the rest are counted, and the first call
 * after the window ends (log_limit_allow() or log_limit_flush()) logs one
 * line "WHAT: suppressed K similar messages in the last N s" at `level`.
 * Embed one per call site in the object that logs (zeroed runtime fields
 * from LOG_LIMIT_INIT); any thread may use it (log.c locks).
 */
typedef struct LogLimit {
	const char *what;       /* names the cause in the "suppressed" line */
	GLogLevelFlags level;   /* the level of that line */
	guint burst;            /* messages shown per window */
	gint64 interval_us;     /* the window's length */
	/* runtime */
	gboolean open;          /* a window is open */
	gint64 window_start;    /* monotonic us of its start */
	guint shown;            /* messages shown in this window */
	guint suppressed;       /* messages dropped in this window */
} LogLimit;

#define LOG_LIMIT_INIT(what, level, burst, interval_s) \
	{ (what), (level), (burst), (gint64)(interval_s) * G_USEC_PER_SEC, FALSE, 0, 0, 0 }

/*
 * Whether one more message of this cause may be logged at `now`
 * (monotonic microseconds, g_get_monotonic_time() outside tests); counts
 * it either way. Logs the "suppressed" line of a window that has ended.
 */
gboolean log_limit_allow(LogLimit *limit, gint64 now);
/* Logs the "suppressed" line if the window has ended by `now`, and closes it. */
void log_limit_flush(LogLimit *limit, gint64 now);

/* g_log() through a LogLimit, with the current monotonic time. */
#define log_limited(limit, level, ...) \
	do { \
		if (log_limit_allow((limit), g_get_monotonic_time())) \
			g_log(G_LOG_DOMAIN, (level), __VA_ARGS__); \
	} while (0)
