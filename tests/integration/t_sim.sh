#!/usr/bin/env bash
# aiu-smi-sim: command line, CSV structure, determinism, timing, faults.
set -euo pipefail

B=${B:-build}
SIM="$B/aiu-smi-sim"
[ -x "$SIM" ] || { echo "no $SIM: build it first"; exit 1; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }

source "$(dirname "$0")/scale.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset AIUSMI_OPTS

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# check.py MODE FILE ARGS...: validate aiu-smi CSV output; see its modes.
cat >"$tmp/check.py" <<'EOF'
import re, sys

def load(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")[:-1]

def split_lines(lines):
    """Return (comments, headers, rows, others); rows carry their header."""
    comments, headers, rows, others = [], [], [], []
    header = None
    for ln in lines:
        if ln.startswith("#"):
            comments.append(ln)
        elif ln.startswith("ID,"):
            header = ln.split(",")
            headers.append(header)
        elif header is not None and valid_row(header, ln):
            rows.append((header, ln.split(",")))
        else:
            others.append(ln)
    return comments, headers, rows, others

NUM = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")

def valid_row(header, line):
    cells = line.split(",")
    if len(cells) != len(header) or not cells[0].isdigit():
        return False
    if not re.fullmatch(r"[0-9]{8}", cells[1]):
        return False
    if not re.fullmatch(r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]", cells[2]):
        return False
    return all(c == "-" or NUM.match(c) for c in cells[3:])

def keys(header):
    return [c.split(" ", 1)[0] for c in header]

def cell(header, row, key):
    return row[keys(header).index(key)]

def decimals(s):
    return len(s.split(".", 1)[1]) if "." in s else 0

def die(msg):
    print("check.py:", msg)
    sys.exit(1)

def structure(path, ncards, nrows, workload):
    lines = load(path)
    comments, headers, rows, others = split_lines(lines)
    if others:
        die("unexpected lines: %r" % others[:3])
    if not lines[0].startswith("#") or lines[0] == "#MetricFiles":
        die("no comment line before #MetricFiles")
    i = lines.index("#MetricFiles")
    block = lines[i + 1:i + 1 + ncards]
    seen_paths = set()
    for dev, ln in enumerate(block):
        m = re.fullmatch(r"# (\d+) (/tmp/metrics\.0000:[0-9a-f]{2}:00\.0)", ln)
        if not m or int(m.group(1)) != dev:
            die("bad #MetricFiles line %r" % ln)
        seen_paths.add(m.group(2))
    if len(seen_paths) != ncards or not lines[i + 1 + ncards].startswith("ID,"):
        die("#MetricFiles block is not one line per card then the header")
    if len(headers) != 1:
        die("%d headers" % len(headers))
    h = headers[0]
    if h[:3] != ["ID", "Date (YYYYMMDD)", "Time (HH:MM:SS)"]:
        die("header starts %r" % h[:3])
    for c in h[3:]:
        if not re.fullmatch(r"[a-z_0-9]+ \S+", c):
            die("header cell %r is not 'key unit'" % c)
    for k in ("hostcpu %", "hostmem %", "pwr W", "gtemp C", "busy %"):
        if k not in h:
            die("always-shown column %r missing" % k)
    if len(rows) != nrows:
        die("%d rows, want %d" % (len(rows), nrows))
    for n, (hd, r) in enumerate(rows):
        if int(r[0]) != n % ncards:
            die("row %d is card %s: not one row per card per interval" % (n, r[0]))
        if n % ncards and r[1:3] != rows[n - 1][1][1:3]:
            die("cards of one interval differ in Date/Time")
        pwr, temp, busy = (float(cell(hd, r, k)) for k in ("pwr", "gtemp", "busy"))
        for k in ("pwr", "gtemp", "hostcpu", "hostmem"):
            if decimals(cell(hd, r, k)) != 1:
                die("%s printed as %r" % (k, cell(hd, r, k)))
        if decimals(cell(hd, r, "busy")) != 0 or decimals(cell(hd, r, "rdmem")) != 3:
            die("busy or rdmem decimals wrong: %r" % r)
        if not (20 <= pwr <= 75 and 30 <= temp <= 75):
            die("implausible pwr/gtemp %r" % r)
        if workload == "busy" and not (60 <= busy <= 100 and float(cell(hd, r, "rdmem")) > 0):
            die("busy card not busy: %r" % r)
        if workload == "idle" and (busy != 0 or float(cell(hd, r, "rdmem")) != 0):
            die("idle card busy: %r" % r)

def all_groups(path):
    _, headers, rows, _ = split_lines(load(path))
    h = headers[0]
    for k in ("rdmem GiB/s", "rdrdma GiB/s", "n_rdmem Mreq/s", "n_txpci Mreq/s",
              "actmem", "peakmem", "rsvmem", "pt_act %"):
        if not any(c == k or c.startswith(k + " ") for c in h):
            die("-g A lacks %r" % k)
    for s in range(4):
        if "rsvseg%d MiB" % s not in h:
            die("-g A lacks rsvseg%d" % s)
    peak = {}
    for hd, r in rows:
        p = float(cell(hd, r, "peakmem"))
        if p < peak.get(r[0], 0) or float(cell(hd, r, "actmem")) > p:
            die("peakmem not a running maximum: %r" % r)
        peak[r[0]] = p
        if float(cell(hd, r, "rsvmem")) != 0:
            die("rsvmem not 0")

def rdma(path, lacking):
    _, _, rows, _ = split_lines(load(path))
    for hd, r in rows:
        dashes = [cell(hd, r, k) == "-" for k in ("rdrdma", "wrrdma")]
        if dashes != [r[0] == lacking] * 2:
            die("rdrdma/wrrdma of card %s: %r" % (r[0], r))
        if [c for c in r if c == "-"] and r[0] != lacking:
            die("'-' on card %s" % r[0])

def values(path):
    """Rows without Date and Time, one per line."""
    _, _, rows, _ = split_lines(load(path))
    for hd, r in rows:
        print(",".join([r[0]] + r[3:]))

def stamps(path, log, t0, t1):
    _, _, rows, _ = split_lines(load(path))
    entries = [ln.split(" ", 2) for ln in load(log)]
    if [e[2] for e in entries] != [",".join(r) for _, r in rows]:
        die("stamp log lines differ from the rows written")
    if any(e[1] != e[2].split(",")[0] for e in entries):
        die("stamp log device differs from the row's ID")
    ts = [int(e[0]) for e in entries]
    if ts != sorted(ts) or ts[0] < int(t0) or ts[-1] > int(t1):
        die("stamps not increasing within the run")
    return ts

def cadence(path, log, t0, t1, delay):
    """Rows on the absolute schedule: mean interval right, no drift."""
    ts = stamps(path, log, t0, t1)
    d = float(delay) * 1e9
    mean = (ts[-1] - ts[0]) / (len(ts) - 1)
    if abs(mean - d) > 0.2 * d:
        die("mean interval %.0f ns, want %.0f" % (mean, d))
    # The phase of each row in the schedule, relative to the first, summed
    # from steps taken modulo the delay (so skipped intervals do not count).
    # Lateness is never negative, so the least of several phases is the
    # schedule's own; it must not move between the first and last rows.
    phase = [0.0]
    for a, b in zip(ts, ts[1:]):
        step = (b - a) - d
        phase.append(phase[-1] + step - round(step / d) * d)
    drift = min(phase[-10:]) - min(phase[:10])
    if abs(drift) > 3e6:
        die("schedule drifted %.1f ms over %d rows" % (drift / 1e6, len(ts)))

modes = {"structure": lambda a: structure(a[0], int(a[1]), int(a[2]), a[3]),
         "all_groups": lambda a: all_groups(a[0]),
         "rdma": lambda a: rdma(a[0], a[1]),
         "values": lambda a: values(a[0]),
         "stamps": lambda a: stamps(*a),
         "cadence": lambda a: cadence(*a)}
modes[sys.argv[1]](sys.argv[2:])
EOF

check() { python3 "$tmp/check.py" "$@"; }
now_ns() { python3 -c 'import time; print(time.time_ns())'; }

# run_sim OUT ARGS...: run with --exit-after in ARGS; require exit status 0,
# a run that ended as asked.
run_sim() {
	local out=$1 rc=0
	shift
	timeout 10 "$SIM" "$@" >"$out" 2>"$out.err" || rc=$?
	[ "$rc" -eq 0 ] || fail "$SIM $* exited $rc, want 0: $(cat "$out.err")"
}

echo "-v and --help"
"$SIM" -v >"$tmp/v" || fail "-v exited non-zero"
grep -q 'aiu-smi.*[0-9]\.[0-9]' "$tmp/v" || fail "-v printed: $(cat "$tmp/v")"
[ "$(wc -l <"$tmp/v")" -eq 1 ] || fail "-v printed more than one line"
"$SIM" --help >"$tmp/help"
for o in csv metric-groups delay id filename version mem-details idle-power \
    llm-type cards seed workload exit-after hang-after garbage-every \
    header-change-after missing-column-every split-rows overlong-every \
    stamp-log stderr-every help; do
	grep -q -- "--$o" "$tmp/help" || fail "--help does not list --$o"
done

echo "CSV structure"
run_sim "$tmp/busy" -s -d 0.02 --cards 3 --workload busy --exit-after 12
check structure "$tmp/busy" 3 12 busy
run_sim "$tmp/idle" -s -d 0.02 --cards 3 --workload idle --exit-after 6
check structure "$tmp/idle" 3 6 idle

echo "missing values: card 3 has no RDMA"
run_sim "$tmp/rdma" -s -d 0.01 --cards 5 --workload busy --exit-after 10
check rdma "$tmp/rdma" 3

echo "-g A"
run_sim "$tmp/all" -s -g A -d 0.01 --cards 2 --exit-after 40
check all_groups "$tmp/all"

echo "--mem-details, --idle-power, --llm-type"
run_sim "$tmp/md" -s -d 0.01 --mem-details --llm-type granite --exit-after 2
grep '^ID,' "$tmp/md" | grep -q ',rsvseg3 MiB' || fail "--mem-details lacks the S group"
grep '^ID,' "$tmp/md" | grep -q ',rdmem GiB/s' || fail "--mem-details dropped the default group D"
pt_act() {
	python3 -c 'import sys
lines = open(sys.argv[1]).read().split("\n")
h = next(l for l in lines if l.startswith("ID,")).split(",")
i = h.index("pt_act %")
print(" ".join(l.split(",")[i] for l in lines if l[:1].isdigit()))' "$1"
}
run_sim "$tmp/ip0" -s -g P -d 0.01 --workload idle --idle-power 0 --exit-after 4
run_sim "$tmp/ip74" -s -g P -d 0.01 --workload idle --idle-power 74.9 --exit-after 4
[ "$(pt_act "$tmp/ip74")" = "0.0 0.0 0.0 0.0" ] || fail "pt_act above idle power: $(pt_act "$tmp/ip74")"
for v in $(pt_act "$tmp/ip0"); do
	python3 -c 'import sys; assert 20 < float(sys.argv[1]) < 60' "$v" ||
	    fail "pt_act with --idle-power 0: $v"
done
rc=0; "$SIM" --idle-power 80 >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "--idle-power 80 exited $rc, want 2"

echo "-i 1 and determinism"
run_sim "$tmp/s7a" -s -g A -d 0.01 --seed 7 --exit-after 20
run_sim "$tmp/s7b" -s -g A -d 0.01 --seed 7 --exit-after 20
run_sim "$tmp/s8" -s -g A -d 0.01 --seed 8 --exit-after 20
run_sim "$tmp/s7i" -s -g A -d 0.01 --seed 7 -i 1 --exit-after 10
check values "$tmp/s7a" >"$tmp/s7a.v"
check values "$tmp/s7b" >"$tmp/s7b.v"
check values "$tmp/s8" >"$tmp/s8.v"
check values "$tmp/s7i" >"$tmp/s7i.v"
[ "$(wc -l <"$tmp/s7a.v")" -eq 20 ] || fail "seed run has no 20 rows"
cmp -s "$tmp/s7a.v" "$tmp/s7b.v" || fail "same seed, different values"
! cmp -s "$tmp/s7a.v" "$tmp/s8.v" || fail "different seeds, same values"
grep -q '^# 1 ' "$tmp/s7i" || fail "-i 1: card 1 not in #MetricFiles"
! grep -q '^# 0 ' "$tmp/s7i" || fail "-i 1: card 0 in #MetricFiles"
! grep -v '^1,' "$tmp/s7i.v" >/dev/null || fail "-i 1 printed other cards"
grep '^1,' "$tmp/s7a.v" | cmp -s - "$tmp/s7i.v" || fail "-i 1 changed card 1's values"

echo "AIUSMI_OPTS"
AIUSMI_OPTS="-s  -g R	--cards 3 /env/%BUSID" run_sim "$tmp/env" -g U -d 0.01 \
    --exit-after 3 /cli/%BUSID
grep -q '^# 2 /cli/0000:15:00.0$' "$tmp/env" || fail "pattern or --cards from AIUSMI_OPTS lost"
head -n 1 "$tmp/env" | grep -q '^#' || fail "-s from AIUSMI_OPTS not applied"
grep '^ID,' "$tmp/env" | grep -q 'actmem' || fail "-g U on the command line lost"
! grep '^ID,' "$tmp/env" | grep -q 'n_rdmem' || fail "-g R from AIUSMI_OPTS won over -g U"
AIUSMI_OPTS="--bogus" "$SIM" -v >/dev/null 2>&1 && fail "bad option in AIUSMI_OPTS accepted"

echo "delay limits"
rc=0; "$SIM" -s -d 0.005 >/dev/null 2>"$tmp/d.err" || rc=$?
[ "$rc" -eq 2 ] || fail "-d 0.005 exited $rc, want 2"
grep -q '0\.01' "$tmp/d.err" || fail "-d 0.005 message: $(cat "$tmp/d.err")"
rc=0; "$SIM" --no-such-option >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "bad option exited $rc, want 2"
run_sim "$tmp/d01" -s -d 0.01 --exit-after 2

echo "--exit-after and --stamp-log"
# The cadence is timing on a shared machine: a load spike (or a sanitizer
# build) can make every one of the first or last ten rows late.  A drifting
# schedule drifts on every run, so one failed run is taken again, once.
# The phase is read modulo the interval, so a row later than half of it
# reads as early: under time_scale (sanitizers, emulation) the interval is
# that many times 10 ms, and a row's lateness stays well under half of it.
cad=$(awk -v s="$(time_scale "$SIM")" 'BEGIN { printf "%.2f", 0.01 * s }')
for attempt in 1 2; do
	rm -f "$tmp/ex.log"
	t0=$(now_ns)
	run_sim "$tmp/ex" -s -d "$cad" --cards 1 --exit-after 101 --stamp-log "$tmp/ex.log"
	t1=$(now_ns)
	[ "$(grep -c '^[0-9]' "$tmp/ex")" -eq 101 ] || fail "--exit-after 101 wrote $(grep -c '^[0-9]' "$tmp/ex") rows"
	if check cadence "$tmp/ex" "$tmp/ex.log" "$t0" "$t1" "$cad"; then
		break
	fi
	[ $attempt -eq 2 ] && fail "the schedule drifted in two runs"
	echo "  (the cadence again, once: a late run is timing, a drift repeats)"
done
run_sim "$tmp/ex2" -s -d 0.01 --cards 2 --exit-after 7
[ "$(grep -c '^[0-9]' "$tmp/ex2")" -eq 7 ] || fail "--exit-after 7 stopped mid-interval wrongly"

echo "--start"
# the first row carries the date asked for, later ones the time elapsed
TZ=UTC run_sim "$tmp/st" -s -d 0.3 --cards 1 --exit-after 5 \
    --start 2026-03-01T09:00:00
first=$(grep '^[0-9]' "$tmp/st" | head -1 | cut -d, -f2,3)
last=$(grep '^[0-9]' "$tmp/st" | tail -1 | cut -d, -f2,3)
[ "$first" = "20260301,09:00:00" ] || fail "--start: first row at $first"
case $last in
20260301,09:00:0[12]) ;;
*) fail "--start: the fifth row, 1.2 s on, at $last" ;;
esac
# epoch ns, shown in the local zone
TZ=Europe/Berlin run_sim "$tmp/st2" -s -d 0.01 --cards 1 --exit-after 1 \
    --start 1772355600000000000
[ "$(grep '^[0-9]' "$tmp/st2" | cut -d, -f2,3)" = "20260301,10:00:00" ] ||
	fail "--start in epoch ns: $(grep '^[0-9]' "$tmp/st2")"
rc=0
"$SIM" -s --start yesterday >/dev/null 2>"$tmp/st.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--start" "$tmp/st.err" ||
	fail "--start yesterday: exit $rc: $(cat "$tmp/st.err")"

echo "faults"
t0=$(now_ns)
run_sim "$tmp/f" -s -d 0.01 --exit-after 30 --garbage-every 4 \
    --missing-column-every 5 --overlong-every 6 --stderr-every 7 \
    --stamp-log "$tmp/f.log"
t1=$(now_ns)
check stamps "$tmp/f" "$tmp/f.log" "$t0" "$t1"
python3 - "$tmp/f" <<'EOF'
import sys
lines = open(sys.argv[1]).read().split("\n")[:-1]
header = next(l for l in lines if l.startswith("ID,")).split(",")
complete = [l for l in lines if l[:1].isdigit() and len(l.split(",")) == len(header)
            and all(c == "-" or c.replace(".", "", 1).isdigit() for c in l.split(",")[3:])
            and len(l) < 10000]
cut = [l for l in lines if len(l.split(",")) == len(header) - 1 and l[:1].isdigit()]
overlong = [l for l in lines if len(l) >= 10000]
other = [l for l in lines if l not in complete and l not in cut
         and l not in overlong and not l.startswith(("#", "ID,"))]
# 30 complete rows; row lines are counted with the cut ones: every 5th is
# cut, so 30 complete rows take 37 row lines (the 37th is complete).
assert len(complete) == 30, len(complete)
assert len(cut) == 7, len(cut)
assert len(overlong) == 37 // 6, len(overlong)
assert all(len(l) == 10000 for l in overlong), [len(l) for l in overlong]
assert len(other) == 30 // 4, other
EOF
[ "$(grep -c 'warning' "$tmp/f.err")" -eq 4 ] || fail "--stderr-every 7 over 30 rows: $(cat "$tmp/f.err")"

run_sim "$tmp/hc" -s -d 0.01 --exit-after 9 --header-change-after 5
python3 - "$tmp/hc" <<'EOF'
import sys
lines = open(sys.argv[1]).read().split("\n")[:-1]
hdr = [i for i, l in enumerate(lines) if l.startswith("ID,")]
assert len(hdr) == 2, hdr
before = [l for l in lines[hdr[0]:hdr[1]] if l[:1].isdigit()]
after = [l for l in lines[hdr[1]:] if l[:1].isdigit()]
assert len(before) == 5 and len(after) == 4, (before, after)
h0, h1 = lines[hdr[0]].split(","), lines[hdr[1]].split(",")
assert h0 != h1 and "rdmem GiB/s" in h0 and "rdmem GiB/s" not in h1
assert "hbmtemp C" in h1
assert all(len(l.split(",")) == len(h1) for l in after)
EOF

echo "hang, SIGTERM, closed pipe"
"$SIM" -s -d 0.01 --hang-after 4 >"$tmp/hang" &
pid=$!
sleep 0.6
kill -0 "$pid" || fail "--hang-after exited"
[ "$(grep -c '^[0-9]' "$tmp/hang")" -eq 4 ] || fail "--hang-after 4 wrote $(grep -c '^[0-9]' "$tmp/hang") rows"
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "SIGTERM while hanging: exit $rc"
"$SIM" -s -d 0.01 >/dev/null &
pid=$!
sleep 0.2
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "SIGINT: exit $rc"
# SIGTERM in the middle of a row: the row and its stamp-log line are both
# finished, so the log names every row written, and no row is left cut (a
# stop between the two once left the row unlogged, and a check of the
# daemon's aggregates found a row it could not account for).  Rows split
# in two writes 2 ms apart, stopped at 30 moments over the tick: most
# land inside a row.
for i in $(seq 1 30); do
	"$SIM" -s -d 0.01 --cards 2 --split-rows --stamp-log "$tmp/term.log" \
		>"$tmp/term.csv" 2>/dev/null &
	pid=$!
	sleep "0.0$((20 + i % 50))"
	kill -TERM "$pid"
	wait "$pid" || fail "SIGTERM in a row: exit $?"
	[ -z "$(tail -c 1 "$tmp/term.csv")" ] ||
		fail "SIGTERM in a row (try $i): the last row is cut"
	rows=$(grep -c '^[0-9]' "$tmp/term.csv" || true)
	logged=$(wc -l <"$tmp/term.log")
	[ "$rows" -eq "$logged" ] ||
		fail "SIGTERM in a row (try $i): $rows rows written, $logged in the stamp log"
	rm -f "$tmp/term.log"
done
rc=0
# shellcheck disable=SC2016 # expanded by the inner shell
timeout 5 bash -c '"$0" -s -d 0.01 2>"$1" | head -n 8 >/dev/null; exit "${PIPESTATUS[0]}"' \
    "$SIM" "$tmp/pipe.err" || rc=$?
[ "$rc" -eq 0 ] || fail "closed pipe: exit $rc"
[ ! -s "$tmp/pipe.err" ] || fail "closed pipe: $(cat "$tmp/pipe.err")"

echo "-f FILE"
printf 'old content that must go\n%.0s' {1..50} >"$tmp/out.csv"
run_sim "$tmp/f-stdout" -s -d 0.01 --exit-after 4 -f "$tmp/out.csv"
[ ! -s "$tmp/f-stdout" ] || fail "-f still wrote to stdout"
! grep -q 'old content' "$tmp/out.csv" || fail "-f did not truncate"
check structure "$tmp/out.csv" 2 4 any

echo "text table"
run_sim "$tmp/text" -d 0.01 --exit-after 4
python3 - "$tmp/text" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().split("\n")[:-1]
assert lines[0] == "#MetricFiles", lines[0]
h = next(l for l in lines if l.startswith("#ID "))
assert h.split()[:5] == ["#ID", "Date", "Time", "hostcpu", "hostmem"], h
rows = [l for l in lines if not l.startswith("#")]
assert len(rows) == 4
for r in rows:
    assert len(r.split()) == len(h.split()) and re.fullmatch(r"[0-9]{8}", r.split()[1]), r
    assert len(r) == len(h), "columns not aligned: %r / %r" % (h, r)
EOF

echo "split rows, unbuffered lines, file workload, metric files"
python3 - "$SIM" "$tmp" <<'EOF'
import os, subprocess, sys, time
sim, tmp = sys.argv[1], sys.argv[2]

def reads(args, seconds):
    """The chunks read from the simulator's stdout pipe."""
    p = subprocess.Popen([sim] + args, stdout=subprocess.PIPE)
    chunks, end = [], time.time() + seconds
    os.set_blocking(p.stdout.fileno(), False)
    while time.time() < end:
        try:
            c = os.read(p.stdout.fileno(), 65536)
        except BlockingIOError:
            time.sleep(0.0005)
            continue
        chunks.append(c)
    p.terminate()
    assert p.wait(2) == 0
    return chunks

whole = reads(["-s", "-d", "0.02"], 0.5)
assert whole and all(c.endswith(b"\n") for c in whole), "a line arrived in pieces"
split = reads(["-s", "-d", "0.02", "--split-rows"], 0.5)
partial = [c for c in split if not c.endswith(b"\n")]
assert len(partial) >= 5, "--split-rows: %d partial reads" % len(partial)
assert b"".join(split).count(b"\n") >= 10

flag = os.path.join(tmp, "busy-flag")
pattern = os.path.join(tmp, "metrics.%BUSID")
p = subprocess.Popen([sim, "-s", "-d", "0.02", "--workload", "file:" + flag,
                      "--write-metric-files", pattern],
                     stdout=subprocess.PIPE, text=True)
def rows(n):
    out = []
    while len(out) < n:
        line = p.stdout.readline()
        if line[:1].isdigit():
            out.append(line.strip().split(","))
    return out
first = rows(10)
assert all(r[7] == "0" for r in first), first
m0 = os.path.join(tmp, "metrics.0000:13:00.0")
m1 = os.path.join(tmp, "metrics.0000:14:00.0")
assert os.path.exists(m0) and os.path.exists(m1)
mt = os.stat(m0).st_mtime_ns
open(flag, "w").close()
rows(6)
later = rows(10)
assert all(60 <= int(r[7]) <= 100 for r in later), later
assert os.stat(m0).st_mtime_ns > mt, "metric file not updated"
os.unlink(m1)
rows(4)
gone = rows(10)
assert all(float(r[5]) == 0 for r in gone if r[0] == "1"), gone
assert all(float(r[5]) > 0 for r in gone if r[0] == "0"), gone
p.terminate()
assert p.wait(2) == 0
EOF

echo "zero workload"
run_sim "$tmp/zero" -s -d 0.01 --workload zero --exit-after 4
python3 - "$tmp/zero" <<'EOF'
import sys
rows = [l.split(",") for l in open(sys.argv[1]) if l[:1].isdigit()]
assert len(rows) == 4 and all(float(c) == 0 for r in rows for c in r[5:]), rows
assert all(float(r[3]) > 0 for r in rows), "hostcpu is the host's, not the card's"
EOF

echo "all passed"
