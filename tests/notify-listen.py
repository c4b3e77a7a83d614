#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Stands in for systemd's notification socket in tests/notify.sh.

Binds an AF_UNIX datagram socket at PATH (or an abstract name given as
@NAME) and prints each message received as one line, its newlines shown
as '|', until it receives STOPPING=1 or SECONDS pass. Prints "listening"
first, once the socket is bound.
"""
import socket
import sys
import time

path, seconds = sys.argv[1], float(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + path[1:] if path.startswith("@") else path)
print("listening", flush=True)
end = time.monotonic() + seconds
while time.monotonic() < end:
    s.settimeout(max(0.01, end - time.monotonic()))
    try:
        data = s.recv(4096)
    except socket.timeout:
        break
    message = data.decode("utf-8", "replace").replace("\n", "|")
    print(message, flush=True)
    if "STOPPING=1" in message.split("|"):
        break
