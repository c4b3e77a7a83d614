/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * preload-genconf: prints the shipped preload.conf, or with --keys one
 * tab-separated line per configuration key
 *
 *   group  key  type  default  min  max  unit
 *
 * ("-" where a column does not apply), for checks that the man page
 * documents every key. Both come from the key table in confkeys.h, so
 * the shipped file and the documentation cannot drift from the code:
 * tests/conf-template.sh compares this output with preload.conf.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

static void
print_keys(void)
{
	g_autoptr(GPtrArray) rows = conf_describe();

	for (guint i = 0; i < rows->len; i++) {
		const ConfKeyInfo *info = rows->pdata[i];
		gboolean integer = strcmp(info->type, "integer") == 0;

		if (integer)
			printf("%s\t%s\t%s\t%s\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\t%s\n",
			       info->group, info->key, info->type, info->default_text,
			       info->min, info->max, info->unit && *info->unit ? info->unit : "-");
		else
			printf("%s\t%s\t%s\t%s\t-\t-\t-\n",
			       info->group, info->key, info->type, info->default_text);
	}
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--keys") == 0) {
		print_keys();
	} else if (argc == 1) {
		g_autofree char *text = conf_template();

		fputs(text, stdout);
	} else {
		fprintf(stderr, "usage: preload-genconf [--keys]\n");
		return 2;
	}
	/* A full disk must not leave a truncated preload.conf looking fine. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("preload-genconf: writing to stdout");
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}
