"""Private network namespaces for tests that configure an address off this machine.

Tests may send traffic only to loopback or to addresses inside a network namespace they made
(docs/testing.md). A test that needs an unreachable or foreign address -- an upstream at a
documentation address, say -- calls `run_inside_private_netns()` first: the test re-runs itself
under `unshare --net`, in a namespace whose only interface is `lo` (brought up here), where a
connect to any other address fails at once without a packet leaving the machine. Where no
namespace can be made (no privilege), the test is skipped with exit 77; it never falls back to
the host's network.

`check_addresses(config)` is the guard the daemon harnesses call before they start a daemon:
it refuses a configuration naming a non-loopback address unless the caller is in such a
namespace.
"""
import fcntl
import ipaddress
import socket
import struct
import subprocess
import sys
from urllib.parse import urlsplit

SKIP = 77
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def interfaces():
    """The names of this process's network namespace's interfaces."""
    with open("/proc/self/net/dev") as f:
        return [line.split(":", 1)[0].strip() for line in f.readlines()[2:] if ":" in line]


def in_private_netns():
    return interfaces() == ["lo"]


def bring_loopback_up():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def run_inside_private_netns():
    """Returns once this process runs in a private network namespace with `lo` up; otherwise
    runs this same program in a new one and exits with its status (77 when none can be made)."""
    if in_private_netns():
        bring_loopback_up()
        return
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        print("skip: this test needs a private network namespace (unshare --net) and none can be made here: "
              + probe.stderr.strip(), file=sys.stderr)
        sys.exit(SKIP)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(subprocess.run(["unshare", "--net", "--", sys.executable, *sys.argv]).returncode)


def _is_loopback(host):
    if host in ("localhost", "ip6-localhost", "ip6-loopback"):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False  # a name: resolving it may ask a DNS server
    if getattr(address, "ipv4_mapped", None):
        address = address.ipv4_mapped
    return address.is_loopback


def configured_hosts(config):
    """Every host a daemon configuration makes the daemon listen on or connect to."""
    hosts = []
    listen = config.get("server", {}).get("listen")
    if listen:
        hosts.append(listen.rsplit(":", 1)[0])
    for backend in config.get("router", {}).get("backends", []):
        if backend.get("url"):
            hosts.append(urlsplit(backend["url"]).hostname or backend["url"])
    return hosts


def check_addresses(config):
    """Raises unless every address the configuration names is loopback or this process runs in
    a private network namespace."""
    foreign = [h for h in configured_hosts(config) if not _is_loopback(h)]
    if foreign and not in_private_netns():
        raise RuntimeError("the test configures %s, which is not loopback, outside a private network namespace: "
                           "call private_netns.run_inside_private_netns() first" % ", ".join(foreign))
