/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MountNs: the paths of a process in another mount namespace, as paths
 * preload can open.
 *
 * The kernel names a process's executable and maps as that process's
 * mount namespace sees them (a path that is not reachable from preload's
 * root is printed from the root of the other namespace). The same string
 * in preload's namespace may be another file or none. A path is
 * translated through the process's /proc/PID/mountinfo (which mount
 * holds it, and which directory of which file system that mount shows)
 * and preload's own (where that directory of that file system is
 * visible here). Where no mount of preload's namespace shows the file (a
 * tmpfs or an overlay private to the namespace), the path is dropped:
 * preload never learns what it cannot reach, and never reads another
 * file of the same name. The rules are in doc/namespaces.md.
 *
 * The translation itself (mountns_translate_path()) is pure. The MountNs
 * object caches one mount table per (namespace, process root) for one
 * scan, at most MOUNTNS_CACHE_MAX of them, and counts what it did.
 *
 * Ownership: the MountNs owns its tables; results are new strings owned
 * by the caller.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "proc.h"

typedef struct MountNs MountNs;

/* Why a path was not translated. */
typedef enum {
	MOUNTNS_DROP_NOT_ON_HOST, /* no mount here shows that file (a private tmpfs or overlay) */
	MOUNTNS_DROP_NO_MOUNT,    /* no mount of the namespace holds the path (it lies outside) */
	MOUNTNS_DROP_DEVICE,      /* the kernel's device for the file is not its mount's */
	MOUNTNS_DROP_UNREADABLE,  /* the namespace or its mount table could not be read, or is too big */
	MOUNTNS_N_DROPS
} MountNsDrop;

/* What was done, since the MountNs was made (processes: at the last scan). */
typedef struct MountNsStats {
	guint processes;      /* processes in another mount namespace at the last scan */
	guint namespaces;     /* mount tables read for the last scan (namespace, root) */
	guint64 translated;   /* paths (executables and maps) translated to another path here */
	guint64 dropped[MOUNTNS_N_DROPS]; /* paths not learned, by reason */
} MountNsStats;

/* Mount tables kept for one scan; beyond, the processes of further namespaces are dropped. */
#define MOUNTNS_CACHE_MAX 256

/* The result of a translation. */
typedef enum {
	MOUNTNS_SAME,         /* the process shares preload's namespace: the path is right as it is */
	MOUNTNS_TRANSLATED,   /* *host_path is where the file is here */
	MOUNTNS_DROPPED,      /* no path here reaches the file */
} MountNsResult;

MountNs *mountns_new(void);
void mountns_free(MountNs *ns);

/*
 * A new scan: the namespaces and mount tables are read again when next
 * needed (mounts come and go), and the process count starts from 0.
 */
void mountns_begin(MountNs *ns);

/*
 * The path of pid's file `path` here. dev is the device the kernel
 * reports for the file (makedev(major, minor) of its maps line), or 0 to
 * take the device of the mount that holds path (an executable named by
 * /proc/PID/exe). On MOUNTNS_TRANSLATED, *host_path is set (owned by
 * the caller); on MOUNTNS_DROPPED, *why says why. Counts the process once
 * per scan when count_process is TRUE.
 */
MountNsResult mountns_translate(MountNs *ns, pid_t pid, const char *path, guint64 dev,
				gboolean count_process, char **host_path, MountNsDrop *why);

const MountNsStats *mountns_get_stats(const MountNs *ns);
/* A short name for a drop reason, for the dump ("not-on-host", ...). */
const char *mountns_drop_name(MountNsDrop why);

/*
 * The translation: path is in the namespace whose mounts are ns_mounts
 * (ProcMount, mount points as the paths to translate name them, in
 * mountinfo order: of two mounts on one point the later one is on top);
 * host_mounts are preload's. The mount of ns_mounts that holds path
 * (longest mount point, the later one on a tie) gives the file system's
 * device and the file's path within it; the result is the first mount of
 * host_mounts of that device whose root contains that path, and that no
 * later or deeper mount covers at the result. NULL with *why set when
 * there is none. dev 0 takes the holding mount's device; another device
 * than the mount's is MOUNTNS_DROP_DEVICE.
 */
char *mountns_translate_path(const GArray *ns_mounts, const GArray *host_mounts,
			     const char *path, guint64 dev, MountNsDrop *why);

/*
 * The path here of a file known to lie on `mount` (a mount of another
 * namespace, its mount point named from that namespace's root), which
 * the kernel names `path` from the same root (as /proc/self/fd prints
 * a descriptor of a file there): the file is at mount->root + (path -
 * mount point) within its file system, and the result is where a mount
 * of preload's (host_mounts) shows that place, as mountns_translate_path()
 * finds it. Unlike there, the mount is not looked up by path: a file
 * opened before another mount covered its place is still its own file.
 * NULL with *why set when there is none (MOUNTNS_DROP_NO_MOUNT: path
 * does not lie under the mount point).
 */
char *mountns_translate_on_mount(const ProcMount *mount, const GArray *host_mounts,
				 const char *path, MountNsDrop *why);

/*
 * Prefixes each mount point of mounts with root (the process root,
 * /proc/PID/root, as preload names it): mountinfo names mount points from
 * the process's root, its maps from its namespace's root. "/" changes
 * nothing.
 */
void mountns_prefix_root(GArray *mounts, const char *root);

/*
 * MountDevs: the device of each mount of preload's namespace, by mount
 * id, to compare a file preload opened with the identity a maps line
 * gave. The kernel reports in maps the device of the file system (its
 * superblock, as /proc/self/mountinfo does); stat reports st_dev, which
 * btrfs makes one per subvolume. The device of the mount a file was
 * opened through (statx STATX_MNT_ID) is the maps line's. Safe to share
 * between threads.
 */
typedef struct MountDevs MountDevs;

MountDevs *mountdevs_new(void);
void mountdevs_free(MountDevs *md);
/*
 * Whether the file of fd (dirfd/path with AT_EMPTY_PATH or
 * AT_SYMLINK_NOFOLLOW in flags, as statx takes them), whose st_ino is
 * ino, is the file of device dev and inode ino: st_dev is dev, or the
 * device of the mount it lies on is. The table is read again (at most
 * once a second) when a mount id is not in it. FALSE when the kernel
 * cannot say (no STATX_MNT_ID: before Linux 5.8).
 */
gboolean mountdevs_same_file(MountDevs *md, int dirfd, const char *path, int flags,
			     guint64 st_dev, guint64 st_ino, guint64 dev, guint64 ino);

/*
 * MountIds: the mount a fanotify event's file lies on, by the mount id
 * of its descriptor (statx STATX_MNT_ID), and the path that file has
 * here.
 *
 * fanotify names a file by the path of the descriptor it opened, which
 * /proc/self/fd prints from the root of the namespace the file's mount
 * belongs to. On a mount of preload's own namespace that path is the
 * file's here. Every other namespace has mounts of its own, with ids of
 * their own, even where it is a copy of preload's: a systemd service
 * with ProtectSystem= or PrivateTmp= runs preload in such a copy, so the
 * programs it watches (the host's, or a container's when preload runs
 * inside one) all open their files through mounts that are not
 * preload's. Such a mount is found in the table of the process that
 * opened the file and its path translated (mountns_translate_on_mount());
 * a copy of a mount of preload's gives the same path. A file on a mount
 * in no table (an overlay's layer: overlayfs opens the files of a merged
 * tree through private mounts, named from the layer's root) or one no
 * mount here shows is dropped.
 *
 * preload's own table is read when first needed and again (at most once
 * a second) when an id is in no table. The tables of other namespaces
 * are kept for MOUNTIDS_OTHER_TTL_US: the kernel reuses the id of a
 * mount that is gone, and a read set learned through an id reused within
 * that time names a path whose file is checked by its identity before it
 * is read (readahead.c). Each process's table is read at most once in
 * that time, and no more than MOUNTIDS_PIDS_MAX of them; an id that the
 * opening process's table lacks (an overlay's layer) is remembered as
 * absent for that time too (or until preload's own table changes), so
 * that the opens of many processes on one layer read no more tables.
 *
 * Ownership: the MountIds owns its tables; results are new strings owned
 * by the caller. Not thread-safe: the watcher's, on the main thread.
 */
typedef struct MountIds MountIds;

MountIds *mountids_new(void);
void mountids_free(MountIds *ids);

/* The mount table changed: preload's own is read again when next needed. */
void mountids_forget_own(MountIds *ids);

/*
 * The path here of the file that pid opened through mount mount_id, named
 * `path` by /proc/self/fd, at now (monotonic us). MOUNTNS_SAME: a mount
 * of preload's namespace, path is right as it is (also when preload's own
 * table cannot be read: nothing to tell by); MOUNTNS_TRANSLATED: the file
 * is at *host_path (owned by the caller; the same string for a copy of a
 * mount of preload's); MOUNTNS_DROPPED: no path here reaches it, *why
 * says why.
 */
MountNsResult mountids_event_path(MountIds *ids, pid_t pid, guint mount_id, const char *path,
				  gint64 now, char **host_path, MountNsDrop *why);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(MountNs, mountns_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MountIds, mountids_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MountDevs, mountdevs_free)
