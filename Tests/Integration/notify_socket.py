"""Plays systemd's side of sd_notify: binds a Unix datagram socket at argv[1] and appends every
message to argv[2] as "<monotonic ms> <assignments joined by |>", until killed."""
import os
import socket
import sys
import time

path, out = sys.argv[1], sys.argv[2]
if os.path.exists(path):
    os.unlink(path)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
with open(out, "a", buffering=1) as log:
    while True:
        data = sock.recv(4096).decode("utf-8", "replace")
        log.write("%d %s\n" % (time.monotonic() * 1000, data.strip().replace("\n", "|")))
