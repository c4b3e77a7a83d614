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
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(mountns_suite());
}
