#!/bin/bash
# The architecture, checked on the built objects (docs/architecture.md,
# "The flow and the tree"):
#   - no client object reads a daemon/ header (from the compiler's own
#     dependency files), and none is compiled with -Idaemon;
#   - no two files call each other's functions in a circle (from the
#     symbols each object defines and needs, with nm), with no exception:
#     files that share state keep it in a base below them, and report
#     upward through callbacks;
#   - no object but a program's main.o defines main, and nothing calls
#     into main.o;
#   - tests read nothing outside the project.
set -euo pipefail
B=${B:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v nm >/dev/null || fail "nm (binutils) is missing"
command -v python3 >/dev/null || { echo "FAIL: python3 is missing (sh mk/deps.sh installs it)" >&2; exit 1; }
[ -d "$B/client" ] || fail "$B/client: build first (make check does)"

# 1. client objects and daemon headers
bad=$(find "$B/client" -name '*.d' -exec grep -l -E '(^|[ /])daemon/' {} + || true)
[ -z "$bad" ] || fail "client objects that include daemon/ headers: $bad"
flags=$(make -s -n -B "$B/client/main.o" B="$B" 2>/dev/null | grep -- ' -c ' || true)
[ -n "$flags" ] || fail "cannot see how client objects are compiled"
if echo "$flags" | grep -q -- '-Idaemon'; then
	fail "client objects are compiled with -Idaemon: $flags"
fi
echo "ok: no client object sees daemon/"

# 2. circles between files, and calls up into main.o
find "$B/common" "$B/query" "$B/store" "$B/daemon" "$B/client" -name '*.o' | sort |
python3 -c '
import subprocess, sys
objs = [l.strip() for l in sys.stdin if l.strip()]
defs, needs = {}, {}
for o in objs:
    out = subprocess.run(["nm", "-g", o], capture_output=True, text=True,
                         check=True).stdout
    d, u = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            u.add(f[1])
        elif len(f) == 3 and f[1] in "TDBRCV":
            d.add(f[2])
    defs[o], needs[o] = d, u
owner = {}
for o, d in defs.items():
    for s in d:
        owner.setdefault(s, o)
edges = {o: sorted({owner[s] for s in needs[o] if s in owner} - {o})
         for o in objs}
bad = []
for o in objs:
    if "main" in defs[o] and not o.endswith("/main.o"):
        bad.append("%s defines main" % o)
    for t in edges[o]:
        if t.endswith("/main.o"):
            bad.append("%s calls up into %s" % (o, t))
# strongly connected components (Tarjan)
idx, low, stack, on, comps, n = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def visit(v):
    idx[v] = low[v] = n[0]; n[0] += 1
    stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in idx:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v: break
        comps.append(sorted(c))
for v in objs:
    if v not in idx:
        visit(v)
for c in comps:
    if len(c) > 1:
        bad.append("a circle of calls: " + " <-> ".join(c))
for b in bad:
    print("FAIL: " + b, file=sys.stderr)
if not bad:
    print("ok: %d objects, %d calls between files, no circle"
          % (len(objs), sum(len(e) for e in edges.values())))
sys.exit(1 if bad else 0)
'

# 3. the tests are self-contained: none names the reference folder beside
# the project (the bracket keeps this file from naming it too)
if grep -rn --include='*.sh' --include='*.py' --include='*.c' \
	-e '\.\./sha[r]ed' tests; then
	fail "tests read the reference folder outside the project: copy what they need into tests/data"
fi
echo "ok: the tests read nothing outside the project"
