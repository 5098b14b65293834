#!/bin/sh
# Install the Debian packages spyremon needs to build and test, when they
# are missing.  As root, installs them with apt-get; otherwise prints the
# exact command and fails, so that nothing happens behind a user's back.
set -eu

pkgs="build-essential pkg-config libsystemd-dev libsqlite3-dev libyaml-dev
libcmocka-dev libyajl-dev zlib1g-dev libcairo2-dev libfontconfig-dev libpng-dev sqlite3 python3 mandoc systemd
systemd-container"

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
