/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MountNs: translation of paths from other mount namespaces.
 *
 * A mount shows one directory (its root) of one file system (its device)
 * at one place (its mount point). A file at path P in a namespace lies
 * under the mount M with the longest mount point that contains P; within
 * M's file system it is at M.root + (P - M.mountpoint). Any mount here
 * of the same device whose root contains that file-system path shows the
 * file, at H.mountpoint + (that path - H.root), unless another mount
 * covers the place. Everything is done on strings: no path a process
 * chose is looked up here (the reader checks, after opening, that it
 * opened the file the kernel reported: see readahead.c).
 */
#include "config.h"

#include "mountns.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* One mount table, for the processes of one namespace with one root. */
typedef struct Table {
	GArray *mounts;       /* ProcMount, mount points from the namespace's root; NULL: unreadable */
} Table;

struct MountNs {
	gboolean enabled;     /* preload's own namespace could be read at the last begin */
	guint64 self_ns;      /* preload's mount namespace inode */
	GArray *host;         /* ProcMount: preload's mounts, NULL until needed this scan */
	GHashTable *tables;   /* "ns:root" (owned) -> Table * (owned) */
	GHashTable *pids;     /* pid -> Table * (borrowed) or SAME_NS, this scan */
	GHashTable *counted;  /* pids counted as in another namespace this scan */
	MountNsStats stats;
};

/* Processes whose table is remembered for a scan, at most. */
#define MOUNTNS_PIDS_MAX 65536

/* Marks a pid of preload's own namespace in MountNs.pids. */
static Table same_ns_marker;
#define SAME_NS (&same_ns_marker)

static void
table_free(gpointer data)
{
	Table *t = data;

	if (t->mounts)
		g_array_unref(t->mounts);
	g_free(t);
}

MountNs *
mountns_new(void)
{
	MountNs *ns = g_new0(MountNs, 1);

	ns->tables = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, table_free);
	ns->pids = g_hash_table_new(NULL, NULL);
	ns->counted = g_hash_table_new(NULL, NULL);
	return ns;
}

void
mountns_free(MountNs *ns)
{
	if (!ns)
		return;
	g_clear_pointer(&ns->host, g_array_unref);
	g_hash_table_unref(ns->tables);
	g_hash_table_unref(ns->pids);
	g_hash_table_unref(ns->counted);
	g_free(ns);
}

void
mountns_begin(MountNs *ns)
{
	g_return_if_fail(ns != NULL);

	/* On a fake /proc (tests, replays) there is no namespace to compare with. */
	ns->enabled = proc_get_mnt_ns(0, &ns->self_ns);
	g_clear_pointer(&ns->host, g_array_unref);
	g_hash_table_remove_all(ns->tables);
	g_hash_table_remove_all(ns->pids);
	g_hash_table_remove_all(ns->counted);
	ns->stats.processes = 0;
	ns->stats.namespaces = 0;
}

const MountNsStats *
mountns_get_stats(const MountNs *ns)
{
	g_return_val_if_fail(ns != NULL, NULL);
	return &ns->stats;
}

const char *
mountns_drop_name(MountNsDrop why)
{
	switch (why) {
	case MOUNTNS_DROP_NOT_ON_HOST:
		return "not-on-host";
	case MOUNTNS_DROP_NO_MOUNT:
		return "outside-mounts";
	case MOUNTNS_DROP_DEVICE:
		return "device-mismatch";
	case MOUNTNS_DROP_UNREADABLE:
		return "unreadable-namespace";
	case MOUNTNS_N_DROPS:
	default:
		break;
	}
	return "unknown";
}

/* ---- the pure part ---- */

/*
 * The part of path below dir, "" if path is dir, or NULL if dir does not
 * contain path (component-wise: "/usr" contains "/usr/bin", not "/usrx").
 */
static const char *
below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/' ? path : NULL;
	if (strncmp(path, dir, n) != 0)
		return NULL;
	if (path[n] == '\0' || path[n] == '/')
		return path + n;
	return NULL;
}

/* dir + rest, where rest is "" or starts with '/' ("/" adds nothing). */
static char *
join(const char *dir, const char *rest)
{
	if (rest[0] == '\0' || strcmp(rest, "/") == 0)
		return g_strdup(dir);
	if (strcmp(dir, "/") == 0)
		return g_strdup(rest);
	return g_strconcat(dir, rest, NULL);
}

/* The index of the mount holding path: the longest mount point, the later on a tie; -1 none. */
static gint
holder(const GArray *mounts, const char *path)
{
	gint best = -1;
	size_t best_len = 0;

	for (guint i = 0; i < mounts->len; i++) {
		const ProcMount *m = &g_array_index(mounts, ProcMount, i);
		size_t len = strlen(m->mountpoint);

		if (!below(path, m->mountpoint))
			continue;
		if (best < 0 || len >= best_len) {
			best = (gint)i;
			best_len = len;
		}
	}
	return best;
}

char *
mountns_translate_path(const GArray *ns_mounts, const GArray *host_mounts,
		       const char *path, guint64 dev, MountNsDrop *why)
{
	const ProcMount *m;
	gint i;

	g_return_val_if_fail(ns_mounts != NULL && host_mounts != NULL, NULL);
	g_return_val_if_fail(path != NULL && why != NULL, NULL);

	i = path[0] == '/' ? holder(ns_mounts, path) : -1;
	if (i < 0) {
		*why = MOUNTNS_DROP_NO_MOUNT;
		return NULL;
	}
	m = &g_array_index(ns_mounts, ProcMount, i);
	if (dev != 0 && (major(dev) != m->dev_major || minor(dev) != m->dev_minor)) {
		*why = MOUNTNS_DROP_DEVICE;
		return NULL;
	}
	return mountns_translate_on_mount(m, host_mounts, path, why);
}

char *
mountns_translate_on_mount(const ProcMount *mount, const GArray *host_mounts, const char *path,
			   MountNsDrop *why)
{
	g_autofree char *fs_path = NULL;
	const char *rest;

	g_return_val_if_fail(mount != NULL && host_mounts != NULL, NULL);
	g_return_val_if_fail(path != NULL && why != NULL, NULL);

	rest = below(path, mount->mountpoint);
	if (!rest) {
		*why = MOUNTNS_DROP_NO_MOUNT;
		return NULL;
	}
	fs_path = join(mount->root, rest);

	for (guint h = 0; h < host_mounts->len; h++) {
		const ProcMount *hm = &g_array_index(host_mounts, ProcMount, h);
		g_autofree char *candidate = NULL;
		const char *inside;

		if (hm->dev_major != mount->dev_major || hm->dev_minor != mount->dev_minor)
			continue;
		inside = below(fs_path, hm->root);
		if (!inside)
			continue;
		candidate = join(hm->mountpoint, inside);
		/* Another mount over the place would show another file there. */
		if (holder(host_mounts, candidate) != (gint)h)
			continue;
		return g_steal_pointer(&candidate);
	}
	*why = MOUNTNS_DROP_NOT_ON_HOST;
	return NULL;
}

void
mountns_prefix_root(GArray *mounts, const char *root)
{
	g_return_if_fail(mounts != NULL && root != NULL);

	if (strcmp(root, "/") == 0)
		return;
	for (guint i = 0; i < mounts->len; i++) {
		ProcMount *m = &g_array_index(mounts, ProcMount, i);
		char *full = join(root, m->mountpoint);

		g_free(m->mountpoint);
		m->mountpoint = full;
	}
}

/* ---- the tables ---- */

static GArray *
new_mounts(void)
{
	GArray *mounts = g_array_new(FALSE, FALSE, sizeof(ProcMount));

	g_array_set_clear_func(mounts, proc_mount_clear);
	return mounts;
}

/* The table for pid this scan: SAME_NS, a table (maybe unreadable), or NULL if pid is gone. */
static Table *
table_for(MountNs *ns, pid_t pid)
{
	g_autofree char *root = NULL;
	g_autofree char *key = NULL;
	g_autoptr(GError) error = NULL;
	guint64 pid_ns;
	Table *t;

	t = g_hash_table_lookup(ns->pids, GINT_TO_POINTER(pid));
	if (t)
		return t;
	/* One entry per process seen this scan; a flood of short-lived ones starts it over. */
	if (g_hash_table_size(ns->pids) >= MOUNTNS_PIDS_MAX)
		g_hash_table_remove_all(ns->pids);
	/*
	 * Read at every scan, not kept by (pid, start time): setns(2) and
	 * unshare(CLONE_NEWNS) move a running process into another namespace
	 * and change neither, and the launchers of sandboxes do just that
	 * before they exec the program (bubblewrap, snap-confine, the child
	 * of systemd-nspawn, runc's init). A namespace kept from before would
	 * make the new program's paths look like preload's. The read is one
	 * readlink of a few microseconds per process.
	 */
	if (!proc_get_mnt_ns(pid, &pid_ns)) {
		if (errno == ENOENT || errno == ESRCH)
			return NULL;
		pid_ns = 0;   /* not ours to read: unreadable, never "the same" */
	}
	if (pid_ns == ns->self_ns) {
		g_hash_table_insert(ns->pids, GINT_TO_POINTER(pid), SAME_NS);
		return SAME_NS;
	}
	root = pid_ns != 0 ? proc_get_process_root(pid) : NULL;
	key = g_strdup_printf("%" G_GUINT64_FORMAT ":%s", pid_ns, root ? root : "");
	t = g_hash_table_lookup(ns->tables, key);
	if (!t) {
		if (g_hash_table_size(ns->tables) >= MOUNTNS_CACHE_MAX) {
			/* Past the bound, nothing more is read this scan. */
			t = g_hash_table_lookup(ns->tables, "");
			if (!t) {
				t = g_new0(Table, 1);
				g_hash_table_insert(ns->tables, g_strdup(""), t);
			}
		} else {
			t = g_new0(Table, 1);
			if (root && pid_ns != 0) {
				t->mounts = new_mounts();
				if (proc_read_mountinfo(pid, t->mounts, &error)) {
					mountns_prefix_root(t->mounts, root);
				} else {
					g_debug("pid %d: mount table not read: %s", (int)pid, error->message);
					g_clear_pointer(&t->mounts, g_array_unref);
				}
			}
			g_hash_table_insert(ns->tables, g_steal_pointer(&key), t);
			ns->stats.namespaces++;
		}
	}
	g_hash_table_insert(ns->pids, GINT_TO_POINTER(pid), t);
	return t;
}

MountNsResult
mountns_translate(MountNs *ns, pid_t pid, const char *path, guint64 dev,
		  gboolean count_process, char **host_path, MountNsDrop *why)
{
	Table *t;
	char *result;

	g_return_val_if_fail(ns != NULL, MOUNTNS_DROPPED);
	g_return_val_if_fail(path != NULL && host_path != NULL && why != NULL, MOUNTNS_DROPPED);

	*host_path = NULL;
	if (!ns->enabled)
		return MOUNTNS_SAME;
	t = table_for(ns, pid);
	if (t == SAME_NS)
		return MOUNTNS_SAME;
	if (count_process && t && g_hash_table_add(ns->counted, GINT_TO_POINTER(pid)))
		ns->stats.processes++;
	if (!t || !t->mounts) {
		*why = MOUNTNS_DROP_UNREADABLE;
		ns->stats.dropped[*why]++;
		return MOUNTNS_DROPPED;
	}
	if (!ns->host) {
		g_autoptr(GError) error = NULL;

		ns->host = new_mounts();
		if (!proc_read_mountinfo(0, ns->host, &error)) {
			g_warning("cannot read this process's mount table: %s", error->message);
			g_array_set_size(ns->host, 0);
		}
	}
	result = mountns_translate_path(t->mounts, ns->host, path, dev, why);
	if (!result) {
		ns->stats.dropped[*why]++;
		return MOUNTNS_DROPPED;
	}
	ns->stats.translated++;
	*host_path = result;
	return MOUNTNS_TRANSLATED;
}

/* ---- the devices of this namespace's mounts ---- */

/* A mount id not in the table reads it again at most this often. */
#define MOUNTDEVS_REREAD_US G_USEC_PER_SEC

struct MountDevs {
	GMutex lock;
	GHashTable *devs;     /* mount id -> guint64 * device (owned) */
	gint64 read_at;       /* monotonic us of the last read, 0 never */
};

MountDevs *
mountdevs_new(void)
{
	MountDevs *md = g_new0(MountDevs, 1);

	g_mutex_init(&md->lock);
	md->devs = g_hash_table_new_full(NULL, NULL, NULL, g_free);
	return md;
}

void
mountdevs_free(MountDevs *md)
{
	if (!md)
		return;
	g_hash_table_unref(md->devs);
	g_mutex_clear(&md->lock);
	g_free(md);
}

/* The device of mount id, 0 if unknown; md->lock held. */
static guint64
mount_dev(MountDevs *md, guint id)
{
	const guint64 *dev = g_hash_table_lookup(md->devs, GUINT_TO_POINTER(id));
	gint64 now = g_get_monotonic_time();
	g_autoptr(GArray) mounts = NULL;

	if (dev)
		return *dev;
	if (md->read_at != 0 && now - md->read_at < MOUNTDEVS_REREAD_US && now >= md->read_at)
		return 0;
	md->read_at = now;
	mounts = new_mounts();
	if (!proc_read_mountinfo(0, mounts, NULL))
		return 0;
	g_hash_table_remove_all(md->devs);
	for (guint i = 0; i < mounts->len; i++) {
		const ProcMount *m = &g_array_index(mounts, ProcMount, i);
		guint64 *value = g_new(guint64, 1);

		*value = (guint64)makedev(m->dev_major, m->dev_minor);
		g_hash_table_replace(md->devs, GUINT_TO_POINTER(m->id), value);
	}
	dev = g_hash_table_lookup(md->devs, GUINT_TO_POINTER(id));
	return dev ? *dev : 0;
}

gboolean
mountdevs_same_file(MountDevs *md, int dirfd, const char *path, int flags,
		    guint64 st_dev, guint64 st_ino, guint64 dev, guint64 ino)
{
#ifdef STATX_MNT_ID
	struct statx stx;
	guint64 found;
#endif

	g_return_val_if_fail(md != NULL, FALSE);

	if (st_ino != ino)
		return FALSE;
	if (st_dev == dev)
		return TRUE;
#ifdef STATX_MNT_ID
	if (statx(dirfd, path, flags | AT_STATX_DONT_SYNC, STATX_MNT_ID | STATX_INO, &stx) != 0 ||
	    !(stx.stx_mask & STATX_MNT_ID) || stx.stx_ino != ino)
		return FALSE;
	g_mutex_lock(&md->lock);
	found = mount_dev(md, (guint)stx.stx_mnt_id);
	g_mutex_unlock(&md->lock);
	return found != 0 && found == dev;
#else
	(void)dirfd;
	(void)path;
	(void)flags;
	return FALSE;
#endif
}

/* ---- the mounts of event descriptors, by id ---- */

/* preload's own table is read again at most this often for an id in no table. */
#define MOUNTIDS_OWN_REREAD_US G_USEC_PER_SEC
/* Other namespaces' mounts are trusted this long after they were read (ids are reused). */
#define MOUNTIDS_OTHER_TTL_US (10 * G_USEC_PER_SEC)
/* At most this many processes' tables are read, and mounts kept, per period. */
#define MOUNTIDS_PIDS_MAX 1024
#define MOUNTIDS_OTHER_MAX 65536

struct MountIds {
	GArray *own;          /* ProcMount: preload's mounts, NULL until read */
	GHashTable *own_ids;  /* mount id -> the ProcMount in own (borrowed) */
	gint64 own_read;      /* monotonic us own was read, 0: to be read */
	GHashTable *other;    /* mount id -> ProcMount * (owned) of other namespaces,
			       * mount points from their namespace's root */
	GHashTable *pids_read; /* pids whose table was read this period */
	GHashTable *absent;   /* mount ids found in no table this period */
	gint64 other_since;   /* monotonic us this period began, 0: none yet */
};

static void
mount_free(gpointer data)
{
	proc_mount_clear(data);
	g_free(data);
}

MountIds *
mountids_new(void)
{
	MountIds *ids = g_new0(MountIds, 1);

	ids->own_ids = g_hash_table_new(NULL, NULL);
	ids->other = g_hash_table_new_full(NULL, NULL, NULL, mount_free);
	ids->pids_read = g_hash_table_new(NULL, NULL);
	ids->absent = g_hash_table_new(NULL, NULL);
	return ids;
}

void
mountids_free(MountIds *ids)
{
	if (!ids)
		return;
	g_clear_pointer(&ids->own, g_array_unref);
	g_hash_table_unref(ids->own_ids);
	g_hash_table_unref(ids->other);
	g_hash_table_unref(ids->pids_read);
	g_hash_table_unref(ids->absent);
	g_free(ids);
}

void
mountids_forget_own(MountIds *ids)
{
	g_return_if_fail(ids != NULL);
	ids->own_read = 0;
	/* An id found nowhere may be one of the mounts just made. */
	g_hash_table_remove_all(ids->absent);
}

/* Reads preload's own table; FALSE (and the old one kept) if it cannot be read. */
static gboolean
read_own(MountIds *ids, gint64 now)
{
	g_autoptr(GArray) mounts = new_mounts();
	g_autoptr(GError) error = NULL;

	ids->own_read = now;
	if (!proc_read_mountinfo(0, mounts, &error)) {
		g_debug("cannot read this process's mount table: %s", error->message);
		return FALSE;
	}
	g_clear_pointer(&ids->own, g_array_unref);
	ids->own = g_steal_pointer(&mounts);
	g_hash_table_remove_all(ids->own_ids);
	for (guint i = 0; i < ids->own->len; i++) {
		ProcMount *m = &g_array_index(ids->own, ProcMount, i);

		g_hash_table_insert(ids->own_ids, GUINT_TO_POINTER(m->id), m);
	}
	return TRUE;
}

/*
 * Adds the mounts of pid's namespace that are not preload's to
 * ids->other, their mount points from the namespace's root (mountinfo
 * names them from the process's root, /proc/PID/root as this process
 * names it is where that lies). FALSE if the table cannot be read.
 */
static gboolean
read_other(MountIds *ids, pid_t pid)
{
	g_autoptr(GArray) mounts = new_mounts();
	g_autofree char *root = proc_get_process_root(pid);

	g_hash_table_add(ids->pids_read, GINT_TO_POINTER(pid));
	if (!root || root[0] != '/' || !proc_read_mountinfo(pid, mounts, NULL))
		return FALSE;
	mountns_prefix_root(mounts, root);
	for (guint i = 0; i < mounts->len; i++) {
		ProcMount *m = &g_array_index(mounts, ProcMount, i);
		ProcMount *copy;

		if (g_hash_table_size(ids->other) >= MOUNTIDS_OTHER_MAX)
			break;
		if (g_hash_table_contains(ids->own_ids, GUINT_TO_POINTER(m->id)))
			continue;
		copy = g_new(ProcMount, 1);
		*copy = *m;
		memset(m, 0, sizeof(*m));   /* the strings moved to copy */
		g_hash_table_replace(ids->other, GUINT_TO_POINTER(copy->id), copy);
	}
	return TRUE;
}

MountNsResult
mountids_event_path(MountIds *ids, pid_t pid, guint mount_id, const char *path, gint64 now,
		    char **host_path, MountNsDrop *why)
{
	const ProcMount *m;
	gboolean read = FALSE, readable = TRUE;

	g_return_val_if_fail(ids != NULL && path != NULL, MOUNTNS_DROPPED);
	g_return_val_if_fail(host_path != NULL && why != NULL, MOUNTNS_DROPPED);

	*host_path = NULL;
	if (ids->own_read == 0 || (!ids->own && (now - ids->own_read >= MOUNTIDS_OWN_REREAD_US ||
						  now < ids->own_read)))
		(void)read_own(ids, now);
	if (!ids->own)
		return MOUNTNS_SAME;   /* no table of its own to compare with: cannot tell */
	if (g_hash_table_contains(ids->own_ids, GUINT_TO_POINTER(mount_id)))
		return MOUNTNS_SAME;

	if (ids->other_since == 0 || now - ids->other_since >= MOUNTIDS_OTHER_TTL_US ||
	    now < ids->other_since) {
		g_hash_table_remove_all(ids->other);
		g_hash_table_remove_all(ids->pids_read);
		g_hash_table_remove_all(ids->absent);
		ids->other_since = now;
	}
	m = g_hash_table_lookup(ids->other, GUINT_TO_POINTER(mount_id));
	if (!m && g_hash_table_contains(ids->absent, GUINT_TO_POINTER(mount_id))) {
		*why = MOUNTNS_DROP_NO_MOUNT;
		return MOUNTNS_DROPPED;
	}
	if (!m) {
		/* A mount made here since the table was read? */
		if (now - ids->own_read >= MOUNTIDS_OWN_REREAD_US || now < ids->own_read) {
			(void)read_own(ids, now);
			if (g_hash_table_contains(ids->own_ids, GUINT_TO_POINTER(mount_id)))
				return MOUNTNS_SAME;
		}
		/* A mount of the process's namespace, read once a period. */
		if (pid > 0 && !g_hash_table_contains(ids->pids_read, GINT_TO_POINTER(pid)) &&
		    g_hash_table_size(ids->pids_read) < MOUNTIDS_PIDS_MAX) {
			read = TRUE;
			readable = read_other(ids, pid);
		}
		m = g_hash_table_lookup(ids->other, GUINT_TO_POINTER(mount_id));
		/*
		 * Not in the table of the process that opened the file: an
		 * overlay's layer, whose opens (a build in a chrooted container)
		 * would otherwise read a table per process.
		 */
		if (!m && read && readable && g_hash_table_size(ids->absent) < MOUNTIDS_OTHER_MAX)
			g_hash_table_add(ids->absent, GUINT_TO_POINTER(mount_id));
	}
	if (!m) {
		/*
		 * In no namespace's table: an overlay's layer (overlayfs opens its
		 * files through private mounts, named from the layer's root), or
		 * a namespace gone with its process.
		 */
		*why = readable ? MOUNTNS_DROP_NO_MOUNT : MOUNTNS_DROP_UNREADABLE;
		return MOUNTNS_DROPPED;
	}
	*host_path = mountns_translate_on_mount(m, ids->own, path, why);
	return *host_path ? MOUNTNS_TRANSLATED : MOUNTNS_DROPPED;
}
