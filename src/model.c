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
 *
 * Scale. preload 0.6.4 gave every pair of executables a chain the moment
 * the second one appeared, so memory, the state file and every cycle grew
 * with N^2. Here a pair gets a chain only when it has something to learn:
 * when the two run together (and the chain can record how they came to),
 * or when one starts within the follow window after the other stopped
 * (model_link_exe()). A pair without a chain is neutral evidence: it bids
 * nothing, exactly like a chain whose correlation is 0. Until it gets one
 * the pair never ran together, so its "neither" row is known from each
 * exe's start count and running time: a chain made late gets that row as
 * if it had been kept all along (markov_backfill()). Chains are found
 * by pair through the shorter chain list of the two exes (a few dozen
 * at 1,000 exes), the running set is kept
 * (model->running), and the per-cycle functions visit the running exes
 * and their chains instead of the whole model.
 *
 * Aging. With a half-life H, an observation made d seconds of model time
 * ago weighs 2^(-d/H): every count, joint and running time and the total
 * time are multiplied by that factor (model_age(), applied in steps by
 * the spy, once an hour). The correlation is a ratio of products of those
 * times, so it does not move when they all shrink together; the mean
 * sojourn update tau += (d - tau) / W[s][s] then simply gives recent
 * sojourns more weight, because W[s][s] is the aged count. Chains whose
 * counts have faded are dropped, so a pair that stopped happening is
 * eventually forgotten.
 */
#include "config.h"

#include "model.h"

#include <math.h>
#include <string.h>

/* ---- maps ---- */

/*
 * Aged values are rounded to this many significant digits: their shortest
 * decimal form then stays short in the state file, and 1e-7 relative is
 * far below what the counts mean.
 */
#define AGE_DIGITS 7

/*
 * A map's path: its characters after a reference count, so that the
 * maps of one file (a library has one per mapped segment, four or five)
 * can share one copy (map_new_same_file()). The 4-byte count mostly
 * fits in the padding malloc gives a string anyway: GLib's GRefString
 * took 32 bytes more per path, and interning 52, more than sharing
 * saves when few paths repeat.
 */
typedef struct {
	gint refs;
	char path[];
} MapPath;

static char *
map_path_new(const char *path)
{
	gsize len = strlen(path) + 1;
	MapPath *p = g_malloc(offsetof(MapPath, path) + len);

	p->refs = 1;
	memcpy(p->path, path, len);
	return p->path;
}

static MapPath *
map_path_header(char *path)
{
	return (MapPath *)(void *)(path - offsetof(MapPath, path));
}

static Map *
map_alloc(char *path, guint64 offset, guint64 length, gint64 update_time)
{
	Map *map = g_new0(Map, 1);

	map->path = path;
	map->offset = offset;
	map->length = length;
	map->update_time = update_time;
	map->learn.checked = -1;
	return map;
}

Map *
map_new(const char *path, guint64 offset, guint64 length, gint64 update_time)
{
	g_return_val_if_fail(path != NULL, NULL);

	return map_alloc(map_path_new(path), offset, length, update_time);
}

Map *
map_new_same_file(Map *other, guint64 offset, guint64 length, gint64 update_time)
{
	g_return_val_if_fail(other != NULL, NULL);

	g_atomic_int_inc(&map_path_header(other->path)->refs);
	return map_alloc(other->path, offset, length, update_time);
}

void
map_free(Map *map)
{
	MapPath *path;

	if (!map)
		return;
	path = map_path_header(map->path);
	if (g_atomic_int_dec_and_test(&path->refs))
		g_free(path);
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

gboolean
map_file_id_is_known(const MapFileId *id)
{
	g_return_val_if_fail(id != NULL, FALSE);

	/* No real file has inode 0 and mtime 0 on device 0. */
	return id->dev != 0 || id->ino != 0 || id->size != 0 || id->mtime != 0;
}

gboolean
map_file_id_matches(const MapFileId *known, const MapFileId *now)
{
	g_return_val_if_fail(known != NULL && now != NULL, FALSE);

	if (!map_file_id_is_known(known) || !map_file_id_is_known(now))
		return TRUE;
	if (known->dev != now->dev || known->ino != now->ino)
		return FALSE;
	/* An identity from a maps line has no size or time yet. */
	if ((known->size == 0 && known->mtime == 0) || (now->size == 0 && now->mtime == 0))
		return TRUE;
	return known->size == now->size && known->mtime == now->mtime;
}

/* Registers a new map: the hash for lookups, the list for sweeps. */
static void
model_register_map(Model *model, Map *map)
{
	model->ranks_stale = TRUE;
	g_ptr_array_add(model->rank_pending, map);
	map->index = model->map_list->len;
	g_ptr_array_add(model->map_list, map);
	g_hash_table_add(model->maps, map);
}

/* Drops a map nobody uses any more (and frees it). */
static void
model_unregister_map(Model *model, Map *map)
{
	GPtrArray *list = model->map_list;
	guint i = map->index;

	model->ranks_stale = TRUE;
	if (map->rank < model->ranked->len && g_ptr_array_index(model->ranked, map->rank) == map)
		model->ranked->pdata[map->rank] = NULL;
	else
		g_ptr_array_remove_fast(model->rank_pending, map);
	if (i < list->len && g_ptr_array_index(list, i) == map) {
		Map *last = g_ptr_array_index(list, list->len - 1);

		/* Move the last one into the hole: O(1), order does not matter. */
		list->pdata[i] = last;
		last->index = i;
		g_ptr_array_set_size(list, list->len - 1);
	}
	/*
	 * The last scoring's candidates (the maps stamped with it) are reset
	 * by the next one: a freed map must not be among them. Stale maps,
	 * which maintenance drops in bulk, are never candidates.
	 */
	if (map->prophet.score_stamp != 0 && map->prophet.score_stamp == model->score_stamp)
		g_ptr_array_remove_fast(model->candidates, map);
	g_hash_table_remove(model->maps, map);  /* frees it */
}

static gint
compare_map_names(gconstpointer pa, gconstpointer pb)
{
	const Map *a = *(Map *const *)pa;
	const Map *b = *(Map *const *)pb;
	int cmp = strcmp(a->path, b->path);

	if (cmp != 0)
		return cmp;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	if (a->length != b->length)
		return a->length < b->length ? -1 : 1;
	return 0;
}

void
model_rank_maps(Model *model)
{
	g_autoptr(GPtrArray) sorted = NULL;

	g_return_if_fail(model != NULL);

	if (!model->ranks_stale)
		return;
	/*
	 * The new maps sorted by name, then merged with the last order
	 * (leaving out the dropped ones). A full sort by name of 6,000 maps
	 * took 0.4 ms, at every cycle in which a program was learned.
	 */
	g_ptr_array_sort(model->rank_pending, compare_map_names);
	sorted = g_ptr_array_sized_new(model->map_list->len);
	for (guint i = 0, j = 0; i < model->ranked->len || j < model->rank_pending->len;) {
		Map *old = i < model->ranked->len ? g_ptr_array_index(model->ranked, i) : NULL;
		Map *new = j < model->rank_pending->len ? g_ptr_array_index(model->rank_pending, j) : NULL;
		Map *next;

		if (i < model->ranked->len && !old) {
			i++;
			continue;
		}
		if (old && (!new || compare_map_names(&old, &new) <= 0)) {
			next = old;
			i++;
		} else {
			next = new;
			j++;
		}
		next->rank = sorted->len;
		g_ptr_array_add(sorted, next);
	}
	g_ptr_array_set_size(model->rank_pending, 0);
	g_ptr_array_unref(model->ranked);
	model->ranked = g_steal_pointer(&sorted);
	model->ranks_stale = FALSE;
}

/* ---- executables ---- */

/*
 * Room for one more element in an array of *alloc elements of size
 * bytes holding len: grows it by an eighth, at least 4 (ExeMapArray).
 */
static gpointer
array_reserve(gpointer data, guint len, guint *alloc, gsize size)
{
	guint more;

	if (len < *alloc)
		return data;
	more = MAX(4u, len / 8);
	if (more > G_MAXUINT - len)
		g_error("array of %u elements cannot grow", len);
	*alloc = len + more;
	return g_realloc_n(data, *alloc, size);
}

/* Cuts an array to its len elements; NULL when empty. */
static gpointer
array_trim(gpointer data, guint len, guint *alloc, gsize size)
{
	if (len == *alloc)
		return data;
	*alloc = len;
	if (len == 0) {
		g_free(data);
		return NULL;
	}
	return g_realloc_n(data, len, size);
}

static void
exe_append_use(Exe *exe, const ExeMap *em)
{
	ExeMapArray *a = exe->exemaps;

	a->data = array_reserve(a->data, a->len, &a->alloc, sizeof(ExeMap));
	a->data[a->len++] = *em;
}

void
exe_append_succ(Exe *exe, const ExeSucc *succ)
{
	ExeSuccArray *a;

	g_return_if_fail(exe != NULL);
	g_return_if_fail(succ != NULL);

	a = exe->succ;
	a->data = array_reserve(a->data, a->len, &a->alloc, sizeof(ExeSucc));
	a->data[a->len++] = *succ;
}

void
exe_append_handoff(Exe *exe, const ExeHandoff *handoff)
{
	ExeHandoffArray *a;

	g_return_if_fail(exe != NULL);
	g_return_if_fail(handoff != NULL);

	a = exe->handoff;
	a->data = array_reserve(a->data, a->len, &a->alloc, sizeof(ExeHandoff));
	a->data[a->len++] = *handoff;
}

/* Removes handoff i, the later ones moving up one (their order is kept). */
static void
exe_remove_handoff(Exe *exe, guint i)
{
	ExeHandoffArray *a = exe->handoff;

	memmove(&a->data[i], &a->data[i + 1], (a->len - i - 1) * sizeof(ExeHandoff));
	a->len--;
}

/* Removes successor i, the later ones moving up one (their order is kept). */
static void
exe_remove_succ(Exe *exe, guint i)
{
	ExeSuccArray *a = exe->succ;

	memmove(&a->data[i], &a->data[i + 1], (a->len - i - 1) * sizeof(ExeSucc));
	a->len--;
}

/* Removes successor i, the last one moving into its place. */
static void
exe_remove_succ_fast(Exe *exe, guint i)
{
	ExeSuccArray *a = exe->succ;

	a->data[i] = a->data[--a->len];
}

static void
exe_append_chain(Exe *exe, Markov *markov)
{
	ChainArray *a = exe->chains;

	a->pdata = array_reserve(a->pdata, a->len, &a->alloc, sizeof(Markov *));
	a->pdata[a->len++] = markov;
}

/* Removes the chain, moving the last one into its place (order is free). */
static void
exe_remove_chain(Exe *exe, Markov *markov)
{
	ChainArray *a = exe->chains;

	for (guint i = 0; i < a->len; i++) {
		if (a->pdata[i] == markov) {
			a->pdata[i] = a->pdata[--a->len];
			return;
		}
	}
}

static void
exe_compact(Exe *exe)
{
	exe->exemaps->data = array_trim(exe->exemaps->data, exe->exemaps->len,
					&exe->exemaps->alloc, sizeof(ExeMap));
	exe->chains->pdata = array_trim(exe->chains->pdata, exe->chains->len,
					&exe->chains->alloc, sizeof(Markov *));
	exe->succ->data = array_trim(exe->succ->data, exe->succ->len, &exe->succ->alloc,
				     sizeof(ExeSucc));
}

Exe *
exe_new(const char *path, gboolean running, gint64 now)
{
	Exe *exe;

	g_return_val_if_fail(path != NULL, NULL);

	exe = g_new0(Exe, 1);
	exe->path = g_strdup(path);
	/*
	 * A running exe was just seen starting; a stopped one has no known
	 * history (the state loader fills update_time from the file).
	 */
	exe->running_timestamp = running ? now : -1;
	exe->change_timestamp = running ? now : -1;
	exe->prev_change_timestamp = -1;
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
	g_free(exe->exemaps->data);
	g_free(exe->chains->pdata);
	g_free(exe->succ->data);
	g_free(exe->handoff->data);
	g_clear_pointer(&exe->map_set, g_hash_table_unref);
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
gboolean
exe_add_map(Model *model, Exe *exe, Map *map, double prob)
{
	return exe_add_map_origin(model, exe, map, prob, EXEMAP_MAPPED);
}

gboolean
exe_has_map(const Exe *exe, const Map *map)
{
	g_return_val_if_fail(exe != NULL, FALSE);

	if (exe->map_set)
		return g_hash_table_contains(exe->map_set, map);
	for (guint i = 0; i < exe->exemaps->len; i++) {
		if (g_array_index(exe->exemaps, ExeMap, i).map == map)
			return TRUE;
	}
	return FALSE;
}

/* Frees map if nobody holds it: the caller handed it over. */
static void
drop_unregistered(Map *map)
{
	if (map->refcount == 0)
		map_free(map);
}

gboolean
exe_add_map_origin(Model *model, Exe *exe, Map *map, double prob, ExeMapOrigin origin)
{
	Map *registered;
	ExeMap em;

	g_return_val_if_fail(model != NULL, FALSE);
	g_return_val_if_fail(exe != NULL, FALSE);
	g_return_val_if_fail(map != NULL, FALSE);

	/* Only registered maps have references: no lookup needed then. */
	registered = map->refcount > 0 ? map : g_hash_table_lookup(model->maps, map);
	if (registered && registered != map) {
		/* An unregistered object is never referenced by anyone. */
		drop_unregistered(map);
	}

	/* One exe uses a map once: a second use would count its size twice. */
	if (registered && exe_has_map(exe, registered))
		return TRUE;

	/*
	 * The caps refuse rather than evict: eviction frees maps, and the
	 * callers hold maps of other exes while they add (model_trim() makes
	 * room at a point where nothing is held).
	 */
	if ((model->params.max_exe_maps > 0 && exe->exemaps->len >= model->params.max_exe_maps) ||
	    (!registered && model->params.max_maps > 0 &&
	     g_hash_table_size(model->maps) >= model->params.max_maps)) {
		model->evictions.maps_refused++;
		if (!registered)
			drop_unregistered(map);
		return FALSE;
	}
	if (!registered) {
		model_register_map(model, map);
		registered = map;
	}

	registered->refcount++;
	exe->size += registered->length;
	em.map = registered;
	em.prob = (float)prob;
	em.missed = 0;
	em.origin = (guint8)origin;
	exe_append_use(exe, &em);
	if (exe->map_set) {
		g_hash_table_add(exe->map_set, registered);
	} else if (exe->exemaps->len >= EXE_MAP_SET_MIN) {
		exe->map_set = g_hash_table_new(NULL, NULL);
		for (guint i = 0; i < exe->exemaps->len; i++)
			g_hash_table_add(exe->map_set, g_array_index(exe->exemaps, ExeMap, i).map);
	}
	return TRUE;
}

void
exe_remove_map(Model *model, Exe *exe, guint i)
{
	Map *map;

	g_return_if_fail(model != NULL);
	g_return_if_fail(exe != NULL);
	g_return_if_fail(i < exe->exemaps->len);

	map = exe->exemaps->data[i].map;
	/* In order: the state file and the map refresh walk uses in order. */
	memmove(&exe->exemaps->data[i], &exe->exemaps->data[i + 1],
		(exe->exemaps->len - i - 1) * sizeof(ExeMap));
	exe->exemaps->len--;
	if (exe->map_set)
		g_hash_table_remove(exe->map_set, map);
	exe->size -= MIN(exe->size, map->length);
	if (--map->refcount <= 0)
		model_unregister_map(model, map);
}

gboolean
exe_is_constant(const Model *model, const Exe *exe)
{
	g_return_val_if_fail(model != NULL, FALSE);
	g_return_val_if_fail(exe != NULL, FALSE);

	return model->total_time >= MODEL_CONSTANT_MIN_TIME &&
	       exe->time >= MODEL_CONSTANT_SHARE * model->total_time;
}

/* ---- chains ---- */

/* The state the pair (a, b) is in now. */
static int
pair_state(const Model *model, const Exe *a, const Exe *b)
{
	return (exe_is_running(model, a) ? MARKOV_A : 0) |
	       (exe_is_running(model, b) ? MARKOV_B : 0);
}

int
markov_current_state(const Model *model, const Markov *markov)
{
	g_return_val_if_fail(markov != NULL, MARKOV_NEITHER);

	return pair_state(model, markov->a, markov->b);
}

/*
 * What the pair's history says about how it came into its current state:
 * the pair was in `*before` from `*since` until `*when`, when the later of
 * the two exes' changes (or both, if they changed together) brought it to
 * `current`. FALSE when that is not known:
 *   - an exe whose change time is unknown (-1);
 *   - both changed at once and either one's change before that is unknown
 *     (a new exe: it may have been running, unmodelled, before);
 *   - the times are not in order (a clock that went back).
 * The exe that changed later held its previous state since its own
 * previous change, if known; the other one since its last change.
 */
static gboolean
pair_history(const Exe *a, const Exe *b, int current, int *before, gint64 *since,
	     gint64 *when)
{
	gint64 ta = a->change_timestamp, tb = b->change_timestamp;
	gint64 start;

	if (ta < 0 || tb < 0)
		return FALSE;
	if (ta == tb) {
		if (a->prev_change_timestamp < 0 || b->prev_change_timestamp < 0)
			return FALSE;
		*before = current ^ MARKOV_BOTH;
		start = MAX(a->prev_change_timestamp, b->prev_change_timestamp);
		*when = ta;
	} else {
		gboolean a_later = ta > tb;
		const Exe *later = a_later ? a : b;
		const Exe *earlier = a_later ? b : a;

		*before = current ^ (a_later ? MARKOV_A : MARKOV_B);
		/* A new exe's previous change is unknown: it counts as long ago. */
		start = MAX(earlier->change_timestamp, later->prev_change_timestamp);
		*when = later->change_timestamp;
	}
	if (start >= *when)
		return FALSE;
	*since = start;
	return TRUE;
}

/*
 * The starts of e that the chain's first transition, at `when`, records:
 * 1 if e started then and its start was counted in e->starts.
 */
static double
start_recorded(const Model *model, const Exe *e, gint64 when)
{
	return e->change_timestamp == when && e->prev_change_timestamp >= 0 &&
	       exe_is_running(model, e) ? 1.0 : 0.0;
}

/*
 * Gives a chain made late the "neither" row that the chain of the full
 * pairwise model would have learned by now. A pair without a chain never
 * ran together (it would have been linked then; pairs first seen in one
 * scan, constant exes and faded chains aside), so every start of either
 * exe left "neither", and the pair spent in "neither" the time that
 * neither ran: W[0][a] and W[0][b] are the exes' starts, W[0][0] their
 * sum, and tau[0] the time neither ran over that sum.
 *
 * Without it the row holds only what the chain saw since it was made:
 * after a link by following, one departure, to the follower, within
 * `follow` seconds, which bids as if the follower always started soon;
 * after a link by running together, nothing, which bids nothing. How a
 * program ranked then depended on when its chains happened to be made.
 * The other rows (how one reacts to the other running) are left to what
 * the chain sees from now on.
 *
 * `recorded`: the chain's first transition (at `when`) is about to be
 * recorded, and the start it holds must not be counted twice.
 */
static void
markov_backfill(Model *model, Markov *markov, gint64 when, gboolean recorded)
{
	double sa = markov->a->starts, sb = markov->b->starts, neither;

	if (recorded) {
		sa -= start_recorded(model, markov->a, when);
		sb -= start_recorded(model, markov->b, when);
	}
	sa = MAX(sa, 0.0);
	sb = MAX(sb, 0.0);
	if (!(sa + sb > 0))
		return;
	markov->weight[MARKOV_NEITHER][MARKOV_A] = (float)sa;
	markov->weight[MARKOV_NEITHER][MARKOV_B] = (float)sb;
	markov->weight[MARKOV_NEITHER][MARKOV_NEITHER] = (float)(sa + sb);
	/* Up to the last accounting; markov->time is what they shared. */
	neither = model->total_time - markov->a->time - markov->b->time + markov->time;
	markov->time_to_leave[MARKOV_NEITHER] = (float)(MAX(neither, 0.0) / (sa + sb));
}

/* What eviction leaves when a cap is reached: room for a sixteenth of it. */
static guint
evict_target(guint cap)
{
	return cap - MAX(cap / MODEL_EVICT_SHARE, 1);
}

/* A chain's worth for eviction: its heaviest count, as model_age() judges it. */
static double
chain_heaviest(const Markov *markov)
{
	double heaviest = 0;

	for (int s = 0; s < 4; s++)
		for (int t = 0; t < 4; t++)
			heaviest = MAX(heaviest, markov->weight[s][t]);
	return heaviest;
}

typedef struct {
	Markov *markov;
	gboolean both;        /* its pair both run: evicted last */
	double heaviest;
} ChainRank;

static gint
compare_chain_rank(gconstpointer pa, gconstpointer pb)
{
	const ChainRank *x = pa, *y = pb;

	if (x->both != y->both)
		return x->both ? 1 : -1;
	if (x->heaviest != y->heaviest)
		return x->heaviest < y->heaviest ? -1 : 1;
	if (x->markov->change_timestamp != y->markov->change_timestamp)
		return x->markov->change_timestamp < y->markov->change_timestamp ? -1 : 1;
	/* A total order, so that a replay evicts the same chains. */
	{
		int c = strcmp(x->markov->a->path, y->markov->a->path);

		return c ? c : strcmp(x->markov->b->path, y->markov->b->path);
	}
}

/*
 * A zeroed slot for a new chain: the last one freed, or the next never
 * used, in a new block when the last is full.
 */
static Markov *
chain_slot_take(Model *model)
{
	Markov *m = model->chain_free;

	if (m) {
		model->chain_free = m->next_free;
	} else {
		guint block = model->chain_slots / MODEL_CHAIN_BLOCK;

		if (block == model->n_chain_blocks) {
			model->chain_blocks = g_renew(Markov *, model->chain_blocks, block + 1);
			model->chain_blocks[block] = g_new(Markov, MODEL_CHAIN_BLOCK);
			model->n_chain_blocks++;
		}
		m = &model->chain_blocks[block][model->chain_slots % MODEL_CHAIN_BLOCK];
		model->chain_slots++;
	}
	memset(m, 0, sizeof(*m));
	return m;
}

/* Gives a freed chain's slot back; a NULL a marks it free for model_next_chain(). */
static void
chain_slot_give(Model *model, Markov *m)
{
	m->a = NULL;
	m->next_free = model->chain_free;
	model->chain_free = m;
}

/* Frees the least valuable chains until at most target are left. */
static void
evict_chains(Model *model, guint target)
{
	g_autoptr(GArray) ranks = NULL;
	Markov *markov;

	if (model->n_chains <= target)
		return;
	ranks = g_array_sized_new(FALSE, FALSE, sizeof(ChainRank), model->n_chains);
	for (guint pos = 0; (markov = model_next_chain(model, &pos));) {
		ChainRank r;

		r.markov = markov;
		r.both = markov_current_state(model, r.markov) == MARKOV_BOTH;
		r.heaviest = chain_heaviest(r.markov);
		g_array_append_val(ranks, r);
	}
	g_array_sort(ranks, compare_chain_rank);
	for (guint i = 0; i < ranks->len && model->n_chains > target; i++) {
		markov_free(model, g_array_index(ranks, ChainRank, i).markov);
		model->evictions.chains++;
	}
}

Markov *
markov_new(Model *model, Exe *a, Exe *b, gint64 now, MarkovStart start)
{
	Markov *markov;
	int current, before;
	gint64 since, when;
	gboolean known;

	g_return_val_if_fail(model != NULL, NULL);
	g_return_val_if_fail(a != NULL && b != NULL, NULL);
	g_return_val_if_fail(a != b, NULL);

	/* A pair has one chain. */
	g_return_val_if_fail(model_lookup_chain(model, a, b) == NULL, NULL);

	if (model->params.max_chains > 0 && model->n_chains >= model->params.max_chains)
		evict_chains(model, evict_target(model->params.max_chains));

	markov = chain_slot_take(model);
	markov->a = a;
	markov->b = b;
	exe_append_chain(a, markov);
	exe_append_chain(b, markov);
	model->n_chains++;

	current = markov_current_state(model, markov);
	markov->state = current;
	markov->change_timestamp = now;
	if (start == MARKOV_START_BLANK)
		return markov;

	/*
	 * Two exes that ran A and B seconds of a total t ran together at least
	 * A + B - t of them. A chain made late (sparse chains) starts there
	 * rather than at 0, which would read as a strong anti-correlation of
	 * two exes that both run most of the time.
	 */
	markov->time = MAX(0.0, a->time + b->time - model->total_time);

	known = pair_history(a, b, current, &before, &since, &when);
	if (start == MARKOV_START_BACKFILLED)
		markov_backfill(model, markov, known ? when : now, known);
	if (known) {
		/*
		 * Start the chain where the pair was before its latest change,
		 * and record that change as its first transition, so a pair
		 * learns from the start (or stop) that brought it into
		 * existence. (0.6.4 meant to do this but read a's time twice,
		 * and left loaded chains uninitialised.)
		 */
		markov->state = before;
		markov->change_timestamp = since;
		markov_state_changed(model, markov, when);
	} else {
		/* Unknown or simultaneous changes: nothing to learn yet. */
		gint64 latest = MAX(a->change_timestamp, b->change_timestamp);

		markov->change_timestamp = latest >= 0 ? latest : now;
	}
	return markov;
}

void
markov_free(Model *model, Markov *markov)
{
	g_return_if_fail(model != NULL);
	if (!markov)
		return;

	exe_remove_chain(markov->a, markov);
	exe_remove_chain(markov->b, markov);
	if (model->n_chains > 0)
		model->n_chains--;
	chain_slot_give(model, markov);
}

void
markov_state_changed(Model *model, Markov *markov, gint64 now)
{
	int old_state, new_state;
	double sojourn, departures, tau;

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

	/*
	 * The diagonal counts departures; tau is their running mean sojourn.
	 * With aging W[s][s] is the aged count, so recent sojourns weigh more.
	 */
	departures = (double)markov->weight[old_state][old_state] + 1;
	tau = markov->time_to_leave[old_state];
	markov->weight[old_state][old_state] = (float)departures;
	markov->time_to_leave[old_state] = (float)(tau + (sojourn - tau) / departures);
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

	/*
	 * All four are aged alike (model_age()), and rho is a ratio of
	 * products of two of them over the same, so aging leaves it as the
	 * correlation over the recent past.
	 */
	t = model->total_time;
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
	model->map_list = g_ptr_array_new();
	model->ranked = g_ptr_array_new();
	model->rank_pending = g_ptr_array_new();
	model->running = g_ptr_array_new();
	model->stopped = g_ptr_array_new();
	model->scored_exes = g_ptr_array_new();
	model->candidates = g_ptr_array_new();
	model->quiet_exes = g_ptr_array_new();
	model->bad_exes_oldest = G_MININT64;
	model->freq_weight = MODEL_FREQ_WEIGHT;
	return model;
}

void
model_free(Model *model)
{
	if (!model)
		return;

	/* Chains are shared by two exes; the blocks hold each once. */
	for (guint i = 0; i < model->n_chain_blocks; i++)
		g_free(model->chain_blocks[i]);
	g_free(model->chain_blocks);

	g_ptr_array_unref(model->running);
	g_ptr_array_unref(model->stopped);
	g_ptr_array_unref(model->scored_exes);
	g_ptr_array_unref(model->candidates);
	g_ptr_array_unref(model->quiet_exes);
	g_hash_table_unref(model->exes);
	g_ptr_array_unref(model->map_list);
	g_ptr_array_unref(model->ranked);
	g_ptr_array_unref(model->rank_pending);
	g_hash_table_unref(model->maps);
	g_hash_table_unref(model->bad_exes);
	g_free(model);
}

void
model_set_params(Model *model, const ModelParams *params)
{
	g_return_if_fail(model != NULL);
	g_return_if_fail(params != NULL);

	model->params = *params;
	model->params.halflife = MAX(model->params.halflife, 0);
	model->params.follow = MAX(model->params.follow, 0);
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

Markov *
model_lookup_chain(const Model *model, const Exe *a, const Exe *b)
{
	const ChainArray *list;

	g_return_val_if_fail(model != NULL, NULL);
	g_return_val_if_fail(a != NULL && b != NULL, NULL);

	list = a->chains->len <= b->chains->len ? a->chains : b->chains;
	for (guint i = 0; i < list->len; i++) {
		Markov *m = list->pdata[i];

		if ((m->a == a && m->b == b) || (m->a == b && m->b == a))
			return m;
	}
	return NULL;
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
			markov_new(model, value, exe, now, MARKOV_START_OBSERVED);
	}

	g_hash_table_insert(model->exes, exe->path, exe);
	if (exe_is_running(model, exe))
		g_ptr_array_add(model->running, exe);
}

/* No exe's successors or handoffs, nor the last start, may name exe any more. */
static void
forget_successor(Model *model, Exe *exe)
{
	GHashTableIter iter;
	gpointer value;

	if (model->last_start == exe)
		model->last_start = NULL;
	if (model->free_start == exe)
		model->free_start = NULL;
	if (g_ptr_array_remove(model->quiet_exes, exe))
		model->quiet_total = MAX(model->quiet_total - exe->quiet_starts, 0);
	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		Exe *other = value;

		for (guint i = 0; i < other->succ->len; i++) {
			if (g_array_index(other->succ, ExeSucc, i).next == exe) {
				other->succ_total -= g_array_index(other->succ, ExeSucc, i).count;
				other->succ_total = MAX(other->succ_total, 0);
				exe_remove_succ_fast(other, i);
				break;
			}
		}
		for (guint i = 0; i < other->handoff->len; i++) {
			if (g_array_index(other->handoff, ExeHandoff, i).next == exe) {
				other->handoff->data[i] = other->handoff->data[other->handoff->len - 1];
				other->handoff->len--;
				break;
			}
		}
	}
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

	while (exe->exemaps->len > 0)
		exe_remove_map(model, exe, exe->exemaps->len - 1);
	exe->size = 0;

	/* No list may keep a pointer to it. */
	while (g_ptr_array_remove(model->running, exe))
		;
	while (g_ptr_array_remove(model->stopped, exe))
		;
	while (g_ptr_array_remove(model->scored_exes, exe))
		;
	forget_successor(model, exe);
	g_hash_table_remove(model->exes, exe->path);  /* frees exe */
}

/* ---- caps ---- */

static gint
compare_exe_value(gconstpointer pa, gconstpointer pb)
{
	const Exe *x = *(Exe *const *)pa, *y = *(Exe *const *)pb;

	if (x->update_time != y->update_time)
		return x->update_time < y->update_time ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return strcmp(x->path, y->path);
}

/*
 * Removes the least valuable exes that do not run until at most max_exes
 * exes and max_maps registered maps are left, or none is left to evict.
 * Returns how many it removed.
 */
static guint
evict_exes(Model *model, guint max_exes, guint max_maps)
{
	g_autoptr(GPtrArray) victims = NULL;
	GHashTableIter iter;
	gpointer value;
	guint evicted = 0;

	if (g_hash_table_size(model->exes) <= max_exes && g_hash_table_size(model->maps) <= max_maps)
		return 0;
	victims = g_ptr_array_new();
	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		if (!exe_is_running(model, value))
			g_ptr_array_add(victims, value);
	}
	g_ptr_array_sort(victims, compare_exe_value);
	for (guint i = 0; i < victims->len; i++) {
		if (g_hash_table_size(model->exes) <= max_exes &&
		    g_hash_table_size(model->maps) <= max_maps)
			break;
		model_remove_exe(model, g_ptr_array_index(victims, i));
		evicted++;
	}
	model->evictions.exes += evicted;
	return evicted;
}

gboolean
model_make_room_for_exe(Model *model)
{
	guint cap;

	g_return_val_if_fail(model != NULL, FALSE);

	cap = model->params.max_exes;
	if (cap == 0 || g_hash_table_size(model->exes) < cap)
		return TRUE;
	evict_exes(model, evict_target(cap), G_MAXUINT);
	if (g_hash_table_size(model->exes) < cap)
		return TRUE;
	model->evictions.exes_refused++;
	return FALSE;
}

guint
model_trim(Model *model)
{
	const ModelParams *p;
	guint evicted;

	g_return_val_if_fail(model != NULL, 0);

	p = &model->params;
	evicted = evict_exes(model, p->max_exes > 0 ? p->max_exes : G_MAXUINT,
			     p->max_maps > 0 ? evict_target(p->max_maps) : G_MAXUINT);
	if (p->max_chains > 0 && model->n_chains > p->max_chains)
		evict_chains(model, p->max_chains);
	return evicted;
}

void
model_compact(Model *model)
{
	GHashTableIter iter;
	gpointer value;

	g_return_if_fail(model != NULL);

	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		exe_compact(value);
}

/* Forgets stops older than the follow window, and exes running again. */
static void
prune_stopped(Model *model, gint64 now)
{
	GPtrArray *stopped = model->stopped;
	guint kept = 0;

	for (guint i = 0; i < stopped->len; i++) {
		Exe *exe = g_ptr_array_index(stopped, i);

		if (exe_is_running(model, exe) ||
		    exe->change_timestamp < now - model->params.follow)
			continue;
		stopped->pdata[kept++] = exe;
	}
	g_ptr_array_set_size(stopped, kept);
}

void
model_link_exe(Model *model, Exe *exe, gint64 now)
{
	gboolean constant;
	guint first;

	g_return_if_fail(model != NULL);
	g_return_if_fail(exe != NULL);

	if (!exe_is_running(model, exe))
		return;

	/*
	 * Running together. A chain created now must be able to record the
	 * transition that made the pair run together; if neither change time
	 * says how (both exes just appeared), the pair waits for its next
	 * change, or else every first scan would chain every pair it sees.
	 * An exe that (almost) always runs tells nothing about when another
	 * starts: its correlation with anything is about 0, so with
	 * skip_constant its pairs get no chain at all.
	 */
	constant = model->params.skip_constant && exe_is_constant(model, exe);
	for (guint i = 0; !constant && i < model->running->len; i++) {
		Exe *other = g_ptr_array_index(model->running, i);
		int before;
		gint64 since, when;

		if (other == exe || model_lookup_chain(model, other, exe))
			continue;
		if (model->params.skip_constant && exe_is_constant(model, other))
			continue;

		if (!pair_history(other, exe, pair_state(model, other, exe),
				  &before, &since, &when))
			continue;
		markov_new(model, other, exe, now, MARKOV_START_BACKFILLED);
	}

	/*
	 * Following one another: exe started at most `follow` seconds after
	 * the other stopped, and nothing else stopped in between but at most
	 * one other scan's worth: the exes of the last MODEL_FOLLOW_STOPS
	 * stops (a stop may end several exes at once, a logout for one).
	 * That is information even when the chain has no transition to record
	 * yet (the stop and the start were seen by the same scan and one of
	 * them is new). Counting stops rather than exes keeps what ended
	 * together together, and bounds the chains a start can make however
	 * busy the machine is.
	 */
	prune_stopped(model, now);
	first = model->stopped->len;
	{
		gint64 stop = G_MININT64;
		guint stops = 0;

		/* The list is in stop order: walk back over the last stops. */
		for (; first > 0; first--) {
			const Exe *other = g_ptr_array_index(model->stopped, first - 1);

			if (other->change_timestamp != stop) {
				if (stops == MODEL_FOLLOW_STOPS)
					break;
				stops++;
				stop = other->change_timestamp;
			}
		}
	}
	for (guint i = first; i < model->stopped->len; i++) {
		Exe *other = g_ptr_array_index(model->stopped, i);

		if (other == exe || model_lookup_chain(model, other, exe))
			continue;
		markov_new(model, other, exe, now, MARKOV_START_BACKFILLED);
	}
}

/*
 * The index of exe's successor with the smallest share of its chances
 * (the bid it makes, see prophet_bid_successors()); the fewer starts
 * among equal shares; the first among equal ones.
 */
static guint
weakest_successor(const Exe *exe)
{
	guint weakest = 0;
	double weakest_share = G_MAXDOUBLE;
	float weakest_count = G_MAXFLOAT;

	for (guint i = 0; i < exe->succ->len; i++) {
		const ExeSucc *s = &g_array_index(exe->succ, ExeSucc, i);
		double share = (double)s->count / ((double)s->chances + 1);

		if (share < weakest_share || (share == weakest_share && s->count < weakest_count)) {
			weakest = i;
			weakest_share = share;
			weakest_count = s->count;
		}
	}
	return weakest;
}

/*
 * Counts exe as a start that followed prev. Every successor of prev that
 * is stopped (or starting) now had the chance to be this start: a
 * program that runs cannot start, and the share of prev's successions
 * it takes when it can is what predicts it.
 */
static void
add_successor(Model *model, Exe *prev, Exe *const *starts, guint n)
{
	for (guint i = 0; i < prev->succ->len; i++) {
		ExeSucc *s = &g_array_index(prev->succ, ExeSucc, i);
		gboolean starting = FALSE;

		for (guint k = 0; k < n; k++)
			starting |= starts[k] == s->next;
		if (starting) {
			s->count += 1;
			s->chances += 1;
		} else if (!exe_is_running(model, s->next)) {
			s->chances += 1;
		}
	}
	for (guint k = 0; k < n; k++) {
		gboolean known = starts[k] == prev;

		for (guint i = 0; i < prev->succ->len && !known; i++)
			known = g_array_index(prev->succ, ExeSucc, i).next == starts[k];
		if (known)
			continue;
		/* The new one is evidence; the weakest old one makes room for it. */
		if (prev->succ->len >= MODEL_MAX_SUCCESSORS)
			exe_remove_succ(prev, weakest_successor(prev));
		/* Its earlier chances are not known: as many as prev's successions. */
		exe_append_succ(prev, &(ExeSucc){ starts[k], 1, (float)prev->succ_total + 1 });
	}
	prev->succ_total += 1;
}

gboolean
model_is_habit(const Exe *prev, const Exe *next)
{
	g_return_val_if_fail(prev != NULL, FALSE);
	g_return_val_if_fail(next != NULL, FALSE);

	for (guint i = 0; i < prev->succ->len; i++) {
		const ExeSucc *s = &g_array_index(prev->succ, ExeSucc, i);

		if (s->next == next)
			return s->count >= MODEL_HABIT_MIN_COUNT &&
			       s->count >= MODEL_HABIT_SHARE * (s->chances + 1);
	}
	return FALSE;
}

gboolean
model_is_handoff_habit(const Exe *from, const ExeHandoff *h)
{
	g_return_val_if_fail(from != NULL, FALSE);
	g_return_val_if_fail(h != NULL, FALSE);

	return h->count >= 1 && h->count >= MODEL_HABIT_SHARE * (from->stops + 1);
}

/* Whether exe stopped in the scan at now (it is listed from its stop until the next prune). */
static gboolean
stopped_at(const Model *model, const Exe *exe, gint64 now)
{
	return exe->change_timestamp == now && !exe_is_running(model, exe);
}

/* The index of the handoff of from to next, or -1. */
static int
find_handoff(const Exe *from, const Exe *next)
{
	for (guint i = 0; i < from->handoff->len; i++)
		if (g_array_index(from->handoff, ExeHandoff, i).next == next)
			return (int)i;
	return -1;
}

/* y started (or was first seen) at now: a handoff of every exe that stopped then. */
static void
note_handoff(Model *model, Exe *y, gint64 now)
{
	for (guint k = 0; k < model->stopped->len; k++) {
		Exe *x = g_ptr_array_index(model->stopped, k);
		guint weakest = 0;
		int i;

		if (x == y || !stopped_at(model, x, now))
			continue;
		i = find_handoff(x, y);
		if (i >= 0) {
			g_array_index(x->handoff, ExeHandoff, i).count += 1;
			continue;
		}
		if (x->handoff->len >= MODEL_MAX_HANDOFFS) {
			for (guint j = 1; j < x->handoff->len; j++)
				if (g_array_index(x->handoff, ExeHandoff, j).count <
				    g_array_index(x->handoff, ExeHandoff, weakest).count)
					weakest = j;
			exe_remove_handoff(x, weakest);
		}
		exe_append_handoff(x, &(ExeHandoff){ y, 1 });
	}
}

/*
 * Whether the start of y at now is kept out of the order of starts
 * (model.h): a habitual handoff of an exe that stopped then, or the head
 * of a run of handoffs.
 */
static gboolean
is_handed_off(const Model *model, const Exe *y, gint64 now)
{
	for (guint k = 0; k < model->stopped->len; k++) {
		const Exe *x = g_ptr_array_index(model->stopped, k);
		double count;
		int i;

		if (x == y || !stopped_at(model, x, now))
			continue;
		i = find_handoff(x, y);
		if (i < 0)
			continue;
		/*
		 * Judged by the stops before this one, as the bid that foretold
		 * it: x->stops counts this one already, so (stops - 1) + 1.
		 */
		count = g_array_index(x->handoff, ExeHandoff, i).count;
		if (count >= 1 && count >= MODEL_HABIT_SHARE * x->stops)
			return TRUE;
	}
	for (guint i = 0; i < y->handoff->len; i++) {
		const ExeHandoff *h = &g_array_index(y->handoff, ExeHandoff, i);

		if (h->count >= MODEL_HABIT_MIN_COUNT && model_is_handoff_habit(y, h))
			return TRUE;
	}
	return FALSE;
}

void
model_exe_first_seen(Model *model, Exe *exe, gint64 now)
{
	g_return_if_fail(model != NULL);
	g_return_if_fail(exe != NULL);

	note_handoff(model, exe, now);
}

/*
 * The order of starts: each start of this scan follows the exe that
 * started last before it. Programs launched one after the other (by a
 * user's habit, by a script) show in this order even when they never
 * run together and whatever else runs.
 */
static void
note_starts(Model *model, Exe *const *starts, guint n, gint64 now)
{
	Exe *prev = model->last_start;
	double quiet = model_quiet(model);

	if (n == 0)
		return;
	if (prev && quiet > 0 && (double)(now - model->last_start_time) >= quiet) {
		model->quiet_gaps += (double)(now - model->last_start_time) - quiet;
		model->n_quiet_gaps += 1;
		for (guint i = 0; i < n; i++) {
			if (!(starts[i]->quiet_starts > 0))
				g_ptr_array_add(model->quiet_exes, starts[i]);
			starts[i]->quiet_starts += 1;
			model->quiet_total += 1;
		}
		model->free_start = starts[n - 1];
	} else if (prev) {
		/* Before the counts below: a start is judged by the habits it found. */
		for (guint i = 0; i < n; i++)
			if (!model_is_habit(prev, starts[i]))
				model->free_start = starts[i];
		add_successor(model, prev, starts, n);
		model->soon_gaps += (double)(now - model->last_start_time);
		model->n_soon_gaps += 1;
	}
	if (prev) {
		model->start_gaps += (double)(now - model->last_start_time);
		model->n_start_gaps += 1;
	}
	model->n_starts += n;
	model->last_start = starts[n - 1];
	model->last_start_time = now;
}

/*
 * Moves the frequency expert's weight by the starts of this scan, from the
 * shares the last scoring left on them (model.h, MODEL_FREQ_STEP). A start
 * of an exe without maps is left out: nothing was predicted for it (the
 * replay does not score the cycles before such starts).
 */
static void
note_experts(Model *model, Exe *const *starts, guint n)
{
	for (guint i = 0; i < n; i++) {
		const Exe *exe = starts[i];
		double w = model->freq_weight, m, f, r;

		if (exe->expert_stamp != model->score_stamp || exe->exemaps->len == 0)
			continue;
		m = exe->expert_model;
		f = exe->expert_freq;
		if (!(w * f + (1 - w) * m > 0))
			continue;
		/* r: the frequency expert's share of the mixture's probability of this start. */
		r = w * f / (w * f + (1 - w) * m);
		w += MODEL_FREQ_STEP * (r - w);
		model->freq_weight = CLAMP(w, MODEL_FREQ_MIN, 1 - MODEL_FREQ_MIN);
	}
}

double
model_quiet(const Model *model)
{
	g_return_val_if_fail(model != NULL, 0);

	if (model->n_start_gaps < MODEL_QUIET_MIN_GAPS)
		return 0;
	return 2 * model->start_gaps / model->n_start_gaps;
}

void
model_exes_changed(Model *model, Exe *const *exes, guint n, gint64 now)
{
	g_autofree Exe **started = NULL;
	g_autofree Exe **ordered = NULL;
	guint n_started = 0, n_ordered = 0;

	g_return_if_fail(model != NULL);
	g_return_if_fail(exes != NULL || n == 0);

	/* 1. Change times, so that the chains made below see all of them. */
	for (guint i = 0; i < n; i++) {
		Exe *exe = exes[i];

		if (exe->change_timestamp == now)
			continue;  /* listed twice: changed once */
		exe->prev_change_timestamp = exe->change_timestamp;
		exe->change_timestamp = now;
		if (exe_is_running(model, exe)) {
			/*
			 * A start, if this model saw it stopped before: not the
			 * first sight of a program that may have run for long.
			 */
			if (exe->prev_change_timestamp >= 0) {
				exe->starts += 1;
				if (!started)
					started = g_new(Exe *, n);
				started[n_started++] = exe;
			}
		} else {
			prune_stopped(model, now);
			g_ptr_array_add(model->stopped, exe);
			exe->stops += 1;
			if (exe->prev_change_timestamp >= 0)
				exe->run_time += (double)(now - exe->prev_change_timestamp);
		}
	}
	if (n_started > 0) {
		note_experts(model, started, n_started);
		/* Judged by the handoffs known before this scan's are counted. */
		ordered = g_new(Exe *, n_started);
		for (guint i = 0; i < n_started; i++)
			if (!is_handed_off(model, started[i], now))
				ordered[n_ordered++] = started[i];
		for (guint i = 0; i < n_started; i++)
			note_handoff(model, started[i], now);
	}
	note_starts(model, ordered, n_ordered, now);
	/* 2. The chains the exes have record the transitions. */
	for (guint i = 0; i < n; i++) {
		Exe *exe = exes[i];

		for (guint j = 0; j < exe->chains->len; j++)
			markov_state_changed(model, g_ptr_array_index(exe->chains, j), now);
	}
	/* 3. Those that started get the chains they now have a reason for. */
	for (guint i = 0; i < n; i++)
		model_link_exe(model, exes[i], now);
}

void
model_exe_changed(Model *model, Exe *exe, gint64 now)
{
	g_return_if_fail(exe != NULL);

	model_exes_changed(model, &exe, 1, now);
}

/* Adds period to one chain whose pair both run, once per accounting. */
static void
account_chain(Model *model, Markov *markov, double period)
{
	if (markov->stamp == model->account_stamp)
		return;
	markov->stamp = model->account_stamp;
	markov->time += period;
}

void
model_account(Model *model, gint64 now)
{
	GPtrArray *running;
	gint64 period;

	g_return_if_fail(model != NULL);

	period = now - model->last_accounting_timestamp;
	model->last_accounting_timestamp = now;
	if (period <= 0)
		return;

	model->total_time += (double)period;
	model->account_stamp++;
	running = model->running;
	for (guint i = 0; i < running->len; i++) {
		Exe *exe = g_ptr_array_index(running, i);

		exe->time += (double)period;
		exe->update_time = now;
	}

	/*
	 * The chains whose pair both run: from each running exe, through its
	 * own chains or through the pairs it forms with the other running
	 * exes, whichever takes fewer steps. A lookup walks the shorter chain
	 * list of its pair (model_lookup_chain()), so the steps of an exe's
	 * lookups are counted before they are made: a daemon chained with
	 * thousands of exes costs a short walk per other running exe, while
	 * running exes that all have long lists walk their own. A chain met
	 * from both sides is counted once (its stamp).
	 */
	for (guint i = 0; i < running->len; i++) {
		Exe *exe = g_ptr_array_index(running, i);
		guint own = exe->chains->len, lookups = 0;

		for (guint j = 0; own > running->len && j < running->len; j++) {
			const Exe *other = g_ptr_array_index(running, j);

			lookups += MAX(1, MIN(own, other->chains->len));
		}
		if (own <= running->len || own <= lookups) {
			for (guint j = 0; j < own; j++) {
				Markov *markov = g_ptr_array_index(exe->chains, j);
				Exe *other = markov->a == exe ? markov->b : markov->a;

				if (exe_is_running(model, other))
					account_chain(model, markov, (double)period);
			}
		} else {
			for (guint j = 0; j < running->len; j++) {
				Exe *other = g_ptr_array_index(running, j);
				Markov *markov;

				if (other == exe)
					continue;
				markov = model_lookup_chain(model, exe, other);
				if (markov)
					account_chain(model, markov, (double)period);
			}
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

/*
 * v rounded to AGE_DIGITS significant digits: the double nearest to that
 * decimal, computed as an integer times or over an exact power of ten
 * (exact up to 10^22), so its shortest decimal form has at most
 * AGE_DIGITS digits.
 */
static double
age_round(double v)
{
	static const double pow10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
	};
	int shift;

	if (v == 0 || !isfinite(v))
		return v;
	/* Digits to keep after the decimal point (negative: before it). */
	shift = AGE_DIGITS - 1 - (int)floor(log10(fabs(v)));
	if (shift >= 0 && shift <= 22)
		return round(v * pow10[shift]) / pow10[shift];
	if (shift < 0 && -shift <= 22)
		return round(v / pow10[-shift]) * pow10[-shift];
	return v;  /* tiny or huge: leave it */
}

double
model_age_value(double v, gint64 elapsed, gint64 halflife)
{
	g_return_val_if_fail(halflife > 0, v);

	return age_round(v * exp2(-(double)elapsed / (double)halflife));
}

/*
 * The order of starts ages like the chains: exe's successions, its
 * successors' counts and chances, its starts after a quiet spell. A
 * successor whose count faded below MODEL_FADED_WEIGHT is forgotten, and
 * so is a session opener (a quiet start) that faded.
 */
static void
age_successors(Model *model, Exe *exe, double factor)
{
	exe->succ_total = age_round(exe->succ_total * factor);
	for (guint i = 0; i < exe->succ->len;) {
		ExeSucc *s = &g_array_index(exe->succ, ExeSucc, i);

		s->count = (float)age_round(s->count * factor);
		s->chances = (float)age_round(s->chances * factor);
		if (s->count < MODEL_FADED_WEIGHT)
			exe_remove_succ(exe, i);
		else
			i++;
	}
	if (!(exe->quiet_starts > 0))
		return;
	exe->quiet_starts = age_round(exe->quiet_starts * factor);
	if (exe->quiet_starts < MODEL_FADED_WEIGHT) {
		/* What it adds to quiet_total is aged away with it. */
		exe->quiet_starts = 0;
		g_ptr_array_remove(model->quiet_exes, exe);
	}
}

guint
model_age(Model *model, gint64 now)
{
	g_autoptr(GPtrArray) faded = NULL;
	GHashTableIter iter;
	gpointer key;
	Markov *markov;
	gint64 elapsed, halflife;
	double factor;

	g_return_val_if_fail(model != NULL, 0);

	elapsed = now - model->aged_time;
	halflife = model->params.halflife;
	if (halflife <= 0 || elapsed <= 0) {
		/* Without aging nothing is owed: a later half-life starts now. */
		if (halflife <= 0 || elapsed < 0)
			model->aged_time = now;
		return 0;
	}
	model->aged_time = now;
	factor = exp2(-(double)elapsed / (double)halflife);

	model->total_time = age_round(model->total_time * factor);
	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &key)) {
		Exe *exe = key;

		exe->time = age_round(exe->time * factor);
		exe->starts = age_round(exe->starts * factor);
		age_successors(model, exe, factor);
	}
	model->quiet_total = age_round(model->quiet_total * factor);
	model->start_gaps = age_round(model->start_gaps * factor);
	model->n_start_gaps = age_round(model->n_start_gaps * factor);
	model->soon_gaps = age_round(model->soon_gaps * factor);
	model->n_soon_gaps = age_round(model->n_soon_gaps * factor);
	model->quiet_gaps = age_round(model->quiet_gaps * factor);
	model->n_quiet_gaps = age_round(model->n_quiet_gaps * factor);

	faded = g_ptr_array_new();
	for (guint pos = 0; (markov = model_next_chain(model, &pos));) {
		double heaviest = 0;

		markov->time = age_round(markov->time * factor);
		for (int s = 0; s < 4; s++) {
			markov->time_to_leave[s] = (float)age_round(markov->time_to_leave[s]);
			for (int t = 0; t < 4; t++) {
				markov->weight[s][t] = (float)age_round(markov->weight[s][t] * factor);
				heaviest = MAX(heaviest, markov->weight[s][t]);
			}
		}
		/*
		 * A pair that both run will record a transition when one stops;
		 * any other pair whose evidence has faded is forgotten until it
		 * runs together or follows again.
		 */
		if (heaviest < MODEL_FADED_WEIGHT &&
		    markov_current_state(model, markov) != MARKOV_BOTH)
			g_ptr_array_add(faded, markov);

	}
	for (guint i = 0; i < faded->len; i++)
		markov_free(model, g_ptr_array_index(faded, i));
	return faded->len;
}

double
markov_starts_of(const Markov *markov, int who)
{
	int other = who ^ MARKOV_BOTH;

	/* Every move from a state where `who` is stopped to one where it runs. */
	return (double)markov->weight[MARKOV_NEITHER][who] +
	       markov->weight[MARKOV_NEITHER][MARKOV_BOTH] + markov->weight[other][who] +
	       markov->weight[other][MARKOV_BOTH];
}

void
model_count_starts(Model *model)
{
	GHashTableIter iter;
	gpointer key;
	Markov *markov;

	g_return_if_fail(model != NULL);

	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &key))
		((Exe *)key)->starts = 0;
	for (guint pos = 0; (markov = model_next_chain(model, &pos));) {
		markov->a->starts = MAX(markov->a->starts, markov_starts_of(markov, MARKOV_A));
		markov->b->starts = MAX(markov->b->starts, markov_starts_of(markov, MARKOV_B));
	}
}

guint
model_forget_exes(Model *model, gint64 now, gint64 max_age)
{
	g_autoptr(GPtrArray) old = NULL;
	GHashTableIter iter;
	gpointer value;

	g_return_val_if_fail(model != NULL, 0);
	g_return_val_if_fail(max_age > 0, 0);

	old = g_ptr_array_new();
	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		Exe *exe = value;

		/* A running exe is seen now, whatever its update time says. */
		if (!exe_is_running(model, exe) && exe->update_time < now - max_age)
			g_ptr_array_add(old, exe);
	}
	for (guint i = 0; i < old->len; i++)
		model_remove_exe(model, g_ptr_array_index(old, i));
	return old->len;
}

guint
model_drop_stale_maps(Model *model)
{
	GHashTableIter iter;
	gpointer value;
	guint dropped = 0;

	g_return_val_if_fail(model != NULL, 0);

	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		Exe *exe = value;

		for (guint i = exe->exemaps->len; i-- > 0;) {
			if (g_array_index(exe->exemaps, ExeMap, i).map->learn.stale) {
				exe_remove_map(model, exe, i);
				dropped++;
			}
		}
	}
	return dropped;
}

static gint
compare_gint64(gconstpointer pa, gconstpointer pb)
{
	gint64 a = *(const gint64 *)pa, b = *(const gint64 *)pb;

	return a < b ? -1 : a > b;
}

/* Forgets the oldest quarter of the bad exes (at least one). */
static void
trim_bad_exes(Model *model)
{
	g_autoptr(GArray) times = g_array_new(FALSE, FALSE, sizeof(gint64));
	GHashTableIter iter;
	gpointer value;
	gint64 cut;
	guint n;

	g_hash_table_iter_init(&iter, model->bad_exes);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		g_array_append_val(times, ((BadExe *)value)->time);
	if (times->len == 0)
		return;
	g_array_sort(times, compare_gint64);
	n = MAX(times->len / 4, 1);
	cut = g_array_index(times, gint64, n - 1);
	g_hash_table_iter_init(&iter, model->bad_exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		if (((BadExe *)value)->time <= cut)
			g_hash_table_iter_remove(&iter);
	}
	model->bad_exes_oldest = G_MININT64;  /* recomputed by the next expiry */
}

void
model_add_bad_exe(Model *model, const char *path, guint64 size, gint64 time)
{
	BadExe *bad;

	g_return_if_fail(model != NULL);
	g_return_if_fail(path != NULL);

	if (!g_hash_table_contains(model->bad_exes, path) &&
	    g_hash_table_size(model->bad_exes) >= MODEL_MAX_BAD_EXES)
		trim_bad_exes(model);
	bad = g_new0(BadExe, 1);
	bad->size = size;
	bad->time = time;
	g_hash_table_replace(model->bad_exes, g_strdup(path), bad);
	if (model->bad_exes_oldest != G_MININT64)
		model->bad_exes_oldest = MIN(model->bad_exes_oldest, time);
}

void
model_expire_bad_exes(Model *model, gint64 now, gint64 max_age)
{
	GHashTableIter iter;
	gpointer value;
	gint64 oldest = G_MAXINT64;

	g_return_if_fail(model != NULL);

	/* Nothing can have expired yet (or there is nothing): no walk. */
	if (model->bad_exes_oldest != G_MININT64 &&
	    (g_hash_table_size(model->bad_exes) == 0 ||
	     (now >= model->bad_exes_oldest && now - model->bad_exes_oldest <= max_age)))
		return;

	g_hash_table_iter_init(&iter, model->bad_exes);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		const BadExe *bad = value;

		if (now - bad->time > max_age)
			g_hash_table_iter_remove(&iter);
		else
			oldest = MIN(oldest, bad->time);
	}
	model->bad_exes_oldest = oldest;
}
