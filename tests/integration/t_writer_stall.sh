# The event loop never waits on the disk, and a mark the client gave up on
# (the daemon stopped with SIGSTOP past the client's timeout) never takes
# effect after SIGCONT.  While another process holds the
# database's write lock (BEGIN EXCLUSIVE) for 10 s, the daemon collects 8
# cards every 10 ms and answers 50 mark begin/end pairs:
#  - every mark answers within 50 ms, and every window answered is stored
#    exactly as answered once the lock is gone, no other;
#  - status says the writer is stalled, and why (locked);
#  - rows are still stamped at once: stamping latency p99 during the lock
#    is at most 5 ms, and no card has a gap over two intervals (on a
#    machine so loaded that the 10 s before the lock already miss these,
#    at most three times what those 10 s show, or the p99 their slowest
#    row: the lock must add nothing, and a stall behind it is seconds);
#    against an ASan build every time bound is 4 times as long (time_scale);
#  - after the lock every queued row is stored (compare.py: every row the
#    simulator wrote, once).
source "$(dirname "$0")/lib.sh"

daemon_answers() {
	python3 "$ROOT/tests/integration/ctlclient.py" "$T/control.sock" \
		'{"v":1,"cmd":"hello"}' >/dev/null 2>&1
}

SCALE=$(time_scale)	# 4 under ASan: the bounds below are the release build's
export SCALE
start_loaded_daemon

PYTHONPATH=$ROOT/tests/integration python3 - "$DB" "$T/control.sock" \
	"$T/marks" "$T/span" <<'PY' || fail "marks during the lock: see above"
import json, os, sqlite3, sys, threading, time
from ctlclient import Conn

db, sock, marks_path, span_path = sys.argv[1:5]
held = threading.Event()
done = threading.Event()

def hold():
    c = sqlite3.connect(db, timeout=10, isolation_level=None)
    c.execute("BEGIN EXCLUSIVE")
    c.execute("SELECT count(*) FROM samples").fetchone()
    t0 = time.time_ns()
    held.set()
    time.sleep(10)
    t1 = time.time_ns()
    c.execute("COMMIT")
    c.close()
    with open(span_path, "w") as f:
        f.write("%d %d\n" % (t0, t1))
    done.set()

th = threading.Thread(target=hold)
th.start()
held.wait()
time.sleep(1)           # the writer has tried and failed by now
c = Conn(sock)
worst = 0
marks = []
for i in range(50):
    for cmd in ("begin", "end"):
        t = time.monotonic_ns()
        r = c.ask({"v": 1, "cmd": cmd, "tag": "stall-%d" % i})
        rtt = time.monotonic_ns() - t
        worst = max(worst, rtt)
        if r.get("ok") is not True:
            sys.exit("%s %d refused: %s" % (cmd, i, r))
        if rtt > 50_000_000 * int(os.environ["SCALE"]):
            sys.exit("%s %d took %.1f ms" % (cmd, i, rtt / 1e6))
        if cmd == "end":
            marks.append((r["id"], r["tag"], r["begin_ns"], r["end_ns"]))
    time.sleep(0.1)
st = c.ask({"v": 1, "cmd": "status"})["database"]
if done.is_set():
    sys.exit("the marks outlasted the lock")
w = st["writer"]
print("status during the lock: writer %s for %.1f s: %s; %d changes queued, "
      "%d rows pending" % (w["state"], w["stalled_ns"] / 1e9, w["why"],
      w["queued_changes"], st["pending"]))
if w["state"] != "stalled" or "locked" not in (w["why"] or ""):
    sys.exit("status does not say the writer is stalled on the lock: %s" % w)
if w["queued_changes"] < 1:
    sys.exit("no window change is queued during the lock")
print("100 marks during the lock, slowest %.2f ms" % (worst / 1e6))
with open(marks_path, "w") as f:
    json.dump(marks, f)
th.join()
PY
read -r LOCK0 LOCK1 <"$T/span"
# after the lock: the windows reach the database, as answered
PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "window changes still queued after the lock"
python3 - "$DB" "$T/marks" <<'PY' || fail "windows after the lock: see above"
import json, sqlite3, sys
marks = sorted(tuple(m) for m in json.load(open(sys.argv[2])))
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
got = sorted(db.execute("SELECT id, tag, begin_ns, end_ns FROM windows"))
if got != marks:
    sys.exit("windows stored %s, answered %s" % (got[:3], marks[:3]))
print("all 50 windows stored as answered, and no other")
PY
sleep 1
stop_daemon
python3 "$ROOT/tests/integration/compare.py" "$DB" "$STAMPS" --min-rows 8000 \
	--p99-between "$LOCK0:$LOCK1" --max-p99-us $((5000 * SCALE)) --max-gap-ns $((20000000 * SCALE)) \
	--baseline "$BASE" ||
	fail "rows during and after the lock: see above"
log_has "database is locked" || fail "the failed writes were not logged"

# rows read late after a SIGSTOP are not the point here: a daemon of its own
start_daemon
wait_for 20 daemon_answers || fail "the control socket does not answer"
# a mark the client gave up on (the daemon stopped for 6 s) never happens
kill -STOP "$DPID"
rc=0
"$CLIENT" -c "$T/spyremond.yaml" mark begin --tag ghost >"$T/ghost" 2>&1 || rc=$?
sleep 1
kill -CONT "$DPID"
[ $rc -eq 3 ] || fail "mark begin with the daemon stopped exited $rc: $(cat "$T/ghost")"
PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "window changes still queued"
[ "$(sqlite3 -readonly "file:$DB?mode=ro" "SELECT count(*) FROM windows WHERE tag = 'ghost'")" = 0 ] ||
	fail "a window the client gave up on was created later"
wait_for 5 log_has "expired before it was read" || fail "the expired request was not logged"
echo "ok: a mark begin the client gave up on had no effect"

stop_daemon
exit 0
