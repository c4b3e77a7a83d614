/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Watch: learns what programs open while they start, from fanotify.
 *
 * A /proc scan sees only what a process maps at the moment of the scan,
 * and nothing of a process that lives less than a cycle. The watcher
 * listens to two fanotify events on the file systems the configuration
 * covers: FAN_OPEN_EXEC, which tells that a program starts (however
 * briefly it lives), and FAN_OPEN, which tells which files it opens.
 *
 * Each start of an accepted executable opens a start-up window for its
 * pid (at most one window per executable per cycle, so a compiler run a
 * thousand times by a build costs one window a cycle, and fewer once its
 * windows teach the model nothing: watch_tracker_learned()). Opens by that pid
 * while its window lasts are recorded (regular files the mapprefix
 * accepts, capped). When the window ends (after `startupwindow` seconds or
 * when the process is gone) the resident page ranges of the recorded
 * files are taken with mincore and handed to the daemon as the program's
 * learned read set. Opens by any process that has no window cost one
 * hash lookup.
 *
 * Plain opens come from a second fanotify group that reports file
 * handles instead of descriptors, on the file systems that allow it: an
 * open by a process without a window then costs the kernel no open of
 * the file (see watch_new).
 *
 * The watcher never looks a path up on behalf of a user: what it learns
 * about a file comes from the descriptor fanotify hands it or the handle
 * it resolves (statx without a round trip to the file's server, its name
 * in /proc/self/fd), and the
 * interpreter of a program is recognised by where its exec event falls,
 * not by resolving the name the program asks for. Network and FUSE file
 * systems, which may stop answering, are not watched unless `netfs`
 * allows it. The marks follow the mount table: a change to
 * /proc/self/mountinfo (a mount, an unmount, a remount) marks the file
 * systems again, and so does watch_remark().
 *
 * The pure parts (the window bookkeeping, the ELF header parser that
 * finds the interpreter, the turning of mincore vectors into ranges, the
 * lookups in a mount table and the file system classes) are exported for
 * the tests; the rest is I/O. Mount tables are read and parsed by proc.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "conf.h"
#include "fsjob.h"
#include "model.h"
#include "proc.h"

#define WATCH_ERROR (watch_error_quark())
GQuark watch_error_quark(void);

typedef enum {
	WATCH_ERROR_UNSUPPORTED, /* no fanotify, or no FAN_OPEN_EXEC (old kernel) */
	WATCH_ERROR_PERMISSION,  /* not allowed (not root, a restricted unit) */
	WATCH_ERROR_FAILED,      /* anything else */
} WatchError;

/* ---- the window bookkeeping (pure) ---- */

/* What an executed file is, from its first bytes. */
typedef enum {
	WATCH_IMAGE_OTHER,    /* not ELF, not a script (binfmt_misc and the like) */
	WATCH_IMAGE_ELF,
	WATCH_IMAGE_SCRIPT,   /* starts with "#!" */
} WatchImageKind;

/* What the tracker made of an exec event. */
typedef enum {
	WATCH_EXEC_SELF,      /* the daemon itself: ignored */
	WATCH_EXEC_INTERP,    /* the ELF interpreter of the image just executed */
	WATCH_EXEC_SCRIPT,    /* a #! script: its interpreter's exec follows */
	WATCH_EXEC_REJECTED,  /* exeprefix rejects the program */
	WATCH_EXEC_COUNTED,   /* a start, without a window (one ran recently) */
	WATCH_EXEC_WINDOW,    /* a start, and its start-up window opened */
} WatchExecResult;

typedef struct WatchLimits {
	gint64 window_us;     /* length of a start-up window */
	gint64 interval_us;   /* at most one window per executable this often */
	guint max_files;      /* files recorded per window */
	char **exeprefix;     /* which programs get windows (borrowed) */
	char **mapprefix;     /* which opened files are recorded (borrowed) */
} WatchLimits;

/* A file opened during a window. */
typedef struct WatchFile {
	char *path;           /* owned */
	guint64 size;         /* st_size when it was opened */
	MapFileId id;         /* its identity when it was opened (the event's
			       * descriptor); inode 0: unknown (the files of an exec) */
} WatchFile;

/* A finished window: what one start of an executable opened. */
typedef struct WatchWindow {
	char *exe;            /* the executable, owned */
	pid_t pid;
	gint64 start;         /* us, the clock the tracker was given */
	GPtrArray *files;     /* WatchFile *, in the order first opened, owned */
	guint dropped;        /* opens not recorded because of max_files */
} WatchWindow;

void watch_window_free(WatchWindow *window);

typedef struct WatchTracker WatchTracker;

/* Copies the limits (and the prefix lists); `self` is the daemon's pid. */
WatchTracker *watch_tracker_new(const WatchLimits *limits, pid_t self);
void watch_tracker_free(WatchTracker *tracker);

/*
 * An exec event: pid opened `path` (a regular file of `size` bytes) to
 * execute it, at time now (us). `asks_interp` tells that the image is an
 * ELF file naming an interpreter (PT_INTERP).
 *
 * During one execve the kernel reports up to three such opens: a script,
 * the interpreter named on its #! line, and that program's ELF
 * interpreter (ld-linux). /proc/PID/exe, and so the model, names the
 * middle one: the script is skipped (its interpreter reads it later
 * through an ordinary open, which is recorded) and the interpreter's exec
 * is not a start but a file of that start's window.
 *
 * The interpreter is recognised by its place, not its name: the kernel
 * opens it inside the same execve, before any code of the new image runs,
 * so the next exec event of that pid (within a second) is it, provided it
 * is an ELF image that asks for no interpreter itself (the kernel loads
 * no interpreter's interpreter). Resolving the name PT_INTERP gives would
 * be a path lookup of the user's choosing, and on a dead mount it never
 * returns. Any other exec by a pid that has a window ends that window:
 * the process became another program.
 *
 * At most WATCH_MAX_PIDS pids are followed at once: when the table is
 * full, the exec of a pid not in it is counted (WATCH_EXEC_COUNTED or
 * WATCH_EXEC_REJECTED) but not followed, until expire() frees entries.
 */
WatchExecResult watch_tracker_exec(WatchTracker *tracker, pid_t pid, const char *path,
				   guint64 size, WatchImageKind kind, gboolean asks_interp,
				   gint64 now);

/*
 * Bounds of the tracker's tables, entries expire within a second (pids
 * without a window) or a window's length, and with a cycle (rate limit).
 * A full table refuses new entries rather than flushing the old ones, so
 * a flood of programs cannot make the tracker forget what it follows.
 */
#define WATCH_MAX_PIDS 4096
#define WATCH_MAX_RATED 4096

/* Whether pid is in its start-up window: the one check every open pays. */
gboolean watch_tracker_wants(const WatchTracker *tracker, pid_t pid);

/*
 * An open of the regular file `path`, whose identity is *id, by pid.
 * Recorded (TRUE) if pid is in its window at now, mapprefix accepts the
 * path, the window has not recorded it yet and holds fewer than max_files
 * files.
 */
gboolean watch_tracker_open(WatchTracker *tracker, pid_t pid, const char *path,
			    const MapFileId *id, gint64 now);

typedef gboolean (*WatchAliveFunc)(pid_t pid, gpointer user_data);

/*
 * Ends the windows that are over at now (past their length, or their pid
 * is not alive) and forgets stale exec records. Returns the finished
 * windows (WatchWindow *, owned by the array), oldest first, including
 * those ended earlier by a new exec in their pid.
 */
GPtrArray *watch_tracker_expire(WatchTracker *tracker, gint64 now,
				WatchAliveFunc alive, gpointer user_data);

/*
 * Whether the tracker holds anything that expire() must look at later
 * (pids followed, windows ended; not the rate entries, which count as
 * gone once stale whether expired or not).
 */
gboolean watch_tracker_busy(const WatchTracker *tracker);

/* How many windows are open now (not yet ended). */
guint watch_tracker_windows(const WatchTracker *tracker);

/*
 * What exe's last window taught: taught is FALSE when the model gained
 * nothing from it (no new range, or a program not modelled). A window is
 * costly (every file it records is resolved, named and, at its end,
 * probed with mincore) and a program started over and over by a build
 * opens the same files each time: every window that taught nothing
 * doubles the time to that program's next window, up to
 * WATCH_BACKOFF_MAX times interval_us; one that taught something brings
 * it back to interval_us. Nothing if exe has no rate entry (expired).
 */
void watch_tracker_learned(WatchTracker *tracker, const char *exe, gboolean taught);
#define WATCH_BACKOFF_MAX 16

/* The time (us) from exe's last window to its next one; 0 if none is kept. */
gint64 watch_tracker_interval(const WatchTracker *tracker, const char *exe);

/* ---- the names of executed files (pure) ---- */

/*
 * A build starts the same few programs thousands of times, and each exec
 * event's file was named (its link in /proc/self/fd read, a path walk in
 * procfs) and classified (its first 4 KiB read) anew. The cache keeps,
 * per executed file, what those gave, keyed by what the event's statx
 * tells for free: device, inode, size, mtime, ctime (a rename or a
 * chmod changes it) and the mount the file was opened through. A file
 * replaced by an upgrade is a new inode; an inode reused has new times.
 * A directory above the file renamed changes nothing the key holds, so
 * an entry is trusted for WATCH_EXEC_NAME_TTL_US only.
 */
typedef struct WatchExecKey {
	MapFileId id;         /* dev, ino, size, mtime; ino 0: not cacheable */
	gint64 ctime;         /* ns */
	guint mnt_id;
} WatchExecKey;

typedef struct WatchExecName {
	char *raw;            /* /proc/self/fd's name of the file, owned */
	WatchImageKind kind;
	gboolean asks_interp;
	gint64 stored;        /* us, when it was named */
} WatchExecName;

#define WATCH_EXEC_NAME_TTL_US (60 * G_USEC_PER_SEC)
#define WATCH_EXEC_NAMES_MAX 1024

typedef struct WatchExecNames WatchExecNames;

WatchExecNames *watch_exec_names_new(void);
void watch_exec_names_free(WatchExecNames *names);

/* The entry of key stored less than WATCH_EXEC_NAME_TTL_US before now, or NULL (borrowed). */
const WatchExecName *watch_exec_names_lookup(WatchExecNames *names, const WatchExecKey *key,
					     gint64 now);

/*
 * Stores raw (copied), kind and asks_interp for key at now. At most
 * WATCH_EXEC_NAMES_MAX entries: a full cache drops its expired entries,
 * and if none was, all of them. Nothing for a key whose inode is 0.
 */
void watch_exec_names_store(WatchExecNames *names, const WatchExecKey *key, const char *raw,
			    WatchImageKind kind, gboolean asks_interp, gint64 now);

/* Entries held now. */
guint watch_exec_names_size(const WatchExecNames *names);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(WatchExecNames, watch_exec_names_free)

/* ---- executable images (pure) ---- */

/*
 * Classifies an executable from its first `len` bytes. For an ELF file
 * with a PT_INTERP program header inside the buffer, sets *interp_offset
 * and *interp_length (without the terminating NUL) to where the
 * interpreter's path lies in the file; otherwise sets *interp_length to 0.
 * Handles 32- and 64-bit, little- and big-endian files; a malformed header
 * is WATCH_IMAGE_OTHER.
 */
WatchImageKind watch_parse_image(const guint8 *buf, gsize len,
				 guint64 *interp_offset, guint64 *interp_length);

/* ---- mounts and file system classes (pure) ---- */

/* The mount tables are proc's (ProcMount, proc_read_mountinfo()). */

/*
 * Whether a file system type (mountinfo's name) is a network or FUSE
 * one: its files live on a server that may stop answering (nfs, nfs4,
 * cifs, smb3, 9p, ceph, afs, glusterfs, fuse and every fuse.NAME and
 * fuseblk, virtiofs, ...).
 */
gboolean watch_fs_is_remote(const char *fstype);

/* Whether a file system type holds no files worth watching (proc, sysfs, cgroup, autofs...). */
gboolean watch_fs_is_pseudo(const char *fstype);

/*
 * Whether statfs f_type is a network or FUSE file system's magic number,
 * for callers that have one. The watcher itself goes by the mount table:
 * statfs() on a FUSE or NFS file asks its server, which may not answer.
 */
gboolean watch_fs_magic_is_remote(guint64 f_type);

/*
 * The mount that holds `path` (absolute, no symlinks followed): the one
 * with the longest mount point that is path or a parent of it; the last
 * such line wins (a later mount over the same point hides earlier ones).
 * NULL if none. Borrowed from mounts.
 */
const ProcMount *watch_mounts_find(const GArray *mounts, const char *path);

/* Whether mount, or a mount it lies under, is remote (see watch_fs_is_remote). */
gboolean watch_mounts_under_remote(const GArray *mounts, const ProcMount *mount);

/*
 * Closes the event descriptors of a buffer from byte `from` on that
 * cannot be parsed (an unknown format or a bad event_len): without
 * info records every event is FAN_EVENT_METADATA_LEN bytes, so the
 * descriptors are looked for at that stride; a value is closed only if it
 * is open, is not `keep`, and is read-only and non-blocking, as every
 * event descriptor is. Returns how many were closed.
 */
guint watch_close_event_fds(const guint8 *buf, gsize len, gsize from, int keep);

/*
 * One event of a file-handle group (FAN_REPORT_FID), as parsed from a
 * read's buffer: no descriptor, the file named by the file system's id
 * (statfs f_fsid) and a handle that open_by_handle_at() takes.
 */
typedef struct WatchFidEvent {
	guint64 mask;         /* FAN_OPEN, FAN_Q_OVERFLOW, ... */
	pid_t pid;
	gint32 fd;            /* FAN_NOFD (-1) from such a group; closed by the caller if not */
	gboolean has_fid;     /* a well-formed FID record was found */
	guint32 fsid[2];      /* __kernel_fsid_t val[0], val[1] */
	gint32 handle_type;   /* struct file_handle's handle_type */
	guint32 handle_bytes; /* ... and handle_bytes, at most WATCH_HANDLE_MAX */
	gsize handle_at;      /* where in the buffer its f_handle bytes start */
} WatchFidEvent;

/* The longest handle taken (the kernel's MAX_HANDLE_SZ). */
#define WATCH_HANDLE_MAX 128

/* ---- the names of files opened by handle (pure) ---- */

/*
 * Each open by a pid in its start-up window that comes by file handle
 * was resolved (open_by_handle_at), examined (statx) and named (its link
 * in /proc/self/fd read: a path walk in procfs, the largest part), and
 * the programs that start on a desktop or in a build open the same
 * libraries, modules and locale files again and again. The cache keeps,
 * per handle, the file's path here and identity. A handle names one
 * inode of one file system (its generation included), so a file
 * replaced is a new handle; a rename is not seen, so an entry is trusted
 * for WATCH_HANDLE_NAME_TTL_US only, and the identity kept is checked
 * against the path when the window ends, as every recorded file's is.
 */
typedef struct WatchHandleKey {
	guint32 fsid[2];
	gint32 type;
	guint32 bytes;        /* at most WATCH_HANDLE_MAX */
	guint8 handle[WATCH_HANDLE_MAX];
} WatchHandleKey;

typedef struct WatchHandleName {
	char *path;           /* the file's path here, owned */
	MapFileId id;         /* its identity when named */
	gint64 stored;        /* us, when it was named */
} WatchHandleName;

#define WATCH_HANDLE_NAME_TTL_US (60 * G_USEC_PER_SEC)
#define WATCH_HANDLE_NAMES_MAX 4096

typedef struct WatchHandleNames WatchHandleNames;

WatchHandleNames *watch_handle_names_new(void);
void watch_handle_names_free(WatchHandleNames *names);

/*
 * The key of a handle of type and bytes (at most WATCH_HANDLE_MAX: FALSE
 * otherwise) on the file system of fsid; the unused bytes are zero.
 */
gboolean watch_handle_key(WatchHandleKey *key, const guint32 fsid[2], gint32 type,
			  const guint8 *handle, guint32 bytes);

/* The entry of key stored less than WATCH_HANDLE_NAME_TTL_US before now, or NULL (borrowed). */
const WatchHandleName *watch_handle_names_lookup(WatchHandleNames *names,
						 const WatchHandleKey *key, gint64 now);

/*
 * Stores path (copied) and id for key at now. At most
 * WATCH_HANDLE_NAMES_MAX entries: a full cache drops its expired
 * entries, and if none was, all of them.
 */
void watch_handle_names_store(WatchHandleNames *names, const WatchHandleKey *key,
			      const char *path, const MapFileId *id, gint64 now);

/* Entries held now. */
guint watch_handle_names_size(const WatchHandleNames *names);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(WatchHandleNames, watch_handle_names_free)

/* What watch_parse_fid_events() met besides events. */
typedef struct WatchFidParse {
	guint unknown_records; /* info records of a type not known here, skipped by their length */
	guint bad_records;     /* FID records shorter than their handle, or records running
				* past their event: the event is kept without a file */
	gboolean malformed;    /* parsing stopped at an event of an unknown version or a
				* length that does not fit: the rest of the buffer is unusable */
	gsize stopped_at;      /* the offset where parsing stopped (len when it did not) */
} WatchFidParse;

/*
 * Parses the events of one read() of a FAN_REPORT_FID group: buf holds
 * len bytes of fanotify_event_metadata, each followed by info records
 * (fanotify_event_info_header: type, pad, len) up to its event_len.
 * Appends a WatchFidEvent to events for each event whose metadata is
 * sound; an info record of a type other than FAN_EVENT_INFO_TYPE_FID is
 * skipped by its header's length, a second FID record ignored. A bad
 * record loses only its event's file (counted); a bad event (version,
 * event_len shorter than the metadata or beyond the buffer) stops the
 * parse. Returns how many events were appended.
 */
guint watch_parse_fid_events(const guint8 *buf, gsize len, GArray *events, WatchFidParse *parse);

/*
 * How many events one read may ask for: each event brings a descriptor,
 * and one the kernel cannot create loses its event. Of `limit`
 * (RLIMIT_NOFILE) less `open_fds`, 64 are kept for the rest of the
 * daemon; with 128 or fewer free, half of the free ones; never more than
 * `most` (what the buffer holds).
 */
gsize watch_events_per_read(gsize limit, gsize open_fds, gsize most);

/* ---- resident ranges (pure) ---- */

/* A byte range of one file. */
typedef struct WatchSpan {
	guint64 offset;
	guint64 length;
} WatchSpan;

/*
 * Appends to spans (GArray of WatchSpan) the runs of resident pages in a
 * mincore vector of n pages of page_bytes bytes: a run of absent pages of
 * at most `gap` pages between two resident ones is bridged (reading it
 * costs less than another request), and if more than max_spans runs
 * remain the gap is doubled until they fit. The last span ends at
 * file_size. Returns the bytes appended.
 */
guint64 watch_spans_from_mincore(const guint8 *vec, gsize n, guint64 page_bytes,
				 guint64 file_size, gsize gap, guint max_spans, GArray *spans);

/* ---- the page cache (I/O) ---- */

/* Whether watch_measure_exe() asks the page cache. */
typedef enum WatchProbe {
	WATCH_PROBE_NONE,   /* count bytes only */
	WATCH_PROBE_CACHE,  /* ask the page cache which are resident */
} WatchProbe;

/* An exe's learned set, measured. */
typedef struct WatchMeasure {
	guint64 bytes;       /* in total */
	guint64 prefetched;  /* of which the prefetch asked about read */
	guint64 probed;      /* of which the page cache could be asked about (a
			      * vanished file counts, as not resident; a file
			      * whose residency cannot be told does not) */
	guint64 resident;    /* of which are resident */
} WatchMeasure;

/*
 * Measures exe's learned set (all its maps) now, against the prefetch
 * numbered prefetch_seq (0: none). probed and resident stay 0 with
 * WATCH_PROBE_NONE.
 */
WatchMeasure watch_measure_exe(const Exe *exe, guint64 prefetch_seq, WatchProbe probe);

/*
 * The same in two steps, for a worker thread. watch_measure_set_new()
 * copies what the probe needs of exe's learned set (main thread; bytes
 * and prefetched are counted then). Each file is named by a device, that
 * of its learned identity (0: unknown); skip(path, &dev, data), if given,
 * may name another, or return TRUE to leave the file unprobed.
 * watch_measure_set_run() probes the page cache (any thread; blocking
 * file-system calls): before the first file of each device it calls
 * enter(dev, data), and FALSE leaves the file unprobed. NULL enter
 * probes every file.
 */
typedef struct WatchMeasureSet WatchMeasureSet;
typedef gboolean (*WatchEnterFunc)(guint64 dev, gpointer data);
typedef gboolean (*WatchSkipFunc)(const char *path, guint64 *dev, gpointer data);

WatchMeasureSet *watch_measure_set_new(const Exe *exe, guint64 prefetch_seq, WatchSkipFunc skip,
				       gpointer data);
void watch_measure_set_free(WatchMeasureSet *set);
void watch_measure_set_run(WatchMeasureSet *set, WatchEnterFunc enter, gpointer data);
/* The device of the set's first file (0: none, or unknown). */
guint64 watch_measure_set_dev(const WatchMeasureSet *set);
/* The measure so far: after run, complete. */
WatchMeasure watch_measure_set_result(const WatchMeasureSet *set);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(WatchMeasureSet, watch_measure_set_free)

/* ---- the watcher (I/O) ---- */

/* A learned read set: one range of a file. */
typedef struct WatchRange {
	char *path;           /* owned */
	guint64 offset;
	guint64 length;
	MapFileId id;         /* the file's identity (st_dev, st_ino, st_size, st_mtim):
			       * the one the program opened, found at path when its
			       * window ended; all 0 when unknown */
} WatchRange;

/* A GArray of WatchRange whose elements free their path. */
GArray *watch_ranges_new(void);

typedef struct WatchCallbacks {
	/* An accepted program started (pid may be gone already). */
	void (*exec)(const char *exe, pid_t pid, gpointer user_data);
	/*
	 * A start-up window ended: ranges (WatchRange) is the learned read
	 * set. Returns whether the model gained anything from it (the pace of
	 * that program's next windows, watch_tracker_learned()).
	 */
	gboolean (*learned)(const char *exe, GArray *ranges, gpointer user_data);
	/*
	 * Before a finished window's files (WatchFile *) are probed: may
	 * remove those not worth it; FALSE if nothing of the window can be
	 * learned (it is then not probed, and counts as having taught
	 * nothing). NULL: all are probed.
	 */
	gboolean (*filter)(const char *exe, GPtrArray *files, gpointer user_data);
} WatchCallbacks;

typedef struct WatchStats {
	guint64 events;       /* events read */
	guint64 execs;        /* exec events */
	guint64 starts;       /* of those, accepted starts */
	guint64 opens;        /* open events */
	guint64 recorded;     /* of those, recorded in a window */
	guint64 windows;      /* windows opened */
	guint64 learned;      /* windows finished with a non-empty read set */
	guint64 untaught;     /* windows from which the model gained nothing (see
			       * watch_tracker_learned()) */
	guint64 overflows;    /* times the kernel's queue overflowed (events lost, uncountable) */
	guint64 nofd;         /* events lost: the kernel could not make their descriptor */
	guint64 read_errors;  /* reads that failed (an event is lost with each) */
	guint64 remote;       /* events of network/FUSE files, dropped (netfs = false) */
	guint64 closed_unparsed; /* descriptors closed in a buffer of an unknown format */
	guint64 remarks;      /* times the file systems were marked again */
	guint64 flushes;      /* of those, times the old marks were flushed first */
	guint64 short_reads;  /* reads made smaller than the buffer for lack of descriptors */
	guint64 foreign;      /* events of files no path here reaches (a mount of another
				 namespace that none here shows, an overlay's layer): not used */
	guint64 translated;   /* events of files on mounts of another namespace (a copy of
				 preload's among them), used by their path here */
	/*
	 * Plain opens on file systems that can be watched by file handle come
	 * from a second group (see watch_new); foreign and translated count
	 * only events with a descriptor, since a handle is resolved through a
	 * mount of the daemon's own and its path is always one here.
	 */
	guint64 fid_events;   /* of events, read from the file-handle group */
	guint64 handles;      /* handles resolved (opens of pids in their window) */
	guint64 handle_errors; /* handles not resolved: the file is gone (ESTALE), its file
				  system is no longer in the table, or the record was bad */
	guint64 unknown_records; /* info records of an unknown type, skipped */
	/*
	 * Where the main thread's time goes (CLOCK_THREAD_CPUTIME_ID, us):
	 * reading and handling the descriptor group (exec events, and the
	 * daemon's work on each start: the launch policy, the hit
	 * measurement's submission), the handle group (plain opens), and the
	 * ends of windows (their files are probed on the file-system jobs'
	 * threads, not counted here). wakeups: times the queues were read.
	 */
	guint64 exec_names_reused; /* exec events whose file was named and classified
				    * already (WatchExecNames) */
	guint64 handle_names_reused; /* of handles, named lately (WatchHandleNames): not
				      * resolved again */
	guint64 cpu_desc_us;
	guint64 cpu_fid_us;
	guint64 cpu_window_us;
	guint64 wakeups;
	/*
	 * With netfs, network and FUSE file systems come from a group of
	 * their own that a thread marks and reads (see watch_new).
	 */
	guint64 net_events;   /* of events, read by that thread */
	guint64 net_dropped;  /* its results dropped: the queue to the main loop was full */
	guint net_marked;     /* file systems its last marking marked */
	gboolean net_stuck;   /* it has been in one mark or read past its deadline (now) */
} WatchStats;

typedef struct Watch Watch;

/*
 * Starts watching, from the configuration: exec events always, open
 * events only with `learnreads`, on the file systems holding the
 * directories that exeprefix and mapprefix accept and on every mount
 * whose mount point they accept (at most 64), leaving out network and
 * FUSE file systems unless `netfs` is set. `cycle` (seconds) is the
 * window rate limit. The watcher adds its descriptors (the group and
 * /proc/self/mountinfo) to the default main context. Fails with a
 * WATCH_ERROR when fanotify cannot be used.
 *
 * Two groups: the descriptor group takes exec events everywhere, and the
 * file-handle group (FAN_REPORT_FID) the plain opens of every marked
 * local file system whose handles resolve through a mount of the
 * daemon's showing its root (a descriptor of that mount is kept per
 * file system, at most MAX_MARKS); the plain opens of the others (no
 * fsid or handles: an overlay, a tmpfs or FUSE on older kernels, a btrfs
 * subvolume; no CAP_DAC_READ_SEARCH) stay in the descriptor group, as all do on a kernel without FAN_REPORT_FID
 * (before 5.1). A resolved handle's path is the daemon's own (no
 * namespace translation; foreign and translated count descriptor events
 * only); one that names another file than the one opened (a directory
 * covered by another mount here) is dropped when the window ends, by
 * identity. Events of both are read in the same bounded batches; the
 * handle group is read first and handled after the descriptor group is
 * drained, so that an exec is seen before the opens that follow it.
 *
 * With `netfs`, network and FUSE file systems (and mounts under them)
 * are a third group's, by descriptor, which one thread of the watcher's
 * marks and reads: marking may ask such a file system (statfs for an
 * fsid, on kernels that check it), and
 * reading makes the kernel open each event's file in the reader's
 * context, either of which waits as long as a dead server does. The
 * main thread hands that thread the mount points from the mount table
 * (never looked up), and takes its results (pid, exec or open, the name
 * in /proc/self/fd, the identity, the kind of an executed image) through
 * a bounded queue; a thread inside one mark or read for longer than
 * FSJOB_DEADLINE_US is reported stuck (WatchStats.net_stuck, the dump)
 * and never waited for: watch_free() lets go of it without a join, and
 * the last of the two to let go closes the group. Without `netfs` there
 * is no third group and no thread. At most one such thread lives:
 * watch_renew() hands it on to the new watcher.
 *
 * Each read of events asks for no more events than the daemon has free
 * descriptors (RLIMIT_NOFILE less those open, less a reserve of 64):
 * every event brings a descriptor, and one the kernel cannot create
 * loses its event. The unit should set LimitNOFILE well above 1024.
 * Events lost anyway (queue overflows, events without a descriptor,
 * failed reads) are counted in WatchStats and in watch_describe().
 */
Watch *watch_new(const Conf *conf, const WatchCallbacks *callbacks, gpointer user_data,
		 GError **error);
void watch_free(Watch *watch);

/*
 * Replaces old (freed; NULL is allowed) with a watcher for conf, as
 * watch_new(). The netfs reader of old, while its thread lives, goes on
 * as the new watcher's (with netfs on; with netfs off it is told to end,
 * and kept so that netfs turned on again revives it) instead of a
 * second one being started: a reader stuck on a dead server would
 * otherwise stay beside the new one, a thread and a fanotify group per
 * SIGHUP. The new watcher's marking then waits until the stuck mark or
 * read returns, and watch_describe() says so.
 */
Watch *watch_renew(Watch *old, const Conf *conf, const WatchCallbacks *callbacks,
		   gpointer user_data, GError **error);

/*
 * The netfs reader of a watcher that is gone while no watcher replaces
 * it (learnreads and learnexec both turned off). Its thread may be stuck
 * on a dead server; held, it is handed to the next watcher, so turning
 * the features on again never starts a second reader beside it.
 */
typedef struct NetReader WatchReader;

/*
 * Frees watch (NULL is allowed) as watch_free() does, but returns its
 * netfs reader (told to end; the caller's reference) instead of letting
 * go of it; NULL when it had none.
 */
WatchReader *watch_retire(Watch *watch);

/* watch_renew() for a watcher after watch_retire(): reader (NULL is allowed) is taken over. */
Watch *watch_resume(WatchReader *reader, const Conf *conf, const WatchCallbacks *callbacks,
		    gpointer user_data, GError **error);

/* TRUE while reader is inside a mark or a read (see watch_reader_busy); NULL: FALSE. */
gboolean watch_retired_reader_busy(const WatchReader *reader);

/* Lets go of a retired reader: told to end, not waited for. NULL is allowed. */
void watch_reader_free(WatchReader *reader);

/*
 * From now on a finished start-up window is learned (its files opened and
 * their residency asked) on a worker of pool, with its deadline, and the
 * learned callback follows in the main context; a job abandoned on a hung
 * mount learns nothing. NULL (the default): learned at once, in the
 * caller's thread, as tools and tests do. The pool is borrowed: set NULL
 * before freeing it.
 */
void watch_set_fsjob(Watch *watch, FsJobPool *pool);

/*
 * Whether a thread of the watcher's (the netfs reader, also one let go
 * and not yet ended) is inside a mark or a read now: a call that a dead
 * server can keep from returning.
 */
gboolean watch_reader_busy(const Watch *watch);

/* Reads pending events now (the main loop does this by itself). */
void watch_dispatch(Watch *watch);
const WatchStats *watch_get_stats(const Watch *watch);

/*
 * Marks the file systems again, from the current mount table: a file
 * system mounted or remounted since is watched from now on. Done by
 * itself when /proc/self/mountinfo changes; the daemon calls it on
 * SIGHUP too. Marks are added (a mark is dropped by the kernel with its
 * file system), so no event is lost while this runs; only when a file
 * system still mounted is no longer wanted are the old marks flushed
 * first.
 */
void watch_remark(Watch *watch);

/*
 * What is watched now and what was lost, for the log and the dump:
 * "fanotify on N file systems (...), watching ...; ... lost ...". The
 * text is the watcher's, valid until its next call or event.
 */
const char *watch_describe(const Watch *watch);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(WatchTracker, watch_tracker_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WatchWindow, watch_window_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Watch, watch_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WatchReader, watch_reader_free)
