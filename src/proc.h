/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Proc: every read of /proc goes through here.
 *
 * The root is injectable (proc_set_root) so tests run the scanner on a
 * fake tree. On the real /proc the process list and meminfo come from
 * libproc2; on any other root the same data is read from the tree with
 * the parsers below, which are pure and tested from tables.
 */
#pragma once

#include <glib.h>
#include <sys/stat.h>
#include <sys/types.h>

#define PROC_ERROR (proc_error_quark())
GQuark proc_error_quark(void);

typedef enum {
	PROC_ERROR_GONE,      /* the process exited */
	PROC_ERROR_PARSE,     /* a line did not have the expected shape */
	PROC_ERROR_IO,        /* any other read failure */
	PROC_ERROR_UNAVAILABLE, /* the kernel does not provide this file (no PSI) */
} ProcError;

/* Memory figures from meminfo, in KB. */
typedef struct ProcMemstat {
	guint64 total;        /* MemTotal */
	guint64 free;         /* MemFree */
	guint64 cached;       /* Cached */
	guint64 buffers;      /* Buffers */
	guint64 available;    /* MemAvailable */
} ProcMemstat;

/* Memory pressure (PSI) from pressure/memory. */
typedef struct ProcPressure {
	guint some_avg10;     /* "some avg10", in hundredths of a percent: 12.34% -> 1234 */
} ProcPressure;

/* One line of /proc/PID/maps. */
typedef struct ProcMap {
	guint64 start, end;   /* virtual addresses */
	guint64 offset;       /* file offset of `start` */
	guint dev_major, dev_minor;
	guint64 inode;        /* 0 for anonymous maps */
	char *path;           /* unescaped path, owned; NULL if anonymous */
	gboolean deleted;     /* the kernel marked the file " (deleted)" */
} ProcMap;

/* Sets the /proc root; NULL or "/proc" means the real one (libproc2). */
void proc_set_root(const char *root);
const char *proc_get_root(void);

typedef void (*ProcExeFunc)(pid_t pid, const char *exe, gpointer user_data);

/*
 * Calls func for every process (not thread) whose executable can be read,
 * except the calling process. Kernel threads and unreadable entries are
 * skipped silently. `exe` is as the kernel reports it, before
 * proc_sanitize_exe().
 */
gboolean proc_foreach_exe(ProcExeFunc func, gpointer user_data, GError **error);

/*
 * The same for a caller that lists every cycle: a ProcLister keeps
 * libproc2's context from one listing to the next (set up at the first,
 * set up again after a listing that failed). Owned by the caller; one
 * thread at a time.
 */
typedef struct ProcLister ProcLister;
ProcLister *proc_lister_new(void);
void proc_lister_free(ProcLister *lister);  /* NULL is accepted */
gboolean proc_lister_foreach_exe(ProcLister *lister, ProcExeFunc func, gpointer user_data,
				 GError **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ProcLister, proc_lister_free)

/*
 * Appends the file-backed maps of pid to `maps` (GArray of ProcMap, with
 * proc_map_clear as its clear function). Anonymous and pseudo maps
 * ("[heap]", "[stack]") are not appended. A process that is gone gives
 * PROC_ERROR_GONE.
 */
gboolean proc_read_maps(pid_t pid, GArray *maps, GError **error);

/*
 * stat(2) of the file pid maps at [start, end), through
 * /proc/PID/map_files/START-END: the file mapped, whatever its path
 * names now, with no lookup of that path (which a mount made since could
 * cover). Needs CAP_SYS_ADMIN (root). FALSE if it cannot be asked.
 */
gboolean proc_map_file_stat(pid_t pid, guint64 start, guint64 end, struct stat *st);

/*
 * Parses one maps line (without or with its trailing newline), e.g.
 *   7f0e1c200000-7f0e1c228000 r--p 00000000 fe:01 1049011   /usr/lib/x86_64-linux-gnu/libc.so.6
 * Paths keep inner spaces; the kernel's "\012" escape becomes a newline;
 * a trailing " (deleted)" is removed and sets `deleted`.
 */
gboolean proc_parse_maps_line(const char *line, ProcMap *out, GError **error);
void proc_map_clear(gpointer map);   /* for g_array_set_clear_func */

/*
 * One line of /proc/PID/mountinfo (see proc(5)):
 *   36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw
 * The root (the directory of the file system that is mounted here) and
 * the mount point are unescaped: the kernel writes a space, tab, newline
 * and backslash in them as \040, \011, \012 and \134.
 */
typedef struct ProcMount {
	guint id, parent;     /* mount id and its parent's */
	guint dev_major, dev_minor; /* the file system's device (st_dev of its root) */
	char *root;           /* absolute path within the file system, owned */
	char *mountpoint;     /* relative to the root of the process read, owned */
	char *fstype;         /* "ext4", "overlay", "fuse.squashfuse", ... owned */
} ProcMount;

/*
 * At most this many mounts of one mountinfo are read. A namespace with
 * more (a user may make thousands of mounts in one of its own) is not
 * translated: its programs are not learned. Ten times what a busy host
 * with many containers has (a few thousand), and about 2 MB of text.
 */
#define PROC_MOUNTS_MAX 20000

/*
 * Parses one mountinfo line (with or without its newline). Any number of
 * optional fields ("shared:1 master:2 propagate_from:3 unbindable") may
 * stand before the "-" separator. A line without the separator, a
 * field that is not a number, or an escape that would make a NUL is
 * PROC_ERROR_PARSE.
 */
gboolean proc_parse_mountinfo_line(const char *line, ProcMount *out, GError **error);
void proc_mount_clear(gpointer mount);   /* for g_array_set_clear_func */
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ProcMount, proc_mount_clear)
/*
 * Appends the mounts of pid's mount namespace as pid sees them (0: this
 * process) to `mounts` (GArray of ProcMount with proc_mount_clear), in
 * file order, at most PROC_MOUNTS_MAX; more is PROC_ERROR_PARSE and
 * appends nothing, as does a line that does not parse.
 */
gboolean proc_read_mountinfo(pid_t pid, GArray *mounts, GError **error);
/*
 * As proc_read_mountinfo(0, ...), always from the real /proc whatever
 * proc_set_root() says: the mounts this process opens its files through
 * (which network or FUSE file system a path leads into), not those of
 * the processes a fake /proc describes.
 */
gboolean proc_read_own_mountinfo(GArray *mounts, GError **error);
/*
 * /proc/self/mountinfo opened (O_CLOEXEC) to be polled for changes: the
 * kernel flags it G_IO_PRI | G_IO_ERR when a mount of this namespace
 * comes, goes or changes. The descriptor is the caller's; -1 with errno
 * on failure.
 */
int proc_open_self_mountinfo(void);
/* As proc_read_mountinfo(0, ...), from a descriptor proc_open_self_mountinfo() gave. */
gboolean proc_read_mountinfo_fd(int fd, GArray *mounts, GError **error);
/*
 * The inode of pid's mount namespace (0: this process), from the link
 * /proc/PID/ns/mnt ("mnt:[4026531841]"). FALSE with errno set if it
 * cannot be read.
 */
gboolean proc_get_mnt_ns(pid_t pid, guint64 *ns);
/*
 * The target of /proc/PID/root, the directory the process sees as "/",
 * as this process names it; NULL with errno set on failure.
 */
char *proc_get_process_root(pid_t pid);

/* A byte range of a file. */
typedef struct ProcRange {
	guint64 offset, length;
} ProcRange;

/*
 * The parts of one file map of pid that the process has touched: the
 * pages /proc/PID/pagemap reports present (or swapped out), as file
 * offsets, each widened to the `window`-aligned window of the file around
 * it (window a power of two) and kept inside the map, windows that touch
 * merged. Appends ProcRange entries in file order to `ranges`, nothing on
 * failure: PROC_ERROR_UNAVAILABLE when pagemap may not be read (another
 * user's process, without root), PROC_ERROR_GONE when the process exited.
 */
gboolean proc_read_touched(pid_t pid, const ProcMap *map, guint64 window, GArray *ranges,
			   GError **error);

/*
 * The executable path to model for a raw /proc/PID/exe link, or NULL to
 * skip it: not absolute, a memfd, or empty. A prelink temporary name
 * (".#prelink#.XXXX") maps back to the original, and " (deleted)" is
 * stripped: the program still runs, its file was replaced (an upgrade).
 */
char *proc_sanitize_exe(const char *raw);

/*
 * The path of one of this process's own open descriptors, from
 * /proc/self/fd (always the real /proc: a descriptor means nothing in a
 * fake tree). NULL with errno set on failure. A file deleted since it was
 * opened ends in " (deleted)", as the kernel reports it.
 */
char *proc_fd_path(int fd);

/* Reads MemTotal, MemFree, Cached, Buffers and MemAvailable. */
gboolean proc_get_memstat(ProcMemstat *out, GError **error);
/* Parses the text of a meminfo file; missing MemAvailable is estimated. */
gboolean proc_parse_meminfo(const char *text, ProcMemstat *out, GError **error);

/*
 * Reads pressure/memory under the proc root. A kernel without PSI (built
 * without it, before 4.20, or booted with psi=0) has no such file: that
 * is PROC_ERROR_UNAVAILABLE, which callers treat as "no pressure figure",
 * not as a failure.
 */
gboolean proc_get_memory_pressure(ProcPressure *out, GError **error);
/*
 * Parses the text of a pressure file: the avg10 of its "some" line, which
 * must lie in 0..100.00. A missing "some" line or avg10 field, or a value
 * that is not a plain decimal, is PROC_ERROR_PARSE.
 */
gboolean proc_parse_pressure(const char *text, ProcPressure *out, GError **error);
