"""Integration tests of usage reporting and budgets through the real daemon: two keys of two
owners make requests (a scripted upstream on loopback fixes every request's token counts), the
daily series per key and per owner and the top keys answer with those counts, names and owners;
an owner's monthly budget crossing its alert threshold shows on GET /admin/v1/budgets and
/metrics and is audited once, however often it is read and however many requests follow. Python
standard library only.
"""
import datetime
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from auth_test import audit_records  # noqa: E402
from daemon_harness import Daemon, post_json, request  # noqa: E402
from quota_test import COMPLETION_TOKENS, PROMPT_TOKENS, Upstream, chat, create_key, upstream_config, \
    wait_until_served  # noqa: E402

WAIT_S = 20  # bound on waiting for the usage writer; only stops a hung test
PER_REQUEST = PROMPT_TOKENS + COMPLETION_TOKENS


def put_budget(daemon, scope, subject, fields):
    return request(daemon, "PUT", "/admin/v1/budgets/%s/%s" % (scope, subject), {"Content-Type": "application/json"},
                   json.dumps(fields).encode())


class UsageTest(unittest.TestCase):
    def setUp(self):
        self.upstream = Upstream()
        self.daemon = Daemon(config=upstream_config(self.upstream))
        wait_until_served(self, self.daemon)
        for user in ("alice", "bob"):
            added = post_json(self.daemon, "/admin/v1/users", {"username": user, "role": "user"})
            self.assertEqual(added.status, 201, added.body)
        self.alice_key, self.alice_id = create_key(self.daemon, name="alice-batch", owner="alice")
        self.bob_key, self.bob_id = create_key(self.daemon, name="bob-chat", owner="bob")

    def tearDown(self):
        self.daemon.stop()
        self.daemon.close()
        self.upstream.close()

    def usage(self, query):
        reply = request(self.daemon, "GET", "/admin/v1/usage" + query)
        self.assertEqual(reply.status, 200, reply.body)
        return reply.json()

    def wait_for_tokens(self, key_id, tokens):
        """The usage writer commits within auth.usage_flush_ms; the series reads its rows."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            lines = {line["id"]: line for line in self.usage("?days=7")["data"]}
            if key_id in lines and lines[key_id]["total_tokens"] == tokens:
                return
            time.sleep(0.1)
        self.fail("key %s never showed %d tokens: %s" % (key_id, tokens, lines))

    def test_series_and_top_keys_per_key_and_owner(self):
        for _ in range(3):
            self.assertEqual(chat(self.daemon, self.alice_key).status, 200)
        self.assertEqual(chat(self.daemon, self.bob_key).status, 200)
        self.wait_for_tokens(self.alice_id, 3 * PER_REQUEST)
        self.wait_for_tokens(self.bob_id, PER_REQUEST)

        series = self.usage("?by=key&days=7")
        today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        self.assertEqual(len(series["dates"]), 7)
        self.assertEqual(series["dates"][-1], today)
        self.assertEqual([line["id"] for line in series["data"]], [self.alice_id, self.bob_id])
        alice = series["data"][0]
        self.assertEqual((alice["name"], alice["owner"]), ("alice-batch", "alice"))
        # Today's, or yesterday's too when the requests straddled UTC midnight.
        self.assertEqual(alice["requests"][:5], [0] * 5)
        self.assertEqual(sum(alice["requests"]), 3)
        self.assertEqual(sum(alice["prompt_tokens"]), 3 * PROMPT_TOKENS)
        self.assertEqual(sum(alice["completion_tokens"]), 3 * COMPLETION_TOKENS)

        owners = {line["id"]: line for line in self.usage("?by=owner&days=30")["data"]}
        self.assertEqual(owners["alice"]["total_tokens"], 3 * PER_REQUEST)
        self.assertEqual(owners["bob"]["total_requests"], 1)

        top = request(self.daemon, "GET", "/admin/v1/usage/top?days=7&limit=1").json()
        self.assertEqual(top["total_tokens"], 4 * PER_REQUEST)
        self.assertEqual(len(top["data"]), 1)
        self.assertEqual((top["data"][0]["id"], top["data"][0]["name"], top["data"][0]["owner"]),
                         (self.alice_id, "alice-batch", "alice"))
        self.assertAlmostEqual(top["data"][0]["share"], 0.75)
        self.assertIsNone(top["data"][0]["budget"])

        for bad in ("?days=0", "?days=91", "?by=model", "?days=x"):
            self.assertEqual(request(self.daemon, "GET", "/admin/v1/usage" + bad).status, 400, bad)

    def test_an_owner_budget_alerts_once_and_is_audited_once(self):
        self.assertEqual(chat(self.daemon, self.bob_key).status, 200)
        self.wait_for_tokens(self.bob_id, PER_REQUEST)
        # 80% of 20 is 16: one request (15) stays below, the second crosses it.
        set_reply = put_budget(self.daemon, "owner", "bob", {"tokens_per_month": 20})
        self.assertEqual(set_reply.status, 200, set_reply.body)
        self.assertEqual((set_reply.json()["alert_percent"], set_reply.json()["threshold_tokens"]), (80, 16))
        self.assertFalse(set_reply.json()["alerting"])
        self.assertEqual(put_budget(self.daemon, "owner", "nobody", {"tokens_per_month": 20}).status, 404)
        self.assertEqual(put_budget(self.daemon, "key", self.bob_id, {"tokens_per_month": 0}).status, 400)

        self.assertEqual(chat(self.daemon, self.bob_key).status, 200)
        self.wait_for_tokens(self.bob_id, 2 * PER_REQUEST)
        budgets = request(self.daemon, "GET", "/admin/v1/budgets").json()
        self.assertEqual(budgets["alerting"], 1)
        self.assertEqual((budgets["data"][0]["subject"], budgets["data"][0]["used_tokens"]), ("bob", 2 * PER_REQUEST))
        self.assertTrue(budgets["data"][0]["exceeded"])
        self.assertEqual([a["subject"] for a in budgets["alerts"]], ["bob"])
        # Soft: the owner's key still works, and further reads and requests add no alert.
        self.assertEqual(chat(self.daemon, self.bob_key).status, 200)
        metrics = request(self.daemon, "GET", "/metrics").body
        self.assertIn("kimi_budget_alerts 1", metrics.splitlines())
        request(self.daemon, "GET", "/admin/v1/budgets")
        request(self.daemon, "GET", "/admin/v1/usage/top?by=owner")
        top = request(self.daemon, "GET", "/admin/v1/usage/top?by=owner&days=1").json()
        self.assertTrue(top["data"][0]["budget"]["alerting"])

        records = audit_records(self.daemon)
        alerts = [r for r in records if r["action"] == "auth.budget_alert"]
        self.assertEqual(len(alerts), 1, alerts)
        self.assertEqual(alerts[0]["target"], "bob")
        self.assertIn("owner bob used 30 of 20 tokens", alerts[0]["detail"])
        changes = [r for r in records if r["action"] == "auth.budget_set"]
        self.assertEqual(len(changes), 1)
        self.assertEqual((changes[0]["actor"], changes[0]["target"]), (self.daemon.api_key_id, "bob"))

        removed = request(self.daemon, "DELETE", "/admin/v1/budgets/owner/bob")
        self.assertEqual(removed.status, 200, removed.body)
        self.assertEqual(request(self.daemon, "DELETE", "/admin/v1/budgets/owner/bob").status, 404)
        self.assertIn("kimi_budget_alerts 0", request(self.daemon, "GET", "/metrics").body.splitlines())
        self.assertEqual(len([r for r in audit_records(self.daemon) if r["action"] == "auth.budget_removed"]), 1)


if __name__ == "__main__":
    unittest.main()
