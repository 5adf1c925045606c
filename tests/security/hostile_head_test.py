"""Hostile request heads against the real daemon: headers the HTTP library acts on, or reads
otherwise than their bytes say, after the server's own head checks (appliance/http/request_head.h).

  KIMI_APPLIANCE_BIN=... KIMICTL_BIN=... python3 tests/security/hostile_head_test.py -v
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SOURCE, "tests", "integration"))
from daemon_harness import Daemon, base_config, read_head, request, send_request  # noqa: E402

CONSOLE_CSS = os.path.join(SOURCE, "admin-ui", "css", "console.css")


class HostileHeadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        config = base_config()
        config["console"] = {"assets_dir": os.path.join(SOURCE, "admin-ui")}
        cls.daemon = Daemon(config=config)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.daemon.close()

    def test_a_range_gets_the_whole_file_once(self):
        # The library answered a Range with a multipart reply of every range asked, built in
        # memory: 2,725 ranges "0-" (8 KB, no credential) got 40 MB of a 16 KB file; 64 such
        # requests took the daemon from 15 to 843 MB and held every worker. No route serves
        # partial content: a Range is ignored and the answer is the file, once.
        with open(CONSOLE_CSS, "rb") as f:
            css = f.read()
        for headers in ({"Range": "bytes=0-" + ",0-" * 2000, "If-Range": '"x"'}, {"Range": "bytes=9-1"}):
            with self.subTest(range=headers["Range"][:20]), self.daemon.connect(timeout=30) as s:
                send_request(s, "GET", "/console/css/console.css", headers)
                received = b""
                while len(received) <= len(css) + 8192:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    received += chunk
                self.assertLessEqual(len(received), len(css) + 8192, received[:300])
                head, _, body = received.partition(b"\r\n\r\n")
                self.assertTrue(head.startswith(b"HTTP/1.1 200 "), head[:200])
                self.assertEqual(body, css)
        # Nor does an answer to HEAD offer ranges (the library's default said "bytes").
        with self.daemon.connect() as s:
            send_request(s, "HEAD", "/console/css/console.css")
            status, _, headers, _ = read_head(s)
        self.assertEqual(status, 200)
        self.assertNotIn("accept-ranges", headers)

    def test_an_escaped_multipart_media_type_is_refused(self):
        # "multipart/form-data" is refused (415) before the library's multipart parser; escaped,
        # the library decoded it after that check and parsed the parts.
        body = b"--abc\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--abc--\r\n"
        reply = request(self.daemon, "POST", "/v1/chat/completions",
                        {"Content-Type": "multipart%2Fform-data; boundary=abc"}, body)
        self.assertEqual(reply.status, 400, reply.body)
        self.assertIn("the Content-Type header", reply.json()["error"]["message"])


if __name__ == "__main__":
    unittest.main()
