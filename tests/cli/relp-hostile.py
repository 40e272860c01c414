#!/usr/bin/env python3
# relp-hostile.py PORTFILE ACKFILE MODE... - a RELP server that lies, for
# tests/cli/ship-relp.sh.  It listens on a free port of 127.0.0.1 (written
# to PORTFILE), answers "open" as imrelp does, and then plays one MODE per
# connection, in turn (the last one for every later connection):
#   garbage    acks 3 messages, then sends bytes that are no frame
#   huge       acks 3, then a rsp claiming 999999999 bytes, and 4 MiB of them
#   wrongtxnr  acks 3, then answers a TXNR that was never sent
#   cut        acks 3, then half a frame, then closes
#   refuse     acks 3, then "500 queue full"
#   serverclose acks 3, then the serverclose hint
#   silent     reads and never answers
#   good       acks every message
# Each message acked is appended to ACKFILE as its seq="N" (one a line),
# so that the test can hold the shipper's cursor to what was acked, and
# each close as "close TXNR".
import re
import socket
import sys

portfile, ackfile, modes = sys.argv[1], sys.argv[2], sys.argv[3:]
OPEN_RSP = (b"200 OK\nrelp_version=0\n"
            b"relp_software=librelp,1.11.0,http://librelp.adiscon.com\n"
            b"commands=syslog")


def frame(txnr, cmd, data=b""):
    head = b"%d %s %d" % (txnr, cmd, len(data))
    return head + (b" " + data if data else b"") + b"\n"


def frames(conn):
    """Yields (txnr, command, data) as the client sends them."""
    buf = b""
    while True:
        m = re.match(rb"(\d+) ([a-zA-Z]+) (\d+)", buf)
        if m and len(buf) > m.end():
            n = int(m.group(3))
            start = m.end() + (1 if n else 0)
            if len(buf) >= start + n + 1:
                yield int(m.group(1)), m.group(2), buf[start:start + n]
                buf = buf[start + n + 1:]
                continue
        chunk = conn.recv(65536)
        if not chunk:
            return
        buf += chunk


def serve(conn, mode, acks):
    acked = 0
    for txnr, cmd, data in frames(conn):
        if cmd == b"open":
            conn.sendall(frame(txnr, b"rsp", OPEN_RSP))
            continue
        if cmd == b"close":
            acks.write("close %d\n" % txnr)
            acks.flush()
            conn.sendall(frame(txnr, b"rsp"))
            return
        if mode == "silent":
            continue
        if mode != "good" and acked == 3:
            if mode == "garbage":
                conn.sendall(b"\x00\xffthis is no frame\n")
            elif mode == "huge":
                conn.sendall(b"%d rsp 999999999 " % txnr)
                junk = b"x" * 65536
                try:
                    for _ in range(64):
                        conn.sendall(junk)
                except OSError:
                    pass
            elif mode == "wrongtxnr":
                conn.sendall(frame(txnr + 7, b"rsp", b"200 OK"))
            elif mode == "cut":
                conn.sendall(b"%d rsp 6 20" % txnr)
            elif mode == "refuse":
                conn.sendall(frame(txnr, b"rsp", b"500 queue full"))
            elif mode == "serverclose":
                conn.sendall(frame(0, b"serverclose"))
            # the client drops the connection: wait for it, as a close
            # with its frames unread would reset the connection and the
            # client might never read the lie
            conn.settimeout(10)
            try:
                while conn.recv(65536):
                    pass
            except OSError:
                pass
            return
        m = re.search(rb'seq="(\d+)"', data)
        acks.write("%s\n" % (m.group(1).decode() if m else "?"))
        acks.flush()
        conn.sendall(frame(txnr, b"rsp", b"200 OK"))
        acked += 1


def main():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    import os
    os.rename(portfile + ".tmp", portfile)
    with open(ackfile, "a") as acks:
        i = 0
        while True:
            conn, _ = srv.accept()
            mode = modes[min(i, len(modes) - 1)]
            i += 1
            try:
                serve(conn, mode, acks)
            except OSError:
                pass
            conn.close()


main()
