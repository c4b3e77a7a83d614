/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kill-during-save for tests/crash-save.sh. Two large models that differ
 * in every record (A and B) are saved to one path, A, B, A, B..., by a
 * process that is killed with SIGKILL at a random moment; then a load of
 * the path must give exactly A or exactly B, never an error, a mix or an
 * empty model, with at most one temporary file left beside it.
 *
 *   save-victim init  PATH N    save A once
 *   save-victim save  PATH N    save A and B in turn until killed
 *   save-victim check PATH N    load PATH; print "A" or "B" and exit 0,
 *                               or say what is wrong and exit 1
 *   save-victim torture PATH N ITERATIONS [SEED]
 *                               ITERATIONS times: fork a child that runs
 *                               "save", SIGKILL it after a random delay
 *                               (log-uniform from 50 us to ten times
 *                               what one save takes here), "check"
 *
 * torture builds the models once and forks, so each kill costs a few
 * milliseconds instead of a program start and two model builds; the
 * child is a process of its own, and SIGKILL stops it wherever it is:
 * formatting, writing, in fsync, renaming.
 *
 * N is the number of executables; every pair of them has a chain, so the
 * file grows as N squared (N = 200 gives about 20,000 chains, 4 MB).
 */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "model.h"
#include "state.h"

#define MAPS_PER_EXE 12
#define SHARED_LIBS 40

/*
 * Model `which` (0 for A, 1 for B) of n exes. B has one exe more, a
 * later clock and other times, probabilities and weights, so no record
 * of one matches the other's.
 */
static Model *
build(int which, int n)
{
	Model *model = model_new();
	gint64 now = which ? 2000 : 1000;
	int exes = n + which;

	model->time = now;
	for (int i = 0; i < exes; i++) {
		g_autofree char *path = g_strdup_printf("/usr/bin/victim-%05d", i);
		Exe *exe = exe_new(path, FALSE, now);

		exe->time = 10.0 * i + which + 0.5;
		exe->update_time = now - i;
		for (int j = 0; j < MAPS_PER_EXE; j++) {
			g_autofree char *file = NULL;
			guint64 offset = 4096 * (guint64)(j + which);
			Map *map;

			if (j < MAPS_PER_EXE / 2)
				file = g_strdup_printf("/usr/lib/libvictim-%02d.so", (i + j) % SHARED_LIBS);
			else
				file = g_strdup_printf("/usr/share/victim/%05d/data-%d", i, j);
			map = model_lookup_map(model, file, offset, 8192);
			if (!map)
				map = map_new(file, offset, 8192, now);
			exe_add_map(model, exe, map, 1.0 / (j + 1 + which));
		}
		model_add_exe(model, exe, now, TRUE);
	}
	/* Give every chain values of its own. */
	for (int i = 0; i < exes; i++) {
		g_autofree char *path = g_strdup_printf("/usr/bin/victim-%05d", i);
		Exe *exe = model_lookup_exe(model, path);

		for (guint c = 0; c < exe->chains->len; c++) {
			Markov *m = g_ptr_array_index(exe->chains, c);

			if (m->a != exe)
				continue;
			m->time = i + c + which;
			for (int s = 0; s < 4; s++) {
				/* Every departure goes somewhere: W[s][s] sums its row. */
				m->time_to_leave[s] = s + 1 + which;
				m->weight[s][s] = 0;
				for (int t = 0; t < 4; t++) {
					if (t == s)
						continue;
					m->weight[s][t] = (s * 4 + t + c + which) % 7;
					m->weight[s][s] += m->weight[s][t];
				}
			}
		}
	}
	return model;
}

/* A digest of everything the file holds about a model. */
static char *
signature(Model *model)
{
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	g_autoptr(GPtrArray) exes = g_ptr_array_new();
	GHashTableIter iter;
	gpointer value;
	double exe_time = 0, chain_time = 0, weights = 0, probs = 0;

	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		Exe *exe = value;

		exe_time += exe->time;
		for (guint j = 0; j < exe->exemaps->len; j++)
			probs += g_array_index(exe->exemaps, ExeMap, j).prob;
		for (guint c = 0; c < exe->chains->len; c++) {
			Markov *m = g_ptr_array_index(exe->chains, c);

			if (m->a != exe)
				continue;
			chain_time += m->time;
			for (int s = 0; s < 4; s++)
				for (int t = 0; t < 4; t++)
					weights += m->weight[s][t] + m->time_to_leave[s];
		}
	}
	return g_strdup_printf("time %" G_GINT64_FORMAT ", %u exes, %u maps, %u chains, "
			       "exe time %.1f, chain time %.1f, weights %.1f, probs %.6f",
			       model->time, g_hash_table_size(model->exes),
			       g_hash_table_size(model->maps), model->n_chains,
			       exe_time, chain_time, weights, probs);
}

/*
 * Loads path and compares it with the signatures of A and B. Returns 0
 * (A) or 1 (B), or -1 after printing what is wrong; *temp tells whether
 * a temporary file was left beside it.
 */
static int
check(const char *path, const char *want_a, const char *want_b, gboolean *temp)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Model) loaded = state_load(path, &error);
	g_autofree char *got = NULL;
	g_autofree char *dir = g_path_get_dirname(path);
	g_autofree char *base = g_path_get_basename(path);
	g_autoptr(GDir) d = NULL;
	const char *name;
	guint others = 0;

	if (!loaded) {
		printf("LOAD ERROR: %s\n", error->message);
		return -1;
	}
	if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
		printf("NO FILE: %s is gone\n", path);
		return -1;
	}
	got = signature(loaded);

	/* Beside the state: its lock and at most one temporary file. */
	d = g_dir_open(dir, 0, NULL);
	while (d && (name = g_dir_read_name(d))) {
		if (strcmp(name, base) == 0 || !g_str_has_prefix(name, base))
			continue;
		if (g_str_has_suffix(name, ".lock"))
			continue;
		others++;
		if (strcmp(name + strlen(base), STATE_TEMP_SUFFIX) != 0) {
			printf("STRAY FILE: %s\n", name);
			return -1;
		}
	}
	if (others > 1) {
		printf("TEMP FILES: %u\n", others);
		return -1;
	}
	*temp = others > 0;

	if (strcmp(got, want_a) == 0)
		return 0;
	if (strcmp(got, want_b) == 0)
		return 1;
	printf("MIXED: got   %s\n       A is  %s\n       B is  %s\n", got, want_a, want_b);
	return -1;
}

/* Saves models[first], then the other, and so on until killed. */
static G_GNUC_NORETURN void
save_forever(Model **models, const char *path, guint first)
{
	for (guint i = first;; i++) {
		g_autoptr(GError) error = NULL;

		if (!state_save(models[i % 2], path, &error)) {
			fprintf(stderr, "%s\n", error->message);
			_exit(1);
		}
	}
}

static int
torture(Model **models, const char *path, guint iterations, guint32 seed)
{
	g_autofree char *want_a = signature(models[0]);
	g_autofree char *want_b = signature(models[1]);
	g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
	guint seen[2] = { 0, 0 }, temps = 0, switches = 0;
	gulong longest = 0;
	int last = 0;
	gint64 start = g_get_monotonic_time();

	double save_us, span;

	/*
	 * Kills must land anywhere in a save and let some saves finish, so
	 * the delays scale with what a save takes on this machine and build
	 * (sanitizers, disk).
	 */
	save_us = G_MAXDOUBLE;
	for (int i = 0; i < 3; i++) {
		gint64 t0 = g_get_monotonic_time();

		if (!state_save(models[0], path, NULL))
			return 1;
		save_us = MIN(save_us, (double)(g_get_monotonic_time() - t0));
	}
	span = MAX(10 * save_us / 50.0, 2.0);
	printf("seed %u; one save takes %.1f ms; A is %s\n", seed, save_us / 1000, want_a);
	start = g_get_monotonic_time();
	for (guint i = 0; i < iterations; i++) {
		gulong delay = (gulong)(50.0 * pow(span, g_rand_double(rand)));
		gboolean temp = FALSE;
		int status, got;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		/* Each save the child finishes changes what is on disk. */
		if (pid == 0)
			save_forever(models, path, (guint)!last);
		g_usleep(delay);
		kill(pid, SIGKILL);
		if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status)) {
			printf("iteration %u: the saver ended by itself (status %d)\n", i, status);
			return 1;
		}
		got = check(path, want_a, want_b, &temp);
		if (got < 0) {
			printf("iteration %u (killed after %lu us): FAILED\n", i, delay);
			return 1;
		}
		seen[got]++;
		temps += temp;
		longest = MAX(longest, delay);
		switches += got != last;
		last = got;
	}
	printf("%u kills (after 50 us to %.1f ms) in %.1f s: loaded A %u times, B %u times, "
	       "changed %u times; a temporary file was left %u times; never an error or a mix\n",
	       iterations, longest / 1000.0,
	       (double)(g_get_monotonic_time() - start) / G_USEC_PER_SEC,
	       seen[0], seen[1], switches, temps);
	return 0;
}

int
main(int argc, char **argv)
{
	g_autoptr(GError) error = NULL;
	const char *mode, *path;
	Model *models[2];
	int n, rc;

	if (argc < 4) {
		fprintf(stderr, "usage: %s init|save|check|torture PATH N [ITERATIONS [SEED]]\n",
			argv[0]);
		return 2;
	}
	mode = argv[1];
	path = argv[2];
	n = atoi(argv[3]);
	if (n < 2)
		n = 2;

	models[0] = build(0, n);
	if (strcmp(mode, "init") == 0) {
		if (!state_save(models[0], path, &error)) {
			fprintf(stderr, "%s\n", error->message);
			return 1;
		}
		model_free(models[0]);
		return 0;
	}
	models[1] = build(1, n);
	if (strcmp(mode, "save") == 0)
		save_forever(models, path, 1);
	if (strcmp(mode, "check") == 0) {
		g_autofree char *want_a = signature(models[0]);
		g_autofree char *want_b = signature(models[1]);
		gboolean temp = FALSE;
		int got = check(path, want_a, want_b, &temp);

		if (got >= 0)
			printf("%c%s\n", "AB"[got], temp ? " (and a temporary file)" : "");
		rc = got < 0;
	} else if (strcmp(mode, "torture") == 0 && argc >= 5) {
		guint32 seed = argc >= 6 ? (guint32)strtoul(argv[5], NULL, 10)
					 : (guint32)g_get_real_time();

		rc = torture(models, path, (guint)atoi(argv[4]), seed);
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		rc = 2;
	}
	model_free(models[0]);
	model_free(models[1]);
	return rc;
}
