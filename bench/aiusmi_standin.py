#!/usr/bin/env python3
"""A stand-in for aiu-smi's cost: at least the work it must do per row.

aiu-smi is a Python program that reads the cards' metric files through the
reference reader and prints a CSV row per card every --delay.  This does
the least of that: every delay it opens each card's new-format file, reads
it whole, walks the header, section table and metric table with struct as
the reference reader does (words read from the file, summarized as the
layout says), and prints one CSV row per card with the decoded values,
unbuffered.  It measures nothing the files lack (busy, pt_act, rsvmem,
the n_* rates; aiu-smi also asks psutil for host figures), so the cost of
the real aiu-smi is at least this.  Used by bench/pipeline.sh only.

    aiusmi_standin.py DELAY FILE...
"""
import struct
import sys
import time

NAMES = {0x01: ("hostcpu", "avg", 1), 0x02: ("hostmem", "avg", 1),
         0x10: ("pwr", "first", 0.1), 0x11: ("tempr", "max", 0.1),
         0x12: ("rdmem", "sum", 1024), 0x13: ("wrmem", "sum", 1024),
         0x14: ("rxpci", "sum", 1024), 0x15: ("txpci", "sum", 1024),
         0x16: ("rdrdma", "sum", 1024), 0x17: ("wrrdma", "sum", 1024),
         0x81: ("avgmem", "avg", 1 << 20), 0x82: ("peakmem", "max", 1 << 20)}
COLS = ["pwr", "tempr", "rdmem", "wrmem", "rxpci", "txpci", "rdrdma",
        "wrrdma", "avgmem", "peakmem", "hostcpu", "hostmem"]


def decode(buf):
    """The values of one file image, by name; None unless new format."""
    if len(buf) < 32 or buf[:4] != b"AiuM":
        return None
    size, _ver, nsec, _last = struct.unpack_from("=I4sIQ", buf, 4)
    out = {}
    off = 32 + 8 * nsec
    for i in range(nsec):
        _sid, ssize = struct.unpack_from("=II", buf, 32 + 8 * i)
        _t, _s, _seq, nent, _lu, _iv, _r = struct.unpack_from("=IIIIQII", buf, off)
        words = off + 32 + 8 * nent
        for e in range(nent):
            mid, nw = struct.unpack_from("=II", buf, off + 32 + 8 * e)
            vals = struct.unpack_from("=%dQ" % nw, buf, words)
            words += 8 * nw
            if mid not in NAMES or nw == 0:
                continue
            name, how, scale = NAMES[mid]
            v = {"first": vals[0], "max": max(vals), "sum": sum(vals),
                 "avg": sum(vals) / nw}[how]
            out[name] = v * scale
        off += ssize
    return out


def main():
    delay = float(sys.argv[1])
    files = sys.argv[2:]
    out = sys.stdout
    out.write("#Date,Time,ID," + ",".join(COLS) + "\n")
    out.flush()
    nxt = time.monotonic()
    while True:
        t = time.localtime()
        day, hms = time.strftime("%Y/%m/%d", t), time.strftime("%H:%M:%S", t)
        for card, path in enumerate(files):
            try:
                with open(path, "rb") as f:
                    vals = decode(f.read())
            except OSError:
                vals = None
            vals = vals or {}
            out.write("%s,%s,%d,%s\n" % (day, hms, card, ",".join(
                "%.1f" % vals[c] if c in vals else "-" for c in COLS)))
            out.flush()
        nxt += delay
        time.sleep(max(0.0, nxt - time.monotonic()))


if __name__ == "__main__":
    main()
