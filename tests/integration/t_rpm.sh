#!/usr/bin/env bash
# rpm/spyremon.spec builds with rpmbuild -bb (rpm/build.sh, from a tarball
# of the tree), rpmlint reports nothing that rpm/spyremon.rpmlintrc does
# not filter with a reason, and the four RPMs hold the files of their
# Debian counterparts: the programs, units, sysusers.d and tmpfiles.d
# entries, the config as %config(noreplace), /var/lib/spyremond 0750
# spyremond:spyremon, the man pages, and the scriptlets that create the
# user, preset, stop and restart the units and remove the database on
# erase.  Installs rpm and rpmlint (mk/deps.sh package) as root; skips,
# saying why, where it cannot, and for a sanitizer build or under qemu-user
# (the packages are built with the distribution's flags and checked natively).
source "$(dirname "$0")/lib.sh"

skip() {
	echo "SKIP: $*"
	exit 77
}
[ "$(time_scale)" -eq 1 ] || skip "a sanitizer build or qemu-user: the packages are built with the distribution's flags and checked natively"
if ! command -v rpmbuild >/dev/null || ! command -v rpmlint >/dev/null; then
	[ "$(id -u)" -eq 0 ] || skip "no rpmbuild or rpmlint, and not root to install them (apt-get install rpm rpmlint)"
	sh "$ROOT/mk/deps.sh" package >"$T/deps.log" 2>&1 ||
		{ cat "$T/deps.log"; fail "mk/deps.sh package could not install rpm and rpmlint"; }
fi

sh "$ROOT/rpm/build.sh" "$T/rpm" >"$T/build.log" 2>&1 ||
	{ tail -n 40 "$T/build.log"; fail "rpm/build.sh failed (rpmbuild, or rpmlint found something)"; }
sed -n '/rpmlint session starts/,$p' "$T/build.log"
grep -q '0 errors, 0 warnings' "$T/build.log" || fail "rpmlint: not clean"

rpmfile() { ls "$T"/rpm/RPMS/*/"$1"-[0-9]*.rpm; }
has() {
	local pkg=$1 f
	shift
	rpm -qlp "$(rpmfile "$pkg")" >"$T/$pkg.files"
	for f in "$@"; do
		grep -qx -- "$f" "$T/$pkg.files" || fail "$pkg lacks $f"
	done
}
has spyremond /usr/sbin/spyremond /usr/lib/systemd/system/spyremond.service \
	/usr/lib/sysusers.d/spyremond.conf /usr/lib/tmpfiles.d/spyremond.conf \
	/etc/spyremond/spyremond.yaml /var/lib/spyremond \
	/usr/share/man/man8/spyremond.8.gz /usr/share/man/man5/spyremond.yaml.5.gz
has spyremon /usr/bin/spyremon /usr/lib/systemd/system/spyremon-metrics.socket \
	/usr/lib/systemd/system/spyremon-metrics@.service \
	/usr/libexec/spyremon/spyremon-prolog /usr/libexec/spyremon/spyremon-epilog \
	/usr/share/spyremon/grafana/spyremon.json /usr/share/man/man1/spyremon.1.gz
has aiu-smi-sim /usr/bin/aiu-smi-sim /usr/share/man/man1/aiu-smi-sim.1.gz \
	/usr/share/aiu-smi-sim/torch/profile_demo.py
py=$(rpm -qlp "$(rpmfile python3-spyremon)" | grep '/site-packages/spyremon\.py$') ||
	fail "python3-spyremon lacks site-packages/spyremon.py"
echo "python3-spyremon: $py"

d=$(rpmfile spyremond)
rpm -qp --configfiles "$d" | grep -qx /etc/spyremond/spyremond.yaml ||
	fail "spyremond.yaml is not a config file"
rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$d" |
	grep -qx 'cn /etc/spyremond/spyremond.yaml' || fail "spyremond.yaml is not %config(noreplace)"
rpm -qp --qf '[%{FILEMODES:perms} %{FILEUSERNAME} %{FILEGROUPNAME} %{FILENAMES}\n]' "$d" |
	grep -qx 'drwxr-x--- spyremond spyremon /var/lib/spyremond' ||
	fail "/var/lib/spyremond is not 0750 spyremond:spyremon"
rpm -qp --scripts "$d" >"$T/scripts"
grep -q '^u spyremond -:spyremon' "$T/scripts" || fail "%pre does not create user spyremond"
grep -q 'preset spyremond.service' "$T/scripts" || fail "%post does not preset spyremond.service"
grep -q 'disable --now spyremond.service' "$T/scripts" || fail "%preun does not stop spyremond.service"
grep -q 'try-restart spyremond.service' "$T/scripts" || fail "%postun does not restart on upgrade"
grep -q 'rm -rf /var/lib/spyremond' "$T/scripts" || fail "%postun does not remove the database on erase"
echo "the four RPMs hold what they should"
exit 0
