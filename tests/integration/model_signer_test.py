"""Certificate-signed models through the real daemon: the operator trusts a site CA through
the admin API, pinned to the release signer (POST /admin/v1/trust with "signers"), and
imports models signed with `kimictl model sign --certificate` from a "mounted medium". A
model signed with the appliance's kind of TLS server certificate from that same CA is
refused as not code-signing, one signed by another code-signing certificate of the CA is
refused as not a pinned signer, and the release signer's is imported; each refusal names its
reason. Certificates are made with the openssl command at test time. Run by CTest with
KIMI_APPLIANCE_BIN, KIMICTL_BIN and KIMI_ENGINE_BIN set.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import KIMICTL, SignedModel, post_json, request, run_to_exit  # noqa: E402

STORE_ID = "k3"
WAIT_S = 120  # bound on waiting for an import; only stops a hung test


def openssl(*args):
    proc = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError("openssl %s failed: %s" % (args[0], proc.stderr))


class SiteCa:
    """A P-256 root CA under `directory`, and the leaves it issues (openssl req/x509)."""

    def __init__(self, directory):
        self.directory = directory
        self.key = os.path.join(directory, "root.key")
        self.cert = os.path.join(directory, "root.pem")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", self.key,
                "-out", self.cert, "-days", "2", "-subj", "/CN=Site Root/O=Site",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")

    def issue(self, name, extended_key_usage, alt_names):
        """A leaf with key usage digitalSignature; returns (key, cert) paths."""
        key, csr, cert, ext = (os.path.join(self.directory, name + s) for s in (".key", ".csr", ".pem", ".ext"))
        with open(ext, "w") as f:
            f.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                    "extendedKeyUsage=%s\nsubjectAltName=%s\n" % (extended_key_usage, alt_names))
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                "-out", csr, "-subj", "/CN=%s" % name)
        openssl("x509", "-req", "-in", csr, "-CA", self.cert, "-CAkey", self.key, "-CAcreateserial", "-out", cert,
                "-days", "2", "-extfile", ext)
        return key, cert


@unittest.skipIf(shutil.which("openssl") is None, "the openssl command is not installed")
class CertificateSignerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kimi-signer-it-")
        media = os.path.join(cls.tmp.name, "media")
        os.makedirs(media)
        signed = SignedModel(cls.tmp.name, trust_dir=True)
        cls.ca = SiteCa(cls.tmp.name)
        signers = {
            "tls": ("serverAuth", "DNS:appliance.site.example"),
            "intern": ("codeSigning", "email:intern@site.example"),
            "release": ("codeSigning", "email:release@site.example"),
        }
        cls.models = {}
        for name, (usage, alt_names) in signers.items():
            key, cert = cls.ca.issue(name, usage, alt_names)
            model = os.path.join(media, name)
            shutil.copytree(signed.dir, model)
            code, out, err = run_to_exit([KIMICTL, "model", "sign", "--key", key, "--certificate", cert, "--quiet", model])
            if code != 0:
                raise RuntimeError("kimictl model sign --certificate failed: " + out + err)
            cls.models[name] = model
        cls.daemon = signed.serve(threads=2, store_id=STORE_ID, import_roots=[media])

    @classmethod
    def tearDownClass(cls):
        cls.daemon.close()
        cls.tmp.cleanup()

    def import_model(self, source):
        reply = post_json(self.daemon, "/admin/v1/models/import", {"model": STORE_ID, "source": source})
        self.assertEqual(reply.status, 202, reply.body)
        job = reply.json()
        deadline = time.monotonic() + WAIT_S
        while job["state"] == "running" and time.monotonic() < deadline:
            time.sleep(0.05)
            status = request(self.daemon, "GET", "/admin/v1/models/import?job=" + job["job"])
            self.assertEqual(status.status, 200, status.body)
            job = status.json()
        self.assertNotEqual(job["state"], "running", "import of %s did not finish" % source)
        return job

    def test_only_the_pinned_code_signer_of_the_trusted_ca_imports(self):
        with open(self.ca.cert) as f:
            root_pem = f.read()
        added = post_json(self.daemon, "/admin/v1/trust", {"pem": root_pem, "label": "site-root",
                                                            "signers": ["email=release@site.example"]})
        self.assertEqual(added.status, 201, added.body)
        self.assertEqual(added.json()["signers"], ["email=release@site.example"])
        bad = post_json(self.daemon, "/admin/v1/trust", {"pem": root_pem, "signers": ["mail=release@site.example"]})
        self.assertEqual(bad.status, 400, bad.body)
        self.assertIn('unknown field \\"mail\\"', bad.body)

        job = self.import_model(self.models["tls"])
        self.assertEqual(job["state"], "failed", job)
        self.assertIn("signing certificate CN=tls is not a code-signing certificate: its extended key usage is "
                      "serverAuth", job["error"])

        job = self.import_model(self.models["intern"])
        self.assertEqual(job["state"], "failed", job)
        self.assertIn("signer not allowed: the certificate (subject CN=intern; email:intern@site.example)",
                      job["error"])
        self.assertIn("email=release@site.example", job["error"])

        job = self.import_model(self.models["release"])
        self.assertEqual(job["state"], "succeeded", job)
        self.assertIn("certificate CN=release issued by O=Site,CN=Site Root", job["version"]["signer"])

        listed = request(self.daemon, "GET", "/admin/v1/trust")
        self.assertEqual(listed.status, 200, listed.body)
        cas = [e for e in listed.json()["entries"] if e["kind"] == "ca"]
        self.assertEqual([e["signers"] for e in cas], [["email=release@site.example"]])


if __name__ == "__main__":
    unittest.main()
