/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzzes the pure /proc parsers: every line of the input as a line of
 * /proc/PID/maps, the whole input as /proc/meminfo, and every line as a
 * /proc/PID/exe link target. Besides memory errors (ASan) and undefined
 * behaviour (UBSan), it checks what the callers rely on: a parsed map
 * has start <= end and a path that is NULL or absolute, a failure comes
 * with a PROC_ERROR, and a sanitized exe is absolute and longer than "/".
 */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "proc.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet_logs();
	return 0;
}

static void
check_maps_line(const char *line)
{
	g_autoptr(GError) error = NULL;
	ProcMap map = { 0 };

	if (!proc_parse_maps_line(line, &map, &error)) {
		if (!error || error->domain != PROC_ERROR)
			abort();
		return;
	}
	if (map.start > map.end)
		abort();
	if (map.path && map.path[0] != '/')
		abort();
	proc_map_clear(&map);
}

static void
check_exe(const char *raw)
{
	g_autofree char *exe = proc_sanitize_exe(raw);

	if (exe && (exe[0] != '/' || exe[1] == '\0'))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The parsers take C strings: the text stops at the first NUL. */
	g_autofree char *text = g_strndup((const char *)data, size);
	g_autoptr(GError) error = NULL;
	ProcMemstat mem;
	char *line = text;

	if (!proc_parse_meminfo(text, &mem, &error) && (!error || error->domain != PROC_ERROR))
		abort();

	for (;;) {
		char *nl = strchr(line, '\n');
		g_autofree char *one = nl ? g_strndup(line, (gsize)(nl - line + 1)) : g_strdup(line);

		check_maps_line(one);
		if (nl)
			*nl = '\0';
		check_exe(line);
		if (!nl)
			break;
		line = nl + 1;
	}
	return 0;
}
