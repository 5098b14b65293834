#!/usr/bin/env python3
"""ops_check.py TRACE SAMPLES_CSV OPS_CSV OPS_JSON OPS_TABLE STEPS_JSON:
check "spyremon export --trace TRACE --ops" (t_ops.sh) against a
recomputation of its own.

TRACE's device events (cat kernel or gpu_memcpy, card args.device) must
not overlap others of their card, so that an operator's energy is the
integral of each sample's busy power over its calls: that is what is
recomputed here from SAMPLES_CSV (export -m pwr of the same span, with
a margin), each value held over (ts - interval, ts] clipped to the span;
where the card's idle power is learned (idle_W), a sample's idle time
takes the card's floor (floor_W; no more than the sample's value) and
the busy time the rest, at most the ceiling (ceiling_W).
Then: operators plus idle add up to the cards' energy to 1e-9; the cards'
energy is the --steps total's, digit for digit; the json says what the
csv says; the table, rounded, too; host events are no operators; TOPS
and TOPS/W follow from the flops."""
import csv
import json
import math
import re
import sys

trace_path, samples_path, csv_path, json_path, table_path, steps_path = \
    sys.argv[1:7]
REL = 1e-9


def fail(msg):
    sys.exit("ops_check: " + msg)


def close(a, b, rel=REL, what=""):
    if abs(a - b) > rel * max(abs(a), abs(b), 1e-12):
        fail("%s: %r is not %r (to %g)" % (what, a, b, rel))


# ---- the trace ----
doc = json.load(open(trace_path))
base = doc["baseTimeNanoseconds"]
lo_ns, hi_ns = None, None
calls = {}      # name -> [(card, lo, hi, flops)]
for e in doc["traceEvents"]:
    if e.get("ph") == "M" or "ts" not in e:
        continue
    lo = base + round(float(e["ts"]) * 1000)
    hi = lo + round(float(e.get("dur", 0)) * 1000)
    lo_ns = lo if lo_ns is None else min(lo_ns, lo)
    hi_ns = hi if hi_ns is None else max(hi_ns, hi)
    if e.get("cat") in ("kernel", "gpu_memcpy"):
        calls.setdefault(e["name"], []).append(
            (e["args"]["device"], lo, hi, e["args"].get("flops")))

# ---- the samples ----
samples = {}    # card -> [(lo, hi, W)]
with open(samples_path) as f:
    for row in csv.DictReader(f):
        if row["pwr"] == "":
            continue
        ts, ival = int(row["epoch_ns"]), int(row["interval_ms"]) * 1000000
        samples.setdefault(int(row["device"]), []).append(
            (ts - ival, ts, float(row["pwr"])))


def overlap(a0, a1, b0, b1):
    return max(0, min(a1, b1) - max(a0, b0))


def energy(card, lo, hi):
    lo, hi = max(lo, lo_ns), min(hi, hi_ns)
    return sum(p * overlap(s0, s1, lo, hi) for s0, s1, p in
               samples.get(card, ())) / 1e9


card_rows = [r for r in csv.DictReader(open(csv_path))
             if r["section"] == "card"]
idle_w = {int(r["card"]): float(r["floor_W"]) for r in card_rows
          if r["idle_W"] != ""}
ceiling_w = {int(r["card"]): float(r["ceiling_W"]) for r in card_rows}
for r in card_rows:
    # the floor and ceiling: of the samples over the span and one either
    # side, the idle power, 75 W
    c = int(r["card"])
    ss = sorted(samples[c])
    over = [i for i, (a, b, _) in enumerate(ss) if b > lo_ns and a < hi_ns]
    near = [p for _, _, p in ss[max(0, over[0] - 1):over[-1] + 2]]
    low = min(near + ([float(r["idle_W"])] if r["idle_W"] != "" else []))
    close(float(r["floor_W"]), low, REL, "card %d floor_W" % c)
    close(ceiling_w[c], max([75.0] + near), REL, "card %d ceiling_W" % c)


def busy_energy(card, lo, hi):
    """The energy of [lo, hi] of busy time on card: each sample's busy
    power over its overlap"""
    lo, hi = max(lo, lo_ns), min(hi, hi_ns)
    mine = [(l, h) for cs in calls.values() for d, l, h, _ in cs
            if d == card]
    j = 0
    for s0, s1, p in samples.get(card, ()):
        a, b = max(s0, lo_ns), min(s1, hi_ns)
        w = overlap(s0, s1, lo, hi)
        if b <= a or w == 0:
            continue
        busy = sum(overlap(a, b, l, h) for l, h in mine)
        idle = (b - a) - busy
        bp = p
        if card in idle_w and busy > 0 and idle > 0:
            q = min(idle_w[card], p)
            bp = min((p * (b - a) - q * idle) / busy, ceiling_w[card])
        j += bp * w
    return j / 1e9


want = {}
for name, cs in calls.items():
    want[name] = {
        "calls": len(cs),
        "device_ms": sum(h - l for _, l, h, _ in cs) / 1e6,
        "energy_J": sum(busy_energy(c, l, h) for c, l, h, _ in cs),
        "flops": sum(f for *_, f in cs if f is not None)
        if any(f is not None for *_, f in cs) else None,
    }
cards = sorted(samples)
card_j = {c: energy(c, lo_ns, hi_ns) for c in cards}
span_ms = (hi_ns - lo_ns) / 1e6

# ---- the csv ----
rows = list(csv.DictReader(open(csv_path)))
ops = {r["name"]: r for r in rows if r["section"] == "op"}
cats = {r["name"]: r for r in rows if r["section"] == "category"}
crows = {int(r["card"]): r for r in rows if r["section"] == "card"}
if set(ops) != set(want):
    fail("operators %s, not %s" % (sorted(ops), sorted(want)))
for name, w in want.items():
    r = ops[name]
    if int(r["calls"]) != w["calls"]:
        fail("%s: %s calls, not %d" % (name, r["calls"], w["calls"]))
    close(float(r["device_ms"]), w["device_ms"], 1e-12, name + " device_ms")
    close(float(r["energy_J"]), w["energy_J"], REL, name + " energy_J")
    close(float(r["time_pct"]), 100 * w["device_ms"] / (span_ms * len(cards)),
          1e-9, name + " time_pct")
    err = float(r["error_J"])
    if err < 0 or (r["basis"] == "exact") != (err == 0):
        fail("%s: error_J %s with basis %s" % (name, r["error_J"], r["basis"]))
    if w["flops"] is not None:
        close(float(r["flops"]), w["flops"], 1e-12, name + " flops")
        close(float(r["TOPS"]), w["flops"] / (w["device_ms"] * 1e-3) / 1e12,
              1e-9, name + " TOPS")
        close(float(r["TOPS_per_W"]), w["flops"] / float(r["energy_J"]) / 1e12,
              1e-9, name + " TOPS/W")
    elif r["flops"] != "" or r["TOPS"] != "":
        fail("%s: flops without flops args: %s" % (name, r))
if ops["gemm"]["basis"] != "estimate":
    fail("gemm, 3 ms calls in 100 ms samples, is not an estimate")
want_cat = {"gemm": "compute", "long_kernel": "compute",
            "Memcpy HtoD (Host -> Device)": "memory copy",
            "ncclKernel_AllReduce_RING_LL_Sum_float": "communication"}
for name, c in want_cat.items():
    if ops[name]["category"] != c:
        fail("%s is %s, not %s" % (name, ops[name]["category"], c))

# ---- categories, cards and the closure ----
if list(cats) != ["compute", "memory copy", "communication", "other", "idle"]:
    fail("categories: %s" % list(cats))
if set(crows) != set(cards):
    fail("cards %s, not %s" % (sorted(crows), cards))
total = sum(float(r["energy_J"]) for r in crows.values())
for c in cards:
    iv = sorted((l, h) for cs in calls.values() for d, l, h, _ in cs if d == c)
    union, end = 0, None
    for l, h in iv:
        if end is None or l > end:
            union += h - l
            end = h
        elif h > end:
            union += h - end
            end = h
    close(float(crows[c]["device_ms"]), union / 1e6, 1e-12,
          "card %d device_ms" % c)
    close(float(crows[c]["device_span_ms"]),
          (max(h for _, h in iv) - min(l for l, _ in iv)) / 1e6, 1e-12,
          "card %d device_span_ms" % c)
for c in cards:
    close(float(crows[c]["energy_J"]), card_j[c], REL, "card %d energy" % c)
    if float(crows[c]["closure"]) > REL:
        fail("card %d: closure %s" % (c, crows[c]["closure"]))
parts = sum(float(r["energy_J"]) for r in ops.values())
close(parts + float(cats["idle"]["energy_J"]), total, REL,
      "operators + idle against the cards' energy")
close(sum(float(r["energy_J"]) for r in cats.values()), total, REL,
      "the categories against the cards' energy")
close(float(cats["idle"]["energy_J"]), sum(card_j.values()) -
      sum(w["energy_J"] for w in want.values()), 1e-8, "idle")
for name in cats:
    if name != "idle":
        close(float(cats[name]["energy_J"]),
              sum(float(r["energy_J"]) for r in ops.values()
                  if r["category"] == name), 1e-12, "category " + name)

# ---- the steps' totals: the same exact energy ----
raw = json.load(open(steps_path), parse_float=str)
if sorted(t["device"] for t in raw["total"]) != cards:
    fail("--steps has cards %s" % [t["device"] for t in raw["total"]])
for t in raw["total"]:
    if crows[t["device"]]["energy_J"] != t["energy_J"]:
        fail("card %d: %s J, --steps says %s J" % (
            t["device"], crows[t["device"]]["energy_J"], t["energy_J"]))

# ---- the json says what the csv says ----
js = json.load(open(json_path))
if js["trace"] != trace_path:
    fail("json trace %r" % js["trace"])
for key, section in (("ops", "op"), ("categories", "category"),
                     ("cards", "card")):
    by_csv = [r for r in rows if r["section"] == section]
    if len(js[key]) != len(by_csv):
        fail("json %s: %d rows, csv %d" % (key, len(js[key]), len(by_csv)))
    for j, c in zip(js[key], by_csv):
        for k, v in j.items():
            if v is None:
                if c[k] != "":
                    fail("json %s %s null, csv %r" % (key, k, c[k]))
            elif isinstance(v, str):
                if v != c[k]:
                    fail("json %s %s %r, csv %r" % (key, k, v, c[k]))
            elif float(c[k]) != v:
                fail("json %s %s %r, csv %r" % (key, k, v, c[k]))

# ---- the table, rounded ----
text = open(table_path).read()
head = re.compile(r"^OPERATOR +CATEGORY +CALLS +DEVICE +SPAN +ENERGY +SHARE +"
                  r"NET +POWER +ERROR +BASIS +FLOPS +TOPS +TOPS/W$", re.M)
if not head.search(text):
    fail("no operator table header:\n" + text)
if re.search(r" $", text, re.M):
    fail("trailing blanks in the table")


def shown(s, v, what):
    d = len(s.split(".")[1]) if "." in s else 0
    if "e" in s:
        close(float(s), v, 5e-3, what)
    elif abs(float(s) - v) > 0.5 * 10 ** -d + 1e-12:
        fail("%s: the table's %s is not %r" % (what, s, v))


for name, r in ops.items():
    line = [ln for ln in text.splitlines() if ln.startswith(name + " ")]
    if len(line) != 1:
        fail("table: no one row of %s" % name)
    cells = line[0][len(name):].split()
    cat_words = len(r["category"].split())
    calls_s, dev_s, span_s, energy_s = cells[cat_words:cat_words + 4]
    if int(calls_s) != int(r["calls"]):
        fail("table: %s %s calls" % (name, calls_s))
    shown(energy_s, float(r["energy_J"]), "table " + name + " energy")
for c, r in crows.items():
    line = [ln for ln in text.splitlines() if re.match(r"^ +%d +" % c, ln)]
    if len(line) != 1:
        fail("table: no one row of card %d" % c)
    cells = line[0].split()
    shown(cells[7], float(r["energy_J"]), "table card %d energy" % c)
for host in ("cudaLaunchKernel", "aten::mm", "ProfilerStep#0"):
    if host in text:
        fail("table: host event %s as an operator" % host)
print("ops_check: %d operators on %d cards, closure %.1e, %s" % (
    len(ops), len(cards), abs(parts + float(cats["idle"]["energy_J"]) - total)
    / total, ", ".join("%s %.4g J +- %.2g" % (n, float(r["energy_J"]),
                                              float(r["error_J"]))
                       for n, r in sorted(ops.items()))))
