/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The state file: the model's persisted fields on disk, so that what
 * preload learned survives restarts.
 *
 * The format (doc/state-format.md) is tab-separated text, one record per
 * line, that refers to maps and executables by indices assigned while
 * writing. A final END line carries the record count and a SHA-256 of
 * everything before it, so a file cut short by a crash or damaged on disk
 * is recognised as such instead of being half-loaded.
 *
 * Loading reads the file twice through one fixed line buffer: first to
 * check its END line (count and checksum), so that a damaged file of any
 * size is refused before anything is built from it, then a line at a time
 * into the model through the model's own functions, so memory stays
 * proportional to the model, not to the file. Every problem is a GError
 * that names the file and line; nothing here logs or aborts: the daemon
 * decides (it moves a bad file aside and starts empty). The text format
 * of preload 0.6.4 is imported too, so an upgrade keeps what the old
 * daemon learned.
 *
 * Each record type is one row of record_types, with its reader and its
 * writer. Saving formats the file a chunk at a time into a temporary file
 * beside the target, fsyncs it, renames it over the old file and fsyncs
 * the directory: after a crash at any point the path holds either the old
 * file or the new one, complete. The path is never followed through a
 * symlink, and its directory must be the caller's alone.
 */
#include "config.h"

#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

G_DEFINE_QUARK(preload-state-error-quark, state_error)

#define STATE_TAG "PRELOAD-STATE"
#define LEGACY_TAG "PRELOAD"  /* preload 0.6.4 and older */

/* A MARKOV line: tag, a, b, time, 4 taus, 16 weights. */
#define MAX_FIELDS 24

/* Version 2: FILE and HITS records, the aged total time, EXEMAP origins and runs. */
#define STATE_VERSION_2 2
/* Version 3: the order of starts (START, SUCC and ORDER records). */
#define STATE_VERSION_3 3
/* Version 4: an EXE's identity (the device and inode of its own file). */
#define STATE_VERSION_4 4
/* Version 5: the frequency expert's weight (the EXPERTS record). */
#define STATE_VERSION_5 5

/*
 * No valid line comes near this: the longest is a record holding a URI of
 * a PATH_MAX path with every byte escaped (3 * 4096 bytes). A longer line
 * is garbage, and refusing it keeps a bad file from growing our buffer
 * further than one such line.
 */
#define MAX_LINE_LENGTH (64 * 1024)

/* Indices in the file are small non-negative integers used as hash keys. */
#define MAX_INDEX G_MAXINT32

/* ---- loading ---- */

/* Records must appear in this order in the current format. */
typedef enum {
	SECTION_FILE,
	SECTION_MAP,
	SECTION_EXE,
	SECTION_EXEMAP,
	SECTION_MARKOV,
	SECTION_HITS,
	SECTION_BADEXE,
	SECTION_START,
	SECTION_SUCC,
	SECTION_ORDER,
	SECTION_EXPERTS,
	SECTION_COUNT
} Section;

typedef struct {
	const char *path;         /* for messages */
	guint64 lineno;           /* line being parsed, from 1 */
	gboolean legacy;          /* reading the 0.6.4 format */
	gint64 version;           /* format version of the file (0 for 0.6.4) */
	Section section;          /* last section seen (current format) */
	guint64 records;          /* record lines after the header */
	Model *model;             /* being built */
	GHashTable *files;        /* index -> FileRecord * (owned), version 2 */
	GHashTable *file_keys;    /* FileRecord * set, by path and identity */
	/*
	 * Maps of the file by index. A map is registered in the model (and
	 * then owned by it) only when an EXEMAP uses it; the rest are freed
	 * at the end, which drops maps that no executable uses.
	 */
	GHashTable *maps;         /* index -> Map * */
	GHashTable *map_keys;     /* Map * set, by identity, for duplicates */
	GHashTable *exes;         /* index -> Exe *, owned by the model */
	GHashTable *started;      /* Exe * set: those with a START record */
	gboolean have_order;      /* an ORDER record was read */
	gboolean have_experts;    /* an EXPERTS record was read */
	guint64 end_lineno;       /* the END line, once the first pass found it */
	/* 0.6.4 import: the chains kept so far, see import_chain() */
	struct ImportTop *import_tops; /* one per exe, in order of first chain */
	guint n_import_tops;
	GHashTable *import_slot;  /* Exe * -> 1 + its index in import_tops */
} Loader;

/*
 * The chains a 0.6.4 import keeps for one program so far: at most
 * STATE_IMPORT_CHAINS_PER_EXE, the most correlated, as copies (a, b and
 * the persisted fields). The model gets a chain once the file is read if
 * it is in the list of either of its programs.
 */
typedef struct ImportTop {
	Markov chain[STATE_IMPORT_CHAINS_PER_EXE];
	double score[STATE_IMPORT_CHAINS_PER_EXE]; /* |correlation| of chain[i] */
	guint n;
} ImportTop;

/* A FILE record: a path and the identity of the file there. */
typedef struct FileRecord {
	char *path;           /* owned when loading; the map's when saving (SavePlan) */
	MapFileId id;
	Map *first_map;       /* loading: its first map, whose path the others share */
} FileRecord;

static void
file_record_free(gpointer data)
{
	FileRecord *rec = data;

	g_free(rec->path);
	g_free(rec);
}

static guint
file_record_hash(gconstpointer p)
{
	const FileRecord *rec = p;

	return g_str_hash(rec->path) ^ (guint)(rec->id.ino ^ (rec->id.ino >> 32)) ^
	       (guint)rec->id.mtime;
}

static gboolean
file_record_equal(gconstpointer pa, gconstpointer pb)
{
	const FileRecord *a = pa, *b = pb;

	return memcmp(&a->id, &b->id, sizeof(a->id)) == 0 && strcmp(a->path, b->path) == 0;
}

static void
loader_init(Loader *ld, const char *path)
{
	memset(ld, 0, sizeof(*ld));
	ld->path = path;
	ld->model = model_new();
	ld->maps = g_hash_table_new(g_direct_hash, g_direct_equal);
	ld->map_keys = g_hash_table_new(map_hash, map_equal);
	ld->exes = g_hash_table_new(g_direct_hash, g_direct_equal);
	ld->started = g_hash_table_new(g_direct_hash, g_direct_equal);
	ld->files = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, file_record_free);
	ld->file_keys = g_hash_table_new(file_record_hash, file_record_equal);
	ld->import_slot = g_hash_table_new(g_direct_hash, g_direct_equal);
}

static void import_keep_chains(Loader *ld);

/* Frees the loader and returns its model, or frees that too if !keep. */
static Model *
loader_finish(Loader *ld, gboolean keep)
{
	GHashTableIter iter;
	gpointer value;
	Model *model = ld->model;

	if (keep && ld->legacy)
		import_keep_chains(ld);
	/*
	 * Unused maps were never registered, so nobody else frees them. This
	 * must run before model_free(), which frees the registered ones.
	 */
	g_hash_table_iter_init(&iter, ld->maps);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		Map *map = value;

		if (map->refcount == 0)
			map_free(map);
	}
	g_hash_table_unref(ld->maps);
	g_hash_table_unref(ld->map_keys);
	g_hash_table_unref(ld->exes);
	g_hash_table_unref(ld->started);
	g_hash_table_unref(ld->file_keys);
	g_hash_table_unref(ld->files);
	g_hash_table_unref(ld->import_slot);
	g_free(ld->import_tops);
	ld->model = NULL;

	if (!keep) {
		model_free(model);
		return NULL;
	}
	/*
	 * Before version 3 the start counts are not in the file: what the
	 * chains saw is the best there is. A 0.6.4 import counted them from
	 * every chain of the file as it read them (import_chain()), the ones
	 * it did not keep too.
	 */
	if (ld->version < STATE_VERSION_3 && !ld->legacy)
		model_count_starts(model);
	/* Before the caller gives the freed heap back (heap_prepared()). */
	model_compact(model);
	model->dirty = FALSE;
	return model;
}

static gboolean G_GNUC_PRINTF(4, 5)
load_fail(const Loader *ld, GError **error, StateError code, const char *format, ...)
{
	g_autofree char *what = NULL;
	va_list args;

	va_start(args, format);
	what = g_strdup_vprintf(format, args);
	va_end(args);
	g_set_error(error, STATE_ERROR, code, "%s:%" G_GUINT64_FORMAT ": %s",
		    ld->path, ld->lineno, what);
	return FALSE;
}

/* A field quoted for a message: escaped and cut short. */
static char *
quote_field(const char *field)
{
	g_autofree char *cut = g_strndup(field, 40);
	g_autofree char *escaped = g_strescape(cut, NULL);

	return g_strdup_printf("\"%s\"%s", escaped, strlen(field) > 40 ? "..." : "");
}

static gboolean
bad_field(const Loader *ld, GError **error, const char *name, const char *field)
{
	g_autofree char *quoted = quote_field(field);

	return load_fail(ld, error, STATE_ERROR_CORRUPT, "bad %s %s", name, quoted);
}

/*
 * Number parsers. The GLib functions skip leading blanks and accept a
 * sign; the format has neither (and strtoull would silently negate "-1"),
 * so the first character must be a digit (or '-' where negatives are
 * allowed), and the whole field must be consumed.
 */
/*
 * Digits only, as an unsigned number; FALSE if there is anything else, no
 * digit, or more than 2^64 - 1. (The loader reads hundreds of thousands
 * of these; strtoull's locale and base handling was a tenth of its time.)
 */
static gboolean
parse_digits(const char *s, guint64 *out)
{
	guint64 v = 0;

	if (!g_ascii_isdigit(*s))
		return FALSE;
	for (; *s; s++) {
		guint d = (guint)(*s - '0');

		if (!g_ascii_isdigit(*s) || v > (G_MAXUINT64 - d) / 10)
			return FALSE;
		v = v * 10 + d;
	}
	*out = v;
	return TRUE;
}

static gboolean
parse_int(const char *s, gint64 min, gint64 max, gint64 *out)
{
	gboolean negative = s[0] == '-';
	guint64 magnitude;
	gint64 v;

	if (!parse_digits(negative ? s + 1 : s, &magnitude))
		return FALSE;
	if (negative) {
		/* Down to G_MININT64, whose magnitude is G_MAXINT64 + 1. */
		if (magnitude > (guint64)G_MAXINT64 + 1)
			return FALSE;
		v = magnitude == (guint64)G_MAXINT64 + 1 ? G_MININT64 : -(gint64)magnitude;
	} else {
		if (magnitude > (guint64)G_MAXINT64)
			return FALSE;
		v = (gint64)magnitude;
	}
	if (v < min || v > max)
		return FALSE;
	*out = v;
	return TRUE;
}

static gboolean
parse_uint(const char *s, guint64 max, guint64 *out)
{
	guint64 v;

	if (!parse_digits(s, &v) || v > max)
		return FALSE;
	*out = v;
	return TRUE;
}

/*
 * Most reals in a state file are short: 0, whole counts, 7-digit aged
 * values. Those with at most 15 digits and no exponent are read without
 * strtod (the loader's main cost): the digits make an integer m < 10^15,
 * exact in a double, and m / 10^k for k <= 22 is one correctly rounded
 * division of exact values, the same double strtod returns. Anything else
 * (more digits, an exponent) returns FALSE for strtod to read.
 */
static gboolean
parse_short_double(const char *s, double *out)
{
	static const double pow10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
	};
	gboolean negative = *s == '-';
	guint64 m = 0;
	int digits = 0, decimals = -1;

	if (negative)
		s++;
	for (; *s; s++) {
		if (*s == '.' && decimals < 0) {
			decimals = 0;
			continue;
		}
		if (!g_ascii_isdigit(*s) || ++digits > 15)
			return FALSE;
		m = m * 10 + (guint64)(*s - '0');
		if (decimals >= 0)
			decimals++;
	}
	/* "5." is left to strtod. */
	if (digits == 0 || decimals == 0)
		return FALSE;
	*out = decimals > 0 ? (double)m / pow10[decimals] : (double)m;
	if (negative)
		*out = -*out;
	return TRUE;
}

static gboolean
parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!g_ascii_isdigit(s[0]) && !(s[0] == '-' && g_ascii_isdigit(s[1])))
		return FALSE;
	if (parse_short_double(s, &v)) {
		if (v < min || v > max)
			return FALSE;
		*out = v;
		return TRUE;
	}
	v = g_ascii_strtod(s, &end);
	/*
	 * Not errno: ERANGE also flags a harmless underflow to a tiny value;
	 * overflow shows as infinity.
	 */
	if (*end != '\0' || !isfinite(v) || v < min || v > max)
		return FALSE;
	*out = v;
	return TRUE;
}

static gboolean
field_int(const Loader *ld, const char *field, const char *name,
	  gint64 min, gint64 max, gint64 *out, GError **error)
{
	return parse_int(field, min, max, out) || bad_field(ld, error, name, field);
}

static gboolean
field_uint(const Loader *ld, const char *field, const char *name,
	   guint64 max, guint64 *out, GError **error)
{
	return parse_uint(field, max, out) || bad_field(ld, error, name, field);
}

static gboolean
field_double(const Loader *ld, const char *field, const char *name,
	     double min, double max, double *out, GError **error)
{
	return parse_double(field, min, max, out) || bad_field(ld, error, name, field);
}

/*
 * A real ≥ 0 held as a float: anything that rounds to a finite float, so
 * that the text of the largest float ("3.4028235e+38", a little above it
 * as a double) reads back.
 */
static gboolean
field_float(const Loader *ld, const char *field, const char *name, float *out, GError **error)
{
	double v;

	if (!parse_double(field, 0, G_MAXDOUBLE, &v) || !isfinite((float)v))
		return bad_field(ld, error, name, field);
	*out = (float)v;
	return TRUE;
}

static gboolean
field_index(const Loader *ld, const char *field, const char *name, gint *out, GError **error)
{
	gint64 v;

	if (!field_int(ld, field, name, 0, MAX_INDEX, &v, error))
		return FALSE;
	*out = (gint)v;
	return TRUE;
}

/* The absolute path of a "file:///..." URI, or NULL with an error. */
static char *
field_path(const Loader *ld, const char *uri, GError **error)
{
	g_autofree char *hostname = NULL;
	g_autofree char *path = g_filename_from_uri(uri, &hostname, NULL);
	g_autofree char *quoted = NULL;

	if (path && !hostname)
		return g_steal_pointer(&path);
	/* Quoted and escaped: the field may hold any byte but NUL and tab. */
	quoted = quote_field(uri);
	load_fail(ld, error, STATE_ERROR_CORRUPT, "%s %s",
		  path ? "file URI with a host name" : "bad file URI", quoted);
	return NULL;
}

/* FILE <idx> <dev> <ino> <size> <mtime> <uri> (version 2) */
static gboolean
load_file(Loader *ld, char **f, guint nf, GError **error)
{
	gint idx;
	guint64 dev, ino, size;
	gint64 mtime;
	FileRecord *rec;

	(void)nf;
	if (!field_index(ld, f[1], "file index", &idx, error) ||
	    !field_uint(ld, f[2], "device", G_MAXUINT64, &dev, error) ||
	    !field_uint(ld, f[3], "inode", G_MAXUINT64, &ino, error) ||
	    !field_uint(ld, f[4], "file size", G_MAXINT64, &size, error) ||
	    !field_int(ld, f[5], "modification time", G_MININT64 + 1, G_MAXINT64, &mtime, error))
		return FALSE;
	if (g_hash_table_contains(ld->files, GINT_TO_POINTER(idx)))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "duplicate file index %d", idx);

	rec = g_new0(FileRecord, 1);
	if (!(rec->path = field_path(ld, f[6], error))) {
		g_free(rec);
		return FALSE;
	}
	rec->id.dev = dev;
	rec->id.ino = ino;
	rec->id.size = size;
	rec->id.mtime = mtime;
	if (g_hash_table_contains(ld->file_keys, rec)) {
		file_record_free(rec);
		return load_fail(ld, error, STATE_ERROR_CORRUPT,
				 "duplicate file (same path and identity as another)");
	}
	g_hash_table_insert(ld->files, GINT_TO_POINTER(idx), rec);
	g_hash_table_add(ld->file_keys, rec);
	return TRUE;
}

/*
 * MAP <idx> <update_time> <offset> <length> <file idx>
 * (version 1: MAP <idx> <update_time> <offset> <length> <uri>;
 *  0.6.4: MAP <idx> <update_time> <offset> <length> -1 <uri>)
 */
static gboolean
load_map(Loader *ld, char **f, guint nf, GError **error)
{
	gint idx;
	gint64 update_time;
	guint64 offset, length;
	g_autofree char *path = NULL;
	FileRecord *file = NULL;
	Map *map;

	if (!field_index(ld, f[1], "map index", &idx, error) ||
	    !field_int(ld, f[2], "update time", -1, G_MAXINT64, &update_time, error) ||
	    !field_uint(ld, f[3], "offset", G_MAXINT64, &offset, error) ||
	    !field_uint(ld, f[4], "length", G_MAXINT64, &length, error))
		return FALSE;
	/* The range must be addressable with an off_t. */
	if (length > (guint64)G_MAXINT64 - offset)
		return load_fail(ld, error, STATE_ERROR_CORRUPT,
				 "map range %" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT
				 " is beyond the largest file offset", offset, length);
	if (ld->version >= STATE_VERSION_2) {
		gint file_idx;

		if (!field_index(ld, f[5], "file index", &file_idx, error))
			return FALSE;
		if (!(file = g_hash_table_lookup(ld->files, GINT_TO_POINTER(file_idx))))
			return load_fail(ld, error, STATE_ERROR_CORRUPT,
					 "unknown file index %d", file_idx);
	} else if (!(path = field_path(ld, f[nf - 1], error))) {
		return FALSE;
	}
	if (g_hash_table_contains(ld->maps, GINT_TO_POINTER(idx)))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "duplicate map index %d", idx);

	/*
	 * The maps of one file share its path: at 1,000 executables 5,799
	 * maps name 1,566 files. The first map lives until the load ends.
	 */
	if (file && file->first_map)
		map = map_new_same_file(file->first_map, offset, length, update_time);
	else
		map = map_new(file ? file->path : path, offset, length, update_time);
	if (file)
		map->file = file->id;
	if (g_hash_table_contains(ld->map_keys, map)) {
		map_free(map);
		return load_fail(ld, error, STATE_ERROR_CORRUPT,
				 "duplicate map (same file, offset and length as another)");
	}
	if (file && !file->first_map)
		file->first_map = map;
	map->state.seq = (guint)idx;
	g_hash_table_insert(ld->maps, GINT_TO_POINTER(idx), map);
	g_hash_table_add(ld->map_keys, map);
	return TRUE;
}

/*
 * EXE <idx> <update_time> <time> <uri>
 * (0.6.4: EXE <idx> <update_time> <time> -1 <uri>)
 */
static gboolean
load_exe(Loader *ld, char **f, guint nf, GError **error)
{
	gint idx;
	gint64 update_time;
	double time;
	guint64 dev = 0, ino = 0;
	g_autofree char *path = NULL;
	Exe *exe;

	if (!field_index(ld, f[1], "exe index", &idx, error) ||
	    !field_int(ld, f[2], "update time", -1, G_MAXINT64, &update_time, error) ||
	    !field_double(ld, f[3], "exe time", 0, G_MAXDOUBLE, &time, error))
		return FALSE;
	/* Older files: unknown until the program is seen running again. */
	if (!ld->legacy && ld->version >= STATE_VERSION_4 &&
	    (!field_uint(ld, f[4], "exe device", G_MAXUINT64, &dev, error) ||
	     !field_uint(ld, f[5], "exe inode", G_MAXUINT64, &ino, error)))
		return FALSE;
	if (!(path = field_path(ld, f[nf - 1], error)))
		return FALSE;
	if (g_hash_table_contains(ld->exes, GINT_TO_POINTER(idx)))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "duplicate exe index %d", idx);
	if (model_lookup_exe(ld->model, path))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "duplicate exe (same path as another)");

	/* Not running: the first scan after loading decides that. */
	exe = exe_new(path, FALSE, ld->model->time);
	exe->update_time = update_time;
	exe->time = time;
	exe->file.dev = dev;
	exe->file.ino = ino;
	exe->seq = (guint)idx;
	/* Chains come from the file, so none are made here. */
	model_add_exe(ld->model, exe, ld->model->time, FALSE);
	g_hash_table_insert(ld->exes, GINT_TO_POINTER(idx), exe);
	return TRUE;
}

/*
 * EXEMAP <exe idx> <map idx> <prob> <origin> <count>: the exe uses the
 * maps map idx .. map idx + count - 1, each with probability prob, learned
 * the way origin says
 * (version 1 and 0.6.4: EXEMAP <exe idx> <map idx> <prob>, one mapped map)
 */
static gboolean
load_exemap(Loader *ld, char **f, guint nf, GError **error)
{
	gint exe_idx, map_idx;
	gint64 origin = EXEMAP_MAPPED;
	gint64 count = 1;
	double prob;
	Exe *exe;

	if (!field_index(ld, f[1], "exe index", &exe_idx, error) ||
	    !field_index(ld, f[2], "map index", &map_idx, error) ||
	    !field_double(ld, f[3], "probability", 0, 1, &prob, error))
		return FALSE;
	if (ld->version >= STATE_VERSION_2 &&
	    (!field_int(ld, f[4], "map origin", EXEMAP_MAPPED, EXEMAP_READ, &origin, error) ||
	     !field_int(ld, f[5], "map count", 1, MAX_INDEX, &count, error)))
		return FALSE;
	if (!(exe = g_hash_table_lookup(ld->exes, GINT_TO_POINTER(exe_idx))))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "unknown exe index %d", exe_idx);
	if (count - 1 > MAX_INDEX - map_idx)
		return load_fail(ld, error, STATE_ERROR_CORRUPT,
				 "map run %d+%" G_GINT64_FORMAT " is beyond the largest index",
				 map_idx, count);

	for (gint64 i = 0; i < count; i++) {
		gint idx = map_idx + (gint)i;
		Map *map = g_hash_table_lookup(ld->maps, GINT_TO_POINTER(idx));
		guint before;

		if (!map)
			return load_fail(ld, error, STATE_ERROR_CORRUPT, "unknown map index %d", idx);
		/*
		 * exe_add_map() ignores a second use of the same map; that is a
		 * bad file, except from 0.6.4, which can write the same EXEMAP
		 * twice (bookworm's 0.6.4 gave make libdl.so.2's 4 KB at offset
		 * 8192 twice): the import keeps one.
		 */
		before = exe->exemaps->len;
		exe_add_map_origin(ld->model, exe, map, prob, (ExeMapOrigin)origin);
		if (exe->exemaps->len == before && !ld->legacy)
			return load_fail(ld, error, STATE_ERROR_CORRUPT,
					 "duplicate use of map %d by exe %d", idx, exe_idx);
	}
	return TRUE;
}

/*
 * Whether a 0.6.4 chain tells more than its two programs' own counts.
 * 0.6.4 kept a chain for every pair and fed every chain every start and
 * stop: a pair that never ran together and never handed over (one
 * stopping as the other started, in the same scan) has in its chain only
 * each program's own starts, stops and sojourns, which the programs
 * themselves hold (Exe.time, Exe.starts), and a chain made for the pair
 * later starts from exactly those (model_link_exe()'s backfill). Such a
 * pair is one the daemon's own sparse model would never have linked.
 */
static gboolean
import_informative(const Markov *m)
{
	const float (*w)[4] = m->weight;

	return m->time > 0 || w[MARKOV_NEITHER][MARKOV_BOTH] > 0 ||
	       w[MARKOV_A][MARKOV_BOTH] > 0 || w[MARKOV_B][MARKOV_BOTH] > 0 ||
	       w[MARKOV_BOTH][MARKOV_NEITHER] > 0 || w[MARKOV_BOTH][MARKOV_A] > 0 ||
	       w[MARKOV_BOTH][MARKOV_B] > 0 ||
	       w[MARKOV_A][MARKOV_B] > 0 || w[MARKOV_B][MARKOV_A] > 0;
}

/* Whether a chain of this score gets into the list: it has room, or a weaker one. */
static gboolean
import_top_admits(const ImportTop *top, double score)
{
	if (!top || top->n < STATE_IMPORT_CHAINS_PER_EXE)
		return TRUE;
	for (guint i = 0; i < top->n; i++) {
		if (top->score[i] < score)
			return TRUE;
	}
	return FALSE;
}

/* exe's list, made if it has none and `make`; NULL if not. */
static ImportTop *
import_top_of(Loader *ld, Exe *exe, gboolean make)
{
	guint slot = GPOINTER_TO_UINT(g_hash_table_lookup(ld->import_slot, exe));

	if (slot > 0)
		return &ld->import_tops[slot - 1];
	if (!make)
		return NULL;
	if (!ld->import_tops) {
		/*
		 * One block for every exe of the file (the EXEs come before the
		 * chains), so the chains kept are copied out in one go at the
		 * end and the block is given back whole: made and freed one by
		 * one, 500,000 chains left their holes all over the heap.
		 */
		ld->import_tops = g_new0(ImportTop, MAX(g_hash_table_size(ld->exes), 1));
	}
	g_return_val_if_fail(ld->n_import_tops < g_hash_table_size(ld->exes), NULL);
	g_hash_table_insert(ld->import_slot, exe, GUINT_TO_POINTER(ld->n_import_tops + 1));
	return &ld->import_tops[ld->n_import_tops++];
}

/* Puts a copy of m into the list, which import_top_admits() allowed, over its weakest. */
static void
import_top_insert(ImportTop *top, const Markov *m, double score)
{
	guint at = top->n;

	if (top->n < STATE_IMPORT_CHAINS_PER_EXE) {
		top->n++;
	} else {
		/* The weakest; of equals, the first read. */
		at = 0;
		for (guint i = 1; i < top->n; i++) {
			if (top->score[i] < top->score[at])
				at = i;
		}
	}
	top->chain[at] = *m;
	top->score[at] = score;
}

/*
 * A chain of a 0.6.4 file, read into `probe` (a, b, time, sojourns and
 * weights; nothing else set): a candidate if it carries information
 * (import_informative()) and is among the STATE_IMPORT_CHAINS_PER_EXE
 * most correlated chains (|rho|, see markov_correlation()) of either of
 * its programs so far. import_keep_chains() makes the model's chains
 * from the lists once the file is read: at most that many per program,
 * never the file's N(N-1)/2.
 *
 * Why |rho|: it is the phi coefficient of the pair's 2x2 table of running
 * times, sqrt(chi^2 / t) of the test of independence, so the strength of
 * the evidence that the two programs are linked; and the prophet damps
 * every bid of the chain by it (usecorrelation), so it ranks the chains
 * by how much their bids can count.
 *
 * Every chain read, kept or not, adds to its programs' start counts
 * (Exe.starts, the most any of their chains recorded, as
 * model_count_starts() takes them): 0.6.4 held them only in the chains.
 */
static void
import_chain(Loader *ld, const Markov *probe)
{
	Exe *exe[2] = { probe->a, probe->b };
	double score;

	probe->a->starts = MAX(probe->a->starts, markov_starts_of(probe, MARKOV_A));
	probe->b->starts = MAX(probe->b->starts, markov_starts_of(probe, MARKOV_B));
	if (!import_informative(probe))
		return;
	score = fabs(markov_correlation(ld->model, probe));
	for (int i = 0; i < 2; i++) {
		ImportTop *top = import_top_of(ld, exe[i], FALSE);

		if (import_top_admits(top, score) && (top || (top = import_top_of(ld, exe[i], TRUE))))
			import_top_insert(top, probe, score);
	}
}

/*
 * The chains of the lists into the model, each once (a chain in both of
 * its programs' lists is in two). No exe runs yet, so a chain starts in
 * state 0 at the model time; the first scan moves it to the pair's real
 * state.
 */
static void
import_keep_chains(Loader *ld)
{
	for (guint i = 0; i < ld->n_import_tops; i++) {
		const ImportTop *top = &ld->import_tops[i];

		for (guint k = 0; k < top->n; k++) {
			const Markov *c = &top->chain[k];
			Markov *markov;

			if (model_lookup_chain(ld->model, c->a, c->b))
				continue;
			markov = markov_new(ld->model, c->a, c->b, ld->model->time, MARKOV_START_BLANK);
			markov->time = c->time;
			memcpy(markov->time_to_leave, c->time_to_leave, sizeof(markov->time_to_leave));
			memcpy(markov->weight, c->weight, sizeof(markov->weight));
		}
	}
	g_clear_pointer(&ld->import_tops, g_free);
	ld->n_import_tops = 0;
	g_hash_table_remove_all(ld->import_slot);
}

/*
 * MARKOV <a idx> <b idx> <time> <tau0..tau3> <w01 w02 w03 w10 w12 w13 w20 w21 w23 w30 w31 w32>
 * Every departure from s goes somewhere, so W[s][s] is the sum of the
 * row and is not written.
 * (version 1 and 0.6.4: all 16 weights, w00 w01 ... w33)
 */
static gboolean
load_markov(Loader *ld, char **f, guint nf, GError **error)
{
	gint a_idx, b_idx;
	double time;
	float tau[4], weight[4][4] = { { 0 } };
	Markov *markov;
	Exe *a, *b;

	(void)nf;
	if (!field_index(ld, f[1], "exe index", &a_idx, error) ||
	    !field_index(ld, f[2], "exe index", &b_idx, error) ||
	    !field_double(ld, f[3], "chain time", 0, G_MAXDOUBLE, &time, error))
		return FALSE;
	/* Sojourns and weights are held as floats (model.h). */
	for (int s = 0; s < 4; s++) {
		if (!field_float(ld, f[4 + s], "mean sojourn", &tau[s], error))
			return FALSE;
	}
	if (ld->version >= STATE_VERSION_2) {
		int field = 8;

		for (int s = 0; s < 4; s++) {
			for (int t = 0; t < 4; t++) {
				if (t == s)
					continue;
				if (!field_float(ld, f[field++], "weight", &weight[s][t], error))
					return FALSE;
			}
		}
	} else {
		for (int i = 0; i < 16; i++) {
			if (!field_float(ld, f[8 + i], "weight", &weight[i / 4][i % 4], error))
				return FALSE;
		}
	}
	/*
	 * Version 2 leaves the diagonal out: it is the sum of its row, added
	 * in float as the chain adds it. Version 1 writes it, but a save
	 * writes version 2, so a row whose sum a float cannot hold is refused
	 * in both: it would not read back.
	 */
	for (int s = 0; s < 4; s++) {
		float sum = 0;

		for (int t = 0; t < 4; t++) {
			if (t != s)
				sum += weight[s][t];
		}
		if (!isfinite(sum))
			return load_fail(ld, error, STATE_ERROR_CORRUPT,
					 "weights out of range in chain %d-%d", a_idx, b_idx);
		if (ld->version >= STATE_VERSION_2)
			weight[s][s] = sum;
	}
	if (!(a = g_hash_table_lookup(ld->exes, GINT_TO_POINTER(a_idx))))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "unknown exe index %d", a_idx);
	if (!(b = g_hash_table_lookup(ld->exes, GINT_TO_POINTER(b_idx))))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "unknown exe index %d", b_idx);
	if (a == b)
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "chain of exe %d with itself", a_idx);
	/*
	 * (A 0.6.4 import makes its chains once the file is read, so a pair
	 * written twice is not found here; 0.6.4 wrote each pair once, and
	 * import_keep_chains() makes a pair's chain once.)
	 */
	if (model_lookup_chain(ld->model, a, b))
		return load_fail(ld, error, STATE_ERROR_CORRUPT,
				 "duplicate chain for exes %d and %d", a_idx, b_idx);
	if (ld->legacy) {
		Markov probe = { .a = a, .b = b, .time = time };

		memcpy(probe.time_to_leave, tau, sizeof(tau));
		memcpy(probe.weight, weight, sizeof(weight));
		import_chain(ld, &probe);
		return TRUE;
	}

	/*
	 * No exe runs yet, so the chain starts in state 0 at the model time;
	 * the first scan moves it to the pair's real state.
	 */
	markov = markov_new(ld->model, a, b, ld->model->time, MARKOV_START_BLANK);
	markov->time = time;
	memcpy(markov->time_to_leave, tau, sizeof(tau));
	memcpy(markov->weight, weight, sizeof(weight));
	return TRUE;
}

/* HITS <exe idx> <starts> <checks> <bytes> <prefetched> <probed> <resident> */
static gboolean
load_hits(Loader *ld, char **f, guint nf, GError **error)
{
	static const char *const names[6] = {
		"start count", "check count", "byte count", "prefetched byte count",
		"probed byte count", "resident byte count",
	};
	guint64 v[6];
	gint idx;
	Exe *exe;

	(void)nf;
	if (!field_index(ld, f[1], "exe index", &idx, error))
		return FALSE;
	for (int i = 0; i < 6; i++) {
		if (!field_uint(ld, f[2 + i], names[i], G_MAXUINT64, &v[i], error))
			return FALSE;
	}
	if (!(exe = g_hash_table_lookup(ld->exes, GINT_TO_POINTER(idx))))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "unknown exe index %d", idx);
	if (exe->hits.starts || exe->hits.checks || exe->hits.bytes || exe->hits.probed)
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "duplicate hits of exe %d", idx);
	/* Parts never exceed their whole; a file that says so was not written by us. */
	if (v[1] > v[0] || v[3] > v[2] || v[5] > v[4] || v[4] > v[2])
		return load_fail(ld, error, STATE_ERROR_CORRUPT,
				 "inconsistent hits of exe %d (a part exceeds its whole)", idx);
	if (v[0] == 0)
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "hits of exe %d without starts", idx);
	exe->hits.starts = v[0];
	exe->hits.checks = v[1];
	exe->hits.bytes = v[2];
	exe->hits.prefetched = v[3];
	exe->hits.probed = v[4];
	exe->hits.resident = v[5];
	return TRUE;
}

/*
 * BADEXE <time checked> <size> <uri>
 * (0.6.4: BADEXE <size> -1 <uri>, which 0.6.4 itself never loaded)
 */
static gboolean
load_badexe(Loader *ld, char **f, guint nf, GError **error)
{
	gint64 time;
	guint64 size;
	g_autofree char *path = NULL;

	(void)nf;
	if (ld->legacy)
		return TRUE;
	if (!field_int(ld, f[1], "check time", 0, G_MAXINT64, &time, error) ||
	    !field_uint(ld, f[2], "size", G_MAXUINT64, &size, error))
		return FALSE;
	if (!(path = field_path(ld, f[3], error)))
		return FALSE;
	if (g_hash_table_contains(ld->model->bad_exes, path))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "duplicate bad exe (same path as another)");

	model_add_bad_exe(ld->model, path, size, time);
	return TRUE;
}

/* START <exe idx> <starts> <successions> <quiet starts> (version 3) */
static gboolean
load_start(Loader *ld, char **f, guint nf, GError **error)
{
	gint idx;
	double starts, succ_total, quiet_starts;
	Exe *exe;

	(void)nf;
	if (!field_index(ld, f[1], "exe index", &idx, error) ||
	    !field_double(ld, f[2], "start count", 0, G_MAXDOUBLE, &starts, error) ||
	    !field_double(ld, f[3], "succession count", 0, G_MAXDOUBLE, &succ_total, error) ||
	    !field_double(ld, f[4], "quiet start count", 0, G_MAXDOUBLE, &quiet_starts, error))
		return FALSE;
	if (!(exe = g_hash_table_lookup(ld->exes, GINT_TO_POINTER(idx))))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "unknown exe index %d", idx);
	if (!g_hash_table_add(ld->started, exe))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "duplicate starts of exe %d", idx);
	exe->starts = starts;
	exe->succ_total = succ_total;
	exe->quiet_starts = quiet_starts;
	if (quiet_starts > 0)
		g_ptr_array_add(ld->model->quiet_exes, exe);
	return TRUE;
}

/* SUCC <exe idx> <next exe idx> <count> <chances> (version 3) */
static gboolean
load_succ(Loader *ld, char **f, guint nf, GError **error)
{
	gint idx, next_idx;
	ExeSucc succ;
	Exe *exe;

	(void)nf;
	if (!field_index(ld, f[1], "exe index", &idx, error) ||
	    !field_index(ld, f[2], "exe index", &next_idx, error) ||
	    !field_float(ld, f[3], "successor count", &succ.count, error) ||
	    !field_float(ld, f[4], "successor chances", &succ.chances, error))
		return FALSE;
	if (!(exe = g_hash_table_lookup(ld->exes, GINT_TO_POINTER(idx))))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "unknown exe index %d", idx);
	if (!(succ.next = g_hash_table_lookup(ld->exes, GINT_TO_POINTER(next_idx))))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "unknown exe index %d", next_idx);
	if (succ.next == exe)
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "exe %d as its own successor", idx);
	/* Every start it followed was a chance to. */
	if (succ.count > succ.chances)
		return load_fail(ld, error, STATE_ERROR_CORRUPT,
				 "successor %d of exe %d has more starts than chances", next_idx, idx);
	for (guint i = 0; i < exe->succ->len; i++) {
		if (g_array_index(exe->succ, ExeSucc, i).next == succ.next)
			return load_fail(ld, error, STATE_ERROR_CORRUPT,
					 "duplicate successor %d of exe %d", next_idx, idx);
	}
	if (exe->succ->len >= MODEL_MAX_SUCCESSORS)
		return load_fail(ld, error, STATE_ERROR_CORRUPT,
				 "exe %d has more than %d successors", idx, MODEL_MAX_SUCCESSORS);
	/* In the file's order, which is the model's. */
	exe_append_succ(exe, &succ);
	return TRUE;
}

/*
 * ORDER <last start exe idx, -1 none> <last start time> <start gaps> <n>
 *       <soon gaps> <n> <quiet gaps> <n> <quiet total> (version 3)
 */
static gboolean
load_order(Loader *ld, char **f, guint nf, GError **error)
{
	static const char *const names[7] = {
		"start gaps", "start gap count", "soon gaps", "soon gap count",
		"quiet gaps", "quiet gap count", "quiet start total",
	};
	Model *model = ld->model;
	double *const sums[7] = {
		&model->start_gaps, &model->n_start_gaps, &model->soon_gaps, &model->n_soon_gaps,
		&model->quiet_gaps, &model->n_quiet_gaps, &model->quiet_total,
	};
	gint64 idx, time;

	(void)nf;
	if (ld->have_order)
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "duplicate ORDER record");
	ld->have_order = TRUE;
	if (!field_int(ld, f[1], "exe index", -1, MAX_INDEX, &idx, error) ||
	    !field_int(ld, f[2], "last start time", G_MININT64 + 1, G_MAXINT64, &time, error))
		return FALSE;
	for (int i = 0; i < 7; i++) {
		if (!field_double(ld, f[3 + i], names[i], 0, G_MAXDOUBLE, sums[i], error))
			return FALSE;
	}
	if (idx >= 0 && !(model->last_start = g_hash_table_lookup(ld->exes, GINT_TO_POINTER((gint)idx))))
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "unknown exe index %" G_GINT64_FORMAT, idx);
	model->last_start_time = time;
	return TRUE;
}

/*
 * EXPERTS <frequency weight> (version 5): the weight the prophet gives
 * ranking by frequency (Model.freq_weight), learned over a few hundred
 * starts. Without the record it starts at MODEL_FREQ_WEIGHT. A weight
 * outside the bounds the model keeps it in was not written by preload:
 * the file is corrupt, as with any other value out of range.
 */
static gboolean
load_experts(Loader *ld, char **f, guint nf, GError **error)
{
	(void)nf;
	if (ld->have_experts)
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "duplicate EXPERTS record");
	ld->have_experts = TRUE;
	return field_double(ld, f[1], "frequency weight", MODEL_FREQ_MIN, 1 - MODEL_FREQ_MIN,
			    &ld->model->freq_weight, error);
}

/* ---- saving ---- */

/*
 * A value the loader accepts. The model never produces anything else,
 * but one NaN from a bug must not make the whole file unloadable and
 * lose everything at the next start.
 */
static double
saveable(double v, double min, double max)
{
	if (!isfinite(v))
		return min;
	return CLAMP(v, min, max);
}

static void
append_double(GString *out, double v)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	g_string_append_c(out, '\t');
	/*
	 * Text that reads back as the very same double, short when it can
	 * be: aged values are rounded to 7 significant digits (model_age()),
	 * and their 17-digit form would double the size of the file.
	 */
	if (v == 0 && !signbit(v)) {
		g_string_append_c(out, '0');
		return;
	}
	g_ascii_formatd(buf, sizeof(buf), "%.7g", v);
	if (g_ascii_strtod(buf, NULL) != v || strchr(buf, 'e'))
		g_ascii_dtostr(buf, sizeof(buf), v);
	g_string_append(out, buf);
}

/*
 * The same for a float (a chain's sojourns and weights): the shortest of
 * 7, 8 and 9 significant digits that reads back as the very same float;
 * 9 always does. An aged value, rounded to 7 digits, takes 7.
 */
static void
append_float(GString *out, float v)
{
	static const char *const formats[] = { "%.7g", "%.8g", "%.9g" };
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	g_string_append_c(out, '\t');
	if (v == 0 && !signbit(v)) {
		g_string_append_c(out, '0');
		return;
	}
	for (guint i = 0; i < G_N_ELEMENTS(formats); i++) {
		g_ascii_formatd(buf, sizeof(buf), formats[i], v);
		if ((float)g_ascii_strtod(buf, NULL) == v)
			break;
	}
	g_string_append(out, buf);
}

/*
 * v aged from model->aged_time to the model time, as the next model_age()
 * would: the file holds every value as of its header's time, however long
 * ago the daemon last aged the model (a short session may never reach its
 * first hourly aging).
 */
static double
aged(const Model *model, double v)
{
	gint64 elapsed = model->time - model->aged_time;

	if (model->params.halflife <= 0 || elapsed <= 0)
		return v;
	return model_age_value(v, elapsed, model->params.halflife);
}

static int
compare_exes_by_path(gconstpointer pa, gconstpointer pb)
{
	const Exe *a = *(Exe *const *)pa, *b = *(Exe *const *)pb;

	return strcmp(a->path, b->path);
}

static int
compare_strings(gconstpointer pa, gconstpointer pb)
{
	return strcmp(*(const char *const *)pa, *(const char *const *)pb);
}

static gboolean
write_all(int fd, const char *buf, gsize len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return FALSE;
		}
		if (n == 0) {
			/* Should not happen for a regular file; do not spin. */
			errno = EIO;
			return FALSE;
		}
		buf += n;
		len -= (gsize)n;
	}
	return TRUE;
}

/*
 * A save on its way to the file, written out a chunk at a time: holding
 * the whole text took as much memory again as a quarter of the model
 * (2 MB at 1,000 exes) at every save. Everything written is also hashed
 * for the END line. The first write error is kept and later writes are
 * skipped, so the formatting code need not check each line.
 */
typedef struct StateWriter {
	GString *buf;
	int fd;
	GChecksum *checksum;
	int err;
} StateWriter;

#define STATE_WRITE_CHUNK (64 * 1024)

static void
writer_flush(StateWriter *w)
{
	if (w->buf->len == 0)
		return;
	g_checksum_update(w->checksum, (const guchar *)w->buf->str, (gssize)w->buf->len);
	if (w->err == 0 && !write_all(w->fd, w->buf->str, w->buf->len))
		w->err = errno ? errno : EIO;
	g_string_truncate(w->buf, 0);
}

/* After each record: writes once a chunk's worth is waiting. */
static void
writer_line_done(StateWriter *w)
{
	if (w->buf->len >= STATE_WRITE_CHUNK)
		writer_flush(w);
}

/*
 * What a save writes, numbered before anything is written: records refer
 * to each other by these indices, and a FILE must be numbered before the
 * MAPs that refer to it. An exe or map whose path g_filename_to_uri()
 * refuses (not absolute; never made by the scanner) is left out with
 * everything that refers to it, rather than failing the save; it keeps
 * the seq NOT_WRITTEN.
 */
#define NOT_WRITTEN G_MAXUINT

typedef struct SavePlan {
	/*
	 * The plan holds no copy of a path or URI: at 1,000 executables
	 * they were 0.6 MB more heap at every save. A path whose URI was
	 * made once is made again, the same, as its line is written.
	 */
	GPtrArray *exes;       /* Exe * written, in path order: seq = index */
	GPtrArray *files;      /* FileRecord * by index (its path the map's), owned by file_seqs */
	GHashTable *file_seqs; /* FileRecord * -> its index */
	GPtrArray *maps;       /* Map * by index */
	GArray *map_files;     /* guint: the FILE index of each map */
} SavePlan;

static void
save_plan_clear(SavePlan *plan)
{
	g_clear_pointer(&plan->exes, g_ptr_array_unref);
	g_clear_pointer(&plan->files, g_ptr_array_unref);
	g_clear_pointer(&plan->file_seqs, g_hash_table_unref);
	g_clear_pointer(&plan->maps, g_ptr_array_unref);
	g_clear_pointer(&plan->map_files, g_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(SavePlan, save_plan_clear)

/*
 * The FILE index of map's file, numbering it if it is new; FALSE if its
 * path has no URI.
 */
static gboolean
plan_file(SavePlan *plan, const Map *map, guint *file_seq)
{
	FileRecord probe = { map->path, map->file, NULL };
	FileRecord *rec;
	gpointer seq;
	g_autofree char *uri = NULL;

	if (g_hash_table_lookup_extended(plan->file_seqs, &probe, NULL, &seq)) {
		*file_seq = GPOINTER_TO_UINT(seq);
		return TRUE;
	}
	if (!(uri = g_filename_to_uri(map->path, NULL, NULL)))
		return FALSE;
	rec = g_new0(FileRecord, 1);
	rec->path = map->path;
	rec->id = map->file;
	*file_seq = plan->files->len;
	g_hash_table_insert(plan->file_seqs, rec, GUINT_TO_POINTER(*file_seq));
	g_ptr_array_add(plan->files, rec);
	return TRUE;
}

/*
 * Exes in path order, so that the same model always gives the same file.
 * MAPs: only those some exe uses (written or not: its maps are still
 * worth keeping), numbered in order of first use, each pointing at the
 * FILE (path and identity) it is a range of: a library's segments share
 * one FILE line, so its path is written once.
 */
static void
save_plan_init(SavePlan *plan, const Model *model)
{
	g_autoptr(GPtrArray) all = g_ptr_array_sized_new(g_hash_table_size(model->exes));
	GHashTableIter iter;
	gpointer value;

	plan->exes = g_ptr_array_new();
	plan->files = g_ptr_array_new();
	plan->file_seqs = g_hash_table_new_full(file_record_hash, file_record_equal, g_free, NULL);
	plan->maps = g_ptr_array_new();
	plan->map_files = g_array_new(FALSE, FALSE, sizeof(guint));

	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		g_ptr_array_add(all, value);
	g_ptr_array_sort(all, compare_exes_by_path);

	/* Forget seq numbers of earlier saves. */
	for (guint i = 0; i < all->len; i++) {
		Exe *exe = g_ptr_array_index(all, i);

		exe->seq = NOT_WRITTEN;
		for (guint j = 0; j < exe->exemaps->len; j++)
			g_array_index(exe->exemaps, ExeMap, j).map->state.seq = NOT_WRITTEN;
	}

	for (guint i = 0; i < all->len; i++) {
		Exe *exe = g_ptr_array_index(all, i);

		for (guint j = 0; j < exe->exemaps->len; j++) {
			Map *map = g_array_index(exe->exemaps, ExeMap, j).map;
			guint file_seq;

			if (map->state.seq != NOT_WRITTEN || !plan_file(plan, map, &file_seq))
				continue;
			map->state.seq = plan->maps->len;
			g_ptr_array_add(plan->maps, map);
			g_array_append_val(plan->map_files, file_seq);
		}
	}

	for (guint i = 0; i < all->len; i++) {
		Exe *exe = g_ptr_array_index(all, i);
		g_autofree char *uri = g_filename_to_uri(exe->path, NULL, NULL);

		if (!uri)
			continue;
		exe->seq = plan->exes->len;
		g_ptr_array_add(plan->exes, exe);
	}
}

/* A save in progress: the writer, the model and what of it is written. */
typedef struct Saver {
	StateWriter *w;
	const Model *model;
	const SavePlan *plan;
	guint64 records;        /* record lines written, for the END line */
} Saver;

/* After each record line. */
static void
saver_record_done(Saver *s)
{
	s->records++;
	writer_line_done(s->w);
}

/* FILE: see load_file(). */
static void
save_files(Saver *s)
{
	for (guint i = 0; i < s->plan->files->len; i++) {
		const FileRecord *rec = g_ptr_array_index(s->plan->files, i);
		g_autofree char *uri = g_filename_to_uri(rec->path, NULL, NULL);

		g_string_append_printf(s->w->buf, "FILE\t%u\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT
				       "\t%" G_GUINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%s\n", i,
				       rec->id.dev, rec->id.ino, MIN(rec->id.size, (guint64)G_MAXINT64),
				       MAX(rec->id.mtime, G_MININT64 + 1), uri);
		saver_record_done(s);
	}
}

/* MAP: see load_map(). */
static void
save_maps(Saver *s)
{
	for (guint i = 0; i < s->plan->maps->len; i++) {
		const Map *map = g_ptr_array_index(s->plan->maps, i);
		guint64 offset = MIN(map->offset, (guint64)G_MAXINT64);
		guint64 length = MIN(map->length, (guint64)G_MAXINT64 - offset);

		g_string_append_printf(s->w->buf, "MAP\t%u\t%" G_GINT64_FORMAT "\t%" G_GUINT64_FORMAT
				       "\t%" G_GUINT64_FORMAT "\t%u\n",
				       map->state.seq, MAX(map->update_time, -1), offset, length,
				       g_array_index(s->plan->map_files, guint, i));
		saver_record_done(s);
	}
}

/* EXE: see load_exe(). */
static void
save_exes(Saver *s)
{
	for (guint i = 0; i < s->plan->exes->len; i++) {
		const Exe *exe = g_ptr_array_index(s->plan->exes, i);
		g_autofree char *uri = g_filename_to_uri(exe->path, NULL, NULL);

		g_string_append_printf(s->w->buf, "EXE\t%u\t%" G_GINT64_FORMAT, exe->seq,
				       MAX(exe->update_time, -1));
		append_double(s->w->buf, saveable(aged(s->model, exe->time), 0, G_MAXDOUBLE));
		g_string_append_printf(s->w->buf, "\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT "\t%s\n",
				       exe->file.dev, exe->file.ino, uri);
		saver_record_done(s);
	}
}

/*
 * EXEMAP: see load_exemap(). Runs of uses of consecutive maps with the
 * same probability and origin make one line: maps are numbered in order
 * of first use, so an exe's own maps, and a library's segments, mostly
 * are consecutive.
 */
static void
save_exemaps(Saver *s)
{
	for (guint i = 0; i < s->plan->exes->len; i++) {
		const Exe *exe = g_ptr_array_index(s->plan->exes, i);

		for (guint j = 0; j < exe->exemaps->len;) {
			const ExeMap *em = &g_array_index(exe->exemaps, ExeMap, j);
			float prob = (float)saveable(em->prob, 0, 1);
			guint count = 1;

			if (em->map->state.seq == NOT_WRITTEN) {
				j++;
				continue;
			}
			while (j + count < exe->exemaps->len) {
				const ExeMap *next = &g_array_index(exe->exemaps, ExeMap, j + count);

				if (next->map->state.seq != em->map->state.seq + count ||
				    (float)saveable(next->prob, 0, 1) != prob || next->origin != em->origin)
					break;
				count++;
			}
			g_string_append_printf(s->w->buf, "EXEMAP\t%u\t%u", exe->seq, em->map->state.seq);
			append_float(s->w->buf, prob);
			g_string_append_printf(s->w->buf, "\t%d\t%u\n",
					       em->origin == EXEMAP_READ ? 1 : 0, count);
			saver_record_done(s);
			j += count;
		}
	}
}

/*
 * MARKOV: see load_markov(). Every chain is in both of its exes' lists:
 * it is written from its a side.
 */
static void
save_chains(Saver *s)
{
	for (guint i = 0; i < s->plan->exes->len; i++) {
		const Exe *exe = g_ptr_array_index(s->plan->exes, i);

		for (guint j = 0; j < exe->chains->len; j++) {
			const Markov *m = g_ptr_array_index(exe->chains, j);
			GString *out = s->w->buf;

			if (m->a != exe || m->b->seq == NOT_WRITTEN)
				continue;
			g_string_append_printf(out, "MARKOV\t%u\t%u", m->a->seq, m->b->seq);
			append_double(out, saveable(aged(s->model, m->time), 0, G_MAXDOUBLE));
			for (int st = 0; st < 4; st++)
				append_float(out, (float)saveable(m->time_to_leave[st], 0, G_MAXFLOAT));
			/* The diagonal is the sum of its row: not written. */
			for (int st = 0; st < 4; st++) {
				for (int t = 0; t < 4; t++) {
					if (t != st)
						append_float(out, (float)saveable(aged(s->model, m->weight[st][t]),
										  0, G_MAXFLOAT));
				}
			}
			g_string_append_c(out, '\n');
			saver_record_done(s);
		}
	}
}

/* HITS: see load_hits(). Only exes with starts: most programs of a maps scanner have none. */
static void
save_hits(Saver *s)
{
	for (guint i = 0; i < s->plan->exes->len; i++) {
		const Exe *exe = g_ptr_array_index(s->plan->exes, i);
		ExeHits h = exe->hits;

		if (h.starts == 0)
			continue;
		/* What the loader checks, whatever a bug or a saturation did. */
		h.checks = MIN(h.checks, h.starts);
		h.prefetched = MIN(h.prefetched, h.bytes);
		h.probed = MIN(h.probed, h.bytes);
		h.resident = MIN(h.resident, h.probed);
		g_string_append_printf(s->w->buf, "HITS\t%u\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT
				       "\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT
				       "\t%" G_GUINT64_FORMAT "\n", exe->seq, h.starts, h.checks,
				       h.bytes, h.prefetched, h.probed, h.resident);
		saver_record_done(s);
	}
}

/* BADEXE: see load_badexe(). In path order, like the exes. */
static void
save_bad_exes(Saver *s)
{
	g_autoptr(GPtrArray) paths = g_ptr_array_new();
	GHashTableIter iter;
	gpointer key;

	g_hash_table_iter_init(&iter, s->model->bad_exes);
	while (g_hash_table_iter_next(&iter, &key, NULL))
		g_ptr_array_add(paths, key);
	g_ptr_array_sort(paths, compare_strings);
	for (guint i = 0; i < paths->len; i++) {
		const char *path = g_ptr_array_index(paths, i);
		const BadExe *bad = g_hash_table_lookup(s->model->bad_exes, path);
		g_autofree char *uri = g_filename_to_uri(path, NULL, NULL);

		if (!uri)
			continue;
		g_string_append_printf(s->w->buf, "BADEXE\t%" G_GINT64_FORMAT "\t%" G_GUINT64_FORMAT "\t%s\n",
				       MAX(bad->time, 0), bad->size, uri);
		saver_record_done(s);
	}
}

/* START: see load_start(). Only exes whose starts were counted. */
static void
save_starts(Saver *s)
{
	for (guint i = 0; i < s->plan->exes->len; i++) {
		const Exe *exe = g_ptr_array_index(s->plan->exes, i);

		if (!(exe->starts > 0) && !(exe->succ_total > 0) && !(exe->quiet_starts > 0))
			continue;
		g_string_append_printf(s->w->buf, "START\t%u", exe->seq);
		append_double(s->w->buf, saveable(aged(s->model, exe->starts), 0, G_MAXDOUBLE));
		append_double(s->w->buf, saveable(aged(s->model, exe->succ_total), 0, G_MAXDOUBLE));
		append_double(s->w->buf, saveable(aged(s->model, exe->quiet_starts), 0, G_MAXDOUBLE));
		g_string_append_c(s->w->buf, '\n');
		saver_record_done(s);
	}
}

/* SUCC: see load_succ(). Each exe's successors in the model's order. */
static void
save_successors(Saver *s)
{
	for (guint i = 0; i < s->plan->exes->len; i++) {
		const Exe *exe = g_ptr_array_index(s->plan->exes, i);

		for (guint j = 0; j < exe->succ->len && j < MODEL_MAX_SUCCESSORS; j++) {
			const ExeSucc *succ = &g_array_index(exe->succ, ExeSucc, j);
			float count, chances;

			if (succ->next->seq == NOT_WRITTEN || succ->next == exe)
				continue;
			count = (float)saveable(aged(s->model, succ->count), 0, G_MAXFLOAT);
			chances = (float)saveable(aged(s->model, succ->chances), 0, G_MAXFLOAT);
			g_string_append_printf(s->w->buf, "SUCC\t%u\t%u", exe->seq, succ->next->seq);
			/* What the loader checks, whatever a bug did. */
			append_float(s->w->buf, MIN(count, chances));
			append_float(s->w->buf, chances);
			g_string_append_c(s->w->buf, '\n');
			saver_record_done(s);
		}
	}
}

/* ORDER: see load_order(). One line, when starts were seen. */
static void
save_order(Saver *s)
{
	const Model *m = s->model;
	const double sums[7] = {
		m->start_gaps, m->n_start_gaps, m->soon_gaps, m->n_soon_gaps,
		m->quiet_gaps, m->n_quiet_gaps, m->quiet_total,
	};
	gint64 last = m->last_start && m->last_start->seq != NOT_WRITTEN ? (gint64)m->last_start->seq : -1;
	gboolean any = last >= 0;

	for (int i = 0; i < 7; i++)
		any |= sums[i] > 0;
	if (!any)
		return;
	g_string_append_printf(s->w->buf, "ORDER\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT, last,
			       MAX(m->last_start_time, G_MININT64 + 1));
	for (int i = 0; i < 7; i++)
		append_double(s->w->buf, saveable(aged(m, sums[i]), 0, G_MAXDOUBLE));
	g_string_append_c(s->w->buf, '\n');
	saver_record_done(s);
}

/*
 * EXPERTS: see load_experts(). One line, once the weight has moved from
 * where every model starts: a file without it loads the same weight.
 */
static void
save_experts(Saver *s)
{
	double w = saveable(s->model->freq_weight, MODEL_FREQ_MIN, 1 - MODEL_FREQ_MIN);

	if (w == MODEL_FREQ_WEIGHT)
		return;
	g_string_append(s->w->buf, "EXPERTS");
	append_double(s->w->buf, w);
	g_string_append_c(s->w->buf, '\n');
	saver_record_done(s);
}

/* ---- the record types ---- */

typedef gboolean (*RecordLoader)(Loader *ld, char **f, guint nf, GError **error);
typedef void (*RecordSaver)(Saver *s);

/*
 * Every record type, in the order the file holds them (the Section
 * order): its tag, its field counts in each format, how it is read and
 * how it is written.
 */
static const struct {
	const char *tag;
	guint fields;         /* in the current format (versions 4 and 5) */
	guint v3_fields;      /* in versions 2 and 3; 0 if the record did not exist */
	guint v1_fields;      /* in version 1; 0 if the record did not exist */
	guint legacy_fields;  /* in the 0.6.4 format; 0 if it did not exist */
	RecordLoader load;
	RecordSaver save;
	gint64 since;         /* the first format version that has it; 0: all */
} record_types[] = {
	[SECTION_FILE] = { "FILE", 7, 7, 0, 0, load_file, save_files, 0 },
	[SECTION_MAP] = { "MAP", 6, 6, 6, 7, load_map, save_maps, 0 },
	[SECTION_EXE] = { "EXE", 7, 5, 5, 6, load_exe, save_exes, 0 },
	[SECTION_EXEMAP] = { "EXEMAP", 6, 6, 4, 4, load_exemap, save_exemaps, 0 },
	[SECTION_MARKOV] = { "MARKOV", 20, 20, 24, 24, load_markov, save_chains, 0 },
	[SECTION_HITS] = { "HITS", 8, 8, 0, 0, load_hits, save_hits, 0 },
	[SECTION_BADEXE] = { "BADEXE", 4, 4, 4, 4, load_badexe, save_bad_exes, 0 },
	[SECTION_START] = { "START", 5, 5, 0, 0, load_start, save_starts, STATE_VERSION_3 },
	[SECTION_SUCC] = { "SUCC", 5, 5, 0, 0, load_succ, save_successors, STATE_VERSION_3 },
	[SECTION_ORDER] = { "ORDER", 10, 10, 0, 0, load_order, save_order, STATE_VERSION_3 },
	[SECTION_EXPERTS] = { "EXPERTS", 2, 0, 0, 0, load_experts, save_experts, STATE_VERSION_5 },
};
G_STATIC_ASSERT(G_N_ELEMENTS(record_types) == SECTION_COUNT);

/*
 * Splits line in place at tabs into at most MAX_FIELDS fields; returns
 * the number of fields found (which can exceed MAX_FIELDS: only the
 * first MAX_FIELDS are stored).
 */
static guint
split_fields(char *line, char **f)
{
	guint n = 0;
	char *p = line;

	for (;;) {
		char *tab = strchr(p, '\t');

		if (n < MAX_FIELDS)
			f[n] = p;
		n++;
		if (!tab)
			return n;
		*tab = '\0';
		p = tab + 1;
	}
}

static gboolean
load_record(Loader *ld, char **f, guint nf, GError **error)
{
	for (Section section = 0; section < SECTION_COUNT; section++) {
		const char *tag = record_types[section].tag;
		guint want;

		if (strcmp(f[0], tag) != 0)
			continue;
		want = ld->legacy ? record_types[section].legacy_fields
		       : ld->version == 1 ? record_types[section].v1_fields
		       : ld->version < STATE_VERSION_4 ? record_types[section].v3_fields
		       : record_types[section].fields;
		/* A record of a later version in an older file: as unknown as any other. */
		if (want == 0 || record_types[section].since > ld->version)
			break;
		if (nf != want)
			return load_fail(ld, error, STATE_ERROR_CORRUPT,
					 "%s record has %u fields, expected %u", tag, nf, want);
		/*
		 * Our writer keeps this order, and references only point
		 * backwards in it; 0.6.4 wrote BADEXE lines between MAPs and
		 * EXEs, so its files are only held to the references.
		 */
		if (!ld->legacy) {
			if (section < ld->section)
				return load_fail(ld, error, STATE_ERROR_CORRUPT,
						 "%s record after %s records", tag,
						 record_types[ld->section].tag);
			ld->section = section;
		}
		ld->records++;
		return record_types[section].load(ld, f, nf, error);
	}
	{
		g_autofree char *quoted = quote_field(f[0]);

		return load_fail(ld, error, STATE_ERROR_CORRUPT, "unknown record type %s", quoted);
	}
}

/*
 * The header: "PRELOAD-STATE <version> <time>", or 0.6.4's
 * "PRELOAD <version string> <time>".
 */
static gboolean
load_header(Loader *ld, char **f, guint nf, GError **error)
{
	gint64 version, time;

	if (strcmp(f[0], STATE_TAG) == 0) {
		if (nf < 2 || !parse_int(f[1], 1, G_MAXINT64, &version))
			return load_fail(ld, error, STATE_ERROR_CORRUPT, "bad format version");
		if (version > STATE_FORMAT_VERSION)
			return load_fail(ld, error, STATE_ERROR_VERSION,
					 "format version %" G_GINT64_FORMAT " was written by a newer preload"
					 " (this one reads up to version %d)",
					 version, STATE_FORMAT_VERSION);
		ld->legacy = FALSE;
		ld->version = version;
	} else if (strcmp(f[0], LEGACY_TAG) == 0) {
		/* 0.6.4 wrote its package version; only the major number counts. */
		g_autofree char *major = nf >= 2 ? g_strndup(f[1], strcspn(f[1], ".")) : NULL;

		if (!major || !parse_int(major, 0, G_MAXINT64, &version))
			return load_fail(ld, error, STATE_ERROR_CORRUPT, "bad preload version in header");
		if (version > 0) {
			g_autofree char *quoted = quote_field(f[1]);

			return load_fail(ld, error, STATE_ERROR_VERSION,
					 "written by preload %s, a newer preload than this one reads", quoted);
		}
		ld->legacy = TRUE;
	} else {
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "not a preload state file");
	}

	{
		/* Version 2 adds the aged total time. */
		guint want = ld->version >= STATE_VERSION_2 ? 4 : 3;

		if (nf != want)
			return load_fail(ld, error, STATE_ERROR_CORRUPT,
					 "header has %u fields, expected %u", nf, want);
	}
	if (!field_int(ld, f[2], "model time", 0, G_MAXINT64, &time, error))
		return FALSE;
	ld->model->time = time;
	/*
	 * Older files kept no aged total: their running times are plain
	 * sums since the model began, so the model's clock is the total
	 * they are consistent with.
	 */
	ld->model->total_time = (double)time;
	if (ld->version >= STATE_VERSION_2 &&
	    !field_double(ld, f[3], "total time", 0, G_MAXDOUBLE, &ld->model->total_time, error))
		return FALSE;
	/* Values in the file are aged up to the model time. */
	ld->model->aged_time = time;
	/*
	 * Nothing runs yet: running time is accounted from the loaded clock,
	 * not from zero (which would credit the first running exes with the
	 * whole history), and the first scan starts a new running set.
	 */
	ld->model->last_accounting_timestamp = time;
	ld->model->last_running_timestamp = time;
	return TRUE;
}

/*
 * END <records> <sha256>: the count of record lines and the SHA-256 of
 * every byte before the END line.
 */
static gboolean
check_end(Loader *ld, char **f, guint nf, guint64 records, const char *digest, GError **error)
{
	guint64 count;

	if (nf != 3)
		return load_fail(ld, error, STATE_ERROR_CORRUPT,
				 "END record has %u fields, expected 3", nf);
	if (!field_uint(ld, f[1], "record count", G_MAXUINT64, &count, error))
		return FALSE;
	if (count != records)
		return load_fail(ld, error, STATE_ERROR_CORRUPT,
				 "END counts %" G_GUINT64_FORMAT " records, the file has %" G_GUINT64_FORMAT,
				 count, records);
	if (g_ascii_strcasecmp(f[2], digest) != 0)
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "checksum mismatch, the file is damaged");
	return TRUE;
}

static gboolean
is_end_line(const char *line)
{
	return strncmp(line, "END", 3) == 0 && (line[3] == '\t' || line[3] == '\n');
}

typedef enum {
	LINE_OK,
	LINE_EOF,
	LINE_ERROR,
} LineResult;

/*
 * Lines from a stream through one buffer of fixed size: no line, however
 * long, makes it grow (getline() grew to the length of the longest line,
 * 300 MB for a damaged file without newlines, before the length check).
 */
#define LINE_BUFFER_SIZE (2 * MAX_LINE_LENGTH)

typedef struct LineReader {
	FILE *file;
	char *buf;          /* LINE_BUFFER_SIZE bytes */
	gsize start, end;   /* the bytes read and not yet returned */
	gboolean eof;
} LineReader;

static void
reader_init(LineReader *r, FILE *file)
{
	r->file = file;
	r->buf = g_malloc(LINE_BUFFER_SIZE);
	r->start = r->end = 0;
	r->eof = FALSE;
}

static void
reader_clear(LineReader *r)
{
	g_clear_pointer(&r->buf, g_free);
}

/* Reads more after what is buffered; FALSE on a read error (errno set). */
static gboolean
reader_fill(LineReader *r)
{
	size_t n;

	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	errno = 0;
	n = fread(r->buf + r->end, 1, LINE_BUFFER_SIZE - r->end, r->file);
	r->end += n;
	if (n == 0) {
		if (ferror(r->file))
			return FALSE;
		r->eof = TRUE;
	}
	return TRUE;
}

static gboolean
reader_io_fail(const Loader *ld, GError **error, int err)
{
	g_set_error(error, STATE_ERROR, STATE_ERROR_IO, "%s: cannot read: %s",
		    ld->path, g_strerror(err ? err : EIO));
	return FALSE;
}

/*
 * The next whole line, counted in ld->lineno: *line points into the
 * buffer (valid until the next call), *len counts its '\n'. A last line
 * without '\n' means the file was cut short.
 */
static LineResult
reader_next(LineReader *r, Loader *ld, char **line, gsize *len, GError **error)
{
	for (;;) {
		char *nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		gsize n;

		if (nl) {
			*line = r->buf + r->start;
			n = (gsize)(nl - *line) + 1;
			r->start += n;
			ld->lineno++;
			if (n > MAX_LINE_LENGTH) {
				load_fail(ld, error, STATE_ERROR_CORRUPT, "line longer than %d bytes",
					  MAX_LINE_LENGTH);
				return LINE_ERROR;
			}
			if (memchr(*line, '\0', n)) {
				load_fail(ld, error, STATE_ERROR_CORRUPT, "NUL byte in line");
				return LINE_ERROR;
			}
			*len = n;
			return LINE_OK;
		}
		if (r->end - r->start > MAX_LINE_LENGTH) {
			ld->lineno++;
			load_fail(ld, error, STATE_ERROR_CORRUPT, "line longer than %d bytes",
				  MAX_LINE_LENGTH);
			return LINE_ERROR;
		}
		if (r->eof) {
			if (r->start == r->end)
				return LINE_EOF;
			ld->lineno++;
			load_fail(ld, error, STATE_ERROR_TRUNCATED,
				  "incomplete last line, the file was cut short");
			return LINE_ERROR;
		}
		if (!reader_fill(r)) {
			reader_io_fail(ld, error, errno);
			return LINE_ERROR;
		}
	}
}

/* Whether anything follows what was read; -1 on a read error. */
static int
reader_more(LineReader *r)
{
	while (r->start == r->end && !r->eof) {
		if (!reader_fill(r))
			return -1;
	}
	return r->start < r->end;
}

/*
 * The first pass over a file of the current format, from after its
 * header: everything up to the END line is hashed and its record lines
 * counted, and the END line checked against both, before a single record
 * is built. A damaged file of any size is thus refused in constant
 * memory (the line buffer), where loading first built as much model as
 * the file described. Notes the END line's number in ld->end_lineno.
 */
static gboolean
verify_checksum(Loader *ld, LineReader *r, GChecksum *checksum, GError **error)
{
	guint64 records = 0;
	char *line, *f[MAX_FIELDS];
	gsize len;
	guint nf;
	int more;

	for (;;) {
		switch (reader_next(r, ld, &line, &len, error)) {
		case LINE_ERROR:
			return FALSE;
		case LINE_EOF:
			ld->lineno++;
			return load_fail(ld, error, STATE_ERROR_TRUNCATED,
					 "the file ends before its END line, it was cut short");
		case LINE_OK:
			break;
		}
		if (is_end_line(line))
			break;
		g_checksum_update(checksum, (const guchar *)line, (gssize)len);
		if (line[0] != '\n' && line[0] != '#')
			records++;
	}

	line[len - 1] = '\0';
	nf = split_fields(line, f);
	if (!check_end(ld, f, nf, records, g_checksum_get_string(checksum), error))
		return FALSE;
	ld->end_lineno = ld->lineno;

	more = reader_more(r);
	if (more < 0)
		return reader_io_fail(ld, error, errno);
	if (more > 0) {
		ld->lineno++;
		return load_fail(ld, error, STATE_ERROR_CORRUPT, "data after the END line");
	}
	return TRUE;
}

/*
 * Reads the header, and for the current format checks the whole file
 * (verify_checksum()) and goes back to the first record. The stream must
 * be seekable for that. *empty: the stream holds nothing.
 */
static gboolean
load_prepare(Loader *ld, LineReader *r, gboolean *empty, GError **error)
{
	g_autoptr(GChecksum) checksum = NULL;
	char *line, *f[MAX_FIELDS];
	gsize len;
	guint nf;
	off_t start = ftello(r->file);

	*empty = FALSE;
	switch (reader_next(r, ld, &line, &len, error)) {
	case LINE_ERROR:
		return FALSE;
	case LINE_EOF:
		/*
		 * An empty file: packages create one so the daemon finds the
		 * path writable; 0.6.4 read it as an empty model as well.
		 */
		*empty = TRUE;
		return TRUE;
	case LINE_OK:
		break;
	}
	checksum = g_checksum_new(G_CHECKSUM_SHA256);
	g_checksum_update(checksum, (const guchar *)line, (gssize)len);
	line[len - 1] = '\0';
	nf = split_fields(line, f);
	if (!load_header(ld, f, nf, error))
		return FALSE;
	/* 0.6.4 wrote no END line: nothing to check before loading. */
	if (ld->legacy)
		return TRUE;

	if (!verify_checksum(ld, r, checksum, error))
		return FALSE;
	/* Back to the first record, for the second pass. */
	if (start < 0 || fseeko(r->file, start + (off_t)len, SEEK_SET) < 0)
		return reader_io_fail(ld, error, errno);
	r->start = r->end = 0;
	r->eof = FALSE;
	ld->lineno = 1;
	return TRUE;
}

/* The second pass: the records, into the model. */
static gboolean
load_records(Loader *ld, LineReader *r, GError **error)
{
	char *line, *f[MAX_FIELDS];
	gsize len;
	guint nf;

	for (;;) {
		switch (reader_next(r, ld, &line, &len, error)) {
		case LINE_ERROR:
			return FALSE;
		case LINE_EOF:
			if (ld->legacy)
				return TRUE;
			/* verify_checksum() saw an END line: the file changed since. */
			return load_fail(ld, error, STATE_ERROR_CORRUPT, "the file changed while it was read");
		case LINE_OK:
			break;
		}
		if (!ld->legacy && is_end_line(line)) {
			if (ld->lineno != ld->end_lineno)
				return load_fail(ld, error, STATE_ERROR_CORRUPT,
						 "the file changed while it was read");
			return TRUE;
		}
		line[len - 1] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		nf = split_fields(line, f);
		if (!load_record(ld, f, nf, error))
			return FALSE;
	}
}

/*
 * Creates the directory of path if it is missing: mode 0700, since the
 * state tells which programs are run here (its parents 0755, as mkdir -p
 * makes them).
 */
static gboolean
make_dir(const char *path, GError **error)
{
	g_autofree char *dir = g_path_get_dirname(path);
	g_autofree char *parent = g_path_get_dirname(dir);

	if (g_mkdir_with_parents(parent, 0755) < 0 || (mkdir(dir, 0700) < 0 && errno != EEXIST)) {
		int err = errno;

		g_set_error(error, STATE_ERROR, STATE_ERROR_IO, "cannot save state to %s: "
			    "cannot create its directory: %s", path, g_strerror(err));
		return FALSE;
	}
	return TRUE;
}

/*
 * The daemon's state directory must be its own: whoever else can write
 * there can swap the file, or a symlink or a hostile file, in between the
 * daemon's checks and its use of the path. So it must be owned by the
 * effective user (root for the daemon) and writable by no one else.
 * Tools that load or save a state elsewhere (a replay into /tmp) are not
 * held to this: the daemon checks at start and before each save.
 */
gboolean
state_prepare_dir(const char *path, GError **error)
{
	g_autofree char *dir = NULL;
	struct stat st;

	g_return_val_if_fail(path != NULL && path[0] != '\0', FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (!make_dir(path, error))
		return FALSE;
	dir = g_path_get_dirname(path);
	if (stat(dir, &st) < 0) {
		int err = errno;

		g_set_error(error, STATE_ERROR, STATE_ERROR_IO, "%s: cannot examine its directory: %s",
			    path, g_strerror(err));
		return FALSE;
	}
	if (!S_ISDIR(st.st_mode)) {
		g_set_error(error, STATE_ERROR, STATE_ERROR_IO, "%s: %s", path, g_strerror(ENOTDIR));
		return FALSE;
	}
	if (st.st_uid != geteuid()) {
		g_set_error(error, STATE_ERROR, STATE_ERROR_UNSAFE,
			    "%s: its directory %s belongs to uid %u, not to uid %u: refusing to use it",
			    path, dir, (guint)st.st_uid, (guint)geteuid());
		return FALSE;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		g_set_error(error, STATE_ERROR, STATE_ERROR_UNSAFE,
			    "%s: its directory %s is writable by %s (mode %04o): refusing to use it",
			    path, dir, st.st_mode & S_IWOTH ? "everyone" : "its group",
			    (guint)(st.st_mode & 07777));
		return FALSE;
	}
	return TRUE;
}

struct StateFile {
	Loader ld;
	LineReader reader;
	FILE *file;         /* NULL: no file, an empty model */
	gboolean own_file;  /* closed by state_file_free() */
	gboolean empty;     /* an empty file or none: an empty model */
	guint64 size;
	char *name;
};

static StateFile *
state_file_new(FILE *file, gboolean own_file, const char *name)
{
	StateFile *sf = g_new0(StateFile, 1);

	sf->name = g_strdup(name);
	sf->file = file;
	sf->own_file = own_file;
	loader_init(&sf->ld, sf->name);
	if (file)
		reader_init(&sf->reader, file);
	else
		sf->empty = TRUE;
	return sf;
}

void
state_file_free(StateFile *sf)
{
	if (!sf)
		return;
	if (sf->ld.model)
		loader_finish(&sf->ld, FALSE);
	reader_clear(&sf->reader);
	if (sf->file && sf->own_file)
		fclose(sf->file);
	g_free(sf->name);
	g_free(sf);
}

/* The checks before loading, on a new StateFile: NULL with an error if they fail. */
static StateFile *
state_file_check(StateFile *sf, GError **error)
{
	if (sf->file && !load_prepare(&sf->ld, &sf->reader, &sf->empty, error)) {
		state_file_free(sf);
		return NULL;
	}
	return sf;
}

StateFile *
state_file_open(const char *path, GError **error)
{
	struct stat st;
	FILE *file;
	int fd;
	StateFile *sf;

	g_return_val_if_fail(path != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	/*
	 * O_NOFOLLOW: the path itself is never followed through a symlink
	 * (the daemon checks the directory at start, state_prepare_dir():
	 * only its owner could have put one there). O_NONBLOCK: opening a FIFO for reading would wait for
	 * a writer and hang the daemon; with it the open returns and fstat
	 * rejects the FIFO. It does not change reads from a regular file.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0) {
		int saved = errno;

		if (saved == ENOENT)
			return state_file_new(NULL, FALSE, path);
		if (saved == ELOOP)
			g_set_error(error, STATE_ERROR, STATE_ERROR_UNSAFE,
				    "%s: a symbolic link, not followed", path);
		else
			g_set_error(error, STATE_ERROR, STATE_ERROR_IO, "%s: cannot open: %s",
				    path, g_strerror(saved));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		int saved = errno;

		close(fd);
		g_set_error(error, STATE_ERROR, STATE_ERROR_IO, "%s: cannot stat: %s",
			    path, g_strerror(saved));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		g_set_error(error, STATE_ERROR, STATE_ERROR_IO, "%s: not a regular file", path);
		return NULL;
	}
	file = fdopen(fd, "r");
	if (!file) {
		int saved = errno;

		close(fd);
		g_set_error(error, STATE_ERROR, STATE_ERROR_IO, "%s: cannot read: %s",
			    path, g_strerror(saved));
		return NULL;
	}
	sf = state_file_new(file, TRUE, path);
	sf->size = (guint64)st.st_size;
	return state_file_check(sf, error);
}

guint64
state_file_size(const StateFile *sf)
{
	g_return_val_if_fail(sf != NULL, 0);

	return sf->size;
}

gboolean
state_file_is_legacy(const StateFile *sf)
{
	g_return_val_if_fail(sf != NULL, FALSE);

	return sf->ld.legacy;
}

Model *
state_file_load(StateFile *sf, GError **error)
{
	gboolean ok = TRUE;

	g_return_val_if_fail(sf != NULL && sf->ld.model != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (!sf->empty)
		ok = load_records(&sf->ld, &sf->reader, error);
	return loader_finish(&sf->ld, ok);
}

Model *
state_load(const char *path, GError **error)
{
	g_autoptr(StateFile) sf = NULL;

	g_return_val_if_fail(path != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (!(sf = state_file_open(path, error)))
		return NULL;
	return state_file_load(sf, error);
}

Model *
state_load_stream(FILE *file, const char *name, GError **error)
{
	g_autoptr(StateFile) sf = NULL;

	g_return_val_if_fail(file != NULL, NULL);
	g_return_val_if_fail(name != NULL, NULL);
	g_return_val_if_fail(error == NULL || *error == NULL, NULL);

	if (!(sf = state_file_check(state_file_new(file, FALSE, name), error)))
		return NULL;
	return state_file_load(sf, error);
}

/*
 * The whole file, into w: the header, each record type's lines in the
 * order of the table, the END line. Maps and exes get their seq numbers
 * as a side effect. Returns 0 or the errno of the first write that
 * failed.
 */
static int
state_format(Model *model, StateWriter *w)
{
	g_auto(SavePlan) plan = { 0 };
	Saver s = { .w = w, .model = model, .plan = &plan };

	save_plan_init(&plan, model);
	g_string_append_printf(w->buf, STATE_TAG "\t%d\t%" G_GINT64_FORMAT,
			       STATE_FORMAT_VERSION, MAX(model->time, 0));
	append_double(w->buf, saveable(aged(model, model->total_time), 0, G_MAXDOUBLE));
	g_string_append(w->buf, "\n# preload " PACKAGE_VERSION " state: what it learned about the"
			" programs run here (see doc/state-format.md)\n");
	for (gsize i = 0; i < G_N_ELEMENTS(record_types); i++)
		record_types[i].save(&s);

	writer_flush(w);
	/* The END line is not part of what it sums. */
	g_string_append_printf(w->buf, "END\t%" G_GUINT64_FORMAT "\t%s\n", s.records,
			       g_checksum_get_string(w->checksum));
	if (w->err == 0 && !write_all(w->fd, w->buf->str, w->buf->len))
		w->err = errno ? errno : EIO;
	g_string_truncate(w->buf, 0);
	return w->err;
}

static gboolean
save_fail(GError **error, const char *path, const char *what, int err)
{
	g_set_error(error, STATE_ERROR, STATE_ERROR_IO, "cannot save state to %s: %s: %s",
		    path, what, g_strerror(err));
	return FALSE;
}

gboolean
state_save(Model *model, const char *path, GError **error)
{
	g_autoptr(GString) buf = NULL;
	g_autofree char *dir = NULL;
	g_autofree char *tmp = NULL;
	StateWriter w;
	int fd, dirfd, err;

	g_return_val_if_fail(model != NULL, FALSE);
	g_return_val_if_fail(path != NULL && path[0] != '\0', FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	if (!make_dir(path, error))
		return FALSE;
	dir = g_path_get_dirname(path);

	/*
	 * Beside the target, so the rename stays within one file system. The
	 * name is fixed, not random: a save cut short by a crash or SIGKILL
	 * leaves its temporary file behind, and with one name there is at
	 * most one such file, which the next save removes, instead of one
	 * more per crash. Only one process saves to a path (the daemon holds
	 * "<path>.lock"). The unlink and O_EXCL make the file new, ours and
	 * 0600 even if something else sits at that name; a symlink there is
	 * removed, never followed.
	 */
	tmp = g_strconcat(path, STATE_TEMP_SUFFIX, NULL);
	if (g_unlink(tmp) < 0 && errno != ENOENT)
		return save_fail(error, path, "cannot remove the old temporary file", errno);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return save_fail(error, path, "cannot create a temporary file", errno);

	buf = g_string_sized_new(STATE_WRITE_CHUNK + 4096);
	w = (StateWriter){ .buf = buf, .fd = fd, .checksum = g_checksum_new(G_CHECKSUM_SHA256) };
	err = state_format(model, &w);
	g_checksum_free(w.checksum);
	if (err != 0) {
		close(fd);
		g_unlink(tmp);
		return save_fail(error, path, "cannot write", err);
	}
	/* The data must be on disk before the rename makes it the state. */
	if (fsync(fd) < 0) {
		err = errno;
		close(fd);
		g_unlink(tmp);
		return save_fail(error, path, "cannot sync", err);
	}
	/* Linux frees the descriptor even when close() reports EINTR. */
	if (close(fd) < 0 && errno != EINTR) {
		err = errno;
		g_unlink(tmp);
		return save_fail(error, path, "cannot close", err);
	}
	if (rename(tmp, path) < 0) {
		err = errno;
		g_unlink(tmp);
		return save_fail(error, path, "cannot rename the temporary file over it", err);
	}

	/*
	 * The rename lives in the directory; sync it so the new name is
	 * durable too. Some file systems cannot sync a directory (EINVAL);
	 * there the rename is as durable as it gets.
	 */
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return save_fail(error, path, "cannot open its directory", errno);
	if (fsync(dirfd) < 0 && errno != EINVAL && errno != ENOTSUP) {
		err = errno;
		close(dirfd);
		return save_fail(error, path, "cannot sync its directory", err);
	}
	close(dirfd);

	model->dirty = FALSE;
	return TRUE;
}

/* ---- a file that cannot be loaded ---- */

gboolean
state_move_aside(const char *path, char **moved_to, GError **error)
{
	g_autofree char *base = NULL;
	gint64 now = g_get_real_time() / G_USEC_PER_SEC;

	g_return_val_if_fail(path != NULL, FALSE);
	g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

	base = g_strdup_printf("%s.broken-%" G_GINT64_FORMAT, path, now);
	/* Never overwrite an earlier broken file: it may be the one worth a look. */
	for (guint i = 0; i < 1000; i++) {
		g_autofree char *target = i == 0 ? g_strdup(base) : g_strdup_printf("%s-%u", base, i);
		GStatBuf st;

		if (g_lstat(target, &st) == 0)
			continue;
		if (errno != ENOENT) {
			int err = errno;

			g_set_error(error, STATE_ERROR, STATE_ERROR_IO, "cannot move %s aside to %s: %s",
				    path, target, g_strerror(err));
			return FALSE;
		}
		if (rename(path, target) < 0) {
			int err = errno;

			g_set_error(error, STATE_ERROR, STATE_ERROR_IO, "cannot move %s aside to %s: %s",
				    path, target, g_strerror(err));
			return FALSE;
		}
		if (moved_to)
			*moved_to = g_steal_pointer(&target);
		return TRUE;
	}
	g_set_error(error, STATE_ERROR, STATE_ERROR_IO,
		    "cannot move %s aside: too many %s-* files", path, base);
	return FALSE;
}
