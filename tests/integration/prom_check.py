"""Compare what Prometheus scraped from "spyremon metrics" with the database.

usage: prom_check.py API_URL DB EVAL_TIME_S

- spyre_power_watts: every raw sample Prometheus stored in the last 15 s
  is a row of the database, at the same millisecond, with the same value.
- spyre_energy_joules_total: between its first and last samples, the
  counter grew by the database's energy of the rows stamped in between
  (the sum of pwr times interval), within 1 %.
- increase(spyre_energy_joules_total[10s]) is Prometheus's extrapolation
  (promql/functions.go, extrapolatedRate) of the counter's samples in the
  window, and within 1 % of the same extrapolation of the database's
  energy between the first and last of them.  (The database's energy over
  exactly the 10 s differs more: increase() extrapolates about half a
  scrape interval at each end from the window's average power.)
"""
import json
import sqlite3
import sys
import urllib.parse
import urllib.request

api, dbpath, t_eval = sys.argv[1], sys.argv[2], float(sys.argv[3])


def query(q, t=t_eval):
    url = "%s/api/v1/query?%s" % (api, urllib.parse.urlencode({"query": q, "time": "%.3f" % t}))
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]


db = sqlite3.connect("file:%s?mode=ro" % dbpath, uri=True)
dec = db.execute("SELECT decimals FROM metrics WHERE key = 'pwr'").fetchone()[0]
rows = {}  # device -> sorted [(ts_ns, interval_ms, watts)]
for dev, ts, ival, p in db.execute("SELECT device, ts_ns, interval_ms, pwr FROM samples "
                                   "WHERE pwr IS NOT NULL ORDER BY ts_ns"):
    rows.setdefault(dev, []).append((ts, ival, p / 10 ** dec))
by_ms = {(d, ts // 1000000): w for d, rs in rows.items() for ts, _, w in rs}
exact = {(d, ts // 1000000): ts for d, rs in rows.items() for ts, _, _ in rs}


def stamp_ns(dev, ms):
    """The exact stamp of device's row at millisecond ms (Prometheus keeps ms)."""
    for m in (ms, ms - 1, ms + 1):
        if (dev, m) in exact:
            return exact[(dev, m)]
    raise AssertionError("device %d: no row at %d ms" % (dev, ms))


def db_rows_energy(dev, a_ns, b_ns):
    """Joules of device's rows stamped in (a_ns, b_ns]: pwr times interval."""
    return sum(w * ival / 1e3 for ts, ival, w in rows[dev] if a_ns < ts <= b_ns)


def db_energy(dev, a_ns, b_ns):
    """Joules of device over (a_ns, b_ns]: pwr times each row's overlap."""
    j = 0.0
    for ts, ival, w in rows[dev]:
        lo, hi = max(ts - ival * 1000000, a_ns), min(ts, b_ns)
        if hi > lo:
            j += w * (hi - lo) / 1e9
    return j


# ---- power: the same values for the same stamps ----
power = query("spyre_power_watts[15s]")
assert len(power) == 2, "expected 2 cards, got %d series" % len(power)
checked = 0
for s in power:
    dev = int(s["metric"]["device"])
    assert s["metric"]["type"] == "pf" and s["metric"]["spyre"].startswith("0000:")
    assert len(s["values"]) >= 10, "only %d scrapes stored in 15 s" % len(s["values"])
    for t, v in s["values"]:
        ms = round(float(t) * 1000)
        got = [by_ms.get((dev, m)) for m in (ms, ms - 1, ms + 1)]
        got = [g for g in got if g is not None]
        assert got, "device %d: no row at %d ms" % (dev, ms)
        assert abs(got[0] - float(v)) < 1e-9, (dev, ms, got, v)
        checked += 1
print("power: %d samples of %d series equal to the database's rows" % (checked, len(power)))

# ---- energy: the counter's growth is the database's integral ----
energy = query("spyre_energy_joules_total[15s]")
assert len(energy) == 2
worst = 0.0
for s in energy:
    dev = int(s["metric"]["device"])
    vals = [(round(float(t) * 1000), float(v)) for t, v in s["values"]]
    assert len(vals) >= 10
    for (ta, va), (tb, vb) in zip(vals, vals[1:]):
        assert vb >= va, "counter went back"
    (ta, va), (tb, vb) = vals[0], vals[-1]
    want = db_rows_energy(dev, stamp_ns(dev, ta), stamp_ns(dev, tb))
    err = abs((vb - va) - want) / want
    worst = max(worst, err)
    assert err < 0.01, (dev, vb - va, want)
print("energy: counter growth vs database integral, worst relative error %.2e" % worst)

# ---- increase() over 10 s ----
inc = {int(s["metric"]["device"]): float(s["value"][1])
       for s in query("increase(spyre_energy_joules_total[10s])")}
win = {int(s["metric"]["device"]): [(float(t), float(v)) for t, v in s["values"]]
       for s in query("spyre_energy_joules_total[10s]")}
assert set(inc) == set(win) and len(inc) == 2, (inc, win)
for dev, got in inc.items():
    v = win[dev]
    # Prometheus's extrapolatedRate (promql/functions.go)
    start, end = t_eval - 10, t_eval
    sampled = v[-1][0] - v[0][0]
    delta = v[-1][1] - v[0][1]
    avg = sampled / (len(v) - 1)
    to_start, to_end = v[0][0] - start, end - v[-1][0]
    if delta > 0 and v[0][1] >= 0:
        to_zero = sampled * (v[0][1] / delta)
        to_start = min(to_start, to_zero)
    thr = avg * 1.1
    ext = sampled + (to_start if to_start < thr else avg / 2) + (to_end if to_end < thr else avg / 2)
    model = delta * ext / sampled
    assert abs(got - model) <= 1e-6 * max(1, abs(model)), (dev, got, model)
    db_delta = db_rows_energy(dev, stamp_ns(dev, round(v[0][0] * 1000)),
                         stamp_ns(dev, round(v[-1][0] * 1000)))
    want = db_delta * ext / sampled
    err = abs(got - want) / want
    raw = db_energy(dev, int(start * 1e9), int(end * 1e9))
    print("increase[10s] device %d: %.3f J; from the database %.3f J (%.4f %% apart); "
          "database over exactly the 10 s: %.3f J" % (dev, got, want, 100 * err, raw))
    assert err < 0.01, (dev, got, want)
print("ok")
