"""The web console's static files as the daemon serves them (docs/console.md): the redirect
from /, content types, the Content-Security-Policy, no way out of the assets directory, and
404 when the console is not installed; and the admin routes made for the console: a record's
inclusion proof and the trust store. Python standard library only; the browser tests are in
tests/browser/."""
import hashlib
import json
import os
import sqlite3
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from daemon_harness import (KIMICTL, Daemon, base_config, create_api_key, post_json, read_reply,  # noqa: E402
                            request, run_to_exit, send_request)

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADMIN_UI = os.path.join(SOURCE, "admin-ui")


def console_config(assets_dir):
    config = base_config()
    config["console"] = {"assets_dir": assets_dir}
    return config


def raw_get(daemon, path):
    """A GET whose path is sent exactly as written (no client-side normalisation)."""
    with daemon.connect() as s:
        send_request(s, "GET", path)
        return read_reply(s)


class ConsoleServedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(config=console_config(ADMIN_UI))

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.daemon.close()

    def test_root_redirects_to_the_console_without_credentials(self):
        for path in ("/", "/console"):
            reply = request(self.daemon, "GET", path, auth=None)
            self.assertEqual(reply.status, 302, path)
            self.assertEqual(reply.headers["location"], "/console/")

    def assert_browser_headers(self, reply, cache_control):
        self.assertEqual(reply.headers["x-frame-options"], "DENY")
        self.assertEqual(reply.headers["x-content-type-options"], "nosniff")
        self.assertEqual(reply.headers["referrer-policy"], "no-referrer")
        self.assertEqual(reply.headers["cross-origin-opener-policy"], "same-origin")
        self.assertEqual(reply.headers["cross-origin-resource-policy"], "same-origin")
        self.assertEqual(reply.headers["cache-control"], cache_control)

    def test_files_have_their_content_type_and_the_policy(self):
        expected = {"/console/": "text/html; charset=utf-8",
                    "/console/js/main.js": "text/javascript; charset=utf-8",
                    "/console/css/console.css": "text/css; charset=utf-8",
                    "/console/favicon.svg": "image/svg+xml"}
        for path, content_type in expected.items():
            reply = request(self.daemon, "GET", path, auth=None)
            self.assertEqual(reply.status, 200, path)
            self.assertEqual(reply.headers["content-type"], content_type, path)
            policy = reply.headers["content-security-policy"]
            self.assertIn("default-src 'none'", policy)
            self.assertIn("script-src 'self'", policy)
            self.assertNotIn("unsafe-inline", policy)
            self.assertNotIn("unsafe-eval", policy)
            self.assert_browser_headers(reply, cache_control="no-cache")
        # The admin API's JSON gets the same list, loads nothing and is never cached.
        reply = request(self.daemon, "GET", "/admin/v1/keys")
        self.assertEqual(reply.status, 200, reply.body)
        self.assertEqual(reply.headers["content-security-policy"],
                         "default-src 'none'; frame-ancestors 'none'; base-uri 'none'")
        self.assert_browser_headers(reply, cache_control="no-store")
        with open(os.path.join(ADMIN_UI, "js", "api.js"), encoding="utf-8") as f:
            self.assertEqual(request(self.daemon, "GET", "/console/js/api.js", auth=None).body, f.read())

    def test_the_page_has_no_inline_script_and_loads_nothing_from_elsewhere(self):
        page = request(self.daemon, "GET", "/console/", auth=None).body
        self.assertIn('<script type="module" src="js/main.js"></script>', page)
        self.assertEqual(page.count("<script"), 1)
        self.assertNotIn("http://", page)
        self.assertNotIn("https://", page)

    def test_nothing_outside_the_assets_directory_is_served(self):
        for path in ("/console/../appliance.json", "/console/%2e%2e/appliance.json", "/console/js/../../README.md",
                     "/console/..%2f..%2fCMakeLists.txt", "/console/README.md", "/console/js/",
                     "/console/.git/config", "/console/missing.js"):
            reply = raw_get(self.daemon, path)
            self.assertIn(reply.status, (400, 401, 404), path)
            self.assertNotIn("appliance_json", reply.body)
            self.assertNotIn("cmake_minimum_required", reply.body, path)
            self.assertNotIn('"server"', reply.body, path)

    def test_console_files_are_not_audited_but_api_calls_are(self):
        request(self.daemon, "GET", "/console/js/main.js", {"X-Request-Id": "console-file"}, auth=None)
        request(self.daemon, "GET", "/admin/v1/session", {"X-Request-Id": "console-api"})
        self.assertEqual(request(self.daemon, "POST", "/console/js/main.js", auth=None).status, 405)
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(self.daemon.data_dir, "audit.db"), uri=True)
        try:
            ids = {row[0] for row in db.execute("SELECT client_request_id FROM audit_records")}
        finally:
            db.close()
        self.assertIn("console-api", ids)
        self.assertNotIn("console-file", ids)


class ConsoleNotInstalledTest(unittest.TestCase):
    def test_a_missing_directory_answers_404_and_is_logged(self):
        with tempfile.TemporaryDirectory() as empty:
            daemon = Daemon(config=console_config(os.path.join(empty, "absent")))
            try:
                reply = request(daemon, "GET", "/console/", auth=None)
                self.assertEqual(reply.status, 404)
                self.assertEqual(reply.json()["error"]["code"], "not_found")
                self.assertIsNotNone(daemon.wait_for_event(lambda e: "console is not installed" in e.get("msg", "")))
            finally:
                daemon.stop()
                daemon.close()


def root_from_path(index, size, leaf, path):
    """RFC 9162 2.1.3.2: the root that an inclusion path leads to from leaf `index`."""
    fn, sn, r = index, size - 1, leaf
    for sibling in path:
        if sn == 0:
            return None
        if fn % 2 == 1 or fn == sn:
            r = hashlib.sha256(b"\x01" + sibling + r).digest()
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn // 2, sn // 2
        else:
            r = hashlib.sha256(b"\x01" + r + sibling).digest()
        fn, sn = fn // 2, sn // 2
    return r if sn == 0 else None


def public_key_pem(directory, name):
    code, out, err = run_to_exit([KIMICTL, "keygen", "--out", os.path.join(directory, name)])
    if code != 0:
        raise RuntimeError("kimictl keygen failed: " + out + err)
    with open(os.path.join(directory, name + ".pub.pem"), encoding="utf-8") as f:
        return f.read()


def search(daemon, **query):
    path = "/admin/v1/audit?" + "&".join("%s=%s" % kv for kv in query.items())
    return request(daemon, "GET", path).json()["records"]


class ConsoleAdminRoutesTest(unittest.TestCase):
    """GET /admin/v1/audit/records/{seq}/proof and /admin/v1/trust against the real daemon."""

    @classmethod
    def setUpClass(cls):
        cls.keys = tempfile.TemporaryDirectory(prefix="kimi-it-keys-")
        trust = os.path.join(cls.keys.name, "trust")
        os.makedirs(trust)
        with open(os.path.join(trust, "first.pem"), "w", encoding="utf-8") as f:
            f.write(public_key_pem(cls.keys.name, "first"))
        config = base_config()
        config["model"] = {"trust_store": trust}
        cls.daemon = Daemon(config=config)
        cls.auditor, _ = create_api_key(cls.daemon.data_dir, "auditor", "auditor")
        cls.operator, _ = create_api_key(cls.daemon.data_dir, "operator", "operator")
        cls.user, _ = create_api_key(cls.daemon.data_dir, "user", "user")

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.daemon.close()
        cls.keys.cleanup()

    def test_a_record_proof_leads_to_the_signed_root(self):
        request(self.daemon, "GET", "/admin/v1/session", {"X-Request-Id": "prove-me"})
        seq = search(self.daemon, client_request_id="prove-me")[0]["seq"]
        reply = request(self.daemon, "GET", "/admin/v1/audit/records/%d/proof" % seq, auth=self.auditor)
        self.assertEqual(reply.status, 200, reply.body)
        body = reply.json()
        proof = body["proof"]
        self.assertEqual(proof["format"], "kimi-audit-inclusion/1")
        self.assertEqual(proof["leaf_index"], seq)
        self.assertEqual(body["record"]["client_request_id"], "prove-me")
        self.assertTrue(body["check"]["ok"], body["check"])
        leaf = hashlib.sha256(b"\x00" + proof["record"].encode()).digest()
        self.assertEqual(leaf.hex(), proof["leaf_hash"])
        root = root_from_path(seq, proof["tree_size"], leaf, [bytes.fromhex(h) for h in proof["audit_path"]])
        self.assertEqual(root.hex(), body["root_hash"])
        self.assertEqual(body["root_hash"], proof["signed_head"]["root_hash"])
        self.assertEqual(hashlib.sha256(bytes.fromhex(body["public_key"]["public_key"])).hexdigest(),
                         proof["signed_head"]["key_id"])
        # The read is itself audited.
        self.assertTrue(search(self.daemon, action="http.admin_audit_proof"))

    def test_proof_refusals(self):
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/audit/records/0/proof", auth=self.operator).status, 403)
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/audit/records/99999999/proof").status, 404)
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/audit/records/x1/proof").status, 400)

    def test_trust_store_add_duplicate_remove_audited(self):
        listed = request(self.daemon, "GET", "/admin/v1/trust", auth=self.operator)
        self.assertEqual(listed.status, 200)
        self.assertTrue(listed.json()["editable"])
        self.assertEqual([e["kind"] for e in listed.json()["entries"]], ["key"])
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/trust", auth=self.auditor).status, 200)
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/trust", auth=self.user).status, 403)

        pem = public_key_pem(self.keys.name, "second")
        headers = {"Content-Type": "application/json", "Authorization": "Bearer " + self.operator}
        refused = request(self.daemon, "POST", "/admin/v1/trust", headers, json.dumps({"pem": pem}).encode())
        self.assertEqual(refused.status, 403)
        bad = post_json(self.daemon, "/admin/v1/trust", {"pem": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"})
        self.assertEqual(bad.status, 400)
        self.assertIn("public key", bad.json()["error"]["message"])
        added = post_json(self.daemon, "/admin/v1/trust", {"pem": pem, "label": "second"})
        self.assertEqual(added.status, 201, added.body)
        entry = added.json()
        self.assertEqual(post_json(self.daemon, "/admin/v1/trust", {"pem": pem}).status, 409)
        self.assertEqual(len(request(self.daemon, "GET", "/admin/v1/trust").json()["entries"]), 2)

        removed = request(self.daemon, "DELETE", "/admin/v1/trust/" + entry["id"])
        self.assertEqual(removed.status, 200, removed.body)
        self.assertEqual(request(self.daemon, "DELETE", "/admin/v1/trust/" + entry["id"]).status, 404)
        self.assertFalse(os.path.exists(entry["file"]))
        targets = {(r["action"], r["outcome"], r.get("target", "")) for r in search(self.daemon, action="trust.add")}
        targets |= {(r["action"], r["outcome"], r.get("target", "")) for r in search(self.daemon, action="trust.remove")}
        self.assertIn(("trust.add", "ok", "key sha256:" + entry["id"]), targets)
        self.assertIn(("trust.add", "refused", "key sha256:" + entry["id"]), targets)
        self.assertIn(("trust.remove", "ok", "key sha256:" + entry["id"]), targets)


if __name__ == "__main__":
    unittest.main()
