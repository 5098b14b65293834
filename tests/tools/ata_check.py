#!/usr/bin/env python3
"""IBM's aiu-trace-analyzer reads a merged trace as the original.

usage: ata_check.py --ata-src DIR --client B/spyremon \
           --mksamples B/tests/mksamples [--table FILE]

Needs the analyzer's source (github IBM/aiu-trace-analyzer, not in the
tree: `make check-ata ATA_SRC=DIR`) and numpy and pandas (Debian's
python3-* packages).  Its sources use f-strings that need Python 3.12;
under an older Python they are run from a copy in which those f-strings'
inner quotes are swapped (a change of syntax only, and said so).

For each trace of tests/data/traces (the Spyre device trace flex-*.json
and the profiler traces), a database of two cards covering its span
(merge_check.py's samples; a trace without absolute time is placed with
--trace-start) and `spyremon export --trace T --merge OUT` (counters);
then the analyzer (`acelyzer -i trace.json -o out.json OPTIONS`, with
PYTHONHASHSEED=0: it keys jobs by Python's string hash) runs on the
original twice and on the merged trace once, each in a folder of its own,
under each set of options of RUNS.  Every output is compared, the files it
writes and its stdout and stderr (less each line's clock time), and its
exit status:

- original against original: identical, or the analyzer is not
  deterministic and the comparison proves nothing;
- original against merged: identical, or the difference is one of
  EXPLAINED's, each checked by its rule (the analyzer counts or shows the
  merge's added events), or it fails.

In out.json every event of the original's run must be in the merged run's
output, unchanged, unless a rule of EXPLAINED allows it.  Prints a table
(trace, options, output, result) and exits 1 on any unexplained
difference.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import merge_check  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "traces")
# ts = 0 of a trace without absolute time: 2025-11-24T16:00:00Z
TRACE_START_NS = 1764000000000000000
# the analyzer's runs: name and options (besides -i and -o)
# (the defaults' counters are power_ts4 coll_bw prep_queue rcu_util; a
# filter of cat spyremon_energy drops the merge's energy slices)
ALT = ["-C", "power_ts3", "bandwidth", "prep_queue", "--flow", "-R",
       "--keep_prep"]
NO_ENERGY = ["--event_filter=cat:spyremon_energy"]
RUNS = [
    ("default", ["--power-stats"]),
    ("default, no energy", ["--power-stats"] + NO_ENERGY),
    ("power_ts3", ["--power-stats"] + ALT),
    ("power_ts3, no energy", ["--power-stats"] + ALT + NO_ENERGY),
]
ROWS = []
FAILED = []
CLOCK = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+ ")


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, **kw)
    if r.returncode != 0:
        sys.exit("ata_check: %s exited %d: %s" % (" ".join(cmd),
                                                   r.returncode, r.stderr))
    return r


def requote(src):
    """src with double quotes inside an f"..." string's braces made single
    (Python 3.12 allows the string's own quote there, 3.11 does not)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if (c in "fF" and src[i + 1:i + 2] == '"' and
                (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_"))):
            out.append(c + '"')
            i += 2
            depth = 0
            while i < n:
                c = src[i]
                if c == "\\":
                    out.append(src[i:i + 2])
                    i += 2
                    continue
                if c == "{":
                    if depth == 0 and src[i + 1:i + 2] == "{":
                        out.append("{{")
                        i += 2
                        continue
                    depth += 1
                elif c == "}" and depth > 0:
                    depth -= 1
                elif c == '"':
                    if depth == 0:
                        out.append(c)
                        i += 1
                        break
                    c = "'"
                out.append(c)
                i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def analyzer(src, work):
    """The folder to run the analyzer from (its src and bin), and a note
    naming the files whose f-strings were re-quoted."""
    for sub in ("src/aiu_trace_analyzer", "bin/acelyzer.py"):
        if not os.path.exists(os.path.join(src, sub)):
            sys.exit("ata_check: %s has no %s: give the analyzer's source"
                     % (src, sub))
    bad = []
    for d, _, files in os.walk(os.path.join(src, "src")):
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(d, f)
                try:
                    compile(open(p, encoding="utf-8").read(), p, "exec")
                except SyntaxError:
                    bad.append(os.path.relpath(p, src))
    if not bad:
        return src, ""
    dst = os.path.join(work, "ata")
    for sub in ("src", "bin"):
        shutil.copytree(os.path.join(src, sub), os.path.join(dst, sub),
                        ignore=shutil.ignore_patterns("__pycache__"))
    for rel in bad:
        p = os.path.join(dst, rel)
        text = requote(open(p, encoding="utf-8").read())
        try:
            compile(text, p, "exec")
        except SyntaxError as e:
            sys.exit("ata_check: %s does not compile under Python %d.%d, "
                     "even re-quoted: %s" % (rel, sys.version_info[0],
                                             sys.version_info[1], e))
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
    return dst, "f-strings re-quoted for Python %d.%d in %s" % (
        sys.version_info[0], sys.version_info[1], ", ".join(sorted(bad)))


def samples_db(client, mksamples, trace, start, work):
    info = os.path.join(work, "info.json")
    with open(info, "w") as f:
        f.write(run([client, "trace", "info", "--json", trace]).stdout)
    cmd = [sys.executable, os.path.join(ROOT, "tests", "integration",
                                        "merge_check.py"), "samples", info]
    if start is not None:
        cmd += ["--trace-start", str(start)]
    lines = os.path.join(work, "lines")
    with open(lines, "w") as f:
        f.write(run(cmd).stdout)
    db = os.path.join(work, "db")
    with open(lines) as f:
        run([mksamples, db], stdin=f)
    return db


def acelyzer(ata, folder, opts):
    """Run the analyzer in folder on trace.json; its outputs by name."""
    env = dict(os.environ, PYTHONHASHSEED="0",
               PYTHONPATH=os.path.join(ata, "src"))
    r = subprocess.run([sys.executable, os.path.join(ata, "bin",
                                                     "acelyzer.py"),
                        "-i", "trace.json", "-o", "out.json"] + opts,
                       cwd=folder, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    outs = {"exit status": str(r.returncode)}
    for name in ("stdout", "stderr"):
        text = getattr(r, name)
        outs[name] = "".join(CLOCK.sub("", ln)
                             for ln in text.splitlines(True))
    for f in sorted(os.listdir(folder)):
        if f != "trace.json":
            with open(os.path.join(folder, f), encoding="utf-8",
                      errors="replace") as fh:
                outs[f] = fh.read()
    return outs


def canon(e):
    return json.dumps(e, sort_keys=True)


def kinds(events):
    """A short count of events by phase and cat."""
    c = collections.Counter("%s%s" % (e.get("ph"), (" " + e["cat"])
                                      if e.get("cat") else "")
                            for e in events)
    return ", ".join("%d %s" % (n, k) for k, n in sorted(c.items()))


# Differences the merge's added events make, each with its rule: a
# function of (original's text, merged's text, the merge's added events)
# that returns an explanation, or None when the rule does not hold.
def ex_json(a, b, added):
    """out.json: every event of the original's output is in the merged
    one's; the rest are the added events, as the analyzer writes them:
    counter events kept, on their pids, the energy slices and the
    metadata of the processes they land on."""
    try:
        da, db = json.loads(a), json.loads(b)
    except ValueError:
        return None
    ea, eb = da["traceEvents"], db["traceEvents"]
    if {k: v for k, v in da.items() if k != "traceEvents"} != \
            {k: v for k, v in db.items() if k != "traceEvents"}:
        return None
    have = collections.Counter(map(canon, eb))
    lost = []
    for e in ea:
        k = canon(e)
        if have[k]:
            have[k] -= 1
        else:
            lost.append(e)
    new = [json.loads(k) for k, n in have.items() for _ in range(n)]
    n_c = sum(1 for e in added if e["ph"] == "C")
    new_c = [e for e in new if e.get("ph") == "C"]
    energy = [e for e in new if e.get("cat") == "spyremon_energy"]
    if len(new_c) != n_c:
        return None
    # With the energy slices, which the analyzer takes for the rank's host
    # events: it names the process they land on, which may take over the
    # original's process names (M events), and its overlap resolution
    # gives them lanes, which may move an original slice to another tid.
    if lost and not energy:
        return None
    names = [e for e in lost if e.get("ph") == "M"]
    moved = []
    pool = collections.Counter(canon(dict(e, tid=None)) for e in new
                               if e.get("ph") == "X")
    for e in lost:
        if e.get("ph") == "M":
            continue
        k = canon(dict(e, tid=None))
        if e.get("ph") != "X" or not pool[k]:
            return None
        pool[k] -= 1
        moved.append(e)
    # the moved slices are among new (and the only X events there but the
    # energy slices); the rest of new are the added
    if sum(1 for e in new if e.get("ph") not in ("C", "M") and
           e.get("cat") != "spyremon_energy") != len(moved) or len(energy) + len(new_c) + len(moved) + sum(
            1 for e in new if e.get("ph") == "M") != len(new):
        return None
    why = "the original's %d events kept; added %s" % (
        len(ea) - len(lost), kinds(e for e in new if canon(dict(
            e, tid=None)) not in {canon(dict(m, tid=None)) for m in moved}))
    if names:
        why += "; %d M events naming the original's process replaced by " \
               "the energy slices' process" % len(names)
    if moved:
        why += "; %d of the original's slices moved to another tid by " \
               "overlap resolution with the energy slices" % len(moved)
    return why


# Lines of the analyzer's stdout that the added events change: a count
# (the same line in both, its number changed) or a line the merged run
# adds, with the number of added events it stands for.
STDOUT_RULES = [
    (re.compile(r"Exported events: +\d+"), "count",
     "the count of exported events"),
    (re.compile(r"Partial-overlap slices resolved: \d+"), "count",
     "overlaps resolved, the energy slices' too"),
    (re.compile(r"CAT: Found \d+ categorization mismatches"), "count",
     "categorization mismatches, the energy slices' too"),
    (re.compile(r"PEC event stats o/i: \d+ / \d+"), "count",
     "the power stage's event counts"),
    (re.compile(r"Event failed sanityCheck: +ts is not in \{'ph': 'M'"),
     "untimed M", "the merge's M events dropped: they have no ts, as "
     "the trace's events have no M events to take one from"),
]


def ex_stdout(a, b, added):
    la, lb = a.splitlines(), b.splitlines()
    ca, cb = collections.Counter(la), collections.Counter(lb)
    gone = [x for x in la if ca[x] > cb[x]]
    come = [x for x in lb if cb[x] > ca[x]]
    why = []
    for rx, kind, what in STDOUT_RULES:
        g = [x for x in gone if rx.search(x)]
        c = [x for x in come if rx.search(x)]
        if kind == "count" and len(g) != len(c):
            return None
        if kind == "untimed M" and (g or len(c) != sum(
                1 for e in added if e["ph"] == "M" and "ts" not in e)):
            return None
        if c:
            why.append("%s (%d lines)" % (what, len(c)))
        gone = [x for x in gone if not rx.search(x)]
        come = [x for x in come if not rx.search(x)]
    if gone or come:
        return None
    return "; ".join(why)


EXPLAINED = {"out.json": ex_json, "stdout": ex_stdout}


def diff_text(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else "(none)"
        y = lb[i] if i < len(lb) else "(none)"
        if x != y:
            return "line %d: %r / %r" % (i + 1, x[:90], y[:90])
    return ""


def record(trace, opts, output, ok, why=""):
    ROWS.append((trace, opts, output, why if ok else "DIFFERENT: " + why))
    if not ok:
        FAILED.append((trace, opts, output, why))


def check_trace(args, ata, name, work):
    src = os.path.join(DATA, name)
    plain = os.path.join(work, "trace.json")
    with open(plain, "wb") as f:
        f.write(merge_check.read_bytes(src))
    info = json.loads(run([args.client, "trace", "info", "--json",
                           plain]).stdout)
    start = TRACE_START_NS if info["start_ns"] is None else None
    db = samples_db(args.client, args.mksamples, plain, start, work)
    merged = os.path.join(work, "merged.json")
    cmd = [args.client, "export", "--db", db, "--trace", plain,
           "--merge", merged, "--quiet"]
    if start is not None:
        cmd += ["--trace-start", str(start)]
    run(cmd)
    doc = json.loads(merge_check.read_bytes(merged))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    orig_doc = json.loads(merge_check.read_bytes(plain))
    n_orig = len(orig_doc["traceEvents"] if isinstance(orig_doc, dict)
                 else orig_doc)
    added = events[n_orig:]
    short = name.replace(".json.gz", "").replace(".json", "")
    for rname, opts in RUNS:
        res = {}
        for which, path in (("a", plain), ("a2", plain), ("b", merged)):
            folder = os.path.join(work, rname.replace(" ", "-") + "-" + which)
            os.mkdir(folder)
            shutil.copy(path, os.path.join(folder, "trace.json"))
            res[which] = acelyzer(ata, folder, opts)
        a, a2, b = res["a"], res["a2"], res["b"]
        if a["exit status"] != "0":
            last = (a["stderr"].strip().splitlines() or ["?"])[-1]
            same = b["exit status"] == a["exit status"] and \
                (b["stderr"].strip().splitlines() or ["?"])[-1] == last
            record(short, rname, "rejects the original: %s" % last[:70],
                   same, "identical" if same else
                   "the merged: exit %s, %s" % (b["exit status"], (
                       b["stderr"].strip().splitlines() or ["?"])[-1][:80]))
            continue
        for out in sorted(set(a) | set(b), key=lambda k: (
                k not in ("exit status", "stdout", "stderr"), k)):
            if out not in a or out not in b:
                record(short, rname, out, False, "written only for the %s"
                       % ("original" if out in a else "merged trace"))
                continue
            if a[out] != a2.get(out):
                record(short, rname, out, False, "two runs on the original "
                       "differ: " + diff_text(a[out], a2.get(out, "")))
                continue
            if a[out] == b[out]:
                record(short, rname, out, True, "identical")
                continue
            rule = EXPLAINED.get(out)
            why = rule(a[out], b[out], added) if rule else None
            if why is None:
                record(short, rname, out, False, diff_text(a[out], b[out]))
            else:
                record(short, rname, out, True, "differs: " + why)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ata-src", required=True)
    ap.add_argument("--client", required=True)
    ap.add_argument("--mksamples", required=True)
    ap.add_argument("--table", help="also write the table here")
    args = ap.parse_args()
    try:
        import numpy  # noqa: F401
        import pandas  # noqa: F401
    except ImportError as e:
        print("ata_check: %s (apt-get install python3-numpy python3-pandas)"
              % e, file=sys.stderr)
        sys.exit(2)
    work = tempfile.mkdtemp(prefix="ata-check.")
    try:
        ata, note = analyzer(os.path.abspath(args.ata_src), work)
        if note:
            print("ata_check: " + note, file=sys.stderr)
        for name in sorted(os.listdir(DATA)):
            if name.endswith((".json", ".json.gz")):
                sub = os.path.join(work, name)
                os.mkdir(sub)
                check_trace(args, ata, name, sub)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    head = ("trace", "options", "output", "original vs merged")
    w = [max(len(r[i]) for r in ROWS + [head]) for i in range(3)]
    lines = ["| %-*s | %-*s | %-*s | %s |" % (w[0], t, w[1], o, w[2], p, r)
             for t, o, p, r in [head] + ROWS]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.table:
        with open(args.table, "w") as f:
            f.write(text)
    if FAILED:
        print("ata_check: %d unexplained differences" % len(FAILED),
              file=sys.stderr)
        sys.exit(1)
    print("ata_check: %d outputs, each identical or differing only by "
          "the merge's added events, as explained" % len(ROWS))


if __name__ == "__main__":
    main()
