#!/usr/bin/env bash
# A database written elsewhere holding impossible values: sample values of
# 'inf', 'NaN', text, a blob and infinities (sqlite3 UPDATEs), intervals
# that are an infinity or text, and a tag and metadata with ESC and BEL.
# summary (text, --json), compare --json, export (jsonl, csv) and export
# --steps --json leave the values out (null in JSON, never NaN or inf),
# flag them (summary's note and bad_values), keep coverage at most 100 %,
# and show control characters escaped on the terminal, in windows and in
# report.md.
source "$(dirname "$0")/lib.sh"

need python3
need sqlite3
MKSAMPLES=$BIN/tests/mksamples
[ -x "$MKSAMPLES" ] || fail "no $MKSAMPLES: run make check"
spy() { "$CLIENT" --db "$DB" --socket "$T/none.sock" "$@"; }

BASE=1760000000000000000
ms=1000000
python3 - "$BASE" >"$T/samples" <<'EOF'
import sys
base = int(sys.argv[1]); ms = 10**6
print('window run %d %d {"commit":"abc"}' % (base + 100 * ms, base + 2900 * ms))
for dev in (0, 1):
    for k in range(-20, 40):
        print("%d %d 100 pwr=%.1f busy=%d gtemp=40.0 rxpci=0.5 actmem=100" %
              (base + k * 100 * ms, dev, 50 + dev, 50 if k > 0 else 0))
EOF
"$MKSAMPLES" "$DB" <"$T/samples" || fail "mksamples failed"
at() { echo "ts_ns = $((BASE + $1 * 100 * ms))"; }
# as a database from elsewhere: bad values, and its window not summarized
sqlite3 "$DB" "
UPDATE samples SET pwr = 'inf' WHERE device = 0 AND $(at 5);
UPDATE samples SET pwr = 9e999 WHERE device = 0 AND $(at 6);
UPDATE samples SET pwr = 'NaN' WHERE device = 0 AND $(at 7);
UPDATE samples SET pwr = x'00ff' WHERE device = 0 AND $(at 8);
UPDATE samples SET pwr = 'hello' WHERE device = 0 AND $(at 9);
UPDATE samples SET busy = -9e999 WHERE device = 0 AND $(at 10);
UPDATE samples SET interval_ms = 9e999 WHERE device = 1 AND $(at 10);
UPDATE samples SET interval_ms = 'abc' WHERE device = 1 AND $(at 11);
UPDATE samples SET gtemp = 9e999 WHERE device = 1 AND $(at 12);
UPDATE windows SET tag = 'run' || char(27) || '[2J' || char(7),
    meta = '{\"commit\":\"a' || char(27) || '[31mb' || char(7) || 'c\"}',
    summarized_ns = NULL;
DELETE FROM window_summary_bw; DELETE FROM window_summary;" ||
	fail "cannot spoil the database"

# ---- summary: left out, flagged, coverage at most 100 % ----
spy summary --window 1 >"$T/sum.txt" || fail "summary exited $?"
spy summary --window 1 --json >"$T/sum.json" || fail "summary --json exited $?"
python3 - "$T/sum.json" "$T/sum.txt" <<'EOF' || fail "summary is wrong: $(cat "$T/sum.txt")"
import json, re, sys
def bad(c):
    raise ValueError("not JSON: " + c)
s = json.loads(open(sys.argv[1]).read(), parse_constant=bad)
cards = {c["card"]: c for c in s["cards"]}
assert cards[0]["bad_values"] == 6, cards[0]
assert cards[1]["bad_values"] == 3, cards[1]
for c in cards.values():
    assert 0 <= c["coverage"] <= 1, c
    assert c["covered_ns"] <= 2800 * 10**6, c
# card 0: 28 rows of 50 W for 100 ms, 5 without a power value
assert abs(float(cards[0]["energy_j"]) - 115) < 1e-9, cards[0]["energy_j"]
assert cards[0]["power_max_w"] == 50 and cards[0]["busy_mean_pct"] == 50, cards[0]
# card 1: the rows with no interval are left out whole
assert cards[1]["samples"] == 26 and cards[1]["gtemp_max_c"] == 40, cards[1]
assert s["window"]["meta"] == {"commit": "a\x1b[31mb\x07c"}, s["window"]["meta"]
t = open(sys.argv[2]).read()
assert "Card 0: 6 values that are not a finite number" in t, t
assert "Card 1: 3 values" in t, t
assert not re.search(r"\b(inf|nan)\b", t, re.I), t
EOF

# ---- compare --json: JSON, whatever the values ----
spy compare 1 1 --json >"$T/cmp.json" || fail "compare --json exited $?"
python3 -c '
import json, sys
def bad(c):
    raise ValueError("not JSON: " + c)
json.loads(open(sys.argv[1]).read(), parse_constant=bad)' "$T/cmp.json" ||
	fail "compare --json is not JSON: $(head -c 600 "$T/cmp.json")"

# ---- export: null, never 0.0, NaN or inf ----
spy export --window 1 --format jsonl --output "$T/x.jsonl" || fail "export jsonl exited $?"
spy export --window 1 --format csv --output "$T/x.csv" || fail "export csv exited $?"
python3 - "$T/x.jsonl" "$T/x.csv" "$BASE" <<'EOF' || fail "export is wrong"
import csv, json, sys
def bad(c):
    raise ValueError("not JSON: " + c)
base = int(sys.argv[3]); ms = 10**6
rows = [json.loads(l, parse_constant=bad) for l in open(sys.argv[1])]
by = {(r["device"], r["ts_ns"]): r for r in rows}
for k in (5, 6, 7, 8, 9):
    assert by[(0, base + k * 100 * ms)]["values"]["pwr"] is None, k
assert by[(0, base + 10 * 100 * ms)]["values"]["busy"] is None
assert by[(1, base + 12 * 100 * ms)]["values"]["gtemp"] is None
assert by[(0, base + 4 * 100 * ms)]["values"]["pwr"] == 50
for r in csv.DictReader(open(sys.argv[2])):
    if int(r["device"]) == 0 and int(r["epoch_ns"]) == base + 6 * 100 * ms:
        assert r["pwr"] == "", r
    assert all(v.lower() not in ("inf", "nan", "-inf") for v in r.values()), r
EOF

# ---- export --steps --json over a trace of the window ----
cat >"$T/trace.json" <<EOF
{"schemaVersion": 1, "baseTimeNanoseconds": $BASE,
 "traceEvents": [
  {"ph": "X", "name": "ProfilerStep#0", "cat": "user_annotation", "ts": 100000, "dur": 1400000, "pid": 1, "tid": 1},
  {"ph": "X", "name": "ProfilerStep#1", "cat": "user_annotation", "ts": 1500000, "dur": 1400000, "pid": 1, "tid": 1}
 ]}
EOF
spy export --trace "$T/trace.json" --steps --json >"$T/steps.json" ||
	fail "export --steps --json exited $?"
python3 -c '
import json, sys
def bad(c):
    raise ValueError("not JSON: " + c)
json.loads(open(sys.argv[1]).read(), parse_constant=bad)' "$T/steps.json" ||
	fail "steps --json is not JSON: $(head -c 600 "$T/steps.json")"

# ---- control characters: shown, never sent raw ----
spy windows >"$T/win.txt" || fail "windows exited $?"
spy report --window 1 --output "$T/report" >"$T/rep.out" 2>&1 || fail "report exited $?"
for f in "$T/sum.txt" "$T/win.txt" "$T/report/report.md" "$T/rep.out"; do
	! grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$f" ||
		fail "$(basename "$f") holds raw control characters: $(grep $'[\x01-\x08\x0b-\x1f\x7f]' "$f" | cat -v)"
done
grep -qF 'run\x1b[2J\x07' "$T/win.txt" || fail "windows does not show the tag's ESC: $(cat -v "$T/win.txt")"
grep -qF 'run\x1b[2J\x07' "$T/report/report.md" || fail "report.md does not show the tag's ESC"
echo "ok"
