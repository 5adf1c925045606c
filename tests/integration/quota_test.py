"""Integration tests of per-key and per-role quotas through the real daemon: token quotas per
day counted from the token counts of requests (kept across a restart), tokens per minute,
role limits combined with a key's own, requests cut short counted with what they generated,
an audit record for every 429, concurrent-stream limits released when a stream ends or its
client goes away, allowed models per key, the admin usage, limits and roles routes, and an
upstream that will not end, ignores max_tokens or reports no usage. The daemon routes chat to a scripted OpenAI-compatible upstream on
loopback (below), so token counts and stream lengths are fixed and nothing depends on a
model's output. Python standard library only.
"""
import json
import os
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from auth_test import wait_for_record  # noqa: E402
from daemon_harness import Daemon, base_config, post_json, read_head, request, send_request  # noqa: E402

WAIT_S = 20  # bound on waiting for a state change; only stops a hung test
PROMPT_TOKENS, COMPLETION_TOKENS = 10, 5  # what the upstream reports for every request
MODELS = ["m-a", "m-b"]


DEEP = 200000


def deeply_nested():
    """An object DEEP levels deep: parsed without harm, but walking it recursively overflows a stack."""
    return '{"a":' * DEEP + "1" + "}" * DEEP


class Upstream:
    """A scripted upstream: streams one piece of text, a finish and a usage chunk. A request
    whose last message says "hold" stops after its first chunk until release(). Hostile ones:
    "ping-after-done" keeps the response open with pings after [DONE], "endless" streams text
    without end, "no-usage" leaves out the usage chunk, "unauthorized" refuses the appliance's
    credential, "deep" streams a tool call whose arguments nest DEEP levels, "deep-answer" and
    "deep-error" answer with such a value whole; `ended` is set when the daemon closed
    a response that would not end by itself; `bodies` holds every request body received."""

    def __init__(self):
        self.released = threading.Event()
        self.ended = threading.Event()
        self.bodies = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send_json(self, body):
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _chunk(self, payload):
                data = ("data: %s\n\n" % payload).encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            def do_GET(self):
                if self.path == "/health":
                    self._send_json({"status": "ok"})
                else:
                    self._send_json({"object": "list", "data": [{"id": m, "object": "model"} for m in MODELS]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                upstream.bodies.append(body)
                chat = "messages" in body  # else a text completion, answered in its own shape
                said = body["messages"][-1]["content"] if chat else body["prompt"]
                hold, die = said == "hold", said == "die"
                if said in ("deep-answer", "deep-error"):
                    message = {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "@"}}]}
                    whole = {"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                             "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
                    if said == "deep-error":
                        whole = {"error": {"message": "m", "param": "@", "code": 400}}
                    data = json.dumps(whole).replace('"@"', deeply_nested()).encode()
                    self.send_response(400 if said == "deep-error" else 200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if said == "unauthorized":  # the appliance's own credential refused
                    data = json.dumps({"error": {"message": "Incorrect API key sk-upstream-secret", "code": 401}}).encode()
                    self.send_response(401)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()

                def chunk(choices, **extra):
                    c = {"id": "c1", "object": "chat.completion.chunk" if chat else "text_completion", "created": 0,
                         "model": body["model"], "choices": choices}
                    c.update(extra)
                    return json.dumps(c)
                try:
                    first = {"delta": {"role": "assistant", "content": "ok"}} if chat else {"text": "ok"}
                    self._chunk(chunk([dict(first, index=0, finish_reason=None)]))
                    if hold:
                        upstream.released.wait(WAIT_S * 3)
                    if die:  # the backend fails mid-stream: the connection ends without a finish
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    if said == "deep":
                        call = {"index": 0, "id": "c", "type": "function", "function": {"name": "f", "arguments": "@"}}
                        deep = chunk([{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}])
                        self._chunk(deep.replace('"@"', deeply_nested()))
                    if said == "endless":
                        more = {"delta": {"content": "x"}} if chat else {"text": "x"}
                        self._write_until_closed(lambda: self._chunk(chunk([dict(more, index=0, finish_reason=None)])))
                        return
                    last = {"delta": {}} if chat else {"text": ""}
                    self._chunk(chunk([dict(last, index=0, finish_reason="stop")]))
                    if said != "no-usage":
                        self._chunk(chunk([], usage={"prompt_tokens": PROMPT_TOKENS,
                                                     "completion_tokens": COMPLETION_TOKENS,
                                                     "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS}))
                    self._chunk("[DONE]")
                    if said == "ping-after-done":
                        self._write_until_closed(lambda: self._write_ping())
                        return
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _write_ping(self):
                data = b": ping\n\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            def _write_until_closed(self, write):
                """Writes until the daemon closes the connection (bounded, so a failing test ends)."""
                self.close_connection = True
                deadline = time.monotonic() + WAIT_S * 3
                try:
                    while time.monotonic() < deadline:
                        write()
                        time.sleep(0.01)
                except (BrokenPipeError, ConnectionResetError):
                    upstream.ended.set()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def close(self):
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


def upstream_config(upstream, data_dir=None, **auth):
    config = base_config()
    config["router"] = {"backends": [{"name": "scripted", "kind": "upstream", "url": upstream.url,
                                      "models": MODELS, "health_interval_ms": 100}]}
    if data_dir:
        config["storage"] = {"data_dir": data_dir}
    if auth:
        config["auth"] = auth
    return config


def chat(daemon, key, content="hi", model="m-a", stream=False, request_id=None):
    body = {"model": model, "messages": [{"role": "user", "content": content}], "max_tokens": 8, "stream": stream}
    headers = {"Content-Type": "application/json"}
    if request_id:
        headers["X-Request-Id"] = request_id
    return request(daemon, "POST", "/v1/chat/completions", headers, json.dumps(body).encode(), auth=key)


def patch_key(daemon, key_id, fields):
    return request(daemon, "PATCH", "/admin/v1/keys/" + key_id, {"Content-Type": "application/json"},
                   json.dumps(fields).encode())


def create_key(daemon, **fields):
    reply = post_json(daemon, "/admin/v1/keys", dict({"name": "quota-test", "role": "user"}, **fields))
    assert reply.status == 201, reply.body
    return reply.json()["key"], reply.json()["id"]


def wait_until_served(test, daemon):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        reply = request(daemon, "GET", "/v1/models")
        if reply.status == 200 and reply.json()["data"]:
            return
        time.sleep(0.1)
    test.fail("the upstream never became healthy: " + reply.body)


def assert_rate_limited(test, reply, words, daemon=None):
    """A 429 naming the limit, with Retry-After; with `daemon`, its audit record is checked too
    (the reply's X-Request-Id, status 429, the refusal in the detail)."""
    test.assertEqual(reply.status, 429, reply.body)
    error = reply.json()["error"]
    test.assertEqual(error["type"], "rate_limit_error")
    test.assertIn(words, error["message"])
    test.assertGreaterEqual(int(reply.headers["retry-after"]), 1)
    if daemon is not None:
        request_id = reply.headers["x-request-id"]
        record = wait_for_record(daemon, lambda r: r["request_id"] == request_id)
        test.assertIsNotNone(record, "no audit record for the 429 of " + request_id)
        test.assertEqual(record["http_status"], 429)
        test.assertIn(words, record["detail"])


def open_held_stream(daemon, key):
    """Starts a streamed chat the upstream holds open; returns the socket once the 200 head is read."""
    s = daemon.connect()
    body = json.dumps({"model": "m-a", "messages": [{"role": "user", "content": "hold"}], "stream": True}).encode()
    send_request(s, "POST", "/v1/chat/completions", {"Content-Type": "application/json",
                                                     "Authorization": "Bearer " + key}, body)
    status, _, _, _ = read_head(s)
    assert status == 200, status
    return s


class TokenQuotaTest(unittest.TestCase):
    def setUp(self):
        self.upstream = Upstream()
        self.data = tempfile.mkdtemp(prefix="kimi-it-quota-")
        self.daemon = Daemon(config=upstream_config(self.upstream, self.data))
        wait_until_served(self, self.daemon)

    def tearDown(self):
        self.daemon.stop()
        self.daemon.close()
        self.upstream.close()
        shutil.rmtree(self.data, ignore_errors=True)

    def test_daily_quota_counts_finished_tokens_survives_a_restart_and_can_be_raised(self):
        per_request = PROMPT_TOKENS + COMPLETION_TOKENS
        key, key_id = create_key(self.daemon, tokens_per_day=per_request + 1)
        self.assertEqual(chat(self.daemon, key).status, 200)
        reply = chat(self.daemon, key, stream=True)  # below the quota: admitted, and crosses it
        self.assertEqual(reply.status, 200, reply.body)
        assert_rate_limited(self, chat(self.daemon, key), "tokens per day", self.daemon)

        usage = request(self.daemon, "GET", "/admin/v1/keys/%s/usage" % key_id).json()
        self.assertEqual(usage["day"]["requests"], 2)
        self.assertEqual(usage["day"]["prompt_tokens"], 2 * PROMPT_TOKENS)
        self.assertEqual(usage["day"]["completion_tokens"], 2 * COMPLETION_TOKENS)
        self.assertEqual(usage["month"]["total_tokens"], 2 * per_request)
        self.assertEqual(usage["limits"]["tokens_per_day"], per_request + 1)

        self.daemon.stop()
        self.daemon.close()
        self.daemon = Daemon(config=upstream_config(self.upstream, self.data))
        wait_until_served(self, self.daemon)
        assert_rate_limited(self, chat(self.daemon, key), "tokens per day")

        raised = patch_key(self.daemon, key_id, {"tokens_per_day": 10 * per_request})
        self.assertEqual(raised.status, 200, raised.body)
        self.assertEqual(raised.json()["tokens_per_day"], 10 * per_request)
        self.assertEqual(chat(self.daemon, key).status, 200)
        self.assertEqual(patch_key(self.daemon, "key_none", {"tokens_per_day": 1}).status, 404)
        self.assertEqual(patch_key(self.daemon, key_id, {"tokens_per_day": -1}).status, 400)

    def test_a_request_in_flight_holds_what_it_may_use_so_a_burst_cannot_pass_the_quota(self):
        # Every request of a burst used to see the same usage below the quota: all were served.
        key, key_id = create_key(self.daemon, tokens_per_day=1)
        held = open_held_stream(self.daemon, key)  # admitted at 0 used; may use its prompt + max_tokens
        try:
            refused = chat(self.daemon, key)
            assert_rate_limited(self, refused, "held by its requests in flight", self.daemon)
            self.assertEqual(refused.headers["retry-after"], "1")  # free again when the stream ends
        finally:
            self.upstream.released.set()
            held.close()
        self.wait_for_usage(key_id, lambda d: d["requests"] == 1)
        assert_rate_limited(self, chat(self.daemon, key), "resets at 00:00 UTC")

    def test_tokens_per_minute_refuses_until_the_minute_has_paid_for_them(self):
        per_request = PROMPT_TOKENS + COMPLETION_TOKENS
        key, key_id = create_key(self.daemon, tokens_per_minute=per_request)
        self.assertEqual(chat(self.daemon, key).status, 200)  # spends the whole bucket
        refused = chat(self.daemon, key)
        assert_rate_limited(self, refused, "tokens per minute", self.daemon)
        self.assertLessEqual(int(refused.headers["retry-after"]), 60 // per_request + 1)
        # Kept across a restart: the bucket is saved at shutdown.
        self.daemon.stop()
        self.daemon.close()
        self.daemon = Daemon(config=upstream_config(self.upstream, self.data))
        wait_until_served(self, self.daemon)
        assert_rate_limited(self, chat(self.daemon, key), "tokens per minute", self.daemon)

    def test_role_limits_hold_every_key_of_the_role_to_the_stricter_value(self):
        key, key_id = create_key(self.daemon, requests_per_minute=100)
        operator_key, _ = create_key(self.daemon, role="operator")
        changed = post_json(self.daemon, "/admin/v1/roles/user/limits", {"requests_per_minute": 2})
        self.assertEqual(changed.status, 200, changed.body)
        self.assertEqual(changed.json()["limits"]["requests_per_minute"], 2)
        roles = {r["role"]: r for r in request(self.daemon, "GET", "/admin/v1/roles").json()["data"]}
        self.assertEqual(roles["user"]["limits"]["requests_per_minute"], 2)
        self.assertIn("inference", roles["user"]["permissions"])
        self.assertEqual(roles["operator"]["limits"]["requests_per_minute"], 0)
        usage = request(self.daemon, "GET", "/admin/v1/keys/%s/usage" % key_id).json()
        self.assertEqual((usage["limits"]["requests_per_minute"], usage["effective_limits"]["requests_per_minute"]),
                         (100, 2))
        for _ in range(2):
            self.assertEqual(chat(self.daemon, key).status, 200)
        assert_rate_limited(self, chat(self.daemon, key), "2 requests per minute", self.daemon)
        for _ in range(3):  # another role is not held to the user role's limit
            self.assertEqual(chat(self.daemon, operator_key).status, 200)
        changed = wait_for_record(self.daemon, lambda r: r["action"] == "auth.role_limits_changed")
        self.assertEqual((changed["target"], changed["actor"]), ("user", self.daemon.api_key_id))
        self.assertEqual(post_json(self.daemon, "/admin/v1/roles/root/limits", {"tokens_per_day": 1}).status, 404)
        self.assertEqual(post_json(self.daemon, "/admin/v1/roles/user/limits", {"tokens_per_day": -1}).status, 400)
        # Kept across a restart.
        self.daemon.stop()
        self.daemon.close()
        self.daemon = Daemon(config=upstream_config(self.upstream, self.data))
        roles = {r["role"]: r for r in request(self.daemon, "GET", "/admin/v1/roles").json()["data"]}
        self.assertEqual(roles["user"]["limits"]["requests_per_minute"], 2)

    def wait_for_usage(self, key_id, predicate):
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            usage = request(self.daemon, "GET", "/admin/v1/keys/%s/usage" % key_id).json()
            if predicate(usage["day"]):
                return usage["day"]
            time.sleep(0.1)
        self.fail("usage never recorded: %s" % usage)

    def test_a_stream_cut_by_its_client_counts_what_it_generated(self):
        key, key_id = create_key(self.daemon)
        held = open_held_stream(self.daemon, key)
        held.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        held.close()
        day = self.wait_for_usage(key_id, lambda d: d["requests"] == 1)
        # No finish event, so no backend counts: the estimated prompt and one token for the one delta.
        self.assertGreater(day["prompt_tokens"], 0)
        self.assertEqual(day["completion_tokens"], 1)
        self.upstream.released.set()

    def test_a_backend_failing_mid_stream_counts_what_it_generated(self):
        key, key_id = create_key(self.daemon)
        for stream in (True, False):
            reply = chat(self.daemon, key, content="die", stream=stream)
            # Streamed: 200 and an error frame; whole: the backend's error status.
            self.assertIn("error", reply.body, reply.body)
        day = self.wait_for_usage(key_id, lambda d: d["requests"] == 2)
        self.assertGreater(day["prompt_tokens"], 0)
        self.assertEqual(day["completion_tokens"], 2)

    def test_a_user_key_may_not_read_usage(self):
        key, key_id = create_key(self.daemon)
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/keys/%s/usage" % key_id, auth=key).status, 403)


class HostileUpstreamTest(unittest.TestCase):
    """An upstream that will not end its response, ignores max_tokens or reports no usage
    holds nothing past its request and is charged what it sent."""

    def setUp(self):
        self.upstream = Upstream()
        self.daemon = Daemon(config=upstream_config(self.upstream))
        wait_until_served(self, self.daemon)
        self.key, self.key_id = create_key(self.daemon)

    def tearDown(self):
        self.daemon.stop()
        self.daemon.close()
        self.upstream.close()

    def usage(self, requests):
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            day = request(self.daemon, "GET", "/admin/v1/keys/%s/usage" % self.key_id).json()["day"]
            if day["requests"] == requests:
                return day
            time.sleep(0.05)
        self.fail("usage never showed %d requests" % requests)

    def test_pings_after_done_neither_delay_the_answer_nor_hold_the_upstream(self):
        for stream in (False, True):
            self.upstream.ended.clear()
            reply = chat(self.daemon, self.key, content="ping-after-done", stream=stream)
            self.assertEqual(reply.status, 200, reply.body)
            if stream:
                self.assertTrue(reply.body.rstrip().endswith("data: [DONE]"), reply.body[-200:])
            else:
                self.assertEqual(reply.json()["choices"][0]["finish_reason"], "stop")
            self.assertTrue(self.upstream.ended.wait(WAIT_S), "the daemon kept reading the upstream's pings")

    def test_output_past_max_tokens_is_cut_and_charged_as_sent(self):
        for stream in (False, True):
            self.upstream.ended.clear()
            reply = chat(self.daemon, self.key, content="endless", stream=stream)  # max_tokens 8
            self.assertEqual(reply.status, 200, reply.body)
            if stream:
                frames = [json.loads(line[6:]) for line in reply.body.splitlines()
                          if line.startswith("data: {")]
                text = "".join(f["choices"][0]["delta"].get("content") or "" for f in frames if f["choices"])
                finish = [f["choices"][0].get("finish_reason") for f in frames if f["choices"]][-1]
            else:
                text = reply.json()["choices"][0]["message"]["content"]
                finish = reply.json()["choices"][0]["finish_reason"]
            self.assertEqual(text, "ok" + "x" * 7)
            self.assertEqual(finish, "length")
            self.assertTrue(self.upstream.ended.wait(WAIT_S), "the upstream kept generating past max_tokens")
        day = self.usage(2)
        self.assertEqual(day["completion_tokens"], 16)

    def test_an_upstream_value_nested_too_deeply_is_a_bad_gateway_and_the_daemon_serves_on(self):
        for said, stream in (("deep", True), ("deep-answer", False), ("deep-error", False)):
            reply = chat(self.daemon, self.key, content=said, stream=stream)
            self.assertIsNone(self.daemon.proc.poll(), "the daemon died on %s" % said)
            if stream:
                self.assertEqual(reply.status, 200, reply.body[:300])
                self.assertIn("bad_gateway", reply.body[-2000:])
            elif said == "deep-answer":
                self.assertEqual(reply.status, 502, reply.body[:300])
                self.assertEqual(reply.json()["error"]["code"], "bad_gateway")
            else:  # a 400 is the request's fault, in the upstream's words: its text, cut to 1 KiB
                self.assertEqual(reply.status, 400, reply.body[:300])
                self.assertLess(len(reply.json()["error"]["message"]), 1100)
            reply = chat(self.daemon, self.key)
            self.assertEqual(reply.status, 200, reply.body[:300])

    def test_an_upstream_refusing_the_appliance_is_a_bad_gateway_then_an_open_breaker(self):
        reply = chat(self.daemon, self.key, content="unauthorized")
        self.assertEqual(reply.status, 502, reply.body)
        self.assertEqual(reply.json()["error"]["code"], "bad_gateway")
        self.assertNotIn("sk-upstream-secret", reply.body)
        for _ in range(10):  # the breaker opens after its threshold of failures
            reply = chat(self.daemon, self.key, content="unauthorized")
            if reply.status == 503:
                break
        self.assertEqual(reply.status, 503, reply.body)
        self.assertIn("upstream:scripted (breaker open)", reply.json()["error"]["message"])

    def test_an_upstream_that_reports_no_usage_is_charged_what_it_sent(self):
        reply = chat(self.daemon, self.key, content="no-usage")
        self.assertEqual(reply.status, 200, reply.body)
        usage = reply.json()["usage"]
        self.assertGreater(usage["prompt_tokens"], 0)
        self.assertEqual(usage["completion_tokens"], 1)
        day = self.usage(1)
        self.assertEqual(day["prompt_tokens"], usage["prompt_tokens"])
        self.assertEqual(day["completion_tokens"], 1)


class StreamLimitTest(unittest.TestCase):
    def setUp(self):
        self.upstream = Upstream()
        self.daemon = Daemon(config=upstream_config(self.upstream, max_concurrent_streams=3))
        wait_until_served(self, self.daemon)

    def tearDown(self):
        self.upstream.released.set()
        self.daemon.stop()
        self.daemon.close()
        self.upstream.close()

    def wait_admitted(self, key):
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            reply = chat(self.daemon, key)
            if reply.status != 429:
                return reply
            time.sleep(0.1)
        self.fail("the stream slot was never released")

    def test_second_stream_of_a_key_is_refused_until_the_first_ends(self):
        key, key_id = create_key(self.daemon, max_concurrent_streams=1)
        held = open_held_stream(self.daemon, key)
        try:
            assert_rate_limited(self, chat(self.daemon, key), "limit of 1 concurrent streams", self.daemon)
            usage = request(self.daemon, "GET", "/admin/v1/keys/%s/usage" % key_id).json()
            self.assertEqual(usage["streams_in_flight"], 1)
            other, _ = create_key(self.daemon)  # another key is not limited by this one
            self.assertEqual(chat(self.daemon, other).status, 200)
            self.upstream.released.set()
            while held.recv(65536):
                pass
        finally:
            held.close()
        self.assertEqual(self.wait_admitted(key).status, 200)

    def test_a_client_that_goes_away_releases_its_stream(self):
        key, _ = create_key(self.daemon, max_concurrent_streams=1)
        held = open_held_stream(self.daemon, key)
        # Close with a reset: the daemon sees the client gone at its next check, while the
        # upstream still holds the generation.
        held.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        held.close()
        self.assertEqual(self.wait_admitted(key).status, 200)

    def test_the_appliance_wide_limit_names_itself(self):
        keys = [create_key(self.daemon)[0] for _ in range(4)]
        held = [open_held_stream(self.daemon, k) for k in keys[:3]]
        try:
            assert_rate_limited(self, chat(self.daemon, keys[3]), "auth.max_concurrent_streams", self.daemon)
        finally:
            self.upstream.released.set()
            for s in held:
                s.close()


class AllowedModelsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.upstream = Upstream()
        config = upstream_config(cls.upstream)
        config["request_rules"] = [{"model": "m-b", "rules": {"temperature": [0, 0.3]}}]
        cls.daemon = Daemon(config=config)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.daemon.close()
        cls.upstream.close()

    def test_a_model_the_key_may_not_use_looks_like_an_unknown_one(self):
        # Nothing a key limited to m-a is told separates m-b (served, with its own rules) from a
        # model that does not exist: not the error's text, not the bounds, not the rules route.
        wait_until_served(self, self.daemon)
        key, _ = create_key(self.daemon, models=["m-a"])

        def refusal(model, **fields):
            body = dict({"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}, **fields)
            reply = request(self.daemon, "POST", "/v1/chat/completions", {"Content-Type": "application/json"},
                            json.dumps(body).encode(), auth=key)
            error = reply.json()["error"]
            return reply.status, error["message"].replace("'%s'" % model, "'X'"), error.get("param")

        for fields in ({}, {"temperature": 0.9}):
            self.assertEqual(refusal("m-b", **fields), refusal("no-such-model", **fields), fields)
        self.assertNotIn("m-b", refusal("no-such-model")[1])
        rules = {m: request(self.daemon, "GET", "/admin/v1/request-rules?model=" + m, auth=key).json()["rules"]
                 for m in ("m-b", "no-such-model")}
        self.assertEqual(rules["m-b"], rules["no-such-model"])
        # The key with every model sees m-b's own bounds.
        self.assertNotEqual(request(self.daemon, "GET", "/admin/v1/request-rules?model=m-b").json()["rules"],
                            rules["m-b"])
        missing = request(self.daemon, "GET", "/admin/v1/request-rules").json()["error"]
        self.assertEqual(missing["param"], "model", missing)

    def test_a_key_uses_and_sees_only_its_models(self):
        wait_until_served(self, self.daemon)
        key, _ = create_key(self.daemon, models=["m-a"])
        self.assertEqual(chat(self.daemon, key, model="m-a").status, 200)
        refused = chat(self.daemon, key, model="m-b")
        self.assertEqual(refused.status, 404, refused.body)
        self.assertIn("may not use it", refused.json()["error"]["message"])
        listed = request(self.daemon, "GET", "/v1/models", auth=key).json()
        self.assertEqual([m["id"] for m in listed["data"]], ["m-a"])
        self.assertEqual(request(self.daemon, "GET", "/v1/models/m-b", auth=key).status, 404)
        # A key without a model list uses every model.
        self.assertEqual(chat(self.daemon, self.daemon.api_key, model="m-b").status, 200)


if __name__ == "__main__":
    unittest.main()
