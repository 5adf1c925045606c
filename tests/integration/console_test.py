"""The web console's static files as the daemon serves them (docs/console.md): the redirect
from /, content types, the Content-Security-Policy, no way out of the assets directory, and
404 when the console is not installed. Python standard library only; the browser tests are
in tests/browser/."""
import os
import sqlite3
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from daemon_harness import Daemon, base_config, read_reply, request, send_request  # noqa: E402

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
            self.assertEqual(reply.headers["x-frame-options"], "DENY")
            self.assertEqual(reply.headers["x-content-type-options"], "nosniff")
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
            ids = {row[0] for row in db.execute("SELECT request_id FROM audit_records")}
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


if __name__ == "__main__":
    unittest.main()
