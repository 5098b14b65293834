#!/usr/bin/env python3
"""Compare `spyremon export --trace DIR --breakdown --json` with Holistic
Trace Analysis's figures in tests/data/hta/expected.json.

    hta_compare.py EXPECTED.json DIR OUT.json

DIR names the folder's entry in EXPECTED.json; OUT.json is the export of
its one trace.  Per rank: HTA's idle, compute and non-compute percentages
within 0.1 percentage point, and its times within 1 µs.  Per stream:
spyremon's host wait, launch gap and sync + unexplained within 0.1
percentage point of the stream's idle time of HTA's host wait, kernel
wait and other (within 0.001 µs for a stream with no idle time); both the
streams of the "streams" list and those of the "hta" object.  Prints one
line per figure checked and exits 1 on any difference.
"""
import json
import sys


def main():
    exp_doc, name, got_path = sys.argv[1:4]
    exp = next(t for t in json.load(open(exp_doc))["traces"]
               if t["dir"] == name)
    got = json.load(open(got_path))
    if isinstance(got, list):
        sys.exit("%s: one trace expected, got %d" % (got_path, len(got)))
    bad = []
    hta = got.get("hta")
    if hta is None:
        sys.exit("%s: no hta object" % got_path)
    rank = str(hta["rank"])
    e = exp["ranks"][rank]
    for k in ("idle", "compute", "non_compute"):
        if abs(e[k + "_pct"] - hta[k + "_pct"]) > 0.1:
            bad.append("rank %s %s_pct: HTA %s, spyremon %s"
                       % (rank, k, e[k + "_pct"], hta[k + "_pct"]))
        if abs(e[k + "_us"] - hta[k + "_us"]) > 1:
            bad.append("rank %s %s_us: HTA %s, spyremon %s"
                       % (rank, k, e[k + "_us"], hta[k + "_us"]))
    print("%s rank %s: idle %.2f %%, compute %.2f %%, non-compute %.2f %%"
          % (name, rank, hta["idle_pct"], hta["compute_pct"],
             hta["non_compute_pct"]))
    mine = {s["stream"]: (s["host_wait_us"], s["launch_gap_us"],
                          s["sync_us"] + s["unexplained_us"])
            for s in got["streams"]}
    theirs = {s["stream"]: (s["host_wait_us"], s["kernel_wait_us"],
                            s["other_us"]) for s in hta["streams"]}
    want = {s["stream"]: (s["host_wait_us"], s["kernel_wait_us"],
                          s["other_us"])
            for s in exp["streams"] if str(s["rank"]) == rank}
    for label, have in (("streams", mine), ("hta.streams", theirs)):
        if sorted(have) != sorted(want):
            bad.append("%s: streams %s, HTA's %s"
                       % (label, sorted(have), sorted(want)))
            continue
        for s, w in sorted(want.items()):
            total = sum(w)
            for cls, a, b in zip(("host wait", "launch gap", "other"),
                                 w, have[s]):
                off = abs(a - b)
                if (total > 0 and 100 * off / total > 0.1) or \
                        (total <= 0 and off > 0.001):
                    bad.append("%s stream %s %s: HTA %s µs, spyremon %s µs"
                               % (label, s, cls, a, b))
    print("%s: %d streams, host wait, launch gap and sync + unexplained "
          "against HTA's host wait, kernel wait and other" % (name, len(want)))
    print("\n".join(bad) if bad else "%s: as HTA" % name)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
