"""Crash test of the audit log's promise for streamed responses: no byte of model output
reaches a client before a record of the request is committed, and a stream cut by the
daemon's death is ended by an `interrupted` record when the daemon starts again.

Each cycle starts the real daemon (demo model) on the data directory of the previous cycle,
runs concurrent streamed clients on raw sockets (so every byte is seen), kill -9's the daemon
at a random moment, checks the log with `kimictl audit verify`, and after the restart checks
every request that received any byte against the log (matched by the X-Request-Id the daemon
sent back). Python standard library only; sqlite3 reads audit.db directly.

KIMI_IT_SEED fixes the random moments; KIMI_IT_CYCLES the number of cycles (default 10).
"""
import hashlib
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from audit_test import read_records  # noqa: E402
from daemon_harness import (KIMICTL, Daemon, base_config, make_signed_model, run_to_exit,  # noqa: E402
                            request, send_request, wait_until_ready)

MODEL_ID = "kimi-k3-nano"
CLIENTS = 8
CYCLES = int(os.environ.get("KIMI_IT_CYCLES", "10"))
READ_TIMEOUT_S = 60  # a socket read bound; only stops a hung test


def dechunk(data):
    """The payload of a chunked body, and whether its last chunk arrived."""
    body = b""
    while True:
        line_end = data.find(b"\r\n")
        if line_end < 0:
            return body, False
        size = int(data[:line_end].split(b";")[0], 16)
        if size == 0:
            return body, True
        start = line_end + 2
        if len(data) < start + size + 2:
            return body + data[start:start + size], False
        body += data[start:start + size]
        data = data[start + size + 2:]


class Stream:
    """What one client received: every byte, and from them the server's request id."""

    def __init__(self, client_id):
        self.client_id = client_id
        self.received = b""
        self.status = None
        self.request_id = None
        self.body = b""
        self.complete = False

    def parse(self):
        head, sep, rest = self.received.partition(b"\r\n\r\n")
        if not sep:
            return
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ")[1])
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "x-request-id":
                self.request_id = value.strip()
        if self.status == 200:
            self.body, self.complete = dechunk(rest)


def stream_once(daemon, client_id, max_tokens):
    body = json.dumps({"model": MODEL_ID, "messages": [{"role": "user", "content": "Name three rivers."}],
                       "max_tokens": max_tokens, "temperature": 0, "stream": True,
                       "stream_options": {"include_usage": True}}).encode()
    headers = {"Authorization": "Bearer " + daemon.api_key, "Content-Type": "application/json",
               "X-Request-Id": client_id}
    stream = Stream(client_id)
    try:
        with daemon.connect(timeout=READ_TIMEOUT_S) as s:
            send_request(s, "POST", "/v1/chat/completions", headers, body)
            while True:
                data = s.recv(65536)
                if not data:
                    break
                stream.received += data
    except OSError:
        pass  # refused (the daemon is gone) or reset mid-stream: what arrived is kept
    stream.parse()
    return stream


class StreamCrashTest(unittest.TestCase):
    def test_kill_9_under_streamed_load_leaves_every_delivered_stream_recorded(self):
        rng = random.Random(int(os.environ.get("KIMI_IT_SEED", "31")))
        with tempfile.TemporaryDirectory(prefix="kimi-stream-crash-") as tmp:
            model, public_key, _ = make_signed_model(tmp)
            data_dir = os.path.join(tmp, "data")
            config = base_config()
            config["storage"]["data_dir"] = data_dir
            config["model"] = {"dir": model, "trust_store": public_key, "served_id": MODEL_ID, "threads": 1}
            totals = {"delivered": 0, "complete": 0, "cut": 0, "interrupted": 0}
            cut_before = []  # streams cut by the previous cycle's kill
            for cycle in range(CYCLES + 1):
                daemon = Daemon(config=config)
                try:
                    self.assertTrue(wait_until_ready(daemon)["ready"], "the model did not become ready")
                    # The restart has ended every stream the kill cut, before it listened.
                    self.check_interrupted(data_dir, cut_before, totals)
                    if cycle == CYCLES:
                        self.check_listed(daemon, data_dir)
                        self.assertEqual(daemon.stop(), 0)
                        break
                    streams = self.run_until_killed(daemon, cycle, rng)
                finally:
                    daemon.close()
                code, out, err = run_to_exit([KIMICTL, "audit", "verify", "--data-dir", data_dir])
                self.assertEqual(code, 0, "cycle %d: %s%s" % (cycle, out, err))
                cut_before = self.check_delivered(data_dir, streams, totals)
            code, out, err = run_to_exit([KIMICTL, "audit", "verify", "--data-dir", data_dir])
            self.assertEqual(code, 0, out + err)
            print("\n%d cycles: %d streams delivered bytes, %d complete, %d cut by the kill, %d recorded interrupted"
                  % (CYCLES, totals["delivered"], totals["complete"], totals["cut"], totals["interrupted"]),
                  file=sys.stderr)
            self.assertGreater(totals["complete"], 0)
            self.assertGreater(totals["interrupted"], 0, "no kill cut a stream: the test proved nothing")

    def run_until_killed(self, daemon, cycle, rng):
        streams, lock, stop = [], threading.Lock(), threading.Event()
        seeds = [rng.random() for _ in range(CLIENTS)]

        def client(i):
            local = random.Random(seeds[i])
            n = 0
            while not stop.is_set():
                stream = stream_once(daemon, "c%d-%d-%d" % (cycle, i, n), local.randint(8, 64))
                n += 1
                with lock:
                    streams.append(stream)
                if not stream.received:
                    break  # refused: the daemon is gone

        threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.3, 2.5))
        daemon.proc.send_signal(signal.SIGKILL)
        daemon.wait_exit()
        stop.set()
        for t in threads:
            t.join(timeout=READ_TIMEOUT_S)
        return streams

    def check_delivered(self, data_dir, streams, totals):
        """Every stream that received a byte has its start record; a complete one its end record
        with the hash of exactly the bytes received. Returns the start seqs the kill left open."""
        records = read_records(data_dir)
        by_request = {}
        for r in records:
            if r["request_id"]:
                by_request.setdefault(r["request_id"], []).append(r)
        delivered = [s for s in streams if s.received]
        for s in delivered:
            self.assertIsNotNone(s.request_id, "%s: bytes without a response head: %r" % (s.client_id, s.received))
        unrecorded = ["%s (%s, %d bytes%s)" % (s.client_id, s.request_id, len(s.received), "" if s.complete else ", cut")
                      for s in delivered if s.request_id not in by_request]
        self.assertEqual(unrecorded, [], "%d of %d requests that received bytes have no audit record"
                         % (len(unrecorded), len(delivered)))
        open_starts = []
        for s in delivered:
            mine = by_request[s.request_id]
            if s.status != 200:
                continue  # a whole error response: one record, as before
            totals["delivered"] += 1
            starts = [r for r in mine if r["outcome"] == "started"]
            self.assertEqual(len(starts), 1, mine)
            ends = [r for r in mine if r["start_seq"] == starts[0]["seq"]]
            self.assertLessEqual(len(ends), 1, mine)
            if s.complete:
                totals["complete"] += 1
                self.assertEqual(len(ends), 1, "%s: complete stream without its end record" % s.client_id)
                self.assertEqual(ends[0]["outcome"], "ok")
                self.assertEqual(ends[0]["response_sha256"], hashlib.sha256(s.body).hexdigest())
            else:
                totals["cut"] += 1
                if not ends:
                    open_starts.append(starts[0]["seq"])
        return open_starts

    def check_listed(self, daemon, data_dir):
        """The auditors' two ways to list the interrupted streams find exactly those in the log."""
        logged = sorted(r["seq"] for r in read_records(data_dir) if r["outcome"] == "interrupted")
        reply = request(daemon, "GET", "/admin/v1/audit?outcome=interrupted&limit=1000")
        self.assertEqual(reply.status, 200, reply.body)
        self.assertEqual(sorted(r["seq"] for r in reply.json()["records"]), logged)
        code, out, err = run_to_exit([KIMICTL, "audit", "list", "--outcome", "interrupted", "--data-dir", data_dir])
        self.assertEqual(code, 0, err)
        listed = [json.loads(line) for line in out.splitlines()]
        self.assertEqual(sorted(r["seq"] for r in listed), logged)
        self.assertTrue(all(r["start_seq"] >= 0 for r in listed), listed)

    def check_interrupted(self, data_dir, open_starts, totals):
        if not open_starts:
            return
        ends = {r["start_seq"]: r for r in read_records(data_dir) if r["start_seq"] >= 0}
        for seq in open_starts:
            self.assertIn(seq, ends, "stream started at seq %d has no end record after the restart" % seq)
            self.assertEqual(ends[seq]["outcome"], "interrupted", ends[seq])
            totals["interrupted"] += 1


if __name__ == "__main__":
    unittest.main()
