#!/usr/bin/env bash
# The control socket end to end, with a raw Python client: begin stamps
# the arrival on the samples' clock and stores it with the caller's uid and
# pid; every error code a client can provoke; malformed requests close the
# connection; an open window survives a restart and is ended by id after
# it; a window found open past windows.max_open at start-up is closed then,
# at begin + max_open, flagged auto_closed; the socket is mode 0660, a
# stale one is replaced, a live one never; the spyremon CLI, if built with
# "mark", works against the same socket.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need python3
[ -x "$DAEMON" ] || fail "no $DAEMON; build it first"
export PYTHONPATH=$ROOT/tests/integration
SOCK=$T/control.sock

# the database, once the daemon has stored what it answered (a sync)
q() {
	PYTHONPATH=$ROOT/tests/integration python3 \
		"$ROOT/tests/integration/sync.py" "$T/control.sock" >&2 || true
	sqlite3 -readonly "file:$DB?mode=ro" "$1"
}

daemon_answers() {
	python3 "$ROOT/tests/integration/ctlclient.py" "$SOCK" \
		'{"v":1,"cmd":"hello"}' >/dev/null 2>&1
}

write_config 2 100ms
start_daemon
wait_for 20 daemon_answers || fail "the daemon does not answer on $SOCK"

# ---- the socket file ----
[ "$(stat -c %a "$SOCK")" = 660 ] || fail "socket mode is $(stat -c %a "$SOCK"), not 660"

# ---- begin: the arrival time, on the samples' clock, with uid and pid ----
python3 - "$SOCK" "$T/begun" <<'EOF'
import os, sys, time
from ctlclient import Conn
c = Conn(sys.argv[1])
before = time.time_ns()
r = c.ask({"v": 1, "cmd": "begin", "tag": "run-1",
           "meta": {"commit": "abc123", "workload": "llama-8b-bs4"}})
after = time.time_ns()
assert r["ok"] is True, r
assert r["tag"] == "run-1", r
assert before <= r["begin_ns"] <= after, (before, r["begin_ns"], after)
print("begin round trip %.3f ms" % ((after - before) / 1e6))
with open(sys.argv[2], "w") as f:
    f.write("%d %d %d\n" % (r["id"], r["begin_ns"], os.getpid()))
EOF
read -r ID1 BEGIN1 PID1 <"$T/begun"
[ "$(q "SELECT begin_ns FROM windows WHERE id = $ID1")" = "$BEGIN1" ] ||
	fail "begin_ns in the database is not the one replied"
[ "$(q "SELECT uid || ' ' || pid FROM windows WHERE id = $ID1")" = "$(id -u) $PID1" ] ||
	fail "uid and pid in the database: $(q "SELECT uid, pid FROM windows WHERE id = $ID1")"
[ "$(q "SELECT json_extract(meta, '\$.workload') FROM windows WHERE id = $ID1")" = llama-8b-bs4 ] ||
	fail "meta in the database: $(q "SELECT meta FROM windows WHERE id = $ID1")"
[ "$(q "SELECT end_ns IS NULL FROM windows WHERE id = $ID1")" = 1 ] ||
	fail "window $ID1 is not open in the database"
log_has "window $ID1 'run-1' begun by uid $(id -u) (pid $PID1)" ||
	fail "no log line for the begin"

# ---- errors, and which of them close the connection ----
python3 - "$SOCK" "$ID1" <<'EOF'
import sys
from ctlclient import Conn, Closed
sock, id1 = sys.argv[1], int(sys.argv[2])

def expect(conn, req, code, closes=False):
    r = conn.ask(req)
    assert r.get("ok") is False and r.get("error") == code, (req, r)
    assert r.get("message"), r
    assert conn.closed(timeout=1.0 if closes else 0.3) == closes, (req, closes)
    return r

c = Conn(sock)
expect(c, {"v": 1, "cmd": "begin", "tag": "run-1"}, "tag_open")
r = c.ask({"v": 1, "cmd": "begin", "tag": "run-1", "same_tag": True})
assert r["ok"] is True and r["id"] != id1, r
second = r["id"]
expect(c, {"v": 1, "cmd": "end", "tag": "run-1"}, "ambiguous")
expect(c, {"v": 1, "cmd": "begin", "tag": "has space"}, "bad_tag")
expect(c, {"v": 1, "cmd": "begin", "tag": "x" * 65}, "bad_tag")
expect(c, {"v": 1, "cmd": "begin", "tag": "m", "meta": {"k": 5}}, "bad_meta")
expect(c, {"v": 1, "cmd": "frobnicate"}, "unknown_command")
r = c.ask({"v": 1, "cmd": "end", "id": second})
assert r["ok"] is True and r["id"] == second and r["end_ns"] >= r["begin_ns"], r
r = expect(c, {"v": 1, "cmd": "end", "id": second}, "not_open")
assert "already ended" in r["message"], r
expect(c, {"v": 1, "cmd": "end", "id": 999999}, "not_open")
expect(c, {"v": 1, "cmd": "end", "tag": "never-opened"}, "not_open")
# several requests on one connection, all answered in order
assert c.ask({"v": 1, "cmd": "hello"})["ok"] is True
c.close()

for bad, code in [({"v": 2, "cmd": "hello"}, "unsupported_version"),
                  (b"garbage\n", "bad_request"),
                  (b'{"v":1,"cmd":"begin","tag":7}\n', "bad_request"),
                  (b'[1]\n', "bad_request")]:
    expect(Conn(sock), bad, code, closes=True)

# a second client with nothing open of its own: nothing to end
r = Conn(sock).ask({"v": 1, "cmd": "status"})
assert r["ok"] is True, r
assert [w["id"] for w in r["windows"]] == [id1], r["windows"]
assert r["windows"][0]["meta"] == {"commit": "abc123", "workload": "llama-8b-bs4"}, r
print("errors ok")
EOF

# ---- the CLI, once it can mark ----
if [ -x "$CLIENT" ] && "$CLIENT" --help 2>&1 | grep -q 'mark begin'; then
	"$CLIENT" -c "$T/spyremond.yaml" mark begin --tag cli-run --meta commit=abc \
		>"$T/cli.out" 2>&1 || fail "spyremon mark begin failed: $(cat "$T/cli.out")"
	[ "$(q "SELECT count(*) FROM windows WHERE tag = 'cli-run' AND end_ns IS NULL")" = 1 ] ||
		fail "spyremon mark begin left no open window in the database"
	"$CLIENT" -c "$T/spyremond.yaml" mark end --tag cli-run >"$T/cli.out" 2>&1 ||
		fail "spyremon mark end failed: $(cat "$T/cli.out")"
	[ "$(q "SELECT count(*) FROM windows WHERE tag = 'cli-run' AND end_ns IS NOT NULL")" = 1 ] ||
		fail "spyremon mark end did not end the window"
	if "$CLIENT" -c "$T/spyremond.yaml" mark end --tag cli-run >"$T/cli.out" 2>&1; then
		fail "spyremon mark end of a closed window exited 0"
	fi
	echo "CLI ok"
else
	echo "the spyremon CLI cannot mark yet; only the raw client was used"
fi

# ---- a second daemon never takes the socket ----
# (bounded: one that wrongly takes the socket would run on)
rc=0
timeout -s KILL 20 "$DAEMON" -c "$T/spyremond.yaml" 2>"$T/second.err" || rc=$?
[ $rc -eq 5 ] || fail "a second daemon exited $rc, not 5: $(cat "$T/second.err")"
grep -q "another daemon is listening" "$T/second.err" ||
	fail "the second daemon did not say why: $(cat "$T/second.err")"
daemon_answers || fail "the first daemon stopped answering after a second one tried"

# ---- an open window survives a restart ----
stop_daemon
[ ! -e "$SOCK" ] || fail "the socket is left behind after a clean stop"
start_daemon
wait_for 20 daemon_answers || fail "the restarted daemon does not answer"
python3 "$ROOT/tests/integration/ctlclient.py" "$SOCK" \
	"{\"v\":1,\"cmd\":\"end\",\"id\":$ID1}" >"$T/end.out" ||
	fail "ending window $ID1 after a restart: $(cat "$T/end.out")"
grep -q "\"begin_ns\": $BEGIN1" "$T/end.out" || fail "end reply: $(cat "$T/end.out")"
[ "$(q "SELECT end_ns > begin_ns AND auto_closed = 0 FROM windows WHERE id = $ID1")" = 1 ] ||
	fail "window $ID1 not ended in the database"

# ---- a stale socket (after SIGKILL) is replaced ----
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null || true
DPID=
[ -S "$SOCK" ] || fail "no socket left after SIGKILL, nothing to test"

# ---- a window open past max_open at start-up is closed then ----
NOW=$(date +%s%N)
OLD_BEGIN=$((NOW - 2 * 86400 * 1000000000))
sqlite3 "$DB" "INSERT INTO windows (tag, uid, pid, begin_ns) VALUES ('forgotten', 4242, 1, $OLD_BEGIN)"
OLD_ID=$(q "SELECT id FROM windows WHERE tag = 'forgotten'")
start_daemon
wait_for 20 daemon_answers || fail "the daemon does not answer after a stale socket"
log_has "removed the stale socket" || fail "no notice of the stale socket"
[ "$(q "SELECT end_ns - begin_ns FROM windows WHERE id = $OLD_ID")" = 86400000000000 ] ||
	fail "forgotten window: end - begin = $(q "SELECT end_ns - begin_ns FROM windows WHERE id = $OLD_ID"), not 24h"
[ "$(q "SELECT auto_closed FROM windows WHERE id = $OLD_ID")" = 1 ] ||
	fail "forgotten window not flagged auto_closed"
log_has "window $OLD_ID 'forgotten' of uid 4242 closed automatically" ||
	fail "no notice of the automatic close"
stop_daemon

# ---- a socket path that is no socket is left alone ----
echo precious >"$SOCK"
rc=0
timeout -s KILL 20 "$DAEMON" -c "$T/spyremond.yaml" 2>"$T/file.err" || rc=$?
[ $rc -eq 5 ] || fail "a regular file at the socket path: exit $rc, not 5"
[ "$(cat "$SOCK")" = precious ] || fail "the file at the socket path was changed"
echo "ok"
