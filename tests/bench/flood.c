/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * flood: what a hostile local user can make the model cost, driven
 * through the daemon's own scan and learn code with a made-up /proc.
 *
 *   flood programs N STATE   N distinct programs, 100 new ones a cycle,
 *                            each running for one cycle and mapping its
 *                            own 4 MB binary, 20 libraries every program
 *                            shares and 10 of its own
 *   flood maps N STATE       N distinct 4 KiB windows offered, 10,000 per
 *                            program: 10 new programs a cycle, each
 *                            running for one cycle and mapping 10,000
 *                            windows of one 40 MB library
 *
 * After every cycle it prints the model's size and VmRSS; every tenth of
 * the way, and at the end, it saves the state to STATE and prints its
 * size, and at the end how long loading it takes and VmHWM, and the
 * longest cycle (scan and update: how long the daemon's main loop would
 * leave a signal waiting) and the longest save (what SIGTERM waits for). Files are
 * never touched: the maps come from the made-up /proc and every path
 * counts as a regular file of unknown identity, as in a replay. The model
 * runs under the configuration's defaults (the caps among them), so the
 * same program measures a tree that has no caps: built with -DFLOOD_SPY
 * it uses the spy module that scan and learn were split from (36f5084
 * and older trees), for before-and-after figures.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>

#include "conf.h"
#include "model.h"
#include "proc.h"
#include "state.h"
#ifdef FLOOD_SPY
#include "spy.h"
typedef Spy Learn;
typedef Spy Scan;
#define learn_new() spy_new()
#define scan_new() spy_new()
#define learn_free(l) spy_free(l)
#define scan_free(s) spy_free(s)
#define learn_set_maps_source spy_set_maps_source
#define learn_set_file_check spy_set_file_check
#define scan_begin spy_begin_scan
#define scan_saw_process spy_saw_process
#define scan_end spy_end_scan
#define learn_update(l, s, m, c, t) spy_update_model(l, m, c, t)
#else
#include "learn.h"
#include "scan.h"
#endif

#define PROGRAMS_PER_CYCLE 100
#define MAP_PROGRAMS_PER_CYCLE 10
#define WINDOWS_PER_PROGRAM 10000
#define CYCLE 20

typedef enum { FLOOD_PROGRAMS, FLOOD_MAPS } FloodKind;

typedef struct {
	FloodKind kind;
	guint first;          /* program number of pid 1 this cycle */
} Flood;

static void
add_map(GArray *maps, const char *path, guint64 offset, guint64 length)
{
	static guint64 addr = 0x10000000;
	ProcMap m = { 0 };

	m.start = addr;
	m.end = addr + length;
	m.offset = offset;
	m.inode = 1;
	m.path = g_strdup(path);
	addr += length + 4096;
	g_array_append_val(maps, m);
}

static gboolean
flood_maps(pid_t pid, const char *exe_path, GArray *maps, gpointer user_data, GError **error)
{
	const Flood *flood = user_data;
	guint program = flood->first + (guint)pid - 1;
	char path[128];

	(void)error;
	add_map(maps, exe_path, 0, 4 << 20);
	if (flood->kind == FLOOD_PROGRAMS) {
		for (guint i = 0; i < 20; i++) {
			g_snprintf(path, sizeof(path), "/usr/lib/libshared%u.so", i);
			add_map(maps, path, 0, 1 << 20);
		}
		for (guint i = 0; i < 10; i++) {
			g_snprintf(path, sizeof(path), "/usr/lib/flood%u/lib%u.so", program, i);
			add_map(maps, path, 0, 256 << 10);
		}
		return TRUE;
	}
	/* Distinct windows of one library, the next 10,000 for each program. */
	for (guint i = 0; i < WINDOWS_PER_PROGRAM; i++)
		add_map(maps, "/usr/lib/big.so",
			((guint64)program * WINDOWS_PER_PROGRAM + i) * 4096, 4096);
	return TRUE;
}

static gboolean
any_file(const char *path, MapFileId *id, gpointer user_data)
{
	(void)path;
	(void)user_data;
	memset(id, 0, sizeof(*id));
	return TRUE;
}

static long
status_kb(const char *field)
{
	g_autofree char *text = NULL;
	const char *at;

	if (!g_file_get_contents("/proc/self/status", &text, NULL, NULL))
		return -1;
	at = strstr(text, field);
	return at ? strtol(at + strlen(field) + 1, NULL, 10) : -1;
}

static long
save_size(Model *model, const char *path)
{
	g_autoptr(GError) error = NULL;
	GStatBuf st;

	if (!state_save(model, path, &error)) {
		g_printerr("flood: %s\n", error->message);
		exit(1);
	}
	return g_stat(path, &st) == 0 ? (long)st.st_size : -1;
}

int
main(int argc, char **argv)
{
	g_autoptr(Conf) conf = conf_new();
	g_autoptr(Model) model = model_new();
	Learn *learn = learn_new();
#ifdef FLOOD_SPY
	Scan *scan = learn;
#else
	Scan *scan = scan_new();
#endif
	g_autoptr(Model) loaded = NULL;
	g_autoptr(GError) error = NULL;
	Flood flood = { 0 };
	guint total, cycles, per_program, per_cycle;
	gint64 now = 0, started, worst_cycle = 0, worst_save = 0;
	long peak_rss = 0, peak_state = 0, hwm;

	if (argc != 4 || (strcmp(argv[1], "programs") && strcmp(argv[1], "maps"))) {
		g_printerr("usage: flood programs|maps N STATE\n");
		return 2;
	}
	flood.kind = strcmp(argv[1], "programs") == 0 ? FLOOD_PROGRAMS : FLOOD_MAPS;
	total = (guint)strtoul(argv[2], NULL, 10);
	per_program = flood.kind == FLOOD_PROGRAMS ? 1 : WINDOWS_PER_PROGRAM;
	per_cycle = flood.kind == FLOOD_PROGRAMS ? PROGRAMS_PER_CYCLE : MAP_PROGRAMS_PER_CYCLE;
	cycles = (total / per_program + per_cycle - 1) / per_cycle;

	learn_set_maps_source(learn, flood_maps, &flood);
	learn_set_file_check(learn, any_file, NULL);
	printf("cycle offered exes maps chains rss_kb state_bytes\n");
	for (guint c = 0; c < cycles; c++) {
		char exe[64];
		long rss, state = -1;

		flood.first = c * per_cycle;
		started = g_get_monotonic_time();
		now += CYCLE / 2;
		scan_begin(scan, model, now);
		for (guint i = 0; i < per_cycle; i++) {
			g_snprintf(exe, sizeof(exe), "/usr/bin/flood%u", flood.first + i);
			scan_saw_process(scan, model, conf, (pid_t)(i + 1), exe);
		}
		scan_end(scan, model, now);
		now += CYCLE / 2;
		learn_update(learn, scan, model, conf, now);
		worst_cycle = MAX(worst_cycle, g_get_monotonic_time() - started);

		rss = status_kb("VmRSS:");
		peak_rss = MAX(peak_rss, rss);
		if ((c + 1) % MAX(cycles / 10, 1) == 0 || c + 1 == cycles) {
			started = g_get_monotonic_time();
			state = save_size(model, argv[3]);
			worst_save = MAX(worst_save, g_get_monotonic_time() - started);
			peak_state = MAX(peak_state, state);
		}
		printf("%u %u %u %u %u %ld %ld\n", c + 1, (c + 1) * per_cycle * per_program,
		       g_hash_table_size(model->exes), g_hash_table_size(model->maps),
		       model->n_chains, rss, state);
	}
	hwm = status_kb("VmHWM:");
	started = g_get_monotonic_time();
	loaded = state_load(argv[3], &error);
	if (!loaded) {
		g_printerr("flood: %s\n", error->message);
		return 1;
	}
	printf("# peak VmRSS sampled %ld KB, VmHWM before the load %ld KB, peak state %ld bytes, "
	       "final state loads in %.1f ms (%u exes, %u maps, %u chains)\n",
	       peak_rss, hwm, peak_state,
	       (double)(g_get_monotonic_time() - started) / 1000.0,
	       g_hash_table_size(loaded->exes), g_hash_table_size(loaded->maps), loaded->n_chains);
	printf("# longest cycle (scan and update) %.1f ms, longest save %.1f ms\n",
	       (double)worst_cycle / 1000.0, (double)worst_save / 1000.0);
#ifndef FLOOD_SPY
	scan_free(scan);
#endif
	learn_free(learn);
	return 0;
}
