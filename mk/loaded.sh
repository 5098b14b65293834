#!/bin/sh
# The tests on a busy machine, as a Spyre host is during a run: make check
# (with the make arguments given) while LOAD_CPUS CPU-bound processes
# (default 2, one per core of a 2-core machine) spin beside it at the same
# priority.  A test that fails only here is a product that loses or
# misstates data under load, or a test whose bound is wall-clock tight.
#   sh mk/loaded.sh [make arguments...]     e.g. SAN=1 B=build-san
set -eu
n=${LOAD_CPUS:-2}
pids=""
# shellcheck disable=SC2317 # called by the traps
stop() {
	# shellcheck disable=SC2086
	[ -n "$pids" ] && kill $pids 2>/dev/null
	pids=""
}
trap stop EXIT
trap 'stop; exit 130' INT TERM
i=0
while [ "$i" -lt "$n" ]; do
	sh -c 'while :; do :; done' &
	pids="$pids $!"
	i=$((i + 1))
done
echo "loaded: $n CPU-bound processes beside the tests (pids$pids), load average $(cut -d' ' -f1 /proc/loadavg)"
start=$(date +%s)
rc=0
${MAKE:-make} "$@" check || rc=$?
echo "loaded: make check exited $rc after $(( $(date +%s) - start )) s, load average $(cut -d' ' -f1 /proc/loadavg)"
exit $rc
