/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Notify: sd_notify's datagram protocol in a few calls. One socket is
 * kept for the process's life (systemd's own library opens one per
 * message; a daemon that reports every cycle saves the system calls).
 */
#include "config.h"

#include "notify.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct Notify {
	int fd;                    /* -1: inert */
	struct sockaddr_un addr;
	socklen_t addr_len;
	char *status;              /* the last STATUS= sent */
};

gboolean
notify_parse_address(const char *text, struct sockaddr_un *addr, socklen_t *len)
{
	gsize n;

	if (!text || (text[0] != '/' && text[0] != '@'))
		return FALSE;
	n = strlen(text);
	if (n < 2 || n >= sizeof(addr->sun_path))
		return FALSE;
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	memcpy(addr->sun_path, text, n);
	if (text[0] == '@') {
		/* Abstract: the name is the bytes after a NUL, not NUL-terminated. */
		addr->sun_path[0] = '\0';
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else {
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	}
	return TRUE;
}

Notify *
notify_new(void)
{
	Notify *notify = g_new0(Notify, 1);
	const char *text = g_getenv("NOTIFY_SOCKET");

	notify->fd = -1;
	if (!text)
		return notify;
	if (!notify_parse_address(text, &notify->addr, &notify->addr_len)) {
		g_info("NOTIFY_SOCKET=%s is not a socket address, ignoring", text);
		return notify;
	}
	notify->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (notify->fd < 0)
		g_info("cannot create the notification socket: %s, ignoring", g_strerror(errno));
	return notify;
}

void
notify_free(Notify *notify)
{
	if (!notify)
		return;
	if (notify->fd >= 0)
		close(notify->fd);
	g_free(notify->status);
	g_free(notify);
}

gboolean
notify_active(const Notify *notify)
{
	return notify && notify->fd >= 0;
}

gboolean
notify_send(Notify *notify, const char *message)
{
	if (!notify_active(notify))
		return FALSE;
	/* A datagram socket: one send is the whole message or nothing. */
	if (sendto(notify->fd, message, strlen(message), MSG_NOSIGNAL | MSG_DONTWAIT,
		   (const struct sockaddr *)&notify->addr, notify->addr_len) < 0) {
		g_debug("cannot notify systemd: %s, ignoring", g_strerror(errno));
		return FALSE;
	}
	return TRUE;
}

void
notify_ready(Notify *notify)
{
	notify_send(notify, "READY=1");
}

void
notify_status(Notify *notify, const char *line)
{
	g_autofree char *message = NULL;

	if (!notify_active(notify) || g_strcmp0(notify->status, line) == 0)
		return;
	/* One line: a newline would start another KEY=value. */
	message = g_strconcat("STATUS=", line, NULL);
	g_strdelimit(message, "\n", ' ');
	if (notify_send(notify, message)) {
		g_free(notify->status);
		notify->status = g_strdup(line);
	}
}

void
notify_reloading(Notify *notify)
{
	g_autofree char *message = NULL;

	if (!notify_active(notify))
		return;
	message = g_strdup_printf("RELOADING=1\nMONOTONIC_USEC=%" G_GINT64_FORMAT,
				  g_get_monotonic_time());
	notify_send(notify, message);
}

void
notify_stopping(Notify *notify)
{
	notify_send(notify, "STOPPING=1");
}
