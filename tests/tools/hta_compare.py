#!/usr/bin/env python3
"""Compare `spyremon export --trace DIR --breakdown --json` with Holistic
Trace Analysis's figures in tests/data/hta/expected.json.

    hta_compare.py EXPECTED.json DIR OUT.json

DIR names the folder's entry in EXPECTED.json; OUT.json is the export of
its traces: one object for a folder of one trace, an array of one per
rank file for a folder of several, each with its rank in hta.rank.  The
ranks must be HTA's, each once, and every rank must count the folder's
step names as HTA does (hta.step_names: two or more, and each rank's last
step is dropped).  Per rank: HTA's idle, compute and non-compute
percentages within 0.1 percentage point, and its times exact.  Per
stream: spyremon's host wait, launch gap and sync + unexplained, and the
hta object's host wait, kernel wait and other, each HTA's host wait,
kernel wait and other exactly (µs; HTA's are whole µs on these traces).
Prints one line per rank checked and exits 1 on any difference.
"""
import json
import sys


def check_rank(name, exp, hta, streams, bad):
    rank = str(hta["rank"])
    e = exp["ranks"].get(rank)
    if e is None:
        bad.append("%s: rank %s, not one of HTA's %s"
                   % (name, rank, sorted(exp["ranks"])))
        return
    if hta.get("step_names") != exp["step_names"]:
        bad.append("rank %s step_names: HTA %s, spyremon %s"
                   % (rank, exp["step_names"], hta.get("step_names")))
    if hta.get("last_step_dropped") != (exp["step_names"] >= 2):
        bad.append("rank %s last_step_dropped: %s with %d step names"
                   % (rank, hta.get("last_step_dropped"), exp["step_names"]))
    for k in ("idle", "compute", "non_compute"):
        if abs(e[k + "_pct"] - hta[k + "_pct"]) > 0.1:
            bad.append("rank %s %s_pct: HTA %s, spyremon %s"
                       % (rank, k, e[k + "_pct"], hta[k + "_pct"]))
        if e[k + "_us"] != hta[k + "_us"]:
            bad.append("rank %s %s_us: HTA %s, spyremon %s"
                       % (rank, k, e[k + "_us"], hta[k + "_us"]))
    print("%s rank %s: idle %.2f %%, compute %.2f %%, non-compute %.2f %%"
          % (name, rank, hta["idle_pct"], hta["compute_pct"],
             hta["non_compute_pct"]))
    mine = {s["stream"]: (s["host_wait_us"], s["launch_gap_us"],
                          s["sync_us"] + s["unexplained_us"])
            for s in streams}
    theirs = {s["stream"]: (s["host_wait_us"], s["kernel_wait_us"],
                            s["other_us"]) for s in hta["streams"]}
    want = {s["stream"]: (s["host_wait_us"], s["kernel_wait_us"],
                          s["other_us"])
            for s in exp["streams"] if str(s["rank"]) == rank}
    for label, have in (("streams", mine), ("hta.streams", theirs)):
        if sorted(have) != sorted(want):
            bad.append("rank %s %s: streams %s, HTA's %s"
                       % (rank, label, sorted(have), sorted(want)))
            continue
        for s, w in sorted(want.items()):
            for cls, a, b in zip(("host wait", "launch gap", "other"),
                                 w, have[s]):
                # sync + unexplained is a sum of two printed figures
                if abs(a - b) > 1e-6:
                    bad.append("rank %s %s stream %s %s: HTA %s µs, "
                               "spyremon %s µs" % (rank, label, s, cls, a, b))
    print("%s rank %s: %d streams, host wait, launch gap and sync + "
          "unexplained against HTA's host wait, kernel wait and other"
          % (name, rank, len(want)))


def main():
    exp_doc, name, got_path = sys.argv[1:4]
    exp = next(t for t in json.load(open(exp_doc))["traces"]
               if t["dir"] == name)
    got = json.load(open(got_path))
    # several traces: the array's last element is the ranks' cards side
    # by side (across_ranks), not a trace
    traces = [t for t in (got if isinstance(got, list) else [got])
              if "across_ranks" not in t]
    bad = []
    ranks = []
    for t in traces:
        if t.get("hta") is None:
            sys.exit("%s: %s has no hta object" % (got_path, t.get("trace")))
        ranks.append(str(t["hta"]["rank"]))
        check_rank(name, exp, t["hta"], t["streams"], bad)
    if sorted(ranks) != sorted(exp["ranks"]):
        bad.append("%s: ranks %s, HTA's %s" % (name, sorted(ranks),
                                               sorted(exp["ranks"])))
    print("\n".join(bad) if bad else "%s: as HTA, %d rank(s)"
          % (name, len(ranks)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
