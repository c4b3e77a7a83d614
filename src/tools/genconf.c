/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * preload-genconf: prints the shipped preload.conf, or with --keys one
 * tab-separated line per configuration key
 *
 *   group  key  type  default  min  max  unit
 *
 * ("-" where a column does not apply), for checks that the man page
 * documents every key, or with --man the preload.conf(5) man page. All
 * three come from the key table in confkeys.h, so the shipped file and
 * the documentation cannot drift from the code: tests/conf-template.sh
 * compares this output with preload.conf, tests/man.sh checks the keys
 * against preload.conf(5) and preload.conf.
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
			/* An empty column would vanish in a shell `read`: say "(empty)". */
			printf("%s\t%s\t%s\t%s\t-\t-\t-\n",
			       info->group, info->key, info->type,
			       *info->default_text ? info->default_text : "(empty)");
	}
}

/*
 * Writes `text` as roff running text: backslashes escaped, hyphens made
 * minus signs (option values such as -10 must not break or turn into
 * dashes), and `word` (the table's notation for another key or a
 * literal) set in bold.
 */
static void
man_put_text(const char *text)
{
	gboolean bold = FALSE;

	for (const char *p = text; *p; p++) {
		switch (*p) {
		case '\\':
			fputs("\\e", stdout);
			break;
		case '-':
			fputs("\\-", stdout);
			break;
		case '`':
			fputs(bold ? "\\fR" : "\\fB", stdout);
			bold = !bold;
			break;
		default:
			putchar(*p);
			break;
		}
	}
	if (bold)
		fputs("\\fR", stdout);
}

/* A line of running text: "\&" keeps a leading '.' or '\'' from being a request. */
static void
man_put_line(const char *text)
{
	fputs("\\&", stdout);
	man_put_text(text);
	putchar('\n');
}

/* The first line of a key's entry: type, unit, range, default. */
static void
man_put_key_summary(const ConfKeyInfo *info)
{
	if (strcmp(info->type, "integer") == 0) {
		g_autofree char *range = g_strdup_printf("%" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
							 info->min, info->max);

		fputs("Integer", stdout);
		if (info->unit && *info->unit)
			printf(", in %s", info->unit);
		fputs(", from ", stdout);
		man_put_text(range);
		fputs("; default \\fB", stdout);
		man_put_text(info->default_text);
		fputs("\\fR.\n", stdout);
	} else if (strcmp(info->type, "boolean") == 0) {
		fputs("Boolean, true or false; default \\fB", stdout);
		man_put_text(info->default_text);
		fputs("\\fR.\n", stdout);
	} else if (strcmp(info->type, "string") == 0) {
		fputs("A path; default ", stdout);
		if (*info->default_text) {
			fputs("\\fB", stdout);
			man_put_text(info->default_text);
			fputs("\\fR.\n", stdout);
		} else {
			fputs("empty (off).\n", stdout);
		}
	} else {
		fputs("List of path prefixes separated by \\(oq;\\(cq; default ", stdout);
		if (*info->default_text) {
			g_auto(GStrv) items = g_strsplit(info->default_text, ";", -1);

			fputs("\\fB", stdout);
			/* "\:" after each ';': a long list may break there, not overrun the line. */
			for (guint i = 0; items[i]; i++) {
				if (i > 0)
					fputs(";\\:", stdout);
				man_put_text(items[i]);
			}
			fputs("\\fR.\n", stdout);
		} else {
			fputs("empty (accepts everything).\n", stdout);
		}
	}
}

/*
 * preload.conf(5), from the same table as preload.conf and the parser.
 * tests/man.sh expects each key as ".B key" with its summary, which reads
 * "default DEFAULT", on the next line, under a ".SS [group]" heading.
 */
static void
print_man(void)
{
	g_autoptr(GPtrArray) rows = conf_describe();
	const char *group = NULL;

	printf(".\\\" preload.conf(5), printed by \"preload-genconf --man\" from src/confkeys.h.\n"
	       ".TH PRELOAD.CONF 5 \"\" \"preload %s\" \"File Formats\"\n"
	       /* Left-aligned: long prefix lists would stretch justified lines. */
	       ".ad l\n", PACKAGE_VERSION);
	puts(".SH NAME\n"
	     "preload.conf \\- configuration file of the preload readahead daemon\n"
	     ".SH SYNOPSIS\n"
	     ".I " SYSCONFDIR "/preload.conf\n"
	     ".SH DESCRIPTION\n"
	     ".BR preload (8)\n"
	     "reads its configuration from this file at start and again when it\n"
	     "receives\n"
	     ".BR SIGHUP .\n"
	     "Another file can be named with its\n"
	     ".B \\-c\n"
	     "option.\n"
	     ".PP\n"
	     "The file uses the syntax of GLib's key files, as in desktop entries:\n"
	     ".B [group]\n"
	     "headers, then\n"
	     ".IB key \" = \" value\n"
	     "lines; lines starting with\n"
	     ".B #\n"
	     "are comments.\n"
	     "Booleans are\n"
	     ".B true\n"
	     "or\n"
	     ".BR false ;\n"
	     "lists are separated by\n"
	     ".BR ; .\n"
	     "Every key is optional: a key that is left out, or a missing file at\n"
	     "the default path, means the built-in default listed below, which is\n"
	     "also what the shipped file sets.\n"
	     ".PP\n"
	     "A value that is malformed or out of range is reported in the log\n"
	     "(naming the file, the key and the value) and that key keeps its\n"
	     "previous value: the default at start, the running value on\n"
	     ".BR SIGHUP .\n"
	     "Unknown keys are reported and ignored.\n"
	     "A file that cannot be read or parsed stops preload at start (exit\n"
	     "status 78) and is ignored on\n"
	     ".BR SIGHUP ,\n"
	     "which keeps the running configuration.\n"
	     ".SH KEYS");
	for (guint i = 0; i < rows->len; i++) {
		const ConfKeyInfo *info = rows->pdata[i];

		if (!group || strcmp(group, info->group) != 0) {
			group = info->group;
			printf(".SS \"[%s]\"\n", group);
		}
		printf(".TP\n.B %s\n", info->key);
		man_put_key_summary(info);
		puts(".br");
		man_put_line(info->doc);
	}
	puts(".SH FILES\n"
	     ".TP\n"
	     ".I " SYSCONFDIR "/preload.conf\n"
	     "The configuration file.\n"
	     ".SH SEE ALSO\n"
	     ".BR preload (8)");
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--keys") == 0) {
		print_keys();
	} else if (argc == 2 && strcmp(argv[1], "--man") == 0) {
		print_man();
	} else if (argc == 1) {
		g_autofree char *text = conf_template();

		fputs(text, stdout);
	} else {
		fprintf(stderr, "usage: preload-genconf [--keys | --man]\n");
		return 2;
	}
	/* A full disk must not leave a truncated preload.conf looking fine. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("preload-genconf: writing to stdout");
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}
