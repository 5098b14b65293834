#!/usr/bin/env python3
"""Checks of t_multihost.sh: exports over two hosts' databases.

  make-trace SRC OUT RANK T0_NS HOST   a rank's trace from a real one: its
                                       first event moved to T0_NS, its
                                       distributedInfo rank set, and a
                                       host_name header if HOST is not ""
  rows MULTI.csv S0.csv S1.csv HA HB   the two-host csv is, per rank, the
                                       single-host export with host,
                                       trace_rank, trace_host in front
  jsonl MULTI.jsonl S0.csv S1.csv HA HB
  steps STEPS.csv STEPS.json S0.csv HA HB
  summary SUM.csv SUM.json SUMB.csv HA HB
  merged T0 T1 M0 M1 COMBINED S0.csv S1.csv HA HB
  window MULTI.csv S0.csv S1.csv HA HB  a window's export over two hosts is
                                       each host's own, a host column first
"""
import csv
import gzip
import json
import sys
from decimal import Decimal

# The first event of kineto-base-relative-cpu-only.json.gz, absolute ns
# (tests/data/traces/README.md).
SRC_FIRST_NS = 1721065959525586016


def fail(msg):
    sys.exit("multihost_check: " + msg)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def make_trace(src, out, rank, t0, host):
    d = load(src)
    d["baseTimeNanoseconds"] = d["baseTimeNanoseconds"] + (int(t0) - SRC_FIRST_NS)
    d["distributedInfo"]["rank"] = int(rank)
    if host:
        d["host_name"] = host
    with open(out, "w") as f:
        f.write(dumps(d))


def dumps(v):
    """JSON text with Decimals written as the numbers they are."""
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k) + ":" + dumps(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(dumps(x) for x in v) + "]"
    return json.dumps(v)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def rows(multi, s0, s1, ha, hb):
    m, r0, r1 = read_csv(multi), read_csv(s0), read_csv(s1)
    if m[0][:3] != ["host", "trace_rank", "trace_host"]:
        fail("%s: header %s" % (multi, m[0][:4]))
    if m[0][3:] != r0[0] or m[0][3:] != r1[0]:
        fail("%s: columns differ from the single-host export" % multi)
    for rank, single, host in (("0", r0, ha), ("1", r1, hb)):
        got = [r for r in m[1:] if r[1] == rank]
        if not got:
            fail("%s: no rows of rank %s" % (multi, rank))
        hosts = {r[0] for r in got}
        if hosts != {host}:
            fail("%s: rank %s rows carry hosts %s, want %s" % (multi, rank, hosts, host))
        if [r[3:] for r in got] != single[1:]:
            fail("%s: rank %s: %d rows differ from its host's own export (%d rows)"
                 % (multi, rank, len(got), len(single) - 1))
    if [r[4:] for r in r0[1:3]] == [r[4:] for r in r1[1:3]]:
        fail("the two hosts' samples are the same: a test of nothing")
    print("rows: rank 0 %d rows from %s, rank 1 %d rows from %s"
          % (len(r0) - 1, ha, len(r1) - 1, hb))


def jsonl(path, s0, s1, ha, hb):
    objs = [json.loads(l) for l in open(path)]
    for rank, single, host in ((0, read_csv(s0), ha), (1, read_csv(s1), hb)):
        head = single[0]
        want = [(int(r[0]), int(r[2]), float(r[head.index("pwr")])) for r in single[1:]]
        got = [(o["ts_ns"], o["device"], o["values"]["pwr"]) for o in objs
               if o["rank"] == rank]
        if any(o["host"] != host for o in objs if o["rank"] == rank):
            fail("%s: rank %d rows not all of host %s" % (path, rank, host))
        if any("trace_host" not in o for o in objs):
            fail("%s: no trace_host member" % path)
        if got != want:
            fail("%s: rank %d: %d rows, want %d" % (path, rank, len(got), len(want)))
    print("jsonl: %d objects, each with its host" % len(objs))


def steps(path_csv, path_json, s0, ha, hb):
    m, single = read_csv(path_csv), read_csv(s0)
    if m[0][:2] != ["host", "rank"] or m[0][2:] != single[0]:
        fail("%s: header %s" % (path_csv, m[0][:4]))
    got0 = [r[2:] for r in m[1:] if r[:2] == [ha, "0"]]
    if got0 != single[1:]:
        fail("%s: rank 0 differs from the single-host --steps" % path_csv)
    if not [r for r in m[1:] if r[:2] == [hb, "1"]]:
        fail("%s: no rows of %s rank 1" % (path_csv, hb))
    j = json.load(open(path_json))
    if [(o["host"], o["rank"]) for o in j] != [(ha, 0), (hb, 1)]:
        fail("%s: %s" % (path_json, [(o.get("host"), o.get("rank")) for o in j]))
    if not all(o["steps"] and o["total"] for o in j):
        fail("%s: a rank without steps or totals" % path_json)
    print("steps: %d rows over two hosts" % (len(m) - 1))


def summary(path_csv, path_json, sumb, ha, hb):
    m, single = read_csv(path_csv), read_csv(sumb)
    if m[0][0] != "host" or m[0][1:] != single[0]:
        fail("%s: header %s" % (path_csv, m[0][:3]))
    if {r[0] for r in m[1:]} != {ha, hb}:
        fail("%s: hosts %s" % (path_csv, {r[0] for r in m[1:]}))
    if [r[1:] for r in m[1:] if r[0] == hb] != single[1:]:
        fail("%s: %s's rows differ from its own summary" % (path_csv, hb))
    j = json.load(open(path_json))
    if [o["host"] for o in j] != [ha, hb] or any(o["window"]["tag"] != "job-4711" for o in j):
        fail("%s: %s" % (path_json, [o.get("host") for o in j]))
    print("summary: %d cards over two hosts" % (len(m) - 1))


def window(multi, s0, s1, ha, hb):
    m = read_csv(multi)
    if m[0][0] != "host":
        fail("%s: header %s" % (multi, m[0][:3]))
    for single, host in ((read_csv(s0), ha), (read_csv(s1), hb)):
        if m[0][1:] != single[0]:
            fail("%s: columns differ from %s's own export" % (multi, host))
        got = [r[1:] for r in m[1:] if r[0] == host]
        if not got or got != single[1:]:
            fail("%s: %d rows of %s, want its own %d" % (multi, len(got), host,
                                                         len(single) - 1))
    if len(m) - 1 != len(read_csv(s0)) - 1 + len(read_csv(s1)) - 1:
        fail("%s: rows of no host" % multi)
    print("window: %d rows over two hosts" % (len(m) - 1))


def pwr_values(single):
    head = single[0]
    return {Decimal(r[head.index("pwr")]) for r in single[1:] if r[head.index("pwr")]}


def abs_ns(base, ts):
    return Decimal(base) + Decimal(ts) * 1000


def span(trace):
    base = trace["baseTimeNanoseconds"]
    ts = [abs_ns(base, e["ts"] + e.get("dur", 0)) for e in trace["traceEvents"]
          if e.get("ph") != "M" and e.get("ts", 0) != 0]
    first = min(abs_ns(base, e["ts"]) for e in trace["traceEvents"]
                if e.get("ph") != "M" and e.get("ts", 0) != 0)
    return first, max(ts)


def check_cards(events, host, base, pwr, lo, hi, what):
    """The host's card processes and their pwr counters in events."""
    pids = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
            and e["args"]["name"].startswith("Spyre ")
            and e["args"]["name"].endswith("\u00b7 " + host)}
    if len(pids) != 2:
        fail("%s: %d card processes of %s, want 2" % (what, len(pids), host))
    n = 0
    for e in events:
        if e.get("ph") == "C" and e["pid"] in pids and e["name"] == "pwr":
            v = e["args"]["(W)"]
            t = abs_ns(base, e["ts"])
            if v not in pwr:
                fail("%s: pwr %s of %s is no sample of its host" % (what, v, host))
            if t < lo or t > hi:
                fail("%s: a counter of %s outside its trace's span" % (what, host))
            n += 1
    if n < 4:
        fail("%s: %d pwr counter events of %s" % (what, n, host))
    return pids


def merged(t0, t1, m0, m1, comb, s0, s1, ha, hb):
    traces = [load(t0), load(t1)]
    pwr = [pwr_values(read_csv(s0)), pwr_values(read_csv(s1))]
    hosts = [ha, hb]
    for i, (orig, out) in enumerate(zip(traces, (m0, m1))):
        m = load(out)
        added = list(m["traceEvents"])
        for e in orig["traceEvents"]:
            if e not in added:
                fail("%s: an original event is missing: %s" % (out, e))
            added.remove(e)
        lo, hi = span(orig)
        check_cards(added, hosts[i], orig["baseTimeNanoseconds"], pwr[i], lo, hi, out)
    c = load(comb)
    base = c["baseTimeNanoseconds"]
    ranks = c["spyremonRanks"]
    if [(r["host"], r["rank"]) for r in ranks] != [(ha, 0), (hb, 1)]:
        fail("%s: spyremonRanks %s" % (comb, ranks))
    ev = c["traceEvents"]
    pos = 0
    for i, orig in enumerate(traces):
        lo_pid, hi_pid = ranks[i]["pids"]
        mapping = {}
        want = [e for e in orig["traceEvents"]
                if not (e.get("ph") == "M" and e.get("name") == "process_sort_index")]
        for e in want:
            g = ev[pos]
            pos += 1
            if set(g) != set(e):
                fail("%s: rank %d: members %s, want %s" % (comb, i, sorted(g), sorted(e)))
            if "pid" in e:
                if not lo_pid <= g["pid"] <= hi_pid:
                    fail("%s: rank %d: pid %s outside %s" % (comb, i, g["pid"], ranks[i]["pids"]))
                if mapping.setdefault(e["pid"], g["pid"]) != g["pid"]:
                    fail("%s: rank %d: pid %r became two pids" % (comb, i, e["pid"]))
            for k in e:
                if k == "pid":
                    continue
                if k == "ts":
                    if abs_ns(base, g["ts"]) != abs_ns(orig["baseTimeNanoseconds"], e["ts"]):
                        fail("%s: rank %d: ts %s moved to %s" % (comb, i, e["ts"], g["ts"]))
                elif (k == "args" and e.get("ph") == "M" and e.get("name") == "process_name"):
                    if g["args"]["name"] != "rank %d \u00b7 %s \u00b7 %s" % (i, hosts[i], e["args"]["name"]):
                        fail("%s: process name %r" % (comb, g["args"]["name"]))
                elif g[k] != e[k]:
                    fail("%s: rank %d: %s %r became %r" % (comb, i, k, e[k], g[k]))
        if len(set(mapping.values())) != len(mapping):
            fail("%s: rank %d: two pids became one" % (comb, i))
        # the added names and sort indexes of the rank's processes
        while pos < len(ev) and ev[pos].get("ph") == "M" and lo_pid <= ev[pos]["pid"] <= hi_pid:
            pos += 1
        lo, hi = span(orig)
        check_cards(ev, hosts[i], base, pwr[i], lo, hi, comb)
    r0, r1 = ranks[0]["pids"], ranks[1]["pids"]
    if not r0[1] < r1[0]:
        fail("%s: the ranks' pids overlap: %s %s" % (comb, r0, r1))
    names = {e["args"]["name"] for e in ev if e.get("name") == "process_name"}
    for i, h in enumerate(hosts):
        if not any(n.startswith("rank %d \u00b7 %s \u00b7 " % (i, h)) for n in names):
            fail("%s: no process named for rank %d" % (comb, i))
    print("merged: 2 per-rank traces and one combined of %d events" % len(ev))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"make-trace": make_trace, "rows": rows, "jsonl": jsonl, "steps": steps,
     "summary": summary, "merged": merged, "window": window}[cmd](*args)


if __name__ == "__main__":
    main()
