/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Model: executables, their mapped file ranges and the Markov chains
 * over pairs of executables.
 *
 * Pure data and arithmetic: nothing here touches /proc, the clock or the
 * disk. Every function that depends on time takes the model time `now`
 * (seconds, advanced by the daemon once per half cycle), so tests drive
 * the model with hand-picked times and check exact values.
 *
 * Chains are sparse: a pair of executables has one only once it has run
 * together or one followed the other (see model_link_exe()). A pair
 * without a chain is neutral evidence: it bids nothing, as a chain whose
 * correlation is 0 would. What such a pair did until then is known from
 * its two exes alone (each start left "neither"), so a chain made late
 * starts with that history instead of with nothing. Observations age with a half-life
 * (model_age()); nothing here grows with the square of the number of
 * executables, and the per-cycle functions visit the running executables
 * and their chains, not the whole model.
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
 * Which file a map was learned from: the device and inode the kernel
 * reported in the maps line (st_dev and st_ino of the file), and its size
 * and modification time once the sweep has checked it (0 and 0 until
 * then). A file at the same path with another identity has been replaced
 * (an upgrade), or the path named another file in another mount
 * namespace: its ranges mean something else, and the reader does not
 * read it. All zero: not known yet (maps imported from older state
 * files until seen mapped again, or replayed from another machine's
 * trace).
 */
typedef struct MapFileId {
	guint64 dev;          /* st_dev */
	guint64 ino;          /* st_ino */
	guint64 size;         /* st_size, bytes */
	gint64 mtime;         /* st_mtim, nanoseconds since the epoch */
} MapFileId;

/*
 * A file range that some executable maps (or reads): the unit of
 * prediction and readahead. Identity is (path, offset, length).
 */
typedef struct Map {
	/* persisted */
	char *path;           /* absolute path, owned with the other maps of the file
				 that share it (map_new_same_file()); never freed alone */
	guint64 offset;       /* first byte of the range */
	guint64 length;       /* bytes in the range */
	gint64 update_time;   /* model time it was last seen in use */
	MapFileId file;       /* the file it was learned from */

	/*
	 * runtime, written by one stage each and named after it; other
	 * modules only read them (map_new() gives them their first values,
	 * learn.checked -1 and the rest 0). prophet and learn.stale are what
	 * prophet_score() and the selection read for every use of the map:
	 * they come first, at offset 64, so most maps have them in one
	 * cache line.
	 */
	struct {
		double lnprob;        /* ln P(not needed soon), this cycle */
		guint score_stamp;    /* model->score_stamp when prophet_score() last scored it */
	} prophet;
	struct {
		gboolean stale;       /* its file is gone or was replaced: never read ahead */
		gint64 checked;       /* model time its file was last checked or learned, -1 never */
	} learn;

	/* runtime, the model's own (model.c) */
	int refcount;         /* executables that use it; freed at 0 */
	guint rank;           /* place in (path, offset, length) order: a numeric tie-break */
	guint index;          /* position in model->map_list */

	struct {
		guint seq;            /* index while saving or loading */
	} state;
	struct {
		guint64 prefetch_seq; /* model->prefetch_seq of the last prefetch that read it */
	} cycle;
} Map;

/* How an executable came to use a map. */
typedef enum {
	EXEMAP_MAPPED = 0,    /* seen in /proc/PID/maps */
	EXEMAP_READ = 1,      /* resident part of a file opened at start-up */
} ExeMapOrigin;

/*
 * One executable's use of one map. 16 bytes: a model holds 60 or more
 * per executable, in arrays that GLib sizes by powers of two, so at 24
 * bytes 60 uses took 2 KiB, at 16 one. The probability is a float like
 * a chain's counts (7 significant digits; the daemon only ever learns
 * 1), the counter of misses never exceeds LEARN_MISSED_RUNS.
 */
typedef struct ExeMap {
	Map *map;             /* holds a reference */
	float prob;           /* probability the exe uses it when it runs */
	guint16 missed;       /* runtime: map refreshes in a row that did not find it */
	guint8 origin;        /* how it was learned, an ExeMapOrigin */
} ExeMap;
G_STATIC_ASSERT(sizeof(ExeMap) <= 16);

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
typedef struct Exe Exe;

/*
 * An executable's map uses and its chains: plain arrays that grow by an
 * eighth (at least 4) when full and are cut to their length by
 * model_compact(). GArray and GPtrArray grow by powers of two and never
 * shrink (GLib 2.74): at 1,000 executables the uses took 1.1 MB for
 * 0.59 MB of ExeMap, the chain lists 0.48 MB for 0.15 MB of pointers.
 * The fields are named as GArray's and GPtrArray's public ones, so that
 * g_array_index() and g_ptr_array_index() read them; only model.c
 * changes them. Embedded in the Exe as one-element arrays, so that
 * `exe->exemaps->len` reads as it did and costs no allocation.
 */
typedef struct ExeMapArray {
	ExeMap *data;         /* len uses, owned; NULL when alloc is 0 */
	guint len;            /* uses */
	guint alloc;          /* room for this many */
} ExeMapArray;

typedef struct ChainArray {
	Markov **pdata;       /* len chains, not owned (the model's); the array is */
	guint len;            /* chains */
	guint alloc;          /* room for this many */
} ChainArray;

/*
 * A program that was the next to start after another one (Exe.succ):
 * how many of the other's starts it followed, and in how many it could
 * have (it was stopped when the next start came; when it joins the list,
 * all of the other's earlier successions). Persisted (SUCC records) and
 * aged like the chains; at most MODEL_MAX_SUCCESSORS per program.
 */
typedef struct ExeSucc {
	Exe *next;
	float count;          /* the other's starts it followed */
	float chances;        /* the other's starts followed by a start while it was stopped */
} ExeSucc;

/*
 * An exe's successors: a plain array like its uses (ExeMapArray), cut to
 * its length by model_compact(). A GArray cost 48 bytes of header per
 * exe and grew by powers of two: 90 KB at 1,000 executables for 25 KB
 * of ExeSucc. Read with g_array_index(); appended to with
 * exe_append_succ(); only model.c removes.
 */
typedef struct ExeSuccArray {
	ExeSucc *data;        /* len successors, owned; NULL when alloc is 0 */
	guint len;            /* successors */
	guint alloc;          /* room for this many */
} ExeSuccArray;

/*
 * A program that started in the scan in which another one stopped
 * (Exe.handoff): in how many of the other's stops. A build runs its tools
 * one after the other, each as the one before ends; the first sight of a
 * new program counts too (model_exe_first_seen()), so a project's first
 * build already shows its order. Runtime only and not aged: a share of
 * the other's stops, both counted since the daemon started (aged, one
 * handoff seen at one stop would fall below the habit share of
 * model_is_handoff_habit() at once); at most MODEL_MAX_HANDOFFS per
 * program.
 */
typedef struct ExeHandoff {
	Exe *next;
	float count;          /* the other's stops it started at */
} ExeHandoff;

/*
 * A program's handoffs: a plain array like ExeSuccArray (no GArray header
 * for the many programs that never hand off), grown by
 * exe_append_handoff(); only model.c removes.
 */
typedef struct ExeHandoffArray {
	ExeHandoff *data;     /* len handoffs, owned; NULL when alloc is 0 */
	guint len;            /* handoffs */
	guint alloc;          /* room for this many */
} ExeHandoffArray;

/* An executable, identified by its path. */
typedef struct Exe {
	/* persisted */
	char *path;           /* absolute path, owned */
	double time;          /* seconds it has been seen running */
	gint64 update_time;   /* model time it was last seen running */
	ExeMapArray exemaps[1]; /* ExeMap, each holding a map reference */
	ExeHits hits;         /* prefetch hits at its starts */
	MapFileId file;       /* its own file: the device and inode of the maps line of its
				 own mapping (size and time unused); all zero: unknown */

	/* runtime */
	ChainArray chains[1]; /* Markov *, shared with the other exe */
	gint64 running_timestamp; /* last scan that saw it running, -1 never */
	gint64 change_timestamp;  /* when it last started or stopped, -1 unknown */
	gint64 prev_change_timestamp; /* the change before that, -1 unknown */
	guint64 size;         /* sum of its maps' lengths, bytes */
	double lnprob;        /* ln P(not needed soon), this cycle */
	double base_bid;      /* its largest bid from state "neither", this cycle */
	guint seq;            /* index while saving or loading */
	guint score_stamp;    /* model->score_stamp when it last got a bid */
	gint64 hits_checked_at; /* monotonic us of its last measured start, 0 never;
				   hits_cached, at the end, is what it found */
	double starts;        /* starts seen, aged like time (not hits.starts): see
				 model_exes_changed(); after a load, model_count_starts() */
	/* the order of starts, persisted (START and SUCC records) */
	ExeSuccArray succ[1]; /* ExeSucc: the programs that started next after it */
	double succ_total;    /* its starts that another start followed (aged) */
	double quiet_starts;  /* its starts after a quiet spell (model_quiet(), aged) */
	/* runtime */
	GHashTable *map_set;  /* the Map * of exemaps once there are EXE_MAP_SET_MIN or
				 more, NULL before: a duplicate check in O(1) */
	/*
	 * What the prophet's two experts (prophet.h, "frequency") gave it at
	 * the scoring numbered expert_stamp, each as its share of that
	 * expert's probability over the stopped exes: read when it starts.
	 */
	float expert_model, expert_freq;
	guint expert_stamp;
	/* (after hits_checked_at, here to fill the padding) */
	gboolean hits_cached; /* that measurement found at most a tenth of the set missing */
	/* the handoffs, runtime (not aged): see ExeHandoff */
	ExeHandoffArray handoff[1]; /* the programs that started as it stopped */
	double stops;         /* its stops seen */
	double run_time;      /* seconds from start (or first sight) to stop of those of
				 its runs whose start was seen */
} Exe;

/*
 * An exe with fewer maps finds a duplicate by walking them (at most 4 KiB
 * of uses, a few microseconds; only a new map is looked up, and the map
 * refresh has its own set); from this many on it keeps a set, so that
 * 30,000 maps load in linear time rather than quadratic. A set of 60
 * maps took 1.5 KiB, as much as the uses themselves: at 32 the sets were
 * a quarter of the heap at 1,000 executables.
 */
#define EXE_MAP_SET_MIN 256

/*
 * The continuous-time chain of a pair of executables. Counts are
 * fractional so that they can be aged; without aging they stay whole
 * numbers.
 *
 * Sojourns and weights are floats: a model holds ~9 chains per
 * executable, and doubles made the chain 200 bytes, a third of the heap
 * at 1,000 executables; as floats it is 120. Nothing is lost that was
 * kept: aging rounds every count to 7 significant digits (AGE_DIGITS) and
 * the state file stores 7, which a float holds; whole counts are exact up
 * to 2^24, 16.7 million transitions of one pair. Arithmetic on them is
 * done in double.
 */
struct Markov {
	Exe *a;               /* not owned; NULL: a free slot of the model's chain blocks */
	union {
		Exe *b;               /* not owned */
		Markov *next_free;    /* a free slot: the next free one */
	};

	/* persisted */
	double time;             /* seconds both ran (aged) */
	float time_to_leave[4];  /* mean sojourn in each state, seconds */
	float weight[4][4];      /* [s][s]: departures from s; [s][t]: s->t (aged) */

	/* runtime */
	int state;               /* current state, MARKOV_* */
	guint stamp;             /* model->account_stamp when last accounted */
	gint64 change_timestamp; /* model time it entered `state` */
};

/* An executable found too small to be worth modelling, for a while. */
typedef struct BadExe {
	guint64 size;         /* bytes of accepted maps when it was checked */
	gint64 time;          /* model time it was checked */
} BadExe;

/*
 * How chains are made and aged: from the configuration, set by the spy
 * before every update (model_new() gives no aging, a follow window of 0
 * and no chains with constant executables).
 */
typedef struct ModelParams {
	gint64 halflife;      /* seconds after which an observation weighs half; 0: never */
	gint64 follow;        /* seconds: a start this soon after a stop links the pair */
	gboolean skip_constant; /* no chain with an exe that (almost) always runs */
	/*
	 * The caps (0: none, as model_new() gives): see model_make_room_for_exe(),
	 * exe_add_map_origin(), markov_new() and model_trim().
	 */
	guint max_exes;       /* executables */
	guint max_exe_maps;   /* maps one executable uses */
	guint max_maps;       /* registered maps */
	guint max_chains;     /* chains */
} ModelParams;

/*
 * When a cap is reached, eviction makes room for a sixteenth of it at
 * once: one sort of the model per cap/16 additions instead of a walk per
 * addition, so a flood costs O(log n) per item.
 */
#define MODEL_EVICT_SHARE 16

/* What the caps did since the model was made, for the dump. */
typedef struct ModelEvictions {
	guint64 exes;         /* executables evicted to make room */
	guint64 exes_refused; /* executables not admitted: the rest all run */
	guint64 chains;       /* chains evicted to make room */
	guint64 maps_refused; /* map uses refused: the exe's or the model's cap */
} ModelEvictions;

/*
 * An exe that has run for at least this share of the model's (aged) time
 * is constant: its running indicator tells nothing about any other exe.
 */
#define MODEL_CONSTANT_SHARE 0.99
/* ... once the model has watched at least this long (seconds). */
#define MODEL_CONSTANT_MIN_TIME 3600.0
/*
 * A chain whose every count has aged below this is forgotten (unless both
 * exes run): one observation fades in log2(1/0.05) = 4.3 half-lives.
 */
#define MODEL_FADED_WEIGHT 0.05
/*
 * A start is linked with the exes of at most this many of the last stops
 * (scan times at which exes stopped) within the follow window.
 */
#define MODEL_FOLLOW_STOPS 2
/*
 * Successors kept per program (Exe.succ). A user's program has a few
 * usual successors; the tail is programs that followed once. When a new
 * one comes to a full list, the weakest (the smallest share of its
 * chances, then the fewest starts) is dropped for it. Bounds the state
 * file's SUCC lines and the successor bids to this many per program.
 */
#define MODEL_MAX_SUCCESSORS 32
/*
 * Handoffs kept per program (Exe.handoff). A build's tool hands off to
 * one tool; the rest are starts that came by chance as it stopped. When a
 * new one comes to a full list, the one seen least makes room for it.
 */
#define MODEL_MAX_HANDOFFS 8
/* Bad exes kept at most; beyond it the oldest quarter is forgotten. */
#define MODEL_MAX_BAD_EXES 8192

typedef struct Model {
	/* persisted */
	gint64 time;             /* model clock, seconds */
	double total_time;       /* seconds accounted, aged like the running times:
				    the t of the correlation */
	GHashTable *exes;        /* path -> Exe *, owns the exes */
	GHashTable *bad_exes;    /* path (owned) -> BadExe * (owned) */

	/* runtime */
	ModelParams params;      /* how chains are made and aged */
	GHashTable *maps;        /* Map * -> Map *, every registered map */
	GPtrArray *map_list;     /* the same maps, to visit a few at a time */
	gboolean ranks_stale;    /* maps came or went since model_rank_maps() */
	GPtrArray *ranked;       /* Map * in rank order as of the last ranking; NULL: dropped since */
	GPtrArray *rank_pending; /* Map * registered since the last ranking */
	/*
	 * The chains, MODEL_CHAIN_BLOCK to a block: a chain costs its 120
	 * bytes and no allocation of its own, and scoring walks them in
	 * memory order (model_next_chain()). A pair's chain is found through
	 * the shorter chain list of its two exes (model_lookup_chain()); a
	 * hash index of the pairs took 0.19 MB at 9,000 chains.
	 */
	Markov **chain_blocks;   /* n_chain_blocks blocks, owned */
	guint n_chain_blocks;
	guint chain_slots;       /* slots handed out so far, live or free */
	Markov *chain_free;      /* freed slots, linked through next_free */
	GPtrArray *running;      /* Exe * seen running by the last scan */
	GPtrArray *stopped;      /* Exe * that stopped within params.follow, oldest first */
	gint64 last_running_timestamp;    /* time of the last scan */
	gint64 last_accounting_timestamp; /* time of the last model_account() */
	gint64 aged_time;        /* model time the aged values are aged up to */
	guint n_chains;          /* Markov chains alive */
	gboolean dirty;          /* changed since the last save */
	guint account_stamp;     /* counts model_account() calls */
	gint64 bad_exes_oldest;  /* no bad exe is older; G_MININT64: unknown */

	/* the prophet's bookkeeping, so that it visits only what it scored */
	guint score_stamp;       /* counts prophet_score() calls */
	GPtrArray *scored_exes;  /* Exe * that got a bid in the last scoring */
	GPtrArray *candidates;   /* Map * scored by the last scoring */

	guint64 prefetch_seq;    /* number of the last prefetch; maps it read carry it */

	/*
	 * the order of starts: see model_exes_changed(). Persisted (the
	 * ORDER record) and aged, but n_starts.
	 */
	Exe *last_start;         /* the exe that started last, NULL none yet */
	/*
	 * The last start that was not a habit of the start before it
	 * (model_is_habit()), NULL none yet: the last free choice, which a
	 * run of habitual starts (a build's tools, one after the other) does
	 * not replace. Runtime only: after a load it is set again by the
	 * next such start.
	 */
	Exe *free_start;
	gint64 last_start_time;  /* when */
	double start_gaps;       /* seconds between consecutive starts, summed */
	double n_start_gaps;     /* how many */
	GPtrArray *quiet_exes;   /* Exe * with quiet_starts > 0 */
	double quiet_total;      /* starts after a quiet spell, summed */
	double n_starts;         /* starts noted */
	double soon_gaps, n_soon_gaps;   /* the gaps shorter than model_quiet() */
	double quiet_gaps, n_quiet_gaps; /* the others, less model_quiet() */
	/*
	 * The weight of the frequency expert against the model's own bids
	 * (prophet.h, "frequency"), learned at every start (model_exes_changed()):
	 * MODEL_FREQ_WEIGHT at first. Persisted (the state's EXPERTS record).
	 */
	double freq_weight;
	ModelEvictions evictions; /* what the caps did */
} Model;

/* ---- maps ---- */

/* A new unregistered map with refcount 0 and an unknown file identity. */
Map *map_new(const char *path, guint64 offset, guint64 length, gint64 update_time);
/*
 * As map_new() with other's path, shared rather than copied: for the
 * ranges of one file (the state loader's maps of one FILE record). Each
 * map holds a reference to the path; map_free() drops it.
 */
Map *map_new_same_file(Map *other, guint64 offset, guint64 length, gint64 update_time);
void map_free(Map *map);
guint map_hash(gconstpointer map);
gboolean map_equal(gconstpointer a, gconstpointer b);
/*
 * Whether two identities name the same file: same device and inode, and
 * same size and time when both have them. An unknown one matches any.
 */
gboolean map_file_id_matches(const MapFileId *known, const MapFileId *now);
gboolean map_file_id_is_known(const MapFileId *id);

/* ---- executables ---- */

/* A new exe, not yet in any model. `running` sets its timestamps to now. */
Exe *exe_new(const char *path, gboolean running, gint64 now);
void exe_free(Exe *exe);
/*
 * Adds a use of `map` (taking a reference; registers it if it is new).
 * Returns TRUE if exe uses it now (also if it did already), FALSE if a
 * cap refused it: exe has params.max_exe_maps maps, or the map is new and
 * the model has params.max_maps. Either way the caller must not use `map`
 * afterwards unless it was registered before (an unregistered object
 * that is not kept is freed).
 */
gboolean exe_add_map(Model *model, Exe *exe, Map *map, double prob);
/* Removes exe's i-th use (dropping its reference); later uses move down. */
void exe_remove_map(Model *model, Exe *exe, guint i);
/* The same, for a use learned another way than from /proc/PID/maps. */
gboolean exe_add_map_origin(Model *model, Exe *exe, Map *map, double prob,
			    ExeMapOrigin origin);
/* Whether exe uses map (a registered one): O(1) however many maps it has. */
gboolean exe_has_map(const Exe *exe, const Map *map);
/*
 * Appends a successor to exe->succ (a copy of *succ). The caller keeps
 * the rules of Exe.succ: no duplicate, at most MODEL_MAX_SUCCESSORS.
 */
void exe_append_succ(Exe *exe, const ExeSucc *succ);
/* Appends a handoff to exe's (model.c keeps at most MODEL_MAX_HANDOFFS). */
void exe_append_handoff(Exe *exe, const ExeHandoff *handoff);
/* Whether the last scan saw exe running. Inline: scoring asks for every chain's two exes. */
static inline gboolean
exe_is_running(const Model *model, const Exe *exe)
{
	g_return_val_if_fail(model != NULL, FALSE);
	g_return_val_if_fail(exe != NULL, FALSE);

	return exe->running_timestamp >= 0 &&
	       exe->running_timestamp == model->last_running_timestamp;
}
/*
 * Whether exe runs (almost) always: at least MODEL_CONSTANT_SHARE of the
 * model's aged time, once that is MODEL_CONSTANT_MIN_TIME or more.
 */
gboolean exe_is_constant(const Model *model, const Exe *exe);

/* ---- chains ---- */

/* How a new chain starts. */
typedef enum MarkovStart {
	/* In the pair's current state at now, with nothing learned: a chain
	 * about to be filled from saved state. */
	MARKOV_START_BLANK,
	/* From what the pair's change times tell: the time they ran together
	 * is bounded below, and when both changes are known the most recent
	 * one is recorded as the first transition, so a new pair learns from
	 * what was just observed. */
	MARKOV_START_OBSERVED,
	/* As MARKOV_START_OBSERVED, after giving the "neither" row what the
	 * pair's chain would hold had it been kept all along: a chain made
	 * late, by model_link_exe(). */
	MARKOV_START_BACKFILLED,
} MarkovStart;

/*
 * Links a new chain between a and b (a != b) into both exes, started as
 * `start` says. With params.max_chains chains already, the least valuable
 * chains are first evicted, down to the cap less a sixteenth: those whose
 * heaviest count is lightest (the order in which model_age() forgets
 * faded chains), the oldest change first on a tie, chains whose pair both
 * run last.
 */
Markov *markov_new(Model *model, Exe *a, Exe *b, gint64 now, MarkovStart start);
/* Unlinks the chain from both exes and the model and frees it. */
void markov_free(Model *model, Markov *markov);
/* The state the pair is in now, from the exes' running flags. */
int markov_current_state(const Model *model, const Markov *markov);
/*
 * Records a transition to the current state at time now, once per
 * (chain, now): a second call at the same time, or a call that finds the
 * state unchanged, does nothing.
 */
void markov_state_changed(Model *model, Markov *markov, gint64 now);
/*
 * The starts of the chain's exe `who` (MARKOV_A or MARKOV_B) it recorded:
 * every move from a state where `who` is stopped to one where it runs.
 */
double markov_starts_of(const Markov *markov, int who);
/*
 * Pearson correlation of the two exes' running indicators over the model's
 * aged time (model->total_time).
 */
double markov_correlation(const Model *model, const Markov *markov);

/* ---- the model ---- */

Model *model_new(void);
void model_free(Model *model);

/* Sets how chains are made and aged (see ModelParams). */
void model_set_params(Model *model, const ModelParams *params);

/*
 * Gives every map its Map.rank, its place in (path, offset, length) order,
 * if maps were registered or dropped since the last ranking, so that
 * every cycle's sort compares numbers. Only the maps registered since are
 * sorted by name, then merged into the last order: O(n + k log k) for k
 * new maps among n, not a sort of all n by name whenever one came.
 */
void model_rank_maps(Model *model);

/* The registered map equal to the key, or NULL. */
Map *model_lookup_map(const Model *model, const char *path, guint64 offset, guint64 length);
Exe *model_lookup_exe(const Model *model, const char *path);
/*
 * The chain of the pair (either order), or NULL: a walk of the shorter
 * of the two exes' chain lists.
 */
Markov *model_lookup_chain(const Model *model, const Exe *a, const Exe *b);

/* Chains per block of the model's chain storage (Model.chain_blocks). */
#define MODEL_CHAIN_BLOCK 256

/*
 * The next chain at or after slot *pos of the model's chain storage, in
 * memory order, and *pos moved past it; NULL at the end. Start at 0:
 *   for (guint i = 0; (m = model_next_chain(model, &i));)
 * Every chain alive comes once. A chain made during the walk may or may
 * not come; freeing the one just returned is safe.
 */
static inline Markov *
model_next_chain(const Model *model, guint *pos)
{
	while (*pos < model->chain_slots) {
		Markov *m = &model->chain_blocks[*pos / MODEL_CHAIN_BLOCK][*pos % MODEL_CHAIN_BLOCK];

		(*pos)++;
		if (m->a)
			return m;
	}
	return NULL;
}

/*
 * Adds exe to the model (which takes ownership). With `create_chains`,
 * links a chain between it and every exe already in the model, as
 * preload 0.6.4 did (the `allpairs` configuration); otherwise chains come
 * from model_link_exe().
 */
void model_add_exe(Model *model, Exe *exe, gint64 now, gboolean create_chains);
/* Removes exe and its chains and drops its map references. */
void model_remove_exe(Model *model, Exe *exe);

/*
 * Whether one more exe fits under params.max_exes. When the model is
 * full it evicts the least valuable exes first, down to the cap less
 * 1/MODEL_EVICT_SHARE of it: those not running, last seen running
 * longest ago (the order in which model_forget_exes() forgets them), the
 * one that ran less (Exe.time) first on a tie. Running exes are never
 * evicted: with only them left it returns FALSE and the new exe must not
 * be added (counted in evictions.exes_refused). Call it before
 * model_add_exe(), at a point where no pointer into other exes or their
 * maps is held.
 */
gboolean model_make_room_for_exe(Model *model);

/*
 * Brings the model under its caps, for a model loaded with caps larger
 * than today's and to keep room for new maps: evicts exes as
 * model_make_room_for_exe() does until there are at most params.max_exes
 * and the registered maps are at most params.max_maps less a sixteenth
 * (new maps are refused when it is full, and freed only by evicting the
 * exes that use them), and chains as markov_new() does. Returns the
 * number of exes evicted.
 */
guint model_trim(Model *model);

/*
 * Cuts every exe's use and chain arrays to their length (ExeMapArray):
 * after a load, which builds them all at once, and after learning adds
 * to them. Changes no value.
 */
void model_compact(Model *model);

/*
 * Gives exe, which started (or was admitted running) at now, the chains
 * that carry information and that it does not have yet:
 *   - with each running exe, if that lets the chain record a transition
 *     (the later of the two changes, backdated as markov_new() does) and,
 *     with params.skip_constant, neither of the two is constant;
 *   - with each exe of the last MODEL_FOLLOW_STOPS stops (the latest scan
 *     times at which exes stopped) at most params.follow seconds before
 *     now.
 * Every other pair keeps no chain. Does nothing if exe does not run.
 *
 * A chain made here starts with the "neither" row the pair's chain would
 * hold had it been kept all along: the pair never ran together, so every
 * start of either left "neither" (W[0][a] = a's Exe.starts, W[0][b] =
 * b's, W[0][0] their sum) and tau[0] is the time neither ran,
 * model->total_time - a->time - b->time + (the chain's time), over that
 * sum; then it records its first transition as markov_new() does (its
 * start is not counted twice). Its other rows start empty. With
 * `allpairs` (model_add_exe()) chains are made as 0.6.4 made them.
 */
void model_link_exe(Model *model, Exe *exe, gint64 now);

/*
 * Marks the n exes as having started or stopped at now (all seen by one
 * scan): their change times move first, then their chains record the
 * transitions, then those that started are linked (model_link_exe()), so
 * that a new chain sees every change of the scan. A start adds 1 to the
 * exe's Exe.starts if the model saw the exe stop before (its previous
 * change time is known). So the first sight of a loaded exe that runs is
 * not counted: it may have run for long. (learn_update() marks the loaded
 * exes that the first scan finds stopped as stopped then, so their next
 * start counts.)
 */
void model_exes_changed(Model *model, Exe *const *exes, guint n, gint64 now);

/*
 * The frequency expert's weight (Model.freq_weight) before any start, the
 * step by which each start moves it, and its bounds. At each start of an
 * exe the last scoring gave shares (Exe.expert_model m and expert_freq f,
 * both > 0 or either) and that has maps, the weight w becomes
 *   w + MODEL_FREQ_STEP * (w f / (w f + (1 - w) m) - w)
 * clamped to [MODEL_FREQ_MIN, 1 - MODEL_FREQ_MIN]: an online EM step
 * towards the mixture that gave the starts seen the highest likelihood,
 * remembering about the last 1 / MODEL_FREQ_STEP starts. The bounds keep
 * either expert from being written off for good (at 0, a share of 0
 * would never move it again).
 */
#define MODEL_FREQ_WEIGHT 0.5
#define MODEL_FREQ_STEP (1.0 / 32)
#define MODEL_FREQ_MIN 0.01
/*
 * The time without starts after which the next start is a session's
 * first (after a quiet spell) rather than the successor of the last
 * start: twice the mean gap between starts, in seconds; 0 while fewer
 * than MODEL_QUIET_MIN_GAPS gaps were seen.
 */
double model_quiet(const Model *model);
#define MODEL_QUIET_MIN_GAPS 10
/*
 * (model_exes_changed() also records the order of starts: each exe that
 * starts (not the first sight of one) is counted as a successor of
 * model->last_start, the exe that started before it (all of one scan
 * after the same one), in that exe's Exe.succ, and the gap in
 * model->start_gaps and soon_gaps; unless the gap is model_quiet() or
 * longer: then it counts in Exe.quiet_starts and quiet_gaps instead. An
 * exe removed from the model is removed from every Exe.succ.)
 */
/*
 * Whether next is a habit of prev: it followed prev at least
 * MODEL_HABIT_MIN_COUNT times and in at least MODEL_HABIT_SHARE of its
 * chances (count >= MODEL_HABIT_SHARE * (chances + 1), the share the
 * successor bid uses). model_exes_changed() keeps model->free_start at
 * the last start that was not a habit of the one before it (or that came
 * after a quiet spell).
 */
gboolean model_is_habit(const Exe *prev, const Exe *next);
#define MODEL_HABIT_MIN_COUNT 2.0
#define MODEL_HABIT_SHARE 0.5
/*
 * Whether h, one of from's handoffs, is a habit: the program started at
 * MODEL_HABIT_SHARE or more of from's stops (h->count >=
 * MODEL_HABIT_SHARE * (from->stops + 1)), at least once. One build
 * teaches a project's tool order: at its next build each tool starts as
 * the one before stops, seen once in one stop.
 */
gboolean model_is_handoff_habit(const Exe *from, const ExeHandoff *h);
/*
 * (model_exes_changed() also learns the handoffs: each exe that stops
 * counts in its Exe.stops, and each start is a handoff of every exe
 * that stopped in the same scan. A start that was a habitual handoff of
 * such an exe (judged by the stops before this one, as the bid that
 * foretold it), or that itself hands off by habit, seen at least
 * MODEL_HABIT_MIN_COUNT times (it heads a run of handoffs: a build's
 * first tool), is kept out of the order of starts: it neither counts as
 * a successor nor becomes the last start, and its gap is not counted.
 * A build's tools, started between the user's applications, would
 * otherwise stand in for the user's last application, and the
 * application that follows would be learned as a tool's successor. Such
 * starts still count in Exe.starts.)
 */
/*
 * The first sight of a new exe (not at the first scan) that runs at now:
 * it is a handoff of every exe that stopped in this scan. Call after
 * model_exes_changed() for that scan.
 */
void model_exe_first_seen(Model *model, Exe *exe, gint64 now);
/* model_exes_changed() for one exe. */
void model_exe_changed(Model *model, Exe *exe, gint64 now);

/*
 * Adds the time since the last accounting to model->total_time, to every
 * running exe and to every chain whose pair both run. Visits the running
 * exes and their chains only.
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

/*
 * Sets every exe's Exe.starts, which the state file does not hold, to the
 * most starts one of its chains recorded (moves from a state where it is
 * stopped to one where it runs); 0 without chains. For a model just
 * loaded: the oldest chain saw the most, and a backfilled one (see
 * model_link_exe()) holds the starts from before it too.
 */
void model_count_starts(Model *model);

/*
 * Ages the model from model->aged_time to now: every running time and
 * start count, the total time, the order of starts (successions,
 * successors' counts and chances, quiet starts, the gap sums and their
 * counts; faded successors and session openers are forgotten, see
 * MODEL_FADED_WEIGHT), and every chain's joint time and counts
 * are multiplied by 2^(-(now - aged_time) / halflife), rounded to 7
 * significant digits (as are the mean sojourns, which keeps the state
 * file short); then chains whose counts all faded below
 * MODEL_FADED_WEIGHT are freed unless both their exes run. Does nothing but move aged_time without a half-life.
 * Returns the number of chains freed.
 */
guint model_age(Model *model, gint64 now);
/* v * 2^(-elapsed / halflife), as model_age() computes it (halflife > 0). */
double model_age_value(double v, gint64 elapsed, gint64 halflife);

/*
 * Removes the exes last seen running more than max_age seconds before now
 * (max_age > 0), with their chains and map uses. Returns how many.
 */
guint model_forget_exes(Model *model, gint64 now, gint64 max_age);
/* Removes every use of a stale map from every exe. Returns how many uses. */
guint model_drop_stale_maps(Model *model);

/*
 * Records that path was found too small at `time`. Beyond
 * MODEL_MAX_BAD_EXES entries the oldest quarter is forgotten.
 */
void model_add_bad_exe(Model *model, const char *path, guint64 size, gint64 time);
/*
 * Forgets bad exes checked more than `max_age` seconds before now. Walks
 * the table only when its oldest entry may have expired.
 */
void model_expire_bad_exes(Model *model, gint64 now, gint64 max_age);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Model, model_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Exe, exe_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Map, map_free)
