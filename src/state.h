/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * State: the model on disk.
 *
 * A versioned, tab-separated text file (see doc/state-format.md) written
 * crash-safe: a temporary file in the same directory, fsync, rename over
 * the old file, fsync of the directory. Loading reads that format and
 * imports the preload 0.6.4 format. A file that cannot be loaded
 * (corrupt, truncated, of a newer version) is reported as an error; the
 * caller moves it aside and starts with an empty model.
 */
#pragma once

#include <glib.h>
#include <stdio.h>

#include "model.h"

#define STATE_FORMAT_VERSION 2

#define STATE_ERROR (state_error_quark())
GQuark state_error_quark(void);

typedef enum {
	STATE_ERROR_CORRUPT,  /* bad syntax, bad reference, bad checksum */
	STATE_ERROR_TRUNCATED,/* ends before its END line */
	STATE_ERROR_VERSION,  /* written by a newer, unknown format */
	STATE_ERROR_IO,       /* cannot read or write */
} StateError;

/*
 * Loads the model from path. A missing file gives an empty model and no
 * error. Any other failure returns NULL with a STATE_ERROR whose message
 * names the file and line.
 */
Model *state_load(const char *path, GError **error);

/*
 * Loads the model from an open stream, read to its end; `name` only
 * labels the error messages. The parser behind state_load(), for callers
 * that already hold the bytes (the fuzz harness reads from memory).
 * An empty stream gives an empty model.
 */
Model *state_load_stream(FILE *file, const char *name, GError **error);

/*
 * Saves the model to path, crash-safe, mode 0600, through the temporary
 * file "<path>" STATE_TEMP_SUFFIX (removed first if a crash left it).
 * Clears model->dirty. One process at a time may save to a path.
 */
#define STATE_TEMP_SUFFIX ".new"
gboolean state_save(Model *model, const char *path, GError **error);

/*
 * Renames a state file that failed to load to "<path>.broken-<unix time>"
 * so nothing is lost; *moved_to gets the new name.
 */
gboolean state_move_aside(const char *path, char **moved_to, GError **error);
