/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/control.c: the request parser and the argument quoting
 * from tables, then the socket on a real main loop with short limits: a
 * request answered, a stalled client dropped at its deadline, an
 * over-long line refused, the oldest waiting connection pushed out when
 * the table is full, a second daemon refused the path, a stale socket
 * file replaced. (Peer credentials are checked by tests/control.sh, which
 * runs a client as another user.)
 */
#include "config.h"

#include "testutil.h"
#include "control.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ---- parsing ---- */

START_TEST(test_parse)
{
	static const struct {
		const char *line;
		gboolean ok;
		ControlVerb verb;
		gboolean json;
		guint count;
		const char *program;
	} cases[] = {
		{ "status", TRUE, CONTROL_VERB_STATUS, FALSE, 0, NULL },
		{ "status --json", TRUE, CONTROL_VERB_STATUS, TRUE, 0, NULL },
		{ "--json dump", TRUE, CONTROL_VERB_DUMP, TRUE, 0, NULL },
		{ "top", TRUE, CONTROL_VERB_TOP, FALSE, 10, NULL },
		{ "top 5 --json", TRUE, CONTROL_VERB_TOP, TRUE, 5, NULL },
		{ "top 1000", TRUE, CONTROL_VERB_TOP, FALSE, 1000, NULL },
		{ "hits", TRUE, CONTROL_VERB_HITS, FALSE, 0, NULL },
		{ "hits /usr/bin/a\\x20b", TRUE, CONTROL_VERB_HITS, FALSE, 0, "/usr/bin/a b" },
		{ "explain firefox", TRUE, CONTROL_VERB_EXPLAIN, FALSE, 0, "firefox" },
		{ "explain /tmp/\\x0a\\xff", TRUE, CONTROL_VERB_EXPLAIN, FALSE, 0, "/tmp/\n\xff" },
		{ "save", TRUE, CONTROL_VERB_SAVE, FALSE, 0, NULL },
		{ "reload", TRUE, CONTROL_VERB_RELOAD, FALSE, 0, NULL },
		{ "", FALSE, 0, FALSE, 0, NULL },
		{ "   ", FALSE, 0, FALSE, 0, NULL },
		{ "frobnicate", FALSE, 0, FALSE, 0, NULL },
		{ "STATUS", FALSE, 0, FALSE, 0, NULL },
		{ "top 0", FALSE, 0, FALSE, 0, NULL },
		{ "top 1001", FALSE, 0, FALSE, 0, NULL },
		{ "top -1", FALSE, 0, FALSE, 0, NULL },
		{ "top 3 4", FALSE, 0, FALSE, 0, NULL },
		{ "explain", FALSE, 0, FALSE, 0, NULL },
		{ "explain a b", FALSE, 0, FALSE, 0, NULL },
		{ "explain a\\x00", FALSE, 0, FALSE, 0, NULL },
		{ "explain a\\x4", FALSE, 0, FALSE, 0, NULL },
		{ "explain a\\", FALSE, 0, FALSE, 0, NULL },
		{ "save now", FALSE, 0, FALSE, 0, NULL },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		ControlRequest req;
		gboolean ok = control_request_parse(cases[i].line, &req, &error);

		ck_assert_msg(ok == cases[i].ok, "case %zu '%s'", i, cases[i].line);
		if (!ok) {
			ck_assert(g_error_matches(error, CONTROL_ERROR, CONTROL_ERROR_BAD_REQUEST));
			continue;
		}
		ck_assert_int_eq(req.verb, cases[i].verb);
		ck_assert_int_eq(req.json, cases[i].json);
		ck_assert_uint_eq(req.count, cases[i].count);
		if (cases[i].program)
			ck_assert_str_eq(req.program, cases[i].program);
		else
			ck_assert_ptr_null(req.program);
		control_request_clear(&req);
	}
}
END_TEST

START_TEST(test_quote_round_trip)
{
	static const char *const args[] = {
		"/usr/bin/ls", "a b", "\\x41", "tab\tnl\n", "caf\xc3\xa9", "\x01\x7f\xff", "--json",
	};
	static const char *const quoted[] = {
		"/usr/bin/ls", "a\\x20b", "\\x5cx41", "tab\\x09nl\\x0a", "caf\\xc3\\xa9",
		"\\x01\\x7f\\xff", "--json",
	};

	for (size_t i = 0; i < G_N_ELEMENTS(args); i++) {
		g_autofree char *q = control_quote_arg(args[i]);
		g_autofree char *back = control_unquote_arg(q);

		ck_assert_str_eq(q, quoted[i]);
		ck_assert_str_eq(back, args[i]);
		/* A quoted argument never holds a space or a newline: it stays one token of one line. */
		ck_assert_ptr_null(strpbrk(q, " \n"));
	}
}
END_TEST

/* ---- the socket ---- */

typedef struct SocketFixture {
	char *dir;
	char *path;
	guint calls;
	gboolean fail;        /* the handler answers an error */
	gboolean defer;       /* the handler keeps its ControlLater ... */
	gboolean defer_now;   /* ... and answers it before it returns */
	ControlLater *later;  /* kept, not answered yet */
} SocketFixture;

static SocketFixture sf;

static void
socket_setup(void)
{
	sf.dir = tu_make_tempdir();
	sf.path = g_build_filename(sf.dir, "run", "control", NULL);
	sf.calls = 0;
	sf.fail = FALSE;
	sf.defer = sf.defer_now = FALSE;
	sf.later = NULL;
}

static void
socket_teardown(void)
{
	tu_rm_rf(sf.dir);
	g_free(sf.dir);
	g_free(sf.path);
}

static char *
handler(const ControlRequest *req, gboolean *ok, ControlLater *later, gpointer user_data)
{
	SocketFixture *f = user_data;

	f->calls++;
	*ok = !f->fail;
	if (f->defer) {
		control_later_keep(later);
		if (f->defer_now) {
			control_later_reply(later, !f->fail, "at once");
			return NULL;
		}
		f->later = later;
		/* What a deferring handler returns is not sent. */
		return g_strdup("not this");
	}
	return g_strdup_printf("%s %u", control_verb_name(req->verb), req->count);
}

static int
client_connect(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	g_strlcpy(addr.sun_path, path, sizeof(addr.sun_path));
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	return fd;
}

/*
 * Runs the main loop until fd has reached EOF (the daemon closed) or
 * timeout_ms passed; returns what was read, or NULL on timeout.
 */
static char *
client_read_all(int fd, guint timeout_ms)
{
	GString *in = g_string_new(NULL);
	gint64 end = g_get_monotonic_time() + (gint64)timeout_ms * 1000;

	while (g_get_monotonic_time() < end) {
		char buf[4096];
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0) {
			g_string_append_len(in, buf, n);
			continue;
		}
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return g_string_free(in, FALSE);
		g_main_context_iteration(NULL, FALSE);
		g_usleep(1000);
	}
	g_string_free(in, TRUE);
	return NULL;
}

/* Runs the main loop for ms milliseconds. */
static void
spin(guint ms)
{
	gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;

	while (g_get_monotonic_time() < end) {
		g_main_context_iteration(NULL, FALSE);
		g_usleep(1000);
	}
}

static gboolean
quit_loop(gpointer loop)
{
	g_main_loop_quit(loop);
	return G_SOURCE_REMOVE;
}

/* Runs a real main loop for ms milliseconds: it blocks only when nothing is ready. */
static void
run_loop(guint ms)
{
	GMainLoop *loop = g_main_loop_new(NULL, FALSE);

	g_timeout_add(ms, quit_loop, loop);
	g_main_loop_run(loop);
	g_main_loop_unref(loop);
}

static const ControlLimits short_limits = { 64, 200, 4096, 3, 0 };

START_TEST(test_socket_answers)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Control) control = control_new(sf.path, &short_limits, handler, &sf, &error);
	g_autofree char *reply = NULL, *again = NULL, *json_error = NULL;
	GStatBuf st;
	int fd;

	ck_assert_msg(control != NULL, "%s", error ? error->message : "");
	/* The directory is made for root alone, the socket too. */
	ck_assert_int_eq(g_stat(sf.path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	{
		g_autofree char *dir = g_path_get_dirname(sf.path);

		ck_assert_int_eq(g_stat(dir, &st), 0);
		ck_assert_uint_eq(st.st_mode & 0777, 0700);
	}
	fd = client_connect(sf.path);
	ck_assert_int_eq(send(fd, "top 7\n", 6, 0), 6);
	reply = client_read_all(fd, 2000);
	close(fd);
	ck_assert_str_eq(reply, "OK\ntop 7\n");
	/* Any number of clients in turn. */
	for (int i = 0; i < 20; i++) {
		g_autofree char *r = NULL;

		fd = client_connect(sf.path);
		ck_assert_int_eq(send(fd, "status\n", 7, 0), 7);
		r = client_read_all(fd, 2000);
		close(fd);
		ck_assert_str_eq(r, "OK\nstatus 0\n");
	}
	ck_assert_uint_eq(sf.calls, 21);
	/* A bad request never reaches the handler. */
	fd = client_connect(sf.path);
	ck_assert_int_eq(send(fd, "frob\n", 5, 0), 5);
	again = client_read_all(fd, 2000);
	close(fd);
	ck_assert_str_eq(again, "ERROR\nunknown verb 'frob'\n");
	/* ... and comes as JSON when JSON was asked for. */
	{
		g_autofree char *json = NULL;

		fd = client_connect(sf.path);
		ck_assert_int_eq(send(fd, "frob --json\n", 12, 0), 12);
		json = client_read_all(fd, 2000);
		close(fd);
		ck_assert_str_eq(json, "ERROR\n{\"error\":\"unknown verb 'frob'\"}\n");
	}
	ck_assert_uint_eq(sf.calls, 21);
	/* An error the handler gives, asked in JSON, comes as JSON. */
	sf.fail = TRUE;
	fd = client_connect(sf.path);
	ck_assert_int_eq(send(fd, "save --json\n", 12, 0), 12);
	json_error = client_read_all(fd, 2000);
	close(fd);
	ck_assert_str_eq(json_error, "ERROR\n{\"error\":\"save 0\"}\n");
	ck_assert_uint_eq(control_n_clients(control), 0);
}
END_TEST

/* Sends line on a new connection and runs the loop until the handler has it. */
static int
client_ask(const char *line)
{
	int fd = client_connect(sf.path);
	guint calls = sf.calls;

	ck_assert_int_eq(send(fd, line, strlen(line), 0), (ssize_t)strlen(line));
	for (int i = 0; i < 2000 && sf.calls == calls; i++) {
		g_main_context_iteration(NULL, FALSE);
		g_usleep(1000);
	}
	ck_assert_uint_eq(sf.calls, calls + 1);
	return fd;
}

/*
 * A reply given later arrives when it is given, not before, and past the
 * 200 ms deadline of reading a request (the wait has its own, 1 s here);
 * errors asked in JSON come as JSON; a reply given before the handler
 * returns goes out once.
 */
START_TEST(test_socket_later)
{
	static const ControlLimits limits = { 64, 200, 4096, 3, 1000 };
	g_autoptr(Control) control = control_new(sf.path, &limits, handler, &sf, NULL);
	g_autofree char *reply = NULL, *json = NULL, *now = NULL;
	char buf[16];
	int fd;

	ck_assert_ptr_nonnull(control);
	sf.defer = TRUE;
	fd = client_ask("explain x\n");
	ck_assert_ptr_nonnull(sf.later);
	spin(400);
	/* Nothing yet, and the connection still held. */
	ck_assert_int_eq(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), -1);
	ck_assert_uint_eq(control_n_clients(control), 1);
	control_later_reply(sf.later, TRUE, "probed");
	sf.later = NULL;
	reply = client_read_all(fd, 2000);
	close(fd);
	ck_assert_str_eq(reply, "OK\nprobed\n");

	fd = client_ask("explain x --json\n");
	control_later_reply(sf.later, FALSE, "gone");
	sf.later = NULL;
	json = client_read_all(fd, 2000);
	close(fd);
	ck_assert_str_eq(json, "ERROR\n{\"error\":\"gone\"}\n");

	sf.defer_now = TRUE;
	fd = client_ask("explain x\n");
	now = client_read_all(fd, 2000);
	close(fd);
	ck_assert_str_eq(now, "OK\nat once\n");
	ck_assert_uint_eq(control_n_clients(control), 0);
}
END_TEST

/*
 * A reply that does not come within the wait: the connection is dropped
 * at the wait's deadline, and the late reply (and one to a client that
 * hung up, or after the Control is gone) is discarded without a fault.
 */
START_TEST(test_socket_later_dropped)
{
	static const ControlLimits limits = { 64, 200, 4096, 3, 300 };
	Control *control = control_new(sf.path, &limits, handler, &sf, NULL);
	g_autofree char *reply = NULL;
	ControlLater *late;
	gint64 start;
	int fd;

	ck_assert_ptr_nonnull(control);
	sf.defer = TRUE;
	fd = client_ask("explain x\n");
	late = sf.later;
	start = g_get_monotonic_time();
	reply = client_read_all(fd, 2000);
	close(fd);
	ck_assert_str_eq(reply, "");
	ck_assert_int_ge(g_get_monotonic_time() - start, 250 * 1000);
	ck_assert_uint_eq(control_n_clients(control), 0);
	control_later_reply(late, TRUE, "too late");

	/* Pending while the Control is freed. */
	fd = client_ask("explain x\n");
	late = sf.later;
	control_free(control);
	control_later_reply(late, TRUE, "after the end");
	close(fd);
}
END_TEST

/* Half a line, then nothing: dropped at the deadline (200 ms here), never answered. */
START_TEST(test_socket_stalled)
{
	g_autoptr(Control) control = control_new(sf.path, &short_limits, handler, &sf, NULL);
	g_autofree char *reply = NULL;
	gint64 start;
	int fd;

	ck_assert_ptr_nonnull(control);
	fd = client_connect(sf.path);
	ck_assert_int_eq(send(fd, "sta", 3, 0), 3);
	start = g_get_monotonic_time();
	reply = client_read_all(fd, 2000);
	close(fd);
	ck_assert_ptr_nonnull(reply);
	ck_assert_str_eq(reply, "");
	ck_assert_int_ge(g_get_monotonic_time() - start, 150 * 1000);
	ck_assert_uint_eq(sf.calls, 0);
	ck_assert_uint_eq(control_n_clients(control), 0);
}
END_TEST

/* 100 bytes without a newline, the limit 64: refused as soon as 64 are in. */
START_TEST(test_socket_too_long)
{
	g_autoptr(Control) control = control_new(sf.path, &short_limits, handler, &sf, NULL);
	g_autofree char *reply = NULL;
	char junk[100];
	int fd;

	memset(junk, 'x', sizeof(junk));
	fd = client_connect(sf.path);
	ck_assert_int_eq(send(fd, junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
	reply = client_read_all(fd, 2000);
	close(fd);
	ck_assert_str_eq(reply, "ERROR\nrequest too long\n");
	ck_assert_uint_eq(sf.calls, 0);
}
END_TEST

/* At most 3 connections: a fourth pushes out the oldest one still waiting. */
START_TEST(test_socket_full)
{
	g_autoptr(Control) control = control_new(sf.path, &short_limits, handler, &sf, NULL);
	g_autofree char *first = NULL, *reply = NULL;
	int fds[4];

	for (int i = 0; i < 3; i++)
		fds[i] = client_connect(sf.path);
	spin(20);
	ck_assert_uint_eq(control_n_clients(control), 3);
	fds[3] = client_connect(sf.path);
	spin(20);
	ck_assert_uint_eq(control_n_clients(control), 3);
	/* The first was closed without an answer; the newest is served. */
	first = client_read_all(fds[0], 100);
	ck_assert_ptr_nonnull(first);
	ck_assert_str_eq(first, "");
	ck_assert_int_eq(send(fds[3], "dump\n", 5, 0), 5);
	reply = client_read_all(fds[3], 2000);
	ck_assert_str_eq(reply, "OK\ndump 0\n");
	for (int i = 0; i < 4; i++)
		close(fds[i]);
}
END_TEST

START_TEST(test_socket_in_use)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Control) control = control_new(sf.path, &short_limits, handler, &sf, NULL);
	g_autoptr(Control) second = NULL;

	ck_assert_ptr_nonnull(control);
	second = control_new(sf.path, &short_limits, handler, &sf, &error);
	ck_assert_ptr_null(second);
	ck_assert(g_error_matches(error, CONTROL_ERROR, CONTROL_ERROR_IN_USE));
	/* The first one still answers. */
	{
		int fd = client_connect(sf.path);
		g_autofree char *reply = NULL;

		ck_assert_int_eq(send(fd, "status\n", 7, 0), 7);
		reply = client_read_all(fd, 2000);
		close(fd);
		ck_assert_str_eq(reply, "OK\nstatus 0\n");
	}
}
END_TEST

/* A socket file left by a killed daemon is replaced; a regular file is not touched. */
START_TEST(test_socket_stale)
{
	g_autoptr(GError) error = NULL;
	g_autoptr(Control) control = NULL;
	g_autoptr(Control) refused = NULL;
	g_autofree char *dir = g_path_get_dirname(sf.path);
	g_autofree char *file = g_build_filename(dir, "file", NULL);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	ck_assert_int_eq(g_mkdir_with_parents(dir, 0700), 0);
	g_strlcpy(addr.sun_path, sf.path, sizeof(addr.sun_path));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(fd);
	control = control_new(sf.path, &short_limits, handler, &sf, &error);
	ck_assert_msg(control != NULL, "%s", error ? error->message : "");
	tu_write_file(file, "keep me");
	refused = control_new(file, &short_limits, handler, &sf, &error);
	ck_assert_ptr_null(refused);
	ck_assert(g_error_matches(error, CONTROL_ERROR, CONTROL_ERROR_SOCKET));
	ck_assert(g_file_test(file, G_FILE_TEST_IS_REGULAR));
	/* Freeing removes the socket. */
	g_clear_pointer(&control, control_free);
	ck_assert(!g_file_test(sf.path, G_FILE_TEST_EXISTS));
}
END_TEST

static gint64
cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (gint64)ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

/*
 * Out of descriptors: accepting pauses instead of spinning on the
 * readable socket, and resumes once a connection is done. The test
 * process is both ends, so each connection costs it two descriptors.
 */
START_TEST(test_socket_out_of_fds)
{
	static const ControlLimits limits = { 64, 5000, 4096, 64, 0 };
	g_autoptr(Control) control = control_new(sf.path, &limits, handler, &sf, NULL);
	struct rlimit rl, saved;
	int fds[4], lowest = dup(0);
	gint64 before;

	ck_assert_ptr_nonnull(control);
	ck_assert_int_ge(lowest, 0);
	close(lowest);
	/* Room for 6 more: 4 client ends, then 2 accepted ones. */
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	saved = rl;
	rl.rlim_cur = (rlim_t)lowest + 6;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	for (int i = 0; i < 4; i++)
		fds[i] = client_connect(sf.path);
	spin(50);
	/* Some accepted (GLib may hold a descriptor too), the rest wait in the backlog. */
	ck_assert_uint_ge(control_n_clients(control), 1);
	ck_assert_uint_lt(control_n_clients(control), 4);
	before = cpu_us();
	run_loop(300);
	/* Spinning on accept() would burn the whole 300 ms. */
	ck_assert_int_lt(cpu_us() - before, 100 * 1000);
	/* Served in turn: each answer frees the descriptors the next one needs. */
	for (int i = 0; i < 4; i++) {
		g_autofree char *reply = NULL;

		ck_assert_int_eq(send(fds[i], "status\n", 7, 0), 7);
		reply = client_read_all(fds[i], 2000);
		ck_assert_msg(reply != NULL, "client %d got no answer", i);
		ck_assert_str_eq(reply, "OK\nstatus 0\n");
		close(fds[i]);
	}
	/* Without a fork per test (CK_FORK=no) the limit would outlive the test. */
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &saved), 0);
}
END_TEST

static Suite *
control_suite(void)
{
	Suite *s = suite_create("control");
	TCase *tc = tcase_create("parse");
	TCase *ts = tcase_create("socket");
	TCase *tk = tcase_create("descriptors");

	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_quote_round_trip);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(ts, socket_setup, socket_teardown);
	tcase_add_test(ts, test_socket_answers);
	tcase_add_test(ts, test_socket_stalled);
	tcase_add_test(ts, test_socket_later);
	tcase_add_test(ts, test_socket_later_dropped);
	tcase_add_test(ts, test_socket_too_long);
	tcase_add_test(ts, test_socket_full);
	tcase_add_test(ts, test_socket_in_use);
	tcase_add_test(ts, test_socket_stale);
	suite_add_tcase(s, ts);
	/*
	 * Tagged "kernel": it relies on accept(2) leaving a connection in the
	 * backlog on EMFILE. valgrind emulates the descriptor limit by closing
	 * the accepted descriptor after the fact, which drops the connection.
	 */
	tcase_add_checked_fixture(tk, socket_setup, socket_teardown);
	tcase_set_tags(tk, "kernel");
	tcase_add_test(tk, test_socket_out_of_fds);
	suite_add_tcase(s, tk);
	return s;
}

int
main(void)
{
	return tu_run_suite(control_suite());
}
