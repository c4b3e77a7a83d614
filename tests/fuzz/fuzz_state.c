/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzzes the state file loader (state_load_stream, the parser behind
 * state_load).
 *
 * Almost every mutation breaks the SHA-256 on the END line, and the loader
 * only checks it after every record has been parsed and linked into the
 * model, so the record parsers are covered either way; but a file that
 * fails its checksum never reaches the success path. So when the first
 * byte of the input is odd, the harness drops that byte and any END line
 * and appends a correct END line itself (record count and checksum
 * computed as the writer does): the fuzzer then also explores files that
 * load, and each of those must save and load back to the same model.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "fuzz.h"
#include "state.h"

static char *save_dir;

static void
remove_save_dir(void)
{
	g_autofree char *state = g_build_filename(save_dir, "state", NULL);
	g_autofree char *temp = g_strconcat(state, STATE_TEMP_SUFFIX, NULL);

	g_unlink(state);
	g_unlink(temp);
	g_rmdir(save_dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_logs();
	save_dir = g_dir_make_tmp("fuzz-state-XXXXXX", NULL);
	if (!save_dir)
		abort();
	atexit(remove_save_dir);
	return 0;
}

/*
 * The input with a correct END line: every line after the header that is
 * not empty and not a '#' comment is a record, and the checksum covers
 * every byte before END. Lines starting with "END" are dropped. A last
 * line without a newline gets one.
 */
static GString *
seal(const uint8_t *data, size_t size)
{
	GString *out = g_string_sized_new(size + 96);
	g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
	guint64 records = 0;
	size_t pos = 0;
	gboolean header = TRUE;

	while (pos < size) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - (data + pos)) : size - pos;
		const char *line = (const char *)data + pos;

		pos += len + (nl ? 1 : 0);
		if (len >= 3 && memcmp(line, "END", 3) == 0)
			continue;
		g_string_append_len(out, line, (gssize)len);
		g_string_append_c(out, '\n');
		if (!header && len > 0 && line[0] != '#')
			records++;
		header = FALSE;
	}
	g_checksum_update(sum, (const guchar *)out->str, (gssize)out->len);
	g_string_append_printf(out, "END\t%" G_GUINT64_FORMAT "\t%s\n", records,
			       g_checksum_get_string(sum));
	return out;
}

static Model *
load_bytes(const char *bytes, size_t len, GError **error)
{
	FILE *file;
	Model *model;

	file = fmemopen((void *)bytes, len, "r");
	if (!file)
		abort();
	model = state_load_stream(file, "fuzz.state", error);
	fclose(file);
	return model;
}

static void
round_trip(Model *model)
{
	g_autofree char *path = g_build_filename(save_dir, "state", NULL);
	g_autoptr(GError) error = NULL;
	Model *again;

	if (!state_save(model, path, &error)) {
		g_printerr("cannot save a loaded model: %s\n", error->message);
		abort();
	}
	again = state_load(path, &error);
	if (!again) {
		g_printerr("cannot load a saved model: %s\n", error->message);
		abort();
	}
	if (again->time != model->time ||
	    g_hash_table_size(again->exes) != g_hash_table_size(model->exes) ||
	    g_hash_table_size(again->maps) != g_hash_table_size(model->maps) ||
	    g_hash_table_size(again->bad_exes) != g_hash_table_size(model->bad_exes) ||
	    again->n_chains != model->n_chains)
		abort();
	model_free(again);
	g_unlink(path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GString) sealed = NULL;
	g_autoptr(GError) error = NULL;
	const char *bytes = (const char *)data;
	size_t len = size;
	Model *model;

	/* fmemopen() refuses a zero-sized buffer; an empty file is tested in check_state. */
	if (size < 2)
		return 0;
	if (data[0] & 1) {
		sealed = seal(data + 1, size - 1);
		bytes = sealed->str;
		len = sealed->len;
	}
	model = load_bytes(bytes, len, &error);
	if (!model) {
		if (!error || error->domain != STATE_ERROR)
			abort();
		return 0;
	}
	if (error)
		abort();
	round_trip(model);
	model_free(model);
	return 0;
}
