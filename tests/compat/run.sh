#!/usr/bin/env bash
# run.sh OUTDIR [BUILD]: run every line of commands.txt with BUILD's client
# (default build) and record, per line N (001, 002, ...), in OUTDIR:
#   N.cmd     the line
#   N.out     its stdout        N.err   its stderr      N.rc   its exit status
#   N.files   every file it left in its directory: text as is, .gz
#             decompressed, anything else (PNG) as a SHA-256; *.db files,
#             whose import rows hold the time of the import, are left out
# compare.sh then diffs two OUTDIRs.  Each line runs in a fresh directory
# with a copy of fixed.db (BUILD's mksamples from samples.txt), aiusmi.csv
# and traces/ (tests/data/traces), under TZ=UTC and LC_ALL=C, so paths in
# messages are relative and stable.
#
# Masked, in every record, as the only wall-clock fields (mask() below):
#   - "computed_ns": N, when a window's summary was computed (by mksamples
#     as the database was made), in summary --json and compare --json;
#   - "reported TIME." in report.md's first paragraph, when report ran.
# Nothing else is: every window is closed and every other time printed is
# a sample's, a window's or a trace's, fixed by the inputs.  The database
# records the host (hostname, machine ID) and uid of whoever made it:
# records are compared on one machine.
set -euo pipefail

OUT=${1:?usage: run.sh OUTDIR [BUILD]}
B=${2:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $B in /*) ;; *) B=$ROOT/$B ;; esac
CLIENT=$B/spyremon
MKSAMPLES=$B/tests/mksamples
HERE=$ROOT/tests/compat
[ -x "$CLIENT" ] || { echo "run.sh: no client at $CLIENT (make B=...)" >&2; exit 2; }
[ -x "$MKSAMPLES" ] || { echo "run.sh: no $MKSAMPLES (make B=... $MKSAMPLES)" >&2; exit 2; }

rm -rf "$OUT"
mkdir -p "$OUT/work"
OUT=$(cd "$OUT" && pwd)
"$MKSAMPLES" "$OUT/work/fixed.db" <"$HERE/samples.txt"

# the wall-clock fields; see the header
mask() {
	sed -E -e 's/("computed_ns": )[0-9]+/\1MASKED/' \
	    -e 's/(, reported )[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z\./\1MASKED./'
}

# record_files DIR: the files a command left in DIR, as said above
record_files() {
	(cd "$1" && find . -type f ! -name 'fixed.db*' ! -name '*.db' \
	    ! -name '*.db-*' ! -name aiusmi.csv | LC_ALL=C sort) |
	while read -r f; do
		echo "== $f"
		case $f in
		*.gz)	gzip -dc "$1/$f" ;;
		*.png)	sha256sum <"$1/$f" ;;
		*)	if grep -qI . "$1/$f" || [ ! -s "$1/$f" ]; then cat "$1/$f";
			else sha256sum <"$1/$f"; fi ;;
		esac
	done
}

n=0
while IFS= read -r line; do
	case $line in ''|'#'*) continue ;; esac
	n=$((n + 1))
	id=$(printf '%03d' "$n")
	dir=$OUT/work/$id
	mkdir -p "$dir"
	cp "$OUT/work/fixed.db" "$dir/fixed.db"
	cp "$HERE/aiusmi.csv" "$dir/aiusmi.csv"
	ln -s "$ROOT/tests/data/traces" "$dir/traces"
	printf '%s\n' "$line" >"$OUT/$id.cmd"
	rc=0
	(cd "$dir" && env -i PATH="$B:/usr/bin:/bin" HOME="$dir" TZ=UTC LC_ALL=C \
	    bash -c "$line" </dev/null >"$OUT/$id.out.raw" 2>"$OUT/$id.err.raw") || rc=$?
	echo "$rc" >"$OUT/$id.rc"
	mask <"$OUT/$id.out.raw" >"$OUT/$id.out"
	mask <"$OUT/$id.err.raw" >"$OUT/$id.err"
	rm -f "$OUT/$id.out.raw" "$OUT/$id.err.raw"
	record_files "$dir" | mask >"$OUT/$id.files"
done <"$HERE/commands.txt"
rm -rf "$OUT/work"
echo "run.sh: $n command lines recorded in $OUT"
