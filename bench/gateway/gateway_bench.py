"""Gateway overhead: what the appliance costs in front of an inference worker.

One `kimi-engine serve` worker (a synthetic signed k3-nano model) and one appliance daemon
whose router sends every request to it. The same load (kimi-bench-gateway-load: --streams
concurrent streaming chat completions, greedy, thinking off) goes straight to the worker and
through the appliance in pairs of rounds (one per side), --rounds pairs after one warm-up round
per side, each client stream on its own keep-alive connection per side, all in one run on one
machine, so a busy machine slows both sides alike. Prints tokens/s both ways, each pair's
ratio, the median pair ratio with its range and the ratio of the totals (the target is
>= 0.95), and the per-request latency and time to first frame of each side with the
difference (median and p99).

Three methods (--method; --requests, --rounds, --order and --max-tokens-spread override any):
  steady (default): 8 requests per stream per round, 5 pairs, the side order reversed in every
    other pair. A round lasts long enough that the ramp-up and tail of the round are a small
    part of it, and drift of the machine over the run cancels within pairs.
  waves: the earlier method, 2 requests per stream per round, 3 pairs, direct first in every
    pair. Each round is two lock-step waves of 64 request starts, so its figure depends much
    on how the waves line up.
  mixed: steady's rounds and pairs (8 requests per stream per round, 5 pairs, alternating
    order), with each request's max_tokens drawn from [max_tokens - 16, max_tokens + 16] (mean
    unchanged; --max-tokens-spread 16 to the load generator). The draws are a seeded function of
    (round, stream, request), so both sides of a pair send exactly the same requests. With
    identical requests (steady, waves) all 64 streams end in the same worker step and send their
    next request at the same instant: lock-step waves that the worker prefills in one step when
    they arrive within a millisecond (direct), and in two when the appliance's per-request work
    spreads their arrival over tens of milliseconds. The spread lets the streams drift apart as
    independent clients' requests would, so the appliance's per-request cost is not multiplied
    by a missed prefill step. Tokens/s counts completion tokens from the streams' usage, so the
    ratio stays comparable across methods.

  cmake --build build --target bench-gateway
  # or: KIMI_APPLIANCE_BIN=... KIMICTL_BIN=... KIMI_ENGINE_BIN=... python3 bench/gateway/gateway_bench.py \\
  #       --load build/bench/kimi-bench-gateway-load [--method mixed]

Placement (--placement). A gateway fronts workers on other machines (a GPU server, a vLLM
deployment), so what it costs is the time it adds, not CPU it takes from the worker's compute.
On one machine the default, separate, gives the worker the first half of the CPUs and the
appliance with the load generator the other half (CPU affinity inherited at start); the load
generator sits on the front's half on both sides, so a direct round and a gateway round differ
only by the appliance. shared lets every process run on every CPU: there the appliance's CPU per
streamed token is taken from the worker's, and on a machine with few cores the ratio measures
that contention as much as the gateway (docs/benchmarks.md, "Gateway overhead").

Keep-alive (--keep-alive-s, default 60). With sides alternating, one side's connections wait
up to two rounds (~9 s here) between uses; with the servers' 5 s default they were closed and
reopened at the start of such a round, which made every round after a side switch ~5% (direct)
to ~15% (through the appliance) slower. The worker (--keep-alive-timeout) and the appliance
(limits.idle_timeout_ms) keep idle connections this long, and the appliance's upstream pool
(router.backends[].keep_alive_ms) a second less, so no round reconnects.

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
from daemon_harness import Daemon, base_config, request  # noqa: E402


# Presets of the two measuring methods (module docstring).
METHODS = {
    "steady": {"requests": 8, "rounds": 5, "order": "alternate", "max_tokens_spread": 0},
    "waves": {"requests": 2, "rounds": 3, "order": "fixed", "max_tokens_spread": 0},
    "mixed": {"requests": 8, "rounds": 5, "order": "alternate", "max_tokens_spread": 16},
}


def percentile(values, fraction):
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, int(round(fraction * len(ordered) + 0.5)))
    return ordered[min(rank, len(ordered)) - 1]


def run_load(args, direct_url, gateway_url, api_key):
    command = [args.load, "--direct", direct_url, "--gateway", gateway_url, "--api-key", api_key,
               "--model", DEFAULT_MODEL, "--streams", str(args.streams), "--requests", str(args.requests),
               "--rounds", str(args.rounds), "--max-tokens", str(args.max_tokens), "--order", args.order,
               "--warmup-requests", str(args.warmup_requests), "--max-tokens-spread", str(args.max_tokens_spread)]
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


def writer_counters(daemon):
    """The appliance's background writers' counters from /metrics (kimi_audit_*, kimi_usage_ledger_*)."""
    reply = request(daemon, "GET", "/metrics")
    counters = {}
    for line in reply.body.split("\n"):
        if line.startswith(("kimi_audit_", "kimi_usage_ledger_")):
            name, value = line.rsplit(" ", 1)
            counters[name] = float(value)
    return counters


def cpu_seconds(pid):
    """User + system CPU time a process has used so far (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def placement_cpus(placement):
    """The CPU sets of the worker and of the front (the appliance and the load generator).

    separate: the first half of this process's CPUs for the worker, the rest for the front, so
    that the appliance's work never takes CPU from the worker's compute, as with a worker on its
    own machine; with a single CPU there is nothing to separate and both get it."""
    cpus = sorted(os.sched_getaffinity(0))
    if placement == "shared" or len(cpus) < 2:
        return set(cpus), set(cpus)
    half = len(cpus) // 2
    return set(cpus[:half]), set(cpus[half:])


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", required=True, help="the kimi-bench-gateway-load binary")
    parser.add_argument("--streams", type=int, default=64)
    parser.add_argument("--method", choices=sorted(METHODS), default="steady",
                        help="preset of --requests, --rounds, --order, --max-tokens-spread: steady (default), "
                             "waves or mixed (steady plus a max_tokens spread of 16; see above)")
    parser.add_argument("--requests", type=int, help="requests each stream sends per round")
    parser.add_argument("--max-tokens", type=int, default=32, help="max_tokens of each request (the mean with a spread)")
    parser.add_argument("--max-tokens-spread", type=int,
                        help="each request's max_tokens drawn from [max_tokens - S, max_tokens + S], the same "
                             "sequence on both sides (0 with steady and waves, 16 with mixed)")
    parser.add_argument("--rounds", type=int, help="measured pairs of rounds (one round per side)")
    parser.add_argument("--order", choices=("fixed", "alternate"), help="side order in the pairs")
    parser.add_argument("--warmup-requests", type=int, default=2,
                        help="requests per stream in each side's warm-up round (at most --requests)")
    parser.add_argument("--threads", type=int, default=1, help="the worker's kernel threads")
    parser.add_argument("--placement", choices=("separate", "shared"), default="separate",
                        help="separate (default): the worker on one half of the CPUs, the appliance and the load "
                             "generator on the other, as a worker on its own machine; shared: every process on "
                             "every CPU (module docstring)")
    parser.add_argument("--keep-alive-s", type=int, default=60, choices=range(2, 3601), metavar="2..3600",
                        help="how long the worker and the appliance keep an idle client connection open; "
                             "longer than a side waits between its rounds, so rounds reconnect nothing")
    parser.add_argument("--audit-commit-window-ms", type=int,
                        help="the appliance's audit.commit_window_ms (default: the appliance's own default)")
    args = parser.parse_args()
    for key, value in METHODS[args.method].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if not 0 <= args.max_tokens_spread < args.max_tokens:
        parser.error("--max-tokens-spread must be at least 0 and below --max-tokens")
    print("method %s, max_tokens %d, spread %d" % (args.method, args.max_tokens, args.max_tokens_spread), flush=True)

    fixture = ModelFixture()
    worker_cpus, front_cpus = placement_cpus(args.placement)
    # A child inherits the CPU set its parent has when it starts: set ours before each start.
    all_cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, worker_cpus)
    worker = EngineWorker(fixture.model_dir, threads=args.threads, max_num_seqs=args.streams,
                          default_max_tokens=args.max_tokens, keep_alive_timeout_s=args.keep_alive_s)
    config = base_config(limits={"max_connections": 4 * args.streams, "idle_timeout_ms": 1000 * args.keep_alive_s})
    config.update(upstream_route(worker.url))
    # The appliance's pool keeps idle upstream connections a second less than the worker does.
    config["router"]["backends"][0]["keep_alive_ms"] = 1000 * (args.keep_alive_s - 1)
    if args.audit_commit_window_ms is not None:
        config.setdefault("audit", {})["commit_window_ms"] = args.audit_commit_window_ms
    os.sched_setaffinity(0, front_cpus)  # the appliance, and the load generator started below
    daemon = Daemon(config=config)
    try:
        if not wait_until_routable(daemon):
            raise SystemExit("the appliance never saw its worker healthy")
        print("machine: %d CPUs, load average before: %s; placement %s: worker on CPUs %s, appliance and load on %s" %
              (os.cpu_count(), loadavg(), args.placement, sorted(worker_cpus), sorted(front_cpus)))
        start = time.monotonic()
        cpu_before = {"appliance": cpu_seconds(daemon.proc.pid), "worker": cpu_seconds(worker.proc.pid)}
        writers_before = writer_counters(daemon)
        result = run_load(args, worker.url, "http://127.0.0.1:%d" % daemon.port, daemon.api_key)
        writers = {k: v - writers_before.get(k, 0) for k, v in writer_counters(daemon).items()}
        cpu = {name: cpu_seconds(proc.pid) - cpu_before[name]
               for name, proc in (("appliance", daemon.proc), ("worker", worker.proc))}
        print("load average after: %s; the run took %.1f s" % (loadavg(), time.monotonic() - start))
    finally:
        daemon.stop()
        daemon.close()
        worker.stop()
        os.sched_setaffinity(0, all_cpus)

    measured = {side: [r for r in result["rounds"] if r["side"] == side] for side in ("direct", "gateway")}
    direct, gateway = merge_rounds(measured["direct"]), merge_rounds(measured["gateway"])
    print("method %s: %d streams x %d requests x %d rounds per side (order %s), max_tokens %d, spread %d "
          "(max_tokens summed over each side's measured requests: %d), worker threads %d" %
          (args.method, args.streams, args.requests, args.rounds, args.order, args.max_tokens, args.max_tokens_spread,
           sum(r["max_tokens_requested"] for r in measured["direct"]), args.threads))
    print("%-8s %10s %8s %12s %12s %12s %12s" % ("side", "tokens", "tok/s", "lat p50 ms", "lat p99 ms",
                                                 "first p50", "first p99"))
    for name, side in (("direct", direct), ("gateway", gateway)):
        print("%-8s %10d %8.1f %12.1f %12.1f %12.1f %12.1f" % (
            name, side["tokens"], side["tokens_per_s"], statistics.median(side["latency_ms"]),
            percentile(side["latency_ms"], 0.99), statistics.median(side["first_frame_ms"]),
            percentile(side["first_frame_ms"], 0.99)))
    print("per round tok/s direct:  %s" % ", ".join("%.1f" % r["tokens_per_s"] for r in measured["direct"]))
    print("per round tok/s gateway: %s" % ", ".join("%.1f" % r["tokens_per_s"] for r in measured["gateway"]))
    pair_ratios = []
    for pair in range(args.rounds):
        sides = {r["side"]: r for r in result["rounds"] if r.get("pair") == pair}
        pair_ratios.append(sides["gateway"]["tokens_per_s"] / sides["direct"]["tokens_per_s"])
    print("per pair ratio gateway/direct: %s" % ", ".join("%.3f" % x for x in pair_ratios))
    print("median pair ratio: %.3f (min %.3f, max %.3f)" % (statistics.median(pair_ratios), min(pair_ratios),
                                                            max(pair_ratios)))
    print("throughput ratio gateway/direct (totals): %.3f (target >= 0.95)" %
          (gateway["tokens_per_s"] / direct["tokens_per_s"]))
    # The appliance is idle during the direct rounds: its CPU time is the gateway's, warm-up included.
    warmup_requests = min(args.warmup_requests, args.requests)
    gateway_requests = (args.rounds * args.requests + warmup_requests) * args.streams
    gateway_tokens = gateway["tokens"] * gateway_requests / (args.rounds * args.requests * args.streams)
    print("CPU over the run (both sides, warm-up included): worker %.2f s, appliance %.2f s = %.2f ms per gateway "
          "request, %.1f us per gateway token" % (cpu["worker"], cpu["appliance"], 1000 * cpu["appliance"] / gateway_requests,
                                                   1e6 * cpu["appliance"] / gateway_tokens))
    transactions = writers.get("kimi_audit_transactions_total", 0)
    if "kimi_audit_transactions_total" not in writers:
        print("audit writer and usage ledger counters: not on this appliance's /metrics")
    else:
        print("audit writer over the run: %d records in %d transactions (%.1f a commit), %d WAL checkpoints; "
              "usage ledger: %d flushes" % (writers["kimi_audit_records_committed_total"], transactions,
                                            writers["kimi_audit_records_committed_total"] / max(transactions, 1),
                                            writers["kimi_audit_wal_checkpoints_total"],
                                            writers["kimi_usage_ledger_flushes_total"]))
    # Where the slowest requests lost their time: before their first frame (queueing, connect,
    # authentication, routing) or after it (the stream, the audit commit before the last frames).
    for name, side in (("direct", direct), ("gateway", gateway)):
        print("%s slowest latency: %s ms; slowest first frame: %s ms" % (
            name, ", ".join("%.0f" % x for x in sorted(side["latency_ms"])[-3:]),
            ", ".join("%.0f" % x for x in sorted(side["first_frame_ms"])[-3:])))
    for label, key in (("request latency", "latency_ms"), ("time to first frame", "first_frame_ms")):
        print("added %s: median %+.1f ms, p99 %+.1f ms" % (
            label, statistics.median(gateway[key]) - statistics.median(direct[key]),
            percentile(gateway[key], 0.99) - percentile(direct[key], 0.99)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
