"""Integration tests of HTTPS: the daemon with a certificate from `kimictl tls selfsigned`
serves TLS on loopback; a client that trusts that certificate as its CA succeeds; plain HTTP
to the port, a client that does not trust it, TLS 1.1 and a mismatched key are refused; the
certificate is reloaded by SIGHUP and the admin API without a restart.
Python standard library only.
"""
import hashlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from auth_test import audit_records  # noqa: E402
from daemon_harness import (DAEMON, KIMICTL, Daemon, base_config, read_reply, request, run_to_exit,  # noqa: E402
                            send_request, write_config)


WAIT_S = 20  # bound on waiting for a state change; only stops a hung test


def make_certificate(directory, *extra):
    code, out, err = run_to_exit([KIMICTL, "tls", "selfsigned", "--dir", directory, *extra])
    if code != 0:
        raise RuntimeError("kimictl tls selfsigned failed: " + err)
    return os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")


def tls_config(cert, key, **tls):
    config = base_config()
    config["server"] = {"listen": "127.0.0.1:0", "tls": dict({"cert_file": cert, "key_file": key}, **tls)}
    return config


def client_context(cafile):
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile)
    return ctx


class HttpsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.certs = tempfile.mkdtemp(prefix="kimi-it-tls-")
        cls.cert, cls.key = make_certificate(cls.certs, "--names", "appliance.test")
        cls.daemon = Daemon(config=tls_config(cls.cert, cls.key))
        cls.daemon.ssl_context = client_context(cls.cert)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.daemon.close()
        shutil.rmtree(cls.certs, ignore_errors=True)

    def test_request_over_https_with_the_generated_certificate_as_ca(self):
        reply = request(self.daemon, "GET", "/v1/models")
        self.assertEqual(reply.status, 200, reply.body)
        self.assertEqual(reply.json()["object"], "list")
        listening = self.daemon.wait_for_event(lambda e: e.get("msg") == "listening")
        self.assertTrue(listening["url"].startswith("https://"), listening)

    def test_keep_alive_serves_several_requests_on_one_tls_connection(self):
        with self.daemon.connect() as s:
            for _ in range(3):
                head = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                s.sendall(head.encode())
                self.assertEqual(read_reply(s).status, 200)

    def test_plain_http_to_the_tls_port_is_refused(self):
        with socket.create_connection(("127.0.0.1", self.daemon.port), timeout=10) as s:
            send_request(s, "GET", "/healthz")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        self.assertTrue(data.startswith(b"HTTP/1.1 400 "), data)
        self.assertIn(b"HTTPS", data)

    def test_a_client_that_does_not_trust_the_certificate_fails(self):
        ctx = ssl.create_default_context()  # the system CAs only
        with socket.create_connection(("127.0.0.1", self.daemon.port), timeout=10) as raw:
            with self.assertRaises(ssl.SSLCertVerificationError):
                ctx.wrap_socket(raw, server_hostname="localhost")

    def test_the_certificate_names_the_extra_host(self):
        ctx = client_context(self.cert)
        with socket.create_connection(("127.0.0.1", self.daemon.port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="appliance.test") as s:
                self.assertIn(s.version(), ("TLSv1.2", "TLSv1.3"))

    def test_tls_1_1_is_refused(self):
        ctx = client_context(self.cert)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                ctx.minimum_version = ssl.TLSVersion.TLSv1
                ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        except (ValueError, ssl.SSLError):
            self.skipTest("this Python's OpenSSL cannot offer TLS 1.1")
        with socket.create_connection(("127.0.0.1", self.daemon.port), timeout=10) as raw:
            with self.assertRaises((ssl.SSLError, ConnectionResetError)):
                ctx.wrap_socket(raw, server_hostname="localhost")


@unittest.skipIf(shutil.which("openssl") is None, "the openssl command is not installed")
class OpenSslClientTest(unittest.TestCase):
    """The same checks with `openssl s_client`, the tool an operator reaches for."""

    @classmethod
    def setUpClass(cls):
        cls.certs = tempfile.mkdtemp(prefix="kimi-it-tls-")
        cls.cert, cls.key = make_certificate(cls.certs)
        cls.daemon = Daemon(config=tls_config(cls.cert, cls.key))

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.daemon.close()
        shutil.rmtree(cls.certs, ignore_errors=True)

    def s_client(self, *args, stdin=""):
        proc = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % self.daemon.port,
                               "-servername", "localhost", "-CAfile", self.cert, "-verify_return_error", *args],
                              input=stdin, capture_output=True, text=True, timeout=30)
        return proc.returncode, proc.stdout + proc.stderr

    def test_verifies_and_serves_a_request(self):
        code, out = self.s_client("-quiet", "-verify_hostname", "localhost",
                                  stdin="GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        self.assertEqual(code, 0, out)
        self.assertIn("HTTP/1.1 200", out)

    def test_tls_1_1_and_1_0_are_refused(self):
        for flag in ("-tls1_1", "-tls1"):
            code, out = self.s_client(flag, "-cipher", "DEFAULT@SECLEVEL=0")
            self.assertNotEqual(code, 0, flag + ": " + out)
            self.assertIn("Cipher is (NONE)", out)  # no session was established

    def test_tls_1_3_is_preferred(self):
        code, out = self.s_client("-brief", stdin="")
        self.assertEqual(code, 0, out)
        self.assertIn("TLSv1.3", out)


def openssl(*args):
    proc = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError("openssl %s failed: %s" % (args[0], proc.stderr))


def make_client_ca_and_certificate(directory, name):
    """A CA (P-256) and a client certificate it issued; returns (ca_cert, client_cert, client_key)."""
    ca_key, ca = os.path.join(directory, name + "-ca.key"), os.path.join(directory, name + "-ca.pem")
    key, csr, cert = (os.path.join(directory, name + suffix) for suffix in ("-client.key", ".csr", "-client.pem"))
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", ca_key,
            "-out", ca, "-days", "2", "-subj", "/CN=%s admin CA" % name)
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
            "-out", csr, "-subj", "/CN=operator")
    openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert, "-days", "2")
    return ca, cert, key


@unittest.skipIf(shutil.which("openssl") is None, "the openssl command is not installed")
class AdminClientCertificateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.certs = tempfile.mkdtemp(prefix="kimi-it-tls-")
        cls.cert, cls.key = make_certificate(cls.certs)
        cls.ca, cls.client_cert, cls.client_key = make_client_ca_and_certificate(cls.certs, "trusted")
        _, cls.stranger_cert, cls.stranger_key = make_client_ca_and_certificate(cls.certs, "stranger")
        cls.daemon = Daemon(config=tls_config(cls.cert, cls.key, admin_client_ca_file=cls.ca))

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.daemon.close()
        shutil.rmtree(cls.certs, ignore_errors=True)

    def with_client(self, cert=None, key=None):
        ctx = client_context(self.cert)
        if cert:
            ctx.load_cert_chain(cert, key)
        self.daemon.ssl_context = ctx

    def test_admin_api_needs_the_client_certificate_and_the_openai_api_does_not(self):
        self.with_client()
        refused = request(self.daemon, "GET", "/admin/v1/keys")
        self.assertEqual(refused.status, 403, refused.body)
        self.assertIn("client certificate", refused.json()["error"]["message"])
        self.assertEqual(request(self.daemon, "GET", "/v1/models").status, 200)
        self.with_client(self.client_cert, self.client_key)
        self.assertEqual(request(self.daemon, "GET", "/admin/v1/keys").status, 200)

    def test_a_certificate_from_another_ca_fails_the_handshake(self):
        self.with_client(self.stranger_cert, self.stranger_key)
        with self.assertRaises((ssl.SSLError, ConnectionResetError, BrokenPipeError)):
            request(self.daemon, "GET", "/admin/v1/keys")


class MinimumVersionTest(unittest.TestCase):
    def test_min_version_1_3_refuses_a_tls_1_2_client(self):
        certs = tempfile.mkdtemp(prefix="kimi-it-tls-")
        try:
            cert, key = make_certificate(certs)
            daemon = Daemon(config=tls_config(cert, key, min_version="1.3"))
            try:
                ctx = client_context(cert)
                ctx.maximum_version = ssl.TLSVersion.TLSv1_2
                with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as raw:
                    with self.assertRaises(ssl.SSLError):
                        ctx.wrap_socket(raw, server_hostname="localhost")
                daemon.ssl_context = client_context(cert)
                self.assertEqual(request(daemon, "GET", "/healthz").status, 200)
            finally:
                daemon.stop()
                daemon.close()
        finally:
            shutil.rmtree(certs, ignore_errors=True)


class StalledHandshakeTest(unittest.TestCase):
    def test_clients_that_stall_their_handshake_give_their_workers_to_waiting_clients(self):
        # A TLS slowloris: connections that never send their ClientHello held every worker
        # until the read timeout; a second into its handshake a worker is taken back for a
        # connection that waits for one.
        certs = tempfile.mkdtemp(prefix="kimi-it-tls-")
        try:
            cert, key = make_certificate(certs)
            config = tls_config(cert, key)
            config.setdefault("limits", {}).update(
                {"max_connections": 2, "read_timeout_ms": 60000, "worker_wait_ms": 5000})
            daemon = Daemon(config=config)
            stalled = []
            try:
                for _ in range(2):
                    stalled.append(socket.create_connection(("127.0.0.1", daemon.port), timeout=10))
                daemon.ssl_context = client_context(cert)
                self.assertEqual(request(daemon, "GET", "/healthz").status, 200)
                self.assertEqual(request(daemon, "GET", "/healthz").status, 200)
            finally:
                for s in stalled:
                    s.close()
                daemon.stop()
                daemon.close()
        finally:
            shutil.rmtree(certs, ignore_errors=True)


def served_fingerprint(port):
    """SHA-256 of the certificate the daemon presents to a new connection."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw) as s:
            return hashlib.sha256(s.getpeercert(binary_form=True)).hexdigest()


def file_fingerprint(cert_path):
    with open(cert_path) as f:
        return hashlib.sha256(ssl.PEM_cert_to_DER_cert(f.read())).hexdigest()


class CertificateReloadTest(unittest.TestCase):
    """SIGHUP and POST /admin/v1/tls/reload re-read the certificate for new connections; a bad
    file keeps the old one serving. Read off the wire: the served certificate's fingerprint."""

    def setUp(self):
        self.certs = tempfile.mkdtemp(prefix="kimi-it-tls-reload-")
        self.cert, self.key = make_certificate(self.certs)
        self.daemon = Daemon(config=tls_config(self.cert, self.key))
        self.daemon.ssl_context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.daemon.ssl_context.check_hostname = False
        self.daemon.ssl_context.verify_mode = ssl.CERT_NONE

    def tearDown(self):
        self.daemon.stop()
        self.daemon.close()
        shutil.rmtree(self.certs, ignore_errors=True)

    def wait_for_fingerprint(self, wanted):
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            if served_fingerprint(self.daemon.port) == wanted:
                return
            time.sleep(0.1)
        self.fail("the served certificate never became " + wanted)

    def test_sighup_and_the_admin_route_reload_and_a_bad_file_keeps_the_old_one(self):
        first = file_fingerprint(self.cert)
        self.assertEqual(served_fingerprint(self.daemon.port), first)
        kept_open = self.daemon.connect()  # a connection from before the reload keeps working

        make_certificate(self.certs, "--force")
        second = file_fingerprint(self.cert)
        self.assertNotEqual(first, second)
        self.daemon.proc.send_signal(signal.SIGHUP)
        self.wait_for_fingerprint(second)
        send_request(kept_open, "GET", "/v1/models", {"Authorization": "Bearer " + self.daemon.api_key})
        self.assertEqual(read_reply(kept_open).status, 200)
        kept_open.close()

        make_certificate(self.certs, "--force")
        third = file_fingerprint(self.cert)
        reply = request(self.daemon, "POST", "/admin/v1/tls/reload")
        self.assertEqual(reply.status, 200, reply.body)
        self.assertTrue(reply.json()["reloaded"])
        self.assertEqual(served_fingerprint(self.daemon.port), third)

        with open(self.cert, "w") as f:
            f.write("-----BEGIN CERTIFICATE-----\nnot base64\n")
        refused = request(self.daemon, "POST", "/admin/v1/tls/reload")
        self.assertEqual(refused.status, 400, refused.body)
        self.assertIn("keeps serving", refused.json()["error"]["message"])
        self.assertIn(self.cert, refused.json()["error"]["message"])
        self.daemon.proc.send_signal(signal.SIGHUP)
        self.assertIsNotNone(self.daemon.wait_for_event(lambda e: e.get("msg") == "TLS certificate reload failed"
                                                        and e.get("by") == "SIGHUP"))
        self.assertEqual(served_fingerprint(self.daemon.port), third)
        self.assertEqual(request(self.daemon, "GET", "/v1/models").status, 200)
        # /readyz: TLS still ready (the old certificate serves), with the failed reload kept.
        deadline = time.monotonic() + 30
        tls = {}
        while time.monotonic() < deadline:
            tls = request(self.daemon, "GET", "/readyz").json()["components"]["tls"]
            if "SIGHUP" in tls.get("last_failure", {}).get("reason", ""):
                break
            time.sleep(0.05)
        self.assertTrue(tls["ready"], tls)
        self.assertIn("reload by SIGHUP failed", tls["last_failure"]["reason"])
        self.assertIn(self.cert, tls["last_failure"]["reason"])

        # Only an admin may reload, and every attempt is in the audit log.
        user_key = json.loads(request(self.daemon, "POST", "/admin/v1/keys", {"Content-Type": "application/json"},
                                      json.dumps({"name": "u", "role": "operator"}).encode()).body)["key"]
        self.assertEqual(request(self.daemon, "POST", "/admin/v1/tls/reload", auth=user_key).status, 403)
        outcomes = sorted((r["actor"], r["outcome"]) for r in audit_records(self.daemon)
                          if r["action"] == "tls.certificate_reloaded")
        self.assertEqual(outcomes, sorted([("SIGHUP", "ok"), (self.daemon.api_key_id, "ok"),
                                           (self.daemon.api_key_id, "failed"), ("SIGHUP", "failed")]))


class TlsStartupTest(unittest.TestCase):
    def start_and_fail(self, config):
        with tempfile.TemporaryDirectory(prefix="kimi-it-") as d:
            path = write_config(d, config)
            code, _, err = run_to_exit([DAEMON, "--config", path])
        self.assertEqual(code, 1, err)
        return err

    def test_a_key_that_does_not_match_the_certificate_stops_the_start(self):
        with tempfile.TemporaryDirectory(prefix="kimi-it-tls-") as certs:
            a, b = os.path.join(certs, "a"), os.path.join(certs, "b")
            os.mkdir(a)
            os.mkdir(b)
            cert, _ = make_certificate(a)
            _, other_key = make_certificate(b)
            err = self.start_and_fail(tls_config(cert, other_key))
        self.assertIn("does not match the certificate", err)

    def test_an_unreadable_certificate_stops_the_start(self):
        err = self.start_and_fail(tls_config("/nonexistent/cert.pem", "/nonexistent/key.pem"))
        self.assertIn("cannot read the TLS certificate /nonexistent/cert.pem", err)

    def test_kimictl_refuses_to_overwrite_without_force(self):
        with tempfile.TemporaryDirectory(prefix="kimi-it-tls-") as certs:
            make_certificate(certs)
            code, _, err = run_to_exit([KIMICTL, "tls", "selfsigned", "--dir", certs])
            self.assertEqual(code, 1)
            self.assertIn("--force", err)
            make_certificate(certs, "--force")


if __name__ == "__main__":
    unittest.main()
