"""Gateway overhead: what the appliance costs in front of an inference worker.

One `kimi-engine serve` worker (a synthetic signed k3-nano model) and one appliance daemon
whose router sends every request to it. The same load (kimi-bench-gateway-load: --streams
concurrent streaming chat completions, greedy, thinking off) goes alternately straight to the
worker and through the appliance, --rounds times each after one warm-up round per side, each
client stream on its own keep-alive connection per side, all in one run on one machine, so a busy machine slows both sides alike. Prints tokens/s both ways and
their ratio (the target is >= 0.95), and the per-request latency and time to first frame of
each side with the difference (median and p99).

  cmake --build build --target bench-gateway
  # or: KIMI_APPLIANCE_BIN=... KIMICTL_BIN=... KIMI_ENGINE_BIN=... python3 bench/gateway/gateway_bench.py \\
  #       --load build/bench/kimi-bench-gateway-load

The appliance runs with its production pieces on: API-key authentication, request rules,
the audit log (one signed record per request), metrics.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "conformance"))

from conformance_harness import DEFAULT_MODEL, EngineWorker, ModelFixture, upstream_route, wait_until_routable  # noqa: E402
from daemon_harness import Daemon, base_config  # noqa: E402


def percentile(values, fraction):
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, int(round(fraction * len(ordered) + 0.5)))
    return ordered[min(rank, len(ordered)) - 1]


def run_load(args, direct_url, gateway_url, api_key):
    command = [args.load, "--direct", direct_url, "--gateway", gateway_url, "--api-key", api_key,
               "--model", DEFAULT_MODEL, "--streams", str(args.streams), "--requests", str(args.requests),
               "--rounds", str(args.rounds), "--max-tokens", str(args.max_tokens)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        try:
            errors = [e for r in json.loads(proc.stdout)["rounds"] for e in r["errors"]]
        except (ValueError, KeyError):
            errors = [proc.stdout[-2000:]]
        raise SystemExit("the load failed (%d): %s %s" % (proc.returncode, errors[:5], proc.stderr[-2000:]))
    return json.loads(proc.stdout)


def merge_rounds(rounds):
    tokens = sum(r["completion_tokens"] for r in rounds)
    wall = sum(r["wall_s"] for r in rounds)
    return {"tokens": tokens, "wall_s": wall, "tokens_per_s": tokens / wall,
            "latency_ms": [x for r in rounds for x in r["latency_ms"]],
            "first_frame_ms": [x for r in rounds for x in r["first_frame_ms"]]}


def cpu_seconds(pid):
    """User + system CPU time a process has used so far (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load", required=True, help="the kimi-bench-gateway-load binary")
    parser.add_argument("--streams", type=int, default=64)
    parser.add_argument("--requests", type=int, default=2, help="requests each stream sends per round")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds per side")
    parser.add_argument("--threads", type=int, default=1, help="the worker's kernel threads")
    args = parser.parse_args()

    fixture = ModelFixture()
    worker = EngineWorker(fixture.model_dir, threads=args.threads, max_num_seqs=args.streams,
                          default_max_tokens=args.max_tokens)
    config = base_config(limits={"max_connections": 4 * args.streams})
    config.update(upstream_route(worker.url))
    daemon = Daemon(config=config)
    try:
        if not wait_until_routable(daemon):
            raise SystemExit("the appliance never saw its worker healthy")
        print("machine: %d CPUs, load average before: %s" % (os.cpu_count(), loadavg()))
        start = time.monotonic()
        cpu_before = {"appliance": cpu_seconds(daemon.proc.pid), "worker": cpu_seconds(worker.proc.pid)}
        result = run_load(args, worker.url, "http://127.0.0.1:%d" % daemon.port, daemon.api_key)
        cpu = {name: cpu_seconds(proc.pid) - cpu_before[name]
               for name, proc in (("appliance", daemon.proc), ("worker", worker.proc))}
        print("load average after: %s; the run took %.1f s" % (loadavg(), time.monotonic() - start))
    finally:
        daemon.stop()
        daemon.close()
        worker.stop()

    measured = {side: [r for r in result["rounds"] if r["side"] == side] for side in ("direct", "gateway")}
    direct, gateway = merge_rounds(measured["direct"]), merge_rounds(measured["gateway"])
    print("%d streams x %d requests x %d rounds per side, max_tokens %d, worker threads %d" %
          (args.streams, args.requests, args.rounds, args.max_tokens, args.threads))
    print("%-8s %10s %8s %12s %12s %12s %12s" % ("side", "tokens", "tok/s", "lat p50 ms", "lat p99 ms",
                                                 "first p50", "first p99"))
    for name, side in (("direct", direct), ("gateway", gateway)):
        print("%-8s %10d %8.1f %12.1f %12.1f %12.1f %12.1f" % (
            name, side["tokens"], side["tokens_per_s"], statistics.median(side["latency_ms"]),
            percentile(side["latency_ms"], 0.99), statistics.median(side["first_frame_ms"]),
            percentile(side["first_frame_ms"], 0.99)))
    print("per round tok/s direct:  %s" % ", ".join("%.1f" % r["tokens_per_s"] for r in measured["direct"]))
    print("per round tok/s gateway: %s" % ", ".join("%.1f" % r["tokens_per_s"] for r in measured["gateway"]))
    print("throughput ratio gateway/direct: %.3f (target >= 0.95)" % (gateway["tokens_per_s"] / direct["tokens_per_s"]))
    # The appliance is idle during the direct rounds: its CPU time is the gateway's, warm-up included.
    gateway_requests = (args.rounds + 1) * args.streams * args.requests
    gateway_tokens = gateway["tokens"] * (args.rounds + 1) / args.rounds
    print("CPU over the run (both sides, warm-up included): worker %.2f s, appliance %.2f s = %.2f ms per gateway "
          "request, %.1f us per gateway token" % (cpu["worker"], cpu["appliance"], 1000 * cpu["appliance"] / gateway_requests,
                                                   1e6 * cpu["appliance"] / gateway_tokens))
    for label, key in (("request latency", "latency_ms"), ("time to first frame", "first_frame_ms")):
        print("added %s: median %+.1f ms, p99 %+.1f ms" % (
            label, statistics.median(gateway[key]) - statistics.median(direct[key]),
            percentile(gateway[key], 0.99) - percentile(direct[key], 0.99)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
