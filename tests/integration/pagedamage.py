#!/usr/bin/env python3
"""Damage pages of a spyremon database's samples table with plain writes.

  pagedamage.py pages DB FROM_NS TO_NS N
      print N leaf pages of the samples table (numbers, from 1) that hold
      rows stamped between FROM_NS and TO_NS, from the middle of that span
  pagedamage.py damage DB PAGE...
      overwrite each page, whole, with garbage at its computed offset
      ((PAGE - 1) * page_size); prints "offset length" per page

The page size is PRAGMA page_size; the table's leaf pages come from dbstat
in key order (its "path"), and since the table is keyed by ts_ns first, the
leaves that hold a span are found by the share of the rows before it.  The
database is read through its own read-only connection, which reads the
main file and the log as SQLite would; the garbage goes into the main file,
so the log must not hold newer copies of those pages (the caller stops the
daemon, or waits for a checkpoint).
"""
import sqlite3
import sys


def connect(path):
    return sqlite3.connect("file:%s?mode=ro" % path, uri=True)


def pages(path, lo, hi, n):
    db = connect(path)
    leaves = [r[0] for r in db.execute(
        "SELECT pageno FROM dbstat WHERE name = 'samples' AND "
        "pagetype = 'leaf' ORDER BY path")]
    total = db.execute("SELECT count(*) FROM samples").fetchone()[0]
    before = db.execute("SELECT count(*) FROM samples WHERE ts_ns < ?",
                        (lo,)).fetchone()[0]
    upto = db.execute("SELECT count(*) FROM samples WHERE ts_ns <= ?",
                      (hi,)).fetchone()[0]
    db.close()
    if not leaves or total == 0:
        sys.exit("no leaf pages in samples")
    first = before * len(leaves) // total + 1      # whole pages of the span
    last = upto * len(leaves) // total - 1
    if last - first + 1 < n + 2:
        sys.exit("the span has %d whole leaf pages, %d wanted"
                 % (last - first + 1, n + 2))
    mid = (first + last - n) // 2
    print(" ".join(str(p) for p in leaves[mid:mid + n]))


def damage(path, nums):
    db = connect(path)
    size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    with open(path, "r+b") as f:
        for p in nums:
            off = (p - 1) * size
            # garbage that is no b-tree page: a bad page type, bad offsets
            junk = bytes((0xA5 ^ (i * 7 + p)) & 0xFF for i in range(size))
            f.seek(off)
            f.write(junk)
            print(off, size)
        f.flush()


def main():
    if len(sys.argv) >= 6 and sys.argv[1] == "pages":
        pages(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
              int(sys.argv[5]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "damage":
        damage(sys.argv[2], [int(a) for a in sys.argv[3:]])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
