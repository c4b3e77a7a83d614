/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Log: one GLib log handler for the whole daemon.
 *
 * Every g_warning(), g_message(), g_debug()... of preload and of the
 * libraries it uses ends up in log_handler(), which drops what the
 * verbosity does not want, formats one line and writes it to the log file
 * or to stderr with a single write(2). The readahead workers log from
 * their own threads, so the destination is guarded by a mutex and the
 * line is built before taking it: a message is never split or interleaved
 * with another, and a slow disk never holds the lock while formatting.
 *
 * When stderr is the systemd journal (JOURNAL_STREAM names the very file
 * stderr is), lines carry a "<N>" syslog priority prefix instead of a
 * timestamp: the journal stamps them itself and uses the priority for
 * filtering and colouring.
 *
 * Rate limits (LogLimit) keep a cause that outside input repeats from
 * filling the log. Their clock is the caller's, so tests drive it.
 */
#include "config.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_VERBOSITY_MAX 10
#define LOG_VERBOSITY_DEFAULT 4

/* Read by every thread without the lock: always through g_atomic_int_*. */
static gint log_verbosity = LOG_VERBOSITY_DEFAULT;

/* The destination; all three are guarded by log_lock. */
static GMutex log_lock;
static int log_fd = -1;             /* the log file, or -1 for stderr */
static char *log_path;              /* its path, for log_reopen() */
static gboolean log_to_journal;     /* stderr is the systemd journal */

/* Guards the runtime fields of every LogLimit; never held while logging. */
static GMutex limit_lock;

static int
clamp_verbosity(int verbosity)
{
	return CLAMP(verbosity, 0, LOG_VERBOSITY_MAX);
}

void
log_set_verbosity(int verbosity)
{
	g_atomic_int_set(&log_verbosity, clamp_verbosity(verbosity));
}

int
log_get_verbosity(void)
{
	return g_atomic_int_get(&log_verbosity);
}

gboolean
log_detail(int level)
{
	return log_get_verbosity() >= level;
}

/*
 * Whether stderr is the journal: systemd sets JOURNAL_STREAM to
 * "DEVICE:INODE" of the stream it connected, and the variable may have
 * been inherited by a process whose stderr is something else since.
 */
static gboolean
stderr_is_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char end;

	if (!env || sscanf(env, "%llu:%llu%c", &dev, &ino, &end) != 2)
		return FALSE;
	if (fstat(STDERR_FILENO, &st) < 0)
		return FALSE;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* The lowest level bit set: the message's level. */
static GLogLevelFlags
log_level_of(GLogLevelFlags flags)
{
	guint levels = flags & G_LOG_LEVEL_MASK;

	return levels ? (GLogLevelFlags)(levels & (~levels + 1)) : G_LOG_LEVEL_MESSAGE;
}

static gboolean
log_wanted(GLogLevelFlags flags)
{
	GLogLevelFlags level = log_level_of(flags);

	/* A fatal message is about to abort the daemon: always say why. */
	if (flags & G_LOG_FLAG_FATAL)
		return TRUE;
	return (guint)level <= ((guint)G_LOG_LEVEL_ERROR << log_get_verbosity());
}

/* The label and syslog priority of a level; message and info have no label. */
static const char *
log_level_label(GLogLevelFlags level, int *priority)
{
	switch (level) {
	case G_LOG_LEVEL_ERROR:    *priority = 3; return "error: ";
	case G_LOG_LEVEL_CRITICAL: *priority = 3; return "critical: ";
	case G_LOG_LEVEL_WARNING:  *priority = 4; return "warning: ";
	case G_LOG_LEVEL_MESSAGE:  *priority = 5; return "";
	case G_LOG_LEVEL_INFO:     *priority = 6; return "";
	case G_LOG_LEVEL_DEBUG:    *priority = 7; return "debug: ";
	default:                   *priority = 5; return "";
	}
}

/* Writes all of buf, retrying after signals and short writes. */
static void
log_write_all(int fd, const char *buf, gsize len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;   /* nowhere left to report it */
		buf += n;
		len -= (gsize)n;
	}
}

static void
log_handler(const gchar *domain, GLogLevelFlags flags, const gchar *message, gpointer data)
{
	g_autoptr(GString) line = NULL;
	const char *label;
	const char *text = message ? message : "(NULL message)";
	gsize text_len;
	gboolean journal;
	int priority;
	int fd;

	if (!log_wanted(flags))
		return;
	label = log_level_label(log_level_of(flags), &priority);

	/* A trailing newline would leave an empty line; one is added below. */
	text_len = strlen(text);
	if (text_len > 0 && text[text_len - 1] == '\n')
		text_len--;

	g_mutex_lock(&log_lock);
	journal = log_fd < 0 && log_to_journal;
	g_mutex_unlock(&log_lock);

	line = g_string_sized_new(text_len + 64);
	if (journal) {
		/* Each line of a multi-line message is its own journal entry. */
		g_string_append_printf(line, "<%d>", priority);
		for (gsize i = 0; i < text_len; i++) {
			g_string_append_c(line, text[i]);
			if (text[i] == '\n')
				g_string_append_printf(line, "<%d>", priority);
		}
	} else {
		char stamp[32] = "";
		time_t now = time(NULL);
		struct tm tm;

		if (localtime_r(&now, &tm))
			strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
		g_string_append_printf(line, "[%s] %s", stamp, label);
		/* Messages from GLib or other libraries say where they come from. */
		if (domain && strcmp(domain, G_LOG_DOMAIN) != 0)
			g_string_append_printf(line, "%s: ", domain);
		g_string_append_len(line, text, (gssize)text_len);
	}
	g_string_append_c(line, '\n');

	g_mutex_lock(&log_lock);
	fd = log_fd >= 0 ? log_fd : STDERR_FILENO;
	log_write_all(fd, line->str, line->len);
	g_mutex_unlock(&log_lock);
}

void
log_init(int verbosity)
{
	log_set_verbosity(verbosity);
	g_mutex_lock(&log_lock);
	log_to_journal = stderr_is_journal();
	g_mutex_unlock(&log_lock);
	g_log_set_default_handler(log_handler, NULL);
	/*
	 * A domain handler as well: GLib looks it up first, and with the
	 * fatal and recursion flags it also receives g_error() and messages
	 * logged from within a handler.
	 */
	g_log_set_handler(G_LOG_DOMAIN,
			  G_LOG_LEVEL_MASK | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION,
			  log_handler, NULL);
}

gboolean
log_set_file(const char *path, GError **error)
{
	int fd, old_fd;

	if (!path || !*path) {
		log_close();
		return TRUE;
	}

	/* 0600: the log names the files and programs a user runs. */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0) {
		int saved = errno;

		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
			    "cannot open %s: %s", path, g_strerror(saved));
		return FALSE;
	}

	g_mutex_lock(&log_lock);
	old_fd = log_fd;
	log_fd = fd;
	if (path != log_path) {
		g_free(log_path);
		log_path = g_strdup(path);
	}
	g_mutex_unlock(&log_lock);
	if (old_fd >= 0)
		close(old_fd);
	return TRUE;
}

gboolean
log_reopen(GError **error)
{
	g_autofree char *path = NULL;

	g_mutex_lock(&log_lock);
	path = g_strdup(log_path);
	g_mutex_unlock(&log_lock);
	/* On stderr there is nothing to reopen. */
	if (!path)
		return TRUE;
	return log_set_file(path, error);
}

void
log_close(void)
{
	int old_fd;

	g_mutex_lock(&log_lock);
	old_fd = log_fd;
	log_fd = -1;
	g_clear_pointer(&log_path, g_free);
	log_to_journal = stderr_is_journal();
	g_mutex_unlock(&log_lock);
	if (old_fd >= 0)
		close(old_fd);
}

/*
 * Ends the limit's window if it is over at `now` (or none was open) and
 * returns how many messages it suppressed. Called with limit_lock held.
 */
static guint
limit_roll(LogLimit *limit, gint64 now, gboolean open_new)
{
	guint suppressed = 0;

	if (!limit->open || now - limit->window_start >= limit->interval_us) {
		suppressed = limit->suppressed;
		limit->shown = 0;
		limit->suppressed = 0;
		limit->open = open_new;
		limit->window_start = now;
	}
	return suppressed;
}

static void
limit_report(const LogLimit *limit, guint suppressed)
{
	if (suppressed == 0)
		return;
	g_log(G_LOG_DOMAIN, limit->level,
	      "%s: suppressed %u similar message%s in the last %" G_GINT64_FORMAT " s",
	      limit->what, suppressed, suppressed == 1 ? "" : "s",
	      limit->interval_us / G_USEC_PER_SEC);
}

gboolean
log_limit_allow(LogLimit *limit, gint64 now)
{
	gboolean allow;
	guint suppressed;

	g_return_val_if_fail(limit != NULL, TRUE);

	g_mutex_lock(&limit_lock);
	suppressed = limit_roll(limit, now, TRUE);
	allow = limit->shown < limit->burst;
	if (allow)
		limit->shown++;
	else
		limit->suppressed++;
	g_mutex_unlock(&limit_lock);
	limit_report(limit, suppressed);
	return allow;
}

void
log_limit_flush(LogLimit *limit, gint64 now)
{
	guint suppressed;

	g_return_if_fail(limit != NULL);

	g_mutex_lock(&limit_lock);
	suppressed = limit->open ? limit_roll(limit, now, FALSE) : 0;
	g_mutex_unlock(&limit_lock);
	limit_report(limit, suppressed);
}
