/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzzes the mountinfo parser and the translation built on it: every line
 * of the input as a line of /proc/PID/mountinfo (escapes such as \040,
 * any number of optional fields, up to 10,000 and more lines), then the
 * mounts parsed as both a namespace's table and preload's, with every
 * mount point (and a file below it) translated, by path and on its own
 * mount. Besides memory errors (ASan) and undefined behaviour (UBSan), it
 * checks what the callers rely on: a parsed mount has an absolute root
 * and mount point and a file system type, a failure comes with a
 * PROC_ERROR_PARSE, and a translation is NULL with a reason or an
 * absolute path.
 */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "mountns.h"
#include "proc.h"

/* Mounts translated against each other at most: the work is quadratic. */
#define MAX_TRANSLATED 200

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_logs();
	return 0;
}

static void
check_translation(const GArray *mounts, const char *path)
{
	MountNsDrop why = MOUNTNS_N_DROPS;
	g_autofree char *got = mountns_translate_path(mounts, mounts, path, 0, &why);

	if (got ? got[0] != '/' : why >= MOUNTNS_N_DROPS)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The parser takes C strings: the text stops at the first NUL. */
	g_autofree char *text = g_strndup((const char *)data, size);
	g_autoptr(GArray) mounts = g_array_new(FALSE, FALSE, sizeof(ProcMount));
	char *line = text;

	g_array_set_clear_func(mounts, proc_mount_clear);
	for (;;) {
		char *nl = strchr(line, '\n');
		g_autofree char *one = nl ? g_strndup(line, (gsize)(nl - line + 1)) : g_strdup(line);
		g_autoptr(GError) error = NULL;
		ProcMount m = { 0 };

		if (proc_parse_mountinfo_line(one, &m, &error)) {
			if (!m.root || m.root[0] != '/' || !m.mountpoint || m.mountpoint[0] != '/' ||
			    !m.fstype || !m.fstype[0])
				abort();
			if (mounts->len < PROC_MOUNTS_MAX)
				g_array_append_val(mounts, m);
			else
				proc_mount_clear(&m);
		} else if (!g_error_matches(error, PROC_ERROR, PROC_ERROR_PARSE) || m.root) {
			abort();
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	for (guint i = 0; i < mounts->len && i < MAX_TRANSLATED; i++) {
		const ProcMount *m = &g_array_index(mounts, ProcMount, i);
		g_autofree char *below = g_build_filename(m->mountpoint, "x", NULL);

		MountNsDrop why = MOUNTNS_N_DROPS;
		g_autofree char *on = NULL;

		check_translation(mounts, m->mountpoint);
		check_translation(mounts, below);
		/* On the mount itself, as for an event's mount id. */
		on = mountns_translate_on_mount(m, mounts, below, &why);
		if (on ? on[0] != '/' : why >= MOUNTNS_N_DROPS)
			abort();
	}
	mountns_prefix_root(mounts, "/srv/root");
	for (guint i = 0; i < mounts->len; i++)
		if (!g_str_has_prefix(g_array_index(mounts, ProcMount, i).mountpoint, "/srv/root"))
			abort();
	return 0;
}
