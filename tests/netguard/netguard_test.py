"""The network guard (netguard.c): loopback and local sockets pass, an off-machine address or a
DNS name ends the process with status 86 before anything is sent, and inside a network namespace
with only `lo` nothing is refused (the kernel answers "unreachable" instead).

The suite relies on the guard only if `make test` preloads it: this test also fails when its own
environment lacks it, so running the suite without the guard does not pass unnoticed.

usage: python3 netguard_test.py PATH/libkimi_netguard.so
"""
import os
import subprocess
import sys
import unittest

GUARD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else ""
VIOLATION = 86

CONNECT = """
import socket, sys
family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(family, socket.SOCK_STREAM)
s.settimeout(2)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print("connected")
except OSError as e:
    print("error", e.errno)
"""
SENDTO = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b"x", (sys.argv[1], 9))
    print("sent")
except OSError as e:
    print("error", e.errno)
"""
RESOLVE = """
import socket, sys
try:
    socket.getaddrinfo(sys.argv[1], 80)
    print("resolved")
except OSError as e:
    print("error", e.errno)
"""


def run(script, *args, namespace=False):
    env = dict(os.environ, LD_PRELOAD=GUARD)
    argv = [sys.executable, "-c", script, *args]
    if namespace:
        argv = ["unshare", "--net", "--", *argv]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)


class NetguardTest(unittest.TestCase):
    def test_make_test_preloads_the_guard(self):
        preloaded = [os.path.basename(p) for p in os.environ.get("LD_PRELOAD", "").replace(":", " ").split()]
        self.assertIn(os.path.basename(GUARD), preloaded,
                      "the suite runs without the network guard: run it with `make test` (the Makefile "
                      "preloads %s)" % GUARD)

    def test_loopback_passes(self):
        for host in ("127.0.0.1", "127.1.2.3", "::1"):
            with self.subTest(host=host):
                proc = run(CONNECT, host, "9")
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertNotIn("netguard", proc.stderr)
        proc = run(RESOLVE, "localhost")
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_off_machine_address_ends_the_process(self):
        for script, host in ((CONNECT, "192.0.2.10"), (CONNECT, "2001:db8::1"), (CONNECT, "::ffff:192.0.2.10"),
                             (SENDTO, "192.0.2.10")):
            with self.subTest(host=host):
                proc = run(script, host, "8000")
                self.assertEqual(proc.returncode, VIOLATION, proc.stdout + proc.stderr)
                self.assertIn("netguard:", proc.stderr)
                self.assertNotIn("connected", proc.stdout)

    def test_dns_name_ends_the_process(self):
        proc = run(RESOLVE, "upstream.example")
        self.assertEqual(proc.returncode, VIOLATION, proc.stdout + proc.stderr)
        self.assertIn('the name "upstream.example"', proc.stderr)

    def test_private_namespace_is_not_refused(self):
        probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
        if probe.returncode != 0:
            self.skipTest("cannot make a network namespace here: " + probe.stderr.strip())
        proc = run(CONNECT, "192.0.2.10", "8000", namespace=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("netguard", proc.stderr)
        self.assertIn("error", proc.stdout)  # ENETUNREACH: the namespace has no route


if __name__ == "__main__":
    if not os.path.isfile(GUARD):
        sys.exit("usage: netguard_test.py PATH/libkimi_netguard.so")
    unittest.main()
