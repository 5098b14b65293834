#!/usr/bin/env python3
"""Derive another rank's trace file from a Kineto trace in the tree.

    derive_rank.py SRC.json.gz RANK SHIFT_US OUT.json.gz
    derive_rank.py --check SRC.json.gz RANK SHIFT_US OUT.json.gz

Holistic Trace Analysis reads a folder as one run, one file per rank, the
rank being the first '"rank": N' in a file.  The trees' traces are all
rank 0 (or carry no rank), so a folder of two ranks needs one file whose
rank differs.  This writes SRC's text with two changes and no other:

- the one '"rank": N' (distributedInfo's) becomes '"rank": RANK';
- every '"ts": T' (T an integer, microseconds) becomes '"ts": T+SHIFT_US'.

SRC must have integer timestamps only: moving a float by a whole number
of microseconds could change how it rounds, so a float is refused.  OUT
is gzip with no name and time 0, so the same input gives the same bytes.
--check derives into memory and compares with OUT's decompressed text
(independent of the zlib that compressed it); exit 1 on a difference.
"""
import gzip
import re
import sys

RANK_RE = re.compile(r'"rank": (\d+)')
TS_RE = re.compile(r'"ts": ?(-?[0-9][0-9.eE+-]*)')


def derive(src, rank, shift):
    with gzip.open(src, "rt", encoding="utf-8") as f:
        text = f.read()
    ranks = RANK_RE.findall(text)
    if len(ranks) != 1:
        sys.exit('%s: %d "rank" members, one expected' % (src, len(ranks)))
    text = RANK_RE.sub('"rank": %d' % rank, text)

    def moved(m):
        tok = m.group(1)
        if not re.fullmatch(r"-?[0-9]+", tok):
            sys.exit("%s: ts %s is not an integer" % (src, tok))
        return '"ts": %d' % (int(tok) + shift)
    text, n = TS_RE.subn(moved, text)
    if n != text.count('"ts"'):
        sys.exit('%s: a "ts" that is not a number' % src)
    return text


def main():
    args = sys.argv[1:]
    check = args[:1] == ["--check"]
    if check:
        args = args[1:]
    if len(args) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    src, rank, shift, out = args[0], int(args[1]), int(args[2]), args[3]
    text = derive(src, rank, shift)
    if check:
        with gzip.open(out, "rt", encoding="utf-8") as f:
            if f.read() != text:
                print("%s: not %s derived as rank %d moved %d us"
                      % (out, src, rank, shift), file=sys.stderr)
                return 1
        print("%s: %s as rank %d, moved %d us" % (out, src, rank, shift))
        return 0
    with open(out, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                           compresslevel=9) as f:
            f.write(text.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
