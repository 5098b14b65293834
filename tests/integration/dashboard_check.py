"""Run every PromQL expression of a Grafana dashboard against Prometheus.

usage: dashboard_check.py API_URL DASHBOARD.json

Every panel target and every Prometheus annotation must return data (a
non-empty result), with the dashboard's variables replaced as Grafana
would for "All": $instance by .*, $__rate_interval by 4s (four 1 s
scrapes), $__interval by 1s, $__range by 15s.
"""
import json
import re
import sys
import urllib.parse
import urllib.request

api, path = sys.argv[1], sys.argv[2]
dash = json.load(open(path))
subst = {"instance": ".*", "__rate_interval": "4s", "__interval": "1s", "__range": "15s"}


def expand(expr):
    def one(m):
        name = m.group(1) or m.group(2)
        if name not in subst:
            raise AssertionError("unknown variable $%s in %s" % (name, expr))
        return subst[name]
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", one, expr)


exprs = []
for p in dash["panels"]:
    for t in p.get("targets", []):
        exprs.append(("panel %r" % p["title"], t["expr"]))
for a in dash["annotations"]["list"]:
    if "expr" in a:
        exprs.append(("annotation %r" % a["name"], a["expr"]))
assert len(exprs) >= 10, exprs
bad = []
for where, e in exprs:
    q = expand(e)
    url = "%s/api/v1/query?%s" % (api, urllib.parse.urlencode({"query": q}))
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    n = len(body["data"]["result"]) if body["status"] == "success" else -1
    print("%-45s %3d series  %s" % (where, n, q))
    if n <= 0:
        bad.append((where, q, body.get("error", "no data")))
for b in bad:
    print("NO DATA: %s: %s (%s)" % b)
sys.exit(1 if bad else 0)
