"""What authentication adds to the request path of GET /v1/models (issue 8: under 2%).

Authentication cannot be switched off in the daemon, so the share is measured as a ratio of
two figures taken in one run: the in-process cost of authenticating one API key (shape check,
keyed BLAKE2b, indexed SQLite lookup, constant-time compare, last-use note: kimi-bench-auth's
BM_AuthenticateKey/10, wall time) over the median end-to-end time of an authenticated
GET /v1/models on one keep-alive connection to the real daemon (which includes that
authentication, the handler and the request's audit record). /healthz, public and
unaudited, is printed alongside for scale. Prints figures and the load; asserts nothing.

  cmake --build build --target bench-auth
or
  KIMI_APPLIANCE_BIN=build/appliance/kimi-appliance KIMICTL_BIN=build/appliance/kimictl \\
      python3 bench/auth_overhead.py --bench-auth build/appliance/auth/kimi-bench-auth
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from daemon_harness import Daemon, read_reply  # noqa: E402

REQUESTS = 2000
WARMUP = 200
PER_CONNECTION = 50


def median_us(daemon, path, with_key):
    """Median time of one request, on keep-alive connections of PER_CONNECTION requests each
    (below limits.max_requests_per_connection); connecting is not timed."""
    head = ("GET %s HTTP/1.1\r\nHost: localhost\r\n" % path).encode()
    if with_key:
        head += daemon.auth_header()
    head += b"\r\n"
    times = []
    done = 0
    while done < WARMUP + REQUESTS:
        with daemon.connect() as s:
            for _ in range(min(PER_CONNECTION, WARMUP + REQUESTS - done)):
                t = time.perf_counter()
                s.sendall(head)
                reply = read_reply(s)
                if done >= WARMUP:
                    times.append((time.perf_counter() - t) * 1e6)
                done += 1
                if reply.status != 200:
                    raise RuntimeError("%s answered %d: %s" % (path, reply.status, reply.body))
    return statistics.median(times)


def authenticate_key_us(bench_auth):
    out = subprocess.run([bench_auth, "--benchmark_filter=BM_AuthenticateKey/10$", "--benchmark_format=json",
                          "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true"],
                         capture_output=True, text=True, check=True).stdout
    runs = {b["name"]: b for b in json.loads(out)["benchmarks"]}
    median = runs["BM_AuthenticateKey/10_median"]
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[median["time_unit"]]
    return median["real_time"] * scale, median["cpu_time"] * scale


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench-auth", default=os.path.join("build", "appliance", "auth", "kimi-bench-auth"))
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    daemon = Daemon()
    try:
        healthz = median_us(daemon, "/healthz", with_key=False)
        models = median_us(daemon, "/v1/models", with_key=True)
    finally:
        daemon.stop()
        daemon.close()
    auth_wall, auth_cpu = authenticate_key_us(args.bench_auth)
    load_after = os.getloadavg()[0]
    print("load average (1 min): %.1f before, %.1f after" % (load_before, load_after))
    print("GET /healthz (public, not audited):       median %8.1f us over %d requests" % (healthz, REQUESTS))
    print("GET /v1/models (API key, audited):        median %8.1f us over %d requests" % (models, REQUESTS))
    print("authenticate one key (kimi-bench-auth):   median %8.1f us wall, %.1f us CPU" % (auth_wall, auth_cpu))
    print("authentication share of GET /v1/models:   %.2f%% by wall time, %.2f%% by its CPU time (target: under 2%%)"
          % (100.0 * auth_wall / models, 100.0 * auth_cpu / models))


if __name__ == "__main__":
    main()
