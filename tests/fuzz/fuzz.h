/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared set-up of the libFuzzer harnesses: the parsers log warnings for
 * the bad input they are fed millions of times, which would only slow the
 * fuzzer down, so those are dropped. A critical (a g_return_if_fail that
 * tripped) or an error is a bug the fuzzer should report, so it aborts.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static GLogWriterOutput
fuzz_log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields,
		gpointer user_data)
{
	(void)user_data;
	if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL)) {
		g_log_writer_standard_streams(level, fields, n_fields, NULL);
		abort();
	}
	return G_LOG_WRITER_HANDLED;
}

static void
fuzz_log_handler(const char *domain, GLogLevelFlags level, const char *message,
		 gpointer user_data)
{
	(void)domain;
	(void)user_data;
	if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL)) {
		g_printerr("%s\n", message);
		abort();
	}
}

static inline void
fuzz_quiet_logs(void)
{
	g_log_set_writer_func(fuzz_log_writer, NULL, NULL);
	g_log_set_default_handler(fuzz_log_handler, NULL);
}
