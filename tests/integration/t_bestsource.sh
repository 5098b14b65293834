# The best source for each metric (bestsrc.h, spyremon-schema(5) "BEST
# SOURCE"), with source.direct left at its default (auto).
#
# The simulator writes card 0's metric file in the new format every 20 ms
# and card 1's in the old one; inside a window the daemon reads card 0's
# file every 20 ms, and aiu-smi too, for card 1.  So card 0 has two
# streams of rows with pwr, card 1 one.  Checks, over a window:
#  - summary's energy of card 0 is the exact integral of its file rows
#    alone (not both streams), and equals export --steps over a step
#    spanning the window; card 1's is that of its aiu-smi rows;
#  - summary's busy comes from aiu-smi, its sample count and coverage
#    from the file rows of card 0; export --steps and windows count the
#    samples alike;
#  - export csv and jsonl --by-source name each row's source; card 0's
#    aiu-smi rows show no pwr, its file rows do; card 1's rows are
#    aiu-smi's, with pwr; without --by-source card 0's two streams are
#    paired (pwr and busy on one row);
#  - --merge: card 0's pwr track is its file rows' values at their times,
#    its busy track aiu-smi's at theirs;
#  - spyremon metrics: the energy counter of card 0 follows the file
#    rows, not their sum with aiu-smi's; card 0 has a busy gauge (from
#    aiu-smi) and a power gauge;
#  - report runs, and its aiusmi.csv is aiu-smi's text alone (no line of
#    spyremon's), one row per card per tick;
#  - --check-config prints direct: auto.
source "$(dirname "$0")/lib.sh"

need python3
SPY="$CLIENT -c $T/spyremond.yaml"

write_config 2 200ms --write-metric-files --metric-format new \
	--file-interval 0.02 --old-format-cards 1
sed -i 's/^  window_interval: .*/  window_interval: 20ms/' "$T/spyremond.yaml"
printf '  pre_window: 0s\n' >>"$T/spyremond.yaml"
FLUSH=200ms
"$DAEMON" -c "$T/spyremond.yaml" --check-config >"$T/check.txt" 2>&1 ||
	fail "--check-config failed: $(cat "$T/check.txt")"
grep -q 'direct: auto' "$T/check.txt" ||
	fail "--check-config does not print direct: auto: $(cat "$T/check.txt")"
start_daemon

file_rows_at_least() {
	[ "$(sqlite3 -readonly "file:$DB?mode=ro" \
	    "SELECT count(*) FROM samples WHERE src = 1 AND device = 0" \
	    2>/dev/null || echo 0)" -ge "$1" ]
}
wait_for 30 file_rows_at_least 3 || fail "no file rows of card 0"
$SPY mark begin --tag best >"$T/begin.out" 2>&1 || fail "mark begin: $(cat "$T/begin.out")"
sleep 3
# --wait: the window is complete (its summary stored) on return
$SPY mark end --tag best --wait 10s >"$T/end.out" 2>&1 || fail "mark end: $(cat "$T/end.out")"
$SPY metrics >"$T/metrics.txt" || fail "metrics failed"
stop_daemon

read -r WB WE < <(sqlite3 -readonly "file:$DB?mode=ro" -separator ' ' \
	"SELECT begin_ns, end_ns FROM windows WHERE tag = 'best'")
cat >"$T/trace.json" <<EOF
{"schemaVersion": 1, "baseTimeNanoseconds": $((WB - 1000000)),
 "traceEvents": [
  {"ph": "X", "name": "ProfilerStep#0", "cat": "user_annotation", "ts": 1000, "dur": $(( (WE - WB) / 1000 )).$(printf '%03d' $(( (WE - WB) % 1000 ))), "pid": 1, "tid": 1}
 ]}
EOF
$SPY summary --window best --json >"$T/sum.json" || fail "summary failed"
$SPY windows --tag best --json >"$T/windows.json" || fail "windows failed"
$SPY export --trace "$T/trace.json" --steps --csv >"$T/steps.csv" ||
	fail "export --steps failed"
$SPY report --window best --output "$T/report" 2>"$T/report.err" ||
	fail "report failed: $(cat "$T/report.err")"
grep -v '^#MetricFiles$\|^# [0-9]' "$T/report/aiusmi.csv" | grep -q '^#' &&
	fail "report's aiusmi.csv has a line aiu-smi does not print: $(grep '^#' "$T/report/aiusmi.csv")"
grep -q 'rows read from the cards. metric files, paired with aiu-smi' "$T/report/report.md" ||
	fail "report.md does not say the metric files' rows were paired"
[ -s "$T/report/power.png" ] || ls "$T/report" | grep -q png ||
	fail "report wrote no plot"
$SPY export --trace "$T/trace.json" --merge "$T/merged.json" ||
	fail "export --merge failed"
$SPY export --window best --format csv --by-source >"$T/export.csv" 2>"$T/export.err" ||
	fail "export --csv failed: $(cat "$T/export.err")"
$SPY export --window best --format jsonl --by-source >"$T/export.jsonl" 2>"$T/export.err" ||
	fail "export --jsonl failed: $(cat "$T/export.err")"
$SPY export --window best >"$T/paired.csv" 2>"$T/export.err" ||
	fail "export failed: $(cat "$T/export.err")"

python3 - "$DB" "$T" "$WB" "$WE" <<'EOF' || fail "the best source is not used"
import bisect, csv, json, sqlite3, sys
from decimal import Decimal
db = sqlite3.connect(sys.argv[1])
t, wb, we = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
col, dec = db.execute("SELECT col, decimals FROM metrics WHERE key = 'pwr'").fetchone()
bcol = db.execute("SELECT col FROM metrics WHERE key = 'busy'").fetchone()[0]

def energy(dev, src):
    """Exact integral of pwr over the window from one stream's rows."""
    cond = "src = 1" if src else "src IS NULL"
    e, n, covered = Decimal(0), 0, 0
    for ts, iv, p in db.execute('SELECT ts_ns, interval_ms, "%s" FROM samples '
            'WHERE device = ? AND %s AND ts_ns > ? AND ts_ns - interval_ms * 1000000 < ?'
            % (col, cond), (dev, wb, we)):
        ov = max(0, min(ts, we) - max(ts - iv * 10**6, wb))
        covered += ov
        n += 1
        if p is not None:
            e += Decimal(p) / 10**dec * ov / Decimal(10**9)
    return e, n, covered

s = json.load(open(t + "/sum.json"), parse_float=Decimal)
cards = {c["card"]: c for c in s["cards"]}
assert sorted(cards) == [0, 1], cards.keys()
e0f, n0f, cov0f = energy(0, True)
e0s, n0s, _ = energy(0, False)
e1s, n1s, _ = energy(1, False)
e1f, n1f, _ = energy(1, True)
assert n0f > 50 and n0s > 50, ("card 0: two streams", n0f, n0s)
assert n1f == 0 and n1s > 0, ("card 1 is on aiu-smi only", n1f, n1s)
assert Decimal(cards[0]["energy_j"]) == e0f, ("card 0 energy", cards[0]["energy_j"], e0f, e0s)
assert e0s > 0 and Decimal(cards[0]["energy_j"]) < Decimal("1.5") * e0s, "counted twice?"
assert Decimal(cards[1]["energy_j"]) == e1s, ("card 1 energy", cards[1]["energy_j"], e1s)
assert cards[0]["samples"] == n0f, ("card 0 row figures from its file rows", cards[0]["samples"], n0f)
assert cards[0]["covered_ns"] == cov0f, (cards[0]["covered_ns"], cov0f)
assert cards[0].get("busy_mean_pct") is not None, ("card 0 busy from aiu-smi", cards[0])

# --steps: the same energy over a step spanning the window
totals = {int(r["device"]): r
          for r in csv.DictReader(open(t + "/steps.csv")) if r["step"] == "total"}
steps = {d: Decimal(r["energy_J"]) for d, r in totals.items()}
for d in (0, 1):
    want = Decimal(cards[d]["energy_j"])
    assert abs(steps[d] - want) <= Decimal("1e-6") * abs(want), (d, steps[d], want)
# a sample is counted alike everywhere: a card's rows of its row source
# (card 0's file rows), in --steps, summary and windows
for d in (0, 1):
    assert int(totals[d]["samples"]) == cards[d]["samples"], \
        ("steps and summary count samples differently", d, totals[d]["samples"], cards[d]["samples"])
w = json.load(open(t + "/windows.json"))
assert w[0]["samples"] == cards[0]["samples"] + cards[1]["samples"], \
    ("windows and summary count samples differently", w[0]["samples"], cards[0]["samples"], cards[1]["samples"])

# export: each row names its source; a value is shown from its source only
rows = list(csv.DictReader(open(t + "/export.csv")))
assert rows and "source" in rows[0], rows[:1]
by = {}
for r in rows:
    by.setdefault((int(r["device"]), r["source"]), []).append(r)
assert set(by) == {(0, "file"), (0, "aiu-smi"), (1, "aiu-smi")}, set(by)
assert all(r["pwr"] != "" for r in by[(0, "file")]), "card 0 file rows without pwr"
assert all(r["pwr"] == "" for r in by[(0, "aiu-smi")]), "card 0 aiu-smi rows show pwr"
assert all(r["busy"] != "" for r in by[(0, "aiu-smi")]), "card 0 aiu-smi rows without busy"
assert all(r["pwr"] != "" for r in by[(1, "aiu-smi")]), "card 1 rows without pwr"
# paired: card 0's aiu-smi rows joined its file rows, pwr and busy on one
paired = list(csv.DictReader(open(t + "/paired.csv")))
both = [r for r in paired if r["device"] == "0" and r["source"] == "file+aiu-smi"]
# aiu-smi rows before the card's first file row (the direct reads start
# with the window) have none to join
f0 = min(int(r["epoch_ns"]) for r in by[(0, "file")])
f1 = max(int(r["epoch_ns"]) for r in by[(0, "file")])
inner = [r for r in by[(0, "aiu-smi")] if f0 < int(r["epoch_ns"]) < f1]
alone = [r for r in paired if r["device"] == "0" and r["source"] == "aiu-smi"
         and f0 < int(r["epoch_ns"]) < f1]
assert len(inner) > 50 and len(both) > 0, (len(inner), len(alone), len(both))
# The pairing rule (spyremon-schema(5), PAIRED SAMPLES), checked row by
# row rather than by a count: how many aiu-smi rows stay alone depends on
# how late a loaded daemon read them (rows read in one burst share a
# moment, and only the first finds its file row free).  An aiu-smi row is
# alone only if the card's newest file row at or before it is two of its
# intervals older, or was joined already.
files = sorted((int(r["epoch_ns"]), int(r["interval_ms"])) for r in by[(0, "file")])
joined = {int(r["epoch_ns"]) for r in both}
stamps = [f[0] for f in files]
for r in alone:
    ts = int(r["epoch_ns"])
    k = bisect.bisect_right(stamps, ts) - 1
    fts, fiv = files[k]
    assert ts >= fts + 2 * fiv * 1000000 or fts in joined, \
        ("an aiu-smi row stayed alone beside a free file row", ts, fts, fiv)
assert all(r["pwr"] != "" and r["busy"] != "" for r in both), "a paired row lacks pwr or busy"
# An aiu-smi row early in the window may join the file row before it
# (read at the idle rate), as anywhere else: the sample is that file
# row's, before the window, and not written.
fall = sorted(db.execute("SELECT ts_ns, interval_ms FROM samples WHERE "
                         "device = 0 AND src = 1 AND ts_ns < ?", (we,)))
fstamps, taken, pre = [f[0] for f in fall], set(), 0
for (ts,) in db.execute("SELECT ts_ns FROM samples WHERE device = 0 AND "
                        "src IS NULL AND ts_ns > ? AND ts_ns < ? ORDER BY ts_ns",
                        (wb - 120 * 10**9, we)):
    k = bisect.bisect_right(fstamps, ts) - 1
    if k < 0 or fall[k][0] in taken or ts >= fall[k][0] + 2 * fall[k][1] * 10**6:
        continue
    taken.add(fall[k][0])
    pre += fall[k][0] <= wb < ts
assert pre <= 1, ("aiu-smi rows in the window joined file rows before it", pre)
assert len(paired) == len(rows) - len(both) - pre, (len(paired), len(rows), len(both), pre)
assert sorted(r["epoch_ns"] for r in both) == sorted(
    r["epoch_ns"] for r in by[(0, "file")] if r["epoch_ns"] in {b["epoch_ns"] for b in both})
js = [json.loads(l) for l in open(t + "/export.jsonl")]
assert len(js) == len(rows)
assert {(j["device"], j["source"]) for j in js} == set(by)
for j in js:
    if j["device"] == 0 and j["source"] == "aiu-smi":
        assert j["values"]["pwr"] is None, j

# --merge: card 0's power track holds its file rows' values, at their
# times; its busy track aiu-smi's, at theirs
base = json.load(open(t + "/trace.json"))["baseTimeNanoseconds"]
ev = json.load(open(t + "/merged.json"), parse_float=Decimal)["traceEvents"]
pid = [e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"
       and str(e["args"]["name"]).startswith("Spyre 0")]
assert len(pid) == 1, pid
def starts(src, key):
    cond = "src = 1" if src else "src IS NULL"
    c = db.execute("SELECT col, decimals FROM metrics WHERE key = ?", (key,)).fetchone()
    return {ts - iv * 10**6: Decimal(v) / 10**c[1] for ts, iv, v in db.execute(
        'SELECT ts_ns, interval_ms, "%s" FROM samples WHERE device = 0 AND %s '
        'AND ts_ns - interval_ms * 1000000 > ? AND ts_ns < ? AND "%s" IS NOT NULL'
        % (c[0], cond, c[0]), (wb, we))}
for key, src in (("pwr", True), ("busy", False)):
    want = starts(src, key)
    other = starts(not src, key)
    got = [e for e in ev if e.get("ph") == "C" and e["pid"] == pid[0] and e["name"] == key]
    assert len(got) > 50, (key, len(got))
    inner, stray = 0, []
    for e in got:
        at = base + int(Decimal(e["ts"]) * 1000)
        near = [k for k in want if abs(k - at) <= 1000]
        if near:
            # rows of a burst are stamped 1 ns apart; at one time the
            # trace keeps the last value
            inner += 1
            assert list(e["args"].values())[0] == want[max(near)], (key, e, want[max(near)])
        else:
            stray.append(((at - wb) / 1e6, list(e["args"].values())[0]))
    # all but three come from the source: the first, clipped to the span;
    # the last row that starts inside it and ends after it (under emulation
    # the fine rows run on past the window's end), whose value an
    # overlapping row of a burst may replace; the final event
    assert inner >= len(got) - 3, (key, inner, len(got), len(other),
        "events at no row's start (ms into the window, value):", stray)

# metrics: the energy counter does not count card 0 twice
samples = {}
for line in open(t + "/metrics.txt"):
    if line.startswith("spyre_energy_joules_total{") or line.startswith("spyre_busy_ratio{") \
            or line.startswith("spyre_power_watts{"):
        name, rest = line.split("{", 1)
        dev = int(rest.split('device="')[1].split('"')[0])
        samples[(name, dev)] = float(rest.rsplit("}", 1)[1].split()[0])
assert ("spyre_busy_ratio", 0) in samples and ("spyre_power_watts", 0) in samples, samples
def total(dev, src):
    cond = "src = 1" if src else "src IS NULL"
    v = db.execute('SELECT sum("%s" * interval_ms) / 1e3 / %d FROM samples '
                   'WHERE device = ? AND %s' % (col, 10**dec, cond), (dev,)).fetchone()[0]
    return v or 0.0
f, a = total(0, True), total(0, False)
# metrics ran before the stop, the totals are of every row stored by then:
# the stored counter, written with the rows it counts, is weighed against
# them, and the one metrics served is at most it
c = db.execute("SELECT value FROM counters WHERE name = 'energy_joules' "
               "AND device = 0").fetchone()[0]
served = samples[("spyre_energy_joules_total", 0)]
assert 0 < served <= c + 1e-6, ("the counter served", served, "stored", c)
# what aiu-smi rows counted before the first file row, and while the
# reader started, is at most a few of aiu-smi's intervals
assert f > 0 and a > 0 and c < f + 0.6 * a, ("counted twice", c, f, a)
assert c >= 0.95 * f, ("file rows not counted", c, f)
print("best source: summary %s J = file rows' integral (aiu-smi's %s J), "
      "steps agree, export names %d file and %d aiu-smi rows, counter %.1f J "
      "(file %.1f, aiu-smi %.1f)" % (cards[0]["energy_j"], e0s,
      len(by[(0, "file")]), len(by[(0, "aiu-smi")]) + len(by[(1, "aiu-smi")]), c, f, a))
EOF
echo "ok: t_bestsource"
