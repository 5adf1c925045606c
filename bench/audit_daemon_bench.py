"""Daemon-level cost of auditing: requests per second through the real kimi-appliance with every
request audited (synchronous=FULL, group commit, the response waits for its record) against the
same requests unaudited.

The toggle is audit.record_probes: GET /healthz is not audited unless it is set, and otherwise
takes the same path as every request (connection loop, dispatcher, route, access log). Clients
are closed-loop threads on keep-alive connections. Prints one line per client count; not a test.

  KIMI_APPLIANCE_BIN=build/appliance/kimi-appliance KIMICTL_BIN=build/appliance/kimictl \\
      python3 bench/audit_daemon_bench.py [--seconds 3] [--clients 1,8,64]
"""
import argparse
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from daemon_harness import Daemon, base_config, read_reply  # noqa: E402


def run_clients(daemon, clients, seconds):
    stop = threading.Event()
    counts = [0] * clients
    request = ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n" % daemon.api_key).encode()

    def client(i):
        sock = None
        while not stop.is_set():
            try:
                if sock is None:
                    sock = daemon.connect()
                sock.sendall(request)
                reply = read_reply(sock)
                if reply.status == 200:
                    counts[i] += 1
                if reply.headers.get("connection", "").lower() == "close":
                    sock.close()
                    sock = None
            except (OSError, ConnectionError, ValueError):
                if sock is not None:
                    sock.close()
                sock = None
        if sock is not None:
            sock.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(0.5)  # warm-up: connections open, writer running
    start_count, start = sum(counts), time.monotonic()
    time.sleep(seconds)
    done, elapsed = sum(counts) - start_count, time.monotonic() - start
    stop.set()
    for t in threads:
        t.join()
    return done / elapsed


def measure(audited, clients, seconds):
    with tempfile.TemporaryDirectory(prefix="kimi-bench-audit-daemon-") as tmp:
        config = base_config({"max_connections": max(64, clients * 2)})
        config["storage"]["data_dir"] = os.path.join(tmp, "data")
        config["audit"] = {"record_probes": audited}
        daemon = Daemon(config=config)
        try:
            return run_clients(daemon, clients, seconds)
        finally:
            daemon.stop()
            daemon.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--clients", default="1,8,64")
    args = parser.parse_args()
    print("daemon audit benchmark: GET /healthz, keep-alive, %.1f s a configuration" % args.seconds)
    print("%8s %14s %14s %8s" % ("clients", "unaudited_rps", "audited_rps", "ratio"))
    for clients in (int(c) for c in args.clients.split(",")):
        base = measure(False, clients, args.seconds)
        audited = measure(True, clients, args.seconds)
        print("%8d %14.0f %14.0f %8.3f" % (clients, base, audited, audited / base if base else 0.0), flush=True)


if __name__ == "__main__":
    main()
