"""Policies through the real daemon: the shipped default active at first start, a new version
uploaded and listed, an invalid one refused with the JSON pointer of every error while the
previous stays active, the change audited with its diff, and a prompt holding a card number
refused under a blocking policy with a 400 that names the category and not the value.
No model is loaded there: the policy step runs before a backend is chosen. ContentStorageTest
serves the demo model: prompt and completion text are stored only once a policy says so,
redacted before storage, and the chain still verifies. ServiceLevelTest serves it too: prompt
limits counted with the served model's tokenizer (400 / 403 naming the limit, in the audit
record), the workload class header (unknown: 400; the class in the audit record), and the
attainment series on /metrics for the served requests.
"""
import json
import os
import sqlite3
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from audit_test import read_records, verify  # noqa: E402
from daemon_harness import Daemon, SignedModel, create_api_key, post_json, request  # noqa: E402
import prometheus_text  # noqa: E402

POLICIES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "policies")


def load_policy(relative):
    with open(os.path.join(POLICIES, relative), encoding="utf-8") as f:
        return json.load(f)


def chat(text):
    return {"model": "kimi-k3", "messages": [{"role": "user", "content": text}], "max_tokens": 8}


class PolicyTest(unittest.TestCase):
    def setUp(self):
        self.daemon = Daemon()

    def tearDown(self):
        self.daemon.close()

    def active(self):
        reply = request(self.daemon, "GET", "/admin/v1/policies")
        self.assertEqual(reply.status, 200, reply.body)
        return reply.json()

    def test_default_is_version_one(self):
        listed = self.active()
        self.assertEqual(listed["active_version"], 1)
        self.assertEqual(listed["active"], load_policy("default.json"))
        self.assertEqual([v["version"] for v in listed["versions"]], [1])
        one = request(self.daemon, "GET", "/admin/v1/policies/1")
        self.assertEqual(one.status, 200)
        self.assertEqual(one.json()["document"]["name"], "default")
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/policies/9").status, 404)

    def test_upload_block_and_audit(self):
        # Under the default a card number passes the policy (no model: 503, not 400).
        before = post_json(self.daemon, "/v1/chat/completions", chat("card 4111 1111 1111 1111"))
        self.assertEqual(before.status, 503, before.body)

        uploaded = post_json(self.daemon, "/admin/v1/policies", load_policy("examples/bank.json"))
        self.assertEqual(uploaded.status, 201, uploaded.body)
        self.assertEqual(uploaded.json()["version"], 2)
        self.assertEqual(self.active()["active_version"], 2)

        # The next request is under the new version, without a restart.
        blocked = post_json(self.daemon, "/v1/chat/completions", chat("Thẻ của tôi: 4111 1111 1111 1111"))
        self.assertEqual(blocked.status, 400, blocked.body)
        error = blocked.json()["error"]
        self.assertIn("payment_card", error["message"])
        self.assertNotIn("4111", error["message"])
        # A near miss (Luhn fails) is not blocked.
        near = post_json(self.daemon, "/v1/chat/completions", chat("order 4111 1111 1111 1112"))
        self.assertEqual(near.status, 503, near.body)

        # The refused request's record names the policy version and the decision, not the value.
        refused = [r for r in read_records(self.daemon.data_dir)
                   if r["action"] == "http.chat_completions" and "redact:payment_card:block:1" in (r["policy"] or "")]
        self.assertEqual(len(refused), 1)
        self.assertIn("policy:v2", refused[0]["policy"])
        self.assertNotIn("4111", repr(refused[0]))
        records = [r for r in read_records(self.daemon.data_dir) if r["action"] == "policy.update"]
        self.assertEqual([r["target"] for r in records], ["policy/1", "policy/2"])
        detail = json.loads(records[1]["detail"])
        self.assertEqual(detail["previous"], 1)
        self.assertIn({"op": "replace", "path": "/name", "value": "bank"}, detail["diff"])
        self.assertEqual(records[1]["actor"], self.daemon.api_key_id)

    def test_a_long_prompt_against_an_open_ended_pattern_is_searched_once(self):
        # std::regex searched again from every byte: 1 s of CPU for 8 KB of letters and
        # quadratic beyond, so this 512 KiB prompt held its worker for about an hour.
        policy = load_policy("examples/bank.json")
        policy["redaction"]["custom_patterns"].append(
            {"name": "project_code", "pattern": r"[a-z0-9.]+-int-[0-9]{4}", "action": "block"})
        self.assertEqual(post_json(self.daemon, "/admin/v1/policies", policy).status, 201)
        letters = "a" * (512 * 1024)
        passed = post_json(self.daemon, "/v1/chat/completions", chat(letters))
        self.assertEqual(passed.status, 503, passed.body)  # past the policy; no model loaded
        blocked = post_json(self.daemon, "/v1/chat/completions", chat(letters + "-int-2026"))
        self.assertEqual(blocked.status, 400, blocked.body)
        self.assertIn("project_code", blocked.json()["error"]["message"])

    def test_block_covers_every_text_the_prompt_prints(self):
        self.assertEqual(post_json(self.daemon, "/admin/v1/policies", load_policy("examples/bank.json")).status, 201)
        ssn = "123-45-6789"
        user = {"role": "user", "content": "hello"}

        def tools(name="lookup", description="find", parameters=None):
            return [{"type": "function", "function": {"name": name, "description": description,
                                                      "parameters": parameters or {"type": "object"}}}]
        call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"q": ssn})}}
        cases = {
            "name": {"messages": [{"role": "user", "name": ssn, "content": "hi"}]},
            "reasoning_content": {"messages": [user, {"role": "assistant", "reasoning_content": "ssn " + ssn,
                                                      "content": "ok"}, user]},
            "tool call arguments": {"messages": [user, {"role": "assistant", "tool_calls": [call]},
                                                 {"role": "tool", "tool_call_id": "c1", "content": "r"}]},
            "escaped tool call arguments": {"messages": [user, {"role": "assistant", "tool_calls": [dict(
                call, function={"name": "lookup", "arguments": '{"q": "123\\u002d45\\u002d6789"}'})]},
                {"role": "tool", "tool_call_id": "c1", "content": "r"}]},
            "tool description": {"messages": [user], "tools": tools(description="ssn " + ssn)},
            "tool name": {"messages": [user], "tools": tools(name="f-" + ssn)},
            "parameter description": {"messages": [user], "tools": tools(parameters={
                "type": "object", "properties": {"id": {"type": "string", "description": ssn}}})},
            "dynamic tool": {"messages": [{"role": "system", "tools": tools(description=ssn)}, user]},
            "response_format schema": {"messages": [user], "response_format": {"type": "json_schema", "json_schema": {
                "name": "a", "schema": {"type": "string", "description": "ssn " + ssn}}}},
            "split text parts": {"messages": [{"role": "user", "content": [{"type": "text", "text": "ssn 123-45"},
                                                                           {"type": "text", "text": "-6789"}]}]},
        }
        for field, body in cases.items():
            with self.subTest(field=field):
                reply = post_json(self.daemon, "/v1/chat/completions", dict(body, model="kimi-k3", max_tokens=8))
                self.assertEqual(reply.status, 400, reply.body)
                self.assertIn("us_ssn", reply.json()["error"]["message"])
                self.assertNotIn("6789", reply.json()["error"]["message"])

    def test_invalid_policy_lists_every_path_and_changes_nothing(self):
        bad = load_policy("default.json")
        bad["content_logging"]["retention_days"] = 0
        bad["redaction"]["rules"][0]["action"] = "shred"
        bad["access"]["rules"][1]["subject"] = "role:root"
        reply = post_json(self.daemon, "/admin/v1/policies", bad)
        self.assertEqual(reply.status, 400, reply.body)
        message = reply.json()["error"]["message"]
        for path in ("/content_logging/retention_days", "/redaction/rules/0/action", "/access/rules/1/subject"):
            self.assertIn(path, message)
        listed = self.active()
        self.assertEqual(listed["active_version"], 1)
        self.assertEqual(len(listed["versions"]), 1)

    def test_permissions(self):
        auditor, _ = create_api_key(self.daemon.data_dir, "auditor", "auditor")
        user, _ = create_api_key(self.daemon.data_dir, "user", "user")
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/policies", auth=auditor).status, 200)
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/policies", auth=user).status, 403)
        body = json.dumps(load_policy("default.json")).encode()
        refused = request(self.daemon, "POST", "/admin/v1/policies", {"Content-Type": "application/json"}, body,
                          auth=auditor)
        self.assertEqual(refused.status, 403)



def stored_content(data_dir):
    """{seq: (prompt, completion)} of the audit log's stored content."""
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(data_dir, "audit.db"), uri=True)
    try:
        return {seq: (prompt, completion) for seq, prompt, completion in
                db.execute("SELECT seq, prompt, completion FROM audit_content")}
    finally:
        db.close()


class ServedModelTestCase(unittest.TestCase):
    """One daemon per test, serving a freshly signed k3-nano as "kimi-k3-nano", ready."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="kimi-policy-it-")
        self.daemon = SignedModel(self.tmp.name).serve(served_id="kimi-k3-nano", threads=2)

    def tearDown(self):
        self.daemon.close()
        self.tmp.cleanup()


class ContentStorageTest(ServedModelTestCase):
    def chat_records(self):
        return [r for r in read_records(self.daemon.data_dir) if r["action"] == "http.chat_completions"]

    def test_content_is_stored_only_when_the_policy_says_so_and_redacted(self):
        body = {"model": "kimi-k3-nano", "max_tokens": 4, "temperature": 0,
                "messages": [{"role": "user", "content": "write to alice@example.com"}]}
        self.assertEqual(post_json(self.daemon, "/v1/chat/completions", body).status, 200)
        self.assertEqual(stored_content(self.daemon.data_dir), {})  # the default stores nothing

        keeping = load_policy("default.json")
        keeping["name"] = "keep-content"
        keeping["content_logging"] = {"store_prompts": True, "store_completions": True, "retention_days": 7}
        self.assertEqual(post_json(self.daemon, "/admin/v1/policies", keeping).status, 201)
        for stream in (False, True):
            reply = post_json(self.daemon, "/v1/chat/completions", dict(body, stream=stream))
            self.assertEqual(reply.status, 200, reply.body)
        records = self.chat_records()
        content = stored_content(self.daemon.data_dir)
        # The whole response's record, the stream's start record (the prompt) and its end record
        # (the completion alone, empty when the answer was all reasoning).
        whole, stream_start, stream_end = records[-3:]
        self.assertEqual(stream_start["outcome"], "started")
        self.assertEqual(stream_end["start_seq"], stream_start["seq"])
        # The start record has the engine's own prompt count, the one usage reports at the end.
        self.assertEqual(stream_start["prompt_tokens"], stream_end["prompt_tokens"])
        self.assertEqual(stream_start["prompt_tokens"], whole["prompt_tokens"])
        self.assertEqual(sorted(content), [whole["seq"], stream_start["seq"], stream_end["seq"]])
        for seq in (whole["seq"], stream_start["seq"]):
            prompt = content[seq][0]
            self.assertIn("[REDACTED:EMAIL]", prompt)  # the default masks e-mail before storage
            self.assertNotIn("alice@example.com", prompt)
            self.assertIn("kimi-k3-nano", prompt)
        self.assertEqual(content[stream_end["seq"]][0] or "", "")
        self.assertEqual(records[0]["content_sha256"] or "", "")
        self.assertTrue(all(r["content_sha256"] for r in records[-3:]))

        # Escapes in the JSON text do not hide a value from redaction before storage.
        escaped = ('{"model": "kimi-k3-nano", "max_tokens": 4, "temperature": 0, "messages": [{"role": "user", '
                   '"content": "write to bob\\u0040example.org"}]}')
        reply = request(self.daemon, "POST", "/v1/chat/completions", {"Content-Type": "application/json"},
                        escaped.encode())
        self.assertEqual(reply.status, 200, reply.body)
        prompt = stored_content(self.daemon.data_dir)[self.chat_records()[-1]["seq"]][0]
        self.assertIn("[REDACTED:EMAIL]", prompt)
        self.assertNotIn("bob", prompt)
        code, out, err = verify(self.daemon.data_dir)
        self.assertEqual(code, 0, out + err)


def words(n):
    return " ".join(["river"] * n)


class ServiceLevelTest(ServedModelTestCase):
    def chat(self, text, key=None, headers=None):
        body = {"model": "kimi-k3-nano", "max_tokens": 3, "temperature": 0,
                "messages": [{"role": "user", "content": text}]}
        headers = dict(headers or {}, **{"Content-Type": "application/json"})
        if key is None:
            return request(self.daemon, "POST", "/v1/chat/completions", headers, json.dumps(body).encode())
        return request(self.daemon, "POST", "/v1/chat/completions", headers, json.dumps(body).encode(), auth=key)

    def record_of(self, reply):
        request_id = reply.headers.get("x-request-id")
        found = [r for r in read_records(self.daemon.data_dir) if r["request_id"] == request_id]
        self.assertEqual(len(found), 1, request_id)
        return found[0]

    def test_prompt_limits_are_counted_with_the_served_tokenizer(self):
        limited = load_policy("default.json")
        limited["name"] = "prompt-limits"
        # The K3 template's markup alone is about a hundred tokens of the demo vocabulary.
        limited["access"]["long_context_threshold_tokens"] = 3000
        limited["access"]["rules"][2] = {"subject": "role:user", "models": ["*"], "long_context": False,
                                         "max_prompt_tokens": 300}
        self.assertEqual(post_json(self.daemon, "/admin/v1/policies", limited).status, 201)
        user, _ = create_api_key(self.daemon.data_dir, "limited", "user")

        short = self.chat("Name a river.", key=user)
        self.assertEqual(short.status, 200, short.body)
        self.assertIn("prompt_tokens:", self.record_of(short)["policy"])

        over = self.chat(words(400), key=user)
        self.assertEqual(over.status, 400, over.body)
        self.assertIn("max_prompt_tokens", over.json()["error"]["message"])
        self.assertIn("300", over.json()["error"]["message"])
        self.assertIn("max_prompt_tokens:300:exceeded", self.record_of(over)["policy"])

        long_context = self.chat(words(4000), key=user)
        self.assertEqual(long_context.status, 403, long_context.body)
        self.assertIn("long-context threshold of 3000 tokens", long_context.json()["error"]["message"])
        self.assertIn("long_context_threshold_tokens:3000:exceeded", self.record_of(long_context)["policy"])

        # The admin's rule sets no prompt limit: the same prompt is served.
        self.assertEqual(self.chat(words(400)).status, 200)

    def test_each_request_is_parsed_rendered_and_tokenised_once(self):
        # Redaction before the model renders the prompt to check it whole; the prompt limit
        # counts it with the served tokenizer (a prompt of more bytes than the limit, so the
        # count is exact): both, and the engine, must use the one render and tokenisation.
        counting = load_policy("default.json")
        counting["name"] = "count-once"
        counting["redaction"]["before_model"] = True
        for rule in counting["access"]["rules"]:
            rule["max_prompt_tokens"] = 300
        self.assertEqual(post_json(self.daemon, "/admin/v1/policies", counting).status, 201)
        names = ("kimi_request_parses_total", "kimi_prompt_renders_total", "kimi_prompt_tokenizations_total")

        def counts():
            families = prometheus_text.parse(request(self.daemon, "GET", "/metrics").body)
            return {name: families[name]["samples"][0][2] for name in names}

        before = counts()
        requests = 0
        for stream in (False, True, False, True):
            body = {"model": "kimi-k3-nano", "max_tokens": 3, "temperature": 0, "stream": stream,
                    "messages": [{"role": "user", "content": "Name a river. " + words(60)}]}
            reply = post_json(self.daemon, "/v1/chat/completions", body)
            self.assertEqual(reply.status, 200, reply.body)
            requests += 1
            # A stream has a start record beside its final one; both carry the policy's entries.
            policy = [r["policy"] or "" for r in read_records(self.daemon.data_dir)
                      if r["request_id"] == reply.headers.get("x-request-id")]
            self.assertTrue(policy and all("prompt_tokens:" in p for p in policy), policy)
            self.assertFalse(any("prompt_tokens:<=" in p for p in policy), policy)  # exact, not a byte bound
        after = counts()
        self.assertEqual({name: after[name] - before[name] for name in names}, {name: requests for name in names})

    def test_workload_class_and_attainment_on_metrics(self):
        unknown = self.chat("hello", headers={"x-kimi-workload": "batch"})
        self.assertEqual(unknown.status, 400, unknown.body)
        self.assertIn("batch", unknown.json()["error"]["message"])
        agentic = self.chat("hello", headers={"x-kimi-workload": "agentic"})
        self.assertEqual(agentic.status, 200, agentic.body)
        self.assertIn("class:agentic", self.record_of(agentic)["policy"])
        for stream in (False, True):
            body = {"model": "kimi-k3-nano", "max_tokens": 4, "temperature": 0, "stream": stream,
                    "messages": [{"role": "user", "content": "Name a river."}]}
            self.assertEqual(post_json(self.daemon, "/v1/chat/completions", body).status, 200)

        families = prometheus_text.parse(request(self.daemon, "GET", "/metrics").body)

        def sample(name, **labels):
            found = [v for n, l, v in families[name]["samples"] if n == name and l == labels]
            self.assertEqual(len(found), 1, (name, labels))
            return found[0]

        # The default policy's tiers and classes, with their targets.
        self.assertEqual(sample("kimi_slo_ttft_target_seconds", tier="le_4096"), 0.5)
        self.assertEqual(sample("kimi_slo_itl_target_seconds", **{"class": "chat"}), 0.05)
        self.assertEqual(sample("kimi_slo_itl_target_seconds", **{"class": "agentic"}), 0.1)
        # Three served requests, all short prompts: tier le_4096. Whether they met the target
        # depends on this machine, only the counts are certain.
        self.assertEqual(sample("kimi_slo_ttft_requests_total", tier="le_4096"), 3)
        self.assertLessEqual(sample("kimi_slo_ttft_met_total", tier="le_4096"), 3)
        self.assertEqual(sample("kimi_slo_ttft_requests_total", tier="le_32768"), 0)
        for cls in ("chat", "agentic"):
            gaps = sample("kimi_slo_itl_gaps_total", **{"class": cls})
            self.assertLessEqual(sample("kimi_slo_itl_met_total", **{"class": cls}), gaps)


if __name__ == "__main__":
    unittest.main()
