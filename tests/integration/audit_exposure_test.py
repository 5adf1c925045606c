"""Findings 2, 7 and 8 of the appliance's penetration test, against the real daemon.

AuditBoundsTest: an anonymous login with a 7 MB user name adds a few KiB to audit.db, not
28 MB (every audited string is bounded, audit/audit_text.h); a user name that a spreadsheet
would run as a formula is a plain text cell in the CSV export; control characters in audited
text cannot break a line.

ExposureTest: a `user` key is refused the model store's routes; anonymous /readyz says only
which components are ready; the server gives every request its own id and keeps the client's
X-Request-Id beside it, searchable; every file of the data directory is the owner's alone,
including files that were left looser before the daemon started.
"""
import csv
import io
import json
import os
import sqlite3
import stat
import sys
import tempfile
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from daemon_harness import Daemon, base_config, post_json, request  # noqa: E402

WAIT_S = 20  # bound on waiting for a record; only stops a hung test
FORMULA = '=HYPERLINK("http://x.invalid/","x")'


def open_audit_db(data_dir):
    return sqlite3.connect("file:%s?mode=ro" % os.path.join(data_dir, "audit.db"), uri=True)


def database_bytes(data_dir):
    """The audit database's size as SQLite sees it (its pages, write-ahead log included)."""
    db = open_audit_db(data_dir)
    try:
        return db.execute("PRAGMA page_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]
    finally:
        db.close()


def records(data_dir, where="1", args=()):
    db = open_audit_db(data_dir)
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute("SELECT * FROM audit_records WHERE %s ORDER BY seq" % where, args)]
    finally:
        db.close()


def login(daemon, username, password="not-the-password"):
    body = json.dumps({"username": username, "password": password}).encode()
    return request(daemon, "POST", "/admin/v1/session", {"Content-Type": "application/json"}, body, auth=None)


def wait_for(predicate):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    return None


class AuditBoundsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(config=base_config())

    @classmethod
    def tearDownClass(cls):
        cls.daemon.close()

    def test_a_huge_login_name_adds_a_few_kib(self):
        name = "u" * (7 * 1024 * 1024)
        before = database_bytes(self.daemon.data_dir)
        reply = login(self.daemon, name)
        self.assertIn(reply.status, (400, 401, 413), reply.body[:200])
        if reply.status == 401:  # refused as a failed login: its auth event follows the reply's record
            self.assertIsNotNone(wait_for(lambda: records(self.daemon.data_dir, "action = 'auth.login_failed'")))
        grown = database_bytes(self.daemon.data_dir) - before
        self.assertLessEqual(grown, 16 * 1024, "audit.db grew by %d bytes" % grown)
        for record in records(self.daemon.data_dir, "seq >= 0"):
            for key, value in record.items():
                if isinstance(value, str):
                    self.assertLessEqual(len(value.encode()), 4096, key)

    def test_a_formula_user_name_is_text_in_the_csv_export(self):
        # A formula in a caller's text reaches a record whatever the route makes of it: here a
        # user name (refused as malformed) sent with the same formula as its X-Request-Id.
        body = json.dumps({"username": FORMULA, "password": "not-the-password"}).encode()
        reply = request(self.daemon, "POST", "/admin/v1/session",
                        {"Content-Type": "application/json", "X-Request-Id": FORMULA}, body, auth=None)
        self.assertIn(reply.status, (400, 401), reply.body)
        self.assertIsNotNone(wait_for(lambda: records(self.daemon.data_dir, "client_request_id = ?", (FORMULA,))))
        reply = request(self.daemon, "GET", "/admin/v1/audit/export?format=csv")
        self.assertEqual(reply.status, 200)
        rows = list(csv.reader(io.StringIO(reply.body, newline="")))
        self.assertGreater(len(rows), 2)
        for row in rows:
            for cell in row:
                self.assertFalse(cell[:1] in ("=", "+", "-", "@", "\t", "\r"), "formula cell %r" % cell)
        self.assertIn("'" + FORMULA, [cell for row in rows for cell in row])

    def test_control_characters_cannot_break_a_record(self):
        # A control byte other than a tab in a header is refused before anything reads it...
        reply = request(self.daemon, "GET", "/admin/v1/session", {"X-Request-Id": "it-\x1b[2Jforged"})
        self.assertEqual(reply.status, 400, reply.body)
        self.assertEqual(json.loads(reply.body)["error"]["code"], "malformed_request")
        # ...and a tab, which a header value may hold, is recorded as visible text.
        reply = request(self.daemon, "GET", "/admin/v1/session", {"X-Request-Id": "it-\tforged"})
        self.assertEqual(reply.status, 200)
        found = wait_for(lambda: records(self.daemon.data_dir, "client_request_id LIKE 'it-%forged'"))
        self.assertIsNotNone(found)
        self.assertEqual(found[0]["client_request_id"], "it-\\u0009forged")


    def test_a_card_in_the_request_id_or_the_path_is_redacted_like_stored_content(self):
        # The shipped policy masks payment cards before storage; the X-Request-Id and the path
        # a client sends are stored (audit record) and logged (access log) too.
        card = "4111111111111111"
        reply = request(self.daemon, "GET", "/v1/cards/" + card, {"X-Request-Id": "it-card " + card}, auth=None)
        self.assertEqual(reply.status, 401)
        found = wait_for(lambda: records(self.daemon.data_dir, "client_request_id LIKE 'it-card %'"))
        self.assertIsNotNone(found)
        self.assertEqual(found[0]["client_request_id"], "it-card [REDACTED:PAYMENT_CARD]")
        self.assertEqual(found[0]["target"], "GET /v1/cards/[REDACTED:PAYMENT_CARD]")
        logged = wait_for(lambda: [line for line in self.daemon.lines if "it-card" in line and '"request"' in line])
        self.assertIsNotNone(logged)
        self.assertFalse([line for line in self.daemon.lines if card in line])


class ExposureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kimi-exposure-")
        # A data directory that an older version left readable by others.
        cls.data_dir = os.path.join(cls.tmp.name, "data")
        os.makedirs(os.path.join(cls.data_dir, "backup"))
        os.chmod(cls.data_dir, 0o755)
        os.chmod(os.path.join(cls.data_dir, "backup"), 0o755)
        cls.leftover = os.path.join(cls.data_dir, "backup", "appliance.db.1")
        with open(cls.leftover, "wb") as f:
            f.write(b"weights")
        os.chmod(cls.leftover, 0o644)
        config = base_config()
        config["storage"]["data_dir"] = cls.data_dir
        cls.daemon = Daemon(config=config)
        created = post_json(cls.daemon, "/admin/v1/keys", {"name": "exposure-user", "role": "user"})
        assert created.status == 201, created.body
        cls.user_key = created.json()["key"]

    @classmethod
    def tearDownClass(cls):
        cls.daemon.close()
        cls.tmp.cleanup()

    def test_a_user_key_cannot_read_the_model_store(self):
        for path in ("/admin/v1/models", "/admin/v1/models/import"):
            reply = request(self.daemon, "GET", path, auth=self.user_key)
            self.assertEqual(reply.status, 403, path)
            self.assertEqual(reply.json()["error"]["type"], "permission_error", path)
            self.assertNotEqual(request(self.daemon, "GET", path).status, 403, "admin on " + path)
        self.assertEqual(request(self.daemon, "GET", "/v1/models", auth=self.user_key).status, 200)

    def test_anonymous_readyz_says_only_what_is_ready(self):
        for auth in (None, self.user_key):
            reply = request(self.daemon, "GET", "/readyz", auth=auth)
            self.assertEqual(reply.status, 503)  # no model in this daemon
            body = reply.json()
            self.assertEqual(body["status"], "not_ready")
            for name, component in body["components"].items():
                self.assertEqual(set(component), {"ready"}, name)
            self.assertNotIn(self.data_dir, reply.body)
            self.assertNotIn("sha256", reply.body)
        self.assertFalse(request(self.daemon, "GET", "/readyz", auth=None).json()["components"]["model"]["ready"])
        detailed = request(self.daemon, "GET", "/readyz").json()  # the admin key
        self.assertIn(self.data_dir, detailed["components"]["database"]["detail"])
        # A wrong credential is refused (and audited), not quietly served the brief answer.
        self.assertEqual(request(self.daemon, "GET", "/readyz", auth="sk-kimi-wrong").status, 401)

    def test_the_server_gives_every_request_its_own_id(self):
        ids = []
        for _ in range(2):
            reply = request(self.daemon, "GET", "/admin/v1/session", {"X-Request-Id": "it-same-id"})
            self.assertEqual(reply.status, 200)
            self.assertRegex(reply.headers["x-request-id"], r"^req_[0-9a-f]{24}$")
            ids.append(reply.headers["x-request-id"])
        self.assertNotEqual(ids[0], ids[1])
        found = request(self.daemon, "GET", "/admin/v1/audit?client_request_id=it-same-id")
        self.assertEqual(found.status, 200, found.body)
        self.assertEqual(sorted(r["request_id"] for r in found.json()["records"]), sorted(ids))
        self.assertTrue(all(r["client_request_id"] == "it-same-id" for r in found.json()["records"]))
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/audit?request_id=it-same-id").json()["records"], [])
        # A long id is found by what the client sent, though the record keeps it bounded.
        long_id = "it-" + "l" * 5000
        reply = request(self.daemon, "GET", "/admin/v1/session", {"X-Request-Id": long_id})
        found = request(self.daemon, "GET", "/admin/v1/audit?" + urllib.parse.urlencode({"client_request_id": long_id}))
        self.assertEqual([r["request_id"] for r in found.json()["records"]], [reply.headers["x-request-id"]])

    def test_every_data_file_is_owner_only(self):
        request(self.daemon, "GET", "/admin/v1/session")  # the audit log's write-ahead log is in use
        names = set()
        for root, dirs, files in os.walk(self.data_dir):
            for name in dirs + files:
                path = os.path.join(root, name)
                mode = stat.S_IMODE(os.lstat(path).st_mode)
                self.assertEqual(mode & 0o077, 0, "%s is %o" % (path, mode))
                names.add(name)
        self.assertEqual(stat.S_IMODE(os.stat(self.data_dir).st_mode), 0o700)
        for name in ("audit.db", "audit.db-wal", "audit.db-shm", "appliance.db", "audit-ed25519.key"):
            self.assertIn(name, names)
        self.assertEqual(stat.S_IMODE(os.stat(self.leftover).st_mode), 0o600)
        started = [json.loads(line) for line in self.daemon.lines if "now owner-only" in line]
        self.assertEqual(len(started), 1, "the start says it tightened the leftover files")


if __name__ == "__main__":
    unittest.main()
