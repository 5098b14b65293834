# 4 cards every 10 ms for several seconds: every row the simulator wrote is
# stored exactly once, stamps increase per card, and a clean stop loses
# nothing that was received.
source "$(dirname "$0")/lib.sh"

write_config 4 10ms --workload cycle
start_daemon
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
sleep 5
stop_daemon

python3 "$ROOT/tests/integration/compare.py" "$DB" "$STAMPS" --min-rows 1200

# every card got rows, and the card inventory and device map were recorded
sqlite3 "$DB" 'SELECT count(DISTINCT device) FROM samples' | grep -qx 4 ||
	fail "not all 4 devices stored"
sqlite3 "$DB" 'SELECT count(*) FROM cards' | grep -qx 4 ||
	fail "card inventory not recorded"
sqlite3 "$DB" "SELECT bus_id FROM device_map WHERE device = 1" |
	grep -qx '0000:14:00.0' || fail "device map not recorded"
sqlite3 "$DB" 'PRAGMA integrity_check' | grep -qx ok || fail "integrity_check"
# rows say which interval they cover
sqlite3 "$DB" 'SELECT DISTINCT interval_ms FROM samples' | grep -qx 10 ||
	fail "interval_ms is not 10"
# aiu-smi's own clock agrees with our stamps to within a second or two
sqlite3 "$DB" 'SELECT max(abs(smi_skew_s)) FROM samples' |
	awk '{ exit !($1 <= 2) }' || fail "smi_skew_s too large"
log_has "rejected" && fail "clean stream had rejected lines"
exit 0
