"""`make run`'s demo model counts prompt tokens as Moonshot does: appliance/dev/prepare-var.sh
(what `make run` runs) prepares a var/ directory, the real daemon serves the demo model it
synthesised and signed, and Moonshot's vendor verifier's two reference prompts (thinking
disabled; plain, and with the `capital_answer` json_schema) report usage.prompt_tokens 36 and
119, the counts the verifier expects (tests/data/tokenizer/k3_verifier_prompts.json). Those
counts hold only with Kimi's own ranks (data/kimi-k3/tiktoken.model). Python standard library
only.
"""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import KIMICTL, Daemon, base_config, post_json, run_to_exit, wait_until_ready  # noqa: E402

SOURCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PREPARE_VAR = os.path.join(SOURCE_DIR, "appliance", "dev", "prepare-var.sh")
PROMPTS = os.path.join(SOURCE_DIR, "tests", "data", "tokenizer", "k3_verifier_prompts.json")
# kimictl is <build>/appliance/kimictl; prepare-var.sh takes the build directory.
BUILD_DIR = os.path.dirname(os.path.dirname(os.path.abspath(KIMICTL)))

QUESTION = "请用 JSON 格式回答：北京是中国的首都吗？答案需要包含键 capital。"
CAPITAL_ANSWER = {
    "type": "json_schema",
    "json_schema": {"name": "capital_answer", "schema": {
        "type": "object", "properties": {"capital": {"type": "boolean"}}, "required": ["capital"],
        "additionalProperties": False}},
}


def expected_prompt_tokens():
    with open(PROMPTS) as f:
        return {c["name"]: c["expected_prompt_tokens"] for c in json.load(f)["cases"]}


class DemoModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="kimi-it-demo-")
        var = os.path.join(cls.work, "var")
        code, out, err = run_to_exit([PREPARE_VAR, BUILD_DIR, var], timeout=600)
        if code != 0:
            shutil.rmtree(cls.work, True)
            raise RuntimeError("prepare-var.sh failed (%d): %s%s" % (code, out, err))
        with open(os.path.join(var, "appliance.json")) as f:
            model = json.load(f)["model"]
        # The demo model and trust store prepare-var.sh wrote, served on a free port.
        for key in ("dir", "trust_store"):
            model[key] = os.path.join(var, model[key])
        config = base_config()
        config["model"] = model
        cls.served_id = model["served_id"]
        cls.daemon = Daemon(config=config)
        state = wait_until_ready(cls.daemon)
        if not state or not state["ready"]:
            cls.daemon.close()
            shutil.rmtree(cls.work, True)
            raise RuntimeError("the demo model did not become ready: %r" % (state,))

    @classmethod
    def tearDownClass(cls):
        cls.daemon.close()
        shutil.rmtree(cls.work, True)

    def prompt_tokens(self, **extra):
        body = dict({"model": self.served_id, "messages": [{"role": "user", "content": QUESTION}],
                     "thinking": {"type": "disabled"}, "max_tokens": 1}, **extra)
        reply = post_json(self.daemon, "/v1/chat/completions", body)
        self.assertEqual(reply.status, 200, reply.body)
        return reply.json()["usage"]["prompt_tokens"]

    def test_plain_reference_prompt_counts_36(self):
        self.assertEqual(expected_prompt_tokens()["plain"], 36)
        self.assertEqual(self.prompt_tokens(), 36)

    def test_json_schema_reference_prompt_counts_119(self):
        self.assertEqual(expected_prompt_tokens()["capital_answer_json_schema"], 119)
        self.assertEqual(self.prompt_tokens(response_format=CAPITAL_ANSWER), 119)


if __name__ == "__main__":
    unittest.main()
