"""Conformance: every request rule of docs/api.md ("Request rules") as a 400 or a 200 from the
real daemon, over raw HTTP. The values are those of Moonshot's vendor verifier (tests/params,
tests/k3_features), re-encoded here.

Run through CTest (tests/conformance/CMakeLists.txt), or by hand:
  KIMI_APPLIANCE_BIN=build/appliance/kimi-appliance python3 tests/conformance/request_rules_test.py -v
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import conformance_harness  # noqa: E402
from conformance_harness import COMPLETIONS_PATH, DaemonSuite  # noqa: E402
from daemon_harness import post_json  # noqa: E402

# The verifier's two ways to switch thinking: Moonshot's `thinking` object ("kimi") and vLLM's
# chat_template_kwargs ("opensource"); each on and off.
THINKING_MODES = {
    "kimi-thinking": {"thinking": {"type": "enabled"}},
    "kimi-non-thinking": {"thinking": {"type": "disabled"}},
    "opensource-thinking": {"chat_template_kwargs": {"thinking": True}},
    "opensource-non-thinking": {"chat_template_kwargs": {"thinking": False}},
}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def fn(name):
    return {"type": "function",
            "function": {"name": name, "description": "A tool.", "parameters": {"type": "object", "properties": {}}}}


def dynamic_system(tools, content=""):
    return {"role": "system", "content": content, "tools": tools}


def user(text="hello"):
    return {"role": "user", "content": text}


class SamplingRulesTest(DaemonSuite):
    """temperature in [0, 1]; top_p 0.95, penalties 0 and n 1 only (tests/params)."""

    def test_no_optional_params_is_accepted(self):
        for mode, extra in THINKING_MODES.items():
            with self.subTest(mode=mode):
                self.assertAccepted(self.chat(**extra))

    def test_allowed_values_are_accepted(self):
        allowed = [("temperature", 0.0), ("temperature", 0.6), ("temperature", 1.0), ("top_p", 0.95),
                   ("presence_penalty", 0), ("frequency_penalty", 0), ("n", 1)]
        for mode, extra in THINKING_MODES.items():
            for field, value in allowed:
                with self.subTest(mode=mode, field=field, value=value):
                    self.assertAccepted(self.chat(**extra, **{field: value}))

    def test_wrong_values_are_rejected_naming_the_field(self):
        wrong = [("temperature", 1.1), ("temperature", 2.0), ("temperature", -0.1), ("top_p", 0.8),
                 ("presence_penalty", 0.5), ("frequency_penalty", 0.5), ("n", 2)]
        for mode, extra in THINKING_MODES.items():
            for field, value in wrong:
                with self.subTest(mode=mode, field=field, value=value):
                    self.assertRejected(self.chat(**extra, **{field: value}), field)

    def test_temperature_message_states_the_bounds(self):
        self.assertRejected(self.chat(temperature=1.1), "temperature", "must be in [0, 1]")

    def test_param_names_the_field(self):
        error = self.assertRejected(self.chat(temperature=2.0), "temperature")
        self.assertEqual(error["param"], "temperature", "OpenAI's `param` should name the field")

    def test_wrong_types_are_rejected(self):
        for field, value in [("temperature", "0.5"), ("top_p", True), ("n", 1.5), ("max_tokens", "5"),
                             ("max_tokens", 0), ("seed", "x"), ("stop", 3), ("stream", "yes")]:
            with self.subTest(field=field, value=value):
                self.assertRejected(self.chat(**{field: value}), field)

    def test_stream_options_need_stream(self):
        self.assertRejected(self.chat(stream_options={"include_usage": True}), "stream_options")
        self.assertRejected(self.chat(stream=True, stream_options={"include_usage": "yes"}),
                            "stream_options.include_usage")
        self.assertAcceptedStream(self.chat(stream=True, stream_options={"include_usage": True}))

    def test_errors_before_streaming_are_json_not_event_stream(self):
        self.assertRejected(self.chat(stream=True, temperature=2.0), "temperature")

    def test_stop_and_seed_of_the_right_types_are_accepted(self):
        self.assertAccepted(self.chat(stop=["END", "STOP"], seed=7))
        self.assertAccepted(self.chat(stop="END", max_completion_tokens=3))


class ThinkingRulesTest(DaemonSuite):
    """thinking {type, keep, effort}, reasoning_effort, chat_template_kwargs (test_thinking_effort)."""

    def test_every_effort_level_is_accepted(self):
        for effort in ("low", "medium", "high", "max"):
            with self.subTest(effort=effort):
                self.assertAccepted(self.chat(thinking={"type": "enabled", "keep": "all", "effort": effort}))

    def test_omitted_type_and_effort_default(self):
        self.assertAccepted(self.chat(thinking={"keep": "all"}))
        self.assertAccepted(self.chat(thinking={"type": "enabled", "keep": "all"}))

    def test_reasoning_effort_is_accepted_alone_and_beside_effort(self):
        self.assertAccepted(self.chat(reasoning_effort="low"))
        self.assertAccepted(self.chat(thinking={"type": "enabled", "keep": "all", "effort": "low"},
                                      reasoning_effort="max"))

    def test_unknown_values_are_rejected(self):
        self.assertRejected(self.chat(thinking={"type": "enabled", "effort": "ultra"}), "thinking.effort")
        self.assertRejected(self.chat(thinking={"type": "on"}), "thinking.type")
        self.assertRejected(self.chat(reasoning_effort="extreme"), "reasoning_effort")
        self.assertRejected(self.chat(thinking="enabled"), "thinking")

    def test_keep_other_than_all_is_rejected_while_thinking(self):
        self.assertRejected(self.chat(thinking={"type": "enabled", "keep": "none", "effort": "high"}), "thinking.keep")

    def test_keep_is_ignored_when_disabled(self):
        self.assertAccepted(self.chat(thinking={"type": "disabled", "keep": "none", "effort": "high"}))

    def test_chat_template_kwargs_are_accepted_and_typed(self):
        self.assertAccepted(self.chat(chat_template_kwargs={"thinking": False, "thinking_effort": "low"}))
        self.assertRejected(self.chat(chat_template_kwargs={"thinking": "no"}), "chat_template_kwargs.thinking")
        self.assertRejected(self.chat(chat_template_kwargs=[]), "chat_template_kwargs")


class DynamicToolsTest(DaemonSuite):
    """Global and dynamic tools (test_dynamic_tools): every rejection, and the accepted forms."""

    def chat_with(self, messages, **fields):
        return self.chat(messages=messages, **fields)

    def test_dynamic_tools_are_accepted_in_system_messages(self):
        cases = {
            "first": [dynamic_system([WEATHER_TOOL]), user("what is the weather in beijing?")],
            "later": [{"role": "system", "content": "You are a helpful assistant."}, user("hi"),
                      {"role": "assistant", "content": "Hello!"}, dynamic_system([WEATHER_TOOL]),
                      user("what is the weather in beijing?")],
            "last": [user("what is the weather in beijing?"), dynamic_system([WEATHER_TOOL])],
            "three": [dynamic_system([fn("get_weather"), fn("get_time"), fn("get_news")]), user()],
            "two_messages": [dynamic_system([fn("get_weather")]), dynamic_system([fn("get_time")]), user()],
        }
        for name, messages in cases.items():
            with self.subTest(case=name):
                self.assertAccepted(self.chat_with(messages, tool_choice="required"))

    def test_dynamic_tool_with_strict_false_and_nested_schema(self):
        strict_false = json.loads(json.dumps(WEATHER_TOOL))
        strict_false["function"]["strict"] = False
        nested = {"type": "function", "function": {"name": "nested_tool", "description": "Nested.", "parameters": {
            "type": "object", "properties": {"location": {"type": "object", "properties": {
                "lat": {"type": "number"}, "lon": {"type": "number"}}}}}}}
        for tool in (strict_false, nested):
            with self.subTest(tool=tool["function"]["name"]):
                self.assertAccepted(self.chat_with([dynamic_system([tool]), user("use the tool")], tool_choice="required"))

    def test_global_and_dynamic_tools_coexist(self):
        self.assertAccepted(self.chat_with([dynamic_system([WEATHER_TOOL]), user("what is the weather in beijing?")],
                                           tools=[fn("get_stock_price")], tool_choice="required"))

    def test_tools_on_user_or_assistant_messages_are_rejected(self):
        self.assertRejected(self.chat_with([{"role": "user", "content": "hi", "tools": [WEATHER_TOOL]}, user()]),
                            "messages[0].tools")
        self.assertRejected(self.chat_with([user("hi"), {"role": "assistant", "content": "hello", "tools": [WEATHER_TOOL]},
                                            user()]), "messages[1].tools")

    def test_non_empty_system_content_with_tools_is_rejected(self):
        self.assertRejected(self.chat_with([dynamic_system([WEATHER_TOOL], "not empty"), user()]), "messages[0].content")

    def test_missing_type_function_or_name_is_rejected(self):
        no_type = fn("good_tool")
        del no_type["type"]
        no_function = fn("good_tool")
        del no_function["function"]
        no_name = fn("good_tool")
        del no_name["function"]["name"]
        for tool, field in ((no_type, "messages[0].tools[0].type"), (no_function, "messages[0].tools[0].function"),
                            (no_name, "messages[0].tools[0].function.name")):
            with self.subTest(field=field):
                self.assertRejected(self.chat_with([dynamic_system([tool]), user()]), field)

    def test_bad_names_are_rejected(self):
        for name in ("1bad_name", "bad@name", "", "a" * 257):
            with self.subTest(name=name[:20]):
                self.assertRejected(self.chat_with([dynamic_system([fn(name)]), user()]),
                                    "messages[0].tools[0].function.name")
        self.assertRejected(self.chat(tools=[fn("1bad_name")]), "tools[0].function.name")

    def test_unsupported_type_is_rejected_alone_and_mixed(self):
        bogus = {"type": "bogus", "function": {"name": "x"}}
        self.assertRejected(self.chat_with([dynamic_system([bogus]), user()]), "messages[0].tools[0].type")
        self.assertRejected(self.chat_with([dynamic_system([fn("good_tool"), bogus]), user()]), "messages[0].tools[1].type")

    def test_tools_not_an_array_or_holding_null_are_rejected(self):
        self.assertRejected(self.chat_with([dynamic_system({"type": "function"}), user()]), "messages[0].tools")
        self.assertRejected(self.chat_with([dynamic_system([None]), user()]), "messages[0].tools[0]")
        self.assertRejected(self.chat(tools={"type": "function"}), "tools")

    def test_duplicate_names_are_rejected(self):
        self.assertRejected(self.chat_with([dynamic_system([fn("dup"), fn("dup")]), user()]),
                            "messages[0].tools[1].function.name")
        self.assertRejected(self.chat_with([dynamic_system([fn("dup")]), dynamic_system([fn("dup")]), user()]),
                            "messages[1].tools[0].function.name")
        self.assertRejected(self.chat_with([dynamic_system([fn("dup")]), user()], tools=[fn("dup")]),
                            "messages[0].tools[0].function.name")

    def test_tool_message_without_tool_call_id_is_rejected(self):
        self.assertRejected(self.chat_with([{"role": "tool", "content": "some tool result"}, user()]),
                            "messages[0].tool_call_id")


class ToolChoiceTest(DaemonSuite):
    """tool_choice auto / none / required (test_tool_choice)."""

    def test_required_without_tools_is_rejected(self):
        self.assertRejected(self.chat(tool_choice="required"), "tool_choice")
        self.assertRejected(self.chat(tools=[], tool_choice="required"), "tool_choice")

    def test_other_values_are_rejected(self):
        self.assertRejected(self.chat(tools=[WEATHER_TOOL], tool_choice="bogus"), "tool_choice")
        self.assertRejected(self.chat(tools=[WEATHER_TOOL],
                                      tool_choice={"type": "function", "function": {"name": "get_weather"}}),
                            "tool_choice")

    def test_none_and_auto_without_tools_answer_without_tool_calls(self):
        for choice in ("none", "auto"):
            with self.subTest(tool_choice=choice):
                body = self.assertAccepted(self.chat(tool_choice=choice))
                message = body["choices"][0]["message"]
                self.assertFalse(message.get("tool_calls"), message)
                # A random-weight model may run out of tokens; it must not claim a tool call.
                self.assertIn(body["choices"][0]["finish_reason"], ("stop", "length"))

    def test_none_with_tools_answers_without_tool_calls(self):
        body = self.assertAccepted(self.chat(tools=[WEATHER_TOOL], tool_choice="none"))
        self.assertFalse(body["choices"][0]["message"].get("tool_calls"))


class ResponseFormatTest(DaemonSuite):
    """response_format text / json_object / json_schema."""

    def test_text_and_json_object_are_accepted(self):
        self.assertAccepted(self.chat(response_format={"type": "text"}))
        self.assertAccepted(self.chat(response_format={"type": "json_object"}))

    def test_json_schema_needs_name_and_schema_and_a_boolean_strict(self):
        self.assertRejected(self.chat(response_format={"type": "json_schema", "json_schema": {"schema": {}}}),
                            "response_format.json_schema.name")
        self.assertRejected(self.chat(response_format={"type": "json_schema", "json_schema": {"name": "a"}}),
                            "response_format.json_schema.schema")
        self.assertRejected(self.chat(response_format={"type": "json_schema",
                                                       "json_schema": {"name": "a", "schema": {}, "strict": "yes"}}),
                            "response_format.json_schema.strict")
        self.assertRejected(self.chat(response_format={"type": "json_schema"}), "response_format.json_schema")
        self.assertRejected(self.chat(response_format={"type": "yaml"}), "response_format.type")


class MessageShapeTest(DaemonSuite):
    def test_messages_are_required_and_non_empty(self):
        body = self.chat_body()
        del body["messages"]
        self.assertRejected(self.chat_raw(body), "messages")
        self.assertRejected(self.chat(messages=[]), "messages")
        self.assertRejected(self.chat(messages=[{"role": "robot", "content": "hi"}]), "messages[0].role")
        self.assertRejected(self.chat(messages=[{"role": "user", "content": 5}]), "messages[0].content")

    def test_model_is_required(self):
        body = self.chat_body()
        del body["model"]
        self.assertRejected(self.chat_raw(body), "model")


class PerModelRulesTest(DaemonSuite):
    """The `request_rules` configuration section: an operator's bounds for the served model
    replace K3's, key by key; keys left out keep K3's values."""

    extra_config = {"request_rules": [{"model": conformance_harness.DEFAULT_MODEL,
                                       "rules": {"temperature": [0, 0.8], "top_p": None}}]}

    def test_configured_bounds_replace_k3s(self):
        self.assertPassedRules(self.chat(temperature=0.8))
        self.assertPassedRules(self.chat(top_p=0.5))
        self.assertRejected(self.chat(temperature=0.9), "temperature", "[0, 0.8]")

    def test_keys_left_out_keep_k3s_values(self):
        self.assertRejected(self.chat(presence_penalty=0.5), "presence_penalty")
        self.assertRejected(self.chat(n=2), "n")


class CompletionsRulesTest(DaemonSuite):
    def completion(self, **fields):
        body = {"model": self.model, "prompt": "Once upon a time", "max_tokens": 4}
        body.update(fields)
        return post_json(self.daemon, COMPLETIONS_PATH, body)

    def test_sampling_bounds_apply(self):
        for field, value in [("temperature", 2.0), ("top_p", 0.8), ("presence_penalty", 0.5), ("n", 2)]:
            with self.subTest(field=field):
                self.assertRejected(self.completion(**{field: value}), field)

    def test_prompt_is_required(self):
        self.assertRejected(self.completion(prompt=None), "prompt")

    def test_valid_completion_is_accepted(self):
        reply = self.completion(temperature=0.6)
        self.assertPassedRules(reply)
        self.requireModel()
        self.assertEqual(reply.status, 200, reply.body)
        self.assertEqual(reply.json()["object"], "text_completion")


if __name__ == "__main__":
    conformance_harness.main()
