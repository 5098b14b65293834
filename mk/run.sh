#!/bin/sh
# spyremond from the build tree, on the aiu-smi simulator, with
# conf/run.yaml: the database, the socket, the log and the daemon's PID go
# to run/ at the top of the tree, a folder of the user's own; no root, no
# installation.  "make run" and "make stop" call it from the top of the tree.
#   sh mk/run.sh start [build-dir]   start it in the background, or say
#                                    that it runs, and print how to use it
#   sh mk/run.sh stop [build-dir]    stop it (SIGTERM) and wait until it is
#                                    gone; the database stays
# Exit status: 0 done, 1 the daemon could not start or stop (its log says
# why), 2 usage.
set -eu
[ $# -ge 1 ] || { echo "usage: sh mk/run.sh start|stop [build-dir]" >&2; exit 2; }
what=$1 B=${2:-build}
conf=conf/run.yaml
run=run
pidfile=$run/spyremond.pid
log=$run/spyremond.log
[ -f "$conf" ] || { echo "run: no $conf: run this from the top of the tree" >&2; exit 2; }

# the PID of the daemon this script started, if it still runs
running() {
	[ -f "$pidfile" ] || return 1
	pid=$(cat "$pidfile")
	[ -n "$pid" ] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = spyremond ]
}

howto() {
	c="$B/spyremon -c $conf"
	cat <<EOF2
spyremond runs from the build tree (pid $pid), on aiu-smi-sim with 2 cards;
its database is $run/spyremon.db and its log $log.  Try:
  $c status
  $c mark begin --tag try      # then run something, and:
  $c mark end --tag try --wait 10s
  $c windows
  $c summary --window try
  $c export --window try --output $run/try.csv
Stop it with "make stop" (the database stays; "rm -r $run" forgets it).
EOF2
}

case $what in
start)
	if running; then
		echo "run: spyremond already runs"
		howto
		exit 0
	fi
	for p in "$B/spyremond" "$B/spyremon" build/aiu-smi-sim; do
		[ -x "$p" ] || { echo "run: no $p: build it first (make)" >&2; exit 1; }
	done
	mkdir -p "$run"
	[ -d "$run/sys" ] || sh mk/fakesysfs.sh "$run/sys" 2
	"$B/spyremond" --check-config -c "$conf" >/dev/null
	rm -f "$run/control.sock"
	# its own session: a ^C in this terminal is not the daemon's
	setsid "$B/spyremond" -c "$conf" >"$log" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$pidfile"
	i=0
	# ready when it answers: it binds the socket before it opens the database
	until "$B/spyremon" -c "$conf" status >/dev/null 2>&1; do
		if ! kill -0 "$pid" 2>/dev/null || [ $i -ge 100 ]; then
			echo "run: spyremond did not start; $log says:" >&2
			tail -n 20 "$log" >&2
			kill -TERM "$pid" 2>/dev/null || true
			rm -f "$pidfile"
			exit 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
	howto
	;;
stop)
	if ! running; then
		echo "run: spyremond is not running (no live $pidfile)"
		rm -f "$pidfile"
		exit 0
	fi
	kill -TERM "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null; do
		[ $i -lt 300 ] || { echo "run: spyremond (pid $pid) is still there after 30 s; $log" >&2; exit 1; }
		sleep 0.1
		i=$((i + 1))
	done
	rm -f "$pidfile"
	echo "run: spyremond stopped; the database stays in $run/spyremon.db"
	;;
*)
	echo "usage: sh mk/run.sh start|stop [build-dir]" >&2
	exit 2
	;;
esac
