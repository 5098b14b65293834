#!/usr/bin/env bash
# spyremon export and windows on a database the daemon wrote from the
# simulator, with windows inserted directly (no control socket needed):
# exactly the rows whose interval overlaps the window, checked by
# export_check.py from the database; --pad, --metrics, --device; the three
# formats (aiusmi's header against the simulator's own, a jsonl round
# trip); --output and a failed --output; missing windows; a tag matching
# several windows and --all; a comma-decimal locale; a copied, read-only
# database read by an unprivileged user.
source "$(dirname "$0")/lib.sh"

CHECK="python3 $ROOT/tests/integration/export_check.py"

# spyremon with the test's config
spy() {
	"$CLIENT" -c "$T/spyremond.yaml" "$@"
}

# expect_rc RC COMMAND...: run COMMAND, which must exit RC; stderr in $T/err
expect_rc() {
	local want=$1 rc=0
	shift
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq "$want" ] || { cat "$T/err" >&2; fail "$* exited $rc, not $want"; }
}

sql() {
	sqlite3 "$DB" "$@"
}

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 20 rows_at_least 1 || fail "no row stored within 20s"
sleep 3
stop_daemon
[ "$(rows_in_db)" -ge 40 ] || fail "only $(rows_in_db) rows stored"

# ---- windows, placed among the samples at stamps that are not aligned ----
first=$(sql 'SELECT min(ts_ns) FROM samples')
last=$(sql 'SELECT max(ts_ns) FROM samples')
b1=$((first + 700000000 + 37123))
e1=$((b1 + 1234567891))
b2=$((first + 1500000000 + 5))
e2=$((b2 + 700000000))
b3=$((first + 400000000))
# (the daemon stopped: their samples are all there, so they are complete)
sql "INSERT INTO windows (id, tag, uid, pid, begin_ns, end_ns, meta, complete_ns) VALUES
	(1, 'alpha', 0, 100, $b1, $e1, '{\"commit\":\"abc123\",\"note\":\"two words\"}', $last),
	(2, 'alpha', 65534, 101, $b2, $e2, '{}', $last),
	(3, 'open', 0, 102, $b3, NULL, '{}', NULL),
	(4, 'early', 0, 103, $((first - 10000000000)), $((first - 9000000000)), '{}', $last)"

# ---- csv by id: exactly the overlapping rows ----
expect_rc 0 spy export --window 1
cp "$T/out" "$T/w1.csv"
$CHECK "$DB" csv "$T/w1.csv" --span $b1 $e1 --min-rows 20
head -n 1 "$T/w1.csv" | grep -q '^epoch_ns,time_utc,device,bus_id,interval_ms,pwr\|^epoch_ns,time_utc,device,bus_id,interval_ms,hostcpu' ||
	fail "csv header: $(head -n 1 "$T/w1.csv")"
rows=$(($(wc -l <"$T/w1.csv") - 1))

# --pad widens on both sides
expect_rc 0 spy export --window 1 --pad 350ms
$CHECK "$DB" csv "$T/out" --span $b1 $e1 --pad 350000000
padded=$(($(wc -l <"$T/out") - 1))
[ "$padded" -gt "$rows" ] || fail "--pad 350ms gave $padded rows, no more than $rows"

# --metrics and --device
expect_rc 0 spy export --window 1 --metrics busy,pwr --device 1
$CHECK "$DB" csv "$T/out" --span $b1 $e1 --metrics busy,pwr --devices 1
head -n 1 "$T/out" | grep -qx 'epoch_ns,time_utc,device,bus_id,interval_ms,busy,pwr' ||
	fail "--metrics header: $(head -n 1 "$T/out")"
expect_rc 2 spy export --window 1 --metrics pwr,nosuch
grep -q "unknown metric 'nosuch'" "$T/err" || fail "unknown metric not named: $(cat "$T/err")"
grep -q "known metrics:.*pwr" "$T/err" || fail "known metrics not listed"
expect_rc 2 spy export --window 1 --device x

# the same span by time gives the same rows
expect_rc 0 spy export --from $b1 --to $e1
cmp -s "$T/out" "$T/w1.csv" || fail "--from/--to differs from --window"

# ---- aiusmi: aiu-smi's #MetricFiles and header, parseable by Python's csv module ----
timeout 2 "$SIM" -s -g A --cards 1 -d 0.01 2>/dev/null | grep -m 1 '^ID,' >"$T/simheader" || true
[ -s "$T/simheader" ] || fail "no header from the simulator"
expect_rc 0 spy export --window 1 --format aiusmi
$CHECK "$DB" aiusmi "$T/out" --span $b1 $e1 --sim-header "$T/simheader"
expect_rc 0 spy export --window 1 --format aiusmi --metrics pwr,gtemp
grep -v '^#' "$T/out" | head -n 1 | grep -qx 'ID,Date (YYYYMMDD),Time (HH:MM:SS),pwr W,gtemp C' ||
	fail "aiusmi header with --metrics: $(grep -v '^#' "$T/out" | head -n 1)"
head -n 3 "$T/out" | tr '\n' '|' | grep -qx "#MetricFiles|# 0 $T/metrics.0000:13:00.0|# 1 $T/metrics.0000:14:00.0|" ||
	fail "aiusmi does not begin with aiu-smi's #MetricFiles block: $(head -n 3 "$T/out")"

# ---- jsonl: every value is the database's ----
expect_rc 0 spy export --window 1 --format jsonl
$CHECK "$DB" jsonl "$T/out" --span $b1 $e1 --window-ids 1

# ---- several windows with one tag ----
expect_rc 0 spy export --window alpha
grep -q "tag alpha matches 2 windows; exporting the newest (id 2); use --all for all" "$T/err" ||
	fail "no note about the newest window: $(cat "$T/err")"
$CHECK "$DB" csv "$T/out" --span $b2 $e2
expect_rc 0 spy export --window alpha --all
[ ! -s "$T/err" ] || fail "--all printed: $(cat "$T/err")"
$CHECK "$DB" csv "$T/out" --span $b1 $e1 --span $b2 $e2 --window-ids 1,2
expect_rc 0 spy export --window alpha --all --format jsonl
$CHECK "$DB" jsonl "$T/out" --span $b1 $e1 --span $b2 $e2 --window-ids 1,2
expect_rc 0 spy export --window alpha --all --format aiusmi
$CHECK "$DB" aiusmi "$T/out" --span $b1 $e1 --span $b2 $e2
[ "$(grep -c '^#window ' "$T/out")" -eq 2 ] || fail "aiusmi --all: not one #window line per window"

# an open window is exported up to now
expect_rc 0 spy export --window open
grep -q "still open" "$T/err" || fail "no note about the open window"
$CHECK "$DB" csv "$T/out" --span $b3 $(($(date +%s%N) + 60000000000))

# ---- windows that do not exist, or hold nothing ----
expect_rc 1 spy export --window 99
grep -q "no window 99" "$T/err" || fail "missing id: $(cat "$T/err")"
expect_rc 1 spy export --window nosuchtag
grep -q "no window is tagged 'nosuchtag'" "$T/err" || fail "missing tag: $(cat "$T/err")"
# a window before the oldest sample has lost all of its samples to retention
expect_rc 6 spy export --window early
[ "$(wc -l <"$T/out")" -eq 1 ] || fail "an empty window wrote more than the header"
grep -q "no samples in window 4 (early)" "$T/err" || fail "empty window: $(cat "$T/err")"
grep -q "window 4 (early): the samples from .* (all of it) were deleted by retention" "$T/err" ||
	fail "a deleted window is not named: $(cat "$T/err")"
expect_rc 2 spy export --window 1 --from $b1
expect_rc 2 spy export --from $e1 --to $b1
expect_rc 2 spy export --from yesterday-ish

# ---- --output: complete file, or none ----
expect_rc 0 spy export --window 1 --output "$T/o.csv"
[ ! -s "$T/out" ] || fail "--output also wrote to stdout"
cmp -s "$T/o.csv" "$T/w1.csv" || fail "--output differs from stdout"
# the text is complete but cannot become the file: no trace is left
mkdir "$T/isdir"
expect_rc 1 spy export --window 1 --output "$T/isdir"
[ -z "$(ls "$T/isdir")" ] || fail "a failed export wrote into the directory"
ls "$T" | grep -q '^isdir\.' && fail "a failed export left a temporary file: $(ls "$T")"
expect_rc 1 spy export --window 1 --output "$T/nodir/o.csv"
[ ! -e "$T/nodir" ] || fail "a directory appeared"
# a full disk is said once, with its reason
expect_rc 1 spy export --window 1 --output /dev/full
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "No space left on device" "$T/err" ||
	fail "--output /dev/full: $(cat "$T/err")"
rc=0
spy export --window 1 >/dev/full 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "export >/dev/full exited $rc"
[ "$(cat "$T/err")" = "spyremon: stdout: No space left on device" ] ||
	fail "export >/dev/full: $(cat "$T/err")"
# an existing file keeps its mode (and, as root, its owner and group)
echo old >"$T/kept.csv"
chmod 0604 "$T/kept.csv"
[ "$(id -u)" -eq 0 ] && chown 65534:65534 "$T/kept.csv"
before=$(stat -c '%a %u %g' "$T/kept.csv")
expect_rc 0 spy export --window 1 --output "$T/kept.csv"
cmp -s "$T/kept.csv" "$T/w1.csv" || fail "--output over a file differs"
[ "$(stat -c '%a %u %g' "$T/kept.csv")" = "$before" ] ||
	fail "--output over a file: $(stat -c '%a %u %g' "$T/kept.csv"), was $before"
# a symbolic link to a file is refused, and left alone
ln -s kept.csv "$T/link.csv"
expect_rc 1 spy export --window 1 --output "$T/link.csv"
grep -q "symbolic link" "$T/err" || fail "symlink: $(cat "$T/err")"
[ -L "$T/link.csv" ] || fail "the symlink was replaced"

# ---- windows: samples per window as the database has them ----
expect_rc 0 spy windows
head -n 1 "$T/out" | grep -q '^ID  *TAG  *USER  *BEGIN  *END  *DURATION  *SAMPLES  *ENERGY_J  *META$' ||
	fail "windows header: $(head -n 1 "$T/out")"
grep -q '^1 .*alpha .*root .*commit=abc123 note="two words"$' "$T/out" ||
	fail "windows: row 1 wrong: $(grep '^1 ' "$T/out")"
grep -q '^2 .*alpha .*nobody ' "$T/out" || fail "windows: uid 65534 not shown as nobody"
grep -q '^3 .* open ' "$T/out" || fail "windows: window 3 not open"
n1=$(sql "SELECT count(*) FROM samples WHERE ts_ns > $b1 AND ts_ns - interval_ms * 1000000 < $e1")
grep -q "^1 .* $n1  *[-0-9.]*  *commit=" "$T/out" || fail "windows: window 1 should count $n1 samples"
expect_rc 0 spy windows --json
python3 - "$T/out" "$DB" <<'EOF' || fail "windows --json is wrong"
import json, sqlite3, sys, time
ws = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
assert [w["id"] for w in ws] == [4, 3, 1, 2], [w["id"] for w in ws]
for w in ws:
    b, e = db.execute("SELECT begin_ns, end_ns FROM windows WHERE id = ?", (w["id"],)).fetchone()
    assert (w["begin_ns"], w["end_ns"], w["open"]) == (b, e, e is None), (w, b, e)
    n = db.execute("SELECT count(*) FROM samples WHERE ts_ns > ? AND ts_ns - interval_ms * 1000000 < ?",
                   (b, e if e is not None else time.time_ns())).fetchone()[0]
    assert w["samples"] == n, (w, n)
assert ws[0]["samples"] == 0 and ws[2]["samples"] > 0
assert ws[2]["meta"] == {"commit": "abc123", "note": "two words"}
assert ws[3]["user"] == "nobody" and ws[3]["uid"] == 65534
EOF
expect_rc 0 spy windows --json --tag alpha
python3 -c 'import json, sys; assert [w["id"] for w in json.load(open(sys.argv[1]))] == [1, 2]' "$T/out" ||
	fail "windows --tag alpha"
expect_rc 0 spy windows --since $((e1 + 1))
grep -q '^1 ' "$T/out" && fail "--since kept a window that ended before it"
grep -q '^3 ' "$T/out" || fail "--since dropped the open window"

# ---- the locale does not change a byte ----
mkdir -p "$T/locale"
if localedef -i de_DE -f UTF-8 "$T/locale/de_DE.UTF-8" >/dev/null 2>&1 &&
    [ "$(LOCPATH=$T/locale LC_ALL=de_DE.UTF-8 /usr/bin/printf '%.1f' 1.5)" = "1,5" ]; then
	for f in csv aiusmi jsonl; do
		spy export --window 1 --format $f >"$T/c.$f"
		LOCPATH=$T/locale LC_ALL=de_DE.UTF-8 "$CLIENT" -c "$T/spyremond.yaml" \
			export --window 1 --format $f >"$T/de.$f"
		cmp -s "$T/c.$f" "$T/de.$f" || fail "$f export differs under de_DE.UTF-8"
	done
	LOCPATH=$T/locale LC_ALL=de_DE.UTF-8 "$CLIENT" -c "$T/spyremond.yaml" \
		export --window 1 --metrics pwr | grep -q ',[0-9]*,[0-9]*$' &&
		fail "comma decimals under de_DE.UTF-8"
else
	echo "note: no de_DE.UTF-8 locale could be made here; locale check skipped"
fi

# ---- a copy, read-only, read by an unprivileged user ----
mkdir "$T/copy"
cp "$DB" "$T/copy/host7.db"
# ---- a window whose oldest samples retention deleted: said, exit 6 ----
cp "$DB" "$T/copy/pruned.db"
b5=$((first + 100000000))
cut=$((first + 2600000000))
sqlite3 "$T/copy/pruned.db" "INSERT INTO windows (id, tag, uid, pid, begin_ns,
	end_ns, meta, complete_ns) VALUES (5, 'long', 0, 104, $b5, $last, '{}', $last);
	DELETE FROM samples WHERE ts_ns < $cut"
rc=0
"$CLIENT" --db "$T/copy/pruned.db" export --window 5 >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 6 ] || { cat "$T/err"; fail "export of a partly deleted window exited $rc, not 6"; }
grep -q "window 5 (long): the samples from .* to .* were deleted by retention" "$T/err" ||
	fail "the deleted span is not named: $(cat "$T/err")"
grep -q "(all of it)" "$T/err" && fail "part of window 5 said to be all of it"
[ "$(($(wc -l <"$T/out") - 1))" -gt 0 ] || fail "the samples left were not exported"
$CHECK "$T/copy/pruned.db" csv "$T/out" --span $b5 $last --min-rows 5
# a window after the cut is whole, and not flagged
late=$((cut + 300000000))
sqlite3 "$T/copy/pruned.db" "INSERT INTO windows (id, tag, uid, pid, begin_ns,
	end_ns, meta, complete_ns) VALUES (6, 'late', 0, 105, $late, $last, '{}', $last)"
"$CLIENT" --db "$T/copy/pruned.db" export --window 6 >"$T/out" 2>"$T/err" ||
	fail "export of a whole window: $(cat "$T/err")"
"$CLIENT" --db "$T/copy/host7.db" export --window 1 >"$T/out" ||
	fail "export from a copied database failed"
cmp -s "$T/out" "$T/w1.csv" || fail "export from a copy differs"
# a reader that may not write the directory, with no -wal file present
mkdir "$T/ro"
cp "$DB" "$T/ro/host7.db"
chmod 0444 "$T/ro/host7.db"
chmod 0555 "$T/ro"
chmod 0755 "$T"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid nobody --regid nogroup --clear-groups \
		"$CLIENT" --db "$T/ro/host7.db" export --window 1 >"$T/out" 2>"$T/err" ||
		{ cat "$T/err"; fail "nobody cannot export from a read-only copy"; }
	cmp -s "$T/out" "$T/w1.csv" || fail "nobody's export differs"
	ls "$T/ro" | grep -qv '^host7.db$' && fail "the reader created files: $(ls "$T/ro")"
	# a write that fails half-way (the file size limit) leaves the old file
	mkdir -m 0777 "$T/outdir"
	# someone else's file is not replaced by a file of nobody's
	echo old >"$T/outdir/o.jsonl"
	chmod 0666 "$T/outdir/o.jsonl"
	rc=0
	setpriv --reuid nobody --regid nogroup --clear-groups \
		"$CLIENT" --db "$T/ro/host7.db" export --window 1 \
		--output "$T/outdir/o.jsonl" 2>"$T/err" || rc=$?
	[ $rc -eq 1 ] || fail "replacing root's file as nobody exited $rc, not 1"
	grep -q "belongs to uid 0" "$T/err" || fail "root's file: $(cat "$T/err")"
	[ "$(cat "$T/outdir/o.jsonl")" = old ] || fail "root's file was changed"
	chown nobody:nogroup "$T/outdir/o.jsonl"
	rc=0
	setpriv --reuid nobody --regid nogroup --clear-groups \
		prlimit --fsize=1024 "$CLIENT" --db "$T/ro/host7.db" export \
		--window 1 --format jsonl --output "$T/outdir/o.jsonl" 2>"$T/err" || rc=$?
	[ $rc -eq 1 ] || { cat "$T/err"; fail "an export over the file size limit exited $rc, not 1"; }
	grep -q "File too large" "$T/err" || fail "no reason for the failed write: $(cat "$T/err")"
	[ "$(cat "$T/outdir/o.jsonl")" = old ] || fail "a failed export changed the existing file"
	[ "$(ls "$T/outdir")" = o.jsonl ] || fail "a failed export left files: $(ls "$T/outdir")"
	chmod 0400 "$T/ro/host7.db"
	rc=0
	setpriv --reuid nobody --regid nogroup --clear-groups \
		"$CLIENT" --db "$T/ro/host7.db" windows >/dev/null 2>"$T/err" || rc=$?
	[ $rc -eq 4 ] || fail "an unreadable database exited $rc, not 4"
	grep -q "Permission denied" "$T/err" || fail "unreadable database: $(cat "$T/err")"
else
	"$CLIENT" --db "$T/ro/host7.db" export --window 1 >"$T/out"
	cmp -s "$T/out" "$T/w1.csv" || fail "export from a read-only copy differs"
	echo "note: not root; the read-only copy was read as $(id -un)"
fi
chmod 0755 "$T/ro"
expect_rc 4 "$CLIENT" --db "$T/copy/none.db" export --window 1
expect_rc 4 "$CLIENT" --db "$T/spyremond.yaml" windows
exit 0
