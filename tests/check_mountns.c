/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/mountns.c: the translation of a path seen in another
 * mount namespace into a path here, on mount tables written as struct
 * literals after what Flatpak, Snap, container engines and a user's own
 * namespace make; each expected path is worked out by hand.
 */
#include "config.h"

#include "testutil.h"
#include "mountns.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

typedef struct {
	const char *mountpoint;
	const char *root;
	guint major, minor;
} M;

#define END_MOUNTS { NULL, NULL, 0, 0 }

static GArray *
mounts_of(const M *list)
{
	GArray *mounts = g_array_new(FALSE, FALSE, sizeof(ProcMount));

	g_array_set_clear_func(mounts, proc_mount_clear);
	for (guint i = 0; list[i].mountpoint; i++) {
		ProcMount m = { 0 };

		m.id = i + 1;
		m.dev_major = list[i].major;
		m.dev_minor = list[i].minor;
		m.root = g_strdup(list[i].root);
		m.mountpoint = g_strdup(list[i].mountpoint);
		m.fstype = g_strdup("x");
		g_array_append_val(mounts, m);
	}
	return mounts;
}

/* The host: ext4 on 254:0 at /, a squashfs per snap, a container's overlay, a FUSE mount. */
static const M host[] = {
	{ "/", "/", 254, 0 },
	{ "/proc", "/", 0, 22 },
	{ "/snap/core22/1380", "/", 7, 3 },
	{ "/snap/hello/42", "/", 7, 5 },
	{ "/var/lib/docker/overlay2/abc/merged", "/", 0, 98 },
	{ "/home", "/", 254, 1 },
	END_MOUNTS
};

typedef struct {
	const char *what;
	const M *ns;
	const char *path;
	guint major, minor;   /* of the maps line; 0:0 takes the mount's */
	const char *expect;   /* NULL: dropped */
	MountNsDrop why;
} Case;

/* Flatpak: /usr and /app are directories of the host's /var/lib/flatpak, on a tmpfs root. */
static const M flatpak[] = {
	{ "/", "/", 0, 61 },
	{ "/usr", "/var/lib/flatpak/runtime/org.gnome.Platform/x86_64/45/a1/files", 254, 0 },
	{ "/app", "/var/lib/flatpak/app/org.x.App/x86_64/stable/b2/files", 254, 0 },
	{ "/home/u", "/u", 254, 1 },
	END_MOUNTS
};

/* A per-user Flatpak install lives in the home file system. */
static const M flatpak_user[] = {
	{ "/", "/", 0, 61 },
	{ "/app", "/u/.local/share/flatpak/app/org.y/x86_64/stable/c3/files", 254, 1 },
	END_MOUNTS
};

/* Snap: the base snap as /, the snap itself under /snap. */
static const M snap[] = {
	{ "/", "/", 7, 3 },
	{ "/snap/hello/42", "/", 7, 5 },
	{ "/var/lib/snapd", "/var/lib/snapd", 254, 0 },
	END_MOUNTS
};

/* A container: its overlay as /, a host directory bound in. */
static const M container[] = {
	{ "/", "/", 0, 98 },
	{ "/data", "/srv/data", 254, 0 },
	END_MOUNTS
};

/* A user's namespace: the host's root, and a tmpfs of its own over /usr/local/bin. */
static const M user_tmpfs[] = {
	{ "/", "/", 254, 0 },
	{ "/usr/local/bin", "/", 0, 70 },
	END_MOUNTS
};

/* A private namespace: one host file bound over another host path. */
static const M bind_file[] = {
	{ "/", "/", 254, 0 },
	{ "/usr/local/lib/nsdemo/data.so", "/tmp/real/data.so", 254, 0 },
	END_MOUNTS
};

/* Two mounts on /opt: the later one is on top. */
static const M stacked[] = {
	{ "/", "/", 254, 0 },
	{ "/opt", "/", 0, 71 },
	{ "/opt", "/srv/opt", 254, 0 },
	{ "/usr", "/", 0, 72 },
	END_MOUNTS
};

static const Case cases[] = {
	{ "flatpak runtime", flatpak, "/usr/lib/x86_64-linux-gnu/libgtk-4.so.1", 254, 0,
	  "/var/lib/flatpak/runtime/org.gnome.Platform/x86_64/45/a1/files/lib/x86_64-linux-gnu/libgtk-4.so.1", 0 },
	{ "flatpak app", flatpak, "/app/bin/x", 254, 0,
	  "/var/lib/flatpak/app/org.x.App/x86_64/stable/b2/files/bin/x", 0 },
	{ "flatpak mount point itself", flatpak, "/app", 0, 0,
	  "/var/lib/flatpak/app/org.x.App/x86_64/stable/b2/files", 0 },
	{ "flatpak home bind", flatpak, "/home/u/.cache/f", 254, 1, "/home/u/.cache/f", 0 },
	{ "flatpak private tmpfs root", flatpak, "/etc/ld.so.cache", 0, 61, NULL, MOUNTNS_DROP_NOT_ON_HOST },
	{ "per-user flatpak", flatpak_user, "/app/lib/liby.so", 254, 1,
	  "/home/u/.local/share/flatpak/app/org.y/x86_64/stable/c3/files/lib/liby.so", 0 },
	{ "snap base as /", snap, "/usr/lib/x86_64-linux-gnu/libc.so.6", 7, 3,
	  "/snap/core22/1380/usr/lib/x86_64-linux-gnu/libc.so.6", 0 },
	{ "snap itself", snap, "/snap/hello/42/bin/hello", 7, 5, "/snap/hello/42/bin/hello", 0 },
	{ "snap exe, device from its mount", snap, "/snap/hello/42/bin/hello", 0, 0,
	  "/snap/hello/42/bin/hello", 0 },
	{ "snap host dir", snap, "/var/lib/snapd/seed/x", 254, 0, "/var/lib/snapd/seed/x", 0 },
	{ "container overlay", container, "/usr/bin/python3", 0, 98,
	  "/var/lib/docker/overlay2/abc/merged/usr/bin/python3", 0 },
	{ "container bind", container, "/data/model.bin", 254, 0, "/srv/data/model.bin", 0 },
	{ "container: device of another mount", container, "/usr/bin/python3", 254, 0, NULL,
	  MOUNTNS_DROP_DEVICE },
	{ "user tmpfs", user_tmpfs, "/usr/local/bin/evil1", 0, 70, NULL, MOUNTNS_DROP_NOT_ON_HOST },
	{ "user tmpfs, exe", user_tmpfs, "/usr/local/bin/evil1", 0, 0, NULL, MOUNTNS_DROP_NOT_ON_HOST },
	{ "user ns, host file", user_tmpfs, "/usr/lib/libc.so.6", 254, 0, "/usr/lib/libc.so.6", 0 },
	{ "user ns, component boundary", user_tmpfs, "/usr/local/binx", 254, 0, "/usr/local/binx", 0 },
	{ "bind over a host path", bind_file, "/usr/local/lib/nsdemo/data.so", 254, 0, "/tmp/real/data.so", 0 },
	{ "stacked: the top one", stacked, "/opt/app/bin", 254, 0, "/srv/opt/app/bin", 0 },
	{ "stacked: under it", stacked, "/opt/app/bin", 0, 71, NULL, MOUNTNS_DROP_DEVICE },
	{ "relative path", flatpak, "usr/lib/x", 0, 0, NULL, MOUNTNS_DROP_NO_MOUNT },
};

START_TEST(test_translate)
{
	const Case *c = &cases[_i];
	g_autoptr(GArray) ns = mounts_of(c->ns);
	g_autoptr(GArray) here = mounts_of(host);
	g_autofree char *got = NULL;
	MountNsDrop why = MOUNTNS_N_DROPS;
	guint64 dev = (c->major || c->minor) ? (guint64)makedev(c->major, c->minor) : 0;

	got = mountns_translate_path(ns, here, c->path, dev, &why);
	if (c->expect) {
		ck_assert_msg(got != NULL, "%s: dropped (%s)", c->what, mountns_drop_name(why));
		ck_assert_str_eq(got, c->expect);
	} else {
		ck_assert_msg(got == NULL, "%s: translated to %s", c->what, got);
		ck_assert_msg(why == c->why, "%s: %s", c->what, mountns_drop_name(why));
	}
}
END_TEST

/* A place here covered by another mount shows another file: not a translation. */
START_TEST(test_covered_here)
{
	static const M covered_host[] = {
		{ "/", "/", 254, 0 },
		{ "/var/lib/flatpak", "/", 0, 80 },
		END_MOUNTS
	};
	static const M also_bound[] = {
		{ "/", "/", 254, 0 },
		{ "/var/lib/flatpak", "/", 0, 80 },
		{ "/mnt/rootfs", "/", 254, 0 },
		END_MOUNTS
	};
	g_autoptr(GArray) ns = mounts_of(flatpak);
	g_autoptr(GArray) here = mounts_of(covered_host);
	g_autoptr(GArray) here2 = mounts_of(also_bound);
	g_autofree char *got = NULL;
	MountNsDrop why = MOUNTNS_N_DROPS;

	got = mountns_translate_path(ns, here, "/app/bin/x", makedev(254, 0), &why);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(why, MOUNTNS_DROP_NOT_ON_HOST);
	/* The same file system is also mounted elsewhere, uncovered: that path. */
	got = mountns_translate_path(ns, here2, "/app/bin/x", makedev(254, 0), &why);
	ck_assert_str_eq(got, "/mnt/rootfs/var/lib/flatpak/app/org.x.App/x86_64/stable/b2/files/bin/x");
}
END_TEST

/* A chrooted process: mountinfo names mount points from its root. */
START_TEST(test_prefix_root)
{
	static const M seen[] = {
		{ "/", "/", 0, 98 },
		{ "/proc", "/", 0, 99 },
		END_MOUNTS
	};
	g_autoptr(GArray) mounts = mounts_of(seen);
	g_autoptr(GArray) same = mounts_of(seen);

	mountns_prefix_root(mounts, "/srv/chroot");
	ck_assert_str_eq(g_array_index(mounts, ProcMount, 0).mountpoint, "/srv/chroot");
	ck_assert_str_eq(g_array_index(mounts, ProcMount, 1).mountpoint, "/srv/chroot/proc");
	mountns_prefix_root(same, "/");
	ck_assert_str_eq(g_array_index(same, ProcMount, 1).mountpoint, "/proc");
}
END_TEST

START_TEST(test_drop_names)
{
	ck_assert_str_eq(mountns_drop_name(MOUNTNS_DROP_NOT_ON_HOST), "not-on-host");
	ck_assert_str_eq(mountns_drop_name(MOUNTNS_DROP_NO_MOUNT), "outside-mounts");
	ck_assert_str_eq(mountns_drop_name(MOUNTNS_DROP_DEVICE), "device-mismatch");
	ck_assert_str_eq(mountns_drop_name(MOUNTNS_DROP_UNREADABLE), "unreadable-namespace");
}
END_TEST

/* This process: its own namespace, nothing to translate, nothing counted. */
START_TEST(test_self_is_same)
{
	g_autoptr(MountNs) ns = mountns_new();
	g_autofree char *host_path = NULL;
	MountNsDrop why;

	proc_set_root(NULL);
	mountns_begin(ns);
	ck_assert_int_eq(mountns_translate(ns, getpid(), "/usr/bin/x", 0, TRUE, &host_path, &why),
			 MOUNTNS_SAME);
	ck_assert_ptr_null(host_path);
	ck_assert_uint_eq(mountns_get_stats(ns)->processes, 0);
	ck_assert_uint_eq(mountns_get_stats(ns)->translated, 0);
}
END_TEST

/*
 * The device of the mount a file lies on stands in for st_dev (btrfs
 * gives each subvolume its own): this test file, on whatever file system
 * the tree is, with st_dev made wrong on purpose. Its mount's device is
 * looked up in /proc/self/mountinfo by hand.
 */
START_TEST(test_mountdevs)
{
	g_autoptr(MountDevs) md = mountdevs_new();
	g_autoptr(GArray) mounts = g_array_new(FALSE, FALSE, sizeof(ProcMount));
	struct statx stx;
	guint64 mount_dev = 0;
	struct stat st;
	int fd;

	proc_set_root(NULL);
	g_array_set_clear_func(mounts, proc_mount_clear);
	fd = open(TEST_SRCDIR "/check_mountns.c", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx), 0);
	ck_assert(proc_read_mountinfo(0, mounts, NULL));
	for (guint i = 0; i < mounts->len; i++) {
		const ProcMount *m = &g_array_index(mounts, ProcMount, i);

		if (m->id == stx.stx_mnt_id)
			mount_dev = makedev(m->dev_major, m->dev_minor);
	}
	ck_assert_uint_ne(mount_dev, 0);

	/* st_dev and inode as given: the same file. */
	ck_assert(mountdevs_same_file(md, fd, "", AT_EMPTY_PATH, st.st_dev, st.st_ino,
				      st.st_dev, st.st_ino));
	/* Another inode: never. */
	ck_assert(!mountdevs_same_file(md, fd, "", AT_EMPTY_PATH, st.st_dev, st.st_ino,
				       st.st_dev, st.st_ino + 1));
	/* st_dev another than the maps line's, the mount's device the maps line's: the same. */
	ck_assert(mountdevs_same_file(md, fd, "", AT_EMPTY_PATH, st.st_dev + 1, st.st_ino,
				      mount_dev, st.st_ino));
	/* Neither st_dev nor the mount's device: another file. */
	ck_assert(!mountdevs_same_file(md, fd, "", AT_EMPTY_PATH, mount_dev + 2, st.st_ino,
				       mount_dev + 1, st.st_ino));
	/* By path, as the sweep asks. */
	ck_assert(mountdevs_same_file(md, AT_FDCWD, TEST_SRCDIR "/check_mountns.c",
				      AT_SYMLINK_NOFOLLOW, st.st_dev + 1, st.st_ino, mount_dev, st.st_ino));
	close(fd);
}
END_TEST

/* The mount itself is known (a descriptor's mount id): no lookup by path. */
START_TEST(test_translate_on_mount)
{
	g_autoptr(GArray) ns = mounts_of(stacked);
	g_autoptr(GArray) here = mounts_of(host);
	g_autoptr(GArray) ct = mounts_of(container);
	g_autofree char *got = NULL;
	MountNsDrop why = MOUNTNS_N_DROPS;

	/* The top mount of /opt: /srv/opt on 254:0, shown here at /srv/opt. */
	got = mountns_translate_on_mount(&g_array_index(ns, ProcMount, 2), here, "/opt/app/bin", &why);
	ck_assert_str_eq(got, "/srv/opt/app/bin");
	g_clear_pointer(&got, g_free);
	/* A file opened on the covered one (0:71) before the cover: no mount here shows it. */
	got = mountns_translate_on_mount(&g_array_index(ns, ProcMount, 1), here, "/opt/app/bin", &why);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(why, MOUNTNS_DROP_NOT_ON_HOST);
	/* The container's bind of /srv/data at /data: the host's /srv/data. */
	got = mountns_translate_on_mount(&g_array_index(ct, ProcMount, 1), here, "/data/m.bin", &why);
	ck_assert_str_eq(got, "/srv/data/m.bin");
	g_clear_pointer(&got, g_free);
	/* A path outside the mount's point (component-wise) is not the mount's. */
	got = mountns_translate_on_mount(&g_array_index(ct, ProcMount, 1), here, "/datax/m.bin", &why);
	ck_assert_ptr_null(got);
	ck_assert_int_eq(why, MOUNTNS_DROP_NO_MOUNT);
}
END_TEST

/*
 * MountIds on a fake /proc, as systemd runs preload inside a container:
 * the service has its own copy of the container's namespace (ids 300..),
 * the container's processes the original (ids 200..), and a program in
 * preload's own namespace opens files of an overlay's layer (id 999, in
 * no table). Each expected path is worked out by hand from the tables.
 */
static const char self_mounts[] =
	"300 250 254:0 /var/tmp/ct/root / ro,relatime - ext4 /dev/vda rw\n"
	"301 300 0:50 / /tmp rw,nosuid - tmpfs tmpfs rw\n"
	"302 300 0:22 / /proc rw - proc proc rw\n";
static const char container_mounts[] =
	"200 150 254:0 /var/tmp/ct/root / rw,relatime shared:1 - ext4 /dev/vda rw\n"
	"201 200 0:60 / /tmp rw - tmpfs tmpfs rw\n"
	"202 200 254:0 /var/tmp/ct/root/srv/data /data rw - ext4 /dev/vda rw\n"
	"203 200 0:23 / /proc rw - proc proc rw\n";
static const char chroot_mounts[] =
	"210 150 254:0 /var/tmp/ct/root/opt/jail / rw - ext4 /dev/vda rw\n";

static char *
fake_proc(void)
{
	g_autofree char *dir = tu_make_tempdir();
	g_autofree char *self = g_build_filename(dir, "self", "mountinfo", NULL);
	g_autofree char *ct = g_build_filename(dir, "100", "mountinfo", NULL);
	g_autofree char *same = g_build_filename(dir, "101", "mountinfo", NULL);
	g_autofree char *jail = g_build_filename(dir, "102", "mountinfo", NULL);
	g_autofree char *root100 = g_build_filename(dir, "100", "root", NULL);
	g_autofree char *root101 = g_build_filename(dir, "101", "root", NULL);
	g_autofree char *root102 = g_build_filename(dir, "102", "root", NULL);

	tu_write_file(self, self_mounts);
	tu_write_file(ct, container_mounts);
	tu_write_file(same, self_mounts);
	/* A process chrooted in /jail of a namespace of the container's tree. */
	tu_write_file(jail, chroot_mounts);
	ck_assert_int_eq(symlink("/", root100), 0);
	ck_assert_int_eq(symlink("/", root101), 0);
	ck_assert_int_eq(symlink("/jail", root102), 0);
	return g_steal_pointer(&dir);
}

/* Adds process pid with the mount table text and root "/" to the fake /proc at dir. */
static void
fake_process(const char *dir, int pid, const char *mounts)
{
	g_autofree char *rel = g_strdup_printf("%d", pid);
	g_autofree char *info = g_build_filename(dir, rel, "mountinfo", NULL);
	g_autofree char *root = g_build_filename(dir, rel, "root", NULL);

	tu_write_file(info, mounts);
	ck_assert_int_eq(symlink("/", root), 0);
}

typedef struct {
	const char *what;
	pid_t pid;
	guint mount_id;
	const char *path;
	MountNsResult result;
	const char *expect;   /* TRANSLATED: the path here */
	MountNsDrop why;      /* DROPPED: the reason */
} EventCase;

static const EventCase event_cases[] = {
	{ "a mount of preload's", 100, 300, "/usr/bin/perl", MOUNTNS_SAME, NULL, 0 },
	{ "the container's copy of preload's root", 100, 200, "/usr/bin/perl",
	  MOUNTNS_TRANSLATED, "/usr/bin/perl", 0 },
	{ "the container's bind of its own /srv/data", 100, 202, "/data/model.bin",
	  MOUNTNS_TRANSLATED, "/srv/data/model.bin", 0 },
	{ "the container's own /tmp", 100, 201, "/tmp/x", MOUNTNS_DROPPED, NULL,
	  MOUNTNS_DROP_NOT_ON_HOST },
	{ "an overlay's layer, opened in preload's namespace", 101, 999, "/usr/bin/perl",
	  MOUNTNS_DROPPED, NULL, MOUNTNS_DROP_NO_MOUNT },
	{ "a process that is gone", 4242, 998, "/usr/bin/perl", MOUNTNS_DROPPED, NULL,
	  MOUNTNS_DROP_UNREADABLE },
	{ "chrooted: its root mount, named from its namespace's root", 102, 210,
	  "/jail/bin/sh", MOUNTNS_TRANSLATED, "/opt/jail/bin/sh", 0 },
	{ "chrooted: a path outside its mount", 102, 210, "/bin/sh", MOUNTNS_DROPPED, NULL,
	  MOUNTNS_DROP_NO_MOUNT },
};

START_TEST(test_event_path)
{
	const EventCase *c = &event_cases[_i];
	g_autofree char *dir = fake_proc();
	g_autoptr(MountIds) ids = mountids_new();
	g_autofree char *got = NULL;
	MountNsDrop why = MOUNTNS_N_DROPS;
	MountNsResult r;

	proc_set_root(dir);
	r = mountids_event_path(ids, c->pid, c->mount_id, c->path, 1000000, &got, &why);
	proc_set_root(NULL);
	tu_rm_rf(dir);
	ck_assert_msg(r == c->result, "%s: result %d, want %d", c->what, r, c->result);
	if (c->result == MOUNTNS_TRANSLATED)
		ck_assert_str_eq(got, c->expect);
	else
		ck_assert_msg(got == NULL, "%s: %s", c->what, got);
	if (c->result == MOUNTNS_DROPPED)
		ck_assert_msg(why == c->why, "%s: %s", c->what, mountns_drop_name(why));
}
END_TEST

/* Tables are read again: preload's for a new mount, others' after their time. */
START_TEST(test_event_path_reread)
{
	g_autofree char *dir = fake_proc();
	g_autofree char *self = g_build_filename(dir, "self", "mountinfo", NULL);
	g_autofree char *ct = g_build_filename(dir, "100", "mountinfo", NULL);
	g_autoptr(MountIds) ids = mountids_new();
	g_autofree char *got = NULL;
	g_autofree char *self2 = g_strconcat(self_mounts,
					     "305 300 0:70 / /mnt rw - tmpfs tmpfs rw\n", NULL);
	MountNsDrop why;
	const gint64 t0 = 1000000;

	proc_set_root(dir);
	ck_assert_int_eq(mountids_event_path(ids, 100, 200, "/usr/bin/perl", t0, &got, &why),
			 MOUNTNS_TRANSLATED);
	g_clear_pointer(&got, g_free);
	/* Mounted here since: within a second the table is not read again... */
	tu_write_file(self, self2);
	ck_assert_int_eq(mountids_event_path(ids, 100, 305, "/mnt/f", t0 + 500000, &got, &why),
			 MOUNTNS_DROPPED);
	ck_assert_int_eq(why, MOUNTNS_DROP_NO_MOUNT);
	/* ... after it, it is. */
	ck_assert_int_eq(mountids_event_path(ids, 100, 305, "/mnt/f", t0 + 1500000, &got, &why),
			 MOUNTNS_SAME);
	/* So is it at once when told the table changed. */
	tu_write_file(self, self_mounts);
	mountids_forget_own(ids);
	ck_assert_int_eq(mountids_event_path(ids, 100, 305, "/mnt/f", t0 + 1600000, &got, &why),
			 MOUNTNS_DROPPED);

	/* The container's id 200 now a tmpfs of its own (the id reused): trusted for 10 s... */
	tu_write_file(ct, "200 150 0:61 / / rw - tmpfs tmpfs rw\n");
	ck_assert_int_eq(mountids_event_path(ids, 100, 200, "/usr/bin/perl", t0 + 9000000, &got,
					     &why), MOUNTNS_TRANSLATED);
	ck_assert_str_eq(got, "/usr/bin/perl");
	g_clear_pointer(&got, g_free);
	/* ... then read again. */
	ck_assert_int_eq(mountids_event_path(ids, 100, 200, "/usr/bin/perl", t0 + 10000000, &got,
					     &why), MOUNTNS_DROPPED);
	ck_assert_int_eq(why, MOUNTNS_DROP_NOT_ON_HOST);
	proc_set_root(NULL);
	tu_rm_rf(dir);
}
END_TEST

/*
 * An id the opener's table lacks (a layer) is not looked for again in
 * other processes' tables for a period: here pid 103's table has it, and
 * is read only once preload's own table changes or the period ends.
 */
START_TEST(test_event_path_absent)
{
	g_autofree char *dir = fake_proc();
	g_autoptr(MountIds) ids = mountids_new();
	g_autofree char *got = NULL;
	MountNsDrop why;
	const gint64 t0 = 1000000;

	fake_process(dir, 103, "999 150 254:0 /var/tmp/ct/root / rw - ext4 /dev/vda rw\n");
	proc_set_root(dir);
	ck_assert_int_eq(mountids_event_path(ids, 101, 999, "/usr/bin/perl", t0, &got, &why),
			 MOUNTNS_DROPPED);
	ck_assert_int_eq(why, MOUNTNS_DROP_NO_MOUNT);
	ck_assert_int_eq(mountids_event_path(ids, 103, 999, "/usr/bin/perl", t0 + 1, &got, &why),
			 MOUNTNS_DROPPED);
	ck_assert_int_eq(why, MOUNTNS_DROP_NO_MOUNT);
	ck_assert_ptr_null(got);
	mountids_forget_own(ids);
	ck_assert_int_eq(mountids_event_path(ids, 103, 999, "/usr/bin/perl", t0 + 2, &got, &why),
			 MOUNTNS_TRANSLATED);
	ck_assert_str_eq(got, "/usr/bin/perl");
	proc_set_root(NULL);
	tu_rm_rf(dir);
}
END_TEST

/* Without a table of its own (a kernel or /proc it cannot read) nothing can be told. */
START_TEST(test_event_path_no_table)
{
	g_autofree char *dir = tu_make_tempdir();
	g_autoptr(MountIds) ids = mountids_new();
	g_autofree char *got = NULL;
	MountNsDrop why;

	proc_set_root(dir);
	ck_assert_int_eq(mountids_event_path(ids, 100, 200, "/usr/bin/perl", 1000000, &got, &why),
			 MOUNTNS_SAME);
	ck_assert_ptr_null(got);
	proc_set_root(NULL);
	tu_rm_rf(dir);
}
END_TEST

static Suite *
mountns_suite(void)
{
	Suite *s = suite_create("mountns");
	TCase *tc = tcase_create("translate");

	tcase_add_loop_test(tc, test_translate, 0, G_N_ELEMENTS(cases));
	tcase_add_test(tc, test_covered_here);
	tcase_add_test(tc, test_prefix_root);
	tcase_add_test(tc, test_drop_names);
	tcase_add_test(tc, test_self_is_same);
	tcase_add_test(tc, test_mountdevs);
	tcase_add_test(tc, test_translate_on_mount);
	tcase_add_loop_test(tc, test_event_path, 0, G_N_ELEMENTS(event_cases));
	tcase_add_test(tc, test_event_path_reread);
	tcase_add_test(tc, test_event_path_absent);
	tcase_add_test(tc, test_event_path_no_table);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(mountns_suite());
}
