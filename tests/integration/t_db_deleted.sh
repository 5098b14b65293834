# The database deleted under the running daemon (rm spyremon.db*, with a
# window open since before a restart of the daemon) is noticed within one flush interval: the daemon logs it,
# creates the file again (mode 0640) with the open window (its clock state
# at the begin included) and the rows it
# had not written yet, says so in status, and keeps storing: every row the
# simulator wrote after the rm is in the new file, and the window ends
# there as answered.
source "$(dirname "$0")/lib.sh"

FLUSH=1s write_config 2 100ms
flush_ns=1000000000
start_daemon
ctl() {
	python3 "$ROOT/tests/integration/ctlclient.py" "$T/control.sock" "$1"
}
wait_for 20 rows_at_least 20 || fail "no rows stored"
ctl '{"v":1,"cmd":"begin","tag":"kept"}' >"$T/begin" || fail "begin: $(cat "$T/begin")"
PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "the window was not stored"
q() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }
# the window outlives a restart: the daemon reads it back at start, and a
# recreated file must get its clock state at the begin back too
CLOCK="SELECT coalesce(clock_begin_synced, 'unknown') || ' ' ||
	coalesce(clock_begin_est_us, '-') || ' ' || coalesce(clock_begin_max_us, '-')
	FROM windows WHERE tag = 'kept'"
clock_before=$(q "$CLOCK")
stop_daemon
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "the daemon did not start again"
n=$(rows_in_db)
wait_for 20 rows_at_least $((n + 10)) || fail "no rows after the restart"
sleep 0.3

# the stamp is taken as the last file is gone, in the process that removed
# them: a row flushed before that went into the deleted file, and a stamp
# taken before a separate rm (under qemu-user a slow process to start) let
# rows flushed before the removal count as written after it
rm_ns=$(python3 -c 'import os, sys, time
for path in sys.argv[1:]:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
print(time.time_ns())' "$DB" "$DB-wal" "$DB-shm")
wait_for 5 test -s "$DB" || fail "the database was not created again"
back_ns=$(date +%s%N)
echo "created again $(( (back_ns - rm_ns) / 1000000 )) ms after the rm (flush interval 1000 ms)"
# within the flush interval and scheduling slack (a timing bound: the slack
# stretches with time_scale)
[ $((back_ns - rm_ns)) -le $((flush_ns + 500000000 * $(time_scale))) ] ||
	fail "created again only $(( (back_ns - rm_ns) / 1000000 )) ms after the rm"
wait_for 5 log_has "was deleted under the daemon" || fail "the deletion was not logged"
[ "$(stat -c %a "$DB")" = 640 ] || fail "the new database has mode $(stat -c %a "$DB")"
wait_for 10 rows_at_least 20 || fail "no rows in the new database"
ctl '{"v":1,"cmd":"status"}' >"$T/status" || fail "status"
python3 - "$T/status" <<'PY' || fail "status after the deletion: see above"
import json, sys
st = json.load(open(sys.argv[1]))["database"]
if st["recreated"] != 1:
    sys.exit("status says recreated %s, not 1" % st["recreated"])
print("status: recreated %d, rows_written %d" % (st["recreated"], st["rows_written"]))
PY
[ "$(q "SELECT count(*) FROM windows WHERE tag = 'kept' AND end_ns IS NULL")" = 1 ] ||
	fail "the open window is not in the new database"
clock_after=$(q "$CLOCK")
[ "$clock_after" = "$clock_before" ] ||
	fail "the window's clock at its begin was '$clock_before', is '$clock_after' in the new database"
echo "the window's clock at its begin, kept: $clock_after"
ctl '{"v":1,"cmd":"end","tag":"kept"}' >"$T/end" || fail "end: $(cat "$T/end")"
stop_daemon
[ "$(q "SELECT count(*) FROM windows WHERE tag = 'kept' AND end_ns IS NOT NULL")" = 1 ] ||
	fail "the window's end is not in the new database"
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
# rows flushed into the deleted file are gone with it; every later one is here
python3 "$ROOT/tests/integration/compare.py" "$DB" "$STAMPS" \
	--lost-window "0:$rm_ns" --min-rows 20 || fail "rows after the rm: see above"
exit 0
