#!/usr/bin/env bash
# Every manual page in man/ passes mandoc's strictest lint (-Wall, style
# included), has an EXIT STATUS or ERRORS section, and refers by .Xr only
# to pages of this project that exist.  The numbers the pages quote from
# the code are the code's: the schema version (query/schema.h) in
# spyremon-schema(5), and export's exit status for samples retention
# deleted (client/client.h) in spyremon(1).
#
# Two kinds of messages are not about the pages but about the machine, and
# are ignored: "referenced manual not found" (whether sqlite3(1) or this
# project's own pages are installed here) and "outdated mandoc.db" (the
# state of the machine's manual database).  References to this project's
# pages are checked against man/ instead.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)

command -v mandoc >/dev/null ||
	{ echo "FAIL: mandoc is missing (sh mk/deps.sh installs it)" >&2; exit 1; }

# Pages that SEE ALSO may name before they exist.
PLANNED=""

failed=0
npages=0
for page in "$ROOT"/man/*.[158]; do
	[ -f "$page" ] || continue
	npages=$((npages + 1))
	name=${page##*/}

	messages=$(mandoc -Tlint -Wall "$page" 2>&1 |
		grep -v -e 'STYLE: referenced manual not found' \
			-e 'outdated mandoc.db' || true)
	if [ -n "$messages" ]; then
		echo "$messages"
		echo "FAIL: $name: mandoc -Tlint -Wall complains"
		failed=1
	fi

	# as a reader sees it: man(1) and groff at 80 columns, no warning
	if command -v man >/dev/null; then
		messages=$(MANWIDTH=80 man -l "$page" 2>&1 >/dev/null || true)
		if [ -n "$messages" ]; then
			echo "$messages"
			echo "FAIL: $name: man -l at 80 columns warns"
			failed=1
		fi
	fi

	if ! grep -Eq '^\.Sh (EXIT STATUS|ERRORS)$' "$page"; then
		echo "FAIL: $name: no EXIT STATUS or ERRORS section"
		failed=1
	fi

	# .Xr spyremon... N: the page must be in man/ or planned
	while read -r xr; do
		case " $PLANNED " in *" $xr "*) continue ;; esac
		if [ ! -f "$ROOT/man/$xr" ]; then
			echo "FAIL: $name: refers to ${xr%.*}(${xr##*.}), which man/ does not have"
			failed=1
		fi
	done < <(sed -n 's/^\.Xr \(spyremon[^ ]*\) \([0-9]\).*/\1.\2/p' "$page" | sort -u)
done

for want in spyremon.1 spyremond.8 spyremond.yaml.5 spyremon-schema.5; do
	if [ ! -f "$ROOT/man/$want" ]; then
		echo "FAIL: man/$want is missing"
		failed=1
	fi
done

# numbers quoted from the code
code_define() { sed -n "s/^#define $1[[:space:]]*\([0-9]*\).*/\1/p" "$ROOT/$2"; }
quotes() {	# quotes PAGE TEXT WHAT: PAGE has the line TEXT
	if ! grep -qF -- "$2" "$ROOT/man/$1"; then
		echo "FAIL: $1 does not say \"$2\" ($3)"
		failed=1
	fi
}
schema=$(code_define SCHEMA_VERSION query/schema.h)
partial=$(code_define CLIENT_EXIT_PARTIAL client/client.h)
[ -n "$schema" ] && [ -n "$partial" ] ||
	{ echo "FAIL: SCHEMA_VERSION or CLIENT_EXIT_PARTIAL not found"; exit 1; }
quotes spyremon-schema.5 "is newer than this build's $schema; refusing to use it" \
	"SCHEMA_VERSION is $schema"
quotes spyremon-schema.5 "is the version of the schema; this document describes version $schema." \
	"SCHEMA_VERSION is $schema"
quotes spyremon.1 "missing span, what is left is still written, and the exit status is $partial." \
	"CLIENT_EXIT_PARTIAL is $partial"

echo "$npages pages checked"
exit $failed
