#!/usr/bin/env python3
"""Check the tables that export --steps, summary and windows write for a
person, run under a pseudo-terminal, and that what they write elsewhere is
what it was.

    tables_check.py OUTDIR CLIENT ARG...

Runs CLIENT ARG... (the global options, such as --db) with each command
under a pseudo-terminal 120 columns wide and checks its table: every row
has each column where the header has it (a left-aligned column starts,
a right-aligned one ends, where its name does; a last column of text
wraps onto lines of its own, starting where it does), the line under
the names holds the units, no number has more digits after the point than
the column allows, no line is wider than 120 columns.  Then that an
explicit --csv or --json on a terminal writes exactly what it writes to
a pipe, and that a pipe and --output FILE get the same bytes as before:
OUTDIR/plain-CMD.txt (the bytes of before) for summary and windows,
--csv for export --steps.
"""
import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios

WIDTH = 120
out_dir, client, glob = sys.argv[1], sys.argv[2], sys.argv[3:]


def on_tty(args):
    """stdout of CLIENT args on a pty WIDTH columns wide (stderr apart)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, WIDTH, 0, 0))
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    p = subprocess.Popen([client] + glob + args, stdin=subprocess.DEVNULL,
                         stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:         # EIO once the child has closed it
            break
        if not chunk:
            break
        out += chunk
    p.wait()
    os.close(master)
    assert p.returncode == 0, (args, p.returncode, p.stderr.read())
    return out.replace(b"\r\n", b"\n").decode()


def piped(args):
    env = dict(os.environ, COLUMNS=str(WIDTH))    # for --table alone
    r = subprocess.run([client] + glob + args, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, check=True, env=env)
    return r.stdout


def to_file(args, name):
    path = os.path.join(out_dir, name)
    subprocess.run([client] + glob + args + ["--output", path],
                   stderr=subprocess.DEVNULL, check=True)
    return open(path, "rb").read()


NUM = re.compile(r"^-?[0-9]+(\.([0-9]+))?$")


def check_table(text, first, nrows, units, decimals, last_free):
    """The table of nrows rows whose header line begins with first:
    aligned columns, the units beneath, at most decimals[name] digits
    after the point."""
    lines = text.split("\n")
    h = next(i for i, l in enumerate(lines) if l.startswith(first))
    head, unit_line = lines[h], lines[h + 1]
    cols = [(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", head)]
    last_start = cols[-1][1]
    # nrows rows, and the lines a last column of text wraps onto (blank
    # before it, its text starting where it does)
    rows, wrapped, i = [], 0, h + 2
    while i < len(lines) and lines[i].strip():
        l = lines[i]
        if last_free and rows and l[:last_start].strip() == "":
            assert l[last_start] != " ", ("a wrapped line out of its column", l)
            wrapped += 1
        elif len(rows) < nrows:
            rows.append(l)
        else:
            break
        i += 1
    assert len(rows) == nrows, (nrows, text)
    names = [c[0] for c in cols]
    # each unit sits under its column, ending where the name ends
    got_units = {}
    for m in re.finditer(r"\S+", unit_line):
        col = [c for c in cols if c[2] == m.end()]
        assert col, ("a unit under no column's end", m.group(), unit_line)
        got_units[col[0][0]] = m.group()
    assert got_units == units, ("units", got_units, units)
    for l in lines[h:i]:
        assert len(l) <= WIDTH, ("wider than %d columns" % WIDTH, l)
        assert l == l.rstrip(), ("blanks at the end", l)
    for r in rows:
        # the columns but the last (free text, maybe with blanks)
        body = r[:last_start] if last_free else r
        cells = [(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", body)]
        ncols = len(cols) - 1 if last_free else len(cols)
        assert len(cells) == ncols, ("cells", len(cells), ncols, r)
        for (name, hs, he), (v, cs, ce) in zip(cols, cells):
            assert cs == hs or ce == he, ("not in its column", name, v, r)
            m = NUM.match(v)
            if m and name in decimals:
                d = len(m.group(2) or "")
                assert d <= decimals[name], ("too many decimals", name, v, r)
        if last_free and len(r) > last_start - 2:   # empty: nothing after
            assert r[last_start - 2:last_start] == "  " and r[last_start] != " ", \
                ("the last column does not start where its name does", r)
    return names, rows, wrapped


steps = ["export", "--trace", os.path.join(out_dir, "trace.json"), "--steps"]
summary = ["summary", "--window", "run"]
windows = ["windows"]

# ---- the tables, on a terminal ----
t = on_tty(steps)
names, rows, _ = check_table(t, "STEP", 10, {
    "DUR": "ms", "POWER": "W", "MAX": "W", "ENERGY": "J", "BUSY": "%",
    "RDMEM": "GiB/s", "WRMEM": "GiB/s", "RXPCI": "GiB/s", "TXPCI": "GiB/s"},
    {"DUR": 1, "POWER": 1, "MAX": 1, "ENERGY": 3, "BUSY": 1, "RDMEM": 2,
     "WRMEM": 2, "RXPCI": 2, "TXPCI": 2}, True)
assert len(rows) == 4 * 2 + 2, rows      # 4 steps and the total, 2 cards
print("export --steps: %d rows of %d aligned columns with units" % (len(rows), len(names)))

t = on_tty(summary)
names, rows, _ = check_table(t, "CARD", 2, {
    "COVER": "%", "ENERGY": "J", "NET": "J", "IDLE": "W", "POWER": "W",
    "MIN": "W", "MAX": "W", "P95": "W", "GTEMP": "C", "BUSY": "%",
    "ACTMEM": "MiB"},
    {"COVER": 1, "ENERGY": 3, "NET": 3, "IDLE": 1, "POWER": 1, "MIN": 1,
     "MAX": 1, "P95": 1, "GTEMP": 1, "BUSY": 1, "ACTMEM": 0}, False)
assert len(rows) == 2, rows
bw_names, bw, _ = check_table(t, "BANDWIDTH", 8, {
    "MEAN": "GiB/s", "MAX": "GiB/s", "MOVED": "GiB"},
    {"MEAN": 2, "MAX": 2, "MOVED": 2}, False)
assert len(bw) == 8, bw
print("summary: %d cards and %d bandwidths in aligned columns with units" % (len(rows), len(bw)))

t = on_tty(windows)
names, rows, wrapped = check_table(t, "ID", 1, {"ENERGY": "J"}, {"ENERGY": 3}, True)
assert wrapped > 0, ("META is not wrapped to fit", t)
print("windows: aligned, META wrapped onto %d more lines at %d columns" % (wrapped, WIDTH))

# ---- elsewhere: the bytes of before, and what is asked for goes there ----
for name, args, fmts in (("steps", steps, ["--csv", "--json"]),
                         ("summary", summary, ["--csv", "--json"]),
                         ("windows", windows, ["--csv", "--json"])):
    default = piped(args)
    if name == "steps":
        assert default == piped(args + ["--csv"]), "steps on a pipe are not its csv"
    else:
        want = open(os.path.join(out_dir, "plain-%s.txt" % name), "rb").read()
        assert default == want, ("%s on a pipe is not what it was" % name,
                                 default.decode(), want.decode())
    assert to_file(args, name + ".out") == default, name + ": --output differs from a pipe"
    for f in fmts:
        p = piped(args + [f])
        assert on_tty(args + [f]).encode() == p, (name, f, "differs on a terminal")
        assert to_file(args + [f], name + f + ".out") == p, (name, f, "--output differs")
    tbl = piped(args + ["--table"])
    assert tbl.decode() == on_tty(args), (name, "--table on a pipe is not the terminal's table")
    print("%s: a pipe gets the bytes of before; --csv, --json, --table and --output as asked" % name)
