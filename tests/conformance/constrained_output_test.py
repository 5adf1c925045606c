"""Conformance: what the rules promise about the answer itself, which only constrained
decoding can keep with a random-weight model: tool_choice "required" ends in a call of a
declared tool whose arguments are JSON, and a json_schema answer is compact JSON that
validates. The schemas have bounded instances (enums) so that a constrained random model
finishes well inside max_tokens.

  KIMI_APPLIANCE_BIN=build/appliance/kimi-appliance KIMI_ENGINE_BIN=build/engine/kimi-engine \\
  KIMICTL_BIN=build/appliance/kimictl python3 tests/conformance/constrained_output_test.py -v
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import conformance_harness  # noqa: E402
from conformance_harness import DaemonSuite  # noqa: E402

CITY_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "enum": ["Beijing", "Paris"]}},
                   "required": ["city"], "additionalProperties": False}}}
CAPITAL_FORMAT = {"type": "json_schema", "json_schema": {"name": "capital_answer", "strict": True, "schema": {
    "type": "object", "properties": {"capital": {"type": "string", "enum": ["Beijing", "Shanghai"]}},
    "required": ["capital"], "additionalProperties": False}}}
# Room for the K3 tool-call markup, which the demo tokenizer spells in many small tokens.
ANSWER_TOKENS = 160


class ConstrainedOutputTest(DaemonSuite):
    def assertCalledCity(self, body):
        choice = body["choices"][0]
        self.assertEqual(choice["finish_reason"], "tool_calls", choice)
        call = choice["message"]["tool_calls"][0]
        self.assertEqual(call["type"], "function")
        self.assertEqual(call["function"]["name"], "get_weather", choice)
        self.assertIn(json.loads(call["function"]["arguments"])["city"], ("Beijing", "Paris"))

    def test_required_with_global_tools_forces_a_call(self):
        self.assertCalledCity(self.assertAccepted(self.chat(
            messages=[{"role": "user", "content": "What is the weather in Beijing?"}],
            tools=[CITY_TOOL], tool_choice="required", max_tokens=ANSWER_TOKENS)))

    def test_required_with_dynamic_tools_forces_a_call(self):
        self.assertCalledCity(self.assertAccepted(self.chat(
            messages=[{"role": "system", "content": "", "tools": [CITY_TOOL]},
                      {"role": "user", "content": "What is the weather in Beijing?"}],
            tool_choice="required", max_tokens=ANSWER_TOKENS)))

    def test_json_schema_answer_is_compact_valid_json(self):
        for thinking in ({"type": "disabled"}, {"type": "enabled"}):
            with self.subTest(thinking=thinking["type"]):
                body = self.assertAccepted(self.chat(
                    messages=[{"role": "user", "content": "Is Beijing the capital of China? Answer in JSON."}],
                    response_format=CAPITAL_FORMAT, thinking=thinking, max_tokens=ANSWER_TOKENS * 4))
                choice = body["choices"][0]
                content = choice["message"]["content"] or ""
                self.assertNotIn("\n", content)
                self.assertNotIn("\t", content)
                self.assertEqual(choice["finish_reason"], "stop", choice)
                self.assertIn(json.loads(content)["capital"], ("Beijing", "Shanghai"))


if __name__ == "__main__":
    conformance_harness.main()
