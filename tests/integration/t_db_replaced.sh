# A file renamed onto the live database path under the running daemon.
# First a restored backup (a spyremon database, copied while a window was
# open, with a window added to it): the daemon finishes its old file's log
# against the old file, then takes the backup with all its contents (every
# row and window of it is there afterwards) and keeps writing into it.
# Then another program's SQLite database: it is left byte-for-byte as it
# was, no side file of the old database is applied to it, nothing is
# written, and status and the log say why.  Moved away again, the path is
# free: the daemon creates the database there and goes on.  A window
# begun after the restore gets an id the backup has not used.
source "$(dirname "$0")/lib.sh"

FLUSH=500ms write_config 2 100ms
start_daemon
ctl() {
	python3 "$ROOT/tests/integration/ctlclient.py" "$T/control.sock" "$1"
}
q() { sqlite3 -readonly "file:$1?mode=ro" "$2"; }
wait_for 20 rows_at_least 20 || fail "no rows stored"
ctl '{"v":1,"cmd":"begin","tag":"open"}' >"$T/begin" || fail "begin: $(cat "$T/begin")"
PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "the window was not stored"

# the backup, as an administrator would restore it: a copy of the database
# with a window of its own, so that it cannot be mistaken for a new file
sqlite3 "$DB" ".backup '$T/backup.db'"
sqlite3 "$T/backup.db" "INSERT INTO windows (tag, uid, pid, begin_ns, end_ns)
	VALUES ('from-backup', 0, 1, 1, 2)" || fail "cannot add to the backup"
cp "$T/backup.db" "$T/expected.db"
backup_rows=$(q "$T/expected.db" 'SELECT count(*) FROM samples')
# the live file gets rows the backup lacks, some in its log
n=$(rows_in_db)
wait_for 20 rows_at_least $((n + 20)) || fail "no rows after the backup"
mv "$T/backup.db" "$DB"
wait_for 10 log_has "spyremon database now at the path is used" ||
	fail "the restored backup was not taken"
n=$(rows_in_db)
wait_for 10 rows_at_least $((n + 10)) || fail "no rows written into the restored backup"
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check after the restore"
sqlite3 "$DB" "ATTACH '$T/expected.db' AS b;
	SELECT 'samples lost: ' || count(*) FROM (SELECT * FROM b.samples EXCEPT SELECT * FROM main.samples);
	SELECT 'windows lost: ' || count(*) FROM (SELECT id, tag, begin_ns FROM b.windows
		EXCEPT SELECT id, tag, begin_ns FROM main.windows);" >"$T/lost"
cat "$T/lost"
grep -qx "samples lost: 0" "$T/lost" || fail "rows of the restored backup are gone"
grep -qx "windows lost: 0" "$T/lost" || fail "windows of the restored backup are gone"
echo "restored backup kept: $backup_rows rows of it, $(rows_in_db) rows now"
# a window begun now gets an id the backup has not used
ctl '{"v":1,"cmd":"begin","tag":"after"}' >"$T/begin2" || fail "begin: $(cat "$T/begin2")"
PYTHONPATH=$ROOT/tests/integration python3 "$ROOT/tests/integration/sync.py" \
	"$T/control.sock" || fail "the window begun after the restore was not stored"
[ "$(q "$DB" "SELECT count(*) FROM windows WHERE tag = 'after'")" = 1 ] ||
	fail "the window begun after the restore is not in the database"
ctl '{"v":1,"cmd":"end","tag":"after"}' >"$T/end2" || fail "end: $(cat "$T/end2")"

# another program's database, in WAL mode like ours, renamed over it
sqlite3 "$T/foreign.db" "PRAGMA journal_mode = WAL; CREATE TABLE t (x);
	INSERT INTO t VALUES ('theirs');" >/dev/null
sum_before=$(sha256sum <"$T/foreign.db")
n=$(rows_in_db)
wait_for 20 rows_at_least $((n + 10)) || fail "no rows before the foreign file"
mv "$T/foreign.db" "$DB"
wait_for 10 log_has "now holds an SQLite database that is not spyremon's" ||
	fail "the foreign database was not refused in the log"
ctl '{"v":1,"cmd":"status"}' >"$T/status" || fail "status"
python3 - "$T/status" <<'PY' || fail "status with a foreign database: see above"
import json, sys
w = json.load(open(sys.argv[1]))["database"]["writer"]
if w["state"] != "stalled" or "not spyremon's" not in (w["why"] or ""):
    sys.exit("status says %s: %s" % (w["state"], w["why"]))
print("status: %s: %s" % (w["state"], w["why"]))
PY
# two more flush intervals: nothing may touch it
ctl '{"v":1,"cmd":"status"}' >/dev/null
sleep 1
[ "$(sha256sum <"$DB")" = "$sum_before" ] || fail "the foreign database was changed"
[ "$(q "$DB" 'SELECT x FROM t')" = theirs ] || fail "the foreign table is gone"
echo "foreign database untouched; $(grep -c "not spyremon's" "$DLOG") log line(s) about it"
[ "$(grep -c "now holds an SQLite database" "$DLOG")" = 1 ] ||
	fail "the refusal is logged more than once"

# moved away: the daemon creates the database again and goes on
mv "$DB" "$T/foreign.db"
wait_for 10 log_has "created again" || fail "not created again once the path was free"
[ "$(sha256sum <"$T/foreign.db")" = "$sum_before" ] || fail "the foreign database was changed"
wait_for 10 rows_at_least 10 || fail "no rows in the new database"
ctl '{"v":1,"cmd":"end","tag":"open"}' >"$T/end" || fail "end: $(cat "$T/end")"
stop_daemon
[ "$(sha256sum <"$T/foreign.db")" = "$sum_before" ] || fail "the foreign database was changed at the stop"
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check"
exit 0
