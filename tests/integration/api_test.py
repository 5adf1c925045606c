"""The OpenAI-compatible API of the real daemon serving a signed k3-nano model (random
weights, demo tokenizer): whole and streamed chat completions checked rule by rule on the
real frames, completions, the models endpoints, errors before a stream as JSON, a client
disconnect cancelling its generation, and a model that is absent or tampered with keeping the
daemon not ready. Run by CTest with KIMI_APPLIANCE_BIN, KIMICTL_BIN and KIMI_ENGINE_BIN set.
"""
import json
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prometheus_text  # noqa: E402
from daemon_harness import (Daemon, audit_rows, base_config, make_signed_model, post_json, read_chunk, read_head,  # noqa: E402
                            request, send_request, wait_until_ready)

MODEL_ID = "kimi-k3-nano"
REPLACEMENT = "\ufffd"


def model_config(model_dir, trust_store, **model):
    config = base_config()
    config["model"] = {"dir": model_dir, "trust_store": trust_store, "served_id": MODEL_ID, "threads": 2,
                       "stream_argument_chunk_bytes": 8, **model}
    return config


def chat_body(**extra):
    body = {"model": MODEL_ID, "messages": [{"role": "user", "content": "Name three rivers."}],
            "max_tokens": 12, "temperature": 0}
    body.update(extra)
    return body


def sse_frames(text):
    """The data payloads of an event stream, in order; [DONE] stays a string."""
    frames = []
    for block in text.split("\n\n"):
        if not block:
            continue
        assert block.startswith("data: "), block
        data = block[len("data: "):]
        frames.append(data if data == "[DONE]" else json.loads(data))
    return frames


def has_null(value):
    if value is None:
        return True
    if isinstance(value, dict):
        return any(has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(has_null(v) for v in value)
    return False


def assert_openai_error(test, reply, status):
    test.assertEqual(reply.status, status, reply.body)
    test.assertTrue(reply.headers.get("content-type", "").startswith("application/json"), reply.headers)
    error = reply.json()["error"]
    for key in ("message", "type", "param", "code"):
        test.assertIn(key, error)
    return error


def engine_ended(daemon, outcome):
    families = prometheus_text.parse(request(daemon, "GET", "/metrics").body)
    family = families.get("kimi_engine_requests_ended")
    if not family:
        return 0
    return sum(v for _, labels, v in family["samples"] if labels.get("outcome") == outcome)


class ServedModelCase(unittest.TestCase):
    """A daemon serving a signed k3-nano model, shared by the tests of a class."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kimi-api-it-")
        model, public_key, _ = make_signed_model(cls.tmp.name)
        cls.daemon = Daemon(config=model_config(model, public_key))
        state = wait_until_ready(cls.daemon)
        if not state or not state["ready"]:
            cls.daemon.close()
            raise RuntimeError("the model did not become ready: %r" % (state,))

    @classmethod
    def tearDownClass(cls):
        cls.daemon.close()
        cls.tmp.cleanup()


def prefix_cache_hits(daemon):
    families = prometheus_text.parse(request(daemon, "GET", "/metrics").body)
    return sum(v for _, labels, v in families["kimi_engine_prefix_cache"]["samples"]
               if labels.get("kind") == "hit_requests")


class ServedModelTest(ServedModelCase):
    def test_a_cached_prompt_prefix_is_reused_only_for_the_key_that_sent_it(self):
        # A hit answers sooner: shared across keys, the cache would tell one caller what another sent.
        created = post_json(self.daemon, "/admin/v1/keys", {"name": "prefix-other", "role": "user"})
        self.assertEqual(created.status, 201, created.body)
        other_key = created.json()["key"]
        body = chat_body(messages=[{"role": "system", "content": "Patient record 4471: " + "details " * 120},
                                   {"role": "user", "content": "Summarise."}], max_tokens=2)
        self.assertEqual(post_json(self.daemon, "/v1/chat/completions", body).status, 200)
        before = prefix_cache_hits(self.daemon)
        other = request(self.daemon, "POST", "/v1/chat/completions", {"Content-Type": "application/json"},
                        json.dumps(body).encode(), auth=other_key)
        self.assertEqual(other.status, 200, other.body)
        self.assertEqual(prefix_cache_hits(self.daemon), before)
        self.assertEqual(post_json(self.daemon, "/v1/chat/completions", body).status, 200)
        self.assertEqual(prefix_cache_hits(self.daemon), before + 1)

    def test_whole_chat_completion(self):
        reply = post_json(self.daemon, "/v1/chat/completions", chat_body())
        self.assertEqual(reply.status, 200, reply.body)
        body = reply.json()
        self.assertEqual(body["object"], "chat.completion")
        self.assertEqual(body["model"], MODEL_ID)
        self.assertIsInstance(body["created"], int)
        choice = body["choices"][0]
        self.assertEqual(choice["message"]["role"], "assistant")
        self.assertIn(choice["finish_reason"], ("stop", "length", "tool_calls"))
        usage = body["usage"]
        self.assertGreater(usage["prompt_tokens"], 0)
        self.assertGreaterEqual(usage["completion_tokens"], 1)
        self.assertLessEqual(usage["completion_tokens"], 12)
        self.assertEqual(usage["total_tokens"], usage["prompt_tokens"] + usage["completion_tokens"])
        self.assertNotIn(REPLACEMENT, reply.body)

    def test_a_developer_message_counts_as_the_system_message(self):
        # It was accepted and left out of the prompt: the instructions never reached the model.
        def prompt_tokens(messages):
            reply = post_json(self.daemon, "/v1/chat/completions", chat_body(messages=messages, max_tokens=1))
            self.assertEqual(reply.status, 200, reply.body)
            return reply.json()["usage"]["prompt_tokens"]
        user = {"role": "user", "content": "hi"}
        instructions = "You are a support bot for a bicycle shop. Answer in one sentence."
        alone = prompt_tokens([user])
        as_system = prompt_tokens([{"role": "system", "content": instructions}, user])
        self.assertGreater(as_system, alone)
        self.assertEqual(prompt_tokens([{"role": "developer", "content": instructions}, user]), as_system)

    def test_logit_bias_is_honoured(self):
        # It was accepted and ignored by the embedded engine: a client banning or forcing a
        # token got the unbiased answer.
        def content(max_tokens, bias=None):
            body = chat_body(max_tokens=max_tokens, temperature=0, thinking={"type": "disabled"})
            if bias is not None:
                body["logit_bias"] = bias
            reply = post_json(self.daemon, "/v1/chat/completions", body)
            self.assertEqual(reply.status, 200, reply.body)
            return reply.json()["choices"][0]["message"]["content"]
        forced = content(1, {"1000": 100})
        self.assertTrue(forced)
        self.assertEqual(content(4, {"1000": 100}), forced * 4)
        self.assertNotEqual(content(4), forced * 4)

    def test_ignored_fields_are_logged_once_and_top_k_is_accepted(self):
        reply = post_json(self.daemon, "/v1/chat/completions", chat_body(top_k=3, frobnicate=True, mood="calm"))
        self.assertEqual(reply.status, 200, reply.body)
        request_id = reply.headers["x-request-id"]

        def ignored(e):
            return e.get("msg") == "request fields ignored" and e.get("request_id") == request_id
        # The access log line comes after the handler's: once it is there, so is every line.
        self.assertIsNotNone(self.daemon.wait_for_event(
            lambda e: e.get("msg") == "request" and e.get("request_id") == request_id, timeout=30))
        lines = [e for e in self.daemon.events() if ignored(e)]
        self.assertEqual(len(lines), 1, lines)
        self.assertEqual(lines[0]["level"], "info")
        self.assertEqual(lines[0]["fields"], "frobnicate, mood")  # top_k is accepted, not ignored
        bad = post_json(self.daemon, "/v1/chat/completions", chat_body(top_k=1.5))
        self.assertEqual(bad.status, 400, bad.body)
        self.assertEqual(bad.json()["error"]["param"], "top_k")

    def test_streamed_chat_follows_every_rule(self):
        for thinking in ("enabled", "disabled"):
            with self.subTest(thinking=thinking):
                body = chat_body(stream=True, stream_options={"include_usage": True},
                                 thinking={"type": thinking}, max_tokens=24)
                reply = post_json(self.daemon, "/v1/chat/completions", body)
                self.assertEqual(reply.status, 200, reply.body)
                self.assertTrue(reply.headers["content-type"].startswith("text/event-stream"))
                self.assertNotIn(REPLACEMENT, reply.body)
                frames = sse_frames(reply.body)
                self.assertEqual(frames[-1], "[DONE]")
                frames = frames[:-1]
                self.assertGreaterEqual(len(frames), 3)
                identity = {k: frames[0][k] for k in ("id", "object", "created", "model")}
                self.assertEqual(identity["object"], "chat.completion.chunk")
                self.assertIsInstance(identity["created"], int)
                for i, frame in enumerate(frames):
                    self.assertFalse(has_null(frame), frame)
                    self.assertEqual({k: frame[k] for k in identity}, identity)
                # The usage frame, exactly one, last.
                usage_frames = [f for f in frames if "usage" in f]
                self.assertEqual(len(usage_frames), 1)
                self.assertIs(usage_frames[0], frames[-1])
                self.assertEqual(frames[-1]["choices"], [])
                end = frames[-2]["choices"][0]
                self.assertEqual(end["delta"], {})
                self.assertIn(end["finish_reason"], ("stop", "length", "tool_calls"))
                self.assertEqual(end["usage"], frames[-1]["usage"])
                self.assertEqual(frames[0]["choices"][0]["delta"], {"role": "assistant", "content": ""})
                middle = [f["choices"][0] for f in frames[1:-2]]
                saw_reasoning = saw_other = False
                boundary_at = None
                for j, choice in enumerate(middle):
                    self.assertNotIn("usage", choice)
                    self.assertNotIn("finish_reason", choice)
                    delta = choice["delta"]
                    self.assertNotIn("role", delta)
                    self.assertEqual(sum(k in delta for k in ("content", "reasoning_content", "tool_calls")), 1, delta)
                    if delta == {"reasoning_content": ""}:
                        boundary_at = j
                        continue
                    if "reasoning_content" in delta:
                        self.assertFalse(saw_other, "reasoning after the answer")
                        saw_reasoning = True
                    else:
                        saw_other = True
                        if thinking == "enabled" and saw_reasoning:
                            self.assertIsNotNone(boundary_at, "boundary frame before the answer")
                if thinking == "enabled" and saw_reasoning:
                    self.assertIsNotNone(boundary_at)
                    later = [c["delta"] for c in middle[boundary_at + 1:]]
                    self.assertFalse(any("reasoning_content" in d for d in later))
                if thinking == "disabled":
                    self.assertIsNone(boundary_at)
                    self.assertFalse(saw_reasoning)
                self.check_tool_call_frames(middle)

    def check_tool_call_frames(self, choices):
        opened = []
        for choice in choices:
            for call in choice["delta"].get("tool_calls", []):
                if "id" in call:
                    self.assertEqual(call["index"], len(opened))
                    self.assertEqual(call["type"], "function")
                    self.assertEqual(call["function"]["arguments"], "")
                    opened.append(call["index"])
                else:
                    self.assertEqual(set(call), {"index", "function"})
                    self.assertEqual(set(call["function"]), {"arguments"})
                    self.assertLessEqual(len(call["function"]["arguments"].encode()), 8)

    def test_streamed_and_whole_agree(self):
        body = chat_body(max_tokens=16, seed=5)
        whole = post_json(self.daemon, "/v1/chat/completions", body).json()["choices"][0]["message"]
        streamed = sse_frames(post_json(self.daemon, "/v1/chat/completions", dict(body, stream=True)).body)
        content = "".join(f["choices"][0]["delta"].get("content", "") for f in streamed[:-1] if f["choices"])
        reasoning = "".join(f["choices"][0]["delta"].get("reasoning_content", "") for f in streamed[:-1]
                            if f["choices"])
        self.assertEqual(whole["content"], content)
        self.assertEqual(whole.get("reasoning_content", ""), reasoning)

    def test_completions_whole_and_streamed(self):
        body = {"model": MODEL_ID, "prompt": "The river flows", "max_tokens": 6, "temperature": 0}
        whole = post_json(self.daemon, "/v1/completions", body)
        self.assertEqual(whole.status, 200, whole.body)
        self.assertEqual(whole.json()["object"], "text_completion")
        frames = sse_frames(post_json(self.daemon, "/v1/completions", dict(body, stream=True)).body)
        self.assertEqual(frames[-1], "[DONE]")
        text = "".join(f["choices"][0]["text"] for f in frames[:-1])
        self.assertEqual(text, whole.json()["choices"][0]["text"])
        self.assertEqual(frames[-2]["choices"][0]["finish_reason"], whole.json()["choices"][0]["finish_reason"])

    def test_models_endpoints(self):
        listed = request(self.daemon, "GET", "/v1/models")
        self.assertEqual(listed.status, 200)
        self.assertEqual([m["id"] for m in listed.json()["data"]], [MODEL_ID])
        one = request(self.daemon, "GET", "/v1/models/" + MODEL_ID)
        self.assertEqual(one.status, 200)
        self.assertEqual(one.json()["id"], MODEL_ID)
        assert_openai_error(self, request(self.daemon, "GET", "/v1/models/no-such-model"), 404)
        assert_openai_error(self, request(self.daemon, "GET", "/v1/models/org/no-such-model"), 404)

    def test_unknown_model_is_404(self):
        error = assert_openai_error(self, post_json(self.daemon, "/v1/chat/completions",
                                                    chat_body(model="gpt-nothing")), 404)
        self.assertIn("gpt-nothing", error["message"])

    def test_errors_before_streaming_are_json(self):
        for body in (chat_body(stream=True, temperature="hot"), {"model": MODEL_ID, "stream": True},
                     chat_body(stream=True, model="gpt-nothing"), chat_body(stream=True, max_tokens=0)):
            with self.subTest(body=body):
                reply = post_json(self.daemon, "/v1/chat/completions", body)
                self.assertIn(reply.status, (400, 404))
                assert_openai_error(self, reply, reply.status)
        reply = request(self.daemon, "POST", "/v1/chat/completions", {"Content-Type": "application/json"}, b"{nope")
        assert_openai_error(self, reply, 400)

    def test_disconnect_cancels_the_generation(self):
        before = engine_ended(self.daemon, "cancelled")
        body = json.dumps(chat_body(stream=True, max_tokens=3000)).encode()
        with self.daemon.connect() as s:
            send_request(s, "POST", "/v1/chat/completions",
                         {"Content-Type": "application/json", "Authorization": "Bearer " + self.daemon.api_key}, body)
            status, _, headers, rest = read_head(s)
            self.assertEqual(status, 200)
            self.assertEqual(headers.get("transfer-encoding"), "chunked")
            payload, rest = read_chunk(s, rest)  # the role frame: the stream is running
            self.assertIn(b'"role":"assistant"', payload)
        # The socket is closed; the daemon notices at its next write and cancels.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and engine_ended(self.daemon, "cancelled") == before:
            time.sleep(0.1)
        self.assertEqual(engine_ended(self.daemon, "cancelled"), before + 1)

    def test_engine_latency_histograms_on_metrics(self):
        reply = post_json(self.daemon, "/v1/chat/completions", chat_body(max_tokens=4))
        self.assertEqual(reply.status, 200, reply.body)
        families = prometheus_text.parse(request(self.daemon, "GET", "/metrics").body)  # checks buckets
        counts = {}
        for name in ("kimi_engine_time_to_first_token_seconds", "kimi_engine_inter_token_latency_seconds",
                     "kimi_engine_queue_time_seconds", "kimi_engine_e2e_request_latency_seconds"):
            family = families.get(name)
            self.assertIsNotNone(family, name)
            self.assertEqual(family["type"], "histogram")
            samples = {(n, labels.get("le")): v for n, labels, v in family["samples"]}
            self.assertIn((name + "_bucket", "+Inf"), samples)
            self.assertGreaterEqual(samples[(name + "_sum", None)], 0)
            counts[name] = samples[(name + "_count", None)]
        # Every request admitted got a first token; this one finished, so it is in the end-to-end count.
        self.assertGreaterEqual(counts["kimi_engine_queue_time_seconds"], 1)
        self.assertGreaterEqual(counts["kimi_engine_time_to_first_token_seconds"], 1)
        self.assertGreaterEqual(counts["kimi_engine_e2e_request_latency_seconds"], 1)
        self.assertEqual(families["kimi_engine_preemptions"]["type"], "gauge")
        self.assertGreaterEqual(families["kimi_engine_preemptions"]["samples"][0][2], 0)


SELF_REFERENCES = {
    "allOf": {"$defs": {"a": {"$ref": "#/$defs/a"}}, "allOf": [{"$ref": "#/$defs/a"}]},
    "oneOf": {"$defs": {"a": {"$ref": "#/$defs/a"}}, "oneOf": [{"$ref": "#/$defs/a"}]},
    "anyOf": {"$defs": {"a": {"$ref": "#/$defs/a"}}, "anyOf": [{"$ref": "#/$defs/a"}]},
}


def audit_records(data_dir, request_id):
    return audit_rows(data_dir, "client_request_id = ?", (request_id,))


class HostileRequestTest(ServedModelCase):
    """The requests of a penetration test that killed the daemon (a self-referencing schema
    overflowed the compiler's stack), pinned a thread (the oneOf form looped) or slowed every
    other stream (100,000 stop strings): each is now a 400 in OpenAI's shape naming the field,
    with an audit record, and the daemon serves on."""

    def send(self, request_id, body):
        return request(self.daemon, "POST", "/v1/chat/completions",
                       {"Content-Type": "application/json", "X-Request-Id": request_id}, json.dumps(body).encode())

    def cases(self):
        for name, schema in SELF_REFERENCES.items():
            yield ("schema-" + name, "response_format.json_schema.schema",
                   chat_body(response_format={"type": "json_schema", "json_schema": {"name": "s", "schema": schema}}))
            tool = {"type": "function", "function": {"name": "f", "strict": True, "parameters": schema}}
            yield ("tool-" + name, "tools[0].function.parameters",
                   chat_body(tools=[tool], tool_choice="required"))
            yield ("tool-stream-" + name, "tools[0].function.parameters",
                   chat_body(tools=[tool], tool_choice="required", stream=True))
        yield ("stop-100", "stop", chat_body(stop=["s%d" % i for i in range(100)]))
        yield ("stop-long", "stop", chat_body(stop="x" * 100000))
        yield ("logit-bias", "logit_bias", chat_body(logit_bias={"999999999": 1}))
        yield ("logit-bias-value", "logit_bias.5", chat_body(logit_bias={"5": 1000}))
        yield ("n", "n", chat_body(n=1000000))
        deep = {}
        for _ in range(150):
            deep = {"type": "array", "items": deep}
        yield ("schema-deep", "response_format.json_schema.schema",
               chat_body(response_format={"type": "json_schema", "json_schema": {"name": "s", "schema": deep}}))
        # Within the document limits, but 2^40 subschemas to compile: the engine's compile
        # budget refuses it, and its error names the field too.
        defs = {}
        for i in range(40):
            step = {"$ref": "#/$defs/d%d" % (i + 1), "type": "object"}
            defs["d%d" % i] = {"type": "object", "properties": {"a": step, "b": step}}
        defs["d40"] = {"type": "object"}
        yield ("schema-doubling", "response_format.json_schema.schema",
               chat_body(response_format={"type": "json_schema",
                                          "json_schema": {"name": "s", "schema": {"$defs": defs, "$ref": "#/$defs/d0"}}}))
        # Small and quick to compile, but each level's two branches accept the same "[...]",
        # so every "[" doubles the parses open at once: the matcher refuses it at its bound
        # within the first tokens (it took minutes and gigabytes, and stalled every stream).
        overlapping = {}
        for i in range(24):
            inner = {"$ref": "#/$defs/l%d" % (i + 1)} if i < 23 else {"type": "integer", "minimum": 0, "maximum": 0}
            overlapping["l%d" % i] = {"anyOf": [{"type": "array", "minItems": 1, "maxItems": 1, "items": inner},
                                                {"type": "array", "minItems": 1, "maxItems": 2, "items": inner}]}
        yield ("schema-ambiguous", "response_format.json_schema.schema",
               chat_body(max_tokens=64, thinking={"type": "disabled"},
                         response_format={"type": "json_schema", "json_schema": {
                             "name": "s", "schema": {"$defs": overlapping, "$ref": "#/$defs/l0"}}}))
        ambiguous_tool = {"type": "function", "function": {"name": "f", "strict": True, "parameters": {
            "type": "object", "properties": {"a": {"$ref": "#/$defs/l0"}}, "required": ["a"], "$defs": overlapping}}}
        yield ("tool-ambiguous", "tools[0].function.parameters",
               chat_body(max_tokens=64, thinking={"type": "disabled"}, tools=[ambiguous_tool], tool_choice="required"))
        yield ("schema-enum", "response_format.json_schema.schema",
               chat_body(response_format={"type": "json_schema",
                                          "json_schema": {"name": "s", "schema": {"enum": list(range(100000))}}}))

    def test_each_is_a_400_naming_the_field_and_the_daemon_serves_on(self):
        for request_id, param, body in self.cases():
            with self.subTest(request_id):
                reply = self.send("hostile-" + request_id, body)
                error = assert_openai_error(self, reply, 400)
                self.assertEqual(error["param"], param, error)
                self.assertEqual(error["type"], "invalid_request_error")
                self.assertIsNone(self.daemon.proc.poll(), "the daemon exited")
        for request_id, _, _ in self.cases():
            records = audit_records(self.daemon.data_dir, "hostile-" + request_id)
            self.assertEqual([(r["http_status"], r["outcome"]) for r in records], [(400, "invalid")], request_id)
        # Still serving, constrained output included: a recursive schema that writes text at
        # every turn (a tree) is accepted and honoured.
        tree = {"$defs": {"node": {"type": "object", "properties": {
                    "name": {"type": "string", "maxLength": 3},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
                    "required": ["name"], "additionalProperties": False}},
                "$ref": "#/$defs/node"}
        reply = post_json(self.daemon, "/v1/chat/completions",
                          chat_body(max_tokens=200, thinking={"type": "disabled"}, stop=["a", "b", "c", "d"],
                                    response_format={"type": "json_schema", "json_schema": {"name": "t", "schema": tree}}))
        self.assertEqual(reply.status, 200, reply.body)
        self.assertIsNone(self.daemon.proc.poll())


class RefusalTest(unittest.TestCase):
    def test_a_request_over_the_memory_budget_is_a_json_400(self):
        with tempfile.TemporaryDirectory(prefix="kimi-api-it-") as tmp:
            model, public_key, _ = make_signed_model(tmp)
            daemon = Daemon(config=model_config(model, public_key, memory_budget_bytes=1 << 20))
            try:
                self.assertTrue(wait_until_ready(daemon)["ready"])
                for stream in (False, True):
                    with self.subTest(stream=stream):
                        reply = post_json(daemon, "/v1/chat/completions", chat_body(stream=stream, max_tokens=4000))
                        error = assert_openai_error(self, reply, 400)
                        self.assertIn("memory budget", error["message"])
                self.assertEqual(post_json(daemon, "/v1/chat/completions", chat_body(max_tokens=4)).status, 200)
                self.assertGreaterEqual(engine_ended(daemon, "refused"), 2)
            finally:
                daemon.close()


class NotReadyTest(unittest.TestCase):
    def test_no_model_answers_503_with_the_reason(self):
        daemon = Daemon()
        try:
            error = assert_openai_error(self, post_json(daemon, "/v1/chat/completions", chat_body()), 503)
            self.assertIn("no model configured", error["message"])
            reply = post_json(daemon, "/v1/chat/completions", chat_body(stream=True))
            assert_openai_error(self, reply, 503)
            self.assertEqual(request(daemon, "GET", "/v1/models").json()["data"], [])
        finally:
            daemon.close()

    def test_tampered_model_is_not_loaded(self):
        with tempfile.TemporaryDirectory(prefix="kimi-api-it-") as tmp:
            model, public_key, _ = make_signed_model(tmp)
            shard = os.path.join(model, "model-00001-of-00006.safetensors")
            with open(shard, "r+b") as f:
                f.seek(os.path.getsize(shard) - 1)
                last = f.read(1)
                f.seek(-1, os.SEEK_CUR)
                f.write(bytes([last[0] ^ 0xFF]))
            daemon = Daemon(config=model_config(model, public_key))
            try:
                failed = daemon.wait_for_event(lambda e: e.get("msg") == "the model is not served")
                self.assertIsNotNone(failed, "a clear log line for the refusal")
                self.assertIn("verification failed", failed["error"])
                state = request(daemon, "GET", "/readyz")
                self.assertEqual(state.status, 503)
                model_state = state.json()["components"]["model"]
                self.assertFalse(model_state["ready"])
                self.assertIn("verification failed", model_state["detail"])
                self.assertFalse(any(e.get("msg") == "model verified and loaded" for e in daemon.events()))
                error = assert_openai_error(self, post_json(daemon, "/v1/chat/completions", chat_body()), 503)
                self.assertIn("verification failed", error["message"])
            finally:
                daemon.close()


if __name__ == "__main__":
    unittest.main()
