"""The real kimi-appliance daemon for the conformance suites, and the checks they share.

Starts the daemon through tests/integration/daemon_harness.py (its Daemon class and its
request()/read_reply() helpers, so a credential the harness adds reaches these tests too),
serving a model:

  KIMI_CONFORMANCE_CONFIG   path of a JSON object merged over the harness's base config (a
                            "model" section of your own); else
  KIMI_ENGINE_BIN, KIMICTL_BIN  the harness signs a fresh random-weight k3-nano model
                            (daemon_harness.make_signed_model) and serves it as "kimi-k3".
Without either, the daemon serves no model and only the rules' refusals are fully checked.

  KIMI_CONFORMANCE_BACKEND  "embedded" (default): the daemon loads the model itself;
                            "upstream": a `kimi-engine serve` worker on loopback serves the
                            model and the daemon's router reaches it as its only backend, so
                            every suite checks the upstream path with the same expectations.

Python standard library only (Debian's python3); jsonschema (python3-jsonschema) is used when
installed and the structured-output checks skip without it.
"""
import atexit
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from daemon_harness import (EXIT_TIMEOUT_S, KIMI_ENGINE, KIMICTL, START_TIMEOUT_S, Daemon, base_config,  # noqa: E402
                            make_signed_model, post_json, request, wait_until_ready)

CHAT_PATH = "/v1/chat/completions"
COMPLETIONS_PATH = "/v1/completions"
DEFAULT_MODEL = "kimi-k3"
# Answers are cut short: the rules are about requests, and a random-weight model says nothing useful.
SHORT_ANSWER_TOKENS = 4


def merge(base, override):
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


class ModelFixture:
    """A signed random-weight k3-nano model in a temporary directory."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="kimi-conformance-model-")
        self.model_dir, self.trust_store, _ = make_signed_model(self.tmp.name)

    def config(self):
        return {"model": {"dir": self.model_dir, "trust_store": self.trust_store, "served_id": DEFAULT_MODEL,
                          "threads": 1, "max_num_seqs": 8, "default_max_tokens": 16}}


class EngineWorker:
    """`kimi-engine serve` on a free loopback port, serving `model_dir` as DEFAULT_MODEL, by
    default with the engine settings ModelFixture gives the embedded engine."""

    def __init__(self, model_dir, threads=1, max_num_seqs=8, default_max_tokens=16, keep_alive_timeout_s=None):
        self.lines = []
        self._queue = queue.Queue()
        command = [KIMI_ENGINE, "serve", "--model", model_dir, "--port", "0", "--served-model-name", DEFAULT_MODEL,
                   "--threads", str(threads), "--max-num-seqs", str(max_num_seqs),
                   "--default-max-tokens", str(default_max_tokens),
                   "--max-connections", str(max(128, 2 * max_num_seqs + 16))]
        if keep_alive_timeout_s is not None:
            command += ["--keep-alive-timeout", str(keep_alive_timeout_s)]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # Drained for the worker's whole life, so a full pipe never blocks it.
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        self.url = self._wait_for_listening()

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            self._queue.put(line)
        self._queue.put(None)

    def _wait_for_listening(self):
        while True:
            try:
                line = self._queue.get(timeout=START_TIMEOUT_S * 4)
            except queue.Empty:
                line = None
            if line is None:
                self.stop()
                raise RuntimeError("kimi-engine serve did not report listening:\n" + "\n".join(self.lines))
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("msg") == "listening":
                return "http://" + event["address"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=EXIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if os.environ.get("KIMI_IT_VERBOSE"):
            print("\n--- worker log ---\n" + "\n".join(self.lines), file=sys.stderr)


def upstream_mode():
    return os.environ.get("KIMI_CONFORMANCE_BACKEND", "embedded") == "upstream"


_fixture = None
_worker = None


def _stop_worker():
    if _worker is not None:
        _worker.stop()


def upstream_config(model_dir):
    """The router section that sends every request for DEFAULT_MODEL to one worker serving
    `model_dir` (started once per process, stopped at exit); the daemon loads no model."""
    global _worker
    if _worker is None:
        _worker = EngineWorker(model_dir)
        atexit.register(_stop_worker)
    return upstream_route(_worker.url)


def upstream_route(url):
    """The config section routing DEFAULT_MODEL to the worker at `url` and nowhere else."""
    return {"router": {"backends": [{"name": "worker", "kind": "upstream", "url": url,
                                     "models": [DEFAULT_MODEL], "health_interval_ms": 200}]}}


def conformance_config():
    """The daemon config: base, plus KIMI_CONFORMANCE_CONFIG or a synthetic model, served by the
    daemon itself or (KIMI_CONFORMANCE_BACKEND=upstream) by a worker behind its router."""
    global _fixture
    config = base_config()
    extra = os.environ.get("KIMI_CONFORMANCE_CONFIG")
    if extra:
        with open(extra) as f:
            config = merge(config, json.load(f))
    elif KIMI_ENGINE and KIMICTL:
        if _fixture is None:
            _fixture = ModelFixture()
        config = merge(config, _fixture.config())
    if upstream_mode() and config.get("model", {}).get("dir"):
        model = config.pop("model")
        config = merge(config, upstream_config(model["dir"]))
    return config


def wait_until_routable(daemon, timeout=START_TIMEOUT_S * 4):
    """Polls GET /v1/models until the router lists a model (its upstream passed a health check)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = request(daemon, "GET", "/v1/models")
        if reply.status == 200 and reply.json().get("data"):
            return True
        time.sleep(0.1)
    return False


def model_served(daemon, config):
    """True once the configured model is verified and loaded (or its upstream is healthy);
    False without one."""
    if config.get("router", {}).get("backends"):
        return wait_until_routable(daemon)
    if not config.get("model", {}).get("dir"):
        return False
    state = wait_until_ready(daemon)
    return bool(state and state["ready"])


def error_of(reply):
    """The OpenAI error object of a reply, or None when the body is not one."""
    try:
        body = reply.json()
    except ValueError:
        return None
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        return None
    return body["error"]


# Set when a suite found the chat route missing (404); main() then exits with SKIP_EXIT_CODE.
route_missing = False
SKIP_EXIT_CODE = 77  # CTest's SKIP_RETURN_CODE for these suites


def main():
    """unittest.main(), exiting 77 when the suites were skipped because the route is absent."""
    program = unittest.main(exit=False)
    result = program.result
    if route_missing and result.wasSuccessful():
        print("SKIP: the chat completions route answers 404 in this build")
        sys.exit(SKIP_EXIT_CODE)
    sys.exit(0 if result.wasSuccessful() else 1)


class DaemonSuite(unittest.TestCase):
    """One daemon per test class. Skips the class when the API routes are absent (404)."""

    daemon = None
    model = DEFAULT_MODEL
    model_ready = False
    extra_config = None  # merged over the suite's daemon config

    @classmethod
    def setUpClass(cls):
        config = conformance_config()
        if cls.extra_config:
            config = merge(config, cls.extra_config)
        cls.daemon = Daemon(config=config)
        probe = post_json(cls.daemon, CHAT_PATH, {"model": DEFAULT_MODEL, "messages": []})
        if probe.status == 404 and (error_of(probe) or {}).get("code") == "unknown_route":
            global route_missing
            route_missing = True
            cls.tearDownClass()
            raise unittest.SkipTest("POST %s answers 404 (no such route in this build): the chat "
                                    "endpoint has not landed, nothing to check yet" % CHAT_PATH)
        models = request(cls.daemon, "GET", "/v1/models")
        if models.status == 200:
            data = models.json().get("data") or []
            if data:
                cls.model = data[0]["id"]
        cls.model_ready = model_served(cls.daemon, config)

    @classmethod
    def tearDownClass(cls):
        if cls.daemon is not None:
            cls.daemon.stop()
            cls.daemon.close()
            cls.daemon = None

    # ---- requests ----

    def chat_body(self, **fields):
        body = {"model": self.model, "messages": [{"role": "user", "content": "Say 'OK' and nothing else."}],
                "max_tokens": SHORT_ANSWER_TOKENS}
        body.update(fields)
        return body

    def chat(self, **fields):
        return post_json(self.daemon, CHAT_PATH, self.chat_body(**fields))

    def chat_raw(self, body):
        return post_json(self.daemon, CHAT_PATH, body)

    # ---- expectations ----

    def assertRejected(self, reply, field, fragment=None):
        """A 400 in OpenAI's error shape (JSON, never an event stream) whose message names `field`."""
        self.assertEqual(reply.status, 400, "expected 400 naming %s, got %d: %s" % (field, reply.status, reply.body))
        self.assertEqual(reply.headers.get("content-type"), "application/json", reply.headers)
        error = error_of(reply)
        self.assertIsNotNone(error, reply.body)
        self.assertEqual(set(error), {"message", "type", "param", "code"}, reply.body)
        self.assertEqual(error["type"], "invalid_request_error", reply.body)
        self.assertIn(field, error["message"], reply.body)
        if fragment is not None:
            self.assertIn(fragment, error["message"], reply.body)
        if error["param"] is not None:
            self.assertEqual(error["param"], field, reply.body)
        return error

    def requireModel(self):
        if not self.model_ready:
            self.skipTest("no model is loaded (/readyz is not 200): set KIMI_CONFORMANCE_CONFIG to a config "
                          "that serves one to check the accepted cases")

    def assertPassedRules(self, reply):
        """The request rules let it through: not a 400, whatever serving said next."""
        self.assertNotEqual(reply.status, 400, "refused by the request rules: %s" % reply.body)

    def assertAccepted(self, reply):
        """A 200 with a chat completion; returns the parsed body (non-streaming). Without a
        loaded model only the absence of a 400 is checked, then the test skips."""
        self.assertPassedRules(reply)
        self.requireModel()
        self.assertEqual(reply.status, 200, reply.body)
        body = reply.json()
        self.assertEqual(body["object"], "chat.completion", reply.body)
        self.assertEqual(len(body["choices"]), 1, reply.body)
        return body

    def assertAcceptedStream(self, reply):
        self.assertPassedRules(reply)
        self.requireModel()
        self.assertEqual(reply.status, 200, reply.body)
        self.assertTrue(reply.headers.get("content-type", "").startswith("text/event-stream"), reply.headers)
