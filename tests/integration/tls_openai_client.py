"""The official `openai` npm client against a daemon serving HTTPS with a certificate from
`kimictl tls selfsigned`: with the certificate as its extra CA (NODE_EXTRA_CA_CERTS) the
request succeeds; without it the client refuses the connection. The package comes from the
same build-tree folder as the conformance suite (installed there before the suite runs by
tests/integration/npm_packages.py); without node or the package the test is skipped (exit 77).

  KIMI_APPLIANCE_BIN=... KIMICTL_BIN=... python3 tests/integration/tls_openai_client.py --npm-dir DIR
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
from daemon_harness import Daemon  # noqa: E402
from run_openai_client import ensure_package  # noqa: E402
from tls_test import make_certificate, tls_config  # noqa: E402


def run_node(script, npm_dir, daemon, cafile):
    env = dict(os.environ, KIMI_API_KEY=daemon.api_key, KIMI_BASE_URL="https://localhost:%d/v1" % daemon.port,
               NODE_PATH=os.path.join(npm_dir, "node_modules"))
    env.pop("NODE_EXTRA_CA_CERTS", None)
    if cafile:
        env["NODE_EXTRA_CA_CERTS"] = cafile
    proc = subprocess.run(["node", script], env=env, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--npm-dir", required=True, help="build-tree folder holding node_modules/openai")
    npm_dir = os.path.abspath(parser.parse_args().npm_dir)
    ensure_package(npm_dir)
    # An .mjs file resolves packages from its own folder upwards: run a copy beside node_modules.
    script = os.path.join(npm_dir, "tls_openai_client.mjs")
    shutil.copyfile(os.path.join(HERE, "tls_openai_client.mjs"), script)
    certs = tempfile.mkdtemp(prefix="kimi-it-tls-")
    try:
        cert, key = make_certificate(certs)
        daemon = Daemon(config=tls_config(cert, key))
        try:
            trusted, out = run_node(script, npm_dir, daemon, cert)
            print("with the certificate as CA: " + out.strip())
            untrusted, out2 = run_node(script, npm_dir, daemon, None)
            print("without it: " + out2.strip())
        finally:
            daemon.stop()
            daemon.close()
    finally:
        shutil.rmtree(certs, ignore_errors=True)
    ok = trusted == 0 and untrusted == 1 and "CERT" in out2.upper()
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
