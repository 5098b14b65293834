#!/usr/bin/env bash
# make install puts exactly the expected files under DESTDIR and PREFIX and
# never overwrites a config; the installed unit passes systemd-analyze
# verify and scores an exposure of at most 1.5 in systemd-analyze security;
# the sysusers.d file creates the user and group the unit runs as; make
# uninstall removes everything but the config.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

MAX_EXPOSURE=1.5
D=$T/root

# install_into DESTDIR PREFIX: run make install, showing its output on failure
install_into() {
	make -C "$ROOT" --no-print-directory install DESTDIR="$1" PREFIX="$2" \
		B="$B" >"$T/make.log" 2>&1 || { cat "$T/make.log"; fail "make install failed"; }
}

# files_under DIR: every file and symlink under DIR, relative, sorted
files_under() {
	(cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort)
}

# mode_is FILE MODE
mode_is() {
	[ "$(stat -c %a "$1")" = "$2" ] || fail "$1 has mode $(stat -c %a "$1"), not $2"
}

[ -f "$ROOT/conf/spyremond.yaml" ] || fail "conf/spyremond.yaml is missing"

# ---- layout ----
install_into "$D" /usr/local
{
	echo etc/spyremond/spyremond.yaml
	echo usr/local/bin/aiu-smi-sim
	echo usr/local/bin/spyremon
	echo usr/local/lib/systemd/system/spyremond.service
	echo usr/local/lib/systemd/system/spyremon-metrics.socket
	echo usr/local/lib/systemd/system/spyremon-metrics@.service
	echo usr/local/lib/systemd/system/spyremon-metrics-textfile.service
	echo usr/local/lib/systemd/system/spyremon-metrics-textfile.timer
	echo usr/local/lib/sysusers.d/spyremond.conf
	echo usr/local/lib/tmpfiles.d/spyremond.conf
	echo "usr/local/lib/python$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')/dist-packages/spyremon.py"
	echo usr/local/sbin/spyremond
	echo usr/local/libexec/spyremon/spyremon-prolog
	echo usr/local/libexec/spyremon/spyremon-epilog
	echo usr/local/share/spyremon/grafana/spyremon.json
	echo usr/local/share/aiu-smi-sim/spyremond.yaml
	echo usr/local/share/aiu-smi-sim/torch/fake_trace.py
	echo usr/local/share/aiu-smi-sim/torch/jobargs.py
	echo usr/local/share/aiu-smi-sim/torch/profile_demo.py
	echo usr/local/share/man/man1/spyremon.1
	echo usr/local/share/man/man5/spyremon-schema.5
	echo usr/local/share/man/man5/spyremond.yaml.5
	echo usr/local/share/man/man8/spyremond.8
	# pages added to man/ later are installed by section too
	for page in "$ROOT"/man/*.[158]; do
		echo "usr/local/share/man/man${page##*.}/${page##*/}"
	done
} | LC_ALL=C sort -u >"$T/expected"
files_under "$D" >"$T/got"
diff -u "$T/expected" "$T/got" >&2 || fail "make install laid out other files than expected"

for f in usr/local/sbin/spyremond usr/local/bin/spyremon usr/local/bin/aiu-smi-sim; do
	mode_is "$D/$f" 755
done
for f in usr/local/lib/systemd/system/spyremond.service \
    usr/local/lib/sysusers.d/spyremond.conf etc/spyremond/spyremond.yaml \
    usr/local/share/man/man1/spyremon.1 usr/local/share/man/man8/spyremond.8; do
	mode_is "$D/$f" 644
done
"$D/usr/local/sbin/spyremond" --check-config \
	-c "$D/usr/local/share/aiu-smi-sim/spyremond.yaml" >/dev/null ||
	fail "the installed simulator config does not pass --check-config"
cmp -s "$ROOT/conf/spyremond.yaml" "$D/etc/spyremond/spyremond.yaml" ||
	fail "the installed config differs from conf/spyremond.yaml"
"$D/usr/local/sbin/spyremond" --version | grep -q '^spyremond ' ||
	fail "the installed daemon does not run"

UNIT=$D/usr/local/lib/systemd/system/spyremond.service
grep -qx 'ExecStart=/usr/local/sbin/spyremond' "$UNIT" ||
	fail "ExecStart does not name \$PREFIX/sbin/spyremond: $(grep ExecStart= "$UNIT")"
if grep -n '@[a-z]*@' "$UNIT"; then fail "placeholders left in the installed unit"; fi

# PREFIX=/usr puts the unit where distributions keep theirs
install_into "$T/usr-root" /usr
[ -f "$T/usr-root/usr/lib/systemd/system/spyremond.service" ] ||
	fail "PREFIX=/usr: no /usr/lib/systemd/system/spyremond.service"
grep -qx 'ExecStart=/usr/sbin/spyremond' "$T/usr-root/usr/lib/systemd/system/spyremond.service" ||
	fail "PREFIX=/usr: ExecStart does not name /usr/sbin/spyremond"
[ -f "$T/usr-root/usr/lib/python3/dist-packages/spyremon.py" ] ||
	fail "PREFIX=/usr: the Python helper is not in /usr/lib/python3/dist-packages"

# ---- a second install keeps a modified config ----
echo "# changed by the administrator" >>"$D/etc/spyremond/spyremond.yaml"
cp "$D/etc/spyremond/spyremond.yaml" "$T/modified.yaml"
install_into "$D" /usr/local
cmp -s "$T/modified.yaml" "$D/etc/spyremond/spyremond.yaml" ||
	fail "a second make install overwrote the modified config"
grep -q 'keeping the existing' "$T/make.log" ||
	fail "make install did not say it kept the config"

# ---- systemd ----
missing=""
for tool in systemd-analyze systemd-sysusers man; do
	command -v "$tool" >/dev/null || missing="$missing $tool"
done
if [ -z "$missing" ]; then
	# The user and group the unit names are the ones sysusers.d creates,
	# and the daemon's primary group is the readers' group.
	mkdir -p "$T/sysroot/etc"
	systemd-sysusers --root="$T/sysroot" "$D/usr/local/lib/sysusers.d/spyremond.conf" \
		>"$T/sysusers.log" 2>&1 || { cat "$T/sysusers.log"; fail "systemd-sysusers failed"; }
	user=$(sed -n 's/^User=//p' "$UNIT")
	group=$(sed -n 's/^Group=//p' "$UNIT")
	gid=$(awk -F: -v g="$group" '$1 == g { print $3 }' "$T/sysroot/etc/group")
	[ -n "$gid" ] || fail "sysusers.d creates no group '$group' (Group= of the unit)"
	awk -F: -v u="$user" -v g="$gid" '$1 == u && $4 == g { found = 1 } END { exit !found }' \
		"$T/sysroot/etc/passwd" || fail "sysusers.d creates no user '$user' in group '$group'"

	# verify checks that ExecStart= exists, so point it at the DESTDIR
	# copy; MANPATH lets it find the installed pages that Documentation= names.
	mkdir -p "$T/verify"
	sed "s|^ExecStart=/usr/local/sbin/|ExecStart=$D/usr/local/sbin/|" "$UNIT" \
		>"$T/verify/spyremond.service"
	rc=0
	MANPATH=$D/usr/local/share/man systemd-analyze verify --man=yes \
		"$T/verify/spyremond.service" >"$T/verify.log" 2>&1 || rc=$?
	if [ $rc -ne 0 ] || grep -q spyremond "$T/verify.log"; then
		cat "$T/verify.log"
		fail "systemd-analyze verify: exit $rc"
	fi

	systemd-analyze security --offline=true "$UNIT" >"$T/security.log" 2>&1 || true
	score=$(sed -n 's/.*Overall exposure level for spyremond.service: \([0-9.]*\).*/\1/p' \
		"$T/security.log")
	[ -n "$score" ] || { cat "$T/security.log"; fail "no exposure level reported"; }
	echo "systemd-analyze security: overall exposure $score (at most $MAX_EXPOSURE)"
	awk -v s="$score" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(s <= m) }' || {
		grep '✗' "$T/security.log" || true
		fail "exposure $score is above $MAX_EXPOSURE"
	}
fi

# ---- uninstall ----
make -C "$ROOT" --no-print-directory uninstall DESTDIR="$D" PREFIX=/usr/local B="$B" \
	>"$T/make.log" 2>&1 || { cat "$T/make.log"; fail "make uninstall failed"; }
files_under "$D" >"$T/got"
echo etc/spyremond/spyremond.yaml >"$T/expected"
diff -u "$T/expected" "$T/got" >&2 || fail "make uninstall left other files than the config"

if [ -n "$missing" ]; then
	echo "SKIP: layout checked; not installed:$missing (mk/deps.sh installs them)"
	exit 77
fi
exit 0
