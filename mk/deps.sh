#!/bin/sh
# Install the Debian packages spyremon needs, when they are missing.  As
# root, installs them with apt-get; otherwise prints the exact command and
# fails, so that nothing happens behind a user's back.
#
#   sh mk/deps.sh [SET...]          install SET (default: build)
#   sh mk/deps.sh --list [SET...]   print SET's packages, one a line
#
# Sets:
#   build    what "make", "make check" and "make demo" use, on a minimal
#            Debian 12 image (mmdebstrap --variant=minbase) as much as on a
#            full one: the compiler and libraries, and every program a test
#            runs (sqlite3, python3, mandoc and man, git, pgrep, nm,
#            systemd-nspawn, the time zone database, ...)
#   package  what "dpkg-buildpackage" and "rpmbuild" need, and their linters
#            (debian/control's Build-Depends, rpm/spyremon.spec)
#   arch     what "make check-arch" needs: mmdebstrap and qemu-user-static
set -eu

# Each line: packages, then "#" and the programs of the tree that need them.
build="
build-essential pkg-config	# cc, make, nm (binutils)
libsystemd-dev libsqlite3-dev libyaml-dev libyajl-dev libcmocka-dev
zlib1g-dev libcairo2-dev libfontconfig-dev libpng-dev
sqlite3				# tests, demo: the sqlite3 shell
python3				# tests' checkers, contrib/python, the demo's job
mandoc				# t_manlint
man-db				# t_install, t_metrics_units: man -w finds the pages
systemd				# systemd-analyze, systemd-sysusers, systemd-socket-activate
systemd-container		# systemd-nspawn: t_systemd, t_systemd_metrics, t_deb
tzdata				# test_import, t_import: --tz Europe/Berlin and others
git				# t_python, t_report: git_sha of a window
procps				# pgrep, ps: t_sigkill, t_sigkill_ring
"
package="
debhelper dpkg-dev fakeroot dh-python python3-all lintian mmdebstrap
rpm rpmlint
"
arch="
mmdebstrap qemu-user-static arch-test
"

list=0
if [ "${1:-}" = --list ]; then
	list=1
	shift
fi
[ $# -gt 0 ] || set -- build

pkgs=""
for set in "$@"; do
	case $set in
	build)   body=$build ;;
	package) body=$package ;;
	arch)    body=$arch ;;
	*)       echo "deps: no set '$set' (build, package, arch)" >&2; exit 2 ;;
	esac
	pkgs="$pkgs $(printf '%s\n' "$body" | sed 's/#.*//')"
done

if [ $list -eq 1 ]; then
	# shellcheck disable=SC2086
	printf '%s\n' $pkgs
	exit 0
fi

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	echo "deps: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >&2
else
	echo "deps: missing packages:$missing" >&2
	echo "deps: run as root:  apt-get install -y$missing" >&2
	exit 1
fi
