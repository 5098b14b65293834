#!/bin/bash
# The energy counter across steps of the host clock, and across a restart
# of the daemon after the clock went back while it was stopped: it never
# goes back, and it holds the integral of pwr over the samples stored,
# each counted once, whatever clock stamped them.
#
# The daemon and its simulator run under tests/clockshift.so (t_clockstep
# says how): back 1 h, forward 1 h, back 2 s; then the daemon stops, the
# clock goes back 2 h, and it starts again.  Before each step and at the
# end the test reads the counters table.  Checks:
#  - each card's counter never decreases;
#  - at the end it equals the sum of pwr times interval over the card's
#    stored rows, but for the rows read in the moment a step back is seen,
#    which it compares with the clock before the step (at most a few rows
#    per step: the store says so);
#  - the restart logs the step back while no daemon ran, and status
#    counts it.
source "$(dirname "$0")/lib.sh"

need python3 sqlite3
source "$(dirname "$0")/clockshift.sh"
FLUSH=100ms write_config 2 50ms
printf '  direct: off\n' >>"$T/spyremond.yaml"


energy() {
	sqlite3 -readonly "file:$DB?mode=ro" "SELECT device || ' ' || \
	    printf('%.9f', value) FROM counters WHERE name = 'energy_joules' \
	    ORDER BY device" 2>/dev/null || true
}
READINGS=$T/energy.log
read_energy() { energy | sed "s/^/$1 /" >>"$READINGS"; }
# step OFFSET_S N: move the clock, wait for the daemon to count the N-th
# step and for 40 more rows (both cards, 50 ms apart) after it
step() {
	local n
	read_energy "$2"
	echo "$(($1 * 1000000000))" >"$SHIFT.new"
	mv "$SHIFT.new" "$SHIFT"
	wait_for 30 steps_at_least "$2" || fail "status did not count step $2"
	n=$(rows_in_db)
	wait_for 30 rows_at_least $((n + 40)) || fail "no rows after step $2"
}

start_shifted_daemon
wait_for 30 rows_at_least 40 || fail "no rows"
step -3600 1
step 0 2
step -2 3
read_energy 4
stop_daemon
# back 2 h while no daemon runs
echo "$((-7200 * 1000000000))" >"$SHIFT"
n=$(rows_in_db)
start_shifted_daemon
wait_for 30 rows_at_least $((n + 40)) || fail "no rows after the restart"
# every check is made, then the test fails if any did
ok=1
miss() { echo "FAIL: $*" >&2; ok=0; }
steps_at_least 1 || miss "status does not count the step back while stopped"
log_has "stepped back by at least 7[0-9][0-9][0-9]\.[0-9]*s" ||
	miss "the restart does not log the step back: $(grep stepped "$DLOG")"
stop_daemon
read_energy 5

python3 - "$DB" "$READINGS" <<'PY' || miss "the energy counter lost or repeated energy across the steps"
import collections, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ok = True
def bad(msg):
    global ok
    ok = False
    print("FAIL:", msg)

# never back
seen = collections.defaultdict(list)
for line in open(sys.argv[2]):
    at, dev, joules = line.split()
    seen[int(dev)].append((int(at), float(joules)))
for dev, rs in seen.items():
    for (a, x), (b, y) in zip(rs, rs[1:]):
        if y < x - 1e-6:
            bad("card %d's counter went back from %.3f J to %.3f J" % (dev, x, y))

col, dec = db.execute("SELECT col, decimals FROM metrics WHERE key = 'pwr'").fetchone()
counter = dict(db.execute(
    "SELECT device, value FROM counters WHERE name = 'energy_joules'"))
for dev, value in sorted(counter.items()):
    rows = db.execute("SELECT %s, interval_ms FROM samples WHERE device = ? "
                      "AND %s IS NOT NULL" % (col, col), (dev,)).fetchall()
    total = sum(p / 10 ** dec * ms / 1000 for p, ms in rows)
    top = max(p / 10 ** dec * ms / 1000 for p, ms in rows)
    # rows read in the moment each of the two steps back while running is
    # seen are compared with the clock before it: a few at most
    slack = 2 * 4 * top
    print("card %d: counter %.3f J, rows' integral %.3f J (%d rows)"
          % (dev, value, total, len(rows)))
    if value > total + 1e-6:
        bad("card %d's counter %.3f J is more than its rows' %.3f J" % (dev, value, total))
    if value < total - slack:
        bad("card %d's counter %.3f J misses %.3f J of its rows' %.3f J"
            % (dev, value, total - value, total))
sys.exit(0 if ok else 1)
PY
[ $ok = 1 ] || fail "a step of the host clock misled the energy counter"
echo "PASS: t_clockstep_energy"
