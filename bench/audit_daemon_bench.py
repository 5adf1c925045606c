"""Daemon-level cost of auditing: requests per second through the real kimi-appliance with every
request audited (synchronous=FULL, group commit, the response waits for its record) against the
same requests with auditing off (audit.record_requests false). Not a test; prints figures.

Two daemons run side by side for the whole run, one audited and one not, on the same data
(the same signed demo model); the measurement alternates between them in ABBA order, so drift
in the machine's load (other jobs, CPU frequency) falls on both alike. Clients are closed-loop
threads on keep-alive connections; a warm-up before each interval is not counted.

Workloads:
  chat     POST /v1/chat/completions to the embedded k3-nano demo model (random weights),
           non-streamed, small max_tokens: the request the appliance exists for.
  healthz  GET /healthz (audited through audit.record_probes): a request that does no work, so
           its whole cost is the audit commit; the worst case, not the target.

  KIMI_APPLIANCE_BIN=build/appliance/kimi-appliance KIMICTL_BIN=build/appliance/kimictl \\
  KIMI_ENGINE_BIN=build/engine/kimi-engine \\
      python3 bench/audit_daemon_bench.py [--workload chat|healthz] [--clients 64] [--seconds 4] [--rounds 6]
"""
import argparse
import json
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from daemon_harness import Daemon, base_config, make_signed_model, read_reply, wait_until_ready  # noqa: E402

MODEL_ID = "kimi-k3-nano"


def chat_request(daemon, max_tokens):
    body = json.dumps({"model": MODEL_ID, "messages": [{"role": "user", "content": "Name three rivers."}],
                       "max_tokens": max_tokens, "temperature": 0}).encode()
    return (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
            daemon.api_key.encode() + b"\r\nContent-Type: application/json\r\nContent-Length: " +
            str(len(body)).encode() + b"\r\n\r\n" + body)


def healthz_request(daemon, _max_tokens):
    return ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n" % daemon.api_key).encode()


class Load:
    """Closed-loop clients against one daemon; counted only between start() and stop()."""

    def __init__(self, daemon, clients, request):
        self.daemon, self.request = daemon, request
        self.counts = [0] * clients
        self.failures = [0] * clients
        self.halt = threading.Event()
        self.threads = [threading.Thread(target=self.client, args=(i,)) for i in range(clients)]
        for t in self.threads:
            t.start()

    def client(self, i):
        sock = None
        while not self.halt.is_set():
            try:
                if sock is None:
                    sock = self.daemon.connect(timeout=120)
                sock.sendall(self.request)
                reply = read_reply(sock)
                if reply.status == 200:
                    self.counts[i] += 1
                else:
                    self.failures[i] += 1
                if reply.headers.get("connection", "").lower() == "close":
                    sock.close()
                    sock = None
            except (OSError, ConnectionError, ValueError):
                self.failures[i] += 1
                if sock is not None:
                    sock.close()
                sock = None
        if sock is not None:
            sock.close()

    def measure(self, seconds):
        start_count, start = sum(self.counts), time.monotonic()
        time.sleep(seconds)
        return (sum(self.counts) - start_count) / (time.monotonic() - start)

    def stop(self):
        self.halt.set()
        for t in self.threads:
            t.join()
        return sum(self.failures)


def start_daemon(tmp, name, audited, workload, model, clients, threads):
    config = base_config({"max_connections": max(64, clients * 2)})
    config["storage"]["data_dir"] = os.path.join(tmp, name)
    if workload == "healthz":
        config["audit"] = {"record_probes": audited}
    else:
        config["audit"] = {"record_requests": audited}
        model_dir, public_key = model
        config["model"] = {"dir": model_dir, "trust_store": public_key, "served_id": MODEL_ID,
                           "threads": threads, "max_num_seqs": max(clients, 1)}
    daemon = Daemon(config=config)
    if workload == "chat":
        state = wait_until_ready(daemon, timeout=600)
        if not state or not state["ready"]:
            daemon.close()
            raise RuntimeError("the model did not become ready: %r" % (state,))
    return daemon


def audit_records(daemon):
    import sqlite3
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(daemon.data_dir, "audit.db"), uri=True)
    try:
        return db.execute("SELECT COUNT(*) FROM audit_records").fetchone()[0]
    finally:
        db.close()


def run(args, clients, model, tmp):
    make = chat_request if args.workload == "chat" else healthz_request
    daemons = {audited: start_daemon(tmp, "c%d-%s" % (clients, "audited" if audited else "unaudited"), audited,
                                     args.workload, model, clients, args.threads)
               for audited in (False, True)}
    rates = {False: [], True: []}
    failures = 0
    try:
        # Each daemon first serves a while unmeasured (first requests allocate, fill caches).
        for audited in (False, True):
            load = Load(daemons[audited], clients, make(daemons[audited], args.max_tokens))
            time.sleep(args.seconds)
            load.stop()
        # ABBA: unaudited, audited, audited, unaudited, ... one load at a time.
        order = []
        for r in range(args.rounds):
            order += [False, True] if r % 2 == 0 else [True, False]
        for audited in order:
            load = Load(daemons[audited], clients, make(daemons[audited], args.max_tokens))
            time.sleep(args.warmup)
            rates[audited].append(load.measure(args.seconds))
            failures += load.stop()
        records = audit_records(daemons[True]), audit_records(daemons[False])
    finally:
        for d in daemons.values():
            d.stop()
            d.close()
    return rates, failures, records


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", choices=("chat", "healthz"), default="chat")
    parser.add_argument("--clients", default="64", help="comma-separated client counts")
    parser.add_argument("--seconds", type=float, default=4.0, help="measured seconds per interval")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds before each interval")
    parser.add_argument("--rounds", type=int, default=6, help="AB pairs per client count (ABBA order)")
    parser.add_argument("--max-tokens", type=int, default=8, help="chat: max_tokens of each request")
    parser.add_argument("--threads", type=int, default=0, help="chat: engine threads (0: one per core)")
    args = parser.parse_args()

    load = os.getloadavg()
    print("daemon audit benchmark: workload %s, %d x %.1f s per configuration, ABBA order; load average %.2f %.2f %.2f"
          % (args.workload, args.rounds, args.seconds, *load))
    with tempfile.TemporaryDirectory(prefix="kimi-bench-audit-daemon-") as tmp:
        model = None
        if args.workload == "chat":
            model_dir, public_key, _ = make_signed_model(tmp)
            model = (model_dir, public_key)
        print("%8s %14s %14s %8s %12s  %s" % ("clients", "unaudited_rps", "audited_rps", "ratio", "median_pair",
                                               "intervals (unaudited | audited)"))
        for clients in (int(c) for c in args.clients.split(",")):
            rates, failures, (audited_records, unaudited_records) = run(args, clients, model, tmp)
            base = sum(rates[False]) / len(rates[False])
            audited = sum(rates[True]) / len(rates[True])
            # Each round's audited interval against its unaudited neighbour: the median of these
            # is less swayed by one disturbed interval than the ratio of the means.
            pairs = sorted(a / b for a, b in zip(rates[True], rates[False]) if b > 0)
            median = pairs[len(pairs) // 2] if len(pairs) % 2 else sum(pairs[len(pairs) // 2 - 1:len(pairs) // 2 + 1]) / 2
            print("%8d %14.1f %14.1f %8.3f %12.3f  %s | %s" % (
                clients, base, audited, audited / base if base else 0.0, median,
                " ".join("%.1f" % r for r in rates[False]), " ".join("%.1f" % r for r in rates[True])), flush=True)
            print("         records written: audited daemon %d, unaudited daemon %d; non-200 or failed requests %d"
                  % (audited_records, unaudited_records, failures), flush=True)
    print("load average at the end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
