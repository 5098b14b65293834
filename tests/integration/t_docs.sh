#!/usr/bin/env bash
# The documentation stays a front door and stays linked: README.md is at
# most 260 lines with no prose paragraph over 8 lines, and still gives the
# two commands (.ci/run runs the test one); every relative link in
# README.md and docs/*.md names a file or folder of the tree, and a
# "#section" on a Markdown file names one of its headings.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)

command -v python3 >/dev/null ||
	{ echo "FAIL: python3 is missing (sh mk/deps.sh installs it)" >&2; exit 1; }

python3 - "$ROOT" <<'EOF'
import glob, os, re, sys

root = sys.argv[1]
failed = []

def fail(msg):
    failed.append(msg)
    print("FAIL: " + msg)

readme = os.path.join(root, "README.md")
lines = open(readme, encoding="utf-8").read().split("\n")
if lines and lines[-1] == "":
    lines.pop()
if len(lines) > 260:
    fail("README.md has %d lines, more than 260: move the detail to docs/" % len(lines))

# Prose paragraphs: runs of lines that are neither blank, nor code (four
# spaces in), nor a table row, nor a heading; a list
# item starts a paragraph of its own.
para, start = 0, 0
in_fence = False
def end_para(n):
    global para
    if para > 8:
        fail("README.md:%d: a paragraph of %d lines, more than 8" % (start, para))
    para = 0
for n, l in enumerate(lines, 1):
    if l.startswith("```"):
        in_fence = not in_fence
        end_para(n)
        continue
    item = re.match(r"(-|\*|[0-9]+\.) ", l) is not None
    code = l.startswith("    ")
    if in_fence or not l.strip() or l.startswith("|") or l.startswith("#") or code:
        end_para(n)
        continue
    if item:
        end_para(n)
    if para == 0:
        start = n
    para += 1
end_para(len(lines) + 1)

text = "\n".join(lines)
for cmd in ("sh mk/deps.sh && make demo", "sh mk/deps.sh && make check"):
    if cmd not in text:
        fail("README.md does not give the command '%s'" % cmd)

def slug(h):
    s = h.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")

def anchors(path):
    out, fence = set(), False
    for l in open(path, encoding="utf-8"):
        if l.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", l):
            out.add(slug(l.lstrip("#")))
    return out

files = [readme] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
if len(files) < 2:
    fail("docs/ has no Markdown file")
nlinks = 0
for f in files:
    rel = os.path.relpath(f, root)
    fence = False
    for n, l in enumerate(open(f, encoding="utf-8"), 1):
        if l.startswith("```"):
            fence = not fence
        if fence or l.startswith("    "):
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", l):
            if re.match(r"[a-z]+:", target):
                continue
            nlinks += 1
            path, _, frag = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            if not full.startswith(root + os.sep) and full != root:
                fail("%s:%d: link %s leaves the tree" % (rel, n, target))
            elif not os.path.exists(full):
                fail("%s:%d: link %s: no such file" % (rel, n, target))
            elif frag and full.endswith(".md") and frag not in anchors(full):
                fail("%s:%d: link %s: %s has no heading #%s"
                     % (rel, n, target, os.path.relpath(full, root), frag))
print("%d files, %d relative links checked; README.md %d lines"
      % (len(files), nlinks, len(lines)))
sys.exit(1 if failed else 0)
EOF
