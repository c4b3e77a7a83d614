/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stategen: a large synthetic model, saved both as this preload's
 * state file and as a preload 0.6.4 state file, for the cost-at-scale
 * benchmark (tests/bench/scale.sh).
 *
 * What a daemon costs grows with the number of executables it knows:
 * 0.6.4 keeps a chain for every pair of them, so N executables make
 * N(N-1)/2 chains that every cycle visits. Learning thousands of
 * executables takes a daemon months, so the benchmark loads a model made
 * here instead: N executables with about 60 maps each, drawn from a pool
 * of shared maps, and every pair's chain filled with random but
 * consistent figures (a pair's joint running time fits both executables'
 * times, each state's departures add up to its exits), so that neither
 * daemon rejects or short-cuts a chain. The paths do not exist: the
 * readahead of a missing file fails at open(), and nothing on the
 * machine runs them, so every cycle scores every chain in state 0.
 *
 * Both files describe the same model, built once and written twice: ours
 * through state_save(), the 0.6.4 one by a writer here that follows the
 * format 0.6.4 reads (doc/state-format.md, "Importing preload 0.6.4").
 * Everything random comes from one GRand seeded with --seed.
 *
 *   stategen [--seed S] [--maps M] [--maps-per-exe K] N OURS OLD
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"
#include "state.h"

/* The model clock of the generated state: about 116 days of running. */
#define MODEL_TIME G_GINT64_CONSTANT(10000000)

/* A random whole number of seconds in [lo, hi]. */
static double
rand_seconds(GRand *rand, double lo, double hi)
{
	if (hi <= lo)
		return lo;
	return (double)g_rand_int_range(rand, (gint32)lo, (gint32)hi + 1);
}

/*
 * Fills a chain with figures a real history could have produced: the
 * pair ran together at most as long as the shorter of the two, and at
 * least as long as their times overlap by force (A + B - T), which keeps
 * the correlation in [-1, 1] (0.6.4 asserts that); each state's
 * departures count (the diagonal) is the sum of its exits; mean sojourns
 * are above one second, where 0.6.4 starts using a state.
 */
static void
fill_chain(GRand *rand, Markov *markov)
{
	double a = markov->a->time, b = markov->b->time;

	markov->time = rand_seconds(rand, MAX(0, a + b - (double)MODEL_TIME), MIN(a, b));
	for (int s = 0; s < 4; s++) {
		double exits = 0;

		markov->time_to_leave[s] = rand_seconds(rand, 2, 5000);
		for (int t = 0; t < 4; t++) {
			if (t == s)
				continue;
			markov->weight[s][t] = (double)g_rand_int_range(rand, 0, 21);
			exits += markov->weight[s][t];
		}
		markov->weight[s][s] = exits;
	}
}

static Model *
generate(guint n_exes, guint n_maps, guint maps_per_exe, guint32 seed, Exe ***exes_out)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
	Model *model = model_new();
	Exe **exes = g_new0(Exe *, n_exes);
	Map **pool = g_new0(Map *, n_maps);

	model->time = MODEL_TIME;
	for (guint i = 0; i < n_maps; i++) {
		g_autofree char *path = g_strdup_printf("/usr/lib/preload-stategen/lib%04u.so", i);
		guint64 pages = (guint64)g_rand_int_range(rand, 1, 1025);

		/* One map per file, 4 KB to 4 MB: the length matters only to the budget. */
		/*
		 * Unregistered until its first use registers it (the model takes
		 * a map with references as registered already); one never used
		 * is freed at the end.
		 */
		pool[i] = map_new(path, 0, pages * 4096, (gint64)rand_seconds(rand, 0, MODEL_TIME));
	}
	for (guint i = 0; i < n_exes; i++) {
		g_autofree char *path = g_strdup_printf("/usr/bin/preload-stategen-%05u", i);
		Exe *exe = exe_new(path, FALSE, model->time);

		exe->time = rand_seconds(rand, 1, MODEL_TIME - 1);
		exe->update_time = (gint64)rand_seconds(rand, 0, MODEL_TIME);
		/* Distinct maps: a repeat is ignored by exe_add_map, so draw until full. */
		while (exe->exemaps->len < MIN(maps_per_exe, n_maps))
			exe_add_map(model, exe, pool[g_rand_int_range(rand, 0, (gint32)n_maps)], 1.0);
		model_add_exe(model, exe, model->time, FALSE);
		exes[i] = exe;
	}
	/* Every pair, as 0.6.4 has them: (i, j) with i < j, a = exes[i]. */
	for (guint i = 0; i < n_exes; i++) {
		for (guint j = i + 1; j < n_exes; j++)
			fill_chain(rand, markov_new(model, exes[i], exes[j], model->time, MARKOV_START_BLANK));
	}
	for (guint i = 0; i < n_maps; i++) {
		if (pool[i]->refcount == 0)
			map_free(pool[i]);
	}
	g_free(pool);
	model->dirty = TRUE;
	*exes_out = exes;
	return model;
}

/* A file:// URI, as both formats write paths. */
static char *
uri(const char *path)
{
	char *text = g_filename_to_uri(path, NULL, NULL);

	g_assert(text);
	return text;
}

/* Gives each registered map its line index in the 0.6.4 file. */
static void
number_map(gpointer key, gpointer value, gpointer user_data)
{
	Map *map = key;
	GPtrArray *maps = user_data;

	(void)value;
	map->state.seq = maps->len;
	g_ptr_array_add(maps, map);
}

/*
 * The 0.6.4 text format: header, MAPs, EXEs, EXEMAPs, MARKOVs, each with
 * its "-1" reserved column where 0.6.4 has one. Times and counts that
 * 0.6.4 keeps as integers are whole numbers here already.
 */
static gboolean
write_old(const Model *model, Exe **exes, guint n_exes, const char *path, GError **error)
{
	g_autoptr(GPtrArray) maps = g_ptr_array_new();
	FILE *fp = fopen(path, "we");
	char tau[4][G_ASCII_DTOSTR_BUF_SIZE];
	gboolean failed;

	if (!fp) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", path,
			    g_strerror(errno));
		return FALSE;
	}
	fprintf(fp, "PRELOAD\t0.6.4\t%" G_GINT64_FORMAT "\n", model->time);
	g_hash_table_foreach(model->maps, number_map, maps);
	for (guint i = 0; i < maps->len; i++) {
		const Map *map = maps->pdata[i];
		g_autofree char *u = uri(map->path);

		fprintf(fp, "MAP\t%u\t%" G_GINT64_FORMAT "\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT
			"\t-1\t%s\n", map->state.seq, map->update_time, map->offset, map->length, u);
	}
	for (guint i = 0; i < n_exes; i++) {
		g_autofree char *u = uri(exes[i]->path);

		fprintf(fp, "EXE\t%u\t%" G_GINT64_FORMAT "\t%.0f\t-1\t%s\n", i,
			exes[i]->update_time, exes[i]->time, u);
	}
	for (guint i = 0; i < n_exes; i++) {
		for (guint k = 0; k < exes[i]->exemaps->len; k++) {
			const ExeMap *em = &g_array_index(exes[i]->exemaps, ExeMap, k);

			fprintf(fp, "EXEMAP\t%u\t%u\t%g\n", i, em->map->state.seq, em->prob);
		}
	}
	for (guint i = 0; i < n_exes; i++)
		exes[i]->seq = i;
	for (guint i = 0; i < n_exes; i++) {
		for (guint c = 0; c < exes[i]->chains->len; c++) {
			const Markov *m = exes[i]->chains->pdata[c];

			if (m->a != exes[i])
				continue;
			for (int s = 0; s < 4; s++)
				g_ascii_dtostr(tau[s], sizeof(tau[s]), m->time_to_leave[s]);
			fprintf(fp, "MARKOV\t%u\t%u\t%.0f\t%s\t%s\t%s\t%s", m->a->seq, m->b->seq,
				m->time, tau[0], tau[1], tau[2], tau[3]);
			for (int s = 0; s < 4; s++) {
				for (int t = 0; t < 4; t++)
					fprintf(fp, "\t%.0f", m->weight[s][t]);
			}
			fputc('\n', fp);
		}
	}
	failed = ferror(fp) != 0;
	if (fclose(fp) != 0 || failed) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: write error", path);
		return FALSE;
	}
	return TRUE;
}

int
main(int argc, char **argv)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GOptionContext) context = NULL;
	gint seed = 1, n_maps = 5000, maps_per_exe = 60;
	GOptionEntry entries[] = {
		{ "seed", 's', 0, G_OPTION_ARG_INT, &seed, "Seed of the random numbers (1)", "S" },
		{ "maps", 'm', 0, G_OPTION_ARG_INT, &n_maps, "Maps in the shared pool (5000)", "M" },
		{ "maps-per-exe", 'k', 0, G_OPTION_ARG_INT, &maps_per_exe,
		  "Maps of each executable (60)", "K" },
		{ NULL },
	};
	Model *model;
	Exe **exes = NULL;
	char *end;
	unsigned long n;

	context = g_option_context_new("N OURS OLD - write a synthetic model of N executables");
	g_option_context_add_main_entries(context, entries, NULL);
	g_option_context_set_description(context,
		"Writes the same random model twice: OURS in this preload's state format,\n"
		"OLD in preload 0.6.4's. Every pair of executables has a chain.\n");
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "stategen: %s\n", error->message);
		return 2;
	}
	errno = 0;
	n = argc == 4 ? strtoul(argv[1], &end, 10) : 0;
	if (argc != 4 || errno || *end || n < 1 || n > 100000 || n_maps < 1 || maps_per_exe < 1) {
		fprintf(stderr, "Usage: stategen [OPTION...] N OURS OLD (N: 1 to 100000)\n");
		return 2;
	}

	model = generate((guint)n, (guint)n_maps, (guint)maps_per_exe, (guint32)seed, &exes);
	if (!state_save(model, argv[2], &error) ||
	    !write_old(model, exes, (guint)n, argv[3], &error)) {
		fprintf(stderr, "stategen: %s\n", error->message);
		g_free(exes);
		model_free(model);
		return 1;
	}
	printf("%lu exes, %u maps, %u chains\n", n, g_hash_table_size(model->maps), model->n_chains);
	g_free(exes);
	model_free(model);
	return 0;
}
