#!/usr/bin/env python3
"""The write-ahead log of a spyremon database, for t_walcheck.sh.

  walcheck_tool.py frames WAL             whole frames in the log
  walcheck_tool.py damage WAL header      garbage over the header's salts
  walcheck_tool.py damage WAL frame N     garbage over frame N's page
  walcheck_tool.py restore WAL FROM       the bytes damage changed, back
                                          from FROM (the log before it)
  walcheck_tool.py count DB [--upto N]    rows and windows SQLite recovers
                                          from a copy of DB and its log,
                                          cut before frame N if given
                                          (JSON: rows, windows, newest_ns)

Offsets follow SQLite's WAL format: a 32-byte header (page size at byte
8, salts at 16), then frames of a 24-byte header and one page.  Reading
is always done on copies: SQLite writes to the log of what it opens.
"""
import json
import os
import shutil
import sqlite3
import struct
import sys
import tempfile

HEADER, FRAME_HEADER = 32, 24
GARBAGE = bytes((0x5A ^ i) & 0xFF for i in range(64))


def page_size(wal):
    with open(wal, "rb") as f:
        return struct.unpack(">I", f.read(HEADER)[8:12])[0]


def frames(wal):
    return (os.path.getsize(wal) - HEADER) // (FRAME_HEADER + page_size(wal))


def where(wal, what, n):
    """Offset and length of what damage overwrites."""
    if what == "header":
        return 16, 8
    return HEADER + (n - 1) * (FRAME_HEADER + page_size(wal)) + \
        FRAME_HEADER + 64, 64


def damage(wal, what, n):
    off, ln = where(wal, what, n)
    with open(wal, "r+b") as f:
        f.seek(off)
        old = f.read(ln)
        new = bytes(a ^ b ^ 0xFF for a, b in zip(old, GARBAGE[:ln]))
        f.seek(off)
        f.write(new)


def count(db, upto):
    d = tempfile.mkdtemp()
    try:
        copy = os.path.join(d, "c.db")
        shutil.copyfile(db, copy)
        if os.path.exists(db + "-wal"):
            shutil.copyfile(db + "-wal", copy + "-wal")
            if upto is not None:
                ps = page_size(copy + "-wal")
                os.truncate(copy + "-wal",
                            HEADER + (upto - 1) * (FRAME_HEADER + ps))
        c = sqlite3.connect(copy)
        try:
            rows, newest = c.execute(
                "SELECT count(*), max(ts_ns) FROM samples").fetchone()
            wins = c.execute("SELECT count(*) FROM windows").fetchone()[0]
        except sqlite3.DatabaseError:
            rows, newest, wins = 0, None, 0
        c.close()
        return {"rows": rows, "windows": wins, "newest_ns": newest or 0}
    finally:
        shutil.rmtree(d)


def main(a):
    if a[0] == "frames":
        print(frames(a[1]))
    elif a[0] == "damage":
        damage(a[1], a[2], int(a[3]) if len(a) > 3 else 0)
    elif a[0] == "restore":
        wal, src = a[1], a[2]
        what = a[3]
        n = int(a[4]) if len(a) > 4 else 0
        off, ln = where(src, what, n)
        with open(src, "rb") as f:
            f.seek(off)
            good = f.read(ln)
        with open(wal, "r+b") as f:
            f.seek(off)
            f.write(good)
    elif a[0] == "count":
        upto = int(a[3]) if len(a) > 3 and a[2] == "--upto" else None
        print(json.dumps(count(a[1], upto)))
    else:
        sys.exit("unknown command " + a[0])


if __name__ == "__main__":
    main(sys.argv[1:])
