"""No phone-home: the appliance connects to nothing but loopback, local sockets and the upstream
backends its configuration names.

The daemon and every kimictl command run under strace (connect, sendto, sendmsg, sendmmsg),
through a whole life: kimictl makes a signing key, signs a model, creates the API key, checks
the configuration and makes a TLS certificate; the daemon starts with an embedded engine and
an upstream at a documentation address (192.0.2.10, RFC 5737: nothing answers there), serves
/healthz, /readyz, /v1/models, /metrics, the console, chat completions (whole and streamed,
on the embedded engine and on the unreachable upstream), imports and activates a model through
the admin API, and stops on SIGTERM; kimictl then lists models and verifies the audit log.
Every address in every traced call must be AF_UNIX, loopback, or the configured upstream; the
upstream must appear (so the trace is known to see the daemon's outbound connections).

The whole test runs in a private network namespace that it makes (only `lo`, up): the attempts
to reach the upstream fail at once there and strace still records them, while no packet leaves
this machine. Skipped (exit 77) where no namespace can be made, and when strace is missing or
cannot trace here (a container without ptrace); it never falls back to the host's network.
Run by CTest with KIMI_APPLIANCE_BIN, KIMICTL_BIN and KIMI_ENGINE_BIN set.
"""
import glob
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "integration"))
import daemon_harness  # noqa: E402
import private_netns  # noqa: E402
from daemon_harness import Daemon, base_config, make_signed_model, post_json, request, run_to_exit  # noqa: E402

SKIP = 77
TRACED_CALLS = "connect,sendto,sendmsg,sendmmsg"
UPSTREAM = ("192.0.2.10", 8000)
MODEL_ID = "kimi-k3-nano"
WAIT_S = 120  # bounds on waiting; they only stop a hung test

# One traced call's address: the family and the rest of the sockaddr as strace prints it.
SOCKADDR = re.compile(r"\{sa_family=(AF_[A-Z0-9]+)(.*?)\}")
INET = re.compile(r'sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
INET6 = re.compile(r'sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"')


def strace_usable():
    if shutil.which("strace") is None:
        return "strace is not installed (packaging/build-deps.sh installs it)"
    probe = subprocess.run(["strace", "-o", os.devnull, "-e", "trace=none", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return "strace cannot trace here: " + probe.stderr.strip()
    return None


def traced_wrapper(directory, name, real, trace_dir):
    """A script that runs `real` under strace -D (strace as a detached grandchild, so the
    traced program keeps the wrapper's pid and receives the test's signals itself), writing
    the trace to trace_dir/NAME.PID."""
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write('#!/bin/sh\nexec strace -D -f -q -e signal=none -e trace=%s -o "%s/%s.$$" "%s" "$@"\n'
                % (TRACED_CALLS, trace_dir, name, real))
    os.chmod(path, 0o755)
    return path


def wait_for_trace_end(path, pid):
    """strace writes "PID +++ exited with N +++" last, once the traced program has exited."""
    deadline = time.monotonic() + WAIT_S
    end = re.compile(r"^%d\s+\+\+\+ exited with" % pid, re.MULTILINE)
    while time.monotonic() < deadline:
        with open(path) as f:
            if end.search(f.read()):
                return
        time.sleep(0.05)
    raise AssertionError("strace did not finish %s" % path)


def addresses(trace_text):
    """(family, host, port, line) of every traced call that names an address."""
    out = []
    for line in trace_text.splitlines():
        if not re.search(r"\b(connect|sendto|sendmsg|sendmmsg)\(", line):
            continue
        for m in SOCKADDR.finditer(line):
            family, rest = m.group(1), m.group(2)
            host = port = None
            inet = (INET if family == "AF_INET" else INET6).search(rest) if family in ("AF_INET", "AF_INET6") else None
            if inet:
                port, host = int(inet.group(1)), inet.group(2)
            out.append((family, host, port, line))
    return out


def is_loopback(host):
    address = ipaddress.ip_address(host)
    if getattr(address, "ipv4_mapped", None):
        address = address.ipv4_mapped
    return address.is_loopback


class NoPhoneHomeTest(unittest.TestCase):
    def test_only_loopback_local_sockets_and_configured_upstreams(self):
        self.assertTrue(private_netns.in_private_netns(), private_netns.interfaces())
        tmp = tempfile.TemporaryDirectory(prefix="kimi-no-phone-home-")
        self.addCleanup(tmp.cleanup)
        trace_dir = os.path.join(tmp.name, "traces")
        os.makedirs(trace_dir)
        real_daemon, real_kimictl = daemon_harness.DAEMON, daemon_harness.KIMICTL
        daemon_harness.DAEMON = traced_wrapper(tmp.name, "kimi-appliance", real_daemon, trace_dir)
        daemon_harness.KIMICTL = traced_wrapper(tmp.name, "kimictl", real_kimictl, trace_dir)
        self.addCleanup(setattr, daemon_harness, "DAEMON", real_daemon)
        self.addCleanup(setattr, daemon_harness, "KIMICTL", real_kimictl)
        kimictl = daemon_harness.KIMICTL

        media = os.path.join(tmp.name, "media")
        model, public_key, _ = make_signed_model(media)  # kimictl keygen and model sign, traced
        tls_dir = os.path.join(tmp.name, "tls")
        code, _, err = run_to_exit([kimictl, "tls", "selfsigned", "--dir", tls_dir])
        self.assertEqual(code, 0, err)

        config = base_config()
        config["model"] = {"trust_store": public_key, "served_id": MODEL_ID, "threads": 1, "import_roots": [media]}
        config["router"] = {"backends": [
            {"name": "local", "kind": "embedded"},
            {"name": "remote", "kind": "upstream", "url": "http://%s:%d" % UPSTREAM, "models": ["remote-model"],
             "connect_timeout_ms": 200, "timeout_ms": 1000, "health_interval_ms": 200}]}
        config_path = os.path.join(tmp.name, "appliance.json")
        with open(config_path, "w") as f:
            json.dump(config, f)
        code, _, err = run_to_exit([kimictl, "config", "check", "--config", config_path])
        self.assertEqual(code, 0, err)

        daemon = Daemon(config=config)  # kimictl key create, then the daemon, both traced
        self.addCleanup(daemon.close)
        self.exercise(daemon, model)
        self.assertEqual(daemon.stop(), 0)
        daemon_pid = daemon.proc.pid

        for args in (["model", "list", "--data-dir", daemon.data_dir],
                     ["audit", "verify", "--data-dir", daemon.data_dir]):
            code, out, err = run_to_exit([kimictl, *args])
            self.assertEqual(code, 0, out + err)

        traces = sorted(glob.glob(os.path.join(trace_dir, "*")))
        daemon_trace = os.path.join(trace_dir, "kimi-appliance.%d" % daemon_pid)
        self.assertIn(daemon_trace, traces)
        self.assertGreaterEqual(len(traces), 8, traces)  # the daemon and seven kimictl runs
        seen_upstream = 0
        local = 0
        for path in traces:
            wait_for_trace_end(path, int(path.rsplit(".", 1)[1]))
            with open(path) as f:
                text = f.read()
            for family, host, port, line in addresses(text):
                if family in ("AF_UNIX", "AF_UNSPEC"):
                    local += 1
                elif family in ("AF_INET", "AF_INET6") and host is not None and is_loopback(host):
                    local += 1
                elif family in ("AF_INET", "AF_INET6") and (host, port) == UPSTREAM:
                    seen_upstream += 1
                else:
                    self.fail("%s reached a destination that is neither local nor a configured upstream:\n%s"
                              % (os.path.basename(path), line))
        self.assertGreater(seen_upstream, 0, "the trace shows no connection to the configured upstream")
        print("traced %d programs: %d calls to local addresses, %d to the configured upstream %s:%d, none elsewhere"
              % (len(traces), local, seen_upstream, *UPSTREAM))

    def exercise(self, daemon, model):
        for path in ("/healthz", "/readyz", "/metrics", "/v1/models", "/console/"):
            request(daemon, "GET", path)
        # A model through the admin API: imported from the "medium", then activated.
        job = daemon_harness.import_model(daemon, "k3", model, timeout=WAIT_S)
        self.assertEqual(job["state"], "succeeded", job)
        reply = post_json(daemon, "/admin/v1/models/activate", {"model": "k3", "digest": job["version"]["digest"]})
        self.assertEqual(reply.status, 200, reply.body)
        state = daemon_harness.wait_until_ready(daemon)
        self.assertTrue(state and state["ready"], state)
        chat = {"model": MODEL_ID, "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 4}
        self.assertEqual(post_json(daemon, "/v1/chat/completions", chat).status, 200)
        self.assertEqual(post_json(daemon, "/v1/chat/completions", dict(chat, stream=True)).status, 200)
        # The upstream is configured but unreachable, so its model is not served.
        remote = post_json(daemon, "/v1/chat/completions", dict(chat, model="remote-model"))
        self.assertIn(remote.status, (404, 503), remote.body)
        # Health checks of the upstream run meanwhile; give them a few intervals.
        time.sleep(1)


if __name__ == "__main__":
    private_netns.run_inside_private_netns()
    reason = strace_usable()
    if reason:
        print("skip: " + reason)
        sys.exit(SKIP)
    unittest.main()
