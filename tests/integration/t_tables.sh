#!/usr/bin/env bash
# Tables for people, files for programs: export --steps, summary and
# windows on a terminal (a pseudo-terminal of python3's pty module) write
# aligned columns with their units and few digits, fit to 120 columns;
# to a pipe or --output FILE, without a format asked, exactly the bytes
# they wrote before (CSV for --steps, the plain columns for summary and
# windows, kept here); --csv and --json write the same bytes on a
# terminal as on a pipe, and --table the terminal's table on a pipe
# (tables_check.py).
source "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
MKSAMPLES=$BIN/tests/mksamples
[ -x "$MKSAMPLES" ] || fail "no $MKSAMPLES: run make check"

# two cards at 100 ms for 4 s, busy from 0.5 s; window "run" from 0.5 s
# to 3.5 s, with a long command in its metadata; four steps of 0.5 s
BASE=1760000000000000000
python3 - "$BASE" >"$T/samples" <<'PY'
import sys
base = int(sys.argv[1])
ms = 1000000
wb, we = base + 500 * ms, base + 3500 * ms
print('window run %d %d unsync {"commit":"abc123","workload":"tables","command":"python3 train.py --epochs 3 --batch-size 64 --data /data/imagenet/train --lr 0.001"}' % (wb, we))
for dev in (0, 1):
    for k in range(0, 40):
        ts = base + k * 100 * ms
        busy = 0 if k < 5 else 60 + (k * 7 + dev * 3) % 35
        pwr = "%.1f" % (21 + dev + (busy and 40 + (k * 13 + dev) % 17 + 0.1 * (k % 10)))
        print("%d %d 100 pwr=%s busy=%d gtemp=%.1f rdmem=%.3f wrmem=%.3f rxpci=%.3f txpci=%.3f actmem=%d"
              % (ts, dev, pwr, busy, 40 + 0.1 * k, 12.5 + 0.1 * (k % 7), 0.4 + 0.01 * k,
                 0.5 + 0.01 * (k % 10), 0.2 + 0.003 * k, 1000 + 3 * k))
PY
"$MKSAMPLES" "$DB" <"$T/samples" || fail "mksamples failed"
cat >"$T/trace.json" <<JSON
{"schemaVersion": 1, "baseTimeNanoseconds": $BASE,
 "traceEvents": [
  {"ph": "X", "name": "ProfilerStep#0", "ts": 700000, "dur": 500000, "pid": 1, "tid": 1},
  {"ph": "X", "name": "ProfilerStep#1", "ts": 1200000, "dur": 500000, "pid": 1, "tid": 1},
  {"ph": "X", "name": "ProfilerStep#2", "ts": 1700000, "dur": 500000, "pid": 1, "tid": 1},
  {"ph": "X", "name": "ProfilerStep#3", "ts": 2200000, "dur": 512345.678, "pid": 1, "tid": 1}
 ]}
JSON

# what summary and windows wrote to a pipe before there were tables
cat >"$T/plain-summary.txt" <<'TXT'
window 1 'run': 2025-10-09T08:53:20.500000000Z to 2025-10-09T08:53:23.500000000Z (3.000s), ended by mark
metadata: {"commit":"abc123","workload":"tables","command":"python3 train.py --epochs 3 --batch-size 64 --data /data/imagenet/train --lr 0.001"}

CARD  SAMPLES  COVER%  GAPS  ENERGY_J  NET_J    IDLE_W  PWR_MEAN  PWR_MIN  PWR_MAX  PWR_P95  GTEMP_MAX  BUSY_MEAN  ACTMEM_PEAK
0     30       100.0   0     208.650   145.650  21.00   69.55     61.4     77.3     77.0     43.5       74.0       1105
1     30       100.0   0     211.250   145.250  22.00   70.42     62.0     78.9     78.6     43.5       77.0       1105
all cards: energy 419.900 J, net of idle 290.900 J

BANDWIDTH  CARD  MEAN_GiB/s  MAX_GiB/s  BYTES
rdmem      0     12.800      13.100     41231686042
wrmem      0     0.605       0.750      1948841411
rxpci      0     0.545       0.590      1755567882
txpci      0     0.262       0.305      842350461
rdmem      1     12.800      13.100     41231686042
wrmem      1     0.605       0.750      1948841411
rxpci      1     0.545       0.590      1755567882
txpci      1     0.262       0.305      842350461

Net energy = energy - idle power x time covered.  Idle power: the median power of the card's samples with busy 0, from 1h00m00s before the window's begin to its end, in whole seconds (windows.idle_lookback): card 0 21.00 W of 5 samples; card 1 22.00 W of 5 samples.

Notes on the data:
- Restarts of aiu-smi inside the window were not recorded (a window from before schema 4, or one that spanned a restart of spyremond).
- Host clock at the window's begin and end: NOT synchronized (est. error 16000.000 ms, max 16000.000 ms).  Its samples cannot be lined up with another host's, nor with a trace from another host.
TXT
cat >"$T/plain-windows.txt" <<'TXT'
ID  TAG  USER  BEGIN                     END                       DURATION  SAMPLES  ENERGY_J  META
1   run  root  2025-10-09T08:53:20.500Z  2025-10-09T08:53:23.500Z  3.000s    60       419.900   commit=abc123 workload=tables command="python3 train.py --epochs 3 --batch-size 64 --data /data/imagenet/train --lr 0.001"
TXT

python3 "$ROOT/tests/integration/tables_check.py" "$T" "$CLIENT" --db "$DB" \
	--socket "$T/none.sock" || fail "the tables are wrong"
echo "ok: tables for people, files for programs"
