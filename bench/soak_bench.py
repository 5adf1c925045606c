"""Soak: concurrent streaming clients against the embedded demo model for a long run, through the
real kimi-appliance on loopback. Not a test (not in `make test`); prints figures and exits
non-zero when the run was not clean: any error, or the daemon's RSS grew by more than 5%.

The daemon runs `make run`'s configuration (appliance/dev/prepare-var.sh): the k3-nano demo
model (random weights, demo tokenizer) synthesised and signed with a fresh key, every other
setting at its default (limits.max_connections 64, model.max_num_seqs 32, one kernel thread per
hardware thread, every request audited).

Each client loops: a NEW connection, one streamed chat completion (max_tokens 64, no
`Connection: close`, as an SDK that does not pool connections sends it), read until `data:
[DONE]`, close at once (before the chunked body's last chunk), and again. An error is a status
other than 200, a stream without [DONE], an error frame, a reset, or no byte for --timeout
seconds. Per minute of the run it reports streams, errors, p50/p99 inter-token latency (the gap
between consecutive frames that carry text, as the client receives them), the slowest response
head (the head is written with the first event), the daemon's RSS and the audit records written per second.

  KIMI_APPLIANCE_BIN=build/appliance/kimi-appliance KIMICTL_BIN=build/appliance/kimictl \\
  KIMI_ENGINE_BIN=build/engine/kimi-engine \\
      /usr/bin/python3 bench/soak_bench.py [--clients 64] [--minutes 10] [--warmup 60] [--max-tokens 64]

`cmake --build build --target bench-soak` runs it with the defaults.
"""
import argparse
import array
import json
import os
import socket
import sqlite3
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
import prometheus_text  # noqa: E402
from daemon_harness import (KIMICTL, SignedModel, base_config, read_chunk, read_head, request,  # noqa: E402
                            run_to_exit)

MODEL_ID = "kimi-k3"  # prepare-var.sh's served_id
RSS_GROWTH_LIMIT = 0.05


class StreamError(Exception):
    pass


def stream_request(api_key, max_tokens, request_id):
    """The request, with `request_id` as its X-Request-Id: the daemon keeps it beside its own id
    in the access log and the audit record, so a failed request can be looked up there."""
    body = json.dumps({"model": MODEL_ID, "stream": True, "max_tokens": max_tokens,
                       "messages": [{"role": "user", "content": "Soak request %s: name three rivers." % request_id}]})
    return ("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
            "X-Request-Id: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (api_key, request_id, len(body), body)).encode()


def read_stream(sock, on_text_frame):
    """Reads one chunked SSE response up to `data: [DONE]`; calls on_text_frame(t) for every frame
    that carries text. Returns the time the response head arrived."""
    status, reason, _, rest = read_head(sock)
    head_time = time.monotonic()
    if status != 200:
        raise StreamError("status: %d %s %s" % (status, reason, rest[:160].decode("utf-8", "replace")))
    # SSE events ("data: ...\n\n") inside the de-chunked bytes.
    events = b""
    while True:
        payload, rest = read_chunk(sock, rest)
        if not payload:
            raise StreamError("the stream ended without [DONE]")
        now = time.monotonic()
        events += payload
        while b"\n\n" in events:
            event, events = events.split(b"\n\n", 1)
            if not event.startswith(b"data: "):
                continue
            data = event[6:]
            if data == b"[DONE]":
                return head_time
            frame = json.loads(data)
            if "error" in frame:
                raise StreamError("error frame: " + frame["error"].get("message", "")[:160])
            delta = frame["choices"][0].get("delta", {}) if frame.get("choices") else {}
            if delta.get("content") or delta.get("reasoning_content"):
                on_text_frame(now)


class Soak:
    def __init__(self, port, api_key, clients, max_tokens, timeout):
        self.port, self.api_key, self.max_tokens, self.timeout = port, api_key, max_tokens, timeout
        self.halt = threading.Event()
        self.origin = time.monotonic()
        self.lock = threading.Lock()
        self.gaps = {}        # minute -> array of inter-token gaps (ms)
        self.streams = {}     # minute -> streams that reached [DONE]
        self.errors = {}      # minute -> errors
        self.slowest = {}     # minute -> slowest first byte (s)
        self.error_kinds = {}  # message -> count
        self.threads = [threading.Thread(target=self.client, args=(i,), daemon=True) for i in range(clients)]

    def minute(self, t):
        return int((t - self.origin) // 60)

    def client(self, i):
        n = 0
        while not self.halt.is_set():
            n += 1
            request_id = "soak-%d-%d" % (i, n)
            request = stream_request(self.api_key, self.max_tokens, request_id)
            start = time.monotonic()
            last = [None]
            local_gaps = array.array("d")

            def on_text_frame(t):
                if last[0] is not None:
                    local_gaps.append((t - last[0]) * 1000.0)
                last[0] = t

            sock = None
            try:
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)
                sock.sendall(request)
                head_time = read_stream(sock, on_text_frame)
                ok, why = True, None
            except (OSError, ValueError, StreamError) as e:
                ok, why = False, "%s: %s" % (type(e).__name__, e)
            finally:
                if sock is not None:
                    sock.close()  # at once after [DONE]: the last chunk is not awaited
            end = time.monotonic()
            m = self.minute(end)
            with self.lock:
                if ok:
                    self.streams[m] = self.streams.get(m, 0) + 1
                    self.gaps.setdefault(m, array.array("d")).extend(local_gaps)
                    self.slowest[m] = max(self.slowest.get(m, 0.0), head_time - start)
                else:
                    self.errors[m] = self.errors.get(m, 0) + 1
                    key = why[:200]
                    self.error_kinds[key] = self.error_kinds.get(key, 0) + 1
                    shown = self.error_kinds[key] <= 3
            if not ok:
                if shown:
                    print("  %s: error after %.1f s: %s" % (request_id, end - start, why), flush=True)
                # As a client that is refused backs off, so a refusal does not become a busy loop.
                self.halt.wait(1.0)

    def start(self):
        for t in self.threads:
            t.start()

    def restart_clock(self):
        """Counts from now: what the warm-up did is dropped."""
        with self.lock:
            self.origin = time.monotonic()
            for d in (self.gaps, self.streams, self.errors, self.slowest):
                d.clear()
            warmup_errors = dict(self.error_kinds)
            self.error_kinds.clear()
        return warmup_errors

    def stop(self):
        self.halt.set()
        for t in self.threads:
            t.join(self.timeout + 5)


def rss_kib(pid, field="VmRSS"):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError("no %s for pid %d" % (field, pid))


def rss_parts(pid):
    """RSS by kind (MiB): heap and stacks, mapped files (the model's weights, SQLite's shared
    memory), shared memory."""
    return ", ".join("%s %.1f" % (field[3:].lower(), rss_kib(pid, field) / 1024.0)
                     for field in ("RssAnon", "RssFile", "RssShmem"))


def audit_records(data_dir):
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(data_dir, "audit.db"), uri=True, timeout=10)
    try:
        return db.execute("SELECT COUNT(*) FROM audit_records").fetchone()[0]
    finally:
        db.close()


def engine_memory(daemon):
    """The engine's sequence-state memory by kind (MiB), from /metrics: the prefix cache grows
    within model.memory_budget_bytes by design, so RSS is read beside it."""
    reply = request(daemon, "GET", "/metrics")
    if reply.status != 200:
        return "unavailable (%d)" % reply.status
    families = prometheus_text.parse(reply.body)
    samples = families.get("kimi_engine_memory_bytes", {"samples": []})["samples"]
    return ", ".join("%s %.1f" % (labels.get("kind", "?"), value / 2**20) for _, labels, value in samples)


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(p / 100.0 * len(sorted_values)))]


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--minutes", type=float, default=10.0, help="measured duration, after the warm-up")
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds of load before the measurement")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds without a byte that fail a request")
    args = parser.parse_args()

    for var in ("KIMI_APPLIANCE_BIN", "KIMICTL_BIN", "KIMI_ENGINE_BIN"):
        if not os.environ.get(var):
            sys.exit("soak: set %s (see the module docstring)" % var)

    with tempfile.TemporaryDirectory(prefix="kimi-soak-") as tmp:
        print("soak: synthesising and signing the k3-nano demo model", flush=True)
        model = SignedModel(tmp)
        daemon = model.serve(base_config(), served_id=MODEL_ID)
        try:
            pid = daemon.proc.pid
            print("soak: %s; daemon pid %d on port %d; %d clients, max_tokens %d, %.0f s warm-up, %.1f min measured"
                  % (cpu_model(), pid, daemon.port, args.clients, args.max_tokens, args.warmup, args.minutes),
                  flush=True)
            soak = Soak(daemon.port, daemon.api_key, args.clients, args.max_tokens, args.timeout)
            soak.start()
            time.sleep(args.warmup)
            warmup_errors = soak.restart_clock()
            rss_start = rss_kib(pid)
            memory_start = engine_memory(daemon)
            parts_start = rss_parts(pid)
            records_before = audit_records(daemon.data_dir)
            t_start = time.monotonic()
            minutes = int(args.minutes) if args.minutes == int(args.minutes) else int(args.minutes) + 1
            rows = []
            for m in range(minutes):
                until = t_start + min((m + 1) * 60.0, args.minutes * 60.0)
                time.sleep(max(0.0, until - time.monotonic()))
                rows.append((m, rss_kib(pid), audit_records(daemon.data_dir), time.monotonic()))
            soak.stop()
            rss_end = rss_kib(pid)
            memory_end = engine_memory(daemon)
            parts_end = rss_parts(pid)
            stop_code = daemon.stop()
            code, out, err = run_to_exit([KIMICTL, "audit", "verify", "--data-dir", daemon.data_dir], timeout=600)
            verified = code == 0
        finally:
            daemon.close()

    print()
    print("| minute | streams | errors | ITL p50 ms | ITL p99 ms | slowest head s | RSS MiB | audit records/s |")
    print("|---|---|---|---|---|---|---|---|")
    prev_records, prev_t = records_before, t_start
    total_streams = total_errors = 0
    all_gaps = array.array("d")
    for m, rss, records, t in rows:
        gaps = sorted(soak.gaps.get(m, ()))
        all_gaps.extend(gaps)
        streams, errors = soak.streams.get(m, 0), soak.errors.get(m, 0)
        total_streams += streams
        total_errors += errors
        print("| %d | %d | %d | %.1f | %.1f | %.2f | %.1f | %.1f |" % (
            m + 1, streams, errors, percentile(gaps, 50), percentile(gaps, 99), soak.slowest.get(m, 0.0),
            rss / 1024.0, (records - prev_records) / (t - prev_t)))
        prev_records, prev_t = records, t
    # Streams that ended after the last minute's mark (while the clients stopped) count too.
    late = sum(v for k, v in soak.errors.items() if k >= len(rows))
    total_errors += late
    all_gaps = sorted(all_gaps)
    growth = (rss_end - rss_start) / rss_start
    print()
    total_errors += sum(warmup_errors.values())
    print("streams %d, errors %d (%d of them in the warm-up), ITL p50 %.1f ms p99 %.1f ms over the run" % (
        total_streams, total_errors, sum(warmup_errors.values()), percentile(all_gaps, 50),
        percentile(all_gaps, 99)))
    print("daemon RSS %.1f MiB at the start, %.1f MiB at the end (%+.1f%%)" % (
        rss_start / 1024.0, rss_end / 1024.0, growth * 100))
    print("daemon RSS (MiB) at the start: %s; at the end: %s" % (parts_start, parts_end))
    print("engine memory (MiB) at the start: %s; at the end: %s" % (memory_start, memory_end))
    print("audit records %d in %.0f s (%.1f/s); daemon exit %d; kimictl audit verify: %s" % (
        rows[-1][2] - records_before, rows[-1][3] - t_start, (rows[-1][2] - records_before) / (rows[-1][3] - t_start),
        stop_code, "ok" if verified else "FAILED: " + (err or out).strip()[:300]))
    for why, count in sorted(list(soak.error_kinds.items()) + list(warmup_errors.items()), key=lambda kv: -kv[1]):
        print("  %d x %s" % (count, why))
    failed = total_errors > 0 or growth > RSS_GROWTH_LIMIT or not verified or stop_code != 0
    print("soak: %s" % ("FAILED" if failed else "clean"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
