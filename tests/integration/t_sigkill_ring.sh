# SIGKILL the daemon 12 times in ring mode, the default shape of a config:
# rows stored every 100 ms (interval) while the child samples every 10 ms
# (window_interval) into the pre_window ring, with a window open at the
# 4th to the 9th kill (opened again after each restart: the restart ends
# the one the kill left open, at its last stored sample) and ended before
# the 10th.  Each time the database opens with integrity_check ok and the
# child dies with the daemon.  At the end (sigkill_ring.py), per card:
# every row stored more than one flush interval before a kill is there,
# stored rows never overlap (a ring flushed twice, or a coarse row beside
# the fine rows that replaced it, would), rows follow each other at their
# interval except across a kill, each window killed open ended at the last
# row stored before its kill, and rows inside the windows are at 10 ms.
source "$(dirname "$0")/lib.sh"

FLUSH=200ms
write_config 4 100ms
sed -i 's/^  window_interval: .*/  window_interval: 10ms\n  pre_window: 1s/' \
	"$T/spyremond.yaml"
grep -q 'pre_window: 1s' "$T/spyremond.yaml" || fail "config not in ring mode"
flush_ns=200000000

daemon_answers() {
	python3 "$ROOT/tests/integration/ctlclient.py" "$T/control.sock" \
		'{"v":1,"cmd":"hello"}' >/dev/null 2>&1
}
ring_ended() {
	[ "$(sqlite3 "file:$DB?mode=ro" "SELECT count(*) FROM windows WHERE tag = 'ring' AND end_ns IS NULL")" = 0 ]
}
# ctl JSON: one request, which must succeed; its reply in REPLY
ctl() {
	REPLY=$(python3 "$ROOT/tests/integration/ctlclient.py" "$T/control.sock" "$1") ||
		fail "request $1: $REPLY"
}

kills=()
prev=0
SCALE=$(time_scale)
for i in $(seq 1 12); do
	start_daemon
	wait_for 20 daemon_answers || fail "run $i: the control socket does not answer"
	wait_for 20 rows_at_least $((prev + 1)) || fail "run $i: no new row"
	if [ "$i" -gt 4 ] && [ "$i" -le 10 ]; then
		# the kill left the window open; the restart ended it
		wait_for 20 ring_ended ||
			fail "run $i: the window the kill left open is open after the restart"
	fi
	if [ "$i" -ge 4 ] && [ "$i" -le 10 ]; then
		ctl '{"v":1,"cmd":"begin","tag":"ring"}'
	fi
	if [ "$i" -eq 10 ]; then
		sleep 0.5
		ctl '{"v":1,"cmd":"end","tag":"ring"}'
		END=$(printf '%s' "$REPLY" | python3 -c 'import json,sys; print(json.load(sys.stdin)["end_ns"])')
	fi
	# 0.4 to 0.8 s of a run, longer as the bounds stretch (time_scale):
	# sigkill_ring.py looks inside each window from 200 ms x scale after
	# its begin to as long before its end, and windows end at a kill now
	d=$(( (RANDOM % 5 + 4) * SCALE ))
	sleep "$((d / 10)).$((d % 10))"
	sigkill_daemon "$i"
	kill_ns=$KILL_NS
	[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] ||
		fail "run $i: integrity_check failed"
	prev=$(rows_in_db)
	kills+=("$kill_ns")
done
python3 "$ROOT/tests/integration/sigkill_ring.py" "$DB" --flush-ns $flush_ns \
	--coarse-ms 100 --fine-ms 10 --end "$END" --scale "$(time_scale)" \
	"${kills[@]}" ||
	fail "the stored series after 12 kills: see above"
exit 0
