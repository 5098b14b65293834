#!/usr/bin/env bash
# "make run" and "make stop" as a new user meets them: mk/run.sh starts
# spyremond from the build tree on the simulator with conf/run.yaml, in a
# folder of the user's own; each client line it prints works as printed
# (run here in a copy of the tree's top, so that a daemon the user started
# in the tree is left alone); a second start says it runs; stop ends it and
# keeps the database; a config that cannot start fails with the log.
source "$(dirname "$0")/lib.sh"

W=$T/tree
mkdir -p "$W/conf"
ln -s "$ROOT/mk" "$W/mk"
ln -s "$BIN" "$W/build"
cp "$ROOT/conf/run.yaml" "$W/conf/"
cd "$W"

sh mk/run.sh start >"$T/start.out" 2>&1 || { cat "$T/start.out"; fail "mk/run.sh start failed"; }
cat "$T/start.out"
pid=$(cat run/spyremond.pid)
[ "$(cat /proc/"$pid"/comm)" = spyremond ] || fail "run/spyremond.pid names no spyremond"
DPID=$pid	# lib.sh's cleanup kills it if the test fails

# the lines it printed, run as printed
lines=$(grep '^  build/spyremon -c conf/run.yaml ' "$T/start.out" | sed 's/ *#.*//')
[ "$(wc -l <<<"$lines")" -ge 6 ] || fail "fewer than 6 client lines printed"
# status names the simulator once its answer to -v is in (the daemon asks
# as aiu-smi starts): wait for that too, as for the cards
run_status_ready() {
	local st
	st=$(build/spyremon -c conf/run.yaml status 2>/dev/null) &&
		grep -q "^cards: *2" <<<"$st" && grep -q "aiu-smi-sim" <<<"$st"
}
wait_for 10 run_status_ready ||
	fail "status never showed the 2 cards and the simulator: $(build/spyremon -c conf/run.yaml status 2>&1)"
while read -r line; do
	out=$(eval "$line" 2>&1) || fail "printed line failed: $line: $out"
	echo "\$ $line"; echo "$out" | head -n 5
	case $line in
	*" status") grep -q "aiu-smi-sim" <<<"$out" || fail "status does not name the simulator" ;;
	*" windows") grep -q "try" <<<"$out" || fail "windows does not list window try" ;;
	*"summary --window try") grep -q "all cards: energy" <<<"$out" || fail "summary has no energy" ;;
	esac
done <<<"$lines"
[ "$(wc -l <run/try.csv)" -ge 2 ] || fail "export wrote no rows to run/try.csv"

sh mk/run.sh start >"$T/again.out" 2>&1 || fail "a second start failed"
grep -q "already runs" "$T/again.out" || fail "a second start did not say it runs"
[ "$(cat run/spyremond.pid)" = "$pid" ] || fail "a second start started another daemon"

sh mk/run.sh stop || fail "mk/run.sh stop failed"
process_gone "$pid" || fail "spyremond $pid still runs after stop"
[ -s run/spyremon.db ] || fail "stop lost the database"
[ ! -e run/spyremond.pid ] || fail "stop left the pid file"
sh mk/run.sh stop | grep -q "not running" || fail "stop of a stopped daemon did not say so"

# a database it cannot write: start fails, saying why, and leaves no pid file
rm -rf run/spyremon.db* && mkdir run/spyremon.db
if sh mk/run.sh start >"$T/bad.out" 2>&1; then fail "start on an unusable database exited 0"; fi
grep -q "did not start" "$T/bad.out" || fail "a failed start did not say so: $(cat "$T/bad.out")"
[ ! -e run/spyremond.pid ] || fail "a failed start left a pid file"
echo "PASS: make run starts, its lines work, stop stops"
