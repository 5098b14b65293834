#!/usr/bin/env python3
"""Check spyremon's reading of a profiler trace against the trace itself
and the database, computed here independently.

usage: torch_check.py span TRACE
           prints "FIRST_NS LAST_NS": the trace's first ts and latest end,
           in ns on its own clock (M events skipped, X ends at ts + dur)
       torch_check.py abs-span TRACE
           the same in absolute ns, for a trace with baseTimeNanoseconds
       torch_check.py steps TRACE DB WINDOW STEPS.json STEPS.csv PATTERN
           the per-step table (--steps --json and --steps --csv, aligned by
           --align-window WINDOW, or with WINDOW "-" on the trace's own
           absolute time) has one row per card and per step whose
           name matches PATTERN; its energy is the integral of the stored
           power over the step, its mean power within the simulator's range
       torch_check.py info TRACE INFO.json
           trace info --json: absolute time exactly when the trace has
           baseTimeNanoseconds (none for a bare array), and its steps
       torch_check.py merge TRACE MERGED
           the merged trace holds every original event unchanged and in
           order, and power counter tracks within the trace's span
       torch_check.py bracket TRACE DB WINDOW MARGIN_MS
           the window (an id) opened before the trace's first step began
           and ended at least MARGIN_MS after its last step ended (placed
           as for steps: by the window's begin without absolute time)
       torch_check.py kineto TRACE REAL
           TRACE has the layout of the real Kineto trace REAL: its header
           members and their order, baseTimeNanoseconds a multiple of
           Kineto's period, ts and dur written with three decimals, and
           every event with the members of REAL's events of its kind;
           ProfilerStep#N (user_annotation) around iteration_N, with
           cpu_op events inside, within the "PyTorch Profiler (0)" span

Exits 1 with a message on the first difference.
"""
import csv
import gzip
import json
import re
import sqlite3
import sys
from decimal import Decimal

PWR_MIN, PWR_MAX = 20.0, 75.0   # W: the simulator's bounds (sim/sim.h)
STEP_RE = r"ProfilerStep#[0-9]+|iteration_[0-9]+"
KINETO_PERIOD_NS = 7889238 * 10**9   # Kineto's base: 365.2425 / 4 days


def fail(msg):
    print("torch_check: " + msg, file=sys.stderr)
    sys.exit(1)


def text(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return f.read()


def load(path):
    """The trace, its fractional numbers as exact Decimals."""
    return json.loads(text(path), parse_float=Decimal)


def dump(e):
    return json.dumps(e, default=str)[:200]


def events_of(doc):
    return doc if isinstance(doc, list) else doc["traceEvents"]


def base_of(doc):
    """baseTimeNanoseconds, or None: no absolute time of its own."""
    return doc.get("baseTimeNanoseconds") if isinstance(doc, dict) else None


def shift_of(doc, db_path, window):
    """Absolute ns minus own ns: the trace's base, else its first event at
    the window's begin (--align-window)."""
    base = base_of(doc)
    if base is not None:
        return base
    return window_begin(db_path, window) - span(events_of(doc))[0]


def span(events):
    """First ts and latest end, ns, of the non-M events."""
    lo = hi = None
    for e in events:
        if e.get("ph") == "M" or not isinstance(e.get("ts"), (int, Decimal)):
            continue
        ts = round(e["ts"] * 1000)
        end = ts + (round(e.get("dur", 0) * 1000) if e.get("ph") == "X" else 0)
        lo = ts if lo is None else min(lo, ts)
        hi = end if hi is None else max(hi, end)
    return lo, hi


def steps_of(events, pattern):
    return [e for e in events if e.get("ph") == "X"
            and re.fullmatch(pattern, str(e.get("name", "")))]


def power_samples(db_path):
    """Per device: [(ts_ns, interval_ns, watts)] in time order."""
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
    out = {}
    for ts, dev, iv, w in db.execute(
            "SELECT s.ts_ns, s.device, s.interval_ms, v.value "
            "FROM samples s JOIN sample_values v "
            "ON v.ts_ns = s.ts_ns AND v.device = s.device "
            "WHERE v.metric = 'pwr' ORDER BY s.ts_ns"):
        out.setdefault(dev, []).append((ts, iv * 1000000, w))
    db.close()
    return out


def energy(samples, lo, hi):
    """J: power piecewise constant over each sample's (t - d, t], on (lo, hi)."""
    j = 0.0
    for ts, iv, w in samples:
        a, b = max(lo, ts - iv), min(hi, ts)
        if b > a:
            j += w * (b - a) / 1e9
    return j


def window_begin(db_path, window):
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
    if window.isdigit():
        row = db.execute("SELECT begin_ns FROM windows WHERE id = ?",
                         (int(window),)).fetchone()
    else:
        row = db.execute("SELECT begin_ns FROM windows WHERE tag = ? "
                         "ORDER BY id DESC LIMIT 1", (window,)).fetchone()
    db.close()
    if row is None:
        fail("no window %s" % window)
    return row[0]


def check_steps(trace, db_path, window, json_path, csv_path, pattern):
    doc = load(trace)
    events = events_of(doc)
    first, last = span(events)
    shift = shift_of(doc, db_path, window)
    want = steps_of(events, pattern)
    if not want:
        fail("%s has no step matching %s" % (trace, pattern))
    samples = power_samples(db_path)
    devices = sorted(samples)
    doc = json.load(open(json_path))
    rows = doc.get("steps")
    if not isinstance(rows, list) or "total" not in doc:
        fail("%s: no steps array or no total member" % json_path)
    names = [e["name"] for e in want]
    if len(rows) != len(want) * len(devices):
        fail("%d step rows, not %d steps x %d cards: %s" % (
            len(rows), len(want), len(devices),
            sorted({str(r.get("step")) for r in rows})))
    got = {}
    for r in rows:
        key = (str(r["step"]), r["device"])
        if key in got:
            fail("step %s, card %s twice" % key)
        got[key] = r
    for e in want:
        lo = round(e["ts"] * 1000) + shift
        hi = lo + round(e["dur"] * 1000)
        for dev in devices:
            r = got.get((e["name"], dev))
            if r is None:
                fail("no row for step %s on card %s; steps %s" % (
                    e["name"], dev, sorted({k[0] for k in got})))
            j = r["energy_J"]
            expect = energy(samples[dev], lo, hi)
            if not j > 0:
                fail("step %s card %s: energy %r J" % (e["name"], dev, j))
            if abs(j - expect) > 1e-3 + 1e-6 * expect:
                fail("step %s card %s: %.6f J, the stored power gives %.6f J"
                     % (e["name"], dev, j, expect))
            watts = j / ((hi - lo) / 1e9)
            if not PWR_MIN <= watts <= PWR_MAX:
                fail("step %s card %s: mean power %.2f W is outside %g..%g W"
                     % (e["name"], dev, watts, PWR_MIN, PWR_MAX))
    totals = doc["total"]
    if isinstance(totals, dict):
        totals = [totals]
    if sorted(t["device"] for t in totals) != devices:
        fail("total rows for cards %s, not %s"
             % ([t["device"] for t in totals], devices))
    for t in totals:
        expect = energy(samples[t["device"]], first + shift, last + shift)
        if abs(t["energy_J"] - expect) > 1e-3 + 1e-6 * expect:
            fail("total card %s: %.6f J, the stored power gives %.6f J"
                 % (t["device"], t["energy_J"], expect))
    # the CSV says the same, with the total rows last
    with open(csv_path, newline="") as f:
        table = list(csv.reader(f))
    head = table[0]
    if head[0] != "step" or "energy_J" not in head or "device" not in head:
        fail("%s: header %s" % (csv_path, head))
    si, di, ei = head.index("step"), head.index("device"), head.index("energy_J")
    body = table[1:]
    csv_steps = [r for r in body if r[si] != "total"]
    csv_total = [r for r in body if r[si] == "total"]
    if len(csv_steps) != len(rows) or len(csv_total) != len(totals):
        fail("%s: %d step and %d total rows, the JSON has %d and %d" % (
            csv_path, len(csv_steps), len(csv_total), len(rows), len(totals)))
    for r in csv_steps:
        j = got[(r[si], int(r[di]))]["energy_J"]
        if abs(float(r[ei]) - j) > 1e-3 * max(1.0, j):
            fail("%s: step %s card %s: %s J, the JSON says %r" % (
                csv_path, r[si], r[di], r[ei], j))
    print("steps: %d steps x %d cards, %s" % (len(want), len(devices),
                                             " ".join(names)))


def check_info(trace, info_path):
    doc = load(trace)
    events = events_of(doc)
    info = json.load(open(info_path))
    base = base_of(doc)
    want_start = None if base is None else base + span(events)[0]
    if "start_ns" not in info or info["start_ns"] != want_start:
        fail("trace info: start_ns is %r, not %r" % (info.get("start_ns"),
                                                   want_start))
    want = [e["name"] for e in steps_of(events, STEP_RE)]
    got = [s["name"] for s in info.get("steps", [])]
    if got != want:
        fail("trace info steps %s, the trace has %s" % (got, want))


def check_merge(trace, merged_path):
    orig = events_of(load(trace))
    merged_doc = load(merged_path)
    merged = events_of(merged_doc)
    first, last = span(orig)
    j = 0
    added = []
    for e in merged:
        if j < len(orig) and e == orig[j]:
            j += 1
        else:
            added.append(e)
    if j != len(orig):
        fail("%s: original event %d of %d is missing or changed: %s"
             % (merged_path, j, len(orig), dump(orig[j])))
    pwr = []
    for e in added:
        if e.get("ph") not in ("C", "M") and not (
                e.get("ph") == "X" and e.get("cat") == "spyremon_energy"):
            fail("%s: an added event is neither C nor M nor an energy "
                 "slice: %s" % (merged_path, dump(e)))
        if e.get("ph") == "C" and str(e.get("name", "")).startswith("pwr"):
            pwr.append(e)
    if not pwr:
        fail("%s: no pwr counter event among %d added" % (merged_path, len(added)))
    for e in pwr:
        ts = round(e["ts"] * 1000)
        if not first <= ts <= last:
            fail("%s: pwr counter at %d ns, outside the trace's %d..%d"
                 % (merged_path, ts, first, last))
        vals = list(e.get("args", {}).values())
        if not vals or not all(PWR_MIN <= v <= PWR_MAX for v in vals):
            fail("%s: pwr counter values %s" % (merged_path, vals))
    print("merge: %d original events kept, %d added, %d pwr counters"
          % (len(orig), len(added), len(pwr)))


def check_bracket(trace, db_path, window, margin_ms):
    doc = load(trace)
    shift = shift_of(doc, db_path, window)
    steps = steps_of(events_of(doc), STEP_RE)
    if not steps:
        fail("%s has no steps" % trace)
    first = min(round(e["ts"] * 1000) for e in steps) + shift
    last = max(round((e["ts"] + e["dur"]) * 1000) for e in steps) + shift
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
    begin, end = db.execute("SELECT begin_ns, end_ns FROM windows WHERE "
                            "id = ?", (int(window),)).fetchone()
    db.close()
    if end is None:
        fail("window %s is still open" % window)
    if begin > first:
        fail("the window begins %.3f ms after the first step"
             % ((begin - first) / 1e6))
    if end - last < int(margin_ms) * 10**6:
        fail("the window ends %.3f ms after the last step, not %s ms or more"
             % ((end - last) / 1e6, margin_ms))
    print("bracket: the window opens %.3f ms before the first step, ends "
          "%.3f ms after the last" % ((first - begin) / 1e6,
                                      (end - last) / 1e6))


def members(e):
    return tuple(sorted(e))


def check_kineto(trace, real_path):
    raw = text(trace)
    doc = json.loads(raw, parse_float=Decimal)
    real = load(real_path)
    if not isinstance(doc, dict):
        fail("%s is not a JSON object" % trace)
    # Kineto's order: the header, traceEvents, then these three
    head = ["schemaVersion", "deviceProperties", "distributedInfo",
            "record_shapes", "trace_id"]
    tail = ["traceEvents", "traceName", "displayTimeUnit",
            "baseTimeNanoseconds"]
    if list(doc) != head + tail:
        fail("%s: members %s, not %s" % (trace, list(doc), head + tail))
    for k in ("schemaVersion", "deviceProperties", "displayTimeUnit",
              "baseTimeNanoseconds", "traceEvents", "traceName"):
        if k not in real or type(real[k]) is not type(doc[k]):
            fail("%s: %s is a %s; the real trace's a %s" % (
                trace, k, type(doc[k]).__name__, type(real.get(k)).__name__))
    info = doc["distributedInfo"]
    if info.get("rank") != 0 or info.get("world_size") != 1:
        fail("%s: distributedInfo %s" % (trace, info))
    if not re.fullmatch(r"[0-9A-F]{32}", doc["trace_id"]):
        fail("%s: trace_id %r" % (trace, doc["trace_id"]))
    base = doc["baseTimeNanoseconds"]
    if not isinstance(base, int) or base % KINETO_PERIOD_NS != 0:
        fail("%s: baseTimeNanoseconds %r is not a multiple of Kineto's "
             "period" % (trace, base))
    nums = re.findall(r'"(?:ts|dur)": ([0-9.eE+-]+)', raw)
    bad = [n for n in nums if not re.fullmatch(r"[0-9]+\.[0-9]{3}", n)]
    if not nums or bad:
        fail("%s: ts and dur not as Kineto writes them: %s" % (trace, bad[:3]))
    kinds = {}
    for e in events_of(real):
        kinds.setdefault((e.get("ph"), e.get("cat")), set()).add(members(e))
    events = events_of(doc)
    for e in events:
        k = (e.get("ph"), e.get("cat"))
        if members(e) not in kinds.get(k, ()):
            fail("%s: event %s has members %s; the real trace's %s events "
                 "have %s" % (trace, dump(e), members(e), k,
                             sorted(kinds.get(k, ()))))
    xs = [e for e in events if e.get("ph") == "X"]
    spans = [e for e in xs if e.get("cat") == "Trace"]
    if len(spans) != 1 or spans[0]["name"] != "PyTorch Profiler (0)":
        fail("%s: the Trace spans %s" % (trace, [dump(e) for e in spans]))
    lo, hi = spans[0]["ts"], spans[0]["ts"] + spans[0]["dur"]
    for e in xs:
        if not lo <= e["ts"] <= e["ts"] + e["dur"] <= hi:
            fail("%s: %s lies outside the profiler's span" % (trace, dump(e)))
    steps = [e for e in xs if re.fullmatch(r"ProfilerStep#[0-9]+", e["name"])]
    if not steps:
        fail("%s: no ProfilerStep#N" % trace)
    for st in steps:
        n = st["name"].split("#")[1]
        inner = [e for e in xs if e is not st and st["ts"] <= e["ts"] and
                 e["ts"] + e["dur"] <= st["ts"] + st["dur"]]
        names = {e["name"] for e in inner}
        cats = {e["cat"] for e in inner}
        if (st["cat"] != "user_annotation" or "iteration_" + n not in names
                or "cpu_op" not in cats):
            fail("%s: %s (cat %s) holds %s" % (trace, st["name"], st["cat"],
                                              sorted(names)))
    print("kineto: %d events laid out as in %s, %d ProfilerStep#N, base %d"
          % (len(events), real_path.rsplit("/", 1)[-1], len(steps), base))


def main(argv):
    if len(argv) == 3 and argv[1] == "span":
        print("%d %d" % span(events_of(load(argv[2]))))
    elif len(argv) == 3 and argv[1] == "abs-span":
        doc = load(argv[2])
        first, last = span(events_of(doc))
        print("%d %d" % (base_of(doc) + first, base_of(doc) + last))
    elif len(argv) == 6 and argv[1] == "bracket":
        check_bracket(*argv[2:])
    elif len(argv) == 4 and argv[1] == "kineto":
        check_kineto(argv[2], argv[3])
    elif len(argv) == 8 and argv[1] == "steps":
        check_steps(*argv[2:])
    elif len(argv) == 4 and argv[1] == "info":
        check_info(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "merge":
        check_merge(argv[2], argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
