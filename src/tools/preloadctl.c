/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * preloadctl: asks the running preload daemon over its control socket.
 *
 *   preloadctl [--socket PATH] [--json] [--timeout SECONDS] VERB [ARGS]
 *
 * One request line out, the reply in (see src/control.h for the wire
 * format), the body on stdout, or the daemon's error on stderr. The exit
 * status tells a script what went wrong without parsing messages
 * (preloadctl(8)): 0 answered, 1 the daemon refused the request, 2 bad
 * usage, 3 no daemon, 4 permission denied, 5 no answer in time or a
 * garbled one.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmdline.h"
#include "control.h"

enum {
	CTL_OK = 0,
	CTL_REFUSED = 1,       /* the daemon answered ERROR */
	CTL_USAGE = 2,
	CTL_NOT_RUNNING = 3,
	CTL_PERMISSION = 4,
	CTL_FAILED = 5,        /* timeout, garbled reply, I/O error */
};

static const char summary[] =
	"Verbs:\n"
	"  status            running or paused and why, model size, budget, hit rates\n"
	"  top [N]           the N programs most likely to start now (default 10)\n"
	"  hits [PROGRAM]    hit figures, of one program or the most started\n"
	"  explain PROGRAM   why PROGRAM is or is not prefetched now\n"
	"  save              save the state file now\n"
	"  reload            reload the configuration and reopen the log\n"
	"  dump              the SIGUSR1 dump\n"
	"\n"
	"PROGRAM is a path, or the file name of one learned program.";

static const char description[] =
	"Exit status: 0 answered, 1 the daemon refused the request, 2 bad usage,\n"
	"3 the daemon is not running, 4 permission denied, 5 no (valid) answer in time.";

/* Reads until EOF or the deadline; appends to out. */
static int
read_reply(int fd, GString *out, gint64 deadline)
{
	char buf[65536];

	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		gint64 left = (deadline - g_get_monotonic_time()) / 1000;
		ssize_t n;
		int ready;

		if (left <= 0)
			return CTL_FAILED;
		ready = poll(&pfd, 1, (int)MIN(left, G_MAXINT));
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			return CTL_FAILED;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* A refused client may see its connection reset after the refusal. */
			return out->len > 0 ? CTL_OK : CTL_FAILED;
		}
		if (n == 0)
			return CTL_OK;
		g_string_append_len(out, buf, n);
	}
}

static int
send_all(int fd, const char *data, gsize len)
{
	while (len > 0) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		data += n;
		len -= (gsize)n;
	}
	return 0;
}

static int
connect_socket(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "preloadctl: the socket path %s is too long\n", path);
		return -CTL_USAGE;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "preloadctl: socket: %s\n", g_strerror(errno));
		return -CTL_FAILED;
	}
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
		return fd;
	switch (errno) {
	case ENOENT:
	case ECONNREFUSED:
		fprintf(stderr, "preloadctl: preload is not running (nothing answers on %s)\n", path);
		close(fd);
		return -CTL_NOT_RUNNING;
	case EACCES:
	case EPERM:
		fprintf(stderr, "preloadctl: permission denied: only root may talk to preload "
			"(%s)\n", path);
		close(fd);
		return -CTL_PERMISSION;
	default:
		fprintf(stderr, "preloadctl: cannot connect to %s: %s\n", path, g_strerror(errno));
		close(fd);
		return -CTL_FAILED;
	}
}

int
main(int argc, char **argv)
{
	g_autofree char *socket_path = NULL;
	gboolean json = FALSE, version = FALSE;
	int timeout = 30;
	const GOptionEntry entries[] = {
		{ "socket", 's', 0, G_OPTION_ARG_FILENAME, &socket_path,
		  "The daemon's control socket (default " CMDLINE_DEFAULT_CONTROL ")", "PATH" },
		{ "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Answer in JSON", NULL },
		{ "timeout", 't', 0, G_OPTION_ARG_INT, &timeout,
		  "Seconds to wait for the answer (default 30)", "SECONDS" },
		{ "version", 'v', 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
		{ NULL, 0, 0, 0, NULL, NULL, NULL },
	};
	g_autoptr(GOptionContext) context = g_option_context_new("VERB [ARGS]");
	g_autoptr(GError) error = NULL;
	g_autoptr(GString) request = g_string_new(NULL);
	g_autoptr(GString) reply = g_string_new(NULL);
	const char *body;
	int fd, status;

	g_option_context_add_main_entries(context, entries, NULL);
	g_option_context_set_summary(context, summary);
	g_option_context_set_description(context, description);
	if (!g_option_context_parse(context, &argc, &argv, &error)) {
		fprintf(stderr, "preloadctl: %s\nTry 'preloadctl --help'.\n", error->message);
		return CTL_USAGE;
	}
	if (version) {
		printf("preloadctl %s\n", PACKAGE_VERSION);
		return CTL_OK;
	}
	if (argc < 2) {
		fprintf(stderr, "preloadctl: no verb given\nTry 'preloadctl --help'.\n");
		return CTL_USAGE;
	}
	if (timeout <= 0) {
		fprintf(stderr, "preloadctl: --timeout must be positive\n");
		return CTL_USAGE;
	}
	/* The verb goes as it is (the daemon checks it); arguments are quoted. */
	for (int i = 1; i < argc; i++) {
		g_autofree char *quoted = control_quote_arg(argv[i]);

		if (i > 1)
			g_string_append_c(request, ' ');
		g_string_append(request, quoted);
	}
	if (json)
		g_string_append(request, " --json");
	g_string_append_c(request, '\n');
	if (request->len > CONTROL_MAX_REQUEST) {
		fprintf(stderr, "preloadctl: the request is longer than %d bytes\n", CONTROL_MAX_REQUEST);
		return CTL_USAGE;
	}

	fd = connect_socket(socket_path ? socket_path : CMDLINE_DEFAULT_CONTROL);
	if (fd < 0)
		return -fd;
	if (send_all(fd, request->str, request->len) < 0 && errno != EPIPE && errno != ECONNRESET) {
		fprintf(stderr, "preloadctl: cannot send the request: %s\n", g_strerror(errno));
		close(fd);
		return CTL_FAILED;
	}
	status = read_reply(fd, reply, g_get_monotonic_time() + (gint64)timeout * G_USEC_PER_SEC);
	close(fd);
	if (status != CTL_OK) {
		fprintf(stderr, "preloadctl: no answer from preload within %d s\n", timeout);
		return status;
	}
	if (g_str_has_prefix(reply->str, "OK\n")) {
		body = reply->str + 3;
		fwrite(body, 1, strlen(body), stdout);
		return fflush(stdout) == 0 ? CTL_OK : CTL_FAILED;
	}
	if (g_str_has_prefix(reply->str, "ERROR\n")) {
		body = reply->str + 6;
		if (g_str_has_prefix(body, "permission denied")) {
			fprintf(stderr, "preloadctl: %s", body);
			return CTL_PERMISSION;
		}
		if (json)
			fputs(body, stdout);
		else
			fprintf(stderr, "preloadctl: %s", body);
		return CTL_REFUSED;
	}
	fprintf(stderr, "preloadctl: garbled answer from preload\n");
	return CTL_FAILED;
}
