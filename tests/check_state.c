/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/state.c: a hand-built model survives a save and a load
 * bit for bit; every kind of damaged file is refused with the right error
 * code and line; saving is atomic (the old file stays when a save fails);
 * preload 0.6.4's own output imports.
 */
#include "config.h"

#include "testutil.h"
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

static char *tmpdir;

static void
setup(void)
{
	tmpdir = tu_make_tempdir();
}

static void
teardown(void)
{
	if (tmpdir)
		(void)chmod(tmpdir, 0700);
	tu_rm_rf(tmpdir);
	g_clear_pointer(&tmpdir, g_free);
}

/* ---- helpers ---- */

static char *
tmp_path(const char *name)
{
	return g_build_filename(tmpdir, name, NULL);
}

static void
write_bytes(const char *path, const char *data, gsize len)
{
	g_autoptr(GError) error = NULL;

	if (!g_file_set_contents(path, data, (gssize)len, &error))
		ck_abort_msg("cannot write %s: %s", path, error->message);
}

static GBytes *
read_bytes(const char *path)
{
	g_autoptr(GError) error = NULL;
	char *data;
	gsize len;

	if (!g_file_get_contents(path, &data, &len, &error))
		ck_abort_msg("cannot read %s: %s", path, error->message);
	return g_bytes_new_take(data, len);
}

/*
 * Appends the END line to body, computed here independently of the code
 * under test: the count of lines after the first that are neither empty
 * nor comments, and the SHA-256 of every byte of body.
 */
static char *
with_end(const char *body, int count_delta)
{
	g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, body, -1);
	g_auto(GStrv) lines = g_strsplit(body, "\n", -1);
	int records = 0;

	for (guint i = 1; lines[i]; i++) {
		if (lines[i][0] != '\0' && lines[i][0] != '#')
			records++;
	}
	return g_strdup_printf("%sEND\t%d\t%s\n", body, records + count_delta, sum);
}

/* Loads path and checks it fails with code, the message naming path and line. */
static void
expect_load_error(const char *path, int code, int line, const char *what, const char *name)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Model) model = state_load(path, &error);
	g_autofree char *prefix = g_strdup_printf("%s:%d: ", path, line);

	ck_assert_msg(model == NULL, "%s: loaded a bad file", name);
	ck_assert_msg(error != NULL, "%s: no error", name);
	ck_assert_msg(error->domain == STATE_ERROR && error->code == code,
		      "%s: error code %d, expected %d (%s)", name, error->code, code, error->message);
	ck_assert_msg(g_str_has_prefix(error->message, prefix),
		      "%s: message \"%s\" does not start with \"%s\"", name, error->message, prefix);
	if (what)
		ck_assert_msg(strstr(error->message, what) != NULL,
			      "%s: message \"%s\" does not say \"%s\"", name, error->message, what);
}

static void
assert_same_double(double got, double want, const char *what)
{
	/* Bit-exact: == would also take -0 for 0, which the format keeps apart. */
	ck_assert_msg(memcmp(&got, &want, sizeof(double)) == 0,
		      "%s: got %.17g, want %.17g", what, got, want);
}

static void
assert_same_float(float got, float want, const char *what)
{
	ck_assert_msg(memcmp(&got, &want, sizeof(float)) == 0,
		      "%s: got %.9g, want %.9g", what, (double)got, (double)want);
}

static Exe *
add_exe(Model *model, const char *path, double time, gint64 update_time)
{
	Exe *exe = exe_new(path, FALSE, model->time);

	exe->time = time;
	exe->update_time = update_time;
	model_add_exe(model, exe, model->time, FALSE);
	return exe;
}

static void
add_bad_exe(Model *model, const char *path, guint64 size, gint64 time)
{
	BadExe *bad = g_new0(BadExe, 1);

	bad->size = size;
	bad->time = time;
	g_hash_table_insert(model->bad_exes, g_strdup(path), bad);
}

static const ExeMap *
find_exemap(const Exe *exe, const char *path, guint64 offset, guint64 length)
{
	for (guint i = 0; i < exe->exemaps->len; i++) {
		const ExeMap *em = &g_array_index(exe->exemaps, ExeMap, i);

		if (strcmp(em->map->path, path) == 0 && em->map->offset == offset &&
		    em->map->length == length)
			return em;
	}
	return NULL;
}

static Markov *
chain_of(const Exe *a, const Exe *b)
{
	for (guint i = 0; i < a->chains->len; i++) {
		Markov *m = g_ptr_array_index(a->chains, i);

		if ((m->a == a && m->b == b) || (m->a == b && m->b == a))
			return m;
	}
	return NULL;
}

/* Paths with every byte a line-based format could trip on. */
#define ODD_EXE "/opt/my app/bin\t%41\n\xe9x"
#define ODD_MAP "/tmp/dir with space/ta\tb/new\nline/100%/\xff\xfe.so"

/*
 * Two exes, four maps (one shared, two segments of one file), one chain
 * with values that do not survive 6 significant digits, two bad exes.
 */
static Model *
build_model(void)
{
	Model *model = model_new();
	static const MapFileId shared_id = { 2049, 1234, 2000000, G_GINT64_CONSTANT(1700000000123456789) };
	static const MapFileId odd_id = { 1, 2, 3, -5 };
	Map *map;
	Exe *a, *b;
	Markov *m;

	model->time = 1234567;
	/* Aged (with a half-life) the total is no longer the clock. */
	model->total_time = 1234000.5;
	a = add_exe(model, "/usr/bin/alpha", 100.5, 1000);
	b = add_exe(model, ODD_EXE, 7.0 / 3.0, -1);

	map = map_new("/usr/lib/libshared.so", 4096, 65536, 11);
	map->file = shared_id;
	exe_add_map(model, a, map, 1.0);
	/* Learned from its start-up reads, not from its maps. */
	exe_add_map_origin(model, a, map_new("/usr/lib/liba.so", 0, 8192, 12), 0.25, EXEMAP_READ);
	exe_add_map(model, b, map_new("/usr/lib/libshared.so", 4096, 65536, 11), 1.0 / 3.0);
	map = map_new(ODD_MAP, G_GUINT64_CONSTANT(1) << 40, 4096, -1);
	map->file = odd_id;
	exe_add_map(model, b, map, 1.0);
	map = map_new("/usr/lib/libshared.so", 0, 4096, 13);
	map->file = shared_id;
	exe_add_map(model, a, map, 1.0);
	map = map_new("/usr/lib/libshared.so", 69632, 4096, 14);
	map->file = shared_id;
	exe_add_map(model, a, map, 1.0);

	m = markov_new(model, a, b, model->time, MARKOV_START_BLANK);
	m->time = 2.0 / 3.0;
	m->time_to_leave[0] = 1.0 / 3.0;
	m->time_to_leave[1] = G_PI;
	m->time_to_leave[2] = 1e-40f;  /* a subnormal float */
	m->time_to_leave[3] = 12345.678901234567;
	/*
	 * Each departure goes somewhere: W[s][s] is the sum of its row, as
	 * the chain keeps it (and the file derives it, adding in this order).
	 */
	for (int i = 0; i < 4; i++) {
		m->weight[i][i] = 0;
		for (int j = 0; j < 4; j++) {
			if (j == i)
				continue;
			m->weight[i][j] = (i * 4 + j) / 7.0;
			m->weight[i][i] += m->weight[i][j];
		}
	}

	/* Hits near the top of the counters' range must survive as integers. */
	a->hits.starts = 5;
	a->hits.checks = 3;
	a->hits.bytes = G_MAXUINT64 - 1;
	a->hits.prefetched = 100000;
	a->hits.probed = 200000;
	a->hits.resident = 150000;

	add_bad_exe(model, "/usr/bin/tiny", 1234, 99);
	add_bad_exe(model, "/usr/bin/sp ace", 0, 0);
	model->dirty = TRUE;
	return model;
}

/* Checks every persisted field of `got` against `want`. */
static void
assert_models_equal(const Model *want, const Model *got)
{
	GHashTableIter iter;
	gpointer key, value;

	ck_assert_int_eq(got->time, want->time);
	assert_same_double(got->total_time, want->total_time, "total time");
	/* Values in the file are aged up to its time. */
	ck_assert_int_eq(got->aged_time, want->time);
	/* The loaded clock, not 0, is where accounting and scans resume. */
	ck_assert_int_eq(got->last_accounting_timestamp, want->time);
	ck_assert_int_eq(got->last_running_timestamp, want->time);
	assert_same_double(got->freq_weight, want->freq_weight, "frequency weight");
	ck_assert_uint_eq(g_hash_table_size(got->exes), g_hash_table_size(want->exes));
	ck_assert_uint_eq(g_hash_table_size(got->maps), g_hash_table_size(want->maps));
	ck_assert_uint_eq(got->n_chains, want->n_chains);

	g_hash_table_iter_init(&iter, want->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		const Exe *w = value;
		const Exe *g = model_lookup_exe(got, w->path);

		ck_assert_msg(g != NULL, "exe %s missing", w->path);
		assert_same_double(g->time, w->time, "exe time");
		ck_assert_int_eq(g->update_time, w->update_time);
		ck_assert_uint_eq(g->size, w->size);
		ck_assert_uint_eq(g->hits.starts, w->hits.starts);
		ck_assert_uint_eq(g->hits.checks, w->hits.checks);
		ck_assert_uint_eq(g->hits.bytes, w->hits.bytes);
		ck_assert_uint_eq(g->hits.prefetched, w->hits.prefetched);
		ck_assert_uint_eq(g->hits.probed, w->hits.probed);
		ck_assert_uint_eq(g->hits.resident, w->hits.resident);
		ck_assert_uint_eq(g->exemaps->len, w->exemaps->len);
		for (guint i = 0; i < w->exemaps->len; i++) {
			const ExeMap *wem = &g_array_index(w->exemaps, ExeMap, i);
			const ExeMap *gem = find_exemap(g, wem->map->path, wem->map->offset,
							wem->map->length);

			ck_assert_msg(gem != NULL, "map %s missing", wem->map->path);
			assert_same_double(gem->prob, wem->prob, "prob");
			ck_assert_int_eq(gem->origin, wem->origin);
			ck_assert_int_eq(gem->map->update_time, wem->map->update_time);
			ck_assert(memcmp(&gem->map->file, &wem->map->file, sizeof(MapFileId)) == 0);
			ck_assert_int_eq(gem->map->refcount, wem->map->refcount);
		}
		for (guint i = 0; i < w->chains->len; i++) {
			const Markov *wm = g_ptr_array_index(w->chains, i);
			const Markov *gm = chain_of(g, model_lookup_exe(got, wm->a == w ?
								       wm->b->path : wm->a->path));

			ck_assert(gm != NULL);
			/* The pair keeps its order: a and b mean different bits. */
			ck_assert_str_eq(gm->a->path, wm->a->path);
			ck_assert_str_eq(gm->b->path, wm->b->path);
			assert_same_double(gm->time, wm->time, "chain time");
			for (int s = 0; s < 4; s++)
				assert_same_float(gm->time_to_leave[s], wm->time_to_leave[s], "tau");
			for (int s = 0; s < 4; s++)
				for (int t = 0; t < 4; t++)
					assert_same_float(gm->weight[s][t], wm->weight[s][t], "weight");
			/* Loaded chains start in state 0 at the model time. */
			ck_assert_int_eq(gm->state, MARKOV_NEITHER);
			ck_assert_int_eq(gm->change_timestamp, got->time);
		}
	}

	ck_assert_uint_eq(g_hash_table_size(got->bad_exes), g_hash_table_size(want->bad_exes));
	g_hash_table_iter_init(&iter, want->bad_exes);
	while (g_hash_table_iter_next(&iter, &key, &value)) {
		const BadExe *w = value;
		const BadExe *g = g_hash_table_lookup(got->bad_exes, key);

		ck_assert_msg(g != NULL, "bad exe %s missing", (const char *)key);
		ck_assert_uint_eq(g->size, w->size);
		ck_assert_int_eq(g->time, w->time);
	}
}

/* ---- round trip ---- */

/*
 * The ends of the float range read back bit for bit: the largest float,
 * whose shortest text "3.4028235e+38" is a little above it as a double,
 * and the smallest subnormal.
 */
START_TEST(test_round_trip_float_extremes)
{
	g_autoptr(Model) model = model_new();
	g_autoptr(Model) loaded = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autofree char *text = NULL;
	Exe *a = add_exe(model, "/usr/bin/a", 10, 0);
	Exe *b = add_exe(model, "/usr/bin/b", 20, 0);
	Markov *m = markov_new(model, a, b, model->time, MARKOV_START_BLANK);

	exe_add_map(model, a, map_new("/usr/lib/liba.so", 0, 4096, 0), 1.0);
	exe_add_map(model, b, map_new("/usr/lib/libb.so", 0, 4096, 0), 1.0);
	m->time_to_leave[0] = G_MAXFLOAT;
	m->time_to_leave[1] = FLT_TRUE_MIN;
	m->weight[0][1] = G_MAXFLOAT;
	m->weight[0][0] = G_MAXFLOAT;
	m->weight[1][0] = FLT_TRUE_MIN;
	m->weight[1][1] = FLT_TRUE_MIN;
	ck_assert(state_save(model, path, &error));
	ck_assert(g_file_get_contents(path, &text, NULL, NULL));
	ck_assert_ptr_nonnull(strstr(text, "\t3.4028235e+38\t1.401298e-45\t0\t0\t3.4028235e+38\t"));
	loaded = state_load(path, &error);
	ck_assert_msg(loaded != NULL, "%s", error ? error->message : "");
	assert_models_equal(model, loaded);
}
END_TEST

/*
 * Enough exes that the file is written in several chunks: 3,000 exes
 * with a map each, a chain between each exe and the next, and a weight
 * in each chain that is not a short decimal.
 */
#define BIG_EXES 3000

static Model *
build_big_model(void)
{
	Model *model = model_new();
	Exe *prev = NULL;

	model->time = 5000;
	model->total_time = 5000;
	for (int i = 0; i < BIG_EXES; i++) {
		g_autofree char *path = g_strdup_printf("/usr/lib/big/program-%04d", i);
		Exe *exe = add_exe(model, path, 10 + i, 4000);

		exe_add_map(model, exe, map_new(path, 0, 4096 * (guint64)(i + 1), 4000), 1.0);
		if (prev) {
			Markov *m = markov_new(model, prev, exe, model->time, MARKOV_START_BLANK);

			m->time = i;
			m->weight[0][1] = 1.0 / 3.0;
			m->weight[0][0] = 1.0 / 3.0;
		}
		prev = exe;
	}
	model->dirty = TRUE;
	return model;
}

START_TEST(test_round_trip)
{
	g_autoptr(Model) model = build_model();
	g_autoptr(Model) loaded = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autofree char *path2 = tmp_path("state2");
	g_autoptr(GBytes) bytes = NULL;
	g_autoptr(GBytes) bytes2 = NULL;
	g_autofree char *text = NULL;
	g_autofree char *body = NULL;
	g_autofree char *expected = NULL;
	g_auto(GStrv) lines = NULL;
	const char *end_line;
	Exe *a, *b;

	/* alpha's own file: version 3 keeps an exe's identity. */
	model_lookup_exe(model, "/usr/bin/alpha")->file = (MapFileId){ 2049, 77, 0, 0 };
	ck_assert(state_save(model, path, &error));
	ck_assert_ptr_null(error);
	ck_assert(!model->dirty);

	/*
	 * Lines: header, comment, 3 FILE, 5 MAP, 2 EXE, 5 EXEMAP, 1 MARKOV,
	 * 1 HITS (alpha's), 2 BADEXE, END = 22; the END counts
	 * 3+5+2+5+1+1+2 = 19. No raw tab or newline of the odd paths may leak
	 * into the text.
	 */
	bytes = read_bytes(path);
	text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
	ck_assert(g_str_has_prefix(text, "PRELOAD-STATE\t5\t1234567\t1234000.5\n# "));
	lines = g_strsplit(text, "\n", -1);
	ck_assert_uint_eq(g_strv_length(lines), 23);  /* 22 lines and "" after the last */
	ck_assert_str_eq(lines[22], "");
	/*
	 * Exes are written in path order, "/opt/my app..." before
	 * "/usr/bin/alpha", and maps in order of first use by those exes:
	 * libshared@4096 0, the odd map 1, liba 2, libshared@0 3, libshared@69632
	 * 4; files in order of first need, the libshared segments sharing one.
	 */
	ck_assert_str_eq(lines[2], "FILE\t0\t2049\t1234\t2000000\t1700000000123456789\t"
			 "file:///usr/lib/libshared.so");
	ck_assert_str_eq(lines[3], "FILE\t1\t1\t2\t3\t-5\t"
			 "file:///tmp/dir%20with%20space/ta%09b/new%0Aline/100%25/%FF%FE.so");
	ck_assert_str_eq(lines[4], "FILE\t2\t0\t0\t0\t0\tfile:///usr/lib/liba.so");
	ck_assert_str_eq(lines[5], "MAP\t0\t11\t4096\t65536\t0");
	ck_assert_str_eq(lines[6], "MAP\t1\t-1\t1099511627776\t4096\t1");
	ck_assert_str_eq(lines[7], "MAP\t2\t12\t0\t8192\t2");
	ck_assert_str_eq(lines[8], "MAP\t3\t13\t0\t4096\t0");
	ck_assert_str_eq(lines[9], "MAP\t4\t14\t69632\t4096\t0");
	/* 7/3 needs 17 digits to read back the same. */
	ck_assert_str_eq(lines[10],
			 "EXE\t0\t-1\t2.3333333333333335\t0\t0\tfile:///opt/my%20app/bin%09%2541%0A%E9x");
	ck_assert_str_eq(lines[11], "EXE\t1\t1000\t100.5\t2049\t77\tfile:///usr/bin/alpha");
	/*
	 * odd: maps 0 (1/3, a float: 8 digits) and 1 (1); alpha: 0, liba 2 (read, 0.25), then 3
	 * and 4 (mapped, 1) as one run. Fields: exe, map, prob, origin, count.
	 */
	ck_assert_str_eq(lines[12], "EXEMAP\t0\t0\t0.33333334\t0\t1");
	ck_assert_str_eq(lines[13], "EXEMAP\t0\t1\t1\t0\t1");
	ck_assert_str_eq(lines[14], "EXEMAP\t1\t0\t1\t0\t1");
	ck_assert_str_eq(lines[15], "EXEMAP\t1\t2\t0.25\t1\t1");
	ck_assert_str_eq(lines[16], "EXEMAP\t1\t3\t1\t0\t2");
	/*
	 * The chain's a is alpha (1). Its 12 weights off the diagonal:
	 * w01 = 1/7, w02 = 2/7, ... w32 = 14/7 = 2.
	 */
	ck_assert(g_str_has_prefix(lines[17], "MARKOV\t1\t0\t0.66666666666666663\t0.33333334\t"));
	ck_assert(g_str_has_suffix(lines[17], "\t1.8571428\t2"));
	{
		g_auto(GStrv) fields = g_strsplit(lines[17], "\t", -1);

		ck_assert_uint_eq(g_strv_length(fields), 20);
		ck_assert_str_eq(fields[8], "0.14285715");
	}
	ck_assert_str_eq(lines[18], "HITS\t1\t5\t3\t18446744073709551614\t100000\t200000\t150000");
	ck_assert_str_eq(lines[19], "BADEXE\t0\t0\tfile:///usr/bin/sp%20ace");
	ck_assert_str_eq(lines[20], "BADEXE\t99\t1234\tfile:///usr/bin/tiny");
	for (guint i = 0; i < 22; i++) {
		static const char *const tags[] = {
			"PRELOAD-STATE\t", "# ", "FILE\t", "FILE\t", "FILE\t",
			"MAP\t", "MAP\t", "MAP\t", "MAP\t", "MAP\t", "EXE\t", "EXE\t",
			"EXEMAP\t", "EXEMAP\t", "EXEMAP\t", "EXEMAP\t", "EXEMAP\t", "MARKOV\t",
			"HITS\t", "BADEXE\t", "BADEXE\t", "END\t19\t",
		};

		ck_assert_msg(g_str_has_prefix(lines[i], tags[i]), "line %u: %s", i + 1, lines[i]);
	}
	/* The END line agrees with an independent computation. */
	end_line = strstr(text, "END\t");
	body = g_strndup(text, (gsize)(end_line - text));
	expected = with_end(body, 0);
	ck_assert_str_eq(text, expected);

	loaded = state_load(path, &error);
	ck_assert_ptr_null(error);
	ck_assert_ptr_nonnull(loaded);
	ck_assert(!loaded->dirty);
	assert_models_equal(model, loaded);

	/* The shared map is one object used by both exes. */
	a = model_lookup_exe(loaded, "/usr/bin/alpha");
	b = model_lookup_exe(loaded, ODD_EXE);
	ck_assert_ptr_eq(find_exemap(a, "/usr/lib/libshared.so", 4096, 65536)->map,
			 find_exemap(b, "/usr/lib/libshared.so", 4096, 65536)->map);
	ck_assert_int_eq(model_lookup_map(loaded, "/usr/lib/libshared.so", 4096, 65536)->refcount, 2);
	/* The three libshared segments of FILE 0 share one copy of the path. */
	ck_assert_ptr_eq(model_lookup_map(loaded, "/usr/lib/libshared.so", 4096, 65536)->path,
			 model_lookup_map(loaded, "/usr/lib/libshared.so", 0, 4096)->path);
	ck_assert_ptr_eq(model_lookup_map(loaded, "/usr/lib/libshared.so", 69632, 4096)->path,
			 model_lookup_map(loaded, "/usr/lib/libshared.so", 0, 4096)->path);
	ck_assert_ptr_ne(model_lookup_map(loaded, "/usr/lib/liba.so", 0, 8192)->path,
			 model_lookup_map(loaded, "/usr/lib/libshared.so", 0, 4096)->path);
	ck_assert_ptr_nonnull(model_lookup_map(loaded, ODD_MAP, G_GUINT64_CONSTANT(1) << 40, 4096));
	/* 65536 + 8192 + 4096 + 4096 */
	ck_assert_uint_eq(a->size, 81920);
	ck_assert_uint_eq(a->file.dev, 2049);
	ck_assert_uint_eq(a->file.ino, 77);
	ck_assert(!map_file_id_is_known(&b->file));
	/* The two segments of libshared keep the file's identity. */
	ck_assert_uint_eq(model_lookup_map(loaded, "/usr/lib/libshared.so", 0, 4096)->file.ino, 1234);
	/* A loaded model has no running exes. */
	ck_assert_uint_eq(loaded->running->len, 0);

	/* The same model always gives the same bytes. */
	ck_assert(state_save(loaded, path2, &error));
	bytes2 = read_bytes(path2);
	ck_assert(g_bytes_equal(bytes, bytes2));
}
END_TEST

START_TEST(test_save_file_mode_and_no_leftovers)
{
	g_autoptr(Model) model = build_model();
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autoptr(GDir) dir = NULL;
	struct stat st;
	const char *name;
	int entries = 0;

	/* Saving twice also replaces an existing file. */
	ck_assert(state_save(model, path, &error));
	ck_assert(state_save(model, path, &error));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert(S_ISREG(st.st_mode));

	dir = g_dir_open(tmpdir, 0, &error);
	ck_assert_ptr_nonnull(dir);
	while ((name = g_dir_read_name(dir))) {
		ck_assert_str_eq(name, "state");
		entries++;
	}
	ck_assert_int_eq(entries, 1);
}
END_TEST

START_TEST(test_save_creates_directory)
{
	g_autoptr(Model) model = build_model();
	g_autoptr(Model) loaded = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("var/lib/preload/preload.state");
	g_autofree char *dir = tmp_path("var/lib/preload");

	struct stat st;

	ck_assert(state_save(model, path, &error));
	ck_assert_ptr_null(error);
	/* The state directory is the daemon's alone. */
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	loaded = state_load(path, &error);
	ck_assert_ptr_nonnull(loaded);
	assert_models_equal(model, loaded);
}
END_TEST

START_TEST(test_save_empty_model)
{
	g_autoptr(Model) model = model_new();
	g_autoptr(Model) loaded = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autoptr(GBytes) bytes = NULL;
	g_autofree char *text = NULL;
	g_autofree char *body = NULL;
	g_autofree char *expected = NULL;

	ck_assert(state_save(model, path, &error));
	bytes = read_bytes(path);
	text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
	/* Header, comment, "END\t0\t<sha256 of those two lines>". */
	body = g_strndup(text, (gsize)(strstr(text, "END") - text));
	expected = with_end(body, 0);
	ck_assert_str_eq(text, expected);
	ck_assert(g_str_has_prefix(text, "PRELOAD-STATE\t5\t0\t0\n#"));
	ck_assert(strstr(text, "\nEND\t0\t") != NULL);

	loaded = state_load(path, &error);
	ck_assert_ptr_nonnull(loaded);
	ck_assert_uint_eq(g_hash_table_size(loaded->exes), 0);
}
END_TEST

/* ---- save failures keep the old file ---- */

static void
assert_only_entry(const char *dir_path, const char *only)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(GDir) dir = g_dir_open(dir_path, 0, &error);
	const char *name;

	ck_assert_ptr_nonnull(dir);
	while ((name = g_dir_read_name(dir)))
		ck_assert_msg(strcmp(name, only) == 0, "left behind: %s", name);
}

START_TEST(test_save_under_regular_file)
{
	g_autoptr(Model) model = build_model();
	g_autoptr(GError) error = NULL;
	g_autofree char *file = tmp_path("file");
	g_autofree char *path = tmp_path("file/state");

	tu_write_file(file, "not a directory\n");
	ck_assert(!state_save(model, path, &error));
	ck_assert_ptr_nonnull(error);
	ck_assert_int_eq(error->code, STATE_ERROR_IO);
	ck_assert(strstr(error->message, path) != NULL);
	ck_assert(strstr(error->message, g_strerror(ENOTDIR)) != NULL);
	ck_assert(model->dirty);
	assert_only_entry(tmpdir, "file");
}
END_TEST

START_TEST(test_save_unwritable_directory)
{
	g_autoptr(Model) model = build_model();
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = tmp_path("ro");
	g_autofree char *path = tmp_path("ro/state");
	g_autoptr(GBytes) before = NULL;
	g_autoptr(GBytes) after = NULL;

	tu_write_file(path, "old contents\n");
	before = read_bytes(path);
	ck_assert_int_eq(chmod(dir, 0555), 0);
	ck_assert(!state_save(model, path, &error));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(error->code, STATE_ERROR_IO);
	ck_assert(strstr(error->message, path) != NULL);
	ck_assert(strstr(error->message, g_strerror(EACCES)) != NULL);
	after = read_bytes(path);
	ck_assert(g_bytes_equal(before, after));
	ck_assert(model->dirty);
	assert_only_entry(dir, "state");
}
END_TEST

/*
 * A write that fails half way (here: the file size limit, which applies
 * to root too) must leave the old file as it was and no temporary file.
 */
/*
 * The save runs in a child process under a 100-byte file size limit: the
 * limit must not reach Check's own message file in the test process.
 * The child's exit status says which expectation failed (0: all held).
 */
static int
save_under_size_limit(const char *path, gboolean big, rlim_t size)
{
	g_autoptr(Model) model = big ? build_big_model() : build_model();
	g_autoptr(GError) error = NULL;
	struct rlimit limit;

	if (getrlimit(RLIMIT_FSIZE, &limit) != 0)
		return 10;
	/* A write is cut short at the limit, the next one fails. */
	limit.rlim_cur = size;
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
		return 11;
	if (state_save(model, path, &error))
		return 12;
	if (error->code != STATE_ERROR_IO)
		return 13;
	if (!strstr(error->message, path))
		return 14;
	if (!strstr(error->message, g_strerror(EFBIG)))
		return 15;
	if (!model->dirty)
		return 16;
	return 0;
}

/* big: a model of several chunks, cut off after the first two. */
static void
check_save_write_fails(gboolean big, rlim_t size)
{
	g_autofree char *path = tmp_path("state");
	g_autoptr(GBytes) before = NULL;
	g_autoptr(GBytes) after = NULL;
	int status;
	pid_t pid;

	tu_write_file(path, "old contents\n");
	before = read_bytes(path);

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int rc = save_under_size_limit(path, big, size);

		/* _exit() leaves these unreachable: valgrind would count them lost. */
		g_clear_pointer(&before, g_bytes_unref);
		g_clear_pointer(&path, g_free);
		_exit(rc);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);

	after = read_bytes(path);
	ck_assert(g_bytes_equal(before, after));
	assert_only_entry(tmpdir, "state");
}

START_TEST(test_save_write_fails)
{
	check_save_write_fails(FALSE, 100);
}
END_TEST

START_TEST(test_save_write_fails_midway)
{
	check_save_write_fails(TRUE, 150 * 1000);
}
END_TEST

/* The rename fails when the target is a directory; the temp file goes. */
START_TEST(test_save_rename_fails)
{
	g_autoptr(Model) model = build_model();
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autofree char *inside = tmp_path("state/keep");

	tu_write_file(inside, "x");
	ck_assert(!state_save(model, path, &error));
	ck_assert_int_eq(error->code, STATE_ERROR_IO);
	ck_assert(strstr(error->message, path) != NULL);
	ck_assert(model->dirty);
	ck_assert(g_file_test(inside, G_FILE_TEST_IS_REGULAR));
	assert_only_entry(tmpdir, "state");
}
END_TEST

/*
 * A save killed between creating its temporary file and the rename
 * leaves "<path>.new" behind. The next save must remove it and write a
 * fresh 0600 file, so crashes never leave more than one such file.
 */
START_TEST(test_save_replaces_leftover_temp)
{
	g_autoptr(Model) model = build_model();
	g_autoptr(Model) loaded = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autofree char *temp = tmp_path("state" STATE_TEMP_SUFFIX);
	struct stat st;

	tu_write_file(temp, "PRELOAD-STATE\t1\t5\nMAP\t0\t");
	ck_assert_int_eq(chmod(temp, 0644), 0);
	ck_assert(state_save(model, path, &error));
	ck_assert(!g_file_test(temp, G_FILE_TEST_EXISTS));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	loaded = state_load(path, &error);
	ck_assert_ptr_nonnull(loaded);
	ck_assert_int_eq(loaded->time, model->time);
	assert_only_entry(tmpdir, "state");
}
END_TEST

/* A symlink at the temporary name is removed, never written through. */
START_TEST(test_save_temp_symlink_not_followed)
{
	g_autoptr(Model) model = build_model();
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autofree char *temp = tmp_path("state" STATE_TEMP_SUFFIX);
	g_autofree char *victim = tmp_path("victim");
	g_autofree char *contents = NULL;

	tu_write_file(victim, "keep me");
	ck_assert_int_eq(symlink(victim, temp), 0);
	ck_assert(state_save(model, path, &error));
	ck_assert(g_file_get_contents(victim, &contents, NULL, NULL));
	ck_assert_str_eq(contents, "keep me");
	ck_assert(!g_file_test(temp, G_FILE_TEST_EXISTS));
	ck_assert(!g_file_test(path, G_FILE_TEST_IS_SYMLINK));
}
END_TEST

/* ---- loading ---- */

START_TEST(test_load_missing_file)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("no-such-state");
	g_autoptr(Model) model = state_load(path, &error);

	ck_assert_ptr_null(error);
	ck_assert_ptr_nonnull(model);
	ck_assert_int_eq(model->time, 0);
	ck_assert_uint_eq(g_hash_table_size(model->exes), 0);
	ck_assert_uint_eq(g_hash_table_size(model->maps), 0);
	ck_assert_uint_eq(g_hash_table_size(model->bad_exes), 0);
}
END_TEST

START_TEST(test_load_empty_file)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autoptr(Model) model = NULL;

	write_bytes(path, "", 0);
	model = state_load(path, &error);
	ck_assert_ptr_null(error);
	ck_assert_ptr_nonnull(model);
	ck_assert_int_eq(model->time, 0);
	ck_assert_uint_eq(g_hash_table_size(model->exes), 0);
}
END_TEST

START_TEST(test_load_fifo)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("fifo");
	g_autoptr(Model) model = NULL;

	ck_assert_int_eq(mkfifo(path, 0600), 0);
	/* Would block forever in open() without O_NONBLOCK (the tcase times out). */
	model = state_load(path, &error);
	ck_assert_ptr_null(model);
	ck_assert_int_eq(error->code, STATE_ERROR_IO);
	ck_assert(strstr(error->message, path) != NULL);
	ck_assert(strstr(error->message, "not a regular file") != NULL);
}
END_TEST

START_TEST(test_load_directory)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("dir");
	g_autoptr(Model) model = NULL;

	ck_assert_int_eq(mkdir(path, 0700), 0);
	model = state_load(path, &error);

	ck_assert_ptr_null(model);
	ck_assert_int_eq(error->code, STATE_ERROR_IO);
	ck_assert(strstr(error->message, "not a regular file") != NULL);
}
END_TEST

/* The lines of a valid file, numbered as they appear in BASE. */
#define L_HDR   "PRELOAD-STATE\t1\t100\n"                              /* 1 */
#define L_NOTE  "# a comment\n"                                        /* 2 */
#define L_MAP0  "MAP\t0\t5\t0\t4096\tfile:///usr/lib/liba.so\n"        /* 3 */
#define L_MAP1  "MAP\t1\t6\t4096\t8192\tfile:///usr/lib/liba.so\n"     /* 4 */
#define L_EXE0  "EXE\t0\t7\t30\tfile:///usr/bin/x\n"                   /* 5 */
#define L_EXE1  "EXE\t1\t-1\t20.5\tfile:///usr/bin/y\n"                /* 6 */
#define L_EM0   "EXEMAP\t0\t0\t1\n"                                    /* 7 */
#define L_EM1   "EXEMAP\t1\t1\t0.5\n"                                  /* 8 */
#define W16     "\t0\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\t14\t15\n"
#define L_MK    "MARKOV\t0\t1\t10\t1\t2.5\t3\t4" W16                   /* 9 */
#define L_BAD   "BADEXE\t50\t1000\tfile:///usr/bin/z\n"                /* 10 */
#define BASE    L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 L_EM1 L_MK L_BAD
/* END is line 11 */
/* The same in version 2: FILE records, runs of maps, derived diagonals. */
#define L2_HDR   "PRELOAD-STATE\t2\t100\t90.5\n"                                     /* 1 */
#define L2_FILE0 "FILE\t0\t2049\t77\t12288\t1700000000000000001\tfile:///usr/lib/liba.so\n" /* 3 */
#define L2_FILE1 "FILE\t1\t0\t0\t0\t0\tfile:///usr/lib/libb.so\n"                     /* 4 */
#define L2_MAP0  "MAP\t0\t5\t0\t4096\t0\n"                                          /* 5 */
#define L2_MAP1  "MAP\t1\t6\t4096\t8192\t0\n"                                       /* 6 */
#define L2_MAP2  "MAP\t2\t6\t0\t100\t1\n"                                           /* 7 */
/* L_EXE0, L_EXE1: lines 8, 9 */
/* x maps 0 and 1; y read 1 and 2 at start-up (origin 1). */
#define L2_EM0   "EXEMAP\t0\t0\t1\t0\t2\n"                                        /* 10 */
#define L2_EM1   "EXEMAP\t1\t1\t0.5\t1\t2\n"                                      /* 11 */
#define W12      "\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\n"
#define L2_MK    "MARKOV\t0\t1\t10\t1\t2.5\t3\t4" W12                             /* 12 */
#define L2_HITS  "HITS\t0\t4\t2\t100\t50\t80\t60\n"                               /* 13 */
/* L_BAD: line 14 */
/* Lines 1 to 9, before any EXEMAP. */
#define PRE2     L2_HDR L_NOTE L2_FILE0 L2_FILE1 L2_MAP0 L2_MAP1 L2_MAP2 L_EXE0 L_EXE1
#define BASE2    PRE2 L2_EM0 L2_EM1 L2_MK L2_HITS L_BAD
/* END is line 15 */
/*
 * Versions 4 and 5, lines 1 to 3: an EXE with its identity; version 5
 * adds the EXPERTS record.
 */
#define L4_EXE0  "EXE\t0\t7\t30\t2049\t77\tfile:///usr/bin/x\n"                  /* 3 */
#define PRE4     "PRELOAD-STATE\t4\t100\t90.5\n" L_NOTE L4_EXE0
#define PRE5     "PRELOAD-STATE\t5\t100\t90.5\n" L_NOTE L4_EXE0
/* The same lines 1 to 9 in version 3, which adds START, SUCC and ORDER. */
#define PRE3     "PRELOAD-STATE\t3\t100\t90.5\n" L_NOTE L2_FILE0 L2_FILE1 L2_MAP0 L2_MAP1 \
		 L2_MAP2 L_EXE0 L_EXE1

START_TEST(test_load_valid_text)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	/* An empty line, an extra comment and a MAP nobody uses. */
	g_autofree char *text = with_end(L_HDR L_NOTE "\n" L_MAP0 L_MAP1
					 "MAP\t7\t1\t0\t1\tfile:///unused\n"
					 L_EXE0 L_EXE1 L_EM0 L_EM1 "# between\n" L_MK L_BAD, 0);
	g_autoptr(Model) model = NULL;
	Exe *x, *y;
	Markov *m;
	const BadExe *bad;

	tu_write_file(path, text);
	model = state_load(path, &error);
	ck_assert_msg(model != NULL, "%s", error ? error->message : "");

	ck_assert_int_eq(model->time, 100);
	ck_assert_uint_eq(g_hash_table_size(model->exes), 2);
	/* The unused map is not registered. */
	ck_assert_uint_eq(g_hash_table_size(model->maps), 2);
	ck_assert_ptr_null(model_lookup_map(model, "/unused", 0, 1));

	x = model_lookup_exe(model, "/usr/bin/x");
	y = model_lookup_exe(model, "/usr/bin/y");
	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_nonnull(y);
	ck_assert_int_eq(x->update_time, 7);
	ck_assert(x->time == 30.0);
	ck_assert_int_eq(y->update_time, -1);
	ck_assert(y->time == 20.5);
	ck_assert_uint_eq(x->size, 4096);
	ck_assert_uint_eq(y->size, 8192);
	ck_assert(g_array_index(y->exemaps, ExeMap, 0).prob == 0.5);
	ck_assert_int_eq(g_array_index(y->exemaps, ExeMap, 0).map->update_time, 6);
	/* Version 1 had only maps from /proc, and no hit figures. */
	ck_assert_int_eq(g_array_index(y->exemaps, ExeMap, 0).origin, EXEMAP_MAPPED);
	ck_assert_uint_eq(x->hits.starts, 0);

	ck_assert_uint_eq(model->n_chains, 1);
	m = chain_of(x, y);
	ck_assert_ptr_eq(m->a, x);
	ck_assert_ptr_eq(m->b, y);
	ck_assert(m->time == 10.0);
	ck_assert(m->time_to_leave[1] == 2.5);
	/* Row-major: w[2][3] is the 12th weight, 11. */
	ck_assert(m->weight[2][3] == 11.0);
	ck_assert(m->weight[3][0] == 12.0);

	bad = g_hash_table_lookup(model->bad_exes, "/usr/bin/z");
	ck_assert_ptr_nonnull(bad);
	ck_assert_int_eq(bad->time, 50);
	ck_assert_uint_eq(bad->size, 1000);
}
END_TEST

/*
 * Reals are read exactly whichever way the loader takes: the short ones
 * without strtod, the rest with it. Each EXE time below must read back as
 * the very double g_ascii_strtod() makes of its text.
 */
/*
 * A run of consecutive maps is cut where the origin changes: mapped,
 * read, read, mapped (maps 0 to 3) are three EXEMAP lines, and each use
 * loads back with its own origin.
 */
START_TEST(test_save_runs_keep_origin)
{
	g_autoptr(Model) model = model_new();
	g_autoptr(Model) loaded = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autofree char *text = NULL;
	static const ExeMapOrigin origins[] = { EXEMAP_MAPPED, EXEMAP_READ, EXEMAP_READ, EXEMAP_MAPPED };
	Exe *x = add_exe(model, "/usr/bin/x", 10, 5);
	Exe *y;

	model->time = 10;
	for (guint i = 0; i < G_N_ELEMENTS(origins); i++) {
		g_autofree char *lib = g_strdup_printf("/usr/lib/l%u", i);

		exe_add_map_origin(model, x, map_new(lib, 0, 4096, 5), 1.0, origins[i]);
	}
	ck_assert(state_save(model, path, &error));
	ck_assert(g_file_get_contents(path, &text, NULL, NULL));
	ck_assert_ptr_nonnull(strstr(text, "EXEMAP\t0\t0\t1\t0\t1\n"
					   "EXEMAP\t0\t1\t1\t1\t2\n"
					   "EXEMAP\t0\t3\t1\t0\t1\n"));

	loaded = state_load(path, &error);
	ck_assert_msg(loaded != NULL, "%s", error ? error->message : "");
	y = model_lookup_exe(loaded, "/usr/bin/x");
	ck_assert_uint_eq(y->exemaps->len, 4);
	for (guint i = 0; i < G_N_ELEMENTS(origins); i++) {
		const ExeMap *em = &g_array_index(y->exemaps, ExeMap, i);
		guint n = (guint)(em->map->path[strlen(em->map->path) - 1] - '0');

		ck_assert_int_eq(em->origin, origins[n]);
	}
}
END_TEST

START_TEST(test_load_reals_exact)
{
	static const char *const reals[] = {
		"0", "1", "0.1", "0.3", "133.3333", "2.3333333333333335", "1e-310",
		"123456789012345", "1234567890123456", "0.000000000000001",
		"999999999999999.9", "5.", "178357.3", "9007199254740993",
		"0.30000000000000004", "1.7976931348623157e308", "00012.50",
	};
	g_autoptr(GString) body = g_string_new(L_HDR);
	g_autofree char *path = tmp_path("state");
	g_autofree char *text = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(Model) model = NULL;

	for (guint i = 0; i < G_N_ELEMENTS(reals); i++)
		g_string_append_printf(body, "EXE\t%u\t1\t%s\tfile:///usr/bin/e%u\n", i, reals[i], i);
	text = with_end(body->str, 0);
	tu_write_file(path, text);
	model = state_load(path, &error);
	ck_assert_msg(model != NULL, "%s", error ? error->message : "");
	for (guint i = 0; i < G_N_ELEMENTS(reals); i++) {
		g_autofree char *exe = g_strdup_printf("/usr/bin/e%u", i);

		assert_same_double(model_lookup_exe(model, exe)->time, g_ascii_strtod(reals[i], NULL),
				   reals[i]);
	}
}
END_TEST

START_TEST(test_load_valid_text_v2)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autofree char *text = with_end(BASE2, 0);
	g_autoptr(Model) model = NULL;
	Map *map0, *map2;
	Exe *x, *y;
	Markov *m;

	tu_write_file(path, text);
	model = state_load(path, &error);
	ck_assert_msg(model != NULL, "%s", error ? error->message : "");

	ck_assert_int_eq(model->time, 100);
	ck_assert(model->total_time == 90.5);
	ck_assert_int_eq(model->aged_time, 100);
	ck_assert_uint_eq(g_hash_table_size(model->maps), 3);
	x = model_lookup_exe(model, "/usr/bin/x");
	y = model_lookup_exe(model, "/usr/bin/y");
	/* x: maps 0 and 1 (4096 + 8192); y: maps 1 and 2 (8192 + 100), at 0.5. */
	ck_assert_uint_eq(x->exemaps->len, 2);
	ck_assert_uint_eq(x->size, 12288);
	ck_assert_uint_eq(y->exemaps->len, 2);
	ck_assert_uint_eq(y->size, 8292);
	ck_assert(g_array_index(y->exemaps, ExeMap, 1).prob == 0.5);
	ck_assert_int_eq(g_array_index(x->exemaps, ExeMap, 0).origin, EXEMAP_MAPPED);
	ck_assert_int_eq(g_array_index(y->exemaps, ExeMap, 0).origin, EXEMAP_READ);
	ck_assert_int_eq(g_array_index(y->exemaps, ExeMap, 1).origin, EXEMAP_READ);
	ck_assert_uint_eq(x->hits.starts, 4);
	ck_assert_uint_eq(x->hits.checks, 2);
	ck_assert_uint_eq(x->hits.bytes, 100);
	ck_assert_uint_eq(x->hits.prefetched, 50);
	ck_assert_uint_eq(x->hits.probed, 80);
	ck_assert_uint_eq(x->hits.resident, 60);
	ck_assert_uint_eq(y->hits.starts, 0);

	map0 = model_lookup_map(model, "/usr/lib/liba.so", 0, 4096);
	ck_assert_uint_eq(map0->file.dev, 2049);
	ck_assert_uint_eq(map0->file.ino, 77);
	ck_assert_uint_eq(map0->file.size, 12288);
	ck_assert_int_eq(map0->file.mtime, G_GINT64_CONSTANT(1700000000000000001));
	ck_assert_uint_eq(model_lookup_map(model, "/usr/lib/liba.so", 4096, 8192)->file.ino, 77);
	map2 = model_lookup_map(model, "/usr/lib/libb.so", 0, 100);
	ck_assert(!map_file_id_is_known(&map2->file));

	/*
	 * Weights, off the diagonal, 1 .. 12 in the order w01 w02 w03 w10
	 * w12 w13 w20 w21 w23 w30 w31 w32; each diagonal is its row's sum:
	 * 1+2+3 = 6, 4+5+6 = 15, 7+8+9 = 24, 10+11+12 = 33.
	 */
	m = chain_of(x, y);
	ck_assert(m->time == 10.0);
	ck_assert(m->time_to_leave[1] == 2.5);
	ck_assert(m->weight[0][1] == 1.0);
	ck_assert(m->weight[1][0] == 4.0);
	ck_assert(m->weight[2][3] == 9.0);
	ck_assert(m->weight[3][2] == 12.0);
	ck_assert(m->weight[0][0] == 6.0);
	ck_assert(m->weight[1][1] == 15.0);
	ck_assert(m->weight[2][2] == 24.0);
	ck_assert(m->weight[3][3] == 33.0);
	/*
	 * Starts are not in the file: what the chain saw. x (its a) starts
	 * on w01 + w03 + w21 + w23 = 1 + 3 + 8 + 9; y on w02 + w03 + w12 +
	 * w13 = 2 + 3 + 5 + 6.
	 */
	ck_assert(x->starts == 21.0);
	ck_assert(y->starts == 16.0);
}
END_TEST

/*
 * A version 1 file loads (its running times count from the model's
 * start: the total time is the clock) and is written as version 2.
 */
/*
 * The frequency expert's weight survives a restart (version 5): an
 * EXPERTS line after the ORDER record, the weight read back bit for bit.
 */
START_TEST(test_round_trip_experts)
{
	static const struct {
		double weight;
		const char *line;  /* NULL: no EXPERTS line */
	} cases[] = {
		{ 0.1875, "EXPERTS\t0.1875\n" },
		/* Not exact in 7 digits: 17. */
		{ 1.0 / 3, "EXPERTS\t0.33333333333333331\n" },
		/* The bounds the model keeps it in. */
		{ MODEL_FREQ_MIN, "EXPERTS\t0.01\n" },
		{ 1 - MODEL_FREQ_MIN, "EXPERTS\t0.99\n" },
		/* Where every model starts: nothing to write. */
		{ MODEL_FREQ_WEIGHT, NULL },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(Model) model = model_new();
		g_autoptr(Model) loaded = NULL;
		g_autoptr(GError) error = NULL;
		g_autofree char *path = tmp_path("state");
		g_autofree char *text = NULL;
		g_autofree char *again = NULL;
		g_autofree char *body = NULL;
		g_autofree char *expected = NULL;

		model->freq_weight = cases[i].weight;
		ck_assert(state_save(model, path, &error));
		ck_assert(g_file_get_contents(path, &text, NULL, NULL));
		/* Header, comment, the EXPERTS line if any, END. */
		body = g_strconcat("PRELOAD-STATE\t5\t0\t0\n# preload " PACKAGE_VERSION
				   " state: what it learned about the programs run here"
				   " (see doc/state-format.md)\n", cases[i].line, NULL);
		expected = with_end(body, 0);
		ck_assert_str_eq(text, expected);

		loaded = state_load(path, &error);
		ck_assert_msg(loaded != NULL, "%s", error ? error->message : "");
		ck_assert_msg(loaded->freq_weight == cases[i].weight, "case %zu: %.17g, not %.17g",
			      i, loaded->freq_weight, cases[i].weight);
		ck_assert(state_save(loaded, path, &error));
		ck_assert(g_file_get_contents(path, &again, NULL, NULL));
		ck_assert_str_eq(again, text);
	}
}
END_TEST

/* Files written before version 5 have no weight: the model starts at the default. */
START_TEST(test_load_v4_default_weight)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autofree char *text = with_end(PRE4, 0);
	g_autofree char *saved = NULL;
	g_autoptr(Model) model = NULL;

	tu_write_file(path, text);
	model = state_load(path, &error);
	ck_assert_msg(model != NULL, "%s", error ? error->message : "");
	ck_assert(model->freq_weight == 0.5);
	ck_assert(model_lookup_exe(model, "/usr/bin/x") != NULL);
	/* Saved again as version 5, still without an EXPERTS line. */
	ck_assert(state_save(model, path, &error));
	ck_assert(g_file_get_contents(path, &saved, NULL, NULL));
	ck_assert(g_str_has_prefix(saved, "PRELOAD-STATE\t5\t100\t90.5\n"));
	ck_assert(strstr(saved, "\nEXPERTS") == NULL);
	g_clear_pointer(&text, g_free);

	/* Version 5 with the record: its weight; without: the default. */
	text = with_end(PRE5 "EXPERTS\t0.75\n", 0);
	tu_write_file(path, text);
	g_clear_pointer(&model, model_free);
	model = state_load(path, &error);
	ck_assert_msg(model != NULL, "%s", error ? error->message : "");
	ck_assert(model->freq_weight == 0.75);
	g_clear_pointer(&text, g_free);
	text = with_end(PRE5, 0);
	tu_write_file(path, text);
	g_clear_pointer(&model, model_free);
	model = state_load(path, &error);
	ck_assert_msg(model != NULL, "%s", error ? error->message : "");
	ck_assert(model->freq_weight == 0.5);
}
END_TEST

START_TEST(test_load_v1_saves_v2)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autofree char *text = with_end(BASE, 0);
	g_autoptr(Model) model = NULL;
	g_autoptr(Model) again = NULL;
	g_autoptr(GBytes) bytes = NULL;
	g_autofree char *saved = NULL;

	tu_write_file(path, text);
	model = state_load(path, &error);
	ck_assert_msg(model != NULL, "%s", error ? error->message : "");
	ck_assert(model->total_time == 100.0);
	ck_assert(!map_file_id_is_known(&model_lookup_map(model, "/usr/lib/liba.so", 0, 4096)->file));

	ck_assert(state_save(model, path, &error));
	bytes = read_bytes(path);
	saved = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
	ck_assert(g_str_has_prefix(saved, "PRELOAD-STATE\t5\t100\t100\n"));
	/* Both maps are ranges of one file, written once. */
	ck_assert(strstr(saved, "\nFILE\t0\t0\t0\t0\t0\tfile:///usr/lib/liba.so\n") != NULL);
	ck_assert(strstr(saved, "\nFILE\t1\t") == NULL);
	again = state_load(path, &error);
	ck_assert_msg(again != NULL, "%s", error ? error->message : "");
	/*
	 * All but the weights read back the same. The version 1 chain's
	 * diagonal (0, 5, 10, 15) was not the sum of its row; version 2 keeps
	 * only the rows: 1+2+3 = 6, 4+6+7 = 17, 8+9+11 = 28, 12+13+14 = 39.
	 */
	{
		Markov *m = chain_of(model_lookup_exe(again, "/usr/bin/x"),
				     model_lookup_exe(again, "/usr/bin/y"));

		ck_assert(m->weight[0][0] == 6.0);
		ck_assert(m->weight[1][1] == 17.0);
		ck_assert(m->weight[2][2] == 28.0);
		ck_assert(m->weight[3][3] == 39.0);
		ck_assert(m->weight[2][3] == 11.0);
		ck_assert(m->time_to_leave[1] == 2.5);
	}
}
END_TEST

/*
 * With a half-life, the file holds every aged value as of its model time,
 * however long ago the daemon last aged the model in memory.
 */
START_TEST(test_save_ages)
{
	g_autoptr(Model) model = model_new();
	g_autoptr(Model) loaded = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	ModelParams params = { .halflife = 100, .skip_constant = TRUE };
	Exe *a, *b;
	Markov *m;

	model_set_params(model, &params);
	model->time = 1000;
	model->aged_time = 900;   /* one half-life behind */
	model->total_time = 700;
	a = add_exe(model, "/usr/bin/a", 60, 900);
	b = add_exe(model, "/usr/bin/b", 10, 950);
	exe_add_map(model, a, map_new("/usr/lib/liba.so", 0, 4096, 900), 1.0);
	exe_add_map(model, b, map_new("/usr/lib/libb.so", 0, 4096, 950), 1.0);
	m = markov_new(model, a, b, model->time, MARKOV_START_BLANK);
	m->time = 7;
	m->time_to_leave[1] = 10.0 / 3.0;
	m->weight[1][1] = 3;
	m->weight[1][3] = 3;

	ck_assert(state_save(model, path, &error));
	/* Memory is untouched. */
	ck_assert(a->time == 60.0);
	ck_assert_int_eq(model->aged_time, 900);
	loaded = state_load(path, &error);
	ck_assert_msg(loaded != NULL, "%s", error ? error->message : "");
	/* Halved: 700 -> 350, 60 -> 30, 10 -> 5, 7 -> 3.5, 3 -> 1.5; tau as it was. */
	ck_assert(loaded->total_time == 350.0);
	ck_assert(model_lookup_exe(loaded, "/usr/bin/a")->time == 30.0);
	ck_assert(model_lookup_exe(loaded, "/usr/bin/b")->time == 5.0);
	m = chain_of(model_lookup_exe(loaded, "/usr/bin/a"), model_lookup_exe(loaded, "/usr/bin/b"));
	ck_assert(m->time == 3.5);
	ck_assert(m->weight[1][1] == 1.5);
	ck_assert(m->weight[1][3] == 1.5);
	ck_assert(m->time_to_leave[1] == (float)(10.0 / 3.0));
	/* Update times are times, not amounts: never aged. */
	ck_assert_int_eq(model_lookup_exe(loaded, "/usr/bin/b")->update_time, 950);
}
END_TEST

/*
 * state_load_stream() is the loader without the file: the bytes of a
 * valid file load to the same model from memory, and errors carry the
 * name the caller gave.
 */
START_TEST(test_load_stream)
{
	g_autofree char *text = with_end(L_HDR L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 L_EM1 L_MK, 0);
	g_autoptr(GError) error = NULL;
	g_autoptr(Model) model = NULL;
	/* With its END line: a file without one is refused before its records are read. */
	g_autofree char *bad = with_end("PRELOAD-STATE\t1\t5\nMAP\tx\n", 0);
	FILE *file = fmemopen(text, strlen(text), "r");

	ck_assert_ptr_nonnull(file);
	model = state_load_stream(file, "in memory", &error);
	fclose(file);
	ck_assert_msg(model != NULL, "%s", error ? error->message : "");
	ck_assert_int_eq(model->time, 100);
	ck_assert_uint_eq(g_hash_table_size(model->exes), 2);
	ck_assert_uint_eq(model->n_chains, 1);
	g_clear_pointer(&model, model_free);

	file = fmemopen(bad, strlen(bad), "r");
	ck_assert_ptr_nonnull(file);
	model = state_load_stream(file, "in memory", &error);
	fclose(file);
	ck_assert_ptr_null(model);
	ck_assert_int_eq(error->code, STATE_ERROR_CORRUPT);
	ck_assert_msg(g_str_has_prefix(error->message, "in memory:2: "), "%s", error->message);
}
END_TEST

typedef struct {
	const char *name;
	const char *body;      /* the file before its END line */
	gboolean end;          /* append a correct END line */
	int count_delta;       /* added to END's record count */
	const char *suffix;    /* appended after END */
	int code;
	int line;
	const char *what;      /* a part of the message */
} BadFile;

static const BadFile bad_files[] = {
	{ "unknown tag", L_HDR L_NOTE L_MAP0 L_MAP1 "FROB\t1\t2\n" L_EXE1, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 5, "unknown record type \"FROB\"" },
	{ "lower-case tag", L_HDR L_NOTE "map\t0\t5\t0\t4096\tfile:///a\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "unknown record type" },
	{ "missing field", L_HDR L_NOTE L_MAP0 L_MAP1 "EXE\t0\t7\tfile:///usr/bin/x\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 5, "EXE record has 4 fields, expected 5" },
	{ "extra field", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 "EXEMAP\t0\t0\t1\t1\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 7, "EXEMAP record has 5 fields" },
	{ "markov with 15 weights", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 L_EM1
	  "MARKOV\t0\t1\t10\t1\t2\t3\t4\t0\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\t14\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 9, "MARKOV record has 23 fields" },
	{ "bad number", L_HDR L_NOTE "MAP\t0\t5\t0\t4x96\tfile:///usr/lib/liba.so\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "bad length \"4x96\"" },
	{ "negative length", L_HDR L_NOTE "MAP\t0\t5\t0\t-4096\tfile:///usr/lib/liba.so\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "bad length" },
	{ "offset overflow", L_HDR L_NOTE "MAP\t0\t5\t99999999999999999999\t1\tfile:///a\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "bad offset" },
	{ "range beyond off_t", L_HDR L_NOTE "MAP\t0\t5\t9223372036854775807\t1\tfile:///a\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "beyond the largest file offset" },
	{ "leading blank", L_HDR L_NOTE "MAP\t0\t 5\t0\t1\tfile:///a\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "bad update time" },
	{ "plus sign", L_HDR L_NOTE "MAP\t+0\t5\t0\t1\tfile:///a\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "bad map index" },
	{ "update time before -1", L_HDR L_NOTE "MAP\t0\t-2\t0\t1\tfile:///a\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "bad update time" },
	{ "empty field", L_HDR L_NOTE L_MAP0 L_MAP1 "EXE\t0\t\t30\tfile:///usr/bin/x\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 5, "bad update time \"\"" },
	{ "index too big", L_HDR L_NOTE "MAP\t2147483648\t5\t0\t1\tfile:///a\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "bad map index" },
	{ "negative exe time", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 "EXE\t1\t8\t-20\tfile:///usr/bin/y\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 6, "bad exe time" },
	{ "nan tau", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 L_EM1 "MARKOV\t0\t1\t10\tnan\t2\t3\t4" W16,
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 9, "bad mean sojourn \"nan\"" },
	{ "infinite weight", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 L_EM1
	  "MARKOV\t0\t1\t10\t1\t2\t3\t4\t1e999\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\t14\t15\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 9, "bad weight \"1e999\"" },
	{ "negative weight", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 L_EM1
	  "MARKOV\t0\t1\t10\t1\t2\t3\t4\t0\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\t14\t-1\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 9, "bad weight \"-1\"" },
	{ "prob above 1", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 "EXEMAP\t1\t1\t1.5\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 8, "bad probability \"1.5\"" },
	{ "unknown map index", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 "EXEMAP\t0\t7\t1\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 7, "unknown map index 7" },
	{ "unknown exe index in EXEMAP", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 "EXEMAP\t2\t0\t1\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 7, "unknown exe index 2" },
	{ "unknown exe index in MARKOV", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 L_EM1
	  "MARKOV\t0\t5\t10\t1\t2\t3\t4" W16, TRUE, 0, NULL, STATE_ERROR_CORRUPT, 9, "unknown exe index 5" },
	{ "duplicate map index", L_HDR L_NOTE L_MAP0 "MAP\t0\t6\t4096\t8192\tfile:///usr/lib/liba.so\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 4, "duplicate map index 0" },
	{ "duplicate map", L_HDR L_NOTE L_MAP0 "MAP\t1\t9\t0\t4096\tfile:///usr/lib/liba.so\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 4, "duplicate map" },
	{ "duplicate exe index", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 "EXE\t0\t8\t20\tfile:///usr/bin/y\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 6, "duplicate exe index 0" },
	{ "duplicate exe path", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 "EXE\t1\t8\t20\tfile:///usr/bin/x\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 6, "duplicate exe" },
	{ "duplicate exemap", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 "EXEMAP\t0\t0\t0.5\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 8, "duplicate use of map 0 by exe 0" },
	{ "chain with itself", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 L_EM1
	  "MARKOV\t1\t1\t10\t1\t2\t3\t4" W16, TRUE, 0, NULL, STATE_ERROR_CORRUPT, 9, "chain of exe 1 with itself" },
	{ "duplicate chain", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 L_EM1 L_MK
	  "MARKOV\t1\t0\t10\t1\t2\t3\t4" W16, TRUE, 0, NULL, STATE_ERROR_CORRUPT, 10, "duplicate chain" },
	{ "duplicate bad exe", BASE "BADEXE\t51\t10\tfile:///usr/bin/z\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 11, "duplicate bad exe" },
	{ "negative bad exe size", L_HDR L_NOTE "BADEXE\t50\t-1\tfile:///usr/bin/z\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "bad size \"-1\"" },
	{ "bad exe time", L_HDR L_NOTE "BADEXE\t-1\t10\tfile:///usr/bin/z\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "bad check time" },
	{ "hex number", L_HDR L_NOTE "MAP\t0\t5\t0x10\t1\tfile:///a\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "bad offset \"0x10\"" },
	{ "out of order", L_HDR L_NOTE L_EXE0 L_MAP0, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "MAP record after EXE records" },
	{ "plain path, no URI", L_HDR L_NOTE L_MAP0 L_MAP1 "EXE\t0\t7\t30\t/usr/bin/x\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 5, "bad file URI" },
	{ "URI with host", L_HDR L_NOTE L_MAP0 L_MAP1 "EXE\t0\t7\t30\tfile://box/usr/bin/x\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 5, "host name" },
	{ "URI with %00", L_HDR L_NOTE L_MAP0 L_MAP1 "EXE\t0\t7\t30\tfile:///usr/bin/x%00y\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 5, "bad file URI" },
	{ "newer version", "PRELOAD-STATE\t6\t100\t1\n" L_NOTE, TRUE, 0, NULL,
	  STATE_ERROR_VERSION, 1, "newer preload" },
	{ "newer version, other fields", "PRELOAD-STATE\t17\n", FALSE, 0, NULL,
	  STATE_ERROR_VERSION, 1, "newer preload" },
	{ "version 0", "PRELOAD-STATE\t0\t100\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 1, "bad format version" },
	{ "header without time", "PRELOAD-STATE\t1\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 1, "header has 2 fields" },
	{ "negative model time", "PRELOAD-STATE\t1\t-5\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 1, "bad model time" },
	{ "unknown header", "HELLO\tWORLD\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 1, "not a preload state file" },
	{ "header after a comment", L_NOTE L_HDR, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 1, "not a preload state file" },
	{ "a lone newline", "\n", FALSE, 0, NULL,
	  STATE_ERROR_CORRUPT, 1, "not a preload state file" },
	{ "newer 0.6.4-style version", "PRELOAD\t1.0.2\t5\n", FALSE, 0, NULL,
	  STATE_ERROR_VERSION, 1, "newer preload" },
	{ "bad 0.6.4-style version", "PRELOAD\tx.6\t5\n", FALSE, 0, NULL,
	  STATE_ERROR_CORRUPT, 1, "bad preload version" },
	{ "header only", L_HDR, FALSE, 0, NULL,
	  STATE_ERROR_TRUNCATED, 2, "END" },
	{ "no END line", BASE, FALSE, 0, NULL,
	  STATE_ERROR_TRUNCATED, 11, "before its END line" },
	{ "partial last line", L_HDR L_NOTE L_MAP0 "MAP\t1\t6\t4096", FALSE, 0, NULL,
	  STATE_ERROR_TRUNCATED, 4, "incomplete last line" },
	{ "END without newline", BASE "END\t8\t00", FALSE, 0, NULL,
	  STATE_ERROR_TRUNCATED, 11, "incomplete last line" },
	{ "record count too high", BASE, TRUE, 1, NULL,
	  STATE_ERROR_CORRUPT, 11, "END counts 9 records, the file has 8" },
	{ "record count too low", BASE, TRUE, -1, NULL,
	  STATE_ERROR_CORRUPT, 11, "END counts 7 records" },
	{ "bad END count", BASE "END\tx\t00\n", FALSE, 0, NULL,
	  STATE_ERROR_CORRUPT, 11, "bad record count" },
	{ "END without fields", BASE "END\n", FALSE, 0, NULL,
	  STATE_ERROR_CORRUPT, 11, "END record has 1 fields" },
	{ "wrong checksum", BASE "END\t8\t0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
	  FALSE, 0, NULL, STATE_ERROR_CORRUPT, 11, "checksum mismatch" },
	{ "empty line after END", BASE, TRUE, 0, "\n",
	  STATE_ERROR_CORRUPT, 12, "data after the END line" },
	{ "record after END", BASE, TRUE, 0, L_BAD,
	  STATE_ERROR_CORRUPT, 12, "data after the END line" },
	{ "bytes after END", BASE, TRUE, 0, "x",
	  STATE_ERROR_CORRUPT, 12, "data after the END line" },
	/* Version 2: EXEMAP has an origin, HITS exists; version 1 knows neither. */
	{ "v2 EXEMAP origin 2", PRE2 "EXEMAP\t0\t0\t1\t2\t1\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 10, "bad map origin \"2\"" },
	{ "HITS in a version 1 file", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L2_HITS, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 7, "unknown record type \"HITS\"" },
	{ "HITS of an unknown exe", PRE2 "HITS\t5\t4\t2\t100\t50\t80\t60\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "unknown exe index 5" },
	{ "HITS twice", PRE2 L2_HITS L2_HITS, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 11, "duplicate hits of exe 0" },
	{ "HITS checks above starts", PRE2 "HITS\t0\t2\t3\t100\t50\t80\t60\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "inconsistent" },
	{ "HITS resident above probed", PRE2 "HITS\t0\t4\t2\t100\t50\t80\t81\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "inconsistent" },
	{ "HITS probed above bytes", PRE2 "HITS\t0\t4\t2\t100\t50\t101\t60\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "inconsistent" },
	{ "HITS without starts", PRE2 "HITS\t0\t0\t0\t0\t0\t0\t0\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "without starts" },
	{ "HITS negative", PRE2 "HITS\t0\t-4\t2\t100\t50\t80\t60\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "bad start count" },
	{ "HITS after BADEXE", PRE2 L_BAD L2_HITS, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 11, "HITS record after BADEXE records" },
	{ "HITS short", PRE2 "HITS\t0\t4\t2\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "HITS record has 4 fields, expected 8" },
	{ "END in a 0.6.4 file", "PRELOAD\t0.6.4\t5\nEND\t0\t00\n", FALSE, 0, NULL,
	  STATE_ERROR_CORRUPT, 2, "unknown record type \"END\"" },
	{ "current MAP in a 0.6.4 file", "PRELOAD\t0.6.4\t5\n" L_MAP0, FALSE, 0, NULL,
	  STATE_ERROR_CORRUPT, 2, "MAP record has 6 fields, expected 7" },
	{ "0.6.4 unknown index", "PRELOAD\t0.6.4\t5\nEXE\t1\t0\t3\t-1\tfile:///x\nEXEMAP\t1\t4\t1\n",
	  FALSE, 0, NULL, STATE_ERROR_CORRUPT, 3, "unknown map index 4" },
	{ "0.6.4 partial line", "PRELOAD\t0.6.4\t5\nEXE\t1\t0\t3\t-1\tfile:///x", FALSE, 0, NULL,
	  STATE_ERROR_TRUNCATED, 2, "incomplete last line" },
	/* version 2 */
	{ "FILE in version 1", L_HDR L_NOTE "FILE\t0\t1\t2\t3\t4\tfile:///a\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "unknown record type \"FILE\"" },
	{ "v2 header without total", "PRELOAD-STATE\t2\t100\n" L_NOTE, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 1, "header has 3 fields, expected 4" },
	{ "negative total", "PRELOAD-STATE\t2\t100\t-1\n" L_NOTE, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 1, "bad total time \"-1\"" },
	{ "v1 header with total", "PRELOAD-STATE\t1\t100\t90\n" L_NOTE, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 1, "header has 4 fields, expected 3" },
	{ "unknown file index", L2_HDR L_NOTE L2_FILE0 "MAP\t0\t5\t0\t4096\t3\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "unknown file index 3" },
	{ "URI where a file index goes", L2_HDR L_NOTE L2_FILE0 L_MAP0, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "bad file index" },
	{ "duplicate file", L2_HDR L_NOTE L2_FILE0
	  "FILE\t1\t2049\t77\t12288\t1700000000000000001\tfile:///usr/lib/liba.so\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "duplicate file" },
	{ "duplicate file index", L2_HDR L_NOTE L2_FILE0 "FILE\t0\t1\t1\t1\t1\tfile:///b\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "duplicate file index 0" },
	{ "file size beyond off_t", L2_HDR L_NOTE "FILE\t0\t1\t2\t9223372036854775808\t4\tfile:///a\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 3, "bad file size" },
	{ "bad mtime", L2_HDR L_NOTE "FILE\t0\t1\t2\t3\t1.5\tfile:///a\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "bad modification time \"1.5\"" },
	{ "FILE without URI", L2_HDR L_NOTE "FILE\t0\t1\t2\t3\t4\t/a\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 3, "bad file URI" },
	{ "FILE after MAP", L2_HDR L_NOTE L2_FILE0 L2_MAP0 L2_FILE1, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 5, "FILE record after MAP records" },
	{ "map count 0", PRE2 "EXEMAP\t0\t0\t1\t0\t0\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "bad map count \"0\"" },
	{ "map run past the maps", PRE2 "EXEMAP\t0\t1\t1\t0\t5\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "unknown map index 3" },
	{ "map run beyond the indices", PRE2 "EXEMAP\t0\t2147483647\t1\t0\t2\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "beyond the largest index" },
	{ "map twice through runs", PRE2 "EXEMAP\t0\t0\t1\t0\t2\n" "EXEMAP\t0\t1\t1\t1\t1\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 11, "duplicate use of map 1 by exe 0" },
	{ "v1 EXEMAP in version 2", PRE2 L_EM0, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "EXEMAP record has 4 fields, expected 6" },
	{ "EXEMAP without count", PRE2 "EXEMAP\t0\t0\t1\t0\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "EXEMAP record has 5 fields, expected 6" },
	{ "16 weights in version 2", PRE2 L2_EM0 L2_EM1 "MARKOV\t0\t1\t10\t1\t2\t3\t4" W16, TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 12, "MARKOV record has 24 fields, expected 20" },
	{ "negative weight in version 2", PRE2 L2_EM0 L2_EM1
	  "MARKOV\t0\t1\t10\t1\t2\t3\t4\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t-1\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 12, "bad weight \"-1\"" },
	/* Weights and sojourns are floats: beyond 3.4e38 is out of range. */
	{ "weight beyond a float", PRE2 L2_EM0 L2_EM1
	  "MARKOV\t0\t1\t10\t1\t2\t3\t4\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t1e39\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 12, "bad weight \"1e39\"" },
	{ "sojourn beyond a float", PRE2 L2_EM0 L2_EM1 "MARKOV\t0\t1\t10\t1\t2\t4e38\t4" W12,
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 12, "bad mean sojourn \"4e38\"" },
	/* Each fits, their sum (the diagonal) does not. */
	{ "departures beyond a float", PRE2 L2_EM0 L2_EM1
	  "MARKOV\t0\t1\t10\t1\t2\t3\t4\t1\t2\t3\t4\t5\t6\t7\t8\t9\t3e38\t3e38\t3e38\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 12, "weights out of range in chain 0-1" },
	/* Version 1 writes the diagonal, but the save (version 2) would not read back. */
	{ "departures beyond a float, version 1", L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 L_EM1
	  "MARKOV\t0\t1\t10\t1\t2\t3\t4\t1\t3e38\t3e38\t3e38\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\t14\t15\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 9, "weights out of range in chain 0-1" },
	{ "SUCC in version 2", PRE2 "SUCC\t0\t1\t1\t2\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "unknown record type \"SUCC\"" },
	{ "START in version 2", PRE2 "START\t0\t1\t1\t0\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "unknown record type \"START\"" },
	{ "own successor", PRE3 "SUCC\t0\t0\t1\t2\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "exe 0 as its own successor" },
	{ "successor of more starts than chances", PRE3 "SUCC\t0\t1\t3\t2\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "successor 1 of exe 0 has more starts than chances" },
	{ "duplicate successor", PRE3 "SUCC\t0\t1\t1\t2\n" "SUCC\t0\t1\t1\t3\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 11, "duplicate successor 1 of exe 0" },
	{ "successor unknown", PRE3 "SUCC\t0\t2\t1\t2\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "unknown exe index 2" },
	{ "duplicate START", PRE3 "START\t1\t1\t1\t0\n" "START\t1\t2\t1\t0\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 11, "duplicate starts of exe 1" },
	{ "negative quiet starts", PRE3 "START\t1\t1\t1\t-1\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "bad quiet start count \"-1\"" },
	{ "ORDER of an unknown exe", PRE3 "ORDER\t5\t0\t0\t0\t0\t0\t0\t0\t0\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 10, "unknown exe index 5" },
	{ "two ORDERs", PRE3 "ORDER\t-1\t0\t0\t0\t0\t0\t0\t0\t0\n"
	  "ORDER\t-1\t0\t0\t0\t0\t0\t0\t0\t0\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 11, "duplicate ORDER record" },
	{ "SUCC after ORDER", PRE3 "ORDER\t-1\t0\t0\t0\t0\t0\t0\t0\t0\n" "SUCC\t0\t1\t1\t2\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 11, "SUCC record after ORDER records" },
	{ "EXPERTS in version 4", PRE4 "EXPERTS\t0.25\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "unknown record type \"EXPERTS\"" },
	{ "frequency weight below its bound", PRE5 "EXPERTS\t0.0099\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "bad frequency weight \"0.0099\"" },
	{ "frequency weight above its bound", PRE5 "EXPERTS\t0.995\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "bad frequency weight \"0.995\"" },
	{ "frequency weight 1", PRE5 "EXPERTS\t1\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "bad frequency weight \"1\"" },
	{ "frequency weight negative", PRE5 "EXPERTS\t-0.5\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "bad frequency weight \"-0.5\"" },
	{ "frequency weight nan", PRE5 "EXPERTS\tnan\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "bad frequency weight \"nan\"" },
	{ "frequency weight not a number", PRE5 "EXPERTS\t0.5x\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "bad frequency weight \"0.5x\"" },
	{ "EXPERTS without its weight", PRE5 "EXPERTS\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "EXPERTS record has 1 fields, expected 2" },
	{ "EXPERTS with two weights", PRE5 "EXPERTS\t0.25\t0.25\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 4, "EXPERTS record has 3 fields, expected 2" },
	{ "two EXPERTS", PRE5 "EXPERTS\t0.25\n" "EXPERTS\t0.25\n", TRUE, 0, NULL,
	  STATE_ERROR_CORRUPT, 5, "duplicate EXPERTS record" },
	{ "ORDER after EXPERTS", PRE5 "EXPERTS\t0.25\n" "ORDER\t-1\t0\t0\t0\t0\t0\t0\t0\t0\n",
	  TRUE, 0, NULL, STATE_ERROR_CORRUPT, 5, "ORDER record after EXPERTS records" },
	{ "no END line, version 2", BASE2, FALSE, 0, NULL,
	  STATE_ERROR_TRUNCATED, 15, "before its END line" },
	{ "record count too high, version 2", BASE2, TRUE, 1, NULL,
	  STATE_ERROR_CORRUPT, 15, "END counts 13 records, the file has 12" },
};

START_TEST(test_load_bad_file)
{
	const BadFile *c = &bad_files[_i];
	g_autofree char *path = tmp_path("state");
	g_autofree char *text = NULL;

	text = c->end ? with_end(c->body, c->count_delta) : g_strdup(c->body);
	if (c->suffix) {
		char *more = g_strconcat(text, c->suffix, NULL);

		g_free(text);
		text = more;
	}
	tu_write_file(path, text);
	expect_load_error(path, c->code, c->line, c->what, c->name);
}
END_TEST

START_TEST(test_load_nul_byte)
{
	static const char text[] = L_HDR L_NOTE L_MAP0 L_MAP1 "EXE\t0\t7\t30\tfile:///usr/bin/x\0y\n";
	g_autofree char *path = tmp_path("state");

	write_bytes(path, text, sizeof(text) - 1);
	expect_load_error(path, STATE_ERROR_CORRUPT, 5, "NUL byte", "NUL byte");
}
END_TEST

START_TEST(test_load_long_line)
{
	g_autofree char *path = tmp_path("state");
	GString *text = g_string_new(L_HDR "# ");

	for (int i = 0; i < 70000; i++)
		g_string_append_c(text, 'x');
	g_string_append_c(text, '\n');
	tu_write_file(path, text->str);
	g_string_free(text, TRUE);
	expect_load_error(path, STATE_ERROR_CORRUPT, 2, "line longer than", "long line");
}
END_TEST

/* A file cut at any byte is refused, never loaded in part. */
START_TEST(test_load_truncated_everywhere)
{
	g_autoptr(Model) model = build_model();
	g_autoptr(GError) error = NULL;
	g_autofree char *full = tmp_path("full");
	g_autofree char *cut = tmp_path("cut");
	g_autoptr(GBytes) bytes = NULL;
	const char *data;
	gsize len;

	ck_assert(state_save(model, full, &error));
	bytes = read_bytes(full);
	data = g_bytes_get_data(bytes, &len);
	ck_assert_uint_gt(len, 500);

	/* Cut at 0 bytes is an empty file, which is a valid empty model. */
	for (gsize at = 1; at < len; at++) {
		g_autoptr(Model) loaded = NULL;
		g_autoptr(GError) cut_error = NULL;

		write_bytes(cut, data, at);
		loaded = state_load(cut, &cut_error);
		ck_assert_msg(loaded == NULL, "cut at %zu of %zu loaded", at, len);
		ck_assert_msg(cut_error->code == STATE_ERROR_TRUNCATED,
			      "cut at %zu: %s", at, cut_error->message);
	}
}
END_TEST

/* Any single flipped bit is caught (mostly by the checksum). */
START_TEST(test_load_flipped_bits)
{
	g_autofree char *path = tmp_path("state");
	g_autofree char *text = with_end(BASE, 0);
	gsize len = strlen(text);
	g_autofree char *end_line = g_strdup(strstr(text, "END\t"));

	/*
	 * A change that still parses: the chain time 10 -> 11 (the third
	 * field of line 9). Only the checksum on line 11 can notice it.
	 */
	{
		g_autofree char *flipped = g_strconcat(L_HDR L_NOTE L_MAP0 L_MAP1 L_EXE0 L_EXE1 L_EM0 L_EM1
						       "MARKOV\t0\t1\t11\t1\t2.5\t3\t4" W16 L_BAD, end_line, NULL);

		ck_assert_uint_eq(strlen(flipped), len);
		tu_write_file(path, flipped);
		expect_load_error(path, STATE_ERROR_CORRUPT, 11, "checksum mismatch", "10 -> 11");
	}

	for (gsize at = 0; at < len; at++) {
		g_autofree char *copy = g_strdup(text);
		g_autoptr(Model) loaded = NULL;
		g_autoptr(GError) flip_error = NULL;

		copy[at] ^= 0x01;
		write_bytes(path, copy, len);
		loaded = state_load(path, &flip_error);
		ck_assert_msg(loaded == NULL, "flipped byte %zu ('%c') loaded", at, text[at]);
		ck_assert_ptr_nonnull(flip_error);
	}
}
END_TEST

/* ---- preload 0.6.4 import ---- */

/*
 * Bookworm's 0.6.4 wrote the same EXEMAP twice for make (libdl.so.2, 4096
 * bytes at 8192): the import keeps one use and the rest of the file. A
 * current-format file with a duplicate is still corrupt ("duplicate
 * exemap" above).
 */
START_TEST(test_import_064_duplicate_exemap)
{
	static const char text[] =
		"PRELOAD\t0.6.4\t10\n"
		"MAP\t21\t10\t8192\t4096\t-1\tfile:///usr/lib/x86_64-linux-gnu/libdl.so.2\n"
		"MAP\t22\t10\t0\t8192\t-1\tfile:///usr/bin/make\n"
		"EXE\t1\t0\t10\t-1\tfile:///usr/bin/make\n"
		"EXEMAP\t1\t21\t1\n"
		"EXEMAP\t1\t21\t1\n"
		"EXEMAP\t1\t22\t1\n";
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("dup-exemap");
	g_autoptr(Model) model = NULL;
	Exe *make;

	write_bytes(path, text, sizeof text - 1);
	model = state_load(path, &error);
	ck_assert_msg(model != NULL, "%s", error ? error->message : "");
	make = model_lookup_exe(model, "/usr/bin/make");
	ck_assert_ptr_nonnull(make);
	ck_assert_uint_eq(make->exemaps->len, 2);
	/* 4096 + 8192: the duplicate counts once. */
	ck_assert_uint_eq(make->size, 12288);
}
END_TEST

/*
 * A 0.6.4 chain of a pair that never ran together and never handed over
 * holds only the two programs' own starts and stops: not imported. Its
 * starts still count (Exe.starts). Model time 1000; a, b, c ran 100,
 * 200, 300 s. MARKOV fields: a b time tau0..tau3 w00 w01 ... w33.
 */
START_TEST(test_import_064_informative)
{
	static const char text[] =
		"PRELOAD\t0.6.4\t1000\n"
		"EXE\t1\t900\t100\t-1\tfile:///usr/bin/a\n"
		"EXE\t2\t900\t200\t-1\tfile:///usr/bin/b\n"
		"EXE\t3\t900\t300\t-1\tfile:///usr/bin/c\n"
		/* a-b: a started 3 times and b twice, alone each time: dropped */
		"MARKOV\t1\t2\t0\t100\t30\t90\t0\t5\t3\t2\t0\t3\t3\t0\t0\t2\t0\t2\t0\t0\t0\t0\t0\n"
		/* a-c: ran together 50 s (a 0->1 once, c 1->3 once): kept */
		"MARKOV\t1\t3\t50\t100\t30\t0\t50\t1\t1\t0\t0\t0\t1\t0\t1\t0\t0\t0\t0\t0\t0\t0\t0\n"
		/* b-c: never together, but b handed over to c once (1->2): kept */
		"MARKOV\t2\t3\t0\t100\t30\t0\t0\t1\t1\t0\t0\t0\t1\t1\t0\t0\t0\t0\t0\t0\t0\t0\t0\n";
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("informative");
	g_autoptr(Model) model = NULL;
	Exe *a, *b, *c;

	write_bytes(path, text, sizeof text - 1);
	model = state_load(path, &error);
	ck_assert_msg(model != NULL, "%s", error ? error->message : "");
	a = model_lookup_exe(model, "/usr/bin/a");
	b = model_lookup_exe(model, "/usr/bin/b");
	c = model_lookup_exe(model, "/usr/bin/c");
	ck_assert(a && b && c);
	ck_assert_uint_eq(model->n_chains, 2);
	ck_assert_ptr_null(model_lookup_chain(model, a, b));
	ck_assert_ptr_nonnull(model_lookup_chain(model, a, c));
	ck_assert_ptr_nonnull(model_lookup_chain(model, b, c));
	ck_assert(model_lookup_chain(model, a, c)->time == 50.0);
	ck_assert(model_lookup_chain(model, b, c)->weight[1][2] == 1.0f);
	/*
	 * Starts, the most any chain recorded (w0x + w03 + wyx + wy3): a 3
	 * from the dropped a-b (1 from a-c), b 2 from a-b (1 from b-c), c 1
	 * from a-c (w13) and from b-c (w12).
	 */
	ck_assert(a->starts == 3.0);
	ck_assert(b->starts == 2.0);
	ck_assert(c->starts == 1.0);
}
END_TEST

/*
 * Ten programs of 100 s each in 1000 s, every pair a chain; pair (i, j)
 * ran together 10 + i + j s, so its correlation is (1000 (10 + i + j) -
 * 100 * 100) / (100 * 900) = (i + j) / 90: the larger partner the
 * stronger. Each program keeps its STATE_IMPORT_CHAINS_PER_EXE = 4
 * strongest: 0 to 5 those with 6, 7, 8 and 9, 6 with 9, 8, 7, 5 and so
 * on; a pair is kept when either keeps it: the 24 pairs of one of 0..5
 * with one of 6..9 and the 6 pairs within 6..9, not the 15 within 0..5.
 */
START_TEST(test_import_064_top)
{
	g_autoptr(GString) text = g_string_new("PRELOAD\t0.6.4\t1000\n");
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("top");
	g_autoptr(Model) model = NULL;
	Exe *exe[10];

	ck_assert_int_eq(STATE_IMPORT_CHAINS_PER_EXE, 4);
	for (int i = 0; i < 10; i++)
		g_string_append_printf(text, "EXE\t%d\t900\t100\t-1\tfile:///usr/bin/p%d\n", i, i);
	for (int i = 0; i < 10; i++) {
		for (int j = i + 1; j < 10; j++) {
			g_string_append_printf(text, "MARKOV\t%d\t%d\t%d\t1\t1\t1\t1", i, j, 10 + i + j);
			for (int w = 0; w < 16; w++)
				g_string_append(text, "\t0");
			g_string_append_c(text, '\n');
		}
	}
	write_bytes(path, text->str, text->len);
	model = state_load(path, &error);
	ck_assert_msg(model != NULL, "%s", error ? error->message : "");
	for (int i = 0; i < 10; i++) {
		g_autofree char *p = g_strdup_printf("/usr/bin/p%d", i);

		ck_assert_ptr_nonnull(exe[i] = model_lookup_exe(model, p));
	}
	ck_assert_uint_eq(model->n_chains, 30);
	for (int i = 0; i < 10; i++) {
		for (int j = i + 1; j < 10; j++) {
			Markov *m = model_lookup_chain(model, exe[i], exe[j]);

			ck_assert_msg((m != NULL) == (j >= 6), "pair %d-%d", i, j);
			if (m)
				ck_assert(m->time == (double)(10 + i + j));
		}
	}
	/* 0 to 5: their own four; 6: 0..5 and 7, 8, 9; 9: all nine. */
	ck_assert_uint_eq(exe[0]->chains->len, 4);
	ck_assert_uint_eq(exe[5]->chains->len, 4);
	ck_assert_uint_eq(exe[6]->chains->len, 9);
	ck_assert_uint_eq(exe[9]->chains->len, 9);
}
END_TEST

START_TEST(test_import_064)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Model) model = state_load(TEST_SRCDIR "/fixtures/preload-0.6.4.state", &error);
	g_autoptr(Model) again = NULL;
	g_autofree char *path = tmp_path("converted");
	Exe *perl, *python, *bash, *env;
	Markov *m;
	Map *libc;

	ck_assert_msg(model != NULL, "%s", error ? error->message : "");
	/* Header "PRELOAD\t0.6.4\t32". */
	ck_assert_int_eq(model->time, 32);
	ck_assert_uint_eq(g_hash_table_size(model->exes), 4);
	/* 7 MAP lines, but LC_CTYPE (seq 6) is used by no EXEMAP: dropped. */
	ck_assert_uint_eq(g_hash_table_size(model->maps), 6);
	ck_assert_ptr_null(model_lookup_map(model, "/usr/lib/locale/C.utf8/LC_CTYPE", 0, 356352));
	/* 6 MARKOV lines; the BADEXE line is ignored, as 0.6.4 did. */
	ck_assert_uint_eq(model->n_chains, 6);
	ck_assert_uint_eq(g_hash_table_size(model->bad_exes), 0);

	/* "EXE\t4\t4\t16\t-1\tfile:///usr/bin/perl" */
	perl = model_lookup_exe(model, "/usr/bin/perl");
	ck_assert_ptr_nonnull(perl);
	ck_assert_int_eq(perl->update_time, 4);
	ck_assert(perl->time == 16.0);
	ck_assert_uint_eq(perl->exemaps->len, 4);
	/* perl 299008 + libc 155648 + libc 1400832 + libm 65536 */
	ck_assert_uint_eq(perl->size, 1921024);

	python = model_lookup_exe(model, "/root/.pyenv/versions/3.11.7/bin/python3.11");
	bash = model_lookup_exe(model, "/usr/bin/bash");
	env = model_lookup_exe(model, "/usr/bin/env");
	ck_assert_ptr_nonnull(python);
	ck_assert_ptr_nonnull(bash);
	ck_assert_ptr_nonnull(env);
	ck_assert(python->time == 30.0);
	ck_assert(bash->time == 31.0);
	ck_assert(env->time == 3.0);

	/* "MAP\t15\t1\t155648\t1400832\t-1\tfile:///usr/lib/x86_64-linux-gnu/libc.so.6", used by all 4 */
	libc = model_lookup_map(model, "/usr/lib/x86_64-linux-gnu/libc.so.6", 155648, 1400832);
	ck_assert_ptr_nonnull(libc);
	ck_assert_int_eq(libc->refcount, 4);
	ck_assert_int_eq(libc->update_time, 1);

	/*
	 * "MARKOV\t2\t4\t0\t2.66667\t2\t4\t0\t3 0 3 0\t0 1 1 0\t3 1 4 0\t0 0 0 0":
	 * a = env (seq 2), b = perl (seq 4); 0.6.4 kept 6 digits of tau0.
	 */
	m = chain_of(env, perl);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_eq(m->a, env);
	ck_assert_ptr_eq(m->b, perl);
	ck_assert(m->time == 0.0);
	assert_same_float(m->time_to_leave[0], 2.66667f, "tau0");
	ck_assert(m->time_to_leave[1] == 2.0);
	ck_assert(m->time_to_leave[2] == 4.0);
	ck_assert(m->time_to_leave[3] == 0.0);
	ck_assert(m->weight[0][0] == 3.0 && m->weight[0][2] == 3.0 && m->weight[0][1] == 0.0);
	ck_assert(m->weight[1][1] == 1.0 && m->weight[1][2] == 1.0);
	ck_assert(m->weight[2][0] == 3.0 && m->weight[2][1] == 1.0 && m->weight[2][2] == 4.0);
	ck_assert(m->weight[3][3] == 0.0);

	/* "MARKOV\t3\t4\t16\t0\t2.5\t0\t4\t..." python-perl ran together 16 s. */
	m = chain_of(python, perl);
	ck_assert(m->time == 16.0);
	ck_assert(m->time_to_leave[1] == 2.5);

	/* Saved again it is a current-format file with the same content. */
	ck_assert(state_save(model, path, &error));
	again = state_load(path, &error);
	ck_assert_ptr_nonnull(again);
	assert_models_equal(model, again);
}
END_TEST

/* ---- moving a bad file aside ---- */

START_TEST(test_move_aside)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("preload.state");
	g_autofree char *moved = NULL;
	g_autofree char *prefix = NULL;
	g_autoptr(GBytes) bytes = NULL;
	gint64 before = g_get_real_time() / G_USEC_PER_SEC;
	gint64 stamp;
	char *end;

	tu_write_file(path, "garbage\n");
	ck_assert(state_move_aside(path, &moved, &error));
	ck_assert_ptr_null(error);
	ck_assert(!g_file_test(path, G_FILE_TEST_EXISTS));

	prefix = g_strdup_printf("%s.broken-", path);
	ck_assert(g_str_has_prefix(moved, prefix));
	stamp = g_ascii_strtoll(moved + strlen(prefix), &end, 10);
	ck_assert_str_eq(end, "");
	ck_assert_int_ge(stamp, before);
	ck_assert_int_le(stamp, before + 5);
	bytes = read_bytes(moved);
	ck_assert_uint_eq(g_bytes_get_size(bytes), 8);
	ck_assert(memcmp(g_bytes_get_data(bytes, NULL), "garbage\n", 8) == 0);
}
END_TEST

START_TEST(test_move_aside_keeps_earlier)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("preload.state");
	g_autofree char *moved = NULL;
	gint64 now = g_get_real_time() / G_USEC_PER_SEC;
	gboolean suffixed = FALSE;

	/* Earlier broken files for this second and the next few. */
	for (gint64 t = now; t < now + 5; t++) {
		g_autofree char *old = g_strdup_printf("%s.broken-%" G_GINT64_FORMAT, path, t);

		tu_write_file(old, "earlier\n");
	}
	tu_write_file(path, "new\n");
	ck_assert(state_move_aside(path, &moved, &error));
	ck_assert(!g_file_test(path, G_FILE_TEST_EXISTS));
	for (gint64 t = now; t < now + 5; t++) {
		g_autofree char *want = g_strdup_printf("%s.broken-%" G_GINT64_FORMAT "-1", path, t);
		g_autofree char *old = g_strdup_printf("%s.broken-%" G_GINT64_FORMAT, path, t);
		g_autofree char *contents = NULL;

		if (strcmp(moved, want) == 0)
			suffixed = TRUE;
		ck_assert(g_file_get_contents(old, &contents, NULL, NULL));
		ck_assert_str_eq(contents, "earlier\n");
	}
	ck_assert_msg(suffixed, "moved to %s", moved);

	/* Without moved_to, and with nothing to move. */
	tu_write_file(path, "again\n");
	ck_assert(state_move_aside(path, NULL, &error));
	ck_assert(!g_file_test(path, G_FILE_TEST_EXISTS));
	ck_assert(!state_move_aside(path, NULL, &error));
	ck_assert_int_eq(error->code, STATE_ERROR_IO);
	ck_assert(strstr(error->message, path) != NULL);
}
END_TEST

/* ---- the checksum ---- */

/*
 * Both ways of hashing (the SHA extensions where the CPU has them, and
 * GChecksum) give GChecksum's digest, whatever the length and however the
 * data is cut into updates: every padding case of the last block (55, 56,
 * 63, 64 bytes left...) and updates that straddle blocks.
 */
/*
 * A file of several write chunks: the END line sums all of them (checked
 * here with GChecksum over the whole text), and it loads back whole.
 */
START_TEST(test_save_large_in_chunks)
{
	g_autoptr(Model) model = build_big_model();
	g_autoptr(Model) loaded = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autoptr(GBytes) bytes = NULL;
	g_autofree char *text = NULL;
	g_autofree char *body = NULL;
	g_autofree char *expected = NULL;
	g_autofree char *records = NULL;
	const char *end;
	Exe *first, *last;
	Markov *m;

	ck_assert(state_save(model, path, &error));
	bytes = read_bytes(path);
	/* Over three chunks of 64 KiB. */
	ck_assert_uint_gt(g_bytes_get_size(bytes), 3 * 64 * 1024);
	text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
	end = strstr(text, "\nEND\t");
	ck_assert_ptr_nonnull(end);
	body = g_strndup(text, (gsize)(end + 1 - text));
	/* FILE, MAP, EXE and EXEMAP per exe, one MARKOV less. */
	expected = with_end(body, 0);
	ck_assert_str_eq(text, expected);
	records = g_strdup_printf("\nEND\t%d\t", 4 * BIG_EXES + BIG_EXES - 1);
	ck_assert_ptr_nonnull(strstr(text, records));

	loaded = state_load(path, &error);
	ck_assert_ptr_null(error);
	ck_assert_ptr_nonnull(loaded);
	ck_assert_uint_eq(g_hash_table_size(loaded->exes), BIG_EXES);
	ck_assert_uint_eq(g_hash_table_size(loaded->maps), BIG_EXES);
	first = g_hash_table_lookup(loaded->exes, "/usr/lib/big/program-0000");
	last = g_hash_table_lookup(loaded->exes, "/usr/lib/big/program-2999");
	ck_assert_ptr_nonnull(first);
	ck_assert_ptr_nonnull(last);
	assert_same_double(last->time, 3009.0, "last exe's time");
	ck_assert_uint_eq(g_array_index(last->exemaps, ExeMap, 0).map->length, 4096 * 3000);
	m = chain_of(last, g_hash_table_lookup(loaded->exes, "/usr/lib/big/program-2998"));
	ck_assert_ptr_nonnull(m);
	assert_same_double(m->time, 2999.0, "last chain's time");
	assert_same_float(m->weight[0][1], 1.0f / 3.0f, "last chain's weight");
	ck_assert_uint_eq(first->chains->len, 1);
}
END_TEST

/*
 * The order of starts survives a save and a load exactly: x (exe 0) was
 * followed by y in 2 of its 3 chances (of 4 successions); y opened 1.5
 * sessions (aged); y started last, at 90. Saving the loaded model gives
 * the same records.
 */
START_TEST(test_round_trip_successors)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *path = tmp_path("state");
	g_autofree char *path2 = tmp_path("state2");
	g_autofree char *text = with_end(PRE3 L2_EM0 L2_EM1
					 "START\t0\t5\t4\t0\n"
					 "START\t1\t2.5\t0\t1.5\n"
					 "SUCC\t0\t1\t2\t3\n"
					 "ORDER\t1\t90\t300\t12\t120\t10\t60.25\t2\t1.5\n", 0);
	g_autoptr(Model) model = NULL;
	g_autoptr(GBytes) before = NULL;
	g_autoptr(GBytes) after = NULL;
	const ExeSucc *succ;
	Exe *x, *y;

	tu_write_file(path, text);
	model = state_load(path, &error);
	ck_assert_msg(model != NULL, "%s", error ? error->message : "");
	x = model_lookup_exe(model, "/usr/bin/x");
	y = model_lookup_exe(model, "/usr/bin/y");
	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_nonnull(y);
	/* From the START lines, not from the chains (model_count_starts()). */
	assert_same_double(x->starts, 5, "x's starts");
	assert_same_double(x->succ_total, 4, "x's successions");
	assert_same_double(y->starts, 2.5, "y's starts");
	assert_same_double(y->quiet_starts, 1.5, "y's quiet starts");
	ck_assert_uint_eq(x->succ->len, 1);
	ck_assert_uint_eq(y->succ->len, 0);
	succ = &g_array_index(x->succ, ExeSucc, 0);
	ck_assert_ptr_eq(succ->next, y);
	assert_same_float(succ->count, 2, "y after x");
	assert_same_float(succ->chances, 3, "y's chances after x");
	ck_assert_uint_eq(model->quiet_exes->len, 1);
	ck_assert_ptr_eq(g_ptr_array_index(model->quiet_exes, 0), y);
	ck_assert_ptr_eq(model->last_start, y);
	ck_assert_int_eq(model->last_start_time, 90);
	assert_same_double(model->start_gaps, 300, "start gaps");
	assert_same_double(model->n_start_gaps, 12, "start gap count");
	assert_same_double(model->soon_gaps, 120, "soon gaps");
	assert_same_double(model->n_soon_gaps, 10, "soon gap count");
	assert_same_double(model->quiet_gaps, 60.25, "quiet gaps");
	assert_same_double(model->n_quiet_gaps, 2, "quiet gap count");
	assert_same_double(model->quiet_total, 1.5, "quiet total");
	/* 2 * 300 / 12 */
	assert_same_double(model_quiet(model), 50, "quiet spell");

	ck_assert(state_save(model, path2, &error));
	before = read_bytes(path);
	after = read_bytes(path2);
	{
		g_autofree char *old_text = g_strndup(g_bytes_get_data(before, NULL),
						      g_bytes_get_size(before));
		g_autofree char *new_text = g_strndup(g_bytes_get_data(after, NULL),
						      g_bytes_get_size(after));
		g_auto(GStrv) old_lines = g_strsplit(old_text, "\n", -1);
		g_auto(GStrv) new_lines = g_strsplit(new_text, "\n", -1);

		/*
		 * 16 lines and "": only the version (4 now), the comment (line 2),
		 * the EXEs' identity (unknown in version 3: 0 and 0) and so the
		 * END differ.
		 */
		ck_assert_uint_eq(g_strv_length(old_lines), 17);
		ck_assert_uint_eq(g_strv_length(new_lines), 17);
		ck_assert(g_str_has_prefix(new_lines[0], "PRELOAD-STATE\t5\t"));
		ck_assert_str_eq(old_lines[0] + 16, new_lines[0] + 16);
		for (guint i = 2; i < 15; i++) {
			if (g_str_has_prefix(old_lines[i], "EXE\t")) {
				const char *uri = strrchr(old_lines[i], '\t');
				g_autofree char *head = g_strndup(old_lines[i], (gsize)(uri - old_lines[i]));
				g_autofree char *exe = g_strdup_printf("%s\t0\t0%s", head, uri);

				ck_assert_str_eq(exe, new_lines[i]);
			} else {
				ck_assert_str_eq(old_lines[i], new_lines[i]);
			}
		}
	}
}
END_TEST

/*
 * The order of starts ages with the half-life, and a successor whose
 * count fades below MODEL_FADED_WEIGHT is forgotten.
 */
START_TEST(test_successors_age)
{
	g_autoptr(Model) model = model_new();
	ModelParams params = { .halflife = 100 };
	Exe *a = exe_new("/usr/bin/a", FALSE, 0);
	Exe *b = exe_new("/usr/bin/b", FALSE, 0);
	Exe *c = exe_new("/usr/bin/c", FALSE, 0);

	model_add_exe(model, a, 0, FALSE);
	model_add_exe(model, b, 0, FALSE);
	model_add_exe(model, c, 0, FALSE);
	model_set_params(model, &params);
	exe_append_succ(a, &(ExeSucc){ b, 4, 6 });
	exe_append_succ(a, &(ExeSucc){ c, 0.08f, 6 });
	a->succ_total = 6;
	b->quiet_starts = 2;
	g_ptr_array_add(model->quiet_exes, b);
	model->quiet_total = 2;
	model->start_gaps = 100;
	model->n_start_gaps = 10;
	/* One half-life: everything halves; c's 0.04 has faded. */
	model_age(model, 100);
	ck_assert_uint_eq(a->succ->len, 1);
	ck_assert_ptr_eq(g_array_index(a->succ, ExeSucc, 0).next, b);
	assert_same_float(g_array_index(a->succ, ExeSucc, 0).count, 2, "b after a");
	assert_same_float(g_array_index(a->succ, ExeSucc, 0).chances, 3, "b's chances");
	assert_same_double(a->succ_total, 3, "a's successions");
	assert_same_double(b->quiet_starts, 1, "b's quiet starts");
	assert_same_double(model->quiet_total, 1, "quiet total");
	assert_same_double(model->start_gaps, 50, "start gaps");
	assert_same_double(model->n_start_gaps, 5, "start gap count");
}
END_TEST

/*
 * tests/fixtures/state-v2.state was saved by the writer that hashed with
 * its own SHA-256 code (the 0.6.4 fixture, imported and saved at
 * 36f5084): it loads, and saving it again gives the very same records
 * in version 4, which adds START lines (the start counts the chains
 * imply), an unknown identity (0 and 0) on each EXE line and so a new END
 * line: files written before the move to GChecksum, and version 2 files,
 * still load.
 */
START_TEST(test_load_earlier_checksum)
{
	static const char fixture[] = TEST_SRCDIR "/fixtures/state-v2.state";
	g_autoptr(GError) error = NULL;
	g_autoptr(Model) model = state_load(fixture, &error);
	g_autofree char *path = tmp_path("state");
	g_autoptr(GBytes) before = NULL;
	g_autoptr(GBytes) after = NULL;

	ck_assert_msg(model != NULL, "%s", error ? error->message : "");
	ck_assert_uint_eq(g_hash_table_size(model->exes), 4);
	ck_assert(state_save(model, path, &error));
	before = read_bytes(fixture);
	after = read_bytes(path);
	{
		g_autofree char *old_text = g_strndup(g_bytes_get_data(before, NULL),
						      g_bytes_get_size(before));
		g_autofree char *new_text = g_strndup(g_bytes_get_data(after, NULL),
						      g_bytes_get_size(after));
		g_auto(GStrv) old_lines = g_strsplit(old_text, "\n", -1);
		g_auto(GStrv) new_lines = g_strsplit(new_text, "\n", -1);
		guint n_old = g_strv_length(old_lines), j = 1, starts = 0;

		ck_assert(g_str_has_prefix(old_lines[0], "PRELOAD-STATE\t2\t"));
		ck_assert(g_str_has_prefix(new_lines[0], "PRELOAD-STATE\t5\t"));
		ck_assert_str_eq(old_lines[0] + 16, new_lines[0] + 16);
		/* Every line but the header and END (the last two: END, ""). */
		for (guint i = 1; i + 2 < n_old; i++, j++) {
			while (new_lines[j] && g_str_has_prefix(new_lines[j], "START\t")) {
				j++;
				starts++;
			}
			ck_assert_ptr_nonnull(new_lines[j]);
			if (g_str_has_prefix(old_lines[i], "EXE\t")) {
				const char *uri = strrchr(old_lines[i], '\t');
				g_autofree char *head = g_strndup(old_lines[i], (gsize)(uri - old_lines[i]));
				g_autofree char *exe = g_strdup_printf("%s\t0\t0%s", head, uri);

				ck_assert_str_eq(exe, new_lines[j]);
			} else {
				ck_assert_str_eq(old_lines[i], new_lines[j]);
			}
		}
		while (new_lines[j] && g_str_has_prefix(new_lines[j], "START\t")) {
			j++;
			starts++;
		}
		/* One START per program whose chains recorded a start: 3 of the 4. */
		ck_assert_uint_eq(starts, 3);
		ck_assert(g_str_has_prefix(new_lines[j], "END\t"));
	}
}
END_TEST

/* ---- hostile files and directories ---- */

/* A field of /proc/self/status in KiB ("VmRSS", "VmHWM"). */
static long
status_kb(const char *field)
{
	g_autofree char *text = NULL;
	g_autofree char *key = g_strconcat("\n", field, ":", NULL);
	const char *at;

	ck_assert(g_file_get_contents("/proc/self/status", &text, NULL, NULL));
	at = strstr(text, key);
	ck_assert_msg(at != NULL, "no %s in /proc/self/status", field);
	return strtol(at + strlen(key), NULL, 10);
}

/*
 * Loads path, which must fail with code and what at line, and returns by
 * how many KiB the peak resident set grew meanwhile (the peak is reset
 * first through /proc/self/clear_refs, Linux 4.0).
 */
static long
load_error_peak_growth(const char *path, int code, int line, const char *what)
{
	long before;
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "5", 1), 1);
	close(fd);
	before = status_kb("VmRSS");
	expect_load_error(path, code, line, what, path);
	return status_kb("VmHWM") - before;
}

#define HOSTILE_SIZE (16 * 1024 * 1024)
/* What a load may add to the peak RSS for such a file: a 128 KiB line buffer and change. */
#define HOSTILE_GROWTH_KB (4 * 1024)

/*
 * 16 MiB of valid FILE records whose END line's checksum is wrong: the
 * loader built 240,000 file records (40 MB) before the checksum refused
 * them. Now the first pass refuses the file in its line buffer.
 */
START_TEST(test_load_damaged_large_file_constant_memory)
{
	g_autofree char *path = tmp_path("state");
	GString *text = g_string_sized_new(HOSTILE_SIZE + 4096);
	guint n = 0;
	long growth;

	g_string_append(text, "PRELOAD-STATE\t2\t100\t100\n");
	while (text->len < HOSTILE_SIZE) {
		g_string_append_printf(text, "FILE\t%u\t2049\t%u\t4096\t0\tfile:///usr/lib/x/lib%09u.so\n",
				       n, n, n);
		n++;
	}
	g_string_append_printf(text, "END\t%u\t%064d\n", n, 0);
	write_bytes(path, text->str, text->len);
	g_string_free(text, TRUE);

	growth = load_error_peak_growth(path, STATE_ERROR_CORRUPT, (int)n + 2, "checksum mismatch");
	ck_assert_msg(growth < HOSTILE_GROWTH_KB, "the peak RSS grew by %ld KiB", growth);
}
END_TEST

/* A 16 MiB line: getline() grew to hold it all before the length check. */
START_TEST(test_load_huge_line_constant_memory)
{
	g_autofree char *path = tmp_path("state");
	g_autofree char *text = g_malloc(HOSTILE_SIZE + 64);
	gsize len;
	long growth;

	len = (gsize)g_snprintf(text, 64, "PRELOAD-STATE\t2\t100\t100\n# ");
	memset(text + len, 'x', HOSTILE_SIZE);
	len += HOSTILE_SIZE;
	text[len++] = '\n';
	write_bytes(path, text, len);
	g_clear_pointer(&text, g_free);

	growth = load_error_peak_growth(path, STATE_ERROR_CORRUPT, 2, "line longer than");
	ck_assert_msg(growth < HOSTILE_GROWTH_KB, "the peak RSS grew by %ld KiB", growth);
}
END_TEST

/*
 * A symlink at the state path is not followed: loading refuses it, and
 * a save replaces the link with a file and leaves its target alone.
 */
START_TEST(test_load_symlink_not_followed)
{
	g_autoptr(Model) model = build_model();
	g_autoptr(Model) loaded = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *victim = tmp_path("victim");
	g_autofree char *path = tmp_path("state");
	g_autoptr(GBytes) before = NULL;
	g_autoptr(GBytes) after = NULL;

	/* The target is a good state: following the link would load it. */
	ck_assert(state_save(model, victim, &error));
	before = read_bytes(victim);
	ck_assert_int_eq(symlink(victim, path), 0);

	loaded = state_load(path, &error);
	ck_assert_ptr_null(loaded);
	ck_assert_ptr_nonnull(error);
	ck_assert_int_eq(error->code, STATE_ERROR_UNSAFE);
	ck_assert_msg(strstr(error->message, "symbolic link") != NULL, "%s", error->message);
	g_clear_error(&error);

	ck_assert(state_save(model, path, &error));
	ck_assert(!g_file_test(path, G_FILE_TEST_IS_SYMLINK));
	ck_assert(g_file_test(path, G_FILE_TEST_IS_REGULAR));
	after = read_bytes(victim);
	ck_assert(g_bytes_equal(before, after));
}
END_TEST

/*
 * state_prepare_dir() refuses path's directory with STATE_ERROR_UNSAFE
 * saying why, and leaves it alone.
 */
static void
expect_unsafe_dir(const char *path, const char *why)
{
	g_autoptr(GError) error = NULL;

	ck_assert(!state_prepare_dir(path, &error));
	ck_assert_ptr_nonnull(error);
	ck_assert_int_eq(error->code, STATE_ERROR_UNSAFE);
	ck_assert_msg(strstr(error->message, why) != NULL, "%s", error->message);
	ck_assert_msg(strstr(error->message, path) != NULL, "%s", error->message);
}

/* A good state in a directory anyone (or its group) can write is refused. */
START_TEST(test_dir_writable_by_others_refused)
{
	static const struct {
		mode_t mode;
		const char *why;
	} cases[] = {
		{ 0777, "writable by everyone" },
		{ 01777, "writable by everyone" },
		{ 0770, "writable by its group" },
	};
	g_autoptr(Model) model = build_model();
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = tmp_path("shared");
	g_autofree char *path = tmp_path("shared/state");
	struct stat st;

	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert(state_save(model, path, &error));
	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GBytes) before = read_bytes(path);
		g_autoptr(GBytes) after = NULL;

		ck_assert_int_eq(chmod(dir, cases[i].mode), 0);
		expect_unsafe_dir(path, cases[i].why);
		ck_assert_int_eq(stat(dir, &st), 0);
		ck_assert_uint_eq(st.st_mode & 07777, cases[i].mode);
		after = read_bytes(path);
		ck_assert(g_bytes_equal(before, after));
	}
	/* 0755 and 0700 are both the owner's alone. */
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert(state_prepare_dir(path, &error));
	ck_assert_int_eq(chmod(dir, 0700), 0);
	ck_assert(state_prepare_dir(path, &error));
}
END_TEST

/* A missing state directory is made, the daemon's alone. */
START_TEST(test_prepare_dir_creates_0700)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *dir = tmp_path("lib/preload");
	g_autofree char *path = tmp_path("lib/preload/preload.state");
	struct stat st;

	ck_assert(state_prepare_dir(path, &error));
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_uint_eq(st.st_uid, geteuid());
	/* Nothing else is made there. */
	assert_only_entry(dir, "");
}
END_TEST

/*
 * A directory of another user is refused: as root one made here and
 * given to nobody (65534); as anyone else, "/", which root owns.
 */
START_TEST(test_dir_of_another_user_refused)
{
	g_autofree char *dir = tmp_path("theirs");
	g_autofree char *path = NULL;

	if (geteuid() == 0) {
		ck_assert_int_eq(mkdir(dir, 0700), 0);
		ck_assert_int_eq(chown(dir, 65534, 65534), 0);
		path = tmp_path("theirs/state");
	} else {
		path = g_strdup("/preload-test-no-such-state");
	}
	expect_unsafe_dir(path, "belongs to uid");
}
END_TEST

static Suite *
state_suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc;

	tc = tcase_create("round trip");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_round_trip_float_extremes);
	tcase_add_test(tc, test_round_trip_experts);
	tcase_add_test(tc, test_save_large_in_chunks);
	tcase_add_test(tc, test_save_file_mode_and_no_leftovers);
	tcase_add_test(tc, test_save_creates_directory);
	tcase_add_test(tc, test_save_empty_model);
	tcase_add_test(tc, test_save_replaces_leftover_temp);
	tcase_add_test(tc, test_save_temp_symlink_not_followed);
	suite_add_tcase(s, tc);

	tc = tcase_create("save failures");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_save_under_regular_file);
	TU_ADD_TEST_UNLESS(tc, test_save_unwritable_directory, tu_is_root() ?
			   "root writes anywhere; test_save_write_fails covers this" : NULL);
	tcase_add_test(tc, test_save_write_fails);
	tcase_add_test(tc, test_save_write_fails_midway);
	tcase_add_test(tc, test_save_rename_fails);
	suite_add_tcase(s, tc);

	tc = tcase_create("load");
	tcase_add_checked_fixture(tc, setup, teardown);
	/* A FIFO that blocked would hang here; fail fast instead. */
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_load_missing_file);
	tcase_add_test(tc, test_load_empty_file);
	tcase_add_test(tc, test_load_fifo);
	tcase_add_test(tc, test_load_directory);
	tcase_add_test(tc, test_load_valid_text);
	tcase_add_test(tc, test_load_stream);
	tcase_add_loop_test(tc, test_load_bad_file, 0, (int)G_N_ELEMENTS(bad_files));
	tcase_add_test(tc, test_load_valid_text_v2);
	tcase_add_test(tc, test_load_reals_exact);
	tcase_add_test(tc, test_save_runs_keep_origin);
	tcase_add_test(tc, test_load_v1_saves_v2);
	tcase_add_test(tc, test_load_v4_default_weight);
	tcase_add_test(tc, test_save_ages);
	tcase_add_test(tc, test_load_nul_byte);
	tcase_add_test(tc, test_load_long_line);
	suite_add_tcase(s, tc);

	tc = tcase_create("damage");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_load_truncated_everywhere);
	tcase_add_test(tc, test_load_flipped_bits);
	suite_add_tcase(s, tc);

	tc = tcase_create("import");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_import_064);
	tcase_add_test(tc, test_import_064_duplicate_exemap);
	tcase_add_test(tc, test_import_064_informative);
	tcase_add_test(tc, test_import_064_top);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_checked_fixture(tc, setup, teardown);
	/* Hashing 16 MiB takes a while under valgrind. */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_load_damaged_large_file_constant_memory);
	tcase_add_test(tc, test_load_huge_line_constant_memory);
	tcase_add_test(tc, test_load_symlink_not_followed);
	tcase_add_test(tc, test_dir_writable_by_others_refused);
	tcase_add_test(tc, test_dir_of_another_user_refused);
	tcase_add_test(tc, test_prepare_dir_creates_0700);
	suite_add_tcase(s, tc);

	tc = tcase_create("checksum");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_load_earlier_checksum);
	tcase_add_test(tc, test_round_trip_successors);
	tcase_add_test(tc, test_successors_age);
	suite_add_tcase(s, tc);

	tc = tcase_create("move aside");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_move_aside);
	tcase_add_test(tc, test_move_aside_keeps_earlier);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	return tu_run_suite(state_suite());
}
