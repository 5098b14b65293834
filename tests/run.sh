#!/bin/sh
# Run every unit test binary and every integration script; print a summary.
# Each test is one program: exit 0 passes, 77 skips (its last line says
# why, and the summary repeats each reason), anything else fails.  A test
# skips only for what a user cannot fix (no root, no container support,
# an emulated or sanitizer build); a missing package fails it.  Output of a failing test is shown in full.
B=${B:-build}
pass=0 fail=0 skip=0 failed="" skipped=""
logdir="$B/test-logs"
mkdir -p "$logdir"

run_one() {
	name=$1; shift
	log="$logdir/$name.log"
	mkdir -p "$(dirname "$log")"
	start=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
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
