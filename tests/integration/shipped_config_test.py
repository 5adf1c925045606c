"""The configuration the Debian package ships (packaging/etc/appliance.json) serves HTTPS:
the daemon starts with it once its paths point at a certificate from `kimictl tls selfsigned`
(what the package's postinst makes at install), and a client that trusts that certificate as
its CA gets /healthz over TLS. Only the machine-specific parts are rewritten: the data
directory and the TLS files move to a temporary directory, the port becomes a free loopback
one. Python standard library only.
"""
import json
import os
import shutil
import ssl
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import KIMICTL, Daemon, request, run_to_exit  # noqa: E402

SHIPPED_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "packaging", "etc",
                              "appliance.json")
INSTALLED_DATA_DIR = "/var/lib/kimi-appliance"
INSTALLED_CONFIG_DIR = "/etc/kimi-appliance"


def load_shipped_config():
    with open(SHIPPED_CONFIG) as f:
        return json.load(f)


def relocate(config, data_dir, config_dir):
    """The shipped config with /var/lib/kimi-appliance replaced by data_dir and /etc/kimi-appliance
    by config_dir, on 127.0.0.1:0."""
    text = json.dumps(config).replace(INSTALLED_DATA_DIR, data_dir).replace(INSTALLED_CONFIG_DIR, config_dir)
    moved = json.loads(text)
    moved["server"]["listen"] = "127.0.0.1:0"
    return moved


class ShippedConfigTest(unittest.TestCase):
    def test_shipped_config_is_https_only(self):
        server = load_shipped_config()["server"]
        self.assertFalse(server.get("allow_plain_http_on_loopback", False), server)
        tls = server["tls"]
        self.assertEqual(tls["cert_file"], INSTALLED_DATA_DIR + "/tls/cert.pem")
        self.assertEqual(tls["key_file"], INSTALLED_DATA_DIR + "/tls/key.pem")
        self.assertEqual(tls["min_version"], "1.2")

    def test_shipped_config_names_the_trust_store_the_package_makes(self):
        # packaging/debian/kimi-appliance/postinst makes this directory; the installer adds the
        # medium's model signers to it.
        self.assertEqual(load_shipped_config()["model"]["trust_store"], INSTALLED_CONFIG_DIR + "/trust")

    def test_daemon_serves_healthz_over_https_with_the_shipped_config(self):
        work = tempfile.mkdtemp(prefix="kimi-it-shipped-")
        self.addCleanup(shutil.rmtree, work, True)
        data_dir = os.path.join(work, "data")
        config_dir = os.path.join(work, "etc")
        os.makedirs(os.path.join(config_dir, "trust"))  # empty, as the postinst leaves it
        code, _, err = run_to_exit([KIMICTL, "tls", "selfsigned", "--dir", os.path.join(data_dir, "tls")])
        self.assertEqual(code, 0, err)
        config = relocate(load_shipped_config(), data_dir, config_dir)

        daemon = Daemon(config=config)
        self.addCleanup(daemon.close)
        daemon.ssl_context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH,
                                                        cafile=os.path.join(data_dir, "tls", "cert.pem"))
        reply = request(daemon, "GET", "/healthz", auth=None)
        self.assertEqual(reply.status, 200, reply.body)
        listening = daemon.wait_for_event(lambda e: e.get("msg") == "listening")
        self.assertTrue(listening["url"].startswith("https://"), listening)
        self.assertEqual(daemon.stop(), 0)


if __name__ == "__main__":
    unittest.main()
