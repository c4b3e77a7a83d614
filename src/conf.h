/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Conf: the configuration, built from the key table in confkeys.h.
 *
 * Loading is transactional: conf_load() fills a fresh Conf and the caller
 * swaps it in only on success. A bad value is reported (file, key, value)
 * and that key keeps its previous value; only an unreadable or
 * unparseable file fails the load.
 */
#pragma once

#include <glib.h>

#define CONF_ERROR (conf_error_quark())
GQuark conf_error_quark(void);

typedef enum {
	CONF_ERROR_UNUSABLE,  /* the file cannot be read or parsed */
} ConfError;

typedef struct Conf {
#define CONF_INT(g, k, def, lo, hi, unit, doc) gint64 k;
#define CONF_BOOL(g, k, def, doc) gboolean k;
#define CONF_LIST(g, k, def, doc) char **k;
#define CONF_STRING(g, k, def, doc) char *k;
#include "confkeys.h"
#undef CONF_INT
#undef CONF_BOOL
#undef CONF_LIST
#undef CONF_STRING
} Conf;

/* A Conf holding the compiled-in defaults. */
Conf *conf_new(void);
Conf *conf_copy(const Conf *conf);
void conf_free(Conf *conf);

/*
 * Reads `path` over the values already in conf. Each bad value is logged
 * as a warning naming the file, key and value, and that key is left as it
 * was. Unknown keys are logged and ignored. Returns FALSE with
 * CONF_ERROR_UNUSABLE (or a G_FILE_ERROR) if the file cannot be used at
 * all; conf may then hold some of the file's values, so callers load into
 * a copy.
 */
gboolean conf_load(Conf *conf, const char *path, GError **error);
/*
 * conf_load() for a reload (SIGHUP): conf holds the defaults, so a key
 * the file no longer sets goes back to its default, as at start; a value
 * that cannot be used keeps previous's (the running configuration's)
 * value for that key, and the warning says so.
 */
gboolean conf_reload(Conf *conf, const Conf *previous, const char *path, GError **error);
/*
 * The parser behind conf_load(): reads the file's text, `len` bytes of
 * `data` (which need not end in NUL), over conf. `path` only names the
 * file in messages.
 */
gboolean conf_load_data(Conf *conf, const char *data, gsize len, const char *path,
			GError **error);

/* "[group]\nkey = value\n..." for the SIGUSR1 dump. */
char *conf_dump(const Conf *conf);

/* The shipped preload.conf: every key with its documentation and default. */
char *conf_template(void);

/* One row of a description of every key, for preload.conf(5) and checks. */
typedef struct ConfKeyInfo {
	const char *group, *key, *type, *unit, *doc;
	char *default_text;   /* as it would be written in the file */
	gint64 min, max;      /* for integers */
} ConfKeyInfo;
/* A GPtrArray of ConfKeyInfo *, in table order; free with g_ptr_array_unref. */
GPtrArray *conf_describe(void);

/*
 * Whether `path` passes a prefix list: the first prefix that matches
 * decides (a leading '!' rejects); no match, or an empty or NULL list,
 * accepts.
 */
gboolean conf_prefix_accepts(char *const *prefixes, const char *path);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Conf, conf_free)
