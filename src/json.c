/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Json: the writer behind the control socket's --json answers. A stack of
 * "does this level have a member yet" flags is all the state: it decides
 * where commas go. Nothing is validated beyond that; a caller that closes
 * what it did not open is a programming error (g_return_if_fail).
 */
#include "config.h"

#include "json.h"

#include <math.h>
#include <string.h>

struct JsonWriter {
	GString *out;         /* borrowed */
	GArray *first;        /* gboolean per open level: no member written yet */
	gboolean after_key;   /* a key was written: the value needs no comma */
};

JsonWriter *
json_writer_new(GString *out)
{
	JsonWriter *writer = g_new0(JsonWriter, 1);

	writer->out = out;
	writer->first = g_array_new(FALSE, FALSE, sizeof(gboolean));
	return writer;
}

void
json_writer_free(JsonWriter *writer)
{
	if (!writer)
		return;
	g_array_unref(writer->first);
	g_free(writer);
}

/* A comma before every value of an array or object but the first. */
static void
json_separate(JsonWriter *writer)
{
	gboolean *first;

	if (writer->after_key) {
		writer->after_key = FALSE;
		return;
	}
	if (writer->first->len == 0)
		return;
	first = &g_array_index(writer->first, gboolean, writer->first->len - 1);
	if (!*first)
		g_string_append_c(writer->out, ',');
	*first = FALSE;
}

static void
json_open(JsonWriter *writer, char c)
{
	gboolean first = TRUE;

	json_separate(writer);
	g_string_append_c(writer->out, c);
	g_array_append_val(writer->first, first);
}

static void
json_close(JsonWriter *writer, char c)
{
	g_return_if_fail(writer->first->len > 0);
	g_array_set_size(writer->first, writer->first->len - 1);
	g_string_append_c(writer->out, c);
}

void
json_begin_object(JsonWriter *writer)
{
	json_open(writer, '{');
}

void
json_end_object(JsonWriter *writer)
{
	json_close(writer, '}');
}

void
json_begin_array(JsonWriter *writer)
{
	json_open(writer, '[');
}

void
json_end_array(JsonWriter *writer)
{
	json_close(writer, ']');
}

void
json_key(JsonWriter *writer, const char *key)
{
	json_separate(writer);
	json_append_string(writer->out, key);
	g_string_append_c(writer->out, ':');
	writer->after_key = TRUE;
}

void
json_append_string(GString *out, const char *value)
{
	const char *p = value, *end = value + strlen(value);

	g_string_append_c(out, '"');
	while (p < end) {
		const char *valid_end;
		guchar c = (guchar)*p;

		if (c >= 0x80) {
			/* The longest valid UTF-8 run from here, copied as it is. */
			g_utf8_validate(p, end - p, &valid_end);
			if (valid_end > p) {
				g_string_append_len(out, p, valid_end - p);
				p = valid_end;
			} else {
				g_string_append_printf(out, "\\udc%02x", c);
				p++;
			}
			continue;
		}
		switch (c) {
		case '"':
			g_string_append(out, "\\\"");
			break;
		case '\\':
			g_string_append(out, "\\\\");
			break;
		case '\n':
			g_string_append(out, "\\n");
			break;
		case '\t':
			g_string_append(out, "\\t");
			break;
		case '\r':
			g_string_append(out, "\\r");
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				g_string_append_printf(out, "\\u%04x", c);
			else
				g_string_append_c(out, (char)c);
			break;
		}
		p++;
	}
	g_string_append_c(out, '"');
}

void
json_string(JsonWriter *writer, const char *value)
{
	if (!value) {
		json_null(writer);
		return;
	}
	json_separate(writer);
	json_append_string(writer->out, value);
}

void
json_int(JsonWriter *writer, gint64 value)
{
	json_separate(writer);
	g_string_append_printf(writer->out, "%" G_GINT64_FORMAT, value);
}

void
json_uint(JsonWriter *writer, guint64 value)
{
	json_separate(writer);
	g_string_append_printf(writer->out, "%" G_GUINT64_FORMAT, value);
}

void
json_double(JsonWriter *writer, double value)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];

	if (!isfinite(value)) {
		json_null(writer);
		return;
	}
	json_separate(writer);
	/* Locale-independent: a decimal comma would not be JSON. */
	g_string_append(writer->out, g_ascii_formatd(buf, sizeof(buf), "%.6f", value));
}

void
json_bool(JsonWriter *writer, gboolean value)
{
	json_separate(writer);
	g_string_append(writer->out, value ? "true" : "false");
}

void
json_null(JsonWriter *writer)
{
	json_separate(writer);
	g_string_append(writer->out, "null");
}
