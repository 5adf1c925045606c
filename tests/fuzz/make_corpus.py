#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target, tests/fuzz/corpus/<target>/: inputs the target
must accept (good_*), inputs it must refuse (bad_*) and other seeds; known_defects/ would hold
inputs that crash code whose fix has not landed (not replayed, see CMakeLists.txt). Re-run to
regenerate; the files are committed."""
import base64
import json
import os
import struct

FUZZ = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(FUZZ, "..", ".."))
CORPUS = os.path.join(FUZZ, "corpus")


def image(header, data, length=None):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def t(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


FILES = {
    "good_two_tensors.safetensors": image(
        {"__metadata__": {"format": "pt"}, "a": t("BF16", [2, 2], 0, 8), "b": t("F32", [3], 8, 20)}, bytes(20)),
    "good_mxfp4_expert.safetensors": image(
        {"e.weight_packed": t("U8", [4, 16], 0, 64), "e.weight_scale": t("U8", [4, 1], 64, 68)}, bytes(68)),
    "bad_short_length.safetensors": b"\x05\x00\x00",
    "bad_empty.safetensors": b"",
    "bad_length_past_eof.safetensors": image({"a": t("U8", [1], 0, 1)}, b"\x00", length=4096),
    "bad_truncated_header.safetensors": image({"a": t("F32", [4], 0, 16)}, b"")[:20],
    "bad_invalid_json.safetensors": image(b'{"a": {"dtype": "F32", "shape": [1], ', b"\x00" * 4),
    "bad_not_object.safetensors": image(b"[1, 2, 3]", b""),
    "bad_deep_nesting.safetensors": image(b"[" * 5000 + b"]" * 5000, b""),
    "bad_offsets_past_end.safetensors": image({"a": t("F32", [4], 0, 16)}, bytes(8)),
    "bad_overlap.safetensors": image({"a": t("F32", [4], 0, 16), "b": t("F32", [2], 8, 16)}, bytes(16)),
    "bad_gap.safetensors": image({"a": t("U8", [4], 4, 8)}, bytes(8)),
    "bad_dtype.safetensors": image({"a": t("Q4_K", [4], 0, 4)}, bytes(4)),
    "bad_shape_bytes.safetensors": image({"a": t("BF16", [3, 3], 0, 16)}, bytes(16)),
    "bad_negative_dim.safetensors": image({"a": t("BF16", [-2, 4], 0, 16)}, bytes(16)),
    "bad_shape_overflow.safetensors": image({"a": t("F64", [2**32, 2**32, 16], 0, 8)}, bytes(8)),
    "bad_offsets_backwards.safetensors": image({"a": t("U8", [2], 2, 0)}, bytes(2)),
    "bad_huge_offset.safetensors": image({"a": t("U8", [1], 2**64 - 2, 2**64 - 1)}, bytes(1)),
    "bad_metadata.safetensors": image({"__metadata__": {"k": 1}}, b""),
    "bad_trailing_bytes.safetensors": image({"a": t("U8", [2], 0, 2)}, bytes(6)),
}

# Seeds for the JSON parsers that share the entry point (config.json, the index). Neither good_
# nor bad_: the replay test only runs them.
TEXT_CONFIG = {
    "model_type": "kimi_linear", "hidden_size": 128, "num_hidden_layers": 2, "vocab_size": 4352,
    "rms_norm_eps": 1e-5, "num_attention_heads": 2, "kv_lora_rank": 64, "q_lora_rank": 96,
    "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32, "mla_use_output_gate": True,
    "intermediate_size": 384, "num_experts": 4, "num_experts_per_token": 2, "num_shared_experts": 2,
    "moe_intermediate_size": 96, "routed_expert_hidden_size": 64, "latent_moe_use_norm": True,
    "first_k_dense_replace": 1, "hidden_act": "situ", "activation_situ_beta": 4.0,
    "activation_situ_linear_beta": 25.0, "attn_res_block_size": 2,
    "linear_attn_config": {"kda_layers": [1], "full_attn_layers": [2], "num_heads": 2, "head_dim": 32,
                           "short_conv_kernel_size": 4, "gate_lower_bound": -5.0, "use_full_rank_gate": True},
    "quantization_config": {"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized",
                            "config_groups": {"group_0": {"weights": {"num_bits": 4, "group_size": 32}}}},
}
FILES["seed_config.json"] = json.dumps({"model_type": "kimi_k3", "text_config": TEXT_CONFIG}).encode()
FILES["seed_index.json"] = json.dumps({
    "metadata": {"total_size": 68},
    "weight_map": {"language_model.model.norm.weight": "model-00001-of-00002.safetensors",
                   "language_model.lm_head.weight": "model-00002-of-00002.safetensors"},
    "tensor_specs": {"language_model.model.norm.weight": {"dtype": "BF16", "shape": [128]}},
}).encode()



def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


# The request path: chat-completions and completions bodies. good_: accepted by the request
# rules and allowed by the bank policy for a teller or an operator; bad_: refused by either.
USER = {"role": "user", "content": "What is the capital of France?"}
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
                   "required": ["city"], "additionalProperties": False}}}
SELF_REF_ALLOF = {"$defs": {"a": {"$ref": "#/$defs/a"}}, "allOf": [{"$ref": "#/$defs/a"}]}
SELF_REF_ONEOF = {"$defs": {"a": {"$ref": "#/$defs/a"}}, "oneOf": [{"$ref": "#/$defs/a"}]}


def chat(**fields):
    body = {"model": "kimi-k3", "messages": [USER]}
    body.update(fields)
    return body


def schema_format(schema):
    return {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": schema}}


def strict_tool(parameters):
    return {"type": "function", "function": {"name": "lookup", "strict": True, "parameters": parameters}}


def nested_defs(depth):
    return b'{"$defs":' * depth + b"{}" + b"}" * depth


REQUEST = {
    "good_chat_minimal.json": chat(),
    "good_chat_system_and_turns.json": chat(messages=[
        {"role": "system", "content": "You are terse."}, USER,
        {"role": "assistant", "content": "Paris.", "reasoning_content": "Easy."},
        {"role": "user", "content": [{"type": "text", "text": "And of Italy?"}]}],
        temperature=0.6, top_p=0.95, max_tokens=256, stop=["\n\n", "END"], seed=7),
    "good_chat_tools.json": chat(tools=[WEATHER_TOOL], tool_choice="auto", messages=[
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18C, clear"}]),
    "good_chat_json_schema.json": chat(response_format=schema_format(
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False})),
    "good_chat_json_object.json": chat(response_format={"type": "json_object"}, messages=[
        {"role": "user", "content": "Answer in JSON."}]),
    "good_chat_thinking_off_stream.json": chat(thinking={"type": "disabled"}, stream=True,
                                              stream_options={"include_usage": True}, logprobs=True, top_logprobs=2),
    "good_chat_redacted_email.json": chat(messages=[{"role": "user", "content": "Write to jane.doe@example.com and CUST-12345678"}]),
    "good_completion.json": {"model": "kimi-k3", "prompt": "Once upon a time", "max_tokens": 16, "temperature": 0.5},
    "bad_not_json.json": b'{"model": "kimi-k3", "messages": [',
    "bad_not_object.json": b"[1, 2, 3]",
    "bad_no_messages.json": {"model": "kimi-k3"},
    "bad_temperature.json": chat(temperature=7),
    "bad_messages_not_array.json": chat(messages={"role": "user"}),
    "bad_blocked_card_number.json": chat(messages=[{"role": "user", "content": "My card is 4111 1111 1111 1111"}]),
    "bad_model_and_output_limit.json": chat(model="not-a-model", max_tokens=9000),
    "seed_dynamic_tools.json": chat(messages=[
        {"role": "system", "content": "Tools follow.", "tools": [WEATHER_TOOL]}, USER], tool_choice="required"),
    "seed_strict_tool_required.json": chat(tools=[strict_tool(WEATHER_TOOL["function"]["parameters"])],
                                           tool_choice="required", parallel_tool_calls=True),
    "seed_thinking_effort.json": chat(reasoning_effort="low", chat_template_kwargs={"preserve_thinking": False}),
    "seed_completion_tokens_prompt.json": {"model": "kimi-k3", "prompt": [1, 2, 3], "echo": True, "logprobs": 2},
    # The inputs of the penetration test's findings: each refused since its fix.
    "bad_self_ref_allof_response_format.json": chat(response_format=schema_format(SELF_REF_ALLOF)),
    "bad_self_ref_allof_strict_tool.json": chat(tools=[strict_tool(SELF_REF_ALLOF)], tool_choice="required"),
    "bad_self_ref_oneof_response_format.json": chat(response_format=schema_format(SELF_REF_ONEOF)),
    "bad_stop_100000_strings.json": chat(stop=["s%d" % i for i in range(100000)]),
    "bad_defs_nested_30000_response_format.json":
        compact(chat(response_format=schema_format({}))).replace(b'"schema":{}', b'"schema":' + nested_defs(30000)),
}

# The schema compiler: response_format schemas. good_: compile; bad_: refused.
SCHEMA = {
    "good_object.json": {"type": "object", "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 40},
                                                          "age": {"type": "integer", "minimum": 0, "maximum": 150}},
                         "required": ["name"], "additionalProperties": False},
    "good_recursive_tree.json": {"$defs": {"node": {"type": "object", "properties": {
        "value": {"type": "number"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        "additionalProperties": False}}, "$ref": "#/$defs/node"},
    "good_enum_const.json": {"anyOf": [{"enum": ["red", "green", 3, None, True]}, {"const": {"k": [1, 2]}}]},
    "good_one_of_types.json": {"oneOf": [{"type": "string", "format": "date-time"}, {"type": "integer"},
                                         {"type": "array", "prefixItems": [{"type": "boolean"}], "items": False}]},
    "good_pattern_formats.json": {"type": "object", "properties": {
        "id": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3,5}$"}, "email": {"type": "string", "format": "email"},
        "uuid": {"type": "string", "format": "uuid"}, "day": {"type": "string", "format": "date"}}},
    "good_all_of_merge.json": {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}},
                                         {"required": ["a"]}], "definitions": {"unused": {"type": "null"}}},
    "good_numbers.json": {"type": "array", "minItems": 1, "maxItems": 3,
                          "items": {"type": "number", "exclusiveMinimum": -1.5, "exclusiveMaximum": 1e3}},
    "good_nullable.json": {"type": ["string", "null"], "nullable": True, "description": "d", "default": None},
    # Found by this target: UBSan on the conversion of a bound far past int64_t to an integer.
    "good_number_bound_past_int64.json": {"type": "array", "minItems": 0, "maxItems": 3, "items": {
        "type": "number", "exclusiveMinimum": -2.5, "exclusiveMaximum": 7.7777777777777777e49}},
    "bad_not_json.json": b'{"type": "object", "properties": {',
    "bad_unknown_keyword.json": {"type": "string", "contentEncoding": "base64"},
    "bad_not_keyword.json": {"not": {"type": "string"}},
    "bad_dangling_ref.json": {"$ref": "#/$defs/missing"},
    "bad_self_ref_allof.json": SELF_REF_ALLOF,
    "bad_self_ref_oneof.json": SELF_REF_ONEOF,
    "bad_defs_nested_30000.json": nested_defs(30000),
}

# POST /admin/v1/session bodies.
LOGIN = {
    "good_login.json": {"username": "admin", "password": "correct horse battery staple"},
    "good_unicode_password.json": {"username": "elodie", "password": "p\u00e4ss"},
    "bad_unicode_username.json": {"username": "\u00e9lodie", "password": "p\u00e4ss"},  # [a-z0-9._-] only
    "bad_not_json.json": b'{"username": "admin", ',
    "bad_not_object.json": b'["admin", "secret"]',
    "bad_missing_password.json": {"username": "admin"},
    "bad_empty_username.json": {"username": "", "password": "x"},
    "bad_number_password.json": {"username": "admin", "password": 1234},
    "bad_unknown_field.json": {"username": "admin", "password": "x", "role": "admin"},
    # The 7 MB username of the finding: refused by the parse (at most 64 characters).
    "bad_username_7mb.json": b'{"username":"' + b"a" * (7 << 20) + b'","password":"x"}',
}


def read_source(relative):
    with open(os.path.join(SOURCE, relative), "rb") as f:
        return f.read()


# Policy documents: the shipped ones must be accepted, the validator's invalid test documents
# refused.
POLICY = {"good_default.json": read_source("policies/default.json"),
          "good_bank.json": read_source("policies/examples/bank.json"),
          "good_hospital.json": read_source("policies/examples/hospital.json")}
# Found by this target: std::regex read the count into a long that overflowed (UBSan), and
# 2^64 + 1 repetitions compiled as one.
BANK = json.loads(read_source("policies/examples/bank.json"))
BANK["redaction"]["custom_patterns"][0]["pattern"] = "\\bCUST-[0-9]{18446744073709551617}\\b"
POLICY["bad_pattern_count_overflow.json"] = compact(BANK)
BANK["redaction"]["custom_patterns"][0]["pattern"] = "\\66666666666666666666bCUST"  # the crash as found
POLICY["bad_pattern_backreference_overflow.json"] = compact(BANK)
for name in sorted(os.listdir(os.path.join(SOURCE, "policies", "testdata", "invalid"))):
    POLICY["bad_" + name] = read_source(os.path.join("policies", "testdata", "invalid", name))

# model.sig: the reference signer's bundles (each parses), their signed statements as seeds,
# and damaged bundles.
OMS = {}
SIGNING = os.path.join("tests", "data", "model-signing")
for vector in sorted(os.listdir(os.path.join(SOURCE, SIGNING))):
    sig = os.path.join(SIGNING, vector, "model.sig")
    if not os.path.isfile(os.path.join(SOURCE, sig)):
        continue
    bundle = read_source(sig)
    OMS["good_%s.sig" % vector] = bundle
    envelope = json.loads(bundle)["dsseEnvelope"]
    OMS["seed_%s_statement.json" % vector] = base64.b64decode(envelope["payload"])
first = json.loads(read_source(os.path.join(SIGNING, "v1.0.0-elliptic-key", "model.sig")))
OMS["bad_not_json.sig"] = b'{"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json", '
OMS["bad_media_type.sig"] = compact(dict(first, mediaType="application/json"))
OMS["bad_two_signatures.sig"] = compact(dict(first, dsseEnvelope=dict(
    first["dsseEnvelope"], signatures=first["dsseEnvelope"]["signatures"] * 2)))
OMS["bad_payload_base64.sig"] = compact(dict(first, dsseEnvelope=dict(first["dsseEnvelope"], payload="!!not base64!!")))

TARGETS = {"safetensors": FILES, "request": REQUEST, "schema": SCHEMA, "login": LOGIN, "policy": POLICY, "oms": OMS}

# Files written here are overwritten; others in the folders (written by hand, or inputs a fuzzer
# found) are kept.
for target, files in TARGETS.items():
    folder = os.path.join(CORPUS, target)
    for name, data in files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else compact(data))
