#!/usr/bin/env bash
# spyremond under a stand-in for systemd (notify_harness.py): READY=1,
# STATUS=, WATCHDOG=1 within the period and none while the process is
# stopped, RELOADING=1 and READY=1 on SIGHUP (unchanged, new interval,
# invalid config), STOPPING=1 and exit status 0 on SIGTERM.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need python3
[ -x "$DAEMON" ] || fail "no $DAEMON; build it first"

write_config 2 100ms
python3 "$(dirname "$0")/notify_harness.py" "$DAEMON" "$T/spyremond.yaml" \
	"$DB" "$DLOG" "$T"
