"""The model lifecycle through the real daemon: signed k3-nano models imported from a
"mounted medium" with the admin API (progress polled), activated and rolled back while
streamed chat requests run (none fails, /readyz stays 200), /v1/models naming the version
served, a tampered import refused and a version that fails to load leaving the active version
serving, and every act in the audit log with its model digest. Run by CTest with KIMI_APPLIANCE_BIN, KIMICTL_BIN and
KIMI_ENGINE_BIN set.
"""
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from audit_test import read_records  # noqa: E402
from daemon_harness import (KIMICTL, Daemon, SignedModel, import_model, post_json, request, run_to_exit,  # noqa: E402
                            wait_until_ready)

MODEL_ID = "kimi-k3-nano"
STORE_ID = "k3"
WAIT_S = 120  # bound on waiting for an import; only stops a hung test


def sign(model_dir, private_key):
    code, out, err = run_to_exit([KIMICTL, "model", "sign", "--key", private_key, "--quiet", model_dir])
    if code != 0:
        raise RuntimeError("kimictl model sign failed: " + out + err)


def largest_file(model_dir):
    files = [os.path.join(root, name) for root, _, names in os.walk(model_dir) for name in names]
    return max((f for f in files if not f.endswith("model.sig")), key=os.path.getsize)


def stream_events(body):
    """The data payloads of an event stream, split on "\\n" only."""
    return [line[len("data: "):] for line in body.split("\n") if line.startswith("data: ")]


class ModelLifecycleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kimi-lifecycle-it-")
        media = os.path.join(cls.tmp.name, "media")
        os.makedirs(media)
        signed = SignedModel(cls.tmp.name)
        model, private_key = signed.dir, signed.private_key
        cls.public_key = signed.public_key
        # Three signed variants on the "medium": the demo model, the same weights with one more
        # signed file (another version), and a copy whose weights change after signing.
        cls.first = os.path.join(media, "first")
        cls.second = os.path.join(media, "second")
        cls.tampered = os.path.join(media, "tampered")
        for path in (cls.first, cls.second, cls.tampered):
            shutil.copytree(model, path)
        with open(os.path.join(cls.second, "release-notes.txt"), "w") as f:
            f.write("second version\n")
        sign(cls.second, private_key)
        # Signed and verifiable, but not a model the engine can load.
        cls.unloadable = os.path.join(media, "unloadable")
        os.makedirs(cls.unloadable)
        with open(os.path.join(cls.unloadable, "weights.bin"), "wb") as f:
            f.write(b"not a model" * 100)
        sign(cls.unloadable, private_key)
        cls.tampered_file = largest_file(cls.tampered)
        with open(cls.tampered_file, "r+b") as f:
            f.seek(os.path.getsize(cls.tampered_file) // 2)
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0x01]))

        # model.dir is served until the store has an active version.
        cls.daemon = signed.serve(served_id=MODEL_ID, threads=2, store_id=STORE_ID, import_roots=[media])

    @classmethod
    def tearDownClass(cls):
        cls.daemon.close()
        cls.tmp.cleanup()

    # --- helpers -------------------------------------------------------------------------

    def served(self):
        reply = request(self.daemon, "GET", "/v1/models")
        self.assertEqual(reply.status, 200, reply.body)
        data = reply.json()["data"]
        self.assertEqual([m["id"] for m in data], [MODEL_ID])
        return data[0]

    def chat(self, stream=False):
        body = {"model": MODEL_ID, "messages": [{"role": "user", "content": "Name three rivers."}],
                "max_tokens": 16, "temperature": 0, "stream": stream}
        return post_json(self.daemon, "/v1/chat/completions", body)

    def import_model(self, source):
        reply = post_json(self.daemon, "/admin/v1/models/import", {"model": STORE_ID, "source": source})
        self.assertEqual(reply.status, 202, reply.body)
        job = reply.json()
        self.assertEqual(job["state"], "running")
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            status = request(self.daemon, "GET", "/admin/v1/models/import?job=" + job["job"])
            self.assertEqual(status.status, 200, status.body)
            job = status.json()
            for key in ("phase", "bytes_done", "bytes_total", "bytes_per_second", "eta_seconds"):
                self.assertIn(key, job)
            self.assertLessEqual(job["bytes_done"], job["bytes_total"])
            if job["state"] != "running":
                return job
            time.sleep(0.05)
        self.fail("import of %s did not finish" % source)

    def activate(self, digest):
        return post_json(self.daemon, "/admin/v1/models/activate", {"model": STORE_ID, "digest": digest})

    def under_streaming_load(self, act):
        """Runs act() while three clients stream chat completions back to back and a fourth
        polls /readyz; returns (act's result, streamed replies as (reply, sent, done) with
        monotonic times, readyz statuses, (act began, act returned))."""
        stop = threading.Event()
        replies, probes = [], []
        lock = threading.Lock()

        def stream_client():
            while not stop.is_set():
                sent = time.monotonic()
                reply = self.chat(stream=True)
                with lock:
                    replies.append((reply, sent, time.monotonic()))

        def probe_client():
            while not stop.is_set():
                status = request(self.daemon, "GET", "/readyz").status
                with lock:
                    probes.append(status)
                time.sleep(0.01)

        threads = [threading.Thread(target=stream_client) for _ in range(3)]
        threads.append(threading.Thread(target=probe_client))
        for t in threads:
            t.start()
        try:
            # Let the load start before the act, and let it run on after.
            while True:
                with lock:
                    if len(replies) >= 3:
                        break
                time.sleep(0.01)
            began = time.monotonic()
            result = act()
            window = (began, time.monotonic())
            with lock:
                seen = len(replies)
            while True:
                with lock:
                    if len(replies) >= seen + 3:
                        break
                time.sleep(0.01)
        finally:
            stop.set()
            for t in threads:
                t.join()
        return result, replies, probes, window

    def assert_every_stream_completed(self, replies, probes):
        self.assertTrue(replies)
        for reply, _, _ in replies:
            self.assertEqual(reply.status, 200, reply.body)
            events = stream_events(reply.body)
            self.assertEqual(events[-1], "[DONE]", reply.body)
            for payload in events[:-1]:
                self.assertNotIn("error", json.loads(payload), payload)
        self.assertTrue(probes)
        self.assertEqual(set(probes), {200})

    def assert_each_served_by_one_version(self, replies, window, before, after):
        """Each streamed request names the version that served it (X-Model-Digest), and its
        audit record names the same one: `before` for requests done before the act began,
        `after` for requests sent once it had returned, one of the two in between."""
        records = {r["request_id"]: r for r in read_records(self.daemon.data_dir)}
        began, returned = window
        seen = set()
        for reply, sent, done in replies:
            digest = reply.headers.get("x-model-digest")
            self.assertIn(digest, {before, after}, reply.headers)
            if done < began:
                self.assertEqual(digest, before)
            if sent > returned:
                self.assertEqual(digest, after)
            record = records.get(reply.headers["x-request-id"])
            self.assertIsNotNone(record, reply.headers["x-request-id"])
            self.assertEqual(record["model_digest"], digest, record)
            seen.add(digest)
        self.assertIn(before, seen)
        self.assertIn(after, seen)

    def versions(self):
        reply = request(self.daemon, "GET", "/admin/v1/models")
        self.assertEqual(reply.status, 200, reply.body)
        return {v["digest"]: v for v in reply.json()["models"]}

    # --- the lifecycle, in order -----------------------------------------------------------

    def test_lifecycle(self):
        direct = self.served()
        self.assertEqual(direct["version"], 0)  # served from model.dir
        self.assertEqual(self.chat().status, 200)

        # Import the second version: progress is polled, the version is verified, not active.
        job = self.import_model(self.second)
        self.assertEqual(job["state"], "succeeded", job)
        self.assertEqual(job["bytes_done"], job["bytes_total"])
        second = job["version"]
        self.assertEqual(second["state"], "verified")
        self.assertNotEqual(second["digest"], direct["digest"])
        listed = request(self.daemon, "GET", "/admin/v1/models/import")
        self.assertEqual(listed.status, 200, listed.body)
        self.assertEqual(listed.json()["jobs"][0]["job"], job["job"])

        # Activate it under streaming load: nothing fails, /readyz stays 200.
        activated, replies, probes, window = self.under_streaming_load(lambda: self.activate(second["digest"]))
        self.assertEqual(activated.status, 200, activated.body)
        self.assertEqual(activated.json()["version"]["state"], "active")
        self.assert_every_stream_completed(replies, probes)
        self.assert_each_served_by_one_version(replies, window, direct["digest"], second["digest"])
        served = self.served()
        self.assertEqual((served["digest"], served["version"]), (second["digest"], second["version"]))
        self.assertEqual(self.chat().status, 200)

        # Import the demo model into the store too and activate it: version 2.
        job = self.import_model(self.first)
        self.assertEqual(job["state"], "succeeded", job)
        first = job["version"]
        self.assertEqual(first["digest"], direct["digest"])
        self.assertGreater(first["version"], second["version"])
        activated, replies, probes, window = self.under_streaming_load(lambda: self.activate(first["digest"]))
        self.assertEqual(activated.status, 200, activated.body)
        self.assert_every_stream_completed(replies, probes)
        self.assert_each_served_by_one_version(replies, window, second["digest"], first["digest"])
        self.assertEqual(self.served()["digest"], first["digest"])

        # A tampered model is refused, naming the file; the active version stays.
        job = self.import_model(self.tampered)
        self.assertEqual(job["state"], "failed", job)
        self.assertIn(os.path.basename(self.tampered_file), job["error"])
        self.assertEqual(self.served()["digest"], first["digest"])
        self.assertEqual(self.versions()[first["digest"]]["state"], "active")
        self.assertEqual(len(self.versions()), 2)

        # A verified version whose engine fails to load: the activation reports the error and
        # the running version keeps serving.
        job = self.import_model(self.unloadable)
        self.assertEqual(job["state"], "succeeded", job)
        unloadable = job["version"]
        failed, replies, probes, _ = self.under_streaming_load(lambda: self.activate(unloadable["digest"]))
        self.assertNotEqual(failed.status, 200, failed.body)
        self.assertIn("error", failed.json())
        self.assert_every_stream_completed(replies, probes)
        self.assertEqual({reply.headers.get("x-model-digest") for reply, _, _ in replies}, {first["digest"]})
        self.assertEqual(self.served()["digest"], first["digest"])
        self.assertEqual(self.versions()[first["digest"]]["state"], "active")
        removed = request(self.daemon, "DELETE", "/admin/v1/models?model=%s&digest=%s" % (STORE_ID, unloadable["digest"]))
        self.assertEqual(removed.status, 200, removed.body)

        # Rollback under load returns to the second version.
        rolled, replies, probes, window = self.under_streaming_load(
            lambda: post_json(self.daemon, "/admin/v1/models/rollback", {"model": STORE_ID}))
        self.assertEqual(rolled.status, 200, rolled.body)
        self.assertEqual(rolled.json()["version"]["digest"], second["digest"])
        self.assert_every_stream_completed(replies, probes)
        self.assert_each_served_by_one_version(replies, window, first["digest"], second["digest"])
        self.assertEqual(self.served()["digest"], second["digest"])
        self.assertEqual(self.chat().status, 200)
        states = {d: v["state"] for d, v in self.versions().items()}
        self.assertEqual(states, {second["digest"]: "active", first["digest"]: "retired",
                                  unloadable["digest"]: "removed"})

        # Every act is in the audit log with the digest of the version it concerned.
        records = [r for r in read_records(self.daemon.data_dir) if r["action"].startswith("model.")]
        acts = [(r["action"], r["outcome"], r["model_digest"]) for r in records]
        self.assertIn(("model.import", "ok", second["digest"]), acts)
        self.assertIn(("model.import", "ok", first["digest"]), acts)
        self.assertIn(("model.activate", "ok", second["digest"]), acts)
        self.assertIn(("model.activate", "ok", first["digest"]), acts)
        self.assertIn(("model.rollback", "ok", second["digest"]), acts)
        refused = [r for r in records if r["action"] == "model.import" and r["outcome"] != "ok"]
        self.assertEqual(len(refused), 1, refused)
        self.assertIn(os.path.basename(self.tampered_file), refused[0]["detail"])
        self.assertIn(("model.remove", "ok", unloadable["digest"]), acts)
        self.assertTrue(any(a == "model.activate" and o != "ok" and d == unloadable["digest"] for a, o, d in acts), acts)
        for r in records:
            if r["outcome"] == "ok":
                self.assertEqual(r["actor"], self.daemon.api_key_id, r)

        # kimictl beside the running daemon: reading works, acts point to the admin API.
        data_dir = ["--data-dir", self.daemon.data_dir]
        code, out, err = run_to_exit([KIMICTL, "model", "list"] + data_dir)
        self.assertEqual(code, 0, err)
        self.assertIn(second["digest"][:12], out)
        code, out, err = run_to_exit([KIMICTL, "model", "verify-installed", "--key", self.public_key] + data_dir +
                                     [STORE_ID, second["digest"]])
        self.assertEqual(code, 0, out + err)
        self.assertIn("OK %s version %d" % (STORE_ID, second["version"]), out)
        self.assertIn("not recorded", err)
        code, out, err = run_to_exit([KIMICTL, "model", "rollback"] + data_dir + [STORE_ID])
        self.assertEqual(code, 3, out + err)
        self.assertIn("POST /admin/v1/models/rollback", err)
        self.assertEqual(self.served()["digest"], second["digest"])


class ReverifyAtStartTest(unittest.TestCase):
    """An installed version whose copy changed while the daemon was down fails its re-verification
    at the next start; /readyz says why (to a credential), not that no model is configured."""

    def test_readiness_names_the_failed_reverification(self):
        with tempfile.TemporaryDirectory(prefix="kimi-reverify-it-") as tmp:
            signed = SignedModel(tmp)
            config, source = signed.on_medium(tmp, served_id=MODEL_ID, store_id=STORE_ID, threads=1)
            config["storage"] = {"data_dir": os.path.join(tmp, "data")}
            daemon = Daemon(config=config)
            try:
                job = import_model(daemon, STORE_ID, source)
                self.assertEqual(job["state"], "succeeded", job)
                reply = post_json(daemon, "/admin/v1/models/activate", {"model": STORE_ID, "digest": job["version"]["digest"]})
                self.assertEqual(reply.status, 200, reply.body)
                self.assertTrue(wait_until_ready(daemon)["ready"])
                self.assertEqual(daemon.stop(), 0)
            finally:
                daemon.close()

            # The store's copy of the largest weight file changes while the daemon is down.
            name = os.path.basename(largest_file(signed.dir))
            copies = [os.path.join(root, name) for root, _, names in os.walk(config["storage"]["data_dir"])
                      if name in names]
            self.assertEqual(len(copies), 1, copies)
            os.chmod(copies[0], 0o600)  # the store keeps its copies read-only (0400)
            with open(copies[0], "r+b") as f:
                f.seek(os.path.getsize(copies[0]) // 2)
                byte = f.read(1)
                f.seek(-1, os.SEEK_CUR)
                f.write(bytes([byte[0] ^ 0x01]))

            daemon = Daemon(config=config)
            try:
                deadline = time.monotonic() + WAIT_S
                state = None
                while time.monotonic() < deadline:
                    state = request(daemon, "GET", "/readyz").json()["components"]["model"]
                    if "is not served" in state.get("detail", ""):  # the start's verdict, once reached
                        break
                    time.sleep(0.1)
                self.assertFalse(state["ready"], state)
                self.assertNotIn("no model configured", state["detail"])
                self.assertIn("is not served", state["detail"])
                self.assertIn(name, state["detail"])
                chat = {"model": MODEL_ID, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
                self.assertEqual(post_json(daemon, "/v1/chat/completions", chat).status, 503)
            finally:
                daemon.close()


if __name__ == "__main__":
    unittest.main()
