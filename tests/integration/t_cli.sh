#!/usr/bin/env bash
# The command lines of spyremond and spyremon: --help and --version answer
# on stdout with exit 0; each command's --help lists every option that its
# part of spyremon(1) documents, and its exit statuses; a usage error is
# two lines on stderr (the problem, then where to read more), nothing on
# stdout, and exit 2.  No daemon is needed: none of this reaches one.
source "$(dirname "$0")/lib.sh"

MAN=$ROOT/man/spyremon.1
USAGE=2
# Nothing here may read a config or a database: any path is a dead end.
NOWHERE=(-c "$T/no.yaml" --socket "$T/no.sock" --db "$T/no.db")

# ok_stdout PROG ARGS...: exit 0, output on stdout, nothing on stderr.
ok_stdout() {
	local rc=0
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ $rc -eq 0 ] || fail "${*##*/}: exit $rc, not 0"
	[ -s "$T/out" ] || fail "${*##*/}: nothing on stdout"
	[ ! -s "$T/err" ] || fail "${*##*/}: stderr: $(cat "$T/err")"
}

echo "spyremond and spyremon: --help and --version"
ok_stdout "$DAEMON" --help
grep -q -- "--check-config" "$T/out" || fail "spyremond --help: no --check-config"
grep -q "^exit status:" "$T/out" || fail "spyremond --help: no exit statuses"
# every exit status the daemon defines (daemon/spyremond.h) is in its help
for code in $(sed -n 's/^#define EXIT_[A-Z_]*[[:space:]]*\([0-9][0-9]*\).*/\1/p' \
    "$ROOT/daemon/spyremond.h"); do
	grep -q "^  $code  " "$T/out" || fail "spyremond --help: no exit status $code"
done
ok_stdout "$DAEMON" -h
ok_stdout "$DAEMON" --version
grep -q "^spyremond [0-9]" "$T/out" || fail "spyremond --version: $(cat "$T/out")"
ok_stdout "$CLIENT" --help
ok_stdout "$CLIENT" --version
grep -q "^spyremon [0-9]" "$T/out" || fail "spyremon --version: $(cat "$T/out")"
# the commands with subcommands: the synopsis of each
ok_stdout "$CLIENT" mark --help
grep -q "mark end" "$T/out" || fail "spyremon mark --help: no mark end"
ok_stdout "$CLIENT" trace --help
grep -q "trace info" "$T/out" || fail "spyremon trace --help: no trace info"
ok_stdout "$CLIENT" db --help
grep -q "db salvage" "$T/out" || fail "spyremon db --help: no db salvage"

# The options spyremon(1) documents per command, as "command<TAB>option":
# in SYNOPSIS each .Nm block is one command, named by its first .Cm; under
# COMMANDS, each item of the outer list is a command: its head (the .It
# line, or .It Xo to .Xc) and the .It items of the lists nested in it.
# After .Fl, each word is a flag ("-tag" is --tag) until the next macro.
man_options() {
	awk '
	function flags(s,    n, w, i, infl) {
		n = split(s, w, /[ \t]+/)
		infl = 0
		for (i = 1; i <= n; i++) {
			if (w[i] == "Fl" || w[i] == ".Fl") { infl = 1; continue }
			if (!infl) continue
			if (w[i] ~ /^[A-Z][a-z][a-z]?$/) { infl = 0; continue }
			if (w[i] ~ /^[|,;.()]$/) continue
			if (w[i] ~ /^-?[A-Za-z0-9][A-Za-z0-9-]*$/)
				print cmd "\t-" w[i]
		}
	}
	function cmdname(s,    n, w) {
		sub(/^\.(It )?Cm /, "", s)
		n = split(s, w, " ")
		return (n > 1 && w[2] ~ /^[a-z]+$/) ? w[1] " " w[2] : w[1]
	}
	/^\.Sh / { sec = $2; depth = 0; cmd = ""; head = 0; next }
	sec == "SYNOPSIS" && /^\.Nm/ { cmd = ""; next }
	sec == "SYNOPSIS" && cmd == "" && /^\.Cm / { cmd = cmdname($0); next }
	sec == "SYNOPSIS" && cmd != "" { flags($0); next }
	sec != "COMMANDS" { next }
	/^\.Bl/ { depth++; next }
	/^\.El/ { if (--depth == 0) sec = ""; next }
	depth == 1 && /^\.It/ { cmd = ""; head = 1 }
	head && cmd == "" && /^\.(It )?Cm / { cmd = cmdname($0) }
	head && cmd != "" { flags($0) }
	head && (/^\.Xc/ || (/^\.It/ && !/Xo$/)) { head = 0; next }
	depth >= 2 && /^\.It/ && cmd != "" { flags($0) }
	' "$MAN" | sort -u
}

man_options >"$T/options"
COMMANDS=("mark begin" "mark end" windows status export "trace info" import
    metrics summary compare report capture "db check" "db salvage")
# the parse must find every command, and more than a token of options
for c in "${COMMANDS[@]}"; do
	grep -q "^$c	--" "$T/options" || fail "spyremon(1): no options found for $c"
done
[ "$(wc -l <"$T/options")" -ge 60 ] ||
	fail "spyremon(1): only $(wc -l <"$T/options") options found"
cut -f1 "$T/options" | sort -u >"$T/found"
printf '%s\n' "${COMMANDS[@]}" | sort >"$T/expected"
cmp -s "$T/found" "$T/expected" ||
	fail "spyremon(1) has other commands: $(comm -3 "$T/found" "$T/expected" | tr '\n' ' ')"

echo "each command's --help lists its options of spyremon(1)"
missing=0
for c in "${COMMANDS[@]}"; do
	# shellcheck disable=SC2086  # "mark begin": two words
	ok_stdout "$CLIENT" $c --help
	cp "$T/out" "$T/help"
	while IFS=$'\t' read -r _ opt; do
		# the option as a word: -t is not the -t of --tag
		if ! grep -Eq -- "(^|[^A-Za-z0-9-])$opt([^A-Za-z0-9-]|$)" \
		    "$T/help"; then
			echo "spyremon $c --help does not mention $opt"
			missing=$((missing + 1))
		fi
	done < <(grep "^$c	" "$T/options")
done
[ $missing -eq 0 ] || fail "$missing options of spyremon(1) missing from --help"

echo "each command's --help lists its exit statuses"
# spyremon(1) EXIT STATUS: 0 to 2 for all; 3 talks to the daemon; 4 reads
# the database; 5 compare; 6 export, and the readers of a window and mark
# end --wait when rows could not be read; 7 the readers of a window and
# mark end --wait; 8 to 13 capture (which runs export and report too); 14
# db check and db salvage.
declare -A EXITS=(
	["mark begin"]="0 1 2 3"
	["mark end"]="0 1 2 3 4 6 7"
	[windows]="0 1 2 4 6 7"
	[status]="0 1 2 3"
	[export]="0 1 2 4 6 7"
	["trace info"]="0 1 2"
	[import]="0 1 2 4"
	[metrics]="0 1 2 4"
	[summary]="0 1 2 4 6 7"
	[compare]="0 1 2 4 5 6 7"
	[report]="0 1 2 4 6 7"
	[capture]="0 1 2 3 4 6 7 8 9 10 11 12 13"
	["db check"]="0 1 2 4 14"
	["db salvage"]="0 1 2 4 14"
)
for c in "${COMMANDS[@]}"; do
	# shellcheck disable=SC2086
	"$CLIENT" $c --help >"$T/help"
	# the table: from "exit status:" on, lines "  CODE  meaning"
	sed -n '/^exit status:$/,$p' "$T/help" | tail -n +2 |
	    awk '{ print $1 }' >"$T/codes"
	[ -s "$T/codes" ] || fail "spyremon $c --help: no exit status table"
	[ "$(tr '\n' ' ' <"$T/codes")" = "${EXITS[$c]} " ] ||
		fail "spyremon $c --help: exit statuses $(tr '\n' ' ' <"$T/codes")," \
		    "spyremon(1) says ${EXITS[$c]}"
done

# usage_error HELP ARGS...: spyremon ARGS is a usage error: exit 2, nothing
# on stdout, and on stderr one line naming the problem, then exactly
# "try 'spyremon HELP --help'" (HELP empty: the program's).
usage_error() {
	local help=$1 rc=0 try
	shift
	"$CLIENT" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ $rc -eq $USAGE ] || fail "spyremon $*: exit $rc, not $USAGE"
	[ ! -s "$T/out" ] || fail "spyremon $*: stdout: $(cat "$T/out")"
	[ "$(wc -l <"$T/err")" -eq 2 ] ||
		fail "spyremon $*: not two lines on stderr:"$'\n'"$(cat "$T/err")"
	head -n 1 "$T/err" | grep -Eq "^spyremon( $help)?: ." ||
		fail "spyremon $*: $(head -n 1 "$T/err")"
	try="try 'spyremon${help:+ $help} --help'"
	[ "$(tail -n 1 "$T/err")" = "$try" ] ||
		fail "spyremon $*: last line $(tail -n 1 "$T/err"), not $try"
}

echo "a usage error is two lines: the problem and where to read more"
usage_error ""
usage_error "" bogus
usage_error "" --bogus status
usage_error "" "${NOWHERE[@]}" --wait soon status
usage_error export "${NOWHERE[@]}" export --bogus
grep -qx "spyremon export: unrecognized option '--bogus'" "$T/err" ||
	fail "export --bogus: $(head -n 1 "$T/err")"
usage_error export "${NOWHERE[@]}" export --window 1 --format
grep -q -- "--format" "$T/err" || fail "export --format: $(head -n 1 "$T/err")"
usage_error export "${NOWHERE[@]}" export -x
usage_error export "${NOWHERE[@]}" export
usage_error export "${NOWHERE[@]}" export --from 1h --window 1
usage_error windows "${NOWHERE[@]}" windows extra
grep -q "extra" "$T/err" || fail "windows extra: $(head -n 1 "$T/err")"
usage_error windows "${NOWHERE[@]}" windows --wait soon
usage_error status "${NOWHERE[@]}" status --json=yes
usage_error "mark" "${NOWHERE[@]}" mark
usage_error "mark" "${NOWHERE[@]}" mark open
usage_error "mark begin" "${NOWHERE[@]}" mark begin
usage_error "mark begin" "${NOWHERE[@]}" mark begin --tag a --bogus
usage_error "mark end" "${NOWHERE[@]}" mark end --tag a --id 1
usage_error "mark end" "${NOWHERE[@]}" mark end extra
usage_error trace "${NOWHERE[@]}" trace
usage_error "trace info" "${NOWHERE[@]}" trace info
usage_error "trace info" "${NOWHERE[@]}" trace info a b
usage_error import "${NOWHERE[@]}" import
usage_error metrics "${NOWHERE[@]}" metrics extra
usage_error summary "${NOWHERE[@]}" summary
usage_error compare "${NOWHERE[@]}" compare only-one
usage_error compare "${NOWHERE[@]}" compare a b --min-change
usage_error report "${NOWHERE[@]}" report --window 1
usage_error capture "${NOWHERE[@]}" capture
usage_error capture "${NOWHERE[@]}" capture --pid 1 extra
usage_error db "${NOWHERE[@]}" db
usage_error db "${NOWHERE[@]}" db repair
usage_error "db check" "${NOWHERE[@]}" db check extra
usage_error "db salvage" "${NOWHERE[@]}" db salvage only-one
usage_error "db salvage" "${NOWHERE[@]}" db salvage a b c

echo "spyremond: a usage error is two lines too"
# daemon_usage_error ARGS...: as usage_error, for spyremond
daemon_usage_error() {
	local rc=0
	"$DAEMON" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ $rc -eq $USAGE ] || fail "spyremond $*: exit $rc, not $USAGE"
	[ ! -s "$T/out" ] || fail "spyremond $*: stdout: $(cat "$T/out")"
	[ "$(wc -l <"$T/err")" -eq 2 ] ||
		fail "spyremond $*: not two lines on stderr:"$'\n'"$(cat "$T/err")"
	head -n 1 "$T/err" | grep -q "^spyremond: ." ||
		fail "spyremond $*: $(head -n 1 "$T/err")"
	[ "$(tail -n 1 "$T/err")" = "try 'spyremond --help'" ] ||
		fail "spyremond $*: last line $(tail -n 1 "$T/err")"
}
daemon_usage_error --bogus
daemon_usage_error -c
daemon_usage_error extra

exit 0
