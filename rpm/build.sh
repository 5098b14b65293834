#!/bin/sh
# Build the RPMs of rpm/spyremon.spec from this tree with rpmbuild -bb, on
# Debian as on RHEL or Fedora, then run rpmlint on the spec and the RPMs.
#
#   sh rpm/build.sh OUT-DIR
#
# OUT-DIR gets rpmbuild's tree (SOURCES, RPMS, ...) and rpmlint.log.  Where
# rpm's database holds no packages (Debian), the build requirements cannot
# be checked by rpmbuild, so each pkgconfig(x) BuildRequires is checked
# with pkg-config --exists x here, and rpmbuild runs with --nodeps.
# Exit status: rpmbuild's, or 1 if a build requirement is missing or
# rpmlint reports an error.
set -eu
out=$(mkdir -p "$1" && cd "$1" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
spec=$top/rpm/spyremon.spec
version=$(sed -n 's/^Version: *//p' "$spec")
mkdir -p "$out/SOURCES"

# the sources: the tree without its build products and version control
tar -C "$top" --exclude=./.git --exclude='./build*' --exclude=./demo \
	--exclude=./debian --transform "s|^\\.|spyremon-$version|" \
	-czf "$out/SOURCES/spyremon-$version.tar.gz" .
cp "$top/systemd/spyremond.sysusers" "$out/SOURCES/"

debian=""
if [ "$(rpm -qa 2>/dev/null | wc -l)" -eq 0 ]; then
	# Debian's rpm: its brp-compress needs bash (read -d) but says
	# #!/bin/sh, its %_sharedstatedir is /usr/com, and it has no
	# find-debuginfo for debuginfo packages
	debian=1
	missing=""
	for pc in $(sed -n 's/^BuildRequires: *pkgconfig(\(.*\))$/\1/p' "$spec"); do
		pkg-config --exists "$pc" || missing="$missing $pc"
	done
	[ -z "$missing" ] || { echo "rpm/build.sh: pkg-config finds no:$missing" >&2; exit 1; }
fi

if [ -n "$debian" ]; then
	set -- --nodeps --define '__brp_compress /bin/bash /usr/lib/rpm/brp-compress %{_prefix}' \
		--define '_sharedstatedir /var/lib' --define 'debug_package %{nil}'
else
	set --
fi
rpmbuild -bb "$@" --define "_topdir $out" "$spec"

rc=0
# the spec is linted beside its sources, where %(cat %{SOURCE1}) finds one
cp "$spec" "$out/SOURCES/"
rpmlint -c "$top/rpm/rpmlint.toml" -r "$top/rpm/spyremon.rpmlintrc" "$out/SOURCES/spyremon.spec" \
	"$out"/RPMS/*/*.rpm >"$out/rpmlint.log" 2>&1 || rc=$?
cat "$out/rpmlint.log"
# rpmlint exits 64 for errors, 66 when there were badness over the limit
[ $rc -eq 0 ] || { echo "rpm/build.sh: rpmlint exit $rc" >&2; exit 1; }
