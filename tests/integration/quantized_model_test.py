"""Quantised models through the real daemon: k3-nano synthesised in BF16, rewritten by
`kimi-engine quantize --scheme int8` and `--scheme mxfp4-dense`, signed with `kimictl model
sign` (quantize signs nothing itself), verified and loaded by the daemon, which then answers a
chat request; `kimictl model verify` accepts the signed copy and refuses it once a quantised
weight file changes. Run by CTest with KIMI_APPLIANCE_BIN, KIMICTL_BIN and KIMI_ENGINE_BIN set.
"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import KIMICTL, SignedModel, post_json, request, run_to_exit  # noqa: E402

MODEL_ID = "kimi-k3-nano"


class QuantizedModelTest(unittest.TestCase):
    def serve_and_chat(self, scheme):
        with tempfile.TemporaryDirectory(prefix="kimi-quantized-it-") as tmp:
            signed = SignedModel(tmp, quantize=scheme)
            with open(os.path.join(signed.dir, "config.json")) as f:
                self.assertIn('"quant_method": "compressed-tensors"', f.read())
            code, out, err = run_to_exit([KIMICTL, "model", "verify", "--key", signed.public_key, signed.dir])
            self.assertEqual(code, 0, out + err)

            daemon = signed.serve(served_id=MODEL_ID, threads=1)
            try:
                self.assertEqual(request(daemon, "GET", "/v1/models").json()["data"][0]["id"], MODEL_ID)
                body = {"model": MODEL_ID, "messages": [{"role": "user", "content": "Name three rivers."}],
                        "max_tokens": 8, "temperature": 0}
                reply = post_json(daemon, "/v1/chat/completions", body)
                self.assertEqual(reply.status, 200, reply.body)
                self.assertGreater(reply.json()["usage"]["completion_tokens"], 0, reply.body)
            finally:
                daemon.close()

            # The signature covers the quantised weights.
            shard = max((os.path.join(signed.dir, f) for f in os.listdir(signed.dir) if f.endswith(".safetensors")),
                        key=os.path.getsize)
            with open(shard, "r+b") as f:
                f.seek(-1, os.SEEK_END)
                last = f.read(1)
                f.seek(-1, os.SEEK_END)
                f.write(bytes([last[0] ^ 0xFF]))
            code, out, err = run_to_exit([KIMICTL, "model", "verify", "--key", signed.public_key, signed.dir])
            self.assertNotEqual(code, 0, out + err)

    def test_int8_model_is_signed_verified_and_served(self):
        self.serve_and_chat("int8")

    def test_mxfp4_dense_model_is_signed_verified_and_served(self):
        self.serve_and_chat("mxfp4-dense")


if __name__ == "__main__":
    unittest.main()
