/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Cmdline: the command line, parsed with GOptionContext.
 *
 * The options are those of preload 0.6.4 (so init scripts and unit files
 * written for it keep working) plus --once. Parsing only fills an
 * Options: nothing here logs, opens files or exits, and every usage error
 * comes back as a GError for main() to print. --help and --version print
 * to stdout and ask the caller to exit, instead of GLib's built-in help,
 * which would call exit() from inside the parser.
 *
 * String options are parsed into locals that start out NULL: GLib
 * restores the previous value of an option's variable on failure but
 * does not free it on success, so the defaults are filled in afterwards.
 */
#include "config.h"

#include "cmdline.h"

#include <stdio.h>
#include <string.h>

#define CMDLINE_DEFAULT_NICE 15
#define CMDLINE_DEFAULT_VERBOSE 4
#define CMDLINE_VERBOSE_MAX 10
#define CMDLINE_DEBUG_VERBOSE 9

/* Shown by --help and used by help2man for the man page. */
static const char cmdline_summary[] =
	"preload is an adaptive readahead daemon. It watches which programs\n"
	"run, learns which of them tend to run together, and reads the files\n"
	"of the programs it expects to start into the page cache, so that\n"
	"they start faster. What it has learned is kept in the state file.";

static const char cmdline_description[] =
	"Signals:\n"
	"  SIGHUP              reload the configuration file and reopen the log file\n"
	"  SIGUSR1             write statistics and the configuration to the log\n"
	"  SIGUSR2             save the state file now\n"
	"  SIGTERM, SIGINT,\n"
	"  SIGQUIT             save the state file and exit\n"
	"\n"
	"Defaults:\n"
	"  configuration file  " CMDLINE_DEFAULT_CONFFILE "\n"
	"  state file          " CMDLINE_DEFAULT_STATEFILE "\n"
	"  log file            " CMDLINE_DEFAULT_LOGFILE " (stderr in the foreground)";

/* What the option callbacks and the post-parse checks work on. */
typedef struct CmdlineArgs {
	char *conffile;
	char *statefile;
	char *logfile;
	char *tracefile;
	char *controlfile;
	gboolean foreground;
	gboolean once;
	gboolean debug;
	gboolean version;
	gboolean help;
	int nice;
	int verbose;
	gboolean verbose_given;
} CmdlineArgs;

/* -V: checked here so that the error names the allowed range. */
static gboolean
cmdline_parse_verbose(const gchar *name, const gchar *value, gpointer data, GError **error)
{
	CmdlineArgs *args = data;
	gint64 number;

	if (!g_ascii_string_to_signed(value, 10, 0, CMDLINE_VERBOSE_MAX, &number, NULL)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "invalid verbosity '%s' for %s (allowed 0..%d)",
			    value, name, CMDLINE_VERBOSE_MAX);
		return FALSE;
	}
	args->verbose = (int)number;
	args->verbose_given = TRUE;
	return TRUE;
}

static void
cmdline_args_clear(CmdlineArgs *args)
{
	g_free(args->conffile);
	g_free(args->statefile);
	g_free(args->logfile);
	g_free(args->tracefile);
	g_free(args->controlfile);
}

static GOptionContext *
cmdline_context_new(CmdlineArgs *args)
{
	const GOptionEntry entries[] = {
		{ "conffile", 'c', 0, G_OPTION_ARG_FILENAME, &args->conffile,
		  "Configuration file ('' for the built-in defaults)", "FILE" },
		{ "statefile", 's', 0, G_OPTION_ARG_FILENAME, &args->statefile,
		  "State file: what was learned ('' to keep none)", "FILE" },
		{ "logfile", 'l', 0, G_OPTION_ARG_FILENAME, &args->logfile,
		  "Log file ('' for stderr)", "FILE" },
		{ "foreground", 'f', 0, G_OPTION_ARG_NONE, &args->foreground,
		  "Do not daemonize; log to stderr unless -l is given", NULL },
		{ "nice", 'n', 0, G_OPTION_ARG_INT, &args->nice,
		  "Increase the nice value by N at start (default 15)", "N" },
		{ "verbose", 'V', 0, G_OPTION_ARG_CALLBACK, (gpointer)cmdline_parse_verbose,
		  "Verbosity 0-10 (default 4; 9 and 10 add detail)", "N" },
		{ "debug", 'd', 0, G_OPTION_ARG_NONE, &args->debug,
		  "Same as -f -l '' -V 9 (an explicit -l or -V wins)", NULL },
		{ "once", 0, 0, G_OPTION_ARG_NONE, &args->once,
		  "Run one cycle against /proc, save the state and exit", NULL },
		{ "trace", 't', 0, G_OPTION_ARG_FILENAME, &args->tracefile,
		  "Record each scan to a trace file for preload-replay ('' for none; "
		  "overrides tracefile in the configuration)", "FILE" },
		{ "control", 0, 0, G_OPTION_ARG_FILENAME, &args->controlfile,
		  "Control socket for preloadctl ('' for none; default "
		  CMDLINE_DEFAULT_CONTROL ")", "PATH" },
		{ "version", 'v', 0, G_OPTION_ARG_NONE, &args->version,
		  "Print the version and exit", NULL },
		{ "help", 'h', 0, G_OPTION_ARG_NONE, &args->help,
		  "Print this help and exit", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL },
	};
	GOptionContext *context = g_option_context_new(NULL);
	/* A main group of our own, so that the -V callback receives args. */
	GOptionGroup *group = g_option_group_new(NULL, NULL, NULL, args, NULL);

	g_option_group_add_entries(group, entries);
	g_option_context_set_main_group(context, group);
	g_option_context_set_summary(context, cmdline_summary);
	g_option_context_set_description(context, cmdline_description);
	/* -h is an ordinary entry above: GLib's own help would exit(). */
	g_option_context_set_help_enabled(context, FALSE);
	return context;
}

/* Moves a parsed string into place, or the default if none was given. */
static char *
cmdline_take(char **parsed, const char *fallback)
{
	char *value = *parsed ? *parsed : g_strdup(fallback);

	*parsed = NULL;
	return value;
}

gboolean
cmdline_parse(int argc, char **argv, Options *opts, gboolean *exit_now, GError **error)
{
	g_autoptr(GOptionContext) context = NULL;
	g_auto(GStrv) args = NULL;
	CmdlineArgs parsed = {
		.nice = CMDLINE_DEFAULT_NICE,
		.verbose = CMDLINE_DEFAULT_VERBOSE,
	};

	g_return_val_if_fail(opts != NULL, FALSE);
	g_return_val_if_fail(exit_now != NULL, FALSE);

	*exit_now = FALSE;
	memset(opts, 0, sizeof(*opts));
	opts->conffile = g_strdup(CMDLINE_DEFAULT_CONFFILE);
	opts->statefile = g_strdup(CMDLINE_DEFAULT_STATEFILE);
	opts->logfile = NULL;
	opts->nice = CMDLINE_DEFAULT_NICE;
	opts->verbose = CMDLINE_DEFAULT_VERBOSE;

	/* GLib rearranges the vector it parses; argv stays the caller's. */
	args = g_new0(char *, (gsize)MAX(argc, 0) + 1);
	for (int i = 0; i < argc && argv && argv[i]; i++)
		args[i] = g_strdup(argv[i]);

	context = cmdline_context_new(&parsed);
	if (!g_option_context_parse_strv(context, &args, error)) {
		cmdline_args_clear(&parsed);
		return FALSE;
	}

	if (parsed.help) {
		g_autofree char *help = g_option_context_get_help(context, TRUE, NULL);

		fputs(help, stdout);
		fflush(stdout);
		*exit_now = TRUE;
		cmdline_args_clear(&parsed);
		return TRUE;
	}
	if (parsed.version) {
		printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
		fflush(stdout);
		*exit_now = TRUE;
		cmdline_args_clear(&parsed);
		return TRUE;
	}

	/* preload takes no operands; "--" alone is harmless. */
	for (size_t i = 1; args && args[i]; i++) {
		if (strcmp(args[i], "--") == 0)
			continue;
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
			    "unexpected argument '%s'", args[i]);
		cmdline_args_clear(&parsed);
		return FALSE;
	}
	opts->conffile_given = parsed.conffile != NULL;
	g_free(opts->conffile);
	opts->conffile = cmdline_take(&parsed.conffile, CMDLINE_DEFAULT_CONFFILE);
	g_free(opts->statefile);
	opts->statefile = cmdline_take(&parsed.statefile, CMDLINE_DEFAULT_STATEFILE);
	/* Left NULL when not given: the default depends on the mode (see main). */
	opts->logfile = g_steal_pointer(&parsed.logfile);
	/* NULL when not given: the configuration's tracefile applies. */
	opts->tracefile = g_steal_pointer(&parsed.tracefile);
	opts->controlfile = cmdline_take(&parsed.controlfile, CMDLINE_DEFAULT_CONTROL);
	opts->foreground = parsed.foreground;
	opts->once = parsed.once;
	opts->debug = parsed.debug;
	opts->nice = parsed.nice;
	opts->verbose = parsed.verbose;

	if (parsed.debug) {
		opts->foreground = TRUE;
		if (!opts->logfile)
			opts->logfile = g_strdup("");
		if (!parsed.verbose_given)
			opts->verbose = CMDLINE_DEBUG_VERBOSE;
	}
	cmdline_args_clear(&parsed);
	return TRUE;
}

void
cmdline_clear(Options *opts)
{
	if (!opts)
		return;
	g_free(opts->conffile);
	g_free(opts->statefile);
	g_free(opts->logfile);
	g_free(opts->tracefile);
	g_free(opts->controlfile);
	memset(opts, 0, sizeof(*opts));
}
