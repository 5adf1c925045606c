"""HTTPS cost of the daemon: mean time per GET /healthz over plain HTTP and over TLS (a
certificate from `kimictl tls selfsigned`), on one keep-alive connection and with a new
connection (and so a TLS handshake) per request. Prints figures; asserts nothing.

  KIMI_APPLIANCE_BIN=build/appliance/kimi-appliance KIMICTL_BIN=build/appliance/kimictl \
      python3 bench/tls_overhead.py
"""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from daemon_harness import Daemon, base_config, read_reply
from tls_test import make_certificate, tls_config, client_context
N = 300
def keepalive(d):
    with d.connect() as s:
        t = time.perf_counter()
        for _ in range(N):
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            read_reply(s)
        return (time.perf_counter() - t) / N * 1e6
def fresh(d):
    t = time.perf_counter()
    for _ in range(N // 3):
        with d.connect() as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            read_reply(s)
    return (time.perf_counter() - t) / (N // 3) * 1e6
certs = tempfile.mkdtemp()
cert, key = make_certificate(certs)
plain = Daemon(config=base_config())
tls = Daemon(config=tls_config(cert, key)); tls.ssl_context = client_context(cert)
for name, d in (("plain", plain), ("tls", tls)):
    keepalive(d); print("%s: keep-alive %.0f us/request, new connection %.0f us/request" % (name, keepalive(d), fresh(d)))
    d.stop(); d.close()
shutil.rmtree(certs)
