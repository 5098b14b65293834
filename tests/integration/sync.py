#!/usr/bin/env python3
"""sync.py SOCKET: ask spyremond to store everything it has answered and
sampled until now (the control socket's sync request, spyremond(8)) and
wait for its answer, for tests that then read the database with sqlite3
itself rather than through spyremon.  Exit 1 if it is not all stored
within 10 s."""
import sys
import time

from ctlclient import Conn

r = Conn(sys.argv[1], timeout=20).ask(
    {"v": 1, "cmd": "sync", "through_ns": time.time_ns(), "wait_ms": 10000})
if not r["ok"]:
    sys.exit("not stored: %s" % r["message"])
