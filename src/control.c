/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Control: the control socket on the main loop, with raw descriptors
 * and g_unix_fd_add() (GSocketService would do, but it brings GIO's
 * object machinery for one socket whose every step is a few lines here).
 *
 * A connection goes through three steps, never blocking: read its line
 * (G_IO_IN; at most max_request bytes), answer it (the handler runs on
 * the main loop, between two cycles, like the SIGUSR1 dump), write the
 * reply (G_IO_OUT, as the client reads). A handler that must wait for a
 * worker (explain) keeps a ControlLater, and the connection waits in
 * between, reading nothing. A deadline timer runs in every step but the
 * answer; when it fires the connection is dropped.
 */
#include "config.h"

#include "control.h"
#include "json.h"

#include <errno.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

G_DEFINE_QUARK(control-error-quark, control_error)

static const char *const verb_names[CONTROL_N_VERBS] = {
	[CONTROL_VERB_STATUS] = "status",
	[CONTROL_VERB_TOP] = "top",
	[CONTROL_VERB_HITS] = "hits",
	[CONTROL_VERB_EXPLAIN] = "explain",
	[CONTROL_VERB_SAVE] = "save",
	[CONTROL_VERB_RELOAD] = "reload",
	[CONTROL_VERB_DUMP] = "dump",
};

const char *
control_verb_name(ControlVerb verb)
{
	g_return_val_if_fail(verb < CONTROL_N_VERBS, "unknown");
	return verb_names[verb];
}

/* ---- the wire format ---- */

char *
control_quote_arg(const char *arg)
{
	GString *out = g_string_new(NULL);

	for (const guchar *p = (const guchar *)arg; *p; p++) {
		if (*p <= 0x20 || *p >= 0x7f || *p == '\\')
			g_string_append_printf(out, "\\x%02x", *p);
		else
			g_string_append_c(out, (char)*p);
	}
	return g_string_free(out, FALSE);
}

char *
control_unquote_arg(const char *token)
{
	GString *out = g_string_new(NULL);

	for (const char *p = token; *p; p++) {
		int hi, lo;

		if (*p != '\\') {
			g_string_append_c(out, *p);
			continue;
		}
		if (p[1] != 'x' || (hi = g_ascii_xdigit_value(p[2])) < 0 ||
		    (lo = g_ascii_xdigit_value(p[3])) < 0 || (hi == 0 && lo == 0)) {
			g_string_free(out, TRUE);
			return NULL;
		}
		g_string_append_c(out, (char)(hi * 16 + lo));
		p += 3;
	}
	return g_string_free(out, FALSE);
}

void
control_request_clear(ControlRequest *req)
{
	if (!req)
		return;
	g_free(req->program);
	memset(req, 0, sizeof(*req));
}

static gboolean bad_request(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);

static gboolean
bad_request(GError **error, const char *format, ...)
{
	g_autofree char *message = NULL;
	va_list args;

	va_start(args, format);
	message = g_strdup_vprintf(format, args);
	va_end(args);
	g_set_error_literal(error, CONTROL_ERROR, CONTROL_ERROR_BAD_REQUEST, message);
	return FALSE;
}

gboolean
control_request_parse(const char *line, ControlRequest *req, GError **error)
{
	g_auto(GStrv) tokens = g_strsplit(line, " ", -1);
	g_autoptr(GPtrArray) args = g_ptr_array_new();
	guint verb;

	memset(req, 0, sizeof(*req));
	for (guint i = 0; tokens[i]; i++) {
		if (strcmp(tokens[i], "--json") == 0)
			req->json = TRUE;
		else if (*tokens[i])
			g_ptr_array_add(args, tokens[i]);
	}
	if (args->len == 0)
		return bad_request(error, "empty request");
	for (verb = 0; verb < CONTROL_N_VERBS; verb++)
		if (strcmp(args->pdata[0], verb_names[verb]) == 0)
			break;
	if (verb == CONTROL_N_VERBS) {
		g_autofree char *shown = control_quote_arg(args->pdata[0]);

		return bad_request(error, "unknown verb '%s'", shown);
	}
	req->verb = (ControlVerb)verb;
	switch (req->verb) {
	case CONTROL_VERB_TOP:
		req->count = CONTROL_TOP_DEFAULT;
		if (args->len > 2)
			return bad_request(error, "top takes at most one argument");
		if (args->len == 2) {
			guint64 n;

			if (!g_ascii_string_to_unsigned(args->pdata[1], 10, 1, REPORT_TOP_MAX, &n, NULL))
				return bad_request(error, "top: N must be a number from 1 to %d",
						   REPORT_TOP_MAX);
			req->count = (guint)n;
		}
		break;
	case CONTROL_VERB_HITS:
	case CONTROL_VERB_EXPLAIN:
		if (args->len > 2)
			return bad_request(error, "%s takes one program", verb_names[verb]);
		if (args->len < 2) {
			if (req->verb == CONTROL_VERB_EXPLAIN)
				return bad_request(error, "explain needs a program");
			break;
		}
		req->program = control_unquote_arg(args->pdata[1]);
		if (!req->program || !*req->program) {
			control_request_clear(req);
			return bad_request(error, "%s: malformed program argument", verb_names[verb]);
		}
		break;
	default:
		if (args->len > 1)
			return bad_request(error, "%s takes no argument", verb_names[verb]);
		break;
	}
	return TRUE;
}

char *
control_answer(const ControlRequest *req, const ReportSources *src, gboolean *ok)
{
	g_autoptr(ReportSnapshot) snap = NULL;

	*ok = TRUE;
	if (req->verb == CONTROL_VERB_EXPLAIN) {
		char *error_text = NULL;
		g_autoptr(ReportExplain) ex = report_explain(src, req->program, TRUE, &error_text);

		if (!ex) {
			*ok = FALSE;
			return error_text;
		}
		return report_explain_text(ex, req->json);
	}
	snap = report_snapshot_new(src, req->verb == CONTROL_VERB_TOP ? req->count : 0);
	switch (req->verb) {
	case CONTROL_VERB_STATUS:
		return report_status_text(snap, req->json);
	case CONTROL_VERB_TOP:
		return report_top_text(snap, req->count, req->json);
	case CONTROL_VERB_HITS: {
		char *error_text = NULL;
		char *text = report_hits_text(snap, req->program, req->json, &error_text);

		if (!text) {
			*ok = FALSE;
			return error_text;
		}
		return text;
	}
	case CONTROL_VERB_DUMP:
		return report_dump_text(snap, req->json);
	default:
		*ok = FALSE;
		return g_strdup_printf("%s is not answered from a report", control_verb_name(req->verb));
	}
}

char *
control_done_text(const ControlRequest *req, const char *message)
{
	GString *out;

	if (!req->json)
		return g_strdup(message);
	out = g_string_new("{\"ok\":true,\"message\":");
	json_append_string(out, message);
	g_string_append(out, "}\n");
	return g_string_free(out, FALSE);
}

/* ---- the socket ---- */

typedef enum {
	CLIENT_READING,
	CLIENT_WAITING,   /* for a reply given later (ControlLater) */
	CLIENT_WRITING,
} ClientStep;

typedef struct Client Client;

struct ControlLater {
	Client *client;       /* NULL once the connection is gone */
	gboolean json;        /* the request asked for JSON */
	gboolean kept;        /* control_later_keep() was called */
};

struct Client {
	Control *control;     /* the owner */
	int fd;
	ClientStep step;
	GString *in;          /* the request so far */
	GString *out;         /* the reply */
	gsize sent;           /* bytes of out written */
	guint io_source;
	guint deadline_source;
	GList *link;          /* in control->clients */
	ControlLater *later;  /* the pending reply's, owned by the handler once kept */
};

struct Control {
	char *path;
	int fd;
	guint accept_source;
	guint resume_source;  /* accepting paused (out of descriptors) */
	ControlLimits limits;
	ControlHandler handler;
	gpointer user_data;
	GQueue clients;       /* Client *, oldest first */
	gint64 refusal_logged_at; /* monotonic us of the last "refused" line, 0 never */
	guint refusals_unlogged;
};

static void
client_free(Client *client)
{
	Control *control = client->control;

	if (client->io_source)
		g_source_remove(client->io_source);
	if (client->deadline_source)
		g_source_remove(client->deadline_source);
	g_queue_delete_link(&control->clients, client->link);
	/* A reply still to come is discarded when it comes. */
	if (client->later)
		client->later->client = NULL;
	close(client->fd);
	g_string_free(client->in, TRUE);
	g_string_free(client->out, TRUE);
	g_free(client);
}

static gboolean
on_deadline(gpointer user_data)
{
	Client *client = user_data;

	client->deadline_source = 0;
	if (client->step == CLIENT_WAITING)
		g_debug("control: dropping a client whose reply did not come in time");
	else
		g_debug("control: dropping a client that did not %s in time",
			client->step == CLIENT_READING ? "send its request" : "read its reply");
	client_free(client);
	return G_SOURCE_REMOVE;
}

static void
client_set_deadline(Client *client, guint ms)
{
	if (client->deadline_source)
		g_source_remove(client->deadline_source);
	client->deadline_source = g_timeout_add(ms, on_deadline, client);
}

static gboolean on_client_io(gint fd, GIOCondition condition, gpointer user_data);

/* Answers the line (or the error) and starts writing. */
static void
client_reply(Client *client, gboolean ok, const char *body)
{
	const Control *control = client->control;
	gsize max = control->limits.max_reply;

	g_string_assign(client->out, ok ? "OK\n" : "ERROR\n");
	g_string_append(client->out, body);
	if (client->out->len > 0 && client->out->str[client->out->len - 1] != '\n')
		g_string_append_c(client->out, '\n');
	if (client->out->len > max) {
		static const char cut[] = "\n(reply cut: longer than the control socket sends)\n";

		g_string_truncate(client->out, max - (sizeof(cut) - 1));
		g_string_append(client->out, cut);
	}
	client->step = CLIENT_WRITING;
	/* No more reading: what the client sends now is ignored. */
	(void)shutdown(client->fd, SHUT_RD);
	if (client->io_source)
		g_source_remove(client->io_source);
	client->io_source = g_unix_fd_add(client->fd, G_IO_OUT, on_client_io, client);
	client_set_deadline(client, control->limits.deadline_ms);
}

/* Replies with body (taken), wrapped as {"error":...} for an error asked in JSON. */
static void
client_answer(Client *client, gboolean ok, gboolean json, char *body)
{
	if (!ok && json) {
		/* A script that asked for JSON gets its error as JSON too. */
		GString *wrapped = g_string_new("{\"error\":");

		json_append_string(wrapped, body ? body : "");
		g_string_append(wrapped, "}\n");
		g_free(body);
		body = g_string_free(wrapped, FALSE);
	}
	client_reply(client, ok, body ? body : "");
	g_free(body);
}

void
control_later_keep(ControlLater *later)
{
	g_return_if_fail(later != NULL);
	later->kept = TRUE;
}

void
control_later_reply(ControlLater *later, gboolean ok, const char *body)
{
	Client *client;

	g_return_if_fail(later != NULL && later->kept);
	client = later->client;
	if (client) {
		client->later = NULL;
		client_answer(client, ok, later->json, g_strdup(body));
	}
	g_free(later);
}

static void
client_handle_line(Client *client, const char *line)
{
	g_autoptr(GError) error = NULL;
	ControlRequest req;
	ControlLater *later;
	char *body;
	gboolean ok = FALSE, json;

	if (!control_request_parse(line, &req, &error)) {
		g_auto(GStrv) tokens = g_strsplit(line, " ", -1);

		client_answer(client, FALSE, g_strv_contains((const char *const *)tokens, "--json"),
			      g_strdup(error->message));
		return;
	}
	g_debug("control: %s%s", control_verb_name(req.verb), req.json ? " --json" : "");
	later = g_new0(ControlLater, 1);
	later->client = client;
	later->json = req.json;
	client->later = later;
	body = client->control->handler(&req, &ok, later, client->control->user_data);
	json = req.json;
	control_request_clear(&req);
	if (client->later != later) {
		/* Kept and answered before the handler returned: later is gone. */
		g_free(body);
		return;
	}
	if (later->kept) {
		/* The reply comes later: read nothing more meanwhile, and wait a bounded time. */
		const Control *control = client->control;

		g_free(body);
		client->step = CLIENT_WAITING;
		(void)shutdown(client->fd, SHUT_RD);
		g_source_remove(client->io_source);
		client->io_source = 0;
		client_set_deadline(client, control->limits.wait_ms ? control->limits.wait_ms
								    : CONTROL_WAIT_MS);
		return;
	}
	client->later = NULL;
	g_free(later);
	client_answer(client, ok, json, body);
}

/* Reads what there is; returns FALSE when the client is gone or dropped. */
static gboolean
client_read(Client *client)
{
	gsize room = client->control->limits.max_request - client->in->len;
	char buf[1024];
	const char *newline;
	ssize_t n;

	n = recv(client->fd, buf, MIN(sizeof(buf), room), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return TRUE;
	if (n <= 0) {
		client_free(client);
		return FALSE;
	}
	g_string_append_len(client->in, buf, n);
	newline = memchr(client->in->str, '\n', client->in->len);
	if (newline) {
		g_string_truncate(client->in, (gsize)(newline - client->in->str));
		if (strlen(client->in->str) != client->in->len)
			client_reply(client, FALSE, "the request holds a NUL byte");
		else
			client_handle_line(client, client->in->str);
	} else if (client->in->len >= client->control->limits.max_request) {
		client_reply(client, FALSE, "request too long");
	}
	return TRUE;
}

static void
client_write(Client *client)
{
	ssize_t n = send(client->fd, client->out->str + client->sent, client->out->len - client->sent,
			 MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		client_free(client);
		return;
	}
	client->sent += (gsize)n;
	if (client->sent == client->out->len)
		client_free(client);
}

static gboolean
on_client_io(gint fd, GIOCondition condition, gpointer user_data)
{
	Client *client = user_data;

	(void)fd;
	(void)condition;
	if (client->step == CLIENT_READING) {
		client_read(client);
	} else {
		client_write(client);
	}
	/* Sources are replaced or removed by client_reply() and client_free(). */
	return G_SOURCE_CONTINUE;
}

/* A refused client: one log line per CONTROL_REFUSAL_LOG_US, the rest counted. */
static void
refuse(Control *control, int fd, const struct ucred *cred)
{
	static const char reply[] = "ERROR\npermission denied: only root may use the control socket\n";
	gint64 now = g_get_monotonic_time();

	if (control->refusal_logged_at == 0 || now - control->refusal_logged_at >= CONTROL_REFUSAL_LOG_US) {
		if (control->refusals_unlogged > 0)
			g_warning("control: refused a client of uid %u (pid %d), and %u more "
				  "since the last such line: only root may use %s",
				  (unsigned)cred->uid, (int)cred->pid, control->refusals_unlogged,
				  control->path);
		else
			g_warning("control: refused a client of uid %u (pid %d): only root may use %s",
				  (unsigned)cred->uid, (int)cred->pid, control->path);
		control->refusal_logged_at = now;
		control->refusals_unlogged = 0;
	} else {
		control->refusals_unlogged++;
	}
	/* Best effort, never waits: the socket buffer of a new connection has room. */
	(void)send(fd, reply, sizeof(reply) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

static void
control_accept_one(Control *control, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	Client *client;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof(cred)) {
		g_debug("control: cannot read the peer's credentials: %s", g_strerror(errno));
		close(fd);
		return;
	}
	if (cred.uid != 0) {
		refuse(control, fd, &cred);
		return;
	}
	/* Full: the oldest connection still reading makes room (a slow one, or a hostile one). */
	if (control->clients.length >= control->limits.max_clients) {
		for (GList *l = control->clients.head; l; l = l->next) {
			Client *old = l->data;

			if (old->step == CLIENT_READING) {
				g_debug("control: %u connections: dropping the oldest waiting one",
					control->clients.length);
				client_free(old);
				break;
			}
		}
		if (control->clients.length >= control->limits.max_clients) {
			close(fd);
			return;
		}
	}
	client = g_new0(Client, 1);
	client->control = control;
	client->fd = fd;
	client->in = g_string_new(NULL);
	client->out = g_string_new(NULL);
	g_queue_push_tail(&control->clients, client);
	client->link = control->clients.tail;
	client->io_source = g_unix_fd_add(fd, G_IO_IN, on_client_io, client);
	client_set_deadline(client, control->limits.deadline_ms);
}

/* Connections accepted per wake-up: a flood must not hold the main loop. */
#define ACCEPT_BATCH 256
/* How long accepting pauses when the process is out of descriptors. */
#define ACCEPT_PAUSE_MS 100

static gboolean on_accept(gint listen_fd, GIOCondition condition, gpointer user_data);

static gboolean
on_resume(gpointer user_data)
{
	Control *control = user_data;

	control->resume_source = 0;
	control->accept_source = g_unix_fd_add(control->fd, G_IO_IN, on_accept, control);
	return G_SOURCE_REMOVE;
}

static gboolean
on_accept(gint listen_fd, GIOCondition condition, gpointer user_data)
{
	Control *control = user_data;

	(void)condition;
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/*
				 * The connection stays in the backlog and the socket
				 * readable: pause accepting for a moment rather than
				 * spin on it.
				 */
				g_debug("control: accept: %s; pausing", g_strerror(errno));
				control->accept_source = 0;
				control->resume_source = g_timeout_add(ACCEPT_PAUSE_MS, on_resume, control);
				return G_SOURCE_REMOVE;
			}
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				g_debug("control: accept: %s", g_strerror(errno));
			break;
		}
		control_accept_one(control, fd);
	}
	return G_SOURCE_CONTINUE;
}

static gboolean
socket_address(const char *path, struct sockaddr_un *addr, GError **error)
{
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr->sun_path)) {
		g_set_error(error, CONTROL_ERROR, CONTROL_ERROR_SOCKET,
			    "the control socket path %s is too long", path);
		return FALSE;
	}
	strcpy(addr->sun_path, path);
	return TRUE;
}

/* Whether something accepts connections at addr: another daemon. */
static gboolean
socket_answers(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	gboolean answers;

	if (fd < 0)
		return FALSE;
	/* Non-blocking: a full backlog (EAGAIN) means a live listener too. */
	answers = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0 || errno == EAGAIN;
	close(fd);
	return answers;
}

static gboolean
socket_error(GError **error, const char *what, const char *path)
{
	int saved = errno;

	g_set_error(error, CONTROL_ERROR, CONTROL_ERROR_SOCKET, "cannot %s %s: %s", what, path,
		    g_strerror(saved));
	return FALSE;
}

static gboolean
control_listen(Control *control, GError **error)
{
	g_autofree char *dir = g_path_get_dirname(control->path);
	struct sockaddr_un addr;
	GStatBuf st;

	if (!socket_address(control->path, &addr, error))
		return FALSE;
	/* The directory keeps everyone but root away from the socket. */
	if (g_mkdir_with_parents(dir, 0700) < 0)
		return socket_error(error, "create the directory", dir);
	if (g_lstat(control->path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			g_set_error(error, CONTROL_ERROR, CONTROL_ERROR_SOCKET,
				    "%s exists and is not a socket", control->path);
			return FALSE;
		}
		if (socket_answers(&addr)) {
			g_set_error(error, CONTROL_ERROR, CONTROL_ERROR_IN_USE,
				    "another daemon answers on %s", control->path);
			return FALSE;
		}
		/* Left by a daemon that did not exit cleanly. */
		(void)unlink(control->path);
	}
	control->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (control->fd < 0)
		return socket_error(error, "create a socket for", control->path);
	if (bind(control->fd, (const struct sockaddr *)&addr, sizeof(addr)) < 0)
		return socket_error(error, "bind", control->path);
	/* Connecting needs write permission on the socket: root's alone. */
	if (chmod(control->path, 0600) < 0 || listen(control->fd, SOMAXCONN) < 0) {
		socket_error(error, "listen on", control->path);
		(void)unlink(control->path);
		return FALSE;
	}
	control->accept_source = g_unix_fd_add(control->fd, G_IO_IN, on_accept, control);
	return TRUE;
}

Control *
control_new(const char *path, const ControlLimits *limits, ControlHandler handler,
	    gpointer user_data, GError **error)
{
	static const ControlLimits defaults = {
		CONTROL_MAX_REQUEST, CONTROL_DEADLINE_MS, CONTROL_MAX_REPLY, CONTROL_MAX_CLIENTS, CONTROL_WAIT_MS,
	};
	Control *control;

	g_return_val_if_fail(path != NULL && *path, NULL);
	g_return_val_if_fail(handler != NULL, NULL);

	control = g_new0(Control, 1);
	control->path = g_strdup(path);
	control->fd = -1;
	control->limits = limits ? *limits : defaults;
	control->limits.max_request = MAX(control->limits.max_request, 2);
	control->limits.max_reply = MAX(control->limits.max_reply, 256);
	control->limits.max_clients = MAX(control->limits.max_clients, 1);
	control->handler = handler;
	control->user_data = user_data;
	g_queue_init(&control->clients);
	if (!control_listen(control, error)) {
		if (control->fd >= 0)
			close(control->fd);
		control->fd = -1;
		control_free(control);
		return NULL;
	}
	return control;
}

void
control_free(Control *control)
{
	if (!control)
		return;
	while (control->clients.head)
		client_free(control->clients.head->data);
	if (control->accept_source)
		g_source_remove(control->accept_source);
	if (control->resume_source)
		g_source_remove(control->resume_source);
	if (control->fd >= 0) {
		close(control->fd);
		(void)unlink(control->path);
	}
	g_free(control->path);
	g_free(control);
}

guint
control_n_clients(const Control *control)
{
	return control->clients.length;
}
