/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Notify: tells systemd how the service is doing (sd_notify(3)'s
 * datagram protocol, without libsystemd).
 *
 * systemd names an AF_UNIX datagram socket in $NOTIFY_SOCKET (a path, or
 * an abstract name written with a leading '@'); each message is one
 * datagram of "KEY=value" lines. Without the variable every call does
 * nothing, so the daemon runs the same outside systemd. Failures to send
 * are logged at debug level and otherwise ignored: systemd's bookkeeping
 * must never stop the daemon.
 *
 * The daemon sends READY=1 once its state is loaded and it serves,
 * STATUS= a one-line summary when it changes, RELOADING=1 with
 * MONOTONIC_USEC= when it starts reloading and READY=1 when done, and
 * STOPPING=1 when it starts to exit.
 */
#pragma once

#include <glib.h>
#include <sys/socket.h>
#include <sys/un.h>

typedef struct Notify Notify;

/*
 * Parses a $NOTIFY_SOCKET value into an address ('@' becomes the leading
 * NUL of an abstract name). FALSE if empty, relative or too long.
 */
gboolean notify_parse_address(const char *text, struct sockaddr_un *addr, socklen_t *len);

/* A notifier for the socket in $NOTIFY_SOCKET; inert without it. */
Notify *notify_new(void);
void notify_free(Notify *notify);
/* Whether messages go anywhere. */
gboolean notify_active(const Notify *notify);

/* Sends one message (lines "KEY=value\n"); FALSE if it could not be sent. */
gboolean notify_send(Notify *notify, const char *message);
void notify_ready(Notify *notify);
/* STATUS=line, only if it differs from the last one sent. */
void notify_status(Notify *notify, const char *line);
/* RELOADING=1 and MONOTONIC_USEC=now (CLOCK_MONOTONIC). */
void notify_reloading(Notify *notify);
void notify_stopping(Notify *notify);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Notify, notify_free)
