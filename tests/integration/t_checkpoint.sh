#!/usr/bin/env bash
# Scheduled checkpoints bound the write-ahead log, and status says when a
# reader blocks them.  With checkpoint_interval: 1s the daemon's log is
# copied into the database within a few seconds (status: state ok, no
# frame behind).  Then a reader holds a read transaction open (python3's
# sqlite3, BEGIN and a SELECT): status turns to blocked, in JSON and as a
# WARNING line, with how long and how big the log is, and the size grows
# while the reader holds on; once it lets go the next checkpoint copies
# everything again and the warning goes.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
SPY="$CLIENT -c $T/spyremond.yaml"
ckpt() {
	$SPY status --json | python3 -c '
import json, sys
c = json.load(sys.stdin)["database"]["checkpoint"]
print(c[sys.argv[1]])' "$1"
}
ckpt_is() { [ "$(ckpt "$1")" = "$2" ]; }
wal_size() { stat -c %s "$DB-wal" 2>/dev/null || echo 0; }

FLUSH=200ms write_config 2 100ms
echo "checkpoint_interval: 1s" >>"$T/spyremond.yaml"
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket"
wait_for 20 rows_at_least 20 || fail "no rows"

[ "$(ckpt interval_ns)" = 1000000000 ] || fail "interval: $(ckpt interval_ns)"
# a checkpoint has run and copied every frame
wait_for $((20 * $(time_scale))) ckpt_is frames_behind 0 ||
	fail "no checkpoint copied the log: $($SPY status --json)"
ckpt_is state ok || fail "blocked without a reader"

# a reader that holds its snapshot until told to let go
python3 - "$DB" "$T/release" "$T/holding" <<'PY' &
import os, sqlite3, sys, time
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True,
                     isolation_level=None)
db.execute("BEGIN")
db.execute("SELECT count(*) FROM samples").fetchone()
open(sys.argv[3], "w").close()
while not os.path.exists(sys.argv[2]):
    time.sleep(0.1)
db.execute("COMMIT")
db.close()
PY
reader=$!
wait_for 20 test -e "$T/holding" || fail "the reader did not start"
held=$(wal_size)
wait_for $((30 * $(time_scale))) ckpt_is state blocked ||
	fail "status does not say checkpoints are blocked: $($SPY status --json)"
[ "$(ckpt frames_behind)" -gt 0 ] || fail "blocked with no frame behind"
[ "$(ckpt blocked_ns)" -ge 1000000000 ] || fail "blocked for $(ckpt blocked_ns)"
# the log grows while the reader holds on, and status tells its size
wait_for 20 sh -c "[ \$(stat -c %s '$DB-wal') -gt $held ]" ||
	fail "the log did not grow past $held bytes"
size=$(ckpt wal_bytes)
[ "$size" -gt "$held" ] || fail "status says the log is $size bytes"
$SPY status >"$T/status.txt" || fail "status failed"
grep -q "^WARNING: checkpoints blocked for .* by a reader holding an old snapshot: the write-ahead log is .* and grows" "$T/status.txt" ||
	{ cat "$T/status.txt"; fail "no warning in status"; }
$SPY status -v >"$T/status-v.txt" || fail "status -v failed"
grep -q "CHECKPOINTS BLOCKED for" "$T/status-v.txt" ||
	{ cat "$T/status-v.txt"; fail "no CHECKPOINTS BLOCKED in status -v"; }
echo "blocked: $(ckpt blocked_ns) ns, $(ckpt frames_behind) frames behind, log $size bytes (was $held)"

touch "$T/release"
wait "$reader" || fail "the reader failed"
wait_for $((20 * $(time_scale))) ckpt_is state ok ||
	fail "still blocked after the reader let go"
wait_for $((20 * $(time_scale))) ckpt_is frames_behind 0 ||
	fail "frames still behind after the reader let go"
$SPY status >"$T/status.txt"
! grep -q "checkpoints blocked" "$T/status.txt" || fail "the warning stayed"
stop_daemon
exit 0
