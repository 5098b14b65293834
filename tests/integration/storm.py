#!/usr/bin/env python3
"""storm.py SOCKET PAIRS [SECONDS]: begin and end a window PAIRS times
(and for at least SECONDS) over one connection as fast as the daemon
answers, as one hostile member of group spyremon would.  A begin refused
with "busy" is counted and not ended; the next is tried at once.
Prints one JSON object: pairs, ok, busy, other (other refusals, with the
first one's text), seconds.  Exit 0 unless the connection broke."""
import json
import sys
import time

from ctlclient import Conn

conn = Conn(sys.argv[1], timeout=30)
pairs = int(sys.argv[2])
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
out = {"pairs": 0, "ok": 0, "busy": 0, "other": 0, "first_other": None}
t0 = time.monotonic()
while out["pairs"] < pairs or time.monotonic() - t0 < seconds:
    out["pairs"] += 1
    r = conn.ask({"v": 1, "cmd": "begin", "tag": "storm"})
    if not r["ok"]:
        if r.get("error") == "busy":
            out["busy"] += 1
        else:
            out["other"] += 1
            out["first_other"] = out["first_other"] or r.get("message")
        continue
    r = conn.ask({"v": 1, "cmd": "end", "tag": "storm"})
    if r["ok"]:
        out["ok"] += 1
    else:
        out["other"] += 1
        out["first_other"] = out["first_other"] or r.get("message")
out["seconds"] = round(time.monotonic() - t0, 3)
print(json.dumps(out))
