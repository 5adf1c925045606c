"""Integration tests of the auditors' search and export (GET /admin/v1/audit, /audit/actions,
/audit/export) against the real daemon: newest first by default with cursors in both
directions, key name and owner resolved from the key list, partial match with LIKE's
wildcards taken literally, exports that hold exactly what the same filters list, and all of
it open to the auditor role. Python standard library only.
"""
import csv
import io
import json
import os
import sys
import tempfile
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import KIMICTL, Daemon, base_config, create_api_key, post_json, request, run_to_exit  # noqa: E402


def search_path(route="/admin/v1/audit", **params):
    return route + ("?" + urllib.parse.urlencode(params) if params else "")


class AuditSearchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kimi-audit-search-")
        config = base_config()
        config["storage"]["data_dir"] = os.path.join(cls.tmp.name, "data")
        cls.daemon = Daemon(config=config)
        cls.auditor, _ = create_api_key(cls.daemon.data_dir, "it-auditor", "auditor")
        cls.operator, _ = create_api_key(cls.daemon.data_dir, "it-operator", "operator")
        for user in ("alice", "bob"):
            reply = post_json(cls.daemon, "/admin/v1/users", {"username": user, "role": "user"})
            assert reply.status == 201, reply.body
        # Two keys share a name under different owners; alice owns two keys.
        cls.keys = {}
        for label, name, owner in (("a1", "ci-runner", "alice"), ("a2", "notebook", "alice"),
                                   ("b1", "ci-runner", "bob")):
            reply = post_json(cls.daemon, "/admin/v1/keys", {"name": name, "role": "user", "owner": owner})
            assert reply.status == 201, reply.body
            cls.keys[label] = reply.json()
        # Each key makes requests the log records under its id, never its name.
        for label, key in cls.keys.items():
            for i in range(3):
                reply = request(cls.daemon, "GET", "/v1/models", {"X-Request-Id": "it-%s-%d" % (label, i)},
                                auth=key["key"])
                assert reply.status == 200, reply.body
        # Client ids that tell a literal % or _ from LIKE's wildcards.
        for client_id in ("it-100%_done", "it-100x_done", "it-100%xdone"):
            request(cls.daemon, "GET", "/v1/models", {"X-Request-Id": client_id}, auth=cls.keys["b1"]["key"])

    @classmethod
    def tearDownClass(cls):
        cls.daemon.close()
        cls.tmp.cleanup()

    def get(self, path, token=None):
        reply = request(self.daemon, "GET", path, auth=token or self.auditor)
        self.assertEqual(reply.status, 200, (path, reply.body))
        return reply

    def records(self, **params):
        return self.get(search_path(**params)).json()["records"]

    def walk(self, **params):
        """Every record of a search, page by page through next_cursor."""
        seqs, cursor = [], None
        for _ in range(1000):  # bound: never more pages than records
            query = dict(params, **({"cursor": cursor} if cursor else {}))
            body = self.get(search_path(**query)).json()
            seqs += [r["seq"] for r in body["records"]]
            cursor = body["next_cursor"]
            if cursor is None:
                return seqs
        self.fail("the pages did not end")

    def test_newest_first_by_default_and_cursors_page_both_ways(self):
        oldest = [r["seq"] for r in self.records(order="oldest", limit=1000)]
        self.assertEqual(oldest, sorted(oldest))
        self.assertEqual(oldest[0], 0)
        newest = [r["seq"] for r in self.records(limit=20)]
        self.assertEqual(newest, sorted(newest, reverse=True))
        self.assertGreaterEqual(newest[0], oldest[-1])  # later reads are records too
        down = self.walk(actor=self.keys["a1"]["id"], limit=1)
        up = self.walk(actor=self.keys["a1"]["id"], limit=2, order="oldest")
        self.assertEqual(len(down), 3)
        self.assertEqual(down, sorted(down, reverse=True))
        self.assertEqual(up, list(reversed(down)))

    def test_key_name_and_owner_find_every_key_that_has_them(self):
        ids = {label: key["id"] for label, key in self.keys.items()}

        def actors(**params):
            return {r["actor"] for r in self.records(action="http.models", **params)}
        self.assertEqual(actors(key_name="ci-runner"), {ids["a1"], ids["b1"]})
        self.assertEqual(actors(owner="alice"), {ids["a1"], ids["a2"]})
        self.assertEqual(actors(key_name="ci-runner", owner="alice"), {ids["a1"]})
        self.assertEqual(self.records(owner="nobody"), [])
        record = self.records(key_name="notebook", limit=1)[0]
        self.assertEqual((record["key_name"], record["key_owner"]), ("notebook", "alice"))

    def test_partial_match_is_case_insensitive_and_takes_wildcards_literally(self):
        def client_ids(q):
            return sorted(r["client_request_id"] for r in self.records(q=q, action="http.models"))
        self.assertEqual(client_ids("100%_"), ["it-100%_done"])
        self.assertEqual(client_ids("100%"), ["it-100%_done", "it-100%xdone"])
        self.assertEqual(client_ids("IT-A2-"), ["it-a2-0", "it-a2-1", "it-a2-2"])
        # A key's name or owner matches too, in part and in any case.
        by_owner = {r["actor"] for r in self.records(q="ALIC", action="http.models")}
        self.assertEqual(by_owner, {self.keys["a1"]["id"], self.keys["a2"]["id"]})
        # Quotes and SQL in the text are a value to look for, never SQL: nothing matches, the log
        # is intact.
        self.assertEqual(client_ids("x' OR '1'='1"), [])
        self.assertEqual(client_ids("'); DROP TABLE audit_records; --"), [])
        self.assertTrue(self.get("/admin/v1/audit/verify").json()["ok"])
        body = self.get(search_path(q="nothing-has-this")).json()
        self.assertEqual(body["records"], [])
        self.assertIn("scanned", body)

    def test_actions_lists_what_the_log_holds(self):
        actions = self.get("/admin/v1/audit/actions").json()["actions"]
        self.assertIn("http.models", actions)
        self.assertIn("auth.key_created", actions)
        self.assertEqual(actions, sorted(set(actions)))

    def test_export_holds_exactly_what_the_filters_list(self):
        listed = sorted(r["seq"] for r in self.records(owner="alice", limit=1000))
        self.assertEqual(len(listed), 6)
        reply = self.get(search_path("/admin/v1/audit/export", owner="alice"))
        lines = [json.loads(line) for line in reply.body.split("\n") if line]
        self.assertEqual(lines[0]["type"], "export")
        self.assertTrue(lines[0]["filtered"])
        exported = [r["seq"] for r in lines if r["type"] == "record"]
        self.assertEqual(exported, listed)
        bundle = os.path.join(self.tmp.name, "alice.jsonl")
        with open(bundle, "w") as f:
            f.write(reply.body)
        code, out, err = run_to_exit([KIMICTL, "audit", "verify", "--export", bundle, "--data-dir",
                                      self.daemon.data_dir])
        self.assertEqual(code, 0, out + err)
        # CSV with a partial match and a key name.
        reply = self.get(search_path("/admin/v1/audit/export", key_name="ci-runner", q="-0", format="csv"))
        rows = [row for row in csv.DictReader(io.StringIO(reply.body)) if row["type"] == "record"]
        self.assertEqual(sorted(row["client_request_id"] for row in rows), ["it-a1-0", "it-b1-0"])
        # The export's record names its filters.
        acts = [r for r in self.records(action="audit.export", limit=5)]
        self.assertIn("key_name=ci-runner", acts[0]["target"])
        self.assertIn("q=-0", acts[0]["target"])

    def test_auditor_may_search_operator_may_not(self):
        for path in ("/admin/v1/audit", "/admin/v1/audit/actions", "/admin/v1/audit/export?owner=alice"):
            self.assertEqual(request(self.daemon, "GET", path, auth=self.auditor).status, 200, path)
            self.assertEqual(request(self.daemon, "GET", path, auth=self.operator).status, 403, path)

    def test_malformed_parameters_are_refused(self):
        for params in ({"order": "sideways"}, {"q": "x" * 257}, {"limit": "1001"}, {"cursor": "-1"}):
            for route in ("/admin/v1/audit", "/admin/v1/audit/export"):
                reply = request(self.daemon, "GET", search_path(route, **params), auth=self.auditor)
                self.assertEqual(reply.status, 400, (route, params, reply.body))


if __name__ == "__main__":
    unittest.main()
