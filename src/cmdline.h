/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Cmdline: the command-line options, as in preload 0.6.4 plus --once.
 */
#pragma once

#include <glib.h>

typedef struct Options {
	char *conffile;       /* "" disables the config file */
	char *statefile;      /* "" disables the state file */
	char *logfile;        /* "" logs to stderr; NULL: default for the mode */
	char *tracefile;      /* "" no trace; NULL: the configuration's tracefile */
	char *controlfile;    /* the control socket; "" for none */
	gboolean foreground;  /* do not daemonize */
	gboolean once;        /* one cycle against /proc, save, exit */
	gboolean debug;       /* foreground, stderr, verbosity 9 */
	int nice;             /* niceness increment, applied at start */
	int verbose;          /* 0..10 */
	gboolean conffile_given; /* -c was on the command line */
} Options;

#define CMDLINE_DEFAULT_CONFFILE SYSCONFDIR "/preload.conf"
#define CMDLINE_DEFAULT_STATEFILE PKGLOCALSTATEDIR "/preload.state"
#define CMDLINE_DEFAULT_LOGFILE LOGDIR "/preload.log"
#define CMDLINE_DEFAULT_CONTROL "/run/preload/control"

/*
 * Parses argv into opts (which it initialises with the defaults).
 * Returns FALSE with a G_OPTION_ERROR on a usage error. --help and
 * --version print and set *exit_now.
 */
gboolean cmdline_parse(int argc, char **argv, Options *opts, gboolean *exit_now, GError **error);
void cmdline_clear(Options *opts);
