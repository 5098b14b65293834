# spyremon status for a person, and the direct reader's old-format state.
#
# 8 simulated cards write their metric files every 10 ms, cards 2, 5 and 7
# in the old format; the daemon samples and reads the files every 10 ms.
# Checks:
#  - the default status is at most 24 lines: a line each for the daemon
#    (pid), aiu-smi (its -v), the database (its path), the windows (the
#    open one's tag), and one per card naming its device, bus ID, its
#    newest sample's age in seconds and where its metrics come from: the
#    new-format cards their power and temperature from the metric file,
#    the old-format ones everything from aiu-smi, saying why;
#  - -v has the detail: every card's counters, ages in seconds (no raw
#    ns), and no "not checked yet" of a file being read;
#  - --json keeps every member it had;
#  - an old-format card counts no errors, and its file is copied a few
#    times only (the daemon's own count of reads), while a new-format card
#    is read at every 10 ms tick;
#  - writes stalled on a lock held by another process (WARNING, first);
#  - with aiu-smi and the files frozen (SIGSTOP) for longer than three of
#    its intervals, status warns that no card has a recent sample, still in
#    24 lines.
source "$(dirname "$0")/lib.sh"

need python3
SPY="$CLIENT -c $T/spyremond.yaml"
OLD="2 5 7"

write_config 8 10ms --write-metric-files --metric-format new \
	--file-interval 0.01 --old-format-cards 2,5,7
printf '  direct: auto\n' >>"$T/spyremond.yaml"
FLUSH=100ms
start_daemon

# every new-format card has file rows over 2.5 s: read for that long
read_long_enough() {
	[ "$(sqlite3 -readonly "file:$DB?mode=ro" \
	    "SELECT count(*) FROM (SELECT device FROM samples WHERE src = 1
	     GROUP BY device HAVING max(ts_ns) - min(ts_ns) > 2500000000)" \
	    2>/dev/null || echo 0)" -ge 5 ]
}
wait_for 40 read_long_enough || fail "the new-format cards were not read for 2.5 s"
$SPY mark begin --tag status-check >/dev/null || fail "mark begin failed"
$SPY status >"$T/status.txt" || fail "status failed"
$SPY status -v >"$T/status-v.txt" || fail "status -v failed"
$SPY status --verbose >"$T/status-verbose.txt" || fail "status --verbose failed"
$SPY status --json >"$T/status.json" || fail "status --json failed"
echo "--- spyremon status ---"
cat "$T/status.txt"

# ---- the default view ----
n=$(wc -l <"$T/status.txt")
[ "$n" -le 24 ] || fail "status is $n lines, more than 24"
grep -q "^daemon: .*pid $DPID, up [0-9.]*s" "$T/status.txt" ||
	fail "no daemon line with its pid and uptime"
grep -q '^aiu-smi:  running, pid [0-9]*, 0 restarts; aiu-smi -v: aiu-smi-sim version' \
	"$T/status.txt" || fail "no aiu-smi line with its version"
grep -Eq "^database: $DB, [0-9.]+ [A-Za-z]+; writer ok: [0-9]+ rows written since start, [0-9]+ queued$" \
	"$T/status.txt" ||
	fail "no database line"
grep -q "^windows:  1 open: status-check (id 1)$" "$T/status.txt" ||
	fail "no windows line naming the open window"
grep -q "^cards:    8, rows stored every 10ms now (a window is open)$" "$T/status.txt" ||
	fail "no cards line"
! grep -q WARNING "$T/status.txt" || fail "a warning with nothing wrong"
for dev in 0 1 2 3 4 5 6 7; do
	bus=$(printf '0000:%02x:00.0' $((0x13 + dev)))
	if [[ " $OLD " == *" $dev "* ]]; then
		want="all: aiu-smi (metric file in the old format)"
	else
		want="power: metric file; busy, temp, mem, PCIe: aiu-smi"
	fi
	line=$(grep "^$dev " "$T/status.txt" || true)
	[[ "$line" =~ ^$dev\ +$bus\ +[0-9]+\.[0-9]s\ ago\ +(.*)$ &&
	    "${BASH_REMATCH[1]}" == "$want" ]] ||
		fail "card $dev ($bus) is not shown as '$want' with its age in seconds: $line"
	[ "$(grep -c " $bus " "$T/status.txt")" = 1 ] || fail "card $dev shown more than once"
done

# ---- -v: the detail ----
for f in status-v status-verbose; do
	[ "$(grep -c "^    direct read: " "$T/$f.txt")" = 8 ] ||
		fail "$f: not every card's direct read is shown"
done
for want in "torn retries" "missed updates" "duplicates" "reopened" \
	"stamped by the writer" "the file gives: " "retention:" \
	"unreliable: rsvmem, pt_act" "machine id: " "0000:13:00.0 pf, NUMA node 0"; do
	grep -q "$want" "$T/status-v.txt" || fail "status -v does not show '$want'"
done
[ "$(grep -c "direct read: old format$" "$T/status-v.txt")" = 3 ] ||
	fail "status -v does not show 3 old-format files"
[ "$(grep -c "direct read: reading, newest file row [0-9.]*s ago$" "$T/status-v.txt")" = 5 ] ||
	fail "status -v does not show 5 files read, with ages in seconds"
! grep -Eq '[0-9]ns\b' "$T/status-v.txt" || fail "status -v shows raw ns: $(grep -E '[0-9]ns\b' "$T/status-v.txt")"
! grep -q "not checked yet" "$T/status-v.txt" || fail "status -v says 'not checked yet'"

# ---- --json: every member it had, and the old-format state ----
python3 - "$T/status.json" "$OLD" <<'EOF' || fail "status --json is wrong"
import json, sys
s = json.load(open(sys.argv[1]))
old = {int(d) for d in sys.argv[2].split()}
had = {
    "daemon": ["version", "pid", "started_ns", "state"],
    "child": ["pid", "state", "restarts", "last_error", "bad_lines", "smi_version"],
    "sampling": ["interval_ns", "configured_interval_ns", "window_interval_ns",
                 "pre_window_ns", "child_interval_ns", "newest_ns", "newest_age_ns"],
    "database": ["path", "hostname", "machine_id", "file_bytes", "rows_written",
                 "pending", "flushes_failed", "rows_dropped", "recreated", "writer"],
    "retention": ["max_age_ns", "max_size", "windows_max_age_ns", "windows_max_open_ns"],
}
for sec, keys in had.items():
    for k in keys:
        assert k in s[sec], "%s.%s is gone" % (sec, k)
for k in ["state", "stalled_ns", "why", "queued_changes"]:
    assert k in s["database"]["writer"], "database.writer.%s is gone" % k
assert isinstance(s["unreliable"], list) and isinstance(s["windows"], list)
for k in ["id", "tag", "uid", "pid", "begin_ns", "meta"]:
    assert k in s["windows"][0], "windows[].%s is gone" % k
for k in ["bus_id", "function", "numa_node", "driver", "link_speed", "link_width"]:
    assert k in s["cards"][0], "cards[].%s is gone" % k
direct_keys = ["state", "why", "stamps", "reads", "rows", "duplicates",
               "missed_updates", "torn_retries", "torn_dropped", "updating",
               "errors", "reopened", "file_interval", "byte_swapped", "newest_age_ns"]
health = {h["device"]: h for h in s["health"]}
assert sorted(health) == list(range(8)), sorted(health)
for dev, h in health.items():
    for k in ["device", "bus_id", "metric_file", "state", "counters_zero", "text", "source"]:
        assert k in h, "health[%d].%s is gone" % (dev, k)
    for k in direct_keys:
        assert k in h["direct"], "health[%d].direct.%s is gone" % (dev, k)
    assert h["state"] != "unknown", h
    assert h["newest_age_ns"] is not None and h["newest_age_ns"] < 5e9, h
new_reads = min(h["direct"]["reads"] for d, h in health.items() if d not in old)
for dev in sorted(old):
    d = health[dev]["direct"]
    assert health[dev]["source"] == "aiu-smi" and d["state"] == "old format", d
    assert d["errors"] == 0, "old-format device %d counts %d errors" % (dev, d["errors"])
    # read at start, then when stat finds its mtime moved (writeback of the
    # simulator's map) or every 30 s: a handful, against a read per tick
    assert d["reads"] <= 5, "old-format device %d was read %d times, a new-format " \
        "card %d times" % (dev, d["reads"], new_reads)
    print("old-format device %d: %d reads, 0 errors" % (dev, d["reads"]))
for dev in set(range(8)) - old:
    h = health[dev]
    assert h["source"] == "file" and h["direct"]["state"] == "reading", h
    assert "pwr" in h["direct"]["file_metrics"] and "tempr" in h["direct"]["file_metrics"], h
assert new_reads >= 200, "a new-format card was read only %d times" % new_reads
print("new-format cards: at least %d reads each" % new_reads)
assert s["sampling"]["direct"] == "auto"
EOF
$SPY mark end >/dev/null || fail "mark end failed"

# ---- writes stalled: the first line says so ----
sqlite3 "$DB" ".timeout 5000" "BEGIN EXCLUSIVE;" ".shell sleep 4" "COMMIT;" \
	>/dev/null &
LOCKER=$!
sleep 2.5
$SPY status >"$T/stalled.txt" || fail "status failed during the lock"
wait "$LOCKER"
head -n 1 "$T/stalled.txt" | grep -q "^WARNING: writes stalled for [0-9.]*s: locked" ||
	fail "status during the lock does not start with the stall: $(cat "$T/stalled.txt")"
grep -q "; writer STALLED: " "$T/stalled.txt" || fail "the database line does not say STALLED"
stop_daemon

# ---- no recent sample: aiu-smi every 2 s, frozen for 7 s ----
write_config 8 2s --write-metric-files --metric-format new \
	--file-interval 0.5 --old-format-cards 2,5,7
START=$(date +%s%N)
start_daemon
has_rows() {
	[ "$(sqlite3 -readonly "file:$DB?mode=ro" \
	    "SELECT count(DISTINCT device) FROM samples WHERE ts_ns > $START" \
	    2>/dev/null || echo 0)" -ge 8 ]
}
wait_for 30 has_rows || fail "no rows after the restart"
SIMPID=$(pgrep -P "$DPID" -f aiu-smi-sim | head -n 1)
[ -n "$SIMPID" ] || fail "no simulator"
kill -STOP "$SIMPID"
sleep 7		# over 3 intervals (6 s), under the 20 s that aiu-smi may be silent
$SPY status >"$T/frozen.txt" || fail "status failed"
kill -CONT "$SIMPID"
echo "--- spyremon status, aiu-smi frozen ---"
cat "$T/frozen.txt"
n=$(wc -l <"$T/frozen.txt")
[ "$n" -le 24 ] || fail "status with a warning is $n lines, more than 24"
head -n 1 "$T/frozen.txt" | grep -q "^WARNING: no sample for over 6.0s from devices 0-7$" ||
	fail "status does not start with a warning about the cards"
stop_daemon
echo "ok"
