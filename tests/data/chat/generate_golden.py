#!/usr/bin/env python3
"""Regenerates the golden data of engine/chat from a K3 chat template.

Usage: generate_golden.py TEMPLATE_PATH OUT_DIR

The template itself is not part of the project: pass the path of a local copy of
Kimi-K3.jinja. The script renders every case below in the same Jinja environment that
Hugging Face transformers builds for chat templates (sandboxed, trim_blocks, lstrip_blocks,
loop controls, a json.dumps-based tojson, raise_exception, strftime_now), and writes:
  OUT_DIR/golden/NN_name.json   {"name", "request", "expected"} or {"name", "request", "error", "error_field"}
  OUT_DIR/outputs/NN_name.json  {"name", "thinking", "output", "reasoning", "content", "tool_calls"}
The request-to-template mapping below mirrors engine/chat/chat_request.cc.
"""
import datetime
import json
import os
import sys

from jinja2.exceptions import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def make_env():
    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.datetime.now().strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def tool_call_arguments(arguments):
    """(mapping, raw JSON block or None) for a tool call's `arguments`, as Kimi's tokenizer
    prepares messages before the template runs: a JSON object text becomes a mapping, text
    that is not JSON is kept raw for the template's `json` block."""
    if arguments is None:
        return {}, None
    if isinstance(arguments, dict):
        return arguments, None
    if not isinstance(arguments, str):
        raise TypeError("tool call arguments must be a mapping or a JSON object text")
    if not arguments.strip():
        return {}, None
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError:
        return {}, arguments
    if not isinstance(value, dict):
        raise ValueError("tool call arguments text must hold a JSON object")
    return value, None


def prepared_messages(messages):
    """Messages with every tool call's arguments prepared by tool_call_arguments(); the
    `_xtml_json_block` field is only ever derived here, never taken from the request. A
    `developer` message (OpenAI's system role for newer models, which the template does not
    know) becomes a `system` message, as chat_format.cc writes it."""
    out = []
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "developer":
            message = dict(message, role="system")
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if not calls or not isinstance(calls, list):
            out.append(message)
            continue
        prepared = []
        for call in calls:
            if not isinstance(call, dict):
                prepared.append(call)
                continue
            call = dict(call)
            nested = isinstance(call.get("function"), dict)
            fn = dict(call["function"]) if nested else call
            fn["arguments"], block = tool_call_arguments(fn.get("arguments"))
            fn.pop("_xtml_json_block", None)
            if block is not None:
                fn["_xtml_json_block"] = block
            if nested:
                call["function"] = fn
            prepared.append(call)
        out.append(dict(message, tool_calls=prepared))
    return out


def template_vars(req):
    """The request body's fields as template variables (see chat_request.cc)."""
    kwargs = req.get("chat_template_kwargs") or {}
    out = {"messages": prepared_messages(req["messages"])}
    if req.get("tools") is not None:
        out["tools"] = req["tools"]
    for key in ("tool_choice", "response_format"):
        if key in req:
            out[key] = req[key]
    out["add_generation_prompt"] = req.get("add_generation_prompt", True)
    if "thinking" in kwargs:
        out["thinking"] = kwargs["thinking"]
    elif "thinking" in req:
        t = req["thinking"]
        out["thinking"] = (t.get("type") != "disabled") if isinstance(t, dict) else t
    for source, key in ((kwargs, "thinking_effort"), (req, "thinking_effort"), (req, "reasoning_effort")):
        if key in source:
            out["thinking_effort"] = source[key]
            break
    preserve = kwargs.get("preserve_thinking", req.get("preserve_thinking", True))
    if not preserve:
        msgs = [dict(m) if isinstance(m, dict) else m for m in out["messages"]]
        last_user = max([i for i, m in enumerate(msgs) if isinstance(m, dict) and m.get("role") == "user"],
                        default=-1)
        for i, m in enumerate(msgs):
            if i < last_user and isinstance(m, dict) and m.get("role") == "assistant":
                m.pop("reasoning_content", None)
                m.pop("reasoning", None)
        out["messages"] = msgs
    return out


U = lambda c: {"role": "user", "content": c}
S = lambda c: {"role": "system", "content": c}
VERIFIER_Q = "请用 JSON 格式回答：北京是中国的首都吗？答案需要包含键 capital。"
CAPITAL_SCHEMA = {"type": "object", "properties": {"capital": {"type": "boolean"}},
                  "required": ["capital"], "additionalProperties": False}
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. 東京"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]}}}
SEARCH_TOOL = {"type": "function", "function": {
    "name": "search", "description": "Search the \"web\" & return <snippets>.\nLine two\ttabbed.",
    "parameters": {"type": "object", "properties": {
        "query": {"type": "string"}, "Limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "after": {"type": ["string", "null"], "format": "date"}}, "required": ["query"]}}}


def call(cid, name, args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


CASES = [
    ("verifier_plain_no_thinking", {"messages": [U(VERIFIER_Q)], "thinking": {"type": "disabled"}}),
    ("verifier_json_schema_no_thinking", {"messages": [U(VERIFIER_Q)], "thinking": {"type": "disabled"},
        "response_format": {"type": "json_schema", "json_schema": {"name": "capital_answer", "schema": CAPITAL_SCHEMA}}}),
    ("user_default_thinking", {"messages": [U("Hello!")]}),
    ("effort_low", {"messages": [U("Hi")], "thinking_effort": "low"}),
    ("effort_medium_kwargs", {"messages": [U("Hi")], "chat_template_kwargs": {"thinking": True, "thinking_effort": "medium"}}),
    ("effort_high_reasoning_effort", {"messages": [U("Hi")], "reasoning_effort": "high"}),
    ("effort_null", {"messages": [U("Hi")], "thinking_effort": None}),
    ("thinking_off_bad_effort_ignored", {"messages": [U("Hi")], "thinking": False, "thinking_effort": "ultra"}),
    ("system_and_user", {"messages": [S("You are terse."), U("Why is the sky blue?")]}),
    ("names_escaped", {"messages": [{"role": "system", "content": "sys", "name": "ops & \"core\""},
                                     {"role": "user", "content": "q", "name": "al<ice>"},
                                     {"role": "assistant", "content": "a", "name": "bot"},
                                     {"role": "user", "content": "again", "name": ""}]}),
    ("multi_turn_reasoning_kept", {"messages": [U("2+2?"), {"role": "assistant", "content": "4", "reasoning_content": "Add two and two."},
                                                U("times 3?")]}),
    ("multi_turn_thinking_off", {"messages": [U("2+2?"), {"role": "assistant", "content": "4", "reasoning_content": "Add."},
                                              U("times 3?")], "thinking": {"type": "disabled"}}),
    ("preserve_thinking_false", {"messages": [U("2+2?"), {"role": "assistant", "content": "4", "reasoning_content": "Add."},
                                              U("weather?"),
                                              {"role": "assistant", "content": None, "reasoning_content": "Need a tool.",
                                               "tool_calls": [call("c1", "get_weather", "{\"city\": \"Oslo\"}")]},
                                              {"role": "tool", "tool_call_id": "c1", "content": "-3C"}],
                                 "tools": [WEATHER_TOOL], "chat_template_kwargs": {"preserve_thinking": False}}),
    ("reasoning_field_alias", {"messages": [U("a"), {"role": "assistant", "content": "b", "reasoning": "via reasoning"}, U("c")]}),
    ("reasoning_empty_falls_through", {"messages": [U("a"), {"role": "assistant", "content": "b", "reasoning_content": "", "reasoning": "fallback"}, U("c")]}),
    ("reasoning_whitespace_only", {"messages": [U("a"), {"role": "assistant", "content": "b", "reasoning_content": " \n\t\u3000"}, U("c")]}),
    ("reasoning_padded_kept_verbatim", {"messages": [U("a"), {"role": "assistant", "content": " b ", "reasoning_content": "\n think \n"}, U("c")]}),
    ("tool_call_string_args_resolved", {"messages": [U("Weather in Paris?"),
        {"role": "assistant", "content": None, "tool_calls": [call("call_1", "get_weather", "{\"city\": \"Paris\", \"unit\": \"celsius\"}")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 18}"}], "tools": [WEATHER_TOOL]}),
    ("tool_call_mapping_args_all_types", {"messages": [U("go"),
        {"role": "assistant", "content": "Calling.", "reasoning_content": "plan",
         "tool_calls": [call("x", "do_it", {"s": "naïve \"q\" 東京\n", "i": 42, "f": 2.5, "b": True, "n": None,
                                             "o": {"z": 1, "a": [1, "二"]}, "l": [True, None, 1e-7], "e": "", "big": 12345678901234567890})]},
        {"role": "tool", "tool_call_id": "x", "content": "ok"}]}),
    ("parallel_calls_results_reordered", {"messages": [U("both"),
        {"role": "assistant", "content": "", "tool_calls": [call("a1", "get_weather", {"city": "Rome"}), call("a2", "search", {"query": "rome news"})]},
        {"role": "tool", "tool_call_id": "a2", "content": "news..."},
        {"role": "tool", "tool_call_id": "a1", "content": "sunny"},
        U("thanks")], "tools": [WEATHER_TOOL, SEARCH_TOOL]}),
    ("tool_results_unresolved_by_order", {"messages": [U("both"),
        {"role": "assistant", "tool_calls": [call("a1", "get_weather", {"city": "Rome"}), call("a2", "search", {"query": "q"})]},
        {"role": "tool", "content": "sunny"},
        {"role": "tool", "content": "results"}]}),
    ("tool_results_named", {"messages": [U("x"),
        {"role": "assistant", "tool_calls": [call("a1", "get_weather", {"city": "Rome"}), call("a2", "f2", {}), call("a3", "f3", {})]},
        {"role": "tool", "tool_call_id": "zzz", "name": "custom_name", "content": "r1"},
        {"role": "tool", "tool": "other", "name": "ignored", "content": "r2"},
        {"role": "tool", "tool": None, "content": "r3"}]}),
    ("tool_results_partially_resolved", {"messages": [U("x"),
        {"role": "assistant", "tool_calls": [call("a1", "f1", {}), call("a2", "f2", {})]},
        {"role": "tool", "tool_call_id": "a2", "content": "two"},
        {"role": "tool", "id": "nope", "content": "one?"}]}),
    ("tool_result_id_field_and_numeric_ids", {"messages": [U("x"),
        {"role": "assistant", "tool_calls": [{"id": 7, "function": {"name": "f7", "arguments": {}}}, {"id": "8", "function": {"name": "f8"}}]},
        {"role": "tool", "id": 8, "content": "eight"},
        {"role": "tool", "tool_call_id": "7", "content": "seven"}]}),
    ("flat_tool_call_and_empty_args", {"messages": [U("x"),
        {"role": "assistant", "content": "c", "tool_calls": [{"id": "f", "name": "flat", "arguments": {"k": "v"}},
                                                             call("g", "empty_str", ""), call("h", "spaces", "   "),
                                                             {"id": "i", "function": {"name": "missing_args"}},
                                                             call("j", "null_args", None)]}]}),
    ("request_json_block_field_ignored", {"messages": [U("x"),
        {"role": "assistant", "tool_calls": [{"id": "q", "function": {"name": "raw", "arguments": {"ignored": 1}, "_xtml_json_block": "{\"a\": [1, 2]}"}}]}]}),
    ("global_tools_sorted", {"messages": [U("hi")], "tools": [WEATHER_TOOL, SEARCH_TOOL]}),
    ("dictsort_case_insensitive", {"messages": [U("hi")], "tools": [{"type": "function", "function": {
        "name": "k", "parameters": {"b": 1, "A": 2, "a": 3, "B": 4, "_u": 5, "Z": 6, "ä": 7, "Ä": 8, "10": 9, "9": 10}}}]}),
    ("dynamic_tools_system_message", {"messages": [S("You help."), {"role": "system", "content": "", "tools": [SEARCH_TOOL]}, U("find x")],
                                      "tools": [WEATHER_TOOL]}),
    ("dynamic_tools_mid_conversation", {"messages": [U("a"), {"role": "assistant", "content": "b"},
                                                     {"role": "system", "content": "ignored text", "tools": [WEATHER_TOOL]}, U("c")]}),
    ("system_empty_tools_list_is_plain", {"messages": [{"role": "system", "content": "plain", "tools": []}, U("c")]}),
    ("tool_choice_required", {"messages": [U("w")], "tools": [WEATHER_TOOL], "tool_choice": "required"}),
    ("tool_choice_none", {"messages": [U("w")], "tools": [WEATHER_TOOL], "tool_choice": "none"}),
    ("tool_choice_auto", {"messages": [U("w")], "tools": [WEATHER_TOOL], "tool_choice": "auto"}),
    ("tool_choice_object", {"messages": [U("w")], "tools": [WEATHER_TOOL],
                            "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}),
    ("response_format_json_object", {"messages": [U("json please")], "response_format": {"type": "json_object"}}),
    ("response_format_json_schema_nested", {"messages": [U("person")], "response_format": {"type": "json_schema", "json_schema": {
        "name": "person", "strict": True, "schema": {"type": "object", "$defs": {"Addr": {"type": "object", "properties": {
            "street": {"type": "string", "pattern": "^[A-Z].*\\d$"}, "zip": {"type": "string", "description": "tab\there \"quoted\" back\\slash \u0001 ctl"}},
            "required": ["street"]}},
            "properties": {"name": {"type": "string", "minLength": 1}, "age": {"type": "integer", "minimum": 0, "maximum": 150},
                           "score": {"type": "number", "multipleOf": 0.01, "exclusiveMaximum": 1e16, "default": -0.0},
                           "tags": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/Addr"}]}},
                           "Émoji": {"const": "😀"}},
            "required": ["name", "age"], "additionalProperties": False}}}}),
    ("response_format_schema_wrapper_is_schema", {"messages": [U("x")], "response_format": {"type": "json_schema", "json_schema": {"type": "object", "title": "T"}}}),
    ("response_format_nested_json_schema_key", {"messages": [U("x")], "response_format": {"type": "json_schema", "json_schema": {"name": "n", "json_schema": {"type": "string"}}}}),
    ("response_format_json_schema_missing", {"messages": [U("x")], "response_format": {"type": "json_schema"}}),
    ("response_format_text", {"messages": [U("x")], "response_format": {"type": "text"}}),
    ("response_format_plain_string", {"messages": [U("x")], "response_format": "json_object"}),
    ("no_generation_prompt", {"messages": [U("x"), {"role": "assistant", "content": "y", "reasoning_content": "r"}], "add_generation_prompt": False}),
    ("no_generation_prompt_thinking_off", {"messages": [U("x")], "add_generation_prompt": False, "thinking": False}),
    ("content_parts", {"messages": [{"role": "user", "content": [{"type": "text", "text": "Look: "},
                                                                 {"type": "image_url", "image_url": {"url": "data:,"}},
                                                                 {"type": "text", "text": " and "}, {"type": "image"},
                                                                 {"type": "input_audio"}, "bare string part", {"type": "text", "text": 5}]},
                                    {"role": "assistant", "content": [{"type": "text", "text": "Seen."}]}]}),
    ("empty_and_null_content", {"messages": [S(""), U(""), {"role": "assistant", "content": None}, {"role": "user"}]}),
    ("unicode_content", {"messages": [U("Zürich 東京 😀👩‍👩‍👧 e\u0301 \u05e9\u05dc\u05d5\u05dd \u0000\u001f\u007f \u2028 tab\t end"),
                                      {"role": "assistant", "content": "Ответ: ✓", "reasoning_content": "think 🤔"}, U("ok")]}),
    ("skipped_non_mapping_and_unknown_role", {"messages": ["just a string", {"role": "critic", "content": "dev"}, 42, U("after")]}),
    ("tool_run_without_assistant", {"messages": [U("x"), {"role": "tool", "name": "t1", "content": "r"}, {"role": "tool", "tool_call_id": "a", "name": "t2", "content": "r2"}]}),
    ("tool_index_across_runs", {"messages": [U("x"),
        {"role": "assistant", "tool_calls": [call("a", "f", {}), call("b", "g", {})]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        U("interrupt"),
        {"role": "tool", "content": "2"},
        {"role": "assistant", "tool_calls": [call("c", "h", {})]},
        {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "3"}]}]}),
    ("attr_escaping_tool_names_and_keys", {"messages": [U("x"),
        {"role": "assistant", "tool_calls": [call("a", "we&ird\"name", {"k\"ey&": "v<>", "sp ace": "x"})]},
        {"role": "tool", "tool_call_id": "a", "content": "r"}]}),
    ("non_string_scalars_stringified", {"messages": [{"role": "user", "content": "x", "name": 12},
        {"role": "assistant", "tool_calls": [call("a", 3.5, {})], "reasoning_content": 17, "content": "y"},
        {"role": "tool", "tool": True, "content": "r"}, U("z")]}),
    ("numbers_in_schema", {"messages": [U("x")], "response_format": {"type": "json_schema", "json_schema": {"schema": {
        "a": 1.0, "b": 0.1, "c": 1e16, "d": 1e15, "e": 1.5e-5, "f": 0.0001, "g": -12, "h": 123456789012345678.0, "i": 1e300, "j": 2.5e-300,
        "k": [0, -0.5, 100.0]}}}}),
    ("everything_together", {"messages": [S("Be careful."), {"role": "system", "content": "", "tools": [SEARCH_TOOL]},
        U("plan a trip"), {"role": "assistant", "content": "Checking.", "reasoning_content": "Need weather and news.",
                           "tool_calls": [call("w", "get_weather", {"city": "Kyoto", "unit": "celsius"}), call("s", "search", "{\"query\": \"Kyoto events\"}")]},
        {"role": "tool", "tool_call_id": "s", "content": "festival"}, {"role": "tool", "tool_call_id": "w", "content": "22C"}],
        "tools": [WEATHER_TOOL], "tool_choice": "required", "response_format": {"type": "json_object"}, "thinking_effort": "high"}),
    ("python_repr_of_containers", {"messages": [{"role": "user", "content": [{"type": "text", "text": {"k": ["it's", "\u200b\u00e9\u00a0", 1.5, None, True]}}],
                                                  "name": {"a": [1, "x\ny"], "q": "say \"hi\" it's"}},
        {"role": "assistant", "tool_calls": [call("a", "f", {})], "content": [{"type": "text", "text": None}]},
        {"role": "tool", "tool": ["list", "name"], "content": "r"}]}),
    ("dictsort_unicode_keys", {"messages": [U("x")], "response_format": {"type": "json_schema", "json_schema": {"schema": {
        "\u0130x": 1, "ix": 2, "\u03a3": 3, "\u03c3": 4, "\u03c2": 5, "\u00df": 6, "SS": 7, "\ufb00": 8, "\U0001F600": 9, "\uff21": 10, "a": 11}}}}),
    ("reasoning_trim_python_whitespace", {"messages": [U("a"), {"role": "assistant", "content": "b", "reasoning_content": "\x1c\x85\u2029"},
                                                       U("c"), {"role": "assistant", "content": "d", "reasoning_content": "\u200b"}, U("e")]}),
    ("reasoning_zero_falls_through", {"messages": [U("a"), {"role": "assistant", "content": "b", "reasoning_content": 0, "reasoning": 0}, U("c")]}),
    ("duplicate_call_ids", {"messages": [U("x"),
        {"role": "assistant", "tool_calls": [call("d", "f", {}), call("d", "g", {}), call("e", "h", {})]},
        {"role": "tool", "tool_call_id": "e", "content": "for h"},
        {"role": "tool", "tool_call_id": "d", "content": "first d"},
        {"role": "tool", "tool_call_id": "d", "content": "second d"}]}),
    ("kwargs_thinking_off_drops_reasoning", {"messages": [U("a"), {"role": "assistant", "content": "b", "reasoning_content": "hidden"}, U("c")],
                                             "thinking": True, "chat_template_kwargs": {"thinking": False, "thinking_effort": "low"}}),
    ("content_parts_in_system_and_tool", {"messages": [{"role": "system", "content": [{"type": "text", "text": "part one "}, {"type": "text", "text": "part two"}]},
        U("x"), {"role": "assistant", "tool_calls": [call("a", "f", {"x": 1})]},
        {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "line1\n"}, {"type": "image_url", "image_url": {"url": "u"}}]}]}),
    ("tools_empty_or_null", {"messages": [U("x")], "tools": [], "tool_choice": None, "response_format": None}),
    ("tools_null_required_choice", {"messages": [U("x")], "tools": None, "tool_choice": "required"}),
    ("json_schema_null_schema", {"messages": [U("x")], "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": None}}}),
    ("long_agentic_session", {"messages": [S("You are an agent."), U("Book a table for two in Lyon tonight."),
        {"role": "assistant", "content": "", "reasoning_content": "Search restaurants first.",
         "tool_calls": [call("t1", "search", {"query": "Lyon bouchon", "Limit": 3})]},
        {"role": "tool", "tool_call_id": "t1", "content": "[\"Chez Paul\", \"Le Musée\"]"},
        {"role": "assistant", "content": "", "reasoning_content": "Check availability.",
         "tool_calls": [call("t2", "book", {"place": "Chez Paul", "people": 2, "time": "20:00", "confirm": False})]},
        {"role": "tool", "tool_call_id": "t2", "content": "{\"ok\": true, \"ref\": \"A7\"}"},
        {"role": "assistant", "content": "Booked Chez Paul at 20:00 (ref A7).", "reasoning_content": "Done."},
        U("Thanks! Also the weather?"),
        {"role": "assistant", "content": None, "reasoning_content": "Weather tool.",
         "tool_calls": [call("t3", "get_weather", "{\"city\":\"Lyon\"}")]},
        {"role": "tool", "tool_call_id": "t3", "content": "clear, 14C"}],
        "tools": [WEATHER_TOOL, SEARCH_TOOL, {"type": "function", "function": {"name": "book", "description": "Reserve.",
            "parameters": {"type": "object", "properties": {"place": {"type": "string"}, "people": {"type": "integer"},
                                                              "time": {"type": "string"}, "confirm": {"type": "boolean"}}}}}],
        "thinking_effort": "medium", "chat_template_kwargs": {"preserve_thinking": False}}),
    ("tool_message_first", {"messages": [{"role": "tool", "name": "boot", "content": "ready"}, U("x")]}),
    ("empty_tool_calls_list_and_string_function", {"messages": [U("x"),
        {"role": "assistant", "content": "none", "tool_calls": []},
        {"role": "tool", "name": "named", "content": "r"},
        {"role": "assistant", "tool_calls": [{"id": "s", "function": "not a mapping", "name": "top_level", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "s", "content": "r2"}]}),
    # Errors the template raises.
    ("error_unknown_effort", {"messages": [U("x")], "thinking_effort": "ultra"}, "thinking_effort"),
    ("error_tool_call_without_name", {"messages": [U("x"), {"role": "assistant", "tool_calls": [{"id": "a", "function": {"arguments": {}}}]}]},
     "messages[1].tool_calls[0]"),
    ("error_tool_call_not_mapping", {"messages": [U("x"), {"role": "assistant", "tool_calls": ["get_weather"]}]}, "messages[1].tool_calls[0]"),
    ("error_tool_call_args_number", {"messages": [U("x"), {"role": "assistant", "tool_calls": [call("a", "f", 5)]}]},
     "messages[1].tool_calls[0].function.arguments"),
    ("error_unresolvable_tool_message", {"messages": [U("x"), {"role": "tool", "content": "orphan"}]}, "messages[1]"),
    ("error_tool_beyond_calls", {"messages": [U("x"), {"role": "assistant", "tool_calls": [call("a", "f", {})]},
                                              {"role": "tool", "content": "1"}, {"role": "tool", "content": "2"}]}, "messages[3]"),
    ("error_message_without_role", {"messages": [U("x"), {"content": "no role"}]}, "messages[1]"),
    # Tool-call arguments given as text (the OpenAI wire form): JSON object text renders as typed
    # argument elements in the text's key order; text that is not JSON stays a raw json block.
    ("tool_call_args_text_typed", {"messages": [U("x"), {"role": "assistant", "tool_calls": [
        call("a", "f", " {\"b\": 1.0, \"a\": [1, {\"x\": null}], \"t\": true, \"s\": \"q\\\"t \u00e9\", \"b\": 2.50} "),
        call("b", "g", "{not json"), call("c", "h", "  ")]}]}),
    ("error_tool_call_args_text_array", {"messages": [U("x"), {"role": "assistant", "tool_calls": [call("a", "f", "[1, 2]")]}]},
     "messages[1].tool_calls[0].function.arguments"),
    # Moonshot's verifier's ground-truth request (tests/k3_features/test_tokenization_groundtruth.py),
    # with thinking.effort given as the template's thinking_effort.
    ("verifier_groundtruth_request", {"messages": [
        S("You are Kimi, a helpful assistant."),
        {"role": "system", "content": "", "tools": [{"type": "function", "function": {
            "name": "get_weather", "description": "Get the weather of a city.", "parameters": {
                "type": "object", "properties": {"city": {"type": "string", "description": "城市名称"},
                                                 "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                "required": ["city"]}}}]},
        U("北京今天天气怎么样？请查一下。"),
        {"role": "assistant", "content": "", "tool_calls": [call("call_01abc", "get_weather", "{\"city\": \"北京\"}")]},
        {"role": "tool", "tool_call_id": "call_01abc", "content": "{\"city\": \"北京\", \"temperature\": 26, \"condition\": \"晴\"}"},
        U("请用 JSON 格式总结今天的天气，包含城市、温度、天气状况和一句话总结。")],
        "tools": [{"type": "function", "function": {"name": "get_news", "description": "Get the latest news by topic.",
                   "parameters": {"type": "object", "properties": {"topic": {"type": "string"}}}}}],
        "tool_choice": "auto",
        "response_format": {"type": "json_schema", "json_schema": {"name": "weather_summary", "schema": {
            "type": "object", "properties": {"city": {"type": "string"}, "temperature": {"type": "number"},
                                             "condition": {"type": "string"}, "summary": {"type": "string"}},
            "required": ["city", "temperature", "condition", "summary"], "additionalProperties": False}}},
        "thinking": {"type": "enabled", "keep": "all"}, "thinking_effort": "high"}),
]

# Assistant turns as the model would emit them after the generation stub.
OUTPUTS = [
    ("think_and_answer", True, {"role": "assistant", "reasoning_content": "The user greets; reply briefly.", "content": "Hello! How can I help?"}),
    ("answer_only_no_thinking", False, {"role": "assistant", "content": "Paris is the capital of France."}),
    ("empty_reasoning", True, {"role": "assistant", "reasoning_content": "", "content": "Short."}),
    ("unicode_everywhere", True, {"role": "assistant", "reasoning_content": "東京 → 😀 e\u0301", "content": "Ответ: ✓ 👩‍👩‍👧"}),
    ("one_call_mapping_args", True, {"role": "assistant", "reasoning_content": "Need weather.", "content": "",
        "tool_calls": [call("a", "get_weather", {"city": "São Paulo", "days": 3, "metric": True, "extra": None,
                                                  "opts": {"x": [1, 2.5, "三"]}, "quote": "say \"hi\"\n\\"})]}),
    ("two_calls_json_block", False, {"role": "assistant", "content": "Let me check both.",
        "tool_calls": [call("a", "search", "{\"query\": \"k3 \\u00e9 東\", \"limit\": 5}"), call("b", "get_time", {})]}),
    ("call_with_quoted_name", True, {"role": "assistant", "reasoning_content": "r",
        "tool_calls": [call("a", "we&ird\"name", {"k\"ey&": "v<|x|>"})]}),
    ("multiline_answer", False, {"role": "assistant", "content": "```json\n{\"capital\": true}\n```\n\n- item\n\ttab"}),
]


def render(env, template, variables):
    return template.render(**variables)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    env = make_env()
    with open(sys.argv[1], encoding="utf-8") as f:
        template = env.from_string(f.read())
    golden_dir = os.path.join(sys.argv[2], "golden")
    outputs_dir = os.path.join(sys.argv[2], "outputs")
    os.makedirs(golden_dir, exist_ok=True)
    os.makedirs(outputs_dir, exist_ok=True)
    for n, case in enumerate(CASES, 1):
        name, request = case[0], case[1]
        record = {"name": name, "request": request}
        try:
            record["expected"] = render(env, template, template_vars(request))
            if len(case) > 2:
                sys.exit(f"{name}: expected the template to raise")
        except Exception as e:  # the template's own raise_exception, or a Python error it hits
            if len(case) < 3:
                sys.exit(f"{name}: {e}")
            record["error"] = f"{type(e).__name__}: {e}"
            record["error_field"] = case[2]
        write(os.path.join(golden_dir, f"{n:02d}_{name}.json"), record)
    prefix = '<|open|>message role="assistant"<|sep|>'
    for n, (name, thinking, message) in enumerate(OUTPUTS, 1):
        text = render(env, template, {"messages": [message], "thinking": thinking,
                                      "thinking_effort": None, "add_generation_prompt": False})
        stub = "<|open|>think<|sep|>" if thinking else "<|open|>response<|sep|>"
        assert text.startswith(prefix + stub), text
        reasoning = message.get("reasoning_content") or ""
        calls = [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                 for c in message.get("tool_calls", [])]
        write(os.path.join(outputs_dir, f"{n:02d}_{name}.json"), {
            "name": name, "thinking": thinking, "output": text[len(prefix + stub):],
            "reasoning": reasoning if reasoning.strip() else "", "content": message.get("content") or "",
            "tool_calls": calls})


def write(path, record):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
