#!/usr/bin/env bash
# status counts the cards it lists: on a host whose sysfs shows no Spyre
# card (the simulator on a machine without one), aiu-smi's 2 devices are
# 2 cards, not 0, and the line says the PCI inventory lacks them; -v
# names the inventory's section as sysfs's.
source "$(dirname "$0")/lib.sh"

SPY="$CLIENT -c $T/spyremond.yaml"
write_config 2 100ms
rm -rf "$T"/sys/bus/pci/devices/0000:1*	# the unrelated device stays
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
both_named() { $SPY status 2>/dev/null | grep -Eq '^1 +0000:14:00.0 '; }
wait_for 30 both_named || fail "status does not list device 1: $($SPY status)"
$SPY status >"$T/status.txt" || fail "status failed"
$SPY status -v >"$T/status-v.txt" || fail "status -v failed"
cat "$T/status.txt"

listed=$(grep -Ec '^[0-9-]+ +[0-9a-f]{4}:' "$T/status.txt" || true)
[ "$listed" = 2 ] || fail "status lists $listed cards, not 2"
line=$(grep '^cards:' "$T/status.txt")
[[ "$line" =~ ^cards:\ +([0-9]+) ]] || fail "no card count: $line"
[ "${BASH_REMATCH[1]}" = "$listed" ] ||
	fail "status counts ${BASH_REMATCH[1]} cards and lists $listed: $line"
[[ "$line" == *"(2 named by aiu-smi, not found in sysfs)"* ]] ||
	fail "the cards line does not say sysfs lacks them: $line"
grep -q '^cards in sysfs: none$' "$T/status-v.txt" ||
	fail "status -v does not name the inventory as sysfs's: $(grep -i cards "$T/status-v.txt")"
stop_daemon
echo "ok: status counts the 2 cards it lists"
