#!/usr/bin/env bash
# make.sh OLD OUT.db: run the spyremond of an old build on its own
# simulator for a few seconds, with two windows opened and ended by its
# own client and one aiu-smi log imported, and write its database,
# checkpointed into one file, to OUT.db.  OLD is the root of that build's
# source tree (built there with "make"), e.g. one made by
#   git archive ad824ee | tar -x -C /tmp/old && make -C /tmp/old
# It runs the old tree's tests/integration/lib.sh, so the daemon is
# configured as that build's tests configure it (2 cards every 100 ms).
set -euo pipefail
OLD=$(cd "$1" && pwd)
OUT=$(realpath -m "$2")
B=build
source "$OLD/tests/integration/lib.sh"

spy() {
	"$CLIENT" -c "$T/spyremond.yaml" "$@"
}

FLUSH=200ms write_config 2 100ms
start_daemon
wait_for 30 rows_at_least 10 || fail "no rows stored"
spy mark begin --tag fixture-a --meta job=one >/dev/null
wait_for 30 rows_at_least 30 || fail "no rows inside the first window"
spy mark end --tag fixture-a
spy mark begin --tag fixture-b >/dev/null
wait_for 30 rows_at_least 50 || fail "no rows inside the second window"
spy mark end --tag fixture-b
wait_for 30 rows_at_least 60 || fail "no rows after the windows"
stop_daemon
# an imported log: the imports table and coarse rows (devices 2 and 3)
"$SIM" -s -d 1 --cards 4 -i 2,3 --exit-after 3 -f "$T/log.csv"
"$CLIENT" import --tz UTC --db "$DB" "$T/log.csv" >/dev/null
sqlite3 "$DB" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
[ ! -s "$DB-wal" ] || fail "the log was not checkpointed"
cp "$DB" "$OUT"
sqlite3 "$OUT" 'PRAGMA journal_mode' | grep -qx wal || fail "not in WAL mode"
echo "$OUT: schema version $(sqlite3 "$OUT" 'PRAGMA user_version'), \
$(sqlite3 "$OUT" 'SELECT count(*) FROM samples') rows, \
$(sqlite3 "$OUT" 'SELECT count(*) FROM windows') windows"
