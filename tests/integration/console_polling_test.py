"""The console's own traffic leaves the audit log alone (docs/audit.md "Not recorded"): a
signed-in console session polling the overview's status reads (the model lists, readiness,
metrics, the metrics history, who is signed in) and the sign-in page asking who is signed in
with no credential at all add no record, while real denials (a wrong password, a bad key, a
session refused for its role) and API calls with a key are still recorded. Python standard
library only, against the real daemon."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from daemon_harness import KIMICTL, Daemon, audit_rows, fast_auth_config, request, run_to_exit  # noqa: E402

# The overview polls every 3 s; this many rounds stand for a minute of it, bounded by count.
POLL_ROUNDS = 20
# Reads the overview makes each round with the session (overview.js) and the history range.
CONSOLE_READS = ("/readyz", "/v1/models", "/admin/v1/models", "/metrics", "/admin/v1/metrics/history?range=15m")
SIGN_IN_PAGE_LOADS = 10


def audit_records(daemon):
    return audit_rows(daemon.data_dir)


def json_request(daemon, method, path, payload, headers=None, auth=None):
    headers = dict(headers or {}, **{"Content-Type": "application/json"})
    return request(daemon, method, path, headers, json.dumps(payload).encode(), auth=auth)


class ConsolePollingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(config=fast_auth_config())

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.daemon.close()

    def sign_in(self, username, role):
        """A console session of a new user with `role` whose password is already changed."""
        reply = json_request(self.daemon, "POST", "/admin/v1/users", {"username": username, "role": role},
                             auth=self.daemon.api_key)
        self.assertEqual(reply.status, 201, reply.body)
        one_time = reply.json()["one_time_password"]
        reply = json_request(self.daemon, "POST", "/admin/v1/session", {"username": username, "password": one_time})
        self.assertEqual(reply.status, 200, reply.body)
        cookie = "kimi_session=" + reply.headers["set-cookie"].split(";")[0].split("=", 1)[1]
        csrf = reply.json()["csrf_token"]
        password = "a-fresh-console-password"
        reply = json_request(self.daemon, "POST", "/admin/v1/session/password",
                             {"old_password": one_time, "new_password": password},
                             {"Cookie": cookie, "X-CSRF-Token": csrf})
        self.assertEqual(reply.status, 200, reply.body)
        return "kimi_session=" + reply.headers["set-cookie"].split(";")[0].split("=", 1)[1]  # the change's new session

    def test_console_polling_and_sign_in_probes_add_no_record_but_denials_do(self):
        cookie = self.sign_in("operator-1", "operator")
        user_cookie = self.sign_in("user-1", "user")
        before = len(audit_records(self.daemon))

        for _ in range(POLL_ROUNDS):
            for path in CONSOLE_READS:
                reply = request(self.daemon, "GET", path, {"Cookie": cookie})
                self.assertIn(reply.status, (200, 503), path + ": " + reply.body)
            reply = request(self.daemon, "GET", "/admin/v1/session", {"Cookie": cookie})
            self.assertEqual(reply.status, 200, reply.body)
        for _ in range(SIGN_IN_PAGE_LOADS):
            # What the sign-in page asks before anyone signed in: no cookie, no key.
            reply = request(self.daemon, "GET", "/admin/v1/session", auth=None)
            self.assertEqual(reply.status, 401, reply.body)

        added = audit_records(self.daemon)[before:]
        self.assertEqual([(r["action"], r["outcome"]) for r in added], [],
                         "the console's polling and the sign-in page's probe wrote audit records")

        # Real denials and API calls with a key are still recorded.
        reply = json_request(self.daemon, "POST", "/admin/v1/session",
                             {"username": "operator-1", "password": "not-the-password"})
        self.assertEqual(reply.status, 401, reply.body)
        self.assertEqual(request(self.daemon, "GET", "/v1/models", auth="sk-kimi-not-a-key").status, 401)
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/session", {"Cookie": "kimi_session=forged"}).status,
                         401)
        self.assertEqual(request(self.daemon, "GET", "/v1/models").status, 200)  # the admin key
        # An operator's session may not read the key list: refused for its role, and recorded.
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/keys", {"Cookie": cookie}).status, 403)
        # A user's session may not read the model store: a status read refused for the role.
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/models", {"Cookie": user_cookie}).status, 403)

        added = [(r["action"], r["outcome"], r["http_status"]) for r in audit_records(self.daemon)[before:]
                 if r["action"].startswith("http.")]
        self.assertIn(("http.admin_session_login", "denied", 401), added)
        self.assertIn(("http.models", "denied", 401), added)
        self.assertIn(("http.admin_session_get", "denied", 401), added)
        self.assertIn(("http.models", "ok", 200), added)
        self.assertIn(("http.admin_keys_list", "denied", 403), added)
        self.assertIn(("http.admin_models_list", "denied", 403), added)
        denied = [a for a in added if a[1] == "denied"]
        self.assertEqual(len(denied), 5, added)
        code, _, err = run_to_exit([KIMICTL, "audit", "verify", "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 0, err)

    def test_metrics_history_answers_its_ranges_and_refuses_others(self):
        for name, seconds in (("15m", 900), ("1h", 3600), ("6h", 21600), ("24h", 86400)):
            reply = request(self.daemon, "GET", "/admin/v1/metrics/history?range=" + name)
            self.assertEqual(reply.status, 200, reply.body)
            body = reply.json()
            self.assertEqual((body["range"], body["range_s"]), (name, seconds))
            self.assertEqual(body["resolution_s"], 10 if seconds <= 3600 else 60)
            self.assertTrue(body["now"].endswith("Z"))
            self.assertIsInstance(body["points"], list)
        reply = request(self.daemon, "GET", "/admin/v1/metrics/history?range=2d")
        self.assertEqual(reply.status, 400, reply.body)
        self.assertEqual(reply.json()["error"]["param"], "range")


if __name__ == "__main__":
    unittest.main()
