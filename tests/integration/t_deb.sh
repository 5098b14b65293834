#!/usr/bin/env bash
# The Debian packages, installed in a fresh Debian 12 system booted with
# systemd.  dpkg-buildpackage builds them from a copy of the tree, lintian
# must find no error or warning in them, and a minimal Debian 12 root (made
# by mk/mkroot.sh with systemd and the packages' libraries, cached in
# /var/cache/spyremon-arch) boots under systemd-nspawn on a throw-away
# overlay, where a oneshot service checks:
#  - apt-get install of the four packages, with a drop-in (as an
#    administrator would set one up first) that points spyremond at the
#    simulator: the service is enabled and started by the installation,
#    runs on the simulator, and the metrics socket is installed but not
#    enabled; sysusers and tmpfiles made the user, the group and
#    /var/lib/spyremond 0750; the config is a conffile;
#  - a member of group spyremon marks a window and exports it;
#  - systemctl reload and systemctl restart keep the service active (a
#    new process after restart), and the window is still exported;
#  - apt-get remove stops the service and keeps the database and the
#    config; apt-get purge removes every file the packages installed, the
#    config, the unit's enablement and /var/lib/spyremond with the
#    database, and keeps user spyremond and group spyremon (README.Debian).
# Skips, saying why, without root, under qemu-user (the packages are
# checked natively), for a sanitizer build (the packages are built with
# Debian's flags, so the release pass covers them), or where
# systemd-nspawn cannot boot a container.
source "$(dirname "$0")/lib.sh"

skip() {
	echo "SKIP: $*"
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "t_deb needs root to build a root and boot a container"
[ "$(time_scale)" -eq 1 ] || skip "a sanitizer build or qemu-user: the packages are built with Debian's flags and tested natively"
command -v dpkg-buildpackage >/dev/null && command -v mmdebstrap >/dev/null &&
	command -v lintian >/dev/null && command -v systemd-nspawn >/dev/null ||
	sh "$ROOT/mk/deps.sh" package build >"$T/deps.log" 2>&1 ||
	{ cat "$T/deps.log"; fail "mk/deps.sh package could not install the packaging tools"; }

# ---- build from a copy of the tree: dpkg-buildpackage writes to ".." ----
mkdir -p "$T/pkg/src" "$T/debs"
tar -C "$ROOT" --exclude=./.git --exclude='./build*' --exclude=./demo \
	--exclude=./debian/tmp -cf - . | tar -C "$T/pkg/src" -xf -
(cd "$T/pkg/src" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
	dpkg-buildpackage -b -us -uc) >"$T/build.log" 2>&1 ||
	{ tail -n 40 "$T/build.log"; fail "dpkg-buildpackage failed"; }
cp "$T"/pkg/*.deb "$T/debs/"
rm -f "$T"/debs/*-dbgsym_*.deb
ls "$T/debs"
for p in spyremond spyremon python3-spyremon aiu-smi-sim; do
	ls "$T"/debs/"${p}"_*.deb >/dev/null 2>&1 || fail "no package $p"
done

# ---- lintian: no error, no warning (overrides carry their reasons) ----
rc=0
lintian --fail-on error,warning --tag-display-limit 0 -I --pedantic "$T"/pkg/*.changes \
	>"$T/lintian.log" 2>&1 || rc=$?
sed 's/^/lintian: /' "$T/lintian.log"
[ $rc -eq 0 ] || fail "lintian found errors or warnings (exit $rc)"

# ---- the fresh system: what the packages depend on, and the checks' tools ----
arch=$(dpkg --print-architecture)
root=$(ARCH_CACHE=${ARCH_CACHE:-/var/cache/spyremon-arch} sh "$ROOT/mk/mkroot.sh" "$arch" minbase \
	"bookworm-$arch-deb" systemd dbus procps sqlite3 python3 libsqlite3-0 libyaml-0-2 \
	libyajl2 libsystemd0 zlib1g libcairo2 libfontconfig1 libpng16-16 \
	2>"$T/mkroot.log" | tail -n 1) || { cat "$T/mkroot.log"; fail "mk/mkroot.sh failed"; }
[ -x "$root/lib/systemd/systemd" ] || { cat "$T/mkroot.log"; fail "no systemd in $root"; }

OUT=$T/out
UNITS=$T/units
mkdir -p "$OUT" "$UNITS"
cat >"$UNITS/spytest.target" <<'EOF'
[Unit]
Description=spyremon packages under test
Requires=spytest.service basic.target
After=spytest.service basic.target
AllowIsolate=yes
EOF
cat >"$UNITS/spytest.service" <<'EOF'
[Unit]
Description=spyremon package checks
After=basic.target
[Service]
Type=oneshot
ExecStart=/bin/bash /nsx/out/check.sh
StandardOutput=file:/nsx/out/console.log
StandardError=inherit
ExecStopPost=/bin/systemctl --no-block poweroff
EOF

cat >"$OUT/check.sh" <<'EOF'
# runs inside the container as root; one "ok"/"FAIL" line each to result
R=/nsx/out/result
L=/nsx/out/apt.log
DB=/var/lib/spyremond/spyremon.db
PKGS="spyremond spyremon python3-spyremon aiu-smi-sim"
export DEBIAN_FRONTEND=noninteractive
ok() { echo "ok: $*" >>"$R"; }
bad() { echo "FAIL: $*" >>"$R"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
q() { sqlite3 -readonly "file:$DB?mode=ro" "$1"; }
as() { local u=$1; shift; setpriv --reuid "$u" --regid "$u" --init-groups -- "$@"; }
mode() { stat -c '%a %U %G' "$1"; }
samples() { q 'SELECT count(*) FROM samples' 2>/dev/null || echo 0; }
wait_samples() {
	local i n0=$1
	for i in $(seq 100); do [ "$(samples)" -gt "$n0" ] && return 0; sleep 0.1; done
	return 1
}

# an administrator's drop-in and config, there before the packages are
mkdir -p /etc/systemd/system/spyremond.service.d /srv/spyremon
cat >/etc/systemd/system/spyremond.service.d/simulator.conf <<'E'
[Service]
ExecStart=
ExecStart=/usr/sbin/spyremond -c /srv/spyremon/sim.yaml
E
cat >/srv/spyremon/sim.yaml <<'E'
flush_interval: 500ms
source:
  command: [/usr/bin/aiu-smi-sim, --cards, "2", --seed, "3"]
  interval: 100ms
  window_interval: 100ms
E
systemctl daemon-reload

rc=0
apt-get install -y --no-install-recommends $(ls /nsx/debs/*.deb) >>"$L" 2>&1 || rc=$?
check "apt-get install of the four packages (exit $rc)" test $rc -eq 0
check "spyremond.service enabled by the installation" \
	test "$(systemctl is-enabled spyremond)" = enabled
check "and started by it" test "$(systemctl is-active spyremond)" = active
status=$(systemctl show -P StatusText spyremond)
echo "STATUS=$status" >>"$R"
check "on the simulator, from the drop-in" bash -c 'grep -q "collecting" <<<"$1" &&
	grep -qs aiu-smi-sim /proc/[0-9]*/cmdline' - "$status"
check "spyremon-metrics.socket installed, not enabled" \
	test "$(systemctl is-enabled spyremon-metrics.socket)" = disabled
check "user spyremond in group spyremon" test "$(id -gn spyremond)" = spyremon
check "/var/lib/spyremond 0750 spyremond:spyremon" \
	test "$(mode /var/lib/spyremond)" = "750 spyremond spyremon"
check "/etc/spyremond/spyremond.yaml is a conffile" \
	bash -c "dpkg-query -W -f='\${Conffiles}' spyremond | grep -q ' /etc/spyremond/spyremond.yaml '"
check "the Python helper imports" python3 -c 'import spyremon'
check "aiu-smi-sim(1) installed" test -f /usr/share/man/man1/aiu-smi-sim.1.gz
check "the simulator's config for the drop-in is shipped and valid" \
	spyremond --check-config -c /usr/share/aiu-smi-sim/spyremond.yaml

useradd -M -G spyremon -s /bin/sh alice
check "samples stored" wait_samples 5
id=$(as alice spyremon mark begin --tag debwin 2>>/nsx/out/alice.err)
check "a member of spyremon marks a window (id $id)" test -n "$id"
wait_samples $(( $(samples) + 10 ))
as alice spyremon mark end --tag debwin >>/nsx/out/alice.err 2>&1
# the writer stores the end a moment after mark end answers
for i in $(seq 100); do
	end_ns=$(q "SELECT end_ns FROM windows WHERE tag = 'debwin'")
	[ -n "$end_ns" ] && break
	sleep 0.1
done
check "and ends it" test -n "$end_ns"
# the window's last sample ends after end_ns; export once it is stored
for i in $(seq 100); do
	[ "$(q "SELECT count(*) FROM samples WHERE ts_ns > ${end_ns:-0} + 200000000")" -gt 0 ] && break
	sleep 0.1
done
as alice spyremon export --window debwin --output /tmp/w.csv 2>>/nsx/out/alice.err
check "and exports it ($(wc -l </tmp/w.csv) lines)" test "$(wc -l </tmp/w.csv)" -gt 1

rc=0
systemctl reload spyremond 2>>/nsx/out/reload.err || rc=$?
check "systemctl reload succeeds (exit $rc$(head -c 200 /nsx/out/reload.err | tr '\n' ' '))" test $rc -eq 0
check "and the service is active" test "$(systemctl is-active spyremond)" = active
check "reload logged" bash -c 'journalctl -u spyremond -o cat | grep -q reloaded'
pid=$(systemctl show -P MainPID spyremond)
systemctl restart spyremond
new=$(systemctl show -P MainPID spyremond)
check "systemctl restart: active as a new process ($pid, then $new)" \
	test "$(systemctl is-active spyremond)" = active -a "$new" != "$pid" -a "$new" != 0
n=$(samples)
check "samples stored after the restart" wait_samples "$n"
as alice spyremon export --window debwin --output /tmp/w2.csv 2>>/nsx/out/alice.err
check "the window exports the same after the restart" cmp -s /tmp/w.csv /tmp/w2.csv

dpkg -L $PKGS 2>/dev/null | sort -u >/nsx/out/files
apt-get remove -y spyremond >>"$L" 2>&1
check "apt-get remove: the service is gone" bash -c '! systemctl is-active -q spyremond'
check "remove keeps the database" test -f "$DB"
check "remove keeps the config" test -f /etc/spyremond/spyremond.yaml
apt-get purge -y $PKGS >>"$L" 2>&1
left=""
while read -r f; do
	[ -d "$f" ] && continue
	[ -e "$f" ] || [ -L "$f" ] && left="$left $f"
done </nsx/out/files
check "purge removes every file the packages installed:${left:- none left}" test -z "$left"
check "purge removes the database and /var/lib/spyremond" test ! -e /var/lib/spyremond
check "purge removes /etc/spyremond" test ! -e /etc/spyremond
check "purge removes the unit's enablement" \
	test ! -e /etc/systemd/system/multi-user.target.wants/spyremond.service
check "purge leaves no compiled Python helper" \
	bash -c '! ls /usr/lib/python3/dist-packages/__pycache__/spyremon.* 2>/dev/null'
check "dpkg knows none of the packages" bash -c "! dpkg -s $PKGS >/dev/null 2>&1"
check "user spyremond and group spyremon are kept" getent passwd spyremond
journalctl -u spyremond -o cat >/nsx/out/journal.log 2>&1
echo done >>"$R"
EOF

rc=0
timeout 300 systemd-nspawn -q -D "$root" --volatile=overlay --register=no --keep-unit \
	-M "spydeb$$" \
	--bind="$OUT:/nsx/out" \
	--bind-ro="$T/debs:/nsx/debs" \
	--bind-ro="$UNITS:/run/systemd/system" \
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
grep -q '^done$' "$OUT/result" || { tail -n 30 "$OUT/apt.log" 2>/dev/null; fail "the checks did not finish (systemd-nspawn exit $rc)"; }
if grep -q '^FAIL' "$OUT/result"; then
	echo "--- apt ---"
	tail -n 30 "$OUT/apt.log" 2>/dev/null || true
	echo "--- the daemon's journal ---"
	tail -n 30 "$OUT/journal.log" 2>/dev/null || true
	fail "$(grep -c '^FAIL' "$OUT/result") checks failed in the installed system"
fi
exit 0
