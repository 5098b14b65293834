# --check-config prints the effective config of a valid file and exits 0;
# an invalid one gets every error with file:line:col and exits 1.
source "$(dirname "$0")/lib.sh"

"$DAEMON" --check-config -c "$ROOT/conf/spyremond.yaml" >"$T/out" ||
	fail "the shipped config is not valid"
grep -q '^database: ' "$T/out" || fail "effective config not printed"

cat >"$T/bad.yaml" <<'YAML'
flush_interval: 5ms
source:
  interval: fast
  colour: blue
YAML
rc=0
"$DAEMON" --check-config -c "$T/bad.yaml" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "invalid config exited $rc, not 1"
grep -q "bad.yaml:1:17:" "$T/err" || fail "no line:col for flush_interval"
grep -q "bad.yaml:3:13:" "$T/err" || fail "no line:col for source.interval"
grep -q "bad.yaml:4:3:" "$T/err" || fail "no line:col for the unknown key"
grep -q "3 errors" "$T/err" || fail "not every error reported"

rc=0
"$DAEMON" --check-config -c "$T/missing.yaml" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "missing config exited $rc, not 1"
grep -q "missing.yaml" "$T/err" || fail "missing file not named"

rc=0
"$DAEMON" --no-such-option 2>/dev/null || rc=$?
[ $rc -eq 2 ] || fail "bad option exited $rc, not 2"

# the daemon refuses to start on a database it cannot open: exit 3
write_config 1 1s
sed -i "s|^database: .*|database: $T/no/such/dir/db|" "$T/spyremond.yaml"
rc=0
"$DAEMON" -c "$T/spyremond.yaml" 2>"$T/err" || rc=$?
[ $rc -eq 3 ] || fail "unusable database exited $rc, not 3"
exit 0
