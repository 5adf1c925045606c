"""Integration tests: the real kimi-appliance binary on a free loopback port.

Run through CTest (tests/CMakeLists.txt sets KIMI_APPLIANCE_BIN and KIMICTL_BIN), or by hand:
  KIMI_APPLIANCE_BIN=build/appliance/kimi-appliance KIMICTL_BIN=build/appliance/kimictl \
      python3 tests/integration/daemon_test.py -v
"""
import json
import os
import signal
import socket
import stat
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import prometheus_text  # noqa: E402
from daemon_harness import (DAEMON, KIMICTL, Daemon, base_config, is_closed, read_reply, request,  # noqa: E402
                            public_requests, run_to_exit, send_request, write_config)

import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402


def assert_openai_error(test, reply, status, code=None):
    test.assertEqual(reply.status, status, reply.body)
    test.assertEqual(reply.headers.get("content-type"), "application/json")
    body = reply.json()
    test.assertEqual(set(body.keys()), {"error"})
    test.assertEqual(set(body["error"].keys()), {"message", "type", "param", "code"})
    test.assertIsInstance(body["error"]["message"], str)
    test.assertTrue(body["error"]["message"])
    test.assertIsInstance(body["error"]["type"], str)
    if code is not None:
        test.assertEqual(body["error"]["code"], code)
    test.assertTrue(reply.headers.get("x-request-id"))
    return body["error"]


class ServingTest(unittest.TestCase):
    """One daemon with default limits shared by the read-only checks."""

    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon()

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.daemon.close()

    def test_healthz_is_200(self):
        reply = request(self.daemon, "GET", "/healthz")
        self.assertEqual(reply.status, 200)
        self.assertEqual(reply.json(), {"status": "ok"})

    def test_readyz_is_503_and_says_why(self):
        reply = request(self.daemon, "GET", "/readyz")
        self.assertEqual(reply.status, 503)
        body = reply.json()
        self.assertEqual(body["status"], "not_ready")
        self.assertTrue(body["components"]["database"]["ready"])
        self.assertTrue(body["components"]["audit"]["ready"])
        self.assertFalse(body["components"]["model"]["ready"])
        self.assertEqual(body["components"]["model"]["detail"], "not loaded: no model configured")

    def test_metrics_is_valid_prometheus_text(self):
        request(self.daemon, "GET", "/healthz")
        reply = request(self.daemon, "GET", "/metrics")
        self.assertEqual(reply.status, 200)
        self.assertTrue(reply.headers["content-type"].startswith("text/plain; version=0.0.4"))
        families = prometheus_text.parse(reply.body)
        self.assertEqual(families["kimi_http_requests_total"]["type"], "counter")
        self.assertEqual(families["kimi_http_request_duration_seconds"]["type"], "histogram")
        self.assertEqual(families["process_start_time_seconds"]["type"], "gauge")
        self.assertEqual(families["kimi_build_info"]["type"], "gauge")
        healthz = [v for n, labels, v in families["kimi_http_requests_total"]["samples"]
                   if labels == {"route": "healthz", "code": "200"}]
        self.assertEqual(len(healthz), 1)
        self.assertGreaterEqual(healthz[0], 1)
        ready = {labels["component"]: v for _, labels, v in families["kimi_component_ready"]["samples"]}
        self.assertEqual(ready, {"database": 1, "audit": 1, "model": 0})

    def test_unknown_route_is_404_openai_json(self):
        error = assert_openai_error(self, request(self.daemon, "GET", "/v1/nothing-here"), 404, "unknown_route")
        self.assertIn("/v1/nothing-here", error["message"])
        assert_openai_error(self, request(self.daemon, "POST", "/nope", body=b"{}"), 404, "unknown_route")

    def test_wrong_method_is_405_with_allow(self):
        reply = request(self.daemon, "DELETE", "/healthz")
        assert_openai_error(self, reply, 405, "method_not_allowed")
        self.assertEqual(reply.headers.get("allow"), "GET, HEAD")

    def test_request_id_is_always_the_servers_own(self):
        # A client's id is never adopted: it could name a request already in the audit log.
        for sent in ("abc-123", "bad id\twith tab", None):
            headers = {"X-Request-Id": sent} if sent else {}
            given = request(self.daemon, "GET", "/healthz", headers).headers["x-request-id"]
            self.assertRegex(given, r"^req_[0-9a-f]{24}$")

    def test_access_log_line_per_request(self):
        reply = request(self.daemon, "GET", "/healthz?probe=1", {"X-Request-Id": "log-check-7"})
        event = self.daemon.wait_for_event(lambda e: e.get("msg") == "request" and e.get("client_request_id") == "log-check-7")
        self.assertIsNotNone(event, "no access log line")
        self.assertEqual(event["method"], "GET")
        self.assertEqual(event["path"], "/healthz")
        self.assertEqual(event["status"], 200)
        self.assertEqual(event["route"], "healthz")
        self.assertEqual(event["request_id"], reply.headers["x-request-id"])
        self.assertIsInstance(event["duration_ms"], (int, float))
        self.assertRegex(event["remote"], r"^127\.0\.0\.1:\d+$")

    def test_oversized_body_is_413_before_reading_it(self):
        with self.daemon.connect() as s:
            s.sendall(b"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % (8 * 1024 * 1024 + 1))
            assert_openai_error(self, read_reply(s), 413, "request_too_large")

    def test_oversized_headers_are_431(self):
        with self.daemon.connect() as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Filler: " + b"a" * 4000 + b"\r\n")
            for i in range(5):  # 20 KB of headers, over the 16 KiB default
                s.sendall(b"X-More-%d: %s\r\n" % (i, b"b" * 4000))
            s.sendall(b"\r\n")
            assert_openai_error(self, read_reply(s), 431, "request_header_fields_too_large")

    def test_one_header_line_over_library_limit_is_431(self):
        with self.daemon.connect() as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nX-Long: " + b"a" * 9000 + b"\r\n\r\n")
            assert_openai_error(self, read_reply(s), 431)

    def test_compressed_body_is_415(self):
        reply = request(self.daemon, "POST", "/healthz", {"Content-Encoding": "gzip"}, body=b"xx")
        assert_openai_error(self, reply, 415, "unsupported_content_encoding")

    def test_keep_alive_and_pipelining_stay_in_step(self):
        with self.daemon.connect() as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: p1\r\n\r\n"
                      b"POST /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n" + self.daemon.auth_header() +
                      b"Content-Length: 5\r\nX-Request-Id: p2\r\n\r\nhello"
                      b"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: p3\r\n\r\n"
                      b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: p4\r\n\r\n")
            replies = [read_reply(s) for _ in range(4)]
        self.assertEqual([r.status for r in replies], [200, 404, 405, 200])
        # Each reply carries its own request's id, in order: the ids the server gave them.
        ids = [r.headers["x-request-id"] for r in replies]
        self.assertEqual(len(set(ids)), 4)
        self.assertTrue(all(i.startswith("req_") for i in ids), ids)

    def test_malformed_request_is_400_json(self):
        with self.daemon.connect() as s:
            s.sendall(b"GET / HTTP/1.1\nHost: 127.0.0.1\n\n")
            assert_openai_error(self, read_reply(s), 400, "malformed_request")

    def test_a_malformed_request_closes_its_connection(self):
        # A NUL in the target: answered 400 and the connection kept, the bytes after it were
        # read as a second request (two parsers disagreeing on where a request ends).
        with self.daemon.connect() as s:
            s.sendall(b"GET /healthz\x00 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert_openai_error(self, read_reply(s), 400, "malformed_request")
            s.settimeout(10)
            self.assertEqual(s.recv(4096), b"", "a second reply on a connection that should be closed")


    def test_a_refused_chunked_request_says_the_connection_closes(self):
        # The connection closes after a refused request with a chunked body: its response must
        # say so, not offer keep-alive to a client that pipelines the next request behind it.
        with self.daemon.connect() as s:
            s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
                      self.daemon.api_key.encode() + b"\r\nContent-Type: application/json\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
                      b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            reply = read_reply(s)
            self.assertEqual(reply.status, 400, reply.body)
            self.assertEqual(reply.headers.get("connection", "").lower(), "close", reply.headers)
            s.settimeout(10)
            self.assertEqual(s.recv(4096), b"")

    def test_chunk_size_lines_outside_the_rfc_are_refused_and_close(self):
        # cpp-httplib reads a chunk size with strtoul: "0x30", "+30", " 30" and a bare LF were
        # served, where a proxy reading by RFC 9112 ends the body elsewhere (smuggling).
        body = b'{"model":"m","prompt":"hi"}'
        for size_line in (b"0x%x\r\n", b"+%x\r\n", b"   %x\r\n", b"%x \r\n", b"%x\n"):
            with self.subTest(size_line), self.daemon.connect() as s:
                s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n" + self.daemon.auth_header() +
                          b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                          size_line % len(body) + body + b"\r\n0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                reply = assert_openai_error(self, read_reply(s), 400, "malformed_request")
                self.assertIn("chunked", reply["message"])
                s.settimeout(10)
                self.assertEqual(s.recv(4096), b"", "the request behind it was served")

    def test_a_caller_without_a_valid_credential_is_refused_before_its_body(self):
        # The body was read first (8 MiB each, held until the 401): 64 such requests took the
        # daemon from 156 to 902 MB. Now the head alone is answered; no byte of body is sent here.
        for path, credential in (("/v1/chat/completions", b""), ("/admin/v1/keys", b""),
                                 ("/v1/chat/completions", b"Authorization: Bearer sk-kimi-wrong\r\n"),
                                 ("/no/such/path", b"")):
            with self.subTest(path=path, credential=credential), self.daemon.connect(timeout=5) as s:
                s.sendall(b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n" + credential +
                          b"Content-Type: application/json\r\nContent-Length: 8000000\r\n\r\n")
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = s.recv(4096)
                    self.assertTrue(chunk, "closed without an answer")
                    data += chunk
                head = data.split(b"\r\n\r\n")[0].lower()
                self.assertTrue(head.startswith(b"http/1.1 401"), head)
                self.assertEqual(head.count(b"\r\nconnection: close"), 1, head)
                self.assertNotIn(b"keep-alive:", head)
        # Asked to wait for "100 Continue", such a caller gets its 401 instead; a valid one gets 100.
        for credential, expected in ((b"", b"HTTP/1.1 401"), (self.daemon.auth_header(), b"HTTP/1.1 100")):
            with self.daemon.connect(timeout=5) as s:
                s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n" + credential +
                          b"Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
                self.assertTrue(s.recv(4096).startswith(expected))

    def test_a_route_open_to_anyone_takes_a_small_body_only(self):
        with self.daemon.connect() as s:
            s.sendall(b"POST /admin/v1/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % (16 * 1024 + 1))
            assert_openai_error(self, read_reply(s), 413, "request_too_large")
        # The cap followed the route the raw target named: "POST /healthz", "DELETE /readyz", any
        # method on a console path (a 404 or 405 there needs no credential), the sign-in as
        # "/admin/v1/sessio%6E" or "?/admin/v1/session" (the library routes on the decoded path,
        # and drops the empty piece before a '?') were each invited to send 8 MB, read and held
        # (64 connections: 600+ MB). Without a credential, 16 KiB at most, told from the head.
        for method, target, status in public_requests():
            with self.subTest(method=method, target=target), self.daemon.connect(timeout=10) as s:
                s.sendall(b"%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 8388000\r\n"
                          b"Expect: 100-continue\r\n\r\n" % (method.encode(), target.encode()))
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = s.recv(4096)
                    self.assertTrue(chunk, "closed without an answer")
                    head += chunk
                self.assertTrue(head.startswith(b"HTTP/1.1 %d " % status), head[:200])


class LimitsTest(unittest.TestCase):
    def test_chunked_body_over_cap_is_413(self):
        daemon = Daemon(limits={"max_body_bytes": 1024})
        try:
            with daemon.connect() as s:
                s.sendall(b"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
                for _ in range(4):
                    s.sendall(b"200\r\n" + b"z" * 0x200 + b"\r\n")
                s.sendall(b"0\r\n\r\n")
                assert_openai_error(self, read_reply(s), 413, "request_too_large")
        finally:
            daemon.stop()
            daemon.close()

    def test_one_address_flooding_connections_keeps_no_other_client_out(self):
        # One address opening silent connections as fast as it could held every worker and
        # every waiting place: a client from another address got 503, or waited 12 s behind the
        # refusals. Loopback has a whole /8, so the flood comes from 127.0.0.2.
        daemon = Daemon(limits={"max_connections": 4, "worker_wait_ms": 3000})
        stop = threading.Event()
        flood = []

        def attack():
            while not stop.is_set():
                s = socket.socket()
                try:
                    s.bind(("127.0.0.2", 0))
                    s.settimeout(2)
                    s.connect(("127.0.0.1", daemon.port))
                    flood.append(s)
                except OSError:
                    s.close()
                while len(flood) > 100:
                    flood.pop(0).close()
                time.sleep(0.005)

        attacker = threading.Thread(target=attack)
        attacker.start()
        try:
            time.sleep(1.5)  # by now every worker and waiting place is the flood's
            statuses = [request(daemon, "GET", "/healthz").status for _ in range(5)]
        finally:
            stop.set()
            attacker.join()
            for s in flood:
                s.close()
            daemon.stop()
            daemon.close()
        self.assertEqual(statuses, [200] * 5)

    def test_slow_clients_do_not_block_others_and_excess_gets_503(self):
        # worker_wait_ms under the second after which a trickling request gives up its worker
        # (connection.h kReclaimableArrivalAfter): the excess is refused before any is taken back.
        daemon = Daemon(limits={"max_connections": 3, "read_timeout_ms": 60000, "worker_wait_ms": 200})
        slow = []
        try:
            slow += self.slow_heads(daemon, 2)  # two slowloris clients
            # A normal client is served while both slow ones still hold their workers.
            self.assertEqual(request(daemon, "GET", "/healthz").status, 200)
            for s in slow:
                self.assertFalse(is_closed(s, 0.2), "a slow client was dropped before its read timeout")
            # The third worker taken too: the next connection waits limits.worker_wait_ms for one,
            # then is refused rather than queued behind the slow clients.
            third = daemon.connect()
            third.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow-3: ")
            slow.append(third)
            refused = request(daemon, "GET", "/healthz")
            assert_openai_error(self, refused, 503, "overloaded")
            # A slow client that finishes its request is answered normally.
            slow[0].sendall(b"1\r\nConnection: close\r\n\r\n")
            self.assertEqual(read_reply(slow[0]).status, 200)
            for s in slow:
                s.close()
            rejected = self.counter(daemon, "kimi_http_connections_rejected_total", {"reason": "overload"})
            self.assertGreaterEqual(rejected, 1)
        finally:
            for s in slow:
                s.close()
            daemon.stop()
            daemon.close()

    def test_requests_that_trickle_in_give_their_workers_to_waiting_clients(self):
        # Every worker held by a head that never ends (slowloris) used to refuse every other
        # client for the whole read timeout, over and over. A request still arriving a second
        # after it began gives its worker to a connection that waits for one.
        daemon = Daemon(limits={"max_connections": 3, "read_timeout_ms": 60000, "worker_wait_ms": 5000})
        slow = []
        try:
            slow += self.slow_heads(daemon, 3)
            self.assertEqual(request(daemon, "GET", "/healthz").status, 200)
            closed = [s for s in slow if is_closed(s, 0.5)]
            self.assertGreaterEqual(len(closed), 1, "no slow client gave up its worker")
            for s in slow:
                s.close()
            # A slow body is the same: every worker held by a head that arrived and a body that
            # does not (2 of its 100 bytes).
            slow = []
            for _ in range(3):
                s = daemon.connect()
                s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n" + daemon.auth_header() +
                          b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"")
                slow.append(s)
            self.assertEqual(request(daemon, "GET", "/healthz").status, 200)
            closed = [s for s in slow if is_closed(s, 0.5)]
            self.assertGreaterEqual(len(closed), 1, "no trickling body gave up its worker")
            self.assertGreaterEqual(self.counter(daemon, "kimi_http_connections_closed_total", {"reason": "reclaimed"}), 1)
        finally:
            for s in slow:
                s.close()
            daemon.stop()
            daemon.close()

    @staticmethod
    def slow_heads(daemon, count):
        """`count` connections, each holding a worker with a request head that never ends."""
        heads = []
        for i in range(count):
            s = daemon.connect()
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow-%d: " % i)
            heads.append(s)
        return heads

    def counter(self, daemon, family, labels):
        """The value of one counter of /metrics, asked a bounded number of times (while workers
        come free, /metrics may itself be refused)."""
        for _ in range(100):
            reply = request(daemon, "GET", "/metrics")
            if reply.status == 200:
                families = prometheus_text.parse(reply.body)
                values = [v for _, l, v in families[family]["samples"] if l == labels]
                return values[0] if values else 0
            daemon.wait_for_event(lambda e: False, timeout=0.05)
        self.fail("the workers never came free")

    def test_slow_client_is_cut_off_at_the_read_deadline(self):
        daemon = Daemon(limits={"read_timeout_ms": 500})
        try:
            with daemon.connect() as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\n")
                s.settimeout(0.1)
                closed = False
                # Trickle one header byte at a time: each byte arrives long before any per-read
                # timeout, but the request as a whole misses its deadline.
                for _ in range(300):
                    try:
                        s.sendall(b"X")
                    except (BrokenPipeError, ConnectionResetError):
                        closed = True
                        break
                    try:
                        if s.recv(1024) == b"":
                            closed = True
                            break
                    except socket.timeout:
                        pass
                    except ConnectionResetError:
                        closed = True
                        break
                self.assertTrue(closed, "a trickling client was never disconnected")
            self.assertEqual(request(daemon, "GET", "/healthz").status, 200)
        finally:
            daemon.stop()
            daemon.close()


class ShutdownTest(unittest.TestCase):
    def test_sigterm_exits_0_and_closes_the_database(self):
        daemon = Daemon()
        try:
            self.assertEqual(request(daemon, "GET", "/healthz").status, 200)
            self.assertEqual(daemon.stop(signal.SIGTERM), 0)
            messages = [e.get("msg") for e in daemon.events()]
            self.assertIn("database closed", messages)
            self.assertLess(messages.index("stopped accepting connections"), messages.index("database closed"))
        finally:
            daemon.close()

    def test_request_in_flight_at_sigterm_is_answered(self):
        daemon = Daemon()
        try:
            with daemon.connect() as s:
                # A first request makes sure a worker owns the connection before the signal.
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                self.assertEqual(read_reply(s).status, 200)
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # half a request
                daemon.proc.send_signal(signal.SIGINT)
                self.assertIsNotNone(daemon.wait_for_event(lambda e: e.get("msg") == "stopped accepting connections"))
                s.sendall(b"\r\n")
                reply = read_reply(s)
                self.assertEqual(reply.status, 200)
                self.assertEqual(reply.headers.get("connection"), "close")
            self.assertEqual(daemon.wait_exit(), 0)  # the one signal was enough
        finally:
            daemon.close()


    def test_stop_ends_within_the_grace_period_whatever_a_request_is_doing(self):
        # An upstream that accepts connections (the kernel's backlog) and never answers: a
        # request to it blocks its worker for the upstream's whole timeout, past the grace.
        silent = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        self.addCleanup(silent.close)
        config = base_config({"shutdown_grace_ms": 500})
        config["router"] = {"backends": [{"name": "silent", "kind": "upstream", "models": ["silent-model"],
                                          "url": "http://127.0.0.1:%d" % silent.getsockname()[1],
                                          "timeout_ms": 600000, "health_interval_ms": 600000}]}
        daemon = Daemon(config=config)
        try:
            body = json.dumps({"model": "silent-model", "messages": [{"role": "user", "content": "hi"}]}).encode()
            with daemon.connect() as s:
                send_request(s, "POST", "/v1/chat/completions",
                             {"Content-Type": "application/json", "Authorization": "Bearer " + daemon.api_key}, body)
                time.sleep(0.5)  # the request is with the upstream
                daemon.proc.send_signal(signal.SIGTERM)
                daemon.proc.wait(timeout=60)  # raises when it outlives a bound far below the upstream's 600 s
        finally:
            daemon.close()


class StartupFailureTest(unittest.TestCase):
    def run_daemon(self, config, *extra):
        with tempfile.TemporaryDirectory(prefix="kimi-it-") as d:
            path = write_config(d, config)
            code, _, err = run_to_exit([DAEMON, "--config", path, *extra])
        return code, err

    def assert_one_line_failure(self, code, err, *fragments):
        self.assertNotEqual(code, 0)
        lines = [l for l in err.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, err)
        for f in fragments:
            self.assertIn(f, lines[0])

    def test_unknown_key(self):
        config = base_config()
        config["limits"] = {"max_body_bytez": 5}
        code, err = self.run_daemon(config)
        self.assert_one_line_failure(code, err, "$.limits.max_body_bytez: unknown key")

    def test_wrong_type(self):
        config = base_config()
        config["server"]["allow_plain_http_on_loopback"] = "yes"
        code, err = self.run_daemon(config)
        self.assert_one_line_failure(code, err, "$.server.allow_plain_http_on_loopback: expected a boolean, got a string")

    def test_bad_flag_value_names_the_flag(self):
        code, err = self.run_daemon(base_config(), "--log-level", "loud")
        self.assert_one_line_failure(code, err, "--log-level", "$.log.level")

    def test_missing_config_file(self):
        code, _, err = run_to_exit([DAEMON, "--config", "/nonexistent/appliance.json"])
        self.assert_one_line_failure(code, err, "/nonexistent/appliance.json")

    def start_and_stop(self, d, config):
        daemon = Daemon(config=config)  # makes the data directory, its keys and an API key
        data_dir = daemon.data_dir
        self.assertEqual(daemon.stop(), 0)
        daemon.close()
        return data_dir

    def test_a_secret_readable_by_others_or_missing_is_refused_not_repaired(self):
        # A key that was readable by others may have been copied: tightening it and trusting it
        # would hide that. A deleted server secret with keys hashed under it would silently
        # invalidate every key.
        for name, damage, fragment in (("audit-ed25519.key", "chmod", "audit-ed25519.key"),
                                       ("auth-secret.key", "chmod", "auth-secret.key"),
                                       ("auth-secret.key", "delete", "restore it from the backup")):
            with self.subTest(name=name, damage=damage), tempfile.TemporaryDirectory(prefix="kimi-it-") as d:
                config = base_config()
                config["storage"]["data_dir"] = os.path.join(d, "data")
                data_dir = self.start_and_stop(d, config)
                path = os.path.join(data_dir, name)
                if damage == "chmod":
                    os.chmod(path, 0o644)
                else:
                    os.unlink(path)
                code, err = self.run_daemon(config)
                self.assertNotEqual(code, 0, err)
                self.assertIn(fragment, err)
                if damage == "chmod":
                    self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o644, "left as found")
                else:
                    self.assertFalse(os.path.exists(path), "not replaced")

    def test_an_unreadable_trust_store_is_refused_before_anything_is_made(self):
        with tempfile.TemporaryDirectory(prefix="kimi-it-") as d:
            config = base_config()
            config["storage"]["data_dir"] = os.path.join(d, "data")
            config["model"] = {"trust_store": os.path.join(d, "missing-trust.pem")}
            code, _, err = run_to_exit([DAEMON, "--config", write_config(d, config)])
            self.assert_one_line_failure(code, err, "cannot read the trust store", "missing-trust.pem")
            self.assertFalse(os.path.exists(os.path.join(d, "data")), "nothing created")

    def test_port_in_use(self):
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            port = holder.getsockname()[1]
            code, err = self.run_daemon(base_config(), "--listen", "127.0.0.1:%d" % port)
        self.assert_one_line_failure(code, err, "127.0.0.1:%d" % port, "address already in use")

    def test_plain_http_off_loopback_is_refused(self):
        code, err = self.run_daemon(base_config(), "--listen", "0.0.0.0:0")
        self.assert_one_line_failure(code, err, "0.0.0.0:0 is not a loopback address")


class KimictlTest(unittest.TestCase):
    def test_config_check(self):
        with tempfile.TemporaryDirectory(prefix="kimi-it-") as d:
            good = write_config(d, base_config())
            code, out, _ = run_to_exit([KIMICTL, "config", "check", "--config", good])
            self.assertEqual(code, 0)
            self.assertIn("ok", out)
            config = base_config()
            config["log"]["level"] = 3
            bad = write_config(d, config)
            code, _, err = run_to_exit([KIMICTL, "config", "check", "--config", bad])
            self.assertEqual(code, 1)
            self.assertIn("$.log.level: expected a string, got an integer", err)

    def test_version_and_unknown_command(self):
        code, out, _ = run_to_exit([KIMICTL, "version"])
        self.assertEqual(code, 0)
        self.assertRegex(out, r"^kimictl \d+\.\d+\.\d+")
        code, _, err = run_to_exit([KIMICTL, "frobnicate"])
        self.assertEqual(code, 2)
        self.assertIn("unknown command", err)

    def test_config_defaults_round_trips_through_check(self):
        with tempfile.TemporaryDirectory(prefix="kimi-it-") as d:
            code, out, _ = run_to_exit([KIMICTL, "config", "defaults"])
            self.assertEqual(code, 0)
            defaults = json.loads(out)
            defaults["server"]["allow_plain_http_on_loopback"] = True
            path = write_config(d, defaults)
            code, _, err = run_to_exit([KIMICTL, "config", "check", "--config", path])
            self.assertEqual(code, 0, err)


if __name__ == "__main__":
    if not DAEMON or not os.access(DAEMON, os.X_OK):
        sys.exit("set KIMI_APPLIANCE_BIN to the kimi-appliance binary (and KIMICTL_BIN to kimictl)")
    unittest.main()
