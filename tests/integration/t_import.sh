#!/usr/bin/env bash
# spyremon import: an aiu-smi CSV log written by the simulator in Berlin
# time is imported with --tz (every value and stamp checked against the
# CSV through sample_values), or with TZ, or in the wrong zone; exports of
# its samples say they are coarse (stderr note, csv column, jsonl key;
# aiusmi, aiu-smi's own text, on stderr alone); bad lines are reported by line and import nothing; an
# unknown zone, a missing and an empty file are refused; a second import
# of the same rows is refused; an import into the database of the running
# daemon; and the round trip export csv -> import -> export is byte for
# byte, for the daemon's samples and for a mix of coarse and fine ones.
source "$(dirname "$0")/lib.sh"

spy() {
	"$CLIENT" -c "$T/spyremond.yaml" "$@"
}

# expect_rc RC COMMAND...: run COMMAND, which must exit RC; stdout in
# $T/out, stderr in $T/err
expect_rc() {
	local want=$1 rc=0
	shift
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq "$want" ] || { cat "$T/err" >&2; fail "$* exited $rc, not $want"; }
}

err_has() {
	grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1': $(cat "$T/err")"
}

q() {
	sqlite3 "file:$1?mode=ro" "$2"
}

# ---- the daemon samples devices 0 and 1; the simulator logs 0,1 and 2,3 ----
FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
# aiu-smi -s -f FILE, 1 s apart, exiting (status 0) after the rows asked for
TZ=Europe/Berlin "$SIM" -s -d 1 --cards 2 --exit-after 10 -f "$T/log.csv" &
sim1=$!
TZ=Europe/Berlin "$SIM" -s -d 1 --cards 4 -i 2,3 --exit-after 6 -f "$T/log23.csv" &
sim2=$!
wait $sim1 || fail "simulator failed"
wait $sim2 || fail "simulator failed"
rows=$(grep -c '^[0-9]' "$T/log.csv")
[ "$rows" -eq 10 ] || fail "the simulator wrote $rows rows, not 10"
grep -q '^3,.*,-,-$' "$T/log23.csv" || fail "device 3 has RDMA values: $(cat "$T/log23.csv")"

# ---- into the running daemon's database (the config's) ----
before=$(rows_in_db)
expect_rc 0 spy import --tz Europe/Berlin "$T/log23.csv"
grep -q "^imported 6 rows of devices 2, 3 from $T/log23.csv into $DB" "$T/out" ||
	fail "summary: $(cat "$T/out")"
wait_for 10 rows_at_least $((before + 6 + 10)) || fail "the daemon stopped writing after the import"
log_has "dropping the oldest rows" && fail "the daemon lost rows during the import"
stop_daemon
[ "$(q "$DB" 'SELECT count(*) FROM samples WHERE device IN (2, 3)')" -eq 6 ] ||
	fail "the import did not land in the daemon's database"
[ "$(q "$DB" 'SELECT count(*) FROM samples WHERE device = 3 AND rdrdma IS NULL')" -eq 3 ] ||
	fail "'-' is not NULL"
# again: the same rows are refused, naming the first
first23=$(grep -n -m 1 '^[0-9]' "$T/log23.csv" | cut -d: -f1)
expect_rc 1 spy import --tz Europe/Berlin "$T/log23.csv"
err_has "log23.csv:$first23: device 2 at "
err_has "is already in $DB; refusing to import it again"
err_has "nothing imported"
[ "$(q "$DB" 'SELECT count(*) FROM samples WHERE device IN (2, 3)')" -eq 6 ] ||
	fail "a refused import changed the database"
[ "$(q "$DB" 'SELECT count(*) FROM imports')" -eq 2 ] || fail "imports has not 2 rows"

# ---- a new database, in Berlin time ----
A=$T/a.db
expect_rc 0 "$CLIENT" import --tz Europe/Berlin --db "$A" "$T/log.csv"
grep -q "^imported 10 rows of devices 0, 1 from $T/log.csv into $A" "$T/out" ||
	fail "summary: $(cat "$T/out")"
grep -q "interval 1s (inferred from the stamps)" "$T/out" || fail "no inferred interval: $(cat "$T/out")"
grep -q "coarse: aiu-smi's whole-second local times, read in Europe/Berlin" "$T/out" ||
	fail "summary does not say coarse: $(cat "$T/out")"
[ "$(q "$A" 'SELECT count(*) FROM samples')" -eq "$rows" ] || fail "row count"
schema=$(sed -n 's/^#define SCHEMA_VERSION \([0-9]*\).*/\1/p' "$ROOT/query/schema.h")
[ "$(q "$A" 'PRAGMA user_version')" -eq "$schema" ] || fail "schema version"
python3 - "$T/log.csv" "$A" Europe/Berlin <<'EOF' || fail "imported values differ from the CSV"
import csv, sqlite3, sys
from datetime import datetime
from zoneinfo import ZoneInfo
log, dbpath, zone = sys.argv[1:]
db = sqlite3.connect(f"file:{dbpath}?mode=ro", uri=True)
lines = [l for l in open(log) if not l.startswith("#")]
rows = list(csv.reader(lines))
keys = [c.split()[0] for c in rows[0]]
checked = 0
for r in rows[1:]:
    d = dict(zip(keys, r))
    when = datetime.strptime(d["Date"] + d["Time"], "%Y%m%d%H:%M:%S")
    ts = int(when.replace(tzinfo=ZoneInfo(zone)).timestamp()) * 10**9
    got = dict(db.execute("SELECT metric, value FROM sample_values WHERE "
                          "ts_ns = ? AND device = ?", (ts, int(d["ID"]))))
    want = {k: float(v) for k, v in d.items()
            if k not in ("ID", "Date", "Time") and v != "-"}
    if got != want:
        sys.exit(f"{d['ID']} {d['Date']} {d['Time']}: {got} != {want}")
    checked += 1
(iv,) = db.execute("SELECT DISTINCT interval_ms FROM samples").fetchone()
assert iv == 1000, iv
bus = dict(db.execute("SELECT device, bus_id FROM device_map"))
assert bus == {0: "0000:13:00.0", 1: "0000:14:00.0"}, bus
imp = db.execute("SELECT device, format, coarse, first_ns, last_ns FROM imports "
                 "ORDER BY device").fetchall()
span = db.execute("SELECT device, min(ts_ns), max(ts_ns) FROM samples "
                  "GROUP BY device ORDER BY device").fetchall()
assert [(d, f, c) for d, f, c, _, _ in imp] == [(0, "aiusmi", 1), (1, "aiusmi", 1)], imp
assert [(d, a, b) for d, _, _, a, b in imp] == span, (imp, span)
assert checked == len(rows) - 1
EOF

# TZ is honoured without --tz; the wrong zone moves every stamp
expect_rc 0 env TZ=Europe/Berlin "$CLIENT" import --db "$T/tz.db" "$T/log.csv"
[ "$(q "$T/tz.db" 'SELECT group_concat(ts_ns) FROM samples')" = \
  "$(q "$A" 'SELECT group_concat(ts_ns) FROM samples')" ] || fail "TZ=Europe/Berlin differs from --tz"
expect_rc 0 "$CLIENT" import --tz UTC --db "$T/utc.db" "$T/log.csv"
off=$(python3 -c 'import sys; from datetime import datetime; from zoneinfo import ZoneInfo
print(int(datetime.fromtimestamp(int(sys.argv[1]) // 10**9, ZoneInfo("Europe/Berlin")).utcoffset().total_seconds()))' \
	"$(q "$A" 'SELECT min(ts_ns) FROM samples')")
[ $(( $(q "$T/utc.db" 'SELECT min(ts_ns) FROM samples') - $(q "$A" 'SELECT min(ts_ns) FROM samples') )) \
	-eq $((off * 1000000000)) ] || fail "--tz UTC is not $off s off Berlin"
# --device-map names a bus ID the log lacks or replaces one
expect_rc 0 "$CLIENT" import --tz Europe/Berlin --device-map 0=0000:aa:00.0 --db "$T/dm.db" "$T/log.csv"
[ "$(q "$T/dm.db" 'SELECT group_concat(device || "=" || bus_id) FROM device_map')" = \
  "0=0000:aa:00.0,1=0000:14:00.0" ] || fail "--device-map: $(q "$T/dm.db" 'SELECT * FROM device_map')"
# --interval instead of the inferred one
expect_rc 0 "$CLIENT" import --tz Europe/Berlin --interval 2s --db "$T/iv.db" "$T/log.csv"
[ "$(q "$T/iv.db" 'SELECT DISTINCT interval_ms FROM samples')" = 2000 ] || fail "--interval 2s"

# ---- exports of coarse samples say so ----
lo=$(( $(q "$A" 'SELECT min(ts_ns) FROM samples') - 5000000000 ))
hi=$(( $(q "$A" 'SELECT max(ts_ns) FROM samples') + 5000000000 ))
expect_rc 0 "$CLIENT" export --db "$A" --from $lo --to $hi
err_has "spyremon: $rows samples of this export were imported from an aiu-smi log: whole-second local times (coarse)"
[ "$(grep -c 'coarse' "$T/err")" -eq 1 ] || fail "not one note: $(cat "$T/err")"
head -n 1 "$T/out" | grep -q ',coarse$' || fail "csv header lacks coarse: $(head -n 1 "$T/out")"
[ "$(grep -c ',1$' "$T/out")" -eq "$rows" ] || fail "csv rows are not all coarse"
expect_rc 0 "$CLIENT" export --db "$A" --from $lo --to $hi --device 1 --format jsonl
err_has "spyremon: $((rows / 2)) samples of this export"
[ "$(grep -c '"interval_ms":1000,"coarse":true,"values"' "$T/out")" -eq $((rows / 2)) ] ||
	fail "jsonl rows lack \"coarse\":true: $(head -n 1 "$T/out")"
expect_rc 0 "$CLIENT" export --db "$A" --from $lo --to $hi --format aiusmi
err_has "spyremon: $rows samples of this export were imported from an aiu-smi log"
grep -q '^#coarse' "$T/out" && fail "aiusmi has a line aiu-smi does not print: $(grep '^#coarse' "$T/out")"
[ "$(grep -c '^[0-9]' "$T/out")" -eq "$rows" ] || fail "aiusmi has not $rows rows"

# ---- bad input: every bad line by number, nothing imported ----
hdr=$(grep -n -m 1 '^ID,' "$T/log.csv" | cut -d: -f1)
ncells=$(sed -n "${hdr}p" "$T/log.csv" | awk -F, '{ print NF }')
sed "$((hdr + 2))a garbage,line" "$T/log.csv" >"$T/bad.csv"
sed -i "$((hdr + 5))s/^\([0-9]*,[0-9]*,[0-9:]*,\)[^,]*/\1x.y/" "$T/bad.csv"
sed -i "$((hdr + 6))s/^\([0-9]*,\)[0-9]*/\120261341/" "$T/bad.csv"
expect_rc 1 "$CLIENT" import --tz Europe/Berlin --db "$T/bad.db" "$T/bad.csv"
err_has "bad.csv:$((hdr + 3)): expected $ncells cells, got 2"
err_has "bad.csv:$((hdr + 5)): column 'hostcpu': not a number: \"x.y\""
err_has "bad.csv:$((hdr + 6)): column 'Date': not a date (YYYYMMDD): \"20261341\""
err_has "bad.csv: 3 bad lines; nothing imported"
[ ! -e "$T/bad.db" ] || fail "a failed import left a database"
# a row out of time order
{ sed -n "1,$((hdr + 2))p" "$T/log.csv"
  sed -n "$((hdr + 1))p" "$T/log.csv" | sed -E 's/^([0-9]+,[0-9]+,)[0-9:]+/\100:00:00/'; } >"$T/back.csv"
expect_rc 1 "$CLIENT" import --tz Europe/Berlin --db "$T/bad.db" "$T/back.csv"
err_has "back.csv:$((hdr + 3)): device 0 at "
err_has "is before line $((hdr + 1)) ("
err_has "the rows go back in time (was the clock set back, or is --tz wrong?)"
# the zone, the file
expect_rc 2 "$CLIENT" import --tz Mars/Olympus --db "$T/bad.db" "$T/log.csv"
err_has "--tz Mars/Olympus: not a time zone"
expect_rc 2 env TZ=Mars/Olympus "$CLIENT" import --db "$T/bad.db" "$T/log.csv"
err_has "TZ=Mars/Olympus: not a time zone"
expect_rc 1 "$CLIENT" import --db "$T/bad.db" "$T/nosuch.csv"
err_has "cannot open $T/nosuch.csv: No such file or directory"
: >"$T/empty.csv"
expect_rc 1 "$CLIENT" import --db "$T/bad.db" "$T/empty.csv"
err_has "empty.csv: empty: no header line"
grep '^#' "$T/log.csv" >"$T/comments.csv"
expect_rc 1 "$CLIENT" import --db "$T/bad.db" "$T/comments.csv"
err_has "comments.csv: only comments: no header line"
echo "when,what" >"$T/other.csv"
expect_rc 1 "$CLIENT" import --db "$T/bad.db" "$T/other.csv"
err_has "other.csv:1: not a header of aiu-smi's CSV"
[ ! -e "$T/bad.db" ] || fail "a failed import left a database"
expect_rc 2 "$CLIENT" import --db "$T/bad.db"
expect_rc 2 "$CLIENT" import --interval 500ms --db "$T/bad.db" "$T/log.csv"

# ---- round trip: the daemon's samples of a window ----
first=$(q "$DB" 'SELECT min(ts_ns) FROM samples WHERE device = 0')
b1=$((first + 700000000 + 37123))
e1=$((b1 + 1234567891))
b2=$((b1 + 500000000))
e2=$((b2 + 1500000000))
sqlite3 "$DB" "INSERT INTO windows (id, tag, uid, pid, begin_ns, end_ns, complete_ns)
	VALUES (1, 'alpha', 0, 100, $b1, $e1, $e2), (2, 'alpha', 0, 100, $b2, $e2, $e2)"
expect_rc 0 spy export --window 1 --device 0,1 --output "$T/w1.csv"
[ ! -s "$T/err" ] || fail "a window of the daemon's samples is noted: $(cat "$T/err")"
head -n 1 "$T/w1.csv" | grep -q ',coarse$' && fail "the daemon's csv has a coarse column"
[ "$(wc -l <"$T/w1.csv")" -gt 20 ] || fail "too few rows in window 1"
expect_rc 0 "$CLIENT" import --db "$T/rt1.db" "$T/w1.csv"
grep -q "not coarse" "$T/out" || fail "summary: $(cat "$T/out")"
expect_rc 0 "$CLIENT" export --db "$T/rt1.db" --from $b1 --to $e1 --output "$T/w1b.csv"
cmp "$T/w1.csv" "$T/w1b.csv" || fail "csv round trip of window 1 differs"
expect_rc 0 "$CLIENT" export --db "$T/rt1.db" --from $b1 --to $e1 --format jsonl
cp "$T/out" "$T/rt1.jsonl"
expect_rc 0 spy export --from $b1 --to $e1 --device 0,1 --format jsonl
cmp "$T/out" "$T/rt1.jsonl" || fail "jsonl of the imported csv differs"

# the same samples for two overlapping windows (--all): imported once
expect_rc 0 spy export --window alpha --all --output "$T/all.csv"
expect_rc 0 "$CLIENT" import --db "$T/rt2.db" "$T/all.csv"
n=$(sqlite3 "$DB" "SELECT count(*) FROM samples WHERE ts_ns > $b1 AND ts_ns - interval_ms * 1000000 < $e2")
[ "$(q "$T/rt2.db" 'SELECT count(*) FROM samples')" -eq "$n" ] || fail "--all: not $n rows"
grep -q "repeated rows (one sample exported for several spans) imported once" "$T/out" ||
	fail "summary: $(cat "$T/out")"

# ---- round trip: coarse and fine samples mixed, the coarse column too ----
lo=$(( $(q "$DB" 'SELECT min(ts_ns) FROM samples WHERE device = 2') - 1500000000 ))
hi=$(( $(q "$DB" 'SELECT max(ts_ns) FROM samples WHERE device = 2') + 500000000 ))
expect_rc 0 spy export --from $lo --to $hi --output "$T/mix.csv"
err_has "spyremon: 6 samples of this export were imported"
grep -q '^[0-9]*,[^,]*,0,.*,0$' "$T/mix.csv" || fail "no fine row of device 0"
[ "$(grep -c '^[0-9]*,[^,]*,[23],.*,1$' "$T/mix.csv")" -eq 6 ] || fail "not 6 coarse rows"
expect_rc 0 "$CLIENT" import --db "$T/rt3.db" "$T/mix.csv"
grep -q "coarse: 6 of the rows" "$T/out" || fail "summary: $(cat "$T/out")"
expect_rc 0 "$CLIENT" export --db "$T/rt3.db" --from $lo --to $hi --output "$T/mix2.csv"
err_has "spyremon: 6 samples of this export were imported"
cmp "$T/mix.csv" "$T/mix2.csv" || fail "csv round trip of mixed samples differs"
# the fine samples alone: no column, no note
expect_rc 0 "$CLIENT" export --db "$T/rt3.db" --from $lo --to $hi --device 0,1
[ ! -s "$T/err" ] || fail "fine samples are noted: $(cat "$T/err")"
head -n 1 "$T/out" | grep -q ',coarse$' && fail "fine samples have a coarse column"
# importing the mix again overlaps what is there
expect_rc 1 "$CLIENT" import --db "$T/rt3.db" "$T/mix.csv"
err_has "is already in $T/rt3.db; refusing to import it again"
# ---- every unit of the header is kept, or the import refused ----
# each header cell's unit is the catalog's after the import: none dropped
expect_rc 0 "$CLIENT" import --tz UTC --db "$T/units.db" "$T/log.csv"
grep '^ID,' "$T/log.csv" | head -n 1 | tr ',' '\n' | tail -n +4 >"$T/units.want"
sqlite3 -separator ' ' "$T/units.db" "SELECT key, unit FROM metrics ORDER BY id" \
    >"$T/units.got"
missing=$(grep -vxF -f "$T/units.got" "$T/units.want" || true)
[ -z "$missing" ] || fail "units not in the catalog as the header gave them: $missing"
# a known key in another unit: the value would be stored under spyremon's
sed 's/,pwr W,/,pwr mW,/; s/,busy %,/,busy pct,/' "$T/log.csv" >"$T/units-mw.csv"
expect_rc 1 "$CLIENT" import --tz UTC --db "$T/units2.db" "$T/units-mw.csv"
hl=$(grep -n '^ID,' "$T/units-mw.csv" | head -n 1 | cut -d: -f1)
err_has "units-mw.csv:$hl: metric 'pwr' in 'mW': spyremon stores pwr in 'W'"
err_has "units-mw.csv:$hl: metric 'busy' in 'pct'"
[ ! -e "$T/units2.db" ] || fail "a refused import left $T/units2.db"
# a new key: its unit is the header's; another file's other unit is refused
sed 's/,pwr W,/,xpwr kW,/' "$T/log.csv" >"$T/units-x.csv"
expect_rc 0 "$CLIENT" import --tz UTC --db "$T/units3.db" "$T/units-x.csv"
[ "$(q "$T/units3.db" "SELECT unit FROM metrics WHERE key = 'xpwr'")" = kW ] ||
	fail "xpwr: unit $(q "$T/units3.db" "SELECT unit FROM metrics WHERE key = 'xpwr'")"
sed 's/,pwr W,/,xpwr MW,/' "$T/log23.csv" >"$T/units-x2.csv"
expect_rc 1 "$CLIENT" import --tz UTC --db "$T/units3.db" "$T/units-x2.csv"
err_has "metric 'xpwr' in 'MW': $T/units3.db holds xpwr in 'kW'; nothing imported"
echo "units: ok"
exit 0
