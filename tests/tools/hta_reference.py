#!/usr/bin/env python3
"""Reference figures of Holistic Trace Analysis (HTA) for the temporal and
idle-time breakdowns, written to tests/data/hta/expected.json, and an
independent check of the rules that produce them.

The test suite never runs this: HTA is not a dependency of spyremon.  It
documents how tests/data/hta/expected.json was made, and its --check mode
is an executable statement, in plain Python with no HTA and no pandas, of
the rules that a re-implementation must follow to reproduce HTA's figures
exactly.

Making the figures (HTA 0.6.1, facebookresearch/HolisticTraceAnalysis at
commit f4d0062c382f42bd8a74838bcdad1916c7d5d2da, unpacked in HTA_SRC, run
with Debian 12's python3-pandas, -numpy, -plotly, -networkx, -pydot,
-psutil, -ijson and -yaml; nothing installed from PyPI):

    PYTHONPATH=$HTA_SRC /usr/bin/python3 tests/tools/hta_reference.py \\
        --data tests/data/hta --out tests/data/hta/expected.json

For each trace folder of TRACES it runs, as a user would,

    ta = TraceAnalysis(trace_dir=D)
    ta.get_temporal_breakdown(visualize=False)
    ta.get_idle_time_breakdown(ranks=[r], visualize=False)   # each rank r

(get_idle_time_breakdown looks at rank 0 alone unless given ranks).  HTA
rounds the idle times it returns to 0.01; the figures here are taken
before that rounding, from HTA's own per-stream frames (its
BreakdownAnalysis._analyze_idle_time_for_stream is wrapped to keep a copy
of each result), and checked against the rounded frame it returns.  The
threshold is HTA's default, consecutive_kernel_delay=30, in the trace's
own time unit (microseconds for these Kineto traces, whatever HTA's
docstring says).  After writing, the figures are checked with --check's
rules; any difference is printed and the exit status is 1.

Checking figures without HTA (reads the folders named in the JSON file):

    /usr/bin/python3 tests/tools/hta_reference.py --check \\
        --data tests/data/hta --out tests/data/hta/expected.json
"""

import argparse
import gzip
import json
import math
import os
import re
import sys

HTA_VERSION = "0.6.1"
HTA_COMMIT = "f4d0062c382f42bd8a74838bcdad1916c7d5d2da"
THRESHOLD = 30

# (name in tests/data/hta, its folder under --data)
TRACES = [
    ("trace_filter_rank0", "trace_filter_rank0"),
    ("mtia", "mtia"),
    ("ns_resolution_trace", "ns_resolution_trace"),
    ("amd_trace", "amd_trace"),
    ("two_ranks", "two_ranks"),
]


# ---------------------------------------------------------------------------
# The rules, without HTA
# ---------------------------------------------------------------------------

STEP_RE = re.compile(r"ProfilerStep#(\d+)")
SYNC_NAMES = ("Event Sync", "Context Sync")
IDLE_CATS = ("kernel", "Kernel", "gpu_memset", "Memset", "gpu_memcpy",
             "Memcpy", "mtia_ccp_events")
# A name is compute unless one of these matches at its start (re.match).
COMM_RE = re.compile(r"(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)")
MEMORY_RE = re.compile(r"(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)")
NON_COMPUTE_RE = re.compile(
    r"(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)"
    r"|(cuda.*LaunchKernel)|(^runFunction)|(^hip)|(^job_exe)|(^packet)"
    r"|(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution)")
RANK_RE = re.compile(r'"rank":\s+(\d+)')


def is_compute(name):
    return not (COMM_RE.match(name) or MEMORY_RE.match(name)
                or NON_COMPUTE_RE.match(name))


def file_rank(path):
    """The first '"rank": N' (one or more spaces) on any line, else 0."""
    with gzip.open(path, "rt") if path.endswith("gz") else open(path) as f:
        for line in f:
            m = RANK_RE.search(line)
            if m:
                return int(m.group(1))
    return 0


def to_stream(v):
    """args.stream as an int; a value that is not a number is -1."""
    if isinstance(v, bool) or v is None:
        return -1
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return -1 if math.isnan(v) else int(v)
    if isinstance(v, str):
        try:
            return int(float(v))        # "7" -> 7; "0x0" -> -1
        except ValueError:
            return -1
    return -1


def load_rank(path):
    """The events HTA keeps from one file, as dicts, before step filtering."""
    with gzip.open(path, "rb") if path.endswith("gz") else open(path, "rb") as f:
        evs = json.load(f).get("traceEvents", [])
    # pandas makes the ts column float when any ts is a float or missing;
    # then every event becomes [ceil(ts), floor(ts + dur)].
    floating = any(isinstance(e.get("ts"), float) or e.get("ts") is None
                   for e in evs)
    rows = []
    for i, e in enumerate(evs):     # i: the event's place in traceEvents
        ts, dur, cat = e.get("ts"), e.get("dur"), e.get("cat")
        if ts is None or dur is None or cat is None or cat == "Trace":
            continue
        if floating:
            end = math.floor(float(ts) + float(dur))
            ts = math.ceil(float(ts))
            dur = end - ts
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        corr = args.get("correlation", -1)
        stream = to_stream(args.get("stream", -1))
        name = e.get("name")
        rows.append({"index": i, "ts": ts, "dur": dur, "cat": cat,
                     "name": name, "stream": stream, "corr": corr,
                     "gpu": (stream >= 0 and corr >= 0) or name in SYNC_NAMES})
    # Link each device event and its launch by correlation id; an event
    # with an id and no partner points at index 0, one without at -1.
    cpu_by_corr, gpu_by_corr = {}, {}
    for r in rows:
        r["ic"] = min(r["corr"], 0)
        if r["corr"] != -1:
            (gpu_by_corr if r["gpu"] else cpu_by_corr).setdefault(
                r["corr"], []).append(r)
    for c, cpus in cpu_by_corr.items():
        for g in gpu_by_corr.get(c, []):
            for p in cpus:
                p["ic"], g["ic"] = g["index"], p["index"]
    return rows


def step_filter(rows, nsteps_names, step_names):
    """HTA drops the last step when the run has two or more step names."""
    if nsteps_names < 2:
        return rows
    cpu = [r for r in rows if not r["gpu"]]
    if not cpu:
        return rows
    steps = [r["ts"] for r in cpu if r["name"] in step_names]
    last = max(steps) if steps else min(r["ts"] for r in cpu)
    kept_cpu = [r for r in cpu if r["ts"] < last]
    n = {}
    for r in kept_cpu:
        n[r["corr"]] = n.get(r["corr"], 0) + 1
    kept_gpu = [r for r in rows if r["gpu"] for _ in range(n.get(r["corr"], 0))]
    return kept_gpu + kept_cpu


def union(events):
    """Sum of the merged intervals: sorted by ts, an event opens a new
    interval only when its ts is after every earlier end."""
    total, cur_ts, cur_end = 0, None, None
    for r in sorted(events, key=lambda r: r["ts"]):
        end = r["ts"] + r["dur"]
        if cur_ts is None or r["ts"] > cur_end:
            if cur_ts is not None:
                total += cur_end - cur_ts
            cur_ts, cur_end = r["ts"], end
        else:
            cur_end = max(cur_end, end)
    if cur_ts is not None:
        total += cur_end - cur_ts
    return total


def temporal(rows):
    dev = [r for r in rows if r["stream"] != -1]
    span = max(r["ts"] + r["dur"] for r in dev) - min(r["ts"] for r in dev)
    idle = span - union(dev)
    compute = union([r for r in dev if is_compute(r["name"])])
    non_compute = span - compute - idle
    return {"idle_us": idle, "compute_us": compute,
            "non_compute_us": non_compute,
            "idle_pct": round(100 * idle / span, 2),
            "compute_pct": round(100 * compute / span, 2),
            "non_compute_pct": round(100 * non_compute / span, 2)}


def idle_streams(rank, rows, threshold):
    by_index = {}
    for r in rows:
        by_index.setdefault(r["index"], r)
    out = {}
    kern = [r for r in rows if r["stream"] != -1 and r["cat"] in IDLE_CATS]
    for s in sorted({r["stream"] for r in kern}):
        acc = {"rank": rank, "stream": s, "host_wait_us": 0,
               "kernel_wait_us": 0, "other_us": 0}
        prev_end = None
        for r in sorted((r for r in kern if r["stream"] == s),
                        key=lambda r: r["ts"]):
            if prev_end is not None:
                gap = r["ts"] - prev_end
                launch = by_index.get(r["ic"])
                if launch is not None and launch["ts"] > prev_end:
                    acc["host_wait_us"] += gap
                elif gap < threshold:
                    acc["kernel_wait_us"] += gap
                else:
                    acc["other_us"] += gap
            prev_end = r["ts"] + r["dur"]
        out[s] = acc
    return [out[s] for s in sorted(out)]


def check_folder(folder, threshold=THRESHOLD):
    """Figures for one trace folder by the rules above: (ranks, streams,
    how many step names its files hold together)."""
    files = sorted(f for f in os.listdir(folder)
                   if f.endswith(".gz") or f.endswith(".json"))
    per_rank = {}
    for f in files:
        per_rank[file_rank(os.path.join(folder, f))] = os.path.join(folder, f)
    loaded = {r: load_rank(p) for r, p in per_rank.items()}
    names = set()
    for rows in loaded.values():
        for r in rows:
            for sym in (r["name"], r["cat"]):
                if isinstance(sym, str) and STEP_RE.match(sym):
                    names.add(sym)
    ranks, streams = {}, []
    for rank in sorted(loaded):
        rows = step_filter(loaded[rank], len(names), names)
        ranks[str(rank)] = temporal(rows)
        streams += idle_streams(rank, rows, threshold)
    return ranks, streams, len(names)


def compare(expected, got, where):
    bad = []
    for key in expected:
        e, g = expected[key], got.get(key)
        if g is None or abs(e - g) > 1e-9:
            bad.append(f"{where} {key}: HTA {e}, rules {g}")
    return bad


def check(doc, data_dir):
    bad = []
    for tr in doc["traces"]:
        folder = os.path.join(data_dir, tr["dir"])
        if not os.path.isdir(folder):
            print(f"{tr['dir']}: no folder {folder}, not checked")
            continue
        ranks, streams, nnames = check_folder(folder, doc["threshold"])
        if tr.get("step_names") != nnames:
            bad.append(f"{tr['dir']} step_names: HTA {tr.get('step_names')},"
                       f" rules {nnames}")
        if sorted(ranks) != sorted(tr["ranks"]):
            bad.append(f"{tr['dir']}: ranks differ: rules {sorted(ranks)}")
        for rank, exp in tr["ranks"].items():
            bad += compare(exp, ranks.get(rank, {}), f"{tr['dir']} rank {rank}")
        got = {(s["rank"], s["stream"]): s for s in streams}
        if set(got) != {(s["rank"], s["stream"]) for s in tr["streams"]}:
            bad.append(f"{tr['dir']}: streams differ: rules {sorted(got)}")
        for s in tr["streams"]:
            bad += compare({k: v for k, v in s.items()
                            if k not in ("rank", "stream")},
                           got.get((s["rank"], s["stream"]), {}),
                           f"{tr['dir']} rank {s['rank']} stream {s['stream']}")
        print(f"{tr['dir']}: checked")
    return bad


# ---------------------------------------------------------------------------
# HTA's figures
# ---------------------------------------------------------------------------

def num(v):
    """A JSON number: an int when the value is whole."""
    v = float(v)
    return int(v) if v.is_integer() else v


def hta_figures(folder):
    from hta.analyzers.breakdown_analysis import BreakdownAnalysis
    from hta.trace_analysis import TraceAnalysis
    from hta.version import __version__

    assert __version__ == HTA_VERSION, __version__

    captured = []
    inner = BreakdownAnalysis._analyze_idle_time_for_stream

    def keep(cls, *a, **kw):
        res, stats = inner(*a, **kw)
        captured.append(res.copy())
        return res, stats

    BreakdownAnalysis._analyze_idle_time_for_stream = classmethod(keep)
    try:
        ta = TraceAnalysis(trace_dir=folder)
        # the step names of every rank's file together (HTA's symbol table
        # is the folder's): two or more, and each rank's last step goes
        nnames = len(ta.t.symbol_table.get_profiler_step_ids())
        tb = ta.get_temporal_breakdown(visualize=False)
        ranks = {}
        for _, row in tb.iterrows():
            ranks[str(int(row["rank"]))] = {
                "idle_us": num(row["idle_time(us)"]),
                "compute_us": num(row["compute_time(us)"]),
                "non_compute_us": num(row["non_compute_time(us)"]),
                "idle_pct": float(row["idle_time_pctg"]),
                "compute_pct": float(row["compute_time_pctg"]),
                "non_compute_pct": float(row["non_compute_time_pctg"]),
            }
        streams = []
        for rank in ta.t.get_ranks():
            del captured[:]
            rounded, _ = ta.get_idle_time_breakdown(
                ranks=[rank], visualize=False,
                consecutive_kernel_delay=THRESHOLD)
            for frame in captured:
                stream = int(frame["stream"].iloc[0])
                t = {int(k): float(v) for k, v in frame["idle_time"].items()}
                s = {"rank": int(rank), "stream": stream,
                     "host_wait_us": num(t.get(0, 0)),
                     "kernel_wait_us": num(t.get(1, 0)),
                     "other_us": num(t.get(2, 0))}
                for cat, key in (("host_wait", "host_wait_us"),
                                 ("kernel_wait", "kernel_wait_us"),
                                 ("other", "other_us")):
                    r = rounded[(rounded["stream"] == stream)
                                & (rounded["idle_category"] == cat)]
                    shown = float(r["idle_time"].iloc[0]) if len(r) else 0.0
                    assert shown == round(s[key], 2), (folder, s, cat, shown)
                streams.append(s)
        streams.sort(key=lambda s: (s["rank"], s["stream"]))
        return ranks, streams, nnames
    finally:
        BreakdownAnalysis._analyze_idle_time_for_stream = inner


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True,
                    help="HTA's tests/data (to make figures), or tests/data/hta"
                    " (with --check)")
    ap.add_argument("--out", default="tests/data/hta/expected.json")
    ap.add_argument("--check", action="store_true",
                    help="check --out's figures against the rules, without HTA")
    a = ap.parse_args()

    if a.check:
        with open(a.out) as f:
            doc = json.load(f)
        bad = check(doc, a.data)
        print("\n".join(bad) if bad else "all figures reproduced")
        return 1 if bad else 0

    import logging
    logging.disable(logging.WARNING)
    doc = {"hta_version": HTA_VERSION, "commit": HTA_COMMIT,
           "threshold": THRESHOLD, "threshold_unit": "us", "traces": []}
    for name, sub in TRACES:
        ranks, streams, nnames = hta_figures(os.path.join(a.data, sub))
        doc["traces"].append({"dir": name, "step_names": nnames,
                              "ranks": ranks, "streams": streams})
        print(f"{name}: {len(ranks)} rank(s), {len(streams)} stream(s)")
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    # The rules, on the same folders under HTA's names.
    bad = []
    for (name, sub), tr in zip(TRACES, doc["traces"]):
        one = dict(doc, traces=[dict(tr, dir=sub)])
        bad += check(one, a.data)
    print("\n".join(bad) if bad else "all figures reproduced by the rules")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
