#!/usr/bin/env bash
# contrib/python/spyremon.py, run by the system python3 against the daemon
# on the simulator: begin and end record the caller's uid and pid and the
# metadata, by default also the host, command line, git commit and torch
# version, and tie the window to the caller's pid; the context manager ends its window also when the block
# raises, and re-raises; the on_trace_ready wrapper runs the handler, then
# ends the window once; errors carry the daemon's code; an absent or mute
# daemon is an "unreachable" error, never a hang.
source "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"

export SPYREMON_SOCKET=$T/control.sock
PYTHONPATH=$ROOT/contrib/python "$PY" - "$DB" "$T" <<'EOF' || fail "the Python module misbehaved"
import json
import os
import socket
import sqlite3
import sys
import threading
import time

import spyremon

db_path, tmp = sys.argv[1], sys.argv[2]


def settled():
    """Ask the daemon to store everything it answered until now: one sync
    request (spyremond(8)), answered once it is stored."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(os.environ["SPYREMON_SOCKET"])
    s.sendall(json.dumps({"v": 1, "cmd": "sync", "through_ns": time.time_ns(),
                          "wait_ms": 10000}).encode() + b"\n")
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    r = json.loads(buf)
    assert r["ok"], r


def window_row(wid):
    settled()
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
    row = db.execute("SELECT tag, uid, pid, begin_ns, end_ns, meta FROM windows "
                     "WHERE id = ?", (wid,)).fetchone()
    db.close()
    return row


def expect_error(code, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except spyremon.SpyremonError as e:
        assert e.code == code, (e.code, e.message)
        assert str(e) == e.message and e.message, e.message
        return e
    raise AssertionError("%s did not fail with %s" % (fn.__name__, code))


# begin and end by id: the daemon records who asked and the metadata
wid = spyremon.begin("py-plain", commit="abc123", meta={"build.date": "2026-11-30"},
                     record=(), until_exit=False)
assert isinstance(wid, int) and wid > 0
tag, uid, pid, begin, end, meta = window_row(wid)
assert (tag, uid, pid, end) == ("py-plain", os.getuid(), os.getpid(), None)
assert json.loads(meta) == {"build.date": "2026-11-30", "commit": "abc123"}, meta
assert abs(begin - time.time_ns()) < 5 * 10**9
expect_error("tag_open", spyremon.begin, "py-plain")

# by default: where the run came from, and tied to this process
wid2 = spyremon.begin("py-default", commit="mine")
meta = json.loads(window_row(wid2)[5])
assert meta["host"] == socket.gethostname(), meta
assert meta["command"] == " ".join(sys.argv), meta
assert meta["commit"] == "mine", meta
assert set(meta) <= set(spyremon.RECORD) | {"commit"}, meta
try:
    import importlib.metadata as md
    assert meta.get("torch") == md.version("torch"), meta
except ImportError:
    pass
except md.PackageNotFoundError:
    assert "torch" not in meta, meta
if os.path.isdir(os.path.join(os.getcwd(), ".git")) or \
        os.path.isfile(os.path.join(os.getcwd(), ".git")):
    assert len(meta["git_sha"]) == 40, meta
settled()
db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
assert db.execute("SELECT until_pid FROM windows WHERE id = ?",
                  (wid2,)).fetchone()[0] == os.getpid()
db.close()
spyremon.end(id=wid2)
assert spyremon.collect(("host",)) == {"host": socket.gethostname()}
try:
    spyremon.collect(("nonsense",))
except ValueError:
    pass
else:
    raise AssertionError("an unknown record item was accepted")
second = spyremon.begin("py-plain", same_tag=True)
spyremon.end(id=second)
reply = spyremon.end(id=wid)
assert reply["id"] == wid and reply["end_ns"] > reply["begin_ns"] == begin
assert window_row(wid)[4] == reply["end_ns"]
expect_error("not_open", spyremon.end, id=wid)
expect_error("not_open", spyremon.end)
expect_error("bad_tag", spyremon.begin, "two words")

# the context manager, normally and when its block raises
with spyremon.window("py-ctx", workload="unit") as wid:
    assert window_row(wid)[4] is None
    time.sleep(0.3)
row = window_row(wid)
assert row[0] == "py-ctx" and row[4] is not None and row[4] - row[3] >= 3 * 10**8

# wait=: the window is complete, its samples and summary stored, on return
with spyremon.window("py-wait", wait=10) as wid:
    time.sleep(0.2)
db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
done = db.execute("SELECT complete_ns IS NOT NULL, (SELECT count(*) FROM "
                  "window_summary WHERE window_id = ?1) FROM windows WHERE "
                  "id = ?1", (wid,)).fetchone()
db.close()
assert done[0] == 1 and done[1] > 0, done
try:
    with spyremon.window("py-raise") as raised:
        raise KeyError("inside")
except KeyError as e:
    assert e.args == ("inside",)
else:
    raise AssertionError("the block's exception was swallowed")
assert window_row(raised)[4] is not None, "window not ended after an exception"

# on_trace_ready: the handler runs, then the window ends, once
calls = []
wid = spyremon.begin("py-trace")
ready = spyremon.on_trace_ready(lambda prof: calls.append(prof), id=wid)
ready("trace-1")
assert calls == ["trace-1"] and window_row(wid)[4] is not None
ready("trace-2")
assert calls == ["trace-1", "trace-2"]
wid = spyremon.begin("py-trace-fail")


def broken(prof):
    raise RuntimeError("handler failed")


try:
    spyremon.on_trace_ready(broken, tag="py-trace-fail")("p")
except RuntimeError:
    pass
else:
    raise AssertionError("the handler's exception was swallowed")
assert window_row(wid)[4] is not None

# status: the reply without "ok"
st = spyremon.status()
assert "ok" not in st and st["daemon"]["pid"] > 0 and isinstance(st["cards"], list)

# no daemon there, and one that never answers
e = expect_error("unreachable", spyremon.begin, "x", socket=tmp + "/none.sock")
assert "is spyremond running?" in e.message
mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
mute.bind(tmp + "/mute.sock")
mute.listen(1)
held = []
threading.Thread(target=lambda: held.append(mute.accept()), daemon=True).start()
t0 = time.monotonic()
try:
    spyremon.request({"cmd": "hello"}, socket=tmp + "/mute.sock", timeout=0.5)
except spyremon.SpyremonError as err:
    assert err.code == "unreachable" and "did not answer" in err.message, err.message
else:
    raise AssertionError("a mute daemon did not time out")
assert time.monotonic() - t0 < 3
print("python module: all checks passed")
EOF

# the windows it made are there for the command-line client
"$CLIENT" -c "$T/spyremond.yaml" windows --tag py-ctx >"$T/out" || fail "windows failed"
grep -q 'py-ctx .* workload=unit$' "$T/out" || fail "py-ctx not listed: $(cat "$T/out")"
"$CLIENT" -c "$T/spyremond.yaml" export --window py-ctx >"$T/out" || fail "export failed"
[ "$(wc -l <"$T/out")" -gt 2 ] || fail "py-ctx has no samples"
stop_daemon
exit 0
