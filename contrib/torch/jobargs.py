"""The command line shared by the demo's profiled jobs (profile_demo.py,
and fake_trace.py when torch is missing), so that either can stand in for
the other."""

import argparse

import spyremon


def parse_args(description):
    """Parse sys.argv: --tag, --out, --iterations, --socket, --step-seconds."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--tag", default="torch-demo", help="the window's tag")
    p.add_argument("--out", default="trace.json",
                   help="the Chrome trace to write (.json or .json.gz)")
    p.add_argument("--iterations", type=int, default=4,
                   help="active (recorded) iterations, after one wait and "
                   "one warmup iteration")
    p.add_argument("--socket", default=None,
                   help="spyremond's control socket (default: "
                   "$SPYREMON_SOCKET, else %s)" % spyremon.DEFAULT_SOCKET)
    p.add_argument("--step-seconds", type=float, default=0.3,
                   help="about how long each iteration takes")
    a = p.parse_args()
    if a.iterations < 1:
        p.error("--iterations must be at least 1")
    if not 0.01 <= a.step_seconds <= 60:
        p.error("--step-seconds must be within 0.01..60")
    return a
