/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Json: a small JSON writer for the control socket's --json answers.
 *
 * It appends to a GString and keeps only a nesting stack, so a caller
 * writes members in order and the commas come out right. Strings are
 * taken as bytes: paths on Linux may hold any byte but NUL, so valid
 * UTF-8 is copied, control characters, '"' and '\' are escaped, and each
 * byte that is not part of valid UTF-8 is written as the lone surrogate
 * \udcXX (XX the byte; the "surrogateescape" convention of PEP 383), which
 * JSON parsers accept and a Python client turns back into the same bytes.
 * Numbers that are not finite are written as null.
 */
#pragma once

#include <glib.h>

typedef struct JsonWriter JsonWriter;

/* A writer appending to out (borrowed; it must outlive the writer). */
JsonWriter *json_writer_new(GString *out);
void json_writer_free(JsonWriter *writer);

void json_begin_object(JsonWriter *writer);
void json_end_object(JsonWriter *writer);
void json_begin_array(JsonWriter *writer);
void json_end_array(JsonWriter *writer);
/* The name of the next member of the enclosing object. */
void json_key(JsonWriter *writer, const char *key);
/* A string value; NULL writes null. */
void json_string(JsonWriter *writer, const char *value);
void json_int(JsonWriter *writer, gint64 value);
void json_uint(JsonWriter *writer, guint64 value);
/* A number with up to 6 decimals ("%.6g" would lose digits of sizes); not finite: null. */
void json_double(JsonWriter *writer, double value);
void json_bool(JsonWriter *writer, gboolean value);
void json_null(JsonWriter *writer);

/* Appends value as a quoted, escaped JSON string (see the top of this file). */
void json_append_string(GString *out, const char *value);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(JsonWriter, json_writer_free)
