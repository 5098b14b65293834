#!/usr/bin/env python3
"""Samples for a trace, and the check of `spyremon export --merge`.

usage: merge_check.py samples INFO.json [--trace-start NS] > LINES
       merge_check.py check IN OUT INFO.json LINES --metrics a,b
           [--trace-start NS] [--unreliable a,b]

"samples" writes lines for tests/tools/mksamples: two cards whose samples
cover the trace's span (from `spyremon trace info --json`) and a little
more on both sides, with metrics pwr, busy, rdmem and rsvmem, one missing
value ("-") each of pwr and busy, one sample whose interval overlaps the
two before it, and a bus ID for card 0 only.

"check" reads the trace IN and the merged trace OUT (plain or gzip, by
their bytes) and fails with a message on the first difference:

- OUT is valid JSON, and its bytes are IN's with one block appended to
  the events array: every byte of IN before the ']' that closes it is
  OUT's, at the same offset, and IN's bytes from there end OUT;
- IN's events are OUT's first events, equal, in order and at the same
  indexes (numbers compared as exact decimals), and the new ones follow;
- the new events are M and C events on pids that no event of IN uses,
  one pid per card, named "Spyre N" (with the bus ID when mapped), and
  sorted after every sort_index of IN; and X events of cat
  spyremon_energy on a process "Spyre N · energy per device event" of
  their own, when IN has device events (checked by t_ops); and with
  --breakdown-track, X events of cat spyremon_breakdown on a process
  "spyremon breakdown" with a named thread per card (checked by
  t_merge_breakdown);
- each C event's track, as Perfetto names it ("<name> <args key>"), is
  one of --metrics with its unit ("pwr (W)"; an --unreliable one marked
  "(MiB, unreliable)"), its ts is an integer where every ts of IN is
  one (trace info's ts_fraction false), else has exactly IN's fraction
  digits (as many as IN's ts have at most, trace info's ts_decimals,
  which is checked against IN's text), and lies within the trace's span; the new M events have a ts,
  the first of IN's, exactly where IN's M events have one; and each
  track's events are the ones the
  samples give, computed here independently: a sample stamped t covering
  d and overlapping the span holds its value from t - d, clipped into the
  span, a later value at the same clipped time replacing an earlier one,
  a missing value writing nothing, and the card's last sample ending at
  min(t, end) with a final event repeating each track's last value.
- with --merge-as hta, the new events are the M events and X slices
  instead (check_slices says what of them).
"""
import argparse
import decimal
import gzip
import json
import re
import sys

D = decimal.Decimal

# the metrics of the samples, and their units
METRICS = {"pwr": "W", "busy": "%", "rdmem": "GiB/s", "rsvmem": "MiB"}
BUS = {0: "0000:13:00.0"}


def fail(msg):
    print("merge_check: " + msg, file=sys.stderr)
    sys.exit(1)


def read_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def parse(data, what):
    try:
        return json.loads(data, parse_float=D)
    except ValueError as e:
        fail("%s is not valid JSON: %s" % (what, e))


def span(info, trace_start):
    """The trace's absolute span, and what to add to own ns."""
    if info["start_ns"] is not None and trace_start is None:
        return info["start_ns"], info["end_ns"], info["base_time_ns"] or 0
    if trace_start is None:
        fail("the trace has no absolute time: give --trace-start")
    return (trace_start + info["first_ts_ns"],
            trace_start + info["last_ts_ns"], trace_start)


def cmd_samples(args):
    info = json.load(open(args.info))
    start, end, _ = span(info, args.trace_start)
    length = end - start
    iv_ms = max(1, length // 15 // 1000000)
    iv = iv_ms * 1000000
    out = ["map %d %s" % (dev, bus) for dev, bus in BUS.items()]
    t = start - 3 * iv + 1234
    k = 0
    while t - iv < end + 3 * iv:
        for dev in (0, 1):
            # card 1 is stamped 37 µs later, as cards of one interval are
            vals = {
                "pwr": "%d.%d" % (100 + k + dev * 50, k % 10),
                "busy": "%d" % ((k * 7 + dev) % 101),
                "rdmem": "%d.%03d" % (k % 5, (k * 37 + dev) % 1000),
                "rsvmem": "%d" % (1024 + k),
            }
            if k == 4 and dev == 0:
                vals["pwr"] = "-"
            if k == 6 and dev == 1:
                vals["busy"] = "-"
            # one sample of card 1 claims three intervals, reaching back
            # over the two before it: its value starts where theirs did
            span_ms = 3 * iv_ms if k == 8 and dev == 1 else iv_ms
            out.append("%d %d %d %s" % (t + dev * 37000, dev, span_ms,
                                        " ".join("%s=%s" % kv
                                                 for kv in vals.items())))
        t += iv
        k += 1
    print("\n".join(out))


def load_lines(path):
    rows = {}
    for line in open(path):
        f = line.split()
        if not f or f[0] in ("map", "window") or f[0].startswith("#"):
            continue
        vals = dict(kv.split("=", 1) for kv in f[3:])
        rows.setdefault(int(f[1]), []).append(
            (int(f[0]), int(f[2]) * 1000000, vals))
    return rows


def expected_tracks(rows, metrics, start, end):
    """{(device, key): [(abs_ns, Decimal)]}, by the rule in the docstring."""
    want = {}
    for dev, samples in rows.items():
        last = None
        final = None
        tracks = {m: [] for m in metrics}
        for t, d, vals in samples:
            if not (t > start and t - d < end):
                continue
            at = min(max(t - d, start), end)
            if last is not None and at < last:
                at = last
            last = at
            final = max(min(t, end), at)
            for m in metrics:
                if vals.get(m, "-") == "-":
                    continue
                ev = tracks[m]
                if ev and ev[-1][0] == at:
                    ev[-1] = (at, D(vals[m]))
                else:
                    ev.append((at, D(vals[m])))
        for m, ev in tracks.items():
            if ev and final > ev[-1][0]:
                ev.append((final, ev[-1][1]))
            if ev:
                want[(dev, m)] = ev
    return want


def decimals_of(a):
    """The most fraction digits of a ts in a's text (3 with an exponent)."""
    most = 0
    for m in re.finditer(rb'"ts"\s*:\s*(-?[0-9.eE+-]+)', a):
        t = m.group(1)
        n = 3 if (b"e" in t or b"E" in t) else (
            len(t) - t.index(b".") - 1 if b"." in t else 0)
        most = max(most, n)
    return most


def events_of(doc):
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def events_close(a):
    """The byte offset of the ']' closing a's events array (a parses)."""
    u = a.decode()
    dec = json.JSONDecoder()
    if isinstance(dec.decode(u), list):
        end = len(u.rstrip())
    else:
        i = u.index("[", u.index('"traceEvents"'))
        _, end = dec.raw_decode(u, i)
    return len(u[:end].encode()) - 1


def check_bytes(a, b):
    """b is a with one block appended to its events array: every byte of a
    before the array's ']' is b's first bytes, the rest b's last."""
    extra = len(b) - len(a)
    if extra < 0:
        fail("OUT is shorter than IN")
    close = events_close(a)
    if b[:close] != a[:close]:
        p = next(i for i in range(close) if a[i] != b[i])
        fail("OUT changes IN's bytes before the end of its events: from "
             "byte %d on" % p)
    if b[close + extra:] != a[close:]:
        fail("OUT does not end as IN does after its events array")


def cmd_check(args):
    info = json.load(open(args.info))
    start, end, add = span(info, args.trace_start)
    metrics = [m for m in args.metrics.split(",") if m]
    unreliable = set(m for m in args.unreliable.split(",") if m)
    a, b = read_bytes(args.input), read_bytes(args.output)
    check_bytes(a, b)
    doc_in, doc_out = parse(a, "IN"), parse(b, "OUT")
    ev_in, ev_out = events_of(doc_in), events_of(doc_out)
    if isinstance(doc_out, dict):
        head_in = {k: v for k, v in doc_in.items() if k != "traceEvents"}
        head_out = {k: v for k, v in doc_out.items() if k != "traceEvents"}
        if head_in != head_out:
            fail("the header differs")
    k = len(ev_out) - len(ev_in)
    if k <= 0:
        fail("no events were added")
    for i, (x, y) in enumerate(zip(ev_in, ev_out)):
        if x != y:
            fail("original event %d differs: %r against %r" % (i, x, y))
    new = ev_out[len(ev_in):]
    integer = not info["ts_fraction"]
    decimals = min(max(info.get("ts_decimals") or 3, 1), 9)
    want_dec = max(decimals_of(a), 1)
    if not integer and decimals != want_dec:
        fail("trace info's ts_decimals %d, IN's most %d" % (decimals,
                                                            want_dec))
    timed_m = [e for e in ev_in if isinstance(e, dict) and
               e.get("ph") == "M" and "ts" in e]
    first_ts = None
    if info.get("first_ts_ns") is not None:
        first_ts = (D(info["first_ts_ns"]) / 1000).quantize(
            D(1).scaleb(-decimals), rounding=decimal.ROUND_HALF_UP)
        if integer:
            first_ts = D(int((info["first_ts_ns"] + 500) // 1000))
    for e in new:
        if e.get("ph") != "M":
            continue
        if timed_m and e.get("ts") != first_ts:
            fail("new M event %r: ts %r, not the trace's first %s"
                 % (e.get("name"), e.get("ts"), first_ts))
        if not timed_m and "ts" in e:
            fail("new M event %r has a ts where IN's have none" % e.get("name"))

    old_pids = set(e.get("pid") for e in ev_in if isinstance(e, dict))
    old_sort = [e["args"]["sort_index"] for e in ev_in
                if isinstance(e, dict) and e.get("ph") == "M" and
                e.get("name") == "process_sort_index"]
    names, sorts, threads = {}, {}, set()
    for e in new:
        if e.get("ph") != "M":
            continue
        if e["name"] in ("thread_name", "thread_sort_index"):
            threads.add(e.get("pid"))   # the breakdown's, checked below
            continue
        pid = e.get("pid")
        if not isinstance(pid, int) or isinstance(pid, bool):
            fail("new M event with pid %r" % (pid,))
        table = names if e["name"] == "process_name" else sorts
        if e["name"] not in ("process_name", "process_sort_index"):
            fail("unexpected M event %r" % e)
        if pid in table:
            fail("two %s events for pid %d" % (e["name"], pid))
        table[pid] = e["args"]["name" if table is names else "sort_index"]
    if set(names) != set(sorts):
        fail("process_name pids %s, process_sort_index pids %s"
             % (sorted(names), sorted(sorts)))
    if set(names) & old_pids:
        fail("new pids %s are used by the trace"
             % sorted(set(names) & old_pids))
    for pid, idx in sorts.items():
        if old_sort and idx <= max(old_sort):
            fail("pid %d sorts at %d, not after the trace's %d"
                 % (pid, idx, max(old_sort)))
    cards, energy, breakdown = {}, set(), set()
    for pid, name in names.items():
        if " \u00b7 energy per device event" in name:
            energy.add(pid)     # merge_ops.h: checked in t_ops
            continue
        if name.split(" \u00b7 ")[0] == "spyremon breakdown":
            breakdown.add(pid)  # merge_bd.h: checked in t_merge_breakdown
            continue
        f = name.split(" ")
        if len(f) < 2 or f[0] != "Spyre" or not f[1].isdigit():
            fail("process name %r" % name)
        dev = int(f[1])
        want = "Spyre %d" % dev + (" \u00b7 " + BUS[dev] if dev in BUS else "")
        if name != want:
            fail("process name %r, want %r" % (name, want))
        cards[pid] = dev

    if threads - breakdown:
        fail("thread names on pids %s, not the breakdown's"
             % sorted(threads - breakdown))
    labels = {}
    for m in metrics:
        unit = METRICS[m]
        labels["%s (%s%s)" % (m, unit, ", unreliable" if m in unreliable
                              else "")] = m
    if args.merge_as == "hta":
        check_slices(new, cards, labels, integer, decimals, start, end,
                     add, ev_in, args)
        print("ok: %d cards, %d slices, %d new events, %d original"
              % (len(cards), len(new) - 2 * len(cards), k, len(ev_in)))
        return
    got = {}
    for e in new:
        if e.get("ph") == "M":
            continue
        if e.get("ph") == "X" and e.get("pid") in energy and \
                e.get("cat") == "spyremon_energy":
            continue
        if e.get("ph") == "X" and e.get("pid") in breakdown and \
                e.get("cat") == "spyremon_breakdown":
            continue
        if e.get("ph") != "C":
            fail("new event of phase %r" % e.get("ph"))
        if e.get("pid") not in cards:
            fail("C event on pid %r, which has no process name" % e.get("pid"))
        if len(e.get("args", {})) != 1:
            fail("C event with args %r: want one member" % e.get("args"))
        (key, value), = e["args"].items()
        label = "%s %s" % (e["name"], key)
        if label not in labels:
            fail("track %r is not one of %s" % (label, sorted(labels)))
        ts = e["ts"]
        if integer and (not isinstance(ts, int) or isinstance(ts, bool)):
            fail("ts %r is not whole µs, as every ts of IN is" % (ts,))
        if not integer and (not isinstance(ts, D) or
                            ts.as_tuple().exponent != -decimals):
            fail("ts %r is not µs with %d fraction digits, as IN's"
                 % (ts, decimals))
        ns = int(ts * 1000) + add
        if not start <= ns <= end:
            fail("ts %s (%d ns) is outside the span %d..%d"
                 % (ts, ns, start, end))
        got.setdefault((cards[e["pid"]], labels[label]), []).append(
            (ns, D(value)))
    for track, ev in got.items():
        if any(a[0] >= b[0] for a, b in zip(ev, ev[1:])):
            fail("track %s: times do not increase" % (track,))
    want = expected_tracks(load_lines(args.lines), metrics, start, end)
    if integer or decimals < 3:
        # the trace's own time to its decimals, the nearest, a half up
        u = 10 ** (3 - (0 if integer else decimals))
        want = {tr: [((ns - add + u // 2) // u * u + add, v)
                     for ns, v in ev] for tr, ev in want.items()}
    if set(got) != set(want):
        fail("tracks %s, want %s" % (sorted(got), sorted(want)))
    for track, ev in want.items():
        if got[track] != ev:
            fail("track %s: %s, want %s" % (track, got[track][:8], ev[:8]))
    if args.summary:
        check_summary(args.summary, args.output, k, len(cards), len(got))
    print("ok: %d cards, %d tracks, %d new events, %d original"
          % (len(cards), len(got), k, len(ev_in)))


def check_time(x, what, integer, decimals):
    if integer and (not isinstance(x, int) or isinstance(x, bool)):
        fail("%s %r is not whole µs, as every ts of IN is" % (what, x))
    if not integer and (not isinstance(x, D) or
                        x.as_tuple().exponent != -decimals):
        fail("%s %r is not µs with %d fraction digits, as IN's"
             % (what, x, decimals))


def check_slices(new, cards, labels, integer, decimals, start, end, add,
                 ev_in, args):
    """--merge-as hta: X slices of cat spyre_sample_runtime, one thread
    per card, that never overlap, lie within the span and start no
    earlier than IN's first slice an analyzer keeps; args are the
    card's metrics under their labels; every sample of the row source
    whose interval meets the span gives one."""
    first_slice = min((e["ts"] for e in ev_in if isinstance(e, dict) and
                       e.get("ph") == "X" and "dur" in e and
                       e.get("cat") not in (None, "Trace",
                                            "python_function")),
                      default=None)
    last = {}
    n = 0
    for e in new:
        if e.get("ph") == "M":
            continue
        if e.get("ph") != "X" or e.get("cat") != "spyre_sample_runtime":
            fail("new event %r: want X of cat spyre_sample_runtime" % e)
        if e.get("pid") not in cards or e.get("tid") != e["pid"]:
            fail("slice on pid %r tid %r" % (e.get("pid"), e.get("tid")))
        if e["name"] != "Spyre %d sample" % cards[e["pid"]]:
            fail("slice name %r" % e["name"])
        check_time(e["ts"], "ts", integer, decimals)
        check_time(e["dur"], "dur", integer, decimals)
        if e["dur"] <= 0:
            fail("slice of dur %s" % e["dur"])
        if first_slice is not None and e["ts"] < first_slice:
            fail("slice at %s before IN's first slice at %s"
                 % (e["ts"], first_slice))
        a = int(e["ts"] * 1000) + add
        b = int((e["ts"] + e["dur"]) * 1000) + add
        slack = 0 if not integer and decimals >= 3 else 500
        if a < start - slack or b > end + slack:
            fail("slice %d..%d outside the span %d..%d" % (a, b, start, end))
        if e["pid"] in last and a < last[e["pid"]]:
            fail("slices of pid %d overlap at %d" % (e["pid"], a))
        last[e["pid"]] = b
        bad = [k for k in e["args"] if k not in labels]
        if bad or not e["args"]:
            fail("slice args %r: keys not among %s" % (e["args"],
                                                        sorted(labels)))
        n += 1
    if n == 0:
        fail("no slice written")
    if args.summary:
        lines = [l for l in open(args.summary) if "slices of cat" in l]
        want = "%d slices of cat spyre_sample_runtime" % n
        if len(lines) != 1 or want not in lines[0]:
            fail("summary %r does not say %r" % (lines, want))


def check_summary(path, out, events, cards, tracks):
    """export's line on stderr says what was added, as counted here."""
    # on a terminal the line follows the progress line's \r
    lines = [l.rstrip("\r\n").split("\r")[-1] for l in open(path)
             if " events after the trace's own" in l]
    if len(lines) != 1:
        fail("%s: not one summary line: %r" % (path, open(path).read()))
    want = "%s: added %d events after the trace's own: %d card%s, %d counter tracks, " % (
        out, events, cards, "" if cards == 1 else "s", tracks)
    if not lines[0].startswith(want):
        fail("summary %r does not start %r" % (lines[0], want))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("samples")
    s.add_argument("info")
    s.add_argument("--trace-start", type=int)
    c = sub.add_parser("check")
    for name in ("input", "output", "info", "lines"):
        c.add_argument(name)
    c.add_argument("--metrics", required=True)
    c.add_argument("--unreliable", default="")
    c.add_argument("--trace-start", type=int)
    c.add_argument("--summary", help="export's stderr, whose line must agree")
    c.add_argument("--merge-as", default="counters",
                   choices=("counters", "hta"))
    args = ap.parse_args()
    if args.cmd == "samples":
        cmd_samples(args)
    else:
        cmd_check(args)


if __name__ == "__main__":
    main()
