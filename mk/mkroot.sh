#!/bin/sh
# A Debian 12 root for the tests that need a system of their own, made by
# mmdebstrap and kept between runs; prints its path on the last line.
#
#   sh mk/mkroot.sh DEBARCH VARIANT NAME PACKAGE...
#
# The root is $ARCH_CACHE/NAME (default /var/cache/spyremon-arch/NAME), made
# again only when DEBARCH, VARIANT or the packages change (the list is kept
# in NAME/.spyremon-pkgs).  It is made beside its final name and renamed,
# so an interrupted run never leaves half a root behind.  A foreign DEBARCH
# needs its binfmt handler (mk/arch.sh registers it).  As root only.
set -eu
debarch=$1 variant=$2 name=$3
shift 3
cache=${ARCH_CACHE:-/var/cache/spyremon-arch}
mirror=${MIRROR:-http://deb.debian.org/debian}
security=${SECURITY_MIRROR:-http://deb.debian.org/debian-security}
root=$cache/$name
want="$debarch $variant $(printf '%s\n' "$@" | LC_ALL=C sort -u | paste -sd, -)"

if [ -f "$root/.spyremon-pkgs" ] && [ "$(cat "$root/.spyremon-pkgs")" = "$want" ]; then
	echo "mkroot: using the cached $debarch root $root" >&2
	echo "$root"
	exit 0
fi
echo "mkroot: making a Debian 12 $debarch root ($variant) in $root" >&2
start=$(date +%s)
mkdir -p "$cache"
# a run cut short can leave /proc or /dev mounted inside: never remove
# through a mount
for d in "$root.new" "$root"; do
	if grep -q " $d/" /proc/self/mountinfo; then
		echo "mkroot: file systems are mounted under $d; unmount them first:" >&2
		grep " $d/" /proc/self/mountinfo | cut -d' ' -f5 >&2
		exit 1
	fi
done
rm -rf --one-file-system "$root.new" "$root"
# man-db's trigger would index every page of every package, which takes
# minutes under qemu; the tests that use man find pages without the index
include=$(printf '%s\n' "$@" | LC_ALL=C sort -u | paste -sd, -)
set -- --quiet --variant="$variant" --architectures="$debarch" \
	${include:+--include="$include"} \
	--essential-hook='echo "man-db man-db/auto-update boolean false" | chroot "$1" debconf-set-selections' \
	bookworm "$root.new" \
	"deb $mirror bookworm main" \
	"deb $mirror bookworm-updates main" \
	"deb $security bookworm-security main"
mmdebstrap "$@" </dev/null >&2
printf '%s\n' "$want" >"$root.new/.spyremon-pkgs"
mv "$root.new" "$root"
echo "mkroot: made in $(( $(date +%s) - start )) s" >&2
echo "$root"
