#!/usr/bin/env bash
# Who may use the control socket, and who a mark is recorded for.  As
# root: the daemon, started by root, gives its socket mode 0660 and group
# spyremon (created for the test if missing, and removed again).  User
# nobody outside the group cannot connect (EACCES), and the CLI says which
# socket and which group; nobody in the group can, and the database records
# uid 65534 and the pid of the very process that connected.  A user cannot
# end another's window; root can.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

GROUP=spyremon
PY=/usr/bin/python3	# not a per-user shim: it runs as nobody too
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root, to run clients as another user"
	exit 77
fi
for tool in setpriv groupadd groupdel; do
	command -v $tool >/dev/null || { echo "SKIP: no $tool"; exit 77; }
done
[ -x "$PY" ] || { echo "SKIP: no $PY"; exit 77; }
getent passwd nobody >/dev/null && getent group nogroup >/dev/null ||
	{ echo "SKIP: no user nobody or group nogroup"; exit 77; }
[ -x "$DAEMON" ] || fail "no $DAEMON; build it first"

CREATED_GROUP=
remove_group() {
	if [ -n "$CREATED_GROUP" ]; then
		groupdel "$GROUP" 2>/dev/null || true
	fi
}
# errexit off in the trap, or "(exit $rc)" would end it before cleanup
trap 'rc=$?; set +e; remove_group; (exit $rc); cleanup' EXIT
if ! getent group "$GROUP" >/dev/null; then
	groupadd "$GROUP"
	CREATED_GROUP=1
fi
NOBODY_UID=$(id -u nobody)

# nobody must reach the socket's directory; the socket itself decides
chmod 0711 "$T"
mkdir -m 0755 "$T/run"
SOCK=$T/run/control.sock
write_config 2 100ms
sed -i "s|^socket: .*|socket: $SOCK|" "$T/spyremond.yaml"
chmod 0644 "$T/spyremond.yaml"
export PYTHONPATH=$ROOT/tests/integration

as_nobody() {
	setpriv --reuid nobody --regid nogroup --clear-groups -- "$@"
}
as_member() {
	setpriv --reuid nobody --regid nogroup --groups "$GROUP" -- "$@"
}
daemon_answers() {
	"$PY" "$ROOT/tests/integration/ctlclient.py" "$SOCK" \
		'{"v":1,"cmd":"hello"}' >/dev/null 2>&1
}
# the database, once the daemon has stored what it answered (a sync)
q() {
	PYTHONPATH=$ROOT/tests/integration "$PY" \
		"$ROOT/tests/integration/sync.py" "$SOCK" >&2 || true
	sqlite3 -readonly "file:$DB?mode=ro" "$1"
}

start_daemon
wait_for 20 daemon_answers || fail "the daemon does not answer on $SOCK"
[ "$(stat -c '%a %U %G' "$SOCK")" = "660 root $GROUP" ] ||
	fail "socket is $(stat -c '%a %U %G' "$SOCK"), not 660 root $GROUP"

# ---- outside the group: no connection at all ----
as_nobody "$PY" - "$SOCK" <<'EOF' || fail "nobody outside the group: see above"
import errno, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as e:
    if e.errno != errno.EACCES:
        sys.exit("connect failed with %s, not EACCES" % e)
    print("ok: nobody outside the group: %s" % e.strerror)
else:
    sys.exit("nobody outside the group could connect")
EOF
if [ -x "$CLIENT" ] && "$CLIENT" --help 2>&1 | grep -q 'mark begin'; then
	rc=0
	as_nobody "$CLIENT" -c "$T/spyremond.yaml" mark begin --tag denied \
		>"$T/cli.out" 2>&1 || rc=$?
	[ $rc -ne 0 ] || fail "spyremon mark begin outside the group exited 0"
	grep -q -- "$SOCK" "$T/cli.out" && grep -q -- "$GROUP" "$T/cli.out" ||
		fail "the CLI's error names neither the socket nor the group: $(cat "$T/cli.out")"
	echo "ok: the CLI outside the group (exit $rc): $(head -n 1 "$T/cli.out")"
	HAVE_CLI=1
else
	echo "the spyremon CLI cannot mark yet; only the raw client was used"
	HAVE_CLI=
fi

# ---- in the group: marks recorded for uid 65534 and the caller's pid ----
as_member "$PY" - "$SOCK" >"$T/member" <<'EOF' || fail "nobody in the group: see above"
import os, sys
from ctlclient import Conn
r = Conn(sys.argv[1]).ask({"v": 1, "cmd": "begin", "tag": "nobodys"})
if r.get("ok") is not True:
    sys.exit("begin as a member failed: %s" % r)
print("%d %d %d" % (r["id"], os.getuid(), os.getpid()))
EOF
read -r ID UID_SEEN PID_SEEN <"$T/member"
echo "ok: a member of the group opened window $ID"
[ "$UID_SEEN" -eq "$NOBODY_UID" ] || fail "the client ran as uid $UID_SEEN"
[ "$(q "SELECT uid FROM windows WHERE id = $ID")" = "$NOBODY_UID" ] ||
	fail "window $ID recorded for uid $(q "SELECT uid FROM windows WHERE id = $ID")"
[ "$(q "SELECT pid FROM windows WHERE id = $ID")" = "$PID_SEEN" ] ||
	fail "window $ID recorded for pid $(q "SELECT pid FROM windows WHERE id = $ID"), not $PID_SEEN"

if [ -n "$HAVE_CLI" ]; then
	# exec keeps the pid: the one written is the CLI's
	sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$T/cli.pid" \
		setpriv --reuid nobody --regid nogroup --groups "$GROUP" -- \
		"$CLIENT" -c "$T/spyremond.yaml" mark begin --tag cli-member \
		>"$T/cli.out" 2>&1 || fail "spyremon mark begin as a member: $(cat "$T/cli.out")"
	[ "$(q "SELECT uid || ' ' || pid FROM windows WHERE tag = 'cli-member'")" = \
	    "$NOBODY_UID $(cat "$T/cli.pid")" ] ||
		fail "the CLI's window recorded as $(q "SELECT uid, pid FROM windows WHERE tag = 'cli-member'"), pid was $(cat "$T/cli.pid")"
	echo "ok: the CLI as a member, recorded for uid $NOBODY_UID pid $(cat "$T/cli.pid")"
fi

# ---- someone else's window: only its owner or root ends it ----
ROOTS=$("$PY" - "$SOCK" <<'EOF'
import sys
from ctlclient import Conn
print(Conn(sys.argv[1]).ask({"v": 1, "cmd": "begin", "tag": "roots"})["id"])
EOF
)
as_member "$PY" - "$SOCK" "$ROOTS" <<'EOF' || fail "ending root's window as nobody: see above"
import sys
from ctlclient import Conn
r = Conn(sys.argv[1]).ask({"v": 1, "cmd": "end", "id": int(sys.argv[2])})
if r.get("error") != "not_owner":
    sys.exit("ending root's window as nobody: %s" % r)
print("ok: nobody cannot end root's window: %s" % r["message"])
EOF
[ "$(q "SELECT end_ns IS NULL FROM windows WHERE id = $ROOTS")" = 1 ] ||
	fail "root's window was ended by nobody"
"$PY" "$ROOT/tests/integration/ctlclient.py" "$SOCK" \
	"{\"v\":1,\"cmd\":\"end\",\"id\":$ID}" >/dev/null ||
	fail "root could not end nobody's window $ID"
[ "$(q "SELECT end_ns IS NOT NULL FROM windows WHERE id = $ID")" = 1 ] ||
	fail "nobody's window $ID is still open after root ended it"
# ---- one member's idle connections do not lock out the others ----
# nobody holds 20: 16 are served, 4 refused as busy for its uid; meanwhile
# another member (uid 4242) and root still get in.
as_member "$PY" - "$SOCK" >"$T/hold" <<'EOF' &
import sys, time
from ctlclient import Conn
held, busy = [], 0
for i in range(20):
    c = Conn(sys.argv[1])
    try:
        c.send({"v": 1, "cmd": "hello"})
    except OSError:
        pass    # refused at once: the reply is waiting
    r = c.reply()
    if r.get("ok") is True:
        held.append(c)
    elif r.get("error") == "busy" and "your uid" in r.get("message", ""):
        busy += 1
    else:
        sys.exit("connection %d: %s" % (i, r))
print(len(held), busy, flush=True)
time.sleep(3)
EOF
HOLDER=$!
wait_for 5 test -s "$T/hold" || fail "the member holding connections did not report"
[ "$(cat "$T/hold")" = "16 4" ] || fail "one uid held $(cat "$T/hold") (served, refused), not 16 4"
setpriv --reuid 4242 --regid nogroup --groups "$GROUP" -- "$PY" \
	"$ROOT/tests/integration/ctlclient.py" "$SOCK" '{"v":1,"cmd":"hello"}' \
	>/dev/null || fail "another member was locked out by nobody's connections"
daemon_answers || fail "root was locked out by nobody's connections"
wait "$HOLDER" || fail "the member holding connections failed"
echo "ok: 16 connections per uid; another member and root still served"

stop_daemon
echo "ok"
