/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model: which executables exist, which file ranges they map, and one
 * continuous-time Markov chain per pair of executables that learns how the
 * pair moves between "neither runs", "only a", "only b" and "both".
 *
 * Everything here is bookkeeping and arithmetic on the model's own clock:
 * the caller (the spy, the state loader, the tests) passes the model time
 * `now` into every function that needs it. Nothing reads /proc, the wall
 * clock or the disk, and nothing logs except g_return_if_fail() on
 * programming errors, so a test can replay a hand-made history and check
 * the exact counters that result.
 *
 * Ownership: the model owns its exes (model->exes), each exe owns its
 * ExeMap array, every registered map is owned by model->maps and counted
 * by the exes that use it, and a chain is owned jointly by its two exes
 * (freed by markov_free(), by model_remove_exe() or by model_free()).
 */
#include "config.h"

#include "model.h"

#include <math.h>
#include <string.h>

/* ---- maps ---- */

Map *
map_new(const char *path, guint64 offset, guint64 length, gint64 update_time)
{
	Map *map;

	g_return_val_if_fail(path != NULL, NULL);

	map = g_new0(Map, 1);
	map->path = g_strdup(path);
	map->offset = offset;
	map->length = length;
	map->update_time = update_time;
	return map;
}

void
map_free(Map *map)
{
	if (!map)
		return;
	g_free(map->path);
	g_free(map);
}

static void
map_destroy(gpointer map)
{
	map_free(map);
}

guint
map_hash(gconstpointer p)
{
	const Map *map = p;
	guint h = g_str_hash(map->path);

	/*
	 * Many maps share a path (one per mapped segment of a library), so
	 * the offset and length must spread them; fold the high halves in
	 * too, or large files would collide on their low 32 bits.
	 */
	h = h * 31u + (guint)(map->offset ^ (map->offset >> 32));
	h = h * 31u + (guint)(map->length ^ (map->length >> 32));
	return h;
}

gboolean
map_equal(gconstpointer pa, gconstpointer pb)
{
	const Map *a = pa, *b = pb;

	return a->offset == b->offset && a->length == b->length &&
	       strcmp(a->path, b->path) == 0;
}

/* ---- executables ---- */

Exe *
exe_new(const char *path, gboolean running, gint64 now)
{
	Exe *exe;

	g_return_val_if_fail(path != NULL, NULL);

	exe = g_new0(Exe, 1);
	exe->path = g_strdup(path);
	exe->exemaps = g_array_new(FALSE, TRUE, sizeof(ExeMap));
	exe->chains = g_ptr_array_new();
	/*
	 * A running exe was just seen starting; a stopped one has no known
	 * history (the state loader fills update_time from the file).
	 */
	exe->running_timestamp = running ? now : -1;
	exe->change_timestamp = running ? now : -1;
	exe->update_time = running ? now : -1;
	return exe;
}

/*
 * Frees the exe itself. It neither frees its chains (they are shared
 * with the other exe; see model_remove_exe) nor drops its map
 * references, because maps belong to the model, which this does not see.
 */
void
exe_free(Exe *exe)
{
	if (!exe)
		return;
	g_free(exe->path);
	g_array_unref(exe->exemaps);
	g_ptr_array_unref(exe->chains);
	g_free(exe);
}

static void
exe_destroy(gpointer exe)
{
	exe_free(exe);
}

/*
 * Registers map (or finds the equal registered one) and records that exe
 * uses it with probability prob. When an equal map is already registered
 * the passed object, if it is a different unregistered one, is freed: the
 * caller must not use `map` after this call.
 */
void
exe_add_map(Model *model, Exe *exe, Map *map, double prob)
{
	exe_add_map_origin(model, exe, map, prob, EXEMAP_MAPPED);
}

void
exe_add_map_origin(Model *model, Exe *exe, Map *map, double prob, ExeMapOrigin origin)
{
	Map *registered;
	ExeMap em;

	g_return_if_fail(model != NULL);
	g_return_if_fail(exe != NULL);
	g_return_if_fail(map != NULL);

	registered = g_hash_table_lookup(model->maps, map);
	if (!registered) {
		g_hash_table_add(model->maps, map);
		registered = map;
	} else if (registered != map) {
		/* An unregistered object is never referenced by anyone. */
		if (map->refcount == 0)
			map_free(map);
	}

	/* One exe uses a map once: a second use would count its size twice. */
	for (guint i = 0; i < exe->exemaps->len; i++) {
		if (g_array_index(exe->exemaps, ExeMap, i).map == registered)
			return;
	}

	registered->refcount++;
	exe->size += registered->length;
	em.map = registered;
	em.prob = prob;
	em.origin = origin;
	g_array_append_val(exe->exemaps, em);
}

gboolean
exe_is_running(const Model *model, const Exe *exe)
{
	g_return_val_if_fail(model != NULL, FALSE);
	g_return_val_if_fail(exe != NULL, FALSE);

	return exe->running_timestamp >= 0 &&
	       exe->running_timestamp == model->last_running_timestamp;
}

/* ---- chains ---- */

int
markov_current_state(const Model *model, const Markov *markov)
{
	g_return_val_if_fail(markov != NULL, MARKOV_NEITHER);

	return (exe_is_running(model, markov->a) ? MARKOV_A : 0) |
	       (exe_is_running(model, markov->b) ? MARKOV_B : 0);
}

Markov *
markov_new(Model *model, Exe *a, Exe *b, gint64 now, gboolean initialize)
{
	Markov *markov;
	int current;

	g_return_val_if_fail(model != NULL, NULL);
	g_return_val_if_fail(a != NULL && b != NULL, NULL);
	g_return_val_if_fail(a != b, NULL);

	markov = g_new0(Markov, 1);
	markov->a = a;
	markov->b = b;
	g_ptr_array_add(a->chains, markov);
	g_ptr_array_add(b->chains, markov);
	model->n_chains++;

	current = markov_current_state(model, markov);
	markov->state = current;
	markov->change_timestamp = now;
	if (!initialize)
		return markov;

	if (a->change_timestamp >= 0 && b->change_timestamp >= 0 &&
	    a->change_timestamp != b->change_timestamp) {
		/*
		 * Both change times are known and differ: between the earlier
		 * and the later change the pair was in the current state with
		 * the later exe's bit flipped. Start the chain there, at the
		 * earlier time, and record the later change as its first
		 * transition, so a pair learns from the start (or stop) that
		 * brought it into existence. (0.6.4 meant to do this but read
		 * a's time twice, and left loaded chains uninitialised.)
		 */
		gboolean a_later = a->change_timestamp > b->change_timestamp;
		const Exe *later = a_later ? a : b;
		const Exe *earlier = a_later ? b : a;

		markov->state = current ^ (a_later ? MARKOV_A : MARKOV_B);
		markov->change_timestamp = earlier->change_timestamp;
		markov_state_changed(model, markov, later->change_timestamp);
	} else {
		/* Unknown or simultaneous changes: nothing to learn yet. */
		gint64 known = MAX(a->change_timestamp, b->change_timestamp);

		markov->change_timestamp = known >= 0 ? known : now;
	}
	return markov;
}

void
markov_free(Model *model, Markov *markov)
{
	g_return_if_fail(model != NULL);
	if (!markov)
		return;

	g_ptr_array_remove_fast(markov->a->chains, markov);
	g_ptr_array_remove_fast(markov->b->chains, markov);
	if (model->n_chains > 0)
		model->n_chains--;
	g_free(markov);
}

void
markov_state_changed(Model *model, Markov *markov, gint64 now)
{
	int old_state, new_state;
	double sojourn;

	g_return_if_fail(model != NULL);
	g_return_if_fail(markov != NULL);

	/*
	 * Both exes of a pair can change in the same update; the first call
	 * already moved the chain to the pair's final state, so the pair makes
	 * one jump (say 0 -> 3), not two.
	 */
	if (markov->change_timestamp == now)
		return;

	old_state = markov->state;
	new_state = markov_current_state(model, markov);
	/*
	 * An exe that stopped and restarted between two scans looks
	 * unchanged to the pair; that is not a transition, and it must not
	 * restart the sojourn either.
	 */
	if (new_state == old_state)
		return;

	/* A clock that went backwards must not make a negative sojourn. */
	sojourn = now > markov->change_timestamp ?
		  (double)(now - markov->change_timestamp) : 0.0;

	/* The diagonal counts departures; tau is their running mean sojourn. */
	markov->weight[old_state][old_state] += 1;
	markov->time_to_leave[old_state] +=
		(sojourn - markov->time_to_leave[old_state]) /
		markov->weight[old_state][old_state];
	markov->weight[old_state][new_state] += 1;
	markov->state = new_state;
	markov->change_timestamp = now;
}

double
markov_correlation(const Model *model, const Markov *markov)
{
	double t, A, B, X, rho;

	g_return_val_if_fail(model != NULL, 0.0);
	g_return_val_if_fail(markov != NULL, 0.0);

	t = (double)model->time;
	A = markov->a->time;
	B = markov->b->time;
	X = markov->time;

	/*
	 * An exe that never ran, or ran the whole time, has a constant
	 * indicator: its correlation with anything is undefined, and it says
	 * nothing about the other exe, so it counts as 0.
	 */
	if (t <= 0 || A <= 0 || B <= 0 || A >= t || B >= t)
		return 0.0;

	rho = (t * X - A * B) / sqrt(A * B * (t - A) * (t - B));
	/*
	 * Consistent counters give |rho| <= 1; counters restored from an old
	 * or edited state file may not be consistent, which must not abort
	 * the daemon (0.6.4 asserted here).
	 */
	if (isnan(rho))
		return 0.0;
	return CLAMP(rho, -1.0, 1.0);
}

/* ---- the model ---- */

Model *
model_new(void)
{
	Model *model = g_new0(Model, 1);

	/* The key is the exe's own path, freed with the exe. */
	model->exes = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, exe_destroy);
	model->bad_exes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	model->maps = g_hash_table_new_full(map_hash, map_equal, map_destroy, NULL);
	model->running = g_ptr_array_new();
	return model;
}

void
model_free(Model *model)
{
	GPtrArray *chains;
	GHashTableIter iter;
	gpointer value;

	if (!model)
		return;

	/*
	 * Chains are shared by two exes: collect each once, from its a side,
	 * and free them only after the walk, which still reads them from
	 * their b side.
	 */
	chains = g_ptr_array_new_with_free_func(g_free);
	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		Exe *exe = value;

		for (guint i = 0; i < exe->chains->len; i++) {
			Markov *markov = g_ptr_array_index(exe->chains, i);

			if (markov->a == exe)
				g_ptr_array_add(chains, markov);
		}
	}
	g_ptr_array_unref(chains);

	g_ptr_array_unref(model->running);
	g_hash_table_unref(model->exes);
	g_hash_table_unref(model->maps);
	g_hash_table_unref(model->bad_exes);
	g_free(model);
}

Map *
model_lookup_map(const Model *model, const char *path, guint64 offset, guint64 length)
{
	Map key;

	g_return_val_if_fail(model != NULL, NULL);
	g_return_val_if_fail(path != NULL, NULL);

	memset(&key, 0, sizeof(key));
	key.path = (char *)path;
	key.offset = offset;
	key.length = length;
	return g_hash_table_lookup(model->maps, &key);
}

Exe *
model_lookup_exe(const Model *model, const char *path)
{
	g_return_val_if_fail(model != NULL, NULL);
	g_return_val_if_fail(path != NULL, NULL);

	return g_hash_table_lookup(model->exes, path);
}

void
model_add_exe(Model *model, Exe *exe, gint64 now, gboolean create_chains)
{
	g_return_if_fail(model != NULL);
	g_return_if_fail(exe != NULL);
	g_return_if_fail(!g_hash_table_contains(model->exes, exe->path));

	if (create_chains) {
		GHashTableIter iter;
		gpointer value;

		/* Before inserting, so the exe gets no chain with itself. */
		g_hash_table_iter_init(&iter, model->exes);
		while (g_hash_table_iter_next(&iter, NULL, &value))
			markov_new(model, value, exe, now, TRUE);
	}

	g_hash_table_insert(model->exes, exe->path, exe);
	if (exe_is_running(model, exe))
		g_ptr_array_add(model->running, exe);
}

void
model_remove_exe(Model *model, Exe *exe)
{
	g_return_if_fail(model != NULL);
	g_return_if_fail(exe != NULL);
	g_return_if_fail(g_hash_table_lookup(model->exes, exe->path) == exe);

	/* markov_free() removes the chain from this array. */
	while (exe->chains->len > 0)
		markov_free(model, g_ptr_array_index(exe->chains, exe->chains->len - 1));

	for (guint i = 0; i < exe->exemaps->len; i++) {
		Map *map = g_array_index(exe->exemaps, ExeMap, i).map;

		if (--map->refcount <= 0)
			g_hash_table_remove(model->maps, map);  /* frees it */
	}
	g_array_set_size(exe->exemaps, 0);
	exe->size = 0;

	while (g_ptr_array_remove(model->running, exe))
		;
	g_hash_table_remove(model->exes, exe->path);  /* frees exe */
}

void
model_exe_changed(Model *model, Exe *exe, gint64 now)
{
	g_return_if_fail(model != NULL);
	g_return_if_fail(exe != NULL);

	exe->change_timestamp = now;
	for (guint i = 0; i < exe->chains->len; i++)
		markov_state_changed(model, g_ptr_array_index(exe->chains, i), now);
}

void
model_account(Model *model, gint64 now)
{
	GHashTableIter iter;
	gpointer value;
	gint64 period;

	g_return_if_fail(model != NULL);

	period = now - model->last_accounting_timestamp;
	model->last_accounting_timestamp = now;
	if (period <= 0)
		return;

	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		Exe *exe = value;

		if (exe_is_running(model, exe)) {
			exe->time += (double)period;
			exe->update_time = now;
		}
		/*
		 * Every chain appears in two exes' lists; act on it from its
		 * a side only so it is counted once.
		 */
		for (guint i = 0; i < exe->chains->len; i++) {
			Markov *markov = g_ptr_array_index(exe->chains, i);

			if (markov->a == exe &&
			    markov_current_state(model, markov) == MARKOV_BOTH)
				markov->time += (double)period;
		}
	}
}

/* ---- prefetch hits ---- */

static guint64
add_saturating(guint64 a, guint64 b)
{
	return b > G_MAXUINT64 - a ? G_MAXUINT64 : a + b;
}

void
exe_hits_add(ExeHits *hits, guint64 bytes, guint64 prefetched,
	     guint64 probed, guint64 resident)
{
	g_return_if_fail(hits != NULL);

	/* A part cannot exceed its whole; a caller's rounding must not make it. */
	prefetched = MIN(prefetched, bytes);
	probed = MIN(probed, bytes);
	resident = MIN(resident, probed);

	hits->checks = add_saturating(hits->checks, 1);
	hits->bytes = add_saturating(hits->bytes, bytes);
	hits->prefetched = add_saturating(hits->prefetched, prefetched);
	hits->probed = add_saturating(hits->probed, probed);
	hits->resident = add_saturating(hits->resident, resident);
}

double
exe_hits_resident_ratio(const ExeHits *hits)
{
	g_return_val_if_fail(hits != NULL, 0.0);

	return hits->probed > 0 ? (double)MIN(hits->resident, hits->probed) / (double)hits->probed : 0.0;
}

double
exe_hits_prefetched_ratio(const ExeHits *hits)
{
	g_return_val_if_fail(hits != NULL, 0.0);

	return hits->bytes > 0 ? (double)MIN(hits->prefetched, hits->bytes) / (double)hits->bytes : 0.0;
}

static gboolean
bad_exe_expired(gpointer key, gpointer value, gpointer user_data)
{
	const BadExe *bad = value;
	const gint64 *limits = user_data;  /* { now, max_age } */

	(void)key;
	return limits[0] - bad->time > limits[1];
}

void
model_expire_bad_exes(Model *model, gint64 now, gint64 max_age)
{
	gint64 limits[2] = { now, max_age };

	g_return_if_fail(model != NULL);

	g_hash_table_foreach_remove(model->bad_exes, bad_exe_expired, limits);
}
