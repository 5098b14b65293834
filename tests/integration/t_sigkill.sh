# SIGKILL the daemon during ingestion 20 times.  Each time the database
# opens, integrity_check says ok, and no more than one flush interval of
# rows is lost.  The child dies with the daemon: none is orphaned.
source "$(dirname "$0")/lib.sh"

FLUSH=200ms
write_config 4 10ms
flush_ns=200000000
prev=0
windows=()
for i in $(seq 1 20); do
	start_daemon
	wait_for 20 rows_at_least $((prev + 1)) || fail "run $i: no new row"
	sleep 0.$((RANDOM % 5 + 3))
	sigkill_daemon "$i"
	kill_ns=$KILL_NS
	dead_ns=$(date +%s%N)
	[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] ||
		fail "run $i: integrity_check failed"
	prev=$(rows_in_db)
	# rows written more than one flush interval (plus 100 ms of scheduling
	# slack) before each kill must have been stored; rows written while the
	# kill took effect had no reader left
	windows+=(--lost-window "$((kill_ns - flush_ns - 100000000)):$dead_ns")
	python3 "$ROOT/tests/integration/compare.py" "$DB" "$STAMPS" \
		"${windows[@]}" >"$T/cmp.txt" ||
		{ cat "$T/cmp.txt"; echo "kills: ${windows[*]}"; fail "run $i: lost more than one flush interval"; }
done
tail -n 1 "$T/cmp.txt"
exit 0
