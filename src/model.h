/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Model: executables, their mapped file ranges and the Markov chains
 * over pairs of executables.
 *
 * Pure data and arithmetic: nothing here touches /proc, the clock or the
 * disk. Every function that depends on time takes the model time `now`
 * (seconds, advanced by the daemon once per half cycle), so tests drive
 * the model with hand-picked times and check exact values.
 */
#pragma once

#include <glib.h>

/*
 * States of the chain of a pair (a, b): bit 0 is "a runs", bit 1 is
 * "b runs".
 */
enum {
	MARKOV_NEITHER = 0,
	MARKOV_A = 1,
	MARKOV_B = 2,
	MARKOV_BOTH = 3,
};

/*
 * A file range that some executable maps (or reads): the unit of
 * prediction and readahead. Identity is (path, offset, length).
 */
typedef struct Map {
	/* persisted */
	char *path;           /* absolute path, owned */
	guint64 offset;       /* first byte of the range */
	guint64 length;       /* bytes in the range */
	gint64 update_time;   /* model time it was last seen in use */

	/* runtime */
	int refcount;         /* executables that use it; freed at 0 */
	double lnprob;        /* ln P(not needed soon), this cycle */
	guint seq;            /* index while saving or loading */
	guint64 prefetch_seq; /* model->prefetch_seq of the last prefetch that read it */
} Map;

/* How an executable came to use a map. */
typedef enum {
	EXEMAP_MAPPED = 0,    /* seen in /proc/PID/maps */
	EXEMAP_READ = 1,      /* resident part of a file opened at start-up */
} ExeMapOrigin;

/* One executable's use of one map. */
typedef struct ExeMap {
	Map *map;             /* holds a reference */
	double prob;          /* probability the exe uses it when it runs */
	ExeMapOrigin origin;  /* how it was learned */
} ExeMap;

/*
 * How well prefetching served an executable's starts: at each start the
 * daemon measures its learned set (every map it uses) and adds it here.
 * bytes/prefetched counts every measured start; probed/resident only the
 * starts seen as they happened (exec events), when the page cache could be
 * asked before the program loaded anything, and only the files whose
 * residency the kernel would tell.
 */
typedef struct ExeHits {
	guint64 starts;       /* starts seen */
	guint64 checks;       /* of those, starts whose learned set was measured */
	guint64 bytes;        /* learned-set bytes, summed over the checks */
	guint64 prefetched;   /* of bytes, in the daemon's last prefetch */
	guint64 probed;       /* learned-set bytes whose residency was probed */
	guint64 resident;     /* of probed, resident just before the start */
} ExeHits;

typedef struct Markov Markov;

/* An executable, identified by its path. */
typedef struct Exe {
	/* persisted */
	char *path;           /* absolute path, owned */
	double time;          /* seconds it has been seen running */
	gint64 update_time;   /* model time it was last seen running */
	GArray *exemaps;      /* ExeMap, each holding a map reference */
	ExeHits hits;         /* prefetch hits at its starts */

	/* runtime */
	GPtrArray *chains;    /* Markov *, shared with the other exe */
	gint64 running_timestamp; /* last scan that saw it running, -1 never */
	gint64 change_timestamp;  /* when it last started or stopped, -1 unknown */
	guint64 size;         /* sum of its maps' lengths, bytes */
	double lnprob;        /* ln P(not needed soon), this cycle */
	guint seq;            /* index while saving or loading */
	gint64 hits_checked_at; /* monotonic us of its last measured start, 0 never */
} Exe;

/*
 * The continuous-time chain of a pair of executables. Counts are doubles
 * so that they can be aged; without aging they stay whole numbers.
 */
struct Markov {
	Exe *a, *b;           /* not owned */

	/* persisted */
	double time;             /* seconds both ran */
	double time_to_leave[4]; /* mean sojourn in each state, seconds */
	double weight[4][4];     /* [s][s]: departures from s; [s][t]: s->t */

	/* runtime */
	int state;               /* current state, MARKOV_* */
	gint64 change_timestamp; /* model time it entered `state` */
};

/* An executable found too small to be worth modelling, for a while. */
typedef struct BadExe {
	guint64 size;         /* bytes of accepted maps when it was checked */
	gint64 time;          /* model time it was checked */
} BadExe;

typedef struct Model {
	/* persisted */
	gint64 time;             /* model clock, seconds */
	GHashTable *exes;        /* path -> Exe *, owns the exes */
	GHashTable *bad_exes;    /* path (owned) -> BadExe * (owned) */

	/* runtime */
	GHashTable *maps;        /* Map * -> Map *, every registered map */
	GPtrArray *running;      /* Exe * seen running by the last scan */
	gint64 last_running_timestamp;    /* time of the last scan */
	gint64 last_accounting_timestamp; /* time of the last model_account() */
	guint n_chains;          /* Markov chains alive */
	gboolean dirty;          /* changed since the last save */
	guint64 prefetch_seq;    /* number of the last prefetch; maps it read carry it */
} Model;

/* ---- maps ---- */

/* A new unregistered map with refcount 0. */
Map *map_new(const char *path, guint64 offset, guint64 length, gint64 update_time);
void map_free(Map *map);
guint map_hash(gconstpointer map);
gboolean map_equal(gconstpointer a, gconstpointer b);

/* ---- executables ---- */

/* A new exe, not yet in any model. `running` sets its timestamps to now. */
Exe *exe_new(const char *path, gboolean running, gint64 now);
void exe_free(Exe *exe);
/* Adds a use of `map` (taking a reference; registers it if it is new). */
void exe_add_map(Model *model, Exe *exe, Map *map, double prob);
/* The same, for a use learned another way than from /proc/PID/maps. */
void exe_add_map_origin(Model *model, Exe *exe, Map *map, double prob, ExeMapOrigin origin);
gboolean exe_is_running(const Model *model, const Exe *exe);

/* ---- chains ---- */

/*
 * Links a new chain between a and b (a != b) into both exes. When
 * `initialize` is TRUE the chain starts in the pair's current state and,
 * when both exes' change times are known, records the most recent change
 * as a transition so a new pair learns from what was just observed.
 * When FALSE (loading saved state) it starts in the current state at now.
 */
Markov *markov_new(Model *model, Exe *a, Exe *b, gint64 now, gboolean initialize);
/* Unlinks the chain from both exes and frees it. */
void markov_free(Model *model, Markov *markov);
/* The state the pair is in now, from the exes' running flags. */
int markov_current_state(const Model *model, const Markov *markov);
/*
 * Records a transition to the current state at time now, once per
 * (chain, now): a second call at the same time, or a call that finds the
 * state unchanged, does nothing.
 */
void markov_state_changed(Model *model, Markov *markov, gint64 now);
/* Pearson correlation of the two exes' running indicators over model time. */
double markov_correlation(const Model *model, const Markov *markov);

/* ---- the model ---- */

Model *model_new(void);
void model_free(Model *model);

/* The registered map equal to the key, or NULL. */
Map *model_lookup_map(const Model *model, const char *path, guint64 offset, guint64 length);
Exe *model_lookup_exe(const Model *model, const char *path);

/*
 * Adds exe to the model (which takes ownership). With `create_chains`,
 * links a chain between it and every exe already in the model.
 */
void model_add_exe(Model *model, Exe *exe, gint64 now, gboolean create_chains);
/* Removes exe and its chains and drops its map references. */
void model_remove_exe(Model *model, Exe *exe);

/* Marks exe as having started or stopped at now and updates its chains. */
void model_exe_changed(Model *model, Exe *exe, gint64 now);

/*
 * Adds the time since the last accounting to every running exe and to
 * every chain whose pair both run.
 */
void model_account(Model *model, gint64 now);

/*
 * Adds one measured start to hits: `bytes` of the learned set, of which
 * `prefetched` were in the last prefetch and `probed` could be looked up
 * in the page cache (0 if it was not asked), of which `resident` were
 * resident. Parts larger than their whole are clamped to it; counters
 * saturate.
 */
void exe_hits_add(ExeHits *hits, guint64 bytes, guint64 prefetched,
		  guint64 probed, guint64 resident);
/* resident / probed and prefetched / bytes as fractions; 0 when nothing was measured. */
double exe_hits_resident_ratio(const ExeHits *hits);
double exe_hits_prefetched_ratio(const ExeHits *hits);

/* Forgets bad exes checked more than `max_age` seconds before now. */
void model_expire_bad_exes(Model *model, gint64 now, gint64 max_age);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Model, model_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Exe, exe_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Map, map_free)
