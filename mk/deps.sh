#!/bin/sh
# Install the Debian packages spyremon needs, when they are missing.  As
# root, installs them with apt-get; otherwise prints the exact command and
# fails, so that nothing happens behind a user's back.
#
#   sh mk/deps.sh [SET...]          install SET (default: build)
#   sh mk/deps.sh --list [SET...]   print SET's packages, one a line
#   sh mk/deps.sh --packages PKG... install these packages (the tests that
#                                   need a large one, such as python3-torch)
#
# Another apt-get or dpkg holding the package locks (an unattended upgrade,
# a second shell) is waited for, at most DEPS_LOCK_WAIT seconds (default
# 600), saying so; then the install fails, never half-done in silence.  A
# package counts as installed when dpkg has it unpacked and configured,
# triggers pending or not (man-db's often are).
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

list=0 named=0
case ${1:-} in
--list)     list=1; shift ;;
--packages) named=1; shift ;;
esac
[ $# -gt 0 ] || set -- build

pkgs=""
[ $named -eq 1 ] && { pkgs="$*"; set --; }
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

# installed: unpacked and configured; "triggers-pending" and
# "triggers-awaited" are configured packages whose triggers have not run yet
is_installed() {
	case $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) in
	installed|triggers-pending|triggers-awaited) return 0 ;;
	*) return 1 ;;
	esac
}

missing_of() {
	for p in "$@"; do
		is_installed "$p" || printf ' %s' "$p"
	done
}

# The process holding one of apt's or dpkg's locks, or nothing.  Read from
# /proc/locks (both take fcntl(2) locks), so that it needs no tool a
# minimal image lacks.
LOCKS="/var/lib/apt/lists/lock /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock
/var/cache/apt/archives/lock"
lock_holder() {
	for f in $LOCKS; do
		[ -e "$f" ] || continue
		ino=$(stat -c %i "$f")
		pid=$(awk -v ino="$ino" '{ n = split($6, id, ":");
			if ($2 != "->" && id[n] == ino) { print $5; exit } }' \
			/proc/locks)
		[ -n "$pid" ] && { echo "$pid"; return 0; }
	done
	return 0
}

# Wait until no one holds the locks, at most until $deadline; 1 if still held.
wait_for_locks() {
	said=0
	while pid=$(lock_holder) && [ -n "$pid" ]; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "deps: the package lock is still held by process $pid" \
			    "($(cat /proc/"$pid"/comm 2>/dev/null || echo gone))" \
			    "after ${DEPS_LOCK_WAIT:-600} s; try again when it is done" >&2
			return 1
		fi
		if [ $said -eq 0 ] || [ $(( $(date +%s) % 30 )) -eq 0 ]; then
			echo "deps: waiting for process $pid" \
			    "($(cat /proc/"$pid"/comm 2>/dev/null || echo gone))," \
			    "which holds the package lock" >&2
			said=1
		fi
		sleep 1
	done
	return 0
}

# apt-get, retried while another process takes the lock between our wait and
# its start (apt-get update itself never waits for the lists lock)
apt_get() {
	while :; do
		wait_for_locks || return 1
		left=$(( deadline - $(date +%s) ))
		[ $left -gt 0 ] || left=1
		apt-get -o DPkg::Lock::Timeout=$left "$@" >&2 && return 0
		pid=$(lock_holder)
		[ -n "$pid" ] && [ "$(date +%s)" -lt "$deadline" ] && continue
		return 1
	done
}

# shellcheck disable=SC2086
missing=$(missing_of $pkgs)
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run as root:  apt-get install -y$missing" >&2
	exit 1
fi
echo "deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
deadline=$(( $(date +%s) + ${DEPS_LOCK_WAIT:-600} ))
apt_get update -qq || { echo "deps: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086
apt_get install -y -qq --no-install-recommends $missing ||
	{ echo "deps: apt-get install$missing failed" >&2; exit 1; }
# shellcheck disable=SC2086
still=$(missing_of $missing)
if [ -n "$still" ]; then
	echo "deps: still not installed after apt-get:$still" >&2
	exit 1
fi
