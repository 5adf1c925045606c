#!/usr/bin/env python3
"""Key and user lifecycle through the real daemon: key rotation with a grace period, a user's
password reset, the state of each user and key, search and pages of the lists, the key expiry
rule (a date means the end of that UTC day), and the auditor's read-only key inventory."""
import datetime
import os
import sys
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from auth_test import WAIT_S, assert_error, fast_auth_config, post_json, wait_for_record  # noqa: E402
from daemon_harness import KIMICTL, Daemon, request, run_to_exit  # noqa: E402


class LifecycleCase(unittest.TestCase):
    def setUp(self):
        self.daemon = Daemon(config=fast_auth_config(lockout_threshold=3, lockout_base_ms=600000))
        self.addCleanup(self.daemon.close)
        self.addCleanup(self.daemon.stop)

    def new_key(self, name, role="operator", **fields):
        reply = post_json(self.daemon, "/admin/v1/keys", dict({"name": name, "role": role}, **fields))
        self.assertEqual(reply.status, 201, reply.body)
        return reply.json()

    def status_with(self, secret):
        return request(self.daemon, "GET", "/admin/v1/session", auth=secret).status

    def login(self, username, password):
        return post_json(self.daemon, "/admin/v1/session", {"username": username, "password": password}, auth=None)

    def listed(self, path, **query):
        reply = request(self.daemon, "GET", path + "?" + urllib.parse.urlencode(query))
        self.assertEqual(reply.status, 200, reply.body)
        return reply.json()


class RotationTest(LifecycleCase):
    def test_the_old_secret_works_during_the_grace_period_and_is_refused_after(self):
        key = self.new_key("rotated")
        reply = post_json(self.daemon, "/admin/v1/keys/%s/rotate" % key["id"], {"grace_seconds": 3600})
        self.assertEqual(reply.status, 200, reply.body)
        rotated = reply.json()
        self.assertEqual(rotated["id"], key["id"])
        self.assertNotEqual(rotated["key"], key["key"])
        self.assertIsNotNone(rotated["previous_secret_expires_at"])
        self.assertEqual((self.status_with(key["key"]), self.status_with(rotated["key"])), (200, 200))
        record = wait_for_record(self.daemon, lambda r: r["action"] == "auth.key_rotated")
        self.assertEqual(record["target"], key["id"])
        self.assertIn("grace 3600 s", record["detail"])
        # The list never shows a secret, old or new.
        listed = self.listed("/admin/v1/keys", search=key["id"])["data"]
        self.assertEqual([k["id"] for k in listed], [key["id"]])
        self.assertNotIn(key["key"], str(listed))
        self.assertNotIn(rotated["key"], str(listed))

        # A short grace: the old secret is refused once it has passed (polled, bounded).
        short = self.new_key("short")
        reply = post_json(self.daemon, "/admin/v1/keys/%s/rotate" % short["id"], {"grace_seconds": 1})
        self.assertEqual(reply.status, 200, reply.body)
        deadline = time.monotonic() + WAIT_S
        while self.status_with(short["key"]) == 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        refused = request(self.daemon, "GET", "/admin/v1/session", auth=short["key"])
        assert_error(self, refused, 401, "authentication_error")
        self.assertIn("rotated", refused.json()["error"]["message"])
        self.assertEqual(self.status_with(reply.json()["key"]), 200)

    def test_grace_zero_bounds_and_kimictl(self):
        key = self.new_key("now")
        reply = post_json(self.daemon, "/admin/v1/keys/%s/rotate" % key["id"], {"grace_seconds": 0})
        self.assertEqual(reply.status, 200, reply.body)
        self.assertEqual(self.status_with(key["key"]), 401)
        for bad in ({"grace_seconds": -1}, {"grace_seconds": 604801}, {}, {"grace_seconds": "1"}):
            refused = post_json(self.daemon, "/admin/v1/keys/%s/rotate" % key["id"], bad)
            assert_error(self, refused, 400, "invalid_request_error")
            self.assertEqual(refused.json()["error"]["param"], "grace_seconds", bad)
        assert_error(self, post_json(self.daemon, "/admin/v1/keys/key_0000000000000000/rotate",
                                     {"grace_seconds": 0}), 404, "not_found_error")

        current = reply.json()["key"]
        code, out, err = run_to_exit([KIMICTL, "key", "rotate", key["id"], "--grace", "1h",
                                      "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 0, err)
        fresh = out.strip()
        self.assertTrue(fresh.startswith("sk-kimi-"), out)
        self.assertEqual((self.status_with(current), self.status_with(fresh)), (200, 200))
        code, _, err = run_to_exit([KIMICTL, "key", "rotate", key["id"], "--grace", "8d",
                                    "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 1, err)
        self.assertIn("grace period", err)
        code, _, err = run_to_exit([KIMICTL, "key", "rotate", key["id"], "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 2, err)
        post_json(self.daemon, "/admin/v1/keys/revoke", {"id": key["id"]})
        refused = post_json(self.daemon, "/admin/v1/keys/%s/rotate" % key["id"], {"grace_seconds": 0})
        self.assertEqual(refused.status // 100, 4, refused.body)
        self.assertEqual((self.status_with(current), self.status_with(fresh)), (401, 401))


class UserLifecycleTest(LifecycleCase):
    def add_user(self, name, role="operator"):
        reply = post_json(self.daemon, "/admin/v1/users", {"username": name, "role": role})
        self.assertEqual(reply.status, 201, reply.body)
        return reply.json()["one_time_password"]

    def states(self):
        return {u["username"]: u["state"] for u in self.listed("/admin/v1/users")["data"]}

    def test_a_locked_user_shows_as_locked_and_states_follow_unlock_reset_and_enable(self):
        self.add_user("carol")
        self.assertEqual(self.states()["carol"], "password_change_due")
        for _ in range(3):
            self.assertEqual(self.login("carol", "wrong-password-1").status, 401)
        # Locked wins over the password change that is also due.
        self.assertEqual(self.states()["carol"], "locked")
        self.assertEqual(post_json(self.daemon, "/admin/v1/users/unlock", {"username": "carol"}).status, 200)
        self.assertEqual(self.states()["carol"], "password_change_due")
        self.assertEqual(post_json(self.daemon, "/admin/v1/users/disable", {"username": "carol"}).status, 200)
        self.assertEqual(self.states()["carol"], "disabled")
        self.assertEqual(post_json(self.daemon, "/admin/v1/users/enable", {"username": "carol"}).status, 200)
        self.assertEqual(self.states()["carol"], "password_change_due")

    def test_a_password_reset_issues_a_one_time_password_and_ends_the_users_sessions(self):
        otp = self.add_user("bob")
        first = self.login("bob", otp)
        self.assertEqual(first.status, 200, first.body)
        cookie = {"Cookie": "kimi_session=" + first.headers["set-cookie"].split(";")[0].split("=", 1)[1]}
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/session", cookie).status, 200)
        reply = post_json(self.daemon, "/admin/v1/users/reset-password", {"username": "bob"})
        self.assertEqual(reply.status, 200, reply.body)
        fresh = reply.json()["one_time_password"]
        self.assertTrue(reply.json()["must_change_password"])
        self.assertNotEqual(fresh, otp)
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/session", cookie).status, 401)
        self.assertEqual(self.login("bob", otp).status, 401)
        again = self.login("bob", fresh)
        self.assertEqual(again.status, 200, again.body)
        self.assertTrue(again.json()["must_change_password"])
        record = wait_for_record(self.daemon, lambda r: r["action"] == "auth.password_reset")
        self.assertEqual((record["target"], record["actor"]), ("bob", self.daemon.api_key_id))
        self.assertNotIn(fresh, record["detail"])
        assert_error(self, post_json(self.daemon, "/admin/v1/users/reset-password", {"username": "nobody"}), 404,
                     "not_found_error")

        code, out, err = run_to_exit([KIMICTL, "user", "reset-password", "bob", "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 0, err)
        self.assertEqual(self.login("bob", out.strip()).status, 200)
        code, out, err = run_to_exit([KIMICTL, "user", "list", "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 0, err)
        self.assertRegex(out, r"bob\s+operator\s+password_change_due")

    def test_an_admin_cannot_disable_or_reset_its_own_account(self):
        code, out, err = run_to_exit([KIMICTL, "admin", "bootstrap", "--username", "root",
                                      "--data-dir", self.daemon.data_dir])
        self.assertEqual(code, 0, err)
        reply = self.login("root", out.strip())
        self.assertEqual(reply.status, 200, reply.body)
        headers = {"Cookie": "kimi_session=" + reply.headers["set-cookie"].split(";")[0].split("=", 1)[1],
                   "X-CSRF-Token": reply.json()["csrf_token"], "Content-Type": "application/json"}
        changed = request(self.daemon, "POST", "/admin/v1/session/password", headers,
                          b'{"old_password": "%s", "new_password": "second-secret-12"}' % out.strip().encode())
        self.assertEqual(changed.status, 200, changed.body)
        headers.update({"Cookie": changed.headers["set-cookie"].split(";")[0], "X-CSRF-Token": changed.json()["csrf_token"]})
        session = request(self.daemon, "GET", "/admin/v1/session", headers).json()
        self.assertEqual(session["idle_timeout_s"], 1800)
        for path in ("/admin/v1/users/disable", "/admin/v1/users/reset-password"):
            refused = request(self.daemon, "POST", path, headers, b'{"username": "root"}')
            assert_error(self, refused, 400, "invalid_request_error")
        self.assertEqual(self.states()["root"], "active")


class ListAndExpiryTest(LifecycleCase):
    def test_search_is_partial_case_insensitive_and_literal_and_pages_are_bounded(self):
        for name in ("50% off", "500 off", "a_b", "axb"):
            self.new_key(name)
        names = lambda **q: [k["name"] for k in self.listed("/admin/v1/keys", **q)["data"]]  # noqa: E731
        self.assertEqual(names(search="50%"), ["50% off"])
        self.assertEqual(names(search="A_B"), ["a_b"])
        self.assertEqual(names(search="OFF"), ["50% off", "500 off"])
        page = self.listed("/admin/v1/keys", search="off", limit=1)
        self.assertEqual((page["total"], page["has_more"], len(page["data"])), (2, True, 1))
        page = self.listed("/admin/v1/keys", search="off", limit=1, offset=1)
        self.assertEqual((page["has_more"], [k["name"] for k in page["data"]]), (False, ["500 off"]))
        for query, param in (("limit=0", "limit"), ("limit=501", "limit"), ("offset=-1", "offset"),
                             ("search=" + "x" * 129, "search")):
            refused = request(self.daemon, "GET", "/admin/v1/keys?" + query)
            assert_error(self, refused, 400, "invalid_request_error")
            self.assertEqual(refused.json()["error"]["param"], param, query)
        users = self.listed("/admin/v1/users", search="nobody-like-this")
        self.assertEqual((users["data"], users["total"]), ([], 0))

    def test_an_expiry_date_means_the_end_of_that_utc_day_and_a_past_one_is_refused(self):
        today = datetime.datetime.now(datetime.timezone.utc).date()
        key = self.new_key("today", expires_at=today.isoformat())
        self.assertEqual(key["expires_at"], (today + datetime.timedelta(days=1)).isoformat() + "T00:00:00.000Z")
        self.assertEqual(key["state"], "active")
        self.assertEqual(self.status_with(key["key"]), 200)
        refused = post_json(self.daemon, "/admin/v1/keys",
                            {"name": "past", "role": "user",
                             "expires_at": (today - datetime.timedelta(days=1)).isoformat()})
        assert_error(self, refused, 400, "invalid_request_error")
        self.assertEqual(refused.json()["error"]["param"], "expires_at")


class AuditorInventoryTest(LifecycleCase):
    def test_an_auditor_lists_keys_without_secrets_and_changes_nothing(self):
        auditor = self.new_key("inventory", role="auditor")["key"]
        target = self.new_key("target", role="user")
        reply = request(self.daemon, "GET", "/admin/v1/keys", auth=auditor)
        self.assertEqual(reply.status, 200, reply.body)
        listed = {k["id"]: k for k in reply.json()["data"]}
        self.assertEqual((listed[target["id"]]["name"], listed[target["id"]]["state"]), ("target", "active"))
        for k in listed.values():
            self.assertFalse({"key", "key_hash", "secret", "hash"} & set(k), k)
        self.assertNotIn(target["key"], reply.body)
        json_headers = {"Content-Type": "application/json"}
        mutations = [("POST", "/admin/v1/keys", b'{"name": "x", "role": "user"}'),
                     ("POST", "/admin/v1/keys/revoke", b'{"id": "%s"}' % target["id"].encode()),
                     ("PATCH", "/admin/v1/keys/" + target["id"], b'{"requests_per_minute": 1}'),
                     ("POST", "/admin/v1/keys/%s/rotate" % target["id"], b'{"grace_seconds": 0}'),
                     ("POST", "/admin/v1/roles/user/limits", b'{"requests_per_minute": 1}'),
                     ("POST", "/admin/v1/users", b'{"username": "x", "role": "user"}'),
                     ("POST", "/admin/v1/users/disable", b'{"username": "x"}'),
                     ("POST", "/admin/v1/users/enable", b'{"username": "x"}'),
                     ("POST", "/admin/v1/users/unlock", b'{"username": "x"}'),
                     ("POST", "/admin/v1/users/reset-password", b'{"username": "x"}')]
        for method, path, body in mutations:
            refused = request(self.daemon, method, path, json_headers, body, auth=auditor)
            assert_error(self, refused, 403, "permission_error")
        self.assertEqual(self.status_with(target["key"]), 200)


if __name__ == "__main__":
    unittest.main()
