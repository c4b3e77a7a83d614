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

#define STATE_FORMAT_VERSION 5

/*
 * A preload 0.6.4 state holds a chain for every pair of programs: 500,000
 * at 1,000 programs, nearly all of them saying nothing the two programs'
 * own counts do not. The import keeps only chains of pairs that ran
 * together or handed over from one to the other, and of those at most
 * this many per program, the most correlated (see import_chain() in
 * state.c and doc/state-format.md): at most this many times the
 * programs, 2.5 per program at 1,000, fewer than the 9 the daemon's own
 * model holds after a replay of that size; the programs' next runs link
 * the rest again. 4 keeps the upgraded daemon under a tenth of 0.6.4's
 * memory on such a state (tests/bench/import-cost.sh); 8 did not.
 */
#define STATE_IMPORT_CHAINS_PER_EXE 4

#define STATE_ERROR (state_error_quark())
GQuark state_error_quark(void);

typedef enum {
	STATE_ERROR_CORRUPT,  /* bad syntax, bad reference, bad checksum */
	STATE_ERROR_TRUNCATED,/* ends before its END line */
	STATE_ERROR_VERSION,  /* written by a newer, unknown format */
	STATE_ERROR_IO,       /* cannot read or write */
	STATE_ERROR_UNSAFE,   /* a symlink at the path; a directory not the caller's alone */
} StateError;

/*
 * Loads the model from path. A missing file gives an empty model and no
 * error. Any other failure returns NULL with a STATE_ERROR whose message
 * names the file and line. The path is never followed through a symlink
 * (STATE_ERROR_UNSAFE).
 *
 * A file of the current format is read twice: first hashed, in constant
 * memory, up to its END line, which must match; then loaded. A damaged
 * file is refused before anything is built from it, whatever its size.
 */
Model *state_load(const char *path, GError **error);

/*
 * state_load() in two steps, for a caller that prepares for the load
 * once the file is known to be good: state_file_open() opens path and
 * does every check of the first pass (NULL with an error if one fails; a
 * missing file opens as an empty one), state_file_load() builds the model
 * (once; NULL with an error), state_file_free() closes.
 */
typedef struct StateFile StateFile;
StateFile *state_file_open(const char *path, GError **error);
/* The size of the opened file in bytes; 0 for a missing one. */
guint64 state_file_size(const StateFile *sf);
/*
 * Whether the opened file is a preload 0.6.4 state: its import keeps a
 * small part of it (STATE_IMPORT_CHAINS_PER_EXE), so the model it makes
 * is not in proportion to the file's size as a current file's is.
 */
gboolean state_file_is_legacy(const StateFile *sf);
Model *state_file_load(StateFile *sf, GError **error);
void state_file_free(StateFile *sf);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(StateFile, state_file_free)

/*
 * Loads the model from an open stream, read to its end; `name` only
 * labels the error messages. The parser behind state_load(), for callers
 * that already hold the bytes (the fuzz harness reads from memory).
 * The stream must be seekable (a file, fmemopen()): the current format
 * is read twice, as above. An empty stream gives an empty model.
 */
Model *state_load_stream(FILE *file, const char *name, GError **error);

/*
 * Creates the directory of the state file at path if it is missing
 * (mode 0700), and checks that it is owned by the effective user and
 * writable by no one else: STATE_ERROR_UNSAFE if not. The daemon calls
 * this at start, to refuse an unsafe directory before it does anything
 * there, and before each save; state_load() and state_save() do not, so
 * that tools can use any directory.
 */
gboolean state_prepare_dir(const char *path, GError **error);

/*
 * Saves the model to path, crash-safe, mode 0600, through the temporary
 * file "<path>" STATE_TEMP_SUFFIX (removed first if a crash left it),
 * created O_EXCL|O_NOFOLLOW and renamed over path: a symlink at either
 * name is replaced, never written through. A missing directory is
 * created 0700.
 * Clears model->dirty. One process at a time may save to a path.
 */
#define STATE_TEMP_SUFFIX ".new"
gboolean state_save(Model *model, const char *path, GError **error);

/*
 * Renames a state file that failed to load to "<path>.broken-<unix time>"
 * so nothing is lost; *moved_to gets the new name.
 */
gboolean state_move_aside(const char *path, char **moved_to, GError **error);
