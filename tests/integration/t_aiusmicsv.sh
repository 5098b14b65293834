# aiu-smi's own CSV from a card read from both of its streams: the
# report's aiusmi.csv and `export --format aiusmi` of a window.
#
# The simulator writes 2 cards' metric files in the new format every 50 ms
# (its file log gives every update's time and pwr) and prints its CSV
# every 100 ms; the daemon reads the files every 100 ms.  So each card has
# two streams of rows at the same interval.  Read as aiu-smi's own output
# is read (Python's csv module with the '#' lines skipped, and pandas with
# comment='#' where it is installed), each output must have:
#  - aiu-smi's #MetricFiles block first, and no other '#' line;
#  - the header `aiu-smi-sim -s` prints for the same groups, exactly;
#  - as many cells in every row as in the header;
#  - one row per card per interval: as many rows as the window holds
#    intervals, within 1, and a row more at each end for the intervals
#    the window's begin and end cut (a row is exported when its interval
#    overlaps the window);
#  - in each row with a power value, the file's value at that tick (the
#    file row the simulator's log has at its stamp), and busy from
#    aiu-smi on the same row; a row without power only where no file row
#    was near.
# Then export_check.py checks the same exports, csv and jsonl, and csv
# --by-source against the database; --by-source with aiusmi is refused.
source "$(dirname "$0")/lib.sh"

need python3
SPY="$CLIENT -c $T/spyremond.yaml"
FLOG=$T/files.log
CHECK="python3 $ROOT/tests/integration/export_check.py"

write_config 2 100ms --write-metric-files --metric-format new \
	--file-interval 0.05 --file-log "$FLOG"
printf '  pre_window: 0s\n' >>"$T/spyremond.yaml"
FLUSH=200ms
start_daemon

file_rows_at_least() {
	[ "$(sqlite3 -readonly "file:$DB?mode=ro" \
	    "SELECT count(DISTINCT device) FROM samples WHERE src = 1" \
	    2>/dev/null || echo 0)" -ge "$1" ]
}
wait_for 30 file_rows_at_least 2 || fail "no file rows of both cards"
$SPY mark begin --tag csv >"$T/begin.out" 2>&1 || fail "mark begin: $(cat "$T/begin.out")"
sleep 3
$SPY mark end --tag csv --wait 10s >"$T/end.out" 2>&1 || fail "mark end: $(cat "$T/end.out")"
stop_daemon

read -r WB WE < <(sqlite3 -readonly "file:$DB?mode=ro" -separator ' ' \
	"SELECT begin_ns, end_ns FROM windows WHERE tag = 'csv'")
$SPY report --window csv --output "$T/report" >"$T/report.out" 2>&1 ||
	fail "report failed: $(cat "$T/report.out")"
$SPY export --window csv --format aiusmi >"$T/export.aiusmi" 2>"$T/export.err" ||
	fail "export --format aiusmi failed: $(cat "$T/export.err")"
cmp -s "$T/export.aiusmi" "$T/report/aiusmi.csv" ||
	fail "export --format aiusmi and the report's aiusmi.csv differ"
timeout 2 "$SIM" -s -g A --cards 2 -d 0.01 2>/dev/null | grep -m 1 '^ID,' >"$T/simheader" || true
[ -s "$T/simheader" ] || fail "no header from the simulator"

python3 - "$DB" "$FLOG" "$T/report/aiusmi.csv" "$T/simheader" "$WB" "$WE" <<'EOF' || fail "aiusmi.csv is not aiu-smi's CSV"
import csv, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
path, wb, we = sys.argv[3], int(sys.argv[5]), int(sys.argv[6])
ok = True
def bad(msg):
    global ok
    ok = False
    print("FAIL:", msg)

lines = open(path).read().splitlines()
# aiu-smi's comment lines: its #MetricFiles block, first, and nothing else
files = dict(db.execute("SELECT device, metric_file FROM device_map"))
block = ["#MetricFiles"] + ["# %d %s" % (d, files[d]) for d in sorted(files)]
if lines[:len(block)] != block:
    bad("aiusmi.csv does not begin with aiu-smi's #MetricFiles block: %r" % lines[:4])
extra = [l for l in lines[len(block):] if l.startswith("#")]
if extra:
    bad("comment lines aiu-smi does not print: %r" % extra[:3])

# read as aiu-smi's output is read: '#' lines skipped
rows = list(csv.reader(l for l in lines if not l.startswith("#")))
header, data = rows[0], rows[1:]
sim = next(csv.reader([open(sys.argv[4]).readline()]))
if header != sim:
    bad("header %r is not aiu-smi-sim's %r" % (header, sim))
for r in data:
    if len(r) != len(header):
        bad("a row of %d cells under a header of %d: %r" % (len(r), len(header), r))
        break
col = {k.split(" ")[0]: i for i, k in enumerate(header)}

# one row per card per interval, and the rows the window's ends cut
iv = 100
want = (we - wb) / (iv * 1e6)
by = {}
for r in data:
    by.setdefault(int(r[0]), []).append(r)
if sorted(by) != [0, 1]:
    bad("cards %s, not [0, 1]" % sorted(by))
for d, rs in sorted(by.items()):
    if not want - 1 <= len(rs) <= want + 2:
        bad("card %d: %d rows over %.2f intervals" % (d, len(rs), want))

# power: the file's value at each tick.  The ticks with a file row are
# the card's file rows overlapping the window, in order; the simulator's
# log says what it wrote at each of those stamps.
log = {}
for line in open(sys.argv[2]):
    ms, card, seq, pwr = map(int, line.split()[:4])
    log[(card, ms)] = pwr
checked = 0
for d, rs in sorted(by.items()):
    ticks = [ts for (ts,) in db.execute(
        "SELECT ts_ns FROM samples WHERE src = 1 AND device = ? AND ts_ns > ? "
        "AND ts_ns - interval_ms * 1000000 < ? ORDER BY ts_ns", (d, wb, we))]
    powered = [r for r in rs if r[col["pwr"]] != "-"]
    if len(powered) != len(ticks):
        bad("card %d: %d rows with power, %d file rows" % (d, len(powered), len(ticks)))
        continue
    # a row without power: an aiu-smi row with no file row near
    if len(rs) - len(powered) > 2:
        bad("card %d: %d rows without power" % (d, len(rs) - len(powered)))
    for r, ts in zip(powered, ticks):
        lt = time.localtime(ts // 10**9)
        if (r[1], r[2]) != (time.strftime("%Y%m%d", lt), time.strftime("%H:%M:%S", lt)):
            bad("card %d: a row at %s %s, its file row at %d" % (d, r[1], r[2], ts))
        w = log.get((d, ts // 1000000))
        if w is None or round(float(r[col["pwr"]]) * 10) != w:
            bad("card %d at %d: pwr %s, the file had %s tenths" % (d, ts, r[col["pwr"]], w))
        checked += 1
    busy = sum(1 for r in powered if r[col["busy"]] != "-")
    if busy < len(powered) - 3:
        bad("card %d: busy on %d of %d rows with power" % (d, busy, len(powered)))
if checked < 40:
    bad("only %d rows checked against the file log" % checked)

try:
    import pandas
except ImportError:
    print("note: pandas is not installed; read with the csv module only")
else:
    df = pandas.read_csv(path, comment="#")
    if list(df.columns) != header or len(df) != len(data):
        bad("pandas reads %d columns, %d rows: %r" % (len(df.columns), len(df), list(df.columns)[:4]))
print("aiusmi.csv: %d rows, %d power values checked against the file log" % (len(data), checked))
sys.exit(0 if ok else 1)
EOF

# the same exports against the database, by export_check.py's own pairing
$CHECK "$DB" aiusmi "$T/export.aiusmi" --span "$WB" "$WE" --min-rows 40 ||
	fail "export --format aiusmi differs from the database"
$SPY export --window csv >"$T/export.csv" 2>/dev/null || fail "export failed"
$CHECK "$DB" csv "$T/export.csv" --span "$WB" "$WE" --min-rows 40 ||
	fail "export differs from the database"
$SPY export --window csv --format jsonl >"$T/export.jsonl" 2>/dev/null ||
	fail "export --format jsonl failed"
$CHECK "$DB" jsonl "$T/export.jsonl" --span "$WB" "$WE" --min-rows 40 ||
	fail "export --format jsonl differs from the database"
$SPY export --window csv --by-source >"$T/bysource.csv" 2>/dev/null ||
	fail "export --by-source failed"
$CHECK "$DB" csv "$T/bysource.csv" --span "$WB" "$WE" --by-source --min-rows 80 ||
	fail "export --by-source differs from the database"
# a sample is one card at one time: --by-source has about twice the rows
n=$(($(wc -l <"$T/export.csv") - 1))
nb=$(($(wc -l <"$T/bysource.csv") - 1))
[ $((nb * 10)) -ge $((n * 18)) ] || fail "--by-source has $nb rows, the samples $n"
rc=0
$SPY export --window csv --format aiusmi --by-source >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "--by-source with aiusmi exited $rc, not 2"
grep -q -- "--by-source is for csv and jsonl" "$T/err" || fail "--by-source with aiusmi: $(cat "$T/err")"
# The window's first aiu-smi row pairs with a file row stamped before the
# window, as it would anywhere else: a database where each card's file
# row comes 61.18 ms before its aiu-smi row, and the window begins
# between them.  The sample so made has the file row's stamp, before the
# window, and is not written; no aiu-smi row is written alone, without
# the power the file had (which the loaded machine's phases once gave).
EDB=$T/edge.db
W=1760000000000000000
python3 - "$W" >"$T/edge.samples" <<'PY'
import sys
w = int(sys.argv[1])
ms = 10**6
for k in range(-3, 13):
    for d in (0, 1):
        print("file %d %d 100 pwr=%d.%d" % (w - 48450000 + k * 100 * ms, d, 60 + k, d))
        print("%d %d 100 pwr=999.0 busy=%d" % (w + 12730000 + k * 100 * ms, d, 40 + k))
print("window edge %d %d" % (w, w + 1000 * ms))
PY
"$ROOT/$B/tests/mksamples" "$EDB" <"$T/edge.samples" || fail "mksamples failed"
ESPY="$CLIENT --db $EDB"
$ESPY export --window edge --format aiusmi >"$T/edge.aiusmi" 2>"$T/edge.err" ||
	fail "export --format aiusmi of the edge failed: $(cat "$T/edge.err")"
$ESPY report --window edge --output "$T/edge.report" >"$T/edge.out" 2>&1 ||
	fail "report of the edge failed: $(cat "$T/edge.out")"
cmp -s "$T/edge.aiusmi" "$T/edge.report/aiusmi.csv" ||
	fail "the edge: export --format aiusmi and the report's aiusmi.csv differ"
python3 - "$T/edge.aiusmi" <<'PY' || fail "the edge's aiusmi rows are wrong"
import csv, sys
rows = list(csv.reader(l for l in open(sys.argv[1]) if not l.startswith("#")))
col = {k.split(" ")[0]: i for i, k in enumerate(rows[0])}
for d in ("0", "1"):
    rs = [r for r in rows[1:] if r[0] == d]
    # the file rows at 51.55 .. 1051.55 ms overlap the window: 11
    pwr = [r[col["pwr"]] for r in rs]
    want = ["%d.%s" % (61 + k, d) for k in range(11)]
    if pwr != want:
        sys.exit("card %s: pwr %s, not the file's %s" % (d, pwr, want))
    busy = [r[col["busy"]] for r in rs]
    if busy != [str(41 + k) for k in range(10)] + ["-"]:
        sys.exit("card %s: busy %s" % (d, busy))
print("the edge: 2 x 11 rows, each with the file's power")
PY
for f in aiusmi csv jsonl; do
	[ $f = aiusmi ] || $ESPY export --window edge --format $f >"$T/edge.$f" 2>/dev/null ||
		fail "export --format $f of the edge failed"
	$CHECK "$EDB" $f "$T/edge.$f" --span "$W" $((W + 1000000000)) --min-rows 22 ||
		fail "export --format $f of the edge differs from the database"
done

echo "ok: t_aiusmicsv"
