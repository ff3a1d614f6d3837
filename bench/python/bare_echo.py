#!/usr/bin/env python3
"""The floor for worker benchmarks: a bare stdlib echo over a Unix socket.

It takes the engine's command line (only --sock-name matters; the rest is
ignored), prints the readiness line once it listens, accepts one connection,
and sends back every frame (int32 length + bytes) it reads, until the
connection closes.
"""

import argparse
import os
import socket
import struct
import sys

_LEN = struct.Struct(">i")


def serve(conn):
    """Echoes length-prefixed frames on conn until the peer closes it."""
    reader = conn.makefile("rb", buffering=256 << 10)
    read, send = reader.read, conn.sendall
    while True:
        head = read(4)
        if len(head) < 4:
            return
        body = read(_LEN.unpack(head)[0])
        send(head + body)


def main(argv):
    """Listens on --sock-name, prints the readiness line and echoes one connection."""
    parser = argparse.ArgumentParser(prog="bare_echo")
    parser.add_argument("--sock-name", required=True)
    args, _ = parser.parse_known_args(argv)
    if os.path.exists(args.sock_name):
        os.unlink(args.sock_name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(args.sock_name)
    listener.listen(1)
    print("Python engine started.", flush=True)
    conn, _ = listener.accept()
    listener.close()
    serve(conn)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
