"""Streamed text holding U+0085, U+2028 or U+2029 keeps every SSE frame on one line.

JSON may carry these characters raw inside strings, but Python's str.splitlines() (Moonshot's
verifier reads stream bodies with it) and other line readers end a line at each of them, so a
frame that carried one raw would reach them cut in two. The daemon writes them as \\u escapes.
A scripted OpenAI-compatible upstream on loopback sends the text, so nothing depends on a
model's output; the daemon re-encodes it as it does every backend's events. Python standard
library only.
"""
import json
import os
import sys
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from daemon_harness import Daemon, base_config, post_json, request  # noqa: E402

MODEL = "scripted"
LINE_BREAKS = ("\u0085", "\u2028", "\u2029")
REASONING = "think\u2028on\u2029it"
ANSWER = "one\u2028two\u2029three\u0085four \u201cquoted\u201d \u00c5\u2027"
WAIT_S = 20  # bound on waiting for the upstream to be healthy; only stops a hung test


class ScriptedUpstream:
    """Streams REASONING then ANSWER (or ANSWER as completion text), a finish and usage."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def send_body(self, content_type, data):
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/health":
                    self.send_body("application/json", b'{"status":"ok"}')
                else:
                    models = {"object": "list", "data": [{"id": MODEL, "object": "model"}]}
                    self.send_body("application/json", json.dumps(models).encode())

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                chat = "messages" in body
                envelope = {"id": "s1", "object": "chat.completion.chunk" if chat else "text_completion",
                            "created": 0, "model": body["model"]}
                if chat:
                    pieces = [{"delta": {"role": "assistant", "reasoning_content": REASONING}},
                              {"delta": {"content": ANSWER}}, {"delta": {}, "finish_reason": "stop"}]
                else:
                    pieces = [{"text": ANSWER}, {"text": "", "finish_reason": "stop"}]
                frames = [dict(envelope, choices=[dict({"index": 0}, **piece)]) for piece in pieces]
                frames.append(dict(envelope, choices=[],
                                   usage={"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}))
                # ensure_ascii=False: the upstream sends the characters raw, as JSON allows.
                data = "".join("data: %s\n\n" % json.dumps(f, ensure_ascii=False) for f in frames)
                self.send_body("text/event-stream", (data + "data: [DONE]\n\n").encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def frames_as_line_readers_see_them(body):
    """The data payloads, reading the body the way str.splitlines() readers do."""
    return [json.loads(line[len("data: "):]) for line in body.splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


class SseLineBreaksTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.upstream = ScriptedUpstream()
        config = base_config()
        config["router"] = {"backends": [{"name": "scripted", "kind": "upstream", "url": cls.upstream.url,
                                          "models": [MODEL], "health_interval_ms": 100}]}
        cls.daemon = Daemon(config=config)
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and not request(cls.daemon, "GET", "/v1/models").json().get("data"):
            time.sleep(0.1)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.close()
        cls.upstream.close()

    def post(self, path, **fields):
        reply = post_json(self.daemon, path, dict({"model": MODEL, "max_tokens": 8}, **fields))
        self.assertEqual(reply.status, 200, reply.body)
        return reply

    def assertNoRawLineBreaks(self, body):
        for raw in LINE_BREAKS:
            self.assertNotIn(raw, body, "U+%04X written raw" % ord(raw))

    def test_streamed_chat_frames_stay_one_line_and_keep_the_text(self):
        reply = self.post("/v1/chat/completions", messages=[{"role": "user", "content": "hi"}], stream=True)
        self.assertNoRawLineBreaks(reply.body)
        deltas = [c["delta"] for f in frames_as_line_readers_see_them(reply.body) for c in f["choices"]]
        self.assertEqual("".join(d.get("reasoning_content", "") for d in deltas), REASONING)
        self.assertEqual("".join(d.get("content", "") for d in deltas), ANSWER)

    def test_streamed_completion_frames_stay_one_line_and_keep_the_text(self):
        reply = self.post("/v1/completions", prompt="hi", stream=True)
        self.assertNoRawLineBreaks(reply.body)
        texts = [c["text"] for f in frames_as_line_readers_see_them(reply.body) for c in f["choices"]]
        self.assertEqual("".join(texts), ANSWER)

    def test_whole_chat_answer_keeps_the_text(self):
        reply = self.post("/v1/chat/completions", messages=[{"role": "user", "content": "hi"}])
        message = reply.json()["choices"][0]["message"]
        self.assertEqual(message["content"], ANSWER)
        self.assertEqual(message["reasoning_content"], REASONING)


if __name__ == "__main__":
    unittest.main()
