#!/usr/bin/env python3
"""Holistic Trace Analysis reads a merged trace as the original.

usage: PYTHONPATH=HTA_SRC hta_check.py --client B/spyremon \
           --mksamples B/tests/mksamples [--table FILE]

Needs HTA's source (not in the tree: `make check-hta HTA_SRC=DIR`) and
pandas, numpy, plotly, networkx (Debian's python3-* packages).  For each
trace of tests/data/hta (HTA's own test traces, read as HTA reads a
folder), a database of two cards covering its span (merge_check.py's
samples), and `spyremon export --trace DIR --merge-dir OUT` with
--merge-as counters and --merge-as hta; then HTA's TraceAnalysis loads the
original folder and each merged one and, for every rank:

- the raw dataframe of the original events (its rows whose "index", the
  event's place in traceEvents, is one of the original's) is identical:
  values, dtypes and index, with cat and name compared as the strings
  they stand for (HTA numbers its symbols in a set's order, which differs
  from one process to the next); every column's dtype is the original's;
- with --merge-as hta, the cards' slices are rows of the dataframe;
- every analysis returns identical frames (or fails the same way);

and a folder of two copies of one trace, ranks 0 and 1, merged with
--merge-dir, loads as the same two ranks, each identical to its original.

Then the breakdowns against HTA itself: for each folder of
tests/data/hta/expected.json (two_ranks, of two rank files, included),
HTA's temporal breakdown per rank, idle-time breakdown per rank and
stream and count of step names, computed now (hta_reference.py's
hta_figures), are expected.json's exactly; and `spyremon export --trace
DIR --breakdown --json` gives them (hta_compare.py: each rank once, its
shares within 0.1 percentage point, its times and each stream's exact).

Prints a table (analysis, trace, mode, result) and exits 1 on any
difference.
"""
import argparse
import gzip
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import merge_check  # noqa: E402
sys.path.insert(0, HERE)
import hta_reference  # noqa: E402

try:
    import pandas as pd
    from hta.trace_analysis import TraceAnalysis
except ImportError as e:
    print("hta_check: %s (make check-hta HTA_SRC=DIR, and apt-get install "
          "python3-pandas python3-numpy python3-plotly python3-networkx)"
          % e, file=sys.stderr)
    sys.exit(2)

HTA_CAT = "spyre_sample_runtime"
DATA = os.path.join(ROOT, "tests", "data", "hta")
ROWS = []
FAILED = []


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, **kw)
    if r.returncode != 0:
        sys.exit("hta_check: %s exited %d: %s" % (" ".join(cmd),
                                                   r.returncode, r.stderr))
    return r


def load(folder):
    """HTA's TraceAnalysis of a folder, its logging quiet."""
    return TraceAnalysis(trace_dir=folder)


def decoded(ta, rank):
    """The rank's dataframe with cat and name as strings."""
    df = ta.t.get_trace(rank).copy()
    tab = ta.t.symbol_table.sym_table
    for col in ("cat", "name"):
        df[col] = df[col].map(lambda i: tab[i] if i >= 0 else "")
    return df


def nevents(path):
    data = merge_check.read_bytes(path)
    doc = json.loads(data)
    return len(doc["traceEvents"] if isinstance(doc, dict) else doc)


def record(analysis, trace, mode, ok, why=""):
    ROWS.append((analysis, trace, mode, "identical" if ok else
                 "DIFFERENT" + (": " + why if why else "")))
    if not ok:
        FAILED.append((analysis, trace, mode, why))


def compare_raw(a, b, n_orig, trace, mode):
    """n_orig: how many events the original file of each rank has."""
    for rank in a.t.get_ranks():
        n = n_orig[rank] if isinstance(n_orig, dict) else n_orig
        da, db = decoded(a, rank), decoded(b, rank)
        mine = db[db["index"] >= n]
        kept = db[db["index"] < n]
        try:
            pd.testing.assert_frame_equal(da, kept, check_exact=True)
            ok, why = True, ""
        except AssertionError as e:
            ok, why = False, str(e).splitlines()[0][:120]
        record("raw dataframe, rank %d" % rank, trace, mode, ok, why)
        diff = {c: (str(da[c].dtype), str(db[c].dtype)) for c in da.columns
                if c in db.columns and da[c].dtype != db[c].dtype}
        extra = sorted(set(db.columns) ^ set(da.columns))
        record("dtypes and columns, rank %d" % rank, trace, mode,
               not diff and not extra, "%s %s" % (diff, extra))
        if mode == "hta":
            slices = int((mine["cat"] == HTA_CAT).sum())
            record("the cards' slices kept (%d), rank %d" % (slices, rank),
                   trace, mode, slices > 0, "none kept")


ANALYSES = [
    ("temporal breakdown", lambda ta: ta.get_temporal_breakdown(
        visualize=False)),
    ("idle time breakdown", lambda ta: ta.get_idle_time_breakdown(
        visualize=False)),
    ("kernel breakdown", lambda ta: ta.get_gpu_kernel_breakdown(
        visualize=False)),
    ("comm/comp overlap", lambda ta: ta.get_comm_comp_overlap(
        visualize=False)),
    ("profiler steps", lambda ta: ta.get_profiler_steps()),
    ("cuda kernel launch stats", lambda ta: ta.get_cuda_kernel_launch_stats(
        visualize=False)),
    ("queue length summary", lambda ta: ta.get_queue_length_summary()),
    ("memory bw summary", lambda ta: ta.get_memory_bw_summary()),
    ("user annotation breakdown",
     lambda ta: ta.get_gpu_user_annotation_breakdown(visualize=False)),
]


def same(x, y):
    """Frames, series, dicts, lists, tuples of them: identical."""
    if isinstance(x, (pd.DataFrame, pd.Series)):
        if type(x) is not type(y):
            return False
        try:
            if isinstance(x, pd.DataFrame):
                pd.testing.assert_frame_equal(x, y, check_exact=True)
            else:
                pd.testing.assert_series_equal(x, y, check_exact=True)
        except AssertionError:
            return False
        return True
    if isinstance(x, dict):
        return (isinstance(y, dict) and x.keys() == y.keys() and
                all(same(x[k], y[k]) for k in x))
    if isinstance(x, (list, tuple)):
        return (type(x) is type(y) and len(x) == len(y) and
                all(same(a, b) for a, b in zip(x, y)))
    return x == y or (x != x and y != y)


def compare_analyses(a, b, trace, mode):
    for name, f in ANALYSES:
        res = []
        for ta in (a, b):
            try:
                res.append(("ok", f(ta)))
            except Exception as e:  # the original's failure, repeated
                res.append(("raised", type(e).__name__))
        (ka, va), (kb, vb) = res
        if ka == "raised" or kb == "raised":
            ok = ka == kb and va == vb
            record(name + ("" if ka == "ok" else " (raises %s)" % va),
                   trace, mode, ok, "%s %s / %s %s" % (ka, va, kb, vb))
        else:
            record(name, trace, mode, same(va, vb))


def samples_db(client, mksamples, trace, work):
    info = os.path.join(work, "info.json")
    with open(info, "w") as f:
        f.write(run([client, "trace", "info", "--json", trace]).stdout)
    lines = os.path.join(work, "lines")
    with open(lines, "w") as f:
        f.write(run([sys.executable, os.path.join(
            ROOT, "tests", "integration", "merge_check.py"), "samples",
            info]).stdout)
    db = os.path.join(work, "db")
    with open(lines) as f:
        run([mksamples, db], stdin=f)
    return db


def merge(client, db, folder, out, mode):
    os.mkdir(out)
    r = run([client, "export", "--db", db, "--trace", folder,
             "--merge-dir", out, "--merge-as", mode])
    return r.stderr


def longest(client, folder):
    """The folder's trace of the longest span (the ranks of two_ranks
    start together), whose samples cover every rank."""
    best = None
    for f in sorted(os.listdir(folder)):
        path = os.path.join(folder, f)
        info = json.loads(run([client, "trace", "info", "--json",
                               path]).stdout)
        if best is None or info["duration_ns"] > best[0]:
            best = (info["duration_ns"], path)
    return best[1]


def check_folder(args, name, work):
    folder = os.path.join(DATA, name)
    db = samples_db(args.client, args.mksamples,
                    longest(args.client, folder), work)
    n_orig = {hta_reference.file_rank(os.path.join(folder, f)):
              nevents(os.path.join(folder, f))
              for f in sorted(os.listdir(folder))}
    orig = load(folder)
    for mode in ("counters", "hta"):
        out = os.path.join(work, "out-" + mode)
        merge(args.client, db, folder, out, mode)
        merged = load(out)
        record("ranks", name, mode, merged.t.get_ranks() ==
               orig.t.get_ranks(), str(merged.t.get_ranks()))
        compare_raw(orig, merged, n_orig, name, mode)
        compare_analyses(orig, merged, name, mode)


def check_two_ranks(args, work):
    """Two copies of an in-tree trace, ranks 0 and 1, into one folder."""
    src = os.path.join(DATA, "trace_filter_rank0", "sampled_rank-0.json.gz")
    folder = os.path.join(work, "two")
    os.mkdir(folder)
    doc = json.loads(merge_check.read_bytes(src))
    for rank in (0, 1):
        doc["distributedInfo"] = dict(doc.get("distributedInfo", {}),
                                      rank=rank, world_size=2)
        with gzip.open(os.path.join(folder, "sampled_rank-%d.json.gz"
                                    % rank), "wt") as f:
            json.dump(doc, f, indent=1)
    first = os.path.join(folder, "sampled_rank-0.json.gz")
    db = samples_db(args.client, args.mksamples, first, work)
    n_orig = nevents(first)
    orig = load(folder)
    for mode in ("counters", "hta"):
        out = os.path.join(work, "two-" + mode)
        err = merge(args.client, db, folder, out, mode)
        got = sorted(os.listdir(out))
        record("--merge-dir wrote %s" % ",".join(got), "two ranks", mode,
               got == sorted(os.listdir(folder)), err)
        merged = load(out)
        record("ranks %s" % merged.t.get_ranks(), "two ranks", mode,
               merged.t.get_ranks() == [0, 1])
        compare_raw(orig, merged, n_orig, "two ranks", mode)
        compare_analyses(orig, merged, "two ranks", mode)


def check_figures(args, work):
    """HTA's breakdowns now, expected.json's, and spyremon's."""
    exp_path = os.path.join(DATA, "expected.json")
    with open(exp_path) as f:
        doc = json.load(f)
    fresh = dict(doc, traces=[])
    for tr in doc["traces"]:
        name = tr["dir"]
        folder = os.path.join(DATA, name)
        ranks, streams, nnames = hta_reference.hta_figures(folder)
        now = {"dir": name, "step_names": nnames, "ranks": ranks,
               "streams": streams}
        fresh["traces"].append(now)
        record("HTA's breakdowns, %d rank(s), %d stream(s)"
               % (len(ranks), len(streams)), name, "expected.json",
               now == tr, "HTA now %s" % json.dumps(now)[:200])
    fresh_path = os.path.join(work, "hta-now.json")
    with open(fresh_path, "w") as f:
        json.dump(fresh, f)
    for tr in fresh["traces"]:
        name = tr["dir"]
        folder = os.path.join(DATA, name)
        sub = os.path.join(work, "bd-" + name)
        os.mkdir(sub)
        db = samples_db(args.client, args.mksamples,
                        longest(args.client, folder), sub)
        out = os.path.join(sub, "breakdown.json")
        with open(out, "w") as f:
            f.write(run([args.client, "export", "--db", db, "--trace",
                         folder, "--breakdown", "--json"]).stdout)
        r = subprocess.run([sys.executable, os.path.join(
            HERE, "hta_compare.py"), fresh_path, name, out],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            universal_newlines=True)
        lines = r.stdout.strip().splitlines()
        record("export --breakdown per rank and stream", name, "HTA now",
               r.returncode == 0, "; ".join(lines[-3:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", required=True)
    ap.add_argument("--mksamples", required=True)
    ap.add_argument("--table", help="also write the table here")
    args = ap.parse_args()
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    work = tempfile.mkdtemp(prefix="hta-check.")
    try:
        for name in sorted(os.listdir(DATA)):
            if os.path.isdir(os.path.join(DATA, name)):
                sub = os.path.join(work, name)
                os.mkdir(sub)
                check_folder(args, name, sub)
        check_two_ranks(args, work)
        check_figures(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    w = [max(len(r[i]) for r in ROWS + [("analysis", "trace", "mode",
                                          "result")]) for i in range(3)]
    lines = ["| %-*s | %-*s | %-*s | %s |" % (w[0], a, w[1], t, w[2], m, r)
             for a, t, m, r in [("analysis", "trace", "mode", "original vs "
                                 "merged")] + ROWS]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.table:
        with open(args.table, "w") as f:
            f.write(text)
    if FAILED:
        print("hta_check: %d differences" % len(FAILED), file=sys.stderr)
        sys.exit(1)
    print("hta_check: %d checks, every one identical" % len(ROWS))


if __name__ == "__main__":
    main()
