"""Integration tests: connection workers under load, through the real kimi-appliance.

A client that stays within limits.max_connections is never refused: a worker whose client has
gone, or whose connection waits idle between requests, is not a reason to answer 503.

  KIMI_APPLIANCE_BIN=build/appliance/kimi-appliance KIMICTL_BIN=build/appliance/kimictl \\
  KIMI_ENGINE_BIN=build/engine/kimi-engine python3 tests/integration/load_test.py -v
"""
import json
import os
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import prometheus_text  # noqa: E402
from daemon_harness import (Daemon, SignedModel, base_config, is_closed, read_head, read_reply,  # noqa: E402
                            request)

MODEL_ID = "kimi-k3-nano"


def stream_body(max_tokens, index):
    return json.dumps({"model": MODEL_ID, "stream": True, "max_tokens": max_tokens,
                       "messages": [{"role": "user", "content": "Request %d: name three rivers." % index}]}).encode()


def long_stream_body():
    # The schema holds the random-weight demo model to at least 1,000 array items (2,000 tokens
    # or more), so the stream runs for as long as the test needs it to.
    return json.dumps({"model": MODEL_ID, "stream": True, "max_tokens": 4000, "thinking": {"type": "disabled"},
                       "messages": [{"role": "user", "content": "Count."}],
                       "response_format": {"type": "json_schema", "json_schema": {"name": "long", "schema": {
                           "type": "array", "items": {"type": "integer"}, "minItems": 1000}}}}).encode()


def post_head(daemon, body):
    """A chat request as an SDK that does not pool connections writes it: HTTP/1.1, no
    `Connection: close`."""
    return (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n" + daemon.auth_header() +
            b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def stream_until_done(sock):
    """Reads a response until its `data: [DONE]` frame (not the chunked body's last chunk);
    returns the status and, for a refusal, its body."""
    status, _, _, rest = read_head(sock)
    if status != 200:
        return status, rest
    while b"data: [DONE]" not in rest:
        more = sock.recv(65536)
        if not more:
            raise ConnectionError("the stream ended without [DONE]")
        rest += more
    return status, b""


def engine_requests_cancelled(daemon):
    families = prometheus_text.parse(request(daemon, "GET", "/metrics").body)
    return sum(v for _, labels, v in families["kimi_engine_requests_ended"]["samples"]
               if labels == {"outcome": "cancelled"})


class WorkerSlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kimi-load-it-")
        cls.model = SignedModel(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def serve(self, limits, **model):
        daemon = self.model.serve(base_config(limits), served_id=MODEL_ID, **model)
        self.addCleanup(daemon.close)
        return daemon

    def test_clients_that_reconnect_at_once_within_max_connections_are_never_refused(self):
        # As many clients as workers, each streaming request on a new connection that it closes
        # as soon as [DONE] arrives, then connecting again at once: the server learns of the
        # close only after its response's last write, so a worker may still hold the old
        # connection when the new one arrives.
        clients, requests_each = 4, 30
        daemon = self.serve({"max_connections": clients})
        outcomes = [[] for _ in range(clients)]

        def client(i):
            for n in range(requests_each):
                try:
                    with daemon.connect(timeout=120) as s:
                        s.sendall(post_head(daemon, stream_body(8, i * 1000 + n)))
                        status, body = stream_until_done(s)
                    outcomes[i].append((status, body[:200]))
                except (OSError, ConnectionError) as e:
                    outcomes[i].append((None, repr(e)))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        failures = [o for each in outcomes for o in each if o[0] != 200]
        self.assertEqual(failures, [], "%d of %d requests failed" % (len(failures), clients * requests_each))

    def test_idle_keep_alive_connection_gives_its_worker_to_a_new_one(self):
        daemon = Daemon(limits={"max_connections": 2, "idle_timeout_ms": 60000})
        self.addCleanup(daemon.close)
        idle = []
        for _ in range(2):  # both workers hold a keep-alive connection waiting for its next request
            s = daemon.connect()
            self.addCleanup(s.close)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            self.assertEqual(read_reply(s).status, 200)
            idle.append(s)
        self.assertEqual(request(daemon, "GET", "/healthz").status, 200)
        closed = [is_closed(s, 5) for s in idle]
        self.assertEqual(sorted(closed), [False, True], "exactly one idle connection gives its worker up")
        # The one kept is still served.
        kept = idle[closed.index(False)]
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        self.assertEqual(read_reply(kept).status, 200)

    def test_request_arriving_on_an_idle_connection_keeps_its_worker(self):
        # The request on the idle connection started arriving before the new connection asked for
        # its worker: it is served, and the new connection waits for a worker instead.
        daemon = Daemon(limits={"max_connections": 1, "idle_timeout_ms": 60000, "worker_wait_ms": 60000})
        self.addCleanup(daemon.close)
        s = daemon.connect()
        self.addCleanup(s.close)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        self.assertEqual(read_reply(s).status, 200)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # half a head: a request in flight
        late = daemon.connect(timeout=120)
        self.addCleanup(late.close)
        late.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        self.assertFalse(is_closed(s, 0.5), "a connection with a request in flight was taken back")
        s.sendall(b"Connection: close\r\n\r\n")
        self.assertEqual(read_reply(s).status, 200)
        self.assertEqual(read_reply(late).status, 200)

    def test_client_that_leaves_before_its_first_token_frees_its_worker(self):
        # One sequence at a time: the second stream waits in the engine's queue behind a long one.
        # Its client leaves; its worker is free again at once (not when the queue reaches it), so
        # a third connection is served while the long stream still runs.
        daemon = self.serve({"max_connections": 2, "worker_wait_ms": 30000}, max_num_seqs=1)
        running = daemon.connect(timeout=120)
        self.addCleanup(running.close)
        running.sendall(post_head(daemon, long_stream_body()))
        status, _, _, received = read_head(running)
        self.assertEqual(status, 200)
        with daemon.connect() as queued:
            queued.sendall(post_head(daemon, stream_body(8, 1)))
        self.assertEqual(request(daemon, "GET", "/healthz").status, 200)
        # The engine dropped the queued request (it did not wait to be admitted to notice).
        cancelled = 0
        for _ in range(600):
            cancelled = engine_requests_cancelled(daemon)
            if cancelled >= 1:
                break
            time.sleep(0.05)
        self.assertEqual(cancelled, 1)
        running.setblocking(False)
        try:
            while True:
                more = running.recv(65536)
                if not more:
                    break
                received += more
        except BlockingIOError:
            pass
        # Had the worker stayed with the departed client until the queue reached its request, the
        # third connection would have been served only once the long stream had ended.
        self.assertFalse(b"data: [DONE]" in received, "the long stream ended before the third connection was served")


if __name__ == "__main__":
    unittest.main()
