#!/usr/bin/env bash
# A backlog of ended windows without summaries, as a daemon killed after a
# storm of windows leaves behind: BACKLOG_WINDOWS of them (default 5000),
# 61 s apart over 3.5 days, with samples every 10 s, written by mksamples.
# With idle_lookback 30d each summary learns the idle power afresh from
# every sample before it, so the backlog is minutes of work.  The daemon
# summarizes it in bounded steps, so that meanwhile it takes new metrics
# and stores samples, a new window ended with "mark end --wait 10s" is
# complete within that wait, and SIGTERM stops it within 2 s (times
# time_scale), interrupting the summary under way.  (Done in one go, the
# backlog held every write back until it was through, and a stop waited
# for it.)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

MKSAMPLES=$BIN/tests/mksamples
N=${BACKLOG_WINDOWS:-5000}
S=1000000000
scale=$(time_scale)
now=$(date +%s%N)
base=$((now - (N * 61 + 3600 + 600) * S))
python3 - "$N" "$base" <<'PY' | "$MKSAMPLES" "$DB" || fail "mksamples failed"
import sys
n, base, s = int(sys.argv[1]), int(sys.argv[2]), 10**9
out = ["nosummary"]
for t in range(base + 10 * s, base + (n * 61 + 3600) * s + 1, 10 * s):
    busy = (t // s) % 7 == 0
    for d in (0, 1):
        out.append("%d %d 10000 pwr=%s busy=%d"
                   % (t, d, "80.0" if busy else "50.0", 40 if busy else 0))
for i in range(n):
    b = base + (3600 + i * 61) * s
    out.append("window backlog-%d %d %d" % (i, b, b + 2 * s))
print("\n".join(out))
PY
q() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }
left=$(q "SELECT count(*) FROM windows WHERE summarized_ns IS NULL")
[ "$left" = "$N" ] || fail "the backlog has $left windows without a summary, not $N"
rows0=$(rows_in_db)
[ "$rows0" -ge $((N * 12)) ] || fail "mksamples wrote $rows0 rows, not the backlog's"

write_config 2 100ms
cat >>"$T/spyremond.yaml" <<YAML
retention:
  max_age: 60d
  windows_max_age: 60d
windows:
  idle_lookback: 30d
YAML
start_daemon
wait_for 20 test -S "$T/control.sock" || fail "no control socket"
id=$("$CLIENT" --socket "$T/control.sock" mark begin --tag probe) ||
	fail "mark begin during the backlog"
rc=0
"$CLIENT" --socket "$T/control.sock" mark end --id "$id" --wait 10s \
	2>"$T/end.err" || rc=$?
[ "$rc" = 0 ] || fail "mark end --wait during the backlog exited $rc: $(cat "$T/end.err")"
[ "$(q "SELECT complete_ns IS NOT NULL FROM windows WHERE id = $id")" = 1 ] ||
	fail "the probe window is not complete"
n=$(q "SELECT count(*) FROM samples WHERE ts_ns >= (SELECT begin_ns FROM windows WHERE id = $id)")
[ "$n" -gt 0 ] || fail "no samples stored during the backlog"
t0=$(date +%s%N)
stop_daemon
stop_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
left=$(q "SELECT count(*) FROM windows WHERE summarized_ns IS NULL")
echo "backlog of $N windows: $n samples stored and the probe complete during it;" \
	"clean stop in $stop_ms ms with $left left to summarize"
[ "$stop_ms" -le $((2000 * scale)) ] || fail "the stop took $stop_ms ms"
[ "$(q 'PRAGMA integrity_check')" = ok ] || fail "integrity check"
[ "$(rows_in_db)" -gt "$rows0" ] || fail "no rows added"
exit 0
