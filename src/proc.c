/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Proc: the only module that reads /proc.
 *
 * Three things are read: which processes run and what executable each
 * one runs (every cycle), the file-backed maps of a process (once per
 * new executable) and the memory figures (every prediction). On the
 * real /proc the process list and meminfo come from libproc2; on a fake
 * root (tests, the replay tool) the same data is read from the tree with
 * plain readlink() and the parsers below. Maps are always read from the
 * file, since libproc2 has no maps item.
 *
 * The parsers work on buffers and never touch the file system, so the
 * hostile inputs (paths with spaces, newlines, " (deleted)", truncated
 * lines) are tested from tables.
 */
#include "config.h"

#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libproc2/meminfo.h>
#include <libproc2/pids.h>

#include "interval.h"
#include "pagecache.h"

G_DEFINE_QUARK(proc-error-quark, proc_error)

#define DELETED_SUFFIX " (deleted)"
#define PRELINK_MARK ".#prelink#."
#define MEMFD_PREFIX "/memfd:"

/*
 * The /proc root, NULL for the real one. A module-level setting rather
 * than an argument of every function, as earlyoom's procdir_path: the
 * root is a property of the whole process (the daemon never changes it,
 * a test sets it once per fixture), and threading it through spy,
 * prophet and main would only add a parameter that is always the same.
 */
static char *proc_root = NULL;

void
proc_set_root(const char *root)
{
	g_autofree char *copy = NULL;
	size_t len;

	g_clear_pointer(&proc_root, g_free);
	if (!root || !*root)
		return;

	/* "/proc/" and "/proc" are the same directory. */
	copy = g_strdup(root);
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	if (strcmp(copy, "/proc") == 0)
		return;
	proc_root = g_steal_pointer(&copy);
}

const char *
proc_get_root(void)
{
	return proc_root ? proc_root : "/proc";
}

static gboolean
proc_root_is_real(void)
{
	return proc_root == NULL;
}

/* ---- small helpers ------------------------------------------------------ */

/*
 * The target of a symlink, however long (readlink() silently truncates,
 * so the buffer grows until the answer is shorter than it). NULL with
 * errno set on failure.
 */
static char *
read_link(const char *path)
{
	/* A symlink target is at most PATH_MAX on Linux; the cap only stops
	 * a runaway loop on a file system that misbehaves. */
	const size_t max_size = 1024 * 1024;
	size_t size = 256;

	for (;;) {
		g_autofree char *buf = g_malloc(size);
		ssize_t n = readlink(path, buf, size);

		if (n < 0)
			return NULL;
		if ((size_t)n < size) {
			buf[n] = '\0';
			return g_steal_pointer(&buf);
		}
		if (size >= max_size) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		size *= 2;
	}
}

char *
proc_fd_path(int fd)
{
	char link[64];

	g_snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	return read_link(link);
}

static gboolean
has_suffix(const char *s, size_t len, const char *suffix)
{
	size_t slen = strlen(suffix);

	return len >= slen && memcmp(s + len - slen, suffix, slen) == 0;
}

/* A decimal pid, the whole string, within pid_t. */
static gboolean
parse_pid(const char *s, pid_t *out)
{
	guint64 value = 0;

	if (!*s)
		return FALSE;
	for (; *s; s++) {
		if (!g_ascii_isdigit(*s))
			return FALSE;
		value = value * 10 + (guint64)(*s - '0');
		if (value > G_MAXINT32)
			return FALSE;
	}
	if (value == 0)
		return FALSE;
	*out = (pid_t)value;
	return TRUE;
}

/* ---- processes ---------------------------------------------------------- */

/*
 * libproc2 passes every string it reads through escape_str(), which
 * replaces control characters by '.' (C locale) or '?' (UTF-8 locale)
 * and bytes it does not consider printable by '?'. A path such as
 * "/opt/a\nb" or a non-ASCII name in the C locale thus comes back as a
 * different, usually nonexistent, path. Only strings that contain one of
 * the two replacement characters can have been changed; those are read
 * again from the link itself, which costs one readlink() for them only.
 */
static gboolean
libproc2_may_have_escaped(const char *exe)
{
	return strpbrk(exe, "?.") != NULL;
}

/*
 * libproc2's context for listing processes, kept across scans: setting
 * one up (procps_pids_new()) and tearing it down cost, every cycle, 60 %
 * as many instructions as the reap of 860 processes itself (6.1 against
 * 10.5 million in 29 scans under callgrind).
 */
struct ProcLister {
	struct pids_info *info;   /* NULL until the first libproc2 listing */
};

/* The items read: the PID and the executable's link, nothing else. */
static enum pids_item lister_items[] = { PIDS_ID_PID, PIDS_EXE };
enum { REL_PID, REL_EXE };

ProcLister *
proc_lister_new(void)
{
	return g_new0(ProcLister, 1);
}

void
proc_lister_free(ProcLister *lister)
{
	if (!lister)
		return;
	if (lister->info)
		procps_pids_unref(&lister->info);
	g_free(lister);
}

static gboolean
foreach_exe_libproc2(ProcLister *lister, ProcExeFunc func, gpointer user_data, GError **error)
{
	struct pids_fetch *fetch;
	pid_t self = getpid();

	if (!lister->info) {
		int rc = procps_pids_new(&lister->info, lister_items, G_N_ELEMENTS(lister_items));

		if (rc < 0) {
			lister->info = NULL;
			g_set_error(error, PROC_ERROR, PROC_ERROR_IO,
				    "cannot set up libproc2 to list processes: %s",
				    g_strerror(-rc));
			return FALSE;
		}
	}

	fetch = procps_pids_reap(lister->info, PIDS_FETCH_TASKS_ONLY);
	if (!fetch) {
		int saved = errno;

		/* Set up afresh next time: a failed reap may leave it half-filled. */
		procps_pids_unref(&lister->info);
		lister->info = NULL;
		g_set_error(error, PROC_ERROR, PROC_ERROR_IO,
			    "cannot list processes with libproc2: %s",
			    g_strerror(saved));
		return FALSE;
	}

	for (int i = 0; i < fetch->counts->total; i++) {
		struct pids_stack *stack = fetch->stacks[i];
		pid_t pid = PIDS_VAL(REL_PID, s_int, stack, lister->info);
		const char *exe = PIDS_VAL(REL_EXE, str, stack, lister->info);
		g_autofree char *raw = NULL;

		if (pid == self)
			continue;
		/* "-": the link could not be read (kernel threads have
		 * none; PID 1 and other users' processes may refuse). */
		if (!exe || !*exe || strcmp(exe, "-") == 0)
			continue;

		if (libproc2_may_have_escaped(exe)) {
			g_autofree char *link = g_strdup_printf("/proc/%d/exe", (int)pid);

			raw = read_link(link);
			if (!raw)
				continue;  /* it exited since the reap */
			exe = raw;
		}
		func(pid, exe, user_data);
	}
	return TRUE;
}

static gboolean
foreach_exe_tree(const char *root, ProcExeFunc func, gpointer user_data, GError **error)
{
	DIR *dir;
	struct dirent *entry;
	pid_t self = getpid();

	dir = opendir(root);
	if (!dir) {
		int saved = errno;

		g_set_error(error, PROC_ERROR, PROC_ERROR_IO,
			    "cannot list %s: %s", root, g_strerror(saved));
		return FALSE;
	}

	while ((errno = 0, entry = readdir(dir)) != NULL) {
		g_autofree char *link = NULL;
		g_autofree char *exe = NULL;
		pid_t pid;

		if (!parse_pid(entry->d_name, &pid) || pid == self)
			continue;
		link = g_strdup_printf("%s/%s/exe", root, entry->d_name);
		exe = read_link(link);
		if (!exe || !*exe)
			continue;  /* kernel thread, exited, or not ours to read */
		func(pid, exe, user_data);
	}
	if (errno != 0) {
		int saved = errno;

		closedir(dir);
		g_set_error(error, PROC_ERROR, PROC_ERROR_IO,
			    "cannot list %s: %s", root, g_strerror(saved));
		return FALSE;
	}
	closedir(dir);
	return TRUE;
}

gboolean
proc_lister_foreach_exe(ProcLister *lister, ProcExeFunc func, gpointer user_data, GError **error)
{
	g_return_val_if_fail(lister != NULL, FALSE);
	g_return_val_if_fail(func != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (proc_root_is_real())
		return foreach_exe_libproc2(lister, func, user_data, error);
	return foreach_exe_tree(proc_root, func, user_data, error);
}

gboolean
proc_foreach_exe(ProcExeFunc func, gpointer user_data, GError **error)
{
	g_autoptr(ProcLister) lister = proc_lister_new();

	return proc_lister_foreach_exe(lister, func, user_data, error);
}

/* ---- maps --------------------------------------------------------------- */

void
proc_map_clear(gpointer data)
{
	ProcMap *map = data;

	if (map)
		g_clear_pointer(&map->path, g_free);
}

/* Hex digits at *p (at least one, at most 16) into *out; advances *p. */
static gboolean
parse_hex(const char **p, guint64 *out)
{
	const char *s = *p;
	guint64 value = 0;
	int digits = 0;

	while (g_ascii_isxdigit(*s)) {
		if (++digits > 16)
			return FALSE;
		value = (value << 4) | (guint64)g_ascii_xdigit_value(*s);
		s++;
	}
	if (digits == 0)
		return FALSE;
	*p = s;
	*out = value;
	return TRUE;
}

static gboolean
parse_dec(const char **p, guint64 *out)
{
	const char *s = *p;
	guint64 value = 0;

	if (!g_ascii_isdigit(*s))
		return FALSE;
	while (g_ascii_isdigit(*s)) {
		guint64 digit = (guint64)(*s - '0');

		if (value > (G_MAXUINT64 - digit) / 10)
			return FALSE;
		value = value * 10 + digit;
		s++;
	}
	*p = s;
	*out = value;
	return TRUE;
}

static gboolean
expect_char(const char **p, char c)
{
	if (**p != c)
		return FALSE;
	(*p)++;
	return TRUE;
}

/*
 * The kernel writes a newline inside a file name as the four characters
 * "\012" (seq_path escapes only '\n'). A literal backslash is not
 * escaped, so a name that really contains "\012" is indistinguishable;
 * such names do not occur in practice and are read as a newline too.
 */
static char *
unescape_newlines(const char *s, size_t len)
{
	GString *out = g_string_sized_new(len);

	for (size_t i = 0; i < len; i++) {
		if (len - i >= 4 && memcmp(s + i, "\\012", 4) == 0) {
			g_string_append_c(out, '\n');
			i += 3;
		} else {
			g_string_append_c(out, s[i]);
		}
	}
	return g_string_free(out, FALSE);
}

static gboolean
parse_error(GError **error, const char *line, const char *what)
{
	g_set_error(error, PROC_ERROR, PROC_ERROR_PARSE,
		    "bad maps line (%s): %.80s", what, line);
	return FALSE;
}

/*
 * A real line (the kernel pads with spaces up to the path column, and
 * anonymous maps end right after the inode and one space):
 *   7f0e1c200000-7f0e1c228000 r--p 00000000 fe:01 1049011   /usr/lib/x86_64-linux-gnu/libc.so.6
 *   7ffcc2d12000-7ffcc2d33000 rw-p 00000000 00:00 0                          [stack]
 *   5651b3f68000-5651b3f78000 rw-p 00000000 00:00 0
 * Fields: start-end, perms (4 characters), offset (hex), major:minor
 * (hex), inode (decimal), then the name up to the end of the line.
 */
gboolean
proc_parse_maps_line(const char *line, ProcMap *out, GError **error)
{
	const char *p = line;
	guint64 start, end, offset, major, minor, inode;
	const char *name;
	size_t len;
	ProcMap map = { 0 };

	g_return_val_if_fail(line != NULL, FALSE);
	g_return_val_if_fail(out != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (!parse_hex(&p, &start) || !expect_char(&p, '-') || !parse_hex(&p, &end))
		return parse_error(error, line, "address range");
	if (end < start)
		return parse_error(error, line, "end before start");
	if (!expect_char(&p, ' '))
		return parse_error(error, line, "address range");

	for (int i = 0; i < 4; i++) {
		if (*p == '\0' || *p == ' ' || *p == '\n')
			return parse_error(error, line, "permissions");
		p++;
	}
	if (!expect_char(&p, ' '))
		return parse_error(error, line, "permissions");

	if (!parse_hex(&p, &offset) || !expect_char(&p, ' '))
		return parse_error(error, line, "offset");

	if (!parse_hex(&p, &major) || !expect_char(&p, ':') ||
	    !parse_hex(&p, &minor) || !expect_char(&p, ' ') ||
	    major > G_MAXUINT || minor > G_MAXUINT)
		return parse_error(error, line, "device");

	if (!parse_dec(&p, &inode))
		return parse_error(error, line, "inode");
	if (*p != ' ' && *p != '\n' && *p != '\0')
		return parse_error(error, line, "inode");

	map.start = start;
	map.end = end;
	map.offset = offset;
	map.dev_major = (guint)major;
	map.dev_minor = (guint)minor;
	map.inode = inode;

	/* The name starts at the first non-space and runs to the end of the
	 * line: spaces inside it and at its end belong to the name. */
	while (*p == ' ')
		p++;
	name = p;
	len = strlen(name);
	if (len > 0 && name[len - 1] == '\n')
		len--;

	/* Anonymous, or a pseudo name: "[heap]", "[stack]", "[vdso]",
	 * "[anon:...]", "anon_inode:...". Only absolute paths are files. */
	if (len > 0 && name[0] == '/') {
		if (has_suffix(name, len, DELETED_SUFFIX)) {
			len -= strlen(DELETED_SUFFIX);
			map.deleted = TRUE;
		}
		map.path = unescape_newlines(name, len);
	}

	*out = map;
	return TRUE;
}

gboolean
proc_map_file_stat(pid_t pid, guint64 start, guint64 end, struct stat *st)
{
	g_autofree char *path = NULL;

	g_return_val_if_fail(st != NULL, FALSE);

	/* The kernel names them "%lx-%lx". */
	path = g_strdup_printf("%s/%d/map_files/%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x",
			       proc_get_root(), (int)pid, start, end);
	return stat(path, st) == 0;
}

gboolean
proc_read_maps(pid_t pid, GArray *maps, GError **error)
{
	g_autofree char *path = NULL;
	g_autofree char *line = NULL;
	g_autofree char *first_bad = NULL;
	g_autoptr(GArray) found = NULL;
	size_t cap = 0;
	guint n_bad = 0;
	FILE *file;
	int fd;

	g_return_val_if_fail(maps != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	path = g_strdup_printf("%s/%d/maps", proc_get_root(), (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int saved = errno;

		g_set_error(error, PROC_ERROR,
			    saved == ENOENT || saved == ESRCH ? PROC_ERROR_GONE : PROC_ERROR_IO,
			    "cannot open %s: %s", path, g_strerror(saved));
		return FALSE;
	}
	file = fdopen(fd, "r");
	if (!file) {
		int saved = errno;

		close(fd);
		g_set_error(error, PROC_ERROR, PROC_ERROR_IO,
			    "cannot read %s: %s", path, g_strerror(saved));
		return FALSE;
	}

	/* Collected apart and appended only when the whole file was read, so
	 * a failure never leaves half a process in the caller's array. */
	found = g_array_new(FALSE, FALSE, sizeof(ProcMap));
	g_array_set_clear_func(found, proc_map_clear);

	/* getline() because a maps line has no length limit (a path may be
	 * up to PATH_MAX, more after escaping). /proc files report size 0,
	 * so reading to EOF is the only way to get them whole. */
	errno = 0;
	while (getline(&line, &cap, file) >= 0) {
		ProcMap map;

		if (!proc_parse_maps_line(line, &map, NULL)) {
			if (n_bad++ == 0)
				first_bad = g_strdup(line);
			continue;
		}
		if (!map.path) {
			proc_map_clear(&map);
			continue;
		}
		g_array_append_val(found, map);
	}
	if (ferror(file)) {
		int saved = errno;

		fclose(file);
		g_set_error(error, PROC_ERROR,
			    saved == ESRCH ? PROC_ERROR_GONE : PROC_ERROR_IO,
			    "cannot read %s: %s", path, g_strerror(saved));
		return FALSE;
	}
	fclose(file);

	if (n_bad > 0)
		g_debug("%s: %u malformed lines skipped, the first: %.120s",
			path, n_bad, g_strchomp(first_bad));

	/* Move the entries over; the path pointers change owner. */
	if (found->len > 0) {
		g_array_append_vals(maps, found->data, found->len);
		g_array_set_clear_func(found, NULL);
	}
	return TRUE;
}

/* ---- pages a process has touched ----------------------------------------- */

/* pagemap entries: bit 63 the page is present, bit 62 it is swapped out. */
#define PAGEMAP_PRESENT (G_GUINT64_CONSTANT(1) << 63)
#define PAGEMAP_SWAPPED (G_GUINT64_CONSTANT(1) << 62)
/* Entries read at a time: 32 KiB of buffer, 16 MiB of a 4 KiB-page map. */
#define PAGEMAP_BATCH 4096

gboolean
proc_read_touched(pid_t pid, const ProcMap *map, guint64 window, GArray *ranges,
		  GError **error)
{
	g_autofree char *path = NULL;
	g_autofree guint64 *entries = NULL;
	g_autoptr(GArray) found = NULL;
	guint64 page = pagecache_page_size();
	guint64 first, pages, file_end;
	int fd;

	g_return_val_if_fail(map != NULL, FALSE);
	g_return_val_if_fail(ranges != NULL, FALSE);
	g_return_val_if_fail(window > 0 && (window & (window - 1)) == 0, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (map->end <= map->start || map->start % page != 0 ||
	    map->offset > G_MAXUINT64 - (map->end - map->start)) {
		g_set_error(error, PROC_ERROR, PROC_ERROR_PARSE,
			    "map %" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x has no pages to look up",
			    map->start, map->end);
		return FALSE;
	}
	first = map->start / page;
	pages = (map->end - map->start + page - 1) / page;
	file_end = map->offset + (map->end - map->start);

	path = g_strdup_printf("%s/%d/pagemap", proc_get_root(), (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int saved = errno;

		g_set_error(error, PROC_ERROR,
			    saved == ENOENT || saved == ESRCH ? PROC_ERROR_GONE :
			    saved == EACCES || saved == EPERM ? PROC_ERROR_UNAVAILABLE : PROC_ERROR_IO,
			    "cannot open %s: %s", path, g_strerror(saved));
		return FALSE;
	}

	/* Pages are visited in order: each window extends the last or follows it. */
	found = interval_array_new();
	entries = g_new(guint64, PAGEMAP_BATCH);
	for (guint64 done = 0; done < pages;) {
		size_t want = (size_t)MIN(pages - done, PAGEMAP_BATCH) * sizeof(guint64);
		ssize_t got = pread(fd, entries, want, (off_t)((first + done) * sizeof(guint64)));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || got % (ssize_t)sizeof(guint64) != 0) {
			int saved = got < 0 ? errno : EIO;

			close(fd);
			g_set_error(error, PROC_ERROR,
				    saved == ESRCH ? PROC_ERROR_GONE : PROC_ERROR_IO,
				    "cannot read %s: %s", path,
				    got == 0 ? "end of file" : g_strerror(saved));
			return FALSE;
		}
		for (size_t i = 0; i < (size_t)got / sizeof(guint64); i++) {
			guint64 offset, lo, hi;

			if (!(entries[i] & (PAGEMAP_PRESENT | PAGEMAP_SWAPPED)))
				continue;
			/* The page's file offset, out to the window around it. */
			offset = map->offset + (done + i) * page;
			lo = offset & ~(window - 1);
			hi = offset > G_MAXUINT64 - window ? G_MAXUINT64 : (offset & ~(window - 1)) + window;
			lo = MAX(lo, map->offset);
			hi = MIN(hi, file_end);
			interval_append(found, (Interval){ lo, hi }, 0);
		}
		done += (guint64)got / sizeof(guint64);
	}
	close(fd);
	for (guint i = 0; i < found->len; i++) {
		Interval iv = g_array_index(found, Interval, i);

		g_array_append_val(ranges, ((ProcRange){ iv.start, interval_length(iv) }));
	}
	return TRUE;
}

/* ---- executables -------------------------------------------------------- */

/*
 * Only a trailing " (deleted)" is the kernel's mark: d_path() appends it
 * once, at the very end, to a file that was unlinked. A "(deleted)"
 * anywhere else is part of a real directory or file name
 * ("/opt/x (deleted)/bin/foo") and is kept, so that path is modelled as
 * it is. A file whose name itself ends in " (deleted)" cannot be told
 * apart and is taken as the deleted original.
 */
char *
proc_sanitize_exe(const char *raw)
{
	size_t len;
	const char *mark;

	if (!raw || raw[0] != '/')
		return NULL;  /* "", "-", relative, or a pseudo name */
	if (g_str_has_prefix(raw, MEMFD_PREFIX))
		return NULL;  /* anonymous memory, nothing to read ahead */

	len = strlen(raw);
	if (has_suffix(raw, len, DELETED_SUFFIX))
		len -= strlen(DELETED_SUFFIX);

	/* prelink rewrites a binary as "NAME.#prelink#.XXXXXX" and renames
	 * it over NAME; a process started in between runs the temporary
	 * name. It is the same program, so it counts as NAME. The mark must
	 * be in the last component, or it is part of a directory name. */
	mark = g_strstr_len(raw, (gssize)len, PRELINK_MARK);
	if (mark && !memchr(mark, '/', len - (size_t)(mark - raw)))
		len = (size_t)(mark - raw);

	if (len <= 1)
		return NULL;  /* nothing left but "/" */
	return g_strndup(raw, len);
}

/* ---- memory ------------------------------------------------------------- */

/*
 * A real file:
 *   MemTotal:       24576000 kB
 *   MemFree:        20123456 kB
 *   MemAvailable:   23000000 kB
 *   Buffers:           12345 kB
 *   Cached:          2345678 kB
 */
gboolean
proc_parse_meminfo(const char *text, ProcMemstat *out, GError **error)
{
	ProcMemstat stat = { 0 };
	struct {
		const char *key;
		guint64 *value;
		gboolean found;
	} keys[] = {
		{ "MemTotal", &stat.total, FALSE },
		{ "MemFree", &stat.free, FALSE },
		{ "Cached", &stat.cached, FALSE },
		{ "Buffers", &stat.buffers, FALSE },
		{ "MemAvailable", &stat.available, FALSE },
	};
	enum { K_TOTAL, K_FREE, K_CACHED, K_BUFFERS, K_AVAILABLE };
	g_auto(GStrv) lines = NULL;

	g_return_val_if_fail(text != NULL, FALSE);
	g_return_val_if_fail(out != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		const char *colon = strchr(*l, ':');
		const char *p;
		guint64 value;

		if (!colon)
			continue;
		for (guint k = 0; k < G_N_ELEMENTS(keys); k++) {
			size_t klen = strlen(keys[k].key);

			if ((size_t)(colon - *l) != klen || strncmp(*l, keys[k].key, klen) != 0)
				continue;
			p = colon + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			if (!parse_dec(&p, &value)) {
				g_set_error(error, PROC_ERROR, PROC_ERROR_PARSE,
					    "meminfo: bad value for %s: %.80s", keys[k].key, *l);
				return FALSE;
			}
			*keys[k].value = value;
			keys[k].found = TRUE;
		}
	}

	for (guint k = K_TOTAL; k <= K_CACHED; k++) {
		if (!keys[k].found) {
			g_set_error(error, PROC_ERROR, PROC_ERROR_PARSE,
				    "meminfo: no %s", keys[k].key);
			return FALSE;
		}
	}
	/* Kernels before 3.14 have no MemAvailable; what is free or only
	 * holds clean cache is the usual estimate. */
	if (!keys[K_AVAILABLE].found)
		stat.available = stat.free + stat.cached + stat.buffers;

	*out = stat;
	return TRUE;
}

static gboolean
memstat_libproc2(ProcMemstat *out, GError **error)
{
	struct meminfo_info *info = NULL;
	ProcMemstat stat = { 0 };
	struct {
		enum meminfo_item item;
		guint64 *value;
	} items[] = {
		{ MEMINFO_MEM_TOTAL, &stat.total },
		{ MEMINFO_MEM_FREE, &stat.free },
		{ MEMINFO_MEM_CACHED, &stat.cached },
		{ MEMINFO_MEM_BUFFERS, &stat.buffers },
		{ MEMINFO_MEM_AVAILABLE, &stat.available },
	};
	int rc;

	rc = procps_meminfo_new(&info);
	if (rc < 0) {
		g_set_error(error, PROC_ERROR, PROC_ERROR_IO,
			    "cannot read meminfo with libproc2: %s", g_strerror(-rc));
		return FALSE;
	}
	/* procps_meminfo_get() rather than MEMINFO_GET(), which turns a
	 * failed read into a silent 0. */
	for (guint i = 0; i < G_N_ELEMENTS(items); i++) {
		struct meminfo_result *result = procps_meminfo_get(info, items[i].item);

		if (!result) {
			procps_meminfo_unref(&info);
			g_set_error(error, PROC_ERROR, PROC_ERROR_IO,
				    "cannot read meminfo with libproc2");
			return FALSE;
		}
		*items[i].value = result->result.ul_int;
	}
	procps_meminfo_unref(&info);

	if (stat.total == 0) {
		g_set_error(error, PROC_ERROR, PROC_ERROR_PARSE,
			    "meminfo from libproc2 has no MemTotal");
		return FALSE;
	}
	/* libproc2 reports a line the kernel lacks as 0; estimate as
	 * proc_parse_meminfo() does. */
	if (stat.available == 0)
		stat.available = stat.free + stat.cached + stat.buffers;

	*out = stat;
	return TRUE;
}

gboolean
proc_get_memstat(ProcMemstat *out, GError **error)
{
	g_autofree char *path = NULL;
	g_autofree char *text = NULL;
	g_autoptr(GError) local = NULL;

	g_return_val_if_fail(out != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (proc_root_is_real())
		return memstat_libproc2(out, error);

	path = g_build_filename(proc_root, "meminfo", NULL);
	if (!g_file_get_contents(path, &text, NULL, &local)) {
		g_set_error(error, PROC_ERROR, PROC_ERROR_IO, "%s", local->message);
		return FALSE;
	}
	return proc_parse_meminfo(text, out, error);
}

/* ---- pressure stall information --------------------------------------- */

/*
 * "12.34" into hundredths (1234). The kernel prints two decimals; fewer
 * are read as written ("5" is 500, "5.1" is 510) and more are cut, not
 * rounded. The value must end at a space, a newline or the end.
 */
static gboolean
parse_hundredths(const char **p, guint64 *out)
{
	const char *s = *p;
	guint64 whole, frac = 0;
	int digits = 0;

	if (!parse_dec(&s, &whole) || whole > 100)
		return FALSE;
	if (*s == '.') {
		s++;
		if (!g_ascii_isdigit(*s))
			return FALSE;
		for (; g_ascii_isdigit(*s); s++, digits++)
			if (digits < 2)
				frac = frac * 10 + (guint64)(*s - '0');
	}
	for (; digits < 2; digits++)
		frac *= 10;
	if (*s != '\0' && *s != ' ' && *s != '\n')
		return FALSE;
	*p = s;
	*out = whole * 100 + frac;
	return TRUE;
}

/*
 * A real /proc/pressure/memory:
 *   some avg10=0.00 avg60=0.00 avg300=0.00 total=0
 *   full avg10=1.52 avg60=0.31 avg300=0.07 total=2217034
 * "some" is the share of time in which at least one task stalled on
 * memory; the first line that starts with it is used.
 */
gboolean
proc_parse_pressure(const char *text, ProcPressure *out, GError **error)
{
	g_auto(GStrv) lines = NULL;

	g_return_val_if_fail(text != NULL, FALSE);
	g_return_val_if_fail(out != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		g_auto(GStrv) fields = NULL;

		if (!g_str_has_prefix(*l, "some "))
			continue;
		fields = g_strsplit(*l, " ", -1);
		for (char **f = fields; *f; f++) {
			const char *p = *f + strlen("avg10=");
			guint64 value;

			if (!g_str_has_prefix(*f, "avg10="))
				continue;
			if (!parse_hundredths(&p, &value) || *p != '\0' || value > 10000) {
				g_set_error(error, PROC_ERROR, PROC_ERROR_PARSE,
					    "pressure: bad avg10: %.80s", *l);
				return FALSE;
			}
			out->some_avg10 = (guint)value;
			return TRUE;
		}
		g_set_error(error, PROC_ERROR, PROC_ERROR_PARSE,
			    "pressure: no avg10 in the some line: %.80s", *l);
		return FALSE;
	}
	g_set_error(error, PROC_ERROR, PROC_ERROR_PARSE, "pressure: no some line");
	return FALSE;
}

gboolean
proc_get_memory_pressure(ProcPressure *out, GError **error)
{
	g_autofree char *path = NULL;
	char buf[512];
	ssize_t n;
	int fd, saved;

	g_return_val_if_fail(out != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	/* Read directly rather than with GLib, whose error codes hide the errno. */
	path = g_build_filename(proc_get_root(), "pressure", "memory", NULL);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0) {
		do
			n = read(fd, buf, sizeof(buf) - 1);
		while (n < 0 && errno == EINTR);
		saved = errno;
		(void)close(fd);
		if (n >= 0) {
			buf[n] = '\0';
			return proc_parse_pressure(buf, out, error);
		}
	} else {
		saved = errno;
	}
	/*
	 * No file: a kernel without PSI. EOPNOTSUPP: the file exists but PSI
	 * is switched off (psi=0 on the kernel command line).
	 */
	g_set_error(error, PROC_ERROR,
		    saved == ENOENT || saved == ENOTDIR || saved == EOPNOTSUPP
		    ? PROC_ERROR_UNAVAILABLE : PROC_ERROR_IO,
		    "cannot read %s: %s", path, g_strerror(saved));
	return FALSE;
}

/* ---- mount namespaces ---- */

void
proc_mount_clear(gpointer data)
{
	ProcMount *mount = data;

	if (!mount)
		return;
	g_clear_pointer(&mount->root, g_free);
	g_clear_pointer(&mount->mountpoint, g_free);
	g_clear_pointer(&mount->fstype, g_free);
}

/*
 * One space-separated field of a mountinfo line at *p, unescaped: the
 * kernel writes ' ', '\t', '\n' and '\\' as a backslash and three octal
 * digits (show_mountinfo() through mangle()). Any other backslash is
 * kept as it is. NULL if the field is empty or an escape makes a NUL.
 */
static char *
mountinfo_field(const char **p)
{
	const char *s = *p;
	GString *out = g_string_new(NULL);

	while (*s && *s != ' ' && *s != '\n') {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			char c = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));

			if (c == '\0')
				break;
			g_string_append_c(out, c);
			s += 4;
		} else {
			g_string_append_c(out, *s++);
		}
	}
	if (out->len == 0 || (*s && *s != ' ' && *s != '\n')) {
		g_string_free(out, TRUE);
		return NULL;
	}
	*p = s;
	return g_string_free(out, FALSE);
}

static gboolean
mountinfo_error(GError **error, const char *line, const char *what)
{
	g_set_error(error, PROC_ERROR, PROC_ERROR_PARSE,
		    "bad mountinfo line (%s): %.80s", what, line);
	return FALSE;
}

gboolean
proc_parse_mountinfo_line(const char *line, ProcMount *out, GError **error)
{
	const char *p = line;
	guint64 id, parent, major, minor;
	g_auto(ProcMount) mount = { 0 };

	g_return_val_if_fail(line != NULL, FALSE);
	g_return_val_if_fail(out != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (!parse_dec(&p, &id) || !expect_char(&p, ' ') ||
	    !parse_dec(&p, &parent) || !expect_char(&p, ' ') ||
	    id > G_MAXUINT || parent > G_MAXUINT)
		return mountinfo_error(error, line, "mount ids");
	/* The device is decimal here, unlike in maps. */
	if (!parse_dec(&p, &major) || !expect_char(&p, ':') ||
	    !parse_dec(&p, &minor) || !expect_char(&p, ' ') ||
	    major > G_MAXUINT || minor > G_MAXUINT)
		return mountinfo_error(error, line, "device");
	mount.id = (guint)id;
	mount.parent = (guint)parent;
	mount.dev_major = (guint)major;
	mount.dev_minor = (guint)minor;

	mount.root = mountinfo_field(&p);
	if (!mount.root || mount.root[0] != '/' || !expect_char(&p, ' '))
		return mountinfo_error(error, line, "root");
	mount.mountpoint = mountinfo_field(&p);
	if (!mount.mountpoint || mount.mountpoint[0] != '/' || !expect_char(&p, ' '))
		return mountinfo_error(error, line, "mount point");

	/* Options, then optional fields up to a lone "-". */
	for (;;) {
		const char *start = p;

		while (*p && *p != ' ' && *p != '\n')
			p++;
		if (p == start)
			return mountinfo_error(error, line, "no separator");
		if (p - start == 1 && *start == '-')
			break;
		if (!expect_char(&p, ' '))
			return mountinfo_error(error, line, "no separator");
	}
	if (!expect_char(&p, ' '))
		return mountinfo_error(error, line, "file system type");
	mount.fstype = mountinfo_field(&p);
	if (!mount.fstype)
		return mountinfo_error(error, line, "file system type");
	/* The source and the super options follow; nothing here needs them. */

	*out = mount;
	memset(&mount, 0, sizeof(mount));
	return TRUE;
}

/*
 * The mounts of an open mountinfo file (named path in messages), appended
 * to mounts as proc_read_mountinfo() says. Closes file.
 */
static gboolean
read_mountinfo_file(FILE *file, const char *path, GArray *mounts, GError **error)
{
	g_autofree char *line = NULL;
	g_autoptr(GArray) found = NULL;
	size_t cap = 0;

	found = g_array_new(FALSE, FALSE, sizeof(ProcMount));
	g_array_set_clear_func(found, proc_mount_clear);
	for (;;) {
		ProcMount mount;
		ssize_t n;

		errno = 0;
		n = getline(&line, &cap, file);
		if (n < 0)
			break;
		if (found->len >= PROC_MOUNTS_MAX) {
			fclose(file);
			g_set_error(error, PROC_ERROR, PROC_ERROR_PARSE,
				    "%s: more than %d mounts", path, PROC_MOUNTS_MAX);
			return FALSE;
		}
		if (!proc_parse_mountinfo_line(line, &mount, error)) {
			fclose(file);
			return FALSE;
		}
		g_array_append_val(found, mount);
	}
	if (ferror(file)) {
		int saved = errno;

		fclose(file);
		g_set_error(error, PROC_ERROR, saved == ESRCH ? PROC_ERROR_GONE : PROC_ERROR_IO,
			    "cannot read %s: %s", path, g_strerror(saved));
		return FALSE;
	}
	fclose(file);
	g_array_append_vals(mounts, found->data, found->len);
	g_array_set_clear_func(found, NULL);  /* the strings moved to mounts */
	return TRUE;
}

static gboolean
open_error(GError **error, const char *path)
{
	int saved = errno;

	g_set_error(error, PROC_ERROR, saved == ENOENT || saved == ESRCH
		    ? PROC_ERROR_GONE : PROC_ERROR_IO,
		    "cannot open %s: %s", path, g_strerror(saved));
	return FALSE;
}

gboolean
proc_read_mountinfo(pid_t pid, GArray *mounts, GError **error)
{
	g_autofree char *path = NULL;
	FILE *file;

	g_return_val_if_fail(mounts != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	path = pid > 0 ? g_strdup_printf("%s/%d/mountinfo", proc_get_root(), (int)pid)
		       : g_strdup_printf("%s/self/mountinfo", proc_get_root());
	file = fopen(path, "re");
	if (!file)
		return open_error(error, path);
	return read_mountinfo_file(file, path, mounts, error);
}

gboolean
proc_read_own_mountinfo(GArray *mounts, GError **error)
{
	static const char path[] = "/proc/self/mountinfo";
	FILE *file;

	g_return_val_if_fail(mounts != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	file = fopen(path, "re");
	if (!file)
		return open_error(error, path);
	return read_mountinfo_file(file, path, mounts, error);
}

int
proc_open_self_mountinfo(void)
{
	g_autofree char *path = g_strdup_printf("%s/self/mountinfo", proc_get_root());

	return open(path, O_RDONLY | O_CLOEXEC);
}

gboolean
proc_read_mountinfo_fd(int fd, GArray *mounts, GError **error)
{
	int copy;
	FILE *file;

	g_return_val_if_fail(mounts != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	/* The copy shares the file position: the table is read from its start. */
	copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy < 0 || lseek(copy, 0, SEEK_SET) != 0 || !(file = fdopen(copy, "r"))) {
		if (copy >= 0)
			(void)close(copy);
		return open_error(error, "the mount table");
	}
	return read_mountinfo_file(file, "the mount table", mounts, error);
}

gboolean
proc_get_mnt_ns(pid_t pid, guint64 *ns)
{
	g_autofree char *path = NULL;
	g_autofree char *target = NULL;
	const char *p;
	guint64 value;

	g_return_val_if_fail(ns != NULL, FALSE);

	path = pid > 0 ? g_strdup_printf("%s/%d/ns/mnt", proc_get_root(), (int)pid)
		       : g_strdup_printf("%s/self/ns/mnt", proc_get_root());
	target = read_link(path);
	if (!target)
		return FALSE;
	p = target;
	if (!g_str_has_prefix(p, "mnt:[")) {
		errno = EINVAL;
		return FALSE;
	}
	p += strlen("mnt:[");
	if (!parse_dec(&p, &value) || strcmp(p, "]") != 0) {
		errno = EINVAL;
		return FALSE;
	}
	*ns = value;
	return TRUE;
}

char *
proc_get_process_root(pid_t pid)
{
	g_autofree char *path = g_strdup_printf("%s/%d/root", proc_get_root(), (int)pid);

	return read_link(path);
}
