/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Control: the daemon's control socket, which preloadctl talks to.
 *
 * An AF_UNIX stream socket (by default CONTROL_DEFAULT_PATH, in a
 * directory created 0700) served from the GLib main loop with
 * non-blocking I/O: one request line per connection, then one reply,
 * then the daemon closes. Only root may ask: the peer's uid is read with
 * SO_PEERCRED at accept time, and other users get a refusal (and a log
 * line, at most one per CONTROL_REFUSAL_LOG_US, with a count of those
 * not logged). A client cannot stall the daemon or other clients: the
 * request is bounded (max_request bytes), each connection has a
 * deadline (to send its line, and again to read its reply), the reply
 * is bounded (max_reply), and at most max_clients connections are held:
 * a new one pushes out the oldest that has not sent its line yet.
 *
 * The wire format, both directions plain text:
 *   request  VERB[ ARG...]\n      tokens separated by one space; every
 *                                 byte <= 0x20, >= 0x7f and '\' of an
 *                                 argument written as \xNN
 *                                 (control_quote_arg()); the token
 *                                 "--json" anywhere asks for JSON
 *   reply    OK\n BODY            or  ERROR\n MESSAGE
 * The connection's end marks the end of the body.
 *
 * The socket code calls a ControlHandler for each request. The verbs
 * that only read (status, top, hits, explain, dump) are answered from a
 * report by control_answer(); save and reload are the daemon's own.
 */
#pragma once

#include <glib.h>

#include "report.h"

#define CONTROL_DEFAULT_PATH "/run/preload/control"
/* Bytes of a request line, newline included. */
#define CONTROL_MAX_REQUEST 4096
/* Milliseconds a client has to send its line, and again to read its reply. */
#define CONTROL_DEADLINE_MS 2000
/* Bytes of a reply; a longer one is cut and says so. */
#define CONTROL_MAX_REPLY (4 * 1024 * 1024)
/* Connections held at once. */
#define CONTROL_MAX_CLIENTS 64
/* At most one "refused" log line this often (microseconds). */
#define CONTROL_REFUSAL_LOG_US (10 * G_USEC_PER_SEC)

#define CONTROL_ERROR (control_error_quark())
GQuark control_error_quark(void);

typedef enum {
	CONTROL_ERROR_BAD_REQUEST,  /* unknown verb, bad argument */
	CONTROL_ERROR_SOCKET,       /* the socket cannot be made */
	CONTROL_ERROR_IN_USE,       /* another daemon answers on the path */
} ControlErrorCode;

typedef enum {
	CONTROL_VERB_STATUS,
	CONTROL_VERB_TOP,          /* [N] */
	CONTROL_VERB_HITS,         /* [PROGRAM] */
	CONTROL_VERB_EXPLAIN,      /* PROGRAM */
	CONTROL_VERB_SAVE,
	CONTROL_VERB_RELOAD,
	CONTROL_VERB_DUMP,
	CONTROL_N_VERBS
} ControlVerb;

/* `top` without N lists this many. */
#define CONTROL_TOP_DEFAULT 10

typedef struct ControlRequest {
	ControlVerb verb;
	gboolean json;
	guint count;          /* top: how many */
	char *program;        /* hits, explain: owned; NULL if none */
} ControlRequest;

const char *control_verb_name(ControlVerb verb);
/*
 * Parses a request line (without its newline). Fills req (clear it with
 * control_request_clear()) or fails with CONTROL_ERROR_BAD_REQUEST.
 */
gboolean control_request_parse(const char *line, ControlRequest *req, GError **error);
void control_request_clear(ControlRequest *req);
/* An argument for the wire (see the top of this file); newly allocated. */
char *control_quote_arg(const char *arg);
/* The inverse; NULL on a malformed escape or an escaped NUL. */
char *control_unquote_arg(const char *token);

/*
 * The answer to a read-only verb from the daemon's sources: sets *ok and
 * returns the body (or the error message). Not for save or reload.
 */
char *control_answer(const ControlRequest *req, const ReportSources *src, gboolean *ok);

/*
 * The body of a verb that acts (save, reload) and succeeded: message as
 * it is, or with --json {"ok":true,"message":...}. (Errors of every verb
 * asked with --json are turned into {"error":...} by the socket code.)
 */
char *control_done_text(const ControlRequest *req, const char *message);

/*
 * A reply given later. A handler that cannot answer at once (explain's
 * page-cache probe runs on a file-system worker, see fsjob.h) calls
 * control_later_keep() on the ControlLater it was given and returns NULL;
 * it then answers exactly once with control_later_reply(), which frees
 * the ControlLater. Meanwhile the connection reads nothing more and
 * waits at most CONTROL_WAIT_MS; if it is gone by the reply (dropped,
 * hung up, or the Control freed), the reply is discarded. A handler that
 * does not keep it answers through its return value as usual.
 */
typedef struct ControlLater ControlLater;

/* Milliseconds a connection waits for a reply given later. */
#define CONTROL_WAIT_MS 10000

/* Keeps later past the handler's return; the caller then owns it. */
void control_later_keep(ControlLater *later);
/* The reply to a kept request (body as a handler returns it); frees later. */
void control_later_reply(ControlLater *later, gboolean ok, const char *body);

/*
 * Answers one request: the body, and *ok FALSE for an ERROR reply; or
 * NULL after control_later_keep(later) (see above).
 */
typedef char *(*ControlHandler)(const ControlRequest *req, gboolean *ok, ControlLater *later,
				gpointer user_data);

typedef struct ControlLimits {
	gsize max_request;
	guint deadline_ms;
	gsize max_reply;
	guint max_clients;
	guint wait_ms;        /* for a reply given later; 0: CONTROL_WAIT_MS */
} ControlLimits;

typedef struct Control Control;

/*
 * Listens on path (creating its directory 0700 if missing; replacing a
 * socket nobody answers on) and serves it from the default main context.
 * limits NULL: the CONTROL_* defaults. Fails with CONTROL_ERROR_IN_USE if
 * a daemon answers there, CONTROL_ERROR_SOCKET otherwise.
 */
Control *control_new(const char *path, const ControlLimits *limits, ControlHandler handler,
		     gpointer user_data, GError **error);
/* Closes every connection, removes the socket file. */
void control_free(Control *control);
/* Connections held now (for the tests). */
guint control_n_clients(const Control *control);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Control, control_free)
