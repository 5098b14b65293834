#!/usr/bin/env python3
"""A stand-in for dynolog's part in on-demand tracing, for the tests of
spyremon capture: it holds Kineto's daemon socket and takes trace requests
on TCP, as dynolog does (facebookincubator/dynolog: IPCMonitor.cpp,
LibkinetoConfigManager.cpp, rpc/SimpleJsonServer*.cpp, the dyno CLI's
gputrace.rs), read from its public sources.

- The socket: "\\0dynolog\\0" (abstract, the trailing NUL counted), or
  DIR/dynolog with KINETO_IPC_SOCKET_DIR (or --socket-dir) set.  A "req"
  poll (struct { int type; int n; int64_t jobid; int32_t pids[n]; })
  registers the process under its job id and pid set, and is answered
  with a "req" datagram: the activity config waiting for that process
  when type has bit 2, else nothing (size 0).  A "ctxt" registration is
  answered with the number of processes registered for its job and gpu.
- TCP (--port, 0 for any; it prints "port N"): a message is a native
  int32 length and JSON, the answer likewise.  setKinetOnDemandRequest
  with "config", "pids", "job_id" (default 0) and "process_limit"
  (default 1000) gives the config to each registered process of the job
  whose pid set holds one of "pids", up to the limit, unless one waits
  for it already (busy); each gets its own REQUEST_TRACE_ID appended, and
  the answer lists processesMatched (their leaf pids),
  activityProfilersTriggered, activityProfilersBusy and the event fields.
- --answer-for PID: an endpoint that is not the job's dynolog (or lies):
  every request is answered as if process PID alone had matched and been
  triggered, whatever polls.
"""

import argparse
import json
import os
import socket
import struct
import sys
import threading
import time

HEADER = struct.Struct("=Q32s")
REQ = struct.Struct("=iiq")
CTXT = struct.Struct("=iiq")


class Registry:
    def __init__(self):
        self.lock = threading.Lock()
        self.jobs = {}          # job id (str) -> {frozenset(pids): process}
        self.gpus = {}          # (job, gpu) -> set(pids)

    def poll(self, jobid, pids, typ):
        with self.lock:
            procs = self.jobs.setdefault(str(jobid), {})
            key = frozenset(pids)
            proc = procs.get(key)
            if proc is None:
                proc = procs[key] = {"pid": pids[0], "config": ""}
                log("registered process (%s) for job '%s'" % (
                    ", ".join(map(str, pids)), jobid))
            ret = ""
            if typ & 2 and proc["config"]:
                ret = proc["config"] + "\n"
                proc["config"] = ""
            proc["last"] = time.time()
            return ret

    def register(self, jobid, pid, gpu):
        with self.lock:
            s = self.gpus.setdefault((str(jobid), gpu), set())
            s.add(pid)
            return len(s)

    def request(self, jobid, pids, config, limit):
        res = {"processesMatched": [], "eventProfilersTriggered": [],
               "activityProfilersTriggered": [], "eventProfilersBusy": 0,
               "activityProfilersBusy": 0}
        trace_all = not pids or pids == [0]
        with self.lock:
            for key, proc in self.jobs.get(str(jobid), {}).items():
                if not trace_all and not key & set(pids):
                    continue
                res["processesMatched"].append(proc["pid"])
                if len(res["activityProfilersTriggered"]) >= limit:
                    continue
                if proc["config"]:
                    res["activityProfilersBusy"] += 1
                    continue
                trace_id = str(abs(hash((socket.gethostname(), proc["pid"],
                                         int(time.time())))))
                proc["config"] = "\n    %s\n    REQUEST_TRACE_ID=%s" % (
                    config, trace_id)
                res["activityProfilersTriggered"].append(proc["pid"])
        return res


def log(msg):
    sys.stderr.write("dynolog-standin: %s\n" % msg)
    sys.stderr.flush()


def address(name, sockdir):
    if sockdir:
        return os.path.join(sockdir, name)
    return b"\0" + name.encode() + b"\0"


def bind_ipc(sockdir):
    """The name, taken as dynolog's EndPoint takes it: a file is replaced."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if sockdir:
        try:
            os.unlink(address("dynolog", sockdir))
        except OSError:
            pass
    s.bind(address("dynolog", sockdir))
    if sockdir:
        os.chmod(address("dynolog", sockdir), 0o666)
    log("holding %s" % (address("dynolog", sockdir),))
    return s


def serve_ipc(reg, s):
    while True:
        data, src = s.recvfrom(65536)
        if len(data) < HEADER.size:
            continue
        size, typ = HEADER.unpack_from(data)
        typ = typ.rstrip(b"\0")
        body = data[HEADER.size:HEADER.size + size]
        if typ == b"req" and len(body) >= REQ.size:
            rtype, n, jobid = REQ.unpack_from(body)
            if n < 1 or len(body) < REQ.size + 4 * n:
                continue
            pids = list(struct.unpack_from("=%di" % n, body, REQ.size))
            out = reg.poll(jobid, pids, rtype).encode()
            reply = HEADER.pack(len(out), b"req") + out
        elif typ == b"ctxt" and len(body) >= CTXT.size:
            gpu, pid, jobid = CTXT.unpack_from(body)
            count = reg.register(jobid, pid, gpu)
            reply = HEADER.pack(4, b"ctxt") + struct.pack("=i", count)
        else:
            log("TYPE UNKNOWN: %r" % typ)
            continue
        try:
            s.sendto(reply, src)
        except OSError as e:
            log("Failed to return config to libkineto: %s" % e)


def recv_exact(c, n):
    buf = b""
    while len(buf) < n:
        chunk = c.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def serve_tcp(reg, srv, answer_for=None):
    while True:
        c, _ = srv.accept()
        try:
            (n,) = struct.unpack("=i", recv_exact(c, 4))
            req = json.loads(recv_exact(c, n))
            if req.get("fn") != "setKinetOnDemandRequest":
                continue
            if "config" not in req or "pids" not in req:
                res = {"status": "failed"}
            elif answer_for is not None:
                res = {"processesMatched": [answer_for],
                       "eventProfilersTriggered": [],
                       "activityProfilersTriggered": [answer_for],
                       "eventProfilersBusy": 0, "activityProfilersBusy": 0}
            else:
                res = reg.request(req.get("job_id", 0), req["pids"],
                                  req["config"], req.get("process_limit", 1000))
            log("request %s -> %s" % (json.dumps(req), json.dumps(res)))
            out = json.dumps(res).encode()
            c.sendall(struct.pack("=i", len(out)) + out)
        except (ConnectionError, ValueError, OSError) as e:
            log("bad request: %s" % e)
        finally:
            c.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--socket-dir",
                    default=os.environ.get("KINETO_IPC_SOCKET_DIR") or None)
    ap.add_argument("--answer-for", type=int, default=None,
                    help="answer every request as if this pid were triggered")
    ap.add_argument("--log-tag", default=None,
                    help="ignored: a mark for finding the process")
    args = ap.parse_args()
    reg = Registry()
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", args.port))
    srv.listen(50)
    threading.Thread(target=serve_ipc, args=(reg, bind_ipc(args.socket_dir)),
                     daemon=True).start()
    print("port %d" % srv.getsockname()[1], flush=True)
    serve_tcp(reg, srv, args.answer_for)


if __name__ == "__main__":
    main()
