#!/bin/sh
# make check-arch ARCH=s390x|ppc64le [ONLY=pattern]: build the tree and run
# its tests on another architecture, under qemu-user, as root.
#
#   1. the qemu binfmt handler is registered if it is missing, and a
#      Debian 12 root for ARCH with the build set of mk/deps.sh (mmdebstrap
#      --variant=apt, by mk/mkroot.sh) is kept in $ARCH_CACHE/bookworm-DEBARCH
#      (default /var/cache/spyremon-arch), made again only when that set
#      changes;
#   2. the tree (without its build directories) is copied to /src in that
#      root, whose build/ is kept between runs, and built there;
#   3. "make check" runs inside it under systemd-nspawn (a /dev/pts for
#      script(1), /proc, a cgroup tree), with ONLY passed on;
#   4. tests/arch/outputs.sh writes the same fixed outputs natively and
#      inside the root, and every file must be the same bytes.
#
#   sh mk/arch.sh ARCH [B]     B: the native build directory (default build)
# ONLY=x runs the unit tests and the integration tests whose path matches x
# (as make check does); ONLY=none runs the unit tests only.
# Exit status: that of make check, or 1 if the outputs differ.
set -eu

arch=${1:?usage: sh mk/arch.sh s390x|ppc64le [build-dir]}
B=${2:-build}
top=$(pwd)

case $arch in
s390x)		debarch=s390x; qemu=s390x ;;
ppc64le|ppc64el) debarch=ppc64el; qemu=ppc64le ;;
arm64|aarch64)	debarch=arm64; qemu=aarch64 ;;
*)		echo "check-arch: no recipe for ARCH=$arch (s390x, ppc64le, arm64)" >&2; exit 2 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
	echo "check-arch: needs root (mmdebstrap, binfmt_misc, systemd-nspawn)" >&2
	exit 1
fi
sh mk/deps.sh build arch

say() { echo "check-arch: $*"; }
now() { date +%s; }
t_start=$(now)

# ---- the binfmt handler ----
bm=/proc/sys/fs/binfmt_misc
if [ ! -e "$bm/qemu-$qemu" ]; then
	[ -e "$bm/register" ] || mount -t binfmt_misc binfmt_misc "$bm"
	conf=/usr/lib/binfmt.d/qemu-$qemu.conf
	[ -f "$conf" ] || { echo "check-arch: no $conf (qemu-user-static)" >&2; exit 1; }
	say "registering the binfmt handler from $conf"
	grep -v '^#' "$conf" | grep . >"$bm/register"
fi
[ "$(head -n 1 "$bm/qemu-$qemu")" = enabled ] ||
	{ echo "check-arch: binfmt handler qemu-$qemu is disabled" >&2; exit 1; }

# ---- the root, made again when the package set changes ----
# shellcheck disable=SC2046
root=$(sh mk/mkroot.sh "$debarch" apt "bookworm-$debarch" $(sh mk/deps.sh --list build) | tail -n 1)

# mmdebstrap leaves /etc/machine-id empty for the first boot to fill; the
# daemon records the machine's ID with the database, as on a real host
[ -s "$root/etc/machine-id" ] || systemd-machine-id-setup --root="$root" >/dev/null

# ---- the tree, copied; its build directory stays ----
mkdir -p "$root/src"
find "$root/src" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
# .git comes along: t_report and the Python helper record the tree's
# commit.  A worktree's .git is a file naming a directory outside the
# tree, so there the copy gets a repository of its own with one commit.
tar -C "$top" --exclude='./build*' --exclude=./demo --exclude=./debian/tmp -cf - . |
	tar -C "$root/src" -xf -
if [ ! -d "$root/src/.git" ]; then
	rm -f "$root/src/.git"
	git -C "$root/src" init -q
	git -C "$root/src" add -A
	git -C "$root/src" -c user.name=check-arch -c user.email=check-arch@localhost \
		commit -q -m "the tree as make check-arch copied it"
fi

# ---- the suite inside, under systemd-nspawn ----
nspawn() {
	systemd-nspawn -q -D "$root" --register=no --keep-unit \
		-M "spyarch$$" --console=pipe --resolv-conf=copy-host \
		--chdir=/src --setenv=ONLY="${ONLY:-}" "$@" </dev/null
}
t_build=$(now)
rc=0
nspawn sh -c 'set -e; uname -m; make -j2 all build/tests/mksamples' || rc=$?
[ $rc -eq 0 ] || { say "the build failed on $debarch"; exit $rc; }
say "built on $debarch in $(( $(now) - t_build )) s"

t_check=$(now)
if [ "${ONLY:-}" = none ]; then
	nspawn sh -c 'make -j2 check ONLY=/none/' || rc=$?
else
	nspawn sh -c 'make -j2 check' || rc=$?
fi
say "make check on $debarch: exit $rc in $(( $(now) - t_check )) s"

# ---- the same bytes natively and on $debarch ----
make -s -j2 B="$B" all "$B/tests/mksamples" "$B/tests/mfdump" >/dev/null
out=$root/src/build/arch-outputs
rm -rf "$out" "$root/src/build/native-outputs"
sh tests/arch/outputs.sh "$B" "$root/src/build/native-outputs"
nspawn sh tests/arch/outputs.sh build build/arch-outputs
same=0
for f in "$root/src/build/native-outputs"/*; do
	n=${f##*/}
	if cmp "$f" "$out/$n"; then
		echo "same bytes on $(uname -m) and $debarch: $n ($(wc -c <"$f") bytes)"
	else
		same=1
		echo "DIFFERENT on $(uname -m) and $debarch: $n"
		diff "$f" "$out/$n" | head -n 20 || true
	fi
done
n_native=$(ls "$root/src/build/native-outputs" | wc -l)
n_arch=$(ls "$out" | wc -l)
[ "$n_native" -eq "$n_arch" ] && [ "$n_native" -gt 0 ] ||
	{ same=1; echo "check-arch: $n_native outputs natively, $n_arch on $debarch"; }
say "total $(( $(now) - t_start )) s on $debarch"
[ $rc -eq 0 ] || exit $rc
exit $same
