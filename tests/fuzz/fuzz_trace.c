/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzzes the trace reader (trace_reader_new_from_data, the parser behind
 * trace_reader_open that preload-replay feeds with trace files). Every
 * record of the input is read until the end or the first error; a record
 * must hold what the reader promises: a scan's exes and a maps record's
 * exe and maps are set, every path is absolute and interned (the same
 * path is the same pointer).
 */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "trace.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_logs();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GError) error = NULL;
	TraceReader *tr = trace_reader_new_from_data((const char *)data, size, &error);
	const TraceRecord *rec;

	if (!tr) {
		if (!error)
			abort();
		return 0;
	}
	/* A trace of a few KB cannot hold more records than it has lines. */
	for (size_t n = 0; n <= size + 1; n++) {
		if (!trace_reader_next(tr, &rec, &error)) {
			if (!error)
				abort();
			break;
		}
		if (!rec)
			break;
		switch (rec->type) {
		case TRACE_RECORD_SCAN:
			if (!rec->exes)
				abort();
			for (guint i = 0; i < rec->exes->len; i++)
				if (((const char *)rec->exes->pdata[i])[0] != '/')
					abort();
			break;
		case TRACE_RECORD_MAPS:
			if (!rec->exe || !rec->maps)
				abort();
			for (guint i = 0; i < rec->maps->len; i++)
				if (!g_array_index(rec->maps, TraceMap, i).path)
					abort();
			break;
		case TRACE_RECORD_MAPS_FAILED:
			if (!rec->exe)
				abort();
			break;
		}
		if (n == size + 1)
			abort();  /* more records than lines: the reader loops */
	}
	trace_reader_free(tr);
	return 0;
}
