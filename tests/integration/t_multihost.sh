#!/usr/bin/env bash
# Many hosts, one answer: two real daemons on the simulator, each in its
# own UTS namespace with its own host name (unshare --uts: the daemon
# records gethostname(2) in its database, no seam), two databases, and
# two ranks' traces made from a real trace (tests/data/traces) placed in
# the time the daemons collected.
#   - export --db A --db B --trace r0 --trace r1 with --host-map gives each
#     rank exactly the rows of its own host, equal to a single-database
#     export of that host (csv and jsonl, each row with its host);
#   - a swapped map gives the other host's rows;
#   - without a map the traces cannot be matched: exit 2, naming both
#     traces and both databases; a map to an unknown host too;
#   - traces that record their host (a host_name header, or a Kineto file
#     name HOST_PID.TIME.pt.trace.json) match without a map;
#   - --steps over both ranks (csv with host,rank; json array);
#   - summary and export --window over both databases (a window of one
#     tag on each host);
#   - --merge-dir writes one merged trace per rank, --merge one combined
#     trace: both checked event by event in python (multihost_check.py).
source "$(dirname "$0")/lib.sh"

need python3
need sqlite3
unshare --uts true 2>/dev/null ||
	{ echo "SKIP: unshare --uts is not allowed here (needs root)"; exit 77; }
CHECK=$ROOT/tests/integration/multihost_check.py
SRC_TRACE=$ROOT/tests/data/traces/kineto-base-relative-cpu-only.json.gz
HA=rank-host-a
HB=rank-host-b

# ---- two daemons, two hosts ----
write_config 2 100ms
for h in a b; do
	sed -e "s|$T/spyremon.db|$T/$h.db|" -e "s|$T/control.sock|$T/$h.sock|" \
	    -e "s|\"7\"|\"$([ $h = a ] && echo 7 || echo 11)\"|" \
	    -e "s|$STAMPS|$T/stamps-$h.log|" "$T/spyremond.yaml" >"$T/$h.yaml"
done
grep -q '"11"' "$T/b.yaml" || fail "the second config kept the first seed"
PIDS=()
for h in a b; do
	name=$HA
	[ $h = b ] && name=$HB
	unshare --uts sh -c 'hostname "$1" && exec "$2" -v -c "$3"' sh "$name" \
	    "$DAEMON" "$T/$h.yaml" >>"$T/daemon-$h.log" 2>&1 &
	PIDS+=($!)
done
stop_all() {
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	PIDS=()
}
trap 'stop_all; cleanup' EXIT
rows() { sqlite3 -readonly "file:$1?mode=ro" 'SELECT count(*) FROM samples' 2>/dev/null || echo 0; }
both_rows() { [ "$(rows "$T/a.db")" -ge 10 ] && [ "$(rows "$T/b.db")" -ge 10 ]; }
wait_for 20 both_rows || fail "the daemons stored no samples: $(cat "$T"/daemon-*.log)"
for h in a b; do
	want=$HA
	[ $h = b ] && want=$HB
	got=$(sqlite3 -readonly "file:$T/$h.db?mode=ro" 'SELECT hostname FROM host')
	[ "$got" = "$want" ] || fail "$h.db records host '$got', not $want"
done
echo "ok: two daemons record hosts $HA and $HB"

# ---- a window on each host; two ranks' traces, 0.6 s and 0.8 s from now ----
for h in a b; do
	"$CLIENT" --socket "$T/$h.sock" mark begin --tag job-4711 >/dev/null ||
		fail "mark begin on $h"
done
T0=$(( $(date +%s%N) + 600000000 ))
python3 "$CHECK" make-trace "$SRC_TRACE" "$T/r0.json" 0 "$T0" ""
python3 "$CHECK" make-trace "$SRC_TRACE" "$T/r1.json" 1 $((T0 + 200000000)) ""
python3 "$CHECK" make-trace "$SRC_TRACE" "$T/h0.json" 0 "$T0" "$HA"
python3 "$CHECK" make-trace "$SRC_TRACE" "$T/h1.json" 1 $((T0 + 200000000)) "$HB"
cp "$T/r0.json" "$T/${HA}_101.1733135172.pt.trace.json"
cp "$T/r1.json" "$T/${HB}_202.1733135172.pt.trace.json"
END=$((T0 + 200000000 + 1400000000))
past_end() {
	for h in a b; do
		[ "$(sqlite3 -readonly "file:$T/$h.db?mode=ro" \
		    "SELECT count(*) FROM samples WHERE ts_ns > $END + 300000000")" -gt 0 ] ||
			return 1
	done
}
wait_for 20 past_end || fail "no samples after the traces' end"
for h in a b; do
	"$CLIENT" --socket "$T/$h.sock" mark end --tag job-4711 >/dev/null ||
		fail "mark end on $h"
done
stop_all

# ---- each rank's rows from its own host ----
spy() { "$CLIENT" --db "$T/a.db" --db "$T/b.db" "$@"; }
"$CLIENT" --db "$T/a.db" export --trace "$T/r0.json" >"$T/single0.csv" || fail "single export a"
"$CLIENT" --db "$T/b.db" export --trace "$T/r1.json" >"$T/single1.csv" || fail "single export b"
spy export --trace "$T/r0.json" --trace "$T/r1.json" \
    --host-map "$T/r0.json=$HA" --host-map r1.json=$HB >"$T/multi.csv" ||
	fail "export with --host-map exited $?"
python3 "$CHECK" rows "$T/multi.csv" "$T/single0.csv" "$T/single1.csv" "$HA" "$HB" ||
	fail "the rows of the two-host export"
spy export --trace "$T/r0.json" --trace "$T/r1.json" --format jsonl \
    --host-map "r0.json=$HA" --host-map "r1.json=$T/b.db" >"$T/multi.jsonl" ||
	fail "export --format jsonl exited $?"
python3 "$CHECK" jsonl "$T/multi.jsonl" "$T/single0.csv" "$T/single1.csv" "$HA" "$HB" ||
	fail "the jsonl of the two-host export"
# swapped: rank 0 then reads host b
spy export --trace "$T/r0.json" --trace "$T/r1.json" \
    --host-map "r0.json=$HB" --host-map "r1.json=$HA" >"$T/swapped.csv" ||
	fail "swapped export exited $?"
if python3 "$CHECK" rows "$T/swapped.csv" "$T/single0.csv" "$T/single1.csv" "$HA" "$HB" 2>/dev/null; then
	fail "a swapped map gave the same rows"
fi
grep -q "^$HB,0," "$T/swapped.csv" || fail "swapped: rank 0 rows do not come from $HB"
echo "ok: each rank's rows come from its own host's database"

# ---- no map: an error naming the traces and the databases ----
rc=0
spy export --trace "$T/r0.json" --trace "$T/r1.json" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "unmapped traces: exit $rc, want 2: $(cat "$T/err")"
for word in r0.json r1.json a.db b.db "$HA" "$HB" "--host-map" "rank 0" "records no host"; do
	grep -q -- "$word" "$T/err" || fail "the ambiguity error does not say '$word': $(cat "$T/err")"
done
[ ! -s "$T/out" ] || fail "the ambiguity error wrote output"
rc=0
spy export --trace "$T/r0.json" --trace "$T/r1.json" --host-map r0.json=nosuchhost \
    --host-map r1.json=$HB >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "--host-map to an unknown host: exit $rc"
grep -q "nosuchhost" "$T/err" && grep -q "$T/a.db (host $HA)" "$T/err" ||
	fail "the unknown host's error: $(cat "$T/err")"
rc=0
spy export --trace "$T/r0.json" --host-map r9.json=$HA >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q "r9.json.*no --trace" "$T/err" ||
	fail "--host-map of no trace: exit $rc: $(cat "$T/err")"
echo "ok: unmapped traces fail (exit 2) naming traces, databases and --host-map"

# ---- traces that record their host ----
spy export --trace "$T/h0.json" --trace "$T/h1.json" >"$T/byheader.csv" ||
	fail "traces with host_name exited $?"
python3 "$CHECK" rows "$T/byheader.csv" "$T/single0.csv" "$T/single1.csv" "$HA" "$HB" ||
	fail "matched by host_name"
spy export --trace "$T/${HB}_202.1733135172.pt.trace.json" \
    --trace "$T/${HA}_101.1733135172.pt.trace.json" >"$T/byname.csv" ||
	fail "Kineto file names exited $?"
grep -q "^$HB,1," "$T/byname.csv" && grep -q "^$HA,0," "$T/byname.csv" ||
	fail "matched by file name: $(head -3 "$T/byname.csv")"
echo "ok: a trace's host_name or Kineto file name picks its database"

# ---- --steps and summary over both hosts ----
spy export --trace "$T/h0.json" --trace "$T/h1.json" --steps --csv >"$T/steps.csv" ||
	fail "--steps exited $?"
spy export --trace "$T/h0.json" --trace "$T/h1.json" --steps --json >"$T/steps.json" ||
	fail "--steps --json exited $?"
"$CLIENT" --db "$T/a.db" export --trace "$T/h0.json" --steps --csv >"$T/steps0.csv" ||
	fail "single --steps"
python3 "$CHECK" steps "$T/steps.csv" "$T/steps.json" "$T/steps0.csv" "$HA" "$HB" ||
	fail "--steps over two hosts"
spy summary --window job-4711 --csv >"$T/sum.csv" || fail "summary --csv exited $?"
spy summary --window job-4711 --json >"$T/sum.json" || fail "summary --json exited $?"
spy summary --window job-4711 >"$T/sum.txt" || fail "summary exited $?"
"$CLIENT" --db "$T/b.db" summary --window job-4711 --csv >"$T/sumb.csv" || fail "single summary"
python3 "$CHECK" summary "$T/sum.csv" "$T/sum.json" "$T/sumb.csv" "$HA" "$HB" ||
	fail "summary over two hosts"
grep -q "^host $HA ($T/a.db)" "$T/sum.txt" && grep -q "^all 2 hosts: energy" "$T/sum.txt" ||
	fail "summary table: $(cat "$T/sum.txt")"
for h in a b; do
	"$CLIENT" --db "$T/$h.db" export --window job-4711 >"$T/win-$h.csv" 2>/dev/null ||
		fail "single export --window on $h"
done
spy export --window job-4711 >"$T/win.csv" || fail "export --window over two hosts"
python3 "$CHECK" window "$T/win.csv" "$T/win-a.csv" "$T/win-b.csv" "$HA" "$HB" ||
	fail "export --window over two hosts"
spy export --window job-4711 --format aiusmi >"$T/win.aiusmi" || fail "aiusmi over two hosts"
[ "$(grep -c '^#host ' "$T/win.aiusmi")" -eq 2 ] && [ "$(grep -c '^ID,Date' "$T/win.aiusmi")" -eq 2 ] ||
	fail "aiusmi over two hosts: $(grep '^#\|^ID' "$T/win.aiusmi")"
echo "ok: --steps, summary and a window's export carry each host"

# ---- merged traces: one per rank, and one combined ----
mkdir "$T/merged"
spy export --trace "$T/h0.json" --trace "$T/h1.json" --merge-dir "$T/merged" ||
	fail "--merge-dir exited $?"
spy export --trace "$T/h0.json" --trace "$T/h1.json" --merge "$T/combined.json.gz" \
    2>"$T/err" || fail "--merge combined exited $?: $(cat "$T/err")"
grep -q "combined.json.gz: 2 traces combined into one, .* for trace viewers .*; per-rank analyzers (Holistic Trace Analysis) read one file per rank: --merge-dir DIR$" "$T/err" ||
	fail "a combined --merge does not say what it is for: $(cat "$T/err")"
python3 "$CHECK" merged "$T/h0.json" "$T/h1.json" "$T/merged/h0.json" "$T/merged/h1.json" \
    "$T/combined.json.gz" "$T/single0.csv" "$T/single1.csv" "$HA" "$HB" ||
	fail "the merged traces"
spy export --trace "$T/h1.json" --merge "$T/one.json" || fail "--merge of one trace exited $?"
grep -q "\"Spyre 0 · 0000:13:00.0 · $HB\"" "$T/one.json" ||
	fail "--merge of one trace over two hosts: no card named with $HB"
rc=0
spy export --trace "$T/h0.json" --trace "$T/merged/h0.json" --merge-dir "$T/merged" \
    2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q "would both be written" "$T/err" ||
	fail "two traces of one name in --merge-dir: exit $rc: $(cat "$T/err")"
echo "ok: --merge-dir and a combined --merge"
