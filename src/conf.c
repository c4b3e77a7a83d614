/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Conf: the configuration file, driven by the one table in confkeys.h.
 *
 * The table is expanded once, below, into conf_keys[]: a descriptor per
 * key holding its group, name, type, default, range, unit, documentation
 * and the offset of its field in Conf. Everything else in this file (the
 * defaults, the GKeyFile parser and its range checks, the SIGUSR1 dump,
 * the shipped preload.conf and the key list for the man page) walks that
 * array, so adding a key to confkeys.h is the whole job and no key name is
 * spelled twice. The one exception is the alias table: preload 0.6.4
 * shipped its preload.conf with `processes` where the code read
 * `maxprocs`, and those files are still out there.
 *
 * Loading never gives up on a single bad value: it is reported with the
 * file, the key and the value, and the key keeps the value it had. Only a
 * file that cannot be read or parsed at all fails the load.
 */
#include "config.h"

#include "conf.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_QUARK(conf-error-quark, conf_error)

/* A configuration file larger than this is a mistake, not a config. */
#define CONF_MAX_FILE_SIZE (1024 * 1024)

/* Column at which conf_template() wraps its comments. */
#define CONF_TEMPLATE_WIDTH 72

typedef enum {
	CONF_TYPE_INT,
	CONF_TYPE_BOOL,
	CONF_TYPE_LIST,
	CONF_TYPE_STRING,
} ConfType;

typedef struct ConfKey {
	const char *group;
	const char *key;
	ConfType type;
	size_t offset;          /* of the key's field in Conf */
	gint64 def;             /* default of an integer or boolean */
	const char *def_list;   /* default of a list (';'-separated) or string */
	gint64 min, max;        /* allowed range of an integer */
	const char *unit;       /* of an integer, "" if none */
	const char *doc;
} ConfKey;

/* Every default must lie in its own range; checked when compiling. */
#define CONF_INT(g, k, def, lo, hi, u, d) \
	G_STATIC_ASSERT((lo) <= (def) && (def) <= (hi));
#define CONF_BOOL(g, k, def, d)
#define CONF_LIST(g, k, def, d)
#define CONF_STRING(g, k, def, d)
#include "confkeys.h"
#undef CONF_INT
#undef CONF_BOOL
#undef CONF_LIST
#undef CONF_STRING

static const ConfKey conf_keys[] = {
#define CONF_INT(g, k, def, lo, hi, u, d) \
	{ #g, #k, CONF_TYPE_INT, offsetof(Conf, k), (def), NULL, (lo), (hi), (u), (d) },
#define CONF_BOOL(g, k, def, d) \
	{ #g, #k, CONF_TYPE_BOOL, offsetof(Conf, k), (def) ? 1 : 0, NULL, 0, 1, "", (d) },
#define CONF_LIST(g, k, def, d) \
	{ #g, #k, CONF_TYPE_LIST, offsetof(Conf, k), 0, (def), 0, 0, "", (d) },
#define CONF_STRING(g, k, def, d) \
	{ #g, #k, CONF_TYPE_STRING, offsetof(Conf, k), 0, (def), 0, 0, "", (d) },
#include "confkeys.h"
#undef CONF_INT
#undef CONF_BOOL
#undef CONF_LIST
#undef CONF_STRING
};

/*
 * Old spellings still accepted. When a file has both, the current name
 * wins: it is the one a user editing the file today would have added.
 */
static const struct {
	const char *group;
	const char *alias;
	size_t target;          /* offset of the field, as in ConfKey */
} conf_aliases[] = {
	{ "system", "processes", offsetof(Conf, maxprocs) },
};

/* ---- field access ---- */

/* The field of key k in conf; the key's type says which accessor applies. */
#define CONF_FIELD(conf, k, type) ((type *)(void *)((char *)(conf) + (k)->offset))
#define CONF_CFIELD(conf, k, type) \
	((type const *)(const void *)((const char *)(conf) + (k)->offset))

static const ConfKey *
conf_find_key(const char *group, const char *key)
{
	for (size_t i = 0; i < G_N_ELEMENTS(conf_keys); i++)
		if (strcmp(conf_keys[i].group, group) == 0 && strcmp(conf_keys[i].key, key) == 0)
			return &conf_keys[i];
	return NULL;
}

static const ConfKey *
conf_find_offset(size_t offset)
{
	for (size_t i = 0; i < G_N_ELEMENTS(conf_keys); i++)
		if (conf_keys[i].offset == offset)
			return &conf_keys[i];
	return NULL;
}

static gboolean
conf_group_known(const char *group)
{
	for (size_t i = 0; i < G_N_ELEMENTS(conf_keys); i++)
		if (strcmp(conf_keys[i].group, group) == 0)
			return TRUE;
	return FALSE;
}

/* Whether conf_keys[i] is the first key of its group (groups print once). */
static gboolean
conf_first_of_group(size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (strcmp(conf_keys[j].group, conf_keys[i].group) == 0)
			return FALSE;
	return TRUE;
}

/*
 * Trims each item, drops the empty ones and returns a new vector that
 * always exists (an empty list is an empty vector, never NULL). Takes
 * ownership of `items`.
 */
static char **
conf_normalize_list(char **items)
{
	GPtrArray *out = g_ptr_array_new();

	for (size_t i = 0; items && items[i]; i++) {
		g_strstrip(items[i]);
		if (*items[i])
			g_ptr_array_add(out, g_strdup(items[i]));
	}
	g_strfreev(items);
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(out, FALSE);
}

/* ---- lifetime ---- */

Conf *
conf_new(void)
{
	Conf *conf = g_new0(Conf, 1);

	for (size_t i = 0; i < G_N_ELEMENTS(conf_keys); i++) {
		const ConfKey *k = &conf_keys[i];

		switch (k->type) {
		case CONF_TYPE_INT:
			*CONF_FIELD(conf, k, gint64) = k->def;
			break;
		case CONF_TYPE_BOOL:
			*CONF_FIELD(conf, k, gboolean) = k->def != 0;
			break;
		case CONF_TYPE_LIST:
			*CONF_FIELD(conf, k, char **) =
				conf_normalize_list(g_strsplit(k->def_list ? k->def_list : "", ";", -1));
			break;
		case CONF_TYPE_STRING:
			*CONF_FIELD(conf, k, char *) = g_strdup(k->def_list ? k->def_list : "");
			break;
		}
	}
	return conf;
}

Conf *
conf_copy(const Conf *conf)
{
	Conf *copy;

	g_return_val_if_fail(conf != NULL, NULL);
	copy = g_memdup2(conf, sizeof(*conf));
	for (size_t i = 0; i < G_N_ELEMENTS(conf_keys); i++) {
		if (conf_keys[i].type == CONF_TYPE_LIST) {
			char ***field = CONF_FIELD(copy, &conf_keys[i], char **);

			*field = g_strdupv(*field);
		} else if (conf_keys[i].type == CONF_TYPE_STRING) {
			char **field = CONF_FIELD(copy, &conf_keys[i], char *);

			*field = g_strdup(*field);
		}
	}
	return copy;
}

void
conf_free(Conf *conf)
{
	if (!conf)
		return;
	for (size_t i = 0; i < G_N_ELEMENTS(conf_keys); i++) {
		if (conf_keys[i].type == CONF_TYPE_LIST)
			g_strfreev(*CONF_FIELD(conf, &conf_keys[i], char **));
		else if (conf_keys[i].type == CONF_TYPE_STRING)
			g_free(*CONF_FIELD(conf, &conf_keys[i], char *));
	}
	g_free(conf);
}

/* ---- values as text ---- */

/*
 * A list item or a string as GKeyFile syntax, so that the dump can be
 * loaded back: the escape character and the characters that would end
 * the line are escaped, and in a list item also the separator.
 */
static void
conf_append_escaped(GString *out, const char *text, gboolean in_list)
{
	for (const char *p = text; *p; p++) {
		switch (*p) {
		case ';':  g_string_append(out, in_list ? "\\;" : ";"); break;
		case '\\': g_string_append(out, "\\\\"); break;
		case '\n': g_string_append(out, "\\n"); break;
		case '\r': g_string_append(out, "\\r"); break;
		case '\t': g_string_append(out, "\\t"); break;
		default:   g_string_append_c(out, *p); break;
		}
	}
}

static void
conf_append_list(GString *out, char *const *items)
{
	for (size_t i = 0; items && items[i]; i++) {
		if (i > 0)
			g_string_append_c(out, ';');
		conf_append_escaped(out, items[i], TRUE);
	}
}

/* The value of key k in conf, as it would be written in the file. */
static char *
conf_value_text(const Conf *conf, const ConfKey *k)
{
	GString *out;

	switch (k->type) {
	case CONF_TYPE_INT:
		return g_strdup_printf("%" G_GINT64_FORMAT, *CONF_CFIELD(conf, k, gint64));
	case CONF_TYPE_BOOL:
		return g_strdup(*CONF_CFIELD(conf, k, gboolean) ? "true" : "false");
	case CONF_TYPE_LIST:
		out = g_string_new(NULL);
		conf_append_list(out, *CONF_CFIELD(conf, k, char **));
		return g_string_free(out, FALSE);
	case CONF_TYPE_STRING:
		out = g_string_new(NULL);
		conf_append_escaped(out, *CONF_CFIELD(conf, k, char *), FALSE);
		return g_string_free(out, FALSE);
	}
	g_return_val_if_reached(NULL);
}

/* The default of key k, as it would be written in the file. */
static char *
conf_default_text(const ConfKey *k)
{
	g_autoptr(Conf) defaults = conf_new();

	return conf_value_text(defaults, k);
}

/* What a valid value of key k looks like, for warnings. */
static char *
conf_allowed_text(const ConfKey *k)
{
	switch (k->type) {
	case CONF_TYPE_INT:
		return g_strdup_printf("%" G_GINT64_FORMAT "..%" G_GINT64_FORMAT "%s%s",
				       k->min, k->max, *k->unit ? " " : "", k->unit);
	case CONF_TYPE_BOOL:
		return g_strdup("true, false, 1 or 0");
	case CONF_TYPE_LIST:
		return g_strdup("a ';'-separated list of path prefixes");
	case CONF_TYPE_STRING:
		return g_strdup("a path, or empty");
	}
	g_return_val_if_reached(NULL);
}

/* ---- loading ---- */

/*
 * Reads the whole file with one errno to report, and refuses anything
 * absurdly large. A missing file is G_FILE_ERROR_NOENT so that the caller
 * can run on the defaults when the default file does not exist.
 */
static char *
conf_read_file(const char *path, gsize *len, GError **error)
{
	g_autoptr(GString) data = g_string_new(NULL);
	char buf[8192];
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int saved = errno;

		if (saved == ENOENT)
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
				    "cannot read %s: %s", path, g_strerror(saved));
		else
			g_set_error(error, CONF_ERROR, CONF_ERROR_UNUSABLE,
				    "cannot read %s: %s", path, g_strerror(saved));
		return NULL;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved = errno;

			close(fd);
			g_set_error(error, CONF_ERROR, CONF_ERROR_UNUSABLE,
				    "cannot read %s: %s", path, g_strerror(saved));
			return NULL;
		}
		if (n == 0)
			break;
		if (data->len + (gsize)n > CONF_MAX_FILE_SIZE) {
			close(fd);
			g_set_error(error, CONF_ERROR, CONF_ERROR_UNUSABLE,
				    "cannot use %s: larger than %d bytes", path, CONF_MAX_FILE_SIZE);
			return NULL;
		}
		g_string_append_len(data, buf, n);
	}
	close(fd);
	*len = data->len;
	return g_string_free(g_steal_pointer(&data), FALSE);
}

/*
 * Reports a bad value. `name` is the key as spelled in the file (it may
 * be an alias of k).
 */
static void
conf_warn_invalid(const Conf *conf, const ConfKey *k, const char *path, const char *name,
		  const char *value, const char *reason)
{
	g_autofree char *allowed = conf_allowed_text(k);
	g_autofree char *kept = conf_value_text(conf, k);

	if (k->type == CONF_TYPE_LIST || k->type == CONF_TYPE_STRING)
		g_warning("%s: [%s] %s = '%s' is invalid: %s (allowed %s); keeping '%s'",
			  path, k->group, name, value, reason, allowed, kept);
	else
		g_warning("%s: [%s] %s = '%s' is invalid: %s (allowed %s); keeping %s",
			  path, k->group, name, value, reason, allowed, kept);
}

/* Sets key k from the file's `name` in k's group, or reports why not. */
/* Sets key k of dst to src's value. */
static void
conf_copy_key(Conf *dst, const Conf *src, const ConfKey *k)
{
	switch (k->type) {
	case CONF_TYPE_INT:
		*CONF_FIELD(dst, k, gint64) = *CONF_FIELD(src, k, gint64);
		break;
	case CONF_TYPE_BOOL:
		*CONF_FIELD(dst, k, gboolean) = *CONF_FIELD(src, k, gboolean);
		break;
	case CONF_TYPE_LIST:
		g_strfreev(*CONF_FIELD(dst, k, char **));
		*CONF_FIELD(dst, k, char **) = g_strdupv(*CONF_FIELD(src, k, char **));
		break;
	case CONF_TYPE_STRING:
		g_free(*CONF_FIELD(dst, k, char *));
		*CONF_FIELD(dst, k, char *) = g_strdup(*CONF_FIELD(src, k, char *));
		break;
	}
}

/*
 * A value of the file that cannot be used: key k keeps previous's value
 * (the running one, on a reload) or, without previous, conf's own.
 */
static void
conf_reject(Conf *conf, const Conf *previous, const ConfKey *k, const char *path,
	    const char *name, const char *value, const char *reason)
{
	if (previous)
		conf_copy_key(conf, previous, k);
	conf_warn_invalid(conf, k, path, name, value, reason);
}

static void
conf_apply(Conf *conf, const Conf *previous, const ConfKey *k, GKeyFile *file, const char *path,
	   const char *name)
{
	g_autoptr(GError) local = NULL;
	g_autofree char *raw = g_key_file_get_value(file, k->group, name, NULL);
	g_autofree char *value = NULL;
	gint64 number;
	char **items;
	gsize n_items;

	if (!raw)
		return;
	value = g_strstrip(g_strdup(raw));

	switch (k->type) {
	case CONF_TYPE_INT:
		/* Decimal only, the whole value, and no silent wrap-around. */
		if (!g_ascii_string_to_signed(value, 10, k->min, k->max, &number, &local)) {
			const char *reason = g_error_matches(local, G_NUMBER_PARSER_ERROR,
							     G_NUMBER_PARSER_ERROR_OUT_OF_BOUNDS)
				? "out of range" : "not a decimal integer";

			conf_reject(conf, previous, k, path, name, value, reason);
			return;
		}
		*CONF_FIELD(conf, k, gint64) = number;
		return;

	case CONF_TYPE_BOOL:
		/* The four spellings GKeyFile itself accepts. */
		if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0) {
			*CONF_FIELD(conf, k, gboolean) = TRUE;
		} else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0) {
			*CONF_FIELD(conf, k, gboolean) = FALSE;
		} else {
			conf_reject(conf, previous, k, path, name, value, "not a boolean");
		}
		return;

	case CONF_TYPE_LIST:
		/* GKeyFile does the splitting so that "\;" escapes a ';'. */
		items = g_key_file_get_string_list(file, k->group, name, &n_items, &local);
		if (!items) {
			conf_reject(conf, previous, k, path, name, value,
					  "a bad '\\' escape, or not UTF-8");
			return;
		}
		g_strfreev(*CONF_FIELD(conf, k, char **));
		*CONF_FIELD(conf, k, char **) = conf_normalize_list(items);
		return;

	case CONF_TYPE_STRING: {
		char *text = g_key_file_get_string(file, k->group, name, &local);

		if (!text) {
			conf_reject(conf, previous, k, path, name, value,
					  "a bad '\\' escape, or not UTF-8");
			return;
		}
		g_free(*CONF_FIELD(conf, k, char *));
		*CONF_FIELD(conf, k, char *) = g_strstrip(text);
		return;
	}
	}
}

/*
 * If `name` is an old spelling of a key in `group`, applies it unless the
 * current spelling is also present. Returns FALSE if it is no alias.
 */
static gboolean
conf_apply_alias(Conf *conf, const Conf *previous, GKeyFile *file, const char *path,
		 const char *group, const char *name)
{
	for (size_t i = 0; i < G_N_ELEMENTS(conf_aliases); i++) {
		const ConfKey *k;

		if (strcmp(conf_aliases[i].group, group) != 0 ||
		    strcmp(conf_aliases[i].alias, name) != 0)
			continue;
		k = conf_find_offset(conf_aliases[i].target);
		g_return_val_if_fail(k != NULL, FALSE);
		if (g_key_file_has_key(file, group, k->key, NULL)) {
			g_message("%s: [%s] both %s and its old spelling %s are set; using %s, ignoring %s",
				  path, group, k->key, name, k->key, name);
			return TRUE;
		}
		g_debug("%s: [%s] %s is the old spelling of %s", path, group, name, k->key);
		conf_apply(conf, previous, k, file, path, name);
		return TRUE;
	}
	return FALSE;
}

static gboolean load_data(Conf *conf, const Conf *previous, const char *data, gsize len,
			  const char *path, GError **error);

gboolean
conf_load(Conf *conf, const char *path, GError **error)
{
	g_autofree char *data = NULL;
	gsize len = 0;

	g_return_val_if_fail(conf != NULL, FALSE);
	g_return_val_if_fail(path != NULL, FALSE);

	data = conf_read_file(path, &len, error);
	if (!data)
		return FALSE;
	return conf_load_data(conf, data, len, path, error);
}

gboolean
conf_reload(Conf *conf, const Conf *previous, const char *path, GError **error)
{
	g_autofree char *data = NULL;
	gsize len = 0;

	g_return_val_if_fail(conf != NULL, FALSE);
	g_return_val_if_fail(previous != NULL, FALSE);
	g_return_val_if_fail(path != NULL, FALSE);

	data = conf_read_file(path, &len, error);
	if (!data)
		return FALSE;
	return load_data(conf, previous, data, len, path, error);
}

gboolean
conf_load_data(Conf *conf, const char *data, gsize len, const char *path, GError **error)
{
	return load_data(conf, NULL, data, len, path, error);
}

static gboolean
load_data(Conf *conf, const Conf *previous, const char *data, gsize len, const char *path,
	  GError **error)
{
	g_autoptr(GKeyFile) file = g_key_file_new();
	g_autoptr(GError) local = NULL;
	g_auto(GStrv) groups = NULL;

	g_return_val_if_fail(conf != NULL, FALSE);
	g_return_val_if_fail(data != NULL || len == 0, FALSE);
	g_return_val_if_fail(path != NULL, FALSE);

	if (len > CONF_MAX_FILE_SIZE) {
		g_set_error(error, CONF_ERROR, CONF_ERROR_UNUSABLE,
			    "cannot use %s: larger than %d bytes", path, CONF_MAX_FILE_SIZE);
		return FALSE;
	}
	if (!g_key_file_load_from_data(file, data ? data : "", len, G_KEY_FILE_NONE, &local)) {
		g_set_error(error, CONF_ERROR, CONF_ERROR_UNUSABLE,
			    "cannot parse %s: %s", path, local->message);
		return FALSE;
	}

	groups = g_key_file_get_groups(file, NULL);
	for (size_t g = 0; groups[g]; g++) {
		g_auto(GStrv) keys = NULL;

		if (!conf_group_known(groups[g])) {
			g_warning("%s: unknown group [%s], ignoring", path, groups[g]);
			continue;
		}
		keys = g_key_file_get_keys(file, groups[g], NULL, NULL);
		for (size_t i = 0; keys && keys[i]; i++) {
			const ConfKey *k = conf_find_key(groups[g], keys[i]);

			if (k)
				conf_apply(conf, previous, k, file, path, keys[i]);
			else if (!conf_apply_alias(conf, previous, file, path, groups[g], keys[i]))
				g_warning("%s: [%s] unknown key %s, ignoring", path, groups[g], keys[i]);
		}
	}
	return TRUE;
}

/* ---- output ---- */

char *
conf_dump(const Conf *conf)
{
	GString *out = g_string_new(NULL);

	g_return_val_if_fail(conf != NULL, NULL);
	for (size_t i = 0; i < G_N_ELEMENTS(conf_keys); i++) {
		if (!conf_first_of_group(i))
			continue;
		if (out->len > 0)
			g_string_append_c(out, '\n');
		g_string_append_printf(out, "[%s]\n", conf_keys[i].group);
		for (size_t j = i; j < G_N_ELEMENTS(conf_keys); j++) {
			g_autofree char *value = NULL;

			if (strcmp(conf_keys[j].group, conf_keys[i].group) != 0)
				continue;
			value = conf_value_text(conf, &conf_keys[j]);
			g_string_append_printf(out, "%s = %s\n", conf_keys[j].key, value);
		}
	}
	return g_string_free(out, FALSE);
}

/*
 * Appends `text` as "# " comment lines of at most CONF_TEMPLATE_WIDTH
 * columns, breaking at spaces (a word longer than a line gets its own).
 */
static void
conf_append_comment(GString *out, const char *text)
{
	g_auto(GStrv) words = g_strsplit(text, " ", -1);
	gsize col = 0;

	for (size_t i = 0; words[i]; i++) {
		gsize len = strlen(words[i]);

		if (len == 0)
			continue;
		if (col > 0 && col + 1 + len > CONF_TEMPLATE_WIDTH) {
			g_string_append_c(out, '\n');
			col = 0;
		}
		if (col == 0) {
			g_string_append(out, "# ");
			col = 2;
		} else {
			g_string_append_c(out, ' ');
			col++;
		}
		g_string_append(out, words[i]);
		col += len;
	}
	if (col > 0)
		g_string_append_c(out, '\n');
}

static const char *const conf_template_header[] = {
	/* in parentheses: each paragraph is one string, split for width */
	("preload.conf: the configuration of preload, the adaptive readahead "
	 "daemon. preload watches which programs run, learns which of them tend "
	 "to run together, and reads the files of those it expects to start "
	 "into the page cache before they are needed."),

	("Every value shown below is the compiled-in default, so a key left out "
	 "(or a missing file) means the same thing. A value that is malformed or "
	 "out of range is reported in the log and ignored."),

	("The syntax is that of GLib's GKeyFile (as in .desktop files): [group] "
	 "headers, key = value lines, comment lines starting with '#'. Booleans "
	 "are true or false; lists are separated by ';'."),

	("preload reads this file at start and again on SIGHUP. If the file "
	 "cannot be read or parsed on SIGHUP, the running configuration is kept."),
};

char *
conf_template(void)
{
	GString *out = g_string_new(NULL);

	for (size_t i = 0; i < G_N_ELEMENTS(conf_template_header); i++) {
		if (i > 0)
			g_string_append(out, "#\n");
		conf_append_comment(out, conf_template_header[i]);
	}

	for (size_t i = 0; i < G_N_ELEMENTS(conf_keys); i++) {
		if (!conf_first_of_group(i))
			continue;
		g_string_append_printf(out, "\n[%s]\n", conf_keys[i].group);
		for (size_t j = i; j < G_N_ELEMENTS(conf_keys); j++) {
			const ConfKey *k = &conf_keys[j];
			g_autofree char *def = NULL;
			g_autofree char *line = NULL;

			if (strcmp(k->group, conf_keys[i].group) != 0)
				continue;
			def = conf_default_text(k);
			g_string_append_c(out, '\n');
			conf_append_comment(out, k->doc);
			switch (k->type) {
			case CONF_TYPE_INT:
				line = g_strdup_printf("Default: %s%s%s; range: %" G_GINT64_FORMAT
						       "..%" G_GINT64_FORMAT ".", def,
						       *k->unit ? " " : "", k->unit, k->min, k->max);
				break;
			case CONF_TYPE_BOOL:
				line = g_strdup_printf("Default: %s; either true or false.", def);
				break;
			case CONF_TYPE_LIST:
				/* A list has no line breaks: a long one is only on the key's line. */
				line = !*def ? g_strdup("Default: empty (accepts everything).")
				       : strlen(def) > 60 ? g_strdup("Default: the list set below.")
				       : g_strdup_printf("Default: %s", def);
				break;
			case CONF_TYPE_STRING:
				line = *def ? g_strdup_printf("Default: %s", def)
					    : g_strdup("Default: empty (off).");
				break;
			}
			conf_append_comment(out, line);
			g_string_append_printf(out, "%s = %s\n", k->key, def);
		}
	}
	return g_string_free(out, FALSE);
}

static void
conf_key_info_free(gpointer data)
{
	ConfKeyInfo *info = data;

	g_free(info->default_text);
	g_free(info);
}

GPtrArray *
conf_describe(void)
{
	static const char *const type_names[] = {
		[CONF_TYPE_INT] = "integer",
		[CONF_TYPE_BOOL] = "boolean",
		[CONF_TYPE_LIST] = "list",
		[CONF_TYPE_STRING] = "string",
	};
	GPtrArray *rows = g_ptr_array_new_with_free_func(conf_key_info_free);

	for (size_t i = 0; i < G_N_ELEMENTS(conf_keys); i++) {
		const ConfKey *k = &conf_keys[i];
		ConfKeyInfo *info = g_new0(ConfKeyInfo, 1);

		info->group = k->group;
		info->key = k->key;
		info->type = type_names[k->type];
		info->unit = k->unit;
		info->doc = k->doc;
		info->default_text = conf_default_text(k);
		info->min = k->min;
		info->max = k->max;
		g_ptr_array_add(rows, info);
	}
	return rows;
}

/* ---- prefix lists ---- */

/*
 * Items are raw prefixes compared with strncmp, as in preload 0.6.4, so
 * "/lib" matches "/lib64/..." too. An empty item, or a lone "!", is
 * skipped: as a zero-length prefix it would match every path, which a
 * stray ";;" or "!" in a hand-edited list surely does not mean. To reject
 * everything not accepted earlier, end the list with "!/": "/" is a
 * prefix of every absolute path.
 */
gboolean
conf_prefix_accepts(char *const *prefixes, const char *path)
{
	g_return_val_if_fail(path != NULL, FALSE);

	for (size_t i = 0; prefixes && prefixes[i]; i++) {
		const char *prefix = prefixes[i];
		gboolean reject = prefix[0] == '!';

		if (reject)
			prefix++;
		if (*prefix == '\0')
			continue;
		if (strncmp(path, prefix, strlen(prefix)) == 0)
			return !reject;
	}
	return TRUE;
}
