#!/usr/bin/env bash
# spyremon export --trace FILE --steps: a row per step and card and a
# total row per card, every value recomputed by steps_check.py from the
# samples given to mksamples (energy exactly, means to 1e-9); a Kineto-style
# trace and a bare-array trace placed with --trace-start; a step shorter
# than the interval is under-sampled, a card without samples in a step gets
# an empty row; --step-pattern, --device, --output; csv when stdout is not
# a terminal, the table when it is; a trace without steps; databases
# without bandwidth values or columns; and the real traces with steps.
source "$(dirname "$0")/lib.sh"

need python3
MKSAMPLES=$BIN/tests/mksamples
[ -x "$MKSAMPLES" ] || fail "no $MKSAMPLES: run make check"
CHECK="python3 $ROOT/tests/integration/steps_check.py"
TRACES=$ROOT/tests/data/traces

# expect_rc RC COMMAND...: run COMMAND, which must exit RC; stdout in
# $T/out, stderr in $T/err
expect_rc() {
	local want=$1 rc=0
	shift
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq "$want" ] || { cat "$T/err" >&2; fail "$* exited $rc, not $want"; }
}

steps() {
	"$CLIENT" --db "$DB" export "$@"
}

# ---- samples: two cards, 100 ms apart, with irregular stretches ----
BASE=1760000000000000000
python3 - "$BASE" >"$T/samples" <<'EOF'
import sys
base, ms = int(sys.argv[1]), 1000000
for dev in (0, 1):
    for k in range(-4, 31):
        ival = 100
        if dev == 0 and k == 2:
            ival = 50               # (100, 150] ms is not covered
        if dev == 0 and k == 6:
            continue                # no row: (500, 600] comes from k = 7
        if dev == 0 and k == 7:
            ival = 200
        if dev == 1 and k in (9, 10):
            continue                # card 1 has nothing in (800, 1000] ms
        p = 100 + 1.5 * k + 50 * dev
        # every third power value has more digits than aiu-smi's one
        pwr = "%.2f" % (p + 0.05) if k % 3 == 0 else "%.1f" % p
        if dev == 0 and k == 4:
            pwr = "-"               # a missing value over (300, 400] ms
        print("%d %d %d pwr=%s busy=%d rdmem=%.3f wrmem=%.3f rxpci=%.3f "
              "txpci=0.%04d" % (base + k * 100 * ms, dev, ival, pwr,
              40 + (k * 7) % 50, 1 + 0.125 * k + dev, 0.5 + 0.25 * (k % 4),
              0.01 * (k + 4), 1000 + 37 * (k + 4)))
EOF
"$MKSAMPLES" "$DB" <"$T/samples" || fail "mksamples failed"

# ---- a Kineto-style trace: base + relative µs ----
cat >"$T/kineto.json" <<EOF
{"schemaVersion": 1, "baseTimeNanoseconds": $BASE,
 "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
  {"ph": "X", "name": "aten::mm", "cat": "cpu_op", "ts": 500, "dur": 1099500, "pid": 1, "tid": 1},
  {"ph": "X", "name": "ProfilerStep#1", "cat": "user_annotation", "ts": 301000.25, "dur": 412345.678, "pid": 1, "tid": 1},
  {"ph": "X", "name": "ProfilerStep#0", "cat": "user_annotation", "ts": 1000, "dur": 300000, "pid": 1, "tid": 1},
  {"ph": "X", "name": "ProfilerStep#2", "cat": "user_annotation", "ts": 713345.928, "dur": 45.5, "pid": 1, "tid": 1},
  {"ph": "X", "name": "ProfilerStep#3", "cat": "user_annotation", "ts": 900000, "dur": 100000, "pid": 1, "tid": 1},
  {"ph": "X", "name": "train_0", "cat": "user_annotation", "ts": 2000, "dur": 100000, "pid": 1, "tid": 2},
  {"ph": "X", "name": "train_1", "cat": "user_annotation", "ts": 150000, "dur": 200000.5, "pid": 1, "tid": 2},
  {"ph": "i", "name": "ProfilerStep#9", "ts": 1000, "pid": 1, "tid": 1, "s": "t"}
 ]}
EOF
LO=$((BASE + 500000))
HI=$((BASE + 1100000000))
KSTEPS=(--step 'ProfilerStep#0' $((BASE + 1000000)) 300000000
	--step 'ProfilerStep#1' $((BASE + 301000250)) 412345678
	--step 'ProfilerStep#2' $((BASE + 713345928)) 45500
	--step 'ProfilerStep#3' $((BASE + 900000000)) 100000000)

expect_rc 0 steps --trace "$T/kineto.json" --steps --csv
cp "$T/out" "$T/k.csv"
$CHECK "$T/samples" "$T/k.csv" csv --span $LO $HI "${KSTEPS[@]}"
[ "$(wc -l <"$T/k.csv")" -eq $((1 + 4 * 2 + 2)) ] || fail "not 4 steps x 2 cards + 2 totals + header"
head -n 1 "$T/k.csv" | grep -q '^step,device,start,start_ns,dur_ms,samples,interval_ms,covered_ms,pwr_mean_W,pwr_max_W,energy_J,busy_mean_pct,mem_bw_rd_GiBps,mem_bw_wr_GiBps,pci_bw_rx_GiBps,pci_bw_tx_GiBps,undersampled$' ||
	fail "csv header: $(head -n 1 "$T/k.csv")"
# the under-sampled step is flagged, the others not, and the hint says how
[ "$(awk -F, '$NF == 1 { print $1 }' "$T/k.csv" | sort -u)" = 'ProfilerStep#2' ] ||
	fail "under-sampled rows: $(awk -F, '$NF == 1' "$T/k.csv")"
grep -q "under-sampled.*source.window_interval" "$T/err" || fail "no hint: $(cat "$T/err")"
# card 1 has no sample during ProfilerStep#3: an empty row and a note
grep -q '^ProfilerStep#3,1,[^,]*,[0-9]*,100,0,,,,,,,,,,,0$' "$T/k.csv" ||
	fail "empty row: $(grep '^ProfilerStep#3,1' "$T/k.csv")"
grep -q "1 row without samples (the first: ProfilerStep#3 on device 1)" "$T/err" ||
	fail "no note of the empty row: $(cat "$T/err")"
# one value by hand: card 1, ProfilerStep#0 over [1, 301] ms, samples
# (0, 100] 151.5 W, (100, 200] 153, (200, 300] 154.55 (REAL), (300, 400] 156:
# 151.5 x 0.099 + 153 x 0.1 + 154.55 x 0.1 + 156 x 0.001
#   = 14.9985 + 15.3 + 15.455 + 0.156 = 45.9095 J
grep -q '^ProfilerStep#0,1,.*,156,45\.9095,' "$T/k.csv" ||
	fail "ProfilerStep#0 on card 1 is not 45.9095 J: $(grep '^ProfilerStep#0,1' "$T/k.csv")"

expect_rc 0 steps --trace "$T/kineto.json" --steps --json
$CHECK "$T/samples" "$T/out" json --span $LO $HI "${KSTEPS[@]}"
python3 - "$T/out" "$T/kineto.json" <<'EOF' || fail "json shape"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["trace"] == sys.argv[2], d["trace"]
assert [s["step"] for s in d["steps"]][::2] == ["ProfilerStep#%d" % i for i in range(4)]
assert [t["device"] for t in d["total"]] == [0, 1]
assert d["steps"][4]["undersampled"] is True and d["steps"][0]["undersampled"] is False
assert d["steps"][7]["energy_J"] is None and d["steps"][7]["samples"] == 0
EOF

# the default without a terminal is csv; --output writes the file
expect_rc 0 steps --trace "$T/kineto.json" --steps
cmp -s "$T/out" "$T/k.csv" || fail "the default on a pipe is not the csv"
expect_rc 0 steps --trace "$T/kineto.json" --steps --csv --output "$T/o.csv"
[ ! -s "$T/out" ] && cmp -s "$T/o.csv" "$T/k.csv" || fail "--output differs"

# --device keeps one card
expect_rc 0 steps --trace "$T/kineto.json" --steps --csv --device 1
$CHECK "$T/samples" "$T/out" csv --span $LO $HI "${KSTEPS[@]}" --devices 1
[ "$(cut -d, -f2 "$T/out" | sort -u | tr '\n' ' ')" = "1 device " ] || fail "--device 1 kept other cards"

# the table on a terminal
if script -qec true /dev/null >/dev/null 2>&1; then
	script -qec "'$CLIENT' --db '$DB' export --trace '$T/kineto.json' --steps" /dev/null |
		tr -d '\r' >"$T/table"
	head -n 1 "$T/table" | grep -q '^STEP  *CARD  *START  *DUR  *SAMPLES  *POWER  *MAX  *ENERGY  *BUSY  *RDMEM  *WRMEM  *RXPCI  *TXPCI  *NOTE$' ||
		fail "table header: $(head -n 1 "$T/table")"
	sed -n 2p "$T/table" | grep -q '^  *ms  *W  *W  *J  *%  *GiB/s  *GiB/s  *GiB/s  *GiB/s$' ||
		fail "table units: $(sed -n 2p "$T/table")"
	grep -q '^ProfilerStep#0  *1  .*  45\.91  ' "$T/table" || fail "table: $(cat "$T/table")"
	grep -q '^ProfilerStep#2  *0 .* under-sampled$' "$T/table" || fail "table: no under-sampled note"
	grep -q '^ProfilerStep#3  *1 .* no samples$' "$T/table" || fail "table: no empty row"
	grep -q '^total  *1 ' "$T/table" || fail "table: no total"
	grep -q '^2 rows under-sampled: .*source.window_interval' "$T/table" || fail "table: no footnote"
	grep -q ' $' "$T/table" && fail "table: trailing blanks"
	python3 - "$T/table" <<'EOF' || fail "table rows are not aligned: $(cat "$T/table")"
import sys
lines = open(sys.argv[1]).read().split("\n")
end = lines[0].index("  NOTE")
for row in lines[2:12]:
    # numbers end where their header ends; the note, if any, follows
    assert row[end:] in ("", "  under-sampled", "  no samples"), row
    assert row[end - 1] != " " or row[end:] == "  no samples", row
EOF
else
	echo "note: no script(1) pty here; the table was not checked"
fi

# ---- --step-pattern, and a trace without steps ----
expect_rc 0 steps --trace "$T/kineto.json" --steps --csv --step-pattern 'train_[0-9]+'
$CHECK "$T/samples" "$T/out" csv --span $LO $HI \
	--step train_0 $((BASE + 2000000)) 100000000 --step train_1 $((BASE + 150000000)) 200000500
expect_rc 1 steps --trace "$T/kineto.json" --steps --step-pattern 'eval_[0-9]+'
grep -q -- "--step-pattern" "$T/err" || fail "no steps: --step-pattern not named: $(cat "$T/err")"
grep -v '"X", "name": "ProfilerStep\|train_' "$T/kineto.json" >"$T/nosteps.json"
expect_rc 1 steps --trace "$T/nosteps.json" --steps
grep -q "no steps.*--step-pattern" "$T/err" || fail "no steps: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "a trace without steps wrote: $(cat "$T/out")"

# ---- a bare array (no absolute time) placed with --trace-start ----
cat >"$T/legacy.json" <<'EOF'
[{"ph": "X", "name": "aten::add", "ts": 5, "dur": 700000, "pid": 7, "tid": 7},
 {"ph": "X", "name": "iteration_0", "ts": 10, "dur": 250000, "pid": 7, "tid": 7},
 {"ph": "X", "name": "iteration_1", "ts": 260000.001, "dur": 250000, "pid": 7, "tid": 7},
 {"ph": "X", "name": "iteration_2", "ts": 510000, "dur": 123456.789, "pid": 7, "tid": 7}]
EOF
expect_rc 1 steps --trace "$T/legacy.json" --steps
grep -q -- "--trace-start" "$T/err" || fail "legacy without --trace-start: $(cat "$T/err")"
START=$((BASE + 2000000000))
expect_rc 0 steps --trace "$T/legacy.json" --trace-start $START --steps --json
$CHECK "$T/samples" "$T/out" json --span $((START + 5000)) $((START + 700005000)) \
	--step iteration_0 $((START + 10000)) 250000000 \
	--step iteration_1 $((START + 260000001)) 250000000 \
	--step iteration_2 $((START + 510000000)) 123456789

# ---- no bandwidth values (group D not collected), then no such columns ----
DB2=$T/nobw.db
sed 's/ rdmem=.*//' "$T/samples" >"$T/samples2"
"$MKSAMPLES" "$DB2" <"$T/samples2" || fail "mksamples failed"
"$CLIENT" --db "$DB2" export --trace "$T/kineto.json" --steps --csv >"$T/out" 2>"$T/err" ||
	fail "no bandwidth: $(cat "$T/err")"
$CHECK "$T/samples2" "$T/out" csv --span $LO $HI "${KSTEPS[@]}"
grep -q "no values of rdmem, wrmem, rxpci, txpci during the trace" "$T/err" ||
	fail "no note of the missing values: $(cat "$T/err")"
sqlite3 "$DB2" "ALTER TABLE samples DROP COLUMN rdmem; DELETE FROM metrics WHERE key = 'rdmem';
	ALTER TABLE samples DROP COLUMN busy; DELETE FROM metrics WHERE key = 'busy'"
"$CLIENT" --db "$DB2" export --trace "$T/kineto.json" --steps --json >"$T/out" 2>"$T/err" ||
	fail "no rdmem column: $(cat "$T/err")"
sed 's/ busy=[0-9]*//' "$T/samples2" >"$T/samples3"
$CHECK "$T/samples3" "$T/out" json --span $LO $HI "${KSTEPS[@]}"

# ---- the real traces with steps, with samples made to cover them ----
[ -d "$TRACES" ] || fail "no real traces: $TRACES is missing"
for f in kineto-base-relative-amd.json.gz kineto-absolute-float-ns-unit.json.gz; do
	read -r first last nsteps < <(awk -F'|' -v OFS='|' -v f="$f" '
		{ gsub(/ /, "", $2) } $2 == f { gsub(/ /, ""); print $4 " " $5 " " $7 }' "$TRACES/README.md")
	[ -n "$nsteps" ] && [ "$nsteps" -gt 0 ] || fail "$f: no step count in the README"
	db=$T/$f.db
	# one card sampled every 1 ms, another every 7 ms, from before to after
	python3 - "$first" "$last" >"$T/$f.samples" <<'EOF'
import sys
first, last, ms = int(sys.argv[1]), int(sys.argv[2]), 1000000
for dev, ival in ((0, 1), (3, 7)):
    ts, k = first - 20 * ms + 123457, 0
    while ts - ival * ms < last + 20 * ms:
        print("%d %d %d pwr=%.1f busy=%d" % (ts, dev, ival,
              80 + (k * 37) % 200 / 10 + dev, (k * 13) % 101))
        ts += ival * ms
        k += 1
EOF
	"$MKSAMPLES" "$db" <"$T/$f.samples" || fail "mksamples failed"
	"$CLIENT" --db "$db" export --trace "$TRACES/$f" --steps --json >"$T/out" 2>"$T/err" ||
		fail "$f: $(cat "$T/err")"
	$CHECK "$T/$f.samples" "$T/out" json
	python3 - "$T/out" "$nsteps" "$first" "$last" <<'EOF' || fail "$f: not the README's steps"
import json, re, sys
d = json.load(open(sys.argv[1]))
n, first, last = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
names = [s["step"] for s in d["steps"]]
assert len(names) == 2 * n, (len(names), n)
assert all(re.fullmatch(r"ProfilerStep#[0-9]+", x) for x in names), names
for t in d["total"]:
    assert abs(t["start_ns"] - first) <= 1000, t
    assert abs(t["start_ns"] + round(t["dur_ms"] * 1e6) - last) <= 2000, t
for s in d["steps"]:
    assert first - 1000 <= s["start_ns"] <= last + 1000, s
EOF
	echo "$f: $nsteps steps, as in the README"
done
exit 0
