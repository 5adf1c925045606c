"""Conformance: logprobs. With `logprobs: true` and `top_logprobs: N`, every answer token comes
with its log-probability and the N most likely alternatives, in OpenAI's shape, whole and
streamed, through the embedded engine and an upstream worker alike; the legacy completions
endpoint answers its own shape. A json_schema answer makes the content certain with a random
model, so the tokens' bytes must spell it exactly; greedy decoding makes the chosen token the
most likely one.

  KIMI_APPLIANCE_BIN=build/appliance/kimi-appliance KIMI_ENGINE_BIN=build/engine/kimi-engine \\
  KIMICTL_BIN=build/appliance/kimictl python3 tests/conformance/logprobs_test.py -v
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import conformance_harness  # noqa: E402
from conformance_harness import COMPLETIONS_PATH, DaemonSuite  # noqa: E402
from daemon_harness import post_json  # noqa: E402

CAPITAL_FORMAT = {"type": "json_schema", "json_schema": {"name": "capital_answer", "strict": True, "schema": {
    "type": "object", "properties": {"capital": {"type": "string", "enum": ["Beijing", "Shanghai"]}},
    "required": ["capital"], "additionalProperties": False}}}
TOP = 3


def stream_frames(body):
    frames = []
    for line in body.split("\n"):  # not splitlines(): JSON text may hold U+2028
        if line.startswith("data: ") and line != "data: [DONE]":
            frames.append(json.loads(line[len("data: "):]))
    return frames


class LogprobsTest(DaemonSuite):
    def answer(self, **fields):
        return self.chat(messages=[{"role": "user", "content": "Is Beijing the capital of China? Answer in JSON."}],
                         response_format=CAPITAL_FORMAT, thinking={"type": "disabled"}, temperature=0,
                         logprobs=True, top_logprobs=TOP, max_tokens=400, **fields)

    def assertSpells(self, entries, content):
        spelled = b""
        for entry in entries:
            self.assertEqual(set(entry), {"token", "logprob", "bytes", "top_logprobs"}, entry)
            self.assertLessEqual(entry["logprob"], 0.0, entry)
            self.assertEqual(len(entry["top_logprobs"]), TOP, entry)
            alternatives = [a["logprob"] for a in entry["top_logprobs"]]
            self.assertEqual(alternatives, sorted(alternatives, reverse=True), entry)
            self.assertEqual(entry["top_logprobs"][0]["bytes"], entry["bytes"], "greedy picks the most likely")
            self.assertAlmostEqual(entry["top_logprobs"][0]["logprob"], entry["logprob"], places=5)
            spelled += bytes(entry["bytes"])
        self.assertEqual(spelled.decode("utf-8"), content)

    def test_whole_response_tokens_spell_the_content(self):
        body = self.assertAccepted(self.answer())
        choice = body["choices"][0]
        content = choice["message"]["content"]
        self.assertIn(json.loads(content)["capital"], ("Beijing", "Shanghai"))
        self.assertSpells(choice["logprobs"]["content"], content)

    def test_streamed_tokens_ride_on_their_content_frames(self):
        reply = self.answer(stream=True)
        self.assertAcceptedStream(reply)
        content, entries = "", []
        for frame in stream_frames(reply.body):
            if not frame["choices"]:
                continue
            choice = frame["choices"][0]
            if "logprobs" in choice:
                self.assertIn("content", choice["delta"], frame)
                entries += choice["logprobs"]["content"]
            content += choice["delta"].get("content", "")
        self.assertSpells(entries, content)

    def test_without_logprobs_there_are_none(self):
        body = self.assertAccepted(self.chat(max_tokens=8))
        self.assertNotIn("logprobs", body["choices"][0])

    def test_completions_answer_the_legacy_shape(self):
        reply = post_json(self.daemon, COMPLETIONS_PATH,
                          {"model": self.model, "prompt": "The capital of China is", "max_tokens": 6,
                           "temperature": 0, "logprobs": 2})
        self.assertPassedRules(reply)
        self.requireModel()
        self.assertEqual(reply.status, 200, reply.body)
        choice = reply.json()["choices"][0]
        logprobs = choice["logprobs"]
        self.assertEqual(set(logprobs), {"tokens", "token_logprobs", "top_logprobs", "text_offset"})
        n = len(logprobs["tokens"])
        self.assertEqual([len(logprobs[k]) for k in ("token_logprobs", "top_logprobs", "text_offset")], [n] * 3)
        self.assertTrue(all(len(top) <= 2 for top in logprobs["top_logprobs"]), logprobs)
        offsets = logprobs["text_offset"]
        self.assertEqual(offsets, sorted(offsets), logprobs)


if __name__ == "__main__":
    conformance_harness.main()
