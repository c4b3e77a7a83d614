/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests for src/notify.c: $NOTIFY_SOCKET addresses from a table, then the
 * messages a test socket receives (a path and an abstract name), and
 * nothing at all without the variable.
 */
#include "config.h"

#include "testutil.h"
#include "notify.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

START_TEST(test_parse_address)
{
	struct sockaddr_un addr;
	socklen_t len;
	char long_path[sizeof(addr.sun_path) + 1];

	ck_assert(notify_parse_address("/run/systemd/notify", &addr, &len));
	ck_assert_str_eq(addr.sun_path, "/run/systemd/notify");
	ck_assert_uint_eq(len, offsetof(struct sockaddr_un, sun_path) + 20);
	ck_assert(notify_parse_address("@xyz", &addr, &len));
	ck_assert_int_eq(addr.sun_path[0], '\0');
	ck_assert(memcmp(addr.sun_path + 1, "xyz", 3) == 0);
	/* Abstract: no terminating NUL in the length. */
	ck_assert_uint_eq(len, offsetof(struct sockaddr_un, sun_path) + 4);
	ck_assert(!notify_parse_address(NULL, &addr, &len));
	ck_assert(!notify_parse_address("", &addr, &len));
	ck_assert(!notify_parse_address("@", &addr, &len));
	ck_assert(!notify_parse_address("relative/path", &addr, &len));
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	ck_assert(!notify_parse_address(long_path, &addr, &len));
}
END_TEST

static int
bind_listener(const char *text)
{
	struct sockaddr_un addr;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert(notify_parse_address(text, &addr, &len));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&addr, len), 0);
	return fd;
}

/* The next datagram, or NULL if none is waiting. */
static char *
next_message(int fd)
{
	char buf[4096];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return g_strdup(buf);
}

static void
check_messages(int fd)
{
	g_autoptr(Notify) notify = notify_new();
	g_autofree char *ready = NULL, *s1 = NULL, *s2 = NULL, *reloading = NULL, *again = NULL,
		*stopping = NULL, *none = NULL;
	gint64 before = g_get_monotonic_time();
	gint64 usec;

	ck_assert(notify_active(notify));
	notify_ready(notify);
	notify_status(notify, "Prefetching; 3 programs");
	notify_status(notify, "Prefetching; 3 programs");   /* unchanged: not sent */
	notify_status(notify, "Paused:\nlow memory");         /* the newline cannot pass */
	notify_reloading(notify);
	notify_ready(notify);
	notify_stopping(notify);

	ready = next_message(fd);
	s1 = next_message(fd);
	s2 = next_message(fd);
	reloading = next_message(fd);
	again = next_message(fd);
	stopping = next_message(fd);
	none = next_message(fd);
	ck_assert_str_eq(ready, "READY=1");
	ck_assert_str_eq(s1, "STATUS=Prefetching; 3 programs");
	ck_assert_str_eq(s2, "STATUS=Paused: low memory");
	ck_assert(g_str_has_prefix(reloading, "RELOADING=1\nMONOTONIC_USEC="));
	usec = g_ascii_strtoll(reloading + strlen("RELOADING=1\nMONOTONIC_USEC="), NULL, 10);
	ck_assert_int_ge(usec, before);
	ck_assert_int_le(usec, g_get_monotonic_time());
	ck_assert_str_eq(again, "READY=1");
	ck_assert_str_eq(stopping, "STOPPING=1");
	ck_assert_ptr_null(none);
}

START_TEST(test_path_socket)
{
	g_autofree char *dir = tu_make_tempdir();
	g_autofree char *path = g_build_filename(dir, "notify", NULL);
	int fd = bind_listener(path);

	g_setenv("NOTIFY_SOCKET", path, TRUE);
	check_messages(fd);
	close(fd);
	tu_rm_rf(dir);
}
END_TEST

START_TEST(test_abstract_socket)
{
	g_autofree char *name = g_strdup_printf("@preload-check-notify-%d", (int)getpid());
	int fd = bind_listener(name);

	g_setenv("NOTIFY_SOCKET", name, TRUE);
	check_messages(fd);
	close(fd);
}
END_TEST

START_TEST(test_inert)
{
	g_autoptr(Notify) notify = NULL;

	g_unsetenv("NOTIFY_SOCKET");
	notify = notify_new();
	ck_assert(!notify_active(notify));
	ck_assert(!notify_send(notify, "READY=1"));
	notify_ready(notify);
	notify_status(notify, "x");
	notify_stopping(notify);
	/* A value that is not an address is ignored the same way. */
	g_setenv("NOTIFY_SOCKET", "not-a-socket", TRUE);
	notify_free(notify);
	notify = notify_new();
	ck_assert(!notify_active(notify));
	/* And a socket nobody listens on fails the send, quietly. */
	g_setenv("NOTIFY_SOCKET", "@preload-check-notify-nobody-here", TRUE);
	notify_free(notify);
	notify = notify_new();
	ck_assert(notify_active(notify));
	ck_assert(!notify_send(notify, "READY=1"));
}
END_TEST

static Suite *
notify_suite(void)
{
	Suite *s = suite_create("notify");
	TCase *tc = tcase_create("notify");

	tcase_add_test(tc, test_parse_address);
	tcase_add_test(tc, test_path_socket);
	tcase_add_test(tc, test_abstract_socket);
	tcase_add_test(tc, test_inert);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run_suite(notify_suite());
}
