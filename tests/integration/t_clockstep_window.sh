#!/bin/bash
# A window that a step back of the host clock crossed is read whole: its
# samples after the step are stamped before its end, among rows the old
# clock stamped an hour earlier, and the clock's epochs (schema 12) tell
# them apart.  The daemon runs under tests/clockshift.so (see t_clockstep)
# with aiu-smi's rows only; w1 is begun, the clock steps back 1 h, w1 is
# ended, and a few rows follow.  Checks:
#  - clock_steps records the step as epoch 1, with its size; the rows
#    stamped before it are of epoch 0, those after of epoch 1; w1's
#    begin_epoch is 0 and end_epoch 1, its end stamped before its begin,
#    as its end_note says;
#  - export --window w1 exits 0 without saying it read part of w1, and
#    holds every row the simulator wrote (its stamp log) between w1's
#    begin and end, in real order, but those within 20 ms of either, and
#    no other but a row per card whose interval reaches back over the end;
#    none written before its begin, though an hour of epoch 0's rows is
#    stamped between w1's end and begin;
#  - summary --window w1 exits 0 and counts those rows per card; windows
#    counts them too, and its duration is the time w1 ran by the daemon's
#    monotonic clock, not the hour its stamps are apart; report exits 0
#    with those rows in its aiusmi.csv.
source "$(dirname "$0")/lib.sh"

need python3
source "$(dirname "$0")/clockshift.sh"
FLUSH=100ms write_config 2 50ms

start_shifted_daemon

wait_for 30 test -S "$T/control.sock" || fail "no control socket"
wait_for 30 rows_at_least 20 || fail "no rows"
ctl mark begin -t w1 >/dev/null || fail "mark begin w1"
more_rows 40 "the begin"
echo "$((-3600 * 1000000000))" >"$SHIFT.new"
mv "$SHIFT.new" "$SHIFT"
wait_for 30 steps_at_least 1 || fail "the daemon did not see the step"
more_rows 40 "the step"
# --wait: until every row over its end is stored
ctl mark end -t w1 --wait 30s >"$T/end.txt" ||
	fail "mark end w1: $(cat "$T/end.txt")"
more_rows 20 "the end"
stop_daemon

rc=0
"$CLIENT" --db "$DB" export --window w1 -o "$T/w1.csv" 2>"$T/export.txt" || rc=$?
[ $rc = 0 ] || fail "export of w1 exits $rc: $(cat "$T/export.txt")"
grep -q "stepped back while it was open" "$T/export.txt" &&
	fail "export of w1 says it read part of it: $(cat "$T/export.txt")"
rc=0
"$CLIENT" --db "$DB" summary --window w1 --json >"$T/summary.json" 2>"$T/summary.txt" || rc=$?
[ $rc = 0 ] || fail "summary of w1 exits $rc: $(cat "$T/summary.txt")"
"$CLIENT" --db "$DB" windows --json >"$T/windows.json" 2>/dev/null ||
	fail "windows --json"
rc=0
"$CLIENT" --db "$DB" report --window w1 --output "$T/report" >"$T/report.txt" 2>&1 || rc=$?
[ $rc = 0 ] || fail "report of w1 exits $rc: $(cat "$T/report.txt")"
n=$(wc -l <"$T/w1.csv")
grep -q "aiusmi.csv ($((n - 1)) rows)" "$T/report.txt" ||
	fail "report's aiusmi.csv does not hold the $((n - 1)) rows export wrote: $(cat "$T/report.txt")"

python3 - "$DB" "$STAMPS" "$T/w1.csv" "$T/summary.json" "$T/windows.json" <<'PY' || fail "w1 is not read whole across the step"
import collections, csv, json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ok = True
def bad(msg):
    global ok
    ok = False
    print("FAIL:", msg)

MS = 10**6
steps = db.execute("SELECT id, at_ns, size_ns FROM clock_steps").fetchall()
if len(steps) != 1 or steps[0][0] != 1 or abs(steps[0][2] + 3600 * 10**9) > 10**9:
    bad("clock_steps holds %r, not epoch 1 of a step back by 1 h" % (steps,))
begin, end, be, ee = db.execute("SELECT begin_ns, end_ns, begin_epoch, "
    "end_epoch FROM windows WHERE tag = 'w1'").fetchone()
if (be, ee) != (0, 1):
    bad("w1's epochs are %r, not (0, 1)" % ((be, ee),))
if not end < begin:
    bad("w1's end %d is not stamped before its begin %d" % (end, begin))
note = db.execute("SELECT end_note FROM windows WHERE tag = 'w1'").fetchone()[0]
if "its end, stamped by the host clock, is" not in (note or "") or \
        "before its begin" not in note:
    bad("w1's end_note does not say its end is stamped before its begin: %r" % note)

# each aiu-smi row stored, by its values, to the stamp log's line of it
def sig(dev, vals):
    return (dev, tuple(sorted(round(float(v), 3) for v in vals)))
vals = collections.defaultdict(list)
for ts, dev, v in db.execute("SELECT ts_ns, device, value FROM sample_values"):
    vals[(ts, dev)].append(v)
epoch = dict(((ts, dev), e) for ts, dev, e in
             db.execute("SELECT ts_ns, device, epoch FROM samples"))
log = []
for line in open(sys.argv[2]):
    ns, dev, text = line.rstrip("\n").split(" ", 2)
    cells = [c.strip() for c in text.split(",")]
    log.append((int(ns), sig(int(dev), [c for c in cells[3:] if c != "-"])))
line_of = {}
for i, (ns, s) in enumerate(log):
    line_of.setdefault(s, []).append(i)
row_line = {}
for key, vs in vals.items():
    ls = line_of.get(sig(key[1], vs))
    if ls is None or len(ls) != 1:
        continue        # written as the daemon stopped, or not unique
    row_line[key] = ls[0]
# the step in the log: the first write an hour behind the one before
stepped = next(i for i in range(1, len(log)) if log[i][0] < log[i - 1][0] - 10**9)
for key, i in row_line.items():
    want = 0 if i < stepped else 1
    if epoch[key] != want and not stepped - 4 <= i < stepped + 4:
        bad("row %r written %s the step is of epoch %d" %
            (key, "before" if want == 0 else "after", epoch[key]))

# the lines written while w1 was open, in real order
def during(i, slack):
    ns = log[i][0]
    if i < stepped:
        return ns > begin + slack
    return ns < end - slack
need = set(i for i in range(len(log)) if during(i, 20 * MS))
may = set(i for i in range(len(log)) if during(i, -20 * MS) or
          (i >= stepped and end <= log[i][0] < end + 200 * MS))
got = collections.Counter()
lines = set()
rows = list(csv.DictReader(open(sys.argv[3])))
for r in rows:
    key = (int(r["epoch_ns"]), int(r["device"]))
    got[key[1]] += 1
    i = row_line.get(key)
    if i is None:
        continue
    lines.add(i)
    if i not in may:
        bad("exported a row written %s w1 (%d ms from %s): %r" % (
            "before" if i < stepped and log[i][0] < begin else "outside",
            (log[i][0] - (begin if i < stepped else end)) // MS,
            "its begin" if i < stepped else "its end", key))
missing = need - lines
if missing:
    bad("%d rows written while w1 was open are not exported, such as "
        "line %d" % (len(missing), min(missing)))
before = sum(1 for i in need if i < stepped)
after = len(need) - before
print("w1: %d rows exported, %d written before the step and %d after it"
      % (len(rows), before, after))
if before < 20 or after < 20:
    bad("too few rows on one side of the step: %d, %d" % (before, after))

summary = json.load(open(sys.argv[4]))
cards = summary.get("cards") or summary.get("summary", {}).get("cards") or []
for c in cards:
    if c.get("samples") != got[c.get("card")]:
        bad("summary counts %r samples of card %r, the export %d"
            % (c.get("samples"), c.get("card"), got[c.get("card")]))
if not cards:
    bad("summary --json has no cards: %s" % json.dumps(summary)[:400])
# windows: its samples, and how long it was open (the time it ran by the
# monotonic clock, within a read of the clock at each end and the step's)
w = [x for x in json.load(open(sys.argv[5])) if x["tag"] == "w1"][0]
run = db.execute("SELECT run_ns FROM windows WHERE tag = 'w1'").fetchone()[0]
if w["samples"] != len(rows):
    bad("windows counts %r samples of w1, the export %d" % (w["samples"], len(rows)))
if abs(w["duration_ns"] - run) > 200 * MS:
    bad("windows says w1 lasted %r ns, it ran %r ns" % (w["duration_ns"], run))
sys.exit(0 if ok else 1)
PY
echo "PASS: t_clockstep_window"
