#!/usr/bin/env python3
"""Medians of bench-runtime's times, and each kind's CPU against its base.

usage: medians.py TIMES KIND[:BASE] ...

TIMES holds lines "KIND WALL_US CPU_US", one per timed run.  For each KIND
given, in that order, it prints the median wall and CPU time (ms) and the
ratio of its median CPU time to BASE's (to its own when no BASE is given).
"""
import statistics
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    t = {}
    for line in open(sys.argv[1]):
        k, wall, cpu = line.split()
        t.setdefault(k, ([], []))
        t[k][0].append(int(wall) / 1000)
        t[k][1].append(int(cpu) / 1000)
    med = {k: (statistics.median(w), statistics.median(c))
           for k, (w, c) in t.items()}
    kinds = [a.split(":") + ([] if ":" in a else [a]) for a in sys.argv[2:]]
    width = max(len(k) for k, _ in kinds)
    print("medians of %d runs, ms:" % len(next(iter(t.values()))[0]))
    print("%-*s %8s %8s %10s" % (width, "kind", "wall", "cpu", "cpu/base"))
    for k, base in kinds:
        print("%-*s %8.1f %8.1f %10.3f" % (width, k, med[k][0], med[k][1],
                                          med[k][1] / med[base][1]))


if __name__ == "__main__":
    main()
