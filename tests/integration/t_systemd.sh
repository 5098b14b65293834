# The shipped unit under a real systemd, booted in a container
# (systemd-nspawn, a volatile root sharing the host's /usr) with every
# sandboxing setting enforced by the kernel.  "make install DESTDIR=" is
# bound in at /opt/spy, the unit gets a drop-in that points it there and
# sets WatchdogSec=3s, and a oneshot service inside runs the checks below,
# writes what it saw to $OUT and powers the container off:
#  - systemctl start reaches active; READY came once the socket was up
#    (it exists when start returns) and STATUS= says what it collects;
#  - a member of group spyremon (not root) marks a window; an outsider is
#    refused;
#  - systemctl reload works;
#  - the watchdog: after kill -STOP of the daemon, systemd kills and
#    restarts it within WatchdogSec + RestartSec (plus slack); the
#    database passes integrity_check and the restart ends the window at
#    its last stored sample, ended_by daemon_gone;
#  - systemctl stop exits cleanly, and no row the daemon had is lost;
#  - the modes and owners of the database, the socket and their
#    directories.
# Skips, saying why, only where systemd-nspawn cannot run.
source "$(dirname "$0")/lib.sh"

skip() {
	echo "SKIP: $*"
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "t_systemd needs root to boot a container"
# qemu-user has no PR_SET_CHILD_SUBREAPER, which systemd-nspawn needs
emulated && skip "systemd-nspawn cannot boot a container under qemu-user ($(uname -m) on $(cat /proc/sys/kernel/arch))"
command -v systemd-nspawn >/dev/null ||
	skip "no systemd-nspawn (apt-get install systemd-container)"
[ -d /usr/lib/systemd ] && [ -x /usr/lib/systemd/systemd ] ||
	skip "no systemd in /usr to boot"

DEST=$T/dest
OUT=$T/out
UNITS=$T/units
SYSUSERS=$T/sysusers
mkdir -p "$OUT" "$UNITS/spyremond.service.d" "$SYSUSERS" "$T/etc"
make -s -C "$ROOT" B="$B" install DESTDIR="$DEST" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; fail "make install DESTDIR=$DEST"; }

cp "$DEST/usr/local/lib/systemd/system/spyremond.service" "$UNITS/"
cat >"$UNITS/spyremond.service.d/test.conf" <<'EOF'
[Service]
ExecStart=
ExecStart=/opt/spy/sbin/spyremond
WatchdogSec=3s
RestartSec=1s
# a stopped process cannot act on SIGABRT: SIGKILL follows after 1 s
TimeoutAbortSec=1s
EOF
# a sanitizer build (make SAN=1): LeakSanitizer needs to trace the
# process, which the unit's sandbox forbids; the rest of ASan still runs
# (grep -c reads all of nm's output: grep -q would end nm with SIGPIPE,
# which pipefail takes for a failure)
if nm "$DEST/usr/local/sbin/spyremond" 2>/dev/null | grep -c __asan_init >/dev/null; then
	echo "Environment=ASAN_OPTIONS=detect_leaks=0" >>"$UNITS/spyremond.service.d/test.conf"
	echo "note: a sanitizer build; leak checks are off inside the unit's sandbox"
fi
cat >"$UNITS/spytest.target" <<'EOF'
[Unit]
Description=spyremond under test
Requires=spytest.service basic.target
After=spytest.service basic.target
AllowIsolate=yes
EOF
cat >"$UNITS/spytest.service" <<'EOF'
[Unit]
Description=spyremond checks
After=basic.target
[Service]
Type=oneshot
ExecStart=/bin/bash /nsx/out/check.sh
StandardOutput=file:/nsx/out/console.log
StandardError=inherit
ExecStopPost=/bin/systemctl --no-block poweroff
EOF
cp "$ROOT/systemd/spyremond.sysusers" "$SYSUSERS/spyremond.conf"
cat >"$SYSUSERS/spytest.conf" <<'EOF'
u spymember - "member of spyremon" / -
m spymember spyremon
u spyoutsider - "not a member" / -
EOF
cat >"$T/etc/spyremond.yaml" <<'EOF'
flush_interval: 500ms
source:
  command: [/opt/spy/bin/aiu-smi-sim, --cards, "2", --seed, "3"]
  interval: 100ms
  window_interval: 100ms
EOF

cat >"$OUT/check.sh" <<'EOF'
# runs inside the container as root; one "ok"/"FAIL" line each to result
R=/nsx/out/result
SPY="/opt/spy/bin/spyremon -c /etc/spyremond/spyremond.yaml"
DB=/var/lib/spyremond/spyremon.db
SOCK=/run/spyremond/control.sock
ok() { echo "ok: $*" >>"$R"; }
bad() { echo "FAIL: $*" >>"$R"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
q() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }
as() { local u=$1; shift; setpriv --reuid "$u" --regid "$u" --init-groups -- "$@"; }

systemd-sysusers >>/nsx/out/sysusers.log 2>&1
check "sysusers made spyremond, spyremon and the test users" \
	getent passwd spyremond spymember spyoutsider
systemctl start spyremond
check "systemctl start: active" test "$(systemctl is-active spyremond)" = active
check "READY only once the socket is up" test -S "$SOCK"
status=$(systemctl show -P StatusText spyremond)
echo "STATUS=$status" >>"$R"
check "STATUS= says what it collects" grep -q "collecting" <<<"$status"

for i in $(seq 50); do [ "$(q 'SELECT count(*) FROM samples' 2>/dev/null || echo 0)" -gt 5 ] && break; sleep 0.1; done
id=$(as spymember $SPY mark begin --tag sysd 2>>/nsx/out/member.err)
check "a member of spyremon marks a window (id $id)" test -n "$id"
rc=0; as spyoutsider $SPY mark begin --tag nope >/dev/null 2>>/nsx/out/outsider.err || rc=$?
check "an outsider is refused (exit $rc)" test "$rc" -eq 3
check "the outsider was told why" grep -q "Permission denied" /nsx/out/outsider.err

systemctl reload spyremond
check "systemctl reload: active again" test "$(systemctl is-active spyremond)" = active
check "reload logged" bash -c 'journalctl -u spyremond -o cat | grep -q reloaded'

pid=$(systemctl show -P MainPID spyremond)
t0=$(date +%s%N)
kill -STOP "$pid"
new=
for i in $(seq 200); do
	cur=$(systemctl show -P MainPID spyremond)
	if [ "$cur" != "$pid" ] && [ "$cur" != 0 ] && [ "$(systemctl is-active spyremond)" = active ]; then
		new=$cur; break
	fi
	sleep 0.1
done
t1=$(date +%s%N)
echo "watchdog: stopped pid $pid, running again as pid ${new:-none} after $(( (t1 - t0) / 1000000 )) ms" >>"$R"
check "the watchdog killed and restarted the stopped daemon" test -n "$new"
check "within WatchdogSec 3 s + RestartSec 1 s + 1 s abort + 4 s slack" test $((t1 - t0)) -le 9000000000
check "watchdog named in the journal" bash -c 'journalctl -u spyremond -o cat | grep -qi watchdog'
check "integrity_check after the kill" test "$(q 'PRAGMA integrity_check')" = ok
# the daemon the watchdog killed died with the window open: the restart
# ends it at its last stored sample and says why (spyremond(8)).  The end
# reaches the file with the writer thread's next commit, which may come
# after READY (it did once on a loaded machine): wait for it as a reader of
# the file would
gone_end() {
	test "$(q "SELECT count(*) FROM windows WHERE tag = 'sysd' AND end_ns IS NOT NULL
		AND ended_by = 'daemon_gone' AND end_note LIKE '%$pid%'")" = 1
}
for i in $(seq 100); do gone_end && break; sleep 0.1; done
check "the restart ended the killed daemon's window, by daemon_gone" gone_end
check "and no longer lists it as open" bash -c "$SPY status --json |
	python3 -c 'import json, sys; sys.exit(any(w[\"tag\"] == \"sysd\" for w in json.load(sys.stdin)[\"windows\"]))'"

sleep 1
stop_ns=$(date +%s%N)
systemctl stop spyremond
check "systemctl stop: exited cleanly" test "$(systemctl show -P Result spyremond)" = success
check "exit status 0" test "$(systemctl show -P ExecMainStatus spyremond)" = 0
# the rows read up to the stop were written, not only those of the last
# flush (500 ms): the newest is within an interval and some slack of it
newest=$(q 'SELECT max(ts_ns) FROM samples')
echo "stop: newest row $(( (stop_ns - newest) / 1000000 )) ms before the stop request" >>"$R"
check "no row lost at the stop" test $((stop_ns - newest)) -le 300000000
check "nothing reported lost" bash -c '! journalctl -u spyremond -o cat | grep -q "are lost"'

mode() { stat -c '%a %U %G' "$1"; }
echo "modes: db $(mode $DB); state dir $(mode /var/lib/spyremond)" >>"$R"
check "database 0640 spyremond:spyremon" test "$(mode $DB)" = "640 spyremond spyremon"
check "state directory 0750 spyremond:spyremon" test "$(mode /var/lib/spyremond)" = "750 spyremond spyremon"
systemctl start spyremond
check "socket 0660 spyremond:spyremon" test "$(mode $SOCK)" = "660 spyremond spyremon"
check "socket directory 0750 spyremond:spyremon" test "$(mode /run/spyremond)" = "750 spyremond spyremon"
systemctl stop spyremond
journalctl -u spyremond -o cat >/nsx/out/journal.log 2>&1
echo done >>"$R"
EOF

# the container's own /tmp is its tmpfs; ours holds the tree it binds
rc=0
timeout 120 systemd-nspawn -q -D / --volatile=yes --register=no --keep-unit \
	-M "spytest$$" \
	--bind="$OUT:/nsx/out" \
	--bind-ro="$UNITS:/run/systemd/system" \
	--bind-ro="$DEST/usr/local:/opt/spy" \
	--bind-ro="$T/etc:/etc/spyremond" \
	--bind-ro="$SYSUSERS:/run/sysusers.d" \
	--boot -- systemd.firstboot=off systemd.unit=spytest.target \
	>"$T/console" 2>&1 || rc=$?
if [ ! -s "$OUT/result" ]; then
	tail -n 20 "$T/console" | sed 's/\x1b\[[0-9;]*m//g'
	if grep -qE "Failed to (create|mount|set up|open)|Operation not permitted|not supported" "$T/console" &&
	    [ ! -e "$OUT/console.log" ]; then
		skip "systemd-nspawn cannot boot a container here (exit $rc): $(grep -m1 -E 'Failed|not permitted|not supported' "$T/console" | sed 's/\x1b\[[0-9;]*m//g')"
	fi
	fail "the container gave no result (systemd-nspawn exit $rc)"
fi
cat "$OUT/result"
grep -q '^done$' "$OUT/result" || fail "the checks did not finish (systemd-nspawn exit $rc)"
if grep -q '^FAIL' "$OUT/result"; then
	echo "--- the daemon's journal ---"
	tail -n 30 "$OUT/journal.log" 2>/dev/null || true
	fail "$(grep -c '^FAIL' "$OUT/result") checks failed under systemd"
fi
exit 0
