#!/usr/bin/env python3
"""Make a large profiler trace by replicating a real one's events.

usage: mktrace.py SOURCE.json[.gz] OUT.json MEGABYTES

The source's header is written once; its traceEvents are then written again
and again, each copy shifted later by the source's span plus 1 ms, until
OUT holds at least MEGABYTES * 10^6 bytes.  ts keep their exact decimal
text (the shift is added as a decimal, not a double), so the copy's span is
known exactly.  Output is written as it is made: only the source is held
in memory.  Prints the copies, the events per copy (all, and those with a
ts that are not M events) and the ts shift in µs.
"""
import decimal
import gzip
import json
import sys


def load(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=decimal.Decimal)


def as_json(obj):
    # other floats than ts need not be exact: args, dur
    return json.dumps(obj, default=float, ensure_ascii=False)


def templates(events):
    """Each event as (ts or None, its JSON text without ts)."""
    out = []
    for ev in events:
        ev = dict(ev)
        ts = ev.pop("ts", None)
        out.append((ts, as_json(ev)))
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, dst, megabytes = sys.argv[1], sys.argv[2], float(sys.argv[3])
    trace = load(src)
    events = trace.pop("traceEvents")
    stamps = [e["ts"] for e in events if "ts" in e and e.get("ph") != "M"]
    ends = [e["ts"] + decimal.Decimal(e.get("dur", 0))
            for e in events if "ts" in e and e.get("ph") == "X"]
    span = max(stamps + ends) - min(stamps)
    shift = int(span) + 1000
    tmpl = templates(events)
    goal = int(megabytes * 1e6)
    copies = 0
    with open(dst, "w", encoding="utf-8") as out:
        head = as_json(trace)
        out.write(head[:-1] + (", " if trace else "") + '"traceEvents": [\n')
        written = len(head)
        first = True
        while written < goal:
            delta = copies * shift
            parts = []
            for ts, body in tmpl:
                sep = "" if first else ",\n"
                first = False
                if ts is None:
                    parts.append(sep + body)
                elif body == "{}":
                    parts.append('%s{"ts": %s}' % (sep, ts + delta))
                else:
                    parts.append('%s{"ts": %s, %s' % (sep, ts + delta, body[1:]))
            chunk = "".join(parts)
            out.write(chunk)
            written += len(chunk.encode("utf-8"))
            copies += 1
        out.write("\n]}\n")
    timed = len([e for e in events if "ts" in e and e.get("ph") != "M"])
    print("copies %d events/copy %d timed/copy %d shift_us %d"
          % (copies, len(events), timed, shift))


if __name__ == "__main__":
    main()
