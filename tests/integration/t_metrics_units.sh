#!/usr/bin/env bash
# The Prometheus endpoint's units as make install writes them: every unit
# passes systemd-analyze verify; spyremon-metrics@.service and the textfile
# service score an exposure of at most 2.0 in systemd-analyze security
# --offline=true; the socket listens on the documented port with
# Accept=yes; the service runs as a dynamic user in group spyremon, with
# no network but the accepted connection; and spyremond.service keeps
# PrivateNetwork=yes.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

MAX_EXPOSURE=2.0
PORT=19930
D=$T/root
need systemd-analyze
make -C "$ROOT" --no-print-directory install DESTDIR="$D" PREFIX=/usr/local \
	B="$B" >"$T/make.log" 2>&1 || { cat "$T/make.log"; fail "make install failed"; }
U=$D/usr/local/lib/systemd/system

# verify checks that ExecStart= exists: point it at the DESTDIR copy
mkdir -p "$T/v"
for u in spyremond.service spyremon-metrics.socket spyremon-metrics@.service \
    spyremon-metrics-textfile.service spyremon-metrics-textfile.timer; do
	[ -f "$U/$u" ] || fail "make install did not install $u"
	if grep -n '@[a-z]*@' "$U/$u"; then fail "placeholders left in $u"; fi
	sed "s|/usr/local/s\{0,1\}bin/|$D&|g; s|$D$D|$D|g" "$U/$u" >"$T/v/$u"
done
grep -qx "ExecStart=/usr/local/bin/spyremon metrics --http" "$U/spyremon-metrics@.service" ||
	fail "the service does not run \$PREFIX/bin/spyremon metrics --http"
rc=0
MANPATH=$D/usr/local/share/man systemd-analyze verify --man=yes \
	"$T/v/spyremon-metrics.socket" "$T/v/spyremon-metrics-textfile.timer" \
	>"$T/verify.log" 2>&1 || rc=$?
if [ $rc -ne 0 ] || grep -q 'spyremon' "$T/verify.log"; then
	cat "$T/verify.log"
	fail "systemd-analyze verify: exit $rc"
fi

exposure() {
	systemd-analyze security --offline=true "$1" >"$T/security.log" 2>&1 || true
	sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p' "$T/security.log"
}
for u in spyremon-metrics@.service spyremon-metrics-textfile.service; do
	score=$(exposure "$T/v/$u")
	[ -n "$score" ] || { cat "$T/security.log"; fail "$u: no exposure level reported"; }
	echo "$u: exposure $score (at most $MAX_EXPOSURE)"
	awk -v s="$score" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(s <= m) }' || {
		grep '✗' "$T/security.log" || true
		fail "$u: exposure $score is above $MAX_EXPOSURE"
	}
done

# the settings the issue names, as systemd parses them
prop() { grep -x "$2" "$U/$1" >/dev/null || fail "$1 lacks $2"; }
prop spyremon-metrics.socket "ListenStream=$PORT"
prop spyremon-metrics.socket "Accept=yes"
prop spyremon-metrics@.service "DynamicUser=yes"
prop spyremon-metrics@.service "SupplementaryGroups=spyremon"
prop spyremon-metrics@.service "PrivateNetwork=yes"
prop spyremon-metrics@.service "IPAddressDeny=any"
prop spyremon-metrics@.service "StandardInput=socket"
prop spyremond.service "PrivateNetwork=yes"
# the port is documented where an administrator looks
grep -q "$PORT" "$ROOT/man/spyremon.1" || fail "spyremon(1) does not name port $PORT"
echo ok
