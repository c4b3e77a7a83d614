/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Learn: turns what the scan found into model changes.
 *
 * Half a cycle after the scan (so that a process seen starting has
 * mapped its libraries), learn applies the flips to the chains, reads
 * the maps of the new executables and admits those big enough, and
 * accounts running time, in that order: changed exes first so that the
 * chains of new exes start from current change times (0.6.4 did it the
 * other way round and recorded stale transitions).
 *
 * Learning does not stop at admission (0.6.4 froze an exe's maps at first
 * sight): a known exe that starts again has its maps read once more, new
 * libraries are added and ranges it stopped mapping are dropped after a
 * few runs. Each map remembers its file's identity (device, inode, size,
 * mtime); a few maps are checked every cycle, and a map whose file is gone
 * or was replaced is never read ahead again and is removed at the next
 * maintenance (unless a run of its exe finds it again). The maintenance,
 * once an hour of model time, ages the model and forgets exes not seen for
 * maxage days or whose file is gone. Every per-cycle step visits what
 * changed, the running exes, or a bounded number of maps, never the whole
 * model.
 *
 * The read sets the watcher reports (the files a program read while
 * starting) are learned here too, as maps of origin EXEMAP_READ.
 */
#include "config.h"

#include "learn.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <linux/magic.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "interval.h"
#include "mountns.h"
#include "proc.h"
#include "watch.h"

#define MEMFD_PREFIX "/memfd:"

struct Learn {
	LearnMapsFunc maps_func;  /* where maps of new exes come from */
	gpointer maps_data;
	guint64 touched_min;      /* usedmapkb in bytes: larger maps are cut to their touched parts */
	GHashTable *remote_devs;  /* st_dev (gint64 *) of network and FUSE mounts, when
				     netfs is off; NULL: every file system may be used */
	gboolean remote_check;    /* leaves out files on remote_devs (the default file check) */
	GHashTable *net_devs;     /* st_dev (gint64 *) of network and FUSE mounts, netfs on or
				     off: their files are never stat'ed here; NULL: none known */
	GArray *mounts;           /* the mount table (ProcMount) read with remote_devs, or NULL */
	int mounts_fd;            /* /proc/self/mountinfo, polled for changes; -1 not open */
	gboolean mounts_netfs;    /* conf->netfs when the mounts were read */
	guint64 pagemap_budget;   /* pagemap pages an update may look up */
	guint64 pagemap_left;     /* of those, not yet looked up in this update */
	LearnFileCheckFunc file_check; /* whether a mapped file may be learned */
	gpointer file_check_data;

	guint sweep;              /* next index of model->map_list to check */
	gint64 maintained;        /* model time of the last maintenance, -1 none */
	gboolean count_starts;    /* learn_update() counts starts in the hit figures */
	MountNs *mountns;         /* translates other namespaces' paths (borrowed), or NULL */
	MountDevs *mountdevs;     /* the devices of this namespace's mounts (the sweep's identity check) */
	FsJobPool *fsjobs;        /* runs the sweep's file checks (borrowed), or NULL: at once */
	Model *jobs_model;        /* the model their results apply to (borrowed) */
	LearnStats stats;
};

/* The file check's answer for one path, cached for one update. */
typedef struct FileState {
	gboolean usable;
	MapFileId id;
} FileState;

static const FileState *file_state(Learn *learn, GHashTable *cache, const char *path);
static gboolean dev_is_net(const Learn *learn, guint64 dev);
static gboolean lstat_is_regular(const char *path, MapFileId *id, gpointer user_data);

/*
 * How much of map's range can hold file pages: up to the end of the file
 * (rounded to a page) when its identity, and so its size, is known, and
 * at most LEARN_TOUCHED_MAX. A mapping may reach far past its file's end
 * (16 GiB of a 64 KiB file): its pagemap there says nothing, and reading
 * it cost seconds.
 */
static guint64
touchable_length(const ProcMap *m, const FileState *state, guint64 page)
{
	guint64 length = MIN(m->end - m->start, LEARN_TOUCHED_MAX);

	if (map_file_id_is_known(&state->id)) {
		guint64 left = state->id.size > m->offset ? state->id.size - m->offset : 0;

		left = left > G_MAXUINT64 - page ? left : (left + page - 1) / page * page;
		length = MIN(length, left);
	}
	return length;
}

/*
 * The identity, size included, of the file a line of pid's maps maps, for
 * the clamp of touchable_length(). With the default check it is asked of
 * the mapped file itself (proc_map_file_stat()), not looked up by path:
 * the user who runs the process may have covered that path since with a
 * mount that does not answer, and this runs in the main thread. A file
 * of a network or FUSE mount (learned with netfs on) is not asked at
 * all: even through map_files a stat asks its server for the attributes
 * (FUSE getattr), which a dead server never gives; its size stays
 * unknown, and the pagemap budget alone bounds what its map costs. A
 * replaced check answers for the path.
 */
static FileState
mapped_state(Learn *learn, GHashTable *stat_cache, pid_t pid, const ProcMap *m)
{
	FileState state = { 0 };
	struct stat st;

	if (learn->file_check != lstat_is_regular)
		return *file_state(learn, stat_cache, m->path);
	if (dev_is_net(learn, makedev(m->dev_major, m->dev_minor)))
		return state;
	if (proc_map_file_stat(pid, m->start, m->end, &st) && S_ISREG(st.st_mode)) {
		state.usable = TRUE;
		state.id.dev = (guint64)st.st_dev;
		state.id.ino = (guint64)st.st_ino;
		state.id.size = (guint64)MAX(st.st_size, 0);
		state.id.mtime = (gint64)st.st_mtim.tv_sec * G_GINT64_CONSTANT(1000000000) +
				 st.st_mtim.tv_nsec;
	}
	return state;
}

/*
 * Replaces each map of maps (all wanted: prefix and file checked) longer
 * than the configured usedmapkb by the parts of it the process has
 * touched, in LEARN_TOUCHED_WINDOW windows; a map whose pages cannot be
 * asked for (pagemap refused, the process gone) stays whole. A large
 * mapping is mostly never touched: java maps its 123 MiB class library
 * and touches under 1 MiB of it while starting, node a third of the 84
 * MiB it maps of its binary. Reading only what is used keeps a prefetch
 * short enough to end before the program starts on a slow disk.
 *
 * pagemap costs 8 bytes per page looked up, so the pages looked up in one
 * update are bounded by the budget (learn_set_pagemap_budget()). A
 * process that needs more than is left waits for the next update (FALSE)
 * unless nothing was spent yet; then it gets the whole budget and its
 * maps past it are left out, not learned whole.
 */
static gboolean
cut_to_touched(Learn *learn, GHashTable *stat_cache, pid_t pid, GArray *maps)
{
	g_autoptr(GArray) ranges = g_array_new(FALSE, FALSE, sizeof(ProcRange));
	g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(ProcMap));
	guint64 page = (guint64)sysconf(_SC_PAGESIZE);
	/* Bytes of each large map that can hold file pages (one question per map). */
	g_autofree guint64 *touchable = g_new0(guint64, MAX(maps->len, 1));
	guint64 need = 0;
	gboolean cut = FALSE;

	for (guint i = 0; i < maps->len; i++) {
		const ProcMap *m = &g_array_index(maps, ProcMap, i);

		if (m->end - m->start > learn->touched_min) {
			FileState state = mapped_state(learn, stat_cache, pid, m);

			touchable[i] = touchable_length(m, &state, page);
			need += touchable[i] / page;
		}
	}
	if (need == 0)
		return TRUE;
	if (need > learn->pagemap_left && learn->pagemap_left < learn->pagemap_budget)
		return FALSE;

	g_array_set_clear_func(out, proc_map_clear);
	for (guint i = 0; i < maps->len; i++) {
		const ProcMap *m = &g_array_index(maps, ProcMap, i);
		g_autoptr(GError) error = NULL;
		ProcMap probe = *m;
		guint64 pages;

		if (m->end - m->start <= learn->touched_min) {
			ProcMap whole = *m;

			whole.path = g_strdup(m->path);
			g_array_append_val(out, whole);
			continue;
		}
		cut = TRUE;
		pages = touchable[i] / page;
		if (pages > learn->pagemap_left) {
			learn->stats.pagemap_skipped++;
			continue;
		}
		if (pages == 0)
			continue;  /* wholly past the end of its file: nothing to read */
		learn->pagemap_left -= pages;
		learn->stats.pagemap_pages += pages;
		probe.end = probe.start + pages * page;
		g_array_set_size(ranges, 0);
		if (!proc_read_touched(pid, &probe, LEARN_TOUCHED_WINDOW, ranges, &error)) {
			ProcMap whole = *m;

			g_debug("pid %d: %s; %s learned whole", (int)pid, error->message, m->path);
			whole.path = g_strdup(m->path);
			g_array_append_val(out, whole);
			continue;
		}
		for (guint r = 0; r < ranges->len; r++) {
			const ProcRange *range = &g_array_index(ranges, ProcRange, r);
			ProcMap part = *m;

			part.start = m->start + (range->offset - m->offset);
			part.end = part.start + range->length;
			part.offset = range->offset;
			part.path = g_strdup(m->path);
			g_array_append_val(out, part);
		}
	}
	if (!cut)
		return TRUE;
	g_array_set_size(maps, 0);
	g_array_append_vals(maps, out->data, out->len);
	g_array_set_clear_func(out, NULL);  /* the paths moved to maps */
	return TRUE;
}

/*
 * The maps of a process in another mount namespace name its files as it
 * sees them: each is replaced by the path that reaches the same file here
 * (same device as the maps line), or loses its path (it is then skipped
 * like an anonymous map) when no path here does. Checked against the
 * kernel's device, so a mount table read just before a remount cannot
 * send a map to another file system.
 */
static void
translate_maps(MountNs *ns, pid_t pid, GArray *maps, guint first)
{
	for (guint i = first; i < maps->len; i++) {
		ProcMap *m = &g_array_index(maps, ProcMap, i);
		char *host = NULL;
		MountNsDrop why;

		if (!m->path || m->deleted)
			continue;
		switch (mountns_translate(ns, pid, m->path, makedev(m->dev_major, m->dev_minor),
					 FALSE, &host, &why)) {
		case MOUNTNS_SAME:
			return;  /* the whole process shares preload's namespace */
		case MOUNTNS_TRANSLATED:
			g_free(m->path);
			m->path = host;
			break;
		case MOUNTNS_DROPPED:
		default:
			g_debug("pid %d: %s is not reachable here (%s), not learned",
				(int)pid, m->path, mountns_drop_name(why));
			g_clear_pointer(&m->path, g_free);
			break;
		}
	}
}

/*
 * Half a cycle passes between seeing a pid and reading its maps. In that
 * time the process may have exited (a zombie's maps are empty) or its pid
 * may have been reused by another program; either way the maps would not
 * be the exe's. Every process maps its own executable, so maps without it
 * count as "gone" and the exe is tried again when next seen.
 */
gboolean
learn_proc_maps(pid_t pid, const char *exe_path, GArray *maps,
	      gpointer user_data, GError **error)
{
	guint first = maps->len;
	const Learn *owner = user_data;

	if (!proc_read_maps(pid, maps, error))
		return FALSE;
	if (owner && owner->mountns)
		translate_maps(owner->mountns, pid, maps, first);
	for (guint i = first; i < maps->len; i++) {
		const ProcMap *m = &g_array_index(maps, ProcMap, i);

		if (m->path && strcmp(m->path, exe_path) == 0)
			return TRUE;
	}
	g_array_set_size(maps, first);
	g_set_error(error, PROC_ERROR, PROC_ERROR_GONE,
		    "pid %d no longer runs %s", (int)pid, exe_path);
	return FALSE;
}

/*
 * The default file check: whether path is a regular file now. lstat()
 * because the kernel reports maps by their resolved path: a symlink there
 * now means the file was replaced since, and following it could read
 * something else entirely. Devices, FIFOs and sockets can block or have
 * side effects when read.
 */
static gboolean
lstat_is_regular(const char *path, MapFileId *id, gpointer user_data)
{
	struct stat st;

	(void)user_data;
	memset(id, 0, sizeof(*id));
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return FALSE;
	id->dev = (guint64)st.st_dev;
	id->ino = (guint64)st.st_ino;
	id->size = (guint64)MAX(st.st_size, 0);
	id->mtime = (gint64)st.st_mtim.tv_sec * G_GINT64_CONSTANT(1000000000) +
		    st.st_mtim.tv_nsec;
	return TRUE;
}

Learn *
learn_new(void)
{
	Learn *learn = g_new0(Learn, 1);

	learn->maps_func = learn_proc_maps;
	learn->maps_data = learn;
	learn->file_check = lstat_is_regular;
	learn->remote_check = TRUE;
	learn->mounts_fd = -1;
	learn->mountdevs = mountdevs_new();
	learn->maintained = -1;
	learn->pagemap_budget = LEARN_PAGEMAP_BUDGET;
	learn->stats.maintained_at = -1;
	learn->count_starts = TRUE;
	return learn;
}

void
learn_free(Learn *learn)
{
	if (!learn)
		return;
	g_clear_pointer(&learn->remote_devs, g_hash_table_unref);
	g_clear_pointer(&learn->net_devs, g_hash_table_unref);
	g_clear_pointer(&learn->mounts, g_array_unref);
	if (learn->mounts_fd >= 0)
		(void)close(learn->mounts_fd);
	mountdevs_free(learn->mountdevs);
	g_free(learn);
}

/*
 * With netfs off, the devices of the network and FUSE mounts, from
 * /proc/self/mountinfo (a file of the kernel's, which no mount can stall):
 * their files are not learned, checked or read ahead, for a server that
 * stops answering would stall the lstat or the read, and the lstat runs
 * in the daemon's main thread. Known by the device a maps line or a
 * learned identity names, without touching the file.
 */
static void refresh_remote_devs(Learn *learn, const Conf *conf, gboolean force);

void
learn_refresh_mounts(Learn *learn, const Conf *conf)
{
	g_return_if_fail(learn != NULL && conf != NULL);

	refresh_remote_devs(learn, conf, TRUE);
}

/*
 * Whether the mount table may have changed since learn->mounts was read
 * from learn->mounts_fd: procfs flags each change of it once to poll()
 * (POLLPRI | POLLERR, as watch.c's mount watch uses it). Reading and
 * parsing the table at every update was 125,000 instructions a cycle
 * where mounts seldom change.
 */
static gboolean
mounts_changed(const Learn *learn)
{
	struct pollfd pfd = { .fd = learn->mounts_fd, .events = POLLPRI };

	if (learn->mounts_fd < 0 || !learn->mounts)
		return TRUE;
	if (poll(&pfd, 1, 0) < 0)
		return TRUE;
	return (pfd.revents & (POLLPRI | POLLERR | POLLNVAL)) != 0;
}

/* /proc/self/mountinfo if /proc is procfs, -1 otherwise. */
static int
open_procfs_mountinfo(void)
{
	struct statfs sfs;
	/* The table proc_read_own_mountinfo() reads, whatever the /proc root. */
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && (fstatfs(fd, &sfs) != 0 || sfs.f_type != PROC_SUPER_MAGIC)) {
		(void)close(fd);
		fd = -1;
	}
	return fd;
}

static void
refresh_remote_devs(Learn *learn, const Conf *conf, gboolean force)
{
	GArray *mounts;
	gboolean read;

	if (!force && learn->remote_check && learn->mounts_netfs == conf->netfs &&
	    !mounts_changed(learn))
		return;
	g_clear_pointer(&learn->remote_devs, g_hash_table_unref);
	g_clear_pointer(&learn->net_devs, g_hash_table_unref);
	g_clear_pointer(&learn->mounts, g_array_unref);
	if (!learn->remote_check)
		return;
	/* With netfs on too: the device a path leads to (learn_path_dev()). */
	mounts = g_array_new(FALSE, FALSE, sizeof(ProcMount));
	g_array_set_clear_func(mounts, proc_mount_clear);
	/* Opened once and polled; where /proc is not procfs, read every time. */
	if (learn->mounts_fd < 0)
		learn->mounts_fd = open_procfs_mountinfo();
	/* Before the read: a change during it is flagged for the next update. */
	if (learn->mounts_fd >= 0) {
		struct pollfd pfd = { .fd = learn->mounts_fd, .events = POLLPRI };

		(void)poll(&pfd, 1, 0);
		read = proc_read_mountinfo_fd(learn->mounts_fd, mounts, NULL);
	} else {
		read = proc_read_own_mountinfo(mounts, NULL);
	}
	if (!read) {
		g_array_unref(mounts);
		return;
	}
	learn->mounts = mounts;
	learn->mounts_netfs = conf->netfs;
	learn->stats.mounts_read++;
	learn->net_devs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	for (guint i = 0; i < mounts->len; i++) {
		const ProcMount *m = &g_array_index(mounts, ProcMount, i);

		if (watch_fs_is_remote(m->fstype)) {
			gint64 *dev = g_new(gint64, 1);

			*dev = (gint64)makedev(m->dev_major, m->dev_minor);
			g_hash_table_add(learn->net_devs, dev);
		}
	}
	if (!conf->netfs)
		learn->remote_devs = g_hash_table_ref(learn->net_devs);
}

static gboolean
dev_is_net(const Learn *learn, guint64 dev)
{
	gint64 key = (gint64)dev;

	return learn->net_devs && g_hash_table_contains(learn->net_devs, &key);
}

static gboolean
dev_is_remote(const Learn *learn, guint64 dev)
{
	gint64 key = (gint64)dev;

	return learn->remote_devs && g_hash_table_contains(learn->remote_devs, &key);
}

gboolean
learn_path_is_remote(const Learn *learn, const char *path)
{
	const ProcMount *m;

	g_return_val_if_fail(learn != NULL && path != NULL, FALSE);

	/* remote_devs is there with netfs off only. */
	if (!learn->mounts || !learn->remote_devs)
		return FALSE;
	m = watch_mounts_find(learn->mounts, path);
	return m && watch_mounts_under_remote(learn->mounts, m);
}

guint64
learn_path_dev(const Learn *learn, const char *path)
{
	const ProcMount *m;

	g_return_val_if_fail(learn != NULL && path != NULL, 0);

	m = learn->mounts ? watch_mounts_find(learn->mounts, path) : NULL;
	return m ? (guint64)makedev(m->dev_major, m->dev_minor) : 0;
}

void
learn_set_count_starts(Learn *learn, gboolean count)
{
	g_return_if_fail(learn != NULL);

	learn->count_starts = count;
}

void
learn_set_maps_source(Learn *learn, LearnMapsFunc func, gpointer user_data)
{
	g_return_if_fail(learn != NULL);

	learn->maps_func = func ? func : learn_proc_maps;
	learn->maps_data = func ? user_data : learn;
}

void
learn_set_pagemap_budget(Learn *learn, guint64 pages)
{
	g_return_if_fail(learn != NULL);

	learn->pagemap_budget = pages;
}

void
learn_set_fsjob(Learn *learn, FsJobPool *pool, Model *model)
{
	g_return_if_fail(learn != NULL);
	g_return_if_fail(pool == NULL || model != NULL);

	learn->fsjobs = pool;
	learn->jobs_model = pool ? model : NULL;
}

void
learn_set_mountns(Learn *learn, MountNs *ns)
{
	g_return_if_fail(learn != NULL);
	learn->mountns = ns;
}

void
learn_set_file_check(Learn *learn, LearnFileCheckFunc func, gpointer user_data)
{
	g_return_if_fail(learn != NULL);
	learn->file_check = func ? func : lstat_is_regular;
	learn->file_check_data = func ? user_data : NULL;
	/* A replaced check names files of another machine (a replay). */
	learn->remote_check = func == NULL;
}

const LearnStats *
learn_get_stats(const Learn *learn)
{
	g_return_val_if_fail(learn != NULL, NULL);

	return &learn->stats;
}

/* ---- the update --------------------------------------------------------- */

void
learn_model_params(const Conf *conf, ModelParams *params)
{
	g_return_if_fail(conf != NULL);
	g_return_if_fail(params != NULL);

	params->halflife = conf->halflife * 3600;
	params->follow = conf->follow;
	/*
	 * Without the correlation every co-occurring pair bids at full
	 * strength, so the pairs of a constant exe are kept then.
	 */
	params->skip_constant = conf->usecorrelation;
	params->max_exes = (guint)CLAMP(conf->maxexes, 1, G_MAXUINT);
	params->max_exe_maps = (guint)CLAMP(conf->maxexemaps, 1, G_MAXUINT);
	params->max_maps = (guint)CLAMP(conf->maxmaps, 1, G_MAXUINT);
	params->max_chains = (guint)CLAMP(conf->maxchains, 1, G_MAXUINT);
}

/* The file check, asked once per path and update. */
static const FileState *
file_state(Learn *learn, GHashTable *cache, const char *path)
{
	FileState *state = g_hash_table_lookup(cache, path);

	if (!state) {
		state = g_new0(FileState, 1);
		state->usable = learn->file_check(path, &state->id, learn->file_check_data);
		g_hash_table_insert(cache, g_strdup(path), state);
	}
	return state;
}

/*
 * Whether the identity of a maps line decides (the kernel's device and
 * inode of the mapped file, nothing looked up by path), or, for lines
 * without one (traces, hand-made maps), a file check set by
 * learn_set_file_check(). The default check never decides for a line:
 * a file-backed map always has an inode, and a path a process chose is
 * not looked up here (a hung mount would stall the cycle).
 */
static gboolean
map_has_identity(Learn *learn, GHashTable *stat_cache, const ProcMap *m)
{
	if (m->inode != 0)
		return TRUE;
	return learn->file_check != lstat_is_regular &&
	       file_state(learn, stat_cache, m->path)->usable;
}

static gboolean
map_is_wanted(Learn *learn, const Conf *conf, GHashTable *stat_cache, const ProcMap *m)
{
	return m->path != NULL &&
	       !m->deleted &&
	       !g_str_has_prefix(m->path, MEMFD_PREFIX) &&
	       m->end > m->start &&
	       conf_prefix_accepts(conf->mapprefix, m->path) &&
	       map_has_identity(learn, stat_cache, m);
}

/* The identity of the file of a maps line; all zero if the line has none. */
static void
line_identity(Learn *learn, GHashTable *stat_cache, const ProcMap *m, MapFileId *id)
{
	memset(id, 0, sizeof(*id));
	if (m->inode != 0) {
		id->dev = (guint64)makedev(m->dev_major, m->dev_minor);
		id->ino = m->inode;
	} else if (learn->file_check != lstat_is_regular) {
		*id = file_state(learn, stat_cache, m->path)->id;
	}
}

/*
 * The registered map for a range seen in use now (a new one if there is
 * none), with the identity the kernel reports for its file: a stale map
 * seen mapped again is valid again, for the file mapped now. The size and
 * time of the file are kept if it is the same file, else left unknown
 * (the sweep fills them in).
 */
static Map *
learn_map(Model *model, GHashTable *stat_cache, Learn *learn, const ProcMap *m, gint64 now)
{
	MapFileId id;
	guint64 length = m->end - m->start;
	Map *map = model_lookup_map(model, m->path, m->offset, length);

	line_identity(learn, stat_cache, m, &id);

	if (!map) {
		map = map_new(m->path, m->offset, length, now);
	} else {
		map->update_time = MAX(map->update_time, now);
		/* Mapped now, so the range is valid for the file there now. */
		map->learn.stale = FALSE;
	}
	if (map_file_id_is_known(&id) && (map->file.dev != id.dev || map->file.ino != id.ino))
		map->file = id;
	map->learn.checked = now;
	return map;
}

/*
 * Reads the maps of a process; FALSE (and logs) if that failed, with
 * *gone set if the process had exited.
 */
static gboolean
read_maps(Learn *learn, const ScanExe *se, GArray *maps, gboolean *gone)
{
	g_autoptr(GError) error = NULL;

	*gone = FALSE;
	if (learn->maps_func(se->pid, se->path, maps, learn->maps_data, &error))
		return TRUE;
	if (g_error_matches(error, PROC_ERROR, PROC_ERROR_GONE)) {
		*gone = TRUE;
		g_debug("exe %s: pid %d exited before its maps were read",
			se->path, (int)se->pid);
	} else {
		g_debug("exe %s: cannot read the maps of pid %d: %s, ignoring",
			se->path, (int)se->pid, error ? error->message : "unknown error");
	}
	return FALSE;
}

/*
 * Leaves in maps only those that may be learned (map_is_wanted()) and,
 * with the default source and usedmapkb, cuts the large ones to their
 * touched parts: after the prefix and file checks, so that pagemap is
 * read only for files that could be learned. FALSE: the pagemap budget of
 * this update is spent and the process waits (counted as deferred).
 */
static gboolean
keep_wanted(Learn *learn, const Conf *conf, GHashTable *stat_cache, pid_t pid, GArray *maps)
{
	guint kept = 0;

	for (guint i = 0; i < maps->len; i++) {
		ProcMap *m = &g_array_index(maps, ProcMap, i);

		if (dev_is_remote(learn, makedev(m->dev_major, m->dev_minor)) ||
		    !map_is_wanted(learn, conf, stat_cache, m)) {
			proc_map_clear(m);
			continue;
		}
		if (kept != i)
			g_array_index(maps, ProcMap, kept) = *m;
		kept++;
	}
	/* The ones moved down or cleared above must not be cleared again. */
	g_array_set_clear_func(maps, NULL);
	g_array_set_size(maps, kept);
	g_array_set_clear_func(maps, proc_map_clear);

	if (learn->maps_func != learn_proc_maps || learn->touched_min == 0 ||
	    cut_to_touched(learn, stat_cache, pid, maps))
		return TRUE;
	learn->stats.deferred++;
	return FALSE;
}

/*
 * The identity of the exe's own file, from the line of maps that maps it
 * (there is one: learn_proc_maps() counts the process as gone otherwise),
 * taken before keep_wanted() may leave that line out.
 * A file replaced since (an upgrade) takes the new identity at the next
 * start.
 */
static void
own_identity(const char *exe_path, const GArray *maps, MapFileId *id)
{
	memset(id, 0, sizeof(*id));
	for (guint i = 0; i < maps->len; i++) {
		const ProcMap *m = &g_array_index(maps, ProcMap, i);

		if (m->path && m->inode != 0 && strcmp(m->path, exe_path) == 0) {
			id->dev = (guint64)makedev(m->dev_major, m->dev_minor);
			id->ino = m->inode;
			return;
		}
	}
}

static void
admit_new_exe(Learn *learn, Model *model, const Conf *conf, GHashTable *stat_cache,
	      const ScanExe *se, gint64 scan_time, gint64 now)
{
	g_autoptr(GArray) maps = NULL;
	g_autoptr(GArray) kept = NULL;
	guint64 size = 0;
	gboolean gone;
	MapFileId own;
	Exe *exe;

	maps = g_array_new(FALSE, FALSE, sizeof(ProcMap));
	g_array_set_clear_func(maps, proc_map_clear);
	if (!read_maps(learn, se, maps, &gone)) {
		/* Retried when a process running it is seen again. */
		if (gone)
			learn->stats.gone++;
		return;
	}
	own_identity(se->path, maps, &own);
	/* Retried at the next scan that sees it, with a new budget. */
	if (!keep_wanted(learn, conf, stat_cache, se->pid, maps))
		return;

	kept = g_array_new(FALSE, FALSE, sizeof(guint));
	for (guint i = 0; i < maps->len; i++) {
		const ProcMap *m = &g_array_index(maps, ProcMap, i);

		if (!map_is_wanted(learn, conf, stat_cache, m))
			continue;
		g_array_append_val(kept, i);
		size += m->end - m->start;
	}

	if (size < (guint64)MAX(conf->minsize, 0)) {
		model_add_bad_exe(model, se->path, size, now);
		learn->stats.too_small++;
		g_debug("new exe %s: %" G_GUINT64_FORMAT " bytes in %u maps, below minsize, "
			"not modelled for now", se->path, size, kept->len);
		return;
	}

	/*
	 * Room is made before the exe takes references to maps other exes
	 * use: eviction frees maps. A model full of running exes refuses it,
	 * as if too small, until autosave seconds have passed.
	 */
	if (!model_make_room_for_exe(model)) {
		model_add_bad_exe(model, se->path, 0, now);
		learn->stats.refused++;
		return;
	}
	exe = exe_new(se->path, TRUE, scan_time);
	exe->file = own;
	for (guint k = 0; k < kept->len; k++) {
		const ProcMap *m = &g_array_index(maps, ProcMap, g_array_index(kept, guint, k));

		exe_add_map(model, exe, learn_map(model, stat_cache, learn, m, now), 1.0);
	}
	g_debug("new exe %s: admitted with %u maps, %" G_GUINT64_FORMAT " bytes",
		se->path, exe->exemaps->len, size);
	model_add_exe(model, exe, scan_time, conf->allpairs);
	model_link_exe(model, exe, scan_time);
	model_exe_first_seen(model, exe, scan_time);
	learn->stats.admitted++;
}

/*
 * A known exe started: what does it map now? Ranges new to it are added,
 * those it maps again are confirmed, and one it has not mapped for
 * LEARN_MISSED_RUNS runs in a row is removed (an old library version, a
 * plugin no longer loaded). Once per start, not per cycle.
 */
static void
refresh_exe(Learn *learn, Model *model, const Conf *conf, GHashTable *stat_cache,
	    Exe *exe, const ScanExe *se, gint64 now)
{
	g_autoptr(GArray) maps = NULL;
	g_autoptr(GHashTable) seen = NULL;
	g_autoptr(GPtrArray) learned = NULL;
	gboolean gone;
	MapFileId own;

	maps = g_array_new(FALSE, FALSE, sizeof(ProcMap));
	g_array_set_clear_func(maps, proc_map_clear);
	if (!read_maps(learn, se, maps, &gone))
		return;  /* it keeps what it had; the next start tries again */
	own_identity(exe->path, maps, &own);
	if (!keep_wanted(learn, conf, stat_cache, se->pid, maps))
		return;
	exe->file = own;

	/* In the order of the maps file, so that map ids do not depend on addresses. */
	learned = g_ptr_array_new();
	seen = g_hash_table_new(NULL, NULL);
	for (guint i = 0; i < maps->len; i++) {
		const ProcMap *m = &g_array_index(maps, ProcMap, i);
		Map *map;

		if (!map_is_wanted(learn, conf, stat_cache, m))
			continue;
		map = learn_map(model, stat_cache, learn, m, now);
		if (g_hash_table_add(seen, map))
			g_ptr_array_add(learned, map);
	}
	/*
	 * The ones it had: confirmed, or one more run without them. Ranges
	 * learned from start-up reads are not in the maps file: only the
	 * mapped ones can be missed.
	 */
	for (guint i = exe->exemaps->len; i-- > 0;) {
		ExeMap *em = &g_array_index(exe->exemaps, ExeMap, i);

		if (g_hash_table_remove(seen, em->map)) {
			em->missed = 0;
		} else if (em->origin == EXEMAP_MAPPED && ++em->missed >= LEARN_MISSED_RUNS) {
			exe_remove_map(model, exe, i);
			learn->stats.maps_removed++;
		}
	}
	/* What is left in `seen` is new to it. */
	for (guint i = 0; i < learned->len; i++) {
		Map *map = g_ptr_array_index(learned, i);

		if (!g_hash_table_contains(seen, map))
			continue;
		/* exe_add_map() may free an unregistered duplicate: look no further. */
		g_hash_table_remove(seen, map);
		exe_add_map(model, exe, map, 1.0);
		learn->stats.maps_added++;
	}
	learn->stats.refreshed++;
}

/*
 * The verdict of a file check on map: here is the identity found at its
 * path (with the device of the maps line where it is the same file on a
 * btrfs subvolume), usable FALSE if no regular file is there. Gone or
 * another file, the map turns stale and TRUE is returned.
 */
static gboolean
apply_file_check(Map *map, gboolean usable, const MapFileId *here)
{
	if (!usable || !map_file_id_matches(&map->file, here)) {
		map->learn.stale = TRUE;
		return TRUE;
	}
	/*
	 * The same file: its size and time complete the identity, so that a
	 * file rewritten in place is told apart too. An unknown identity stays
	 * unknown until the file is seen mapped (or read): the path alone does
	 * not say which file the map was learned from.
	 */
	if (map_file_id_is_known(&map->file) && map->file.size == 0 && map->file.mtime == 0) {
		map->file.size = here->size;
		map->file.mtime = here->mtime;
	}
	return FALSE;
}

/*
 * The lstat of the default check, and the maps line's device for the same
 * inode on a mount of that device: btrfs gives each subvolume its own
 * st_dev, the maps line the file system's. Blocking calls on path.
 */
static gboolean
stat_learned_file(MountDevs *md, const char *path, const MapFileId *learned, MapFileId *here)
{
	if (!lstat_is_regular(path, here, NULL))
		return FALSE;
	if (here->dev != learned->dev && map_file_id_is_known(learned) &&
	    mountdevs_same_file(md, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, here->dev, here->ino,
				learned->dev, learned->ino))
		here->dev = learned->dev;
	return TRUE;
}

/* A check of the sweep on an fsjob worker: the input, then the result. */
typedef struct CheckJob {
	char *path;
	MapFileId learned;
	gboolean usable;
	MapFileId here;
} CheckJob;

static void
check_job_free(gpointer data)
{
	CheckJob *job = data;

	g_free(job->path);
	g_free(job);
}

static void
check_job_run(FsJobCtx *ctx, gpointer data)
{
	CheckJob *job = data;
	/* Its own: the learner may be gone when a job abandoned on a hung mount returns. */
	g_autoptr(MountDevs) md = mountdevs_new();

	(void)ctx;
	job->usable = stat_learned_file(md, job->path, &job->learned, &job->here);
}

/* Which map a check was for, found again by its key when the result comes. */
typedef struct CheckFor {
	Learn *learn;
	char *path;
	guint64 offset;
	guint64 length;
	MapFileId learned;
	char *exe;            /* the maintenance's check of an exe's own file, or NULL */
} CheckFor;

static void
check_for_free(gpointer data)
{
	CheckFor *f = data;

	g_free(f->path);
	g_free(f->exe);
	g_free(f);
}

static void
check_done(FsJobStatus status, gpointer data, gpointer user_data)
{
	const CheckJob *job = data;
	CheckFor *f = user_data;
	Model *model = f->learn->jobs_model;
	Map *map;

	if (status != FSJOB_DONE)
		return;  /* checked again a period later (the fsjob stats count it) */
	if (f->exe) {
		Exe *exe = model_lookup_exe(model, f->exe);

		/* Gone, and still not running: forgotten, as maintain() does. */
		if (exe && !job->usable && !exe_is_running(model, exe)) {
			model_remove_exe(model, exe);
			f->learn->stats.exes_gone++;
			model->dirty = TRUE;
		}
		return;
	}
	map = model_lookup_map(model, f->path, f->offset, f->length);
	/* Learned again from another file meanwhile: that one is checked later. */
	if (!map || map->learn.stale || map->file.dev != f->learned.dev ||
	    map->file.ino != f->learned.ino)
		return;
	if (apply_file_check(map, job->usable, &job->here)) {
		f->learn->stats.stale++;
		model->dirty = TRUE;
	}
}

/* Queues the default check of path on the learner's pool; done applies it. */
static FsJobSubmit
submit_check(Learn *learn, const char *path, const Map *map, const Exe *exe)
{
	CheckJob *job = g_new0(CheckJob, 1);
	CheckFor *f = g_new0(CheckFor, 1);
	guint64 dev;

	job->path = g_strdup(path);
	f->learn = learn;
	f->path = g_strdup(path);
	f->exe = exe ? g_strdup(exe->path) : NULL;
	if (map) {
		job->learned = map->file;
		f->offset = map->offset;
		f->length = map->length;
		f->learned = map->file;
	}
	/*
	 * Named by the mount its path leads to now, which may not be the one
	 * learned (a mount made over its directory since): if that mount
	 * hangs, it is the one refused.
	 */
	dev = learn_path_dev(learn, path);
	if (dev == 0)
		dev = map ? map->file.dev : exe->file.dev;
	return fsjob_submit(learn->fsjobs, dev, check_job_run, job, check_job_free, check_done, f,
			    check_for_free);
}

/* Whether the default check runs on the pool rather than at once. */
static gboolean
checks_on_pool(const Learn *learn)
{
	return learn->fsjobs != NULL && learn->file_check == lstat_is_regular;
}

/*
 * Whether map's file is still the one it was learned from: gone, or
 * another file (an upgrade replaced it), the map turns stale and TRUE is
 * returned. A map learned before identities were kept takes the file's.
 * With a pool the check runs there and FALSE is returned: its result
 * comes later (check_done()).
 */
static gboolean
check_map_file(Learn *learn, GHashTable *stat_cache, Map *map, gint64 now)
{
	const FileState *state;
	gint64 before = map->learn.checked;
	MapFileId here;
	gboolean usable;

	map->learn.checked = now;
	/* Learned while netfs was on: not asked (the lstat could hang), never read. */
	if (map_file_id_is_known(&map->file) && dev_is_remote(learn, map->file.dev)) {
		map->learn.stale = TRUE;
		return TRUE;
	}
	/*
	 * Its path leads into a network or FUSE mount now (made over its
	 * directory since it was learned, by a user on a directory of
	 * theirs): not the file learned, and a lookup there could hang.
	 */
	if (learn_path_is_remote(learn, map->path)) {
		map->learn.stale = TRUE;
		return TRUE;
	}
	if (checks_on_pool(learn)) {
		/*
		 * A full queue says nothing of the file: it is asked again at
		 * the next update, not an hour later (a burst of checks, as
		 * after a load, would leave gone files selected for that hour).
		 * A refused device or too many blocked workers keep the hour:
		 * asking again soon would only be refused again.
		 */
		if (submit_check(learn, map->path, map, NULL) == FSJOB_REFUSED_FULL)
			map->learn.checked = before;
		return FALSE;
	}
	state = file_state(learn, stat_cache, map->path);
	usable = state->usable;
	here = state->id;
	/* As stat_learned_file() does, on the answer cached for this update. */
	if (usable && learn->file_check == lstat_is_regular && here.dev != map->file.dev &&
	    map_file_id_is_known(&map->file) &&
	    mountdevs_same_file(learn->mountdevs, AT_FDCWD, map->path, AT_SYMLINK_NOFOLLOW,
				here.dev, here.ino, map->file.dev, map->file.ino))
		here.dev = map->file.dev;
	return apply_file_check(map, usable, &here);
}

/*
 * Checks the files of a few maps, continuing where the last update
 * stopped, so that every map is checked about once per
 * LEARN_FILE_CHECK_PERIOD whatever the number of maps. A map whose file is
 * gone, or has another identity than when it was learned, turns stale: it
 * is never read ahead again.
 */
static void
check_map_files(Learn *learn, Model *model, const Conf *conf, GHashTable *stat_cache, gint64 now)
{
	GPtrArray *list = model->map_list;
	guint64 n;

	if (list->len == 0)
		return;
	n = ((guint64)list->len * (guint64)MAX(conf->cycle, 1) + LEARN_FILE_CHECK_PERIOD - 1) /
	    LEARN_FILE_CHECK_PERIOD;
	n = MIN(n, (guint64)list->len);
	for (guint64 i = 0; i < n; i++) {
		Map *map;

		if (learn->sweep >= list->len)
			learn->sweep = 0;
		map = g_ptr_array_index(list, learn->sweep++);
		if (!map->learn.stale && check_map_file(learn, stat_cache, map, now))
			learn->stats.stale++;
	}
}

guint
learn_check_files(Learn *learn, GPtrArray *maps, gint64 now)
{
	g_autoptr(GHashTable) stat_cache = NULL;
	guint stale = 0;

	g_return_val_if_fail(learn != NULL, 0);
	g_return_val_if_fail(maps != NULL, 0);

	for (guint i = 0; i < maps->len; i++) {
		Map *map = g_ptr_array_index(maps, i);

		/* A clock that went back checks again. */
		if (map->learn.stale || (map->learn.checked >= 0 && map->learn.checked <= now &&
				   now - map->learn.checked < LEARN_FILE_CHECK_PERIOD))
			continue;
		if (!stat_cache)
			stat_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
		if (check_map_file(learn, stat_cache, map, now))
			stale++;
	}
	return stale;
}

/* Whether the map of exe's own file (every process maps it) turned stale. */
static gboolean
own_file_stale(const Exe *exe)
{
	for (guint i = 0; i < exe->exemaps->len; i++) {
		const Map *map = g_array_index(exe->exemaps, ExeMap, i).map;

		if (map->learn.stale && strcmp(map->path, exe->path) == 0)
			return TRUE;
	}
	return FALSE;
}

/*
 * Once an hour of model time: age the model, forget the exes not seen for
 * maxage days and those whose file is gone, and drop the uses of stale
 * maps. Costs a walk of the model (but no more file checks than the
 * sweep found stale), so it is rare.
 */
static void
maintain(Learn *learn, Model *model, const Conf *conf, gint64 now)
{
	g_autoptr(GPtrArray) gone = g_ptr_array_new();
	GHashTableIter iter;
	gpointer value;

	learn->maintained = now;
	learn->stats.maintained_at = now;
	learn->stats.chains_faded = model_age(model, now);
	learn->stats.exes_forgotten = conf->maxage > 0 ?
		model_forget_exes(model, now, conf->maxage * 86400) : 0;

	/*
	 * An exe maps its own file, so the sweep of map files finds it gone
	 * or replaced too; only those are asked again: replaced, the exe
	 * stays (its next run maps the new file), gone, it is forgotten. A
	 * running exe may run a deleted file; it is judged when it stops.
	 */
	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		Exe *exe = value;
		MapFileId id;

		if (exe_is_running(model, exe) || !own_file_stale(exe))
			continue;
		/* Its path leads into a network or FUSE mount: not its file, not asked. */
		if (learn_path_is_remote(learn, exe->path))
			g_ptr_array_add(gone, exe);
		else if (checks_on_pool(learn))
			(void)submit_check(learn, exe->path, NULL, exe);
		else if (!learn->file_check(exe->path, &id, learn->file_check_data))
			g_ptr_array_add(gone, exe);
	}
	for (guint i = 0; i < gone->len; i++)
		model_remove_exe(model, g_ptr_array_index(gone, i));
	learn->stats.exes_gone = gone->len;
	learn->stats.maps_dropped = model_drop_stale_maps(model);
	if (learn->stats.chains_faded || learn->stats.exes_forgotten || learn->stats.exes_gone ||
	    learn->stats.maps_dropped)
		g_debug("maintenance at %" G_GINT64_FORMAT ": %u chains faded, %u exes unseen "
			"for %" G_GINT64_FORMAT " days, %u exes gone, %u stale map uses dropped",
			now, learn->stats.chains_faded, learn->stats.exes_forgotten, conf->maxage,
			learn->stats.exes_gone, learn->stats.maps_dropped);
}

/* Model seconds between maintenances: an hour, or halflife / 8 if shorter. */
static gint64
maintenance_period(const Conf *conf)
{
	gint64 period = LEARN_MAINTENANCE_PERIOD;

	if (conf->halflife > 0)
		period = MIN(period, MAX(conf->halflife * 3600 / 8, conf->cycle));
	return period;
}

/*
 * A start found by the scan: only "was it in the last prefetch" can be
 * told now. That prefetch was chosen before the scan saw the start, which
 * is the one that counts.
 */
static void
count_start(Model *model, Exe *exe)
{
	guint64 bytes = 0, prefetched = 0;

	for (guint i = 0; i < exe->exemaps->len; i++) {
		const Map *map = g_array_index(exe->exemaps, ExeMap, i).map;

		bytes += map->length;
		if (model->prefetch_seq != 0 && map->cycle.prefetch_seq == model->prefetch_seq)
			prefetched += map->length;
	}
	exe->hits.starts++;
	exe_hits_add(&exe->hits, bytes, prefetched, 0, 0);
}

/*
 * The first scan of a model loaded from a state file: the exes it finds
 * stopped are known stopped from then on, so their next start is a
 * start (counted, and a successor of the start before it). Those it
 * finds running may have run for long: their start stays unknown. At
 * boot, when nothing of the user's runs yet, every program the user
 * launches is then counted from the first launch.
 */
static void
mark_seen_stopped(Model *model, gint64 time)
{
	GHashTableIter iter;
	gpointer value;

	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		Exe *exe = value;

		if (exe->change_timestamp < 0 && !exe_is_running(model, exe))
			exe->change_timestamp = time;
	}
}

void
learn_update(Learn *learn, Scan *scan, Model *model, const Conf *conf, gint64 now)
{
	g_autoptr(GHashTable) stat_cache = NULL;
	g_autoptr(GPtrArray) changed = NULL;
	const ScanResult *found;
	ModelParams params;
	gboolean first;

	g_return_if_fail(learn != NULL);
	g_return_if_fail(scan != NULL);
	g_return_if_fail(model != NULL);
	g_return_if_fail(conf != NULL);

	found = scan_get_result(scan);
	learn->touched_min = (guint64)MAX(conf->usedmapkb, 0) * 1024;
	learn->stats.admitted = 0;
	learn->stats.too_small = 0;
	learn->stats.gone = 0;
	learn->stats.refreshed = 0;
	learn->stats.maps_added = 0;
	learn->stats.maps_removed = 0;
	learn->stats.stale = 0;
	learn->stats.refused = 0;
	learn->stats.deferred = 0;
	learn->stats.pagemap_pages = 0;
	learn->stats.pagemap_skipped = 0;
	learn->stats.mounts_read = 0;
	learn->pagemap_left = learn->pagemap_budget;

	/* The mounts, or netfs in a reloaded configuration, may have changed since the last update. */
	refresh_remote_devs(learn, conf, FALSE);
	learn_model_params(conf, &params);
	model_set_params(model, &params);

	/*
	 * 0. The maintenance when it is due, also at the first update (so a
	 *    daemon whose sessions are shorter than the period still forgets
	 *    what is gone). First, so that what this update adds is not aged
	 *    at once.
	 */
	first = learn->maintained < 0;
	if (learn->maintained >= 0 && now < learn->maintained)
		learn->maintained = now;  /* a clock that went back */
	else if (learn->maintained < 0 || now - learn->maintained >= maintenance_period(conf))
		maintain(learn, model, conf, now);
	/* Caps lowered since the last update, and room for new maps. */
	learn->stats.evicted = model_trim(model);

	/* 1. Starts and stops, at the time they were observed, as one batch. */
	changed = g_ptr_array_new();
	for (guint i = 0; i < found->changed->len; i++) {
		Exe *exe = model_lookup_exe(model, g_ptr_array_index(found->changed, i));

		if (exe)
			g_ptr_array_add(changed, exe);
	}
	model_exes_changed(model, (Exe *const *)changed->pdata, changed->len, found->time);
	if (first)
		mark_seen_stopped(model, found->time);
	for (guint i = 0; learn->count_starts && i < changed->len; i++) {
		Exe *exe = g_ptr_array_index(changed, i);

		if (exe_is_running(model, exe))
			count_start(model, exe);
	}

	/* 2. New executables, in the order the scan met them, so that a
	 *    replay builds the same chains. */
	stat_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	for (guint i = 0; i < found->new_exes->len; i++) {
		const ScanExe *se = g_ptr_array_index(found->new_exes, i);

		/* Admitted or found too small since the scan (a replay may
		 * feed the same path twice). */
		if (model_lookup_exe(model, se->path) ||
		    g_hash_table_contains(model->bad_exes, se->path))
			continue;
		admit_new_exe(learn, model, conf, stat_cache, se, found->time, now);
	}

	/* 3. What the exes that started again map now. */
	for (guint i = 0; i < found->restarted->len; i++) {
		const ScanExe *se = g_ptr_array_index(found->restarted, i);
		Exe *exe = model_lookup_exe(model, se->path);

		if (exe && exe_is_running(model, exe))
			refresh_exe(learn, model, conf, stat_cache, exe, se, now);
	}

	/* The scan is consumed: a second update must not apply it again. */
	scan_consume(scan);

	/* 4. A few maps' files, 5. running time, then forget old verdicts on
	 *    small exes. */
	check_map_files(learn, model, conf, stat_cache, now);
	model_account(model, now);
	model_expire_bad_exes(model, now, conf->autosave);
	model->dirty = TRUE;
}

/* ---- read sets from the watcher ------------------------------------------ */

static void
free_intervals(gpointer data)
{
	g_array_unref(data);
}

/*
 * What an exe already has, for learning from its read set: every range
 * (to add only what is new), the files it maps and those it read, and the
 * size of its read set. Keys borrow the paths of the exe's maps and of
 * the ranges being learned.
 */
typedef struct Known {
	GHashTable *have;         /* path -> GArray of Interval, sorted by start */
	GHashTable *read_paths;   /* paths the exe learned from reads */
	GHashTable *mapped_paths; /* paths the exe maps */
	guint64 read_bytes;       /* bytes of its read set */
} Known;

static void
known_init(Known *k, const Exe *exe)
{
	GHashTableIter iter;
	gpointer value;

	k->have = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, free_intervals);
	k->read_paths = g_hash_table_new(g_str_hash, g_str_equal);
	k->mapped_paths = g_hash_table_new(g_str_hash, g_str_equal);
	k->read_bytes = 0;
	for (guint i = 0; exe && i < exe->exemaps->len; i++) {
		const ExeMap *em = &g_array_index(exe->exemaps, ExeMap, i);
		GArray *list = g_hash_table_lookup(k->have, em->map->path);
		Interval iv = interval_from_range(em->map->offset, em->map->length);

		if (!list) {
			list = interval_array_new();
			g_hash_table_insert(k->have, em->map->path, list);
		}
		g_array_append_val(list, iv);
		if (em->origin == EXEMAP_READ) {
			g_hash_table_add(k->read_paths, em->map->path);
			k->read_bytes += em->map->length;
		} else {
			g_hash_table_add(k->mapped_paths, em->map->path);
		}
	}
	g_hash_table_iter_init(&iter, k->have);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		interval_sort(value);
}

static void
known_clear(Known *k)
{
	g_clear_pointer(&k->have, g_hash_table_unref);
	g_clear_pointer(&k->read_paths, g_hash_table_unref);
	g_clear_pointer(&k->mapped_paths, g_hash_table_unref);
}

/*
 * Whether the file of a read-set range may be learned: a range with an
 * identity is of the regular file the program opened, which the watcher
 * found at the path when the window ended (nothing is looked up here);
 * one without (a replay, an older caller) asks the file check.
 */
static gboolean
range_usable(Learn *learn, GHashTable *stat_cache, const WatchRange *r)
{
	if (map_file_id_is_known(&r->id))
		return TRUE;
	return file_state(learn, stat_cache, r->path)->usable;
}

/*
 * The parts of ranges (WatchRange) to learn, appended to add (paths
 * borrowed from ranges): those mapprefix accepts, in files the exe does
 * not map, not already known, under the caps of maxreadfiles files and
 * maxreadkb KB. Returns their bytes.
 */
static guint64
pick_ranges(Learn *learn, const Conf *conf, Known *k, GHashTable *stat_cache,
	    const GArray *ranges, GArray *add)
{
	guint max_files = (guint)CLAMP(conf->maxreadfiles, 0, G_MAXUINT);
	guint64 max_bytes = (guint64)MAX(conf->maxreadkb, 0) * 1024;
	guint64 added = 0;

	for (guint i = 0; i < ranges->len; i++) {
		const WatchRange *r = &g_array_index(ranges, WatchRange, i);
		g_autoptr(GArray) pieces = interval_array_new();
		GArray *list;

		if (!r->path || r->path[0] != '/' || r->length == 0 ||
		    r->length > G_MAXUINT64 - r->offset ||
		    g_str_has_prefix(r->path, MEMFD_PREFIX) ||
		    !conf_prefix_accepts(conf->mapprefix, r->path))
			continue;
		/*
		 * A file the exe maps is learned through its maps only: what is
		 * resident beyond them (the debug sections of an unstripped
		 * binary or library, cached whole since it was installed) is not
		 * what the start used, and would fill the read budget.
		 */
		if (g_hash_table_contains(k->mapped_paths, r->path))
			continue;
		list = g_hash_table_lookup(k->have, r->path);
		interval_subtract(interval_from_range(r->offset, r->length), list, pieces);
		if (pieces->len == 0)
			continue;
		/* A file new to the read set needs room under the file cap. */
		if (!g_hash_table_contains(k->read_paths, r->path)) {
			if (g_hash_table_size(k->read_paths) >= max_files ||
			    !range_usable(learn, stat_cache, r))
				continue;
			g_hash_table_add(k->read_paths, r->path);
		}
		if (!list) {
			list = interval_array_new();
			g_hash_table_insert(k->have, r->path, list);
		}
		for (guint p = 0; p < pieces->len && k->read_bytes < max_bytes; p++) {
			Interval *piece = &g_array_index(pieces, Interval, p);
			WatchRange w;

			piece->end = MIN(piece->end, piece->start + (max_bytes - k->read_bytes));
			w.path = r->path;
			w.offset = piece->start;
			w.length = interval_length(*piece);
			w.id = r->id;
			g_array_append_val(add, w);
			g_array_append_val(list, *piece);
			k->read_bytes += w.length;
			added += w.length;
		}
		interval_sort(list);
	}
	return added;
}

/* Adds the ranges of add (WatchRange) to exe as maps read at start-up. */
static void
add_read_maps(Learn *learn, Model *model, Exe *exe, GHashTable *stat_cache,
	      const GArray *add, gint64 now)
{
	for (guint i = 0; i < add->len; i++) {
		const WatchRange *w = &g_array_index(add, WatchRange, i);
		const MapFileId *id = map_file_id_is_known(&w->id)
			? &w->id : &file_state(learn, stat_cache, w->path)->id;
		Map *map = model_lookup_map(model, w->path, w->offset, w->length);

		if (map)
			map->update_time = MAX(map->update_time, now);
		else
			map = map_new(w->path, w->offset, w->length, now);
		/* Read now: valid for the file there now. */
		map->learn.stale = FALSE;
		if (map_file_id_is_known(id))
			map->file = *id;
		map->learn.checked = now;
		exe_add_map_origin(model, exe, map, 1.0, EXEMAP_READ);
	}
}

gboolean
learn_read_filter(const Model *model, const Conf *conf, const char *exe_path, GPtrArray *files)
{
	g_autoptr(GHashTable) mapped = NULL;
	Exe *exe;

	g_return_val_if_fail(model != NULL && conf != NULL, FALSE);
	g_return_val_if_fail(exe_path != NULL && files != NULL, FALSE);

	if (!conf_prefix_accepts(conf->exeprefix, exe_path))
		return FALSE;
	exe = model_lookup_exe(model, exe_path);
	if (!exe)
		return conf->learnexec && !g_hash_table_contains(model->bad_exes, exe_path);
	mapped = g_hash_table_new(g_str_hash, g_str_equal);
	for (guint i = 0; i < exe->exemaps->len; i++) {
		const ExeMap *em = &g_array_index(exe->exemaps, ExeMap, i);

		if (em->origin != EXEMAP_READ)
			g_hash_table_add(mapped, em->map->path);
	}
	for (guint i = files->len; i-- > 0;) {
		const WatchFile *file = g_ptr_array_index(files, i);

		if (g_hash_table_contains(mapped, file->path))
			g_ptr_array_remove_index(files, i);
	}
	return TRUE;
}

LearnRead
learn_read_set(Learn *learn, Model *model, const Conf *conf, const char *exe_path,
	       const GArray *ranges, gint64 now)
{
	g_autoptr(GHashTable) stat_cache = NULL;
	g_autoptr(GArray) add = NULL;             /* WatchRange to add, borrowed paths */
	Known known;
	guint64 added;
	LearnRead result;
	Exe *exe;

	g_return_val_if_fail(learn != NULL, LEARN_READ_IGNORED);
	g_return_val_if_fail(model != NULL, LEARN_READ_IGNORED);
	g_return_val_if_fail(conf != NULL, LEARN_READ_IGNORED);
	g_return_val_if_fail(exe_path != NULL, LEARN_READ_IGNORED);
	g_return_val_if_fail(ranges != NULL, LEARN_READ_IGNORED);

	if (!conf_prefix_accepts(conf->exeprefix, exe_path))
		return LEARN_READ_IGNORED;
	exe = model_lookup_exe(model, exe_path);
	if (!exe && (!conf->learnexec || g_hash_table_contains(model->bad_exes, exe_path)))
		return LEARN_READ_IGNORED;

	stat_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	add = g_array_new(FALSE, FALSE, sizeof(WatchRange));
	known_init(&known, exe);
	added = pick_ranges(learn, conf, &known, stat_cache, ranges, add);
	known_clear(&known);

	if (!exe) {
		/* An unknown program: its read set is all that is known of it. */
		if (added < (guint64)MAX(conf->minsize, 0)) {
			model_add_bad_exe(model, exe_path, added, now);
			learn->stats.too_small++;
			g_debug("started exe %s: %" G_GUINT64_FORMAT " bytes read at start-up, "
				"below minsize, not modelled for now", exe_path, added);
			return LEARN_READ_TOO_SMALL;
		}
		if (!model_make_room_for_exe(model)) {
			model_add_bad_exe(model, exe_path, 0, now);
			learn->stats.refused++;
			return LEARN_READ_TOO_SMALL;
		}
		exe = exe_new(exe_path, FALSE, now);
	}
	add_read_maps(learn, model, exe, stat_cache, add, now);

	result = model_lookup_exe(model, exe_path) ? LEARN_READ_ADDED : LEARN_READ_ADMITTED;
	if (result == LEARN_READ_ADMITTED) {
		g_debug("started exe %s: admitted from its start-up reads, %u ranges, %"
			G_GUINT64_FORMAT " bytes", exe_path, add->len, added);
		/* Not running: its chains come with its first scan (model_link_exe). */
		model_add_exe(model, exe, now, conf->allpairs);
		learn->stats.learned_admitted++;
	} else if (add->len > 0) {
		g_debug("exe %s: %u ranges, %" G_GUINT64_FORMAT " bytes learned from its start-up reads",
			exe_path, add->len, added);
	} else {
		result = LEARN_READ_UNCHANGED;
	}
	learn->stats.learned++;
	model->dirty = TRUE;
	return result;
}
