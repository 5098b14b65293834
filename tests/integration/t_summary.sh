#!/usr/bin/env bash
# spyremon summary on samples with known values (mksamples): the energy is
# the --steps total of a trace spanning the window exactly (within 1e-9
# relative), the energy net of idle matches the idle power the samples
# were made with, the figures and the data-quality notes (bandwidths at 0
# while busy, unreliable columns, a gap, the clock flagged
# unsynchronized, said once in summary and in report.md); a window not summarized yet is computed on the spot
# with the same figures; retention deletes the samples and the summary
# stays the same; --csv and windows' ENERGY_J agree; compare with traces
# says "within noise" for steps of the same length and "slower" and
# "higher" for steps 30 % longer, and fails --fail-on-regression.
source "$(dirname "$0")/lib.sh"

need python3
MKSAMPLES=$BIN/tests/mksamples
[ -x "$MKSAMPLES" ] || fail "no $MKSAMPLES: run make check"
spy() { "$CLIENT" --db "$DB" "$@"; }

BASE=1760000000000000000
WB=$((BASE + 123456789))
WE=$((BASE + 2876543210))
# two cards at 100 ms: idle (busy 0) at 20 + card W before the window,
# busy inside it with varying power (some with more digits than aiu-smi
# prints), a missing value, and card 0 silent for 600 ms
python3 - "$BASE" "$WB" "$WE" >"$T/samples" <<'EOF'
import sys
base, wb, we = map(int, sys.argv[1:])
ms = 1000000
print('window run %d %d unsync {"commit":"abc123","workload":"unit"}' % (wb, we))
for dev in (0, 1):
    for k in range(-40, 40):
        ts = base + k * 100 * ms
        if dev == 0 and 10 <= k < 16:
            continue
        busy = 0 if ts <= wb - 100 * ms or ts > we + 100 * ms else 50 + k % 40
        if busy:
            p = 60 + 0.7 * k + 5 * dev
            pwr = "%.2f" % (p + 0.03) if k % 3 == 0 else "%.1f" % p
        else:
            pwr = "%.1f" % (20 + dev)
        if dev == 1 and k == 5:
            pwr = "-"
        print("%d %d 100 pwr=%s busy=%d gtemp=%.1f rdmem=0.000 wrmem=0.000 "
              "rxpci=%.3f rsvmem=%d actmem=%d" % (ts, dev, pwr, busy,
              40 + 0.1 * k, 0.5 + 0.01 * (k % 10), 100 + k, 1000 + 3 * k))
EOF
"$MKSAMPLES" "$DB" <"$T/samples" || fail "mksamples failed"

# a trace whose one step spans the window exactly
cat >"$T/trace.json" <<EOF
{"schemaVersion": 1, "baseTimeNanoseconds": $BASE,
 "traceEvents": [
  {"ph": "X", "name": "ProfilerStep#0", "cat": "user_annotation", "ts": 123456.789, "dur": 2753086.421, "pid": 1, "tid": 1}
 ]}
EOF
spy export --trace "$T/trace.json" --steps --csv >"$T/steps.csv" || fail "export --steps failed"
spy summary --window run --json >"$T/sum.json" || fail "summary --json failed"
spy summary --window run >"$T/sum.txt" || fail "summary failed"
spy summary --window run --csv >"$T/sum.csv" || fail "summary --csv failed"
spy windows >"$T/windows.txt" || fail "windows failed"
spy report --window run --output "$T/report" >/dev/null || fail "report failed"

# the unsynchronized clock is said once per output, for both ends
for f in sum.txt report/report.md; do
	n=$(grep -o "NOT synchronized" "$T/$f" | wc -l)
	[ "$n" = 1 ] || fail "$f says the clock is NOT synchronized $n times, not once"
done
[ "$(python3 -c 'import json, sys; print(sum("NOT synchronized" in n for n in json.load(open(sys.argv[1]))["notes"]))' "$T/sum.json")" = 1 ] ||
	fail "summary --json has the clock note more than once"

python3 - "$T" "$WB" "$WE" <<'EOF' || fail "the summary is wrong"
import csv, json, sys
from decimal import Decimal
t, wb, we = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = json.load(open(t + "/sum.json"), parse_float=Decimal)
steps = [r for r in csv.DictReader(open(t + "/steps.csv")) if r["step"] == "total"]
assert len(steps) == 2, steps
assert s["stored"] is True, s["stored"]
assert s["window"]["clock_begin"]["synchronized"] is False
cards = {c["card"]: c for c in s["cards"]}
assert sorted(cards) == [0, 1], cards.keys()
# energy: the --steps total over the same span
for r in steps:
    e, want = Decimal(cards[int(r["device"])]["energy_j"]), Decimal(r["energy_J"])
    assert abs(e - want) <= Decimal("1e-9") * abs(want), (r["device"], e, want)
# recomputed from the samples: energy, net of idle (20 + card W), coverage
samples = {0: [], 1: []}
for line in open(t + "/samples"):
    if line.startswith("window"):
        continue
    f = line.split()
    kv = dict(x.split("=") for x in f[3:])
    samples[int(f[1])].append((int(f[0]), int(f[2]) * 10**6, kv))
for dev, rows in samples.items():
    c = cards[dev]
    energy = Decimal(0)
    covered = covered_pwr = 0
    for ts, iv, kv in rows:
        ov = max(0, min(ts, we) - max(ts - iv, wb))
        covered += ov
        if kv["pwr"] != "-":
            energy += Decimal(kv["pwr"]) * ov / Decimal(10**9)
            covered_pwr += ov
    assert Decimal(c["energy_j"]) == energy, (dev, c["energy_j"], energy)
    assert c["covered_ns"] == covered, (dev, c["covered_ns"], covered)
    idle = 20 + dev
    assert c["idle_w"] == idle, (dev, c["idle_w"])
    net = energy - idle * Decimal(covered_pwr) / Decimal(10**9)
    assert abs(Decimal(c["net_energy_j"]) - net) < Decimal("1e-6"), (dev, c["net_energy_j"], net)
    assert c["zero_while_busy"] == "rdmem,wrmem", c["zero_while_busy"]
    assert "rsvmem" in c["unreliable"], c["unreliable"]
    assert c["bandwidth"]["rxpci"]["bytes"] > 0
assert cards[0]["gaps"] == 1 and cards[0]["gap_ns"] == 600 * 10**6, cards[0]
assert cards[1]["gaps"] == 0, cards[1]
txt = open(t + "/sum.txt").read()
for want in ("torch-spyre #4514", "rdmem, wrmem stay at 0 on cards 0, 1 while busy",
             "rsvmem", "Card 0: 1 gap longer than two intervals",
             "Host clock at the window's begin and end: NOT synchronized",
             "median power of the card's samples with busy 0",
             "card 0 20.00 W", "card 1 21.00 W"):
    assert want in txt, (want, txt)
rows = list(csv.DictReader(open(t + "/sum.csv")))
assert [Decimal(r["energy_j"]) for r in rows] == \
    [Decimal(cards[d]["energy_j"]) for d in (0, 1)], rows
total = sum(Decimal(cards[d]["energy_j"]) for d in (0, 1))
assert ("%.3f" % total) in open(t + "/windows.txt").read(), open(t + "/windows.txt").read()
print("summary: energies, net of idle and notes as expected")
EOF

# the same samples without a stored summary: computed on the spot, same figures
DB2=$T/nosum.db
{ echo nosummary; cat "$T/samples"; } | "$MKSAMPLES" "$DB2" || fail "mksamples failed"
# (like a copy from a host whose daemon was killed before it completed the
# window: no daemon will, so it is read as far as it goes, with exit 7)
rc=0
"$CLIENT" --db "$DB2" --socket "$T/none.sock" summary --window run --json \
	>"$T/live.json" 2>"$T/live.err" || rc=$?
[ "$rc" -eq 7 ] || fail "live summary of an unfinished window exited $rc, not 7"
grep -q "window 1 'run' is incomplete: cannot connect to $T/none.sock" "$T/live.err" ||
	fail "no reason for exit 7: $(cat "$T/live.err")"
"$CLIENT" --db "$DB2" --socket "$T/none.sock" summary --window run >"$T/live.txt" 2>/dev/null || true
grep -q "computed now and is not stored: spyremond has not summarized the window yet" "$T/live.txt" ||
	fail "the live summary does not say so: $(cat "$T/live.txt")"
python3 - "$T/sum.json" "$T/live.json" <<'EOF' || fail "live and stored summaries differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert b["stored"] is False
for x in (a, b):
    for k in ("stored", "computed_ns", "notes"):
        x.pop(k)
assert a == b, (a, b)
EOF

# retention deletes every sample; the summary stays as it was
echo "retention $((BASE + 1000 * 3600 * 1000000000)) 3600000000000 3600000000000" |
	"$MKSAMPLES" "$DB" || fail "retention failed"
[ "$(sqlite3 "$DB" 'SELECT count(*) FROM samples')" = 0 ] || fail "retention left samples"
spy summary --window run --json >"$T/after.json" || fail "summary after retention failed"
cmp -s "$T/sum.json" "$T/after.json" || fail "the summary changed when the samples went: $(diff "$T/sum.json" "$T/after.json")"
spy summary --window run >"$T/after.txt"
cmp -s "$T/sum.txt" "$T/after.txt" || fail "the table changed: $(diff "$T/sum.txt" "$T/after.txt")"
echo "summary unchanged after retention deleted all $(($(wc -l <"$T/samples") - 1)) samples"

# ---- compare with traces: per-step time and energy, Welch's verdicts ----
DB3=$T/steps.db
python3 - "$BASE" "$T" >"$T/s3" <<'EOF'
import json, sys
base, t = int(sys.argv[1]), sys.argv[2]
ms = 10**6
# three windows of 8 steps: "a" and "b" of 100 ms +- 4, "c" of 130 ms +- 4;
# power 50 W on card 0 throughout, so a step's energy follows its time
jitter = [0, 3, -2, 4, -4, 1, -1, 2]
for w, (tag, step) in enumerate((("a", 100), ("b", 100), ("c", 130))):
    wb = base + w * 10 * 1000 * ms
    ev, ts = [], 0
    for i in range(8):
        dur = (step + jitter[(i + w) % 8]) * 1000      # us
        ev.append({"ph": "X", "name": "ProfilerStep#%d" % i, "ts": ts + 1000,
                   "dur": dur, "pid": 1, "tid": 1})
        ts += dur + 20000
    json.dump({"baseTimeNanoseconds": wb, "traceEvents": ev},
              open("%s/steps-%s.json" % (t, tag), "w"))
    print("window %s %d %d" % (tag, wb, wb + (ts + 2000) * 1000))
for k in range(0, 3 * 10 * 100):
    print("%d 0 10 pwr=50.0 busy=90" % (base + (k + 1) * 10 * ms))
EOF
"$MKSAMPLES" "$DB3" <"$T/s3" || fail "mksamples failed"
"$CLIENT" --db "$DB3" compare a b --trace-base "$T/steps-a.json" --trace-new "$T/steps-b.json" \
	--json >"$T/ab.json" || fail "compare a b with traces failed"
"$CLIENT" --db "$DB3" compare a c --trace-base "$T/steps-a.json" --trace-new "$T/steps-c.json" \
	--json >"$T/ac.json" || fail "compare a c with traces failed"
"$CLIENT" --db "$DB3" compare a c --trace-base "$T/steps-a.json" --trace-new "$T/steps-c.json" \
	>"$T/ac.txt" || fail "compare a c failed"
grep -q "step_time .* slower" "$T/ac.txt" || fail "no slower step_time: $(cat "$T/ac.txt")"
python3 - "$T/ab.json" "$T/ac.json" <<'EOF' || fail "compare's step verdicts are wrong"
import json, sys
same, slow = (json.load(open(p)) for p in sys.argv[1:])
def fig(c, name):
    return [f for f in c["figures"] if f["figure"] == name][0]
assert fig(same, "step_time")["verdict"] == "within noise", fig(same, "step_time")
assert fig(same, "step_energy")["verdict"] == "within noise", fig(same, "step_energy")
t, e = fig(slow, "step_time"), fig(slow, "step_energy")
assert t["verdict"] == "slower" and t["p"] < 0.05 and t["base_n"] == t["new_n"] == 8, t
assert abs(t["base"] - 100.375) < 1e-6 and abs(t["new"] - 130.375) < 1e-6, t
# 50 W over each step
assert e["verdict"] == "higher", e
assert abs(e["base"] - 0.05 * t["base"]) < 1e-9 and abs(e["new"] - 0.05 * t["new"]) < 1e-9, e
assert t["base_ci95"] > 0 and t["new_ci95"] > 0
print("compare with traces: within noise, slower, higher")
EOF
rc=0
"$CLIENT" --db "$DB3" compare a c --trace-base "$T/steps-a.json" --trace-new "$T/steps-c.json" \
	--fail-on-regression 10 >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 5 ] || fail "a 30 % slower step did not fail --fail-on-regression 10 (exit $rc)"
grep -q "regression: mean step_time rose" "$T/err" || fail "regression: $(cat "$T/err")"

# usage errors
"$CLIENT" --db "$DB" summary 2>/dev/null && fail "summary without --window succeeded"
rc=0
"$CLIENT" --db "$DB" summary --window nosuch 2>"$T/err" || rc=$?
# 1, as spyremon(1) says for a window no id or tag names: not a crash
[ "$rc" -eq 1 ] || fail "summary of no window exited $rc, not 1"
grep -q "no window is tagged 'nosuch'" "$T/err" || fail "no window: $(cat "$T/err")"
exit 0
