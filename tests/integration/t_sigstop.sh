#!/usr/bin/env bash
# The daemon and its aiu-smi stopped (SIGSTOP, as a frozen service is)
# for 6 s, longer than the child's silence limit of 5 s, then continued:
# the healthy aiu-smi is not killed as silent (the daemon's own stop is
# not the child's silence), the same child keeps running and rows are
# stored again.
source "$(dirname "$0")/lib.sh"

need python3
SPY="$CLIENT -c $T/spyremond.yaml"
child() { $SPY status --json | python3 -c 'import json,sys; c=json.load(sys.stdin)["child"]; print(c["pid"], c["restarts"])'; }

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket"
wait_for 20 rows_at_least 20 || fail "no rows"
before=$(child)
cpid=${before% *}
kill -STOP "$DPID" "$cpid"
sleep 6
kill -CONT "$cpid"
kill -CONT "$DPID"
# long enough for a silence check after the stop to have run (every 1 s)
sleep 3
after=$(child)
[ "$before" = "$after" ] ||
	fail "aiu-smi was restarted across a stop of the daemon: pid and restarts $before, then $after; $(grep -i silent "$DLOG")"
! log_has "printed no row" || fail "the child was found silent: $(grep -i 'no row' "$DLOG")"
n=$(rows_in_db)
wait_for 10 rows_at_least $((n + 10)) || fail "no rows after the stop"
stop_daemon
echo "ok"
