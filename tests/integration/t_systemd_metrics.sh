#!/usr/bin/env bash
# The Prometheus endpoint under a real systemd: a container booted with
# systemd-nspawn on the host's /usr (the endpoint of docs/fleet.md, "Prometheus")
# runs the installed spyremond.service on the simulator and
# spyremon-metrics.socket (on a loopback port); a GET /metrics through
# Accept=yes is answered with the cards' samples, by a service that runs
# as a dynamic user with group spyremon, sees the database read-only, and
# has no network interface but loopback.
#
# Installs systemd-container (systemd-nspawn) when it is missing and we are
# root; skips, saying why, when it cannot, or when nspawn cannot boot here.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need python3
[ "$(id -u)" -eq 0 ] || { echo "SKIP: booting a container needs root"; exit 77; }
# qemu-user has no PR_SET_CHILD_SUBREAPER, which systemd-nspawn needs
if emulated; then
	echo "SKIP: systemd-nspawn cannot boot a container under qemu-user ($(uname -m) on $(cat /proc/sys/kernel/arch))"
	exit 77
fi
if ! command -v systemd-nspawn >/dev/null; then
	sh "$ROOT/mk/deps.sh" --packages systemd-container >"$T/apt.log" 2>&1 ||
		{ tail -n 5 "$T/apt.log"; fail "mk/deps.sh --packages systemd-container failed"; }
fi

D=$T/root
make -C "$ROOT" --no-print-directory install DESTDIR="$D" PREFIX=/usr/local \
	B="$B" >"$T/make.log" 2>&1 || { cat "$T/make.log"; fail "make install failed"; }
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
U=$T/units
OUT=$T/out
mkdir -p "$U" "$OUT" "$T/etc"
cp "$D"/usr/local/lib/systemd/system/spyremon* "$U/"
cp "$D"/usr/local/lib/systemd/system/spyremond.service "$U/"

# the installed units, pointed at the tree bound on /opt/spy
mkdir -p "$U/spyremond.service.d" "$U/spyremon-metrics@.service.d" "$U/spyremon-metrics.socket.d"
printf '[Service]\nExecStart=\nExecStart=/opt/spy/sbin/spyremond\n' >"$U/spyremond.service.d/opt.conf"
printf '[Service]\nExecStart=\nExecStart=/opt/spy/bin/spyremon metrics --http\n' \
	>"$U/spyremon-metrics@.service.d/opt.conf"
printf '[Socket]\nListenStream=\nListenStream=127.0.0.1:%s\n' "$PORT" \
	>"$U/spyremon-metrics.socket.d/loopback.conf"
cat >"$T/etc/spyremond.yaml" <<YML
database: /var/lib/spyremond/spyremon.db
flush_interval: 200ms
source:
  command: ["/opt/spy/bin/aiu-smi-sim", "--cards", "2", "--seed", "7"]
  interval: 100ms
  window_interval: 100ms
YML

cat >"$U/spytest.target" <<'UNIT'
[Unit]
Description=spyremon metrics test
Requires=spytest.service
After=spytest.service
UNIT
cat >"$U/spytest.service" <<'UNIT'
[Unit]
Description=spyremon metrics test run
After=basic.target

[Service]
Type=oneshot
ExecStart=/bin/bash /nsx/out/inside.sh
ExecStartPost=/bin/systemctl poweroff --no-block
StandardOutput=append:/nsx/out/inside.log
StandardError=append:/nsx/out/inside.log
UNIT

cat >"$OUT/inside.sh" <<INSIDE
set -u
PORT=$PORT
INSIDE
cat >>"$OUT/inside.sh" <<'INSIDE'
res=/nsx/out/result
echo "start" >"$res"
systemd-sysusers || echo "sysusers failed" >>"$res"
systemctl start spyremond.service || echo "spyremond did not start" >>"$res"
for i in $(seq 50); do
	[ -S /run/spyremond/control.sock ] && break; sleep 0.2
done
sleep 2
systemctl start spyremon-metrics.socket || echo "socket did not start" >>"$res"
python3 - "$PORT" >>"$res" 2>&1 <<'PY'
import os, socket, subprocess, sys, time, urllib.request
port = int(sys.argv[1])
# one held connection: its service instance is alive while we look at it
held = socket.create_connection(("127.0.0.1", port))
time.sleep(1)
units = subprocess.run(["systemctl", "list-units", "--plain", "--no-legend",
                        "spyremon-metrics@*"], capture_output=True, text=True).stdout
name = units.split()[0]
pid = subprocess.run(["systemctl", "show", "-p", "MainPID", "--value", name],
                     capture_output=True, text=True).stdout.strip()
status = open("/proc/%s/status" % pid).read()
uid = int([l for l in status.splitlines() if l.startswith("Uid:")][0].split()[1])
groups = [int(g) for l in status.splitlines() if l.startswith("Groups:") for g in l.split()[1:]]
import grp, pwd
spy_gid = grp.getgrnam("spyremon").gr_gid
print("instance %s pid %s uid %d groups %s" % (name, pid, uid, groups))
print("DYNAMIC_UID", 61184 <= uid <= 65519)
print("GROUP_SPYREMON", spy_gid in groups)
mounts = open("/proc/%s/mountinfo" % pid).read().splitlines()
db = [m for m in mounts if " /var/lib/spyremond " in m]
print("DB_READONLY", bool(db) and all(" ro," in m.split(" - ")[0] + "," or m.split()[5].startswith("ro") for m in db))
ifaces = [l.split(":")[0].strip() for l in open("/proc/%s/net/dev" % pid).read().splitlines()[2:]]
print("NETWORK", ",".join(ifaces))
held.close()
time.sleep(0.5)
# and a real scrape
r = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10)
body = r.read().decode()
print("HTTP", r.status, r.headers.get("Content-Type"))
print("POWER_LINES", sum(1 for l in body.splitlines() if l.startswith("spyre_power_watts{")))
PY
ls -l /var/lib/spyremond >>"$res" 2>&1
echo "end" >>"$res"
INSIDE

rc=0
timeout 120 systemd-nspawn -q -D / --volatile=yes --register=no --keep-unit \
	-M "spymx$$" \
	--bind="$OUT:/nsx/out" \
	--bind-ro="$U:/run/systemd/system" \
	--bind-ro="$D/usr/local:/opt/spy" \
	--bind-ro="$T/etc:/etc/spyremond" \
	--bind-ro="$D/usr/local/lib/sysusers.d:/run/sysusers.d" \
	--boot -- systemd.firstboot=off systemd.unit=spytest.target \
	>"$T/console.log" 2>&1 || rc=$?
if [ ! -s "$OUT/result" ]; then
	tail -n 20 "$T/console.log" | sed 's/\x1b\[[0-9;]*m//g'
	if [ $rc -ne 0 ] && grep -q -i "not supported\|permission denied\|operation not permitted" "$T/console.log"; then
		echo "SKIP: systemd-nspawn cannot boot a container here (exit $rc)"
		exit 77
	fi
	fail "the container wrote no result (nspawn exit $rc)"
fi
cat "$OUT/result"
[ -f "$OUT/inside.log" ] && cat "$OUT/inside.log"
grep -q '^end$' "$OUT/result" || fail "the test inside did not finish"
grep -q '^HTTP 200 application/openmetrics-text\|^HTTP 200 text/plain' "$OUT/result" ||
	fail "GET /metrics through Accept=yes was not answered"
n=$(sed -n 's/^POWER_LINES //p' "$OUT/result")
[ "${n:-0}" -ge 2 ] || fail "the answer has $n cards' power, not 2"
grep -qx 'DYNAMIC_UID True' "$OUT/result" || fail "the service did not run as a dynamic user"
grep -qx 'GROUP_SPYREMON True' "$OUT/result" || fail "the service is not in group spyremon"
grep -qx 'DB_READONLY True' "$OUT/result" || fail "the service sees the database writable"
grep -qx 'NETWORK lo' "$OUT/result" || fail "the service has network interfaces: $(grep NETWORK "$OUT/result")"
echo ok
