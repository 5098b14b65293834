#!/usr/bin/env python3
"""A stand-in for a vLLM OpenAI-compatible server (vllm serve), for the
tests of spyremon's serving figures on hosts without vLLM or a Spyre card,
as aiu-smi-sim stands in for aiu-smi.  Standard library only.

What it follows is vLLM's documentation and API server as we know them,
for vLLM 0.8 to 0.10 (the V1 engine), not checked against a running vLLM:

- GET /metrics: the Prometheus text format (0.0.4) that prometheus_client
  writes, with the counters vLLM exports under these names:
  vllm:prompt_tokens_total, vllm:generation_tokens_total (labels
  model_name, engine) and vllm:request_success_total (labels
  finished_reason, model_name, engine; one sample per finish reason), and
  the gauge vllm:num_requests_running.  Each counter also has its
  *_created sample, as prometheus_client writes.  Counters advance as
  completions are served and start at zero with each process: a restart
  sets them back.
- POST /v1/completions: OpenAI's completions request (model, prompt, a
  string or a list of strings, max_tokens, default 16).  The stand-in
  counts a prompt's tokens as its whitespace-separated words (at least
  one) and always generates max_tokens tokens (finish_reason "length");
  the answer carries usage.prompt_tokens, completion_tokens and
  total_tokens.
  A request naming a model other than --model is answered 404 with
  vLLM's error object ("The model `X` does not exist.").  Generating
  takes --token-seconds per generated token (0 by default); while any
  completion is being generated the file --busy-file exists, so that the
  simulator run with --workload file:PATH keeps the cards busy for as
  long as the server works: more tokens, more energy.
- GET /v1/models: OpenAI's model list, the one --model served.
- POST /start_profile and POST /stop_profile: vLLM registers them only
  when VLLM_TORCH_PROFILER_DIR is set; without it they do not exist and
  answer 404, which this stand-in follows without --profiler-dir.
  /stop_profile answers once every worker's trace is written (vLLM's
  stop waits for the profiler to stop); each of --workers workers writes
  one Kineto-shaped <host>_<pid>.<ms>.pt.trace.json.gz into the profiler
  directory, after --flush-delay seconds (a slow flush).
- GET /health: 200 with an empty body.

Failure modes: --no-answer accepts connections and closes them without a
reply (a server that does not answer); --fail-completions CODE answers
every completion with that HTTP status and an error object;
--completion-delay S answers completions S seconds late; --refuse holds the port bound but
does not listen, so that connections to it are refused (ECONNREFUSED), as
to a server that is down.

usage: vllm_standin.py [--port N] [--port-file FILE] [--model NAME]
                       [--profiler-dir DIR] [--flush-delay S]
                       [--workers N] [--no-answer | --refuse]
                       [--busy-file FILE] [--token-seconds S]
                       [--fail-completions CODE] [--completion-delay S]
"""

import argparse
import gzip
import json
import os
import socket
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BASE_PERIOD_NS = 7889238 * 1000000000   # Kineto's ts base: a quarter year


def go_float(d):
    """A float as prometheus_client writes it: repr, large ones in e+0N."""
    s = repr(float(d))
    dot = s.find(".")
    if d > 0 and dot > 6:
        mantissa = ("%s.%s%s" % (s[0], s[1:dot], s[dot + 1:])).rstrip("0.")
        return "%se+0%d" % (mantissa, dot - 1)
    return s


class State:
    """The counters and the profiler, shared by the request threads."""

    def __init__(self, opts):
        self.opts = opts
        self.lock = threading.Lock()
        self.created = time.time()
        self.prompt = 0
        self.generation = 0
        self.success = {"stop": 0, "length": 0, "abort": 0}
        self.running = 0
        self.profiling_since = None

    def exposition(self):
        m = 'model_name="%s",engine="0"' % self.opts.model
        out = []
        with self.lock:
            for name, helptext, val in (
                    ("vllm:prompt_tokens", "Number of prefill tokens "
                     "processed.", self.prompt),
                    ("vllm:generation_tokens", "Number of generation "
                     "tokens processed.", self.generation)):
                out.append("# HELP %s_total %s" % (name, helptext))
                out.append("# TYPE %s_total counter" % name)
                out.append("%s_total{%s} %s" % (name, m, go_float(val)))
                out.append("%s_created{%s} %s" % (name, m,
                                                    go_float(self.created)))
            out.append("# HELP vllm:request_success_total Count of "
                       "successfully processed requests.")
            out.append("# TYPE vllm:request_success_total counter")
            for reason, n in self.success.items():
                out.append('vllm:request_success_total{finished_reason='
                           '"%s",%s} %s' % (reason, m, go_float(n)))
            for reason in self.success:
                out.append('vllm:request_success_created{finished_reason='
                           '"%s",%s} %s' % (reason, m, go_float(self.created)))
            out.append("# HELP vllm:num_requests_running Number of requests "
                       "in model execution batches.")
            out.append("# TYPE vllm:num_requests_running gauge")
            out.append("vllm:num_requests_running{%s} %s" % (
                m, go_float(self.running)))
        return "\n".join(out) + "\n"

    def complete(self, prompts, max_tokens):
        ptoks = [max(1, len(p.split())) for p in prompts]
        busy = self.opts.busy_file
        with self.lock:
            self.running += len(prompts)
            if busy and self.running == len(prompts):
                open(busy, "w").close()
        # the work: as long as the tokens generated take
        time.sleep(self.opts.token_seconds * max_tokens)
        with self.lock:
            self.running -= len(prompts)
            if busy and self.running == 0:
                try:
                    os.unlink(busy)
                except FileNotFoundError:
                    pass
            self.prompt += sum(ptoks)
            self.generation += max_tokens * len(prompts)
            self.success["length"] += len(prompts)
        return sum(ptoks), max_tokens * len(prompts)


def write_trace(path, begin_ns, end_ns, rank, world):
    """A trace as Kineto lays it out: CPU events over the profiled span."""
    base = begin_ns // BASE_PERIOD_NS * BASE_PERIOD_NS
    pid = os.getpid()

    def us(t):
        return "%d.%03d" % ((t - base) // 1000, (t - base) % 1000)

    events = []
    span = max(end_ns - begin_ns, 1000)
    step = span // 4
    for i in range(4):
        t = begin_ns + i * step
        events.append('{"ph": "X", "cat": "user_annotation", "name": '
                      '"execute_model#%d", "pid": %d, "tid": %d, "ts": %s, '
                      '"dur": %d.%03d}' % (i, pid, pid, us(t), step // 2000,
                                           (step // 2) % 1000))
    events.append('{"ph": "M", "name": "process_name", "pid": %d, "tid": 0, '
                  '"args": {"name": "python3"}}' % pid)
    text = ('{\n  "schemaVersion": 1,\n  "deviceProperties": [],\n'
            '  "distributedInfo": {"backend": "gloo", "rank": %d, '
            '"world_size": %d},\n  "traceEvents": [\n  %s\n  ],\n'
            '  "traceName": %s,\n  "displayTimeUnit": "ms",\n'
            '  "baseTimeNanoseconds": %d\n}\n'
            % (rank, world, ",\n  ".join(events), json.dumps(path), base))
    tmp = path + ".part"
    with gzip.open(tmp, "wt") as f:
        f.write(text)
    os.rename(tmp, path)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, code, body=b"", ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def not_found(self):
        self.answer(404, b'{"detail":"Not Found"}')

    def do_GET(self):
        st = self.server.state
        if self.path == "/metrics":
            self.answer(200, st.exposition().encode(),
                        "text/plain; version=0.0.4; charset=utf-8")
        elif self.path == "/health":
            self.answer(200)
        elif self.path == "/v1/models":
            self.answer(200, json.dumps({"object": "list", "data": [{
                "id": st.opts.model, "object": "model",
                "created": int(st.created), "owned_by": "vllm",
                "root": st.opts.model, "max_model_len": 8192}]}).encode())
        else:
            self.not_found()

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def do_POST(self):
        st = self.server.state
        data = self.body()
        if self.path == "/v1/completions":
            self.completions(st, data)
        elif self.path in ("/start_profile", "/stop_profile"):
            if st.opts.profiler_dir is None:
                self.not_found()
            elif self.path == "/start_profile":
                with st.lock:
                    st.profiling_since = time.time_ns()
                self.answer(200)
            else:
                self.stop_profile(st)
        else:
            self.not_found()

    def error(self, code, message, kind):
        self.answer(code, json.dumps({
            "object": "error", "message": message, "type": kind,
            "param": None, "code": code}).encode())

    def completions(self, st, data):
        if st.opts.completion_delay:
            time.sleep(st.opts.completion_delay)
        if st.opts.fail_completions:
            self.error(st.opts.fail_completions, "the engine is not "
                       "running", "ServiceUnavailableError")
            return
        try:
            req = json.loads(data or b"{}")
            prompt = req["prompt"]
            prompts = [prompt] if isinstance(prompt, str) else list(prompt)
            max_tokens = int(req.get("max_tokens", 16))
            if not prompts or max_tokens < 1 or not all(
                    isinstance(p, str) for p in prompts):
                raise ValueError
        except (ValueError, KeyError, TypeError):
            self.answer(400, b'{"object":"error","message":"bad request"}')
            return
        if req.get("model", st.opts.model) != st.opts.model:
            self.error(404, "The model `%s` does not exist." % req["model"],
                       "NotFoundError")
            return
        ptok, gtok = st.complete(prompts, max_tokens)
        reply = {
            "id": "cmpl-%d" % time.time_ns(), "object": "text_completion",
            "created": int(time.time()), "model": st.opts.model,
            "choices": [{"index": i, "text": " tok" * max_tokens,
                         "logprobs": None, "finish_reason": "length",
                         "stop_reason": None}
                        for i in range(len(prompts))],
            "usage": {"prompt_tokens": ptok, "completion_tokens": gtok,
                      "total_tokens": ptok + gtok},
        }
        self.answer(200, json.dumps(reply).encode())

    def stop_profile(self, st):
        with st.lock:
            since, st.profiling_since = st.profiling_since, None
        if since is None:
            # vLLM's profiler raises when stopped without a start
            self.answer(500, b'{"detail":"profiler not started"}')
            return
        end = time.time_ns()
        time.sleep(st.opts.flush_delay)
        host = socket.gethostname()
        for w in range(st.opts.workers):
            name = "%s_%d.%d.pt.trace.json.gz" % (host, os.getpid() + w,
                                                 end // 1000000)
            write_trace(os.path.join(st.opts.profiler_dir, name), since,
                        end, w, st.opts.workers)
        self.answer(200)


class Silent(socketserver.BaseRequestHandler):
    """--no-answer: close every connection without a word."""

    def handle(self):
        self.request.close()


def write_port(path, port):
    """The port, in path whole or not at all."""
    if path:
        with open(path + ".part", "w") as f:
            f.write("%d\n" % port)
        os.rename(path + ".part", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--model", default="ibm-granite/granite-3.3-8b-instruct")
    ap.add_argument("--profiler-dir")
    ap.add_argument("--flush-delay", type=float, default=0.0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--no-answer", action="store_true")
    ap.add_argument("--refuse", action="store_true")
    ap.add_argument("--busy-file")
    ap.add_argument("--token-seconds", type=float, default=0.0)
    ap.add_argument("--fail-completions", type=int, default=0)
    ap.add_argument("--completion-delay", type=float, default=0.0)
    opts = ap.parse_args()

    if opts.refuse:
        sock = socket.socket()
        sock.bind(("127.0.0.1", opts.port))
        write_port(opts.port_file, sock.getsockname()[1])
        while True:
            time.sleep(3600)

    ThreadingHTTPServer.allow_reuse_address = True
    socketserver.ThreadingTCPServer.allow_reuse_address = True
    if opts.no_answer:
        srv = socketserver.ThreadingTCPServer(("127.0.0.1", opts.port),
                                              Silent)
    else:
        srv = ThreadingHTTPServer(("127.0.0.1", opts.port), Handler)
        srv.state = State(opts)
    srv.daemon_threads = True
    write_port(opts.port_file, srv.server_address[1])
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
