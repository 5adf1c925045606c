"""Conformance: every JSON Schema of the vendor verifier's cases (data/kimi-k3/kvv-schema-cases,
all suites; $KIMI_DATA_DIR/kvv-schema-cases when set) sent as a strict tool's parameters with tool_choice "required",
whole and streamed, to the embedded random-weight demo model: every call's arguments must parse
and validate (Draft 2020-12, formats checked) with python3-jsonschema, not with our compiler.

As the verifier does, a case whose root is not an object becomes the one required property
"value" of an object, its $defs hoisted to the root and its references rewritten to match.
A random-weight model never chooses to end a free string; the constraint closes the value as
max_tokens nears, so every answer must end with a valid call. Only a case whose schema asks for
more than max_tokens bytes (a minLength, minItems or minProperties above it) may end with
finish_reason "length"; those are printed. Skips when python3-jsonschema is absent.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import conformance_harness  # noqa: E402
from conformance_harness import DaemonSuite  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from daemon_harness import post_json  # noqa: E402

try:
    import jsonschema
except ImportError:  # Debian: python3-jsonschema
    jsonschema = None

DATA_DIR = os.environ.get("KIMI_DATA_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                            "data", "kimi-k3")
CASES_DIR = os.path.join(DATA_DIR, "kvv-schema-cases")
TOOL = "kvv_case"
CASE_DEF = "kvv_case_schema"
MAX_TOKENS = 1024


def load_cases():
    cases = []
    for suite in sorted(os.listdir(CASES_DIR)):
        path = os.path.join(CASES_DIR, suite, "valid.jsonl")
        if not os.path.isfile(path):
            continue
        with open(path) as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    schema = json.loads(line)
                    cases.append(("%s:%d" % (suite, number), json.loads(schema) if isinstance(schema, str) else schema))
    return cases


def rewrite_refs(node, root_ref):
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#"):
                if value == "#":
                    value = root_ref
                elif not value.startswith("#/$defs/"):
                    value = root_ref + value[1:]
            out[key] = rewrite_refs(value, root_ref)
        return out
    if isinstance(node, list):
        return [rewrite_refs(item, root_ref) for item in node]
    return node


def as_parameters(schema):
    """Tool parameters for a case: the case itself when it is an object schema with properties
    and no root references, else the case as the required property "value"."""
    if (isinstance(schema, dict) and schema.get("type") == "object" and isinstance(schema.get("properties"), dict)
            and '"$ref": "#' not in json.dumps(schema)):
        return schema
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {"value": schema}, "required": ["value"], "additionalProperties": False}
    root_ref = "#/$defs/" + CASE_DEF
    body = rewrite_refs({k: v for k, v in schema.items() if k not in ("$defs", "$id", "$schema")}, root_ref)
    defs = {name: rewrite_refs(d, root_ref) for name, d in (schema.get("$defs") or {}).items()}
    defs[CASE_DEF] = body
    return {"type": "object", "properties": {"value": {"$ref": root_ref}}, "required": ["value"],
            "additionalProperties": False, "$defs": defs}


def needs_more_than(schema, budget):
    """Whether some minLength / minItems / minProperties in the schema exceeds the budget."""
    if isinstance(schema, dict):
        if any(isinstance(schema.get(k), int) and schema[k] > budget for k in ("minLength", "minItems", "minProperties")):
            return True
        return any(needs_more_than(v, budget) for v in schema.values())
    if isinstance(schema, list):
        return any(needs_more_than(v, budget) for v in schema)
    return False


def streamed_arguments(reply_body):
    """(calls, finish_reason) of an SSE reply."""
    calls = {}
    finish_reason = None
    for line in reply_body.split("\n"):  # not splitlines(): JSON text may hold U+2028
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        frame = json.loads(line[len("data: "):])
        for choice in frame.get("choices", []):
            finish_reason = choice.get("finish_reason") or finish_reason
            for call in choice.get("delta", {}).get("tool_calls", []) or []:
                entry = calls.setdefault(call["index"], {"name": None, "arguments": ""})
                function = call.get("function", {})
                if function.get("name"):
                    entry["name"] = function["name"]
                entry["arguments"] += function.get("arguments", "")
    return [calls[i] for i in sorted(calls)], finish_reason


class SchemaCasesTest(DaemonSuite):
    def test_every_case_validates_whole_and_streamed(self):
        self.assertTrue(os.path.isdir(CASES_DIR), "%s is missing" % CASES_DIR)
        if jsonschema is None:
            self.skipTest("python3-jsonschema is not installed")
        self.requireModel()
        cases = load_cases()
        self.assertGreater(len(cases), 0)
        checked = 0
        truncated = []
        for case_id, schema in cases:
            parameters = as_parameters(schema)
            validator = jsonschema.Draft202012Validator(parameters, format_checker=jsonschema.FormatChecker())
            for stream in (False, True):
                with self.subTest(case=case_id, stream=stream):
                    body = self.chat_body(
                        messages=[{"role": "user", "content": "Call the tool."}],
                        tools=[{"type": "function", "function": {"name": TOOL, "parameters": parameters, "strict": True}}],
                        tool_choice="required", max_tokens=MAX_TOKENS, temperature=1.0, seed=len(case_id),
                        thinking={"type": "disabled"}, stream=stream)
                    reply = post_json(self.daemon, "/v1/chat/completions", body)
                    self.assertEqual(reply.status, 200, "%s: %s" % (case_id, reply.body[:500]))
                    if stream:
                        calls, finish_reason = streamed_arguments(reply.body)
                    else:
                        choice = reply.json()["choices"][0]
                        finish_reason = choice["finish_reason"]
                        calls = [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                                 for c in choice["message"].get("tool_calls") or []]
                    checked += 1
                    if finish_reason == "length" and needs_more_than(schema, MAX_TOKENS):
                        truncated.append("%s%s" % (case_id, " (streamed)" if stream else ""))
                        continue
                    self.assertEqual(finish_reason, "tool_calls", "%s: %s" % (case_id, reply.body[:500]))
                    self.assertTrue(calls, "%s: no tool call: %s" % (case_id, reply.body[:500]))
                    for call in calls:
                        self.assertEqual(call["name"], TOOL)
                        arguments = json.loads(call["arguments"])
                        errors = sorted(validator.iter_errors(arguments), key=str)
                        self.assertFalse(errors, "%s: %s invalid: %s" % (case_id, call["arguments"][:300],
                                                                        errors[0].message if errors else ""))
        print("%d requests over %d cases: %d finished and validated, %d ask for more than max_tokens=%d: %s"
              % (checked, len(cases), checked - len(truncated), len(truncated), MAX_TOKENS, ", ".join(truncated)))
        self.assertLess(len(truncated), checked)


if __name__ == "__main__":
    conformance_harness.main()
