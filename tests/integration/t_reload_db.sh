#!/usr/bin/env bash
# A reload (SIGHUP) whose config names another database: the daemon keeps
# writing the one it opened, and status says so: database.path is the
# file it writes, database.path_after_restart the new one, and both the
# short and the -v status say a restart is needed; the next reload warns
# about the right files; naming the running file again clears it.
source "$(dirname "$0")/lib.sh"

need python3
SPY="$CLIENT -c $T/spyremond.yaml --socket $T/control.sock"
dbpaths() { $SPY status --json | python3 -c 'import json,sys; d=json.load(sys.stdin)["database"]; print(d["path"], d["path_after_restart"])'; }
reloads() { grep -c '^spyremond: reloaded$' "$DLOG" || true; }
# wait_for runs its command again each try: the count is taken there, not
# once when wait_for is called (which raced the daemon's reload)
reloads_above() { [ "$(reloads)" -gt "$1" ]; }
reload() {
	local n
	n=$(reloads)
	kill -HUP "$DPID"
	wait_for 10 reloads_above "$n" || fail "no reload"
}

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket"
wait_for 20 rows_at_least 10 || fail "no rows"
[ "$(dbpaths)" = "$DB None" ] || fail "status before the reload: $(dbpaths)"

sed -i "s|^database: .*|database: $T/other.db|" "$T/spyremond.yaml"
reload
[ "$(dbpaths)" = "$DB $T/other.db" ] || fail "status after the reload names $(dbpaths), not $DB and $T/other.db"
$SPY status | grep -q "the configuration now names $T/other.db: a restart is needed" ||
	fail "status does not say a restart is needed: $($SPY status)"
$SPY status -v | grep -q "^database:   $DB" || fail "status -v does not name $DB"
$SPY status -v | grep -q "names $T/other.db: it is written only after a restart" ||
	fail "status -v does not say a restart is needed"
n=$(rows_in_db)
wait_for 10 rows_at_least $((n + 10)) || fail "no more rows in $DB after the reload"
[ ! -e "$T/other.db" ] || fail "$T/other.db was created by a reload"

# the next reload compares with the file really written
reload
log_has "database: the new path $T/other.db takes effect only on restart; still writing $DB" ||
	fail "the second reload does not warn about the right files: $(grep 'database:' "$DLOG")"
! log_has "still writing $T/other.db" || fail "a reload claims to write $T/other.db"

sed -i "s|^database: .*|database: $DB|" "$T/spyremond.yaml"
reload
[ "$(dbpaths)" = "$DB None" ] || fail "status after naming $DB again: $(dbpaths)"
stop_daemon
echo "ok"
