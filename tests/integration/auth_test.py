"""Integration tests of authentication and authorisation against the real daemon: 401 and 403
in OpenAI error JSON, the role matrix over the routes, immediate revocation, expiry, password
lockout, console login with its cookie and CSRF token, logout, bootstrap once, and what the
audit log records (the actor and role, never a secret). Python standard library only.
"""
import concurrent.futures
import itertools
import json
import os
import re
import sqlite3
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from daemon_harness import (KIMICTL, audit_rows, Daemon, create_api_key, fast_auth_config, request, route_entries,  # noqa: E402
                            run_to_exit)

WAIT_S = 20  # bound on waiting for a state change; only stops a hung test

SOURCE_DIR = os.environ.get("KIMI_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))

# The permission table of appliance/auth/roles.cc: who holds each permission.
ALLOWED = {
    "metrics.read": {"admin", "operator", "auditor", "scrape"},
    "models.read": {"admin", "operator", "auditor", "user"},
    "models.inspect": {"admin", "operator", "auditor"},
    "inference": {"admin", "operator", "user"},
    "models.manage": {"admin", "operator"},
    "audit.read": {"admin", "auditor"},
    "keys.read": {"admin", "auditor"},
    "keys.manage": {"admin"},
    "users.manage": {"admin"},
    "policy.read": {"admin", "operator", "auditor"},
    "trust.read": {"admin", "operator", "auditor"},
    "usage.read": {"admin", "operator", "auditor"},
    "admin.only": {"admin"},
    "session.self": {"admin", "operator", "auditor", "user", "scrape"},
}
ROLES = ["admin", "operator", "auditor", "user", "scrape"]


def _json(payload):
    return json.dumps(payload).encode()


# Every authenticated route of the route table (daemon_harness.ROUTE_SOURCES): (method, path, permission, body, the
# statuses that mean "allowed"). A body is bytes or a function of the daemon that prepares
# what the request acts on (a key to revoke, a user to disable) and returns the bytes. Allowed
# is a 2xx, except where the route's success needs state this daemon does not have (a model
# bundle, TLS): there the handler's own answer to a well-formed request shows it was let in.
ENDPOINTS = [
    ("GET", "/metrics", "metrics.read", b"", (200,)),
    ("GET", "/admin/v1/metrics/history", "metrics.read", b"", (200,)),
    ("POST", "/v1/chat/completions", "inference",
     _json({"model": "m-a", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}), (200,)),
    ("POST", "/v1/completions", "inference", _json({"model": "m-a", "prompt": "hi", "max_tokens": 4}), (200,)),
    ("GET", "/v1/models", "models.read", b"", (200,)),
    ("GET", "/v1/models/m-a", "models.read", b"", (200,)),
    ("GET", "/admin/v1/models", "models.inspect", b"", (200,)),
    ("DELETE", "/admin/v1/models", "models.manage", _json({"version": 99}), (400, 404)),
    ("POST", "/admin/v1/models/import", "models.manage", _json({"source": "/nonexistent/bundle"}), (400, 404)),
    ("GET", "/admin/v1/models/import", "models.inspect", b"", (200, 404)),
    ("POST", "/admin/v1/models/activate", "models.manage", _json({"version": 99}), (400, 404)),
    ("POST", "/admin/v1/models/rollback", "models.manage", b"{}", (400, 404, 409)),
    ("GET", "/admin/v1/session", "session.self", b"", (200,)),
    # A key is not a session: logout and password change answer 400 to it, after authorisation.
    ("DELETE", "/admin/v1/session", "session.self", b"", (200, 400)),
    ("POST", "/admin/v1/session/password", "session.self",
     _json({"old_password": "x" * 12, "new_password": "y" * 12}), (400,)),
    ("GET", "/admin/v1/keys", "keys.read", b"", (200,)),
    ("POST", "/admin/v1/keys", "keys.manage", _json({"name": "matrix", "role": "user"}), (201,)),
    ("POST", "/admin/v1/keys/revoke", "keys.manage",
     lambda d: _json({"id": post_json(d, "/admin/v1/keys", {"name": "victim", "role": "user"}).json()["id"]}), (200,)),
    ("PATCH", "/admin/v1/keys/{admin_key}", "keys.manage", _json({"requests_per_minute": 0}), (200,)),
    ("GET", "/admin/v1/keys/{admin_key}/usage", "keys.manage", b"", (200,)),
    # An unknown key: rotating the admin's own would end this test's credential.
    ("POST", "/admin/v1/keys/key_0000000000000000/rotate", "keys.manage", _json({"grace_seconds": 0}), (404,)),
    ("POST", "/admin/v1/keys/{admin_key}/limits", "keys.manage", b"{}", (410,)),  # retired: PATCH instead
    ("GET", "/admin/v1/roles", "keys.manage", b"", (200,)),
    ("POST", "/admin/v1/roles/auditor/limits", "keys.manage", b"{}", (200,)),
    # Without server.tls the reload is refused as a precondition, after authorisation.
    ("POST", "/admin/v1/tls/reload", "admin.only", b"", (400,)),
    ("GET", "/admin/v1/users", "users.manage", b"", (200,)),
    ("POST", "/admin/v1/users", "users.manage",
     lambda d: _json({"username": "matrix-%d" % next(_SERIAL), "role": "user"}), (201,)),
    ("POST", "/admin/v1/users/disable", "users.manage",
     lambda d: _json({"username": post_json(d, "/admin/v1/users", {"username": "gone-%d" % next(_SERIAL),
                                                                   "role": "user"}).json()["username"]}), (200,)),
    ("POST", "/admin/v1/users/enable", "users.manage",
     lambda d: _json({"username": post_json(d, "/admin/v1/users", {"username": "back-%d" % next(_SERIAL),
                                                                   "role": "user"}).json()["username"]}), (200,)),
    ("POST", "/admin/v1/users/unlock", "users.manage",
     lambda d: _json({"username": post_json(d, "/admin/v1/users", {"username": "freed-%d" % next(_SERIAL),
                                                                   "role": "user"}).json()["username"]}), (200,)),
    ("POST", "/admin/v1/users/reset-password", "users.manage",
     lambda d: _json({"username": post_json(d, "/admin/v1/users", {"username": "reset-%d" % next(_SERIAL),
                                                                   "role": "user"}).json()["username"]}), (200,)),
    ("GET", "/admin/v1/policies", "policy.read", b"", (200,)),
    ("POST", "/admin/v1/policies", "admin.only", _json({"name": "incomplete"}), (400,)),
    ("GET", "/admin/v1/policies/1", "policy.read", b"", (200,)),
    # Version 1 is the active one: a revert to it is refused after authorisation.
    ("POST", "/admin/v1/policies/1/activate", "admin.only", b"", (400,)),
    ("GET", "/admin/v1/audit", "audit.read", b"", (200,)),
    ("GET", "/admin/v1/audit/actions", "audit.read", b"", (200,)),
    # The playground's question: whoever may send a request may read its model's rules.
    ("GET", "/admin/v1/request-rules?model=m-a", "inference", b"", (200,)),
    ("GET", "/admin/v1/audit/export", "audit.read", b"", (200,)),
    ("GET", "/admin/v1/audit/verify", "audit.read", b"", (200,)),
    ("GET", "/admin/v1/audit/records/1/proof", "audit.read", b"", (200,)),
    # The trust store: read by the model roles, changed by admins only. This daemon has no
    # model.trust_store, so a change is refused as a precondition, after authorisation.
    ("GET", "/admin/v1/trust", "trust.read", b"", (200,)),
    ("POST", "/admin/v1/trust", "admin.only", _json({"name": "matrix", "pem": "not a key"}), (400,)),
    ("DELETE", "/admin/v1/trust/no-such-key", "admin.only", b"", (400, 404)),
    # Usage and budgets: read by those who run and check the appliance, set by admins.
    ("GET", "/admin/v1/usage", "usage.read", b"", (200,)),
    ("GET", "/admin/v1/usage/top", "usage.read", b"", (200,)),
    ("GET", "/admin/v1/budgets", "usage.read", b"", (200,)),
    ("PUT", "/admin/v1/budgets/owner/system", "keys.manage", _json({"tokens_per_month": 1000000}), (200,)),
    ("DELETE", "/admin/v1/budgets/owner/nobody", "keys.manage", b"", (404,)),
]
_SERIAL = itertools.count()

PERMISSION_NAMES = {"kPublic": "public", "kSessionSelf": "session.self", "kMetricsRead": "metrics.read",
                    "kModelsRead": "models.read", "kModelsInspect": "models.inspect", "kInference": "inference",
                    "kModelsManage": "models.manage", "kAuditRead": "audit.read", "kKeysRead": "keys.read",
                    "kKeysManage": "keys.manage", "kUsersManage": "users.manage", "kPolicyRead": "policy.read",
                    "kTrustRead": "trust.read", "kUsageRead": "usage.read",
                    "kReadinessDetail": "readiness.detail", "kAdminOnly": "admin.only"}


def route_table():
    """(method, path pattern) -> permission name, read from the route table's sources."""
    return {(method, path): PERMISSION_NAMES[permission] for method, path, permission in route_entries(SOURCE_DIR)}


def pattern_matches(pattern, path):
    regex = re.sub(r"\\\{\w+\\\.\\\.\\\.\\\}", ".+", re.escape(pattern))
    regex = re.sub(r"\\\{\w+\\\}", "[^/]+", regex)
    return re.fullmatch(regex, path) is not None


def audit_records(daemon):
    return audit_rows(daemon.data_dir)


def wait_for_record(daemon, predicate):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        for r in audit_records(daemon):
            if predicate(r):
                return r
        time.sleep(0.1)
    return None


def post_json(daemon, path, payload, **kw):
    return request(daemon, "POST", path, {"Content-Type": "application/json"}, json.dumps(payload).encode(), **kw)


def assert_error(test, reply, status, error_type):
    test.assertEqual(reply.status, status, reply.body)
    body = reply.json()
    test.assertEqual(body["error"]["type"], error_type, body)
    test.assertIn("message", body["error"])


def file_contains(path, needle):
    with open(path, "rb") as f:
        return needle.encode() in f.read()


class AnonymousAndBadCredentialsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(config=fast_auth_config())

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.daemon.close()

    def test_probes_are_open_and_everything_else_needs_a_credential(self):
        self.assertEqual(request(self.daemon, "GET", "/healthz", auth=None).status, 200)
        self.assertIn(request(self.daemon, "GET", "/readyz", auth=None).status, (200, 503))
        for method, path in (("GET", "/metrics"), ("GET", "/admin/v1/keys"), ("GET", "/v1/nothing"),
                             ("DELETE", "/admin/v1/session")):
            reply = request(self.daemon, method, path, auth=None)
            assert_error(self, reply, 401, "authentication_error")
            self.assertEqual(reply.headers.get("www-authenticate"), 'Bearer realm="kimi"')
        # With a credential, an unknown path is a plain 404.
        self.assertEqual(request(self.daemon, "GET", "/v1/nothing").status, 404)

    def test_wrong_or_malformed_keys_get_401_and_are_audited_without_the_secret(self):
        wrong = "sk-kimi-" + "A" * 43
        for reply in (request(self.daemon, "GET", "/metrics", {"X-Request-Id": "it-wrong-key"}, auth=wrong),
                      request(self.daemon, "GET", "/metrics", auth="not-a-key"),
                      request(self.daemon, "GET", "/metrics", {"Authorization": "Basic YWRtaW46YWRtaW4="})):
            assert_error(self, reply, 401, "authentication_error")
        record = wait_for_record(self.daemon, lambda r: r["client_request_id"] == "it-wrong-key")
        self.assertIsNotNone(record, "a refused probe is audited")
        self.assertEqual(record["outcome"], "denied")
        self.assertEqual(record["http_status"], 401)
        self.assertIn("authentication failed", record["detail"])
        self.assertEqual(record["actor"], "")
        self.assertFalse(file_contains(os.path.join(self.daemon.data_dir, "audit.db"), wrong))

    def test_percent_escaped_credentials_are_refused_not_decoded(self):
        # The HTTP library decoded every header value after the server's checks: "Bearer%20<key>"
        # (no scheme to a proxy or a log scrubber that reads the raw bytes) and an escaped key
        # authenticated with 200.
        key = self.daemon.api_key
        escaped = key[:8] + "".join("%%%02X" % ord(c) for c in key[8:12]) + key[12:]
        for name, value in (("Authorization", "Bearer%20" + key), ("Authorization", "Bearer " + escaped),
                            ("x-api-key", escaped)):
            with self.subTest(name=name, value=value[:20]):
                reply = request(self.daemon, "GET", "/admin/v1/session", {name: value})
                assert_error(self, reply, 400, "invalid_request_error")
                self.assertIn("the %s header" % name, reply.json()["error"]["message"])

    def test_x_api_key_header_is_accepted(self):
        reply = request(self.daemon, "GET", "/admin/v1/session", {"x-api-key": self.daemon.api_key})
        self.assertEqual(reply.status, 200, reply.body)
        self.assertEqual(reply.json()["id"], self.daemon.api_key_id)
        self.assertEqual(reply.json()["kind"], "api_key")

    def test_authenticated_requests_are_audited_with_key_id_and_role(self):
        request(self.daemon, "GET", "/v1/nothing", {"X-Request-Id": "it-actor"})
        record = wait_for_record(self.daemon, lambda r: r["client_request_id"] == "it-actor")
        self.assertEqual(record["actor"], self.daemon.api_key_id)
        self.assertEqual(record["role"], "admin")
        created = wait_for_record(self.daemon, lambda r: r["action"] == "auth.key_created")
        self.assertEqual(created["target"], self.daemon.api_key_id)
        for name in ("audit.db", "appliance.db"):
            self.assertFalse(file_contains(os.path.join(self.daemon.data_dir, name), self.daemon.api_key), name)


class RoleMatrixTest(unittest.TestCase):
    def test_the_matrix_covers_every_route_with_its_declared_permission(self):
        table = route_table()
        self.assertGreater(len(table), 20, "the route table was not read")
        covered = set()
        for method, path, permission, _, _ in ENDPOINTS:
            concrete = path.replace("{admin_key}", "key_x").split("?")[0]
            matching = [k for k in table if k[0] == method and pattern_matches(k[1], concrete)]
            self.assertEqual(len(matching), 1, "%s %s matches %s" % (method, path, matching))
            self.assertEqual(table[matching[0]], permission, "%s %s" % (method, path))
            covered.add(matching[0])
        missing = sorted(k for k, p in table.items() if p != "public" and k not in covered)
        self.assertEqual(missing, [], "routes without a row in the role matrix")

    def test_each_role_against_each_endpoint(self):
        from quota_test import Upstream, upstream_config, wait_until_served  # the scripted backend
        upstream = Upstream()
        config = upstream_config(upstream)
        config["auth"] = fast_auth_config()["auth"]
        daemon = Daemon(config=config)
        try:
            wait_until_served(self, daemon)
            keys = {}
            for role in ROLES:
                reply = post_json(daemon, "/admin/v1/keys", {"name": "role-" + role, "role": role})
                self.assertEqual(reply.status, 201, reply.body)
                self.assertTrue(reply.json()["key"].startswith("sk-kimi-"))
                keys[role] = reply.json()["key"]
            # What the roles route says agrees with the table above.
            listed = {r["role"]: set(r["permissions"]) for r in request(daemon, "GET", "/admin/v1/roles").json()["data"]}
            for permission, roles in ALLOWED.items():
                self.assertEqual({r for r in ROLES if permission in listed[r]}, roles, permission)
            for method, path, permission, body, allowed_statuses in ENDPOINTS:
                path = path.replace("{admin_key}", daemon.api_key_id)
                for role in ROLES + [None]:
                    data = body(daemon) if callable(body) else body
                    reply = request(daemon, method, path, {"Content-Type": "application/json"}, data,
                                    auth=keys.get(role))
                    where = "%s %s as %s" % (method, path, role or "anonymous")
                    self.assertEqual(reply.headers.get("x-content-type-options"), "nosniff", where)
                    if role is None:
                        assert_error(self, reply, 401, "authentication_error")
                    elif role in ALLOWED[permission]:
                        self.assertIn(reply.status, allowed_statuses, "%s: %d %s" % (where, reply.status, reply.body))
                    else:
                        assert_error(self, reply, 403, "permission_error")
                        self.assertIn(permission, reply.json()["error"]["message"], where)
        finally:
            daemon.stop()
            daemon.close()
            upstream.close()


class KeyLifecycleTest(unittest.TestCase):
    def setUp(self):
        self.daemon = Daemon(config=fast_auth_config())

    def tearDown(self):
        self.daemon.stop()
        self.daemon.close()

    def test_revocation_through_the_api_is_immediate(self):
        key = post_json(self.daemon, "/admin/v1/keys", {"name": "victim", "role": "operator"}).json()
        self.assertEqual(request(self.daemon, "GET", "/metrics", auth=key["key"]).status, 200)
        reply = post_json(self.daemon, "/admin/v1/keys/revoke", {"id": key["id"]})
        self.assertEqual(reply.status, 200, reply.body)
        assert_error(self, request(self.daemon, "GET", "/metrics", auth=key["key"]), 401, "authentication_error")
        listed = {k["id"]: k for k in request(self.daemon, "GET", "/admin/v1/keys").json()["data"]}
        self.assertIsNotNone(listed[key["id"]]["revoked_at"])
        self.assertIsNotNone(listed[key["id"]]["last_used_at"])
        self.assertNotIn("key", listed[key["id"]])
        revoked = wait_for_record(self.daemon, lambda r: r["action"] == "auth.key_revoked")
        self.assertEqual((revoked["target"], revoked["actor"]), (key["id"], self.daemon.api_key_id))

    def test_keys_made_and_revoked_with_kimictl_while_running(self):
        key, key_id = create_api_key(self.daemon.data_dir, "offline", "scrape")
        self.assertEqual(request(self.daemon, "GET", "/metrics", auth=key).status, 200)
        code, out, err = run_to_exit([KIMICTL, "key", "revoke", key_id, "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 0, err)
        assert_error(self, request(self.daemon, "GET", "/metrics", auth=key), 401, "authentication_error")
        # kimictl's events reach the audit log through the daemon's outbox.
        self.assertIsNotNone(wait_for_record(self.daemon, lambda r: r["action"] == "auth.key_revoked"
                                             and r["target"] == key_id and r["actor"].startswith("kimictl:")))
        code, out, _ = run_to_exit([KIMICTL, "key", "list", "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 0)
        self.assertRegex(out, key_id + r"\s+scrape\s+revoked")
        self.assertNotIn(key, out)

    def test_expired_key_is_refused(self):
        expires = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 2))
        reply = post_json(self.daemon, "/admin/v1/keys", {"name": "brief", "role": "user", "expires_at": expires})
        self.assertEqual(reply.status, 201, reply.body)
        key = reply.json()["key"]
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/session", auth=key).status, 200)
        deadline = time.monotonic() + WAIT_S
        status = 200
        while status == 200 and time.monotonic() < deadline:
            time.sleep(0.5)
            status = request(self.daemon, "GET", "/admin/v1/session", auth=key).status
        self.assertEqual(status, 401)

    def test_rate_limit_per_key_answers_429_with_retry_after(self):
        reply = post_json(self.daemon, "/admin/v1/keys", {"name": "slow", "role": "user", "requests_per_minute": 2})
        self.assertEqual(reply.status, 201, reply.body)
        self.assertEqual(reply.json()["requests_per_minute"], 2)
        key = reply.json()["key"]
        for _ in range(2):
            self.assertEqual(request(self.daemon, "GET", "/admin/v1/session", auth=key).status, 200)
        refused = request(self.daemon, "GET", "/admin/v1/session", {"X-Request-Id": "it-429"}, auth=key)
        assert_error(self, refused, 429, "rate_limit_error")
        self.assertEqual(refused.headers["retry-after"], "30")
        record = wait_for_record(self.daemon, lambda r: r["client_request_id"] == "it-429")
        self.assertIn("rate limited", record["detail"])
        # The admin key has no limit.
        for _ in range(5):
            self.assertEqual(request(self.daemon, "GET", "/admin/v1/session").status, 200)

    def test_role_limit_edits_of_different_fields_at_once_keep_every_field(self):
        fields = ["requests_per_minute", "tokens_per_minute", "tokens_per_day", "tokens_per_month",
                  "max_concurrent_streams"]
        for round_ in range(5):
            def edit(i):
                return post_json(self.daemon, "/admin/v1/roles/auditor/limits", {fields[i]: 100 * round_ + i + 1})
            with concurrent.futures.ThreadPoolExecutor(max_workers=len(fields)) as pool:
                self.assertEqual({r.status for r in pool.map(edit, range(len(fields)))}, {200})
            roles = {r["role"]: r["limits"] for r in request(self.daemon, "GET", "/admin/v1/roles").json()["data"]}
            self.assertEqual(roles["auditor"], {f: 100 * round_ + i + 1 for i, f in enumerate(fields)}, round_)

    def test_bad_requests_to_the_admin_api(self):
        assert_error(self, post_json(self.daemon, "/admin/v1/keys", {"name": "x", "role": "root"}), 400,
                     "invalid_request_error")
        assert_error(self, post_json(self.daemon, "/admin/v1/keys", {"name": "x", "role": "user", "colour": "red"}),
                     400, "invalid_request_error")
        assert_error(self, post_json(self.daemon, "/admin/v1/keys/revoke", {"id": "key_0000000000000000"}), 404,
                     "not_found_error")


class KeyEditTest(unittest.TestCase):
    """PATCH /admin/v1/keys/{id} and `kimictl key update`: a key's role, models and limits change
    from its next request on, with no restart, in one audit record naming the difference."""

    @classmethod
    def setUpClass(cls):
        from quota_test import Upstream, upstream_config  # the scripted backend serving m-a and m-b
        cls.upstream = Upstream()
        config = upstream_config(cls.upstream)
        config["auth"] = fast_auth_config()["auth"]
        cls.daemon = Daemon(config=config)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.daemon.close()
        cls.upstream.close()

    def setUp(self):
        from quota_test import wait_until_served
        wait_until_served(self, self.daemon)

    def patch(self, key_id, payload):
        return request(self.daemon, "PATCH", "/admin/v1/keys/" + key_id, {"Content-Type": "application/json"},
                       json.dumps(payload).encode())

    def new_key(self, name, **fields):
        reply = post_json(self.daemon, "/admin/v1/keys", dict({"name": name, "role": "user"}, **fields))
        self.assertEqual(reply.status, 201, reply.body)
        return reply.json()

    def chat_status(self, key, model):
        body = _json({"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4})
        return request(self.daemon, "POST", "/v1/chat/completions", {"Content-Type": "application/json"}, body,
                       auth=key).status

    def updates_of(self, key_id):
        return [r for r in audit_records(self.daemon) if r["action"] == "auth.key_updated" and r["target"] == key_id]

    def test_an_edit_applies_at_the_next_request_and_is_audited_once_with_the_difference(self):
        key = self.new_key("edited", models=["m-a"])
        assert_error(self, request(self.daemon, "GET", "/metrics", auth=key["key"]), 403, "permission_error")
        self.assertEqual(self.chat_status(key["key"], "m-a"), 200)
        self.assertEqual(self.chat_status(key["key"], "m-b"), 404)  # a model the key may not use is not there for it

        reply = self.patch(key["id"], {"role": "operator", "models": ["m-a", "m-b"], "requests_per_minute": 2})
        self.assertEqual(reply.status, 200, reply.body)
        edited = reply.json()
        self.assertEqual((edited["role"], edited["models"], edited["requests_per_minute"]),
                         ("operator", ["m-a", "m-b"], 2))
        self.assertEqual(edited["name"], "edited")
        self.assertNotIn("key", edited)

        # The next requests, on the same running daemon, see the new role, models and limit.
        self.assertEqual(request(self.daemon, "GET", "/metrics", auth=key["key"]).status, 200)
        self.assertEqual(self.chat_status(key["key"], "m-b"), 200)
        assert_error(self, request(self.daemon, "GET", "/metrics", auth=key["key"]), 429, "rate_limit_error")

        record = wait_for_record(self.daemon, lambda r: r["action"] == "auth.key_updated" and r["target"] == key["id"])
        self.assertIsNotNone(record, "the edit is not in the audit log")
        self.assertEqual(record["actor"], self.daemon.api_key_id)
        self.assertEqual(record["detail"], "role user -> operator; models m-a -> m-a,m-b; requests_per_minute 0 -> 2")
        self.assertEqual(len(self.updates_of(key["id"])), 1)
        self.assertFalse(file_contains(os.path.join(self.daemon.data_dir, "audit.db"), key["key"]))

    def test_invalid_edits_name_their_field_and_change_nothing(self):
        key = self.new_key("invalid-edits")
        for payload, param, words in (({"role": "root"}, "role", "unknown role 'root'"),
                                      ({"models": ["m-a", "no-such-model"]}, "models", "unknown model 'no-such-model'"),
                                      ({"colour": "red"}, "colour", "unknown field 'colour'"),
                                      ({"tokens_per_day": "many"}, "tokens_per_day", "must be an integer"),
                                      ({"models": "m-a"}, "models", "array of strings"),
                                      ({"max_concurrent_streams": -1}, "max_concurrent_streams", "must not be negative"),
                                      ({"requests_per_minute": 2 ** 63}, "requests_per_minute", "must be an integer"),
                                      ({}, None, "nothing to change")):
            reply = self.patch(key["id"], payload)
            assert_error(self, reply, 400, "invalid_request_error")
            self.assertEqual(reply.json()["error"]["param"], param, payload)
            self.assertIn(words, reply.json()["error"]["message"], payload)
        missing = self.patch("key_0000000000000000", {"role": "user"})
        assert_error(self, missing, 404, "not_found_error")
        self.assertIn("key_0000000000000000", missing.json()["error"]["message"])
        self.assertEqual(post_json(self.daemon, "/admin/v1/keys/revoke", {"id": key["id"]}).status, 200)
        assert_error(self, self.patch(key["id"], {"role": "admin"}), 400, "invalid_request_error")
        listed = {k["id"]: k for k in request(self.daemon, "GET", "/admin/v1/keys").json()["data"]}
        self.assertEqual((listed[key["id"]]["role"], listed[key["id"]]["models"]), ("user", []))
        self.assertEqual(self.updates_of(key["id"]), [])

    def test_a_new_key_checks_its_models_as_an_edit_does(self):
        before = {k["name"] for k in request(self.daemon, "GET", "/admin/v1/keys").json()["data"]}
        for models, words in ((["m-a", "no-such-model"], "unknown model 'no-such-model'"),
                              ("m-a", "array of strings")):
            reply = post_json(self.daemon, "/admin/v1/keys", {"name": "typo", "role": "user", "models": models})
            assert_error(self, reply, 400, "invalid_request_error")
            self.assertEqual(reply.json()["error"]["param"], "models", models)
            self.assertIn(words, reply.json()["error"]["message"])
        reply = post_json(self.daemon, "/admin/v1/keys", {"name": "typo", "role": "root"})
        self.assertEqual(reply.json()["error"]["param"], "role")
        after = {k["name"] for k in request(self.daemon, "GET", "/admin/v1/keys").json()["data"]}
        self.assertEqual(after, before, "a refused key was created")
        self.assertEqual(self.new_key("deduplicated", models=["m-b", "m-a", "m-b"])["models"], ["m-b", "m-a"])

    def test_the_retired_limits_route_names_its_replacement_and_changes_nothing(self):
        key = self.new_key("old-client", requests_per_minute=7)
        reply = post_json(self.daemon, "/admin/v1/keys/%s/limits" % key["id"], {"requests_per_minute": 1})
        assert_error(self, reply, 410, "invalid_request_error")
        self.assertIn("PATCH /admin/v1/keys/" + key["id"], reply.json()["error"]["message"])
        self.assertEqual(reply.json()["error"]["code"], "route_retired")
        listed = {k["id"]: k for k in request(self.daemon, "GET", "/admin/v1/keys").json()["data"]}
        self.assertEqual(listed[key["id"]]["requests_per_minute"], 7)
        self.assertEqual(self.patch(key["id"], {"requests_per_minute": 1}).json()["requests_per_minute"], 1)

    def test_kimictl_edits_keys_beside_the_daemon_and_leaves_role_limits_to_it(self):
        key = self.new_key("edited-offline")
        code, out, err = run_to_exit([KIMICTL, "key", "update", key["id"], "--role", "auditor", "--models", "m-b",
                                      "--tpm", "900", "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 0, err)
        self.assertIn("role auditor; models m-b; ", out)
        self.assertIn("tokens_per_minute=900", out)
        self.assertEqual(request(self.daemon, "GET", "/metrics", auth=key["key"]).status, 200)
        self.assertIsNotNone(wait_for_record(self.daemon, lambda r: r["action"] == "auth.key_updated"
                                             and r["target"] == key["id"] and r["actor"].startswith("kimictl:")))
        # Role limits live in the daemon's memory: printing works beside it, setting does not.
        code, out, err = run_to_exit([KIMICTL, "role", "limits", "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 0, err)
        self.assertRegex(out, r"(?m)^auditor\s+requests_per_minute=0 ")
        code, out, err = run_to_exit([KIMICTL, "role", "limits", "auditor", "--rpm", "5", "--data-dir",
                                      self.daemon.data_dir])
        self.assertEqual(code, 3, err)
        self.assertIn("POST /admin/v1/roles/auditor/limits", err)
        self.assertIn(str(self.daemon.proc.pid), err)


class ConsoleSessionTest(unittest.TestCase):
    def setUp(self):
        self.daemon = Daemon(config=fast_auth_config(lockout_threshold=3, lockout_base_ms=60000))

    def tearDown(self):
        self.daemon.stop()
        self.daemon.close()

    def bootstrap(self):
        code, out, err = run_to_exit([KIMICTL, "admin", "bootstrap", "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 0, err)
        return out.strip()

    def login(self, username, password):
        return post_json(self.daemon, "/admin/v1/session", {"username": username, "password": password}, auth=None)

    def with_cookie(self, method, path, cookie, csrf=None, payload=None):
        headers = {"Cookie": "kimi_session=" + cookie, "Content-Type": "application/json"}
        if csrf:
            headers["X-CSRF-Token"] = csrf
        body = json.dumps(payload).encode() if payload is not None else b""
        return request(self.daemon, method, path, headers, body)

    def test_a_sign_in_another_site_could_send_is_refused(self):
        # A cross-site form or a text/plain fetch is sent without a preflight: it signed the
        # operator's browser into the attacker's account (login CSRF). Only JSON is taken.
        otp = self.bootstrap()
        body = json.dumps({"username": "admin", "password": otp}).encode()
        for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None):
            with self.subTest(content_type):
                headers = {"Content-Type": content_type} if content_type else {}
                reply = request(self.daemon, "POST", "/admin/v1/session", headers, body, auth=None)
                self.assertNotIn("set-cookie", reply.headers)
                self.assertEqual(reply.status, 415, reply.body)
                self.assertEqual(reply.json()["error"]["code"], "unsupported_media_type")
        # Escaped, the media type was decoded by the HTTP library and taken as JSON.
        reply = request(self.daemon, "POST", "/admin/v1/session", {"Content-Type": "application%2Fjson"}, body,
                        auth=None)
        self.assertNotIn("set-cookie", reply.headers)
        assert_error(self, reply, 400, "invalid_request_error")
        reply = request(self.daemon, "POST", "/admin/v1/session", {"Content-Type": "Application/JSON; charset=utf-8"},
                        body, auth=None)
        self.assertEqual(reply.status, 200, reply.body)

    def test_a_page_that_reaches_the_daemon_by_dns_rebinding_is_refused(self):
        # A page whose own name is made to resolve to 127.0.0.1 is a same-origin client of this
        # plain-HTTP daemon, past CORS and the JSON-only sign-in: it read every public answer and
        # its wrong passwords locked the account; with a session's cookie and token, a request
        # under its name made a key (201). Only an address or localhost is served.
        otp = self.bootstrap()
        reply = self.login("admin", otp)
        session, csrf = reply.headers["set-cookie"].split(";")[0].split("=", 1)[1], reply.json()["csrf_token"]
        password = "a-fresh-console-password"
        change = {"old_password": otp, "new_password": password}
        reply = self.with_cookie("POST", "/admin/v1/session/password", session, csrf, change)
        self.assertEqual(reply.status, 200, reply.body)
        session, csrf = reply.headers["set-cookie"].split(";")[0].split("=", 1)[1], reply.json()["csrf_token"]
        rebound = "rebind.attacker.example:%d" % self.daemon.port
        cookie = {"Cookie": "kimi_session=" + session, "X-CSRF-Token": csrf, "Content-Type": "application/json"}
        sign_in = {"Content-Type": "application/json"}
        attempts = [("GET", "/healthz", {}, b""), ("GET", "/readyz", {}, b""), ("GET", "/", {}, b""),
                    ("POST", "/admin/v1/keys", cookie, _json({"name": "rebound", "role": "admin"})),
                    ("GET", "/admin/v1/keys", cookie, b"")]
        attempts += [("POST", "/admin/v1/session", sign_in, _json({"username": "admin", "password": "guess-%d" % i}))
                     for i in range(3)]
        for method, path, headers, body in attempts:
            with self.subTest(method=method, path=path):
                reply = request(self.daemon, method, path, dict(headers, Host=rebound), body, auth=None)
                assert_error(self, reply, 403, "permission_error")
                self.assertIn("DNS rebinding", reply.json()["error"]["message"])
                self.assertNotIn("set-cookie", reply.headers)
        keys = request(self.daemon, "GET", "/admin/v1/keys").json()["data"]
        self.assertNotIn("rebound", [k["name"] for k in keys])
        # The guesses were not counted against the account, and the names a browser that asked
        # for this daemon sends are served.
        for host in ("127.0.0.1:%d" % self.daemon.port, "localhost:%d" % self.daemon.port, "[::1]:%d" % self.daemon.port,
                     "console.localhost"):
            with self.subTest(host=host):
                reply = request(self.daemon, "POST", "/admin/v1/session", dict(sign_in, Host=host),
                                _json({"username": "admin", "password": password}), auth=None)
                self.assertEqual(reply.status, 200, reply.body)
        reply = request(self.daemon, "GET", "/admin/v1/session", {"Cookie": "kimi_session=" + session, "Host": "localhost"})
        self.assertEqual(reply.status, 200, reply.body)

    def test_raising_a_timeout_does_not_revive_a_session_that_had_ended(self):
        # A session past its idle timeout was judged again by the settings of its next use: the
        # daemon restarted with a longer timeout took it back (200).
        data = tempfile.TemporaryDirectory(prefix="kimi-it-sessions-")
        self.addCleanup(data.cleanup)
        config = fast_auth_config(session_idle_timeout_ms=1000)
        config["storage"]["data_dir"] = data.name
        first = Daemon(config=config)
        self.addCleanup(first.close)
        code, otp, err = run_to_exit([KIMICTL, "admin", "bootstrap", "--data-dir", data.name])
        self.assertEqual(code, 0, err)
        reply = post_json(first, "/admin/v1/session", {"username": "admin", "password": otp.strip()}, auth=None)
        self.assertEqual(reply.status, 200, reply.body)
        cookie = {"Cookie": reply.headers["set-cookie"].split(";")[0]}
        time.sleep(1.5)  # past the idle timeout: the session has ended
        first.stop()
        first.wait_exit()
        config["auth"]["session_idle_timeout_ms"] = 3600000
        second = Daemon(config=config)
        self.addCleanup(second.close)
        self.addCleanup(second.stop)
        assert_error(self, request(second, "GET", "/admin/v1/session", cookie), 401, "authentication_error")
        reply = post_json(second, "/admin/v1/session", {"username": "admin", "password": otp.strip()}, auth=None)
        self.assertEqual(reply.status, 200, reply.body)
        fresh = {"Cookie": reply.headers["set-cookie"].split(";")[0]}
        self.assertEqual(request(second, "GET", "/admin/v1/session", fresh).status, 200)

    def test_percent_encoded_cookies_are_not_read_decoded(self):
        # Other applications on the appliance's host name may set percent-encoded cookies, which
        # the browser sends here too: the session beside them still works. Decoded, a cookie
        # "x=a%3B%20kimi_session%3D<id>" was also a session cookie, which authenticated.
        reply = self.login("admin", self.bootstrap())
        self.assertEqual(reply.status, 200, reply.body)
        session = reply.headers["set-cookie"].split(";")[0].split("=", 1)[1]
        for cookie, status in (("connect.sid=s%3Aab.cd; kimi_session=" + session + "; theme=dark", 200),
                               ("x=a%3B%20kimi_session%3D" + session, 401)):
            with self.subTest(cookie=cookie[:30]):
                reply = request(self.daemon, "GET", "/admin/v1/session", {"Cookie": cookie})
                self.assertEqual(reply.status, status, reply.body)

    def test_bootstrap_runs_once(self):
        self.assertEqual(len(self.bootstrap()), 20)
        code, out, err = run_to_exit([KIMICTL, "admin", "bootstrap", "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 1)
        self.assertIn("already has users", err)
        self.assertEqual(out, "")

    def test_login_cookie_csrf_password_change_and_logout(self):
        otp = self.bootstrap()
        reply = self.login("admin", otp)
        self.assertEqual(reply.status, 200, reply.body)
        cookie_header = reply.headers["set-cookie"]
        for flag in ("HttpOnly", "Secure", "SameSite=Strict", "Path=/"):
            self.assertIn(flag, cookie_header)
        self.assertEqual(reply.headers["content-security-policy"].split(";")[0], "default-src 'none'")
        self.assertEqual(reply.headers["x-frame-options"], "DENY")
        self.assertEqual(reply.headers["x-content-type-options"], "nosniff")
        session = cookie_header.split(";")[0].split("=", 1)[1]
        csrf = reply.json()["csrf_token"]
        self.assertTrue(reply.json()["must_change_password"])

        # Until the one-time password is changed, only the session's own routes work.
        assert_error(self, self.with_cookie("GET", "/admin/v1/keys", session), 403, "permission_error")
        new_password = "a-fresh-console-password"
        change = {"old_password": otp, "new_password": new_password}
        assert_error(self, self.with_cookie("POST", "/admin/v1/session/password", session, None, change), 403,
                     "permission_error")
        assert_error(self, self.with_cookie("POST", "/admin/v1/session/password", session, "0" * 64, change), 403,
                     "permission_error")
        reply = self.with_cookie("POST", "/admin/v1/session/password", session, csrf, change)
        self.assertEqual(reply.status, 200, reply.body)
        # Every session of the user ends, this one too (a copy of its id may be why the password
        # changes): the caller goes on with the new session the reply sets, and its token.
        assert_error(self, self.with_cookie("GET", "/admin/v1/session", session), 401, "authentication_error")
        for flag in ("HttpOnly", "Secure", "SameSite=Strict", "Path=/"):
            self.assertIn(flag, reply.headers["set-cookie"])
        old_csrf = csrf
        session, csrf = reply.headers["set-cookie"].split(";")[0].split("=", 1)[1], reply.json()["csrf_token"]
        self.assertNotEqual(csrf, old_csrf)

        self.assertEqual(self.with_cookie("GET", "/admin/v1/keys", session).status, 200)
        new_key = {"name": "from-console", "role": "user"}
        assert_error(self, self.with_cookie("POST", "/admin/v1/keys", session, None, new_key), 403, "permission_error")
        self.assertEqual(self.with_cookie("POST", "/admin/v1/keys", session, csrf, new_key).status, 201)

        # Logout ends the session on the server: the same id, replayed, is refused.
        reply = self.with_cookie("DELETE", "/admin/v1/session", session, csrf)
        self.assertEqual(reply.status, 200, reply.body)
        self.assertIn("Max-Age=0", reply.headers["set-cookie"])
        assert_error(self, self.with_cookie("GET", "/admin/v1/session", session), 401, "authentication_error")

        records = audit_records(self.daemon)
        # Bodies with passwords are not hashed into the log: such a hash could be reversed by guessing.
        with_password = [r for r in records if r["action"] in ("http.admin_session_login",
                                                                  "http.admin_session_password")]
        self.assertEqual(len(with_password), 4)  # one login, three password change attempts
        for r in with_password:
            self.assertEqual(r["request_sha256"], "", r)
        actions = [r["action"] for r in records]
        for a in ("auth.user_added", "auth.login", "auth.password_changed", "auth.key_created", "auth.logout"):
            self.assertIn(a, actions)
        for name in ("audit.db", "appliance.db"):
            path = os.path.join(self.daemon.data_dir, name)
            self.assertFalse(file_contains(path, new_password), name)
            self.assertFalse(file_contains(path, session), name)

    def test_brute_force_locks_the_account_and_is_audited(self):
        reply = post_json(self.daemon, "/admin/v1/users", {"username": "mallory-target", "role": "user"})
        self.assertEqual(reply.status, 201, reply.body)
        password = reply.json()["one_time_password"]
        for i in range(3):
            assert_error(self, self.login("mallory-target", "guess-number-%d" % i), 401, "authentication_error")
        # Locked: the right password is refused too, with the same answer.
        locked = self.login("mallory-target", password)
        assert_error(self, locked, 401, "authentication_error")
        self.assertEqual(locked.json()["error"]["message"], self.login("nobody-at-all", "x" * 12).json()["error"]["message"])
        records = audit_records(self.daemon)
        failed = [r for r in records if r["action"] == "auth.login_failed" and r["target"] == "mallory-target"]
        locks = [r for r in records if r["action"] == "auth.account_locked" and r["target"] == "mallory-target"]
        self.assertEqual(len(failed), 3)  # two wrong guesses, then the refusal while locked
        self.assertEqual(len(locks), 1)
        self.assertIn("locked until", locks[0]["detail"])
        self.assertFalse(file_contains(os.path.join(self.daemon.data_dir, "audit.db"), "guess-number-"))
        users = {u["username"]: u for u in request(self.daemon, "GET", "/admin/v1/users").json()["data"]}
        self.assertIsNotNone(users["mallory-target"]["locked_until"])


class LoginAbuseTest(unittest.TestCase):
    """What an anonymous caller can do to the login: oversize inputs, parallel guessing, many
    attempts from one address; and what a key of a disabled user can still do."""

    def start(self, **auth):
        daemon = Daemon(config=fast_auth_config(**auth))
        self.addCleanup(daemon.close)
        self.addCleanup(daemon.stop)
        return daemon

    def add_user(self, daemon, name, role="user"):
        reply = post_json(daemon, "/admin/v1/users", {"username": name, "role": role})
        self.assertEqual(reply.status, 201, reply.body)
        return reply.json()["one_time_password"]

    def login(self, daemon, username, password):
        return post_json(daemon, "/admin/v1/session", {"username": username, "password": password}, auth=None)

    def test_oversize_login_inputs_are_refused_and_barely_grow_the_audit_log(self):
        daemon = self.start()
        seen = len(audit_records(daemon))
        reply = self.login(daemon, "a" * (7 << 20), "x" * 12)
        self.assertEqual(reply.status, 413, reply.body[:200])
        self.assertEqual(reply.json()["error"]["type"], "invalid_request_error")
        for username, password, param in (("a" * 65, "x" * 12, "username"), ("bad\x01name", "x" * 12, "username"),
                                          ("admin", "p" * 1025, "password")):
            reply = self.login(daemon, username, password)
            assert_error(self, reply, 400, "invalid_request_error")
            self.assertEqual(reply.json()["error"]["param"], param, reply.body)
        # The other routes that take a user name or a password bound them the same way.
        reply = post_json(daemon, "/admin/v1/users", {"username": "u" * 65, "role": "user"})
        self.assertEqual((reply.status, reply.json()["error"]["param"]), (400, "username"))
        reply = post_json(daemon, "/admin/v1/users", {"username": "u" * (7 << 20), "role": "user"})
        self.assertEqual(reply.status, 413)
        new = [r for r in audit_records(daemon)[seen:]]
        self.assertEqual(len(new), 6, [r["action"] for r in new])  # one record per request, no auth event
        stored = sum(len(str(v)) for r in new for v in r.values())
        self.assertLess(stored, 16 * 1024, "the refused requests' records hold %d bytes" % stored)
        self.assertFalse(any(r["action"].startswith("auth.") for r in new))

    def test_parallel_wrong_passwords_lock_the_account_and_the_right_one_is_then_refused(self):
        # Throttling off: the lock alone must hold under concurrency.
        # Hashes of 1 MiB take long enough for the attempts to overlap.
        daemon = self.start(lockout_threshold=5, lockout_base_ms=600000, login_attempts_per_minute_per_source=0,
                            login_attempts_per_minute_per_user=0, argon2_mem_limit_kib=1024)
        password = self.add_user(daemon, "burst-target")
        with concurrent.futures.ThreadPoolExecutor(max_workers=60) as pool:
            replies = list(pool.map(lambda i: self.login(daemon, "burst-target", "wrong-guess-%02d" % i), range(60)))
        self.assertEqual(sorted({r.status for r in replies}), [401])
        assert_error(self, self.login(daemon, "burst-target", password), 401, "authentication_error")
        users = {u["username"]: u for u in request(daemon, "GET", "/admin/v1/users").json()["data"]}
        self.assertIsNotNone(users["burst-target"]["locked_until"])
        records = [r for r in audit_records(daemon) if r["target"] == "burst-target"]
        # Each attempt saw the count of those before it: 1 to 5 once each, then the lock.
        counts = sorted(int(re.search(r"consecutive failures (\d+)", r["detail"]).group(1))
                        for r in records if "consecutive failures" in r["detail"])
        self.assertEqual(counts, [1, 2, 3, 4, 5])
        self.assertEqual(len([r for r in records if r["action"] == "auth.account_locked"]), 1)
        # An admin clears the lock; the user logs in.
        reply = post_json(daemon, "/admin/v1/users/unlock", {"username": "burst-target"})
        self.assertEqual(reply.status, 200, reply.body)
        self.assertEqual(self.login(daemon, "burst-target", password).status, 200)
        self.assertIsNotNone(wait_for_record(daemon, lambda r: r["action"] == "auth.user_unlocked"))

    def test_many_attempts_from_one_address_get_429_with_retry_after_audited_once(self):
        daemon = self.start(login_attempts_per_minute_per_source=3, login_attempts_per_minute_per_user=0)
        for i in range(3):
            assert_error(self, self.login(daemon, "nobody-%d" % i, "x" * 12), 401, "authentication_error")
        for i in range(4):
            refused = self.login(daemon, "someone-%d" % i, "x" * 12)
            assert_error(self, refused, 429, "rate_limit_error")
            self.assertGreaterEqual(int(refused.headers["retry-after"]), 1)
        actions = [r["action"] for r in audit_records(daemon)]
        self.assertEqual(actions.count("auth.login_throttled"), 1)
        self.assertEqual(actions.count("auth.login_failed"), 3)

    def test_keys_of_a_disabled_user_are_refused(self):
        daemon = self.start()
        self.add_user(daemon, "key-owner", role="admin")
        for owner in ("ghost", "bad\u0001owner", "Key-Owner"):
            reply = post_json(daemon, "/admin/v1/keys", {"name": "k", "role": "user", "owner": owner})
            assert_error(self, reply, 400, "invalid_request_error")
            self.assertEqual(reply.json()["error"]["param"], "owner")
        code, _, err = run_to_exit([KIMICTL, "key", "create", "--name", "k", "--role", "user", "--owner", "ghost",
                                    "--data-dir", daemon.data_dir])
        self.assertEqual(code, 1, err)
        reply = post_json(daemon, "/admin/v1/keys", {"name": "owned", "role": "admin", "owner": "key-owner"})
        self.assertEqual(reply.status, 201, reply.body)
        key = reply.json()
        self.assertEqual(request(daemon, "GET", "/admin/v1/users", auth=key["key"]).status, 200)

        reply = post_json(daemon, "/admin/v1/users/disable", {"username": "key-owner"})
        self.assertEqual(reply.status, 200, reply.body)
        assert_error(self, request(daemon, "GET", "/admin/v1/users", auth=key["key"]), 401, "authentication_error")
        create = request(daemon, "POST", "/admin/v1/keys", {"Content-Type": "application/json"},
                         _json({"name": "escalate", "role": "admin"}), auth=key["key"])
        assert_error(self, create, 401, "authentication_error")
        listed = {k["id"]: k for k in request(daemon, "GET", "/admin/v1/keys").json()["data"]}
        self.assertIsNotNone(listed[key["id"]]["revoked_at"])
        revoked = wait_for_record(daemon, lambda r: r["action"] == "auth.key_revoked" and r["target"] == key["id"])
        self.assertEqual(revoked["detail"], "owner key-owner disabled")

        # A row that says active is refused all the same while its owner is disabled.
        db = sqlite3.connect(os.path.join(daemon.data_dir, "appliance.db"), timeout=10)
        with db:
            db.execute("UPDATE auth_keys SET revoked_ms = 0 WHERE id = ?", (key["id"],))
        db.close()
        assert_error(self, request(daemon, "GET", "/admin/v1/users", auth=key["key"]), 401, "authentication_error")
        # Enabled again (here with kimictl), the user may log in; its keys stayed revoked by the disable.
        code, out, err = run_to_exit([KIMICTL, "user", "enable", "key-owner", "--data-dir", daemon.data_dir])
        self.assertEqual((code, out.strip()), (0, "enabled key-owner"), err)
        self.assertIsNotNone(wait_for_record(daemon, lambda r: r["action"] == "auth.user_enabled"))
        code, out, err = run_to_exit([KIMICTL, "user", "unlock", "key-owner", "--data-dir", daemon.data_dir])
        self.assertEqual((code, out.strip()), (0, "unlocked key-owner"), err)
        code, _, err = run_to_exit([KIMICTL, "user", "unlock", "nobody", "--data-dir", daemon.data_dir])
        self.assertEqual(code, 1)
        self.assertIn("no user nobody", err)


if __name__ == "__main__":
    unittest.main()
