/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Trace files: the writer the daemon uses to record every cycle it
 * observes, and the reader preload-replay uses to feed the very same
 * model and prediction code from such a record instead of /proc.
 *
 * The format (doc/trace-format.md) is one record per line, fields
 * separated by tabs, so a trace can be inspected with grep and cut and a
 * daemon killed mid-write leaves at worst one partial last line, which
 * the reader reports as a truncation instead of guessing. Paths are
 * declared once ("P <id> <file URI>") and referred to by number: a day
 * of cycles repeats the same few dozen executables and libraries, and
 * parsing numbers is much cheaper than decoding URIs when a replay reads
 * tens of thousands of cycles.
 *
 * The writer is deliberately forgiving (a full disk must not stop the
 * daemon: the first error is kept, returned from every later call and
 * nothing more is written) while the reader is strict: a trace is
 * evidence for a measurement, and a silently skipped line would skew it.
 */
#include "config.h"

#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TRACE_MAGIC "PRELOAD-TRACE"

/* Sanity bounds for the header's cycle, in seconds. */
#define TRACE_CYCLE_MAX (7 * 86400)

G_DEFINE_QUARK(preload-trace-error-quark, trace_error)

/* ---- writing ---- */

struct TraceWriter {
	FILE *fp;
	char *path;           /* for error messages */
	GHashTable *ids;      /* path (owned) -> id + 1 */
	guint next_id;        /* id the next new path gets */
	guint64 scans;        /* C lines written */
	GString *line;        /* the record being built */
	GError *failure;      /* first error; nothing is written after it */

	/* the wrapped maps source, while attached */
	Learn *learn;
	LearnMapsFunc inner;
	gpointer inner_data;
};

/* Keeps the first error (from errno) and stops all further writing. */
static void
writer_fail_errno(TraceWriter *tw, int errsv, const char *what)
{
	if (tw->failure)
		return;
	tw->failure = g_error_new(TRACE_ERROR, TRACE_ERROR_IO, "cannot %s %s: %s",
				  what, tw->path, g_strerror(errsv));
}

static gboolean
writer_check(TraceWriter *tw, GError **error)
{
	if (tw->failure) {
		if (error)
			*error = g_error_copy(tw->failure);
		return FALSE;
	}
	return TRUE;
}

static void
writer_put(TraceWriter *tw, const char *data, gsize len)
{
	if (tw->failure)
		return;
	if (fwrite(data, 1, len, tw->fp) != len)
		writer_fail_errno(tw, errno ? errno : EIO, "write");
}

/*
 * The id of `path`, declaring it with a P line first if it is new.
 * Returns FALSE for a path that has no file URI (a relative one).
 */
static gboolean
writer_path_id(TraceWriter *tw, const char *path, guint *id)
{
	gpointer value;
	g_autofree char *uri = NULL;
	g_autofree char *line = NULL;

	value = g_hash_table_lookup(tw->ids, path);
	if (value) {
		*id = GPOINTER_TO_UINT(value) - 1;
		return TRUE;
	}
	uri = g_filename_to_uri(path, NULL, NULL);
	if (!uri)
		return FALSE;
	*id = tw->next_id++;
	g_hash_table_insert(tw->ids, g_strdup(path), GUINT_TO_POINTER(*id + 1));
	line = g_strdup_printf("P\t%u\t%s\n", *id, uri);
	writer_put(tw, line, strlen(line));
	return TRUE;
}

TraceWriter *
trace_writer_open(const char *path, gint64 cycle, GError **error)
{
	g_autoptr(TraceWriter) tw = NULL;
	int fd;

	g_return_val_if_fail(path != NULL, NULL);
	g_return_val_if_fail(cycle > 0, NULL);

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0) {
		int errsv = errno;

		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "cannot create %s: %s",
			    path, g_strerror(errsv));
		return NULL;
	}
	tw = g_new0(TraceWriter, 1);
	tw->path = g_strdup(path);
	tw->ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	tw->line = g_string_sized_new(1024);
	tw->fp = fdopen(fd, "w");
	if (!tw->fp) {
		int errsv = errno;

		close(fd);
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "cannot open %s: %s",
			    path, g_strerror(errsv));
		return NULL;
	}
	g_string_printf(tw->line, "%s\t%d\t%" G_GINT64_FORMAT "\n",
			TRACE_MAGIC, TRACE_FORMAT_VERSION, cycle);
	writer_put(tw, tw->line->str, tw->line->len);
	if (!tw->failure && fflush(tw->fp) != 0)
		writer_fail_errno(tw, errno, "write");
	if (!writer_check(tw, error))
		return NULL;
	return g_steal_pointer(&tw);
}

void
trace_writer_free(TraceWriter *tw)
{
	if (!tw)
		return;
	if (tw->learn)
		trace_writer_detach(tw, tw->learn);
	if (tw->fp)
		(void)fclose(tw->fp);
	g_free(tw->path);
	g_hash_table_unref(tw->ids);
	g_string_free(tw->line, TRUE);
	g_clear_error(&tw->failure);
	g_free(tw);
}

gboolean
trace_writer_close(TraceWriter *tw, GError **error)
{
	gboolean ok;

	g_return_val_if_fail(tw != NULL, FALSE);

	g_string_printf(tw->line, "END\t%" G_GUINT64_FORMAT "\n", tw->scans);
	writer_put(tw, tw->line->str, tw->line->len);
	if (!tw->failure && fflush(tw->fp) != 0)
		writer_fail_errno(tw, errno, "write");
	if (fclose(tw->fp) != 0)
		writer_fail_errno(tw, errno, "close");
	tw->fp = NULL;
	ok = writer_check(tw, error);
	trace_writer_free(tw);
	return ok;
}

gboolean
trace_writer_scan(TraceWriter *tw, gint64 time, const ProcMemstat *mem,
		  const char *const *exes, guint n_exes, GError **error)
{
	g_autoptr(GArray) ids = NULL;

	g_return_val_if_fail(tw != NULL, FALSE);
	g_return_val_if_fail(exes != NULL || n_exes == 0, FALSE);
	g_return_val_if_fail(time >= 0, FALSE);

	if (!writer_check(tw, error))
		return FALSE;

	/* Declare new paths first: they must precede the line using them. */
	ids = g_array_sized_new(FALSE, FALSE, sizeof(guint), n_exes);
	for (guint i = 0; i < n_exes; i++) {
		guint id;

		if (writer_path_id(tw, exes[i], &id))
			g_array_append_val(ids, id);
	}

	g_string_printf(tw->line, "C\t%" G_GINT64_FORMAT, time);
	if (mem)
		g_string_append_printf(tw->line, "\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT
				       "\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT
				       "\t%" G_GUINT64_FORMAT,
				       mem->total, mem->free, mem->cached, mem->buffers,
				       mem->available);
	else
		g_string_append(tw->line, "\t-\t-\t-\t-\t-");
	g_string_append_printf(tw->line, "\t%u", ids->len);
	for (guint i = 0; i < ids->len; i++)
		g_string_append_printf(tw->line, "\t%u", g_array_index(ids, guint, i));
	g_string_append_c(tw->line, '\n');
	writer_put(tw, tw->line->str, tw->line->len);
	tw->scans++;

	/* One flush per cycle: a killed daemon leaves whole cycles behind. */
	if (!tw->failure && fflush(tw->fp) != 0)
		writer_fail_errno(tw, errno, "write");
	return writer_check(tw, error);
}

gboolean
trace_writer_scan_model(TraceWriter *tw, const Model *model, gint64 time,
			const ProcMemstat *mem, GError **error)
{
	g_autofree const char **paths = NULL;

	g_return_val_if_fail(tw != NULL, FALSE);
	g_return_val_if_fail(model != NULL, FALSE);

	paths = g_new(const char *, model->running->len + 1);
	for (guint i = 0; i < model->running->len; i++)
		paths[i] = ((const Exe *)g_ptr_array_index(model->running, i))->path;
	return trace_writer_scan(tw, time, mem, paths, model->running->len, error);
}

gboolean
trace_writer_maps(TraceWriter *tw, const char *exe_path, const GArray *maps,
		  guint first, GError **error)
{
	g_autoptr(GString) body = NULL;
	guint exe_id, n = 0;

	g_return_val_if_fail(tw != NULL, FALSE);
	g_return_val_if_fail(exe_path != NULL, FALSE);
	g_return_val_if_fail(maps != NULL, FALSE);

	if (!writer_check(tw, error))
		return FALSE;
	if (!writer_path_id(tw, exe_path, &exe_id))
		return TRUE;

	body = g_string_sized_new(64 * (maps->len - MIN(first, maps->len)) + 16);
	for (guint i = first; i < maps->len; i++) {
		const ProcMap *pm = &g_array_index(maps, ProcMap, i);
		guint id;

		/* A map has a path and bytes; /proc gives nothing else. */
		if (!pm->path || pm->end <= pm->start || !writer_path_id(tw, pm->path, &id))
			continue;
		g_string_append_printf(body, "\t%u\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT "\t%s",
				       id, pm->offset,
				       pm->end - pm->start,
				       pm->deleted ? "d" : "-");
		n++;
	}
	g_string_printf(tw->line, "M\t%u\t%u%s\n", exe_id, n, body->str);
	writer_put(tw, tw->line->str, tw->line->len);
	return writer_check(tw, error);
}

static gint
compare_exe_paths(gconstpointer pa, gconstpointer pb)
{
	const Exe *a = *(const Exe *const *)pa, *b = *(const Exe *const *)pb;

	return strcmp(a->path, b->path);
}

gboolean
trace_writer_known_maps(TraceWriter *tw, const Model *model, GError **error)
{
	g_autoptr(GPtrArray) exes = NULL;
	GHashTableIter iter;
	gpointer value;

	g_return_val_if_fail(tw != NULL, FALSE);
	g_return_val_if_fail(model != NULL, FALSE);

	if (!writer_check(tw, error))
		return FALSE;
	exes = g_ptr_array_sized_new(g_hash_table_size(model->exes));
	g_hash_table_iter_init(&iter, model->exes);
	while (g_hash_table_iter_next(&iter, NULL, &value))
		g_ptr_array_add(exes, value);
	g_ptr_array_sort(exes, compare_exe_paths);

	for (guint i = 0; i < exes->len; i++) {
		const Exe *exe = g_ptr_array_index(exes, i);
		g_autoptr(GArray) maps = g_array_sized_new(FALSE, TRUE, sizeof(ProcMap),
							   exe->exemaps->len);
		guint64 address = 0;

		/* As a maps source would return them: addresses are arbitrary. */
		for (guint k = 0; k < exe->exemaps->len; k++) {
			const Map *map = g_array_index(exe->exemaps, ExeMap, k).map;
			ProcMap pm = { 0 };

			if (map->length > G_MAXUINT64 - address)
				address = 0;
			pm.start = address;
			pm.end = address + map->length;
			pm.offset = map->offset;
			pm.path = map->path;   /* borrowed: no clear function */
			g_array_append_val(maps, pm);
			address = pm.end;
		}
		if (!trace_writer_maps(tw, exe->path, maps, 0, error))
			return FALSE;
	}
	return TRUE;
}

static const char *
failure_name(const GError *failure)
{
	if (failure && failure->domain == PROC_ERROR) {
		switch (failure->code) {
		case PROC_ERROR_GONE:
			return "gone";
		case PROC_ERROR_PARSE:
			return "parse";
		default:
			break;
		}
	}
	return "io";
}

gboolean
trace_writer_maps_failed(TraceWriter *tw, const char *exe_path, const GError *failure,
			 GError **error)
{
	guint exe_id;

	g_return_val_if_fail(tw != NULL, FALSE);
	g_return_val_if_fail(exe_path != NULL, FALSE);

	if (!writer_check(tw, error))
		return FALSE;
	if (!writer_path_id(tw, exe_path, &exe_id))
		return TRUE;
	g_string_printf(tw->line, "G\t%u\t%s\n", exe_id, failure_name(failure));
	writer_put(tw, tw->line->str, tw->line->len);
	return writer_check(tw, error);
}

/*
 * The maps source learn calls while a writer is attached. Write errors
 * are kept in the writer (the next trace_writer_scan() reports them): the
 * learn must get exactly what the real source returned.
 */
static gboolean
writer_tee_maps(pid_t pid, const char *exe_path, GArray *maps, gpointer user_data,
		GError **error)
{
	TraceWriter *tw = user_data;
	GError *local = NULL;
	guint first = maps->len;
	gboolean ok;

	if (tw->inner)
		ok = tw->inner(pid, exe_path, maps, tw->inner_data, &local);
	else
		ok = proc_read_maps(pid, maps, &local);

	if (ok)
		(void)trace_writer_maps(tw, exe_path, maps, first, NULL);
	else
		(void)trace_writer_maps_failed(tw, exe_path, local, NULL);
	if (local)
		g_propagate_error(error, local);
	return ok;
}

void
trace_writer_attach(TraceWriter *tw, Learn *learn, LearnMapsFunc inner, gpointer inner_data)
{
	g_return_if_fail(tw != NULL);
	g_return_if_fail(learn != NULL);
	g_return_if_fail(tw->learn == NULL);

	tw->learn = learn;
	tw->inner = inner;
	tw->inner_data = inner_data;
	learn_set_maps_source(learn, writer_tee_maps, tw);
}

void
trace_writer_detach(TraceWriter *tw, Learn *learn)
{
	g_return_if_fail(tw != NULL);
	g_return_if_fail(learn != NULL && learn == tw->learn);

	learn_set_maps_source(learn, tw->inner, tw->inner_data);
	tw->learn = NULL;
	tw->inner = NULL;
	tw->inner_data = NULL;
}

guint64
trace_writer_get_scans(const TraceWriter *tw)
{
	g_return_val_if_fail(tw != NULL, 0);
	return tw->scans;
}

/* ---- reading ---- */

struct TraceReader {
	FILE *fp;
	char *data;           /* the in-memory trace fp reads, if any */
	char *buf;            /* getline's buffer */
	size_t buf_size;
	guint64 line;         /* number of the last line read */

	guint version;
	gint64 cycle;
	GPtrArray *paths;     /* char * (owned), indexed by id */
	GHashTable *path_ids; /* path (borrowed from paths) -> id + 1 */
	GArray *stamps;       /* guint per id: duplicate check within a line */
	guint stamp;

	guint64 scans;        /* C lines read */
	gint64 last_time;     /* time of the last C line, if scans > 0 */
	gboolean ended;       /* the END line was read */
	GError *failure;      /* sticky */

	TraceRecord record;
};

/* A cursor over the tab-separated fields of one line. */
typedef struct Fields {
	char *next;           /* start of the next field, NULL after the last */
} Fields;

static char *
field_next(Fields *f)
{
	char *field = f->next, *tab;

	if (!field)
		return NULL;
	tab = strchr(field, '\t');
	if (tab) {
		*tab = '\0';
		f->next = tab + 1;
	} else {
		f->next = NULL;
	}
	return field;
}

/* Strict decimal: digits only, no sign, no blanks, no overflow. */
static gboolean
parse_u64(const char *s, guint64 *out)
{
	guint64 v = 0;

	if (!s || !*s)
		return FALSE;
	for (; *s; s++) {
		guint d;

		if (*s < '0' || *s > '9')
			return FALSE;
		d = (guint)(*s - '0');
		if (v > (G_MAXUINT64 - d) / 10)
			return FALSE;
		v = v * 10 + d;
	}
	*out = v;
	return TRUE;
}

static gboolean
parse_uint(const char *s, guint *out)
{
	guint64 v;

	if (!parse_u64(s, &v) || v > G_MAXUINT)
		return FALSE;
	*out = (guint)v;
	return TRUE;
}

static gboolean G_GNUC_PRINTF(3, 4)
reader_fail(TraceReader *tr, int code, const char *format, ...)
{
	g_autofree char *message = NULL;
	va_list args;

	va_start(args, format);
	message = g_strdup_vprintf(format, args);
	va_end(args);
	if (!tr->failure)
		tr->failure = g_error_new(TRACE_ERROR, code, "line %" G_GUINT64_FORMAT ": %s",
					  tr->line, message);
	return FALSE;
}

/* The interned path of a field holding a path id. */
static const char *
reader_path(TraceReader *tr, const char *field, guint *id_out)
{
	guint id;

	if (!parse_uint(field, &id)) {
		reader_fail(tr, TRACE_ERROR_CORRUPT, "bad path number \"%s\"", field ? field : "");
		return NULL;
	}
	if (id >= tr->paths->len) {
		reader_fail(tr, TRACE_ERROR_CORRUPT, "path number %u is not defined", id);
		return NULL;
	}
	if (id_out)
		*id_out = id;
	return g_ptr_array_index(tr->paths, id);
}

/* P <id> <uri>: ids are defined densely, in order, once. */
static gboolean
reader_parse_path(TraceReader *tr, Fields *f)
{
	const char *id_field = field_next(f);
	const char *uri = field_next(f);
	g_autofree char *hostname = NULL;
	g_autoptr(GError) local = NULL;
	char *path;
	guint id;

	if (!uri || f->next)
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "a path line has 2 fields");
	if (!parse_uint(id_field, &id) || id != tr->paths->len)
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "path number \"%s\" is not the next one (%u)",
				   id_field, tr->paths->len);
	path = g_filename_from_uri(uri, &hostname, &local);
	if (!path)
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "bad file URI: %s", local->message);
	if (hostname) {
		g_free(path);
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "file URI with a host name");
	}
	if (g_hash_table_contains(tr->path_ids, path)) {
		g_free(path);
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "path defined twice");
	}
	g_ptr_array_add(tr->paths, path);
	g_hash_table_insert(tr->path_ids, path, GUINT_TO_POINTER(id + 1));
	g_array_set_size(tr->stamps, tr->paths->len);
	return TRUE;
}

/* C <time> <total> <free> <cached> <buffers> <available> <n> <id>... */
static gboolean
reader_parse_scan(TraceReader *tr, Fields *f)
{
	TraceRecord *rec = &tr->record;
	guint64 *mem_fields[] = {
		&rec->mem.total, &rec->mem.free, &rec->mem.cached,
		&rec->mem.buffers, &rec->mem.available,
	};
	guint64 time;
	guint n, dashes = 0;

	if (!parse_u64(field_next(f), &time) || time > G_MAXINT64)
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "bad scan time");
	if (tr->scans > 0 && (gint64)time < tr->last_time)
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "scan time %" G_GUINT64_FORMAT
				   " is before the previous one (%" G_GINT64_FORMAT ")",
				   time, tr->last_time);

	memset(&rec->mem, 0, sizeof(rec->mem));
	for (guint i = 0; i < G_N_ELEMENTS(mem_fields); i++) {
		const char *field = field_next(f);

		if (field && strcmp(field, "-") == 0)
			dashes++;
		else if (!parse_u64(field, mem_fields[i]))
			return reader_fail(tr, TRACE_ERROR_CORRUPT, "bad memory figure");
	}
	/* Unknown figures are unknown together: meminfo was read or not. */
	if (dashes != 0 && dashes != G_N_ELEMENTS(mem_fields))
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "some memory figures are missing");

	if (!parse_uint(field_next(f), &n))
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "bad executable count");

	g_ptr_array_set_size(rec->exes, 0);
	tr->stamp++;
	for (guint i = 0; i < n; i++) {
		const char *field = field_next(f);
		const char *path;
		guint id;

		if (!field)
			return reader_fail(tr, TRACE_ERROR_CORRUPT, "%u executables announced, %u given",
					   n, i);
		path = reader_path(tr, field, &id);
		if (!path)
			return FALSE;
		if (g_array_index(tr->stamps, guint, id) == tr->stamp)
			return reader_fail(tr, TRACE_ERROR_CORRUPT, "executable %u listed twice", id);
		g_array_index(tr->stamps, guint, id) = tr->stamp;
		g_ptr_array_add(rec->exes, (gpointer)path);
	}
	if (f->next)
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "more than %u executables", n);

	rec->type = TRACE_RECORD_SCAN;
	rec->time = (gint64)time;
	rec->mem_known = dashes == 0;
	tr->scans++;
	tr->last_time = (gint64)time;
	return TRUE;
}

/* M <exe id> <n> (<path id> <offset> <length> <flags>)*n */
static gboolean
reader_parse_maps(TraceReader *tr, Fields *f)
{
	TraceRecord *rec = &tr->record;
	guint n;

	rec->exe = reader_path(tr, field_next(f), NULL);
	if (!rec->exe)
		return FALSE;
	if (!parse_uint(field_next(f), &n))
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "bad map count");

	g_array_set_size(rec->maps, 0);
	for (guint i = 0; i < n; i++) {
		TraceMap map = { 0 };
		const char *flags;

		if (!f->next)
			return reader_fail(tr, TRACE_ERROR_CORRUPT, "%u maps announced, %u given", n, i);
		map.path = reader_path(tr, field_next(f), NULL);
		if (!map.path)
			return FALSE;
		if (!parse_u64(field_next(f), &map.offset) ||
		    !parse_u64(field_next(f), &map.length))
			return reader_fail(tr, TRACE_ERROR_CORRUPT, "bad offset or length in map %u", i);
		if (map.length == 0 || map.offset > G_MAXUINT64 - map.length)
			return reader_fail(tr, TRACE_ERROR_CORRUPT, "empty or overflowing range in map %u", i);
		flags = field_next(f);
		if (flags && strcmp(flags, "d") == 0)
			map.deleted = TRUE;
		else if (!flags || strcmp(flags, "-") != 0)
			return reader_fail(tr, TRACE_ERROR_CORRUPT, "bad flags in map %u", i);
		g_array_append_val(rec->maps, map);
	}
	if (f->next)
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "more than %u maps", n);
	rec->type = TRACE_RECORD_MAPS;
	return TRUE;
}

/* G <exe id> <gone|parse|io> */
static gboolean
reader_parse_failed(TraceReader *tr, Fields *f)
{
	TraceRecord *rec = &tr->record;
	const char *reason;

	rec->exe = reader_path(tr, field_next(f), NULL);
	if (!rec->exe)
		return FALSE;
	reason = field_next(f);
	if (!reason || f->next)
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "a failure line has 2 fields");
	if (strcmp(reason, "gone") == 0)
		rec->failure = PROC_ERROR_GONE;
	else if (strcmp(reason, "parse") == 0)
		rec->failure = PROC_ERROR_PARSE;
	else if (strcmp(reason, "io") == 0)
		rec->failure = PROC_ERROR_IO;
	else
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "unknown failure \"%s\"", reason);
	rec->type = TRACE_RECORD_MAPS_FAILED;
	return TRUE;
}

/*
 * Reads one line into tr->buf without its newline. Returns 1 for a line,
 * 0 at the end of the file, -1 on error (recorded in tr).
 */
static int
reader_getline(TraceReader *tr)
{
	ssize_t len;

	errno = 0;
	len = getline(&tr->buf, &tr->buf_size, tr->fp);
	if (len < 0) {
		if (ferror(tr->fp)) {
			int errsv = errno ? errno : EIO;

			tr->line++;
			reader_fail(tr, TRACE_ERROR_IO, "cannot read: %s", g_strerror(errsv));
			return -1;
		}
		return 0;
	}
	tr->line++;
	if (len == 0 || tr->buf[len - 1] != '\n') {
		reader_fail(tr, TRACE_ERROR_TRUNCATED, "the trace ends inside a line");
		return -1;
	}
	tr->buf[--len] = '\0';
	if (memchr(tr->buf, '\0', (size_t)len)) {
		reader_fail(tr, TRACE_ERROR_CORRUPT, "a NUL byte in a line");
		return -1;
	}
	return 1;
}

static gboolean
reader_parse_header(TraceReader *tr)
{
	Fields f;
	const char *magic;
	guint64 version, cycle;
	int got = reader_getline(tr);

	if (got < 0)
		return FALSE;
	if (got == 0) {
		tr->line = 1;
		return reader_fail(tr, TRACE_ERROR_TRUNCATED, "the trace is empty");
	}
	f.next = tr->buf;
	magic = field_next(&f);
	if (strcmp(magic, TRACE_MAGIC) != 0)
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "not a preload trace");
	if (!parse_u64(field_next(&f), &version) || version == 0)
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "bad format version");
	if (version > TRACE_FORMAT_VERSION)
		return reader_fail(tr, TRACE_ERROR_VERSION,
				   "format version %" G_GUINT64_FORMAT " is newer than %d",
				   version, TRACE_FORMAT_VERSION);
	if (!parse_u64(field_next(&f), &cycle) || cycle == 0 || cycle > TRACE_CYCLE_MAX || f.next)
		return reader_fail(tr, TRACE_ERROR_CORRUPT, "bad cycle in the header");
	tr->version = (guint)version;
	tr->cycle = (gint64)cycle;
	return TRUE;
}

static TraceReader *
reader_new(FILE *fp, char *data, GError **error)
{
	g_autoptr(TraceReader) tr = g_new0(TraceReader, 1);

	tr->fp = fp;
	tr->data = data;
	tr->paths = g_ptr_array_new_with_free_func(g_free);
	tr->path_ids = g_hash_table_new(g_str_hash, g_str_equal);
	tr->stamps = g_array_new(FALSE, TRUE, sizeof(guint));
	tr->record.exes = g_ptr_array_new();
	tr->record.maps = g_array_new(FALSE, FALSE, sizeof(TraceMap));
	if (!reader_parse_header(tr)) {
		g_propagate_error(error, g_error_copy(tr->failure));
		return NULL;
	}
	return g_steal_pointer(&tr);
}

TraceReader *
trace_reader_open(const char *path, GError **error)
{
	g_autoptr(TraceReader) tr = NULL;
	GError *local = NULL;
	FILE *fp;

	g_return_val_if_fail(path != NULL, NULL);

	fp = fopen(path, "re");
	if (!fp) {
		int errsv = errno;

		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "cannot open %s: %s",
			    path, g_strerror(errsv));
		return NULL;
	}
	tr = reader_new(fp, NULL, &local);
	if (!tr) {
		g_propagate_prefixed_error(error, local, "%s: ", path);
		return NULL;
	}
	return g_steal_pointer(&tr);
}

TraceReader *
trace_reader_new_from_data(const char *data, gsize length, GError **error)
{
	char *copy;
	FILE *fp;

	g_return_val_if_fail(data != NULL || length == 0, NULL);

	/* fmemopen() rejects a zero size; one spare byte also keeps a NUL. */
	copy = g_malloc(length + 1);
	if (length)
		memcpy(copy, data, length);
	copy[length] = '\0';
	fp = fmemopen(copy, length ? length : 1, "r");
	if (!fp) {
		g_free(copy);
		g_set_error(error, TRACE_ERROR, TRACE_ERROR_IO, "fmemopen: %s", g_strerror(errno));
		return NULL;
	}
	/* An empty buffer must read as empty, not as one NUL byte. */
	if (length == 0)
		(void)fseek(fp, 1, SEEK_SET);
	return reader_new(fp, copy, error);
}

void
trace_reader_free(TraceReader *tr)
{
	if (!tr)
		return;
	if (tr->fp)
		(void)fclose(tr->fp);
	g_free(tr->data);
	free(tr->buf);
	g_ptr_array_unref(tr->record.exes);
	g_array_unref(tr->record.maps);
	g_hash_table_unref(tr->path_ids);
	g_ptr_array_unref(tr->paths);
	g_array_unref(tr->stamps);
	g_clear_error(&tr->failure);
	g_free(tr);
}

gboolean
trace_reader_next(TraceReader *tr, const TraceRecord **record, GError **error)
{
	g_return_val_if_fail(tr != NULL, FALSE);
	g_return_val_if_fail(record != NULL, FALSE);

	*record = NULL;
	for (;;) {
		Fields f;
		const char *tag;
		gboolean ok;
		int got;

		if (tr->failure) {
			g_propagate_error(error, g_error_copy(tr->failure));
			return FALSE;
		}
		got = reader_getline(tr);
		if (got < 0)
			continue;
		if (got == 0)
			return TRUE;
		if (tr->buf[0] == '\0' || tr->buf[0] == '#')
			continue;

		f.next = tr->buf;
		tag = field_next(&f);
		if (tr->ended) {
			reader_fail(tr, TRACE_ERROR_CORRUPT, "a record after END");
			continue;
		}
		tr->record.line = tr->line;
		if (strcmp(tag, "P") == 0) {
			(void)reader_parse_path(tr, &f);
			continue;
		} else if (strcmp(tag, "C") == 0) {
			ok = reader_parse_scan(tr, &f);
		} else if (strcmp(tag, "M") == 0) {
			ok = reader_parse_maps(tr, &f);
		} else if (strcmp(tag, "G") == 0) {
			ok = reader_parse_failed(tr, &f);
		} else if (strcmp(tag, "END") == 0) {
			guint64 scans;

			if (!parse_u64(field_next(&f), &scans) || f.next)
				reader_fail(tr, TRACE_ERROR_CORRUPT, "bad END line");
			else if (scans != tr->scans)
				reader_fail(tr, TRACE_ERROR_CORRUPT, "END counts %" G_GUINT64_FORMAT
					    " scans, the trace has %" G_GUINT64_FORMAT, scans, tr->scans);
			else
				tr->ended = TRUE;
			continue;
		} else {
			reader_fail(tr, TRACE_ERROR_CORRUPT, "unknown record \"%.16s\"", tag);
			continue;
		}
		if (ok) {
			*record = &tr->record;
			return TRUE;
		}
	}
}

gint64
trace_reader_get_cycle(const TraceReader *tr)
{
	g_return_val_if_fail(tr != NULL, 0);
	return tr->cycle;
}

guint
trace_reader_get_version(const TraceReader *tr)
{
	g_return_val_if_fail(tr != NULL, 0);
	return tr->version;
}

gboolean
trace_reader_is_complete(const TraceReader *tr)
{
	g_return_val_if_fail(tr != NULL, FALSE);
	return tr->ended;
}

guint
trace_reader_get_n_paths(const TraceReader *tr)
{
	g_return_val_if_fail(tr != NULL, 0);
	return tr->paths->len;
}
