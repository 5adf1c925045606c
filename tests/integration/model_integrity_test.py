"""The served bytes are the verified bytes, through the real daemon: a byte written in place
into a weight file of the serving model (as `open(path, "r+b")` would, after verification and
load) takes the model out of service (chat 503 with OpenAI error JSON, /readyz 503 naming the
file) and writes a model.integrity_failed audit record naming the file and both digests. Both
ways a model is served are covered: model.dir (unmanaged) and the model store's verified copy
(kept read-only, 0400 in 0700 directories). SIGHUP asks for the check at once, so the test does
not depend on timing. Run by CTest with KIMI_APPLIANCE_BIN, KIMICTL_BIN and KIMI_ENGINE_BIN set.
"""
import glob
import hashlib
import os
import signal
import stat
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from audit_test import read_records, wait_until  # noqa: E402
from daemon_harness import (Daemon, SignedModel, import_model, post_json, request, wait_until_ready)  # noqa: E402

MODEL_ID = "kimi-k3-nano"
STORE_ID = "k3"
WAIT_S = 120  # bounds on waiting; they only stop a hung test


def chat(daemon):
    body = {"model": MODEL_ID, "messages": [{"role": "user", "content": "Name three rivers."}],
            "max_tokens": 8, "temperature": 0}
    return post_json(daemon, "/v1/chat/completions", body)


def largest_weight_file(model_dir):
    return max(glob.glob(os.path.join(model_dir, "model-*.safetensors")), key=os.path.getsize)


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_byte_in_place(path):
    """Flips one byte in the middle of `path` in place; returns (digest before, digest after)."""
    before = sha256_of(path)
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0x01]))
    return before, sha256_of(path)


class ServedBytesTest(unittest.TestCase):
    def assert_taken_out_of_service(self, daemon, weight_file, digest, digests):
        signed_sha, served_sha = digests
        name = os.path.basename(weight_file)
        daemon.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + WAIT_S
        reply = None
        while time.monotonic() < deadline:
            reply = request(daemon, "GET", "/readyz")
            if not reply.json()["components"]["model"]["ready"]:
                break
            time.sleep(0.1)
        self.assertEqual(reply.status, 503, reply.body)
        model = reply.json()["components"]["model"]
        self.assertFalse(model["ready"], model)
        self.assertIn("taken out of service", model["detail"])
        self.assertIn(name, model["detail"])
        self.assertIn(signed_sha, model["detail"])
        self.assertIn(served_sha, model["detail"])
        # Readiness keeps the failure with its time, for the operator.
        self.assertEqual(model["last_failure"]["reason"], model["detail"])
        self.assertRegex(model["last_failure"]["at"], r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
        self.assertEqual(model["since"], model["last_failure"]["at"])

        refused = chat(daemon)
        self.assertEqual(refused.status, 503, refused.body)
        self.assertTrue(refused.headers.get("content-type", "").startswith("application/json"))
        error = refused.json()["error"]
        for key in ("message", "type", "param", "code"):
            self.assertIn(key, error)
        self.assertIn(name, error["message"])

        # The record is written beside the readiness change, not before it: wait for it.
        def integrity_records():
            return [r for r in read_records(daemon.data_dir) if r["action"] == "model.integrity_failed"]

        wait_until(integrity_records)
        records = integrity_records()
        self.assertEqual(len(records), 1, records)
        record = records[0]
        self.assertEqual(record["model_digest"], digest)
        self.assertEqual(record["actor"], "kimi-appliance")
        self.assertIn(name, record["detail"])
        self.assertIn("signed sha256:" + signed_sha, record["detail"])
        self.assertIn("served sha256:" + served_sha, record["detail"])

    def test_a_write_to_model_dir_takes_the_model_out_of_service(self):
        with tempfile.TemporaryDirectory(prefix="kimi-integrity-it-") as tmp:
            signed = SignedModel(tmp)
            daemon = signed.serve(served_id=MODEL_ID, threads=1, integrity_interval_s=0)
            try:
                served = request(daemon, "GET", "/v1/models").json()["data"][0]
                self.assertEqual(chat(daemon).status, 200)
                weight_file = largest_weight_file(signed.dir)
                digests = write_byte_in_place(weight_file)
                self.assert_taken_out_of_service(daemon, weight_file, served["digest"], digests)
            finally:
                daemon.close()

    def test_a_write_to_the_stores_copy_takes_the_version_out_of_service(self):
        with tempfile.TemporaryDirectory(prefix="kimi-integrity-it-") as tmp:
            config, source = SignedModel(tmp).on_medium(tmp, served_id=MODEL_ID, store_id=STORE_ID, threads=1,
                                                        integrity_interval_s=0)
            daemon = Daemon(config=config)
            try:
                job = import_model(daemon, STORE_ID, source)
                self.assertEqual(job["state"], "succeeded", job)
                digest = job["version"]["digest"]
                reply = post_json(daemon, "/admin/v1/models/activate", {"model": STORE_ID, "digest": digest})
                self.assertEqual(reply.status, 200, reply.body)
                self.assertTrue(wait_until_ready(daemon)["ready"])
                self.assertEqual(chat(daemon).status, 200)

                copy = os.path.join(daemon.data_dir, "models", STORE_ID, digest)
                weight_file = largest_weight_file(copy)
                # Nothing but the daemon's account may open the copy, and it only to read.
                self.assertEqual(stat.S_IMODE(os.stat(weight_file).st_mode), 0o400)
                self.assertEqual(stat.S_IMODE(os.stat(copy).st_mode), 0o700)
                os.chmod(weight_file, 0o600)  # what an intruder with the account (or root) does first
                digests = write_byte_in_place(weight_file)
                self.assert_taken_out_of_service(daemon, weight_file, digest, digests)
            finally:
                daemon.close()


if __name__ == "__main__":
    unittest.main()
