"""Integration tests of the daemon's audit log: one record per request, verification after a
clean stop and after kill -9, tamper detection, and fail-closed serving. Real daemon on a
loopback port 0, Python standard library only (sqlite3 reads audit.db directly).
"""
import contextlib
import csv
import hashlib
import http.client
import io
import json
import os
import random
import re
import signal
import socket
import sqlite3
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import (FAST_AUTH, KIMICTL, Daemon, base_config, create_api_key, make_signed_model,  # noqa: E402
                            read_chunk, read_head, read_reply, request, send_request, wait_until_ready, run_to_exit)

WAIT_S = 20  # bound on waiting for a state change; only stops a hung test


def audit_config(data_dir, **audit):
    config = base_config()
    config["storage"]["data_dir"] = data_dir
    config["audit"] = audit
    return config


def read_records(data_dir):
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(data_dir, "audit.db"), uri=True)
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute("SELECT * FROM audit_records ORDER BY seq")]
    finally:
        db.close()


def id_sent(record):
    """The X-Request-Id the test sent (the record's client_request_id), else the server's own id
    (a request refused before its head was read has only that)."""
    return record["client_request_id"] or record["request_id"]


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest() if data else ""


def verify(data_dir):
    return run_to_exit([KIMICTL, "audit", "verify", "--data-dir", data_dir])


def audit_component(daemon):
    reply = request(daemon, "GET", "/readyz")
    return reply, reply.json()["components"]["audit"]


def wait_until(predicate, timeout=WAIT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


class AuditRecordsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="kimi-audit-it-")
        self.data_dir = os.path.join(self.tmp.name, "data")

    def tearDown(self):
        self.tmp.cleanup()

    def test_every_request_has_one_record_and_the_log_verifies(self):
        t0 = int(time.time() * 1000)
        daemon = Daemon(config=audit_config(self.data_dir))
        try:
            sent = {}  # request id -> (reply, request body, expected status, expected action)
            r = request(daemon, "GET", "/nope?x=1", {"X-Request-Id": "it-404"})
            sent["it-404"] = (r, b"", 404, "http.unmatched")
            r = request(daemon, "POST", "/v1/nothing", {"X-Request-Id": "it-post"}, body=b"hello")
            sent["it-post"] = (r, b"hello", 404, "http.unmatched")
            r = request(daemon, "POST", "/healthz", {"X-Request-Id": "it-405"}, body=b"{}")
            sent["it-405"] = (r, b"{}", 405, "http.unmatched")
            r = request(daemon, "POST", "/nope", {"X-Request-Id": "it-413", "Content-Length": "999999999999"})
            sent["it-413"] = (r, b"", 413, "http.unmatched")
            r = request(daemon, "POST", "/healthz", {"X-Request-Id": "it-415", "Content-Encoding": "gzip"}, body=b"xx")
            sent["it-415"] = (r, b"", 415, "http.unmatched")
            with daemon.connect() as s:  # 431: the head is over the cap, its id is not read
                s.sendall(b"GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(
                    b"X-More-%d: %s\r\n" % (i, b"b" * 4000) for i in range(5)) + b"\r\n")
                r = read_reply(s)
            sent[r.headers["x-request-id"]] = (r, b"", 431, "http.unmatched")
            with daemon.connect() as s:  # 400: bare line feeds
                s.sendall(b"GET /nope HTTP/1.1\nHost: 127.0.0.1\n\n")
                r = read_reply(s)
            sent[r.headers["x-request-id"]] = (r, b"", 400, "http.unmatched")
            for path in ("/healthz", "/readyz", "/metrics"):  # probes: not recorded by default
                request(daemon, "GET", path, {"X-Request-Id": "it-probe"})
            for rid, (reply, _, status, _) in sent.items():
                self.assertEqual(reply.status, status, rid)
            self.assertEqual(daemon.stop(), 0)
        finally:
            daemon.close()
        t1 = int(time.time() * 1000)

        records = read_records(self.data_dir)
        self.assertEqual([r["seq"] for r in records], list(range(len(records))))
        self.assertEqual(records[0]["action"], "service.start")
        self.assertEqual(records[-1]["action"], "service.stop")
        by_id = {}
        for rec in records[1:-1]:
            if rec["action"].startswith("auth.") or rec["action"] == "policy.update":
                continue  # the harness's API key and the default policy's installation have their own
            self.assertNotIn(id_sent(rec), by_id, "two records for one request")
            by_id[id_sent(rec)] = rec
        self.assertEqual(set(by_id), set(sent), "exactly one record per request, none for probes")
        for rid, (reply, body, status, action) in sent.items():
            rec = by_id[rid]
            self.assertEqual(rec["http_status"], status, rid)
            self.assertEqual(rec["outcome"], "invalid", rid)
            self.assertEqual(rec["action"], action, rid)
            self.assertRegex(rec["source"], r"^127\.0\.0\.1:\d+$")
            self.assertTrue(t0 <= rec["time_ms"] <= t1, rid)
            self.assertGreater(rec["total_us"], 0, rid)
            self.assertEqual(rec["request_sha256"], sha256_hex(body), rid)
            self.assertEqual(rec["response_sha256"], sha256_hex(reply.body.encode()), rid)
        self.assertEqual(by_id["it-404"]["target"], "GET /nope")

        code, out, err = verify(self.data_dir)
        self.assertEqual(code, 0, out + err)

        # One byte of one record changed behind the log's back: verify names its sequence number.
        edited = by_id["it-405"]["seq"]
        db = sqlite3.connect(os.path.join(self.data_dir, "audit.db"))
        db.execute("UPDATE audit_records SET http_status = 200 WHERE seq = ?", (edited,))
        db.commit()
        db.close()
        code, out, err = verify(self.data_dir)
        self.assertNotEqual(code, 0)
        self.assertIn("first bad sequence number %d" % edited, out, out + err)

    def test_probes_are_recorded_when_configured(self):
        daemon = Daemon(config=audit_config(self.data_dir, record_probes=True))
        try:
            reply = request(daemon, "GET", "/healthz", {"X-Request-Id": "it-hz"})
            self.assertEqual(reply.status, 200)
            with daemon.connect() as s:  # HEAD: no body is sent, so none is hashed
                s.sendall(b"HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: it-head\r\nConnection: close\r\n\r\n")
                self.assertIn(b" 200 ", s.recv(65536))
            self.assertEqual(daemon.stop(), 0)
        finally:
            daemon.close()
        # The harness's API key, made with kimictl before the start, and the default policy's
        # installation at the first start have their own records.
        records = [r for r in read_records(self.data_dir)
                   if not r["action"].startswith("auth.") and r["action"] != "policy.update"]
        actions = [(r["action"], id_sent(r), r["outcome"]) for r in records]
        self.assertEqual(actions[1:3], [("http.healthz", "it-hz", "ok"), ("http.healthz", "it-head", "ok")])
        self.assertEqual(records[1]["response_sha256"], sha256_hex(reply.body.encode()))
        self.assertEqual(records[2]["response_sha256"], "")
        self.assertEqual(len(actions), 4)


@contextlib.contextmanager
def audit_db_locked(data_dir):
    """Holds an exclusive lock on the daemon's audit.db: its writer cannot commit meanwhile."""
    lock = sqlite3.connect(os.path.join(data_dir, "audit.db"), isolation_level=None, timeout=10)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        lock.execute("ROLLBACK")
        lock.close()


class AuditFailClosedTest(unittest.TestCase):
    def test_locked_audit_db_gives_503_with_reason_then_recovers(self):
        with tempfile.TemporaryDirectory(prefix="kimi-audit-it-") as tmp:
            data_dir = os.path.join(tmp, "data")
            daemon = Daemon(config=audit_config(data_dir, busy_timeout_ms=100, probe_interval_ms=100))
            try:
                self.assertEqual(request(daemon, "GET", "/nope").status, 404)
                _, component = audit_component(daemon)
                self.assertTrue(component["ready"], component)

                with audit_db_locked(data_dir):
                    reply = request(daemon, "GET", "/nope", {"X-Request-Id": "it-refused"})
                    self.assertEqual(reply.status, 503, reply.body)
                    error = reply.json()["error"]
                    self.assertEqual(error["code"], "audit_unavailable")
                    self.assertIn("locked", error["message"])
                    self.assertRegex(reply.headers.get("x-request-id"), r"^req_[0-9a-f]{24}$")
                    readyz, component = audit_component(daemon)
                    self.assertEqual(readyz.status, 503)
                    self.assertFalse(component["ready"])
                    self.assertIn("audit store cannot write", component["detail"])
                    self.assertIsNotNone(daemon.wait_for_event(
                        lambda e: e.get("msg") == "audit store cannot write"))

                self.assertTrue(wait_until(lambda: audit_component(daemon)[1]["ready"]),
                                "audit component did not become ready again")
                self.assertEqual(request(daemon, "GET", "/nope", {"X-Request-Id": "it-after"}).status, 404)
                self.assertEqual(daemon.stop(), 0)
            finally:
                daemon.close()
            ids = [id_sent(r) for r in read_records(data_dir)]
            self.assertIn("it-after", ids)
            self.assertNotIn("it-refused", ids)  # it was not served, and its record never committed
            code, out, err = verify(data_dir)
            self.assertEqual(code, 0, out + err)


class AdminChangeUnderAuditFailureTest(unittest.TestCase):
    def test_a_key_made_while_the_log_cannot_write_is_answered_with_its_secret(self):
        # The change stands whether or not the request's record is stored, and its own event
        # waits in the auth outbox: a 503 lost the only copy of the secret (a rotation locked its
        # key out).
        with tempfile.TemporaryDirectory(prefix="kimi-audit-it-") as tmp:
            data_dir = os.path.join(tmp, "data")
            daemon = Daemon(config=audit_config(data_dir, busy_timeout_ms=100, probe_interval_ms=100))
            try:
                with audit_db_locked(data_dir):
                    reply = request(daemon, "POST", "/admin/v1/keys", {"Content-Type": "application/json"},
                                    json.dumps({"name": "made-while-locked", "role": "user"}).encode())
                    self.assertEqual(reply.status, 201, reply.body)
                    secret = reply.json()["key"]
                    # An API request still fails closed.
                    self.assertEqual(request(daemon, "GET", "/v1/models").status, 503)
                self.assertTrue(wait_until(lambda: audit_component(daemon)[1]["ready"]))
                self.assertEqual(request(daemon, "GET", "/v1/models", auth=secret).status, 200)
                self.assertEqual(daemon.stop(), 0)
            finally:
                daemon.close()
            self.assertIn("auth.key_created", [r["action"] for r in read_records(data_dir)])


class AuditCrashTest(unittest.TestCase):
    """kill -9 under concurrent load: every response a client saw has its record."""

    CLIENTS = 8
    KILLS = 3

    def load(self, daemon, prefix, seen, seen_lock, stop):
        n = 0
        while not stop.is_set():
            rid = "%s-%d" % (prefix, n)
            n += 1
            try:
                reply = request(daemon, "POST", "/v1/load", {"X-Request-Id": rid}, body=b"payload")
            except (OSError, ConnectionError, ValueError):
                continue  # the daemon died mid-request: this response was never seen
            if reply.status == 404:
                with seen_lock:
                    seen.append(rid)

    def test_kill_9_under_load_loses_no_answered_request(self):
        rng = random.Random(int(os.environ.get("KIMI_IT_SEED", "9")))
        seen, seen_lock = [], threading.Lock()
        with tempfile.TemporaryDirectory(prefix="kimi-audit-it-") as tmp:
            data_dir = os.path.join(tmp, "data")
            for round_ in range(self.KILLS):
                daemon = Daemon(config=audit_config(data_dir))
                try:
                    stop = threading.Event()
                    clients = [threading.Thread(target=self.load,
                                                args=(daemon, "c%d-%d" % (round_, i), seen, seen_lock, stop))
                               for i in range(self.CLIENTS)]
                    for c in clients:
                        c.start()
                    time.sleep(rng.uniform(0.2, 1.0))
                    daemon.proc.send_signal(signal.SIGKILL)
                    daemon.wait_exit()
                    stop.set()
                    for c in clients:
                        c.join(timeout=WAIT_S)
                finally:
                    daemon.close()
            self.assertGreater(len(seen), 0, "no request completed before the kills")

            daemon = Daemon(config=audit_config(data_dir))
            try:
                self.assertTrue(wait_until(lambda: audit_component(daemon)[1]["ready"]))
                self.assertEqual(daemon.stop(), 0)
            finally:
                daemon.close()

            records = read_records(data_dir)
            recorded = {id_sent(r) for r in records}
            missing = [rid for rid in seen if rid not in recorded]
            print("\n%d answered requests over %d kills, %d records" % (len(seen), self.KILLS, len(records)),
                  file=sys.stderr)
            self.assertEqual(missing, [], "answered requests without a record")
            starts = [r for r in records if r["action"] == "service.start"]
            self.assertEqual(len(starts), self.KILLS + 1)
            self.assertEqual(records[-1]["action"], "service.stop")
            code, out, err = verify(data_dir)
            self.assertEqual(code, 0, out + err)


class AnonymousFloodTest(unittest.TestCase):
    """A client without a credential cannot grow the log by one record per request (docs/audit.md
    "Requests without a principal"): past its budget its refusals are counted, every one of them
    is in the log, one by one or in a count, and requests with a key are recorded as before."""

    PER_MINUTE = 30
    SENT = 200

    def test_refusals_past_the_budget_are_counted_and_none_is_lost(self):
        with tempfile.TemporaryDirectory(prefix="kimi-audit-it-") as tmp:
            data_dir = os.path.join(tmp, "data")
            config = audit_config(data_dir, anonymous_records_per_minute_per_source=self.PER_MINUTE)
            daemon = Daemon(config=config)
            try:
                began = time.monotonic()
                for i in range(self.SENT):
                    reply = request(daemon, "POST", "/v1/chat/completions", {"X-Request-Id": "flood-%d" % i},
                                    b"{}", auth="sk-kimi-wrong" if i % 2 else None)
                    self.assertEqual(reply.status, 401)
                elapsed = time.monotonic() - began
                for i in range(5):
                    self.assertEqual(request(daemon, "GET", "/v1/models", {"X-Request-Id": "keyed-%d" % i}).status,
                                     200)
                self.assertEqual(daemon.stop(), 0)
            finally:
                daemon.close()
            records = read_records(data_dir)
            one_by_one = [r for r in records if r["client_request_id"].startswith("flood-")]
            counts = [r for r in records if r["action"] == "http.requests_counted"]
            keyed = [r for r in records if r["client_request_id"].startswith("keyed-")]
            self.assertEqual(len(keyed), 5)
            # The bucket starts full and refills at PER_MINUTE / 60 a second while the flood runs.
            self.assertLessEqual(len(one_by_one), self.PER_MINUTE + 1 + elapsed * self.PER_MINUTE / 60)
            self.assertGreaterEqual(len(one_by_one), self.PER_MINUTE)
            self.assertTrue(counts)
            counted = 0
            for r in counts:
                self.assertEqual((r["source"], r["http_status"], r["outcome"], r["actor"]),
                                 ("127.0.0.1", 401, "denied", ""))
                counted += int(r["detail"].split(" ", 1)[0])
            self.assertEqual(len(one_by_one) + counted, self.SENT)
            self.assertEqual(records[-1]["action"], "service.stop")
            code, out, err = verify(data_dir)
            self.assertEqual(code, 0, out + err)


class AuditEveryActTest(unittest.TestCase):
    """Each refused request and each administrative act gives exactly one record of its kind,
    with the caller's identity and the right outcome (the model lifecycle's acts are checked in
    model_lifecycle_test.py, policy content in policy_test.py)."""

    def test_refusals_and_admin_acts_each_have_one_record(self):
        with tempfile.TemporaryDirectory(prefix="kimi-audit-it-") as tmp:
            data_dir = os.path.join(tmp, "data")
            config = audit_config(data_dir)
            config["auth"] = dict(FAST_AUTH)
            daemon = Daemon(config=config)
            try:
                self.exercise(daemon, data_dir)
                self.assertEqual(daemon.stop(), 0)
            finally:
                daemon.close()
            self.check(daemon, data_dir)
            code, out, err = verify(data_dir)
            self.assertEqual(code, 0, out + err)

    def test_a_start_with_other_settings_records_one_settings_change(self):
        with tempfile.TemporaryDirectory(prefix="kimi-audit-it-") as tmp:
            data_dir = os.path.join(tmp, "data")
            for sign_interval_ms in (10000, 10000, 20000):  # the same settings twice, then a change
                daemon = Daemon(config=audit_config(data_dir, sign_interval_ms=sign_interval_ms))
                try:
                    self.assertEqual(daemon.stop(), 0)
                finally:
                    daemon.close()
            records = read_records(data_dir)
            starts = [r for r in records if r["action"] == "service.start"]
            self.assertEqual(len(starts), 3)
            digests = [re.search(r"settings sha256:([0-9a-f]{64})", r["detail"]).group(1) for r in starts]
            self.assertEqual(digests[0], digests[1])
            self.assertNotEqual(digests[1], digests[2])
            [changed] = [r for r in records if r["action"] == "settings.changed"]
            self.assertEqual(changed["seq"], starts[2]["seq"] + 1)
            self.assertIn("%s -> %s" % (digests[1], digests[2]), changed["detail"])
            self.assertEqual((changed["actor"], changed["role"], changed["outcome"]), ("kimi-appliance", "system", "ok"))
            code, out, err = verify(data_dir)
            self.assertEqual(code, 0, out + err)

    def exercise(self, daemon, data_dir):
        def call(rid, method, path, payload=None, auth=daemon.api_key, body=None):
            headers = {"X-Request-Id": rid, "Content-Type": "application/json"}
            if body is None:
                body = json.dumps(payload).encode() if payload is not None else b""
            return request(daemon, method, path, headers, body, auth=auth)

        self.replies = {}
        chat = {"model": "kimi-k3", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 4}
        # Refused API requests: a bad key, an invalid body, over quota, a policy denial.
        self.replies["bad-key"] = call("it-bad-key", "POST", "/v1/chat/completions", chat, auth="sk-kimi-wrong")
        self.replies["invalid"] = call("it-invalid", "POST", "/v1/chat/completions", body=b"{not json")
        slow = call("it-key-create", "POST", "/admin/v1/keys", {"name": "slow", "role": "user",
                                                                "requests_per_minute": 1})
        self.assertEqual(slow.status, 201, slow.body)
        self.slow = slow.json()
        self.replies["key-create"] = slow
        call("it-quota-1", "GET", "/admin/v1/session", auth=self.slow["key"])
        self.replies["quota"] = call("it-quota", "GET", "/admin/v1/session", auth=self.slow["key"])
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "policies", "examples",
                               "bank.json"), encoding="utf-8") as f:
            self.replies["policy"] = call("it-policy", "POST", "/admin/v1/policies", json.load(f))
        card = dict(chat, messages=[{"role": "user", "content": "card 4111 1111 1111 1111"}])
        self.replies["denied"] = call("it-denied", "POST", "/v1/chat/completions", card)
        # Administrative acts.
        self.replies["limits"] = call("it-limits", "PATCH", "/admin/v1/keys/%s" % self.slow["id"],
                                      {"requests_per_minute": 5})
        self.replies["revoke"] = call("it-revoke", "POST", "/admin/v1/keys/revoke", {"id": self.slow["id"]})
        added = call("it-user-add", "POST", "/admin/v1/users", {"username": "carol", "role": "auditor"})
        self.replies["user-add"] = added
        password = added.json().get("password") or added.json().get("one_time_password")
        self.replies["login-failed"] = call("it-login-failed", "POST", "/admin/v1/session",
                                            {"username": "carol", "password": "not-her-password"}, auth=None)
        self.replies["login"] = call("it-login", "POST", "/admin/v1/session",
                                     {"username": "carol", "password": password}, auth=None)
        self.replies["user-disable"] = call("it-user-disable", "POST", "/admin/v1/users/disable", {"username": "carol"})
        self.replies["export"] = call("it-export", "GET", "/admin/v1/audit/export")

    def check(self, daemon, data_dir):
        expected_status = {"bad-key": 401, "invalid": 400, "key-create": 201, "quota": 429, "policy": 201,
                           "denied": 400, "limits": 200, "revoke": 200, "user-add": 201, "login-failed": 401,
                           "login": 200, "user-disable": 200, "export": 200}
        for name, status in expected_status.items():
            self.assertEqual(self.replies[name].status, status, "%s: %s" % (name, self.replies[name].body))
        records = read_records(data_dir)
        by_request = {}
        for r in records:
            by_request.setdefault(id_sent(r), []).append(r)

        def http_record(rid, outcome, actor=daemon.api_key_id, role="admin"):
            mine = [r for r in by_request.get(rid, []) if r["action"].startswith("http.")]
            self.assertEqual(len(mine), 1, "%s: %r" % (rid, mine))
            r = mine[0]
            self.assertEqual((r["outcome"], r["actor"], r["role"]), (outcome, actor, role), rid)
            self.assertRegex(r["source"], r"^127\.0\.0\.1:\d+$")
            self.assertRegex(r["response_sha256"], "^[0-9a-f]{64}$")
            self.assertGreater(r["time_ms"], 0)
            return r

        def act(action, target=None, actor=daemon.api_key_id):
            mine = [r for r in records if r["action"] == action and (target is None or r["target"] == target)]
            self.assertEqual(len(mine), 1, "%s %s: %r" % (action, target, mine))
            self.assertEqual(mine[0]["actor"], actor, action)
            return mine[0]

        bad = http_record("it-bad-key", "denied", actor="", role="")
        self.assertNotIn("sk-kimi-wrong", repr(records))
        self.assertNotEqual(bad["detail"], "")
        invalid = http_record("it-invalid", "invalid")
        self.assertEqual(invalid["request_sha256"], sha256_hex(b"{not json"))
        quota = http_record("it-quota", "invalid", actor=self.slow["id"], role="user")
        self.assertEqual(quota["http_status"], 429)
        self.assertIn("rate limited", quota["detail"])
        denied = http_record("it-denied", "invalid")
        self.assertIn("policy:v2", denied["policy"])
        self.assertNotIn("4111", repr(denied))
        for rid in ("it-key-create", "it-policy", "it-limits", "it-revoke", "it-user-add", "it-user-disable",
                    "it-export"):
            http_record(rid, "ok")
        http_record("it-login-failed", "denied", actor="", role="")

        act("auth.key_created", self.slow["id"])
        act("auth.key_updated", self.slow["id"])
        act("auth.key_revoked", self.slow["id"])
        act("auth.user_added", "carol")
        act("auth.user_disabled", "carol")
        act("auth.login_failed", "carol", actor="carol")  # the name tried; no key or session
        act("auth.login", "carol", actor="carol")
        policy = act("policy.update", "policy/2")
        self.assertEqual(policy["outcome"], "ok")
        self.assertEqual(policy["request_id"], self.replies["policy"].headers["x-request-id"])
        self.assertEqual(policy["client_request_id"], "it-policy")
        export = act("audit.export")
        self.assertEqual(export["request_id"], self.replies["export"].headers["x-request-id"])
        self.assertEqual(export["client_request_id"], "it-export")
        self.assertEqual(export["response_sha256"], sha256_hex(self.replies["export"].body.encode("utf-8")))
        self.assertEqual(records[0]["action"], "service.start")
        self.assertEqual(records[-1]["action"], "service.stop")
        self.assertEqual(len([r for r in records if r["action"].startswith("service.")]), 2)


MODEL_ID = "kimi-k3-nano"


def records_of(data_dir, request_id):
    return [r for r in read_records(data_dir) if id_sent(r) == request_id]


def chat_request(request_id, stream, max_tokens=12):
    body = {"model": MODEL_ID, "messages": [{"role": "user", "content": "Name three rivers."}],
            "max_tokens": max_tokens, "temperature": 0}
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return {"X-Request-Id": request_id, "Content-Type": "application/json"}, json.dumps(body).encode()


def long_stream_request(request_id):
    """A streamed request the demo model cannot end early: a schema holds it to at least 1,000
    array items whatever the random-weight model would rather say."""
    headers, body = chat_request(request_id, stream=True, max_tokens=4000)
    body = json.loads(body)
    body["thinking"] = {"type": "disabled"}
    body["response_format"] = {"type": "json_schema", "json_schema": {"name": "long", "schema": {
        "type": "array", "items": {"type": "integer"}, "minItems": 1000}}}
    return headers, json.dumps(body).encode()


class AuditStreamTest(unittest.TestCase):
    """Model requests through the real daemon: a whole response's record is written before it,
    a stream's start record before its first byte and its end record, with the hash of the
    bytes the client received and what the backend reported, as it ends."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kimi-audit-it-")
        model, public_key, _ = make_signed_model(cls.tmp.name)
        cls.model, cls.public_key = model, public_key
        cls.data_dir = os.path.join(cls.tmp.name, "data")
        cls.daemon = Daemon(config=cls.model_daemon_config(cls.data_dir))
        state = wait_until_ready(cls.daemon)
        if not state or not state["ready"]:
            cls.daemon.close()
            raise RuntimeError("the model did not become ready: %r" % (state,))

    @classmethod
    def model_daemon_config(cls, data_dir):
        config = audit_config(data_dir)
        config["model"] = {"dir": cls.model, "trust_store": cls.public_key, "served_id": MODEL_ID, "threads": 2}
        return config

    @classmethod
    def tearDownClass(cls):
        cls.daemon.close()
        cls.tmp.cleanup()

    def assert_model_fields(self, record):
        self.assertEqual(record["v"], 4)
        self.assertEqual(record["model"], MODEL_ID)
        self.assertRegex(record["model_digest"], "^[0-9a-f]{64}$")
        self.assertNotEqual(record["backend"], "")
        self.assertGreaterEqual(record["attempts"], 1)
        self.assertGreater(record["prompt_tokens"], 0)
        self.assertGreaterEqual(record["completion_tokens"], 0)
        self.assertGreater(record["ttft_us"], 0)
        self.assertGreaterEqual(record["total_us"], record["ttft_us"])
        # The default policy: its version and the workload class, nothing redacted.
        self.assertEqual(record["policy"], '["policy:v1","class:chat"]')
        self.assertEqual(record["actor"], self.daemon.api_key_id)
        self.assertEqual(record["role"], "admin")

    def test_streamed_record_hashes_the_bytes_received(self):
        headers, body = chat_request("it-stream", stream=True)
        reply = request(self.daemon, "POST", "/v1/chat/completions", headers, body)
        self.assertEqual(reply.status, 200)
        self.assertTrue(reply.headers["content-type"].startswith("text/event-stream"))
        self.assertTrue(reply.body.endswith("data: [DONE]\n\n"))
        start, record = records_of(self.data_dir, "it-stream")
        self.assertEqual(start["outcome"], "started")
        self.assertEqual(start["response_sha256"], "")
        self.assertEqual(start["request_sha256"], sha256_hex(body))
        self.assertEqual(start["start_seq"], -1)
        self.assert_model_fields(start)
        self.assertEqual(record["start_seq"], start["seq"])
        self.assertEqual(record["request_id"], start["request_id"])
        self.assertEqual(record["response_sha256"], sha256_hex(reply.body.encode("utf-8")))
        self.assertEqual(record["request_sha256"], sha256_hex(body))
        self.assertEqual(record["outcome"], "ok")
        self.assertRegex(record["detail"], "^finish_reason (stop|length)$")
        self.assertEqual(record["http_status"], 200)
        self.assertEqual(record["action"], "http.chat_completions")
        self.assert_model_fields(record)
        # The usage frame and the record agree on the token counts.
        frames = [line[len("data: "):] for line in reply.body.split("\n") if line.startswith("data: {")]
        usage = [json.loads(f)["usage"] for f in frames if json.loads(f).get("usage")]
        self.assertEqual(usage[-1]["prompt_tokens"], record["prompt_tokens"])
        self.assertEqual(usage[-1]["completion_tokens"], record["completion_tokens"])

    def test_whole_response_record_has_the_same_fields(self):
        headers, body = chat_request("it-whole", stream=False)
        reply = request(self.daemon, "POST", "/v1/chat/completions", headers, body)
        self.assertEqual(reply.status, 200)
        [record] = records_of(self.data_dir, "it-whole")
        self.assertEqual(record["response_sha256"], sha256_hex(reply.body.encode("utf-8")))
        self.assertEqual(record["outcome"], "ok")
        self.assert_model_fields(record)
        self.assertEqual(record["prompt_tokens"], reply.json()["usage"]["prompt_tokens"])

    def test_client_that_leaves_mid_stream_is_recorded(self):
        headers, body = chat_request("it-gone", stream=True, max_tokens=4000)
        with self.daemon.connect() as s:
            headers["Authorization"] = "Bearer " + self.daemon.api_key
            send_request(s, "POST", "/v1/chat/completions", headers, body)
            status, _, _, _ = read_head(s)
            self.assertEqual(status, 200)
        self.assertTrue(wait_until(lambda: len(records_of(self.data_dir, "it-gone")) == 2))
        start, record = records_of(self.data_dir, "it-gone")
        self.assertEqual(record["start_seq"], start["seq"])
        # A random-weight model may finish before the close is noticed; either way one record.
        self.assertIn(record["outcome"], ("client_disconnected", "ok"))
        self.assertRegex(record["response_sha256"], "^[0-9a-f]{64}$")

    def test_client_that_leaves_a_whole_response_cancels_it(self):
        # The schema holds the model to at least 1,000 array items (2,000 tokens or more) whatever
        # the random-weight demo model would rather say, so the generation outlives the client's
        # 0.3 s unless leaving cancels it.
        headers, body = chat_request("it-whole-gone", stream=False, max_tokens=4000)
        body = json.loads(body)
        body["thinking"] = {"type": "disabled"}  # the schema holds the answer, not the reasoning
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "long", "schema": {
            "type": "array", "items": {"type": "integer"}, "minItems": 1000}}}
        body = json.dumps(body).encode()
        headers["Authorization"] = "Bearer " + self.daemon.api_key
        with self.daemon.connect() as s:
            send_request(s, "POST", "/v1/chat/completions", headers, body)
            time.sleep(0.3)
        self.assertTrue(wait_until(lambda: len(records_of(self.data_dir, "it-whole-gone")) == 1))
        [record] = records_of(self.data_dir, "it-whole-gone")
        self.assertEqual(record["outcome"], "client_disconnected")
        self.assertEqual(record["http_status"], 499)
        self.assertLess(record["completion_tokens"], 4000)

    def test_stream_in_flight_at_shutdown_is_recorded(self):
        data_dir = os.path.join(self.tmp.name, "data-stop")
        config = self.model_daemon_config(data_dir)
        config["limits"] = {"shutdown_grace_ms": 300}  # the stream outlives the grace period
        daemon = Daemon(config=config)
        try:
            self.assertTrue(wait_until_ready(daemon)["ready"])
            headers, body = chat_request("it-stop", stream=True, max_tokens=4000)
            headers["Authorization"] = "Bearer " + daemon.api_key
            with daemon.connect(timeout=60) as s:
                send_request(s, "POST", "/v1/chat/completions", headers, body)
                status, _, _, _ = read_head(s)
                self.assertEqual(status, 200)
                daemon.proc.send_signal(signal.SIGTERM)
                while s.recv(65536):
                    pass
            self.assertEqual(daemon.wait_exit(), 0)
        finally:
            daemon.close()
        start, record = records_of(data_dir, "it-stop")
        self.assertEqual(record["start_seq"], start["seq"])
        self.assertIn(record["outcome"], ("ok", "client_disconnected", "interrupted"))
        self.assertRegex(record["response_sha256"], "^[0-9a-f]{64}$")
        self.assertEqual(verify(data_dir)[0], 0)

    def test_audit_store_failing_mid_stream_ends_it_with_an_error_frame(self):
        data_dir = os.path.join(self.tmp.name, "data-failing")
        config = self.model_daemon_config(data_dir)
        config["audit"] = {"busy_timeout_ms": 100, "probe_interval_ms": 100}
        daemon = Daemon(config=config)
        try:
            self.assertTrue(wait_until_ready(daemon)["ready"])
            headers, body = long_stream_request("it-store-fails")
            headers["Authorization"] = "Bearer " + daemon.api_key
            with daemon.connect(timeout=60) as s:
                send_request(s, "POST", "/v1/chat/completions", headers, body)
                status, _, _, rest = read_head(s)
                self.assertEqual(status, 200)
                received = b""
                for _ in range(3):  # the stream is flowing
                    payload, rest = read_chunk(s, rest)
                    self.assertNotEqual(payload, b"", "the stream ended before the store failed")
                    received += payload
                lock = sqlite3.connect(os.path.join(data_dir, "audit.db"), isolation_level=None, timeout=10)
                lock.execute("BEGIN EXCLUSIVE")
                try:
                    # Another request's record fails: the store is known to be failing.
                    self.assertEqual(request(daemon, "GET", "/nope").status, 503)
                    while True:
                        payload, rest = read_chunk(s, rest)
                        if not payload:
                            break
                        received += payload
                finally:
                    lock.execute("ROLLBACK")
                    lock.close()
            last = received.decode("utf-8").rstrip("\n").split("\n\n")[-1]
            self.assertTrue(last.startswith("data: {"), last)
            self.assertEqual(json.loads(last[len("data: "):])["error"]["code"], "audit_unavailable")
            self.assertNotIn(b"[DONE]", received)
            # The end is written once the store is back, with exactly what the client got.
            self.assertTrue(wait_until(lambda: len(records_of(data_dir, "it-store-fails")) == 2))
            start, end = records_of(data_dir, "it-store-fails")
            self.assertEqual(start["outcome"], "started")
            self.assertEqual(end["outcome"], "audit_unavailable")
            self.assertEqual(end["start_seq"], start["seq"])
            self.assertEqual(end["response_sha256"], sha256_hex(received))
            # Cut at the failure, long before the 1,000 items the schema holds the answer to.
            self.assertLess(end["completion_tokens"], 1000)
            self.assertEqual(daemon.stop(), 0)
        finally:
            daemon.close()
        self.assertEqual(verify(data_dir)[0], 0)

    def test_log_verifies_after_model_requests(self):
        headers, body = chat_request("it-verify", stream=True)
        self.assertEqual(request(self.daemon, "POST", "/v1/chat/completions", headers, body).status, 200)
        reply = request(self.daemon, "GET", "/admin/v1/audit/verify")
        self.assertEqual(reply.status, 200)
        self.assertTrue(reply.json()["ok"], reply.body)


class AuditAdminApiTest(unittest.TestCase):
    """The auditors' routes: search, export bundle, verify; admin and auditor only."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kimi-audit-it-")
        cls.data_dir = os.path.join(cls.tmp.name, "data")
        cls.daemon = Daemon(config=audit_config(cls.data_dir))
        cls.keys = {role: create_api_key(cls.data_dir, "it-" + role, role) for role in ("auditor", "operator", "user")}

    @classmethod
    def tearDownClass(cls):
        cls.daemon.close()
        cls.tmp.cleanup()

    def get(self, path, role=None, headers=None):
        auth = self.keys[role][0] if role else None
        if role is None:
            return request(self.daemon, "GET", path, headers)
        return request(self.daemon, "GET", path, headers, auth=auth)

    def test_a_slow_export_reader_holds_no_snapshot_of_the_log(self):
        # The export is made from one snapshot into a spool file, then streamed: a client that
        # reads slowly holds no read transaction on audit.db, which would keep every record
        # committed meanwhile in the WAL (gigabytes a minute under load). A TRUNCATE checkpoint,
        # which waits for no reader, completes while the export is still being read.
        conn = http.client.HTTPConnection("127.0.0.1", self.daemon.port, timeout=30)
        try:
            for _ in range(4000):  # records enough that the bundle outgrows the socket buffers
                conn.request("GET", "/admin/v1/roles", headers={"Authorization": "Bearer " + self.daemon.api_key})
                conn.getresponse().read()
        finally:
            conn.close()
        s = self.daemon.connect(timeout=30)
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            send_request(s, "GET", "/admin/v1/audit/export?format=jsonl",
                         {"Authorization": "Bearer " + self.keys["auditor"][0]})
            self.assertTrue(s.recv(4096).startswith(b"HTTP/1.1 200"))
            time.sleep(0.5)
            db = sqlite3.connect(os.path.join(self.data_dir, "audit.db"), timeout=0)
            try:
                busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                db.close()
            self.assertEqual(busy, 0, "a reader still holds a snapshot of the log")
        finally:
            s.close()

    def test_refused_queries_name_their_parameter(self):
        for query, param in (("limit=0", "limit"), ("order=sideways", "order"), ("since=2027-02-30", "since"),
                             ("q=" + "x" * 300, "q")):
            reply = self.get("/admin/v1/audit?" + query)
            self.assertEqual(reply.status, 400, (query, reply.body))
            self.assertEqual(reply.json()["error"]["param"], param, (query, reply.body))

    def test_only_admin_and_auditor_may_read(self):
        for path in ("/admin/v1/audit", "/admin/v1/audit/export", "/admin/v1/audit/verify"):
            for role in ("operator", "user"):
                self.assertEqual(self.get(path, role).status, 403, (path, role))
            self.assertEqual(request(self.daemon, "GET", path, auth=None).status, 401, path)
            self.assertEqual(self.get(path, "auditor").status, 200, path)
            self.assertEqual(self.get(path).status, 200, path)  # admin

    def test_search_filters_and_pages(self):
        for i in range(3):
            request(self.daemon, "GET", "/nope", {"X-Request-Id": "it-search-%d" % i})
        reply = self.get("/admin/v1/audit?client_request_id=it-search-1", "auditor")
        self.assertEqual(reply.status, 200)
        [record] = reply.json()["records"]
        self.assertEqual(record["client_request_id"], "it-search-1")
        [same] = self.get("/admin/v1/audit?request_id=" + record["request_id"], "auditor").json()["records"]
        self.assertEqual(same["seq"], record["seq"])
        self.assertEqual(record["action"], "http.unmatched")
        self.assertEqual(record["outcome"], "invalid")
        actor = self.daemon.api_key_id
        pages, cursor = [], None
        while True:
            path = "/admin/v1/audit?action=http.unmatched&actor=%s&limit=1&order=oldest" % actor
            if cursor:
                path += "&cursor=" + cursor
            body = self.get(path, "auditor").json()
            pages.append([r["client_request_id"] for r in body["records"]])
            cursor = body["next_cursor"]
            if cursor is None:
                break
        found = [ids[0] for ids in pages if ids]
        self.assertEqual([r for r in found if r.startswith("it-search-")], ["it-search-0", "it-search-1", "it-search-2"])
        self.assertTrue(all(len(ids) <= 1 for ids in pages))
        now = int(time.time() * 1000)
        self.assertEqual(self.get("/admin/v1/audit?since=%d" % (now + 3600000), "auditor").json()["records"], [])
        self.assertEqual(self.get("/admin/v1/audit?limit=0", "auditor").status, 400)
        self.assertEqual(self.get("/admin/v1/audit?since=yesterday", "auditor").status, 400)

    def test_export_is_audited_and_verifies_with_kimictl(self):
        t0 = int(time.time() * 1000) - 60000
        request(self.daemon, "GET", "/nope", {"X-Request-Id": "it-export-probe"})
        reply = self.get("/admin/v1/audit/export?since=%d" % t0, "auditor", {"X-Request-Id": "it-export"})
        self.assertEqual(reply.status, 200, reply.body)
        self.assertEqual(reply.headers.get("transfer-encoding"), "chunked")  # streamed as it is read
        lines = [json.loads(line) for line in reply.body.split("\n") if line]
        self.assertEqual(lines[0]["type"], "export")
        self.assertIn("it-export-probe", [r.get("client_request_id") for r in lines if r["type"] == "record"])
        self.assertEqual(lines[-1]["type"], "signed_head")
        bundle = os.path.join(self.tmp.name, "bundle.jsonl")
        with open(bundle, "w") as f:
            f.write(reply.body)
        code, out, err = run_to_exit([KIMICTL, "audit", "verify", "--export", bundle, "--data-dir", self.data_dir])
        self.assertEqual(code, 0, out + err)
        self.assertIn("export bundle verifies", out)
        # An edited record in the bundle fails with its sequence number.
        edited = [dict(r) for r in lines]
        victim = next(r for r in edited if r["type"] == "record")
        victim["actor"] = "someone-else"
        with open(bundle, "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in edited))
        code, out, _ = run_to_exit([KIMICTL, "audit", "verify", "--export", bundle, "--data-dir", self.data_dir])
        self.assertEqual(code, 1, out)
        self.assertIn("first bad sequence number %d" % victim["seq"], out)
        # The export itself is an administrative act with its own record.
        acts = [r for r in read_records(self.data_dir) if r["action"] == "audit.export" and
                r["request_id"] == reply.headers["x-request-id"]]
        self.assertEqual(len(acts), 1)
        self.assertEqual(acts[0]["actor"], self.keys["auditor"][1])
        self.assertEqual(acts[0]["role"], "auditor")
        self.assertEqual(acts[0]["response_sha256"], sha256_hex(reply.body.encode("utf-8")))

    def test_export_as_csv(self):
        request(self.daemon, "GET", "/nope", {"X-Request-Id": "it-csv-probe"})
        reply = self.get("/admin/v1/audit/export?format=csv", "auditor", {"X-Request-Id": "it-csv"})
        self.assertEqual(reply.status, 200, reply.body)
        self.assertTrue(reply.headers.get("content-type", "").startswith("text/csv"), reply.headers)
        rows = list(csv.reader(io.StringIO(reply.body)))
        self.assertEqual(rows[0][:3], ["type", "seq", "time"])
        client_request_id = rows[0].index("client_request_id")
        self.assertIn("it-csv-probe", [row[client_request_id] for row in rows[1:] if row[0] == "record"])
        self.assertEqual(self.get("/admin/v1/audit/export?format=xml", "auditor").status, 400)
        acts = [r for r in read_records(self.data_dir) if r["action"] == "audit.export" and
                r["request_id"] == reply.headers["x-request-id"]]
        self.assertEqual(len(acts), 1)
        self.assertTrue(acts[0]["target"].endswith("format=csv"), acts[0]["target"])

    def test_verify_route_reports_the_chain(self):
        body = self.get("/admin/v1/audit/verify", "auditor").json()
        self.assertTrue(body["ok"], body)
        self.assertGreater(body["records"], 0)
        self.assertIsNone(body["first_bad_seq"])


if __name__ == "__main__":
    unittest.main()
