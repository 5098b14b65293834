# A child that crashes, hangs, and prints garbage: the daemon survives,
# restarts it with back-off, and stores no bad row.
source "$(dirname "$0")/lib.sh"

# exits after 40 rows: restarts after 1s, then 2s (back-off doubles)
write_config 2 50ms --exit-after 40 --garbage-every 7 --missing-column-every 11 \
	--overlong-every 13 --split-rows --stderr-every 9
start_daemon
wait_for 30 log_has "restarting in 2s" || fail "no second restart with 2s back-off"
log_has "restarting in 1s" || fail "first restart not after 1s"
log_has "exited with status 0" || fail "child exit status not logged"
log_has "rejected" || fail "garbage lines were not reported"
log_has "aiu-smi\[[0-9]*\]: " || fail "child stderr not logged"
kill -0 "$DPID" || fail "daemon died"
stop_daemon
python3 "$ROOT/tests/integration/compare.py" "$DB" "$STAMPS" --min-rows 80

# a hanging child is killed after 10 intervals (at least 5s) and restarted
rm -f "$DB" "$DB-wal" "$DB-shm" "$STAMPS"
: >"$DLOG"
write_config 2 100ms --hang-after 10 --header-change-after 6
start_daemon
wait_for 30 log_has "printed no row for" || fail "hung child not detected"
wait_for 10 log_has "started .* (pid" || fail "no restart logged"
[ "$(grep -c 'started .* (pid' "$DLOG")" -ge 2 ] ||
	wait_for 10 bash -c "[ \$(grep -c 'started .* (pid' '$DLOG') -ge 2 ]" ||
	fail "hung child not restarted"
stop_daemon
python3 "$ROOT/tests/integration/compare.py" "$DB" "$STAMPS" --min-rows 10
# the changed header added its new key to the catalog
sqlite3 "$DB" "SELECT count(*) FROM metrics WHERE key = 'hbmtemp'" | grep -qx 1 ||
	fail "new header key not added to the catalog"

# a command that cannot run is retried, not fatal
rm -f "$DB" "$DB-wal" "$DB-shm"
: >"$DLOG"
write_config 1 1s
sed -i "s|$SIM|$T/no-such-aiu-smi|" "$T/spyremond.yaml"
start_daemon
wait_for 10 log_has "cannot run $T/no-such-aiu-smi" || fail "exec failure not logged"
wait_for 10 log_has "restarting in" || fail "exec failure not retried"
kill -0 "$DPID" || fail "daemon died on a missing command"
stop_daemon
exit 0
