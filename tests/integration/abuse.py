#!/usr/bin/env python3
"""Abuses spyremond's control socket while it samples.

usage: abuse.py SOCKET OUT

At once: 200 clients, all connected before any asks, each asking hello,
then status and hello again and again for 3 s (retrying when the daemon
answers "busy", so that each gets its turn); a client that connects and
sends nothing, which must be closed after about PROTO_IDLE_TIMEOUT_MS;
1 MiB of garbage without a newline, and 1 MiB of random bytes; a request
cut off halfway and the connection closed.  Then: 64 idle connections
and one more, which must get "busy" and be closed.  Finally status must
still be answered.  Writes "start_ns end_ns" of the abuse to OUT and
prints figures.  Exits 0 when every check passed, 1 at the first failure.
"""
import os
import random
import socket
import sys
import threading
import time

from ctlclient import Conn, Closed

CLIENTS = 200
FLOOD_SECONDS = 3.0     # clients repeat status and hello this long
MAX_CLIENTS = 64
IDLE_TIMEOUT = 5.0


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)
    print("ok:", what, flush=True)


flood_end = [0.0]


def one_client(path, results, i, start):
    """hello then status, again after a pause while the daemon is busy.
    The first attempts of all clients connect, then ask at once."""
    deadline = time.monotonic() + 60
    busy = 0
    while time.monotonic() < deadline:
        t0 = time.monotonic()
        try:
            try:
                c = Conn(path, timeout=30)
            except BlockingIOError:
                # the listen backlog is full: as good as busy
                busy += 1
                time.sleep(0.02 + random.random() * 0.05)
                continue
            if start is not None:
                start.wait()
                start = None
            try:
                c.send({"v": 1, "cmd": "hello"})
            except (BrokenPipeError, ConnectionResetError):
                pass    # refused at once as busy: the reply is waiting
            hello = c.reply()
            if hello.get("error") == "busy":
                busy += 1
                c.close()
                time.sleep(0.02 + random.random() * 0.05)
                continue
            ok = hello.get("ok") is True
            rounds = 0
            while ok and (rounds < 1 or time.monotonic() < flood_end[0]):
                ok = c.ask({"v": 1, "cmd": "status"}).get("ok") is True
                ok = ok and c.ask({"v": 1, "cmd": "hello"}).get("ok") is True
                rounds += 1
            c.close()
            results[i] = (ok, busy, 1 + 2 * rounds, None)
            return
        except (Closed, OSError) as e:
            results[i] = (False, busy, 0, repr(e))
            return
    results[i] = (False, busy, 0, "still busy after 60 s")


def silent_client(path, out):
    c = Conn(path, timeout=30)
    t0 = time.monotonic()
    closed = c.closed(timeout=IDLE_TIMEOUT + 5)
    out["silent"] = (closed, time.monotonic() - t0, c.buf)
    c.close()


def garbage_client(path, out, key, data):
    """Send data; the daemon must answer bad_request and close."""
    c = Conn(path, timeout=30)
    sent = 0
    try:
        while sent < len(data):
            sent += c.sock.send(data[sent:sent + 65536])
    except OSError:
        pass    # the daemon closed while we were still sending: expected
    try:
        reply = c.reply()
    except (Closed, OSError) as e:
        reply = {"closed before a reply": repr(e)}
    out[key] = (reply, c.closed(timeout=5), sent)
    c.close()


def cut_client(path, out):
    c = Conn(path)
    c.send(b'{"v":1,"cmd":"be')
    c.close()
    out["cut"] = True


def concurrent_phase(path):
    results = [None] * CLIENTS
    out = {}
    rnd = random.Random(7)
    junk = bytes(rnd.getrandbits(8) for _ in range(1 << 20))
    start = threading.Barrier(CLIENTS)
    # these first, so that they are not the ones refused as busy
    threads = [
        threading.Thread(target=silent_client, args=(path, out)),
        threading.Thread(target=garbage_client,
                         args=(path, out, "nonewline", b"A" * (1 << 20))),
        threading.Thread(target=garbage_client,
                         args=(path, out, "random", junk)),
        threading.Thread(target=cut_client, args=(path, out)),
    ]
    for t in threads:
        t.start()
    time.sleep(0.3)
    flood = [threading.Thread(target=one_client,
                              args=(path, results, i, start))
             for i in range(CLIENTS)]
    t0 = time.monotonic()
    flood_end[0] = t0 + FLOOD_SECONDS
    for t in flood:
        t.start()
    for t in flood:
        t.join()
    elapsed = time.monotonic() - t0
    for t in threads:
        t.join()

    failed = [r for r in results if not r[0]]
    check(not failed, "%d clients all got hello and status (failures: %s)"
          % (CLIENTS, failed[:3]))
    print("figures: %d clients for %.2f s, %d requests answered (%.0f/s); "
          "%d busy answers, retried"
          % (CLIENTS, elapsed, sum(r[2] for r in results),
             sum(r[2] for r in results) / elapsed,
             sum(r[1] for r in results)), flush=True)

    closed, waited, data = out["silent"]
    check(closed and IDLE_TIMEOUT - 0.5 <= waited <= IDLE_TIMEOUT + 2.5,
          "a silent client was closed after %.2f s" % waited)
    check(data == b"", "the silent client was sent nothing (%r)" % data[:80])
    for key in ("nonewline", "random"):
        reply, closed, sent = out[key]
        check(reply.get("ok") is False and reply.get("error") == "bad_request",
              "1 MiB of %s garbage answered bad_request: %s" % (key, reply))
        check(closed, "the %s garbage connection was closed (%d bytes "
              "sent before)" % (key, sent))
    check(out.get("cut"), "a request cut off halfway")


def busy_phase(path):
    conns = []
    for _ in range(MAX_CLIENTS):
        c = Conn(path)
        # answered, so certainly accepted and counted
        check_ok = c.ask({"v": 1, "cmd": "hello"}).get("ok") is True
        if not check_ok:
            raise Failed("idle connection %d refused" % len(conns))
        conns.append(c)
    print("ok: %d connections open and idle" % len(conns), flush=True)
    extra = Conn(path)
    try:
        r = extra.reply()
    except Closed as e:
        raise Failed("the %dth client got no reply: %s" % (MAX_CLIENTS + 1, e))
    check(r.get("ok") is False and r.get("error") == "busy",
          "the %dth client is answered busy: %s" % (MAX_CLIENTS + 1, r))
    check(extra.closed(), "and closed")
    extra.close()
    for c in conns:
        c.close()


def main():
    path, outfile = sys.argv[1], sys.argv[2]
    start = time.time_ns()
    try:
        concurrent_phase(path)
        # the idle client's slot and the others are freed by now
        time.sleep(0.5)
        busy_phase(path)
        time.sleep(0.5)
        c = Conn(path)
        t0 = time.monotonic()
        r = c.ask({"v": 1, "cmd": "status"})
        check(r.get("ok") is True, "status answered after the abuse, in "
              "%.1f ms" % ((time.monotonic() - t0) * 1e3))
        c.close()
    except Failed as e:
        print("FAIL:", e, flush=True)
        return 1
    finally:
        with open(outfile, "w") as f:
            f.write("%d %d\n" % (start, time.time_ns()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
