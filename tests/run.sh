#!/bin/sh
# Run every unit test binary and every integration script; print a summary.
# Each test is one program: exit 0 passes, 77 skips (its last line says
# why, and the summary repeats each reason), anything else fails.  A test
# skips only for what a user cannot fix (no root, no container support,
# an emulated or sanitizer build); a missing package fails it.  Output of a failing test is shown in full.
#
# A crash fails the test it happened in, whatever the program's exit
# status meant to the test (one that expects a command to fail would
# otherwise take a segfault, or a sanitizer's abort, for the failure it
# wanted): the kernel's log of fatal signals of the project's programs,
# where dmesg can be read, and every report of AddressSanitizer,
# LeakSanitizer and UndefinedBehaviorSanitizer, which go to files here.
# The kernel's log does not say which test a process belonged to: a crash
# of one of these programs anywhere on the machine while a test runs
# fails that test too, and the message says so.
B=${B:-build}
pass=0 fail=0 skip=0 failed="" skipped=""
logdir="$B/test-logs"
sandir=$(cd "$B" && pwd)/test-logs/sanitizers
rm -rf "$sandir"
mkdir -p "$logdir" "$sandir"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$sandir/asan"
UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$sandir/ubsan"
export ASAN_OPTIONS UBSAN_OPTIONS

# The kernel's lines on the project's programs killed by a fault.
faults() {
	dmesg 2>/dev/null | grep -E '(spyremon|spyremond|aiu-smi-sim)\[[0-9]+\]: (segfault|general protection|trap)' || true
}

run_one() {
	name=$1; shift
	log="$logdir/$name.log"
	mkdir -p "$(dirname "$log")"
	start=$(date +%s)
	before=$(faults | wc -l)
	"$@" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	crashed=$(faults | tail -n +$((before + 1)))
	for r in "$sandir"/*; do
		[ -f "$r" ] || continue
		crashed="$crashed$(printf '\n--- %s ---\n' "${r##*/}"; cat "$r")"
		rm -f "$r"
	done
	if [ -n "$crashed" ] && [ "$rc" -ne 77 ]; then
		printf '\n%s\n' "a program of the project crashed or a sanitizer reported, whatever the test's exit status (tests/run.sh; a kernel line may be of a process outside the test, the log cannot tell):$crashed" >>"$log"
		[ "$rc" -ne 0 ] || rc=99
	fi
	case $rc in
	0)  pass=$((pass + 1)); echo "PASS  $name (${secs}s)" ;;
	77) skip=$((skip + 1)); why=$(tail -n 1 "$log")
	    skipped="$skipped  $name: $why
"
	    echo "SKIP  $name: $why" ;;
	*)  fail=$((fail + 1)); failed="$failed $name"
	    echo "FAIL  $name (exit $rc, ${secs}s)"; sed 's/^/    | /' "$log" ;;
	esac
}

for t in "$B"/tests/test_*; do
	[ -x "$t" ] || continue
	case $t in *.d) continue ;; esac
	run_one "unit/$(basename "$t")" "$t"
done
for t in tests/integration/t_*.sh; do
	[ -f "$t" ] || continue
	if [ -n "${ONLY:-}" ] && ! echo "$t" | grep -q -- "$ONLY"; then continue; fi
	run_one "integration/$(basename "$t" .sh)" env B="$B" bash "$t"
done

echo
[ -n "$skipped" ] && printf 'skipped, and why:\n%s' "$skipped"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
