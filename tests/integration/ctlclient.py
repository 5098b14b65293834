#!/usr/bin/env python3
"""A raw client of spyremond's control socket, for the integration tests.

As a program:  ctlclient.py SOCKET REQUEST...
    sends each REQUEST (one JSON text, sent as given plus a newline) in
    turn on one connection and prints each reply line; exit 0 if every
    reply has "ok": true, 1 otherwise, 2 if the daemon closed early.

As a module: Conn(path) is one connection; Conn.ask(request) sends a dict
(or bytes, sent as they are) and returns the parsed reply; Conn.closed()
tells whether the daemon has closed its end.
"""
import json
import socket
import sys


class Closed(Exception):
    """The daemon closed the connection before a whole reply."""


class Conn:
    def __init__(self, path, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""

    def send(self, data):
        if isinstance(data, dict):
            data = json.dumps(data).encode() + b"\n"
        self.sock.sendall(data)

    def reply(self):
        """The next reply line, parsed."""
        while b"\n" not in self.buf:
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                raise Closed(self.buf.decode(errors="replace"))
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def ask(self, request):
        self.send(request)
        return self.reply()

    def closed(self, timeout=2.0):
        """True if the daemon closes its end within timeout (data left unread)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
                self.buf += chunk
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False

    def close(self):
        self.sock.close()


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    conn = Conn(argv[1])
    ok = True
    try:
        for req in argv[2:]:
            conn.send(req.encode() + b"\n")
            r = conn.reply()
            print(json.dumps(r))
            ok = ok and r.get("ok") is True
    except Closed:
        return 2
    finally:
        conn.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
