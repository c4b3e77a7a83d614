/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzzes the configuration parser (conf_load_data, the part of conf_load
 * after the file is read). Whatever the file holds, a load must either
 * fail with an error or leave every integer key inside its documented
 * range, every list a NULL-terminated vector and every string set, since
 * the daemon uses the values without checking them again; and the
 * SIGUSR1 dump of the result must load back to the same values.
 */
#include "config.h"

#include <string.h>

#include "conf.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_logs();
	return 0;
}

/* Every key straight from the table, so a new key is checked too. */
static void
check_ranges(const Conf *conf)
{
#define CONF_INT(g, k, def, lo, hi, unit, doc) \
	if (conf->k < (lo) || conf->k > (hi)) \
		abort();
#define CONF_BOOL(g, k, def, doc) \
	if (conf->k != TRUE && conf->k != FALSE) \
		abort();
#define CONF_LIST(g, k, def, doc) \
	if (!conf->k) \
		abort();
#define CONF_STRING(g, k, def, doc) \
	if (!conf->k) \
		abort();
#include "confkeys.h"
#undef CONF_INT
#undef CONF_BOOL
#undef CONF_LIST
#undef CONF_STRING
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(Conf) conf = conf_new();
	g_autoptr(Conf) again = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *dump = NULL;
	g_autofree char *redump = NULL;

	if (!conf_load_data(conf, (const char *)data, size, "fuzz.conf", &error)) {
		if (!error)
			abort();
		return 0;
	}
	check_ranges(conf);

	/* The dump is what an administrator copies back into the file. */
	dump = conf_dump(conf);
	again = conf_new();
	if (!conf_load_data(again, dump, strlen(dump), "dump.conf", NULL))
		abort();
	redump = conf_dump(again);
	if (strcmp(dump, redump) != 0)
		abort();
	return 0;
}
