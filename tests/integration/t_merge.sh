#!/usr/bin/env bash
# "spyremon export --trace IN --merge OUT" on every real trace in
# tests/data/traces, against a database of two cards whose samples cover
# the trace's span: merge_check.py checks that OUT is IN with the cards'
# processes and counter tracks appended after its last event (IN's bytes
# up to its events' ']' are OUT's) and nothing else changed, in IN's types
# (integer, or IN's decimals), and computes the expected tracks itself;
# and --merge-as hta's slices.  Also: --include-unreliable,
# --metrics, gzip in and out, a trace whose events share one time, and
# the failures (a cut or corrupt trace, a trace that changes between the
# two reads, no samples near the trace, a trace whose pids leave none
# for the cards, a full disk), each of which must
# exit non-zero and leave no output file.
set -euo pipefail

B=${B:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CLIENT=$ROOT/$B/spyremon
MKSAMPLES=$ROOT/$B/tests/mksamples
CHECK=$ROOT/tests/integration/merge_check.py
TRACES=$ROOT/tests/data/traces
# The absolute time given to the legacy trace's ts = 0.
LEGACY_START=1760000000000000000

[ -d "$TRACES" ] || { echo "FAIL: no real traces: $TRACES is missing" >&2; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 is missing (sh mk/deps.sh installs it)" >&2; exit 1; }
if [ ! -x "$MKSAMPLES" ]; then
	echo "SKIP: $MKSAMPLES is not built (make check builds it)"
	exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/spyremon-merge.XXXXXX")
BG=
MOUNTED=
cleanup() {
	if [ -n "$BG" ]; then kill "$BG" 2>/dev/null || true; fi
	if [ -n "$MOUNTED" ]; then umount "$MOUNTED" 2>/dev/null || true; fi
	rm -rf "$T"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# Failing merges write into E, which must stay empty: no output, not
# even a temporary file.
E=$T/failed
mkdir "$E"
no_output() {
	[ -z "$(ls -A "$E")" ] || fail "$1: left behind: $(ls -A "$E")"
}

# prepare TRACE DIR [--trace-start NS]: DIR/info.json, DIR/lines, DIR/db.
prepare() {
	local trace=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	"$CLIENT" trace info --json "$trace" >"$dir/info.json" ||
		fail "$trace: trace info exited $?"
	python3 "$CHECK" samples "$dir/info.json" "$@" >"$dir/lines"
	"$MKSAMPLES" "$dir/db" <"$dir/lines" || fail "mksamples failed"
}

# merge DIR TRACE OUT [options...]: export --merge, failing on an error.
merge() {
	local dir=$1 trace=$2 out=$3
	shift 3
	"$CLIENT" export --db "$dir/db" --trace "$trace" --merge "$out" "$@" \
	    >"$dir/stdout" 2>"$dir/stderr" ||
		fail "$(basename "$trace") $*: exited $?: $(cat "$dir/stderr")"
	[ ! -s "$dir/stdout" ] || fail "--merge wrote to stdout"
}

# check DIR TRACE OUT [checker options...]
check() {
	local dir=$1 trace=$2 out=$3
	shift 3
	python3 "$CHECK" check "$trace" "$out" "$dir/info.json" "$dir/lines" \
	    --summary "${SUMMARY:-$dir/stderr}" "$@" ||
		fail "$(basename "$trace") -> $(basename "$out")"
}

# refuse WHAT DIR COMMAND...: the command must fail, naming an offset
# when WHAT is "offset"; its stderr is left in DIR/err.
refuse() {
	local what=$1 dir=$2 rc=0
	shift 2
	"$@" >"$dir/stdout" 2>"$dir/err" || rc=$?
	[ "$rc" -ne 0 ] || fail "$what: exited 0"
	if [ "$what" = offset ]; then
		grep -Eq "at (byte|offset) [0-9]+" "$dir/err" ||
			fail "$what: no byte offset: $(cat "$dir/err")"
	fi
}

n=0
for trace in "$TRACES"/*.json.gz; do
	name=$(basename "$trace" .json.gz)
	dir=$T/$name
	opts=()
	case $name in
	legacy-*) opts=(--trace-start "$LEGACY_START") ;;
	esac
	prepare "$trace" "$dir" "${opts[@]}"
	# by default the unreliable rsvmem is left out
	merge "$dir" "$trace" "$dir/out.json" "${opts[@]}"
	check "$dir" "$trace" "$dir/out.json" --metrics pwr,busy,rdmem \
	    "${opts[@]}"
	# and included, marked, on request; gzip out
	merge "$dir" "$trace" "$dir/out.json.gz" --include-unreliable \
	    "${opts[@]}"
	gzip -t "$dir/out.json.gz" || fail "$name: out.json.gz is not gzip"
	check "$dir" "$trace" "$dir/out.json.gz" \
	    --metrics pwr,busy,rdmem,rsvmem --unreliable rsvmem "${opts[@]}"
	# plain in, gzip out: the same events
	gzip -dc "$trace" >"$dir/in.json"
	merge "$dir" "$dir/in.json" "$dir/out2.json.gz" "${opts[@]}"
	check "$dir" "$dir/in.json" "$dir/out2.json.gz" \
	    --metrics pwr,busy,rdmem "${opts[@]}"
	# the samples as slices HTA keeps
	merge "$dir" "$trace" "$dir/out-hta.json.gz" --merge-as hta \
	    "${opts[@]}"
	check "$dir" "$trace" "$dir/out-hta.json.gz" --metrics pwr,busy,rdmem \
	    --merge-as hta "${opts[@]}"
	echo "$name: ok"
	n=$((n + 1))
done
[ "$n" -ge 6 ] || fail "merged $n traces, want every one of the 6 or more"

# --metrics selects, in the order given.
dir=$T/kineto-absolute-int
trace=$TRACES/kineto-absolute-int.json.gz
merge "$dir" "$trace" "$dir/out-sel.json" --metrics busy,pwr
check "$dir" "$trace" "$dir/out-sel.json" --metrics busy,pwr
echo "--metrics: ok"

# Events that all share one time: a span of length 0.
dir=$T/instant
mkdir -p "$dir"
cat >"$dir/in.json" <<'EOF'
{"traceEvents": [
  {"ph": "X", "name": "a", "ts": 1700000000123456.789, "dur": 0,
   "pid": 7, "tid": 7},
  {"ph": "i", "name": "b", "ts": 1700000000123456.789, "pid": 7, "tid": 8,
   "s": "t"}
]}
EOF
prepare "$dir/in.json" "$dir"
merge "$dir" "$dir/in.json" "$dir/out.json"
check "$dir" "$dir/in.json" "$dir/out.json" --metrics pwr,busy,rdmem
echo "one timestamp: ok"

# Float times keep the trace's own decimals: one (rounded, a half up)
# and six (padded); the trace's M events carry a ts, so the added ones do.
for dec in 1 6; do
	dir=$T/dec$dec
	mkdir -p "$dir"
	python3 - "$dec" >"$dir/in.json" <<'PY'
import sys
d = int(sys.argv[1])
t0 = 1700000000123456.789
f = lambda x: "%.*f" % (d, x)
print('{"traceEvents": [')
print(' {"ph": "M", "name": "process_name", "pid": 7, "ts": %s, '
      '"args": {"name": "w"}},' % f(t0))
print(' {"ph": "X", "cat": "cpu_op", "name": "a", "ts": %s, "dur": %s, '
      '"pid": 7, "tid": 7},' % (f(t0), f(2.5e6)))
print(' {"ph": "X", "cat": "cpu_op", "name": "b", "ts": %s, "dur": %s, '
      '"pid": 7, "tid": 7}' % (f(t0 + 2.5e6), f(0.5e6)))
print(']}')
PY
	prepare "$dir/in.json" "$dir"
	merge "$dir" "$dir/in.json" "$dir/out.json"
	check "$dir" "$dir/in.json" "$dir/out.json" --metrics pwr,busy,rdmem
	merge "$dir" "$dir/in.json" "$dir/out-hta.json" --merge-as hta
	check "$dir" "$dir/in.json" "$dir/out-hta.json" --metrics pwr,busy,rdmem \
	    --merge-as hta
done
echo "decimals: ok"

# The check can fail: an event put before the original's first, and a
# float ts in an integer trace.
dir=$T/kineto-absolute-int
python3 - "$dir/out.json" "$dir/front.json" "$dir/float.json" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
i = b.index(b"[") + 1
j = b.index(b'{"ph":"C"')
k = b.index(b"}", b.index(b'"ts":', j)) + 1
# the first counter event moved to the front of the array
open(sys.argv[2], "wb").write(b[:i] + b[j:k] + b"," + b[i:j] + b[k + 2:])
end = b.index(b"}", b.index(b'"ts":', j))
open(sys.argv[3], "wb").write(b[:end] + b".5" + b[end:])
PY
for bad in front float; do
	if python3 "$CHECK" check "$trace" "$dir/$bad.json" "$dir/info.json" \
	    "$dir/lines" --metrics pwr,busy,rdmem >/dev/null 2>"$dir/err-$bad"; then
		fail "merge_check took $bad.json"
	fi
done
grep -q "changes IN's bytes before the end of its events" "$dir/err-front" ||
	fail "front: $(cat "$dir/err-front")"
grep -q "not whole µs" "$dir/err-float" || fail "float ts: $(cat "$dir/err-float")"
echo "the check fails: ok"

# --merge-as goes with a merge, and hta with one file per rank
rc=0
"$CLIENT" export --db "$dir/db" --trace "$trace" --merge-as hta \
    >/dev/null 2>"$dir/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--merge-as goes with" "$dir/err" ||
	fail "--merge-as alone: exit $rc: $(cat "$dir/err")"
rc=0
"$CLIENT" export --db "$dir/db" --trace "$trace" --trace "$trace" \
    --merge "$E/x.json" --merge-as hta >/dev/null 2>"$dir/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--merge-dir DIR" "$dir/err" ||
	fail "--merge-as hta of two traces into one: exit $rc: $(cat "$dir/err")"
no_output "--merge-as hta of two traces"

# A cut gzip trace and a corrupt one: an offset, and no output.
dir=$T/kineto-absolute-int
size=$(stat -c %s "$trace")
head -c $((size / 2)) "$trace" >"$dir/cut.json.gz"
refuse offset "$dir" "$CLIENT" export --db "$dir/db" \
    --trace "$dir/cut.json.gz" --merge "$E/out.json"
no_output "cut trace"
python3 - "$dir/in.json" "$dir/corrupt.json" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
# a letter where a number must be, halfway through
i = data.index(b'"ts": ', len(data) // 2) + 6
open(sys.argv[2], "wb").write(data[:i] + b"x" + data[i:])
EOF
refuse offset "$dir" "$CLIENT" export --db "$dir/db" \
    --trace "$dir/corrupt.json" --merge "$E/out.json.gz"
no_output "corrupt trace"
echo "cut and corrupt: ok"

# A trace that leaves the cards no pid (one of its own is the largest a
# pid may be): exit 1 with the reason, no output.
python3 - "$dir/in.json" "$dir/pidmax.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
next(e for e in ev if e.get("ph") == "X")["pid"] = 2**31 - 1
json.dump(d, open(sys.argv[2], "w"))
EOF
rc=0
"$CLIENT" export --db "$dir/db" --trace "$dir/pidmax.json" --merge "$E/out.json" \
    >"$dir/stdout" 2>"$dir/err" || rc=$?
[ "$rc" -eq 1 ] || fail "pid 2^31-1: exit $rc, not 1: $(cat "$dir/err")"
grep -q "uses pid 2147483647: no 2 pids above it are free" "$dir/err" ||
	fail "pid 2^31-1: $(cat "$dir/err")"
no_output "pid 2^31-1"

# A pipe cannot be read twice: refused before anything is read or written.
mkfifo "$dir/fifo"
rc=0
"$CLIENT" export --db "$dir/db" --trace "$dir/fifo" --merge "$E/out.json" \
    >"$dir/stdout" 2>"$dir/err" </dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "FIFO: exit $rc, not 2: $(cat "$dir/err")"
grep -q "must be a file, not a pipe" "$dir/err" || fail "FIFO: $(cat "$dir/err")"
no_output "FIFO"

# No samples near the trace: how far, and in which direction.
for side in after before; do
	sdir=$T/far-$side
	mkdir -p "$sdir"
	"$CLIENT" trace info --json "$trace" >"$sdir/info.json"
	python3 - "$sdir/info.json" "$side" >"$sdir/lines" <<'EOF'
import json, sys
info = json.load(open(sys.argv[1]))
hour = 3600 * 10**9
if sys.argv[2] == "after":
    t = info["start_ns"] - 2 * hour
else:
    t = info["end_ns"] + hour
for k in range(5):
    print("%d 0 1000 pwr=1%d.0" % (t + k * 10**9, k))
EOF
	"$MKSAMPLES" "$sdir/db" <"$sdir/lines"
	refuse distance "$sdir" "$CLIENT" export --db "$sdir/db" \
	    --trace "$trace" --merge "$E/out.json"
	if [ "$side" = after ]; then
		grep -q "after the newest sample" "$sdir/err" ||
			fail "$(cat "$sdir/err")"
	else
		grep -q "before the oldest" "$sdir/err" ||
			fail "$(cat "$sdir/err")"
	fi
	no_output "samples $side the trace"
done
echo "no overlap: ok"

# A full disk: /dev/full, and a small tmpfs where a mount is allowed.
dir=$T/kineto-absolute-int
refuse full "$dir" "$CLIENT" export --db "$dir/db" --trace "$trace" \
    --merge /dev/full
grep -q "/dev/full" "$dir/err" || fail "/dev/full: $(cat "$dir/err")"
mkdir "$T/small"
if [ "$(id -u)" -eq 0 ] &&
    mount -t tmpfs -o size=64k tmpfs "$T/small" 2>/dev/null; then
	MOUNTED=$T/small
	for out in out.json out.json.gz; do
		refuse full "$dir" "$CLIENT" export --db "$dir/db" \
		    --trace "$trace" --merge "$T/small/$out"
		grep -q "$T/small/$out: No space left" "$dir/err" ||
			fail "tmpfs: $(cat "$dir/err")"
		[ -z "$(ls -A "$T/small")" ] ||
			fail "tmpfs: left $(ls -A "$T/small")"
	done
	umount "$T/small"
	MOUNTED=
	echo "full disk: ok"
else
	echo "full disk: /dev/full only (cannot mount a small tmpfs here)"
fi

# Progress on a terminal: shown, then cleared.
if command -v script >/dev/null; then
	script -qec "'$CLIENT' export --db '$dir/db' --trace '$trace' --merge \
	    '$dir/out-tty.json'" /dev/null >"$dir/tty" 2>&1 ||
		fail "export on a tty: $(cat "$dir/tty")"
	# the last line shown is blanked out and the cursor left at its start,
	# where the summary is written
	python3 - "$dir/tty" <<'EOF' || fail "progress: $(cat -v "$dir/tty")"
import re, sys
out = open(sys.argv[1], "rb").read().decode()
shown = re.findall(r"\rmerging: \d+ MiB of \d+ MiB \(\d+%\)", out)
assert shown, "no progress shown"
tail = out[out.rindex("merging:"):]
assert re.fullmatch(r"merging: [^\r\n]*\r *\r[^\r]*: added \d+ events after "
                    r"the trace's own: [^\r\n]*\r\n", tail), "not cleared: %r" % tail
EOF
	SUMMARY=$dir/tty check "$dir" "$trace" "$dir/out-tty.json" --metrics pwr,busy,rdmem
	echo "progress: ok"
fi
