#!/usr/bin/env bash
# Hysteresis of aiu-smi's rate switch.  The simulator as its own writer
# (every card's file in the new format, default pre_window): when every
# card is read directly aiu-smi is restarted at source.interval once (the
# rate status shows), and its restart re-creating the files starts no loop.  Then card 1's file
# flips between the old and the new format every 3 s: aiu-smi is not
# restarted at the flips (at most once a minute, spyremond(8)).
source "$(dirname "$0")/lib.sh"

need python3
SPY="$CLIENT -c $T/spyremond.yaml"
restarts() { $SPY status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["child"]["restarts"])'; }

write_config 2 1s --write-metric-files --metric-format new
sed -i 's/^  window_interval: .*/  window_interval: 100ms/' "$T/spyremond.yaml"
FLUSH=200ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket"
F=$T/metrics.0000:14:00.0
wait_for 20 test -s "$F" || fail "no metric file $F"
sleep 6		# the switch to every card read directly, and what follows
r=$(restarts)
[ "$r" -le 1 ] || fail "aiu-smi restarted $r times in 6 s with every card read directly: $(grep -c 'stopping aiu-smi' "$DLOG") stops logged"
log_has "every card's metric file is read directly" || fail "every card is not read directly"
# the change of coverage reached the source's rates: aiu-smi now samples at
# source.interval (1s), not at window_interval as the ring would have it
ci=$($SPY status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["sampling"]["child_interval_ns"])')
[ "$ci" = 1000000000 ] || fail "aiu-smi samples every ${ci} ns with every card read directly; source.interval is 1s"

# card 1's file flips between the old and the new format
cp "$F" "$T/new.bin"
cp "$F" "$T/old.bin"
printf '\0\0\0\0' | dd of="$T/old.bin" bs=1 seek=0 count=4 conv=notrunc 2>/dev/null
for i in 1 2 3; do
	cp "$T/old.bin" "$F.tmp" && mv -f "$F.tmp" "$F"
	sleep 3
	cp "$T/new.bin" "$F.tmp" && mv -f "$F.tmp" "$F"
	sleep 3
done
r2=$(restarts)
log_has "metric file $F is in the old format" || fail "the flips were not seen"
[ "$r2" -le 1 ] || fail "aiu-smi restarted $r2 times over 6 flips (before them: $r)"
stop_daemon
echo "ok"
