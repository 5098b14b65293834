#!/usr/bin/env bash
# A TensorBoard log directory as a trace: the folder that
# torch.profiler.tensorboard_trace_handler(DIR) fills with one
# WORKER.TIME.pt.trace.json (or .pt.trace.json.gz) per worker.  The real
# daemon on the simulator; two ranks' traces made from a real Kineto trace
# (tests/data/traces) placed in the time it collected, one plain and one
# gzip, beside what is not a trace directly in it: another file, a
# directory with a trace's name, a subdirectory holding a trace.
#   - export --trace DIR, with --merge, --merge-dir and --steps, writes
#     byte for byte what the two files as two --trace options write, and
#     says on stderr which files it took, in name order;
#   - report --trace DIR names both ranks and both files in report.md, and
#     its steps.csv has a row per rank;
#   - compare --trace-base DIR --trace-new DIR takes both ranks' steps;
#   - trace info DIR describes both (--json: an array of two), and six
#     traces in name order;
#   - an empty folder, and one with no trace in it, fail naming the
#     folder and the pattern, and leave no output file.
source "$(dirname "$0")/lib.sh"

need python3
need sqlite3
MAKE=$ROOT/tests/integration/multihost_check.py
SRC_TRACE=$ROOT/tests/data/traces/kineto-base-relative-cpu-only.json.gz
spy() { "$CLIENT" --db "$DB" "$@"; }

write_config 2 100ms
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket within 20s"
wait_for 20 rows_at_least 2 || fail "no rows stored within 20s"

# ---- a window; two workers' traces, 0.6 s and 0.8 s from now ----
"$CLIENT" --socket "$T/control.sock" mark begin --tag tb-run >/dev/null ||
	fail "mark begin"
T0=$(( $(date +%s%N) + 600000000 ))
TB=$T/tb
mkdir -p "$TB/plugins" "$TB/not-a-file.pt.trace.json"
# named as tensorboard_trace_handler names them: HOST_PID.TIME_MS; rank 1's
# name sorts first
F1=$TB/worker-a_202.1733135172001.pt.trace.json.gz
F0=$TB/worker-b_101.1733135172000.pt.trace.json
python3 "$MAKE" make-trace "$SRC_TRACE" "$F0" 0 "$T0" ""
python3 "$MAKE" make-trace "$SRC_TRACE" "${F1%.gz}" 1 $((T0 + 200000000)) ""
gzip "${F1%.gz}"
[ -f "$F1" ] || fail "gzip did not write $F1"
echo "not a trace" >"$TB/events.out.tfevents.1733135172.worker-a"
cp "$F0" "$TB/plugins/worker-c_303.1733135172002.pt.trace.json"
END=$((T0 + 200000000 + 1400000000))
past_end() {
	[ "$(sqlite3 -readonly "file:$DB?mode=ro" \
	    "SELECT count(*) FROM samples WHERE ts_ns > $END + 300000000")" -gt 0 ]
}
wait_for 20 past_end || fail "no samples after the traces' end"
"$CLIENT" --socket "$T/control.sock" mark end --tag tb-run >/dev/null || fail "mark end"
stop_daemon

# ---- export: the folder is the two files, in name order ----
# same_as OUT ARGS...: export --trace DIR ARGS and export --trace F1 --trace
# F0 ARGS write the same bytes; the first's stderr names both files.
same_as() {
	local what=$1
	shift
	spy export --trace "$TB" "$@" >"$T/dir.out" 2>"$T/dir.err" ||
		fail "export --trace DIR $*: exit $?: $(cat "$T/dir.err")"
	spy export --trace "$F1" --trace "$F0" "$@" >"$T/files.out" 2>"$T/files.err" ||
		fail "export --trace F1 --trace F0 $*: exit $?: $(cat "$T/files.err")"
	grep -q "^spyremon: --trace $TB: 2 traces, read as the ranks of one run: $(basename "$F1"), $(basename "$F0")$" \
		"$T/dir.err" || fail "$what: stderr does not name the files in order: $(cat "$T/dir.err")"
	cmp -s "$T/dir.out" "$T/files.out" ||
		fail "$what: the folder and the two files differ: $(diff "$T/dir.out" "$T/files.out" | head -5)"
}
same_as "samples"
python3 - "$T/dir.out" <<'EOF' || fail "the samples of the folder's traces"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ranks = {r["trace_rank"] for r in rows}
assert ranks == {"0", "1"}, ranks
print("export --trace DIR: %d rows, ranks %s" % (len(rows), sorted(ranks)))
EOF
same_as "--steps" --steps --csv
grep -q '^host,rank,step,' "$T/dir.out" || fail "--steps: no host,rank columns: $(head -2 "$T/dir.out")"
spy export --trace "$TB" --merge "$T/merged-dir.json" 2>"$T/err" ||
	fail "--merge of the folder: $(cat "$T/err")"
spy export --trace "$F1" --trace "$F0" --merge "$T/merged-files.json" ||
	fail "--merge of the two files"
cmp -s "$T/merged-dir.json" "$T/merged-files.json" ||
	fail "--merge: the folder and the two files differ"
python3 - "$T/merged-dir.json" "$F1" "$F0" <<'EOF' || fail "the combined trace"
import json, sys
m = json.load(open(sys.argv[1]))
ranks = [(r["trace"], r["rank"]) for r in m["spyremonRanks"]]
assert ranks == [(sys.argv[2], 1), (sys.argv[3], 0)], ranks
print("--merge of DIR: one combined trace of", ranks)
EOF
mkdir "$T/md-dir" "$T/md-files"
spy export --trace "$TB/" --merge-dir "$T/md-dir" 2>"$T/err" || fail "--merge-dir of the folder"
grep -q "^spyremon: --trace $TB/: 2 traces" "$T/err" || fail "a folder given with a slash: $(cat "$T/err")"
spy export --trace "$F1" --trace "$F0" --merge-dir "$T/md-files" || fail "--merge-dir of the files"
[ "$(ls "$T/md-dir")" = "$(ls "$T/md-files")" ] && [ "$(ls "$T/md-dir" | wc -l)" -eq 2 ] ||
	fail "--merge-dir wrote $(ls "$T/md-dir") against $(ls "$T/md-files")"
for f in "$T"/md-files/*; do
	cmp -s "$f" "$T/md-dir/$(basename "$f")" || fail "--merge-dir: $(basename "$f") differs"
done
echo "ok: export --trace DIR is the folder's two traces (samples, --steps, --merge, --merge-dir)"

# ---- report and compare ----
spy report --window tb-run --trace "$TB" --output "$T/rep" >"$T/out" 2>"$T/err" ||
	fail "report --trace DIR: $(cat "$T/err")"
grep -q "^spyremon: --trace $TB: 2 traces" "$T/err" || fail "report: stderr: $(cat "$T/err")"
python3 - "$T/rep" "$F1" "$F0" <<'EOF' || fail "the report of the folder"
import csv, os, sys
d, f1, f0 = sys.argv[1:]
md = open(os.path.join(d, "report.md")).read()
for want in ("rank 0 (`%s`)" % f0, "rank 1 (`%s`)" % f1, "### rank 0: `%s`" % f0,
             "### rank 1: `%s`" % f1, "2 ranks' traces", "ProfilerStep#551",
             "rank 1 `%s`, rank 0 `%s`" % (f1, f0)):
    assert want in md, (want, md)
steps = list(csv.DictReader(open(os.path.join(d, "steps.csv"))))
got = {(r["rank"], r["step"]) for r in steps}
for rank in ("0", "1"):
    assert (rank, "ProfilerStep#551") in got and (rank, "total") in got, got
print("report --trace DIR: report.md and steps.csv name ranks 0 and 1")
EOF
spy compare tb-run tb-run --trace-base "$TB" --trace-new "$TB" --json \
	>"$T/cmp.json" 2>"$T/err" || fail "compare with folders: $(cat "$T/err")"
python3 - "$T/cmp.json" <<'EOF' || fail "compare of the folders"
import json, sys
c = json.load(open(sys.argv[1]))
t = [f for f in c["figures"] if f["figure"] == "step_time"][0]
assert t["base_n"] == 2 and t["new_n"] == 2 and t["verdict"] == "within noise", t
print("compare: both ranks' steps,", t["base_n"])
EOF
spy compare tb-run tb-run --trace-base "$TB" --trace-new "$F0" >"$T/cmp.txt" 2>/dev/null ||
	fail "compare of a folder with a file"
grep -q "2 steps of 2 traces *1 steps" "$T/cmp.txt" || fail "compare's trace row: $(grep trace "$T/cmp.txt")"
echo "ok: report and compare take the folder's ranks"

# ---- trace info ----
spy trace info "$TB" >"$T/info.txt" 2>/dev/null || fail "trace info DIR"
[ "$(grep -c '^file ' "$T/info.txt")" -eq 2 ] && grep -q '^rank        1 of 300$' "$T/info.txt" ||
	fail "trace info DIR: $(grep '^file\|^rank' "$T/info.txt")"
spy trace info "$TB" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [x["rank"] for x in d] == [1, 0], d' || fail "trace info DIR --json"
# name order, whatever order the directory lists them in: six made in an
# order that is neither sorted nor reversed
mkdir "$T/many"
for w in c a e b f d; do cp "$F0" "$T/many/w$w.1.pt.trace.json"; done
spy trace info "$T/many" >"$T/info.txt" 2>"$T/err" || fail "trace info of six"
[ "$(sed -n 's|^file        .*/\(w.\)\.1\.pt\.trace\.json .*|\1|p' "$T/info.txt" | paste -sd ' ')" = \
    "wa wb wc wd we wf" ] || fail "not in name order: $(grep '^file' "$T/info.txt")"
grep -q ": 6 traces, read as the ranks of one run: wa.1.pt.trace.json, wb.1.pt.trace.json, wc.1.pt.trace.json, wd.1.pt.trace.json, we.1.pt.trace.json, wf.1.pt.trace.json$" \
	"$T/err" || fail "the stderr line is not in name order: $(cat "$T/err")"
echo "ok: trace info DIR"

# ---- traces named otherwise: HTA's folders ----
mkdir "$T/hta"
gzip -c "$F0" >"$T/hta/sampled_rank-0.json.gz"
gzip -dc "$F1" >"$T/hta/rank-1_kineto.json"
echo '{"note": "not a trace"}' >"$T/hta/notes.json"
echo '[1, 2]' >"$T/hta/numbers.json"
spy trace info "$T/hta" >"$T/info.txt" 2>"$T/err" || fail "trace info of HTA's folder: $(cat "$T/err")"
grep -q ": 2 traces, read as the ranks of one run: rank-1_kineto.json, sampled_rank-0.json.gz$" "$T/err" ||
	fail "HTA's traces not taken: $(cat "$T/err")"
grep -q ': skipped notes.json (no "traceEvents" in its first 64 KiB), numbers.json (an array, but not of events)$' "$T/err" ||
	fail "the skipped files not said: $(cat "$T/err")"
echo "ok: a folder of traces named otherwise"

# ---- a folder without traces ----
mkdir "$T/empty" "$T/other"
echo x >"$T/other/trace.json"
for d in "$T/empty" "$T/other"; do
	for cmd in "export --trace $d --output $T/none.csv" \
	    "report --window tb-run --trace $d --output $T/none-rep" \
	    "compare tb-run tb-run --trace-base $d --trace-new $TB" "trace info $d"; do
		rc=0
		# shellcheck disable=SC2086
		spy $cmd >/dev/null 2>"$T/err" || rc=$?
		[ $rc -eq 1 ] || fail "$cmd: exit $rc, want 1: $(cat "$T/err")"
		grep -q "$d: no profiler trace in the directory: no file named \*\.pt\.trace\.json or \*\.pt\.trace\.json\.gz directly in it (what torch.profiler.tensorboard_trace_handler writes), nor any \*\.json or \*\.json\.gz that begins as one" \
			"$T/err" || fail "$cmd: the error: $(cat "$T/err")"
	done
done
[ ! -e "$T/none.csv" ] && [ ! -e "$T/none-rep" ] || fail "a folder without traces left output"
echo "ok: a folder without traces fails naming it and the pattern"
exit 0
